// tensoracle: the names every op of ops/binary/ shares (namespace binary: the spec names
// dtype_set, types and no_attributes; corner_kind for broadcast_elementwise's facts; wrap and
// the wrapping_* integer arithmetic, used by Div and Pow).
#pragma once

#include <cstdint>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace binary {
using spec::dtype_set;
namespace types = spec::types;
using spec::no_attributes;

/// How an op's output enclosure follows from its inputs' (spec::facts::corners):
/// Min keeps every input's "some element <= m", Max its "some element >= m".
enum class corner_kind : std::uint8_t { plain, min, max };

/// Exact integer arithmetic that wraps instead of overflowing (UB-free).
template <class V>
V wrap(std::int64_t v) {
    return static_cast<V>(v);
}
using ops::formula::wrapping_add;
using ops::formula::wrapping_mul;
using ops::formula::wrapping_sub;
}  // namespace binary

}  // namespace tensoracle::ops
