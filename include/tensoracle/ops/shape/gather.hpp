// tensoracle: Gather (slices of the data at indices along an axis).
#pragma once

#include <algorithm>
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

struct gather_attr {
    std::int64_t axis = 0;
};

/// Gather-13(data, indices): out[i_0..i_{a-1}, j.., i_{a+1}..] =
/// data[i_0..i_{a-1}, indices[j..], i_{a+1}..]; indices in [-dim, dim),
/// negative ones count from the end; out-of-range indices throw.
struct Gather : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Gather";
    static constexpr int opset = 13;
    using attributes = gather_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all, {1, 8}}, {"indices", spec::types::indices, {}, "Tind"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0), q = c.rank(1);
        return {{shape_util::axis_in_range(c.attr("axis"), r), "axis is in [-rank, rank)"},
                shape_util::concrete_fact(r + q - 1 <= shape_detail::max_rank, "the output rank is at most 8")};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0), q = c.rank(1);
        const auto an = shape_util::normalized_axis(c.attr("axis"), r);
        const auto d = c.shape(0), id = c.shape(1);
        std::vector<spec::expr> out;
        for (std::size_t k = 0; k + 1 < r + q; ++k) {
            const spec::expr kk(k);
            out.push_back(select(kk < an, shape_util::pick(d, kk),
                                 select(kk < an + spec::expr(q), shape_util::pick(id, kk - an), shape_util::pick(d, kk - spec::expr(q) + 1))));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(1, std::min(rank + 1, shape_detail::max_rank))},
                {spec::types::indices.members(), shape_util::ranks_between(0, rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const array<std::int64_t>& indices, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Gather, T>::value);
        const auto in = shape_util::shape_of(x), is = shape_util::shape_of(indices);
        if (in.empty()) throw shape_error(op_type, "data must have rank >= 1");
        const std::size_t k = shape_util::checked_axis(a.axis, in.size(), op_type);
        const auto dim = static_cast<std::int64_t>(in[k]);
        std::vector<std::size_t> idx(indices.size());
        for (std::size_t f = 0; f < indices.size(); ++f) {
            const std::int64_t v = indices.data()[f];
            if (v < -dim || v >= dim) {
                throw error(op_type, "index " + std::to_string(v) + " is out of range for axis " + std::to_string(k) +
                                         " of size " + std::to_string(dim) + " (allowed: [" + std::to_string(-dim) + ", " +
                                         std::to_string(dim - 1) + "])");
            }
            idx[f] = static_cast<std::size_t>(v < 0 ? v + dim : v);
        }
        shape_type out(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(k));
        out.insert(out.end(), is.begin(), is.end());
        out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(k) + 1, in.end());
        const auto st = detail::strides_of(in), ist = detail::strides_of(is);
        const std::size_t q = is.size();
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0, fi = 0;
            for (std::size_t j = 0; j < k; ++j) f += o[j] * st[j];
            for (std::size_t j = 0; j < q; ++j) fi += o[k + j] * ist[j];
            f += idx[fi] * st[k];
            for (std::size_t j = k + 1; j < in.size(); ++j) f += o[j + q - 1] * st[j];
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return compute<T>(x, c.input(1).to<std::int64_t>(), a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Gather>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Gather>(c, x);
    }
    template <int = 0>
    static spec::hints hints() {
        // Indices into the (solved) axis dim, negative ones included.
        return spec::hints{}.nan_faithful().facts(spec::facts::selection_of(0)).after_solving(1, [](rng& g, const spec::context& c, dtype d, const shape_type& s) {
            return shape_detail::random_indices(g, c, d, s);
        });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::gather_attr, axis);
