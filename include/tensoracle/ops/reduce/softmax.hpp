// tensoracle: Softmax (exp(x) / sum(exp(x)) along an axis, shifted by the row maximum).
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string_view>
#include <vector>

#include "tensoracle/core/scalar.hpp"
#include "tensoracle/ops/reduce/detail/axis_normalizer.hpp"
#include "tensoracle/ops/reduce/detail/constant_of.hpp"
#include "tensoracle/spec/hints.hpp"

namespace tensoracle::ops {

namespace reduce {
// Softmax and LogSoftmax subtract the row maximum m first: exp(x - m) / sum(exp(x - m))
// equals exp(x) / sum(exp(x)) exactly in real arithmetic (the factor exp(-m) cancels),
// and x - m - log(sum(exp(x - m))) equals log(exp(x) / sum(exp(x))). With the shift every
// exp is <= 1 and the sum is >= 1, so nothing overflows or divides by zero. The shift is
// a constant (constant_of) so that AD scalars get the unshifted derivative exactly.
struct softmax_fn {
    static constexpr std::string_view op_type = "Softmax";
    /// The shift m: the row maximum, as a constant.
    template <class A>
    static A shift(const std::vector<A>& v) {
        A m = -std::numeric_limits<A>::infinity();
        for (const A& x : v) m = std::max(m, x);
        return constant_of(m);
    }
    template <class A>
    static void apply(std::vector<A>& v) {
        const A m = shift(v);
        A s = 0;
        for (A& x : v) s += (x = math::exp(x - m));
        for (A& x : v) x /= s;
    }
    /// Row VJP: with y = softmax(x), x's cotangent is y * (w - <w, y>); x is scratch.
    template <class V>
    static void vjp(std::vector<V>& x, std::vector<V>& w) {
        apply(x);
        V dot = 0;
        for (std::size_t i = 0; i < x.size(); ++i) dot += w[i] * x[i];
        for (std::size_t i = 0; i < x.size(); ++i) w[i] = x[i] * (w[i] - dot);
    }
    /// Rows of length n: (0, 1] (0 on underflow), one element <= 1/n and one >= 1/n
    /// (1% slack for rounding); all ones when n = 1.
    static spec::value_facts facts(std::size_t n) {
        if (n == 1) return spec::value_facts::constant(1.0);
        auto f = spec::value_facts::within(0.0, 1.0);
        f.some_at_most = 1.01 / static_cast<double>(n);
        f.some_at_least = 0.99 / static_cast<double>(n);
        return f;
    }
};
}  // namespace reduce

using Softmax = axis_normalizer<reduce::softmax_fn>;

}  // namespace tensoracle::ops
