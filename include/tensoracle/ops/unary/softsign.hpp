// tensoracle: Softsign (X / (1 + |X|), element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct softsign_fn : formula::softsign, spec::elementwise_signature<"Softsign", 1, types::ieee_floating> {};

}  // namespace unary

using Softsign = unary_elementwise<unary::softsign_fn>;

}  // namespace tensoracle::ops
