// tensoracle: runs a graph on the reference kernels, node by node in a
// topological order, optionally recording every intermediate value (for
// input search, reduction and EMI later).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

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
/// Rethrows e with more context, keeping its kind (unsupported, dtype, shape).
[[noreturn]] inline void rethrow_with_context(const error& e, const std::string& where, const std::string& prefix) {
    const std::string msg = prefix + e.what();
    if (dynamic_cast<const unsupported_error*>(&e) != nullptr) throw unsupported_error(where, msg);
    if (dynamic_cast<const dtype_error*>(&e) != nullptr) throw dtype_error(where, msg);
    if (dynamic_cast<const shape_error*>(&e) != nullptr) throw shape_error(where, msg);
    throw error(where, msg);
}
}  // namespace detail

/// Runs `g` on `feeds` (graph input name -> tensor). Errors name the node.
[[nodiscard]] inline run_result run(const graph& g, const std::map<std::string, tensor, std::less<>>& feeds,
                                    const run_options& options = {}) {
    const std::string where = "tensoracle::graph::run(" + g.name + ")";
    const auto order = g.topological_order();
    std::map<std::string, tensor, std::less<>> values;
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
    for (const std::size_t i : order) {
        const auto& n = g.nodes[i];
        const auto& op = ops::get_op(n.op_type);
        std::vector<const tensor*> args;
        for (const auto& in : n.inputs) args.push_back(in.empty() ? nullptr : &values.at(in));
        while (!args.empty() && args.back() == nullptr) args.pop_back();
        const auto attrs = call_attributes(op, n);
        std::vector<tensor> out;
        try {
            out = spec::evaluate(op, args, attrs);
        } catch (const error& e) {
            detail::rethrow_with_context(e, where, "node " + n.label() + ": ");
        }
        if (n.outputs.size() > out.size()) {
            throw error(where, "node " + n.label() + " names " + std::to_string(n.outputs.size()) + " outputs; " +
                                   n.op_type + " produced " + std::to_string(out.size()));
        }
        for (std::size_t o = 0; o < n.outputs.size(); ++o) {
            if (!n.outputs[o].empty()) values.insert_or_assign(n.outputs[o], std::move(out[o]));
        }
    }
    run_result r;
    for (const auto& o : g.outputs) {
        const auto& t = values.at(o.name);
        r.outputs.emplace(o.name, t);
    }
    if (options.record_intermediates) r.values = std::move(values);
    return r;
}

}  // namespace tensoracle::graph
