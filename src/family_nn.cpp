// tensoracle::compiled: the registry entries and AD rules of the ops in
// ops/nn.hpp (every kernel of theirs, for every dtype and for dual and rvar).
#include "family_tables.hpp"
#include "tensoracle/ad/op_rules.hpp"
#include "tensoracle/ops/nn.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle::compiled_detail {
family_tables nn_tables() {
    return {ops::detail::make_registry(ops::nn_ops), ad::detail::collect_rules<double>(ops::nn_ops),
            ad::detail::collect_rules<float>(ops::nn_ops)};
}
}  // namespace tensoracle::compiled_detail
