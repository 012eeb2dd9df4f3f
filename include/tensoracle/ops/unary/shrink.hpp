// tensoracle: Shrink (X + bias below -lambd, X - bias above lambd, 0 between).
#pragma once

#include <string_view>
#include <type_traits>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct shrink_attr {
    float bias = 0.0f;
    float lambd = 0.5f;
};
template <class V>
V cast_to(double d) {
    return value_cast<V>(d);
}
struct shrink_fn : spec::elementwise_signature<"Shrink", 9, types::ieee_floating | types::integers, shrink_attr> {
    static constexpr double proxy_slope = 0.1;  // derivative is 0 inside [-lambd, lambd]
    template <class V>
    static V apply(V x, const attributes& a) {
        if constexpr (std::is_integral_v<V>) {
            // Integers compare and shift in double, then truncate and saturate to the type.
            const double d = static_cast<double>(x);
            if (d < -a.lambd) return cast_to<V>(d + a.bias);
            if (d > a.lambd) return cast_to<V>(d - a.bias);
            return V(0);
        } else {
            // In V itself, so that AD scalars keep the derivative 1 outside [-lambd, lambd]. Same values
            // as in double for f16/bf16/f32 (V = float): a float sum rounded from double is the float sum.
            if (x < V(-a.lambd)) return x + V(a.bias);
            if (x > V(a.lambd)) return x - V(a.bias);
            return V(0);
        }
    }
    static constexpr value_range range{-4.0, 4.0};
};

}  // namespace unary

using Shrink = unary_elementwise<unary::shrink_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::shrink_attr, bias, lambd);
