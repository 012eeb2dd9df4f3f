// Registry-driven gradients in double: first and second order.
#include "op_gradients.hpp"

#include <set>

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
