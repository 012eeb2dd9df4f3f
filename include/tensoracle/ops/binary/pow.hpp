// tensoracle: Pow (X to the power Y, broadcast; Y may have another numeric type).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensoracle/ops/binary/detail/helpers.hpp"
#include "tensoracle/ops/detail/broadcast.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// Pow(X, Y): X and Y broadcast; Y may have another numeric type (ONNX T1).
/// Same-type operands compute in the accumulator type; mixed ones in double,
/// rounded once to X's type (numpy's promotion, then ONNX's cast to T). On AD
/// scalars both operands are the scalar type; an integer Y is a constant.
struct Pow : spec::dtype_of_input<0> {
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

}  // namespace tensoracle::ops
