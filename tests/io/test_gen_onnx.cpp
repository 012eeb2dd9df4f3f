// Generated graphs through ONNX's own tools: onnx::checker accepts every
// model and ONNX's strict shape inference agrees with ours on every value
// (a small sample of the 10,000-graph run in benchmarks/bench_gen).
#include <doctest/doctest.h>

#include <tensoracle/gen/generator.hpp>
#include <tensoracle/gen/input_search.hpp>
#include <tensoracle/graph/interpreter.hpp>
#include <tensoracle/io/case_files.hpp>
#include <tensoracle/io/onnx.hpp>
#include <tensoracle/ops/registry.hpp>

#include <onnx/defs/schema.h>

#include <cmath>
#include <set>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace io_gen_onnx_test {

namespace to = tensoracle;

TEST_CASE("generated cases: onnx checker, strict shape inference agreeing on every value, finite outputs") {
    const to::gen::generator gen(to::gen::config{});
    to::gen::generation_stats stats;
    for (std::uint64_t i = 0; i < 30; ++i) {
        CAPTURE(i);
        // The case as `tensoracle gen` writes it (input search included).
        to::io::generated_case c;
        REQUIRE_NOTHROW(c = to::io::make_case(gen, 17, i, stats));
        const auto& m = c.model;
        REQUIRE_NOTHROW(to::io::check_model(to::io::to_model_proto(m)));
        std::map<std::string, to::graph::value_info> theirs;
        REQUIRE_NOTHROW(theirs = to::io::onnx_shape_inference(m));
        CHECK(c.search.success);
        const auto run = to::graph::run(m, c.inputs, {.record_intermediates = true});
        std::set<std::string> unknown;
        for (const auto& n : m.nodes) {
            for (const auto& o : n.outputs) {
                if (o.empty()) continue;
                CAPTURE(n.op_type);
                CAPTURE(o);
                const auto& ours = run.values.at(o);
                const auto it = theirs.find(o);
                REQUIRE_MESSAGE(it != theirs.end(), "ONNX inferred nothing for " << o);
                CHECK(it->second.type == ours.element_dtype());
                if (!it->second.shape) {
                    // ONNX 1.12 leaves a few shapes open: Transpose of a scalar, OneHot
                    // (it does not read the depth initializer, so the new axis stays
                    // unknown), and whatever consumes a value whose shape it left open.
                    bool explained = (n.op_type == "Transpose" && run.values.at(n.inputs[0]).shape().empty()) ||
                                     n.op_type == "OneHot";
                    for (const auto& in : n.inputs) explained = explained || unknown.count(in) != 0;
                    CHECK_MESSAGE(explained, "ONNX inferred no shape for " << o);
                    unknown.insert(o);
                    continue;
                }
                CHECK(*it->second.shape == ours.shape());
            }
        }
        for (const auto& out : m.outputs) {
            const auto& t = run.values.at(out.name);
            if (!to::info(t.element_dtype()).is_floating) continue;
            for (const double x : t.to<double>()) REQUIRE_MESSAGE(std::isfinite(x), "output " << out.name);
        }
    }
}

TEST_CASE("specs accept no input dtype that the op's ONNX schema (at the spec's opset) rejects") {
    // Generated models are checked by ONNX; a spec more permissive than the
    // schema (bfloat16 for ops that predate it) would make invalid models.
    for (const auto& e : to::ops::registry()) {
        CAPTURE(e.op_type);
        const auto* schema = onnx::OpSchemaRegistry::Schema(std::string(e.op_type), e.opset, "");
        REQUIRE(schema != nullptr);
        for (std::size_t i = 0; i < e.inputs.size() && i < schema->inputs().size(); ++i) {
            CAPTURE(e.inputs[i].name);
            std::set<std::string> allowed;
            for (const auto* t : schema->inputs()[i].GetTypes()) allowed.insert(*t);
            for (const auto d : e.inputs[i].types.members()) {
                CAPTURE(d);
                const std::string type =
                    "tensor(" + std::string(onnx::Utils::DataTypeUtils::ToDataTypeString(to::onnx_type(d))) + ")";
                CHECK(allowed.count(type) == 1);
            }
        }
    }
}

}  // namespace io_gen_onnx_test
