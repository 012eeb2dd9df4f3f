// tensoracle: the identities optimizers rewrite with, applied by us, so a
// compiler must agree with itself on both sides: commutativity and
// associativity, distributivity, MatMul linearity, transposes moved through
// element-wise ops, split(concat), BatchNorm folded into (and out of) a Conv,
// Conv and MatMul bias fusion, the stable softmax shift, Clip and Relu
// merging, Pad folded into Conv pads, Flatten/Reshape chains, +0 and *1.
// Rewrites that move data are exact; rewrites that change arithmetic are
// approximate on floating data and exact on integers.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tensoracle/mutate/recover.hpp"
#include "tensoracle/mutate/resolution.hpp"

namespace tensoracle::mutate {

namespace detail {

/// The node that defines `v`, when `v` is its only use: read by exactly one node
/// and not a graph output (so it may be rewritten away).
[[nodiscard]] inline std::optional<std::size_t> sole_producer(const context& c, const std::string& v, std::string_view op_type) {
    if (v.empty() || c.is_graph_output(v) || c.readers(v).size() != 1) return std::nullopt;
    const auto p = c.producer(v);
    if (!p || c.graph().nodes[*p].op_type != op_type) return std::nullopt;
    return p;
}

// --- commute ---------------------------------------------------------------------------
inline std::vector<site> commute_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : {"Add", "Mul", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal"}) {
        auto s = node_sites(c, op, numeric_class::exact, [](const graph::node& n) {
            return n.inputs.size() == 2 && !n.inputs[0].empty() && !n.inputs[1].empty() && n.inputs[0] != n.inputs[1];
        });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void commute_apply(context& c, const site& s) {
    auto& n = c.graph().nodes[s.node];
    std::swap(n.inputs[0], n.inputs[1]);
}

// --- associate -------------------------------------------------------------------------
inline std::vector<site> associate_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : {"Add", "Mul", "Max", "Min"}) {
        const auto numeric = std::string_view(op) == "Add" || std::string_view(op) == "Mul" ? numeric_class::approximate : numeric_class::exact;
        auto s = node_sites(c, op, numeric, [&](const graph::node& n) {
            if (n.inputs.size() != 2) return false;
            for (int k = 0; k < 2; ++k) {
                const auto p = sole_producer(c, n.inputs[static_cast<std::size_t>(k)], n.op_type);
                if (p && c.graph().nodes[*p].inputs.size() == 2) return true;
            }
            return false;
        });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void associate_apply(context& c, const site& s) {
    // (x . y) . q -> x . (y . q)   or   q . (x . y) -> (q . x) . y
    const auto& n1 = c.graph().nodes[s.node];
    const std::size_t k = sole_producer(c, n1.inputs[0], n1.op_type) && c.graph().nodes[*c.producer(n1.inputs[0])].inputs.size() == 2 ? 0 : 1;
    const auto inner = c.graph().nodes[*c.producer(n1.inputs[k])];
    const auto op = n1.op_type;
    const auto q = n1.inputs[1 - k];
    const auto out = n1.outputs[0];
    const auto x = inner.inputs[0], y = inner.inputs[1];
    // Remove both nodes (the later index first).
    const auto i_inner = *c.producer(n1.inputs[k]);
    const auto i_outer = s.node;
    c.take_node(std::max(i_inner, i_outer));
    c.take_node(std::min(i_inner, i_outer));
    if (k == 0) {
        c.add(op, {x, c.add(op, {y, q})}, {}, out);
    } else {
        c.add(op, {c.add(op, {q, x}), y}, {}, out);
    }
}

// --- distribute ------------------------------------------------------------------------
inline std::vector<site> distribute_sites(const context& c) {
    return node_sites(c, "Mul", numeric_class::approximate, [&](const graph::node& n) {
        if (n.inputs.size() != 2) return false;
        for (std::size_t k = 0; k < 2; ++k) {
            if (sole_producer(c, n.inputs[k], "Add")) return true;
        }
        return false;
    });
}
inline void distribute_apply(context& c, const site& s) {
    // a * (b + c) -> a * b + a * c
    const auto mul = c.graph().nodes[s.node];
    const std::size_t k = sole_producer(c, mul.inputs[0], "Add") ? 0 : 1;
    const auto i_add = *c.producer(mul.inputs[k]);
    const auto add = c.graph().nodes[i_add];
    const auto a = mul.inputs[1 - k];
    c.take_node(std::max(i_add, s.node));
    c.take_node(std::min(i_add, s.node));
    const auto ab = k == 0 ? c.add("Mul", {add.inputs[0], a}) : c.add("Mul", {a, add.inputs[0]});
    const auto ac = k == 0 ? c.add("Mul", {add.inputs[1], a}) : c.add("Mul", {a, add.inputs[1]});
    c.add("Add", {ab, ac}, {}, mul.outputs[0]);
}

// --- matmul_linearity ---------------------------------------------------------------------
inline std::vector<site> matmul_linearity_sites(const context& c) {
    return node_sites(c, "MatMul", numeric_class::approximate, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
inline void matmul_linearity_apply(context& c, const site& s) {
    // A B -> A (B - R) + A R, R random at B's scale
    const auto n = c.take_node(s.node);
    const auto& b = c.value(n.inputs[1]);
    const double scale = std::max(max_abs(b), 1e-3);
    const auto r = c.add_constant(c.random().uniform_tensor(s.type, b.shape(), -scale, scale), "r");
    const auto left = c.add("MatMul", {n.inputs[0], c.add("Sub", {n.inputs[1], r})});
    const auto right = c.add("MatMul", {n.inputs[0], r});
    c.add("Add", {left, right}, {}, n.outputs[0]);
}

// --- transpose_sink / transpose_through_elementwise -------------------------------------------
inline std::vector<site> transpose_sink_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : unary_elementwise_ops) {
        auto s = node_sites(c, op, numeric_class::exact, [&](const graph::node& n) { return sole_producer(c, n.inputs[0], "Transpose").has_value(); });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void transpose_sink_apply(context& c, const site& s) {
    // U(Transpose(x, p)) -> Transpose(U(x), p)
    const auto u = c.graph().nodes[s.node];
    const auto i_t = *c.producer(u.inputs[0]);
    const auto t = c.graph().nodes[i_t];
    c.take_node(std::max(i_t, s.node));
    c.take_node(std::min(i_t, s.node));
    const auto y = c.add(u.op_type, {t.inputs[0]}, u.attributes);
    c.add("Transpose", {y}, t.attributes, u.outputs[0]);
}
inline std::vector<site> transpose_through_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : unary_elementwise_ops) {
        auto s = node_sites(c, op, numeric_class::exact, [&](const graph::node& n) { return c.shape_of(n.inputs[0]).size() >= 2; });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void transpose_through_apply(context& c, const site& s) {
    // U(x) -> Transpose(U(Transpose(x, p)), p^-1)
    const auto n = c.take_node(s.node);
    const auto p = random_permutation(c.random(), c.shape_of(n.inputs[0]).size());
    const auto t = c.add("Transpose", {n.inputs[0]}, {{"perm", p}});
    const auto y = c.add(n.op_type, {t}, n.attributes);
    c.add("Transpose", {y}, {{"perm", inverse_permutation(p)}}, n.outputs[0]);
}

// --- concat_split ------------------------------------------------------------------------------
/// Nodes upstream of value v (those it depends on), by index.
inline std::set<std::size_t> ancestors(const context& c, const std::string& v) {
    std::set<std::size_t> out;
    std::vector<std::string> todo{v};
    while (!todo.empty()) {
        const auto x = todo.back();
        todo.pop_back();
        const auto p = c.producer(x);
        if (!p || !out.insert(*p).second) continue;
        for (const auto& in : graph::graph::reads(c.graph().nodes[*p])) todo.push_back(in);
    }
    return out;
}
/// A partner for `a` along `axis`: a value of a's dtype and rank, equal dims but on `axis`.
inline std::vector<std::string> concat_partners(const context& c, const std::string& a, std::size_t axis) {
    std::vector<std::string> out;
    const auto& sa = c.shape_of(a);
    for (const auto& [b, t] : c.values()) {
        if (b == a || t.element_dtype() != c.dtype_of(a) || t.shape().size() != sa.size() || t.size() == 0) continue;
        bool ok = true;
        for (std::size_t k = 0; k < sa.size(); ++k) ok = ok && (k == axis || t.shape()[k] == sa[k]);
        if (ok && !feeds_shape_slot(c, b)) out.push_back(b);
    }
    return out;
}
inline std::vector<site> concat_split_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        if (c.shape_of(v).empty() || !plain_value(c, v)) return false;
        for (std::size_t axis = 0; axis < c.shape_of(v).size(); ++axis) {
            if (!concat_partners(c, v, axis).empty()) return true;
        }
        return false;
    });
}
inline void concat_split_apply(context& c, const site& s) {
    // (a, b) -> Split(Concat(a, b, axis), axis): readers of a and b read the parts
    const auto& a = s.value;
    auto& r = c.random();
    std::vector<std::pair<std::size_t, std::string>> options;
    for (std::size_t axis = 0; axis < c.shape_of(a).size(); ++axis) {
        for (const auto& b : concat_partners(c, a, axis)) options.emplace_back(axis, b);
    }
    const auto [axis, b] = options[r.below(options.size())];
    // Readers upstream of the Concat's inputs keep their originals (else a cycle).
    auto up = ancestors(c, a);
    const auto up_b = ancestors(c, b);
    up.insert(up_b.begin(), up_b.end());
    const auto first = r.bernoulli(0.5);
    const std::string x = first ? a : b, y = first ? b : a;
    const auto cat = c.add("Concat", {x, y}, {{"axis", static_cast<std::int64_t>(axis)}});
    const std::vector<std::int64_t> sizes{static_cast<std::int64_t>(c.shape_of(x)[axis]), static_cast<std::int64_t>(c.shape_of(y)[axis])};
    const auto parts = c.add_node("Split", {cat, c.add_ints(sizes, "split")}, {{}, {}}, {{"axis", static_cast<std::int64_t>(axis)}});
    const auto n_before = c.graph().nodes.size() - 2;  // the two new nodes are last
    for (std::size_t i = 0; i < n_before; ++i) {
        if (up.count(i) != 0) continue;
        context::rename_reads(c.graph().nodes[i], x, parts[0]);
        context::rename_reads(c.graph().nodes[i], y, parts[1]);
    }
}

// --- conv_bn_fold / conv_bn_unfold -----------------------------------------------------------------
inline bool plain_conv(const context& c, const graph::node& n) {
    return is_float(c.dtype_of(n.outputs[0])) && c.shape_of(n.inputs[0]).size() >= 3;
}
inline std::vector<site> conv_bn_fold_sites(const context& c) {
    return node_sites(c, "BatchNormalization", numeric_class::approximate, [&](const graph::node& n) {
        if (int_attr(n, "training_mode", 0) != 0 || !only_first_output_used(c, n)) return false;
        const auto p = sole_producer(c, n.inputs[0], "Conv");
        return p && plain_conv(c, c.graph().nodes[*p]);
    });
}
/// s = scale / sqrt(var + eps) per channel, as a rank-`rank` tensor view [C, 1, ...] (rank-1 ones).
inline std::string bn_factor(context& c, const graph::node& bn, dtype d, std::size_t rank) {
    const double eps = float_attr(bn, "epsilon", 1e-5);
    auto as = [&](const std::string& v) { return c.dtype_of(v) == d ? v : c.add("Cast", {v}, {{"to", std::int64_t{onnx_type(d)}}}); };
    const auto sd = c.add("Sqrt", {c.add("Add", {as(bn.inputs[4]), c.add_scalar(d, eps, "eps")})});
    const auto s = c.add("Div", {as(bn.inputs[1]), sd});
    (void)rank;
    return s;
}
inline void conv_bn_fold_apply(context& c, const site& s) {
    // BN(Conv(x, W, B)) -> Conv(x, W s, (B - m) s + b)
    const auto bn = c.graph().nodes[s.node];
    const auto i_conv = *c.producer(bn.inputs[0]);
    const auto conv = c.graph().nodes[i_conv];
    const dtype d = s.type;
    const auto wrank = c.shape_of(conv.inputs[1]).size();
    c.take_node(std::max(i_conv, s.node));
    c.take_node(std::min(i_conv, s.node));
    auto as = [&](const std::string& v) { return c.dtype_of(v) == d ? v : c.add("Cast", {v}, {{"to", std::int64_t{onnx_type(d)}}}); };
    const auto factor = bn_factor(c, bn, d, wrank);
    std::vector<std::int64_t> wshape(wrank, 1);
    wshape[0] = -1;
    const auto w = c.add("Mul", {conv.inputs[1], c.add("Reshape", {factor, c.add_ints(wshape, "shape")})});
    const auto b0 = input_or_empty(conv, 2);
    const auto centered = b0.empty() ? c.add("Neg", {as(bn.inputs[3])}) : c.add("Sub", {b0, as(bn.inputs[3])});
    const auto b = c.add("Add", {c.add("Mul", {centered, factor}), as(bn.inputs[2])});
    c.add("Conv", {conv.inputs[0], w, b}, conv.attributes, bn.outputs[0]);
}
inline std::vector<site> conv_bn_unfold_sites(const context& c) {
    return node_sites(c, "Conv", numeric_class::approximate, [&](const graph::node& n) { return plain_conv(c, n); });
}
inline void conv_bn_unfold_apply(context& c, const site& s) {
    // Conv(x, W, B) -> BN(Conv(x, W / s, (B - b) / s + m), scale, b, m, v): s = scale / sqrt(v + eps)
    const auto conv = c.take_node(s.node);
    const dtype d = s.type;
    const auto& wshape = c.shape_of(conv.inputs[1]);
    const std::size_t M = wshape[0];
    auto& r = c.random();
    const double eps = 1e-5;
    auto vec = [&](double lo, double hi) { return r.uniform_tensor(d, {M}, lo, hi); };
    const auto scale = vec(0.5, 2.0), bias = vec(-1.0, 1.0), mean = vec(-1.0, 1.0), var = vec(0.25, 4.0);
    tensor factor = tensor::zeros(d, {M});
    for (std::size_t k = 0; k < M; ++k) {
        const double f = scale.value_as_double(k) / std::sqrt(var.value_as_double(k) + eps);
        factor.visit([&](auto v) { v[k] = value_cast<typename decltype(v)::value_type>(f); });
    }
    const auto f = c.add_constant(factor, "bn_factor");
    std::vector<std::int64_t> view(wshape.size(), 1);
    view[0] = -1;
    const auto w = c.add("Div", {conv.inputs[1], c.add("Reshape", {f, c.add_ints(view, "shape")})});
    const auto bn_bias = c.add_constant(bias, "bn_bias"), bn_mean = c.add_constant(mean, "bn_mean");
    const auto b0 = input_or_empty(conv, 2);
    const auto shifted = b0.empty() ? c.add("Neg", {bn_bias}) : c.add("Sub", {b0, bn_bias});
    const auto b = c.add("Add", {c.add("Div", {shifted, f}), bn_mean});
    const auto y = c.add("Conv", {conv.inputs[0], w, b}, conv.attributes);
    c.add("BatchNormalization", {y, c.add_constant(scale, "bn_scale"), bn_bias, bn_mean, c.add_constant(var, "bn_var")},
          {{"epsilon", eps}}, conv.outputs[0]);
}

// --- conv_bias_unfuse / conv_bias_fuse ------------------------------------------------------------
inline std::vector<site> conv_bias_unfuse_sites(const context& c) {
    return node_sites(c, "Conv", numeric_class::approximate, [&](const graph::node& n) { return !input_or_empty(n, 2).empty(); });
}
inline void conv_bias_unfuse_apply(context& c, const site& s) {
    // Conv(x, W, B) -> Add(Conv(x, W), B as [M, 1, ...])
    const auto conv = c.take_node(s.node);
    const auto rank = c.shape_of(conv.outputs[0]).size();
    const auto y = c.add("Conv", {conv.inputs[0], conv.inputs[1]}, conv.attributes);
    c.add("Add", {y, channel_view(c, conv.inputs[2], rank)}, {}, conv.outputs[0]);
}
/// Is `b` a per-channel bias of a [N, M, ...] output: M elements laid along axis 1?
inline bool per_channel(const shape_type& b, const shape_type& y) {
    if (b.size() > y.size() || y.size() < 3) return false;
    std::size_t size = 1;
    for (const auto d : b) size *= d;
    if (size != y[1]) return false;
    // Aligned to the right: b's axis for y's axis 1 holds M, every other is 1.
    const std::size_t offset = y.size() - b.size();
    for (std::size_t k = 0; k < b.size(); ++k) {
        const std::size_t yk = k + offset;
        if (b[k] != (yk == 1 ? y[1] : 1)) return false;
    }
    return offset <= 1;
}
/// The operand k of Add node `n` that a bias-free Conv used nowhere else defines, with a
/// per-channel tensor of the same dtype on the other side; none when there is none.
inline std::optional<std::size_t> fusable_conv_operand(const context& c, const graph::node& n) {
    if (n.inputs.size() != 2) return std::nullopt;
    for (std::size_t k = 0; k < 2; ++k) {
        const auto p = sole_producer(c, n.inputs[k], "Conv");
        if (p && input_or_empty(c.graph().nodes[*p], 2).empty() && per_channel(c.shape_of(n.inputs[1 - k]), c.shape_of(n.inputs[k])) &&
            c.dtype_of(n.inputs[1 - k]) == c.dtype_of(n.inputs[k])) {
            return k;
        }
    }
    return std::nullopt;
}
inline std::vector<site> conv_bias_fuse_sites(const context& c) {
    return node_sites(c, "Add", numeric_class::approximate, [&](const graph::node& n) { return fusable_conv_operand(c, n).has_value(); });
}
inline void conv_bias_fuse_apply(context& c, const site& s) {
    // Add(Conv(x, W), b [M, 1, ...]) -> Conv(x, W, Reshape(b, [M]))
    const auto add = c.graph().nodes[s.node];
    const std::size_t k = *fusable_conv_operand(c, add);
    const auto i_conv = *c.producer(add.inputs[k]);
    const auto conv = c.graph().nodes[i_conv];
    const auto b = add.inputs[1 - k];
    c.take_node(std::max(i_conv, s.node));
    c.take_node(std::min(i_conv, s.node));
    const auto flat = c.add("Reshape", {b, c.add_ints({-1}, "shape")});
    c.add("Conv", {conv.inputs[0], conv.inputs[1], flat}, conv.attributes, add.outputs[0]);
}

// --- softmax_shift -------------------------------------------------------------------------------
inline std::vector<site> softmax_shift_sites(const context& c) {
    auto out = softmax_sites(c);
    auto more = logsoftmax_sites(c);
    out.insert(out.end(), more.begin(), more.end());
    return out;
}
inline void softmax_shift_apply(context& c, const site& s) {
    // softmax(x) -> softmax(x - max(x)) (and LogSoftmax): a shift along the axis cancels
    auto& n = c.graph().nodes[s.node];
    const auto x = n.inputs[0];
    const auto axis = norm_axis(int_attr(n, "axis", -1), c.shape_of(x).size());
    const auto shifted_x = shifted(c, x, axis);
    c.graph().nodes[s.node].inputs[0] = shifted_x;
}

// --- clip_split / relu_as_clip ---------------------------------------------------------------------
inline std::vector<site> clip_split_sites(const context& c) {
    return node_sites(c, "Clip", numeric_class::exact, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])) || c.accepts("Clip", 0, c.dtype_of(n.outputs[0])); });
}
inline void clip_split_apply(context& c, const site& s) {
    // Clip(x, lo, hi) -> Clip(Clip(x, lo', hi'), lo, hi) with lo' <= lo, hi' >= hi
    const auto n = c.graph().nodes[s.node];
    const dtype d = s.type;
    auto& r = c.random();
    auto bound = [&](std::size_t k, double dir) -> std::string {
        const auto v = input_or_empty(n, k);
        if (v.empty() || c.value(v).size() != 1) return {};
        const double b = c.value(v).value_as_double(0);
        if (!std::isfinite(b)) return {};
        double wider = b + dir * (std::abs(b) * r.uniform(0.25, 1.0) + 1.0);
        if (std::abs(wider) > 0.5 * max_finite(d)) return {};
        if (!is_float(d)) wider = std::round(wider);
        return c.add_scalar(d, wider, dir < 0 ? "lo" : "hi");
    };
    const auto lo = bound(1, -1.0), hi = bound(2, +1.0);
    std::vector<std::string> in{n.inputs[0], lo, hi};
    while (!in.empty() && in.back().empty()) in.pop_back();
    const auto inner = c.add("Clip", in);
    c.graph().nodes[s.node].inputs[0] = inner;
}
inline std::vector<site> relu_as_clip_sites(const context& c) {
    return node_sites(c, "Relu", numeric_class::exact, [&](const graph::node& n) { return c.accepts("Clip", 0, c.dtype_of(n.outputs[0])); });
}
inline void relu_as_clip_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    c.add("Clip", {n.inputs[0], c.add_scalar(s.type, 0.0, "zero")}, {}, n.outputs[0]);
}

