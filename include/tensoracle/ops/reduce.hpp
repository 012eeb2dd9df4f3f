// tensoracle: reductions, ArgMax/ArgMin, Softmax/LogSoftmax and normalizations.
#pragma once

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

inline constexpr auto reduce_ops = hana::tuple_t<>;

}  // namespace tensoracle::ops
