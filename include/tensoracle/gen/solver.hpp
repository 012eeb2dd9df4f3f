// tensoracle: a finite-domain solver for the specs' integer constraint
// language (spec::expr), used by the graph generator.
//
// A constraint system is a few integer unknowns with interval domains (an
// op's dims, int attributes, values of shape-like inputs) and boolean
// constraints over them, exactly as the specs write them. The solver
// propagates intervals through the expression trees (forward evaluation,
// then backward narrowing: HC4-revise) and searches by randomized domain
// splitting with propagation at every choice point, which is complete on
// finite domains within its budget. Every answer is checked by evaluating
// each constraint exactly (spec::expr::eval's semantics, on the compiled
// form; tests hold the two to agree), so an answer is never wrong;
// the budget only bounds how hard it looks before giving up.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tensoracle/core/error.hpp"
#include "tensoracle/core/rng.hpp"
#include "tensoracle/spec/expr.hpp"

namespace tensoracle::gen {

/// An inclusive integer interval; empty when lo > hi.
struct interval {
    std::int64_t lo = 0;
    std::int64_t hi = -1;
    [[nodiscard]] constexpr bool empty() const noexcept { return lo > hi; }
    [[nodiscard]] constexpr bool singleton() const noexcept { return lo == hi; }
    [[nodiscard]] constexpr bool contains(std::int64_t v) const noexcept { return lo <= v && v <= hi; }
    [[nodiscard]] constexpr std::uint64_t width() const noexcept {
        return empty() ? 0 : static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    }
    friend constexpr bool operator==(interval, interval) = default;
};

/// One unknown: its symbol name (as the constraints spell it) and domain.
struct variable {
    std::string name;
    interval domain;
};

/// Unknowns, their domains, and constraints over them. Constraints may only
/// mention the system's variables (and constants).
struct constraint_system {
    std::vector<variable> variables;
    std::vector<spec::constraint> constraints;

    /// Adds a variable (or narrows the domain of one already there).
    std::size_t add_variable(std::string name, std::int64_t lo, std::int64_t hi) {
        for (std::size_t i = 0; i < variables.size(); ++i) {
            if (variables[i].name == name) {
                variables[i].domain.lo = std::max(variables[i].domain.lo, lo);
                variables[i].domain.hi = std::min(variables[i].domain.hi, hi);
                return i;
            }
        }
        variables.push_back({std::move(name), {lo, hi}});
        return variables.size() - 1;
    }
    [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const {
        for (std::size_t i = 0; i < variables.size(); ++i) {
            if (variables[i].name == name) return i;
        }
        return std::nullopt;
    }
    void add(spec::expr condition, std::string reason) { constraints.push_back({std::move(condition), std::move(reason)}); }

    /// True when `values` (one per variable) satisfies every constraint exactly.
    [[nodiscard]] bool satisfied_by(const std::vector<std::int64_t>& values, std::string* failed = nullptr) const {
        spec::environment env;
        for (std::size_t i = 0; i < variables.size(); ++i) {
            if (!variables[i].domain.contains(values[i])) {
                if (failed != nullptr) *failed = variables[i].name + " outside its domain";
                return false;
            }
            env.emplace(variables[i].name, values[i]);
        }
        for (const auto& c : constraints) {
            bool ok = false;
            try {
                ok = c.condition.eval(env) != 0;
            } catch (const error&) {
                ok = false;  // division by zero or overflow: this assignment is not a solution
            }
            if (!ok) {
                if (failed != nullptr) *failed = c.condition.to_string() + " (" + c.reason + ")";
                return false;
            }
        }
        return true;
    }
};

enum class solve_status : std::uint8_t { sat, unsat, unknown };

struct solve_result {
    solve_status status = solve_status::unknown;
    std::vector<std::int64_t> values;  ///< one per variable when sat
    std::string conflict;              ///< when unsat at the root: the constraint that emptied a domain
    std::size_t nodes = 0;             ///< choice points visited
    [[nodiscard]] bool sat() const noexcept { return status == solve_status::sat; }
};

struct solver_options {
    std::size_t max_nodes = 4000;         ///< choice points before giving up (unknown)
    std::size_t max_propagation_rounds = 40;
    /// Name the constraint when unsat at the root (solve_result::conflict);
    /// off where the caller retries anyway and needs no reason: printing
    /// the constraint costs more than a failed search of a small system.
    bool explain = true;
};

namespace detail {

inline constexpr std::int64_t big = std::int64_t{1} << 62;  // "infinite" interval bounds

[[nodiscard]] constexpr std::int64_t clamp_big(__int128 v) noexcept {
    if (v > big) return big;
    if (v < -big) return -big;
    return static_cast<std::int64_t>(v);
}
[[nodiscard]] constexpr interval hull(interval a, interval b) noexcept {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}
[[nodiscard]] constexpr interval meet(interval a, interval b) noexcept {
    return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)};
}
// Bounds are int64: 64-bit division is several times cheaper than 128-bit,
// and only min / -1 leaves the int64 range.
[[nodiscard]] constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
    if (b == -1) return clamp_big(-__int128(a));
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return clamp_big(q);
}
[[nodiscard]] constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept {
    if (b == -1) return clamp_big(-__int128(a));
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
    return clamp_big(q);
}
/// Euclidean division, as spec::expr evaluates it.
[[nodiscard]] constexpr std::int64_t euclid_div(std::int64_t a, std::int64_t b) noexcept {
    std::int64_t q = a / b, m = a % b;
    if (m < 0) q += (b > 0 ? -1 : 1);
    return q;
}

/// A constraint flattened for fast repeated propagation: nodes in post-order,
/// symbols resolved to variable indices.
struct flat_node {
    spec::expr_kind kind;
    std::int64_t value = 0;  // constant
    std::int32_t var = -1;   // symbol
    std::int32_t a = -1, b = -1, cond = -1;
};
/// One compiled constraint, as a view into its system's storage (every
/// constraint of a system shares a few arrays: compiling allocates per
/// system, not per constraint or node).
struct flat_constraint {
    std::span<const flat_node> nodes;  // root last; operand indices are local
    std::span<const std::int32_t> vars;  // the variables it mentions, sorted
    // Forward evaluation sets the leaves in one pass and then walks only the
    // operator nodes: half the nodes are leaves, and one switch over all of
    // them mispredicts more than it computes.
    std::span<const std::pair<std::int32_t, std::int32_t>> symbol_leaves;  // (node, variable)
    std::span<const std::int32_t> constant_leaves;
    std::span<const std::int32_t> operators;  // post-order
};

class compiled_system {
public:
    compiled_system() = default;
    explicit compiled_system(const constraint_system& s) { extend(s); }