// --- conv_pad_out / pad_into_conv ----------------------------------------------------------------
inline bool explicit_pads(const graph::node& n) {
    const auto ap = str_attr(n, "auto_pad", "NOTSET");
    return ap == "NOTSET" || ap.empty();
}
inline std::vector<site> conv_pad_out_sites(const context& c) {
    return node_sites(c, "Conv", numeric_class::approximate, [&](const graph::node& n) {
        if (!explicit_pads(n)) return false;
        const auto p = ints_attr(n, "pads");
        if (!p || std::none_of(p->begin(), p->end(), [](std::int64_t x) { return x > 0; })) return false;
        // The padded input is materialized: keep it within padded_size_limit of the input's size.
        const auto& x = c.shape_of(n.inputs[0]);
        const std::size_t spatial = p->size() / 2;
        if (x.size() != spatial + 2) return false;
        double padded = static_cast<double>(x[0] * x[1]);
        for (std::size_t k = 0; k < spatial; ++k) padded *= static_cast<double>(x[2 + k]) + static_cast<double>((*p)[k] + (*p)[spatial + k]);
        return padded <= padded_size_limit(c.value(n.inputs[0]).size());
    });
}
inline void conv_pad_out_apply(context& c, const site& s) {
    // Conv(x, W, pads p) -> Conv(Pad(x, p, 0), W, pads 0)
    auto n = c.take_node(s.node);
    const auto p = *ints_attr(n, "pads");
    const std::size_t spatial = p.size() / 2;
    std::vector<std::int64_t> pads(2 * (spatial + 2), 0);
    for (std::size_t k = 0; k < spatial; ++k) {
        pads[2 + k] = p[k];
        pads[spatial + 4 + k] = p[spatial + k];
    }
    const auto padded = c.add("Pad", {n.inputs[0], c.add_ints(pads, "pads")}, {{"mode", std::string("constant")}});
    n.attributes.insert_or_assign("pads", std::vector<std::int64_t>(p.size(), 0));
    auto in = n.inputs;
    in[0] = padded;
    c.add("Conv", in, n.attributes, n.outputs[0]);
}
inline std::vector<site> pad_into_conv_sites(const context& c) {
    return node_sites(c, "Conv", numeric_class::approximate, [&](const graph::node& n) {
        if (!explicit_pads(n)) return false;
        const auto p = sole_producer(c, n.inputs[0], "Pad");
        if (!p) return false;
        const auto& pad = c.graph().nodes[*p];
        if (str_attr(pad, "mode", "constant") != "constant") return false;
        const auto cv = input_or_empty(pad, 2);
        if (!cv.empty() && c.value(cv).size() == 1 && c.value(cv).value_as_double(0) != 0.0) return false;
        const auto pads_v = input_or_empty(pad, 1);
        if (pads_v.empty() || input_or_empty(pad, 3).size() != 0) return false;  // Pad-18's axes: not at opset 17
        const auto& pads = c.value(pads_v);
        const std::size_t r = pads.size() / 2;
        for (std::size_t k = 0; k < pads.size(); ++k) {
            const double v = pads.value_as_double(k);
            if (v < 0 || ((k % r) < 2 && v != 0)) return false;  // no cropping, nothing on N and C
        }
        return true;
    });
}
inline void pad_into_conv_apply(context& c, const site& s) {
    // Conv(Pad(x, p), W, pads q) -> Conv(x, W, pads q + p)
    auto conv = c.graph().nodes[s.node];
    const auto i_pad = *c.producer(conv.inputs[0]);
    const auto pad = c.graph().nodes[i_pad];
    const auto& pads = c.value(pad.inputs[1]);
    const std::size_t r = pads.size() / 2, spatial = r - 2;
    auto q = ints_attr(conv, "pads").value_or(std::vector<std::int64_t>(2 * spatial, 0));
    for (std::size_t k = 0; k < spatial; ++k) {
        q[k] += static_cast<std::int64_t>(pads.value_as_double(2 + k));
        q[spatial + k] += static_cast<std::int64_t>(pads.value_as_double(r + 2 + k));
    }
    c.take_node(std::max(i_pad, s.node));
    c.take_node(std::min(i_pad, s.node));
    conv.attributes.insert_or_assign("pads", q);
    conv.inputs[0] = pad.inputs[0];
    c.add("Conv", conv.inputs, conv.attributes, conv.outputs[0]);
}

