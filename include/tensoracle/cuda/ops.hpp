// tensoracle: reference kernels on a CUDA device, the host-side declarations.
// Any C++20 compiler can call these; their definitions (cuda/ops.cuh) are
// compiled once by nvcc, in the consumer's build: link the CMake target
// tensoracle::cuda (it compiles cmake/tensoracle_cuda.cu), or include
// <tensoracle/cuda/ops.cuh> in exactly one .cu file of your own.
//
// Semantics are the CPU reference's (ops/*.hpp): the same per-element
// formulas (ops/formulas.hpp), f16/bf16/f32 computed in float and f64 in
// double, rounded once to the element type. Operands may be strided views;
// results are contiguous. Bad input throws the kit's errors naming the call.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "tensoracle/cuda/device_tensor.hpp"

namespace tensoracle::cuda {

/// Parameters of the element-wise ops that have attributes (ONNX defaults
/// where one applies; fields an op does not use are ignored).
struct elementwise_attributes {
    float alpha = 0.0f;  ///< LeakyRelu (0.01), Elu/Celu (1), Selu, HardSigmoid (0.2), ThresholdedRelu (1)
    float beta = 0.5f;   ///< HardSigmoid
    float gamma = 1.05070102214813232421875f;  ///< Selu
    std::int64_t fmod = 0;                      ///< Mod
    bool alpha_given = false;                   ///< false: the op's ONNX default alpha
};

/// Op types `unary` runs (f16, bf16, f32, f64; Abs/Neg/Sign/Relu also int32/int64).
[[nodiscard]] const std::vector<std::string_view>& unary_op_types();
/// Op types `binary` runs: Add Sub Mul Div Pow Max Min Mod (fmod=1) and the comparisons
/// Equal Less Greater LessOrEqual GreaterOrEqual (bool output).
[[nodiscard]] const std::vector<std::string_view>& binary_op_types();

[[nodiscard]] device_tensor unary(std::string_view op_type, const device_tensor& x, const elementwise_attributes& a = {});
[[nodiscard]] device_tensor binary(std::string_view op_type, const device_tensor& a, const device_tensor& b,
                                   const elementwise_attributes& at = {});
[[nodiscard]] device_tensor where(const device_tensor& condition, const device_tensor& x, const device_tensor& y);
[[nodiscard]] device_tensor clip(const device_tensor& x, std::optional<double> lo, std::optional<double> hi);
/// ONNX Cast between f16, bf16, f32, f64, int32, int64 and bool (the kit's value_cast rules:
/// float to integer truncates toward zero and saturates, NaN gives 0).
[[nodiscard]] device_tensor cast(const device_tensor& x, dtype to);
/// A contiguous copy of any view (Transpose, Slice, Expand results are views until copied).
[[nodiscard]] device_tensor contiguous(const device_tensor& x);
/// x broadcast to `shape` (ONNX Expand), contiguous.
[[nodiscard]] device_tensor expand(const device_tensor& x, const shape_type& shape);

/// Reductions of ONNX Reduce*: Sum, Mean, Max, Min, Prod, LogSumExp, LogSum, L1, L2, SumSquare.
enum class reduce_kind : std::uint8_t { sum, mean, max, min, prod, log_sum_exp, log_sum, l1, l2, sum_square };
/// Every reduction is deterministic: a fixed split of each output's elements
/// into chunks and a fixed order inside each, independent of scheduling and
/// of the GPU model, so runs reproduce bit for bit. Accumulation is in double
/// for every floating dtype (the CPU kernels accumulate 16/32-bit types in
/// float, in order): a parallel float sum would differ from the CPU's by float
/// rounding of another order, while this one is within the CPU's own rounding
/// error of the exact sum, and within level -5 of the float64 result at 2^22 elements.
[[nodiscard]] device_tensor reduce(reduce_kind kind, const device_tensor& x, const std::vector<std::int64_t>& axes,
                                   bool keepdims = true, bool noop_with_empty_axes = false);

/// Softmax / LogSoftmax along one axis (opset 13).
[[nodiscard]] device_tensor softmax(const device_tensor& x, std::int64_t axis, bool log = false);

/// How cuBLAS may compute an f32 product: pedantic f32 (the reference),
/// TF32 tensor cores (10-bit mantissa inputs), or cuBLAS's default f32.
enum class gemm_precision : std::uint8_t { pedantic, tf32, fast_default };
/// ONNX MatMul (numpy matmul: 1-D operands promoted, batch dims broadcast) through cuBLAS.
[[nodiscard]] device_tensor matmul(const device_tensor& a, const device_tensor& b,
                                   gemm_precision p = gemm_precision::pedantic);
/// ONNX Gemm: alpha * A' * B' + beta * C, C broadcast to (M, N).
[[nodiscard]] device_tensor gemm(const device_tensor& a, const device_tensor& b, const device_tensor* c, float alpha,
                                 float beta, bool trans_a, bool trans_b, gemm_precision p = gemm_precision::pedantic);

/// 2-D convolution/pooling geometry (NCHW), explicit pads (begin h, begin w, end h, end w).
struct window_2d {
    std::int64_t kernel[2] = {1, 1};
    std::int64_t strides[2] = {1, 1};
    std::int64_t dilations[2] = {1, 1};
    std::int64_t pads[4] = {0, 0, 0, 0};
};
/// ONNX Conv on NCHW input, OIHW weights, groups; im2col then cuBLAS per batch item and group.
[[nodiscard]] device_tensor conv2d(const device_tensor& x, const device_tensor& w, const device_tensor* bias,
                                   const window_2d& win, std::int64_t group, const shape_type& out_shape,
                                   gemm_precision p = gemm_precision::pedantic);
/// MaxPool / AveragePool over NCHW; out_shape from shape inference (ceil_mode included).
[[nodiscard]] device_tensor max_pool2d(const device_tensor& x, const window_2d& win, const shape_type& out_shape);
[[nodiscard]] device_tensor average_pool2d(const device_tensor& x, const window_2d& win, bool count_include_pad,
                                           const shape_type& out_shape);
/// BatchNormalization, inference mode: (x - mean) / sqrt(var + epsilon) * scale + bias per channel (axis 1).
[[nodiscard]] device_tensor batch_norm(const device_tensor& x, const device_tensor& scale, const device_tensor& bias,
                                       const device_tensor& mean, const device_tensor& var, float epsilon);
/// LayerNormalization's Y over axes [axis, rank): scale and bias broadcast to the normalized shape.
[[nodiscard]] device_tensor layer_norm(const device_tensor& x, const device_tensor& scale, const device_tensor* bias,
                                       std::int64_t axis, float epsilon);

/// ONNX Concat along `axis`.
[[nodiscard]] device_tensor concat(const std::vector<device_tensor>& xs, std::int64_t axis);
/// ONNX Gather along `axis`; indices (int32/int64, negative from the end) are checked on the host.
[[nodiscard]] device_tensor gather(const device_tensor& x, const tensor& indices, std::int64_t axis);

}  // namespace tensoracle::cuda
