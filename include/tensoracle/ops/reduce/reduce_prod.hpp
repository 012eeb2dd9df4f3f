// tensoracle: ReduceProd (the product over the reduced axes).
#pragma once

#include <array>
#include <cstddef>
#include <span>

#include "tensoracle/ops/detail/reduce_util.hpp"
#include "tensoracle/ops/reduce/detail/reduce_formula.hpp"
#include "tensoracle/ops/reduce/detail/reduce_op.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
// reduced = prod(x) (empty: 1)
struct prod_fn {
    static constexpr std::string_view op_type = "ReduceProd";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A p{1};
        for (const A& x : v) p = detail::acc_mul(p, x);
        return p;
    }
    static constexpr std::array<double, 2> range{-1.5, 1.5};
    static constexpr std::size_t max_dim = 3;  // groups of at most 27: |prod| <= 1.5^27 < f16 max
    /// Its finiteness rule measures sum(log |x|) (reduce_op::domain): a product of thousands of
    /// factors overflows even double, and a loss of "1 per infinite group" has no slope to follow.
    static constexpr bool multiplicative = true;
};
}  // namespace reduce

using ReduceProd = reduce_op<reduce::prod_fn>;

}  // namespace tensoracle::ops
