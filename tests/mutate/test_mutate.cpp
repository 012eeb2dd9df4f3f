// Mutations: every mutation on hand-built graphs that hold its pattern (valid
// for us and for ONNX, agreeing with the original at its class's level),
// chains of 1-5 mutations on generated graphs (composition), the oracle's
// power to see a wrong rewrite, the conditioning probe, EMI's dead code, and
// the generated docs/MUTATIONS.md being current.
#include <doctest/doctest.h>

#include <tensoracle/gen/generator.hpp>
#include <tensoracle/io/case_files.hpp>
#include <tensoracle/io/conformance.hpp>
#include <tensoracle/mutate/mutant_files.hpp>
#include <tensoracle/mutate/mutate.hpp>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

#ifdef TENSORACLE_TEST_SHORT
#define TENSORACLE_NODE_TEST_STRIDE 8
#else
#define TENSORACLE_NODE_TEST_STRIDE 2
#endif

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace mutate_test {

namespace to = tensoracle;
namespace tg = tensoracle::graph;
namespace mu = tensoracle::mutate;

namespace {

using value_map = std::map<std::string, to::tensor, std::less<>>;

/// A small graph written by hand, with its inputs.
struct fixture {
    std::string name;
    tg::graph g;
    value_map feeds;
};

struct builder {
    fixture f;
    to::rng r{5};
    explicit builder(std::string name) {
        f.name = name;
        f.g.name = std::move(name);
    }
    std::string input(const std::string& n, to::dtype d, const to::shape_type& s, double lo = -2.0, double hi = 2.0) {
        f.g.inputs.push_back({n, d, s});
        f.feeds.emplace(n, r.uniform_tensor(d, s, lo, hi));
        return n;
    }
    std::string weight(const std::string& n, to::dtype d, const to::shape_type& s, double lo = -1.0, double hi = 1.0) {
        f.g.initializers.emplace(n, r.uniform_tensor(d, s, lo, hi));
        return n;
    }
    std::string ints(const std::string& n, std::vector<std::int64_t> v) {
        to::array<std::int64_t> a = xt::zeros<std::int64_t>({v.size()});
        std::copy(v.begin(), v.end(), a.begin());
        f.g.initializers.emplace(n, to::tensor(a));
        return n;
    }
    std::string scalar(const std::string& n, double x) {
        f.g.initializers.emplace(n, mu::context::scalar(to::dtype::f32, x));
        return n;
    }
    std::string node(const std::string& op, std::vector<std::string> in, const std::string& out, to::spec::attribute_map a = {}) {
        f.g.nodes.push_back({op, std::move(in), {out}, std::move(a), "", ""});
        return out;
    }
    fixture done(std::vector<std::string> outputs) {
        f.g.opset = 17;
        for (const auto& o : outputs) f.g.outputs.push_back({o, to::dtype::f32, std::nullopt});
        const auto run = tg::run(f.g, f.feeds, {.record_intermediates = true});  // fills the outputs' dtypes and shapes
        for (auto& o : f.g.outputs) {
            o.type = run.values.at(o.name).element_dtype();
            o.shape = run.values.at(o.name).shape();
        }
        return f;
    }
};

using ints_t = std::vector<std::int64_t>;

fixture dense() {
    builder b("dense");
    const auto A = b.input("A", to::dtype::f32, {4, 5});
    const auto B = b.input("B", to::dtype::f32, {4, 3});
    const auto W = b.weight("W", to::dtype::f32, {5, 3});
    const auto C = b.weight("C", to::dtype::f32, {3});
    const auto g1 = b.node("Gemm", {A, W, C}, "g1", {{"alpha", 0.5}, {"beta", 2.0}});
    const auto Wt = b.weight("Wt", to::dtype::f32, {3, 5});
    const auto g2 = b.node("Gemm", {A, Wt}, "g2", {{"transB", std::int64_t{1}}});
    const auto mm = b.node("MatMul", {A, W}, "mm");
    const auto ab = b.node("Add", {mm, C}, "ab");
    const auto s = b.node("Softmax", {g1}, "s", {{"axis", std::int64_t{1}}});
    const auto ls = b.node("LogSoftmax", {ab}, "ls", {{"axis", std::int64_t{0}}});
    const auto sg = b.node("Sigmoid", {B}, "sg");
    const auto hs = b.node("HardSigmoid", {B}, "hs", {{"alpha", 0.3}, {"beta", 0.4}});
    const auto hw = b.node("HardSwish", {g2}, "hw");
    const auto sum = b.node("Sum", {s, sg, hs}, "sum");
    const auto mean = b.node("Mean", {ls, hw}, "mean");
    const auto mx = b.node("Max", {s, ls, hw}, "mx");
    const auto mn = b.node("Min", {sg, hs}, "mn");
    const auto a1 = b.node("Add", {sum, mean}, "a1");
    const auto a2 = b.node("Add", {a1, mx}, "a2");
    const auto d1 = b.node("Add", {mn, B}, "d1");
    const auto d2 = b.node("Mul", {a2, d1}, "d2");
    return b.done({d2});
}

fixture conv() {
    builder b("conv");
    const auto X = b.input("X", to::dtype::f32, {1, 4, 6, 6});
    const auto W1 = b.weight("W1", to::dtype::f32, {4, 2, 3, 3});
    const auto B1 = b.weight("B1", to::dtype::f32, {4});
    const auto y1 = b.node("Conv", {X, W1, B1}, "y1", {{"group", std::int64_t{2}}, {"pads", ints_t{1, 1, 1, 1}}});
    const auto bn = b.node("BatchNormalization",
                           {y1, b.weight("sc", to::dtype::f32, {4}, 0.5, 2.0), b.weight("bi", to::dtype::f32, {4}),
                            b.weight("mu", to::dtype::f32, {4}), b.weight("va", to::dtype::f32, {4}, 0.5, 2.0)},
                           "bn");
    const auto p = b.node("Pad", {bn, b.ints("pp", {0, 0, 1, 1, 0, 0, 1, 1})}, "p", {{"mode", std::string("constant")}});
    const auto y2 = b.node("Conv", {p, b.weight("W2", to::dtype::f32, {4, 4, 3, 3})}, "y2");
    const auto y3 = b.node("Add", {y2, b.weight("bb", to::dtype::f32, {4, 1, 1})}, "y3");
    const auto flat = b.node("Flatten", {y3}, "flat", {{"axis", std::int64_t{1}}});
    const auto r = b.node("Reshape", {flat, b.ints("rs", {2, -1})}, "r");
    const auto t = b.node("Transpose", {r}, "t", {{"perm", ints_t{1, 0}}});
    const auto re = b.node("Relu", {t}, "re");
    const auto cl = b.node("Clip", {re, b.scalar("lo", -1.0), b.scalar("hi", 1.5)}, "cl");
    const auto lr = b.node("LeakyRelu", {cl}, "lr", {{"alpha", 0.2}});
    const auto el = b.node("Elu", {lr}, "el");
    const auto se = b.node("Selu", {el}, "se");
    const auto ss = b.node("Softsign", {se}, "ss");
    const auto sp = b.node("Softplus", {ss}, "sp");
    return b.done({sp});
}

fixture norm() {
    builder b("norm");
    const auto X = b.input("X", to::dtype::f32, {2, 3, 4});
    const auto ln = b.node("LayerNormalization", {X, b.weight("S", to::dtype::f32, {4}), b.weight("Bn", to::dtype::f32, {4})}, "ln");
    const auto e = b.node("Exp", {ln}, "e");
    const auto r1 = b.node("ReduceMean", {e}, "r1", {{"axes", ints_t{1}}});
    const auto r2 = b.node("ReduceL1", {e}, "r2", {{"axes", ints_t{1}}});
    const auto r3 = b.node("ReduceL2", {e}, "r3", {{"axes", ints_t{-2}}});
    const auto r4 = b.node("ReduceSumSquare", {e}, "r4", {{"axes", ints_t{1}}});
    const auto r5 = b.node("ReduceLogSumExp", {e}, "r5", {{"axes", ints_t{1}}, {"keepdims", std::int64_t{0}}});
    const auto r6 = b.node("ReduceLogSum", {e}, "r6", {{"axes", ints_t{1}}});
    const auto s = b.node("Sum", {r1, r2, r3, r4, r6}, "s");
    // Reductions of a scalar: no axes to name (ONNX refuses an empty axes attribute).
    const auto sc = b.node("ReduceSum", {r5}, "sc", {{"keepdims", std::int64_t{0}}});
    const auto r7 = b.node("ReduceLogSumExp", {sc}, "r7", {{"keepdims", std::int64_t{0}}});
    const auto r8 = b.node("ReduceMean", {r7}, "r8");
    return b.done({s, r5, r8});
}

fixture integers() {
    builder b("integers");
    const auto X = b.input("X", to::dtype::i32, {3, 4}, -20, 20);
    const auto Y = b.input("Y", to::dtype::i32, {3, 4}, -20, 20);
    const auto a = b.node("Add", {Y, X}, "a");
    const auto m = b.node("Mul", {X, a}, "m");
    const auto q = b.node("Greater", {m, X}, "q");
    const auto e = b.node("Equal", {X, Y}, "e");
    const auto o = b.node("Or", {q, e}, "o");
    const auto mx = b.node("Max", {m, X, Y}, "mx");
    return b.done({o, mx});
}

std::vector<fixture> fixtures() { return {dense(), conv(), norm(), integers()}; }

/// The original's outputs on its inputs.
value_map outputs_of(const fixture& f) { return tg::run(f.g, f.feeds).outputs; }

}  // namespace

TEST_CASE("mutate: the registry holds >= 15 rewrites in four families, names unique, each described") {
    const auto& r = mu::registry();
    CHECK(r.size() >= 15);
    std::set<std::string> names;
    std::map<mu::family, std::size_t> per_family;
    for (const auto& m : r) {
        CAPTURE(m.name);
        CHECK(names.insert(std::string(m.name)).second);
        CHECK(!m.rewrites.empty());
        CHECK(!m.precondition.empty());
        CHECK((m.sites != nullptr));
        CHECK((m.apply != nullptr));
        if (m.numeric == mu::numeric_class::approximate) CHECK(m.level < 0.0);
        ++per_family[m.family];
    }
    for (const auto f : mu::all_families) CHECK(per_family[f] >= 3);
    CHECK_THROWS_WITH_AS((void)mu::find_mutation("no_such_rewrite"), doctest::Contains("known: gemm_decompose"), to::error);
    CHECK_THROWS_WITH_AS((void)mu::family_from_string("fusion"), doctest::Contains("unknown mutation family 'fusion'"), to::error);
}

TEST_CASE("mutate: every mutation applies to the fixtures, stays valid for us and for ONNX, and agrees at its class's level") {
    const auto all = fixtures();
    for (const auto& m : mu::registry()) {
        CAPTURE(m.name);
        std::size_t applied = 0;
        for (const auto& f : all) {
            CAPTURE(f.name);
            const auto original = outputs_of(f);
            for (std::uint64_t seed = 0; seed < 3; ++seed) {
                CAPTURE(seed);
                mu::mutate_stats stats;
                const auto mutant = mu::mutate_graph(f.g, f.feeds, seed, {.only = {std::string(m.name)}}, &stats);
                CHECK_MESSAGE(stats.invalid.empty(), (stats.invalid_messages.empty() ? std::string() : stats.invalid_messages.front()));
                if (!mutant) continue;
                ++applied;
                REQUIRE(mutant->chain.size() == 1);
                CHECK(mutant->chain[0].mutation == m.name);
                CHECK_NOTHROW(mutant->model.validate());
                const auto values = tg::run(mutant->model, f.feeds, {.record_intermediates = true}).values;
                CHECK_MESSAGE(mu::onnx_problem(mutant->model, values).empty(), mu::onnx_problem(mutant->model, values));
                const auto verdict = mu::check(*mutant, original);
                CHECK_MESSAGE(verdict.agrees, verdict.detail);
                // The rewrite happened: the graph differs from the original.
                CHECK(to::io::model_text(mutant->model) != to::io::model_text(f.g));
                // Same interface, same order.
                REQUIRE(mutant->model.outputs.size() == f.g.outputs.size());
                for (std::size_t k = 0; k < f.g.outputs.size(); ++k) CHECK(mutant->model.outputs[k].name == f.g.outputs[k].name);
                CHECK(mutant->model.inputs.size() == f.g.inputs.size());
                if (m.numeric == mu::numeric_class::exact) CHECK(mutant->numeric == mu::numeric_class::exact);
            }
        }
        CHECK_MESSAGE(applied > 0, "no fixture holds a site of " << m.name);
    }
}

TEST_CASE("mutate: every site of every mutation on the fixtures gives a model valid for us and for ONNX") {
    for (const auto& f : fixtures()) {
        CAPTURE(f.name);
        const mu::context base(f.g, f.feeds, 7);
        for (const auto& m : mu::registry()) {
            CAPTURE(m.name);
            for (const auto& s : m.sites(base)) {
                CAPTURE(s.where());
                mu::context c = base;
                m.apply(c, s);
                REQUIRE_NOTHROW(c.refresh());
                const auto problem = mu::onnx_problem(c.graph(), c.values());
                CHECK_MESSAGE(problem.empty(), problem);
            }
        }
    }
}

TEST_CASE("mutate: a rewrite never materializes a tensor far larger than the graph's (Pad into a Conv's input)") {
    // A Conv whose pads dwarf its input: padding the input out would make a 1,000x larger tensor.
    builder b("wide_pads");
    const auto x = b.input("x", to::dtype::f32, {1, 1, 4, 4});
    auto f = b.done({b.node("Conv", {x, b.weight("w", to::dtype::f32, {1, 1, 3, 3})}, "y", {{"pads", ints_t{60, 60, 60, 60}}})});
    CHECK(mu::applicability(f.g, f.feeds).at("conv_pad_out") == 0);
    // pad_slice grows a value at most 4x (or 5x when only its last axis is padded).
    builder p("pads");
    const auto v = p.input("v", to::dtype::f32, {4, 8, 8, 8});
    auto g = p.done({p.node("Relu", {v}, "out")});
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
        const auto m = mu::mutate_graph(g.g, g.feeds, seed, {.only = {"pad_slice"}});
        REQUIRE(m);
        for (const auto& [name, t] : tg::run(m->model, g.feeds, {.record_intermediates = true}).values) CHECK(t.size() <= 4 * 8 * 8 * 8 * 4);
    }
}

