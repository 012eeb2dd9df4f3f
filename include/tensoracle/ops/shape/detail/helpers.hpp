// tensoracle: the helpers the ops of ops/shape/ share (namespace shape_detail: the
// rank limit max_rank, run_data / run_real_data for the ops with one output of the
// data dtype, random_indices for the Gather and GatherElements hints, int64_scalar).
#pragma once

#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace shape_detail {
namespace types = spec::types;
using spec::expr;
using spec::constraint;
using spec::context;

inline constexpr std::size_t max_rank = 8;

/// Random indices of dtype d and shape s into the dim of input 0 at the op's
/// `axis` attribute, negative ones included (Gather, GatherElements hints).
inline tensor random_indices(rng& g, const context& c, dtype d, const shape_type& s) {
    const auto axis = std::get<std::int64_t>(c.attributes().at("axis"));
    const auto dims = c.input(0).shape();
    const auto dim = static_cast<std::int64_t>(dims[spec::normalize_axis(axis, dims.size(), c.op_type())]);
    auto idx = array<std::int64_t>::from_shape(s);
    for (auto& v : idx) v = dim > 0 ? g.integer(-dim, dim - 1) : 0;
    return tensor::from_array_as(idx, d);
}

/// An int64 scalar tensor.
inline tensor int64_scalar(std::int64_t v) {
    auto a = array<std::int64_t>::from_shape(shape_type{});
    a.data()[0] = v;
    return tensor(a);
}

/// run() of an op with one output of the data input's dtype: Op::run_typed<T>(c, x) reads the op's other
/// inputs and attributes from c and runs the kernel on x, input 0 as stored.
template <class Op>
std::vector<tensor> run_data(const context& c) {
    return detail::single_output(detail::dispatch<Op::inputs[0].types>(c.input_dtype(0), Op::op_type, [&](auto t) {
        using T = typename decltype(t)::type;
        return tensor(Op::template run_typed<T>(c, c.input(0).as_array<T>()));
    }));
}

/// run_real() of the same ops: the same kernel on input 0 lifted to S. Data
/// movement copies scalars, so each output element carries the derivative of
/// the input element it came from. Integer and bool data make an integer /
/// bool output, which run_real leaves to run() (a placeholder).
template <class Op, class S>
std::vector<array<S>> run_real_data(const context& c, const std::vector<array<S>>& x) {
    if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
    return {Op::template run_typed<S>(c, x[0])};
}
}  // namespace shape_detail

}  // namespace tensoracle::ops
