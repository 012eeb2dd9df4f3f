// tensoracle: element-wise unary ops (math and activations).
//
// Each op is a small formula struct F; unary_elementwise<F> turns it into a
// full spec (signature, shape inference both ways, domain, kernel, sampler).
// Floating kernels compute in float for f16/bf16/f32 and in double for f64
// (ONNX reference behaviour), then round once to the element type. AD scalars
// (ad::dual, ad::rvar) run the same formulas in themselves: run_real.
#pragma once

#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

using spec::no_attributes;

/// A sampling range for random instances, inside the op's domain.
struct value_range {
    double lo = -4.0;
    double hi = 4.0;
};

template <class F>
struct unary_elementwise {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = F::opset;
    using attributes = typename F::attributes;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", F::types}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", F::out_types}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op
    /// NNSmith's proxy derivative for ops whose derivative is 0 almost everywhere.
    static constexpr double proxy_slope = [] {
        if constexpr (requires { F::proxy_slope; }) {
            return F::proxy_slope;
        } else {
            return 0.0;
        }
    }();

    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        if constexpr (requires { F::output_dtype; }) {
            return {F::output_dtype};
        } else {
            return {c.input_dtype(0)};
        }
    }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if constexpr (requires { F::output_dtype; }) {
            if (out != F::output_dtype) return {};
            return {{F::types.members(), {rank}}};
        } else {
            if (!F::types.contains(out)) return {};
            return {{{out}, {rank}}};
        }
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return detail::domain_of<F>(); }

    /// The typed kernel: Y[i] = F(X[i]).
    template <class T>
    static auto compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<unary_elementwise, T>::value);
        return compute_unchecked<T>(x, a);
    }

    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<F::types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            using out_t = std::conditional_t<requires { F::output_dtype; }, bool, T>;
            // Straight from the input's buffer into the output's: no typed copies.
            const auto x = c.input(0).values<T>();
            auto y = tensor::for_overwrite(dtype_of<out_t>, c.input(0).shape());
            apply_into<T>(x.data(), x.size(), y.template values<out_t>().data(), a);
            return y;
        }));
    }

    /// The kernel on AD scalar S (docs/ADDING_AN_OP.md, "Derivatives"). Only ops
    /// with a floating output computed from a floating input have it; integer
    /// inputs of mixed-type ops give the placeholder (run() holds the output).
    template <class S>
        requires(!requires { F::output_dtype; } && !(F::types & spec::types::floating).empty())
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        // Unchecked: S is over double also for f32-only ops (Celu), since the AD path lifts f32 to double.
        return detail::single_output(compute_unchecked<S>(x[0], spec::parse_attributes<attributes>(c.attributes(), op_type)));
    }
    static spec::hints hints() {
        spec::hints h;
        if constexpr (requires { F::hints(); }) {
            h = F::hints();
        } else {
            if constexpr (requires { F::range; }) h.range(0, F::range.lo, F::range.hi);
        }
        // What Y holds is F's image of what X holds (Sigmoid's (0, 1), Relu's
        // [0, inf)); integer-only ops (bitwise) are left unknown.
        if constexpr (!(F::types & spec::types::floating).empty()) {
            if (!h.output_facts) h.facts(image_facts);
            if (h.runs_on_unknowns == spec::hints::unknown_data::not_run) {
                h.runs_on_unknowns = spec::hints::unknown_data::elementwise;
            }
        }
        return h;
    }
    static std::vector<spec::value_facts> image_facts(std::span<const spec::value_facts> in,
                                                      const spec::attribute_map& attrs, std::span<const shape_type>) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        auto y = spec::facts::image(x, [&a](double v) { return static_cast<double>(F::apply(v, a)); });
        if constexpr (requires { F::integral_output; }) y.integral = true;
        if constexpr (requires { F::keeps_integers; }) y.integral = x.integral;
        if constexpr (requires { F::refine_facts(y, a); }) F::refine_facts(y, a);
        return {y};
    }

