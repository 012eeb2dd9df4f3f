// tensoracle: reductions, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax and
// normalizations (LayerNormalization, BatchNormalization, InstanceNormalization,
// LpNormalization).
//
// Semantics chosen where ONNX leaves them open:
// - Axes: negative axes count from the end; out-of-range or repeated axes are
//   constraint violations (and a shape_error from the typed kernels).
// - `axes` of the Reduce* ops: the attribute form (ReduceSum-11, the others up
//   to opset 17) is accepted by every op; ReduceSum also takes the opset-13
//   optional int64 input. Giving both is a constraint violation. An empty or
//   absent list reduces over every axis, except that ReduceSum with
//   noop_with_empty_axes=1 then returns the input unchanged (keepdims ignored).
// - Empty reductions: Sum, L1, L2, SumSquare give 0; Prod gives 1; Mean gives
//   NaN (0/0); Max gives -inf (integers: the type's lowest value), Min gives
//   +inf (integers: the type's max), as ONNX-18 documents; LogSum and
//   LogSumExp give log(0) = -inf. ArgMax/ArgMin over an empty axis are
//   constraint violations (there is no index to return).
// - NaN: ReduceMax/ReduceMin propagate NaN (numpy maximum.reduce); ArgMax,
//   ArgMin and Hardmax treat NaN as the extreme value (numpy argmax/argmin:
//   the first NaN wins, the last one with select_last_index=1).
// - Integers: ReduceSum/Prod/L1/SumSquare (int32, int64) and ReduceMax/Min
//   (int8, uint8, int32, int64) accumulate in int64 with wrap-around and wrap
//   once more to the element width (two's complement, no UB). ReduceMean, L2,
//   LogSum and LogSumExp are floating-only here: ONNX lists int32/int64 for
//   them but leaves the rounding of the integer result unspecified.
// - Precision: float accumulation for f16/bf16/f32, double for f64, one
//   rounding to the element type at the end. LayerNormalization's stash_type
//   selects the dtype of Mean/InvStdDev (1: float, 16: bfloat16); the
//   computation itself uses the accumulator above (double for f64 inputs),
//   i.e. at least the stash precision.
// - ReduceLogSumExp and Softmax/LogSoftmax subtract the maximum before exp;
//   this is value-preserving in real arithmetic (see the kernels).
// - BatchNormalization: inference mode only (training_mode=1 throws
//   unsupported_error); momentum is accepted and ignored. X has rank >= 2 (N, C, ...).
// - InstanceNormalization: X has rank >= 3 (N, C, D1, ...); statistics per
//   (n, c) over D1..Dk, population variance.
// - LayerNormalization: Scale and B broadcast unidirectionally to the
//   normalized shape X.shape[axis:] (right-aligned, dims equal or 1).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/broadcast.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/reduce_util.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
using spec::dtype_set;
namespace types = spec::types;

struct reduce_attr {
    std::optional<std::vector<std::int64_t>> axes;
    std::int64_t keepdims = 1;
};
struct reduce_sum_attr {
    std::optional<std::vector<std::int64_t>> axes;
    std::int64_t keepdims = 1;
    std::int64_t noop_with_empty_axes = 0;
};

using tensoracle::is_nan;

/// For ArgMax/ArgMin/Hardmax: does candidate v beat (or, with `ties`, tie)
/// the current best b? NaN is the extreme value either way.
template <bool Max, class T>
bool replaces(const T& v, const T& b, bool ties) {
    if (is_nan(b)) return ties && is_nan(v);
    if (is_nan(v)) return true;
    if constexpr (Max) {
        return v > b || (ties && v == b);
    } else {
        return v < b || (ties && v == b);
    }
}

/// The value of a scalar as a constant of its own type (no derivative parts).
/// The max shifts of log-sum-exp and softmax use it: any constant shift c gives
/// the same function (exp(a - c) = exp(a) / exp(c) cancels), so its derivative
/// is exactly the unshifted one, to every order; a shift that carried the
/// derivative of the maximum would cancel only up to rounding.
template <class A>
A constant_of(const A& m) {
    if constexpr (ad_scalar<A>) {
        return A(primal(m));
    } else {
        return m;
    }
}

/// Stable log(sum(exp(v))): with m = max(v), log(sum(exp(v))) = m + log(sum(exp(v - m)))
/// exactly in real arithmetic (exp(a - m) = exp(a) / exp(m)), and exp(v - m) <= 1
/// cannot overflow. Empty or all -inf: -inf (log 0); a NaN or +inf: NaN or +inf.
template <class A>
A log_sum_exp(std::span<const A> v) {
    A m = -std::numeric_limits<A>::infinity();
    for (const A& x : v) {
        if (math::isnan(x)) return x;
        m = std::max(m, x);
    }
    if (math::isinf(m)) return m;  // -inf: every term is exp(-inf) = 0; +inf: the sum is +inf
    m = constant_of(m);
    A s = 0;
    for (const A& x : v) s += math::exp(x - m);
    return m + math::log(s);
}

/// Partials of a selecting reduction, walked as its reduce() walks: 1 at the
/// element it returns (the first NaN, else the last element `better` than the
/// running value, which starts at `init`), 0 elsewhere; all 0 when none is
/// taken (the result is then `init`, a constant).
template <class V, class Better>
void select_partials(std::span<const V> v, std::span<V> d, V init, Better better) {
    std::fill(d.begin(), d.end(), V(0));
    std::size_t at = v.size();
    V m = init;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (std::isnan(v[i])) {
            at = i;
            break;
        }
        if (better(v[i], m)) {
            m = v[i];
            at = i;
        }
    }
    if (at < v.size()) d[at] = V(1);
}

/// What a * x + b holds (a > 0) where x holds `x`: a constant stays one. A
/// reduction's value facts (the generator sizes groups from the input and
/// output shapes): a sum of n elements holding `x` is affine_facts(x, n, 0).
inline spec::value_facts affine_facts(const spec::value_facts& x, double a, double b) {
    if (x.lo == x.hi && std::isfinite(x.lo)) return spec::value_facts::constant(a * x.lo + b);
    return spec::value_facts::within(a * x.lo + b, a * x.hi + b);
}
inline spec::value_facts sum_facts(const spec::value_facts& e, double n) { return affine_facts(e, n, 0.0); }
inline spec::value_facts square_facts(const spec::value_facts& x) {
    return spec::facts::image(x, [](double v) { return v * v; });
}

#define TENSORACLE_REDUCE(NAME, OPTYPE, TYPES)               \
    struct NAME##_fn {                                        \
        static constexpr std::string_view op_type = OPTYPE;  \
        static constexpr int opset = 13;                      \
        static constexpr dtype_set types = TYPES;

inline constexpr dtype_set sum_types = types::floating | types::indices;
inline constexpr dtype_set minmax_types = types::floating | spec::dtypes_of(dtype::i8, dtype::u8, dtype::i32, dtype::i64);

