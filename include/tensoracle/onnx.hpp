// tensoracle: ONNX I/O and what builds on it (optional part: libonnx,
// protobuf and nlohmann-json; CMake target tensoracle::onnx): models and
// tensors to and from files, the conformance runner, test cases on disk,
// JSON generator configurations and mutant files. Includes the whole kit.
#pragma once

#include "tensoracle/tensoracle.hpp"

#include "tensoracle/gen/config_json.hpp"
#include "tensoracle/io/case_files.hpp"
#include "tensoracle/io/conformance.hpp"
#include "tensoracle/io/onnx.hpp"
#include "tensoracle/mutate/mutant_files.hpp"
