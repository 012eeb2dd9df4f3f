// tensoracle: Tan (the tangent of X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct tan_fn : formula::tan {
    static constexpr std::string_view op_type = "Tan";
    static constexpr int opset = 7;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = no_attributes;
    static constexpr value_range range{-1.5, 1.5};
};

}  // namespace unary

using Tan = unary_elementwise<unary::tan_fn>;

}  // namespace tensoracle::ops
