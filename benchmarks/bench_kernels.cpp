// Benchmark: reference kernels (naive, traceable to the ONNX formula) next to
// a plain BLAS call doing the same work, measured side by side in one run;
// plus the time of the whole ONNX conformance run. Each pair is checked for
// agreement first, so the ratio compares equal results.
//   tensoracle_bench_kernels [--quick]
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <cblas.h>

#include <tensoracle/blas.hpp>
#include <tensoracle/graph/interpreter.hpp>
#include <tensoracle/ops/registry.hpp>
#include <tensoracle/core.hpp>

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
    return std::move(to::spec::evaluate(to::ops::get_op(op), in, attrs)[0]);
}

/// One line of a kernel measured against a plain loop over contiguous memory
/// doing the same arithmetic: ns per output element each, and the ratio.
void loop_row(const std::string& what, double elems, double t_ref, double t_loop, bool agree) {
    std::printf("  %-40s %8.3f ms %7.2f ns/elem | %8.3f ms %7.2f ns/elem | %6.2fx %s\n", what.c_str(), 1e3 * t_ref,
                t_ref / elems * 1e9, 1e3 * t_loop, t_loop / elems * 1e9, t_ref / t_loop, agree ? "" : "  RESULTS DIFFER");
}

bool same_floats(const to::tensor& t, const std::vector<float>& v) {
    const auto got = t.values<float>();
    if (got.size() != v.size()) return false;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (!(got[i] == v[i]) && !(std::isnan(got[i]) && std::isnan(v[i]))) return false;
    }
    return true;
}

/// Element-wise ops and reductions next to the plain loop they amount to.
void elementwise_section(int reps, to::rng& g) {
    std::printf("\nreference kernel vs a plain loop over contiguous memory, f32, median of %d runs (goal: <= 2x, <= 2 ns/elem)\n", reps);
    std::printf("  %-40s %-29s | %-29s | %s\n", "case", "reference", "plain loop", "ratio");
    const std::size_t n = 1'000'000;
    const to::tensor a(g.normal_array<float>({1000, 1000})), b(g.normal_array<float>({1000, 1000}));
    const to::tensor row_b(g.normal_array<float>({1000}));
    const auto av = a.values<float>(), bv = b.values<float>(), rv = row_b.values<float>();
    // The loops write a freshly allocated buffer, as a kernel returning a new tensor does.
    std::vector<float> out(n);
    std::unique_ptr<float[]> fresh;
    const auto fresh_out = [&] {
        fresh.reset(new float[n]);
        return fresh.get();
    };
    to::tensor ref;
    const auto pair = [&](const std::string& what, const std::function<void()>& kernel, const std::function<void()>& loop,
                          double elems) {
        const double t_ref = median_seconds(reps, kernel);
        const double t_loop = median_seconds(reps, loop);
        if (fresh) out.assign(fresh.get(), fresh.get() + n);
        loop_row(what, elems, t_ref, t_loop, same_floats(ref, out));
        fresh.reset();
    };
    pair("Add [1000,1000] + [1000,1000]", [&] { ref = run_op("Add", {&a, &b}); },
         [&] { float* o = fresh_out(); for (std::size_t i = 0; i < n; ++i) o[i] = av[i] + bv[i]; }, static_cast<double>(n));
    pair("Mul [1000,1000] * [1000] (broadcast)", [&] { ref = run_op("Mul", {&a, &row_b}); },
         [&] {
             float* o = fresh_out();
             for (std::size_t i = 0; i < 1000; ++i) {
                 for (std::size_t j = 0; j < 1000; ++j) o[i * 1000 + j] = av[i * 1000 + j] * rv[j];
             }
         }, static_cast<double>(n));
    pair("Neg [1000,1000]", [&] { ref = run_op("Neg", {&a}); },
         [&] { float* o = fresh_out(); for (std::size_t i = 0; i < n; ++i) o[i] = -av[i]; }, static_cast<double>(n));
    pair("Exp [1000,1000]", [&] { ref = run_op("Exp", {&a}); },
         [&] { float* o = fresh_out(); for (std::size_t i = 0; i < n; ++i) o[i] = std::exp(av[i]); }, static_cast<double>(n));
    pair("Relu [1000,1000]", [&] { ref = run_op("Relu", {&a}); },
         [&] { float* o = fresh_out(); for (std::size_t i = 0; i < n; ++i) o[i] = std::max(av[i], 0.0f); }, static_cast<double>(n));
    const to::spec::attribute_map all{{"keepdims", std::int64_t{0}}};
    out.assign(1, 0.0f);
    pair("ReduceSum [1000,1000], all axes", [&] { ref = run_op("ReduceSum", {&a}, all); },
         [&] {
             float s = 0.0f;
             for (std::size_t i = 0; i < n; ++i) s += av[i];
             out[0] = s;
         }, static_cast<double>(n));
    const auto axes1 = to::ops::detail::int64_tensor({1});
    const auto axes0 = to::ops::detail::int64_tensor({0});
    out.assign(1000, 0.0f);
    pair("ReduceSum [1000,1000], axis 1 (rows)", [&] { ref = run_op("ReduceSum", {&a, &axes1}, all); },
         [&] {
             for (std::size_t i = 0; i < 1000; ++i) {
                 float s = 0.0f;
                 for (std::size_t j = 0; j < 1000; ++j) s += av[i * 1000 + j];
                 out[i] = s;
             }
         }, static_cast<double>(n));
    pair("ReduceSum [1000,1000], axis 0 (columns)", [&] { ref = run_op("ReduceSum", {&a, &axes0}, all); },
         [&] {
             for (std::size_t j = 0; j < 1000; ++j) {
                 float s = 0.0f;
                 for (std::size_t i = 0; i < 1000; ++i) s += av[i * 1000 + j];
                 out[j] = s;
             }
         }, static_cast<double>(n));
    pair("ReduceMax [1000,1000], axis 1", [&] { ref = run_op("ReduceMax", {&a}, {{"keepdims", std::int64_t{0}}, {"axes", std::vector<std::int64_t>{1}}}); },
         [&] {
             for (std::size_t i = 0; i < 1000; ++i) {
                 float s = -std::numeric_limits<float>::infinity();
                 for (std::size_t j = 0; j < 1000; ++j) s = std::max(s, av[i * 1000 + j]);
                 out[i] = s;
             }
         }, static_cast<double>(n));
}

