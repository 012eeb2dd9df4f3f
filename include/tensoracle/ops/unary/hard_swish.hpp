// tensoracle: HardSwish (X * max(0, min(1, X / 6 + 1 / 2)), element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct hard_swish_fn : formula::hard_swish, spec::elementwise_signature<"HardSwish", 14, types::ieee_floating> {
    static constexpr double proxy_slope = 0.1;  // derivative is 0 below -3
};

}  // namespace unary

using HardSwish = unary_elementwise<unary::hard_swish_fn>;

}  // namespace tensoracle::ops
