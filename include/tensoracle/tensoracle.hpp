// tensoracle: umbrella header. Test-framework adapters are separate:
// <tensoracle/doctest.hpp> and <tensoracle/gtest.hpp>.
#pragma once

#include "tensoracle/version.hpp"

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/error.hpp"
#include "tensoracle/core/float16.hpp"
#include "tensoracle/core/rng.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/core/value_cast.hpp"

#include "tensoracle/accuracy/compare.hpp"
#include "tensoracle/accuracy/outcome.hpp"
#include "tensoracle/accuracy/score.hpp"
#include "tensoracle/accuracy/tolerance.hpp"
#include "tensoracle/accuracy/ulp.hpp"
