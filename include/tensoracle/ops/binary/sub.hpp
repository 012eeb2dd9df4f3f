// tensoracle: Sub (A - B, broadcast; integers wrap).
#pragma once

#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct sub_fn : formula::sub {
    static constexpr std::string_view op_type = "Sub";
    static constexpr int opset = 14;
    static constexpr dtype_set types = types::numeric;
    static constexpr dtype_set out_types = types::numeric;
    using attributes = no_attributes;
    static constexpr corner_kind corner_facts = corner_kind::plain;
    static void hints(spec::hints& h) { h.when_operands_equal(spec::value_facts::constant(0.0)); }
};

}  // namespace binary

using Sub = broadcast_elementwise<binary::sub_fn>;

}  // namespace tensoracle::ops