    /// Forgets every compiled constraint and variable but keeps the storage,
    /// so one object compiles system after system without reallocating (the
    /// generator compiles a fresh system for every instance it tries).
    void reset() noexcept {
        spans_.clear();
        nodes_.clear();
        vars_.clear();
        symbol_leaves_.clear();
        constant_leaves_.clear();
        operators_.clear();
        watch_head_.clear();
        watch_tail_.clear();
        watch_next_.clear();
        watch_constraint_.clear();
        name_hash_.clear();
        slots_.clear();
    }

    /// Compiles what `s` gained since the last call (the generator adds
    /// constraints between propagations; each is flattened once).
    void extend(const constraint_system& s) {
        const bool more_variables = watch_head_.size() < s.variables.size();
        for (std::size_t i = watch_head_.size(); i < s.variables.size(); ++i) {
            watch_head_.push_back(-1);
            watch_tail_.push_back(-1);
            name_hash_.push_back(std::hash<std::string_view>{}(s.variables[i].name));
        }
        if (more_variables || slots_.empty()) {
            // Symbol lookup: an open-addressing table of variable indices by
            // name hash, at most half full (flattening looks up every symbol).
            std::size_t size = 8;
            while (size < 2 * name_hash_.size()) size *= 2;
            slots_.assign(size, -1);
            for (std::size_t v = 0; v < name_hash_.size(); ++v) {
                std::size_t at = name_hash_[v] & (size - 1);
                while (slots_[at] >= 0) at = (at + 1) & (size - 1);
                slots_[at] = static_cast<std::int32_t>(v);
            }
        }
        // A typical constraint has about 15 nodes, half of them leaves:
        // reserving for that avoids most regrowth of a fresh system's arrays.
        const std::size_t fresh = s.constraints.size() - std::min(spans_.size(), s.constraints.size());
        const auto make_room = [](auto& v, std::size_t more) {  // geometric, as push_back would grow
            if (v.size() + more > v.capacity()) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
        };
        make_room(spans_, fresh);
        make_room(nodes_, 16 * fresh);
        make_room(operators_, 8 * fresh);
        make_room(symbol_leaves_, 5 * fresh);
        make_room(constant_leaves_, 4 * fresh);
        make_room(vars_, 5 * fresh);
        make_room(watch_constraint_, 4 * fresh);
        make_room(watch_next_, 4 * fresh);
        for (std::size_t k = spans_.size(); k < s.constraints.size(); ++k) {
            spans_.push_back({static_cast<std::uint32_t>(nodes_.size()), static_cast<std::uint32_t>(vars_.size()),
                              static_cast<std::uint32_t>(symbol_leaves_.size()),
                              static_cast<std::uint32_t>(constant_leaves_.size()),
                              static_cast<std::uint32_t>(operators_.size())});
            const std::size_t var_begin = vars_.size();
            shared_.clear();  // indices are local to a constraint: no sharing across them
            flatten(s.constraints[k].condition.root(), s.variables, spans_.back().nodes);
            std::sort(vars_.begin() + static_cast<std::ptrdiff_t>(var_begin), vars_.end());
            vars_.erase(std::unique(vars_.begin() + static_cast<std::ptrdiff_t>(var_begin), vars_.end()), vars_.end());
            for (std::size_t j = var_begin; j < vars_.size(); ++j) watch(static_cast<std::size_t>(vars_[j]), k);
        }
    }

    /// Narrows `dom` towards a fixpoint of all constraints; false when a
    /// domain became empty (`*failed` names the constraint). `changed`: `dom`
    /// is a fixpoint except for that variable's domain (a search branch of a
    /// propagated box), so only the constraints that mention it start queued.
    /// `entailed` (one flag per constraint, or null): constraints known to hold
    /// everywhere in `dom`. They are skipped, and a constraint whose interval
    /// evaluation is true on the whole box is flagged. A box's flags stay true
    /// in every box inside it (interval evaluation is monotone), so the search
    /// hands them down; skipping is exact, as revising such a constraint
    /// narrows nothing, and the queue order (and its round limit) is unchanged.
    bool propagate(std::vector<interval>& dom, std::size_t max_rounds, std::size_t* failed,
                   std::optional<std::size_t> changed = std::nullopt, std::vector<char>* entailed = nullptr) const {
        if (dom.size() != watch_head_.size() || (entailed != nullptr && entailed->size() != spans_.size())) {
            throw error("tensoracle::gen::detail::compiled_system::propagate",
                        "the box or the entailment flags do not match the compiled system");
        }
        return propagate(dom.data(), max_rounds, failed, changed, entailed != nullptr ? entailed->data() : nullptr);
    }
    /// The same on a box of size() variables and size() flags held elsewhere (the search's stack).
    bool propagate(interval* dom, std::size_t max_rounds, std::size_t* failed, std::optional<std::size_t> changed,
                   char* entailed) const {
        if (changed) {
            const std::size_t v = *changed;
            return propagate_changed(dom, max_rounds, failed, {&v, 1}, entailed);
        }
        queue_from(0);
        return run_queue(dom, max_rounds, failed, entailed);
    }
    /// The same on a fixpoint of every constraint in which only the variables
    /// `changed` were narrowed since: only the constraints that read one of them
    /// start queued (none changed: nothing to do).
    bool propagate_changed(interval* dom, std::size_t max_rounds, std::size_t* failed, std::span<const std::size_t> changed,
                           char* entailed) const {
        // Scratch reused across calls: the search propagates at every choice point.
        auto& queued = scratch_.queued;
        auto& queue = scratch_.queue;
        queued.assign(spans_.size(), 0);
        queue.clear();
        for (const std::size_t v : changed) {
            for (std::int32_t e = watch_head_[v]; e >= 0; e = watch_next_[static_cast<std::size_t>(e)]) {
                const std::size_t w = watch_constraint_[static_cast<std::size_t>(e)];
                if (queued[w] == 0) {
                    queued[w] = 1;
                    queue.push_back(w);
                }
            }
        }
        return run_queue(dom, max_rounds, failed, entailed);
    }
    /// The same on a box that is already a fixpoint of constraints [0, settled)
    /// (propagated before the later ones were added): only the later ones
    /// start queued, and the earlier ones only once a domain they read narrows.
    /// `entailed`: as in propagate (null: none known).
    bool propagate_added(std::vector<interval>& dom, std::size_t settled, std::size_t max_rounds, std::size_t* failed,
                         std::vector<char>* entailed = nullptr) const {
        if (dom.size() != watch_head_.size() || (entailed != nullptr && entailed->size() != spans_.size())) {
            throw error("tensoracle::gen::detail::compiled_system::propagate_added",
                        "the box or the entailment flags do not match the compiled system");
        }
        queue_from(std::min(settled, spans_.size()));
        return run_queue(dom.data(), max_rounds, failed, entailed != nullptr ? entailed->data() : nullptr);
    }

private:
    void queue_from(std::size_t first) const {
        auto& queued = scratch_.queued;
        auto& queue = scratch_.queue;
        queued.assign(spans_.size(), 0);
        std::fill(queued.begin() + static_cast<std::ptrdiff_t>(first), queued.end(), 1);
        queue.resize(spans_.size() - first);
        for (std::size_t k = 0; k < queue.size(); ++k) queue[k] = first + k;
    }
    bool run_queue(interval* dom, std::size_t max_rounds, std::size_t* failed, char* entailed) const {
        auto& queued = scratch_.queued;
        auto& queue = scratch_.queue;
        auto& fwd = scratch_.fwd;
        auto& touched = scratch_.touched;
        std::size_t head = 0;
        const std::size_t limit = max_rounds * std::max<std::size_t>(spans_.size(), 1);
        while (head < queue.size()) {
            if (head > limit) break;  // a slow fixpoint: stop narrowing (still sound)
            const std::size_t k = queue[head++];
            queued[k] = 0;
            if (entailed != nullptr && entailed[k] != 0) continue;
            touched.clear();
            bool holds = false;
            if (!revise(view(k), dom, fwd, touched, holds)) {
                if (failed != nullptr) *failed = k;
                return false;
            }
            if (holds && entailed != nullptr) entailed[k] = 1;
            for (const auto v : touched) {
                for (std::int32_t e = watch_head_[static_cast<std::size_t>(v)]; e >= 0; e = watch_next_[static_cast<std::size_t>(e)]) {
                    const std::size_t w = watch_constraint_[static_cast<std::size_t>(e)];
                    if (!queued[w] && w != k) {
                        queued[w] = 1;
                        queue.push_back(w);
                    }
                }
            }
        }
        return true;
    }

public:
    /// Whether `values` (one per variable) satisfies every constraint under
    /// exact evaluation, as spec::expr::eval decides it: int64 overflow or a
    /// division by zero on a path the evaluation takes fails the constraint;
    /// on a branch it skips (the other side of a short-circuit `&&`/`||`, the
    /// unchosen arm of a select) it does not. The search checks each candidate
    /// answer with this rather than building a name -> value map for eval.
    [[nodiscard]] bool satisfied_exactly(const std::vector<std::int64_t>& values) const {
        if (values.size() != watch_head_.size()) {
            throw error("tensoracle::gen::detail::compiled_system::satisfied_exactly",
                        "got " + std::to_string(values.size()) + " values for " + std::to_string(watch_head_.size()) +
                            " variables");
        }
        auto& val = scratch_.exact;
        auto& bad = scratch_.exact_bad;
        for (std::size_t k = 0; k < spans_.size(); ++k) {
            const flat_constraint f = view(k);
            val.resize(f.nodes.size());
            bad.resize(f.nodes.size());
            for (std::size_t i = 0; i < f.nodes.size(); ++i) exact_node(f, i, values, val, bad);
            if (bad.back() != 0 || val.back() == 0) return false;
        }
        return true;
    }

