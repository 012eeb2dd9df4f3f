// tensoracle: Atanh (the inverse hyperbolic tangent of X, element-wise).
#pragma once

#include <cmath>
#include <string_view>
#include <vector>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct atanh_fn : formula::atanh, spec::elementwise_signature<"Atanh", 9, types::ieee_floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {rule("|X| < 1", [](double x) { return std::fabs(x) - 1.0 + eps; })};
    }
    static constexpr value_range range{-0.95, 0.95};
};

}  // namespace unary

using Atanh = unary_elementwise<unary::atanh_fn>;

}  // namespace tensoracle::ops
