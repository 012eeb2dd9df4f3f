// tensoracle: two_inputs_and_optional_third<Op>, the run() and run_real() shared by Gemm,
// Conv and ConvTranspose.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace nn {
/// run() and run_real<S>() of ops computed as Op::compute<T>(a, b, optional c,
/// attributes): Gemm (C), Conv and ConvTranspose (B). One body for plain
/// types and AD scalars; every floating input is differentiable, and integer
/// instances (Gemm) have no floating output (placeholder).
template <class Op>
struct two_inputs_and_optional_third {
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type);
        return ops::detail::single_output(ops::detail::dispatch<Op::types>(c.input_dtype(0), Op::op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (requires { Op::template fast<T>(c, at); }) {
                if (auto y = Op::template fast<T>(c, at)) return std::move(*y);
            }
            return tensor(run_typed<T>(c, at, [&](std::size_t i) { return c.input(i).template as_array<T>(); }));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        const auto at = spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type);
        return {run_typed<S>(c, at, [&](std::size_t i) -> const array<S>& { return x[i]; })};
    }
    // Attrs is a parameter, not Op::attributes: Op is incomplete where this base is instantiated.
    template <class T, class Attrs, class Get>
    static array<T> run_typed(const spec::context& c, const Attrs& at, const Get& get) {
        std::optional<array<T>> third;
        if (c.has_input(2)) third = get(2);
        return Op::template compute<T>(get(0), get(1), third, at);
    }
};
}  // namespace nn

}  // namespace tensoracle::ops