    [[nodiscard]] std::size_t size() const noexcept { return spans_.size(); }
    /// Constraint k, compiled.
    [[nodiscard]] flat_constraint view(std::size_t k) const {
        const auto& a = spans_[k];
        const auto b = k + 1 < spans_.size() ? spans_[k + 1] : span_ends();
        const auto part = [](const auto& v, std::uint32_t from, std::uint32_t to) {
            return std::span(v.data() + from, to - from);
        };
        return {part(nodes_, a.nodes, b.nodes), part(vars_, a.vars, b.vars),
                part(symbol_leaves_, a.symbols, b.symbols), part(constant_leaves_, a.constants, b.constants),
                part(operators_, a.operators, b.operators)};
    }
    /// Whether this is `s` compiled up to its last constraint (not a stale compile).
    [[nodiscard]] bool compiles(const constraint_system& s) const noexcept {
        return spans_.size() == s.constraints.size() && watch_head_.size() == s.variables.size();
    }
    /// The index of the variable named `name` (whose std::hash is `hash`, as an
    /// expr symbol carries it) among `vars`, the compiled system's variables.
    [[nodiscard]] std::optional<std::size_t> variable_index(std::string_view name, std::size_t hash,
                                                            const std::vector<variable>& vars) const {
        if (slots_.empty()) return std::nullopt;
        for (std::size_t at = hash & (slots_.size() - 1);; at = (at + 1) & (slots_.size() - 1)) {
            const std::int32_t v = slots_[at];
            if (v < 0) return std::nullopt;
            const auto i = static_cast<std::size_t>(v);
            if (name_hash_[i] == hash && i < vars.size() && vars[i].name == name) return i;
        }
    }
    /// Whether any constraint mentions variable i.
    [[nodiscard]] bool constrained(std::size_t i) const noexcept { return watch_head_[i] >= 0; }

private:
    // Appends n's subtree to nodes_ in post-order; indices are relative to `base`.
    std::int32_t flatten(const spec::expr::node& n, const std::vector<variable>& vars, std::uint32_t base) {
        flat_node out{n.kind};
        if (n.kind == spec::expr_kind::constant) {
            out.value = n.value;
        } else if (n.kind == spec::expr_kind::symbol) {
            const auto i = variable_index(n.name, n.name_hash, vars);
            if (!i) {
                throw error("tensoracle::gen::solve", "constraint mentions '" + n.name + "', which is not a variable of the system");
            }
            out.var = static_cast<std::int32_t>(*i);
            vars_.push_back(out.var);
        } else {
            if (n.lhs) out.a = flatten_operand(n.lhs, vars, base);
            if (n.rhs) out.b = flatten_operand(n.rhs, vars, base);
            if (n.cond) out.cond = flatten_operand(n.cond, vars, base);
        }
        nodes_.push_back(out);
        const auto at = static_cast<std::int32_t>(nodes_.size() - 1 - base);
        if (n.kind == spec::expr_kind::symbol) symbol_leaves_.emplace_back(at, out.var);
        else if (n.kind == spec::expr_kind::constant) constant_leaves_.push_back(at);
        else operators_.push_back(at);
        return at;
    }

    // A subexpression the spec shares (a normalized axis, a running count of
    // kept dims) is compiled once per constraint and read by every parent:
    // the constraint stays a DAG. Expanded into a tree, a Squeeze's output
    // dims would grow with the cube of the rank and take most of its solving time.
    // Narrowing stays sound on a DAG: a node holds one value, so whatever one
    // parent requires of it holds for every parent (narrow meets, never resets).
    std::int32_t flatten_operand(const std::shared_ptr<const spec::expr::node>& c, const std::vector<variable>& vars,
                                 std::uint32_t base) {
        if (c.use_count() == 1) return flatten(*c, vars, base);  // referenced once: nothing to share
        if (const auto known = shared_.find(c.get())) return *known;
        const std::int32_t at = flatten(*c, vars, base);
        shared_.insert(c.get(), at);
        return at;
    }

    // Variable var's watcher list gains constraint w (kept in insertion order:
    // the propagation queue's order, and so its round limit, depend on it).
    void watch(std::size_t var, std::size_t w) {
        const auto e = static_cast<std::int32_t>(watch_constraint_.size());
        watch_constraint_.push_back(w);
        watch_next_.push_back(-1);
        if (watch_tail_[var] >= 0) watch_next_[static_cast<std::size_t>(watch_tail_[var])] = e;
        else watch_head_[var] = e;
        watch_tail_[var] = e;
    }

