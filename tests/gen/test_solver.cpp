// The generator's constraint solver: exact answers, unsat detection, spec::expr semantics.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include <tensoracle/gen/generator.hpp>
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

/// Up to `count` constraint systems the generator solves for 4-node graphs of `seed` (cases 0..399).
std::vector<constraint_system> generated_systems(std::uint64_t seed, std::size_t count) {
    to::gen::config cfg;
    cfg.max_nodes = 4;
    to::gen::generator gen(cfg);
    std::vector<constraint_system> systems;
    gen.set_hooks({.solver = {}, .observe = [&](const constraint_system& s) {
                       if (systems.size() < count) systems.push_back(s);
                   }});
    to::gen::generation_stats stats;
    for (std::uint64_t i = 0; systems.size() < count && i < 400; ++i) {
        auto g = to::gen::case_rng(seed, i, cfg.hash());
        (void)gen.generate(g, stats);
    }
    return systems;
}

/// A source of random expressions over x, y and z, of every kind spec::expr
/// has, at most `depth` deep: a leaf is a symbol with probability
/// `symbol_share`, else `constant()`. Two constants fold when built, and an
/// overflow or a division by zero throws there: such a node becomes x.
struct random_expressions {
    to::rng& g;
    std::function<std::int64_t()> constant;
    double leaf_share, symbol_share;

    expr operator()(int depth) const {
        static const char* const names[] = {"x", "y", "z"};
        if (depth == 0 || g.bernoulli(leaf_share)) return g.bernoulli(symbol_share) ? sym(names[g.below(3)]) : expr(constant());
        const auto a = (*this)(depth - 1), b = (*this)(depth - 1);
        try {
            switch (g.below(19)) {
                case 0: return a + b;
                case 1: return a - b;
                case 2: return a * b;
                case 3: return a / b;
                case 4: return a % b;
                case 5: return to::spec::min(a, b);
                case 6: return to::spec::max(a, b);
                case 7: return a == b;
                case 8: return a != b;
                case 9: return a < b;
                case 10: return a <= b;
                case 11: return a > b;
                case 12: return a >= b;
                case 13: return a && b;
                case 14: return a || b;
                case 15: return !a;
                default: return to::spec::select((*this)(depth - 1), a, b);
            }
        } catch (const to::error&) {
            return sym("x");
        }
    }
};
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
    // Unexplained (the generator's binned tries): the same verdict, no printing.
    to::gen::solver_options quiet;
    quiet.explain = false;
    const auto q = to::gen::solve(s, g, quiet);
    CHECK(q.status == solve_status::unsat);
    CHECK(q.conflict.find("not explained") != std::string::npos);
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

// The search accepts an answer by evaluating the compiled constraints exactly;
// that must decide as spec::expr::eval does, failures on skipped branches included.
TEST_CASE("solver: exact evaluation of the compiled form agrees with spec::expr::eval") {
    using to::spec::expr_kind;
    to::rng g(2024);
    const std::int64_t big = std::numeric_limits<std::int64_t>::max(), low = std::numeric_limits<std::int64_t>::min();
    const std::int64_t edge[] = {0, 1, -1, 2, -2, 3, 7, -7, big, low, big - 1, low + 1, std::int64_t{1} << 32};
    const auto draw_value = [&] { return g.bernoulli(0.5) ? edge[g.below(std::size(edge))] : g.integer(-20, 20); };
    const char* names[] = {"x", "y", "z"};
    const random_expressions build{g, draw_value, 0.25, 0.5};
    std::size_t held = 0, failed_eval = 0, cases = 0;
    for (int t = 0; t < 3000; ++t) {
        constraint_system s;
        for (const char* n : names) s.add_variable(n, low, big);
        const int k = 1 + static_cast<int>(g.below(3));
        for (int c = 0; c < k; ++c) s.add(build(1 + static_cast<int>(g.below(4))), "random");
        const to::gen::detail::compiled_system compiled(s);
        for (int v = 0; v < 4; ++v) {
            const std::vector<std::int64_t> values{draw_value(), draw_value(), draw_value()};
            const bool expected = s.satisfied_by(values);
            INFO(s.constraints[0].condition.to_string(), " at ", values[0], ", ", values[1], ", ", values[2]);
            CHECK(compiled.satisfied_exactly(values) == expected);
            ++cases;
            held += expected ? 1 : 0;
            for (const auto& c : s.constraints) {
                try {
                    to::spec::environment env{{"x", values[0]}, {"y", values[1]}, {"z", values[2]}};
                    (void)c.condition.eval(env);
                } catch (const to::error&) {
                    ++failed_eval;
                    break;
                }
            }
        }
    }
    // Both outcomes and evaluation failures occur often enough for the comparison to mean something.
    CHECK(held > cases / 10);
    CHECK(held < cases - cases / 10);
    CHECK(failed_eval > cases / 20);
}

