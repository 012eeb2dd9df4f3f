// tensoracle: Sum (the element-wise sum of one or more broadcast inputs).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/formulas.hpp"

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct sum_fn : formula::sum {
    static constexpr std::string_view op_type = "Sum";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::floating;
    static constexpr dtype_set out_types = types::floating;
    using attributes = no_attributes;
    static constexpr corner_kind corner_facts = corner_kind::plain;
    static constexpr bool variadic = true;
};

}  // namespace binary

using Sum = broadcast_elementwise<binary::sum_fn>;

}  // namespace tensoracle::ops
