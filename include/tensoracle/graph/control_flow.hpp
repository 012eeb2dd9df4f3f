// tensoracle: the control-flow op If (ONNX If-16, tensor values only), whose
// semantics belong to the graph layer because its "kernel" runs a graph.
//
//   If(cond) -> outputs        cond: a bool tensor of exactly one element
//   then_branch, else_branch:  graphs with no inputs and as many outputs as
//                              the node; output k of both has one dtype
//                              (shapes may differ, as ONNX allows)
//
// A branch reads values of the scopes around it by name and defines none of
// them again (checked by graph::validate); the interpreter runs the branch
// cond selects (graph/interpreter.hpp). Sequence and optional outputs
// (If-16's other types) are not supported, like every non-tensor value.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "tensoracle/core/error.hpp"
#include "tensoracle/graph/graph.hpp"

namespace tensoracle::graph {

/// ONNX's If, as the graph layer checks and runs it.
struct if_spec {
    static constexpr std::string_view op_type = "If";
    static constexpr int opset = 16;
    static constexpr std::string_view then_branch = "then_branch";
    static constexpr std::string_view else_branch = "else_branch";

    /// The structural rules (the node's arity, its graph attributes, each branch
    /// valid in the scope around the node, matching output dtypes).
    static void check(const node& n, const std::set<std::string, std::less<>>& scope, const std::string& where) {
        const std::string at = where + ", node " + n.label();
        if (n.inputs.size() != 1 || n.inputs[0].empty()) {
            throw error(at, "If takes exactly one input (cond), got " + std::to_string(n.inputs.size()));
        }
        for (const auto& [key, value] : n.attributes) {
            if (key.rfind("__", 0) == 0) continue;  // kit-internal
            throw error(at, "If takes no attribute '" + key + "' (only the graphs then_branch and else_branch)");
        }
        for (const auto& [key, sub] : n.subgraphs) {
            if (key != then_branch && key != else_branch) throw error(at, "If takes no graph attribute '" + key + "'");
        }
        const graph* branches[2] = {nullptr, nullptr};
        for (int b = 0; b < 2; ++b) {
            const auto key = b == 0 ? then_branch : else_branch;
            const auto it = n.subgraphs.find(key);
            if (it == n.subgraphs.end()) throw error(at, "If lacks its required graph attribute '" + std::string(key) + "'");
            const graph& g = it->second.get();
            if (!g.inputs.empty()) throw error(at, std::string(key) + " declares " + std::to_string(g.inputs.size()) + " input(s); If's branches take none");
            if (g.outputs.size() != n.outputs.size()) {
                throw error(at, std::string(key) + " has " + std::to_string(g.outputs.size()) + " output(s) for the node's " +
                                    std::to_string(n.outputs.size()));
            }
            try {
                (void)g.topological_order(scope);
            } catch (const error& e) {
                throw error(at, std::string(key) + ": " + e.what());
            }
            branches[b] = &g;
        }
        for (std::size_t k = 0; k < n.outputs.size(); ++k) {
            const auto& t = branches[0]->outputs[k];
            const auto& e = branches[1]->outputs[k];
            if (t.type != e.type) {
                throw dtype_error(at, "output " + std::to_string(k) + " is " + std::string(name(t.type)) + " in then_branch but " +
                                          std::string(name(e.type)) + " in else_branch");
            }
        }
    }

    /// The branch `cond` selects; cond must be a bool tensor of one element.
    [[nodiscard]] static const graph& select(const node& n, const tensor& cond, const std::string& where) {
        if (cond.element_dtype() != dtype::boolean || cond.size() != 1) {
            throw error(where + ", node " + n.label(), "If's cond must be a bool tensor of one element, got " +
                                                           std::string(name(cond.element_dtype())) + to_string(cond.shape()));
        }
        const bool c = cond.values<bool>()[0];
        return n.subgraphs.at(std::string(c ? then_branch : else_branch)).get();
    }
};

namespace detail {
inline bool is_control_flow(std::string_view op_type) noexcept { return op_type == if_spec::op_type; }
inline void check_control_flow(const node& n, const std::set<std::string, std::less<>>& scope, const std::string& where) {
    if (n.op_type == if_spec::op_type) if_spec::check(n, scope, where);
}
}  // namespace detail

}  // namespace tensoracle::graph
