// tensoracle: shape and data-movement ops (Reshape, Transpose, Squeeze,
// Unsqueeze, Flatten, Slice, Concat, Split, Expand, Tile, Pad, Gather,
// GatherElements, Trilu, Shape, Size, ConstantOfShape, Range, DepthToSpace,
// SpaceToDepth): one header per op under ops/shape/, shared code under
// ops/shape/detail/; notes about one op are in its header.
//
// Output shapes are symbolic wherever ONNX's formula is integer arithmetic
// over dims, int attributes and values of int64 inputs (shape, axes, pads,
// repeats, starts/ends/steps, ...); symbolic axes index dim lists through
// chains of selects (shape_util::pick). Shapes that depend on dim *values* in a
// way that changes the output rank (Squeeze without axes) or on float data
// (Range on floats) are computed concretely.
//
// Derivatives (run_real): these kernels only move scalars, so they run
// unchanged on AD scalars and each output element carries the derivative of
// the input element it copies; fill values are constants, except Pad's
// constant_value input, which is differentiable when given. Shape, Size,
// ConstantOfShape and Range have no run_real (see their specs).
//
// Semantics chosen where ONNX leaves them open (each op's header states its own:
// Transpose, Squeeze, Pad, GatherElements, Split, Range):
//  - negative axes are normalized; out-of-range axes, perms, indices of shape
//    values are constraint violations (shape_error), never clamped.
#pragma once

#include "tensoracle/ops/shape/reshape.hpp"
#include "tensoracle/ops/shape/transpose.hpp"
#include "tensoracle/ops/shape/squeeze.hpp"
#include "tensoracle/ops/shape/unsqueeze.hpp"
#include "tensoracle/ops/shape/flatten.hpp"
#include "tensoracle/ops/shape/slice.hpp"
#include "tensoracle/ops/shape/concat.hpp"
#include "tensoracle/ops/shape/split.hpp"
#include "tensoracle/ops/shape/expand.hpp"
#include "tensoracle/ops/shape/tile.hpp"
#include "tensoracle/ops/shape/pad.hpp"
#include "tensoracle/ops/shape/gather.hpp"
#include "tensoracle/ops/shape/gather_elements.hpp"
#include "tensoracle/ops/shape/trilu.hpp"
#include "tensoracle/ops/shape/shape.hpp"
#include "tensoracle/ops/shape/size.hpp"
#include "tensoracle/ops/shape/constant_of_shape.hpp"
#include "tensoracle/ops/shape/range.hpp"
#include "tensoracle/ops/shape/depth_to_space.hpp"
#include "tensoracle/ops/shape/space_to_depth.hpp"

namespace tensoracle::ops {

inline constexpr auto shape_ops =
    hana::tuple_t<Reshape, Transpose, Squeeze, Unsqueeze, Flatten, Slice, Concat, Split, Expand, Tile, Pad, Gather,
                  GatherElements, Trilu, Shape, Size, ConstantOfShape, Range, DepthToSpace, SpaceToDepth>;

}  // namespace tensoracle::ops
