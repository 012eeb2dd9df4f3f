// tensoracle: Split (the input cut into parts along an axis).
//
// Semantics chosen where ONNX leaves them open: Split-13 cannot see its node's
// output count: the reserved attribute `__num_outputs` (set by the
// interpreter / ONNX importer from the node's output count; 0, its default,
// means not given) gives the number of equal parts when `split` is absent.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/accessors.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct split_attr {
    std::int64_t axis = 0;
    /// Reserved: the number of outputs of the ONNX node (Split-13 has no
    /// attribute for it; the interpreter sets it from the node's output
    /// count). 0 = not called from a node: then `split` must be given.
    std::int64_t num_outputs = 0;
};

/// Split-13(input, split?): parts of the lengths in `split` along axis, or
/// `__num_outputs` equal parts (the axis length must divide evenly). A node
/// with `split` names one output per length, as ONNX's inference demands.
struct Split {
    static constexpr std::string_view op_type = "Split";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.nan_faithful().facts(spec::facts::selection_of(0)); }  // each part: some elements
    static constexpr int opset = 13;
    using attributes = split_attr;
    static constexpr std::string_view num_outputs_attribute = "__num_outputs";
    static constexpr std::int64_t max_outputs = 4096;  // implementation limit
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all, {1, 8}}, {"split", spec::types::int64, {1, 1}, "T1", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"outputs", spec::types::all, {1, 8}, "T", false, true}}};

    static std::size_t output_count(const spec::context& c) {
        if (c.has_input(1)) return c.element_count(1);
        const auto n = spec::parse_attributes<attributes>(c.attributes(), op_type).num_outputs;
        return n < 1 || n > max_outputs ? 0 : static_cast<std::size_t>(n);
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto a = c.attr("axis");
        std::vector<spec::constraint> out{{shape_util::axis_in_range(a, r), "axis is in [-rank, rank)"}};
        const auto dim = shape_util::pick(c.shape(0), shape_util::normalized_axis(a, r));
        if (c.has_input(1)) {
            const auto v = c.values(1);
            for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "split[" + std::to_string(i) + "] >= 0"});
            out.push_back({shape_util::sum(v) == dim, "the split lengths add up to the axis dim"});
            const auto n = c.attr(num_outputs_attribute);
            out.push_back({n == spec::expr(0) || n == c.dim(1, 0), "the node names one output per split length (len(split))"});
        } else {
            const auto n = c.attr(num_outputs_attribute);
            out.push_back({n >= 1 && n <= spec::expr(max_outputs), "__num_outputs (the node's output count; needed without `split`) is in [1, 4096]"});
            out.push_back({dim % shape_util::emax(n, spec::expr(1)) == 0, "the axis dim divides into __num_outputs equal parts"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto an = shape_util::normalized_axis(c.attr("axis"), r);
        const auto dims = c.shape(0);
        const auto dim = shape_util::pick(dims, an);
        std::vector<spec::expr> parts;
        if (c.has_input(1)) {
            parts = c.values(1);
        } else {
            parts.assign(output_count(c), dim / shape_util::emax(c.attr(num_outputs_attribute), spec::expr(1)));
        }
        spec::shape_exprs out;
        for (const auto& p : parts) {
            std::vector<spec::expr> s;
            for (std::size_t j = 0; j < r; ++j) s.push_back(select(an == spec::expr(j), p, dims[j]));
            out.push_back(s);
        }
        return out;
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return std::vector<dtype>(output_count(c), c.input_dtype(0)); }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static std::vector<array<T>> compute(const array<T>& x, const std::optional<std::vector<std::int64_t>>& split_lengths,
                                         const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Split, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.empty()) throw shape_error(op_type, "cannot split a scalar (rank 0)");
        const std::size_t k = shape_util::checked_axis(a.axis, in.size(), op_type);
        std::vector<std::size_t> lengths;
        if (split_lengths) {
            if (split_lengths->empty()) throw shape_error(op_type, "split is empty");
            std::size_t total = 0;
            for (const auto v : *split_lengths) {
                lengths.push_back(shape_util::to_dim(v, op_type, "a split length"));
                if (lengths.back() > in[k] - std::min(total, in[k])) {
                    throw shape_error(op_type, "split lengths exceed the axis dim " + std::to_string(in[k]));
                }
                total += lengths.back();
            }
            if (total != in[k]) {
                throw shape_error(op_type, "split lengths add up to " + std::to_string(total) + ", the axis dim is " + std::to_string(in[k]));
            }
        } else {
            if (a.num_outputs < 1 || a.num_outputs > max_outputs) {
                throw error(op_type, "__num_outputs must be in [1, 4096], got " + std::to_string(a.num_outputs));
            }
            const auto n = static_cast<std::size_t>(a.num_outputs);
            if (in[k] % n != 0) {
                throw shape_error(op_type, "axis dim " + std::to_string(in[k]) + " does not split into " + std::to_string(n) + " equal parts");
            }
            lengths.assign(n, in[k] / n);
        }
        const auto st = detail::strides_of(in);
        std::vector<array<T>> out;
        std::size_t offset = 0;
        for (const auto len : lengths) {
            shape_type s = in;
            s[k] = len;
            out.push_back(shape_util::gather_elements_by(x, s, op_type, [&](const shape_type& o) {
                return shape_util::ravel(o, st) + offset * st[k];  // o moved by offset along axis k
            }));
            offset += len;
        }
        return out;
    }
    template <class T>
    static std::vector<array<T>> run_typed(const spec::context& c, const array<T>& x) {
        std::optional<std::vector<std::int64_t>> lengths;
        if (c.has_input(1)) lengths = shape_util::int_values(c.input(1), op_type);
        return compute<T>(x, lengths, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::dispatch<spec::types::all, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::vector<tensor> out;
            for (const auto& y : run_typed<T>(c, c.input(0).as_array<T>())) out.emplace_back(y);
            return out;
        });
    }
    /// Every output copies part of the input (integer / bool data: one placeholder per output).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return std::vector<array<S>>(output_count(c));
        return run_typed<S>(c, x[0]);
    }
};

}  // namespace tensoracle::ops

// Split's attribute struct is adapted by hand: its reserved attribute is named
// "__num_outputs", which is not a valid (non-reserved) C++ member name.
namespace boost::hana {
template <>
struct accessors_impl<tensoracle::ops::split_attr> {
    template <int = 0>  // built only where used, as TENSORACLE_ADAPT_ATTRIBUTES does
    static constexpr auto apply() {
        return boost::hana::make_tuple(
            boost::hana::make_pair(BOOST_HANA_STRING("axis"), [](auto&& s) -> decltype(auto) { return (s.axis); }),
            boost::hana::make_pair(BOOST_HANA_STRING("__num_outputs"), [](auto&& s) -> decltype(auto) { return (s.num_outputs); }));
    }
};
}  // namespace boost::hana
