// tensoracle: element types, at compile time (the C++ scalar type is the tag)
// and at run time (the `dtype` enum), with one table of facts behind both.
#pragma once

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

#include "tensoracle/core/error.hpp"
#include "tensoracle/core/float16.hpp"

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