TEST_CASE("mutate: integer data makes an approximate rewrite exact, and exact checks are element by element") {
    const auto f = integers();
    const auto m = mu::mutate_graph(f.g, f.feeds, 1, {.only = {"distribute"}});
    REQUIRE(m);
    CHECK(m->numeric == mu::numeric_class::exact);
    CHECK(mu::check(*m, outputs_of(f)).agrees);
}

TEST_CASE("mutate: the oracle sees a wrong rewrite, exact or approximate") {
    SUBCASE("a transpose pair that does not undo itself") {
        builder b("cube");
        const auto x = b.input("x", to::dtype::f32, {2, 2, 2});
        const auto y = b.node("Transpose", {x}, "y", {{"perm", ints_t{1, 2, 0}}});
        const auto z = b.node("Transpose", {y}, "z", {{"perm", ints_t{1, 2, 0}}});  // p again, not p^-1
        const auto out = b.node("Neg", {z}, "out");
        auto f = b.done({out});
        builder o("plain");
        const auto x2 = o.input("x", to::dtype::f32, {2, 2, 2});
        auto orig = o.done({o.node("Neg", {x2}, "out")});
        mu::mutant wrong;
        wrong.model = f.g;
        wrong.outputs = tg::run(f.g, orig.feeds).outputs;
        const auto verdict = mu::check(wrong, tg::run(orig.g, orig.feeds).outputs);
        CHECK_FALSE(verdict.agrees);
        CHECK(verdict.detail.find("exact class") != std::string::npos);
    }
    SUBCASE("a softmax decomposition that subtracts instead of dividing") {
        builder b("soft");
        const auto x = b.input("x", to::dtype::f32, {3, 4});
        auto orig = b.done({b.node("Softmax", {x}, "out")});
        builder w("wrong");
        const auto x2 = w.input("x", to::dtype::f32, {3, 4});
        const auto e = w.node("Exp", {x2}, "e");
        const auto s = w.node("ReduceSum", {e, w.ints("ax", {1})}, "s");
        auto bad = w.done({w.node("Sub", {e, s}, "out")});
        mu::mutant wrong;
        wrong.model = bad.g;
        wrong.numeric = mu::numeric_class::approximate;
        wrong.level = -2;
        wrong.outputs = tg::run(bad.g, orig.feeds).outputs;
        CHECK_FALSE(mu::check(wrong, tg::run(orig.g, orig.feeds).outputs).agrees);
    }
    SUBCASE("the last bit of an exact output") {
        const to::tensor a(to::array<float>{1.f, 2.f});
        const to::tensor b(to::array<float>{1.f, std::nextafter(2.f, 3.f)});
        CHECK_FALSE(mu::compare_outputs({{"y", a}}, {{"y", b}}, mu::numeric_class::exact, 0).agrees);
        CHECK(mu::compare_outputs({{"y", a}}, {{"y", b}}, mu::numeric_class::approximate, -5).agrees);
        CHECK(mu::compare_outputs({{"y", to::tensor(to::array<float>{0.f})}}, {{"y", to::tensor(to::array<float>{-0.f})}},
                                  mu::numeric_class::exact, 0).agrees);
        CHECK_FALSE(mu::compare_outputs({{"y", a}}, {{"z", a}}, mu::numeric_class::exact, 0).agrees);
        CHECK_FALSE(mu::compare_outputs({{"y", a}}, {{"y", to::tensor(to::array<double>{1.0, 2.0})}}, mu::numeric_class::exact, 0).agrees);
    }
}

