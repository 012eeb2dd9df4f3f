// tensoracle: broadcast element-wise ops with two or more inputs: arithmetic,
// comparison and logic, Where, PRelu, Clip and Cast; one file per op in
// ops/binary/, shared code in ops/binary/detail/.
//
// Semantics chosen where ONNX leaves them open: integer Div and Mod by zero
// throw (no UB, no silent value); integer overflow wraps (two's complement).
// Integer Div's rounding and Mod's sign: in ops/binary/div.hpp and mod.hpp.
// Ops with floating outputs also run on AD scalars (run_real): the same
// kernels, with the scalar type as accumulator.
#pragma once

#include "tensoracle/ops/binary/add.hpp"
#include "tensoracle/ops/binary/sub.hpp"
#include "tensoracle/ops/binary/mul.hpp"
#include "tensoracle/ops/binary/div.hpp"
#include "tensoracle/ops/binary/pow.hpp"
#include "tensoracle/ops/binary/mod.hpp"
#include "tensoracle/ops/binary/max.hpp"
#include "tensoracle/ops/binary/min.hpp"
#include "tensoracle/ops/binary/sum.hpp"
#include "tensoracle/ops/binary/mean.hpp"
#include "tensoracle/ops/binary/equal.hpp"
#include "tensoracle/ops/binary/less.hpp"
#include "tensoracle/ops/binary/greater.hpp"
#include "tensoracle/ops/binary/less_or_equal.hpp"
#include "tensoracle/ops/binary/greater_or_equal.hpp"
#include "tensoracle/ops/binary/and.hpp"
#include "tensoracle/ops/binary/or.hpp"
#include "tensoracle/ops/binary/xor.hpp"
#include "tensoracle/ops/binary/where.hpp"
#include "tensoracle/ops/binary/prelu.hpp"
#include "tensoracle/ops/binary/clip.hpp"
#include "tensoracle/ops/binary/cast.hpp"

namespace tensoracle::ops {

inline constexpr auto binary_ops =
    hana::tuple_t<Add, Sub, Mul, Div, Pow, Mod, Max, Min, Sum, Mean, Equal, Less, Greater, LessOrEqual,
                  GreaterOrEqual, And, Or, Xor, Where, PRelu, Clip, Cast>;

}  // namespace tensoracle::ops
