// GENERATED FILE - DO NOT EDIT.
// Made by scripts/amalgamate from include/tensoracle/cuda/ops.cuh; edit those headers and rerun it.
// tensoracle: header-only test kit for deep-learning compilers and AD engines.
#pragma once
// ---- begin tensoracle/cuda/ops.cuh ----
// tensoracle: reference kernels on a CUDA device, the definitions. Compile
// this header in exactly one .cu file with nvcc -std=c++20
// --expt-relaxed-constexpr (the CMake target tensoracle::cuda does so);
// everything else calls the declarations in cuda/ops.hpp.
//
// Kernels stay simple and traceable: one thread per output element (grid-
// stride), strided reads through cuda::strided_map, the per-element formula
// from ops/formulas.hpp (the CPU kernels' own), cuBLAS for the products.

#if !defined(__CUDACC__)
#error "tensoracle/cuda/ops.cuh holds CUDA kernels: compile it with nvcc (host code includes cuda/ops.hpp)"
#endif
#if !defined(__CUDACC_RELAXED_CONSTEXPR__)
#error "tensoracle/cuda/ops.cuh: compile with nvcc --expt-relaxed-constexpr (the shared formulas call constexpr std:: math)"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

// ---- begin tensoracle/cuda/elementwise_ops.hpp ----
// tensoracle: the element-wise ops the CUDA kernels run, listed once for both
// sides. nvcc's side (cuda/ops.cuh) dispatches cuda::unary and cuda::binary on
// these names and lists them (unary_op_types, binary_op_types); the host side
// (cuda/lowering.hpp) keys its table by the spec types of the same names and
// checks that each name is its spec's op_type. Macros over identifiers, not a
// tuple of spec types, because nvcc does not parse the spec layer.

/// X(Op, formula, integers): Op is the spec type tensoracle::ops::Op (its name
/// is its ONNX op_type), formula its per-element formula in ops::unary::formula,
/// integers whether int32/int64 inputs run too (the formula's integer branch).
/// The order is the order of cuda::unary_op_types().
#define TENSORACLE_CUDA_UNARY_OPS(X)     \
    X(Relu, relu, true)                  \
    X(Abs, abs, true)                    \
    X(Neg, neg, true)                    \
    X(Sign, sign, true)                  \
    X(Ceil, ceil, false)                 \
    X(Floor, floor, false)               \
    X(Round, round, false)               \
    X(Exp, exp, false)                   \
    X(Log, log, false)                   \
    X(Sqrt, sqrt, false)                 \
    X(Reciprocal, reciprocal, false)     \
    X(Sigmoid, sigmoid, false)           \
    X(Tanh, tanh, false)                 \
    X(Softplus, softplus, false)         \
    X(Softsign, softsign, false)         \
    X(Erf, erf, false)                   \
    X(Sin, sin, false)                   \
    X(Cos, cos, false)                   \
    X(Tan, tan, false)                   \
    X(Asin, asin, false)                 \
    X(Acos, acos, false)                 \
    X(Atan, atan, false)                 \
    X(Sinh, sinh, false)                 \
    X(Cosh, cosh, false)                 \
    X(Asinh, asinh, false)               \
    X(Acosh, acosh, false)               \
    X(Atanh, atanh, false)               \
    X(Identity, identity, true)          \
    X(LeakyRelu, leaky_relu, false)      \
    X(Elu, elu, false)                   \
    X(Celu, celu, false)                 \
    X(Selu, selu, false)                 \
    X(HardSigmoid, hard_sigmoid, false)  \
    X(HardSwish, hard_swish, false)      \
    X(ThresholdedRelu, thresholded_relu, false)

/// X(Op, formula, compares, floating_only): Op as above; formula the
/// per-element formula as cuda::binary names it (f: ops::binary::formula,
/// compare_formula: the comparisons); compares whether the output is bool;
/// floating_only whether integer inputs have no kernel. The order is the
/// order of cuda::binary_op_types().
#define TENSORACLE_CUDA_BINARY_OPS(X)                                                  \
    X(Add, f::add, false, false)                                                       \
    X(Sub, f::sub, false, false)                                                       \
    X(Mul, f::mul, false, false)                                                       \
    X(Div, f::div, false, true)                                                        \
    X(Pow, f::pow, false, true)                                                        \
    X(Max, f::max, false, false)                                                       \
    X(Min, f::min, false, false)                                                       \
    X(Mod, f::fmod, false, true)                                                       \
    X(Equal, compare_formula<comparison::equal>, true, false)                          \
    X(Less, compare_formula<comparison::less>, true, false)                            \
    X(Greater, compare_formula<comparison::greater>, true, false)                      \
    X(LessOrEqual, compare_formula<comparison::less_or_equal>, true, false)            \
    X(GreaterOrEqual, compare_formula<comparison::greater_or_equal>, true, false)
// ---- end tensoracle/cuda/elementwise_ops.hpp ----
// ---- begin tensoracle/cuda/ops.hpp ----
// tensoracle: reference kernels on a CUDA device, the host-side declarations.
// Any C++20 compiler can call these; their definitions (cuda/ops.cuh) are
// compiled once by nvcc, in the consumer's build: link the CMake target
// tensoracle::cuda (it compiles cmake/tensoracle_cuda.cu), or include
// <tensoracle/cuda/ops.cuh> in exactly one .cu file of your own.
//
// Semantics are the CPU reference's (ops/*.hpp): the same per-element
// formulas (ops/formulas.hpp), f16/bf16/f32 computed in float and f64 in
// double, rounded once to the element type. Operands may be strided views;
// results are contiguous. Bad input throws the kit's errors naming the call.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

// ---- begin tensoracle/cuda/device_tensor.hpp ----
// tensoracle: tensors on a CUDA device. A device_tensor is a dtype, a shape,
// element strides and an offset into a shared RAII device buffer, so views
// (transpose, slices with steps, broadcasts) cost no copy and every kernel
// accepts non-contiguous operands. Copies to and from the kit's `tensor`.
// Errors of the CUDA runtime and cuBLAS throw cuda::cuda_error naming the
// call. Host code: compiles with any C++20 compiler and the CUDA runtime
// headers; only the kernels (cuda/ops.cuh) need nvcc.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_runtime_api.h>

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
// ---- begin tensoracle/cuda/layout.hpp ----
// tensoracle: index arithmetic of the CUDA kernels, host-testable. A kernel
// walks an iteration shape in row-major order and reads each operand through
// a strided_map: dims of the iteration space and the operand's element
// strides (0 where it broadcasts, negative for reversed slices). Built on the
// host, passed to kernels by value; no CUDA needed to compile or test it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// ---- begin tensoracle/ops/formulas.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_FORMULAS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_FORMULAS_HPP
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

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>


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
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_FORMULAS_HPP
// ---- end tensoracle/ops/formulas.hpp ----

namespace tensoracle::cuda {

/// The highest rank a CUDA kernel indexes (ONNX models rarely exceed 6).
inline constexpr int max_rank = 8;

/// Iteration dims and one operand's strides, in elements.
struct strided_map {
    int rank = 0;
    std::int64_t dims[max_rank] = {};
    std::int64_t strides[max_rank] = {};
    std::int64_t offset = 0;  ///< elements from the buffer's start
    /// The iteration space has fewer than 2^31 elements: index arithmetic in
    /// 32 bits with division by multiplication (a GPU divides 64-bit integers
    /// in software, 32-bit ones in about 20 instructions). Set by narrowed().
    bool narrow = false;
    std::uint32_t div_mul[max_rank] = {};    ///< per axis: q = hi32(n * div_mul) >> div_shift ...
    std::uint32_t div_shift[max_rank] = {};  ///< ... for n < 2^31 (div_mul 0: dims 1, q = n)

    /// n / dims[d] for n < 2^31, by the multiplier narrowed() chose (round-up method).
    TENSORACLE_HD std::uint32_t divide(std::uint32_t n, int d) const {
        if (div_mul[d] == 0) return n;
#if defined(__CUDA_ARCH__)
        return __umulhi(n, div_mul[d]) >> div_shift[d];
#else
        return static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * div_mul[d]) >> 32) >> div_shift[d];
#endif
    }

    /// The operand's element offset of the row-major position `flat` of the iteration space.
    TENSORACLE_HD std::int64_t at(std::int64_t flat) const {
        if (rank == 1) return offset + flat * strides[0];
        std::int64_t off = offset;
        if (narrow) {
            auto f = static_cast<std::uint32_t>(flat);
            for (int d = rank - 1; d >= 0; --d) {
                const std::uint32_t q = divide(f, d);
                off += static_cast<std::int64_t>(f - q * static_cast<std::uint32_t>(dims[d])) * strides[d];
                f = q;
            }
            return off;
        }
        for (int d = rank - 1; d >= 0; --d) {
            const std::int64_t i = flat % dims[d];
            flat /= dims[d];
            off += i * strides[d];
        }
        return off;
    }
    /// This map with `narrow` set (and the divisors prepared) where its iteration space allows.
    [[nodiscard]] strided_map narrowed() const {
        strided_map m = *this;
        std::uint64_t n = 1;
        bool fits = true;
        for (int d = 0; d < rank; ++d) {
            if (dims[d] < 0 || static_cast<std::uint64_t>(dims[d]) >= (std::uint64_t{1} << 31)) {
                fits = false;
                break;
            }
            n *= static_cast<std::uint64_t>(dims[d]);
            if (n >= (std::uint64_t{1} << 31)) fits = false;
        }
        m.narrow = fits;
        for (int d = 0; d < rank && fits; ++d) {
            const auto v = static_cast<std::uint64_t>(dims[d]);
            if (v <= 1) {
                m.div_mul[d] = 0;
                m.div_shift[d] = 0;
                continue;
            }
            unsigned ceil_log2 = 0;
            while ((std::uint64_t{1} << ceil_log2) < v) ++ceil_log2;
            const unsigned p = 31 + ceil_log2;
            m.div_mul[d] = static_cast<std::uint32_t>(((std::uint64_t{1} << p) + v - 1) / v);
            m.div_shift[d] = p - 32;
        }
        return m;
    }
};

/// Merges adjacent axes of maps over one iteration space wherever every map
/// steps through them as through one axis (stride[k] == stride[k+1] * dims[k+1]),
/// and drops axes of length 1: fewer axes, less index arithmetic per element.
/// Every map must have the same rank and dims.
inline void collapse(std::span<strided_map* const> maps) {
    if (maps.empty()) return;
    strided_map& first = *maps.front();
    int out = 0;
    for (int k = 0; k < first.rank; ++k) {
        if (first.dims[k] == 1 && first.rank > 1) continue;  // a unit axis moves nothing
        bool merge = out > 0;
        for (const auto* m : maps) {
            merge = merge && m->strides[out - 1] == m->strides[k] * m->dims[k];
        }
        for (auto* m : maps) {
            if (merge) {
                m->dims[out - 1] *= m->dims[k];
                m->strides[out - 1] = m->strides[k];
            } else {
                m->dims[out] = m->dims[k];
                m->strides[out] = m->strides[k];
            }
        }
        if (!merge) ++out;
    }
    if (out == 0 && first.rank > 0) {  // every axis had length 1: one axis of one element
        for (auto* m : maps) {
            m->dims[0] = 1;
            m->strides[0] = 0;
        }
        out = 1;
    }
    for (auto* m : maps) {
        m->rank = out;
        *m = m->narrowed();
    }
}
/// collapse(a, b, ...) for maps at hand (no allocation).
template <class... Maps>
void collapse(strided_map& first, Maps&... rest) {
    const std::array<strided_map*, 1 + sizeof...(Maps)> maps{&first, &rest...};
    collapse(std::span<strided_map* const>(maps));
}

/// Row-major strides of a shape, in elements.
inline std::vector<std::int64_t> contiguous_strides(const std::vector<std::size_t>& shape) {
    std::vector<std::int64_t> s(shape.size());
    std::int64_t acc = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        s[i] = acc;
        acc *= static_cast<std::int64_t>(shape[i]);
    }
    return s;
}

