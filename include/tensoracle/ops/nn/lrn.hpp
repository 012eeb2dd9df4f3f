// tensoracle: LRN (local response normalization across channels).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/nn/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct lrn_attr {
    float alpha = 0.0001f;
    float beta = 0.75f;
    float bias = 1.0f;
    std::int64_t size = 1;
    static constexpr std::array<std::string_view, 1> required{"size"};
};

/// LRN(X): Y = X / (bias + alpha / size * square_sum)^beta, square_sum over the
/// channels [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
// On AD scalars (run_real) beta stays a constant exponent of a positive base.
struct LRN : spec::like_input<0>, detail::one_input_kernel<LRN> {
    static constexpr std::string_view op_type = "LRN";
    static constexpr int opset = 13;
    using attributes = lrn_attr;
    static constexpr spec::dtype_set types = spec::types::floating;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 8}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return {{spec::expr(c.rank(0)) >= 3, "X has rank >= 3: (N, C, D1, ...)"}, {c.attr("size") >= 1, "size >= 1"}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3) return {};
        return {{{out}, {rank}}};
    }
    /// The base raised to beta must be positive.
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        return {{"bias + alpha / size * square_sum > 0", [a](std::span<const tensor> in) {
                     const auto x = in[0].to<double>();
                     if (x.dimension() < 3 || a.size < 1) return 0.0;
                     const auto base = bases(x, a);
                     double loss = 0.0;
                     for (const double b : base) loss += b > 0 ? 0.0 : (1e-10 - b);
                     return loss;
                 }}};
    }
    /// bias + alpha / size * square_sum for every element, in double.
    static std::vector<double> bases(const array<double>& x, const attributes& a) {
        const std::size_t N = x.shape()[0], C = x.shape()[1], plane = x.size() / std::max<std::size_t>(1, N * C);
        const auto lo = (a.size - 1) / 2, hi = a.size - 1 - lo;
        std::vector<double> out(x.size());
        for (std::size_t b = 0; b < N; ++b) {
            for (std::size_t c = 0; c < C; ++c) {
                const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(c) - lo);
                const auto last = std::min<std::int64_t>(static_cast<std::int64_t>(C) - 1, static_cast<std::int64_t>(c) + hi);
                for (std::size_t p = 0; p < plane; ++p) {
                    double s = 0;
                    for (auto j = first; j <= last; ++j) {
                        const double v = x.data()[(b * C + static_cast<std::size_t>(j)) * plane + p];
                        s += v * v;
                    }
                    out[(b * C + c) * plane + p] =
                        static_cast<double>(a.bias) + static_cast<double>(a.alpha) / static_cast<double>(a.size) * s;
                }
            }
        }
        return out;
    }
    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a) {
        static_assert(spec::dtype_accepted<LRN, T>::value);
        using acc = nn::acc_t<T>;
        if (x.dimension() < 3) throw shape_error(std::string(op_type), "X must have rank >= 3: (N, C, D1, ...)");
        if (a.size < 1) throw error(std::string(op_type), "size must be >= 1");
        const std::size_t N = x.shape()[0], C = x.shape()[1], plane = x.size() / std::max<std::size_t>(1, N * C);
        const auto lo = (a.size - 1) / 2, hi = a.size - 1 - lo;
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t b = 0; b < N; ++b) {
            for (std::size_t c = 0; c < C; ++c) {
                const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(c) - lo);
                const auto last = std::min<std::int64_t>(static_cast<std::int64_t>(C) - 1, static_cast<std::int64_t>(c) + hi);
                for (std::size_t p = 0; p < plane; ++p) {
                    acc s = 0;
                    for (auto j = first; j <= last; ++j) {
                        const auto v = static_cast<acc>(x.data()[(b * C + static_cast<std::size_t>(j)) * plane + p]);
                        s += v * v;
                    }
                    const std::size_t f = (b * C + c) * plane + p;
                    const acc base = static_cast<acc>(a.bias) + static_cast<acc>(a.alpha) / static_cast<acc>(a.size) * s;
                    const acc scale = math::pow(base, static_cast<acc>(a.beta));
                    y.data()[f] = value_cast<T>(static_cast<acc>(x.data()[f]) / scale);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.solve("size", 1, 9, 1.0).real("alpha", 1e-4, 1e-2, 0.5).real("beta", 0.5, 0.9, 0.5).real("bias", 1.0, 3.0, 0.5).range(0, -3, 3).facts(facts);
    }
    /// Y = X * s with s = (bias + alpha/size * sum)^-beta in (0, bias^-beta] when
    /// alpha, beta >= 0 and bias > 0: signs stay, magnitudes scale by at most
    /// bias^-beta (LRN of values in [0, 1] with bias > 1 stays below 1).
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type>) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        if (in.empty() || !(a.alpha >= 0.0f && a.beta >= 0.0f && a.bias > 0.0f)) return {spec::value_facts{}};
        const auto& x = in[0];
        const double s = std::pow(static_cast<double>(a.bias), -static_cast<double>(a.beta));
        spec::value_facts y;
        y.lo = x.lo >= 0.0 ? 0.0 : x.lo * s;
        y.hi = x.hi <= 0.0 ? 0.0 : x.hi * s;
        if (std::isfinite(x.some_at_most)) y.some_at_most = x.some_at_most >= 0.0 ? x.some_at_most * s : 0.0;
        if (std::isfinite(x.some_at_least)) y.some_at_least = x.some_at_least <= 0.0 ? x.some_at_least * s : 0.0;
        for (const double v : x.forced) {
            if (v == 0.0) {
                y.force(0.0);  // 0 stays 0
            } else if (a.size == 1) {
                // A window of one channel: element-wise, so a forced value maps exactly.
                y.force(v * std::pow(static_cast<double>(a.bias) + static_cast<double>(a.alpha) * v * v,
                                     -static_cast<double>(a.beta)));
            }
        }
        return {y};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::lrn_attr, alpha, beta, bias, size);
