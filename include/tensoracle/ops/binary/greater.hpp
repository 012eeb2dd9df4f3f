// tensoracle: Greater (A > B, broadcast, to bool).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"

namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct greater_fn : spec::predicate_signature<"Greater", 13, types::numeric> {
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a > b;
    }
};

}  // namespace binary

using Greater = broadcast_elementwise<binary::greater_fn>;

}  // namespace tensoracle::ops
