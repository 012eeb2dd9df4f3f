// The guided corpus: features of a results line, admission in index order,
// energy, derivations (mutants and regrown motifs) that stay valid and record
// their parent, campaigns that are the same for any --jobs and when resumed, and
// a planted "optimizer" whose wrong fusion the guided campaign finds more often
// than the unguided one.
#include <doctest/doctest.h>

#include <tensoracle/campaign/campaign.hpp>
#include <tensoracle/campaign/corpus.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace campaign_corpus_test {

namespace tc = tensoracle::campaign;
namespace fs = std::filesystem;
using tensoracle::dtype;
using tensoracle::tensor;

namespace {
fs::path scratch(const std::string& name) {
    const auto d = fs::temp_directory_path() / ("tensoracle_corpus_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

nlohmann::json line(std::uint64_t index, std::vector<std::string> kinds, std::string outcome = "pass", std::vector<std::string> sigs = {}) {
    nlohmann::json ev = nlohmann::json::array();
    for (const auto& k : kinds) ev.push_back({{"kind", k}, {"class", k.find("Cast") != std::string::npos ? "insertion" : "fusion"}});
    nlohmann::json j{{"index", index}, {"case", "c" + std::to_string(index)}, {"backends", {{"ort", {{"outcome", outcome}, {"rewrites", ev}}}}}};
    j["signatures"] = nlohmann::json::array();
    for (const auto& s : sigs) j["signatures"].push_back({{"id", s}});
    return j;
}

/// Small float32 graphs with motifs.
tensoracle::gen::config small_config() {
    tensoracle::gen::config cfg;
    cfg.include_ops = {"Sigmoid", "Mul", "Add", "Relu", "Tanh", "Abs"};
    cfg.dtypes = {dtype::f32};
    cfg.max_nodes = 5;
    cfg.motif_probability = 0.5;
    return cfg;
}

/// A small case for the corpus (graph + inputs), made by the generator.
tensoracle::io::generated_case small_case(std::uint64_t index) {
    const tensoracle::gen::generator gen(small_config());
    tensoracle::gen::generation_stats st;
    return tensoracle::io::make_case(gen, 7, index, st);
}

/// A planted optimizer: runs the reference and fuses a few producer -> consumer
/// pairs (single consumer, float32), reporting each as a fusion in rewrites.json;
/// one of its fusions is wrong (5% too large) under one precondition only:
/// x * Sigmoid(x) (ORT's QuickGelu pattern with alpha 1) where x is computed by
/// an Add (a bias), so that the correct fusions of the same pattern are its near misses.
class planted_optimizer final : public tc::backend {
public:
    planted_optimizer() : tc::backend("planted") {}
    tc::backend_run run(const tc::case_paths& c, double) override {
        tc::backend_run r;
        auto g = tensoracle::io::load_model(c.model);
        std::map<std::string, tensor, std::less<>> feeds;
        for (std::size_t k = 0; k < g.inputs.size(); ++k) {
            feeds.emplace(g.inputs[k].name, tensoracle::io::load_tensor(c.inputs / ("input_" + std::to_string(k) + ".pb")));
        }
        std::map<std::string, tensor, std::less<>> values;
        try {
            values = tensoracle::graph::run(g, feeds, {.record_intermediates = true}).values;
        } catch (const std::exception& e) {
            r.status = tc::run_status::runtime_error;
            r.message = e.what();
            return r;
        }
        std::map<std::string, int> producer, uses;
        for (std::size_t i = 0; i < g.nodes.size(); ++i) {
            for (const auto& o : g.nodes[i].outputs) producer[o] = static_cast<int>(i);
            for (const auto& in : g.nodes[i].inputs) ++uses[in];
        }
        static const std::set<std::string> fused{"Add+Relu", "Mul+Add", "Neg+Abs", "Sub+Relu", "Tanh+Mul", "Exp+Softplus", "Sigmoid+Mul"};
        nlohmann::json events = nlohmann::json::array();
        std::vector<std::size_t> wrong;
        auto f32 = [&](const std::string& v) { return values.count(v) && values.at(v).element_dtype() == dtype::f32; };
        for (std::size_t i = 0; i < g.nodes.size(); ++i) {
            const auto& n = g.nodes[i];
            for (const auto& in : n.inputs) {
                const auto p = producer.find(in);
                if (p == producer.end() || uses[in] != 1 || !f32(in)) continue;
                const auto& pn = g.nodes[static_cast<std::size_t>(p->second)];
                const auto pair = pn.op_type + "+" + n.op_type;
                if (!fused.contains(pair)) continue;
                if (pair == "Sigmoid+Mul") {
                    const auto& x = pn.inputs[0];
                    if (n.inputs.size() != 2 || (n.inputs[0] != x && n.inputs[1] != x)) continue;  // not x * Sigmoid(x)
                    const auto px = producer.find(x);
                    if (px != producer.end() && g.nodes[static_cast<std::size_t>(px->second)].op_type == "Add") wrong.push_back(i);
                    events.push_back({{"kind", "Sigmoid+Mul -> QuickGelu"}, {"class", "fusion"}});
                    continue;
                }
                events.push_back({{"kind", pair + " -> Fused"}, {"class", "fusion"}});
            }
        }
        for (const auto i : wrong) {
            auto& n = g.nodes[i];
            const auto out = n.outputs[0];
            n.outputs[0] = out + "_planted";
            auto k = tensor::zeros(dtype::f32, {});
            k.values<float>()[0] = 1.05f;
            g.initializers.emplace(out + "_planted_scale", std::move(k));
            g.nodes.push_back({"Mul", {out + "_planted", out + "_planted_scale"}, {out}, {}, "", ""});
        }
        try {
            const auto res = tensoracle::graph::run(g, feeds);
            for (std::size_t k = 0; k < g.outputs.size(); ++k) {
                const auto& t = res.outputs.at(g.outputs[k].name);
                r.outputs.push_back(t);
                tensoracle::io::save_tensor(t, c.outputs / ("output_" + std::to_string(k) + ".pb"), g.outputs[k].name);
            }
        } catch (const std::exception& e) {
            r.status = tc::run_status::runtime_error;
            r.message = e.what();
            return r;
        }
        std::ofstream(c.outputs / "rewrites.json") << nlohmann::json{{"events", events}}.dump();
        return r;
    }
    std::unique_ptr<tc::backend> clone() const override { return std::make_unique<planted_optimizer>(); }
};

tc::campaign_options planted_options(const fs::path& out, tc::guide_mode mode, std::uint64_t seed, std::uint64_t count, unsigned jobs = 1) {
    tc::campaign_options o;
    o.config.include_ops = {"Sigmoid", "Mul", "Add", "Sub", "Relu", "Tanh", "Abs", "Neg", "Exp", "Softplus"};
    o.config.dtypes = {dtype::f32, dtype::f64};
    o.config.max_nodes = 6;
    o.config.motif_probability = 0.15;
    o.seed = seed;
    o.count = count;
    o.out = out;
    o.jobs = jobs;
    o.float64_oracle = false;
    o.recheck = false;
    o.guide.mode = mode;
    o.guide.round = 16;
    return o;
}

std::vector<nlohmann::json> journal(const fs::path& dir) {
    std::vector<nlohmann::json> out;
    std::ifstream f(dir / "results.jsonl");
    std::string text;
    while (std::getline(f, text)) out.push_back(nlohmann::json::parse(text));
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a["index"] < b["index"]; });
    for (auto& j : out) {
        j.erase("seconds");
        j.erase("reference_seconds");
        for (auto& [name, r] : j["backends"].items()) r.erase("seconds");
    }
    return out;
}

std::size_t failing_cases(const std::vector<nlohmann::json>& lines) {
    std::size_t n = 0;
    for (const auto& j : lines) n += j["backends"]["planted"]["outcome"] == "mismatch" ? 1 : 0;
    return n;
}
}  // namespace

