// tensoracle: the kit's own ops as an engine for the gradient oracle, with
// value, JVP, VJP and second order (forward-over-reverse). Use it as the
// known-good engine beside the one under test, or to see how an engine is
// put together from callables.
#pragma once

#include <string>
#include <string_view>

#include "tensoracle/ad/op_rules.hpp"
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

template <class V>
const derivative_rules<V>& rules_or_throw(std::string_view op_type) {
    const auto* r = find_rules<V>(op_type);
    if (r == nullptr) {
        throw unsupported_error("tensoracle::ad::op_engine(" + std::string(op_type) + ")",
                                "the op has no derivative rules (not differentiable)");
    }
    return *r;
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
}  // namespace detail

/// Engine for one op with fixed attributes (inputs in op order; an absent
/// optional input is a default-constructed tensor); derivatives computed in V (double
/// by default, so an f32 op's derivatives come from the same kernel in double).
template <class V = double>
[[nodiscard]] engine op_engine(std::string_view op_type, spec::attribute_map attributes = {}) {
    const spec::op_entry* op = &ops::get_op(op_type);
    const auto& rules = detail::rules_or_throw<V>(op_type);
    const auto& rules2 = detail::rules_or_throw<dual<V>>(op_type);
    engine e;
    e.value = [op, attributes](const tensors& x) { return spec::evaluate(*op, detail::pointers(x), attributes); };
    e.jvp = [op, attributes, &rules](const tensors& x, const tensors& u) {
        const auto args = detail::pointers(x);
        const auto c = make_context(*op, args, attributes);
        const auto dtypes = op->output_dtypes(c);
        const auto ids = rules.differentiable_inputs(c);
        auto us = detail::lifted<V>(c, u, ids);
        const auto r = rules.jvp(c, detail::lifted<V>(c, x, ids), us);
        derivative_result d{detail::outputs_of(r.values, dtypes, *op, args, attributes), {}};
        for (std::size_t o = 0; o < dtypes.size(); ++o) {
            d.derivatives.push_back(detail::is_empty(r.tangents[o]) ? tensor() : lower(r.tangents[o]));
        }
        return d;
    };
    e.vjp = [op, attributes, &rules](const tensors& x, const tensors& w) {
        const auto args = detail::pointers(x);
        const auto c = make_context(*op, args, attributes);
        const auto dtypes = op->output_dtypes(c);
        const auto shapes = spec::eval_shapes(c, op->output_shapes(c));
        const auto ids = rules.differentiable_inputs(c);
        std::vector<array<V>> ws;
        for (std::size_t o = 0; o < dtypes.size(); ++o) {
            const bool given = o < w.size() && info(dtypes[o]).is_floating && w[o].shape() == shapes[o];
            ws.push_back(given ? lift<V>(w[o]) : detail::empty_array<V>());
        }
        const auto r = rules.vjp(c, detail::lifted<V>(c, x, ids), ws, {});
        derivative_result d{detail::outputs_of(r.values, dtypes, *op, args, attributes), {}};
        for (std::size_t i = 0; i < x.size(); ++i) {
            const bool diff = std::find(ids.begin(), ids.end(), i) != ids.end();
            d.derivatives.push_back(diff ? lower(r.cotangents[i]) : tensor());
        }
        return d;
    };
    // Order 2: g(x) = Jᵀ(x)·w; its JVP is forward-over-reverse, and its VJP is
    // the same product because the Hessian of wᵀf is symmetric.
    e.gradient = [op, attributes, &rules, &rules2](const tensors& w) {
        engine g;
        const auto vjp_first = [op, attributes, &rules, w](const tensors& x) {
            const auto args = detail::pointers(x);
            const auto c = make_context(*op, args, attributes);
            const auto ids = rules.differentiable_inputs(c);
            const auto dtypes = op->output_dtypes(c);
            std::vector<array<V>> ws;
            for (std::size_t o = 0; o < dtypes.size(); ++o) {
                const bool given = o < w.size() && info(dtypes[o]).is_floating;
                ws.push_back(given ? lift<V>(w[o]) : detail::empty_array<V>());
            }
            const auto r = rules.vjp(c, detail::lifted<V>(c, x, ids), ws, {});
            tensors out;
            for (const auto i : ids) out.push_back(lower(r.cotangents[i]));
            return out;
        };
        const auto second = [op, attributes, &rules2, w](const tensors& x, const tensors& u) {
            using D = dual<V>;
            const auto args = detail::pointers(x);
            const auto c = make_context(*op, args, attributes);
            const auto ids = rules2.differentiable_inputs(c);
            const auto dtypes = op->output_dtypes(c);
            auto xs = detail::lifted<D>(c, x, ids);
            for (const auto i : ids) {
                const auto ui = lift<V>(u[i]);
                for (std::size_t k = 0; k < ui.size(); ++k) xs[i].data()[k].d = ui.data()[k];
            }
            std::vector<array<D>> ws;
            for (std::size_t o = 0; o < dtypes.size(); ++o) {
                const bool given = o < w.size() && info(dtypes[o]).is_floating;
                ws.push_back(given ? lift<D>(w[o]) : detail::empty_array<D>());
            }
            const auto r = rules2.vjp(c, xs, ws, {});
            derivative_result d;
            for (const auto i : ids) {
                auto v = array<double>::from_shape(r.cotangents[i].shape());
                auto t = array<double>::from_shape(r.cotangents[i].shape());
                for (std::size_t k = 0; k < v.size(); ++k) {
                    v.data()[k] = static_cast<double>(primal(r.cotangents[i].data()[k].v));
                    t.data()[k] = static_cast<double>(primal(r.cotangents[i].data()[k].d));
                }
                d.outputs.push_back(tensor(v));
                d.derivatives.push_back(tensor(t));
            }
            return d;
        };
        g.value = vjp_first;
        g.jvp = second;
        // vᵀ ∂(Jᵀw)/∂x, computed forward-over-forward (a mode independent of the
        // JVP above) one coordinate at a time for small inputs: component i is
        // Σ_o w_o·∂²f_o[v, e_i], from a dual<dual> run seeded with v outside and
        // e_i inside. Large inputs use the JVP, since the Hessian of wᵀf is symmetric.
        g.vjp = [second, op, attributes, &rules2, w](const tensors& x, const tensors& v) {
            using D = dual<V>;
            const auto args = detail::pointers(x);
            const auto c = make_context(*op, args, attributes);
            const auto ids = rules2.differentiable_inputs(c);
            tensors u(x.size());
            for (std::size_t k = 0; k < ids.size() && k < v.size(); ++k) u[ids[k]] = v[k];
            auto d = second(x, u);  // outputs, and the fallback
            std::size_t n = 0;
            for (const auto i : ids) n += x[i].size();
            tensors per_input(x.size());
            if (n > forward_over_forward_limit) {
                for (std::size_t k = 0; k < ids.size(); ++k) per_input[ids[k]] = d.derivatives[k];
                d.derivatives = per_input;
                return d;
            }
            const auto dtypes = op->output_dtypes(c);
            auto xs = detail::lifted<D>(c, x, ids);
            for (const auto i : ids) {
                const auto ui = lift<V>(u[i]);
                for (std::size_t k = 0; k < ui.size(); ++k) xs[i].data()[k].d = ui.data()[k];
            }
            std::vector<array<D>> us(c.input_count(), detail::empty_array<D>());
            for (const auto i : ids) {
                us[i] = array<D>::from_shape(xs[i].shape());
                std::fill(us[i].begin(), us[i].end(), D(0));
            }
            for (const auto i : ids) {
                auto out = array<double>::from_shape(x[i].shape());
                for (std::size_t k = 0; k < x[i].size(); ++k) {
                    us[i].data()[k] = D(1);
                    const auto r = rules2.jvp(c, xs, us);
                    us[i].data()[k] = D(0);
                    double acc = 0.0;
                    for (std::size_t o = 0; o < dtypes.size(); ++o) {
                        if (o >= w.size() || detail::is_empty(r.tangents[o])) continue;
                        const auto wo = w[o].to<double>();
                        for (std::size_t j = 0; j < wo.size(); ++j) {
                            acc += wo.data()[j] * static_cast<double>(primal(r.tangents[o].data()[j].d));
                        }
                    }
                    out.data()[k] = acc;
                }
                per_input[i] = tensor(out);
            }
            d.derivatives = per_input;
            return d;
        };
        return g;
    };
    return e;
}

}  // namespace tensoracle::ad
