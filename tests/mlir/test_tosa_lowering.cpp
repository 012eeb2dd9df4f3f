// The ONNX -> TOSA lowering of the mlir backends (backends/mlir/tosa_lowering.hpp), without
// MLIR: what each op becomes, what is refused and why. Running the modules through
// mlir-opt-15 and mlir-cpu-runner-15 against the interpreter is cli/check_campaign.cmake's
// `mlir` mode (a campaign and node tests) and scripts/mlir-sweep (every op).
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "mlir/tosa_lowering.hpp"
#include "tensoracle/gen/generator.hpp"
#include "tensoracle/io/case_files.hpp"

namespace {

namespace tm = tensoracle::backends::mlir_tosa;
using tensoracle::dtype;
using tensoracle::tensor;
namespace tg = tensoracle::graph;

std::vector<tm::vtype> input_types(const tensoracle::io::generated_case& c) {
    std::vector<tm::vtype> t;
    for (const auto& in : c.model.inputs) t.push_back({c.inputs.at(in.name).element_dtype(), c.inputs.at(in.name).shape()});
    return t;
}

/// A one-node graph over f32 inputs of the given shapes.
tg::graph one_node(const std::string& op, const std::vector<tensoracle::shape_type>& shapes, tensoracle::spec::attribute_map attrs = {},
                   dtype d = dtype::f32) {
    tg::graph g;
    tg::node n;
    n.op_type = op;
    for (std::size_t k = 0; k < shapes.size(); ++k) {
        g.inputs.push_back({"x" + std::to_string(k), d, shapes[k]});
        n.inputs.push_back("x" + std::to_string(k));
    }
    n.outputs = {"y"};
    n.attributes = std::move(attrs);
    g.nodes.push_back(n);
    g.outputs.push_back({"y", d, std::nullopt});
    return g;
}

std::string lower(const tg::graph& g) {
    std::vector<tm::vtype> t;
    for (const auto& in : g.inputs) t.push_back({in.type, *in.shape});
    tm::lowering l(g, t);
    return l.module_text();
}

int count(const std::string& text, const std::string& what) {
    int n = 0;
    for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("mlir lowering: every op it names lowers a generated instance of itself") {
    // One-node graphs from the op's own spec: each listed op must lower at least one, and a
    // refusal must give a reason, never "not lowered" for an op the list names.
    std::vector<std::string> never;
    for (const auto& op : tm::lowered_op_types()) {
        tensoracle::gen::config cfg;
        cfg.include_ops = {op};
        cfg.max_nodes = 1;
        // TOSA's own types (float64 is none in MLIR 15; f16 pools and matmuls are refused).
        cfg.dtypes = {dtype::f32, dtype::i32, dtype::i64, dtype::boolean};
        cfg.max_dim = 6;
        cfg.search_attempts = 2;
        std::optional<tensoracle::gen::generator> made;
        try {
            made.emplace(cfg);
        } catch (const tensoracle::error&) {
            continue;  // no spec of the op at the config's opset
        }
        const auto& gen = *made;
        int lowered = 0, generated = 0;
        for (std::uint64_t i = 0; i < 16 && lowered == 0; ++i) {
            tensoracle::gen::generation_stats st;
            tensoracle::io::generated_case c;
            try {
                c = tensoracle::io::make_case(gen, 11, i, st);
            } catch (const tensoracle::error&) {
                continue;  // the generator could not place the op alone (Constant, Shape)
            }
            ++generated;
            tm::lowering l(c.model, input_types(c));
            try {
                const auto text = l.module_text();
                CHECK(text.find("func.func @graph") != std::string::npos);
                CHECK(text.find("func.func @main") != std::string::npos);
                CHECK(l.output_types().size() == c.model.outputs.size());
                ++lowered;
            } catch (const tensoracle::unsupported_error& e) {
                INFO(op << ": " << std::string(e.what()));
                CHECK(std::string(e.what()).find("op " + op + " is not lowered") == std::string::npos);
            }
        }
        if (generated > 0 && lowered == 0) never.push_back(op);
    }
    std::string list;
    for (const auto& op : never) list += op + " ";
    INFO("ops no generated instance of which lowered: " << list);
    CHECK(never.empty());
}

TEST_CASE("mlir lowering: what TOSA 15 cannot express is unsupported, with the reason") {
    auto refused = [](const tg::graph& g, const std::string& reason) {
        try {
            (void)lower(g);
            FAIL("lowered, but should be unsupported: " << reason);
        } catch (const tensoracle::unsupported_error& e) {
            INFO(e.what());
            CHECK(std::string(e.what()).find(reason) != std::string::npos);
        }
    };
    refused(one_node("Split", {{4, 4}}), "op Split is not lowered to TOSA");
    refused(one_node("Relu", {{2, 3}}, {}, dtype::u8), "uint8");
    refused(one_node("Relu", {{2, 0}}), "empty tensors");
    refused(one_node("Conv", {{1, 2, 5, 5}, {3, 2, 3, 3}}, {}, dtype::f64), "float64 is not a TOSA element type");
    refused(one_node("MaxPool", {{1, 2, 5, 5}}, {{"kernel_shape", std::vector<std::int64_t>{2, 2}}, {"ceil_mode", std::int64_t{1}}}), "ceil_mode");
    auto pad = one_node("Pad", {{3, 4}}, {{"mode", std::string("reflect")}});
    tensor pads = tensor::zeros(dtype::i64, {4});
    for (auto& v : pads.values<std::int64_t>()) v = 1;
    pad.initializers.emplace("pads", pads);
    pad.nodes[0].inputs.push_back("pads");
    refused(pad, "constant only");
    // A shape computed at run time: TOSA's shapes are static.
    auto g = one_node("Reshape", {{2, 6}});
    g.inputs.push_back({"shape", dtype::i64, tensoracle::shape_type{2}});
    g.nodes[0].inputs.push_back("shape");
    std::vector<tm::vtype> t{{dtype::f32, {2, 6}}, {dtype::i64, {2}}};
    tm::lowering l(g, t);
    CHECK_THROWS_WITH_AS((void)l.module_text(), doctest::Contains("computed at run time"), tensoracle::unsupported_error);
    // ... unless the case's value is given: the module is compiled per case.
    tm::lowering known(g, t);
    tensor shape = tensor::zeros(dtype::i64, {2});
    shape.values<std::int64_t>()[0] = 3;
    shape.values<std::int64_t>()[1] = 4;
    known.specialize_inputs({{"shape", shape}});
    CHECK(known.module_text().find("new_shape = [3, 4]") != std::string::npos);
    // The number of input types must match the graph's inputs.
    const auto relu = one_node("Relu", {{2}});
    tm::lowering wrong(relu, {});
    CHECK_THROWS_WITH_AS((void)wrong.module_text(), doctest::Contains("1 inputs, 0 were given"), tensoracle::error);
}

TEST_CASE("mlir lowering: convolutions become TOSA's NHWC ops, grouped ones one per group") {
    auto conv = [](std::size_t c, std::size_t o, std::int64_t group) {
        auto g = one_node("Conv", {{1, c, 6, 6}}, {{"group", group}, {"pads", std::vector<std::int64_t>{1, 0, 1, 2}}, {"strides", std::vector<std::int64_t>{2, 1}}});
        g.initializers.emplace("w", tensor::zeros(dtype::f32, {o, c / static_cast<std::size_t>(group), 3, 3}));
        g.nodes[0].inputs.push_back("w");
        return lower(g);
    };
    const auto plain = conv(2, 4, 1);
    CHECK(count(plain, "\"tosa.conv2d\"") == 1);
    // ONNX pads (top, left, bottom, right) are TOSA's (top, bottom, left, right).
    CHECK(plain.find("pad = [1, 1, 0, 2]") != std::string::npos);
    CHECK(plain.find("stride = [2, 1]") != std::string::npos);
    CHECK(count(plain, "\"tosa.transpose\"") == 3);  // input, weights, output
    const auto depthwise = conv(3, 6, 3);
    CHECK(count(depthwise, "\"tosa.depthwise_conv2d\"") == 1);
    CHECK(count(depthwise, "\"tosa.conv2d\"") == 0);
    const auto grouped = conv(4, 4, 2);
    CHECK(count(grouped, "\"tosa.conv2d\"") == 2);
    CHECK(count(grouped, "\"tosa.concat\"") == 1);
}

TEST_CASE("mlir lowering: float division is arith.divf, constants keep their exact bits") {
    auto g = one_node("Div", {{2, 3}});
    tensor c = tensor::zeros(dtype::f32, {3});
    c.values<float>()[0] = 0.1f;
    c.values<float>()[1] = -2.0f;
    c.values<float>()[2] = 0.5f;
    g.initializers.emplace("c", c);
    g.nodes[0].inputs.push_back("c");
    const auto text = lower(g);
    CHECK(text.find("arith.divf") != std::string::npos);
    CHECK(text.find("tosa.reciprocal") == std::string::npos);  // 1/y then x * (1/y) rounds twice
    // 0.1f, -2.0f and 0.5f as little-endian bytes.
    CHECK(text.find("dense<\"0xCDCCCC3D000000C00000003F\">") != std::string::npos);
    // Broadcasting: the [3] constant is read along the last dim.
    CHECK(text.find("affine_map<(d0, d1) -> (d1)>") != std::string::npos);
}

TEST_CASE("mlir lowering: ops of ranks above 4 reduce, tile and argmax through 3-D views") {
    // TOSA 15's reduce_*, tile and argmax take ranks 1 to 4.
    const auto r = lower(one_node("ReduceSum", {{2, 1, 3, 2, 2}}, {{"axes", std::vector<std::int64_t>{2}}, {"keepdims", std::int64_t{0}}}));
    CHECK(r.find("(tensor<2x3x4xf32>) -> tensor<2x1x4xf32>") != std::string::npos);
    const auto a = lower(one_node("ArgMax", {{2, 1, 3, 2, 2}}, {{"axis", std::int64_t{2}}}));
    CHECK(a.find("(tensor<2x3x4xf32>) -> tensor<2x4xi32>") != std::string::npos);
}

TEST_CASE("mlir lowering: float64 constants are builtin, TOSA ops on float64 or past their ranks refused") {
    // MLIR 15's TOSA has no f64: a f64 weight is an arith.constant that linalg reads.
    auto g = one_node("Mul", {{3}}, {}, dtype::f64);
    g.initializers.emplace("c", tensor::zeros(dtype::f64, {3}));
    g.nodes[0].inputs.push_back("c");
    const auto text = lower(g);
    CHECK(text.find("arith.constant dense<") != std::string::npos);
    CHECK(text.find("\"tosa.const\"") == std::string::npos);
    // What would reach mlir-opt as invalid TOSA is unsupported, with the op, type or rank.
    CHECK_THROWS_WITH_AS((void)lower(one_node("Transpose", {{2, 3}}, {}, dtype::f64)), doctest::Contains("tosa.transpose on float64"),
                         tensoracle::unsupported_error);
    CHECK_THROWS_WITH_AS((void)lower(one_node("Softmax", {{2, 2, 2, 2, 3}})), doctest::Contains("tosa.reduce_max on a rank-5 tensor"),
                         tensoracle::unsupported_error);
}

TEST_CASE("mlir lowering: Clip reads one-element bounds of any rank") {
    // x of rank 0, a computed max of shape [1]: the bound is read at index 0 (no broadcast
    // of a wider input over a narrower result).
    tg::graph g = one_node("Clip", {{}}, {}, dtype::f32);
    g.inputs.push_back({"hi", dtype::f32, tensoracle::shape_type{1}});
    g.nodes[0].inputs = {"x0", "", "hi"};
    const auto text = lower(g);
    CHECK(text.find("affine_map<() -> (0)>") != std::string::npos);
    // A bound of several elements is no ONNX Clip.
    tg::graph wide = one_node("Clip", {{3}}, {}, dtype::f32);
    wide.inputs.push_back({"hi", dtype::f32, tensoracle::shape_type{3}});
    wide.nodes[0].inputs = {"x0", "", "hi"};
    CHECK_THROWS_WITH_AS((void)lower(wide), doctest::Contains("a Clip bound of 3 elements"), tensoracle::error);
}

TEST_CASE("mlir lowering: ArgMax with select_last_index reverses the axis") {
    const auto text = lower(one_node("ArgMax", {{3, 4}}, {{"axis", std::int64_t{1}}, {"select_last_index", std::int64_t{1}}}));
    CHECK(count(text, "\"tosa.reverse\"") == 1);
    // index = 3 - (index of the first maximum of the reversed row)
    CHECK(text.find("arith.constant 3 : i64") != std::string::npos);
    CHECK(text.find("arith.subi") != std::string::npos);
}

TEST_CASE("mlir lowering: rank-0 reductions, integer Clip, outputs aliasing inputs") {
    // Nothing to reduce, but the log of ReduceLogSum stays.
    CHECK(lower(one_node("ReduceLogSum", {{}})).find("math.log") != std::string::npos);
    // Integer Clip compares signed, against the constant bounds.
    auto clip = one_node("Clip", {{4}}, {}, dtype::i32);
    tensor lo = tensor::zeros(dtype::i32, {}), hi = tensor::zeros(dtype::i32, {});
    lo.values<std::int32_t>()[0] = -2;
    hi.values<std::int32_t>()[0] = 5;
    clip.initializers.emplace("lo", lo);
    clip.initializers.emplace("hi", hi);
    clip.nodes[0].inputs = {"x0", "lo", "hi"};
    const auto c = lower(clip);
    CHECK(c.find("arith.cmpi slt") != std::string::npos);
    CHECK(c.find("arith.constant 5 : i32") != std::string::npos);
    // An identity Transpose returns its input: the output gets a buffer of its own.
    const auto t = lower(one_node("Transpose", {{3}}));
    CHECK(t.find("return %arg0") == std::string::npos);
    CHECK(t.find("linalg.generic") != std::string::npos);
}
