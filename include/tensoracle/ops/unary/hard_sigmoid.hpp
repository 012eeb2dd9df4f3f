// tensoracle: HardSigmoid (max(0, min(1, alpha * X + beta)), element-wise).
#pragma once

#include <string_view>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct hard_sigmoid_fn : formula::hard_sigmoid,
                         spec::elementwise_signature<"HardSigmoid", 6, types::ieee_floating, hard_sigmoid_attr> {
    static constexpr double proxy_slope = 0.1;
};

}  // namespace unary

using HardSigmoid = unary_elementwise<unary::hard_sigmoid_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::hard_sigmoid_attr, alpha, beta);
