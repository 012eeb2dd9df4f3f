// Builds with nvcc against tensoracle's headers; runs a kernel where a GPU
// exists and exits 77 (CTest: skipped) where none does.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include <tensoracle/core/float16.hpp>

__global__ void saxpy(int n, float a, const float* x, float* y) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::puts("no CUDA device: skipped");
        return 77;
    }
    const int n = 1 << 16;
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
        x[i] = static_cast<float>(tensoracle::float16(i % 100));  // exact in binary16
        y[i] = 1.0f;
    }
    float *dx = nullptr, *dy = nullptr;
    if (cudaMalloc(&dx, n * sizeof(float)) != cudaSuccess || cudaMalloc(&dy, n * sizeof(float)) != cudaSuccess) {
        std::puts("cudaMalloc failed");
        return 1;
    }
    cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, dx, dy);
    cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(dx);
    cudaFree(dy);
    for (int i = 0; i < n; ++i) {
        if (y[i] != 2.0f * static_cast<float>(i % 100) + 1.0f) {
            std::printf("mismatch at %d: %f\n", i, y[i]);
            return 1;
        }
    }
    std::puts("cuda smoke OK");
    return 0;
}
