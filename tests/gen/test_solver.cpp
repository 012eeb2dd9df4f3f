// The generator's constraint solver: exact answers, unsat detection, spec::expr semantics.
#include <doctest/doctest.h>

#include <tensoracle/gen/instance.hpp>
#include <tensoracle/gen/solver.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace gen_solver_test {

namespace to = tensoracle;
using to::gen::constraint_system;
using to::gen::interval;
using to::gen::solve_status;
using to::spec::expr;

namespace {
expr sym(const char* n) { return expr::symbol(n); }
}  // namespace

TEST_CASE("solver: answers satisfy every constraint exactly (Reshape-like product, divisibility)") {
    to::rng g(5);
    for (int trial = 0; trial < 50; ++trial) {
        constraint_system s;
        s.add_variable("a", 1, 64);
        s.add_variable("b", 1, 64);
        s.add_variable("c", 1, 64);
        s.add_variable("r0", -1, 64);
        s.add_variable("r1", 1, 64);
        s.add(sym("a") * sym("b") * sym("c") == sym("r1") * to::spec::select(sym("r0") == -1, expr(1), sym("r0")) * 2,
              "products agree");
        s.add(sym("a") % 3 == 0, "a divisible by 3");
        s.add(sym("r0") != 0, "no zero");
        const auto r = to::gen::solve(s, g);
        REQUIRE(r.sat());
        std::string failed;
        CHECK_MESSAGE(s.satisfied_by(r.values, &failed), failed);
    }
}

TEST_CASE("solver: a contradiction is unsat at the root, naming the constraint") {
    constraint_system s;
    s.add_variable("x", 1, 10);
    s.add(sym("x") >= 11, "x is large");
    to::rng g(1);
    const auto r = to::gen::solve(s, g);
    CHECK(r.status == solve_status::unsat);
    CHECK(r.conflict.find("x is large") != std::string::npos);
    std::string conflict;
    CHECK_FALSE(to::gen::propagate(s, &conflict).has_value());
    CHECK(conflict.find("x is large") != std::string::npos);
}

TEST_CASE("solver: exhaustive search proves unsat that propagation cannot see") {
    constraint_system s;
    s.add_variable("x", 0, 20);
    s.add_variable("y", 0, 20);
    s.add(sym("x") * 2 == sym("y") * 2 + 1, "even equals odd");
    to::rng g(2);
    const auto r = to::gen::solve(s, g);
    CHECK(r.status == solve_status::unsat);
}

TEST_CASE("solver: division by zero is never part of an answer, and select short-circuits") {
    constraint_system s;
    s.add_variable("d", -3, 3);
    s.add_variable("n", 0, 9);
    s.add(sym("n") / sym("d") >= 2, "quotient");
    s.add(to::spec::select(sym("d") == 0, expr(1), expr(6) / sym("d") == 3), "guarded");
    to::rng g(3);
    for (int i = 0; i < 20; ++i) {
        const auto r = to::gen::solve(s, g);
        REQUIRE(r.sat());
        CHECK(r.values[0] != 0);
        CHECK(s.satisfied_by(r.values));
    }
}

TEST_CASE("solver: propagation narrows domains soundly") {
    constraint_system s;
    s.add_variable("x", 0, 100);
    s.add_variable("y", 0, 100);
    s.add(sym("x") + sym("y") <= 10, "sum");
    s.add(sym("x") >= 7, "x low");
    const auto d = to::gen::propagate(s);
    REQUIRE(d.has_value());
    CHECK((*d)[0].lo == 7);
    CHECK((*d)[0].hi == 10);
    CHECK((*d)[1].hi == 3);
}

TEST_CASE("solver: same rng state, same answer") {
    constraint_system s;
    s.add_variable("x", 1, 1000);
    s.add_variable("y", 1, 1000);
    s.add(sym("x") * sym("y") <= 5000, "area");
    to::rng g1(9), g2(9);
    const auto a = to::gen::solve(s, g1), b = to::gen::solve(s, g2);
    REQUIRE(a.sat());
    CHECK(a.values == b.values);
}

TEST_CASE("solver: a symbol that is not a variable is a clear error") {
    constraint_system s;
    s.add_variable("x", 1, 3);
    s.add(sym("z") == 1, "unknown symbol");
    to::rng g(1);
    CHECK_THROWS_WITH_AS((void)to::gen::solve(s, g), doctest::Contains("'z', which is not a variable"), to::error);
}