TEST_CASE("mutate: an approximate rewrite is not applied where a comparison downstream sits on a tie") {
    // Sigmoid(x) compared with a second Sigmoid(x): any last-bit change to either flips some elements.
    builder b("tie");
    const auto x = b.input("x", to::dtype::f32, {64});
    const auto s = b.node("Sigmoid", {x}, "s");
    const auto t = b.node("Sigmoid", {x}, "t");
    const auto q = b.node("GreaterOrEqual", {s, t}, "q");
    auto f = b.done({q});
    mu::mutate_stats stats;
    const auto m = mu::mutate_graph(f.g, f.feeds, 3, {.only = {"sigmoid_decompose"}}, &stats);
    CHECK_FALSE(m);
    CHECK(stats.ill_conditioned["sigmoid_decompose"] > 0);
    // Without the tie it applies.
    builder c("no_tie");
    const auto x2 = c.input("x", to::dtype::f32, {64});
    auto g = c.done({c.node("Sigmoid", {x2}, "s")});
    CHECK(mu::mutate_graph(g.g, g.feeds, 3, {.only = {"sigmoid_decompose"}}));
}

TEST_CASE("mutate: EMI keeps live code live and dead code different") {
    const auto f = conv();
    const auto original = outputs_of(f);
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
        const auto m = mu::mutate_graph(f.g, f.feeds, seed, {.only = {"emi_if"}});
        REQUIRE(m);
        CHECK(mu::check(*m, original).agrees);
        // Force the other branch: the outputs change (the dead branch computes something else).
        auto flipped = m->model;
        bool found = false;
        for (auto& n : flipped.nodes) {
            if (n.op_type != "If") continue;
            std::swap(n.subgraphs.at("then_branch"), n.subgraphs.at("else_branch"));
            found = true;
        }
        REQUIRE(found);
        const auto other = tg::run(flipped, f.feeds).outputs;
        CHECK_FALSE(mu::compare_outputs(original, other, mu::numeric_class::exact, 0).agrees);
    }
}

