// tensoracle: semantics-preserving mutations, the whole layer: the registry of
// every mutation (resolution, recover, rewrite, emi), chains of mutations from
// a seed (composition), the interpreter oracle that says whether a mutant
// agrees with its original at its class's level, and the list of mutations
// as a Markdown table (docs/MUTATIONS.md is generated from it).
//
//   auto m = mutate::mutate_graph(g, inputs, seed, {.steps = 3});
//   if (m) { auto verdict = mutate::check(*m); ... }   // m->model, m->chain
//
// Approximate steps are applied only where the graph is well conditioned on
// the profiled inputs: before keeping one, its rewritten values are perturbed
// by `probe_ulps` units in the last place of their magnitude plus their operands'
// mean magnitude (up, down, at random), and the graph's outputs must stay
// within the step's level. A
// comparison or a rounding downstream of a value computed near a tie would
// otherwise turn the rewrite's last-bit differences into different answers,
// which is no fault of the rewrite (or of a compiler doing the same).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tensoracle/accuracy/compare.hpp"
#include "tensoracle/core/hash.hpp"
#include "tensoracle/mutate/emi.hpp"
#include "tensoracle/mutate/mutation.hpp"
#include "tensoracle/mutate/recover.hpp"
#include "tensoracle/mutate/resolution.hpp"
#include "tensoracle/mutate/rewrite.hpp"

