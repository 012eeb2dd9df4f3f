// tensoracle: automatic differentiation and gradient oracles in one include.
//   dual numbers and tape variables (forward, reverse, nested), finite
//   differences, per-op JVP/VJP rules from the reference kernels, graph
//   JVP/VJP/HVP, the gradient oracle for engines given as callables, and the
//   kit's own ops as such an engine.
#pragma once

#include "tensoracle/ad/dual.hpp"
#include "tensoracle/ad/engine.hpp"
#include "tensoracle/ad/finite_difference.hpp"
#include "tensoracle/ad/graph.hpp"
#include "tensoracle/ad/op_derivatives.hpp"
#include "tensoracle/ad/op_rules.hpp"
#include "tensoracle/ad/oracle.hpp"
#include "tensoracle/ad/reverse.hpp"
#include "tensoracle/ad/typed_engine.hpp"