/// ONNX (numpy) multidirectional broadcasting of shapes; throws shape_error naming `where`.
inline std::vector<std::size_t> broadcast_shape(const std::vector<std::vector<std::size_t>>& shapes,
                                                std::string_view where) {
    std::size_t rank = 0;
    for (const auto& s : shapes) rank = s.size() > rank ? s.size() : rank;
    std::vector<std::size_t> out(rank, 1);
    for (const auto& s : shapes) {
        for (std::size_t k = 0; k < s.size(); ++k) {
            std::size_t& o = out[rank - s.size() + k];
            const std::size_t d = s[k];
            if (d == o || d == 1) continue;
            if (o != 1) {
                throw shape_error(where, "shapes do not broadcast: dimension " + std::to_string(d) + " against " +
                                             std::to_string(o) + " at axis " + std::to_string(rank - s.size() + k));
            }
            o = d;
        }
    }
    return out;
}

/// The map that reads an operand of `shape` and `strides` (elements) at the
/// positions of the iteration space `out` it broadcasts to (right-aligned).
inline strided_map broadcast_map(const std::vector<std::size_t>& out, const std::vector<std::size_t>& shape,
                                 const std::vector<std::int64_t>& strides, std::int64_t offset,
                                 std::string_view where) {
    if (out.size() > static_cast<std::size_t>(max_rank)) {
        throw unsupported_error(where, "rank " + std::to_string(out.size()) + " exceeds the CUDA kernels' limit of " +
                                           std::to_string(max_rank));
    }
    if (shape.size() > out.size() || strides.size() != shape.size()) {
        throw shape_error(where, "operand of rank " + std::to_string(shape.size()) + " does not broadcast to rank " +
                                     std::to_string(out.size()));
    }
    strided_map m;
    m.rank = static_cast<int>(out.size());
    m.offset = offset;
    const std::size_t lead = out.size() - shape.size();
    for (std::size_t k = 0; k < out.size(); ++k) {
        m.dims[k] = static_cast<std::int64_t>(out[k]);
        if (k < lead) {
            m.strides[k] = 0;
            continue;
        }
        const std::size_t d = shape[k - lead];
        if (d != out[k] && d != 1) {
            throw shape_error(where, "dimension " + std::to_string(d) + " does not broadcast to " +
                                         std::to_string(out[k]) + " at axis " + std::to_string(k));
        }
        m.strides[k] = d == 1 ? 0 : strides[k - lead];
    }
    return m.narrowed();
}

/// A reduction split into kept (output) and reduced axes: output o reads the
/// elements kept.at(o) + reduced.at(r) for r in [0, count).
struct reduction_plan {
    strided_map kept;     ///< over the output positions (kept axes)
    strided_map reduced;  ///< over the reduced positions, offset 0
    std::int64_t outputs = 1;
    std::int64_t count = 1;  ///< elements per output
    std::vector<std::size_t> out_shape;  ///< with keepdims applied
};

/// Plans a reduction of `shape` (strides in elements) over `axes` (negative
/// counts from the end; empty = all axes unless noop_with_empty_axes).
inline reduction_plan plan_reduction(const std::vector<std::size_t>& shape, const std::vector<std::int64_t>& strides,
                                     std::int64_t offset, std::vector<std::int64_t> axes, bool keepdims,
                                     bool noop_with_empty_axes, std::string_view where) {
    const auto rank = static_cast<std::int64_t>(shape.size());
    if (rank > max_rank) {
        throw unsupported_error(where, "rank " + std::to_string(rank) + " exceeds the CUDA kernels' limit of " +
                                           std::to_string(max_rank));
    }
    std::vector<bool> reduce(shape.size(), false);
    if (axes.empty() && !noop_with_empty_axes) {
        reduce.assign(shape.size(), true);
    }
    for (auto a : axes) {
        const std::int64_t n = a < 0 ? a + rank : a;
        if (n < 0 || n >= rank) {
            throw shape_error(where, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
        }
        if (reduce[static_cast<std::size_t>(n)]) {
            throw shape_error(where, "axis " + std::to_string(a) + " is repeated");
        }
        reduce[static_cast<std::size_t>(n)] = true;
    }
    reduction_plan p;
    p.kept.offset = offset;
    for (std::size_t k = 0; k < shape.size(); ++k) {
        const auto d = static_cast<std::int64_t>(shape[k]);
        if (reduce[k]) {
            p.reduced.dims[p.reduced.rank] = d;
            p.reduced.strides[p.reduced.rank++] = strides[k];
            p.count *= d;
            if (keepdims) p.out_shape.push_back(1);
        } else {
            p.kept.dims[p.kept.rank] = d;
            p.kept.strides[p.kept.rank++] = strides[k];
            p.outputs *= d;
            p.out_shape.push_back(shape[k]);
        }
    }
    if (p.kept.rank > 0) collapse(p.kept);
    if (p.reduced.rank > 0) collapse(p.reduced);
    return p;
}

}  // namespace tensoracle::cuda
// ---- end tensoracle/cuda/layout.hpp ----

namespace tensoracle::cuda {

/// A failed call of the CUDA runtime or cuBLAS; where() names the call.
class cuda_error : public error {
public:
    using error::error;
};

/// Throws cuda_error "call: <runtime's message>" unless `status` is success.
inline void check(cudaError_t status, std::string_view call) {
    if (status != cudaSuccess) {
        throw cuda_error(call, std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status));
    }
}

/// Whether a CUDA device is usable here (false without a driver or a GPU).
inline bool device_available() {
    int n = 0;
    const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return ok;
}

/// Bytes of one element on the device (bool is one byte, as on the host).
inline std::size_t device_element_size(dtype d) { return d == dtype::boolean ? 1 : static_cast<std::size_t>(info(d).bits / 8); }

namespace detail {
/// Whether the current device has stream-ordered allocation; if so, its pool
/// keeps freed memory for reuse (a kernel's output then costs no cudaMalloc).
inline bool use_memory_pool() {
    static const bool pool = [] {
        int dev = 0, supported = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess || supported == 0) {
            (void)cudaGetLastError();
            return false;
        }
        cudaMemPool_t p = nullptr;
        if (cudaDeviceGetDefaultMemPool(&p, dev) != cudaSuccess) {
            (void)cudaGetLastError();
            return false;
        }
        std::uint64_t keep = ~std::uint64_t{0};
        (void)cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep);
        return true;
    }();
    return pool;
}
}  // namespace detail

