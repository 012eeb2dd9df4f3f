// Registry-driven tests: every op in the registry, without per-op code.
#include <doctest/doctest.h>

#include <cmath>
#include <algorithm>
#include <set>
#include <string>

#include <tensoracle/gen/instance.hpp>
#include <tensoracle/ops/registry.hpp>
#include <tensoracle/core.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ops_registry_test {

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
        CHECK((!e.inputs.empty() || e.op_type == "Constant"));
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
            const auto in = to::gen::sample_op(e, g);
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

namespace {
// make_evaluation_entry<Op> (what op_engine<Op> uses) must evaluate exactly as
// Op's registry entry does, and leave the generator's members out.
template <class Op>
void check_evaluation_entry() {
    const auto lean = to::spec::make_evaluation_entry<Op>();
    const auto& full = to::ops::get_op(Op::op_type);
    CAPTURE(full.op_type);
    CHECK(!lean.attribute_names);
    CHECK(!lean.attribute_infos);
    CHECK(!lean.input_candidates);
    CHECK(!lean.domain);
    CHECK(!lean.hints);
    CHECK((lean.constraints_and_shapes == nullptr) == (full.constraints_and_shapes == nullptr));
    CHECK(lean.last_opset == full.last_opset);
    CHECK(lean.proxy_slope == full.proxy_slope);
    to::rng g(7);
    for (int i = 0; i < 12; ++i) {
        const auto in = to::gen::sample_op(full, g);
        const auto a = to::spec::evaluate(lean, pointers(in), in.attributes);
        const auto b = to::spec::evaluate(full, pointers(in), in.attributes);
        REQUIRE(a.size() == b.size());
        for (std::size_t o = 0; o < a.size(); ++o) CHECK(a[o].identical(b[o]));
    }
    // The same checks run before the kernel: a missing input is the same error.
    std::string lean_error, full_error;
    try { (void)to::spec::evaluate(lean, {}, {}); } catch (const to::error& e) { lean_error = e.what(); }
    try { (void)to::spec::evaluate(full, {}, {}); } catch (const to::error& e) { full_error = e.what(); }
    CHECK(!lean_error.empty());
    CHECK(lean_error == full_error);
}
}  // namespace

TEST_CASE("registry: an op's evaluation entry evaluates as its full entry, without the generator's members") {
    check_evaluation_entry<to::ops::Softmax>();
    check_evaluation_entry<to::ops::Conv>();
}

TEST_CASE("registry: a spec's constraints_and_shapes() says what its constraints() and output_shapes() say") {
    // evaluate() and infer() use the combined member where a spec has one; the
    // generator uses the separate ones. They must not drift apart, valid or not.
    std::set<std::string> with;
    for (const auto& e : to::ops::registry()) {
        if (e.constraints_and_shapes == nullptr) continue;
        with.emplace(e.op_type);
        CAPTURE(e.op_type);
        to::rng g(std::hash<std::string_view>{}(e.op_type) ^ 31);
        for (int i = 0; i < 20; ++i) {
            auto in = to::gen::sample_op(e, g);
            if (i % 2 == 1 && !in.inputs.empty() && in.inputs[0] && in.inputs[0]->rank() > 0) {
                auto s = in.inputs[0]->shape();  // often breaks a constraint
                s.back() += 1 + static_cast<std::size_t>(i % 3);
                in.inputs[0] = to::tensor::zeros(in.inputs[0]->element_dtype(), s);
            }
            const auto ptrs = pointers(in);
            const to::spec::context c(e.op_type, ptrs, e.normalize_attributes(in.attributes));
            const auto both = e.constraints_and_shapes(c);
            const auto cs = e.constraints(c);
            REQUIRE(both.constraints.size() == cs.size());
            bool holds = true;
            for (std::size_t k = 0; k < cs.size(); ++k) {
                CHECK(both.constraints[k].condition.to_string() == cs[k].condition.to_string());
                CHECK(both.constraints[k].reason == cs[k].reason);
                holds = holds && c.eval(cs[k].condition) != 0;
            }
            if (!holds) continue;
            const auto shapes = e.output_shapes(c);
            REQUIRE(both.shapes.size() == shapes.size());
            for (std::size_t o = 0; o < shapes.size(); ++o) {
                REQUIRE(both.shapes[o].size() == shapes[o].size());
                for (std::size_t d = 0; d < shapes[o].size(); ++d) CHECK(c.eval(both.shapes[o][d]) == c.eval(shapes[o][d]));
            }
        }
    }
    CHECK(with == std::set<std::string>{"AveragePool", "Conv", "ConvTranspose", "Gemm", "MatMul", "MaxPool"});
}

TEST_CASE("registry: backward inference admits every sampled instance") {
    // For the dtype and rank of each sampled output, input_candidates must list
    // the dtypes and ranks the instance actually used.
    for (const auto& e : to::ops::registry()) {
        CAPTURE(e.op_type);
        to::rng g(std::hash<std::string_view>{}(e.op_type) ^ 77);
        for (int i = 0; i < 10; ++i) {
            const auto in = to::gen::sample_op(e, g);
            const auto ptrs = pointers(in);
            const auto out = to::spec::infer(e, ptrs, in.attributes);
            const auto candidates = e.input_candidates(out.dtypes[0], out.shapes[0].size());
            if (in.inputs.empty()) continue;
            REQUIRE_MESSAGE(!candidates.empty(), "no candidates for " << to::name(out.dtypes[0]) << " rank "
                                                                      << out.shapes[0].size());
            for (std::size_t k = 0; k < in.inputs.size() && k < candidates.size(); ++k) {
                if (!in.inputs[k]) continue;
                const auto& c = candidates[k];
                const bool dtype_ok = std::find(c.dtypes.begin(), c.dtypes.end(), in.inputs[k]->element_dtype()) != c.dtypes.end();
                const bool rank_ok = std::find(c.ranks.begin(), c.ranks.end(), in.inputs[k]->rank()) != c.ranks.end();
                CHECK_MESSAGE(dtype_ok, "input " << k << " dtype " << to::name(in.inputs[k]->element_dtype()));
                CHECK_MESSAGE(rank_ok, "input " << k << " rank " << in.inputs[k]->rank());
            }
        }
    }
}

TEST_CASE("registry: proxy derivatives where the true derivative vanishes (NNSmith: slope 0.1)") {
    for (const char* op : {"Relu", "Floor", "Ceil", "Round", "Sign"}) {
        CAPTURE(op);
        CHECK(to::ops::get_op(op).proxy_slope == 0.1);
    }
    CHECK(to::ops::get_op("Exp").proxy_slope == 0.0);
}

TEST_CASE("registry: at least 80 ONNX operators are specified") {
    CHECK(to::ops::registry().size() >= 80);
}

}  // namespace ops_registry_test
