// tensoracle: shape and data-movement ops (Reshape, Transpose, Squeeze, Unsqueeze, Flatten, Slice, Concat, Split, Expand, Tile, Pad, Gather, Trilu, Shape, ConstantOfShape, Range).
#pragma once

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

inline constexpr auto shape_ops = hana::tuple_t<>;

}  // namespace tensoracle::ops
