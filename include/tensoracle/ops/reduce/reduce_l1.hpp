// tensoracle: ReduceL1 (the sum of |x| over the reduced axes).
#pragma once

#include <cmath>
#include <span>

#include "tensoracle/ops/detail/reduce_util.hpp"
#include "tensoracle/ops/reduce/detail/reduce_formula.hpp"
#include "tensoracle/ops/reduce/detail/reduce_op.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
// reduced = sum(|x|)
struct l1_fn {
    static constexpr std::string_view op_type = "ReduceL1";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    static spec::value_facts group_facts(const spec::value_facts& x, double n) {
        return sum_facts(spec::facts::image(x, [](double v) { return std::fabs(v); }), n);
    }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s = detail::acc_add(s, detail::acc_abs(x));
        return s;
    }
};
}  // namespace reduce

using ReduceL1 = reduce_op<reduce::l1_fn>;

}  // namespace tensoracle::ops
