// tensoracle: the Z3 backend of the generator's constraint solver (optional
// part: libz3, pkg-config z3), for cross-checks. Includes the whole kit.
#pragma once

#include "tensoracle/tensoracle.hpp"

#include "tensoracle/gen/z3_backend.hpp"
