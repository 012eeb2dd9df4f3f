// tensoracle: forward-mode dual numbers, x = v + d·ε with ε² = 0.
//
// dual<V> carries one directional derivative. V may itself be a dual (or any
// AD scalar), so dual<dual<double>> gives second directional derivatives:
// seed the inner and outer tangents with u and w and the innermost derivative
// part is wᵀ H u. Kernels templated on their scalar type run unchanged with
// duals: that is how every op gets its JVP from the same code that computes
// its value.
#pragma once

#include <cmath>
#include <limits>
#include <numbers>
#include <ostream>
#include <type_traits>

#include "tensoracle/core/scalar.hpp"

namespace tensoracle::ad {

template <class V>
struct dual;

template <class T>
struct is_dual : std::false_type {};
template <class V>
struct is_dual<dual<V>> : std::true_type {};

namespace detail {
/// Exactly zero in every part (a nested dual is zero only if all its parts are).
template <class V>
constexpr bool exactly_zero(const V& x) {
    if constexpr (is_dual<V>::value) {
        return exactly_zero(x.v) && exactly_zero(x.d);
    } else if constexpr (ad_scalar<V>) {
        return primal(x) == 0 && x.is_constant();
    } else {
        return x == V(0);
    }
}
}  // namespace detail

template <class V>
struct dual {
    using value_type = V;
    V v{};  ///< value
    V d{};  ///< derivative along the seeded direction

    constexpr dual() = default;
    constexpr dual(const V& value, const V& derivative) : v(value), d(derivative) {}
    // Implicit from the value type and from arithmetic constants, so that
    // kernels can write `x > V(0)` or `V(a.alpha) * x` as they do for double.
    constexpr dual(const V& value) : v(value), d(V(0)) {}  // NOLINT(google-explicit-constructor)
    template <class U>
        requires(std::is_arithmetic_v<U> && !std::is_same_v<U, V>)
    constexpr dual(U value) : v(V(static_cast<base_scalar_t<V>>(value))), d(V(0)) {}  // NOLINT

    friend constexpr dual operator+(const dual& a) { return a; }
    friend constexpr dual operator-(const dual& a) { return {-a.v, -a.d}; }
    friend constexpr dual operator+(const dual& a, const dual& b) { return {a.v + b.v, a.d + b.d}; }
    friend constexpr dual operator-(const dual& a, const dual& b) { return {a.v - b.v, a.d - b.d}; }
    friend constexpr dual operator*(const dual& a, const dual& b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }
    friend constexpr dual operator/(const dual& a, const dual& b) {
        const V q = a.v / b.v;
        return {q, (a.d - q * b.d) / b.v};
    }
    constexpr dual& operator+=(const dual& b) { return *this = *this + b; }
    constexpr dual& operator-=(const dual& b) { return *this = *this - b; }
    constexpr dual& operator*=(const dual& b) { return *this = *this * b; }
    constexpr dual& operator/=(const dual& b) { return *this = *this / b; }

    // Comparisons look at values only: a kernel's branches follow the primal.
    friend constexpr bool operator==(const dual& a, const dual& b) { return a.v == b.v; }
    friend constexpr bool operator!=(const dual& a, const dual& b) { return a.v != b.v; }
    friend constexpr bool operator<(const dual& a, const dual& b) { return a.v < b.v; }
    friend constexpr bool operator<=(const dual& a, const dual& b) { return a.v <= b.v; }
    friend constexpr bool operator>(const dual& a, const dual& b) { return a.v > b.v; }
    friend constexpr bool operator>=(const dual& a, const dual& b) { return a.v >= b.v; }

    explicit constexpr operator bool() const { return v != V(0); }

