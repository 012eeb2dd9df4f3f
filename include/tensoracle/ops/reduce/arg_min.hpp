// tensoracle: ArgMin (the int64 index of the minimum along an axis).
#pragma once

#include "tensoracle/ops/reduce/detail/arg_reduce.hpp"

namespace tensoracle::ops {

using ArgMin = arg_reduce<false>;

}  // namespace tensoracle::ops
