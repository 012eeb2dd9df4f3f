// tensoracle: JVP and VJP rules of one op spec, on tensors.
//
// An op is differentiable when its spec provides `run_real<S>` (its kernel
// run on scalar type S, see docs/ADDING_AN_OP.md). The rules here run that one
// kernel with dual numbers (JVP: forward mode) or tape variables (VJP:
// reverse mode), so the derivatives are those of the reference kernel itself,
// and the tests check them against finite differences, each other and a
// second engine. V is the arithmetic of the derivative computation: double or
// float for first order, dual<double>/dual<float> for second order
// (forward-over-forward through jvp, forward-over-reverse through vjp).
// The input search, which needs speed more than independence, asks for
// tensor-level VJPs instead (reverse_options::tensor_level): element-wise ops
// through forward mode, and a few large kernels' own VJPs (Op::vjp), which
// tests hold to the tape's.
//
// Nothing here includes the op registry: a test of one op includes this, the
// op's family header and ad/typed_engine.hpp, and instantiates that op only.
// The table of every op's rules, looked up by name, is in ad/op_rules.hpp.
#pragma once

#include <algorithm>
#include <concepts>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tensoracle/ad/dual.hpp"
#include "tensoracle/ad/reverse.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/ops/detail/broadcast.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ad {

/// True when op spec Op has a kernel that runs on AD scalars.
template <class Op>
concept differentiable_op = requires(const spec::context& c, const std::vector<array<dual<double>>>& x) {
    { Op::template run_real<dual<double>>(c, x) } -> std::same_as<std::vector<array<dual<double>>>>;
};

/// The inputs of this instance that derivatives are taken with respect to.
template <class Op>
[[nodiscard]] std::vector<std::size_t> differentiable_inputs_of(const spec::context& c) {
    if constexpr (requires { Op::differentiable_inputs(c); }) {
        return Op::differentiable_inputs(c);
    } else {
        std::vector<std::size_t> ids;
        for (std::size_t i = 0; i < c.input_count(); ++i) {
            if (c.has_input(i) && info(c.input_dtype(i)).is_floating) ids.push_back(i);
        }
        return ids;
    }
}

/// Values and derivatives of an op's outputs. Entries of outputs that are not
/// floating (indices, masks) are empty.
template <class V>
struct forward_result {
    std::vector<array<V>> values;
    std::vector<array<V>> tangents;
};
template <class V>
struct reverse_result {
    std::vector<array<V>> values;
    std::vector<array<V>> cotangents;  ///< one per op input; empty for inputs not differentiated
};

struct reverse_options {
    /// NNSmith's proxy derivative: where an op's true derivative is zero (Relu
    /// below 0, Floor...), use the op's proxy slope instead, so that gradient
    /// descent on input-domain losses does not stall. Not a derivative: never
    /// compare it with finite differences.
    bool proxy = false;
    /// Compute the VJP at the tensor level instead of on a scalar tape:
    /// element-wise ops (elementwise_op) from one JVP per differentiable input,
    /// ops with their own VJP (has_tensor_vjp: Conv, ConvTranspose, MatMul,
    /// Gemm, TopK, MaxPool, AveragePool, Softmax, LogSoftmax, Hardmax and the
    /// reductions Sum, Mean, SumSquare, LogSum, LogSumExp, Max, Min) through
    /// it, in real V. Several to a hundred times faster on
    /// large tensors, which is what the input search needs. The ways agree up to
    /// rounding, except where a zero tangent meets an infinite partial
    /// derivative (0 * inf is NaN in forward mode); the AD engines keep the
    /// tape, so that their reverse mode stays independent of their forward mode
    /// and of the kit's hand-written VJPs.
    bool tensor_level = false;
    /// false: an op's own VJP (has_tensor_vjp) leaves reverse_result::values
    /// empty instead of running the op forward once more for them (the input
    /// search has every value from its forward run). Other paths fill them anyway.
    bool values = true;
};

/// An op whose single output's every element depends only on the inputs'
/// elements at its (ONNX multidirectional) broadcast position.
template <class Op>
concept elementwise_op = requires { requires Op::elementwise; };

/// An op with a tensor-level VJP of its own for real V:
/// Op::vjp<V>(context, inputs, output cotangents) returns one cotangent per
/// input (the differentiable ones; the others may be empty), written as the
/// kernel's loops run backwards rather than recorded on a tape. It checks
/// that each non-empty cotangent has its output's shape.
template <class Op, class V>
concept has_tensor_vjp = std::is_floating_point_v<V> && requires(const spec::context& c, const std::vector<array<V>>& x) {
    { Op::template vjp<V>(c, x, x) } -> std::same_as<std::vector<array<V>>>;
};

