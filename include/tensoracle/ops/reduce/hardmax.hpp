// tensoracle: Hardmax (1 at the first maximum along an axis, 0 elsewhere).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "tensoracle/ops/reduce/detail/axis_normalizer.hpp"
#include "tensoracle/ops/reduce/detail/replaces.hpp"
#include "tensoracle/spec/hints.hpp"

namespace tensoracle::ops {

namespace reduce {
// 1 at the first maximum of the row (numpy argmax: the first NaN, if any), 0 elsewhere.
struct hardmax_fn {
    static constexpr std::string_view op_type = "Hardmax";
    template <class A>
    static void apply(std::vector<A>& v) {
        std::size_t best = 0;
        for (std::size_t i = 1; i < v.size(); ++i) {
            if (replaces<true>(v[i], v[best], false)) best = i;
        }
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = i == best ? A(1) : A(0);
    }
    /// Row VJP: a one-hot output is constant wherever it is defined.
    template <class V>
    static void vjp(std::vector<V>&, std::vector<V>& w) {
        std::fill(w.begin(), w.end(), V(0));
    }
    /// A one in every row, zeros beside it when n > 1.
    static spec::value_facts facts(std::size_t n) {
        return n == 1 ? spec::value_facts::constant(1.0) : spec::value_facts::within(0.0, 1.0, {0.0, 1.0});
    }
};
}  // namespace reduce

using Hardmax = axis_normalizer<reduce::hardmax_fn>;

}  // namespace tensoracle::ops
