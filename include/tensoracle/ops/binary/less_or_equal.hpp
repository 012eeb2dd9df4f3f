// tensoracle: LessOrEqual (A <= B, broadcast, to bool).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"

namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct less_or_equal_fn : spec::predicate_signature<"LessOrEqual", 16, types::numeric> {
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a <= b;
    }
};

}  // namespace binary

using LessOrEqual = broadcast_elementwise<binary::less_or_equal_fn>;

}  // namespace tensoracle::ops
