// Dual numbers, tape variables and finite differences on scalar functions,
// checked against closed-form derivatives (external truth, not the kit).
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "tensoracle/ad/finite_difference.hpp"
#include "tensoracle/ad/reverse.hpp"
#include "tensoracle/core/rng.hpp"
#include "tensoracle/core/value_cast.hpp"

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ad_scalars_test {

using namespace tensoracle;
using namespace tensoracle::ad;

namespace {
// f and its first two derivatives in closed form.
struct case_fn {
    const char* name;
    double lo, hi;
    dual<dual<double>> (*f2)(dual<dual<double>>);
    rvar<dual<double>> (*fr)(rvar<dual<double>>);
    double (*f)(double);
    double (*d1)(double);
    double (*d2)(double);
};
#define TENSORACLE_CASE(NAME, LO, HI, EXPR, D1, D2)                                  \
    case_fn {                                                                        \
        NAME, LO, HI, [](dual<dual<double>> x) { return EXPR; },                     \
            [](rvar<dual<double>> x) { return EXPR; }, [](double x) { return EXPR; }, \
            [](double x) { return D1; }, [](double x) { return D2; }                 \
    }
using math::exp;
const case_fn cases[] = {
    TENSORACLE_CASE("exp", -3, 3, math::exp(x), std::exp(x), std::exp(x)),
    TENSORACLE_CASE("log", 0.1, 5, math::log(x), 1 / x, -1 / (x * x)),
    TENSORACLE_CASE("sqrt", 0.1, 5, math::sqrt(x), 0.5 / std::sqrt(x), -0.25 / (x * std::sqrt(x))),
    TENSORACLE_CASE("tanh", -3, 3, math::tanh(x), 1 - std::tanh(x) * std::tanh(x),
                    -2 * std::tanh(x) * (1 - std::tanh(x) * std::tanh(x))),
    TENSORACLE_CASE("sin*cos", -3, 3, math::sin(x) * math::cos(x), std::cos(2 * x), -2 * std::sin(2 * x)),
    TENSORACLE_CASE("x^2.5", 0.1, 4, math::pow(x, 2.5), 2.5 * std::pow(x, 1.5), 3.75 * std::pow(x, 0.5)),
    TENSORACLE_CASE("2^x", -2, 2, math::pow(2.0, x), std::log(2.0) * std::pow(2.0, x),
                    std::log(2.0) * std::log(2.0) * std::pow(2.0, x)),
    TENSORACLE_CASE("x/(1+x^2)", -3, 3, x / (1.0 + x * x), (1 - x * x) / ((1 + x * x) * (1 + x * x)),
                    (2 * x * x * x - 6 * x) / std::pow(1 + x * x, 3)),
    TENSORACLE_CASE("erf", -2, 2, math::erf(x), 2 / std::sqrt(std::numbers::pi) * std::exp(-x * x),
                    -4 * x / std::sqrt(std::numbers::pi) * std::exp(-x * x)),
    TENSORACLE_CASE("atan", -3, 3, math::atan(x), 1 / (1 + x * x), -2 * x / ((1 + x * x) * (1 + x * x))),
    TENSORACLE_CASE("asinh", -3, 3, math::asinh(x), 1 / std::sqrt(x * x + 1), -x / std::pow(x * x + 1, 1.5)),
    TENSORACLE_CASE("log1p", -0.5, 3, math::log1p(x), 1 / (1 + x), -1 / ((1 + x) * (1 + x))),
    TENSORACLE_CASE("expm1", -2, 2, math::expm1(x), std::exp(x), std::exp(x)),
    TENSORACLE_CASE("acos", -0.9, 0.9, math::acos(x), -1 / std::sqrt(1 - x * x), -x / std::pow(1 - x * x, 1.5)),
};
#undef TENSORACLE_CASE
}  // namespace

TEST_CASE("dual, dual<dual>, rvar and rvar<dual> give closed-form first and second derivatives") {
    rng g(7);
    for (const auto& c : cases) {
        CAPTURE(c.name);
        for (int k = 0; k < 20; ++k) {
            const double x = g.uniform(c.lo, c.hi);
            CAPTURE(x);
            // forward over forward
            const auto y = c.f2(dual<dual<double>>{dual<double>(x, 1.0), dual<double>(1.0, 0.0)});
            CHECK(y.v.v == doctest::Approx(c.f(x)).epsilon(1e-14));
            CHECK(y.v.d == doctest::Approx(c.d1(x)).epsilon(1e-12));
            CHECK(y.d.v == doctest::Approx(c.d1(x)).epsilon(1e-12));
            CHECK(y.d.d == doctest::Approx(c.d2(x)).epsilon(1e-10));
            // forward over reverse
            tape_scope<dual<double>> scope;
            const auto xv = rvar<dual<double>>::variable(dual<double>(x, 1.0));
            const auto r = c.fr(xv);
            const std::uint32_t at[] = {r.id};
            const dual<double> seed[] = {dual<double>(1.0)};
            const auto adj = scope.get().sweep(at, seed);
            CHECK(adj[xv.id].v == doctest::Approx(c.d1(x)).epsilon(1e-12));
            CHECK(adj[xv.id].d == doctest::Approx(c.d2(x)).epsilon(1e-10));
        }
    }
}

// fmod(a, b) = a - q·b with q = trunc(a/b): ∂/∂b = -q. Recovering q as
// trunc((a - r)/b) lost one whenever the division rounded just below q (3.6%
// of draws here; none with |a/b| < 5, the range the op tests drew from).
TEST_CASE("dual and rvar: fmod's derivative in the divisor is minus the exact quotient") {
    rng g(11);
    int large_quotients = 0;
    for (int k = 0; k < 4000; ++k) {
        const double a = g.uniform(-255.0, 255.0);
        const double b = (k % 2 == 0 ? 1.0 : -1.0) * g.uniform(0.5, 5.0);
        // The quotient in extended precision, checked against the remainder.
        const long double q = std::trunc(static_cast<long double>(a) / static_cast<long double>(b));
        const double r = std::fmod(a, b);
        REQUIRE(std::fabs(static_cast<double>(static_cast<long double>(a) - q * static_cast<long double>(b)) - r) < 1e-9);
        if (std::fabs(static_cast<double>(q)) >= 5) ++large_quotients;
        CAPTURE(a);
        CAPTURE(b);
        const auto y = math::fmod(dual<double>(a, 0.0), dual<double>(b, 1.0));
        CHECK(y.v == r);
        CHECK(y.d == -static_cast<double>(q));
        CHECK(math::fmod(dual<double>(a, 1.0), dual<double>(b, 0.0)).d == 1.0);
        tape_scope<double> scope;
        const auto av = rvar<double>::variable(a), bv = rvar<double>::variable(b);
        const auto ry = math::fmod(av, bv);
        const std::uint32_t at[] = {ry.id};
        const double seed[] = {1.0};
        const auto adj = scope.get().sweep(at, seed);
        CHECK(adj[av.id] == 1.0);
        CHECK(adj[bv.id] == -static_cast<double>(q));
    }
    CHECK(large_quotients > 3000);
}

TEST_CASE("rvar: shared subexpressions accumulate, constants record nothing") {
    tape_scope<double> scope;
    const auto a = rvar<double>::variable(3.0);
    const rvar<double> k(2.0);
    const auto before = scope.get().size();
    const auto kk = k * k + 1.0;  // constants only: no nodes
    CHECK(scope.get().size() == before);
    CHECK(kk.is_constant());
    const auto b = a * a;        // uses a twice
    const auto y = b * a + b / k;  // a³ + a²/2
    const std::uint32_t at[] = {y.id};
    const double seed[] = {1.0};
    const auto adj = scope.get().sweep(at, seed);
    CHECK(adj[a.id] == doctest::Approx(3 * 9 + 3.0));
}

TEST_CASE("rvar: misuse of tapes is an error") {
    CHECK_THROWS_WITH_AS((void)rvar<double>::variable(1.0), doctest::Contains("outside a tape_scope"), error);
    tape_scope<double> s;
    CHECK_THROWS_WITH_AS(tape_scope<double>{}, doctest::Contains("already open"), error);
    tape_scope<float> other;  // a different scalar type has its own tape
    CHECK(other.get().size() == 0);
}

TEST_CASE("AD scalars: comparisons follow values, casts keep or drop derivatives on purpose") {
    const dual<double> a(2.0, 1.0), b(2.0, -5.0);
    CHECK(a == b);
    CHECK_FALSE(a < b);
    CHECK(std::max(dual<double>(1.0, 1.0), dual<double>(3.0, 7.0)).d == 7.0);
    CHECK(value_cast<std::int64_t>(dual<double>(3.7, 1.0)) == 3);
    CHECK(value_cast<dual<float>>(2.5).d == 0.0f);
    CHECK(primal(dual<dual<double>>(dual<double>(1.5, 2.0), dual<double>(3.0, 4.0))) == 1.5);
    CHECK(std::numeric_limits<dual<double>>::lowest().v == std::numeric_limits<double>::lowest());
    CHECK(math::fabs(dual<double>(0.0, 1.0)).d == 0.0);  // the 0 subgradient
    CHECK(math::floor(dual<double>(2.5, 1.0)).d == 0.0);
    // pow with a constant exponent at 0 does not produce 0·(-inf)
    const auto p = math::pow(dual<double>(0.0, 1.0), dual<double>(2.0));
    CHECK(p.v == 0.0);
    CHECK(p.d == 0.0);
    static_assert(real_scalar<dual<float>> && real_scalar<rvar<dual<double>>> && !real_scalar<int>);
    static_assert(std::is_same_v<base_scalar_t<rvar<dual<float>>>, float>);
}

TEST_CASE("finite differences: stencil orders, steps, one-sided edges") {
    const auto f = [](std::span<const double> x) { return std::vector<double>{std::sin(x[0]) * std::exp(x[1])}; };
    const std::vector<double> x{0.7, -0.3}, u{1.0, 0.5};
    const double exact = std::cos(0.7) * std::exp(-0.3) + 0.5 * std::sin(0.7) * std::exp(-0.3);
    double prev = 1.0;
    for (const auto s : {stencil::central2, stencil::central4, stencil::central6}) {
        fd_options o;
        o.kind = s;
        o.step = {1e-2, true};
        const double err =
            std::fabs(fd_directional<double>(f, std::span<const double>(x), std::span<const double>(u), o).derivative[0] - exact);
        CHECK(err < prev / 50);  // each higher order is far more accurate at the same step
        prev = err;
    }
    CHECK(prev < 1e-11);
    // long double evaluation
    const auto fl = [](std::span<const long double> v) { return std::vector<long double>{v[0] * v[0] * v[0]}; };
    const std::vector<long double> xl{1.1L}, ul{1.0L};
    const auto dl = fd_directional<long double>(fl, std::span<const long double>(xl), std::span<const long double>(ul), fd_options::stan());
    CHECK(std::fabs(static_cast<double>(dl.derivative[0] - 3 * 1.21L)) < 1e-12);
    // Jacobian of a 2 -> 2 map
    const auto h = [](std::span<const double> v) { return std::vector<double>{v[0] * v[1], v[0] + 3 * v[1]}; };
    const auto j = fd_jacobian<double>(h, std::span<const double>(x), fd_options::stan());
    CHECK(j[0] == doctest::Approx(-0.3));
    CHECK(j[1] == doctest::Approx(0.7));
    CHECK(j[2] == doctest::Approx(1.0));
    CHECK(j[3] == doctest::Approx(3.0));
    // sqrt at 0: undefined to the left, so the stencil goes one-sided to the right
    const auto sq = [](std::span<const double> v) {
        if (v[0] < 0) throw error("sqrt", "negative");
        return std::vector<double>{std::sqrt(v[0] + 1.0) * v[0]};
    };
    const std::vector<double> z{0.0}, one{1.0};
    const auto r = fd_directional<double>(sq, std::span<const double>(z), std::span<const double>(one), fd_options::torch());
    CHECK(r.side == fd_side::forward);
    CHECK(r.derivative[0] == doctest::Approx(1.0).epsilon(1e-6));
    fd_options strict = fd_options::torch();
    strict.one_sided_at_edges = false;
    CHECK_THROWS_WITH_AS((void)fd_directional<double>(sq, std::span<const double>(z), std::span<const double>(one), strict),
                         doctest::Contains("undefined"), error);
    const auto nowhere = [](std::span<const double>) -> std::vector<double> { throw error("f", "never defined"); };
    CHECK_THROWS_WITH_AS((void)fd_directional<double>(nowhere, std::span<const double>(z), std::span<const double>(one)),
                         doctest::Contains("both sides"), error);
}

}  // namespace ad_scalars_test
