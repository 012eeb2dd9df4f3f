// tensoracle: IsNaN (whether each element of X is NaN).
#pragma once

#include <cmath>
#include <string_view>

#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

// Not differentiable: boolean output.
struct is_nan_fn : spec::predicate_signature<"IsNaN", 13, types::floating> {
    template <class V>
    static bool apply(V x, const attributes&) { return std::isnan(x); }
};

}  // namespace unary

using IsNaN = unary_elementwise<unary::is_nan_fn>;

}  // namespace tensoracle::ops
