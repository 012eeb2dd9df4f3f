// Graph IR validation (SONNX rules) and the interpreter.
#include <doctest/doctest.h>

#include <limits>
#include <thread>
#include <vector>

#include <tensoracle/graph/interpreter.hpp>
#include <tensoracle/core.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ops_graph_test {

namespace to = tensoracle;
namespace tg = tensoracle::graph;

namespace {
// y = relu(x * w + b), with w and b as initializers.
tg::graph small_graph() {
    tg::graph g;
    g.name = "small";
    g.inputs = {{"x", to::dtype::f32, to::shape_type{2, 3}}};
    g.outputs = {{"y", to::dtype::f32, std::nullopt}};
    g.initializers.emplace("w", to::tensor(to::array<float>{1.f, -2.f, 3.f}));
    g.initializers.emplace("b", to::tensor(to::array<float>{0.5f}));
    g.nodes = {{"Mul", {"x", "w"}, {"xw"}, {}, "mul", ""},
               {"Add", {"xw", "b"}, {"z"}, {}, "add", ""},
               {"Relu", {"z"}, {"y"}, {}, "relu", ""}};
    return g;
}
}  // namespace

TEST_CASE("graph: runs in dependency order and records intermediates") {
    auto g = small_graph();
    std::swap(g.nodes[0], g.nodes[2]);  // declaration order does not matter
    const to::tensor x(to::array<float>{{1.f, 1.f, 1.f}, {-1.f, 2.f, 0.f}});
    const auto r = tg::run(g, {{"x", x}}, {.record_intermediates = true});
    const to::array<float> expected = {{1.5f, 0.f, 3.5f}, {0.f, 0.f, 0.5f}};
    CHECK(to::allclose(r.outputs.at("y"), to::tensor(expected), to::tolerance{}));
    CHECK(r.values.size() == 6);  // x, w, b, xw, z, y
    CHECK(to::allclose(r.values.at("z"), to::tensor(to::array<float>{{1.5f, -1.5f, 3.5f}, {-0.5f, -3.5f, 0.5f}}),
                       to::tolerance{}));
    CHECK(tg::run(g, {{"x", x}}).values.empty());
}

TEST_CASE("graph: validation errors name the rule and the node") {
    SUBCASE("unknown op") {
        auto g = small_graph();
        g.nodes[2].op_type = "NoSuchOp";
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("uses unknown op 'NoSuchOp'"), to::error);
    }
    SUBCASE("undefined input (T05a)") {
        auto g = small_graph();
        g.nodes[1].inputs[1] = "missing";
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("reads 'missing', which is never defined"), to::error);
    }
    SUBCASE("assigned twice (T05e)") {
        auto g = small_graph();
        g.nodes[1].outputs[0] = "xw";
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("tensor 'xw' is assigned more than once"), to::error);
    }
    SUBCASE("cycle") {
        auto g = small_graph();
        g.nodes[0].inputs[0] = "y";
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("the graph has a cycle"), to::error);
    }
    SUBCASE("arity (T03b)") {
        auto g = small_graph();
        g.nodes[2].inputs.push_back("x");
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("Relu takes at most 1"), to::error);
        g = small_graph();
        g.nodes[0].inputs.pop_back();
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("lacks required input 1"), to::error);
    }
    SUBCASE("bad attribute") {
        auto g = small_graph();
        g.nodes[2].attributes["alpha"] = 0.5;
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("unknown attribute 'alpha'; the op has none"), to::error);
    }
    SUBCASE("undefined graph output") {
        auto g = small_graph();
        g.outputs[0].name = "nowhere";
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("graph output 'nowhere' is never defined"), to::error);
    }
    SUBCASE("foreign domain") {
        auto g = small_graph();
        g.nodes[2].domain = "com.microsoft";
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("which tensoracle does not support"), to::error);
    }
}

