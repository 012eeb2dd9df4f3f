// tensoracle: broadcast element-wise ops with two or more inputs: arithmetic,
// comparison and logic, Where, PRelu, Clip and Cast.
//
// Semantics chosen where ONNX leaves them open: integer Div and Mod by zero
// throw (no UB, no silent value); integer overflow wraps (two's complement);
// integer Div truncates toward zero (C, numpy's np.trunc(a / b) for ONNX);
// Mod with fmod=0 takes the divisor's sign, with fmod=1 the dividend's.
// Ops with floating outputs also run on AD scalars (run_real): the same
// kernels, with the scalar type as accumulator.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/broadcast.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace binary {
using spec::dtype_set;
namespace types = spec::types;
using spec::no_attributes;

/// How an op's output enclosure follows from its inputs' (spec::facts::corners):
/// Min keeps every input's "some element <= m", Max its "some element >= m".
enum class corner_kind : std::uint8_t { plain, min, max };

/// Exact integer arithmetic that wraps instead of overflowing (UB-free).
template <class V>
V wrap(std::int64_t v) {
    return static_cast<V>(v);
}
using ops::formula::wrapping_add;
using ops::formula::wrapping_mul;
using ops::formula::wrapping_sub;
}  // namespace binary

/// Two (or, with F::variadic, one or more) inputs broadcast together.
template <class F>
struct broadcast_elementwise {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = F::opset;
    using attributes = typename F::attributes;
    static constexpr bool variadic = requires { F::variadic; };
    static constexpr auto inputs = [] {
        if constexpr (variadic) {
            return std::array<spec::value_spec, 1>{{{"data_0", F::types, {}, "T", false, true}}};
        } else {
            return std::array<spec::value_spec, 2>{{{"A", F::types}, {"B", F::types}}};
        }
    }();
    static constexpr std::array<spec::value_spec, 1> outputs{{{"C", F::out_types, {}, "T1"}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    static std::vector<std::size_t> all_inputs(const spec::context& c) {
        std::vector<std::size_t> ids(c.input_count());
        for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i;
        return ids;
    }
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out;
        if (variadic) out.push_back({spec::expr(c.input_count()) >= 1, "at least one input"});
        auto b = detail::broadcast_constraints(c, all_inputs(c));
        out.insert(out.end(), b.begin(), b.end());
        if constexpr (requires { F::constraints(c); }) {
            auto extra = F::constraints(c);
            out.insert(out.end(), extra.begin(), extra.end());
        }
        return out;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) { return {detail::broadcast_shape(c, all_inputs(c))}; }
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        if constexpr (requires { F::output_dtype; }) {
            return {F::output_dtype};
        } else {
            return {c.input_dtype(0)};
        }
    }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        std::vector<std::size_t> ranks(rank + 1);
        for (std::size_t r = 0; r <= rank; ++r) ranks[r] = r;
        if constexpr (requires { F::output_dtype; }) {
            if (out != F::output_dtype) return {};
            return {{F::types.members(), ranks}, {F::types.members(), ranks}};
        } else {
            if (!F::types.contains(out)) return {};
            return {{{out}, ranks}, {{out}, ranks}};
        }
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return detail::domain_of<F>(); }

    /// The typed kernel on two arrays (numpy-style broadcasting).
    template <class T>
    static auto compute(const array<T>& a, const array<T>& b, const attributes& attrs = {}) {
        static_assert(spec::dtype_accepted<broadcast_elementwise, T>::value);
        return compute_n<T>({&a, &b}, attrs);
    }

    template <class T>
    static auto compute_n(const std::vector<const array<T>*>& in, const attributes& attrs) {
        using out_t = std::conditional_t<requires { F::output_dtype; }, bool, T>;
        std::vector<shape_type> shapes;
        std::vector<const T*> data;
        for (const auto* x : in) {
            shapes.emplace_back(x->shape().begin(), x->shape().end());
            data.push_back(x->data());
        }
        const auto out_shape = detail::broadcast_shapes(shapes, op_type);
        auto y = array<out_t>::from_shape(out_shape);
        compute_into<T>(data, shapes, out_shape, y.data(), attrs);
        return y;
    }

    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<F::types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            using out_t = std::conditional_t<requires { F::output_dtype; }, bool, T>;
            // Straight from the inputs' buffers into the output's: no typed copies.
            std::vector<shape_type> shapes;
            std::vector<const T*> data;
            for (std::size_t i = 0; i < c.input_count(); ++i) {
                shapes.push_back(c.input(i).shape());
                data.push_back(c.input(i).values<T>().data());
            }
            const auto out_shape = detail::broadcast_shapes(shapes, op_type);
            auto y = tensor::for_overwrite(dtype_of<out_t>, out_shape);
            compute_into<T>(data, shapes, out_shape, y.template values<out_t>().data(), a);
            return y;
        }));
    }

    /// The kernel on AD scalar S (docs/ADDING_AN_OP.md, "Derivatives").
    /// Comparisons and logic have none: their output is bool. Integer inputs
    /// give the placeholder.
    template <class S>
        requires(!requires { F::output_dtype; } && !(F::types & spec::types::floating).empty())
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return detail::single_output(compute_all<S>(x, spec::parse_attributes<attributes>(c.attributes(), op_type)));
    }
    static spec::hints hints() {
        spec::hints h;
        if constexpr (requires { F::range; }) {
            for (std::size_t i = 0; i < 4; ++i) h.range(i, F::range[0], F::range[1]);
        }
        if constexpr (requires { F::rhs_range; }) h.range(1, F::rhs_range[0], F::rhs_range[1]);
        if constexpr (requires { F::hints(h); }) F::hints(h);
        // Ops monotone in each input, or bilinear: the output's enclosure from the inputs' corners.
        if constexpr (requires { F::corner_facts; }) {
            h.facts([](std::span<const spec::value_facts> in, const spec::attribute_map&, std::span<const shape_type>) {
                return std::vector<spec::value_facts>{spec::facts::corners(
                    in, [](double a, double b) { return static_cast<double>(F::apply(a, b, attributes{})); },
                    F::corner_facts == binary::corner_kind::min, F::corner_facts == binary::corner_kind::max)};
            });
        }
        return h;
    }

