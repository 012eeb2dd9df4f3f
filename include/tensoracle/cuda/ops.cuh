// tensoracle: reference kernels on a CUDA device, the definitions. Compile
// this header in exactly one .cu file with nvcc -std=c++20
// --expt-relaxed-constexpr (the CMake target tensoracle::cuda does so);
// everything else calls the declarations in cuda/ops.hpp.
//
// Kernels stay simple and traceable: one thread per output element (grid-
// stride), strided reads through cuda::strided_map, the per-element formula
// from ops/formulas.hpp (the CPU kernels' own), cuBLAS for the products.
#pragma once

#if !defined(__CUDACC__)
#error "tensoracle/cuda/ops.cuh holds CUDA kernels: compile it with nvcc (host code includes cuda/ops.hpp)"
#endif
#if !defined(__CUDACC_RELAXED_CONSTEXPR__)
#error "tensoracle/cuda/ops.cuh: compile with nvcc --expt-relaxed-constexpr (the shared formulas call constexpr std:: math)"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "tensoracle/cuda/elementwise_ops.hpp"
#include "tensoracle/cuda/ops.hpp"
#include "tensoracle/ops/formulas.hpp"

namespace tensoracle::cuda {

namespace kernels {

/// Device storage of an element type and the type it computes in (float for
/// f16/bf16/f32, double for f64, itself for integers and bool).
template <class S>
struct element {
    using compute = S;
    __device__ static S load(S v) { return v; }
    template <class C>
    __device__ static S store(C v) { return static_cast<S>(v); }
};
template <>
struct element<__half> {
    using compute = float;
    __device__ static float load(__half v) { return __half2float(v); }
    __device__ static __half store(float v) { return __float2half_rn(v); }
    __device__ static __half store(double v) { return __double2half(v); }
};
template <>
struct element<__nv_bfloat16> {
    using compute = float;
    __device__ static float load(__nv_bfloat16 v) { return __bfloat162float(v); }
    __device__ static __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
    __device__ static __nv_bfloat16 store(double v) { return __double2bfloat16(v); }
};
template <class S>
using compute_t = typename element<S>::compute;

inline constexpr int block = 256;

/// A grid for n elements with a grid-stride loop.
inline unsigned grid_for(std::int64_t n) {
    static const int sms = [] {
        int dev = 0, count = 0;
        check(cudaGetDevice(&dev), "cudaGetDevice");
        check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
        return count;
    }();
    const std::int64_t blocks = (n + block - 1) / block;
    return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(blocks, std::int64_t{sms} * 32)));
}

#define TENSORACLE_GRID_STRIDE(i, n)                                                                     \
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

/// Contiguous operands: four elements per thread and step, loads first, so
/// that each thread has several reads in flight (bandwidth-bound kernels).
inline constexpr int unroll = 4;

// Contiguous and strided operands have separate kernels: the strided one's
// index registers would otherwise lower the contiguous one's occupancy.
template <class F, class S, class A>
__global__ void unary_contiguous(std::int64_t n, const S* x, S* y, A attrs) {
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + (unroll - 1) * step < n; i += unroll * step) {
        S v[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u) v[u] = x[i + u * step];
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
            y[i + u * step] = element<S>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(v[u])), attrs));
        }
    }
    for (; i < n; i += step) y[i] = element<S>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(x[i])), attrs));
}

/// Strided or broadcast: the same four-way interleaving, through the map.
template <class F, class S, class A>
__global__ void unary_strided(std::int64_t n, const S* x, strided_map mx, S* y, A attrs) {
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + (unroll - 1) * step < n; i += unroll * step) {
        S v[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u) v[u] = x[mx.at(i + u * step)];
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
            y[i + u * step] = element<S>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(v[u])), attrs));
        }
    }
    for (; i < n; i += step) y[i] = element<S>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(x[mx.at(i)])), attrs));
}

template <class F, class S, class Out, class A>
__global__ void binary_contiguous(std::int64_t n, const S* a, const S* b, Out* y, A attrs) {
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + (unroll - 1) * step < n; i += unroll * step) {
        S va[unroll], vb[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
            va[u] = a[i + u * step];
            vb[u] = b[i + u * step];
        }
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
            y[i + u * step] = element<Out>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(va[u])),
                                                           static_cast<compute_t<S>>(element<S>::load(vb[u])), attrs));
        }
    }
    for (; i < n; i += step) {
        y[i] = element<Out>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(a[i])),
                                            static_cast<compute_t<S>>(element<S>::load(b[i])), attrs));
    }
}

/// Strided or broadcast: the same four-way interleaving, through the maps.
template <class F, class S, class Out, class A>
__global__ void binary_strided(std::int64_t n, const S* a, strided_map ma, const S* b, strided_map mb, Out* y, A attrs) {
    const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + (unroll - 1) * step < n; i += unroll * step) {
        S va[unroll], vb[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
            va[u] = a[ma.at(i + u * step)];
            vb[u] = b[mb.at(i + u * step)];
        }
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
            y[i + u * step] = element<Out>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(va[u])),
                                                           static_cast<compute_t<S>>(element<S>::load(vb[u])), attrs));
        }
    }
    for (; i < n; i += step) {
        y[i] = element<Out>::store(F::apply(static_cast<compute_t<S>>(element<S>::load(a[ma.at(i)])),
                                            static_cast<compute_t<S>>(element<S>::load(b[mb.at(i)])), attrs));
    }
}

/// Comparisons of ONNX (Equal, Less, ...): bool out, compared in the compute type.
enum class comparison : std::uint8_t { equal, less, greater, less_or_equal, greater_or_equal };
template <comparison K>
struct compare_formula {
    template <class V, class A>
    TENSORACLE_HD static bool apply(V a, V b, const A&) {
        if constexpr (K == comparison::equal) {
            return a == b;
        } else if constexpr (K == comparison::less) {
            return a < b;
        } else if constexpr (K == comparison::greater) {
            return a > b;
        } else if constexpr (K == comparison::less_or_equal) {
            return a <= b;
        } else {
            return a >= b;
        }
    }
};

/// Copies elements of `Bytes` width from one strided layout to another.
template <class W>
__global__ void copy_kernel(std::int64_t n, const W* src, strided_map ms, W* dst, strided_map md) {
    TENSORACLE_GRID_STRIDE(i, n) { dst[md.at(i)] = src[ms.at(i)]; }
}

template <class W>
__global__ void where_kernel(std::int64_t n, const bool* c, strided_map mc, const W* x, strided_map mx, const W* y,
                             strided_map my, W* out) {
    TENSORACLE_GRID_STRIDE(i, n) { out[i] = c[mc.at(i)] ? x[mx.at(i)] : y[my.at(i)]; }
}

template <class S>
__global__ void clip_kernel(std::int64_t n, const S* x, strided_map mx, S* y, bool has_lo, compute_t<S> lo, bool has_hi,
                            compute_t<S> hi) {
    TENSORACLE_GRID_STRIDE(i, n) {
        compute_t<S> v = element<S>::load(x[mx.at(i)]);
        if (has_lo && v < lo) v = lo;
        if (has_hi && hi < v) v = hi;
        y[i] = element<S>::store(v);
    }
}

/// value_cast (core/value_cast.hpp) on the device, one rounding throughout.
template <class To, class From>
__device__ To device_cast(From v) {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (std::is_same_v<To, bool>) {
        if constexpr (std::is_integral_v<From>) {
            return v != 0;
        } else {
            return static_cast<double>(element<From>::load(v)) != 0.0;  // NaN is true
        }
    } else if constexpr (!std::is_integral_v<To>) {  // to a floating type
        if constexpr (std::is_same_v<From, bool>) {
            return element<To>::store(compute_t<To>(v ? 1 : 0));
        } else if constexpr (std::is_integral_v<From>) {
            return element<To>::store(static_cast<double>(v));
        } else if constexpr (std::is_same_v<From, double>) {
            return element<To>::store(v);
        } else {
            return element<To>::store(static_cast<float>(element<From>::load(v)));  // widening is exact
        }
    } else {  // to an integer
        if constexpr (std::is_integral_v<From>) {
            return static_cast<To>(v);  // wraps modulo 2^bits
        } else {
            const double d = static_cast<double>(element<From>::load(v));
            if (::isnan(d)) return To{0};
            const double t = ::trunc(d);
            constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
            constexpr double hi_excl = static_cast<double>(std::numeric_limits<To>::max() / 2 + 1) * 2.0;
            if (t <= lo) return std::numeric_limits<To>::min();
            if (t >= hi_excl) return std::numeric_limits<To>::max();
            return static_cast<To>(t);
        }
    }
}
template <class To, class From>
__global__ void cast_kernel(std::int64_t n, const From* x, strided_map mx, To* y) {
    TENSORACLE_GRID_STRIDE(i, n) { y[i] = device_cast<To>(x[mx.at(i)]); }
}

