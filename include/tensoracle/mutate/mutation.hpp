// tensoracle: semantics-preserving graph mutations, the common part.
//
// A mutation is a small named unit (TorchProbe's mutations, PolyJuice's
// equality rewrites): where it applies (a typed precondition over a node or a
// value: op, dtypes, shapes, attributes, and for EMI the values on the
// profiled inputs), what it rewrites, and its numeric class:
//   exact        the mutant computes the same values (data movement, identity
//                casts, guarded dead code): equal element by element on our
//                interpreter (+0 and -0 equal, NaN where the original has NaN);
//   approximate  the same function in real arithmetic, rounded differently
//                (reassociation, decompositions): equal at a GraphNet
//                tolerance level the mutation states, resolved per dtype.
// Mutations rewrite a `context`: the graph, the values of every tensor on the
// profiled inputs, names no scope uses yet, and a seeded rng, so a mutant is a
// pure function of (graph, inputs, seed).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensoracle/accuracy/tolerance.hpp"
#include "tensoracle/core/error.hpp"
#include "tensoracle/core/rng.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/graph/interpreter.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle::mutate {

/// How closely a mutant must agree with its original (see the header comment).
enum class numeric_class : std::uint8_t { exact, approximate };

/// The four families of the taxonomy.
enum class family : std::uint8_t {
    resolution,  ///< an op replaced by its decomposition
    recover,     ///< mutate-then-recover: a value changed and changed back
    rewrite,     ///< the identities compilers rewrite with, applied by us
    emi,         ///< equivalence modulo inputs: dead code behind guards true on the profiled inputs
};

inline constexpr family all_families[] = {family::resolution, family::recover, family::rewrite, family::emi};

[[nodiscard]] constexpr std::string_view to_string(numeric_class c) noexcept {
    return c == numeric_class::exact ? "exact" : "approximate";
}
[[nodiscard]] constexpr std::string_view to_string(family f) noexcept {
    switch (f) {
        case family::resolution: return "resolution";
        case family::recover: return "recover";
        case family::rewrite: return "rewrite";
        case family::emi: return "emi";
    }
    return "unknown";
}
/// The family named `s` ("resolution", "recover", "rewrite", "emi"); throws otherwise.
[[nodiscard]] inline family family_from_string(std::string_view s) {
    for (const auto f : all_families) {
        if (to_string(f) == s) return f;
    }
    throw error("tensoracle::mutate::family_from_string",
                "unknown mutation family '" + std::string(s) + "' (known: resolution, recover, rewrite, emi)");
}

/// One place a mutation applies, as its `sites` function found it.
struct site {
    static constexpr std::size_t no_node = std::numeric_limits<std::size_t>::max();
    std::size_t node = no_node;  ///< the node it rewrites, or no_node
    std::string value;           ///< the value it intercepts, or ""
    numeric_class numeric = numeric_class::exact;
    std::string op_type;         ///< the op it is anchored at ("" for a graph input or weight)
    dtype type = dtype::f32;     ///< the dtype it works in
    /// Values the rewrite reads and the values it redefines: an approximate
    /// rewrite's conditioning probe perturbs `rewritten` at the scale of `reads`.
    std::vector<std::string> reads, rewritten;
    [[nodiscard]] std::string where() const {
        return (op_type.empty() ? std::string("value") : op_type) + " " + std::string(name(type));
    }
};

/// The graph being mutated, what its values are on the profiled inputs, and the
/// means to rewrite it.
class context {
public:
    /// Profiles `g` on `feeds` (every graph input fed); the seed drives every random choice.
    context(graph::graph g, std::map<std::string, tensor, std::less<>> feeds, std::uint64_t seed)
        : graph_(std::move(g)), feeds_(std::move(feeds)), rng_(seed) {
        refresh();
    }

