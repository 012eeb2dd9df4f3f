// tensoracle: random valid graphs from the op specs (NNSmith's Algorithm 1).
//
// A graph grows from one placeholder. Each step draws an op and either
// inserts it forward (it consumes existing values: type matching on dtype
// and rank picks them, then the op's constraints are solved with the
// consumed values' shapes as constants) or backward (it replaces a
// placeholder: the op's output must equal the placeholder's type and shape,
// backward inference proposes input types, and its new inputs become
// placeholders). Shape-like inputs and hinted data become initializers;
// remaining placeholders become graph inputs or weights; values nothing
// consumes become graph outputs.
//
// Case i of seed s under config c is a pure function of (s, i, c): its
// random stream is seeded from those three alone.
#pragma once

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tensoracle/gen/config.hpp"
#include "tensoracle/gen/instance.hpp"
#include "tensoracle/gen/motifs.hpp"
#include "tensoracle/graph/graph.hpp"
#include "tensoracle/graph/interpreter.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/reduce/detail/normalization_groups.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle::gen {

/// The random stream of case `index` of `seed` under a config with hash `config_hash`.
[[nodiscard]] inline rng case_rng(std::uint64_t seed, std::uint64_t index, const std::string& config_hash) {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ seed;
    std::uint64_t s = h;
    h ^= tensoracle::detail::splitmix64_next(s) ^ index;
    for (const unsigned char ch : config_hash) h = (h ^ ch) * 0x100000001b3ULL;
    std::uint64_t t = h;
    return rng(tensoracle::detail::splitmix64_next(t));
}

/// A generated graph before its data: which initializers and inputs the
/// input search may change, and the ranges their first values come from.
struct graph_sketch {
    graph::graph model;
    /// Initializers whose data the generator fixed (shape-like values, indices): never changed.
    std::set<std::string> fixed;
    /// Initial data range of a free value (graph input or weight), from the consuming op's hint.
    std::map<std::string, std::pair<double, double>> ranges;
    std::vector<std::string> op_types;  ///< node ops, in node order
    /// The motif instances spliced in (gen/motifs.hpp): "name" or "name/variant".
    std::vector<std::string> motifs;
    /// Shape of every value: graph inputs, initializers and node outputs.
    std::map<std::string, shape_type, std::less<>> shapes;
    /// Dtype of every value, as `shapes` (integer and bool data lies in the dtype's range).
    std::map<std::string, dtype, std::less<>> dtypes;
};

/// A node as one op instance (NNSmith's unit of diversity): op type, each
/// input's dtype and shape (`type_of(name)` -> (dtype, shape)), attributes.
template <class TypeOf>
[[nodiscard]] std::string instance_key(const graph::node& n, TypeOf&& type_of) {
    std::string key = n.op_type + '(';
    for (const auto& in : n.inputs) {
        if (in.empty()) {
            key += "-,";
            continue;
        }
        const auto [d, shape] = type_of(in);
        key += std::string(tensoracle::name(d)) + tensoracle::to_string(shape) + ',';
    }
    key += ')';
    for (const auto& [k, v] : n.attributes) key += k + '=' + spec::attribute_summary(v) + ';';
    return key;
}

/// Where generation time went, for finding what to make faster. Off by
/// default: on, it reads the clock around every op instance tried (a few
/// percent of generation time), so time figures come from runs without it.
/// Times are milliseconds; what no field names (type matching, value facts,
/// adding nodes, growing the seed) is `total_ms` less the parts.
struct generation_times {
    bool enabled = false;
    /// In generate(): growing, re-drawing and checking graphs. The parts below are
    /// also charged by grow() called on its own, which adds nothing here.
    double total_ms = 0;
    double kept_ms = 0;                ///< solving instances that became nodes
    std::size_t kept = 0;
    double dropped_ms = 0;             ///< solving instances the graph then refused (a domain out of reach)
    std::size_t dropped = 0;
    double refused_ms = 0;             ///< generate_instance calls that found no instance
    std::size_t refused = 0;
    double reachability_ms = 0;        ///< generator::unreachable_domain on finished graphs
    double finish_ms = 0;              ///< turning the grown state into a model (generator::finish)
    /// Refused calls by reason, the op's name left out: (calls, ms).
    std::map<std::string, std::pair<std::size_t, double>> refused_by_reason;

    /// A kept instance the graph refused after all: its time moves to `dropped`
    /// (`ms`: what timed_instance charged it as kept).
    void move_to_dropped(double ms) noexcept {
        if (!enabled || kept == 0) return;
        kept_ms -= ms;
        --kept;
        dropped_ms += ms;
        ++dropped;
    }

    void merge(const generation_times& o) {
        enabled = enabled || o.enabled;
        total_ms += o.total_ms;
        kept_ms += o.kept_ms;
        kept += o.kept;
        dropped_ms += o.dropped_ms;
        dropped += o.dropped;
        refused_ms += o.refused_ms;
        refused += o.refused;
        reachability_ms += o.reachability_ms;
        finish_ms += o.finish_ms;
        for (const auto& [k, v] : o.refused_by_reason) {
            auto& r = refused_by_reason[k];
            r.first += v.first;
            r.second += v.second;
        }
    }
};

/// Counts of what generation did, for the statistics a run prints.
struct generation_stats {
    rejection_counts rejected;
    generation_times times;  ///< filled only when times.enabled
    std::size_t forward = 0, backward = 0, graphs = 0, short_graphs = 0;  // graphs grown, kept or not
    std::size_t redrawn = 0;  ///< graphs grown again because a domain was out of reach
    std::size_t search_regrown = 0;  ///< graphs grown again because the input search failed (io::make_case)
    std::size_t search_out_of_work = 0;  ///< of those, searches stopped by config::search_work
    /// Motif instances placed (at least two steps), by "name" or "name/variant".
    std::map<std::string, std::size_t> motifs;
    void merge(const generation_stats& o) {
        for (const auto& [k, n] : o.motifs) motifs[k] += n;
        rejected.merge(o.rejected);
        forward += o.forward;
        backward += o.backward;
        graphs += o.graphs;
        short_graphs += o.short_graphs;
        redrawn += o.redrawn;
        search_regrown += o.search_regrown;
        search_out_of_work += o.search_out_of_work;
        times.merge(o.times);
    }
};

/// A nudge to one graph's growth, for a guided campaign's "regrow around these
/// motifs" (campaign/corpus.hpp): the motifs named (without a near-miss suffix)
/// are drawn `factor` times their weight, and each draw splices a motif with
/// `motif_probability` instead of the config's. Without motifs in the config, none.
struct growth_bias {
    std::set<std::string, std::less<>> motifs;
    double factor = 8.0;
    double motif_probability = 0.6;
};

class generator {
public:
    /// Builds the op table for `cfg`: ops the config allows, each probed
    /// standalone; throws naming the conflict when no op can be generated.
    explicit generator(config cfg) : cfg_(std::move(cfg)) {
        cfg_.validate();
        const char* where = "tensoracle::gen::generator";
        for (const auto& name : cfg_.include_ops) {
            if (ops::find_op(name) == nullptr) throw error(where, "include_ops names '" + name + "', which has no spec");
        }
        for (const auto& name : cfg_.exclude_ops) {
            if (ops::find_op(name) == nullptr) throw error(where, "exclude_ops names '" + name + "', which has no spec");
        }
        std::vector<std::string> dropped;
        for (const auto& e : ops::registry()) {
            const std::string name(e.op_type);
            auto drop = [&](const std::string& why) { excluded_.emplace(name, why); };
            if (!cfg_.include_ops.empty() &&
                std::find(cfg_.include_ops.begin(), cfg_.include_ops.end(), name) == cfg_.include_ops.end()) {
                continue;  // not asked for: not listed as excluded either
            }
            if (std::find(cfg_.exclude_ops.begin(), cfg_.exclude_ops.end(), name) != cfg_.exclude_ops.end()) {
                drop("excluded by the config");
                continue;
            }
            if (cfg_.opset < e.opset || cfg_.opset > e.last_opset) {
                drop("the spec implements " + name + "-" + std::to_string(e.opset) + ", current only at opsets " +
                     std::to_string(e.opset) + ".." + std::to_string(e.last_opset) + "; the config's opset is " +
                     std::to_string(cfg_.opset));
                continue;
            }
            op_profile p(e);
            if (p.vulnerable && !cfg_.vulnerable_ops) {
                drop("vulnerable (has a numeric domain) and vulnerable_ops is off");
                continue;
            }
            if (const auto it = cfg_.support.find(name); it != cfg_.support.end()) {
                bool any = false;
                for (const auto d : it->second) any = any || e.inputs.empty() || e.inputs[0].types.contains(d);
                if (!any) {
                    drop("the support table lists no dtype it accepts");
                    continue;
                }
            }
            // Probe: can this op be instantiated standalone under the config?
            rejection_counts why;
            rng probe(0x5eed ^ std::hash<std::string>{}(name));
            bool ok = false;
            for (int a = 0; a < 40 && !ok; ++a) ok = generate_instance(p, {&e, {}, {}, cfg_.single_io}, cfg_, probe, why).has_value();
            if (!ok) {
                std::string top;
                std::size_t most = 0;
                for (const auto& [reason, n] : why.by_reason) {
                    if (n > most) {
                        most = n;
                        top = reason;
                    }
                }
                drop("cannot be instantiated under the config (" + top + ")");
                continue;
            }
            profiles_.push_back(std::move(p));
        }
        if (profiles_.empty()) {
            std::string msg = "no op can be generated under this configuration";
            std::size_t shown = 0;
            for (const auto& [op, why] : excluded_) {
                if (shown++ == 8) {
                    msg += "; ...";
                    break;
                }
                msg += (shown == 1 ? ": " : "; ") + op + ": " + why;
            }
            if (excluded_.empty()) msg += ": include_ops selects nothing";
            throw error(where, msg);
        }
        for (std::size_t i = 0; i < profiles_.size(); ++i) by_type_.emplace(std::string(profiles_[i].op->op_type), i);
        // Seed values must have a dtype some op consumes.
        for (const auto d : cfg_.dtypes) {
            for (const auto& p : profiles_) {
                if (!p.op->inputs.empty() && p.op->inputs[0].types.contains(d)) {
                    seed_dtypes_.push_back(d);
                    break;
                }
            }
        }
        if (seed_dtypes_.empty()) throw error(where, "no configured dtype is accepted by any configured op");
        if (cfg_.motif_probability > 0.0) collect_motifs();
    }

