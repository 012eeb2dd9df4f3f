// tensoracle: reductions, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax and
// normalizations (LayerNormalization, BatchNormalization, InstanceNormalization,
// LpNormalization): one header per op under ops/reduce/, shared code under
// ops/reduce/detail/; notes about one op are in its header.
//
// Semantics chosen where ONNX leaves them open:
// - Axes: negative axes count from the end; out-of-range or repeated axes are
//   constraint violations (and a shape_error from the typed kernels).
// - `axes` of the Reduce* ops: the attribute form (ReduceSum-11, the others up
//   to opset 17) is accepted by every op; ReduceSum also takes the opset-13
//   optional int64 input. Giving both is a constraint violation. An empty or
//   absent list reduces over every axis, except that ReduceSum with
//   noop_with_empty_axes=1 then returns the input unchanged (keepdims ignored).
// - Empty reductions: Sum, L1, L2, SumSquare give 0; Prod gives 1; Mean gives
//   NaN (0/0); Max gives -inf (integers: the type's lowest value), Min gives
//   +inf (integers: the type's max), as ONNX-18 documents; LogSum and
//   LogSumExp give log(0) = -inf. ArgMax/ArgMin over an empty axis are
//   constraint violations (there is no index to return).
// - NaN: ReduceMax/ReduceMin propagate NaN (numpy maximum.reduce); ArgMax,
//   ArgMin and Hardmax treat NaN as the extreme value (numpy argmax/argmin:
//   the first NaN wins, the last one with select_last_index=1).
// - Integers: ReduceSum/Prod/L1/SumSquare (int32, int64) and ReduceMax/Min
//   (int8, uint8, int32, int64) accumulate in int64 with wrap-around and wrap
//   once more to the element width (two's complement, no UB). ReduceMean, L2,
//   LogSum and LogSumExp are floating-only here: ONNX lists int32/int64 for
//   them but leaves the rounding of the integer result unspecified.
// - Precision: float accumulation for f16/bf16/f32, double for f64, one
//   rounding to the element type at the end (LayerNormalization's stash_type:
//   see reduce/layer_normalization.hpp).
// - ReduceLogSumExp and Softmax/LogSoftmax subtract the maximum before exp;
//   this is value-preserving in real arithmetic (see the kernels).
#pragma once

#include "tensoracle/ops/reduce/reduce_sum.hpp"
#include "tensoracle/ops/reduce/reduce_mean.hpp"
#include "tensoracle/ops/reduce/reduce_max.hpp"
#include "tensoracle/ops/reduce/reduce_min.hpp"
#include "tensoracle/ops/reduce/reduce_prod.hpp"
#include "tensoracle/ops/reduce/reduce_l1.hpp"
#include "tensoracle/ops/reduce/reduce_l2.hpp"
#include "tensoracle/ops/reduce/reduce_sum_square.hpp"
#include "tensoracle/ops/reduce/reduce_log_sum.hpp"
#include "tensoracle/ops/reduce/reduce_log_sum_exp.hpp"
#include "tensoracle/ops/reduce/arg_max.hpp"
#include "tensoracle/ops/reduce/arg_min.hpp"
#include "tensoracle/ops/reduce/softmax.hpp"
#include "tensoracle/ops/reduce/log_softmax.hpp"
#include "tensoracle/ops/reduce/hardmax.hpp"
#include "tensoracle/ops/reduce/layer_normalization.hpp"
#include "tensoracle/ops/reduce/batch_normalization.hpp"
#include "tensoracle/ops/reduce/instance_normalization.hpp"
#include "tensoracle/ops/reduce/lp_normalization.hpp"

namespace tensoracle::ops {

inline constexpr auto reduce_ops =
    hana::tuple_t<ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
                  ReduceLogSum, ReduceLogSumExp, ArgMax, ArgMin, Softmax, LogSoftmax, Hardmax,
                  LayerNormalization, BatchNormalization, InstanceNormalization, LpNormalization>;

}  // namespace tensoracle::ops