// --- flatten_as_reshape / reshape_collapse ---------------------------------------------------------
inline std::vector<site> flatten_sites(const context& c) {
    return node_sites(c, "Flatten", numeric_class::exact, [](const graph::node&) { return true; });
}
inline void flatten_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto& out = c.shape_of(n.outputs[0]);
    c.add("Reshape", {n.inputs[0], c.add_ints({static_cast<std::int64_t>(out[0]), static_cast<std::int64_t>(out[1])}, "shape")}, {},
          n.outputs[0]);
}
inline std::vector<site> reshape_collapse_sites(const context& c) {
    return node_sites(c, "Reshape", numeric_class::exact, [&](const graph::node& n) {
        return sole_producer(c, n.inputs[0], "Reshape").has_value() || sole_producer(c, n.inputs[0], "Flatten").has_value();
    });
}
inline void reshape_collapse_apply(context& c, const site& s) {
    // Reshape(Reshape(x, s1), s2) -> Reshape(x, s2) (a Flatten inside likewise)
    const auto outer = c.graph().nodes[s.node];
    const auto i_inner = *c.producer(outer.inputs[0]);
    const auto inner = c.graph().nodes[i_inner];
    c.take_node(std::max(i_inner, s.node));
    c.take_node(std::min(i_inner, s.node));
    const auto& target = c.shape_of(outer.outputs[0]);
    std::vector<std::int64_t> shape(target.begin(), target.end());
    c.add("Reshape", {inner.inputs[0], c.add_ints(shape, "shape")}, {}, outer.outputs[0]);
}