TEST_CASE("corpus: a line's features are its kinds, its optimization set, its failures and signatures") {
    const auto f = tc::case_features(line(3, {"Conv+Relu -> FusedConv", "Cast inserted", "MatMul+Add -> Gemm"}, "mismatch", {"abcd"}));
    const std::vector<std::string> want{"ort|kind:Cast inserted", "ort|kind:Conv+Relu -> FusedConv", "ort|kind:MatMul+Add -> Gemm",
                                        "ort|kinds:Conv+Relu -> FusedConv&MatMul+Add -> Gemm", "ort|outcome:mismatch", "sig:abcd"};
    CHECK(f == want);
    // One optimization kind alone makes no set; a pass no outcome feature; no report no kinds.
    CHECK(tc::case_features(line(1, {"A -> B"})) == std::vector<std::string>{"ort|kind:A -> B"});
    // A backend that failed after loading reported rewrites it never ran on values.
    CHECK(tc::case_features(line(2, {"A -> B"}, "runtime_error", {"ef"})) == std::vector<std::string>{"ort|outcome:runtime_error", "sig:ef"});
    CHECK(tc::some_backend_ran(line(2, {}, "reference_precision")));
    CHECK_FALSE(tc::some_backend_ran(line(2, {}, "compile_failure")));
    CHECK(tc::case_features(nlohmann::json{{"backends", {{"x", {{"outcome", "pass"}}}}}}).empty());
}