TEST_CASE("solver: exact evaluation agrees with spec::expr::eval on the generator's own systems") {
    const auto systems = generated_systems(5, 400);
    REQUIRE(systems.size() >= 200);
    to::rng g(77);
    std::size_t held = 0, cases = 0;
    for (const auto& s : systems) {
        const to::gen::detail::compiled_system compiled(s);
        // Random points of the domains, and the solver's own answers.
        for (int v = 0; v < 6; ++v) {
            std::vector<std::int64_t> values;
            for (const auto& var : s.variables) {
                const auto d = var.domain;
                values.push_back(d.lo + static_cast<std::int64_t>(g.below(std::min<std::uint64_t>(d.width(), 1u << 20) + 1)));
            }
            if (v == 5) {
                const auto r = to::gen::solve(s, g);
                if (!r.sat()) continue;
                values = r.values;
            }
            const bool expected = s.satisfied_by(values);
            CHECK(compiled.satisfied_exactly(values) == expected);
            held += expected ? 1 : 0;
            ++cases;
        }
    }
    CHECK(held > 0);
    CHECK(held < cases);
    const to::gen::detail::compiled_system compiled(systems.front());
    CHECK_THROWS_WITH_AS((void)compiled.satisfied_exactly(std::vector<std::int64_t>(systems.front().variables.size() + 1, 1)),
                         doctest::Contains("values for"), to::error);
}

TEST_CASE("solver: values looked up through the compiled system's name table evaluate as an environment does") {
    // generate_instance materializes a solution by index (variable_index and
    // expr::eval_with) rather than through a map of every variable's name.
    const auto systems = generated_systems(9, 200);
    REQUIRE(systems.size() >= 100);
    to::rng g(5);
    std::size_t compared = 0;
    for (const auto& s : systems) {
        const to::gen::detail::compiled_system compiled(s);
        std::vector<std::int64_t> values;
        to::spec::environment env;
        for (const auto& var : s.variables) {
            values.push_back(var.domain.lo + static_cast<std::int64_t>(g.below(std::min<std::uint64_t>(var.domain.width(), 64) + 1)));
            env.emplace(var.name, values.back());
        }
        for (std::size_t i = 0; i < s.variables.size(); ++i) {
            const auto& name = s.variables[i].name;
            CHECK(compiled.variable_index(name, std::hash<std::string_view>{}(name), s.variables) == std::optional<std::size_t>(i));
        }
        CHECK_FALSE(compiled.variable_index("no such variable", std::hash<std::string_view>{}("no such variable"), s.variables));
        auto by_index = [&](const to::spec::expr::node& n) {
            const auto i = compiled.variable_index(n.name, n.name_hash, s.variables);
            REQUIRE(i.has_value());
            return values[*i];
        };
        for (const auto& c : s.constraints) {
            std::optional<std::int64_t> want, got;
            try {
                want = c.condition.eval(env);
            } catch (const to::error&) {
            }
            try {
                got = c.condition.eval_with(by_index);
            } catch (const to::error&) {
            }
            CHECK(got == want);
            ++compared;
        }
    }
    CHECK(compared > 1000);
}