// Reductions: per output o, elements kept.at(o) + reduced.at(r), r < count.
// Three fixed splits, chosen by the shape alone (so results are the same on
// every GPU): a warp per output for counts below `chunk`; chunks of `chunk`
// elements, one block each, then one block per output over its chunks; and
// for outputs adjacent in memory, a thread per (output, run of rows).
inline constexpr std::int64_t chunk = 65536;

/// One reduction kind at compile time: no branch on the kind per element.
template <reduce_kind K, class C>
struct reduce_op {
    C shift = C(0);  // LogSumExp: the output's maximum, subtracted before exp
    __device__ static C identity() {
        if constexpr (K == reduce_kind::max) {
            return -std::numeric_limits<C>::infinity();
        } else if constexpr (K == reduce_kind::min) {
            return std::numeric_limits<C>::infinity();
        } else if constexpr (K == reduce_kind::prod) {
            return C(1);
        } else {
            return C(0);
        }
    }
    __device__ C map(C x) const {
        if constexpr (K == reduce_kind::l1) {
            return ops::unary::formula::abs::apply(x, 0);
        } else if constexpr (K == reduce_kind::l2 || K == reduce_kind::sum_square) {
            return x * x;
        } else if constexpr (K == reduce_kind::log_sum_exp) {
            return ops::unary::formula::exp::apply(x - shift, 0);
        } else {
            return x;
        }
    }
    __device__ static C combine(C a, C b) {
        if constexpr (K == reduce_kind::max) {
            return ops::binary::formula::max::apply(a, b, 0);
        } else if constexpr (K == reduce_kind::min) {
            return ops::binary::formula::min::apply(a, b, 0);
        } else if constexpr (K == reduce_kind::prod) {
            return a * b;
        } else {
            return a + b;
        }
    }
    /// The reduction's value from its folded accumulator (m: LogSumExp's maximum).
    __device__ static C finish(C acc, std::int64_t count, C m) {
        if constexpr (K == reduce_kind::mean) {
            return acc / static_cast<C>(count);
        } else if constexpr (K == reduce_kind::l2) {
            return ::sqrt(acc);
        } else if constexpr (K == reduce_kind::log_sum) {
            return ::log(acc);
        } else if constexpr (K == reduce_kind::log_sum_exp) {
            return ::isfinite(m) ? m + ::log(acc) : m;  // NaN, +inf or -inf
        } else {
            return acc;
        }
    }
};

/// Folds the 32 lanes' values of a warp in a fixed tree (shuffles); lane 0 holds the result.
template <reduce_kind K, class C>
__device__ C warp_fold(C v) {
    for (int off = 16; off > 0; off /= 2) v = reduce_op<K, C>::combine(v, __shfl_down_sync(0xffffffffu, v, off));
    return v;
}

/// Folds the block's values in a fixed tree: warps first, then the warps' results. Every thread gets it.
template <reduce_kind K, class C>
__device__ C block_fold(C v) {
    constexpr int warps = block / 32;
    __shared__ C part[warps];
    __shared__ C result;
    v = warp_fold<K, C>(v);
    const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < warps ? part[lane] : reduce_op<K, C>::identity();
        for (int off = warps / 2; off > 0; off /= 2) v = reduce_op<K, C>::combine(v, __shfl_down_sync(0xffffffffu, v, off));
        if (lane == 0) result = v;
    }
    __syncthreads();
    const C r = result;
    __syncthreads();
    return r;
}

/// Folds elements [lo, hi) of one output that thread t of T takes: groups of
/// G = 16 bytes' worth of elements, g = t, t + T, ..., element u of a group
/// into accumulator u; then the G accumulators in a fixed tree. The order is
/// the same whether a group is read as one 16-byte load (contiguous and
/// aligned) or element by element, so the path never changes the result.
template <reduce_kind K, class S, class C>
__device__ C fold_groups(const S* x, std::int64_t base, const strided_map& reduced, std::int64_t lo, std::int64_t hi,
                         std::int64_t t, std::int64_t T, const reduce_op<K, C>& op) {
    constexpr int G = static_cast<int>(16 / sizeof(S));
    C a[G];
#pragma unroll
    for (int u = 0; u < G; ++u) a[u] = op.identity();
    const bool unit = reduced.rank == 0 || (reduced.rank == 1 && reduced.strides[0] == 1);
    if (unit) {
        const S* p = x + base;
        std::int64_t e = lo + t * G;
        // Four whole aligned groups at a time: their loads are in flight together.
        for (; e + 3 * T * G + G <= hi; e += 4 * T * G) {
            if ((reinterpret_cast<std::uintptr_t>(p + e) % 16) != 0 || (T * G * sizeof(S)) % 16 != 0) break;
            uint4 raw[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) raw[k] = *reinterpret_cast<const uint4*>(p + e + k * T * G);
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                S v[G];
                memcpy(v, &raw[k], sizeof v);
#pragma unroll
                for (int u = 0; u < G; ++u) a[u] = op.combine(a[u], op.map(static_cast<C>(element<S>::load(v[u]))));
            }
        }
        for (; e < hi; e += T * G) {
#pragma unroll
            for (int u = 0; u < G; ++u) {
                if (e + u < hi) a[u] = op.combine(a[u], op.map(static_cast<C>(element<S>::load(p[e + u]))));
            }
        }
    } else {
        for (std::int64_t e = lo + t * G; e < hi; e += T * G) {
#pragma unroll
            for (int u = 0; u < G; ++u) {
                if (e + u < hi) a[u] = op.combine(a[u], op.map(static_cast<C>(element<S>::load(x[base + reduced.at(e + u)]))));
            }
        }
    }
#pragma unroll
    for (int w = G / 2; w > 0; w /= 2) {
#pragma unroll
        for (int u = 0; u < w; ++u) a[u] = op.combine(a[u], a[u + w]);
    }
    return a[0];
}

/// Folds elements r, r + step, ... (< hi) in order (the columns path: step 1, a short run).
template <reduce_kind K, class S, class C>
__device__ C fold_run(const S* x, std::int64_t base, const strided_map& reduced, std::int64_t r, std::int64_t hi,
                      const reduce_op<K, C>& op) {
    C acc = op.identity();
    for (; r < hi; ++r) acc = op.combine(acc, op.map(static_cast<C>(element<S>::load(x[base + reduced.at(r)]))));
    return acc;
}

/// Writes output o: the reduction's value in the element type, or (raw) in the accumulator type.
template <reduce_kind K, class S, class C>
__device__ void store_result(std::int64_t o, C acc, std::int64_t count, const C* shifts, S* y, C* raw) {
    const C v = reduce_op<K, C>::finish(acc, count, shifts != nullptr ? shifts[o] : C(0));
    if (raw != nullptr) {
        raw[o] = v;
    } else {
        y[o] = element<S>::store(v);
    }
}

template <reduce_kind K, class S, class C>
__global__ void reduce_chunks(const S* x, strided_map kept, strided_map reduced, std::int64_t count,
                              std::int64_t chunks, const C* shifts, C* partial) {
    const std::int64_t o = blockIdx.x / chunks, c = blockIdx.x % chunks;
    reduce_op<K, C> op{shifts != nullptr ? shifts[o] : C(0)};
    if (!::isfinite(op.shift)) op.shift = C(0);  // LogSumExp: finished from the max alone
    const std::int64_t base = kept.at(o), lo = c * chunk, hi = count < lo + chunk ? count : lo + chunk;
    C acc = fold_groups<K, S, C>(x, base, reduced, lo, hi, threadIdx.x, block, op);
    acc = block_fold<K, C>(acc);
    if (threadIdx.x == 0) partial[o * chunks + c] = acc;
}

