// The memory budget (core/memory.hpp) at each place the interpreter allocates: shape
// inference of a node's outputs, a kernel's output, intermediates that add up.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <tensoracle/core.hpp>
#include <tensoracle/graph/interpreter.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace graph_memory_budget_test {

namespace to = tensoracle;
namespace tg = tensoracle::graph;

constexpr std::uint64_t KiB = 1024;

to::tensor i64s(std::vector<std::int64_t> v) {
    to::array<std::int64_t> a = to::array<std::int64_t>::from_shape({v.size()});
    std::copy(v.begin(), v.end(), a.begin());
    return to::tensor(a);
}

// One node reading initializers only: the graph runs without feeds.
tg::graph one_node(const std::string& op, std::map<std::string, to::tensor, std::less<>> inits, std::vector<std::string> inputs) {
    tg::graph g;
    g.name = "hostile";
    g.initializers = std::move(inits);
    g.outputs = {{"y", to::dtype::f32, std::nullopt}};
    g.nodes = {{op, std::move(inputs), {"y"}, {}, "big", ""}};
    return g;
}

std::string run_error(const tg::graph& g, const std::map<std::string, to::tensor, std::less<>>& feeds = {}) {
    try {
        (void)tg::run(g, feeds);
    } catch (const to::memory_error& e) {
        return e.what();
    }
    return "no memory_error";
}

TEST_CASE("memory budget: outputs that shape inference sizes past the budget name node, op, shape and bytes") {
    const auto before = to::memory_in_use();
    SUBCASE("ConstantOfShape to [100000, 100000, 100]") {
        const auto what = run_error(one_node("ConstantOfShape", {{"s", i64s({100000, 100000, 100})}}, {"s"}));
        CHECK(what.find("node big (ConstantOfShape): ConstantOfShape: the output f32[100000, 100000, 100] (3.6 TiB") != std::string::npos);
        CHECK(what.find("over the memory budget of") != std::string::npos);
    }
    SUBCASE("Expand to [100000, 100000, 100]") {
        const auto what = run_error(one_node("Expand", {{"x", to::tensor(to::array<float>{1.f})}, {"s", i64s({100000, 100000, 100})}}, {"x", "s"}));
        CHECK(what.find("node big (Expand): Expand: the output f32[100000, 100000, 100]") != std::string::npos);
    }
    SUBCASE("Tile by 10^13") {
        const auto what = run_error(one_node("Tile", {{"x", to::tensor(to::array<float>{1.f, 2.f})}, {"r", i64s({10000000000000})}}, {"x", "r"}));
        CHECK(what.find("node big (Tile): Tile: the output f32[20000000000000] (72.8 TiB") != std::string::npos);
    }
    CHECK(to::memory_in_use() <= before + 64);  // nothing held past the run but the graph's small initializers
}

TEST_CASE("memory budget: a kernel's output is checked with its work copies before the kernel runs") {
    tg::graph g;
    g.name = "mm";
    g.inputs = {{"a", to::dtype::f32, to::shape_type{256, 256}}, {"b", to::dtype::f32, to::shape_type{256, 256}}};
    g.outputs = {{"y", to::dtype::f32, std::nullopt}};
    g.nodes = {{"MatMul", {"a", "b"}, {"y"}, {}, "mm", ""}};
    const auto a = to::tensor::zeros(to::dtype::f32, {256, 256});  // 256 KiB each
    const auto b = to::tensor::zeros(to::dtype::f32, {256, 256});
    const std::map<std::string, to::tensor, std::less<>> feeds{{"a", a}, {"b", b}};
    // The run copies the feeds (512 KiB); MatMul then asks 2 x 256 KiB for its output
    // and 512 KiB for the work copies of its inputs.
    const auto base = to::memory_in_use();
    {
        const to::scoped_memory_limit limit(base + 512 * KiB + 1000 * KiB);
        const auto what = run_error(g, feeds);
        CHECK(what.find("node mm (MatMul): MatMul: the output f32[256, 256] (256.0 KiB, with the kernel's work copies") != std::string::npos);
        CHECK(what.find("needs 1.0 MiB (1048576 bytes)") != std::string::npos);
    }
    {
        const to::scoped_memory_limit limit(base + 512 * KiB + 1024 * KiB);
        CHECK_NOTHROW((void)tg::run(g, feeds));
    }
    CHECK(to::memory_in_use() == base);
}

TEST_CASE("memory budget: intermediates add up, and the node that would pass the budget is named") {
    tg::graph g;
    g.name = "chain";
    g.inputs = {{"x", to::dtype::f32, to::shape_type{256, 256}}};
    g.outputs = {{"r4", to::dtype::f32, std::nullopt}};
    g.nodes = {{"Relu", {"x"}, {"r1"}, {}, "first", ""},
               {"Relu", {"r1"}, {"r2"}, {}, "second", ""},
               {"Relu", {"r2"}, {"r3"}, {}, "third", ""},
               {"Relu", {"r3"}, {"r4"}, {}, "fourth", ""}};
    const std::map<std::string, to::tensor, std::less<>> feeds{{"x", to::tensor::zeros(to::dtype::f32, {256, 256})}};
    const auto base = to::memory_in_use();
    // Each node asks 768 KiB beside what is held: the feed's copy and each output
    // before it (256 KiB each). first: base+1024, second: base+1280, third: base+1536.
    const to::scoped_memory_limit limit(base + 1400 * KiB);
    const auto what = run_error(g, feeds);
    CHECK(what.find("node third (Relu): Relu: the output f32[256, 256]") != std::string::npos);
    CHECK(what.find("(" + to::memory_size_text(base + 768 * KiB) + " of it in use)") != std::string::npos);
    CHECK(to::memory_in_use() == base);
}

}  // namespace graph_memory_budget_test
