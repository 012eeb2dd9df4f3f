// tensoracle: Reciprocal (1 / X, element-wise).
#pragma once

#include <cmath>
#include <string_view>
#include <vector>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct reciprocal_fn : formula::reciprocal {
    static constexpr std::string_view op_type = "Reciprocal";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::floating;
    static constexpr dtype_set out_types = types::floating;
    using attributes = no_attributes;
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {rule("|X| > 0", [](double x) { return -std::fabs(x) + eps; })};
    }
    static constexpr value_range range{0.5, 4.0};
};

}  // namespace unary

using Reciprocal = unary_elementwise<unary::reciprocal_fn>;

}  // namespace tensoracle::ops
