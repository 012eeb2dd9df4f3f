// GENERATED FILE - DO NOT EDIT.
// Made by scripts/amalgamate from include/tensoracle/registry_definition.hpp; edit those headers and rerun it.
// tensoracle: header-only test kit for deep-learning compilers and AD engines.
#pragma once
#include "tensoracle.hpp"
// ---- begin tensoracle/registry_definition.hpp ----
// tensoracle: the one definition of the op registry and the AD rule tables
// for a target built with TENSORACLE_SEPARATE_REGISTRY.
//
// Every kernel of every op (and its AD versions) is instantiated where the
// registry is built. By default that is every translation unit that uses the
// registry, the interpreter or graph AD (about 30 s each at -O0). A target
// with many such files can build it once instead:
//
//   target_compile_definitions(my_tests PRIVATE TENSORACLE_SEPARATE_REGISTRY)
//   // and in exactly one source file of my_tests:
//   #include <tensoracle/registry_definition.hpp>
//
// The macro must be defined for every file of the target (a compile
// definition, not a #define in one file): a file without it would define an
// inline registry() beside this one.

#ifndef TENSORACLE_SEPARATE_REGISTRY
#error "tensoracle/registry_definition.hpp: define TENSORACLE_SEPARATE_REGISTRY for the whole target (see this header)"
#endif


namespace tensoracle::ops {
const std::vector<spec::op_entry>& registry() {
    static const std::vector<spec::op_entry> entries = detail::make_registry(all_ops);
    return entries;
}
}  // namespace tensoracle::ops

namespace tensoracle::ad {
template const std::vector<derivative_rules<double>>& rules_table<double, ops::all_ops_type>(ops::all_ops_type);
template const std::vector<derivative_rules<float>>& rules_table<float, ops::all_ops_type>(ops::all_ops_type);
}  // namespace tensoracle::ad
// ---- end tensoracle/registry_definition.hpp ----
