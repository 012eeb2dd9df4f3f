// tensoracle: ReduceLogSumExp (log(sum(exp(x))) over the reduced axes, shifted by the maximum).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tensoracle/core/scalar.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/reduce/detail/constant_of.hpp"
#include "tensoracle/ops/reduce/detail/reduce_formula.hpp"
#include "tensoracle/ops/reduce/detail/reduce_op.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
/// Stable log(sum(exp(v))): with m = max(v), log(sum(exp(v))) = m + log(sum(exp(v - m)))
/// exactly in real arithmetic (exp(a - m) = exp(a) / exp(m)), and exp(v - m) <= 1
/// cannot overflow. Empty or all -inf: -inf (log 0); a NaN or +inf: NaN or +inf.
template <class A>
A log_sum_exp(std::span<const A> v) {
    A m = -std::numeric_limits<A>::infinity();
    for (const A& x : v) {
        if (math::isnan(x)) return x;
        m = std::max(m, x);
    }
    if (math::isinf(m)) return m;  // -inf: every term is exp(-inf) = 0; +inf: the sum is +inf
    m = constant_of(m);
    A s = 0;
    for (const A& x : v) s += math::exp(x - m);
    return m + math::log(s);
}

// reduced = log(sum(exp(x))), computed as max + log(sum(exp(x - max))) (value-preserving)
struct log_sum_exp_fn {
    static constexpr std::string_view op_type = "ReduceLogSumExp";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    /// max(x) <= LSE <= max(x) + log n: every group of n values in [lo, hi] lies in [lo + log n, hi + log n].
    static spec::value_facts group_facts(const spec::value_facts& x, double n) { return affine_facts(x, 1.0, std::log(n)); }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        return log_sum_exp(v);
    }
    /// softmax(v): exp(v - max) / sum(exp(v - max)).
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        V m = -std::numeric_limits<V>::infinity(), sum{0};
        for (const V& x : v) m = std::max(m, x);
        for (std::size_t i = 0; i < v.size(); ++i) sum += (d[i] = std::exp(v[i] - m));
        for (V& x : d) x /= sum;
    }
    static std::vector<std::pair<std::string, double (*)(std::span<const double>, dtype)>> rules() {
        // Kept inside the range where the naive formula log(sum(exp(X))) is finite
        // too, so implementations without the max shift are comparable.
        return {{"sum(exp(X)) <= max finite", [](std::span<const double> g, dtype d) {
                     return log_sum_exp(g) - std::log(detail::max_finite(d));
                 }}};
    }
    /// What the rule needs of every element (LSE >= max(X)): X <= log(max finite),
    /// which the generator checks against what it knows of X (an integer Size of
    /// 4,680 elements cannot go through ReduceLogSumExp).
    static constexpr double (*every_element_at_limit)(double, double) = [](double x, double m) { return x - std::log(m); };
};
}  // namespace reduce

using ReduceLogSumExp = reduce_op<reduce::log_sum_exp_fn>;

}  // namespace tensoracle::ops