/// An owning block of device memory, ordered on the default stream: it may be
/// released while kernels that use it are queued (they finish first).
class device_buffer {
public:
    explicit device_buffer(std::size_t bytes) : bytes_(bytes) {
        if (bytes == 0) return;
        const std::string call = "cudaMalloc(" + std::to_string(bytes) + " bytes)";
        if (detail::use_memory_pool()) {
            const auto s = cudaMallocAsync(&ptr_, bytes, nullptr);
            if (s != cudaSuccess) (void)cudaGetLastError();  // not sticky: report it as cudaMalloc's
            check(s, call);
        } else {
            check(cudaMalloc(&ptr_, bytes), call);
        }
    }
    ~device_buffer() {
        if (ptr_ == nullptr) return;
        if (detail::use_memory_pool()) {
            (void)cudaFreeAsync(ptr_, nullptr);
        } else {
            (void)cudaFree(ptr_);
        }
    }
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;
    [[nodiscard]] void* data() const noexcept { return ptr_; }
    [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

private:
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

/// A strided view of a device buffer with a dtype and a shape.
class device_tensor {
public:
    device_tensor() = default;

    /// Uninitialised contiguous storage of `shape`.
    static device_tensor empty(dtype d, const shape_type& shape) {
        device_tensor t;
        t.dtype_ = d;
        t.shape_ = shape;
        t.strides_ = contiguous_strides(shape);
        t.buffer_ = std::make_shared<device_buffer>(element_count(shape, "cuda::device_tensor") * device_element_size(d));
        return t;
    }

    [[nodiscard]] dtype element_dtype() const noexcept { return dtype_; }
    [[nodiscard]] const shape_type& shape() const noexcept { return shape_; }
    [[nodiscard]] const std::vector<std::int64_t>& strides() const noexcept { return strides_; }
    [[nodiscard]] std::int64_t offset() const noexcept { return offset_; }
    [[nodiscard]] std::size_t rank() const noexcept { return shape_.size(); }
    [[nodiscard]] std::size_t size() const { return element_count(shape_); }
    /// The buffer's start; elements are at data() + offset() + sum(index * stride).
    [[nodiscard]] void* data() const noexcept { return buffer_ ? buffer_->data() : nullptr; }
    [[nodiscard]] bool contiguous() const { return offset_ == 0 && strides_ == contiguous_strides(shape_); }

    /// A view with the axes permuted (Transpose without a copy).
    [[nodiscard]] device_tensor permuted(const std::vector<std::size_t>& perm) const {
        if (perm.size() != rank()) throw shape_error("cuda::device_tensor::permuted", "perm has the wrong length");
        device_tensor v = *this;
        std::vector<bool> seen(rank(), false);
        for (std::size_t k = 0; k < perm.size(); ++k) {
            if (perm[k] >= rank() || seen[perm[k]]) {
                throw shape_error("cuda::device_tensor::permuted", "perm is not a permutation of the axes");
            }
            seen[perm[k]] = true;
            v.shape_[k] = shape_[perm[k]];
            v.strides_[k] = strides_[perm[k]];
        }
        return v;
    }
    /// A view of elements start, start + step, ... (count of them) along `axis`; step may be negative.
    [[nodiscard]] device_tensor sliced(std::size_t axis, std::int64_t start, std::int64_t step, std::size_t count) const {
        constexpr std::string_view where = "cuda::device_tensor::sliced";
        if (axis >= rank()) throw shape_error(where, "axis out of range");
        if (step == 0) throw shape_error(where, "step is 0");
        const auto n = static_cast<std::int64_t>(shape_[axis]);
        if (count != 0) {
            const std::int64_t last = start + step * static_cast<std::int64_t>(count - 1);
            if (start < 0 || start >= n || last < 0 || last >= n) {
                throw shape_error(where, "slice leaves the axis of length " + std::to_string(n));
            }
        }
        device_tensor v = *this;
        v.shape_[axis] = count;
        v.offset_ += start * strides_[axis];
        v.strides_[axis] *= step;
        return v;
    }
    /// The same elements under another shape; a view when contiguous, else throws (copy first).
    [[nodiscard]] device_tensor reshaped(const shape_type& shape) const {
        if (element_count(shape) != size()) {
            throw shape_error("cuda::device_tensor::reshaped",
                              "element count " + std::to_string(size()) + " does not match " + to_string(shape));
        }
        if (!contiguous()) throw shape_error("cuda::device_tensor::reshaped", "needs a contiguous tensor");
        device_tensor v = *this;
        v.shape_ = shape;
        v.strides_ = contiguous_strides(shape);
        return v;
    }
    /// The map that reads this tensor over the iteration space `out` (broadcasting).
    [[nodiscard]] strided_map map_to(const shape_type& out, std::string_view where) const {
        return broadcast_map(out, shape_, strides_, offset_, where);
    }

private:
    dtype dtype_ = dtype::f32;
    shape_type shape_{0};
    std::vector<std::int64_t> strides_{1};
    std::int64_t offset_ = 0;
    std::shared_ptr<device_buffer> buffer_;
};

/// Copies a host tensor to the device (contiguous).
inline device_tensor to_device(const tensor& t) {
    auto d = device_tensor::empty(t.element_dtype(), t.shape());
    if (t.nbytes() == 0) return d;
    visit(t.element_dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto v = t.values<T>();  // straight from the tensor's buffer
        check(cudaMemcpy(d.data(), v.data(), v.size_bytes(), cudaMemcpyHostToDevice), "cudaMemcpy to device");
    });
    return d;
}

/// Copies a device tensor back to a host tensor: straight into its buffer when
/// contiguous; a strided view's span is copied once and gathered on the host.
inline tensor to_host(const device_tensor& d) {
    auto t = tensor::for_overwrite(d.element_dtype(), d.shape());
    if (t.nbytes() == 0) return t;
    visit(d.element_dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto out = t.values<T>();
        if (d.contiguous()) {
            check(cudaMemcpy(out.data(), d.data(), out.size_bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
            return;
        }
        std::int64_t lo = d.offset(), hi = d.offset();
        for (std::size_t k = 0; k < d.rank(); ++k) {
            const std::int64_t reach = static_cast<std::int64_t>(d.shape()[k] - 1) * d.strides()[k];
            (reach < 0 ? lo : hi) += reach;
        }
        const auto count = static_cast<std::size_t>(hi - lo + 1);
        const std::unique_ptr<T[]> span(new T[count]);
        check(cudaMemcpy(span.get(), static_cast<const T*>(d.data()) + lo, count * sizeof(T), cudaMemcpyDeviceToHost),
              "cudaMemcpy to host");
        const strided_map m = broadcast_map(d.shape(), d.shape(), d.strides(), d.offset() - lo, "cuda::to_host");
        for (std::size_t f = 0; f < out.size(); ++f) out[f] = span[static_cast<std::size_t>(m.at(static_cast<std::int64_t>(f)))];
    });
    return t;
}

}  // namespace tensoracle::cuda
// ---- end tensoracle/cuda/device_tensor.hpp ----

namespace tensoracle::cuda {

/// Parameters of the element-wise ops that have attributes (ONNX defaults
/// where one applies; fields an op does not use are ignored).
struct elementwise_attributes {
    float alpha = 0.0f;  ///< LeakyRelu (0.01), Elu/Celu (1), Selu, HardSigmoid (0.2), ThresholdedRelu (1)
    float beta = 0.5f;   ///< HardSigmoid
    float gamma = 1.05070102214813232421875f;  ///< Selu
    std::int64_t fmod = 0;                      ///< Mod
    bool alpha_given = false;                   ///< false: the op's ONNX default alpha
};

/// Op types `unary` runs (f16, bf16, f32, f64; Abs/Neg/Sign/Relu also int32/int64).
[[nodiscard]] const std::vector<std::string_view>& unary_op_types();
/// Op types `binary` runs: Add Sub Mul Div Pow Max Min Mod (fmod=1) and the comparisons
/// Equal Less Greater LessOrEqual GreaterOrEqual (bool output).
[[nodiscard]] const std::vector<std::string_view>& binary_op_types();

[[nodiscard]] device_tensor unary(std::string_view op_type, const device_tensor& x, const elementwise_attributes& a = {});
[[nodiscard]] device_tensor binary(std::string_view op_type, const device_tensor& a, const device_tensor& b,
                                   const elementwise_attributes& at = {});
[[nodiscard]] device_tensor where(const device_tensor& condition, const device_tensor& x, const device_tensor& y);
[[nodiscard]] device_tensor clip(const device_tensor& x, std::optional<double> lo, std::optional<double> hi);
/// ONNX Cast between f16, bf16, f32, f64, int32, int64 and bool (the kit's value_cast rules:
/// float to integer truncates toward zero and saturates, NaN gives 0).
[[nodiscard]] device_tensor cast(const device_tensor& x, dtype to);
/// A contiguous copy of any view (Transpose, Slice, Expand results are views until copied).
[[nodiscard]] device_tensor contiguous(const device_tensor& x);
/// x broadcast to `shape` (ONNX Expand), contiguous.
[[nodiscard]] device_tensor expand(const device_tensor& x, const shape_type& shape);

/// Reductions of ONNX Reduce*: Sum, Mean, Max, Min, Prod, LogSumExp, LogSum, L1, L2, SumSquare.
enum class reduce_kind : std::uint8_t { sum, mean, max, min, prod, log_sum_exp, log_sum, l1, l2, sum_square };
/// Every reduction is deterministic: a fixed split of each output's elements
/// into chunks and a fixed order inside each, independent of scheduling and
/// of the GPU model, so runs reproduce bit for bit. Accumulation is in double
/// for every floating dtype (the CPU kernels accumulate 16/32-bit types in
/// float, in order): a parallel float sum would differ from the CPU's by float
/// rounding of another order, while this one is within the CPU's own rounding
/// error of the exact sum, and within level -5 of the float64 result at 2^22 elements.
[[nodiscard]] device_tensor reduce(reduce_kind kind, const device_tensor& x, const std::vector<std::int64_t>& axes,
                                   bool keepdims = true, bool noop_with_empty_axes = false);

/// Softmax / LogSoftmax along one axis (opset 13).
[[nodiscard]] device_tensor softmax(const device_tensor& x, std::int64_t axis, bool log = false);

/// How cuBLAS may compute an f32 product: pedantic f32 (the reference),
/// TF32 tensor cores (10-bit mantissa inputs), or cuBLAS's default f32.
enum class gemm_precision : std::uint8_t { pedantic, tf32, fast_default };
/// ONNX MatMul (numpy matmul: 1-D operands promoted, batch dims broadcast) through cuBLAS.
[[nodiscard]] device_tensor matmul(const device_tensor& a, const device_tensor& b,
                                   gemm_precision p = gemm_precision::pedantic);
/// ONNX Gemm: alpha * A' * B' + beta * C, C broadcast to (M, N).
[[nodiscard]] device_tensor gemm(const device_tensor& a, const device_tensor& b, const device_tensor* c, float alpha,
                                 float beta, bool trans_a, bool trans_b, gemm_precision p = gemm_precision::pedantic);

/// 2-D convolution/pooling geometry (NCHW), explicit pads (begin h, begin w, end h, end w).
struct window_2d {
    std::int64_t kernel[2] = {1, 1};
    std::int64_t strides[2] = {1, 1};
    std::int64_t dilations[2] = {1, 1};
    std::int64_t pads[4] = {0, 0, 0, 0};
};
/// ONNX Conv on NCHW input, OIHW weights, groups; im2col then cuBLAS per batch item and group.
[[nodiscard]] device_tensor conv2d(const device_tensor& x, const device_tensor& w, const device_tensor* bias,
                                   const window_2d& win, std::int64_t group, const shape_type& out_shape,
                                   gemm_precision p = gemm_precision::pedantic);
/// MaxPool / AveragePool over NCHW; out_shape from shape inference (ceil_mode included).
[[nodiscard]] device_tensor max_pool2d(const device_tensor& x, const window_2d& win, const shape_type& out_shape);
[[nodiscard]] device_tensor average_pool2d(const device_tensor& x, const window_2d& win, bool count_include_pad,
                                           const shape_type& out_shape);
/// BatchNormalization, inference mode: (x - mean) / sqrt(var + epsilon) * scale + bias per channel (axis 1).
[[nodiscard]] device_tensor batch_norm(const device_tensor& x, const device_tensor& scale, const device_tensor& bias,
                                       const device_tensor& mean, const device_tensor& var, float epsilon);
/// LayerNormalization's Y over axes [axis, rank): scale and bias broadcast to the normalized shape.
[[nodiscard]] device_tensor layer_norm(const device_tensor& x, const device_tensor& scale, const device_tensor* bias,
                                       std::int64_t axis, float epsilon);

/// ONNX Concat along `axis`.
[[nodiscard]] device_tensor concat(const std::vector<device_tensor>& xs, std::int64_t axis);
/// ONNX Gather along `axis`; indices (int32/int64, negative from the end) are checked on the host.
[[nodiscard]] device_tensor gather(const device_tensor& x, const tensor& indices, std::int64_t axis);

}  // namespace tensoracle::cuda
// ---- end tensoracle/cuda/ops.hpp ----

namespace tensoracle::cuda {

namespace kernels {

/// Device storage of an element type and the type it computes in (float for
/// f16/bf16/f32, double for f64, itself for integers and bool).
template <class S>
struct element {
    using compute = S;
    __device__ static S load(S v) { return v; }
    template <class C>
    __device__ static S store(C v) { return static_cast<S>(v); }
};
template <>
struct element<__half> {
    using compute = float;
    __device__ static float load(__half v) { return __half2float(v); }
    __device__ static __half store(float v) { return __float2half_rn(v); }
    __device__ static __half store(double v) { return __double2half(v); }
};
template <>
struct element<__nv_bfloat16> {
    using compute = float;
    __device__ static float load(__nv_bfloat16 v) { return __bfloat162float(v); }
    __device__ static __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
    __device__ static __nv_bfloat16 store(double v) { return __double2bfloat16(v); }
};
template <class S>
using compute_t = typename element<S>::compute;

inline constexpr int block = 256;

/// A grid for n elements with a grid-stride loop.
inline unsigned grid_for(std::int64_t n) {
    static const int sms = [] {
        int dev = 0, count = 0;
        check(cudaGetDevice(&dev), "cudaGetDevice");
        check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
        return count;
    }();
    const std::int64_t blocks = (n + block - 1) / block;
    return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(blocks, std::int64_t{sms} * 32)));
}

#define TENSORACLE_GRID_STRIDE(i, n)                                                                     \
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

/// Contiguous operands: four elements per thread and step, loads first, so
/// that each thread has several reads in flight (bandwidth-bound kernels).
inline constexpr int unroll = 4;

// Contiguous and strided operands have separate kernels: the strided one's
// index registers would otherwise lower the contiguous one's occupancy.
template <class F, class S, class A>
__global__ void unary_contiguous(std::int64_t n, const S* x, S* y, A attrs) {
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + (unroll - 1) * step < n; i += unroll * step) {
        S v[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u) v[u] = x[i + u * step];
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
            y[i + u * step] = element<S>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(v[u])), attrs));
        }
    }
    for (; i < n; i += step) y[i] = element<S>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(x[i])), attrs));
}

/// Strided or broadcast: the same four-way interleaving, through the map.
template <class F, class S, class A>
__global__ void unary_strided(std::int64_t n, const S* x, strided_map mx, S* y, A attrs) {
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + (unroll - 1) * step < n; i += unroll * step) {
        S v[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u) v[u] = x[mx.at(i + u * step)];
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
            y[i + u * step] = element<S>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(v[u])), attrs));
        }
    }
    for (; i < n; i += step) y[i] = element<S>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(x[mx.at(i)])), attrs));
}

template <class F, class S, class Out, class A>
__global__ void binary_contiguous(std::int64_t n, const S* a, const S* b, Out* y, A attrs) {
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + (unroll - 1) * step < n; i += unroll * step) {
        S va[unroll], vb[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
            va[u] = a[i + u * step];
            vb[u] = b[i + u * step];
        }
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
            y[i + u * step] = element<Out>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(va[u])),
                                                           static_cast<compute_t<S>>(element<S>::load(vb[u])), attrs));
        }
    }
    for (; i < n; i += step) {
        y[i] = element<Out>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(a[i])),
                                            static_cast<compute_t<S>>(element<S>::load(b[i])), attrs));
    }
}

/// Strided or broadcast: the same four-way interleaving, through the maps.
template <class F, class S, class Out, class A>
__global__ void binary_strided(std::int64_t n, const S* a, strided_map ma, const S* b, strided_map mb, Out* y, A attrs) {
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + (unroll - 1) * step < n; i += unroll * step) {
        S va[unroll], vb[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
            va[u] = a[ma.at(i + u * step)];
            vb[u] = b[mb.at(i + u * step)];
        }
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
            y[i + u * step] = element<Out>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(va[u])),
                                                           static_cast<compute_t<S>>(element<S>::load(vb[u])), attrs));
        }
    }
    for (; i < n; i += step) {
        y[i] = element<Out>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(a[ma.at(i)])),
                                            static_cast<compute_t<S>>(element<S>::load(b[mb.at(i)])), attrs));
    }
}

/// Comparisons of ONNX (Equal, Less, ...): bool out, compared in the compute type.
enum class comparison : std::uint8_t { equal, less, greater, less_or_equal, greater_or_equal };
template <comparison K>
struct compare_formula {
    template <class V, class A>
    TENSORACLE_HD static bool apply(V a, V b, const A&) {
        if constexpr (K == comparison::equal) {
            return a == b;
        } else if constexpr (K == comparison::less) {
            return a < b;
        } else if constexpr (K == comparison::greater) {
            return a > b;
        } else if constexpr (K == comparison::less_or_equal) {
            return a <= b;
        } else {
            return a >= b;
        }
    }
};

