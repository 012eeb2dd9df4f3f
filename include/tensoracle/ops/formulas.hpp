// tensoracle: the per-element formulas of the element-wise ops, in one place
// for the CPU kernels (ops/unary.hpp, ops/binary.hpp) and the CUDA kernels
// (cuda/kernels.cuh). A fix to a formula lands in both, so they cannot drift.
//
// This header depends on core/scalar.hpp alone so that nvcc parses it (the
// spec layer does not go through nvcc's device compiler). Each formula is a
// struct with `apply(x, attributes)`; the op's spec struct derives from it.
// Formulas are written for any real V: float, double, AD scalars on the host.
// Integer branches (wrapping arithmetic) stay host-and-device safe; integer
// errors (division by zero) are thrown by the spec layer, not here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tensoracle/core/scalar.hpp"

/// Marks a function callable from host and device code under nvcc; empty
/// for host compilers. Calls into std:: math need nvcc's --expt-relaxed-constexpr.
#if defined(__CUDACC__)
#define TENSORACLE_HD __host__ __device__
#else
#define TENSORACLE_HD
#endif

namespace tensoracle::ops {

namespace formula {
/// Integer arithmetic that wraps instead of overflowing (UB-free).
template <class V>
TENSORACLE_HD constexpr V wrapping_add(V a, V b) {
    return static_cast<V>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
template <class V>
TENSORACLE_HD constexpr V wrapping_sub(V a, V b) {
    return static_cast<V>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
template <class V>
TENSORACLE_HD constexpr V wrapping_mul(V a, V b) {
    return static_cast<V>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}
/// std::max(0, std::min(1, v)) exactly: NaN gives 1, and at 0 and 1 the
/// constant is taken (its derivative 0 on AD scalars).
template <class V>
TENSORACLE_HD constexpr V clamp01(V v) {
    const V t = v < V(1) ? v : V(1);
    return V(0) < t ? t : V(0);
}
}  // namespace formula

namespace unary {

// Attributes of the activations (the spec layer adapts them for parsing).
struct alpha_attr {
    float alpha = 0.01f;
};
struct elu_attr {
    float alpha = 1.0f;
};
struct selu_attr {
    float alpha = 1.67326319217681884765625f;
    float gamma = 1.05070102214813232421875f;
};
struct hard_sigmoid_attr {
    float alpha = 0.2f;
    float beta = 0.5f;
};
struct thresholded_relu_attr {
    float alpha = 1.0f;
};

namespace formula {
using namespace tensoracle::ops::formula;

#define TENSORACLE_FORMULA(NAME, BODY)                     \
    struct NAME {                                          \
        template <class V, class A>                        \
        TENSORACLE_HD static V apply(V x, const A& a) {    \
            (void)a;                                       \
            BODY                                           \
        }                                                  \
    };

TENSORACLE_FORMULA(relu, return x > V(0) ? x : V(0);)
TENSORACLE_FORMULA(abs, if constexpr (std::is_unsigned_v<V>) {
    return x;
} else if constexpr (std::is_integral_v<V>) {
    return x < 0 ? static_cast<V>(-static_cast<std::int64_t>(x)) : x;  // INT_MIN wraps
} else {
    return math::fabs(x);
})
TENSORACLE_FORMULA(neg, if constexpr (std::is_integral_v<V>) {
    return static_cast<V>(0 - static_cast<std::uint64_t>(static_cast<std::int64_t>(x)));  // wraps
} else {
    return -x;
})
TENSORACLE_FORMULA(sign, if constexpr (std::is_unsigned_v<V>) {
    return x > V(0) ? V(1) : V(0);
} else {
    return x > V(0) ? V(1) : (x < V(0) ? V(-1) : V(0));
})
TENSORACLE_FORMULA(ceil, return math::ceil(x);)
TENSORACLE_FORMULA(floor, return math::floor(x);)
/// Halves go to the even neighbour (ONNX and IEEE default).
TENSORACLE_FORMULA(round, return math::nearbyint(x);)
TENSORACLE_FORMULA(exp, return math::exp(x);)
TENSORACLE_FORMULA(log, return math::log(x);)
TENSORACLE_FORMULA(sqrt, return math::sqrt(x);)
TENSORACLE_FORMULA(reciprocal, return V(1) / x;)
/// Two branches so that exp never overflows: same value as 1/(1+exp(-x)).
TENSORACLE_FORMULA(sigmoid, return x >= V(0) ? V(1) / (V(1) + math::exp(-x)) : math::exp(x) / (V(1) + math::exp(x));)
TENSORACLE_FORMULA(tanh, return math::tanh(x);)
/// log(exp(x) + 1) as x + log1p(exp(-x)) for x >= 0: no overflow for large x,
/// and per sign, so that no kink of max or |.| shows in the derivative at 0.
TENSORACLE_FORMULA(softplus, return x >= V(0) ? x + math::log1p(math::exp(-x)) : math::log1p(math::exp(x));)
TENSORACLE_FORMULA(softsign, return x / (V(1) + math::fabs(x));)
TENSORACLE_FORMULA(sin, return math::sin(x);)
TENSORACLE_FORMULA(cos, return math::cos(x);)
TENSORACLE_FORMULA(tan, return math::tan(x);)
TENSORACLE_FORMULA(asin, return math::asin(x);)
TENSORACLE_FORMULA(acos, return math::acos(x);)
TENSORACLE_FORMULA(atan, return math::atan(x);)
TENSORACLE_FORMULA(sinh, return math::sinh(x);)
TENSORACLE_FORMULA(cosh, return math::cosh(x);)
TENSORACLE_FORMULA(asinh, return math::asinh(x);)
TENSORACLE_FORMULA(acosh, return math::acosh(x);)
TENSORACLE_FORMULA(atanh, return math::atanh(x);)
TENSORACLE_FORMULA(not_, return !x;)
TENSORACLE_FORMULA(identity, return x;)
TENSORACLE_FORMULA(leaky_relu, return x >= V(0) ? x : V(a.alpha) * x;)
TENSORACLE_FORMULA(elu, return x >= V(0) ? x : V(a.alpha) * math::expm1(x);)
/// max(0, x) + min(0, alpha * expm1(x / alpha)), written per sign with the same values (also -0 -> +0 and
/// NaN -> 0, as max/min give), so that the derivative at 0 is 1 and not max's and min's 0.
TENSORACLE_FORMULA(celu, const V al(a.alpha); if (x >= V(0)) return x + V(0); if (!(x < V(0))) return V(0);
                   const V m = al * math::expm1(x / al); return V(0) + (m < V(0) ? m : V(0));)
TENSORACLE_FORMULA(selu, return V(a.gamma) * (x > V(0) ? x : V(a.alpha) * math::expm1(x));)
TENSORACLE_FORMULA(hard_sigmoid, return clamp01(V(a.alpha) * x + V(a.beta));)
TENSORACLE_FORMULA(hard_swish, return x * clamp01(V(1.0f / 6.0f) * x + V(0.5f));)
TENSORACLE_FORMULA(thresholded_relu, return x > V(a.alpha) ? x : V(0);)
#undef TENSORACLE_FORMULA

/// Erf also takes integers (ONNX-13): erf in double, truncated to the type
/// (the spec layer handles integers; this is the floating formula).
struct erf {
    template <class V, class A>
    TENSORACLE_HD static V apply(V x, const A&) {
        return math::erf(x);
    }
};
}  // namespace formula
}  // namespace unary

namespace binary {
namespace formula {
using namespace tensoracle::ops::formula;

#define TENSORACLE_FORMULA(NAME, BODY)                          \
    struct NAME {                                               \
        template <class V, class A>                             \
        TENSORACLE_HD static V apply(V a, V b, const A& at) {   \
            (void)at;                                           \
            BODY                                                \
        }                                                       \
    };
TENSORACLE_FORMULA(add, if constexpr (std::is_integral_v<V>) { return wrapping_add(a, b); } else { return a + b; })
TENSORACLE_FORMULA(sub, if constexpr (std::is_integral_v<V>) { return wrapping_sub(a, b); } else { return a - b; })
TENSORACLE_FORMULA(mul, if constexpr (std::is_integral_v<V>) { return wrapping_mul(a, b); } else { return a * b; })
/// Floating division (integer division by zero is the spec layer's error).
TENSORACLE_FORMULA(div, return a / b;)
/// NaN in either operand gives NaN (ONNX Max/Min); otherwise the larger (smaller) one.
TENSORACLE_FORMULA(max, if constexpr (!std::is_integral_v<V>) {
    if (math::isnan(a) || math::isnan(b)) return std::numeric_limits<V>::quiet_NaN();
} return a < b ? b : a;)
TENSORACLE_FORMULA(min, if constexpr (!std::is_integral_v<V>) {
    if (math::isnan(a) || math::isnan(b)) return std::numeric_limits<V>::quiet_NaN();
} return b < a ? b : a;)
/// Sum and Mean fold their inputs with +; Mean divides at the end (spec layer).
struct sum : add {};
struct mean : add {};
/// Floating Mod with fmod=1: the dividend's sign (C fmod).
TENSORACLE_FORMULA(fmod, return math::fmod(a, b);)
/// Floating Pow of same-type operands.
TENSORACLE_FORMULA(pow, return math::pow(a, b);)
#undef TENSORACLE_FORMULA
}  // namespace formula
}  // namespace binary

}  // namespace tensoracle::ops