TEST_CASE("graph: feeds are checked and kernel errors name the node") {
    const auto g = small_graph();
    CHECK_THROWS_WITH_AS((void)tg::run(g, {}), doctest::Contains("graph input 'x' is not fed"), to::error);
    CHECK_THROWS_WITH_AS((void)tg::run(g, {{"x", to::tensor(to::array<double>{{1, 2, 3}, {4, 5, 6}})}}),
                         doctest::Contains("declared f32 but fed f64"), to::dtype_error);
    CHECK_THROWS_WITH_AS((void)tg::run(g, {{"x", to::tensor(to::array<float>{1, 2, 3})}}),
                         doctest::Contains("declared [2, 3] but fed [3]"), to::shape_error);
    CHECK_THROWS_WITH_AS((void)tg::run(g, {{"x", to::tensor(to::array<float>{{1, 2, 3}, {4, 5, 6}})}, {"q", to::tensor()}}),
                         doctest::Contains("feed 'q' is not a graph input"), to::error);
    auto bad = small_graph();
    bad.inputs[0].shape.reset();
    // [2, 4] does not broadcast with w's [3]: the constraint names the node.
    CHECK_THROWS_WITH_AS((void)tg::run(bad, {{"x", to::tensor(to::array<float>::from_shape({2, 4}))}}),
                         doctest::Contains("node mul (Mul): Mul: constraint violated"), to::error);
}

TEST_CASE("spec: constraint violations print the symbols' values") {
    const auto& add = to::ops::get_op("Add");
    const to::tensor a(to::array<float>::from_shape({2, 3})), b(to::array<float>::from_shape({4}));
    CHECK_THROWS_WITH_AS((void)to::spec::evaluate(add, {&a, &b}, {}),
                         doctest::Contains("in0.shape[1]=3, in1.shape[0]=4"), to::shape_error);
    const to::tensor i(to::array<std::int32_t>{1});
    CHECK_THROWS_WITH_AS((void)to::spec::evaluate(add, {&a, &i}, {}),
                         doctest::Contains("input 1 ('B') has dtype i32 but type T is already f32"), to::dtype_error);
    const to::tensor s(to::array<bool>{true});
    CHECK_THROWS_WITH_AS((void)to::spec::evaluate(to::ops::get_op("Relu"), {&s}, {}),
                         doctest::Contains("has dtype bool; allowed: {f16, bf16, f32, f64, i8, i16, i32, i64}"),
                         to::dtype_error);
    CHECK_THROWS_WITH_AS((void)to::spec::evaluate(to::ops::get_op("Cast"), {&a}, {}),
                         doctest::Contains("required attribute 'to' is missing"), to::error);
    const to::tensor zero(to::array<std::int32_t>{0}), one(to::array<std::int32_t>{1});
    CHECK_THROWS_WITH_AS((void)to::spec::evaluate(to::ops::get_op("Div"), {&one, &zero}, {}),
                         doctest::Contains("integer division by zero"), to::error);
}

TEST_CASE("constraint language: evaluation, printing, Euclidean division, overflow") {
    using to::spec::expr;
    const auto x = expr::symbol("x"), y = expr::symbol("y");
    const auto e = (x + 3) * y - x / 2;
    CHECK(e.to_string() == "(x + 3) * y - x / 2");
    CHECK(e.eval({{"x", 4}, {"y", 5}}) == 33);
    CHECK((x / 3).eval({{"x", -7}}) == -3);  // Euclidean: -7 = 3 * -3 + 2
    CHECK((x % 3).eval({{"x", -7}}) == 2);
    CHECK((x % -3).eval({{"x", -7}}) == 2);
    CHECK(select(x > 0, x, -x).eval({{"x", -5}}) == 5);
    CHECK((x == 1 || y != 2).eval({{"x", 0}, {"y", 2}}) == 0);
    CHECK(min(x, y).eval({{"x", 3}, {"y", -1}}) == -1);
    CHECK((expr(2) + 3).is_constant());
    CHECK(e.symbols() == std::vector<std::string>{"x", "y"});
    CHECK_THROWS_WITH_AS((void)(x / y).eval({{"x", 1}, {"y", 0}}), doctest::Contains("division by zero"), to::error);
    CHECK_THROWS_WITH_AS((void)(x * x).eval({{"x", std::int64_t{1} << 40}}), doctest::Contains("int64 overflow"),
                         to::error);
    CHECK_THROWS_WITH_AS((void)x.eval({}), doctest::Contains("symbol 'x' has no value"), to::error);
}

