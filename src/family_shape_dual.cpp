// tensoracle::compiled: the AD rules over dual numbers (second order, as
// op_engine by name and graph AD use them) of the ops in ops/shape.hpp.
#include "family_tables.hpp"
#include "tensoracle/ad/op_rules.hpp"
#include "tensoracle/ops/shape.hpp"

namespace tensoracle::compiled_detail {
family_dual_tables shape_dual_tables() {
    return {ad::detail::collect_rules<ad::dual<double>>(ops::shape_ops),
            ad::detail::collect_rules<ad::dual<float>>(ops::shape_ops)};
}
}  // namespace tensoracle::compiled_detail