// reduced = sum(x)
TENSORACLE_REDUCE(sum, "ReduceSum", sum_types)
    static constexpr bool axes_input = true;
    static spec::value_facts group_facts(const spec::value_facts& x, double n) { return sum_facts(x, n); }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s = detail::acc_add(s, x);
        return s;
    }
    /// d reduced / d v[i], for the op's own VJP (reduce_op::vjp).
    template <class V>
    static void partials(std::span<const V>, std::span<V> d) {
        std::fill(d.begin(), d.end(), V(1));
    }
};
// reduced = sum(x) / count (empty: 0 / 0 = NaN)
TENSORACLE_REDUCE(mean, "ReduceMean", sum_types)
    /// Inside the input's range (not integral: a mean of integers need not be one).
    static spec::value_facts group_facts(const spec::value_facts& x, double) { return affine_facts(x, 1.0, 0.0); }
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s += x;
        return s / static_cast<A>(v.size());
    }
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        std::fill(d.begin(), d.end(), V(1) / static_cast<V>(v.size()));
    }
};
// reduced = max(x) (empty: -inf / lowest; NaN propagates)
TENSORACLE_REDUCE(max, "ReduceMax", minmax_types)
    static constexpr bool within_input = true;
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A m;
        if constexpr (std::is_integral_v<A>) {
            m = static_cast<A>(std::numeric_limits<T>::lowest());
        } else {
            m = -std::numeric_limits<A>::infinity();
        }
        for (const A& x : v) {
            if constexpr (!std::is_integral_v<A>) {
                if (math::isnan(x)) return x;
            }
            m = x > m ? x : m;  // a tie keeps the earlier element: the result carries its derivative
        }
        return m;
    }
    /// 1 at the element reduce() returns (the first NaN, else the first maximum), 0 elsewhere.
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        select_partials(v, d, -std::numeric_limits<V>::infinity(), [](const V& x, const V& m) { return x > m; });
    }
};
// reduced = min(x) (empty: +inf / max; NaN propagates)
TENSORACLE_REDUCE(min, "ReduceMin", minmax_types)
    static constexpr bool within_input = true;
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A m;
        if constexpr (std::is_integral_v<A>) {
            m = static_cast<A>(std::numeric_limits<T>::max());
        } else {
            m = std::numeric_limits<A>::infinity();
        }
        for (const A& x : v) {
            if constexpr (!std::is_integral_v<A>) {
                if (math::isnan(x)) return x;
            }
            m = x < m ? x : m;
        }
        return m;
    }
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        select_partials(v, d, std::numeric_limits<V>::infinity(), [](const V& x, const V& m) { return x < m; });
    }
};
// reduced = prod(x) (empty: 1)
TENSORACLE_REDUCE(prod, "ReduceProd", sum_types)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A p{1};
        for (const A& x : v) p = detail::acc_mul(p, x);
        return p;
    }
    static constexpr std::array<double, 2> range{-1.5, 1.5};
    static constexpr std::size_t max_dim = 3;  // groups of at most 27: |prod| <= 1.5^27 < f16 max
    /// Its finiteness rule measures sum(log |x|) (reduce_op::domain): a product of thousands of
    /// factors overflows even double, and a loss of "1 per infinite group" has no slope to follow.
    static constexpr bool multiplicative = true;
};
// reduced = sum(|x|)
TENSORACLE_REDUCE(l1, "ReduceL1", sum_types)
    static spec::value_facts group_facts(const spec::value_facts& x, double n) {
        return sum_facts(spec::facts::image(x, [](double v) { return std::fabs(v); }), n);
    }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s = detail::acc_add(s, detail::acc_abs(x));
        return s;
    }
};
// reduced = sqrt(sum(x^2))
TENSORACLE_REDUCE(l2, "ReduceL2", sum_types)
    static spec::value_facts group_facts(const spec::value_facts& x, double n) {
        return spec::facts::image(sum_facts(square_facts(x), n), [](double v) { return std::sqrt(v); });
    }
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        // An empty group is the constant 0: sqrt's derivative at 0 (1 / 0) would
        // turn a zero tangent into NaN although nothing depends on an input.
        if (v.empty()) return A{0};
        A s{0};
        for (const A& x : v) s += x * x;
        return math::sqrt(s);
    }
    static std::vector<std::pair<std::string, double (*)(std::span<const double>, dtype)>> rules() {
        // The sum of squares is formed before the root: it must not overflow the
        // accumulator, and its root must fit the element type.
        return {{"sum(X^2) <= min(max finite of the accumulator, max finite^2)", [](std::span<const double> g, dtype d) {
                     double s = 0;
                     for (const double x : g) s += x * x;
                     const double acc_max = d == dtype::f64 ? detail::max_finite(dtype::f64) : detail::max_finite(dtype::f32);
                     const double m = detail::max_finite(d);
                     return s - std::min(acc_max, m * m);
                 }}};
    }
};
// reduced = sum(x^2)
TENSORACLE_REDUCE(sum_square, "ReduceSumSquare", sum_types)
    static spec::value_facts group_facts(const spec::value_facts& x, double n) { return sum_facts(square_facts(x), n); }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s = detail::acc_add(s, detail::acc_mul(x, x));
        return s;
    }
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        for (std::size_t i = 0; i < v.size(); ++i) d[i] = v[i] + v[i];
    }
};
// reduced = log(sum(x)) (empty: -inf)
TENSORACLE_REDUCE(log_sum, "ReduceLogSum", sum_types)
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    static spec::value_facts group_facts(const spec::value_facts& x, double n) {
        return spec::facts::image(sum_facts(x, n), [](double v) { return std::log(v); });
    }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s += x;
        return math::log(s);
    }
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        V s{0};
        for (const V& x : v) s += x;
        std::fill(d.begin(), d.end(), V(1) / s);
    }
    static std::vector<std::pair<std::string, double (*)(std::span<const double>, dtype)>> rules() {
        return {{"sum(X) > 0 over each reduced group", [](std::span<const double> g, dtype) {
                     double s = 0;
                     for (const double x : g) s += x;
                     return 1e-10 - s;
                 }}};
    }
    /// A group's sum is positive only if some element is.
    static constexpr double (*some_element)(double) = [](double x) { return 1e-10 - x; };
    static constexpr std::array<double, 2> range{0.1, 4.0};
};
// reduced = log(sum(exp(x))), computed as max + log(sum(exp(x - max))) (value-preserving)
TENSORACLE_REDUCE(log_sum_exp, "ReduceLogSumExp", sum_types)
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    /// max(x) <= LSE <= max(x) + log n: every group of n values in [lo, hi] lies in [lo + log n, hi + log n].
    static spec::value_facts group_facts(const spec::value_facts& x, double n) { return affine_facts(x, 1.0, std::log(n)); }
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        return log_sum_exp(v);
    }
    /// softmax(v): exp(v - max) / sum(exp(v - max)).
    template <class V>
    static void partials(std::span<const V> v, std::span<V> d) {
        V m = -std::numeric_limits<V>::infinity(), sum{0};
        for (const V& x : v) m = std::max(m, x);
        for (std::size_t i = 0; i < v.size(); ++i) sum += (d[i] = std::exp(v[i] - m));
        for (V& x : d) x /= sum;
    }
    static std::vector<std::pair<std::string, double (*)(std::span<const double>, dtype)>> rules() {
        // Kept inside the range where the naive formula log(sum(exp(X))) is finite
        // too, so implementations without the max shift are comparable.
        return {{"sum(exp(X)) <= max finite", [](std::span<const double> g, dtype d) {
                     return log_sum_exp(g) - std::log(detail::max_finite(d));
                 }}};
    }
    /// What the rule needs of every element (LSE >= max(X)): X <= log(max finite),
    /// which the generator checks against what it knows of X (an integer Size of
    /// 4,680 elements cannot go through ReduceLogSumExp).
    static constexpr double (*every_element_at_limit)(double, double) = [](double x, double m) { return x - std::log(m); };
};
#undef TENSORACLE_REDUCE

/// Formulas computed in double for integer inputs. A named concept, not an
/// inline requires-expression: Clang 14 cannot mangle the latter in a template.
template <class F>
concept real_valued_reduction = requires { F::real_valued; };

}  // namespace reduce

/// A Reduce* op from its formula F (F::reduce<T, A> maps one group, as A, to A).
template <class F>
struct reduce_op {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = F::opset;
    static constexpr bool axes_input = requires { F::axes_input; };
    using attributes = std::conditional_t<axes_input, reduce::reduce_sum_attr, reduce::reduce_attr>;
    static constexpr auto inputs = [] {
        if constexpr (axes_input) {
            return std::array<spec::value_spec, 2>{
                {{"data", F::types}, {"axes", spec::types::int64, {1, 1}, "tensor(int64)", true}}};
        } else {
            return std::array<spec::value_spec, 1>{{{"data", F::types}}};
        }
    }();
    static constexpr std::array<spec::value_spec, 1> outputs{{{"reduced", F::types}}};

