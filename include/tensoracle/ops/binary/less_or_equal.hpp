// tensoracle: LessOrEqual (A <= B, broadcast, to bool).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"

namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct less_or_equal_fn {
    static constexpr std::string_view op_type = "LessOrEqual";
    static constexpr int opset = 16;
    static constexpr dtype_set types = types::numeric;
    static constexpr dtype_set out_types = types::boolean;
    static constexpr dtype output_dtype = dtype::boolean;
    using attributes = no_attributes;
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a <= b;
    }
};

}  // namespace binary

using LessOrEqual = broadcast_elementwise<binary::less_or_equal_fn>;

}  // namespace tensoracle::ops
