// tensoracle: ArgMax (the int64 index of the maximum along an axis).
#pragma once

#include "tensoracle/ops/reduce/detail/arg_reduce.hpp"

namespace tensoracle::ops {

using ArgMax = arg_reduce<true>;

}  // namespace tensoracle::ops
