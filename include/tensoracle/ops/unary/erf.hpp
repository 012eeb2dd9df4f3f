// tensoracle: Erf (the error function of X, element-wise).
#pragma once

#include <cmath>
#include <string_view>
#include <type_traits>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

/// Erf also takes integers (ONNX-13): erf in double, truncated to the type.
struct erf_fn : formula::erf, spec::elementwise_signature<"Erf", 13, types::numeric> {
    template <class V>
    static V apply(V x, const attributes& a) {
        if constexpr (std::is_integral_v<V>) {
            return value_cast<V>(std::erf(static_cast<double>(x)));
        } else {
            return formula::erf::apply(x, a);
        }
    }
    // Integer data truncates to 0 unless |x| >= 6 (then +-1), and no gradient moves
    // integers: draw from 6 up, so that a divisor or a sum that needs it nonzero
    // starts there (the search's smaller scales and all-zeros starts reach 0).
    static spec::hints hints() { return spec::hints{}.integer_range(0, 6.0, 12.0); }
};

}  // namespace unary

using Erf = unary_elementwise<unary::erf_fn>;

}  // namespace tensoracle::ops