template <reduce_kind K, class S, class C>
__global__ void reduce_finish(const C* partial, std::int64_t chunks, std::int64_t count, const C* shifts, S* y,
                              C* raw) {
    using op = reduce_op<K, C>;
    const std::int64_t o = blockIdx.x;
    C acc = op::identity();
    for (std::int64_t c = threadIdx.x; c < chunks; c += block) acc = op::combine(acc, partial[o * chunks + c]);
    acc = block_fold<K, C>(acc);
    if (threadIdx.x == 0) store_result<K>(o, acc, count, shifts, y, raw);
}

/// A warp per output (counts below `chunk`): lanes fold elements lane, lane + 32, ...
template <reduce_kind K, class S, class C>
__global__ void reduce_warps(const S* x, strided_map kept, strided_map reduced, std::int64_t outputs,
                             std::int64_t count, const C* shifts, S* y, C* raw) {
    const std::int64_t o = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    if (o >= outputs) return;  // a whole warp leaves together
    reduce_op<K, C> op{shifts != nullptr ? shifts[o] : C(0)};
    if (!::isfinite(op.shift)) op.shift = C(0);
    C acc = fold_groups<K, S, C>(x, kept.at(o), reduced, 0, count, lane, 32, op);
    acc = warp_fold<K, C>(acc);
    if (lane == 0) store_result<K>(o, acc, count, shifts, y, raw);
}

/// Reductions whose kept axes end in a contiguous one (e.g. over axis 0 of a
/// matrix): thread (chunk c, output o), o fastest, folds rows
/// [c * column_rows, (c + 1) * column_rows) of its output, so a warp reads
/// adjacent memory; then one thread per output folds its chunks in order.
/// Deterministic: the split depends on the shape alone.
inline constexpr std::int64_t column_rows = 64;

template <reduce_kind K, class S, class C>
__global__ void reduce_columns(const S* x, strided_map kept, strided_map reduced, std::int64_t outputs,
                               std::int64_t count, std::int64_t chunks, const C* shifts, C* partial) {
    TENSORACLE_GRID_STRIDE(t, outputs * chunks) {
        const std::int64_t o = t % outputs, c = t / outputs;
        reduce_op<K, C> op{shifts != nullptr ? shifts[o] : C(0)};
        if (!::isfinite(op.shift)) op.shift = C(0);
        const std::int64_t lo = c * column_rows, hi = count < lo + column_rows ? count : lo + column_rows;
        partial[c * outputs + o] = fold_run<K, S, C>(x, kept.at(o), reduced, lo, hi, op);
    }
}

template <reduce_kind K, class S, class C>
__global__ void reduce_columns_finish(const C* partial, std::int64_t outputs, std::int64_t chunks, std::int64_t count,
                                      const C* shifts, S* y, C* raw) {
    using op = reduce_op<K, C>;
    TENSORACLE_GRID_STRIDE(o, outputs) {
        C acc = op::identity();
        for (std::int64_t c = 0; c < chunks; ++c) acc = op::combine(acc, partial[c * outputs + o]);
        store_result<K>(o, acc, count, shifts, y, raw);
    }
}

/// One reduction of kind K: results to y, or (raw) the accumulator-typed values to `raw`.
template <reduce_kind K, class S, class C>
void launch_reduction(const S* x, const reduction_plan& plan, const C* shifts, S* y, C* raw) {
    const bool columns = plan.kept.rank > 0 && plan.kept.strides[plan.kept.rank - 1] == 1 && plan.outputs >= 32;
    if (columns) {
        const std::int64_t chunks = std::max<std::int64_t>(1, (plan.count + column_rows - 1) / column_rows);
        device_buffer partial(static_cast<std::size_t>(plan.outputs * chunks) * sizeof(C));
        reduce_columns<K, S, C><<<grid_for(plan.outputs * chunks), block>>>(x, plan.kept, plan.reduced, plan.outputs,
                                                                            plan.count, chunks, shifts,
                                                                            static_cast<C*>(partial.data()));
        reduce_columns_finish<K, S, C><<<grid_for(plan.outputs), block>>>(static_cast<const C*>(partial.data()),
                                                                          plan.outputs, chunks, plan.count, shifts, y,
                                                                          raw);
        return;  // partial is freed in stream order, after the kernels
    }
    if (plan.count < chunk) {
        const std::int64_t threads = plan.outputs * 32;
        reduce_warps<K, S, C><<<static_cast<unsigned>((threads + block - 1) / block), block>>>(
            x, plan.kept, plan.reduced, plan.outputs, plan.count, shifts, y, raw);
        return;
    }
    const std::int64_t chunks = (plan.count + chunk - 1) / chunk;
    device_buffer partial(static_cast<std::size_t>(plan.outputs * chunks) * sizeof(C));
    reduce_chunks<K, S, C><<<static_cast<unsigned>(plan.outputs * chunks), block>>>(
        x, plan.kept, plan.reduced, plan.count, chunks, shifts, static_cast<C*>(partial.data()));
    reduce_finish<K, S, C><<<static_cast<unsigned>(plan.outputs), block>>>(static_cast<const C*>(partial.data()), chunks,
                                                                           plan.count, shifts, y, raw);
}

template <reduce_kind K, class S>
void reduce_typed(const device_tensor& x, const reduction_plan& plan, device_tensor& y) {
    // Sums and products in double for every floating dtype (see ops.hpp, reduce); max and min are exact in any.
    using C = std::conditional_t<K == reduce_kind::max || K == reduce_kind::min, compute_t<S>, double>;
    const S* px = static_cast<const S*>(x.data());
    if constexpr (K == reduce_kind::log_sum_exp) {  // each output's maximum first, subtracted before exp
        device_buffer maxima(static_cast<std::size_t>(plan.outputs) * sizeof(C));
        launch_reduction<reduce_kind::max, S, C>(px, plan, nullptr, nullptr, static_cast<C*>(maxima.data()));
        launch_reduction<K, S, C>(px, plan, static_cast<const C*>(maxima.data()), static_cast<S*>(y.data()), nullptr);
    } else {
        launch_reduction<K, S, C>(px, plan, nullptr, static_cast<S*>(y.data()), nullptr);
    }
}

/// Softmax along one axis: one block per row.
template <class S>
__global__ void softmax_kernel(const S* x, strided_map rows, std::int64_t len, std::int64_t stride, S* y,
                               strided_map out_rows, std::int64_t out_stride, bool log_out) {
    using C = compute_t<S>;
    const std::int64_t row = blockIdx.x;
    const std::int64_t base = rows.at(row), obase = out_rows.at(row);
    using mx = reduce_op<reduce_kind::max, C>;
    C m = mx::identity();
    for (std::int64_t k = threadIdx.x; k < len; k += block) m = mx::combine(m, element<S>::load(x[base + k * stride]));
    m = block_fold<reduce_kind::max, C>(m);
    C s = 0;
    for (std::int64_t k = threadIdx.x; k < len; k += block) s += ::exp(static_cast<C>(element<S>::load(x[base + k * stride])) - m);
    s = block_fold<reduce_kind::sum, C>(s);
    for (std::int64_t k = threadIdx.x; k < len; k += block) {
        const C d = static_cast<C>(element<S>::load(x[base + k * stride])) - m;
        y[obase + k * out_stride] = element<S>::store(log_out ? d - ::log(s) : ::exp(d) / s);
    }
}

/// im2col of one group of every batch item: col[n][(c*kh + i)*kw + j][oh*OW + ow].
template <class S>
__global__ void im2col_kernel(std::int64_t total, const S* x, std::int64_t C, std::int64_t H, std::int64_t W,
                              std::int64_t c0, std::int64_t Cg, window_2d win, std::int64_t OH, std::int64_t OW,
                              S* col) {
    const std::int64_t kh = win.kernel[0], kw = win.kernel[1];
    TENSORACLE_GRID_STRIDE(f, total) {
        std::int64_t t = f;
        const std::int64_t ow = t % OW; t /= OW;
        const std::int64_t oh = t % OH; t /= OH;
        const std::int64_t j = t % kw; t /= kw;
        const std::int64_t i = t % kh; t /= kh;
        const std::int64_t c = t % Cg; t /= Cg;
        const std::int64_t n = t;
        const std::int64_t h = oh * win.strides[0] - win.pads[0] + i * win.dilations[0];
        const std::int64_t w = ow * win.strides[1] - win.pads[1] + j * win.dilations[1];
        S v = element<S>::store(compute_t<S>(0));
        if (h >= 0 && h < H && w >= 0 && w < W) v = x[((n * C + c0 + c) * H + h) * W + w];
        col[f] = v;
    }
}

