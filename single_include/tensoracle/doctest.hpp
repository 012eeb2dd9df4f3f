// GENERATED FILE - DO NOT EDIT.
// Made by scripts/amalgamate from include/tensoracle/doctest.hpp; edit those headers and rerun it.
// tensoracle: header-only test kit for deep-learning compilers and AD engines.
#pragma once
// tensoracle: doctest assertions. Include after <doctest/doctest.h>.
//
//   TENSORACLE_CHECK_ALLCLOSE(actual, expected, tensoracle::level{-5});
//   TENSORACLE_REQUIRE_ALLCLOSE(actual, expected, tensoracle::tolerance{1e-6, 1e-5});
//
// On failure doctest prints the comparison report: shapes, error statistics,
// the worst elements with their indices and the strictest passing level.

#include <doctest/doctest.h>

#include "core.hpp"

#define TENSORACLE_CHECK_ALLCLOSE(actual, expected, tol) \
    DOCTEST_CHECK(::tensoracle::allclose((actual), (expected), (tol)))
#define TENSORACLE_REQUIRE_ALLCLOSE(actual, expected, tol) \
    DOCTEST_REQUIRE(::tensoracle::allclose((actual), (expected), (tol)))
#define TENSORACLE_WARN_ALLCLOSE(actual, expected, tol) \
    DOCTEST_WARN(::tensoracle::allclose((actual), (expected), (tol)))

// Gradient-oracle reports (tensoracle/ad/oracle.hpp, or anything with failed()
// and to_string()): passes unless a failure is left that no filter explains;
// on failure doctest prints the whole report.
#define TENSORACLE_CHECK_GRADIENTS(report) DOCTEST_CHECK_MESSAGE(!(report).failed(), (report).to_string())
#define TENSORACLE_REQUIRE_GRADIENTS(report) DOCTEST_REQUIRE_MESSAGE(!(report).failed(), (report).to_string())
