// tensoracle: element-wise unary ops (math and activations).
//
// Each op is a small formula struct F; unary_elementwise<F> turns it into a
// full spec (signature, shape inference both ways, domain, kernel, sampler).
// Floating kernels compute in float for f16/bf16/f32 and in double for f64
// (ONNX reference behaviour), then round once to the element type. AD scalars
// (ad::dual, ad::rvar) run the same formulas in themselves: run_real.
//
// One op per file under ops/unary/ (unary_elementwise<F>, value_range and the
// domain-rule helpers in ops/unary/detail/unary_elementwise.hpp). Each op's
// struct derives its apply() from the shared formula (ops/formulas.hpp).
// Value facts: keeps_integers (an integer input gives integers), integral_output (integers always).
#pragma once

#include "tensoracle/ops/unary/relu.hpp"
#include "tensoracle/ops/unary/abs.hpp"
#include "tensoracle/ops/unary/neg.hpp"
#include "tensoracle/ops/unary/sign.hpp"
#include "tensoracle/ops/unary/ceil.hpp"
#include "tensoracle/ops/unary/floor.hpp"
#include "tensoracle/ops/unary/round.hpp"
#include "tensoracle/ops/unary/exp.hpp"
#include "tensoracle/ops/unary/log.hpp"
#include "tensoracle/ops/unary/sqrt.hpp"
#include "tensoracle/ops/unary/reciprocal.hpp"
#include "tensoracle/ops/unary/sigmoid.hpp"
#include "tensoracle/ops/unary/tanh.hpp"
#include "tensoracle/ops/unary/softplus.hpp"
#include "tensoracle/ops/unary/softsign.hpp"
#include "tensoracle/ops/unary/erf.hpp"
#include "tensoracle/ops/unary/sin.hpp"
#include "tensoracle/ops/unary/cos.hpp"
#include "tensoracle/ops/unary/tan.hpp"
#include "tensoracle/ops/unary/asin.hpp"
#include "tensoracle/ops/unary/acos.hpp"
#include "tensoracle/ops/unary/atan.hpp"
#include "tensoracle/ops/unary/sinh.hpp"
#include "tensoracle/ops/unary/cosh.hpp"
#include "tensoracle/ops/unary/asinh.hpp"
#include "tensoracle/ops/unary/acosh.hpp"
#include "tensoracle/ops/unary/atanh.hpp"
#include "tensoracle/ops/unary/not.hpp"
#include "tensoracle/ops/unary/identity.hpp"
#include "tensoracle/ops/unary/leaky_relu.hpp"
#include "tensoracle/ops/unary/elu.hpp"
#include "tensoracle/ops/unary/celu.hpp"
#include "tensoracle/ops/unary/selu.hpp"
#include "tensoracle/ops/unary/hard_sigmoid.hpp"
#include "tensoracle/ops/unary/hard_swish.hpp"
#include "tensoracle/ops/unary/thresholded_relu.hpp"
#include "tensoracle/ops/unary/shrink.hpp"
#include "tensoracle/ops/unary/is_nan.hpp"
#include "tensoracle/ops/unary/is_inf.hpp"

namespace tensoracle::ops {

/// Every op of this family, for the registry.
inline constexpr auto unary_ops =
    hana::tuple_t<Relu, Abs, Neg, Sign, Ceil, Floor, Round, Exp, Log, Sqrt, Reciprocal, Sigmoid, Tanh, Softplus,
                  Softsign, Erf, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Not,
                  Identity, LeakyRelu, Elu, Celu, Selu, HardSigmoid, HardSwish, ThresholdedRelu, Shrink, IsNaN,
                  IsInf>;

}  // namespace tensoracle::ops
