// tensoracle: one valid op instance, solved from the op's own spec.
//
// The generator decides the structure (which optional inputs, dtypes by
// type matching, ranks, which attributes are given and how long their
// lists are), builds a *symbolic* context in which dims, int attributes and
// the values of shape-like inputs are unknowns, collects the op's
// constraints plus the equalities that bind it to values already in the
// graph, and solves (gen/solver.hpp) with NNSmith's attribute binning. The
// spec's constraints are the only statement of validity; hints
// (spec/hints.hpp) add only value distributions and non-integer attributes.
//
// Structure the solver infers:
// - a small integer input whose values the spec reads (`c.values(i)`, e.g.
//   Reshape's shape) becomes a constant whose values are unknowns: one of
//   int32/int64 and rank at most 1 is presumed so before the spec is asked
//   (and goes back if the spec never reads it), any other is found when the
//   spec asks;
// - list lengths: a list attribute's length (spec::list_length) and a
//   shape-like input's length (its dim 0) are unknowns too; the generator
//   guesses, propagates the length rules, and re-guesses from the implied
//   domain.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tensoracle/core/rng.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/gen/config.hpp"
#include "tensoracle/gen/solver.hpp"
#include "tensoracle/io/onnx_known_issues.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::gen {

/// A value already in the graph: its dtype and concrete shape.
struct typed_shape {
    dtype type = dtype::f32;
    shape_type shape;
    friend bool operator==(const typed_shape&, const typed_shape&) = default;
};

/// What an insertion asks of an op instance.
struct instance_request {
    const spec::op_entry* op = nullptr;
    /// Forward insertion: input slot -> the existing value it consumes.
    std::map<std::size_t, typed_shape> bound_inputs;
    /// Backward insertion: output 0 must be exactly this.
    std::optional<typed_shape> bound_output;
    /// Only output 0 may be named (single-input single-output graphs).
    bool single_output = false;
};

enum class input_role : std::uint8_t {
    absent,       ///< an optional input left out
    bound,        ///< an existing value of the graph
    placeholder,  ///< a new value of solved shape (a graph input, weight, or a later backward insertion)
    constant,     ///< data fixed here (shape-like values, hinted data): an initializer
};

struct instance_input {
    input_role role = input_role::absent;
    dtype type = dtype::f32;
    shape_type shape;
    std::optional<tensor> data;  ///< constants only
    std::optional<std::pair<double, double>> range;  ///< placeholders: the hint's initial data range
};

/// A solved op instance: what a node needs, and what it produces.
struct op_instance {
    const spec::op_entry* op = nullptr;
    std::vector<instance_input> inputs;
    spec::attribute_map attributes;  ///< as the node carries them (defaults not filled in)
    std::vector<dtype> output_dtypes;
    std::vector<shape_type> output_shapes;
    std::size_t output_count = 1;  ///< outputs the node names (Split: its __num_outputs)
};

/// Why instances were rejected, counted by reason.
struct rejection_counts {
    std::map<std::string, std::size_t> by_reason;
    /// When set, `last` holds the latest reason added (generation_times reads
    /// it to charge a refused instance's time to its reason; off, nothing is copied).
    bool keep_last = false;
    std::string last;
    void add(const std::string& reason) {
        ++by_reason[reason];
        if (keep_last) last = reason;
    }
    void merge(const rejection_counts& o) {
        for (const auto& [k, v] : o.by_reason) by_reason[k] += v;
    }
    [[nodiscard]] std::size_t total() const {
        std::size_t n = 0;
        for (const auto& kv : by_reason) n += kv.second;
        return n;
    }
};

/// The attribute the interpreter fills with the node's output count.
inline constexpr std::string_view output_count_attribute = "__num_outputs";

/// What an unknown int attribute holds in the map a symbolic context carries:
/// far outside any valid value, so a spec that reads it as a number instead
/// of through `c.attr()` fails loudly (an axis out of range) rather than
/// silently using a made-up value.
inline constexpr std::int64_t unknown_placeholder = -(std::int64_t{1} << 40);

/// Choice points the solver may spend on a system narrowed to bins before
/// fewer bins are tried.
inline constexpr std::size_t binned_solver_nodes = 256;
/// Choice points for the system without bins, the last try: nearly every
/// solved system needs at most 1,024 (10,437 of 10,446 over 1,000 generated
/// 10-node graphs), while one given up on (Reshape's element count, mostly)
/// would spend all of solver_options' default 4,000, most of all search work.
inline constexpr std::size_t unbinned_solver_nodes = 1024;

namespace detail {

/// NNSmith's Algorithm 2: a random bin of k exponential bins [2^(i-1), 2^i)
/// (the last one open), plus a zero bin and mirrored negative bins where the
/// domain allows, then a random sub-range of that bin.
inline interval pick_bin(interval dom, int k, rng& g) {
    // (signed bin index, range); reused: drawn for every unknown of every instance
    thread_local std::vector<std::pair<int, interval>> bins;
    bins.clear();
    const auto p2 = [](int i) { return std::int64_t{1} << i; };
    if (dom.contains(0)) bins.push_back({0, {0, 0}});
    for (int i = 1; i <= k; ++i) {
        const interval pos{p2(i - 1), i < k ? p2(i) - 1 : detail::big};
        const interval a = detail::meet(pos, dom);
        if (!a.empty()) bins.push_back({i, a});
        const interval neg{i < k ? -(p2(i) - 1) : -detail::big, -p2(i - 1)};
        const interval b = detail::meet(neg, dom);
        if (!b.empty()) bins.push_back({-i, b});
    }
    if (bins.empty()) return dom;
    const auto [i, range] = bins[static_cast<std::size_t>(g.below(bins.size()))];
    if (i == 0 || std::abs(i) == k) return range;
    // Two points b < t uniformly in (|i|-1, |i|): the sub-range [2^b, 2^t].
    double b = g.uniform(std::abs(i) - 1.0, static_cast<double>(std::abs(i)));
    double t = g.uniform(std::abs(i) - 1.0, static_cast<double>(std::abs(i)));
    if (b > t) std::swap(b, t);
    auto lo = static_cast<std::int64_t>(std::floor(std::exp2(b))), hi = static_cast<std::int64_t>(std::floor(std::exp2(t)));
    interval sub = i > 0 ? interval{lo, hi} : interval{-hi, -lo};
    sub = detail::meet(sub, range);
    return sub.empty() ? range : sub;
}

}  // namespace detail

/// The generator's view of one op: hints and attribute reflection, computed once.
struct op_profile {
    const spec::op_entry* op = nullptr;
    spec::hints hints;
    std::vector<spec::attribute_info> attributes;
    spec::attribute_map defaults;  ///< normalize_attributes({}) where it works
    bool vulnerable = false;       ///< has a numeric domain
    /// domain() needs required attributes (Cast's `to`): whether it has rules
    /// is known per instance only, so the generator checks every instance.
    bool domain_per_instance = false;
    bool variadic = false;

