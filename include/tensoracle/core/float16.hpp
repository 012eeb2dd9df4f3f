// tensoracle: IEEE binary16 (float16) and bfloat16 value types.
//
// Why our own and not a library: the core headers may depend only on xtensor,
// xtl and Hana. xtl ships half_float, but with F16C enabled it converts double
// through float (two roundings), and it has no bfloat16. The conversions below
// are written straight from the IEEE 754 encoding, round to nearest with ties
// to even, and are tested bit-exactly against Debian's FP16 library and
// Eigen's bfloat16 (tests/core/test_float16.cpp).
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

namespace tensoracle {

namespace detail {

/// Rounds a binary64 value to the binary format with `ExpBits` exponent bits
/// and `ManBits` stored mantissa bits, to nearest, ties to even. NaN stays NaN
/// (quiet, same sign, top payload bits kept); overflow gives infinity. Every
/// input: round_to_narrow below takes the common case first.
template <int ExpBits, int ManBits>
constexpr std::uint16_t round_to_narrow_any(double value) noexcept {
    static_assert(ExpBits + ManBits == 15, "narrow formats here are 16 bits wide");
    constexpr std::uint16_t exp_all_ones = (1u << ExpBits) - 1u;
    constexpr std::uint16_t inf_bits = static_cast<std::uint16_t>(exp_all_ones << ManBits);
    constexpr int bias = (1 << (ExpBits - 1)) - 1;

    const auto b = std::bit_cast<std::uint64_t>(value);
    const auto sign = static_cast<std::uint16_t>((b >> 63) << 15);
    const int exp = static_cast<int>((b >> 52) & 0x7ffu);
    const std::uint64_t man = b & ((std::uint64_t{1} << 52) - 1);

    if (exp == 0x7ff) {
        if (man == 0) return sign | inf_bits;
        return sign | inf_bits | static_cast<std::uint16_t>(1u << (ManBits - 1)) |
               static_cast<std::uint16_t>(man >> (52 - ManBits));
    }
    // Zero, or a binary64 subnormal: far below half the narrow subnormal step.
    if (exp == 0) return sign;

    const int narrow_exp = exp - 1023 + bias;
    if (narrow_exp >= exp_all_ones) return sign | inf_bits;

    const std::uint64_t significand = man | (std::uint64_t{1} << 52);
    int shift = 52 - ManBits;
    std::uint64_t base = 0;
    if (narrow_exp >= 1) {
        // The kept significand carries the implicit bit, which adds one to
        // (narrow_exp - 1): a rounding carry then moves into the exponent.
        base = static_cast<std::uint64_t>(narrow_exp - 1) << ManBits;
    } else {
        shift += 1 - narrow_exp;
        if (shift > 53) return sign;  // below half the smallest subnormal
    }
    std::uint64_t kept = significand >> shift;
    const std::uint64_t rest = significand & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    if (rest > half || (rest == half && (kept & 1u) != 0)) ++kept;
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(base + kept));
}

/// Rounds a binary64 value to the narrow format, to nearest, ties to even, as
/// round_to_narrow_any does. Kernels call it per element: the common case is
/// kept small enough for the compiler to inline into their loops.
template <int ExpBits, int ManBits>
constexpr std::uint16_t round_to_narrow(double value) noexcept {
    constexpr std::uint16_t exp_all_ones = (1u << ExpBits) - 1u;
    constexpr std::uint16_t inf_bits = static_cast<std::uint16_t>(exp_all_ones << ManBits);
    constexpr int bias = (1 << (ExpBits - 1)) - 1;
    const auto b = std::bit_cast<std::uint64_t>(value);
    const auto sign = static_cast<std::uint16_t>((b >> 63) << 15);
    const int exp = static_cast<int>((b >> 52) & 0x7ffu);
    // Results in the narrow normal range (nearly every value a kernel writes):
    // round the exponent-and-mantissa field to nearest even in one addition (a
    // carry out of the mantissa moves into the exponent, up to infinity), then
    // rebias: the bits round_to_narrow_any gives.
    if (const int e = exp - 1023 + bias; e >= 1 && e < static_cast<int>(exp_all_ones)) {
        constexpr int drop = 52 - ManBits;
        const std::uint64_t magnitude = b & ~(std::uint64_t{1} << 63);
        const std::uint64_t rounded =
            (magnitude + ((std::uint64_t{1} << (drop - 1)) - 1) + ((magnitude >> drop) & 1u)) >> drop;
        const std::uint64_t narrow = rounded - (static_cast<std::uint64_t>(1023 - bias) << ManBits);
        return static_cast<std::uint16_t>(sign | (narrow >= inf_bits ? inf_bits : static_cast<std::uint16_t>(narrow)));
    }

    return round_to_narrow_any<ExpBits, ManBits>(value);
}

/// Exact widening of a narrow encoding to binary32.
template <int ExpBits, int ManBits>
constexpr float narrow_to_float(std::uint16_t bits) noexcept {
    constexpr int exp_all_ones = (1 << ExpBits) - 1;
    constexpr int bias = (1 << (ExpBits - 1)) - 1;
    const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 15) << 31;
    const int exp = (bits >> ManBits) & exp_all_ones;
    const std::uint32_t man = bits & ((1u << ManBits) - 1u);
    if (exp == exp_all_ones) {
        return std::bit_cast<float>(sign | 0x7f800000u | (man << (23 - ManBits)));
    }
    if (exp == 0) {
        // man * 2^(1 - bias - ManBits), exact in double, then exact in float. The power
        // of two is built from its bits: a loop of halvings cost 130 steps per bf16 zero.
        constexpr double scale = std::bit_cast<double>(static_cast<std::uint64_t>(1023 - (bias - 1 + ManBits)) << 52);
        const auto f = static_cast<float>(static_cast<double>(man) * scale);
        return sign != 0 ? -f : f;
    }
    return std::bit_cast<float>(sign | (static_cast<std::uint32_t>(exp - bias + 127) << 23) |
                                (man << (23 - ManBits)));
}

