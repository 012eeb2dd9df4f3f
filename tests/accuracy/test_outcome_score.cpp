#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <tensoracle/core.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace core_outcome_score_test {

namespace to = tensoracle;

TEST_CASE("outcome classes carry GraphNet's error codes") {
    CHECK(to::error_code(to::outcome::pass) == 0);
    CHECK(to::error_code(to::outcome::accuracy) == 1);
    CHECK(to::error_code(to::outcome::runtime_crash) == 2);
    CHECK(to::error_code(to::outcome::compile_failure) == 3);
    CHECK(to::runtime_crash("segfault").error_code() == 2);
    CHECK(to::compile_failure("no kernel").reason == to::failure_reason::compile_failure);
    CHECK(to::to_string(to::failure_reason::nan_inf_mismatch) == "NaN/Inf mismatch");
}

TEST_CASE("judge() orders reasons: shape, dtype, NaN/Inf, values") {
    const to::array<float> e = {1.f, 2.f};
    CHECK(to::judge(to::compare(e, e), to::level{-10}).passed());
    const to::array<float> off = {1.f, 2.1f};
    const auto v = to::judge(to::compare(off, e), to::level{-5});
    CHECK(v.kind == to::outcome::accuracy);
    CHECK(v.reason == to::failure_reason::value_mismatch);
    CHECK(v.detail.find("1 of 2 elements beyond atol=1e-05") != std::string::npos);
    const to::array<float> nan = {1.f, NAN};
    CHECK(to::judge(to::compare(nan, e), to::level{0}).reason == to::failure_reason::nan_inf_mismatch);
    const to::array<float> longer = {1.f, 2.f, 3.f};
    CHECK(to::judge(to::compare(longer, e), to::level{0}).reason == to::failure_reason::shape_mismatch);
}

// Rows (alpha, beta, lambda, eta, gamma, S/ES) of GraphNet Tables 3-5, printed
// to 3 decimals: the macro formula must reproduce them within rounding.
// (Table 6 is left out: its rows are about 0.9% off Eq. 1 at every t, e.g.
// t = 0 gives 0.783 from its own components where it prints 0.790.)
TEST_CASE("the score formula reproduces GraphNet's published tables") {
    struct row {
        double alpha, beta, lambda, eta, gamma, score;
    };
    const row rows[] = {
        {1.441, 1.000, 0.009, 0.000, 0.100, 0.103},  // Table 3, t = -7
        {1.284, 0.878, 0.953, 0.050, 0.100, 1.139},  // Table 3, t = -5
        {1.278, 0.878, 0.991, 0.048, 1.000, 1.276},  // Table 3, t = 3 (ES)
        {1.056, 0.917, 0.054, 0.739, 0.100, 0.114},  // Table 5, t = -10
        {1.125, 0.912, 0.892, 0.105, 0.100, 0.866},  // Table 5, t = -3
        {1.342, 0.817, 0.930, 0.046, 0.100, 1.118},  // Table 4, t = -5
        {1.363, 0.818, 0.977, 0.044, 1.000, 1.353},  // Table 4, t = 3 (ES)
    };
    for (const auto& r : rows) {
        const double s = to::score_from_components(r.alpha, r.beta, r.lambda, r.eta, r.gamma, 0.1);
        CHECK(s == doctest::Approx(r.score).epsilon(0.003));
    }
}

TEST_CASE("S_t equals the geometric mean of rectified speedups (Prop. B.1), ES_t forgives by code") {
    to::rng g(12);
    for (int trial = 0; trial < 50; ++trial) {
        std::vector<to::benchmark_sample> samples(static_cast<std::size_t>(g.integer(1, 40)));
        for (auto& s : samples) {
            const auto k = g.integer(0, 9);
            s.failure = k < 6 ? to::outcome::pass : k < 8 ? to::outcome::accuracy
                                                : k < 9 ? to::outcome::runtime_crash
                                                        : to::outcome::compile_failure;
            s.speedup = std::exp(g.normal(0.0, 0.4));
            if (s.failure == to::outcome::pass) s.passing_level = static_cast<int>(g.integer(-10, 0));
        }
        for (int t = -10; t <= 4; ++t) {
            double log_sum = 0.0;
            for (const auto& s : samples) log_sum += std::log(to::rectified_speedup(s, t));
            const auto sc = to::speedup_score(samples, t);
            REQUIRE(sc.score == doctest::Approx(std::exp(log_sum / static_cast<double>(samples.size()))));
            REQUIRE(sc.lambda >= 0.0);
            REQUIRE(sc.lambda <= 1.0);
        }
        // ES_t never decreases as t grows past 0.
        CHECK(to::speedup_score(samples, 3).score >= to::speedup_score(samples, 0).score - 1e-12);
    }
}

TEST_CASE("worked example by hand") {
    // Two correct (speedups 2 and 0.5), one crash; p = b = 0.1.
    const std::vector<to::benchmark_sample> s = {
        {to::outcome::pass, 2.0, -6}, {to::outcome::pass, 0.5, -3}, {to::outcome::runtime_crash, 1.0, {}}};
    // t = -5: sample 2 fails its tolerance, so only the 2x one is correct.
    CHECK(to::speedup_score(s, -5).score == doctest::Approx(std::cbrt(2.0 * 0.1 * 0.1)));
    // t = 0: both correct, 0.5 is rectified to 0.5^1.1.
    CHECK(to::speedup_score(s, 0).score == doctest::Approx(std::cbrt(2.0 * std::pow(0.5, 1.1) * 0.1)));
    // t = 2 forgives the crash.
    CHECK(to::speedup_score(s, 2).score == doctest::Approx(std::cbrt(2.0 * std::pow(0.5, 1.1))));
    const auto c = to::speedup_score(s, 0);
    CHECK(c.lambda == doctest::Approx(2.0 / 3.0));
    CHECK(c.eta == doctest::Approx(0.5));
    CHECK(c.alpha == doctest::Approx(1.0));
    CHECK(c.beta == doctest::Approx(0.5));
}

TEST_CASE("score inputs are validated") {
    const std::vector<to::benchmark_sample> none;
    CHECK_THROWS_WITH_AS((void)to::speedup_score(none, 0), "tensoracle::speedup_score: needs at least one sample", to::error);
    const std::vector<to::benchmark_sample> bad = {{to::outcome::pass, -1.0, 0}};
    CHECK_THROWS_WITH_AS((void)to::speedup_score(bad, 0), doctest::Contains("sample 0 ran but its speedup"), to::error);
    const std::vector<to::benchmark_sample> ok = {{to::outcome::pass, 1.0, 0}};
    CHECK_THROWS_AS((void)to::speedup_score(ok, 0, to::score_options{1.5, 0.1}), to::error);
}

}  // namespace core_outcome_score_test
