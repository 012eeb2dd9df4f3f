// tensoracle: the plugged-in GEMM of ops/fast_paths.hpp as the nn ops use it (all_finite,
// fast_gemm_for), for the fast paths of MatMul, Gemm and Conv.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <type_traits>

#include "tensoracle/ops/fast_paths.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace nn {
/// Whether every value is finite: the exponent bits are not all ones. One
/// pass without an early exit, which the compiler vectorizes (a GEMM of 64 x 64
/// takes microseconds; a branchy scan of its inputs took as long).
template <class T>
bool all_finite(std::span<const T> v) {
    using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    static_assert(sizeof(T) == sizeof(bits) && std::numeric_limits<T>::is_iec559);
    constexpr bits exponent = static_cast<bits>(sizeof(T) == 4 ? 0x7f800000ull : 0x7ff0000000000000ull);
    // Blocks of a fixed size, so that the compiler's cheapest vectorization applies.
    constexpr std::size_t block = 16;
    bits any = 0;
    std::size_t i = 0;
    for (; i + block <= v.size(); i += block) {
        bits lane = 0;
        for (std::size_t j = 0; j < block; ++j) {
            lane |= static_cast<bits>((std::bit_cast<bits>(v[i + j]) & exponent) == exponent);
        }
        any |= lane;
    }
    for (; i < v.size(); ++i) any |= static_cast<bits>((std::bit_cast<bits>(v[i]) & exponent) == exponent);
    return any == 0;
}

/// The GEMM plugged in for T (ops/fast_paths.hpp) when every value of `in`
/// is finite, else null: BLASes may skip products with a zero factor, which
/// would turn 0 * inf into 0 where the formula gives NaN.
template <class T>
gemm_function<T> fast_gemm_for(std::initializer_list<const tensor*> in) {
    if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, double>) {
        return nullptr;  // no GEMM in the table for other dtypes
    } else {
        const auto gemm = fast_gemm<T>();
        if (gemm == nullptr) return nullptr;
        for (const tensor* t : in) {
            if (t != nullptr && !all_finite(t->values<T>())) return nullptr;
        }
        return gemm;
    }
}
}  // namespace nn

}  // namespace tensoracle::ops