    static attributes parse(const spec::attribute_map& m) { return spec::parse_attributes<attributes>(m, op_type); }
    static bool noop(const attributes& a) {
        if constexpr (axes_input) {
            return a.noop_with_empty_axes != 0;
        } else {
            (void)a;
            return false;
        }
    }
    /// The axes as symbols: values of the `axes` input, else the attribute's elements.
    static std::vector<spec::expr> axes_symbols(const spec::context& c) {
        if (c.has_input(1)) return c.values(1);
        return c.attr_ints("axes");
    }

    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto a = parse(c.attributes());
        std::vector<spec::constraint> out{detail::is_flag(c.attr("keepdims"), "keepdims")};
        if constexpr (axes_input) {
            out.push_back(detail::is_flag(c.attr("noop_with_empty_axes"), "noop_with_empty_axes"));
            const bool both = c.has_input(1) && a.axes.has_value();
            out.push_back({spec::expr(both ? 0 : 1) == spec::expr(1),
                           "axes is given either as the attribute or as the input, not both"});
        }
        auto ax = detail::axes_constraints(axes_symbols(c), c.rank(0), "axes");
        out.insert(out.end(), ax.begin(), ax.end());
        return out;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto a = parse(c.attributes());
        const auto axes = axes_symbols(c);
        if (axes.empty() && noop(a)) return {c.shape(0)};
        return {detail::reduced_dims(c.shape(0), axes, a.keepdims != 0, op_type)};
    }
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!F::types.contains(out)) return {};
        std::vector<std::size_t> ranks;
        for (std::size_t r = rank; r <= spec::rank_range{}.max; ++r) ranks.push_back(r);
        if constexpr (axes_input) {
            return {{{out}, ranks}, {{dtype::i64}, {1}}};
        } else {
            return {{{out}, ranks}};
        }
    }

    /// The reduction groups of an instance's data (for domain losses), in double.
    static std::vector<std::vector<double>> groups_of(std::span<const tensor> in, const attributes& a) {
        std::vector<std::int64_t> axes = a.axes.value_or(std::vector<std::int64_t>{});
        if (in.size() > 1 && in[1].element_dtype() == dtype::i64 && in[1].size() > 0) {
            const auto v = in[1].values<std::int64_t>();
            axes.assign(v.begin(), v.end());
        }
        const auto& s = in[0].shape();
        const bool identity = axes.empty() && noop(a);
        const auto mask = identity ? std::vector<bool>(s.size(), false)
                                   : axes.empty() ? std::vector<bool>(s.size(), true) : detail::axis_mask(axes, s.size(), op_type);
        const auto x = in[0].to<double>();
        return detail::reduce_groups<double>(std::span<const double>(x.data(), x.size()), s, mask);
    }

    /// A product's finiteness in the log domain: a group overflows when the sum of
    /// log |x| over it exceeds log(max finite) (a zero factor keeps it finite); the
    /// loss is that excess, its gradient 1 / x on the elements of overflowing groups.
    static spec::domain_rule product_rule(const attributes& a) {
        // Per group: its elements' positions in the input and the excess of sum(log |x|).
        auto excess = [a](std::span<const tensor> in) {
            std::vector<std::pair<std::vector<double>, double>> over;
            const dtype d = in[0].element_dtype();
            if (!info(d).is_floating) return over;  // integers wrap, always finite
            const double limit = std::log(detail::max_finite(d));
            auto positions = array<double>::from_shape(in[0].shape());
            for (std::size_t k = 0; k < positions.size(); ++k) positions.data()[k] = static_cast<double>(k);
            const std::vector<tensor> where{tensor(positions)};
            const auto values = groups_of(in, a);
            const auto at = groups_of(where, a);
            for (std::size_t g = 0; g < values.size(); ++g) {
                double s = 0.0;
                for (const double x : values[g]) s += std::log(std::fabs(x));  // log 0 = -inf: finite
                if (std::isnan(s) || s > limit) over.emplace_back(at[g], std::isnan(s) ? 1.0 : s - limit);
            }
            return over;
        };
        return {"every product is finite (sum of log |x| per group <= log of the dtype's largest value)",
                [excess](std::span<const tensor> in) {
                    double loss = 0.0;
                    for (const auto& g : excess(in)) loss += g.second;
                    return loss;
                },
                [excess](std::span<const tensor> in) {
                    std::vector<tensor> grads(in.size());
                    const auto x = in[0].to<double>();
                    auto d = array<double>::from_shape(x.shape());
                    d.fill(0.0);
                    for (const auto& g : excess(in)) {
                        for (const double p : g.first) {
                            const auto k = static_cast<std::size_t>(p);
                            d.data()[k] = 1.0 / x.data()[k];
                        }
                    }
                    grads[0] = tensor(d);
                    return grads;
                }};
    }

    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = parse(attrs);
        std::vector<spec::domain_rule> out;
        if constexpr (requires { F::multiplicative; }) {
            out.push_back(product_rule(a));
        } else {
            out.push_back({"every reduced value is finite (non-empty groups, no overflow; computed in double)",
                           [a](std::span<const tensor> in) {
                               const dtype d = in[0].element_dtype();
                               if (!info(d).is_floating) return 0.0;  // integers wrap, always finite
                               double loss = 0.0;
                               const double m = detail::max_finite(d);
                               for (const auto& g : groups_of(in, a)) {
                                   const double r = F::template reduce<double, double>(std::span<const double>(g));
                                   if (!std::isfinite(r)) {
                                       loss += 1.0;
                                   } else if (std::fabs(r) > m) {
                                       loss += std::fabs(r) / m - 1.0;
                                   }
                               }
                               return loss;
                           }});
        }
        if constexpr (requires { F::rules(); }) {
            for (auto& rule : F::rules()) {
                const auto f = rule.second;  // named: lambdas may not capture bindings (Clang 14)
                out.push_back({rule.first, [a, f](std::span<const tensor> in) {
                                   double loss = 0.0;
                                   for (const auto& g : groups_of(in, a)) {
                                       const double h = f(std::span<const double>(g), in[0].element_dtype());
                                       loss += std::isnan(h) ? 1.0 : std::max(h, 0.0);
                                   }
                                   return loss;
                               }});
            }
        }
        if constexpr (requires { F::every_element_at_limit; }) {
            out.back().elementwise_input = 0;
            out.back().elementwise_at_limit = F::every_element_at_limit;
        }
        if constexpr (requires { F::some_element; }) {
            // The last rule holds only if some element satisfies F::some_element (what the generator checks).
            out.back().elementwise_input = 0;
            out.back().elementwise = F::some_element;
            out.back().elementwise_any = true;
        }
        return out;
    }

    /// The typed kernel. `axes_in` is ReduceSum's `axes` input, when given.
    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {},
                            const std::optional<std::vector<std::int64_t>>& axes_in = std::nullopt) {
        static_assert(spec::dtype_accepted<reduce_op, T>::value);
        array<T> y;
        const bool same = reduce_into<T>(std::span<const T>(x.data(), x.size()),
                                         shape_type(x.shape().begin(), x.shape().end()), a, axes_in,
                                         [&](const shape_type& out) {
                                             y = array<T>::from_shape(out);
                                             return y.data();
                                         });
        if (same) return x;  // noop_with_empty_axes: the input, unchanged
        return y;
    }

    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<F::types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            // Straight from the input's buffer into the output's: no typed copies.
            tensor y;
            const bool same = reduce_into<T>(c.input(0).values<T>(), c.input(0).shape(), parse(c.attributes()),
                                             axes_input_of(c), [&](const shape_type& out) {
                                                 y = tensor::for_overwrite(dtype_of<T>, out);
                                                 return y.template values<T>().data();
                                             });
            return same ? c.input(0) : y;
        }));
    }
    /// Integer data has an integer output: nothing to differentiate, run() gives it.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!spec::types::floating.contains(c.input_dtype(0))) return {array<S>{}};
        return {run_typed<S>(c, x[0])};
    }
    /// The VJP for reductions whose partials F states (F::partials): each
    /// group's output cotangent times d reduced / d element, walked over the
    /// same groups as the kernel; the identity (noop_with_empty_axes) passes w on.
    template <class V>
        requires requires(std::span<const V> v, std::span<V> d) { F::partials(v, d); }
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto a = parse(c.attributes());
        const shape_type s(x[0].shape().begin(), x[0].shape().end());
        const auto axes_in = axes_input_of(c);
        const std::vector<std::int64_t> axes = axes_in ? *axes_in : a.axes.value_or(std::vector<std::int64_t>{});
        const bool identity = axes.empty() && noop(a);
        const auto mask = identity ? std::vector<bool>(s.size(), false)
                                   : axes.empty() ? std::vector<bool>(s.size(), true) : detail::axis_mask(axes, s.size(), op_type);
        std::vector<array<V>> g(x.size());
        g[0] = array<V>::from_shape(x[0].shape());
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, identity ? s : detail::reduced_shape(s, mask, a.keepdims != 0));
        if (wy == nullptr) return g;
        if (identity) {
            std::copy(wy->begin(), wy->end(), g[0].begin());
            return g;
        }
        // Each element's position rides along through the same grouping.
        std::vector<V> position(x[0].size());
        for (std::size_t k = 0; k < position.size(); ++k) position[k] = static_cast<V>(k);
        const auto values = detail::reduce_groups<V>(std::span<const V>(x[0].data(), x[0].size()), s, mask);
        const auto where = detail::reduce_groups<V>(std::span<const V>(position), s, mask);
        std::vector<V> d;
        for (std::size_t o = 0; o < values.size(); ++o) {
            d.resize(values[o].size());
            F::partials(std::span<const V>(values[o]), std::span<V>(d));
            for (std::size_t i = 0; i < d.size(); ++i) g[0].data()[static_cast<std::size_t>(where[o][i])] += d[i] * wy->data()[o];
        }
        return g;
    }
    static spec::hints hints() {
        spec::hints h;
        h.flag("keepdims");
        // ReduceSum-13 takes axes only as an input: the attribute (which the spec
        // still reads, for older models) is not valid ONNX there.
        if constexpr (axes_input) h.flag("noop_with_empty_axes", 0.3).optional_input(1, 0.7).omit("axes");
        if constexpr (requires { F::range; }) h.range(0, F::range[0], F::range[1]);
        if constexpr (requires { F::group_facts(spec::value_facts{}, 1.0); }) {
            h.facts_with_output_shapes(group_facts_of);
        } else if constexpr (requires { F::within_input; }) {
            h.facts(spec::facts::selection_of(0));
        }
        return h;
    }
    /// Each output element reduces a group of |input| / |output| elements (the
    /// generator passes the output shapes after the inputs').
    static std::vector<spec::value_facts> group_facts_of(std::span<const spec::value_facts> in, const spec::attribute_map&,
                                                         std::span<const shape_type> shapes) {
        if (in.empty() || shapes.size() <= in.size()) return {spec::value_facts{}};
        std::size_t n_in = 1, n_out = 1;
        for (const auto d : shapes[0]) n_in *= d;
        for (const auto d : shapes[in.size()]) n_out *= d;
        if (n_out == 0 || n_in == 0 || n_in % n_out != 0) return {spec::value_facts{}};
        return {F::group_facts(in[0], static_cast<double>(n_in / n_out))};
    }

