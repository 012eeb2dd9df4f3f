// Benchmark: reference kernels (naive, traceable to the ONNX formula) next to
// a plain BLAS call doing the same work, measured side by side in one run;
// plus the time of the whole ONNX conformance run. Each pair is checked for
// agreement first, so the ratio compares equal results.
//   tensoracle_bench_kernels [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <cblas.h>

#include <tensoracle/ops/registry.hpp>
#include <tensoracle/tensoracle.hpp>

#ifdef TENSORACLE_BENCH_WITH_ONNX
#include <tensoracle/io/conformance.hpp>
#endif

namespace to = tensoracle;

namespace {

/// Median wall time of `reps` runs of f, in seconds.
double median_seconds(int reps, const std::function<void()>& f) {
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        const auto a = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

to::tensor run_op(const char* op, const std::vector<const to::tensor*>& in, const to::spec::attribute_map& attrs = {}) {
    return to::spec::evaluate(to::ops::get_op(op), in, attrs)[0];
}

void row(const std::string& what, double flops, double t_ref, double t_blas, bool agree) {
    std::printf("  %-34s %10.3f ms %8.2f GFLOP/s | %9.3f ms %8.2f GFLOP/s | %8.1fx %s\n", what.c_str(), 1e3 * t_ref,
                flops / t_ref * 1e-9, 1e3 * t_blas, flops / t_blas * 1e-9, t_ref / t_blas, agree ? "" : "  RESULTS DIFFER");
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const int reps = quick ? 1 : 5;
    to::rng g(1);
    std::printf("reference kernel vs BLAS (OpenBLAS via cblas), f32, median of %d runs\n", reps);
    std::printf("  %-34s %-30s | %-30s | %s\n", "case", "reference", "BLAS", "ratio");

    for (const std::size_t n : {64u, 128u, 256u}) {
        const to::tensor a(g.normal_array<float>({n, n})), b(g.normal_array<float>({n, n}));
        to::tensor ref;
        std::vector<float> c(n * n);
        const double t_ref = median_seconds(reps, [&] { ref = run_op("MatMul", {&a, &b}); });
        const double t_blas = median_seconds(reps, [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                        static_cast<int>(n), 1.0f, a.values<float>().data(), static_cast<int>(n),
                        b.values<float>().data(), static_cast<int>(n), 0.0f, c.data(), static_cast<int>(n));
        });
        auto blas = to::array<float>::from_shape({n, n});
        std::copy(c.begin(), c.end(), blas.data());
        const bool agree = to::compare(ref, to::tensor(blas)).passes(to::tolerance{1e-4, 1e-4});
        row("MatMul " + std::to_string(n) + "x" + std::to_string(n), 2.0 * static_cast<double>(n * n * n), t_ref, t_blas, agree);
    }

    // Conv 3x3, stride 1, pad 1, as im2col + one sgemm on the BLAS side.
    for (const auto& [ch, hw] : {std::pair<std::size_t, std::size_t>{8, 16}, {16, 32}, {32, 32}}) {
        const std::size_t m = ch, k = 3;
        const to::tensor x(g.normal_array<float>({1, ch, hw, hw})), w(g.normal_array<float>({m, ch, k, k}));
        const to::spec::attribute_map attrs{{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}};
        to::tensor ref;
        const double t_ref = median_seconds(reps, [&] { ref = run_op("Conv", {&x, &w}, attrs); });
        std::vector<float> cols(ch * k * k * hw * hw), out(m * hw * hw);
        const auto xv = x.values<float>();
        const double t_blas = median_seconds(reps, [&] {
            for (std::size_t c = 0; c < ch; ++c) {
                for (std::size_t ky = 0; ky < k; ++ky) {
                    for (std::size_t kx = 0; kx < k; ++kx) {
                        float* dst = cols.data() + ((c * k + ky) * k + kx) * hw * hw;
                        for (std::size_t y = 0; y < hw; ++y) {
                            for (std::size_t xx = 0; xx < hw; ++xx) {
                                const auto iy = static_cast<std::ptrdiff_t>(y + ky) - 1;
                                const auto ix = static_cast<std::ptrdiff_t>(xx + kx) - 1;
                                const bool in = iy >= 0 && ix >= 0 && iy < static_cast<std::ptrdiff_t>(hw) &&
                                                ix < static_cast<std::ptrdiff_t>(hw);
                                dst[y * hw + xx] = in ? xv[(c * hw + static_cast<std::size_t>(iy)) * hw + static_cast<std::size_t>(ix)] : 0.0f;
                            }
                        }
                    }
                }
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(hw * hw),
                        static_cast<int>(ch * k * k), 1.0f, w.values<float>().data(), static_cast<int>(ch * k * k),
                        cols.data(), static_cast<int>(hw * hw), 0.0f, out.data(), static_cast<int>(hw * hw));
        });
        auto blas = to::array<float>::from_shape({1, m, hw, hw});
        std::copy(out.begin(), out.end(), blas.data());
        const bool agree = to::compare(ref, to::tensor(blas)).passes(to::tolerance{1e-4, 1e-4});
        row("Conv 3x3 C=M=" + std::to_string(ch) + " " + std::to_string(hw) + "x" + std::to_string(hw),
            2.0 * static_cast<double>(m * ch * k * k * hw * hw), t_ref, t_blas, agree);
    }

    // ReduceSum over all elements; BLAS side: dot with a vector of ones.
    for (const std::size_t n : {10'000u, 100'000u, 1'000'000u}) {
        const to::tensor x(g.normal_array<float>({n}));
        const std::vector<float> ones(n, 1.0f);
        to::tensor ref;
        float dot = 0.0f;
        const to::spec::attribute_map attrs{{"keepdims", std::int64_t{0}}};
        const double t_ref = median_seconds(reps, [&] { ref = run_op("ReduceSum", {&x}, attrs); });
        const double t_blas = median_seconds(reps, [&] {
            dot = cblas_sdot(static_cast<int>(n), x.values<float>().data(), 1, ones.data(), 1);
        });
        const bool agree = std::fabs(ref.value_as_double(0) - dot) <= 1e-3 * (1.0 + std::fabs(dot));
        row("ReduceSum " + std::to_string(n), static_cast<double>(n), t_ref, t_blas, agree);
    }

#ifdef TENSORACLE_BENCH_WITH_ONNX
    const auto a = std::chrono::steady_clock::now();
    const auto report = to::io::run_conformance(TENSORACLE_ONNX_NODE_TESTS);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    std::printf("ONNX conformance run (%zu node tests): %.2f s, %s\n", report.cases.size(), secs, report.summary().c_str());
#endif
    return 0;
}