TEST_CASE("solver: propagating only the constraints added since a fixpoint ends where propagating all of them does") {
    // The generator propagates, adds output and work constraints, and
    // propagates again from the first fixpoint with only the new ones queued.
    const auto systems = generated_systems(6, 300);
    REQUIRE(systems.size() >= 200);
    std::size_t compared = 0, narrowed = 0, unsat = 0;
    for (const auto& full : systems) {
        const to::gen::detail::compiled_system compiled(full);
        const auto everything = to::gen::propagate(full, compiled, to::gen::domains_of(full));
        // Every split: the first `settled` constraints propagated, then the rest added.
        for (std::size_t settled = 1; settled < full.constraints.size(); ++settled) {
            constraint_system first = full;
            first.constraints.erase(first.constraints.begin() + static_cast<std::ptrdiff_t>(settled), first.constraints.end());
            const auto start = to::gen::propagate(first);
            if (!start) {
                CHECK_FALSE(everything.has_value());
                continue;
            }
            const auto added = to::gen::propagate_added(full, compiled, *start, settled);
            REQUIRE(added.has_value() == everything.has_value());
            ++compared;
            if (!added) {
                ++unsat;
                continue;
            }
            CHECK(*added == *everything);
            narrowed += *added != *start ? 1 : 0;
        }
    }
    CHECK(compared >= 1000);
    CHECK(narrowed > 100);  // the added constraints did narrow: not a comparison of unchanged boxes
    const auto& some = *std::find_if(systems.begin(), systems.end(), [](const constraint_system& s) { return !s.variables.empty(); });
    const to::gen::detail::compiled_system compiled(some);
    CHECK_THROWS_WITH_AS((void)to::gen::propagate_added(some, compiled, to::gen::domains_of(some), some.constraints.size() + 1),
                         doctest::Contains("settled count"), to::error);
    CHECK_THROWS_WITH_AS((void)to::gen::propagate_added(some, compiled, std::vector<interval>{}, 0), doctest::Contains("domains"),
                         to::error);
    MESSAGE(compared << " splits compared, " << narrowed << " narrowed, " << unsat << " unsat");
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

TEST_CASE("solver: propagation never cuts off a solution (brute force over small boxes)") {
    // Random constraints of every kind over three variables with small
    // domains: every assignment that satisfies them all (found by trying
    // each) lies in the propagated box, and the search finds one when one
    // exists. A product whose other factor has no value (x * (y / 0)) once
    // divided by that factor's empty bounds here (SIGFPE).
    to::rng g(55);
    const char* names[] = {"x", "y", "z"};
    const random_expressions build{g, [&g] { return g.integer(-3, 5); }, 0.2, 0.6};
    std::size_t with_solutions = 0, narrowed = 0, empty = 0;
    for (int t = 0; t < 1500; ++t) {
        constraint_system s;
        for (const char* n : names) s.add_variable(n, -4, 6);
        const int k = 1 + static_cast<int>(g.below(3));
        for (int c = 0; c < k; ++c) s.add(build(1 + static_cast<int>(g.below(4))), "random");
        std::vector<std::vector<std::int64_t>> solutions;
        for (std::int64_t x = -4; x <= 6; ++x) {
            for (std::int64_t y = -4; y <= 6; ++y) {
                for (std::int64_t z = -4; z <= 6; ++z) {
                    if (s.satisfied_by({x, y, z})) solutions.push_back({x, y, z});
                }
            }
        }
        const auto box = to::gen::propagate(s);
        INFO(s.constraints[0].condition.to_string());
        if (!box) {
            CHECK(solutions.empty());
            ++empty;
            continue;
        }
        // One check per system (a check per solution made this test slow).
        const auto outside = std::find_if(solutions.begin(), solutions.end(), [&](const std::vector<std::int64_t>& v) {
            return !(*box)[0].contains(v[0]) || !(*box)[1].contains(v[1]) || !(*box)[2].contains(v[2]);
        });
        CHECK(outside == solutions.end());
        for (std::size_t i = 0; i < 3; ++i) narrowed += (*box)[i] == interval{-4, 6} ? 0 : 1;
        to::gen::solver_options so;
        so.max_nodes = 1u << 16;  // 1,331 assignments: the search can try every one
        const auto r = to::gen::solve(s, g, so);
        if (solutions.empty()) {
            CHECK(r.status == solve_status::unsat);
        } else {
            ++with_solutions;
            REQUIRE(r.sat());
            CHECK(s.satisfied_by(r.values));
        }
    }
    // Both outcomes, and narrowing, occur often enough for the checks to mean something.
    CHECK(with_solutions > 300);
    CHECK(with_solutions < 1400);
    CHECK(narrowed > 200);
    MESSAGE(with_solutions << " with solutions, " << empty << " unsat at the root, " << narrowed << " narrowed domains");
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

TEST_CASE("solver: a reset compiled system answers as a fresh compile does, and leases do not share one") {
    // The generator compiles system after system in one object's storage.
    constraint_system big;
    for (const char* v : {"p", "q", "r", "t"}) big.add_variable(v, -50, 50);
    big.add(sym("p") * sym("q") == sym("r") + 7, "product");
    big.add(sym("r") % 5 == 2, "residue");
    big.add(max(sym("t"), sym("p")) < 9, "bound");
    constraint_system small;
    small.add_variable("a", 1, 64);
    small.add_variable("b", 1, 64);
    small.add(sym("a") * sym("b") <= 100, "small product");
    small.add(sym("a") >= 20, "a is large");
    to::gen::detail::compiled_system reused(big);
    reused.reset();
    CHECK(reused.size() == 0);
    CHECK_FALSE(reused.compiles(small));
    reused.extend(small);
    REQUIRE(reused.compiles(small));
    const auto via_reset = to::gen::propagate(small, reused, to::gen::domains_of(small));
    const auto fresh = to::gen::propagate(small);
    REQUIRE(via_reset.has_value());
    REQUIRE(fresh.has_value());
    CHECK(*via_reset == *fresh);
    to::rng g1(5), g2(5);
    const auto a = to::gen::solve(small, reused, to::gen::domains_of(small), g1);
    const auto b = to::gen::solve(small, g2);
    REQUIRE(a.sat());
    CHECK(a.values == b.values);
    // Back to the bigger system in the same storage.
    reused.reset();
    reused.extend(big);
    to::rng g3(8), g4(8);
    const auto c = to::gen::solve(big, reused, to::gen::domains_of(big), g3);
    const auto d = to::gen::solve(big, g4);
    REQUIRE(c.sat());
    CHECK(c.values == d.values);
    // The thread's reusable object goes to one lease at a time; a nested lease gets its own.
    const void* storage = nullptr;
    {
        to::gen::detail::reused_compiled_system outer;
        storage = &outer.get();
        outer.get().extend(big);
        {
            to::gen::detail::reused_compiled_system inner;
            CHECK(&inner.get() != &outer.get());
            CHECK(inner.get().size() == 0);
            inner.get().extend(small);
        }
        CHECK(outer.get().compiles(big));
    }
    to::gen::detail::reused_compiled_system again;
    CHECK(&again.get() == storage);  // released, then leased again: the same storage, empty
    CHECK(again.get().size() == 0);
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

TEST_CASE("solver: a subexpression shared within a constraint is compiled once, and solves as its tree") {
    // (x + y) doubled ten times: 2^11 leaves as a tree, 12 nodes as the DAG the expr holds.
    constraint_system s;
    s.add_variable("x", -10, 10);
    s.add_variable("y", -10, 10);
    expr e = expr::symbol("x") + expr::symbol("y");
    for (int i = 0; i < 10; ++i) e = e + e;
    s.add(e == 1024 * 3, "x + y is 3");
    s.add(expr::symbol("x") - expr::symbol("y") >= 5, "x - y is at least 5");
    const to::gen::detail::compiled_system compiled(s);
    CHECK(compiled.view(0).nodes.size() <= 16);
    // Narrowing through the shared node: x + y = 3 and x - y >= 5 give x in [4, 10], y in [-7, -1].
    const auto d = to::gen::propagate(s);
    REQUIRE(d.has_value());
    CHECK((*d)[0].lo >= -7);
    CHECK((*d)[1].hi <= 8);
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        to::rng g(seed);
        const auto r = to::gen::solve(s, g);
        REQUIRE(r.sat());
        CHECK(r.values[0] + r.values[1] == 3);
        CHECK(r.values[0] - r.values[1] >= 5);
        CHECK(s.satisfied_by(r.values));
        CHECK(compiled.satisfied_exactly(r.values));
    }
    // Exact evaluation of the DAG agrees with the tree's: overflow on the shared path fails it.
    constraint_system big;
    big.add_variable("x", 0, std::int64_t{1} << 61);
    expr b = expr::symbol("x");
    for (int i = 0; i < 4; ++i) b = b + b;
    big.add(b >= 0, "16 x does not overflow");
    const to::gen::detail::compiled_system big_compiled(big);
    CHECK(big_compiled.satisfied_exactly({std::int64_t{1} << 40}));
    CHECK_FALSE(big_compiled.satisfied_exactly({std::int64_t{1} << 61}));
    CHECK_FALSE(big.satisfied_by({std::int64_t{1} << 61}));
}

TEST_CASE("solver: many shared subexpressions in one constraint, and constraints after it, compile and solve as trees") {
    // 200 subexpressions each read twice: the table of shared nodes grows past
    // its first size, and is emptied between constraints (indices are local).
    constraint_system s;
    s.add_variable("x", 0, 20);
    s.add_variable("y", 0, 20);
    expr sum(0);
    for (int k = 0; k < 200; ++k) {
        const expr t = expr::symbol("x") + k;
        sum = sum + t * t;
    }
    s.add(sum <= 3000000, "a sum of squares of shared terms");  // x in [0, 8]
    for (int k = 0; k < 3; ++k) {
        const expr t = expr::symbol("y") - expr::symbol("x");
        s.add(t * t <= 4, "y within 2 of x");
    }
    const to::gen::detail::compiled_system compiled(s);
    CHECK(compiled.view(0).nodes.size() <= 5 * 200 + 4);  // a tree: 7 per term
    for (std::size_t c = 1; c < s.constraints.size(); ++c) CHECK(compiled.view(c).nodes.size() <= 6);  // a tree: 9
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        to::rng g(seed);
        // Twice on one compiled system: the search's buffers are reused, not shared state.
        for (int again = 0; again < 2; ++again) {
            const auto r = to::gen::solve(s, compiled, to::gen::domains_of(s), g);
            REQUIRE(r.sat());
            CHECK(s.satisfied_by(r.values));
            CHECK(compiled.satisfied_exactly(r.values));
            CHECK(r.values[0] <= 8);
        }
    }
}

TEST_CASE("solver: solving inside a propagated box gives answers inside it, and refuses a root outside it") {
    constraint_system s;
    s.add_variable("a", 1, 64);
    s.add_variable("b", 1, 64);
    s.add(expr::symbol("a") * expr::symbol("b") <= 100, "a b is at most 100");
    s.add(expr::symbol("a") >= expr::symbol("b") + 3, "a exceeds b by 3");
    const to::gen::detail::compiled_system compiled(s);
    std::vector<char> entailed;
    const auto fix = to::gen::propagate_added(s, compiled, to::gen::domains_of(s), 0, nullptr, {}, &entailed);
    REQUIRE(fix.has_value());
    CHECK(entailed.size() == s.constraints.size());
    const to::gen::propagated_box around{*fix, entailed};
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        to::rng g(seed);
        auto root = *fix;
        root[1] = {2, 3};  // a bin on b
        const auto r = to::gen::solve(s, compiled, root, g, {}, &around);
        REQUIRE(r.sat());
        CHECK(r.values[1] >= 2);
        CHECK(r.values[1] <= 3);
        CHECK(s.satisfied_by(r.values));
    }
    // A bin no answer fits: unsat, found from the changed variable alone.
    to::rng g(1);
    auto none = *fix;
    none[0] = {none[0].hi, none[0].hi};  // the largest a with the largest b: a b > 100
    none[1] = {none[1].hi, none[1].hi};
    REQUIRE(none[0].lo * none[1].lo > 100);
    CHECK(to::gen::solve(s, compiled, none, g, {}, &around).status == solve_status::unsat);
    auto outside = *fix;
    REQUIRE((*fix)[1].hi < 64);  // b's declared domain is wider than the propagated box
    outside[1] = {(*fix)[1].lo, (*fix)[1].hi + 1};
    CHECK_THROWS_WITH_AS((void)to::gen::solve(s, compiled, outside, g, {}, &around), doctest::Contains("not inside"),
                         to::error);
}

}  // namespace gen_solver_test
