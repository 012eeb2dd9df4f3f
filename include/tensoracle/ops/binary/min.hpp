// tensoracle: Min (the element-wise smallest of one or more broadcast inputs; NaN wins).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/formulas.hpp"

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct min_fn : formula::min, spec::elementwise_signature<"Min", 13, types::numeric> {
    static constexpr corner_kind corner_facts = corner_kind::min;
    static constexpr bool variadic = true;
};

}  // namespace binary

using Min = broadcast_elementwise<binary::min_fn>;

}  // namespace tensoracle::ops