    // Node i from its (already evaluated) children; bad[i]: evaluating it fails.
    static void exact_node(const flat_constraint& f, std::size_t i, const std::vector<std::int64_t>& values,
                           std::vector<std::int64_t>& val, std::vector<char>& bad) {
        using K = spec::expr_kind;
        const auto& n = f.nodes[i];
        const auto at = [&](std::int32_t c) { return static_cast<std::size_t>(c); };
        std::int64_t r = 0;
        char fail = 0;
        switch (n.kind) {
            case K::constant: r = n.value; break;
            case K::symbol: r = values[static_cast<std::size_t>(n.var)]; break;
            case K::logical_not:
                fail = bad[at(n.a)];
                r = val[at(n.a)] == 0 ? 1 : 0;
                break;
            case K::logical_and:  // short-circuits: the right side counts only when the left is true
                if (bad[at(n.a)] != 0) fail = 1;
                else if (val[at(n.a)] == 0) r = 0;
                else fail = bad[at(n.b)], r = val[at(n.b)] != 0 ? 1 : 0;
                break;
            case K::logical_or:
                if (bad[at(n.a)] != 0) fail = 1;
                else if (val[at(n.a)] != 0) r = 1;
                else fail = bad[at(n.b)], r = val[at(n.b)] != 0 ? 1 : 0;
                break;
            case K::select: {
                if (bad[at(n.cond)] != 0) {
                    fail = 1;
                    break;
                }
                const std::size_t arm = val[at(n.cond)] != 0 ? at(n.a) : at(n.b);
                fail = bad[arm];
                r = val[arm];
                break;
            }
            default: {
                if (bad[at(n.a)] != 0 || bad[at(n.b)] != 0) {
                    fail = 1;
                    break;
                }
                const std::int64_t a = val[at(n.a)], b = val[at(n.b)];
                switch (n.kind) {
                    case K::add: fail = __builtin_add_overflow(a, b, &r) ? 1 : 0; break;
                    case K::sub: fail = __builtin_sub_overflow(a, b, &r) ? 1 : 0; break;
                    case K::mul: fail = __builtin_mul_overflow(a, b, &r) ? 1 : 0; break;
                    case K::div:
                    case K::mod: {
                        if (b == 0 || (a == std::numeric_limits<std::int64_t>::min() && b == -1 && n.kind == K::div)) {
                            fail = 1;
                            break;
                        }
                        if (b == -1) {  // a % -1 is 0; a / -1 is -a (min handled above)
                            r = n.kind == K::div ? -a : 0;
                            break;
                        }
                        std::int64_t q = a / b, m = a % b;
                        if (m < 0) {  // Euclidean: the remainder is non-negative
                            // |b| in unsigned arithmetic: b may be INT64_MIN, whose negation overflows
                            m = static_cast<std::int64_t>(
                                static_cast<std::uint64_t>(m) +
                                (b > 0 ? static_cast<std::uint64_t>(b) : std::uint64_t{0} - static_cast<std::uint64_t>(b)));
                            q += (b > 0 ? -1 : 1);
                        }
                        r = n.kind == K::div ? q : m;
                        break;
                    }
                    case K::min: r = a < b ? a : b; break;
                    case K::max: r = a > b ? a : b; break;
                    case K::eq: r = a == b; break;
                    case K::ne: r = a != b; break;
                    case K::lt: r = a < b; break;
                    case K::le: r = a <= b; break;
                    case K::gt: r = a > b; break;
                    case K::ge: r = a >= b; break;
                    default: break;
                }
            }
        }
        val[i] = r;
        bad[i] = fail;
    }

    static bool truthy_known(interval i) noexcept { return !i.empty() && !i.contains(0); }
    static bool falsy_known(interval i) noexcept { return i.lo == 0 && i.hi == 0; }

    // Forward: the interval of every node, bottom-up.
    static void forward(const flat_constraint& f, const interval* dom, std::vector<interval>& out) {
        using K = spec::expr_kind;
        out.resize(f.nodes.size());
        interval* const v = out.data();
        const flat_node* const nodes = f.nodes.data();
        for (const auto& [i, var] : f.symbol_leaves) v[i] = dom[static_cast<std::size_t>(var)];
        for (const auto i : f.constant_leaves) v[i] = {nodes[i].value, nodes[i].value};
        for (const auto i : f.operators) {
            const auto& n = nodes[i];
            // Every operator has a left operand; all but logical_not a right one.
            const interval A = v[n.a];
            const interval B = n.b >= 0 ? v[n.b] : interval{};
            interval r{0, 1};
            switch (n.kind) {
                case K::constant:
                case K::symbol: break;  // leaves: set above
                case K::add: r = {clamp_big(__int128(A.lo) + B.lo), clamp_big(__int128(A.hi) + B.hi)}; break;
                case K::sub: r = {clamp_big(__int128(A.lo) - B.hi), clamp_big(__int128(A.hi) - B.lo)}; break;
                case K::mul: {
                    const __int128 p[4] = {__int128(A.lo) * B.lo, __int128(A.lo) * B.hi, __int128(A.hi) * B.lo,
                                           __int128(A.hi) * B.hi};
                    r = {clamp_big(*std::min_element(p, p + 4)), clamp_big(*std::max_element(p, p + 4))};
                    break;
                }
                case K::div: r = div_range(A, B); break;
                case K::mod: {
                    if (A.singleton() && B.singleton()) {
                        if (B.lo == 0) {
                            r = {};  // division by zero: no value
                        } else {
                            const std::int64_t q = euclid_div(A.lo, B.lo);
                            r.lo = r.hi = clamp_big(__int128(A.lo) - __int128(q) * B.lo);
                        }
                        break;
                    }
                    const std::int64_t m = std::max(B.hi > 0 ? B.hi : 0, B.lo < 0 ? clamp_big(-__int128(B.lo)) : 0);
                    r = {0, m > 0 ? m - 1 : 0};
                    if (A.lo >= 0) r.hi = std::min(r.hi, A.hi);
                    if (A.lo >= 0 && B.lo > A.hi) r = A;  // a < b: a % b = a
                    break;
                }
                case K::min: r = {std::min(A.lo, B.lo), std::min(A.hi, B.hi)}; break;
                case K::max: r = {std::max(A.lo, B.lo), std::max(A.hi, B.hi)}; break;
                case K::eq:
                    if (A.singleton() && B.singleton() && A.lo == B.lo) r = {1, 1};
                    else if (meet(A, B).empty()) r = {0, 0};
                    break;
                case K::ne:
                    if (A.singleton() && B.singleton() && A.lo == B.lo) r = {0, 0};
                    else if (meet(A, B).empty()) r = {1, 1};
                    break;
                case K::lt: r = A.hi < B.lo ? interval{1, 1} : (A.lo >= B.hi ? interval{0, 0} : r); break;
                case K::le: r = A.hi <= B.lo ? interval{1, 1} : (A.lo > B.hi ? interval{0, 0} : r); break;
                case K::gt: r = A.lo > B.hi ? interval{1, 1} : (A.hi <= B.lo ? interval{0, 0} : r); break;
                case K::ge: r = A.lo >= B.hi ? interval{1, 1} : (A.hi < B.lo ? interval{0, 0} : r); break;
                case K::logical_and:
                    if (falsy_known(A) || falsy_known(B)) r = {0, 0};
                    else if (truthy_known(A) && truthy_known(B)) r = {1, 1};
                    break;
                case K::logical_or:
                    if (truthy_known(A) || truthy_known(B)) r = {1, 1};
                    else if (falsy_known(A) && falsy_known(B)) r = {0, 0};
                    break;
                case K::logical_not:
                    if (truthy_known(A)) r = {0, 0};
                    else if (falsy_known(A)) r = {1, 1};
                    break;
                case K::select: {
                    const interval C = v[n.cond];
                    r = truthy_known(C) ? A : (falsy_known(C) ? B : hull(A, B));
                    break;
                }
            }
            v[i] = r;
        }
    }

