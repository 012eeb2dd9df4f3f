// tensoracle: typed tensors (xtensor containers) and a type-erased tensor
// (dtype + shape + data) for graphs, I/O and runtime-dtype comparison.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/error.hpp"
#include "tensoracle/core/memory.hpp"
#include "tensoracle/core/value_cast.hpp"

namespace tensoracle {

/// The typed container of the kit: a dynamic-rank, row-major xtensor array
/// of an element type, or of an AD scalar (what kernels run on for derivatives).
template <class T>
    requires(element_type<T> || ad_scalar<T>)
using array = xt::xarray<T, xt::layout_type::row_major>;

/// Dimensions of a tensor, outermost first. Rank 0 is a scalar.
using shape_type = std::vector<std::size_t>;

/// Number of elements of a shape; throws shape_error where the product does
/// not fit in size_t (a hostile or corrupt shape must not wrap around).
[[nodiscard]] inline std::size_t element_count(std::span<const std::size_t> dims,
                                               std::string_view where = "tensoracle::element_count") {
    std::size_t n = 1;
    for (const std::size_t d : dims) {
        if (d != 0 && n > std::numeric_limits<std::size_t>::max() / d) {
            throw shape_error(where, "the element count of the shape overflows size_t");
        }
        n *= d;
    }
    return n;
}

[[nodiscard]] inline std::string to_string(std::span<const std::size_t> dims) {
    std::string s = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (i != 0) s += ", ";
        s += std::to_string(dims[i]);
    }
    return s + "]";
}

/// Row-major multi-index of a flat position.
[[nodiscard]] inline shape_type unravel_index(std::size_t flat, std::span<const std::size_t> dims) {
    shape_type idx(dims.size(), 0);
    for (std::size_t i = dims.size(); i-- > 0;) {
        if (dims[i] == 0) break;
        idx[i] = flat % dims[i];
        flat /= dims[i];
    }
    return idx;
}

namespace detail {
/// A tensor's storage deleter: gives the bytes back to the memory budget with the
/// storage. (Outside the class: a nested class's member initializers are not yet
/// seen where unique_ptr asks whether it is default-constructible.)
struct free_tensor_storage {
    std::size_t bytes = 0;
    void operator()(void* p) const noexcept {
        ::operator delete(p);
        release_memory(bytes);
    }
};
}  // namespace detail

/// A tensor whose dtype is known at run time: dtype, shape and a buffer of
/// elements. Typed access (`values<T>()`, `as_array<T>()`) checks the dtype and
/// throws dtype_error naming both; `to<T>()` converts with value_cast.
///
/// Why not a std::variant of ten xt::xarray types: that instantiates ten
/// container classes in every translation unit that includes the kit (that
/// doubles the umbrella header's compile time, benchmarks/compile_time.py).
class tensor {
public:
    /// An empty float32 tensor of shape [0].
    tensor() = default;

    template <element_type T>
    explicit tensor(const array<T>& values) : tensor(dtype_of<T>, shape_type(values.shape().begin(), values.shape().end())) {
        if (size_ != 0) std::memcpy(data_.get(), values.data(), size_ * sizeof(T));
    }

    /// Evaluates any xtensor expression of an element type into a tensor.
    template <class E>
        requires element_type<typename E::value_type>
    [[nodiscard]] static tensor from(const xt::xexpression<E>& e) {
        return tensor(array<typename E::value_type>(e.derived_cast()));
    }

    /// A zero-filled tensor (all-zero bits are 0 / false in every dtype).
    [[nodiscard]] static tensor zeros(dtype d, const shape_type& dims) {
        tensor t(d, dims, "tensoracle::tensor::zeros");
        if (t.nbytes() != 0) std::memset(t.data_.get(), 0, t.nbytes());
        return t;
    }

    /// A tensor whose elements are left unset, for a kernel that writes every
    /// one of them (zeros() would touch the memory twice).
    [[nodiscard]] static tensor for_overwrite(dtype d, const shape_type& dims) {
        return tensor(d, dims, "tensoracle::tensor::for_overwrite");
    }

