// Motifs: the built-in library is well formed and names only ops of the
// registry, motif sources parse and refuse what they do not understand,
// splicing is deterministic and leaves configs without motifs as they were,
// near-miss variants occur, and weights become initializers.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <tensoracle/gen/generator.hpp>
#include <tensoracle/gen/motifs.hpp>
#include <tensoracle/ops/registry.hpp>
#ifdef TENSORACLE_TEST_JSON
#include <tensoracle/gen/config_json.hpp>
#endif

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace gen_motifs_test {

namespace to = tensoracle;
namespace tg = tensoracle::gen;

namespace {
/// A config drawing motif `m` and no other (most insertions try it; the others
/// place single ops, whose values give a motif's first step more to read), few nodes.
tg::config only(const tg::motif& m, double near_miss = 0.0) {
    tg::config c;
    c.motif_probability = 0.7;
    c.motif_near_miss = near_miss;
    c.builtin_motifs = false;
    c.user_motifs = {m};
    c.max_nodes = m.steps.size() + 3;
    c.max_dim = 8;
    return c;
}
}  // namespace

TEST_CASE("motifs: the built-in library has at least 40 well-formed motifs over ops of the registry") {
    const auto& lib = tg::builtin_motifs();
    CHECK(lib.size() >= 40);
    std::set<std::string> names;
    for (const auto& m : lib) {
        CAPTURE(m.name);
        CHECK(names.insert(m.name).second);
        CHECK_FALSE(m.rule.empty());
        CHECK(m.steps.size() >= 2);
        CHECK_NOTHROW(m.validate("test"));
        for (const auto& st : m.steps) {
            CAPTURE(st.op);
            CHECK(to::ops::find_op(st.op) != nullptr);
        }
    }
    // The default config draws them all (every op of each is generated).
    tg::config c;
    c.motif_probability = 0.3;
    const tg::generator gen(c);
    CHECK(gen.motifs().size() == lib.size());
}

TEST_CASE("motifs: sources parse, and malformed ones are refused with the text and what is expected") {
    using k = tg::motif_source::kind;
    CHECK(tg::motif_source::parse("prev", "t").what == k::previous);
    CHECK(tg::motif_source::parse("x", "t").what == k::motif_input);
    const auto s = tg::motif_source::parse("step:3", "t");
    CHECK(s.what == k::step);
    CHECK(s.step == 3);
    const auto w = tg::motif_source::parse("weight:channel", "t");
    CHECK(w.what == k::weight);
    CHECK(w.shape == "channel");
    const auto c = tg::motif_source::parse("const:0.5", "t");
    CHECK(c.what == k::constant);
    CHECK(c.value == 0.5);
    CHECK(c.shape == "scalar");
    CHECK(tg::motif_source::parse("input:axis2", "t").shape == "axis2");
    for (const char* bad : {"previous", "step:", "step:x", "weight:round", "const:abc", "const:1:2:3", "input:axis"}) {
        CAPTURE(bad);
        try {
            (void)tg::motif_source::parse(bad, "where");
            FAIL("accepted");
        } catch (const to::error& e) {
            const std::string what = e.what();
            CHECK(what.find(std::string("'") + bad + "'") != std::string::npos);
            CHECK(what.find("expected prev, x") != std::string::npos);
        }
    }
    tg::motif m{"m", "r", {tg::make_step("Relu"), tg::make_step("Add", {{0, "prev"}, {1, "step:1"}})}};
    CHECK_THROWS_WITH_AS(m.validate("cfg"), doctest::Contains("reads step 1, which is not an earlier step"), to::error);
    tg::motif r{"r", "r", {tg::make_step("Softmax", {{0, "prev"}}, {"last_axes"})}};
    CHECK_THROWS_WITH_AS(r.validate("cfg"), doctest::Contains("unknown requirement 'last_axes'"), to::error);
}

TEST_CASE("motifs: a config without them keeps its hash, and with them graphs are deterministic and hold the motifs") {
    const tg::config plain;
    CHECK(plain.canonical().find("motifs=") == std::string::npos);
    tg::config on;
    on.motif_probability = 0.3;
    CHECK(on.hash() != plain.hash());
    const tg::generator gen(on);
    std::size_t with_motif = 0;
    for (std::uint64_t i = 0; i < 12; ++i) {
        auto g1 = tg::case_rng(1, i, on.hash());
        auto g2 = tg::case_rng(1, i, on.hash());
        tg::generation_stats s1, s2;
        const auto a = gen.generate(g1, s1);
        const auto b = gen.generate(g2, s2);
        CHECK(a.op_types == b.op_types);
        CHECK(a.motifs == b.motifs);
        with_motif += a.motifs.empty() ? 0 : 1;
    }
    CHECK(with_motif >= 6);
}

TEST_CASE("motifs: a motif's ops appear chained in its graphs, and every near-miss variant occurs") {
    const auto& lib = tg::builtin_motifs();
    const auto* gelu = &lib.front();
    for (const auto& m : lib) {
        if (m.name == "layer_norm") gelu = &m;
    }
    REQUIRE(gelu->name == "layer_norm");
    const tg::generator gen(only(*gelu));
    std::size_t placed = 0;
    for (std::uint64_t i = 0; i < 20; ++i) {
        auto g = tg::case_rng(2, i, gen.settings().hash());
        tg::generation_stats st;
        const auto sk = gen.generate(g, st);
        if (sk.motifs.empty()) continue;
        ++placed;
        // ReduceMean feeds Sub, whose output is read again by Div (the chain's step:1).
        CHECK(std::find(sk.op_types.begin(), sk.op_types.end(), "ReduceMean") != sk.op_types.end());
        CHECK(std::find(sk.op_types.begin(), sk.op_types.end(), "Sub") != sk.op_types.end());
    }
    CHECK(placed >= 10);

    std::set<std::string> variants;
    for (const auto& m : lib) {
        const tg::generator g(only(m, 1.0));
        for (std::uint64_t i = 0; i < 4; ++i) {
            auto r = tg::case_rng(3, i, g.settings().hash());
            tg::generation_stats st;
            for (const auto& name : g.generate(r, st).motifs) {
                if (const auto slash = name.find('/'); slash != std::string::npos) variants.insert(name.substr(slash + 1));
            }
        }
    }
    for (const auto v : {tg::motif_variant::other_slot, tg::motif_variant::requirement_dropped, tg::motif_variant::computed_constant,
                         tg::motif_variant::other_broadcast, tg::motif_variant::extra_consumer, tg::motif_variant::cut_short}) {
        CAPTURE(tg::to_string(v));
        CHECK(variants.count(std::string(tg::to_string(v))) == 1);
    }
}

TEST_CASE("motifs: weights an op reads become initializers with weight_probability") {
    tg::config c;
    c.include_ops = {"Conv"};
    c.dtypes = {to::dtype::f32};
    c.initializer_probability = 0.0;  // X an input: what is left is W and B
    c.max_nodes = 1;
    c.max_dim = 8;
    auto count_weights = [](const tg::config& cfg) {
        const tg::generator gen(cfg);
        std::size_t initializers = 0, inputs = 0;
        for (std::uint64_t i = 0; i < 20; ++i) {
            auto g = tg::case_rng(4, i, cfg.hash());
            tg::generation_stats st;
            const auto sk = gen.generate(g, st);
            for (const auto& n : sk.model.nodes) {
                for (std::size_t k = 1; k < n.inputs.size(); ++k) {
                    if (n.inputs[k].empty()) continue;
                    (sk.model.initializers.count(n.inputs[k]) != 0 ? initializers : inputs) += 1;
                }
            }
        }
        return std::pair{initializers, inputs};
    };
    // A forward insertion may bind a graph value to W (a computed weight): rarely.
    const auto [w_init, w_in] = count_weights(c);
    CHECK(w_init >= 10);
    CHECK(w_init >= 4 * w_in);
    c.weight_probability = 0.0;
    const auto [n_init, n_in] = count_weights(c);
    CHECK(n_init == 0);
    CHECK(n_in >= 10);
}

#ifdef TENSORACLE_SOURCE_DIR
TEST_CASE("motifs: docs/MOTIFS.md is generated from the library and current") {
    const auto md = tg::motifs_markdown();
    for (const auto& m : tg::builtin_motifs()) CHECK(md.find("`" + m.name + "`") != std::string::npos);
    std::ifstream f(TENSORACLE_SOURCE_DIR "/docs/MOTIFS.md");
    REQUIRE_MESSAGE(f, "docs/MOTIFS.md is missing: tensoracle gen --list-motifs > docs/MOTIFS.md");
    std::stringstream text;
    text << f.rdbuf();
    CHECK_MESSAGE(text.str() == md, "docs/MOTIFS.md is stale: tensoracle gen --list-motifs > docs/MOTIFS.md");
}
#endif

#ifdef TENSORACLE_TEST_JSON
TEST_CASE("motifs: a user motif from JSON is drawn, round-trips, and its errors name the motif and step") {
    const auto j = nlohmann::json::parse(R"({"motif_probability": 1.0, "builtin_motifs": false, "max_nodes": 4,
      "user_motifs": [{"name": "mine", "rule": "my fusion", "steps": [
        {"op": "Relu"}, {"op": "Add", "inputs": {"0": "prev", "1": "weight:last"}}]}]})");
    const auto c = tg::config_from_json(j);
    REQUIRE(c.user_motifs.size() == 1);
    CHECK(c.user_motifs[0].steps[1].inputs.at(1).shape == "last");
    const auto back = tg::config_from_json(tg::to_json(c));
    CHECK(back.hash() == c.hash());
    const tg::generator gen(c);
    REQUIRE(gen.motifs().size() == 1);
    auto g = tg::case_rng(5, 0, c.hash());
    tg::generation_stats st;
    const auto mine = gen.generate(g, st).motifs;
    CHECK_FALSE(mine.empty());
    CHECK(std::all_of(mine.begin(), mine.end(), [](const std::string& n) { return n == "mine"; }));

    CHECK_THROWS_WITH_AS(tg::config_from_json(nlohmann::json::parse(R"({"user_motifs": [{"name": "b", "steps": [{"op": "Relu", "inputs": {"0": "previous"}}]}]})")),
                         doctest::Contains("motif 'b', step 0"), to::error);
    tg::config unknown_op;
    unknown_op.motif_probability = 0.5;
    unknown_op.user_motifs = {tg::motif{"u", "r", {tg::make_step("Rleu"), tg::make_step("Relu")}}};
    CHECK_THROWS_WITH_AS(tg::generator{unknown_op}, doctest::Contains("motif 'u' names op 'Rleu', which has no spec"), to::error);
    tg::config unknown_weight;
    unknown_weight.motif_probability = 0.5;
    unknown_weight.motif_weights = {{"gelu_typo", 2.0}};
    CHECK_THROWS_WITH_AS(tg::generator{unknown_weight}, doctest::Contains("motif_weights names 'gelu_typo'"), to::error);
}
#endif

}  // namespace gen_motifs_test
