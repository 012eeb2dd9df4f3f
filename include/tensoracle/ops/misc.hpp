// tensoracle: constants, casts and small index ops: Constant, CastLike,
// Dropout (inference), CumSum, EyeLike, OneHot, TopK. One op per file under ops/misc/.
#pragma once

#include "tensoracle/ops/misc/constant.hpp"
#include "tensoracle/ops/misc/cast_like.hpp"
#include "tensoracle/ops/misc/dropout.hpp"
#include "tensoracle/ops/misc/cumsum.hpp"
#include "tensoracle/ops/misc/eye_like.hpp"
#include "tensoracle/ops/misc/one_hot.hpp"
#include "tensoracle/ops/misc/top_k.hpp"

namespace tensoracle::ops {

inline constexpr auto misc_ops = hana::tuple_t<Constant, CastLike, Dropout, CumSum, EyeLike, OneHot, TopK>;

}  // namespace tensoracle::ops
