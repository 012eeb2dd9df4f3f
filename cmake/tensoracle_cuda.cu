// The one translation unit that compiles tensoracle's CUDA kernels for the
// CMake target tensoracle::cuda; host code calls them through cuda/ops.hpp.
#include <tensoracle/cuda/ops.cuh>