private:
    /// compute<T> on the context's attributes and `axes` input; `data` is input 0 as T.
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& data) {
        return compute<T>(data, parse(c.attributes()), axes_input_of(c));
    }
    static std::optional<std::vector<std::int64_t>> axes_input_of(const spec::context& c) {
        if (!c.has_input(1)) return std::nullopt;
        const auto v = c.input(1).values<std::int64_t>();
        return std::vector<std::int64_t>(v.begin(), v.end());
    }
    /// Reduces x (shape s) into the buffer `make_output(out_shape)` returns;
    /// true, with nothing written, when the op is the identity
    /// (noop_with_empty_axes and no axes).
    template <class T, class MakeOutput>
    static bool reduce_into(std::span<const T> x, const shape_type& s, const attributes& a,
                            const std::optional<std::vector<std::int64_t>>& axes_in, MakeOutput&& make_output) {
        if (axes_in && a.axes) throw error(op_type, "axes is given both as the attribute and as the input");
        if (a.keepdims != 0 && a.keepdims != 1) {
            throw error(op_type, "keepdims must be 0 or 1, got " + std::to_string(a.keepdims));
        }
        const std::vector<std::int64_t> axes = axes_in ? *axes_in : a.axes.value_or(std::vector<std::int64_t>{});
        if (axes.empty() && noop(a)) return true;
        const auto mask = axes.empty() ? std::vector<bool>(s.size(), true) : detail::axis_mask(axes, s.size(), op_type);
        // Real-valued reductions (mean, L2, logs) of integers compute in double and
        // truncate once, as ONNX's reference does with numpy's astype.
        using A = std::conditional_t<std::is_integral_v<T> && reduce::real_valued_reduction<F>, double,
                                     detail::reduce_acc_t<T>>;
        T* y = make_output(detail::reduced_shape(s, mask, a.keepdims != 0));
        detail::for_each_reduce_group<A>(x, s, mask, [&](std::size_t o, std::span<const A> g) {
            y[o] = value_cast<T>(F::template reduce<T, A>(g));
        });
        return false;
    }
};

using reduce_sum = reduce_op<reduce::sum_fn>;
using reduce_mean = reduce_op<reduce::mean_fn>;
using reduce_max = reduce_op<reduce::max_fn>;
using reduce_min = reduce_op<reduce::min_fn>;
using reduce_prod = reduce_op<reduce::prod_fn>;
using reduce_l1 = reduce_op<reduce::l1_fn>;
using reduce_l2 = reduce_op<reduce::l2_fn>;
using reduce_sum_square = reduce_op<reduce::sum_square_fn>;
using reduce_log_sum = reduce_op<reduce::log_sum_fn>;
using reduce_log_sum_exp = reduce_op<reduce::log_sum_exp_fn>;

// ------------------------------------------------------------ ArgMax / ArgMin

namespace reduce {
struct arg_attr {
    std::int64_t axis = 0;
    std::int64_t keepdims = 1;
    std::int64_t select_last_index = 0;
};
}  // namespace reduce

/// ArgMax / ArgMin (13): the int64 index of the max / min along `axis`; the
/// first occurrence, or the last with select_last_index=1.
// Not differentiable: the only output is int64 indices.
template <bool Max>
struct arg_reduce {
    static constexpr std::string_view op_type = Max ? "ArgMax" : "ArgMin";
    static constexpr int opset = 13;
    using attributes = reduce::arg_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::numeric}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"reduced", spec::types::int64, {}, "tensor(int64)"}}};

    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto axis = c.attr("axis");
        std::vector<spec::constraint> out{detail::axis_in_range(axis, r, "axis"),
                                          detail::is_flag(c.attr("keepdims"), "keepdims"),
                                          detail::is_flag(c.attr("select_last_index"), "select_last_index")};
        for (std::size_t k = 0; k < r; ++k) {
            out.push_back({!detail::axis_is(axis, k, r) || c.dim(0, k) >= spec::expr(1),
                           "the reduced axis is not empty (axis " + std::to_string(k) + ")"});
        }
        return out;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const bool keep = spec::parse_attributes<attributes>(c.attributes(), op_type).keepdims != 0;
        return {detail::reduced_dims(c.shape(0), {c.attr("axis")}, keep, op_type)};
    }
    static std::vector<dtype> output_dtypes(const spec::context&) { return {dtype::i64}; }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (out != dtype::i64) return {};
        std::vector<std::size_t> ranks;
        if (rank >= 1) ranks.push_back(rank);  // keepdims=1
        ranks.push_back(rank + 1);             // keepdims=0
        return {{spec::types::numeric.members(), ranks}};
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<std::int64_t> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<arg_reduce, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        const std::size_t axis = spec::normalize_axis(a.axis, s.size(), op_type);
        if (a.keepdims != 0 && a.keepdims != 1) throw error(op_type, "keepdims must be 0 or 1");
        if (a.select_last_index != 0 && a.select_last_index != 1) throw error(op_type, "select_last_index must be 0 or 1");
        const auto sp = detail::split_at(s, axis);
        if (sp.n == 0) throw shape_error(op_type, "axis " + std::to_string(a.axis) + " is empty: there is no index to return");
        shape_type out_shape;
        for (std::size_t k = 0; k < s.size(); ++k) {
            if (k != axis) out_shape.push_back(s[k]);
            else if (a.keepdims != 0) out_shape.push_back(1);
        }
        auto y = array<std::int64_t>::from_shape(out_shape);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                std::size_t best = 0;
                for (std::size_t i = 1; i < sp.n; ++i) {
                    if (reduce::replaces<Max>(x.data()[sp.at(o, i, j)], x.data()[sp.at(o, best, j)], a.select_last_index != 0)) {
                        best = i;
                    }
                }
                y.data()[o * sp.inner + j] = static_cast<std::int64_t>(best);
            }
        }
        return y;
    }
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), a));
        }));
    }
    static spec::hints hints() {
        // Small integer ranges make ties likely, which exercises select_last_index.
        // Facts: indices in [0, n - 1] along the axis; all 0 when it has one element.
        return spec::hints{}.flag("keepdims").flag("select_last_index").range(0, -3, 3).facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                if (shapes.empty() || shapes[0].empty()) return std::vector<spec::value_facts>{spec::value_facts::constant(0.0)};
                const auto a = spec::parse_attributes<attributes>(attrs, op_type);
                const std::size_t axis = spec::normalize_axis(a.axis, shapes[0].size(), op_type);
                const auto n = static_cast<double>(shapes[0][axis]);
                return std::vector<spec::value_facts>{n <= 1.0 ? spec::value_facts::constant(0.0)
                                                               : spec::value_facts::within(0.0, n - 1.0)};
            });
    }
};

