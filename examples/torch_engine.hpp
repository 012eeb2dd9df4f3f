// PyTorch (libtorch 1.13) as a tensoracle::ad::engine: conversions between
// kit tensors and torch tensors, the ops both share, and an engine with value,
// reverse mode (torch::autograd::grad), forward mode (forward_ad levels,
// at::_make_dual / at::_unpack_dual) and second order (double backward for
// the VJP of the gradient, forward-over-reverse for its JVP). Used by the
// torch_gradients example and the gradient-check benchmark.
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "tensoracle/ad/oracle.hpp"
#include "tensoracle/ops/all_ops.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle_torch {

namespace to = tensoracle;
namespace ad = tensoracle::ad;
using to::spec::attribute_map;
using tt = torch::Tensor;


// ---- conversions ---------------------------------------------------------
inline tt to_torch(const to::tensor& t) {
    std::vector<std::int64_t> sizes(t.shape().begin(), t.shape().end());
    switch (t.element_dtype()) {
        case to::dtype::f64: {
            auto v = t.to<double>();
            return torch::from_blob(v.data(), sizes, torch::kFloat64).clone();
        }
        case to::dtype::f32: {
            auto v = t.to<float>();
            return torch::from_blob(v.data(), sizes, torch::kFloat32).clone();
        }
        case to::dtype::boolean: {
            auto v = t.to<std::int64_t>();
            return torch::from_blob(v.data(), sizes, torch::kInt64).clone().to(torch::kBool);
        }
        default: {
            auto v = t.to<std::int64_t>();
            return torch::from_blob(v.data(), sizes, torch::kInt64).clone();
        }
    }
}
inline to::tensor from_torch(const tt& x) {
    // Autograd may hand back an "efficient zero tensor" that has no storage
    // (data_ptr throws): materialize it.
    const tt c = x._is_zerotensor() ? torch::zeros(x.sizes(), x.options().dtype(x.scalar_type()))
                                    : x.detach().contiguous();
    to::shape_type s(c.sizes().begin(), c.sizes().end());
    if (c.scalar_type() == torch::kFloat32) {
        auto a = to::array<float>::from_shape(s);
        std::copy_n(c.data_ptr<float>(), a.size(), a.data());
        return to::tensor(a);
    }
    const tt d = c.to(torch::kFloat64).contiguous();
    auto a = to::array<double>::from_shape(s);
    std::copy_n(d.data_ptr<double>(), a.size(), a.data());
    return to::tensor(a);
}
inline bool floating(const to::tensor& t) { return to::info(t.element_dtype()).is_floating; }
inline bool absent(const to::tensor& t) { return t.element_dtype() == to::dtype::f32 && t.rank() == 1 && t.shape()[0] == 0; }

// ---- the shared ops ------------------------------------------------------
using torch_fn = std::function<std::vector<tt>(const std::vector<tt>&, const attribute_map&)>;

template <class Op>
typename Op::attributes attrs_of(const attribute_map& m) {
    return to::spec::parse_attributes<typename Op::attributes>(m, Op::op_type);
}
inline std::vector<std::int64_t> reduce_dims(const std::vector<tt>& in, const std::optional<std::vector<std::int64_t>>& axes) {
    if (in.size() > 1 && in[1].defined() && in[1].numel() > 0) {
        const tt a = in[1].to(torch::kInt64).contiguous();
        return {a.data_ptr<std::int64_t>(), a.data_ptr<std::int64_t>() + a.numel()};
    }
    if (axes && !axes->empty()) return *axes;
    std::vector<std::int64_t> all(static_cast<std::size_t>(in[0].dim()));
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
    return all;
}
template <class Op, class F>
torch_fn reduction(F f) {
    return [f](const std::vector<tt>& in, const attribute_map& m) {
        const auto a = attrs_of<Op>(m);
        bool noop = false;
        if constexpr (requires { a.noop_with_empty_axes; }) {
            noop = a.noop_with_empty_axes != 0 && (in.size() < 2 || !in[1].defined() || in[1].numel() == 0);
        }
        if (noop) return std::vector<tt>{in[0] * 1};
        auto dims = reduce_dims(in, a.axes);
        if (in[0].dim() == 0) return std::vector<tt>{f(in[0], std::vector<std::int64_t>{}, true)};
        return std::vector<tt>{f(in[0], dims, a.keepdims != 0)};
    };
}
inline torch_fn unary(tt (*f)(const tt&)) {
    return [f](const std::vector<tt>& in, const attribute_map&) { return std::vector<tt>{f(in[0])}; };
}

