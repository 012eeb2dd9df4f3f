// tensoracle: Abs (|X|, element-wise).
#pragma once

#include <string_view>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct abs_fn : formula::abs, spec::elementwise_signature<"Abs", 13, types::numeric> {
    static constexpr bool keeps_integers = true;
};

}  // namespace unary

using Abs = unary_elementwise<unary::abs_fn>;

}  // namespace tensoracle::ops
