// GENERATED FILE - DO NOT EDIT.
// Made by scripts/amalgamate from include/tensoracle/core.hpp; edit those headers and rerun it.
// tensoracle: header-only test kit for deep-learning compilers and AD engines.
#pragma once
// ---- begin tensoracle/core.hpp ----
// tensoracle: the core and accuracy layers (tensors, dtypes, float16,
// random data, comparisons, tolerance levels, ULPs, outcomes, scores): what a
// test that only compares tensors needs, cheap to compile (about 1.4x an
// xtensor-only file). <tensoracle/tensoracle.hpp> is the whole kit.
// Test-framework adapters: <tensoracle/doctest.hpp>, <tensoracle/gtest.hpp>.

// ---- begin tensoracle/version.hpp ----
// tensoracle: version of the kit.

#define TENSORACLE_VERSION_MAJOR 0
#define TENSORACLE_VERSION_MINOR 1
#define TENSORACLE_VERSION_PATCH 0

namespace tensoracle {
inline constexpr const char* version_string = "0.1.0";
}
// ---- end tensoracle/version.hpp ----

// ---- begin tensoracle/core/dtype.hpp ----
// tensoracle: element types, at compile time (the C++ scalar type is the tag)
// and at run time (the `dtype` enum), with one table of facts behind both.

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>

// ---- begin tensoracle/core/error.hpp ----
// tensoracle: errors thrown by the kit.

#include <stdexcept>
#include <string>
#include <string_view>

namespace tensoracle {

/// Every error the kit throws on bad input. `where()` names the API call or
/// the graph element at fault; `what()` is the full message "where: reason".
class error : public std::runtime_error {
public:
    error(std::string_view where, std::string_view reason)
        : std::runtime_error(std::string(where) + ": " + std::string(reason)),
          where_(where) {}

    [[nodiscard]] const std::string& where() const noexcept { return where_; }

private:
    std::string where_;
};

/// A runtime dtype that the called function does not handle.
class dtype_error : public error {
public:
    using error::error;
};

/// Shapes that do not fit together (element counts, ranks, broadcasting).
class shape_error : public error {
public:
    using error::error;
};

/// A tensor (or a node's outputs) that would not fit in the memory budget
/// (core/memory.hpp), raised before anything is allocated. A campaign labels a
/// case its reference cannot afford `reference_skipped`, not a backend failure.
class memory_error : public error {
public:
    memory_error(std::string_view where, std::string_view reason, unsigned long long bytes_asked,
                 unsigned long long limit)
        : error(where, reason), bytes_asked_(bytes_asked), limit_(limit) {}

    /// What the allocation asked for, and the budget it did not fit in (bytes).
    [[nodiscard]] unsigned long long bytes_asked() const noexcept { return bytes_asked_; }
    [[nodiscard]] unsigned long long limit() const noexcept { return limit_; }

private:
    unsigned long long bytes_asked_;
    unsigned long long limit_;
};

/// A valid input the kit does not support (an op variant, a dtype, a mode):
/// conformance reports these as skipped rather than failed.
class unsupported_error : public error {
public:
    using error::error;
};

namespace detail {
/// Rethrows e at `where`, its message after `prefix`, keeping its kind (memory,
/// unsupported, dtype, shape): the interpreter names the node, the ONNX reader the tensor.
[[noreturn]] inline void rethrow_with_context(const error& e, std::string_view where, std::string_view prefix) {
    const std::string msg = std::string(prefix) + e.what();
    if (const auto* m = dynamic_cast<const memory_error*>(&e)) throw memory_error(where, msg, m->bytes_asked(), m->limit());
    if (dynamic_cast<const unsupported_error*>(&e) != nullptr) throw unsupported_error(where, msg);
    if (dynamic_cast<const dtype_error*>(&e) != nullptr) throw dtype_error(where, msg);
    if (dynamic_cast<const shape_error*>(&e) != nullptr) throw shape_error(where, msg);
    throw error(where, msg);
}
}  // namespace detail

}  // namespace tensoracle
// ---- end tensoracle/core/error.hpp ----
// ---- begin tensoracle/core/float16.hpp ----
// tensoracle: IEEE binary16 (float16) and bfloat16 value types.
//
// Why our own and not a library: the core headers may depend only on xtensor,
// xtl and Hana. xtl ships half_float, but with F16C enabled it converts double
// through float (two roundings), and it has no bfloat16. The conversions below
// are written straight from the IEEE 754 encoding, round to nearest with ties
// to even, and are tested bit-exactly against Debian's FP16 library and
// Eigen's bfloat16 (tests/core/test_float16.cpp).

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
// ---- end tensoracle/core/float16.hpp ----

namespace tensoracle {

namespace hana = boost::hana;

/// Runtime element type of a tensor. The order is stable and is the index of
/// the dtype table; `boolean` avoids clashing with the keyword.
enum class dtype : std::uint8_t { f16, bf16, f32, f64, i8, i16, i32, i64, u8, boolean };

inline constexpr std::size_t dtype_count = 10;

/// Facts about one element type. `onnx_type` is the TensorProto.DataType
/// number; `mantissa_bits` counts stored fraction bits (0 for integers);
/// `epsilon` is the distance from 1 to the next value (0 for integers).
struct dtype_info {
    dtype id;
    std::string_view short_name;  // "f32"
    std::string_view name;        // "float32"
    std::string_view onnx_name;   // "FLOAT"
    int onnx_type;
    int bits;
    int exponent_bits;
    int mantissa_bits;
    bool is_floating;
    bool is_integer;
    bool is_signed;
    double epsilon;

    friend constexpr bool operator==(const dtype_info&, const dtype_info&) = default;
};

namespace detail {
inline constexpr std::array<dtype_info, dtype_count> dtype_table{{
    {dtype::f16, "f16", "float16", "FLOAT16", 10, 16, 5, 10, true, false, true, 0x1p-10},
    {dtype::bf16, "bf16", "bfloat16", "BFLOAT16", 16, 16, 8, 7, true, false, true, 0x1p-7},
    {dtype::f32, "f32", "float32", "FLOAT", 1, 32, 8, 23, true, false, true, 0x1p-23},
    {dtype::f64, "f64", "float64", "DOUBLE", 11, 64, 11, 52, true, false, true, 0x1p-52},
    {dtype::i8, "i8", "int8", "INT8", 3, 8, 0, 0, false, true, true, 0.0},
    {dtype::i16, "i16", "int16", "INT16", 5, 16, 0, 0, false, true, true, 0.0},
    {dtype::i32, "i32", "int32", "INT32", 6, 32, 0, 0, false, true, true, 0.0},
    {dtype::i64, "i64", "int64", "INT64", 7, 64, 0, 0, false, true, true, 0.0},
    {dtype::u8, "u8", "uint8", "UINT8", 2, 8, 0, 0, false, true, false, 0.0},
    {dtype::boolean, "bool", "bool", "BOOL", 9, 8, 0, 0, false, false, false, 0.0},
}};

template <class T>
struct dtype_id_of {
    static constexpr bool known = false;
};
#define TENSORACLE_DETAIL_DTYPE(T, D)                 \
    template <>                                       \
    struct dtype_id_of<T> {                           \
        static constexpr bool known = true;           \
        static constexpr dtype id = dtype::D;         \
    }
TENSORACLE_DETAIL_DTYPE(float16, f16);
TENSORACLE_DETAIL_DTYPE(bfloat16, bf16);
TENSORACLE_DETAIL_DTYPE(float, f32);
TENSORACLE_DETAIL_DTYPE(double, f64);
TENSORACLE_DETAIL_DTYPE(std::int8_t, i8);
TENSORACLE_DETAIL_DTYPE(std::int16_t, i16);
TENSORACLE_DETAIL_DTYPE(std::int32_t, i32);
TENSORACLE_DETAIL_DTYPE(std::int64_t, i64);
TENSORACLE_DETAIL_DTYPE(std::uint8_t, u8);
TENSORACLE_DETAIL_DTYPE(bool, boolean);
#undef TENSORACLE_DETAIL_DTYPE
}  // namespace detail

/// True for the ten C++ scalar types that stand for a dtype.
template <class T>
concept element_type = detail::dtype_id_of<std::remove_cv_t<T>>::known;

template <class T>
concept floating_element = element_type<T> && detail::dtype_table[static_cast<std::size_t>(
                                                  detail::dtype_id_of<std::remove_cv_t<T>>::id)]
                                                  .is_floating;

/// Runtime facts of a dtype.
[[nodiscard]] constexpr const dtype_info& info(dtype d) {
    const auto i = static_cast<std::size_t>(d);
    if (i >= dtype_count) throw dtype_error("tensoracle::info(dtype)", "not a valid dtype value " + std::to_string(i));
    return detail::dtype_table[i];
}

/// Compile-time traits of an element type: the same facts as `info(dtype)`.
template <class T>
struct dtype_traits {
    static_assert(element_type<T>,
                  "tensoracle::dtype_traits<T>: T is not an element type; use float16, bfloat16, float, double, "
                  "int8_t, int16_t, int32_t, int64_t, uint8_t or bool");
};
template <element_type T>
struct dtype_traits<T> {
    using value_type = T;
    static constexpr dtype id = detail::dtype_id_of<std::remove_cv_t<T>>::id;
    // A copy of the table's row, not a reference to it: nvcc's front end rejects a
    // constexpr reference member of a class template (the CUDA kernels include this).
    static constexpr dtype_info facts = detail::dtype_table[static_cast<std::size_t>(id)];
    static constexpr std::string_view short_name = facts.short_name;
    static constexpr std::string_view name = facts.name;
    static constexpr int onnx_type = facts.onnx_type;
    static constexpr int bits = facts.bits;
    static constexpr int exponent_bits = facts.exponent_bits;
    static constexpr int mantissa_bits = facts.mantissa_bits;
    static constexpr bool is_floating = facts.is_floating;
    static constexpr bool is_integer = facts.is_integer;
    static constexpr bool is_signed = facts.is_signed;
    static constexpr bool is_bool = (id == dtype::boolean);
    static constexpr double epsilon = facts.epsilon;
};

template <class T>
inline constexpr dtype dtype_of = dtype_traits<T>::id;

/// The C++ scalar type of a runtime dtype known at compile time.
template <dtype D>
using scalar_of = std::tuple_element_t<static_cast<std::size_t>(D),
                                       std::tuple<float16, bfloat16, float, double, std::int8_t, std::int16_t,
                                                  std::int32_t, std::int64_t, std::uint8_t, bool>>;

/// Hana lists of element types (as hana::type), to iterate in tests and specs.
inline constexpr auto all_dtypes = hana::tuple_t<float16, bfloat16, float, double, std::int8_t, std::int16_t,
                                                 std::int32_t, std::int64_t, std::uint8_t, bool>;
inline constexpr auto floating_dtypes = hana::tuple_t<float16, bfloat16, float, double>;
inline constexpr auto integer_dtypes = hana::tuple_t<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t>;

[[nodiscard]] constexpr std::string_view name(dtype d) { return info(d).short_name; }

/// Accepts the short name ("f32"), the long name ("float32") or the ONNX name ("FLOAT").
[[nodiscard]] inline dtype dtype_from_name(std::string_view text) {
    for (const auto& row : detail::dtype_table) {
        if (text == row.short_name || text == row.name || text == row.onnx_name) return row.id;
    }
    throw dtype_error("tensoracle::dtype_from_name",
                      "unknown dtype name '" + std::string(text) +
                          "'; expected one of f16 bf16 f32 f64 i8 i16 i32 i64 u8 bool (or float32, FLOAT, ...)");
}

[[nodiscard]] constexpr int onnx_type(dtype d) { return info(d).onnx_type; }

/// Maps a TensorProto.DataType number to a dtype; the ONNX types the kit has no
/// kernels for (strings, complex, uint16..uint64, float8) are an error.
[[nodiscard]] inline dtype dtype_from_onnx(int onnx_elem_type) {
    for (const auto& row : detail::dtype_table) {
        if (row.onnx_type == onnx_elem_type) return row.id;
    }
    throw dtype_error("tensoracle::dtype_from_onnx",
                      "ONNX element type " + std::to_string(onnx_elem_type) + " is not supported by tensoracle");
}

/// Calls `f(hana::type_c<T>)` with the scalar type of `d`: the bridge from a
/// runtime dtype to typed code. All branches must return the same type.
template <class F>
decltype(auto) visit(dtype d, F&& f) {
    switch (d) {
        case dtype::f16: return std::forward<F>(f)(hana::type_c<float16>);
        case dtype::bf16: return std::forward<F>(f)(hana::type_c<bfloat16>);
        case dtype::f32: return std::forward<F>(f)(hana::type_c<float>);
        case dtype::f64: return std::forward<F>(f)(hana::type_c<double>);
        case dtype::i8: return std::forward<F>(f)(hana::type_c<std::int8_t>);
        case dtype::i16: return std::forward<F>(f)(hana::type_c<std::int16_t>);
        case dtype::i32: return std::forward<F>(f)(hana::type_c<std::int32_t>);
        case dtype::i64: return std::forward<F>(f)(hana::type_c<std::int64_t>);
        case dtype::u8: return std::forward<F>(f)(hana::type_c<std::uint8_t>);
        case dtype::boolean: return std::forward<F>(f)(hana::type_c<bool>);
    }
    throw dtype_error("tensoracle::visit(dtype)",
                      "not a valid dtype value " + std::to_string(static_cast<unsigned>(d)));
}

inline std::ostream& operator<<(std::ostream& os, dtype d) { return os << name(d); }

}  // namespace tensoracle
// ---- end tensoracle/core/dtype.hpp ----
// ---- begin tensoracle/core/memory.hpp ----
// tensoracle: the memory budget. Every tensor the kit allocates, and every node's
// outputs before its kernel runs, are checked against one process-wide budget, so a
// model asking for a huge tensor ends in a memory_error naming what asked and how
// much, before anything is allocated, not in a bare std::bad_alloc or a machine
// paged into the ground (a size that fits in virtual memory but not in RAM).

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>