/// Copies elements of `Bytes` width from one strided layout to another.
template <class W>
__global__ void copy_kernel(std::int64_t n, const W* src, strided_map ms, W* dst, strided_map md) {
    TENSORACLE_GRID_STRIDE(i, n) { dst[md.at(i)] = src[ms.at(i)]; }
}

template <class W>
__global__ void where_kernel(std::int64_t n, const bool* c, strided_map mc, const W* x, strided_map mx, const W* y,
                             strided_map my, W* out) {
    TENSORACLE_GRID_STRIDE(i, n) { out[i] = c[mc.at(i)] ? x[mx.at(i)] : y[my.at(i)]; }
}

template <class S>
__global__ void clip_kernel(std::int64_t n, const S* x, strided_map mx, S* y, bool has_lo, compute_t<S> lo, bool has_hi,
                            compute_t<S> hi) {
    TENSORACLE_GRID_STRIDE(i, n) {
        compute_t<S> v = element<S>::load(x[mx.at(i)]);
        if (has_lo && v < lo) v = lo;
        if (has_hi && hi < v) v = hi;
        y[i] = element<S>::store(v);
    }
}

/// value_cast (core/value_cast.hpp) on the device, one rounding throughout.
template <class To, class From>
__device__ To device_cast(From v) {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (std::is_same_v<To, bool>) {
        if constexpr (std::is_integral_v<From>) {
            return v != 0;
        } else {
            return static_cast<double>(element<From>::load(v)) != 0.0;  // NaN is true
        }
    } else if constexpr (!std::is_integral_v<To>) {  // to a floating type
        if constexpr (std::is_same_v<From, bool>) {
            return element<To>::store(compute_t<To>(v ? 1 : 0));
        } else if constexpr (std::is_integral_v<From>) {
            return element<To>::store(static_cast<double>(v));
        } else if constexpr (std::is_same_v<From, double>) {
            return element<To>::store(v);
        } else {
            return element<To>::store(static_cast<float>(element<From>::load(v)));  // widening is exact
        }
    } else {  // to an integer
        if constexpr (std::is_integral_v<From>) {
            return static_cast<To>(v);  // wraps modulo 2^bits
        } else {
            const double d = static_cast<double>(element<From>::load(v));
            if (::isnan(d)) return To{0};
            const double t = ::trunc(d);
            constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
            constexpr double hi_excl = static_cast<double>(std::numeric_limits<To>::max() / 2 + 1) * 2.0;
            if (t <= lo) return std::numeric_limits<To>::min();
            if (t >= hi_excl) return std::numeric_limits<To>::max();
            return static_cast<To>(t);
        }
    }
}
template <class To, class From>
__global__ void cast_kernel(std::int64_t n, const From* x, strided_map mx, To* y) {
    TENSORACLE_GRID_STRIDE(i, n) { y[i] = device_cast<To>(x[mx.at(i)]); }
}

// Reductions: per output o, elements kept.at(o) + reduced.at(r), r < count.
// Three fixed splits, chosen by the shape alone (so results are the same on
// every GPU): a warp per output for counts below `chunk`; chunks of `chunk`
// elements, one block each, then one block per output over its chunks; and
// for outputs adjacent in memory, a thread per (output, run of rows).
inline constexpr std::int64_t chunk = 65536;

/// One reduction kind at compile time: no branch on the kind per element.
template <reduce_kind K, class C>
struct reduce_op {
    C shift = C(0);  // LogSumExp: the output's maximum, subtracted before exp
    __device__ static C identity() {
        if constexpr (K == reduce_kind::max) {
            return -std::numeric_limits<C>::infinity();
        } else if constexpr (K == reduce_kind::min) {
            return std::numeric_limits<C>::infinity();
        } else if constexpr (K == reduce_kind::prod) {
            return C(1);
        } else {
            return C(0);
        }
    }
    __device__ C map(C x) const {
        if constexpr (K == reduce_kind::l1) {
            return ops::unary::formula::abs::apply(x, 0);
        } else if constexpr (K == reduce_kind::l2 || K == reduce_kind::sum_square) {
            return x * x;
        } else if constexpr (K == reduce_kind::log_sum_exp) {
            return ops::unary::formula::exp::apply(x - shift, 0);
        } else {
            return x;
        }
    }
    __device__ static C combine(C a, C b) {
        if constexpr (K == reduce_kind::max) {
            return ops::binary::formula::max::apply(a, b, 0);
        } else if constexpr (K == reduce_kind::min) {
            return ops::binary::formula::min::apply(a, b, 0);
        } else if constexpr (K == reduce_kind::prod) {
            return a * b;
        } else {
            return a + b;
        }
    }
    /// The reduction's value from its folded accumulator (m: LogSumExp's maximum).
    __device__ static C finish(C acc, std::int64_t count, C m) {
        if constexpr (K == reduce_kind::mean) {
            return acc / static_cast<C>(count);
        } else if constexpr (K == reduce_kind::l2) {
            return ::sqrt(acc);
        } else if constexpr (K == reduce_kind::log_sum) {
            return ::log(acc);
        } else if constexpr (K == reduce_kind::log_sum_exp) {
            return ::isfinite(m) ? m + ::log(acc) : m;  // NaN, +inf or -inf
        } else {
            return acc;
        }
    }
};

/// Folds the 32 lanes' values of a warp in a fixed tree (shuffles); lane 0 holds the result.
template <reduce_kind K, class C>
__device__ C warp_fold(C v) {
    for (int off = 16; off > 0; off /= 2) v = reduce_op<K, C>::combine(v, __shfl_down_sync(0xffffffffu, v, off));
    return v;
}

/// Folds the block's values in a fixed tree: warps first, then the warps' results. Every thread gets it.
template <reduce_kind K, class C>
__device__ C block_fold(C v) {
    constexpr int warps = block / 32;
    __shared__ C part[warps];
    __shared__ C result;
    v = warp_fold<K, C>(v);
    const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < warps ? part[lane] : reduce_op<K, C>::identity();
        for (int off = warps / 2; off > 0; off /= 2) v = reduce_op<K, C>::combine(v, __shfl_down_sync(0xffffffffu, v, off));
        if (lane == 0) result = v;
    }
    __syncthreads();
    const C r = result;
    __syncthreads();
    return r;
}

/// Folds elements [lo, hi) of one output that thread t of T takes: groups of
/// G = 16 bytes' worth of elements, g = t, t + T, ..., element u of a group
/// into accumulator u; then the G accumulators in a fixed tree. The order is
/// the same whether a group is read as one 16-byte load (contiguous and
/// aligned) or element by element, so the path never changes the result.
template <reduce_kind K, class S, class C>
__device__ C fold_groups(const S* x, std::int64_t base, const strided_map& reduced, std::int64_t lo, std::int64_t hi,
                         std::int64_t t, std::int64_t T, const reduce_op<K, C>& op) {
    constexpr int G = static_cast<int>(16 / sizeof(S));
    C a[G];
#pragma unroll
    for (int u = 0; u < G; ++u) a[u] = op.identity();
    const bool unit = reduced.rank == 0 || (reduced.rank == 1 && reduced.strides[0] == 1);
    if (unit) {
        const S* p = x + base;
        std::int64_t e = lo + t * G;
        // Four whole aligned groups at a time: their loads are in flight together.
        for (; e + 3 * T * G + G <= hi; e += 4 * T * G) {
            if ((reinterpret_cast<std::uintptr_t>(p + e) % 16) != 0 || (T * G * sizeof(S)) % 16 != 0) break;
            uint4 raw[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) raw[k] = *reinterpret_cast<const uint4*>(p + e + k * T * G);
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                S v[G];
                memcpy(v, &raw[k], sizeof v);
#pragma unroll
                for (int u = 0; u < G; ++u) a[u] = op.combine(a[u], op.map(static_cast<C>(element<S>::load(v[u]))));
            }
        }
        for (; e < hi; e += T * G) {
#pragma unroll
            for (int u = 0; u < G; ++u) {
                if (e + u < hi) a[u] = op.combine(a[u], op.map(static_cast<C>(element<S>::load(p[e + u]))));
            }
        }
    } else {
        for (std::int64_t e = lo + t * G; e < hi; e += T * G) {
#pragma unroll
            for (int u = 0; u < G; ++u) {
                if (e + u < hi) a[u] = op.combine(a[u], op.map(static_cast<C>(element<S>::load(x[base + reduced.at(e + u)]))));
            }
        }
    }
#pragma unroll
    for (int w = G / 2; w > 0; w /= 2) {
#pragma unroll
        for (int u = 0; u < w; ++u) a[u] = op.combine(a[u], a[u + w]);
    }
    return a[0];
}

/// Folds elements r, r + step, ... (< hi) in order (the columns path: step 1, a short run).
template <reduce_kind K, class S, class C>
__device__ C fold_run(const S* x, std::int64_t base, const strided_map& reduced, std::int64_t r, std::int64_t hi,
                      const reduce_op<K, C>& op) {
    C acc = op.identity();
    for (; r < hi; ++r) acc = op.combine(acc, op.map(static_cast<C>(element<S>::load(x[base + reduced.at(r)]))));
    return acc;
}

/// Writes output o: the reduction's value in the element type, or (raw) in the accumulator type.
template <reduce_kind K, class S, class C>
__device__ void store_result(std::int64_t o, C acc, std::int64_t count, const C* shifts, S* y, C* raw) {
    const C v = reduce_op<K, C>::finish(acc, count, shifts != nullptr ? shifts[o] : C(0));
    if (raw != nullptr) {
        raw[o] = v;
    } else {
        y[o] = element<S>::store(v);
    }
}

template <reduce_kind K, class S, class C>
__global__ void reduce_chunks(const S* x, strided_map kept, strided_map reduced, std::int64_t count,
                              std::int64_t chunks, const C* shifts, C* partial) {
    const std::int64_t o = blockIdx.x / chunks, c = blockIdx.x % chunks;
    reduce_op<K, C> op{shifts != nullptr ? shifts[o] : C(0)};
    if (!::isfinite(op.shift)) op.shift = C(0);  // LogSumExp: finished from the max alone
    const std::int64_t base = kept.at(o), lo = c * chunk, hi = count < lo + chunk ? count : lo + chunk;
    C acc = fold_groups<K, S, C>(x, base, reduced, lo, hi, threadIdx.x, block, op);
    acc = block_fold<K, C>(acc);
    if (threadIdx.x == 0) partial[o * chunks + c] = acc;
}

template <reduce_kind K, class S, class C>
__global__ void reduce_finish(const C* partial, std::int64_t chunks, std::int64_t count, const C* shifts, S* y,
                              C* raw) {
    using op = reduce_op<K, C>;
    const std::int64_t o = blockIdx.x;
    C acc = op::identity();
    for (std::int64_t c = threadIdx.x; c < chunks; c += block) acc = op::combine(acc, partial[o * chunks + c]);
    acc = block_fold<K, C>(acc);
    if (threadIdx.x == 0) store_result<K>(o, acc, count, shifts, y, raw);
}

/// A warp per output (counts below `chunk`): lanes fold elements lane, lane + 32, ...
template <reduce_kind K, class S, class C>
__global__ void reduce_warps(const S* x, strided_map kept, strided_map reduced, std::int64_t outputs,
                             std::int64_t count, const C* shifts, S* y, C* raw) {
    const std::int64_t o = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    if (o >= outputs) return;  // a whole warp leaves together
    reduce_op<K, C> op{shifts != nullptr ? shifts[o] : C(0)};
    if (!::isfinite(op.shift)) op.shift = C(0);
    C acc = fold_groups<K, S, C>(x, kept.at(o), reduced, 0, count, lane, 32, op);
    acc = warp_fold<K, C>(acc);
    if (lane == 0) store_result<K>(o, acc, count, shifts, y, raw);
}

/// Reductions whose kept axes end in a contiguous one (e.g. over axis 0 of a
/// matrix): thread (chunk c, output o), o fastest, folds rows
/// [c * column_rows, (c + 1) * column_rows) of its output, so a warp reads
/// adjacent memory; then one thread per output folds its chunks in order.
/// Deterministic: the split depends on the shape alone.
inline constexpr std::int64_t column_rows = 64;

