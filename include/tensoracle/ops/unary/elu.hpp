// tensoracle: Elu (X where X >= 0, alpha * (e^X - 1) below).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct elu_fn : formula::elu, spec::elementwise_signature<"Elu", 6, types::ieee_floating, elu_attr> {};

}  // namespace unary

using Elu = unary_elementwise<unary::elu_fn>;

}  // namespace tensoracle::ops
