// tensoracle: ReduceMax (the maximum over the reduced axes, NaN propagating).
#pragma once

#include <limits>
#include <span>
#include <type_traits>

#include "tensoracle/core/scalar.hpp"
#include "tensoracle/ops/reduce/detail/reduce_formula.hpp"
#include "tensoracle/ops/reduce/detail/reduce_op.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
// reduced = max(x) (empty: -inf / lowest; NaN propagates)
struct max_fn {
    static constexpr std::string_view op_type = "ReduceMax";
    static constexpr int opset = 13;
    static constexpr dtype_set types = minmax_types;
    static constexpr bool within_input = true;
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        // A tie keeps the earlier element: the result carries its derivative.
        const auto better = [](const A& x, const A& m) { return x > m; };
        if constexpr (std::is_integral_v<A>) {
            return select_reduce(v, static_cast<A>(std::numeric_limits<T>::lowest()), better);
        } else {
            return select_reduce(v, A(-std::numeric_limits<A>::infinity()), better);
        }
    }
    /// 1 at the element reduce() returns (the first NaN, else the first maximum), 0 elsewhere.
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        select_partials(v, d, -std::numeric_limits<V>::infinity(), [](const V& x, const V& m) { return x > m; });
    }
};
}  // namespace reduce

using ReduceMax = reduce_op<reduce::max_fn>;

}  // namespace tensoracle::ops