template <reduce_kind K, class S, class C>
__global__ void reduce_columns(const S* x, strided_map kept, strided_map reduced, std::int64_t outputs,
                               std::int64_t count, std::int64_t chunks, const C* shifts, C* partial) {
    TENSORACLE_GRID_STRIDE(t, outputs * chunks) {
        const std::int64_t o = t % outputs, c = t / outputs;
        reduce_op<K, C> op{shifts != nullptr ? shifts[o] : C(0)};
        if (!::isfinite(op.shift)) op.shift = C(0);
        const std::int64_t lo = c * column_rows, hi = count < lo + column_rows ? count : lo + column_rows;
        partial[c * outputs + o] = fold_run<K, S, C>(x, kept.at(o), reduced, lo, hi, op);
    }
}

template <reduce_kind K, class S, class C>
__global__ void reduce_columns_finish(const C* partial, std::int64_t outputs, std::int64_t chunks, std::int64_t count,
                                      const C* shifts, S* y, C* raw) {
    using op = reduce_op<K, C>;
    TENSORACLE_GRID_STRIDE(o, outputs) {
        C acc = op::identity();
        for (std::int64_t c = 0; c < chunks; ++c) acc = op::combine(acc, partial[c * outputs + o]);
        store_result<K>(o, acc, count, shifts, y, raw);
    }
}

/// One reduction of kind K: results to y, or (raw) the accumulator-typed values to `raw`.
template <reduce_kind K, class S, class C>
void launch_reduction(const S* x, const reduction_plan& plan, const C* shifts, S* y, C* raw) {
    const bool columns = plan.kept.rank > 0 && plan.kept.strides[plan.kept.rank - 1] == 1 && plan.outputs >= 32;
    if (columns) {
        const std::int64_t chunks = std::max<std::int64_t>(1, (plan.count + column_rows - 1) / column_rows);
        device_buffer partial(static_cast<std::size_t>(plan.outputs * chunks) * sizeof(C));
        reduce_columns<K, S, C><<<grid_for(plan.outputs * chunks), block>>>(x, plan.kept, plan.reduced, plan.outputs,
                                                                            plan.count, chunks, shifts,
                                                                            static_cast<C*>(partial.data()));
        reduce_columns_finish<K, S, C><<<grid_for(plan.outputs), block>>>(static_cast<const C*>(partial.data()),
                                                                          plan.outputs, chunks, plan.count, shifts, y,
                                                                          raw);
        return;  // partial is freed in stream order, after the kernels
    }
    if (plan.count < chunk) {
        const std::int64_t threads = plan.outputs * 32;
        reduce_warps<K, S, C><<<static_cast<unsigned>((threads + block - 1) / block), block>>>(
            x, plan.kept, plan.reduced, plan.outputs, plan.count, shifts, y, raw);
        return;
    }
    const std::int64_t chunks = (plan.count + chunk - 1) / chunk;
    device_buffer partial(static_cast<std::size_t>(plan.outputs * chunks) * sizeof(C));
    reduce_chunks<K, S, C><<<static_cast<unsigned>(plan.outputs * chunks), block>>>(
        x, plan.kept, plan.reduced, plan.count, chunks, shifts, static_cast<C*>(partial.data()));
    reduce_finish<K, S, C><<<static_cast<unsigned>(plan.outputs), block>>>(static_cast<const C*>(partial.data()), chunks,
                                                                           plan.count, shifts, y, raw);
}

template <reduce_kind K, class S>
void reduce_typed(const device_tensor& x, const reduction_plan& plan, device_tensor& y) {
    // Sums and products in double for every floating dtype (see ops.hpp, reduce); max and min are exact in any.
    using C = std::conditional_t<K == reduce_kind::max || K == reduce_kind::min, compute_t<S>, double>;
    const S* px = static_cast<const S*>(x.data());
    if constexpr (K == reduce_kind::log_sum_exp) {  // each output's maximum first, subtracted before exp
        device_buffer maxima(static_cast<std::size_t>(plan.outputs) * sizeof(C));
        launch_reduction<reduce_kind::max, S, C>(px, plan, nullptr, nullptr, static_cast<C*>(maxima.data()));
        launch_reduction<K, S, C>(px, plan, static_cast<const C*>(maxima.data()), static_cast<S*>(y.data()), nullptr);
    } else {
        launch_reduction<K, S, C>(px, plan, nullptr, static_cast<S*>(y.data()), nullptr);
    }
}

/// Softmax along one axis: one block per row.
template <class S>
__global__ void softmax_kernel(const S* x, strided_map rows, std::int64_t len, std::int64_t stride, S* y,
                               strided_map out_rows, std::int64_t out_stride, bool log_out) {
    using C = compute_t<S>;
    const std::int64_t row = blockIdx.x;
    const std::int64_t base = rows.at(row), obase = out_rows.at(row);
    using mx = reduce_op<reduce_kind::max, C>;
    C m = mx::identity();
    for (std::int64_t k = threadIdx.x; k < len; k += block) m = mx::combine(m, element<S>::load(x[base + k * stride]));
    m = block_fold<reduce_kind::max, C>(m);
    C s = 0;
    for (std::int64_t k = threadIdx.x; k < len; k += block) s += ::exp(static_cast<C>(element<S>::load(x[base + k * stride])) - m);
    s = block_fold<reduce_kind::sum, C>(s);
    for (std::int64_t k = threadIdx.x; k < len; k += block) {
        const C d = static_cast<C>(element<S>::load(x[base + k * stride])) - m;
        y[obase + k * out_stride] = element<S>::store(log_out ? d - ::log(s) : ::exp(d) / s);
    }
}

/// im2col of one group of every batch item: col[n][(c*kh + i)*kw + j][oh*OW + ow].
template <class S>
__global__ void im2col_kernel(std::int64_t total, const S* x, std::int64_t C, std::int64_t H, std::int64_t W,
                              std::int64_t c0, std::int64_t Cg, window_2d win, std::int64_t OH, std::int64_t OW,
                              S* col) {
    const std::int64_t kh = win.kernel[0], kw = win.kernel[1];
    TENSORACLE_GRID_STRIDE(f, total) {
        std::int64_t t = f;
        const std::int64_t ow = t % OW; t /= OW;
        const std::int64_t oh = t % OH; t /= OH;
        const std::int64_t j = t % kw; t /= kw;
        const std::int64_t i = t % kh; t /= kh;
        const std::int64_t c = t % Cg; t /= Cg;
        const std::int64_t n = t;
        const std::int64_t h = oh * win.strides[0] - win.pads[0] + i * win.dilations[0];
        const std::int64_t w = ow * win.strides[1] - win.pads[1] + j * win.dilations[1];
        S v = element<S>::store(compute_t<S>(0));
        if (h >= 0 && h < H && w >= 0 && w < W) v = x[((n * C + c0 + c) * H + h) * W + w];
        col[f] = v;
    }
}

template <class S>
__global__ void pool_kernel(std::int64_t total, const S* x, std::int64_t C, std::int64_t H, std::int64_t W,
                            window_2d win, std::int64_t OH, std::int64_t OW, bool is_max, bool count_include_pad,
                            S* y) {
    using C_t = compute_t<S>;
    TENSORACLE_GRID_STRIDE(f, total) {
        std::int64_t t = f;
        const std::int64_t ow = t % OW; t /= OW;
        const std::int64_t oh = t % OH; t /= OH;
        const std::int64_t nc = t;
        const std::int64_t h0 = oh * win.strides[0] - win.pads[0], w0 = ow * win.strides[1] - win.pads[1];
        C_t acc = is_max ? -std::numeric_limits<C_t>::infinity() : C_t(0);
        std::int64_t valid = 0, padded = 0;
        for (std::int64_t i = 0; i < win.kernel[0]; ++i) {
            const std::int64_t h = h0 + i * win.dilations[0];
            for (std::int64_t j = 0; j < win.kernel[1]; ++j) {
                const std::int64_t w = w0 + j * win.dilations[1];
                const bool inside_pads = h < H + win.pads[2] && w < W + win.pads[3];
                if (h < 0 || h >= H || w < 0 || w >= W) {
                    padded += inside_pads ? 1 : 0;
                    continue;
                }
                const C_t v = element<S>::load(x[(nc * H + h) * W + w]);
                acc = is_max ? ops::binary::formula::max::apply(acc, v, 0) : acc + v;
                ++valid;
            }
        }
        if (!is_max) acc = acc / static_cast<C_t>(count_include_pad ? valid + padded : valid);
        y[f] = element<S>::store(acc);
    }
}

template <class S>
__global__ void batch_norm_kernel(std::int64_t n, const S* x, strided_map mx, std::int64_t inner, std::int64_t channels,
                                  const S* scale, const S* bias, const S* mean, const S* var, strided_map mc,
                                  compute_t<S> eps, S* y) {
    using C = compute_t<S>;
    TENSORACLE_GRID_STRIDE(i, n) {
        const std::int64_t c = mc.at((i / inner) % channels);
        const C v = element<S>::load(x[mx.at(i)]);
        const C d = ::sqrt(static_cast<C>(element<S>::load(var[c])) + eps);
        y[i] = element<S>::store((v - static_cast<C>(element<S>::load(mean[c]))) / d *
                                              static_cast<C>(element<S>::load(scale[c])) +
                                          static_cast<C>(element<S>::load(bias[c])));
    }
}

/// LayerNormalization: one block per row of `cols` contiguous elements.
template <class S>
__global__ void layer_norm_kernel(const S* x, std::int64_t cols, const S* scale, strided_map ms, const S* bias,
                                  strided_map mb, compute_t<S> eps, S* y) {
    using C = compute_t<S>;
    const S* row = x + static_cast<std::int64_t>(blockIdx.x) * cols;
    S* out = y + static_cast<std::int64_t>(blockIdx.x) * cols;
    C s = 0;
    for (std::int64_t k = threadIdx.x; k < cols; k += block) s += element<S>::load(row[k]);
    const C mean = block_fold<reduce_kind::sum, C>(s) / static_cast<C>(cols);
    C q = 0;
    for (std::int64_t k = threadIdx.x; k < cols; k += block) {
        const C d = static_cast<C>(element<S>::load(row[k])) - mean;
        q += d * d;
    }
    const C inv = C(1) / ::sqrt(block_fold<reduce_kind::sum, C>(q) / static_cast<C>(cols) + eps);
    for (std::int64_t k = threadIdx.x; k < cols; k += block) {
        C v = (static_cast<C>(element<S>::load(row[k])) - mean) * inv * static_cast<C>(element<S>::load(scale[ms.at(k)]));
        if (bias != nullptr) v += static_cast<C>(element<S>::load(bias[mb.at(k)]));
        out[k] = element<S>::store(v);
    }
}

template <class S>
__global__ void gather_kernel(std::int64_t total, const S* x, std::int64_t axis_len, std::int64_t inner,
                              const std::int64_t* idx, std::int64_t q, S* y) {
    TENSORACLE_GRID_STRIDE(f, total) {
        const std::int64_t i = f % inner, t = f / inner, j = t % q, o = t / q;
        y[f] = x[(o * axis_len + idx[j]) * inner + i];
    }
}

inline void launched(std::string_view what) {
    check(cudaGetLastError(), what);
}

/// Calls f(type tag) for the floating dtypes, else throws unsupported_error naming `where`.
template <class F>
decltype(auto) visit_floating(dtype d, std::string_view where, F&& f) {
    switch (d) {
        case dtype::f16: return f(static_cast<__half*>(nullptr));
        case dtype::bf16: return f(static_cast<__nv_bfloat16*>(nullptr));
        case dtype::f32: return f(static_cast<float*>(nullptr));
        case dtype::f64: return f(static_cast<double*>(nullptr));
        default: throw unsupported_error(where, "dtype " + std::string(name(d)) + " has no CUDA kernel here");
    }
}
/// Floating dtypes plus int32, int64 (and bool where `with_bool`).
template <class F>
decltype(auto) visit_numeric(dtype d, std::string_view where, F&& f, bool with_bool = false) {
    switch (d) {
        case dtype::i32: return f(static_cast<std::int32_t*>(nullptr));
        case dtype::i64: return f(static_cast<std::int64_t*>(nullptr));
        case dtype::boolean:
            if (with_bool) return f(static_cast<bool*>(nullptr));
            [[fallthrough]];
        default: return visit_floating(d, where, std::forward<F>(f));
    }
}
/// An unsigned type of each element width, for kernels that only move bits.
template <class F>
decltype(auto) visit_width(dtype d, F&& f) {
    switch (device_element_size(d)) {
        case 1: return f(static_cast<std::uint8_t*>(nullptr));
        case 2: return f(static_cast<std::uint16_t*>(nullptr));
        case 4: return f(static_cast<std::uint32_t*>(nullptr));
        default: return f(static_cast<std::uint64_t*>(nullptr));
    }
}
template <class T>
T* typed(const device_tensor& t) {
    return static_cast<T*>(t.data());
}

