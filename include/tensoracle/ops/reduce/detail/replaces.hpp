// tensoracle: reduce::replaces, the NaN-aware "does v beat the best so far" test of
// ArgMax, ArgMin (arg_reduce) and Hardmax.
#pragma once

#include "tensoracle/core/value_cast.hpp"

namespace tensoracle::ops {

namespace reduce {
using tensoracle::is_nan;

/// For ArgMax/ArgMin/Hardmax: does candidate v beat (or, with `ties`, tie)
/// the current best b? NaN is the extreme value either way.
template <bool Max, class T>
bool replaces(const T& v, const T& b, bool ties) {
    if (is_nan(b)) return ties && is_nan(v);
    if (is_nan(v)) return true;
    if constexpr (Max) {
        return v > b || (ties && v == b);
    } else {
        return v < b || (ties && v == b);
    }
}
}  // namespace reduce

}  // namespace tensoracle::ops
