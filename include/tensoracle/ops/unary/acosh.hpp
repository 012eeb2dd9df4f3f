// tensoracle: Acosh (the inverse hyperbolic cosine of X, element-wise).
#pragma once

#include <string_view>
#include <vector>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct acosh_fn : formula::acosh, spec::elementwise_signature<"Acosh", 9, types::ieee_floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("X >= 1", [](double x) { return 1.0 - x; })}; }
    static constexpr value_range range{1.0, 6.0};
};

}  // namespace unary

using Acosh = unary_elementwise<unary::acosh_fn>;

}  // namespace tensoracle::ops
