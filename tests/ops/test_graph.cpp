// Graph IR validation (SONNX rules) and the interpreter.
#include <doctest/doctest.h>

#include <tensoracle/graph/interpreter.hpp>
#include <tensoracle/tensoracle.hpp>

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
