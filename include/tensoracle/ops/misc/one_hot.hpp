// tensoracle: OneHot (values[1] where the index matches along a new axis, values[0] elsewhere).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct one_hot_attr {
    std::int64_t axis = -1;
};

/// OneHot(indices, depth, values): values[1] where the index (negative counts
/// from depth) matches, values[0] elsewhere; out-of-range indices match nothing.
struct OneHot : spec::dtype_of_input<2> {
    static constexpr std::string_view op_type = "OneHot";
    // OneHot-11's schema lists no bfloat16.
    static constexpr spec::dtype_set onnx11_numeric = spec::types::ieee_floating | spec::types::integers;
    static constexpr spec::dtype_set onnx11_all = onnx11_numeric | spec::types::boolean;
    static constexpr int opset = 11;
    using attributes = one_hot_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"indices", onnx11_numeric, {1, 7}, "T1"},
                                                             {"depth", onnx11_numeric, {0, 1}, "T2"},
                                                             {"values", onnx11_all, {1, 1}, "T3"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", onnx11_all, {}, "T3"}}};
    static std::int64_t depth_of(const spec::context& c) {
        if (c.input(1).size() != 1) throw shape_error(std::string(op_type), "depth must hold one value");
        const double d = c.input(1).value_as_double(0);
        if (!(d >= 1.0 && d <= 1e9)) throw error(std::string(op_type), "depth must be a positive count, got " + std::to_string(d));
        return static_cast<std::int64_t>(d);
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto r = static_cast<std::int64_t>(c.rank(0)) + 1;
        const auto axis = c.attr("axis");
        return {{axis >= -r && axis < r, "axis in [-(rank+1), rank+1)"}, {c.dim(2, 0) == 2, "values holds [off, on]"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        // Output axis j is depth where j is the (normalized) axis, else the input
        // dim j (before the axis) or j - 1 (after it).
        const auto s = c.shape(0);
        const auto R = static_cast<std::int64_t>(s.size()) + 1;
        const auto a = c.attr("axis");
        const auto axis = select(a < 0, a + R, a);
        const spec::expr depth(depth_of(c));
        std::vector<spec::expr> out;
        for (std::int64_t j = 0; j < R; ++j) {
            const auto ju = static_cast<std::size_t>(j);
            const spec::expr before = ju < s.size() ? s[ju] : spec::expr(0), after = j >= 1 ? s[ju - 1] : spec::expr(0);
            out.push_back(select(axis == j, depth, select(spec::expr(j) < axis, before, after)));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (rank == 0) return {};
        // indices and depth: any numeric type (ONNX's T1, T2); depth a scalar or one value.
        if (!onnx11_all.contains(out)) return {};
        return {{onnx11_numeric.members(), {rank - 1}}, {onnx11_numeric.members(), {0, 1}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    /// The output shape, and per output element (row-major) whether it holds
    /// values[1] (on) rather than values[0] (off).
    struct layout {
        shape_type shape;
        std::vector<bool> on;
    };
    static layout layout_of(const spec::context& c) {
        const auto depth = depth_of(c);
        const auto in_shape = c.input(0).shape();
        const auto axis = spec::normalize_axis(std::get<std::int64_t>(c.attributes().at("axis")), in_shape.size() + 1, op_type);
        layout l;
        l.shape = in_shape;
        l.shape.insert(l.shape.begin() + static_cast<std::ptrdiff_t>(axis), static_cast<std::size_t>(depth));
        const auto idx = c.input(0).to<double>();
        const std::size_t outer = element_count(std::span(in_shape).first(axis));
        const std::size_t inner = element_count(std::span(in_shape).subspan(axis));
        l.on.resize(element_count(l.shape));
        for (std::size_t o = 0; o < outer; ++o) {
            for (std::size_t d = 0; d < static_cast<std::size_t>(depth); ++d) {
                for (std::size_t i = 0; i < inner; ++i) {
                    double want = std::trunc(idx.data()[o * inner + i]);
                    if (want < 0) want += static_cast<double>(depth);
                    l.on[(o * static_cast<std::size_t>(depth) + d) * inner + i] = want == static_cast<double>(d);
                }
            }
        }
        return l;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto l = layout_of(c);
        auto out = tensor::zeros(c.input_dtype(2), l.shape);
        out.visit([&](auto v) {
            using T = typename decltype(v)::value_type;
            const auto vals = c.input(2).values<T>();
            for (std::size_t f = 0; f < v.size(); ++f) v[f] = l.on[f] ? vals[1] : vals[0];
        });
        return detail::single_output(std::move(out));
    }
    /// values only (when floating): indices and depth pick positions, which
    /// is piecewise constant in them.
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(2)).is_floating) return {};
        return {2};
    }
    /// The kernel on AD scalar S: each output element is values[0] or
    /// values[1]; non-floating values have no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(2)).is_floating) return {array<S>{}};
        const auto l = layout_of(c);
        auto y = array<S>::from_shape(l.shape);
        for (std::size_t f = 0; f < y.size(); ++f) y.data()[f] = x[2].data()[l.on[f] ? 1 : 0];
        return {y};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .before_solving(1, [](rng& g, const spec::context& c) {  // depth: a small count
                auto t = tensor::zeros(dtype::i64, g.bernoulli(0.5) ? shape_type{} : shape_type{1});
                t.values<std::int64_t>()[0] = g.integer(1, 8);
                return t.cast(c.input_dtype(1));
            })
            .after_solving(0, [](rng& g, const spec::context& c, dtype d, const shape_type& s) {
                const double depth = static_cast<double>(depth_of(c));  // indices in [-depth, depth]: some miss
                return spec::random_values(g, d, s, -depth, depth + 1);
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::one_hot_attr, axis);