private:
    /// Y = F(X0, X1, ...) over the broadcast of `shapes` into dst (out_shape's elements).
    template <class T, class Out>
    static void compute_into(const std::vector<const T*>& in, const std::vector<shape_type>& shapes,
                             const shape_type& out_shape, Out* dst, const attributes& attrs) {
        using acc = std::conditional_t<floating_element<T>, std::conditional_t<std::is_same_v<T, double>, double, float>, T>;
        detail::for_each_broadcast_run(shapes, out_shape, [&](std::size_t f, std::size_t len,
                                                               std::span<const std::size_t> base,
                                                               std::span<const std::size_t> step) {
            const T* p0 = in[0] + base[0];
            const std::size_t s0 = step[0];
            if constexpr (requires { F::output_dtype; }) {
                const T* p1 = in[1] + base[1];
                const std::size_t s1 = step[1];
                for (std::size_t i = 0; i < len; ++i) {
                    dst[f + i] = F::apply(static_cast<acc>(p0[i * s0]), static_cast<acc>(p1[i * s1]), attrs);
                }
            } else if (in.size() == 2) {  // the common case, without the variadic loop
                const T* p1 = in[1] + base[1];
                const std::size_t s1 = step[1];
                for (std::size_t i = 0; i < len; ++i) {
                    acc v = F::apply(static_cast<acc>(p0[i * s0]), static_cast<acc>(p1[i * s1]), attrs);
                    if constexpr (requires { F::finish(v, in.size()); }) v = F::finish(v, in.size());
                    dst[f + i] = value_cast<Out>(v);
                }
            } else {
                for (std::size_t i = 0; i < len; ++i) {
                    acc v = static_cast<acc>(p0[i * s0]);
                    for (std::size_t j = 1; j < in.size(); ++j) {
                        v = F::apply(v, static_cast<acc>(in[j][base[j] + i * step[j]]), attrs);
                    }
                    if constexpr (requires { F::finish(v, in.size()); }) v = F::finish(v, in.size());
                    dst[f + i] = value_cast<Out>(v);
                }
            }
        });
    }

    template <class T>
    static auto compute_all(const std::vector<array<T>>& arrays, const attributes& attrs) {
        std::vector<const array<T>*> ptrs;
        for (const auto& x : arrays) ptrs.push_back(&x);
        return compute_n<T>(ptrs, attrs);
    }
    static std::array<double, 2> rhs_range() {
        if constexpr (requires { F::rhs_range; }) {
            return F::rhs_range;
        } else {
            return {-4.0, 4.0};
        }
    }
};

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
#define TENSORACLE_BINARY(NAME, OPTYPE, OPSET, TYPES)        \
    struct NAME##_fn : formula::NAME {                        \
        static constexpr std::string_view op_type = OPTYPE;   \
        static constexpr int opset = OPSET;                   \
        static constexpr dtype_set types = TYPES;             \
        static constexpr dtype_set out_types = TYPES;         \
        using attributes = no_attributes;

