// tensoracle: Sqrt (the square root of X, element-wise).
#pragma once

#include <string_view>
#include <vector>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct sqrt_fn : formula::sqrt, spec::elementwise_signature<"Sqrt", 13, types::floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("X >= 0", [](double x) { return -x; })}; }
    static constexpr value_range range{0.0, 10.0};
};

}  // namespace unary

using Sqrt = unary_elementwise<unary::sqrt_fn>;

}  // namespace tensoracle::ops