TEST_CASE("mutate: a chain is a pure function of (graph, inputs, seed), and options that allow nothing are errors") {
    const auto f = dense();
    const mu::mutate_options o{.steps = 4};
    const auto a = mu::mutate_graph(f.g, f.feeds, 42, o);
    const auto b = mu::mutate_graph(f.g, f.feeds, 42, o);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->chain.size() == 4);
    CHECK(to::io::to_model_proto(a->model).SerializeAsString() == to::io::to_model_proto(b->model).SerializeAsString());
    CHECK(mu::mutant_key(*a) == mu::mutant_key(*b));
    const auto c = mu::mutate_graph(f.g, f.feeds, 43, o);
    REQUIRE(c);
    CHECK(mu::mutant_key(*a) != mu::mutant_key(*c));
    CHECK_THROWS_WITH_AS((void)mu::mutate_graph(f.g, f.feeds, 1, {.families = {mu::family::emi}, .only = {"commute"}}),
                         doctest::Contains("no mutation is allowed"), to::error);
    // No Conv in the dense graph: nowhere to apply.
    CHECK_FALSE(mu::mutate_graph(f.g, f.feeds, 1, {.only = {"conv_bn_unfold"}}));
    const auto sites = mu::applicability(f.g, f.feeds);
    CHECK(sites.at("gemm_decompose") == 2);
    CHECK(sites.at("conv_bn_unfold") == 0);
}

