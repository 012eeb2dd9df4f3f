// GENERATED FILE - DO NOT EDIT.
// Made by scripts/amalgamate from include/tensoracle/cuda.hpp; edit those headers and rerun it.
// tensoracle: header-only test kit for deep-learning compilers and AD engines.
#pragma once
#include "tensoracle.hpp"
// ---- begin tensoracle/cuda.hpp ----
// tensoracle: the CUDA part of the kit, host side: device tensors, the CUDA
// reference kernels' API and the graph runner with per-node CPU fallback.
// Optional: needs the CUDA runtime's headers, and the kernels compiled once
// by nvcc (link the CMake target tensoracle::cuda, or compile
// <tensoracle/cuda/ops.cuh> in one .cu file of your own).

// ---- begin tensoracle/cuda/device_tensor.hpp ----
// tensoracle: tensors on a CUDA device. A device_tensor is a dtype, a shape,
// element strides and an offset into a shared RAII device buffer, so views
// (transpose, slices with steps, broadcasts) cost no copy and every kernel
// accepts non-contiguous operands. Copies to and from the kit's `tensor`.
// Errors of the CUDA runtime and cuBLAS throw cuda::cuda_error naming the
// call. Host code: compiles with any C++20 compiler and the CUDA runtime
// headers; only the kernels (cuda/ops.cuh) need nvcc.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_runtime_api.h>

// ---- begin tensoracle/cuda/layout.hpp ----
// tensoracle: index arithmetic of the CUDA kernels, host-testable. A kernel
// walks an iteration shape in row-major order and reads each operand through
// a strided_map: dims of the iteration space and the operand's element
// strides (0 where it broadcasts, negative for reversed slices). Built on the
// host, passed to kernels by value; no CUDA needed to compile or test it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// ---- begin tensoracle/ops/formulas.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_FORMULAS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_FORMULAS_HPP
// tensoracle: the per-element formulas of the element-wise ops, in one place
// for the CPU kernels (ops/unary.hpp, ops/binary.hpp) and the CUDA kernels
// (cuda/kernels.cuh). A fix to a formula lands in both, so they cannot drift.
//
// This header depends on core/scalar.hpp alone so that nvcc parses it (the
// spec layer does not go through nvcc's device compiler). Each formula is a
// struct with `apply(x, attributes)`; the op's spec struct derives from it.
// Formulas are written for any real V: float, double, AD scalars on the host.
// Integer branches (wrapping arithmetic) stay host-and-device safe; integer
// errors (division by zero) are thrown by the spec layer, not here.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>


/// Marks a function callable from host and device code under nvcc; empty
/// for host compilers. Calls into std:: math need nvcc's --expt-relaxed-constexpr.
#if defined(__CUDACC__)
#define TENSORACLE_HD __host__ __device__
#else
#define TENSORACLE_HD
#endif

namespace tensoracle::ops {

namespace formula {
/// Integer arithmetic that wraps instead of overflowing (UB-free).
template <class V>
TENSORACLE_HD constexpr V wrapping_add(V a, V b) {
    return static_cast<V>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
template <class V>
TENSORACLE_HD constexpr V wrapping_sub(V a, V b) {
    return static_cast<V>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
template <class V>
TENSORACLE_HD constexpr V wrapping_mul(V a, V b) {
    return static_cast<V>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}
/// std::max(0, std::min(1, v)) exactly: NaN gives 1, and at 0 and 1 the
/// constant is taken (its derivative 0 on AD scalars).
template <class V>
TENSORACLE_HD constexpr V clamp01(V v) {
    const V t = v < V(1) ? v : V(1);
    return V(0) < t ? t : V(0);
}
}  // namespace formula

namespace unary {

// Attributes of the activations (the spec layer adapts them for parsing).
struct alpha_attr {
    float alpha = 0.01f;
};
struct elu_attr {
    float alpha = 1.0f;
};
struct selu_attr {
    float alpha = 1.67326319217681884765625f;
    float gamma = 1.05070102214813232421875f;
};
struct hard_sigmoid_attr {
    float alpha = 0.2f;
    float beta = 0.5f;
};
struct thresholded_relu_attr {
    float alpha = 1.0f;
};

namespace formula {
using namespace tensoracle::ops::formula;

#define TENSORACLE_FORMULA(NAME, BODY)                     \
    struct NAME {                                          \
        template <class V, class A>                        \
        TENSORACLE_HD static V apply(V x, const A& a) {    \
            (void)a;                                       \
            BODY                                           \
        }                                                  \
    };

TENSORACLE_FORMULA(relu, return x > V(0) ? x : V(0);)
TENSORACLE_FORMULA(abs, if constexpr (std::is_unsigned_v<V>) {
    return x;
} else if constexpr (std::is_integral_v<V>) {
    return x < 0 ? static_cast<V>(-static_cast<std::int64_t>(x)) : x;  // INT_MIN wraps
} else {
    return math::fabs(x);
})
TENSORACLE_FORMULA(neg, if constexpr (std::is_integral_v<V>) {
    return static_cast<V>(0 - static_cast<std::uint64_t>(static_cast<std::int64_t>(x)));  // wraps
} else {
    return -x;
})
TENSORACLE_FORMULA(sign, if constexpr (std::is_unsigned_v<V>) {
    return x > V(0) ? V(1) : V(0);
} else {
    return x > V(0) ? V(1) : (x < V(0) ? V(-1) : V(0));
})
TENSORACLE_FORMULA(ceil, return math::ceil(x);)
TENSORACLE_FORMULA(floor, return math::floor(x);)
/// Halves go to the even neighbour (ONNX and IEEE default).
TENSORACLE_FORMULA(round, return math::nearbyint(x);)
TENSORACLE_FORMULA(exp, return math::exp(x);)
TENSORACLE_FORMULA(log, return math::log(x);)
TENSORACLE_FORMULA(sqrt, return math::sqrt(x);)
TENSORACLE_FORMULA(reciprocal, return V(1) / x;)
/// Two branches so that exp never overflows: same value as 1/(1+exp(-x)).
TENSORACLE_FORMULA(sigmoid, return x >= V(0) ? V(1) / (V(1) + math::exp(-x)) : math::exp(x) / (V(1) + math::exp(x));)
TENSORACLE_FORMULA(tanh, return math::tanh(x);)
/// log(exp(x) + 1) as x + log1p(exp(-x)) for x >= 0: no overflow for large x,
/// and per sign, so that no kink of max or |.| shows in the derivative at 0.
TENSORACLE_FORMULA(softplus, return x >= V(0) ? x + math::log1p(math::exp(-x)) : math::log1p(math::exp(x));)
TENSORACLE_FORMULA(softsign, return x / (V(1) + math::fabs(x));)
TENSORACLE_FORMULA(sin, return math::sin(x);)
TENSORACLE_FORMULA(cos, return math::cos(x);)
TENSORACLE_FORMULA(tan, return math::tan(x);)
TENSORACLE_FORMULA(asin, return math::asin(x);)
TENSORACLE_FORMULA(acos, return math::acos(x);)
TENSORACLE_FORMULA(atan, return math::atan(x);)
TENSORACLE_FORMULA(sinh, return math::sinh(x);)
TENSORACLE_FORMULA(cosh, return math::cosh(x);)
TENSORACLE_FORMULA(asinh, return math::asinh(x);)
TENSORACLE_FORMULA(acosh, return math::acosh(x);)
TENSORACLE_FORMULA(atanh, return math::atanh(x);)
TENSORACLE_FORMULA(not_, return !x;)
TENSORACLE_FORMULA(identity, return x;)
TENSORACLE_FORMULA(leaky_relu, return x >= V(0) ? x : V(a.alpha) * x;)
TENSORACLE_FORMULA(elu, return x >= V(0) ? x : V(a.alpha) * math::expm1(x);)
/// max(0, x) + min(0, alpha * expm1(x / alpha)), written per sign with the same values (also -0 -> +0 and
/// NaN -> 0, as max/min give), so that the derivative at 0 is 1 and not max's and min's 0.
TENSORACLE_FORMULA(celu, const V al(a.alpha); if (x >= V(0)) return x + V(0); if (!(x < V(0))) return V(0);
                   const V m = al * math::expm1(x / al); return V(0) + (m < V(0) ? m : V(0));)
TENSORACLE_FORMULA(selu, return V(a.gamma) * (x > V(0) ? x : V(a.alpha) * math::expm1(x));)
TENSORACLE_FORMULA(hard_sigmoid, return clamp01(V(a.alpha) * x + V(a.beta));)
TENSORACLE_FORMULA(hard_swish, return x * clamp01(V(1.0f / 6.0f) * x + V(0.5f));)
TENSORACLE_FORMULA(thresholded_relu, return x > V(a.alpha) ? x : V(0);)
#undef TENSORACLE_FORMULA

/// Erf also takes integers (ONNX-13): erf in double, truncated to the type
/// (the spec layer handles integers; this is the floating formula).
struct erf {
    template <class V, class A>
    TENSORACLE_HD static V apply(V x, const A&) {
        return math::erf(x);
    }
};
}  // namespace formula
}  // namespace unary

namespace binary {
namespace formula {
using namespace tensoracle::ops::formula;

#define TENSORACLE_FORMULA(NAME, BODY)                          \
    struct NAME {                                               \
        template <class V, class A>                             \
        TENSORACLE_HD static V apply(V a, V b, const A& at) {   \
            (void)at;                                           \
            BODY                                                \
        }                                                       \
    };
TENSORACLE_FORMULA(add, if constexpr (std::is_integral_v<V>) { return wrapping_add(a, b); } else { return a + b; })
TENSORACLE_FORMULA(sub, if constexpr (std::is_integral_v<V>) { return wrapping_sub(a, b); } else { return a - b; })
TENSORACLE_FORMULA(mul, if constexpr (std::is_integral_v<V>) { return wrapping_mul(a, b); } else { return a * b; })
/// Floating division (integer division by zero is the spec layer's error).
TENSORACLE_FORMULA(div, return a / b;)
/// NaN in either operand gives NaN (ONNX Max/Min); otherwise the larger (smaller) one.
TENSORACLE_FORMULA(max, if constexpr (!std::is_integral_v<V>) {
    if (math::isnan(a) || math::isnan(b)) return std::numeric_limits<V>::quiet_NaN();
} return a < b ? b : a;)
TENSORACLE_FORMULA(min, if constexpr (!std::is_integral_v<V>) {
    if (math::isnan(a) || math::isnan(b)) return std::numeric_limits<V>::quiet_NaN();
} return b < a ? b : a;)
/// Sum and Mean fold their inputs with +; Mean divides at the end (spec layer).
struct sum : add {};
struct mean : add {};
/// Floating Mod with fmod=1: the dividend's sign (C fmod).
TENSORACLE_FORMULA(fmod, return math::fmod(a, b);)
/// Floating Pow of same-type operands.
TENSORACLE_FORMULA(pow, return math::pow(a, b);)
#undef TENSORACLE_FORMULA
}  // namespace formula
}  // namespace binary

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_FORMULAS_HPP
// ---- end tensoracle/ops/formulas.hpp ----

namespace tensoracle::cuda {

/// The highest rank a CUDA kernel indexes (ONNX models rarely exceed 6).
inline constexpr int max_rank = 8;

/// Iteration dims and one operand's strides, in elements.
struct strided_map {
    int rank = 0;
    std::int64_t dims[max_rank] = {};
    std::int64_t strides[max_rank] = {};
    std::int64_t offset = 0;  ///< elements from the buffer's start
    /// The iteration space has fewer than 2^31 elements: index arithmetic in
    /// 32 bits with division by multiplication (a GPU divides 64-bit integers
    /// in software, 32-bit ones in about 20 instructions). Set by narrowed().
    bool narrow = false;
    std::uint32_t div_mul[max_rank] = {};    ///< per axis: q = hi32(n * div_mul) >> div_shift ...
    std::uint32_t div_shift[max_rank] = {};  ///< ... for n < 2^31 (div_mul 0: dims 1, q = n)

    /// n / dims[d] for n < 2^31, by the multiplier narrowed() chose (round-up method).
    TENSORACLE_HD std::uint32_t divide(std::uint32_t n, int d) const {
        if (div_mul[d] == 0) return n;
#if defined(__CUDA_ARCH__)
        return __umulhi(n, div_mul[d]) >> div_shift[d];
#else
        return static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * div_mul[d]) >> 32) >> div_shift[d];
#endif
    }

    /// The operand's element offset of the row-major position `flat` of the iteration space.
    TENSORACLE_HD std::int64_t at(std::int64_t flat) const {
        if (rank == 1) return offset + flat * strides[0];
        std::int64_t off = offset;
        if (narrow) {
            auto f = static_cast<std::uint32_t>(flat);
            for (int d = rank - 1; d >= 0; --d) {
                const std::uint32_t q = divide(f, d);
                off += static_cast<std::int64_t>(f - q * static_cast<std::uint32_t>(dims[d])) * strides[d];
                f = q;
            }
            return off;
        }
        for (int d = rank - 1; d >= 0; --d) {
            const std::int64_t i = flat % dims[d];
            flat /= dims[d];
            off += i * strides[d];
        }
        return off;
    }
    /// This map with `narrow` set (and the divisors prepared) where its iteration space allows.
    [[nodiscard]] strided_map narrowed() const {
        strided_map m = *this;
        std::uint64_t n = 1;
        bool fits = true;
        for (int d = 0; d < rank; ++d) {
            if (dims[d] < 0 || static_cast<std::uint64_t>(dims[d]) >= (std::uint64_t{1} << 31)) {
                fits = false;
                break;
            }
            n *= static_cast<std::uint64_t>(dims[d]);
            if (n >= (std::uint64_t{1} << 31)) fits = false;
        }
        m.narrow = fits;
        for (int d = 0; d < rank && fits; ++d) {
            const auto v = static_cast<std::uint64_t>(dims[d]);
            if (v <= 1) {
                m.div_mul[d] = 0;
                m.div_shift[d] = 0;
                continue;
            }
            unsigned ceil_log2 = 0;
            while ((std::uint64_t{1} << ceil_log2) < v) ++ceil_log2;
            const unsigned p = 31 + ceil_log2;
            m.div_mul[d] = static_cast<std::uint32_t>(((std::uint64_t{1} << p) + v - 1) / v);
            m.div_shift[d] = p - 32;
        }
        return m;
    }
};

/// Merges adjacent axes of maps over one iteration space wherever every map
/// steps through them as through one axis (stride[k] == stride[k+1] * dims[k+1]),
/// and drops axes of length 1: fewer axes, less index arithmetic per element.
/// Every map must have the same rank and dims.
inline void collapse(std::span<strided_map* const> maps) {
    if (maps.empty()) return;
    strided_map& first = *maps.front();
    int out = 0;
    for (int k = 0; k < first.rank; ++k) {
        if (first.dims[k] == 1 && first.rank > 1) continue;  // a unit axis moves nothing
        bool merge = out > 0;
        for (const auto* m : maps) {
            merge = merge && m->strides[out - 1] == m->strides[k] * m->dims[k];
        }
        for (auto* m : maps) {
            if (merge) {
                m->dims[out - 1] *= m->dims[k];
                m->strides[out - 1] = m->strides[k];
            } else {
                m->dims[out] = m->dims[k];
                m->strides[out] = m->strides[k];
            }
        }
        if (!merge) ++out;
    }
    if (out == 0 && first.rank > 0) {  // every axis had length 1: one axis of one element
        for (auto* m : maps) {
            m->dims[0] = 1;
            m->strides[0] = 0;
        }
        out = 1;
    }
    for (auto* m : maps) {
        m->rank = out;
        *m = m->narrowed();
    }
}
/// collapse(a, b, ...) for maps at hand (no allocation).
template <class... Maps>
void collapse(strided_map& first, Maps&... rest) {
    const std::array<strided_map*, 1 + sizeof...(Maps)> maps{&first, &rest...};
    collapse(std::span<strided_map* const>(maps));
}

/// Row-major strides of a shape, in elements.
inline std::vector<std::int64_t> contiguous_strides(const std::vector<std::size_t>& shape) {
    std::vector<std::int64_t> s(shape.size());
    std::int64_t acc = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        s[i] = acc;
        acc *= static_cast<std::int64_t>(shape[i]);
    }
    return s;
}

/// ONNX (numpy) multidirectional broadcasting of shapes; throws shape_error naming `where`.
inline std::vector<std::size_t> broadcast_shape(const std::vector<std::vector<std::size_t>>& shapes,
                                                std::string_view where) {
    std::size_t rank = 0;
    for (const auto& s : shapes) rank = s.size() > rank ? s.size() : rank;
    std::vector<std::size_t> out(rank, 1);
    for (const auto& s : shapes) {
        for (std::size_t k = 0; k < s.size(); ++k) {
            std::size_t& o = out[rank - s.size() + k];
            const std::size_t d = s[k];
            if (d == o || d == 1) continue;
            if (o != 1) {
                throw shape_error(where, "shapes do not broadcast: dimension " + std::to_string(d) + " against " +
                                             std::to_string(o) + " at axis " + std::to_string(rank - s.size() + k));
            }
            o = d;
        }
    }
    return out;
}

/// The map that reads an operand of `shape` and `strides` (elements) at the
/// positions of the iteration space `out` it broadcasts to (right-aligned).
inline strided_map broadcast_map(const std::vector<std::size_t>& out, const std::vector<std::size_t>& shape,
                                 const std::vector<std::int64_t>& strides, std::int64_t offset,
                                 std::string_view where) {
    if (out.size() > static_cast<std::size_t>(max_rank)) {
        throw unsupported_error(where, "rank " + std::to_string(out.size()) + " exceeds the CUDA kernels' limit of " +
                                           std::to_string(max_rank));
    }
    if (shape.size() > out.size() || strides.size() != shape.size()) {
        throw shape_error(where, "operand of rank " + std::to_string(shape.size()) + " does not broadcast to rank " +
                                     std::to_string(out.size()));
    }
    strided_map m;
    m.rank = static_cast<int>(out.size());
    m.offset = offset;
    const std::size_t lead = out.size() - shape.size();
    for (std::size_t k = 0; k < out.size(); ++k) {
        m.dims[k] = static_cast<std::int64_t>(out[k]);
        if (k < lead) {
            m.strides[k] = 0;
            continue;
        }
        const std::size_t d = shape[k - lead];
        if (d != out[k] && d != 1) {
            throw shape_error(where, "dimension " + std::to_string(d) + " does not broadcast to " +
                                         std::to_string(out[k]) + " at axis " + std::to_string(k));
        }
        m.strides[k] = d == 1 ? 0 : strides[k - lead];
    }
    return m.narrowed();
}

/// A reduction split into kept (output) and reduced axes: output o reads the
/// elements kept.at(o) + reduced.at(r) for r in [0, count).
struct reduction_plan {
    strided_map kept;     ///< over the output positions (kept axes)
    strided_map reduced;  ///< over the reduced positions, offset 0
    std::int64_t outputs = 1;
    std::int64_t count = 1;  ///< elements per output
    std::vector<std::size_t> out_shape;  ///< with keepdims applied
};

/// Plans a reduction of `shape` (strides in elements) over `axes` (negative
/// counts from the end; empty = all axes unless noop_with_empty_axes).
inline reduction_plan plan_reduction(const std::vector<std::size_t>& shape, const std::vector<std::int64_t>& strides,
                                     std::int64_t offset, std::vector<std::int64_t> axes, bool keepdims,
                                     bool noop_with_empty_axes, std::string_view where) {
    const auto rank = static_cast<std::int64_t>(shape.size());
    if (rank > max_rank) {
        throw unsupported_error(where, "rank " + std::to_string(rank) + " exceeds the CUDA kernels' limit of " +
                                           std::to_string(max_rank));
    }
    std::vector<bool> reduce(shape.size(), false);
    if (axes.empty() && !noop_with_empty_axes) {
        reduce.assign(shape.size(), true);
    }
    for (auto a : axes) {
        const std::int64_t n = a < 0 ? a + rank : a;
        if (n < 0 || n >= rank) {
            throw shape_error(where, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
        }
        if (reduce[static_cast<std::size_t>(n)]) {
            throw shape_error(where, "axis " + std::to_string(a) + " is repeated");
        }
        reduce[static_cast<std::size_t>(n)] = true;
    }
    reduction_plan p;
    p.kept.offset = offset;
    for (std::size_t k = 0; k < shape.size(); ++k) {
        const auto d = static_cast<std::int64_t>(shape[k]);
        if (reduce[k]) {
            p.reduced.dims[p.reduced.rank] = d;
            p.reduced.strides[p.reduced.rank++] = strides[k];
            p.count *= d;
            if (keepdims) p.out_shape.push_back(1);
        } else {
            p.kept.dims[p.kept.rank] = d;
            p.kept.strides[p.kept.rank++] = strides[k];
            p.outputs *= d;
            p.out_shape.push_back(shape[k]);
        }
    }
    if (p.kept.rank > 0) collapse(p.kept);
    if (p.reduced.rank > 0) collapse(p.reduced);
    return p;
}

}  // namespace tensoracle::cuda
// ---- end tensoracle/cuda/layout.hpp ----

namespace tensoracle::cuda {

/// A failed call of the CUDA runtime or cuBLAS; where() names the call.
class cuda_error : public error {
public:
    using error::error;
};

/// Throws cuda_error "call: <runtime's message>" unless `status` is success.
inline void check(cudaError_t status, std::string_view call) {
    if (status != cudaSuccess) {
        throw cuda_error(call, std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status));
    }
}

/// Whether a CUDA device is usable here (false without a driver or a GPU).
inline bool device_available() {
    int n = 0;
    const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return ok;
}

/// Bytes of one element on the device (bool is one byte, as on the host).
inline std::size_t device_element_size(dtype d) { return d == dtype::boolean ? 1 : static_cast<std::size_t>(info(d).bits / 8); }

namespace detail {
/// Whether the current device has stream-ordered allocation; if so, its pool
/// keeps freed memory for reuse (a kernel's output then costs no cudaMalloc).
inline bool use_memory_pool() {
    static const bool pool = [] {
        int dev = 0, supported = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess || supported == 0) {
            (void)cudaGetLastError();
            return false;
        }
        cudaMemPool_t p = nullptr;
        if (cudaDeviceGetDefaultMemPool(&p, dev) != cudaSuccess) {
            (void)cudaGetLastError();
            return false;
        }
        std::uint64_t keep = ~std::uint64_t{0};
        (void)cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep);
        return true;
    }();
    return pool;
}
}  // namespace detail

/// An owning block of device memory, ordered on the default stream: it may be
/// released while kernels that use it are queued (they finish first).
class device_buffer {
public:
    explicit device_buffer(std::size_t bytes) : bytes_(bytes) {
        if (bytes == 0) return;
        const std::string call = "cudaMalloc(" + std::to_string(bytes) + " bytes)";
        if (detail::use_memory_pool()) {
            const auto s = cudaMallocAsync(&ptr_, bytes, nullptr);
            if (s != cudaSuccess) (void)cudaGetLastError();  // not sticky: report it as cudaMalloc's
            check(s, call);
        } else {
            check(cudaMalloc(&ptr_, bytes), call);
        }
    }
    ~device_buffer() {
        if (ptr_ == nullptr) return;
        if (detail::use_memory_pool()) {
            (void)cudaFreeAsync(ptr_, nullptr);
        } else {
            (void)cudaFree(ptr_);
        }
    }
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;
    [[nodiscard]] void* data() const noexcept { return ptr_; }
    [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

private:
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

/// A strided view of a device buffer with a dtype and a shape.
class device_tensor {
public:
    device_tensor() = default;

    /// Uninitialised contiguous storage of `shape`.
    static device_tensor empty(dtype d, const shape_type& shape) {
        device_tensor t;
        t.dtype_ = d;
        t.shape_ = shape;
        t.strides_ = contiguous_strides(shape);
        t.buffer_ = std::make_shared<device_buffer>(element_count(shape, "cuda::device_tensor") * device_element_size(d));
        return t;
    }

    [[nodiscard]] dtype element_dtype() const noexcept { return dtype_; }
    [[nodiscard]] const shape_type& shape() const noexcept { return shape_; }
    [[nodiscard]] const std::vector<std::int64_t>& strides() const noexcept { return strides_; }
    [[nodiscard]] std::int64_t offset() const noexcept { return offset_; }
    [[nodiscard]] std::size_t rank() const noexcept { return shape_.size(); }
    [[nodiscard]] std::size_t size() const { return element_count(shape_); }
    /// The buffer's start; elements are at data() + offset() + sum(index * stride).
    [[nodiscard]] void* data() const noexcept { return buffer_ ? buffer_->data() : nullptr; }
    [[nodiscard]] bool contiguous() const { return offset_ == 0 && strides_ == contiguous_strides(shape_); }

    /// A view with the axes permuted (Transpose without a copy).
    [[nodiscard]] device_tensor permuted(const std::vector<std::size_t>& perm) const {
        if (perm.size() != rank()) throw shape_error("cuda::device_tensor::permuted", "perm has the wrong length");
        device_tensor v = *this;
        std::vector<bool> seen(rank(), false);
        for (std::size_t k = 0; k < perm.size(); ++k) {
            if (perm[k] >= rank() || seen[perm[k]]) {
                throw shape_error("cuda::device_tensor::permuted", "perm is not a permutation of the axes");
            }
            seen[perm[k]] = true;
            v.shape_[k] = shape_[perm[k]];
            v.strides_[k] = strides_[perm[k]];
        }
        return v;
    }
    /// A view of elements start, start + step, ... (count of them) along `axis`; step may be negative.
    [[nodiscard]] device_tensor sliced(std::size_t axis, std::int64_t start, std::int64_t step, std::size_t count) const {
        constexpr std::string_view where = "cuda::device_tensor::sliced";
        if (axis >= rank()) throw shape_error(where, "axis out of range");
        if (step == 0) throw shape_error(where, "step is 0");
        const auto n = static_cast<std::int64_t>(shape_[axis]);
        if (count != 0) {
            const std::int64_t last = start + step * static_cast<std::int64_t>(count - 1);
            if (start < 0 || start >= n || last < 0 || last >= n) {
                throw shape_error(where, "slice leaves the axis of length " + std::to_string(n));
            }
        }
        device_tensor v = *this;
        v.shape_[axis] = count;
        v.offset_ += start * strides_[axis];
        v.strides_[axis] *= step;
        return v;
    }
    /// The same elements under another shape; a view when contiguous, else throws (copy first).
    [[nodiscard]] device_tensor reshaped(const shape_type& shape) const {
        if (element_count(shape) != size()) {
            throw shape_error("cuda::device_tensor::reshaped",
                              "element count " + std::to_string(size()) + " does not match " + to_string(shape));
        }
        if (!contiguous()) throw shape_error("cuda::device_tensor::reshaped", "needs a contiguous tensor");
        device_tensor v = *this;
        v.shape_ = shape;
        v.strides_ = contiguous_strides(shape);
        return v;
    }
    /// The map that reads this tensor over the iteration space `out` (broadcasting).
    [[nodiscard]] strided_map map_to(const shape_type& out, std::string_view where) const {
        return broadcast_map(out, shape_, strides_, offset_, where);
    }

private:
    dtype dtype_ = dtype::f32;
    shape_type shape_{0};
    std::vector<std::int64_t> strides_{1};
    std::int64_t offset_ = 0;
    std::shared_ptr<device_buffer> buffer_;
};

/// Copies a host tensor to the device (contiguous).
inline device_tensor to_device(const tensor& t) {
    auto d = device_tensor::empty(t.element_dtype(), t.shape());
    if (t.nbytes() == 0) return d;
    visit(t.element_dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto v = t.values<T>();  // straight from the tensor's buffer
        check(cudaMemcpy(d.data(), v.data(), v.size_bytes(), cudaMemcpyHostToDevice), "cudaMemcpy to device");
    });
    return d;
}

/// Copies a device tensor back to a host tensor: straight into its buffer when
/// contiguous; a strided view's span is copied once and gathered on the host.
inline tensor to_host(const device_tensor& d) {
    auto t = tensor::for_overwrite(d.element_dtype(), d.shape());
    if (t.nbytes() == 0) return t;
    visit(d.element_dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto out = t.values<T>();
        if (d.contiguous()) {
            check(cudaMemcpy(out.data(), d.data(), out.size_bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
            return;
        }
        std::int64_t lo = d.offset(), hi = d.offset();
        for (std::size_t k = 0; k < d.rank(); ++k) {
            const std::int64_t reach = static_cast<std::int64_t>(d.shape()[k] - 1) * d.strides()[k];
            (reach < 0 ? lo : hi) += reach;
        }
        const auto count = static_cast<std::size_t>(hi - lo + 1);
        const std::unique_ptr<T[]> span(new T[count]);
        check(cudaMemcpy(span.get(), static_cast<const T*>(d.data()) + lo, count * sizeof(T), cudaMemcpyDeviceToHost),
              "cudaMemcpy to host");
        const strided_map m = broadcast_map(d.shape(), d.shape(), d.strides(), d.offset() - lo, "cuda::to_host");
        for (std::size_t f = 0; f < out.size(); ++f) out[f] = span[static_cast<std::size_t>(m.at(static_cast<std::int64_t>(f)))];
    });
    return t;
}

}  // namespace tensoracle::cuda
// ---- end tensoracle/cuda/device_tensor.hpp ----
// ---- begin tensoracle/cuda/graph.hpp ----
// tensoracle: runs a graph with its nodes on a CUDA device where the kit has
// a CUDA kernel for the node (op, dtype and attributes), and on the CPU
// reference kernels otherwise, with a note per fallen-back node. Values live
// where they were made and are copied across only when a node on the other
// side reads them. Output shapes and dtypes of device nodes are checked
// against the spec's inference, as spec::evaluate does for CPU kernels.
//
// Host code (any C++20 compiler); link tensoracle::cuda for the kernels.

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// ---- begin tensoracle/cuda/lowering.hpp ----
// tensoracle: which CUDA kernel runs each op of the registry, keyed by its
// spec type: a lowering per op with a kernel, and an explicit list of the ops
// without one (their nodes run on the CPU reference kernels). Every op of
// ops::all_ops is in exactly one of the two, checked at compile time, so a new
// op does not compile until it is given a kernel or listed as CPU-only.
//
// Host code (any C++20 compiler); cuda/graph.hpp dispatches on this table.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>

// ---- begin tensoracle/cuda/elementwise_ops.hpp ----
// tensoracle: the element-wise ops the CUDA kernels run, listed once for both
// sides. nvcc's side (cuda/ops.cuh) dispatches cuda::unary and cuda::binary on
// these names and lists them (unary_op_types, binary_op_types); the host side
// (cuda/lowering.hpp) keys its table by the spec types of the same names and
// checks that each name is its spec's op_type. Macros over identifiers, not a
// tuple of spec types, because nvcc does not parse the spec layer.

/// X(Op, formula, integers): Op is the spec type tensoracle::ops::Op (its name
/// is its ONNX op_type), formula its per-element formula in ops::unary::formula,
/// integers whether int32/int64 inputs run too (the formula's integer branch).
/// The order is the order of cuda::unary_op_types().
#define TENSORACLE_CUDA_UNARY_OPS(X)     \
    X(Relu, relu, true)                  \
    X(Abs, abs, true)                    \
    X(Neg, neg, true)                    \
    X(Sign, sign, true)                  \
    X(Ceil, ceil, false)                 \
    X(Floor, floor, false)               \
    X(Round, round, false)               \
    X(Exp, exp, false)                   \
    X(Log, log, false)                   \
    X(Sqrt, sqrt, false)                 \
    X(Reciprocal, reciprocal, false)     \
    X(Sigmoid, sigmoid, false)           \
    X(Tanh, tanh, false)                 \
    X(Softplus, softplus, false)         \
    X(Softsign, softsign, false)         \
    X(Erf, erf, false)                   \
    X(Sin, sin, false)                   \
    X(Cos, cos, false)                   \
    X(Tan, tan, false)                   \
    X(Asin, asin, false)                 \
    X(Acos, acos, false)                 \
    X(Atan, atan, false)                 \
    X(Sinh, sinh, false)                 \
    X(Cosh, cosh, false)                 \
    X(Asinh, asinh, false)               \
    X(Acosh, acosh, false)               \
    X(Atanh, atanh, false)               \
    X(Identity, identity, true)          \
    X(LeakyRelu, leaky_relu, false)      \
    X(Elu, elu, false)                   \
    X(Celu, celu, false)                 \
    X(Selu, selu, false)                 \
    X(HardSigmoid, hard_sigmoid, false)  \
    X(HardSwish, hard_swish, false)      \
    X(ThresholdedRelu, thresholded_relu, false)

/// X(Op, formula, compares, floating_only): Op as above; formula the
/// per-element formula as cuda::binary names it (f: ops::binary::formula,
/// compare_formula: the comparisons); compares whether the output is bool;
/// floating_only whether integer inputs have no kernel. The order is the
/// order of cuda::binary_op_types().
#define TENSORACLE_CUDA_BINARY_OPS(X)                                                  \
    X(Add, f::add, false, false)                                                       \
    X(Sub, f::sub, false, false)                                                       \
    X(Mul, f::mul, false, false)                                                       \
    X(Div, f::div, false, true)                                                        \
    X(Pow, f::pow, false, true)                                                        \
    X(Max, f::max, false, false)                                                       \
    X(Min, f::min, false, false)                                                       \
    X(Mod, f::fmod, false, true)                                                       \
    X(Equal, compare_formula<comparison::equal>, true, false)                          \
    X(Less, compare_formula<comparison::less>, true, false)                            \
    X(Greater, compare_formula<comparison::greater>, true, false)                      \
    X(LessOrEqual, compare_formula<comparison::less_or_equal>, true, false)            \
    X(GreaterOrEqual, compare_formula<comparison::greater_or_equal>, true, false)
// ---- end tensoracle/cuda/elementwise_ops.hpp ----
// ---- begin tensoracle/cuda/ops.hpp ----
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

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>


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
// ---- end tensoracle/cuda/ops.hpp ----
// ---- begin tensoracle/ops/all_ops.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_ALL_OPS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_ALL_OPS_HPP
// tensoracle: every op spec of the kit, as one Hana tuple of types
// (ops::all_ops), built from the families' tuples. Tests and backend tables
// iterate it; the by-name registry (ops/registry.hpp) is built from it.

#include <type_traits>

#include <boost/hana/tuple.hpp>

// ---- begin tensoracle/ops/binary.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_HPP
// tensoracle: broadcast element-wise ops with two or more inputs: arithmetic,
// comparison and logic, Where, PRelu, Clip and Cast; one file per op in
// ops/binary/, shared code in ops/binary/detail/.
//
// Semantics chosen where ONNX leaves them open: integer Div and Mod by zero
// throw (no UB, no silent value); integer overflow wraps (two's complement).
// Integer Div's rounding and Mod's sign: in ops/binary/div.hpp and mod.hpp.
// Ops with floating outputs also run on AD scalars (run_real): the same
// kernels, with the scalar type as accumulator.

// ---- begin tensoracle/ops/binary/add.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_ADD_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_ADD_HPP
// tensoracle: Add (A + B, broadcast; integers wrap).

#include <string_view>

// ---- begin tensoracle/ops/binary/detail/broadcast_elementwise.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_DETAIL_BROADCAST_ELEMENTWISE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_DETAIL_BROADCAST_ELEMENTWISE_HPP
// tensoracle: broadcast_elementwise<F>, the full spec of a broadcast element-wise op from its
// fn struct F; Add, Sub, Mul, Div, Mod, Max, Min, Sum, Mean, Equal, Less, Greater, LessOrEqual,
// GreaterOrEqual, And, Or and Xor are made of it.

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

// ---- begin tensoracle/ops/binary/detail/helpers.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_DETAIL_HELPERS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_DETAIL_HELPERS_HPP
// tensoracle: the names every op of ops/binary/ shares (namespace binary: the spec names
// dtype_set, types and no_attributes; corner_kind for broadcast_elementwise's facts; wrap and
// the wrapping_* integer arithmetic, used by Div and Pow).

#include <cstdint>


namespace tensoracle::ops {

namespace binary {
using spec::dtype_set;
namespace types = spec::types;
using spec::no_attributes;

/// How an op's output enclosure follows from its inputs' (spec::facts::corners):
/// Min keeps every input's "some element <= m", Max its "some element >= m".
enum class corner_kind : std::uint8_t { plain, min, max };

/// Exact integer arithmetic that wraps instead of overflowing (UB-free).
template <class V>
V wrap(std::int64_t v) {
    return static_cast<V>(v);
}
using ops::formula::wrapping_add;
using ops::formula::wrapping_mul;
using ops::formula::wrapping_sub;
}  // namespace binary

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_DETAIL_HELPERS_HPP
// ---- end tensoracle/ops/binary/detail/helpers.hpp ----

namespace tensoracle::ops {

/// Two (or, with F::variadic, one or more) inputs broadcast together.
template <class F>
struct broadcast_elementwise : detail::formula_output_dtypes<F> {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = F::opset;
    using attributes = typename F::attributes;
    static constexpr bool variadic = requires { F::variadic; };
    static constexpr auto inputs = [] {
        if constexpr (variadic) {
            return std::array<spec::value_spec, 1>{{{"data_0", F::types, {}, "T", false, true}}};
        } else {
            return std::array<spec::value_spec, 2>{{{"A", F::types}, {"B", F::types}}};
        }
    }();
    static constexpr std::array<spec::value_spec, 1> outputs{{{"C", F::out_types, {}, "T1"}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    static std::vector<std::size_t> all_inputs(const spec::context& c) {
        std::vector<std::size_t> ids(c.input_count());
        for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i;
        return ids;
    }
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out;
        if (variadic) out.push_back({spec::expr(c.input_count()) >= 1, "at least one input"});
        auto b = detail::broadcast_constraints(c, all_inputs(c));
        out.insert(out.end(), b.begin(), b.end());
        if constexpr (requires { F::constraints(c); }) {
            auto extra = F::constraints(c);
            out.insert(out.end(), extra.begin(), extra.end());
        }
        return out;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) { return {detail::broadcast_shape(c, all_inputs(c))}; }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        std::vector<std::size_t> ranks(rank + 1);
        for (std::size_t r = 0; r <= rank; ++r) ranks[r] = r;
        if constexpr (requires { F::output_dtype; }) {
            if (out != F::output_dtype) return {};
            return {{F::types.members(), ranks}, {F::types.members(), ranks}};
        } else {
            if (!F::types.contains(out)) return {};
            return {{{out}, ranks}, {{out}, ranks}};
        }
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return detail::domain_of<F>(); }

    /// The typed kernel on two arrays (numpy-style broadcasting).
    template <class T>
    static auto compute(const array<T>& a, const array<T>& b, const attributes& attrs = {}) {
        static_assert(spec::dtype_accepted<broadcast_elementwise, T>::value);
        return compute_n<T>({&a, &b}, attrs);
    }

    template <class T>
    static auto compute_n(const std::vector<const array<T>*>& in, const attributes& attrs) {
        using out_t = std::conditional_t<requires { F::output_dtype; }, bool, T>;
        std::vector<shape_type> shapes;
        std::vector<const T*> data;
        for (const auto* x : in) {
            shapes.emplace_back(x->shape().begin(), x->shape().end());
            data.push_back(x->data());
        }
        const auto out_shape = detail::broadcast_shapes(shapes, op_type);
        auto y = array<out_t>::from_shape(out_shape);
        compute_into<T>(data, shapes, out_shape, y.data(), attrs);
        return y;
    }

    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<F::types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            using out_t = std::conditional_t<requires { F::output_dtype; }, bool, T>;
            // Straight from the inputs' buffers into the output's: no typed copies.
            std::vector<shape_type> shapes;
            std::vector<const T*> data;
            for (std::size_t i = 0; i < c.input_count(); ++i) {
                shapes.push_back(c.input(i).shape());
                data.push_back(c.input(i).values<T>().data());
            }
            const auto out_shape = detail::broadcast_shapes(shapes, op_type);
            auto y = tensor::for_overwrite(dtype_of<out_t>, out_shape);
            compute_into<T>(data, shapes, out_shape, y.template values<out_t>().data(), a);
            return y;
        }));
    }

    /// The kernel on AD scalar S (docs/ADDING_AN_OP.md, "Derivatives").
    /// Comparisons and logic have none: their output is bool. Integer inputs
    /// give the placeholder.
    template <class S>
        requires(!requires { F::output_dtype; } && !(F::types & spec::types::floating).empty())
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return detail::single_output(compute_all<S>(x, spec::parse_attributes<attributes>(c.attributes(), op_type)));
    }
    static spec::hints hints() {
        spec::hints h;
        if constexpr (requires { F::range; }) {
            for (std::size_t i = 0; i < 4; ++i) h.range(i, F::range[0], F::range[1]);
        }
        if constexpr (requires { F::rhs_range; }) h.range(1, F::rhs_range[0], F::rhs_range[1]);
        if constexpr (requires { F::hints(h); }) F::hints(h);
        // Ops monotone in each input, or bilinear: the output's enclosure from the inputs' corners.
        if constexpr (requires { F::corner_facts; }) {
            h.facts([](std::span<const spec::value_facts> in, const spec::attribute_map&, std::span<const shape_type>) {
                return std::vector<spec::value_facts>{spec::facts::corners(
                    in, [](double a, double b) { return static_cast<double>(F::apply(a, b, attributes{})); },
                    F::corner_facts == binary::corner_kind::min, F::corner_facts == binary::corner_kind::max)};
            });
        }
        return h;
    }

private:
    /// Y = F(X0, X1, ...) over the broadcast of `shapes` into dst (out_shape's elements).
    template <class T, class Out>
    static void compute_into(const std::vector<const T*>& in, const std::vector<shape_type>& shapes,
                             const shape_type& out_shape, Out* dst, const attributes& attrs) {
        using acc = std::conditional_t<floating_element<T>, std::conditional_t<std::is_same_v<T, double>, double, float>, T>;
        detail::for_each_broadcast_run(shapes, out_shape, [&](std::size_t f, std::size_t len,
                                                               std::span<const std::size_t> base,
                                                               std::span<const std::size_t> step) {
            const T* p0 = in[0] + base[0];
            const std::size_t s0 = step[0];
            if constexpr (requires { F::output_dtype; }) {
                const T* p1 = in[1] + base[1];
                const std::size_t s1 = step[1];
                for (std::size_t i = 0; i < len; ++i) {
                    dst[f + i] = F::apply(static_cast<acc>(p0[i * s0]), static_cast<acc>(p1[i * s1]), attrs);
                }
            } else if (in.size() == 2) {  // the common case, without the variadic loop
                const T* p1 = in[1] + base[1];
                const std::size_t s1 = step[1];
                for (std::size_t i = 0; i < len; ++i) {
                    acc v = F::apply(static_cast<acc>(p0[i * s0]), static_cast<acc>(p1[i * s1]), attrs);
                    if constexpr (requires { F::finish(v, in.size()); }) v = F::finish(v, in.size());
                    dst[f + i] = value_cast<Out>(v);
                }
            } else {
                for (std::size_t i = 0; i < len; ++i) {
                    acc v = static_cast<acc>(p0[i * s0]);
                    for (std::size_t j = 1; j < in.size(); ++j) {
                        v = F::apply(v, static_cast<acc>(in[j][base[j] + i * step[j]]), attrs);
                    }
                    if constexpr (requires { F::finish(v, in.size()); }) v = F::finish(v, in.size());
                    dst[f + i] = value_cast<Out>(v);
                }
            }
        });
    }

    template <class T>
    static auto compute_all(const std::vector<array<T>>& arrays, const attributes& attrs) {
        std::vector<const array<T>*> ptrs;
        for (const auto& x : arrays) ptrs.push_back(&x);
        return compute_n<T>(ptrs, attrs);
    }
    static std::array<double, 2> rhs_range() {
        if constexpr (requires { F::rhs_range; }) {
            return F::rhs_range;
        } else {
            return {-4.0, 4.0};
        }
    }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_DETAIL_BROADCAST_ELEMENTWISE_HPP
// ---- end tensoracle/ops/binary/detail/broadcast_elementwise.hpp ----

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct add_fn : formula::add, spec::elementwise_signature<"Add", 14, types::numeric> {
    static constexpr corner_kind corner_facts = corner_kind::plain;
};

}  // namespace binary

using Add = broadcast_elementwise<binary::add_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_ADD_HPP
// ---- end tensoracle/ops/binary/add.hpp ----
// ---- begin tensoracle/ops/binary/sub.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_SUB_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_SUB_HPP
// tensoracle: Sub (A - B, broadcast; integers wrap).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct sub_fn : formula::sub, spec::elementwise_signature<"Sub", 14, types::numeric> {
    static constexpr corner_kind corner_facts = corner_kind::plain;
    static void hints(spec::hints& h) { h.when_operands_equal(spec::value_facts::constant(0.0)); }
};

}  // namespace binary

using Sub = broadcast_elementwise<binary::sub_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_SUB_HPP
// ---- end tensoracle/ops/binary/sub.hpp ----
// ---- begin tensoracle/ops/binary/mul.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MUL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MUL_HPP
// tensoracle: Mul (A * B, broadcast; integers wrap).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct mul_fn : formula::mul, spec::elementwise_signature<"Mul", 14, types::numeric> {
    static constexpr corner_kind corner_facts = corner_kind::plain;
};

}  // namespace binary

using Mul = broadcast_elementwise<binary::mul_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MUL_HPP
// ---- end tensoracle/ops/binary/mul.hpp ----
// ---- begin tensoracle/ops/binary/div.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_DIV_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_DIV_HPP
// tensoracle: Div (A / B, broadcast; integer division by zero throws).
//
// Semantics chosen where ONNX leaves them open: integer Div truncates toward
// zero (C, numpy's np.trunc(a / b) for ONNX).

#include <array>
#include <cmath>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>


namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct div_fn : formula::div, spec::elementwise_signature<"Div", 14, types::numeric> {
    template <class V>
    static V apply(V a, V b, const attributes&) {
        if constexpr (std::is_integral_v<V>) {
            if (b == 0) throw error("Div", "integer division by zero");
            if (std::is_signed_v<V> && b == V(-1)) return wrapping_sub(V(0), a);  // INT_MIN / -1 wraps
            return static_cast<V>(a / b);
        } else {
            return formula::div::apply(a, b, attributes{});
        }
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::hinge_rule("|B| > 0", 1, [](double y) { return -std::fabs(y) + 1e-10; })};
    }
    static constexpr std::array<double, 2> rhs_range{1.0, 4.0};
    // 0 / y is 0 wherever y is not 0 (where it is, Div's own rule fails); so is x / x 1.
    static void hints(spec::hints& h) {
        h.when_operands_equal(spec::value_facts::constant(1.0));
        h.facts([](std::span<const spec::value_facts> in, const spec::attribute_map&, std::span<const shape_type>) {
            const bool zero = !in.empty() && in[0].lo == 0.0 && in[0].hi == 0.0;
            return std::vector<spec::value_facts>{zero ? spec::value_facts::constant(0.0) : spec::value_facts{}};
        });
    }
};

}  // namespace binary

using Div = broadcast_elementwise<binary::div_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_DIV_HPP
// ---- end tensoracle/ops/binary/div.hpp ----
// ---- begin tensoracle/ops/binary/pow.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_POW_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_POW_HPP
// tensoracle: Pow (X to the power Y, broadcast; Y may have another numeric type).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>


namespace tensoracle::ops {

/// Pow(X, Y): X and Y broadcast; Y may have another numeric type (ONNX T1).
/// Same-type operands compute in the accumulator type; mixed ones in double,
/// rounded once to X's type (numpy's promotion, then ONNX's cast to T). On AD
/// scalars both operands are the scalar type; an integer Y is a constant.
struct Pow : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Pow";
    static constexpr int opset = 15;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::types::floating | spec::types::indices;
    static constexpr spec::dtype_set exponent_types = spec::types::numeric;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"X", types}, {"Y", exponent_types, {}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Z", types}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) { return detail::broadcast_constraints(c, {0, 1}); }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {detail::broadcast_shape(c, {0, 1})}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        std::vector<std::size_t> ranks(rank + 1);
        for (std::size_t r = 0; r <= rank; ++r) ranks[r] = r;
        return {{{out}, ranks}, {exponent_types.members(), ranks}};
    }
    /// The bound on Y * log(X): NNSmith's 40 (keeps later ops' values
    /// moderate), or the log of the largest value X's dtype holds where that
    /// is less (f16 overflows at e^11.1, int32 at e^21.5).
    static double log_limit(dtype d) {
        const auto& i = info(d);
        const double top = i.is_floating ? detail::max_finite(d) : std::ldexp(1.0, i.is_signed ? i.bits - 1 : i.bits) - 1.0;
        return std::min(40.0, std::log(top));
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) {
        // NNSmith, Table 1: X > 0 and Y * log(X) <= 40 keep Pow finite and real.
        // An integer base has no NaN to avoid but must not leave its dtype:
        // 0 is fine unless Y < 0 (a pole), negative bases are left out (a
        // fractional Y makes them NaN, which the cast back makes arbitrary).
        spec::domain_rule zero_base{
            "X = 0 needs Y >= 0 (integer X)",
            [](std::span<const tensor> in) {
                double loss = 0.0;
                if (info(in[0].element_dtype()).is_floating) return loss;
                for_each_pair(in, [&](std::size_t, std::size_t, double x, double y) {
                    if (x == 0.0 && y < 0.0) loss += -y;
                });
                return loss;
            },
            [](std::span<const tensor> in) {  // d/dy = -1 where violated
                std::vector<tensor> g(2);
                if (info(in[0].element_dtype()).is_floating) return g;
                auto gy = array<double>::from_shape(in[1].shape());
                gy.fill(0.0);
                for_each_pair(in, [&](std::size_t, std::size_t j, double x, double y) {
                    if (x == 0.0 && y < 0.0) gy.data()[j] -= 1.0;
                });
                g[1] = tensor(gy);
                return g;
            }};
        zero_base.input_dtypes = types & spec::types::integers;
        return {detail::hinge_rule_for(types & spec::types::floating, "X > 0 (floating X)", 0, [](double x) { return -x + 1e-10; }),
                detail::hinge_rule_for(types & spec::types::integers, "X >= 0 (integer X)", 0, [](double x) { return -x; }),
                std::move(zero_base),
                {"Y * log(X) <= min(40, log of X's largest value)",
                 [](std::span<const tensor> in) {
                     const double limit = log_limit(in[0].element_dtype());
                     double loss = 0.0;
                     for_each_pair(in, [&](std::size_t, std::size_t, double x, double y) {
                         const double h = x > 0 ? y * std::log(x) - limit : 0.0;
                         loss += h > 0 ? h : 0.0;
                     });
                     return loss;
                 },
                 [](std::span<const tensor> in) {  // d/dx = y / x, d/dy = log x where violated
                     const double limit = log_limit(in[0].element_dtype());
                     auto gx = array<double>::from_shape(in[0].shape()), gy = array<double>::from_shape(in[1].shape());
                     gx.fill(0.0);
                     gy.fill(0.0);
                     for_each_pair(in, [&](std::size_t i, std::size_t j, double x, double y) {
                         if (!(x > 0) || !(y * std::log(x) - limit > 0)) return;
                         gx.data()[i] += y / x;
                         gy.data()[j] += std::log(x);
                     });
                     return std::vector<tensor>{tensor(gx), tensor(gy)};
                 }}};
    }
    /// f(offset of X, offset of Y, x, y) over the broadcast pairs of X and Y.
    template <class F>
    static void for_each_pair(std::span<const tensor> in, F f) {
        const auto a = in[0].to<double>(), b = in[1].to<double>();
        std::vector<shape_type> shapes{in[0].shape(), in[1].shape()};
        const auto out = detail::broadcast_shapes(shapes, "Pow domain");
        const auto off = detail::broadcast_offsets(shapes, out);
        for (std::size_t k = 0; k < off[0].size(); ++k) f(off[0][k], off[1][k], a.data()[off[0][k]], b.data()[off[1][k]]);
    }

    template <class T, class E>
    static T apply(T x, E y) {
        if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
            // Integer power by squaring with wrap-around; negative exponents give 0 (or +-1 for +-1 bases).
            if (y < 0) return x == 1 ? T(1) : (x == -1 ? ((y % 2 == 0) ? T(1) : T(-1)) : T(0));
            T result = 1, base = x;
            for (auto e = static_cast<std::uint64_t>(y); e != 0; e >>= 1) {
                if (e & 1u) result = binary::wrapping_mul(result, base);
                base = binary::wrapping_mul(base, base);
            }
            return result;
        } else if constexpr (std::is_same_v<T, E> && floating_element<T>) {
            using acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
            return value_cast<T>(binary::formula::pow::apply(static_cast<acc>(x), static_cast<acc>(y), 0));
        } else if constexpr (ad_scalar<T>) {
            // A constant exponent makes no log(x) term, so x <= 0 keeps a finite derivative.
            return math::pow(x, value_cast<T>(y));
        } else {
            return value_cast<T>(std::pow(value_cast<double>(x), value_cast<double>(y)));
        }
    }

    template <class T, class E>
    static array<T> compute(const array<T>& x, const array<E>& y) {
        static_assert(spec::dtype_accepted<Pow, T>::value);
        std::vector<shape_type> shapes{shape_type(x.shape().begin(), x.shape().end()),
                                       shape_type(y.shape().begin(), y.shape().end())};
        const auto out_shape = detail::broadcast_shapes(shapes, op_type);
        const auto off = detail::broadcast_offsets(shapes, out_shape);
        auto z = array<T>::from_shape(out_shape);
        for (std::size_t f = 0; f < z.size(); ++f) z.data()[f] = apply(x.data()[off[0][f]], y.data()[off[1][f]]);
        return z;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return detail::dispatch<exponent_types>(c.input_dtype(1), op_type, [&](auto e) {
                using E = typename decltype(e)::type;
                return tensor(compute<T, E>(c.input(0).as_array<T>(), c.input(1).as_array<E>()));
            });
        }));
    }
    /// Y counts only when floating, and only when X is (an integer X makes an integer Z).
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        if (!info(c.input_dtype(1)).is_floating) return {0};
        return {0, 1};
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        if (info(c.input_dtype(1)).is_floating) return detail::single_output(compute<S, S>(x[0], x[1]));
        // Integer exponents are exact in double, as in run()'s mixed-type path.
        return detail::single_output(compute<S, double>(x[0], c.input(1).to<double>()));
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.range(0, 0.5, 3.0).range(1, -2.0, 3.0); }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_POW_HPP
// ---- end tensoracle/ops/binary/pow.hpp ----
// ---- begin tensoracle/ops/binary/mod.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MOD_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MOD_HPP
// tensoracle: Mod (the remainder of A / B, broadcast; integer modulo by zero throws).
//
// Semantics chosen where ONNX leaves them open: Mod with fmod=0 takes the
// divisor's sign, with fmod=1 the dividend's.

#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace binary {

struct mod_attr {
    std::int64_t fmod = 0;
};
struct mod_fn : spec::elementwise_signature<"Mod", 13, types::numeric, mod_attr> {
    template <class V>
    static V apply(V a, V b, const attributes& at) {
        if constexpr (std::is_integral_v<V>) {
            if (b == 0) throw error("Mod", "integer modulo by zero");
            if (std::is_signed_v<V> && b == V(-1)) return V(0);
            V r = static_cast<V>(a % b);
            if (at.fmod == 0 && r != 0 && ((r < 0) != (b < 0))) r = static_cast<V>(r + b);
            return r;
        } else {
            if (at.fmod == 0) throw error("Mod", "floating-point inputs require fmod=1");
            return formula::fmod::apply(a, b, at);  // d/da = 1, d/db = -trunc(a/b)
        }
    }
    static constexpr std::array<double, 2> rhs_range{1.0, 5.0};
    static void hints(spec::hints& h) { h.flag("fmod"); }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        return {{c.attr("fmod") == 1, "floating-point inputs require fmod=1"}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::hinge_rule("|B| > 0", 1, [](double y) { return -std::fabs(y) + 1e-10; })};
    }
};

}  // namespace binary

using Mod = broadcast_elementwise<binary::mod_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::binary::mod_attr, fmod);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MOD_HPP
// ---- end tensoracle/ops/binary/mod.hpp ----
// ---- begin tensoracle/ops/binary/max.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MAX_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MAX_HPP
// tensoracle: Max (the element-wise largest of one or more broadcast inputs; NaN wins).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct max_fn : formula::max, spec::elementwise_signature<"Max", 13, types::numeric> {
    static constexpr corner_kind corner_facts = corner_kind::max;
    static constexpr bool variadic = true;
};

}  // namespace binary

using Max = broadcast_elementwise<binary::max_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MAX_HPP
// ---- end tensoracle/ops/binary/max.hpp ----
// ---- begin tensoracle/ops/binary/min.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MIN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MIN_HPP
// tensoracle: Min (the element-wise smallest of one or more broadcast inputs; NaN wins).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct min_fn : formula::min, spec::elementwise_signature<"Min", 13, types::numeric> {
    static constexpr corner_kind corner_facts = corner_kind::min;
    static constexpr bool variadic = true;
};

}  // namespace binary

using Min = broadcast_elementwise<binary::min_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MIN_HPP
// ---- end tensoracle/ops/binary/min.hpp ----
// ---- begin tensoracle/ops/binary/sum.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_SUM_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_SUM_HPP
// tensoracle: Sum (the element-wise sum of one or more broadcast inputs).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct sum_fn : formula::sum, spec::elementwise_signature<"Sum", 13, types::floating> {
    static constexpr corner_kind corner_facts = corner_kind::plain;
    static constexpr bool variadic = true;
};

}  // namespace binary

using Sum = broadcast_elementwise<binary::sum_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_SUM_HPP
// ---- end tensoracle/ops/binary/sum.hpp ----
// ---- begin tensoracle/ops/binary/mean.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MEAN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MEAN_HPP
// tensoracle: Mean (the element-wise mean of one or more broadcast inputs).

#include <cstddef>
#include <string_view>


namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct mean_fn : formula::mean, spec::elementwise_signature<"Mean", 13, types::floating> {
    static constexpr bool variadic = true;
    template <class V>
    static V finish(V v, std::size_t n) { return v / static_cast<V>(n); }
};

}  // namespace binary

using Mean = broadcast_elementwise<binary::mean_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_MEAN_HPP
// ---- end tensoracle/ops/binary/mean.hpp ----
// ---- begin tensoracle/ops/binary/equal.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_EQUAL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_EQUAL_HPP
// tensoracle: Equal (A == B, broadcast, to bool).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct equal_fn : spec::predicate_signature<"Equal", 13, types::all> {
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a == b;
    }
};

}  // namespace binary

using Equal = broadcast_elementwise<binary::equal_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_EQUAL_HPP
// ---- end tensoracle/ops/binary/equal.hpp ----
// ---- begin tensoracle/ops/binary/less.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_LESS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_LESS_HPP
// tensoracle: Less (A < B, broadcast, to bool).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct less_fn : spec::predicate_signature<"Less", 13, types::numeric> {
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a < b;
    }
};

}  // namespace binary

using Less = broadcast_elementwise<binary::less_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_LESS_HPP
// ---- end tensoracle/ops/binary/less.hpp ----
// ---- begin tensoracle/ops/binary/greater.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_GREATER_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_GREATER_HPP
// tensoracle: Greater (A > B, broadcast, to bool).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct greater_fn : spec::predicate_signature<"Greater", 13, types::numeric> {
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a > b;
    }
};

}  // namespace binary

using Greater = broadcast_elementwise<binary::greater_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_GREATER_HPP
// ---- end tensoracle/ops/binary/greater.hpp ----
// ---- begin tensoracle/ops/binary/less_or_equal.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_LESS_OR_EQUAL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_LESS_OR_EQUAL_HPP
// tensoracle: LessOrEqual (A <= B, broadcast, to bool).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct less_or_equal_fn : spec::predicate_signature<"LessOrEqual", 16, types::numeric> {
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a <= b;
    }
};

}  // namespace binary

using LessOrEqual = broadcast_elementwise<binary::less_or_equal_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_LESS_OR_EQUAL_HPP
// ---- end tensoracle/ops/binary/less_or_equal.hpp ----
// ---- begin tensoracle/ops/binary/greater_or_equal.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_GREATER_OR_EQUAL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_GREATER_OR_EQUAL_HPP
// tensoracle: GreaterOrEqual (A >= B, broadcast, to bool).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct greater_or_equal_fn : spec::predicate_signature<"GreaterOrEqual", 16, types::numeric> {
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a >= b;
    }
};

}  // namespace binary

using GreaterOrEqual = broadcast_elementwise<binary::greater_or_equal_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_GREATER_OR_EQUAL_HPP
// ---- end tensoracle/ops/binary/greater_or_equal.hpp ----
// ---- begin tensoracle/ops/binary/and.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_AND_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_AND_HPP
// tensoracle: And (A && B on bools, broadcast).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct logical_and_fn : spec::predicate_signature<"And", 7, types::boolean> {
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a && b;
    }
};

}  // namespace binary

using And = broadcast_elementwise<binary::logical_and_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_AND_HPP
// ---- end tensoracle/ops/binary/and.hpp ----
// ---- begin tensoracle/ops/binary/or.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_OR_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_OR_HPP
// tensoracle: Or (A || B on bools, broadcast).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct logical_or_fn : spec::predicate_signature<"Or", 7, types::boolean> {
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a || b;
    }
};

}  // namespace binary

using Or = broadcast_elementwise<binary::logical_or_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_OR_HPP
// ---- end tensoracle/ops/binary/or.hpp ----
// ---- begin tensoracle/ops/binary/xor.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_XOR_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_XOR_HPP
// tensoracle: Xor (A != B on bools, broadcast).

#include <string_view>


namespace tensoracle::ops {

namespace binary {

// Not differentiable: comparisons and logic have boolean outputs.
struct logical_xor_fn : spec::predicate_signature<"Xor", 7, types::boolean> {
    template <class V>
    static bool apply(V a, V b, const attributes&) {
        return a != b;
    }
};

}  // namespace binary

using Xor = broadcast_elementwise<binary::logical_xor_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_XOR_HPP
// ---- end tensoracle/ops/binary/xor.hpp ----
// ---- begin tensoracle/ops/binary/where.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_WHERE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_WHERE_HPP
// tensoracle: Where (X where condition holds, else Y; all three broadcast).

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

/// Where(condition, X, Y): X where condition holds, else Y; all three broadcast.
struct Where : spec::dtype_of_input<1> {
    static constexpr std::string_view op_type = "Where";
    static constexpr int opset = 16;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"condition", spec::types::boolean, {}, "B"}, {"X", spec::types::all}, {"Y", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return detail::broadcast_constraints(c, {0, 1, 2});
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {detail::broadcast_shape(c, {0, 1, 2})}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        std::vector<std::size_t> ranks(rank + 1);
        for (std::size_t r = 0; r <= rank; ++r) ranks[r] = r;
        return {{{dtype::boolean}, ranks}, {{out}, ranks}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<bool>& cond, const array<T>& x, const array<T>& y) {
        std::vector<shape_type> shapes{shape_type(cond.shape().begin(), cond.shape().end()),
                                       shape_type(x.shape().begin(), x.shape().end()),
                                       shape_type(y.shape().begin(), y.shape().end())};
        const auto out_shape = detail::broadcast_shapes(shapes, op_type);
        auto out = array<T>::from_shape(out_shape);
        // Runs of output elements whose inputs advance by fixed steps: no offset table.
        detail::for_each_broadcast_run(shapes, out_shape, [&](std::size_t f, std::size_t len,
                                                              std::span<const std::size_t> base,
                                                              std::span<const std::size_t> step) {
            for (std::size_t i = 0; i < len; ++i) {
                out.data()[f + i] = cond.data()[base[0] + i * step[0]] ? x.data()[base[1] + i * step[1]]
                                                                       : y.data()[base[2] + i * step[2]];
            }
        });
        return out;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto cond = c.input(0).as_array<bool>();
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(1), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(cond, c.input(1).as_array<T>(), c.input(2).as_array<T>()));
        }));
    }
    /// X and Y are differentiable when floating; the condition is bool.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(1)).is_floating) return {array<S>{}};
        return detail::single_output(compute<S>(c.input(0).as_array<bool>(), x[1], x[2]));
    }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_WHERE_HPP
// ---- end tensoracle/ops/binary/where.hpp ----
// ---- begin tensoracle/ops/binary/prelu.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_PRELU_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_PRELU_HPP
// tensoracle: PRelu (X, or slope * X where X < 0; slope broadcasts to X).

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

/// PRelu(X, slope): slope broadcasts to X (unidirectionally).
struct PRelu : spec::like_input<0> {
    static constexpr std::string_view op_type = "PRelu";
    static constexpr int opset = 16;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::types::floating | spec::types::indices;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"X", types}, {"slope", types}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out{{spec::expr(c.rank(1)) <= spec::expr(c.rank(0)), "slope rank <= X rank"}};
        const std::size_t r0 = c.rank(0), r1 = c.rank(1);
        for (std::size_t k = 0; k < r1 && r1 <= r0; ++k) {
            const auto s = c.dim(1, k), x = c.dim(0, r0 - r1 + k);
            out.push_back({s == x || s == 1, "slope broadcasts to X at axis " + std::to_string(r0 - r1 + k)});
        }
        return out;
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        std::vector<std::size_t> ranks(rank + 1);
        for (std::size_t r = 0; r <= rank; ++r) ranks[r] = r;
        return {{{out}, {rank}}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, const array<T>& slope) {
        static_assert(spec::dtype_accepted<PRelu, T>::value);
        std::vector<shape_type> shapes{shape_type(x.shape().begin(), x.shape().end()),
                                       shape_type(slope.shape().begin(), slope.shape().end())};
        const auto off = detail::broadcast_offsets(shapes, shapes[0]);
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t f = 0; f < y.size(); ++f) {
            const T v = x.data()[f];
            if (!(v < T(0))) {
                y.data()[f] = v;
            } else if constexpr (ad_scalar<T>) {
                y.data()[f] = slope.data()[off[1][f]] * v;  // in the scalar type: both factors carry derivatives
            } else {
                y.data()[f] = value_cast<T>(value_cast<double>(slope.data()[off[1][f]]) * value_cast<double>(v));
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>()));
        }));
    }
    /// X and slope are both differentiable (floating T); integer T gives the placeholder.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return detail::single_output(compute<S>(x[0], x[1]));
    }
    // Facts: X >= 0 passes unchanged (the slope never applies); otherwise nothing known.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().weights({1}).range(1, 0.0, 1.0).facts(
            [](std::span<const spec::value_facts> in, const spec::attribute_map&, std::span<const shape_type>) {
                return std::vector<spec::value_facts>{!in.empty() && in[0].lo >= 0.0 ? in[0] : spec::value_facts{}};
            });
    }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_PRELU_HPP
// ---- end tensoracle/ops/binary/prelu.hpp ----
// ---- begin tensoracle/ops/binary/clip.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_CLIP_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_CLIP_HPP
// tensoracle: Clip (input clamped to the optional scalar bounds min and max).

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

/// Clip(input, min?, max?): min and max are optional scalars.
struct Clip : spec::like_input<0> {
    static constexpr std::string_view op_type = "Clip";
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::types::numeric;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"input", types}, {"min", types, {0, 1}, "T", true}, {"max", types, {0, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", types}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out;
        for (std::size_t i = 1; i < 3; ++i) {
            if (!c.has_input(i) || c.rank(i) == 0) continue;
            out.push_back({c.dim(i, 0) == 1, "min and max are single values"});
        }
        return out;
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        return {{{out}, {rank}}, {{out}, {0, 1}}, {{out}, {0, 1}}};  // min, max: a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, std::optional<T> lo, std::optional<T> hi) {
        static_assert(spec::dtype_accepted<Clip, T>::value);
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t f = 0; f < y.size(); ++f) {
            T v = x.data()[f];
            if (lo && v < *lo) v = *lo;
            if (hi && *hi < v) v = *hi;
            y.data()[f] = v;
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            auto bound = [&](std::size_t i) -> std::optional<T> {
                if (!c.has_input(i)) return std::nullopt;
                return c.input(i).values<T>()[0];
            };
            return tensor(compute<T>(c.input(0).as_array<T>(), bound(1), bound(2)));
        }));
    }
    /// Input, min and max (when present) are differentiable: a clipped element takes the bound's derivative.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        auto bound = [&](std::size_t i) -> std::optional<S> {
            if (!c.has_input(i)) return std::nullopt;
            return x[i].data()[0];
        };
        return detail::single_output(compute<S>(x[0], bound(1), bound(2)));
    }
    // Facts: min(max(x, lo), hi) is monotone in each input (an absent bound counts as unknown).
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.weights({1, 2}).range(0, -5, 5).range(1, -3, -1).range(2, 1, 3).facts(
            [](std::span<const spec::value_facts> in, const spec::attribute_map&, std::span<const shape_type>) {
                if (in.empty()) return std::vector<spec::value_facts>{spec::value_facts{}};
                if (in.size() == 1) return std::vector<spec::value_facts>{in[0]};  // no bounds: X itself
                const spec::value_facts none;
                const auto& a = in.size() > 1 ? in[1] : none;
                const auto& b = in.size() > 2 ? in[2] : none;
                auto y = spec::value_facts::within(std::min(std::max(in[0].lo, a.lo), b.lo),
                                                   std::min(std::max(in[0].hi, a.hi), b.hi));
                // A forced value no bound can reach stays (Clip of Hardmax's 0 to [-1, 0.5] is still 0).
                const double min_hi = in.size() > 1 ? a.hi : -std::numeric_limits<double>::infinity();
                const double max_lo = in.size() > 2 ? b.lo : std::numeric_limits<double>::infinity();
                for (const double v : in[0].forced) {
                    if (v >= min_hi && v <= max_lo) y.force(v);
                }
                y.integral = in[0].integral && (in.size() < 2 || a.integral) && (in.size() < 3 || b.integral);
                return std::vector<spec::value_facts>{y};
            });
    }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_CLIP_HPP
// ---- end tensoracle/ops/binary/clip.hpp ----
// ---- begin tensoracle/ops/binary/cast.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_CAST_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_CAST_HPP
// tensoracle: Cast (input converted to the dtype named by attribute `to`).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct cast_attr {
    std::int64_t to = 1;
    static constexpr std::array<std::string_view, 1> required{"to"};
};

/// Cast(input) to the dtype named by attribute `to` (value_cast semantics:
/// float->int truncates and saturates, NaN->0; int->int wraps). ONNX leaves a
/// float outside the integer target's range undefined: the domain keeps it in.
struct Cast : spec::shape_of_input<0> {
    static constexpr std::string_view op_type = "Cast";
    static constexpr int opset = 13;
    using attributes = cast_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all, {}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {}, "T2"}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        return {dtype_from_onnx(static_cast<int>(spec::parse_attributes<attributes>(c.attributes(), op_type).to))};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype, std::size_t rank) {
        return {{spec::types::all.members(), {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& a) {
        const auto to = dtype_from_onnx(static_cast<int>(spec::parse_attributes<attributes>(a, op_type).to));
        auto rule = detail::cast_range_rule([to](std::span<const tensor>) { return to; });
        // For the generator: the range, where it knows the input is floating (integer inputs wrap, no rule).
        if (const auto b = detail::integer_cast_bounds(to)) {
            rule.elementwise_input = 0;
            rule.elementwise_at_limit = [lo = b->first, hi = b->second](double x, double) { return std::max(x - hi, lo - x); };
        }
        return {rule};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return {c.input(0).cast(output_dtypes(c)[0])}; }
    /// Only float -> float casts have a derivative (1: the cast is the identity up to rounding).
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (info(c.input_dtype(0)).is_floating && info(output_dtypes(c)[0]).is_floating) return {0};
        return {};
    }
    /// float -> float: the input plus the constant rounding error, so that values are run()'s and the
    /// derivative is 1. Integer or bool -> float: constants. -> integer or bool: the placeholder.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const dtype to = output_dtypes(c)[0];
        if (!info(to).is_floating) return {array<S>{}};
        const auto rounded = c.input(0).cast(to).to<double>();
        auto y = array<S>::from_shape(rounded.shape());
        for (std::size_t i = 0; i < y.size(); ++i) {
            const double r = rounded.data()[i];
            if (!info(c.input_dtype(0)).is_floating) {
                y.data()[i] = value_cast<S>(r);
                continue;
            }
            const S& v = x[0].data()[i];
            const double p = static_cast<double>(primal(v));
            // r - p is exact (Sterbenz: r is p rounded); equal values, infinities and NaN pass v unchanged.
            y.data()[i] = (r == p || std::isnan(r)) ? v : v + value_cast<S>(r - p);
        }
        return {y};
    }
    // Facts: to a floating dtype they carry over (0 and 1 stay 0 and 1; ranges hold
    // up to rounding); to an integer one they are truncated ([0.2, 0.8] becomes 0);
    // to bool, x != 0. The generator narrows them to the target dtype's range.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(cast_facts).dtype_attribute("to").range(0, -100, 100);
    }
    static std::vector<spec::value_facts> cast_facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                     std::span<const shape_type>) {
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        const auto to = dtype_from_onnx(static_cast<int>(spec::parse_attributes<attributes>(attrs, op_type).to));
        if (info(to).is_floating) return {x};
        if (to == dtype::boolean) return {spec::facts::image(x, [](double v) { return v != 0.0 ? 1.0 : 0.0; })};
        return {spec::facts::image(x, [](double v) { return std::trunc(v); })};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::cast_attr, to);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_CAST_HPP
// ---- end tensoracle/ops/binary/cast.hpp ----

namespace tensoracle::ops {

inline constexpr auto binary_ops =
    hana::tuple_t<Add, Sub, Mul, Div, Pow, Mod, Max, Min, Sum, Mean, Equal, Less, Greater, LessOrEqual,
                  GreaterOrEqual, And, Or, Xor, Where, PRelu, Clip, Cast>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_BINARY_HPP
// ---- end tensoracle/ops/binary.hpp ----
// ---- begin tensoracle/ops/misc.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_HPP
// tensoracle: constants, casts and small index ops: Constant, CastLike,
// Dropout (inference), CumSum, EyeLike, OneHot, TopK. One op per file under ops/misc/.

// ---- begin tensoracle/ops/misc/constant.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_CONSTANT_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_CONSTANT_HPP
// tensoracle: Constant (a tensor given by its attribute: value, value_float(s) or value_int(s)).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace misc {
inline std::vector<spec::expr> constant_shape(const shape_type& s) {
    std::vector<spec::expr> out;
    for (const auto d : s) out.emplace_back(d);
    return out;
}
}  // namespace misc

struct constant_attr {
    std::optional<tensor> value;
    std::optional<float> value_float;
    std::optional<std::vector<float>> value_floats;
    std::optional<std::int64_t> value_int;
    std::optional<std::vector<std::int64_t>> value_ints;
    std::optional<std::string> value_string;                // valid ONNX, unsupported here
    std::optional<std::vector<std::string>> value_strings;  // valid ONNX, unsupported here
};

/// Constant: exactly one of value, value_float(s), value_int(s). String values
/// are valid ONNX but outside the kit's dtypes (unsupported_error); sparse
/// values are not parsed.
// Not differentiable: no inputs, the output is the attribute's value.
struct Constant {
    static constexpr std::string_view op_type = "Constant";
    static constexpr int opset = 13;
    using attributes = constant_attr;
    static constexpr std::array<spec::value_spec, 0> inputs{};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    static tensor value_of(const attributes& a) {
        if (a.value_string || a.value_strings) {
            throw unsupported_error(std::string(op_type), "string constants are not supported");
        }
        const int given = (a.value ? 1 : 0) + (a.value_float ? 1 : 0) + (a.value_floats ? 1 : 0) + (a.value_int ? 1 : 0) +
                          (a.value_ints ? 1 : 0);
        if (given != 1) {
            throw error(std::string(op_type), "exactly one of value, value_float, value_floats, value_int, value_ints "
                                              "must be set, got " + std::to_string(given));
        }
        if (a.value) return *a.value;
        if (a.value_float) return tensor(array<float>(*a.value_float));
        if (a.value_int) return tensor(array<std::int64_t>(*a.value_int));
        if (a.value_floats) {
            auto t = array<float>::from_shape({a.value_floats->size()});
            std::copy(a.value_floats->begin(), a.value_floats->end(), t.data());
            return tensor(t);
        }
        return detail::int64_tensor(*a.value_ints);
    }
    template <int = 0>
    static attributes attrs(const spec::context& c) { return spec::parse_attributes<attributes>(c.attributes(), op_type); }

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        (void)value_of(attrs(c));
        return {};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        return {misc::constant_shape(value_of(attrs(c)).shape())};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {value_of(attrs(c)).element_dtype()}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype, std::size_t) { return {}; }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return {value_of(attrs(c))}; }
    template <int = 0>
    static spec::hints hints() {
        spec::hints h;
        for (const char* k : {"value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings"}) h.omit(k);
        // value: of the placeholder's dtype and shape when inserted backward, else a small random tensor.
        return h.tensor_attribute("value", [](rng& g, std::optional<dtype> d, const std::optional<shape_type>& s) {
            const dtype dt = d ? *d : detail::pick_dtype(g, spec::types::all);
            return spec::random_values(g, dt, s ? *s : detail::random_shape(g, 0, 3), -5, 5);
        });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::constant_attr, value, value_float, value_floats, value_int, value_ints,
                        value_string, value_strings);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_CONSTANT_HPP
// ---- end tensoracle/ops/misc/constant.hpp ----
// ---- begin tensoracle/ops/misc/cast_like.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_CAST_LIKE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_CAST_LIKE_HPP
// tensoracle: CastLike (Cast of input to the dtype of target_type).

#include <array>
#include <cstddef>
#include <numeric>
#include <span>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace misc {
inline std::vector<std::size_t> all_ranks(std::size_t max_rank) {
    std::vector<std::size_t> r(max_rank + 1);
    std::iota(r.begin(), r.end(), std::size_t{0});
    return r;
}
}  // namespace misc

/// CastLike(input, target_type): Cast to target_type's dtype.
// Derivatives: input only: target_type gives its dtype, not its values.
struct CastLike : spec::dtype_of_input<1>, spec::shape_of_input<0>, spec::differentiable_input<0> {
    static constexpr std::string_view op_type = "CastLike";
    static constexpr int opset = 15;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all, {}, "T1"}, {"target_type", spec::types::all, {}, "T2"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {}, "T2"}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        return {{spec::types::all.members(), {rank}}, {{out}, misc::all_ranks(8)}};  // target_type: any rank
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) {
        return {detail::cast_range_rule([](std::span<const tensor> in) { return in[1].element_dtype(); })};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return {c.input(0).cast(c.input_dtype(1))}; }
    /// The kernel on AD scalar S. Floating to floating has the value of run()
    /// (rounded to the target dtype) and passes the derivative through as the
    /// identity, as frameworks differentiate a cast, rather than the zero
    /// derivative of the rounding. A non-floating input gives constants; a
    /// non-floating target has no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(1)).is_floating) return {array<S>{}};
        if (info(c.input_dtype(0)).is_floating) {
            using B = base_scalar_t<S>;
            return detail::single_output(detail::dispatch<spec::types::floating, array<S>>(c.input_dtype(1), op_type, [&](auto t) {
                using To = typename decltype(t)::type;
                array<S> y = x[0];
                for (auto& v : y) {
                    const B p = primal(v);
                    const B r = value_cast<B>(value_cast<To>(p));
                    // r - p is exact in B, so v + (r - p) has the value r; a constant keeps v's derivatives.
                    if (!(r == p)) v += value_cast<S>(r - p);
                }
                return y;
            }));
        }
        const auto v = c.input(0).cast(c.input_dtype(1)).to<double>();
        auto y = array<S>::from_shape(v.shape());
        for (std::size_t i = 0; i < v.size(); ++i) y.data()[i] = value_cast<S>(v.data()[i]);
        return {y};
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::copy_of(0)).range(0, -50, 50); }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_CAST_LIKE_HPP
// ---- end tensoracle/ops/misc/cast_like.hpp ----
// ---- begin tensoracle/ops/misc/dropout.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_DROPOUT_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_DROPOUT_HPP
// tensoracle: Dropout (inference mode: output = data, mask all true).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct dropout_attr {
    std::optional<std::int64_t> seed;
};

/// Dropout in inference mode: output = data, mask = all true. Training mode
/// with a nonzero ratio is random and not supported (an error says so).
struct Dropout {
    static constexpr std::string_view op_type = "Dropout";
    static constexpr int opset = 13;
    using attributes = dropout_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"data", spec::types::floating},
                                                             {"ratio", spec::types::ieee_floating, {0, 0}, "T1", true},
                                                             {"training_mode", spec::types::boolean, {0, 0}, "T2", true}}};
    static constexpr std::array<spec::value_spec, 2> outputs{
        {{"output", spec::types::floating}, {"mask", spec::types::boolean, {}, "T2"}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0), c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0), dtype::boolean}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out)) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    static void check_inference(const spec::context& c) {
        const bool training = c.has_input(2) && c.input(2).values<bool>()[0];
        const double ratio = c.has_input(1) ? c.input(1).value_as_double(0) : 0.5;
        if (training && ratio != 0.0) {
            throw unsupported_error(std::string(op_type), "training mode with a nonzero ratio is random and not supported");
        }
    }
    /// data only: ratio and training_mode select the mode, they are not data.
    static std::vector<std::size_t> differentiable_inputs(const spec::context&) { return {0}; }
    /// The kernel on AD scalar S: the identity on data; mask (bool) is a placeholder.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        check_inference(c);
        return {x[0], array<S>{}};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        check_inference(c);
        auto mask = array<bool>::from_shape(c.input(0).shape());
        std::fill(mask.begin(), mask.end(), true);
        return {c.input(0), tensor(mask)};
    }
    template <int = 0>
    static spec::hints hints() {
        // Inference mode: ratio in [0, 0.9), training_mode false (training is random, not supported).
        return spec::hints{}
            .omit("seed")
            .after_solving(1, [](rng& g, const spec::context&, dtype d, const shape_type& s) {
                return spec::random_values(g, d, s, 0.0, 0.9);
            })
            .after_solving(2, [](rng&, const spec::context&, dtype d, const shape_type& s) { return tensor::zeros(d, s); });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::dropout_attr, seed);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_DROPOUT_HPP
// ---- end tensoracle/ops/misc/dropout.hpp ----
// ---- begin tensoracle/ops/misc/cumsum.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_CUMSUM_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_CUMSUM_HPP
// tensoracle: CumSum (running sums along an axis).

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct cumsum_attr {
    std::int64_t exclusive = 0;
    std::int64_t reverse = 0;
};

/// CumSum(x, axis): running sums along axis (exclusive: without the element
/// itself; reverse: from the end). Integer sums wrap.
struct CumSum : spec::like_input<0> {
    static constexpr std::string_view op_type = "CumSum";
    static constexpr int opset = 14;
    using attributes = cumsum_attr;
    static constexpr spec::dtype_set types =
        spec::types::floating | spec::dtypes_of(dtype::i32, dtype::i64);
    static constexpr std::array<spec::value_spec, 2> inputs{{{"x", types, {1, 8}}, {"axis", spec::types::indices, {0, 1}, "T2"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"y", types}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto r = static_cast<std::int64_t>(c.rank(0));
        const auto axis = c.values(1);
        std::vector<spec::constraint> out{{spec::expr(axis.size()) == 1, "axis is a single value"}};
        if (axis.size() == 1) out.push_back({axis[0] >= -r && axis[0] < r, "axis in [-rank, rank)"});
        return out;
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {spec::types::indices.members(), {0, 1}}};  // axis: i32/i64, a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, std::size_t axis, const attributes& a) {
        static_assert(spec::dtype_accepted<CumSum, T>::value);
        // f16/bf16/f32 in float, f64 in double; integers and AD scalars in themselves.
        using acc = std::conditional_t<floating_element<T>, std::conditional_t<std::is_same_v<T, double>, double, float>, T>;
        const shape_type s(x.shape().begin(), x.shape().end());
        const auto st = detail::strides_of(s);
        auto y = array<T>::from_shape(s);
        const std::size_t n = s[axis], stride = st[axis];
        for (std::size_t base = 0; base < x.size(); ++base) {
            if ((base / stride) % n != 0) continue;  // start of a line along axis
            acc running = acc(0);
            for (std::size_t j = 0; j < n; ++j) {
                const std::size_t k = a.reverse != 0 ? n - 1 - j : j;
                const std::size_t f = base + k * stride;
                const acc v = static_cast<acc>(x.data()[f]);
                if (a.exclusive == 0) running = add(running, v);
                y.data()[f] = value_cast<T>(running);
                if (a.exclusive != 0) running = add(running, v);
            }
        }
        return y;
    }
    template <class V>
    static V add(V a, V b) {
        if constexpr (std::is_integral_v<V>) {
            return static_cast<V>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
        } else {
            return a + b;
        }
    }
    static std::size_t axis_of(const spec::context& c) {
        return spec::normalize_axis(c.input(1).to<std::int64_t>().data()[0], c.rank(0), op_type);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = axis_of(c);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), axis, a));
        }));
    }
    /// The kernel on AD scalar S; integer sums have no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = axis_of(c);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute<S>(x[0], axis, a)};
    }
    template <int = 0>
    static spec::hints hints() {
        // An exclusive sum starts every row at 0; along an axis of length 1 it is
        // all 0, and an inclusive one is X itself.
        return spec::hints{}.flag("exclusive").flag("reverse").facts(
            [](std::span<const spec::value_facts> in, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                const bool exclusive = spec::parse_attributes<attributes>(attrs, op_type).exclusive != 0;
                bool single = false;  // the summed axis has length 1
                if (!shapes.empty()) {
                    std::size_t n = 1;
                    for (const auto d : shapes[0]) n *= d;
                    single = n == 1;
                    if (!single && in.size() > 1 && in[1].lo == in[1].hi && std::fabs(in[1].lo) <= 64.0) {  // a known axis
                        const auto r = static_cast<std::int64_t>(shapes[0].size());
                        const auto a = static_cast<std::int64_t>(in[1].lo);
                        single = a >= -r && a < r && shapes[0][static_cast<std::size_t>(a < 0 ? a + r : a)] == 1;
                    }
                }
                spec::value_facts out;
                if (single) {
                    out = exclusive ? spec::value_facts::constant(0.0) : (in.empty() ? out : in[0]);
                } else if (exclusive) {
                    out.force(0.0);
                }
                return std::vector<spec::value_facts>{out};
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::cumsum_attr, exclusive, reverse);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_CUMSUM_HPP
// ---- end tensoracle/ops/misc/cumsum.hpp ----
// ---- begin tensoracle/ops/misc/eye_like.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_EYE_LIKE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_EYE_LIKE_HPP
// tensoracle: EyeLike (a 2-D tensor of the input's shape with ones on diagonal k).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct eye_like_attr {
    std::optional<std::int64_t> dtype;
    std::int64_t k = 0;
};

/// EyeLike(input): a 2-D tensor of input's shape with ones on diagonal k.
// Not differentiable: the output is 0/1 by position; the input gives only its shape.
struct EyeLike : spec::shape_of_input<0> {
    static constexpr std::string_view op_type = "EyeLike";
    static constexpr int opset = 9;
    using attributes = eye_like_attr;
    static constexpr spec::dtype_set types = spec::types::ieee_floating | spec::types::integers | spec::types::boolean;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", types, {2, 2}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", types, {2, 2}, "T2"}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return {a.dtype ? dtype_from_onnx(static_cast<int>(*a.dtype)) : c.input_dtype(0)};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (rank != 2 || !types.contains(out)) return {};
        return {{types.members(), {2}}};  // the output dtype comes from `dtype`, not the input
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto k = spec::parse_attributes<attributes>(c.attributes(), op_type).k;
        const auto s = c.input(0).shape();
        auto out = tensor::zeros(output_dtypes(c)[0], s);
        out.visit([&](auto v) {
            using T = typename decltype(v)::value_type;
            for (std::size_t i = 0; i < s[0]; ++i) {
                const std::int64_t j = static_cast<std::int64_t>(i) + k;
                if (j >= 0 && j < static_cast<std::int64_t>(s[1])) v[i * s[1] + static_cast<std::size_t>(j)] = value_cast<T>(1);
            }
        });
        return detail::single_output(std::move(out));
    }
    template <int = 0>
    static spec::hints hints() {
        // Zeros off the diagonal (every matrix but 1 x 1), ones on it (where k keeps it inside).
        return spec::hints{}.dtype_attribute("dtype", 0.5).range(0, 0, 3).facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                spec::value_facts out = spec::value_facts::within(0.0, 1.0);
                if (shapes.empty() || shapes[0].size() != 2) return std::vector<spec::value_facts>{out};
                const auto rows = static_cast<std::int64_t>(shapes[0][0]), cols = static_cast<std::int64_t>(shapes[0][1]);
                const std::int64_t k = spec::parse_attributes<attributes>(attrs, op_type).k;
                if (k <= -rows || k >= cols) return std::vector<spec::value_facts>{spec::value_facts::constant(0.0)};  // no diagonal
                if (rows * cols != 1) out.force(0.0);
                out.force(1.0);
                return std::vector<spec::value_facts>{out};
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::eye_like_attr, dtype, k);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_EYE_LIKE_HPP
// ---- end tensoracle/ops/misc/eye_like.hpp ----
// ---- begin tensoracle/ops/misc/one_hot.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_ONE_HOT_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_ONE_HOT_HPP
// tensoracle: OneHot (values[1] where the index matches along a new axis, values[0] elsewhere).

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct one_hot_attr {
    std::int64_t axis = -1;
};

/// OneHot(indices, depth, values): values[1] where the index (negative counts
/// from depth) matches, values[0] elsewhere; out-of-range indices match nothing.
struct OneHot : spec::dtype_of_input<2> {
    static constexpr std::string_view op_type = "OneHot";
    // OneHot-11's schema lists no bfloat16.
    static constexpr spec::dtype_set onnx11_numeric = spec::types::ieee_floating | spec::types::integers;
    static constexpr spec::dtype_set onnx11_all = onnx11_numeric | spec::types::boolean;
    static constexpr int opset = 11;
    using attributes = one_hot_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"indices", onnx11_numeric, {1, 7}, "T1"},
                                                             {"depth", onnx11_numeric, {0, 1}, "T2"},
                                                             {"values", onnx11_all, {1, 1}, "T3"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", onnx11_all, {}, "T3"}}};
    static std::int64_t depth_of(const spec::context& c) {
        if (c.input(1).size() != 1) throw shape_error(std::string(op_type), "depth must hold one value");
        const double d = c.input(1).value_as_double(0);
        if (!(d >= 1.0 && d <= 1e9)) throw error(std::string(op_type), "depth must be a positive count, got " + std::to_string(d));
        return static_cast<std::int64_t>(d);
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto r = static_cast<std::int64_t>(c.rank(0)) + 1;
        const auto axis = c.attr("axis");
        return {{axis >= -r && axis < r, "axis in [-(rank+1), rank+1)"}, {c.dim(2, 0) == 2, "values holds [off, on]"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        // Output axis j is depth where j is the (normalized) axis, else the input
        // dim j (before the axis) or j - 1 (after it).
        const auto s = c.shape(0);
        const auto R = static_cast<std::int64_t>(s.size()) + 1;
        const auto a = c.attr("axis");
        const auto axis = select(a < 0, a + R, a);
        const spec::expr depth(depth_of(c));
        std::vector<spec::expr> out;
        for (std::int64_t j = 0; j < R; ++j) {
            const auto ju = static_cast<std::size_t>(j);
            const spec::expr before = ju < s.size() ? s[ju] : spec::expr(0), after = j >= 1 ? s[ju - 1] : spec::expr(0);
            out.push_back(select(axis == j, depth, select(spec::expr(j) < axis, before, after)));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (rank == 0) return {};
        // indices and depth: any numeric type (ONNX's T1, T2); depth a scalar or one value.
        if (!onnx11_all.contains(out)) return {};
        return {{onnx11_numeric.members(), {rank - 1}}, {onnx11_numeric.members(), {0, 1}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    /// The output shape, and per output element (row-major) whether it holds
    /// values[1] (on) rather than values[0] (off).
    struct layout {
        shape_type shape;
        std::vector<bool> on;
    };
    static layout layout_of(const spec::context& c) {
        const auto depth = depth_of(c);
        const auto in_shape = c.input(0).shape();
        const auto axis = spec::normalize_axis(std::get<std::int64_t>(c.attributes().at("axis")), in_shape.size() + 1, op_type);
        layout l;
        l.shape = in_shape;
        l.shape.insert(l.shape.begin() + static_cast<std::ptrdiff_t>(axis), static_cast<std::size_t>(depth));
        const auto idx = c.input(0).to<double>();
        const std::size_t outer = element_count(std::span(in_shape).first(axis));
        const std::size_t inner = element_count(std::span(in_shape).subspan(axis));
        l.on.resize(element_count(l.shape));
        for (std::size_t o = 0; o < outer; ++o) {
            for (std::size_t d = 0; d < static_cast<std::size_t>(depth); ++d) {
                for (std::size_t i = 0; i < inner; ++i) {
                    double want = std::trunc(idx.data()[o * inner + i]);
                    if (want < 0) want += static_cast<double>(depth);
                    l.on[(o * static_cast<std::size_t>(depth) + d) * inner + i] = want == static_cast<double>(d);
                }
            }
        }
        return l;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto l = layout_of(c);
        auto out = tensor::zeros(c.input_dtype(2), l.shape);
        out.visit([&](auto v) {
            using T = typename decltype(v)::value_type;
            const auto vals = c.input(2).values<T>();
            for (std::size_t f = 0; f < v.size(); ++f) v[f] = l.on[f] ? vals[1] : vals[0];
        });
        return detail::single_output(std::move(out));
    }
    /// values only (when floating): indices and depth pick positions, which
    /// is piecewise constant in them.
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(2)).is_floating) return {};
        return {2};
    }
    /// The kernel on AD scalar S: each output element is values[0] or
    /// values[1]; non-floating values have no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(2)).is_floating) return {array<S>{}};
        const auto l = layout_of(c);
        auto y = array<S>::from_shape(l.shape);
        for (std::size_t f = 0; f < y.size(); ++f) y.data()[f] = x[2].data()[l.on[f] ? 1 : 0];
        return {y};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .before_solving(1, [](rng& g, const spec::context& c) {  // depth: a small count
                auto t = tensor::zeros(dtype::i64, g.bernoulli(0.5) ? shape_type{} : shape_type{1});
                t.values<std::int64_t>()[0] = g.integer(1, 8);
                return t.cast(c.input_dtype(1));
            })
            .after_solving(0, [](rng& g, const spec::context& c, dtype d, const shape_type& s) {
                const double depth = static_cast<double>(depth_of(c));  // indices in [-depth, depth]: some miss
                return spec::random_values(g, d, s, -depth, depth + 1);
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::one_hot_attr, axis);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_ONE_HOT_HPP
// ---- end tensoracle/ops/misc/one_hot.hpp ----
// ---- begin tensoracle/ops/misc/top_k.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_TOP_K_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_TOP_K_HPP
// tensoracle: TopK (the K largest or smallest elements along an axis, and their indices).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct top_k_attr {
    std::int64_t axis = -1;
    std::int64_t largest = 1;
    std::int64_t sorted = 1;
};

/// TopK(X, K): the K largest (or smallest) elements along axis and their
/// indices; ties keep the lower index first (ONNX's stable rule). Results
/// are always sorted, which also satisfies sorted=0.
struct TopK {
    static constexpr std::string_view op_type = "TopK";
    static constexpr int opset = 11;
    using attributes = top_k_attr;
    static constexpr spec::dtype_set types = spec::types::ieee_floating | spec::types::integers;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"X", types, {1, 8}}, {"K", spec::types::int64, {1, 1}, "I"}}};
    static constexpr std::array<spec::value_spec, 2> outputs{{{"Values", types}, {"Indices", spec::types::int64, {}, "I"}}};
    /// X's dims with the one at `axis` (symbolic, possibly negative) replaced by K.
    static std::vector<spec::expr> with_k(const spec::context& c) {
        auto s = c.shape(0);
        const auto r = static_cast<std::int64_t>(s.size());
        const auto axis = c.attr("axis");
        const auto k = c.value(1, 0);
        for (std::size_t a = 0; a < s.size(); ++a) {
            const auto ai = static_cast<std::int64_t>(a);
            s[a] = select(axis == ai || axis == ai - r, k, s[a]);
        }
        return s;
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto r = static_cast<std::int64_t>(c.rank(0));
        const auto axis = c.attr("axis");
        std::vector<spec::constraint> out{{axis >= -r && axis < r, "axis in [-rank, rank)"},
                                          {c.dim(1, 0) == 1, "K holds one value"}};
        if (c.element_count(1) == 1) {
            const auto k = c.value(1, 0);
            auto dim = c.dim(0, 0);
            for (std::size_t a = 1; a < c.rank(0); ++a) dim = select(axis == static_cast<std::int64_t>(a) || axis == static_cast<std::int64_t>(a) - r, c.dim(0, a), dim);
            out.push_back({k >= 0 && k <= dim, "0 <= K <= X.shape[axis]"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto s = with_k(c);
        return {s, s};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0), dtype::i64}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    /// Values and Indices of the k largest (or smallest) elements of x along axis.
    template <class T>
    static std::pair<array<T>, array<std::int64_t>> compute(const array<T>& x, std::size_t axis, std::size_t k,
                                                            const attributes& a) {
        static_assert(spec::dtype_accepted<TopK, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        if (axis >= s.size() || k > s[axis]) {
            throw shape_error(std::string(op_type), "axis must be < rank and K <= X.shape[axis]");
        }
        shape_type out_shape = s;
        out_shape[axis] = k;
        const auto st = detail::strides_of(s);
        const std::size_t n = s[axis], stride = st[axis];
        auto indices = array<std::int64_t>::from_shape(out_shape);
        const auto ost = detail::strides_of(out_shape);
        auto out = array<T>::from_shape(out_shape);
        std::vector<std::size_t> order(n);
        for (std::size_t base = 0; base < x.size(); ++base) {
            if ((base / stride) % n != 0) continue;
            std::iota(order.begin(), order.end(), std::size_t{0});
            std::stable_sort(order.begin(), order.end(), [&](std::size_t p, std::size_t q) {
                const T& xp = x.data()[base + p * stride];
                const T& xq = x.data()[base + q * stride];
                return a.largest != 0 ? xq < xp : xp < xq;
            });
            // Output line start: same outer/inner position with axis index 0.
            const std::size_t outer = base / (stride * n), inner = base % stride;
            const std::size_t obase = outer * ost[axis] * k + inner;
            for (std::size_t j = 0; j < k; ++j) {
                out.data()[obase + j * ost[axis]] = x.data()[base + order[j] * stride];
                indices.data()[obase + j * ost[axis]] = static_cast<std::int64_t>(order[j]);
            }
        }
        return {std::move(out), std::move(indices)};
    }
    static std::size_t k_of(const spec::context& c) {
        return static_cast<std::size_t>(c.input(1).values<std::int64_t>()[0]);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = spec::normalize_axis(a.axis, c.input(0).shape().size(), op_type);
        const auto k = k_of(c);
        return detail::dispatch<types, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            auto [values, indices] = compute<T>(c.input(0).as_array<T>(), axis, k, a);
            return std::vector<tensor>{tensor(values), tensor(indices)};
        });
    }
    /// The kernel on AD scalar S: Values carry the derivatives of the selected
    /// elements; Indices (int64) is a placeholder taken from run(). An integer
    /// X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = spec::normalize_axis(a.axis, c.input(0).shape().size(), op_type);
        const auto k = k_of(c);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}, array<S>{}};
        return {compute<S>(x[0], axis, k, a).first, array<S>{}};
    }
    /// The VJP of Values: each selected element gets its output's cotangent
    /// back (ad/op_derivatives.hpp). Indices has none.
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = spec::normalize_axis(a.axis, c.input(0).shape().size(), op_type);
        const auto k = k_of(c);
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape()), array<V>{}};
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto indices = compute<V>(x[0], axis, k, a).second;
        const auto* wy = detail::output_cotangent(op_type, w, 0, indices.shape());
        if (wy == nullptr) return g;
        // Values[outer, j, inner] is X[outer, indices[outer, j, inner], inner].
        const std::size_t n = x[0].shape()[axis], stride = detail::strides_of(shape_type(x[0].shape().begin(), x[0].shape().end()))[axis];
        for (std::size_t q = 0; q < indices.size(); ++q) {
            const std::size_t outer = q / (k * stride), inner = q % stride;
            const auto at = outer * n * stride + static_cast<std::size_t>(indices.data()[q]) * stride + inner;
            g[0].data()[at] += wy->data()[q];
        }
        return g;
    }
    // sorted=0 leaves the order of the k outputs to the implementation: such a case has no
    // single right answer to compare a backend with, so generated cases keep the default.
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(facts).flag("largest").omit("sorted").range(0, -50, 50); }
    /// Values: some of X's elements. Indices: in [0, n - 1] along the axis;
    /// when X is one value repeated, ties go to the lowest indices, so with
    /// k >= 1 every slice holds index 0 (Mod by those indices divides by 0).
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type> shapes) {
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        if (shapes.empty() || shapes[0].empty()) return {x.range_only(), spec::value_facts{}};
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        const std::size_t axis = spec::normalize_axis(a.axis, shapes[0].size(), op_type);
        const auto n = static_cast<double>(shapes[0][axis]);
        auto indices = spec::value_facts::within(0.0, std::max(n - 1.0, 0.0));
        const bool one_value = x.lo == x.hi && std::isfinite(x.lo);
        const bool some_k = in.size() > 1 && in[1].lo >= 1.0;
        if (one_value && some_k) indices.force(0.0);
        return {x.range_only(), indices};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::top_k_attr, axis, largest, sorted);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_TOP_K_HPP
// ---- end tensoracle/ops/misc/top_k.hpp ----

namespace tensoracle::ops {

inline constexpr auto misc_ops = hana::tuple_t<Constant, CastLike, Dropout, CumSum, EyeLike, OneHot, TopK>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_MISC_HPP
// ---- end tensoracle/ops/misc.hpp ----
// ---- begin tensoracle/ops/nn.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_HPP
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

// ---- begin tensoracle/ops/nn/matmul.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_MATMUL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_MATMUL_HPP
// tensoracle: MatMul (numpy matmul: batched matrix products, 1-D operands as vectors).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// ---- begin tensoracle/ops/detail/nn_util.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_DETAIL_NN_UTIL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_DETAIL_NN_UTIL_HPP
// tensoracle: helpers of the neural-network op family (ops/nn.hpp): sliding-
// window geometry written once over spec::expr, so the same formulas give the
// symbolic constraints and output shapes of a spec (dims are symbols) and the
// concrete sizes and pads its kernel loops over (dims are constants, folded
// with int64 overflow checks by expr itself), plus N-D index helpers.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <span>
#include <vector>


namespace tensoracle::ops::detail::nn {

using spec::constraint;
using spec::expr;

/// Float accumulation for f16/bf16/f32, double for f64 (ONNX reference kernels).
/// AD scalars accumulate in themselves: a float accumulator would drop their derivatives.
template <class T>
using float_acc_t =
    std::conditional_t<ad_scalar<T>, T, std::conditional_t<std::is_same_v<T, double>, double, float>>;

/// Constant expressions of concrete dims.
template <class Range>
std::vector<expr> constants(const Range& r) {
    std::vector<expr> out;
    for (const auto v : r) {
        if constexpr (std::is_signed_v<std::decay_t<decltype(v)>>) {
            out.emplace_back(static_cast<std::int64_t>(v));
        } else {
            out.emplace_back(static_cast<std::size_t>(v));
        }
    }
    return out;
}

/// The value of a constant expression (every symbol already folded away).
inline std::int64_t value(const expr& e) { return e.eval({}); }

/// Checks constraints whose expressions are all constants (a kernel called
/// directly, outside spec::evaluate): the same message as check_constraints.
inline void check_constant(std::string_view op_type, const std::vector<constraint>& cs) {
    for (const auto& k : cs) {
        if (k.condition.eval({}) != 0) continue;
        throw shape_error(std::string(op_type), "constraint violated: " + k.condition.to_string() + " (" + k.reason + ")");
    }
}

enum class auto_pad_mode : std::uint8_t { notset, same_upper, same_lower, valid };

inline auto_pad_mode parse_auto_pad(std::string_view s, std::string_view op_type) {
    if (s == "NOTSET") return auto_pad_mode::notset;
    if (s == "SAME_UPPER") return auto_pad_mode::same_upper;
    if (s == "SAME_LOWER") return auto_pad_mode::same_lower;
    if (s == "VALID") return auto_pad_mode::valid;
    throw error(std::string(op_type),
                "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '" + std::string(s) + "'");
}

/// An ints attribute as given, or n copies of its default when absent (empty).
inline std::vector<expr> or_default(const std::vector<expr>& given, std::size_t n, std::int64_t dflt) {
    return given.empty() ? std::vector<expr>(n, expr(dflt)) : given;
}

/// Adds "attribute has `want` values" when it is given; false when that fails.
inline bool check_length(std::vector<constraint>& cs, const std::vector<expr>& given, std::size_t want,
                         const std::string& name, const std::string& what) {
    if (given.empty()) return true;
    cs.push_back({spec::list_length(given) == expr(want), name + " has " + what});
    return given.size() == want;
}

/// Input of the forward sliding-window geometry (Conv, MaxPool, AveragePool):
/// spatial dims of X and of the kernel, and the ints attributes as given.
struct window_spec {
    std::vector<expr> x;          // spatial input dims
    std::vector<expr> kernel;     // spatial kernel dims
    std::vector<expr> strides;    // empty: all 1
    std::vector<expr> dilations;  // empty: all 1
    std::vector<expr> pads;       // empty: all 0; [b_1..b_n, e_1..e_n]
    auto_pad_mode auto_pad = auto_pad_mode::notset;
    expr ceil_mode = 0;           // pools only: nonzero rounds the output size up
    bool pads_below_kernel = false;  // pools: every window overlaps the (unpadded) input
};

/// Output of the geometry: validity constraints, and per spatial axis the
/// output size and the (possibly computed) begin / end pads.
struct window_geometry {
    std::vector<constraint> constraints;
    bool lengths_ok = true;  // false: a length constraint fails; the rest is empty
    std::vector<expr> out, pad_begin, pad_end, stride, dilation;
};

/// ONNX Conv / pool output sizes, per spatial axis (dk = d*(k-1)+1):
///   NOTSET: out = (x + pb + pe - dk) / s + 1    (ceil_mode: rounded up, and a
///           last window that would start in the end padding is dropped, as in
///           PyTorch and the ONNX >= 1.16 reference)
///   VALID:  pads 0, out = (x - dk) / s + 1
///   SAME_*: out = ceil(x / s), total pad = max(0, (out-1)*s + dk - x), split
///           evenly with the odd one at the end (UPPER) or the beginning (LOWER).
inline window_geometry forward_window(const window_spec& w) {
    window_geometry g;
    const std::size_t n = w.x.size();
    auto& cs = g.constraints;
    // Every check runs (no short-circuit), so all length constraints are recorded.
    const bool strides_ok = check_length(cs, w.strides, n, "strides", "one value per spatial axis");
    const bool dilations_ok = check_length(cs, w.dilations, n, "dilations", "one value per spatial axis");
    const bool pads_ok = check_length(cs, w.pads, 2 * n, "pads", "a begin and an end value per spatial axis");
    g.lengths_ok = strides_ok && dilations_ok && pads_ok;
    if (!g.lengths_ok) return g;
    if (w.auto_pad != auto_pad_mode::notset && !w.pads.empty()) {
        cs.push_back({expr(0), "pads cannot be given together with auto_pad other than NOTSET"});
        g.lengths_ok = false;
        return g;
    }
    const auto s = or_default(w.strides, n, 1), d = or_default(w.dilations, n, 1), p = or_default(w.pads, 2 * n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string ax = " (spatial axis " + std::to_string(i) + ")";
        cs.push_back({w.kernel[i] >= 1, "kernel size >= 1" + ax});
        cs.push_back({s[i] >= 1, "strides >= 1" + ax});
        cs.push_back({d[i] >= 1, "dilations >= 1" + ax});
        cs.push_back({p[i] >= 0 && p[n + i] >= 0, "pads >= 0" + ax});
        if (w.pads_below_kernel) {
            cs.push_back({p[i] < w.kernel[i] && p[n + i] < w.kernel[i], "pads are smaller than the kernel" + ax});
            // With pads below the kernel, every window starts at most d*(k-1) before the input;
            // a dilation no larger than the input then cannot step over it, so no window
            // covers only padding (ONNX leaves such windows undefined).
            cs.push_back({d[i] <= w.x[i], "dilations are at most the input size" + ax});
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        const std::string ax = " (spatial axis " + std::to_string(i) + ")";
        const expr dk = d[i] * (w.kernel[i] - 1) + 1;
        const expr si = max(s[i], expr(1));  // guarded: the constraint above rejects s < 1
        switch (w.auto_pad) {
            case auto_pad_mode::same_upper:
            case auto_pad_mode::same_lower: {
                const expr out = (w.x[i] + si - 1) / si;
                const expr total = max(expr(0), (out - 1) * si + dk - w.x[i]);
                const expr half = total / 2;
                const expr begin = w.auto_pad == auto_pad_mode::same_upper ? half : total - half;
                g.out.push_back(out);
                g.pad_begin.push_back(begin);
                g.pad_end.push_back(total - begin);
                break;
            }
            case auto_pad_mode::valid:
            case auto_pad_mode::notset: {
                const bool valid = w.auto_pad == auto_pad_mode::valid;
                const expr pb = valid ? expr(0) : p[i], pe = valid ? expr(0) : p[n + i];
                cs.push_back({w.x[i] + pb + pe >= dk, "the dilated kernel fits the padded input" + ax});
                const expr span = w.x[i] + pb + pe - dk;
                const expr floor_out = span / si + 1;
                const expr ceil_out = (span + si - 1) / si + 1;
                const expr ceiled = select((ceil_out - 1) * si >= w.x[i] + pb, ceil_out - 1, ceil_out);
                g.out.push_back(select(w.ceil_mode != 0, ceiled, floor_out));
                g.pad_begin.push_back(pb);
                g.pad_end.push_back(pe);
                break;
            }
        }
    }
    g.stride = s;
    g.dilation = d;
    return g;
}

/// Odometer increment of a multi-index over dims; false after the last one.
inline bool next_index(std::span<std::int64_t> idx, std::span<const std::int64_t> dims) {
    for (std::size_t k = idx.size(); k-- > 0;) {
        if (++idx[k] < dims[k]) return true;
        idx[k] = 0;
    }
    return false;
}

/// Calls f(idx) for every multi-index over dims (row-major; idx is a
/// std::span<const std::int64_t>); none when a dim is 0. Kernels call it per
/// output element, so the index lives on the stack up to rank 8.
template <class F>
void for_each_index(const std::vector<std::int64_t>& dims, F&& f) {
    for (const auto d : dims) {
        if (d <= 0) return;
    }
    std::array<std::int64_t, 8> small{};
    std::vector<std::int64_t> large;
    std::span<std::int64_t> idx(small.data(), dims.size());
    if (dims.size() > small.size()) {
        large.assign(dims.size(), 0);
        idx = std::span<std::int64_t>(large);
    }
    do {
        f(std::span<const std::int64_t>(idx));
    } while (next_index(idx, dims));
}

/// Number of elements of dims (all non-negative, product already validated).
inline std::int64_t count(const std::vector<std::int64_t>& dims) {
    std::int64_t n = 1;
    for (const auto d : dims) n *= d;
    return n;
}

/// Concrete values of constant expressions.
inline std::vector<std::int64_t> values(const std::vector<expr>& es) {
    std::vector<std::int64_t> out;
    for (const auto& e : es) out.push_back(value(e));
    return out;
}

/// Shape of an array as int64 values.
template <class A>
std::vector<std::int64_t> dims_of(const A& a) {
    std::vector<std::int64_t> out;
    for (const auto d : a.shape()) out.push_back(static_cast<std::int64_t>(d));
    return out;
}

/// Output shape as size_t from int64 values (validated non-negative).
inline shape_type to_shape(const std::vector<std::int64_t>& dims, std::string_view op_type) {
    shape_type s;
    for (const auto d : dims) {
        if (d < 0) throw shape_error(std::string(op_type), "negative output dim " + std::to_string(d));
        s.push_back(static_cast<std::size_t>(d));
    }
    return s;
}

/// Dims and int attributes shared by Conv and ConvTranspose: symbolic (from a
/// spec context) or constant (in a typed kernel), so one shape model serves both.
struct conv_dims {
    std::vector<expr> x, w;
    std::optional<std::vector<expr>> b;
    expr group = 1;
    std::vector<expr> kernel_shape, pads, strides, dilations;
    auto_pad_mode auto_pad = auto_pad_mode::notset;
};

/// The symbolic form, from a context whose attributes have their defaults filled in.
inline void fill_conv_dims(conv_dims& d, const spec::context& c, std::string_view auto_pad, std::string_view op_type) {
    d.x = c.shape(0);
    d.w = c.shape(1);
    if (c.has_input(2)) d.b = c.shape(2);
    d.group = c.attr("group");
    d.kernel_shape = c.attr_ints("kernel_shape");
    d.pads = c.attr_ints("pads");
    d.strides = c.attr_ints("strides");
    d.dilations = c.attr_ints("dilations");
    d.auto_pad = parse_auto_pad(auto_pad, op_type);
}

/// The constant form, from concrete shapes and a typed attribute struct.
template <class Shape, class Attrs>
void fill_conv_dims_from_shapes(conv_dims& d, const Shape& x, const Shape& w, const Shape* b, const Attrs& at,
                                std::string_view op_type) {
    d.x = constants(x);
    d.w = constants(w);
    if (b) d.b = constants(*b);
    d.group = at.group;
    d.kernel_shape = constants(at.kernel_shape);
    d.pads = constants(at.pads);
    d.strides = constants(at.strides);
    d.dilations = constants(at.dilations);
    d.auto_pad = parse_auto_pad(at.auto_pad, op_type);
}

/// The constant form, from typed arrays and a typed attribute struct.
template <class T, class Attrs>
void fill_conv_dims(conv_dims& d, const array<T>& x, const array<T>& w, const std::optional<array<T>>& b,
                    const Attrs& at, std::string_view op_type) {
    const shape_type bs = b ? shape_type(b->shape().begin(), b->shape().end()) : shape_type{};
    fill_conv_dims_from_shapes(d, shape_type(x.shape().begin(), x.shape().end()),
                               shape_type(w.shape().begin(), w.shape().end()), b ? &bs : nullptr, at, op_type);
}

}  // namespace tensoracle::ops::detail::nn
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_DETAIL_NN_UTIL_HPP
// ---- end tensoracle/ops/detail/nn_util.hpp ----
// ---- begin tensoracle/ops/nn/detail/helpers.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_HELPERS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_HELPERS_HPP
// tensoracle: the names every op of ops/nn/ shares (namespace nn: spec::constraint and
// spec::expr, util = ops::detail::nn, the dtype sets float3 and matmul_types, the
// accumulator acc_t, tail() of a dim list, and is_nan).

#include <algorithm>
#include <cstddef>
#include <vector>


namespace tensoracle::ops {

namespace nn {
using spec::constraint;
using spec::expr;
namespace util = detail::nn;

inline constexpr spec::dtype_set float3 = spec::dtypes_of(dtype::f16, dtype::f32, dtype::f64);
inline constexpr spec::dtype_set matmul_types = spec::types::floating | spec::types::indices;

template <class T>
using acc_t = util::float_acc_t<T>;

inline std::vector<expr> tail(const std::vector<expr>& v, std::size_t from) {
    return {v.begin() + static_cast<std::ptrdiff_t>(std::min(from, v.size())), v.end()};
}

using tensoracle::is_nan;
}  // namespace nn

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_HELPERS_HPP
// ---- end tensoracle/ops/nn/detail/helpers.hpp ----

namespace tensoracle::ops {

/// MatMul(A, B): numpy matmul. 1-D A is (1, K) and 1-D B is (K, 1) with the
/// added axis removed from the result; leading (batch) dims broadcast.
struct MatMul : spec::one_shape_model<MatMul>, spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "MatMul";
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = nn::matmul_types;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"A", types, {1, 8}}, {"B", types, {1, 8}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types}}};

    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y;
        bool ok = false;
    };
    static model shape_model(const std::vector<spec::expr>& a, const std::vector<spec::expr>& b) {
        using spec::expr;
        model m;
        m.constraints.push_back({expr(a.size()) >= 1, "A has rank >= 1"});
        m.constraints.push_back({expr(b.size()) >= 1, "B has rank >= 1"});
        if (a.empty() || b.empty()) return m;
        const std::size_t ra = a.size(), rb = b.size();
        const expr kb = rb == 1 ? b[0] : b[rb - 2];
        m.constraints.push_back({a[ra - 1] == kb, "A's last dim equals B's contraction dim (second to last, or only)"});
        const std::size_t ba = ra >= 2 ? ra - 2 : 0, bb = rb >= 2 ? rb - 2 : 0, br = std::max(ba, bb);
        for (std::size_t k = 0; k < br; ++k) {
            std::optional<expr> da, db;
            if (k + ba >= br) da = a[k + ba - br];
            if (k + bb >= br) db = b[k + bb - br];
            if (da && db) {
                m.constraints.push_back({*da == *db || *da == 1 || *db == 1,
                                         "batch dims broadcast at output axis " + std::to_string(k)});
                m.y.push_back(select(*da == 1, *db, *da));
            } else {
                m.y.push_back(da ? *da : *db);
            }
        }
        if (ra >= 2) m.y.push_back(a[ra - 2]);
        if (rb >= 2) m.y.push_back(b[rb - 1]);
        m.ok = true;
        return m;
    }

    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = shape_model(c.shape(0), c.shape(1));
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        // rank r output: (r, r) for r >= 2, or one 1-D operand with rank r + 1 on the other side.
        std::vector<std::size_t> ranks;
        for (std::size_t r = 1; r <= std::min<std::size_t>(rank + 1, 8); ++r) ranks.push_back(r);
        if (ranks.empty()) return {};
        return {{{out}, ranks}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// The checked dims of A (M x K) times B (K x N) per batch matrix, and the
    /// batch matrices of A and B that each batch matrix of Y multiplies.
    struct layout {
        std::int64_t M = 1, K = 1, N = 1;
        std::vector<std::vector<std::size_t>> batch_offsets;  ///< [A or B][batch matrix of Y]
        shape_type y;
    };
    template <class Shape>
    static layout layout_of(const Shape& as, const Shape& bs) {
        namespace util = detail::nn;
        const auto m = shape_model(util::constants(as), util::constants(bs));
        util::check_constant(op_type, m.constraints);
        const std::size_t ra = as.size(), rb = bs.size();
        layout l;
        l.M = ra >= 2 ? static_cast<std::int64_t>(as[ra - 2]) : 1;
        l.K = static_cast<std::int64_t>(as[ra - 1]);
        l.N = rb >= 2 ? static_cast<std::int64_t>(bs[rb - 1]) : 1;
        shape_type batch_a(as.begin(), as.end() - (ra >= 2 ? 2 : 1));
        shape_type batch_b(bs.begin(), bs.end() - (rb >= 2 ? 2 : 1));
        const auto batch = detail::broadcast_shapes({batch_a, batch_b}, op_type);
        l.batch_offsets = detail::broadcast_offsets({batch_a, batch_b}, batch);
        l.y = util::to_shape(util::values(m.y), op_type);
        return l;
    }
    template <class T>
    static array<T> compute(const array<T>& a, const array<T>& b) {
        static_assert(spec::dtype_accepted<MatMul, T>::value);
        const auto l = layout_of(a.shape(), b.shape());
        const std::int64_t M = l.M, K = l.K, N = l.N;
        const auto& off = l.batch_offsets;
        auto y = array<T>::from_shape(l.y);
        std::size_t f = 0;
        for (std::size_t bi = 0; bi < off[0].size(); ++bi) {
            const T* pa = a.data() + off[0][bi] * static_cast<std::size_t>(M * K);
            const T* pb = b.data() + off[1][bi] * static_cast<std::size_t>(K * N);
            for (std::int64_t i = 0; i < M; ++i) {
                for (std::int64_t j = 0; j < N; ++j) {
                    if constexpr (real_scalar<T>) {
                        nn::acc_t<T> s = 0;
                        for (std::int64_t k = 0; k < K; ++k) {
                            s += static_cast<nn::acc_t<T>>(pa[i * K + k]) * static_cast<nn::acc_t<T>>(pb[k * N + j]);
                        }
                        y.data()[f++] = value_cast<T>(s);
                    } else {
                        std::uint64_t s = 0;  // wraps
                        for (std::int64_t k = 0; k < K; ++k) {
                            s += static_cast<std::uint64_t>(static_cast<std::int64_t>(pa[i * K + k])) *
                                 static_cast<std::uint64_t>(static_cast<std::int64_t>(pb[k * N + j]));
                        }
                        y.data()[f++] = static_cast<T>(s);
                    }
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            if (auto y = fast<T>(c.input(0), c.input(1))) return std::move(*y);
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>()));
        }));
    }
    /// compute<T> through the plugged-in GEMM (ops/fast_paths.hpp), one call
    /// per batch matrix; nothing when none is plugged in for T, a dim is 0 or
    /// an input is not finite.
    template <class T>
    static std::optional<tensor> fast(const tensor& a, const tensor& b) {
        const auto gemm = nn::fast_gemm_for<T>({&a, &b});
        if (gemm == nullptr) return std::nullopt;
        // The shape model's arithmetic on numbers: evaluate() has already
        // checked its constraints and output shape, and rebuilding its
        // expressions here cost as much as a 64 x 64 GEMM.
        const std::size_t ra = a.rank(), rb = b.rank();
        if (ra == 0 || rb == 0) return std::nullopt;
        const std::size_t M = ra >= 2 ? a.shape()[ra - 2] : 1, K = a.shape()[ra - 1], N = rb >= 2 ? b.shape()[rb - 1] : 1;
        if (K != b.shape()[rb >= 2 ? rb - 2 : 0]) {
            throw shape_error(op_type, "A's last dim " + std::to_string(K) + " differs from B's contraction dim " +
                                           std::to_string(b.shape()[rb >= 2 ? rb - 2 : 0]));
        }
        if (M == 0 || N == 0 || K == 0) return std::nullopt;
        const shape_type batch_a(a.shape().begin(), a.shape().end() - (ra >= 2 ? 2 : 1));
        const shape_type batch_b(b.shape().begin(), b.shape().end() - (rb >= 2 ? 2 : 1));
        const auto batch = detail::broadcast_shapes({batch_a, batch_b}, op_type);
        shape_type out_shape = batch;
        if (ra >= 2) out_shape.push_back(M);
        if (rb >= 2) out_shape.push_back(N);
        auto y = tensor::for_overwrite(dtype_of<T>, out_shape);
        const T* pa = a.values<T>().data();
        const T* pb = b.values<T>().data();
        T* py = y.template values<T>().data();
        std::size_t bi = 0;
        detail::for_each_broadcast_run({batch_a, batch_b}, batch, [&](std::size_t, std::size_t len,
                                                                      std::span<const std::size_t> base,
                                                                      std::span<const std::size_t> step) {
            for (std::size_t i = 0; i < len; ++i, ++bi) {
                gemm(false, false, M, N, K, T(1), pa + (base[0] + i * step[0]) * M * K, K,
                     pb + (base[1] + i * step[1]) * K * N, N, T(0), py + bi * M * N, N);
            }
        });
        return y;
    }
    /// The kernel on AD scalar S; an integer product has no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute<S>(x[0], x[1])};
    }
    /// The VJP of compute: compute's loops, each product sending Y's cotangent
    /// back to both factors (ad/op_derivatives.hpp); broadcast batch matrices
    /// gather the cotangents of every batch matrix they are used in.
    template <class V>
    static std::vector<array<V>> vjp(const spec::context&, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto l = layout_of(x[0].shape(), x[1].shape());
        const std::int64_t M = l.M, K = l.K, N = l.N;
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape()), array<V>::from_shape(x[1].shape())};
        for (auto& gi : g) std::fill(gi.begin(), gi.end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, l.y);
        if (wy == nullptr) return g;
        const V* gy = wy->data();
        for (std::size_t bi = 0; bi < l.batch_offsets[0].size(); ++bi) {
            const std::size_t oa = l.batch_offsets[0][bi] * static_cast<std::size_t>(M * K);
            const std::size_t ob = l.batch_offsets[1][bi] * static_cast<std::size_t>(K * N);
            const V* pa = x[0].data() + oa;
            const V* pb = x[1].data() + ob;
            V* ga = g[0].data() + oa;
            V* gb = g[1].data() + ob;
            for (std::int64_t i = 0; i < M; ++i) {
                for (std::int64_t j = 0; j < N; ++j) {
                    const V gf = *gy++;
                    for (std::int64_t k = 0; k < K; ++k) {
                        ga[i * K + k] += gf * pb[k * N + j];
                        gb[k * N + j] += gf * pa[i * K + k];
                    }
                }
            }
        }
        return g;
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.weights({1}).range(0, -3, 3).range(1, -3, 3); }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_MATMUL_HPP
// ---- end tensoracle/ops/nn/matmul.hpp ----
// ---- begin tensoracle/ops/nn/gemm.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_GEMM_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_GEMM_HPP
// tensoracle: Gemm (alpha * A' B' + beta * C, A and B optionally transposed).

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

// ---- begin tensoracle/ops/nn/detail/two_inputs_and_optional_third.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_TWO_INPUTS_AND_OPTIONAL_THIRD_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_TWO_INPUTS_AND_OPTIONAL_THIRD_HPP
// tensoracle: two_inputs_and_optional_third<Op>, the run() and run_real() shared by Gemm,
// Conv and ConvTranspose.

#include <cstddef>
#include <optional>
#include <vector>


namespace tensoracle::ops {

namespace nn {
/// run() and run_real<S>() of ops computed as Op::compute<T>(a, b, optional c,
/// attributes): Gemm (C), Conv and ConvTranspose (B). One body for plain
/// types and AD scalars; every floating input is differentiable, and integer
/// instances (Gemm) have no floating output (placeholder).
template <class Op>
struct two_inputs_and_optional_third {
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type);
        return ops::detail::single_output(ops::detail::dispatch<Op::types>(c.input_dtype(0), Op::op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (requires { Op::template fast<T>(c, at); }) {
                if (auto y = Op::template fast<T>(c, at)) return std::move(*y);
            }
            return tensor(run_typed<T>(c, at, [&](std::size_t i) { return c.input(i).template as_array<T>(); }));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        const auto at = spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type);
        return {run_typed<S>(c, at, [&](std::size_t i) -> const array<S>& { return x[i]; })};
    }
    // Attrs is a parameter, not Op::attributes: Op is incomplete where this base is instantiated.
    template <class T, class Attrs, class Get>
    static array<T> run_typed(const spec::context& c, const Attrs& at, const Get& get) {
        std::optional<array<T>> third;
        if (c.has_input(2)) third = get(2);
        return Op::template compute<T>(get(0), get(1), third, at);
    }
};
}  // namespace nn

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_TWO_INPUTS_AND_OPTIONAL_THIRD_HPP
// ---- end tensoracle/ops/nn/detail/two_inputs_and_optional_third.hpp ----

namespace tensoracle::ops {

struct gemm_attr {
    float alpha = 1.0f;
    float beta = 1.0f;
    std::int64_t transA = 0;  // NOLINT(readability-identifier-naming): ONNX names
    std::int64_t transB = 0;  // NOLINT(readability-identifier-naming)
};

/// Gemm(A, B, C?) = alpha * A' B' + beta * C, A' = transA ? A^T : A (M x K),
/// B' = transB ? B^T : B (K x N); C broadcasts unidirectionally to (M, N).
struct Gemm : nn::two_inputs_and_optional_third<Gemm>, spec::one_shape_model<Gemm>, spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Gemm";
    static constexpr int opset = 13;
    using attributes = gemm_attr;
    static constexpr spec::dtype_set types = nn::matmul_types;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"A", types, {2, 2}}, {"B", types, {2, 2}}, {"C", types, {0, 2}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {2, 2}}}};

    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y;
    };
    static model shape_model(const std::vector<spec::expr>& a, const std::vector<spec::expr>& b,
                             const std::optional<std::vector<spec::expr>>& cdims, const spec::expr& ta,
                             const spec::expr& tb) {
        using spec::expr;
        model m;
        m.constraints.push_back({expr(a.size()) == 2 && expr(b.size()) == 2, "A and B are matrices"});
        if (a.size() != 2 || b.size() != 2) return m;
        const expr M = select(ta != 0, a[1], a[0]), K = select(ta != 0, a[0], a[1]);
        const expr K2 = select(tb != 0, b[1], b[0]), N = select(tb != 0, b[0], b[1]);
        m.constraints.push_back({K == K2, "inner dims of A' and B' agree"});
        if (cdims) {
            const std::size_t r = cdims->size();
            m.constraints.push_back({expr(r) <= 2, "C has rank <= 2"});
            if (r > 2) return m;
            const std::array<expr, 2> target{M, N};
            for (std::size_t j = 0; j < r; ++j) {
                const expr& t = target[2 - r + j];
                m.constraints.push_back({(*cdims)[j] == t || (*cdims)[j] == 1,
                                         "C broadcasts unidirectionally to (M, N) at its axis " + std::to_string(j)});
            }
        }
        m.y = {M, N};
        return m;
    }
    static model context_model(const spec::context& c) {
        std::optional<std::vector<spec::expr>> cd;
        if (c.has_input(2)) cd = c.shape(2);
        return shape_model(c.shape(0), c.shape(1), cd, c.attr("transA"), c.attr("transB"));
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = context_model(c);
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank != 2) return {};
        return {{{out}, {2}}, {{out}, {2}}, {{out}, {0, 1, 2}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& a, const array<T>& b, const std::optional<array<T>>& cm,
                            const attributes& at = {}) {
        static_assert(spec::dtype_accepted<Gemm, T>::value);
        namespace util = detail::nn;
        std::optional<std::vector<spec::expr>> cd;
        if (cm) cd = util::constants(cm->shape());
        const auto m = shape_model(util::constants(a.shape()), util::constants(b.shape()), cd, at.transA, at.transB);
        util::check_constant(op_type, m.constraints);
        const auto yd = util::values(m.y);
        const std::int64_t M = yd[0], N = yd[1], K = at.transA != 0 ? util::dims_of(a)[0] : util::dims_of(a)[1];
        const std::int64_t lda = util::dims_of(a)[1], ldb = util::dims_of(b)[1];
        auto A = [&](std::int64_t i, std::int64_t k) { return at.transA != 0 ? a.data()[k * lda + i] : a.data()[i * lda + k]; };
        auto B = [&](std::int64_t k, std::int64_t j) { return at.transB != 0 ? b.data()[j * ldb + k] : b.data()[k * ldb + j]; };
        auto y = array<T>::from_shape(util::to_shape(yd, op_type));
        std::vector<std::size_t> coff;
        if (cm) {
            coff = detail::broadcast_offsets({shape_type(cm->shape().begin(), cm->shape().end())},
                                             util::to_shape(yd, op_type))[0];
        }
        for (std::int64_t i = 0; i < M; ++i) {
            for (std::int64_t j = 0; j < N; ++j) {
                const auto f = static_cast<std::size_t>(i * N + j);
                if constexpr (real_scalar<T>) {
                    using acc = nn::acc_t<T>;
                    acc s = 0;
                    for (std::int64_t k = 0; k < K; ++k) s += static_cast<acc>(A(i, k)) * static_cast<acc>(B(k, j));
                    acc r = static_cast<acc>(at.alpha) * s;
                    if (cm) r += static_cast<acc>(at.beta) * static_cast<acc>(cm->data()[coff[f]]);
                    y.data()[f] = value_cast<T>(r);
                } else {
                    std::uint64_t s = 0;  // wraps
                    for (std::int64_t k = 0; k < K; ++k) {
                        s += static_cast<std::uint64_t>(static_cast<std::int64_t>(A(i, k))) *
                             static_cast<std::uint64_t>(static_cast<std::int64_t>(B(k, j)));
                    }
                    double r = static_cast<double>(at.alpha) * static_cast<double>(static_cast<std::int64_t>(s));
                    if (cm) r += static_cast<double>(at.beta) * static_cast<double>(cm->data()[coff[f]]);
                    y.data()[f] = value_cast<T>(r);
                }
            }
        }
        return y;
    }
    /// The VJP of compute: compute's loops, each product sending alpha times
    /// Y's cotangent back to both factors, and C gathering beta times the
    /// cotangents of the elements it is broadcast to (ad/op_derivatives.hpp).
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        namespace util = detail::nn;
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const bool has_c = c.has_input(2);
        std::optional<std::vector<spec::expr>> cd;
        if (has_c) cd = util::constants(x[2].shape());
        const auto m = shape_model(util::constants(x[0].shape()), util::constants(x[1].shape()), cd, at.transA, at.transB);
        util::check_constant(op_type, m.constraints);
        const auto yd = util::values(m.y);
        const std::int64_t M = yd[0], N = yd[1], K = at.transA != 0 ? util::dims_of(x[0])[0] : util::dims_of(x[0])[1];
        const std::int64_t lda = util::dims_of(x[0])[1], ldb = util::dims_of(x[1])[1];
        auto ia = [&](std::int64_t i, std::int64_t k) { return static_cast<std::size_t>(at.transA != 0 ? k * lda + i : i * lda + k); };
        auto ib = [&](std::int64_t k, std::int64_t j) { return static_cast<std::size_t>(at.transB != 0 ? j * ldb + k : k * ldb + j); };
        std::vector<array<V>> g;
        for (std::size_t i = 0; i < c.input_count(); ++i) {
            g.push_back(array<V>::from_shape(i < 2 || has_c ? x[i].shape() : shape_type{0}));
            std::fill(g.back().begin(), g.back().end(), V(0));
        }
        const auto* wy = detail::output_cotangent(op_type, w, 0, util::to_shape(yd, op_type));
        if (wy == nullptr) return g;
        std::vector<std::size_t> coff;
        if (has_c) {
            coff = detail::broadcast_offsets({shape_type(x[2].shape().begin(), x[2].shape().end())},
                                             util::to_shape(yd, op_type))[0];
        }
        const V alpha = static_cast<V>(at.alpha), beta = static_cast<V>(at.beta);
        for (std::int64_t i = 0; i < M; ++i) {
            for (std::int64_t j = 0; j < N; ++j) {
                const auto f = static_cast<std::size_t>(i * N + j);
                const V gs = alpha * wy->data()[f];
                for (std::int64_t k = 0; k < K; ++k) {
                    g[0].data()[ia(i, k)] += gs * x[1].data()[ib(k, j)];
                    g[1].data()[ib(k, j)] += gs * x[0].data()[ia(i, k)];
                }
                if (has_c) g[2].data()[coff[f]] += beta * wy->data()[f];
            }
        }
        return g;
    }
    /// compute<T> through the plugged-in GEMM (ops/fast_paths.hpp): Y starts
    /// as beta C, then one GEMM adds alpha A' B'. Nothing when none is plugged
    /// in for T, a dim is 0, alpha is 0 (a BLAS may then skip A' B') or a
    /// value is not finite.
    template <class T>
    static std::optional<tensor> fast(const spec::context& c, const attributes& at) {
        const tensor* cm = c.has_input(2) ? &c.input(2) : nullptr;
        const auto gemm = nn::fast_gemm_for<T>({&c.input(0), &c.input(1), cm});
        if (gemm == nullptr || at.alpha == 0.0f || !std::isfinite(at.alpha) || !std::isfinite(at.beta)) return std::nullopt;
        namespace util = detail::nn;
        const tensor& a = c.input(0);
        const tensor& b = c.input(1);
        std::optional<std::vector<spec::expr>> cd;
        if (cm) cd = util::constants(cm->shape());
        const auto m = shape_model(util::constants(a.shape()), util::constants(b.shape()), cd, at.transA, at.transB);
        util::check_constant(op_type, m.constraints);
        const auto out_shape = util::to_shape(util::values(m.y), op_type);
        const std::size_t M = out_shape[0], N = out_shape[1], K = at.transA != 0 ? a.shape()[0] : a.shape()[1];
        if (M == 0 || N == 0 || K == 0) return std::nullopt;
        auto y = tensor::for_overwrite(dtype_of<T>, out_shape);
        T* py = y.template values<T>().data();
        if (cm) {
            const T* pc = cm->values<T>().data();
            const T beta = static_cast<T>(at.beta);
            detail::for_each_broadcast_run({cm->shape()}, out_shape, [&](std::size_t f, std::size_t len,
                                                                        std::span<const std::size_t> base,
                                                                        std::span<const std::size_t> step) {
                for (std::size_t i = 0; i < len; ++i) py[f + i] = beta * pc[base[0] + i * step[0]];
            });
        }
        gemm(at.transA != 0, at.transB != 0, M, N, K, static_cast<T>(at.alpha), a.values<T>().data(), a.shape()[1],
             b.values<T>().data(), b.shape()[1], cm ? T(1) : T(0), py, N);
        return y;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.weights({1, 2}).flag("transA").flag("transB").real("alpha", -2.0, 2.0, 0.5).real("beta", -2.0, 2.0, 0.5).optional_input(2, 0.7);
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::gemm_attr, alpha, beta, transA, transB);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_GEMM_HPP
// ---- end tensoracle/ops/nn/gemm.hpp ----
// ---- begin tensoracle/ops/nn/conv.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_CONV_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_CONV_HPP
// tensoracle: Conv (N-D grouped, strided, dilated, padded convolution plus bias).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

// ---- begin tensoracle/ops/nn/detail/conv_family.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_CONV_FAMILY_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_CONV_FAMILY_HPP
// tensoracle: conv_family<Op>, the spec members Conv and ConvTranspose state alike.

#include <cstddef>
#include <utility>
#include <vector>


namespace tensoracle::ops {

namespace nn {
/// Conv and ConvTranspose: validity and shapes come from one model of the dims
/// (Op::shape_model(Op::context_dims(c))); X and W have rank 3-5 and one dtype,
/// B is a vector; there are no domain rules.
template <class Op>
struct conv_family {
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = Op::shape_model(Op::context_dims(c));
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!Op::types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}, {{out}, {rank}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) {
        return {};
    }
};
}  // namespace nn

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_CONV_FAMILY_HPP
// ---- end tensoracle/ops/nn/detail/conv_family.hpp ----
// ---- begin tensoracle/ops/nn/detail/conv_taps.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_CONV_TAPS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_CONV_TAPS_HPP
// tensoracle: the multiply-adds of Conv and ConvTranspose over a conv_plan: the plan, which
// outputs no tap reaches (and the value facts that follow), the visited-taps work estimate,
// and tap_kernel<Op> (compute and vjp from the op's plan() and for_each_tap()).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

// ---- begin tensoracle/ops/nn/detail/tap_bounds.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_TAP_BOUNDS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_TAP_BOUNDS_HPP
// tensoracle: the in-bounds kernel positions of a sliding window along one axis
// (taps_in_bounds, axis_taps), used by Conv, ConvTranspose, MaxPool and AveragePool.

#include <algorithm>
#include <cstdint>
#include <utility>


namespace tensoracle::ops {

namespace nn {
/// The kernel positions k in [0, ks) whose tap a + d * k lies in [0, limit):
/// [first, end) (empty when none). d >= 1.
inline std::pair<std::int64_t, std::int64_t> taps_in_bounds(std::int64_t a, std::int64_t d, std::int64_t ks,
                                                            std::int64_t limit) {
    const std::int64_t first = a >= 0 ? 0 : (-a + d - 1) / d;
    const std::int64_t end = std::min(ks, limit - 1 - a < 0 ? 0 : (limit - 1 - a) / d + 1);
    return {first, end};
}

/// The in-bounds taps of axis i summed over its window starts: for Conv and
/// the pools the windows of the outputs over X, for ConvTranspose those of
/// the inputs over Y. A window's in-bounds taps form a box (one range per
/// axis), so the taps of all windows are the product of these sums.
inline double axis_taps(std::int64_t windows, std::int64_t stride, std::int64_t pad_begin, std::int64_t dilation,
                        std::int64_t kernel, std::int64_t limit) {
    double sum = 0.0;
    for (std::int64_t o = 0; o < windows; ++o) {
        const auto [first, end] = taps_in_bounds(o * stride - pad_begin, dilation, kernel, limit);
        sum += static_cast<double>(std::max<std::int64_t>(end - first, 0));
    }
    return sum;
}
}  // namespace nn

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_TAP_BOUNDS_HPP
// ---- end tensoracle/ops/nn/detail/tap_bounds.hpp ----

namespace tensoracle::ops {

namespace nn {
/// The multiply-adds of Conv or ConvTranspose with constant dims:
/// Y[f] = B[channel of f] + sum of X[xoff] * W[woff] over the taps (f, xoff, woff)
/// that Op::for_each_tap(plan, fn) visits in the reference order.
struct conv_plan {
    std::size_t n = 0;  ///< spatial axes
    std::vector<std::int64_t> xs, ks, os, pb, st, dl;  ///< X, kernel and Y spatial dims; pad_begin, strides, dilations
    std::int64_t N = 0, C = 0, M = 0, Cg = 0, Mg = 0;  ///< images, X and Y channels, and per group
    shape_type y;
    [[nodiscard]] std::size_t plane() const { return static_cast<std::size_t>(util::count(os)); }
    /// n, xs, ks, N and C from X's and W's shapes (both ops read them alike).
    static conv_plan of_shapes(const shape_type& x, const shape_type& w) {
        conv_plan p;
        p.n = x.size() - 2;
        for (std::size_t i = 0; i < p.n; ++i) {
            p.xs.push_back(static_cast<std::int64_t>(x[i + 2]));
            p.ks.push_back(static_cast<std::int64_t>(w[i + 2]));
        }
        p.N = static_cast<std::int64_t>(x[0]);
        p.C = static_cast<std::int64_t>(x[1]);
        return p;
    }
};

/// Which output positions of the plan receive no product at all (a Conv
/// window wholly in the padding, a ConvTranspose gap between strided or
/// dilated taps, or a row added by output_padding): without B such an output
/// is exactly 0 whatever the data (value facts: a divisor or a Log there
/// fails). An output is untouched when its position along one spatial axis
/// is, so the answer is per axis: none, some, or all of the outputs.
enum class untouched { none, some, all };
inline untouched untouched_outputs(const conv_plan& p, bool transpose) {
    if (p.N <= 0 || p.M <= 0 || p.os.size() != p.n) return untouched::none;
    for (std::size_t i = 0; i < p.n; ++i) {
        if (p.os[i] <= 0 || p.xs[i] <= 0 || p.ks[i] <= 0) return untouched::none;
    }
    untouched found = untouched::none;
    for (std::size_t i = 0; i < p.n; ++i) {
        std::vector<bool> hit(static_cast<std::size_t>(p.os[i]), false);
        if (!transpose) {
            for (std::int64_t o = 0; o < p.os[i]; ++o) {
                const auto [first, end] = taps_in_bounds(o * p.st[i] - p.pb[i], p.dl[i], p.ks[i], p.xs[i]);
                hit[static_cast<std::size_t>(o)] = first < end;
            }
        } else {
            for (std::int64_t j = 0; j < p.xs[i]; ++j) {
                for (std::int64_t k = 0; k < p.ks[i]; ++k) {
                    const std::int64_t o = j * p.st[i] + k * p.dl[i] - p.pb[i];
                    if (o >= 0 && o < p.os[i]) hit[static_cast<std::size_t>(o)] = true;
                }
            }
        }
        if (std::find(hit.begin(), hit.end(), true) == hit.end()) return untouched::all;
        if (std::find(hit.begin(), hit.end(), false) != hit.end()) found = untouched::some;
    }
    return found;
}

/// The steps of Op::for_each_tap over a plan: its products (in-bounds taps
/// only) plus one bounds test per outer kernel position of each window and
/// channel pair. This, not the kernel's full size, is what the reference
/// kernel and its VJP spend on a window mostly in the padding.
inline double visited_taps(const conv_plan& p, bool transpose) {
    if (p.n == 0 || p.os.size() != p.n) return 0.0;
    double products = 1.0, windows = 1.0, outer = 1.0;
    for (std::size_t i = 0; i < p.n; ++i) {
        const std::int64_t starts = transpose ? p.xs[i] : p.os[i], limit = transpose ? p.os[i] : p.xs[i];
        products *= axis_taps(starts, p.st[i], p.pb[i], p.dl[i], p.ks[i], limit);
        windows *= static_cast<double>(starts);
        if (i + 1 < p.n) outer *= static_cast<double>(p.ks[i]);
    }
    const double pairs = transpose ? static_cast<double>(p.N * p.C * p.Mg) : static_cast<double>(p.N * p.M * p.Cg);
    return pairs * (products + windows * outer);
}

/// Op::hints().visits for Conv and ConvTranspose: visited_taps at the context's shapes.
template <class Op>
double conv_visited_work(const spec::context& c, bool transpose) {
    const shape_type x = c.input(0).shape(), w = c.input(1).shape();
    const shape_type b = c.has_input(2) ? c.input(2).shape() : shape_type{};
    const auto p = Op::plan(x, w, c.has_input(2) ? &b : nullptr,
                            spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type));
    return visited_taps(p, transpose);
}

/// Value facts of Conv and ConvTranspose (Op): an output no tap reaches is
/// its channel's bias, 0 without B, for every data. Which outputs the taps
/// reach depends on the geometry alone, so such a place exists in every
/// channel: each value B is forced to hold (a Hardmax's zeros) is an output.
/// Where no tap reaches any output (pads wider than the input along one axis)
/// the output is B broadcast, or all 0, whatever X and W hold.
template <class Op>
std::vector<spec::value_facts> untouched_output_facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                      std::span<const shape_type> shapes, bool transpose) {
    if (shapes.size() < 2) return {spec::value_facts{}};
    const bool bias = shapes.size() > 2 && !shapes[2].empty();
    const auto p = Op::plan(shapes[0], shapes[1], nullptr, spec::parse_attributes<typename Op::attributes>(attrs, Op::op_type));
    const auto where = untouched_outputs(p, transpose);
    if (where == untouched::all) {
        if (!bias) return {spec::value_facts::constant(0.0)};
        return {in.size() > 2 ? in[2] : spec::value_facts{}};  // every channel's bias, nothing else
    }
    if (bias && (in.size() < 3 || in[2].forced.empty())) return {spec::value_facts{}};
    if (where == untouched::none) return {spec::value_facts{}};
    spec::value_facts out;
    if (!bias) return {out.force(0.0)};
    for (const double v : in[2].forced) out.force(v);
    return {out};
}

/// Op::compute<T> of a conv_plan: each output starts at its bias and adds
/// its taps in the plan's order, in T's accumulator type.
template <class Op, class T>
array<T> sum_taps(const array<T>& x, const array<T>& w, const std::optional<array<T>>& b,
                  const typename Op::attributes& at) {
    using acc = acc_t<T>;
    const shape_type bs = b ? shape_type(b->shape().begin(), b->shape().end()) : shape_type{};
    const auto p = Op::plan(shape_type(x.shape().begin(), x.shape().end()), shape_type(w.shape().begin(), w.shape().end()),
                            b ? &bs : nullptr, at);
    auto y = array<T>::from_shape(p.y);
    const std::size_t plane = p.plane(), channels = static_cast<std::size_t>(p.M);
    std::vector<acc> sum(y.size(), acc(0));
    if (b) {
        for (std::size_t f = 0; f < sum.size(); ++f) sum[f] = static_cast<acc>(b->data()[(f / plane) % channels]);
    }
    Op::for_each_tap(p, [&](std::size_t f, std::size_t xoff, std::size_t woff) {
        sum[f] += static_cast<acc>(x.data()[xoff]) * static_cast<acc>(w.data()[woff]);
    });
    for (std::size_t f = 0; f < sum.size(); ++f) y.data()[f] = value_cast<T>(sum[f]);
    return y;
}

/// Op::vjp<V> of a conv_plan: each tap sends its output's cotangent back to
/// both factors (times the other), and the bias gathers its channel's.
template <class Op, class V>
std::vector<array<V>> taps_vjp(const spec::context& c, const std::vector<array<V>>& x,
                               const std::vector<array<V>>& w) {
    const auto at = spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type);
    const bool has_b = c.has_input(2);
    const shape_type bs = has_b ? shape_type(x[2].shape().begin(), x[2].shape().end()) : shape_type{};
    const auto p = Op::plan(shape_type(x[0].shape().begin(), x[0].shape().end()),
                            shape_type(x[1].shape().begin(), x[1].shape().end()), has_b ? &bs : nullptr, at);
    std::vector<array<V>> g;
    for (std::size_t i = 0; i < c.input_count(); ++i) {
        g.push_back(array<V>::from_shape(i < 2 || has_b ? x[i].shape() : shape_type{0}));
        std::fill(g.back().begin(), g.back().end(), V(0));
    }
    const auto* wy = ops::detail::output_cotangent(Op::op_type, w, 0, p.y);
    if (wy == nullptr) return g;
    const V* gy = wy->data();
    const V* px = x[0].data();
    const V* pw = x[1].data();
    V* gx = g[0].data();
    V* gw = g[1].data();
    Op::for_each_tap(p, [&](std::size_t f, std::size_t xoff, std::size_t woff) {
        gx[xoff] += gy[f] * pw[woff];
        gw[woff] += gy[f] * px[xoff];
    });
    if (has_b) {
        const std::size_t plane = p.plane(), channels = static_cast<std::size_t>(p.M);
        for (std::size_t f = 0; f < wy->size(); ++f) g[2].data()[(f / plane) % channels] += gy[f];
    }
    return g;
}

/// compute<T> (sum_taps) and vjp<V> (taps_vjp) of Conv and ConvTranspose
/// from their plan() and for_each_tap(). Attrs is a parameter, not
/// Op::attributes: Op is incomplete where this base is instantiated.
template <class Op>
struct tap_kernel {
    template <class T, class Attrs>
    static array<T> compute(const array<T>& x, const array<T>& w, const std::optional<array<T>>& b, const Attrs& at) {
        static_assert(spec::dtype_accepted<Op, T>::value);
        return sum_taps<Op, T>(x, w, b, at);
    }
    template <class T>
    static array<T> compute(const array<T>& x, const array<T>& w, const std::optional<array<T>>& b) {
        return compute<T>(x, w, b, typename Op::attributes{});
    }
    /// The VJP of compute: the same taps, run backwards (ad/op_derivatives.hpp).
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        return taps_vjp<Op, V>(c, x, w);
    }
};
}  // namespace nn

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_CONV_TAPS_HPP
// ---- end tensoracle/ops/nn/detail/conv_taps.hpp ----

namespace tensoracle::ops {

struct conv_attr {
    std::string auto_pad = "NOTSET";
    std::vector<std::int64_t> dilations;
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
};

/// Conv(X, W, B?): X (N, C, D1..Dn), W (M, C/group, k1..kn), B (M).
/// Y[b, m, o] = B[m] + sum_{c < C/group} sum_{k} X[b, g*C/group + c, s*o + d*k - pad_begin] * W[m, c, k]
/// with g = m / (M/group) and zero padding (positions outside X contribute 0).
struct Conv : nn::two_inputs_and_optional_third<Conv>, nn::tap_kernel<Conv>, nn::conv_family<Conv>,
              spec::one_shape_model<Conv>, spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Conv";
    static constexpr int opset = 11;
    using attributes = conv_attr;
    static constexpr spec::dtype_set types = nn::float3;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"X", types, {3, 5}}, {"W", types, {3, 5}}, {"B", types, {1, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 5}}}};

    /// Dims and int attributes, symbolic (from a context) or constant (in the kernel).
    using dims = detail::nn::conv_dims;
    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y;
        detail::nn::window_geometry geo;
        bool ok = false;
    };
    static model shape_model(const dims& d) {
        using spec::expr;
        namespace util = detail::nn;
        model m;
        auto& cs = m.constraints;
        const std::size_t r = d.x.size();
        cs.push_back({expr(r) >= 3, "X has rank >= 3: (N, C, D1, ...)"});
        cs.push_back({expr(d.w.size()) == expr(r), "W has the rank of X: (M, C/group, k1, ...)"});
        if (r < 3 || d.w.size() != r) return m;
        const std::size_t n = r - 2;
        cs.push_back({d.group >= 1, "group >= 1"});
        cs.push_back({d.x[1] == d.w[1] * d.group, "X channels C equal W.shape[1] * group"});
        cs.push_back({d.w[0] % max(d.group, expr(1)) == 0, "output channels M = W.shape[0] are a multiple of group"});
        if (d.b) {
            cs.push_back({expr(d.b->size()) == 1, "B is 1-D"});
            if (d.b->size() != 1) return m;
            cs.push_back({(*d.b)[0] == d.w[0], "B has one value per output channel M = W.shape[0]"});
        }
        if (!util::check_length(cs, d.kernel_shape, n, "kernel_shape", "one value per spatial axis")) return m;
        for (std::size_t i = 0; i < d.kernel_shape.size(); ++i) {
            cs.push_back({d.kernel_shape[i] == d.w[2 + i],
                          "kernel_shape equals W's spatial dims (spatial axis " + std::to_string(i) + ")"});
        }
        util::window_spec ws;
        ws.x = nn::tail(d.x, 2);
        ws.kernel = nn::tail(d.w, 2);
        ws.strides = d.strides;
        ws.dilations = d.dilations;
        ws.pads = d.pads;
        ws.auto_pad = d.auto_pad;
        m.geo = util::forward_window(ws);
        cs.insert(cs.end(), m.geo.constraints.begin(), m.geo.constraints.end());
        if (!m.geo.lengths_ok) return m;
        m.y = {d.x[0], d.w[0]};
        m.y.insert(m.y.end(), m.geo.out.begin(), m.geo.out.end());
        m.ok = true;
        return m;
    }
    template <int = 0>
    static dims context_dims(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        dims d;
        detail::nn::fill_conv_dims(d, c, a.auto_pad, op_type);
        return d;
    }

    /// The multiply-adds of X (shape xs) and W (shape ws), checked.
    static nn::conv_plan plan(const shape_type& xs, const shape_type& ws, const shape_type* bs, const attributes& at) {
        namespace util = detail::nn;
        dims d;
        util::fill_conv_dims_from_shapes(d, xs, ws, bs, at, op_type);
        const auto m = shape_model(d);
        util::check_constant(op_type, m.constraints);
        auto p = nn::conv_plan::of_shapes(xs, ws);
        p.os = util::values(m.geo.out);
        p.pb = util::values(m.geo.pad_begin);
        p.st = util::values(m.geo.stride);
        p.dl = util::values(m.geo.dilation);
        p.M = static_cast<std::int64_t>(ws[0]);
        p.Cg = static_cast<std::int64_t>(ws[1]);
        p.Mg = p.M / at.group;
        p.y = util::to_shape(util::values(m.y), op_type);
        return p;
    }
    /// fn(f, xoff, woff) for each product of Y[f]'s sum, output by output
    /// (row-major), then by input channel and kernel position; padded positions
    /// contribute nothing.
    template <class Fn>
    static void for_each_tap(const nn::conv_plan& p, Fn&& fn) {
        namespace util = detail::nn;
        const std::size_t last = p.n - 1;
        const std::vector<std::int64_t> outer_ks(p.ks.begin(), p.ks.end() - 1);
        std::size_t f = 0;
        for (std::int64_t bi = 0; bi < p.N; ++bi) {
            for (std::int64_t mi = 0; mi < p.M; ++mi) {
                const std::int64_t g = mi / p.Mg;
                util::for_each_index(p.os, [&](std::span<const std::int64_t> o) {
                    // The last kernel axis reads X at a + dl * k: only the k in
                    // [k_lo, k_hi) fall inside X, the rest are zero padding.
                    const std::int64_t a = p.st[last] * o[last] - p.pb[last], d = p.dl[last];
                    // (Named copies, not a structured binding: Clang 14 cannot capture one in the lambda below.)
                    const auto range = nn::taps_in_bounds(a, d, p.ks[last], p.xs[last]);
                    const std::int64_t k_lo = range.first, k_hi = range.second;
                    for (std::int64_t c = 0; c < p.Cg; ++c) {
                        util::for_each_index(outer_ks, [&](std::span<const std::int64_t> k) {
                            std::int64_t xoff = bi * p.C + g * p.Cg + c, woff = mi * p.Cg + c;
                            for (std::size_t i = 0; i < last; ++i) {
                                const std::int64_t xi = p.st[i] * o[i] + p.dl[i] * k[i] - p.pb[i];
                                if (xi < 0 || xi >= p.xs[i]) return;  // zero padding
                                xoff = xoff * p.xs[i] + xi;
                                woff = woff * p.ks[i] + k[i];
                            }
                            auto xo = static_cast<std::size_t>(xoff * p.xs[last] + a + d * k_lo);
                            auto wo = static_cast<std::size_t>(woff * p.ks[last] + k_lo);
                            for (std::int64_t kl = k_lo; kl < k_hi; ++kl, xo += static_cast<std::size_t>(d), ++wo) fn(f, xo, wo);
                        });
                    }
                    ++f;
                });
            }
        }
    }
    /// compute<T> as im2col + one GEMM per image and group through the
    /// plugged-in GEMM (ops/fast_paths.hpp), bias added after. Nothing when
    /// none is plugged in for T, a dim is 0 or a value is not finite.
    template <class T>
    static std::optional<tensor> fast(const spec::context& c, const attributes& at) {
        const tensor* bias = c.has_input(2) ? &c.input(2) : nullptr;
        const auto gemm = nn::fast_gemm_for<T>({&c.input(0), &c.input(1), bias});
        if (gemm == nullptr) return std::nullopt;
        namespace util = detail::nn;
        const tensor& x = c.input(0);
        const tensor& w = c.input(1);
        dims d;
        util::fill_conv_dims_from_shapes(d, x.shape(), w.shape(), bias ? &bias->shape() : nullptr, at, op_type);
        const auto m = shape_model(d);
        util::check_constant(op_type, m.constraints);
        const std::size_t n = x.rank() - 2;
        const auto os = util::values(m.geo.out), pb = util::values(m.geo.pad_begin);
        const auto st = util::values(m.geo.stride), dl = util::values(m.geo.dilation);
        const std::size_t N = x.shape()[0], C = x.shape()[1], M = w.shape()[0], Cg = w.shape()[1];
        const auto groups = static_cast<std::size_t>(at.group), Mg = M / groups;
        std::vector<std::int64_t> xs, ks;
        std::size_t P = 1, Kk = 1, X = 1;
        for (std::size_t i = 0; i < n; ++i) {
            xs.push_back(static_cast<std::int64_t>(x.shape()[i + 2]));
            ks.push_back(static_cast<std::int64_t>(w.shape()[i + 2]));
            P *= static_cast<std::size_t>(os[i]);
            Kk *= w.shape()[i + 2];
            X *= x.shape()[i + 2];
        }
        const std::size_t rows = Cg * Kk;
        if (N == 0 || Mg == 0 || P == 0 || rows == 0) return std::nullopt;
        auto y = tensor::for_overwrite(dtype_of<T>, util::to_shape(util::values(m.y), op_type));
        const T* px = x.values<T>().data();
        const T* pw = w.values<T>().data();
        T* py = y.template values<T>().data();
        std::vector<T> col(rows * P);
        const std::size_t last = n - 1, run = static_cast<std::size_t>(os[last]);
        std::vector<std::int64_t> k(n), o(n);
        for (std::size_t bi = 0; bi < N; ++bi) {
            for (std::size_t g = 0; g < groups; ++g) {
                // col[(c, k), p] = X[bi, g Cg + c, st p + dl k - pad], 0 in the padding.
                for (std::size_t ci = 0; ci < Cg; ++ci) {
                    const T* xc = px + (bi * C + g * Cg + ci) * X;
                    std::fill(k.begin(), k.end(), 0);
                    for (std::size_t kk = 0; kk < Kk; ++kk) {
                        T* dst = col.data() + (ci * Kk + kk) * P;
                        std::fill(o.begin(), o.end(), 0);
                        for (std::size_t p = 0; p < P; p += run) {
                            bool inside = true;
                            std::int64_t xoff = 0;
                            for (std::size_t i = 0; i < last; ++i) {
                                const std::int64_t xi = st[i] * o[i] + dl[i] * k[i] - pb[i];
                                inside = inside && xi >= 0 && xi < xs[i];
                                xoff = xoff * xs[i] + xi;
                            }
                            // The last axis: x index st*ol + off lies in [0, xs) for ol in [lo, hi);
                            // zeros before and after, a strided copy between (no test per element).
                            const std::int64_t off = dl[last] * k[last] - pb[last], s = st[last];
                            std::size_t lo = run, hi = run;
                            if (inside) {
                                const std::int64_t first = off >= 0 ? 0 : (-off + s - 1) / s;
                                const std::int64_t end = xs[last] - off <= 0 ? 0 : (xs[last] - off + s - 1) / s;
                                lo = static_cast<std::size_t>(std::min<std::int64_t>(first, static_cast<std::int64_t>(run)));
                                hi = std::max(lo, static_cast<std::size_t>(std::min<std::int64_t>(end, static_cast<std::int64_t>(run))));
                            }
                            T* row = dst + p;
                            std::fill(row, row + lo, T(0));
                            const std::int64_t base = xoff * xs[last] + off;
                            if (s == 1 && lo < hi) {
                                std::copy_n(xc + static_cast<std::size_t>(base + static_cast<std::int64_t>(lo)), hi - lo, row + lo);
                            } else {
                                for (std::size_t ol = lo; ol < hi; ++ol) {
                                    row[ol] = xc[static_cast<std::size_t>(base + static_cast<std::int64_t>(ol) * s)];
                                }
                            }
                            std::fill(row + hi, row + run, T(0));
                            for (std::size_t i = last; i-- > 0;) {  // odometer over the outer output axes
                                if (++o[i] < os[i]) break;
                                o[i] = 0;
                            }
                        }
                        for (std::size_t i = n; i-- > 0;) {  // odometer over the kernel window
                            if (++k[i] < ks[i]) break;
                            k[i] = 0;
                        }
                    }
                }
                T* yg = py + (bi * M + g * Mg) * P;
                gemm(false, false, Mg, P, rows, T(1), pw + g * Mg * rows, rows, col.data(), P, T(0), yg, P);
                if (bias) {
                    const T* pbias = bias->values<T>().data() + g * Mg;
                    for (std::size_t mi = 0; mi < Mg; ++mi) {
                        for (std::size_t p = 0; p < P; ++p) yg[mi * P + p] += pbias[mi];
                    }
                }
            }
        }
        return y;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().weights({1, 2})
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.4)
            .solve("group", 1, 16, 0.5)
            .range(0, -2, 2)
            .range(1, -1, 1)
            .range(2, -1, 1)
            // each output element: one multiply-add per weight of its group
            .work([](const spec::context& c, const std::vector<std::vector<spec::expr>>& out) {
                return spec::product(out[0]) * spec::product(nn::tail(c.shape(1), 1));
            })
            .visits([](const spec::context& c) { return nn::conv_visited_work<Conv>(c, false); })
            .facts([](std::span<const spec::value_facts> in, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                return nn::untouched_output_facts<Conv>(in, attrs, shapes, false);  // a window wholly in the padding
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::conv_attr, auto_pad, dilations, group, kernel_shape, pads, strides);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_CONV_HPP
// ---- end tensoracle/ops/nn/conv.hpp ----
// ---- begin tensoracle/ops/nn/conv_transpose.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_CONV_TRANSPOSE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_CONV_TRANSPOSE_HPP
// tensoracle: ConvTranspose (the transpose of Conv: each input scatters into a window of Y, plus bias).
//
// With output_shape (or SAME_*), total padding is
// max(0, s*(x-1) + output_padding + d*(k-1)+1 - out), split as the ONNX doc
// says (SAME_UPPER: begin = total/2; otherwise begin = total - total/2);
// output positions beyond the full result receive only the bias.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct conv_transpose_attr {
    std::string auto_pad = "NOTSET";
    std::vector<std::int64_t> dilations;
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> output_padding;
    std::vector<std::int64_t> output_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
};

/// ConvTranspose(X, W, B?): X (N, C, D1..Dn), W (C, M/group, k1..kn), B (M).
/// Y[b, g*M/group + m, s*j + d*k - pad_begin] += X[b, g*C/group + c, j] * W[g*C/group + c, m, k],
/// Y starts at B; the full size per axis is s*(x-1) + output_padding + d*(k-1) + 1 - pads.
struct ConvTranspose : nn::two_inputs_and_optional_third<ConvTranspose>, nn::tap_kernel<ConvTranspose>,
                       nn::conv_family<ConvTranspose>, spec::one_shape_model<ConvTranspose>,
                       spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "ConvTranspose";
    static constexpr int opset = 11;
    using attributes = conv_transpose_attr;
    static constexpr spec::dtype_set types = nn::float3;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"X", types, {3, 5}}, {"W", types, {3, 5}}, {"B", types, {1, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 5}}}};

    struct dims : detail::nn::conv_dims {
        std::vector<spec::expr> output_padding, output_shape;
    };
    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y, pad_begin, strides, dilations;
        bool ok = false;
    };
    static model shape_model(const dims& d) {
        using spec::expr;
        namespace util = detail::nn;
        model m;
        auto& cs = m.constraints;
        const std::size_t r = d.x.size();
        cs.push_back({expr(r) >= 3, "X has rank >= 3: (N, C, D1, ...)"});
        cs.push_back({expr(d.w.size()) == expr(r), "W has the rank of X: (C, M/group, k1, ...)"});
        if (r < 3 || d.w.size() != r) return m;
        const std::size_t n = r - 2;
        cs.push_back({d.group >= 1, "group >= 1"});
        cs.push_back({d.x[1] == d.w[0], "X channels C equal W.shape[0]"});
        cs.push_back({d.w[0] % max(d.group, expr(1)) == 0, "input channels C are a multiple of group"});
        const expr M = d.w[1] * d.group;
        if (d.b) {
            cs.push_back({expr(d.b->size()) == 1, "B is 1-D"});
            if (d.b->size() != 1) return m;
            cs.push_back({(*d.b)[0] == M, "B has one value per output channel W.shape[1] * group"});
        }
        // Every check runs (no short-circuit), so all length constraints are recorded.
        const std::array<bool, 6> ok{
            util::check_length(cs, d.kernel_shape, n, "kernel_shape", "one value per spatial axis"),
            util::check_length(cs, d.strides, n, "strides", "one value per spatial axis"),
            util::check_length(cs, d.dilations, n, "dilations", "one value per spatial axis"),
            util::check_length(cs, d.output_padding, n, "output_padding", "one value per spatial axis"),
            util::check_length(cs, d.output_shape, n, "output_shape", "one value per spatial axis"),
            util::check_length(cs, d.pads, 2 * n, "pads", "a begin and an end value per spatial axis")};
        const bool lengths = std::all_of(ok.begin(), ok.end(), [](bool b) { return b; });
        if (!lengths) return m;
        if (d.auto_pad != util::auto_pad_mode::notset && !d.pads.empty()) {
            cs.push_back({expr(0), "pads cannot be given together with auto_pad other than NOTSET"});
            return m;
        }
        const auto s = util::or_default(d.strides, n, 1), dl = util::or_default(d.dilations, n, 1);
        const auto op = util::or_default(d.output_padding, n, 0), p = util::or_default(d.pads, 2 * n, 0);
        m.y = {d.x[0], M};
        for (std::size_t i = 0; i < n; ++i) {
            const std::string ax = " (spatial axis " + std::to_string(i) + ")";
            const expr k = d.w[2 + i];
            if (!d.kernel_shape.empty()) cs.push_back({d.kernel_shape[i] == k, "kernel_shape equals W's spatial dims" + ax});
            cs.push_back({k >= 1, "kernel size >= 1" + ax});
            cs.push_back({s[i] >= 1, "strides >= 1" + ax});
            cs.push_back({dl[i] >= 1, "dilations >= 1" + ax});
            cs.push_back({p[i] >= 0 && p[n + i] >= 0, "pads >= 0" + ax});
            cs.push_back({op[i] >= 0, "output_padding >= 0" + ax});
            // ONNX: "each padding value in output_padding must be less than the
            // corresponding stride/dilation dimension"; read as the larger of the two
            // (as onnxruntime checks), the reading that refuses the fewest models.
            cs.push_back({op[i] < max(s[i], dl[i]), "output_padding < max(stride, dilation)" + ax});
            const expr full = s[i] * (d.x[2 + i] - 1) + op[i] + dl[i] * (k - 1) + 1;
            expr out = 0, begin = 0;
            const bool same = d.auto_pad == util::auto_pad_mode::same_upper || d.auto_pad == util::auto_pad_mode::same_lower;
            if (!d.output_shape.empty() || same) {
                out = d.output_shape.empty() ? d.x[2 + i] * s[i] : d.output_shape[i];
                // A zero-size requested output is degenerate (ONNX's own inference drops the axis).
                if (!d.output_shape.empty()) cs.push_back({d.output_shape[i] >= 1, "output_shape >= 1" + ax});
                const expr total = max(expr(0), full - out);
                begin = d.auto_pad == util::auto_pad_mode::same_upper ? total / 2 : total - total / 2;
            } else if (d.auto_pad == util::auto_pad_mode::valid) {
                out = full;
            } else {
                out = full - p[i] - p[n + i];
                begin = p[i];
            }
            cs.push_back({out >= 0, "the output size is non-negative" + ax});
            m.y.push_back(out);
            m.pad_begin.push_back(begin);
        }
        m.strides = s;
        m.dilations = dl;
        m.ok = true;
        return m;
    }
    template <int = 0>
    static dims context_dims(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        dims d;
        detail::nn::fill_conv_dims(d, c, a.auto_pad, op_type);
        d.output_padding = c.attr_ints("output_padding");
        d.output_shape = c.attr_ints("output_shape");
        return d;
    }

    /// The multiply-adds of X (shape xs) and W (shape ws), checked.
    static nn::conv_plan plan(const shape_type& xs, const shape_type& ws, const shape_type* bs, const attributes& at) {
        namespace util = detail::nn;
        dims d;
        util::fill_conv_dims_from_shapes(d, xs, ws, bs, at, op_type);
        d.output_padding = util::constants(at.output_padding);
        d.output_shape = util::constants(at.output_shape);
        const auto m = shape_model(d);
        util::check_constant(op_type, m.constraints);
        auto p = nn::conv_plan::of_shapes(xs, ws);
        const auto yd = util::values(m.y);
        p.os.assign(yd.begin() + 2, yd.end());
        p.pb = util::values(m.pad_begin);
        p.st = util::values(m.strides);
        p.dl = util::values(m.dilations);
        p.Mg = static_cast<std::int64_t>(ws[1]);
        p.M = yd[1];
        p.Cg = p.C / at.group;
        p.y = util::to_shape(yd, op_type);
        return p;
    }
    /// fn(yoff, xoff, woff) for each product X[xoff] * W[woff] scattered into
    /// Y[yoff], input element by input element (row-major), then by output
    /// channel of its group and kernel position; positions cropped by pads or
    /// output_shape receive nothing.
    template <class Fn>
    static void for_each_tap(const nn::conv_plan& p, Fn&& fn) {
        namespace util = detail::nn;
        const std::size_t last = p.n - 1;
        const std::vector<std::int64_t> outer_ks(p.ks.begin(), p.ks.end() - 1);
        for (std::int64_t bi = 0; bi < p.N; ++bi) {
            for (std::int64_t ci = 0; ci < p.C; ++ci) {
                const std::int64_t g = ci / p.Cg;
                util::for_each_index(p.xs, [&](std::span<const std::int64_t> j) {
                    std::int64_t xoff = bi * p.C + ci;
                    for (std::size_t i = 0; i < p.n; ++i) xoff = xoff * p.xs[i] + j[i];
                    // The last kernel axis writes Y at a + dl * k: only the k in
                    // [k_lo, k_hi) fall inside Y, the rest are cropped.
                    const std::int64_t a = p.st[last] * j[last] - p.pb[last], d = p.dl[last];
                    // (Named copies, not a structured binding: Clang 14 cannot capture one in the lambda below.)
                    const auto range = nn::taps_in_bounds(a, d, p.ks[last], p.os[last]);
                    const std::int64_t k_lo = range.first, k_hi = range.second;
                    for (std::int64_t mm = 0; mm < p.Mg; ++mm) {
                        const std::int64_t mi = g * p.Mg + mm;
                        util::for_each_index(outer_ks, [&](std::span<const std::int64_t> k) {
                            std::int64_t yoff = bi * p.M + mi, woff = ci * p.Mg + mm;
                            for (std::size_t i = 0; i < last; ++i) {
                                const std::int64_t yi = p.st[i] * j[i] + p.dl[i] * k[i] - p.pb[i];
                                if (yi < 0 || yi >= p.os[i]) return;  // cropped by pads / output_shape
                                yoff = yoff * p.os[i] + yi;
                                woff = woff * p.ks[i] + k[i];
                            }
                            auto yo = static_cast<std::size_t>(yoff * p.os[last] + a + d * k_lo);
                            auto wo = static_cast<std::size_t>(woff * p.ks[last] + k_lo);
                            const auto xo = static_cast<std::size_t>(xoff);
                            for (std::int64_t kl = k_lo; kl < k_hi; ++kl, yo += static_cast<std::size_t>(d), ++wo) fn(yo, xo, wo);
                        });
                    }
                });
            }
        }
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().weights({1, 2})
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.3)
            .solve("group", 1, 16, 0.5)
            .solve("output_padding", 0, 8, 0.3)
            .solve("output_shape", 1, 64, 0.2)
            .range(0, -2, 2)
            .range(1, -1, 1)
            .range(2, -1, 1)
            // each input element scatters into one window per output channel of its group
            .work([](const spec::context& c, const std::vector<std::vector<spec::expr>>&) {
                return spec::product(c.shape(0)) * spec::product(nn::tail(c.shape(1), 1));
            })
            .visits([](const spec::context& c) { return nn::conv_visited_work<ConvTranspose>(c, true); })
            .facts([](std::span<const spec::value_facts> in, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                return nn::untouched_output_facts<ConvTranspose>(in, attrs, shapes, true);  // gaps between strided taps
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::conv_transpose_attr, auto_pad, dilations, group, kernel_shape, output_padding,
                        output_shape, pads, strides);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_CONV_TRANSPOSE_HPP
// ---- end tensoracle/ops/nn/conv_transpose.hpp ----
// ---- begin tensoracle/ops/nn/max_pool.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_MAX_POOL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_MAX_POOL_HPP
// tensoracle: MaxPool (the maximum over each pooling window, and its index into X).
//
// MaxPool produces both outputs: Y and Indices (flat index into X of the
// first maximum; NaN propagates; storage_order=1 makes the spatial part
// column-major, as onnxruntime and the ONNX test data do).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

// ---- begin tensoracle/ops/nn/detail/pool_windows.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_POOL_WINDOWS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_POOL_WINDOWS_HPP
// tensoracle: the windows of MaxPool and AveragePool: their shared shape model
// (pool_shape_model), work estimate (pool_work), the in-bounds taps of one window
// (window_taps) and all windows over X (pool_windows).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace nn {
/// The pools' shared shape model: rank, kernel_shape and the window geometry.
struct pool_model {
    std::vector<constraint> constraints;
    std::vector<expr> y;
    util::window_geometry geo;
    bool ok = false;
};
inline pool_model pool_shape_model(const std::vector<expr>& x, const std::vector<expr>& kernel_shape,
                                   const std::vector<expr>& strides, const std::vector<expr>& dilations,
                                   const std::vector<expr>& pads, util::auto_pad_mode auto_pad, const expr& ceil_mode) {
    pool_model m;
    auto& cs = m.constraints;
    const std::size_t r = x.size();
    cs.push_back({expr(r) >= 3, "X has rank >= 3: (N, C, D1, ...)"});
    if (r < 3) return m;
    const std::size_t n = r - 2;
    cs.push_back({spec::list_length(kernel_shape) == expr(n), "kernel_shape has one value per spatial axis"});
    if (kernel_shape.size() != n) return m;
    util::window_spec ws;
    ws.x = tail(x, 2);
    ws.kernel = kernel_shape;
    ws.strides = strides;
    ws.dilations = dilations;
    ws.pads = pads;
    ws.auto_pad = auto_pad;
    ws.ceil_mode = ceil_mode;
    ws.pads_below_kernel = true;
    m.geo = util::forward_window(ws);
    cs.insert(cs.end(), m.geo.constraints.begin(), m.geo.constraints.end());
    if (!m.geo.lengths_ok) return m;
    m.y = {x[0], x[1]};
    m.y.insert(m.y.end(), m.geo.out.begin(), m.geo.out.end());
    m.ok = true;
    return m;
}

/// The pools' work estimate (spec::hints::work): one step per window element per output.
inline spec::expr pool_work(const spec::context& c, const std::vector<std::vector<spec::expr>>& out) {
    return spec::product(out[0]) * spec::product(c.attr_ints("kernel_shape"));
}

/// The taps of one pooling window that lie inside X, in row-major kernel
/// order (the order the ONNX formula sums and compares them in): each tap
/// p_i = stride_i * o_i + dilation_i * k_i - pad_begin_i inside [0, X_i) on
/// every axis. The in-bounds kernel positions form a box, found per axis
/// (taps_in_bounds), so no tap is tested for padding one by one.
class window_taps {
public:
    /// dl empty: dilation 1 on every axis (AveragePool).
    window_taps(std::span<const std::int64_t> xs, std::span<const std::int64_t> ks, std::span<const std::int64_t> st,
                std::span<const std::int64_t> dl, std::span<const std::int64_t> pb)
        : xs_(xs), ks_(ks), st_(st), pb_(pb), n_(xs.size()), dl_(n_, 1), lo_(n_), hi_(n_), k_(n_), rs_(n_), cs_(n_) {
        if (!dl.empty()) dl_.assign(dl.begin(), dl.end());
        for (std::size_t i = n_, r = 1; i-- > 0;) {
            rs_[i] = static_cast<std::int64_t>(r);
            r *= static_cast<std::size_t>(xs[i]);
        }
        for (std::size_t i = 0, c = 1; i < n_; ++i) {
            cs_[i] = static_cast<std::int64_t>(c);
            c *= static_cast<std::size_t>(xs[i]);
        }
    }
    /// How many in-bounds taps output position o has.
    [[nodiscard]] std::int64_t count(std::span<const std::int64_t> o) const {
        std::int64_t c = 1;
        for (std::size_t i = 0; i < n_; ++i) {
            const auto range = taps_in_bounds(st_[i] * o[i] - pb_[i], dl_[i], ks_[i], xs_[i]);
            c *= std::max<std::int64_t>(range.second - range.first, 0);
        }
        return c;
    }
    /// fn(row, column) for each in-bounds tap of output position o: the tap's
    /// offset in its plane, row-major and column-major (MaxPool's storage_order 1).
    template <class Fn>
    void visit(std::span<const std::int64_t> o, Fn&& fn) {
        std::int64_t row = 0, col = 0;
        for (std::size_t i = 0; i < n_; ++i) {
            const std::int64_t a = st_[i] * o[i] - pb_[i];
            const auto range = taps_in_bounds(a, dl_[i], ks_[i], xs_[i]);
            if (range.first >= range.second) return;
            lo_[i] = k_[i] = range.first;
            hi_[i] = range.second;
            row += (a + dl_[i] * range.first) * rs_[i];
            col += (a + dl_[i] * range.first) * cs_[i];
        }
        // The last axis as one run; the axes before it as an odometer.
        const std::size_t last = n_ - 1;
        const std::int64_t run = hi_[last] - lo_[last], row_step = dl_[last], col_step = dl_[last] * cs_[last];
        for (;;) {
            for (std::int64_t j = 0, r = row, c = col; j < run; ++j, r += row_step, c += col_step) fn(r, c);
            for (std::size_t i = last;;) {
                if (i == 0) return;
                --i;
                if (++k_[i] < hi_[i]) {
                    row += dl_[i] * rs_[i];
                    col += dl_[i] * cs_[i];
                    break;
                }
                row -= (hi_[i] - 1 - lo_[i]) * dl_[i] * rs_[i];
                col -= (hi_[i] - 1 - lo_[i]) * dl_[i] * cs_[i];
                k_[i] = lo_[i];
            }
        }
    }

private:
    std::span<const std::int64_t> xs_, ks_, st_, pb_;
    std::size_t n_;
    std::vector<std::int64_t> dl_, lo_, hi_, k_, rs_, cs_;  // dilations, box, odometer, row- and column-major strides
};

/// A pool's windows over X (shape model checked), shared by MaxPool and
/// AveragePool, compute and vjp: for_each calls fn(f, base, o, taps) for each
/// output f, with base the offset of its plane in X, o its spatial position
/// and taps its in-bounds taps (taps.visit(o, ...)).
class pool_windows {
public:
    /// dilations empty: 1 on every axis (AveragePool has none).
    template <class Shape>
    pool_windows(std::string_view op_type, const Shape& x_shape, const std::vector<std::int64_t>& kernel_shape,
                 const std::vector<std::int64_t>& strides, const std::vector<std::int64_t>& dilations,
                 const std::vector<std::int64_t>& pads, std::string_view auto_pad, std::int64_t ceil_mode) {
        namespace util = detail::nn;
        const auto m = pool_shape_model(util::constants(x_shape), util::constants(kernel_shape), util::constants(strides),
                                        util::constants(dilations), util::constants(pads),
                                        util::parse_auto_pad(auto_pad, op_type), spec::expr(ceil_mode));
        util::check_constant(op_type, m.constraints);
        const auto yd = util::values(m.y);
        for (std::size_t i = 2; i < x_shape.size(); ++i) xs_.push_back(static_cast<std::int64_t>(x_shape[i]));
        os_.assign(yd.begin() + 2, yd.end());
        ks_ = kernel_shape;
        pb_ = util::values(m.geo.pad_begin);
        pe_ = util::values(m.geo.pad_end);
        st_ = util::values(m.geo.stride);
        dl_ = util::values(m.geo.dilation);
        planes_ = static_cast<std::int64_t>(x_shape[0] * x_shape[1]);
        plane_ = util::count(xs_);
        y_ = util::to_shape(yd, op_type);
    }
    [[nodiscard]] const shape_type& y() const noexcept { return y_; }
    /// The taps for_each visits, plus one step per window (hints' visits).
    [[nodiscard]] double visited_taps() const {
        double taps = 1.0, windows = 1.0;
        for (std::size_t i = 0; i < xs_.size(); ++i) {
            taps *= axis_taps(os_[i], st_[i], pb_[i], dl_[i], ks_[i], xs_[i]);
            windows *= static_cast<double>(os_[i]);
        }
        return static_cast<double>(planes_) * (taps + windows);
    }
    template <class Fn>
    void for_each(Fn&& fn) const {
        window_taps taps(xs_, ks_, st_, dl_, pb_);
        std::size_t f = 0;
        for (std::int64_t pl = 0; pl < planes_; ++pl) {
            detail::nn::for_each_index(os_, [&](std::span<const std::int64_t> o) { fn(f++, pl * plane_, o, taps); });
        }
    }
    /// AveragePool's divisor at o: its in-bounds taps, or with include_pad the
    /// pads too but not the taps past them that ceil_mode adds (per axis,
    /// positions before X_i + pad_end_i). 0 for a window wholly in padding.
    [[nodiscard]] std::int64_t divisor(std::span<const std::int64_t> o, const window_taps& taps, bool include_pad) const {
        if (!include_pad) return taps.count(o);
        std::int64_t d = 1;
        for (std::size_t i = 0; i < xs_.size(); ++i) {
            d *= std::clamp<std::int64_t>(xs_[i] + pe_[i] - (st_[i] * o[i] - pb_[i]), 0, ks_[i]);
        }
        return d;
    }

private:
    std::vector<std::int64_t> xs_, os_, ks_, pb_, pe_, st_, dl_;
    std::int64_t planes_ = 0, plane_ = 0;
    shape_type y_;
};
}  // namespace nn

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_POOL_WINDOWS_HPP
// ---- end tensoracle/ops/nn/detail/pool_windows.hpp ----

namespace tensoracle::ops {

struct max_pool_attr {
    std::string auto_pad = "NOTSET";
    std::int64_t ceil_mode = 0;
    std::vector<std::int64_t> dilations;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::int64_t storage_order = 0;
    std::vector<std::int64_t> strides;
    static constexpr std::array<std::string_view, 1> required{"kernel_shape"};
};

/// MaxPool(X) -> (Y, Indices): the maximum over each (dilated) window of the
/// input, padding excluded; Indices is the flat index into X of that maximum.
struct MaxPool : spec::one_shape_model<MaxPool> {
    static constexpr std::string_view op_type = "MaxPool";
    static constexpr int opset = 12;
    using attributes = max_pool_attr;
    static constexpr spec::dtype_set types = nn::float3 | spec::dtypes_of(dtype::i8, dtype::u8);
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 5}}}};
    static constexpr std::array<spec::value_spec, 2> outputs{
        {{"Y", types, {3, 5}}, {"Indices", spec::types::int64, {3, 5}, "I", true}}};

    template <int = 0>
    static nn::pool_model context_model(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return nn::pool_shape_model(c.shape(0), c.attr_ints("kernel_shape"), c.attr_ints("strides"),
                                    c.attr_ints("dilations"), c.attr_ints("pads"),
                                    detail::nn::parse_auto_pad(a.auto_pad, op_type), c.attr("ceil_mode"));
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = context_model(c);
        m.constraints.push_back({c.attr("storage_order") == 0 || c.attr("storage_order") == 1, "storage_order is 0 or 1"});
        return {std::move(m.constraints), {m.y, m.y}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0), dtype::i64}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// X's windows under `at`, shared by compute and the hints' visits.
    template <class Shape>
    static nn::pool_windows windows(const Shape& x_shape, const attributes& at) {
        return {op_type, x_shape, at.kernel_shape, at.strides, at.dilations, at.pads, at.auto_pad, at.ceil_mode};
    }
    /// Y and Indices.
    template <class T>
    static std::pair<array<T>, array<std::int64_t>> compute(const array<T>& x, const attributes& at) {
        static_assert(spec::dtype_accepted<MaxPool, T>::value);
        const auto win = windows(x.shape(), at);
        if (at.storage_order != 0 && at.storage_order != 1) throw error(std::string(op_type), "storage_order must be 0 or 1");
        auto y = array<T>::from_shape(win.y());
        auto ind = array<std::int64_t>::from_shape(win.y());
        win.for_each([&](std::size_t f, std::int64_t base, std::span<const std::int64_t> o, nn::window_taps& taps) {
            bool found = false;
            T best{};
            std::int64_t best_idx = 0;
            taps.visit(o, [&](std::int64_t row, std::int64_t col) {  // padding taps are ignored
                const T v = x.data()[base + row];
                bool take = !found || v > best;
                if constexpr (real_scalar<T>) {
                    if (found && nn::is_nan(best)) take = false;  // NaN stays
                    if (found && nn::is_nan(v) && !nn::is_nan(best)) take = true;
                }
                if (take) {
                    best = v;
                    best_idx = base + (at.storage_order == 0 ? row : col);
                    found = true;
                }
            });
            if (!found) throw error(std::string(op_type), "a pooling window covers only padding (dilations too large)");
            y.data()[f] = best;
            ind.data()[f] = best_idx;
        });
        return {std::move(y), std::move(ind)};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::dispatch<types, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            auto [y, i] = compute<T>(c.input(0).as_array<T>(), at);
            return std::vector<tensor>{tensor(y), tensor(i)};
        });
    }
    /// The kernel on AD scalar S: Y carries the derivative of the selected
    /// element; Indices (int64) is a placeholder taken from run(). An integer
    /// X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}, array<S>{}};
        return {compute<S>(x[0], at).first, array<S>{}};
    }
    /// The VJP of Y: each output's cotangent to the element it selected
    /// (ad/op_derivatives.hpp). Indices has none.
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        at.storage_order = 0;  // row-major indices are offsets into X
        const auto selected = compute<V>(x[0], at).second;
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape())};
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, selected.shape());
        if (wy == nullptr) return g;
        for (std::size_t f = 0; f < selected.size(); ++f) g[0].data()[static_cast<std::size_t>(selected.data()[f])] += wy->data()[f];
        return g;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(spec::facts::selection_of(0))
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.4)
            .flag("ceil_mode", 0.4)
            .flag("storage_order", 0.3)
            .work(nn::pool_work)
            .visits([](const spec::context& c) {
                return windows(c.input(0).shape(), spec::parse_attributes<attributes>(c.attributes(), op_type)).visited_taps();
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::max_pool_attr, auto_pad, ceil_mode, dilations, kernel_shape, pads, storage_order,
                        strides);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_MAX_POOL_HPP
// ---- end tensoracle/ops/nn/max_pool.hpp ----
// ---- begin tensoracle/ops/nn/average_pool.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_AVERAGE_POOL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_AVERAGE_POOL_HPP
// tensoracle: AveragePool (the mean over each pooling window).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct average_pool_attr {
    std::string auto_pad = "NOTSET";
    std::int64_t ceil_mode = 0;
    std::int64_t count_include_pad = 0;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
    static constexpr std::array<std::string_view, 1> required{"kernel_shape"};
};

/// AveragePool(X): mean over each window; the divisor counts the window's
/// positions inside X (count_include_pad=0) or inside the padded input
/// (count_include_pad=1; positions past the end pad, from ceil_mode, are not counted).
struct AveragePool : spec::one_shape_model<AveragePool>, spec::dtype_of_input<0>,
                     detail::one_input_kernel<AveragePool> {
    static constexpr std::string_view op_type = "AveragePool";
    static constexpr int opset = 11;
    using attributes = average_pool_attr;
    static constexpr spec::dtype_set types = nn::float3;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 5}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 5}}}};

    template <int = 0>
    static nn::pool_model context_model(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return nn::pool_shape_model(c.shape(0), c.attr_ints("kernel_shape"), c.attr_ints("strides"), {},
                                    c.attr_ints("pads"), detail::nn::parse_auto_pad(a.auto_pad, op_type),
                                    c.attr("ceil_mode"));
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = context_model(c);
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }


    /// X's windows under `at`, shared by compute and vjp.
    template <class Shape>
    static nn::pool_windows windows(const Shape& x_shape, const attributes& at) {
        return {op_type, x_shape, at.kernel_shape, at.strides, {}, at.pads, at.auto_pad, at.ceil_mode};
    }
    static std::int64_t checked_divisor(const nn::pool_windows& win, std::span<const std::int64_t> o,
                                        const nn::window_taps& taps, const attributes& at) {
        const auto d = win.divisor(o, taps, at.count_include_pad != 0);
        if (d == 0) throw error(std::string(op_type), "a pooling window covers only padding");
        return d;
    }
    template <class T>
    static array<T> compute(const array<T>& x, const attributes& at) {
        static_assert(spec::dtype_accepted<AveragePool, T>::value);
        using acc = nn::acc_t<T>;
        const auto win = windows(x.shape(), at);
        auto y = array<T>::from_shape(win.y());
        win.for_each([&](std::size_t f, std::int64_t base, std::span<const std::int64_t> o, nn::window_taps& taps) {
            const auto divisor = checked_divisor(win, o, taps, at);
            acc s = 0;
            taps.visit(o, [&](std::int64_t row, std::int64_t) { s += static_cast<acc>(x.data()[base + row]); });
            y.data()[f] = value_cast<T>(s / static_cast<acc>(divisor));
        });
        return y;
    }
    /// The VJP: each output's cotangent, over its divisor, to every in-bounds
    /// tap of its window (ad/op_derivatives.hpp).
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto win = windows(x[0].shape(), at);
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape())};
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, win.y());
        if (wy == nullptr) return g;
        win.for_each([&](std::size_t f, std::int64_t base, std::span<const std::int64_t> o, nn::window_taps& taps) {
            const V share = wy->data()[f] / static_cast<V>(checked_divisor(win, o, taps, at));
            taps.visit(o, [&](std::int64_t row, std::int64_t) { g[0].data()[base + row] += share; });
        });
        return g;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.4)
            .flag("ceil_mode", 0.4)
            .flag("count_include_pad", 0.5)
            .work(nn::pool_work)
            .visits([](const spec::context& c) {
                return windows(c.input(0).shape(), spec::parse_attributes<attributes>(c.attributes(), op_type)).visited_taps();
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::average_pool_attr, auto_pad, ceil_mode, count_include_pad, kernel_shape, pads,
                        strides);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_AVERAGE_POOL_HPP
// ---- end tensoracle/ops/nn/average_pool.hpp ----
// ---- begin tensoracle/ops/nn/global_average_pool.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_GLOBAL_AVERAGE_POOL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_GLOBAL_AVERAGE_POOL_HPP
// tensoracle: GlobalAveragePool (the mean of each (n, c) plane of X).

// ---- begin tensoracle/ops/nn/detail/global_pool.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_GLOBAL_POOL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_GLOBAL_POOL_HPP
// tensoracle: global_pool<Max>, the spec of GlobalAveragePool (Max = false) and
// GlobalMaxPool (Max = true).

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace nn {
/// Y[n, c, 1, ..., 1] = mean (or max) of X[n, c, :, ..., :].
template <bool Max>
struct global_pool : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = Max ? "GlobalMaxPool" : "GlobalAveragePool";
    static constexpr int opset = 1;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = float3;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 8}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 8}}}};

    static std::vector<constraint> constraints(const spec::context& c) {
        std::vector<constraint> cs{{expr(c.rank(0)) >= 3, "X has rank >= 3: (N, C, D1, ...)"}};
        for (std::size_t i = 2; i < c.rank(0); ++i) {
            cs.push_back({c.dim(0, i) >= 1, "spatial dims are non-empty (axis " + std::to_string(i) + ")"});
        }
        return cs;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) {
        std::vector<expr> y{c.dim(0, 0), c.dim(0, 1)};
        for (std::size_t i = 2; i < c.rank(0); ++i) y.emplace_back(1);
        return {y};
    }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3) return {};
        return {{{out}, {rank}}};
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x) {
        static_assert(spec::dtype_accepted<global_pool, T>::value);
        if (x.dimension() < 3) throw shape_error(std::string(op_type), "X must have rank >= 3: (N, C, D1, ...)");
        shape_type ys{x.shape()[0], x.shape()[1]};
        std::size_t plane = 1;
        for (std::size_t i = 2; i < x.dimension(); ++i) {
            if (x.shape()[i] == 0) throw shape_error(std::string(op_type), "spatial dims must be non-empty");
            plane *= x.shape()[i];
            ys.push_back(1);
        }
        auto y = array<T>::from_shape(ys);
        for (std::size_t p = 0; p < y.size(); ++p) {
            const T* v = x.data() + p * plane;
            if constexpr (Max) {
                T best = v[0];
                for (std::size_t i = 1; i < plane; ++i) {
                    if (is_nan(best)) break;
                    if (v[i] > best || is_nan(v[i])) best = v[i];
                }
                y.data()[p] = best;
            } else {
                acc_t<T> s = 0;
                for (std::size_t i = 0; i < plane; ++i) s += static_cast<acc_t<T>>(v[i]);
                y.data()[p] = value_cast<T>(s / static_cast<acc_t<T>>(plane));
            }
        }
        return y;
    }
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using U = typename decltype(t)::type;
            return tensor(compute<U>(c.input(0).as_array<U>()));
        }));
    }
    /// The kernel on AD scalar S (GlobalMaxPool: the derivative of the selected element).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context&, const std::vector<array<S>>& x) {
        return {compute<S>(x[0])};
    }
};
}  // namespace nn

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_GLOBAL_POOL_HPP
// ---- end tensoracle/ops/nn/detail/global_pool.hpp ----

namespace tensoracle::ops {

using GlobalAveragePool = nn::global_pool<false>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_GLOBAL_AVERAGE_POOL_HPP
// ---- end tensoracle/ops/nn/global_average_pool.hpp ----
// ---- begin tensoracle/ops/nn/global_max_pool.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_GLOBAL_MAX_POOL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_GLOBAL_MAX_POOL_HPP
// tensoracle: GlobalMaxPool (the maximum of each (n, c) plane of X).


namespace tensoracle::ops {

using GlobalMaxPool = nn::global_pool<true>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_GLOBAL_MAX_POOL_HPP
// ---- end tensoracle/ops/nn/global_max_pool.hpp ----
// ---- begin tensoracle/ops/nn/lrn.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_LRN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_LRN_HPP
// tensoracle: LRN (local response normalization across channels).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct lrn_attr {
    float alpha = 0.0001f;
    float beta = 0.75f;
    float bias = 1.0f;
    std::int64_t size = 1;
    static constexpr std::array<std::string_view, 1> required{"size"};
};

/// LRN(X): Y = X / (bias + alpha / size * square_sum)^beta, square_sum over the
/// channels [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
// On AD scalars (run_real) beta stays a constant exponent of a positive base.
struct LRN : spec::like_input<0>, detail::one_input_kernel<LRN> {
    static constexpr std::string_view op_type = "LRN";
    static constexpr int opset = 13;
    using attributes = lrn_attr;
    static constexpr spec::dtype_set types = spec::types::floating;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 8}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return {{spec::expr(c.rank(0)) >= 3, "X has rank >= 3: (N, C, D1, ...)"}, {c.attr("size") >= 1, "size >= 1"}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3) return {};
        return {{{out}, {rank}}};
    }
    /// The base raised to beta must be positive.
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        return {{"bias + alpha / size * square_sum > 0", [a](std::span<const tensor> in) {
                     const auto x = in[0].to<double>();
                     if (x.dimension() < 3 || a.size < 1) return 0.0;
                     const auto base = bases(x, a);
                     double loss = 0.0;
                     for (const double b : base) loss += b > 0 ? 0.0 : (1e-10 - b);
                     return loss;
                 }}};
    }
    /// bias + alpha / size * square_sum for every element, in double.
    static std::vector<double> bases(const array<double>& x, const attributes& a) {
        const std::size_t N = x.shape()[0], C = x.shape()[1], plane = x.size() / std::max<std::size_t>(1, N * C);
        const auto lo = (a.size - 1) / 2, hi = a.size - 1 - lo;
        std::vector<double> out(x.size());
        for (std::size_t b = 0; b < N; ++b) {
            for (std::size_t c = 0; c < C; ++c) {
                const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(c) - lo);
                const auto last = std::min<std::int64_t>(static_cast<std::int64_t>(C) - 1, static_cast<std::int64_t>(c) + hi);
                for (std::size_t p = 0; p < plane; ++p) {
                    double s = 0;
                    for (auto j = first; j <= last; ++j) {
                        const double v = x.data()[(b * C + static_cast<std::size_t>(j)) * plane + p];
                        s += v * v;
                    }
                    out[(b * C + c) * plane + p] =
                        static_cast<double>(a.bias) + static_cast<double>(a.alpha) / static_cast<double>(a.size) * s;
                }
            }
        }
        return out;
    }
    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a) {
        static_assert(spec::dtype_accepted<LRN, T>::value);
        using acc = nn::acc_t<T>;
        if (x.dimension() < 3) throw shape_error(std::string(op_type), "X must have rank >= 3: (N, C, D1, ...)");
        if (a.size < 1) throw error(std::string(op_type), "size must be >= 1");
        const std::size_t N = x.shape()[0], C = x.shape()[1], plane = x.size() / std::max<std::size_t>(1, N * C);
        const auto lo = (a.size - 1) / 2, hi = a.size - 1 - lo;
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t b = 0; b < N; ++b) {
            for (std::size_t c = 0; c < C; ++c) {
                const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(c) - lo);
                const auto last = std::min<std::int64_t>(static_cast<std::int64_t>(C) - 1, static_cast<std::int64_t>(c) + hi);
                for (std::size_t p = 0; p < plane; ++p) {
                    acc s = 0;
                    for (auto j = first; j <= last; ++j) {
                        const auto v = static_cast<acc>(x.data()[(b * C + static_cast<std::size_t>(j)) * plane + p]);
                        s += v * v;
                    }
                    const std::size_t f = (b * C + c) * plane + p;
                    const acc base = static_cast<acc>(a.bias) + static_cast<acc>(a.alpha) / static_cast<acc>(a.size) * s;
                    const acc scale = math::pow(base, static_cast<acc>(a.beta));
                    y.data()[f] = value_cast<T>(static_cast<acc>(x.data()[f]) / scale);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.solve("size", 1, 9, 1.0).real("alpha", 1e-4, 1e-2, 0.5).real("beta", 0.5, 0.9, 0.5).real("bias", 1.0, 3.0, 0.5).range(0, -3, 3).facts(facts);
    }
    /// Y = X * s with s = (bias + alpha/size * sum)^-beta in (0, bias^-beta] when
    /// alpha, beta >= 0 and bias > 0: signs stay, magnitudes scale by at most
    /// bias^-beta (LRN of values in [0, 1] with bias > 1 stays below 1).
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type>) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        if (in.empty() || !(a.alpha >= 0.0f && a.beta >= 0.0f && a.bias > 0.0f)) return {spec::value_facts{}};
        const auto& x = in[0];
        const double s = std::pow(static_cast<double>(a.bias), -static_cast<double>(a.beta));
        spec::value_facts y;
        y.lo = x.lo >= 0.0 ? 0.0 : x.lo * s;
        y.hi = x.hi <= 0.0 ? 0.0 : x.hi * s;
        if (std::isfinite(x.some_at_most)) y.some_at_most = x.some_at_most >= 0.0 ? x.some_at_most * s : 0.0;
        if (std::isfinite(x.some_at_least)) y.some_at_least = x.some_at_least <= 0.0 ? x.some_at_least * s : 0.0;
        for (const double v : x.forced) {
            if (v == 0.0) {
                y.force(0.0);  // 0 stays 0
            } else if (a.size == 1) {
                // A window of one channel: element-wise, so a forced value maps exactly.
                y.force(v * std::pow(static_cast<double>(a.bias) + static_cast<double>(a.alpha) * v * v,
                                     -static_cast<double>(a.beta)));
            }
        }
        return {y};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::lrn_attr, alpha, beta, bias, size);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_LRN_HPP
// ---- end tensoracle/ops/nn/lrn.hpp ----
// ---- begin tensoracle/ops/nn/resize.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_RESIZE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_RESIZE_HPP
// tensoracle: Resize (nearest, linear or cubic interpolation of X to new sizes or scales).
//
// Resize follows the ONNX 1.12 reference implementation (the one that made
// the test data): the coordinate transforms use length_resized =
// scale * length_original as a real number, taps are picked from the
// edge-padded input, exclude_outside renormalizes the weights inside X
// (kept edge-clamped when no weight is left inside); with scales, the
// output size is floor(x * scale) (roi does not scale it). X of any type:
// integer and bool images interpolate in double and truncate once.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

// ---- begin tensoracle/ops/nn/detail/resize_impl.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_RESIZE_IMPL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_RESIZE_IMPL_HPP
// tensoracle: Resize's interpolation (resize_impl) and its attributes (resize_attr), shared
// by Resize and Upsample.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct resize_attr {
    std::string coordinate_transformation_mode = "half_pixel";
    float cubic_coeff_a = -0.75f;
    std::int64_t exclude_outside = 0;
    float extrapolation_value = 0.0f;
    std::string mode = "nearest";
    std::string nearest_mode = "round_prefer_floor";
};

namespace nn {
/// Resize's interpolation (the ONNX 1.12 reference, resize.py, transcribed).
struct resize_impl {
    enum class mode_t : std::uint8_t { nearest, linear, cubic };
    enum class ctm_t : std::uint8_t { half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize };
    enum class nearest_t : std::uint8_t { round_prefer_floor, round_prefer_ceil, floor, ceil };
    struct settings {
        mode_t mode;
        ctm_t ctm;
        nearest_t nearest;
        double cubic_a;
        bool exclude_outside;
        double extrapolation;
    };
    static settings parse(const resize_attr& a, std::string_view op_type) {
        settings s{};
        const std::string where(op_type);
        if (a.mode == "nearest") s.mode = mode_t::nearest;
        else if (a.mode == "linear") s.mode = mode_t::linear;
        else if (a.mode == "cubic") s.mode = mode_t::cubic;
        else throw error(where, "mode must be nearest, linear or cubic, got '" + a.mode + "'");
        const auto& c = a.coordinate_transformation_mode;
        if (c == "half_pixel") s.ctm = ctm_t::half_pixel;
        else if (c == "pytorch_half_pixel") s.ctm = ctm_t::pytorch_half_pixel;
        else if (c == "align_corners") s.ctm = ctm_t::align_corners;
        else if (c == "asymmetric") s.ctm = ctm_t::asymmetric;
        else if (c == "tf_half_pixel_for_nn") s.ctm = ctm_t::tf_half_pixel_for_nn;
        else if (c == "tf_crop_and_resize") s.ctm = ctm_t::tf_crop_and_resize;
        else throw error(where, "unknown coordinate_transformation_mode '" + c + "'");
        if (a.nearest_mode == "round_prefer_floor") s.nearest = nearest_t::round_prefer_floor;
        else if (a.nearest_mode == "round_prefer_ceil") s.nearest = nearest_t::round_prefer_ceil;
        else if (a.nearest_mode == "floor") s.nearest = nearest_t::floor;
        else if (a.nearest_mode == "ceil") s.nearest = nearest_t::ceil;
        else throw error(where, "unknown nearest_mode '" + a.nearest_mode + "'");
        s.cubic_a = static_cast<double>(a.cubic_coeff_a);
        s.exclude_outside = a.exclude_outside != 0;
        s.extrapolation = static_cast<double>(a.extrapolation_value);
        if (!std::isfinite(s.cubic_a)) throw error(where, "cubic_coeff_a must be finite");
        return s;
    }

    /// floor(x * scale) per axis; scales must be positive and finite.
    static std::vector<std::int64_t> scaled_dims(const shape_type& x, std::span<const float> scales, std::string_view op_type) {
        if (scales.size() != x.size()) {
            throw shape_error(std::string(op_type), "scales has " + std::to_string(scales.size()) + " values for rank " +
                                                        std::to_string(x.size()));
        }
        std::vector<std::int64_t> out;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double s = static_cast<double>(scales[i]);
            if (!(s > 0.0) || !std::isfinite(s)) {
                throw error(std::string(op_type), "scales must be positive and finite, got " + std::to_string(s));
            }
            const double v = std::floor(s * static_cast<double>(x[i]));
            if (!(v < 0x1p31)) throw shape_error(std::string(op_type), "scaled output dim is too large");
            out.push_back(static_cast<std::int64_t>(v));
        }
        return out;
    }

    struct taps {
        bool extrapolate = false;
        std::vector<std::int64_t> index;
        std::vector<double> weight;
    };
    static std::vector<double> coeffs(const settings& s, double ratio, bool integral) {
        switch (s.mode) {
            case mode_t::nearest:
                if (integral) return {0.0, 1.0};
                switch (s.nearest) {
                    case nearest_t::round_prefer_floor: return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
                    case nearest_t::round_prefer_ceil: return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
                    case nearest_t::floor: return {1.0, 0.0};
                    case nearest_t::ceil: return {0.0, 1.0};
                }
                return {};
            case mode_t::linear: return {1.0 - ratio, ratio};
            case mode_t::cubic: {
                const double A = s.cubic_a, r = ratio, q = 1.0 - ratio;
                return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
                        ((A + 2) * r - (A + 3)) * r * r + 1,
                        ((A + 2) * q - (A + 3)) * q * q + 1,
                        ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A};
            }
        }
        return {};
    }
    /// Taps of output coordinate x along an axis of `in` elements.
    static taps axis_taps(const settings& s, std::int64_t x_resized, std::int64_t in, double scale, double roi_start,
                          double roi_end, std::string_view op_type) {
        const double x = static_cast<double>(x_resized), len = static_cast<double>(in);
        const double out_w = scale * len;  // the reference's output_width (a real number)
        double xo = 0.0;
        taps t;
        switch (s.ctm) {
            case ctm_t::align_corners: xo = out_w == 1.0 ? 0.0 : x * (len - 1) / (out_w - 1); break;
            case ctm_t::asymmetric: xo = x / scale; break;
            case ctm_t::tf_crop_and_resize:
                xo = out_w == 1.0 ? (roi_end - roi_start) * (len - 1) / 2 : x * (roi_end - roi_start) * (len - 1) / (out_w - 1);
                xo += roi_start * (len - 1);
                if (xo < 0 || xo > len - 1) {
                    t.extrapolate = true;
                    return t;
                }
                break;
            case ctm_t::pytorch_half_pixel: xo = out_w == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5; break;
            case ctm_t::half_pixel: xo = (x + 0.5) / scale - 0.5; break;
            case ctm_t::tf_half_pixel_for_nn: xo = (x + 0.5) / scale; break;
        }
        if (!std::isfinite(xo) || std::fabs(xo) > 0x1p40) {
            throw error(std::string(op_type), "source coordinate " + std::to_string(xo) + " is out of range");
        }
        const double fl = std::floor(xo);
        const bool integral = xo == fl;
        const double ratio = integral ? 1.0 : xo - fl;
        auto w = coeffs(s, ratio, integral);
        const auto n = static_cast<std::int64_t>(w.size());
        const std::int64_t p = (n + 1) / 2;  // edge padding of the reference
        const std::int64_t L = in + 2 * p;
        // The n padded indices nearest to xo + p (ties to the lower index), kept inside [0, L).
        std::int64_t start = static_cast<std::int64_t>(std::ceil(xo + static_cast<double>(p))) - n / 2;
        start = std::clamp<std::int64_t>(start, 0, L - n);
        std::vector<double> inside = w;
        double sum = 0;
        for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t idx = start + j - p;
            if (idx < 0 || idx >= in) inside[static_cast<std::size_t>(j)] = 0.0;
            sum += inside[static_cast<std::size_t>(j)];
            t.index.push_back(std::clamp<std::int64_t>(idx, 0, in - 1));
        }
        // exclude_outside renormalizes the weights inside X. When none is left
        // (only nearest can pick a tap outside alone), the reference divides by
        // zero; we keep the edge-clamped tap instead.
        if (s.exclude_outside && sum != 0.0) {
            for (double& v : inside) v /= sum;
            w = std::move(inside);
        }
        t.weight = std::move(w);
        return t;
    }

    /// Y from X, output dims, per-axis scales (used by the coordinate transforms) and roi.
    template <class T>
    static array<T> interpolate(const array<T>& x, const std::vector<std::int64_t>& out, const std::vector<double>& scales,
                                const std::vector<double>& roi, const settings& s, std::string_view op_type) {
        // Integer and bool images interpolate in double and truncate once (ONNX's
        // reference: numpy, then astype); nearest picks stay exact.
        using acc = std::conditional_t<std::is_integral_v<T>, double, acc_t<T>>;
        namespace util = detail::nn;
        const auto xd = util::dims_of(x);
        const std::size_t r = xd.size();
        std::vector<std::vector<taps>> axis(r);
        for (std::size_t i = 0; i < r; ++i) {
            if (xd[i] == 0 && out[i] != 0) throw shape_error(std::string(op_type), "cannot resize an empty axis to a non-empty one");
            for (std::int64_t o = 0; o < out[i] && xd[i] > 0; ++o) {
                const double rs = roi.empty() ? 0.0 : roi[i], re = roi.empty() ? 1.0 : roi[r + i];
                axis[i].push_back(axis_taps(s, o, xd[i], scales[i], rs, re, op_type));
            }
        }
        auto y = array<T>::from_shape(util::to_shape(out, op_type));
        const auto xstrides = detail::strides_of(shape_type(x.shape().begin(), x.shape().end()));
        std::size_t f = 0;
        // Scratch reused across output elements (the loops run per element).
        std::vector<const taps*> tp(r);
        std::vector<std::size_t> counts(r), j(r);
        util::for_each_index(out, [&](std::span<const std::int64_t> o) {
            bool empty = false;
            for (std::size_t i = 0; i < r; ++i) {
                tp[i] = &axis[i][static_cast<std::size_t>(o[i])];
                if (tp[i]->extrapolate) {
                    y.data()[f++] = value_cast<T>(s.extrapolation);
                    return;
                }
                counts[i] = tp[i]->index.size();
                empty = empty || counts[i] == 0;
            }
            acc sum = 0;
            // Every tap combination, row-major (the last axis fastest).
            std::fill(j.begin(), j.end(), std::size_t{0});
            for (bool more = !empty; more;) {
                double w = 1.0;
                std::size_t off = 0;
                for (std::size_t i = 0; i < r; ++i) {
                    w *= tp[i]->weight[j[i]];
                    off += static_cast<std::size_t>(tp[i]->index[j[i]]) * xstrides[i];
                }
                sum += static_cast<acc>(w) * static_cast<acc>(x.data()[off]);
                more = false;
                for (std::size_t i = r; i-- > 0;) {
                    if (++j[i] < counts[i]) {
                        more = true;
                        break;
                    }
                    j[i] = 0;
                }
            }
            y.data()[f++] = value_cast<T>(sum);
        });
        return y;
    }
};
}  // namespace nn

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::resize_attr, coordinate_transformation_mode, cubic_coeff_a, exclude_outside,
                        extrapolation_value, mode, nearest_mode);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_DETAIL_RESIZE_IMPL_HPP
// ---- end tensoracle/ops/nn/detail/resize_impl.hpp ----

namespace tensoracle::ops {

/// Resize(X, roi?, scales?, sizes?): exactly one of scales (float32) and sizes
/// (int64) is given and non-empty; roi is used by tf_crop_and_resize only.
// Derivatives: X only: roi and scales are grid parameters (the coordinates are computed
// in double, and scales also fix the output shape), not data.
struct Resize : spec::dtype_of_input<0>, spec::differentiable_input<0> {
    static constexpr std::string_view op_type = "Resize";
    static constexpr int opset = 13;
    using attributes = resize_attr;
    static constexpr spec::dtype_set types = spec::types::all;
    static constexpr std::array<spec::value_spec, 4> inputs{{{"X", types, {1, 8}},
                                                             {"roi", spec::types::ieee_floating, {1, 1}, "T2", true},
                                                             {"scales", spec::dtypes_of(dtype::f32), {1, 1}, "Tscales", true},
                                                             {"sizes", spec::types::int64, {1, 1}, "Tsizes", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {1, 8}}}};

    static bool given(const spec::context& c, std::size_t i) { return c.has_input(i) && c.element_count(i) > 0; }

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        using spec::expr;
        const auto s = nn::resize_impl::parse(spec::parse_attributes<attributes>(c.attributes(), op_type), op_type);
        const std::size_t r = c.rank(0);
        const bool has_scales = given(c, 2), has_sizes = given(c, 3);
        std::vector<spec::constraint> cs{{expr(has_scales != has_sizes), "exactly one of scales and sizes is given"}};
        if (has_scales) {
            cs.push_back({c.dim(2, 0) == expr(r), "scales has one value per axis of X"});
            if (c.element_count(2) == r) (void)nn::resize_impl::scaled_dims(c.concrete_shape(0), c.input(2).values<float>(), op_type);
        }
        if (has_sizes) {
            cs.push_back({c.dim(3, 0) == expr(r), "sizes has one value per axis of X"});
            if (c.element_count(3) == r) {
                const auto v = c.values(3);
                for (std::size_t i = 0; i < r; ++i) {
                    cs.push_back({v[i] >= 0, "sizes >= 0 (axis " + std::to_string(i) + ")"});
                    cs.push_back({c.dim(0, i) >= 1 || v[i] == 0, "an empty axis resizes to 0 (axis " + std::to_string(i) + ")"});
                }
            }
        }
        if (s.ctm == nn::resize_impl::ctm_t::tf_crop_and_resize) {
            cs.push_back({expr(c.has_input(1)), "tf_crop_and_resize needs roi"});
            if (c.has_input(1)) cs.push_back({c.dim(1, 0) == expr(2 * r), "roi has a start and an end per axis of X"});
        }
        return cs;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        if (given(c, 3)) return {c.values(3)};
        const auto d = nn::resize_impl::scaled_dims(c.concrete_shape(0), c.input(2).values<float>(), op_type);
        std::vector<spec::expr> y;
        for (const auto v : d) y.emplace_back(v);
        return {y};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        return {{{out}, {rank}}, {types.members(), {1}}, {{dtype::f32}, {1}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// scales or sizes: exactly one non-empty. roi: 2 * rank values or empty.
    template <class T>
    static array<T> compute(const array<T>& x, const std::vector<double>& roi, const std::vector<float>& scales,
                            const std::vector<std::int64_t>& sizes, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Resize, T>::value);
        const auto s = nn::resize_impl::parse(a, op_type);
        const std::size_t r = x.dimension();
        const shape_type xs(x.shape().begin(), x.shape().end());
        if (scales.empty() == sizes.empty()) throw shape_error(std::string(op_type), "exactly one of scales and sizes must be given");
        std::vector<std::int64_t> out;
        std::vector<double> sc(r);
        if (!sizes.empty()) {
            if (sizes.size() != r) throw shape_error(std::string(op_type), "sizes must have one value per axis of X");
            out = sizes;
            for (std::size_t i = 0; i < r; ++i) {
                if (out[i] < 0) throw shape_error(std::string(op_type), "sizes must be >= 0");
                sc[i] = xs[i] == 0 ? 1.0 : static_cast<double>(out[i]) / static_cast<double>(xs[i]);
            }
        } else {
            out = nn::resize_impl::scaled_dims(xs, scales, op_type);
            for (std::size_t i = 0; i < r; ++i) sc[i] = static_cast<double>(scales[i]);
        }
        if (s.ctm == nn::resize_impl::ctm_t::tf_crop_and_resize && roi.size() != 2 * r) {
            throw shape_error(std::string(op_type), "tf_crop_and_resize needs roi with a start and an end per axis");
        }
        return nn::resize_impl::interpolate(x, out, sc, s.ctm == nn::resize_impl::ctm_t::tf_crop_and_resize ? roi : std::vector<double>{},
                                            s, op_type);
    }
    /// roi, scales and sizes as compute takes them (empty when absent).
    struct params {
        std::vector<double> roi;
        std::vector<float> scales;
        std::vector<std::int64_t> sizes;
    };
    static params read_params(const spec::context& c) {
        params p;
        if (c.has_input(1)) {
            const auto v = c.input(1).to<double>();
            p.roi.assign(v.begin(), v.end());
        }
        if (given(c, 2)) {
            const auto v = c.input(2).values<float>();
            p.scales.assign(v.begin(), v.end());
        }
        if (given(c, 3)) {
            const auto v = c.input(3).values<std::int64_t>();
            p.sizes.assign(v.begin(), v.end());
        }
        return p;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto p = read_params(c);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), p.roi, p.scales, p.sizes, at));
        }));
    }
    /// The kernel on AD scalar S. The interpolation weights depend on
    /// coordinates only, so Y is linear in X; an integer X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        const auto p = read_params(c);
        return {compute<S>(x[0], p.roi, p.scales, p.sizes, at)};
    }
    /// Nearest picks input elements and linear weighs two neighbours per axis by
    /// weights in [0, 1] (edges repeated): both stay within X's range, plus the
    /// extrapolation value under tf_crop_and_resize. Cubic overshoots: unknown.
    template <int = 0>
    static std::vector<spec::value_facts> interpolation_facts(std::span<const spec::value_facts> in,
                                                              const spec::attribute_map& attrs, std::span<const shape_type>) {
        const auto at = spec::parse_attributes<attributes>(attrs, op_type);
        if (in.empty() || (at.mode != "nearest" && at.mode != "linear")) return {spec::value_facts{}};
        auto f = at.mode == "nearest" ? in[0].selection() : in[0].range_only();
        if (at.coordinate_transformation_mode == "tf_crop_and_resize") {  // may appear, is not forced to
            f.integral = f.integral && static_cast<double>(at.extrapolation_value) == std::floor(at.extrapolation_value);
            f.lo = std::min(f.lo, static_cast<double>(at.extrapolation_value));
            f.hi = std::max(f.hi, static_cast<double>(at.extrapolation_value));
        }
        return {f};
    }
    template <int = 0>
    static spec::hints hints() {
        const auto floats = [](rng& g, std::size_t n, double lo, double hi) {
            auto t = array<float>::from_shape({n});
            for (std::size_t i = 0; i < n; ++i) t.data()[i] = static_cast<float>(g.uniform(lo, hi));
            return tensor(t);
        };
        return spec::hints{}
            .facts(interpolation_facts<>)
            .choice("mode", {std::string("nearest"), std::string("linear"), std::string("cubic")}, 0.8)
            // Each output element reads 1 (nearest), 2 (linear) or 4 (cubic) taps along every axis.
            .work([](const spec::context& c, const std::vector<std::vector<spec::expr>>& out) {
                const auto it = c.attributes().find("mode");
                const auto* mode = it != c.attributes().end() ? std::get_if<std::string>(&it->second) : nullptr;
                const std::int64_t per_axis = mode == nullptr || *mode == "nearest" ? 1 : (*mode == "linear" ? 2 : 4);
                std::int64_t taps = 1;
                for (std::size_t a = 0; a < c.rank(0); ++a) taps *= per_axis;
                return spec::product(out[0]) * taps;
            })
            .choice("coordinate_transformation_mode",
                    {std::string("half_pixel"), std::string("pytorch_half_pixel"), std::string("align_corners"),
                     std::string("asymmetric"), std::string("tf_half_pixel_for_nn"), std::string("tf_crop_and_resize")},
                    0.8)
            .choice("nearest_mode", {std::string("round_prefer_floor"), std::string("round_prefer_ceil"), std::string("floor"), std::string("ceil")}, 0.5)
            .real("cubic_coeff_a", -0.75, -0.5, 0.3)
            .flag("exclude_outside", 0.3)
            .real("extrapolation_value", -10.0, 10.0, 0.3)
            .optional_input(1, 0.3)
            .optional_input(2, 0.5)
            .optional_input(3, 0.5)
            .before_solving(1, [floats](rng& g, const spec::context& c) {  // roi: starts in [0, 0.3], ends in [0.7, 1]
                const std::size_t r = c.rank(0);
                tensor t = floats(g, 2 * r, 0.0, 0.3);
                for (std::size_t i = 0; i < r; ++i) t.values<float>()[r + i] = static_cast<float>(g.uniform(0.7, 1.0));
                return t.cast(c.input_dtype(1));
            })
            .before_solving(2, [](rng& g, const spec::context& c) {  // scales: a few exact binary fractions
                static constexpr std::array<float, 6> choices{0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 3.0f};
                auto t = array<float>::from_shape({c.rank(0)});
                for (auto& v : t) v = choices[static_cast<std::size_t>(g.below(choices.size()))];
                return tensor(t);
            });
    }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_RESIZE_HPP
// ---- end tensoracle/ops/nn/resize.hpp ----
// ---- begin tensoracle/ops/nn/upsample.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_NN_UPSAMPLE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_NN_UPSAMPLE_HPP
// tensoracle: Upsample (deprecated Resize: opset 9 only).
//
// Upsample-9 is Resize with asymmetric coordinates, nearest_mode floor
// (nearest) or linear, scales >= 1.

#include <array>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct upsample_attr {
    std::string mode = "nearest";
};

/// Upsample-9(X, scales): deprecated Resize; asymmetric coordinates, nearest
/// rounds down, linear interpolates; scales >= 1, output floor(x * scale).
// Derivatives: X only: the (float) scales set the geometry, they are not data.
struct Upsample : spec::dtype_of_input<0>, spec::differentiable_input<0> {
    static constexpr std::string_view op_type = "Upsample";
    static constexpr int opset = 9;
    static constexpr int last_opset = 9;  // deprecated from opset 10 on (Resize replaces it)
    using attributes = upsample_attr;
    static constexpr spec::dtype_set types = spec::types::ieee_floating | spec::types::integers | spec::types::boolean;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"X", types, {1, 8}}, {"scales", spec::dtypes_of(dtype::f32), {1, 1}, "Tscales"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {1, 8}}}};

    static resize_attr as_resize(const attributes& a) {
        if (a.mode != "nearest" && a.mode != "linear") {
            throw error(std::string(op_type), "mode must be nearest or linear, got '" + a.mode + "'");
        }
        resize_attr r;
        r.mode = a.mode;
        r.coordinate_transformation_mode = "asymmetric";
        r.nearest_mode = "floor";
        return r;
    }
    static void check_scales(std::span<const float> s) {
        for (const float v : s) {
            if (!(v >= 1.0f) || !std::isfinite(v)) throw error(std::string(op_type), "scales must be finite and >= 1");
        }
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        (void)as_resize(spec::parse_attributes<attributes>(c.attributes(), op_type));
        check_scales(c.input(1).values<float>());
        return {{c.dim(1, 0) == spec::expr(c.rank(0)), "scales has one value per axis of X"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto d = nn::resize_impl::scaled_dims(c.concrete_shape(0), c.input(1).values<float>(), op_type);
        std::vector<spec::expr> y;
        for (const auto v : d) y.emplace_back(v);
        return {y};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        return {{{out}, {rank}}, {{dtype::f32}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, const std::vector<float>& scales, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Upsample, T>::value);
        check_scales(scales);
        return Resize::compute<T>(x, {}, scales, {}, as_resize(a));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto scales = scales_of(c);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), scales, at));
        }));
    }
    static std::vector<float> scales_of(const spec::context& c) {
        const auto v = c.input(1).values<float>();
        return {v.begin(), v.end()};
    }
    /// The kernel on AD scalar S (linear in X); an integer X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute<S>(x[0], scales_of(c), at)};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .choice("mode", {std::string("nearest"), std::string("linear")}, 0.8)
            .before_solving(1, [](rng& g, const spec::context& c) {  // scales >= 1
                static constexpr std::array<float, 4> choices{1.0f, 1.5f, 2.0f, 3.0f};
                auto t = array<float>::from_shape({c.rank(0)});
                for (auto& v : t) v = choices[static_cast<std::size_t>(g.below(choices.size()))];
                return tensor(t);
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::upsample_attr, mode);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_UPSAMPLE_HPP
// ---- end tensoracle/ops/nn/upsample.hpp ----

namespace tensoracle::ops {

inline constexpr auto nn_ops = hana::tuple_t<MatMul, Gemm, Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool,
                                             GlobalMaxPool, LRN, Resize, Upsample>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_NN_HPP
// ---- end tensoracle/ops/nn.hpp ----
// ---- begin tensoracle/ops/reduce.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_HPP
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

// ---- begin tensoracle/ops/reduce/reduce_sum.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_SUM_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_SUM_HPP
// tensoracle: ReduceSum (the sum over the reduced axes; the axes also as an int64 input).

#include <algorithm>
#include <span>

// ---- begin tensoracle/ops/reduce/detail/reduce_formula.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_REDUCE_FORMULA_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_REDUCE_FORMULA_HPP
// tensoracle: what the Reduce* formulas (reduce::*_fn of ReduceSum ... ReduceLogSumExp)
// share: their dtype sets, value-facts helpers and select_reduce and select_partials
// (ReduceMax, ReduceMin).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>


namespace tensoracle::ops {

namespace reduce {
using spec::dtype_set;
namespace types = spec::types;

/// A selecting reduction: the first NaN, else the running value (from `init`, an
/// empty group's result) replaced by each element `better` than it.
template <class A, class Better>
A select_reduce(std::span<const A> v, A init, Better better) {
    A m = init;
    for (const A& x : v) {
        if constexpr (!std::is_integral_v<A>) {
            if (math::isnan(x)) return x;
        }
        m = better(x, m) ? x : m;
    }
    return m;
}

/// Partials of a selecting reduction, walked as its reduce() walks: 1 at the
/// element it returns (the first NaN, else the last element `better` than the
/// running value, which starts at `init`), 0 elsewhere; all 0 when none is
/// taken (the result is then `init`, a constant).
template <class V, class Better>
void select_partials(std::span<const V> v, std::span<V> d, V init, Better better) {
    std::fill(d.begin(), d.end(), V(0));
    std::size_t at = v.size();
    V m = init;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (std::isnan(v[i])) {
            at = i;
            break;
        }
        if (better(v[i], m)) {
            m = v[i];
            at = i;
        }
    }
    if (at < v.size()) d[at] = V(1);
}

/// What a * x + b holds (a > 0) where x holds `x`: a constant stays one. A
/// reduction's value facts (the generator sizes groups from the input and
/// output shapes): a sum of n elements holding `x` is affine_facts(x, n, 0).
inline spec::value_facts affine_facts(const spec::value_facts& x, double a, double b) {
    if (x.lo == x.hi && std::isfinite(x.lo)) return spec::value_facts::constant(a * x.lo + b);
    return spec::value_facts::within(a * x.lo + b, a * x.hi + b);
}
inline spec::value_facts sum_facts(const spec::value_facts& e, double n) { return affine_facts(e, n, 0.0); }
inline spec::value_facts square_facts(const spec::value_facts& x) {
    return spec::facts::image(x, [](double v) { return v * v; });
}

inline constexpr dtype_set sum_types = types::floating | types::indices;
inline constexpr dtype_set minmax_types = types::floating | spec::dtypes_of(dtype::i8, dtype::u8, dtype::i32, dtype::i64);
}  // namespace reduce

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_REDUCE_FORMULA_HPP
// ---- end tensoracle/ops/reduce/detail/reduce_formula.hpp ----
// ---- begin tensoracle/ops/reduce/detail/reduce_op.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_REDUCE_OP_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_REDUCE_OP_HPP
// tensoracle: reduce_op<F>, the op spec of every Reduce* op from its formula F
// (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum, ReduceLogSumExp), and its attribute structs.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace reduce {
struct reduce_attr {
    std::optional<std::vector<std::int64_t>> axes;
    std::int64_t keepdims = 1;
};
struct reduce_sum_attr {
    std::optional<std::vector<std::int64_t>> axes;
    std::int64_t keepdims = 1;
    std::int64_t noop_with_empty_axes = 0;
};

/// Formulas computed in double for integer inputs. A named concept, not an
/// inline requires-expression: Clang 14 cannot mangle the latter in a template.
template <class F>
concept real_valued_reduction = requires { F::real_valued; };
}  // namespace reduce

/// A Reduce* op from its formula F (F::reduce<T, A> maps one group, as A, to A).
template <class F>
struct reduce_op : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = F::opset;
    static constexpr bool axes_input = requires { F::axes_input; };
    using attributes = std::conditional_t<axes_input, reduce::reduce_sum_attr, reduce::reduce_attr>;
    static constexpr auto inputs = [] {
        if constexpr (axes_input) {
            return std::array<spec::value_spec, 2>{
                {{"data", F::types}, {"axes", spec::types::int64, {1, 1}, "tensor(int64)", true}}};
        } else {
            return std::array<spec::value_spec, 1>{{{"data", F::types}}};
        }
    }();
    static constexpr std::array<spec::value_spec, 1> outputs{{{"reduced", F::types}}};

    static attributes parse(const spec::attribute_map& m) { return spec::parse_attributes<attributes>(m, op_type); }
    static bool noop(const attributes& a) {
        if constexpr (axes_input) {
            return a.noop_with_empty_axes != 0;
        } else {
            (void)a;
            return false;
        }
    }
    /// The axes as symbols: values of the `axes` input, else the attribute's elements.
    static std::vector<spec::expr> axes_symbols(const spec::context& c) {
        if (c.has_input(1)) return c.values(1);
        return c.attr_ints("axes");
    }

    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto a = parse(c.attributes());
        std::vector<spec::constraint> out{detail::is_flag(c.attr("keepdims"), "keepdims")};
        if constexpr (axes_input) {
            out.push_back(detail::is_flag(c.attr("noop_with_empty_axes"), "noop_with_empty_axes"));
            const bool both = c.has_input(1) && a.axes.has_value();
            out.push_back({spec::expr(both ? 0 : 1) == spec::expr(1),
                           "axes is given either as the attribute or as the input, not both"});
        }
        auto ax = detail::axes_constraints(axes_symbols(c), c.rank(0), "axes");
        out.insert(out.end(), ax.begin(), ax.end());
        return out;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto a = parse(c.attributes());
        const auto axes = axes_symbols(c);
        if (axes.empty() && noop(a)) return {c.shape(0)};
        return {detail::reduced_dims(c.shape(0), axes, a.keepdims != 0, op_type)};
    }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!F::types.contains(out)) return {};
        std::vector<std::size_t> ranks;
        for (std::size_t r = rank; r <= spec::rank_range{}.max; ++r) ranks.push_back(r);
        if constexpr (axes_input) {
            return {{{out}, ranks}, {{dtype::i64}, {1}}};
        } else {
            return {{{out}, ranks}};
        }
    }

    /// The reduction groups of an instance's data (for domain losses), in double.
    static std::vector<std::vector<double>> groups_of(std::span<const tensor> in, const attributes& a) {
        std::vector<std::int64_t> axes = a.axes.value_or(std::vector<std::int64_t>{});
        if (in.size() > 1 && in[1].element_dtype() == dtype::i64 && in[1].size() > 0) {
            const auto v = in[1].values<std::int64_t>();
            axes.assign(v.begin(), v.end());
        }
        const auto& s = in[0].shape();
        const bool identity = axes.empty() && noop(a);
        const auto mask = identity ? std::vector<bool>(s.size(), false)
                                   : axes.empty() ? std::vector<bool>(s.size(), true) : detail::axis_mask(axes, s.size(), op_type);
        const auto x = in[0].to<double>();
        return detail::reduce_groups<double>(std::span<const double>(x.data(), x.size()), s, mask);
    }

    /// A product's finiteness in the log domain: a group overflows when the sum of
    /// log |x| over it exceeds log(max finite) (a zero factor keeps it finite); the
    /// loss is that excess, its gradient 1 / x on the elements of overflowing groups.
    static spec::domain_rule product_rule(const attributes& a) {
        // Per group: its elements' positions in the input and the excess of sum(log |x|).
        auto excess = [a](std::span<const tensor> in) {
            std::vector<std::pair<std::vector<double>, double>> over;
            const dtype d = in[0].element_dtype();
            if (!info(d).is_floating) return over;  // integers wrap, always finite
            const double limit = std::log(detail::max_finite(d));
            auto positions = array<double>::from_shape(in[0].shape());
            for (std::size_t k = 0; k < positions.size(); ++k) positions.data()[k] = static_cast<double>(k);
            const std::vector<tensor> where{tensor(positions)};
            const auto values = groups_of(in, a);
            const auto at = groups_of(where, a);
            for (std::size_t g = 0; g < values.size(); ++g) {
                double s = 0.0;
                for (const double x : values[g]) s += std::log(std::fabs(x));  // log 0 = -inf: finite
                if (std::isnan(s) || s > limit) over.emplace_back(at[g], std::isnan(s) ? 1.0 : s - limit);
            }
            return over;
        };
        return {"every product is finite (sum of log |x| per group <= log of the dtype's largest value)",
                [excess](std::span<const tensor> in) {
                    double loss = 0.0;
                    for (const auto& g : excess(in)) loss += g.second;
                    return loss;
                },
                [excess](std::span<const tensor> in) {
                    std::vector<tensor> grads(in.size());
                    const auto x = in[0].to<double>();
                    auto d = array<double>::from_shape(x.shape());
                    d.fill(0.0);
                    for (const auto& g : excess(in)) {
                        for (const double p : g.first) {
                            const auto k = static_cast<std::size_t>(p);
                            d.data()[k] = 1.0 / x.data()[k];
                        }
                    }
                    grads[0] = tensor(d);
                    return grads;
                }};
    }

    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = parse(attrs);
        std::vector<spec::domain_rule> out;
        if constexpr (requires { F::multiplicative; }) {
            out.push_back(product_rule(a));
        } else {
            out.push_back({"every reduced value is finite (non-empty groups, no overflow; computed in double)",
                           [a](std::span<const tensor> in) {
                               const dtype d = in[0].element_dtype();
                               if (!info(d).is_floating) return 0.0;  // integers wrap, always finite
                               double loss = 0.0;
                               const double m = detail::max_finite(d);
                               for (const auto& g : groups_of(in, a)) {
                                   const double r = F::template reduce<double, double>(std::span<const double>(g));
                                   if (!std::isfinite(r)) {
                                       loss += 1.0;
                                   } else if (std::fabs(r) > m) {
                                       loss += std::fabs(r) / m - 1.0;
                                   }
                               }
                               return loss;
                           }});
        }
        if constexpr (requires { F::rules(); }) {
            for (auto& rule : F::rules()) {
                const auto f = rule.second;  // named: lambdas may not capture bindings (Clang 14)
                out.push_back({rule.first, [a, f](std::span<const tensor> in) {
                                   double loss = 0.0;
                                   for (const auto& g : groups_of(in, a)) {
                                       const double h = f(std::span<const double>(g), in[0].element_dtype());
                                       loss += std::isnan(h) ? 1.0 : std::max(h, 0.0);
                                   }
                                   return loss;
                               }});
            }
        }
        if constexpr (requires { F::every_element_at_limit; }) {
            out.back().elementwise_input = 0;
            out.back().elementwise_at_limit = F::every_element_at_limit;
        }
        if constexpr (requires { F::some_element; }) {
            // The last rule holds only if some element satisfies F::some_element (what the generator checks).
            out.back().elementwise_input = 0;
            out.back().elementwise = F::some_element;
            out.back().elementwise_any = true;
        }
        return out;
    }

    /// The typed kernel. `axes_in` is ReduceSum's `axes` input, when given.
    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {},
                            const std::optional<std::vector<std::int64_t>>& axes_in = std::nullopt) {
        static_assert(spec::dtype_accepted<reduce_op, T>::value);
        array<T> y;
        const bool same = reduce_into<T>(std::span<const T>(x.data(), x.size()),
                                         shape_type(x.shape().begin(), x.shape().end()), a, axes_in,
                                         [&](const shape_type& out) {
                                             y = array<T>::from_shape(out);
                                             return y.data();
                                         });
        if (same) return x;  // noop_with_empty_axes: the input, unchanged
        return y;
    }

    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<F::types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            // Straight from the input's buffer into the output's: no typed copies.
            tensor y;
            const bool same = reduce_into<T>(c.input(0).values<T>(), c.input(0).shape(), parse(c.attributes()),
                                             axes_input_of(c), [&](const shape_type& out) {
                                                 y = tensor::for_overwrite(dtype_of<T>, out);
                                                 return y.template values<T>().data();
                                             });
            return same ? c.input(0) : y;
        }));
    }
    /// Integer data has an integer output: nothing to differentiate, run() gives it.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!spec::types::floating.contains(c.input_dtype(0))) return {array<S>{}};
        return {run_typed<S>(c, x[0])};
    }
    /// The VJP for reductions whose partials F states (F::partials): each
    /// group's output cotangent times d reduced / d element, walked over the
    /// same groups as the kernel; the identity (noop_with_empty_axes) passes w on.
    template <class V>
        requires requires(std::span<const V> v, std::span<V> d) { F::partials(v, d); }
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto a = parse(c.attributes());
        const shape_type s(x[0].shape().begin(), x[0].shape().end());
        const auto axes_in = axes_input_of(c);
        const std::vector<std::int64_t> axes = axes_in ? *axes_in : a.axes.value_or(std::vector<std::int64_t>{});
        const bool identity = axes.empty() && noop(a);
        const auto mask = identity ? std::vector<bool>(s.size(), false)
                                   : axes.empty() ? std::vector<bool>(s.size(), true) : detail::axis_mask(axes, s.size(), op_type);
        std::vector<array<V>> g(x.size());
        g[0] = array<V>::from_shape(x[0].shape());
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, identity ? s : detail::reduced_shape(s, mask, a.keepdims != 0));
        if (wy == nullptr) return g;
        if (identity) {
            std::copy(wy->begin(), wy->end(), g[0].begin());
            return g;
        }
        // Each element's position rides along through the same grouping.
        std::vector<V> position(x[0].size());
        for (std::size_t k = 0; k < position.size(); ++k) position[k] = static_cast<V>(k);
        const auto values = detail::reduce_groups<V>(std::span<const V>(x[0].data(), x[0].size()), s, mask);
        const auto where = detail::reduce_groups<V>(std::span<const V>(position), s, mask);
        std::vector<V> d;
        for (std::size_t o = 0; o < values.size(); ++o) {
            d.resize(values[o].size());
            F::partials(std::span<const V>(values[o]), std::span<V>(d));
            for (std::size_t i = 0; i < d.size(); ++i) g[0].data()[static_cast<std::size_t>(where[o][i])] += d[i] * wy->data()[o];
        }
        return g;
    }
    static spec::hints hints() {
        spec::hints h;
        h.flag("keepdims");
        // ReduceSum-13 takes axes only as an input: the attribute (which the spec
        // still reads, for older models) is not valid ONNX there.
        if constexpr (axes_input) h.flag("noop_with_empty_axes", 0.3).optional_input(1, 0.7).omit("axes");
        if constexpr (requires { F::range; }) h.range(0, F::range[0], F::range[1]);
        if constexpr (requires { F::group_facts(spec::value_facts{}, 1.0); }) {
            h.facts_with_output_shapes(group_facts_of);
        } else if constexpr (requires { F::within_input; }) {
            h.facts(spec::facts::selection_of(0));
        }
        return h;
    }
    /// Each output element reduces a group of |input| / |output| elements (the
    /// generator passes the output shapes after the inputs').
    static std::vector<spec::value_facts> group_facts_of(std::span<const spec::value_facts> in, const spec::attribute_map&,
                                                         std::span<const shape_type> shapes) {
        if (in.empty() || shapes.size() <= in.size()) return {spec::value_facts{}};
        std::size_t n_in = 1, n_out = 1;
        for (const auto d : shapes[0]) n_in *= d;
        for (const auto d : shapes[in.size()]) n_out *= d;
        if (n_out == 0 || n_in == 0 || n_in % n_out != 0) return {spec::value_facts{}};
        return {F::group_facts(in[0], static_cast<double>(n_in / n_out))};
    }

private:
    /// compute<T> on the context's attributes and `axes` input; `data` is input 0 as T.
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& data) {
        return compute<T>(data, parse(c.attributes()), axes_input_of(c));
    }
    static std::optional<std::vector<std::int64_t>> axes_input_of(const spec::context& c) {
        if (!c.has_input(1)) return std::nullopt;
        const auto v = c.input(1).values<std::int64_t>();
        return std::vector<std::int64_t>(v.begin(), v.end());
    }
    /// Reduces x (shape s) into the buffer `make_output(out_shape)` returns;
    /// true, with nothing written, when the op is the identity
    /// (noop_with_empty_axes and no axes).
    template <class T, class MakeOutput>
    static bool reduce_into(std::span<const T> x, const shape_type& s, const attributes& a,
                            const std::optional<std::vector<std::int64_t>>& axes_in, MakeOutput&& make_output) {
        if (axes_in && a.axes) throw error(op_type, "axes is given both as the attribute and as the input");
        if (a.keepdims != 0 && a.keepdims != 1) {
            throw error(op_type, "keepdims must be 0 or 1, got " + std::to_string(a.keepdims));
        }
        const std::vector<std::int64_t> axes = axes_in ? *axes_in : a.axes.value_or(std::vector<std::int64_t>{});
        if (axes.empty() && noop(a)) return true;
        const auto mask = axes.empty() ? std::vector<bool>(s.size(), true) : detail::axis_mask(axes, s.size(), op_type);
        // Real-valued reductions (mean, L2, logs) of integers compute in double and
        // truncate once, as ONNX's reference does with numpy's astype.
        using A = std::conditional_t<std::is_integral_v<T> && reduce::real_valued_reduction<F>, double,
                                     detail::reduce_acc_t<T>>;
        T* y = make_output(detail::reduced_shape(s, mask, a.keepdims != 0));
        detail::for_each_reduce_group<A>(x, s, mask, [&](std::size_t o, std::span<const A> g) {
            y[o] = value_cast<T>(F::template reduce<T, A>(g));
        });
        return false;
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::reduce_attr, axes, keepdims);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::reduce_sum_attr, axes, keepdims, noop_with_empty_axes);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_REDUCE_OP_HPP
// ---- end tensoracle/ops/reduce/detail/reduce_op.hpp ----

namespace tensoracle::ops {

namespace reduce {
// reduced = sum(x)
struct sum_fn {
    static constexpr std::string_view op_type = "ReduceSum";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    static constexpr bool axes_input = true;
    static spec::value_facts group_facts(const spec::value_facts& x, double n) { return sum_facts(x, n); }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s = detail::acc_add(s, x);
        return s;
    }
    /// d reduced / d v[i], for the op's own VJP (reduce_op::vjp).
    template <class V>
    static void partials(std::span<const V>, std::span<V> d) {
        std::fill(d.begin(), d.end(), V(1));
    }
};
}  // namespace reduce

using ReduceSum = reduce_op<reduce::sum_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_SUM_HPP
// ---- end tensoracle/ops/reduce/reduce_sum.hpp ----
// ---- begin tensoracle/ops/reduce/reduce_mean.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_MEAN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_MEAN_HPP
// tensoracle: ReduceMean (the mean over the reduced axes).

#include <algorithm>
#include <span>


namespace tensoracle::ops {

namespace reduce {
// reduced = sum(x) / count (empty: 0 / 0 = NaN)
struct mean_fn {
    static constexpr std::string_view op_type = "ReduceMean";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    /// Inside the input's range (not integral: a mean of integers need not be one).
    static spec::value_facts group_facts(const spec::value_facts& x, double) { return affine_facts(x, 1.0, 0.0); }
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s += x;
        return s / static_cast<A>(v.size());
    }
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        std::fill(d.begin(), d.end(), V(1) / static_cast<V>(v.size()));
    }
};
}  // namespace reduce

using ReduceMean = reduce_op<reduce::mean_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_MEAN_HPP
// ---- end tensoracle/ops/reduce/reduce_mean.hpp ----
// ---- begin tensoracle/ops/reduce/reduce_max.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_MAX_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_MAX_HPP
// tensoracle: ReduceMax (the maximum over the reduced axes, NaN propagating).

#include <limits>
#include <span>
#include <type_traits>


namespace tensoracle::ops {

namespace reduce {
// reduced = max(x) (empty: -inf / lowest; NaN propagates)
struct max_fn {
    static constexpr std::string_view op_type = "ReduceMax";
    static constexpr int opset = 13;
    static constexpr dtype_set types = minmax_types;
    static constexpr bool within_input = true;
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        // A tie keeps the earlier element: the result carries its derivative.
        const auto better = [](const A& x, const A& m) { return x > m; };
        if constexpr (std::is_integral_v<A>) {
            return select_reduce(v, static_cast<A>(std::numeric_limits<T>::lowest()), better);
        } else {
            return select_reduce(v, A(-std::numeric_limits<A>::infinity()), better);
        }
    }
    /// 1 at the element reduce() returns (the first NaN, else the first maximum), 0 elsewhere.
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        select_partials(v, d, -std::numeric_limits<V>::infinity(), [](const V& x, const V& m) { return x > m; });
    }
};
}  // namespace reduce

using ReduceMax = reduce_op<reduce::max_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_MAX_HPP
// ---- end tensoracle/ops/reduce/reduce_max.hpp ----
// ---- begin tensoracle/ops/reduce/reduce_min.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_MIN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_MIN_HPP
// tensoracle: ReduceMin (the minimum over the reduced axes, NaN propagating).

#include <limits>
#include <span>
#include <type_traits>


namespace tensoracle::ops {

namespace reduce {
// reduced = min(x) (empty: +inf / max; NaN propagates)
struct min_fn {
    static constexpr std::string_view op_type = "ReduceMin";
    static constexpr int opset = 13;
    static constexpr dtype_set types = minmax_types;
    static constexpr bool within_input = true;
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        const auto better = [](const A& x, const A& m) { return x < m; };
        if constexpr (std::is_integral_v<A>) {
            return select_reduce(v, static_cast<A>(std::numeric_limits<T>::max()), better);
        } else {
            return select_reduce(v, A(std::numeric_limits<A>::infinity()), better);
        }
    }
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        select_partials(v, d, std::numeric_limits<V>::infinity(), [](const V& x, const V& m) { return x < m; });
    }
};
}  // namespace reduce

using ReduceMin = reduce_op<reduce::min_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_MIN_HPP
// ---- end tensoracle/ops/reduce/reduce_min.hpp ----
// ---- begin tensoracle/ops/reduce/reduce_prod.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_PROD_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_PROD_HPP
// tensoracle: ReduceProd (the product over the reduced axes).

#include <array>
#include <cstddef>
#include <span>


namespace tensoracle::ops {

namespace reduce {
// reduced = prod(x) (empty: 1)
struct prod_fn {
    static constexpr std::string_view op_type = "ReduceProd";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A p{1};
        for (const A& x : v) p = detail::acc_mul(p, x);
        return p;
    }
    static constexpr std::array<double, 2> range{-1.5, 1.5};
    static constexpr std::size_t max_dim = 3;  // groups of at most 27: |prod| <= 1.5^27 < f16 max
    /// Its finiteness rule measures sum(log |x|) (reduce_op::domain): a product of thousands of
    /// factors overflows even double, and a loss of "1 per infinite group" has no slope to follow.
    static constexpr bool multiplicative = true;
};
}  // namespace reduce

using ReduceProd = reduce_op<reduce::prod_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_PROD_HPP
// ---- end tensoracle/ops/reduce/reduce_prod.hpp ----
// ---- begin tensoracle/ops/reduce/reduce_l1.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_L1_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_L1_HPP
// tensoracle: ReduceL1 (the sum of |x| over the reduced axes).

#include <cmath>
#include <span>


namespace tensoracle::ops {

namespace reduce {
// reduced = sum(|x|)
struct l1_fn {
    static constexpr std::string_view op_type = "ReduceL1";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    static spec::value_facts group_facts(const spec::value_facts& x, double n) {
        return sum_facts(spec::facts::image(x, [](double v) { return std::fabs(v); }), n);
    }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s = detail::acc_add(s, detail::acc_abs(x));
        return s;
    }
};
}  // namespace reduce

using ReduceL1 = reduce_op<reduce::l1_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_L1_HPP
// ---- end tensoracle/ops/reduce/reduce_l1.hpp ----
// ---- begin tensoracle/ops/reduce/reduce_l2.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_L2_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_L2_HPP
// tensoracle: ReduceL2 (the square root of the sum of x^2 over the reduced axes).

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>


namespace tensoracle::ops {

namespace reduce {
// reduced = sqrt(sum(x^2))
struct l2_fn {
    static constexpr std::string_view op_type = "ReduceL2";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    static spec::value_facts group_facts(const spec::value_facts& x, double n) {
        return spec::facts::image(sum_facts(square_facts(x), n), [](double v) { return std::sqrt(v); });
    }
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        // An empty group is the constant 0: sqrt's derivative at 0 (1 / 0) would
        // turn a zero tangent into NaN although nothing depends on an input.
        if (v.empty()) return A{0};
        A s{0};
        for (const A& x : v) s += x * x;
        return math::sqrt(s);
    }
    static std::vector<std::pair<std::string, double (*)(std::span<const double>, dtype)>> rules() {
        // The sum of squares is formed before the root: it must not overflow the
        // accumulator, and its root must fit the element type.
        return {{"sum(X^2) <= min(max finite of the accumulator, max finite^2)", [](std::span<const double> g, dtype d) {
                     double s = 0;
                     for (const double x : g) s += x * x;
                     const double acc_max = d == dtype::f64 ? detail::max_finite(dtype::f64) : detail::max_finite(dtype::f32);
                     const double m = detail::max_finite(d);
                     return s - std::min(acc_max, m * m);
                 }}};
    }
};
}  // namespace reduce

using ReduceL2 = reduce_op<reduce::l2_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_L2_HPP
// ---- end tensoracle/ops/reduce/reduce_l2.hpp ----
// ---- begin tensoracle/ops/reduce/reduce_sum_square.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_SUM_SQUARE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_SUM_SQUARE_HPP
// tensoracle: ReduceSumSquare (the sum of x^2 over the reduced axes).

#include <cstddef>
#include <span>


namespace tensoracle::ops {

namespace reduce {
// reduced = sum(x^2)
struct sum_square_fn {
    static constexpr std::string_view op_type = "ReduceSumSquare";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    static spec::value_facts group_facts(const spec::value_facts& x, double n) { return sum_facts(square_facts(x), n); }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s = detail::acc_add(s, detail::acc_mul(x, x));
        return s;
    }
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        for (std::size_t i = 0; i < v.size(); ++i) d[i] = v[i] + v[i];
    }
};
}  // namespace reduce

using ReduceSumSquare = reduce_op<reduce::sum_square_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_SUM_SQUARE_HPP
// ---- end tensoracle/ops/reduce/reduce_sum_square.hpp ----
// ---- begin tensoracle/ops/reduce/reduce_log_sum.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_LOG_SUM_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_LOG_SUM_HPP
// tensoracle: ReduceLogSum (the log of the sum over the reduced axes).

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>


namespace tensoracle::ops {

namespace reduce {
// reduced = log(sum(x)) (empty: -inf)
struct log_sum_fn {
    static constexpr std::string_view op_type = "ReduceLogSum";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    static spec::value_facts group_facts(const spec::value_facts& x, double n) {
        return spec::facts::image(sum_facts(x, n), [](double v) { return std::log(v); });
    }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s += x;
        return math::log(s);
    }
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        V s{0};
        for (const V& x : v) s += x;
        std::fill(d.begin(), d.end(), V(1) / s);
    }
    static std::vector<std::pair<std::string, double (*)(std::span<const double>, dtype)>> rules() {
        return {{"sum(X) > 0 over each reduced group", [](std::span<const double> g, dtype) {
                     double s = 0;
                     for (const double x : g) s += x;
                     return 1e-10 - s;
                 }}};
    }
    /// A group's sum is positive only if some element is.
    static constexpr double (*some_element)(double) = [](double x) { return 1e-10 - x; };
    static constexpr std::array<double, 2> range{0.1, 4.0};
};
}  // namespace reduce

using ReduceLogSum = reduce_op<reduce::log_sum_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_LOG_SUM_HPP
// ---- end tensoracle/ops/reduce/reduce_log_sum.hpp ----
// ---- begin tensoracle/ops/reduce/reduce_log_sum_exp.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_LOG_SUM_EXP_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_LOG_SUM_EXP_HPP
// tensoracle: ReduceLogSumExp (log(sum(exp(x))) over the reduced axes, shifted by the maximum).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

// ---- begin tensoracle/ops/reduce/detail/constant_of.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_CONSTANT_OF_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_CONSTANT_OF_HPP
// tensoracle: reduce::constant_of, the constant max shift of ReduceLogSumExp,
// Softmax and LogSoftmax.


namespace tensoracle::ops {

namespace reduce {
/// The value of a scalar as a constant of its own type (no derivative parts).
/// The max shifts of log-sum-exp and softmax use it: any constant shift c gives
/// the same function (exp(a - c) = exp(a) / exp(c) cancels), so its derivative
/// is exactly the unshifted one, to every order; a shift that carried the
/// derivative of the maximum would cancel only up to rounding.
template <class A>
A constant_of(const A& m) {
    if constexpr (ad_scalar<A>) {
        return A(primal(m));
    } else {
        return m;
    }
}
}  // namespace reduce

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_CONSTANT_OF_HPP
// ---- end tensoracle/ops/reduce/detail/constant_of.hpp ----

namespace tensoracle::ops {

namespace reduce {
/// Stable log(sum(exp(v))): with m = max(v), log(sum(exp(v))) = m + log(sum(exp(v - m)))
/// exactly in real arithmetic (exp(a - m) = exp(a) / exp(m)), and exp(v - m) <= 1
/// cannot overflow. Empty or all -inf: -inf (log 0); a NaN or +inf: NaN or +inf.
template <class A>
A log_sum_exp(std::span<const A> v) {
    A m = -std::numeric_limits<A>::infinity();
    for (const A& x : v) {
        if (math::isnan(x)) return x;
        m = std::max(m, x);
    }
    if (math::isinf(m)) return m;  // -inf: every term is exp(-inf) = 0; +inf: the sum is +inf
    m = constant_of(m);
    A s = 0;
    for (const A& x : v) s += math::exp(x - m);
    return m + math::log(s);
}

// reduced = log(sum(exp(x))), computed as max + log(sum(exp(x - max))) (value-preserving)
struct log_sum_exp_fn {
    static constexpr std::string_view op_type = "ReduceLogSumExp";
    static constexpr int opset = 13;
    static constexpr dtype_set types = sum_types;
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    /// max(x) <= LSE <= max(x) + log n: every group of n values in [lo, hi] lies in [lo + log n, hi + log n].
    static spec::value_facts group_facts(const spec::value_facts& x, double n) { return affine_facts(x, 1.0, std::log(n)); }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        return log_sum_exp(v);
    }
    /// softmax(v): exp(v - max) / sum(exp(v - max)).
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        V m = -std::numeric_limits<V>::infinity(), sum{0};
        for (const V& x : v) m = std::max(m, x);
        for (std::size_t i = 0; i < v.size(); ++i) sum += (d[i] = std::exp(v[i] - m));
        for (V& x : d) x /= sum;
    }
    static std::vector<std::pair<std::string, double (*)(std::span<const double>, dtype)>> rules() {
        // Kept inside the range where the naive formula log(sum(exp(X))) is finite
        // too, so implementations without the max shift are comparable.
        return {{"sum(exp(X)) <= max finite", [](std::span<const double> g, dtype d) {
                     return log_sum_exp(g) - std::log(detail::max_finite(d));
                 }}};
    }
    /// What the rule needs of every element (LSE >= max(X)): X <= log(max finite),
    /// which the generator checks against what it knows of X (an integer Size of
    /// 4,680 elements cannot go through ReduceLogSumExp).
    static constexpr double (*every_element_at_limit)(double, double) = [](double x, double m) { return x - std::log(m); };
};
}  // namespace reduce

using ReduceLogSumExp = reduce_op<reduce::log_sum_exp_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_REDUCE_LOG_SUM_EXP_HPP
// ---- end tensoracle/ops/reduce/reduce_log_sum_exp.hpp ----
// ---- begin tensoracle/ops/reduce/arg_max.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_ARG_MAX_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_ARG_MAX_HPP
// tensoracle: ArgMax (the int64 index of the maximum along an axis).

// ---- begin tensoracle/ops/reduce/detail/arg_reduce.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_ARG_REDUCE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_ARG_REDUCE_HPP
// tensoracle: arg_reduce<Max>, the op spec of ArgMax (Max = true) and ArgMin (Max = false).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

// ---- begin tensoracle/ops/reduce/detail/replaces.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_REPLACES_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_REPLACES_HPP
// tensoracle: reduce::replaces, the NaN-aware "does v beat the best so far" test of
// ArgMax, ArgMin (arg_reduce) and Hardmax.


namespace tensoracle::ops {

namespace reduce {
using tensoracle::is_nan;

/// For ArgMax/ArgMin/Hardmax: does candidate v beat (or, with `ties`, tie)
/// the current best b? NaN is the extreme value either way.
template <bool Max, class T>
bool replaces(const T& v, const T& b, bool ties) {
    if (is_nan(b)) return ties && is_nan(v);
    if (is_nan(v)) return true;
    if constexpr (Max) {
        return v > b || (ties && v == b);
    } else {
        return v < b || (ties && v == b);
    }
}
}  // namespace reduce

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_REPLACES_HPP
// ---- end tensoracle/ops/reduce/detail/replaces.hpp ----

namespace tensoracle::ops {

namespace reduce {
struct arg_attr {
    std::int64_t axis = 0;
    std::int64_t keepdims = 1;
    std::int64_t select_last_index = 0;
};
}  // namespace reduce

/// ArgMax / ArgMin (13): the int64 index of the max / min along `axis`; the
/// first occurrence, or the last with select_last_index=1.
// Not differentiable: the only output is int64 indices.
template <bool Max>
struct arg_reduce {
    static constexpr std::string_view op_type = Max ? "ArgMax" : "ArgMin";
    static constexpr int opset = 13;
    using attributes = reduce::arg_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::numeric}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"reduced", spec::types::int64, {}, "tensor(int64)"}}};

    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto axis = c.attr("axis");
        std::vector<spec::constraint> out{detail::axis_in_range(axis, r, "axis"),
                                          detail::is_flag(c.attr("keepdims"), "keepdims"),
                                          detail::is_flag(c.attr("select_last_index"), "select_last_index")};
        for (std::size_t k = 0; k < r; ++k) {
            out.push_back({!detail::axis_is(axis, k, r) || c.dim(0, k) >= spec::expr(1),
                           "the reduced axis is not empty (axis " + std::to_string(k) + ")"});
        }
        return out;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const bool keep = spec::parse_attributes<attributes>(c.attributes(), op_type).keepdims != 0;
        return {detail::reduced_dims(c.shape(0), {c.attr("axis")}, keep, op_type)};
    }
    static std::vector<dtype> output_dtypes(const spec::context&) { return {dtype::i64}; }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (out != dtype::i64) return {};
        std::vector<std::size_t> ranks;
        if (rank >= 1) ranks.push_back(rank);  // keepdims=1
        ranks.push_back(rank + 1);             // keepdims=0
        return {{spec::types::numeric.members(), ranks}};
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<std::int64_t> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<arg_reduce, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        const std::size_t axis = spec::normalize_axis(a.axis, s.size(), op_type);
        if (a.keepdims != 0 && a.keepdims != 1) throw error(op_type, "keepdims must be 0 or 1");
        if (a.select_last_index != 0 && a.select_last_index != 1) throw error(op_type, "select_last_index must be 0 or 1");
        const auto sp = detail::split_at(s, axis);
        if (sp.n == 0) throw shape_error(op_type, "axis " + std::to_string(a.axis) + " is empty: there is no index to return");
        shape_type out_shape;
        for (std::size_t k = 0; k < s.size(); ++k) {
            if (k != axis) out_shape.push_back(s[k]);
            else if (a.keepdims != 0) out_shape.push_back(1);
        }
        auto y = array<std::int64_t>::from_shape(out_shape);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                std::size_t best = 0;
                for (std::size_t i = 1; i < sp.n; ++i) {
                    if (reduce::replaces<Max>(x.data()[sp.at(o, i, j)], x.data()[sp.at(o, best, j)], a.select_last_index != 0)) {
                        best = i;
                    }
                }
                y.data()[o * sp.inner + j] = static_cast<std::int64_t>(best);
            }
        }
        return y;
    }
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), a));
        }));
    }
    static spec::hints hints() {
        // Small integer ranges make ties likely, which exercises select_last_index.
        // Facts: indices in [0, n - 1] along the axis; all 0 when it has one element.
        return spec::hints{}.flag("keepdims").flag("select_last_index").range(0, -3, 3).facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                if (shapes.empty() || shapes[0].empty()) return std::vector<spec::value_facts>{spec::value_facts::constant(0.0)};
                const auto a = spec::parse_attributes<attributes>(attrs, op_type);
                const std::size_t axis = spec::normalize_axis(a.axis, shapes[0].size(), op_type);
                const auto n = static_cast<double>(shapes[0][axis]);
                return std::vector<spec::value_facts>{n <= 1.0 ? spec::value_facts::constant(0.0)
                                                               : spec::value_facts::within(0.0, n - 1.0)};
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::arg_attr, axis, keepdims, select_last_index);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_ARG_REDUCE_HPP
// ---- end tensoracle/ops/reduce/detail/arg_reduce.hpp ----

namespace tensoracle::ops {

using ArgMax = arg_reduce<true>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_ARG_MAX_HPP
// ---- end tensoracle/ops/reduce/arg_max.hpp ----
// ---- begin tensoracle/ops/reduce/arg_min.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_ARG_MIN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_ARG_MIN_HPP
// tensoracle: ArgMin (the int64 index of the minimum along an axis).


namespace tensoracle::ops {

using ArgMin = arg_reduce<false>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_ARG_MIN_HPP
// ---- end tensoracle/ops/reduce/arg_min.hpp ----
// ---- begin tensoracle/ops/reduce/softmax.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_SOFTMAX_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_SOFTMAX_HPP
// tensoracle: Softmax (exp(x) / sum(exp(x)) along an axis, shifted by the row maximum).

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string_view>
#include <vector>

// ---- begin tensoracle/ops/reduce/detail/axis_normalizer.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_AXIS_NORMALIZER_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_AXIS_NORMALIZER_HPP
// tensoracle: axis_normalizer<F>, the op spec of Softmax, LogSoftmax and Hardmax from
// their row formula F, and their attribute struct.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace reduce {
struct softmax_attr {
    std::int64_t axis = -1;
};
}  // namespace reduce

/// Softmax / LogSoftmax / Hardmax (13): F applied to each 1-D slice along `axis`.
// Hardmax's derivative is 0 wherever its output is defined (one-hot constants).
template <class F>
struct axis_normalizer : spec::like_input<0>, detail::one_input_kernel<axis_normalizer<F>> {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = 13;
    using attributes = reduce::softmax_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::floating}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::floating}}};

    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return {detail::axis_in_range(c.attr("axis"), c.rank(0), "axis")};
    }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}};
    }
    // Finite inputs give finite outputs (the kernels shift by the maximum).
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<axis_normalizer, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        const auto sp = detail::split_at(s, spec::normalize_axis(a.axis, s.size(), op_type));
        using A = detail::reduce_acc_t<T>;
        auto y = array<T>::from_shape(x.shape());
        std::vector<A> row(sp.n);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                for (std::size_t i = 0; i < sp.n; ++i) row[i] = value_cast<A>(x.data()[sp.at(o, i, j)]);
                F::apply(row);
                for (std::size_t i = 0; i < sp.n; ++i) y.data()[sp.at(o, i, j)] = value_cast<T>(row[i]);
            }
        }
        return y;
    }
    /// The VJP, one slice along `axis` at a time (F::vjp; ad/op_derivatives.hpp).
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const shape_type s(x[0].shape().begin(), x[0].shape().end());
        const auto sp = detail::split_at(s, spec::normalize_axis(a.axis, s.size(), op_type));
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape())};
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, s);
        if (wy == nullptr) return g;
        std::vector<V> row(sp.n), wrow(sp.n);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                for (std::size_t i = 0; i < sp.n; ++i) {
                    row[i] = x[0].data()[sp.at(o, i, j)];
                    wrow[i] = wy->data()[sp.at(o, i, j)];
                }
                F::vjp(row, wrow);
                for (std::size_t i = 0; i < sp.n; ++i) g[0].data()[sp.at(o, i, j)] = wrow[i];
            }
        }
        return g;
    }
    static spec::hints hints() {
        return spec::hints{}.range(0, -6, 6).facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes)
                -> std::vector<spec::value_facts> {
                if (shapes.empty() || shapes[0].empty()) return {spec::value_facts{}};
                const auto a = spec::parse_attributes<attributes>(attrs, op_type);
                return {F::facts(shapes[0][spec::normalize_axis(a.axis, shapes[0].size(), op_type)])};
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::softmax_attr, axis);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_DETAIL_AXIS_NORMALIZER_HPP
// ---- end tensoracle/ops/reduce/detail/axis_normalizer.hpp ----

namespace tensoracle::ops {

namespace reduce {
// Softmax and LogSoftmax subtract the row maximum m first: exp(x - m) / sum(exp(x - m))
// equals exp(x) / sum(exp(x)) exactly in real arithmetic (the factor exp(-m) cancels),
// and x - m - log(sum(exp(x - m))) equals log(exp(x) / sum(exp(x))). With the shift every
// exp is <= 1 and the sum is >= 1, so nothing overflows or divides by zero. The shift is
// a constant (constant_of) so that AD scalars get the unshifted derivative exactly.
struct softmax_fn {
    static constexpr std::string_view op_type = "Softmax";
    /// The shift m: the row maximum, as a constant.
    template <class A>
    static A shift(const std::vector<A>& v) {
        A m = -std::numeric_limits<A>::infinity();
        for (const A& x : v) m = std::max(m, x);
        return constant_of(m);
    }
    template <class A>
    static void apply(std::vector<A>& v) {
        const A m = shift(v);
        A s = 0;
        for (A& x : v) s += (x = math::exp(x - m));
        for (A& x : v) x /= s;
    }
    /// Row VJP: with y = softmax(x), x's cotangent is y * (w - <w, y>); x is scratch.
    template <class V>
    static void vjp(std::vector<V>& x, std::vector<V>& w) {
        apply(x);
        V dot = 0;
        for (std::size_t i = 0; i < x.size(); ++i) dot += w[i] * x[i];
        for (std::size_t i = 0; i < x.size(); ++i) w[i] = x[i] * (w[i] - dot);
    }
    /// Rows of length n: (0, 1] (0 on underflow), one element <= 1/n and one >= 1/n
    /// (1% slack for rounding); all ones when n = 1.
    static spec::value_facts facts(std::size_t n) {
        if (n == 1) return spec::value_facts::constant(1.0);
        auto f = spec::value_facts::within(0.0, 1.0);
        f.some_at_most = 1.01 / static_cast<double>(n);
        f.some_at_least = 0.99 / static_cast<double>(n);
        return f;
    }
};
}  // namespace reduce

using Softmax = axis_normalizer<reduce::softmax_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_SOFTMAX_HPP
// ---- end tensoracle/ops/reduce/softmax.hpp ----
// ---- begin tensoracle/ops/reduce/log_softmax.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_LOG_SOFTMAX_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_LOG_SOFTMAX_HPP
// tensoracle: LogSoftmax (log(softmax(x)) along an axis, shifted by the row maximum as
// softmax.hpp explains).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace reduce {
struct log_softmax_fn {
    static constexpr std::string_view op_type = "LogSoftmax";
    template <class A>
    static void apply(std::vector<A>& v) {
        const A m = softmax_fn::shift(v);
        A s = 0;
        for (const A& x : v) s += math::exp(x - m);
        const A ls = math::log(s);
        for (A& x : v) x = (x - m) - ls;
    }
    /// Row VJP: x's cotangent is w - softmax(x) * sum(w); x is scratch.
    template <class V>
    static void vjp(std::vector<V>& x, std::vector<V>& w) {
        softmax_fn::apply(x);
        V sum = 0;
        for (const V& wi : w) sum += wi;
        for (std::size_t i = 0; i < x.size(); ++i) w[i] -= x[i] * sum;
    }
    /// (-inf, 0], one element <= -log n (1% slack for rounding); all zeros when n = 1.
    static spec::value_facts facts(std::size_t n) {
        if (n == 1) return spec::value_facts::constant(0.0);
        auto f = spec::value_facts::within(-std::numeric_limits<double>::infinity(), 0.0);
        f.some_at_most = -0.99 * std::log(static_cast<double>(n));
        return f;
    }
};
}  // namespace reduce

using LogSoftmax = axis_normalizer<reduce::log_softmax_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_LOG_SOFTMAX_HPP
// ---- end tensoracle/ops/reduce/log_softmax.hpp ----
// ---- begin tensoracle/ops/reduce/hardmax.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_HARDMAX_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_HARDMAX_HPP
// tensoracle: Hardmax (1 at the first maximum along an axis, 0 elsewhere).

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace reduce {
// 1 at the first maximum of the row (numpy argmax: the first NaN, if any), 0 elsewhere.
struct hardmax_fn {
    static constexpr std::string_view op_type = "Hardmax";
    template <class A>
    static void apply(std::vector<A>& v) {
        std::size_t best = 0;
        for (std::size_t i = 1; i < v.size(); ++i) {
            if (replaces<true>(v[i], v[best], false)) best = i;
        }
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = i == best ? A(1) : A(0);
    }
    /// Row VJP: a one-hot output is constant wherever it is defined.
    template <class V>
    static void vjp(std::vector<V>&, std::vector<V>& w) {
        std::fill(w.begin(), w.end(), V(0));
    }
    /// A one in every row, zeros beside it when n > 1.
    static spec::value_facts facts(std::size_t n) {
        return n == 1 ? spec::value_facts::constant(1.0) : spec::value_facts::within(0.0, 1.0, {0.0, 1.0});
    }
};
}  // namespace reduce

using Hardmax = axis_normalizer<reduce::hardmax_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_HARDMAX_HPP
// ---- end tensoracle/ops/reduce/hardmax.hpp ----
// ---- begin tensoracle/ops/reduce/layer_normalization.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_LAYER_NORMALIZATION_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_LAYER_NORMALIZATION_HPP
// tensoracle: LayerNormalization (per row over X.shape[axis:]: (x - mean) / stddev * Scale + B).
//
// Semantics chosen where ONNX leaves it open (the family-wide notes: ops/reduce.hpp):
// - Precision: LayerNormalization's stash_type selects the dtype of
//   Mean/InvStdDev (1: float, 16: bfloat16); the computation itself uses the
//   family's accumulator (float for f16/bf16/f32, double for f64 inputs), i.e.
//   at least the stash precision.
// - LayerNormalization: Scale and B broadcast unidirectionally to the
//   normalized shape X.shape[axis:] (right-aligned, dims equal or 1).

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace reduce {
struct layer_norm_attr {
    std::int64_t axis = -1;
    float epsilon = 1e-5f;
    std::int64_t stash_type = 1;
};
}  // namespace reduce

/// LayerNormalization (17): per row (the elements sharing X.shape[:axis]),
/// Mean = mean(x), InvStdDev = 1 / sqrt(mean((x - Mean)^2) + epsilon),
/// Y = (x - Mean) * InvStdDev * Scale + B. Outputs: Y, Mean, InvStdDev, the
/// last two of shape X.shape[:axis] + [1] * (rank - axis).
struct LayerNormalization {
    static constexpr std::string_view op_type = "LayerNormalization";
    static constexpr int opset = 17;
    using attributes = reduce::layer_norm_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"X", spec::types::floating}, {"Scale", spec::types::floating}, {"B", spec::types::floating, {}, "T", true}}};
    static constexpr spec::dtype_set stash_types = spec::dtypes_of(dtype::f32, dtype::bf16);
    static constexpr std::array<spec::value_spec, 3> outputs{{{"Y", spec::types::floating},
                                                              {"Mean", stash_types, {}, "U", true},
                                                              {"InvStdDev", stash_types, {}, "U", true}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto axis = c.attr("axis");
        const auto stash = c.attr("stash_type");
        std::vector<spec::constraint> out{detail::axis_in_range(axis, r, "axis"),
                                          {stash == spec::expr(1) || stash == spec::expr(16),
                                           "stash_type is 1 (float) or 16 (bfloat16)"}};
        const auto an = detail::normalized_axis(axis, r);
        for (const std::size_t i : {std::size_t{1}, std::size_t{2}}) {
            if (!c.has_input(i)) continue;
            const std::string name = i == 1 ? "Scale" : "B";
            const std::size_t ri = c.rank(i);
            out.push_back({spec::expr(ri) <= spec::expr(r) - an, name + " has at most the rank of X.shape[axis:]"});
            for (std::size_t k = 0; k < ri && ri <= r; ++k) {
                const auto dk = c.dim(i, k), xk = c.dim(0, r - ri + k);
                out.push_back({dk == xk || dk == spec::expr(1),
                               name + " broadcasts to X.shape[axis:] (X axis " + std::to_string(r - ri + k) + ")"});
            }
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto an = detail::normalized_axis(c.attr("axis"), r);
        std::vector<spec::expr> stat;
        for (std::size_t k = 0; k < r; ++k) stat.push_back(select(an > spec::expr(k), c.dim(0, k), spec::expr(1)));
        return {c.shape(0), stat, stat};
    }
    static dtype stash_dtype(const attributes& a) { return a.stash_type == 16 ? dtype::bf16 : dtype::f32; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        const dtype u = stash_dtype(spec::parse_attributes<attributes>(c.attributes(), op_type));
        return {c.input_dtype(0), u, u};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank == 0) return {};
        std::vector<std::size_t> ranks;
        for (std::size_t r = 0; r <= rank; ++r) ranks.push_back(r);
        return {{{out}, {rank}}, {{out}, ranks}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        return {{"variance + epsilon > 0 over each normalized row", [a](std::span<const tensor> in) {
                     const std::size_t r = in[0].rank();
                     if (a.axis < -static_cast<std::int64_t>(r) || a.axis >= static_cast<std::int64_t>(r)) return 1.0;
                     const std::size_t axis = spec::normalize_axis(a.axis, r, op_type);
                     return reduce::variance_loss(reduce::split_groups(in[0], axis, r), static_cast<double>(a.epsilon));
                 }}};
    }

    template <class A, class T>
    struct result {
        array<T> y;
        array<A> mean;
        array<A> inv_std_dev;
    };

    /// The typed kernel; Mean and InvStdDev come in the accumulator type A
    /// (float, double for f64) and are rounded to the stash dtype by `run`.
    template <class T, class A = detail::reduce_acc_t<T>>
    static result<A, T> compute(const array<T>& x, const array<T>& scale, const std::optional<array<T>>& bias,
                                const attributes& a = {}) {
        static_assert(spec::dtype_accepted<LayerNormalization, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        const std::size_t axis = spec::normalize_axis(a.axis, s.size(), op_type);
        const shape_type norm_shape(s.begin() + static_cast<std::ptrdiff_t>(axis), s.end());
        // Scale and B broadcast to X.shape[axis:]; offsets of their element for each i.
        auto offsets_of = [&](const array<T>& p, std::string_view name) {
            const shape_type ps(p.shape().begin(), p.shape().end());
            if (ps.size() > norm_shape.size()) {
                throw shape_error(op_type, std::string(name) + " " + to_string(ps) + " has a higher rank than X.shape[axis:] " +
                                               to_string(norm_shape));
            }
            for (std::size_t k = 0; k < ps.size(); ++k) {
                const std::size_t xk = norm_shape[norm_shape.size() - ps.size() + k];
                if (ps[k] != xk && ps[k] != 1) {
                    throw shape_error(op_type, std::string(name) + " " + to_string(ps) + " does not broadcast to X.shape[axis:] " +
                                                   to_string(norm_shape));
                }
            }
            return detail::broadcast_offsets({ps}, norm_shape)[0];
        };
        const auto so = offsets_of(scale, "Scale");
        const auto bo = bias ? offsets_of(*bias, "B") : std::vector<std::size_t>{};
        shape_type stat_shape(s);
        for (std::size_t k = axis; k < s.size(); ++k) stat_shape[k] = 1;
        result<A, T> out{array<T>::from_shape(s), array<A>::from_shape(stat_shape), array<A>::from_shape(stat_shape)};
        const std::size_t n = element_count(norm_shape), rows = out.mean.size();
        const A eps = static_cast<A>(a.epsilon);
        for (std::size_t row = 0; row < rows; ++row) {
            const T* xr = x.data() + row * n;
            A mu = 0;
            for (std::size_t i = 0; i < n; ++i) mu += value_cast<A>(xr[i]);
            mu /= static_cast<A>(n);  // n == 0: NaN statistics, no element to normalize
            A var = 0;
            for (std::size_t i = 0; i < n; ++i) var += (value_cast<A>(xr[i]) - mu) * (value_cast<A>(xr[i]) - mu);
            var /= static_cast<A>(n);
            const A inv = A(1) / math::sqrt(var + eps);
            out.mean.data()[row] = mu;
            out.inv_std_dev.data()[row] = inv;
            for (std::size_t i = 0; i < n; ++i) {
                A v = (value_cast<A>(xr[i]) - mu) * inv * value_cast<A>(scale.data()[so[i]]);
                if (bias) v += value_cast<A>(bias->data()[bo[i]]);
                out.y.data()[row * n + i] = value_cast<T>(v);
            }
        }
        return out;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = checked_attributes(c);
        return detail::dispatch<inputs[0].types, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::optional<array<T>> bias;
            if (c.has_input(2)) bias = c.input(2).as_array<T>();
            auto res = compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>(), bias, a);
            const dtype u = stash_dtype(a);
            return std::vector<tensor>{tensor(res.y), tensor::from_array_as(res.mean, u), tensor::from_array_as(res.inv_std_dev, u)};
        });
    }
    /// Mean and InvStdDev stay in S: run() rounds them to the stash dtype, which
    /// only loses precision (the derivative of that rounding is taken as 1).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        std::optional<array<S>> bias;
        if (c.has_input(2)) bias = x[2];
        auto res = compute<S>(x[0], x[1], bias, checked_attributes(c));
        return {std::move(res.y), std::move(res.mean), std::move(res.inv_std_dev)};
    }
    static attributes checked_attributes(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (a.stash_type != 1 && a.stash_type != 16) {
            throw error(op_type, "stash_type must be 1 (float) or 16 (bfloat16), got " + std::to_string(a.stash_type));
        }
        return a;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .weights({1, 2})
            .real("epsilon", 1e-6, 1e-2, 0.3)
            .choice("stash_type", {std::int64_t{1}}, 0.2)
            .range(1, 0.5, 2.0)
            .range(2, -1.0, 1.0)
            .optional_input(2, 0.7)
            .facts(facts);
    }
    /// Y: unknown (Scale and B move it), except over rows of one element, where
    /// x - Mean is 0 and Y is B (0 without B). Mean: inside X's range. InvStdDev =
    /// 1 / sqrt(var + epsilon), with var at most (hi - lo)^2 / 4 for X in
    /// [lo, hi]: InvStdDev of Cos values is never below 1 / sqrt(1 + epsilon).
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type> shapes) {
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        spec::value_facts y;
        std::size_t row = 0;  // elements per normalized row; 0: not known
        if (!shapes.empty() && !shapes[0].empty()) {
            row = 1;
            for (std::size_t i = spec::normalize_axis(a.axis, shapes[0].size(), op_type); i < shapes[0].size(); ++i) {
                row *= shapes[0][i];
            }
            const bool has_b = in.size() > 2;  // trailing absent inputs are dropped (B may be a scalar)
            if (row == 1) {
                y = has_b ? in[2].range_only() : spec::value_facts::constant(0.0);
            } else if (!has_b) {
                // (x - Mean) / sd sums to 0 over a row (all 0 on a constant row), so
                // times one Scale value, or Scale values of one sign, some element is
                // <= 0 and some >= 0 (up to the rounding of the mean): Log of it fails.
                const bool one_scale = shapes.size() > 1 && element_count(shapes[1], op_type) == 1;
                const bool one_sign = in.size() > 1 && (in[1].lo >= 0.0 || in[1].hi <= 0.0);
                if (one_scale || one_sign) {
                    y.some_at_most = 0.0;
                    y.some_at_least = 0.0;
                }
            }
        }
        const double eps = a.epsilon;
        if (!(eps > 0.0)) return {y, x.range_only(), spec::value_facts{}};
        // A row of one element has variance 0 whatever it holds: InvStdDev is
        // 1 / sqrt(epsilon) (Atanh of it fails for every epsilon below 1).
        const double var_max = row == 1 ? 0.0 : (x.hi - x.lo) * (x.hi - x.lo) / 4.0;
        // 1% slack for rounding in float32 / bfloat16 statistics.
        const auto inv = spec::value_facts::within(0.99 / std::sqrt(var_max + eps), 1.01 / std::sqrt(eps));
        return {y, x.range_only(), inv};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::layer_norm_attr, axis, epsilon, stash_type);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_LAYER_NORMALIZATION_HPP
// ---- end tensoracle/ops/reduce/layer_normalization.hpp ----
// ---- begin tensoracle/ops/reduce/batch_normalization.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_BATCH_NORMALIZATION_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_BATCH_NORMALIZATION_HPP
// tensoracle: BatchNormalization (inference mode: per channel, (X - mean) / sqrt(var + epsilon) * scale + B).
//
// Semantics chosen where ONNX leaves it open (the family-wide notes: ops/reduce.hpp):
// - BatchNormalization: inference mode only (training_mode=1 throws
//   unsupported_error); momentum is accepted and ignored. X has rank >= 2 (N, C, ...).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace reduce {
struct batch_norm_attr {
    float epsilon = 1e-5f;
    float momentum = 0.9f;
    std::int64_t training_mode = 0;
};
}  // namespace reduce

/// BatchNormalization (15), inference mode:
/// Y = (X - input_mean[c]) / sqrt(input_var[c] + epsilon) * scale[c] + B[c], c = axis 1.
struct BatchNormalization : spec::like_input<0> {
    static constexpr std::string_view op_type = "BatchNormalization";
    static constexpr int opset = 15;
    using attributes = reduce::batch_norm_attr;
    static constexpr std::array<spec::value_spec, 5> inputs{{{"X", spec::types::floating, {2, 8}},
                                                             {"scale", spec::types::floating, {1, 1}, "T1"},
                                                             {"B", spec::types::floating, {1, 1}, "T1"},
                                                             {"input_mean", spec::types::floating, {1, 1}, "T2"},
                                                             {"input_var", spec::types::floating, {1, 1}, "T2"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", spec::types::floating}}};
    static constexpr std::array<std::string_view, 4> param_names{"scale", "B", "input_mean", "input_var"};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        // training_mode=1 is valid ONNX, just not implemented: run() throws
        // unsupported_error for it (conformance counts it as skipped).
        std::vector<spec::constraint> out;
        for (std::size_t i = 1; i < 5; ++i) {
            out.push_back({c.dim(i, 0) == c.dim(0, 1), std::string(param_names[i - 1]) + " has one value per channel (X axis 1)"});
        }
        return out;
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank < 2) return {};
        const auto f = spec::types::floating.members();
        return {{{out}, {rank}}, {f, {1}}, {f, {1}}, {f, {1}}, {f, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto eps = static_cast<double>(spec::parse_attributes<attributes>(attrs, op_type).epsilon);
        return {detail::hinge_rule("input_var + epsilon > 0", 4, [eps](double v) { return 1e-10 - (v + eps); })};
    }

    /// The typed kernel; the per-channel parameters come widened to double
    /// (exact for every floating dtype) and are used in the accumulator type.
    /// AD scalars take them as P = T, so that they carry derivatives too.
    template <class T, class P = double>
    static array<T> compute(const array<T>& x, const array<P>& scale, const array<P>& bias, const array<P>& input_mean,
                            const array<P>& var, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<BatchNormalization, T>::value);
        if (a.training_mode != 0) {
            throw unsupported_error(std::string(op_type), "training_mode=1 is not supported (inference mode only)");
        }
        if (x.dimension() < 2) throw shape_error(op_type, "X must have rank >= 2 (N, C, ...), got rank " + std::to_string(x.dimension()));
        const std::size_t ch = x.shape()[1];
        const std::array<const array<P>*, 4> params{&scale, &bias, &input_mean, &var};
        for (std::size_t p = 0; p < 4; ++p) {
            if (params[p]->dimension() != 1 || params[p]->shape()[0] != ch) {
                throw shape_error(op_type, std::string(param_names[p]) + " must have shape [" + std::to_string(ch) + "]");
            }
        }
        using A = detail::reduce_acc_t<T>;
        const auto sp = detail::split_at(shape_type(x.shape().begin(), x.shape().end()), 1);
        auto y = array<T>::from_shape(x.shape());
        const A eps = static_cast<A>(a.epsilon);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t c = 0; c < sp.n; ++c) {
                const A m = value_cast<A>(input_mean.data()[c]), s = value_cast<A>(scale.data()[c]),
                        b = value_cast<A>(bias.data()[c]);
                const A den = math::sqrt(value_cast<A>(var.data()[c]) + eps);
                for (std::size_t j = 0; j < sp.inner; ++j) {
                    const std::size_t f = sp.at(o, c, j);
                    y.data()[f] = value_cast<T>((value_cast<A>(x.data()[f]) - m) / den * s + b);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).to<double>(), c.input(2).to<double>(),
                                     c.input(3).to<double>(), c.input(4).to<double>(), a));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return {compute<S, S>(x[0], x[1], x[2], x[3], x[4], a)};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .weights({1, 2, 3, 4})
            .real("epsilon", 1e-6, 1e-2, 0.3)
            .real("momentum", 0.5, 1.0, 0.3)
            .omit("training_mode")
            .range(1, 0.5, 2.0)
            .range(2, -1.0, 1.0)
            .range(3, -1.0, 1.0)
            .range(4, 0.1, 2.0);
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::batch_norm_attr, epsilon, momentum, training_mode);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_BATCH_NORMALIZATION_HPP
// ---- end tensoracle/ops/reduce/batch_normalization.hpp ----
// ---- begin tensoracle/ops/reduce/instance_normalization.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_INSTANCE_NORMALIZATION_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_INSTANCE_NORMALIZATION_HPP
// tensoracle: InstanceNormalization (per (n, c) over the spatial axes: scale * (x - mean) / stddev + B).
//
// Semantics chosen where ONNX leaves it open (the family-wide notes: ops/reduce.hpp):
// - InstanceNormalization: X has rank >= 3 (N, C, D1, ...); statistics per
//   (n, c) over D1..Dk, population variance.

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace reduce {
struct instance_norm_attr {
    float epsilon = 1e-5f;
};
}  // namespace reduce

/// InstanceNormalization (6): per (n, c), over the spatial axes 2..:
/// y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c] (population variance).
struct InstanceNormalization : spec::like_input<0> {
    static constexpr std::string_view op_type = "InstanceNormalization";
    static constexpr int opset = 6;
    using attributes = reduce::instance_norm_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"input", spec::types::ieee_floating, {3, 8}},
                                                             {"scale", spec::types::ieee_floating, {1, 1}},
                                                             {"B", spec::types::ieee_floating, {1, 1}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::ieee_floating}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return {{c.dim(1, 0) == c.dim(0, 1), "scale has one value per channel (input axis 1)"},
                {c.dim(2, 0) == c.dim(0, 1), "B has one value per channel (input axis 1)"}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank < 3) return {};
        return {{{out}, {rank}}, {{out}, {1}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto eps = static_cast<double>(spec::parse_attributes<attributes>(attrs, op_type).epsilon);
        return {{"variance + epsilon > 0 over each (n, c)", [eps](std::span<const tensor> in) {
                     return reduce::variance_loss(reduce::split_groups(in[0], 2, in[0].rank()), eps);
                 }}};
    }

    template <class T>
    static array<T> compute(const array<T>& x, const array<T>& scale, const array<T>& bias, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<InstanceNormalization, T>::value);
        if (x.dimension() < 3) {
            throw shape_error(op_type, "input must have rank >= 3 (N, C, D1, ...), got rank " + std::to_string(x.dimension()));
        }
        const std::size_t ch = x.shape()[1];
        for (const auto* p : {&scale, &bias}) {
            if (p->dimension() != 1 || p->shape()[0] != ch) {
                throw shape_error(op_type, std::string(p == &scale ? "scale" : "B") + " must have shape [" + std::to_string(ch) + "]");
            }
        }
        using A = detail::reduce_acc_t<T>;
        const auto sp = detail::split_at(shape_type(x.shape().begin(), x.shape().end()), 1);
        const std::size_t n = sp.inner;  // spatial elements per (n, c)
        const A eps = static_cast<A>(a.epsilon);
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t c = 0; c < ch; ++c) {
                const std::size_t base = sp.at(o, c, 0);
                A mu = 0, var = 0;
                for (std::size_t j = 0; j < n; ++j) mu += value_cast<A>(x.data()[base + j]);
                mu /= static_cast<A>(n);
                for (std::size_t j = 0; j < n; ++j) {
                    const A dlt = value_cast<A>(x.data()[base + j]) - mu;
                    var += dlt * dlt;
                }
                var /= static_cast<A>(n);
                const A den = math::sqrt(var + eps);
                const A s = value_cast<A>(scale.data()[c]), b = value_cast<A>(bias.data()[c]);
                for (std::size_t j = 0; j < n; ++j) {
                    y.data()[base + j] = value_cast<T>(s * (value_cast<A>(x.data()[base + j]) - mu) / den + b);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>(), c.input(2).as_array<T>(), a));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return {compute<S>(x[0], x[1], x[2], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.weights({1, 2}).real("epsilon", 1e-6, 1e-2, 0.3).range(1, 0.5, 2.0).range(2, -1.0, 1.0).facts(facts);
    }
    /// Y: unknown, except over one spatial element per channel, where x - mean is 0 and Y is B.
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map&,
                                                std::span<const shape_type> shapes) {
        if (in.size() < 3 || shapes.empty() || shapes[0].size() < 3) return {spec::value_facts{}};
        std::size_t spatial = 1;
        for (std::size_t i = 2; i < shapes[0].size(); ++i) spatial *= shapes[0][i];
        return {spatial == 1 ? in[2].range_only() : spec::value_facts{}};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::instance_norm_attr, epsilon);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_INSTANCE_NORMALIZATION_HPP
// ---- end tensoracle/ops/reduce/instance_normalization.hpp ----
// ---- begin tensoracle/ops/reduce/lp_normalization.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_LP_NORMALIZATION_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_LP_NORMALIZATION_HPP
// tensoracle: LpNormalization (x / ||x||_p along an axis, p in {1, 2}).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace reduce {
struct lp_norm_attr {
    std::int64_t axis = -1;
    std::int64_t p = 2;
};
}  // namespace reduce

/// LpNormalization (1): y = x / ||x||_p along `axis`, p in {1, 2}. A zero
/// vector gives 0 / 0 = NaN (as the ONNX reference); the domain excludes it.
struct LpNormalization : spec::like_input<0>, detail::one_input_kernel<LpNormalization> {
    static constexpr std::string_view op_type = "LpNormalization";
    static constexpr int opset = 1;
    using attributes = reduce::lp_norm_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::ieee_floating}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::ieee_floating}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto p = c.attr("p");
        return {detail::axis_in_range(c.attr("axis"), c.rank(0), "axis"),
                {p == spec::expr(1) || p == spec::expr(2), "p is 1 or 2"}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        std::vector<spec::domain_rule> rules{{"||x||_p > 0 along axis (and finite)", [a](std::span<const tensor> in) {
                     const std::size_t r = in[0].rank();
                     if (a.axis < -static_cast<std::int64_t>(r) || a.axis >= static_cast<std::int64_t>(r)) return 1.0;
                     const std::size_t axis = spec::normalize_axis(a.axis, r, op_type);
                     const double m = detail::max_finite(in[0].element_dtype());
                     double loss = 0.0;
                     for (const auto& g : reduce::split_groups(in[0], axis, axis + 1)) {
                         double s = 0.0;
                         for (const double x : g) s += a.p == 1 ? std::fabs(x) : x * x;
                         const double norm = a.p == 1 ? s : std::sqrt(s);
                         loss += std::max(1e-10 - norm, 0.0) + (a.p == 2 && s > m ? s / m - 1.0 : 0.0);
                     }
                     return loss;
                 }}};
        // A non-zero norm needs some non-zero element (what the generator checks).
        rules[0].elementwise_input = 0;
        rules[0].elementwise = [](double x) { return 1e-10 - std::fabs(x); };
        rules[0].elementwise_any = true;
        rules[0].any_along_axis = a.axis;
        return rules;
    }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<LpNormalization, T>::value);
        if (a.p != 1 && a.p != 2) throw error(op_type, "p must be 1 or 2, got " + std::to_string(a.p));
        const shape_type s(x.shape().begin(), x.shape().end());
        const auto sp = detail::split_at(s, spec::normalize_axis(a.axis, s.size(), op_type));
        using A = detail::reduce_acc_t<T>;
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                A acc = 0;
                for (std::size_t i = 0; i < sp.n; ++i) {
                    const A v = value_cast<A>(x.data()[sp.at(o, i, j)]);
                    acc += a.p == 1 ? math::fabs(v) : v * v;
                }
                const A norm = a.p == 1 ? acc : math::sqrt(acc);
                for (std::size_t i = 0; i < sp.n; ++i) {
                    y.data()[sp.at(o, i, j)] = value_cast<T>(value_cast<A>(x.data()[sp.at(o, i, j)]) / norm);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.choice("p", {std::int64_t{1}, std::int64_t{2}}, 0.7).facts(facts); }
    /// Every element lies in [-1, 1], and in a slice of n along the axis the
    /// smallest |y| is at most n^(-1/p) (the p-th powers sum to 1): some element
    /// is <= n^(-1/p) and some >= -n^(-1/p), so Acosh of it is out of reach.
    /// A slice of one is x / |x|: exactly -1 or 1 (the square root of a
    /// correctly rounded square is exact), 1 where x >= 0.
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type> shapes) {
        auto f = spec::value_facts::within(-1.0, 1.0);
        if (shapes.empty() || shapes[0].empty()) return {f};
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        const std::size_t axis = spec::normalize_axis(a.axis, shapes[0].size(), op_type);
        const auto n = static_cast<double>(shapes[0][axis]);
        if (n == 1.0 && (a.p == 1 || a.p == 2)) {
            if (!in.empty() && in[0].lo >= 0.0) return {spec::value_facts::constant(1.0)};
            if (!in.empty() && in[0].hi <= 0.0) return {spec::value_facts::constant(-1.0)};
            f.gap = std::make_pair(-1.0, 1.0);
            f.integral = true;
            return {f};
        }
        if (n < 2.0 || (a.p != 1 && a.p != 2)) return {f};
        const double m = 1.01 * std::pow(n, -1.0 / static_cast<double>(a.p));  // 1% slack for rounding
        f.some_at_most = m;
        f.some_at_least = -m;
        return {f};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::lp_norm_attr, axis, p);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_LP_NORMALIZATION_HPP
// ---- end tensoracle/ops/reduce/lp_normalization.hpp ----

namespace tensoracle::ops {

inline constexpr auto reduce_ops =
    hana::tuple_t<ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
                  ReduceLogSum, ReduceLogSumExp, ArgMax, ArgMin, Softmax, LogSoftmax, Hardmax,
                  LayerNormalization, BatchNormalization, InstanceNormalization, LpNormalization>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_REDUCE_HPP
// ---- end tensoracle/ops/reduce.hpp ----
// ---- begin tensoracle/ops/shape.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_HPP
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

// ---- begin tensoracle/ops/shape/reshape.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_RESHAPE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_RESHAPE_HPP
// tensoracle: Reshape (the input's elements in a new shape; 0 copies and -1 infers a dim).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

// ---- begin tensoracle/ops/detail/shape_util.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_DETAIL_SHAPE_UTIL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_DETAIL_SHAPE_UTIL_HPP
// tensoracle: helpers for shape and data-movement specs: symbolic axis
// arithmetic (normalization, indexing a dim list with a symbolic position,
// products) and concrete helpers for kernels (int values of a tensor,
// ravel / unravel with strides). Namespace shape_util, apart from other
// families' detail helpers.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>


namespace tensoracle::ops::shape_util {

using detail::strides_of;

using spec::expr;

/// The constant -n (expr has no unary minus).
inline expr negative(std::size_t n) { return expr(-static_cast<std::int64_t>(n)); }

/// max / min of expressions. expr's min and max are hidden friends found by
/// ADL; the block-scope using-declaration keeps unqualified lookup from
/// stopping at the ops::min / ops::max op types (which would disable ADL).
inline expr emax(const expr& a, const expr& b) {
    using std::max;
    return max(a, b);
}
inline expr emin(const expr& a, const expr& b) {
    using std::min;
    return min(a, b);
}

/// a in [-rank, rank) (an axis of a tensor of that rank).
inline expr axis_in_range(const expr& a, std::size_t rank) { return a >= negative(rank) && a < expr(rank); }

/// A possibly negative axis made non-negative: a < 0 ? a + rank : a.
inline expr normalized_axis(const expr& a, std::size_t rank) { return select(a < 0, a + expr(rank), a); }

/// v[idx] for a symbolic idx, as a chain of selects; `fallback` where idx is
/// outside [0, v.size()) (callers constrain idx so that it never is).
inline expr pick(const std::vector<expr>& v, const expr& idx, const expr& fallback = expr(0)) {
    expr out = fallback;
    for (std::size_t j = v.size(); j-- > 0;) out = select(idx == expr(j), v[j], out);
    return out;
}

/// Sum of expressions (0 for none).
inline expr sum(const std::vector<expr>& v) {
    expr out(0);
    for (const auto& e : v) out = out + e;
    return out;
}

/// 1 where cond holds, else 0 (an integer, not a boolean, so it can be summed).
inline expr indicator(const expr& cond) { return select(cond, expr(1), expr(0)); }

/// Logical OR of conditions (false for none).
inline expr any_of(const std::vector<expr>& v) {
    expr out(0);
    for (const auto& e : v) out = out || e;
    return out;
}

/// Constraints that normalized axes are pairwise distinct.
inline std::vector<spec::constraint> distinct_axes(const std::vector<expr>& normalized, const std::string& what) {
    std::vector<spec::constraint> out;
    for (std::size_t i = 0; i < normalized.size(); ++i) {
        for (std::size_t j = i + 1; j < normalized.size(); ++j) {
            out.push_back({normalized[i] != normalized[j], what + " " + std::to_string(i) + " and " +
                                                               std::to_string(j) + " name different axes"});
        }
    }
    return out;
}

/// A constraint whose truth is known now (a concrete-only fact): a constant
/// that fails with `reason` when false.
inline spec::constraint concrete_fact(bool holds, std::string reason) { return {expr(holds ? 1 : 0) == 1, std::move(reason)}; }

/// Ranks 0..max as a list (input candidates).
inline std::vector<std::size_t> ranks_between(std::size_t lo, std::size_t hi) {
    std::vector<std::size_t> out;
    for (std::size_t r = lo; r <= hi; ++r) out.push_back(r);
    return out;
}

/// The values of an int32 / int64 tensor as int64 (any rank).
inline std::vector<std::int64_t> int_values(const tensor& t, std::string_view where) {
    if (t.element_dtype() != dtype::i64 && t.element_dtype() != dtype::i32) {
        throw dtype_error(where, "expected an int32 or int64 tensor, got " + std::string(name(t.element_dtype())));
    }
    const auto a = t.to<std::int64_t>();
    return std::vector<std::int64_t>(a.data(), a.data() + a.size());
}

/// Concrete axis normalization that throws naming the op.
inline std::size_t checked_axis(std::int64_t axis, std::size_t rank, std::string_view op, std::string_view what = "axis") {
    const auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r) {
        throw shape_error(op, std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                                  std::to_string(rank) + " (allowed: [" + std::to_string(-r) + ", " +
                                  std::to_string(r - 1) + "])");
    }
    return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

/// Shape of a typed array as a shape_type.
template <class A>
shape_type shape_of(const A& a) {
    return shape_type(a.shape().begin(), a.shape().end());
}

/// Flat offset of a multi-index under row-major strides.
inline std::size_t ravel(const shape_type& idx, const shape_type& strides) {
    std::size_t f = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) f += idx[k] * strides[k];
    return f;
}

/// A non-negative int64 as a dim, or a shape_error naming the op.
inline std::size_t to_dim(std::int64_t v, std::string_view op, std::string_view what) {
    if (v < 0) throw shape_error(op, std::string(what) + " is negative (" + std::to_string(v) + ")");
    return static_cast<std::size_t>(v);
}

/// Advances idx to the next multi-index over dims in row-major order; false
/// (idx back to all zeros) after the last one. Kernels walk their output with
/// it instead of unravelling each flat offset into a fresh vector.
inline bool next_index(shape_type& idx, const shape_type& dims) {
    for (std::size_t k = idx.size(); k-- > 0;) {
        if (++idx[k] < dims[k]) return true;
        idx[k] = 0;
    }
    return false;
}

/// out[f] = x[source(out multi-index)] for every output element: the common
/// loop of the data-movement kernels. `source` returns the input flat offset.
template <class T, class F>
array<T> gather_elements_by(const array<T>& x, const shape_type& out_shape, std::string_view op, F&& source) {
    auto y = array<T>::from_shape(out_shape);
    const std::size_t n = element_count(out_shape, op);
    shape_type index(out_shape.size(), 0);  // the output multi-index of offset f
    for (std::size_t f = 0; f < n; ++f, next_index(index, out_shape)) {
        const std::size_t s = source(static_cast<const shape_type&>(index));
        if (s >= x.size()) throw error(op, "internal: source offset out of range");
        y.data()[f] = x.data()[s];
    }
    return y;
}

}  // namespace tensoracle::ops::shape_util
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_DETAIL_SHAPE_UTIL_HPP
// ---- end tensoracle/ops/detail/shape_util.hpp ----
// ---- begin tensoracle/ops/shape/detail/helpers.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_DETAIL_HELPERS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_DETAIL_HELPERS_HPP
// tensoracle: the helpers the ops of ops/shape/ share (namespace shape_detail: the
// rank limit max_rank, run_data / run_real_data for the ops with one output of the
// data dtype, random_indices for the Gather and GatherElements hints, int64_scalar).

#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>


namespace tensoracle::ops {

namespace shape_detail {
namespace types = spec::types;
using spec::expr;
using spec::constraint;
using spec::context;

inline constexpr std::size_t max_rank = 8;

/// Random indices of dtype d and shape s into the dim of input 0 at the op's
/// `axis` attribute, negative ones included (Gather, GatherElements hints).
inline tensor random_indices(rng& g, const context& c, dtype d, const shape_type& s) {
    const auto axis = std::get<std::int64_t>(c.attributes().at("axis"));
    const auto dims = c.input(0).shape();
    const auto dim = static_cast<std::int64_t>(dims[spec::normalize_axis(axis, dims.size(), c.op_type())]);
    auto idx = array<std::int64_t>::from_shape(s);
    for (auto& v : idx) v = dim > 0 ? g.integer(-dim, dim - 1) : 0;
    return tensor::from_array_as(idx, d);
}

/// An int64 scalar tensor.
inline tensor int64_scalar(std::int64_t v) {
    auto a = array<std::int64_t>::from_shape(shape_type{});
    a.data()[0] = v;
    return tensor(a);
}

/// run() of an op with one output of the data input's dtype: Op::run_typed<T>(c, x) reads the op's other
/// inputs and attributes from c and runs the kernel on x, input 0 as stored.
template <class Op>
std::vector<tensor> run_data(const context& c) {
    return detail::single_output(detail::dispatch<Op::inputs[0].types>(c.input_dtype(0), Op::op_type, [&](auto t) {
        using T = typename decltype(t)::type;
        return tensor(Op::template run_typed<T>(c, c.input(0).as_array<T>()));
    }));
}

/// run_real() of the same ops: the same kernel on input 0 lifted to S. Data
/// movement copies scalars, so each output element carries the derivative of
/// the input element it came from. Integer and bool data make an integer /
/// bool output, which run_real leaves to run() (a placeholder).
template <class Op, class S>
std::vector<array<S>> run_real_data(const context& c, const std::vector<array<S>>& x) {
    if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
    return {Op::template run_typed<S>(c, x[0])};
}
}  // namespace shape_detail

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_DETAIL_HELPERS_HPP
// ---- end tensoracle/ops/shape/detail/helpers.hpp ----

namespace tensoracle::ops {

struct reshape_attr {
    std::int64_t allowzero = 0;
};

/// Reshape-14(data, shape): 0 copies the input dim at the same position
/// (unless allowzero != 0, where it is a literal 0), -1 (at most one) is
/// inferred from the element count.
struct Reshape : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Reshape";
    static constexpr int opset = 14;
    using attributes = reshape_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all}, {"shape", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"reshaped", spec::types::all}}};

    /// What shape value i stands for, with -1 counted as 1.
    static spec::expr resolved(const spec::context& c, const std::vector<spec::expr>& v, std::size_t i) {
        const spec::expr copy = i < c.rank(0) ? c.dim(0, i) : spec::expr(0);
        return select(v[i] == -1, spec::expr(1), select(v[i] == 0 && c.attr("allowzero") == 0, copy, v[i]));
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto v = c.values(1);
        const auto az = c.attr("allowzero");
        std::vector<spec::constraint> out;
        std::vector<spec::expr> minus, zero, res;
        for (std::size_t i = 0; i < v.size(); ++i) {
            out.push_back({v[i] >= -1, "shape value " + std::to_string(i) + " is >= -1"});
            if (i >= c.rank(0)) {
                out.push_back({!(v[i] == 0 && az == 0), "shape value " + std::to_string(i) +
                                                            " = 0 copies input dim " + std::to_string(i) +
                                                            ", which does not exist (input rank " +
                                                            std::to_string(c.rank(0)) + ")"});
            }
            minus.push_back(shape_util::indicator(v[i] == -1));
            zero.push_back(v[i] == 0);
            res.push_back(resolved(c, v, i));
        }
        out.push_back({shape_util::sum(minus) <= 1, "at most one shape value is -1"});
        out.push_back({az == 0 || !(shape_util::any_of(zero) && shape_util::sum(minus) >= 1), "with allowzero, shape may not hold both 0 and -1"});
        const auto p = spec::product(res), total = spec::product(c.shape(0));
        out.push_back({select(shape_util::sum(minus) >= 1, p != 0 && total % shape_util::emax(p, spec::expr(1)) == 0, p == total),
                       "the new shape holds as many elements as the input (-1 divides exactly)"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto v = c.values(1);
        std::vector<spec::expr> res, out;
        for (std::size_t i = 0; i < v.size(); ++i) res.push_back(resolved(c, v, i));
        const auto p = spec::product(res), total = spec::product(c.shape(0));
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back(select(v[i] == -1, total / shape_util::emax(p, spec::expr(1)), res[i]));
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(0, shape_detail::max_rank)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// The output shape, checked concretely (same rules as the constraints).
    static shape_type target_shape(const shape_type& in, std::span<const std::int64_t> shape, bool allowzero) {
        shape_type out;
        std::optional<std::size_t> minus;
        bool has_zero = false;
        for (std::size_t i = 0; i < shape.size(); ++i) {
            const std::int64_t v = shape[i];
            if (v == -1) {
                if (minus) throw shape_error(op_type, "shape has more than one -1 (positions " + std::to_string(*minus) + " and " + std::to_string(i) + ")");
                minus = i;
                out.push_back(1);
            } else if (v < -1) {
                throw shape_error(op_type, "shape value " + std::to_string(i) + " is " + std::to_string(v) + " (must be >= -1)");
            } else if (v == 0 && !allowzero) {
                if (i >= in.size()) {
                    throw shape_error(op_type, "shape value " + std::to_string(i) + " = 0 copies an input dim, but the input has rank " + std::to_string(in.size()));
                }
                out.push_back(in[i]);
            } else {
                has_zero = has_zero || v == 0;
                out.push_back(static_cast<std::size_t>(v));
            }
        }
        if (allowzero && has_zero && minus) throw shape_error(op_type, "with allowzero=1 the shape may not hold both 0 and -1");
        const std::size_t p = element_count(out, op_type), total = element_count(in, op_type);
        if (minus) {
            if (p == 0 || total % p != 0) {
                throw shape_error(op_type, "cannot infer the -1 dim: " + std::to_string(total) + " elements into " + to_string(out));
            }
            out[*minus] = total / p;
        } else if (p != total) {
            throw shape_error(op_type, "shape " + to_string(out) + " holds " + std::to_string(p) + " elements, the input " + to_string(in) + " holds " + std::to_string(total));
        }
        return out;
    }
    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> shape, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Reshape, T>::value);
        const auto out_shape = target_shape(shape_util::shape_of(x), shape, a.allowzero != 0);
        auto y = array<T>::from_shape(out_shape);
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return compute<T>(x, shape_util::int_values(c.input(1), op_type), a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Reshape>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Reshape>(c, x);
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.flag("allowzero", 0.3).copies(0); }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reshape_attr, allowzero);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_RESHAPE_HPP
// ---- end tensoracle/ops/shape/reshape.hpp ----
// ---- begin tensoracle/ops/shape/transpose.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_TRANSPOSE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_TRANSPOSE_HPP
// tensoracle: Transpose (permutes the axes).
//
// Semantics chosen where ONNX leaves them open: Transpose's perm must be a
// permutation of [0, rank) (no negative entries).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct transpose_attr {
    std::optional<std::vector<std::int64_t>> perm;
};

/// Transpose-13(data): output axis i is input axis perm[i]; perm defaults to
/// the reversed axes. perm must be a permutation of [0, rank).
struct Transpose : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Transpose";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = transpose_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"transposed", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto p = c.attr_ints("perm");
        const std::size_t r = c.rank(0);
        if (!c.has_attribute("perm")) return {};
        std::vector<spec::constraint> out{{spec::list_length(p) == spec::expr(r), "perm has one entry per input axis"}};
        if (p.size() != r) return out;
        for (std::size_t i = 0; i < p.size(); ++i) {
            out.push_back({p[i] >= 0 && p[i] < spec::expr(r), "perm[" + std::to_string(i) + "] is an axis in [0, rank)"});
        }
        auto d = shape_util::distinct_axes(p, "perm entries");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto dims = c.shape(0);
        std::vector<spec::expr> out;
        if (!c.has_attribute("perm")) {
            out.assign(dims.rbegin(), dims.rend());
        } else {
            for (const auto& p : c.attr_ints("perm")) out.push_back(shape_util::pick(dims, p));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Transpose, T>::value);
        const std::size_t r = x.dimension();
        std::vector<std::size_t> perm(r);
        if (a.perm) {
            if (a.perm->size() != r) {
                throw shape_error(op_type, "perm has " + std::to_string(a.perm->size()) + " entries; the input has rank " + std::to_string(r));
            }
            std::vector<bool> seen(r, false);
            for (std::size_t i = 0; i < r; ++i) {
                const std::int64_t p = (*a.perm)[i];
                if (p < 0 || p >= static_cast<std::int64_t>(r) || seen[static_cast<std::size_t>(p)]) {
                    throw shape_error(op_type, "perm is not a permutation of [0, " + std::to_string(r) + "): bad entry " + std::to_string(p));
                }
                seen[static_cast<std::size_t>(p)] = true;
                perm[i] = static_cast<std::size_t>(p);
            }
        } else {
            for (std::size_t i = 0; i < r; ++i) perm[i] = r - 1 - i;
        }
        const auto in = shape_util::shape_of(x);
        const auto st = detail::strides_of(in);
        shape_type out(r);
        for (std::size_t i = 0; i < r; ++i) out[i] = in[perm[i]];
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0;
            for (std::size_t i = 0; i < r; ++i) f += o[i] * st[perm[i]];
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Transpose>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Transpose>(c, x);
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::transpose_attr, perm);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_TRANSPOSE_HPP
// ---- end tensoracle/ops/shape/transpose.hpp ----
// ---- begin tensoracle/ops/shape/squeeze.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SQUEEZE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SQUEEZE_HPP
// tensoracle: Squeeze (removes axes of size 1).
//
// Semantics chosen where ONNX leaves them open: Squeeze with an *empty* axes
// input removes nothing (the literal reading, numpy's squeeze(axis=()));
// without the input it removes every dim of 1.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>


namespace tensoracle::ops {

/// Squeeze-13(data, axes?): removes the listed axes (each of size 1); without
/// axes, every dim of size 1. An empty axes input removes nothing (ONNX's numpy
/// reference and shape inference; onnxruntime removes every dim of 1): the
/// generator never draws one.
struct Squeeze : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Squeeze";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0).nonempty_values(1); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all}, {"axes", spec::types::int64, {1, 1}, "T1", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"squeezed", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (!c.has_input(1)) return {};
        const std::size_t r = c.rank(0);
        const auto axes = c.values(1);
        std::vector<spec::constraint> out;
        std::vector<spec::expr> norm;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            out.push_back({shape_util::axis_in_range(axes[i], r), "axes[" + std::to_string(i) + "] is in [-rank, rank)"});
            norm.push_back(shape_util::normalized_axis(axes[i], r));
            out.push_back({shape_util::pick(c.shape(0), norm.back(), spec::expr(1)) == 1,
                           "the dim at axes[" + std::to_string(i) + "] is 1"});
        }
        auto d = shape_util::distinct_axes(norm, "axes");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto dims = c.shape(0);
        std::vector<spec::expr> out;
        if (!c.has_input(1)) {  // depends on dim values: concrete
            for (const auto& d : dims) {
                const auto v = c.eval(d);
                if (v != 1) out.emplace_back(v);
            }
            return {out};
        }
        const auto axes = c.values(1);
        // removed[j]: some axis names j; output dim m is the m-th kept input dim.
        std::vector<spec::expr> removed(r, spec::expr(0));
        for (std::size_t j = 0; j < r; ++j) {
            std::vector<spec::expr> hits;
            for (const auto& a : axes) hits.push_back(shape_util::normalized_axis(a, r) == spec::expr(j));
            removed[j] = shape_util::any_of(hits);
        }
        const std::size_t out_rank = axes.size() <= r ? r - axes.size() : 0;
        for (std::size_t m = 0; m < out_rank; ++m) {
            spec::expr e(0), kept_before(0);
            std::vector<std::pair<spec::expr, spec::expr>> cases;
            for (std::size_t j = 0; j < r; ++j) {
                cases.emplace_back(!removed[j] && kept_before == spec::expr(m), dims[j]);
                kept_before = kept_before + shape_util::indicator(!removed[j]);
            }
            for (std::size_t j = cases.size(); j-- > 0;) e = select(cases[j].first, cases[j].second, e);
            out.push_back(e);
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(rank, shape_detail::max_rank)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const std::optional<std::vector<std::int64_t>>& axes) {
        static_assert(spec::dtype_accepted<Squeeze, T>::value);
        const auto in = shape_util::shape_of(x);
        std::vector<bool> remove(in.size(), false);
        if (axes) {
            for (const auto a : *axes) {
                const auto k = shape_util::checked_axis(a, in.size(), op_type);
                if (remove[k]) throw shape_error(op_type, "axis " + std::to_string(a) + " is listed twice");
                if (in[k] != 1) throw shape_error(op_type, "cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[k]));
                remove[k] = true;
            }
        } else {
            for (std::size_t k = 0; k < in.size(); ++k) remove[k] = in[k] == 1;
        }
        shape_type out;
        for (std::size_t k = 0; k < in.size(); ++k) {
            if (!remove[k]) out.push_back(in[k]);
        }
        auto y = array<T>::from_shape(out);
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        std::optional<std::vector<std::int64_t>> axes;
        if (c.has_input(1)) axes = shape_util::int_values(c.input(1), op_type);
        return compute<T>(x, axes);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Squeeze>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Squeeze>(c, x);
    }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SQUEEZE_HPP
// ---- end tensoracle/ops/shape/squeeze.hpp ----
// ---- begin tensoracle/ops/shape/unsqueeze.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_UNSQUEEZE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_UNSQUEEZE_HPP
// tensoracle: Unsqueeze (inserts axes of size 1).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

/// Unsqueeze-13(data, axes): inserts dims of 1 at the listed axes of the
/// output (axes normalized against the output rank, any order, no repeats).
struct Unsqueeze : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Unsqueeze";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all, {0, 7}}, {"axes", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"expanded", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto axes = c.values(1);
        const std::size_t R = c.rank(0) + axes.size();
        std::vector<spec::constraint> out{shape_util::concrete_fact(R <= shape_detail::max_rank, "the output rank " + std::to_string(R) + " is at most 8")};
        std::vector<spec::expr> norm;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            out.push_back({shape_util::axis_in_range(axes[i], R), "axes[" + std::to_string(i) + "] is in [-out_rank, out_rank)"});
            norm.push_back(shape_util::normalized_axis(axes[i], R));
        }
        auto d = shape_util::distinct_axes(norm, "axes");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto axes = c.values(1);
        const auto dims = c.shape(0);
        const std::size_t R = c.rank(0) + axes.size();
        std::vector<spec::expr> out;
        spec::expr inserted_before(0);
        for (std::size_t p = 0; p < R; ++p) {
            std::vector<spec::expr> hits;
            for (const auto& a : axes) hits.push_back(shape_util::normalized_axis(a, R) == spec::expr(p));
            const auto inserted = shape_util::any_of(hits);
            out.push_back(select(inserted, spec::expr(1), shape_util::pick(dims, spec::expr(p) - inserted_before)));
            inserted_before = inserted_before + shape_util::indicator(inserted);
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, shape_util::ranks_between(0, rank - 1)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> axes) {
        static_assert(spec::dtype_accepted<Unsqueeze, T>::value);
        const auto in = shape_util::shape_of(x);
        const std::size_t R = in.size() + axes.size();
        std::vector<bool> insert(R, false);
        for (const auto a : axes) {
            const auto k = shape_util::checked_axis(a, R, op_type);
            if (insert[k]) throw shape_error(op_type, "axis " + std::to_string(a) + " is listed twice");
            insert[k] = true;
        }
        shape_type out;
        std::size_t j = 0;
        for (std::size_t p = 0; p < R; ++p) out.push_back(insert[p] ? 1 : in[j++]);
        auto y = array<T>::from_shape(out);
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, shape_util::int_values(c.input(1), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Unsqueeze>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Unsqueeze>(c, x);
    }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_UNSQUEEZE_HPP
// ---- end tensoracle/ops/shape/unsqueeze.hpp ----
// ---- begin tensoracle/ops/shape/flatten.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_FLATTEN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_FLATTEN_HPP
// tensoracle: Flatten (the input as a matrix, split at an axis).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct flatten_attr {
    std::int64_t axis = 1;
};

/// Flatten-13(input): [prod(dims[:axis]), prod(dims[axis:])], axis in [-r, r].
struct Flatten : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Flatten";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = flatten_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {2, 2}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto a = c.attr("axis");
        const std::size_t r = c.rank(0);
        return {{a >= shape_util::negative(r) && a <= spec::expr(r), "axis is in [-rank, rank]"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto a = shape_util::normalized_axis(c.attr("axis"), r);
        std::vector<spec::expr> outer, inner;
        for (std::size_t j = 0; j < r; ++j) {
            outer.push_back(select(spec::expr(j) < a, c.dim(0, j), spec::expr(1)));
            inner.push_back(select(spec::expr(j) < a, spec::expr(1), c.dim(0, j)));
        }
        return {{spec::product(outer), spec::product(inner)}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank != 2) return {};
        return {{{out}, shape_util::ranks_between(0, shape_detail::max_rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Flatten, T>::value);
        const auto in = shape_util::shape_of(x);
        const auto r = static_cast<std::int64_t>(in.size());
        if (a.axis < -r || a.axis > r) {
            throw shape_error(op_type, "axis " + std::to_string(a.axis) + " is out of range for rank " + std::to_string(r) + " (allowed: [-rank, rank])");
        }
        const auto k = static_cast<std::size_t>(a.axis < 0 ? a.axis + r : a.axis);
        const std::size_t outer = element_count(std::span<const std::size_t>(in).first(k), op_type);
        const std::size_t inner = element_count(std::span<const std::size_t>(in).subspan(k), op_type);
        auto y = array<T>::from_shape(shape_type{outer, inner});
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Flatten>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Flatten>(c, x);
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::flatten_attr, axis);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_FLATTEN_HPP
// ---- end tensoracle/ops/shape/flatten.hpp ----
// ---- begin tensoracle/ops/shape/slice.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SLICE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SLICE_HPP
// tensoracle: Slice (strided ranges of the input along the given axes).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>


namespace tensoracle::ops {

/// Slice-13(data, starts, ends, axes?, steps?): for each listed axis, the
/// elements start, start + step, ... before end. Negative starts/ends count
/// from the end (+ dim); then starts are clamped to [0, dim] (step > 0) or
/// [0, dim - 1] (step < 0), ends to [0, dim] or [-1, dim - 1]. Axes default
/// to [0, len(starts)), steps to 1; steps must be non-zero.
struct Slice : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Slice";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.nan_faithful().facts(spec::facts::selection_of(0)); }  // a subset of the elements
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 5> inputs{{{"data", spec::types::all},
                                                             {"starts", spec::types::indices, {1, 1}, "Tind"},
                                                             {"ends", spec::types::indices, {1, 1}, "Tind"},
                                                             {"axes", spec::types::indices, {1, 1}, "Tind", true},
                                                             {"steps", spec::types::indices, {1, 1}, "Tind", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    struct plan {
        std::vector<spec::expr> starts, ends, axes, steps;  // axes normalized
    };
    static plan symbols(const spec::context& c) {
        plan p;
        p.starts = c.values(1);
        p.ends = c.values(2);
        const std::size_t n = std::min(p.starts.size(), p.ends.size()), r = c.rank(0);
        p.starts.resize(n, spec::expr(0));
        p.ends.resize(n, spec::expr(0));
        if (c.has_input(3)) {
            for (const auto& a : c.values(3)) p.axes.push_back(shape_util::normalized_axis(a, r));
        } else {
            for (std::size_t i = 0; i < n; ++i) p.axes.emplace_back(i);
        }
        p.axes.resize(n, spec::expr(0));
        if (c.has_input(4)) p.steps = c.values(4);
        p.steps.resize(n, spec::expr(1));
        return p;
    }
    /// The output length of one sliced axis of size dim (ONNX's clamping).
    static spec::expr length(const spec::expr& dim, const spec::expr& start, const spec::expr& end, const spec::expr& step) {
        const auto s0 = select(start < 0, start + dim, start);
        const auto e0 = select(end < 0, end + dim, end);
        const auto pos = step > 0;
        const auto s = select(pos, shape_util::emin(shape_util::emax(s0, spec::expr(0)), dim), shape_util::emin(shape_util::emax(s0, spec::expr(0)), dim - 1));
        const auto e = select(pos, shape_util::emin(shape_util::emax(e0, spec::expr(0)), dim), shape_util::emin(shape_util::emax(e0, spec::expr(-1)), dim - 1));
        // ceil((e - s) / step) clamped at 0, written so nothing overflows.
        return select(pos, select(e - s <= 0, spec::expr(0), (e - s - 1) / step + 1),
                      select(s - e <= 0, spec::expr(0), spec::expr(1) - (s - e - 1) / step));
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        std::vector<spec::constraint> out{{c.dim(1, 0) == c.dim(2, 0), "starts and ends have the same length"}};
        if (c.has_input(3)) {
            out.push_back({c.dim(3, 0) == c.dim(1, 0), "axes has the length of starts"});
            const auto axes = c.values(3);
            for (std::size_t i = 0; i < axes.size(); ++i) {
                out.push_back({shape_util::axis_in_range(axes[i], r), "axes[" + std::to_string(i) + "] is in [-rank, rank)"});
            }
        } else {
            out.push_back({c.dim(1, 0) <= spec::expr(r), "without axes, starts has at most rank entries"});
        }
        if (c.has_input(4)) {
            out.push_back({c.dim(4, 0) == c.dim(1, 0), "steps has the length of starts"});
            const auto steps = c.values(4);
            for (std::size_t i = 0; i < steps.size(); ++i) {
                out.push_back({steps[i] != 0, "steps[" + std::to_string(i) + "] is not 0"});
            }
        }
        auto d = shape_util::distinct_axes(symbols(c).axes, "axes");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto p = symbols(c);
        const auto dims = c.shape(0);
        std::vector<spec::expr> out;
        for (std::size_t j = 0; j < dims.size(); ++j) {
            spec::expr e = dims[j];
            for (std::size_t i = p.axes.size(); i-- > 0;) {
                e = select(p.axes[i] == spec::expr(j), length(dims[j], p.starts[i], p.ends[i], p.steps[i]), e);
            }
            out.push_back(e);
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        const auto ind = spec::types::indices.members();
        return {{{out}, {rank}}, {ind, {1}}, {ind, {1}}, {ind, {1}}, {ind, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// Concrete start and count of one axis (the same formula as `length`).
    static std::pair<std::int64_t, std::int64_t> resolve(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
        if (step == 0) throw shape_error(op_type, "step is 0");
        if (start < 0) start += dim;
        if (end < 0) end += dim;
        std::int64_t count = 0;
        if (step > 0) {
            start = std::clamp<std::int64_t>(start, 0, dim);
            end = std::clamp<std::int64_t>(end, 0, dim);
            count = end - start <= 0 ? 0 : (end - start - 1) / step + 1;
        } else {
            start = std::clamp<std::int64_t>(start, 0, dim - 1);
            end = std::clamp<std::int64_t>(end, -1, dim - 1);
            // floor((start - end - 1) / |step|) + 1; |step| as unsigned, so INT64_MIN does not overflow.
            count = start - end <= 0 ? 0
                                     : static_cast<std::int64_t>(static_cast<std::uint64_t>(start - end - 1) /
                                                                 (0 - static_cast<std::uint64_t>(step))) + 1;
        }
        return {start, count};
    }
    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> starts, std::span<const std::int64_t> ends,
                            std::optional<std::vector<std::int64_t>> axes = std::nullopt,
                            std::optional<std::vector<std::int64_t>> steps = std::nullopt) {
        static_assert(spec::dtype_accepted<Slice, T>::value);
        const auto in = shape_util::shape_of(x);
        const std::size_t r = in.size(), n = starts.size();
        if (ends.size() != n || (axes && axes->size() != n) || (steps && steps->size() != n)) {
            throw shape_error(op_type, "starts, ends, axes and steps must have the same length");
        }
        if (!axes && n > r) throw shape_error(op_type, "without axes, starts may have at most rank entries");
        std::vector<std::int64_t> first(r, 0), step(r, 1);
        shape_type out = in;
        std::vector<bool> seen(r, false);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = axes ? shape_util::checked_axis((*axes)[i], r, op_type) : i;
            if (seen[k]) throw shape_error(op_type, "axis " + std::to_string(k) + " is sliced twice");
            seen[k] = true;
            step[k] = steps ? (*steps)[i] : 1;
            const auto [s, count] = resolve(static_cast<std::int64_t>(in[k]), starts[i], ends[i], step[k]);
            first[k] = s;
            out[k] = static_cast<std::size_t>(count);
        }
        const auto st = detail::strides_of(in);
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0;  // first + o * step stays in [0, dim) when the count is positive
            for (std::size_t k = 0; k < r; ++k) {
                f += static_cast<std::size_t>(first[k] + static_cast<std::int64_t>(o[k]) * step[k]) * st[k];
            }
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto starts = shape_util::int_values(c.input(1), op_type), ends = shape_util::int_values(c.input(2), op_type);
        std::optional<std::vector<std::int64_t>> axes, steps;
        if (c.has_input(3)) axes = shape_util::int_values(c.input(3), op_type);
        if (c.has_input(4)) steps = shape_util::int_values(c.input(4), op_type);
        return compute<T>(x, starts, ends, axes, steps);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Slice>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Slice>(c, x);
    }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SLICE_HPP
// ---- end tensoracle/ops/shape/slice.hpp ----
// ---- begin tensoracle/ops/shape/concat.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_CONCAT_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_CONCAT_HPP
// tensoracle: Concat (the inputs joined along an axis).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct concat_attr {
    std::int64_t axis = 0;
    static constexpr std::array<std::string_view, 1> required{"axis"};
};

/// Concat-13(inputs...): joined along axis; every other dim must match.
struct Concat : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Concat";
    /// Every element of every input, in one tensor.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().facts([](std::span<const spec::value_facts> in, const spec::attribute_map&,
                                      std::span<const shape_type>) {
            spec::value_facts out = in.empty() ? spec::value_facts{} : in[0];
            for (std::size_t i = 1; i < in.size(); ++i) out.join(in[i]);
            return std::vector<spec::value_facts>{out};
        });
    }
    static constexpr int opset = 13;
    using attributes = concat_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"inputs", spec::types::all, {1, 8}, "T", false, true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"concat_result", spec::types::all, {1, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out{shape_util::concrete_fact(c.input_count() >= 1, "at least one input")};
        if (c.input_count() == 0) return out;
        const std::size_t r = c.rank(0);
        const auto a = c.attr("axis");
        out.push_back({shape_util::axis_in_range(a, r), "axis is in [-rank, rank)"});
        const auto an = shape_util::normalized_axis(a, r);
        for (std::size_t i = 1; i < c.input_count(); ++i) {
            out.push_back(shape_util::concrete_fact(c.rank(i) == r, "input " + std::to_string(i) + " has rank " +
                                                                    std::to_string(c.rank(i)) + ", input 0 has rank " + std::to_string(r)));
            if (c.rank(i) != r) return out;
            for (std::size_t j = 0; j < r; ++j) {
                out.push_back({an == spec::expr(j) || c.dim(i, j) == c.dim(0, j),
                               "input " + std::to_string(i) + " matches input 0 at axis " + std::to_string(j) + " (not the concat axis)"});
            }
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto an = shape_util::normalized_axis(c.attr("axis"), r);
        std::vector<spec::expr> out;
        for (std::size_t j = 0; j < r; ++j) {
            std::vector<spec::expr> ds;
            for (std::size_t i = 0; i < c.input_count(); ++i) ds.push_back(c.dim(i, j));
            out.push_back(select(an == spec::expr(j), shape_util::sum(ds), c.dim(0, j)));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const std::vector<const array<T>*>& xs, const attributes& a) {
        static_assert(spec::dtype_accepted<Concat, T>::value);
        if (xs.empty()) throw error(op_type, "needs at least one input");
        const auto s0 = shape_util::shape_of(*xs[0]);
        const std::size_t r = s0.size();
        if (r == 0) throw shape_error(op_type, "cannot concatenate scalars (rank 0)");
        const std::size_t k = shape_util::checked_axis(a.axis, r, op_type);
        shape_type out = s0;
        out[k] = 0;
        for (std::size_t i = 0; i < xs.size(); ++i) {
            const auto s = shape_util::shape_of(*xs[i]);
            if (s.size() != r) throw shape_error(op_type, "input " + std::to_string(i) + " has rank " + std::to_string(s.size()) + ", input 0 has rank " + std::to_string(r));
            for (std::size_t j = 0; j < r; ++j) {
                if (j != k && s[j] != s0[j]) {
                    throw shape_error(op_type, "input " + std::to_string(i) + " " + to_string(s) + " does not match input 0 " + to_string(s0) + " at axis " + std::to_string(j));
                }
            }
            out[k] += s[k];
        }
        auto y = array<T>::from_shape(out);
        // Row-major: each input contributes blocks of s[k] * inner elements per outer index.
        const std::size_t outer = element_count(std::span<const std::size_t>(s0).first(k));
        const std::size_t inner = element_count(std::span<const std::size_t>(s0).subspan(k + 1));
        std::size_t f = 0;
        for (std::size_t o = 0; o < outer; ++o) {
            for (const auto* x : xs) {
                const std::size_t block = x->shape()[k] * inner;
                std::copy(x->data() + o * block, x->data() + (o + 1) * block, y.data() + f);
                f += block;
            }
        }
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const std::vector<array<T>>& xs) {
        std::vector<const array<T>*> ptrs;
        for (const auto& x : xs) ptrs.push_back(&x);
        return compute<T>(ptrs, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::vector<array<T>> arrays;
            for (std::size_t i = 0; i < c.input_count(); ++i) arrays.push_back(c.input(i).as_array<T>());
            return tensor(run_typed<T>(c, arrays));
        }));
    }
    /// All inputs share one dtype: with floating data every input is lifted (the default differentiable inputs).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {run_typed<S>(c, x)};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::concat_attr, axis);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_CONCAT_HPP
// ---- end tensoracle/ops/shape/concat.hpp ----
// ---- begin tensoracle/ops/shape/split.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SPLIT_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SPLIT_HPP
// tensoracle: Split (the input cut into parts along an axis).
//
// Semantics chosen where ONNX leaves them open: Split-13 cannot see its node's
// output count: the reserved attribute `__num_outputs` (set by the
// interpreter / ONNX importer from the node's output count; 0, its default,
// means not given) gives the number of equal parts when `split` is absent.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/accessors.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>


namespace tensoracle::ops {

struct split_attr {
    std::int64_t axis = 0;
    /// Reserved: the number of outputs of the ONNX node (Split-13 has no
    /// attribute for it; the interpreter sets it from the node's output
    /// count). 0 = not called from a node: then `split` must be given.
    std::int64_t num_outputs = 0;
};

/// Split-13(input, split?): parts of the lengths in `split` along axis, or
/// `__num_outputs` equal parts (the axis length must divide evenly). A node
/// with `split` names one output per length, as ONNX's inference demands.
struct Split {
    static constexpr std::string_view op_type = "Split";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.nan_faithful().facts(spec::facts::selection_of(0)); }  // each part: some elements
    static constexpr int opset = 13;
    using attributes = split_attr;
    static constexpr std::string_view num_outputs_attribute = "__num_outputs";
    static constexpr std::int64_t max_outputs = 4096;  // implementation limit
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all, {1, 8}}, {"split", spec::types::int64, {1, 1}, "T1", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"outputs", spec::types::all, {1, 8}, "T", false, true}}};

    static std::size_t output_count(const spec::context& c) {
        if (c.has_input(1)) return c.element_count(1);
        const auto n = spec::parse_attributes<attributes>(c.attributes(), op_type).num_outputs;
        return n < 1 || n > max_outputs ? 0 : static_cast<std::size_t>(n);
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto a = c.attr("axis");
        std::vector<spec::constraint> out{{shape_util::axis_in_range(a, r), "axis is in [-rank, rank)"}};
        const auto dim = shape_util::pick(c.shape(0), shape_util::normalized_axis(a, r));
        if (c.has_input(1)) {
            const auto v = c.values(1);
            for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "split[" + std::to_string(i) + "] >= 0"});
            out.push_back({shape_util::sum(v) == dim, "the split lengths add up to the axis dim"});
            const auto n = c.attr(num_outputs_attribute);
            out.push_back({n == spec::expr(0) || n == c.dim(1, 0), "the node names one output per split length (len(split))"});
        } else {
            const auto n = c.attr(num_outputs_attribute);
            out.push_back({n >= 1 && n <= spec::expr(max_outputs), "__num_outputs (the node's output count; needed without `split`) is in [1, 4096]"});
            out.push_back({dim % shape_util::emax(n, spec::expr(1)) == 0, "the axis dim divides into __num_outputs equal parts"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto an = shape_util::normalized_axis(c.attr("axis"), r);
        const auto dims = c.shape(0);
        const auto dim = shape_util::pick(dims, an);
        std::vector<spec::expr> parts;
        if (c.has_input(1)) {
            parts = c.values(1);
        } else {
            parts.assign(output_count(c), dim / shape_util::emax(c.attr(num_outputs_attribute), spec::expr(1)));
        }
        spec::shape_exprs out;
        for (const auto& p : parts) {
            std::vector<spec::expr> s;
            for (std::size_t j = 0; j < r; ++j) s.push_back(select(an == spec::expr(j), p, dims[j]));
            out.push_back(s);
        }
        return out;
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return std::vector<dtype>(output_count(c), c.input_dtype(0)); }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static std::vector<array<T>> compute(const array<T>& x, const std::optional<std::vector<std::int64_t>>& split_lengths,
                                         const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Split, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.empty()) throw shape_error(op_type, "cannot split a scalar (rank 0)");
        const std::size_t k = shape_util::checked_axis(a.axis, in.size(), op_type);
        std::vector<std::size_t> lengths;
        if (split_lengths) {
            if (split_lengths->empty()) throw shape_error(op_type, "split is empty");
            std::size_t total = 0;
            for (const auto v : *split_lengths) {
                lengths.push_back(shape_util::to_dim(v, op_type, "a split length"));
                if (lengths.back() > in[k] - std::min(total, in[k])) {
                    throw shape_error(op_type, "split lengths exceed the axis dim " + std::to_string(in[k]));
                }
                total += lengths.back();
            }
            if (total != in[k]) {
                throw shape_error(op_type, "split lengths add up to " + std::to_string(total) + ", the axis dim is " + std::to_string(in[k]));
            }
        } else {
            if (a.num_outputs < 1 || a.num_outputs > max_outputs) {
                throw error(op_type, "__num_outputs must be in [1, 4096], got " + std::to_string(a.num_outputs));
            }
            const auto n = static_cast<std::size_t>(a.num_outputs);
            if (in[k] % n != 0) {
                throw shape_error(op_type, "axis dim " + std::to_string(in[k]) + " does not split into " + std::to_string(n) + " equal parts");
            }
            lengths.assign(n, in[k] / n);
        }
        const auto st = detail::strides_of(in);
        std::vector<array<T>> out;
        std::size_t offset = 0;
        for (const auto len : lengths) {
            shape_type s = in;
            s[k] = len;
            out.push_back(shape_util::gather_elements_by(x, s, op_type, [&](const shape_type& o) {
                return shape_util::ravel(o, st) + offset * st[k];  // o moved by offset along axis k
            }));
            offset += len;
        }
        return out;
    }
    template <class T>
    static std::vector<array<T>> run_typed(const spec::context& c, const array<T>& x) {
        std::optional<std::vector<std::int64_t>> lengths;
        if (c.has_input(1)) lengths = shape_util::int_values(c.input(1), op_type);
        return compute<T>(x, lengths, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::dispatch<spec::types::all, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::vector<tensor> out;
            for (const auto& y : run_typed<T>(c, c.input(0).as_array<T>())) out.emplace_back(y);
            return out;
        });
    }
    /// Every output copies part of the input (integer / bool data: one placeholder per output).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return std::vector<array<S>>(output_count(c));
        return run_typed<S>(c, x[0]);
    }
};

}  // namespace tensoracle::ops

// Split's attribute struct is adapted by hand: its reserved attribute is named
// "__num_outputs", which is not a valid (non-reserved) C++ member name.
namespace boost::hana {
template <>
struct accessors_impl<tensoracle::ops::split_attr> {
    template <int = 0>  // built only where used, as TENSORACLE_ADAPT_ATTRIBUTES does
    static constexpr auto apply() {
        return boost::hana::make_tuple(
            boost::hana::make_pair(BOOST_HANA_STRING("axis"), [](auto&& s) -> decltype(auto) { return (s.axis); }),
            boost::hana::make_pair(BOOST_HANA_STRING("__num_outputs"), [](auto&& s) -> decltype(auto) { return (s.num_outputs); }));
    }
};
}  // namespace boost::hana
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SPLIT_HPP
// ---- end tensoracle/ops/shape/split.hpp ----
// ---- begin tensoracle/ops/shape/expand.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_EXPAND_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_EXPAND_HPP
// tensoracle: Expand (the input broadcast to a shape).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

/// Expand-13(input, shape): input broadcast with `shape` (bidirectionally:
/// a 1 in shape keeps the input's dim).
struct Expand : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Expand";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all}, {"shape", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto v = c.values(1);
        const std::size_t r = c.rank(0), R = std::max(r, v.size());
        std::vector<spec::constraint> out;
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "shape[" + std::to_string(i) + "] >= 0"});
        for (std::size_t k = 0; k < R; ++k) {
            if (k + r < R || k + v.size() < R) continue;
            const auto a = c.dim(0, k + r - R), b = v[k + v.size() - R];
            out.push_back({a == b || a == 1 || b == 1, "input and shape broadcast at output axis " + std::to_string(k)});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto v = c.values(1);
        const std::size_t r = c.rank(0), R = std::max(r, v.size());
        std::vector<spec::expr> out;
        for (std::size_t k = 0; k < R; ++k) {
            if (k + r < R) {
                out.push_back(v[k + v.size() - R]);
            } else if (k + v.size() < R) {
                out.push_back(c.dim(0, k + r - R));
            } else {
                const auto a = c.dim(0, k + r - R), b = v[k + v.size() - R];
                out.push_back(select(a == 1, b, a));
            }
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(0, rank)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> shape) {
        static_assert(spec::dtype_accepted<Expand, T>::value);
        shape_type target;
        for (const auto v : shape) target.push_back(shape_util::to_dim(v, op_type, "a shape value"));
        const std::vector<shape_type> shapes{shape_util::shape_of(x), target};
        const auto out = detail::broadcast_shapes(shapes, op_type);
        const auto off = detail::broadcast_offsets({shapes[0]}, out);
        auto y = array<T>::from_shape(out);
        for (std::size_t f = 0; f < y.size(); ++f) y.data()[f] = x.data()[off[0][f]];
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, shape_util::int_values(c.input(1), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Expand>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Expand>(c, x);
    }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_EXPAND_HPP
// ---- end tensoracle/ops/shape/expand.hpp ----
// ---- begin tensoracle/ops/shape/tile.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_TILE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_TILE_HPP
// tensoracle: Tile (the input repeated along each axis).

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

/// Tile-13(input, repeats): output dim i is dim i * repeats[i].
struct Tile : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Tile";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all}, {"repeats", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out{{c.dim(1, 0) == spec::expr(c.rank(0)), "repeats has one entry per input axis"}};
        const auto v = c.values(1);
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "repeats[" + std::to_string(i) + "] >= 0"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto v = c.values(1);
        std::vector<spec::expr> out;
        for (std::size_t i = 0; i < c.rank(0); ++i) out.push_back(c.dim(0, i) * (i < v.size() ? v[i] : spec::expr(1)));
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> repeats) {
        static_assert(spec::dtype_accepted<Tile, T>::value);
        const auto in = shape_util::shape_of(x);
        if (repeats.size() != in.size()) {
            throw shape_error(op_type, "repeats has " + std::to_string(repeats.size()) + " entries; the input has rank " + std::to_string(in.size()));
        }
        shape_type out(in.size());
        for (std::size_t i = 0; i < in.size(); ++i) {
            const auto rep = shape_util::to_dim(repeats[i], op_type, "repeats[" + std::to_string(i) + "]");
            if (in[i] != 0 && rep > std::numeric_limits<std::size_t>::max() / in[i]) throw shape_error(op_type, "output dim overflows");
            out[i] = in[i] * rep;
        }
        const auto st = detail::strides_of(in);
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0;
            for (std::size_t i = 0; i < o.size(); ++i) f += (o[i] % in[i]) * st[i];
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, shape_util::int_values(c.input(1), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Tile>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Tile>(c, x);
    }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_TILE_HPP
// ---- end tensoracle/ops/shape/tile.hpp ----
// ---- begin tensoracle/ops/shape/pad.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_PAD_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_PAD_HPP
// tensoracle: Pad (each axis padded or cropped: constant, edge or reflect).
//
// Semantics chosen where ONNX leaves them open: negative pads crop; reflect/edge
// read the original input (the index map is i = o - pad_begin, then reflected /
// clamped at the input borders); reflect needs pads <= dim - 1 (as onnxruntime),
// edge needs dim >= 1 where it pads.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct pad_attr {
    std::string mode = "constant";
};

/// Pad-13(data, pads, constant_value?): pads = [x1_begin, ..., xn_begin,
/// x1_end, ..., xn_end]; negative pads crop. Output index o reads input
/// index i = o - begin: constant fills outside [0, dim); edge clamps to the
/// border; reflect mirrors without repeating the border (needs every pad <=
/// dim - 1, as onnxruntime). constant_value (a scalar, default 0) is used only
/// in constant mode.
struct Pad : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Pad";
    static constexpr int opset = 13;
    using attributes = pad_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"data", spec::types::all},
                                                             {"pads", spec::types::int64, {1, 1}, "T1"},
                                                             {"constant_value", spec::types::all, {0, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::string mode = spec::parse_attributes<attributes>(c.attributes(), op_type).mode;
        const std::size_t r = c.rank(0);
        std::vector<spec::constraint> out{
            shape_util::concrete_fact(mode == "constant" || mode == "reflect" || mode == "edge",
                                  "mode is constant, reflect or edge (got '" + mode + "')"),
            {c.dim(1, 0) == spec::expr(2 * r), "pads has 2 * rank entries"}};
        if (c.has_input(2) && c.rank(2) == 1) out.push_back({c.dim(2, 0) == 1, "constant_value is a single value"});
        const auto p = c.values(1);
        if (p.size() != 2 * r) return out;
        for (std::size_t j = 0; j < r; ++j) {
            const auto d = c.dim(0, j), b = p[j], e = p[j + r];
            out.push_back({d + b + e >= 0, "axis " + std::to_string(j) + " keeps a non-negative size after cropping"});
            if (mode == "reflect") {
                out.push_back({b <= d - 1 && e <= d - 1, "reflect pads of axis " + std::to_string(j) + " are at most dim - 1"});
            } else if (mode == "edge") {
                out.push_back({(b <= 0 && e <= 0) || d >= 1, "edge padding of axis " + std::to_string(j) + " needs a non-empty axis"});
            }
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto p = c.values(1);
        const std::size_t r = c.rank(0);
        std::vector<spec::expr> out;
        for (std::size_t j = 0; j < r; ++j) out.push_back(c.dim(0, j) + p[j] + p[j + r]);
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}, {{out}, {0, 1}}};  // constant_value: a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> pads, T value, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Pad, T>::value);
        const auto in = shape_util::shape_of(x);
        const std::size_t r = in.size();
        const std::string& mode = a.mode;
        if (mode != "constant" && mode != "reflect" && mode != "edge") {
            throw error(op_type, "mode must be constant, reflect or edge, got '" + mode + "'");
        }
        if (pads.size() != 2 * r) {
            throw shape_error(op_type, "pads has " + std::to_string(pads.size()) + " entries; needs 2 * rank = " + std::to_string(2 * r));
        }
        shape_type out(r);
        constexpr std::int64_t limit = std::int64_t{1} << 40;  // keeps the index arithmetic far from overflow
        for (std::size_t j = 0; j < r; ++j) {
            const auto d = static_cast<std::int64_t>(in[j]);
            const std::int64_t b = pads[j], e = pads[j + r];
            if (b > limit || e > limit || b < -limit || e < -limit) throw shape_error(op_type, "pads are too large");
            if (d + b + e < 0) throw shape_error(op_type, "pads crop axis " + std::to_string(j) + " below size 0");
            if (mode == "reflect" && (b > d - 1 || e > d - 1)) {
                throw shape_error(op_type, "reflect pads of axis " + std::to_string(j) + " must be at most dim - 1 = " + std::to_string(d - 1));
            }
            if (mode == "edge" && d == 0 && (b > 0 || e > 0)) {
                throw shape_error(op_type, "edge padding of axis " + std::to_string(j) + " needs a non-empty axis");
            }
            out[j] = static_cast<std::size_t>(d + b + e);
        }
        const auto st = detail::strides_of(in);
        auto y = array<T>::from_shape(out);
        // The mode once (checked above), not a string compare per element.
        enum class fill { constant, edge, reflect };
        const fill how = mode == "constant" ? fill::constant : mode == "edge" ? fill::edge : fill::reflect;
        shape_type o(r, 0);  // the output multi-index of offset f
        for (std::size_t f = 0; f < y.size(); ++f, shape_util::next_index(o, out)) {
            std::size_t src = 0;
            bool inside = true;
            for (std::size_t j = 0; j < r && inside; ++j) {
                const auto d = static_cast<std::int64_t>(in[j]);
                std::int64_t i = static_cast<std::int64_t>(o[j]) - pads[j];
                if (i < 0 || i >= d) {
                    if (how == fill::constant) {
                        inside = false;
                        break;
                    }
                    if (how == fill::edge) i = std::clamp<std::int64_t>(i, 0, d - 1);
                    if (how == fill::reflect) i = i < 0 ? -i : 2 * (d - 1) - i;
                }
                if (i < 0 || i >= d) throw error(op_type, "internal: padded index out of range");
                src += static_cast<std::size_t>(i) * st[j];
            }
            y.data()[f] = inside ? x.data()[src] : value;
        }
        return y;
    }
    /// constant_value is nullptr when absent.
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x, const array<T>* constant_value) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto pads = shape_util::int_values(c.input(1), op_type);
        T value{};
        if (constant_value) {
            const std::size_t n = constant_value->size();
            if (n != 1) throw shape_error(op_type, "constant_value must hold one value, got " + std::to_string(n));
            value = constant_value->data()[0];
        }
        return compute<T>(x, pads, value, a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::optional<array<T>> value;
            if (c.has_input(2)) value = c.input(2).as_array<T>();
            return tensor(run_typed<T>(c, c.input(0).as_array<T>(), value ? &*value : nullptr));
        }));
    }
    /// Differentiable in data and, when present, constant_value (its tangent
    /// reaches the constant-mode padding; reflect / edge only copy data).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {run_typed<S>(c, x[0], c.has_input(2) ? &x[2] : nullptr)};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().weights({2})
            .choice("mode", {std::string("constant"), std::string("reflect"), std::string("edge")}, 0.8)
            .facts_with_output_shapes(padded_facts);
    }
    /// Negative pads crop, so of the input's elements only a subset is sure to
    /// stay. Constant mode adds elements equal to constant_value (0 when absent;
    /// a graph's constant_value input is whatever the search makes it), and
    /// adds some wherever an output dim is longer than the input's, or where a
    /// pad is positive: its first or last positions along that axis are
    /// padding even when a negative pad crops the axis back to its length
    /// (pads [1, -1] shift the data out of a one-element axis).
    static std::vector<spec::value_facts> padded_facts(std::span<const spec::value_facts> in,
                                                       const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
        spec::value_facts out = in.empty() ? spec::value_facts{} : in[0].selection();
        if (spec::parse_attributes<attributes>(attrs, op_type).mode != "constant") return {out};
        if (in.size() > 2 && in[2].is_unknown()) return {spec::value_facts{}};
        bool grows = false;
        if (!in.empty() && shapes.size() > in.size() && shapes[0].size() == shapes[in.size()].size()) {
            for (std::size_t d = 0; d < shapes[0].size(); ++d) grows = grows || shapes[in.size()][d] > shapes[0][d];
            const bool empty = element_count(shapes[in.size()]) == 0;
            if (in.size() > 1 && !empty) {
                for (const double p : in[1].forced) grows = grows || p > 0.0;
            }
        }
        const spec::value_facts fill = in.size() > 2 ? in[2] : spec::value_facts::constant(0.0);
        if (!grows) return {out.join(fill.selection())};  // maybe some padding, maybe none
        return {out.join(fill)};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::pad_attr, mode);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_PAD_HPP
// ---- end tensoracle/ops/shape/pad.hpp ----
// ---- begin tensoracle/ops/shape/gather.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_GATHER_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_GATHER_HPP
// tensoracle: Gather (slices of the data at indices along an axis).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct gather_attr {
    std::int64_t axis = 0;
};

/// Gather-13(data, indices): out[i_0..i_{a-1}, j.., i_{a+1}..] =
/// data[i_0..i_{a-1}, indices[j..], i_{a+1}..]; indices in [-dim, dim),
/// negative ones count from the end; out-of-range indices throw.
struct Gather : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Gather";
    static constexpr int opset = 13;
    using attributes = gather_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all, {1, 8}}, {"indices", spec::types::indices, {}, "Tind"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0), q = c.rank(1);
        return {{shape_util::axis_in_range(c.attr("axis"), r), "axis is in [-rank, rank)"},
                shape_util::concrete_fact(r + q - 1 <= shape_detail::max_rank, "the output rank is at most 8")};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0), q = c.rank(1);
        const auto an = shape_util::normalized_axis(c.attr("axis"), r);
        const auto d = c.shape(0), id = c.shape(1);
        std::vector<spec::expr> out;
        for (std::size_t k = 0; k + 1 < r + q; ++k) {
            const spec::expr kk(k);
            out.push_back(select(kk < an, shape_util::pick(d, kk),
                                 select(kk < an + spec::expr(q), shape_util::pick(id, kk - an), shape_util::pick(d, kk - spec::expr(q) + 1))));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(1, std::min(rank + 1, shape_detail::max_rank))},
                {spec::types::indices.members(), shape_util::ranks_between(0, rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const array<std::int64_t>& indices, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Gather, T>::value);
        const auto in = shape_util::shape_of(x), is = shape_util::shape_of(indices);
        if (in.empty()) throw shape_error(op_type, "data must have rank >= 1");
        const std::size_t k = shape_util::checked_axis(a.axis, in.size(), op_type);
        const auto dim = static_cast<std::int64_t>(in[k]);
        std::vector<std::size_t> idx(indices.size());
        for (std::size_t f = 0; f < indices.size(); ++f) {
            const std::int64_t v = indices.data()[f];
            if (v < -dim || v >= dim) {
                throw error(op_type, "index " + std::to_string(v) + " is out of range for axis " + std::to_string(k) +
                                         " of size " + std::to_string(dim) + " (allowed: [" + std::to_string(-dim) + ", " +
                                         std::to_string(dim - 1) + "])");
            }
            idx[f] = static_cast<std::size_t>(v < 0 ? v + dim : v);
        }
        shape_type out(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(k));
        out.insert(out.end(), is.begin(), is.end());
        out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(k) + 1, in.end());
        const auto st = detail::strides_of(in), ist = detail::strides_of(is);
        const std::size_t q = is.size();
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0, fi = 0;
            for (std::size_t j = 0; j < k; ++j) f += o[j] * st[j];
            for (std::size_t j = 0; j < q; ++j) fi += o[k + j] * ist[j];
            f += idx[fi] * st[k];
            for (std::size_t j = k + 1; j < in.size(); ++j) f += o[j + q - 1] * st[j];
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return compute<T>(x, c.input(1).to<std::int64_t>(), a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Gather>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Gather>(c, x);
    }
    template <int = 0>
    static spec::hints hints() {
        // Indices into the (solved) axis dim, negative ones included.
        return spec::hints{}.nan_faithful().facts(spec::facts::selection_of(0)).after_solving(1, [](rng& g, const spec::context& c, dtype d, const shape_type& s) {
            return shape_detail::random_indices(g, c, d, s);
        });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::gather_attr, axis);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_GATHER_HPP
// ---- end tensoracle/ops/shape/gather.hpp ----
// ---- begin tensoracle/ops/shape/gather_elements.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_GATHER_ELEMENTS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_GATHER_ELEMENTS_HPP
// tensoracle: GatherElements (elements of the data at per-element indices along an axis).
//
// Semantics chosen where ONNX leaves them open: GatherElements needs indices
// dims <= data dims off the axis (onnxruntime).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct gather_elements_attr {
    std::int64_t axis = 0;
};

/// GatherElements-13(data, indices): out[i] = data[i with i[axis] replaced by
/// indices[i]]; same ranks, indices dims <= data dims off the axis (as
/// onnxruntime); indices in [-dim, dim), out-of-range ones throw.
struct GatherElements : spec::dtype_of_input<0>, spec::shape_of_input<1> {
    static constexpr std::string_view op_type = "GatherElements";
    static constexpr int opset = 13;
    using attributes = gather_elements_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all, {1, 8}}, {"indices", spec::types::indices, {1, 8}, "Tind"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {1, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto a = c.attr("axis");
        std::vector<spec::constraint> out{{shape_util::axis_in_range(a, r), "axis is in [-rank, rank)"},
                                          shape_util::concrete_fact(c.rank(1) == r, "indices has the rank of data")};
        if (c.rank(1) != r) return out;
        const auto an = shape_util::normalized_axis(a, r);
        for (std::size_t j = 0; j < r; ++j) {
            out.push_back({an == spec::expr(j) || c.dim(1, j) <= c.dim(0, j),
                           "indices dim " + std::to_string(j) + " <= data dim (off the axis)"});
        }
        return out;
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {spec::types::indices.members(), {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const array<std::int64_t>& indices, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<GatherElements, T>::value);
        const auto in = shape_util::shape_of(x), is = shape_util::shape_of(indices);
        if (in.empty()) throw shape_error(op_type, "data must have rank >= 1");
        const std::size_t k = shape_util::checked_axis(a.axis, in.size(), op_type);
        if (is.size() != in.size()) throw shape_error(op_type, "indices rank " + std::to_string(is.size()) + " differs from data rank " + std::to_string(in.size()));
        for (std::size_t j = 0; j < in.size(); ++j) {
            if (j != k && is[j] > in[j]) throw shape_error(op_type, "indices " + to_string(is) + " exceeds data " + to_string(in) + " at axis " + std::to_string(j));
        }
        const auto dim = static_cast<std::int64_t>(in[k]);
        const auto st = detail::strides_of(in);
        const auto ist = detail::strides_of(is);
        return shape_util::gather_elements_by(x, is, op_type, [&](const shape_type& o) {
            const std::int64_t v = indices.data()[shape_util::ravel(o, ist)];
            if (v < -dim || v >= dim) {
                throw error(op_type, "index " + std::to_string(v) + " is out of range for axis " + std::to_string(k) +
                                         " of size " + std::to_string(dim));
            }
            // o with its axis-k coordinate replaced by the index read
            return shape_util::ravel(o, st) - o[k] * st[k] + static_cast<std::size_t>(v < 0 ? v + dim : v) * st[k];
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return compute<T>(x, c.input(1).to<std::int64_t>(), a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<GatherElements>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<GatherElements>(c, x);
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().facts(spec::facts::selection_of(0)).after_solving(1, [](rng& g, const spec::context& c, dtype d, const shape_type& s) {
            return shape_detail::random_indices(g, c, d, s);
        });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::gather_elements_attr, axis);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_GATHER_ELEMENTS_HPP
// ---- end tensoracle/ops/shape/gather_elements.hpp ----
// ---- begin tensoracle/ops/shape/trilu.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_TRILU_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_TRILU_HPP
// tensoracle: Trilu (the upper or lower triangle of the last two dims, the rest zeroed).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct trilu_attr {
    std::int64_t upper = 1;
};

/// Trilu-14(input, k?): keeps, in each of the last two dims' matrices, the
/// elements with j - i >= k (upper != 0) or j - i <= k (upper == 0); zeroes
/// the rest. k is a scalar (rank 0, or one value), default 0.
struct Trilu : spec::like_input<0> {
    static constexpr std::string_view op_type = "Trilu";
    static constexpr int opset = 14;
    using attributes = trilu_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all, {2, 8}}, {"k", spec::types::int64, {0, 1}, "T1", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {2, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (c.has_input(1) && c.rank(1) == 1) return {{c.dim(1, 0) == 1, "k is a single value"}};
        return {};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank < 2) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {0, 1}}};  // k: a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::int64_t k = 0, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Trilu, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.size() < 2) throw shape_error(op_type, "input must have rank >= 2, got " + std::to_string(in.size()));
        const std::size_t rows = in[in.size() - 2], cols = in[in.size() - 1];
        auto y = array<T>::from_shape(in);
        for (std::size_t f = 0; f < x.size(); ++f) {
            const auto i = static_cast<std::int64_t>(f / cols % rows), j = static_cast<std::int64_t>(f % cols);
            const bool keep = a.upper != 0 ? j - i >= k : j - i <= k;
            y.data()[f] = keep ? x.data()[f] : T{};
        }
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        std::int64_t k = 0;
        if (c.has_input(1)) {
            const auto v = shape_util::int_values(c.input(1), op_type);
            if (v.size() != 1) throw shape_error(op_type, "k must hold one value, got " + std::to_string(v.size()));
            k = v[0];
        }
        return compute<T>(x, k, a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Trilu>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Trilu>(c, x);
    }
    template <int = 0>
    static spec::hints hints() {
        // Zeros where the triangle leaves elements out (every matrix but 1 x 1 and the widest k).
        return spec::hints{}.nan_faithful().flag("upper").facts([](std::span<const spec::value_facts> in, const spec::attribute_map&,
                                                    std::span<const shape_type> shapes) {
            spec::value_facts out = in.empty() ? spec::value_facts{} : in[0];
            const bool single = !shapes.empty() && shapes[0].size() >= 2 && shapes[0][shapes[0].size() - 1] == 1 &&
                                shapes[0][shapes[0].size() - 2] == 1;
            if (!single) out.force(0.0);
            return std::vector<spec::value_facts>{out};
        });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::trilu_attr, upper);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_TRILU_HPP
// ---- end tensoracle/ops/shape/trilu.hpp ----
// ---- begin tensoracle/ops/shape/shape.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SHAPE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SHAPE_HPP
// tensoracle: Shape (a slice of the input's dims as an int64 vector).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct shape_attr {
    std::int64_t start = 0;
    std::optional<std::int64_t> end;
};

/// Shape-15(data): dims[start:end] as int64; negative start/end count from
/// the end (+ rank), then both are clamped to [0, rank]; empty if end <= start.
struct Shape {
    static constexpr std::string_view op_type = "Shape";
    static constexpr int opset = 15;
    using attributes = shape_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"shape", spec::types::int64, {1, 1}, "T1"}}};

    static spec::expr clamped(const spec::expr& v, std::size_t r) {
        return shape_util::emin(shape_util::emax(select(v < 0, v + spec::expr(r), v), spec::expr(0)), spec::expr(r));
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto s = clamped(c.attr("start"), r);
        const auto e = c.has_attribute("end") ? clamped(c.attr("end"), r) : spec::expr(r);
        return {{shape_util::emax(e - s, spec::expr(0))}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context&) { return {dtype::i64}; }
    // Facts: the dims it returns, known once shapes are solved (Sinh of a Shape in float16 may overflow).
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                spec::value_facts f;
                if (shapes.empty()) return std::vector<spec::value_facts>{f};
                const auto a = spec::parse_attributes<attributes>(attrs, op_type);
                const auto r = static_cast<std::int64_t>(shapes[0].size());
                auto clamp = [r](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + r : v, 0, r); };
                const std::int64_t s = clamp(a.start), e = a.end ? clamp(*a.end) : r;
                for (std::int64_t i = s; i < e; ++i) {
                    const auto d = static_cast<double>(shapes[0][static_cast<std::size_t>(i)]);
                    if (i == s) f = spec::value_facts::constant(d);
                    f.force(d);
                }
                return std::vector<spec::value_facts>{f};
            });
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (out != dtype::i64 || rank != 1) return {};
        return {{spec::types::all.members(), shape_util::ranks_between(0, shape_detail::max_rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<std::int64_t> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Shape, T>::value);
        const auto r = static_cast<std::int64_t>(x.dimension());
        auto clamp = [r](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + r : v, 0, r); };
        const std::int64_t s = clamp(a.start), e = a.end ? clamp(*a.end) : r;
        std::vector<std::int64_t> dims;
        for (std::int64_t i = s; i < e; ++i) dims.push_back(static_cast<std::int64_t>(x.shape()[static_cast<std::size_t>(i)]));
        auto y = array<std::int64_t>::from_shape({dims.size()});
        std::copy(dims.begin(), dims.end(), y.data());
        return y;
    }
    // Not differentiable: the output is int64 dims, which no element value of the input changes.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), a));
        }));
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::shape_attr, start, end);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SHAPE_HPP
// ---- end tensoracle/ops/shape/shape.hpp ----
// ---- begin tensoracle/ops/shape/size.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SIZE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SIZE_HPP
// tensoracle: Size (the input's element count as an int64 scalar).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

/// Size-13(data): the element count as an int64 scalar.
struct Size {
    static constexpr std::string_view op_type = "Size";
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"size", spec::types::int64, {0, 0}, "T1"}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context&) { return {{}}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context&) { return {dtype::i64}; }
    // Facts: the element count, known once shapes are solved.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map&, std::span<const shape_type> shapes) {
                if (shapes.empty()) return std::vector<spec::value_facts>{spec::value_facts{}};
                double n = 1.0;
                for (const auto d : shapes[0]) n *= static_cast<double>(d);
                return std::vector<spec::value_facts>{spec::value_facts::constant(n)};
            });
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (out != dtype::i64 || rank != 0) return {};
        return {{spec::types::all.members(), shape_util::ranks_between(0, shape_detail::max_rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<std::int64_t> compute(const array<T>& x) {
        static_assert(spec::dtype_accepted<Size, T>::value);
        auto y = array<std::int64_t>::from_shape(shape_type{});
        y.data()[0] = static_cast<std::int64_t>(x.size());
        return y;
    }
    // Not differentiable: the output is the int64 element count, which no element value of the input changes.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>()));
        }));
    }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SIZE_HPP
// ---- end tensoracle/ops/shape/size.hpp ----
// ---- begin tensoracle/ops/shape/constant_of_shape.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_CONSTANT_OF_SHAPE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_CONSTANT_OF_SHAPE_HPP
// tensoracle: ConstantOfShape (a tensor of a given shape filled with one value).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct constant_of_shape_attr {
    tensor value = tensor::zeros(dtype::f32, {1});
};

/// ConstantOfShape-9(input): a tensor of shape `input` (int64, empty = scalar)
/// filled with the one element of attribute `value` (default float32 0); the
/// output dtype is value's dtype.
struct ConstantOfShape {
    static constexpr std::string_view op_type = "ConstantOfShape";
    static constexpr int opset = 9;
    using attributes = constant_of_shape_attr;
    static constexpr spec::dtype_set value_types = spec::dtypes_of(dtype::f16, dtype::f32, dtype::f64, dtype::i8, dtype::i16, dtype::i32,
                                                                   dtype::i64, dtype::u8, dtype::boolean);
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", value_types, {}, "T2"}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        std::vector<spec::constraint> out{
            shape_util::concrete_fact(a.value.size() == 1, "value holds exactly one element"),
            shape_util::concrete_fact(value_types.contains(a.value.element_dtype()),
                                  "value's dtype is one of " + value_types.to_string() + " (got " + std::string(name(a.value.element_dtype())) + ")")};
        const auto v = c.values(0);
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "input[" + std::to_string(i) + "] >= 0"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.values(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        return {spec::parse_attributes<attributes>(c.attributes(), op_type).value.element_dtype()};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t) {
        if (!value_types.contains(out)) return {};
        return {{{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// The typed kernel: T is the output (value) type; the shape is int64.
    template <class T>
    static array<T> compute(std::span<const std::int64_t> shape, T value) {
        static_assert(element_type<T> && value_types.contains(dtype_of<T>),
                      "ConstantOfShape: T is the element type of `value` and must be one of its allowed dtypes");
        shape_type s;
        for (const auto v : shape) s.push_back(shape_util::to_dim(v, op_type, "a shape value"));
        auto y = array<T>::from_shape(s);
        const std::size_t n = element_count(s, op_type);
        std::fill(y.data(), y.data() + n, value);
        return y;
    }
    // Not differentiable: the only input is an int64 shape; the fill value is an attribute, not an input.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (a.value.size() != 1) throw error(op_type, "value must hold exactly one element, got " + std::to_string(a.value.size()));
        const auto shape = shape_util::int_values(c.input(0), op_type);
        return detail::single_output(detail::dispatch<value_types>(a.value.element_dtype(), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(shape, a.value.values<T>()[0]));
        }));
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.tensor_attribute(
            "value",
            [](rng& g, std::optional<dtype> d, const std::optional<shape_type>&) {
                return spec::random_values(g, d ? *d : detail::pick_dtype(g, value_types), {1}, -9, 9);
            },
            0.7)
            .facts([](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type>) {
                // Every element is `value` (0 when not given), whatever the shape input.
                double v = 0.0;
                if (const auto it = attrs.find("value"); it != attrs.end()) {
                    if (const auto* t = std::get_if<tensor>(&it->second); t != nullptr && t->size() == 1) {
                        v = t->to<double>().data()[0];
                    }
                }
                return std::vector<spec::value_facts>{spec::value_facts::constant(v)};
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::constant_of_shape_attr, value);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_CONSTANT_OF_SHAPE_HPP
// ---- end tensoracle/ops/shape/constant_of_shape.hpp ----
// ---- begin tensoracle/ops/shape/range.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_RANGE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_RANGE_HPP
// tensoracle: Range (the sequence start, start + delta, ... up to limit).
//
// Semantics chosen where ONNX leaves them open: Range on floats computes the
// count and the values start + i * delta in double and rounds once to T.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>


namespace tensoracle::ops {

/// Range-11(start, limit, delta): start + i * delta for i in
/// [0, max(ceil((limit - start) / delta), 0)). delta must be non-zero. Integer
/// inputs are symbols (the length is symbolic); float inputs are computed in
/// double (count and values) and rounded once to T.
struct Range : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Range";
    static constexpr int opset = 11;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::dtypes_of(dtype::f32, dtype::f64, dtype::i16, dtype::i32, dtype::i64);
    static constexpr std::array<spec::value_spec, 3> inputs{{{"start", types, {0, 0}}, {"limit", types, {0, 0}}, {"delta", types, {0, 0}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", types, {1, 1}}}};
    static constexpr std::int64_t max_elements = std::int64_t{1} << 40;  // implementation limit

    static bool symbolic(const spec::context& c) { return c.input_dtype(0) == dtype::i64 || c.input_dtype(0) == dtype::i32; }
    /// The concrete element count; throws on delta == 0, non-finite inputs, overflow.
    static std::int64_t count(const tensor& start, const tensor& limit, const tensor& delta) {
        if (info(start.element_dtype()).is_floating) {
            const double s = start.value_as_double(0), l = limit.value_as_double(0), d = delta.value_as_double(0);
            if (!std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) throw error(op_type, "start, limit and delta must be finite");
            if (d == 0.0) throw error(op_type, "delta is 0");
            const double n = std::ceil((l - s) / d);
            if (!(n < static_cast<double>(max_elements))) throw error(op_type, "the output would have more than 2^40 elements");
            return n > 0 ? static_cast<std::int64_t>(n) : 0;
        }
        const auto s = start.to<std::int64_t>().data()[0], l = limit.to<std::int64_t>().data()[0], d = delta.to<std::int64_t>().data()[0];
        if (d == 0) throw error(op_type, "delta is 0");
        std::int64_t diff = 0;
        if (__builtin_sub_overflow(l, s, &diff)) throw error(op_type, "limit - start overflows int64");
        std::int64_t n = 0;
        if (d > 0) {
            n = diff <= 0 ? 0 : (diff - 1) / d + 1;
        } else {
            // ceil(|diff| / |d|) = floor((|diff| - 1) / |d|) + 1; |d| as unsigned, so INT64_MIN does not overflow.
            n = diff >= 0 ? 0 : static_cast<std::int64_t>(static_cast<std::uint64_t>(-(diff + 1)) / (0 - static_cast<std::uint64_t>(d))) + 1;
        }
        if (n > max_elements) throw error(op_type, "the output would have more than 2^40 elements");
        return n;
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (symbolic(c)) {
            return {{c.value(2, 0) != 0, "delta is not 0"}};
        }
        const double d = c.input(2).value_as_double(0);
        return {shape_util::concrete_fact(d != 0.0, "delta is not 0")};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        if (symbolic(c)) {
            const auto s = c.value(0, 0), l = c.value(1, 0), d = c.value(2, 0);
            const auto diff = l - s;
            return {{select(d > 0, select(diff <= 0, spec::expr(0), (diff - 1) / d + 1),
                            select(diff >= 0, spec::expr(0), spec::expr(1) - (spec::expr(-1) - diff) / d))}};
        }
        return {{spec::expr(count(c.input(0), c.input(1), c.input(2)))}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank != 1) return {};
        return {{{out}, {0}}, {{out}, {0}}, {{out}, {0}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(T start, T limit, T delta) {
        static_assert(spec::dtype_accepted<Range, T>::value);
        const auto scalar = [](T v) {
            auto a = array<T>::from_shape(shape_type{});
            a.data()[0] = v;
            return tensor(a);
        };
        const auto n = static_cast<std::size_t>(count(scalar(start), scalar(limit), scalar(delta)));
        auto y = array<T>::from_shape({n});
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (std::is_floating_point_v<T>) {
                y.data()[i] = static_cast<T>(static_cast<double>(start) + static_cast<double>(i) * static_cast<double>(delta));
            } else {  // stays within [start, limit): no overflow
                y.data()[i] = static_cast<T>(static_cast<std::int64_t>(start) + static_cast<std::int64_t>(i) * static_cast<std::int64_t>(delta));
            }
        }
        return y;
    }
    // Not differentiable: a generator of positions / index sequences whose length steps with its inputs; kept constant.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).values<T>()[0], c.input(1).values<T>()[0], c.input(2).values<T>()[0]));
        }));
    }
    template <int = 0>
    static spec::hints hints() {
        // Floating (and int16) ranges read their data: start, limit, delta giving 1..10 elements.
        auto scalar = [](std::size_t which) {
            return [which](rng& g, const spec::context& c) {
                const double start = static_cast<double>(g.integer(-10, 10));
                const double delta = g.bernoulli(0.5) ? static_cast<double>(g.integer(1, 4)) : -static_cast<double>(g.integer(1, 4));
                const double v = which == 0 ? start : which == 2 ? delta : start + delta * static_cast<double>(g.integer(1, 10));
                auto t = array<double>::from_shape(shape_type{});
                t.data()[0] = v;
                return tensor::from_array_as(t, c.input_dtype(which));
            };
        };
        return spec::hints{}.before_solving(0, scalar(0)).before_solving(1, scalar(1)).before_solving(2, scalar(2));
    }
};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_RANGE_HPP
// ---- end tensoracle/ops/shape/range.hpp ----
// ---- begin tensoracle/ops/shape/depth_to_space.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_DEPTH_TO_SPACE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_DEPTH_TO_SPACE_HPP
// tensoracle: DepthToSpace (blocks of channels moved into height and width).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct depth_to_space_attr {
    std::int64_t blocksize = 1;
    std::string mode = "DCR";
    static constexpr std::array<std::string_view, 1> required{"blocksize"};
};

/// DepthToSpace-13(input [N, C, H, W]) -> [N, C / b², H * b, W * b]:
/// DCR: out[n, c, h*b + i, w*b + j] = in[n, (i*b + j) * C/b² + c, h, w];
/// CRD: out[n, c, h*b + i, w*b + j] = in[n, c * b² + i*b + j, h, w].
struct DepthToSpace : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "DepthToSpace";
    static constexpr int opset = 13;
    using attributes = depth_to_space_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all, {4, 4}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {4, 4}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto mode = spec::parse_attributes<attributes>(c.attributes(), op_type).mode;
        const auto b = c.attr("blocksize");
        return {shape_util::concrete_fact(mode == "DCR" || mode == "CRD", "mode is DCR or CRD (got '" + mode + "')"),
                {b >= 1, "blocksize >= 1"},
                {c.dim(0, 1) % shape_util::emax(b * b, spec::expr(1)) == 0, "channels divide by blocksize²"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto b = c.attr("blocksize");
        return {{c.dim(0, 0), c.dim(0, 1) / shape_util::emax(b * b, spec::expr(1)), c.dim(0, 2) * b, c.dim(0, 3) * b}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank != 4) return {};
        return {{{out}, {4}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a) {
        static_assert(spec::dtype_accepted<DepthToSpace, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.size() != 4) throw shape_error(op_type, "input must have rank 4, got " + std::to_string(in.size()));
        if (a.mode != "DCR" && a.mode != "CRD") throw error(op_type, "mode must be DCR or CRD, got '" + a.mode + "'");
        if (a.blocksize < 1 || a.blocksize > (std::int64_t{1} << 16)) throw error(op_type, "blocksize must be in [1, 65536], got " + std::to_string(a.blocksize));
        const auto b = static_cast<std::size_t>(a.blocksize);
        if (in[1] % (b * b) != 0) throw shape_error(op_type, "channels " + std::to_string(in[1]) + " do not divide by blocksize² = " + std::to_string(b * b));
        const std::size_t oc = in[1] / (b * b);
        const shape_type out{in[0], oc, in[2] * b, in[3] * b};
        const auto st = detail::strides_of(in);
        const bool dcr = a.mode == "DCR";
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            const std::size_t i = o[2] % b, j = o[3] % b;
            const std::size_t ch = dcr ? (i * b + j) * oc + o[1] : o[1] * b * b + i * b + j;
            return o[0] * st[0] + ch * st[1] + (o[2] / b) * st[2] + (o[3] / b) * st[3];
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<DepthToSpace>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<DepthToSpace>(c, x);
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0).choice("mode", {std::string("DCR"), std::string("CRD")}, 0.6).solve("blocksize", 1, 4, 1.0); }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::depth_to_space_attr, blocksize, mode);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_DEPTH_TO_SPACE_HPP
// ---- end tensoracle/ops/shape/depth_to_space.hpp ----
// ---- begin tensoracle/ops/shape/space_to_depth.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SPACE_TO_DEPTH_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SPACE_TO_DEPTH_HPP
// tensoracle: SpaceToDepth (blocks of height and width moved into channels).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

struct space_to_depth_attr {
    std::int64_t blocksize = 1;
    static constexpr std::array<std::string_view, 1> required{"blocksize"};
};

/// SpaceToDepth-13(input [N, C, H, W]) -> [N, C * b², H / b, W / b]:
/// out[n, (i*b + j) * C + c, h, w] = in[n, c, h*b + i, w*b + j].
struct SpaceToDepth : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "SpaceToDepth";
    static constexpr int opset = 13;
    using attributes = space_to_depth_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all, {4, 4}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {4, 4}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto b = c.attr("blocksize");
        return {{b >= 1, "blocksize >= 1"},
                {c.dim(0, 2) % shape_util::emax(b, spec::expr(1)) == 0, "height divides by blocksize"},
                {c.dim(0, 3) % shape_util::emax(b, spec::expr(1)) == 0, "width divides by blocksize"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto b = c.attr("blocksize");
        const auto bb = shape_util::emax(b, spec::expr(1));
        return {{c.dim(0, 0), c.dim(0, 1) * b * b, c.dim(0, 2) / bb, c.dim(0, 3) / bb}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank != 4) return {};
        return {{{out}, {4}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a) {
        static_assert(spec::dtype_accepted<SpaceToDepth, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.size() != 4) throw shape_error(op_type, "input must have rank 4, got " + std::to_string(in.size()));
        if (a.blocksize < 1 || a.blocksize > (std::int64_t{1} << 16)) throw error(op_type, "blocksize must be in [1, 65536], got " + std::to_string(a.blocksize));
        const auto b = static_cast<std::size_t>(a.blocksize);
        if (in[2] % b != 0 || in[3] % b != 0) {
            throw shape_error(op_type, "height and width " + std::to_string(in[2]) + ", " + std::to_string(in[3]) + " do not divide by blocksize " + std::to_string(b));
        }
        const std::size_t ch = in[1];
        const shape_type out{in[0], ch * b * b, in[2] / b, in[3] / b};
        const auto st = detail::strides_of(in);
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            const std::size_t c = o[1] % ch, blk = o[1] / ch, i = blk / b, j = blk % b;
            return o[0] * st[0] + c * st[1] + (o[2] * b + i) * st[2] + (o[3] * b + j) * st[3];
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<SpaceToDepth>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<SpaceToDepth>(c, x);
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0).solve("blocksize", 1, 4, 1.0); }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::space_to_depth_attr, blocksize);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_SPACE_TO_DEPTH_HPP
// ---- end tensoracle/ops/shape/space_to_depth.hpp ----

namespace tensoracle::ops {

inline constexpr auto shape_ops =
    hana::tuple_t<Reshape, Transpose, Squeeze, Unsqueeze, Flatten, Slice, Concat, Split, Expand, Tile, Pad, Gather,
                  GatherElements, Trilu, Shape, Size, ConstantOfShape, Range, DepthToSpace, SpaceToDepth>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_SHAPE_HPP
// ---- end tensoracle/ops/shape.hpp ----
// ---- begin tensoracle/ops/unary.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_HPP
// tensoracle: element-wise unary ops (math and activations).
//
// Each op is a small formula struct F; unary_elementwise<F> turns it into a
// full spec (signature, shape inference both ways, domain, kernel, sampler).
// Floating kernels compute in float for f16/bf16/f32 and in double for f64
// (ONNX reference behaviour), then round once to the element type. AD scalars
// (ad::dual, ad::rvar) run the same formulas in themselves: run_real.
//
// One op per file under ops/unary/ (unary_elementwise<F>, value_range and the
// domain-rule helpers in ops/unary/detail/unary_elementwise.hpp). Each op's
// struct derives its apply() from the shared formula (ops/formulas.hpp).
// Value facts: keeps_integers (an integer input gives integers), integral_output (integers always).

// ---- begin tensoracle/ops/unary/relu.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_RELU_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_RELU_HPP
// tensoracle: Relu (max(X, 0), element-wise).

#include <string_view>

// ---- begin tensoracle/ops/unary/detail/unary_elementwise.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_DETAIL_UNARY_ELEMENTWISE_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_DETAIL_UNARY_ELEMENTWISE_HPP
// tensoracle: what every element-wise unary op of ops/unary/ is built from: unary_elementwise<F>
// (the full spec from a formula struct F), value_range (sampling ranges), the domain-rule helper
// unary::rule and unary::eps; and the adaptation of elu_attr, shared by Elu and Celu.

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

using spec::no_attributes;

/// A sampling range for random instances, inside the op's domain.
struct value_range {
    double lo = -4.0;
    double hi = 4.0;
};

template <class F>
struct unary_elementwise : spec::shape_of_input<0>, detail::formula_output_dtypes<F> {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = F::opset;
    using attributes = typename F::attributes;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", F::types}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", F::out_types}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op
    /// NNSmith's proxy derivative for ops whose derivative is 0 almost everywhere.
    static constexpr double proxy_slope = [] {
        if constexpr (requires { F::proxy_slope; }) {
            return F::proxy_slope;
        } else {
            return 0.0;
        }
    }();

    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if constexpr (requires { F::output_dtype; }) {
            if (out != F::output_dtype) return {};
            return {{F::types.members(), {rank}}};
        } else {
            if (!F::types.contains(out)) return {};
            return {{{out}, {rank}}};
        }
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return detail::domain_of<F>(); }

    /// The typed kernel: Y[i] = F(X[i]).
    template <class T>
    static auto compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<unary_elementwise, T>::value);
        return compute_unchecked<T>(x, a);
    }

    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<F::types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            using out_t = std::conditional_t<requires { F::output_dtype; }, bool, T>;
            // Straight from the input's buffer into the output's: no typed copies.
            const auto x = c.input(0).values<T>();
            auto y = tensor::for_overwrite(dtype_of<out_t>, c.input(0).shape());
            apply_into<T>(x.data(), x.size(), y.template values<out_t>().data(), a);
            return y;
        }));
    }

    /// The kernel on AD scalar S (docs/ADDING_AN_OP.md, "Derivatives"). Only ops
    /// with a floating output computed from a floating input have it; integer
    /// inputs of mixed-type ops give the placeholder (run() holds the output).
    template <class S>
        requires(!requires { F::output_dtype; } && !(F::types & spec::types::floating).empty())
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        // Unchecked: S is over double also for f32-only ops (Celu), since the AD path lifts f32 to double.
        return detail::single_output(compute_unchecked<S>(x[0], spec::parse_attributes<attributes>(c.attributes(), op_type)));
    }
    static spec::hints hints() {
        spec::hints h;
        if constexpr (requires { F::hints(); }) {
            h = F::hints();
        } else {
            if constexpr (requires { F::range; }) h.range(0, F::range.lo, F::range.hi);
        }
        // What Y holds is F's image of what X holds (Sigmoid's (0, 1), Relu's
        // [0, inf)); integer-only ops (bitwise) are left unknown.
        if constexpr (!(F::types & spec::types::floating).empty()) {
            if (!h.output_facts) h.facts(image_facts);
            if (h.runs_on_unknowns == spec::hints::unknown_data::not_run) {
                h.runs_on_unknowns = spec::hints::unknown_data::elementwise;
            }
        }
        return h;
    }
    static std::vector<spec::value_facts> image_facts(std::span<const spec::value_facts> in,
                                                      const spec::attribute_map& attrs, std::span<const shape_type>) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        auto y = spec::facts::image(x, [&a](double v) { return static_cast<double>(F::apply(v, a)); });
        if constexpr (requires { F::integral_output; }) y.integral = true;
        if constexpr (requires { F::keeps_integers; }) y.integral = x.integral;
        if constexpr (requires { F::refine_facts(y, a); }) F::refine_facts(y, a);
        return {y};
    }

private:
    template <class T>
    static auto compute_unchecked(const array<T>& x, const attributes& a) {
        using out_t = std::conditional_t<requires { F::output_dtype; }, bool, T>;
        auto y = array<out_t>::from_shape(x.shape());
        apply_into<T>(x.data(), x.size(), y.data(), a);
        return y;
    }
    template <class T, class Out>
    static void apply_into(const T* x, std::size_t n, Out* y, const attributes& a) {
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (real_scalar<T>) {
                using acc = std::conditional_t<ad_scalar<T>, T,
                                               std::conditional_t<std::is_same_v<T, double>, double, float>>;
                y[i] = value_cast<Out>(F::apply(static_cast<acc>(x[i]), a));
            } else {
                y[i] = static_cast<Out>(F::apply(x[i], a));
            }
        }
    }
};

namespace unary {

using spec::dtype_set;
namespace types = spec::types;

// Domain rules: predicates on X, written as "f(x) <= 0" hinges.
inline spec::domain_rule rule(std::string text, double (*f)(double)) {
    return detail::hinge_rule(std::move(text), 0, f);
}
constexpr double eps = 1e-10;  // strict inequalities: f(x) + eps <= 0

}  // namespace unary

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::elu_attr, alpha);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_DETAIL_UNARY_ELEMENTWISE_HPP
// ---- end tensoracle/ops/unary/detail/unary_elementwise.hpp ----

namespace tensoracle::ops {

namespace unary {

struct relu_fn : formula::relu, spec::elementwise_signature<"Relu", 14, types::signed_numeric> {
    static constexpr double proxy_slope = 0.1;  // derivative is 0 for x < 0
    static constexpr bool keeps_integers = true;
};

}  // namespace unary

using Relu = unary_elementwise<unary::relu_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_RELU_HPP
// ---- end tensoracle/ops/unary/relu.hpp ----
// ---- begin tensoracle/ops/unary/abs.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ABS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ABS_HPP
// tensoracle: Abs (|X|, element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct abs_fn : formula::abs, spec::elementwise_signature<"Abs", 13, types::numeric> {
    static constexpr bool keeps_integers = true;
};

}  // namespace unary

using Abs = unary_elementwise<unary::abs_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ABS_HPP
// ---- end tensoracle/ops/unary/abs.hpp ----
// ---- begin tensoracle/ops/unary/neg.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_NEG_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_NEG_HPP
// tensoracle: Neg (-X, element-wise; integers wrap).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct neg_fn : formula::neg, spec::elementwise_signature<"Neg", 13, types::signed_numeric> {
    static constexpr bool keeps_integers = true;
};

}  // namespace unary

using Neg = unary_elementwise<unary::neg_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_NEG_HPP
// ---- end tensoracle/ops/unary/neg.hpp ----
// ---- begin tensoracle/ops/unary/sign.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SIGN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SIGN_HPP
// tensoracle: Sign (-1, 0 or 1 by the sign of X).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct sign_fn : formula::sign, spec::elementwise_signature<"Sign", 13, types::numeric> {
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};

}  // namespace unary

using Sign = unary_elementwise<unary::sign_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SIGN_HPP
// ---- end tensoracle/ops/unary/sign.hpp ----
// ---- begin tensoracle/ops/unary/ceil.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_CEIL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_CEIL_HPP
// tensoracle: Ceil (the smallest integer >= X, element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct ceil_fn : formula::ceil, spec::elementwise_signature<"Ceil", 13, types::floating> {
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};

}  // namespace unary

using Ceil = unary_elementwise<unary::ceil_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_CEIL_HPP
// ---- end tensoracle/ops/unary/ceil.hpp ----
// ---- begin tensoracle/ops/unary/floor.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_FLOOR_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_FLOOR_HPP
// tensoracle: Floor (the largest integer <= X, element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct floor_fn : formula::floor, spec::elementwise_signature<"Floor", 13, types::floating> {
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};

}  // namespace unary

using Floor = unary_elementwise<unary::floor_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_FLOOR_HPP
// ---- end tensoracle/ops/unary/floor.hpp ----
// ---- begin tensoracle/ops/unary/round.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ROUND_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ROUND_HPP
// tensoracle: Round (X rounded to the nearest integer, halves to even).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

/// Round: halves go to the even neighbour (ONNX and IEEE default).
struct round_fn : formula::round, spec::elementwise_signature<"Round", 11, types::ieee_floating> {
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};

}  // namespace unary

using Round = unary_elementwise<unary::round_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ROUND_HPP
// ---- end tensoracle/ops/unary/round.hpp ----
// ---- begin tensoracle/ops/unary/exp.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_EXP_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_EXP_HPP
// tensoracle: Exp (e^X, element-wise).

#include <cmath>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace unary {

struct exp_fn : formula::exp, spec::elementwise_signature<"Exp", 13, types::floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::overflow_rule("X <= log(max finite)", 0, [](double x, double m) { return x - std::log(m); })};
    }
};

}  // namespace unary

using Exp = unary_elementwise<unary::exp_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_EXP_HPP
// ---- end tensoracle/ops/unary/exp.hpp ----
// ---- begin tensoracle/ops/unary/log.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_LOG_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_LOG_HPP
// tensoracle: Log (the natural logarithm of X, element-wise).

#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace unary {

struct log_fn : formula::log, spec::elementwise_signature<"Log", 13, types::floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("X > 0", [](double x) { return -x + eps; })}; }
    static constexpr value_range range{0.1, 10.0};
};

}  // namespace unary

using Log = unary_elementwise<unary::log_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_LOG_HPP
// ---- end tensoracle/ops/unary/log.hpp ----
// ---- begin tensoracle/ops/unary/sqrt.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SQRT_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SQRT_HPP
// tensoracle: Sqrt (the square root of X, element-wise).

#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace unary {

struct sqrt_fn : formula::sqrt, spec::elementwise_signature<"Sqrt", 13, types::floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("X >= 0", [](double x) { return -x; })}; }
    static constexpr value_range range{0.0, 10.0};
};

}  // namespace unary

using Sqrt = unary_elementwise<unary::sqrt_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SQRT_HPP
// ---- end tensoracle/ops/unary/sqrt.hpp ----
// ---- begin tensoracle/ops/unary/reciprocal.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_RECIPROCAL_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_RECIPROCAL_HPP
// tensoracle: Reciprocal (1 / X, element-wise).

#include <cmath>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace unary {

struct reciprocal_fn : formula::reciprocal, spec::elementwise_signature<"Reciprocal", 13, types::floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {rule("|X| > 0", [](double x) { return -std::fabs(x) + eps; })};
    }
    static constexpr value_range range{0.5, 4.0};
};

}  // namespace unary

using Reciprocal = unary_elementwise<unary::reciprocal_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_RECIPROCAL_HPP
// ---- end tensoracle/ops/unary/reciprocal.hpp ----
// ---- begin tensoracle/ops/unary/sigmoid.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SIGMOID_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SIGMOID_HPP
// tensoracle: Sigmoid (1 / (1 + e^-X), element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct sigmoid_fn : formula::sigmoid, spec::elementwise_signature<"Sigmoid", 13, types::floating> {};

}  // namespace unary

using Sigmoid = unary_elementwise<unary::sigmoid_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SIGMOID_HPP
// ---- end tensoracle/ops/unary/sigmoid.hpp ----
// ---- begin tensoracle/ops/unary/tanh.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_TANH_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_TANH_HPP
// tensoracle: Tanh (the hyperbolic tangent of X, element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct tanh_fn : formula::tanh, spec::elementwise_signature<"Tanh", 13, types::floating> {};

}  // namespace unary

using Tanh = unary_elementwise<unary::tanh_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_TANH_HPP
// ---- end tensoracle/ops/unary/tanh.hpp ----
// ---- begin tensoracle/ops/unary/softplus.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SOFTPLUS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SOFTPLUS_HPP
// tensoracle: Softplus (log(e^X + 1), element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

/// Softplus = log(exp(x) + 1), evaluated as max(x, 0) + log1p(exp(-|x|)) so
/// that it does not overflow for large x (same value where both are finite).
/// Written per sign so that no kink of max or |.| shows in the derivative at 0.
struct softplus_fn : formula::softplus, spec::elementwise_signature<"Softplus", 1, types::ieee_floating> {};

}  // namespace unary

using Softplus = unary_elementwise<unary::softplus_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SOFTPLUS_HPP
// ---- end tensoracle/ops/unary/softplus.hpp ----
// ---- begin tensoracle/ops/unary/softsign.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SOFTSIGN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SOFTSIGN_HPP
// tensoracle: Softsign (X / (1 + |X|), element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct softsign_fn : formula::softsign, spec::elementwise_signature<"Softsign", 1, types::ieee_floating> {};

}  // namespace unary

using Softsign = unary_elementwise<unary::softsign_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SOFTSIGN_HPP
// ---- end tensoracle/ops/unary/softsign.hpp ----
// ---- begin tensoracle/ops/unary/erf.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ERF_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ERF_HPP
// tensoracle: Erf (the error function of X, element-wise).

#include <cmath>
#include <string_view>
#include <type_traits>


namespace tensoracle::ops {

namespace unary {

/// Erf also takes integers (ONNX-13): erf in double, truncated to the type.
struct erf_fn : formula::erf, spec::elementwise_signature<"Erf", 13, types::numeric> {
    template <class V>
    static V apply(V x, const attributes& a) {
        if constexpr (std::is_integral_v<V>) {
            return value_cast<V>(std::erf(static_cast<double>(x)));
        } else {
            return formula::erf::apply(x, a);
        }
    }
    // Integer data truncates to 0 unless |x| >= 6 (then +-1), and no gradient moves
    // integers: draw from 6 up, so that a divisor or a sum that needs it nonzero
    // starts there (the search's smaller scales and all-zeros starts reach 0).
    static spec::hints hints() { return spec::hints{}.integer_range(0, 6.0, 12.0); }
};

}  // namespace unary

using Erf = unary_elementwise<unary::erf_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ERF_HPP
// ---- end tensoracle/ops/unary/erf.hpp ----
// ---- begin tensoracle/ops/unary/sin.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SIN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SIN_HPP
// tensoracle: Sin (the sine of X, element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct sin_fn : formula::sin, spec::elementwise_signature<"Sin", 7, types::ieee_floating> {};

}  // namespace unary

using Sin = unary_elementwise<unary::sin_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SIN_HPP
// ---- end tensoracle/ops/unary/sin.hpp ----
// ---- begin tensoracle/ops/unary/cos.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_COS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_COS_HPP
// tensoracle: Cos (the cosine of X, element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct cos_fn : formula::cos, spec::elementwise_signature<"Cos", 7, types::ieee_floating> {};

}  // namespace unary

using Cos = unary_elementwise<unary::cos_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_COS_HPP
// ---- end tensoracle/ops/unary/cos.hpp ----
// ---- begin tensoracle/ops/unary/tan.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_TAN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_TAN_HPP
// tensoracle: Tan (the tangent of X, element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct tan_fn : formula::tan, spec::elementwise_signature<"Tan", 7, types::ieee_floating> {
    static constexpr value_range range{-1.5, 1.5};
};

}  // namespace unary

using Tan = unary_elementwise<unary::tan_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_TAN_HPP
// ---- end tensoracle/ops/unary/tan.hpp ----
// ---- begin tensoracle/ops/unary/asin.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ASIN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ASIN_HPP
// tensoracle: Asin (the arcsine of X, element-wise).

#include <cmath>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace unary {

struct asin_fn : formula::asin, spec::elementwise_signature<"Asin", 7, types::ieee_floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("|X| <= 1", [](double x) { return std::fabs(x) - 1.0; })}; }
    static constexpr value_range range{-1.0, 1.0};
};

}  // namespace unary

using Asin = unary_elementwise<unary::asin_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ASIN_HPP
// ---- end tensoracle/ops/unary/asin.hpp ----
// ---- begin tensoracle/ops/unary/acos.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ACOS_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ACOS_HPP
// tensoracle: Acos (the arccosine of X, element-wise).

#include <cmath>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace unary {

struct acos_fn : formula::acos, spec::elementwise_signature<"Acos", 7, types::ieee_floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("|X| <= 1", [](double x) { return std::fabs(x) - 1.0; })}; }
    static constexpr value_range range{-1.0, 1.0};
};

}  // namespace unary

using Acos = unary_elementwise<unary::acos_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ACOS_HPP
// ---- end tensoracle/ops/unary/acos.hpp ----
// ---- begin tensoracle/ops/unary/atan.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ATAN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ATAN_HPP
// tensoracle: Atan (the arctangent of X, element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct atan_fn : formula::atan, spec::elementwise_signature<"Atan", 7, types::ieee_floating> {};

}  // namespace unary

using Atan = unary_elementwise<unary::atan_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ATAN_HPP
// ---- end tensoracle/ops/unary/atan.hpp ----
// ---- begin tensoracle/ops/unary/sinh.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SINH_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SINH_HPP
// tensoracle: Sinh (the hyperbolic sine of X, element-wise).

#include <cmath>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace unary {

struct sinh_fn : formula::sinh, spec::elementwise_signature<"Sinh", 9, types::ieee_floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        // log(max finite), not log(2 max finite): 2 max is inf in double, which let every float64 Sinh pass.
        return {detail::overflow_rule("|X| <= log(max finite)", 0,
                                      [](double x, double m) { return std::fabs(x) - std::log(m); })};
    }
};

}  // namespace unary

using Sinh = unary_elementwise<unary::sinh_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SINH_HPP
// ---- end tensoracle/ops/unary/sinh.hpp ----
// ---- begin tensoracle/ops/unary/cosh.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_COSH_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_COSH_HPP
// tensoracle: Cosh (the hyperbolic cosine of X, element-wise).

#include <cmath>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace unary {

struct cosh_fn : formula::cosh, spec::elementwise_signature<"Cosh", 9, types::ieee_floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::overflow_rule("|X| <= log(max finite)", 0,
                                      [](double x, double m) { return std::fabs(x) - std::log(m); })};
    }
};

}  // namespace unary

using Cosh = unary_elementwise<unary::cosh_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_COSH_HPP
// ---- end tensoracle/ops/unary/cosh.hpp ----
// ---- begin tensoracle/ops/unary/asinh.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ASINH_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ASINH_HPP
// tensoracle: Asinh (the inverse hyperbolic sine of X, element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct asinh_fn : formula::asinh, spec::elementwise_signature<"Asinh", 9, types::ieee_floating> {};

}  // namespace unary

using Asinh = unary_elementwise<unary::asinh_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ASINH_HPP
// ---- end tensoracle/ops/unary/asinh.hpp ----
// ---- begin tensoracle/ops/unary/acosh.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ACOSH_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ACOSH_HPP
// tensoracle: Acosh (the inverse hyperbolic cosine of X, element-wise).

#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace unary {

struct acosh_fn : formula::acosh, spec::elementwise_signature<"Acosh", 9, types::ieee_floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("X >= 1", [](double x) { return 1.0 - x; })}; }
    static constexpr value_range range{1.0, 6.0};
};

}  // namespace unary

using Acosh = unary_elementwise<unary::acosh_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ACOSH_HPP
// ---- end tensoracle/ops/unary/acosh.hpp ----
// ---- begin tensoracle/ops/unary/atanh.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ATANH_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ATANH_HPP
// tensoracle: Atanh (the inverse hyperbolic tangent of X, element-wise).

#include <cmath>
#include <string_view>
#include <vector>


namespace tensoracle::ops {

namespace unary {

struct atanh_fn : formula::atanh, spec::elementwise_signature<"Atanh", 9, types::ieee_floating> {
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {rule("|X| < 1", [](double x) { return std::fabs(x) - 1.0 + eps; })};
    }
    static constexpr value_range range{-0.95, 0.95};
};

}  // namespace unary

using Atanh = unary_elementwise<unary::atanh_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ATANH_HPP
// ---- end tensoracle/ops/unary/atanh.hpp ----
// ---- begin tensoracle/ops/unary/not.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_NOT_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_NOT_HPP
// tensoracle: Not (logical not of a boolean X, element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

// Not differentiable: boolean in and out.
struct not_fn : formula::not_, spec::elementwise_signature<"Not", 1, types::boolean> {};

}  // namespace unary

using Not = unary_elementwise<unary::not_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_NOT_HPP
// ---- end tensoracle/ops/unary/not.hpp ----
// ---- begin tensoracle/ops/unary/identity.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_IDENTITY_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_IDENTITY_HPP
// tensoracle: Identity (Y = X).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct identity_fn : formula::identity, spec::elementwise_signature<"Identity", 16, types::all> {
    static spec::hints hints() { return spec::hints{}.copies(0); }
};

}  // namespace unary

using Identity = unary_elementwise<unary::identity_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_IDENTITY_HPP
// ---- end tensoracle/ops/unary/identity.hpp ----
// ---- begin tensoracle/ops/unary/leaky_relu.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_LEAKY_RELU_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_LEAKY_RELU_HPP
// tensoracle: LeakyRelu (X where X >= 0, alpha * X below).

#include <string_view>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace unary {

struct leaky_relu_fn : formula::leaky_relu, spec::elementwise_signature<"LeakyRelu", 16, types::floating, alpha_attr> {
};

}  // namespace unary

using LeakyRelu = unary_elementwise<unary::leaky_relu_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::alpha_attr, alpha);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_LEAKY_RELU_HPP
// ---- end tensoracle/ops/unary/leaky_relu.hpp ----
// ---- begin tensoracle/ops/unary/elu.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ELU_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ELU_HPP
// tensoracle: Elu (X where X >= 0, alpha * (e^X - 1) below).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct elu_fn : formula::elu, spec::elementwise_signature<"Elu", 6, types::ieee_floating, elu_attr> {};

}  // namespace unary

using Elu = unary_elementwise<unary::elu_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_ELU_HPP
// ---- end tensoracle/ops/unary/elu.hpp ----
// ---- begin tensoracle/ops/unary/celu.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_CELU_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_CELU_HPP
// tensoracle: Celu (max(0, X) + min(0, alpha * (e^(X / alpha) - 1)), element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct celu_fn : formula::celu, spec::elementwise_signature<"Celu", 12, spec::dtypes_of(dtype::f32), elu_attr> {
    /// max(0, x) + min(0, alpha * expm1(x / alpha)), written per sign with the same values (also -0 -> +0 and
    /// NaN -> 0, as max/min give), so that the derivative at 0 is 1 and not max's and min's 0.
};

}  // namespace unary

using Celu = unary_elementwise<unary::celu_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_CELU_HPP
// ---- end tensoracle/ops/unary/celu.hpp ----
// ---- begin tensoracle/ops/unary/selu.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SELU_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SELU_HPP
// tensoracle: Selu (gamma * (X where X > 0, alpha * (e^X - 1) elsewhere)).

#include <string_view>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace unary {

struct selu_fn : formula::selu, spec::elementwise_signature<"Selu", 6, types::ieee_floating, selu_attr> {};

}  // namespace unary

using Selu = unary_elementwise<unary::selu_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::selu_attr, alpha, gamma);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SELU_HPP
// ---- end tensoracle/ops/unary/selu.hpp ----
// ---- begin tensoracle/ops/unary/hard_sigmoid.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_HARD_SIGMOID_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_HARD_SIGMOID_HPP
// tensoracle: HardSigmoid (max(0, min(1, alpha * X + beta)), element-wise).

#include <string_view>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace unary {

struct hard_sigmoid_fn : formula::hard_sigmoid,
                         spec::elementwise_signature<"HardSigmoid", 6, types::ieee_floating, hard_sigmoid_attr> {
    static constexpr double proxy_slope = 0.1;
};

}  // namespace unary

using HardSigmoid = unary_elementwise<unary::hard_sigmoid_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::hard_sigmoid_attr, alpha, beta);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_HARD_SIGMOID_HPP
// ---- end tensoracle/ops/unary/hard_sigmoid.hpp ----
// ---- begin tensoracle/ops/unary/hard_swish.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_HARD_SWISH_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_HARD_SWISH_HPP
// tensoracle: HardSwish (X * max(0, min(1, X / 6 + 1 / 2)), element-wise).

#include <string_view>


namespace tensoracle::ops {

namespace unary {

struct hard_swish_fn : formula::hard_swish, spec::elementwise_signature<"HardSwish", 14, types::ieee_floating> {
    static constexpr double proxy_slope = 0.1;  // derivative is 0 below -3
};

}  // namespace unary

using HardSwish = unary_elementwise<unary::hard_swish_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_HARD_SWISH_HPP
// ---- end tensoracle/ops/unary/hard_swish.hpp ----
// ---- begin tensoracle/ops/unary/thresholded_relu.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_THRESHOLDED_RELU_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_THRESHOLDED_RELU_HPP
// tensoracle: ThresholdedRelu (X where X > alpha, 0 elsewhere).

#include <string_view>
#include <utility>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace unary {

struct thresholded_relu_fn
    : formula::thresholded_relu,
      spec::elementwise_signature<"ThresholdedRelu", 10, types::ieee_floating, thresholded_relu_attr> {
    static constexpr double proxy_slope = 0.1;  // derivative is 0 at or below alpha
    // Y is 0 or above alpha: with alpha > 0 nothing lies in (0, alpha), which a
    // sampled image cannot see (Atanh of it is finite only at 0 when alpha >= 1).
    static void refine_facts(spec::value_facts& y, const attributes& a) {
        if (a.alpha > 0.0f && !y.in_gap(0.0)) y.gap = std::make_pair(0.0, static_cast<double>(a.alpha));
    }
};

}  // namespace unary

using ThresholdedRelu = unary_elementwise<unary::thresholded_relu_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::thresholded_relu_attr, alpha);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_THRESHOLDED_RELU_HPP
// ---- end tensoracle/ops/unary/thresholded_relu.hpp ----
// ---- begin tensoracle/ops/unary/shrink.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SHRINK_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SHRINK_HPP
// tensoracle: Shrink (X + bias below -lambd, X - bias above lambd, 0 between).

#include <string_view>
#include <type_traits>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace unary {

struct shrink_attr {
    float bias = 0.0f;
    float lambd = 0.5f;
};
template <class V>
V cast_to(double d) {
    return value_cast<V>(d);
}
struct shrink_fn : spec::elementwise_signature<"Shrink", 9, types::ieee_floating | types::integers, shrink_attr> {
    static constexpr double proxy_slope = 0.1;  // derivative is 0 inside [-lambd, lambd]
    template <class V>
    static V apply(V x, const attributes& a) {
        if constexpr (std::is_integral_v<V>) {
            // Integers compare and shift in double, then truncate and saturate to the type.
            const double d = static_cast<double>(x);
            if (d < -a.lambd) return cast_to<V>(d + a.bias);
            if (d > a.lambd) return cast_to<V>(d - a.bias);
            return V(0);
        } else {
            // In V itself, so that AD scalars keep the derivative 1 outside [-lambd, lambd]. Same values
            // as in double for f16/bf16/f32 (V = float): a float sum rounded from double is the float sum.
            if (x < V(-a.lambd)) return x + V(a.bias);
            if (x > V(a.lambd)) return x - V(a.bias);
            return V(0);
        }
    }
    static constexpr value_range range{-4.0, 4.0};
};

}  // namespace unary

using Shrink = unary_elementwise<unary::shrink_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::shrink_attr, bias, lambd);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_SHRINK_HPP
// ---- end tensoracle/ops/unary/shrink.hpp ----
// ---- begin tensoracle/ops/unary/is_nan.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_IS_NAN_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_IS_NAN_HPP
// tensoracle: IsNaN (whether each element of X is NaN).

#include <cmath>
#include <string_view>


namespace tensoracle::ops {

namespace unary {

// Not differentiable: boolean output.
struct is_nan_fn : spec::predicate_signature<"IsNaN", 13, types::floating> {
    template <class V>
    static bool apply(V x, const attributes&) { return std::isnan(x); }
};

}  // namespace unary

using IsNaN = unary_elementwise<unary::is_nan_fn>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_IS_NAN_HPP
// ---- end tensoracle/ops/unary/is_nan.hpp ----
// ---- begin tensoracle/ops/unary/is_inf.hpp ----
#ifndef TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_IS_INF_HPP
#define TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_IS_INF_HPP
// tensoracle: IsInf (whether each element of X is an infinity of a detected sign).

#include <cmath>
#include <cstdint>
#include <string_view>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace unary {

struct is_inf_attr {
    std::int64_t detect_negative = 1;
    std::int64_t detect_positive = 1;
};
// Not differentiable: boolean output.
struct is_inf_fn : spec::predicate_signature<"IsInf", 10, spec::dtypes_of(dtype::f32, dtype::f64), is_inf_attr> {
    template <class V>
    static bool apply(V x, const attributes& a) {
        return std::isinf(x) && ((x > V(0) && a.detect_positive != 0) || (x < V(0) && a.detect_negative != 0));
    }
};

}  // namespace unary

using IsInf = unary_elementwise<unary::is_inf_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::is_inf_attr, detect_negative, detect_positive);
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_IS_INF_HPP
// ---- end tensoracle/ops/unary/is_inf.hpp ----

namespace tensoracle::ops {

/// Every op of this family, for the registry.
inline constexpr auto unary_ops =
    hana::tuple_t<Relu, Abs, Neg, Sign, Ceil, Floor, Round, Exp, Log, Sqrt, Reciprocal, Sigmoid, Tanh, Softplus,
                  Softsign, Erf, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Not,
                  Identity, LeakyRelu, Elu, Celu, Selu, HardSigmoid, HardSwish, ThresholdedRelu, Shrink, IsNaN,
                  IsInf>;

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_UNARY_HPP
// ---- end tensoracle/ops/unary.hpp ----

namespace tensoracle::ops {

namespace detail {
// Joins Hana tuples of types at the type level: hana::concat on these
// constexpr values cost every including file 0.6 s at -O0 (clang -ftime-trace).
template <class... Tuples>
struct join_types;
template <class... A>
struct join_types<hana::tuple<A...>> {
    using type = hana::tuple<A...>;
};
template <class... A, class... B, class... Rest>
struct join_types<hana::tuple<A...>, hana::tuple<B...>, Rest...> : join_types<hana::tuple<A..., B...>, Rest...> {};
}  // namespace detail

/// The type of all_ops (a Hana tuple of types).
using all_ops_type =
    typename detail::join_types<std::remove_cv_t<decltype(unary_ops)>, std::remove_cv_t<decltype(binary_ops)>,
                                std::remove_cv_t<decltype(shape_ops)>, std::remove_cv_t<decltype(reduce_ops)>,
                                std::remove_cv_t<decltype(nn_ops)>, std::remove_cv_t<decltype(misc_ops)>>::type;

/// Every op spec, as a Hana tuple of types.
inline constexpr all_ops_type all_ops{};

}  // namespace tensoracle::ops
#endif  // TENSORACLE_SINGLE_TENSORACLE_OPS_ALL_OPS_HPP
// ---- end tensoracle/ops/all_ops.hpp ----
// ---- begin tensoracle/ops/keyed.hpp ----
// tensoracle: tables keyed by op spec type, for the backends outside the spec
// layer (cuda/lowering.hpp, backends/torch/torch_ops.hpp). An entry names its
// op by type, so its op_type string comes from the spec, and a table is a Hana
// tuple of entries, so which ops it covers is known at compile time:
// each_op_once checks that every op of the registry has exactly one entry, a
// lowering or an explicit "unsupported" mark, and a miss fails to compile with
// the op_type in the diagnostic, e.g. 'no_backend_entry_for<tensoracle::spec::op_name<4>{"Abs"}>'.

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>

#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>


namespace tensoracle {
namespace hana = boost::hana;
}  // namespace tensoracle

namespace tensoracle::ops {

/// A backend's value for the op spec Op. `type` is Op, as in hana::type, so
/// that a tuple of entries and a hana::tuple_t of ops are read alike.
template <class Op, class V>
struct keyed {
    using type = Op;
    V value;
};

/// A Hana tuple of keyed entries as a map from each op's op_type to its value.
template <class V, class... Ops>
[[nodiscard]] std::map<std::string, V, std::less<>> by_op_type(hana::tuple<keyed<Ops, V>...> entries) {
    std::map<std::string, V, std::less<>> m;
    hana::unpack(std::move(entries), [&](auto&&... e) {
        (m.emplace(std::string(std::remove_cvref_t<decltype(e)>::type::op_type), std::move(e.value)), ...);
    });
    return m;
}

namespace detail {

// Never defined: using one is the error, and its argument names the op.
template <spec::op_name Name>
struct no_backend_entry_for;
template <spec::op_name Name>
struct several_backend_entries_for;

template <class Op, class List>
struct entries_in;
template <class Op, class... E>
struct entries_in<Op, hana::tuple<E...>> : std::integral_constant<std::size_t, (std::size_t{std::is_same_v<Op, typename E::type>} + ... + std::size_t{0})> {};

template <class Op, class... Lists>
inline constexpr std::size_t entries_of = (entries_in<Op, Lists>::value + ... + std::size_t{0});

template <class Op, std::size_t N>
constexpr bool one_entry() {
    if constexpr (N == 0) {
        return sizeof(no_backend_entry_for<spec::op_name_of<Op>()>) != 0;
    } else if constexpr (N > 1) {
        return sizeof(several_backend_entries_for<spec::op_name_of<Op>()>) != 0;
    } else {
        return true;
    }
}

template <class Ops, class... Lists>
struct each_op_once;
template <class... Ops, class... Lists>
struct each_op_once<hana::tuple<Ops...>, Lists...>
    : std::bool_constant<(one_entry<typename Ops::type, entries_of<typename Ops::type, Lists...>>() && ...)> {};

}  // namespace detail

/// True when each op of the Hana tuple of types `Ops` has exactly one entry in
/// all of `Lists` together (Hana tuples of keyed entries or of types: a
/// backend's lowerings and its ops marked unsupported); otherwise the program
/// does not compile, and the diagnostic names the op missing or listed twice.
template <class Ops, class... Lists>
inline constexpr bool each_op_once =
    detail::each_op_once<std::remove_cvref_t<Ops>, std::remove_cvref_t<Lists>...>::value;

}  // namespace tensoracle::ops
// ---- end tensoracle/ops/keyed.hpp ----

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
// ---- end tensoracle/cuda/lowering.hpp ----

namespace tensoracle::cuda {

struct device_run_options {
    gemm_precision precision = gemm_precision::pedantic;  ///< MatMul, Gemm, Conv
    /// false: a node without a CUDA kernel is an unsupported_error instead of a CPU fallback.
    bool fallback_to_cpu = true;
};

struct device_run_result {
    std::map<std::string, tensor, std::less<>> outputs;
    /// One line per node that ran on the CPU: "node <label>: <why>".
    std::vector<std::string> notes;
    std::size_t device_nodes = 0;
    std::size_t cpu_nodes = 0;
};

namespace detail {

/// A value of the graph: on the device, on the host, or both.
struct resident {
    std::optional<device_tensor> dev;
    std::optional<tensor> host;
    const device_tensor& on_device() {
        if (!dev) dev = to_device(*host);
        return *dev;
    }
    const tensor& on_host() {
        if (!host) host = to_host(*dev);
        return *host;
    }
    [[nodiscard]] dtype element_dtype() const { return dev ? dev->element_dtype() : host->element_dtype(); }
    [[nodiscard]] const shape_type& shape() const { return dev ? dev->shape() : host->shape(); }
};

inline std::int64_t attr_int(const spec::attribute_map& a, std::string_view k) {
    const auto it = a.find(k);
    return it == a.end() ? 0 : std::get<std::int64_t>(it->second);
}
inline float attr_float(const spec::attribute_map& a, std::string_view k) {
    const auto it = a.find(k);
    return it == a.end() ? 0.0f : static_cast<float>(std::get<double>(it->second));
}
inline std::vector<std::int64_t> attr_ints(const spec::attribute_map& a, std::string_view k) {
    const auto it = a.find(k);
    if (it == a.end()) return {};
    if (const auto* v = std::get_if<std::vector<std::int64_t>>(&it->second)) return *v;
    return {};
}
inline bool has_attr(const spec::attribute_map& a, std::string_view k) { return a.find(k) != a.end(); }
inline std::string attr_string(const spec::attribute_map& a, std::string_view k) {
    const auto it = a.find(k);
    if (it == a.end()) return {};
    if (const auto* v = std::get_if<std::string>(&it->second)) return *v;
    return {};
}

/// 2-D window of Conv/MaxPool/AveragePool from normalised attributes; nullopt
/// (with `why`) for what the CUDA kernels do not cover.
inline std::optional<window_2d> window_of(const spec::attribute_map& a, const shape_type& kernel, std::string& why) {
    const auto pad_mode = attr_string(a, "auto_pad");
    if (!pad_mode.empty() && pad_mode != "NOTSET") {
        why = "auto_pad=" + pad_mode + " has no CUDA kernel (explicit pads only)";
        return std::nullopt;
    }
    if (kernel.size() != 2) {
        why = "only 2-D windows have CUDA kernels";
        return std::nullopt;
    }
    window_2d w;
    const auto st = attr_ints(a, "strides"), di = attr_ints(a, "dilations"), pa = attr_ints(a, "pads");
    for (int k = 0; k < 2; ++k) {
        w.kernel[k] = static_cast<std::int64_t>(kernel[static_cast<std::size_t>(k)]);
        w.strides[k] = st.size() == 2 ? st[static_cast<std::size_t>(k)] : 1;
        w.dilations[k] = di.size() == 2 ? di[static_cast<std::size_t>(k)] : 1;
    }
    for (int k = 0; k < 4; ++k) w.pads[k] = pa.size() == 4 ? pa[static_cast<std::size_t>(k)] : 0;
    return w;
}

/// ONNX Slice on the device as a strided view, then a contiguous copy.
inline device_tensor slice(const device_tensor& x, const tensor& starts_t, const tensor& ends_t, const tensor* axes_t,
                           const tensor* steps_t) {
    const auto starts = starts_t.to<std::int64_t>(), ends = ends_t.to<std::int64_t>();
    const auto rank = static_cast<std::int64_t>(x.rank());
    device_tensor v = x;
    for (std::size_t i = 0; i < starts.size(); ++i) {
        std::int64_t axis = axes_t != nullptr ? axes_t->to<std::int64_t>().data()[i] : static_cast<std::int64_t>(i);
        if (axis < 0) axis += rank;
        const std::int64_t step = steps_t != nullptr ? steps_t->to<std::int64_t>().data()[i] : 1;
        const auto dim = static_cast<std::int64_t>(x.shape()[static_cast<std::size_t>(axis)]);
        std::int64_t s = starts.data()[i], e = ends.data()[i];
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        std::int64_t count = 0;
        if (step > 0) {
            s = std::clamp<std::int64_t>(s, 0, dim);
            e = std::clamp<std::int64_t>(e, 0, dim);
            count = e > s ? (e - s + step - 1) / step : 0;
        } else {
            s = std::clamp<std::int64_t>(s, 0, dim - 1);
            e = std::clamp<std::int64_t>(e, -1, dim - 1);
            count = s > e ? (s - e + (-step) - 1) / (-step) : 0;
        }
        v = v.sliced(static_cast<std::size_t>(axis), count == 0 ? 0 : s, step, static_cast<std::size_t>(count));
    }
    return contiguous(v);
}

}  // namespace detail

/// One node's inputs as the device runner sees them.
struct node_inputs {
    std::vector<detail::resident*> values;  ///< nullptr: absent optional input
    [[nodiscard]] bool has(std::size_t i) const { return i < values.size() && values[i] != nullptr; }
    const device_tensor& dev(std::size_t i) const { return values[i]->on_device(); }
    const tensor& host(std::size_t i) const { return values[i]->on_host(); }
};

/// Runs op on the device; nullopt (and `why`) when the kit has no CUDA kernel for
/// this op, dtype or attribute choice. Throws the kit's errors for bad input.
inline std::optional<std::vector<device_tensor>> run_node_on_device(std::string_view op, const node_inputs& in,
                                                                    const spec::attribute_map& a,
                                                                    const spec::inferred_outputs& inferred,
                                                                    std::size_t outputs, gemm_precision precision,
                                                                    std::string& why) {
    using namespace detail;
    const auto one = [](device_tensor t) { return std::optional<std::vector<device_tensor>>(std::vector<device_tensor>{std::move(t)}); };
    const lowering* l = lowering_of(op);
    if (l == nullptr) {
        why = "no CUDA kernel for " + std::string(op);
        return std::nullopt;
    }
    switch (l->kernel) {
        case device_kernel::unary: {
            elementwise_attributes e;
            if (has_attr(a, "alpha")) {
                e.alpha = attr_float(a, "alpha");
                e.alpha_given = true;
            }
            if (has_attr(a, "beta")) e.beta = attr_float(a, "beta");
            if (has_attr(a, "gamma")) e.gamma = attr_float(a, "gamma");
            return one(unary(op, in.dev(0), e));
        }
        case device_kernel::binary: {
            elementwise_attributes e;
            e.fmod = attr_int(a, "fmod");
            return one(binary(op, in.dev(0), in.dev(1), e));
        }
        case device_kernel::where: return one(where(in.dev(0), in.dev(1), in.dev(2)));
        case device_kernel::clip: {
            std::optional<double> lo, hi;
            if (in.has(1)) lo = in.host(1).value_as_double(0);
            if (in.has(2)) hi = in.host(2).value_as_double(0);
            return one(clip(in.dev(0), lo, hi));
        }
        case device_kernel::cast: return one(cast(in.dev(0), inferred.dtypes.at(0)));
        case device_kernel::reduce: {
            std::vector<std::int64_t> axes = attr_ints(a, "axes");
            if (in.has(1)) {
                const auto t = in.host(1).to<std::int64_t>();
                axes.assign(t.begin(), t.end());
            }
            return one(reduce(l->reduction, in.dev(0), axes, attr_int(a, "keepdims") != 0,
                              attr_int(a, "noop_with_empty_axes") != 0));
        }
        case device_kernel::softmax:
        case device_kernel::log_softmax:
            return one(softmax(in.dev(0), attr_int(a, "axis"), l->kernel == device_kernel::log_softmax));
        case device_kernel::matmul: return one(matmul(in.dev(0), in.dev(1), precision));
        case device_kernel::gemm:
            return one(gemm(in.dev(0), in.dev(1), in.has(2) ? &in.dev(2) : nullptr, attr_float(a, "alpha"),
                            attr_float(a, "beta"), attr_int(a, "transA") != 0, attr_int(a, "transB") != 0, precision));
        case device_kernel::conv:
        case device_kernel::max_pool:
        case device_kernel::average_pool: {
            if (outputs > 1) {
                why = "the Indices output of MaxPool has no CUDA kernel";
                return std::nullopt;
            }
            const bool is_conv = l->kernel == device_kernel::conv;
            const auto& x = in.dev(0);
            const shape_type spatial = is_conv ? shape_type(in.dev(1).shape().begin() + 2, in.dev(1).shape().end())
                                               : [&] {
                                                     const auto ks = attr_ints(a, "kernel_shape");
                                                     return shape_type(ks.begin(), ks.end());
                                                 }();
            if (x.rank() != 4) {
                why = "only 2-D (NCHW) windows have CUDA kernels";
                return std::nullopt;
            }
            const auto win = window_of(a, spatial, why);
            if (!win) return std::nullopt;
            const auto& out_shape = inferred.shapes.at(0);
            if (is_conv) {
                return one(conv2d(x, in.dev(1), in.has(2) ? &in.dev(2) : nullptr, *win, attr_int(a, "group"), out_shape,
                                  precision));
            }
            if (l->kernel == device_kernel::max_pool) {
                if (attr_int(a, "storage_order") != 0) {
                    why = "storage_order=1 has no CUDA kernel";
                    return std::nullopt;
                }
                return one(max_pool2d(x, *win, out_shape));
            }
            return one(average_pool2d(x, *win, attr_int(a, "count_include_pad") != 0, out_shape));
        }
        case device_kernel::batch_norm:
            if (outputs > 1 || attr_int(a, "training_mode") != 0) {
                why = "training mode has no CUDA kernel";
                return std::nullopt;
            }
            return one(batch_norm(in.dev(0), in.dev(1), in.dev(2), in.dev(3), in.dev(4), attr_float(a, "epsilon")));
        case device_kernel::layer_norm:
            if (outputs > 1) {
                why = "the Mean and InvStdDev outputs have no CUDA kernel";
                return std::nullopt;
            }
            return one(layer_norm(in.dev(0), in.dev(1), in.has(2) ? &in.dev(2) : nullptr, attr_int(a, "axis"),
                                  attr_float(a, "epsilon")));
        case device_kernel::transpose: {
            auto perm = attr_ints(a, "perm");
            const auto& x = in.dev(0);
            std::vector<std::size_t> p(x.rank());
            for (std::size_t k = 0; k < p.size(); ++k) p[k] = perm.empty() ? p.size() - 1 - k : static_cast<std::size_t>(perm[k]);
            return one(contiguous(x.permuted(p)));
        }
        case device_kernel::reshape: {
            const auto& x = in.dev(0);
            return one((x.contiguous() ? x : contiguous(x)).reshaped(inferred.shapes.at(0)));
        }
        case device_kernel::expand: return one(expand(in.dev(0), inferred.shapes.at(0)));
        case device_kernel::concat: {
            std::vector<device_tensor> xs;
            for (std::size_t i = 0; i < in.values.size(); ++i) xs.push_back(in.dev(i));
            return one(concat(xs, attr_int(a, "axis")));
        }
        case device_kernel::slice:
            return one(slice(in.dev(0), in.host(1), in.host(2), in.has(3) ? &in.host(3) : nullptr,
                             in.has(4) ? &in.host(4) : nullptr));
        case device_kernel::gather: return one(gather(in.dev(0), in.host(1), attr_int(a, "axis")));
    }
    why = "no CUDA kernel for " + std::string(op);
    return std::nullopt;
}

/// Runs `g` on `feeds` with device nodes where the kit has CUDA kernels.
[[nodiscard]] inline device_run_result run_on_device(const graph::graph& g,
                                                     const std::map<std::string, tensor, std::less<>>& feeds,
                                                     const device_run_options& options = {}) {
    const std::string where = "tensoracle::cuda::run_on_device(" + g.name + ")";
    const auto order = g.topological_order();
    std::map<std::string, detail::resident, std::less<>> values;
    for (const auto& [k, t] : g.initializers) values[k].host = t;
    for (const auto& feed : feeds) {
        const auto it = std::find_if(g.inputs.begin(), g.inputs.end(),
                                     [&](const graph::value_info& v) { return v.name == feed.first; });
        if (it == g.inputs.end()) throw error(where, "feed '" + feed.first + "' is not a graph input");
        graph::detail::check_feed(*it, feed.second, where);
        values[feed.first] = detail::resident{std::nullopt, feed.second};
    }
    for (const auto& in : g.inputs) {
        if (values.find(in.name) == values.end()) throw error(where, "graph input '" + in.name + "' is not fed");
    }
    device_run_result r;
    for (const std::size_t i : order) {
        const auto& n = g.nodes[i];
        if (graph::detail::is_control_flow(n.op_type)) {
            throw unsupported_error(where, "node " + n.label() + ": control flow runs only in graph::run");
        }
        const auto& op = ops::get_op(n.op_type);
        node_inputs in;
        for (const auto& name : n.inputs) {
            if (name.empty()) {
                in.values.push_back(nullptr);
                continue;
            }
            const auto it = values.find(name);
            if (it == values.end()) throw error(where, "value '" + name + "' is not defined when it is read");
            in.values.push_back(&it->second);
        }
        while (!in.values.empty() && in.values.back() == nullptr) in.values.pop_back();
        const auto attrs = graph::call_attributes(op, n);
        std::vector<tensor> out;
        std::string why;
        try {
            // Shapes and dtypes from the spec: small inputs by value (shape-like), large ones by a stand-in.
            std::vector<tensor> proxies;
            proxies.reserve(in.values.size());
            std::vector<const tensor*> args;
            for (auto* v : in.values) {
                if (v == nullptr) {
                    args.push_back(nullptr);
                } else if (v->host || element_count(v->shape()) <= 4096) {
                    args.push_back(&v->on_host());
                } else {
                    proxies.push_back(tensor::zeros(v->element_dtype(), v->shape()));
                    args.push_back(&proxies.back());
                }
            }
            const auto inferred = spec::infer(op, args, attrs);
            std::optional<std::vector<device_tensor>> dev;
            try {
                // Outputs the node uses (optional trailing outputs may be named "").
                std::size_t used = 0;
                for (std::size_t o = 0; o < n.outputs.size(); ++o) {
                    if (!n.outputs[o].empty()) used = o + 1;
                }
                dev = run_node_on_device(n.op_type, in, op.normalize_attributes(attrs), inferred, used,
                                         options.precision, why);
            } catch (const unsupported_error& e) {
                why = e.what();
            }
            if (dev) {
                for (std::size_t o = 0; o < dev->size(); ++o) {
                    const auto& t = (*dev)[o];
                    if (t.shape() != inferred.shapes.at(o) || t.element_dtype() != inferred.dtypes.at(o)) {
                        throw error(n.op_type, "internal: CUDA kernel output " + std::to_string(o) + " is " +
                                                   std::string(name(t.element_dtype())) + to_string(t.shape()) +
                                                   " but the spec infers " + std::string(name(inferred.dtypes.at(o))) +
                                                   to_string(inferred.shapes.at(o)));
                    }
                }
                ++r.device_nodes;
                for (std::size_t o = 0; o < n.outputs.size() && o < dev->size(); ++o) {
                    if (!n.outputs[o].empty()) values[n.outputs[o]] = detail::resident{std::move((*dev)[o]), std::nullopt};
                }
                continue;
            }
            if (!options.fallback_to_cpu) throw unsupported_error(n.op_type, why);
            std::vector<const tensor*> host_args;
            for (auto* v : in.values) host_args.push_back(v == nullptr ? nullptr : &v->on_host());
            out = spec::evaluate(op, host_args, attrs);
        } catch (const error& e) {
            graph::detail::rethrow_with_context(e, where, "node " + n.label() + ": ");
        }
        ++r.cpu_nodes;
        r.notes.push_back("node " + n.label() + " ran on the CPU: " + why);
        if (n.outputs.size() > out.size()) {
            throw error(where, "node " + n.label() + " names " + std::to_string(n.outputs.size()) + " outputs; " +
                                   n.op_type + " produced " + std::to_string(out.size()));
        }
        for (std::size_t o = 0; o < n.outputs.size(); ++o) {
            if (!n.outputs[o].empty()) values[n.outputs[o]] = detail::resident{std::nullopt, std::move(out[o])};
        }
    }
    for (const auto& o : g.outputs) r.outputs.emplace(o.name, values.at(o.name).on_host());
    return r;
}

}  // namespace tensoracle::cuda
// ---- end tensoracle/cuda/graph.hpp ----
// ---- end tensoracle/cuda.hpp ----