using arg_max = arg_reduce<true>;
using arg_min = arg_reduce<false>;

// ------------------------------------------------ Softmax, LogSoftmax, Hardmax

namespace reduce {
struct softmax_attr {
    std::int64_t axis = -1;
};

// Softmax and LogSoftmax subtract the row maximum m first: exp(x - m) / sum(exp(x - m))
// equals exp(x) / sum(exp(x)) exactly in real arithmetic (the factor exp(-m) cancels),
// and x - m - log(sum(exp(x - m))) equals log(exp(x) / sum(exp(x))). With the shift every
// exp is <= 1 and the sum is >= 1, so nothing overflows or divides by zero. The shift is
// a constant (constant_of) so that AD scalars get the unshifted derivative exactly.
struct softmax_fn {
    static constexpr std::string_view op_type = "Softmax";
    template <class A>
    static void apply(std::vector<A>& v) {
        A m = -std::numeric_limits<A>::infinity();
        for (const A& x : v) m = std::max(m, x);
        m = constant_of(m);
        A s = 0;
        for (A& x : v) s += (x = math::exp(x - m));
        for (A& x : v) x /= s;
    }
    /// Row VJP: with y = softmax(x), x's cotangent is y * (w - <w, y>); x is scratch.
    template <class V>
    static void vjp(std::vector<V>& x, std::vector<V>& w) {
        apply(x);
        V dot = 0;
        for (std::size_t i = 0; i < x.size(); ++i) dot += w[i] * x[i];
        for (std::size_t i = 0; i < x.size(); ++i) w[i] = x[i] * (w[i] - dot);
    }
    /// Rows of length n: (0, 1] (0 on underflow), one element <= 1/n and one >= 1/n
    /// (1% slack for rounding); all ones when n = 1.
    static spec::value_facts facts(std::size_t n) {
        if (n == 1) return spec::value_facts::constant(1.0);
        auto f = spec::value_facts::within(0.0, 1.0);
        f.some_at_most = 1.01 / static_cast<double>(n);
        f.some_at_least = 0.99 / static_cast<double>(n);
        return f;
    }
};
struct log_softmax_fn {
    static constexpr std::string_view op_type = "LogSoftmax";
    template <class A>
    static void apply(std::vector<A>& v) {
        A m = -std::numeric_limits<A>::infinity();
        for (const A& x : v) m = std::max(m, x);
        m = constant_of(m);
        A s = 0;
        for (const A& x : v) s += math::exp(x - m);
        const A ls = math::log(s);
        for (A& x : v) x = (x - m) - ls;
    }
    /// Row VJP: x's cotangent is w - softmax(x) * sum(w); x is scratch.
    template <class V>
    static void vjp(std::vector<V>& x, std::vector<V>& w) {
        softmax_fn::apply(x);
        V sum = 0;
        for (const V& wi : w) sum += wi;
        for (std::size_t i = 0; i < x.size(); ++i) w[i] -= x[i] * sum;
    }
    /// (-inf, 0], one element <= -log n (1% slack for rounding); all zeros when n = 1.
    static spec::value_facts facts(std::size_t n) {
        if (n == 1) return spec::value_facts::constant(0.0);
        auto f = spec::value_facts::within(-std::numeric_limits<double>::infinity(), 0.0);
        f.some_at_most = -0.99 * std::log(static_cast<double>(n));
        return f;
    }
};
// 1 at the first maximum of the row (numpy argmax: the first NaN, if any), 0 elsewhere.
struct hardmax_fn {
    static constexpr std::string_view op_type = "Hardmax";
    template <class A>
    static void apply(std::vector<A>& v) {
        std::size_t best = 0;
        for (std::size_t i = 1; i < v.size(); ++i) {
            if (replaces<true>(v[i], v[best], false)) best = i;
        }
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = i == best ? A(1) : A(0);
    }
    /// Row VJP: a one-hot output is constant wherever it is defined.
    template <class V>
    static void vjp(std::vector<V>&, std::vector<V>& w) {
        std::fill(w.begin(), w.end(), V(0));
    }
    /// A one in every row, zeros beside it when n > 1.
    static spec::value_facts facts(std::size_t n) {
        return n == 1 ? spec::value_facts::constant(1.0) : spec::value_facts::within(0.0, 1.0, {0.0, 1.0});
    }
};
}  // namespace reduce

/// Softmax / LogSoftmax / Hardmax (13): F applied to each 1-D slice along `axis`.
template <class F>
struct axis_normalizer {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = 13;
    using attributes = reduce::softmax_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::floating}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::floating}}};

    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return {detail::axis_in_range(c.attr("axis"), c.rank(0), "axis")};
    }
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}};
    }
    // Finite inputs give finite outputs (the kernels shift by the maximum).
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<axis_normalizer, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        const auto sp = detail::split_at(s, spec::normalize_axis(a.axis, s.size(), op_type));
        using A = detail::reduce_acc_t<T>;
        auto y = array<T>::from_shape(x.shape());
        std::vector<A> row(sp.n);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                for (std::size_t i = 0; i < sp.n; ++i) row[i] = value_cast<A>(x.data()[sp.at(o, i, j)]);
                F::apply(row);
                for (std::size_t i = 0; i < sp.n; ++i) y.data()[sp.at(o, i, j)] = value_cast<T>(row[i]);
            }
        }
        return y;
    }
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), a));
        }));
    }
    /// Hardmax's derivative is 0 wherever its output is defined (one-hot constants).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return {compute<S>(x[0], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    /// The VJP, one slice along `axis` at a time (F::vjp; ad/op_derivatives.hpp).
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const shape_type s(x[0].shape().begin(), x[0].shape().end());
        const auto sp = detail::split_at(s, spec::normalize_axis(a.axis, s.size(), op_type));
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape())};
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, s);
        if (wy == nullptr) return g;
        std::vector<V> row(sp.n), wrow(sp.n);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                for (std::size_t i = 0; i < sp.n; ++i) {
                    row[i] = x[0].data()[sp.at(o, i, j)];
                    wrow[i] = wy->data()[sp.at(o, i, j)];
                }
                F::vjp(row, wrow);
                for (std::size_t i = 0; i < sp.n; ++i) g[0].data()[sp.at(o, i, j)] = wrow[i];
            }
        }
        return g;
    }
    static spec::hints hints() {
        return spec::hints{}.range(0, -6, 6).facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes)
                -> std::vector<spec::value_facts> {
                if (shapes.empty() || shapes[0].empty()) return {spec::value_facts{}};
                const auto a = spec::parse_attributes<attributes>(attrs, op_type);
                return {F::facts(shapes[0][spec::normalize_axis(a.axis, shapes[0].size(), op_type)])};
            });
    }
};

using softmax = axis_normalizer<reduce::softmax_fn>;
using log_softmax = axis_normalizer<reduce::log_softmax_fn>;
using hardmax = axis_normalizer<reduce::hardmax_fn>;

// ---------------------------------------------------------- LayerNormalization

namespace reduce {
struct layer_norm_attr {
    std::int64_t axis = -1;
    float epsilon = 1e-5f;
    std::int64_t stash_type = 1;
};

/// Loss of "variance + epsilon > 0" for a list of groups.
inline double variance_loss(const std::vector<std::vector<double>>& groups, double eps) {
    double loss = 0.0;
    for (const auto& g : groups) {
        if (g.empty()) continue;  // no element is normalized
        double m = 0.0, v = 0.0;
        for (const double x : g) m += x;
        m /= static_cast<double>(g.size());
        for (const double x : g) v += (x - m) * (x - m);
        v /= static_cast<double>(g.size());
        const double h = 1e-10 - (v + eps);
        loss += std::isnan(h) ? 1.0 : std::max(h, 0.0);
    }
    return loss;
}

/// The values of x (in double) grouped by their indices outside the axes
/// [from_axis, to_axis_excl): one group per normalized row / channel / vector.
inline std::vector<std::vector<double>> split_groups(const tensor& x, std::size_t from_axis, std::size_t to_axis_excl) {
    const auto& s = x.shape();
    std::vector<bool> mask(s.size(), false);
    for (std::size_t k = from_axis; k < to_axis_excl && k < s.size(); ++k) mask[k] = true;
    const auto v = x.to<double>();
    return detail::reduce_groups<double>(std::span<const double>(v.data(), v.size()), s, mask);
}
}  // namespace reduce