TEST_CASE("mutate: chains of 1-5 mutations on generated graphs are valid at every step and agree at their class's level") {
#ifdef TENSORACLE_TEST_SHORT
    const std::uint64_t graphs = 40;  // sanitizer build: a sample (the Debug build runs 1,000 chains)
#else
    const std::uint64_t graphs = 200;
#endif
    const std::uint64_t chains_per_graph = 5;
    // Tensors of up to 4,096 elements keep the Debug build's interpreter quick; the
    // default configuration's 1,000 chains are benchmarks/bench_mutate's.
    to::gen::config cfg;
    cfg.max_elements = 4096;
    const to::gen::generator gen(cfg);
    to::gen::generation_stats gs;
    mu::mutate_stats stats;
    std::size_t chains = 0, agreed = 0, exact = 0, steps = 0, onnx_checked = 0;
    std::map<mu::family, std::size_t> graphs_with_family;
    for (std::uint64_t i = 0; i < graphs; ++i) {
        CAPTURE(i);
        const auto c = to::io::make_case(gen, 2026, i, gs);
        std::set<mu::family> families_here;
        for (const auto& [name, n] : mu::applicability(c.model, c.inputs)) {
            if (n > 0) families_here.insert(mu::find_mutation(name).family);
        }
        for (const auto f : families_here) ++graphs_with_family[f];
        for (std::uint64_t k = 0; k < chains_per_graph; ++k) {
            const std::uint64_t seed = i * 1000 + k;
            CAPTURE(seed);
            mu::mutate_options o;
            o.steps = 1 + (i * chains_per_graph + k) % 5;
            o.after_step = [&](const mu::context& ctx) {
                ++onnx_checked;
                const auto problem = mu::onnx_problem(ctx.graph(), ctx.values());
                CHECK_MESSAGE(problem.empty(), problem);
            };
            const auto m = mu::mutate_graph(c.model, c.inputs, seed, o, &stats);
            REQUIRE_MESSAGE(m, "no chain of " << o.steps << " found");
            ++chains;
            steps += m->chain.size();
            const auto verdict = mu::check(*m, c.outputs);
            CHECK_MESSAGE(verdict.agrees, m->chain_text() << ": " << verdict.detail);
            agreed += verdict.agrees ? 1 : 0;
            exact += m->numeric == mu::numeric_class::exact ? 1 : 0;
        }
    }
    CHECK(stats.invalid.empty());
    for (const auto& msg : stats.invalid_messages) MESSAGE(msg);
    CHECK(agreed == chains);
    CHECK(onnx_checked == steps);
    MESSAGE(chains << " chains (" << steps << " steps, " << exact << " exact) on " << graphs << " generated graphs; all valid, " << agreed << " agree");
    for (const auto f : mu::all_families) {
        MESSAGE("family " << mu::to_string(f) << " applies to " << graphs_with_family[f] << " of " << graphs << " graphs");
    }
    // Every family finds a place in most generated graphs.
    CHECK(graphs_with_family[mu::family::recover] == graphs);
    CHECK(graphs_with_family[mu::family::emi] == graphs);
}