// --- matmul_bias_fusion ----------------------------------------------------------------------------
inline bool gemm_bias(const shape_type& cshape, std::size_t m, std::size_t n) {
    if (cshape.size() > 2) return false;
    if (cshape.size() == 2) return (cshape[0] == 1 || cshape[0] == m) && (cshape[1] == 1 || cshape[1] == n);
    if (cshape.size() == 1) return cshape[0] == 1 || cshape[0] == n;
    return true;
}
/// The operand k of Add node `n` that a 2-D MatMul used nowhere else defines, with a C on
/// the other side that Gemm can broadcast; none when there is none.
inline std::optional<std::size_t> fusable_matmul_operand(const context& c, const graph::node& n) {
    if (n.inputs.size() != 2) return std::nullopt;
    for (std::size_t k = 0; k < 2; ++k) {
        const auto p = sole_producer(c, n.inputs[k], "MatMul");
        if (!p) continue;
        const auto& mm = c.graph().nodes[*p];
        const auto& a = c.shape_of(mm.inputs[0]);
        const auto& b = c.shape_of(mm.inputs[1]);
        if (a.size() == 2 && b.size() == 2 && gemm_bias(c.shape_of(n.inputs[1 - k]), a[0], b[1])) return k;
    }
    return std::nullopt;
}
inline std::vector<site> matmul_bias_sites(const context& c) {
    return node_sites(c, "Add", numeric_class::approximate, [&](const graph::node& n) {
        const dtype d = c.dtype_of(n.outputs[0]);
        return is_float(d) && c.accepts("Gemm", 0, d) && fusable_matmul_operand(c, n).has_value();
    });
}
inline void matmul_bias_apply(context& c, const site& s) {
    const auto add = c.graph().nodes[s.node];
    const std::size_t k = *fusable_matmul_operand(c, add);
    const auto i_mm = *c.producer(add.inputs[k]);
    const auto mm = c.graph().nodes[i_mm];
    const auto bias = add.inputs[1 - k];
    c.take_node(std::max(i_mm, s.node));
    c.take_node(std::min(i_mm, s.node));
    c.add("Gemm", {mm.inputs[0], mm.inputs[1], bias}, {}, add.outputs[0]);
}

