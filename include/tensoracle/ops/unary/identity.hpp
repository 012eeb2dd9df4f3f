// tensoracle: Identity (Y = X).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct identity_fn : formula::identity, spec::elementwise_signature<"Identity", 16, types::all> {
    static spec::hints hints() { return spec::hints{}.copies(0); }
};

}  // namespace unary

using Identity = unary_elementwise<unary::identity_fn>;

}  // namespace tensoracle::ops
