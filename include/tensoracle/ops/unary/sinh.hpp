// tensoracle: Sinh (the hyperbolic sine of X, element-wise).
#pragma once

#include <cmath>
#include <string_view>
#include <vector>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct sinh_fn : formula::sinh, spec::elementwise_signature<"Sinh", 9, types::ieee_floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        // log(max finite), not log(2 max finite): 2 max is inf in double, which let every float64 Sinh pass.
        return {detail::overflow_rule("|X| <= log(max finite)", 0,
                                      [](double x, double m) { return std::fabs(x) - std::log(m); })};
    }
};

}  // namespace unary

using Sinh = unary_elementwise<unary::sinh_fn>;

}  // namespace tensoracle::ops
