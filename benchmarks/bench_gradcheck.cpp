// Time to check one op's first-order gradients in float64, three ways, side
// by side in one run:
//   oracle(kit)   tensoracle's oracle on the kit's own engine for the op;
//   oracle(torch) tensoracle's oracle on PyTorch's engine for the same op;
//   torch full-J  a full-Jacobian check written with libtorch, as
//                 torch.autograd.gradcheck does it (non-fast mode): the
//                 analytic Jacobian row by row with one backward pass per
//                 output element, the numerical one column by column with
//                 central differences (eps 1e-6), then allclose(atol 1e-5, rtol 1e-3).
// The oracle runs with its defaults (10 determinism runs, 3 random (u, w)
// probes, rev vs fwd, six-point finite differences along u, full Jacobians
// only up to 24 elements). Every row prints the verdicts, which must agree.
//
//   tensoracle_bench_gradcheck [--repeats N]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "tensoracle/ad/engine.hpp"
#include "../examples/torch_engine.hpp"

using namespace tensoracle_torch;

namespace {

template <class F>
double median_seconds(int repeats, F&& f) {
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i) {
        const auto a = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// torch.autograd.gradcheck's full-Jacobian comparison, written in libtorch.
bool torch_full_jacobian_check(const torch_fn& f, const std::vector<tt>& inputs, const attribute_map& attrs) {
    std::vector<tt> leaves;
    for (const auto& x : inputs) leaves.push_back(x.detach().clone().requires_grad_(true));
    const tt y = f(leaves, attrs)[0].reshape({-1});
    const auto m = y.numel();
    bool ok = true;
    for (std::size_t i = 0; i < leaves.size(); ++i) {
        const auto n = leaves[i].numel();
        auto analytic = torch::zeros({m, n}, torch::kFloat64);
        for (std::int64_t r = 0; r < m; ++r) {
            auto g = torch::autograd::grad({y[r]}, {leaves[i]}, {}, true, false, true)[0];
            if (g.defined()) analytic[r] = g.reshape({-1});
        }
        auto numerical = torch::zeros({m, n}, torch::kFloat64);
        torch::NoGradGuard ng;
        std::vector<tt> probe;
        for (const auto& l : leaves) probe.push_back(l.detach().clone());
        auto flat = probe[i].view({-1});
        const double eps = 1e-6;
        for (std::int64_t c = 0; c < n; ++c) {
            const double x0 = flat[c].item<double>();
            flat[c] = x0 + eps;
            const tt yp = f(probe, attrs)[0].reshape({-1});
            flat[c] = x0 - eps;
            const tt ym = f(probe, attrs)[0].reshape({-1});
            flat[c] = x0;
            numerical.select(1, c).copy_((yp - ym) / (2 * eps));
        }
        ok = ok && torch::allclose(analytic, numerical, 1e-3, 1e-5);
    }
    return ok;
}

struct bench_case {
    std::string op;
    std::string label;
    std::vector<to::shape_type> shapes;
    attribute_map attrs;
};

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Gradient check of one op: tensoracle's oracle vs a libtorch full-Jacobian check"};
    int repeats = 5;
    app.add_option("--repeats", repeats, "timed runs per measurement (median)")->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);
    torch::set_num_threads(1);
    const auto shared = shared_ops();
    const std::vector<bench_case> cases = {
        {"Tanh", "64", {{64}}, {}},
        {"Tanh", "256", {{256}}, {}},
        {"Tanh", "1024", {{1024}}, {}},
        {"Softmax", "8x8", {{8, 8}}, {}},
        {"Softmax", "16x16", {{16, 16}}, {}},
        {"Softmax", "32x32", {{32, 32}}, {}},
        {"MatMul", "8x8 @ 8x8", {{8, 8}, {8, 8}}, {}},
        {"MatMul", "16x16 @ 16x16", {{16, 16}, {16, 16}}, {}},
        {"MatMul", "32x32 @ 32x32", {{32, 32}, {32, 32}}, {}},
    };
    std::printf("%-8s %-14s %14s %14s %14s %10s %10s  verdicts (kit / torch via oracle / torch full-J)\n", "op",
                "size", "oracle(kit) s", "oracle(torch)", "torch full-J", "fullJ/kit", "fullJ/otr");
    double worst = 1e300;
    for (const auto& c : cases) {
        to::rng g(42);
        ad::tensors x;
        std::vector<tt> tx;
        for (const auto& s : c.shapes) {
            x.push_back(g.uniform_tensor(to::dtype::f64, s, -1.0, 1.0));
            tx.push_back(to_torch(x.back()));
        }
        const auto kit = ad::op_engine<double>(c.op, c.attrs);
        const auto theirs = torch_engine(shared.at(c.op), c.attrs);
        bool v_kit = false, v_torch = false, v_full = false;
        const double t_kit = median_seconds(repeats, [&] { v_kit = !ad::check_gradients(kit, x).failed(); });
        const double t_or = median_seconds(repeats, [&] { v_torch = !ad::check_gradients(theirs, x).failed(); });
        const double t_full =
            median_seconds(repeats, [&] { v_full = torch_full_jacobian_check(shared.at(c.op), tx, c.attrs); });
        std::printf("%-8s %-14s %14.6f %14.6f %14.6f %9.1fx %9.1fx  %s / %s / %s%s\n", c.op.c_str(), c.label.c_str(),
                    t_kit, t_or, t_full, t_full / t_kit, t_full / t_or, v_kit ? "pass" : "FAIL",
                    v_torch ? "pass" : "FAIL", v_full ? "pass" : "FAIL",
                    (v_kit == v_full && v_torch == v_full) ? "" : "  <- verdicts differ");
        worst = std::min(worst, t_full / t_kit);
    }
    std::printf("gradcheck benchmark: smallest speed-up of the oracle over the libtorch full-Jacobian check %.1fx\n",
                worst);
    return 0;
}
