// tensoracle: Add (A + B, broadcast; integers wrap).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/formulas.hpp"

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct add_fn : formula::add, spec::elementwise_signature<"Add", 14, types::numeric> {
    static constexpr corner_kind corner_facts = corner_kind::plain;
};

}  // namespace binary

using Add = broadcast_elementwise<binary::add_fn>;

}  // namespace tensoracle::ops
