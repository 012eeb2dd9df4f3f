// tensoracle: what a system under test did with a case's graph, as rewrite events.
//
// A backend may report the graph it executed (docs/BACKENDS.md, "Rewrite
// feedback"): an ONNX file `rewritten.onnx` in its outputs folder (ONNX
// Runtime's optimizedModelFilePath), or `rewrites.json` naming the events
// itself (systems whose executed graph is not ONNX). Comparing the case's graph
// with the executed one gives events a person can check by opening both:
// which original nodes vanished, which executed nodes appeared, grouped by the
// tensors they share, and named by kind ("Conv+Relu -> com.microsoft::FusedConv",
// "Identity eliminated", "constant folding: Add"). Tool-independent: nothing
// here knows a rule of any system.
// Needs ONNX (libonnx, protobuf) and nlohmann/json, like campaign/backend.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "tensoracle/core/error.hpp"
#include "tensoracle/graph/graph.hpp"
#include "tensoracle/io/onnx.hpp"

namespace tensoracle::campaign {

/// One node as a system executed it: enough to match it with the case's nodes.
struct executed_node {
    std::string domain;  ///< "" for the default ONNX domain
    std::string op_type;
    std::vector<std::string> inputs, outputs;
    /// Attribute name -> its serialized AttributeProto: equal text, equal attribute.
    std::map<std::string, std::string> attributes;

    /// "Conv", or "com.microsoft::FusedConv" outside the default domain.
    [[nodiscard]] std::string qualified_op() const { return domain.empty() ? op_type : domain + "::" + op_type; }
};

/// A graph as executed: nodes, and the names of the constants it holds.
struct executed_graph {
    std::vector<executed_node> nodes;
    std::set<std::string> initializers;
};

/// What kind of change an event is. Fusions, eliminations, foldings and
/// replacements are what a compiler rewrites; insertions (a Cast around a
/// float16 island), layout changes and expanded function bodies are counted
/// apart, as they are how a system runs an op rather than an optimization.
enum class rewrite_class { fusion, elimination, folding, replacement, layout, insertion, expansion };

[[nodiscard]] constexpr std::string_view to_string(rewrite_class c) noexcept {
    switch (c) {
        case rewrite_class::fusion: return "fusion";
        case rewrite_class::elimination: return "elimination";
        case rewrite_class::folding: return "folding";
        case rewrite_class::replacement: return "replacement";
        case rewrite_class::layout: return "layout";
        case rewrite_class::insertion: return "insertion";
        case rewrite_class::expansion: return "expansion";
    }
    return "unknown";
}

/// The class a name (to_string's) stands for; empty for a name that is none.
[[nodiscard]] constexpr std::optional<rewrite_class> rewrite_class_named(std::string_view name) noexcept {
    for (const auto c : {rewrite_class::fusion, rewrite_class::elimination, rewrite_class::folding, rewrite_class::replacement,
                         rewrite_class::layout, rewrite_class::insertion, rewrite_class::expansion}) {
        if (name == to_string(c)) return c;
    }
    return std::nullopt;
}

/// Whether an event of this class is an optimization (what rewrite reach counts).
[[nodiscard]] constexpr bool is_optimization(rewrite_class c) noexcept {
    return c == rewrite_class::fusion || c == rewrite_class::elimination || c == rewrite_class::folding ||
           c == rewrite_class::replacement;
}

/// One rewrite: original nodes that vanished or changed, executed nodes that appeared.
struct rewrite_event {
    rewrite_class what = rewrite_class::fusion;
    std::string kind;                       ///< "Conv+Relu -> com.microsoft::FusedConv"
    std::vector<std::size_t> original;      ///< indices into the case's nodes (vanished or changed)
    std::vector<std::size_t> executed;      ///< indices into the executed nodes (appeared or changed)