    /// Builds a tensor from the row-major bytes of its elements in this
    /// machine's byte order (one byte per bool, any nonzero byte is true).
    [[nodiscard]] static tensor from_bytes(dtype d, const shape_type& dims, std::span<const std::byte> bytes) {
        // Compared before allocating: a corrupt file declaring [10^6, 10^6] with 16
        // bytes of data is this error, not a 4 TB allocation.
        const std::size_t needed = byte_size(d, dims, "tensoracle::tensor::from_bytes");
        if (bytes.size() != needed) {
            throw error("tensoracle::tensor::from_bytes",
                        "got " + std::to_string(bytes.size()) + " bytes for " + std::string(name(d)) + " " +
                            to_string(dims) + ", which needs " + std::to_string(needed) + " bytes");
        }
        tensor t(d, dims, "tensoracle::tensor::from_bytes");
        if (d == dtype::boolean) {
            auto out = t.values<bool>();
            for (std::size_t i = 0; i < out.size(); ++i) out[i] = bytes[i] != std::byte{0};
        } else if (t.nbytes() != 0) {
            std::memcpy(t.data_.get(), bytes.data(), t.nbytes());
        }
        return t;
    }

    tensor(const tensor& other) : tensor(other.dtype_, other.shape_) {
        if (nbytes() != 0) std::memcpy(data_.get(), other.data_.get(), nbytes());
    }
    tensor& operator=(const tensor& other) {
        if (this != &other) *this = tensor(other);
        return *this;
    }
    tensor(tensor&&) noexcept = default;
    tensor& operator=(tensor&&) noexcept = default;
    ~tensor() = default;

    /// Calls `f(std::span<const T>)` with the elements in their own type.
    template <class F>
    decltype(auto) visit(F&& f) const {
        return tensoracle::visit(dtype_, [&](auto t) -> decltype(auto) {
            using T = typename decltype(t)::type;
            return std::forward<F>(f)(std::span<const T>(static_cast<const T*>(data_.get()), size_));
        });
    }
    /// Calls `f(std::span<T>)` with the elements in their own type.
    template <class F>
    decltype(auto) visit(F&& f) {
        return tensoracle::visit(dtype_, [&](auto t) -> decltype(auto) {
            using T = typename decltype(t)::type;
            return std::forward<F>(f)(std::span<T>(static_cast<T*>(data_.get()), size_));
        });
    }