TEST_CASE("corpus: rounds are absorbed in index order, each case kept for a feature not seen before") {
    tc::rewrite_corpus corpus({.mode = tc::guide_mode::rewrites});
    const auto a = line(5, {"K1"}), b = line(2, {"K1", "K2"}), c = line(7, {"K2"}), d = line(9, {}, "mismatch");
    // Ran nowhere: a crash, and a runtime error after a rewrite the session reported.
    const auto x = line(10, {}, "crash"), y = line(11, {"K5"}, "runtime_error");
    std::vector<std::string> loaded;
    auto load = [&](const std::string& id) -> std::optional<tensoracle::io::generated_case> {
        loaded.push_back(id);
        return small_case(loaded.size());
    };
    const auto kept = corpus.absorb({&a, &b, &c, &d, &x, &y}, load);
    // Index 2 brings K1 and K2 first; 5 and 7 bring nothing new; 9 a mismatch. 10 and
    // 11 ran in no backend: their failures count, they are no parents, and K5 was
    // never tested on values, so it is not counted as seen.
    CHECK(kept == std::vector<std::string>{"c2", "c9"});
    CHECK(loaded == kept);
    CHECK(corpus.hits("ort|kind:K1") == 2);
    CHECK(corpus.hits("ort|kind:K2") == 2);
    CHECK(corpus.hits("ort|outcome:crash") == 1);
    CHECK(corpus.hits("ort|outcome:runtime_error") == 1);
    CHECK(corpus.hits("ort|kind:K5") == 0);
    CHECK_FALSE(corpus.novel({"ort|kind:K1"}));
    CHECK(corpus.novel({"ort|kind:K1", "ort|kind:K3"}));
    // Energy: rarer features weigh more; children halve it as they grow fourfold.
    const auto& e2 = corpus.entries()[0];
    const auto& e9 = corpus.entries()[1];
    CHECK(corpus.energy(e9) == doctest::Approx(1.0));            // one mismatch seen once
    CHECK(corpus.energy(e2) == doctest::Approx(0.5 + 0.5 + 1.0));  // K1, K2 (twice each), the K1&K2 set once
    // A case a loader cannot give is not kept, yet its features count.
    const auto e = line(12, {"K4"});
    CHECK(corpus.absorb({&e}, [](const std::string&) { return std::nullopt; }).empty());
    CHECK(corpus.hits("ort|kind:K4") == 1);
    // A derived line counts as its parent's child.
    auto child = line(13, {"K1"});
    child["derivation"] = {{"by", "mutation"}, {"parent", "c9"}};
    (void)corpus.absorb({&child}, load);
    CHECK(corpus.entries()[1].children == 1);
    CHECK(corpus.energy(corpus.entries()[1]) == doctest::Approx(1.0 / std::sqrt(2.0)));
    // K5 run by a later case is new then.
    const auto z = line(14, {"K5"});
    CHECK(corpus.absorb({&z}, load) == std::vector<std::string>{"c14"});
    // A parent past parent_nodes weighs parent_nodes / nodes as much: mutants of
    // mutants, which grow, are drawn less.
    tc::rewrite_corpus tight({.mode = tc::guide_mode::rewrites, .parent_nodes = 2});
    (void)tight.absorb({&d}, load);
    const auto nodes = static_cast<double>(tight.entries().at(0).c.model.nodes.size());
    REQUIRE(nodes > 2.0);
    CHECK(tight.energy(tight.entries()[0]) == doctest::Approx(2.0 / nodes));
    CHECK_THROWS_WITH_AS(tc::rewrite_corpus({.mode = tc::guide_mode::rewrites, .parent_nodes = 0}), doctest::Contains("parent_nodes must be at least 1"),
                         tensoracle::error);
}

