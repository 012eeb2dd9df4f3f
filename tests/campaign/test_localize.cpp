// Crashes and hangs localized like mismatches: prefixes of the topological order
// are graphs of their own (no dead code), and bisecting them finds the first node
// that crashes or hangs, which signs the failure by its op and dtype.
#include <doctest/doctest.h>

#include <tensoracle/campaign/campaign.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace campaign_localize_test {

namespace tc = tensoracle::campaign;
namespace fs = std::filesystem;
using tensoracle::dtype;

namespace {
fs::path scratch(const std::string& name) {
    const auto d = fs::temp_directory_path() / ("tensoracle_localize_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

/// A backend that "crashes" (SIGSEGV) on a Mul and "hangs" on a Sub reading another
/// node's output (never on one fed by graph inputs alone, so a node run alone does not
/// fail), and runs everything else with the reference. It counts its runs.
class fragile_backend final : public tc::backend {
public:
    explicit fragile_backend(std::shared_ptr<std::size_t> runs) : tc::backend("fragile"), runs_(std::move(runs)) {}
    tc::backend_run run(const tc::case_paths& c, double) override {
        ++*runs_;
        tc::backend_run r;
        const auto g = tensoracle::io::load_model(c.model);
        std::set<std::string> made;
        for (const auto& n : g.nodes) {
            for (const auto& o : n.outputs) made.insert(o);
        }
        // A crash wins over a hang whatever the order of the nodes.
        bool crash = false, hang = false;
        for (const auto& n : g.nodes) {
            const bool reads_node = std::any_of(n.inputs.begin(), n.inputs.end(), [&](const auto& in) { return made.contains(in); });
            crash = crash || (reads_node && n.op_type == "Mul");
            hang = hang || (reads_node && n.op_type == "Sub");
        }
        if (crash || hang) {
            r.status = crash ? tc::run_status::crash : tc::run_status::hang;
            r.message = crash ? "killed by SIGSEGV" : "no answer after 1 s";
            return r;
        }
        std::map<std::string, tensoracle::tensor, std::less<>> feeds;
        for (std::size_t k = 0; k < g.inputs.size(); ++k) {
            feeds.emplace(g.inputs[k].name, tensoracle::io::load_tensor(c.inputs / ("input_" + std::to_string(k) + ".pb")));
        }
        const auto res = tensoracle::graph::run(g, feeds);
        for (std::size_t k = 0; k < g.outputs.size(); ++k) {
            r.outputs.push_back(res.outputs.at(g.outputs[k].name));
            tensoracle::io::save_tensor(r.outputs.back(), c.outputs / ("output_" + std::to_string(k) + ".pb"), g.outputs[k].name);
        }
        return r;
    }
    std::unique_ptr<tc::backend> clone() const override { return std::make_unique<fragile_backend>(runs_); }

private:
    std::shared_ptr<std::size_t> runs_;
};
}  // namespace

TEST_CASE("localize: a prefix of the topological order keeps every node live") {
    tensoracle::gen::config cfg;
    cfg.include_ops = {"Add", "Mul", "Relu", "Tanh", "Split", "Concat"};
    cfg.dtypes = {dtype::f32};
    cfg.max_nodes = 8;
    const tensoracle::gen::generator gen(cfg);
    for (std::uint64_t i = 0; i < 20; ++i) {
        tensoracle::gen::generation_stats st;
        const auto c = tensoracle::io::make_case(gen, 3, i, st);
        const auto order = c.model.topological_order();
        for (std::size_t k = 0; k < order.size(); ++k) {
            const auto p = tc::detail::prefix_graph(c.model, order, k, c.values);
            REQUIRE(p.nodes.size() == k + 1);
            CHECK_NOTHROW(p.validate());
            // Every node's output reaches an output of the prefix: none is dead.
            std::set<std::string> live;
            for (const auto& o : p.outputs) live.insert(o.name);
            for (auto n = p.nodes.rbegin(); n != p.nodes.rend(); ++n) {
                const bool feeds_live = std::any_of(n->outputs.begin(), n->outputs.end(), [&](const auto& o) { return live.contains(o); });
                CHECK(feeds_live);
                for (const auto& in : n->inputs) live.insert(in);
            }
            // It computes what the whole graph computes for those values.
            std::map<std::string, tensoracle::tensor, std::less<>> feeds;
            for (const auto& in : p.inputs) feeds.emplace(in.name, c.inputs.at(in.name));
            const auto got = tensoracle::graph::run(p, feeds).outputs;
            for (const auto& o : p.outputs) CHECK(tc::detail::identical({got.at(o.name)}, {c.values.at(o.name)}));
        }
    }
}

TEST_CASE("localize: crashes and hangs are signed by the first node that fails, found by bisection") {
    const auto d = scratch("campaign");
    tc::campaign_options o;
    o.config.include_ops = {"Mul", "Sub", "Relu", "Tanh", "Abs", "Neg", "Exp"};
    o.config.dtypes = {dtype::f32, dtype::f64};
    o.config.max_nodes = 8;
    o.seed = 4;
    o.count = 60;
    o.out = d / "c";
    o.float64_oracle = false;
    o.recheck = false;
    auto runs = std::make_shared<std::size_t>(0);
    std::vector<std::unique_ptr<tc::backend>> b;
    b.push_back(std::make_unique<fragile_backend>(runs));
    const auto s = tc::run_campaign(o, std::move(b));
    std::size_t crashes = 0, hangs = 0;
    std::set<std::string> wheres;
    for (const auto& g : s["signatures"]) {
        const auto where = g["where"].get<std::string>();
        if (g["outcome"] == "crash") {
            crashes += g["count"].get<std::size_t>();
            CHECK_MESSAGE(where.rfind("op Mul f", 0) == 0, where);
            CHECK(where.find("SIGSEGV") != std::string::npos);
        } else if (g["outcome"] == "hang") {
            hangs += g["count"].get<std::size_t>();
            CHECK_MESSAGE(where.rfind("op Sub f", 0) == 0, where);
        }
        wheres.insert(g["outcome"].get<std::string>() + " " + where);
    }
    REQUIRE(crashes > 3);
    REQUIRE(hangs > 3);
    // One signature per failing op and dtype, not one per graph.
    CHECK(wheres.size() <= 4);
    // Bisection: a few prefix runs per failing case, not one per node.
    const auto failing = static_cast<double>(crashes + hangs);
    MESSAGE("backend runs: " << *runs << " for " << o.count << " cases, " << failing << " crashing or hanging");
    CHECK(static_cast<double>(*runs) < static_cast<double>(o.count) + failing * 5.0);
    fs::remove_all(d);
}

}  // namespace campaign_localize_test
