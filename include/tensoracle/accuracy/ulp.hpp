// tensoracle: distance in units in the last place between two floating values.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <optional>

#include "tensoracle/core/dtype.hpp"

namespace tensoracle {

namespace detail {
/// Maps the bit pattern of a floating value onto a signed line on which
/// neighbouring values differ by one and +0 and -0 meet at 0.
template <class T>
constexpr std::int64_t ordered_bits(T v) noexcept {
    std::uint64_t bits = 0;
    int width = 0;
    if constexpr (sizeof(T) == 2) {
        bits = v.bits();
        width = 16;
    } else if constexpr (sizeof(T) == 4) {
        bits = std::bit_cast<std::uint32_t>(v);
        width = 32;
    } else {
        bits = std::bit_cast<std::uint64_t>(v);
        width = 64;
    }
    const std::uint64_t sign_mask = std::uint64_t{1} << (width - 1);
    const auto magnitude = static_cast<std::int64_t>(bits & (sign_mask - 1));
    return (bits & sign_mask) != 0 ? -magnitude : magnitude;
}
}  // namespace detail

/// Number of representable values of T between a and b (0 when equal, +0 and
/// -0 are equal; an infinity is one step beyond the largest finite value).
/// Empty when either is NaN.
template <floating_element T>
[[nodiscard]] constexpr std::optional<std::uint64_t> ulp_distance(T a, T b) noexcept {
    if (a != a || b != b) return std::nullopt;
    const std::int64_t x = detail::ordered_bits(a);
    const std::int64_t y = detail::ordered_bits(b);
    // Unsigned subtraction cannot overflow; the true distance fits in 64 bits.
    return x >= y ? static_cast<std::uint64_t>(x) - static_cast<std::uint64_t>(y)
                  : static_cast<std::uint64_t>(y) - static_cast<std::uint64_t>(x);
}

}  // namespace tensoracle
