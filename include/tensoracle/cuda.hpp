// tensoracle: the CUDA part of the kit, host side: device tensors, the CUDA
// reference kernels' API and the graph runner with per-node CPU fallback.
// Optional: needs the CUDA runtime's headers, and the kernels compiled once
// by nvcc (link the CMake target tensoracle::cuda, or compile
// <tensoracle/cuda/ops.cuh> in one .cu file of your own).
#pragma once

#include "tensoracle/cuda/device_tensor.hpp"
#include "tensoracle/cuda/graph.hpp"
#include "tensoracle/cuda/layout.hpp"
#include "tensoracle/cuda/ops.hpp"
