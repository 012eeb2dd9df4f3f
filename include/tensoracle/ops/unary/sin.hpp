// tensoracle: Sin (the sine of X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct sin_fn : formula::sin, spec::elementwise_signature<"Sin", 7, types::ieee_floating> {};

}  // namespace unary

using Sin = unary_elementwise<unary::sin_fn>;

}  // namespace tensoracle::ops
