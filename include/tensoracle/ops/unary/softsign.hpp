// tensoracle: Softsign (X / (1 + |X|), element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct softsign_fn : formula::softsign {
    static constexpr std::string_view op_type = "Softsign";
    static constexpr int opset = 1;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = no_attributes;
};

}  // namespace unary

using Softsign = unary_elementwise<unary::softsign_fn>;

}  // namespace tensoracle::ops
