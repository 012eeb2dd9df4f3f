// tensoracle: Not (logical not of a boolean X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

// Not differentiable: boolean in and out.
struct not_fn : formula::not_ {
    static constexpr std::string_view op_type = "Not";
    static constexpr int opset = 1;
    static constexpr dtype_set types = types::boolean;
    static constexpr dtype_set out_types = types::boolean;
    using attributes = no_attributes;
};

}  // namespace unary

using Not = unary_elementwise<unary::not_fn>;

}  // namespace tensoracle::ops
