// tensoracle: MatMul, Gemm, convolutions, pooling and Resize.
#pragma once

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

inline constexpr auto nn_ops = hana::tuple_t<>;

}  // namespace tensoracle::ops
