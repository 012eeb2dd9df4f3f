// tensoracle: Cosh (the hyperbolic cosine of X, element-wise).
#pragma once

#include <cmath>
#include <string_view>
#include <vector>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct cosh_fn : formula::cosh, spec::elementwise_signature<"Cosh", 9, types::ieee_floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::overflow_rule("|X| <= log(max finite)", 0,
                                      [](double x, double m) { return std::fabs(x) - std::log(m); })};
    }
};

}  // namespace unary

using Cosh = unary_elementwise<unary::cosh_fn>;

}  // namespace tensoracle::ops
