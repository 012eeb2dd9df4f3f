// tensoracle: Neg (-X, element-wise; integers wrap).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct neg_fn : formula::neg {
    static constexpr std::string_view op_type = "Neg";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::signed_numeric;
    static constexpr dtype_set out_types = types::signed_numeric;
    using attributes = no_attributes;
    static constexpr bool keeps_integers = true;
};

}  // namespace unary

using Neg = unary_elementwise<unary::neg_fn>;

}  // namespace tensoracle::ops