inline std::map<std::string, torch_fn> shared_ops() {
    using V = std::vector<tt>;
    std::map<std::string, torch_fn> m;
    m["Relu"] = unary([](const tt& x) { return torch::relu(x); });
    m["Abs"] = unary([](const tt& x) { return torch::abs(x); });
    m["Neg"] = unary([](const tt& x) { return torch::neg(x); });
    m["Exp"] = unary([](const tt& x) { return torch::exp(x); });
    m["Log"] = unary([](const tt& x) { return torch::log(x); });
    m["Sqrt"] = unary([](const tt& x) { return torch::sqrt(x); });
    m["Reciprocal"] = unary([](const tt& x) { return torch::reciprocal(x); });
    m["Sigmoid"] = unary([](const tt& x) { return torch::sigmoid(x); });
    m["Tanh"] = unary([](const tt& x) { return torch::tanh(x); });
    m["Softplus"] = unary([](const tt& x) { return torch::softplus(x); });
    m["Softsign"] = unary([](const tt& x) { return x / (1 + torch::abs(x)); });
    m["Erf"] = unary([](const tt& x) { return torch::erf(x); });
    m["Sin"] = unary([](const tt& x) { return torch::sin(x); });
    m["Cos"] = unary([](const tt& x) { return torch::cos(x); });
    m["Tan"] = unary([](const tt& x) { return torch::tan(x); });
    m["Asin"] = unary([](const tt& x) { return torch::asin(x); });
    m["Acos"] = unary([](const tt& x) { return torch::acos(x); });
    m["Atan"] = unary([](const tt& x) { return torch::atan(x); });
    m["Sinh"] = unary([](const tt& x) { return torch::sinh(x); });
    m["Cosh"] = unary([](const tt& x) { return torch::cosh(x); });
    m["Asinh"] = unary([](const tt& x) { return torch::asinh(x); });
    m["Acosh"] = unary([](const tt& x) { return torch::acosh(x); });
    m["Atanh"] = unary([](const tt& x) { return torch::atanh(x); });
    m["HardSwish"] = unary([](const tt& x) { return torch::hardswish(x); });
    m["Floor"] = unary([](const tt& x) { return torch::floor(x); });
    m["Ceil"] = unary([](const tt& x) { return torch::ceil(x); });
    m["Sign"] = unary([](const tt& x) { return torch::sign(x); });
    m["LeakyRelu"] = [](const V& in, const attribute_map& a) {
        return V{torch::leaky_relu(in[0], attrs_of<to::ops::LeakyRelu>(a).alpha)};
    };
    m["Elu"] = [](const V& in, const attribute_map& a) { return V{torch::elu(in[0], attrs_of<to::ops::Elu>(a).alpha)}; };
    m["Celu"] = [](const V& in, const attribute_map& a) { return V{torch::celu(in[0], attrs_of<to::ops::Celu>(a).alpha)}; };
    m["Selu"] = [](const V& in, const attribute_map& a) {
        const auto s = attrs_of<to::ops::Selu>(a);
        return V{s.gamma * torch::where(in[0] > 0, in[0], s.alpha * torch::expm1(in[0]))};
    };
    m["HardSigmoid"] = [](const V& in, const attribute_map& a) {
        const auto s = attrs_of<to::ops::HardSigmoid>(a);
        return V{torch::clamp(s.alpha * in[0] + s.beta, 0.0, 1.0)};
    };
    m["ThresholdedRelu"] = [](const V& in, const attribute_map& a) {
        return V{torch::threshold(in[0], attrs_of<to::ops::ThresholdedRelu>(a).alpha, 0.0)};
    };
    m["Add"] = [](const V& in, const attribute_map&) { return V{in[0] + in[1]}; };
    m["Sub"] = [](const V& in, const attribute_map&) { return V{in[0] - in[1]}; };
    m["Mul"] = [](const V& in, const attribute_map&) { return V{in[0] * in[1]}; };
    m["Div"] = [](const V& in, const attribute_map&) { return V{in[0] / in[1]}; };
    m["Pow"] = [](const V& in, const attribute_map&) {
        return V{torch::pow(in[0], in[1].is_floating_point() ? in[1] : in[1].to(in[0].scalar_type()))};
    };
    const auto fold = [](tt (*f)(const tt&, const tt&)) {
        return [f](const V& in, const attribute_map&) {
            tt y = in[0] * 1;
            for (std::size_t i = 1; i < in.size(); ++i) y = f(y, in[i]);
            return V{y};
        };
    };
    m["Max"] = fold([](const tt& a, const tt& b) { return torch::maximum(a, b); });
    m["Min"] = fold([](const tt& a, const tt& b) { return torch::minimum(a, b); });
    m["Sum"] = fold([](const tt& a, const tt& b) { return a + b; });
    m["Mean"] = [fold](const V& in, const attribute_map& a) {
        return V{fold([](const tt& x, const tt& y) { return x + y; })(in, a)[0] / static_cast<double>(in.size())};
    };
    m["PRelu"] = [](const V& in, const attribute_map&) { return V{torch::where(in[0] < 0, in[1] * in[0], in[0])}; };
    m["Clip"] = [](const V& in, const attribute_map&) {
        c10::optional<tt> lo, hi;
        if (in.size() > 1 && in[1].defined()) lo = in[1];
        if (in.size() > 2 && in[2].defined()) hi = in[2];
        return V{torch::clamp(in[0], lo, hi)};
    };
    m["ReduceSum"] = reduction<to::ops::ReduceSum>([](const tt& x, std::vector<std::int64_t> d, bool k) {
        return d.empty() ? x * 1 : torch::sum(x, d, k);
    });
    m["ReduceMean"] = reduction<to::ops::ReduceMean>([](const tt& x, std::vector<std::int64_t> d, bool k) {
        return d.empty() ? x * 1 : torch::mean(x, d, k);
    });
    m["ReduceMax"] = reduction<to::ops::ReduceMax>([](const tt& x, std::vector<std::int64_t> d, bool k) {
        return d.empty() ? x * 1 : torch::amax(x, d, k);
    });
    m["ReduceMin"] = reduction<to::ops::ReduceMin>([](const tt& x, std::vector<std::int64_t> d, bool k) {
        return d.empty() ? x * 1 : torch::amin(x, d, k);
    });
    m["ReduceSumSquare"] = reduction<to::ops::ReduceSumSquare>([](const tt& x, std::vector<std::int64_t> d, bool k) {
        return d.empty() ? x * x : torch::sum(x * x, d, k);
    });
    m["ReduceL1"] = reduction<to::ops::ReduceL1>([](const tt& x, std::vector<std::int64_t> d, bool k) {
        return d.empty() ? torch::abs(x) : torch::sum(torch::abs(x), d, k);
    });
    m["ReduceL2"] = reduction<to::ops::ReduceL2>([](const tt& x, std::vector<std::int64_t> d, bool k) {
        return d.empty() ? torch::sqrt(x * x) : torch::norm(x, 2, d, k);
    });
    m["ReduceLogSumExp"] = reduction<to::ops::ReduceLogSumExp>([](const tt& x, std::vector<std::int64_t> d, bool k) {
        return d.empty() ? x * 1 : torch::logsumexp(x, d, k);
    });
    m["ReduceLogSum"] = reduction<to::ops::ReduceLogSum>([](const tt& x, std::vector<std::int64_t> d, bool k) {
        return d.empty() ? torch::log(x) : torch::log(torch::sum(x, d, k));
    });
    m["ReduceProd"] = reduction<to::ops::ReduceProd>([](const tt& x, std::vector<std::int64_t> d, bool k) {
        tt y = x * 1;
        std::sort(d.begin(), d.end(), std::greater<>());
        for (auto& v : d) v = v < 0 ? v + x.dim() : v;
        std::sort(d.begin(), d.end(), std::greater<>());
        for (const auto v : d) y = torch::prod(y, v, k);
        return y;
    });
    m["Softmax"] = [](const V& in, const attribute_map& a) {
        return V{torch::softmax(in[0], attrs_of<to::ops::Softmax>(a).axis)};
    };
    m["LogSoftmax"] = [](const V& in, const attribute_map& a) {
        return V{torch::log_softmax(in[0], attrs_of<to::ops::LogSoftmax>(a).axis)};
    };
    m["MatMul"] = [](const V& in, const attribute_map&) { return V{torch::matmul(in[0], in[1])}; };
    m["Gemm"] = [](const V& in, const attribute_map& a) {
        const auto g = attrs_of<to::ops::Gemm>(a);
        const tt A = g.transA != 0 ? in[0].t() : in[0];
        const tt B = g.transB != 0 ? in[1].t() : in[1];
        tt y = g.alpha * torch::matmul(A, B);
        if (in.size() > 2 && in[2].defined()) y = y + g.beta * in[2];
        return V{y};
    };
    m["Transpose"] = [](const V& in, const attribute_map& a) {
        std::vector<std::int64_t> perm;
        if (const auto p = attrs_of<to::ops::Transpose>(a).perm) {
            perm = *p;
        } else {
            for (std::int64_t i = in[0].dim(); i-- > 0;) perm.push_back(i);
        }
        return V{in[0].permute(perm)};
    };
    return m;
}