namespace tensoracle::mutate {

/// Mutations write opset-13 forms (axes, split sizes, pads and Clip bounds as
/// inputs) and stay within opset 17 (ReduceMax's axes as an attribute): graphs of
/// other opsets are not mutated.
inline constexpr int min_opset = 13, max_opset = 17;

[[nodiscard]] inline bool mutable_opset(const graph::graph& g) noexcept { return g.opset >= min_opset && g.opset <= max_opset; }

/// Every mutation, in family order (resolution, recover, rewrite, emi), names unique.
[[nodiscard]] inline const std::vector<mutation>& registry() {
    static const std::vector<mutation> all = [] {
        std::vector<mutation> v;
        for (auto part : {resolution_mutations(), recover_mutations(), rewrite_mutations(), emi_mutations()}) {
            v.insert(v.end(), part.begin(), part.end());
        }
        return v;
    }();
    return all;
}

/// The mutation named `name`; throws naming the known ones otherwise.
[[nodiscard]] inline const mutation& find_mutation(std::string_view name) {
    for (const auto& m : registry()) {
        if (m.name == name) return m;
    }
    std::string known;
    for (const auto& m : registry()) known += (known.empty() ? "" : ", ") + std::string(m.name);
    throw error("tensoracle::mutate::find_mutation", "unknown mutation '" + std::string(name) + "' (known: " + known + ")");
}

/// One step of a chain, as applied.
struct applied_step {
    std::string mutation;
    mutate::family family = family::rewrite;
    numeric_class numeric = numeric_class::exact;
    double level = 0.0;
    std::string where;  ///< the site: "Conv f32", "value f16"
};

/// A mutant: the rewritten graph, its chain, its class and level, and its
/// outputs on the original's inputs (from our interpreter).
struct mutant {
    graph::graph model;
    std::map<std::string, tensor, std::less<>> inputs;
    std::map<std::string, tensor, std::less<>> outputs;  ///< the mutant's own, graph-output names
    std::vector<applied_step> chain;
    numeric_class numeric = numeric_class::exact;
    double level = 0.0;  ///< the loosest level of the chain's approximate steps (0 for exact)
    /// "softmax_decompose+transpose_roundtrip": the chain's names, for reports.
    [[nodiscard]] std::string chain_text() const {
        std::string s;
        for (const auto& a : chain) s += (s.empty() ? "" : "+") + a.mutation;
        return s;
    }
};

/// What a chain is drawn from.
struct mutate_options {
    std::size_t steps = 1;              ///< mutations applied in sequence
    std::vector<family> families = {};  ///< allowed families (empty: all)
    std::vector<std::string> only = {};  ///< allowed mutations by name (empty: all of the families)
    std::size_t attempts = 12;          ///< (mutation, site) draws tried per step before giving up
    double probe_ulps = 16.0;           ///< conditioning probe of approximate steps (see the header)
    /// Called with each intermediate graph once it is kept (validated and profiled):
    /// a test checks every step of a chain with it, not only the last.
    std::function<void(const context&)> after_step = {};
};

/// What drawing chains rejected, and why (for statistics and tests).
struct mutate_stats {
    std::map<std::string, std::size_t> applied, ill_conditioned, invalid, no_site;
    /// Messages of invalid rewrites (a bug in a mutation, or an op the interpreter refuses).
    std::vector<std::string> invalid_messages;
    void merge(const mutate_stats& o) {
        auto add = [](auto& a, const auto& b) {
            for (const auto& [k, v] : b) a[k] += v;
        };
        add(applied, o.applied);
        add(ill_conditioned, o.ill_conditioned);
        add(invalid, o.invalid);
        add(no_site, o.no_site);
        invalid_messages.insert(invalid_messages.end(), o.invalid_messages.begin(), o.invalid_messages.end());
    }
};

namespace detail {

/// `g` run on `feeds` with the values in `overrides` replacing what the graph
/// computes for them (a node's output becomes a fed input).
[[nodiscard]] inline std::map<std::string, tensor, std::less<>> run_with(graph::graph g, std::map<std::string, tensor, std::less<>> feeds,
                                                                         const std::map<std::string, tensor, std::less<>>& overrides) {
    std::size_t k = 0;
    for (const auto& [name, t] : overrides) {
        if (g.initializers.count(name) != 0) {
            g.initializers.insert_or_assign(name, t);
            continue;
        }
        if (feeds.count(name) != 0) {
            feeds.insert_or_assign(name, t);
            continue;
        }
        for (auto& n : g.nodes) {
            for (auto& o : n.outputs) {
                if (o == name) o = "__probe_dead_" + std::to_string(k++);
            }
        }
        g.inputs.push_back({name, t.element_dtype(), t.shape()});
        feeds.insert_or_assign(name, t);
    }
    return graph::run(g, feeds).outputs;
}

/// `t` with every element x moved by ulps * eps * (|x| + scale) in `direction` (+1 up,
/// -1 down, 0 each at random): eps of t's dtype, `scale` the rewrite's operands' mean
/// magnitude (a rewrite that cancels errs at the scale of what it reads).
[[nodiscard]] inline tensor perturbed(const tensor& t, double scale, double ulps, int direction, rng& r) {
    const double eps = info(t.element_dtype()).epsilon;
    tensor out = t;
    out.visit([&](auto v) {
        using T = typename decltype(v)::value_type;
        for (auto& x : v) {
            const double d = static_cast<double>(value_cast<double>(x));
            if (!std::isfinite(d)) continue;
            const double dir = direction != 0 ? direction : (r.bernoulli(0.5) ? 1.0 : -1.0);
            x = value_cast<T>(d + dir * ulps * eps * (std::abs(d) + scale));
        }
    });
    return out;
}

}  // namespace detail

/// How a mutant's outputs compare with its original's on our interpreter.
struct agreement {
    bool agrees = true;
    std::string detail;  ///< the first disagreement, readable
};

/// Compares outputs at `numeric`'s level: exact = equal element by element (+0 == -0,
/// NaN where the original has NaN); approximate = GraphNet level `level` per dtype.
[[nodiscard]] inline agreement compare_outputs(const std::map<std::string, tensor, std::less<>>& original,
                                               const std::map<std::string, tensor, std::less<>>& mutated, numeric_class numeric, double level) {
    for (const auto& [name, o] : original) {
        const auto it = mutated.find(name);
        if (it == mutated.end()) return {false, "output '" + name + "' is missing"};
        const tensor& m = it->second;
        if (m.element_dtype() != o.element_dtype() || m.shape() != o.shape()) {
            return {false, "output '" + name + "' is " + std::string(tensoracle::name(m.element_dtype())) + tensoracle::to_string(m.shape()) + ", the original " +
                               std::string(tensoracle::name(o.element_dtype())) + tensoracle::to_string(o.shape())};
        }
        if (numeric == numeric_class::exact || !info(o.element_dtype()).is_floating) {
            for (std::size_t i = 0; i < o.size(); ++i) {
                const double a = o.value_as_double(i), b = m.value_as_double(i);
                if (a == b || (std::isnan(a) && std::isnan(b))) continue;
                std::ostringstream os;
                os << "output '" << name << "' element " << i << ": " << b << ", the original " << a << " (exact class)";
                return {false, os.str()};
            }
            continue;
        }
        const auto report = compare(m, o);
        if (!report.passes(tensoracle::level{level})) {
            return {false, "output '" + name + "': " + report.describe(tolerance_level(o.element_dtype(), level))};
        }
    }
    return {};
}

/// The oracle on our interpreter: the mutant's outputs against the original's.
[[nodiscard]] inline agreement check(const mutant& m, const std::map<std::string, tensor, std::less<>>& original_outputs) {
    return compare_outputs(original_outputs, m.outputs, m.numeric, m.level);
}

namespace detail {

/// Is the graph well conditioned at site `s` (see the header)? `c` is the graph before the rewrite.
[[nodiscard]] inline bool well_conditioned(const context& c, const site& s, double level, double ulps, std::uint64_t seed) {
    if (s.numeric == numeric_class::exact || s.rewritten.empty()) return true;
    double scale = 0.0;
    for (const auto& v : s.reads) {
        if (c.values().count(v) != 0) scale = std::max(scale, mean_abs(c.value(v)));
    }
    std::map<std::string, tensor, std::less<>> base;
    for (const auto& o : c.graph().outputs) base.emplace(o.name, c.value(o.name));
    rng r(seed);
    for (const int direction : {+1, -1, 0}) {
        std::map<std::string, tensor, std::less<>> overrides;
        for (const auto& v : s.rewritten) {
            if (c.values().count(v) == 0 || !info(c.dtype_of(v)).is_floating) continue;
            overrides.emplace(v, perturbed(c.value(v), scale, ulps, direction, r));
        }
        if (overrides.empty()) return true;
        try {
            const auto out = run_with(c.graph(), c.feeds(), overrides);
            if (!compare_outputs(base, out, numeric_class::approximate, level).agrees) return false;
        } catch (const std::exception&) {
            return false;  // perturbed values leave an op's domain: as ill-conditioned as it gets
        }
    }
    return true;
}

[[nodiscard]] inline bool allowed(const mutation& m, const mutate_options& o) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), std::string(m.name)) == o.only.end()) return false;
    if (!o.families.empty() && std::find(o.families.begin(), o.families.end(), m.family) == o.families.end()) return false;
    return true;
}

}  // namespace detail