private:
    template <class T>
    static auto compute_unchecked(const array<T>& x, const attributes& a) {
        using out_t = std::conditional_t<requires { F::output_dtype; }, bool, T>;
        auto y = array<out_t>::from_shape(x.shape());
        apply_into<T>(x.data(), x.size(), y.data(), a);
        return y;
    }
    template <class T, class Out>
    static void apply_into(const T* x, std::size_t n, Out* y, const attributes& a) {
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (real_scalar<T>) {
                using acc = std::conditional_t<ad_scalar<T>, T,
                                               std::conditional_t<std::is_same_v<T, double>, double, float>>;
                y[i] = value_cast<Out>(F::apply(static_cast<acc>(x[i]), a));
            } else {
                y[i] = static_cast<Out>(F::apply(x[i], a));
            }
        }
    }
};

namespace unary {

using spec::dtype_set;
namespace types = spec::types;

// Domain rules: predicates on X, written as "f(x) <= 0" hinges.
inline spec::domain_rule rule(std::string text, double (*f)(double)) {
    return detail::hinge_rule(std::move(text), 0, f);
}
constexpr double eps = 1e-10;  // strict inequalities: f(x) + eps <= 0

// Each op's struct derives its apply() from the shared formula (ops/formulas.hpp).
#define TENSORACLE_UNARY(NAME, OPTYPE, OPSET, TYPES)        \
    struct NAME##_fn : formula::NAME {                       \
        static constexpr std::string_view op_type = OPTYPE;  \
        static constexpr int opset = OPSET;                  \
        static constexpr dtype_set types = TYPES;            \
        static constexpr dtype_set out_types = TYPES;        \
        using attributes = no_attributes;

// Value facts: keeps_integers (an integer input gives integers), integral_output (integers always).
TENSORACLE_UNARY(relu, "Relu", 14, types::signed_numeric)
    static constexpr double proxy_slope = 0.1;  // derivative is 0 for x < 0
    static constexpr bool keeps_integers = true;
};
TENSORACLE_UNARY(abs, "Abs", 13, types::numeric)
    static constexpr bool keeps_integers = true;
};
TENSORACLE_UNARY(neg, "Neg", 13, types::signed_numeric)
    static constexpr bool keeps_integers = true;
};
TENSORACLE_UNARY(sign, "Sign", 13, types::numeric)
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};
TENSORACLE_UNARY(ceil, "Ceil", 13, types::floating)
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};
TENSORACLE_UNARY(floor, "Floor", 13, types::floating)
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};
/// Round: halves go to the even neighbour (ONNX and IEEE default).
TENSORACLE_UNARY(round, "Round", 11, types::ieee_floating)
    static constexpr double proxy_slope = 0.1;
    static constexpr bool integral_output = true;
};
TENSORACLE_UNARY(exp, "Exp", 13, types::floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::overflow_rule("X <= log(max finite)", 0, [](double x, double m) { return x - std::log(m); })};
    }
};
TENSORACLE_UNARY(log, "Log", 13, types::floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("X > 0", [](double x) { return -x + eps; })}; }
    static constexpr value_range range{0.1, 10.0};
};
TENSORACLE_UNARY(sqrt, "Sqrt", 13, types::floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("X >= 0", [](double x) { return -x; })}; }
    static constexpr value_range range{0.0, 10.0};
};
TENSORACLE_UNARY(reciprocal, "Reciprocal", 13, types::floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {rule("|X| > 0", [](double x) { return -std::fabs(x) + eps; })};
    }
    static constexpr value_range range{0.5, 4.0};
};
TENSORACLE_UNARY(sigmoid, "Sigmoid", 13, types::floating)
};
TENSORACLE_UNARY(tanh, "Tanh", 13, types::floating)
};
/// Softplus = log(exp(x) + 1), evaluated as max(x, 0) + log1p(exp(-|x|)) so
/// that it does not overflow for large x (same value where both are finite).
/// Written per sign so that no kink of max or |.| shows in the derivative at 0.
TENSORACLE_UNARY(softplus, "Softplus", 1, types::ieee_floating)
};
TENSORACLE_UNARY(softsign, "Softsign", 1, types::ieee_floating)
};
/// Erf also takes integers (ONNX-13): erf in double, truncated to the type.
TENSORACLE_UNARY(erf, "Erf", 13, types::numeric)
    template <class V>
    static V apply(V x, const attributes& a) {
        if constexpr (std::is_integral_v<V>) {
            return value_cast<V>(std::erf(static_cast<double>(x)));
        } else {
            return formula::erf::apply(x, a);
        }
    }
    // Integer data truncates to 0 unless |x| >= 6 (then +-1), and no gradient moves
    // integers: draw from 6 up, so that a divisor or a sum that needs it nonzero
    // starts there (the search's smaller scales and all-zeros starts reach 0).
    static spec::hints hints() { return spec::hints{}.integer_range(0, 6.0, 12.0); }
};
TENSORACLE_UNARY(sin, "Sin", 7, types::ieee_floating)
};
TENSORACLE_UNARY(cos, "Cos", 7, types::ieee_floating)
};
TENSORACLE_UNARY(tan, "Tan", 7, types::ieee_floating)
    static constexpr value_range range{-1.5, 1.5};
};
TENSORACLE_UNARY(asin, "Asin", 7, types::ieee_floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("|X| <= 1", [](double x) { return std::fabs(x) - 1.0; })}; }
    static constexpr value_range range{-1.0, 1.0};
};
TENSORACLE_UNARY(acos, "Acos", 7, types::ieee_floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("|X| <= 1", [](double x) { return std::fabs(x) - 1.0; })}; }
    static constexpr value_range range{-1.0, 1.0};
};
TENSORACLE_UNARY(atan, "Atan", 7, types::ieee_floating)
};
TENSORACLE_UNARY(sinh, "Sinh", 9, types::ieee_floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        // log(max finite), not log(2 max finite): 2 max is inf in double, which let every float64 Sinh pass.
        return {detail::overflow_rule("|X| <= log(max finite)", 0,
                                      [](double x, double m) { return std::fabs(x) - std::log(m); })};
    }
};
TENSORACLE_UNARY(cosh, "Cosh", 9, types::ieee_floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::overflow_rule("|X| <= log(max finite)", 0,
                                      [](double x, double m) { return std::fabs(x) - std::log(m); })};
    }
};
TENSORACLE_UNARY(asinh, "Asinh", 9, types::ieee_floating)
};
TENSORACLE_UNARY(acosh, "Acosh", 9, types::ieee_floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("X >= 1", [](double x) { return 1.0 - x; })}; }
    static constexpr value_range range{1.0, 6.0};
};
TENSORACLE_UNARY(atanh, "Atanh", 9, types::ieee_floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {rule("|X| < 1", [](double x) { return std::fabs(x) - 1.0 + eps; })};
    }
    static constexpr value_range range{-0.95, 0.95};
};
// Not differentiable: boolean in and out.
TENSORACLE_UNARY(not_, "Not", 1, types::boolean)
};
TENSORACLE_UNARY(identity, "Identity", 16, types::all)
    static spec::hints hints() { return spec::hints{}.copies(0); }
};
#undef TENSORACLE_UNARY