    [[nodiscard]] const graph::graph& graph() const noexcept { return graph_; }
    /// The graph, to rewrite: what producer() and readers() knew is forgotten.
    [[nodiscard]] graph::graph& graph() noexcept {
        index_.reset();
        return graph_;
    }
    [[nodiscard]] const std::map<std::string, tensor, std::less<>>& feeds() const noexcept { return feeds_; }
    /// Every value of the graph's own scope on the profiled inputs.
    [[nodiscard]] const std::map<std::string, tensor, std::less<>>& values() const noexcept { return values_; }
    [[nodiscard]] rng& random() noexcept { return rng_; }

    [[nodiscard]] const tensor& value(const std::string& v) const {
        const auto it = values_.find(v);
        if (it == values_.end()) throw error("tensoracle::mutate::context", "no profiled value '" + v + "'");
        return it->second;
    }
    [[nodiscard]] dtype dtype_of(const std::string& v) const { return value(v).element_dtype(); }
    [[nodiscard]] const shape_type& shape_of(const std::string& v) const { return value(v).shape(); }

    /// The node that defines `v`, if a node does.
    [[nodiscard]] std::optional<std::size_t> producer(const std::string& v) const {
        const auto& p = index().producer;
        const auto it = p.find(v);
        if (it == p.end()) return std::nullopt;
        return it->second;
    }
    /// The nodes that read `v` (as an input or from inside a branch), in node order.
    [[nodiscard]] const std::vector<std::size_t>& readers(const std::string& v) const {
        static const std::vector<std::size_t> none;
        const auto& r = index().readers;
        const auto it = r.find(v);
        return it == r.end() ? none : it->second;
    }
    [[nodiscard]] bool is_graph_output(const std::string& v) const {
        return std::any_of(graph_.outputs.begin(), graph_.outputs.end(), [&](const auto& o) { return o.name == v; });
    }
    [[nodiscard]] bool is_graph_input(const std::string& v) const {
        return std::any_of(graph_.inputs.begin(), graph_.inputs.end(), [&](const auto& o) { return o.name == v; });
    }
    [[nodiscard]] bool is_initializer(const std::string& v) const { return graph_.initializers.count(v) != 0; }

    /// Does op `op_type` take dtype `d` at input slot `k` in this graph's opset? The
    /// registry holds one version of each op: an older graph opset may take fewer
    /// dtypes (Add took no int8 before opset 14), so there only float16/32/64 count.
    [[nodiscard]] bool accepts(std::string_view op_type, std::size_t k, dtype d) const {
        const auto* op = ops::find_op(op_type);
        if (op == nullptr || op->inputs.empty()) return false;
        if (!op->inputs[std::min(k, op->inputs.size() - 1)].types.contains(d)) return false;
        return graph_.opset >= op->opset || d == dtype::f32 || d == dtype::f64 || d == dtype::f16;
    }

    /// A name no scope of the graph uses ("m<k>_<hint>").
    [[nodiscard]] std::string fresh(std::string_view hint) {
        for (;;) {
            std::string n = "m" + std::to_string(counter_++) + "_" + std::string(hint);
            if (used_.insert(n).second) return n;
        }
    }
    /// A new weight holding `t`; returns its name.
    std::string add_constant(tensor t, std::string_view hint = "c") {
        auto n = fresh(hint);
        graph().initializers.emplace(n, std::move(t));
        return n;
    }
    /// A 1-D int64 weight (shapes, axes, pads, split sizes).
    std::string add_ints(const std::vector<std::int64_t>& v, std::string_view hint = "i") {
        array<std::int64_t> a = xt::zeros<std::int64_t>({v.size()});
        std::copy(v.begin(), v.end(), a.begin());
        return add_constant(tensor(a), hint);
    }
    /// A rank-0 weight of dtype `d` holding `x` (converted with value_cast).
    std::string add_scalar(dtype d, double x, std::string_view hint = "s") { return add_constant(scalar(d, x), hint); }

