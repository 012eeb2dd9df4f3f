// tensoracle: Not (logical not of a boolean X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

// Not differentiable: boolean in and out.
struct not_fn : formula::not_, spec::elementwise_signature<"Not", 1, types::boolean> {};

}  // namespace unary

using Not = unary_elementwise<unary::not_fn>;

}  // namespace tensoracle::ops
