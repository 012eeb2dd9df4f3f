// tensoracle: a graph IR of values and nodes bound to op specs, with the
// SONNX graph rules enforced by validate():
//   T01/T02a  every tensor has one unique name within the graph;
//   T03b      a node's inputs/outputs map 1-to-1 onto its op's signature;
//   T05a/e    every node input is defined (graph input, initializer or node
//             output) and every tensor is assigned at most once;
//   acyclic   nodes can be ordered so each runs after its inputs exist.
// A node may hold graphs (If's branches): they read values of the scopes
// around them by name, define none of those names again, and count as
// reads of their node for the order (graph/control_flow.hpp).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
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

class graph;

/// A graph-valued attribute (If's then_branch / else_branch), held by value:
/// copying a node copies its branches, so a rewritten copy never changes the original.
class subgraph {
public:
    subgraph();
    explicit subgraph(graph g);
    subgraph(const subgraph& other);
    subgraph& operator=(const subgraph& other);
    subgraph(subgraph&&) noexcept = default;
    subgraph& operator=(subgraph&&) noexcept = default;
    ~subgraph();

    [[nodiscard]] graph& get() noexcept { return *g_; }
    [[nodiscard]] const graph& get() const noexcept { return *g_; }
    graph* operator->() noexcept { return g_.get(); }
    const graph* operator->() const noexcept { return g_.get(); }

private:
    std::unique_ptr<graph> g_;
};

/// One op application. An empty input name is an absent optional input.
struct node {
    std::string op_type;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    spec::attribute_map attributes;
    std::string name;    // optional, for messages
    std::string domain;  // "" or "ai.onnx" for standard ops
    /// Graph attributes by name (If: "then_branch", "else_branch"); kept apart from
    /// `attributes`, which op specs read, because only the graph layer runs graphs.
    std::map<std::string, subgraph, std::less<>> subgraphs = {};

    [[nodiscard]] std::string label() const {
        return name.empty() ? op_type + " -> " + (outputs.empty() ? std::string("?") : outputs.front())
                            : name + " (" + op_type + ")";
    }
};

