// CUDA reference kernels: element-wise and reduction bandwidth as a fraction
// of the GPU's memory bandwidth (its specification, and a device-to-device
// copy measured in the same run), and MatMul/Gemm against a direct cuBLAS
// call of the same shape and compute type, timed side by side.
// Usage: tensoracle_bench_cuda [--json FILE]. Without a GPU it says so and exits 0.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <tensoracle/core/rng.hpp>
#include <tensoracle/cuda/ops.hpp>

namespace to = tensoracle;
namespace tc = tensoracle::cuda;
using to::dtype;

namespace {

/// Median of `runs` timings (ms) of f after two warm-up calls, with CUDA events.
double time_ms(const std::function<void()>& f, int runs = 15) {
    f();
    f();
    tc::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    cudaEvent_t a = nullptr, b = nullptr;
    tc::check(cudaEventCreate(&a), "cudaEventCreate");
    tc::check(cudaEventCreate(&b), "cudaEventCreate");
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
        tc::check(cudaEventRecord(a), "cudaEventRecord");
        f();
        tc::check(cudaEventRecord(b), "cudaEventRecord");
        tc::check(cudaEventSynchronize(b), "cudaEventSynchronize");
        float t = 0;
        tc::check(cudaEventElapsedTime(&t, a, b), "cudaEventElapsedTime");
        ms.push_back(t);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

tc::device_tensor random_device(dtype d, const to::shape_type& shape, std::uint64_t seed) {
    to::rng r(seed);
    auto a = to::array<float>::from_shape(shape);
    for (auto& v : a) v = static_cast<float>(r.uniform(-1.0, 1.0));
    return tc::to_device(to::tensor(a).cast(d));
}

struct row {
    std::string name;
    double ms;
    double value;     // GB/s or TFLOP/s
    double fraction;  // of the spec bandwidth, or ours / cuBLAS speed
    std::string unit;
};

}  // namespace

int main(int argc, char** argv) {
    std::string json;
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::strcmp(argv[i], "--json") == 0) json = argv[i + 1];
    }
    if (!tc::device_available()) {
        std::puts("no CUDA device: nothing to measure");
        return 0;
    }
    cudaDeviceProp prop{};
    tc::check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    int mem_khz = 0, bus_bits = 0;
    tc::check(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0), "cudaDeviceGetAttribute");
    tc::check(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0), "cudaDeviceGetAttribute");
    const double spec_gbs = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;  // double data rate
    std::printf("device: %s, %d SMs, memory %.0f GB/s by its specification\n", prop.name, prop.multiProcessorCount,
                spec_gbs);

    std::vector<row> rows;
    const auto bandwidth = [&](const std::string& name, double bytes, const std::function<void()>& f) {
        const double ms = time_ms(f);
        const double gbs = bytes / (ms * 1e-3) / 1e9;
        rows.push_back({name, ms, gbs, gbs / spec_gbs, "GB/s"});
    };

    const std::size_t n = std::size_t{1} << 26;  // 64 Mi elements, 256 MiB in f32
    {
        const auto x = random_device(dtype::f32, {n}, 1);
        auto y = tc::device_tensor::empty(dtype::f32, {n});
        bandwidth("device-to-device copy (cudaMemcpy), f32 2^26", 8.0 * n, [&] {
            tc::check(cudaMemcpy(y.data(), x.data(), 4 * n, cudaMemcpyDeviceToDevice), "cudaMemcpy");
        });
    }
    {
        const auto a = random_device(dtype::f32, {n}, 2), b = random_device(dtype::f32, {n}, 3);
        bandwidth("Add f32 2^26 (read 2, write 1)", 12.0 * n, [&] { (void)tc::binary("Add", a, b); });
        bandwidth("Relu f32 2^26", 8.0 * n, [&] { (void)tc::unary("Relu", a); });
        bandwidth("Sigmoid f32 2^26", 8.0 * n, [&] { (void)tc::unary("Sigmoid", a); });
        const auto row_vec = random_device(dtype::f32, {8192}, 4);
        const auto m = a.reshaped({8192, 8192});
        bandwidth("Add f32 [8192,8192] + [8192] (broadcast)", 8.0 * n, [&] { (void)tc::binary("Add", m, row_vec); });
        bandwidth("Add f32 transposed view [8192,8192]^T + [8192,8192]", 12.0 * n,
                  [&] { (void)tc::binary("Add", m.permuted({1, 0}), m); });
        bandwidth("ReduceSum f32 2^26, all axes", 4.0 * n, [&] { (void)tc::reduce(tc::reduce_kind::sum, a, {}); });
        const auto r1 = a.reshaped({16384, 4096});
        bandwidth("ReduceSum f32 [16384,4096] axis -1", 4.0 * n, [&] { (void)tc::reduce(tc::reduce_kind::sum, r1, {-1}); });
        bandwidth("ReduceMax f32 [16384,4096] axis -1", 4.0 * n, [&] { (void)tc::reduce(tc::reduce_kind::max, r1, {-1}); });
        const auto r0 = a.reshaped({4096, 16384});
        bandwidth("ReduceSum f32 [4096,16384] axis 0", 4.0 * n, [&] { (void)tc::reduce(tc::reduce_kind::sum, r0, {0}); });
        bandwidth("Softmax f32 [16384,4096] axis -1 (read 1, write 1)", 8.0 * n, [&] { (void)tc::softmax(r1, -1); });
    }
    {
        const auto a = random_device(dtype::f16, {n}, 5), b = random_device(dtype::f16, {n}, 6);
        bandwidth("Add f16 2^26", 6.0 * n, [&] { (void)tc::binary("Add", a, b); });
        bandwidth("ReduceSum f16 2^26, all axes", 2.0 * n, [&] { (void)tc::reduce(tc::reduce_kind::sum, a, {}); });
    }

    // Products against a direct cuBLAS call of the same shape and compute type.
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw tc::cuda_error("cublasCreate", "failed");
    const auto product = [&](const std::string& name, dtype d, cudaDataType_t t, cublasComputeType_t ct,
                             tc::gemm_precision p, int m, int k, int nn, int batch) {
        const auto a = random_device(d, batch > 1 ? to::shape_type{std::size_t(batch), std::size_t(m), std::size_t(k)}
                                                  : to::shape_type{std::size_t(m), std::size_t(k)}, 7);
        const auto b = random_device(d, batch > 1 ? to::shape_type{std::size_t(batch), std::size_t(k), std::size_t(nn)}
                                                  : to::shape_type{std::size_t(k), std::size_t(nn)}, 8);
        auto c = tc::device_tensor::empty(d, {std::size_t(batch) * m * nn});
        const float one = 1.0f, zero = 0.0f;
        const double oned = 1.0, zerod = 0.0;
        const bool dbl = d == dtype::f64;
        const double ours = time_ms([&] { (void)tc::matmul(a, b, p); }, 9);
        const double raw = time_ms(
            [&] {
                const auto s = cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, nn, m, k,
                                                          dbl ? static_cast<const void*>(&oned) : &one, b.data(), t, nn,
                                                          static_cast<long long>(k) * nn, a.data(), t, k,
                                                          static_cast<long long>(m) * k,
                                                          dbl ? static_cast<const void*>(&zerod) : &zero, c.data(), t, nn,
                                                          static_cast<long long>(m) * nn, batch, ct, CUBLAS_GEMM_DEFAULT);
                if (s != CUBLAS_STATUS_SUCCESS) throw tc::cuda_error("cublasGemmStridedBatchedEx", cublasGetStatusString(s));
            },
            9);
        const double flop = 2.0 * batch * m * k * nn;
        rows.push_back({name + " (ours)", ours, flop / (ours * 1e-3) / 1e12, raw / ours, "TFLOP/s"});
        rows.push_back({name + " (cuBLAS direct)", raw, flop / (raw * 1e-3) / 1e12, 1.0, "TFLOP/s"});
    };
    product("MatMul f32 pedantic 4096^3", dtype::f32, CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC, tc::gemm_precision::pedantic,
            4096, 4096, 4096, 1);
    product("MatMul f32 TF32 4096^3", dtype::f32, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, tc::gemm_precision::tf32, 4096,
            4096, 4096, 1);
    product("MatMul f16 (f32 accumulate) 4096^3", dtype::f16, CUDA_R_16F, CUBLAS_COMPUTE_32F, tc::gemm_precision::fast_default,
            4096, 4096, 4096, 1);
    product("MatMul f64 2048^3", dtype::f64, CUDA_R_64F, CUBLAS_COMPUTE_64F, tc::gemm_precision::fast_default, 2048, 2048,
            2048, 1);
    product("MatMul f32 batched 32 x 512^3", dtype::f32, CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC,
            tc::gemm_precision::pedantic, 512, 512, 512, 32);
    cublasDestroy(h);
    {
        // Conv 3x3, N=32, C=M=64, 56x56 (a ResNet stage), im2col + cuBLAS.
        const auto x = random_device(dtype::f32, {32, 64, 56, 56}, 9), w = random_device(dtype::f32, {64, 64, 3, 3}, 10);
        tc::window_2d win;
        win.kernel[0] = win.kernel[1] = 3;
        for (auto& p : win.pads) p = 1;
        const double ms = time_ms([&] { (void)tc::conv2d(x, w, nullptr, win, 1, {32, 64, 56, 56}, tc::gemm_precision::tf32); }, 9);
        const double flop = 2.0 * 32 * 64 * 56 * 56 * 64 * 9;
        rows.push_back({"Conv 3x3 f32 TF32 [32,64,56,56] im2col + cuBLAS", ms, flop / (ms * 1e-3) / 1e12, 0.0, "TFLOP/s"});
    }

    std::printf("%-58s %10s %12s %10s\n", "case", "ms", "rate", "fraction");
    for (const auto& r : rows) {
        std::printf("%-58s %10.4f %8.1f %-7s %6.2f\n", r.name.c_str(), r.ms, r.value, r.unit.c_str(), r.fraction);
    }
    std::puts("fraction: of the memory bandwidth by specification (GB/s rows); cuBLAS direct time / ours (TFLOP/s rows)");
    if (!json.empty()) {
        std::ofstream out(json);
        out << "{\n  \"device\": \"" << prop.name << "\",\n  \"spec_bandwidth_gbs\": " << spec_gbs << ",\n  \"rows\": [\n";
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto& r = rows[i];
            out << "    {\"case\": \"" << r.name << "\", \"ms\": " << r.ms << ", \"rate\": " << r.value << ", \"unit\": \""
                << r.unit << "\", \"fraction\": " << r.fraction << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
        }
        out << "  ]\n}\n";
    }
    return 0;
}
