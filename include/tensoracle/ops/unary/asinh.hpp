// tensoracle: Asinh (the inverse hyperbolic sine of X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct asinh_fn : formula::asinh, spec::elementwise_signature<"Asinh", 9, types::ieee_floating> {};

}  // namespace unary

using Asinh = unary_elementwise<unary::asinh_fn>;

}  // namespace tensoracle::ops