TENSORACLE_BINARY(add, "Add", 14, types::numeric)
    static constexpr corner_kind corner_facts = corner_kind::plain;
};
TENSORACLE_BINARY(sub, "Sub", 14, types::numeric)
    static constexpr corner_kind corner_facts = corner_kind::plain;
    static void hints(spec::hints& h) { h.when_operands_equal(spec::value_facts::constant(0.0)); }
};
TENSORACLE_BINARY(mul, "Mul", 14, types::numeric)
    static constexpr corner_kind corner_facts = corner_kind::plain;
};
TENSORACLE_BINARY(div, "Div", 14, types::numeric)
    template <class V>
    static V apply(V a, V b, const attributes&) {
        if constexpr (std::is_integral_v<V>) {
            if (b == 0) throw error("Div", "integer division by zero");
            if (std::is_signed_v<V> && b == V(-1)) return wrapping_sub(V(0), a);  // INT_MIN / -1 wraps
            return static_cast<V>(a / b);
        } else {
            return formula::div::apply(a, b, attributes{});
        }
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::hinge_rule("|B| > 0", 1, [](double y) { return -std::fabs(y) + 1e-10; })};
    }
    static constexpr std::array<double, 2> rhs_range{1.0, 4.0};
    // 0 / y is 0 wherever y is not 0 (where it is, Div's own rule fails); so is x / x 1.
    static void hints(spec::hints& h) {
        h.when_operands_equal(spec::value_facts::constant(1.0));
        h.facts([](std::span<const spec::value_facts> in, const spec::attribute_map&, std::span<const shape_type>) {
            const bool zero = !in.empty() && in[0].lo == 0.0 && in[0].hi == 0.0;
            return std::vector<spec::value_facts>{zero ? spec::value_facts::constant(0.0) : spec::value_facts{}};
        });
    }
};
struct mod_attr {
    std::int64_t fmod = 0;
};
struct mod_fn {
    static constexpr std::string_view op_type = "Mod";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::numeric;
    static constexpr dtype_set out_types = types::numeric;
    using attributes = mod_attr;
    template <class V>
    static V apply(V a, V b, const attributes& at) {
        if constexpr (std::is_integral_v<V>) {
            if (b == 0) throw error("Mod", "integer modulo by zero");
            if (std::is_signed_v<V> && b == V(-1)) return V(0);
            V r = static_cast<V>(a % b);
            if (at.fmod == 0 && r != 0 && ((r < 0) != (b < 0))) r = static_cast<V>(r + b);
            return r;
        } else {
            if (at.fmod == 0) throw error("Mod", "floating-point inputs require fmod=1");
            return formula::fmod::apply(a, b, at);  // d/da = 1, d/db = -trunc(a/b)
        }
    }
    static constexpr std::array<double, 2> rhs_range{1.0, 5.0};
    static void hints(spec::hints& h) { h.flag("fmod"); }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        return {{c.attr("fmod") == 1, "floating-point inputs require fmod=1"}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::hinge_rule("|B| > 0", 1, [](double y) { return -std::fabs(y) + 1e-10; })};
    }
};
TENSORACLE_BINARY(max, "Max", 13, types::numeric)
    static constexpr corner_kind corner_facts = corner_kind::max;
    static constexpr bool variadic = true;
};
TENSORACLE_BINARY(min, "Min", 13, types::numeric)
    static constexpr corner_kind corner_facts = corner_kind::min;
    static constexpr bool variadic = true;
};
TENSORACLE_BINARY(sum, "Sum", 13, types::floating)
    static constexpr corner_kind corner_facts = corner_kind::plain;
    static constexpr bool variadic = true;
};
TENSORACLE_BINARY(mean, "Mean", 13, types::floating)
    static constexpr bool variadic = true;
    template <class V>
    static V finish(V v, std::size_t n) { return v / static_cast<V>(n); }
};
#undef TENSORACLE_BINARY