    [[nodiscard]] nlohmann::json json() const { return {{"kind", kind}, {"class", to_string(what)}}; }
};

namespace detail {

[[nodiscard]] inline std::string normalized_domain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

[[nodiscard]] inline executed_node executed_from_proto(const onnx::NodeProto& np) {
    executed_node n;
    n.domain = normalized_domain(np.domain());
    n.op_type = np.op_type();
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    for (const auto& a : np.attribute()) {
        onnx::AttributeProto copy = a;
        copy.clear_doc_string();
        n.attributes.emplace(a.name(), copy.SerializeAsString());
    }
    return n;
}

}  // namespace detail

/// The case's graph in the form executed graphs are read in (attributes serialized
/// as io/onnx.hpp writes them, so an attribute a system left alone compares equal).
[[nodiscard]] inline executed_graph as_executed(const graph::graph& g) {
    const auto proto = io::to_model_proto(g);
    executed_graph out;
    for (const auto& np : proto.graph().node()) out.nodes.push_back(detail::executed_from_proto(np));
    for (const auto& [name, t] : g.initializers) out.initializers.insert(name);
    return out;
}

/// Reads an executed graph written as ONNX (`rewritten.onnx`). Node structure only:
/// initializer data is not decoded. Throws naming the file when it is not ONNX.
[[nodiscard]] inline executed_graph read_executed_onnx(const std::filesystem::path& path) {
    const std::string where = "tensoracle::campaign::read_executed_onnx(" + path.string() + ")";
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(where, "cannot open the file");
    onnx::ModelProto m;
    if (!m.ParseFromIstream(&in)) throw error(where, "not a valid ONNX model (protobuf parse failed)");
    executed_graph out;
    for (const auto& np : m.graph().node()) out.nodes.push_back(detail::executed_from_proto(np));
    for (const auto& t : m.graph().initializer()) out.initializers.insert(t.name());
    // Attributes written by another serializer (ORT's) may order fields otherwise:
    // round-trip the ones the kit reads, so equal attributes give equal text.
    for (auto& n : out.nodes) {
        for (auto& [name, text] : n.attributes) {
            onnx::AttributeProto a;
            if (!a.ParseFromString(text)) continue;
            try {
                const auto v = io::detail::from_attribute(a, path.parent_path(), where);
                onnx::AttributeProto b;
                io::detail::to_attribute(name, v, b);
                text = b.SerializeAsString();
            } catch (const std::exception&) {
                // A kind the kit does not read (a graph, a sparse tensor): compared as written.
            }
        }
    }
    return out;
}

namespace detail {

/// Union-find over event members.
struct components {
    std::vector<std::size_t> parent;
    explicit components(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), std::size_t{0}); }
    std::size_t find(std::size_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    }
    void join(std::size_t a, std::size_t b) { parent[find(a)] = find(b); }
};

[[nodiscard]] inline bool shares_name(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    for (const auto& x : a) {
        if (!x.empty() && std::find(b.begin(), b.end(), x) != b.end()) return true;
    }
    return false;
}

/// "A+B+A": op names in order, with multiplicity (a pattern's shape), or sorted and
/// unique ("Add, Mul": what a folding or elimination removed, whatever its order).
[[nodiscard]] inline std::string op_list(const std::vector<std::string>& ops, bool as_set) {
    std::vector<std::string> v = ops;
    if (as_set) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    std::string s;
    for (const auto& o : v) s += (s.empty() ? "" : as_set ? ", " : "+") + o;
    return s;
}

}  // namespace detail