    [[nodiscard]] dtype element_dtype() const noexcept { return dtype_; }
    [[nodiscard]] const shape_type& shape() const noexcept { return shape_; }
    [[nodiscard]] std::size_t rank() const noexcept { return shape_.size(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::size_t nbytes() const noexcept { return size_ * element_size(dtype_); }

    /// The elements, row-major; T must be the held dtype.
    template <element_type T>
    [[nodiscard]] std::span<const T> values() const {
        check_holds<T>("tensoracle::tensor::values");
        return {static_cast<const T*>(data_.get()), size_};
    }
    template <element_type T>
    [[nodiscard]] std::span<T> values() {
        check_holds<T>("tensoracle::tensor::values");
        return {static_cast<T*>(data_.get()), size_};
    }

    /// A typed copy; T must be the held dtype.
    template <element_type T>
    [[nodiscard]] array<T> as_array() const {
        const auto v = values<T>();
        auto out = array<T>::from_shape(shape_);
        std::copy(v.begin(), v.end(), out.data());
        return out;
    }

    /// A converted copy with value_cast semantics, whatever the held dtype.
    template <element_type T>
    [[nodiscard]] array<T> to() const {
        auto out = array<T>::from_shape(shape_);
        visit([&](auto src) {
            for (std::size_t i = 0; i < src.size(); ++i) out.data()[i] = value_cast<T>(src[i]);
        });
        return out;
    }

    /// A converted tensor of dtype d (value_cast semantics). A template only so
    /// that its 100 conversion loops are compiled where it is used, not in
    /// every file that includes the kit.
    template <std::same_as<dtype> D>
    [[nodiscard]] tensor cast(D d) const {
        tensor out(d, shape_);
        visit([&](auto src) { out.assign_converted(src.data()); });
        return out;
    }

    /// The elements of a, converted to dtype d (value_cast semantics): what
    /// tensor(a).cast(d) gives, with one conversion loop per target dtype
    /// instead of one per pair of dtypes.
    template <element_type T>
    [[nodiscard]] static tensor from_array_as(const array<T>& a, dtype d) {
        tensor out(d, shape_type(a.shape().begin(), a.shape().end()), "tensoracle::tensor::from_array_as");
        out.assign_converted(a.data());
        return out;
    }

    /// Element `flat` (row-major) widened to double, for reports and printing.
    [[nodiscard]] double value_as_double(std::size_t flat) const {
        if (flat >= size_) {
            throw error("tensoracle::tensor::value_as_double",
                        "index " + std::to_string(flat) + " is out of range for " + std::to_string(size_) +
                            " elements");
        }
        return visit([flat](auto v) { return value_cast<double>(v[flat]); });
    }

    /// Row-major bytes of the elements in this machine's byte order.
    [[nodiscard]] std::vector<std::byte> to_bytes() const {
        std::vector<std::byte> out(nbytes());
        if (!out.empty()) std::memcpy(out.data(), data_.get(), out.size());
        return out;
    }

    /// Same dtype, same shape, and bitwise-equal elements (NaN payloads too).
    [[nodiscard]] bool identical(const tensor& other) const {
        return dtype_ == other.dtype_ && shape_ == other.shape_ &&
               (nbytes() == 0 || std::memcmp(data_.get(), other.data_.get(), nbytes()) == 0);
    }

    friend std::ostream& operator<<(std::ostream& os, const tensor& t) {
        return os << name(t.dtype_) << to_string(t.shape_);
    }

private:
    using free_storage = detail::free_tensor_storage;

    static constexpr std::size_t element_size(dtype d) { return d == dtype::boolean ? sizeof(bool) : static_cast<std::size_t>(info(d).bits / 8); }

    static std::size_t byte_size(dtype d, std::span<const std::size_t> dims, std::string_view where) {
        const std::size_t n = element_count(dims, where), width = element_size(d);
        if (n > std::numeric_limits<std::size_t>::max() / width) {
            throw shape_error(where, "the byte size of the shape overflows size_t");
        }
        return n * width;
    }

    // Storage from operator new implicitly creates the (trivial) elements.
    tensor(dtype d, shape_type dims, std::string_view where = "tensoracle::tensor")
        : dtype_(d), shape_(std::move(dims)), size_(element_count(shape_, where)) {
        const std::size_t bytes = byte_size(d, shape_, where);
        if (bytes == 0) return;
        // Checked against the budget (core/memory.hpp) before allocating: a hostile
        // shape gets a memory_error naming it, not a bad_alloc or a paging machine.
        const auto what = [&] { return std::string(name(d)) + to_string(shape_); };
        detail::reserve_memory(bytes, where, what);
        void* p = nullptr;
        try {
            p = ::operator new(bytes);
        } catch (const std::bad_alloc&) {
            detail::release_memory(bytes);
            throw memory_error(where, what() + " needs " + memory_size_text(bytes) + " (" + std::to_string(bytes) +
                                          " bytes), within the memory budget, but the system refused to allocate it",
                               bytes, memory_limit());
        }
        data_ = std::unique_ptr<void, free_storage>(p, free_storage{bytes});
    }

    // This tensor's elements from src (as many), each value_cast to its dtype:
    // the one conversion loop of cast and from_array_as.
    template <class T>
    void assign_converted(const T* src) {
        visit([&](auto dst) {
            using To = typename decltype(dst)::value_type;
            for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = value_cast<To>(src[i]);
        });
    }

    template <class T>
    void check_holds(std::string_view where) const {
        if (dtype_ != dtype_of<T>) {
            throw dtype_error(where, "asked for " + std::string(dtype_traits<T>::short_name) +
                                         " but the tensor holds " + std::string(name(dtype_)));
        }
    }

    dtype dtype_ = dtype::f32;
    shape_type shape_{0};
    std::size_t size_ = 0;
    std::unique_ptr<void, free_storage> data_;
};

}  // namespace tensoracle