TEST_CASE("binning: a bin lies inside the domain, and the zero bin is exactly zero") {
    to::rng g(4);
    bool saw_zero = false;
    for (int i = 0; i < 500; ++i) {
        const interval dom{-64, 64};
        const auto b = to::gen::detail::pick_bin(dom, 7, g);
        CHECK(b.lo >= dom.lo);
        CHECK(b.hi <= dom.hi);
        CHECK(b.lo <= b.hi);
        saw_zero = saw_zero || (b.lo == 0 && b.hi == 0);
    }
    CHECK(saw_zero);
    const auto small = to::gen::detail::pick_bin({3, 3}, 7, g);
    CHECK((small.lo == 3 && small.hi == 3));
}

TEST_CASE("solver: a system compiled once and extended answers as a fresh compile does") {
    // The generator adds constraints between propagations and compiles each once.
    constraint_system s;
    s.add_variable("a", 1, 64);
    s.add_variable("b", 1, 64);
    s.add(sym("a") * sym("b") <= 100, "small product");
    to::gen::detail::compiled_system compiled(s);
    const auto first = to::gen::propagate(s, compiled, to::gen::domains_of(s));
    REQUIRE(first.has_value());
    CHECK((*first)[0] == interval{1, 64});
    s.add(sym("a") >= 20, "a is large");
    compiled.extend(s);
    REQUIRE(compiled.size() == s.constraints.size());
    const auto extended = to::gen::propagate(s, compiled, to::gen::domains_of(s));
    const auto fresh = to::gen::propagate(s);
    REQUIRE(extended.has_value());
    REQUIRE(fresh.has_value());
    CHECK(*extended == *fresh);
    CHECK((*extended)[1] == interval{1, 5});  // b <= 100 / 20
    // Same generator state, same answer; root domains narrow the search.
    to::rng g1(9), g2(9);
    const auto a = to::gen::solve(s, compiled, to::gen::domains_of(s), g1);
    const auto b = to::gen::solve(s, g2);
    REQUIRE(a.sat());
    CHECK(a.values == b.values);
    to::rng g3(4);
    const auto narrowed = to::gen::solve(s, compiled, {interval{30, 30}, interval{2, 64}}, g3);
    REQUIRE(narrowed.sat());
    CHECK(narrowed.values[0] == 30);
    CHECK(narrowed.values[1] <= 3);
    // A stale compile (a constraint added since) is refused, not silently used.
    s.add(sym("b") != 2, "b is not 2");
    CHECK_THROWS_WITH_AS((void)to::gen::solve(s, compiled, to::gen::domains_of(s), g3),
                         doctest::Contains("do not match the system"), to::error);
    CHECK_THROWS_WITH_AS((void)to::gen::propagate(s, compiled, to::gen::domains_of(s)),
                         doctest::Contains("do not match the system"), to::error);
    CHECK_THROWS_WITH_AS((void)to::gen::propagate(s, to::gen::detail::compiled_system(s), {interval{1, 2}}),
                         doctest::Contains("do not match the system"), to::error);
}

TEST_CASE("solver: constraints true on a whole box are flagged, and flagged ones are not revised") {
    constraint_system s;
    s.add_variable("a", 1, 8);
    s.add_variable("b", 1, 64);
    s.add(sym("a") <= 10, "true everywhere");
    s.add(sym("a") * sym("b") <= 100, "narrows b");
    const to::gen::detail::compiled_system compiled(s);
    auto dom = to::gen::domains_of(s);
    std::vector<char> entailed(compiled.size(), 0);
    REQUIRE(compiled.propagate(dom, 40, nullptr, std::nullopt, &entailed));
    CHECK(entailed == std::vector<char>{1, 0});
    CHECK(dom[1] == interval{1, 64});  // a = 1 still allows b = 64
    // Inside a smaller box the product rule holds everywhere too: flagged, and
    // the flags a search hands down keep it from being revised again.
    dom[0] = interval{1, 1};
    dom[1] = interval{1, 50};
    REQUIRE(compiled.propagate(dom, 40, nullptr, std::size_t{0}, &entailed));
    CHECK(entailed == std::vector<char>{1, 1});
    // A flag is trusted, not re-checked: flagging the product rule by hand on a
    // box where it does not hold leaves b unnarrowed (only the search sets flags).
    auto wide = to::gen::domains_of(s);
    wide[0] = interval{4, 4};
    std::vector<char> forced{0, 1};
    REQUIRE(compiled.propagate(wide, 40, nullptr, std::nullopt, &forced));
    CHECK(wide[1] == interval{1, 64});
    std::vector<char> none(compiled.size(), 0);
    REQUIRE(compiled.propagate(wide, 40, nullptr, std::nullopt, &none));
    CHECK(wide[1] == interval{1, 25});
}

}  // namespace gen_solver_test
