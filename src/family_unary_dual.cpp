// tensoracle::compiled: the AD rules over dual numbers (second order, as
// op_engine by name and graph AD use them) of the ops in ops/unary.hpp.
#include "family_tables.hpp"
#include "tensoracle/ad/op_rules.hpp"
#include "tensoracle/ops/unary.hpp"

namespace tensoracle::compiled_detail {
family_dual_tables unary_dual_tables() {
    return {ad::detail::collect_rules<ad::dual<double>>(ops::unary_ops),
            ad::detail::collect_rules<ad::dual<float>>(ops::unary_ops)};
}
}  // namespace tensoracle::compiled_detail