#if __has_include(<unistd.h>)
#include <unistd.h>
#endif


namespace tensoracle {

/// "4.0 GiB", "512 B": a byte count for messages.
[[nodiscard]] inline std::string memory_size_text(std::uint64_t bytes) {
    static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    if (u == 0) {
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    } else {
        std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    }
    return buf;
}

/// The memory this process may use: physical memory, or the cgroup's limit where
/// that is smaller (a container, a Slurm job with cgroup confinement). 0 if unknown.
[[nodiscard]] inline std::uint64_t physical_memory_bytes() {
    std::uint64_t total = 0;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) total = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
#endif
    // cgroup v2, then v1; "max" or an absurd v1 value means no limit of its own.
    for (const char* file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        std::ifstream in(file);
        unsigned long long limit = 0;
        if (in >> limit && limit > 0 && (total == 0 || limit < total)) total = limit;
    }
    return total;
}

/// Parses a memory size: bytes ("1048576"), with a binary unit ("512K", "64M", "1.5G",
/// "2T", an optional "iB"/"B" after it) or a percentage of physical_memory_bytes()
/// ("50%"). Throws tensoracle::error naming `where` for anything else.
[[nodiscard]] inline std::uint64_t parse_memory_size(std::string_view text, std::string_view where = "tensoracle::parse_memory_size") {
    const std::string s(text);
    auto bad = [&](const std::string& why) {
        return error(where, "memory size '" + s + "' " + why + " (give bytes, a size such as 512M or 8G, or a percentage of physical memory such as 50%)");
    };
    std::size_t used = 0;
    double v = 0.0;
    try {
        v = std::stod(s, &used);
    } catch (const std::exception&) {
        throw bad("is not a number");
    }
    if (!std::isfinite(v) || v <= 0.0) throw bad("must be positive");
    std::string unit = s.substr(used);
    double scale = 1.0;
    if (unit == "%") {
        const std::uint64_t phys = physical_memory_bytes();
        if (phys == 0) throw bad("is a percentage, but this machine's physical memory is unknown");
        if (v > 100.0) throw bad("is over 100%");
        scale = static_cast<double>(phys) / 100.0;
    } else {
        if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "iB") unit.resize(unit.size() - 2);
        else if (unit.size() >= 2 && unit.back() == 'B') unit.pop_back();
        if (unit.empty() || unit == "B") scale = 1.0;
        else if (unit == "K" || unit == "k") scale = 1024.0;
        else if (unit == "M") scale = 1024.0 * 1024.0;
        else if (unit == "G") scale = 1024.0 * 1024.0 * 1024.0;
        else if (unit == "T") scale = 1024.0 * 1024.0 * 1024.0 * 1024.0;
        else throw bad("has an unknown unit '" + std::string(s.substr(used)) + "'");
    }
    const double bytes = v * scale;
    if (bytes < 1.0) throw bad("is under one byte");
    if (bytes >= 18446744073709551615.0) throw bad("is too large");
    return static_cast<std::uint64_t>(bytes);
}

namespace detail {
inline constexpr std::uint64_t no_memory_limit = std::numeric_limits<std::uint64_t>::max();
/// 0 until set_memory_limit: then default_memory_limit() applies.
inline std::atomic<std::uint64_t> memory_limit_set{0};
inline std::atomic<std::uint64_t> memory_in_use_bytes{0};
}  // namespace detail

/// The budget a process starts with: $TENSORACLE_MEMORY_LIMIT where set (as
/// parse_memory_size reads it; the command line sets it for the workers it starts),
/// else half of physical_memory_bytes() (the rest is for the systems under test, the
/// kernels' work arrays and the OS), else no limit.
[[nodiscard]] inline std::uint64_t default_memory_limit() {
    static const std::uint64_t limit = [] {
        if (const char* env = std::getenv("TENSORACLE_MEMORY_LIMIT"); env != nullptr && *env != '\0') {
            return parse_memory_size(env, "$TENSORACLE_MEMORY_LIMIT");
        }
        const std::uint64_t phys = physical_memory_bytes();
        return phys == 0 ? detail::no_memory_limit : phys / 2;
    }();
    return limit;
}

/// The budget now, in bytes.
[[nodiscard]] inline std::uint64_t memory_limit() {
    const std::uint64_t set = detail::memory_limit_set.load(std::memory_order_relaxed);
    return set != 0 ? set : default_memory_limit();
}

/// Sets the budget of this process (bytes; 0: back to default_memory_limit()).
inline void set_memory_limit(std::uint64_t bytes) { detail::memory_limit_set.store(bytes, std::memory_order_relaxed); }

/// Bytes held by the kit's tensors in this process now.
[[nodiscard]] inline std::uint64_t memory_in_use() { return detail::memory_in_use_bytes.load(std::memory_order_relaxed); }

/// A budget for the lifetime of the object (a test, a sandboxed evaluation); the
/// previous one comes back at its end.
class scoped_memory_limit {
public:
    explicit scoped_memory_limit(std::uint64_t bytes) : previous_(detail::memory_limit_set.load()) { set_memory_limit(bytes); }
    scoped_memory_limit(const scoped_memory_limit&) = delete;
    scoped_memory_limit& operator=(const scoped_memory_limit&) = delete;
    ~scoped_memory_limit() { detail::memory_limit_set.store(previous_); }

private:
    std::uint64_t previous_;
};