// Activations with attributes.
struct leaky_relu_fn : formula::leaky_relu {
    static constexpr std::string_view op_type = "LeakyRelu";
    static constexpr int opset = 16;
    static constexpr dtype_set types = types::floating;
    static constexpr dtype_set out_types = types::floating;
    using attributes = alpha_attr;
};
struct elu_fn : formula::elu {
    static constexpr std::string_view op_type = "Elu";
    static constexpr int opset = 6;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = elu_attr;
};
struct celu_fn : formula::celu {
    static constexpr std::string_view op_type = "Celu";
    static constexpr int opset = 12;
    static constexpr dtype_set types = spec::dtypes_of(dtype::f32);
    static constexpr dtype_set out_types = types;
    using attributes = elu_attr;
    /// max(0, x) + min(0, alpha * expm1(x / alpha)), written per sign with the same values (also -0 -> +0 and
    /// NaN -> 0, as max/min give), so that the derivative at 0 is 1 and not max's and min's 0.
};
struct selu_fn : formula::selu {
    static constexpr std::string_view op_type = "Selu";
    static constexpr int opset = 6;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = selu_attr;
};
struct hard_sigmoid_fn : formula::hard_sigmoid {
    static constexpr std::string_view op_type = "HardSigmoid";
    static constexpr int opset = 6;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = hard_sigmoid_attr;
    static constexpr double proxy_slope = 0.1;
};
struct hard_swish_fn : formula::hard_swish {
    static constexpr std::string_view op_type = "HardSwish";
    static constexpr int opset = 14;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = no_attributes;
    static constexpr double proxy_slope = 0.1;  // derivative is 0 below -3
};
struct thresholded_relu_fn : formula::thresholded_relu {
    static constexpr std::string_view op_type = "ThresholdedRelu";
    static constexpr int opset = 10;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = thresholded_relu_attr;
    static constexpr double proxy_slope = 0.1;  // derivative is 0 at or below alpha
    // Y is 0 or above alpha: with alpha > 0 nothing lies in (0, alpha), which a
    // sampled image cannot see (Atanh of it is finite only at 0 when alpha >= 1).
    static void refine_facts(spec::value_facts& y, const attributes& a) {
        if (a.alpha > 0.0f && !y.in_gap(0.0)) y.gap = std::make_pair(0.0, static_cast<double>(a.alpha));
    }
};
struct shrink_attr {
    float bias = 0.0f;
    float lambd = 0.5f;
};
template <class V>
V cast_to(double d) {
    return value_cast<V>(d);
}
struct shrink_fn {
    static constexpr std::string_view op_type = "Shrink";
    static constexpr int opset = 9;
    static constexpr dtype_set types = (types::ieee_floating | types::integers);
    static constexpr dtype_set out_types = (types::ieee_floating | types::integers);
    using attributes = shrink_attr;
    static constexpr double proxy_slope = 0.1;  // derivative is 0 inside [-lambd, lambd]
    template <class V>
    static V apply(V x, const attributes& a) {
        if constexpr (std::is_integral_v<V>) {
            // Integers compare and shift in double, then truncate and saturate to the type.
            const double d = static_cast<double>(x);
            if (d < -a.lambd) return cast_to<V>(d + a.bias);
            if (d > a.lambd) return cast_to<V>(d - a.bias);
            return V(0);
        } else {
            // In V itself, so that AD scalars keep the derivative 1 outside [-lambd, lambd]. Same values
            // as in double for f16/bf16/f32 (V = float): a float sum rounded from double is the float sum.
            if (x < V(-a.lambd)) return x + V(a.bias);
            if (x > V(a.lambd)) return x - V(a.bias);
            return V(0);
        }
    }
    static constexpr value_range range{-4.0, 4.0};
};
// Not differentiable: boolean output.
struct is_nan_fn {
    static constexpr std::string_view op_type = "IsNaN";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::floating;
    static constexpr dtype_set out_types = types::boolean;
    static constexpr dtype output_dtype = dtype::boolean;
    using attributes = no_attributes;
    template <class V>
    static bool apply(V x, const attributes&) { return std::isnan(x); }
};
struct is_inf_attr {
    std::int64_t detect_negative = 1;
    std::int64_t detect_positive = 1;
};
// Not differentiable: boolean output.
struct is_inf_fn {
    static constexpr std::string_view op_type = "IsInf";
    static constexpr int opset = 10;
    static constexpr dtype_set types = spec::dtypes_of(dtype::f32, dtype::f64);
    static constexpr dtype_set out_types = types::boolean;
    static constexpr dtype output_dtype = dtype::boolean;
    using attributes = is_inf_attr;
    template <class V>
    static bool apply(V x, const attributes& a) {
        return std::isinf(x) && ((x > V(0) && a.detect_positive != 0) || (x < V(0) && a.detect_negative != 0));
    }
};

}  // namespace unary

