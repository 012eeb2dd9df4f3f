// tensoracle::compiled: the registry entries and AD rules of the ops in
// ops/binary.hpp (every kernel of theirs, for every dtype and for dual and rvar).
#include "family_tables.hpp"
#include "tensoracle/ad/op_rules.hpp"
#include "tensoracle/ops/binary.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle::compiled_detail {
family_tables binary_tables() {
    return {ops::detail::make_registry(ops::binary_ops), ad::detail::collect_rules<double>(ops::binary_ops),
            ad::detail::collect_rules<float>(ops::binary_ops)};
}
}  // namespace tensoracle::compiled_detail
