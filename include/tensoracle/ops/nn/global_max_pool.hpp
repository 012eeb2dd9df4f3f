// tensoracle: GlobalMaxPool (the maximum of each (n, c) plane of X).
#pragma once

#include "tensoracle/ops/nn/detail/global_pool.hpp"

namespace tensoracle::ops {

using GlobalMaxPool = nn::global_pool<true>;

}  // namespace tensoracle::ops
