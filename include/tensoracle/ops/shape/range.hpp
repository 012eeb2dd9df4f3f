// tensoracle: Range (the sequence start, start + delta, ... up to limit).
//
// Semantics chosen where ONNX leaves them open: Range on floats computes the
// count and the values start + i * delta in double and rounds once to T.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// Range-11(start, limit, delta): start + i * delta for i in
/// [0, max(ceil((limit - start) / delta), 0)). delta must be non-zero. Integer
/// inputs are symbols (the length is symbolic); float inputs are computed in
/// double (count and values) and rounded once to T.
struct Range : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Range";
    static constexpr int opset = 11;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::dtypes_of(dtype::f32, dtype::f64, dtype::i16, dtype::i32, dtype::i64);
    static constexpr std::array<spec::value_spec, 3> inputs{{{"start", types, {0, 0}}, {"limit", types, {0, 0}}, {"delta", types, {0, 0}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", types, {1, 1}}}};
    static constexpr std::int64_t max_elements = std::int64_t{1} << 40;  // implementation limit

    static bool symbolic(const spec::context& c) { return c.input_dtype(0) == dtype::i64 || c.input_dtype(0) == dtype::i32; }
    /// The concrete element count; throws on delta == 0, non-finite inputs, overflow.
    static std::int64_t count(const tensor& start, const tensor& limit, const tensor& delta) {
        if (info(start.element_dtype()).is_floating) {
            const double s = start.value_as_double(0), l = limit.value_as_double(0), d = delta.value_as_double(0);
            if (!std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) throw error(op_type, "start, limit and delta must be finite");
            if (d == 0.0) throw error(op_type, "delta is 0");
            const double n = std::ceil((l - s) / d);
            if (!(n < static_cast<double>(max_elements))) throw error(op_type, "the output would have more than 2^40 elements");
            return n > 0 ? static_cast<std::int64_t>(n) : 0;
        }
        const auto s = start.to<std::int64_t>().data()[0], l = limit.to<std::int64_t>().data()[0], d = delta.to<std::int64_t>().data()[0];
        if (d == 0) throw error(op_type, "delta is 0");
        std::int64_t diff = 0;
        if (__builtin_sub_overflow(l, s, &diff)) throw error(op_type, "limit - start overflows int64");
        std::int64_t n = 0;
        if (d > 0) {
            n = diff <= 0 ? 0 : (diff - 1) / d + 1;
        } else {
            // ceil(|diff| / |d|) = floor((|diff| - 1) / |d|) + 1; |d| as unsigned, so INT64_MIN does not overflow.
            n = diff >= 0 ? 0 : static_cast<std::int64_t>(static_cast<std::uint64_t>(-(diff + 1)) / (0 - static_cast<std::uint64_t>(d))) + 1;
        }
        if (n > max_elements) throw error(op_type, "the output would have more than 2^40 elements");
        return n;
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (symbolic(c)) {
            return {{c.value(2, 0) != 0, "delta is not 0"}};
        }
        const double d = c.input(2).value_as_double(0);
        return {shape_util::concrete_fact(d != 0.0, "delta is not 0")};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        if (symbolic(c)) {
            const auto s = c.value(0, 0), l = c.value(1, 0), d = c.value(2, 0);
            const auto diff = l - s;
            return {{select(d > 0, select(diff <= 0, spec::expr(0), (diff - 1) / d + 1),
                            select(diff >= 0, spec::expr(0), spec::expr(1) - (spec::expr(-1) - diff) / d))}};
        }
        return {{spec::expr(count(c.input(0), c.input(1), c.input(2)))}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank != 1) return {};
        return {{{out}, {0}}, {{out}, {0}}, {{out}, {0}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(T start, T limit, T delta) {
        static_assert(spec::dtype_accepted<Range, T>::value);
        const auto scalar = [](T v) {
            auto a = array<T>::from_shape(shape_type{});
            a.data()[0] = v;
            return tensor(a);
        };
        const auto n = static_cast<std::size_t>(count(scalar(start), scalar(limit), scalar(delta)));
        auto y = array<T>::from_shape({n});
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (std::is_floating_point_v<T>) {
                y.data()[i] = static_cast<T>(static_cast<double>(start) + static_cast<double>(i) * static_cast<double>(delta));
            } else {  // stays within [start, limit): no overflow
                y.data()[i] = static_cast<T>(static_cast<std::int64_t>(start) + static_cast<std::int64_t>(i) * static_cast<std::int64_t>(delta));
            }
        }
        return y;
    }
    // Not differentiable: a generator of positions / index sequences whose length steps with its inputs; kept constant.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).values<T>()[0], c.input(1).values<T>()[0], c.input(2).values<T>()[0]));
        }));
    }
    template <int = 0>
    static spec::hints hints() {
        // Floating (and int16) ranges read their data: start, limit, delta giving 1..10 elements.
        auto scalar = [](std::size_t which) {
            return [which](rng& g, const spec::context& c) {
                const double start = static_cast<double>(g.integer(-10, 10));
                const double delta = g.bernoulli(0.5) ? static_cast<double>(g.integer(1, 4)) : -static_cast<double>(g.integer(1, 4));
                const double v = which == 0 ? start : which == 2 ? delta : start + delta * static_cast<double>(g.integer(1, 10));
                auto t = array<double>::from_shape(shape_type{});
                t.data()[0] = v;
                return tensor::from_array_as(t, c.input_dtype(which));
            };
        };
        return spec::hints{}.before_solving(0, scalar(0)).before_solving(1, scalar(1)).before_solving(2, scalar(2));
    }
};

}  // namespace tensoracle::ops
