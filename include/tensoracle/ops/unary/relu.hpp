// tensoracle: Relu (max(X, 0), element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct relu_fn : formula::relu, spec::elementwise_signature<"Relu", 14, types::signed_numeric> {
    static constexpr double proxy_slope = 0.1;  // derivative is 0 for x < 0
    static constexpr bool keeps_integers = true;
};

}  // namespace unary

using Relu = unary_elementwise<unary::relu_fn>;

}  // namespace tensoracle::ops
