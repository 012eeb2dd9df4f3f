// tensoracle: ReduceMean (the mean over the reduced axes).
#pragma once

#include <algorithm>
#include <span>

#include "tensoracle/ops/reduce/detail/reduce_formula.hpp"
#include "tensoracle/ops/reduce/detail/reduce_op.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
// reduced = sum(x) / count (empty: 0 / 0 = NaN)
struct mean_fn {
    static constexpr std::string_view op_type = "ReduceMean";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    /// Inside the input's range (not integral: a mean of integers need not be one).
    static spec::value_facts group_facts(const spec::value_facts& x, double) { return affine_facts(x, 1.0, 0.0); }
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s += x;
        return s / static_cast<A>(v.size());
    }
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        std::fill(d.begin(), d.end(), V(1) / static_cast<V>(v.size()));
    }
};
}  // namespace reduce

using ReduceMean = reduce_op<reduce::mean_fn>;

}  // namespace tensoracle::ops
