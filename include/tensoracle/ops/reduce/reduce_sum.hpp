// tensoracle: ReduceSum (the sum over the reduced axes; the axes also as an int64 input).
#pragma once

#include <algorithm>
#include <span>

#include "tensoracle/ops/detail/reduce_util.hpp"
#include "tensoracle/ops/reduce/detail/reduce_formula.hpp"
#include "tensoracle/ops/reduce/detail/reduce_op.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
// reduced = sum(x)
struct sum_fn {
    static constexpr std::string_view op_type = "ReduceSum";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    static constexpr bool axes_input = true;
    static spec::value_facts group_facts(const spec::value_facts& x, double n) { return sum_facts(x, n); }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s = detail::acc_add(s, x);
        return s;
    }
    /// d reduced / d v[i], for the op's own VJP (reduce_op::vjp).
    template <class V>
    static void partials(std::span<const V>, std::span<V> d) {
        std::fill(d.begin(), d.end(), V(1));
    }
};
}  // namespace reduce

using ReduceSum = reduce_op<reduce::sum_fn>;

}  // namespace tensoracle::ops