/// Integers wider than binary64's 53 bits would round twice on the way through
/// double; folding the dropped bits into a sticky bit keeps one rounding.
template <class Int>
constexpr double integer_to_double_sticky(Int v) noexcept {
    using U = std::make_unsigned_t<Int>;
    const bool negative = std::is_signed_v<Int> && v < 0;
    U magnitude = negative ? static_cast<U>(U{0} - static_cast<U>(v)) : static_cast<U>(v);
    int scale = 0;
    if constexpr (sizeof(U) * 8 > 53) {
        while ((magnitude >> 53) != 0) {
            magnitude = static_cast<U>((magnitude >> 1) | (magnitude & U{1}));
            ++scale;
        }
    }
    double d = static_cast<double>(magnitude);
    for (int i = 0; i < scale; ++i) d *= 2.0;
    return negative ? -d : d;
}

}  // namespace detail

/// A 16-bit floating-point value with `ExpBits` exponent bits. Arithmetic is
/// done in float and rounded back, which is correctly rounded for + - * / and
/// sqrt because float has more than 2p+2 significand bits for both formats.
template <int ExpBits, int ManBits>
class narrow_float {
public:
    static constexpr int exponent_bits = ExpBits;
    static constexpr int mantissa_bits = ManBits;

    constexpr narrow_float() noexcept = default;

    template <class T>
        requires std::is_arithmetic_v<T>
    explicit constexpr narrow_float(T value) noexcept : bits_(encode(value)) {}

    [[nodiscard]] static constexpr narrow_float from_bits(std::uint16_t bits) noexcept {
        narrow_float r;
        r.bits_ = bits;
        return r;
    }
    [[nodiscard]] constexpr std::uint16_t bits() const noexcept { return bits_; }

    // Widening is exact, so it is implicit.
    constexpr operator float() const noexcept {  // NOLINT(google-explicit-constructor)
        return detail::narrow_to_float<ExpBits, ManBits>(bits_);
    }

    friend constexpr narrow_float operator+(narrow_float a, narrow_float b) noexcept {
        return narrow_float(float(a) + float(b));
    }
    friend constexpr narrow_float operator-(narrow_float a, narrow_float b) noexcept {
        return narrow_float(float(a) - float(b));
    }
    friend constexpr narrow_float operator*(narrow_float a, narrow_float b) noexcept {
        return narrow_float(float(a) * float(b));
    }
    friend constexpr narrow_float operator/(narrow_float a, narrow_float b) noexcept {
        return narrow_float(float(a) / float(b));
    }
    friend constexpr narrow_float operator-(narrow_float a) noexcept {
        return from_bits(static_cast<std::uint16_t>(a.bits_ ^ 0x8000u));
    }
    friend constexpr narrow_float operator+(narrow_float a) noexcept { return a; }
    constexpr narrow_float& operator+=(narrow_float o) noexcept { return *this = *this + o; }
    constexpr narrow_float& operator-=(narrow_float o) noexcept { return *this = *this - o; }
    constexpr narrow_float& operator*=(narrow_float o) noexcept { return *this = *this * o; }
    constexpr narrow_float& operator/=(narrow_float o) noexcept { return *this = *this / o; }

    // IEEE comparison (NaN unordered, -0 == +0), done on the widened value.
    friend constexpr bool operator==(narrow_float a, narrow_float b) noexcept {
        return float(a) == float(b);
    }
    friend constexpr bool operator<(narrow_float a, narrow_float b) noexcept { return float(a) < float(b); }
    friend constexpr bool operator>(narrow_float a, narrow_float b) noexcept { return float(a) > float(b); }
    friend constexpr bool operator<=(narrow_float a, narrow_float b) noexcept { return float(a) <= float(b); }
    friend constexpr bool operator>=(narrow_float a, narrow_float b) noexcept { return float(a) >= float(b); }

