// tensoracle: MatMul, Gemm, convolutions, pooling, LRN, Resize and Upsample:
// one header per op under ops/nn/, shared code under ops/nn/detail/; notes
// about one op (MaxPool's outputs, ConvTranspose's padding, Resize, Upsample)
// are in its header.
//
// Shapes and validity are written once over spec::expr (nn_util.hpp): the
// specs' constraints and output shapes use input dims and int attributes as
// symbols, and each typed kernel evaluates the very same expressions on
// constants (with the same constraint messages), so a kernel called directly
// with bad arguments throws shape_error naming the op and the reason.
//
// Semantics chosen where ONNX leaves room:
// - Float kernels accumulate in float for f16/bf16/f32 and in double for f64,
//   and round once. Integer MatMul/Gemm products wrap (two's complement);
//   integer Gemm applies alpha/beta in double and converts with value_cast.
// - run_real runs the same float kernels on AD scalars (ad/), which accumulate
//   in themselves. Max pools and Resize's nearest mode pass the derivative of
//   the selected element; Resize's weights depend on coordinates only, so
//   roi and scales are not differentiable inputs.
// - Pools: explicit pads must be smaller than the kernel (as onnxruntime
//   enforces). With ceil_mode, a last window that would start in the end
//   padding is dropped (PyTorch, ONNX reference >= 1.16; ONNX 1.12 keeps it,
//   the 1.12 test data never reaches the difference). A window that covers
//   only padding (possible with large dilations) is an error, not -inf/NaN.
// - Conv/pools: `pads` together with auto_pad != NOTSET is a violation (ONNX
//   shape inference rejects it). SAME_UPPER puts the odd pad at the end,
//   SAME_LOWER at the beginning.
#pragma once

#include "tensoracle/ops/nn/matmul.hpp"
#include "tensoracle/ops/nn/gemm.hpp"
#include "tensoracle/ops/nn/conv.hpp"
#include "tensoracle/ops/nn/conv_transpose.hpp"
#include "tensoracle/ops/nn/max_pool.hpp"
#include "tensoracle/ops/nn/average_pool.hpp"
#include "tensoracle/ops/nn/global_average_pool.hpp"
#include "tensoracle/ops/nn/global_max_pool.hpp"
#include "tensoracle/ops/nn/lrn.hpp"
#include "tensoracle/ops/nn/resize.hpp"
#include "tensoracle/ops/nn/upsample.hpp"

namespace tensoracle::ops {

inline constexpr auto nn_ops = hana::tuple_t<MatMul, Gemm, Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool,
                                             GlobalMaxPool, LRN, Resize, Upsample>;

}  // namespace tensoracle::ops