    /// Appends a node; `outputs` names it writes (fresh names for empty ones). Returns its outputs.
    std::vector<std::string> add_node(std::string op_type, std::vector<std::string> inputs, std::vector<std::string> outputs,
                                      spec::attribute_map attributes = {}) {
        for (auto& o : outputs) {
            if (o.empty()) o = fresh(op_type);
        }
        graph::node n;
        n.op_type = std::move(op_type);
        n.inputs = std::move(inputs);
        n.outputs = outputs;
        n.attributes = std::move(attributes);
        graph().nodes.push_back(std::move(n));
        return outputs;
    }
    /// add_node for one output; returns its name.
    std::string add(std::string op_type, std::vector<std::string> inputs, spec::attribute_map attributes = {}, std::string output = {}) {
        return add_node(std::move(op_type), std::move(inputs), {std::move(output)}, std::move(attributes)).front();
    }

    /// Where a rewrite of value `v` plugs in: it reads `src` and must define `dst`,
    /// which every reader of `v` then reads. A value a node defines keeps its name for
    /// its readers (and as a graph output): the node's output is renamed `src`. A graph
    /// input or weight keeps its name as `src`; its readers move to a new `dst`.
    struct splice {
        std::string src, dst;
    };
    splice intercept(const std::string& v) {
        if (const auto p = producer(v)) {
            auto& outs = graph().nodes[*p].outputs;
            const auto src = fresh(v + "_pre");
            std::replace(outs.begin(), outs.end(), v, src);
            if (const auto it = values_.find(v); it != values_.end()) values_.insert_or_assign(src, it->second);  // same value until refresh
            return {src, v};
        }
        const auto dst = fresh(v + "_m");
        for (auto& n : graph().nodes) rename_reads(n, v, dst);
        if (const auto it = values_.find(v); it != values_.end()) values_.insert_or_assign(dst, it->second);
        return {v, dst};
    }

    /// Removes node `i` (its outputs must be defined again by the caller's new nodes).
    graph::node take_node(std::size_t i) {
        auto& nodes = graph().nodes;
        graph::node n = std::move(nodes.at(i));
        nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(i));
        return n;
    }

    /// Puts the nodes back in a topological order (ONNX requires it), validates the
    /// graph and profiles it again on the same inputs. Throws what validation or the
    /// interpreter throws.
    void refresh() {
        const auto order = graph_.topological_order();
        std::vector<graph::node> sorted;
        sorted.reserve(graph_.nodes.size());
        for (const auto i : order) sorted.push_back(std::move(graph_.nodes[i]));
        graph_.nodes = std::move(sorted);
        index_.reset();
        values_ = graph::run(graph_, feeds_, {.record_intermediates = true}).values;
        used_.clear();
        collect_names(graph_, used_);
    }

    /// A rank-0 tensor of dtype `d` holding `x`.
    [[nodiscard]] static tensor scalar(dtype d, double x) {
        tensor t = tensor::zeros(d, {});
        t.visit([&](auto s) { s[0] = value_cast<typename decltype(s)::value_type>(x); });
        return t;
    }

    /// Renames reads of `from` to `to` in `n`, inside its branches too.
    static void rename_reads(graph::node& n, const std::string& from, const std::string& to) {
        std::replace(n.inputs.begin(), n.inputs.end(), from, to);
        for (auto& [k, sub] : n.subgraphs) {
            for (auto& inner : sub->nodes) rename_reads(inner, from, to);
            for (auto& o : sub->outputs) {
                if (o.name == from) o.name = to;
            }
        }
    }

private:
    /// Who defines and who reads each value, computed when first asked after a change.
    struct value_index {
        std::map<std::string, std::size_t, std::less<>> producer;
        std::map<std::string, std::vector<std::size_t>, std::less<>> readers;
    };
    [[nodiscard]] const value_index& index() const {
        if (!index_) {
            value_index x;
            for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
                for (const auto& o : graph_.nodes[i].outputs) {
                    if (!o.empty()) x.producer.emplace(o, i);
                }
                for (const auto& r : graph::graph::reads(graph_.nodes[i])) x.readers[r].push_back(i);
            }
            index_ = std::move(x);
        }
        return *index_;
    }

    static void collect_names(const graph::graph& g, std::set<std::string>& out) {
        for (const auto& v : g.inputs) out.insert(v.name);
        for (const auto& v : g.outputs) out.insert(v.name);
        for (const auto& [k, t] : g.initializers) out.insert(k);
        for (const auto& n : g.nodes) {
            for (const auto& v : n.inputs) out.insert(v);
            for (const auto& v : n.outputs) out.insert(v);
            for (const auto& [k, sub] : n.subgraphs) collect_names(sub.get(), out);
        }
    }

    graph::graph graph_;
    std::map<std::string, tensor, std::less<>> feeds_;
    std::map<std::string, tensor, std::less<>> values_;
    rng rng_;
    std::set<std::string> used_;
    std::size_t counter_ = 0;
    mutable std::optional<value_index> index_;
};