/// LayerNormalization (17): per row (the elements sharing X.shape[:axis]),
/// Mean = mean(x), InvStdDev = 1 / sqrt(mean((x - Mean)^2) + epsilon),
/// Y = (x - Mean) * InvStdDev * Scale + B. Outputs: Y, Mean, InvStdDev, the
/// last two of shape X.shape[:axis] + [1] * (rank - axis).
struct layer_normalization {
    static constexpr std::string_view op_type = "LayerNormalization";
    static constexpr int opset = 17;
    using attributes = reduce::layer_norm_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"X", spec::types::floating}, {"Scale", spec::types::floating}, {"B", spec::types::floating, {}, "T", true}}};
    static constexpr spec::dtype_set stash_types = spec::dtypes_of(dtype::f32, dtype::bf16);
    static constexpr std::array<spec::value_spec, 3> outputs{{{"Y", spec::types::floating},
                                                              {"Mean", stash_types, {}, "U", true},
                                                              {"InvStdDev", stash_types, {}, "U", true}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto axis = c.attr("axis");
        const auto stash = c.attr("stash_type");
        std::vector<spec::constraint> out{detail::axis_in_range(axis, r, "axis"),
                                          {stash == spec::expr(1) || stash == spec::expr(16),
                                           "stash_type is 1 (float) or 16 (bfloat16)"}};
        const auto an = detail::normalized_axis(axis, r);
        for (const std::size_t i : {std::size_t{1}, std::size_t{2}}) {
            if (!c.has_input(i)) continue;
            const std::string name = i == 1 ? "Scale" : "B";
            const std::size_t ri = c.rank(i);
            out.push_back({spec::expr(ri) <= spec::expr(r) - an, name + " has at most the rank of X.shape[axis:]"});
            for (std::size_t k = 0; k < ri && ri <= r; ++k) {
                const auto dk = c.dim(i, k), xk = c.dim(0, r - ri + k);
                out.push_back({dk == xk || dk == spec::expr(1),
                               name + " broadcasts to X.shape[axis:] (X axis " + std::to_string(r - ri + k) + ")"});
            }
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto an = detail::normalized_axis(c.attr("axis"), r);
        std::vector<spec::expr> stat;
        for (std::size_t k = 0; k < r; ++k) stat.push_back(select(an > spec::expr(k), c.dim(0, k), spec::expr(1)));
        return {c.shape(0), stat, stat};
    }
    static dtype stash_dtype(const attributes& a) { return a.stash_type == 16 ? dtype::bf16 : dtype::f32; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        const dtype u = stash_dtype(spec::parse_attributes<attributes>(c.attributes(), op_type));
        return {c.input_dtype(0), u, u};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank == 0) return {};
        std::vector<std::size_t> ranks;
        for (std::size_t r = 0; r <= rank; ++r) ranks.push_back(r);
        return {{{out}, {rank}}, {{out}, ranks}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        return {{"variance + epsilon > 0 over each normalized row", [a](std::span<const tensor> in) {
                     const std::size_t r = in[0].rank();
                     if (a.axis < -static_cast<std::int64_t>(r) || a.axis >= static_cast<std::int64_t>(r)) return 1.0;
                     const std::size_t axis = spec::normalize_axis(a.axis, r, op_type);
                     return reduce::variance_loss(reduce::split_groups(in[0], axis, r), static_cast<double>(a.epsilon));
                 }}};
    }

    template <class A, class T>
    struct result {
        array<T> y;
        array<A> mean;
        array<A> inv_std_dev;
    };

    /// The typed kernel; Mean and InvStdDev come in the accumulator type A
    /// (float, double for f64) and are rounded to the stash dtype by `run`.
    template <class T, class A = detail::reduce_acc_t<T>>
    static result<A, T> compute(const array<T>& x, const array<T>& scale, const std::optional<array<T>>& bias,
                                const attributes& a = {}) {
        static_assert(spec::dtype_accepted<layer_normalization, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        const std::size_t axis = spec::normalize_axis(a.axis, s.size(), op_type);
        const shape_type norm_shape(s.begin() + static_cast<std::ptrdiff_t>(axis), s.end());
        // Scale and B broadcast to X.shape[axis:]; offsets of their element for each i.
        auto offsets_of = [&](const array<T>& p, std::string_view name) {
            const shape_type ps(p.shape().begin(), p.shape().end());
            if (ps.size() > norm_shape.size()) {
                throw shape_error(op_type, std::string(name) + " " + to_string(ps) + " has a higher rank than X.shape[axis:] " +
                                               to_string(norm_shape));
            }
            for (std::size_t k = 0; k < ps.size(); ++k) {
                const std::size_t xk = norm_shape[norm_shape.size() - ps.size() + k];
                if (ps[k] != xk && ps[k] != 1) {
                    throw shape_error(op_type, std::string(name) + " " + to_string(ps) + " does not broadcast to X.shape[axis:] " +
                                                   to_string(norm_shape));
                }
            }
            return detail::broadcast_offsets({ps}, norm_shape)[0];
        };
        const auto so = offsets_of(scale, "Scale");
        const auto bo = bias ? offsets_of(*bias, "B") : std::vector<std::size_t>{};
        shape_type stat_shape(s);
        for (std::size_t k = axis; k < s.size(); ++k) stat_shape[k] = 1;
        result<A, T> out{array<T>::from_shape(s), array<A>::from_shape(stat_shape), array<A>::from_shape(stat_shape)};
        const std::size_t n = element_count(norm_shape), rows = out.mean.size();
        const A eps = static_cast<A>(a.epsilon);
        for (std::size_t row = 0; row < rows; ++row) {
            const T* xr = x.data() + row * n;
            A mu = 0;
            for (std::size_t i = 0; i < n; ++i) mu += value_cast<A>(xr[i]);
            mu /= static_cast<A>(n);  // n == 0: NaN statistics, no element to normalize
            A var = 0;
            for (std::size_t i = 0; i < n; ++i) var += (value_cast<A>(xr[i]) - mu) * (value_cast<A>(xr[i]) - mu);
            var /= static_cast<A>(n);
            const A inv = A(1) / math::sqrt(var + eps);
            out.mean.data()[row] = mu;
            out.inv_std_dev.data()[row] = inv;
            for (std::size_t i = 0; i < n; ++i) {
                A v = (value_cast<A>(xr[i]) - mu) * inv * value_cast<A>(scale.data()[so[i]]);
                if (bias) v += value_cast<A>(bias->data()[bo[i]]);
                out.y.data()[row * n + i] = value_cast<T>(v);
            }
        }
        return out;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = checked_attributes(c);
        return detail::dispatch<inputs[0].types, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::optional<array<T>> bias;
            if (c.has_input(2)) bias = c.input(2).as_array<T>();
            auto res = compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>(), bias, a);
            const dtype u = stash_dtype(a);
            return std::vector<tensor>{tensor(res.y), tensor::from_array_as(res.mean, u), tensor::from_array_as(res.inv_std_dev, u)};
        });
    }
    /// Mean and InvStdDev stay in S: run() rounds them to the stash dtype, which
    /// only loses precision (the derivative of that rounding is taken as 1).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        std::optional<array<S>> bias;
        if (c.has_input(2)) bias = x[2];
        auto res = compute<S>(x[0], x[1], bias, checked_attributes(c));
        return {std::move(res.y), std::move(res.mean), std::move(res.inv_std_dev)};
    }
    static attributes checked_attributes(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (a.stash_type != 1 && a.stash_type != 16) {
            throw error(op_type, "stash_type must be 1 (float) or 16 (bfloat16), got " + std::to_string(a.stash_type));
        }
        return a;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .weights({1, 2})
            .real("epsilon", 1e-6, 1e-2, 0.3)
            .choice("stash_type", {std::int64_t{1}}, 0.2)
            .range(1, 0.5, 2.0)
            .range(2, -1.0, 1.0)
            .optional_input(2, 0.7)
            .facts(facts);
    }
    /// Y: unknown (Scale and B move it), except over rows of one element, where
    /// x - Mean is 0 and Y is B (0 without B). Mean: inside X's range. InvStdDev =
    /// 1 / sqrt(var + epsilon), with var at most (hi - lo)^2 / 4 for X in
    /// [lo, hi]: InvStdDev of Cos values is never below 1 / sqrt(1 + epsilon).
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type> shapes) {
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        spec::value_facts y;
        std::size_t row = 0;  // elements per normalized row; 0: not known
        if (!shapes.empty() && !shapes[0].empty()) {
            row = 1;
            for (std::size_t i = spec::normalize_axis(a.axis, shapes[0].size(), op_type); i < shapes[0].size(); ++i) {
                row *= shapes[0][i];
            }
            const bool has_b = in.size() > 2;  // trailing absent inputs are dropped (B may be a scalar)
            if (row == 1) {
                y = has_b ? in[2].range_only() : spec::value_facts::constant(0.0);
            } else if (!has_b) {
                // (x - Mean) / sd sums to 0 over a row (all 0 on a constant row), so
                // times one Scale value, or Scale values of one sign, some element is
                // <= 0 and some >= 0 (up to the rounding of the mean): Log of it fails.
                const bool one_scale = shapes.size() > 1 && element_count(shapes[1], op_type) == 1;
                const bool one_sign = in.size() > 1 && (in[1].lo >= 0.0 || in[1].hi <= 0.0);
                if (one_scale || one_sign) {
                    y.some_at_most = 0.0;
                    y.some_at_least = 0.0;
                }
            }
        }
        const double eps = a.epsilon;
        if (!(eps > 0.0)) return {y, x.range_only(), spec::value_facts{}};
        // A row of one element has variance 0 whatever it holds: InvStdDev is
        // 1 / sqrt(epsilon) (Atanh of it fails for every epsilon below 1).
        const double var_max = row == 1 ? 0.0 : (x.hi - x.lo) * (x.hi - x.lo) / 4.0;
        // 1% slack for rounding in float32 / bfloat16 statistics.
        const auto inv = spec::value_facts::within(0.99 / std::sqrt(var_max + eps), 1.01 / std::sqrt(eps));
        return {y, x.range_only(), inv};
    }
};

