// tensoracle: Round (X rounded to the nearest integer, halves to even).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

/// Round: halves go to the even neighbour (ONNX and IEEE default).
struct round_fn : formula::round, spec::elementwise_signature<"Round", 11, types::ieee_floating> {
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};

}  // namespace unary

using Round = unary_elementwise<unary::round_fn>;

}  // namespace tensoracle::ops
