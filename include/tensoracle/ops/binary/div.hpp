// tensoracle: Div (A / B, broadcast; integer division by zero throws).
//
// Semantics chosen where ONNX leaves them open: integer Div truncates toward
// zero (C, numpy's np.trunc(a / b) for ONNX).
#pragma once

#include <array>
#include <cmath>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct div_fn : formula::div, spec::elementwise_signature<"Div", 14, types::numeric> {
    template <class V>
    static V apply(V a, V b, const attributes&) {
        if constexpr (std::is_integral_v<V>) {
            if (b == 0) throw error("Div", "integer division by zero");
            if (std::is_signed_v<V> && b == V(-1)) return wrapping_sub(V(0), a);  // INT_MIN / -1 wraps
            return static_cast<V>(a / b);
        } else {
            return formula::div::apply(a, b, attributes{});
        }
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::hinge_rule("|B| > 0", 1, [](double y) { return -std::fabs(y) + 1e-10; })};
    }
    static constexpr std::array<double, 2> rhs_range{1.0, 4.0};
    // 0 / y is 0 wherever y is not 0 (where it is, Div's own rule fails); so is x / x 1.
    static void hints(spec::hints& h) {
        h.when_operands_equal(spec::value_facts::constant(1.0));
        h.facts([](std::span<const spec::value_facts> in, const spec::attribute_map&, std::span<const shape_type>) {
            const bool zero = !in.empty() && in[0].lo == 0.0 && in[0].hi == 0.0;
            return std::vector<spec::value_facts>{zero ? spec::value_facts::constant(0.0) : spec::value_facts{}};
        });
    }
};

}  // namespace binary

using Div = broadcast_elementwise<binary::div_fn>;

}  // namespace tensoracle::ops
