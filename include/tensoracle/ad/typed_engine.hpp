// tensoracle: one op of the kit as an engine for the gradient oracle, with
// value, JVP, VJP and second order (forward-over-reverse).
//
//     #include <tensoracle/ad/typed_engine.hpp>
//     #include <tensoracle/ops/reduce.hpp>
//     const auto e = ad::op_engine<ops::Softmax>({{"axis", std::int64_t{0}}});
//
// instantiates Softmax's kernel and nothing else: a test of one op compiles in
// seconds. ad/engine.hpp adds op_engine("Softmax") by name, which goes through
// the registry of every op (campaigns, graphs). Use an op engine as the
// known-good engine beside the one under test (oracle_options::reference), or
// to see how an engine is put together from callables.
#pragma once

#include <algorithm>
#include <concepts>
#include <string>
#include <string_view>

#include "tensoracle/ad/op_derivatives.hpp"
#include "tensoracle/ad/oracle.hpp"

namespace tensoracle::ad {

/// Inputs up to this many elements get second-order VJPs forward-over-forward.
inline constexpr std::size_t forward_over_forward_limit = 64;

namespace detail {
// An absent optional input is passed as a default tensor (float32, shape [0]).
inline std::vector<const tensor*> pointers(const tensors& x) {
    std::vector<const tensor*> p;
    for (const auto& t : x) {
        const bool absent = t.element_dtype() == dtype::f32 && t.rank() == 1 && t.shape()[0] == 0;
        p.push_back(absent ? nullptr : &t);
    }
    while (!p.empty() && p.back() == nullptr) p.pop_back();
    return p;
}

template <class V>
std::vector<array<V>> lifted(const spec::context& c, const tensors& x, const std::vector<std::size_t>& ids) {
    std::vector<array<V>> xs(c.input_count(), empty_array<V>());
    for (const auto i : ids) xs[i] = lift<V>(x[i]);
    return xs;
}

// Outputs: values rounded to the op's output dtypes; non-floating outputs
// (indices, masks) from a plain run, made only when there are some.
template <class V>
tensors outputs_of(const std::vector<array<V>>& values, const std::vector<dtype>& dtypes, const spec::op_entry& op,
                   const std::vector<const tensor*>& args, const spec::attribute_map& attributes) {
    tensors out, plain;
    for (std::size_t o = 0; o < dtypes.size(); ++o) {
        if (info(dtypes[o]).is_floating && o < values.size() && !is_empty(values[o])) {
            out.push_back(lower(values[o], dtypes[o]));
        } else {
            if (plain.empty()) plain = spec::evaluate(op, args, attributes);
            out.push_back(plain[o]);
        }
    }
    return out;
}

// Output cotangents as arrays of W; an entry that is absent, not floating or
// misshapen counts as zero (empty).
template <class W>
std::vector<array<W>> cotangents(const tensors& w, const std::vector<dtype>& dtypes,
                                 const std::vector<shape_type>* shapes = nullptr) {
    std::vector<array<W>> ws;
    for (std::size_t o = 0; o < dtypes.size(); ++o) {
        const bool given = o < w.size() && w[o].size() != 0 && info(dtypes[o]).is_floating &&
                           (shapes == nullptr || w[o].shape() == (*shapes)[o]);
        ws.push_back(given ? lift<W>(w[o]) : empty_array<W>());
    }
    return ws;
}

/// The engine of one op instance, from its entry and its rules in V and
/// dual<V>. The engine keeps pointers to the three: both callers pass objects
/// that live as long as the program (function-local statics, the registry).
template <class V>
[[nodiscard]] engine make_op_engine(const spec::op_entry* op, const derivative_rules<V>* rules,
                                    const derivative_rules<dual<V>>* rules2, spec::attribute_map attributes) {
    engine e;
    e.value = [op, attributes](const tensors& x) { return spec::evaluate(*op, pointers(x), attributes); };
    e.jvp = [op, attributes, rules](const tensors& x, const tensors& u) {
        const auto args = pointers(x);
        const auto c = make_context(*op, args, attributes);
        const auto dtypes = op->output_dtypes(c);
        const auto ids = rules->differentiable_inputs(c);
        const auto r = rules->jvp(c, lifted<V>(c, x, ids), lifted<V>(c, u, ids));
        jvp_result d{outputs_of(r.values, dtypes, *op, args, attributes), {}};
        for (std::size_t o = 0; o < dtypes.size(); ++o) {
            d.output_tangents.push_back(is_empty(r.tangents[o]) ? tensor() : lower(r.tangents[o]));
        }
        return d;
    };
    e.vjp = [op, attributes, rules](const tensors& x, const tensors& w) {
        const auto args = pointers(x);
        const auto c = make_context(*op, args, attributes);
        const auto dtypes = op->output_dtypes(c);
        const auto shapes = spec::eval_shapes(c, op->output_shapes(c));
        const auto ids = rules->differentiable_inputs(c);
        const auto r = rules->vjp(c, lifted<V>(c, x, ids), cotangents<V>(w, dtypes, &shapes), {});
        vjp_result d{outputs_of(r.values, dtypes, *op, args, attributes), {}};
        for (std::size_t i = 0; i < x.size(); ++i) {
            const bool diff = std::find(ids.begin(), ids.end(), i) != ids.end();
            d.input_cotangents.push_back(diff ? lower(r.cotangents[i]) : tensor());
        }
        return d;
    };
    // Order 2: g(x) = Jᵀ(x)·w, one output per input (empty where not
    // differentiated); its JVP is forward-over-reverse, and its VJP the same
    // product because the Hessian of wᵀf is symmetric.
    e.gradient = [op, attributes, rules, rules2](const tensors& w) {
        engine g;
        g.value = [op, attributes, rules, w](const tensors& x) {
            const auto args = pointers(x);
            const auto c = make_context(*op, args, attributes);
            const auto ids = rules->differentiable_inputs(c);
            const auto r = rules->vjp(c, lifted<V>(c, x, ids), cotangents<V>(w, op->output_dtypes(c)), {});
            tensors out(x.size());
            for (const auto i : ids) out[i] = lower(r.cotangents[i]);
            return out;
        };
        // Outputs Jᵀw and tangents (∂(Jᵀw)/∂x)·u, one per input.
        const auto second = [op, attributes, rules2, w](const tensors& x, const tensors& u) {
            using D = dual<V>;
            const auto args = pointers(x);
            const auto c = make_context(*op, args, attributes);
            const auto ids = rules2->differentiable_inputs(c);
            auto xs = lifted<D>(c, x, ids);
            for (const auto i : ids) {
                if (i >= u.size() || u[i].size() == 0) continue;  // no tangent: zero
                const auto ui = lift<V>(u[i]);
                for (std::size_t k = 0; k < ui.size() && k < xs[i].size(); ++k) xs[i].data()[k].d = ui.data()[k];
            }
            const auto r = rules2->vjp(c, xs, cotangents<D>(w, op->output_dtypes(c)), {});
            jvp_result d{tensors(x.size()), tensors(x.size())};
            for (const auto i : ids) {
                auto v = array<double>::from_shape(r.cotangents[i].shape());
                auto t = array<double>::from_shape(r.cotangents[i].shape());
                for (std::size_t k = 0; k < v.size(); ++k) {
                    v.data()[k] = static_cast<double>(primal(r.cotangents[i].data()[k].v));
                    t.data()[k] = static_cast<double>(primal(r.cotangents[i].data()[k].d));
                }
                d.outputs[i] = tensor(v);
                d.output_tangents[i] = tensor(t);
            }
            return d;
        };
        g.jvp = second;
        // vᵀ ∂(Jᵀw)/∂x, computed forward-over-forward (a mode independent of the
        // JVP above) one coordinate at a time for small inputs: component i is
        // Σ_o w_o·∂²f_o[v, e_i], from a dual<dual> run seeded with v outside and
        // e_i inside. Large inputs use the JVP, since the Hessian of wᵀf is symmetric.
        g.vjp = [second, op, attributes, rules2, w](const tensors& x, const tensors& v) {
            using D = dual<V>;
            auto s = second(x, v);  // outputs, and the fallback
            vjp_result d{std::move(s.outputs), std::move(s.output_tangents)};
            const auto args = pointers(x);
            const auto c = make_context(*op, args, attributes);
            const auto ids = rules2->differentiable_inputs(c);
            std::size_t n = 0;
            for (const auto i : ids) n += x[i].size();
            if (n > forward_over_forward_limit) return d;
            const auto dtypes = op->output_dtypes(c);
            auto xs = lifted<D>(c, x, ids);
            for (const auto i : ids) {
                if (i >= v.size() || v[i].size() == 0) continue;
                const auto vi = lift<V>(v[i]);
                for (std::size_t k = 0; k < vi.size() && k < xs[i].size(); ++k) xs[i].data()[k].d = vi.data()[k];
            }
            std::vector<array<D>> us(c.input_count(), empty_array<D>());
            for (const auto i : ids) {
                us[i] = array<D>::from_shape(xs[i].shape());
                std::fill(us[i].begin(), us[i].end(), D(0));
            }
            for (const auto i : ids) {
                auto out = array<double>::from_shape(x[i].shape());
                for (std::size_t k = 0; k < x[i].size(); ++k) {
                    us[i].data()[k] = D(1);
                    const auto r = rules2->jvp(c, xs, us);
                    us[i].data()[k] = D(0);
                    double acc = 0.0;
                    for (std::size_t o = 0; o < dtypes.size(); ++o) {
                        if (o >= w.size() || w[o].size() == 0 || is_empty(r.tangents[o])) continue;
                        const auto wo = w[o].to<double>();
                        for (std::size_t j = 0; j < wo.size(); ++j) {
                            acc += wo.data()[j] * static_cast<double>(primal(r.tangents[o].data()[j].d));
                        }
                    }
                    out.data()[k] = acc;
                }
                d.input_cotangents[i] = tensor(out);
            }
            return d;
        };
        return g;
    };
    return e;
}
}  // namespace detail

/// Engine for op spec Op with fixed attributes (inputs in op order; an absent
/// optional input is a default-constructed tensor). Derivatives are computed
/// in V (double by default, so an f32 op's derivatives come from the same
/// kernel run in double). Only Op's kernel is instantiated.
template <class Op, class V = double>
    requires(!std::floating_point<Op>)
[[nodiscard]] engine op_engine(spec::attribute_map attributes = {}) {
    static_assert(differentiable_op<Op>,
                  "op_engine<Op>: Op has no kernel on AD scalars (run_real<S>), so the op is not differentiable");
    static_assert(std::floating_point<V>, "op_engine<Op, V>: V, the arithmetic of the derivatives, must be float or double");
    static const spec::op_entry op = spec::make_evaluation_entry<Op>();
    static const derivative_rules<V> rules = make_rules<V, Op>();
    static const derivative_rules<dual<V>> rules2 = make_rules<dual<V>, Op>();
    return detail::make_op_engine<V>(&op, &rules, &rules2, std::move(attributes));
}

}  // namespace tensoracle::ad
