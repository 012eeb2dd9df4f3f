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
#pragma once

#ifdef TENSORACLE_COMPILED
#error "tensoracle/registry_definition.hpp: in compiled mode the library tensoracle::compiled (or the TENSORACLE_IMPLEMENTATION file) defines the registry; drop this include"
#endif
#ifndef TENSORACLE_SEPARATE_REGISTRY
#error "tensoracle/registry_definition.hpp: define TENSORACLE_SEPARATE_REGISTRY for the whole target (see this header)"
#endif

#include "tensoracle/ad/op_rules.hpp"
#include "tensoracle/ops/all_ops.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle::ops {
const std::vector<spec::op_entry>& registry() {
    static const std::vector<spec::op_entry> entries = detail::make_registry(all_ops);
    return entries;
}
}  // namespace tensoracle::ops

namespace tensoracle::ad {
template const std::vector<derivative_rules<double>>& rules_table<double, ops::all_ops_type>(ops::all_ops_type);
template const std::vector<derivative_rules<float>>& rules_table<float, ops::all_ops_type>(ops::all_ops_type);
template const std::vector<derivative_rules<dual<double>>>& rules_table<dual<double>, ops::all_ops_type>(
    ops::all_ops_type);
template const std::vector<derivative_rules<dual<float>>>& rules_table<dual<float>, ops::all_ops_type>(
    ops::all_ops_type);
}  // namespace tensoracle::ad
