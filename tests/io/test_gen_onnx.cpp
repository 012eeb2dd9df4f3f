// Generated graphs through ONNX's own tools: onnx::checker accepts every
// model and ONNX's strict shape inference agrees with ours on every value
// (a small sample of the 10,000-graph run in benchmarks/bench_gen).
#include <doctest/doctest.h>

#include <tensoracle/gen/generator.hpp>
#include <tensoracle/gen/input_search.hpp>
#include <tensoracle/graph/interpreter.hpp>
#include <tensoracle/io/onnx.hpp>
#include <tensoracle/ops/registry.hpp>

#include <onnx/defs/schema.h>

#include <set>

namespace to = tensoracle;

TEST_CASE("generated graphs: onnx checker and strict shape inference agree with ours on every value") {
    const to::gen::generator gen(to::gen::config{});
    to::gen::generation_stats stats;
    int not_run = 0;
    for (std::uint64_t i = 0; i < 30; ++i) {
        CAPTURE(i);
        auto g = to::gen::case_rng(17, i, gen.settings().hash());
        const auto sketch = gen.generate(g, stats);
        const auto& m = sketch.model;
        const auto proto = to::io::to_model_proto(m);
        REQUIRE_NOTHROW(to::io::check_model(proto));
        std::map<std::string, to::graph::value_info> theirs;
        REQUIRE_NOTHROW(theirs = to::io::onnx_shape_inference(m));
        // Ours: the interpreter on the input search's data (shapes do not depend
        // on free data in generated graphs, but integer ops need valid data to run).
        const auto found = to::gen::search_inputs(sketch, g);
        auto model = m;
        std::map<std::string, to::tensor, std::less<>> feeds;
        for (auto& [k, t] : model.initializers) {
            if (const auto f = found.values.find(k); f != found.values.end()) t = f->second;
        }
        for (const auto& in : m.inputs) feeds.emplace(in.name, found.values.at(in.name));
        to::graph::run_result run;
        try {
            run = to::graph::run(model, feeds, {.record_intermediates = true});
        } catch (const to::error& e) {
            CHECK_FALSE(found.success);  // only data the search gave up on may fail to run
            ++not_run;
            continue;
        }
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
                    // ONNX 1.12 leaves a few shapes open: Transpose of a scalar, and
                    // whatever consumes a value whose shape it left open.
                    bool explained = n.op_type == "Transpose" && run.values.at(n.inputs[0]).shape().empty();
                    for (const auto& in : n.inputs) explained = explained || unknown.count(in) != 0;
                    CHECK_MESSAGE(explained, "ONNX inferred no shape for " << o);
                    unknown.insert(o);
                    continue;
                }
                CHECK(*it->second.shape == ours.shape());
            }
        }
    }
    CHECK(not_run <= 3);
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
