// tensoracle: Sigmoid (1 / (1 + e^-X), element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct sigmoid_fn : formula::sigmoid {
    static constexpr std::string_view op_type = "Sigmoid";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::floating;
    static constexpr dtype_set out_types = types::floating;
    using attributes = no_attributes;
};

}  // namespace unary

using Sigmoid = unary_elementwise<unary::sigmoid_fn>;

}  // namespace tensoracle::ops
