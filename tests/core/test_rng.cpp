#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <boost/hana/for_each.hpp>

#include <tensoracle/core.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace core_rng_test {

namespace to = tensoracle;

TEST_CASE("splitmix64 and xoshiro256** match their published reference outputs") {
    // splitmix64 seeded with 1234567 (reference sequence of splitmix64.c).
    std::uint64_t sm = 1234567;
    CHECK(to::detail::splitmix64_next(sm) == 6457827717110365317ULL);
    CHECK(to::detail::splitmix64_next(sm) == 3203168211198807973ULL);
    CHECK(to::detail::splitmix64_next(sm) == 9817491932198370423ULL);
    CHECK(to::detail::splitmix64_next(sm) == 4593380528125082431ULL);
    CHECK(to::detail::splitmix64_next(sm) == 16408922859458223821ULL);
    // xoshiro256** from the state {1, 2, 3, 4} (reference xoshiro256starstar.c).
    auto g = to::rng::from_state({1, 2, 3, 4});
    CHECK(g() == 11520ULL);
    CHECK(g() == 0ULL);
    CHECK(g() == 1509978240ULL);
    CHECK(g() == 1215971899390074240ULL);
}

TEST_CASE("pinned values: the same on every platform and compiler") {
    // If this fails on some platform, a transform depends on something
    // (libm, FMA contraction, std:: distributions) that it must not.
    to::rng g(20261122);
    CHECK(g() == 0xce37efc44147fcbeULL);
    CHECK(g() == 0x48f528fb0ba84bfcULL);
    CHECK(g() == 0xb1be854d50a90d36ULL);
    CHECK(g.uniform() == 0x1.c84c93aabc7b8p-2);
    CHECK(g.uniform() == 0x1.e7d12b18f813ap-2);
    CHECK(g.uniform() == 0x1.4c98d494091a3p-1);
    CHECK(g.normal() == -0x1.46f88130e8f77p-2);
    CHECK(g.normal() == -0x1.b62513a079edap-1);
    CHECK(g.normal() == -0x1.4896f73410de1p-1);
    CHECK(g.normal() == -0x1.c92814160c315p-3);
    CHECK(g.integer(-1000, 1000) == 885);
    CHECK(g.integer(-1000, 1000) == 20);
    CHECK(g.integer(-1000, 1000) == 80);
    CHECK(g.integer(-1000, 1000) == 481);
    const auto h = g.uniform_array<to::float16>({4}, -1, 1);
    CHECK(h(0).bits() == 0x300a);
    CHECK(h(1).bits() == 0xb8d3);
    CHECK(h(2).bits() == 0xb84f);
    CHECK(h(3).bits() == 0xb484);
}

TEST_CASE("portable_log is accurate to about an ulp of std::log") {
    to::rng g(3);
    for (int i = 0; i < 200'000; ++i) {
        const double x = std::ldexp(g.uniform() + 0.5, static_cast<int>(g.integer(-1020, 1020)));
        const double ours = to::detail::portable_log(x);
        const double ref = std::log(x);
        REQUIRE_MESSAGE(std::fabs(ours - ref) <= 2.0 * std::fabs(std::nextafter(ref, 0.0) - ref) + 1e-300,
                        "x = " << x);
    }
    CHECK(to::detail::portable_log(1.0) == 0.0);
    CHECK(to::detail::portable_log(2.0) == std::log(2.0));
}

TEST_CASE("normal samples have the right moments (seeded, deterministic)") {
    to::rng g(17);
    const int n = 200'000;
    double sum = 0.0, sq = 0.0, fourth = 0.0;
    int within_one = 0;
    for (int i = 0; i < n; ++i) {
        const double z = g.normal();
        sum += z;
        sq += z * z;
        fourth += z * z * z * z;
        within_one += std::fabs(z) < 1.0 ? 1 : 0;
    }
    const double mean = sum / n, var = sq / n - mean * mean;
    CHECK(std::fabs(mean) < 0.01);                      // sd of the mean is 0.0022
    CHECK(std::fabs(var - 1.0) < 0.015);                // sd of the variance is 0.0032
    CHECK(std::fabs(fourth / n - 3.0) < 0.08);          // kurtosis of a normal
    CHECK(std::fabs(within_one / double(n) - 0.682689) < 0.005);
    const double x = g.normal(10.0, 0.0);
    CHECK(x == 10.0);
}

