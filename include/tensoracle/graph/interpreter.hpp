// tensoracle: runs a graph on the reference kernels, node by node in a
// topological order, optionally recording every intermediate value (for
// input search, reduction and EMI later).
#pragma once

#include <algorithm>
#include <cstdint>
#include <new>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/graph/control_flow.hpp"
#include "tensoracle/graph/graph.hpp"
#include "tensoracle/ops/registry.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::graph {

/// Attribute the interpreter sets on ops that declare it: the node's output
/// count (Split-13 infers its number of outputs from the node).
inline constexpr std::string_view num_outputs_attribute = "__num_outputs";

struct run_options {
    bool record_intermediates = false;
};

struct run_result {
    std::map<std::string, tensor, std::less<>> outputs;  // graph outputs
    std::map<std::string, tensor, std::less<>> values;   // every value, if recorded
};

/// The attributes op receives for node n: the node's own, plus the node's
/// output count for ops whose outputs are counted that way (Split).
[[nodiscard]] inline spec::attribute_map call_attributes(const spec::op_entry& op, const node& n) {
    auto attrs = n.attributes;
    const auto names = op.attribute_names();
    if (std::find(names.begin(), names.end(), num_outputs_attribute) != names.end()) {
        attrs.insert_or_assign(std::string(num_outputs_attribute), static_cast<std::int64_t>(n.outputs.size()));
    }
    return attrs;
}

namespace detail {
inline void check_feed(const value_info& v, const tensor& t, const std::string& where) {
    if (t.element_dtype() != v.type) {
        throw dtype_error(where, "input '" + v.name + "' is declared " + std::string(name(v.type)) + " but fed " +
                                     std::string(name(t.element_dtype())));
    }
    if (v.shape && *v.shape != t.shape()) {
        throw shape_error(
            where, "input '" + v.name + "' is declared " + to_string(*v.shape) + " but fed " + to_string(t.shape()));
    }
}
using tensoracle::detail::rethrow_with_context;
}  // namespace detail

namespace detail {
/// The values one graph defines, and the scopes around it (a branch reads its
/// enclosing graphs' values by name without copying them).
struct scope {
    std::map<std::string, tensor, std::less<>> values;
    const scope* parent = nullptr;
    [[nodiscard]] const tensor* find(std::string_view name) const {
        for (const scope* s = this; s != nullptr; s = s->parent) {
            if (const auto it = s->values.find(name); it != s->values.end()) return &it->second;
        }
        return nullptr;
    }
    [[nodiscard]] const tensor& at(const std::string& name, const std::string& where) const {
        if (const tensor* t = find(name)) return *t;
        throw error(where, "value '" + name + "' is not defined when it is read");
    }
};

/// Runs g's nodes in `order` within scope `s` (g's inputs and initializers already there).
inline void run_nodes(const graph& g, const std::vector<std::size_t>& order, scope& s, const std::string& where);

/// Runs the branch of If node `n` that its cond selects; returns its outputs.
inline std::vector<tensor> run_if(const node& n, const scope& s, const std::string& where) {
    const graph& branch = if_spec::select(n, s.at(n.inputs[0], where), where);
    scope inner;
    inner.parent = &s;
    for (const auto& [k, t] : branch.initializers) inner.values.emplace(k, t);
    const std::string at = where + ", node " + n.label() + " (" + branch.name + ")";
    // The branch was checked with the graph; its order is computed for this run.
    std::set<std::string, std::less<>> outer;
    for (const scope* p = &s; p != nullptr; p = p->parent) {
        for (const auto& [k, t] : p->values) outer.insert(k);
    }
    run_nodes(branch, branch.topological_order(outer), inner, at);
    std::vector<tensor> out;
    for (const auto& o : branch.outputs) {
        const tensor& t = inner.at(o.name, at);
        if (t.element_dtype() != o.type) {
            throw dtype_error(at, "branch output '" + o.name + "' is declared " + std::string(name(o.type)) + " but holds " +
                                      std::string(name(t.element_dtype())));
        }
        out.push_back(t);
    }
    return out;
}

inline void run_nodes(const graph& g, const std::vector<std::size_t>& order, scope& s, const std::string& where) {
    for (const std::size_t i : order) {
        const auto& n = g.nodes[i];
        std::vector<tensor> out;
        if (is_control_flow(n.op_type)) {
            out = run_if(n, s, where);
        } else {
            const auto& op = ops::get_op(n.op_type);
            std::vector<const tensor*> args;
            for (const auto& in : n.inputs) args.push_back(in.empty() ? nullptr : &s.at(in, where));
            while (!args.empty() && args.back() == nullptr) args.pop_back();
            const auto attrs = call_attributes(op, n);
            try {
                out = spec::evaluate(op, args, attrs);
            } catch (const error& e) {
                rethrow_with_context(e, where, "node " + n.label() + ": ");
            } catch (const std::bad_alloc&) {
                // A kernel's own work array past what check_kernel_memory foresaw.
                std::uint64_t in = 0;
                for (const tensor* a : args) in += a != nullptr ? a->nbytes() : 0;
                throw memory_error(where, "node " + n.label() + ": the kernel could not allocate its work arrays (inputs " +
                                              memory_size_text(in) + ", " + memory_size_text(memory_in_use()) + " in use)",
                                   0, memory_limit());
            }
        }
        if (n.outputs.size() > out.size()) {
            throw error(where, "node " + n.label() + " names " + std::to_string(n.outputs.size()) + " outputs; " +
                                   n.op_type + " produced " + std::to_string(out.size()));
        }
        for (std::size_t o = 0; o < n.outputs.size(); ++o) {
            if (!n.outputs[o].empty()) s.values.insert_or_assign(n.outputs[o], std::move(out[o]));
        }
    }
}
}  // namespace detail

/// Runs `g` on `feeds` (graph input name -> tensor). Errors name the node.
[[nodiscard]] inline run_result run(const graph& g, const std::map<std::string, tensor, std::less<>>& feeds,
                                    const run_options& options = {}) {
    const std::string where = "tensoracle::graph::run(" + g.name + ")";
    const auto order = g.topological_order();
    detail::scope s;
    auto& values = s.values;
    for (const auto& [k, t] : g.initializers) values.emplace(k, t);
    for (const auto& feed : feeds) {
        const std::string& k = feed.first;  // named: lambdas may not capture bindings (Clang 14)
        const tensor& t = feed.second;
        const auto it =
            std::find_if(g.inputs.begin(), g.inputs.end(), [&](const value_info& v) { return v.name == k; });
        if (it == g.inputs.end()) throw error(where, "feed '" + k + "' is not a graph input");
        detail::check_feed(*it, t, where);
        values.insert_or_assign(k, t);
    }
    for (const auto& in : g.inputs) {
        if (values.find(in.name) == values.end()) throw error(where, "graph input '" + in.name + "' is not fed");
    }
    detail::run_nodes(g, order, s, where);
    run_result r;
    for (const auto& o : g.outputs) {
        const auto& t = values.at(o.name);
        r.outputs.emplace(o.name, t);
    }
    if (options.record_intermediates) r.values = std::move(values);
    return r;
}

}  // namespace tensoracle::graph