namespace detail {
[[nodiscard]] inline memory_error over_budget(std::string_view where, std::string_view what, std::uint64_t bytes,
                                             std::uint64_t in_use, std::uint64_t limit) {
    return memory_error(where,
                        std::string(what) + " needs " + memory_size_text(bytes) + " (" + std::to_string(bytes) +
                            " bytes), over the memory budget of " + memory_size_text(limit) + " (" +
                            memory_size_text(in_use) + " of it in use); the budget is set with --memory-limit, "
                            "$TENSORACLE_MEMORY_LIMIT or tensoracle::set_memory_limit",
                        bytes, limit);
}

/// Counts `bytes` as in use, or throws memory_error (nothing counted) where they do
/// not fit in the budget beside what is in use. `what()` names them; it is called only
/// for the message (this runs for every tensor the kit allocates).
template <class What>
inline void reserve_memory(std::uint64_t bytes, std::string_view where, const What& what) {
    const std::uint64_t limit = memory_limit();
    const std::uint64_t before = memory_in_use_bytes.fetch_add(bytes, std::memory_order_relaxed);
    if (bytes > limit || before > limit - bytes) {
        memory_in_use_bytes.fetch_sub(bytes, std::memory_order_relaxed);
        throw over_budget(where, what(), bytes, before, limit);
    }
}
inline void release_memory(std::uint64_t bytes) noexcept { memory_in_use_bytes.fetch_sub(bytes, std::memory_order_relaxed); }
}  // namespace detail

/// Whether `bytes` more fit in the budget beside what is in use now.
[[nodiscard]] inline bool memory_fits(std::uint64_t bytes) {
    const std::uint64_t limit = memory_limit(), in_use = memory_in_use();
    return bytes <= limit && in_use <= limit - bytes;
}

/// Throws memory_error where `bytes` more would not fit in the budget beside what is
/// in use; counts nothing. For a size known before the work that allocates it (a
/// node's outputs from shape inference, a file's declared length).
inline void check_memory(std::uint64_t bytes, std::string_view where, std::string_view what) {
    if (!memory_fits(bytes)) throw detail::over_budget(where, what, bytes, memory_in_use(), memory_limit());
}

}  // namespace tensoracle
// ---- end tensoracle/core/memory.hpp ----
// ---- begin tensoracle/core/rng.hpp ----
// tensoracle: a seeded random number generator whose every value is the same
// on every platform and compiler.
//
// std::mt19937 is portable but std:: distributions are not (each standard
// library transforms differently), and libm's log/sin/cos may differ by an ulp
// between C libraries. So: xoshiro256** (Blackman & Vigna) seeded through
// splitmix64, and our own transforms built only from IEEE-exact operations
// (+ - * / sqrt and explicit std::fma, never a bare a*b+c that a compiler
// might fuse differently on another target).

#include <array>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

// ---- begin tensoracle/core/tensor.hpp ----
// tensoracle: typed tensors (xtensor containers) and a type-erased tensor
// (dtype + shape + data) for graphs, I/O and runtime-dtype comparison.

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>

// ---- begin tensoracle/core/value_cast.hpp ----
// tensoracle: element conversion with every case defined (no UB on any input).

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

// ---- begin tensoracle/core/scalar.hpp ----
// tensoracle: the scalar types a kernel template may run with. Besides the
// ten element types, kernels accept automatic-differentiation scalars (dual
// numbers, reverse-mode variables, nested) so that one kernel yields values,
// JVPs, VJPs and higher derivatives. The AD layer registers its types here
// through ad_scalar_traits; core only knows the customization point.

#include <cmath>
#include <type_traits>


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
// ---- end tensoracle/core/scalar.hpp ----

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
// ---- end tensoracle/core/value_cast.hpp ----

namespace tensoracle {

/// The typed container of the kit: a dynamic-rank, row-major xtensor array
/// of an element type, or of an AD scalar (what kernels run on for derivatives).
template <class T>
    requires(element_type<T> || ad_scalar<T>)
using array = xt::xarray<T, xt::layout_type::row_major>;

/// Dimensions of a tensor, outermost first. Rank 0 is a scalar.
using shape_type = std::vector<std::size_t>;

/// Number of elements of a shape; throws shape_error where the product does
/// not fit in size_t (a hostile or corrupt shape must not wrap around).
[[nodiscard]] inline std::size_t element_count(std::span<const std::size_t> dims,
                                               std::string_view where = "tensoracle::element_count") {
    std::size_t n = 1;
    for (const std::size_t d : dims) {
        if (d != 0 && n > std::numeric_limits<std::size_t>::max() / d) {
            throw shape_error(where, "the element count of the shape overflows size_t");
        }
        n *= d;
    }
    return n;
}

[[nodiscard]] inline std::string to_string(std::span<const std::size_t> dims) {
    std::string s = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (i != 0) s += ", ";
        s += std::to_string(dims[i]);
    }
    return s + "]";
}

/// Row-major multi-index of a flat position.
[[nodiscard]] inline shape_type unravel_index(std::size_t flat, std::span<const std::size_t> dims) {
    shape_type idx(dims.size(), 0);
    for (std::size_t i = dims.size(); i-- > 0;) {
        if (dims[i] == 0) break;
        idx[i] = flat % dims[i];
        flat /= dims[i];
    }
    return idx;
}

namespace detail {
/// A tensor's storage deleter: gives the bytes back to the memory budget with the
/// storage. (Outside the class: a nested class's member initializers are not yet
/// seen where unique_ptr asks whether it is default-constructible.)
struct free_tensor_storage {
    std::size_t bytes = 0;
    void operator()(void* p) const noexcept {
        ::operator delete(p);
        release_memory(bytes);
    }
};
}  // namespace detail

/// A tensor whose dtype is known at run time: dtype, shape and a buffer of
/// elements. Typed access (`values<T>()`, `as_array<T>()`) checks the dtype and
/// throws dtype_error naming both; `to<T>()` converts with value_cast.
///
/// Why not a std::variant of ten xt::xarray types: that instantiates ten
/// container classes in every translation unit that includes the kit (that
/// doubles the umbrella header's compile time, benchmarks/compile_time.py).
class tensor {
public:
    /// An empty float32 tensor of shape [0].
    tensor() = default;

    template <element_type T>
    explicit tensor(const array<T>& values) : tensor(dtype_of<T>, shape_type(values.shape().begin(), values.shape().end())) {
        if (size_ != 0) std::memcpy(data_.get(), values.data(), size_ * sizeof(T));
    }

    /// Evaluates any xtensor expression of an element type into a tensor.
    template <class E>
        requires element_type<typename E::value_type>
    [[nodiscard]] static tensor from(const xt::xexpression<E>& e) {
        return tensor(array<typename E::value_type>(e.derived_cast()));
    }

    /// A zero-filled tensor (all-zero bits are 0 / false in every dtype).
    [[nodiscard]] static tensor zeros(dtype d, const shape_type& dims) {
        tensor t(d, dims, "tensoracle::tensor::zeros");
        if (t.nbytes() != 0) std::memset(t.data_.get(), 0, t.nbytes());
        return t;
    }

    /// A tensor whose elements are left unset, for a kernel that writes every
    /// one of them (zeros() would touch the memory twice).
    [[nodiscard]] static tensor for_overwrite(dtype d, const shape_type& dims) {
        return tensor(d, dims, "tensoracle::tensor::for_overwrite");
    }

    /// Builds a tensor from the row-major bytes of its elements in this
    /// machine's byte order (one byte per bool, any nonzero byte is true).
    [[nodiscard]] static tensor from_bytes(dtype d, const shape_type& dims, std::span<const std::byte> bytes) {
        // Compared before allocating: a corrupt file declaring [10^6, 10^6] with 16
        // bytes of data is this error, not a 4 TB allocation.
        const std::size_t needed = byte_size(d, dims, "tensoracle::tensor::from_bytes");
        if (bytes.size() != needed) {
            throw error("tensoracle::tensor::from_bytes",
                        "got " + std::to_string(bytes.size()) + " bytes for " + std::string(name(d)) + " " +
                            to_string(dims) + ", which needs " + std::to_string(needed) + " bytes");
        }
        tensor t(d, dims, "tensoracle::tensor::from_bytes");
        if (d == dtype::boolean) {
            auto out = t.values<bool>();
            for (std::size_t i = 0; i < out.size(); ++i) out[i] = bytes[i] != std::byte{0};
        } else if (t.nbytes() != 0) {
            std::memcpy(t.data_.get(), bytes.data(), t.nbytes());
        }
        return t;
    }

    tensor(const tensor& other) : tensor(other.dtype_, other.shape_) {
        if (nbytes() != 0) std::memcpy(data_.get(), other.data_.get(), nbytes());
    }
    tensor& operator=(const tensor& other) {
        if (this != &other) *this = tensor(other);
        return *this;
    }
    tensor(tensor&&) noexcept = default;
    tensor& operator=(tensor&&) noexcept = default;
    ~tensor() = default;

    /// Calls `f(std::span<const T>)` with the elements in their own type.
    template <class F>
    decltype(auto) visit(F&& f) const {
        return tensoracle::visit(dtype_, [&](auto t) -> decltype(auto) {
            using T = typename decltype(t)::type;
            return std::forward<F>(f)(std::span<const T>(static_cast<const T*>(data_.get()), size_));
        });
    }
    /// Calls `f(std::span<T>)` with the elements in their own type.
    template <class F>
    decltype(auto) visit(F&& f) {
        return tensoracle::visit(dtype_, [&](auto t) -> decltype(auto) {
            using T = typename decltype(t)::type;
            return std::forward<F>(f)(std::span<T>(static_cast<T*>(data_.get()), size_));
        });
    }