/// Draws a chain of `options.steps` mutations of `g` from `seed` and applies it:
/// every intermediate graph is validated and profiled on `inputs`. Returns
/// nullopt when some step found nowhere to apply (no mutation allowed has a
/// site, or every draw was ill-conditioned) or the graph's opset is outside
/// [min_opset, max_opset]. A pure function of its arguments.
[[nodiscard]] inline std::optional<mutant> mutate_graph(const graph::graph& g, const std::map<std::string, tensor, std::less<>>& inputs,
                                                        std::uint64_t seed, const mutate_options& options = {},
                                                        mutate_stats* stats = nullptr) {
    mutate_stats local;
    mutate_stats& st = stats ? *stats : local;
    std::vector<const mutation*> pool;
    for (const auto& m : registry()) {
        if (detail::allowed(m, options)) pool.push_back(&m);
    }
    if (pool.empty()) throw error("tensoracle::mutate::mutate_graph", "no mutation is allowed by the options (families / only)");
    if (!mutable_opset(g)) return std::nullopt;
    context c(g, inputs, seed);
    mutant out;
    out.inputs = inputs;
    rng draw(seed ^ 0x9e3779b97f4a7c15ULL);
    for (std::size_t step = 0; step < options.steps; ++step) {
        // Mutations with somewhere to apply, each drawn with equal chance (so that one
        // with many sites does not crowd out the others), then one of its sites.
        std::vector<std::pair<const mutation*, std::vector<site>>> candidates;
        for (const auto* m : pool) {
            auto s = m->sites(c);
            if (s.empty()) {
                ++st.no_site[std::string(m->name)];
                continue;
            }
            candidates.emplace_back(m, std::move(s));
        }
        bool done = false;
        for (std::size_t attempt = 0; attempt < options.attempts && !candidates.empty() && !done; ++attempt) {
            const std::size_t pick = draw.below(candidates.size());
            auto& [m, sites] = candidates[pick];
            const std::size_t which = draw.below(sites.size());
            const site s = sites[which];
            sites.erase(sites.begin() + static_cast<std::ptrdiff_t>(which));
            const mutation* chosen = m;
            if (sites.empty()) candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(pick));
            const double level = s.numeric == numeric_class::approximate ? chosen->level : 0.0;
            if (!detail::well_conditioned(c, s, level, options.probe_ulps, draw())) {
                ++st.ill_conditioned[std::string(chosen->name)];
                continue;
            }
            context next = c;
            try {
                chosen->apply(next, s);
                next.refresh();
            } catch (const std::exception& e) {
                ++st.invalid[std::string(chosen->name)];
                st.invalid_messages.push_back(std::string(chosen->name) + " at " + s.where() + ": " + e.what());
                continue;
            }
            c = std::move(next);
            if (options.after_step) options.after_step(c);
            ++st.applied[std::string(chosen->name)];
            out.chain.push_back({std::string(chosen->name), chosen->family, s.numeric, level, s.where()});
            if (s.numeric == numeric_class::approximate) {
                out.numeric = numeric_class::approximate;
                out.level = out.chain.size() == 1 || out.level == 0.0 ? level : std::max(out.level, level);
            }
            done = true;
        }
        if (!done) return std::nullopt;
    }
    out.model = c.graph();
    for (const auto& o : out.model.outputs) out.outputs.emplace(o.name, c.value(o.name));
    return out;
}

