// tensoracle: Floor (the largest integer <= X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct floor_fn : formula::floor, spec::elementwise_signature<"Floor", 13, types::floating> {
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};

}  // namespace unary

using Floor = unary_elementwise<unary::floor_fn>;

}  // namespace tensoracle::ops