    [[nodiscard]] dtype element_dtype() const noexcept { return dtype_; }
    [[nodiscard]] const shape_type& shape() const noexcept { return shape_; }
    [[nodiscard]] std::size_t rank() const noexcept { return shape_.size(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::size_t nbytes() const noexcept { return size_ * element_size(dtype_); }

    /// The elements, row-major; T must be the held dtype.
    template <element_type T>
    [[nodiscard]] std::span<const T> values() const {
        check_holds<T>("tensoracle::tensor::values");
        return {static_cast<const T*>(data_.get()), size_};
    }
    template <element_type T>
    [[nodiscard]] std::span<T> values() {
        check_holds<T>("tensoracle::tensor::values");
        return {static_cast<T*>(data_.get()), size_};
    }

    /// A typed copy; T must be the held dtype.
    template <element_type T>
    [[nodiscard]] array<T> as_array() const {
        const auto v = values<T>();
        auto out = array<T>::from_shape(shape_);
        std::copy(v.begin(), v.end(), out.data());
        return out;
    }

    /// A converted copy with value_cast semantics, whatever the held dtype.
    template <element_type T>
    [[nodiscard]] array<T> to() const {
        auto out = array<T>::from_shape(shape_);
        visit([&](auto src) {
            for (std::size_t i = 0; i < src.size(); ++i) out.data()[i] = value_cast<T>(src[i]);
        });
        return out;
    }

    /// A converted tensor of dtype d (value_cast semantics). A template only so
    /// that its 100 conversion loops are compiled where it is used, not in
    /// every file that includes the kit.
    template <std::same_as<dtype> D>
    [[nodiscard]] tensor cast(D d) const {
        tensor out(d, shape_);
        visit([&](auto src) { out.assign_converted(src.data()); });
        return out;
    }

    /// The elements of a, converted to dtype d (value_cast semantics): what
    /// tensor(a).cast(d) gives, with one conversion loop per target dtype
    /// instead of one per pair of dtypes.
    template <element_type T>
    [[nodiscard]] static tensor from_array_as(const array<T>& a, dtype d) {
        tensor out(d, shape_type(a.shape().begin(), a.shape().end()), "tensoracle::tensor::from_array_as");
        out.assign_converted(a.data());
        return out;
    }

    /// Element `flat` (row-major) widened to double, for reports and printing.
    [[nodiscard]] double value_as_double(std::size_t flat) const {
        if (flat >= size_) {
            throw error("tensoracle::tensor::value_as_double",
                        "index " + std::to_string(flat) + " is out of range for " + std::to_string(size_) +
                            " elements");
        }
        return visit([flat](auto v) { return value_cast<double>(v[flat]); });
    }

    /// Row-major bytes of the elements in this machine's byte order.
    [[nodiscard]] std::vector<std::byte> to_bytes() const {
        std::vector<std::byte> out(nbytes());
        if (!out.empty()) std::memcpy(out.data(), data_.get(), out.size());
        return out;
    }

    /// Same dtype, same shape, and bitwise-equal elements (NaN payloads too).
    [[nodiscard]] bool identical(const tensor& other) const {
        return dtype_ == other.dtype_ && shape_ == other.shape_ &&
               (nbytes() == 0 || std::memcmp(data_.get(), other.data_.get(), nbytes()) == 0);
    }

    friend std::ostream& operator<<(std::ostream& os, const tensor& t) {
        return os << name(t.dtype_) << to_string(t.shape_);
    }

private:
    using free_storage = detail::free_tensor_storage;

    static constexpr std::size_t element_size(dtype d) { return d == dtype::boolean ? sizeof(bool) : static_cast<std::size_t>(info(d).bits / 8); }

    static std::size_t byte_size(dtype d, std::span<const std::size_t> dims, std::string_view where) {
        const std::size_t n = element_count(dims, where), width = element_size(d);
        if (n > std::numeric_limits<std::size_t>::max() / width) {
            throw shape_error(where, "the byte size of the shape overflows size_t");
        }
        return n * width;
    }

    // Storage from operator new implicitly creates the (trivial) elements.
    tensor(dtype d, shape_type dims, std::string_view where = "tensoracle::tensor")
        : dtype_(d), shape_(std::move(dims)), size_(element_count(shape_, where)) {
        const std::size_t bytes = byte_size(d, shape_, where);
        if (bytes == 0) return;
        // Checked against the budget (core/memory.hpp) before allocating: a hostile
        // shape gets a memory_error naming it, not a bad_alloc or a paging machine.
        const auto what = [&] { return std::string(name(d)) + to_string(shape_); };
        detail::reserve_memory(bytes, where, what);
        void* p = nullptr;
        try {
            p = ::operator new(bytes);
        } catch (const std::bad_alloc&) {
            detail::release_memory(bytes);
            throw memory_error(where, what() + " needs " + memory_size_text(bytes) + " (" + std::to_string(bytes) +
                                          " bytes), within the memory budget, but the system refused to allocate it",
                               bytes, memory_limit());
        }
        data_ = std::unique_ptr<void, free_storage>(p, free_storage{bytes});
    }

    // This tensor's elements from src (as many), each value_cast to its dtype:
    // the one conversion loop of cast and from_array_as.
    template <class T>
    void assign_converted(const T* src) {
        visit([&](auto dst) {
            using To = typename decltype(dst)::value_type;
            for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = value_cast<To>(src[i]);
        });
    }

    template <class T>
    void check_holds(std::string_view where) const {
        if (dtype_ != dtype_of<T>) {
            throw dtype_error(where, "asked for " + std::string(dtype_traits<T>::short_name) +
                                         " but the tensor holds " + std::string(name(dtype_)));
        }
    }

    dtype dtype_ = dtype::f32;
    shape_type shape_{0};
    std::size_t size_ = 0;
    std::unique_ptr<void, free_storage> data_;
};

}  // namespace tensoracle
// ---- end tensoracle/core/tensor.hpp ----

namespace tensoracle {

static_assert(std::numeric_limits<double>::is_iec559,
              "tensoracle::rng needs IEEE 754 binary64 doubles for platform-independent values");

namespace detail {

/// Natural log for normal positive doubles from exact operations only, so its
/// result is bit-identical everywhere (accurate to about 1 ulp; used for
/// sampling, not as a math library).
[[nodiscard]] inline double portable_log(double x) noexcept {
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); exact bit manipulation.
    auto bits = std::bit_cast<std::uint64_t>(x);
    int e = static_cast<int>((bits >> 52) & 0x7ffu) - 1023;
    bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    double m = std::bit_cast<double>(bits);
    if (m > 0x1.6a09e667f3bcdp+0) {  // sqrt(2)
        m *= 0.5;
        ++e;
    }
    // log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.1716: an odd series in s.
    const double s = (m - 1.0) / (m + 1.0);
    const double z = s * s;
    double p = 1.0 / 25.0;
    for (int k = 11; k >= 1; --k) p = std::fma(p, z, 1.0 / (2.0 * k + 1.0));
    const double two_s = 2.0 * s;
    const double log_m = std::fma(two_s * z, p, two_s);
    constexpr double ln2_hi = 0x1.62e42fefa3800p-1;  // trailing zeros: e*ln2_hi is exact
    constexpr double ln2_lo = 0x1.ef35793c76730p-45;
    const double de = static_cast<double>(e);
    return std::fma(de, ln2_hi, std::fma(de, ln2_lo, log_m));
}

[[nodiscard]] constexpr std::uint64_t splitmix64_next(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// The 128-bit product of two 64-bit words as (high, low), portably.
[[nodiscard]] constexpr std::pair<std::uint64_t, std::uint64_t> multiply_wide_portable(std::uint64_t a,
                                                                                      std::uint64_t b) noexcept {
    const std::uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32;
    const std::uint64_t b_lo = b & 0xffffffffu, b_hi = b >> 32;
    const std::uint64_t lo_lo = a_lo * b_lo;
    const std::uint64_t hi_lo = a_hi * b_lo;
    const std::uint64_t lo_hi = a_lo * b_hi;
    const std::uint64_t hi_hi = a_hi * b_hi;
    const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
    return {hi_hi + (hi_lo >> 32) + (cross >> 32), (cross << 32) | (lo_lo & 0xffffffffu)};
}

/// The same product in one instruction where the compiler has a 128-bit type
/// (integer draws run it per element).
[[nodiscard]] constexpr std::pair<std::uint64_t, std::uint64_t> multiply_wide(std::uint64_t a,
                                                                             std::uint64_t b) noexcept {
#ifdef __SIZEOF_INT128__
    __extension__ const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
    return {static_cast<std::uint64_t>(p >> 64), static_cast<std::uint64_t>(p)};
#else
    return multiply_wide_portable(a, b);
#endif
}

}  // namespace detail

/// Reproducible random numbers for tests: same seed, same sequence, on every
/// platform. It models UniformRandomBitGenerator, but std:: distributions fed
/// from it are not portable; use the member functions instead.
class rng {
public:
    using result_type = std::uint64_t;

    explicit rng(std::uint64_t seed) noexcept {
        std::uint64_t sm = seed;
        for (auto& word : state_) word = detail::splitmix64_next(sm);
    }

    /// A generator resumed from a saved state() (not all zero).
    [[nodiscard]] static rng from_state(const std::array<std::uint64_t, 4>& state) {
        if (state == std::array<std::uint64_t, 4>{}) {
            throw error("tensoracle::rng::from_state", "the all-zero state is not a valid xoshiro256** state");
        }
        rng r(0);
        r.state_ = state;
        return r;
    }
    [[nodiscard]] const std::array<std::uint64_t, 4>& state() const noexcept { return state_; }

    static constexpr result_type min() noexcept { return 0; }
    static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }

    /// Next raw 64 bits (xoshiro256**).
    result_type operator()() noexcept {
        const std::uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
        const std::uint64_t t = state_[1] << 17;
        state_[2] ^= state_[0];
        state_[3] ^= state_[1];
        state_[1] ^= state_[2];
        state_[0] ^= state_[3];
        state_[2] ^= t;
        state_[3] = std::rotl(state_[3], 45);
        return result;
    }