template <class S>
__global__ void pool_kernel(std::int64_t total, const S* x, std::int64_t C, std::int64_t H, std::int64_t W,
                            window_2d win, std::int64_t OH, std::int64_t OW, bool is_max, bool count_include_pad,
                            S* y) {
    using C_t = compute_t<S>;
    TENSORACLE_GRID_STRIDE(f, total) {
        std::int64_t t = f;
        const std::int64_t ow = t % OW; t /= OW;
        const std::int64_t oh = t % OH; t /= OH;
        const std::int64_t nc = t;
        const std::int64_t h0 = oh * win.strides[0] - win.pads[0], w0 = ow * win.strides[1] - win.pads[1];
        C_t acc = is_max ? -std::numeric_limits<C_t>::infinity() : C_t(0);
        std::int64_t valid = 0, padded = 0;
        for (std::int64_t i = 0; i < win.kernel[0]; ++i) {
            const std::int64_t h = h0 + i * win.dilations[0];
            for (std::int64_t j = 0; j < win.kernel[1]; ++j) {
                const std::int64_t w = w0 + j * win.dilations[1];
                const bool inside_pads = h < H + win.pads[2] && w < W + win.pads[3];
                if (h < 0 || h >= H || w < 0 || w >= W) {
                    padded += inside_pads ? 1 : 0;
                    continue;
                }
                const C_t v = element<S>::load(x[(nc * H + h) * W + w]);
                acc = is_max ? ops::binary::formula::max::apply(acc, v, 0) : acc + v;
                ++valid;
            }
        }
        if (!is_max) acc = acc / static_cast<C_t>(count_include_pad ? valid + padded : valid);
        y[f] = element<S>::store(acc);
    }
}

template <class S>
__global__ void batch_norm_kernel(std::int64_t n, const S* x, strided_map mx, std::int64_t inner, std::int64_t channels,
                                  const S* scale, const S* bias, const S* mean, const S* var, strided_map mc,
                                  compute_t<S> eps, S* y) {
    using C = compute_t<S>;
    TENSORACLE_GRID_STRIDE(i, n) {
        const std::int64_t c = mc.at((i / inner) % channels);
        const C v = element<S>::load(x[mx.at(i)]);
        const C d = ::sqrt(static_cast<C>(element<S>::load(var[c])) + eps);
        y[i] = element<S>::store((v - static_cast<C>(element<S>::load(mean[c]))) / d *
                                              static_cast<C>(element<S>::load(scale[c])) +
                                          static_cast<C>(element<S>::load(bias[c])));
    }
}

/// LayerNormalization: one block per row of `cols` contiguous elements.
template <class S>
__global__ void layer_norm_kernel(const S* x, std::int64_t cols, const S* scale, strided_map ms, const S* bias,
                                  strided_map mb, compute_t<S> eps, S* y) {
    using C = compute_t<S>;
    const S* row = x + static_cast<std::int64_t>(blockIdx.x) * cols;
    S* out = y + static_cast<std::int64_t>(blockIdx.x) * cols;
    C s = 0;
    for (std::int64_t k = threadIdx.x; k < cols; k += block) s += element<S>::load(row[k]);
    const C mean = block_fold<reduce_kind::sum, C>(s) / static_cast<C>(cols);
    C q = 0;
    for (std::int64_t k = threadIdx.x; k < cols; k += block) {
        const C d = static_cast<C>(element<S>::load(row[k])) - mean;
        q += d * d;
    }
    const C inv = C(1) / ::sqrt(block_fold<reduce_kind::sum, C>(q) / static_cast<C>(cols) + eps);
    for (std::int64_t k = threadIdx.x; k < cols; k += block) {
        C v = (static_cast<C>(element<S>::load(row[k])) - mean) * inv * static_cast<C>(element<S>::load(scale[ms.at(k)]));
        if (bias != nullptr) v += static_cast<C>(element<S>::load(bias[mb.at(k)]));
        out[k] = element<S>::store(v);
    }
}

template <class S>
__global__ void gather_kernel(std::int64_t total, const S* x, std::int64_t axis_len, std::int64_t inner,
                              const std::int64_t* idx, std::int64_t q, S* y) {
    TENSORACLE_GRID_STRIDE(f, total) {
        const std::int64_t i = f % inner, t = f / inner, j = t % q, o = t / q;
        y[f] = x[(o * axis_len + idx[j]) * inner + i];
    }
}

inline void launched(std::string_view what) {
    check(cudaGetLastError(), what);
}

/// Calls f(type tag) for the floating dtypes, else throws unsupported_error naming `where`.
template <class F>
decltype(auto) visit_floating(dtype d, std::string_view where, F&& f) {
    switch (d) {
        case dtype::f16: return f(static_cast<__half*>(nullptr));
        case dtype::bf16: return f(static_cast<__nv_bfloat16*>(nullptr));
        case dtype::f32: return f(static_cast<float*>(nullptr));
        case dtype::f64: return f(static_cast<double*>(nullptr));
        default: throw unsupported_error(where, "dtype " + std::string(name(d)) + " has no CUDA kernel here");
    }
}
/// Floating dtypes plus int32, int64 (and bool where `with_bool`).
template <class F>
decltype(auto) visit_numeric(dtype d, std::string_view where, F&& f, bool with_bool = false) {
    switch (d) {
        case dtype::i32: return f(static_cast<std::int32_t*>(nullptr));
        case dtype::i64: return f(static_cast<std::int64_t*>(nullptr));
        case dtype::boolean:
            if (with_bool) return f(static_cast<bool*>(nullptr));
            [[fallthrough]];
        default: return visit_floating(d, where, std::forward<F>(f));
    }
}
/// An unsigned type of each element width, for kernels that only move bits.
template <class F>
decltype(auto) visit_width(dtype d, F&& f) {
    switch (device_element_size(d)) {
        case 1: return f(static_cast<std::uint8_t*>(nullptr));
        case 2: return f(static_cast<std::uint16_t*>(nullptr));
        case 4: return f(static_cast<std::uint32_t*>(nullptr));
        default: return f(static_cast<std::uint64_t*>(nullptr));
    }
}
template <class T>
T* typed(const device_tensor& t) {
    return static_cast<T*>(t.data());
}

cublasHandle_t blas_handle() {
    static std::mutex m;
    static cublasHandle_t h = nullptr;
    const std::lock_guard<std::mutex> lock(m);
    if (h == nullptr) {
        const auto s = cublasCreate(&h);
        if (s != CUBLAS_STATUS_SUCCESS) throw cuda_error("cublasCreate", cublasGetStatusString(s));
    }
    return h;
}
inline void check_blas(cublasStatus_t s, std::string_view call) {
    if (s != CUBLAS_STATUS_SUCCESS) throw cuda_error(call, cublasGetStatusString(s));
}

}  // namespace kernels

// ---------------------------------------------------------------- element-wise

// Both lists, and the dispatch below, from cuda/elementwise_ops.hpp.
#define TENSORACLE_CUDA_NAME(OP, ...) #OP,
const std::vector<std::string_view>& unary_op_types() {
    static const std::vector<std::string_view> v{TENSORACLE_CUDA_UNARY_OPS(TENSORACLE_CUDA_NAME)};
    return v;
}
const std::vector<std::string_view>& binary_op_types() {
    static const std::vector<std::string_view> v{TENSORACLE_CUDA_BINARY_OPS(TENSORACLE_CUDA_NAME)};
    return v;
}
#undef TENSORACLE_CUDA_NAME

