// tensoracle: operator resolution (TorchProbe): an op replaced by its
// decomposition into simpler ops, the way a compiler lowers it. Data movement
// resolutions (an element-wise op unrolled over slices, Max/Min chains) are
// exact; arithmetic ones round differently and are approximate.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tensoracle/mutate/mutation.hpp"

namespace tensoracle::mutate {

namespace detail {

/// The unary element-wise ops of the registry (one output element per input element).
inline constexpr std::string_view unary_elementwise_ops[] = {
    "Abs",   "Acos",  "Acosh", "Asin",     "Asinh",       "Atan",      "Atanh",     "Ceil",      "Celu",  "Cos",  "Cosh",
    "Elu",   "Erf",   "Exp",   "Floor",    "HardSigmoid", "HardSwish", "Identity",  "IsInf",     "IsNaN", "LeakyRelu",
    "Log",   "Neg",   "Not",   "Reciprocal", "Relu",      "Round",     "Selu",      "Shrink",    "Sigmoid", "Sign",
    "Sin",   "Sinh",  "Softplus", "Softsign", "Sqrt",      "Tan",       "Tanh",      "ThresholdedRelu"};

[[nodiscard]] inline bool is_unary_elementwise(std::string_view op) {
    return std::find(std::begin(unary_elementwise_ops), std::end(unary_elementwise_ops), op) != std::end(unary_elementwise_ops);
}

/// The node's first output is its only one in use (others absent or unread).
[[nodiscard]] inline bool only_first_output_used(const context& c, const graph::node& n) {
    for (std::size_t o = 1; o < n.outputs.size(); ++o) {
        if (!n.outputs[o].empty() && (!c.readers(n.outputs[o]).empty() || c.is_graph_output(n.outputs[o]))) return false;
    }
    return true;
}

/// A per-channel vector (length C) reshaped to broadcast along axis 1 of a rank-`rank` tensor.
inline std::string channel_view(context& c, const std::string& v, std::size_t rank) {
    const auto C = static_cast<std::int64_t>(c.value(v).size());
    std::vector<std::int64_t> shape(rank - 1, 1);
    shape[0] = C;
    return c.add("Reshape", {v, c.add_ints(shape, "shape")});
}

// --- gemm_decompose ----------------------------------------------------------------
inline std::vector<site> gemm_sites(const context& c) {
    return node_sites(c, "Gemm", numeric_class::approximate,
                      [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
inline void gemm_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const dtype d = s.type;
    auto a = n.inputs[0], b = n.inputs[1];
    if (int_attr(n, "transA", 0) != 0) a = c.add("Transpose", {a}, {{"perm", std::vector<std::int64_t>{1, 0}}});
    if (int_attr(n, "transB", 0) != 0) b = c.add("Transpose", {b}, {{"perm", std::vector<std::int64_t>{1, 0}}});
    const double alpha = float_attr(n, "alpha", 1.0), beta = float_attr(n, "beta", 1.0);
    const auto c_in = input_or_empty(n, 2);
    std::string y = c.add("MatMul", {a, b});
    const bool has_c = !c_in.empty();
    if (alpha != 1.0) y = c.add("Mul", {y, c.add_scalar(d, alpha, "alpha")}, {}, has_c ? std::string() : n.outputs[0]);
    if (has_c) {
        const auto cc = beta != 1.0 ? c.add("Mul", {c_in, c.add_scalar(d, beta, "beta")}) : c_in;
        c.add("Add", {y, cc}, {}, n.outputs[0]);
    } else if (alpha == 1.0) {
        c.add("Identity", {y}, {}, n.outputs[0]);
    }
}

// --- softmax_decompose / logsoftmax_decompose ----------------------------------------
inline std::vector<site> softmax_sites(const context& c) {
    return node_sites(c, "Softmax", numeric_class::approximate, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
inline std::vector<site> logsoftmax_sites(const context& c) {
    return node_sites(c, "LogSoftmax", numeric_class::approximate, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
/// x - max(x) along `axis` (kept), the stable shift both softmaxes start from.
inline std::string shifted(context& c, const std::string& x, std::int64_t axis) {
    const auto m = c.add("ReduceMax", {x}, {{"axes", std::vector<std::int64_t>{axis}}, {"keepdims", std::int64_t{1}}});
    return c.add("Sub", {x, m});
}
inline void softmax_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto rank = c.shape_of(n.inputs[0]).size();
    const auto axis = norm_axis(int_attr(n, "axis", -1), rank);
    const auto e = c.add("Exp", {shifted(c, n.inputs[0], axis)});
    const auto sum = c.add("ReduceSum", {e, c.add_ints({axis}, "axes")}, {{"keepdims", std::int64_t{1}}});
    c.add("Div", {e, sum}, {}, n.outputs[0]);
}
inline void logsoftmax_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto rank = c.shape_of(n.inputs[0]).size();
    const auto axis = norm_axis(int_attr(n, "axis", -1), rank);
    const auto z = shifted(c, n.inputs[0], axis);
    const auto sum = c.add("ReduceSum", {c.add("Exp", {z}), c.add_ints({axis}, "axes")}, {{"keepdims", std::int64_t{1}}});
    c.add("Sub", {z, c.add("Log", {sum})}, {}, n.outputs[0]);
}

// --- layernorm_decompose -------------------------------------------------------------
inline std::vector<site> layernorm_sites(const context& c) {
    return node_sites(c, "LayerNormalization", numeric_class::approximate, [&](const graph::node& n) {
        const dtype d = c.dtype_of(n.outputs[0]);
        return is_float(d) && only_first_output_used(c, n);
    });
}
inline void layernorm_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const dtype d = s.type;
    const auto rank = c.shape_of(n.inputs[0]).size();
    const auto axis = norm_axis(int_attr(n, "axis", -1), rank);
    const double eps = float_attr(n, "epsilon", 1e-5);
    // stash_type = 1 (the default) computes the statistics in float32: so does the decomposition.
    const bool widen = (d == dtype::f16 || d == dtype::bf16) && int_attr(n, "stash_type", 1) == 1;
    const dtype w = widen ? dtype::f32 : d;
    auto cast_to = [&](const std::string& v, dtype t) { return c.add("Cast", {v}, {{"to", std::int64_t{onnx_type(t)}}}); };
    std::vector<std::int64_t> axes;
    for (auto a = axis; a < static_cast<std::int64_t>(rank); ++a) axes.push_back(a);
    const auto x = widen ? cast_to(n.inputs[0], w) : n.inputs[0];
    const auto mean = c.add("ReduceMean", {x}, {{"axes", axes}, {"keepdims", std::int64_t{1}}});
    const auto dev = c.add("Sub", {x, mean});
    const auto var = c.add("ReduceMean", {c.add("Mul", {dev, dev})}, {{"axes", axes}, {"keepdims", std::int64_t{1}}});
    const auto sd = c.add("Sqrt", {c.add("Add", {var, c.add_scalar(w, eps, "eps")})});
    auto y = c.add("Div", {dev, sd});
    if (widen) y = cast_to(y, d);
    y = c.add("Mul", {y, n.inputs[1]});
    const auto bias = input_or_empty(n, 2);
    if (!bias.empty()) {
        c.add("Add", {y, bias}, {}, n.outputs[0]);
    } else {
        c.add("Identity", {y}, {}, n.outputs[0]);
    }
}

// --- batchnorm_decompose -------------------------------------------------------------
inline std::vector<site> batchnorm_sites(const context& c) {
    return node_sites(c, "BatchNormalization", numeric_class::approximate, [&](const graph::node& n) {
        return is_float(c.dtype_of(n.outputs[0])) && int_attr(n, "training_mode", 0) == 0 && only_first_output_used(c, n) &&
               c.shape_of(n.inputs[0]).size() >= 2;
    });
}
inline void batchnorm_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto rank = c.shape_of(n.inputs[0]).size();
    const double eps = float_attr(n, "epsilon", 1e-5);
    // As the kernel does: every operand in float32 (float64 for float64 X), one rounding to X's dtype at the end.
    const dtype w = s.type == dtype::f64 ? dtype::f64 : dtype::f32;
    auto as_w = [&](const std::string& v, dtype from) {
        return from == w ? v : c.add("Cast", {v}, {{"to", std::int64_t{onnx_type(w)}}});
    };
    auto param = [&](std::size_t k) { return as_w(channel_view(c, n.inputs[k], rank), c.dtype_of(n.inputs[k])); };
    const auto scale = param(1), bias = param(2), mean = param(3), var = param(4);
    const auto sd = c.add("Sqrt", {c.add("Add", {var, c.add_scalar(w, eps, "eps")})});
    const auto x = as_w(n.inputs[0], s.type);
    const auto norm = c.add("Mul", {c.add("Div", {c.add("Sub", {x, mean}), sd}), scale});
    if (w == s.type) {
        c.add("Add", {norm, bias}, {}, n.outputs[0]);
    } else {
        c.add("Cast", {c.add("Add", {norm, bias})}, {{"to", std::int64_t{onnx_type(s.type)}}}, n.outputs[0]);
    }
}

// --- grouped_conv_split ---------------------------------------------------------------
inline std::vector<site> grouped_conv_sites(const context& c) {
    return node_sites(c, "Conv", numeric_class::approximate, [&](const graph::node& n) {
        const auto g = int_attr(n, "group", 1);
        return g > 1 && g <= 8;
    });
}
inline void grouped_conv_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto groups = static_cast<std::size_t>(int_attr(n, "group", 1));
    auto parts = [&](const std::string& v, std::int64_t axis) {
        return c.add_node("Split", {v}, std::vector<std::string>(groups), {{"axis", axis}});
    };
    const auto xs = parts(n.inputs[0], 1);
    const auto ws = parts(n.inputs[1], 0);
    const auto b = input_or_empty(n, 2);
    std::vector<std::string> bs;
    if (!b.empty()) bs = parts(b, 0);
    auto attrs = n.attributes;
    attrs.insert_or_assign("group", std::int64_t{1});
    std::vector<std::string> ys;
    for (std::size_t k = 0; k < groups; ++k) {
        std::vector<std::string> in{xs[k], ws[k]};
        if (!b.empty()) in.push_back(bs[k]);
        ys.push_back(c.add("Conv", in, attrs));
    }
    c.add("Concat", ys, {{"axis", std::int64_t{1}}}, n.outputs[0]);
}

// --- sigmoid_decompose ----------------------------------------------------------------
inline std::vector<site> sigmoid_sites(const context& c) {
    return node_sites(c, "Sigmoid", numeric_class::approximate, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
inline void sigmoid_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto one = c.add_scalar(s.type, 1.0, "one");
    const auto e = c.add("Exp", {c.add("Neg", {n.inputs[0]})});
    c.add("Div", {one, c.add("Add", {one, e})}, {}, n.outputs[0]);
}

// --- hardsigmoid_decompose / hardswish_decompose ----------------------------------------
inline std::vector<site> hardsigmoid_sites(const context& c) {
    return node_sites(c, "HardSigmoid", numeric_class::approximate, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
inline std::vector<site> hardswish_sites(const context& c) {
    return node_sites(c, "HardSwish", numeric_class::approximate, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
/// Clip(alpha x + beta, 0, 1)
inline std::string hard_sigmoid_of(context& c, const std::string& x, dtype d, double alpha, double beta, const std::string& out = {}) {
    const auto lin = c.add("Add", {c.add("Mul", {x, c.add_scalar(d, alpha, "alpha")}), c.add_scalar(d, beta, "beta")});
    return c.add("Clip", {lin, c.add_scalar(d, 0.0, "zero"), c.add_scalar(d, 1.0, "one")}, {}, out);
}
inline void hardsigmoid_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    (void)hard_sigmoid_of(c, n.inputs[0], s.type, float_attr(n, "alpha", 0.2), float_attr(n, "beta", 0.5), n.outputs[0]);
}
inline void hardswish_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    c.add("Mul", {n.inputs[0], hard_sigmoid_of(c, n.inputs[0], s.type, 1.0 / 6.0, 0.5)}, {}, n.outputs[0]);
}

// --- variadic_chain ------------------------------------------------------------------------
inline std::vector<site> variadic_sites(const context& c, std::initializer_list<std::string_view> ops, numeric_class numeric) {
    std::vector<site> out;
    for (const auto op : ops) {
        auto s = node_sites(c, op, numeric, [&](const graph::node& n) {
            std::size_t present = 0;
            for (const auto& in : n.inputs) present += in.empty() ? 0 : 1;
            return present >= 2;
        });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline std::vector<site> sum_chain_sites(const context& c) { return variadic_sites(c, {"Sum", "Mean"}, numeric_class::approximate); }
inline std::vector<site> minmax_chain_sites(const context& c) { return variadic_sites(c, {"Max", "Min"}, numeric_class::exact); }
inline void variadic_chain_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    std::vector<std::string> in;
    for (const auto& v : n.inputs) {
        if (!v.empty()) in.push_back(v);
    }
    const std::string binary = n.op_type == "Sum" || n.op_type == "Mean" ? "Add" : n.op_type;
    const bool mean = n.op_type == "Mean";
    std::string acc = in[0];
    for (std::size_t k = 1; k < in.size(); ++k) {
        acc = c.add(binary, {acc, in[k]}, {}, k + 1 == in.size() && !mean ? n.outputs[0] : std::string());
    }
    if (mean) c.add("Div", {acc, c.add_scalar(s.type, static_cast<double>(in.size()), "count")}, {}, n.outputs[0]);
}

// --- elementwise_unroll (TorchProbe's resolution: the op applied slice by slice) -----------
inline std::vector<site> unroll_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : unary_elementwise_ops) {
        auto s = node_sites(c, op, numeric_class::exact, [&](const graph::node& n) {
            const auto& sh = c.shape_of(n.inputs[0]);
            return std::any_of(sh.begin(), sh.end(), [](std::size_t x) { return x >= 2; });
        });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void unroll_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto& sh = c.shape_of(n.inputs[0]);
    std::vector<std::int64_t> axes;
    for (std::size_t a = 0; a < sh.size(); ++a) {
        if (sh[a] >= 2) axes.push_back(static_cast<std::int64_t>(a));
    }
    auto& r = c.random();
    const auto axis = axes[r.below(axes.size())];
    const auto len = static_cast<std::size_t>(sh[static_cast<std::size_t>(axis)]);
    const std::size_t parts = std::min<std::size_t>(len, 2 + r.below(3));  // 2..4 slices
    // Equal slices but the last (Split without sizes needs equal parts).
    std::vector<std::int64_t> sizes(parts, static_cast<std::int64_t>(len / parts));
    sizes.back() += static_cast<std::int64_t>(len % parts);
    const auto pieces = c.add_node("Split", {n.inputs[0], c.add_ints(sizes, "split")}, std::vector<std::string>(parts), {{"axis", axis}});
    std::vector<std::string> ys;
    for (const auto& p : pieces) ys.push_back(c.add(n.op_type, {p}, n.attributes));
    c.add("Concat", ys, {{"axis", axis}}, n.outputs[0]);
}

// --- reduce_decompose ------------------------------------------------------------------------
inline std::vector<site> reduce_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : {"ReduceMean", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceLogSum"}) {
        auto s = node_sites(c, op, numeric_class::approximate, [&](const graph::node& n) {
            return is_float(c.dtype_of(n.outputs[0])) && c.value(n.inputs[0]).size() > 0;
        });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void reduce_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto& x = n.inputs[0];
    const auto& shape = c.shape_of(x);
    const auto keep = int_attr(n, "keepdims", 1);
    std::vector<std::int64_t> axes;
    if (const auto a = ints_attr(n, "axes")) {
        for (const auto v : *a) axes.push_back(norm_axis(v, shape.size()));
    } else {
        for (std::size_t k = 0; k < shape.size(); ++k) axes.push_back(static_cast<std::int64_t>(k));
    }
    auto reduce_sum = [&](const std::string& v, std::int64_t keepdims, const std::string& out = {}) {
        return c.add("ReduceSum", {v, c.add_ints(axes, "axes")}, {{"keepdims", keepdims}}, out);
    };
    const auto& y = n.outputs[0];
    if (n.op_type == "ReduceMean") {
        double count = 1;
        for (const auto a : axes) count *= static_cast<double>(shape[static_cast<std::size_t>(a)]);
        c.add("Div", {reduce_sum(x, keep), c.add_scalar(s.type, count, "count")}, {}, y);
    } else if (n.op_type == "ReduceL1") {
        reduce_sum(c.add("Abs", {x}), keep, y);
    } else if (n.op_type == "ReduceL2") {
        c.add("Sqrt", {reduce_sum(c.add("Mul", {x, x}), keep)}, {}, y);
    } else if (n.op_type == "ReduceSumSquare") {
        reduce_sum(c.add("Mul", {x, x}), keep, y);
    } else if (n.op_type == "ReduceLogSum") {
        c.add("Log", {reduce_sum(x, keep)}, {}, y);
    } else {  // ReduceLogSumExp, in its stable form m + log(sum(exp(x - m)))
        // ONNX refuses an empty ints attribute: a scalar's (empty) axes are left out, which reduces all.
        auto max_attrs = [&](std::int64_t keepdims) {
            spec::attribute_map a{{"keepdims", keepdims}};
            if (!axes.empty()) a.emplace("axes", axes);
            return a;
        };
        const auto m = c.add("ReduceMax", {x}, max_attrs(1));
        const auto lse = c.add("Log", {reduce_sum(c.add("Exp", {c.add("Sub", {x, m})}), keep)});
        const auto mk = keep != 0 ? m : c.add("ReduceMax", {x}, max_attrs(0));
        c.add("Add", {mk, lse}, {}, y);
    }
}

// --- activation_decompose ---------------------------------------------------------------------
inline std::vector<site> activation_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : {"Relu", "LeakyRelu", "Softsign", "Elu", "Selu", "Softplus"}) {
        auto s = node_sites(c, op, op == std::string_view("Relu") ? numeric_class::exact : numeric_class::approximate,
                            [&](const graph::node& n) {
                                const dtype d = c.dtype_of(n.outputs[0]);
                                if (!is_float(d)) return false;
                                // log(1 + exp(x)) overflows where Softplus does not: only where exp(x) stays finite.
                                if (n.op_type == "Softplus") return max_abs(c.value(n.inputs[0])) < 0.5 * std::log(max_finite(d));
                                return true;
                            });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void activation_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto& x = n.inputs[0];
    const auto& y = n.outputs[0];
    const dtype d = s.type;
    const auto zero = c.add_scalar(d, 0.0, "zero");
    if (n.op_type == "Relu") {
        c.add("Max", {x, zero}, {}, y);
    } else if (n.op_type == "LeakyRelu") {
        const auto neg = c.add("Mul", {x, c.add_scalar(d, float_attr(n, "alpha", 0.01), "alpha")});
        c.add("Where", {c.add("Less", {x, zero}), neg, x}, {}, y);
    } else if (n.op_type == "Softsign") {
        c.add("Div", {x, c.add("Add", {c.add("Abs", {x}), c.add_scalar(d, 1.0, "one")})}, {}, y);
    } else if (n.op_type == "Softplus") {
        c.add("Log", {c.add("Add", {c.add("Exp", {x}), c.add_scalar(d, 1.0, "one")})}, {}, y);
    } else {  // Elu, Selu: x > 0 ? g x : g alpha (exp(x) - 1)
        const bool selu = n.op_type == "Selu";
        const double alpha = float_attr(n, "alpha", selu ? 1.67326319217681884765625 : 1.0);
        const double gamma = selu ? float_attr(n, "gamma", 1.05070102214813232421875) : 1.0;
        const auto em1 = c.add("Sub", {c.add("Exp", {x}), c.add_scalar(d, 1.0, "one")});
        const auto neg = c.add("Mul", {em1, c.add_scalar(d, alpha * gamma, "alpha")});
        const auto pos = selu ? c.add("Mul", {x, c.add_scalar(d, gamma, "gamma")}) : x;
        c.add("Where", {c.add("Greater", {x, zero}), pos, neg}, {}, y);
    }
}

}  // namespace detail

/// The resolution family.
[[nodiscard]] inline std::vector<mutation> resolution_mutations() {
    using namespace detail;
    return {
        {"gemm_decompose", family::resolution, "Gemm(A, B, C) -> Add(Mul(MatMul(A', B'), alpha), Mul(C, beta))",
         "floating Gemm (A', B': transposed where transA/transB say)", numeric_class::approximate, -4.0, &gemm_sites, &gemm_apply},
        {"softmax_decompose", family::resolution, "Softmax(x) -> Div(Exp(x - ReduceMax(x)), ReduceSum(Exp(x - ReduceMax(x))))",
         "floating Softmax (its axis kept)", numeric_class::approximate, -4.0, &softmax_sites, &softmax_apply},
        {"logsoftmax_decompose", family::resolution, "LogSoftmax(x) -> Sub(x - m, Log(ReduceSum(Exp(x - m)))), m = ReduceMax(x)",
         "floating LogSoftmax", numeric_class::approximate, -4.0, &logsoftmax_sites, &logsoftmax_apply},
        {"layernorm_decompose", family::resolution,
         "LayerNormalization(X, S, B) -> (X - mean) / Sqrt(var + eps) * S + B over axes axis..r-1",
         "floating LayerNormalization whose Mean/InvStdDev outputs are unused (f16/bf16 with stash_type 1: statistics in f32)",
         numeric_class::approximate, -4.0, &layernorm_sites, &layernorm_apply},
        {"batchnorm_decompose", family::resolution,
         "BatchNormalization(X, s, b, m, v) -> (X - m) / Sqrt(v + eps) * s + b, parameters reshaped to [C, 1, ...]",
         "floating BatchNormalization in inference mode, rank >= 2, running statistics outputs unused", numeric_class::approximate,
         -4.0, &batchnorm_sites, &batchnorm_apply},
        {"grouped_conv_split", family::resolution, "Conv(X, W, B, group=g) -> Concat(Conv(X_k, W_k, B_k) for k < g), parts by Split",
         "Conv with 1 < group <= 8", numeric_class::approximate, -4.0, &grouped_conv_sites, &grouped_conv_apply},
        {"sigmoid_decompose", family::resolution, "Sigmoid(x) -> Div(1, Add(1, Exp(Neg(x))))", "floating Sigmoid",
         numeric_class::approximate, -4.0, &sigmoid_sites, &sigmoid_apply},
        {"hardsigmoid_decompose", family::resolution, "HardSigmoid(x) -> Clip(alpha x + beta, 0, 1)", "floating HardSigmoid",
         numeric_class::approximate, -4.0, &hardsigmoid_sites, &hardsigmoid_apply},
        {"hardswish_decompose", family::resolution, "HardSwish(x) -> Mul(x, Clip(x / 6 + 1/2, 0, 1))", "floating HardSwish",
         numeric_class::approximate, -4.0, &hardswish_sites, &hardswish_apply},
        {"sum_chain", family::resolution, "Sum(a, b, c...) -> Add(Add(a, b), c)...; Mean(...) -> Div(that, n)",
         "Sum or Mean with >= 2 inputs (broadcasting kept)", numeric_class::approximate, -4.0, &sum_chain_sites,
         &variadic_chain_apply},
        {"minmax_chain", family::resolution, "Max(a, b, c...) -> Max(Max(a, b), c)...; Min likewise", "Max or Min with >= 2 inputs",
         numeric_class::exact, 0.0, &minmax_chain_sites, &variadic_chain_apply},
        {"elementwise_unroll", family::resolution, "U(x) -> Concat(U(x_1), ..., U(x_k)), x_i = Split(x, axis)",
         "any unary element-wise op whose input has a dimension >= 2 (2..4 slices along it)", numeric_class::exact, 0.0,
         &unroll_sites, &unroll_apply},
        {"reduce_decompose", family::resolution,
         "ReduceMean -> ReduceSum / n; ReduceL1 -> ReduceSum(Abs); ReduceL2 -> Sqrt(ReduceSum(x x)); ReduceSumSquare -> "
         "ReduceSum(x x); ReduceLogSum -> Log(ReduceSum); ReduceLogSumExp -> m + Log(ReduceSum(Exp(x - m)))",
         "those reductions on floating, non-empty inputs (axes and keepdims kept)", numeric_class::approximate, -4.0, &reduce_sites,
         &reduce_apply},
        {"activation_decompose", family::resolution,
         "Relu -> Max(x, 0); LeakyRelu -> Where(x < 0, alpha x, x); Softsign -> x / (1 + Abs(x)); Softplus -> Log(Exp(x) + 1); "
         "Elu, Selu -> Where(x > 0, g x, g alpha (Exp(x) - 1))",
         "those ops on floating inputs (Softplus only where the profiled max abs(x) keeps Exp finite); Relu is exact",
         numeric_class::approximate, -4.0, &activation_sites, &activation_apply},
    };
}

}  // namespace tensoracle::mutate
