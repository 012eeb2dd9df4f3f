// tensoracle: Or (A || B on bools, broadcast).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"

namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct logical_or_fn : spec::predicate_signature<"Or", 7, types::boolean> {
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a || b;
    }
};

}  // namespace binary

using Or = broadcast_elementwise<binary::logical_or_fn>;

}  // namespace tensoracle::ops
