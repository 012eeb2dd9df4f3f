// tensoracle: Atan (the arctangent of X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct atan_fn : formula::atan, spec::elementwise_signature<"Atan", 7, types::ieee_floating> {};

}  // namespace unary

using Atan = unary_elementwise<unary::atan_fn>;

}  // namespace tensoracle::ops
