// tensoracle: Equal (A == B, broadcast, to bool).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"

namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct equal_fn : spec::predicate_signature<"Equal", 13, types::all> {
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a == b;
    }
};

}  // namespace binary

using Equal = broadcast_elementwise<binary::equal_fn>;

}  // namespace tensoracle::ops
