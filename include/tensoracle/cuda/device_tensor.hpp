// tensoracle: tensors on a CUDA device. A device_tensor is a dtype, a shape,
// element strides and an offset into a shared RAII device buffer, so views
// (transpose, slices with steps, broadcasts) cost no copy and every kernel
// accepts non-contiguous operands. Copies to and from the kit's `tensor`.
// Errors of the CUDA runtime and cuBLAS throw cuda::cuda_error naming the
// call. Host code: compiles with any C++20 compiler and the CUDA runtime
// headers; only the kernels (cuda/ops.cuh) need nvcc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_runtime_api.h>

#include "tensoracle/core/tensor.hpp"
#include "tensoracle/cuda/layout.hpp"

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
