// tensoracle: Exp (e^X, element-wise).
#pragma once

#include <cmath>
#include <string_view>
#include <vector>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct exp_fn : formula::exp, spec::elementwise_signature<"Exp", 13, types::floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::overflow_rule("X <= log(max finite)", 0, [](double x, double m) { return x - std::log(m); })};
    }
};

}  // namespace unary

using Exp = unary_elementwise<unary::exp_fn>;

}  // namespace tensoracle::ops
