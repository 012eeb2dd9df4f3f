#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include <tensoracle/core.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace core_compare_test {

namespace to = tensoracle;

namespace {
constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_value = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("statistics of a known error pattern") {
    const to::array<double> expected = {1.0, 2.0, 4.0, -8.0, 0.0};
    const to::array<double> actual = {1.0, 2.5, 4.0, -6.0, 0.0};
    const auto r = to::compare(actual, expected);
    CHECK(r.same_shape());
    CHECK(r.same_dtype());
    CHECK(r.size() == 5);
    CHECK(r.abs_error().max == 2.0);
    CHECK(r.abs_error().mean == doctest::Approx(0.5));
    CHECK(r.abs_error().median == 0.0);
    CHECK(r.abs_error().p99 == 2.0);
    CHECK(r.rel_error().max == 0.25);
    CHECK(r.rel_error().mean == doctest::Approx((0.25 + 0.25) / 5));
    CHECK(r.max_ulp() == to::ulp_distance(-6.0, -8.0));
    CHECK(r.mismatch_count(to::tolerance{0.0, 0.2}) == 2);
    CHECK(r.mismatch_count(to::tolerance{0.0, 0.25}) == 0);
    CHECK(r.passes(to::tolerance{0.0, 0.25}));
    CHECK_FALSE(r.passes(to::tolerance{1.9, 0.0}));
    CHECK(r.passes(to::tolerance{2.0, 0.0}));
    const auto w = r.worst(to::tolerance{0.1, 0.0}, 2);
    REQUIRE(w.size() == 2);
    CHECK(w[0].flat_index == 3);
    CHECK(w[0].index == to::shape_type{3});
    CHECK(w[0].abs_error == 2.0);
    CHECK(w[1].flat_index == 1);
}

TEST_CASE("median of an even count averages the middle pair") {
    const to::array<float> e = {0.f, 0.f, 0.f, 0.f};
    const to::array<float> a = {1.f, 2.f, 3.f, 4.f};
    const auto r = to::compare(a, e);
    CHECK(r.abs_error().median == 2.5);
    CHECK(r.rel_error().max == inf_value);  // expected 0, actual not
}

TEST_CASE("the strictest passing level is the boundary of passes()") {
    to::rng g(77);
    for (int trial = 0; trial < 200; ++trial) {
        // Random shape of rank 0-4, dims 1-6, and a random relative perturbation.
        to::shape_type dims(static_cast<std::size_t>(g.integer(0, 4)));
        for (auto& d : dims) d = static_cast<std::size_t>(g.integer(1, 6));
        const auto expected = g.normal_array<float>(dims);
        const double scale = std::pow(10.0, g.uniform(-8.0, 0.5));
        to::array<float> actual = expected;
        for (auto& v : actual) v = static_cast<float>(v * (1.0 + scale * g.uniform(-1.0, 1.0)));
        const auto r = to::compare(actual, expected);
        const auto lv = r.min_passing_level();
        // Brute force over the rule for each level.
        auto brute = [&](int t) {
            const auto tol = to::tolerance_level(to::dtype::f32, t);
            for (std::size_t i = 0; i < actual.size(); ++i) {
                const double a = actual.data()[i], e = expected.data()[i];
                if (!(std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e))) return false;
            }
            return true;
        };
        for (int t = -10; t <= 0; ++t) REQUIRE(r.passes(to::level{static_cast<double>(t)}) == brute(t));
        if (lv) {
            CHECK(r.passes(to::level{static_cast<double>(*lv)}));
            if (*lv > -10) CHECK_FALSE(r.passes(to::level{static_cast<double>(*lv - 1)}));
        } else {
            CHECK_FALSE(brute(0));
        }
    }
}

TEST_CASE("NaN and Inf positions") {
    const to::array<double> e = {nan_value, inf_value, -inf_value, 1.0, 2.0};
    SUBCASE("agreeing specials pass by default") {
        const auto r = to::compare(e, e);
        CHECK(r.nan_inf_agree());
        CHECK(r.passes(to::tolerance{}));
        CHECK(r.min_passing_level() == -10);
    }
    SUBCASE("options can make them disagree") {
        to::compare_options o;
        o.nan_equal = false;
        const auto r = to::compare(e, e, o);
        CHECK(r.nan_mismatches() == 1);
        CHECK(r.inf_mismatches() == 0);
        CHECK_FALSE(r.passes(to::tolerance{1e9, 1e9}));
        CHECK_FALSE(r.min_passing_level().has_value());
        o = {};
        o.inf_equal = false;
        CHECK(to::compare(e, e, o).inf_mismatches() == 2);
    }
    SUBCASE("mismatched specials fail at any tolerance and are listed first") {
        const to::array<double> a = {1.0, inf_value, inf_value, 1.0, 2.5};
        const auto r = to::compare(a, e);
        CHECK(r.nan_mismatches() == 1);
        CHECK(r.inf_mismatches() == 1);
        CHECK_FALSE(r.passes(to::tolerance{1e300, 1e300}));
        const auto w = r.worst(to::tolerance{1.0, 0.0}, 3);
        REQUIRE(w.size() == 3);
        CHECK(w[0].nan_inf_mismatch);
        CHECK(w[1].nan_inf_mismatch);
        CHECK(w[2].flat_index == 4);
        CHECK(to::judge(r, to::tolerance{1.0, 0.0}).reason == to::failure_reason::nan_inf_mismatch);
        // Stats cover only the finite pairs.
        CHECK(r.abs_error().max == 0.5);
    }
}

