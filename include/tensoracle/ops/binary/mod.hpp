// tensoracle: Mod (the remainder of A / B, broadcast; integer modulo by zero throws).
//
// Semantics chosen where ONNX leaves them open: Mod with fmod=0 takes the
// divisor's sign, with fmod=1 the dividend's.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace binary {

struct mod_attr {
    std::int64_t fmod = 0;
};
struct mod_fn : spec::elementwise_signature<"Mod", 13, types::numeric, mod_attr> {
    template <class V>
    static V apply(V a, V b, const attributes& at) {
        if constexpr (std::is_integral_v<V>) {
            if (b == 0) throw error("Mod", "integer modulo by zero");
            if (std::is_signed_v<V> && b == V(-1)) return V(0);
            V r = static_cast<V>(a % b);
            if (at.fmod == 0 && r != 0 && ((r < 0) != (b < 0))) r = static_cast<V>(r + b);
            return r;
        } else {
            if (at.fmod == 0) throw error("Mod", "floating-point inputs require fmod=1");
            return formula::fmod::apply(a, b, at);  // d/da = 1, d/db = -trunc(a/b)
        }
    }
    static constexpr std::array<double, 2> rhs_range{1.0, 5.0};
    static void hints(spec::hints& h) { h.flag("fmod"); }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        return {{c.attr("fmod") == 1, "floating-point inputs require fmod=1"}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::hinge_rule("|B| > 0", 1, [](double y) { return -std::fabs(y) + 1e-10; })};
    }
};

}  // namespace binary

using Mod = broadcast_elementwise<binary::mod_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::binary::mod_attr, fmod);
