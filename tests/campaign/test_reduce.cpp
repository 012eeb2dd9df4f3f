// The reducer: a planted two-op bug reduces to exactly those two ops, every
// candidate a check sees is valid, shapes and values shrink, bundles are written,
// and a case that does not fail, a flaky failure, a hanging check and a spent
// budget are each handled and reported.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <tensoracle/campaign/reduce.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace campaign_reduce_test {

namespace tc = tensoracle::campaign;
namespace fs = std::filesystem;
using tensoracle::dtype;
using tensoracle::shape_type;
using tensoracle::tensor;

namespace {

// Scratch directories live until the test process exits, then go (they used
// to pile up in the temp directory, one set per run).
struct scratch_dirs {
    std::vector<fs::path> made;
    ~scratch_dirs() {
        for (const auto& p : made) {
            std::error_code ec;
            fs::remove_all(p, ec);
        }
    }
};
fs::path scratch(const std::string& name) {
    static scratch_dirs dirs;
    const auto p = fs::temp_directory_path() / ("tensoracle_reduce_test_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(p);
    dirs.made.push_back(p);
    return p;
}

/// An 8-node graph with one Exp -> Log edge in the middle.
tc::value_map feeds_for_chain() {
    tensoracle::rng r(7);
    return {{"x", r.uniform_tensor(dtype::f32, shape_type{3, 4}, -1.0, 1.0)}};
}
tensoracle::graph::graph chain() {
    tensoracle::graph::graph g;
    g.name = "chain";
    g.inputs = {{"x", dtype::f32, shape_type{3, 4}}};
    tensoracle::rng r(8);
    g.initializers.emplace("w", r.uniform_tensor(dtype::f32, shape_type{3, 4}, -1.0, 1.0));
    g.nodes = {{"Abs", {"x"}, {"a"}, {}, "", ""},     {"Add", {"a", "w"}, {"b"}, {}, "", ""}, {"Exp", {"b"}, {"e"}, {}, "", ""},
               {"Log", {"e"}, {"l"}, {}, "", ""},     {"Neg", {"l"}, {"n"}, {}, "", ""},     {"Tanh", {"n"}, {"r"}, {}, "", ""},
               {"Sigmoid", {"x"}, {"s"}, {}, "", ""}, {"Mul", {"r", "s"}, {"y"}, {}, "", ""}};
    g.outputs = {{"y", dtype::f32, shape_type{3, 4}}};
    return g;
}

/// The reference with a planted bug: Log's output scaled by 1.25 where it reads Exp's output.
tc::case_runner planted_runner(const tensoracle::graph::graph& g) {
    return [g](const std::vector<tensor>& in) {
        tc::value_map values(g.initializers.begin(), g.initializers.end());
        for (std::size_t k = 0; k < in.size(); ++k) values.insert_or_assign(g.inputs.at(k).name, in[k]);
        std::map<std::string, std::string> producer;
        for (const auto& n : g.nodes) {
            for (const auto& o : n.outputs) producer[o] = n.op_type;
        }
        for (const auto i : g.topological_order()) {
            const auto& n = g.nodes[i];
            const auto& op = tensoracle::ops::get_op(n.op_type);
            std::vector<const tensor*> args;
            for (const auto& a : n.inputs) args.push_back(a.empty() ? nullptr : &values.at(a));
            auto out = tensoracle::spec::evaluate(op, args, tensoracle::graph::call_attributes(op, n));
            if (n.op_type == "Log" && producer[n.inputs[0]] == "Exp") {
                auto v = out[0].to<double>();
                v *= 1.25;
                out[0] = tensor(v).cast(out[0].element_dtype());
            }
            for (std::size_t o = 0; o < n.outputs.size(); ++o) values.insert_or_assign(n.outputs[o], out[o]);
        }
        std::vector<tensor> result;
        for (const auto& o : g.outputs) result.push_back(values.at(o.name));
        return result;
    };
}

/// The reference interpreter as a correct backend.
tc::case_runner correct_runner(const tensoracle::graph::graph& g) {
    return [g](const std::vector<tensor>& in) {
        tc::value_map feeds;
        for (std::size_t k = 0; k < in.size(); ++k) feeds.emplace(g.inputs[k].name, in[k]);
        const auto out = tensoracle::graph::run(g, feeds).outputs;
        std::vector<tensor> v;
        for (const auto& o : g.outputs) v.push_back(out.at(o.name));
        return v;
    };
}

/// Wraps a check: counts runs and asserts every candidate it is shown is valid.
struct spy final : tc::failure_check {
    tc::failure_check& inner;
    std::size_t runs = 0, invalid_seen = 0;
    explicit spy(tc::failure_check& c) : inner(c) {}
    void look(const tensoracle::io::generated_case& c) {
        ++runs;
        try {
            c.model.validate();
            (void)tensoracle::graph::run(c.model, c.inputs);
        } catch (const std::exception&) {
            ++invalid_seen;
        }
    }
    verdict run_original(const tensoracle::io::generated_case& c) override { look(c); return inner.run_original(c); }
    verdict run(const tensoracle::io::generated_case& c) override { look(c); return inner.run(c); }
    std::string failure() const override { return inner.failure(); }
    nlohmann::json manifest() const override { return inner.manifest(); }
};

/// A check in C++: fails while `pred` holds of the candidate.
struct predicate_check final : tc::failure_check {
    std::function<bool(const tensoracle::io::generated_case&)> pred;
    explicit predicate_check(std::function<bool(const tensoracle::io::generated_case&)> p) : pred(std::move(p)) {}
    verdict run_original(const tensoracle::io::generated_case& c) override { return run(c); }
    verdict run(const tensoracle::io::generated_case& c) override {
        const bool f = pred(c);
        return {f, false, f ? "fails" : "passes"};
    }
    std::string failure() const override { return "the predicate"; }
    nlohmann::json manifest() const override { return {{"check", "predicate"}}; }
};

bool has_op(const tensoracle::io::generated_case& c, const std::string& op) {
    return std::any_of(c.model.nodes.begin(), c.model.nodes.end(), [&](const auto& n) { return n.op_type == op; });
}

}  // namespace

TEST_CASE("reduce: a planted bug that needs Exp then Log reduces to exactly Exp -> Log, its signature kept") {
    std::vector<std::unique_ptr<tc::backend>> backends;
    backends.push_back(std::make_unique<tc::callable_backend>("planted", planted_runner, false));
    tc::signature_check inner(std::move(backends), tc::judge_options{}, scratch("pair"));
    spy check(inner);
    const auto original = tc::evaluate_case(chain(), feeds_for_chain(), 3, 9);
    std::vector<std::string> phases;
    const auto r = tc::reduce(original, check, {}, [&](const tc::reduce_progress& p) { phases.push_back(p.phase); });
    REQUIRE(inner.target());
    CHECK(inner.target()->where == "op Log f32");
    CHECK(inner.target()->outcome == tc::outcome_class::mismatch);
    REQUIRE(r.reduced.model.nodes.size() == 2);
    CHECK(r.reduced.model.nodes[0].op_type == "Exp");
    CHECK(r.reduced.model.nodes[1].op_type == "Log");
    CHECK(r.reduced.model.nodes[1].inputs[0] == r.reduced.model.nodes[0].outputs[0]);
    CHECK(r.original.model.nodes.size() == 8);
    CHECK(check.invalid_seen == 0);
    CHECK(check.runs == r.calls);
    CHECK(r.failure_rate == 1.0);
    CHECK(r.repeats == 1);
    CHECK_FALSE(r.out_of_budget);
    CHECK(std::find(phases.begin(), phases.end(), "removing nodes (ddmin)") != phases.end());
    // Shapes and values went as far as the failure allows: one element, zero (Log(Exp(0)) = 0
    // hides a scale, so the element stays nonzero).
    CHECK(tc::detail::element_total(r.reduced) == 1);
    CHECK(r.reduced.inputs.begin()->second.value_as_double(0) != 0.0);
    // The reduced case still fails the same way, through the same judgement.
    CHECK(inner.run(r.reduced).fails);
    // Deterministic: the same reduction again.
    std::vector<std::unique_ptr<tc::backend>> again;
    again.push_back(std::make_unique<tc::callable_backend>("planted", planted_runner, false));
    tc::signature_check check2(std::move(again), tc::judge_options{}, scratch("pair2"));
    const auto r2 = tc::reduce(original, check2);
    CHECK(r2.steps == r.steps);
    CHECK(tensoracle::io::model_text(r2.reduced.model) == tensoracle::io::model_text(r.reduced.model));

    SUBCASE("the bundle: model, data, manifest, repro.cpp, README") {
        const auto dir = scratch("bundle");
        const auto m = tc::write_bundle(r, inner, dir, {});
        for (const char* f : {"model.onnx", "model.txt", "original.txt", "manifest.json", "repro.cpp", "CMakeLists.txt", "README.md",
                              "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb"}) {
            CHECK_MESSAGE(fs::exists(dir / f), f);
        }
        CHECK(m["reduced"]["nodes"] == 2);
        CHECK(m["original"]["nodes"] == 8);
        CHECK(m["check"]["signature"]["where"] == "op Log f32");
        CHECK(m["case"]["id"] == tensoracle::io::case_id(3, 9));
        CHECK(m["check"]["backends"][0]["outcome"] == "mismatch");
        CHECK(m["check"]["backends"][0].contains("min_passing_level"));
        std::ifstream readme(dir / "README.md");
        const std::string text((std::istreambuf_iterator<char>(readme)), {});
        CHECK(text.find("Exp -> Log") != std::string::npos);
        CHECK(text.find("8 nodes") != std::string::npos);
        // The bundle's case loads back and still fails.
        const auto back = tc::load_case(dir);
        CHECK(back.model.nodes.size() == 2);
        CHECK(inner.run(back).fails);
        // Writing over something that is not a bundle is refused.
        const auto other = scratch("other");
        fs::create_directories(other);
        std::ofstream(other / "notes.txt") << "mine";
        CHECK_THROWS_WITH_AS(tc::write_bundle(r, inner, other, {}), doctest::Contains("holds something else"), tensoracle::error);
        fs::remove_all(other);
        fs::remove_all(dir);
    }
}

TEST_CASE("reduce: an unlocalized signature (its place is the op set) reduces to a subset of its ops") {
    std::vector<std::unique_ptr<tc::backend>> backends;
    backends.push_back(std::make_unique<tc::callable_backend>("planted", planted_runner, false));
    tc::judge_options o;
    o.localize = false;  // the signature's place is the case's op set
    tc::signature_check check(std::move(backends), o, scratch("ops"));
    const auto r = tc::reduce(tc::evaluate_case(chain(), feeds_for_chain()), check);
    REQUIRE(check.target());
    CHECK(check.target()->where == "ops Abs,Add,Exp,Log,Mul,Neg,Sigmoid,Tanh");
    REQUIRE(r.reduced.model.nodes.size() == 2);
    REQUIRE(check.reduced_signature());
    CHECK(check.reduced_signature()->where == "ops Exp,Log");
    CHECK(check.manifest()["reduced_signature"]["where"] == "ops Exp,Log");
    // Another backend's failure, or another class, is not the same failure.
    tc::signature other = *check.target();
    other.where = "ops Exp,Log";
    CHECK(check.same_unlocalized_failure(other));
    other.outcome = tc::outcome_class::crash;
    CHECK_FALSE(check.same_unlocalized_failure(other));
    other = *check.target();
    other.where = "ops Exp,Floor";  // Floor was not in the original
    CHECK_FALSE(check.same_unlocalized_failure(other));
    other.where = "op Log f32";
    CHECK(check.same_unlocalized_failure(other));
}

TEST_CASE("case_judge: a time-out is a hang only if a second run, with twice the limit, times out too") {
    const auto original = tc::evaluate_case(chain(), feeds_for_chain());
    tc::judge_options o;
    o.timeout_seconds = 0.5;
    o.localize = false;
    auto judge = [&](tc::case_preparer make) {
        tc::detail::lane lane;
        lane.backends.push_back(std::make_unique<tc::callable_backend>("sys", std::move(make)));  // each run in a forked child
        lane.scratch = scratch("late_lane");
        return tc::case_judge(o).evaluate(lane, original).results.at(0);
    };
    // Correct, but its first run sleeps past the limit (a marker file survives the forked child).
    auto late_once = [](const std::string& name) -> tc::case_preparer {
        const auto marker = scratch(name) / "ran_once";
        fs::create_directories(marker.parent_path());
        return [marker](const tensoracle::graph::graph& g) -> tc::case_runner {
            auto body = correct_runner(g);
            return [body, marker](const std::vector<tensor>& in) {
                if (!fs::exists(marker)) {
                    std::ofstream(marker) << "late";
                    ::sleep(3);
                }
                return body(in);
            };
        };
    };
    // Late once: judged on the second run, which passes.
    auto r = judge(late_once("late"));
    CHECK(r.outcome == tc::outcome_class::pass);
    CHECK(r.detail.find("a first run timed out after 0.5 s") != std::string::npos);
    // Always stuck: a hang, and the detail says it was seen twice.
    r = judge([](const tensoracle::graph::graph&) -> tc::case_runner {
        return [](const std::vector<tensor>&) -> std::vector<tensor> { for (;;) ::pause(); };
    });
    CHECK(r.outcome == tc::outcome_class::hang);
    CHECK(r.detail.find("a second run timed out too") != std::string::npos);
    // Without rechecks a time-out is judged from one run.
    o.recheck = false;
    r = judge(late_once("late2"));
    CHECK(r.outcome == tc::outcome_class::hang);
}

TEST_CASE("reduce: a disagreement between two configurations reduces against both, and its repro compares them") {
    auto make = [&] {
        std::vector<std::unique_ptr<tc::backend>> b;
        b.push_back(std::make_unique<tc::callable_backend>("sys", correct_runner, false));
        b.push_back(std::make_unique<tc::callable_backend>("sys-opt", planted_runner, false));
        return b;
    };
    const auto original = tc::evaluate_case(chain(), feeds_for_chain());
    // The pair's signature, found by the campaign's judgement, then reduced by its id.
    std::string pair_id;
    tc::detail::lane lane;
    lane.backends = make();
    lane.scratch = scratch("lane");
    for (const auto& sig : tc::case_judge(tc::judge_options{}).evaluate(lane, original).signatures()) {
        if (sig.backend == "sys vs sys-opt") pair_id = sig.id();
    }
    REQUIRE_FALSE(pair_id.empty());
    tc::signature_check check(make(), tc::judge_options{}, scratch("pairsig"), pair_id);
    const auto r = tc::reduce(original, check);
    CHECK(check.target()->backend == "sys vs sys-opt");
    REQUIRE(r.reduced.model.nodes.size() == 2);
    CHECK(r.reduced.model.nodes[1].op_type == "Log");
    tc::bundle_info info;
    info.backend_commands = {{"sys", {"sys-run", "{model}", "{inputs}", "{outputs}"}}, {"sys-opt", {"sys-run", "-O", "{model}", "{inputs}", "{outputs}"}}};
    const auto src = tc::detail::repro_source(r, check, info);
    CHECK(src.find("run_backend(\"sys\"") != std::string::npos);
    CHECK(src.find("run_backend(\"sys-opt\", {\"sys-run\", \"-O\"") != std::string::npos);
    CHECK(src.find("TENSORACLE_CHECK_ALLCLOSE(r0.outputs[k], r1.outputs[k]") != std::string::npos);
    // A requested signature the original does not have is named in the message.
    tc::signature_check wrong(make(), tc::judge_options{}, scratch("wrong"), "0123456789abcdef");
    CHECK_THROWS_WITH_AS(tc::reduce(original, wrong), doctest::Contains("0123456789abcdef is not among its signatures"),
                         tc::original_does_not_fail);
}

TEST_CASE("reduce: an original that does not fail is reported, not reduced to nothing") {
    std::vector<std::unique_ptr<tc::backend>> backends;
    backends.push_back(std::make_unique<tc::callable_backend>("correct", correct_runner, false));
    tc::signature_check check(std::move(backends), tc::judge_options{}, scratch("pass"));
    const auto original = tc::evaluate_case(chain(), feeds_for_chain());
    CHECK_THROWS_WITH_AS(tc::reduce(original, check), doctest::Contains("original does not fail"), tc::original_does_not_fail);
    predicate_check never([](const auto&) { return false; });
    CHECK_THROWS_AS(tc::reduce(original, never), tc::original_does_not_fail);
}

TEST_CASE("reduce: a flaky failure is measured and reduced with repeats") {
    std::size_t call = 0;
    // Fails on every other run while a Tanh is there: 50%.
    predicate_check flaky([&](const tensoracle::io::generated_case& c) { return has_op(c, "Tanh") && (call++ % 2 == 0); });
    const auto original = tc::evaluate_case(chain(), feeds_for_chain());
    const auto r = tc::reduce(original, flaky);
    CHECK(r.measured == 10);
    CHECK(r.failure_rate == doctest::Approx(0.5));
    CHECK(r.repeats == 5);  // ceil(log 0.05 / log 0.5)
    REQUIRE(r.reduced.model.nodes.size() == 1);
    CHECK(r.reduced.model.nodes[0].op_type == "Tanh");
    CHECK(r.calls > r.candidates);  // candidates that passed ran more than once
}

TEST_CASE("reduce: shapes shrink and values simplify while the constraints hold") {
    tensoracle::graph::graph g;
    g.inputs = {{"a", dtype::f32, shape_type{4, 6}}};
    tensoracle::rng r(3);
    g.initializers.emplace("b", r.uniform_tensor(dtype::f32, shape_type{6, 8}, -1.0, 1.0));
    g.nodes = {{"MatMul", {"a", "b"}, {"m"}, {}, "", ""}, {"Tanh", {"m"}, {"y"}, {}, "", ""}};
    g.outputs = {{"y", dtype::f32, shape_type{4, 8}}};
    const auto original = tc::evaluate_case(g, {{"a", r.uniform_tensor(dtype::f32, shape_type{4, 6}, -1.0, 1.0)}});
    predicate_check matmul([](const tensoracle::io::generated_case& c) { return has_op(c, "MatMul"); });
    spy check(matmul);
    const auto red = tc::reduce(original, check);
    REQUIRE(red.reduced.model.nodes.size() == 1);
    CHECK(red.reduced.model.nodes[0].op_type == "MatMul");
    CHECK(check.invalid_seen == 0);
    for (const auto& [name, t] : red.reduced.inputs) {
        CHECK(t.shape() == shape_type{1, 1});
        CHECK(t.value_as_double(0) == 0.0);
    }
    // Tanh went: MatMul's output, which it read, is now the graph's output.
    CHECK(red.reduced.model.outputs.at(0).name == "m");
}

TEST_CASE("reduce: a shell command as the check, its hangs counted, --fail-code narrowing it") {
    const auto original = tc::evaluate_case(chain(), feeds_for_chain());
    // Fails (exit 1) while the model holds a Tanh; hangs without one.
    tc::command_check check({"sh", "-c", "if grep -q Tanh \"$0\"; then exit 1; else sleep 5; fi", "{model}"}, scratch("cmd"), 0.5);
    const auto r = tc::reduce(original, check);
    REQUIRE(r.reduced.model.nodes.size() == 1);
    CHECK(r.reduced.model.nodes[0].op_type == "Tanh");
    CHECK(r.hangs > 0);
    CHECK(r.failure == "exit code 1");
    // Only exit code 2 is the failure: this one is not it.
    tc::command_check narrow({"sh", "-c", "exit 1"}, scratch("cmd2"), 5.0, 2);
    CHECK_THROWS_AS(tc::reduce(original, narrow), tc::original_does_not_fail);
    tc::command_check regex({"sh", "-c", "echo 'Segmentation in kernel' >&2; exit 1"}, scratch("cmd3"), 5.0, std::nullopt, "Segmentation");
    CHECK(tc::reduce(original, regex).reduced.model.nodes.size() == 1);
    CHECK_THROWS_WITH_AS(tc::command_check({"true"}, scratch("x"), 1.0, std::nullopt, "(["), doctest::Contains("not a regular expression"),
                         tensoracle::error);
    tc::command_check missing({"/nonexistent/tool", "{model}"}, scratch("cmd4"), 1.0);
    CHECK_THROWS_AS(tc::reduce(original, missing), tc::backend_unavailable);
}

TEST_CASE("reduce: the budget stops it and says so") {
    const auto original = tc::evaluate_case(chain(), feeds_for_chain());
    predicate_check relu([](const tensoracle::io::generated_case& c) { return has_op(c, "Tanh"); });
    tc::reduce_options o;
    o.max_calls = 6;
    const auto r = tc::reduce(original, relu, o);
    CHECK(r.out_of_budget);
    CHECK(r.calls <= 6);
    CHECK(has_op(r.reduced, "Tanh"));
}

TEST_CASE("reduce: prefix slices and invalid originals") {
    const tensor t(tensoracle::array<int>{{1, 2, 3}, {4, 5, 6}});
    CHECK(tc::detail::prefix_slice(t, 1, 2).to<int>() == tensoracle::array<int>{{1, 2}, {4, 5}});
    CHECK(tc::detail::prefix_slice(t, 0, 1).to<int>() == tensoracle::array<int>{{1, 2, 3}});
    auto g = chain();
    g.nodes[3].inputs = {"nowhere"};
    CHECK_THROWS_WITH_AS(tc::evaluate_case(g, feeds_for_chain()), doctest::Contains("nowhere"), tensoracle::error);
    CHECK_THROWS_WITH_AS(tc::load_case("/nonexistent/model.onnx"), doctest::Contains("no such file"), tensoracle::error);
}

}  // namespace campaign_reduce_test
