// GENERATED FILE - DO NOT EDIT.
// Made by scripts/amalgamate from include/tensoracle/z3.hpp; edit those headers and rerun it.
// tensoracle: header-only test kit for deep-learning compilers and AD engines.
#pragma once
#include "tensoracle.hpp"
// ---- begin tensoracle/z3.hpp ----
// tensoracle: the Z3 backend of the generator's constraint solver (optional
// part: libz3, pkg-config z3), for cross-checks. Includes the whole kit.


// ---- begin tensoracle/gen/z3_backend.hpp ----
// tensoracle: Z3 as an alternative solver for the generator's constraint
// systems (optional: needs Z3's C++ API, Debian's libz3-dev, pkg-config z3).
//
// Two uses: the tests cross-check our interval solver against it on systems
// drawn from the generator, and the generation benchmark measures a
// Z3-backed generator (NNSmith's set-up) beside ours:
//
//   gen::generator gen(cfg);
//   gen.set_hooks({.solver = gen::z3_solver()});
//
// Semantics follow spec::expr exactly: values are integers, comparisons and
// logic give 0 / 1, div and mod are Euclidean (as SMT-LIB's), and a
// constraint holds only where its evaluation is defined (no division by
// zero on the path taken: select and the logical operators short-circuit).

#include <z3++.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>


namespace tensoracle::gen {

namespace detail {

/// A translated expression: its integer value and when it is defined.
struct z3_term {
    z3::expr value;
    z3::expr defined;
};

class z3_translator {
public:
    explicit z3_translator(z3::context& ctx) : ctx_(ctx) {}

    z3_term operator()(const spec::expr::node& n) {
        using K = spec::expr_kind;
        auto truth = [&](const z3::expr& b) { return z3::ite(b, ctx_.int_val(1), ctx_.int_val(0)); };
        switch (n.kind) {
            case K::constant: return {ctx_.int_val(static_cast<int64_t>(n.value)), ctx_.bool_val(true)};
            case K::symbol: return {ctx_.int_const(n.name.c_str()), ctx_.bool_val(true)};
            case K::logical_not: {
                const auto a = (*this)(*n.lhs);
                return {truth(a.value == 0), a.defined};
            }
            case K::logical_and: {
                const auto a = (*this)(*n.lhs), b = (*this)(*n.rhs);
                return {truth(a.value != 0 && b.value != 0), a.defined && (a.value == 0 || b.defined)};
            }
            case K::logical_or: {
                const auto a = (*this)(*n.lhs), b = (*this)(*n.rhs);
                return {truth(a.value != 0 || b.value != 0), a.defined && (a.value != 0 || b.defined)};
            }
            case K::select: {
                const auto c = (*this)(*n.cond), a = (*this)(*n.lhs), b = (*this)(*n.rhs);
                return {z3::ite(c.value != 0, a.value, b.value), c.defined && z3::ite(c.value != 0, a.defined, b.defined)};
            }
            default: break;
        }
        const auto a = (*this)(*n.lhs), b = (*this)(*n.rhs);
        const z3::expr both = a.defined && b.defined;
        switch (n.kind) {
            case K::add: return {a.value + b.value, both};
            case K::sub: return {a.value - b.value, both};
            case K::mul: return {a.value * b.value, both};
            case K::div: return {a.value / b.value, both && b.value != 0};
            case K::mod: return {z3::mod(a.value, b.value), both && b.value != 0};
            case K::min: return {z3::ite(a.value <= b.value, a.value, b.value), both};
            case K::max: return {z3::ite(a.value >= b.value, a.value, b.value), both};
            case K::eq: return {truth(a.value == b.value), both};
            case K::ne: return {truth(a.value != b.value), both};
            case K::lt: return {truth(a.value < b.value), both};
            case K::le: return {truth(a.value <= b.value), both};
            case K::gt: return {truth(a.value > b.value), both};
            case K::ge: return {truth(a.value >= b.value), both};
            default: break;
        }
        throw error("tensoracle::gen::z3_solve", "unhandled expression kind");
    }

private:
    z3::context& ctx_;
};

}  // namespace detail

/// Default work bound for z3_solve, in Z3 resource units (Z3 ran out of it
/// on 1 of 115 generator systems in the cross-check test).
inline constexpr unsigned z3_default_rlimit = 2'000'000;

/// Solves `system` with Z3 within `rlimit` resource units; unknown when the
/// limit runs out. A model is checked with constraint_system::satisfied_by
/// like ours. The bound is Z3's deterministic resource limit, not its
/// wall-clock "timeout": the timer thread pool behind "timeout" deadlocks
/// in Z3 4.8.10-4.8.12 (Z3Prover/z3#5371, #5990; Debian 12 ships 4.8.12),
/// and a work count also makes the answer the same on every machine.
[[nodiscard]] inline solve_result z3_solve(const constraint_system& system, unsigned rlimit = z3_default_rlimit,
                                           unsigned random_seed = 0) {
    solve_result result;
    z3::context ctx;
    z3::solver s(ctx);
    z3::params p(ctx);
    p.set("rlimit", rlimit);
    p.set("random_seed", random_seed);
    s.set(p);
    detail::z3_translator translate(ctx);
    std::vector<z3::expr> vars;
    for (const auto& v : system.variables) {
        vars.push_back(ctx.int_const(v.name.c_str()));
        s.add(vars.back() >= ctx.int_val(static_cast<int64_t>(v.domain.lo)));
        s.add(vars.back() <= ctx.int_val(static_cast<int64_t>(v.domain.hi)));
    }
    for (const auto& c : system.constraints) {
        const auto t = translate(c.condition.root());
        s.add(t.defined && t.value != 0);
    }
    switch (s.check()) {
        case z3::unsat:
            result.status = solve_status::unsat;
            result.conflict = "z3: unsat";
            return result;
        case z3::unknown:
            result.status = solve_status::unknown;
            return result;
        case z3::sat: break;
    }
    const z3::model m = s.get_model();
    for (const auto& v : vars) {
        std::int64_t x = 0;
        if (!m.eval(v, true).is_numeral_i64(x)) {
            result.status = solve_status::unknown;
            return result;
        }
        result.values.push_back(x);
    }
    std::string failed;
    if (!system.satisfied_by(result.values, &failed)) {
        throw error("tensoracle::gen::z3_solve", "Z3's model violates " + failed + " (translation bug)");
    }
    result.status = solve_status::sat;
    return result;
}

/// z3_solve as an instance_hooks solver (seeded from the generator's rng).
[[nodiscard]] inline auto z3_solver(unsigned rlimit = z3_default_rlimit) {
    return [rlimit](const constraint_system& system, rng& g) {
        return z3_solve(system, rlimit, static_cast<unsigned>(g.below(1u << 30)));
    };
}

}  // namespace tensoracle::gen
// ---- end tensoracle/gen/z3_backend.hpp ----
// ---- end tensoracle/z3.hpp ----
