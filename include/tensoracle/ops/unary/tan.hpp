// tensoracle: Tan (the tangent of X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct tan_fn : formula::tan, spec::elementwise_signature<"Tan", 7, types::ieee_floating> {
    static constexpr value_range range{-1.5, 1.5};
};

}  // namespace unary

using Tan = unary_elementwise<unary::tan_fn>;

}  // namespace tensoracle::ops
