// Rewrite events from hand-made executed graphs shaped like ONNX Runtime's
// optimized dumps (optimizedModelFilePath at basic, extended and all levels):
// fusions into a new node or into a kept one, eliminations, constant folding,
// Cast insertion, NCHWc layout, attribute changes; and the two report files.
#include <doctest/doctest.h>

#include <tensoracle/campaign/rewrites.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace campaign_rewrites_test {

namespace tc = tensoracle::campaign;
using tensoracle::graph::graph;
using tensoracle::graph::node;

namespace {
node make(std::string op, std::vector<std::string> in, std::vector<std::string> out, tensoracle::spec::attribute_map a = {}) {
    node n;
    n.op_type = std::move(op);
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.attributes = std::move(a);
    return n;
}
tc::executed_node exe(std::string domain, std::string op, std::vector<std::string> in, std::vector<std::string> out) {
    return {std::move(domain), std::move(op), std::move(in), std::move(out), {}};
}
/// The executed form of a node the system left alone (its attributes as the kit writes them).
tc::executed_node kept(const graph& g, std::size_t i) { return tc::as_executed(g).nodes.at(i); }

graph with_nodes(std::vector<node> nodes, std::vector<std::string> initializers = {}) {
    graph g;
    g.opset = 17;
    for (auto& n : nodes) g.nodes.push_back(std::move(n));
    for (const auto& i : initializers) g.initializers.emplace(i, tensoracle::tensor::zeros(tensoracle::dtype::f32, {1}));
    return g;
}
/// "class: kind | class: kind", in event order (a string, so a failure prints it).
std::string kinds(const std::vector<tc::rewrite_event>& ev) {
    std::string k;
    for (const auto& e : ev) k += (k.empty() ? "" : " | ") + std::string(tc::to_string(e.what)) + ": " + e.kind;
    return k;
}
// Conv -> BatchNormalization -> Relu -> Identity, weights as initializers.
graph conv_bn_relu() {
    return with_nodes({make("Conv", {"x", "w", "b"}, {"c"}), make("BatchNormalization", {"c", "s", "bb", "mn", "vr"}, {"bn"}),
                       make("Relu", {"bn"}, {"r"}), make("Identity", {"r"}, {"y"})},
                      {"w", "b", "s", "bb", "mn", "vr"});
}
}  // namespace

TEST_CASE("rewrites: ORT's basic level folds BatchNormalization into Conv and drops Identity") {
    const auto g = conv_bn_relu();
    tc::executed_graph e;
    e.nodes = {exe("", "Conv", {"x", "ConvBnFusion_W_w", "ConvBnFusion_BN_B_bb"}, {"bn"}), exe("", "Relu", {"bn"}, {"y"})};
    e.initializers = {"ConvBnFusion_W_w", "ConvBnFusion_BN_B_bb"};
    const auto ev = tc::rewrite_events(tc::as_executed(g), e);
    CHECK(kinds(ev) == "fusion: Conv+BatchNormalization -> Conv | elimination: Identity eliminated");
    REQUIRE(ev.size() == 2);
    CHECK(ev[0].original == std::vector<std::size_t>{0, 1});
    CHECK(ev[0].executed == std::vector<std::size_t>{0});
    CHECK(tc::is_optimization(ev[0].what));
}

TEST_CASE("rewrites: the extended level's FusedConv and the layout level's NCHWc nodes") {
    const auto g = conv_bn_relu();
    tc::executed_graph ext;
    ext.nodes = {exe("com.microsoft", "FusedConv", {"x", "W2", "B2"}, {"y"})};
    ext.initializers = {"W2", "B2"};
    CHECK(kinds(tc::rewrite_events(tc::as_executed(g), ext)) ==
          "fusion: Conv+BatchNormalization+Relu+Identity -> com.microsoft::FusedConv");
    tc::executed_graph all;
    all.nodes = {exe("com.microsoft.nchwc", "Conv", {"x", "reorder", "reorder_token_0"}, {"reorder_token_1"}),
                 exe("com.microsoft.nchwc", "ReorderOutput", {"reorder_token_1"}, {"y"})};
    all.initializers = {"reorder", "reorder_token_0"};
    CHECK(kinds(tc::rewrite_events(tc::as_executed(g), all)) ==
          "fusion: Conv+BatchNormalization+Relu+Identity -> com.microsoft.nchwc::Conv+com.microsoft.nchwc::ReorderOutput");
    // A Conv alone moved to the blocked layout is a layout change, not an optimization.
    const auto conv = with_nodes({make("Conv", {"x", "w"}, {"y"})}, {"w"});
    tc::executed_graph blocked;
    blocked.nodes = {exe("com.microsoft.nchwc", "ReorderInput", {"x"}, {"t0"}), exe("com.microsoft.nchwc", "Conv", {"t0", "w2"}, {"t1"}),
                     exe("com.microsoft.nchwc", "ReorderOutput", {"t1"}, {"y"})};
    blocked.initializers = {"w2"};
    const auto ev = tc::rewrite_events(tc::as_executed(conv), blocked);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].what == tc::rewrite_class::layout);
    CHECK_FALSE(tc::is_optimization(ev[0].what));
}

