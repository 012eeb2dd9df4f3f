// The tensoracle command line: one executable, one subcommand per job.
//
//   tensoracle gen --count N --seed S --nodes K --out DIR [--first I]
//                  [--config FILE] [--jobs J]
//
// writes cases I .. I+N-1 of seed S as DIR/<case id>/ (ONNX backend-test
// layout, io/case_files.hpp) and the run's statistics to stdout and to
// DIR/gen_stats.json.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <tensoracle/gen/config_json.hpp>
#include <tensoracle/gen/generator.hpp>
#include <tensoracle/io/case_files.hpp>
#include <tensoracle/ops/registry.hpp>

namespace to = tensoracle;
namespace fs = std::filesystem;

namespace {

/// What a gen run counts; merged over workers, printed and saved at the end.
struct gen_statistics {
    std::map<std::string, std::size_t> ops, dtypes, ranks, nodes_per_graph, search_failures;
    std::set<std::string> unique_instances;
    std::size_t cases = 0, search_success = 0, evaluations = 0;
    to::gen::generation_stats generation;

    void add(const to::io::generated_case& c) {
        ++cases;
        ++nodes_per_graph[std::to_string(c.model.nodes.size())];
        if (c.search.success) {
            ++search_success;
        } else {
            ++search_failures[c.search.failing_op];
        }
        evaluations += c.search.evaluations;
        for (const auto& n : c.model.nodes) {
            ++ops[n.op_type];
            unique_instances.insert(to::gen::instance_key(n, [&](const std::string& v) {
                const auto& t = c.values.at(v);
                return std::make_pair(t.element_dtype(), t.shape());
            }));
            for (const auto& out : n.outputs) {
                if (out.empty()) continue;
                const auto& t = c.values.at(out);
                ++dtypes[std::string(to::name(t.element_dtype()))];
                ++ranks[std::to_string(t.shape().size())];
            }
        }
    }
    void merge(const gen_statistics& o) {
        auto add_all = [](auto& a, const auto& b) {
            for (const auto& [k, v] : b) a[k] += v;
        };
        add_all(ops, o.ops);
        add_all(dtypes, o.dtypes);
        add_all(ranks, o.ranks);
        add_all(nodes_per_graph, o.nodes_per_graph);
        add_all(search_failures, o.search_failures);
        unique_instances.insert(o.unique_instances.begin(), o.unique_instances.end());
        cases += o.cases;
        search_success += o.search_success;
        evaluations += o.evaluations;
        generation.merge(o.generation);
    }
    [[nodiscard]] nlohmann::json json() const {
        nlohmann::json j;
        j["cases"] = cases;
        j["ops"] = ops;
        j["dtypes"] = dtypes;
        j["ranks"] = ranks;
        j["nodes_per_graph"] = nodes_per_graph;
        j["unique_op_instances"] = unique_instances.size();
        j["input_search"] = {{"success", search_success},
                             {"failure", cases - search_success},
                             {"evaluations", evaluations},
                             {"failures_by_op", search_failures}};
        j["insertions"] = {{"forward", generation.forward}, {"backward", generation.backward}};
        j["graphs_redrawn"] = generation.redrawn;  // grown again: a vulnerable op's domain was out of reach
        j["graphs_regrown_after_search"] = generation.search_regrown;  // grown again: the input search failed
        j["rejections"] = generation.rejected.by_reason;
        return j;
    }
};

void print_histogram(const char* title, const std::map<std::string, std::size_t>& h, std::size_t top = 0) {
    std::vector<std::pair<std::size_t, std::string>> rows;
    for (const auto& [k, v] : h) rows.emplace_back(v, k);
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    std::printf("%s (%zu kinds)\n", title, rows.size());
    std::size_t shown = 0;
    for (const auto& [v, k] : rows) {
        if (top != 0 && shown++ == top) {
            std::printf("  ... %zu more\n", rows.size() - top);
            break;
        }
        std::printf("  %-40s %zu\n", k.c_str(), v);
    }
}

int run_gen(std::uint64_t count, std::uint64_t seed, std::uint64_t first, std::size_t nodes, const std::string& out,
            const std::string& config_file, unsigned jobs, bool quiet) {
    to::gen::config cfg;
    if (!config_file.empty()) cfg = to::gen::load_config(config_file);
    if (nodes != 0) cfg.max_nodes = nodes;
    cfg.validate();
    const to::gen::generator gen(cfg);  // throws naming the conflict when nothing can be generated
    fs::create_directories(out);

    jobs = std::max(1u, jobs);
    std::atomic<std::uint64_t> next{0}, done{0};
    std::mutex merge_mutex;
    gen_statistics total;
    std::vector<std::string> errors;
    const auto start = std::chrono::steady_clock::now();
    auto worker = [&]() {
        gen_statistics local;
        for (;;) {
            const std::uint64_t k = next.fetch_add(1);
            if (k >= count) break;
            try {
                const auto c = to::io::make_case(gen, seed, first + k, local.generation);
                to::io::write_case(c, out);
                local.add(c);
            } catch (const std::exception& e) {
                std::lock_guard lock(merge_mutex);
                errors.push_back(to::io::case_id(seed, first + k) + ": " + e.what());
            }
            ++done;
        }
        std::lock_guard lock(merge_mutex);
        total.merge(local);
    };
    std::vector<std::thread> pool;
    for (unsigned j = 0; j < jobs; ++j) pool.emplace_back(worker);
    // Progress on stderr while the workers run.
    while (!quiet && done.load() < count) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::fprintf(stderr, "\rgen: %llu/%llu cases, %.1f/s   ", static_cast<unsigned long long>(done.load()),
                     static_cast<unsigned long long>(count), static_cast<double>(done.load()) / std::max(s, 1e-9));
    }
    for (auto& t : pool) t.join();
    if (!quiet) std::fprintf(stderr, "\n");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    auto j = total.json();
    j["seed"] = seed;
    j["first"] = first;
    j["config_hash"] = cfg.hash();
    j["config"] = to::gen::to_json(cfg);
    j["seconds"] = seconds;
    j["errors"] = errors;
    {
        std::ofstream f(fs::path(out) / "gen_stats.json");
        f << j.dump(2) << '\n';
        if (!f) throw to::error("tensoracle gen", "cannot write " + (fs::path(out) / "gen_stats.json").string());
    }
    std::printf("tensoracle gen: %zu cases (seed %llu, first %llu, config %s) in %.2f s -> %s\n", total.cases,
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(first), cfg.hash().c_str(), seconds,
                out.c_str());
    print_histogram("ops", total.ops, 20);
    print_histogram("dtypes", total.dtypes);
    print_histogram("ranks", total.ranks);
    print_histogram("nodes per graph", total.nodes_per_graph);
    std::printf("unique op instances: %zu\n", total.unique_instances.size());
    std::printf("input search: %zu of %zu cases free of NaN/Inf (%.1f%%), %zu evaluations\n", total.search_success,
                total.cases, total.cases ? 100.0 * static_cast<double>(total.search_success) / static_cast<double>(total.cases) : 0.0,
                total.evaluations);
    print_histogram("input search failures (op of the failing node)", total.search_failures, 10);
    print_histogram("rejections by reason", total.generation.rejected.by_reason, 15);
    std::printf("statistics: %s\n", (fs::path(out) / "gen_stats.json").string().c_str());
    for (const auto& e : errors) std::fprintf(stderr, "error: %s\n", e.c_str());
    return errors.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"tensoracle: test kit for deep-learning compilers and AD engines"};
    app.require_subcommand(1);

    auto* gen = app.add_subcommand("gen", "Generate valid, NaN/Inf-free ONNX test cases from the op specs");
    std::uint64_t count = 10, seed = 0, first = 0;
    std::size_t nodes = 0;
    std::string out, config_file;
    unsigned jobs = 1;
    bool quiet = false;
    gen->add_option("--count", count, "Number of cases")->capture_default_str();
    gen->add_option("--seed", seed, "Seed: case i of seed s under a config is always the same")->capture_default_str();
    gen->add_option("--first", first, "Index of the first case")->capture_default_str();
    gen->add_option("--nodes", nodes, "Nodes per graph (overrides the config's max_nodes; default 10)");
    gen->add_option("--out", out, "Output folder (one folder per case)")->required();
    gen->add_option("--config", config_file, "Generator configuration, JSON (keys of tensoracle::gen::config)")
        ->check(CLI::ExistingFile);
    gen->add_option("--jobs", jobs, "Worker threads")->capture_default_str()->check(CLI::Range(1u, 256u));
    gen->add_flag("--quiet", quiet, "No progress line");

    CLI11_PARSE(app, argc, argv);
    try {
        if (gen->parsed()) return run_gen(count, seed, first, nodes, out, config_file, jobs, quiet);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tensoracle: %s\n", e.what());
        return 2;
    }
    return 0;
}
