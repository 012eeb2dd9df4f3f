// A compiler engineer's unit test: does my float32 softmax kernel match a
// float64 reference at GraphNet tolerance level t = -5?
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <tensoracle/core.hpp>
#include <tensoracle/doctest.hpp>

#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

// Row-wise softmax straight from the formula; T = float stands in for the
// kernel under test, T = double is the reference.
template <class T>
tensoracle::array<T> softmax_rows(const tensoracle::array<T>& x) {
    tensoracle::array<T> y = x;
    for (std::size_t r = 0; r < y.shape(0); ++r) {
        auto row = xt::view(y, r, xt::all());
        row = xt::exp(row - xt::amax(row)());
        row /= xt::sum(row)();
    }
    return y;
}

TEST_CASE("my softmax matches the reference") {
    tensoracle::rng rng(42);  // same values on every platform
    const auto x = rng.normal_array<double>({8, 128});
    const tensoracle::array<float> reference = xt::cast<float>(softmax_rows(x));

    const auto mine = softmax_rows<float>(xt::cast<float>(x));
    TENSORACLE_CHECK_ALLCLOSE(mine, reference, tensoracle::level{-5});

    // The report behind the check: error statistics and the strictest level passed.
    const auto report = tensoracle::compare(mine, reference);
    MESSAGE("max ULP " << *report.max_ulp() << ", strictest passing level t = " << *report.min_passing_level());
    CHECK(report.min_passing_level() <= -5);
}