TEST_CASE("rewrites: MatMul+Add into Gemm, Relu into Clip's bound, a Transpose into Gemm's attribute") {
    const auto mm = with_nodes({make("MatMul", {"a", "w"}, {"m"}), make("Add", {"m", "bias"}, {"y"})}, {"w", "bias"});
    tc::executed_graph gemm;
    gemm.nodes = {exe("", "Gemm", {"a", "w", "bias"}, {"y"})};
    gemm.initializers = {"w", "bias"};
    CHECK(kinds(tc::rewrite_events(tc::as_executed(mm), gemm)) == "fusion: MatMul+Add -> Gemm");

    // FuseReluClip: Clip keeps its output and reads X with a raised minimum (a new constant).
    const auto rc = with_nodes({make("Relu", {"x"}, {"r"}), make("Clip", {"r", "lo", "hi"}, {"y"})}, {"lo", "hi"});
    tc::executed_graph clip;
    clip.nodes = {exe("", "Clip", {"x", "lo_raised", "hi"}, {"y"})};
    clip.initializers = {"lo_raised", "hi"};
    CHECK(kinds(tc::rewrite_events(tc::as_executed(rc), clip)) == "fusion: Relu+Clip -> Clip");

    // GemmTransposeFusion: the Transpose vanishes and Gemm's transA changes.
    auto gt = with_nodes({make("Transpose", {"a"}, {"t"}, {{"perm", std::vector<std::int64_t>{1, 0}}}), make("Gemm", {"t", "w"}, {"y"})}, {"w"});
    auto changed = with_nodes({make("Gemm", {"a", "w"}, {"y"}, {{"transA", std::int64_t{1}}})}, {"w"});
    tc::executed_graph fused;
    fused.nodes = {kept(changed, 0)};
    fused.initializers = {"w"};
    CHECK(kinds(tc::rewrite_events(tc::as_executed(gt), fused)) == "fusion: Transpose+Gemm -> Gemm");
}

TEST_CASE("rewrites: constant folding, Cast insertion around a float16 island, an untouched graph") {
    // Add of two initializers folded into one initializer that Relu reads.
    const auto g = with_nodes({make("Add", {"c1", "c2"}, {"s"}), make("Mul", {"s", "x"}, {"y"})}, {"c1", "c2"});
    tc::executed_graph folded;
    folded.nodes = {kept(g, 1)};
    folded.initializers = {"s"};
    CHECK(kinds(tc::rewrite_events(tc::as_executed(g), folded)) == "folding: constant folding: Add");

    // Add in float16 run in float32: Casts around it, every name new but the output's.
    const auto h = with_nodes({make("Add", {"x", "z"}, {"y"})});
    tc::executed_graph casts;
    casts.nodes = {exe("", "Cast", {"x"}, {"x32"}), exe("", "Cast", {"z"}, {"z32"}), exe("", "Add", {"x32", "z32"}, {"y32"}),
                   exe("", "Cast", {"y32"}, {"y"})};
    const auto ev = tc::rewrite_events(tc::as_executed(h), casts);
    CHECK(kinds(ev) == "insertion: Cast inserted | insertion: Cast inserted | insertion: Cast inserted");

    // Between inserted Casts, a LeakyRelu expanded into its function body and a Sqrt
    // left alone: the Sqrt matches under its original names.
    const auto island = with_nodes({make("Sqrt", {"x"}, {"s"}), make("LeakyRelu", {"s"}, {"y"})});
    tc::executed_graph expanded;
    expanded.nodes = {exe("", "Cast", {"x"}, {"x32"}), exe("", "Sqrt", {"x32"}, {"s32"}), exe("", "Mul", {"s32", "alpha"}, {"m"}),
                      exe("", "Less", {"s32", "zero"}, {"neg"}), exe("", "Where", {"neg", "m", "s32"}, {"y32"}),
                      exe("", "Cast", {"y32"}, {"y"})};
    expanded.initializers = {"alpha", "zero"};
    CHECK(kinds(tc::rewrite_events(tc::as_executed(island), expanded)) ==
          "expansion: LeakyRelu -> Mul+Less+Where | insertion: Cast inserted | insertion: Cast inserted");

    // ORT's own names for a float16 island run in float32: intermediates renamed, the
    // constant converted under a new name, Casts only at the graph's edges. Matched by
    // structure: nothing but the Casts is an event.
    const auto f16 = with_nodes({make("Sqrt", {"c"}, {"s"}), make("Relu", {"s"}, {"r"}), make("MatMul", {"r", "x"}, {"y"})}, {"c"});
    tc::executed_graph wholesale;
    wholesale.nodes = {exe("", "Cast", {"x"}, {"Cast_x"}), exe("", "Sqrt", {"FusedBack_c"}, {"Fp32_s"}),
                       exe("", "Relu", {"Fp32_s"}, {"Fp32_r"}), exe("", "MatMul", {"Fp32_r", "Cast_x"}, {"Fp32_y"}),
                       exe("", "Cast", {"Fp32_y"}, {"y"})};
    wholesale.initializers = {"FusedBack_c"};
    CHECK(kinds(tc::rewrite_events(tc::as_executed(f16), wholesale)) == "insertion: Cast inserted | insertion: Cast inserted");

    // Two equal Sigmoids of one input, one of them gone: common subexpression elimination.
    const auto cse = with_nodes({make("Sigmoid", {"x"}, {"a"}), make("Sigmoid", {"x"}, {"b"}), make("Add", {"a", "b"}, {"y"})});
    tc::executed_graph one;
    one.nodes = {kept(cse, 0), exe("", "Add", {"a", "a"}, {"y"})};
    CHECK(kinds(tc::rewrite_events(tc::as_executed(cse), one)) == "elimination: common subexpression: Sigmoid");

    // Nothing changed: no event, whatever the attributes (written by the same serializer).
    const auto same = with_nodes({make("Transpose", {"a"}, {"t"}, {{"perm", std::vector<std::int64_t>{1, 0}}}), make("Relu", {"t"}, {"y"})});
    CHECK(tc::rewrite_events(tc::as_executed(same), tc::as_executed(same)).empty());
}

