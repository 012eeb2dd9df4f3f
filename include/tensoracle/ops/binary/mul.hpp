// tensoracle: Mul (A * B, broadcast; integers wrap).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/formulas.hpp"

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct mul_fn : formula::mul, spec::elementwise_signature<"Mul", 14, types::numeric> {
    static constexpr corner_kind corner_facts = corner_kind::plain;
};

}  // namespace binary

using Mul = broadcast_elementwise<binary::mul_fn>;

}  // namespace tensoracle::ops