namespace kernels {
template <class F, class S, class A>
device_tensor run_unary(const device_tensor& x, const A& attrs, std::string_view where) {
    auto y = device_tensor::empty(x.element_dtype(), x.shape());
    const auto n = static_cast<std::int64_t>(x.size());
    if (n == 0) return y;
    if (x.contiguous()) {
        unary_contiguous<F, S><<<grid_for(n), block>>>(n, typed<const S>(x), typed<S>(y), attrs);
    } else {
        auto mx = x.map_to(x.shape(), where);
        collapse(mx);
        unary_strided<F, S><<<grid_for(n), block>>>(n, typed<const S>(x), mx, typed<S>(y), attrs);
    }
    launched(where);
    return y;
}

/// The attributes formula F takes, from the call's (ONNX defaults where alpha is not given).
template <class F>
auto unary_attributes(const elementwise_attributes& a, [[maybe_unused]] dtype d,
                      [[maybe_unused]] std::string_view where) {
    using namespace ops::unary;
    namespace uf = ops::unary::formula;
    [[maybe_unused]] const auto alpha = [&](float def) { return a.alpha_given ? a.alpha : def; };
    if constexpr (std::is_same_v<F, uf::leaky_relu>) {
        return alpha_attr{alpha(0.01f)};
    } else if constexpr (std::is_same_v<F, uf::elu>) {
        return elu_attr{alpha(1.0f)};
    } else if constexpr (std::is_same_v<F, uf::celu>) {
        if (d != dtype::f32) throw dtype_error(where, "Celu takes float32 only");
        return elu_attr{alpha(1.0f)};
    } else if constexpr (std::is_same_v<F, uf::selu>) {
        return selu_attr{alpha(selu_attr{}.alpha), a.gamma};
    } else if constexpr (std::is_same_v<F, uf::hard_sigmoid>) {
        return hard_sigmoid_attr{alpha(0.2f), a.beta};
    } else if constexpr (std::is_same_v<F, uf::thresholded_relu>) {
        return thresholded_relu_attr{alpha(1.0f)};
    } else {
        return 0;
    }
}
}  // namespace kernels

device_tensor unary(std::string_view op, const device_tensor& x, const elementwise_attributes& a) {
    namespace f = ops::unary::formula;
    const std::string where = "cuda::unary(" + std::string(op) + ")";
    const dtype d = x.element_dtype();
    // Integer inputs for the ops whose formula has an integer branch.
    if (d == dtype::i32 || d == dtype::i64) {
        return kernels::visit_numeric(d, where, [&](auto* tag) -> device_tensor {
            using S = std::remove_pointer_t<decltype(tag)>;
            if constexpr (std::is_integral_v<S> && !std::is_same_v<S, bool>) {
#define TENSORACLE_CUDA_UNARY(OP, F, INTEGERS)                                                          \
    if constexpr (INTEGERS) {                                                                           \
        if (op == #OP) {                                                                                \
            return kernels::run_unary<f::F, S>(x, kernels::unary_attributes<f::F>(a, d, where), where); \
        }                                                                                               \
    }
                TENSORACLE_CUDA_UNARY_OPS(TENSORACLE_CUDA_UNARY)
#undef TENSORACLE_CUDA_UNARY
            }
            throw unsupported_error(where, "dtype " + std::string(name(d)) + " has no CUDA kernel for this op");
        });
    }
    return kernels::visit_floating(d, where, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
#define TENSORACLE_CUDA_UNARY(OP, F, INTEGERS)                                                      \
    if (op == #OP) {                                                                                \
        return kernels::run_unary<f::F, S>(x, kernels::unary_attributes<f::F>(a, d, where), where); \
    }
        TENSORACLE_CUDA_UNARY_OPS(TENSORACLE_CUDA_UNARY)
#undef TENSORACLE_CUDA_UNARY
        throw unsupported_error(where, "no CUDA kernel for this op");
    });
}

namespace kernels {
template <class F, class S, class Out, class A>
device_tensor run_binary(const device_tensor& a, const device_tensor& b, dtype out, const A& attrs,
                         std::string_view where) {
    const auto shape = broadcast_shape({a.shape(), b.shape()}, where);
    auto y = device_tensor::empty(out, shape);
    const auto n = static_cast<std::int64_t>(y.size());
    if (n == 0) return y;
    const bool flat = a.contiguous() && b.contiguous() && a.shape() == shape && b.shape() == shape;
    if (flat) {
        binary_contiguous<F, S, Out><<<grid_for(n), block>>>(n, typed<const S>(a), typed<const S>(b), typed<Out>(y), attrs);
    } else {
        auto ma = a.map_to(shape, where), mb = b.map_to(shape, where);
        collapse(ma, mb);
        binary_strided<F, S, Out><<<grid_for(n), block>>>(n, typed<const S>(a), ma, typed<const S>(b), mb, typed<Out>(y),
                                                          attrs);
    }
    launched(where);
    return y;
}
}  // namespace kernels

device_tensor binary(std::string_view op, const device_tensor& a, const device_tensor& b,
                     const elementwise_attributes& at) {
    namespace f = ops::binary::formula;
    using kernels::compare_formula;
    using kernels::comparison;
    const std::string where = "cuda::binary(" + std::string(op) + ")";
    const dtype d = a.element_dtype();
    if (b.element_dtype() != d) {
        throw unsupported_error(where, "operands of different dtypes (" + std::string(name(d)) + ", " +
                                           std::string(name(b.element_dtype())) + ") have no CUDA kernel");
    }
    return kernels::visit_numeric(d, where, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
        constexpr bool integral = std::is_integral_v<S>;
#define TENSORACLE_CUDA_BINARY(OP, F, COMPARES, FLOATING_ONLY)                                                 \
    if constexpr (!(FLOATING_ONLY && integral)) {                                                            \
        if (op == #OP) {                                                                                     \
            if constexpr (std::is_same_v<F, f::fmod>) {                                                      \
                if (at.fmod != 1) throw error(where, "floating-point inputs require fmod=1");                \
            }                                                                                                \
            if constexpr (COMPARES) return kernels::run_binary<F, S, bool>(a, b, dtype::boolean, 0, where);  \
            else return kernels::run_binary<F, S, S>(a, b, d, 0, where);                                     \
        }                                                                                                    \
    }
        TENSORACLE_CUDA_BINARY_OPS(TENSORACLE_CUDA_BINARY)
#undef TENSORACLE_CUDA_BINARY
        throw unsupported_error(where, "dtype " + std::string(name(d)) + " has no CUDA kernel for this op");
    }, /*with_bool=*/false);
}

device_tensor where(const device_tensor& c, const device_tensor& x, const device_tensor& y) {
    constexpr std::string_view at = "cuda::where";
    if (c.element_dtype() != dtype::boolean) throw dtype_error(at, "condition must be bool");
    if (x.element_dtype() != y.element_dtype()) throw dtype_error(at, "X and Y must have one dtype");
    const auto shape = broadcast_shape({c.shape(), x.shape(), y.shape()}, at);
    auto out = device_tensor::empty(x.element_dtype(), shape);
    const auto n = static_cast<std::int64_t>(out.size());
    if (n == 0) return out;
    kernels::visit_width(x.element_dtype(), [&](auto* tag) {
        using W = std::remove_pointer_t<decltype(tag)>;
        auto mc = c.map_to(shape, at), mx = x.map_to(shape, at), my = y.map_to(shape, at);
        collapse(mc, mx, my);
        kernels::where_kernel<W><<<kernels::grid_for(n), kernels::block>>>(n, kernels::typed<const bool>(c), mc,
                                                                          kernels::typed<const W>(x), mx,
                                                                          kernels::typed<const W>(y), my,
                                                                          kernels::typed<W>(out));
    });
    kernels::launched(at);
    return out;
}

device_tensor clip(const device_tensor& x, std::optional<double> lo, std::optional<double> hi) {
    constexpr std::string_view at = "cuda::clip";
    return kernels::visit_numeric(x.element_dtype(), at, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
        using C = kernels::compute_t<S>;
        auto y = device_tensor::empty(x.element_dtype(), x.shape());
        const auto n = static_cast<std::int64_t>(y.size());
        if (n == 0) return y;
        kernels::clip_kernel<S><<<kernels::grid_for(n), kernels::block>>>(
            n, kernels::typed<const S>(x), x.map_to(x.shape(), at), kernels::typed<S>(y), lo.has_value(),
            static_cast<C>(lo.value_or(0.0)), hi.has_value(), static_cast<C>(hi.value_or(0.0)));
        kernels::launched(at);
        return y;
    });
}

device_tensor cast(const device_tensor& x, dtype to) {
    constexpr std::string_view at = "cuda::cast";
    return kernels::visit_numeric(x.element_dtype(), at, [&](auto* from_tag) -> device_tensor {
        using From = std::remove_pointer_t<decltype(from_tag)>;
        return kernels::visit_numeric(to, at, [&](auto* to_tag) -> device_tensor {
            using To = std::remove_pointer_t<decltype(to_tag)>;
            auto y = device_tensor::empty(to, x.shape());
            const auto n = static_cast<std::int64_t>(y.size());
            if (n == 0) return y;
            kernels::cast_kernel<To, From><<<kernels::grid_for(n), kernels::block>>>(
                n, kernels::typed<const From>(x), x.map_to(x.shape(), at), kernels::typed<To>(y));
            kernels::launched(at);
            return y;
        }, true);
    }, true);
}

