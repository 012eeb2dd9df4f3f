// tensoracle: reduce_op<F>, the op spec of every Reduce* op from its formula F
// (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum, ReduceLogSumExp), and its attribute structs.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/reduce_util.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
struct reduce_attr {
    std::optional<std::vector<std::int64_t>> axes;
    std::int64_t keepdims = 1;
};
struct reduce_sum_attr {
    std::optional<std::vector<std::int64_t>> axes;
    std::int64_t keepdims = 1;
    std::int64_t noop_with_empty_axes = 0;
};

/// Formulas computed in double for integer inputs. A named concept, not an
/// inline requires-expression: Clang 14 cannot mangle the latter in a template.
template <class F>
concept real_valued_reduction = requires { F::real_valued; };
}  // namespace reduce

/// A Reduce* op from its formula F (F::reduce<T, A> maps one group, as A, to A).
template <class F>
struct reduce_op : spec::dtype_of_input<0> {
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

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::reduce_attr, axes, keepdims);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::reduce_sum_attr, axes, keepdims, noop_with_empty_axes);