TEST_CASE("bounded integers are unbiased and cover their range") {
    to::rng g(23);
    std::array<int, 7> counts{};
    for (int i = 0; i < 70'000; ++i) ++counts[g.below(7)];
    double chi2 = 0.0;
    for (const int c : counts) chi2 += (c - 10'000.0) * (c - 10'000.0) / 10'000.0;
    CHECK(chi2 < 22.46);  // chi-square, 6 degrees of freedom, p = 0.001
    bool saw_lo = false, saw_hi = false;
    for (int i = 0; i < 1000; ++i) {
        const auto v = g.integer(-2, 2);
        REQUIRE(v >= -2);
        REQUIRE(v <= 2);
        saw_lo = saw_lo || v == -2;
        saw_hi = saw_hi || v == 2;
    }
    CHECK((saw_lo && saw_hi));
    (void)g.integer(INT64_MIN, INT64_MAX);  // full range: no overflow
    const auto [hi, lo] = to::detail::multiply_wide(0xffffffffffffffffULL, 0xffffffffffffffffULL);
    CHECK(hi == 0xfffffffffffffffeULL);
    CHECK(lo == 1ULL);
}

TEST_CASE("the one-instruction 128-bit product agrees with the portable one") {
    to::rng g(77);
    const std::uint64_t edges[] = {0, 1, 2, 3, 0xffffffffULL, 0x100000000ULL, 0x8000000000000000ULL, 0xffffffffffffffffULL};
    for (const auto a : edges) {
        for (const auto b : edges) CHECK(to::detail::multiply_wide(a, b) == to::detail::multiply_wide_portable(a, b));
    }
    for (int i = 0; i < 10000; ++i) {
        const auto a = g(), b = g() >> (i % 64);
        REQUIRE(to::detail::multiply_wide(a, b) == to::detail::multiply_wide_portable(a, b));
    }
}

TEST_CASE("arrays draw exactly what the element-wise calls draw") {
    // uniform_array checks its range once and keeps Lemire's threshold; the
    // values and the generator's state after them must not change.
    auto same_as_calls = [](auto tag, double lo, double hi, bool integral) {
        using T = typename decltype(tag)::type;
        to::rng a(2024), b(2024);
        const auto arr = a.uniform_array<T>({3, 1000}, lo, hi);
        for (std::size_t i = 0; i < arr.size(); ++i) {
            const T expected = integral ? to::value_cast<T>(b.integer(static_cast<std::int64_t>(std::ceil(lo)),
                                                                      static_cast<std::int64_t>(std::ceil(hi) - 1.0)))
                                        : to::value_cast<T>(b.uniform(lo, hi));
            REQUIRE(to::value_cast<double>(arr.data()[i]) == to::value_cast<double>(expected));
        }
        CHECK(a.state() == b.state());
    };
    same_as_calls(boost::hana::type_c<double>, -3.5, 7.25, false);
    same_as_calls(boost::hana::type_c<float>, 1e-3, 1e3, false);
    same_as_calls(boost::hana::type_c<to::float16>, -1.0, 1.0, false);
    same_as_calls(boost::hana::type_c<std::int32_t>, -5.0, 6.0, true);
    same_as_calls(boost::hana::type_c<std::uint8_t>, 0.0, 256.0, true);
    // A range of 3 * 2^62 values: Lemire's method rejects a quarter of the raw draws.
    same_as_calls(boost::hana::type_c<std::int64_t>, -0x1p63, 0x1p62, true);
    to::rng g(1);
    CHECK_THROWS_WITH_AS(g.uniform_array<float>({2}, 1.0, 1.0), doctest::Contains("needs finite lo < hi"), to::error);
    CHECK_NOTHROW(g.uniform_array<float>({0}, 1.0, 1.0));  // no element, no draw, no check (as before)
}

TEST_CASE("arrays of every dtype stay in their range") {
    to::rng g(31);
    boost::hana::for_each(to::all_dtypes, [&](auto t) {
        using T = typename decltype(t)::type;
        const auto a = g.uniform_array<T>({5, 7}, 0.0, 2.0);
        CHECK(a.shape(0) == 5);
        for (const auto v : a) {
            const double d = to::value_cast<double>(v);
            CHECK(d >= 0.0);
            CHECK(d <= 2.0);  // f16/bf16 rounding may reach the upper bound
        }
    });
    const auto n = g.normal_array<float>({1000}, 5.0, 0.5);
    CHECK(std::fabs(xt::mean(n)() - 5.0f) < 0.1f);
}

TEST_CASE("split streams are independent of later draws") {
    to::rng a(1), b(1);
    auto a1 = a.split();
    auto b1 = b.split();
    (void)a();  // drawing from the parent does not move the child
    CHECK(a1() == b1());
    CHECK(a.state() != a1.state());
}

TEST_CASE("bad arguments are clear errors") {
    to::rng g(1);
    CHECK_THROWS_WITH_AS((void)g.uniform(1.0, 1.0), doctest::Contains("tensoracle::rng::uniform: needs finite lo < hi"),
                         to::error);
    CHECK_THROWS_AS((void)g.uniform(0.0, INFINITY), to::error);
    CHECK_THROWS_WITH_AS((void)g.below(0), doctest::Contains("empty"), to::error);
    CHECK_THROWS_WITH_AS((void)g.integer(3, 2), doctest::Contains("needs lo <= hi"), to::error);
    CHECK_THROWS_AS((void)g.bernoulli(1.5), to::error);
    CHECK_THROWS_AS((void)g.normal(0.0, -1.0), to::error);
    CHECK_THROWS_WITH_AS((void)g.uniform_array<std::int8_t>({2}, 0.0, 300.0), doctest::Contains("outside the range of i8"),
                         to::error);
    CHECK_THROWS_WITH_AS((void)g.uniform_array<std::int32_t>({2}, 0.2, 0.7), doctest::Contains("no integer lies in"),
                         to::error);
    CHECK_THROWS_AS((void)to::rng::from_state({0, 0, 0, 0}), to::error);
}

}  // namespace core_rng_test