TEST_CASE("mutate: on the ONNX node-test models, every mutation that applies keeps the model valid and agreeing") {
    namespace fs = std::filesystem;
    const fs::path data = TENSORACLE_ONNX_NODE_TESTS;
    if (!fs::exists(data)) {
        MESSAGE("no ONNX node tests at " << data << ": skipped");
        return;
    }
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(data)) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    std::size_t models = 0, applied = 0;
    std::map<std::string, std::size_t> per_mutation;
    for (std::size_t d = 0; d < dirs.size(); d += TENSORACLE_NODE_TEST_STRIDE) {
        // The models the kit runs (others are skipped by the conformance runner too).
        tg::graph g;
        value_map feeds;
        try {
            g = to::io::load_model(dirs[d] / "model.onnx");
            const auto inputs = to::io::detail::numbered_files(dirs[d] / "test_data_set_0", "input_");
            if (inputs.size() != g.inputs.size()) continue;
            for (std::size_t k = 0; k < inputs.size(); ++k) feeds.emplace(g.inputs[k].name, to::io::detail::load_test_tensor(inputs[k], g.inputs[k].type));
            (void)tg::run(g, feeds);
        } catch (const std::exception&) {
            continue;
        }
        if (!mu::mutable_opset(g)) {
            CHECK_FALSE(mu::mutate_graph(g, feeds, 0));  // older opsets are left alone, not broken
            continue;
        }
        ++models;
        CAPTURE(dirs[d].filename().string());
        const auto original = tg::run(g, feeds).outputs;
        for (const auto& [name, n] : mu::applicability(g, feeds)) {
            if (n == 0) continue;
            CAPTURE(name);
            mu::mutate_stats stats;
            const auto m = mu::mutate_graph(g, feeds, d, {.only = {name}}, &stats);
            CHECK_MESSAGE(stats.invalid.empty(), (stats.invalid_messages.empty() ? std::string() : stats.invalid_messages.front()));
            if (!m) continue;
            ++applied;
            ++per_mutation[name];
            const auto values = tg::run(m->model, feeds, {.record_intermediates = true}).values;
            const auto problem = mu::onnx_problem(m->model, values);
            CHECK_MESSAGE(problem.empty(), problem);
            const auto verdict = mu::check(*m, original);
            CHECK_MESSAGE(verdict.agrees, verdict.detail);
        }
    }
    MESSAGE(applied << " mutants of " << models << " node-test models (every " << TENSORACLE_NODE_TEST_STRIDE << "th folder), "
                    << per_mutation.size() << " mutations applied");
    CHECK(models > 50);
    // Every other folder reaches 31 of the mutations, every 8th (the sanitizer build's sample) 26.
    CHECK(per_mutation.size() >= (TENSORACLE_NODE_TEST_STRIDE <= 2 ? 30u : 24u));
}

