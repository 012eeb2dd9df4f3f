// tensoracle: the whole header-only kit that needs only the core dependencies
// (xtensor, xtl, Boost.Hana): core and accuracy, operator specs and reference
// kernels, graphs and the interpreter, automatic differentiation and gradient
// oracles, generation and input search, mutations.
//
// Including it instantiates the op registry (every kernel of every op, and
// their AD versions) in this file unless TENSORACLE_SEPARATE_REGISTRY is
// defined (then <tensoracle/registry_definition.hpp> goes in one file of the
// target): a test that only compares tensors is cheaper with
// <tensoracle/core.hpp>. Parts with optional dependencies have umbrellas of
// their own: <tensoracle/onnx.hpp> (ONNX I/O, conformance, case files;
// libonnx, protobuf, nlohmann-json), <tensoracle/campaign.hpp> (differential
// campaigns against real runtimes), <tensoracle/z3.hpp> (the Z3 solver
// backend), <tensoracle/blas.hpp> (BLAS fast paths).
#pragma once

#include "tensoracle/core.hpp"

#include "tensoracle/spec/attributes.hpp"
#include "tensoracle/spec/entry.hpp"
#include "tensoracle/spec/expr.hpp"
#include "tensoracle/spec/hints.hpp"
#include "tensoracle/spec/op.hpp"

#include "tensoracle/ops/fast_paths.hpp"
#include "tensoracle/ops/registry.hpp"

#include "tensoracle/graph/float64.hpp"
#include "tensoracle/graph/graph.hpp"
#include "tensoracle/graph/interpreter.hpp"

#include "tensoracle/ad.hpp"

#include "tensoracle/gen/generator.hpp"
#include "tensoracle/gen/input_search.hpp"

#include "tensoracle/mutate/mutate.hpp"
