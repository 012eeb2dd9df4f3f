// tensoracle: Cos (the cosine of X, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct cos_fn : formula::cos, spec::elementwise_signature<"Cos", 7, types::ieee_floating> {};

}  // namespace unary

using Cos = unary_elementwise<unary::cos_fn>;

}  // namespace tensoracle::ops