using Relu = unary_elementwise<unary::relu_fn>;
using Abs = unary_elementwise<unary::abs_fn>;
using Neg = unary_elementwise<unary::neg_fn>;
using Sign = unary_elementwise<unary::sign_fn>;
using Ceil = unary_elementwise<unary::ceil_fn>;
using Floor = unary_elementwise<unary::floor_fn>;
using Round = unary_elementwise<unary::round_fn>;
using Exp = unary_elementwise<unary::exp_fn>;
using Log = unary_elementwise<unary::log_fn>;
using Sqrt = unary_elementwise<unary::sqrt_fn>;
using Reciprocal = unary_elementwise<unary::reciprocal_fn>;
using Sigmoid = unary_elementwise<unary::sigmoid_fn>;
using Tanh = unary_elementwise<unary::tanh_fn>;
using Softplus = unary_elementwise<unary::softplus_fn>;
using Softsign = unary_elementwise<unary::softsign_fn>;
using Erf = unary_elementwise<unary::erf_fn>;
using Sin = unary_elementwise<unary::sin_fn>;
using Cos = unary_elementwise<unary::cos_fn>;
using Tan = unary_elementwise<unary::tan_fn>;
using Asin = unary_elementwise<unary::asin_fn>;
using Acos = unary_elementwise<unary::acos_fn>;
using Atan = unary_elementwise<unary::atan_fn>;
using Sinh = unary_elementwise<unary::sinh_fn>;
using Cosh = unary_elementwise<unary::cosh_fn>;
using Asinh = unary_elementwise<unary::asinh_fn>;
using Acosh = unary_elementwise<unary::acosh_fn>;
using Atanh = unary_elementwise<unary::atanh_fn>;
using Not = unary_elementwise<unary::not__fn>;
using Identity = unary_elementwise<unary::identity_fn>;
using LeakyRelu = unary_elementwise<unary::leaky_relu_fn>;
using Elu = unary_elementwise<unary::elu_fn>;
using Celu = unary_elementwise<unary::celu_fn>;
using Selu = unary_elementwise<unary::selu_fn>;
using HardSigmoid = unary_elementwise<unary::hard_sigmoid_fn>;
using HardSwish = unary_elementwise<unary::hard_swish_fn>;
using ThresholdedRelu = unary_elementwise<unary::thresholded_relu_fn>;
using Shrink = unary_elementwise<unary::shrink_fn>;
using IsNaN = unary_elementwise<unary::is_nan_fn>;
using IsInf = unary_elementwise<unary::is_inf_fn>;

/// Every op of this family, for the registry.
inline constexpr auto unary_ops =
    hana::tuple_t<Relu, Abs, Neg, Sign, Ceil, Floor, Round, Exp, Log, Sqrt, Reciprocal, Sigmoid, Tanh, Softplus,
                  Softsign, Erf, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Not,
                  Identity, LeakyRelu, Elu, Celu, Selu, HardSigmoid, HardSwish, ThresholdedRelu, Shrink, IsNaN,
                  IsInf>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::alpha_attr, alpha);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::elu_attr, alpha);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::selu_attr, alpha, gamma);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::hard_sigmoid_attr, alpha, beta);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::thresholded_relu_attr, alpha);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::shrink_attr, bias, lambd);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::is_inf_attr, detect_negative, detect_positive);