// ---------------------------------------------------------- BatchNormalization

namespace reduce {
struct batch_norm_attr {
    float epsilon = 1e-5f;
    float momentum = 0.9f;
    std::int64_t training_mode = 0;
};
}  // namespace reduce

/// BatchNormalization (15), inference mode:
/// Y = (X - input_mean[c]) / sqrt(input_var[c] + epsilon) * scale[c] + B[c], c = axis 1.
struct batch_normalization {
    static constexpr std::string_view op_type = "BatchNormalization";
    static constexpr int opset = 15;
    using attributes = reduce::batch_norm_attr;
    static constexpr std::array<spec::value_spec, 5> inputs{{{"X", spec::types::floating, {2, 8}},
                                                             {"scale", spec::types::floating, {1, 1}, "T1"},
                                                             {"B", spec::types::floating, {1, 1}, "T1"},
                                                             {"input_mean", spec::types::floating, {1, 1}, "T2"},
                                                             {"input_var", spec::types::floating, {1, 1}, "T2"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", spec::types::floating}}};
    static constexpr std::array<std::string_view, 4> param_names{"scale", "B", "input_mean", "input_var"};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        // training_mode=1 is valid ONNX, just not implemented: run() throws
        // unsupported_error for it (conformance counts it as skipped).
        std::vector<spec::constraint> out;
        for (std::size_t i = 1; i < 5; ++i) {
            out.push_back({c.dim(i, 0) == c.dim(0, 1), std::string(param_names[i - 1]) + " has one value per channel (X axis 1)"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank < 2) return {};
        const auto f = spec::types::floating.members();
        return {{{out}, {rank}}, {f, {1}}, {f, {1}}, {f, {1}}, {f, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto eps = static_cast<double>(spec::parse_attributes<attributes>(attrs, op_type).epsilon);
        return {detail::hinge_rule("input_var + epsilon > 0", 4, [eps](double v) { return 1e-10 - (v + eps); })};
    }

    /// The typed kernel; the per-channel parameters come widened to double
    /// (exact for every floating dtype) and are used in the accumulator type.
    /// AD scalars take them as P = T, so that they carry derivatives too.
    template <class T, class P = double>
    static array<T> compute(const array<T>& x, const array<P>& scale, const array<P>& bias, const array<P>& input_mean,
                            const array<P>& var, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<batch_normalization, T>::value);
        if (a.training_mode != 0) {
            throw unsupported_error(std::string(op_type), "training_mode=1 is not supported (inference mode only)");
        }
        if (x.dimension() < 2) throw shape_error(op_type, "X must have rank >= 2 (N, C, ...), got rank " + std::to_string(x.dimension()));
        const std::size_t ch = x.shape()[1];
        const std::array<const array<P>*, 4> params{&scale, &bias, &input_mean, &var};
        for (std::size_t p = 0; p < 4; ++p) {
            if (params[p]->dimension() != 1 || params[p]->shape()[0] != ch) {
                throw shape_error(op_type, std::string(param_names[p]) + " must have shape [" + std::to_string(ch) + "]");
            }
        }
        using A = detail::reduce_acc_t<T>;
        const auto sp = detail::split_at(shape_type(x.shape().begin(), x.shape().end()), 1);
        auto y = array<T>::from_shape(x.shape());
        const A eps = static_cast<A>(a.epsilon);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t c = 0; c < sp.n; ++c) {
                const A m = value_cast<A>(input_mean.data()[c]), s = value_cast<A>(scale.data()[c]),
                        b = value_cast<A>(bias.data()[c]);
                const A den = math::sqrt(value_cast<A>(var.data()[c]) + eps);
                for (std::size_t j = 0; j < sp.inner; ++j) {
                    const std::size_t f = sp.at(o, c, j);
                    y.data()[f] = value_cast<T>((value_cast<A>(x.data()[f]) - m) / den * s + b);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).to<double>(), c.input(2).to<double>(),
                                     c.input(3).to<double>(), c.input(4).to<double>(), a));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return {compute<S, S>(x[0], x[1], x[2], x[3], x[4], a)};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .weights({1, 2, 3, 4})
            .real("epsilon", 1e-6, 1e-2, 0.3)
            .real("momentum", 0.5, 1.0, 0.3)
            .omit("training_mode")
            .range(1, 0.5, 2.0)
            .range(2, -1.0, 1.0)
            .range(3, -1.0, 1.0)
            .range(4, 0.1, 2.0);
    }
};

// ------------------------------------------------------- InstanceNormalization

namespace reduce {
struct instance_norm_attr {
    float epsilon = 1e-5f;
};
}  // namespace reduce

/// InstanceNormalization (6): per (n, c), over the spatial axes 2..:
/// y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c] (population variance).
struct instance_normalization {
    static constexpr std::string_view op_type = "InstanceNormalization";
    static constexpr int opset = 6;
    using attributes = reduce::instance_norm_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"input", spec::types::ieee_floating, {3, 8}},
                                                             {"scale", spec::types::ieee_floating, {1, 1}},
                                                             {"B", spec::types::ieee_floating, {1, 1}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::ieee_floating}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return {{c.dim(1, 0) == c.dim(0, 1), "scale has one value per channel (input axis 1)"},
                {c.dim(2, 0) == c.dim(0, 1), "B has one value per channel (input axis 1)"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank < 3) return {};
        return {{{out}, {rank}}, {{out}, {1}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto eps = static_cast<double>(spec::parse_attributes<attributes>(attrs, op_type).epsilon);
        return {{"variance + epsilon > 0 over each (n, c)", [eps](std::span<const tensor> in) {
                     return reduce::variance_loss(reduce::split_groups(in[0], 2, in[0].rank()), eps);
                 }}};
    }

    template <class T>
    static array<T> compute(const array<T>& x, const array<T>& scale, const array<T>& bias, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<instance_normalization, T>::value);
        if (x.dimension() < 3) {
            throw shape_error(op_type, "input must have rank >= 3 (N, C, D1, ...), got rank " + std::to_string(x.dimension()));
        }
        const std::size_t ch = x.shape()[1];
        for (const auto* p : {&scale, &bias}) {
            if (p->dimension() != 1 || p->shape()[0] != ch) {
                throw shape_error(op_type, std::string(p == &scale ? "scale" : "B") + " must have shape [" + std::to_string(ch) + "]");
            }
        }
        using A = detail::reduce_acc_t<T>;
        const auto sp = detail::split_at(shape_type(x.shape().begin(), x.shape().end()), 1);
        const std::size_t n = sp.inner;  // spatial elements per (n, c)
        const A eps = static_cast<A>(a.epsilon);
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t c = 0; c < ch; ++c) {
                const std::size_t base = sp.at(o, c, 0);
                A mu = 0, var = 0;
                for (std::size_t j = 0; j < n; ++j) mu += value_cast<A>(x.data()[base + j]);
                mu /= static_cast<A>(n);
                for (std::size_t j = 0; j < n; ++j) {
                    const A dlt = value_cast<A>(x.data()[base + j]) - mu;
                    var += dlt * dlt;
                }
                var /= static_cast<A>(n);
                const A den = math::sqrt(var + eps);
                const A s = value_cast<A>(scale.data()[c]), b = value_cast<A>(bias.data()[c]);
                for (std::size_t j = 0; j < n; ++j) {
                    y.data()[base + j] = value_cast<T>(s * (value_cast<A>(x.data()[base + j]) - mu) / den + b);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>(), c.input(2).as_array<T>(), a));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return {compute<S>(x[0], x[1], x[2], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.weights({1, 2}).real("epsilon", 1e-6, 1e-2, 0.3).range(1, 0.5, 2.0).range(2, -1.0, 1.0).facts(facts);
    }
    /// Y: unknown, except over one spatial element per channel, where x - mean is 0 and Y is B.
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map&,
                                                std::span<const shape_type> shapes) {
        if (in.size() < 3 || shapes.empty() || shapes[0].size() < 3) return {spec::value_facts{}};
        std::size_t spatial = 1;
        for (std::size_t i = 2; i < shapes[0].size(); ++i) spatial *= shapes[0][i];
        return {spatial == 1 ? in[2].range_only() : spec::value_facts{}};
    }
};

// ------------------------------------------------------------ LpNormalization

namespace reduce {
struct lp_norm_attr {
    std::int64_t axis = -1;
    std::int64_t p = 2;
};
}  // namespace reduce

/// LpNormalization (1): y = x / ||x||_p along `axis`, p in {1, 2}. A zero
/// vector gives 0 / 0 = NaN (as the ONNX reference); the domain excludes it.
struct lp_normalization {
    static constexpr std::string_view op_type = "LpNormalization";
    static constexpr int opset = 1;
    using attributes = reduce::lp_norm_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::ieee_floating}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::ieee_floating}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto p = c.attr("p");
        return {detail::axis_in_range(c.attr("axis"), c.rank(0), "axis"),
                {p == spec::expr(1) || p == spec::expr(2), "p is 1 or 2"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        std::vector<spec::domain_rule> rules{{"||x||_p > 0 along axis (and finite)", [a](std::span<const tensor> in) {
                     const std::size_t r = in[0].rank();
                     if (a.axis < -static_cast<std::int64_t>(r) || a.axis >= static_cast<std::int64_t>(r)) return 1.0;
                     const std::size_t axis = spec::normalize_axis(a.axis, r, op_type);
                     const double m = detail::max_finite(in[0].element_dtype());
                     double loss = 0.0;
                     for (const auto& g : reduce::split_groups(in[0], axis, axis + 1)) {
                         double s = 0.0;
                         for (const double x : g) s += a.p == 1 ? std::fabs(x) : x * x;
                         const double norm = a.p == 1 ? s : std::sqrt(s);
                         loss += std::max(1e-10 - norm, 0.0) + (a.p == 2 && s > m ? s / m - 1.0 : 0.0);
                     }
                     return loss;
                 }}};
        // A non-zero norm needs some non-zero element (what the generator checks).
        rules[0].elementwise_input = 0;
        rules[0].elementwise = [](double x) { return 1e-10 - std::fabs(x); };
        rules[0].elementwise_any = true;
        rules[0].any_along_axis = a.axis;
        return rules;
    }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<lp_normalization, T>::value);
        if (a.p != 1 && a.p != 2) throw error(op_type, "p must be 1 or 2, got " + std::to_string(a.p));
        const shape_type s(x.shape().begin(), x.shape().end());
        const auto sp = detail::split_at(s, spec::normalize_axis(a.axis, s.size(), op_type));
        using A = detail::reduce_acc_t<T>;
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                A acc = 0;
                for (std::size_t i = 0; i < sp.n; ++i) {
                    const A v = value_cast<A>(x.data()[sp.at(o, i, j)]);
                    acc += a.p == 1 ? math::fabs(v) : v * v;
                }
                const A norm = a.p == 1 ? acc : math::sqrt(acc);
                for (std::size_t i = 0; i < sp.n; ++i) {
                    y.data()[sp.at(o, i, j)] = value_cast<T>(value_cast<A>(x.data()[sp.at(o, i, j)]) / norm);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), a));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return {compute<S>(x[0], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.choice("p", {std::int64_t{1}, std::int64_t{2}}, 0.7).facts(facts); }
    /// Every element lies in [-1, 1], and in a slice of n along the axis the
    /// smallest |y| is at most n^(-1/p) (the p-th powers sum to 1): some element
    /// is <= n^(-1/p) and some >= -n^(-1/p), so Acosh of it is out of reach.
    /// A slice of one is x / |x|: exactly -1 or 1 (the square root of a
    /// correctly rounded square is exact), 1 where x >= 0.
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type> shapes) {
        auto f = spec::value_facts::within(-1.0, 1.0);
        if (shapes.empty() || shapes[0].empty()) return {f};
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        const std::size_t axis = spec::normalize_axis(a.axis, shapes[0].size(), op_type);
        const auto n = static_cast<double>(shapes[0][axis]);
        if (n == 1.0 && (a.p == 1 || a.p == 2)) {
            if (!in.empty() && in[0].lo >= 0.0) return {spec::value_facts::constant(1.0)};
            if (!in.empty() && in[0].hi <= 0.0) return {spec::value_facts::constant(-1.0)};
            f.gap = std::make_pair(-1.0, 1.0);
            f.integral = true;
            return {f};
        }
        if (n < 2.0 || (a.p != 1 && a.p != 2)) return {f};
        const double m = 1.01 * std::pow(n, -1.0 / static_cast<double>(a.p));  // 1% slack for rounding
        f.some_at_most = m;
        f.some_at_least = -m;
        return {f};
    }
};