namespace kernels {
inline void copy_into(const device_tensor& src, const device_tensor& dst, std::string_view at) {
    const auto n = static_cast<std::int64_t>(dst.size());
    if (n == 0) return;
    visit_width(src.element_dtype(), [&](auto* tag) {
        using W = std::remove_pointer_t<decltype(tag)>;
        auto ms = src.map_to(dst.shape(), at), md = dst.map_to(dst.shape(), at);
        collapse(ms, md);
        copy_kernel<W><<<grid_for(n), block>>>(n, typed<const W>(src), ms, typed<W>(dst), md);
    });
    launched(at);
}
}  // namespace kernels

device_tensor contiguous(const device_tensor& x) {
    auto y = device_tensor::empty(x.element_dtype(), x.shape());
    kernels::copy_into(x, y, "cuda::contiguous");
    return y;
}

device_tensor expand(const device_tensor& x, const shape_type& shape) {
    const auto out = broadcast_shape({x.shape(), shape}, "cuda::expand");
    auto y = device_tensor::empty(x.element_dtype(), out);
    kernels::copy_into(x, y, "cuda::expand");
    return y;
}

// ------------------------------------------------------------------ reductions

device_tensor reduce(reduce_kind kind, const device_tensor& x, const std::vector<std::int64_t>& axes, bool keepdims,
                     bool noop_with_empty_axes) {
    constexpr std::string_view at = "cuda::reduce";
    const auto plan = plan_reduction(x.shape(), x.strides(), x.offset(), axes, keepdims, noop_with_empty_axes, at);
    return kernels::visit_floating(x.element_dtype(), at, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
        auto y = device_tensor::empty(x.element_dtype(), plan.out_shape);
        if (plan.outputs == 0) return y;
        switch (kind) {
            case reduce_kind::sum: kernels::reduce_typed<reduce_kind::sum, S>(x, plan, y); break;
            case reduce_kind::mean: kernels::reduce_typed<reduce_kind::mean, S>(x, plan, y); break;
            case reduce_kind::max: kernels::reduce_typed<reduce_kind::max, S>(x, plan, y); break;
            case reduce_kind::min: kernels::reduce_typed<reduce_kind::min, S>(x, plan, y); break;
            case reduce_kind::prod: kernels::reduce_typed<reduce_kind::prod, S>(x, plan, y); break;
            case reduce_kind::log_sum_exp: kernels::reduce_typed<reduce_kind::log_sum_exp, S>(x, plan, y); break;
            case reduce_kind::log_sum: kernels::reduce_typed<reduce_kind::log_sum, S>(x, plan, y); break;
            case reduce_kind::l1: kernels::reduce_typed<reduce_kind::l1, S>(x, plan, y); break;
            case reduce_kind::l2: kernels::reduce_typed<reduce_kind::l2, S>(x, plan, y); break;
            case reduce_kind::sum_square: kernels::reduce_typed<reduce_kind::sum_square, S>(x, plan, y); break;
        }
        kernels::launched(at);
        return y;
    });
}

device_tensor softmax(const device_tensor& x, std::int64_t axis, bool log) {
    const std::string at = log ? "cuda::softmax(log)" : "cuda::softmax";
    const auto rank = static_cast<std::int64_t>(x.rank());
    if (axis < -rank || axis >= rank || rank == 0) throw shape_error(at, "axis out of range");
    const auto ax = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
    return kernels::visit_floating(x.element_dtype(), at, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
        auto y = device_tensor::empty(x.element_dtype(), x.shape());
        if (y.size() == 0) return y;
        // Rows: every axis but `ax`.
        const auto rows = plan_reduction(x.shape(), x.strides(), x.offset(), {static_cast<std::int64_t>(ax)}, false,
                                         false, at);
        const auto out_rows = plan_reduction(y.shape(), y.strides(), 0, {static_cast<std::int64_t>(ax)}, false, false, at);
        kernels::softmax_kernel<S><<<static_cast<unsigned>(rows.outputs), kernels::block>>>(
            kernels::typed<const S>(x), rows.kept, static_cast<std::int64_t>(x.shape()[ax]), x.strides()[ax],
            kernels::typed<S>(y), out_rows.kept, y.strides()[ax], log);
        kernels::launched(at);
        return y;
    });
}

// ------------------------------------------------------------------- products

namespace kernels {
struct blas_types {
    cudaDataType_t data;
    cublasComputeType_t compute;
};
inline blas_types blas_types_of(dtype d, gemm_precision p, std::string_view at) {
    switch (d) {
        case dtype::f64: return {CUDA_R_64F, p == gemm_precision::pedantic ? CUBLAS_COMPUTE_64F_PEDANTIC : CUBLAS_COMPUTE_64F};
        case dtype::f32:
            return {CUDA_R_32F, p == gemm_precision::pedantic ? CUBLAS_COMPUTE_32F_PEDANTIC
                                : p == gemm_precision::tf32   ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                              : CUBLAS_COMPUTE_32F};
        case dtype::f16: return {CUDA_R_16F, p == gemm_precision::pedantic ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F};
        case dtype::bf16: return {CUDA_R_16BF, p == gemm_precision::pedantic ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F};
        default: throw unsupported_error(at, "dtype " + std::string(name(d)) + " has no cuBLAS product");
    }
}

/// Row-major C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b] for `batch` products
/// with element strides between them (0 repeats an operand).
inline void gemm_rows(dtype d, gemm_precision p, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                      double alpha, const void* a, std::int64_t stride_a, const void* b, std::int64_t stride_b,
                      double beta, void* c, std::int64_t stride_c, std::int64_t batch, std::string_view at) {
    if (m == 0 || n == 0 || batch == 0) return;
    const auto t = blas_types_of(d, p, at);
    const float af = static_cast<float>(alpha), bf = static_cast<float>(beta);
    const bool dbl = d == dtype::f64;
    const void* pa = dbl ? static_cast<const void*>(&alpha) : &af;
    const void* pb = dbl ? static_cast<const void*>(&beta) : &bf;
    // Row-major as column-major: C^T = op(B)^T op(A)^T, operands swapped.
    const int lda = static_cast<int>(ta ? m : k), ldb = static_cast<int>(tb ? k : n), ldc = static_cast<int>(n);
    check_blas(cublasGemmStridedBatchedEx(blas_handle(), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                          static_cast<int>(n), static_cast<int>(m), static_cast<int>(std::max<std::int64_t>(k, 1)), pa, b, t.data, ldb,
                                          stride_b, a, t.data, lda, stride_a, pb, c, t.data, ldc, stride_c,
                                          static_cast<int>(batch), t.compute, CUBLAS_GEMM_DEFAULT),
               std::string(at) + ": cublasGemmStridedBatchedEx");
}
}  // namespace kernels