/// One named mutation (a registry entry; see the family headers).
struct mutation {
    std::string_view name;
    mutate::family family = family::rewrite;
    std::string_view rewrites;      ///< what it does, in one line of formulas
    std::string_view precondition;  ///< where it applies, in words (its `sites` is the code)
    numeric_class numeric = numeric_class::exact;  ///< its class on floating data (integers may be exact)
    /// GraphNet level at which an approximate mutant agrees with its original.
    double level = -4.0;
    std::vector<site> (*sites)(const context&) = nullptr;
    void (*apply)(context&, const site&) = nullptr;
};

namespace detail {

[[nodiscard]] inline bool is_float(dtype d) noexcept { return info(d).is_floating; }

/// Does op `op_type` take dtype `d` at input slot `k` (in its registry version)?
[[nodiscard]] inline bool accepts(std::string_view op_type, std::size_t k, dtype d) {
    const auto* op = ops::find_op(op_type);
    if (op == nullptr || op->inputs.empty()) return false;
    return op->inputs[std::min(k, op->inputs.size() - 1)].types.contains(d);
}

/// The attribute `key` of `n` as an int, or `fallback` when absent.
[[nodiscard]] inline std::int64_t int_attr(const graph::node& n, std::string_view key, std::int64_t fallback) {
    const auto it = n.attributes.find(key);
    if (it == n.attributes.end()) return fallback;
    if (const auto* v = std::get_if<std::int64_t>(&it->second)) return *v;
    return fallback;
}
[[nodiscard]] inline double float_attr(const graph::node& n, std::string_view key, double fallback) {
    const auto it = n.attributes.find(key);
    if (it == n.attributes.end()) return fallback;
    if (const auto* v = std::get_if<double>(&it->second)) return *v;
    if (const auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
    return fallback;
}
[[nodiscard]] inline std::optional<std::vector<std::int64_t>> ints_attr(const graph::node& n, std::string_view key) {
    const auto it = n.attributes.find(key);
    if (it == n.attributes.end()) return std::nullopt;
    if (const auto* v = std::get_if<std::vector<std::int64_t>>(&it->second)) return *v;
    return std::nullopt;
}
[[nodiscard]] inline std::string str_attr(const graph::node& n, std::string_view key, std::string fallback) {
    const auto it = n.attributes.find(key);
    if (it == n.attributes.end()) return fallback;
    if (const auto* v = std::get_if<std::string>(&it->second)) return *v;
    return fallback;
}

/// The node's input k, or "" when absent.
[[nodiscard]] inline std::string input_or_empty(const graph::node& n, std::size_t k) { return k < n.inputs.size() ? n.inputs[k] : std::string(); }

/// Normalizes axis `a` for rank `r` (negative axes count from the end).
[[nodiscard]] inline std::int64_t norm_axis(std::int64_t a, std::size_t r) { return a < 0 ? a + static_cast<std::int64_t>(r) : a; }

/// A random permutation of 0..n-1 other than the identity where n > 1.
[[nodiscard]] inline std::vector<std::int64_t> random_permutation(rng& r, std::size_t n) {
    std::vector<std::int64_t> p(n);
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::int64_t>(i);
    for (int attempt = 0; attempt < 8; ++attempt) {
        for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[r.below(i)]);
        bool identity = true;
        for (std::size_t i = 0; i < n; ++i) identity = identity && p[i] == static_cast<std::int64_t>(i);
        if (!identity || n < 2) break;
    }
    return p;
}

/// The most elements a rewrite may materialize for a value of `n` elements (Pad):
/// 4 n, and never more than 2^20, so that a mutant costs what its original does.
[[nodiscard]] inline double padded_size_limit(std::size_t n) noexcept {
    return std::min(4.0 * static_cast<double>(std::max<std::size_t>(n, 16)), 1048576.0);
}

/// The largest finite value of dtype `d`, as a double.
[[nodiscard]] inline double max_finite(dtype d) noexcept {
    switch (d) {
        case dtype::f16: return 65504.0;
        case dtype::bf16: return 0x1.fep127;
        case dtype::f32: return static_cast<double>(std::numeric_limits<float>::max());
        case dtype::f64: return std::numeric_limits<double>::max();
        case dtype::i8: return 127.0;
        case dtype::i16: return 32767.0;
        case dtype::i32: return 2147483647.0;
        case dtype::i64: return 0x1p63;
        case dtype::u8: return 255.0;
        case dtype::boolean: return 1.0;
    }
    return 0.0;
}

/// The largest finite |x| of a floating tensor (0 for none).
[[nodiscard]] inline double max_abs(const tensor& t) {
    double m = 0.0;
    if (!is_float(t.element_dtype())) return m;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const double v = std::abs(t.value_as_double(i));
        if (std::isfinite(v)) m = std::max(m, v);
    }
    return m;
}

