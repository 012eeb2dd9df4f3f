// tensoracle: forward and reverse mode over a whole graph.
//
// The interpreter's recorded values give every node its context (shapes,
// integer inputs, attributes); derivatives flow through the op rules of
// op_rules.hpp. jvp() pushes tangents forward node by node, vjp() runs the
// graph forward once and sweeps the nodes backwards (a tape over the graph),
// hvp() is forward-over-reverse: the reverse sweep in dual numbers.
// Ops without derivative rules (Shape, ArgMax, comparisons...) cut the
// derivative: their outputs are constants, and the result lists them.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tensoracle/ad/op_rules.hpp"
#include "tensoracle/graph/interpreter.hpp"

namespace tensoracle::ad {

using value_map = std::map<std::string, tensor, std::less<>>;

struct graph_jvp_result {
    value_map outputs;   ///< graph outputs (f64, computed in the derivative arithmetic)
    value_map tangents;  ///< derivative of each graph output along the input tangents (f64)
    std::vector<std::string> cut_at;  ///< nodes without derivative rules that active values reached
};
struct graph_vjp_result {
    value_map outputs;
    value_map gradients;  ///< Jᵀw for each differentiated graph input (f64)
    std::vector<std::string> cut_at;
};
struct graph_hvp_result {
    value_map outputs;
    value_map gradients;       ///< Jᵀw
    value_map hessian_vector;  ///< d/dt Jᵀ(x + t·u) w at t = 0
    std::vector<std::string> cut_at;
};

namespace detail {

template <class V>
using array_map = std::map<std::string, array<V>, std::less<>>;

struct node_call {
    const spec::op_entry* op = nullptr;
    std::vector<const tensor*> args;
    spec::attribute_map attributes;
};

// The same argument list and attributes the interpreter builds for node n.
inline node_call prepare(const graph::node& n, const value_map& values) {
    node_call call;
    call.op = &ops::get_op(n.op_type);
    for (const auto& in : n.inputs) call.args.push_back(in.empty() ? nullptr : &values.at(in));
    while (!call.args.empty() && call.args.back() == nullptr) call.args.pop_back();
    call.attributes = graph::call_attributes(*call.op, n);
    return call;
}

template <class V>
array<V> zeros_like(const array<V>& a) {
    auto z = array<V>::from_shape(a.shape());
    std::fill(z.begin(), z.end(), V(0));
    return z;
}

/// Forward pass in V over the active part of the graph: values of every
/// value that depends on the differentiated inputs, optionally with tangents.
template <class V>
struct forward_state {
    value_map plain;
    array_map<V> values;
    array_map<V> tangents;
    std::vector<std::string> cut_at;
    std::vector<std::size_t> order;
};

template <class V>
forward_state<V> forward(const graph::graph& g, const value_map& feeds, const array_map<V>& x,
                         const array_map<V>* u) {
    forward_state<V> s;
    s.plain = graph::run(g, feeds, {.record_intermediates = true}).values;
    s.order = g.topological_order();
    s.values = x;
    if (u != nullptr) s.tangents = *u;
    for (const std::size_t ni : s.order) {
        const auto& n = g.nodes[ni];
        const auto call = prepare(n, s.plain);
        bool active = false;
        for (const auto& in : n.inputs) active = active || (!in.empty() && s.values.count(in) != 0);
        if (!active) continue;
        const auto* rules = find_rules<V>(n.op_type);
        const auto c = make_context(*call.op, call.args, call.attributes);
        if (rules == nullptr) {
            // Only a floating output cut from its inputs loses a derivative (Shape's int64 loses nothing).
            const auto dts = call.op->output_dtypes(c);
            if (std::any_of(dts.begin(), dts.end(), [](dtype d) { return info(d).is_floating; })) {
                s.cut_at.push_back(n.label());
            }
            continue;
        }
        const auto ids = rules->differentiable_inputs(c);
        std::vector<array<V>> xs(c.input_count(), empty_array<V>()), us(c.input_count(), empty_array<V>());
        bool any = false;
        for (const std::size_t i : ids) {
            const auto it = s.values.find(n.inputs[i]);
            any = any || it != s.values.end();
            xs[i] = it != s.values.end() ? it->second : lift<V>(*call.args[i]);
            if (u != nullptr) {
                const auto t = s.tangents.find(n.inputs[i]);
                us[i] = t != s.tangents.end() ? t->second : zeros_like(xs[i]);
            }
        }
        if (!any) continue;  // active inputs feed only non-differentiable slots (shapes, indices)
        if (u != nullptr) {
            auto r = rules->jvp(c, xs, us);
            for (std::size_t o = 0; o < n.outputs.size() && o < r.values.size(); ++o) {
                if (n.outputs[o].empty() || is_empty(r.values[o])) continue;
                s.values.insert_or_assign(n.outputs[o], std::move(r.values[o]));
                s.tangents.insert_or_assign(n.outputs[o], std::move(r.tangents[o]));
            }
        } else {
            auto r = rules->value(c, xs);
            const auto dtypes = call.op->output_dtypes(c);
            for (std::size_t o = 0; o < n.outputs.size() && o < r.size(); ++o) {
                if (n.outputs[o].empty() || !info(dtypes[o]).is_floating) continue;
                s.values.insert_or_assign(n.outputs[o], std::move(r[o]));
            }
        }
    }
    return s;
}

template <class V>
array_map<V> lift_inputs(const graph::graph& g, const value_map& feeds, const std::vector<std::string>& wrt,
                         const char* where) {
    array_map<V> x;
    for (const auto& name : wrt) {
        const auto it = feeds.find(name);
        if (it == feeds.end()) throw error(where, "differentiated input '" + name + "' is not fed");
        if (!info(it->second.element_dtype()).is_floating) {
            throw dtype_error(where, "differentiated input '" + name + "' has dtype " +
                                         std::string(tensoracle::name(it->second.element_dtype())) +
                                         "; only floating inputs have derivatives");
        }
        x.emplace(name, lift<V>(it->second));
    }
    (void)g;
    return x;
}

inline std::vector<std::string> floating_inputs(const graph::graph& g) {
    std::vector<std::string> v;
    for (const auto& in : g.inputs) {
        if (info(in.type).is_floating) v.push_back(in.name);
    }
    return v;
}

template <class V>
array<V> as_cotangent(const tensor& t, const std::string& name, const array<V>& like, const char* where) {
    auto a = lift<V>(t);
    if (!std::equal(a.shape().begin(), a.shape().end(), like.shape().begin(), like.shape().end())) {
        throw shape_error(where, "cotangent for '" + name + "' has shape " + to_string(t.shape()) +
                                     " but the value has shape " +
                                     to_string(shape_type(like.shape().begin(), like.shape().end())));
    }
    return a;
}

/// Reverse sweep from output cotangents w; returns cotangents of wrt inputs.
template <class V>
array_map<V> backward(const graph::graph& g, const forward_state<V>& s, array_map<V> cot,
                      const reverse_options& options) {
    for (auto it = s.order.rbegin(); it != s.order.rend(); ++it) {
        const auto& n = g.nodes[*it];
        bool seeded = false;
        for (const auto& o : n.outputs) seeded = seeded || (!o.empty() && cot.count(o) != 0);
        if (!seeded) continue;
        const auto* rules = find_rules<V>(n.op_type);
        if (rules == nullptr) continue;
        const auto call = prepare(n, s.plain);
        const auto c = make_context(*call.op, call.args, call.attributes);
        const auto ids = rules->differentiable_inputs(c);
        std::vector<array<V>> xs(c.input_count(), empty_array<V>());
        bool any = false;
        for (const std::size_t i : ids) {
            const auto v = s.values.find(n.inputs[i]);
            any = any || v != s.values.end();
            xs[i] = v != s.values.end() ? v->second : lift<V>(*call.args[i]);
        }
        if (!any) continue;
        std::vector<array<V>> ws;
        for (const auto& o : n.outputs) {
            const auto w = o.empty() ? cot.end() : cot.find(o);
            ws.push_back(w != cot.end() ? w->second : empty_array<V>());
        }
        const auto r = rules->vjp(c, xs, ws, options);
        for (const std::size_t i : ids) {
            const auto& name = n.inputs[i];
            if (s.values.count(name) == 0) continue;  // constant: no one asks for its cotangent
            auto acc = cot.find(name);
            if (acc == cot.end()) {
                cot.emplace(name, r.cotangents[i]);
            } else {
                for (std::size_t k = 0; k < acc->second.size(); ++k) acc->second.data()[k] += r.cotangents[i].data()[k];
            }
        }
    }
    return cot;
}

template <class V>
array_map<V> seed_outputs(const graph::graph& g, const forward_state<V>& s, const value_map& cotangents,
                          const char* where) {
    array_map<V> cot;
    for (const auto& entry : cotangents) {
        // Not a structured binding: Clang before 16 cannot capture one in a lambda.
        const std::string& name = entry.first;
        const auto& t = entry.second;
        const bool is_output = std::any_of(g.outputs.begin(), g.outputs.end(),
                                           [&](const graph::value_info& v) { return v.name == name; });
        if (!is_output) throw error(where, "cotangent given for '" + name + "', which is not a graph output");
        const auto v = s.values.find(name);
        if (v == s.values.end()) continue;  // the output does not depend on the differentiated inputs
        cot.emplace(name, as_cotangent<V>(t, name, v->second, where));
    }
    return cot;
}

}  // namespace detail

/// Forward mode over graph g: derivatives of every graph output along
/// `tangents` (one per differentiated graph input; their names say which).
template <class V = double>
[[nodiscard]] graph_jvp_result jvp(const graph::graph& g, const value_map& feeds, const value_map& tangents) {
    constexpr const char* where = "tensoracle::ad::jvp";
    std::vector<std::string> wrt;
    for (const auto& [name, t] : tangents) wrt.push_back(name);
    const auto x = detail::lift_inputs<V>(g, feeds, wrt, where);
    detail::array_map<V> u;
    for (const auto& [name, t] : tangents) {
        u.emplace(name, detail::as_cotangent<V>(t, name, x.at(name), where));
    }
    const auto s = detail::forward<V>(g, feeds, x, &u);
    graph_jvp_result r;
    r.cut_at = s.cut_at;
    for (const auto& o : g.outputs) {
        const auto v = s.values.find(o.name);
        if (v != s.values.end()) {
            r.outputs.emplace(o.name, lower(v->second));
            r.tangents.emplace(o.name, lower(s.tangents.at(o.name)));
        } else {
            r.outputs.emplace(o.name, s.plain.at(o.name));
            if (info(s.plain.at(o.name).element_dtype()).is_floating) {
                r.tangents.emplace(o.name, tensor::zeros(dtype::f64, s.plain.at(o.name).shape()));
            }
        }
    }
    return r;
}

/// Reverse mode over graph g: Jᵀw for output cotangents w (by output name;
/// outputs not named get zero), with respect to `wrt` (default: every
/// floating graph input).
template <class V = double>
[[nodiscard]] graph_vjp_result vjp(const graph::graph& g, const value_map& feeds, const value_map& cotangents,
                                   std::vector<std::string> wrt = {}, const reverse_options& options = {}) {
    constexpr const char* where = "tensoracle::ad::vjp";
    if (wrt.empty()) wrt = detail::floating_inputs(g);
    const auto x = detail::lift_inputs<V>(g, feeds, wrt, where);
    const auto s = detail::forward<V>(g, feeds, x, nullptr);
    const auto cot = detail::backward<V>(g, s, detail::seed_outputs<V>(g, s, cotangents, where), options);
    graph_vjp_result r;
    r.cut_at = s.cut_at;
    for (const auto& o : g.outputs) {
        const auto v = s.values.find(o.name);
        r.outputs.emplace(o.name, v != s.values.end() ? lower(v->second) : s.plain.at(o.name));
    }
    for (const auto& name : wrt) {
        const auto c = cot.find(name);
        r.gradients.emplace(name, c != cot.end() ? lower(c->second) : tensor::zeros(dtype::f64, feeds.at(name).shape()));
    }
    return r;
}

/// Forward-over-reverse second order: the gradient Jᵀw and its derivative
/// along input tangents u (for a scalar output and w = 1: the Hessian-vector
/// product H·u).
template <class V = double>
[[nodiscard]] graph_hvp_result hvp(const graph::graph& g, const value_map& feeds, const value_map& cotangents,
                                   const value_map& tangents, std::vector<std::string> wrt = {}) {
    constexpr const char* where = "tensoracle::ad::hvp";
    using D = dual<V>;
    if (wrt.empty()) wrt = detail::floating_inputs(g);
    auto x = detail::lift_inputs<D>(g, feeds, wrt, where);
    for (const auto& [name, t] : tangents) {
        const auto it = x.find(name);
        if (it == x.end()) throw error(where, "tangent given for '" + name + "', which is not differentiated");
        const auto u = detail::as_cotangent<V>(t, name, lift<V>(feeds.at(name)), where);
        for (std::size_t k = 0; k < u.size(); ++k) it->second.data()[k].d = u.data()[k];
    }
    const auto s = detail::forward<D>(g, feeds, x, nullptr);
    const auto cot = detail::backward<D>(g, s, detail::seed_outputs<D>(g, s, cotangents, where), {});
    graph_hvp_result r;
    r.cut_at = s.cut_at;
    auto split = [](const array<D>& a, bool tangent) {
        auto v = array<double>::from_shape(a.shape());
        for (std::size_t k = 0; k < a.size(); ++k) v.data()[k] = static_cast<double>(tangent ? primal(a.data()[k].d) : primal(a.data()[k].v));
        return tensor(v);
    };
    for (const auto& o : g.outputs) {
        const auto v = s.values.find(o.name);
        r.outputs.emplace(o.name, v != s.values.end() ? split(v->second, false) : s.plain.at(o.name));
    }
    for (const auto& name : wrt) {
        const auto c = cot.find(name);
        if (c != cot.end()) {
            r.gradients.emplace(name, split(c->second, false));
            r.hessian_vector.emplace(name, split(c->second, true));
        } else {
            r.gradients.emplace(name, tensor::zeros(dtype::f64, feeds.at(name).shape()));
            r.hessian_vector.emplace(name, tensor::zeros(dtype::f64, feeds.at(name).shape()));
        }
    }
    return r;
}

}  // namespace tensoracle::ad
