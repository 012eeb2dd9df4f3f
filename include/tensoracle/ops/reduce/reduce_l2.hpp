// tensoracle: ReduceL2 (the square root of the sum of x^2 over the reduced axes).
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tensoracle/core/scalar.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/reduce/detail/reduce_formula.hpp"
#include "tensoracle/ops/reduce/detail/reduce_op.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
// reduced = sqrt(sum(x^2))
struct l2_fn {
    static constexpr std::string_view op_type = "ReduceL2";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    static spec::value_facts group_facts(const spec::value_facts& x, double n) {
        return spec::facts::image(sum_facts(square_facts(x), n), [](double v) { return std::sqrt(v); });
    }
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        // An empty group is the constant 0: sqrt's derivative at 0 (1 / 0) would
        // turn a zero tangent into NaN although nothing depends on an input.
        if (v.empty()) return A{0};
        A s{0};
        for (const A& x : v) s += x * x;
        return math::sqrt(s);
    }
    static std::vector<std::pair<std::string, double (*)(std::span<const double>, dtype)>> rules() {
        // The sum of squares is formed before the root: it must not overflow the
        // accumulator, and its root must fit the element type.
        return {{"sum(X^2) <= min(max finite of the accumulator, max finite^2)", [](std::span<const double> g, dtype d) {
                     double s = 0;
                     for (const double x : g) s += x * x;
                     const double acc_max = d == dtype::f64 ? detail::max_finite(dtype::f64) : detail::max_finite(dtype::f32);
                     const double m = detail::max_finite(d);
                     return s - std::min(acc_max, m * m);
                 }}};
    }
};
}  // namespace reduce

using ReduceL2 = reduce_op<reduce::l2_fn>;

}  // namespace tensoracle::ops