namespace detail {
/// Ops whose semantics the graph layer holds, because they run graphs (If).
[[nodiscard]] bool is_control_flow(std::string_view op_type) noexcept;
/// Checks a control-flow node against its spec; `scope` is every name defined
/// around it (graph/control_flow.hpp).
void check_control_flow(const node& n, const std::set<std::string, std::less<>>& scope, const std::string& where);
}  // namespace detail

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
    [[nodiscard]] std::vector<std::size_t> topological_order() const { return topological_order({}); }

    /// The same for a graph nested in others (a branch): `outer` holds the names
    /// its enclosing scopes define, which it may read but not define again.
    [[nodiscard]] std::vector<std::size_t> topological_order(const std::set<std::string, std::less<>>& outer) const {
        const std::string where = "tensoracle::graph::validate(" + name + ")";
        std::map<std::string, int, std::less<>> producer;  // value -> node index, or -1 for graph inputs/initializers/outer scopes
        // `what()` describes the definition; built only for an error (this
        // runs for every model the interpreter or the generator checks).
        auto define = [&](const std::string& v, int by, const auto& what) {
            if (v.empty()) throw error(where, what() + " has an empty output name");
            if (outer.count(v) != 0) {
                throw error(where, "tensor '" + v + "' is already defined in an enclosing graph (single assignment across scopes, T05e): " + what());
            }
            if (!producer.emplace(v, by).second) {
                throw error(where, "tensor '" + v + "' is assigned more than once (single assignment, T05e): " + what());
            }
        };
        for (const auto& in : inputs) define(in.name, -1, [] { return std::string("graph input"); });
        for (const auto& entry : initializers) {
            // ONNX allows an initializer to double as a graph input's default.
            const std::string& k = entry.first;  // a named copy: lambdas may not capture bindings (Clang 14)
            if (std::any_of(inputs.begin(), inputs.end(), [&](const value_info& v) { return v.name == k; })) continue;
            define(k, -1, [] { return std::string("initializer"); });
        }
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const auto& n = nodes[i];
            if (n.outputs.empty()) throw error(where, "node " + n.label() + " has no outputs");
            for (const auto& o : n.outputs) {
                if (!o.empty()) define(o, static_cast<int>(i), [&n] { return "output of node " + n.label(); });
            }
        }
        // Names an enclosing scope defines are readable here (a branch reads them by name).
        for (const auto& v : outer) producer.emplace(v, -1);
        for (std::size_t i = 0; i < nodes.size(); ++i) check_node(nodes[i], producer, where);
        for (const auto& out : outputs) {
            if (producer.find(out.name) == producer.end()) {
                throw error(where, "graph output '" + out.name + "' is never defined");
            }
        }
        // Kahn's algorithm over node dependencies (a branch's reads are its node's).
        std::vector<std::vector<std::size_t>> users(nodes.size());
        std::vector<std::size_t> pending(nodes.size(), 0);
        std::vector<int> deps;  // one node's producers, ascending and distinct
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            deps.clear();
            for (const auto& in : reads(nodes[i])) {
                const int p = producer.at(in);
                if (p >= 0) deps.push_back(p);
            }
            std::sort(deps.begin(), deps.end());
            deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
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

    /// Every value `n` reads, each once: its inputs, then what its branches read
    /// from the scopes around them (branches in name order).
    [[nodiscard]] static std::vector<std::string> reads(const node& n) {
        std::vector<std::string> r;
        for (const auto& in : n.inputs) {
            if (!in.empty() && std::find(r.begin(), r.end(), in) == r.end()) r.push_back(in);
        }
        for (const auto& [key, sub] : n.subgraphs) {
            for (const auto& v : sub->outer_reads()) {
                if (std::find(r.begin(), r.end(), v) == r.end()) r.push_back(v);
            }
        }
        return r;
    }

    /// The names this graph (and the graphs in it) read but does not define:
    /// what it takes from enclosing scopes.
    [[nodiscard]] std::set<std::string, std::less<>> outer_reads() const {
        std::set<std::string, std::less<>> defined, out;
        for (const auto& in : inputs) defined.insert(in.name);
        for (const auto& [k, t] : initializers) defined.insert(k);
        for (const auto& n : nodes) {
            for (const auto& o : n.outputs) defined.insert(o);
        }
        for (const auto& n : nodes) {
            for (const auto& v : reads(n)) {
                if (defined.count(v) == 0) out.insert(v);
            }
        }
        for (const auto& o : outputs) {
            if (defined.count(o.name) == 0) out.insert(o.name);
        }
        return out;
    }

private:
    static void check_node(const node& n, const std::map<std::string, int, std::less<>>& producer,
                           const std::string& where) {
        if (!n.domain.empty() && n.domain != "ai.onnx") {
            throw error(where, "node " + n.label() + " is in domain '" + n.domain + "', which tensoracle does not support");
        }
        if (detail::is_control_flow(n.op_type)) {
            std::set<std::string, std::less<>> scope;
            for (const auto& [v, by] : producer) scope.insert(v);
            detail::check_control_flow(n, scope, where);
            return;
        }
        if (!n.subgraphs.empty()) {
            throw error(where, "node " + n.label() + " has graph attribute '" + n.subgraphs.begin()->first + "', which " + n.op_type + " does not take");
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

/// Every op type `g` uses, its branches' included.
[[nodiscard]] inline std::set<std::string> op_types(const graph& g) {
    std::set<std::string> out;
    for (const auto& n : g.nodes) {
        out.insert(n.op_type);
        for (const auto& [k, sub] : n.subgraphs) {
            const auto inner = op_types(sub.get());
            out.insert(inner.begin(), inner.end());
        }
    }
    return out;
}

inline subgraph::subgraph() : g_(std::make_unique<graph>()) {}
inline subgraph::subgraph(graph g) : g_(std::make_unique<graph>(std::move(g))) {}
inline subgraph::subgraph(const subgraph& other) : g_(other.g_ ? std::make_unique<graph>(*other.g_) : std::make_unique<graph>()) {}
inline subgraph& subgraph::operator=(const subgraph& other) {
    if (this != &other) g_ = other.g_ ? std::make_unique<graph>(*other.g_) : std::make_unique<graph>();
    return *this;
}
inline subgraph::~subgraph() = default;

}  // namespace tensoracle::graph

#include "tensoracle/graph/control_flow.hpp"
