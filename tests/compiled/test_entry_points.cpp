// Every public by-name entry point of the kit, in compiled mode, linked
// against tensoracle::compiled: a definition the library lacks (a family left
// out of src/, a rule table not instantiated) is a link error here, and a
// family whose entries or rules went missing is a failed check against the
// typed list of ops (ops::all_ops, which names every op without instantiating
// a kernel).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <boost/hana/for_each.hpp>

#include "tensoracle/doctest.hpp"
#include "tensoracle/ops/all_ops.hpp"
#include "tensoracle/tensoracle.hpp"

#ifndef TENSORACLE_COMPILED
#error "tests/compiled/test_entry_points.cpp checks the compiled mode: link tensoracle::compiled"
#endif

namespace compiled_entry_points_test {

using namespace tensoracle;

namespace {
std::vector<std::string> typed_op_types() {
    std::vector<std::string> names;
    hana::for_each(ops::all_ops, [&](auto t) { names.emplace_back(decltype(t)::type::op_type); });
    std::sort(names.begin(), names.end());
    return names;
}
template <class V>
std::vector<std::string> rule_op_types() {
    std::vector<std::string> names;
    for (const auto& r : ad::rules_table<V>()) names.emplace_back(r.op_type);
    return names;
}
}  // namespace

TEST_CASE("compiled: the library's registry holds exactly the ops of ops::all_ops, sorted") {
    std::vector<std::string> registered;
    for (const auto& e : ops::registry()) registered.emplace_back(e.op_type);
    CHECK(std::is_sorted(registered.begin(), registered.end()));
    CHECK(registered == typed_op_types());
    // One op of each family, found by name.
    for (const char* name : {"Relu", "Add", "Reshape", "ReduceSum", "Conv", "Where"}) {
        CAPTURE(name);
        REQUIRE(ops::find_op(name) != nullptr);
        CHECK(ops::get_op(name).op_type == name);
    }
    CHECK(ops::find_op("NoSuchOp") == nullptr);
    CHECK_THROWS_WITH_AS(static_cast<void>(ops::get_op("NoSuchOp")), doctest::Contains("NoSuchOp"), error);
}

TEST_CASE("compiled: the rule tables for double, float and their duals cover the same differentiable ops") {
    const auto f64 = rule_op_types<double>();
    const auto f32 = rule_op_types<float>();
    CHECK(std::is_sorted(f64.begin(), f64.end()));
    CHECK(f64 == f32);
    CHECK(f64 == rule_op_types<ad::dual<double>>());
    CHECK(f64 == rule_op_types<ad::dual<float>>());
    const auto all = typed_op_types();
    for (const auto& name : f64) {
        CAPTURE(name);
        CHECK(std::binary_search(all.begin(), all.end(), name));
    }
    // Differentiable ops of each family have rules; an integer-valued op has none.
    for (const char* name : {"Tanh", "Mul", "Transpose", "ReduceMean", "Conv", "Softmax"}) {
        CAPTURE(name);
        CHECK(ad::find_rules<double>(name) != nullptr);
        CHECK(ad::find_rules<float>(name) != nullptr);
    }
    CHECK(ad::find_rules<double>("ArgMax") == nullptr);
    CHECK(ad::find_rules<double>("NoSuchOp") == nullptr);
}

TEST_CASE("compiled: spec::evaluate by name agrees with the typed kernel compiled here") {
    rng g(7);
    const auto x = g.uniform_tensor(dtype::f32, {3, 4}, -2.0, 2.0);
    const auto y = g.uniform_tensor(dtype::f32, {4}, -2.0, 2.0);
    const auto by_name = spec::evaluate(ops::get_op("Add"), {&x, &y}, {});
    REQUIRE(by_name.size() == 1);
    // The typed spec's own kernel, instantiated in this file, not the library's.
    const auto typed = spec::evaluate(spec::make_entry<ops::Add>(), {&x, &y}, {});
    REQUIRE(typed.size() == 1);
    REQUIRE(typed[0].size() == by_name[0].size());
    for (std::size_t i = 0; i < by_name[0].size(); ++i) {
        CHECK(by_name[0].value_as_double(i) == typed[0].value_as_double(i));
        const auto row = i / 4, col = i % 4;
        CHECK(by_name[0].value_as_double(i) ==
              static_cast<double>(static_cast<float>(x.value_as_double(row * 4 + col)) +
                                  static_cast<float>(y.value_as_double(col))));
    }
}

TEST_CASE("compiled: op_engine by name passes the gradient oracle against finite differences") {
    rng g(3);
    const ad::tensors x{g.uniform_tensor(dtype::f64, {4, 5}, -1.0, 1.0)};
    ad::oracle_options o;
    o.order = 2;
    CHECK_FALSE(ad::check_gradients(ad::op_engine("Softmax"), x, o).failed());
    const ad::tensors xf{g.uniform_tensor(dtype::f32, {3, 3}, -1.0, 1.0)};
    CHECK_FALSE(ad::check_gradients(ad::op_engine<float>("Tanh"), xf, {}).failed());
}

TEST_CASE("compiled: the interpreter and graph AD run a graph by op name") {
    graph::graph gr;
    gr.name = "tanh_matmul";
    gr.inputs = {{"x", dtype::f64, shape_type{2, 3}}};
    gr.outputs = {{"y", dtype::f64, std::nullopt}};
    rng g(5);
    gr.initializers.emplace("W", g.uniform_tensor(dtype::f64, {3, 2}, -1.0, 1.0));
    gr.nodes = {{"MatMul", {"x", "W"}, {"h"}, {}, "matmul", ""}, {"Tanh", {"h"}, {"y"}, {}, "tanh", ""}};
    const auto x = g.uniform_tensor(dtype::f64, {2, 3}, -1.0, 1.0);
    const auto r = graph::run(gr, {{"x", x}});
    const auto& y = r.outputs.at("y");
    const auto& w = gr.initializers.at("W");
    for (std::size_t i = 0; i < 2; ++i) {
        for (std::size_t j = 0; j < 2; ++j) {
            double h = 0;
            for (std::size_t k = 0; k < 3; ++k) h += x.value_as_double(i * 3 + k) * w.value_as_double(k * 2 + j);
            CHECK(y.value_as_double(i * 2 + j) == doctest::Approx(std::tanh(h)).epsilon(1e-12));
        }
    }
    // d(sum y)/dx = (1 - y^2) W^T, row by row.
    auto ones = array<double>::from_shape({2, 2});
    ones.fill(1.0);
    const auto grad = ad::vjp(gr, {{"x", x}}, {{"y", tensor(ones)}});
    const auto& gx = grad.gradients.at("x");
    for (std::size_t i = 0; i < 2; ++i) {
        for (std::size_t k = 0; k < 3; ++k) {
            double expected = 0;
            for (std::size_t j = 0; j < 2; ++j) {
                const double yij = y.value_as_double(i * 2 + j);
                expected += (1 - yij * yij) * w.value_as_double(k * 2 + j);
            }
            CHECK(gx.value_as_double(i * 3 + k) == doctest::Approx(expected).epsilon(1e-12));
        }
    }
}

TEST_CASE("compiled: the generator and the input search build and run graphs by op name") {
    const gen::config cfg;
    const gen::generator gen(cfg);
    gen::generation_stats stats;
    std::size_t found = 0;
    for (std::uint64_t index = 0; index < 4; ++index) {
        auto g = gen::case_rng(11, index, cfg.hash());
        const auto sketch = gen.generate(g, stats);
        const auto data = gen::search_inputs(sketch, g);
        if (!data.success) continue;
        ++found;
        for (const auto& out : sketch.model.outputs) {
            const auto& t = data.run.at(out.name);
            for (std::size_t i = 0; i < t.size(); ++i) CHECK(std::isfinite(t.value_as_double(i)));
        }
    }
    CHECK(found >= 2);
}

}  // namespace compiled_entry_points_test