// --- neutral_element -------------------------------------------------------------------------------
inline std::vector<site> neutral_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        const dtype d = c.dtype_of(v);
        return plain_value(c, v) && d != dtype::boolean && c.accepts("Add", 0, d) && c.accepts("Mul", 0, d);
    });
}
inline void neutral_apply(context& c, const site& s) {
    // x -> x * 1 or x + 0, what constant folding removes
    const dtype d = s.type;
    const bool mul = c.random().bernoulli(0.5);
    const auto [src, dst] = c.intercept(s.value);
    c.add(mul ? "Mul" : "Add", {src, c.add_scalar(d, mul ? 1.0 : 0.0, mul ? "one" : "zero")}, {}, dst);
}

}  // namespace detail

/// The compiler-rewrite family.
[[nodiscard]] inline std::vector<mutation> rewrite_mutations() {
    using namespace detail;
    return {
        {"commute", family::rewrite, "a . b -> b . a", "Add, Mul, Max, Min, Sum, Mean, And, Or, Xor or Equal with two distinct inputs",
         numeric_class::exact, 0.0, &commute_sites, &commute_apply},
        {"associate", family::rewrite, "(x . y) . q -> x . (y . q);  q . (x . y) -> (q . x) . y",
         "Add, Mul, Max or Min reading a two-input node of the same op used nowhere else (Max, Min and integers: exact)",
         numeric_class::approximate, -4.0, &associate_sites, &associate_apply},
        {"distribute", family::rewrite, "a * (b + c) -> a * b + a * c", "Mul reading an Add used nowhere else (integers: exact)",
         numeric_class::approximate, -4.0, &distribute_sites, &distribute_apply},
        {"matmul_linearity", family::rewrite, "A B -> A (B - R) + A R", "floating MatMul (R: random at B's scale, a new weight)",
         numeric_class::approximate, -4.0, &matmul_linearity_sites, &matmul_linearity_apply},
        {"transpose_sink", family::rewrite, "U(Transpose(x, p)) -> Transpose(U(x), p)",
         "a unary element-wise op reading a Transpose used nowhere else", numeric_class::exact, 0.0, &transpose_sink_sites,
         &transpose_sink_apply},
        {"transpose_through_elementwise", family::rewrite, "U(x) -> Transpose(U(Transpose(x, p)), p^-1)",
         "a unary element-wise op on rank >= 2", numeric_class::exact, 0.0, &transpose_through_sites, &transpose_through_apply},
        {"concat_split", family::rewrite, "(a, b) -> Split(Concat(a, b, axis), axis)",
         "two values of one dtype and rank, equal dims but on the axis; readers upstream of either keep the originals",
         numeric_class::exact, 0.0, &concat_split_sites, &concat_split_apply},
        {"conv_bn_fold", family::rewrite, "BN(Conv(x, W, B)) -> Conv(x, W s, (B - m) s + b), s = scale / sqrt(v + eps)",
         "inference BatchNormalization reading a floating Conv (rank >= 3) used nowhere else", numeric_class::approximate, -4.0,
         &conv_bn_fold_sites, &conv_bn_fold_apply},
        {"conv_bn_unfold", family::rewrite, "Conv(x, W, B) -> BN(Conv(x, W / s, (B - b) / s + m), scale, b, m, v)",
         "floating Conv of rank >= 3 (BN parameters random: scale in [0.5, 2], var in [0.25, 4])", numeric_class::approximate, -4.0,
         &conv_bn_unfold_sites, &conv_bn_unfold_apply},
        {"conv_bias_unfuse", family::rewrite, "Conv(x, W, B) -> Add(Conv(x, W), B as [M, 1, ...])", "Conv with a bias",
         numeric_class::approximate, -4.0, &conv_bias_unfuse_sites, &conv_bias_unfuse_apply},
        {"conv_bias_fuse", family::rewrite, "Add(Conv(x, W), b) -> Conv(x, W, Reshape(b, [M]))",
         "Add of a bias-free Conv used nowhere else and a per-channel tensor ([M, 1, ...] or [1, M, 1, ...])",
         numeric_class::approximate, -4.0, &conv_bias_fuse_sites, &conv_bias_fuse_apply},
        {"softmax_shift", family::rewrite, "Softmax(x) -> Softmax(x - ReduceMax(x, axis)); LogSoftmax likewise",
         "floating Softmax or LogSoftmax", numeric_class::approximate, -4.0, &softmax_shift_sites, &softmax_shift_apply},
        {"clip_split", family::rewrite, "Clip(x, lo, hi) -> Clip(Clip(x, lo', hi'), lo, hi), lo' < lo, hi' > hi",
         "Clip (absent bounds stay absent)", numeric_class::exact, 0.0, &clip_split_sites, &clip_split_apply},
        {"relu_as_clip", family::rewrite, "Relu(x) -> Clip(x, 0)", "Relu of a dtype Clip takes", numeric_class::exact, 0.0,
         &relu_as_clip_sites, &relu_as_clip_apply},
        {"conv_pad_out", family::rewrite, "Conv(x, W, pads p) -> Conv(Pad(x, p, 0), W, pads 0)",
         "Conv with explicit pads (auto_pad NOTSET), one of them > 0", numeric_class::approximate, -4.0, &conv_pad_out_sites,
         &conv_pad_out_apply},
        {"pad_into_conv", family::rewrite, "Conv(Pad(x, p, 0), W, pads q) -> Conv(x, W, pads q + p)",
         "Conv (auto_pad NOTSET) reading a zero constant Pad used nowhere else that pads spatial axes only, by >= 0",
         numeric_class::approximate, -4.0, &pad_into_conv_sites, &pad_into_conv_apply},
        {"flatten_as_reshape", family::rewrite, "Flatten(x, axis) -> Reshape(x, [a, b])", "any Flatten", numeric_class::exact, 0.0,
         &flatten_sites, &flatten_apply},
        {"reshape_collapse", family::rewrite, "Reshape(Reshape(x, s1), s2) -> Reshape(x, s2)",
         "Reshape reading a Reshape or Flatten used nowhere else", numeric_class::exact, 0.0, &reshape_collapse_sites,
         &reshape_collapse_apply},
        {"matmul_bias_fusion", family::rewrite, "Add(MatMul(A, B), C) -> Gemm(A, B, C)",
         "Add of a 2-D floating MatMul used nowhere else and a C Gemm can broadcast", numeric_class::approximate, -4.0,
         &matmul_bias_sites, &matmul_bias_apply},
        {"neutral_element", family::rewrite, "x -> Mul(x, 1) or Add(x, 0)", "any non-bool value of a dtype Add and Mul take",
         numeric_class::exact, 0.0, &neutral_sites, &neutral_apply},
    };
}

}  // namespace tensoracle::mutate
