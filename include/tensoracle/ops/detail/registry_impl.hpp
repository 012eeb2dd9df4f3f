// tensoracle: the definition of ops::registry() for compiled mode, for the
// one file that defines TENSORACLE_IMPLEMENTATION (with the single header).
// The library tensoracle::compiled builds the same registry from one
// translation unit per op family instead (src/).
#pragma once

#include <vector>

#include "tensoracle/ops/all_ops.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle::ops {
const std::vector<spec::op_entry>& registry() {
    static const std::vector<spec::op_entry> entries = detail::make_registry(all_ops);
    return entries;
}
}  // namespace tensoracle::ops