    /// Another solver, or an observer of the constraint systems (see instance_hooks).
    void set_hooks(instance_hooks hooks) { hooks_ = std::move(hooks); }
    [[nodiscard]] const config& settings() const noexcept { return cfg_; }
    [[nodiscard]] const std::vector<op_profile>& ops() const noexcept { return profiles_; }
    /// Ops of the registry the config leaves out, with the reason.
    [[nodiscard]] const std::map<std::string, std::string>& excluded() const noexcept { return excluded_; }
    /// The motifs this config draws from (every op of each is generated), with their weights.
    [[nodiscard]] std::vector<std::pair<const motif*, double>> motifs() const {
        std::vector<std::pair<const motif*, double>> out;
        for (const auto& [k, w] : motifs_) out.emplace_back(&motif_at(k), w);
        return out;
    }

    /// Grows one graph from `g` (generate() keeps only reachable domains).
    [[nodiscard]] graph_sketch grow(rng& g, generation_stats& stats, const growth_bias* bias = nullptr) const {
        state s;
        // A graph holds a few values per node: room for them up front, as each
        // regrowth moved every value (facts, shapes, names) made so far.
        s.values.reserve(4 * cfg_.max_nodes + 4);
        s.nodes.reserve(cfg_.max_nodes);
        // The seed placeholder.
        {
            dtype d = seed_dtypes_[g.below(seed_dtypes_.size())];
            std::vector<dtype> floats;
            for (const auto x : seed_dtypes_) {
                if (info(x).is_floating) floats.push_back(x);
            }
            if (!floats.empty() && g.bernoulli(0.75)) d = floats[g.below(floats.size())];
            s.add_value(d, random_shape(g), true);
        }
        std::vector<double> weights;
        double total = 0.0;
        for (const auto& p : profiles_) {
            weights.push_back(p.hints.weight);
            total += p.hints.weight;
        }
        const std::size_t attempts = 40 * cfg_.max_nodes + 40;
        for (std::size_t a = 0; a < attempts && s.nodes.size() < cfg_.max_nodes; ++a) {
            double r = g.uniform() * total;
            std::size_t k = 0;
            while (k + 1 < weights.size() && r >= weights[k]) r -= weights[k++];
            // Drawn only with motifs on, so a config without them keeps its random stream.
            if (!motifs_.empty() && g.bernoulli(bias ? bias->motif_probability : cfg_.motif_probability)) {
                insert_motif(s, g, stats, bias);
                continue;
            }
            const auto& p = profiles_[k];
            const bool forward = cfg_.single_io || g.bernoulli(cfg_.forward_probability);
            if (forward ? insert_forward(p, s, g, stats) : insert_backward(p, s, g, stats)) {
                ++(forward ? stats.forward : stats.backward);
            }
        }
        ++stats.graphs;
        if (s.nodes.size() < cfg_.max_nodes) ++stats.short_graphs;
        if (!stats.times.enabled) return finish(s, g);
        const auto start = clock::now();
        graph_sketch out = finish(s, g);
        stats.times.finish_ms += ms_since(start);
        return out;
    }

    /// Grows graphs from `g` until one has no domain that data cannot reach
    /// (unreachable_domain), at most `attempts` times; the last one otherwise.
    [[nodiscard]] graph_sketch generate(rng& g, generation_stats& stats, const growth_bias* bias = nullptr) const {
        constexpr int attempts = 16;
        const bool timed = stats.times.enabled;
        const auto start = timed ? clock::now() : clock::time_point{};
        for (int a = 1;; ++a) {
            graph_sketch sk = grow(g, stats, bias);
            const auto checked = timed ? clock::now() : clock::time_point{};
            const auto why = unreachable_domain(sk);
            if (timed) stats.times.reachability_ms += ms_since(checked);
            if (!why || a == attempts) {
                if (timed) stats.times.total_ms += ms_since(start);
                return sk;
            }
            stats.rejected.add("graph re-drawn: " + *why);
            ++stats.redrawn;
        }
    }

    /// Why no data for the free values of `sketch` can make every node
    /// finite, judged from the value facts of its ops (spec::value_facts):
    /// a vulnerable node whose element-wise domain rule fails on a value its
    /// input always holds (Log after Hardmax's zeros) or on every value its
    /// input can hold (Acosh after Sigmoid), or whose rules together leave
    /// no room (Asin and Acosh of the same value). "op: rule (why)"; empty
    /// when nothing is found (which does not prove the graph feasible).
    [[nodiscard]] std::optional<std::string> unreachable_domain(const graph_sketch& sketch) const {
        const auto& m = sketch.model;
        // Only a node with domain rules can fail, and facts flow forward (the
        // nodes are in topological order): nodes after the last such node need
        // no facts, and a graph without one needs none at all.
        std::size_t end = 0;
        for (std::size_t k = 0; k < m.nodes.size(); ++k) {
            const auto* p = profile(m.nodes[k].op_type);
            if (p != nullptr && (p->vulnerable || p->domain_per_instance)) end = k + 1;
        }
        if (end == 0) return std::nullopt;
        domain_walk walk(*this, sketch, end);
        for (std::size_t at = 0; at < end; ++at) {
            if (auto why = walk.visit(at)) return why;
        }
        return std::nullopt;
    }

    /// Why a node's domain rules fail on the known elements of partial data (see
    /// unreachable_domain): a rule needed of every element fails on a known one (a
    /// Log of the zeros Trilu leaves, taken by a Slice), or one needed of some
    /// element of each row along an axis fails on a whole known row (an
    /// LpNormalization of rows that Pad added).
    [[nodiscard]] static std::optional<std::string> partial_data_outside_domain(
        const op_profile& p, const graph::node& n, const std::map<std::string, tensor, std::less<>>& partial) {
        if (partial.empty() || (!p.vulnerable && !p.domain_per_instance)) return std::nullopt;
        bool reads_partial = false;
        for (const auto& name : n.inputs) reads_partial = reads_partial || (!name.empty() && partial.count(name) != 0);
        if (!reads_partial) return std::nullopt;
        std::vector<spec::domain_rule> rules;
        try {
            rules = p.op->domain(p.op->normalize_attributes(n.attributes));
        } catch (const error&) {
            return std::nullopt;
        }
        for (const auto& r : rules) {
            if (!r.elementwise_input || *r.elementwise_input >= n.inputs.size()) continue;
            const auto it = partial.find(n.inputs[*r.elementwise_input]);
            if (it == partial.end()) continue;
            const tensor& t = it->second;
            if (!r.input_dtypes.contains(t.element_dtype())) continue;
            std::function<double(double)> f = r.elementwise;
            if (!f && r.elementwise_at_limit) {
                f = [&r, m = ops::detail::max_finite(t.element_dtype())](double v) { return r.elementwise_at_limit(v, m); };
            }
            if (!f) continue;
            const std::string why = n.op_type + ": " + r.description + " (input " + std::to_string(*r.elementwise_input);
            if (!r.elementwise_any) {
                for (const double v : t.to<double>()) {
                    if (!std::isnan(v) && f(v) > 0.0) return why + " holds a value outside it, whatever the data)";
                }
                continue;
            }
            if (!r.any_along_axis) continue;  // groups of a reduction: not judged here
            const auto rank = static_cast<std::int64_t>(t.rank());
            const std::int64_t a = *r.any_along_axis < 0 ? *r.any_along_axis + rank : *r.any_along_axis;
            if (a < 0 || a >= rank) continue;
            const auto axis = static_cast<std::size_t>(a);
            for (const auto& row : ops::reduce::split_groups(t, axis, axis + 1)) {
                const bool all_fail = !row.empty() && std::all_of(row.begin(), row.end(), [&](double v) {
                    return !std::isnan(v) && f(v) > 0.0;
                });
                if (all_fail) return why + " has a row along axis " + std::to_string(a) + " outside it, whatever the data)";
            }
        }
        return std::nullopt;
    }

    /// Whether running node n's kernel while generating is cheap: at most 2^18
    /// elements read and, for ops with a work estimate (Conv, MatMul), at most 2^16
    /// work units (a float16 ConvTranspose of 64K elements takes milliseconds in
    /// software). Costlier nodes are left to the input search.
    [[nodiscard]] static bool cheap_to_run(const op_profile& p, const std::vector<const tensor*>& args,
                                           const spec::attribute_map& attrs) {
        double elements = 0.0;
        for (const auto* a : args) elements += a != nullptr ? static_cast<double>(a->size()) : 0.0;
        if (elements > 0x1p18) return false;
        if (!p.hints.visited_work && !p.hints.work_estimate) return true;
        try {
            const spec::context c(p.op->op_type, args, p.op->normalize_attributes(attrs));
            if (p.hints.visited_work) return p.hints.visited_work(c) <= 0x1p16;
            const auto shapes = p.op->output_shapes(c);
            return static_cast<double>(p.hints.work_estimate(c, shapes).eval(c.env())) <= 0x1p16;
        } catch (const error&) {
            return false;
        }
    }

    /// Whether facts `f` of a dtype-d value pin every element to one small integer
    /// (exact in every dtype, whatever rounding the facts leave out).
    [[nodiscard]] static bool is_pinned(const spec::value_facts& f, dtype d) {
        if (!(f.lo == f.hi) || !std::isfinite(f.lo) || f.lo != std::floor(f.lo) || std::fabs(f.lo) > 256.0) return false;
        if (d == dtype::boolean && f.lo != 0.0 && f.lo != 1.0) return false;
        return !(info(d).is_integer && !info(d).is_signed && f.lo < 0.0);
    }