cublasHandle_t blas_handle() {
    static std::mutex m;
    static cublasHandle_t h = nullptr;
    const std::lock_guard<std::mutex> lock(m);
    if (h == nullptr) {
        const auto s = cublasCreate(&h);
        if (s != CUBLAS_STATUS_SUCCESS) throw cuda_error("cublasCreate", cublasGetStatusString(s));
    }
    return h;
}
inline void check_blas(cublasStatus_t s, std::string_view call) {
    if (s != CUBLAS_STATUS_SUCCESS) throw cuda_error(call, cublasGetStatusString(s));
}

}  // namespace kernels

// ---------------------------------------------------------------- element-wise

// Both lists, and the dispatch below, from cuda/elementwise_ops.hpp.
#define TENSORACLE_CUDA_NAME(OP, ...) #OP,
const std::vector<std::string_view>& unary_op_types() {
    static const std::vector<std::string_view> v{TENSORACLE_CUDA_UNARY_OPS(TENSORACLE_CUDA_NAME)};
    return v;
}
const std::vector<std::string_view>& binary_op_types() {
    static const std::vector<std::string_view> v{TENSORACLE_CUDA_BINARY_OPS(TENSORACLE_CUDA_NAME)};
    return v;
}
#undef TENSORACLE_CUDA_NAME

namespace kernels {
template <class F, class S, class A>
device_tensor run_unary(const device_tensor& x, const A& attrs, std::string_view where) {
    auto y = device_tensor::empty(x.element_dtype(), x.shape());
    const auto n = static_cast<std::int64_t>(x.size());
    if (n == 0) return y;
    if (x.contiguous()) {
        unary_contiguous<F, S><<<grid_for(n), block>>>(n, typed<const S>(x), typed<S>(y), attrs);
    } else {
        auto mx = x.map_to(x.shape(), where);
        collapse(mx);
        unary_strided<F, S><<<grid_for(n), block>>>(n, typed<const S>(x), mx, typed<S>(y), attrs);
    }
    launched(where);
    return y;
}

/// The attributes formula F takes, from the call's (ONNX defaults where alpha is not given).
template <class F>
auto unary_attributes(const elementwise_attributes& a, [[maybe_unused]] dtype d,
                      [[maybe_unused]] std::string_view where) {
    using namespace ops::unary;
    namespace uf = ops::unary::formula;
    [[maybe_unused]] const auto alpha = [&](float def) { return a.alpha_given ? a.alpha : def; };
    if constexpr (std::is_same_v<F, uf::leaky_relu>) {
        return alpha_attr{alpha(0.01f)};
    } else if constexpr (std::is_same_v<F, uf::elu>) {
        return elu_attr{alpha(1.0f)};
    } else if constexpr (std::is_same_v<F, uf::celu>) {
        if (d != dtype::f32) throw dtype_error(where, "Celu takes float32 only");
        return elu_attr{alpha(1.0f)};
    } else if constexpr (std::is_same_v<F, uf::selu>) {
        return selu_attr{alpha(selu_attr{}.alpha), a.gamma};
    } else if constexpr (std::is_same_v<F, uf::hard_sigmoid>) {
        return hard_sigmoid_attr{alpha(0.2f), a.beta};
    } else if constexpr (std::is_same_v<F, uf::thresholded_relu>) {
        return thresholded_relu_attr{alpha(1.0f)};
    } else {
        return 0;
    }
}
}  // namespace kernels

device_tensor unary(std::string_view op, const device_tensor& x, const elementwise_attributes& a) {
    namespace f = ops::unary::formula;
    const std::string where = "cuda::unary(" + std::string(op) + ")";
    const dtype d = x.element_dtype();
    // Integer inputs for the ops whose formula has an integer branch.
    if (d == dtype::i32 || d == dtype::i64) {
        return kernels::visit_numeric(d, where, [&](auto* tag) -> device_tensor {
            using S = std::remove_pointer_t<decltype(tag)>;
            if constexpr (std::is_integral_v<S> && !std::is_same_v<S, bool>) {
#define TENSORACLE_CUDA_UNARY(OP, F, INTEGERS)                                                          \
    if constexpr (INTEGERS) {                                                                           \
        if (op == #OP) {                                                                                \
            return kernels::run_unary<f::F, S>(x, kernels::unary_attributes<f::F>(a, d, where), where); \
        }                                                                                               \
    }
                TENSORACLE_CUDA_UNARY_OPS(TENSORACLE_CUDA_UNARY)
#undef TENSORACLE_CUDA_UNARY
            }
            throw unsupported_error(where, "dtype " + std::string(name(d)) + " has no CUDA kernel for this op");
        });
    }
    return kernels::visit_floating(d, where, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
#define TENSORACLE_CUDA_UNARY(OP, F, INTEGERS)                                                      \
    if (op == #OP) {                                                                                \
        return kernels::run_unary<f::F, S>(x, kernels::unary_attributes<f::F>(a, d, where), where); \
    }
        TENSORACLE_CUDA_UNARY_OPS(TENSORACLE_CUDA_UNARY)
#undef TENSORACLE_CUDA_UNARY
        throw unsupported_error(where, "no CUDA kernel for this op");
    });
}

namespace kernels {
template <class F, class S, class Out, class A>
device_tensor run_binary(const device_tensor& a, const device_tensor& b, dtype out, const A& attrs,
                         std::string_view where) {
    const auto shape = broadcast_shape({a.shape(), b.shape()}, where);
    auto y = device_tensor::empty(out, shape);
    const auto n = static_cast<std::int64_t>(y.size());
    if (n == 0) return y;
    const bool flat = a.contiguous() && b.contiguous() && a.shape() == shape && b.shape() == shape;
    if (flat) {
        binary_contiguous<F, S, Out><<<grid_for(n), block>>>(n, typed<const S>(a), typed<const S>(b), typed<Out>(y), attrs);
    } else {
        auto ma = a.map_to(shape, where), mb = b.map_to(shape, where);
        collapse(ma, mb);
        binary_strided<F, S, Out><<<grid_for(n), block>>>(n, typed<const S>(a), ma, typed<const S>(b), mb, typed<Out>(y),
                                                          attrs);
    }
    launched(where);
    return y;
}
}  // namespace kernels

device_tensor binary(std::string_view op, const device_tensor& a, const device_tensor& b,
                     const elementwise_attributes& at) {
    namespace f = ops::binary::formula;
    using kernels::compare_formula;
    using kernels::comparison;
    const std::string where = "cuda::binary(" + std::string(op) + ")";
    const dtype d = a.element_dtype();
    if (b.element_dtype() != d) {
        throw unsupported_error(where, "operands of different dtypes (" + std::string(name(d)) + ", " +
                                           std::string(name(b.element_dtype())) + ") have no CUDA kernel");
    }
    return kernels::visit_numeric(d, where, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
        constexpr bool integral = std::is_integral_v<S>;
#define TENSORACLE_CUDA_BINARY(OP, F, COMPARES, FLOATING_ONLY)                                                 \
    if constexpr (!(FLOATING_ONLY && integral)) {                                                            \
        if (op == #OP) {                                                                                     \
            if constexpr (std::is_same_v<F, f::fmod>) {                                                      \
                if (at.fmod != 1) throw error(where, "floating-point inputs require fmod=1");                \
            }                                                                                                \
            if constexpr (COMPARES) return kernels::run_binary<F, S, bool>(a, b, dtype::boolean, 0, where);  \
            else return kernels::run_binary<F, S, S>(a, b, d, 0, where);                                     \
        }                                                                                                    \
    }
        TENSORACLE_CUDA_BINARY_OPS(TENSORACLE_CUDA_BINARY)
#undef TENSORACLE_CUDA_BINARY
        throw unsupported_error(where, "dtype " + std::string(name(d)) + " has no CUDA kernel for this op");
    }, /*with_bool=*/false);
}

device_tensor where(const device_tensor& c, const device_tensor& x, const device_tensor& y) {
    constexpr std::string_view at = "cuda::where";
    if (c.element_dtype() != dtype::boolean) throw dtype_error(at, "condition must be bool");
    if (x.element_dtype() != y.element_dtype()) throw dtype_error(at, "X and Y must have one dtype");
    const auto shape = broadcast_shape({c.shape(), x.shape(), y.shape()}, at);
    auto out = device_tensor::empty(x.element_dtype(), shape);
    const auto n = static_cast<std::int64_t>(out.size());
    if (n == 0) return out;
    kernels::visit_width(x.element_dtype(), [&](auto* tag) {
        using W = std::remove_pointer_t<decltype(tag)>;
        auto mc = c.map_to(shape, at), mx = x.map_to(shape, at), my = y.map_to(shape, at);
        collapse(mc, mx, my);
        kernels::where_kernel<W><<<kernels::grid_for(n), kernels::block>>>(n, kernels::typed<const bool>(c), mc,
                                                                          kernels::typed<const W>(x), mx,
                                                                          kernels::typed<const W>(y), my,
                                                                          kernels::typed<W>(out));
    });
    kernels::launched(at);
    return out;
}

device_tensor clip(const device_tensor& x, std::optional<double> lo, std::optional<double> hi) {
    constexpr std::string_view at = "cuda::clip";
    return kernels::visit_numeric(x.element_dtype(), at, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
        using C = kernels::compute_t<S>;
        auto y = device_tensor::empty(x.element_dtype(), x.shape());
        const auto n = static_cast<std::int64_t>(y.size());
        if (n == 0) return y;
        kernels::clip_kernel<S><<<kernels::grid_for(n), kernels::block>>>(
            n, kernels::typed<const S>(x), x.map_to(x.shape(), at), kernels::typed<S>(y), lo.has_value(),
            static_cast<C>(lo.value_or(0.0)), hi.has_value(), static_cast<C>(hi.value_or(0.0)));
        kernels::launched(at);
        return y;
    });
}

device_tensor cast(const device_tensor& x, dtype to) {
    constexpr std::string_view at = "cuda::cast";
    return kernels::visit_numeric(x.element_dtype(), at, [&](auto* from_tag) -> device_tensor {
        using From = std::remove_pointer_t<decltype(from_tag)>;
        return kernels::visit_numeric(to, at, [&](auto* to_tag) -> device_tensor {
            using To = std::remove_pointer_t<decltype(to_tag)>;
            auto y = device_tensor::empty(to, x.shape());
            const auto n = static_cast<std::int64_t>(y.size());
            if (n == 0) return y;
            kernels::cast_kernel<To, From><<<kernels::grid_for(n), kernels::block>>>(
                n, kernels::typed<const From>(x), x.map_to(x.shape(), at), kernels::typed<To>(y));
            kernels::launched(at);
            return y;
        }, true);
    }, true);
}

namespace kernels {
inline void copy_into(const device_tensor& src, const device_tensor& dst, std::string_view at) {
    const auto n = static_cast<std::int64_t>(dst.size());
    if (n == 0) return;
    visit_width(src.element_dtype(), [&](auto* tag) {
        using W = std::remove_pointer_t<decltype(tag)>;
        auto ms = src.map_to(dst.shape(), at), md = dst.map_to(dst.shape(), at);
        collapse(ms, md);
        copy_kernel<W><<<grid_for(n), block>>>(n, typed<const W>(src), ms, typed<W>(dst), md);
    });
    launched(at);
}
}  // namespace kernels