device_tensor matmul(const device_tensor& a_in, const device_tensor& b_in, gemm_precision p) {
    constexpr std::string_view at = "cuda::matmul";
    if (a_in.element_dtype() != b_in.element_dtype()) throw dtype_error(at, "A and B must have one dtype");
    if (a_in.rank() == 0 || b_in.rank() == 0) throw shape_error(at, "operands must have rank >= 1");
    const dtype d = a_in.element_dtype();
    device_tensor a = a_in.contiguous() ? a_in : contiguous(a_in);
    device_tensor b = b_in.contiguous() ? b_in : contiguous(b_in);
    const bool a_vec = a.rank() == 1, b_vec = b.rank() == 1;
    if (a_vec) a = a.reshaped({1, a.shape()[0]});
    if (b_vec) b = b.reshaped({b.shape()[0], 1});
    const std::size_t m = a.shape()[a.rank() - 2], k = a.shape()[a.rank() - 1];
    const std::size_t k2 = b.shape()[b.rank() - 2], n = b.shape()[b.rank() - 1];
    if (k != k2) throw shape_error(at, "inner dimensions differ: " + std::to_string(k) + " and " + std::to_string(k2));
    const shape_type ab(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
    const auto batch_shape = broadcast_shape({ab, bb}, at);
    shape_type out = batch_shape;
    if (!a_vec) out.push_back(m);
    if (!b_vec) out.push_back(n);
    auto y = device_tensor::empty(d, out);
    const auto batch = static_cast<std::int64_t>(element_count(batch_shape));
    if (y.size() == 0) return y;
    const auto w = static_cast<std::int64_t>(device_element_size(d));
    // Batch offsets of A and B (elements); one strided-batched call where they
    // progress evenly, else one call per batch item.
    const auto ma = broadcast_map(batch_shape, ab, contiguous_strides(ab), 0, at);
    const auto mb = broadcast_map(batch_shape, bb, contiguous_strides(bb), 0, at);
    const auto sa = static_cast<std::int64_t>(m * k), sb = static_cast<std::int64_t>(k * n), sc = static_cast<std::int64_t>(m * n);
    const std::int64_t step_a = batch > 1 ? ma.at(1) : 0, step_b = batch > 1 ? mb.at(1) : 0;
    bool even = true;
    for (std::int64_t i = 0; i < batch && even; ++i) even = ma.at(i) == i * step_a && mb.at(i) == i * step_b;
    auto* pa = static_cast<const std::byte*>(a.data());
    auto* pb = static_cast<const std::byte*>(b.data());
    auto* pc = static_cast<std::byte*>(y.data());
    if (k == 0) {  // empty inner dimension: zeros
        check(cudaMemset(y.data(), 0, y.size() * device_element_size(d)), "cudaMemset");
        return y;
    }
    if (even) {
        kernels::gemm_rows(d, p, false, false, static_cast<std::int64_t>(m), static_cast<std::int64_t>(n),
                           static_cast<std::int64_t>(k), 1.0, pa, step_a * sa, pb, step_b * sb, 0.0, pc, sc, batch, at);
    } else {
        for (std::int64_t i = 0; i < batch; ++i) {
            kernels::gemm_rows(d, p, false, false, static_cast<std::int64_t>(m), static_cast<std::int64_t>(n),
                               static_cast<std::int64_t>(k), 1.0, pa + ma.at(i) * sa * w, 0, pb + mb.at(i) * sb * w, 0,
                               0.0, pc + i * sc * w, 0, 1, at);
        }
    }
    return y;
}

device_tensor gemm(const device_tensor& a_in, const device_tensor& b_in, const device_tensor* c, float alpha,
                   float beta, bool trans_a, bool trans_b, gemm_precision p) {
    constexpr std::string_view at = "cuda::gemm";
    if (a_in.rank() != 2 || b_in.rank() != 2) throw shape_error(at, "A and B must be matrices");
    if (a_in.element_dtype() != b_in.element_dtype()) throw dtype_error(at, "A and B must have one dtype");
    const dtype d = a_in.element_dtype();
    const device_tensor a = a_in.contiguous() ? a_in : contiguous(a_in);
    const device_tensor b = b_in.contiguous() ? b_in : contiguous(b_in);
    const std::size_t m = trans_a ? a.shape()[1] : a.shape()[0], k = trans_a ? a.shape()[0] : a.shape()[1];
    const std::size_t kb = trans_b ? b.shape()[1] : b.shape()[0], n = trans_b ? b.shape()[0] : b.shape()[1];
    if (k != kb) throw shape_error(at, "inner dimensions differ: " + std::to_string(k) + " and " + std::to_string(kb));
    device_tensor y;
    if (c != nullptr && beta != 0.0f) {
        if (c->element_dtype() != d) throw dtype_error(at, "C must have A's dtype");
        if (c->rank() > 2) throw shape_error(at, "C must broadcast to (M, N)");
        y = expand(*c, {m, n});
        if (y.shape() != shape_type{m, n}) throw shape_error(at, "C does not broadcast to (M, N)");
    } else {
        y = device_tensor::empty(d, {m, n});
        beta = 0.0f;
    }
    if (k == 0) {
        if (beta == 0.0f) check(cudaMemset(y.data(), 0, y.size() * device_element_size(d)), "cudaMemset");
        else y = binary("Mul", y, to_device(tensor::from(array<float>{beta}).cast(d)));
        return y;
    }
    kernels::gemm_rows(d, p, trans_a, trans_b, static_cast<std::int64_t>(m), static_cast<std::int64_t>(n),
                       static_cast<std::int64_t>(k), alpha, a.data(), 0, b.data(), 0, beta, y.data(), 0, 1, at);
    return y;
}

// ------------------------------------------------------------ convolution, pooling

device_tensor conv2d(const device_tensor& x_in, const device_tensor& w_in, const device_tensor* bias,
                     const window_2d& win, std::int64_t group, const shape_type& out_shape, gemm_precision p) {
    constexpr std::string_view at = "cuda::conv2d";
    if (x_in.rank() != 4 || w_in.rank() != 4 || out_shape.size() != 4) throw unsupported_error(at, "2-D convolutions (NCHW) only");
    if (x_in.element_dtype() != w_in.element_dtype()) throw dtype_error(at, "X and W must have one dtype");
    const dtype d = x_in.element_dtype();
    const device_tensor x = x_in.contiguous() ? x_in : contiguous(x_in);
    const device_tensor w = w_in.contiguous() ? w_in : contiguous(w_in);
    const auto N = static_cast<std::int64_t>(x.shape()[0]), C = static_cast<std::int64_t>(x.shape()[1]);
    const auto H = static_cast<std::int64_t>(x.shape()[2]), W = static_cast<std::int64_t>(x.shape()[3]);
    const auto M = static_cast<std::int64_t>(w.shape()[0]);
    const auto OH = static_cast<std::int64_t>(out_shape[2]), OW = static_cast<std::int64_t>(out_shape[3]);
    if (group <= 0 || C % group != 0 || M % group != 0 || static_cast<std::int64_t>(w.shape()[1]) * group != C ||
        static_cast<std::int64_t>(out_shape[0]) != N || static_cast<std::int64_t>(out_shape[1]) != M) {
        throw shape_error(at, "X, W, group and the output shape do not fit together");
    }
    if (static_cast<std::int64_t>(w.shape()[2]) != win.kernel[0] || static_cast<std::int64_t>(w.shape()[3]) != win.kernel[1]) {
        throw shape_error(at, "kernel_shape differs from W's spatial dims");
    }
    auto y = device_tensor::empty(d, out_shape);
    if (y.size() == 0) return y;
    const std::int64_t Cg = C / group, Mg = M / group, K = Cg * win.kernel[0] * win.kernel[1], P = OH * OW;
    const auto width = static_cast<std::int64_t>(device_element_size(d));
    // The bias enters the product as beta * C with C = B broadcast over (N, M, OH*OW), so the
    // sum is rounded once (after the GEMM, a second rounding would show where B cancels it).
    double beta = 0.0;
    if (bias != nullptr) {
        if (bias->element_dtype() != d || bias->rank() != 1 || static_cast<std::int64_t>(bias->shape()[0]) != M) {
            throw shape_error(at, "B must be a vector of M elements of X's dtype");
        }
        const auto b2 = bias->contiguous() ? *bias : contiguous(*bias);
        kernels::copy_into(b2.reshaped({static_cast<std::size_t>(M), 1}),
                           y.reshaped({static_cast<std::size_t>(N), static_cast<std::size_t>(M), static_cast<std::size_t>(P)}),
                           at);
        beta = 1.0;
    }
    device_buffer col(static_cast<std::size_t>(N * K * P * width));
    for (std::int64_t g = 0; g < group; ++g) {
        kernels::visit_floating(d, at, [&](auto* tag) {
            using S = std::remove_pointer_t<decltype(tag)>;
            const std::int64_t total = N * K * P;
            kernels::im2col_kernel<S><<<kernels::grid_for(total), kernels::block>>>(
                total, kernels::typed<const S>(x), C, H, W, g * Cg, Cg, win, OH, OW, static_cast<S*>(col.data()));
        });
        kernels::launched(at);
        // Y[n, g*Mg:(g+1)*Mg] (Mg x P) = W_g (Mg x K) * col[n] (K x P) + beta * Y, batched over n.
        kernels::gemm_rows(d, p, false, false, Mg, P, K, 1.0, static_cast<const std::byte*>(w.data()) + g * Mg * K * width,
                           0, col.data(), K * P, beta, static_cast<std::byte*>(y.data()) + g * Mg * P * width, M * P, N, at);
    }
    return y;  // col is freed in stream order, after the kernels
}

namespace kernels {
inline device_tensor pool(const device_tensor& x_in, const window_2d& win, bool is_max, bool include_pad,
                          const shape_type& out_shape, std::string_view at) {
    if (x_in.rank() != 4 || out_shape.size() != 4) throw unsupported_error(at, "2-D pooling (NCHW) only");
    if (out_shape[0] != x_in.shape()[0] || out_shape[1] != x_in.shape()[1]) throw shape_error(at, "output shape does not fit X");
    const device_tensor x = x_in.contiguous() ? x_in : contiguous(x_in);
    auto y = device_tensor::empty(x.element_dtype(), out_shape);
    const auto total = static_cast<std::int64_t>(y.size());
    if (total == 0) return y;
    visit_floating(x.element_dtype(), at, [&](auto* tag) {
        using S = std::remove_pointer_t<decltype(tag)>;
        pool_kernel<S><<<grid_for(total), block>>>(total, typed<const S>(x), static_cast<std::int64_t>(x.shape()[1]),
                                                   static_cast<std::int64_t>(x.shape()[2]),
                                                   static_cast<std::int64_t>(x.shape()[3]), win,
                                                   static_cast<std::int64_t>(out_shape[2]),
                                                   static_cast<std::int64_t>(out_shape[3]), is_max, include_pad,
                                                   typed<S>(y));
    });
    launched(at);
    return y;
}
}  // namespace kernels

device_tensor max_pool2d(const device_tensor& x, const window_2d& win, const shape_type& out_shape) {
    return kernels::pool(x, win, true, false, out_shape, "cuda::max_pool2d");
}
device_tensor average_pool2d(const device_tensor& x, const window_2d& win, bool count_include_pad,
                             const shape_type& out_shape) {
    return kernels::pool(x, win, false, count_include_pad, out_shape, "cuda::average_pool2d");
}

// -------------------------------------------------------------- normalisation

device_tensor batch_norm(const device_tensor& x, const device_tensor& scale, const device_tensor& bias,
                         const device_tensor& mean, const device_tensor& var, float epsilon) {
    constexpr std::string_view at = "cuda::batch_norm";
    if (x.rank() < 2) throw shape_error(at, "X must have rank >= 2 (N, C, ...)");
    const std::size_t C = x.shape()[1];
    for (const auto* t : {&scale, &bias, &mean, &var}) {
        if (t->rank() != 1 || t->shape()[0] != C || t->element_dtype() != x.element_dtype() || !t->contiguous()) {
            throw shape_error(at, "scale, B, mean and var must be contiguous vectors of C elements of X's dtype");
        }
    }
    return kernels::visit_floating(x.element_dtype(), at, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
        auto y = device_tensor::empty(x.element_dtype(), x.shape());
        const auto n = static_cast<std::int64_t>(y.size());
        if (n == 0) return y;
        const auto inner = static_cast<std::int64_t>(element_count(shape_type(x.shape().begin() + 2, x.shape().end())));
        kernels::batch_norm_kernel<S><<<kernels::grid_for(n), kernels::block>>>(
            n, kernels::typed<const S>(x), x.map_to(x.shape(), at), inner, static_cast<std::int64_t>(C),
            kernels::typed<const S>(scale), kernels::typed<const S>(bias), kernels::typed<const S>(mean),
            kernels::typed<const S>(var), scale.map_to(scale.shape(), at), static_cast<kernels::compute_t<S>>(epsilon),
            kernels::typed<S>(y));
        kernels::launched(at);
        return y;
    });
}