    /// Uniform in [0, 1) with 53 random bits.
    double uniform() noexcept { return static_cast<double>((*this)() >> 11) * 0x1p-53; }

    /// Uniform in [lo, hi); throws when the interval is empty or not finite.
    double uniform(double lo, double hi) {
        check_uniform_range(lo, hi);
        return uniform_unchecked(lo, hi);
    }

    /// Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject).
    std::uint64_t below(std::uint64_t n) {
        if (n == 0) throw error("tensoracle::rng::below", "the range [0, 0) is empty");
        auto [high, low] = detail::multiply_wide((*this)(), n);
        if (low < n) {
            const std::uint64_t threshold = (0 - n) % n;
            while (low < threshold) {
                std::tie(high, low) = detail::multiply_wide((*this)(), n);
            }
        }
        return high;
    }

    /// Uniform integer in [lo, hi], both ends included.
    std::int64_t integer(std::int64_t lo, std::int64_t hi) {
        if (lo > hi) {
            throw error("tensoracle::rng::integer",
                        "needs lo <= hi, got [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        }
        const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
        const std::uint64_t offset = span == max() ? (*this)() : below(span + 1);
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + offset);
    }

    bool bernoulli(double p) {
        if (!(p >= 0.0 && p <= 1.0)) {
            throw error("tensoracle::rng::bernoulli", "needs p in [0, 1], got " + std::to_string(p));
        }
        return uniform() < p;
    }

    /// Standard normal (Marsaglia's polar method; the second value of each
    /// pair is kept for the next call).
    double normal() noexcept {
        if (has_spare_) {
            has_spare_ = false;
            return spare_;
        }
        double u = 0.0;
        double v = 0.0;
        double s = 0.0;
        do {
            u = 2.0 * uniform() - 1.0;  // 2x is exact, so fusing cannot change it
            v = 2.0 * uniform() - 1.0;
            s = std::fma(u, u, v * v);
        } while (s >= 1.0 || s == 0.0);
        const double factor = std::sqrt(-2.0 * detail::portable_log(s) / s);
        spare_ = v * factor;
        has_spare_ = true;
        return u * factor;
    }

    double normal(double mean, double stddev) {
        if (!(stddev >= 0.0) || !std::isfinite(stddev) || !std::isfinite(mean)) {
            throw error("tensoracle::rng::normal", "needs a finite mean and a finite stddev >= 0, got mean " +
                                                       std::to_string(mean) + ", stddev " + std::to_string(stddev));
        }
        return std::fma(stddev, normal(), mean);
    }

    /// An independent generator for a sub-task (the next splitmix64-seeded
    /// stream), so that adding draws to one task does not shift another.
    rng split() noexcept { return rng((*this)()); }

    /// Array of uniform values in [lo, hi), drawn in double and rounded to T
    /// (for integer T and bool: uniform integers in [lo, hi), which must lie
    /// in T's range).
    template <element_type T>
    array<T> uniform_array(const shape_type& dims, double lo, double hi) {
        const std::size_t n = element_count(dims, "tensoracle::rng::uniform_array");
        auto out = array<T>::from_shape(dims);
        if constexpr (dtype_traits<T>::is_floating) {
            // The checks of uniform(lo, hi) once per array, not per element: the same values.
            if (n > 0) check_uniform_range(lo, hi);
            for (std::size_t i = 0; i < n; ++i) out.data()[i] = value_cast<T>(uniform_unchecked(lo, hi));
        } else {
            constexpr double t_min = std::is_same_v<T, bool> ? 0.0 : static_cast<double>(std::numeric_limits<T>::min());
            constexpr double t_max = std::is_same_v<T, bool> ? 1.0 : static_cast<double>(std::numeric_limits<T>::max());
            if (!(std::ceil(lo) >= t_min && std::ceil(hi) - 1.0 <= t_max && std::ceil(hi) - 1.0 < 0x1p63)) {
                throw error("tensoracle::rng::uniform_array",
                            "[" + std::to_string(lo) + ", " + std::to_string(hi) + ") is outside the range of " +
                                std::string(dtype_traits<T>::short_name));
            }
            const auto ilo = static_cast<std::int64_t>(std::ceil(lo));
            const auto ihi = static_cast<std::int64_t>(std::ceil(hi) - 1.0);
            if (ilo > ihi) {
                throw error("tensoracle::rng::uniform_array", "no integer lies in [" + std::to_string(lo) + ", " +
                                                                  std::to_string(hi) + ")");
            }
            // integer(ilo, ihi) per element with its checks and Lemire's threshold
            // computed once: the same draws, the same values.
            const std::uint64_t span = static_cast<std::uint64_t>(ihi) - static_cast<std::uint64_t>(ilo);
            const std::uint64_t range = span + 1;  // ihi < 2^63, so span < 2^64 - 1
            const std::uint64_t threshold = (0 - range) % range;
            for (std::size_t i = 0; i < n; ++i) {
                auto [high, low] = detail::multiply_wide((*this)(), range);
                while (low < threshold) std::tie(high, low) = detail::multiply_wide((*this)(), range);
                out.data()[i] = value_cast<T>(static_cast<std::int64_t>(static_cast<std::uint64_t>(ilo) + high));
            }
        }
        return out;
    }

    template <element_type T>
    array<T> normal_array(const shape_type& dims, double mean = 0.0, double stddev = 1.0) {
        static_assert(dtype_traits<T>::is_floating,
                      "tensoracle::rng::normal_array<T>: T must be a floating element type (f16, bf16, f32, f64)");
        const std::size_t n = element_count(dims, "tensoracle::rng::normal_array");
        auto out = array<T>::from_shape(dims);
        for (std::size_t i = 0; i < n; ++i) out.data()[i] = value_cast<T>(normal(mean, stddev));
        return out;
    }

    /// Runtime-dtype variant of uniform_array (a template only so that it is
    /// compiled where used).
    template <std::same_as<dtype> D>
    tensor uniform_tensor(D d, const shape_type& dims, double lo, double hi) {
        return tensoracle::visit(d, [&](auto t) { return tensor(uniform_array<typename decltype(t)::type>(dims, lo, hi)); });
    }

private:
    static void check_uniform_range(double lo, double hi) {
        if (!(lo < hi) || !std::isfinite(hi - lo)) {
            throw error("tensoracle::rng::uniform", "needs finite lo < hi, got [" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
        }
    }
    double uniform_unchecked(double lo, double hi) noexcept {
        const double r = std::fma(hi - lo, uniform(), lo);
        return r < hi ? r : std::nextafter(hi, lo);  // rounding may reach hi
    }

    std::array<std::uint64_t, 4> state_{};
    double spare_ = 0.0;
    bool has_spare_ = false;
};

}  // namespace tensoracle
// ---- end tensoracle/core/rng.hpp ----

// ---- begin tensoracle/accuracy/compare.hpp ----
// tensoracle: compare an actual tensor with an expected one, once, into a
// report that any tolerance can then judge without recomputing.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <xtensor/xexpression.hpp>

// ---- begin tensoracle/accuracy/tolerance.hpp ----
// tensoracle: tolerance levels t in [-10, 0] per dtype (GraphNet, Appendix A).

#include <cmath>
#include <ostream>
#include <string>


namespace tensoracle {

/// A closeness rule |actual - expected| <= atol + rtol * |expected|.
struct tolerance {
    double atol = 0.0;
    double rtol = 0.0;

    friend bool operator==(const tolerance&, const tolerance&) = default;
    friend std::ostream& operator<<(std::ostream& os, const tolerance& t) {
        return os << "atol=" << t.atol << ", rtol=" << t.rtol;
    }
};

/// A tolerance level t, turned into a tolerance per dtype by tolerance_level.
/// Lower is stricter; t = -5 is torch.testing.assert_close's default.
struct level {
    double t;
};

inline constexpr double strictest_level = -10.0;
inline constexpr double loosest_level = 0.0;

namespace detail {
/// lg(atol(t)) = k_atol * t and lg(rtol(t)) = k_rtol * t: a log-linear
/// interpolation from t = 0 (atol = rtol = 1) to torch's defaults at t = -5.
struct level_slopes {
    double k_atol;
    double k_rtol;
};
constexpr level_slopes level_slopes_of(dtype d) {
    switch (d) {
        case dtype::f16: return {1.0, 3.0 / 5.0};
        case dtype::bf16: return {1.0, 1.796 / 5.0};
        case dtype::f32: return {1.0, 5.886 / 5.0};
        case dtype::f64: return {7.0 / 5.0, 7.0 / 5.0};
        default: return {0.0, 0.0};
    }
}
}  // namespace detail

/// The GraphNet tolerance of level t for a runtime dtype. Integer and bool
/// dtypes get {0, 0}: they compare exactly at every level.
[[nodiscard]] inline tolerance tolerance_level(dtype d, double t) {
    if (!(t >= strictest_level && t <= loosest_level)) {
        throw error("tensoracle::tolerance_level",
                    "level t must lie in [-10, 0], got " + std::to_string(t));
    }
    if (!info(d).is_floating) return {0.0, 0.0};
    const auto k = detail::level_slopes_of(d);
    return {std::pow(10.0, k.k_atol * t), std::pow(10.0, k.k_rtol * t)};
}

/// Typed form: a tolerance level only makes sense for floating element types.
template <class T>
[[nodiscard]] tolerance tolerance_level(double t) {
    static_assert(floating_element<T>,
                  "tensoracle::tolerance_level<T>(t): T must be a floating element type (float16, bfloat16, float, "
                  "double); integer and bool tensors compare exactly");
    return tolerance_level(dtype_of<T>, t);
}

[[nodiscard]] inline tolerance resolve(const tolerance& tol, dtype) { return tol; }
[[nodiscard]] inline tolerance resolve(const level& lv, dtype d) { return tolerance_level(d, lv.t); }

}  // namespace tensoracle
// ---- end tensoracle/accuracy/tolerance.hpp ----
// ---- begin tensoracle/accuracy/ulp.hpp ----
// tensoracle: distance in units in the last place between two floating values.

#include <bit>
#include <cstdint>
#include <limits>
#include <optional>


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
// ---- end tensoracle/accuracy/ulp.hpp ----

namespace tensoracle {

struct compare_options {
    /// NaN in both tensors at the same position counts as agreement.
    bool nan_equal = true;
    /// Equal infinities (same sign) at the same position count as agreement.
    bool inf_equal = true;
    /// A dtype mismatch fails the comparison (values are still compared,
    /// widened to double, so the report says how far apart they are).
    bool require_same_dtype = true;
    /// How many worst elements describe() lists.
    std::size_t worst_count = 5;
};

/// Summary of one error measure over the elements where both values are finite.
/// median averages the two middle values; p99 is the nearest-rank 99th percentile.
struct error_stats {
    double max = 0.0;
    double mean = 0.0;
    double median = 0.0;
    double p99 = 0.0;
};

/// One element that breaks (or comes closest to breaking) a tolerance.
struct element_mismatch {
    std::size_t flat_index = 0;
    shape_type index;
    double actual = 0.0;
    double expected = 0.0;
    double abs_error = 0.0;
    double rel_error = 0.0;
    std::optional<std::uint64_t> ulp;  // in the actual's dtype; floating only
    bool nan_inf_mismatch = false;
};

class comparison_report;

namespace detail {
comparison_report compare_tensors(const tensor& actual, const tensor& expected, const compare_options& options);
}

/// Everything one comparison found. Built by compare(); judged by passes().
class comparison_report {
public:
    [[nodiscard]] dtype actual_dtype() const noexcept { return actual_dtype_; }
    [[nodiscard]] dtype expected_dtype() const noexcept { return expected_dtype_; }
    [[nodiscard]] const shape_type& actual_shape() const noexcept { return actual_shape_; }
    [[nodiscard]] const shape_type& expected_shape() const noexcept { return expected_shape_; }
    [[nodiscard]] bool same_shape() const noexcept { return actual_shape_ == expected_shape_; }
    [[nodiscard]] bool same_dtype() const noexcept { return actual_dtype_ == expected_dtype_; }
    [[nodiscard]] const compare_options& options() const noexcept { return options_; }

