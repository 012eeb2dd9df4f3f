// Registry-driven gradients in float arithmetic: f32 instances at first and
// second order (JAX's check_grads tolerance 2e-3 for order 1), and f16/bf16
// instances at first order, whose derivatives the kit computes in float (the
// kernels' accumulator for 16-bit types) and checks at JAX's 1e-2 / 1e-1.
#include "op_gradients.hpp"

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ad_op_gradients_f32_test {

TEST_CASE("op gradients: every differentiable op, f32, orders 1 and 2") {
    const auto tally = tensoracle::testing::check_registry_gradients<float>(6, 2, tensoracle::dtype::f32);
    CHECK(tally.size() >= 80);
    tensoracle::testing::require_clean_passes(tally);
}

TEST_CASE("op gradients: every differentiable op, f16 and bf16 instances, order 1") {
    for (const auto d : {tensoracle::dtype::f16, tensoracle::dtype::bf16}) {
        CAPTURE(d);
        const auto tally = tensoracle::testing::check_registry_gradients<float>(8, 1, d);
        CHECK(tally.size() >= 80);
        // CastLike to the other 16-bit type rounds: finite differences of its
        // output cannot see the straight-through derivative, and the precision
        // filter says so.
        tensoracle::testing::require_clean_passes(tally, {"CastLike"});
    }
}

}  // namespace ad_op_gradients_f32_test