    /// Runs node n when every input it reads is in `known` (data no free value
    /// reaches): its outputs, or why no data makes it finite (an error, a
    /// non-finite output, an integer output outside the op's domain, exactly as
    /// the input search judges a node). Nothing when some input is not known.
    [[nodiscard]] static std::optional<std::variant<std::string, std::vector<tensor>>> run_on_known_data(
        const op_profile& p, const graph::node& n, const std::map<std::string, const tensor*, std::less<>>& known) {
        std::vector<const tensor*> args;
        for (const auto& name : n.inputs) {
            if (name.empty()) {
                args.push_back(nullptr);
                continue;
            }
            const auto it = known.find(name);
            if (it == known.end()) return std::nullopt;
            args.push_back(it->second);
        }
        while (!args.empty() && args.back() == nullptr) args.pop_back();
        if (args.empty()) return std::nullopt;
        const auto attrs = graph::call_attributes(*p.op, n);
        if (!cheap_to_run(p, args, attrs)) return std::nullopt;
        const std::string where = n.op_type + " of data no free value reaches";
        std::vector<tensor> out;
        try {
            out = spec::evaluate(*p.op, args, attrs);
        } catch (const error& e) {
            return where + ": " + e.what();
        }
        bool discrete = false;
        for (std::size_t o = 0; o < out.size(); ++o) {
            if (!info(out[o].element_dtype()).is_floating) {
                discrete = true;
                continue;
            }
            const auto x = out[o].to<double>();
            if (!std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); })) {
                return where + ": output " + std::to_string(o) + " is not finite";
            }
        }
        if (discrete && (p.vulnerable || p.domain_per_instance)) {
            std::vector<tensor> rule_args;
            for (const auto* a : args) rule_args.push_back(a != nullptr ? *a : tensor());
            try {
                for (const auto& r : p.op->domain(p.op->normalize_attributes(attrs))) {
                    if (r.loss(rule_args) > 0.0) return where + ": integer output outside the domain (" + r.description + ")";
                }
            } catch (const error&) {
                // Rules that cannot judge these inputs: the search would not fail on them either.
            }
        }
        return out;
    }

    /// Facts of fixed data: its range, its extremes as forced values.
    [[nodiscard]] static spec::value_facts data_facts(const tensor& t) {
        if (t.size() == 0) return {};
        const auto d = t.to<double>();
        const auto [lo, hi] = std::minmax_element(d.begin(), d.end());
        spec::value_facts f = spec::value_facts::within(*lo, *hi);
        f.force(*lo).force(*hi);
        return f;
    }

    /// Why one of p's element-wise domain rules cannot hold on inputs with
    /// facts `in` (empty: each can); narrows `in` to where the rules hold,
    /// so later readers of the same values see only what is left.
    /// `in_shapes` and `out_shapes` (where known) tell a rule needed of some
    /// element per group whether its groups hold one element (then: every one).
    [[nodiscard]] static std::optional<std::string> check_domain(const op_profile& p, const spec::attribute_map& attrs,
                                                                 std::vector<spec::value_facts>& in,
                                                                 std::span<const std::optional<dtype>> dtypes = {},
                                                                 std::span<const shape_type> in_shapes = {},
                                                                 std::span<const shape_type> out_shapes = {}) {
        if (!p.vulnerable && !p.domain_per_instance) return std::nullopt;
        std::vector<spec::domain_rule> rules;
        try {
            rules = p.op->domain(p.op->normalize_attributes(attrs));
        } catch (const error&) {
            return std::nullopt;
        }
        const std::string op(p.op->op_type);
        for (const auto& r : rules) {
            if (!r.elementwise_input || *r.elementwise_input >= in.size()) continue;
            const std::size_t k = *r.elementwise_input;
            const std::optional<dtype> dk = k < dtypes.size() ? dtypes[k] : std::nullopt;
            // A rule for some dtypes only judges an input whose dtype is known to be one of them.
            if (r.input_dtypes.mask != spec::types::all.mask && (!dk || !r.input_dtypes.contains(*dk))) continue;
            std::function<double(double)> at_limit;
            if (!r.elementwise) {
                // A dtype-dependent rule (overflow), where the input's dtype is known. An
                // integer input is judged at double's limit, as the input search judges it.
                if (!r.elementwise_at_limit || k >= dtypes.size() || !dtypes[k]) continue;
                at_limit = [&r, m = ops::detail::max_finite(*dtypes[k])](double v) { return r.elementwise_at_limit(v, m); };
            }
            auto& x = in[k];
            const auto& f = r.elementwise ? r.elementwise : at_limit;
            const bool any = r.elementwise_any && !groups_of_one(r, k, in_shapes, out_shapes);
            for (const double v : x.forced) {
                if (!any && f(v) > 0.0) {
                    return op + ": " + r.description + " (input " + std::to_string(k) + " always holds a value outside it)";
                }
            }
            // An element bound: some element lies in [lo, a] (or [b, hi]); if the rule
            // fails on all of it, that element is always outside.
            auto fails_on = [&](double a, double b) {
                if (!(a <= b) || !(f(a) > 0.0) || !(f(b) > 0.0)) return false;
                for (const double v : spec::facts::probe_points(a, b)) {
                    if (!(f(v) > 0.0)) return false;
                }
                return true;
            };
            if (!any && ((std::isfinite(x.some_at_most) && fails_on(x.lo, x.some_at_most)) ||
                         (std::isfinite(x.some_at_least) && fails_on(x.some_at_least, x.hi)))) {
                return op + ": " + r.description + " (input " + std::to_string(k) + " always holds an element outside it)";
            }
            // Where the rule holds strictly inside the input's enclosure (a
            // single point such as Sigmoid's saturation does not count).
            // No element lies in a gap; its ends may hold one (an L2-normalized row of one is -1 or 1).
            double lo = std::numeric_limits<double>::infinity(), hi = -lo;
            const bool point = x.lo == x.hi;
            auto probe = [&](double v, bool closed) {
                if (!x.in_gap(v) && (closed || point ? f(v) <= 0.0 : f(v) < 0.0)) {
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                }
            };
            for (const double v : spec::facts::probe_points(x.lo, x.hi)) probe(v, false);
            if (x.gap) {
                // A gap's ends are values an element may take exactly: judged as closed points.
                for (const double v : {x.gap->first, x.gap->second}) {
                    if (v >= x.lo && v <= x.hi) probe(v, true);
                }
            }
            if (lo > hi) return op + ": " + r.description + " (input " + std::to_string(k) + " holds no value inside it)";
            if (x.integral) {
                // Integers only: Atanh's (-1, 1) leaves 0, Asin's [-1, 1] all of -1, 0, 1. The
                // rule is judged at the integers themselves (a closed end such as Asin's 1 is
                // in the domain, which the strict test above leaves out): every one near 0,
                // and the sampled range's ends rounded inwards.
                double ilo = std::numeric_limits<double>::infinity(), ihi = -ilo;
                auto try_integer = [&](double v) {
                    if (v >= x.lo && v <= x.hi && !x.in_gap(v) && f(v) <= 0.0) {
                        ilo = std::min(ilo, v);
                        ihi = std::max(ihi, v);
                    }
                };
                for (double v = std::max(std::ceil(x.lo), -16.0); v <= std::min(std::floor(x.hi), 16.0); v += 1.0) try_integer(v);
                try_integer(std::ceil(lo));
                try_integer(std::floor(hi));
                if (ilo > ihi) return op + ": " + r.description + " (input " + std::to_string(k) + " holds no integer inside it)";
                lo = std::ceil(std::min(lo, ilo));
                hi = std::floor(std::max(hi, ihi));
            }
            if (any) continue;
            x.lo = std::max(x.lo, lo);
            x.hi = std::min(x.hi, hi);
        }
        return std::nullopt;
    }

    /// Whether the groups of an "f(x) <= 0 for some element of each group" rule
    /// on input k hold one element each (a row of one, a reduction over dims of 1).
    [[nodiscard]] static bool groups_of_one(const spec::domain_rule& r, std::size_t k, std::span<const shape_type> in_shapes,
                                            std::span<const shape_type> out_shapes) {
        if (k >= in_shapes.size() || in_shapes[k].empty()) return false;
        const auto& x = in_shapes[k];
        if (r.any_along_axis) {
            const auto rank = static_cast<std::int64_t>(x.size());
            const std::int64_t a = *r.any_along_axis < 0 ? *r.any_along_axis + rank : *r.any_along_axis;
            return a >= 0 && a < rank && x[static_cast<std::size_t>(a)] == 1;
        }
        if (out_shapes.empty()) return false;
        const std::size_t n = element_count(x);
        return n > 0 && n == element_count(out_shapes[0]);
    }

    /// Output 0's facts when one value is both operands (hints::when_operands_equal).
    static void equal_operands(const op_profile& p, std::vector<spec::value_facts>& out) {
        if (p.hints.equal_operands_facts && !out.empty()) out[0] = *p.hints.equal_operands_facts;
    }

    /// Facts of a node's `count` outputs (unknown where the op gives none).
    [[nodiscard]] static std::vector<spec::value_facts> output_facts(const op_profile& p, const spec::attribute_map& attrs,
                                                                     const std::vector<spec::value_facts>& in,
                                                                     const std::vector<shape_type>& in_shapes,
                                                                     std::size_t count,
                                                                     std::span<const shape_type> out_shapes = {}) {
        std::vector<spec::value_facts> out(count);
        if (!p.hints.output_facts) return out;
        std::vector<spec::value_facts> given;
        try {
            if (p.hints.facts_read_output_shapes) {
                std::vector<shape_type> shapes(in_shapes);
                shapes.insert(shapes.end(), out_shapes.begin(), out_shapes.end());
                given = p.hints.output_facts(in, attrs, shapes);
            } else {
                given = p.hints.output_facts(in, attrs, in_shapes);
            }
        } catch (const error&) {
            return out;
        }
        // A variadic output (Split's) is one kind of value: the last fact given holds for the rest.
        const bool variadic = !p.op->outputs.empty() && p.op->outputs.back().variadic;
        for (std::size_t o = 0; o < count && !given.empty(); ++o) {
            if (o >= given.size() && !variadic) break;
            out[o] = given[std::min(o, given.size() - 1)];
        }
        return out;
    }

