// tensoracle::compiled: the AD rules over dual numbers (second order, as
// op_engine by name and graph AD use them) of the ops in ops/misc.hpp.
#include "family_tables.hpp"
#include "tensoracle/ad/op_rules.hpp"
#include "tensoracle/ops/misc.hpp"

namespace tensoracle::compiled_detail {
family_dual_tables misc_dual_tables() {
    return {ad::detail::collect_rules<ad::dual<double>>(ops::misc_ops),
            ad::detail::collect_rules<ad::dual<float>>(ops::misc_ops)};
}
}  // namespace tensoracle::compiled_detail
