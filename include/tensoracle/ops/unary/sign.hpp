// tensoracle: Sign (-1, 0 or 1 by the sign of X).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct sign_fn : formula::sign, spec::elementwise_signature<"Sign", 13, types::numeric> {
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};

}  // namespace unary

using Sign = unary_elementwise<unary::sign_fn>;

}  // namespace tensoracle::ops
