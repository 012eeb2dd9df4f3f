// tensoracle: Tanh (the hyperbolic tangent of X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct tanh_fn : formula::tanh, spec::elementwise_signature<"Tanh", 13, types::floating> {};

}  // namespace unary

using Tanh = unary_elementwise<unary::tanh_fn>;

}  // namespace tensoracle::ops
