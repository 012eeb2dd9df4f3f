#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <tensoracle/core.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace core_tolerance_test {

namespace to = tensoracle;

namespace {
// Relative closeness for comparing table values printed to 2-3 digits.
bool near(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::fabs(b); }
}  // namespace

TEST_CASE("GraphNet Appendix A: the anchor values at t = -5 and t = 0") {
    using to::dtype;
    const auto f16 = to::tolerance_level(dtype::f16, -5);
    const auto bf16 = to::tolerance_level(dtype::bf16, -5);
    const auto f32 = to::tolerance_level(dtype::f32, -5);
    const auto f64 = to::tolerance_level(dtype::f64, -5);
    CHECK(near(f16.atol, 1e-5, 1e-12));
    CHECK(near(f16.rtol, 1e-3, 1e-12));
    CHECK(near(bf16.atol, 1e-5, 1e-12));
    CHECK(near(bf16.rtol, 1.6e-2, 0.01));  // 10^-1.796 = 0.015996
    CHECK(near(bf16.rtol, 0.0159956, 1e-5));
    CHECK(near(f32.atol, 1e-5, 1e-12));
    CHECK(near(f32.rtol, 1.3e-6, 0.01));  // 10^-5.886 = 1.3002e-6
    CHECK(near(f32.rtol, 1.30017e-6, 1e-5));
    CHECK(near(f64.atol, 1e-7, 1e-12));
    CHECK(near(f64.rtol, 1e-7, 1e-12));
    for (const auto d : {dtype::f16, dtype::bf16, dtype::f32, dtype::f64}) {
        CHECK(to::tolerance_level(d, 0) == to::tolerance{1.0, 1.0});
    }
    CHECK(near(to::tolerance_level(dtype::f64, -10).atol, 1e-14, 1e-12));
    CHECK(near(to::tolerance_level(dtype::f32, -10).rtol, std::pow(10.0, -11.772), 1e-12));
}

TEST_CASE("levels are log-linear and monotone in t, for every floating dtype") {
    for (const auto d : {to::dtype::f16, to::dtype::bf16, to::dtype::f32, to::dtype::f64}) {
        double prev_atol = 0.0, prev_rtol = 0.0;
        for (int t = -10; t <= 0; ++t) {
            const auto tol = to::tolerance_level(d, t);
            CHECK(tol.atol > prev_atol);
            CHECK(tol.rtol > prev_rtol);
            prev_atol = tol.atol;
            prev_rtol = tol.rtol;
            // lg is linear: half-way level is the geometric mean of its neighbours.
            if (t > -10 && t < 0) {
                const auto lo = to::tolerance_level(d, t - 1), hi = to::tolerance_level(d, t + 1);
                CHECK(near(tol.rtol, std::sqrt(lo.rtol * hi.rtol), 1e-12));
            }
        }
    }
}

TEST_CASE("integer and bool dtypes compare exactly at every level") {
    for (const auto d : {to::dtype::i8, to::dtype::i16, to::dtype::i32, to::dtype::i64, to::dtype::u8,
                         to::dtype::boolean}) {
        CHECK(to::tolerance_level(d, -3) == to::tolerance{0.0, 0.0});
    }
    CHECK(to::tolerance_level<float>(-5) == to::tolerance_level(to::dtype::f32, -5));
}

TEST_CASE("levels outside [-10, 0] are errors") {
    CHECK_THROWS_WITH_AS((void)to::tolerance_level(to::dtype::f32, 0.5),
                         "tensoracle::tolerance_level: level t must lie in [-10, 0], got 0.500000", to::error);
    CHECK_THROWS_AS((void)to::tolerance_level(to::dtype::f32, -11), to::error);
    CHECK_THROWS_AS((void)to::tolerance_level(to::dtype::f32, std::numeric_limits<double>::quiet_NaN()), to::error);
}

TEST_CASE("ulp distance") {
    using L = std::numeric_limits<float>;
    CHECK(to::ulp_distance(1.0f, 1.0f) == 0u);
    CHECK(to::ulp_distance(1.0f, std::nextafter(1.0f, 2.0f)) == 1u);
    CHECK(to::ulp_distance(0.0f, -0.0f) == 0u);
    CHECK(to::ulp_distance(L::denorm_min(), -L::denorm_min()) == 2u);
    CHECK(to::ulp_distance(L::max(), L::infinity()) == 1u);
    CHECK(to::ulp_distance(1.0f, 2.0f) == (1u << 23));
    CHECK_FALSE(to::ulp_distance(L::quiet_NaN(), 1.0f).has_value());
    using D = std::numeric_limits<double>;
    CHECK(to::ulp_distance(D::lowest(), D::max()) == 2 * 0x7fefffffffffffffULL);
    CHECK(to::ulp_distance(to::float16(1.0), to::float16(2.0)) == 1024u);
    CHECK(to::ulp_distance(to::bfloat16(1.0f), to::bfloat16(-1.0f)) == 2u * 0x3f80u);
    // Property: stepping k representable values away is k ulps.
    to::rng g(8);
    for (int i = 0; i < 10'000; ++i) {
        double x = g.normal(0.0, 1e3);
        const double start = x;
        const auto k = static_cast<std::uint64_t>(g.integer(0, 50));
        for (std::uint64_t j = 0; j < k; ++j) x = std::nextafter(x, D::infinity());
        REQUIRE(to::ulp_distance(start, x) == k);
    }
}

}  // namespace core_tolerance_test
