// tensoracle: Identity (Y = X).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct identity_fn : formula::identity {
    static constexpr std::string_view op_type = "Identity";
    static constexpr int opset = 16;
    static constexpr dtype_set types = types::all;
    static constexpr dtype_set out_types = types::all;
    using attributes = no_attributes;
    static spec::hints hints() { return spec::hints{}.copies(0); }
};

}  // namespace unary

using Identity = unary_elementwise<unary::identity_fn>;

}  // namespace tensoracle::ops
