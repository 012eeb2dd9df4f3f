// tensoracle: Celu (max(0, X) + min(0, alpha * (e^(X / alpha) - 1)), element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct celu_fn : formula::celu, spec::elementwise_signature<"Celu", 12, spec::dtypes_of(dtype::f32), elu_attr> {
    /// max(0, x) + min(0, alpha * expm1(x / alpha)), written per sign with the same values (also -0 -> +0 and
    /// NaN -> 0, as max/min give), so that the derivative at 0 is 1 and not max's and min's 0.
};

}  // namespace unary

using Celu = unary_elementwise<unary::celu_fn>;

}  // namespace tensoracle::ops
