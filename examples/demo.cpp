// tensoracle demo: the kit's main job on an embedded default. For now it shows
// what exists: the dtype table, GraphNet tolerance levels, a small differential
// campaign (low-precision kernels against a float64 reference, with injected
// bugs), outcome classes and the S_t / ES_t scores of the campaign, op specs,
// ONNX conformance, and the gradient oracle on the kit's ops and on a broken engine.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <xtensor/xmath.hpp>

#include <tensoracle/ad.hpp>
#include <tensoracle/graph/interpreter.hpp>
#include <tensoracle/gen/instance.hpp>
#include <tensoracle/ops/registry.hpp>
#include <tensoracle/core.hpp>
#ifdef TENSORACLE_DEMO_WITH_ONNX
#include <tensoracle/io/conformance.hpp>
#endif

namespace to = tensoracle;

namespace {

// Candidate kernels: naive, computed entirely in T (as a low-precision backend would).
template <class T>
to::array<T> softmax_rows(const to::array<T>& x) {
    auto y = to::array<T>::from_shape(x.shape());
    const std::size_t rows = x.shape(0), cols = x.shape(1);
    for (std::size_t r = 0; r < rows; ++r) {
        T m = x(r, 0);
        for (std::size_t c = 1; c < cols; ++c) m = x(r, c) > m ? x(r, c) : m;
        T sum(0.0f);
        for (std::size_t c = 0; c < cols; ++c) {
            y(r, c) = T(std::exp(static_cast<float>(x(r, c) - m)));
            sum += y(r, c);
        }
        for (std::size_t c = 0; c < cols; ++c) y(r, c) /= sum;
    }
    return y;
}

template <class T>
to::array<T> row_sums(const to::array<T>& x) {
    auto y = to::array<T>::from_shape({x.shape(0)});
    for (std::size_t r = 0; r < x.shape(0); ++r) {
        T acc(0.0f);
        for (std::size_t c = 0; c < x.shape(1); ++c) acc += x(r, c);
        y(r) = acc;
    }
    return y;
}

template <class T>
to::array<T> log_rows(const to::array<T>& x) {
    auto y = to::array<T>::from_shape(x.shape());
    for (std::size_t i = 0; i < x.size(); ++i) y.data()[i] = T(std::log(static_cast<double>(x.data()[i])));
    return y;
}

// References in float64.
to::array<double> softmax_ref(const to::array<double>& x) { return softmax_rows(x); }
to::array<double> sums_ref(const to::array<double>& x) { return xt::sum(x, {1}); }
to::array<double> log_ref(const to::array<double>& x) { return xt::log(x); }

struct campaign_row {
    std::string kernel;
    to::verdict verdict;
    to::comparison_report report;
    double speedup;
};

template <class F>
double seconds(F&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
    std::uint64_t seed = 7;
    std::size_t rows = 32, cols = 256;
    double level_t = -5;
    CLI::App app{"tensoracle demo: a differential campaign on an embedded default"};
    app.add_option("--seed", seed, "RNG seed (the same values on every platform)");
    app.add_option("--rows", rows, "rows of the input matrix")->check(CLI::Range(1, 4096));
    app.add_option("--cols", cols, "columns of the input matrix")->check(CLI::Range(1, 4096));
    app.add_option("--level", level_t, "GraphNet tolerance level t")->check(CLI::Range(-10.0, 0.0));
    CLI11_PARSE(app, argc, argv);

    std::printf("tensoracle %s demo (seed %llu, input %zux%zu, level t = %g)\n\n", to::version_string,
                static_cast<unsigned long long>(seed), rows, cols, level_t);

    std::printf("1. Element types\n   %-5s %-9s %-9s %5s %9s %12s\n", "dtype", "name", "ONNX", "bits", "mantissa",
                "epsilon");
    for (std::size_t i = 0; i < to::dtype_count; ++i) {
        const auto& d = to::info(static_cast<to::dtype>(i));
        std::printf("   %-5s %-9s %-9s %5d %9d %12.6g\n", std::string(d.short_name).c_str(),
                    std::string(d.name).c_str(), std::string(d.onnx_name).c_str(), d.bits, d.mantissa_bits,
                    d.epsilon);
    }

    std::printf("\n2. Tolerance levels (GraphNet, Appendix A): atol / rtol\n   %-5s", "t");
    for (const auto d : {to::dtype::f16, to::dtype::bf16, to::dtype::f32, to::dtype::f64}) {
        std::printf(" %21s", std::string(to::name(d)).c_str());
    }
    std::printf("\n");
    for (const int t : {-10, -7, -5, -3, -1, 0}) {
        std::printf("   %-5d", t);
        for (const auto d : {to::dtype::f16, to::dtype::bf16, to::dtype::f32, to::dtype::f64}) {
            const auto tol = to::tolerance_level(d, t);
            std::printf("   %8.2g / %8.2g", tol.atol, tol.rtol);
        }
        std::printf("\n");
    }

    to::rng rng(seed);
    const auto x = rng.normal_array<double>({rows, cols});
    const auto positive = rng.uniform_array<double>({rows, cols}, 0.01, 10.0);
    std::vector<campaign_row> rows_out;
    const to::level lv{level_t};

    auto run = [&](const std::string& name, auto candidate, auto reference, const auto& input) {
        using T = typename std::decay_t<decltype(candidate(input))>::value_type;
        (void)sizeof(T);
        to::array<double> ref;
        decltype(candidate(input)) out;
        const double t_ref = seconds([&] { ref = reference(input); });
        const double t_out = seconds([&] { out = candidate(input); });
        const auto expected = to::tensor(ref).to<T>();
        auto report = to::compare(out, expected);
        auto v = to::judge(report, lv);
        rows_out.push_back({name, std::move(v), std::move(report), t_ref / std::max(t_out, 1e-9)});
    };
    auto as = [](auto tag, const to::array<double>& a) {
        using T = typename decltype(tag)::type;
        return to::tensor(a).to<T>();
    };
    namespace hana = boost::hana;
    const auto xf16 = as(hana::type_c<to::float16>, x);
    const auto xbf16 = as(hana::type_c<to::bfloat16>, x);
    const auto xf32 = as(hana::type_c<float>, x);
    const auto pf32 = as(hana::type_c<float>, positive);

    run("softmax f32", [](const auto& a) { return softmax_rows(a); }, [&](const auto&) { return softmax_ref(x); }, xf32);
    run("softmax f16", [](const auto& a) { return softmax_rows(a); }, [&](const auto&) { return softmax_ref(x); }, xf16);
    run("softmax bf16", [](const auto& a) { return softmax_rows(a); }, [&](const auto&) { return softmax_ref(x); }, xbf16);
    run("row sum f32", [](const auto& a) { return row_sums(a); }, [&](const auto&) { return sums_ref(x); }, xf32);
    run("row sum f16 (f16 accumulator)", [](const auto& a) { return row_sums(a); }, [&](const auto&) { return sums_ref(x); }, xf16);
    run("log f32", [](const auto& a) { return log_rows(a); }, [&](const auto&) { return log_ref(positive); }, pf32);
    // Injected bugs: what the campaign exists to find.
    run("BUG: softmax drops last column", [](const auto& a) {
            auto y = softmax_rows(a);
            for (std::size_t r = 0; r < y.shape(0); ++r) y(r, y.shape(1) - 1) = 0.0f;
            return y;
        }, [&](const auto&) { return softmax_ref(x); }, xf32);
    run("BUG: log of |x| - 1 (NaN where x < 1)", [](const auto& a) {
            to::array<float> shifted = a - 1.0f;
            return log_rows(shifted);
        }, [&](const auto&) { return log_ref(positive); }, pf32);

    std::printf("\n3. Differential campaign: candidate kernels vs float64 reference at level t = %g\n", level_t);
    std::printf("   %-40s %-9s %-18s %10s %10s %10s %s\n", "kernel", "outcome", "reason", "max abs", "max rel",
                "max ULP", "strictest t");
    std::size_t passed = 0;
    for (const auto& r : rows_out) {
        passed += r.verdict.passed() ? 1 : 0;
        const auto t = r.report.min_passing_level();
        std::printf("   %-40s %-9s %-18s %10.3g %10.3g %10llu %s\n", r.kernel.c_str(),
                    std::string(to::to_string(r.verdict.kind)).c_str(),
                    std::string(to::to_string(r.verdict.reason)).c_str(), r.report.abs_error().max,
                    r.report.rel_error().max, static_cast<unsigned long long>(r.report.max_ulp().value_or(0)),
                    t ? std::to_string(*t).c_str() : "none");
    }
    const auto& bug = rows_out[rows_out.size() - 2];
    std::printf("\n   Report of the first injected bug:\n%s", bug.report.describe(lv).c_str());

    std::printf("\n4. Scores (GraphNet S_t / ES_t; p = b = 0.1), with one simulated crash and one compile failure\n");
    std::vector<to::benchmark_sample> samples;
    for (const auto& r : rows_out) {
        samples.push_back({r.verdict.passed() || r.verdict.reason == to::failure_reason::value_mismatch
                               ? to::outcome::pass
                               : to::outcome::accuracy,
                           r.speedup, r.report.min_passing_level()});
    }
    samples.push_back({to::outcome::runtime_crash, 1.0, {}});
    samples.push_back({to::outcome::compile_failure, 1.0, {}});
    std::printf("   %-4s %8s %8s %8s %8s %8s %8s\n", "t", "alpha", "beta", "lambda", "eta", "gamma", "score");
    for (const int t : {-10, -8, -6, -5, -4, -2, 0, 1, 2, 3}) {
        const auto s = to::speedup_score(samples, t);
        std::printf("   %-4d %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f%s\n", t, s.alpha, s.beta, s.lambda, s.eta, s.gamma,
                    s.score, t > 0 ? "  (ES_t)" : "");
    }

    std::printf("\n5. Operator specs: %zu ops in the registry; random valid instances from their samplers\n",
                to::ops::registry().size());
    to::rng spec_rng(seed);
    for (const char* op : {"Conv", "Gather", "Pow", "ReduceSum"}) {
        const auto* e = to::ops::find_op(op);
        if (e == nullptr) continue;
        const auto inst = to::gen::sample_op(*e, spec_rng);
        std::vector<const to::tensor*> args;
        std::string shapes;
        for (const auto& t : inst.inputs) {
            args.push_back(t ? &*t : nullptr);
            if (!shapes.empty()) shapes += ", ";
            if (t) {
                std::ostringstream os;
                os << *t;
                shapes += os.str();
            } else {
                shapes += "(absent)";
            }
        }
        const to::spec::context ctx(e->op_type, args, e->normalize_attributes(inst.attributes));
        auto constraints = e->constraints(ctx);
        // Show a constraint that still mentions symbols (constant-folded ones print as 1).
        std::stable_partition(constraints.begin(), constraints.end(),
                              [](const to::spec::constraint& k) { return !k.condition.is_constant(); });
        const auto out = to::spec::evaluate(*e, args, inst.attributes);
        std::ostringstream first_out;
        first_out << out[0];
        std::printf("   %-10s inputs %s -> %s; %zu constraints hold%s%s\n", op, shapes.c_str(), first_out.str().c_str(),
                    constraints.size(), constraints.empty() ? "" : ", e.g. ",
                    constraints.empty() ? "" : constraints.front().condition.to_string().c_str());
    }

#ifdef TENSORACLE_DEMO_WITH_ONNX
    std::printf("\n6. ONNX conformance (backend node tests in %s)\n", TENSORACLE_ONNX_NODE_TESTS);
    const auto conf = to::io::run_conformance(TENSORACLE_ONNX_NODE_TESTS);
    std::printf("   %s; %.1f%% of the tests whose ops the kit supports pass (full table: docs/CONFORMANCE.md)\n",
                conf.summary().c_str(), 100.0 * conf.pass_rate());
#endif

    std::printf("\n7. Gradient oracle (forward vs reverse vs finite differences, orders 1 and 2)\n");
    to::rng grad_rng(seed);
    int grad_ok = 0, grad_caught = 0;
    for (const char* op : {"Softmax", "Conv", "LayerNormalization", "Gemm", "LRN"}) {
        const auto& e = to::ops::get_op(op);
        const auto inst = to::gen::sample_op(e, grad_rng);
        to::ad::tensors inputs;
        for (const auto& t : inst.inputs) {
            inputs.push_back(!t ? to::tensor() : (to::info(t->element_dtype()).is_floating ? t->cast(to::dtype::f64) : *t));
        }
        to::ad::oracle_options o;
        o.order = 2;
        const auto r = to::ad::check_gradients(to::ad::op_engine<double>(op, inst.attributes), inputs, o);
        const auto& second = r.higher.empty() ? r : r.higher[0];
        std::printf("   %-20s order 1: %s, order 2: %s\n", op, std::string(to::ad::name(r.outcome)).c_str(),
                    std::string(to::ad::name(second.outcome)).c_str());
        grad_ok += r.failed() ? 0 : 1;
    }
    {
        // A broken engine: Tanh whose VJP uses 1 - y instead of 1 - y².
        auto broken = to::ad::op_engine<double>("Tanh");
        const auto good_value = broken.value;
        broken.vjp = [good_value](const to::ad::tensors& in, const to::ad::tensors& w) {
            auto y = good_value(in);
            auto g = w[0].cast(to::dtype::f64).as_array<double>();
            const auto yv = y[0].as_array<double>();
            for (std::size_t i = 0; i < g.size(); ++i) g.data()[i] *= 1.0 - yv.data()[i];
            return to::ad::vjp_result{y, {to::tensor(g)}};
        };
        const auto r = to::ad::check_gradients(broken, {grad_rng.uniform_tensor(to::dtype::f64, {3, 4}, -2.0, 2.0)});
        std::printf("   %-20s %s: %s\n", "Tanh, broken VJP", std::string(to::ad::name(r.outcome)).c_str(),
                    r.message.c_str());
        grad_caught += r.failed() ? 1 : 0;
        // A correct engine at a kink is labelled, not failed.
        const auto k = to::ad::check_gradients(to::ad::op_engine<double>("Relu"),
                                               {to::tensor(to::array<double>{1.5, 0.0, -0.5})});
        std::printf("   %-20s %s, labelled: %s\n", "Relu at 0", std::string(to::ad::name(k.outcome)).c_str(),
                    k.has(to::ad::filter_label::non_differentiable_point) ? "non-differentiable point" : "no");
    }
    std::printf("   gradient oracle: %d of 5 ops pass, %d of 1 broken engines caught\n", grad_ok, grad_caught);

    std::printf("\ndemo summary: %zu kernels within level %g, %zu outside (2 bugs injected on purpose)\n", passed,
                level_t, rows_out.size() - passed);
    return 0;
}
