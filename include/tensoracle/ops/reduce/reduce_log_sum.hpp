// tensoracle: ReduceLogSum (the log of the sum over the reduced axes).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tensoracle/core/scalar.hpp"
#include "tensoracle/ops/reduce/detail/reduce_formula.hpp"
#include "tensoracle/ops/reduce/detail/reduce_op.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
// reduced = log(sum(x)) (empty: -inf)
struct log_sum_fn {
    static constexpr std::string_view op_type = "ReduceLogSum";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    static spec::value_facts group_facts(const spec::value_facts& x, double n) {
        return spec::facts::image(sum_facts(x, n), [](double v) { return std::log(v); });
    }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s += x;
        return math::log(s);
    }
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        V s{0};
        for (const V& x : v) s += x;
        std::fill(d.begin(), d.end(), V(1) / s);
    }
    static std::vector<std::pair<std::string, double (*)(std::span<const double>, dtype)>> rules() {
        return {{"sum(X) > 0 over each reduced group", [](std::span<const double> g, dtype) {
                     double s = 0;
                     for (const double x : g) s += x;
                     return 1e-10 - s;
                 }}};
    }
    /// A group's sum is positive only if some element is.
    static constexpr double (*some_element)(double) = [](double x) { return 1e-10 - x; };
    static constexpr std::array<double, 2> range{0.1, 4.0};
};
}  // namespace reduce

using ReduceLogSum = reduce_op<reduce::log_sum_fn>;

}  // namespace tensoracle::ops