    /// Elements compared (0 when the shapes differ).
    [[nodiscard]] std::size_t size() const noexcept { return status_.size(); }
    [[nodiscard]] const error_stats& abs_error() const noexcept { return abs_stats_; }
    [[nodiscard]] const error_stats& rel_error() const noexcept { return rel_stats_; }
    /// Largest ULP distance over finite pairs, in the actual's dtype (empty for integer and bool).
    [[nodiscard]] std::optional<std::uint64_t> max_ulp() const noexcept { return max_ulp_; }
    [[nodiscard]] std::size_t nan_mismatches() const noexcept { return nan_mismatches_; }
    [[nodiscard]] std::size_t inf_mismatches() const noexcept { return inf_mismatches_; }
    [[nodiscard]] bool nan_inf_agree() const noexcept { return nan_mismatches_ == 0 && inf_mismatches_ == 0; }
    /// Integer and bool tensors compare exactly, whatever the tolerance.
    [[nodiscard]] bool exact() const noexcept { return exact_; }

    /// Shapes equal, dtypes equal (unless options allow otherwise).
    [[nodiscard]] bool structurally_equal() const noexcept {
        return same_shape() && (same_dtype() || !options_.require_same_dtype);
    }

    /// Elements that break |a - e| <= atol + rtol |e| (NaN/Inf disagreements included).
    [[nodiscard]] std::size_t mismatch_count(const tolerance& tol) const {
        std::size_t n = 0;
        for (std::size_t i = 0; i < size(); ++i) n += breaks(i, tol) ? 1 : 0;
        return n;
    }
    [[nodiscard]] std::size_t mismatch_count(const level& lv) const { return mismatch_count(resolve(lv, actual_dtype_)); }

    [[nodiscard]] bool passes(const tolerance& tol) const {
        if (!structurally_equal()) return false;
        for (std::size_t i = 0; i < size(); ++i) {
            if (breaks(i, tol)) return false;
        }
        return true;
    }
    /// A level is resolved with the actual's dtype: the precision under test.
    [[nodiscard]] bool passes(const level& lv) const { return passes(resolve(lv, actual_dtype_)); }

    /// The strictest integer level t in [-10, 0] at which the comparison
    /// passes; empty if it fails even at t = 0 or cannot pass at all.
    [[nodiscard]] std::optional<int> min_passing_level() const { return min_passing_level_; }

    /// Up to k elements ordered by how far they exceed `tol` (NaN/Inf
    /// disagreements first, then by |a - e| / (atol + rtol |e|)).
    [[nodiscard]] std::vector<element_mismatch> worst(const tolerance& tol, std::size_t k) const {
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < size(); ++i) {
            if (status_[i] != status::agree) order.push_back(i);
        }
        auto score = [&](std::size_t i) {
            if (status_[i] != status::compare) return std::numeric_limits<double>::infinity();
            const double err = std::fabs(actual_[i] - expected_[i]);
            const double allowed = tol.atol + tol.rtol * std::fabs(expected_[i]);
            if (allowed > 0.0) return err / allowed;
            return err > 0.0 ? std::numeric_limits<double>::max() : 0.0;
        };
        const std::size_t keep = std::min(k, order.size());
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                          [&](std::size_t a, std::size_t b) {
                              const double sa = score(a), sb = score(b);
                              return sa != sb ? sa > sb : a < b;
                          });
        order.resize(keep);
        std::vector<element_mismatch> out;
        for (const std::size_t i : order) out.push_back(element(i));
        return out;
    }

    /// A readable multi-line account: shapes, the stats line, the worst
    /// elements with their indices, and the strictest passing level.
    [[nodiscard]] std::string describe(const tolerance& tol) const {
        std::ostringstream os;
        os << std::setprecision(6);
        const bool ok = passes(tol);
        os << (ok ? "close" : "NOT close") << ": actual " << name(actual_dtype_) << to_string(actual_shape_)
           << " vs expected " << name(expected_dtype_) << to_string(expected_shape_);
        if (exact_) {
            os << ", compared exactly (integer/bool)\n";
        } else {
            os << " at " << tol << "\n";
        }
        if (!same_shape()) {
            os << "  shape mismatch: actual " << to_string(actual_shape_) << ", expected " << to_string(expected_shape_)
               << "\n";
            return os.str();
        }
        if (!same_dtype()) {
            os << "  dtype mismatch: actual " << name(actual_dtype_) << ", expected " << name(expected_dtype_)
               << (options_.require_same_dtype ? " (fails: require_same_dtype)" : " (allowed by options)") << "\n";
        }
        const std::size_t bad = mismatch_count(tol);
        os << "  mismatches: " << bad << " of " << size() << " elements";
        if (size() != 0) os << " (" << 100.0 * static_cast<double>(bad) / static_cast<double>(size()) << "%)";
        os << "; NaN mismatches: " << nan_mismatches_ << ", Inf mismatches: " << inf_mismatches_ << "\n";
        os << "  abs error: max " << abs_stats_.max << ", mean " << abs_stats_.mean << ", median " << abs_stats_.median
           << ", p99 " << abs_stats_.p99 << " | rel error: max " << rel_stats_.max << ", mean " << rel_stats_.mean
           << ", median " << rel_stats_.median << ", p99 " << rel_stats_.p99;
        if (max_ulp_) os << " | max ULP " << *max_ulp_;
        os << "\n";
        auto w = worst(tol, options_.worst_count);
        std::erase_if(w, [&](const element_mismatch& m) { return !breaks(m.flat_index, tol); });
        if (!w.empty()) {
            os << "  worst elements:\n";
            for (const auto& m : w) {
                os << "    " << to_string(m.index) << ": actual " << m.actual << ", expected " << m.expected;
                if (m.nan_inf_mismatch) {
                    os << " (NaN/Inf mismatch)";
                } else {
                    os << ", abs " << m.abs_error << ", rel " << m.rel_error;
                    if (m.ulp) os << ", ulp " << *m.ulp;
                }
                os << "\n";
            }
        }
        if (min_passing_level_) {
            os << "  strictest passing level: t = " << *min_passing_level_;
            if (!exact_) os << " (" << tolerance_level(actual_dtype_, *min_passing_level_) << ")";
            os << "\n";
        } else {
            os << "  passes at no level t in [-10, 0]\n";
        }
        return os.str();
    }
    [[nodiscard]] std::string describe(const level& lv) const { return describe(resolve(lv, actual_dtype_)); }

private:
    friend comparison_report detail::compare_tensors(const tensor&, const tensor&, const compare_options&);

    enum class status : std::uint8_t { compare, agree, nan_mismatch, inf_mismatch, unequal };

    [[nodiscard]] bool breaks(std::size_t i, const tolerance& tol) const {
        switch (status_[i]) {
            case status::agree: return false;
            case status::compare:
                return !(std::fabs(actual_[i] - expected_[i]) <= tol.atol + tol.rtol * std::fabs(expected_[i]));
            default: return true;
        }
    }

    [[nodiscard]] element_mismatch element(std::size_t i) const {
        element_mismatch m;
        m.flat_index = i;
        m.index = unravel_index(i, actual_shape_);
        m.actual = actual_[i];
        m.expected = expected_[i];
        m.nan_inf_mismatch = status_[i] == status::nan_mismatch || status_[i] == status::inf_mismatch;
        if (!m.nan_inf_mismatch) {
            m.abs_error = std::fabs(m.actual - m.expected);
            m.rel_error = relative_error(m.actual, m.expected);
            m.ulp = ulp_in_actual_dtype(m.actual, m.expected);
        }
        return m;
    }

