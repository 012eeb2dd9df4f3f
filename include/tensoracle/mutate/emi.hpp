// tensoracle: equivalence modulo inputs (EMI). Dead code behind guards that
// are true (or zero) on the profiled inputs: the mutant equals the original on
// those inputs, and a compiler that mishandles the control flow or the dead
// code shows it. Guards follow TorchProbe's grammar (a reduction, an element
// or a dimension of a value compared with a constant), with a margin of
// |value| + 1 so that no rounding a compiler does upstream flips them.
//
//   emi_if          nodes moved into an If's then_branch; else_branch holds a
//                   perturbed copy (dead); cond is true on the profile
//   emi_zero_guard  x -> x + g * dead(x), g == 0 exactly on the profile
//   emi_where_guard x -> Where(cond, x, dead(x)), cond true on the profile
#pragma once

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tensoracle/mutate/recover.hpp"

namespace tensoracle::mutate {

namespace detail {

/// Nodes downstream of node `i` (those that read, transitively, what it defines), with i.
inline std::set<std::size_t> descendants(const context& c, std::size_t i) {
    std::set<std::size_t> out{i};
    std::vector<std::size_t> todo{i};
    while (!todo.empty()) {
        const auto k = todo.back();
        todo.pop_back();
        for (const auto& o : c.graph().nodes[k].outputs) {
            if (o.empty()) continue;
            for (const auto r : c.readers(o)) {
                if (out.insert(r).second) todo.push_back(r);
            }
        }
    }
    return out;
}

/// Values a guard may read without depending on `after` (nodes it must not read from).
inline std::vector<std::string> guard_operands(const context& c, const std::set<std::size_t>& after) {
    std::vector<std::string> out;
    for (const auto& [v, t] : c.values()) {
        if (t.size() == 0 || feeds_shape_slot(c, v)) continue;
        if (const auto p = c.producer(v); p && after.count(*p) != 0) continue;
        out.push_back(v);
    }
    return out;
}

/// A rank-0 bool that is true on the profiled inputs, from one of `operands`.
inline std::string true_condition(context& c, const std::vector<std::string>& operands) {
    auto& r = c.random();
    const auto& u = operands[r.below(operands.size())];
    const tensor& t = c.value(u);
    const dtype d = t.element_dtype();
    // Value forms compare what u holds: only for finite data (a NaN compares false).
    bool finite = true;
    for (std::size_t i = 0; i < t.size() && finite; ++i) finite = std::isfinite(t.value_as_double(i));
    const bool reducible = finite && c.accepts("ReduceMax", 0, d) && d != dtype::u8 && d != dtype::boolean;
    const auto form = reducible ? r.below(5) : 4 + r.below(2);
    const auto rank0 = std::int64_t{0};
    if (form <= 3) {
        // A statistic of u, or one element, compared with a constant abs(s) + 1 away from it.
        double s = 0.0;
        std::string stat;
        if (form == 3) {
            const auto pos = static_cast<std::int64_t>(r.below(t.size()));
            s = t.value_as_double(static_cast<std::size_t>(pos));
            const auto flat = c.add("Reshape", {u, c.add_ints({-1}, "shape")});
            tensor index = tensor::zeros(dtype::i64, {});
            index.values<std::int64_t>()[0] = pos;
            stat = c.add("Gather", {flat, c.add_constant(index, "pos")}, {{"axis", rank0}});
        } else {
            const bool use_max = form != 1;
            s = use_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
            for (std::size_t i = 0; i < t.size(); ++i) s = use_max ? std::max(s, t.value_as_double(i)) : std::min(s, t.value_as_double(i));
            stat = c.add(use_max ? "ReduceMax" : "ReduceMin", {u}, {{"keepdims", rank0}});
        }
        const bool above = form == 2;  // stat < s + margin, else stat > s - margin
        const double margin = std::abs(s) + 1.0;
        const double k = above ? s + margin : s - margin;
        if (std::isfinite(s) && std::abs(k) <= 0.5 * max_finite(d)) {
            return c.add(above ? "Less" : "Greater", {stat, c.add_scalar(d, is_float(d) ? k : std::round(k), "guard")});
        }
    }
    // A dimension or the rank of u, exact whatever the arithmetic.
    const auto shape = c.add("Shape", {u});
    if (form == 5 || t.rank() == 0) {
        const auto rank = c.add("Size", {shape});
        return c.add("Equal", {rank, c.add_scalar(dtype::i64, static_cast<double>(t.rank()), "rank")});
    }
    const auto axis = r.below(t.rank());
    tensor index = tensor::zeros(dtype::i64, {});
    index.values<std::int64_t>()[0] = static_cast<std::int64_t>(axis);
    const auto dim = c.add("Gather", {shape, c.add_constant(index, "axis")}, {{"axis", rank0}});
    return c.add("Greater", {dim, c.add_scalar(dtype::i64, static_cast<double>(t.shape()[axis]) - 1.0, "guard")});
}

/// Dead code of x's dtype and shape: bounded (finite whatever x) for floating x.
inline std::string dead_value(context& c, const std::string& x, dtype d) {
    auto& r = c.random();
    if (is_float(d)) {
        std::string y = x;
        const std::size_t steps = 1 + r.below(2);
        for (std::size_t k = 0; k < steps; ++k) {
            switch (r.below(3)) {
                case 0: y = c.add("Tanh", {y}); break;
                case 1: y = c.add("Sigmoid", {y}); break;
                default: y = c.add("Exp", {c.add("Neg", {c.add("Abs", {y})})}); break;  // in (0, 1]
            }
        }
        return r.bernoulli(0.5) ? c.add("Mul", {y, y}) : y;
    }
    if (d == dtype::boolean) return c.add("Not", {x});
    if (info(d).is_signed && c.accepts("Neg", 0, d)) return c.add("Neg", {x});
    return c.add(c.accepts("Add", 0, d) ? "Add" : "Max", {x, c.add_scalar(d, 1.0, "one")});
}

/// Guards may read what lies upstream of `v` (or elsewhere), never downstream of it.
inline std::set<std::size_t> downstream_of_value(const context& c, const std::string& v) {
    std::set<std::size_t> out;
    for (const auto rd : c.readers(v)) {
        const auto d = descendants(c, rd);
        out.insert(d.begin(), d.end());
    }
    return out;
}

// --- emi_zero_guard ----------------------------------------------------------------------
inline std::vector<site> zero_guard_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        const dtype d = c.dtype_of(v);
        if (!plain_value(c, v) || d == dtype::boolean || !c.accepts("Mul", 0, d) || !c.accepts("Cast", 0, d)) return false;
        // Floating data must be finite: 0 * inf would be NaN.
        if (is_float(d)) {
            const auto& t = c.value(v);
            for (std::size_t i = 0; i < t.size(); ++i) {
                if (!std::isfinite(t.value_as_double(i))) return false;
            }
        }
        return !guard_operands(c, downstream_of_value(c, v)).empty();
    });
}
inline void zero_guard_apply(context& c, const site& s) {
    const dtype d = s.type;
    auto operands = guard_operands(c, downstream_of_value(c, s.value));
    auto& r = c.random();
    const auto [src, dst] = c.intercept(s.value);
    std::replace(operands.begin(), operands.end(), s.value, src);  // the value itself, read before the guard
    std::string zero;
    const auto& u = operands[r.below(operands.size())];
    if (is_float(c.dtype_of(u)) && r.bernoulli(0.5)) {
        // Relu(k - min(u)) with k below min(u) by |min| + 1: exactly 0.
        const tensor& t = c.value(u);
        double m = std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < t.size(); ++i) {
            const double x = t.value_as_double(i);
            m = std::isnan(x) ? std::numeric_limits<double>::quiet_NaN() : std::min(m, x);
            if (std::isnan(m)) break;
        }
        const auto ud = c.dtype_of(u);
        const double k = m - (std::abs(m) + 1.0);
        if (std::isfinite(m) && std::abs(k) <= 0.5 * max_finite(ud)) {
            zero = c.add("Relu", {c.add("Sub", {c.add_scalar(ud, k, "guard"), c.add("ReduceMin", {u}, {{"keepdims", std::int64_t{0}}})})});
            if (ud != d) zero = c.add("Cast", {zero}, {{"to", std::int64_t{onnx_type(d)}}});
        }
    }
    if (zero.empty()) {
        // Cast(Not(cond)) with cond true: exactly 0.
        const auto cond = true_condition(c, operands);
        zero = c.add("Cast", {c.add("Not", {cond})}, {{"to", std::int64_t{onnx_type(d)}}});
    }
    const auto dead = dead_value(c, src, d);
    c.add("Add", {src, c.add("Mul", {dead, zero})}, {}, dst);
}

