// tensoracle: Min (the element-wise smallest of one or more broadcast inputs; NaN wins).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/formulas.hpp"

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct min_fn : formula::min {
    static constexpr std::string_view op_type = "Min";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::numeric;
    static constexpr dtype_set out_types = types::numeric;
    using attributes = no_attributes;
    static constexpr corner_kind corner_facts = corner_kind::min;
    static constexpr bool variadic = true;
};

}  // namespace binary

using Min = broadcast_elementwise<binary::min_fn>;

}  // namespace tensoracle::ops
