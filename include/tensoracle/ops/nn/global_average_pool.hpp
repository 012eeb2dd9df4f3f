// tensoracle: GlobalAveragePool (the mean of each (n, c) plane of X).
#pragma once

#include "tensoracle/ops/nn/detail/global_pool.hpp"

namespace tensoracle::ops {

using GlobalAveragePool = nn::global_pool<false>;

}  // namespace tensoracle::ops
