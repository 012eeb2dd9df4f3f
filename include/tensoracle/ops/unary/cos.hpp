// tensoracle: Cos (the cosine of X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct cos_fn : formula::cos {
    static constexpr std::string_view op_type = "Cos";
    static constexpr int opset = 7;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = no_attributes;
};

}  // namespace unary

using Cos = unary_elementwise<unary::cos_fn>;

}  // namespace tensoracle::ops
