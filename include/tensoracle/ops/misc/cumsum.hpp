// tensoracle: CumSum (running sums along an axis).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct cumsum_attr {
    std::int64_t exclusive = 0;
    std::int64_t reverse = 0;
};

/// CumSum(x, axis): running sums along axis (exclusive: without the element
/// itself; reverse: from the end). Integer sums wrap.
struct CumSum : spec::like_input<0> {
    static constexpr std::string_view op_type = "CumSum";
    static constexpr int opset = 14;
    using attributes = cumsum_attr;
    static constexpr spec::dtype_set types =
        spec::types::floating | spec::dtypes_of(dtype::i32, dtype::i64);
    static constexpr std::array<spec::value_spec, 2> inputs{{{"x", types, {1, 8}}, {"axis", spec::types::indices, {0, 1}, "T2"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"y", types}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto r = static_cast<std::int64_t>(c.rank(0));
        const auto axis = c.values(1);
        std::vector<spec::constraint> out{{spec::expr(axis.size()) == 1, "axis is a single value"}};
        if (axis.size() == 1) out.push_back({axis[0] >= -r && axis[0] < r, "axis in [-rank, rank)"});
        return out;
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {spec::types::indices.members(), {0, 1}}};  // axis: i32/i64, a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, std::size_t axis, const attributes& a) {
        static_assert(spec::dtype_accepted<CumSum, T>::value);
        // f16/bf16/f32 in float, f64 in double; integers and AD scalars in themselves.
        using acc = std::conditional_t<floating_element<T>, std::conditional_t<std::is_same_v<T, double>, double, float>, T>;
        const shape_type s(x.shape().begin(), x.shape().end());
        const auto st = detail::strides_of(s);
        auto y = array<T>::from_shape(s);
        const std::size_t n = s[axis], stride = st[axis];
        for (std::size_t base = 0; base < x.size(); ++base) {
            if ((base / stride) % n != 0) continue;  // start of a line along axis
            acc running = acc(0);
            for (std::size_t j = 0; j < n; ++j) {
                const std::size_t k = a.reverse != 0 ? n - 1 - j : j;
                const std::size_t f = base + k * stride;
                const acc v = static_cast<acc>(x.data()[f]);
                if (a.exclusive == 0) running = add(running, v);
                y.data()[f] = value_cast<T>(running);
                if (a.exclusive != 0) running = add(running, v);
            }
        }
        return y;
    }
    template <class V>
    static V add(V a, V b) {
        if constexpr (std::is_integral_v<V>) {
            return static_cast<V>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
        } else {
            return a + b;
        }
    }
    static std::size_t axis_of(const spec::context& c) {
        return spec::normalize_axis(c.input(1).to<std::int64_t>().data()[0], c.rank(0), op_type);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = axis_of(c);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), axis, a));
        }));
    }
    /// The kernel on AD scalar S; integer sums have no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = axis_of(c);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute<S>(x[0], axis, a)};
    }
    template <int = 0>
    static spec::hints hints() {
        // An exclusive sum starts every row at 0; along an axis of length 1 it is
        // all 0, and an inclusive one is X itself.
        return spec::hints{}.flag("exclusive").flag("reverse").facts(
            [](std::span<const spec::value_facts> in, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                const bool exclusive = spec::parse_attributes<attributes>(attrs, op_type).exclusive != 0;
                bool single = false;  // the summed axis has length 1
                if (!shapes.empty()) {
                    std::size_t n = 1;
                    for (const auto d : shapes[0]) n *= d;
                    single = n == 1;
                    if (!single && in.size() > 1 && in[1].lo == in[1].hi && std::fabs(in[1].lo) <= 64.0) {  // a known axis
                        const auto r = static_cast<std::int64_t>(shapes[0].size());
                        const auto a = static_cast<std::int64_t>(in[1].lo);
                        single = a >= -r && a < r && shapes[0][static_cast<std::size_t>(a < 0 ? a + r : a)] == 1;
                    }
                }
                spec::value_facts out;
                if (single) {
                    out = exclusive ? spec::value_facts::constant(0.0) : (in.empty() ? out : in[0]);
                } else if (exclusive) {
                    out.force(0.0);
                }
                return std::vector<spec::value_facts>{out};
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::cumsum_attr, exclusive, reverse);
