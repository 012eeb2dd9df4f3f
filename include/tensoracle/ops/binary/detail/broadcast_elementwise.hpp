// tensoracle: broadcast_elementwise<F>, the full spec of a broadcast element-wise op from its
// fn struct F; Add, Sub, Mul, Div, Mod, Max, Min, Sum, Mean, Equal, Less, Greater, LessOrEqual,
// GreaterOrEqual, And, Or and Xor are made of it.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tensoracle/ops/binary/detail/helpers.hpp"
#include "tensoracle/ops/detail/broadcast.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// Two (or, with F::variadic, one or more) inputs broadcast together.
template <class F>
struct broadcast_elementwise : detail::formula_output_dtypes<F> {
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

}  // namespace tensoracle::ops
