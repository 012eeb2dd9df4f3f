// tensoracle: GatherElements (elements of the data at per-element indices along an axis).
//
// Semantics chosen where ONNX leaves them open: GatherElements needs indices
// dims <= data dims off the axis (onnxruntime).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct gather_elements_attr {
    std::int64_t axis = 0;
};

/// GatherElements-13(data, indices): out[i] = data[i with i[axis] replaced by
/// indices[i]]; same ranks, indices dims <= data dims off the axis (as
/// onnxruntime); indices in [-dim, dim), out-of-range ones throw.
struct GatherElements : spec::dtype_of_input<0>, spec::shape_of_input<1> {
    static constexpr std::string_view op_type = "GatherElements";
    static constexpr int opset = 13;
    using attributes = gather_elements_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all, {1, 8}}, {"indices", spec::types::indices, {1, 8}, "Tind"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {1, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto a = c.attr("axis");
        std::vector<spec::constraint> out{{shape_util::axis_in_range(a, r), "axis is in [-rank, rank)"},
                                          shape_util::concrete_fact(c.rank(1) == r, "indices has the rank of data")};
        if (c.rank(1) != r) return out;
        const auto an = shape_util::normalized_axis(a, r);
        for (std::size_t j = 0; j < r; ++j) {
            out.push_back({an == spec::expr(j) || c.dim(1, j) <= c.dim(0, j),
                           "indices dim " + std::to_string(j) + " <= data dim (off the axis)"});
        }
        return out;
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {spec::types::indices.members(), {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const array<std::int64_t>& indices, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<GatherElements, T>::value);
        const auto in = shape_util::shape_of(x), is = shape_util::shape_of(indices);
        if (in.empty()) throw shape_error(op_type, "data must have rank >= 1");
        const std::size_t k = shape_util::checked_axis(a.axis, in.size(), op_type);
        if (is.size() != in.size()) throw shape_error(op_type, "indices rank " + std::to_string(is.size()) + " differs from data rank " + std::to_string(in.size()));
        for (std::size_t j = 0; j < in.size(); ++j) {
            if (j != k && is[j] > in[j]) throw shape_error(op_type, "indices " + to_string(is) + " exceeds data " + to_string(in) + " at axis " + std::to_string(j));
        }
        const auto dim = static_cast<std::int64_t>(in[k]);
        const auto st = detail::strides_of(in);
        const auto ist = detail::strides_of(is);
        return shape_util::gather_elements_by(x, is, op_type, [&](const shape_type& o) {
            const std::int64_t v = indices.data()[shape_util::ravel(o, ist)];
            if (v < -dim || v >= dim) {
                throw error(op_type, "index " + std::to_string(v) + " is out of range for axis " + std::to_string(k) +
                                         " of size " + std::to_string(dim));
            }
            // o with its axis-k coordinate replaced by the index read
            return shape_util::ravel(o, st) - o[k] * st[k] + static_cast<std::size_t>(v < 0 ? v + dim : v) * st[k];
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return compute<T>(x, c.input(1).to<std::int64_t>(), a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<GatherElements>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<GatherElements>(c, x);
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().facts(spec::facts::selection_of(0)).after_solving(1, [](rng& g, const spec::context& c, dtype d, const shape_type& s) {
            return shape_detail::random_indices(g, c, d, s);
        });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::gather_elements_attr, axis);