TEST_CASE("corpus: plans are pure functions of the corpus and the case, fresh without a corpus") {
    tc::rewrite_corpus empty({.mode = tc::guide_mode::rewrites});
    for (std::uint64_t i = 0; i < 20; ++i) CHECK(empty.plan(1, i).by == tc::derivation_plan::kind::fresh);
    tc::rewrite_corpus corpus({.mode = tc::guide_mode::rewrites});
    const auto a = line(0, {"K1"}), b = line(1, {"K2"}), c = line(2, {"K3"});
    std::uint64_t n = 0;
    (void)corpus.absorb({&a, &b, &c}, [&](const std::string&) { return std::optional(small_case(n++)); });
    REQUIRE(corpus.entries().size() == 3);
    std::map<std::string, std::size_t> by;
    for (std::uint64_t i = 0; i < 400; ++i) {
        const auto p = corpus.plan(1, i), q = corpus.plan(1, i);
        CHECK(p.by == q.by);
        CHECK(p.parent == q.parent);
        CHECK(p.seed == q.seed);
        ++by[std::string(tc::to_string(p.by))];
    }
    // The three absorbed lines were fresh cases that each found something: fresh
    // leads ((3 + 1) / (3 + 2) against (0 + 1) / (0 + 2) for the others).
    const auto sh = corpus.shares();
    CHECK(sh[0] == doctest::Approx(0.8 / 1.8));
    CHECK(sh[1] == doctest::Approx(0.5 / 1.8));
    CHECK(std::abs(static_cast<double>(by["fresh"]) / 400.0 - sh[0]) < 0.08);
    CHECK(by["mutation"] > 80);
    // A way that finds nothing keeps its floor.
    tc::rewrite_corpus lean({.mode = tc::guide_mode::rewrites, .min_share = 0.25});
    std::vector<nlohmann::json> many;
    for (std::uint64_t i = 0; i < 50; ++i) many.push_back(line(i, {"K" + std::to_string(i)}));  // fresh, each a new kind
    for (std::uint64_t i = 50; i < 100; ++i) {  // mutants that find nothing new
        many.push_back(line(i, {"K0"}));
        many.back()["derivation"] = {{"by", "mutation"}, {"parent", "c0"}};
    }
    std::vector<const nlohmann::json*> ptrs;
    for (const auto& j : many) ptrs.push_back(&j);
    (void)lean.absorb(ptrs, [](const std::string&) { return std::nullopt; });
    const auto lsh = lean.shares();
    CHECK(lsh[1] == doctest::Approx(0.25));
    CHECK(lsh[0] + lsh[2] == doctest::Approx(0.75));
    CHECK(lsh[0] > lsh[2]);
    CHECK_THROWS_WITH_AS((void)tc::guide_mode_from_string("coverage"), doctest::Contains("known: rewrites, none"), tensoracle::error);
    CHECK_THROWS_WITH_AS(tc::rewrite_corpus({.mode = tc::guide_mode::rewrites, .round = 0}), doctest::Contains("round must be at least 1"),
                         tensoracle::error);
}

