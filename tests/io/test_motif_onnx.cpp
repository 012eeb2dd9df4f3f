// Every built-in motif, exact and varied, instantiates cases that ONNX's
// checker and strict shape inference accept, with finite outputs: the solver
// makes motif instances valid like any other node.
#include <doctest/doctest.h>

#include <tensoracle/gen/generator.hpp>
#include <tensoracle/gen/motifs.hpp>
#include <tensoracle/io/case_files.hpp>
#include <tensoracle/io/onnx.hpp>

#include <algorithm>
#include <cmath>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace io_motif_onnx_test {

namespace to = tensoracle;
namespace tg = tensoracle::gen;

TEST_CASE("motifs: every built-in motif, exact and near miss, passes onnx checker and strict shape inference") {
    std::size_t placed = 0, cases = 0;
    for (const auto& m : tg::builtin_motifs()) {
        for (const double near_miss : {0.0, 1.0}) {
            CAPTURE(m.name);
            CAPTURE(near_miss);
            tg::config c;
            c.motif_probability = 0.7;  // a few single ops too: values a motif's first step can read
            c.motif_near_miss = near_miss;
            c.builtin_motifs = false;
            c.user_motifs = {m};
            c.max_nodes = m.steps.size() + 3;
            c.max_dim = 6;
            const tg::generator gen(c);
            tg::generation_stats stats;
            to::io::generated_case k;
            REQUIRE_NOTHROW(k = to::io::make_case(gen, 23, 0, stats));
            ++cases;
            for (const auto& [name, n] : stats.motifs) placed += n;
            REQUIRE_NOTHROW(to::io::check_model(to::io::to_model_proto(k.model)));
            REQUIRE_NOTHROW((void)to::io::onnx_shape_inference(k.model));
            CHECK(k.search.success);
            for (const auto& [name, t] : k.outputs) {
                if (!to::info(t.element_dtype()).is_floating) continue;
                const auto d = t.to<double>();
                CHECK(std::all_of(d.begin(), d.end(), [](double v) { return std::isfinite(v); }));
            }
        }
    }
    // Most instances place at least two steps (a graph whose types no step fits places none).
    CHECK(placed * 2 >= cases);
}

}  // namespace io_motif_onnx_test
