// tensoracle: Acos (the arccosine of X, element-wise).
#pragma once

#include <cmath>
#include <string_view>
#include <vector>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct acos_fn : formula::acos, spec::elementwise_signature<"Acos", 7, types::ieee_floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("|X| <= 1", [](double x) { return std::fabs(x) - 1.0; })}; }
    static constexpr value_range range{-1.0, 1.0};
};

}  // namespace unary

using Acos = unary_elementwise<unary::acos_fn>;

}  // namespace tensoracle::ops
