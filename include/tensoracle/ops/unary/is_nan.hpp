// tensoracle: IsNaN (whether each element of X is NaN).
#pragma once

#include <cmath>
#include <string_view>

#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

// Not differentiable: boolean output.
struct is_nan_fn {
    static constexpr std::string_view op_type = "IsNaN";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::floating;
    static constexpr dtype_set out_types = types::boolean;
    static constexpr dtype output_dtype = dtype::boolean;
    using attributes = no_attributes;
    template <class V>
    static bool apply(V x, const attributes&) { return std::isnan(x); }
};

}  // namespace unary

using IsNaN = unary_elementwise<unary::is_nan_fn>;

}  // namespace tensoracle::ops
