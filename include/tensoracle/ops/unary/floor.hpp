// tensoracle: Floor (the largest integer <= X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct floor_fn : formula::floor {
    static constexpr std::string_view op_type = "Floor";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::floating;
    static constexpr dtype_set out_types = types::floating;
    using attributes = no_attributes;
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};

}  // namespace unary

using Floor = unary_elementwise<unary::floor_fn>;

}  // namespace tensoracle::ops
