#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <tensoracle/gtest.hpp>
#include <tensoracle/core.hpp>

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

#include <tensoracle/ad/oracle.hpp>

namespace {
// f(x) = 2x with a JVP that is off by a factor: caught as gradient != FD.
to::ad::engine doubling(double jvp_factor) {
    to::ad::engine e;
    e.value = [](const to::ad::tensors& x) {
        auto v = x[0].as_array<double>();
        v *= 2.0;
        return to::ad::tensors{to::tensor(v)};
    };
    e.jvp = [e, jvp_factor](const to::ad::tensors& x, const to::ad::tensors& u) {
        auto d = u[0].as_array<double>();
        d *= jvp_factor;
        return to::ad::jvp_result{e.value(x), {to::tensor(d)}};
    };
    return e;
}
}  // namespace

TEST(GtestAdapter, GradientReports) {
    const to::ad::tensors x{to::tensor(to::array<double>{1.0, -0.5, 3.0})};
    const auto good = to::ad::check_gradients(doubling(2.0), x);
    TENSORACLE_EXPECT_GRADIENTS(good);
    TENSORACLE_ASSERT_GRADIENTS(good);
    static const auto bad = to::ad::check_gradients(doubling(2.5), x);
    EXPECT_NONFATAL_FAILURE(TENSORACLE_EXPECT_GRADIENTS(bad), "gradient != finite differences");
    EXPECT_FATAL_FAILURE(TENSORACLE_ASSERT_GRADIENTS(bad), "Ju (jvp) differs from finite differences");
}