// Not differentiable: comparisons and logic have boolean outputs.
#define TENSORACLE_PREDICATE(NAME, OPTYPE, OPSET, TYPES, EXPR) \
    struct NAME##_fn {                                          \
        static constexpr std::string_view op_type = OPTYPE;     \
        static constexpr int opset = OPSET;                     \
        static constexpr dtype_set types = TYPES;               \
        static constexpr dtype_set out_types = types::boolean;  \
        static constexpr dtype output_dtype = dtype::boolean;   \
        using attributes = no_attributes;                       \
        template <class V>                                      \
        static bool apply(V a, V b, const attributes&) {        \
            return EXPR;                                        \
        }                                                       \
    };
TENSORACLE_PREDICATE(equal, "Equal", 13, types::all, a == b)
TENSORACLE_PREDICATE(less, "Less", 13, types::numeric, a < b)
TENSORACLE_PREDICATE(greater, "Greater", 13, types::numeric, a > b)
TENSORACLE_PREDICATE(less_or_equal, "LessOrEqual", 16, types::numeric, a <= b)
TENSORACLE_PREDICATE(greater_or_equal, "GreaterOrEqual", 16, types::numeric, a >= b)
TENSORACLE_PREDICATE(logical_and, "And", 7, types::boolean, a && b)
TENSORACLE_PREDICATE(logical_or, "Or", 7, types::boolean, a || b)
TENSORACLE_PREDICATE(logical_xor, "Xor", 7, types::boolean, a != b)
#undef TENSORACLE_PREDICATE

}  // namespace binary

using Add = broadcast_elementwise<binary::add_fn>;
using Sub = broadcast_elementwise<binary::sub_fn>;
using Mul = broadcast_elementwise<binary::mul_fn>;
using Div = broadcast_elementwise<binary::div_fn>;
using Mod = broadcast_elementwise<binary::mod_fn>;
using Max = broadcast_elementwise<binary::max_fn>;
using Min = broadcast_elementwise<binary::min_fn>;
using Sum = broadcast_elementwise<binary::sum_fn>;
using Mean = broadcast_elementwise<binary::mean_fn>;
using Equal = broadcast_elementwise<binary::equal_fn>;
using Less = broadcast_elementwise<binary::less_fn>;
using Greater = broadcast_elementwise<binary::greater_fn>;
using LessOrEqual = broadcast_elementwise<binary::less_or_equal_fn>;
using GreaterOrEqual = broadcast_elementwise<binary::greater_or_equal_fn>;
using And = broadcast_elementwise<binary::logical_and_fn>;
using Or = broadcast_elementwise<binary::logical_or_fn>;
using Xor = broadcast_elementwise<binary::logical_xor_fn>;

