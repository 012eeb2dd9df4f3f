// tensoracle: element conversion with every case defined (no UB on any input).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/scalar.hpp"

namespace tensoracle {

namespace detail {
/// Exact widening of any floating element to double.
template <floating_element T>
constexpr double widen(T v) noexcept {
    if constexpr (sizeof(T) == 2) {
        return static_cast<double>(static_cast<float>(v));
    } else {
        return static_cast<double>(v);
    }
}
}  // namespace detail

/// Converts one element between dtypes. Floating to floating rounds to nearest,
/// ties to even. Floating to integer truncates toward zero, saturates at the
/// target's range and maps NaN to 0 (C++ leaves these cases undefined; ONNX
/// Cast leaves them unspecified). Integer to integer wraps modulo 2^bits.
/// Anything to bool is `value != 0` (so NaN is true).
template <element_type To, element_type From>
[[nodiscard]] constexpr To value_cast(From v) noexcept {
    using from_traits = dtype_traits<From>;
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (std::is_same_v<To, bool>) {
        if constexpr (from_traits::is_floating) {
            return detail::widen(v) != 0.0;  // NaN != 0, so NaN is true
        } else {
            return v != 0;
        }
    } else if constexpr (dtype_traits<To>::is_floating) {
        if constexpr (std::is_same_v<From, bool>) {
            return To(v ? 1 : 0);
        } else if constexpr (from_traits::is_floating && from_traits::bits == 16) {
            return To(static_cast<float>(v));  // widening is exact; then one rounding
        } else {
            return To(v);
        }
    } else {
        if constexpr (from_traits::is_floating) {
            const double d = detail::widen(v);
            if (std::isnan(d)) return To{0};
            const double t = std::trunc(d);
            constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
            // max()+1 is a power of two, so exact in double even for int64.
            constexpr double hi_excl = static_cast<double>(std::numeric_limits<To>::max() / 2 + 1) * 2.0;
            if (t <= lo) return std::numeric_limits<To>::min();
            if (t >= hi_excl) return std::numeric_limits<To>::max();
            return static_cast<To>(t);
        } else {
            return static_cast<To>(v);
        }
    }
}

/// Conversions involving an AD scalar: to an AD scalar, a plain value becomes
/// a constant (no derivative). From an AD scalar, only the same type, an
/// integer or bool is allowed: a floating target would silently drop the
/// derivative, so kernels say `primal(x)` when they mean it.
template <class To, class From>
    requires(ad_scalar<To> || ad_scalar<From>)
[[nodiscard]] constexpr To value_cast(const From& v) {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (ad_scalar<To> && !ad_scalar<From>) {
        return To(value_cast<base_scalar_t<To>>(v));
    } else {
        static_assert(!ad_scalar<To> && element_type<To> && !floating_element<To>,
                      "tensoracle::value_cast: converting an AD scalar to another floating or AD type would drop "
                      "or mix derivatives; use primal(x) to drop them on purpose");
        return value_cast<To>(primal(v));
    }
}

/// NaN test on any scalar a kernel holds: an AD scalar by its value; integers
/// and bool are never NaN.
template <class T>
[[nodiscard]] constexpr bool is_nan(const T& v) {
    if constexpr (ad_scalar<T>) {
        return std::isnan(primal(v));
    } else if constexpr (floating_element<T>) {
        return std::isnan(value_cast<double>(v));
    } else {
        return false;
    }
}

}  // namespace tensoracle