TEST_CASE("shape and dtype mismatches") {
    const to::tensor a(to::array<float>{{1.f, 2.f}, {3.f, 4.f}});
    const to::tensor b(to::array<float>{1.f, 2.f, 3.f, 4.f});
    const auto shape = to::compare(a, b);
    CHECK_FALSE(shape.same_shape());
    CHECK(shape.size() == 0);
    CHECK_FALSE(shape.passes(to::tolerance{1.0, 1.0}));
    CHECK_FALSE(shape.min_passing_level().has_value());
    CHECK(shape.describe(to::tolerance{}).find("shape mismatch: actual [2, 2], expected [4]") != std::string::npos);

    const to::tensor c(to::array<double>{{1.0, 2.0}, {3.0, 4.0}});
    const auto dt = to::compare(a, c);
    CHECK(dt.same_shape());
    CHECK_FALSE(dt.same_dtype());
    CHECK(dt.abs_error().max == 0.0);
    CHECK_FALSE(dt.passes(to::level{0}));
    CHECK(to::judge(dt, to::level{-5}).reason == to::failure_reason::dtype_mismatch);
    to::compare_options o;
    o.require_same_dtype = false;
    const auto mixed = to::compare(a, c, o);
    CHECK(mixed.passes(to::level{-10}));
    CHECK(mixed.describe(to::level{-5}).find("dtype mismatch: actual f32, expected f64 (allowed by options)") !=
          std::string::npos);
}

TEST_CASE("integers and bools are exact, even beyond 2^53") {
    const std::int64_t big = (std::int64_t{1} << 60);
    const to::array<std::int64_t> e = {big, -5, 7};
    const to::array<std::int64_t> a = {big + 1, -5, 7};
    const auto r = to::compare(a, e);
    CHECK(r.exact());
    CHECK_FALSE(r.passes(to::tolerance{1e6, 1e6}));  // tolerance does not apply
    CHECK(r.mismatch_count(to::tolerance{}) == 1);
    CHECK_FALSE(r.max_ulp().has_value());
    CHECK(to::compare(e, e).min_passing_level() == -10);
    CHECK(to::allclose(e, e, to::exact));
    CHECK_FALSE(to::allclose(a, e, to::exact));
    const to::array<bool> p = {true, false}, q = {true, true};
    CHECK_FALSE(to::allclose(p, q, to::exact));
    CHECK(to::allclose(p, p, to::exact));
    // Runtime tensors may mix bool and int: compared as integers.
    CHECK(to::compare(to::tensor(p), to::tensor(to::array<std::uint8_t>{1, 0}),
                      to::compare_options{true, true, false, 5})
              .passes(to::tolerance{}));
}

TEST_CASE("f16 and bf16 reports measure ULPs in their own format") {
    const to::array<to::float16> e = {to::float16(1.0), to::float16(2.0)};
    to::array<to::float16> a = e;
    a(1) = to::float16::from_bits(static_cast<std::uint16_t>(e(1).bits() + 3));
    const auto r = to::compare(a, e);
    CHECK(r.max_ulp() == 3u);
    CHECK(r.abs_error().max == 3 * 0x1p-9);
    // Needs 0.00586 <= atol + 2 rtol: t = -5 allows 0.00201, t = -4 allows 0.00806.
    CHECK(r.min_passing_level() == -4);
}

TEST_CASE("allclose validates its tolerance and resolves levels by the actual's dtype") {
    const to::array<float> x = {1.f};
    CHECK_THROWS_WITH_AS((void)to::allclose(x, x, to::tolerance{-1.0, 0.0}),
                         "tensoracle::allclose: atol and rtol must be >= 0 (and not NaN)", to::error);
    CHECK_THROWS_AS((void)to::allclose(x, x, (to::tolerance{0.0, nan_value})), to::error);
    CHECK_THROWS_AS((void)to::allclose(x, x, to::level{1.0}), to::error);
    const auto res = to::allclose(x, x, to::level{-5});
    CHECK(res.tolerance_used() == to::tolerance_level(to::dtype::f32, -5));
    // Works on lazy xtensor expressions too.
    CHECK(to::allclose(x * 2.f, x + x, to::tolerance{}));
}

TEST_CASE("describe() shows shapes, stats, worst indices and the passing level") {
    to::array<float> e = xt::ones<float>({2, 3});
    to::array<float> a = e;
    a(1, 2) = 1.5f;
    const std::string text = to::compare(a, e).describe(to::level{-5});
    CHECK(text.find("NOT close: actual f32[2, 3] vs expected f32[2, 3]") != std::string::npos);
    CHECK(text.find("mismatches: 1 of 6 elements") != std::string::npos);
    CHECK(text.find("abs error: max 0.5") != std::string::npos);
    CHECK(text.find("[1, 2]: actual 1.5, expected 1, abs 0.5, rel 0.5, ulp 4194304") != std::string::npos);
    CHECK(text.find("strictest passing level: t = 0") != std::string::npos);
    const std::string ok = to::compare(e, e).describe(to::level{-5});
    CHECK(ok.rfind("close: ", 0) == 0);
    CHECK(ok.find("worst elements") == std::string::npos);
}

}  // namespace core_compare_test