/// Pow(X, Y): X and Y broadcast; Y may have another numeric type (ONNX T1).
/// Same-type operands compute in the accumulator type; mixed ones in double,
/// rounded once to X's type (numpy's promotion, then ONNX's cast to T). On AD
/// scalars both operands are the scalar type; an integer Y is a constant.
struct Pow {
    static constexpr std::string_view op_type = "Pow";
    static constexpr int opset = 15;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::types::floating | spec::types::indices;
    static constexpr spec::dtype_set exponent_types = spec::types::numeric;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"X", types}, {"Y", exponent_types, {}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Z", types}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) { return detail::broadcast_constraints(c, {0, 1}); }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {detail::broadcast_shape(c, {0, 1})}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        std::vector<std::size_t> ranks(rank + 1);
        for (std::size_t r = 0; r <= rank; ++r) ranks[r] = r;
        return {{{out}, ranks}, {exponent_types.members(), ranks}};
    }
    /// The bound on Y * log(X): NNSmith's 40 (keeps later ops' values
    /// moderate), or the log of the largest value X's dtype holds where that
    /// is less (f16 overflows at e^11.1, int32 at e^21.5).
    static double log_limit(dtype d) {
        const auto& i = info(d);
        const double top = i.is_floating ? detail::max_finite(d) : std::ldexp(1.0, i.is_signed ? i.bits - 1 : i.bits) - 1.0;
        return std::min(40.0, std::log(top));
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) {
        // NNSmith, Table 1: X > 0 and Y * log(X) <= 40 keep Pow finite and real.
        // An integer base has no NaN to avoid but must not leave its dtype:
        // 0 is fine unless Y < 0 (a pole), negative bases are left out (a
        // fractional Y makes them NaN, which the cast back makes arbitrary).
        spec::domain_rule zero_base{
            "X = 0 needs Y >= 0 (integer X)",
            [](std::span<const tensor> in) {
                double loss = 0.0;
                if (info(in[0].element_dtype()).is_floating) return loss;
                for_each_pair(in, [&](std::size_t, std::size_t, double x, double y) {
                    if (x == 0.0 && y < 0.0) loss += -y;
                });
                return loss;
            },
            [](std::span<const tensor> in) {  // d/dy = -1 where violated
                std::vector<tensor> g(2);
                if (info(in[0].element_dtype()).is_floating) return g;
                auto gy = array<double>::from_shape(in[1].shape());
                gy.fill(0.0);
                for_each_pair(in, [&](std::size_t, std::size_t j, double x, double y) {
                    if (x == 0.0 && y < 0.0) gy.data()[j] -= 1.0;
                });
                g[1] = tensor(gy);
                return g;
            }};
        zero_base.input_dtypes = types & spec::types::integers;
        return {detail::hinge_rule_for(types & spec::types::floating, "X > 0 (floating X)", 0, [](double x) { return -x + 1e-10; }),
                detail::hinge_rule_for(types & spec::types::integers, "X >= 0 (integer X)", 0, [](double x) { return -x; }),
                std::move(zero_base),
                {"Y * log(X) <= min(40, log of X's largest value)",
                 [](std::span<const tensor> in) {
                     const double limit = log_limit(in[0].element_dtype());
                     double loss = 0.0;
                     for_each_pair(in, [&](std::size_t, std::size_t, double x, double y) {
                         const double h = x > 0 ? y * std::log(x) - limit : 0.0;
                         loss += h > 0 ? h : 0.0;
                     });
                     return loss;
                 },
                 [](std::span<const tensor> in) {  // d/dx = y / x, d/dy = log x where violated
                     const double limit = log_limit(in[0].element_dtype());
                     auto gx = array<double>::from_shape(in[0].shape()), gy = array<double>::from_shape(in[1].shape());
                     gx.fill(0.0);
                     gy.fill(0.0);
                     for_each_pair(in, [&](std::size_t i, std::size_t j, double x, double y) {
                         if (!(x > 0) || !(y * std::log(x) - limit > 0)) return;
                         gx.data()[i] += y / x;
                         gy.data()[j] += std::log(x);
                     });
                     return std::vector<tensor>{tensor(gx), tensor(gy)};
                 }}};
    }
    /// f(offset of X, offset of Y, x, y) over the broadcast pairs of X and Y.
    template <class F>
    static void for_each_pair(std::span<const tensor> in, F f) {
        const auto a = in[0].to<double>(), b = in[1].to<double>();
        std::vector<shape_type> shapes{in[0].shape(), in[1].shape()};
        const auto out = detail::broadcast_shapes(shapes, "Pow domain");
        const auto off = detail::broadcast_offsets(shapes, out);
        for (std::size_t k = 0; k < off[0].size(); ++k) f(off[0][k], off[1][k], a.data()[off[0][k]], b.data()[off[1][k]]);
    }

    template <class T, class E>
    static T apply(T x, E y) {
        if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
            // Integer power by squaring with wrap-around; negative exponents give 0 (or +-1 for +-1 bases).
            if (y < 0) return x == 1 ? T(1) : (x == -1 ? ((y % 2 == 0) ? T(1) : T(-1)) : T(0));
            T result = 1, base = x;
            for (auto e = static_cast<std::uint64_t>(y); e != 0; e >>= 1) {
                if (e & 1u) result = binary::wrapping_mul(result, base);
                base = binary::wrapping_mul(base, base);
            }
            return result;
        } else if constexpr (std::is_same_v<T, E> && floating_element<T>) {
            using acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
            return value_cast<T>(binary::formula::pow::apply(static_cast<acc>(x), static_cast<acc>(y), 0));
        } else if constexpr (ad_scalar<T>) {
            // A constant exponent makes no log(x) term, so x <= 0 keeps a finite derivative.
            return math::pow(x, value_cast<T>(y));
        } else {
            return value_cast<T>(std::pow(value_cast<double>(x), value_cast<double>(y)));
        }
    }

    template <class T, class E>
    static array<T> compute(const array<T>& x, const array<E>& y) {
        static_assert(spec::dtype_accepted<Pow, T>::value);
        std::vector<shape_type> shapes{shape_type(x.shape().begin(), x.shape().end()),
                                       shape_type(y.shape().begin(), y.shape().end())};
        const auto out_shape = detail::broadcast_shapes(shapes, op_type);
        const auto off = detail::broadcast_offsets(shapes, out_shape);
        auto z = array<T>::from_shape(out_shape);
        for (std::size_t f = 0; f < z.size(); ++f) z.data()[f] = apply(x.data()[off[0][f]], y.data()[off[1][f]]);
        return z;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return detail::dispatch<exponent_types>(c.input_dtype(1), op_type, [&](auto e) {
                using E = typename decltype(e)::type;
                return tensor(compute<T, E>(c.input(0).as_array<T>(), c.input(1).as_array<E>()));
            });
        }));
    }
    /// Y counts only when floating, and only when X is (an integer X makes an integer Z).
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        if (!info(c.input_dtype(1)).is_floating) return {0};
        return {0, 1};
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        if (info(c.input_dtype(1)).is_floating) return detail::single_output(compute<S, S>(x[0], x[1]));
        // Integer exponents are exact in double, as in run()'s mixed-type path.
        return detail::single_output(compute<S, double>(x[0], c.input(1).to<double>()));
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.range(0, 0.5, 3.0).range(1, -2.0, 3.0); }
};