device_tensor layer_norm(const device_tensor& x_in, const device_tensor& scale, const device_tensor* bias,
                         std::int64_t axis, float epsilon) {
    constexpr std::string_view at = "cuda::layer_norm";
    const auto rank = static_cast<std::int64_t>(x_in.rank());
    if (axis < -rank || axis >= rank) throw shape_error(at, "axis out of range");
    const auto ax = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
    const device_tensor x = x_in.contiguous() ? x_in : contiguous(x_in);
    const shape_type norm(x.shape().begin() + static_cast<std::ptrdiff_t>(ax), x.shape().end());
    const auto cols = static_cast<std::int64_t>(element_count(norm));
    const auto rows = static_cast<std::int64_t>(element_count(shape_type(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(ax))));
    if (scale.element_dtype() != x.element_dtype() || (bias != nullptr && bias->element_dtype() != x.element_dtype())) {
        throw dtype_error(at, "Scale and B must have X's dtype");
    }
    const auto ms = scale.map_to(norm, at);
    const auto mb = bias != nullptr ? bias->map_to(norm, at) : strided_map{};
    return kernels::visit_floating(x.element_dtype(), at, [&](auto* tag) -> device_tensor {
        using S = std::remove_pointer_t<decltype(tag)>;
        auto y = device_tensor::empty(x.element_dtype(), x.shape());
        if (y.size() == 0) return y;
        kernels::layer_norm_kernel<S><<<static_cast<unsigned>(rows), kernels::block>>>(
            kernels::typed<const S>(x), cols, kernels::typed<const S>(scale), ms,
            bias != nullptr ? kernels::typed<const S>(*bias) : nullptr, mb, static_cast<kernels::compute_t<S>>(epsilon),
            kernels::typed<S>(y));
        kernels::launched(at);
        return y;
    });
}

// --------------------------------------------------------------- data movement

device_tensor concat(const std::vector<device_tensor>& xs, std::int64_t axis) {
    constexpr std::string_view at = "cuda::concat";
    if (xs.empty()) throw shape_error(at, "needs at least one input");
    const auto rank = static_cast<std::int64_t>(xs[0].rank());
    if (axis < -rank || axis >= rank) throw shape_error(at, "axis out of range");
    const auto ax = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
    shape_type out = xs[0].shape();
    out[ax] = 0;
    for (const auto& x : xs) {
        if (x.rank() != xs[0].rank() || x.element_dtype() != xs[0].element_dtype()) {
            throw shape_error(at, "inputs must share rank and dtype");
        }
        for (std::size_t k = 0; k < x.rank(); ++k) {
            if (k != ax && x.shape()[k] != xs[0].shape()[k]) throw shape_error(at, "inputs differ off the axis");
        }
        out[ax] += x.shape()[ax];
    }
    auto y = device_tensor::empty(xs[0].element_dtype(), out);
    std::int64_t start = 0;
    for (const auto& x : xs) {
        if (x.shape()[ax] != 0) kernels::copy_into(x, y.sliced(ax, start, 1, x.shape()[ax]), at);
        start += static_cast<std::int64_t>(x.shape()[ax]);
    }
    return y;
}

device_tensor gather(const device_tensor& x_in, const tensor& indices, std::int64_t axis) {
    constexpr std::string_view at = "cuda::gather";
    const auto rank = static_cast<std::int64_t>(x_in.rank());
    if (rank == 0 || axis < -rank || axis >= rank) throw shape_error(at, "axis out of range");
    const auto ax = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
    if (indices.element_dtype() != dtype::i64 && indices.element_dtype() != dtype::i32) {
        throw dtype_error(at, "indices must be int32 or int64");
    }
    const auto len = static_cast<std::int64_t>(x_in.shape()[ax]);
    const auto idx = indices.to<std::int64_t>();
    array<std::int64_t> norm = idx;
    for (std::size_t i = 0; i < norm.size(); ++i) {
        std::int64_t v = norm.data()[i];
        if (v < -len || v >= len) {
            throw shape_error(at, "index " + std::to_string(v) + " is out of range for axis length " + std::to_string(len));
        }
        norm.data()[i] = v < 0 ? v + len : v;
    }
    const device_tensor x = x_in.contiguous() ? x_in : contiguous(x_in);
    shape_type out(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(ax));
    out.insert(out.end(), indices.shape().begin(), indices.shape().end());
    out.insert(out.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(ax) + 1, x.shape().end());
    auto y = device_tensor::empty(x.element_dtype(), out);
    const auto total = static_cast<std::int64_t>(y.size());
    if (total == 0) return y;
    const auto d_idx = to_device(tensor::from(norm));
    const auto inner = static_cast<std::int64_t>(element_count(shape_type(x.shape().begin() + static_cast<std::ptrdiff_t>(ax) + 1, x.shape().end())));
    kernels::visit_width(x.element_dtype(), [&](auto* tag) {
        using W = std::remove_pointer_t<decltype(tag)>;
        kernels::gather_kernel<W><<<kernels::grid_for(total), kernels::block>>>(
            total, kernels::typed<const W>(x), len, inner, kernels::typed<const std::int64_t>(d_idx),
            static_cast<std::int64_t>(norm.size()), kernels::typed<W>(y));
    });
    kernels::launched(at);
    return y;
}

}  // namespace tensoracle::cuda