TEST_CASE("rewrites: a backend's report files: rewritten.onnx, rewrites.json, a broken report") {
    namespace fs = std::filesystem;
    const auto dir = fs::temp_directory_path() / ("tensoracle_rewrites_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const auto g = conv_bn_relu();
    CHECK_FALSE(tc::reported_rewrites(g, dir).has_value());  // no report: not "nothing rewritten"

    // rewritten.onnx: the basic level's graph, written as a system would.
    auto basic = with_nodes({make("Conv", {"x", "ConvBnFusion_W_w", "ConvBnFusion_BN_B_bb"}, {"bn"}), make("Relu", {"bn"}, {"y"})},
                            {"ConvBnFusion_W_w", "ConvBnFusion_BN_B_bb"});
    {
        // Written unchecked: these graphs leave their inputs undeclared.
        std::ofstream(dir / "rewritten.onnx", std::ios::binary) << tensoracle::io::to_model_proto(basic).SerializeAsString();
    }
    const auto from_onnx = tc::reported_rewrites(g, dir);
    REQUIRE(from_onnx.has_value());
    CHECK(kinds(*from_onnx) == "fusion: Conv+BatchNormalization -> Conv | elimination: Identity eliminated");
    fs::remove(dir / "rewritten.onnx");

    {
        std::ofstream(dir / "rewrites.json") << R"({"events": [{"kind": "conv2d+batch_norm folded", "class": "folding"}]})";
    }
    const auto from_json = tc::reported_rewrites(g, dir);
    REQUIRE(from_json.has_value());
    REQUIRE(from_json->size() == 1);
    CHECK(from_json->front().kind == "conv2d+batch_norm folded");
    CHECK(from_json->front().what == tc::rewrite_class::folding);

    {
        std::ofstream(dir / "rewrites.json") << R"({"events": [{"kind": "x", "class": "magic"}]})";
    }
    const auto bad_class = tc::reported_rewrites(g, dir);
    REQUIRE(bad_class.has_value());
    REQUIRE(bad_class->size() == 1);
    CHECK(bad_class->front().kind.find("unreadable rewrite report: rewrites.json") == 0);
    CHECK(bad_class->front().kind.find("'magic'") != std::string::npos);
    fs::remove(dir / "rewrites.json");

    {
        std::ofstream(dir / "rewritten.onnx") << "not protobuf at all";
    }
    const auto broken = tc::reported_rewrites(g, dir);
    REQUIRE(broken.has_value());
    REQUIRE(broken->size() == 1);
    CHECK(broken->front().kind.find("unreadable rewrite report") == 0);
    CHECK_FALSE(tc::is_optimization(broken->front().what));
    fs::remove_all(dir);
}

}  // namespace campaign_rewrites_test