/// Where(condition, X, Y): X where condition holds, else Y; all three broadcast.
struct Where {
    static constexpr std::string_view op_type = "Where";
    static constexpr int opset = 16;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"condition", spec::types::boolean, {}, "B"}, {"X", spec::types::all}, {"Y", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return detail::broadcast_constraints(c, {0, 1, 2});
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {detail::broadcast_shape(c, {0, 1, 2})}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(1)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        std::vector<std::size_t> ranks(rank + 1);
        for (std::size_t r = 0; r <= rank; ++r) ranks[r] = r;
        return {{{dtype::boolean}, ranks}, {{out}, ranks}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<bool>& cond, const array<T>& x, const array<T>& y) {
        std::vector<shape_type> shapes{shape_type(cond.shape().begin(), cond.shape().end()),
                                       shape_type(x.shape().begin(), x.shape().end()),
                                       shape_type(y.shape().begin(), y.shape().end())};
        const auto out_shape = detail::broadcast_shapes(shapes, op_type);
        auto out = array<T>::from_shape(out_shape);
        // Runs of output elements whose inputs advance by fixed steps: no offset table.
        detail::for_each_broadcast_run(shapes, out_shape, [&](std::size_t f, std::size_t len,
                                                              std::span<const std::size_t> base,
                                                              std::span<const std::size_t> step) {
            for (std::size_t i = 0; i < len; ++i) {
                out.data()[f + i] = cond.data()[base[0] + i * step[0]] ? x.data()[base[1] + i * step[1]]
                                                                       : y.data()[base[2] + i * step[2]];
            }
        });
        return out;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto cond = c.input(0).as_array<bool>();
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(1), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(cond, c.input(1).as_array<T>(), c.input(2).as_array<T>()));
        }));
    }
    /// X and Y are differentiable when floating; the condition is bool.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(1)).is_floating) return {array<S>{}};
        return detail::single_output(compute<S>(c.input(0).as_array<bool>(), x[1], x[2]));
    }
};

