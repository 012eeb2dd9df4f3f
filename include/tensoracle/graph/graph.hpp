// tensoracle: a graph IR of values and nodes bound to op specs, with the
// SONNX graph rules enforced by validate():
//   T01/T02a  every tensor has one unique name within the graph;
//   T03b      a node's inputs/outputs map 1-to-1 onto its op's signature;
//   T05a/e    every node input is defined (graph input, initializer or node
//             output) and every tensor is assigned at most once;
//   acyclic   nodes can be ordered so each runs after its inputs exist.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/error.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/ops/registry.hpp"
#include "tensoracle/spec/attributes.hpp"

namespace tensoracle::graph {

/// A named value of the graph's interface. An empty `shape` with
/// `shape_known == false` means the shape is only known at run time.
struct value_info {
    std::string name;
    dtype type = dtype::f32;
    std::optional<shape_type> shape;
};

/// One op application. An empty input name is an absent optional input.
struct node {
    std::string op_type;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    spec::attribute_map attributes;
    std::string name;    // optional, for messages
    std::string domain;  // "" or "ai.onnx" for standard ops

    [[nodiscard]] std::string label() const {
        return name.empty() ? op_type + " -> " + (outputs.empty() ? std::string("?") : outputs.front())
                            : name + " (" + op_type + ")";
    }
};

class graph {
public:
    std::string name = "graph";
    int opset = 17;
    std::vector<value_info> inputs;
    std::vector<value_info> outputs;
    std::map<std::string, tensor, std::less<>> initializers;
    std::vector<node> nodes;

    /// Throws tensoracle::error naming the rule, node and value at fault.
    void validate() const { (void)topological_order(); }

    /// Node indices in an order where every node runs after its inputs are
    /// defined; validates the graph rules on the way.
    [[nodiscard]] std::vector<std::size_t> topological_order() const {
        const std::string where = "tensoracle::graph::validate(" + name + ")";
        std::map<std::string, int, std::less<>> producer;  // value -> node index, or -1 for graph inputs/initializers
        auto define = [&](const std::string& v, int by, const std::string& what) {
            if (v.empty()) throw error(where, what + " has an empty output name");
            if (!producer.emplace(v, by).second) {
                throw error(where, "tensor '" + v + "' is assigned more than once (single assignment, T05e): " + what);
            }
        };
        for (const auto& in : inputs) define(in.name, -1, "graph input");
        for (const auto& entry : initializers) {
            // ONNX allows an initializer to double as a graph input's default.
            const std::string& k = entry.first;  // a named copy: lambdas may not capture bindings (Clang 14)
            if (std::any_of(inputs.begin(), inputs.end(), [&](const value_info& v) { return v.name == k; })) continue;
            define(k, -1, "initializer");
        }
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const auto& n = nodes[i];
            if (n.outputs.empty()) throw error(where, "node " + n.label() + " has no outputs");
            for (const auto& o : n.outputs) {
                if (!o.empty()) define(o, static_cast<int>(i), "output of node " + n.label());
            }
        }
        for (std::size_t i = 0; i < nodes.size(); ++i) check_node(nodes[i], producer, where);
        for (const auto& out : outputs) {
            if (producer.find(out.name) == producer.end()) {
                throw error(where, "graph output '" + out.name + "' is never defined");
            }
        }
        // Kahn's algorithm over node dependencies.
        std::vector<std::vector<std::size_t>> users(nodes.size());
        std::vector<std::size_t> pending(nodes.size(), 0);
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            std::set<int> deps;
            for (const auto& in : nodes[i].inputs) {
                if (in.empty()) continue;
                const int p = producer.at(in);
                if (p >= 0) deps.insert(p);
            }
            pending[i] = deps.size();
            for (const int p : deps) users[static_cast<std::size_t>(p)].push_back(i);
        }
        std::vector<std::size_t> order, ready;
        for (std::size_t i = nodes.size(); i-- > 0;) {
            if (pending[i] == 0) ready.push_back(i);
        }
        while (!ready.empty()) {
            const std::size_t i = ready.back();
            ready.pop_back();
            order.push_back(i);
            for (const std::size_t u : users[i]) {
                if (--pending[u] == 0) ready.push_back(u);
            }
        }
        if (order.size() != nodes.size()) {
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                if (pending[i] != 0) throw error(where, "the graph has a cycle through node " + nodes[i].label());
            }
        }
        return order;
    }

private:
    static void check_node(const node& n, const std::map<std::string, int, std::less<>>& producer,
                           const std::string& where) {
        if (!n.domain.empty() && n.domain != "ai.onnx") {
            throw error(where, "node " + n.label() + " is in domain '" + n.domain + "', which tensoracle does not support");
        }
        const auto* op = ops::find_op(n.op_type);
        if (op == nullptr) throw error(where, "node " + n.label() + " uses unknown op '" + n.op_type + "'");
        const bool variadic = !op->inputs.empty() && op->inputs.back().variadic;
        if (!variadic && n.inputs.size() > op->inputs.size()) {
            throw error(where, "node " + n.label() + " has " + std::to_string(n.inputs.size()) + " inputs; " +
                                   n.op_type + " takes at most " + std::to_string(op->inputs.size()));
        }
        for (std::size_t k = 0; k < op->inputs.size() && !op->inputs[k].variadic; ++k) {
            const bool given = k < n.inputs.size() && !n.inputs[k].empty();
            if (!given && !op->inputs[k].optional) {
                throw error(where, "node " + n.label() + " lacks required input " + std::to_string(k) + " ('" +
                                       std::string(op->inputs[k].name) + "')");
            }
        }
        for (const auto& in : n.inputs) {
            if (!in.empty() && producer.find(in) == producer.end()) {
                throw error(where, "node " + n.label() + " reads '" + in + "', which is never defined (T05a)");
            }
        }
        try {
            (void)op->normalize_attributes(n.attributes);
        } catch (const unsupported_error& e) {
            throw unsupported_error(where, "node " + n.label() + ": " + e.what());
        } catch (const error& e) {
            throw error(where, "node " + n.label() + ": " + e.what());
        }
    }
};

}  // namespace tensoracle::graph