    explicit op_profile(const spec::op_entry& e) : op(&e), hints(e.hints()), attributes(e.attribute_infos()) {
        variadic = !e.inputs.empty() && e.inputs.back().variadic;
        try {
            defaults = e.normalize_attributes({});
        } catch (const error&) {
            defaults = {};  // required attributes: filled in per instance
        }
        try {
            vulnerable = !e.domain(defaults).empty();
        } catch (const error&) {
            vulnerable = false;
            domain_per_instance = true;
        }
    }
};

/// Optional hooks into generation: another solver (the Z3 backend,
/// gen/z3_backend.hpp), and an observer of every constraint system solved
/// (the cross-check test draws its systems from it).
struct instance_hooks {
    std::function<solve_result(const constraint_system&, rng&)> solver;
    std::function<void(const constraint_system&)> observe;
};

namespace detail {

/// How a step of a solving round ended: go on (from a whole round: the
/// instance is in instance_draft::result), start the next round (the
/// structure changed), or refuse the instance (the reason counted).
enum class round_step : std::uint8_t { go_on, next_round, rejected };

/// How a call into the spec with the symbolic context ended: it may ask for
/// an input the generator left unknown (resolved: the next round) or reject
/// the structure (the reason in instance_draft::rejection).
enum class asked : std::uint8_t { ok, next_round, refused };

/// A guessed list length: the symbol propagation infers it as, and the guess.
struct length_link {
    std::string symbol;
    std::size_t* guess;
};

/// One round's constraint system, its compiled form, and what its
/// propagations have settled so far.
struct round_system {
    constraint_system sys;
    std::vector<length_link> links;
    compiled_system& compiled;
    std::string conflict;
    /// Flags of constraints true on the whole (shrinking) box, kept through
    /// every propagation and handed to the search (see propagated_box).
    std::vector<char> entailed;
    /// Later propagations start from the last fixpoint, with only the
    /// constraints added since `settled` queued.
    std::vector<interval> settled_domains;
    std::size_t settled = 0;

    round_system(constraint_system system, std::vector<length_link> length_links, compiled_system& storage)
        : sys(std::move(system)), links(std::move(length_links)), compiled(storage) {}
};

/// A solved system's values by name, through the compiled system's table (a
/// map of every variable's name would cost a few percent of generation).
struct solved_values {
    const round_system& x;
    const solve_result& solved;

    [[nodiscard]] std::int64_t of(std::string_view symbol, std::size_t hash) const {
        const auto v = x.compiled.variable_index(symbol, hash, x.sys.variables);
        if (!v) throw error("tensoracle::gen::generate_instance", "symbol '" + std::string(symbol) + "' has no value");
        return solved.values[*v];
    }
    [[nodiscard]] std::int64_t named(const std::string& symbol) const {
        return of(symbol, std::hash<std::string_view>{}(symbol));
    }
};

/// One op instance being generated (generate_instance): the request, and
/// what the stages have decided so far. The stages draw from `g` in the order
/// generate_instance calls them; every generated graph depends on that order.
struct instance_draft {
    /// Backward insertion's nudges of a length towards output 0's rank (nudge_rank).
    struct rank_nudge {
        std::int64_t len, have;  // the length before the first nudge, and the rank it gave
        int tries;               // 1: nudged as adding dims; 2: also as removing them
    };
    static constexpr int max_rounds = 16;

    const op_profile& p;
    const spec::op_entry& op;
    const instance_request& req;
    const config& cfg;
    rng& g;
    rejection_counts& rejected;
    const instance_hooks& hooks;
    const std::string name;
    const spec::hints& hints;
    const std::size_t slots;

    std::vector<instance_input> in;
    // Attributes.
    spec::attribute_map given;                      // what the node will carry
    std::vector<std::string> unknown_attrs;         // int / ints attributes the solver decides
    std::map<std::string, std::size_t> list_guess;  // unknown ints attribute -> guessed length
    std::map<std::string, interval> attr_domain;
    std::size_t output_count = 1;
    std::vector<std::size_t> guessed_lengths;  // every list length guessed (guess_length)
    // Structure the rounds infer.
    std::set<std::size_t> values_inputs;            // shape-like inputs (values are unknowns)
    std::map<std::size_t, std::size_t> values_len;  // their guessed lengths
    std::map<std::size_t, rank_nudge> rank_nudges;
    std::map<std::size_t, tensor> before;  // hinted data needed before solving
    std::set<std::size_t> fixed_dims;      // placeholders whose dims were fixed early
    std::vector<std::pair<std::size_t, instance_input>> presumed;  // input presumed shape-like, as it was
    std::vector<std::vector<std::size_t>> failed_lengths;          // guesses that propagation refuted
    // What the spec said this round.
    std::string rejection;
    std::vector<spec::constraint> cs;
    spec::shape_exprs shapes;
    std::vector<dtype> out_dtypes;
    std::optional<op_instance> result;

    instance_draft(const op_profile& profile, const instance_request& request, const config& c, rng& r,
                   rejection_counts& counts, const instance_hooks& h)
        : p(profile),
          op(*profile.op),
          req(request),
          cfg(c),
          g(r),
          rejected(counts),
          hooks(h),
          name(op.op_type),
          hints(profile.hints),
          slots(op.inputs.size()) {}

    // Counts `why` against this op; false, for the stage to return.
    bool reject(const std::string& why) {
        rejected.add(name + ": " + why);
        return false;
    }
    round_step refuse(const std::string& why) {
        reject(why);
        return round_step::rejected;
    }
    [[nodiscard]] const spec::value_spec& slot(std::size_t i) const { return op.inputs[std::min(i, slots - 1)]; }

    // --- structure: input count and presence ---------------------------------

    // How many inputs (a variadic op draws its count) and which optional ones
    // are present; bound inputs take the graph's values.
    bool choose_inputs() {
        std::size_t count = slots;
        std::size_t max_bound = 0;
        for (const auto& kv : req.bound_inputs) max_bound = std::max(max_bound, kv.first + 1);
        if (p.variadic) {
            const std::size_t fixed = slots - 1;
            const auto extra = static_cast<std::size_t>(
                g.integer(static_cast<std::int64_t>(hints.variadic_min), static_cast<std::int64_t>(hints.variadic_max)));
            count = std::max(fixed + extra, max_bound);
        } else if (max_bound > slots) {
            return reject("bound input beyond the op's inputs");
        }
        in.resize(count);
        for (std::size_t i = 0; i < count; ++i) {
            const auto& s = slot(i);
            const auto* ih = hints.input(i);
            if (ih != nullptr && ih->range) in[i].range = ih->range;
            if (req.bound_inputs.count(i) != 0) {
                in[i].role = input_role::bound;
                in[i].type = req.bound_inputs.at(i).type;
                in[i].shape = req.bound_inputs.at(i).shape;
                // An empty value where the hints ask for a non-empty list (nonempty_values):
                // refused before any solving. Lists drawn here are never empty (guess_length,
                // and the rank nudge stops at 1 for such inputs).
                const auto& sh = in[i].shape;
                if (ih != nullptr && ih->nonempty && std::find(sh.begin(), sh.end(), std::size_t{0}) != sh.end()) {
                    return reject("bound input " + std::to_string(i) + " is an empty list (its meaning is left open)");
                }
                continue;
            }
            const bool optional = s.optional && !s.variadic;
            const double pr = ih != nullptr && ih->present ? *ih->present : 0.5;
            in[i].role = (!optional || g.bernoulli(pr)) ? input_role::placeholder : input_role::absent;
        }
        // ONNX drops trailing absent inputs; keep the list tidy.
        while (!in.empty() && in.back().role == input_role::absent) in.pop_back();
        return true;
    }

