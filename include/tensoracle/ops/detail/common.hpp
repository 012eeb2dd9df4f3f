// tensoracle: helpers shared by op families (runtime dispatch to typed
// kernels, losses of domain rules, random instances).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensoracle/core/rng.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/spec/hints.hpp"
#include "tensoracle/spec/op.hpp"

namespace tensoracle::ops::detail {

using namespace tensoracle::spec;

/// Calls f(hana::type_c<T>) for the runtime dtype d, instantiating f only for
/// dtypes in `Allowed` (the spec's set), so kernels are never instantiated for
/// element types the op rejects. R is f's result type (a tensor by default).
template <dtype_set Allowed, class R = tensor, class F>
R dispatch(dtype d, std::string_view op_type, F&& f) {
    return tensoracle::visit(d, [&](auto t) -> R {
        using T = typename decltype(t)::type;
        if constexpr (Allowed.contains(dtype_of<T>)) {
            return f(t);
        } else {
            throw dtype_error(std::string(op_type), "dtype " + std::string(name(d)) + " is not accepted");
        }
    });
}

/// A kernel's one output as run()'s result, moved in: `return {t};` would
/// copy t out of the initializer list, a second pass over every output.
/// (Also run_real's arrays.)
template <class T>
    requires(!std::is_lvalue_reference_v<T>)
std::vector<T> single_output(T&& t) {
    std::vector<T> out;
    out.push_back(std::move(t));
    return out;
}

/// For an op's own VJP (ad::has_tensor_vjp): the cotangent of output o, or
/// null when it is absent or empty (zeros); one of another shape than the
/// output's is an error, since the VJP indexes it by the output's layout.
template <class V, class Shape>
const array<V>* output_cotangent(std::string_view op_type, const std::vector<array<V>>& w, std::size_t o,
                                 const Shape& shape) {
    if (o >= w.size() || (w[o].dimension() == 1 && w[o].shape()[0] == 0)) return nullptr;
    if (!std::equal(shape.begin(), shape.end(), w[o].shape().begin(), w[o].shape().end())) {
        throw shape_error(std::string(op_type) + " VJP",
                          "cotangent of output " + std::to_string(o) + " has shape " +
                              to_string(shape_type(w[o].shape().begin(), w[o].shape().end())) + " but the output has shape " +
                              to_string(shape_type(shape.begin(), shape.end())));
    }
    return &w[o];
}

/// The domain rules of a formula struct F, or none when it declares none.
template <class F>
std::vector<domain_rule> domain_of() {
    if constexpr (requires { F::domain(); }) {
        return F::domain();
    } else {
        return {};
    }
}

/// Sum over elements of max(f(x), 0): zero exactly when f(x) <= 0 everywhere.
template <class F>
double hinge_loss(const tensor& t, F f) {
    return t.visit([&](auto v) {
        double loss = 0.0;
        for (const auto x : v) {
            const double h = f(value_cast<double>(x));
            if (h > 0.0 || std::isnan(h)) loss += std::isnan(h) ? 1.0 : h;
        }
        return loss;
    });
}

/// d hinge_loss / d input `input` (other inputs: empty): f' by a central
/// difference on each violating element, 0 elsewhere.
template <class F>
std::vector<tensor> hinge_gradient(std::span<const tensor> in, std::size_t input, F f) {
    std::vector<tensor> grads(in.size());
    const auto x = in[input].to<double>();
    auto d = array<double>::from_shape(x.shape());
    for (std::size_t k = 0; k < x.size(); ++k) {
        const double v = x.data()[k];
        double slope = 0.0;
        if (const double fv = f(v); fv > 0.0) {
            const double step = 1e-6 * std::max(1.0, std::fabs(v));
            slope = (f(v + step) - f(v - step)) / (2.0 * step);
            if (slope == 0.0 || !std::isfinite(slope)) {
                // At a symmetric kink (|B| > 0 at B = 0 exactly, as ReLU
                // outputs it) the central difference is 0: take the one-sided
                // slope that descends, upwards on a tie, so the search moves.
                const double up = (f(v + step) - fv) / step, down = (fv - f(v - step)) / step;
                slope = up <= -down ? up : down;
                if (!std::isfinite(slope)) slope = 0.0;
            }
        }
        d.data()[k] = slope;
    }
    grads[input] = tensor(d);
    return grads;
}

/// The rule "f(x) <= 0 for every element x of input `input`" with its
/// hinge loss and the loss's gradient, for the input search.
template <class F>
domain_rule hinge_rule(std::string text, std::size_t input, F f) {
    domain_rule r{std::move(text), [input, f](std::span<const tensor> in) { return hinge_loss(in[input], f); },
                  [input, f](std::span<const tensor> in) { return hinge_gradient(in, input, f); }};
    r.elementwise_input = input;
    r.elementwise = [f](double x) { return static_cast<double>(f(x)); };
    return r;
}

/// The floating values a cast to integer dtype `to` keeps in range (none for
/// floating and bool targets). The cast truncates toward zero first (ONNX, and
/// C++'s conversion, whose behaviour is undefined only when the truncated value
/// does not fit), so the range is the open interval (min - 1, max + 1): -0.5
/// becomes 0 in uint8, -1 does not fit. Bounds are the doubles just inside it.
inline std::optional<std::pair<double, double>> integer_cast_bounds(dtype to) {
    auto open = [](double lo, double hi) { return std::pair{std::nextafter(lo, 0.0), std::nextafter(hi, 0.0)}; };
    switch (to) {
        case dtype::i8: return open(-129.0, 128.0);
        case dtype::i16: return open(-32769.0, 32768.0);
        case dtype::i32: return open(-2147483649.0, 2147483648.0);
        // -2^63 - 1 rounds to -2^63 in double, which fits; the largest double below 2^63 is 2^63 - 1024.
        case dtype::i64: return std::pair{-9223372036854775808.0, 9223372036854774784.0};
        case dtype::u8: return open(-1.0, 256.0);
        default: return std::nullopt;
    }
}

/// ONNX Cast leaves a floating value outside an integer target's range undefined
/// (runtimes saturate, wrap or give INT_MIN): the rule keeps a floating input 0
/// within [min, max] of the target `target_of(inputs)` returns. Integer sources
/// (they wrap, which is defined) and bool or floating targets always pass.
template <class Target>
domain_rule cast_range_rule(Target target_of) {
    auto f_of = [=](std::span<const tensor> in) -> std::optional<std::function<double(double)>> {
        if (!info(in[0].element_dtype()).is_floating) return std::nullopt;
        const auto b = integer_cast_bounds(target_of(in));
        if (!b) return std::nullopt;
        return [lo = b->first, hi = b->second](double x) { return std::max(x - hi, lo - x); };
    };
    return {"floating input within the integer target's range",
            [f_of](std::span<const tensor> in) {
                const auto f = f_of(in);
                return f ? hinge_loss(in[0], *f) : 0.0;
            },
            [f_of](std::span<const tensor> in) {
                const auto f = f_of(in);
                if (f) return hinge_gradient(in, 0, *f);
                return std::vector<tensor>(in.size());
            }};
}

/// hinge_rule for the elements of `input` only where its dtype is in `dtypes`
/// (elsewhere the loss is 0 and the generator does not apply it).
template <class F>
domain_rule hinge_rule_for(dtype_set dtypes, std::string text, std::size_t input, F f) {
    auto r = hinge_rule(std::move(text), input, f);
    r.loss = [input, dtypes, loss = std::move(r.loss)](std::span<const tensor> in) {
        return dtypes.contains(in[input].element_dtype()) ? loss(in) : 0.0;
    };
    r.gradient = [input, dtypes, gradient = std::move(r.gradient)](std::span<const tensor> in) {
        return dtypes.contains(in[input].element_dtype()) ? gradient(in) : std::vector<tensor>(in.size());
    };
    r.input_dtypes = dtypes;
    return r;
}

/// Largest finite value of a floating dtype, as double.
inline double max_finite(dtype d) {
    switch (d) {
        case dtype::f16: return 65504.0;
        case dtype::bf16: return static_cast<double>(static_cast<float>(std::numeric_limits<bfloat16>::max()));
        case dtype::f32: return static_cast<double>(std::numeric_limits<float>::max());
        default: return std::numeric_limits<double>::max();
    }
}

/// hinge_rule for an f that also depends on the input's largest finite value
/// (overflow limits): f(x, max_finite(dtype)) <= 0.
template <class F>
domain_rule overflow_rule(std::string text, std::size_t input, F f) {
    auto at_limit = [input, f](std::span<const tensor> in) {
        return [m = max_finite(in[input].element_dtype()), f](double x) { return f(x, m); };
    };
    domain_rule r{std::move(text), [input, at_limit](std::span<const tensor> in) { return hinge_loss(in[input], at_limit(in)); },
                  [input, at_limit](std::span<const tensor> in) { return hinge_gradient(in, input, at_limit(in)); }};
    r.elementwise_input = input;
    r.elementwise_at_limit = [f](double x, double m) { return static_cast<double>(f(x, m)); };
    return r;
}

/// A random dtype from a set.
inline dtype pick_dtype(rng& g, dtype_set s) {
    const auto m = s.members();
    return m[static_cast<std::size_t>(g.below(m.size()))];
}

/// A random shape: rank in [min_rank, max_rank], dims in [1, max_dim].
inline shape_type random_shape(rng& g, std::size_t min_rank, std::size_t max_rank, std::size_t max_dim = 5) {
    shape_type s(static_cast<std::size_t>(g.integer(static_cast<std::int64_t>(min_rank),
                                                    static_cast<std::int64_t>(max_rank))));
    for (auto& d : s) d = static_cast<std::size_t>(g.integer(1, static_cast<std::int64_t>(max_dim)));
    return s;
}

/// An int64 1-D tensor from values.
inline tensor int64_tensor(const std::vector<std::int64_t>& v) {
    auto a = array<std::int64_t>::from_shape({v.size()});
    std::copy(v.begin(), v.end(), a.data());
    return tensor(a);
}

/// Row-major strides of a shape.
inline shape_type strides_of(const shape_type& s) {
    shape_type st(s.size(), 1);
    for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
    return st;
}

/// output_dtypes of an element-wise family over formula F: F::output_dtype where F
/// states one (predicates: boolean), else input 0's dtype.
template <class F>
struct formula_output_dtypes {
    static std::vector<dtype> output_dtypes(const context& c) {
        if constexpr (requires { F::output_dtype; }) {
            return {F::output_dtype};
        } else {
            return {c.input_dtype(0)};
        }
    }
};

/// run and run_real of an op whose kernel is `Op::compute<T>(x, attributes)` on its
/// one input, typed by the spec's input dtypes; inherit it as `one_input_kernel<Op>`.
template <class Op>
struct one_input_kernel {
    template <int = 0>
    static std::vector<tensor> run(const context& c) {
        const auto a = parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type);
        return single_output(dispatch<Op::inputs[0].types>(c.input_dtype(0), Op::op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(Op::template compute<T>(c.input(0).as_array<T>(), a));
        }));
    }
    /// The same kernel on AD scalars S (ad/op_derivatives.hpp).
    template <class S>
    static std::vector<array<S>> run_real(const context& c, const std::vector<array<S>>& x) {
        return {Op::template compute<S>(x[0], parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type))};
    }
};

}  // namespace tensoracle::ops::detail
