// tensoracle: the names every op of ops/nn/ shares (namespace nn: spec::constraint and
// spec::expr, util = ops::detail::nn, the dtype sets float3 and matmul_types, the
// accumulator acc_t, tail() of a dim list, and is_nan).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "tensoracle/ops/detail/nn_util.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace nn {
using spec::constraint;
using spec::expr;
namespace util = detail::nn;

inline constexpr spec::dtype_set float3 = spec::dtypes_of(dtype::f16, dtype::f32, dtype::f64);
inline constexpr spec::dtype_set matmul_types = spec::types::floating | spec::types::indices;

template <class T>
using acc_t = util::float_acc_t<T>;

inline std::vector<expr> tail(const std::vector<expr>& v, std::size_t from) {
    return {v.begin() + static_cast<std::ptrdiff_t>(std::min(from, v.size())), v.end()};
}

using tensoracle::is_nan;
}  // namespace nn

}  // namespace tensoracle::ops