    static interval div_range(interval A, interval B) {
        interval r{};  // empty: only b == 0
        auto part = [&](std::int64_t lo, std::int64_t hi) {
            if (lo > hi) return;
            const std::int64_t c[4] = {euclid_div(A.lo, lo), euclid_div(A.lo, hi), euclid_div(A.hi, lo), euclid_div(A.hi, hi)};
            r = hull(r, {*std::min_element(c, c + 4), *std::max_element(c, c + 4)});
        };
        part(std::max<std::int64_t>(B.lo, 1), B.hi);
        part(B.lo, std::min<std::int64_t>(B.hi, -1));
        return r;
    }

    // Backward: narrows node i to target t, and its children accordingly.
    static bool narrow(const flat_constraint& f, std::size_t i, interval t, std::vector<interval>& v,
                       interval* dom, std::vector<std::int32_t>& touched) {
        using K = spec::expr_kind;
        const auto& n = f.nodes[i];
        interval cur = meet(v[i], t);
        if (cur.empty()) return false;
        v[i] = cur;
        auto child = [&](std::int32_t c, interval target) {
            return narrow(f, static_cast<std::size_t>(c), target, v, dom, touched);
        };
        const interval A = n.a >= 0 ? v[static_cast<std::size_t>(n.a)] : interval{};
        const interval B = n.b >= 0 ? v[static_cast<std::size_t>(n.b)] : interval{};
        const interval any{-big, big};
        switch (n.kind) {
            case K::constant: return cur.contains(n.value);
            case K::symbol: {
                auto& d = dom[static_cast<std::size_t>(n.var)];
                const interval nd = meet(d, cur);
                if (nd.empty()) return false;
                if (!(nd == d)) {
                    d = nd;
                    touched.push_back(n.var);
                }
                return true;
            }
            case K::add:
                return child(n.a, {clamp_big(__int128(cur.lo) - B.hi), clamp_big(__int128(cur.hi) - B.lo)}) &&
                       child(n.b, {clamp_big(__int128(cur.lo) - v[static_cast<std::size_t>(n.a)].hi),
                                   clamp_big(__int128(cur.hi) - v[static_cast<std::size_t>(n.a)].lo)});
            case K::sub:
                return child(n.a, {clamp_big(__int128(cur.lo) + B.lo), clamp_big(__int128(cur.hi) + B.hi)}) &&
                       child(n.b, {clamp_big(__int128(v[static_cast<std::size_t>(n.a)].lo) - cur.hi),
                                   clamp_big(__int128(v[static_cast<std::size_t>(n.a)].hi) - cur.lo)});
            case K::mul: {
                auto quotient = [&](interval other) -> interval {
                    // The other factor has no value (it divides by zero): nor has the product.
                    // Its empty interval is {0, -1}, and 0 was a divisor below.
                    if (other.empty()) return {};
                    if (other.contains(0)) return any;  // 0 * x covers anything
                    std::int64_t lo = big, hi = -big;
                    for (const std::int64_t y : {cur.lo, cur.hi}) {
                        for (const std::int64_t d : {other.lo, other.hi}) {
                            lo = std::min(lo, ceil_div(y, d));
                            hi = std::max(hi, floor_div(y, d));
                        }
                    }
                    // cur spans 0 with one-signed divisor: zero is reachable
                    if (cur.contains(0)) {
                        lo = std::min<std::int64_t>(lo, 0);
                        hi = std::max<std::int64_t>(hi, 0);
                    }
                    return {lo, hi};
                };
                if (!child(n.a, quotient(B))) return false;
                return child(n.b, quotient(v[static_cast<std::size_t>(n.a)]));
            }
            case K::div:
            case K::mod: {
                if (n.kind == K::mod || !(B.lo > 0)) return true;
                // b > 0: q = floor(a / b), so b*q <= a <= b*q + b - 1.
                const __int128 lo = std::min(__int128(cur.lo) * B.lo, __int128(cur.lo) * B.hi);
                const __int128 hi = std::max(__int128(cur.hi) * B.hi + B.hi - 1, __int128(cur.hi) * B.lo + B.lo - 1);
                return child(n.a, {clamp_big(lo), clamp_big(hi)});
            }
            case K::min:
                return child(n.a, {cur.lo, big}) && child(n.b, {cur.lo, big}) &&
                       (v[static_cast<std::size_t>(n.b)].lo <= cur.hi || child(n.a, {-big, cur.hi})) &&
                       (v[static_cast<std::size_t>(n.a)].lo <= cur.hi || child(n.b, {-big, cur.hi}));
            case K::max:
                return child(n.a, {-big, cur.hi}) && child(n.b, {-big, cur.hi}) &&
                       (v[static_cast<std::size_t>(n.b)].hi >= cur.lo || child(n.a, {cur.lo, big})) &&
                       (v[static_cast<std::size_t>(n.a)].hi >= cur.lo || child(n.b, {cur.lo, big}));
            case K::eq:
            case K::ne:
            case K::lt:
            case K::le:
            case K::gt:
            case K::ge: {
                if (!cur.singleton()) return true;
                K k = n.kind;
                if (cur.lo == 0) {  // the comparison must be false: negate it
                    switch (k) {
                        case K::eq: k = K::ne; break;
                        case K::ne: k = K::eq; break;
                        case K::lt: k = K::ge; break;
                        case K::le: k = K::gt; break;
                        case K::gt: k = K::le; break;
                        default: k = K::lt; break;
                    }
                }
                switch (k) {
                    case K::eq: return child(n.a, B) && child(n.b, v[static_cast<std::size_t>(n.a)]);
                    case K::ne:
                        if (B.singleton()) {
                            if (A.lo == B.lo && !child(n.a, {A.lo + 1, big})) return false;
                            if (A.hi == B.lo && !child(n.a, {-big, v[static_cast<std::size_t>(n.a)].hi - 1})) return false;
                        }
                        if (A.singleton()) {
                            const interval b2 = v[static_cast<std::size_t>(n.b)];
                            if (b2.lo == A.lo && !child(n.b, {b2.lo + 1, big})) return false;
                            if (v[static_cast<std::size_t>(n.b)].hi == A.lo &&
                                !child(n.b, {-big, v[static_cast<std::size_t>(n.b)].hi - 1})) {
                                return false;
                            }
                        }
                        return true;
                    case K::lt: return child(n.a, {-big, B.hi - 1}) && child(n.b, {v[static_cast<std::size_t>(n.a)].lo + 1, big});
                    case K::le: return child(n.a, {-big, B.hi}) && child(n.b, {v[static_cast<std::size_t>(n.a)].lo, big});
                    case K::gt: return child(n.a, {B.lo + 1, big}) && child(n.b, {-big, v[static_cast<std::size_t>(n.a)].hi - 1});
                    default: return child(n.a, {B.lo, big}) && child(n.b, {-big, v[static_cast<std::size_t>(n.a)].hi});
                }
            }
            case K::logical_and:
                if (truthy_known(cur)) return require(f, n.a, true, v, dom, touched) && require(f, n.b, true, v, dom, touched);
                if (falsy_known(cur)) {
                    if (truthy_known(A)) return require(f, n.b, false, v, dom, touched);
                    if (truthy_known(B)) return require(f, n.a, false, v, dom, touched);
                }
                return true;
            case K::logical_or:
                if (falsy_known(cur)) return require(f, n.a, false, v, dom, touched) && require(f, n.b, false, v, dom, touched);
                if (truthy_known(cur)) {
                    if (falsy_known(A)) return require(f, n.b, true, v, dom, touched);
                    if (falsy_known(B)) return require(f, n.a, true, v, dom, touched);
                }
                return true;
            case K::logical_not:
                if (truthy_known(cur)) return require(f, n.a, false, v, dom, touched);
                if (falsy_known(cur)) return require(f, n.a, true, v, dom, touched);
                return true;
            case K::select: {
                const interval C = v[static_cast<std::size_t>(n.cond)];
                if (truthy_known(C)) return child(n.a, cur);
                if (falsy_known(C)) return child(n.b, cur);
                const bool a_ok = !meet(A, cur).empty(), b_ok = !meet(B, cur).empty();
                if (!a_ok && !b_ok) return false;
                if (!a_ok) return require(f, n.cond, false, v, dom, touched) && child(n.b, cur);
                if (!b_ok) return require(f, n.cond, true, v, dom, touched) && child(n.a, cur);
                return true;
            }
        }
        return true;
    }

