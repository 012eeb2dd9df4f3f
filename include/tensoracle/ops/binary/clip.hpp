// tensoracle: Clip (input clamped to the optional scalar bounds min and max).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// Clip(input, min?, max?): min and max are optional scalars.
struct Clip : spec::like_input<0> {
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

}  // namespace tensoracle::ops
