// Checking an AD engine's gradients with tensoracle: here "my engine" is a
// hand-written softmax with a VJP and a JVP; in your tests it is your compiler
// or framework, called through the same callables.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <tensoracle/ad/typed_engine.hpp>  // the oracle, and any one op of the kit as an engine
#include <tensoracle/doctest.hpp>
#include <tensoracle/ops/reduce.hpp>  // Softmax's spec

namespace to = tensoracle;
namespace ad = tensoracle::ad;

// softmax over a vector, its VJP and its JVP, written by hand
to::array<double> softmax(const to::array<double>& x) {
    to::array<double> y = x;
    double m = x(0), sum = 0.0;
    for (const double v : x) m = std::max(m, v);
    for (auto& v : y) sum += (v = std::exp(v - m));
    return y / sum;
}
ad::engine my_engine(bool buggy) {
    return ad::engine_builder()
        .value([](const ad::tensors& x) { return ad::tensors{to::tensor(softmax(x[0].as_array<double>()))}; })
        .vjp([buggy](const ad::tensors& x, const ad::tensors& w) {  // J^T w = y * (w - <w, y>), one per input
            const auto y = softmax(x[0].as_array<double>());
            const auto wv = w[0].as_array<double>();
            double dot = 0.0;
            for (std::size_t i = 0; i < y.size(); ++i) dot += wv(i) * y(i);
            to::array<double> g = y * (wv - (buggy ? 0.0 : dot));  // the bug: a missing term
            return ad::vjp_result{.outputs = {to::tensor(y)}, .input_cotangents = {to::tensor(g)}};
        })
        .jvp([](const ad::tensors& x, const ad::tensors& u) {  // J u = y * (u - <u, y>), one per output
            const auto y = softmax(x[0].as_array<double>());
            const auto uv = u[0].as_array<double>();
            double dot = 0.0;
            for (std::size_t i = 0; i < y.size(); ++i) dot += uv(i) * y(i);
            return ad::jvp_result{.outputs = {to::tensor(y)},
                                  .output_tangents = {to::tensor(to::array<double>(y * (uv - dot)))}};
        })
        .build();
}

TEST_CASE("my softmax's gradients") {
    to::rng rng(7);
    const ad::tensors x{rng.uniform_tensor(to::dtype::f64, {6}, -3.0, 3.0)};
    const auto good = ad::check_gradients(my_engine(false), x);
    TENSORACLE_CHECK_GRADIENTS(good);  // rev vs fwd, both vs finite differences, full 6x6 Jacobians
    const auto bad = ad::check_gradients(my_engine(true), x);
    CHECK(bad.outcome == ad::gradient_outcome::reverse_forward_mismatch);  // caught: <Ju, w> != <u, J^T w>
    // With the kit's own Softmax as the reference, every derivative element is
    // compared, not only projections of them.
    ad::oracle_options against_kit;
    against_kit.reference = ad::op_engine<to::ops::Softmax>();
    TENSORACLE_CHECK_GRADIENTS(ad::check_gradients(my_engine(false), x, against_kit));
    CHECK(ad::check_gradients(my_engine(true), x, against_kit).failed());
    // The kit's Softmax itself, checked to second order.
    ad::oracle_options second_order;
    second_order.order = 2;
    TENSORACLE_CHECK_GRADIENTS(ad::check_gradients(ad::op_engine<to::ops::Softmax>(), x, second_order));
}
