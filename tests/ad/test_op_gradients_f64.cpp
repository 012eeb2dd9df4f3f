// Registry-driven gradients in double: first and second order.
#include "op_gradients.hpp"

#include "tensoracle/ad/typed_engine.hpp"

#include <set>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ad_op_gradients_f64_test {

TEST_CASE("op gradients: every differentiable op, f64, orders 1 and 2") {
    const auto tally = tensoracle::testing::check_registry_gradients<double>(8, 2, tensoracle::dtype::f64);
    CHECK(tally.size() >= 80);
    tensoracle::testing::require_clean_passes(tally);
}

TEST_CASE("op gradients: the ops without derivative rules are exactly the non-differentiable ones") {
    // Outputs that are not floating, or floating outputs that do not depend on
    // floating input values. A new op missing from here and without run_real fails.
    const std::set<std::string> expected{
        "And", "ArgMax", "ArgMin", "Constant", "ConstantOfShape", "Equal", "EyeLike", "Greater", "GreaterOrEqual",
        "IsInf", "IsNaN", "Less", "LessOrEqual", "Not", "Or", "Range", "Shape", "Size", "Xor"};
    std::set<std::string> without;
    for (const auto& e : tensoracle::ops::registry()) {
        if (tensoracle::ad::find_rules<double>(e.op_type) == nullptr) without.emplace(e.op_type);
    }
    CHECK(without == expected);
}

TEST_CASE("op gradients: tensor-level VJPs equal the tape's (element-wise ops, broadcasting, proxies, own VJPs)") {
    using namespace tensoracle;
    std::set<std::string_view> own;  // ops with a hand-written VJP (has_tensor_vjp)
    int checked = 0, broadcast = 0, proxied = 0;
    for (const auto& rules : ad::rules_table<double>()) {
        if (!rules.tensor_level) continue;
        const auto& op = ops::get_op(rules.op_type);
        rng g(std::hash<std::string_view>{}(rules.op_type) ^ 0xe1);
        const int samples = rules.elementwise ? 6 : 24;  // own VJPs: more attribute combinations
        for (int s = 0; s < samples; ++s) {
            const auto inst = gen::sample_op(op, g);
            ad::tensors x;
            for (const auto& in : inst.inputs) x.push_back(in ? *in : tensor());
            const auto ctx = ad::make_context(op, ad::detail::pointers(x), inst.attributes);
            const auto ids = rules.differentiable_inputs(ctx);
            if (ids.empty()) continue;
            std::vector<array<double>> xs(ctx.input_count(), ad::detail::empty_array<double>());
            for (const std::size_t i : ids) xs[i] = ad::lift<double>(x[i]);
            const auto y = rules.vjp(ctx, xs, {}, {}).values;  // non-floating outputs: empty
            REQUIRE(!y.empty());
            std::vector<array<double>> w;
            for (const auto& yo : y) {
                const shape_type ys(yo.shape().begin(), yo.shape().end());
                w.push_back(ad::detail::is_empty(yo) ? ad::detail::empty_array<double>()
                                                     : g.uniform_tensor(dtype::f64, ys, -1.0, 1.0).to<double>());
            }
            for (const std::size_t i : ids) broadcast += rules.elementwise && x[i].size() != w[0].size() ? 1 : 0;
            for (const bool proxy : {false, true}) {
                const auto tape = rules.vjp(ctx, xs, w, {.proxy = proxy, .tensor_level = false});
                const auto fast = rules.vjp(ctx, xs, w, {.proxy = proxy, .tensor_level = true});
                INFO(rules.op_type, " sample ", s, " proxy ", proxy);
                REQUIRE(fast.values.size() == tape.values.size());
                for (std::size_t o = 0; o < tape.values.size(); ++o) {
                    TENSORACLE_CHECK_ALLCLOSE(tensor(fast.values[o]), tensor(tape.values[o]), (tolerance{0.0, 0.0}));
                }
                for (const std::size_t i : ids) {
                    INFO("input ", i);
                    TENSORACLE_CHECK_ALLCLOSE(tensor(fast.cotangents[i]), tensor(tape.cotangents[i]), (tolerance{1e-12, 1e-12}));
                }
                proxied += proxy && rules.proxy_slope != 0.0 ? 1 : 0;
            }
            if (!rules.elementwise) {
                own.insert(rules.op_type);
                // Without values (the input search's call): the same cotangents, no forward run.
                const auto fast = rules.vjp(ctx, xs, w, {.tensor_level = true});
                const auto lean = rules.vjp(ctx, xs, w, {.tensor_level = true, .values = false});
                for (const auto& v : lean.values) CHECK(ad::detail::is_empty(v));
                for (const std::size_t i : ids) {
                    TENSORACLE_CHECK_ALLCLOSE(tensor(lean.cotangents[i]), tensor(fast.cotangents[i]), (tolerance{0.0, 0.0}));
                }
                // A cotangent of another shape than its output's is an error naming both.
                auto wrong = w;
                wrong[0] = array<double>::from_shape({w[0].size() + 1});
                CHECK_THROWS_WITH_AS((void)rules.vjp(ctx, xs, wrong, {.tensor_level = true, .values = false}),
                                     doctest::Contains("cotangent of output 0 has shape"), shape_error);
            }
            ++checked;
        }
    }
    CHECK(checked >= 300);
    CHECK(broadcast >= 20);
    CHECK(proxied >= 20);
    CHECK(own == std::set<std::string_view>{"Conv", "ConvTranspose", "Gemm", "MatMul", "TopK"});
}

}  // namespace ad_op_gradients_f64_test
