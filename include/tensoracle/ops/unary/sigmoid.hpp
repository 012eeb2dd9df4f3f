// tensoracle: Sigmoid (1 / (1 + e^-X), element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct sigmoid_fn : formula::sigmoid, spec::elementwise_signature<"Sigmoid", 13, types::floating> {};

}  // namespace unary

using Sigmoid = unary_elementwise<unary::sigmoid_fn>;

}  // namespace tensoracle::ops
