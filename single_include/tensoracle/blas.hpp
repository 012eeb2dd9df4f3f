// GENERATED FILE - DO NOT EDIT.
// Made by scripts/amalgamate from include/tensoracle/blas.hpp; edit those headers and rerun it.
// tensoracle: header-only test kit for deep-learning compilers and AD engines.
#pragma once
#include "tensoracle.hpp"
// ---- begin tensoracle/blas.hpp ----
// tensoracle: BLAS fast paths for MatMul, Gemm and Conv (optional part).
//
// Needs <cblas.h> and a CBLAS library at link time (Debian: libopenblas-dev;
// CMake: find_package(BLAS) and cblas.h's directory). Call
// tensoracle::use_blas_fast_paths() once before evaluating; the interpreter
// then runs float32/float64 MatMul, Gemm and Conv (as im2col + GEMM) through
// cblas_sgemm / cblas_dgemm. See <tensoracle/ops/fast_paths.hpp> for what
// changes (rounding order) and what does not.

#include <cblas.h>

#include <climits>
#include <cstddef>
#include <string>


namespace tensoracle {

namespace detail {
[[nodiscard]] inline int blas_int(std::size_t v) {
    if (v > static_cast<std::size_t>(INT_MAX)) {
        throw error("tensoracle::blas", "dimension " + std::to_string(v) + " exceeds the CBLAS int range");
    }
    return static_cast<int>(v);
}
inline void blas_sgemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                       std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blas_int(m), blas_int(n),
                blas_int(k), alpha, a, blas_int(lda), b, blas_int(ldb), beta, c, blas_int(ldc));
}
inline void blas_dgemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a,
                       std::size_t lda, const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc) {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blas_int(m), blas_int(n),
                blas_int(k), alpha, a, blas_int(lda), b, blas_int(ldb), beta, c, blas_int(ldc));
}
}  // namespace detail

/// Plugs cblas_sgemm / cblas_dgemm into the interpreter's fast-path table.
inline void use_blas_fast_paths() noexcept {
    ops::fast_paths().sgemm = &detail::blas_sgemm;
    ops::fast_paths().dgemm = &detail::blas_dgemm;
}

}  // namespace tensoracle
// ---- end tensoracle/blas.hpp ----
