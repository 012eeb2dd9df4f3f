// tensoracle: what the Reduce* formulas (reduce::*_fn of ReduceSum ... ReduceLogSumExp)
// share: their dtype sets, value-facts helpers and select_reduce and select_partials
// (ReduceMax, ReduceMin).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>

#include "tensoracle/core/scalar.hpp"
#include "tensoracle/spec/hints.hpp"
#include "tensoracle/spec/op.hpp"

namespace tensoracle::ops {

namespace reduce {
using spec::dtype_set;
namespace types = spec::types;

/// A selecting reduction: the first NaN, else the running value (from `init`, an
/// empty group's result) replaced by each element `better` than it.
template <class A, class Better>
A select_reduce(std::span<const A> v, A init, Better better) {
    A m = init;
    for (const A& x : v) {
        if constexpr (!std::is_integral_v<A>) {
            if (math::isnan(x)) return x;
        }
        m = better(x, m) ? x : m;
    }
    return m;
}

/// Partials of a selecting reduction, walked as its reduce() walks: 1 at the
/// element it returns (the first NaN, else the last element `better` than the
/// running value, which starts at `init`), 0 elsewhere; all 0 when none is
/// taken (the result is then `init`, a constant).
template <class V, class Better>
void select_partials(std::span<const V> v, std::span<V> d, V init, Better better) {
    std::fill(d.begin(), d.end(), V(0));
    std::size_t at = v.size();
    V m = init;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (std::isnan(v[i])) {
            at = i;
            break;
        }
        if (better(v[i], m)) {
            m = v[i];
            at = i;
        }
    }
    if (at < v.size()) d[at] = V(1);
}

/// What a * x + b holds (a > 0) where x holds `x`: a constant stays one. A
/// reduction's value facts (the generator sizes groups from the input and
/// output shapes): a sum of n elements holding `x` is affine_facts(x, n, 0).
inline spec::value_facts affine_facts(const spec::value_facts& x, double a, double b) {
    if (x.lo == x.hi && std::isfinite(x.lo)) return spec::value_facts::constant(a * x.lo + b);
    return spec::value_facts::within(a * x.lo + b, a * x.hi + b);
}
inline spec::value_facts sum_facts(const spec::value_facts& e, double n) { return affine_facts(e, n, 0.0); }
inline spec::value_facts square_facts(const spec::value_facts& x) {
    return spec::facts::image(x, [](double v) { return v * v; });
}

inline constexpr dtype_set sum_types = types::floating | types::indices;
inline constexpr dtype_set minmax_types = types::floating | spec::dtypes_of(dtype::i8, dtype::u8, dtype::i32, dtype::i64);
}  // namespace reduce

}  // namespace tensoracle::ops
