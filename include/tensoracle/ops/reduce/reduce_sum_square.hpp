// tensoracle: ReduceSumSquare (the sum of x^2 over the reduced axes).
#pragma once

#include <cstddef>
#include <span>

#include "tensoracle/ops/detail/reduce_util.hpp"
#include "tensoracle/ops/reduce/detail/reduce_formula.hpp"
#include "tensoracle/ops/reduce/detail/reduce_op.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
// reduced = sum(x^2)
struct sum_square_fn {
    static constexpr std::string_view op_type = "ReduceSumSquare";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    static spec::value_facts group_facts(const spec::value_facts& x, double n) { return sum_facts(square_facts(x), n); }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s = detail::acc_add(s, detail::acc_mul(x, x));
        return s;
    }
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        for (std::size_t i = 0; i < v.size(); ++i) d[i] = v[i] + v[i];
    }
};
}  // namespace reduce

using ReduceSumSquare = reduce_op<reduce::sum_square_fn>;

}  // namespace tensoracle::ops