// ---- PyTorch as an engine ------------------------------------------------
struct dual_level {
    std::uint64_t level = torch::autograd::forward_ad::enter_dual_level();
    ~dual_level() { torch::autograd::forward_ad::exit_dual_level(level); }
};

inline std::vector<tt> torch_inputs(const ad::tensors& x) {
    std::vector<tt> in;
    for (const auto& t : x) in.push_back(absent(t) ? tt() : to_torch(t));
    return in;
}
inline ad::tensors kit_outputs(const std::vector<tt>& y) {
    ad::tensors out;
    for (const auto& t : y) out.push_back(from_torch(t));
    return out;
}
inline tt zeros_or(const tt& g, const tt& like) { return g.defined() ? g : torch::zeros_like(like); }

// The outputs autograd can differentiate, with their cotangents from w.
inline std::pair<std::vector<tt>, std::vector<tt>> differentiable_outputs(const std::vector<tt>& y,
                                                                          const ad::tensors& w) {
    std::vector<tt> ys, ws;
    for (std::size_t o = 0; o < y.size(); ++o) {
        if (o < w.size() && !absent(w[o]) && y[o].is_floating_point() && y[o].requires_grad()) {
            ys.push_back(y[o]);
            ws.push_back(to_torch(w[o]).to(y[o].scalar_type()));
        }
    }
    return {ys, ws};
}