    static double relative_error(double a, double e) {
        if (e == 0.0) return a == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
        return std::fabs(a - e) / std::fabs(e);
    }

    [[nodiscard]] std::optional<std::uint64_t> ulp_in_actual_dtype(double a, double e) const {
        if (exact_) return std::nullopt;
        return tensoracle::visit(actual_dtype_, [&](auto t) -> std::optional<std::uint64_t> {
            using T = typename decltype(t)::type;
            if constexpr (dtype_traits<T>::is_floating) {
                return ulp_distance(value_cast<T>(a), value_cast<T>(e));
            } else {
                return std::nullopt;
            }
        });
    }

    static error_stats summarize(std::vector<double> v) {
        error_stats s;
        if (v.empty()) return s;
        double sum = 0.0;
        for (const double x : v) {
            s.max = std::max(s.max, x);
            sum += x;
        }
        s.mean = sum / static_cast<double>(v.size());
        const std::size_t n = v.size();
        double* const first = v.data();  // plain pointers: unoptimized builds pay per iterator call
        double* const mid = first + n / 2;
        std::nth_element(first, mid, first + n);
        s.median = *mid;
        if (n % 2 == 0) s.median = 0.5 * (s.median + *std::max_element(first, mid));
        const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n)));
        double* const p = first + (rank == 0 ? 0 : rank - 1);
        std::nth_element(first, p, first + n);
        s.p99 = *p;
        return s;
    }

    void finish() {
        std::vector<double> abs_err, rel_err;
        abs_err.reserve(size());
        rel_err.reserve(size());
        for (std::size_t i = 0; i < size(); ++i) {
            if (status_[i] == status::nan_mismatch) ++nan_mismatches_;
            if (status_[i] == status::inf_mismatch) ++inf_mismatches_;
            if (status_[i] != status::compare && status_[i] != status::unequal) continue;
            abs_err.push_back(std::fabs(actual_[i] - expected_[i]));
            rel_err.push_back(relative_error(actual_[i], expected_[i]));
        }
        // One dtype dispatch for all elements, not one per element.
        if (!exact_ && size() != 0) {
            tensoracle::visit(actual_dtype_, [&](auto t) {
                using T = typename decltype(t)::type;
                if constexpr (dtype_traits<T>::is_floating) {
                    std::uint64_t m = 0;
                    for (std::size_t i = 0; i < size(); ++i) {
                        if (status_[i] != status::compare) continue;
                        const auto u = ulp_distance(value_cast<T>(actual_[i]), value_cast<T>(expected_[i]));
                        if (u) m = std::max(m, *u);
                    }
                    max_ulp_ = m;
                }
            });
        }
        abs_stats_ = summarize(std::move(abs_err));
        rel_stats_ = summarize(std::move(rel_err));
        if (exact_) {
            if (passes(tolerance{})) min_passing_level_ = static_cast<int>(strictest_level);
            return;
        }
        for (int t = static_cast<int>(strictest_level); t <= static_cast<int>(loosest_level); ++t) {
            if (passes(tolerance_level(actual_dtype_, t))) {
                min_passing_level_ = t;
                break;
            }
        }
    }

    dtype actual_dtype_ = dtype::f32;
    dtype expected_dtype_ = dtype::f32;
    shape_type actual_shape_;
    shape_type expected_shape_;
    compare_options options_;
    bool exact_ = false;
    std::vector<double> actual_;
    std::vector<double> expected_;
    std::vector<status> status_;
    error_stats abs_stats_;
    error_stats rel_stats_;
    std::optional<std::uint64_t> max_ulp_;
    std::size_t nan_mismatches_ = 0;
    std::size_t inf_mismatches_ = 0;
    std::optional<int> min_passing_level_;
};

namespace detail {

inline comparison_report compare_tensors(const tensor& actual, const tensor& expected, const compare_options& options) {
    comparison_report r;
    r.actual_dtype_ = actual.element_dtype();
    r.expected_dtype_ = expected.element_dtype();
    r.actual_shape_ = actual.shape();
    r.expected_shape_ = expected.shape();
    r.options_ = options;
    r.exact_ = !info(r.actual_dtype_).is_floating && !info(r.expected_dtype_).is_floating;
    if (!r.same_shape()) {
        r.finish();
        return r;
    }
    const std::size_t n = actual.size();
    r.actual_.resize(n);
    r.expected_.resize(n);
    r.status_.resize(n);
    using status = comparison_report::status;
    // Integers are compared exactly in their own domain (int64 does not fit a double).
    const auto ai = r.exact_ ? actual.to<std::int64_t>() : array<std::int64_t>();
    const auto ei = r.exact_ ? expected.to<std::int64_t>() : array<std::int64_t>();
    // Converted once, not one dtype dispatch per element.
    const auto av = actual.to<double>();
    const auto ev = expected.to<double>();
    for (std::size_t i = 0; i < n; ++i) {
        const double a = av.data()[i];
        const double e = ev.data()[i];
        r.actual_[i] = a;
        r.expected_[i] = e;
        if (r.exact_) {
            r.status_[i] = ai.data()[i] == ei.data()[i] ? status::agree : status::unequal;
        } else if (std::isnan(a) || std::isnan(e)) {
            r.status_[i] = (std::isnan(a) && std::isnan(e) && options.nan_equal) ? status::agree : status::nan_mismatch;
        } else if (std::isinf(a) || std::isinf(e)) {
            r.status_[i] = (a == e && options.inf_equal) ? status::agree : status::inf_mismatch;
        } else {
            r.status_[i] = status::compare;
        }
    }
    r.finish();
    return r;
}

template <class T>
struct is_xexpression : std::is_base_of<xt::xexpression<T>, T> {};

}  // namespace detail

/// What compare() and allclose() accept: a tensoracle::tensor, or an xtensor
/// expression whose elements are one of the kit's element types.
template <class T>
concept comparable = std::same_as<T, tensor> ||
                     (detail::is_xexpression<T>::value && element_type<typename T::value_type>);

namespace detail {
template <class T>
tensor as_tensor(const T& x) {
    if constexpr (std::same_as<T, tensor>) {
        return x;
    } else {
        return tensor::from(x);
    }
}
template <class T>
struct value_type_of {
    using type = void;
};
template <class T>
    requires requires { typename T::value_type; }
struct value_type_of<T> {
    using type = typename T::value_type;
};
}  // namespace detail

/// Compares `actual` with `expected` once; judge the report with passes().
/// Typed arguments must share their element type (a mixed-precision check is
/// a decision: make it explicit with a cast, or compare runtime tensors).
template <class A, class E>
[[nodiscard]] comparison_report compare(const A& actual, const E& expected, const compare_options& options = {}) {
    static_assert(comparable<A>,
                  "tensoracle::compare(actual, expected): 'actual' must be a tensoracle::tensor or an xtensor "
                  "expression of a tensoracle element type");
    static_assert(comparable<E>,
                  "tensoracle::compare(actual, expected): 'expected' must be a tensoracle::tensor or an xtensor "
                  "expression of a tensoracle element type");
    if constexpr (comparable<A> && comparable<E>) {
        if constexpr (!std::same_as<A, tensor> && !std::same_as<E, tensor>) {
            static_assert(std::is_same_v<typename A::value_type, typename E::value_type>,
                          "tensoracle::compare(actual, expected): the element types differ; cast one side first "
                          "(or compare tensoracle::tensor values to report a dtype mismatch at run time)");
        }
        return detail::compare_tensors(detail::as_tensor(actual), detail::as_tensor(expected), options);
    } else {
        return {};
    }
}

/// Tag for allclose on integer and bool tensors, which compare exactly.
struct exact_t {
    explicit constexpr exact_t() = default;
};
inline constexpr exact_t exact{};

/// The verdict of allclose with its report; converts to bool and prints the
/// report's description (what test-framework adapters show on failure).
class allclose_result {
public:
    allclose_result(comparison_report report, tolerance tol)
        : report_(std::move(report)), tol_(tol), passed_(report_.passes(tol_)) {}

    explicit operator bool() const noexcept { return passed_; }
    [[nodiscard]] bool passed() const noexcept { return passed_; }
    [[nodiscard]] const comparison_report& report() const noexcept { return report_; }
    [[nodiscard]] const tolerance& tolerance_used() const noexcept { return tol_; }

    friend std::ostream& operator<<(std::ostream& os, const allclose_result& r) {
        return os << r.report_.describe(r.tol_);
    }

private:
    comparison_report report_;
    tolerance tol_;
    bool passed_;
};

/// allclose(actual, expected, tol) with tol a tensoracle::tolerance{atol, rtol},
/// a tensoracle::level{t}, or tensoracle::exact. For typed integer and bool
/// tensors only `exact` compiles: a float tolerance there is a mistake.
template <class A, class E, class Tol>
[[nodiscard]] allclose_result allclose(const A& actual, const E& expected, const Tol& tol,
                                       const compare_options& options = {}) {
    static_assert(std::is_same_v<Tol, tolerance> || std::is_same_v<Tol, level> || std::is_same_v<Tol, exact_t>,
                  "tensoracle::allclose(actual, expected, tol): tol must be tensoracle::tolerance{atol, rtol}, "
                  "tensoracle::level{t} or tensoracle::exact");
    using value_type = typename detail::value_type_of<A>::type;
    if constexpr (element_type<value_type> && !std::is_same_v<Tol, exact_t>) {
        static_assert(floating_element<value_type>,
                      "tensoracle::allclose(actual, expected, tol): integer and bool tensors compare exactly; "
                      "pass tensoracle::exact instead of a floating-point tolerance or level");
    }
    auto report = compare(actual, expected, options);
    tolerance resolved{};
    if constexpr (std::is_same_v<Tol, tolerance>) {
        if (!(tol.atol >= 0.0) || !(tol.rtol >= 0.0)) {
            throw error("tensoracle::allclose", "atol and rtol must be >= 0 (and not NaN)");
        }
        resolved = tol;
    } else if constexpr (std::is_same_v<Tol, level>) {
        resolved = tolerance_level(report.actual_dtype(), tol.t);
    }
    return allclose_result(std::move(report), resolved);
}

}  // namespace tensoracle
// ---- end tensoracle/accuracy/compare.hpp ----
// ---- begin tensoracle/accuracy/outcome.hpp ----
// tensoracle: outcome classes of one differential test, with GraphNet's error
// codes (1 accuracy, 2 runtime crash, 3 compile failure).

