// Fails on purpose: CTest checks that doctest prints the comparison report.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <tensoracle/core.hpp>
#include <tensoracle/doctest.hpp>

TEST_CASE("a failing allclose prints the report") {
    const tensoracle::array<float> expected = {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};
    tensoracle::array<float> actual = expected;
    actual(1, 2) = 6.25f;
    TENSORACLE_CHECK_ALLCLOSE(actual, expected, tensoracle::level{-5});
}