/// The mean finite |x| of a floating tensor (0 for none).
[[nodiscard]] inline double mean_abs(const tensor& t) {
    double sum = 0.0;
    std::size_t n = 0;
    if (!is_float(t.element_dtype())) return sum;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const double v = std::abs(t.value_as_double(i));
        if (std::isfinite(v)) {
            sum += v;
            ++n;
        }
    }
    return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

/// Sites of one op type: every node of `op_type` whose first output is profiled.
template <class Accept>
[[nodiscard]] std::vector<site> node_sites(const context& c, std::string_view op_type, numeric_class numeric, Accept&& accept) {
    std::vector<site> out;
    const auto& g = c.graph();
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const auto& n = g.nodes[i];
        if (n.op_type != op_type || n.outputs.empty() || n.outputs[0].empty() || c.values().count(n.outputs[0]) == 0) continue;
        if (!accept(n)) continue;
        site s;
        s.node = i;
        s.op_type = n.op_type;
        s.type = c.dtype_of(n.outputs[0]);
        s.numeric = is_float(s.type) ? numeric : numeric_class::exact;
        for (const auto& in : n.inputs) {
            if (!in.empty()) s.reads.push_back(in);
        }
        for (const auto& o : n.outputs) {
            if (!o.empty()) s.rewritten.push_back(o);
        }
        out.push_back(std::move(s));
    }
    return out;
}

/// Sites at values: every profiled value of the graph's scope `accept`s (graph
/// inputs, weights and node outputs alike), anchored at its producer's op.
template <class Accept>
[[nodiscard]] std::vector<site> value_sites(const context& c, numeric_class numeric, Accept&& accept) {
    std::vector<site> out;
    const auto& g = c.graph();
    auto consider = [&](const std::string& v, const std::string& op) {
        if (v.empty() || c.values().count(v) == 0) return;
        // A value nobody reads and no output shows is dead: rewriting it tests nothing.
        if (c.readers(v).empty() && !c.is_graph_output(v)) return;
        if (!accept(v)) return;
        site s;
        s.value = v;
        s.op_type = op;
        s.type = c.dtype_of(v);
        s.numeric = is_float(s.type) ? numeric : numeric_class::exact;
        s.reads = {v};
        s.rewritten = {v};
        out.push_back(std::move(s));
    };
    for (const auto& in : g.inputs) consider(in.name, "");
    for (const auto& [k, t] : g.initializers) consider(k, "");
    for (const auto& n : g.nodes) {
        for (const auto& o : n.outputs) consider(o, n.op_type);
    }
    return out;
}

}  // namespace detail

}  // namespace tensoracle::mutate