/// The sites every allowed mutation has in `g` (how applicable each is), by name.
[[nodiscard]] inline std::map<std::string, std::size_t> applicability(const graph::graph& g, const std::map<std::string, tensor, std::less<>>& inputs,
                                                                      const mutate_options& options = {}) {
    std::map<std::string, std::size_t> out;
    if (!mutable_opset(g)) {
        for (const auto& m : registry()) {
            if (detail::allowed(m, options)) out[std::string(m.name)] = 0;
        }
        return out;
    }
    const context c(g, inputs, 0);
    for (const auto& m : registry()) {
        if (detail::allowed(m, options)) out[std::string(m.name)] = m.sites(c).size();
    }
    return out;
}

/// A stable id of a mutant's chain and graph (for duplicate detection across draws).
[[nodiscard]] inline std::string mutant_key(const mutant& m) {
    std::string k = m.chain_text() + "|";
    for (const auto& n : m.model.nodes) {
        k += n.op_type + "(";
        for (const auto& i : n.inputs) k += i + ",";
        k += ")";
    }
    return fnv1a_hex(k);
}

/// docs/MUTATIONS.md: every mutation with its family, class, rewrite and precondition.
[[nodiscard]] inline std::string mutations_markdown() {
    std::ostringstream os;
    os << "# Mutations\n\n"
       << "Generated by `tensoracle mutate --list-markdown` from `include/tensoracle/mutate/` (a CTest case fails when this file is\n"
       << "stale). " << registry().size() << " mutations in four families. *exact*: the mutant equals the original element by\n"
       << "element on our interpreter; *approximate*: it agrees at the GraphNet level given (per dtype), and only where the graph\n"
       << "is well conditioned on the profiled inputs; an approximate mutation is exact on integer data.\n";
    for (const auto f : all_families) {
        os << "\n## " << to_string(f) << "\n\n| mutation | class | level | rewrites | applies to |\n| --- | --- | --- | --- | --- |\n";
        for (const auto& m : registry()) {
            if (m.family != f) continue;
            os << "| `" << m.name << "` | " << to_string(m.numeric) << " | "
               << (m.numeric == numeric_class::approximate ? std::to_string(static_cast<int>(m.level)) : std::string("-")) << " | `"
               << m.rewrites << "` | " << m.precondition << " |\n";
        }
    }
    return os.str();
}

}  // namespace tensoracle::mutate
