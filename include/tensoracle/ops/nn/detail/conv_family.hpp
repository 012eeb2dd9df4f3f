// tensoracle: conv_family<Op>, the spec members Conv and ConvTranspose state alike.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace nn {
/// Conv and ConvTranspose: validity and shapes come from one model of the dims
/// (Op::shape_model(Op::context_dims(c))); X and W have rank 3-5 and one dtype,
/// B is a vector; there are no domain rules.
template <class Op>
struct conv_family {
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = Op::shape_model(Op::context_dims(c));
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!Op::types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}, {{out}, {rank}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) {
        return {};
    }
};
}  // namespace nn

}  // namespace tensoracle::ops