inline ad::engine torch_engine(const torch_fn& f, const attribute_map& attrs) {
    ad::engine e;
    e.value = [f, attrs](const ad::tensors& x) {
        torch::NoGradGuard no_grad;
        return kit_outputs(f(torch_inputs(x), attrs));
    };
    auto reverse = [f, attrs](const ad::tensors& x, const ad::tensors& w, bool create_graph, std::vector<tt>* inputs) {
        auto in = torch_inputs(x);
        std::vector<tt> leaves;
        std::vector<std::size_t> ids;
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].defined() && in[i].is_floating_point()) {
                in[i] = in[i].detach().requires_grad_(true);
                leaves.push_back(in[i]);
                ids.push_back(i);
            }
        }
        const auto y = f(in, attrs);
        const auto [ys, ws] = differentiable_outputs(y, w);
        std::vector<tt> grads(leaves.size());
        if (!ys.empty()) grads = torch::autograd::grad(ys, leaves, ws, true, create_graph, true);
        if (inputs != nullptr) *inputs = leaves;
        ad::tensors per_input(x.size());
        std::vector<tt> kept;
        for (std::size_t k = 0; k < ids.size(); ++k) {
            kept.push_back(zeros_or(grads[k], leaves[k]));
            per_input[ids[k]] = from_torch(kept.back());
        }
        return std::tuple{kit_outputs(y), per_input, kept};
    };
    e.vjp = [reverse](const ad::tensors& x, const ad::tensors& w) {
        auto [y, g, kept] = reverse(x, w, false, nullptr);
        return ad::vjp_result{y, g};
    };
    e.jvp = [f, attrs](const ad::tensors& x, const ad::tensors& u) {
        dual_level lv;
        auto in = torch_inputs(x);
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].defined() && in[i].is_floating_point() && i < u.size() && !absent(u[i])) {
                in[i] = at::_make_dual(in[i], to_torch(u[i]).to(in[i].scalar_type()), static_cast<std::int64_t>(lv.level));
            }
        }
        const auto y = f(in, attrs);
        ad::jvp_result r;
        for (const auto& t : y) {
            const auto [primal, tangent] = at::_unpack_dual(t, static_cast<std::int64_t>(lv.level));
            r.outputs.push_back(from_torch(primal));
            r.output_tangents.push_back(from_torch(tangent.defined() ? tangent : torch::zeros_like(primal)));
        }
        return r;
    };
    // Order 2: g(x) = Jᵀ(x)·w, one output per input (empty where not
    // differentiated). Its VJP is double backward; its JVP forward-over-reverse.
    e.gradient = [reverse, f, attrs](const ad::tensors& w) {
        ad::engine g;
        g.value = [reverse, w](const ad::tensors& x) { return std::get<1>(reverse(x, w, false, nullptr)); };
        g.vjp = [reverse, w](const ad::tensors& x, const ad::tensors& v) {
            std::vector<tt> leaves;
            auto [y, gr, kept] = reverse(x, w, true, &leaves);
            std::vector<std::size_t> ids;  // the input of each leaf
            for (std::size_t i = 0; i < x.size(); ++i) {
                if (!absent(x[i]) && floating(x[i])) ids.push_back(i);
            }
            std::vector<tt> gs, vs;
            for (std::size_t k = 0; k < kept.size(); ++k) {
                if (kept[k].requires_grad() && ids[k] < v.size() && !absent(v[ids[k]])) {
                    gs.push_back(kept[k]);
                    vs.push_back(to_torch(v[ids[k]]).to(kept[k].scalar_type()));
                }
            }
            std::vector<tt> h(leaves.size());
            if (!gs.empty()) h = torch::autograd::grad(gs, leaves, vs, false, false, true);
            ad::tensors per_input(x.size());
            for (std::size_t k = 0; k < ids.size(); ++k) per_input[ids[k]] = from_torch(zeros_or(h[k], leaves[k]));
            return ad::vjp_result{gr, per_input};
        };
        g.jvp = [f, attrs, w](const ad::tensors& x, const ad::tensors& u) {
            dual_level lv;
            auto in = torch_inputs(x);
            std::vector<tt> leaves, duals(in.size());
            for (std::size_t i = 0; i < in.size(); ++i) {
                if (in[i].defined() && in[i].is_floating_point()) {
                    in[i] = in[i].detach().requires_grad_(true);
                    leaves.push_back(in[i]);
                    duals[i] = at::_make_dual(in[i], to_torch(u[i]).to(in[i].scalar_type()),
                                              static_cast<std::int64_t>(lv.level));
                } else {
                    duals[i] = in[i];
                }
            }
            const auto y = f(duals, attrs);
            const auto [ys, ws] = differentiable_outputs(y, w);
            std::vector<tt> grads(leaves.size());
            if (!ys.empty()) grads = torch::autograd::grad(ys, leaves, ws, true, true, true);
            ad::jvp_result r{ad::tensors(x.size()), ad::tensors(x.size())};
            for (std::size_t k = 0, i = 0; i < in.size(); ++i) {
                if (!in[i].defined() || !in[i].is_floating_point()) continue;
                const tt gk = zeros_or(grads[k], leaves[k]);
                ++k;
                const auto [primal, tangent] = at::_unpack_dual(gk, static_cast<std::int64_t>(lv.level));
                r.outputs[i] = from_torch(primal);
                r.output_tangents[i] = from_torch(tangent.defined() ? tangent : torch::zeros_like(primal));
            }
            return r;
        };
        return g;
    };
    return e;
}

}  // namespace tensoracle_torch
