// tensoracle: LeakyRelu (X where X >= 0, alpha * X below).
#pragma once

#include <string_view>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct leaky_relu_fn : formula::leaky_relu, spec::elementwise_signature<"LeakyRelu", 16, types::floating, alpha_attr> {
};

}  // namespace unary

using LeakyRelu = unary_elementwise<unary::leaky_relu_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::alpha_attr, alpha);