    friend std::ostream& operator<<(std::ostream& os, narrow_float v) { return os << float(v); }

private:
    template <class T>
    static constexpr std::uint16_t encode(T value) noexcept {
        if constexpr (std::is_same_v<T, bool>) {
            return detail::round_to_narrow<ExpBits, ManBits>(value ? 1.0 : 0.0);
        } else if constexpr (std::is_integral_v<T>) {
            return detail::round_to_narrow<ExpBits, ManBits>(detail::integer_to_double_sticky(value));
        } else {
            // float and double widen exactly; long double is taken through double.
            return detail::round_to_narrow<ExpBits, ManBits>(static_cast<double>(value));
        }
    }

    std::uint16_t bits_ = 0;
};

/// IEEE 754 binary16: 5 exponent bits, 10 stored mantissa bits.
using float16 = narrow_float<5, 10>;
/// bfloat16: the top half of a binary32, 8 exponent bits, 7 stored mantissa bits.
using bfloat16 = narrow_float<8, 7>;

template <int E, int M>
constexpr bool isnan(narrow_float<E, M> v) noexcept {
    return (v.bits() & 0x7fffu) > (((1u << E) - 1u) << M);
}
template <int E, int M>
constexpr bool isinf(narrow_float<E, M> v) noexcept {
    return (v.bits() & 0x7fffu) == (((1u << E) - 1u) << M);
}
template <int E, int M>
constexpr bool isfinite(narrow_float<E, M> v) noexcept {
    return (v.bits() & 0x7fffu) < (((1u << E) - 1u) << M);
}
template <int E, int M>
constexpr bool signbit(narrow_float<E, M> v) noexcept {
    return (v.bits() & 0x8000u) != 0;
}
template <int E, int M>
constexpr narrow_float<E, M> abs(narrow_float<E, M> v) noexcept {
    return narrow_float<E, M>::from_bits(static_cast<std::uint16_t>(v.bits() & 0x7fffu));
}

}  // namespace tensoracle

template <int E, int M>
class std::numeric_limits<tensoracle::narrow_float<E, M>> {
    using T = tensoracle::narrow_float<E, M>;
    static constexpr std::uint16_t exp_field(unsigned e) { return static_cast<std::uint16_t>(e << M); }

public:
    static constexpr bool is_specialized = true;
    static constexpr bool is_signed = true;
    static constexpr bool is_integer = false;
    static constexpr bool is_exact = false;
    static constexpr bool has_infinity = true;
    static constexpr bool has_quiet_NaN = true;
    static constexpr bool has_signaling_NaN = true;
    static constexpr std::float_denorm_style has_denorm = std::denorm_present;
    static constexpr bool has_denorm_loss = false;
    static constexpr std::float_round_style round_style = std::round_to_nearest;
    static constexpr bool is_iec559 = (E == 5);  // binary16 is an IEEE interchange format
    static constexpr bool is_bounded = true;
    static constexpr bool is_modulo = false;
    static constexpr int digits = M + 1;
    static constexpr int digits10 = (M == 10) ? 3 : 2;
    static constexpr int max_digits10 = (M == 10) ? 5 : 4;
    static constexpr int radix = 2;
    static constexpr int min_exponent = 2 - (1 << (E - 1)) + 1;
    static constexpr int min_exponent10 = (E == 5) ? -4 : -37;
    static constexpr int max_exponent = 1 << (E - 1);
    static constexpr int max_exponent10 = (E == 5) ? 4 : 38;
    static constexpr bool traps = false;
    static constexpr bool tinyness_before = false;

    static constexpr T min() noexcept { return T::from_bits(exp_field(1)); }
    static constexpr T lowest() noexcept { return T::from_bits(static_cast<std::uint16_t>(0x8000u | max().bits())); }
    static constexpr T max() noexcept {
        return T::from_bits(static_cast<std::uint16_t>(exp_field((1u << E) - 2u) | ((1u << M) - 1u)));
    }
    static constexpr T epsilon() noexcept {
        return T::from_bits(exp_field(static_cast<unsigned>((1 << (E - 1)) - 1 - M)));
    }
    static constexpr T round_error() noexcept { return T(0.5f); }
    static constexpr T infinity() noexcept { return T::from_bits(exp_field((1u << E) - 1u)); }
    static constexpr T quiet_NaN() noexcept {
        return T::from_bits(static_cast<std::uint16_t>(exp_field((1u << E) - 1u) | (1u << (M - 1))));
    }
    static constexpr T signaling_NaN() noexcept {
        return T::from_bits(static_cast<std::uint16_t>(exp_field((1u << E) - 1u) | 1u));
    }
    static constexpr T denorm_min() noexcept { return T::from_bits(1); }
};
