// tensoracle: Reciprocal (1 / X, element-wise).
#pragma once

#include <cmath>
#include <string_view>
#include <vector>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct reciprocal_fn : formula::reciprocal, spec::elementwise_signature<"Reciprocal", 13, types::floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {rule("|X| > 0", [](double x) { return -std::fabs(x) + eps; })};
    }
    static constexpr value_range range{0.5, 4.0};
};

}  // namespace unary

using Reciprocal = unary_elementwise<unary::reciprocal_fn>;

}  // namespace tensoracle::ops