TEST_CASE("constraint language: constants fold the same on both sides of the shared small ones") {
    // Small constants share one node each, larger ones get their own: the value,
    // the printing and the errors of folding must not tell them apart.
    using to::spec::expr;
    for (const std::int64_t v : {std::int64_t{-65}, std::int64_t{-64}, std::int64_t{0}, std::int64_t{1024},
                                 std::int64_t{1025}, std::int64_t{1} << 40}) {
        CAPTURE(v);
        const expr a(v);
        CHECK(a.is_constant());
        CHECK(a.constant_value() == v);
        CHECK(a.to_string() == std::to_string(v));
        CHECK((a + 1).constant_value() == v + 1);
        CHECK((a - a).constant_value() == 0);
        CHECK((a / 7).constant_value() == (v - (((v % 7) + 7) % 7)) / 7);  // Euclidean
        CHECK((a >= 0).constant_value() == (v >= 0 ? 1 : 0));
        const auto x = expr::symbol("x");
        CHECK((a * x).eval({{"x", 3}}) == 3 * v);
    }
    // Euclidean remainder by INT64_MIN: |b| does not fit int64 (this once overflowed).
    const std::int64_t lowest = std::numeric_limits<std::int64_t>::min();
    const auto x = expr::symbol("x");
    CHECK((x % lowest).eval({{"x", -5}}) == std::numeric_limits<std::int64_t>::max() - 4);
    CHECK((x / lowest).eval({{"x", -5}}) == 1);
    CHECK((x % lowest).eval({{"x", 5}}) == 5);
    CHECK((x / lowest).eval({{"x", 5}}) == 0);
    CHECK((x % lowest).eval({{"x", lowest}}) == 0);
    // Folding throws where evaluation would, naming the expression.
    CHECK_THROWS_WITH_AS((void)(expr(5) / 0), doctest::Contains("division by zero evaluating 5 / 0"), to::error);
    CHECK_THROWS_WITH_AS((void)(expr(std::int64_t{1} << 40) * expr(std::int64_t{1} << 40)),
                         doctest::Contains("int64 overflow"), to::error);
}

TEST_CASE("constraint language: expressions made on one thread live and die on others") {
    // Nodes come from per-thread free lists: a node made on one thread and
    // released on another, or after its maker ended, must stay intact and be
    // reusable (the generator's parallel jobs and a user's threads do this).
    using to::spec::expr;
    const auto x = expr::symbol("x");
    constexpr std::int64_t big = 5000;  // past the shared small constants: every one is a new node
    auto make_batch = [&](std::int64_t from, std::size_t count) {
        std::vector<expr> out;
        for (std::size_t k = 0; k < count; ++k) out.push_back(x * 2 + (from + static_cast<std::int64_t>(k)));
        return out;
    };
    auto check_batch = [](const std::vector<expr>& batch, std::int64_t from, std::int64_t at) {
        std::size_t wrong = 0;
        for (std::size_t k = 0; k < batch.size(); ++k) {
            if (batch[k].eval({{"x", at}}) != 2 * at + from + static_cast<std::int64_t>(k)) ++wrong;
        }
        return wrong;
    };
    // Made on a thread that has ended, read and released here.
    std::vector<expr> made_there;
    std::thread([&] { made_there = make_batch(big, 10000); }).join();
    CHECK(check_batch(made_there, big, 3) == 0);
    made_there.clear();
    // Made here, released on another thread, which then makes new ones from the freed nodes.
    auto made_here = make_batch(2 * big, 10000);
    std::size_t wrong_there = 0;
    std::thread([&] {
        made_here.clear();
        const auto again = make_batch(3 * big, 10000);
        wrong_there = check_batch(again, 3 * big, -7);
    }).join();
    CHECK(wrong_there == 0);
    // Concurrent makers, each releasing half of its nodes to another thread.
    constexpr int threads = 4;
    std::vector<std::vector<expr>> handed(threads);
    std::vector<std::size_t> wrong(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            for (int round = 0; round < 20; ++round) {
                auto mine = make_batch(big * (t + 1) + round, 500);
                wrong[static_cast<std::size_t>(t)] += check_batch(mine, big * (t + 1) + round, round);
                mine.erase(mine.begin() + 250, mine.end());
                handed[static_cast<std::size_t>(t)] = std::move(mine);
            }
        });
    }
    for (auto& th : pool) th.join();
    for (int t = 0; t < threads; ++t) {
        CHECK(wrong[static_cast<std::size_t>(t)] == 0);
        CHECK(check_batch(handed[static_cast<std::size_t>(t)], big * (t + 1) + 19, 1) == 0);
    }
    handed.clear();  // released here, made on threads that have ended
    CHECK(check_batch(make_batch(big, 100), big, 0) == 0);
}