device_tensor contiguous(const device_tensor& x) {
    auto y = device_tensor::empty(x.element_dtype(), x.shape());
    kernels::copy_into(x, y, "cuda::contiguous");
    return y;
}

device_tensor expand(const device_tensor& x, const shape_type& shape) {
    const auto out = broadcast_shape({x.shape(), shape}, "cuda::expand");
    auto y = device_tensor::empty(x.element_dtype(), out);
    kernels::copy_into(x, y, "cuda::expand");
    return y;
}

// ------------------------------------------------------------------ reductions

device_tensor reduce(reduce_kind kind, const device_tensor& x, const std::vector<std::int64_t>& axes, bool keepdims,
                     bool noop_with_empty_axes) {
    constexpr std::string_view at = "cuda::reduce";
    const auto plan = plan_reduction(x.shape(), x.strides(), x.offset(), axes, keepdims, noop_with_empty_axes, at);
    return kernels::visit_floating(x.element_dtype(), at, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
        auto y = device_tensor::empty(x.element_dtype(), plan.out_shape);
        if (plan.outputs == 0) return y;
        switch (kind) {
            case reduce_kind::sum: kernels::reduce_typed<reduce_kind::sum, S>(x, plan, y); break;
            case reduce_kind::mean: kernels::reduce_typed<reduce_kind::mean, S>(x, plan, y); break;
            case reduce_kind::max: kernels::reduce_typed<reduce_kind::max, S>(x, plan, y); break;
            case reduce_kind::min: kernels::reduce_typed<reduce_kind::min, S>(x, plan, y); break;
            case reduce_kind::prod: kernels::reduce_typed<reduce_kind::prod, S>(x, plan, y); break;
            case reduce_kind::log_sum_exp: kernels::reduce_typed<reduce_kind::log_sum_exp, S>(x, plan, y); break;
            case reduce_kind::log_sum: kernels::reduce_typed<reduce_kind::log_sum, S>(x, plan, y); break;
            case reduce_kind::l1: kernels::reduce_typed<reduce_kind::l1, S>(x, plan, y); break;
            case reduce_kind::l2: kernels::reduce_typed<reduce_kind::l2, S>(x, plan, y); break;
            case reduce_kind::sum_square: kernels::reduce_typed<reduce_kind::sum_square, S>(x, plan, y); break;
        }
        kernels::launched(at);
        return y;
    });
}

device_tensor softmax(const device_tensor& x, std::int64_t axis, bool log) {
    const std::string at = log ? "cuda::softmax(log)" : "cuda::softmax";
    const auto rank = static_cast<std::int64_t>(x.rank());
    if (axis < -rank || axis >= rank || rank == 0) throw shape_error(at, "axis out of range");
    const auto ax = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
    return kernels::visit_floating(x.element_dtype(), at, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
        auto y = device_tensor::empty(x.element_dtype(), x.shape());
        if (y.size() == 0) return y;
        // Rows: every axis but `ax`.
        const auto rows = plan_reduction(x.shape(), x.strides(), x.offset(), {static_cast<std::int64_t>(ax)}, false,
                                         false, at);
        const auto out_rows = plan_reduction(y.shape(), y.strides(), 0, {static_cast<std::int64_t>(ax)}, false, false, at);
        kernels::softmax_kernel<S><<<static_cast<unsigned>(rows.outputs), kernels::block>>>(
            kernels::typed<const S>(x), rows.kept, static_cast<std::int64_t>(x.shape()[ax]), x.strides()[ax],
            kernels::typed<S>(y), out_rows.kept, y.strides()[ax], log);
        kernels::launched(at);
        return y;
    });
}

// ------------------------------------------------------------------- products

namespace kernels {
struct blas_types {
    cudaDataType_t data;
    cublasComputeType_t compute;
};
inline blas_types blas_types_of(dtype d, gemm_precision p, std::string_view at) {
    switch (d) {
        case dtype::f64: return {CUDA_R_64F, p == gemm_precision::pedantic ? CUBLAS_COMPUTE_64F_PEDANTIC : CUBLAS_COMPUTE_64F};
        case dtype::f32:
            return {CUDA_R_32F, p == gemm_precision::pedantic ? CUBLAS_COMPUTE_32F_PEDANTIC
                                : p == gemm_precision::tf32   ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                              : CUBLAS_COMPUTE_32F};
        case dtype::f16: return {CUDA_R_16F, p == gemm_precision::pedantic ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F};
        case dtype::bf16: return {CUDA_R_16BF, p == gemm_precision::pedantic ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F};
        default: throw unsupported_error(at, "dtype " + std::string(name(d)) + " has no cuBLAS product");
    }
}

/// Row-major C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b] for `batch` products
/// with element strides between them (0 repeats an operand).
inline void gemm_rows(dtype d, gemm_precision p, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                      double alpha, const void* a, std::int64_t stride_a, const void* b, std::int64_t stride_b,
                      double beta, void* c, std::int64_t stride_c, std::int64_t batch, std::string_view at) {
    if (m == 0 || n == 0 || batch == 0) return;
    const auto t = blas_types_of(d, p, at);
    const float af = static_cast<float>(alpha), bf = static_cast<float>(beta);
    const bool dbl = d == dtype::f64;
    const void* pa = dbl ? static_cast<const void*>(&alpha) : &af;
    const void* pb = dbl ? static_cast<const void*>(&beta) : &bf;
    // Row-major as column-major: C^T = op(B)^T op(A)^T, operands swapped.
    const int lda = static_cast<int>(ta ? m : k), ldb = static_cast<int>(tb ? k : n), ldc = static_cast<int>(n);
    check_blas(cublasGemmStridedBatchedEx(blas_handle(), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                          static_cast<int>(n), static_cast<int>(m), static_cast<int>(std::max<std::int64_t>(k, 1)), pa, b, t.data, ldb,
                                          stride_b, a, t.data, lda, stride_a, pb, c, t.data, ldc, stride_c,
                                          static_cast<int>(batch), t.compute, CUBLAS_GEMM_DEFAULT),
               std::string(at) + ": cublasGemmStridedBatchedEx");
}
}  // namespace kernels

