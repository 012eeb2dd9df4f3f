#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <tensoracle/gtest.hpp>
#include <tensoracle/tensoracle.hpp>

namespace to = tensoracle;

TEST(GtestAdapter, PassingChecks) {
    const to::array<double> e = {1.0, -2.0};
    const to::array<double> a = {1.0, -2.0 + 1e-9};
    TENSORACLE_EXPECT_ALLCLOSE(a, e, to::level{-5});
    TENSORACLE_ASSERT_ALLCLOSE(a, e, (to::tolerance{1e-8, 0.0}));
    TENSORACLE_EXPECT_ALLCLOSE(to::array<bool>{true}, to::array<bool>{true}, to::exact);
}

TEST(GtestAdapter, FailureMessageCarriesTheReport) {
    // gtest-spi's macros need objects of static storage duration.
    static const to::array<float> e = {{1.f, 2.f}, {3.f, 4.f}};
    static const to::array<float> a = {{1.f, 2.f}, {3.f, 4.5f}};
    EXPECT_NONFATAL_FAILURE(TENSORACLE_EXPECT_ALLCLOSE(a, e, to::level{-5}),
                            "tensoracle::allclose(a, e, to::level{-5}) failed");
    EXPECT_NONFATAL_FAILURE(TENSORACLE_EXPECT_ALLCLOSE(a, e, to::level{-5}), "[1, 1]: actual 4.5, expected 4");
    EXPECT_NONFATAL_FAILURE(TENSORACLE_EXPECT_ALLCLOSE(a, e, to::level{-5}), "strictest passing level: t = 0");
    EXPECT_FATAL_FAILURE(TENSORACLE_ASSERT_ALLCLOSE(a, e, (to::tolerance{0.1, 0.0})), "mismatches: 1 of 4 elements");
}
