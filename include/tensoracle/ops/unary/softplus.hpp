// tensoracle: Softplus (log(e^X + 1), element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

/// Softplus = log(exp(x) + 1), evaluated as max(x, 0) + log1p(exp(-|x|)) so
/// that it does not overflow for large x (same value where both are finite).
/// Written per sign so that no kink of max or |.| shows in the derivative at 0.
struct softplus_fn : formula::softplus, spec::elementwise_signature<"Softplus", 1, types::ieee_floating> {};

}  // namespace unary

using Softplus = unary_elementwise<unary::softplus_fn>;

}  // namespace tensoracle::ops