    // A boolean-used node must be nonzero (truth) or zero.
    static bool require(const flat_constraint& f, std::int32_t c, bool truth, std::vector<interval>& v,
                        interval* dom, std::vector<std::int32_t>& touched) {
        const interval cur = v[static_cast<std::size_t>(c)];
        if (!truth) return narrow(f, static_cast<std::size_t>(c), {0, 0}, v, dom, touched);
        if (cur.lo == 0 && cur.hi == 0) return false;
        if (cur.lo == 0) return narrow(f, static_cast<std::size_t>(c), {1, cur.hi}, v, dom, touched);
        if (cur.hi == 0) return narrow(f, static_cast<std::size_t>(c), {cur.lo, -1}, v, dom, touched);
        return true;  // 0 strictly inside an integer range: nothing to narrow
    }

    // `holds`: the constraint is true on the whole box (then nothing narrows).
    static bool revise(const flat_constraint& f, interval* dom, std::vector<interval>& v,
                       std::vector<std::int32_t>& touched, bool& holds) {
        forward(f, dom, v);
        holds = truthy_known(v.back());
        if (holds) return true;
        return require(f, static_cast<std::int32_t>(f.nodes.size() - 1), true, v, dom, touched);
    }

    struct scratch {
        std::vector<char> queued;
        std::vector<std::size_t> queue;
        std::vector<interval> fwd;
        std::vector<std::int32_t> touched;
        std::vector<std::int64_t> exact;  // satisfied_exactly's node values
        std::vector<char> exact_bad;
    };
    mutable scratch scratch_;  // propagate's buffers (a compiled system is used by one thread)

public:
    /// solve's buffers, kept with the system so that solving it again (a
    /// generator's binned tries, instance after instance on a reused system)
    /// allocates nothing. Not for use while another solve of this system runs.
    struct search_buffers {
        /// A box of the search: its slot in `doms` and `flags`, and the
        /// variable it differs in from its propagated parent.
        struct box {
            std::size_t slot;
            std::size_t split;
        };
        std::vector<std::size_t> changed;
        std::vector<char> root_entailed;
        std::vector<interval> doms;
        std::vector<char> flags;
        std::vector<box> stack;
    };
    [[nodiscard]] search_buffers& search_scratch() const noexcept { return search_; }

private:
    mutable search_buffers search_;
    // Where constraint k starts in each array; it ends where k + 1 starts.
    struct starts {
        std::uint32_t nodes, vars, symbols, constants, operators;
    };
    [[nodiscard]] starts span_ends() const noexcept {
        return {static_cast<std::uint32_t>(nodes_.size()), static_cast<std::uint32_t>(vars_.size()),
                static_cast<std::uint32_t>(symbol_leaves_.size()), static_cast<std::uint32_t>(constant_leaves_.size()),
                static_cast<std::uint32_t>(operators_.size())};
    }
    std::vector<starts> spans_;
    std::vector<flat_node> nodes_;
    std::vector<std::int32_t> vars_;
    std::vector<std::pair<std::int32_t, std::int32_t>> symbol_leaves_;
    std::vector<std::int32_t> constant_leaves_;
    std::vector<std::int32_t> operators_;
    // Per variable, the constraints that mention it: a linked list in two
    // shared arrays (head and tail per variable, -1 when none).
    std::vector<std::int32_t> watch_head_, watch_tail_, watch_next_;
    std::vector<std::size_t> watch_constraint_;
    std::vector<std::size_t> name_hash_;  // std::hash of each variable's name (as expr symbols carry)
    std::vector<std::int32_t> slots_;     // variable indices by name hash (open addressing; -1: empty)
    // flatten's shared subexpressions compiled so far in this constraint, by
    // address: open addressing, at most half full, emptied through the list
    // of used slots. A hash map would allocate a node per entry, and specs
    // share many (every dim a constraint and a shape both hold): a sixth of
    // all the generator's allocations.
    struct shared_table {
        std::vector<std::pair<const void*, std::int32_t>> slots;
        std::vector<std::size_t> used;
        [[nodiscard]] static std::size_t hash(const void* p) noexcept {
            auto h = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
            h ^= h >> 29;
            h *= 0xbf58476d1ce4e5b9ULL;
            return static_cast<std::size_t>(h ^ (h >> 32));
        }
        [[nodiscard]] std::size_t probe(const void* p) const noexcept {
            const std::size_t mask = slots.size() - 1;
            std::size_t at = hash(p) & mask;
            while (slots[at].first != nullptr && slots[at].first != p) at = (at + 1) & mask;
            return at;
        }
        void clear() noexcept {
            for (const std::size_t at : used) slots[at] = {nullptr, -1};
            used.clear();
        }
        [[nodiscard]] std::optional<std::int32_t> find(const void* p) const noexcept {
            if (slots.empty()) return std::nullopt;
            const auto& e = slots[probe(p)];
            return e.first == p ? std::optional<std::int32_t>(e.second) : std::nullopt;
        }
        void insert(const void* p, std::int32_t at) {
            if (2 * (used.size() + 1) > slots.size()) {
                std::vector<std::pair<const void*, std::int32_t>> old;
                old.swap(slots);
                slots.assign(std::max<std::size_t>(64, 2 * old.size()), {nullptr, -1});
                used.clear();
                for (const auto& e : old) {
                    if (e.first == nullptr) continue;
                    const std::size_t k = probe(e.first);
                    slots[k] = e;
                    used.push_back(k);
                }
            }
            const std::size_t k = probe(p);
            slots[k] = {p, at};
            used.push_back(k);
        }
    };
    shared_table shared_;
};