/// The rewrite events that turn `original` into `executed`.
///
/// Nodes are matched by op and domain, first on equal outputs, then on equal inputs,
/// then on any shared tensor name; a matched node whose attributes changed, or that
/// reads a constant the case does not have (a folded weight), is *changed*. Vanished
/// (unmatched original), appeared (unmatched executed) and changed nodes are grouped
/// by the tensors they share: original edges between vanished nodes, executed edges
/// between appeared ones, a shared output between a vanished and an appeared node (a
/// fused node keeps its pattern's last output name), edges between a changed node and
/// a vanished one. An appeared node that shares no output with a vanished one joins
/// those whose inputs it reads. Each group with a vanished or appeared node is one event.
[[nodiscard]] inline std::vector<rewrite_event> rewrite_events(const executed_graph& original, const executed_graph& executed_as_is) {
    const auto& on = original.nodes;
    std::set<std::string> original_names(original.initializers.begin(), original.initializers.end());
    for (const auto& n : on) {
        original_names.insert(n.inputs.begin(), n.inputs.end());
        original_names.insert(n.outputs.begin(), n.outputs.end());
    }
    // A Cast the system inserted (one side a name the case does not have: a float16
    // island run in float32) renames what it converts: the nodes between such Casts
    // are matched under the original names, and the Casts stay insertions.
    executed_graph renamed = executed_as_is;
    {
        std::map<std::string, std::string> alias;
        for (const auto& n : executed_as_is.nodes) {
            if (n.op_type != "Cast" || !n.domain.empty() || n.inputs.size() != 1 || n.outputs.size() != 1) continue;
            const bool in_known = original_names.count(n.inputs[0]) != 0, out_known = original_names.count(n.outputs[0]) != 0;
            if (in_known && !out_known) alias.emplace(n.outputs[0], n.inputs[0]);
            if (!in_known && out_known) alias.emplace(n.inputs[0], n.outputs[0]);
        }
        auto resolve = [&](std::string name) {
            for (int hops = 0; hops < 8; ++hops) {
                const auto it = alias.find(name);
                if (it == alias.end()) break;
                name = it->second;
            }
            return name;
        };
        for (auto& n : renamed.nodes) {
            const bool renaming_cast = n.op_type == "Cast" && n.domain.empty() && n.inputs.size() == 1 && n.outputs.size() == 1 &&
                                       (alias.count(n.outputs[0]) != 0 || alias.count(n.inputs[0]) != 0);
            if (renaming_cast) continue;
            for (auto& x : n.inputs) x = resolve(x);
            for (auto& x : n.outputs) x = resolve(x);
        }
    }
    const auto& executed = renamed;
    const auto& en = executed.nodes;
    // --- matching ---
    std::vector<long> match_of_original(on.size(), -1), match_of_executed(en.size(), -1);
    auto same_op = [&](std::size_t i, std::size_t j) { return on[i].op_type == en[j].op_type && on[i].domain == en[j].domain; };
    auto match_pass = [&](auto&& fits) {
        for (std::size_t j = 0; j < en.size(); ++j) {
            if (match_of_executed[j] >= 0) continue;
            for (std::size_t i = 0; i < on.size(); ++i) {
                if (match_of_original[i] >= 0 || !same_op(i, j) || !fits(on[i], en[j])) continue;
                match_of_original[i] = static_cast<long>(j);
                match_of_executed[j] = static_cast<long>(i);
                break;
            }
        }
    };
    match_pass([](const executed_node& a, const executed_node& b) { return a.outputs == b.outputs; });
    match_pass([](const executed_node& a, const executed_node& b) { return a.inputs == b.inputs; });
    match_pass([](const executed_node& a, const executed_node& b) {
        return detail::shares_name(a.outputs, b.outputs) || detail::shares_name(a.inputs, b.inputs);
    });
    // By structure, for what a system renamed wholesale (ORT runs a float16 island in
    // float32 under names of its own, its constants converted): same op, and each input
    // comes from the match of the original input's producer, or both from outside the
    // nodes (an equal graph input, or constants), looking through Casts nobody matched.
    {
        std::map<std::string, std::pair<std::size_t, std::size_t>> original_producer, executed_producer;  // name -> (node, output)
        for (std::size_t i = 0; i < on.size(); ++i) {
            for (std::size_t k = 0; k < on[i].outputs.size(); ++k) original_producer.emplace(on[i].outputs[k], std::pair{i, k});
        }
        for (std::size_t j = 0; j < en.size(); ++j) {
            for (std::size_t k = 0; k < en[j].outputs.size(); ++k) executed_producer.emplace(en[j].outputs[k], std::pair{j, k});
        }
        auto through_casts = [&](std::string name) {
            for (int hops = 0; hops < 8; ++hops) {
                const auto it = executed_producer.find(name);
                if (it == executed_producer.end()) break;
                const auto& c = en[it->second.first];
                if (c.op_type != "Cast" || !c.domain.empty() || match_of_executed[it->second.first] >= 0 || c.inputs.size() != 1) break;
                name = c.inputs[0];
            }
            return name;
        };
        auto same_source = [&](const std::string& original_input, const std::string& executed_input) {
            if (original_input.empty() || executed_input.empty()) return original_input.empty() && executed_input.empty();
            const auto e = through_casts(executed_input);
            const auto ep = executed_producer.find(e);
            const auto op = original_producer.find(original_input);
            if (ep != executed_producer.end()) {
                const auto m = match_of_executed[ep->second.first];
                return m >= 0 && op != original_producer.end() && op->second.first == static_cast<std::size_t>(m) &&
                       op->second.second == ep->second.second;
            }
            if (op != original_producer.end()) return false;
            const bool e_constant = executed.initializers.count(e) != 0, o_constant = original.initializers.count(original_input) != 0;
            return e_constant ? o_constant : e == original_input;
        };
        match_pass([&](const executed_node& a, const executed_node& b) {
            if (a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size()) return false;
            for (std::size_t k = 0; k < a.inputs.size(); ++k) {
                if (!same_source(a.inputs[k], b.inputs[k])) return false;
            }
            return true;
        });
    }
    // A Cast nobody matched is an insertion of its own (it joins no event), unless it
    // took the place of a vanished node, reading its input and writing its output
    // (CastLike expanded into a Cast).
    std::vector<char> inserted_cast(en.size(), 0);
    for (std::size_t j = 0; j < en.size(); ++j) {
        if (en[j].op_type != "Cast" || !en[j].domain.empty() || match_of_executed[j] >= 0) continue;
        bool replaces = false;
        for (std::size_t i = 0; i < on.size() && !replaces; ++i) {
            replaces = match_of_original[i] < 0 && on[i].op_type != "Cast" && detail::shares_name(on[i].outputs, en[j].outputs) &&
                       detail::shares_name(en[j].inputs, on[i].inputs);
        }
        inserted_cast[j] = replaces ? 0 : 1;
    }
    std::vector<char> changed(en.size(), 0);
    for (std::size_t j = 0; j < en.size(); ++j) {
        if (match_of_executed[j] < 0) continue;
        const auto& o = on[static_cast<std::size_t>(match_of_executed[j])];
        bool c = o.attributes != en[j].attributes;
        for (const auto& in : en[j].inputs) {
            // A constant the case did not have: a weight folded into this node.
            c = c || (!in.empty() && original_names.count(in) == 0 && executed.initializers.count(in) != 0);
        }
        changed[j] = c ? 1 : 0;
    }
    // --- grouping: members 0..on.size()-1 are original nodes, then executed ones ---
    const std::size_t off = on.size();
    detail::components u(on.size() + en.size());
    auto vanished = [&](std::size_t i) { return match_of_original[i] < 0; };
    // An inserted Cast is an event of its own: it joins nothing.
    auto appeared = [&](std::size_t j) { return match_of_executed[j] < 0 && !inserted_cast[j]; };
    for (std::size_t a = 0; a < on.size(); ++a) {
        if (!vanished(a)) continue;
        for (std::size_t b = 0; b < on.size(); ++b) {
            if (b != a && vanished(b) && detail::shares_name(on[a].outputs, on[b].inputs)) u.join(a, b);
        }
        for (std::size_t j = 0; j < en.size(); ++j) {
            if (appeared(j) && detail::shares_name(on[a].outputs, en[j].outputs)) u.join(a, off + j);
            if (!changed[j]) continue;
            const auto& m = on[static_cast<std::size_t>(match_of_executed[j])];
            if (detail::shares_name(on[a].outputs, m.inputs) || detail::shares_name(m.outputs, on[a].inputs) ||
                detail::shares_name(on[a].outputs, en[j].outputs)) {
                u.join(a, off + j);
            }
        }
    }
    for (std::size_t j = 0; j < en.size(); ++j) {
        if (!appeared(j)) continue;
        for (std::size_t k = 0; k < en.size(); ++k) {
            if (k != j && appeared(k) && detail::shares_name(en[j].outputs, en[k].inputs)) u.join(off + j, off + k);
        }
    }
    for (std::size_t j = 0; j < en.size(); ++j) {
        if (!appeared(j)) continue;
        bool tied = false;
        for (std::size_t a = 0; a < on.size() && !tied; ++a) tied = vanished(a) && u.find(a) == u.find(off + j);
        if (tied) continue;
        for (std::size_t a = 0; a < on.size(); ++a) {
            if (vanished(a) && detail::shares_name(on[a].inputs, en[j].inputs)) u.join(a, off + j);
        }
    }
    // --- events, in the order of their first member ---
    std::map<std::size_t, rewrite_event> by_root;
    std::vector<std::size_t> order;
    auto event_of = [&](std::size_t member) -> rewrite_event& {
        const auto r = u.find(member);
        auto [it, fresh] = by_root.try_emplace(r);
        if (fresh) order.push_back(r);
        return it->second;
    };
    for (std::size_t i = 0; i < on.size(); ++i) {
        if (vanished(i)) event_of(i).original.push_back(i);
    }
    for (std::size_t j = 0; j < en.size(); ++j) {
        if (appeared(j) || (inserted_cast[j] && match_of_executed[j] < 0)) event_of(off + j).executed.push_back(j);
    }
    // Changed nodes join an event only through a vanished neighbour.
    for (std::size_t j = 0; j < en.size(); ++j) {
        if (!changed[j]) continue;
        const auto it = by_root.find(u.find(off + j));
        if (it == by_root.end()) continue;
        it->second.original.push_back(static_cast<std::size_t>(match_of_executed[j]));
        it->second.executed.push_back(j);
    }
    std::vector<rewrite_event> events;
    for (const auto r : order) {
        auto e = std::move(by_root.at(r));
        std::sort(e.original.begin(), e.original.end());
        std::sort(e.executed.begin(), e.executed.end());
        std::vector<std::string> gone, kept_changed, came;
        bool folded = false, layout = false, default_domain_only = true;
        for (const auto i : e.original) {
            const auto q = on[i].qualified_op();
            (vanished(i) ? gone : kept_changed).push_back(q);
            if (vanished(i)) {
                for (const auto& o : on[i].outputs) folded = folded || executed.initializers.count(o) != 0;
            }
        }
        std::vector<std::string> all_original;
        for (const auto i : e.original) all_original.push_back(on[i].qualified_op());
        for (const auto j : e.executed) {
            if (match_of_executed[j] >= 0) continue;  // a changed node, not an appeared one
            came.push_back(en[j].qualified_op());
            layout = layout || en[j].domain == "com.microsoft.nchwc";
            default_domain_only = default_domain_only && en[j].domain.empty();
        }
        // A vanished op and an equal appeared one in one event are the same node,
        // renamed: only what differs is the rewrite.
        for (auto it = gone.begin(); it != gone.end();) {
            const auto c = std::find(came.begin(), came.end(), *it);
            if (c == came.end()) {
                ++it;
                continue;
            }
            came.erase(c);
            const auto a = std::find(all_original.begin(), all_original.end(), *it);
            if (a != all_original.end()) all_original.erase(a);
            it = gone.erase(it);
        }
        if (gone.empty() && came.empty()) continue;  // renamed only
        if (gone.empty()) {
            e.what = layout ? rewrite_class::layout : rewrite_class::insertion;
            e.kind = detail::op_list(came, true) + " inserted";
        } else if (came.empty() && kept_changed.empty()) {
            e.what = folded ? rewrite_class::folding : rewrite_class::elimination;
            e.kind = folded ? "constant folding: " + detail::op_list(gone, true) : detail::op_list(gone, true) + " eliminated";
            // One node gone whose twin (same op, inputs, attributes) stayed: common subexpression elimination.
            bool twin = false;
            for (const auto i : e.original) {
                if (!vanished(i)) continue;
                for (std::size_t t = 0; t < on.size() && !twin; ++t) {
                    twin = t != i && !vanished(t) && on[t].qualified_op() == on[i].qualified_op() && on[t].inputs == on[i].inputs &&
                           on[t].attributes == on[i].attributes;
                }
            }
            if (twin && !folded) e.kind = "common subexpression: " + detail::op_list(gone, true);
        } else if (came.empty()) {
            e.what = rewrite_class::fusion;
            e.kind = detail::op_list(all_original, false) + " -> " + detail::op_list(kept_changed, false);
        } else if (gone.size() == 1 && kept_changed.empty() && layout) {
            e.what = rewrite_class::layout;
            e.kind = detail::op_list(gone, false) + " -> " + detail::op_list(came, false);
        } else if (gone.size() == 1 && kept_changed.empty()) {
            // One op became others of the default domain: its function body, expanded
            // (LeakyRelu as Mul, Less and Where; CastLike as Cast).
            e.what = default_domain_only ? rewrite_class::expansion : rewrite_class::replacement;
            e.kind = detail::op_list(gone, false) + " -> " + detail::op_list(came, false);
        } else {
            e.what = rewrite_class::fusion;
            e.kind = detail::op_list(all_original, false) + " -> " + detail::op_list(came, false);
        }
        events.push_back(std::move(e));
    }
    return events;
}

