// tensoracle: Atan (the arctangent of X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct atan_fn : formula::atan {
    static constexpr std::string_view op_type = "Atan";
    static constexpr int opset = 7;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = no_attributes;
};

}  // namespace unary

using Atan = unary_elementwise<unary::atan_fn>;

}  // namespace tensoracle::ops