/// PRelu(X, slope): slope broadcasts to X (unidirectionally).
struct PRelu {
    static constexpr std::string_view op_type = "PRelu";
    static constexpr int opset = 16;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::types::floating | spec::types::indices;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"X", types}, {"slope", types}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out{{spec::expr(c.rank(1)) <= spec::expr(c.rank(0)), "slope rank <= X rank"}};
        const std::size_t r0 = c.rank(0), r1 = c.rank(1);
        for (std::size_t k = 0; k < r1 && r1 <= r0; ++k) {
            const auto s = c.dim(1, k), x = c.dim(0, r0 - r1 + k);
            out.push_back({s == x || s == 1, "slope broadcasts to X at axis " + std::to_string(r0 - r1 + k)});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        std::vector<std::size_t> ranks(rank + 1);
        for (std::size_t r = 0; r <= rank; ++r) ranks[r] = r;
        return {{{out}, {rank}}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, const array<T>& slope) {
        static_assert(spec::dtype_accepted<PRelu, T>::value);
        std::vector<shape_type> shapes{shape_type(x.shape().begin(), x.shape().end()),
                                       shape_type(slope.shape().begin(), slope.shape().end())};
        const auto off = detail::broadcast_offsets(shapes, shapes[0]);
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t f = 0; f < y.size(); ++f) {
            const T v = x.data()[f];
            if (!(v < T(0))) {
                y.data()[f] = v;
            } else if constexpr (ad_scalar<T>) {
                y.data()[f] = slope.data()[off[1][f]] * v;  // in the scalar type: both factors carry derivatives
            } else {
                y.data()[f] = value_cast<T>(value_cast<double>(slope.data()[off[1][f]]) * value_cast<double>(v));
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>()));
        }));
    }
    /// X and slope are both differentiable (floating T); integer T gives the placeholder.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return detail::single_output(compute<S>(x[0], x[1]));
    }
    // Facts: X >= 0 passes unchanged (the slope never applies); otherwise nothing known.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().weights({1}).range(1, 0.0, 1.0).facts(
            [](std::span<const spec::value_facts> in, const spec::attribute_map&, std::span<const shape_type>) {
                return std::vector<spec::value_facts>{!in.empty() && in[0].lo >= 0.0 ? in[0] : spec::value_facts{}};
            });
    }
};

/// Clip(input, min?, max?): min and max are optional scalars.
struct Clip {
    static constexpr std::string_view op_type = "Clip";
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::types::numeric;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"input", types}, {"min", types, {0, 1}, "T", true}, {"max", types, {0, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", types}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out;
        for (std::size_t i = 1; i < 3; ++i) {
            if (!c.has_input(i) || c.rank(i) == 0) continue;
            out.push_back({c.dim(i, 0) == 1, "min and max are single values"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        return {{{out}, {rank}}, {{out}, {0, 1}}, {{out}, {0, 1}}};  // min, max: a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, std::optional<T> lo, std::optional<T> hi) {
        static_assert(spec::dtype_accepted<Clip, T>::value);
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t f = 0; f < y.size(); ++f) {
            T v = x.data()[f];
            if (lo && v < *lo) v = *lo;
            if (hi && *hi < v) v = *hi;
            y.data()[f] = v;
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            auto bound = [&](std::size_t i) -> std::optional<T> {
                if (!c.has_input(i)) return std::nullopt;
                return c.input(i).values<T>()[0];
            };
            return tensor(compute<T>(c.input(0).as_array<T>(), bound(1), bound(2)));
        }));
    }
    /// Input, min and max (when present) are differentiable: a clipped element takes the bound's derivative.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        auto bound = [&](std::size_t i) -> std::optional<S> {
            if (!c.has_input(i)) return std::nullopt;
            return x[i].data()[0];
        };
        return detail::single_output(compute<S>(x[0], bound(1), bound(2)));
    }
    // Facts: min(max(x, lo), hi) is monotone in each input (an absent bound counts as unknown).
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.weights({1, 2}).range(0, -5, 5).range(1, -3, -1).range(2, 1, 3).facts(
            [](std::span<const spec::value_facts> in, const spec::attribute_map&, std::span<const shape_type>) {
                if (in.empty()) return std::vector<spec::value_facts>{spec::value_facts{}};
                if (in.size() == 1) return std::vector<spec::value_facts>{in[0]};  // no bounds: X itself
                const spec::value_facts none;
                const auto& a = in.size() > 1 ? in[1] : none;
                const auto& b = in.size() > 2 ? in[2] : none;
                auto y = spec::value_facts::within(std::min(std::max(in[0].lo, a.lo), b.lo),
                                                   std::min(std::max(in[0].hi, a.hi), b.hi));
                // A forced value no bound can reach stays (Clip of Hardmax's 0 to [-1, 0.5] is still 0).
                const double min_hi = in.size() > 1 ? a.hi : -std::numeric_limits<double>::infinity();
                const double max_lo = in.size() > 2 ? b.lo : std::numeric_limits<double>::infinity();
                for (const double v : in[0].forced) {
                    if (v >= min_hi && v <= max_lo) y.force(v);
                }
                y.integral = in[0].integral && (in.size() < 2 || a.integral) && (in.size() < 3 || b.integral);
                return std::vector<spec::value_facts>{y};
            });
    }
};

