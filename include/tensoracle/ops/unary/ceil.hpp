// tensoracle: Ceil (the smallest integer >= X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct ceil_fn : formula::ceil, spec::elementwise_signature<"Ceil", 13, types::floating> {
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};

}  // namespace unary

using Ceil = unary_elementwise<unary::ceil_fn>;

}  // namespace tensoracle::ops
