// tensoracle: Abs (|X|, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct abs_fn : formula::abs {
    static constexpr std::string_view op_type = "Abs";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::numeric;
    static constexpr dtype_set out_types = types::numeric;
    using attributes = no_attributes;
    static constexpr bool keeps_integers = true;
};

}  // namespace unary

using Abs = unary_elementwise<unary::abs_fn>;

}  // namespace tensoracle::ops