struct cast_attr {
    std::int64_t to = 1;
    static constexpr std::array<std::string_view, 1> required{"to"};
};

/// Cast(input) to the dtype named by attribute `to` (value_cast semantics:
/// float->int truncates and saturates, NaN->0; int->int wraps). ONNX leaves a
/// float outside the integer target's range undefined: the domain keeps it in.
struct Cast {
    static constexpr std::string_view op_type = "Cast";
    static constexpr int opset = 13;
    using attributes = cast_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all, {}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {}, "T2"}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        return {dtype_from_onnx(static_cast<int>(spec::parse_attributes<attributes>(c.attributes(), op_type).to))};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype, std::size_t rank) {
        return {{spec::types::all.members(), {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& a) {
        const auto to = dtype_from_onnx(static_cast<int>(spec::parse_attributes<attributes>(a, op_type).to));
        auto rule = detail::cast_range_rule([to](std::span<const tensor>) { return to; });
        // For the generator: the range, where it knows the input is floating (integer inputs wrap, no rule).
        if (const auto b = detail::integer_cast_bounds(to)) {
            rule.elementwise_input = 0;
            rule.elementwise_at_limit = [lo = b->first, hi = b->second](double x, double) { return std::max(x - hi, lo - x); };
        }
        return {rule};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return {c.input(0).cast(output_dtypes(c)[0])}; }
    /// Only float -> float casts have a derivative (1: the cast is the identity up to rounding).
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (info(c.input_dtype(0)).is_floating && info(output_dtypes(c)[0]).is_floating) return {0};
        return {};
    }
    /// float -> float: the input plus the constant rounding error, so that values are run()'s and the
    /// derivative is 1. Integer or bool -> float: constants. -> integer or bool: the placeholder.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const dtype to = output_dtypes(c)[0];
        if (!info(to).is_floating) return {array<S>{}};
        const auto rounded = c.input(0).cast(to).to<double>();
        auto y = array<S>::from_shape(rounded.shape());
        for (std::size_t i = 0; i < y.size(); ++i) {
            const double r = rounded.data()[i];
            if (!info(c.input_dtype(0)).is_floating) {
                y.data()[i] = value_cast<S>(r);
                continue;
            }
            const S& v = x[0].data()[i];
            const double p = static_cast<double>(primal(v));
            // r - p is exact (Sterbenz: r is p rounded); equal values, infinities and NaN pass v unchanged.
            y.data()[i] = (r == p || std::isnan(r)) ? v : v + value_cast<S>(r - p);
        }
        return {y};
    }
    // Facts: to a floating dtype they carry over (0 and 1 stay 0 and 1; ranges hold
    // up to rounding); to an integer one they are truncated ([0.2, 0.8] becomes 0);
    // to bool, x != 0. The generator narrows them to the target dtype's range.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(cast_facts).dtype_attribute("to").range(0, -100, 100);
    }
    static std::vector<spec::value_facts> cast_facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                     std::span<const shape_type>) {
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        const auto to = dtype_from_onnx(static_cast<int>(spec::parse_attributes<attributes>(attrs, op_type).to));
        if (info(to).is_floating) return {x};
        if (to == dtype::boolean) return {spec::facts::image(x, [](double v) { return v != 0.0 ? 1.0 : 0.0; })};
        return {spec::facts::image(x, [](double v) { return std::trunc(v); })};
    }
};

inline constexpr auto binary_ops =
    hana::tuple_t<Add, Sub, Mul, Div, Pow, Mod, Max, Min, Sum, Mean, Equal, Less, Greater, LessOrEqual,
                  GreaterOrEqual, And, Or, Xor, Where, PRelu, Clip, Cast>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::binary::mod_attr, fmod);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::cast_attr, to);
