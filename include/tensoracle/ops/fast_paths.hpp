// tensoracle: optional accelerated kernels behind MatMul, Gemm and Conv.
//
// The reference kernels are naive on purpose: each is the ONNX formula as
// loops, which is what the conformance runner proves. Campaigns and input
// searches evaluate thousands of graphs, and there the three matrix ops are
// most of the arithmetic. This table lets a program plug in a GEMM (BLAS:
// <tensoracle/blas.hpp>) that the interpreter then uses for float32 and
// float64 instances of those ops; everything else stays naive. The table is
// empty unless a program fills it, so the core headers need no BLAS.
//
// The results are the same formula with another summation order, so they
// differ from the naive kernels by rounding (tests hold them to the dtype's
// tolerance level); a BLAS may round differently per CPU, which is why
// `tensoracle gen` leaves the table empty unless asked (--blas).
#pragma once

#include <cstddef>
#include <type_traits>

namespace tensoracle::ops {

/// C = alpha op(A) op(B) + beta C for row-major matrices: op(A) is M x K
/// (A is stored K x M when trans_a), op(B) is K x N (N x K when trans_b);
/// ld* are row strides. beta is 0 (C is only written) or 1.
template <class T>
using gemm_function = void (*)(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, T alpha,
                               const T* a, std::size_t lda, const T* b, std::size_t ldb, T beta, T* c, std::size_t ldc);

/// The accelerated kernels in use; null members mean the naive kernel.
struct fast_path_table {
    gemm_function<float> sgemm = nullptr;
    gemm_function<double> dgemm = nullptr;
};

/// The process's table. Fill it before evaluating (it is not synchronized).
[[nodiscard]] inline fast_path_table& fast_paths() noexcept {
    static fast_path_table table;
    return table;
}

/// The GEMM for element type T, or null when T has none or none is plugged in.
template <class T>
[[nodiscard]] gemm_function<T> fast_gemm() noexcept {
    if constexpr (std::is_same_v<T, float>) {
        return fast_paths().sgemm;
    } else if constexpr (std::is_same_v<T, double>) {
        return fast_paths().dgemm;
    } else {
        return nullptr;
    }
}

/// Within its lifetime only the naive kernels run (the conformance runner and
/// the cross-checks of the fast paths use it); the table comes back after.
class naive_kernels_only {
public:
    naive_kernels_only() noexcept : saved_(fast_paths()) { fast_paths() = {}; }
    ~naive_kernels_only() { fast_paths() = saved_; }
    naive_kernels_only(const naive_kernels_only&) = delete;
    naive_kernels_only& operator=(const naive_kernels_only&) = delete;

private:
    fast_path_table saved_;
};

}  // namespace tensoracle::ops
