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

TEST_CASE("op gradients: element-wise ops' VJP through forward mode equals the tape's (broadcasting, proxies)") {
    using namespace tensoracle;
    int checked = 0, broadcast = 0, proxied = 0;
    for (const auto& rules : ad::rules_table<double>()) {
        if (!rules.elementwise) continue;
        const auto& op = ops::get_op(rules.op_type);
        rng g(std::hash<std::string_view>{}(rules.op_type) ^ 0xe1);
        for (int s = 0; s < 6; ++s) {
            const auto inst = gen::sample_op(op, g);
            ad::tensors x;
            for (const auto& in : inst.inputs) x.push_back(in ? *in : tensor());
            const auto ctx = ad::make_context(op, ad::detail::pointers(x), inst.attributes);
            const auto ids = rules.differentiable_inputs(ctx);
            if (ids.empty()) continue;
            std::vector<array<double>> xs(ctx.input_count(), ad::detail::empty_array<double>());
            for (const std::size_t i : ids) xs[i] = ad::lift<double>(x[i]);
            const auto y = rules.value(ctx, xs);
            REQUIRE(y.size() == 1);
            const auto w = g.uniform_tensor(dtype::f64, shape_type(y[0].shape().begin(), y[0].shape().end()), -1.0, 1.0)
                               .to<double>();
            for (const std::size_t i : ids) broadcast += x[i].size() != w.size() ? 1 : 0;
            for (const bool proxy : {false, true}) {
                const auto tape = rules.vjp(ctx, xs, {w}, {.proxy = proxy, .elementwise_forward = false});
                const auto fwd = rules.vjp(ctx, xs, {w}, {.proxy = proxy, .elementwise_forward = true});
                INFO(rules.op_type, " sample ", s, " proxy ", proxy);
                REQUIRE(fwd.values.size() == 1);
                TENSORACLE_CHECK_ALLCLOSE(tensor(fwd.values[0]), tensor(tape.values[0]), (tolerance{0.0, 0.0}));
                for (const std::size_t i : ids) {
                    INFO("input ", i);
                    TENSORACLE_CHECK_ALLCLOSE(tensor(fwd.cotangents[i]), tensor(tape.cotangents[i]), (tolerance{1e-12, 1e-12}));
                }
                proxied += proxy && rules.proxy_slope != 0.0 ? 1 : 0;
            }
            ++checked;
        }
    }
    CHECK(checked >= 200);
    CHECK(broadcast >= 20);
    CHECK(proxied >= 20);
}

}  // namespace ad_op_gradients_f64_test
