// tensoracle: Where (X where condition holds, else Y; all three broadcast).
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "tensoracle/ops/detail/broadcast.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// Where(condition, X, Y): X where condition holds, else Y; all three broadcast.
struct Where : spec::dtype_of_input<1> {
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

}  // namespace tensoracle::ops
