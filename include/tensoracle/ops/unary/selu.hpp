// tensoracle: Selu (gamma * (X where X > 0, alpha * (e^X - 1) elsewhere)).
#pragma once

#include <string_view>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct selu_fn : formula::selu {
    static constexpr std::string_view op_type = "Selu";
    static constexpr int opset = 6;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = selu_attr;
};

}  // namespace unary

using Selu = unary_elementwise<unary::selu_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::selu_attr, alpha, gamma);
