// tensoracle: ReduceMin (the minimum over the reduced axes, NaN propagating).
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
// reduced = min(x) (empty: +inf / max; NaN propagates)
struct min_fn {
    static constexpr std::string_view op_type = "ReduceMin";
    static constexpr int opset = 13;
    static constexpr dtype_set types = minmax_types;
    static constexpr bool within_input = true;
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        const auto better = [](const A& x, const A& m) { return x < m; };
        if constexpr (std::is_integral_v<A>) {
            return select_reduce(v, static_cast<A>(std::numeric_limits<T>::max()), better);
        } else {
            return select_reduce(v, A(std::numeric_limits<A>::infinity()), better);
        }
    }
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        select_partials(v, d, std::numeric_limits<V>::infinity(), [](const V& x, const V& m) { return x < m; });
    }
};
}  // namespace reduce

using ReduceMin = reduce_op<reduce::min_fn>;

}  // namespace tensoracle::ops