#include <ostream>
#include <string>
#include <string_view>


namespace tensoracle {

/// The class of a result; the value is GraphNet's error code.
enum class outcome : int { pass = 0, accuracy = 1, runtime_crash = 2, compile_failure = 3 };

/// Why a result failed; the accuracy class splits into four reasons.
enum class failure_reason {
    none,
    value_mismatch,    // finite values beyond tolerance
    nan_inf_mismatch,  // NaN/Inf at different positions
    shape_mismatch,
    dtype_mismatch,
    runtime_crash,
    compile_failure,
};

[[nodiscard]] constexpr std::string_view to_string(outcome o) noexcept {
    switch (o) {
        case outcome::pass: return "pass";
        case outcome::accuracy: return "accuracy";
        case outcome::runtime_crash: return "runtime crash";
        case outcome::compile_failure: return "compile failure";
    }
    return "unknown outcome";
}

[[nodiscard]] constexpr std::string_view to_string(failure_reason r) noexcept {
    switch (r) {
        case failure_reason::none: return "none";
        case failure_reason::value_mismatch: return "value mismatch";
        case failure_reason::nan_inf_mismatch: return "NaN/Inf mismatch";
        case failure_reason::shape_mismatch: return "shape mismatch";
        case failure_reason::dtype_mismatch: return "dtype mismatch";
        case failure_reason::runtime_crash: return "runtime crash";
        case failure_reason::compile_failure: return "compile failure";
    }
    return "unknown reason";
}

[[nodiscard]] constexpr int error_code(outcome o) noexcept { return static_cast<int>(o); }

inline std::ostream& operator<<(std::ostream& os, outcome o) { return os << to_string(o); }
inline std::ostream& operator<<(std::ostream& os, failure_reason r) { return os << to_string(r); }

/// The judged result of one test: class, reason and a one-line detail.
struct verdict {
    outcome kind = outcome::pass;
    failure_reason reason = failure_reason::none;
    std::string detail;

    [[nodiscard]] bool passed() const noexcept { return kind == outcome::pass; }
    [[nodiscard]] int error_code() const noexcept { return tensoracle::error_code(kind); }
};

/// Judges a comparison: shape, then dtype, then NaN/Inf positions, then values.
[[nodiscard]] inline verdict judge(const comparison_report& r, const tolerance& tol) {
    if (!r.same_shape()) {
        return {outcome::accuracy, failure_reason::shape_mismatch,
                "actual " + to_string(r.actual_shape()) + " vs expected " + to_string(r.expected_shape())};
    }
    if (!r.same_dtype() && r.options().require_same_dtype) {
        return {outcome::accuracy, failure_reason::dtype_mismatch,
                "actual " + std::string(name(r.actual_dtype())) + " vs expected " +
                    std::string(name(r.expected_dtype()))};
    }
    if (!r.nan_inf_agree()) {
        return {outcome::accuracy, failure_reason::nan_inf_mismatch,
                std::to_string(r.nan_mismatches()) + " NaN and " + std::to_string(r.inf_mismatches()) +
                    " Inf positions disagree"};
    }
    if (!r.passes(tol)) {
        return {outcome::accuracy, failure_reason::value_mismatch,
                std::to_string(r.mismatch_count(tol)) + " of " + std::to_string(r.size()) + " elements beyond " +
                    (std::ostringstream() << tol).str()};
    }
    return {};
}
[[nodiscard]] inline verdict judge(const comparison_report& r, const level& lv) {
    return judge(r, resolve(lv, r.actual_dtype()));
}

/// Verdicts for tests that never produced an output.
[[nodiscard]] inline verdict runtime_crash(std::string what) {
    return {outcome::runtime_crash, failure_reason::runtime_crash, std::move(what)};
}
[[nodiscard]] inline verdict compile_failure(std::string what) {
    return {outcome::compile_failure, failure_reason::compile_failure, std::move(what)};
}

}  // namespace tensoracle
// ---- end tensoracle/accuracy/outcome.hpp ----
// ---- begin tensoracle/accuracy/score.hpp ----
// tensoracle: GraphNet's Speedup Score S_t and Error-aware Speedup Score ES_t.

#include <cmath>
#include <optional>
#include <span>
#include <string>


namespace tensoracle {

/// One benchmark sample: how it ended and, if it ran, its speedup over the
/// reference and the strictest tolerance level its output passes.
struct benchmark_sample {
    outcome failure = outcome::pass;  // pass or accuracy: it ran; runtime_crash, compile_failure: it did not
    double speedup = 1.0;             // reference time / compiled time
    std::optional<int> passing_level;  // comparison_report::min_passing_level()
};

struct score_options {
    double p = 0.1;  // slowdown penalty exponent, in (0, 1)
    double b = 0.1;  // failure penalty, in (0, 1)
};

/// The macro components of Eq. 1/3 and the score; alpha and beta are 1 and
/// eta 0 when there is nothing to average (as in GraphNet's tables).
struct score_components {
    double alpha = 1.0;   // geometric mean speedup of correct samples
    double beta = 1.0;    // geometric mean speedup of correct slowdowns
    double lambda = 0.0;  // fraction of correct samples
    double eta = 0.0;     // fraction of correct samples that are slowdowns
    double gamma = 0.0;   // penalty of the failed samples (b for t <= 0)
    double score = 0.0;   // S_t for t <= 0, ES_t for any t
};

namespace detail {
inline void check_score_inputs(std::span<const benchmark_sample> samples, const score_options& o) {
    if (samples.empty()) throw error("tensoracle::speedup_score", "needs at least one sample");
    if (!(o.p > 0.0 && o.p < 1.0) || !(o.b > 0.0 && o.b < 1.0)) {
        throw error("tensoracle::speedup_score", "p and b must lie in (0, 1), got p=" + std::to_string(o.p) +
                                                      ", b=" + std::to_string(o.b));
    }
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const auto& s = samples[i];
        const bool ran = s.failure == outcome::pass || s.failure == outcome::accuracy;
        if (ran && !(s.speedup > 0.0 && std::isfinite(s.speedup))) {
            throw error("tensoracle::speedup_score", "sample " + std::to_string(i) +
                                                          " ran but its speedup is not a finite positive number");
        }
    }
}

/// Error code of a sample at level t (0 when correct). Tolerance levels above
/// 0 do not loosen numeric checks; they forgive error codes instead.
inline int error_code_at(const benchmark_sample& s, double t) {
    if (s.failure == outcome::runtime_crash || s.failure == outcome::compile_failure) return error_code(s.failure);
    const double numeric_t = t < 0.0 ? t : 0.0;
    return (s.passing_level && *s.passing_level <= numeric_t) ? 0 : 1;
}
}  // namespace detail

/// Eq. 1 / Eq. 3 from its macro components: alpha^lambda * beta^(lambda eta p) * gamma^(1-lambda).
[[nodiscard]] inline double score_from_components(double alpha, double beta, double lambda, double eta, double gamma,
                                                  double p) {
    return std::pow(alpha, lambda) * std::pow(beta, lambda * eta * p) * std::pow(gamma, 1.0 - lambda);
}

/// Error-aware rectified speedup of one sample at level t (Eqs. 4 and 10):
/// s if correct and s >= 1, s^(p+1) if correct and s < 1, otherwise b, or 1
/// once t >= the sample's error code.
[[nodiscard]] inline double rectified_speedup(const benchmark_sample& s, double t, const score_options& o = {}) {
    detail::check_score_inputs(std::span(&s, 1), o);
    const int c = detail::error_code_at(s, t);
    if (c == 0) return s.speedup >= 1.0 ? s.speedup : std::pow(s.speedup, o.p + 1.0);
    return t < c ? o.b : 1.0;
}

/// S_t (t <= 0) or ES_t (any t) over samples, with its components.
[[nodiscard]] inline score_components speedup_score(std::span<const benchmark_sample> samples, double t,
                                                    const score_options& o = {}) {
    detail::check_score_inputs(samples, o);
    double log_all = 0.0, log_slow = 0.0, log_penalty = 0.0;
    std::size_t correct = 0, slow = 0, failed = 0;
    for (const auto& s : samples) {
        const int c = detail::error_code_at(s, t);
        if (c == 0) {
            ++correct;
            log_all += std::log(s.speedup);
            if (s.speedup < 1.0) {
                ++slow;
                log_slow += std::log(s.speedup);
            }
        } else {
            ++failed;
            log_penalty += t < c ? std::log(o.b) : 0.0;
        }
    }
    score_components r;
    const double n = static_cast<double>(samples.size());
    r.lambda = static_cast<double>(correct) / n;
    if (correct != 0) {
        r.alpha = std::exp(log_all / static_cast<double>(correct));
        r.eta = static_cast<double>(slow) / static_cast<double>(correct);
    }
    if (slow != 0) r.beta = std::exp(log_slow / static_cast<double>(slow));
    r.gamma = failed != 0 ? std::exp(log_penalty / static_cast<double>(failed)) : (t < 1.0 ? o.b : 1.0);
    r.score = score_from_components(r.alpha, r.beta, r.lambda, r.eta, r.gamma, o.p);
    return r;
}

}  // namespace tensoracle
// ---- end tensoracle/accuracy/score.hpp ----
// ---- end tensoracle/core.hpp ----
