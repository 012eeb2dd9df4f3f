// The whole kit from one include: a gradient oracle on an op by name, and a
// generated graph run on NaN/Inf-free data it found. The test suite builds
// this file against single_include/ (nothing else on the include path).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <tensoracle/doctest.hpp>
#include <tensoracle/tensoracle.hpp>

#include <cmath>
#include <cstdint>

namespace to = tensoracle;

TEST_CASE("gradients of Softmax by name: forward, reverse and finite differences agree to order 2") {
    to::rng g(3);
    const to::ad::tensors x{g.uniform_tensor(to::dtype::f64, {4, 5}, -1.0, 1.0)};
    to::ad::oracle_options o;
    o.order = 2;
    CHECK_FALSE(to::ad::check_gradients(to::ad::op_engine("Softmax"), x, o).failed());
}

TEST_CASE("generated 10-node graphs whose input search succeeds are finite everywhere") {
    const to::gen::config cfg;
    const to::gen::generator gen(cfg);
    to::gen::generation_stats stats;
    std::size_t found = 0;
    for (std::uint64_t index = 0; index < 5; ++index) {
        auto g = to::gen::case_rng(11, index, cfg.hash());
        const auto sketch = gen.generate(g, stats);
        const auto data = to::gen::search_inputs(sketch, g);
        if (!data.success) continue;  // gen would grow another graph (about 4% of them)
        ++found;
        for (const auto& out : sketch.model.outputs) {
            const auto& t = data.run.at(out.name);
            for (std::size_t i = 0; i < t.size(); ++i) CHECK(std::isfinite(t.value_as_double(i)));
        }
    }
    CHECK(found >= 3);
}
