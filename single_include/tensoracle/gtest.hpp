// GENERATED FILE - DO NOT EDIT.
// Made by scripts/amalgamate from include/tensoracle/gtest.hpp; edit those headers and rerun it.
// tensoracle: header-only test kit for deep-learning compilers and AD engines.
#pragma once
// tensoracle: GoogleTest assertions. Include after <gtest/gtest.h>.
//
//   TENSORACLE_EXPECT_ALLCLOSE(actual, expected, tensoracle::level{-5});
//   TENSORACLE_ASSERT_ALLCLOSE(actual, expected, tensoracle::tolerance{1e-6, 1e-5});
//
// On failure GoogleTest prints the comparison report: shapes, error
// statistics, the worst elements with their indices and the strictest level.

#include <gtest/gtest.h>

#include "core.hpp"

namespace tensoracle::gtest {

/// Predicate-formatter for EXPECT_PRED_FORMAT3: the report goes into the failure message.
template <class A, class E, class Tol>
::testing::AssertionResult allclose_predicate(const char* actual_expr, const char* expected_expr,
                                              const char* tol_expr, const A& actual, const E& expected,
                                              const Tol& tol) {
    const auto result = ::tensoracle::allclose(actual, expected, tol);
    if (result) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "tensoracle::allclose(" << actual_expr << ", " << expected_expr << ", "
                                         << tol_expr << ") failed\n"
                                         << result;
}

}  // namespace tensoracle::gtest

#define TENSORACLE_EXPECT_ALLCLOSE(actual, expected, tol) \
    EXPECT_PRED_FORMAT3(::tensoracle::gtest::allclose_predicate, actual, expected, tol)
#define TENSORACLE_ASSERT_ALLCLOSE(actual, expected, tol) \
    ASSERT_PRED_FORMAT3(::tensoracle::gtest::allclose_predicate, actual, expected, tol)

// Gradient-oracle reports (tensoracle/ad/oracle.hpp, or anything with failed()
// and to_string()): passes unless a failure is left that no filter explains.
#define TENSORACLE_EXPECT_GRADIENTS(report) EXPECT_FALSE((report).failed()) << (report).to_string()
#define TENSORACLE_ASSERT_GRADIENTS(report) ASSERT_FALSE((report).failed()) << (report).to_string()
