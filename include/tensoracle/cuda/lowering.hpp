// tensoracle: which CUDA kernel runs each op of the registry, keyed by its
// spec type: a lowering per op with a kernel, and an explicit list of the ops
// without one (their nodes run on the CPU reference kernels). Every op of
// ops::all_ops is in exactly one of the two, checked at compile time, so a new
// op does not compile until it is given a kernel or listed as CPU-only.
//
// Host code (any C++20 compiler); cuda/graph.hpp dispatches on this table.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>

#include "tensoracle/cuda/elementwise_ops.hpp"
#include "tensoracle/cuda/ops.hpp"
#include "tensoracle/ops/all_ops.hpp"
#include "tensoracle/ops/keyed.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle::cuda {

/// The CUDA call (cuda/ops.hpp) a node runs through.
enum class device_kernel : std::uint8_t {
    unary,
    binary,
    where,
    clip,
    cast,
    reduce,
    softmax,
    log_softmax,
    matmul,
    gemm,
    conv,
    max_pool,
    average_pool,
    batch_norm,
    layer_norm,
    transpose,
    reshape,  ///< Reshape, Flatten, Squeeze, Unsqueeze: the inferred shape, a view
    expand,
    concat,
    slice,
    gather,
};

struct lowering {
    device_kernel kernel;
    reduce_kind reduction = reduce_kind::sum;  ///< device_kernel::reduce only
};

namespace detail {
template <class Op>
constexpr ops::keyed<Op, lowering> lower(device_kernel k, reduce_kind r = reduce_kind::sum) {
    return {{k, r}};
}
}  // namespace detail

// The element-wise list's names are identifiers nvcc compares op_type strings with.
#define TENSORACLE_CUDA_IS_OP_TYPE(OP, ...) \
    static_assert(ops::OP::op_type == #OP, "cuda/elementwise_ops.hpp: " #OP " is not the op_type of ops::" #OP);
TENSORACLE_CUDA_UNARY_OPS(TENSORACLE_CUDA_IS_OP_TYPE)
TENSORACLE_CUDA_BINARY_OPS(TENSORACLE_CUDA_IS_OP_TYPE)
#undef TENSORACLE_CUDA_IS_OP_TYPE

#define TENSORACLE_CUDA_LOWER_UNARY(OP, ...) detail::lower<ops::OP>(device_kernel::unary),
#define TENSORACLE_CUDA_LOWER_BINARY(OP, ...) detail::lower<ops::OP>(device_kernel::binary),
/// The ops with a CUDA kernel.
inline constexpr auto lowerings = hana::make_tuple(
    TENSORACLE_CUDA_UNARY_OPS(TENSORACLE_CUDA_LOWER_UNARY)
    TENSORACLE_CUDA_BINARY_OPS(TENSORACLE_CUDA_LOWER_BINARY)
    detail::lower<ops::Where>(device_kernel::where),
    detail::lower<ops::Clip>(device_kernel::clip),
    detail::lower<ops::Cast>(device_kernel::cast),
    detail::lower<ops::ReduceSum>(device_kernel::reduce, reduce_kind::sum),
    detail::lower<ops::ReduceMean>(device_kernel::reduce, reduce_kind::mean),
    detail::lower<ops::ReduceMax>(device_kernel::reduce, reduce_kind::max),
    detail::lower<ops::ReduceMin>(device_kernel::reduce, reduce_kind::min),
    detail::lower<ops::ReduceProd>(device_kernel::reduce, reduce_kind::prod),
    detail::lower<ops::ReduceLogSumExp>(device_kernel::reduce, reduce_kind::log_sum_exp),
    detail::lower<ops::ReduceLogSum>(device_kernel::reduce, reduce_kind::log_sum),
    detail::lower<ops::ReduceL1>(device_kernel::reduce, reduce_kind::l1),
    detail::lower<ops::ReduceL2>(device_kernel::reduce, reduce_kind::l2),
    detail::lower<ops::ReduceSumSquare>(device_kernel::reduce, reduce_kind::sum_square),
    detail::lower<ops::Softmax>(device_kernel::softmax),
    detail::lower<ops::LogSoftmax>(device_kernel::log_softmax),
    detail::lower<ops::MatMul>(device_kernel::matmul),
    detail::lower<ops::Gemm>(device_kernel::gemm),
    detail::lower<ops::Conv>(device_kernel::conv),
    detail::lower<ops::MaxPool>(device_kernel::max_pool),
    detail::lower<ops::AveragePool>(device_kernel::average_pool),
    detail::lower<ops::BatchNormalization>(device_kernel::batch_norm),
    detail::lower<ops::LayerNormalization>(device_kernel::layer_norm),
    detail::lower<ops::Transpose>(device_kernel::transpose),
    detail::lower<ops::Reshape>(device_kernel::reshape),
    detail::lower<ops::Flatten>(device_kernel::reshape),
    detail::lower<ops::Squeeze>(device_kernel::reshape),
    detail::lower<ops::Unsqueeze>(device_kernel::reshape),
    detail::lower<ops::Expand>(device_kernel::expand),
    detail::lower<ops::Concat>(device_kernel::concat),
    detail::lower<ops::Slice>(device_kernel::slice),
    detail::lower<ops::Gather>(device_kernel::gather));
#undef TENSORACLE_CUDA_LOWER_UNARY
#undef TENSORACLE_CUDA_LOWER_BINARY

/// The ops without a CUDA kernel: their nodes run on the CPU.
inline constexpr auto cpu_only_ops = hana::tuple_t<
    // element-wise
    ops::Not, ops::Shrink, ops::IsNaN, ops::IsInf, ops::Sum, ops::Mean, ops::And, ops::Or, ops::Xor, ops::PRelu,
    // shape and data movement
    ops::Split, ops::Tile, ops::Pad, ops::GatherElements, ops::Trilu, ops::Shape, ops::Size, ops::ConstantOfShape,
    ops::Range, ops::DepthToSpace, ops::SpaceToDepth,
    // reductions and normalisations
    ops::ArgMax, ops::ArgMin, ops::Hardmax, ops::InstanceNormalization, ops::LpNormalization,
    // networks
    ops::ConvTranspose, ops::GlobalAveragePool, ops::GlobalMaxPool, ops::LRN, ops::Resize, ops::Upsample,
    // the rest
    ops::Constant, ops::CastLike, ops::Dropout, ops::CumSum, ops::EyeLike, ops::OneHot, ops::TopK>;

static_assert(ops::each_op_once<ops::all_ops_type, decltype(lowerings), decltype(cpu_only_ops)>);

/// The CUDA lowering of an ONNX op_type; nullptr for an op without a CUDA kernel.
[[nodiscard]] inline const lowering* lowering_of(std::string_view op_type) {
    static const std::map<std::string, lowering, std::less<>> table = ops::by_op_type(lowerings);
    const auto it = table.find(op_type);
    return it == table.end() ? nullptr : &it->second;
}

}  // namespace tensoracle::cuda
