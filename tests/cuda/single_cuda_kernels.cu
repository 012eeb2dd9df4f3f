// The single-file CUDA kernels compile on their own with nvcc (a user's one .cu file).
#include <tensoracle/cuda_kernels.cuh>
