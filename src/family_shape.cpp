// tensoracle::compiled: the registry entries and AD rules of the ops in
// ops/shape.hpp (every kernel of theirs, for every dtype and for dual and rvar).
#include "family_tables.hpp"
#include "tensoracle/ad/op_rules.hpp"
#include "tensoracle/ops/shape.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle::compiled_detail {
family_tables shape_tables() {
    return {ops::detail::make_registry(ops::shape_ops), ad::detail::collect_rules<double>(ops::shape_ops),
            ad::detail::collect_rules<float>(ops::shape_ops)};
}
}  // namespace tensoracle::compiled_detail
