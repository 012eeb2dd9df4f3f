// tensoracle: LayerNormalization (per row over X.shape[axis:]: (x - mean) / stddev * Scale + B).
//
// Semantics chosen where ONNX leaves it open (the family-wide notes: ops/reduce.hpp):
// - Precision: LayerNormalization's stash_type selects the dtype of
//   Mean/InvStdDev (1: float, 16: bfloat16); the computation itself uses the
//   family's accumulator (float for f16/bf16/f32, double for f64 inputs), i.e.
//   at least the stash precision.
// - LayerNormalization: Scale and B broadcast unidirectionally to the
//   normalized shape X.shape[axis:] (right-aligned, dims equal or 1).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/broadcast.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/reduce_util.hpp"
#include "tensoracle/ops/reduce/detail/normalization_groups.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
struct layer_norm_attr {
    std::int64_t axis = -1;
    float epsilon = 1e-5f;
    std::int64_t stash_type = 1;
};
}  // namespace reduce

/// LayerNormalization (17): per row (the elements sharing X.shape[:axis]),
/// Mean = mean(x), InvStdDev = 1 / sqrt(mean((x - Mean)^2) + epsilon),
/// Y = (x - Mean) * InvStdDev * Scale + B. Outputs: Y, Mean, InvStdDev, the
/// last two of shape X.shape[:axis] + [1] * (rank - axis).
struct LayerNormalization {
    static constexpr std::string_view op_type = "LayerNormalization";
    static constexpr int opset = 17;
    using attributes = reduce::layer_norm_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"X", spec::types::floating}, {"Scale", spec::types::floating}, {"B", spec::types::floating, {}, "T", true}}};
    static constexpr spec::dtype_set stash_types = spec::dtypes_of(dtype::f32, dtype::bf16);
    static constexpr std::array<spec::value_spec, 3> outputs{{{"Y", spec::types::floating},
                                                              {"Mean", stash_types, {}, "U", true},
                                                              {"InvStdDev", stash_types, {}, "U", true}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto axis = c.attr("axis");
        const auto stash = c.attr("stash_type");
        std::vector<spec::constraint> out{detail::axis_in_range(axis, r, "axis"),
                                          {stash == spec::expr(1) || stash == spec::expr(16),
                                           "stash_type is 1 (float) or 16 (bfloat16)"}};
        const auto an = detail::normalized_axis(axis, r);
        for (const std::size_t i : {std::size_t{1}, std::size_t{2}}) {
            if (!c.has_input(i)) continue;
            const std::string name = i == 1 ? "Scale" : "B";
            const std::size_t ri = c.rank(i);
            out.push_back({spec::expr(ri) <= spec::expr(r) - an, name + " has at most the rank of X.shape[axis:]"});
            for (std::size_t k = 0; k < ri && ri <= r; ++k) {
                const auto dk = c.dim(i, k), xk = c.dim(0, r - ri + k);
                out.push_back({dk == xk || dk == spec::expr(1),
                               name + " broadcasts to X.shape[axis:] (X axis " + std::to_string(r - ri + k) + ")"});
            }
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto an = detail::normalized_axis(c.attr("axis"), r);
        std::vector<spec::expr> stat;
        for (std::size_t k = 0; k < r; ++k) stat.push_back(select(an > spec::expr(k), c.dim(0, k), spec::expr(1)));
        return {c.shape(0), stat, stat};
    }
    static dtype stash_dtype(const attributes& a) { return a.stash_type == 16 ? dtype::bf16 : dtype::f32; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        const dtype u = stash_dtype(spec::parse_attributes<attributes>(c.attributes(), op_type));
        return {c.input_dtype(0), u, u};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank == 0) return {};
        std::vector<std::size_t> ranks;
        for (std::size_t r = 0; r <= rank; ++r) ranks.push_back(r);
        return {{{out}, {rank}}, {{out}, ranks}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        return {{"variance + epsilon > 0 over each normalized row", [a](std::span<const tensor> in) {
                     const std::size_t r = in[0].rank();
                     if (a.axis < -static_cast<std::int64_t>(r) || a.axis >= static_cast<std::int64_t>(r)) return 1.0;
                     const std::size_t axis = spec::normalize_axis(a.axis, r, op_type);
                     return reduce::variance_loss(reduce::split_groups(in[0], axis, r), static_cast<double>(a.epsilon));
                 }}};
    }

    template <class A, class T>
    struct result {
        array<T> y;
        array<A> mean;
        array<A> inv_std_dev;
    };

    /// The typed kernel; Mean and InvStdDev come in the accumulator type A
    /// (float, double for f64) and are rounded to the stash dtype by `run`.
    template <class T, class A = detail::reduce_acc_t<T>>
    static result<A, T> compute(const array<T>& x, const array<T>& scale, const std::optional<array<T>>& bias,
                                const attributes& a = {}) {
        static_assert(spec::dtype_accepted<LayerNormalization, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        const std::size_t axis = spec::normalize_axis(a.axis, s.size(), op_type);
        const shape_type norm_shape(s.begin() + static_cast<std::ptrdiff_t>(axis), s.end());
        // Scale and B broadcast to X.shape[axis:]; offsets of their element for each i.
        auto offsets_of = [&](const array<T>& p, std::string_view name) {
            const shape_type ps(p.shape().begin(), p.shape().end());
            if (ps.size() > norm_shape.size()) {
                throw shape_error(op_type, std::string(name) + " " + to_string(ps) + " has a higher rank than X.shape[axis:] " +
                                               to_string(norm_shape));
            }
            for (std::size_t k = 0; k < ps.size(); ++k) {
                const std::size_t xk = norm_shape[norm_shape.size() - ps.size() + k];
                if (ps[k] != xk && ps[k] != 1) {
                    throw shape_error(op_type, std::string(name) + " " + to_string(ps) + " does not broadcast to X.shape[axis:] " +
                                                   to_string(norm_shape));
                }
            }
            return detail::broadcast_offsets({ps}, norm_shape)[0];
        };
        const auto so = offsets_of(scale, "Scale");
        const auto bo = bias ? offsets_of(*bias, "B") : std::vector<std::size_t>{};
        shape_type stat_shape(s);
        for (std::size_t k = axis; k < s.size(); ++k) stat_shape[k] = 1;
        result<A, T> out{array<T>::from_shape(s), array<A>::from_shape(stat_shape), array<A>::from_shape(stat_shape)};
        const std::size_t n = element_count(norm_shape), rows = out.mean.size();
        const A eps = static_cast<A>(a.epsilon);
        for (std::size_t row = 0; row < rows; ++row) {
            const T* xr = x.data() + row * n;
            A mu = 0;
            for (std::size_t i = 0; i < n; ++i) mu += value_cast<A>(xr[i]);
            mu /= static_cast<A>(n);  // n == 0: NaN statistics, no element to normalize
            A var = 0;
            for (std::size_t i = 0; i < n; ++i) var += (value_cast<A>(xr[i]) - mu) * (value_cast<A>(xr[i]) - mu);
            var /= static_cast<A>(n);
            const A inv = A(1) / math::sqrt(var + eps);
            out.mean.data()[row] = mu;
            out.inv_std_dev.data()[row] = inv;
            for (std::size_t i = 0; i < n; ++i) {
                A v = (value_cast<A>(xr[i]) - mu) * inv * value_cast<A>(scale.data()[so[i]]);
                if (bias) v += value_cast<A>(bias->data()[bo[i]]);
                out.y.data()[row * n + i] = value_cast<T>(v);
            }
        }
        return out;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = checked_attributes(c);
        return detail::dispatch<inputs[0].types, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::optional<array<T>> bias;
            if (c.has_input(2)) bias = c.input(2).as_array<T>();
            auto res = compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>(), bias, a);
            const dtype u = stash_dtype(a);
            return std::vector<tensor>{tensor(res.y), tensor::from_array_as(res.mean, u), tensor::from_array_as(res.inv_std_dev, u)};
        });
    }
    /// Mean and InvStdDev stay in S: run() rounds them to the stash dtype, which
    /// only loses precision (the derivative of that rounding is taken as 1).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        std::optional<array<S>> bias;
        if (c.has_input(2)) bias = x[2];
        auto res = compute<S>(x[0], x[1], bias, checked_attributes(c));
        return {std::move(res.y), std::move(res.mean), std::move(res.inv_std_dev)};
    }
    static attributes checked_attributes(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (a.stash_type != 1 && a.stash_type != 16) {
            throw error(op_type, "stash_type must be 1 (float) or 16 (bfloat16), got " + std::to_string(a.stash_type));
        }
        return a;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .weights({1, 2})
            .real("epsilon", 1e-6, 1e-2, 0.3)
            .choice("stash_type", {std::int64_t{1}}, 0.2)
            .range(1, 0.5, 2.0)
            .range(2, -1.0, 1.0)
            .optional_input(2, 0.7)
            .facts(facts);
    }
    /// Y: unknown (Scale and B move it), except over rows of one element, where
    /// x - Mean is 0 and Y is B (0 without B). Mean: inside X's range. InvStdDev =
    /// 1 / sqrt(var + epsilon), with var at most (hi - lo)^2 / 4 for X in
    /// [lo, hi]: InvStdDev of Cos values is never below 1 / sqrt(1 + epsilon).
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type> shapes) {
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        spec::value_facts y;
        std::size_t row = 0;  // elements per normalized row; 0: not known
        if (!shapes.empty() && !shapes[0].empty()) {
            row = 1;
            for (std::size_t i = spec::normalize_axis(a.axis, shapes[0].size(), op_type); i < shapes[0].size(); ++i) {
                row *= shapes[0][i];
            }
            const bool has_b = in.size() > 2;  // trailing absent inputs are dropped (B may be a scalar)
            if (row == 1) {
                y = has_b ? in[2].range_only() : spec::value_facts::constant(0.0);
            } else if (!has_b) {
                // (x - Mean) / sd sums to 0 over a row (all 0 on a constant row), so
                // times one Scale value, or Scale values of one sign, some element is
                // <= 0 and some >= 0 (up to the rounding of the mean): Log of it fails.
                const bool one_scale = shapes.size() > 1 && element_count(shapes[1], op_type) == 1;
                const bool one_sign = in.size() > 1 && (in[1].lo >= 0.0 || in[1].hi <= 0.0);
                if (one_scale || one_sign) {
                    y.some_at_most = 0.0;
                    y.some_at_least = 0.0;
                }
            }
        }
        const double eps = a.epsilon;
        if (!(eps > 0.0)) return {y, x.range_only(), spec::value_facts{}};
        // A row of one element has variance 0 whatever it holds: InvStdDev is
        // 1 / sqrt(epsilon) (Atanh of it fails for every epsilon below 1).
        const double var_max = row == 1 ? 0.0 : (x.hi - x.lo) * (x.hi - x.lo) / 4.0;
        // 1% slack for rounding in float32 / bfloat16 statistics.
        const auto inv = spec::value_facts::within(0.99 / std::sqrt(var_max + eps), 1.01 / std::sqrt(eps));
        return {y, x.range_only(), inv};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::layer_norm_attr, axis, epsilon, stash_type);