inline constexpr auto reduce_ops =
    hana::tuple_t<reduce_sum, reduce_mean, reduce_max, reduce_min, reduce_prod, reduce_l1, reduce_l2, reduce_sum_square,
                  reduce_log_sum, reduce_log_sum_exp, arg_max, arg_min, softmax, log_softmax, hardmax,
                  layer_normalization, batch_normalization, instance_normalization, lp_normalization>;

/// ONNX-named aliases, the names the rest of the kit uses for op specs.
using ReduceSum = reduce_sum;
using ReduceMean = reduce_mean;
using ReduceMax = reduce_max;
using ReduceMin = reduce_min;
using ReduceProd = reduce_prod;
using ReduceL1 = reduce_l1;
using ReduceL2 = reduce_l2;
using ReduceSumSquare = reduce_sum_square;
using ReduceLogSum = reduce_log_sum;
using ReduceLogSumExp = reduce_log_sum_exp;
using ArgMax = arg_max;
using ArgMin = arg_min;
using Softmax = softmax;
using LogSoftmax = log_softmax;
using Hardmax = hardmax;
using LayerNormalization = layer_normalization;
using BatchNormalization = batch_normalization;
using InstanceNormalization = instance_normalization;
using LpNormalization = lp_normalization;


}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::reduce_attr, axes, keepdims);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::reduce_sum_attr, axes, keepdims, noop_with_empty_axes);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::arg_attr, axis, keepdims, select_last_index);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::softmax_attr, axis);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::layer_norm_attr, axis, epsilon, stash_type);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::batch_norm_attr, epsilon, momentum, training_mode);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::instance_norm_attr, epsilon);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::lp_norm_attr, axis, p);