namespace detail {
template <class V>
bool is_empty(const array<V>& a) {
    return a.dimension() == 1 && a.shape()[0] == 0;
}
template <class V>
array<V> empty_array() {
    return array<V>::from_shape({0});
}

inline void check_same_shape(std::string_view op_type, std::string_view what, std::size_t i,
                             std::span<const std::size_t> expected, std::span<const std::size_t> got) {
    if (!std::equal(expected.begin(), expected.end(), got.begin(), got.end())) {
        throw shape_error("tensoracle::ad(" + std::string(op_type) + ")",
                          std::string(what) + " " + std::to_string(i) + " has shape " +
                              to_string(shape_type(got.begin(), got.end())) + " but the input has shape " +
                              to_string(shape_type(expected.begin(), expected.end())));
    }
}

template <class Op>
std::vector<bool> floating_outputs(const spec::context& c) {
    std::vector<bool> f;
    for (const dtype d : Op::output_dtypes(c)) f.push_back(info(d).is_floating);
    return f;
}
}  // namespace detail

/// An input tensor as an array of V (constants: no derivative parts).
template <class V>
[[nodiscard]] array<V> lift(const tensor& t) {
    const auto d = t.to<double>();
    auto a = array<V>::from_shape(t.shape());
    for (std::size_t i = 0; i < d.size(); ++i) a.data()[i] = V(static_cast<base_scalar_t<V>>(d.data()[i]));
    return a;
}

/// The primal values of an array of V as a tensor of dtype d (rounded once).
template <class V>
[[nodiscard]] tensor lower(const array<V>& a, dtype d = dtype::f64) {
    array<double> v = array<double>::from_shape(a.shape());
    for (std::size_t i = 0; i < a.size(); ++i) v.data()[i] = static_cast<double>(primal(a.data()[i]));
    return tensor::from_array_as(v, d);
}

/// The op on values of V (differentiable inputs from x, the others from c).
template <class Op, class V>
[[nodiscard]] std::vector<array<V>> op_value(const spec::context& c, const std::vector<array<V>>& x) {
    return Op::template run_real<V>(c, x);
}

/// JVP: outputs and their derivatives along tangents u (one per input; only
/// the differentiable inputs' entries are read).
template <class Op, class V>
[[nodiscard]] forward_result<V> op_jvp(const spec::context& c, const std::vector<array<V>>& x,
                                       const std::vector<array<V>>& u) {
    using D = dual<V>;
    std::vector<array<D>> xd(c.input_count(), detail::empty_array<D>());
    for (const std::size_t i : differentiable_inputs_of<Op>(c)) {
        detail::check_same_shape(Op::op_type, "tangent", i, x[i].shape(), u[i].shape());
        xd[i] = array<D>::from_shape(x[i].shape());
        for (std::size_t k = 0; k < x[i].size(); ++k) xd[i].data()[k] = D(x[i].data()[k], u[i].data()[k]);
    }
    const auto yd = Op::template run_real<D>(c, xd);
    const auto fl = detail::floating_outputs<Op>(c);
    forward_result<V> r;
    for (std::size_t o = 0; o < yd.size(); ++o) {
        if (!fl[o]) {
            r.values.push_back(detail::empty_array<V>());
            r.tangents.push_back(detail::empty_array<V>());
            continue;
        }
        auto v = array<V>::from_shape(yd[o].shape());
        auto t = array<V>::from_shape(yd[o].shape());
        for (std::size_t k = 0; k < yd[o].size(); ++k) {
            v.data()[k] = yd[o].data()[k].v;
            t.data()[k] = yd[o].data()[k].d;
        }
        r.values.push_back(std::move(v));
        r.tangents.push_back(std::move(t));
    }
    return r;
}

