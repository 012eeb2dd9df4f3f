// tensoracle: what every element-wise unary op of ops/unary/ is built from: unary_elementwise<F>
// (the full spec from a formula struct F), value_range (sampling ranges), the domain-rule helper
// unary::rule and unary::eps; and the adaptation of elu_attr, shared by Elu and Celu.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
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
struct unary_elementwise : spec::shape_of_input<0>, detail::formula_output_dtypes<F> {
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

}  // namespace unary

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::elu_attr, alpha);
