// tensoracle: Sub (A - B, broadcast; integers wrap).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct sub_fn : formula::sub, spec::elementwise_signature<"Sub", 14, types::numeric> {
    static constexpr corner_kind corner_facts = corner_kind::plain;
    static void hints(spec::hints& h) { h.when_operands_equal(spec::value_facts::constant(0.0)); }
};

}  // namespace binary

using Sub = broadcast_elementwise<binary::sub_fn>;

}  // namespace tensoracle::ops
