// tensoracle: Mean (the element-wise mean of one or more broadcast inputs).
#pragma once

#include <cstddef>
#include <string_view>

#include "tensoracle/ops/binary/detail/broadcast_elementwise.hpp"
#include "tensoracle/ops/formulas.hpp"

namespace tensoracle::ops {

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
struct mean_fn : formula::mean, spec::elementwise_signature<"Mean", 13, types::floating> {
    static constexpr bool variadic = true;
    template <class V>
    static V finish(V v, std::size_t n) { return v / static_cast<V>(n); }
};

}  // namespace binary

using Mean = broadcast_elementwise<binary::mean_fn>;

}  // namespace tensoracle::ops