/// Reads what a backend reported in its outputs folder: `rewritten.onnx` (compared
/// with `original`) or `rewrites.json` ({"events": [{"kind": ..., "class": ...}]},
/// events the backend names itself). Empty when it reported nothing. A report that
/// cannot be read is an event of its own kind ("unreadable rewrite report: ..."),
/// so a broken report is seen, not mistaken for a graph left alone.
[[nodiscard]] inline std::optional<std::vector<rewrite_event>> reported_rewrites(const graph::graph& original,
                                                                                const std::filesystem::path& outputs) {
    std::error_code ec;
    const auto onnx_file = outputs / "rewritten.onnx", json_file = outputs / "rewrites.json";
    auto unreadable = [](const std::string& why) {
        rewrite_event e;
        e.what = rewrite_class::insertion;
        e.kind = "unreadable rewrite report: " + why;
        return std::vector<rewrite_event>{e};
    };
    if (std::filesystem::exists(onnx_file, ec)) {
        try {
            return rewrite_events(as_executed(original), read_executed_onnx(onnx_file));
        } catch (const std::exception& e) {
            return unreadable(e.what());
        }
    }
    if (std::filesystem::exists(json_file, ec)) {
        try {
            std::ifstream in(json_file);
            const auto j = nlohmann::json::parse(in);
            std::vector<rewrite_event> out;
            for (const auto& je : j.at("events")) {
                rewrite_event e;
                e.kind = je.at("kind").get<std::string>();
                const auto c = je.value("class", std::string("fusion"));
                const auto what = rewrite_class_named(c);
                if (!what) throw error("tensoracle::campaign::reported_rewrites", "event class '" + c + "' is not one of fusion, elimination, folding, replacement, layout, insertion, expansion");
                e.what = *what;
                out.push_back(std::move(e));
            }
            return out;
        } catch (const std::exception& e) {
            return unreadable(json_file.filename().string() + ": " + e.what());
        }
    }
    return std::nullopt;
}

}  // namespace tensoracle::campaign
