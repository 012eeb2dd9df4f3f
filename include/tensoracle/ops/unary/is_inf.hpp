// tensoracle: IsInf (whether each element of X is an infinity of a detected sign).
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct is_inf_attr {
    std::int64_t detect_negative = 1;
    std::int64_t detect_positive = 1;
};
// Not differentiable: boolean output.
struct is_inf_fn : spec::predicate_signature<"IsInf", 10, spec::dtypes_of(dtype::f32, dtype::f64), is_inf_attr> {
    template <class V>
    static bool apply(V x, const attributes& a) {
        return std::isinf(x) && ((x > V(0) && a.detect_positive != 0) || (x < V(0) && a.detect_negative != 0));
    }
};

}  // namespace unary

using IsInf = unary_elementwise<unary::is_inf_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::is_inf_attr, detect_negative, detect_positive);
