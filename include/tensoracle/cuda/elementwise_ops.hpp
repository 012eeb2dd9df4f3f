// tensoracle: the element-wise ops the CUDA kernels run, listed once for both
// sides. nvcc's side (cuda/ops.cuh) dispatches cuda::unary and cuda::binary on
// these names and lists them (unary_op_types, binary_op_types); the host side
// (cuda/lowering.hpp) keys its table by the spec types of the same names and
// checks that each name is its spec's op_type. Macros over identifiers, not a
// tuple of spec types, because nvcc does not parse the spec layer.
#pragma once

/// X(Op, formula, integers): Op is the spec type tensoracle::ops::Op (its name
/// is its ONNX op_type), formula its per-element formula in ops::unary::formula,
/// integers whether int32/int64 inputs run too (the formula's integer branch).
/// The order is the order of cuda::unary_op_types().
#define TENSORACLE_CUDA_UNARY_OPS(X)     \
    X(Relu, relu, true)                  \
    X(Abs, abs, true)                    \
    X(Neg, neg, true)                    \
    X(Sign, sign, true)                  \
    X(Ceil, ceil, false)                 \
    X(Floor, floor, false)               \
    X(Round, round, false)               \
    X(Exp, exp, false)                   \
    X(Log, log, false)                   \
    X(Sqrt, sqrt, false)                 \
    X(Reciprocal, reciprocal, false)     \
    X(Sigmoid, sigmoid, false)           \
    X(Tanh, tanh, false)                 \
    X(Softplus, softplus, false)         \
    X(Softsign, softsign, false)         \
    X(Erf, erf, false)                   \
    X(Sin, sin, false)                   \
    X(Cos, cos, false)                   \
    X(Tan, tan, false)                   \
    X(Asin, asin, false)                 \
    X(Acos, acos, false)                 \
    X(Atan, atan, false)                 \
    X(Sinh, sinh, false)                 \
    X(Cosh, cosh, false)                 \
    X(Asinh, asinh, false)               \
    X(Acosh, acosh, false)               \
    X(Atanh, atanh, false)               \
    X(Identity, identity, true)          \
    X(LeakyRelu, leaky_relu, false)      \
    X(Elu, elu, false)                   \
    X(Celu, celu, false)                 \
    X(Selu, selu, false)                 \
    X(HardSigmoid, hard_sigmoid, false)  \
    X(HardSwish, hard_swish, false)      \
    X(ThresholdedRelu, thresholded_relu, false)

/// X(Op, formula, compares, floating_only): Op as above; formula the
/// per-element formula as cuda::binary names it (f: ops::binary::formula,
/// compare_formula: the comparisons); compares whether the output is bool;
/// floating_only whether integer inputs have no kernel. The order is the
/// order of cuda::binary_op_types().
#define TENSORACLE_CUDA_BINARY_OPS(X)                                                  \
    X(Add, f::add, false, false)                                                       \
    X(Sub, f::sub, false, false)                                                       \
    X(Mul, f::mul, false, false)                                                       \
    X(Div, f::div, false, true)                                                        \
    X(Pow, f::pow, false, true)                                                        \
    X(Max, f::max, false, false)                                                       \
    X(Min, f::min, false, false)                                                       \
    X(Mod, f::fmod, false, true)                                                       \
    X(Equal, compare_formula<comparison::equal>, true, false)                          \
    X(Less, compare_formula<comparison::less>, true, false)                            \
    X(Greater, compare_formula<comparison::greater>, true, false)                      \
    X(LessOrEqual, compare_formula<comparison::less_or_equal>, true, false)            \
    X(GreaterOrEqual, compare_formula<comparison::greater_or_equal>, true, false)