// --- emi_where_guard ---------------------------------------------------------------------
inline std::vector<site> where_guard_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        return plain_value(c, v) && !guard_operands(c, downstream_of_value(c, v)).empty();
    });
}
inline void where_guard_apply(context& c, const site& s) {
    auto operands = guard_operands(c, downstream_of_value(c, s.value));
    const auto [src, dst] = c.intercept(s.value);
    std::replace(operands.begin(), operands.end(), s.value, src);
    const auto cond = true_condition(c, operands);
    const auto dead = dead_value(c, src, s.type);
    c.add("Where", {cond, src, dead}, {}, dst);
}

// --- emi_if --------------------------------------------------------------------------------
/// The region an If wraps, from node `i`: i and up to two later nodes that read its
/// outputs and nothing downstream of the region (so the If adds no cycle).
inline std::vector<std::size_t> if_region(const context& c, std::size_t i, std::size_t max_nodes) {
    const auto& g = c.graph();
    std::vector<std::size_t> region{i};
    std::set<std::string> defined(g.nodes[i].outputs.begin(), g.nodes[i].outputs.end());
    auto down = descendants(c, i);
    for (std::size_t j = i + 1; j < g.nodes.size() && region.size() < max_nodes; ++j) {
        const auto& n = g.nodes[j];
        if (graph::detail::is_control_flow(n.op_type)) continue;
        const auto reads = graph::graph::reads(n);
        bool uses_region = false, clean = true;
        for (const auto& v : reads) {
            if (defined.count(v) != 0) {
                uses_region = true;
            } else if (const auto p = c.producer(v); p && down.count(*p) != 0) {
                clean = false;  // reads something the region feeds from outside it
            }
        }
        if (!uses_region || !clean) continue;
        region.push_back(j);
        defined.insert(n.outputs.begin(), n.outputs.end());
    }
    return region;
}
/// Values the region defines that something outside it (or the graph's outputs) reads.
inline std::vector<std::string> region_outputs(const context& c, const std::vector<std::size_t>& region) {
    std::vector<std::string> out;
    const std::set<std::size_t> in(region.begin(), region.end());
    for (const auto i : region) {
        for (const auto& o : c.graph().nodes[i].outputs) {
            if (o.empty()) continue;
            bool outside = c.is_graph_output(o);
            for (const auto r : c.readers(o)) outside = outside || in.count(r) == 0;
            if (outside) out.push_back(o);
        }
    }
    return out;
}
inline std::vector<site> if_sites(const context& c) {
    std::vector<site> out;
    const auto& g = c.graph();
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const auto& n = g.nodes[i];
        if (graph::detail::is_control_flow(n.op_type) || n.outputs.empty()) continue;
        const auto outs = region_outputs(c, {i});
        if (outs.empty()) continue;
        bool ok = true;
        for (const auto& o : outs) ok = ok && c.values().count(o) != 0 && !feeds_shape_slot(c, o);
        if (!ok || guard_operands(c, descendants(c, i)).empty()) continue;
        site s;
        s.node = i;
        s.op_type = n.op_type;
        s.type = c.dtype_of(outs[0]);
        s.numeric = numeric_class::exact;
        out.push_back(std::move(s));
    }
    return out;
}
/// A copy of the region's nodes with every value they define renamed (fresh), for a branch.
inline std::vector<graph::node> renamed_copy(context& c, const std::vector<graph::node>& nodes, std::map<std::string, std::string>& names,
                                             std::string_view tag) {
    std::vector<graph::node> out = nodes;
    for (auto& n : out) {
        for (auto& o : n.outputs) {
            if (o.empty()) continue;
            const auto fresh = c.fresh(o + "_" + std::string(tag));
            names[o] = fresh;
            o = fresh;
        }
    }
    for (auto& n : out) {
        for (const auto& [from, to] : names) context::rename_reads(n, from, to);
    }
    return out;
}
inline void if_apply(context& c, const site& s) {
    auto& r = c.random();
    const auto region = if_region(c, s.node, 1 + r.below(3));
    const auto outs = region_outputs(c, region);
    const auto operands = guard_operands(c, descendants(c, s.node));
    std::vector<graph::node> nodes;
    for (const auto i : region) nodes.push_back(c.graph().nodes[i]);
    std::vector<graph::value_info> infos;
    for (const auto& o : outs) infos.push_back({o, c.dtype_of(o), c.shape_of(o)});
    for (auto k = region.size(); k-- > 0;) c.take_node(region[k]);
    const auto cond = true_condition(c, operands);

    graph::graph then_branch, else_branch;
    then_branch.name = c.fresh("then");
    else_branch.name = c.fresh("else");
    then_branch.opset = else_branch.opset = c.graph().opset;
    std::map<std::string, std::string> then_names, else_names;
    then_branch.nodes = renamed_copy(c, nodes, then_names, "t");
    else_branch.nodes = renamed_copy(c, nodes, else_names, "e");
    for (const auto& vi : infos) {
        then_branch.outputs.push_back({then_names.at(vi.name), vi.type, vi.shape});
        // The dead branch: the same computation, perturbed at its end.
        const auto live = else_names.at(vi.name);
        const auto dead = c.fresh(vi.name + "_dead");
        graph::node p;
        p.inputs = {live};
        p.outputs = {dead};
        if (vi.type == dtype::boolean) {
            p.op_type = "Not";
        } else if (info(vi.type).is_signed && c.accepts("Neg", 0, vi.type)) {
            p.op_type = "Neg";
        } else {
            p.op_type = "Identity";
        }
        else_branch.nodes.push_back(std::move(p));
        else_branch.outputs.push_back({dead, vi.type, vi.shape});
    }
    graph::node n;
    n.op_type = "If";
    n.inputs = {cond};
    for (const auto& vi : infos) n.outputs.push_back(vi.name);
    n.subgraphs.emplace("then_branch", graph::subgraph(std::move(then_branch)));
    n.subgraphs.emplace("else_branch", graph::subgraph(std::move(else_branch)));
    c.graph().nodes.push_back(std::move(n));
}

}  // namespace detail