namespace detail {
/// The VJP of an element-wise op through forward mode: the JVP along ones in
/// input i (zeros elsewhere) holds each output element's partial derivative
/// in the input element that feeds it, and Jᵀw sums w times it over the
/// output elements each input element is broadcast to.
template <class Op, class V>
[[nodiscard]] reverse_result<V> elementwise_vjp(const spec::context& c, const std::vector<array<V>>& x,
                                                const std::vector<array<V>>& w, const reverse_options& options) {
    const auto ids = differentiable_inputs_of<Op>(c);
    reverse_result<V> r;
    r.cotangents.assign(c.input_count(), empty_array<V>());
    if (ids.empty()) {
        const auto fl = floating_outputs<Op>(c);
        r.values = op_value<Op, V>(c, x);
        for (std::size_t o = 0; o < r.values.size(); ++o) {
            if (!fl[o]) r.values[o] = empty_array<V>();
        }
        return r;
    }
    const bool seeded = !w.empty() && !is_empty(w[0]);
    double slope = 0.0;  // the proxy slope where the true derivative is zero (single-input ops)
    if constexpr (requires { Op::proxy_slope; }) {
        if (options.proxy && ids.size() == 1) slope = Op::proxy_slope;
    }
    std::vector<array<V>> u(c.input_count(), empty_array<V>());
    for (const std::size_t i : ids) {
        u[i] = array<V>::from_shape(x[i].shape());
        std::fill(u[i].begin(), u[i].end(), V(0));
    }
    for (std::size_t n = 0; n < ids.size(); ++n) {
        const std::size_t i = ids[n];
        std::fill(u[i].begin(), u[i].end(), V(1));
        auto fr = op_jvp<Op, V>(c, x, u);
        std::fill(u[i].begin(), u[i].end(), V(0));
        if (n == 0) r.values = std::move(fr.values);
        auto& cot = r.cotangents[i];
        cot = array<V>::from_shape(x[i].shape());
        std::fill(cot.begin(), cot.end(), V(0));
        if (!seeded || fr.tangents.empty() || is_empty(fr.tangents[0])) continue;
        const auto& t = fr.tangents[0];
        check_same_shape(Op::op_type, "cotangent of output", 0, t.shape(), w[0].shape());
        // Where input i feeds output element f: itself (same size), its one element
        // (Clip's bounds, a scalar operand), or its broadcast position.
        std::vector<std::size_t> offsets;
        if (x[i].size() != t.size() && x[i].size() != 1) {
            offsets = ops::detail::broadcast_offsets({shape_type(x[i].shape().begin(), x[i].shape().end())},
                                                     shape_type(t.shape().begin(), t.shape().end()))[0];
        }
        for (std::size_t f = 0; f < t.size(); ++f) {
            V local = t.data()[f];
            if (slope != 0.0 && local == V(0)) local = V(slope);
            const std::size_t k = x[i].size() == t.size() ? f : (x[i].size() == 1 ? 0 : offsets[f]);
            cot.data()[k] += w[0].data()[f] * local;
        }
    }
    return r;
}

/// The VJP through the op's own tensor-level rule (has_tensor_vjp), shaped as
/// the tape's: values of the floating outputs, cotangents of the
/// differentiable inputs, checked against the inputs' shapes.
/// (Op::vjp checks the cotangents' shapes against the outputs' itself.)
template <class Op, class V>
[[nodiscard]] reverse_result<V> own_vjp(const spec::context& c, const std::vector<array<V>>& x,
                                        const std::vector<array<V>>& w, const reverse_options& options) {
    const auto fl = floating_outputs<Op>(c);
    reverse_result<V> r;
    if (options.values) {
        r.values = op_value<Op, V>(c, x);
        for (std::size_t o = 0; o < r.values.size(); ++o) {
            if (!fl[o]) r.values[o] = empty_array<V>();
        }
    } else {
        r.values.assign(fl.size(), empty_array<V>());
    }
    r.cotangents.assign(c.input_count(), empty_array<V>());
    const auto ids = differentiable_inputs_of<Op>(c);
    if (ids.empty()) return r;
    auto back = Op::template vjp<V>(c, x, w);
    for (const std::size_t i : ids) {
        check_same_shape(Op::op_type, "cotangent", i, x[i].shape(), back.at(i).shape());
        r.cotangents[i] = std::move(back[i]);
    }
    return r;
}
}  // namespace detail

