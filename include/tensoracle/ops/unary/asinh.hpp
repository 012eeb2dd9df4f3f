// tensoracle: Asinh (the inverse hyperbolic sine of X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct asinh_fn : formula::asinh {
    static constexpr std::string_view op_type = "Asinh";
    static constexpr int opset = 9;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = no_attributes;
};

}  // namespace unary

using Asinh = unary_elementwise<unary::asinh_fn>;

}  // namespace tensoracle::ops
