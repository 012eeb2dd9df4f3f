// tensoracle: the core and accuracy layers (tensors, dtypes, float16,
// random data, comparisons, tolerance levels, ULPs, outcomes, scores): what a
// test that only compares tensors needs, cheap to compile (about 1.4x an
// xtensor-only file). <tensoracle/tensoracle.hpp> is the whole kit.
// Test-framework adapters: <tensoracle/doctest.hpp>, <tensoracle/gtest.hpp>.
#pragma once

#include "tensoracle/version.hpp"

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/error.hpp"
#include "tensoracle/core/float16.hpp"
#include "tensoracle/core/memory.hpp"
#include "tensoracle/core/rng.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/core/value_cast.hpp"

#include "tensoracle/accuracy/compare.hpp"
#include "tensoracle/accuracy/outcome.hpp"
#include "tensoracle/accuracy/score.hpp"
#include "tensoracle/accuracy/tolerance.hpp"
#include "tensoracle/accuracy/ulp.hpp"