    friend std::ostream& operator<<(std::ostream& os, const dual& x) { return os << x.v << "+" << x.d << "e"; }
};

// Elementary functions: value through math:: (std:: or the inner AD type), times the derivative.
template <class V>
dual<V> exp(const dual<V>& x) {
    const V e = math::exp(x.v);
    return {e, x.d * e};
}
template <class V>
dual<V> expm1(const dual<V>& x) {
    return {math::expm1(x.v), x.d * math::exp(x.v)};
}
template <class V>
dual<V> log(const dual<V>& x) {
    return {math::log(x.v), x.d / x.v};
}
template <class V>
dual<V> log1p(const dual<V>& x) {
    return {math::log1p(x.v), x.d / (V(1) + x.v)};
}
template <class V>
dual<V> sqrt(const dual<V>& x) {
    const V s = math::sqrt(x.v);
    return {s, x.d / (V(2) * s)};
}
template <class V>
dual<V> sin(const dual<V>& x) {
    return {math::sin(x.v), x.d * math::cos(x.v)};
}
template <class V>
dual<V> cos(const dual<V>& x) {
    return {math::cos(x.v), -x.d * math::sin(x.v)};
}
template <class V>
dual<V> tan(const dual<V>& x) {
    const V t = math::tan(x.v);
    return {t, x.d * (V(1) + t * t)};
}
template <class V>
dual<V> asin(const dual<V>& x) {
    return {math::asin(x.v), x.d / math::sqrt(V(1) - x.v * x.v)};
}
template <class V>
dual<V> acos(const dual<V>& x) {
    return {math::acos(x.v), -x.d / math::sqrt(V(1) - x.v * x.v)};
}
template <class V>
dual<V> atan(const dual<V>& x) {
    return {math::atan(x.v), x.d / (V(1) + x.v * x.v)};
}
template <class V>
dual<V> sinh(const dual<V>& x) {
    return {math::sinh(x.v), x.d * math::cosh(x.v)};
}
template <class V>
dual<V> cosh(const dual<V>& x) {
    return {math::cosh(x.v), x.d * math::sinh(x.v)};
}
template <class V>
dual<V> tanh(const dual<V>& x) {
    const V t = math::tanh(x.v);
    return {t, x.d * (V(1) - t * t)};
}
template <class V>
dual<V> asinh(const dual<V>& x) {
    return {math::asinh(x.v), x.d / math::sqrt(x.v * x.v + V(1))};
}
template <class V>
dual<V> acosh(const dual<V>& x) {
    return {math::acosh(x.v), x.d / math::sqrt(x.v * x.v - V(1))};
}
template <class V>
dual<V> atanh(const dual<V>& x) {
    return {math::atanh(x.v), x.d / (V(1) - x.v * x.v)};
}
template <class V>
dual<V> erf(const dual<V>& x) {
    const V k(static_cast<base_scalar_t<V>>(2.0 / std::sqrt(std::numbers::pi)));
    return {math::erf(x.v), x.d * k * math::exp(-x.v * x.v)};
}
/// |x|' = sign(x), and 0 at 0 (the subgradient PyTorch and JAX pick).
template <class V>
dual<V> fabs(const dual<V>& x) {
    if (x.v > V(0)) return x;
    if (x.v < V(0)) return -x;
    return {math::fabs(x.v), V(0)};
}
template <class V>
dual<V> abs(const dual<V>& x) {
    return fabs(x);
}
// Piecewise-constant functions: derivative 0 (the proxy mode of the reverse pass substitutes a slope).
#define TENSORACLE_DUAL_STEP(NAME) \
    template <class V>             \
    dual<V> NAME(const dual<V>& x) { return {math::NAME(x.v), V(0)}; }
TENSORACLE_DUAL_STEP(floor)
TENSORACLE_DUAL_STEP(ceil)
TENSORACLE_DUAL_STEP(trunc)
TENSORACLE_DUAL_STEP(round)
TENSORACLE_DUAL_STEP(nearbyint)
#undef TENSORACLE_DUAL_STEP
template <class V>
bool isnan(const dual<V>& x) {
    return math::isnan(x.v);
}
template <class V>
bool isinf(const dual<V>& x) {
    return math::isinf(x.v);
}
template <class V>
bool isfinite(const dual<V>& x) {
    return math::isfinite(x.v);
}
template <class V>
bool signbit(const dual<V>& x) {
    return math::signbit(x.v);
}

/// a^b: the log term only when b carries a derivative, so that a constant
/// exponent at a = 0 gives b·a^(b-1)·a' and not 0·(-inf).
template <class V>
dual<V> pow(const dual<V>& a, const dual<V>& b) {
    const V y = math::pow(a.v, b.v);
    V dy = detail::exactly_zero(a.d) ? V(0) : a.d * b.v * math::pow(a.v, b.v - V(1));
    if (!detail::exactly_zero(b.d)) dy += b.d * y * math::log(a.v);
    return {y, dy};
}
template <class V, class U>
    requires(!is_dual<U>::value && std::is_constructible_v<dual<V>, U>)
dual<V> pow(const dual<V>& a, const U& b) {
    return pow(a, dual<V>(b));
}
template <class V, class U>
    requires(!is_dual<U>::value && std::is_constructible_v<dual<V>, U>)
dual<V> pow(const U& a, const dual<V>& b) {
    return pow(dual<V>(a), b);
}
/// fmod(a, b) = a - trunc(a/b)·b, with trunc(a/b) constant almost everywhere.
/// (a - r)/b is that integer up to rounding, which can fall just below it:
/// rounded to the nearest, not truncated.
template <class V>
dual<V> fmod(const dual<V>& a, const dual<V>& b) {
    const V r = math::fmod(a.v, b.v);
    const V q = math::round((a.v - r) / b.v);
    return {r, a.d - q * b.d};
}
template <class V>
dual<V> atan2(const dual<V>& y, const dual<V>& x) {
    const V r2 = x.v * x.v + y.v * y.v;
    return {math::atan2(y.v, x.v), (x.v * y.d - y.v * x.d) / r2};
}

/// A dual seeded as an independent variable: value x, derivative 1.
template <class V>
[[nodiscard]] constexpr dual<V> make_variable(const V& x) {
    return {x, V(1)};
}

}  // namespace tensoracle::ad

template <class V>
struct tensoracle::ad_scalar_traits<tensoracle::ad::dual<V>> {
    static constexpr bool is_ad = true;
    using base = base_scalar_t<V>;
    static constexpr base primal(const ad::dual<V>& x) { return tensoracle::primal(x.v); }
};

template <class V>
class std::numeric_limits<tensoracle::ad::dual<V>> : public std::numeric_limits<V> {
    using D = tensoracle::ad::dual<V>;
    using L = std::numeric_limits<V>;

public:
    static constexpr D min() noexcept { return D(L::min()); }
    static constexpr D max() noexcept { return D(L::max()); }
    static constexpr D lowest() noexcept { return D(L::lowest()); }
    static constexpr D epsilon() noexcept { return D(L::epsilon()); }
    static constexpr D infinity() noexcept { return D(L::infinity()); }
    static constexpr D quiet_NaN() noexcept { return D(L::quiet_NaN()); }
    static constexpr D denorm_min() noexcept { return D(L::denorm_min()); }
};
