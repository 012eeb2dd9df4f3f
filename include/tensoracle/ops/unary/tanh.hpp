// tensoracle: Tanh (the hyperbolic tangent of X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct tanh_fn : formula::tanh {
    static constexpr std::string_view op_type = "Tanh";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::floating;
    static constexpr dtype_set out_types = types::floating;
    using attributes = no_attributes;
};

}  // namespace unary

using Tanh = unary_elementwise<unary::tanh_fn>;

}  // namespace tensoracle::ops