private:
    /// unreachable_domain's walk over a sketch's nodes, in node order: the
    /// value facts known so far, and data worked out where facts fall short.
    struct domain_walk {
        struct knowable_value {
            std::size_t node = 0;          // its producer
            std::optional<double> pinned;  // every element, where the facts pin it
        };
        /// The arguments of a run on partial data: known and partial data, and
        /// stand-ins for the unknown inputs.
        struct partial_call {
            std::vector<tensor> unknowns;  // stand-ins, kept alive for the call (reserved: `args` point into it)
            std::vector<const tensor*> args;
            std::vector<std::size_t> filled;  // integer and bool stand-ins in `unknowns`: no NaN marks them (see evaluate_partial)
            bool some_partial = false, some_nan = false;
        };

        const generator& owner;
        const graph_sketch& sketch;
        const graph::graph& m;
        std::map<std::string, spec::value_facts, std::less<>> facts;
        // A copy's output and its input hold the same elements (spec::hints::copies):
        // they share the input's entry, so a rule one reader imposes binds the others.
        std::map<std::string, std::string, std::less<>> same_as;
        const spec::value_facts unknown;
        // Data no free value reaches: fixed data, what a node computes from such
        // data alone, and values the facts pin to one small integer (Ceil of a
        // Sigmoid is 1, a Conv whose pads leave every output untouched is 0).
        // A vulnerable node that reads only such data is run, and what it reads
        // is worked out first: what they give, they give for every data (a Sinh,
        // CumSum and ReduceProd of those ones overflows). Other nodes' outputs are
        // only noted as `knowable`: most are never read by a vulnerable node.
        std::map<std::string, const tensor*, std::less<>> known;
        std::deque<tensor> computed;  // stable addresses for `known`
        std::map<std::string, knowable_value, std::less<>> knowable;
        // Floating data some of whose elements are known, the others NaN (see
        // spec::hints::runs_on_unknowns): Pad's constant, Trilu's zeros, a Conv output
        // no tap reaches, and the elements Slice, Gather or Transpose take of them.
        // Worked out only where a vulnerable node reads it (most graphs never do):
        // `may_know` names the values whose producer may know some elements (a Pad,
        // or a Slice of a Pad's output), with that node and whether it creates them.
        std::map<std::string, tensor, std::less<>> partial;
        std::map<std::string, std::pair<std::size_t, bool>, std::less<>> may_know;
        std::vector<char> partial_run;

        // Facts of fixed data and of non-floating dtypes: what holds before any node.
        domain_walk(const generator& walker, const graph_sketch& sk, std::size_t nodes)
            : owner(walker), sketch(sk), m(sk.model), partial_run(nodes, 0) {
            for (const auto& [name, t] : m.initializers) {
                if (sketch.fixed.count(name) != 0) facts.emplace(name, data_facts(t));
            }
            for (const auto& [name, d] : sketch.dtypes) {
                if (!info(d).is_floating && facts.count(name) == 0) facts.emplace(name, spec::value_facts{}.of_dtype(d));
            }
            for (const auto& [name, t] : m.initializers) {
                if (sketch.fixed.count(name) != 0) known.emplace(name, &t);
            }
        }

        [[nodiscard]] std::optional<dtype> dtype_of(const std::string& name) const {
            const auto it = sketch.dtypes.find(name);
            return it == sketch.dtypes.end() ? std::nullopt : std::optional<dtype>(it->second);
        }
        // The entry of `name` in `facts` (a copy's is its input's).
        [[nodiscard]] const std::string& key(const std::string& name) const {
            const auto it = same_as.find(name);
            return it == same_as.end() ? name : it->second;
        }
        const tensor& remember(const std::string& name, tensor t) {
            computed.push_back(std::move(t));
            known.insert_or_assign(name, &computed.back());
            return computed.back();
        }

        // Node `at`: why no data can make it finite, if its facts (or data
        // worked out) say so; else the facts its outputs hold, for the nodes after.
        std::optional<std::string> visit(std::size_t at) {
            const auto& n = m.nodes[at];
            const auto* p = owner.profile(n.op_type);
            if (p == nullptr) return std::nullopt;
            if ((p->vulnerable || p->domain_per_instance) && !may_know.empty()) {
                for (const auto& name : n.inputs) {
                    if (!name.empty()) work_out_partial(name);
                }
            }
            std::vector<spec::value_facts> in;
            std::vector<shape_type> in_shapes;
            for (const auto& name : n.inputs) {
                const auto f = facts.find(key(name));
                in.push_back(name.empty() || f == facts.end() ? unknown : f->second);
                const auto it = sketch.shapes.find(name);
                in_shapes.push_back(it == sketch.shapes.end() ? shape_type{} : it->second);
            }
            std::vector<std::optional<dtype>> in_dtypes;
            for (const auto& name : n.inputs) in_dtypes.push_back(name.empty() ? std::nullopt : dtype_of(name));
            std::vector<shape_type> node_out_shapes;
            for (const auto& name : n.outputs) {
                const auto it = sketch.shapes.find(name);
                node_out_shapes.push_back(it == sketch.shapes.end() ? shape_type{} : it->second);
            }
            if (auto why = check_domain(*p, n.attributes, in, in_dtypes, in_shapes, node_out_shapes)) return why;
            if (auto why = partial_data_outside_domain(*p, n, partial)) return why;
            for (std::size_t k = 0; k < n.inputs.size(); ++k) {
                if (!n.inputs[k].empty() && !in[k].is_unknown()) facts.insert_or_assign(key(n.inputs[k]), in[k]);
            }
            bool all_knowable = false;
            for (const auto& name : n.inputs) {
                if (name.empty()) continue;
                all_knowable = known.count(name) != 0 || knowable.count(name) != 0;
                if (!all_knowable) break;
            }
            if (all_knowable && (p->vulnerable || p->domain_per_instance)) {
                for (const auto& name : n.inputs) {
                    if (auto why = make_known(name)) return why;
                }
                if (auto out = run_on_known_data(*p, n, known)) return remember_outputs(n, *out);
            } else if (all_knowable) {
                for (const auto& o : n.outputs) {
                    if (!o.empty()) knowable.insert_or_assign(o, knowable_value{at, std::nullopt});
                }
            }
            if (shares_copied_input(at, n, *p)) return std::nullopt;
            add_output_facts(at, n, *p, in, in_shapes, node_out_shapes);
            return std::nullopt;
        }

        // What a run on known data gave: why no data makes it finite, or its
        // outputs, known with their facts.
        std::optional<std::string> remember_outputs(const graph::node& n, std::variant<std::string, std::vector<tensor>>& out) {
            if (const auto* why = std::get_if<std::string>(&out)) return *why;
            auto& results = std::get<std::vector<tensor>>(out);
            for (std::size_t o = 0; o < n.outputs.size() && o < results.size(); ++o) {
                if (n.outputs[o].empty()) continue;
                facts.insert_or_assign(n.outputs[o], data_facts(remember(n.outputs[o], std::move(results[o]))));
            }
            return std::nullopt;
        }

        // A copy's output shares its input's facts entry (see same_as); true when node `at` is one.
        bool shares_copied_input(std::size_t at, const graph::node& n, const op_profile& p) {
            if (const auto c = p.hints.copied_input; c && *c < n.inputs.size() && !n.inputs[*c].empty() &&
                                                     !n.outputs.empty() && !n.outputs[0].empty()) {
                const auto it = sketch.shapes.find(n.outputs[0]);
                const bool empty = it == sketch.shapes.end() || element_count(it->second) == 0;
                if (!empty && dtype_of(n.outputs[0]) == dtype_of(n.inputs[*c])) {
                    same_as.insert_or_assign(n.outputs[0], key(n.inputs[*c]));
                    note_partial_outputs(at, p, false);
                    return true;
                }
            }
            return false;
        }

        // The facts node `at`'s outputs hold by the op's value facts; pinned ones are knowable.
        void add_output_facts(std::size_t at, const graph::node& n, const op_profile& p, const std::vector<spec::value_facts>& in,
                              const std::vector<shape_type>& in_shapes, const std::vector<shape_type>& node_out_shapes) {
            const auto out_shapes = p.hints.facts_read_output_shapes ? node_out_shapes : std::vector<shape_type>{};
            auto out = output_facts(p, n.attributes, in, in_shapes, n.outputs.size(), out_shapes);
            if (n.inputs.size() == 2 && !n.inputs[0].empty() && n.inputs[0] == n.inputs[1]) equal_operands(p, out);
            for (std::size_t o = 0; o < n.outputs.size(); ++o) {
                if (n.outputs[o].empty()) continue;
                const auto d = dtype_of(n.outputs[o]);
                const auto f = d ? out[o].of_dtype(*d) : out[o];
                if (f.is_unknown()) continue;
                facts.insert_or_assign(n.outputs[o], f);
                if (d && is_pinned(f, *d)) knowable.insert_or_assign(n.outputs[o], knowable_value{at, f.lo});
            }
            const bool created = std::any_of(out.begin(), out.end(), [](const spec::value_facts& f) { return !f.forced.empty(); });
            note_partial_outputs(at, p, created);
        }

        // Puts `name` in `known` if it is knowable; why no data can make it finite, if so.
        std::optional<std::string> make_known(const std::string& name) {
            const auto it = knowable.find(name);
            if (it == knowable.end() || known.count(name) != 0) return std::nullopt;
            const knowable_value v = it->second;
            knowable.erase(it);  // worked out once, whatever the outcome
            if (v.pinned) {
                const auto d = dtype_of(name);
                const auto shape = sketch.shapes.find(name);
                if (!d || shape == sketch.shapes.end()) return std::nullopt;
                auto values = array<double>::from_shape(shape->second);
                values.fill(*v.pinned);
                remember(name, tensor::from_array_as(values, *d));
                return std::nullopt;
            }
            const auto& n = m.nodes[v.node];
            for (const auto& input : n.inputs) {
                if (input.empty()) continue;
                if (auto why = make_known(input)) return why;
            }
            const auto* q = owner.profile(n.op_type);
            if (q == nullptr) return std::nullopt;
            auto out = run_on_known_data(*q, n, known);
            if (!out) return std::nullopt;
            if (const auto* why = std::get_if<std::string>(&*out)) return *why;
            auto& results = std::get<std::vector<tensor>>(*out);
            for (std::size_t o = 0; o < n.outputs.size() && o < results.size(); ++o) {
                if (n.outputs[o].empty() || known.count(n.outputs[o]) != 0) continue;
                knowable.erase(n.outputs[o]);
                remember(n.outputs[o], std::move(results[o]));
            }
            return std::nullopt;
        }

        // The partial data of `name`, worked out through its producers on first use.
        void work_out_partial(const std::string& name) {
            const auto it = may_know.find(name);
            if (it == may_know.end() || partial_run[it->second.first] != 0) return;
            const auto [k, created] = it->second;
            partial_run[k] = 1;
            for (const auto& input : m.nodes[k].inputs) {
                if (!input.empty()) work_out_partial(input);
            }
            if (const auto* q = owner.profile(m.nodes[k].op_type)) run_on_partial_data(m.nodes[k], *q, created);
        }

        // Records that node `at`'s outputs may know elements (see may_know).
        void note_partial_outputs(std::size_t at, const op_profile& p, bool created) {
            using mode = spec::hints::unknown_data;
            if (p.hints.runs_on_unknowns == mode::not_run) return;
            const auto& n = m.nodes[at];
            bool reads = false;
            for (const auto& input : n.inputs) reads = reads || (!input.empty() && may_know.count(input) != 0);
            if (!reads && (!created || p.hints.runs_on_unknowns == mode::elementwise)) return;
            for (const auto& o : n.outputs) {
                if (!o.empty()) may_know.insert_or_assign(o, std::make_pair(at, created));
            }
        }

        // Runs node n on known, partial and (NaN) unknown floating data; `created`:
        // its output facts name values every data puts somewhere (Pad's constant), so
        // it may know elements even of unknown inputs. Stores what it learns.
        void run_on_partial_data(const graph::node& n, const op_profile& p, bool created) {
            using mode = spec::hints::unknown_data;
            if (p.hints.runs_on_unknowns == mode::not_run) return;
            partial_call call;
            call.unknowns.reserve(n.inputs.size());
            if (!partial_arguments(n, call)) return;
            const bool all_known = !call.some_partial && call.unknowns.empty();
            // Element-wise, an unknown input element leaves its output unknown: only
            // partial data teaches anything.
            if (!all_known && !call.some_partial && (!created || p.hints.runs_on_unknowns == mode::elementwise)) return;
            if (!call.filled.empty() && p.hints.runs_on_unknowns != mode::nan_faithful) return;
            while (!call.args.empty() && call.args.back() == nullptr) call.args.pop_back();
            const auto attrs = graph::call_attributes(*p.op, n);
            if (!cheap_to_run(p, call.args, attrs)) return;
            std::vector<tensor> out;
            if (!evaluate_partial(p, call, attrs, out)) return;
            // Outputs of known data alone, or of integer stand-ins they do not read, are known.
            if (all_known || (!call.some_partial && !call.some_nan)) {
                for (std::size_t o = 0; o < out.size() && o < n.outputs.size(); ++o) {
                    if (!n.outputs[o].empty()) remember(n.outputs[o], std::move(out[o]));
                }
                return;
            }
            learn_partial_outputs(n, p, call.args, out);
        }

        // The arguments of node n: known data, partial data, or stand-ins (NaN for
        // floating data, 0 for the rest); false when a stand-in's shape or dtype is not known.
        bool partial_arguments(const graph::node& n, partial_call& call) const {
            for (const auto& name : n.inputs) {
                if (name.empty()) {
                    call.args.push_back(nullptr);
                } else if (const auto k = known.find(name); k != known.end()) {
                    call.args.push_back(k->second);
                } else if (const auto q = partial.find(name); q != partial.end()) {
                    call.args.push_back(&q->second);
                    call.some_partial = true;
                } else {
                    const auto d = dtype_of(name);
                    const auto shape = sketch.shapes.find(name);
                    if (!d || shape == sketch.shapes.end()) return false;
                    auto values = array<double>::from_shape(shape->second);
                    values.fill(info(*d).is_floating ? std::numeric_limits<double>::quiet_NaN() : 0.0);
                    if (!info(*d).is_floating) call.filled.push_back(call.unknowns.size());
                    call.some_nan = call.some_nan || info(*d).is_floating;
                    call.unknowns.push_back(tensor::from_array_as(values, *d));
                    call.args.push_back(&call.unknowns.back());
                }
            }
            return true;
        }

        // Evaluates the op on the call's arguments into `out`; false when it
        // fails or its outputs read integer stand-ins (nothing learned).
        static bool evaluate_partial(const op_profile& p, partial_call& call, const spec::attribute_map& attrs,
                                     std::vector<tensor>& out) {
            try {
                out = spec::evaluate(*p.op, call.args, attrs);
                // Integer data has no NaN: run again with its stand-ins 1 instead of 0. Outputs
                // the same both times do not read it (a Pad whose negative pads crop every
                // input element: its output is the pad value alone); else nothing is learned.
                if (!call.filled.empty()) {
                    for (const std::size_t i : call.filled) {
                        auto ones = array<double>::from_shape(call.unknowns[i].shape());
                        ones.fill(1.0);
                        call.unknowns[i] = tensor::from_array_as(ones, call.unknowns[i].element_dtype());  // args keep pointing here
                    }
                    const auto again = spec::evaluate(*p.op, call.args, attrs);
                    for (std::size_t o = 0; o < out.size(); ++o) {
                        const auto a = out[o].to<double>(), b = again[o].to<double>();
                        for (std::size_t e = 0; e < a.size(); ++e) {
                            const double u = a.data()[e], v = b.data()[e];
                            if (!(u == v || (std::isnan(u) && std::isnan(v)))) return false;
                        }
                    }
                }
            } catch (const error&) {
                return false;  // the search will see it; nothing learned here
            }
            return true;
        }

        // Outputs of a run on partial data with some elements known: their known
        // values forced into the facts, and the outputs kept as partial data
        // (or known, where every element is).
        void learn_partial_outputs(const graph::node& n, const op_profile& p, const std::vector<const tensor*>& args,
                                   std::vector<tensor>& out) {
            using mode = spec::hints::unknown_data;
            for (std::size_t o = 0; o < out.size() && o < n.outputs.size(); ++o) {
                if (n.outputs[o].empty() || !info(out[o].element_dtype()).is_floating) continue;
                auto y = out[o].to<double>();
                if (p.hints.runs_on_unknowns == mode::elementwise) {
                    if (args.empty() || args[0] == nullptr || args[0]->shape() != out[o].shape()) continue;
                    const auto x = args[0]->to<double>();
                    for (std::size_t e = 0; e < y.size(); ++e) {
                        if (std::isnan(x.data()[e])) y.data()[e] = std::numeric_limits<double>::quiet_NaN();
                    }
                }
                std::size_t unknown_count = 0;
                std::vector<double> values;  // a few of the known values, as forced values
                for (const double v : y) {
                    if (std::isnan(v)) {
                        ++unknown_count;
                    } else if (values.size() < 4 && std::find(values.begin(), values.end(), v) == values.end()) {
                        values.push_back(v);
                    }
                }
                if (unknown_count == y.size()) continue;
                const auto& name = n.outputs[o];
                if (unknown_count == 0) {
                    facts.insert_or_assign(name, data_facts(remember(name, std::move(out[o]))));
                    continue;
                }
                if (p.hints.runs_on_unknowns == mode::elementwise) out[o] = tensor::from_array_as(y, out[o].element_dtype());
                auto& f = facts[key(name)];
                for (const double v : values) {
                    if (v >= f.lo && v <= f.hi) f.force(v);  // outside: facts that rounding escaped; leave them
                }
                partial.insert_or_assign(name, std::move(out[o]));
            }
        }
    };
    struct value {
        std::string name;
        dtype type = dtype::f32;
        shape_type shape;
        bool placeholder = false;  // not produced yet: a later backward insertion, an input or a weight
        bool fixed = false;        // data fixed by the generator (an initializer)
        std::optional<tensor> data;
        std::optional<std::pair<double, double>> range;
        std::size_t uses = 0;
        bool seed = false;
        bool weight = false;      // read by an op as a weight (spec::hints::weight_inputs)
        bool graph_input = false; // a motif's computed operand: a graph input, never a weight
        spec::value_facts facts;  // what its data holds whatever the free values (unknown for those)
    };
    struct state {
        std::vector<value> values;
        std::vector<graph::node> nodes;
        std::size_t add_value(dtype d, shape_type shape, bool placeholder) {
            value v;
            v.name = "v" + std::to_string(values.size());
            v.type = d;
            v.shape = std::move(shape);
            v.placeholder = placeholder;
            v.seed = values.empty();
            v.facts = spec::value_facts{}.of_dtype(d);  // bool data is 0 or 1 whatever it is
            values.push_back(std::move(v));
            return values.size() - 1;
        }
        /// The single leaf in single-input single-output mode (the last node's output 0, or the seed).
        std::size_t leaf = 0;
        std::vector<std::string> motifs;  ///< motif instances placed, for graph_sketch::motifs
    };

    shape_type random_shape(rng& g) const {
        const auto rank = static_cast<std::size_t>(
            g.integer(static_cast<std::int64_t>(cfg_.min_rank), static_cast<std::int64_t>(cfg_.max_rank)));
        shape_type s(rank);
        std::int64_t budget = static_cast<std::int64_t>(cfg_.max_elements);
        for (std::size_t a = 0; a < rank; ++a) {
            const std::int64_t left = std::max<std::int64_t>(1, budget);
            const interval dom{cfg_.min_dim, std::min(cfg_.max_dim, left)};
            const interval bin = cfg_.binning ? detail::pick_bin(dom, cfg_.bins, g) : dom;
            const std::int64_t d = bin.empty() ? cfg_.min_dim : bin.lo + static_cast<std::int64_t>(g.below(bin.width() + 1));
            s[a] = static_cast<std::size_t>(d);
            budget /= std::max<std::int64_t>(d, 1);
        }
        return s;
    }

    /// Facts and shapes of an instance's inputs: bound values' facts, fixed data's, unknown for new placeholders.
    static std::pair<std::vector<spec::value_facts>, std::vector<shape_type>> input_facts(
        const state& s, const op_instance& inst, const std::map<std::size_t, std::size_t>& bound) {
        std::vector<spec::value_facts> in(inst.inputs.size());
        std::vector<shape_type> shapes(inst.inputs.size());
        for (std::size_t i = 0; i < inst.inputs.size(); ++i) {
            const auto& x = inst.inputs[i];
            shapes[i] = x.shape;
            if (x.role == input_role::bound) {
                in[i] = s.values[bound.at(i)].facts;
            } else if (x.role == input_role::constant && x.data) {
                in[i] = data_facts(*x.data);
            }
        }
        return {std::move(in), std::move(shapes)};
    }

    /// Adds the node of a solved instance; `inputs` names the bound slots'
    /// values; `out0` reuses a placeholder as output 0 (backward insertion);
    /// `out_facts` holds the facts of every output the instance can have.
    void add_node(state& s, const op_instance& inst, const std::map<std::size_t, std::size_t>& bound,
                  std::optional<std::size_t> out0, const std::vector<spec::value_facts>& out_facts, rng& g) const {
        graph::node n;
        n.op_type = std::string(inst.op->op_type);
        n.name = "n" + std::to_string(s.nodes.size()) + "_" + n.op_type;
        n.attributes = inst.attributes;
        for (std::size_t i = 0; i < inst.inputs.size(); ++i) {
            const auto& in = inst.inputs[i];
            switch (in.role) {
                case input_role::absent: n.inputs.emplace_back(); break;
                case input_role::bound: {
                    auto& v = s.values[bound.at(i)];
                    ++v.uses;
                    n.inputs.push_back(v.name);
                    break;
                }
                case input_role::placeholder:
                case input_role::constant: {
                    const std::size_t k = s.add_value(in.type, in.shape, true);
                    auto& v = s.values[k];
                    v.uses = 1;
                    v.range = in.range;
                    if (const auto* p = profile(n.op_type)) v.weight = p->hints.is_weight(i);
                    if (in.role == input_role::constant) {
                        v.fixed = true;
                        v.data = in.data;
                        if (in.data) v.facts = data_facts(*in.data);
                    }
                    n.inputs.push_back(v.name);
                    break;
                }
            }
        }
        while (!n.inputs.empty() && n.inputs.back().empty()) n.inputs.pop_back();
        // Outputs: the instance's count (Split), or every required one plus a
        // random prefix of the optional ones.
        std::size_t count = inst.output_count;
        const auto& outs = inst.op->outputs;
        const bool counted = std::any_of(inst.op->outputs.begin(), inst.op->outputs.end(),
                                         [](const spec::value_spec& v) { return v.variadic; });
        if (!counted) {
            count = 1;
            for (std::size_t o = 1; o < inst.output_shapes.size() && o < outs.size(); ++o) {
                if (cfg_.single_io && outs[o].optional) break;
                if (outs[o].optional && !g.bernoulli(0.5)) break;
                count = o + 1;
            }
        }
        count = std::min(count, inst.output_shapes.size());
        for (std::size_t o = 0; o < count; ++o) {
            if (o == 0 && out0) {
                s.values[*out0].placeholder = false;
                s.values[*out0].facts = out_facts[0].of_dtype(s.values[*out0].type);
                n.outputs.push_back(s.values[*out0].name);
                continue;
            }
            const std::size_t k = s.add_value(inst.output_dtypes[o], inst.output_shapes[o], false);
            s.values[k].facts = out_facts[o].of_dtype(inst.output_dtypes[o]);
            n.outputs.push_back(s.values[k].name);
            if (o == 0 && cfg_.single_io) s.leaf = k;
        }
        s.nodes.push_back(std::move(n));
    }

    bool insert_forward(const op_profile& p, state& s, rng& g, generation_stats& stats) const {
        const auto& op = *p.op;
        const std::size_t slots = op.inputs.size();
        // Type matching: slots with candidate values (dtype and rank fit).
        auto fits = [&](std::size_t slot, const value& v) {
            const auto& sp = op.inputs[std::min(slot, op.inputs.size() - 1)];
            // Inputs whose data the op's hints make (indices, switches) must not take a
            // graph value: its data would be whatever the graph computes.
            const auto* ih = p.hints.input(slot);
            if (ih != nullptr && (ih->before_solving || ih->after_solving)) return false;
            return !v.fixed && sp.types.contains(v.type) && sp.ranks.contains(v.shape.size());
        };
        std::vector<std::pair<std::size_t, std::size_t>> options;  // (slot, value)
        for (std::size_t slot = 0; slot < slots; ++slot) {
            if (cfg_.single_io) {
                if (fits(slot, s.values[s.leaf])) options.emplace_back(slot, s.leaf);
                continue;
            }
            for (std::size_t k = 0; k < s.values.size(); ++k) {
                if (fits(slot, s.values[k]) && (!s.values[k].placeholder || s.values[k].uses > 0 || s.values[k].seed)) {
                    options.emplace_back(slot, k);
                }
            }
        }
        if (options.empty()) {
            stats.rejected.add(std::string(op.op_type) + ": no value matches an input (forward)");
            return false;
        }
        // Prefer binding the first input: most ops read their main operand there.
        std::vector<std::pair<std::size_t, std::size_t>> first;
        for (const auto& o : options) {
            if (o.first == 0) first.push_back(o);
        }
        const auto& pool = (!first.empty() && g.bernoulli(0.7)) ? first : options;
        const auto [slot, k] = pool[g.below(pool.size())];
        std::map<std::size_t, std::size_t> bound{{slot, k}};
        instance_request req{&op, {{slot, {s.values[k].type, s.values[k].shape}}}, std::nullopt, cfg_.single_io};
        // Sometimes a second operand from the graph too (a DAG, not a chain).
        if (!cfg_.single_io && op.inputs.size() > 1 && g.bernoulli(0.3)) {
            std::vector<std::pair<std::size_t, std::size_t>> second;
            for (const auto& o : options) {
                if (o.first != slot && s.values[o.second].type == s.values[k].type) second.push_back(o);
            }
            if (!second.empty()) {
                const auto [slot2, k2] = second[g.below(second.size())];
                bound.emplace(slot2, k2);
                req.bound_inputs.emplace(slot2, typed_shape{s.values[k2].type, s.values[k2].shape});
            }
        }
        return place_forward(p, s, g, stats, bound, req).has_value();
    }

    /// Solves an instance of `p` reading the values `bound` (slot -> value index; `req`
    /// says their types) and adds it as a node, unless no instance exists, `accept`
    /// refuses every one of `tries`, or the consumed values leave its domain out of
    /// reach. Returns the index of the node's output 0.
    std::optional<std::size_t> place_forward(const op_profile& p, state& s, rng& g, generation_stats& stats,
                                             const std::map<std::size_t, std::size_t>& bound, const instance_request& req,
                                             const std::function<bool(const op_instance&)>& accept = {}, int tries = 1) const {
        const auto& op = *p.op;
        double solve_ms = 0.0;  // this call's time, when timed
        auto inst = timed_instance(p, req, g, stats, solve_ms);
        for (int t = 1; inst && accept && !accept(*inst); ++t) {
            if (t == tries) {
                stats.rejected.add(std::string(op.op_type) + ": no instance meets the motif's requirement");
                return std::nullopt;
            }
            inst = timed_instance(p, req, g, stats, solve_ms);
        }
        if (!inst) return std::nullopt;
        auto [in_facts, in_shapes] = input_facts(s, *inst, bound);
        if (p.vulnerable || p.domain_per_instance) {
            // A domain the consumed values cannot reach: no data would make the node finite.
            std::vector<std::optional<dtype>> in_dtypes;
            for (const auto& x : inst->inputs) {
                in_dtypes.push_back(x.role == input_role::absent ? std::nullopt : std::optional<dtype>(x.type));
            }
            if (check_domain(p, inst->attributes, in_facts, in_dtypes, in_shapes, inst->output_shapes)) {
                stats.rejected.add(std::string(op.op_type) + ": its domain is out of reach of the values (forward)");
                stats.times.move_to_dropped(solve_ms);
                return std::nullopt;
            }
            for (const auto& [b_slot, b_value] : bound) s.values[b_value].facts = in_facts[b_slot];
        }
        auto out_facts = output_facts(p, inst->attributes, in_facts, in_shapes, inst->output_shapes.size(), inst->output_shapes);
        if (bound.size() == 2 && bound.count(0) != 0 && bound.count(1) != 0 && bound.at(0) == bound.at(1)) {
            equal_operands(p, out_facts);
        }
        const std::size_t first_new = s.values.size();
        add_node(s, *inst, bound, std::nullopt, out_facts, g);
        // Output 0 is the first value add_node made after the new placeholders.
        const auto& out0 = s.nodes.back().outputs.front();
        for (std::size_t k = first_new; k < s.values.size(); ++k) {
            if (s.values[k].name == out0) return k;
        }
        return std::nullopt;
    }

    bool insert_backward(const op_profile& p, state& s, rng& g, generation_stats& stats) const {
        const auto& op = *p.op;
        if (op.outputs.empty()) return false;
        const auto& out = op.outputs[0];
        std::vector<std::size_t> cands;
        for (std::size_t k = 0; k < s.values.size(); ++k) {
            const auto& v = s.values[k];
            if (v.placeholder && !v.fixed && out.types.contains(v.type) && out.ranks.contains(v.shape.size())) cands.push_back(k);
        }
        if (cands.empty()) {
            stats.rejected.add(std::string(op.op_type) + ": no placeholder matches its output (backward)");
            return false;
        }
        const std::size_t k = cands[g.below(cands.size())];
        const instance_request req{&op, {}, typed_shape{s.values[k].type, s.values[k].shape}, false};
        double solve_ms = 0.0;  // this call's time, when timed
        auto inst = timed_instance(p, req, g, stats, solve_ms);
        if (!inst) return false;
        // The placeholder's readers were placed when it could hold anything:
        // what the op produces must leave their domains within reach.
        const auto [in_facts, in_shapes] = input_facts(s, *inst, {});
        auto produced =
            output_facts(p, inst->attributes, in_facts, in_shapes, std::max<std::size_t>(inst->output_shapes.size(), 1),
                         inst->output_shapes);
        produced[0] = produced[0].of_dtype(s.values[k].type);
        if (!produced[0].is_unknown() && leaves_reader_out_of_reach(s, k, produced[0])) {
            stats.rejected.add(std::string(op.op_type) + ": a reader's domain would be out of reach (backward)");
            stats.times.move_to_dropped(solve_ms);
            return false;
        }
        add_node(s, *inst, {}, k, produced, g);
        return true;
    }

    /// Whether value k holding `facts` leaves a vulnerable reader's domain out of reach.
    bool leaves_reader_out_of_reach(const state& s, std::size_t k, const spec::value_facts& facts) const {
        const std::string& name = s.values[k].name;
        for (const auto& n : s.nodes) {
            if (std::find(n.inputs.begin(), n.inputs.end(), name) == n.inputs.end()) continue;
            const auto* q = profile(n.op_type);
            if (q == nullptr || (!q->vulnerable && !q->domain_per_instance)) continue;
            std::vector<spec::value_facts> in;
            std::vector<std::optional<dtype>> in_dtypes;
            std::vector<shape_type> in_shapes, out_shapes;
            auto find = [&](const std::string& v_name) {
                return std::find_if(s.values.begin(), s.values.end(), [&](const value& v) { return v.name == v_name; });
            };
            for (const auto& output : n.outputs) {
                const auto it = find(output);
                out_shapes.push_back(output.empty() || it == s.values.end() ? shape_type{} : it->shape);
            }
            for (const auto& input : n.inputs) {
                const auto it = find(input);
                in_dtypes.push_back(input.empty() || it == s.values.end() ? std::nullopt : std::optional<dtype>(it->type));
                in_shapes.push_back(input.empty() || it == s.values.end() ? shape_type{} : it->shape);
                if (input == name) {
                    in.push_back(facts);
                    continue;
                }
                in.push_back(input.empty() || it == s.values.end() ? spec::value_facts{} : it->facts);
            }
            if (check_domain(*q, n.attributes, in, in_dtypes, in_shapes, out_shapes)) return true;
        }
        return false;
    }

    graph_sketch finish(state& s, rng& g) const {
        graph_sketch out;
        out.motifs = std::move(s.motifs);
        auto& m = out.model;
        m.name = "tensoracle_generated";
        m.opset = cfg_.opset;
        // Placeholders become graph inputs or weights; fixed data becomes initializers.
        std::vector<std::size_t> free;
        for (std::size_t k = 0; k < s.values.size(); ++k) {
            const auto& v = s.values[k];
            if (!v.placeholder) continue;
            if (v.uses == 0 && !v.seed) continue;
            if (v.fixed) {
                m.initializers.emplace(v.name, *v.data);
                out.fixed.insert(v.name);
                continue;
            }
            free.push_back(k);
        }
        bool any_input = false;
        for (const std::size_t k : free) {
            const auto& v = s.values[k];
            if (v.uses == 0) continue;  // an unconsumed seed (every insertion went elsewhere)
            const bool drawn = cfg_.single_io ? !v.seed : g.bernoulli(v.weight ? cfg_.weight_probability : cfg_.initializer_probability);
            const bool weight = drawn && !v.graph_input;
            if (weight) {
                m.initializers.emplace(v.name, tensor::zeros(v.type, v.shape));  // data from the input search
            } else {
                m.inputs.push_back({v.name, v.type, v.shape});
                any_input = true;
            }
            if (v.range) out.ranges.emplace(v.name, *v.range);
        }
        if (!any_input) {
            // Keep one graph input: a model of constants only is folded away whole by most backends.
            for (const std::size_t k : free) {
                const auto& v = s.values[k];
                if (v.uses == 0 || !m.initializers.count(v.name)) continue;
                m.initializers.erase(v.name);
                m.inputs.push_back({v.name, v.type, v.shape});
                break;
            }
        }
        // Nodes in topological order (ONNX requires it): Kahn's algorithm in
        // graph::topological_order's order (the smallest ready node first),
        // over value indices rather than names: every value is "v<k>", the
        // k-th of s.values. The generator's graphs are checked by our
        // validation and ONNX's in the tests, not on every draw.
        const auto index_of = [](const std::string& name) {
            std::size_t k = 0;
            std::from_chars(name.data() + 1, name.data() + name.size(), k);
            return k;
        };
        const std::size_t node_count = s.nodes.size();
        std::vector<int> producer(s.values.size(), -1);
        for (std::size_t i = 0; i < node_count; ++i) {
            for (const auto& o : s.nodes[i].outputs) {
                if (!o.empty()) producer[index_of(o)] = static_cast<int>(i);
            }
        }
        std::vector<std::vector<std::size_t>> users(node_count);
        std::vector<std::size_t> pending(node_count, 0);
        std::vector<char> consumed(s.values.size(), 0);
        std::vector<int> deps;
        for (std::size_t i = 0; i < node_count; ++i) {
            deps.clear();
            for (const auto& in : s.nodes[i].inputs) {
                if (in.empty()) continue;
                const std::size_t k = index_of(in);
                consumed[k] = 1;
                if (producer[k] >= 0) deps.push_back(producer[k]);
            }
            std::sort(deps.begin(), deps.end());
            deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
            pending[i] = deps.size();
            for (const int d : deps) users[static_cast<std::size_t>(d)].push_back(i);
        }
        std::vector<std::size_t> ready;
        for (std::size_t i = node_count; i-- > 0;) {
            if (pending[i] == 0) ready.push_back(i);
        }
        while (!ready.empty()) {
            const std::size_t i = ready.back();
            ready.pop_back();
            out.op_types.push_back(s.nodes[i].op_type);
            m.nodes.push_back(std::move(s.nodes[i]));
            for (const std::size_t u : users[i]) {
                if (--pending[u] == 0) ready.push_back(u);
            }
        }
        if (m.nodes.size() != node_count) throw error("tensoracle::gen::generator", "internal: the generated graph has a cycle");
        // Shapes and dtypes by name, inserted in name order (each insertion at the end).
        std::vector<std::size_t> by_name(s.values.size());
        for (std::size_t k = 0; k < by_name.size(); ++k) by_name[k] = k;
        std::sort(by_name.begin(), by_name.end(), [&](std::size_t a, std::size_t b) { return s.values[a].name < s.values[b].name; });
        for (const std::size_t k : by_name) {
            out.shapes.emplace_hint(out.shapes.end(), s.values[k].name, s.values[k].shape);
            out.dtypes.emplace_hint(out.dtypes.end(), s.values[k].name, s.values[k].type);
        }
        // Outputs: node outputs nothing consumes.
        for (const auto& n : m.nodes) {
            for (const auto& o : n.outputs) {
                if (o.empty()) continue;
                const std::size_t k = index_of(o);
                if (consumed[k] != 0) continue;
                if (cfg_.single_io && k != s.leaf) continue;
                const auto& v = s.values[k];
                m.outputs.push_back({v.name, v.type, v.shape});
            }
        }
        return out;
    }

    // --- motifs ----------------------------------------------------------------
    [[nodiscard]] const motif& motif_at(std::size_t k) const {
        const auto& b = builtin_motifs();
        return k < b.size() ? b[k] : cfg_.user_motifs[k - b.size()];
    }

    /// The motifs whose every op this config generates, weighted (motifs_).
    void collect_motifs() {
        const char* where = "tensoracle::gen::generator";
        const auto& b = builtin_motifs();
        std::set<std::string> names;
        auto consider = [&](std::size_t k, bool user) {
            const auto& m = motif_at(k);
            names.insert(m.name);
            double w = m.weight;
            if (const auto it = cfg_.motif_weights.find(m.name); it != cfg_.motif_weights.end()) w = it->second;
            for (const auto& st : m.steps) {
                if (ops::find_op(st.op) == nullptr) {
                    if (user) throw error(where, "motif '" + m.name + "' names op '" + st.op + "', which has no spec");
                    return;
                }
                if (profile(st.op) == nullptr) return;  // the config leaves it out
            }
            if (w > 0.0) motifs_.emplace_back(k, w);
        };
        if (cfg_.builtin_motifs) {
            for (std::size_t k = 0; k < b.size(); ++k) consider(k, false);
        }
        for (std::size_t k = 0; k < cfg_.user_motifs.size(); ++k) consider(b.size() + k, true);
        for (const auto& [n, w] : cfg_.motif_weights) {
            if (names.count(n) == 0) throw error(where, "motif_weights names '" + n + "', which is no motif drawn from (builtin_motifs, user_motifs)");
        }
    }

    /// The shape a motif's new operand takes (motif_source::shape) against `ref`.
    static shape_type motif_shape(const std::string& kind, const shape_type& ref) {
        if (kind == "same") return ref;
        if (kind == "scalar" || ref.empty()) return {};
        if (kind == "last") return {ref.back()};
        if (kind == "channel") {
            if (ref.size() < 2) return {ref.back()};
            shape_type s(ref.size() - 1, 1);
            s[0] = ref[1];
            return s;
        }
        // "axisK": ones of ref's rank, ref's dim at K (a constant broadcast along another axis).
        const std::size_t k = std::stoul(kind.substr(4));
        shape_type s(ref.size(), 1);
        if (k < ref.size()) s[k] = ref[k];
        return s;
    }

    /// Whether `inst` meets the motif step's requirements (motif_requirements).
    [[nodiscard]] bool meets(const op_profile& p, const op_instance& inst, const std::vector<std::string>& require) const {
        auto attr = [&](const char* name) -> const spec::attribute_value* {
            if (const auto it = inst.attributes.find(name); it != inst.attributes.end()) return &it->second;
            if (const auto it = p.defaults.find(name); it != p.defaults.end()) return &it->second;
            return nullptr;
        };
        const auto rank = static_cast<std::int64_t>(inst.inputs.empty() ? 0 : inst.inputs[0].shape.size());
        for (const auto& r : require) {
            if (r == "last_axis") {
                const auto* a = attr("axes");
                const auto* b = a == nullptr ? attr("axis") : nullptr;
                if (a != nullptr) {
                    const auto* v = std::get_if<std::vector<std::int64_t>>(a);
                    if (v == nullptr || v->size() != 1 || ((*v)[0] != -1 && (*v)[0] != rank - 1)) return false;
                } else if (b != nullptr) {
                    const auto* v = std::get_if<std::int64_t>(b);
                    if (v == nullptr || (*v != -1 && *v != rank - 1)) return false;
                } else if (rank != 1) {
                    return false;  // a reduction over every axis
                }
            } else if (r == "keepdims") {
                const auto* a = attr("keepdims");
                const auto* v = a ? std::get_if<std::int64_t>(a) : nullptr;
                if (v != nullptr && *v == 0) return false;
            } else if (r == "swap_last_two") {
                const auto* a = attr("perm");
                const auto* v = a ? std::get_if<std::vector<std::int64_t>>(a) : nullptr;
                if (rank < 2 || (v != nullptr && v->size() != static_cast<std::size_t>(rank))) return false;
                if (v == nullptr) {
                    if (rank != 2) return false;  // the default reverses every axis
                } else {
                    for (std::int64_t i = 0; i < rank; ++i) {
                        const std::int64_t want = i < rank - 2 ? i : (i == rank - 2 ? rank - 1 : rank - 2);
                        if ((*v)[static_cast<std::size_t>(i)] != want) return false;
                    }
                }
            } else if (r == "two_d") {
                if (inst.output_shapes.empty() || inst.output_shapes[0].size() != 2) return false;
            } else if (r == "same_type") {
                const auto* a = attr("to");
                const auto* v = a ? std::get_if<std::int64_t>(a) : nullptr;
                if (v == nullptr || inst.inputs.empty() || *v != onnx_type(inst.inputs[0].type)) return false;
            } else if (r == "constant_mode") {
                const auto* a = attr("mode");
                const auto* v = a ? std::get_if<std::string>(a) : nullptr;
                if (v != nullptr && *v != "constant") return false;
            } else if (r == "no_bias") {
                if (inst.inputs.size() > 2 && inst.inputs[2].role != input_role::absent) return false;
            } else if (r == "same_shape") {
                if (inst.output_shapes.empty() || inst.inputs.empty() || inst.output_shapes[0] != inst.inputs[0].shape) return false;
            }
        }
        return true;
    }

    /// A motif's steps varied one way (motif_variant), chosen from `g`.
    static motif_variant vary(std::vector<motif_step>& steps, const std::vector<const op_profile*>& profiles, rng& g) {
        const auto v = static_cast<motif_variant>(1 + g.below(6));
        auto pick_step = [&](auto&& usable) -> std::optional<std::size_t> {
            std::vector<std::size_t> c;
            for (std::size_t i = 0; i < steps.size(); ++i) {
                if (usable(i)) c.push_back(i);
            }
            if (c.empty()) return std::nullopt;
            return c[g.below(c.size())];
        };
        auto is_made = [](const motif_source& s) {
            return s.what == motif_source::kind::weight || s.what == motif_source::kind::constant || s.what == motif_source::kind::input;
        };
        switch (v) {
            case motif_variant::other_slot: {
                // The producer read through another input slot (Relu feeding Clip's max).
                const auto i = pick_step([&](std::size_t j) { return j > 0 && profiles[j]->op->inputs.size() > 1 && steps[j].inputs.count(0) != 0; });
                if (!i) return motif_variant::exact;
                auto& in = steps[*i].inputs;
                const std::size_t n = profiles[*i]->op->inputs.size();
                const std::size_t to = 1 + g.below(n - 1);
                const auto from = in.at(0);
                if (const auto it = in.find(to); it != in.end()) {
                    in[0] = it->second;
                } else {
                    in.erase(0);
                }
                in[to] = from;
                return v;
            }
            case motif_variant::requirement_dropped: {
                const auto i = pick_step([&](std::size_t j) { return !steps[j].require.empty(); });
                if (!i) return motif_variant::exact;
                steps[*i].require.clear();
                return v;
            }
            case motif_variant::computed_constant:
            case motif_variant::other_broadcast: {
                std::vector<std::pair<std::size_t, std::size_t>> made;
                for (std::size_t i = 0; i < steps.size(); ++i) {
                    for (const auto& [slot, src] : steps[i].inputs) {
                        if (is_made(src) && (v == motif_variant::computed_constant ? src.what != motif_source::kind::input : true)) {
                            made.emplace_back(i, slot);
                        }
                    }
                }
                if (made.empty()) return motif_variant::exact;
                const auto [i, slot] = made[g.below(made.size())];
                auto& src = steps[i].inputs.at(slot);
                if (v == motif_variant::computed_constant) {
                    src.what = motif_source::kind::input;
                    return v;
                }
                static constexpr const char* others[] = {"same", "scalar", "channel", "last", "axis2", "axis3"};
                std::string to = src.shape;
                while (to == src.shape) to = others[g.below(std::size(others))];
                src.shape = to;
                return v;
            }
            case motif_variant::cut_short:
                if (steps.size() < 2) return motif_variant::exact;
                steps.pop_back();
                return v;
            default: return v;  // extra_consumer: placed after the chain
        }
    }

    /// Splices one motif into `s`: its steps in order, each a forward insertion
    /// reading what the step names; stops at the first step no instance fits (the
    /// steps placed stay, a pattern cut short) or at max_nodes.
    void insert_motif(state& s, rng& g, generation_stats& stats, const growth_bias* bias = nullptr) const {
        auto weight = [&](const std::pair<std::size_t, double>& kw) {
            return bias && bias->motifs.contains(motif_at(kw.first).name) ? kw.second * bias->factor : kw.second;
        };
        double total = 0.0;
        for (const auto& kw : motifs_) total += weight(kw);
        double r = g.uniform() * total;
        std::size_t pick = 0;
        while (pick + 1 < motifs_.size() && r >= weight(motifs_[pick])) r -= weight(motifs_[pick++]);
        const motif& m = motif_at(motifs_[pick].first);
        std::vector<motif_step> steps = m.steps;
        std::vector<const op_profile*> profiles;
        for (const auto& st : steps) profiles.push_back(profile(st.op));
        const auto variant = g.bernoulli(cfg_.motif_near_miss) ? vary(steps, profiles, g) : motif_variant::exact;
        // x: a value of the graph that step 0's first read slot takes (as a forward insertion's).
        const auto& p0 = *profiles[0];
        std::size_t x_slot = 0;
        for (const auto& [slot, src] : steps[0].inputs) {
            if (src.what == motif_source::kind::previous) {
                x_slot = slot;
                break;
            }
        }
        const auto& sp0 = p0.op->inputs[std::min(x_slot, p0.op->inputs.size() - 1)];
        std::vector<std::size_t> xs;
        for (std::size_t k = 0; k < s.values.size(); ++k) {
            const auto& v = s.values[k];
            if (!v.fixed && sp0.types.contains(v.type) && sp0.ranks.contains(v.shape.size()) && (!v.placeholder || v.uses > 0 || v.seed)) xs.push_back(k);
        }
        if (xs.empty()) {
            stats.rejected.add("motif " + m.name + ": no value matches its first step");
            return;
        }
        const std::size_t x = xs[g.below(xs.size())];
        std::vector<std::size_t> outs;
        for (std::size_t i = 0; i < steps.size() && s.nodes.size() < cfg_.max_nodes; ++i) {
            const auto& st = steps[i];
            const auto& p = *profiles[i];
            const std::size_t ref = i == 0 ? x : outs.back();
            std::map<std::size_t, std::size_t> bound;
            instance_request req{p.op, {}, std::nullopt, false};
            bool fits = true;
            for (const auto& [slot, src] : st.inputs) {
                std::size_t k = 0;
                switch (src.what) {
                    case motif_source::kind::previous: k = ref; break;
                    case motif_source::kind::motif_input: k = x; break;
                    case motif_source::kind::step: k = outs.at(src.step); break;
                    case motif_source::kind::weight:
                    case motif_source::kind::input:
                    case motif_source::kind::constant: {
                        const dtype d = s.values[ref].type;
                        k = s.add_value(d, motif_shape(src.shape, s.values[ref].shape), true);
                        auto& v = s.values[k];
                        v.seed = false;
                        if (src.what == motif_source::kind::constant) {
                            tensor t = tensor::for_overwrite(d, v.shape);
                            const double fill = src.value;  // a structured binding: lambdas cannot capture it in C++20
                            t.visit([&](auto e) {
                                using T = typename decltype(e)::value_type;
                                for (auto& y : e) y = value_cast<T>(fill);
                            });
                            v.facts = data_facts(t);
                            v.data = std::move(t);
                            v.fixed = true;
                        } else {
                            v.weight = src.what == motif_source::kind::weight;
                            v.graph_input = src.what == motif_source::kind::input;
                            v.range = std::pair<double, double>{-1.0, 1.0};
                        }
                        break;
                    }
                }
                const auto& sp = p.op->inputs[std::min(slot, p.op->inputs.size() - 1)];
                if (slot >= p.op->inputs.size() && !sp.variadic) fits = false;
                if (!sp.types.contains(s.values[k].type) || !sp.ranks.contains(s.values[k].shape.size())) fits = false;
                bound[slot] = k;
                req.bound_inputs.emplace(slot, typed_shape{s.values[k].type, s.values[k].shape});
            }
            if (!fits) {
                stats.rejected.add("motif " + m.name + ": step " + std::to_string(i) + " (" + st.op + ") takes no value of these types");
                break;
            }
            std::function<bool(const op_instance&)> accept;
            if (!st.require.empty()) accept = [&](const op_instance& inst) { return meets(p, inst, st.require); };
            const auto out = place_forward(p, s, g, stats, bound, req, accept, 12);
            if (!out) break;
            outs.push_back(*out);
        }
        if (variant == motif_variant::extra_consumer && outs.size() >= 2 && s.nodes.size() < cfg_.max_nodes) {
            // One more reader of an intermediate: a fused value that must stay visible.
            const std::size_t k = outs[g.below(outs.size() - 1)];
            const auto& p = profiles_[g.below(profiles_.size())];
            const auto* ih = p.hints.input(0);
            const bool made_data = ih != nullptr && (ih->before_solving || ih->after_solving);
            if (!p.op->inputs.empty() && p.op->inputs[0].types.contains(s.values[k].type) &&
                p.op->inputs[0].ranks.contains(s.values[k].shape.size()) && !made_data) {
                instance_request req{p.op, {{0, {s.values[k].type, s.values[k].shape}}}, std::nullopt, false};
                (void)place_forward(p, s, g, stats, {{0, k}}, req);
            }
        }
        if (outs.size() >= 2) {
            const std::string name = variant == motif_variant::exact ? m.name : m.name + "/" + std::string(to_string(variant));
            s.motifs.push_back(name);
            ++stats.motifs[name];
        }
    }

    using clock = std::chrono::steady_clock;
    static double ms_since(clock::time_point t) { return std::chrono::duration<double, std::milli>(clock::now() - t).count(); }

    /// generate_instance, timed when stats.times is enabled (`ms`: this call's time).
    std::optional<op_instance> timed_instance(const op_profile& p, const instance_request& req, rng& g,
                                              generation_stats& stats, double& ms) const {
        if (!stats.times.enabled) return generate_instance(p, req, cfg_, g, stats.rejected, hooks_);
        const bool keep_last_before = stats.rejected.keep_last;
        stats.rejected.keep_last = true;
        stats.rejected.last.clear();
        const auto start = clock::now();
        auto inst = generate_instance(p, req, cfg_, g, stats.rejected, hooks_);
        ms = ms_since(start);
        stats.rejected.keep_last = keep_last_before;
        auto& t = stats.times;
        if (inst) {
            t.kept_ms += ms;
            ++t.kept;
            return inst;
        }
        t.refused_ms += ms;
        ++t.refused;
        // "<op>: <reason>" -> "<reason>"
        const std::string& why = stats.rejected.last;
        const auto colon = why.find(": ");
        auto& r = t.refused_by_reason[why.empty() ? std::string("(no reason recorded)")
                                      : colon == std::string::npos ? why : why.substr(colon + 2)];
        ++r.first;
        r.second += ms;
        return inst;
    }

    [[nodiscard]] const op_profile* profile(std::string_view op_type) const {
        const auto it = by_type_.find(op_type);
        return it == by_type_.end() ? nullptr : &profiles_[it->second];
    }

    config cfg_;
    instance_hooks hooks_;
    std::map<std::string, std::size_t, std::less<>> by_type_;  ///< op type -> index in profiles_
    std::vector<op_profile> profiles_;
    std::map<std::string, std::string> excluded_;
    std::vector<dtype> seed_dtypes_;
    /// Motifs drawn from: index (builtin_motifs, then config::user_motifs) and weight.
    std::vector<std::pair<std::size_t, double>> motifs_;
};

}  // namespace tensoracle::gen
