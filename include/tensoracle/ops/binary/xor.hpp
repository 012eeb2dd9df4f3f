// tensoracle: Xor (A != B on bools, broadcast).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"

namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct logical_xor_fn {
    static constexpr std::string_view op_type = "Xor";
    static constexpr int opset = 7;
    static constexpr dtype_set types = types::boolean;
    static constexpr dtype_set out_types = types::boolean;
    static constexpr dtype output_dtype = dtype::boolean;
    using attributes = no_attributes;
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a != b;
    }
};

}  // namespace binary

using Xor = broadcast_elementwise<binary::logical_xor_fn>;

}  // namespace tensoracle::ops
