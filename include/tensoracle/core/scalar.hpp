// tensoracle: the scalar types a kernel template may run with. Besides the
// ten element types, kernels accept automatic-differentiation scalars (dual
// numbers, reverse-mode variables, nested) so that one kernel yields values,
// JVPs, VJPs and higher derivatives. The AD layer registers its types here
// through ad_scalar_traits; core only knows the customization point.
#pragma once

#include <cmath>
#include <type_traits>

#include "tensoracle/core/dtype.hpp"

namespace tensoracle {

/// Specialized by AD scalar types: `is_ad = true`, `base` is the primitive
/// floating type all arithmetic ends in (float or double), `primal(x)`
/// returns the value without derivative parts as `base`.
template <class T>
struct ad_scalar_traits {
    static constexpr bool is_ad = false;
};

/// A scalar that carries derivatives (dual<V>, rvar<V>, nested).
template <class T>
concept ad_scalar = ad_scalar_traits<std::remove_cv_t<T>>::is_ad;

/// What a floating kernel may be instantiated with: a floating element type
/// or an AD scalar over float/double.
template <class T>
concept real_scalar = floating_element<T> || ad_scalar<T>;

namespace detail {
template <class T>
struct base_scalar {
    using type = T;
};
template <ad_scalar T>
struct base_scalar<T> {
    using type = typename ad_scalar_traits<T>::base;
};
}  // namespace detail

/// The primitive type beneath a scalar: float for dual<float>, T for T.
template <class T>
using base_scalar_t = typename detail::base_scalar<std::remove_cv_t<T>>::type;

/// The value of a scalar without its derivative parts.
template <class T>
[[nodiscard]] constexpr base_scalar_t<T> primal(const T& x) {
    if constexpr (ad_scalar<T>) {
        return ad_scalar_traits<T>::primal(x);
    } else {
        return x;
    }
}

/// Math functions kernels call so that they work for primitives (std::) and
/// AD scalars (found by argument-dependent lookup in their namespace). The
/// block-scope using-declaration hides these wrappers from their own body.
namespace math {
#define TENSORACLE_MATH_UNARY(NAME)          \
    template <class T>                       \
    [[nodiscard]] constexpr auto NAME(const T& x) { \
        using std::NAME;                     \
        return NAME(x);                      \
    }
TENSORACLE_MATH_UNARY(exp)
TENSORACLE_MATH_UNARY(expm1)
TENSORACLE_MATH_UNARY(log)
TENSORACLE_MATH_UNARY(log1p)
TENSORACLE_MATH_UNARY(sqrt)
TENSORACLE_MATH_UNARY(sin)
TENSORACLE_MATH_UNARY(cos)
TENSORACLE_MATH_UNARY(tan)
TENSORACLE_MATH_UNARY(asin)
TENSORACLE_MATH_UNARY(acos)
TENSORACLE_MATH_UNARY(atan)
TENSORACLE_MATH_UNARY(sinh)
TENSORACLE_MATH_UNARY(cosh)
TENSORACLE_MATH_UNARY(tanh)
TENSORACLE_MATH_UNARY(asinh)
TENSORACLE_MATH_UNARY(acosh)
TENSORACLE_MATH_UNARY(atanh)
TENSORACLE_MATH_UNARY(erf)
TENSORACLE_MATH_UNARY(fabs)
TENSORACLE_MATH_UNARY(floor)
TENSORACLE_MATH_UNARY(ceil)
TENSORACLE_MATH_UNARY(trunc)
TENSORACLE_MATH_UNARY(round)
TENSORACLE_MATH_UNARY(nearbyint)
TENSORACLE_MATH_UNARY(isnan)
TENSORACLE_MATH_UNARY(isinf)
TENSORACLE_MATH_UNARY(isfinite)
TENSORACLE_MATH_UNARY(signbit)
#undef TENSORACLE_MATH_UNARY
#define TENSORACLE_MATH_BINARY(NAME)                              \
    template <class A, class B>                                   \
    [[nodiscard]] constexpr auto NAME(const A& a, const B& b) {   \
        using std::NAME;                                          \
        return NAME(a, b);                                        \
    }
TENSORACLE_MATH_BINARY(pow)
TENSORACLE_MATH_BINARY(fmod)
TENSORACLE_MATH_BINARY(atan2)
TENSORACLE_MATH_BINARY(copysign)
#undef TENSORACLE_MATH_BINARY
}  // namespace math

}  // namespace tensoracle
