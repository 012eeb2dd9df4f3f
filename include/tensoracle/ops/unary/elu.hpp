// tensoracle: Elu (X where X >= 0, alpha * (e^X - 1) below).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct elu_fn : formula::elu {
    static constexpr std::string_view op_type = "Elu";
    static constexpr int opset = 6;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = elu_attr;
};

}  // namespace unary

using Elu = unary_elementwise<unary::elu_fn>;

}  // namespace tensoracle::ops
