// tensoracle: LpNormalization (x / ||x||_p along an axis, p in {1, 2}).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/reduce_util.hpp"
#include "tensoracle/ops/reduce/detail/normalization_groups.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
struct lp_norm_attr {
    std::int64_t axis = -1;
    std::int64_t p = 2;
};
}  // namespace reduce

/// LpNormalization (1): y = x / ||x||_p along `axis`, p in {1, 2}. A zero
/// vector gives 0 / 0 = NaN (as the ONNX reference); the domain excludes it.
struct LpNormalization : spec::like_input<0>, detail::one_input_kernel<LpNormalization> {
    static constexpr std::string_view op_type = "LpNormalization";
    static constexpr int opset = 1;
    using attributes = reduce::lp_norm_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::ieee_floating}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::ieee_floating}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto p = c.attr("p");
        return {detail::axis_in_range(c.attr("axis"), c.rank(0), "axis"),
                {p == spec::expr(1) || p == spec::expr(2), "p is 1 or 2"}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        std::vector<spec::domain_rule> rules{{"||x||_p > 0 along axis (and finite)", [a](std::span<const tensor> in) {
                     const std::size_t r = in[0].rank();
                     if (a.axis < -static_cast<std::int64_t>(r) || a.axis >= static_cast<std::int64_t>(r)) return 1.0;
                     const std::size_t axis = spec::normalize_axis(a.axis, r, op_type);
                     const double m = detail::max_finite(in[0].element_dtype());
                     double loss = 0.0;
                     for (const auto& g : reduce::split_groups(in[0], axis, axis + 1)) {
                         double s = 0.0;
                         for (const double x : g) s += a.p == 1 ? std::fabs(x) : x * x;
                         const double norm = a.p == 1 ? s : std::sqrt(s);
                         loss += std::max(1e-10 - norm, 0.0) + (a.p == 2 && s > m ? s / m - 1.0 : 0.0);
                     }
                     return loss;
                 }}};
        // A non-zero norm needs some non-zero element (what the generator checks).
        rules[0].elementwise_input = 0;
        rules[0].elementwise = [](double x) { return 1e-10 - std::fabs(x); };
        rules[0].elementwise_any = true;
        rules[0].any_along_axis = a.axis;
        return rules;
    }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<LpNormalization, T>::value);
        if (a.p != 1 && a.p != 2) throw error(op_type, "p must be 1 or 2, got " + std::to_string(a.p));
        const shape_type s(x.shape().begin(), x.shape().end());
        const auto sp = detail::split_at(s, spec::normalize_axis(a.axis, s.size(), op_type));
        using A = detail::reduce_acc_t<T>;
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                A acc = 0;
                for (std::size_t i = 0; i < sp.n; ++i) {
                    const A v = value_cast<A>(x.data()[sp.at(o, i, j)]);
                    acc += a.p == 1 ? math::fabs(v) : v * v;
                }
                const A norm = a.p == 1 ? acc : math::sqrt(acc);
                for (std::size_t i = 0; i < sp.n; ++i) {
                    y.data()[sp.at(o, i, j)] = value_cast<T>(value_cast<A>(x.data()[sp.at(o, i, j)]) / norm);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.choice("p", {std::int64_t{1}, std::int64_t{2}}, 0.7).facts(facts); }
    /// Every element lies in [-1, 1], and in a slice of n along the axis the
    /// smallest |y| is at most n^(-1/p) (the p-th powers sum to 1): some element
    /// is <= n^(-1/p) and some >= -n^(-1/p), so Acosh of it is out of reach.
    /// A slice of one is x / |x|: exactly -1 or 1 (the square root of a
    /// correctly rounded square is exact), 1 where x >= 0.
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type> shapes) {
        auto f = spec::value_facts::within(-1.0, 1.0);
        if (shapes.empty() || shapes[0].empty()) return {f};
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        const std::size_t axis = spec::normalize_axis(a.axis, shapes[0].size(), op_type);
        const auto n = static_cast<double>(shapes[0][axis]);
        if (n == 1.0 && (a.p == 1 || a.p == 2)) {
            if (!in.empty() && in[0].lo >= 0.0) return {spec::value_facts::constant(1.0)};
            if (!in.empty() && in[0].hi <= 0.0) return {spec::value_facts::constant(-1.0)};
            f.gap = std::make_pair(-1.0, 1.0);
            f.integral = true;
            return {f};
        }
        if (n < 2.0 || (a.p != 1 && a.p != 2)) return {f};
        const double m = 1.01 * std::pow(n, -1.0 / static_cast<double>(a.p));  // 1% slack for rounding
        f.some_at_most = m;
        f.some_at_least = -m;
        return {f};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::lp_norm_attr, axis, p);
