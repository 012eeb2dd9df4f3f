// tensoracle: Neg (-X, element-wise; integers wrap).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct neg_fn : formula::neg, spec::elementwise_signature<"Neg", 13, types::signed_numeric> {
    static constexpr bool keeps_integers = true;
};

}  // namespace unary

using Neg = unary_elementwise<unary::neg_fn>;

}  // namespace tensoracle::ops