TEST_CASE("mutate: written mutants are cases in the ONNX test layout, with their chain") {
    namespace fs = std::filesystem;
    const auto dir = fs::temp_directory_path() / ("tensoracle-mutants-" + std::to_string(::getpid()));
    const auto f = norm();
    to::io::generated_case original;
    original.model = f.g;
    original.inputs = f.feeds;
    original.outputs = outputs_of(f);
    const auto m = mu::mutate_graph(f.g, f.feeds, 9, {.steps = 2});
    REQUIRE(m);
    const auto folder = mu::write_mutant(original, *m, dir, "m0000", mu::mutation_json(*m, 9, "norm"));
    const auto back = to::io::load_model(folder / "model.onnx");
    CHECK(back.outputs.size() == f.g.outputs.size());
    CHECK(to::io::load_tensor(folder / "test_data_set_0" / "input_0.pb").identical(f.feeds.at("X")));
    std::ifstream j(folder / "mutation.json");
    const auto info = nlohmann::json::parse(j);
    CHECK(info["chain"].size() == 2);
    CHECK(info["class"] == std::string(mu::to_string(m->numeric)));
    const auto as = mu::as_case(original, *m);
    CHECK(as.outputs.size() == original.outputs.size());
    std::error_code ec;
    fs::remove_all(dir, ec);
}

TEST_CASE("mutate: docs/MUTATIONS.md is generated from the registry and current") {
    const auto md = mu::mutations_markdown();
    for (const auto& m : mu::registry()) CHECK(md.find("`" + std::string(m.name) + "`") != std::string::npos);
    std::ifstream f(TENSORACLE_SOURCE_DIR "/docs/MUTATIONS.md");
    REQUIRE_MESSAGE(f, "docs/MUTATIONS.md is missing: tensoracle mutate --list-markdown > docs/MUTATIONS.md");
    std::stringstream text;
    text << f.rdbuf();
    CHECK_MESSAGE(text.str() == md, "docs/MUTATIONS.md is stale: tensoracle mutate --list-markdown > docs/MUTATIONS.md");
}

}  // namespace mutate_test
