// tensoracle: Sin (the sine of X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct sin_fn : formula::sin {
    static constexpr std::string_view op_type = "Sin";
    static constexpr int opset = 7;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = no_attributes;
};

}  // namespace unary

using Sin = unary_elementwise<unary::sin_fn>;

}  // namespace tensoracle::ops
