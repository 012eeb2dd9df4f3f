// tensoracle: Log (the natural logarithm of X, element-wise).
#pragma once

#include <string_view>
#include <vector>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct log_fn : formula::log, spec::elementwise_signature<"Log", 13, types::floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("X > 0", [](double x) { return -x + eps; })}; }
    static constexpr value_range range{0.1, 10.0};
};

}  // namespace unary

using Log = unary_elementwise<unary::log_fn>;

}  // namespace tensoracle::ops