device_tensor matmul(const device_tensor& a_in, const device_tensor& b_in, gemm_precision p) {
    constexpr std::string_view at = "cuda::matmul";
    if (a_in.element_dtype() != b_in.element_dtype()) throw dtype_error(at, "A and B must have one dtype");
    if (a_in.rank() == 0 || b_in.rank() == 0) throw shape_error(at, "operands must have rank >= 1");
    const dtype d = a_in.element_dtype();
    device_tensor a = a_in.contiguous() ? a_in : contiguous(a_in);
    device_tensor b = b_in.contiguous() ? b_in : contiguous(b_in);
    const bool a_vec = a.rank() == 1, b_vec = b.rank() == 1;
    if (a_vec) a = a.reshaped({1, a.shape()[0]});
    if (b_vec) b = b.reshaped({b.shape()[0], 1});
    const std::size_t m = a.shape()[a.rank() - 2], k = a.shape()[a.rank() - 1];
    const std::size_t k2 = b.shape()[b.rank() - 2], n = b.shape()[b.rank() - 1];
    if (k != k2) throw shape_error(at, "inner dimensions differ: " + std::to_string(k) + " and " + std::to_string(k2));
    const shape_type ab(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
    const auto batch_shape = broadcast_shape({ab, bb}, at);
    shape_type out = batch_shape;
    if (!a_vec) out.push_back(m);
    if (!b_vec) out.push_back(n);
    auto y = device_tensor::empty(d, out);
    const auto batch = static_cast<std::int64_t>(element_count(batch_shape));
    if (y.size() == 0) return y;
    const auto w = static_cast<std::int64_t>(device_element_size(d));
    // Batch offsets of A and B (elements); one strided-batched call where they
    // progress evenly, else one call per batch item.
    const auto ma = broadcast_map(batch_shape, ab, contiguous_strides(ab), 0, at);
    const auto mb = broadcast_map(batch_shape, bb, contiguous_strides(bb), 0, at);
    const auto sa = static_cast<std::int64_t>(m * k), sb = static_cast<std::int64_t>(k * n), sc = static_cast<std::int64_t>(m * n);
    const std::int64_t step_a = batch > 1 ? ma.at(1) : 0, step_b = batch > 1 ? mb.at(1) : 0;
    bool even = true;
    for (std::int64_t i = 0; i < batch && even; ++i) even = ma.at(i) == i * step_a && mb.at(i) == i * step_b;
    auto* pa = static_cast<const std::byte*>(a.data());
    auto* pb = static_cast<const std::byte*>(b.data());
    auto* pc = static_cast<std::byte*>(y.data());
    if (k == 0) {  // empty inner dimension: zeros
        check(cudaMemset(y.data(), 0, y.size() * device_element_size(d)), "cudaMemset");
        return y;
    }
    if (even) {
        kernels::gemm_rows(d, p, false, false, static_cast<std::int64_t>(m), static_cast<std::int64_t>(n),
                           static_cast<std::int64_t>(k), 1.0, pa, step_a * sa, pb, step_b * sb, 0.0, pc, sc, batch, at);
    } else {
        for (std::int64_t i = 0; i < batch; ++i) {
            kernels::gemm_rows(d, p, false, false, static_cast<std::int64_t>(m), static_cast<std::int64_t>(n),
                               static_cast<std::int64_t>(k), 1.0, pa + ma.at(i) * sa * w, 0, pb + mb.at(i) * sb * w, 0,
                               0.0, pc + i * sc * w, 0, 1, at);
        }
    }
    return y;
}

device_tensor gemm(const device_tensor& a_in, const device_tensor& b_in, const device_tensor* c, float alpha,
                   float beta, bool trans_a, bool trans_b, gemm_precision p) {
    constexpr std::string_view at = "cuda::gemm";
    if (a_in.rank() != 2 || b_in.rank() != 2) throw shape_error(at, "A and B must be matrices");
    if (a_in.element_dtype() != b_in.element_dtype()) throw dtype_error(at, "A and B must have one dtype");
    const dtype d = a_in.element_dtype();
    const device_tensor a = a_in.contiguous() ? a_in : contiguous(a_in);
    const device_tensor b = b_in.contiguous() ? b_in : contiguous(b_in);
    const std::size_t m = trans_a ? a.shape()[1] : a.shape()[0], k = trans_a ? a.shape()[0] : a.shape()[1];
    const std::size_t kb = trans_b ? b.shape()[1] : b.shape()[0], n = trans_b ? b.shape()[0] : b.shape()[1];
    if (k != kb) throw shape_error(at, "inner dimensions differ: " + std::to_string(k) + " and " + std::to_string(kb));
    device_tensor y;
    if (c != nullptr && beta != 0.0f) {
        if (c->element_dtype() != d) throw dtype_error(at, "C must have A's dtype");
        if (c->rank() > 2) throw shape_error(at, "C must broadcast to (M, N)");
        y = expand(*c, {m, n});
        if (y.shape() != shape_type{m, n}) throw shape_error(at, "C does not broadcast to (M, N)");
    } else {
        y = device_tensor::empty(d, {m, n});
        beta = 0.0f;
    }
    if (k == 0) {
        if (beta == 0.0f) check(cudaMemset(y.data(), 0, y.size() * device_element_size(d)), "cudaMemset");
        else y = binary("Mul", y, to_device(tensor::from(array<float>{beta}).cast(d)));
        return y;
    }
    kernels::gemm_rows(d, p, trans_a, trans_b, static_cast<std::int64_t>(m), static_cast<std::int64_t>(n),
                       static_cast<std::int64_t>(k), alpha, a.data(), 0, b.data(), 0, beta, y.data(), 0, 1, at);
    return y;
}

// ------------------------------------------------------------ convolution, pooling

device_tensor conv2d(const device_tensor& x_in, const device_tensor& w_in, const device_tensor* bias,
                     const window_2d& win, std::int64_t group, const shape_type& out_shape, gemm_precision p) {
    constexpr std::string_view at = "cuda::conv2d";
    if (x_in.rank() != 4 || w_in.rank() != 4 || out_shape.size() != 4) throw unsupported_error(at, "2-D convolutions (NCHW) only");
    if (x_in.element_dtype() != w_in.element_dtype()) throw dtype_error(at, "X and W must have one dtype");
    const dtype d = x_in.element_dtype();
    const device_tensor x = x_in.contiguous() ? x_in : contiguous(x_in);
    const device_tensor w = w_in.contiguous() ? w_in : contiguous(w_in);
    const auto N = static_cast<std::int64_t>(x.shape()[0]), C = static_cast<std::int64_t>(x.shape()[1]);
    const auto H = static_cast<std::int64_t>(x.shape()[2]), W = static_cast<std::int64_t>(x.shape()[3]);
    const auto M = static_cast<std::int64_t>(w.shape()[0]);
    const auto OH = static_cast<std::int64_t>(out_shape[2]), OW = static_cast<std::int64_t>(out_shape[3]);
    if (group <= 0 || C % group != 0 || M % group != 0 || static_cast<std::int64_t>(w.shape()[1]) * group != C ||
        static_cast<std::int64_t>(out_shape[0]) != N || static_cast<std::int64_t>(out_shape[1]) != M) {
        throw shape_error(at, "X, W, group and the output shape do not fit together");
    }
    if (static_cast<std::int64_t>(w.shape()[2]) != win.kernel[0] || static_cast<std::int64_t>(w.shape()[3]) != win.kernel[1]) {
        throw shape_error(at, "kernel_shape differs from W's spatial dims");
    }
    auto y = device_tensor::empty(d, out_shape);
    if (y.size() == 0) return y;
    const std::int64_t Cg = C / group, Mg = M / group, K = Cg * win.kernel[0] * win.kernel[1], P = OH * OW;
    const auto width = static_cast<std::int64_t>(device_element_size(d));
    // The bias enters the product as beta * C with C = B broadcast over (N, M, OH*OW), so the
    // sum is rounded once (after the GEMM, a second rounding would show where B cancels it).
    double beta = 0.0;
    if (bias != nullptr) {
        if (bias->element_dtype() != d || bias->rank() != 1 || static_cast<std::int64_t>(bias->shape()[0]) != M) {
            throw shape_error(at, "B must be a vector of M elements of X's dtype");
        }
        const auto b2 = bias->contiguous() ? *bias : contiguous(*bias);
        kernels::copy_into(b2.reshaped({static_cast<std::size_t>(M), 1}),
                           y.reshaped({static_cast<std::size_t>(N), static_cast<std::size_t>(M), static_cast<std::size_t>(P)}),
                           at);
        beta = 1.0;
    }
    device_buffer col(static_cast<std::size_t>(N * K * P * width));
    for (std::int64_t g = 0; g < group; ++g) {
        kernels::visit_floating(d, at, [&](auto* tag) {
            using S = std::remove_pointer_t<decltype(tag)>;
            const std::int64_t total = N * K * P;
            kernels::im2col_kernel<S><<<kernels::grid_for(total), kernels::block>>>(
                total, kernels::typed<const S>(x), C, H, W, g * Cg, Cg, win, OH, OW, static_cast<S*>(col.data()));
        });
        kernels::launched(at);
        // Y[n, g*Mg:(g+1)*Mg] (Mg x P) = W_g (Mg x K) * col[n] (K x P) + beta * Y, batched over n.
        kernels::gemm_rows(d, p, false, false, Mg, P, K, 1.0, static_cast<const std::byte*>(w.data()) + g * Mg * K * width,
                           0, col.data(), K * P, beta, static_cast<std::byte*>(y.data()) + g * Mg * P * width, M * P, N, at);
    }
    return y;  // col is freed in stream order, after the kernels
}

namespace kernels {
inline device_tensor pool(const device_tensor& x_in, const window_2d& win, bool is_max, bool include_pad,
                          const shape_type& out_shape, std::string_view at) {
    if (x_in.rank() != 4 || out_shape.size() != 4) throw unsupported_error(at, "2-D pooling (NCHW) only");
    if (out_shape[0] != x_in.shape()[0] || out_shape[1] != x_in.shape()[1]) throw shape_error(at, "output shape does not fit X");
    const device_tensor x = x_in.contiguous() ? x_in : contiguous(x_in);
    auto y = device_tensor::empty(x.element_dtype(), out_shape);
    const auto total = static_cast<std::int64_t>(y.size());
    if (total == 0) return y;
    visit_floating(x.element_dtype(), at, [&](auto* tag) {
        using S = std::remove_pointer_t<decltype(tag)>;
        pool_kernel<S><<<grid_for(total), block>>>(total, typed<const S>(x), static_cast<std::int64_t>(x.shape()[1]),
                                                   static_cast<std::int64_t>(x.shape()[2]),
                                                   static_cast<std::int64_t>(x.shape()[3]), win,
                                                   static_cast<std::int64_t>(out_shape[2]),
                                                   static_cast<std::int64_t>(out_shape[3]), is_max, include_pad,
                                                   typed<S>(y));
    });
    launched(at);
    return y;
}
}  // namespace kernels

device_tensor max_pool2d(const device_tensor& x, const window_2d& win, const shape_type& out_shape) {
    return kernels::pool(x, win, true, false, out_shape, "cuda::max_pool2d");
}
device_tensor average_pool2d(const device_tensor& x, const window_2d& win, bool count_include_pad,
                             const shape_type& out_shape) {
    return kernels::pool(x, win, false, count_include_pad, out_shape, "cuda::average_pool2d");
}

// -------------------------------------------------------------- normalisation

device_tensor batch_norm(const device_tensor& x, const device_tensor& scale, const device_tensor& bias,
                         const device_tensor& mean, const device_tensor& var, float epsilon) {
    constexpr std::string_view at = "cuda::batch_norm";
    if (x.rank() < 2) throw shape_error(at, "X must have rank >= 2 (N, C, ...)");
    const std::size_t C = x.shape()[1];
    for (const auto* t : {&scale, &bias, &mean, &var}) {
        if (t->rank() != 1 || t->shape()[0] != C || t->element_dtype() != x.element_dtype() || !t->contiguous()) {
            throw shape_error(at, "scale, B, mean and var must be contiguous vectors of C elements of X's dtype");
        }
    }
    return kernels::visit_floating(x.element_dtype(), at, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
        auto y = device_tensor::empty(x.element_dtype(), x.shape());
        const auto n = static_cast<std::int64_t>(y.size());
        if (n == 0) return y;
        const auto inner = static_cast<std::int64_t>(element_count(shape_type(x.shape().begin() + 2, x.shape().end())));
        kernels::batch_norm_kernel<S><<<kernels::grid_for(n), kernels::block>>>(
            n, kernels::typed<const S>(x), x.map_to(x.shape(), at), inner, static_cast<std::int64_t>(C),
            kernels::typed<const S>(scale), kernels::typed<const S>(bias), kernels::typed<const S>(mean),
            kernels::typed<const S>(var), scale.map_to(scale.shape(), at), static_cast<kernels::compute_t<S>>(epsilon),
            kernels::typed<S>(y));
        kernels::launched(at);
        return y;
    });
}

device_tensor layer_norm(const device_tensor& x_in, const device_tensor& scale, const device_tensor* bias,
                         std::int64_t axis, float epsilon) {
    constexpr std::string_view at = "cuda::layer_norm";
    const auto rank = static_cast<std::int64_t>(x_in.rank());
    if (axis < -rank || axis >= rank) throw shape_error(at, "axis out of range");
    const auto ax = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
    const device_tensor x = x_in.contiguous() ? x_in : contiguous(x_in);
    const shape_type norm(x.shape().begin() + static_cast<std::ptrdiff_t>(ax), x.shape().end());
    const auto cols = static_cast<std::int64_t>(element_count(norm));
    const auto rows = static_cast<std::int64_t>(element_count(shape_type(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(ax))));
    if (scale.element_dtype() != x.element_dtype() || (bias != nullptr && bias->element_dtype() != x.element_dtype())) {
        throw dtype_error(at, "Scale and B must have X's dtype");
    }
    const auto ms = scale.map_to(norm, at);
    const auto mb = bias != nullptr ? bias->map_to(norm, at) : strided_map{};
    return kernels::visit_floating(x.element_dtype(), at, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
        auto y = device_tensor::empty(x.element_dtype(), x.shape());
        if (y.size() == 0) return y;
        kernels::layer_norm_kernel<S><<<static_cast<unsigned>(rows), kernels::block>>>(
            kernels::typed<const S>(x), cols, kernels::typed<const S>(scale), ms,
            bias != nullptr ? kernels::typed<const S>(*bias) : nullptr, mb, static_cast<kernels::compute_t<S>>(epsilon),
            kernels::typed<S>(y));
        kernels::launched(at);
        return y;
    });
}

// --------------------------------------------------------------- data movement

device_tensor concat(const std::vector<device_tensor>& xs, std::int64_t axis) {
    constexpr std::string_view at = "cuda::concat";
    if (xs.empty()) throw shape_error(at, "needs at least one input");
    const auto rank = static_cast<std::int64_t>(xs[0].rank());
    if (axis < -rank || axis >= rank) throw shape_error(at, "axis out of range");
    const auto ax = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
    shape_type out = xs[0].shape();
    out[ax] = 0;
    for (const auto& x : xs) {
        if (x.rank() != xs[0].rank() || x.element_dtype() != xs[0].element_dtype()) {
            throw shape_error(at, "inputs must share rank and dtype");
        }
        for (std::size_t k = 0; k < x.rank(); ++k) {
            if (k != ax && x.shape()[k] != xs[0].shape()[k]) throw shape_error(at, "inputs differ off the axis");
        }
        out[ax] += x.shape()[ax];
    }
    auto y = device_tensor::empty(xs[0].element_dtype(), out);
    std::int64_t start = 0;
    for (const auto& x : xs) {
        if (x.shape()[ax] != 0) kernels::copy_into(x, y.sliced(ax, start, 1, x.shape()[ax]), at);
        start += static_cast<std::int64_t>(x.shape()[ax]);
    }
    return y;
}

device_tensor gather(const device_tensor& x_in, const tensor& indices, std::int64_t axis) {
    constexpr std::string_view at = "cuda::gather";
    const auto rank = static_cast<std::int64_t>(x_in.rank());
    if (rank == 0 || axis < -rank || axis >= rank) throw shape_error(at, "axis out of range");
    const auto ax = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
    if (indices.element_dtype() != dtype::i64 && indices.element_dtype() != dtype::i32) {
        throw dtype_error(at, "indices must be int32 or int64");
    }
    const auto len = static_cast<std::int64_t>(x_in.shape()[ax]);
    const auto idx = indices.to<std::int64_t>();
    array<std::int64_t> norm = idx;
    for (std::size_t i = 0; i < norm.size(); ++i) {
        std::int64_t v = norm.data()[i];
        if (v < -len || v >= len) {
            throw shape_error(at, "index " + std::to_string(v) + " is out of range for axis length " + std::to_string(len));
        }
        norm.data()[i] = v < 0 ? v + len : v;
    }
    const device_tensor x = x_in.contiguous() ? x_in : contiguous(x_in);
    shape_type out(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(ax));
    out.insert(out.end(), indices.shape().begin(), indices.shape().end());
    out.insert(out.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(ax) + 1, x.shape().end());
    auto y = device_tensor::empty(x.element_dtype(), out);
    const auto total = static_cast<std::int64_t>(y.size());
    if (total == 0) return y;
    const auto d_idx = to_device(tensor::from(norm));
    const auto inner = static_cast<std::int64_t>(element_count(shape_type(x.shape().begin() + static_cast<std::ptrdiff_t>(ax) + 1, x.shape().end())));
    kernels::visit_width(x.element_dtype(), [&](auto* tag) {
        using W = std::remove_pointer_t<decltype(tag)>;
        kernels::gather_kernel<W><<<kernels::grid_for(total), kernels::block>>>(
            total, kernels::typed<const W>(x), len, inner, kernels::typed<const std::int64_t>(d_idx),
            static_cast<std::int64_t>(norm.size()), kernels::typed<W>(y));
    });
    kernels::launched(at);
    return y;
}

}  // namespace tensoracle::cuda
// ---- end tensoracle/cuda/ops.cuh ----
