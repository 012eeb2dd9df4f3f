// tensoracle: Mul (A * B, broadcast; integers wrap).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/formulas.hpp"

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct mul_fn : formula::mul {
    static constexpr std::string_view op_type = "Mul";
    static constexpr int opset = 14;
    static constexpr dtype_set types = types::numeric;
    static constexpr dtype_set out_types = types::numeric;
    using attributes = no_attributes;
    static constexpr corner_kind corner_facts = corner_kind::plain;
};

}  // namespace binary

using Mul = broadcast_elementwise<binary::mul_fn>;

}  // namespace tensoracle::ops
