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
