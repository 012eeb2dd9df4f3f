// tensoracle: PRelu (X, or slope * X where X < 0; slope broadcasts to X).
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/ops/detail/broadcast.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// PRelu(X, slope): slope broadcasts to X (unidirectionally).
struct PRelu : spec::like_input<0> {
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

}  // namespace tensoracle::ops
