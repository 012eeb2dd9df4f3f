// tensoracle: Max (the element-wise largest of one or more broadcast inputs; NaN wins).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/formulas.hpp"

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct max_fn : formula::max, spec::elementwise_signature<"Max", 13, types::numeric> {
    static constexpr corner_kind corner_facts = corner_kind::max;
    static constexpr bool variadic = true;
};

}  // namespace binary

using Max = broadcast_elementwise<binary::max_fn>;

}  // namespace tensoracle::ops
