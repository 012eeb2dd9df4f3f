// tensoracle::compiled, private: the registry entries and AD rules of each op
// family, each family built in two translation units of its own (family_*.cpp:
// the entries and the rules in double and float; family_*_dual.cpp: the rules
// in dual<double> and dual<float>, for second order; both generated from the
// family list in src/CMakeLists.txt) so that the kernels of
// the kit's ops compile in parallel and no one object holds them all;
// registry.cpp joins them.
#pragma once

#include <vector>

#include "family_list.hpp"
#include "tensoracle/ad/op_derivatives.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::compiled_detail {

/// One family's part of the registry and of the AD rule tables, unsorted.
struct family_tables {
    std::vector<spec::op_entry> entries;
    std::vector<ad::derivative_rules<double>> rules_f64;
    std::vector<ad::derivative_rules<float>> rules_f32;
};
/// One family's part of the AD rule tables over dual numbers, unsorted.
struct family_dual_tables {
    std::vector<ad::derivative_rules<ad::dual<double>>> rules_f64;
    std::vector<ad::derivative_rules<ad::dual<float>>> rules_f32;
};

#define TENSORACLE_DECLARE_FAMILY(name) \
    [[nodiscard]] family_tables name##_tables(); \
    [[nodiscard]] family_dual_tables name##_dual_tables();
TENSORACLE_OP_FAMILIES(TENSORACLE_DECLARE_FAMILY)
#undef TENSORACLE_DECLARE_FAMILY

}  // namespace tensoracle::compiled_detail
