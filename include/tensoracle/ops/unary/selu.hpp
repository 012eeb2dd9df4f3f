// tensoracle: Selu (gamma * (X where X > 0, alpha * (e^X - 1) elsewhere)).
#pragma once

#include <string_view>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct selu_fn : formula::selu, spec::elementwise_signature<"Selu", 6, types::ieee_floating, selu_attr> {};

}  // namespace unary

using Selu = unary_elementwise<unary::selu_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::selu_attr, alpha, gamma);