TEST_CASE("corpus: derived cases run, keep their index and record parent and operations") {
    const tensoracle::gen::generator gen(small_config());
    tc::rewrite_corpus corpus({.mode = tc::guide_mode::rewrites});
    const auto a = line(0, {"K1"});
    (void)corpus.absorb({&a}, [&](const std::string&) { return std::optional(small_case(3)); });
    tensoracle::gen::generation_stats st;
    std::string why;
    std::size_t mutated = 0;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        const tc::derivation_plan p{tc::derivation_plan::kind::mutation, 0, seed};
        const auto c = tc::derive_case(gen, corpus, p, 7, 40 + seed, st, why);
        if (!c) {
            CHECK_FALSE(why.empty());
            continue;
        }
        ++mutated;
        CHECK(c->index == 40 + seed);
        CHECK(c->derivation["by"] == "mutation");
        CHECK(c->derivation["parent"] == "c0");
        CHECK_FALSE(c->derivation["chain"].get<std::string>().empty());
        CHECK_NOTHROW(c->model.validate());
        for (const auto& out : c->model.outputs) CHECK(c->outputs.count(out.name) == 1);
        // A mutant computes what its parent does (on the parent's inputs).
        const auto parent = tensoracle::graph::run(corpus.entries()[0].c.model, corpus.entries()[0].c.inputs);
        CHECK(parent.outputs.size() == c->outputs.size());
    }
    CHECK(mutated >= 3);
    REQUIRE_FALSE(corpus.entries()[0].c.motifs.empty());
    const tc::derivation_plan p{tc::derivation_plan::kind::regrow, 0, 9};
    const auto r = tc::derive_case(gen, corpus, p, 7, 50, st, why);
    REQUIRE(r);
    CHECK(r->derivation["by"] == "regrow");
    CHECK(r->derivation["motifs"].size() >= 1);
    // Folders written by write_case read back as corpus cases.
    const auto d = scratch("read");
    const auto folder = tensoracle::io::write_case(*r, d);
    const auto back = tc::read_corpus_case(folder);
    CHECK(back.index == 50);
    CHECK(back.motifs == r->motifs);
    CHECK(back.derivation == r->derivation);
    CHECK(back.inputs.size() == r->inputs.size());
    fs::remove(folder / "case.json");
    CHECK_THROWS_WITH_AS((void)tc::read_corpus_case(folder), doctest::Contains("no case.json"), tensoracle::error);
    fs::remove_all(d);
}

std::vector<nlohmann::json> run_planted(const fs::path& out, tc::guide_mode mode, std::uint64_t seed, std::uint64_t count, unsigned jobs = 1) {
    std::vector<std::unique_ptr<tc::backend>> b;
    b.push_back(std::make_unique<planted_optimizer>());
    (void)tc::run_campaign(planted_options(out, mode, seed, count, jobs), std::move(b));
    return journal(out);
}