namespace {
// y = If(cond, then: x * w (w read from the outer graph), else: Neg(x)), then Relu(y).
tg::graph if_graph() {
    tg::graph g;
    g.name = "branchy";
    g.inputs = {{"x", to::dtype::f32, to::shape_type{3}}, {"cond", to::dtype::boolean, to::shape_type{}}};
    g.outputs = {{"out", to::dtype::f32, std::nullopt}};
    g.initializers.emplace("w", to::tensor(to::array<float>{2.f, 3.f, 4.f}));
    tg::graph then_b;
    then_b.name = "then";
    then_b.nodes = {{"Mul", {"x", "w"}, {"t"}, {}, "", ""}};
    then_b.outputs = {{"t", to::dtype::f32, to::shape_type{3}}};
    tg::graph else_b;
    else_b.name = "else";
    else_b.nodes = {{"Neg", {"x"}, {"e"}, {}, "", ""}};
    else_b.outputs = {{"e", to::dtype::f32, to::shape_type{3}}};
    tg::node n{"If", {"cond"}, {"y"}, {}, "if", ""};
    n.subgraphs.emplace("then_branch", tg::subgraph(then_b));
    n.subgraphs.emplace("else_branch", tg::subgraph(else_b));
    g.nodes = {{"Relu", {"y"}, {"out"}, {}, "relu", ""}, n};  // declaration order does not matter
    return g;
}
to::tensor scalar_bool(bool b) {
    to::tensor t = to::tensor::zeros(to::dtype::boolean, {});
    t.values<bool>()[0] = b;
    return t;
}
}  // namespace

TEST_CASE("graph: If runs the branch its cond selects, reading outer values by name") {
    const auto g = if_graph();
    const to::tensor x(to::array<float>{1.f, -1.f, 2.f});
    const auto t = tg::run(g, {{"x", x}, {"cond", scalar_bool(true)}}, {.record_intermediates = true});
    CHECK(t.outputs.at("out").values<float>()[1] == 0.f);
    CHECK(t.values.at("y").values<float>()[2] == 8.f);
    CHECK(t.values.count("t") == 0);  // a branch's values stay in the branch
    const auto e = tg::run(g, {{"x", x}, {"cond", scalar_bool(false)}});
    CHECK(e.outputs.at("out").values<float>()[0] == 0.f);
    CHECK(e.outputs.at("out").values<float>()[1] == 1.f);
    // The If depends on what its branches read: after w's producer, were there one.
    CHECK(tg::graph::reads(g.nodes[1]) == std::vector<std::string>{"cond", "x", "w"});
    CHECK(g.nodes[1].subgraphs.at("then_branch")->outer_reads() == std::set<std::string, std::less<>>{"w", "x"});
    CHECK(tg::op_types(g) == std::set<std::string>{"If", "Mul", "Neg", "Relu"});
}

TEST_CASE("graph: a copied node owns copies of its branches") {
    const auto g = if_graph();
    auto copy = g;
    copy.nodes[1].subgraphs.at("else_branch")->nodes[0].op_type = "Abs";
    CHECK(g.nodes[1].subgraphs.at("else_branch")->nodes[0].op_type == "Neg");
    tg::subgraph moved(tg::subgraph(g.nodes[1].subgraphs.at("then_branch")));
    CHECK(moved->nodes.size() == 1);
}

