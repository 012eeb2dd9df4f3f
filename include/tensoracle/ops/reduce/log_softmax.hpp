// tensoracle: LogSoftmax (log(softmax(x)) along an axis, shifted by the row maximum as
// softmax.hpp explains).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string_view>
#include <vector>

#include "tensoracle/core/scalar.hpp"
#include "tensoracle/ops/reduce/detail/axis_normalizer.hpp"
#include "tensoracle/ops/reduce/detail/constant_of.hpp"
#include "tensoracle/ops/reduce/softmax.hpp"
#include "tensoracle/spec/hints.hpp"

namespace tensoracle::ops {

namespace reduce {
struct log_softmax_fn {
    static constexpr std::string_view op_type = "LogSoftmax";
    template <class A>
    static void apply(std::vector<A>& v) {
        const A m = softmax_fn::shift(v);
        A s = 0;
        for (const A& x : v) s += math::exp(x - m);
        const A ls = math::log(s);
        for (A& x : v) x = (x - m) - ls;
    }
    /// Row VJP: x's cotangent is w - softmax(x) * sum(w); x is scratch.
    template <class V>
    static void vjp(std::vector<V>& x, std::vector<V>& w) {
        softmax_fn::apply(x);
        V sum = 0;
        for (const V& wi : w) sum += wi;
        for (std::size_t i = 0; i < x.size(); ++i) w[i] -= x[i] * sum;
    }
    /// (-inf, 0], one element <= -log n (1% slack for rounding); all zeros when n = 1.
    static spec::value_facts facts(std::size_t n) {
        if (n == 1) return spec::value_facts::constant(0.0);
        auto f = spec::value_facts::within(-std::numeric_limits<double>::infinity(), 0.0);
        f.some_at_most = -0.99 * std::log(static_cast<double>(n));
        return f;
    }
};
}  // namespace reduce

using LogSoftmax = axis_normalizer<reduce::log_softmax_fn>;

}  // namespace tensoracle::ops