TEST_CASE("corpus: a guided campaign keeps its corpus on disk and is the same for any --jobs and when resumed") {
    const auto d = scratch("campaign");
    constexpr std::uint64_t count = 96;
    const auto g1 = run_planted(d / "guided", tc::guide_mode::rewrites, 11, count);
    REQUIRE(g1.size() == count);
    std::size_t derived = 0;
    for (const auto& j : g1) derived += j.contains("derivation") ? 1 : 0;
    CHECK(derived > count / 3);
    std::ifstream sf(d / "guided" / "summary.json");
    const auto summary = nlohmann::json::parse(sf);
    REQUIRE(summary.contains("guide"));
    CHECK(summary["guide"]["corpus"].get<std::size_t>() > 0);
    CHECK(summary["guide"]["by"]["fresh"]["cases"].get<std::size_t>() + summary["guide"]["by"]["mutation"]["cases"].get<std::size_t>() +
              summary["guide"]["by"].value("regrow", nlohmann::json{{"cases", 0}})["cases"].get<std::size_t>() ==
          count);
    // Every corpus case is on disk, nothing else is, and every derived case names a parent in the corpus.
    std::ifstream cf(d / "guided" / "corpus.json");
    const auto cj = nlohmann::json::parse(cf);
    std::set<std::string> members;
    for (const auto& e : cj["entries"]) {
        members.insert(e["case"].get<std::string>());
        CHECK(fs::exists(d / "guided" / "corpus" / e["case"].get<std::string>() / "model.onnx"));
    }
    for (const auto& j : g1) {
        if (j.contains("derivation")) CHECK(members.count(j["derivation"]["parent"].get<std::string>()) == 1);
    }
    std::size_t in_folder = 0;
    for (const auto& e : fs::directory_iterator(d / "guided" / "corpus")) in_folder += e.is_directory() ? 1 : 0;
    CHECK(in_folder == members.size());
    // A derived failing case is saved with its derivation (reproducible from its parent).
    for (const auto& j : g1) {
        if (!j.contains("derivation") || j["signatures"].empty()) continue;
        std::ifstream caf(d / "guided" / "cases" / j["case"].get<std::string>() / "case.json");
        CHECK(nlohmann::json::parse(caf)["derivation"] == j["derivation"]);
        break;
    }
    // Two jobs: the same cases, derivations and results.
    CHECK(run_planted(d / "jobs2", tc::guide_mode::rewrites, 11, count, 2) == g1);
    // Resumed after 40 cases (inside a round): the same as in one go.
    (void)run_planted(d / "resumed", tc::guide_mode::rewrites, 11, 40);
    CHECK(run_planted(d / "resumed", tc::guide_mode::rewrites, 11, count) == g1);
    // Another guide on the same folder is refused.
    CHECK_THROWS_WITH_AS(run_planted(d / "resumed", tc::guide_mode::none, 11, count), doctest::Contains("another 'guide'"), tensoracle::error);
    fs::remove_all(d);
}

TEST_CASE("corpus: a planted wrong fusion is found in more campaigns, and more often, guided than unguided") {
    // Eight seeds fixed up front, 100 cases each. The bug needs x * Sigmoid(x) with x
    // from an Add, in float32: the guided campaign keeps the cases where the correct
    // QuickGelu fusion fired (its near misses) and derives from them.
    const auto d = scratch("planted");
    std::size_t seeds_guided = 0, seeds_none = 0, cases_guided = 0, cases_none = 0;
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        const auto g = failing_cases(run_planted(d / ("g" + std::to_string(seed)), tc::guide_mode::rewrites, seed, 100));
        const auto n = failing_cases(run_planted(d / ("n" + std::to_string(seed)), tc::guide_mode::none, seed, 100));
        seeds_guided += g > 0 ? 1 : 0;
        seeds_none += n > 0 ? 1 : 0;
        cases_guided += g;
        cases_none += n;
    }
    MESSAGE("planted fusion bug found in " << seeds_guided << " of 8 guided campaigns (" << cases_guided << " cases), " << seeds_none
                                           << " of 8 unguided (" << cases_none << " cases)");
    CHECK(seeds_guided > seeds_none);
    CHECK(cases_guided >= 3 * cases_none);
    fs::remove_all(d);
}

}  // namespace campaign_corpus_test