/// A compiled_system for one use at a time on this thread, empty but with
/// the storage of the one compiled before it (a nested lease gets its own).
class reused_compiled_system {
public:
    reused_compiled_system() {
        auto& s = shared();
        if (!s.busy) {
            s.busy = true;
            system_ = &s.system;
            system_->reset();
        } else {
            own_.emplace();
            system_ = &*own_;
        }
    }
    reused_compiled_system(const reused_compiled_system&) = delete;
    reused_compiled_system& operator=(const reused_compiled_system&) = delete;
    ~reused_compiled_system() {
        if (!own_) shared().busy = false;
    }
    [[nodiscard]] compiled_system& get() noexcept { return *system_; }

private:
    struct slot {
        compiled_system system;
        bool busy = false;
    };
    static slot& shared() {
        thread_local slot s;
        return s;
    }
    std::optional<compiled_system> own_;
    compiled_system* system_ = nullptr;
};

}  // namespace detail

/// `propagate` on domains `dom` already narrowed by a propagation of the
/// system's first `settled` constraints (the generator adds constraints
/// between propagations): only the constraints added since start queued.
/// Propagation narrows to the greatest common fixpoint of the constraints'
/// monotone revisions whatever the queue order, so unless the round limit
/// cuts either short this is what propagating every constraint gives, at a
/// fraction of the cost.
/// `entailed` (or null): flags of the constraints known to hold on all of
/// `dom` (see detail::compiled_system::propagate), resized to the system's
/// constraints (added ones unflagged) and updated. A caller that propagates
/// one shrinking box again and again keeps them, and hands them to solve.
[[nodiscard]] inline std::optional<std::vector<interval>> propagate_added(const constraint_system& system,
                                                                          const detail::compiled_system& compiled,
                                                                          std::vector<interval> dom, std::size_t settled,
                                                                          std::string* conflict = nullptr,
                                                                          const solver_options& options = {},
                                                                          std::vector<char>* entailed = nullptr) {
    if (dom.size() != system.variables.size() || !compiled.compiles(system) || settled > system.constraints.size()) {
        throw error("tensoracle::gen::propagate",
                    "the compiled system, the domains or the settled count do not match the system");
    }
    if (std::any_of(dom.begin(), dom.end(), [](interval d) { return d.empty(); })) {
        if (conflict != nullptr) *conflict = "a variable has an empty domain";
        return std::nullopt;
    }
    std::size_t failed = 0;
    if (entailed != nullptr) entailed->resize(compiled.size(), 0);
    if (!compiled.propagate_added(dom, settled, options.max_propagation_rounds, &failed, entailed)) {
        if (conflict != nullptr) {
            const auto& c = system.constraints[failed];
            *conflict = c.condition.to_string() + " (" + c.reason + ")";
        }
        return std::nullopt;
    }
    return dom;
}

/// The domains `dom` narrowed by propagation with `compiled` (the system
/// compiled once: see detail::compiled_system::extend); nullopt when a domain
/// became empty (`*conflict` names the constraint).
[[nodiscard]] inline std::optional<std::vector<interval>> propagate(const constraint_system& system,
                                                                    const detail::compiled_system& compiled,
                                                                    std::vector<interval> dom,
                                                                    std::string* conflict = nullptr,
                                                                    const solver_options& options = {}) {
    return propagate_added(system, compiled, std::move(dom), 0, conflict, options);
}

/// The variables' declared domains, one per variable.
[[nodiscard]] inline std::vector<interval> domains_of(const constraint_system& system) {
    std::vector<interval> dom(system.variables.size());
    for (std::size_t i = 0; i < dom.size(); ++i) dom[i] = system.variables[i].domain;
    return dom;
}

/// The domains of `system` narrowed by propagation alone; nullopt when a
/// domain became empty (`*conflict` names the constraint).
[[nodiscard]] inline std::optional<std::vector<interval>> propagate(const constraint_system& system,
                                                                    std::string* conflict = nullptr,
                                                                    const solver_options& options = {}) {
    const detail::compiled_system compiled(system);
    return propagate(system, compiled, domains_of(system), conflict, options);
}

/// A box the caller has already propagated: `domains` is a fixpoint of every
/// constraint of the system, and `entailed` flags constraints true on all of
/// it (propagate_added keeps both). Solving a box inside it then revises at
/// the root only the constraints that read a variable the box narrows (the
/// generator's bins), not every constraint again.
struct propagated_box {
    std::vector<interval> domains;
    std::vector<char> entailed;
};