TEST_CASE("graph: If's rules are checked and its errors name the node") {
    const to::tensor x(to::array<float>{1.f, -1.f, 2.f});
    SUBCASE("cond of two elements") {
        auto g = if_graph();
        g.inputs[1].shape = to::shape_type{2};
        to::tensor two = to::tensor::zeros(to::dtype::boolean, {2});
        CHECK_THROWS_WITH_AS((void)tg::run(g, {{"x", x}, {"cond", two}}), doctest::Contains("If's cond must be a bool tensor of one element"), to::error);
    }
    SUBCASE("cond not bool") {
        auto g = if_graph();
        g.inputs[1].type = to::dtype::f32;
        CHECK_THROWS_WITH_AS((void)tg::run(g, {{"x", x}, {"cond", to::tensor::zeros(to::dtype::f32, {})}}), doctest::Contains("bool tensor of one element"), to::error);
    }
    SUBCASE("a branch missing") {
        auto g = if_graph();
        g.nodes[1].subgraphs.erase("else_branch");
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("If lacks its required graph attribute 'else_branch'"), to::error);
    }
    SUBCASE("a graph attribute If does not take") {
        auto g = if_graph();
        g.nodes[1].subgraphs.emplace("body", tg::subgraph());
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("If takes no graph attribute 'body'"), to::error);
    }
    SUBCASE("a plain attribute") {
        auto g = if_graph();
        g.nodes[1].attributes.emplace("axis", std::int64_t{1});
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("If takes no attribute 'axis'"), to::error);
    }
    SUBCASE("two inputs") {
        auto g = if_graph();
        g.nodes[1].inputs.push_back("x");
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("If takes exactly one input"), to::error);
    }
    SUBCASE("output counts differ") {
        auto g = if_graph();
        g.nodes[1].subgraphs.at("else_branch")->outputs.push_back({"x", to::dtype::f32, std::nullopt});
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("else_branch has 2 output(s) for the node's 1"), to::error);
    }
    SUBCASE("output dtypes differ") {
        auto g = if_graph();
        g.nodes[1].subgraphs.at("else_branch")->outputs[0].type = to::dtype::f64;
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("output 0 is f32 in then_branch but f64 in else_branch"), to::dtype_error);
    }
    SUBCASE("a branch with inputs") {
        auto g = if_graph();
        g.nodes[1].subgraphs.at("then_branch")->inputs.push_back({"z", to::dtype::f32, std::nullopt});
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("then_branch declares 1 input(s)"), to::error);
    }
    SUBCASE("a branch defines an outer name again") {
        auto g = if_graph();
        g.nodes[1].subgraphs.at("then_branch")->nodes[0].outputs[0] = "w";
        g.nodes[1].subgraphs.at("then_branch")->outputs[0].name = "w";
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("already defined in an enclosing graph"), to::error);
    }
    SUBCASE("a branch reads what is defined nowhere") {
        auto g = if_graph();
        g.nodes[1].subgraphs.at("then_branch")->nodes[0].inputs[1] = "nowhere";
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("reads 'nowhere', which is never defined"), to::error);
    }
    SUBCASE("a branch reading the If's own output is a cycle") {
        auto g = if_graph();
        g.nodes[1].subgraphs.at("then_branch")->nodes[0].inputs[1] = "out";
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("the graph has a cycle"), to::error);
    }
    SUBCASE("a branch output declared with another dtype than it holds") {
        auto g = if_graph();
        g.nodes[1].subgraphs.at("then_branch")->outputs[0].type = to::dtype::f64;
        g.nodes[1].subgraphs.at("else_branch")->outputs[0].type = to::dtype::f64;
        CHECK_THROWS_WITH_AS((void)tg::run(g, {{"x", x}, {"cond", scalar_bool(true)}}), doctest::Contains("is declared f64 but holds f32"), to::dtype_error);
    }
    SUBCASE("another op with a graph attribute") {
        auto g = if_graph();
        g.nodes[0].subgraphs.emplace("body", tg::subgraph());
        CHECK_THROWS_WITH_AS(g.validate(), doctest::Contains("has graph attribute 'body', which Relu does not take"), to::error);
    }
}

}  // namespace ops_graph_test