/// The EMI family.
[[nodiscard]] inline std::vector<mutation> emi_mutations() {
    using namespace detail;
    return {
        {"emi_if", family::emi, "nodes N -> If(cond, then: N, else: N perturbed (Neg/Not) at its outputs)",
         "1-3 connected nodes (not If) whose outputs are read elsewhere; cond true on the profiled inputs: ReduceMax/ReduceMin/an "
         "element of an upstream value vs a constant abs(s) + 1 away, or a dimension or rank of one",
         numeric_class::exact, 0.0, &if_sites, &if_apply},
        {"emi_zero_guard", family::emi, "x -> Add(x, Mul(dead(x), g)), g = Relu(k - ReduceMin(u)) or Cast(Not(cond)) == 0",
         "any non-bool value (floating: finite on the profile) with an upstream value u for the guard; dead(x) is bounded "
         "(Tanh, Sigmoid, Exp(-Abs(x))) so 0 * dead(x) == 0",
         numeric_class::exact, 0.0, &zero_guard_sites, &zero_guard_apply},
        {"emi_where_guard", family::emi, "x -> Where(cond, x, dead(x))", "any value with an upstream value for the guard (cond as emi_if's)",
         numeric_class::exact, 0.0, &where_guard_sites, &where_guard_apply},
    };
}

}  // namespace tensoracle::mutate