/// Interpreter overhead per node on small tensors: a chain of 200 Add/Mul/Relu
/// nodes on 64 elements, whole graph runs, minus nothing (the arithmetic is
/// 64 flops a node, a few ns).
void interpreter_section(int reps, to::rng& g) {
    namespace tg = to::graph;
    tg::graph gr;
    gr.name = "chain";
    gr.inputs = {{"x", to::dtype::f32, to::shape_type{8, 8}}};
    gr.initializers.emplace("w", to::tensor(g.normal_array<float>({8, 8})));
    const char* ops[] = {"Add", "Mul", "Relu"};
    std::string prev = "x";
    const std::size_t nodes = 200;
    for (std::size_t i = 0; i < nodes; ++i) {
        const std::string op = ops[i % 3], out = "v" + std::to_string(i);
        std::vector<std::string> ins{prev};
        if (op != "Relu") ins.push_back("w");
        gr.nodes.push_back({op, ins, {out}, {}, "n" + std::to_string(i), ""});
        prev = out;
    }
    gr.outputs = {{prev, to::dtype::f32, std::nullopt}};
    gr.validate();
    const to::tensor x(g.normal_array<float>({8, 8}));
    const double t = median_seconds(reps * 4, [&] { (void)tg::run(gr, {{"x", x}}); });
    std::printf("\ninterpreter: %zu-node chain of Add/Mul/Relu on 8x8 f32, median of %d runs: %.2f us per node (goal <= 5 us)\n",
                nodes, reps * 4, t / static_cast<double>(nodes) * 1e6);
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
    std::printf("reference kernel, and the interpreter's BLAS fast path (ops/fast_paths.hpp), vs BLAS (OpenBLAS via cblas), f32, median of %d runs (fast-path goal: ratio <= 2x)\n", reps);
    std::printf("  %-34s %-30s | %-30s | %s\n", "case", "reference", "BLAS", "ratio");

    for (const std::size_t n : {64u, 128u, 256u}) {
        const to::tensor a(g.normal_array<float>({n, n})), b(g.normal_array<float>({n, n}));
        to::tensor ref;
        std::vector<float> c(n * n);
        const double t_ref = median_seconds(reps, [&] { ref = run_op("MatMul", {&a, &b}); });
        to::tensor fast;
        to::use_blas_fast_paths();
        const double t_fast = median_seconds(reps, [&] { fast = run_op("MatMul", {&a, &b}); });
        to::ops::fast_paths() = {};
        const double t_blas = median_seconds(reps, [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                        static_cast<int>(n), 1.0f, a.values<float>().data(), static_cast<int>(n),
                        b.values<float>().data(), static_cast<int>(n), 0.0f, c.data(), static_cast<int>(n));
        });
        auto blas = to::array<float>::from_shape({n, n});
        std::copy(c.begin(), c.end(), blas.data());
        const bool agree = to::compare(ref, to::tensor(blas)).passes(to::tolerance{1e-4, 1e-4});
        row("MatMul " + std::to_string(n) + "x" + std::to_string(n), 2.0 * static_cast<double>(n * n * n), t_ref, t_blas, agree);
        row("  fast path (interpreter + sgemm)", 2.0 * static_cast<double>(n * n * n), t_fast, t_blas,
            to::compare(fast, to::tensor(blas)).passes(to::tolerance{1e-4, 1e-4}));
    }

    // Conv 3x3, stride 1, pad 1, as im2col + one sgemm on the BLAS side.
    for (const auto& [ch, hw] : {std::pair<std::size_t, std::size_t>{8, 16}, {16, 32}, {32, 32}}) {
        const std::size_t m = ch, k = 3;
        const to::tensor x(g.normal_array<float>({1, ch, hw, hw})), w(g.normal_array<float>({m, ch, k, k}));
        const to::spec::attribute_map attrs{{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}};
        to::tensor ref;
        const double t_ref = median_seconds(reps, [&] { ref = run_op("Conv", {&x, &w}, attrs); });
        to::tensor fast;
        to::use_blas_fast_paths();
        const double t_fast = median_seconds(reps, [&] { fast = run_op("Conv", {&x, &w}, attrs); });
        to::ops::fast_paths() = {};
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
        row("  fast path (interpreter, im2col + sgemm)", 2.0 * static_cast<double>(m * ch * k * k * hw * hw), t_fast, t_blas,
            to::compare(fast, to::tensor(blas)).passes(to::tolerance{1e-4, 1e-4}));
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

    elementwise_section(reps, g);
    // MaxPool and AveragePool 3x3, stride 1, pad 1 (padding excluded from the
    // mean) against a plain loop over the same windows
    // (rows of the element-wise section's table).
    {
        const std::size_t ch = 32, hw = 64;
        const to::tensor x(g.normal_array<float>({1, ch, hw, hw}));
        const auto xv = x.values<float>();
        const to::spec::attribute_map attrs{{"kernel_shape", std::vector<std::int64_t>{3, 3}},
                                            {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}};
        for (const bool max : {true, false}) {
            to::tensor ref;
            const double t_ref = median_seconds(reps, [&] { ref = run_op(max ? "MaxPool" : "AveragePool", {&x}, attrs); });
            std::vector<float> out(ch * hw * hw);
            const auto h = static_cast<std::ptrdiff_t>(hw);
            const double t_loop = median_seconds(reps, [&] {
                for (std::size_t c = 0; c < ch; ++c) {
                    const float* plane = xv.data() + c * hw * hw;
                    for (std::ptrdiff_t y = 0; y < h; ++y) {
                        for (std::ptrdiff_t xx = 0; xx < h; ++xx) {
                            float acc = max ? -std::numeric_limits<float>::infinity() : 0.0f;
                            int count = 0;
                            for (std::ptrdiff_t iy = std::max<std::ptrdiff_t>(y - 1, 0); iy <= std::min(y + 1, h - 1); ++iy) {
                                for (std::ptrdiff_t ix = std::max<std::ptrdiff_t>(xx - 1, 0); ix <= std::min(xx + 1, h - 1); ++ix) {
                                    const float v = plane[iy * h + ix];
                                    acc = max ? std::max(acc, v) : acc + v;
                                    ++count;
                                }
                            }
                            out[(c * hw + static_cast<std::size_t>(y)) * hw + static_cast<std::size_t>(xx)] =
                                max ? acc : acc / static_cast<float>(count);
                        }
                    }
                }
            });
            auto loop = to::array<float>::from_shape({1, ch, hw, hw});
            std::copy(out.begin(), out.end(), loop.data());
            loop_row(std::string(max ? "MaxPool" : "AveragePool") + " 3x3 pad 1 C=32 64x64", static_cast<double>(out.size()),
                     t_ref, t_loop, to::compare(ref, to::tensor(loop)).passes(to::tolerance{1e-5, 1e-5}));
        }
    }

    interpreter_section(reps, g);

#ifdef TENSORACLE_BENCH_WITH_ONNX
    const auto a = std::chrono::steady_clock::now();
    const auto report = to::io::run_conformance(TENSORACLE_ONNX_NODE_TESTS);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    std::printf("ONNX conformance run (%zu node tests): %.2f s, %s\n", report.cases.size(), secs, report.summary().c_str());
#endif
    return 0;
}