    // --- dtypes (type matching) and ranks ------------------------------------

    // Every placeholder's dtype (type variables bind across inputs, backward
    // insertion's candidates narrow them) and rank, then the target's support.
    bool choose_dtypes_and_ranks() {
        std::vector<spec::input_candidate> cands;
        if (req.bound_output) {
            cands = op.input_candidates(req.bound_output->type, req.bound_output->shape.size());
            if (cands.empty()) return reject("cannot produce the wanted output type");
        }
        std::map<std::string_view, dtype> type_var;
        if (!bind_type_variables(type_var)) return false;
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].role != input_role::placeholder) continue;
            const auto& s = slot(i);
            std::vector<dtype> choices;
            std::vector<std::size_t> ranks;
            if (!cands.empty()) {
                const auto& c = cands[std::min(i, cands.size() - 1)];
                for (const auto d : c.dtypes) {
                    if (s.types.contains(d)) choices.push_back(d);  // candidates never widen the slot's types
                }
                ranks = c.ranks;
            } else {
                choices = s.types.members();
            }
            if (!choose_dtype(i, choices, type_var)) return false;
            if (const auto* ih = hints.input(i); ih != nullptr && ih->integer_range && info(in[i].type).is_integer) {
                in[i].range = ih->integer_range;
            }
            if (!choose_rank(i, ranks)) return false;
        }
        if (!in.empty() && in[0].role != input_role::absent) {
            const auto it = cfg.support.find(name);
            if (it != cfg.support.end() && it->second.count(in[0].type) == 0) return reject("dtype not supported by the target");
        }
        return true;
    }

    // The type variables the bound inputs fix: they must agree, and fit their slots.
    bool bind_type_variables(std::map<std::string_view, dtype>& type_var) {
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].role == input_role::bound) {
                const auto [it, fresh] = type_var.emplace(slot(i).type_var, in[i].type);
                if (!fresh && it->second != in[i].type) return reject("bound inputs disagree on a type variable");
                if (!slot(i).types.contains(in[i].type)) return reject("bound input dtype not accepted");
            }
        }
        return true;
    }

    // Placeholder i's dtype: its type variable's, else a configured one of
    // `choices` (any for a shape-like slot, whose dtype the target need not run).
    bool choose_dtype(std::size_t i, const std::vector<dtype>& choices, std::map<std::string_view, dtype>& type_var) {
        const auto& s = slot(i);
        const auto tv = type_var.find(s.type_var);
        if (tv != type_var.end()) {
            if (std::find(choices.begin(), choices.end(), tv->second) == choices.end()) {
                return reject("no dtype fits the type variable");
            }
            in[i].type = tv->second;
            return true;
        }
        auto allowed = [&](dtype d) { return std::find(cfg.dtypes.begin(), cfg.dtypes.end(), d) != cfg.dtypes.end(); };
        std::vector<dtype> ok;
        const bool shape_like = (s.types & spec::types::floating).empty() && (s.types & spec::types::boolean).empty() &&
                                !(s.types & spec::types::int64).empty() && s.ranks.max <= 1;
        for (const auto d : choices) {
            if (allowed(d) || shape_like) ok.push_back(d);
        }
        if (ok.empty()) {
            return reject("input " + std::to_string(i) + " ('" + std::string(s.name) + "') takes " + s.types.to_string() +
                          ", none of them configured");
        }
        in[i].type = ok[static_cast<std::size_t>(g.below(ok.size()))];
        type_var.emplace(s.type_var, in[i].type);
        return true;
    }

    // Placeholder i's rank: one of backward inference's candidates `ranks`, or
    // of the slot's, often the first bound input's (or input 0's) rank.
    bool choose_rank(std::size_t i, const std::vector<std::size_t>& ranks) {
        const auto& s = slot(i);
        std::vector<std::size_t> ok_ranks;
        if (!ranks.empty()) {
            for (const auto r : ranks) {
                if (s.ranks.contains(r) && r <= cfg.max_rank) ok_ranks.push_back(r);
            }
        } else {
            for (std::size_t r = s.ranks.min; r <= std::min(s.ranks.max, cfg.max_rank); ++r) ok_ranks.push_back(r);
        }
        if (ok_ranks.empty()) {
            return reject("input " + std::to_string(i) + " ('" + std::string(s.name) + "') needs rank " +
                          std::to_string(s.ranks.min) + ".." + std::to_string(s.ranks.max) + ", max_rank is " +
                          std::to_string(cfg.max_rank));
        }
        std::size_t rank = ok_ranks[static_cast<std::size_t>(g.below(ok_ranks.size()))];
        if (ranks.empty() && !req.bound_inputs.empty() && g.bernoulli(0.5)) {
            const std::size_t near = req.bound_inputs.begin()->second.shape.size();
            if (std::find(ok_ranks.begin(), ok_ranks.end(), near) != ok_ranks.end()) rank = near;
        } else if (ranks.empty() && req.bound_inputs.empty() && i > 0 && in[0].role == input_role::placeholder &&
                   g.bernoulli(0.5)) {
            // Standalone: operands mostly share input 0's rank (ConvTranspose's W, Add's B).
            const std::size_t near = in[0].shape.size();
            if (std::find(ok_ranks.begin(), ok_ranks.end(), near) != ok_ranks.end()) rank = near;
        }
        in[i].shape.assign(rank, 0);  // dims solved in the rounds
        return true;
    }

    // --- attributes ---------------------------------------------------------

    // Which attributes the node carries and how each is decided: drawn from
    // its hint, or left to the solver as unknowns (lists with a guessed length).
    bool choose_attributes() {
        for (const auto& a : p.attributes) {
            if (!choose_attribute(a)) return false;
        }
        return true;
    }

    // A first guess at a list length (a list attribute, a shape-like input).
    // Lists of one op mostly share a length (Slice's starts/ends/axes/steps,
    // a pool's kernel_shape/strides) or match input 0's rank: guess those
    // often; propagation corrects the rest.
    std::size_t guess_length(std::size_t max_len) {
        const std::size_t hi = std::max<std::size_t>(max_len, 1);
        std::size_t len = static_cast<std::size_t>(g.integer(1, static_cast<std::int64_t>(hi)));
        const double u = g.uniform(0.0, 1.0);
        if (!guessed_lengths.empty() && u < 0.6) {
            len = guessed_lengths[g.below(guessed_lengths.size())];
        } else if (!in.empty() && in[0].role != input_role::absent && u < 0.8 && !in[0].shape.empty()) {
            len = std::min(in[0].shape.size(), hi);
        }
        guessed_lengths.push_back(len);
        return len;
    }

    // Attribute `a`: whether it is given, and its value or its unknowns.
    bool choose_attribute(const spec::attribute_info& a) {
        const auto* h = hints.attribute(a.name);
        if (a.name == output_count_attribute) {
            if (h != nullptr && h->how == spec::attribute_hint::kind::choice && !h->choices.empty()) {
                output_count = static_cast<std::size_t>(std::get<std::int64_t>(h->choices[g.below(h->choices.size())]));
            } else {
                output_count = static_cast<std::size_t>(g.integer(1, 4));
            }
            if (req.single_output) output_count = 1;
            return true;
        }
        if (h != nullptr && h->how == spec::attribute_hint::kind::omit) return true;
        const double present = h != nullptr ? h->present : (a.kind == spec::attribute_kind::ints ? 0.6 : 0.7);
        if (!a.required && !g.bernoulli(present)) return true;
        using K = spec::attribute_hint::kind;
        const K how = h != nullptr ? h->how : K::solve;
        switch (how) {
            case K::flag: given[a.name] = std::int64_t{g.bernoulli(0.5) ? 1 : 0}; break;
            case K::choice: given[a.name] = h->choices[g.below(h->choices.size())]; break;
            case K::real: given[a.name] = h->real_lo < h->real_hi ? g.uniform(h->real_lo, h->real_hi) : h->real_lo; break;
            case K::dtype: {
                // Only dtypes the first output takes (EyeLike has no bfloat16 in ONNX).
                std::vector<dtype> fitting;
                for (const dtype c : cfg.dtypes) {
                    if (op.outputs.empty() || op.outputs[0].types.contains(c)) fitting.push_back(c);
                }
                if (fitting.empty()) return reject("no configured dtype fits the '" + a.name + "' attribute");
                dtype d = fitting[g.below(fitting.size())];
                if (req.bound_output) d = req.bound_output->type;
                given[a.name] = std::int64_t{onnx_type(d)};
                break;
            }
            case K::tensor: {
                std::optional<dtype> od;
                std::optional<shape_type> os;
                if (req.bound_output) {
                    od = req.bound_output->type;
                    os = req.bound_output->shape;
                }
                given[a.name] = h->make_tensor(g, od, os);
                break;
            }
            case K::omit: break;
            case K::solve: {
                if (a.kind == spec::attribute_kind::int_) {
                    given[a.name] = unknown_placeholder;
                } else if (a.kind == spec::attribute_kind::ints) {
                    const auto len = guess_length(cfg.max_rank);
                    list_guess[a.name] = len;
                    given[a.name] = std::vector<std::int64_t>(len, unknown_placeholder);
                } else if (a.required) {
                    return reject("required attribute '" + a.name + "' needs a hint");
                } else {
                    return true;  // float/string/tensor attributes without hints keep their defaults
                }
                unknown_attrs.push_back(a.name);
                attr_domain[a.name] = h != nullptr ? interval{h->lo, h->hi} : interval{-cfg.max_dim, cfg.max_dim};
                break;
            }
        }
        return true;
    }

    // --- solve, re-guessing structure from what propagation implies ----------

    // A shape-like input: a constant whose values are unknowns.
    void make_shape_like(std::size_t i) {
        const auto& s = slot(i);
        values_inputs.insert(i);
        in[i].role = input_role::constant;
        if (in[i].type != dtype::i64 && in[i].type != dtype::i32) in[i].type = dtype::i64;
        const bool scalar = s.ranks.max == 0 || (s.ranks.min == 0 && g.bernoulli(0.5));
        in[i].shape.assign(scalar ? 0 : 1, 0);
        values_len[i] = scalar ? 1 : guess_length(cfg.max_rank);
    }
    // A small integer slot: no floating or bool dtype, rank at most 1.
    [[nodiscard]] bool small_int_slot(std::size_t i) const {
        const auto& s = slot(i);
        return (s.types & (spec::types::floating | spec::types::boolean)).empty() && s.ranks.max <= 1;
    }

    // Small integer inputs are shape-like in every registry op: made so
    // before the spec asks, as asking costs a round (and an exception) per
    // input. Checked once the spec has had its say: one it did not read
    // goes back to what it was (a round lost, no more).
    void presume_shape_like_inputs() {
        for (std::size_t i = 0; i < in.size(); ++i) {
            const auto* ih = hints.input(i);
            if (in[i].role != input_role::placeholder || !small_int_slot(i) ||
                (ih != nullptr && (ih->before_solving || ih->after_solving))) {
                continue;
            }
            presumed.emplace_back(i, in[i]);
            make_shape_like(i);
        }
    }

    // Every length guess of a structure (shape-like inputs by index, then lists).
    [[nodiscard]] std::vector<std::size_t> length_guesses() const {
        std::vector<std::size_t> key;
        for (const auto& [i, len] : values_len) {
            key.push_back(i);
            key.push_back(len);
        }
        key.push_back(static_cast<std::size_t>(-1));
        for (const auto& kv : list_guess) key.push_back(kv.second);
        return key;
    }

    // The unknown list attributes as the spec sees them: their guessed lengths of placeholders.
    void guessed_list_attributes() {
        for (auto& [key, len] : list_guess) given[key] = std::vector<std::int64_t>(len, unknown_placeholder);
    }

    // One round: the spec asked with the structure guessed so far, then the
    // system built and solved; what the spec or propagation changes about the
    // structure (a shape-like input, a list length) starts the next round.
    round_step solve_round(int round) {
        rejection.clear();
        cs.clear();
        shapes.clear();
        out_dtypes.clear();
        // The attribute map the spec sees: defaults filled in, unknowns as placeholders.
        spec::attribute_map full;
        try {
            full = op.normalize_attributes(given);
        } catch (const error& e) {
            return refuse(std::string("attributes rejected: ") + e.what());
        }
        if (has_output_count_attribute()) full[std::string(output_count_attribute)] = static_cast<std::int64_t>(output_count);
        const auto ctx = spec::context::symbolic(op.op_type, symbolic_inputs(), std::move(full), unknown_attrs);
        if (const auto a = settle(ask(ctx, [&] { cs = op.constraints(ctx); })); a != round_step::go_on) return a;
        // A rule that already folded to false: this structure is invalid (and the
        // spec's shape inference may assume it holds, so do not call it).
        for (const auto& k : cs) {
            if (k.condition.is_constant() && k.condition.constant_value() == 0) return refuse("structure: " + k.reason);
        }
        // Shapes and dtypes: they read the same symbolic context as the constraints
        // (propagation narrows domains, not the context). Asked once per round,
        // here when the structure has no guessed list length (nothing for
        // propagation to correct first), else once propagation has settled the
        // lengths (shape inference may index a list by its length: Pad's pads).
        // Asked before compiling and propagating, a structure whose output rank
        // misses the placeholder's is refused without that work (most refused
        // calls of a median graph: Gather, MatMul, Reduce ranks).
        const bool guessed_lists =
            !list_guess.empty() ||
            std::any_of(values_len.begin(), values_len.end(), [&](const auto& kv) { return !in[kv.first].shape.empty(); });
        if (!guessed_lists) {
            if (const auto a = settle(ask_shapes(ctx)); a != round_step::go_on) return a;
        }
        try {
            return solve_system(ctx, round, guessed_lists);
        } catch (const error& e) {
            return refuse(std::string("system: ") + e.what());
        }
    }

    [[nodiscard]] bool has_output_count_attribute() const {
        return std::find_if(p.attributes.begin(), p.attributes.end(), [](const spec::attribute_info& a) {
                   return a.name == output_count_attribute;
               }) != p.attributes.end();
    }

    // The inputs as the symbolic context shows them: known dims and data as
    // constants, the rest as symbols (dims, a shape-like input's values).
    std::vector<spec::symbolic_input> symbolic_inputs() {
        std::vector<spec::symbolic_input> sym(in.size());
        for (std::size_t i = 0; i < in.size(); ++i) {
            auto& s = sym[i];
            if (in[i].role == input_role::absent) continue;
            s.present = true;
            s.type = in[i].type;
            if (before.count(i) != 0) {
                s.data = &before.at(i);
                for (const auto d : before.at(i).shape()) s.dims.emplace_back(static_cast<std::int64_t>(d));
            } else if (values_inputs.count(i) != 0) {
                const std::size_t len = values_len[i];
                if (!in[i].shape.empty()) s.dims.push_back(spec::context::dim_symbol(i, 0));
                std::vector<spec::expr> v;
                for (std::size_t k = 0; k < len; ++k) v.push_back(spec::context::value_symbol(i, k));
                s.values = std::move(v);
            } else if (in[i].role == input_role::bound || fixed_dims.count(i) != 0) {
                for (const auto d : in[i].shape) s.dims.emplace_back(static_cast<std::int64_t>(d));
            } else {
                for (std::size_t a = 0; a < in[i].shape.size(); ++a) s.dims.push_back(spec::context::dim_symbol(i, a));
            }
        }
        return sym;
    }

    // What the spec asked for that the generator had left unknown: returns
    // the rejection reason, or "" when the structure changed (next round).
    std::string resolve(const spec::context& ctx, const spec::unknown_input_error& e) {
        const std::size_t i = e.input();
        if (i >= in.size() || in[i].role == input_role::absent) return "spec reads an absent input";
        const auto* ih = hints.input(i);
        const bool has_hint = ih != nullptr && ih->before_solving && before.count(i) == 0;
        using need = spec::unknown_input_error::need;
        if (e.needed() == need::values || (e.needed() == need::shape && !has_hint && small_int_slot(i))) {
            if (in[i].role == input_role::bound) return "a shape-like input cannot consume a graph value";
            if (values_inputs.count(i) != 0) return "shape-like input not resolvable";
            make_shape_like(i);
            return "";
        }
        if (e.needed() == need::shape && !has_hint && in[i].role == input_role::placeholder && fixed_dims.count(i) == 0) {
            // A rule on float data (scales) needs numbers: fix this input's dims now.
            std::int64_t budget = static_cast<std::int64_t>(cfg.max_elements);
            for (auto& d : in[i].shape) {
                const interval dom{cfg.min_dim, std::max<std::int64_t>(cfg.min_dim, std::min(cfg.max_dim, budget))};
                const interval bin = cfg.binning ? detail::pick_bin(dom, cfg.bins, g) : dom;
                const std::int64_t v = bin.lo + static_cast<std::int64_t>(g.below(bin.width() + 1));
                d = static_cast<std::size_t>(v);
                budget /= std::max<std::int64_t>(v, 1);
            }
            fixed_dims.insert(i);
            return "";
        }
        if (!has_hint) return "spec needs the data of input " + std::to_string(i) + " (no before_solving hint)";
        if (in[i].role == input_role::bound) return "hinted data input cannot consume a graph value";
        try {
            before.emplace(i, ih->before_solving(g, ctx));
        } catch (const error& e2) {
            return std::string("before_solving hint failed: ") + e2.what();
        }
        in[i].role = input_role::constant;
        in[i].type = before.at(i).element_dtype();
        in[i].shape = before.at(i).shape();
        return "";
    }

    // Calls into the spec with the symbolic context: it may ask for an input
    // the generator left unknown (resolved: the next round) or reject the structure.
    template <class Call>
    asked ask(const spec::context& ctx, Call&& call) {
        try {
            call();
            return asked::ok;
        } catch (const spec::unknown_input_error& e) {
            rejection = resolve(ctx, e);
            return rejection.empty() ? asked::next_round : asked::refused;
        } catch (const error& e) {
            rejection = std::string("structure: ") + e.what();
            return asked::refused;
        }
    }

    // A call into the spec as a step of the round: refused counts `rejection`.
    round_step settle(asked a) {
        if (a == asked::refused) return refuse(rejection);
        return a == asked::next_round ? round_step::next_round : round_step::go_on;
    }

    // The output shapes and dtypes the spec infers, and the output count:
    // refused when they cannot be what the request wants.
    asked ask_shapes(const spec::context& ctx) {
        if (const auto a = ask(ctx, [&] {
                shapes = op.output_shapes(ctx);
                out_dtypes = op.output_dtypes(ctx);
            });
            a != asked::ok) {
            return a;
        }
        if (shapes.empty()) {
            rejection = "no outputs";
            return asked::refused;
        }
        if (req.single_output && shapes.size() > 1) {
            for (std::size_t o = 1; o < op.outputs.size() && o < shapes.size(); ++o) {
                if (!op.outputs[o].optional && !op.outputs[o].variadic) {
                    rejection = "a required second output in single-output mode";
                    return asked::refused;
                }
            }
        }
        if (output_count > shapes.size()) output_count = shapes.size();
        if (!std::any_of(p.attributes.begin(), p.attributes.end(),
                         [](const spec::attribute_info& a) { return a.name == output_count_attribute; })) {
            output_count = req.single_output ? 1 : shapes.size();
        }
        if (req.bound_output && shapes[0].size() != req.bound_output->shape.size()) return nudge_rank();
        return asked::ok;
    }

    // Backward insertion: output 0's rank must match; nudge one length guess.
    // First as if each listed value adds an output dim (Unsqueeze, Reshape);
    // if that missed, the other way from where it started (Squeeze, a
    // Reduce without keepdims: each listed axis removes one); if the first
    // nudge left the rank where it was, or both missed, the length does
    // not set the rank (keepdims): give up.
    // Nudging one way only walked a Squeeze's axes up to the length limit,
    // a round (a whole solve) per step.
    asked nudge_rank() {
        const auto want = static_cast<std::int64_t>(req.bound_output->shape.size());
        const auto have = static_cast<std::int64_t>(shapes[0].size());
        const std::int64_t longest = 2 * static_cast<std::int64_t>(cfg.max_rank) + 2;
        bool nudged = false;
        for (auto& [i, len] : values_len) {
            if (in[i].shape.empty()) continue;
            rank_nudge& r = rank_nudges.try_emplace(i, rank_nudge{static_cast<std::int64_t>(len), have, 0}).first->second;
            // The first nudge left the rank where it was: this length does not set
            // it (a Reduce with keepdims). Not so for an empty list, which means
            // something else (Squeeze and Reduce without axes), or rank 0, where
            // a list longer than the input's rank leaves it (Squeeze).
            if (r.tries == 1 && have == r.have && have != 0 && len != 0 && static_cast<std::int64_t>(len) != r.len) {
                r.tries = 2;
            }
            const std::int64_t shortest = hints.input(i) != nullptr && hints.input(i)->nonempty ? 1 : 0;
            while (r.tries < 2 && !nudged) {  // a way out of range: the other one at once
                const std::int64_t next = ++r.tries == 1 ? r.len + (want - r.have) : r.len - (want - r.have);
                if (next >= shortest && next <= longest && next != static_cast<std::int64_t>(len)) {
                    len = static_cast<std::size_t>(next);
                    nudged = true;
                }
            }
            if (nudged) break;
        }
        if (!nudged) {
            rejection = "output rank cannot match";
            return asked::refused;
        }
        return asked::next_round;
    }

    // The round's system, propagated and solved, with the structure's list
    // lengths checked against what propagation implies; the instance from its solution.
    round_step solve_system(const spec::context& ctx, int round, bool guessed_lists) {
        constraint_system sys = build_system();
        std::vector<length_link> links = length_links();
        // Compiled once; each later propagation compiles only the constraints added since.
        // The storage is the thread's, reused from the instance tried before.
        detail::reused_compiled_system lease;
        round_system x(std::move(sys), std::move(links), lease.get());
        x.compiled.extend(x.sys);
        // Length inference: propagate the length rules without our guesses.
        const auto implied = propagate_added(x.sys, x.compiled, domains_of(x.sys), 0, &x.conflict, {}, &x.entailed);
        if (!implied) return redraw_or_refuse(x, round);
        if (const auto st = correct_lengths(x, *implied); st != round_step::go_on) return st;
        x.settled_domains = *implied;
        x.settled = x.sys.constraints.size();
        if (const auto st = add_guessed_lengths(x, round); st != round_step::go_on) return st;
        if (guessed_lists) {  // not asked in solve_round
            if (const auto a = settle(ask_shapes(ctx)); a != round_step::go_on) return a;
        }
        if (const auto st = add_output_bounds(ctx, x); st != round_step::go_on) return st;
        // The spec has had its say: inputs presumed shape-like that it never read go back.
        if (restore_unread_presumed(ctx)) return round_step::next_round;
        if (const auto st = add_input_bounds(x); st != round_step::go_on) return st;
        solve_result solved;
        if (const auto st = solve_binned(x, solved); st != round_step::go_on) return st;
        return materialize(x, solved);
    }

    // The system: every symbol the spec used is one of our unknowns, and the
    // spec's constraints.
    constraint_system build_system() {
        constraint_system sys;
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].role == input_role::placeholder && fixed_dims.count(i) == 0) {
                for (std::size_t a = 0; a < in[i].shape.size(); ++a) sys.add_variable(spec::context::dim_name(i, a), cfg.min_dim, cfg.max_dim);
            }
            if (values_inputs.count(i) != 0) {
                if (!in[i].shape.empty()) sys.add_variable(spec::context::dim_name(i, 0), 0, 2 * static_cast<std::int64_t>(cfg.max_rank) + 2);
                for (std::size_t k = 0; k < values_len[i]; ++k) sys.add_variable(spec::context::value_name(i, k), -cfg.max_dim, cfg.max_dim);
            }
        }
        for (const auto& key : unknown_attrs) {
            const interval d = attr_domain[key];
            if (const auto* v = std::get_if<std::vector<std::int64_t>>(&given[key])) {
                sys.add_variable(spec::context::attr_length_name(key), 1, 2 * static_cast<std::int64_t>(cfg.max_rank) + 2);
                for (std::size_t k = 0; k < v->size(); ++k) sys.add_variable(spec::context::attr_element_name(key, k), d.lo, d.hi);
            } else {
                sys.add_variable(spec::context::attr_name(key), d.lo, d.hi);
            }
        }
        sys.constraints = std::move(cs);
        // Room for what is added later (lengths, output dims and sizes, input sizes, the
        // placeholder's shape): without it the vector grows two or three times per instance.
        sys.constraints.reserve(sys.constraints.size() + 4 * cfg.max_rank + 2 * in.size() + 8);
        return sys;
    }

    // The guessed list lengths: shape-like inputs' (by index), then list attributes'.
    std::vector<length_link> length_links() {
        std::vector<length_link> links;
        for (auto& [i, len] : values_len) {
            if (!in[i].shape.empty()) links.push_back({spec::context::dim_name(i, 0), &len});
        }
        for (auto& [key, len] : list_guess) links.push_back({spec::context::attr_length_name(key), &len});
        return links;
    }

    // Our length guesses may be what conflicts: guess again (mostly all
    // equal, the usual rule; sometimes independent) while rounds remain.
    // A redraw that repeats a failed guess would fail again: with one
    // list and one guess (axes on a rank-0 input) every redraw does, for
    // every round left. Give up once the draws find nothing new.
    bool redraw_lengths(const std::vector<length_link>& links, int round) {
        if (links.empty() || guessed_lengths.empty() || round + 2 >= max_rounds) return false;
        failed_lengths.push_back(length_guesses());
        for (int attempt = 0; attempt < 8; ++attempt) {
            const bool together = g.bernoulli(0.75);
            const std::size_t common = guessed_lengths[g.below(guessed_lengths.size())];
            for (const auto& l : links) *l.guess = together ? common : guessed_lengths[g.below(guessed_lengths.size())];
            if (std::find(failed_lengths.begin(), failed_lengths.end(), length_guesses()) == failed_lengths.end()) {
                guessed_list_attributes();
                return true;
            }
        }
        return false;
    }

    // A propagation failed: the next round with new length guesses, else refused.
    round_step redraw_or_refuse(const round_system& x, int round) {
        if (redraw_lengths(x.links, round)) return round_step::next_round;
        return refuse("unsatisfiable: " + x.conflict);
    }

    // Guesses outside the lengths propagation implies are drawn again from
    // those lengths (the next round).
    round_step correct_lengths(const round_system& x, const std::vector<interval>& implied) {
        bool regress = false;
        for (const auto& l : x.links) {
            const auto idx = x.sys.find(l.symbol);
            if (!idx) continue;
            const interval d = implied[*idx];
            if (!d.contains(static_cast<std::int64_t>(*l.guess))) {
                const interval c = detail::meet(d, {0, 2 * static_cast<std::int64_t>(cfg.max_rank) + 2});
                if (c.empty()) return refuse("no list length fits");
                *l.guess = static_cast<std::size_t>(c.lo + static_cast<std::int64_t>(g.below(c.width() + 1)));
                regress = true;
            }
        }
        if (regress) {
            guessed_list_attributes();
            return round_step::next_round;
        }
        return round_step::go_on;
    }

    // The guessed lengths as constraints, propagated: a conflict redraws them.
    round_step add_guessed_lengths(round_system& x, int round) {
        for (const auto& l : x.links) {
            if (x.sys.find(l.symbol)) x.sys.add(spec::expr::symbol(l.symbol) == static_cast<std::int64_t>(*l.guess), "the guessed length");
        }
        if (!x.links.empty()) {
            x.compiled.extend(x.sys);
            auto guessed = propagate_added(x.sys, x.compiled, std::move(x.settled_domains), x.settled, &x.conflict, {}, &x.entailed);
            if (!guessed) return redraw_or_refuse(x, round);
            x.settled_domains = std::move(*guessed);
            x.settled = x.sys.constraints.size();
        }
        return round_step::go_on;
    }

    // The config's limits on outputs: dims at least 1, at most max_elements
    // elements, and the op's work at most max_work.
    round_step add_output_bounds(const spec::context& ctx, round_system& x) {
        for (std::size_t o = 0; o < shapes.size(); ++o) {
            for (const auto& d : shapes[o]) x.sys.add(d >= 1, "output " + std::to_string(o) + " dims are at least 1");
            x.sys.add(spec::product(shapes[o]) <= static_cast<std::int64_t>(cfg.max_elements),
                      "output " + std::to_string(o) + " has at most max_elements elements");
        }
        if (hints.work_estimate) {
            return settle(ask(ctx, [&] {
                x.sys.add(hints.work_estimate(ctx, shapes) <= static_cast<std::int64_t>(cfg.max_work), "work is at most max_work");
            }));
        }
        return round_step::go_on;
    }

    // Inputs presumed shape-like whose values the spec never read go back to
    // what they were; true when one did (the structure changed).
    bool restore_unread_presumed(const spec::context& ctx) {
        if (presumed.empty()) return false;
        bool unread = false;
        for (auto& [i, was] : presumed) {
            if (ctx.values_were_read(i)) continue;
            in[i] = std::move(was);
            values_inputs.erase(i);
            values_len.erase(i);
            unread = true;
        }
        presumed.clear();
        return unread;
    }

    // The config's limit on placeholder inputs' sizes, and backward
    // insertion's placeholder: output 0 is exactly its shape and dtype.
    round_step add_input_bounds(round_system& x) {
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].role != input_role::placeholder || in[i].shape.empty() || fixed_dims.count(i) != 0) continue;
            std::vector<spec::expr> dims;
            for (std::size_t a = 0; a < in[i].shape.size(); ++a) dims.push_back(spec::context::dim_symbol(i, a));
            x.sys.add(spec::product(dims) <= static_cast<std::int64_t>(cfg.max_elements),
                      "input " + std::to_string(i) + " has at most max_elements elements");
        }
        if (req.bound_output) {
            for (std::size_t a = 0; a < shapes[0].size(); ++a) {
                x.sys.add(shapes[0][a] == static_cast<std::int64_t>(req.bound_output->shape[a]), "output 0 is the placeholder's shape");
            }
            if (out_dtypes[0] != req.bound_output->type) return refuse("output dtype differs from the placeholder's");
        }
        return round_step::go_on;
    }

    // Binning (Algorithm 2): a random bin per unknown; when the binned system
    // has no solution, drop half of the bin constraints and retry.
    round_step solve_binned(round_system& x, solve_result& solved) {
        x.compiled.extend(x.sys);
        auto domains = propagate_added(x.sys, x.compiled, std::move(x.settled_domains), x.settled, &x.conflict, {}, &x.entailed);
        if (!domains) return refuse("unsatisfiable: " + x.conflict);
        const propagated_box around{*domains, std::move(x.entailed)};
        std::vector<std::pair<std::size_t, interval>> bins;
        if (cfg.binning) {
            for (std::size_t v = 0; v < x.sys.variables.size(); ++v) {
                if ((*domains)[v].singleton()) continue;
                bins.emplace_back(v, detail::pick_bin((*domains)[v], cfg.bins, g));
            }
        }
        for (;;) {
            auto root = *domains;
            for (const auto& [v, b] : bins) root[v] = detail::meet(root[v], b);
            std::optional<constraint_system> binned;  // the hooks see a whole system; ours needs no copy
            if (hooks.observe || hooks.solver) {
                binned = x.sys;
                for (std::size_t v = 0; v < root.size(); ++v) binned->variables[v].domain = root[v];
            }
            if (hooks.observe) hooks.observe(*binned);
            // Bins are a preference: a binned system the search does not solve quickly is
            // dropped to fewer bins rather than searched to the end (which would be the
            // heavy tail of generation time). The system without bins gets a larger budget.
            solver_options so;
            so.max_nodes = unbinned_solver_nodes;
            if (!bins.empty()) {
                so.max_nodes = binned_solver_nodes;
                so.explain = false;  // a failure retries with fewer bins; the last try (none) explains
            }
            solved = hooks.solver ? hooks.solver(*binned, g) : solve(x.sys, x.compiled, std::move(root), g, so, &around);
            if (solved.sat() || bins.empty()) break;
            // drop a random half (at least one)
            for (std::size_t k = bins.size(); k-- > 1;) std::swap(bins[k], bins[static_cast<std::size_t>(g.below(k + 1))]);
            bins.resize(bins.size() / 2);
        }
        if (!solved.sat()) {
            return refuse(solved.status == solve_status::unsat ? "unsatisfiable: " + solved.conflict
                                                                : std::string("solver gave up"));
        }
        return round_step::go_on;
    }

    // --- materialize ----------------------------------------------------

    // The instance from the solution: unknown attributes, dims and values
    // filled in, refused where ONNX 1.12 would see it otherwise.
    round_step materialize(const round_system& x, const solve_result& solved) {
        const solved_values value{x, solved};
        fill_in_solution(value);
        op_instance out;
        out.op = &op;
        for (const auto& sh : shapes) {
            shape_type s;
            for (const auto& d : sh) {
                s.push_back(static_cast<std::size_t>(d.eval_with([&](const spec::expr::node& n) { return value.of(n.name, n.name_hash); })));
            }
            out.output_shapes.push_back(std::move(s));
        }
        out.output_dtypes = out_dtypes;
        out.output_count = output_count;
        if (const auto st = check_onnx_1_12(out); st != round_step::go_on) return st;
        draw_after_solving_data();
        out.inputs = std::move(in);
        out.attributes = std::move(given);
        result = std::move(out);
        return round_step::go_on;
    }

    // Unknown attributes and placeholder dims take their solved values;
    // shape-like inputs become constants of their solved values.
    void fill_in_solution(const solved_values& value) {
        for (const auto& key : unknown_attrs) {
            if (auto* v = std::get_if<std::vector<std::int64_t>>(&given[key])) {
                for (std::size_t k = 0; k < v->size(); ++k) (*v)[k] = value.named(spec::context::attr_element_name(key, k));
            } else {
                given[key] = value.named(spec::context::attr_name(key));
            }
        }
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].role == input_role::placeholder && fixed_dims.count(i) == 0) {
                for (std::size_t a = 0; a < in[i].shape.size(); ++a) {
                    in[i].shape[a] = static_cast<std::size_t>(value.named(spec::context::dim_name(i, a)));
                }
            } else if (values_inputs.count(i) != 0) {
                const std::size_t len = values_len[i];
                shape_type s = in[i].shape.empty() ? shape_type{} : shape_type{len};
                auto a = array<std::int64_t>::from_shape(s);
                for (std::size_t k = 0; k < len; ++k) a.data()[k] = value.named(spec::context::value_name(i, k));
                in[i].data = tensor::from_array_as(a, in[i].type);
                in[i].shape = s;
            } else if (before.count(i) != 0) {
                in[i].data = before.at(i);
            }
        }
    }

    // ONNX 1.12's shape inference and data propagation disagree with the
    // spec on some instances: refused where configured to avoid them.
    round_step check_onnx_1_12(const op_instance& out) {
        // Only the few ops it models: the shape copy below stays off every other instance.
        if (cfg.avoid_onnx_shape_inference_bugs && !out.output_shapes.empty() && io::has_onnx_1_12_shape_model(op.op_type)) {
            std::vector<shape_type> in_shapes;
            for (const auto& i : in) in_shapes.push_back(i.shape);
            if (io::onnx_1_12_shape_divergence(op.op_type, in_shapes, given, out.output_shapes[0])) {
                return refuse("ONNX 1.12 would infer another shape");
            }
        }
        if (cfg.avoid_onnx_shape_inference_bugs && !in.empty() && in[0].role != input_role::absent &&
            io::onnx_1_12_data_propagation_failure(op.op_type, in[0].shape, given)) {
            return refuse("ONNX 1.12's data propagation would refuse the axis");
        }
        return round_step::go_on;
    }

    // Data valid only for the solved shapes (indices): from a concrete context.
    void draw_after_solving_data() {
        bool after = false;
        for (std::size_t i = 0; i < in.size(); ++i) after = after || (hints.input(i) != nullptr && hints.input(i)->after_solving && in[i].role == input_role::placeholder);
        if (!after) return;
        std::vector<tensor> tmp(in.size());
        std::vector<const tensor*> ptrs(in.size(), nullptr);
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].role == input_role::absent) continue;
            tmp[i] = in[i].data ? *in[i].data : tensor::zeros(in[i].type, in[i].shape);
            ptrs[i] = &tmp[i];
        }
        spec::attribute_map solved_attrs = op.normalize_attributes(given);
        if (output_count > 1 || solved_attrs.count(std::string(output_count_attribute)) != 0) {
            solved_attrs[std::string(output_count_attribute)] = static_cast<std::int64_t>(output_count);
        }
        const spec::context concrete(op.op_type, ptrs, solved_attrs);
        for (std::size_t i = 0; i < in.size(); ++i) {
            const auto* ih = hints.input(i);
            if (ih == nullptr || !ih->after_solving || in[i].role != input_role::placeholder) continue;
            in[i].data = ih->after_solving(g, concrete, in[i].type, in[i].shape);
            in[i].role = input_role::constant;
        }
    }
};

}  // namespace detail