/// Solves `system` by propagation and randomized search; `g` picks values, so
/// different generators give different (valid) solutions.
/// `root` replaces the variables' declared domains (it must lie inside them),
/// and `compiled` is `system` compiled once (see propagate). `around` (or
/// null): a propagated box that holds `root` (see propagated_box); the
/// answer is the same as without it, found with less propagation.
[[nodiscard]] inline solve_result solve(const constraint_system& system, const detail::compiled_system& compiled,
                                        std::vector<interval> root, rng& g, const solver_options& options = {},
                                        const propagated_box* around = nullptr) {
    solve_result result;
    if (root.size() != system.variables.size() || !compiled.compiles(system)) {
        throw error("tensoracle::gen::solve", "the compiled system or the domains do not match the system");
    }
    if (around != nullptr && (around->domains.size() != root.size() || around->entailed.size() != compiled.size())) {
        throw error("tensoracle::gen::solve", "the propagated box does not match the system");
    }
    for (std::size_t i = 0; i < root.size(); ++i) {
        root[i] = detail::meet(root[i], system.variables[i].domain);
        if (root[i].empty()) {
            result.status = solve_status::unsat;
            result.conflict = "variable " + system.variables[i].name + " has an empty domain";
            return result;
        }
    }
    std::size_t failed = 0;
    auto& buffers = compiled.search_scratch();
    // Constraints true on a whole box are not revised again inside it (see propagate).
    std::vector<char>& root_entailed = buffers.root_entailed;
    bool propagated = false;
    if (around != nullptr) {
        std::vector<std::size_t>& changed = buffers.changed;
        changed.clear();
        for (std::size_t i = 0; i < root.size(); ++i) {
            const interval d = around->domains[i];
            if (root[i].lo < d.lo || root[i].hi > d.hi) {
                throw error("tensoracle::gen::solve", "the root box is not inside the propagated box");
            }
            if (!(root[i] == d)) changed.push_back(i);
        }
        root_entailed.assign(around->entailed.begin(), around->entailed.end());
        propagated = compiled.propagate_changed(root.data(), options.max_propagation_rounds, &failed, changed,
                                                root_entailed.data());
    } else {
        root_entailed.assign(compiled.size(), 0);
        propagated = compiled.propagate(root, options.max_propagation_rounds, &failed, std::nullopt, &root_entailed);
    }
    if (!propagated) {
        result.status = solve_status::unsat;
        if (options.explain) {
            const auto& c = system.constraints[failed];
            result.conflict = c.condition.to_string() + " (" + c.reason + ")";
        } else {
            result.conflict = "constraint " + std::to_string(failed) + " (not explained: solver_options::explain is off)";
        }
        return result;
    }
    // Depth-first search over domain splits: pick the variable with the
    // smallest non-singleton domain, a value v in it (often a special one:
    // -1, 0, 1 or a bound, where shape rules have their solutions), and
    // branch on {v}, then the two sides of v in random order. Branches are
    // propagated when popped, not when pushed (the first usually succeeds).
    // Randomized restarts with a growing node budget cut the heavy tail of
    // one unlucky early choice; a restart that exhausts its tree without
    // hitting the budget has searched everything, so the system is unsat.
    std::size_t budget = std::min<std::size_t>(64, options.max_nodes);
    // The stack's boxes live in two arrays (domains, entailment flags), one
    // slot per box: a popped box is processed in place at the top, and its
    // branches are written above it. Nothing is allocated per choice point.
    const std::size_t nv = root.size(), nc = compiled.size();
    std::vector<interval>& doms = buffers.doms;
    std::vector<char>& flags = buffers.flags;
    std::vector<std::int64_t> values(nv);
    auto& stack = buffers.stack;
    for (;;) {
        std::size_t nodes = 0;
        bool cut = false;
        doms.assign(root.begin(), root.end());
        flags.assign(root_entailed.begin(), root_entailed.end());
        stack.clear();
        stack.push_back({0, nv});
        while (!stack.empty()) {
            if (nodes >= budget) {
                cut = true;
                break;
            }
            ++nodes;
            ++result.nodes;
            const auto entry = stack.back();
            stack.pop_back();
            // Slots above this one belong to boxes already popped.
            doms.resize((entry.slot + 1) * nv);
            flags.resize((entry.slot + 1) * nc);
            interval* dom = doms.data() + entry.slot * nv;
            const std::size_t split = entry.split;
            if (split < nv &&
                !compiled.propagate(dom, options.max_propagation_rounds, nullptr, split, flags.data() + entry.slot * nc)) {
                continue;
            }
            // Constrained variables first (smallest domain first: fail early);
            // free ones last, where any value works.
            std::size_t pick = nv;
            auto better = [&](std::size_t i) {
                if (pick == nv) return true;
                const bool ci = compiled.constrained(i), cp = compiled.constrained(pick);
                if (ci != cp) return ci;
                return dom[i].width() < dom[pick].width();
            };
            for (std::size_t i = 0; i < nv; ++i) {
                if (!dom[i].singleton() && better(i)) pick = i;
            }
            if (pick == nv) {
                for (std::size_t i = 0; i < nv; ++i) values[i] = dom[i].lo;
                if (compiled.satisfied_exactly(values)) {
                    result.status = solve_status::sat;
                    result.values = std::move(values);
                    return result;
                }
                continue;  // propagation is a relaxation: an all-singleton box can still fail exactly
            }
            const interval d = dom[pick];
            std::int64_t v = d.lo + static_cast<std::int64_t>(g.below(d.width() + 1));
            if (compiled.constrained(pick) && g.bernoulli(0.25)) {
                const std::int64_t special[] = {-1, 0, 1, d.lo, d.hi};
                const std::int64_t s = special[g.below(5)];
                if (d.contains(s)) v = s;
            }
            interval branches[3] = {{v, v}, {}, {}};
            const bool low_first = g.bernoulli(0.5);
            if (v > d.lo) branches[low_first ? 2 : 1] = {d.lo, v - 1};
            if (v < d.hi) branches[low_first ? 1 : 2] = {v + 1, d.hi};
            // Push in reverse so {v} is explored first. Slots rise with the
            // stack (the top box has the highest slot, so popping it frees
            // everything above): the first pushed branch takes the parent's
            // slot, the others copy the parent's box into the slots above.
            int order[3];
            std::size_t count = 0;
            for (int b = 2; b >= 0; --b) {
                if (!branches[b].empty()) order[count++] = b;
            }
            const std::size_t parent = entry.slot;
            doms.resize((parent + count) * nv);
            flags.resize((parent + count) * nc);
            for (std::size_t j = 0; j < count; ++j) {
                const std::size_t slot = parent + count - 1 - j;  // the parent's own slot last
                if (slot != parent) {
                    std::copy_n(doms.data() + parent * nv, nv, doms.data() + slot * nv);
                    std::copy_n(flags.data() + parent * nc, nc, flags.data() + slot * nc);
                }
                doms[slot * nv + pick] = branches[order[count - 1 - j]];
            }
            for (std::size_t j = 0; j < count; ++j) stack.push_back({parent + j, pick});
        }
        if (!cut) break;  // the whole tree was searched
        if (result.nodes >= options.max_nodes) {
            result.status = solve_status::unknown;
            return result;
        }
        budget = std::min(budget * 2, options.max_nodes - result.nodes);
    }
    result.status = solve_status::unsat;  // the whole finite space was searched
    result.conflict = "no assignment satisfies every constraint (exhaustive search)";
    return result;
}

/// Solves `system` by propagation and randomized search; `g` picks values, so
/// different generators give different (valid) solutions.
[[nodiscard]] inline solve_result solve(const constraint_system& system, rng& g, const solver_options& options = {}) {
    const detail::compiled_system compiled(system);
    return solve(system, compiled, domains_of(system), g, options);
}

}  // namespace tensoracle::gen
