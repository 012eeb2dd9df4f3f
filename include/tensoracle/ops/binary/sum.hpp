// tensoracle: Sum (the element-wise sum of one or more broadcast inputs).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/formulas.hpp"

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct sum_fn : formula::sum, spec::elementwise_signature<"Sum", 13, types::floating> {
    static constexpr corner_kind corner_facts = corner_kind::plain;
    static constexpr bool variadic = true;
};

}  // namespace binary

using Sum = broadcast_elementwise<binary::sum_fn>;

}  // namespace tensoracle::ops