/// Solves one instance of `p.op` for `req`; nullopt (with the reason
/// counted in `rejected`) when this structure has no solution. Deterministic
/// in `g`.
[[nodiscard]] inline std::optional<op_instance> generate_instance(const op_profile& p, const instance_request& req,
                                                                  const config& cfg, rng& g,
                                                                  rejection_counts& rejected,
                                                                  const instance_hooks& hooks = {}) {
    detail::instance_draft s(p, req, cfg, g, rejected, hooks);
    if (!s.choose_inputs()) return std::nullopt;
    if (!s.choose_dtypes_and_ranks()) return std::nullopt;
    if (!s.choose_attributes()) return std::nullopt;
    s.presume_shape_like_inputs();
    for (int round = 0; round < detail::instance_draft::max_rounds; ++round) {
        switch (s.solve_round(round)) {
            case detail::round_step::go_on: return std::move(s.result);
            case detail::round_step::rejected: return std::nullopt;
            case detail::round_step::next_round: break;
        }
    }
    s.reject("structure did not settle");
    return std::nullopt;
}

/// A single random instance of an op, standalone: every placeholder input
/// gets random data in its hinted range. This is what the registry tests
/// and the gradient tests draw from (it replaces hand-written samplers).
[[nodiscard]] inline std::optional<spec::instance> sample_instance(const op_profile& p, const config& cfg, rng& g,
                                                                   rejection_counts& rejected, int attempts = 20) {
    for (int a = 0; a < attempts; ++a) {
        auto inst = generate_instance(p, {p.op, {}, {}, false}, cfg, g, rejected);
        if (!inst) continue;
        spec::instance out;
        for (auto& i : inst->inputs) {
            if (i.role == input_role::absent) {
                out.inputs.emplace_back(std::nullopt);
            } else if (i.data) {
                out.inputs.emplace_back(std::move(*i.data));
            } else {
                const auto r = i.range.value_or(std::make_pair(-4.0, 4.0));
                out.inputs.emplace_back(spec::random_values(g, i.type, i.shape, r.first, r.second));
            }
        }
        out.attributes = std::move(inst->attributes);
        if (std::any_of(p.attributes.begin(), p.attributes.end(),
                        [](const spec::attribute_info& x) { return x.name == output_count_attribute; })) {
            out.attributes[std::string(output_count_attribute)] = static_cast<std::int64_t>(inst->output_count);
        }
        return out;
    }
    return std::nullopt;
}

/// Small instances (at most 4096 elements a tensor, dims up to 16, 2^18
/// multiply-adds): what unit tests and examples run many of, in Debug.
[[nodiscard]] inline config small_instances() {
    config c;
    c.max_elements = 4096;
    c.max_dim = 16;
    c.max_work = std::size_t{1} << 18;
    return c;
}

/// `sample_instance` for tests and examples that want "some valid instance
/// of this op": throws when none is found (the rejection reasons name why).
[[nodiscard]] inline spec::instance sample_op(const spec::op_entry& e, rng& g, const config& cfg) {
    const op_profile p(e);
    rejection_counts rejected;
    if (auto inst = sample_instance(p, cfg, g, rejected)) return std::move(*inst);
    std::string why;
    for (const auto& [reason, n] : rejected.by_reason) why += " [" + reason + " x" + std::to_string(n) + "]";
    throw error("tensoracle::gen::sample_op", "no valid instance of " + std::string(e.op_type) + " found:" + why);
}

[[nodiscard]] inline spec::instance sample_op(const spec::op_entry& e, rng& g) {
    static const config small = small_instances();
    return sample_op(e, g, small);
}

}  // namespace tensoracle::gen
