// tensoracle: reduce::constant_of, the constant max shift of ReduceLogSumExp,
// Softmax and LogSoftmax.
#pragma once

#include "tensoracle/core/scalar.hpp"

namespace tensoracle::ops {

namespace reduce {
/// The value of a scalar as a constant of its own type (no derivative parts).
/// The max shifts of log-sum-exp and softmax use it: any constant shift c gives
/// the same function (exp(a - c) = exp(a) / exp(c) cancels), so its derivative
/// is exactly the unshifted one, to every order; a shift that carried the
/// derivative of the maximum would cancel only up to rounding.
template <class A>
A constant_of(const A& m) {
    if constexpr (ad_scalar<A>) {
        return A(primal(m));
    } else {
        return m;
    }
}
}  // namespace reduce

}  // namespace tensoracle::ops