/// VJP: outputs and the input cotangents Jᵀw for output cotangents w (one per
/// output; empty entries count as zero).
template <class Op, class V>
[[nodiscard]] reverse_result<V> op_vjp(const spec::context& c, const std::vector<array<V>>& x,
                                       const std::vector<array<V>>& w, const reverse_options& options = {}) {
    if constexpr (elementwise_op<Op>) {
        if (options.tensor_level) return detail::elementwise_vjp<Op, V>(c, x, w, options);
    } else if constexpr (has_tensor_vjp<Op, V>) {
        if (options.tensor_level) return detail::own_vjp<Op, V>(c, x, w, options);
    }
    using R = rvar<V>;
    tape_scope<V> scope;
    const auto ids = differentiable_inputs_of<Op>(c);
    std::vector<array<R>> xr(c.input_count(), detail::empty_array<R>());
    for (const std::size_t i : ids) {
        xr[i] = array<R>::from_shape(x[i].shape());
        for (std::size_t k = 0; k < x[i].size(); ++k) xr[i].data()[k] = R::variable(x[i].data()[k]);
    }
    const auto yr = Op::template run_real<R>(c, xr);
    const auto fl = detail::floating_outputs<Op>(c);
    std::vector<std::uint32_t> at;
    std::vector<V> seeds;
    reverse_result<V> r;
    for (std::size_t o = 0; o < yr.size(); ++o) {
        if (!fl[o]) {
            r.values.push_back(detail::empty_array<V>());
            continue;
        }
        auto v = array<V>::from_shape(yr[o].shape());
        for (std::size_t k = 0; k < yr[o].size(); ++k) v.data()[k] = yr[o].data()[k].v;
        r.values.push_back(std::move(v));
        if (o >= w.size() || detail::is_empty(w[o])) continue;
        detail::check_same_shape(Op::op_type, "cotangent of output", o, yr[o].shape(), w[o].shape());
        for (std::size_t k = 0; k < yr[o].size(); ++k) {
            at.push_back(yr[o].data()[k].id);
            seeds.push_back(w[o].data()[k]);
        }
    }
    const auto adj = scope.get().sweep(at, seeds);
    r.cotangents.assign(c.input_count(), detail::empty_array<V>());
    for (const std::size_t i : ids) {
        r.cotangents[i] = array<V>::from_shape(x[i].shape());
        for (std::size_t k = 0; k < x[i].size(); ++k) r.cotangents[i].data()[k] = adj[xr[i].data()[k].id];
    }
    if constexpr (requires { Op::proxy_slope; }) {
        if (options.proxy && Op::proxy_slope != 0.0 && ids.size() == 1 && yr.size() == 1 && !w.empty() &&
            !detail::is_empty(w[0])) {
            // Proxy ops are element-wise: the local derivative is the JVP along ones.
            const std::size_t i = ids[0];
            std::vector<array<V>> ones(c.input_count(), detail::empty_array<V>());
            ones[i] = array<V>::from_shape(x[i].shape());
            std::fill(ones[i].begin(), ones[i].end(), V(1));
            const auto local = op_jvp<Op, V>(c, x, ones).tangents[0];
            for (std::size_t k = 0; k < local.size(); ++k) {
                if (local.data()[k] == V(0)) r.cotangents[i].data()[k] = V(Op::proxy_slope) * w[0].data()[k];
            }
        }
    }
    return r;
}

/// The type-erased rules of one op for arithmetic V.
template <class V>
struct derivative_rules {
    std::string_view op_type;
    std::vector<std::size_t> (*differentiable_inputs)(const spec::context&) = nullptr;
    std::vector<array<V>> (*value)(const spec::context&, const std::vector<array<V>>&) = nullptr;
    forward_result<V> (*jvp)(const spec::context&, const std::vector<array<V>>&, const std::vector<array<V>>&) =
        nullptr;
    reverse_result<V> (*vjp)(const spec::context&, const std::vector<array<V>>&, const std::vector<array<V>>&,
                             const reverse_options&) = nullptr;
    double proxy_slope = 0.0;
    bool elementwise = false;  ///< elementwise_op
    /// vjp honours reverse_options::tensor_level (elementwise_op or has_tensor_vjp)
    bool tensor_level = false;
};

template <class V, class Op>
[[nodiscard]] derivative_rules<V> make_rules() {
    derivative_rules<V> r;
    r.op_type = Op::op_type;
    r.differentiable_inputs = &differentiable_inputs_of<Op>;
    r.value = &op_value<Op, V>;
    r.jvp = &op_jvp<Op, V>;
    r.vjp = &op_vjp<Op, V>;
    if constexpr (requires { Op::proxy_slope; }) r.proxy_slope = Op::proxy_slope;
    r.elementwise = elementwise_op<Op>;
    r.tensor_level = elementwise_op<Op> || has_tensor_vjp<Op, V>;
    return r;
}

/// A checked context for an op instance, as spec::evaluate builds it.
[[nodiscard]] inline spec::context make_context(const spec::op_entry& op, const std::vector<const tensor*>& inputs,
                                                const spec::attribute_map& attributes) {
    spec::detail::check_inputs(op, inputs);
    spec::context c(op.op_type, inputs, op.normalize_attributes(attributes));
    spec::check_constraints(c, op.constraints(c));
    return c;
}

}  // namespace tensoracle::ad
