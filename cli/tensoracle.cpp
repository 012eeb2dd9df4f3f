// The tensoracle command line: one executable, one subcommand per job.
//
//   tensoracle gen --count N --seed S --nodes K --out DIR [--first I]
//                  [--config FILE] [--jobs J]
//
// writes cases I .. I+N-1 of seed S as DIR/<case id>/ (ONNX backend-test
// layout, io/case_files.hpp) and the run's statistics to stdout and to
// DIR/gen_stats.json.
//
//   tensoracle campaign --backend NAME [--backend-cmd CMD --backend-name NAME]...
//                       --count N --seed S --out DIR [--config F] [--jobs J]
//                       [--time-limit T] [--timeout S] [--level L]
//
// runs generated cases on the backends (campaign/campaign.hpp) and writes
// DIR/summary.json, summary.txt, results.jsonl and cases/<id>/ for failures,
// and, unless --no-reduce, reduces each signature's smallest case into DIR/reduced/<id>/.
//
//   tensoracle reduce MODEL_OR_CASE (--backend NAME | --backend-cmd CMD | --check CMD) --out DIR
//
// reduces a failing case while it fails the same way and writes a reproducer
// bundle (campaign/reduce.hpp, docs/REDUCTION.md).
//
//   tensoracle node-tests --backend NAME [--backend-cmd CMD]... [--data DIR] [--out FILE]
//
// runs the ONNX backend node tests through the backends and through the
// reference interpreter; a table per backend, and every test where a backend
// and our reference disagree on passing.
//
//   tensoracle mutate CASE_DIR --count N --seed S --out DIR [--only FAMILY]...
//                     [--mutation NAME]... [--max-steps K] [--list-markdown]
//
// writes N distinct semantics-preserving mutants of a case (mutate/*.hpp,
// docs/MUTATIONS.md), each as DIR/<id>/ in the ONNX test layout with its
// mutation.json; every one passes onnx::checker and strict shape inference.
//
//   tensoracle report DIR [DIR...] [--out DIR]
//
// writes DIR/report.html (campaign/report.hpp), or merges campaign or shard
// folders into a new one with --out.
//
//   tensoracle run-reference MODEL INPUT_DIR OUTPUT_DIR
//
// the kit's reference interpreter as a backend of the executable protocol
// (docs/BACKENDS.md); its --plant-* options plant bugs, to test a campaign.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <csignal>
#include <unistd.h>

#include <tensoracle/accuracy/outcome.hpp>
#include <tensoracle/campaign/campaign.hpp>
#include <tensoracle/campaign/probe.hpp>
#include <tensoracle/campaign/reduce.hpp>
#include <tensoracle/campaign/report.hpp>
#include <tensoracle/gen/config_json.hpp>
#include <tensoracle/gen/generator.hpp>
#include <tensoracle/io/case_files.hpp>
#include <tensoracle/io/conformance.hpp>
#include <tensoracle/mutate/mutant_files.hpp>
#ifdef TENSORACLE_WITH_OPENCV
#include <opencv/opencv_backend.hpp>
#endif
#include <tensoracle/ops/registry.hpp>
#ifdef TENSORACLE_WITH_BLAS
#include <tensoracle/blas.hpp>
#endif

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
        j["searches_out_of_work"] = generation.search_out_of_work;    // of which: search_work spent
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

/// The command line's generator defaults: gen::config's, with motifs on (cases that
/// reach what compilers rewrite; "motif_probability": 0 in a config turns them off).
to::gen::config command_line_config() {
    to::gen::config cfg;
    cfg.motif_probability = 0.3;
    return cfg;
}

int run_gen(std::uint64_t count, std::uint64_t seed, std::uint64_t first, std::size_t nodes, const std::string& out,
            const std::string& config_file, unsigned jobs, bool quiet) {
    to::gen::config cfg = command_line_config();
    if (!config_file.empty()) cfg = to::gen::load_config(config_file, cfg);
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
        f << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
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

// --- run-reference ------------------------------------------------------------

/// Bugs planted in the reference backend, to prove a campaign catches and
/// classifies each kind (tests/campaign). Each names an op type.
struct planted_bugs {
    std::string wrong;             ///< its floating outputs come out scaled by 1.25
    std::string crash;             ///< abort()
    std::string hang;              ///< never returns
    std::string nondeterministic;  ///< its floating outputs get a different tiny error on every run
    std::string wrong_pair;        ///< "A,B": B's floating outputs scaled by 1.25 where B reads an output of A
    /// An optimizer bug: a BatchNormalization reading a Conv's output is "folded" into it
    /// without the running mean (computed as if the mean were 0).
    bool bn_fold = false;
    [[nodiscard]] bool any() const {
        return !(wrong.empty() && crash.empty() && hang.empty() && nondeterministic.empty() && wrong_pair.empty()) || bn_fold;
    }
    /// (A, B) of wrong_pair; throws for a malformed one.
    [[nodiscard]] std::pair<std::string, std::string> pair() const {
        if (wrong_pair.empty()) return {};
        const auto comma = wrong_pair.find(',');
        if (comma == std::string::npos || comma == 0 || comma + 1 == wrong_pair.size()) {
            throw to::error("tensoracle run-reference", "--plant-wrong-pair takes two op types as A,B, not '" + wrong_pair + "'");
        }
        return {wrong_pair.substr(0, comma), wrong_pair.substr(comma + 1)};
    }
};

to::tensor scaled(const to::tensor& t, double factor, double offset) {
    if (!to::info(t.element_dtype()).is_floating) return t;
    auto v = t.to<double>();
    v = v * factor + offset;
    return to::tensor(std::move(v)).cast(t.element_dtype());
}

/// The interpreter's loop, with a hook after each node where a planted bug acts.
std::map<std::string, to::tensor, std::less<>> run_planted(const to::graph::graph& g,
                                                           const std::map<std::string, to::tensor, std::less<>>& feeds,
                                                           const planted_bugs& bugs) {
    std::map<std::string, to::tensor, std::less<>> values(g.initializers.begin(), g.initializers.end());
    for (const auto& [k, t] : feeds) values.insert_or_assign(k, t);
    const auto [pair_first, pair_second] = bugs.pair();
    std::map<std::string, std::string> producer;  // value -> op type
    for (const auto& n : g.nodes) {
        for (const auto& o : n.outputs) producer[o] = n.op_type;
    }
    for (const std::size_t i : g.topological_order()) {
        const auto& n = g.nodes[i];
        const bool pair_fires = !pair_first.empty() && n.op_type == pair_second &&
                                std::any_of(n.inputs.begin(), n.inputs.end(), [&](const std::string& in) {
                                    const auto it = producer.find(in);
                                    return it != producer.end() && it->second == pair_first;
                                });
        if (n.op_type == bugs.crash) std::abort();
        if (n.op_type == bugs.hang) {
            for (;;) ::pause();
        }
        if (to::graph::detail::is_control_flow(n.op_type)) throw to::unsupported_error("tensoracle run-reference", "planted bugs run no If");
        const auto& op = to::ops::get_op(n.op_type);
        std::vector<const to::tensor*> args;
        for (const auto& in : n.inputs) args.push_back(in.empty() ? nullptr : &values.at(in));
        while (!args.empty() && args.back() == nullptr) args.pop_back();
        to::tensor zero_mean;
        if (bugs.bn_fold && n.op_type == "BatchNormalization" && args.size() >= 4) {
            const auto it = producer.find(n.inputs[0]);
            if (it != producer.end() && it->second == "Conv") {
                zero_mean = to::tensor::zeros(args[3]->element_dtype(), args[3]->shape());
                args[3] = &zero_mean;
            }
        }
        auto out = to::spec::evaluate(op, args, to::graph::call_attributes(op, n));
        for (std::size_t o = 0; o < n.outputs.size() && o < out.size(); ++o) {
            if (n.outputs[o].empty()) continue;
            if (n.op_type == bugs.wrong || pair_fires) out[o] = scaled(out[o], 1.25, 0.0);
            if (n.op_type == bugs.nondeterministic) {
                const double u = static_cast<double>(std::random_device{}()) / 4294967296.0;  // another error on every run
                out[o] = scaled(out[o], 1.0 + 1e-3 * (1.0 + u), 0.0);
            }
            values.insert_or_assign(n.outputs[o], std::move(out[o]));
        }
    }
    std::map<std::string, to::tensor, std::less<>> outputs;
    for (const auto& o : g.outputs) outputs.emplace(o.name, values.at(o.name));
    return outputs;
}

/// Exit codes of the executable protocol: 0 ran, 3 did not load, 1 failed while running.
int run_reference(const std::string& model, const std::string& inputs, const std::string& outputs, const planted_bugs& bugs) {
    std::string err;
    const int code = to::campaign::serve_case({model, inputs, outputs, 0}, [&](const to::graph::graph& g) -> to::campaign::case_runner {
        g.validate();
        return [g, &bugs](const std::vector<to::tensor>& in) {
            std::map<std::string, to::tensor, std::less<>> feeds;
            for (std::size_t k = 0; k < in.size() && k < g.inputs.size(); ++k) feeds.emplace(g.inputs[k].name, in[k]);
            const auto result = bugs.any() ? run_planted(g, feeds, bugs) : to::graph::run(g, feeds).outputs;
            std::vector<to::tensor> out;
            for (const auto& o : g.outputs) out.push_back(result.at(o.name));
            return out;
        };
    }, err);
    if (!err.empty()) std::fputs(err.c_str(), stderr);
    return code;
}

// --- campaign -----------------------------------------------------------------

std::atomic<bool> interrupted{false};
extern "C" void on_interrupt(int) {
    interrupted.store(true);
    std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends at once
    std::signal(SIGTERM, SIG_DFL);
}

fs::path self_executable() {
    std::error_code ec;
    auto p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw to::error("tensoracle campaign", "cannot find its own executable (/proc/self/exe): " + ec.message());
    return p;
}

/// The ONNX Runtime runner: $TENSORACLE_ORT_RUNNER, the source tree's, or the installed one.
fs::path ort_runner() {
    if (const char* env = std::getenv("TENSORACLE_ORT_RUNNER"); env && *env) return env;
    std::vector<fs::path> candidates;
#ifdef TENSORACLE_SOURCE_DIR
    candidates.emplace_back(fs::path(TENSORACLE_SOURCE_DIR) / "backends" / "onnxruntime" / "runner.js");
#endif
    candidates.push_back(self_executable().parent_path().parent_path() / "share" / "tensoracle" / "backends" / "onnxruntime" / "runner.js");
    for (const auto& c : candidates) {
        if (fs::exists(c)) return c;
    }
    throw to::error("tensoracle campaign", "the ONNX Runtime runner (backends/onnxruntime/runner.js) is not found; set TENSORACLE_ORT_RUNNER");
}

struct backend_choice {
    std::unique_ptr<to::campaign::backend> backend;
    std::string description;
    std::vector<std::string> one_shot;  ///< the command run once per case, for reproducers
};

/// The first line a backend's probe command prints; empty, with the reason printed, when it
/// cannot run here (the backend is then skipped).
std::optional<std::string> probe_backend(const std::string& name, const std::vector<std::string>& argv, const std::string& install_hint) {
    const auto probe = to::campaign::run_process(argv, to::campaign::process_options::with_timeout(60));
    if (probe.kind == to::campaign::exit_kind::exited && probe.exit_code == 0) return to::campaign::detail::first_line(probe.out);
    std::fprintf(stderr, "tensoracle campaign: backend '%s' skipped: %s\n", name.c_str(),
                 probe.kind == to::campaign::exit_kind::not_started ? (probe.error_message + " (" + install_hint + ")").c_str()
                                                                     : to::campaign::detail::first_line(probe.err).c_str());
    return std::nullopt;
}

/// A backend that is a command: a persistent worker (`cmd --worker`), or with
/// --process-per-case one process per case; reproducers run it once per case. The
/// description is the command line.
backend_choice command_choice(const std::string& name, std::vector<std::string> cmd, bool process_per_case) {
    backend_choice c;
    c.one_shot = cmd;
    for (const char* w : {"{model}", "{inputs}", "{outputs}"}) c.one_shot.emplace_back(w);
    for (const auto& w : cmd) c.description += (c.description.empty() ? "" : " ") + w;
    if (process_per_case) {
        for (const char* w : {"{model}", "{inputs}", "{outputs}"}) cmd.emplace_back(w);
        c.backend = std::make_unique<to::campaign::command_backend>(name, cmd);
    } else {
        cmd.emplace_back("--worker");
        c.backend = std::make_unique<to::campaign::worker_backend>(name, cmd);
    }
    return c;
}

/// A built-in backend by name; empty with a reason printed when it is not available here.
std::optional<backend_choice> builtin_backend(const std::string& name, bool process_per_case) {
    if (name == "onnxruntime" || name == "onnxruntime-noopt") {
        const auto runner = ort_runner().string();
        const std::string level = name == "onnxruntime" ? "all" : "disabled";
        // Detected at run time: Node and the onnxruntime-node package are optional.
        const auto probe = probe_backend(name, {"node", runner, "--probe"}, "install nodejs: scripts/setup");
        if (!probe) return std::nullopt;
        std::vector<std::string> cmd{"node", runner, "--opt", level};
        // Rewrite feedback: the optimized graph ORT executes (campaign/rewrites.hpp).
        if (level != "disabled") cmd.emplace_back("--rewrites");
        auto c = command_choice(name, cmd, process_per_case);
        c.description = "onnxruntime-node " + *probe + ": " + c.description;
        return c;
    }
    if (name == "opencv") {
#ifdef TENSORACLE_WITH_OPENCV
        backend_choice c;
        // In process, in a forked child per case (a crash or hang in OpenCV is classified).
        c.backend = std::make_unique<to::campaign::callable_backend>(name, to::backends::opencv_preparer());
        c.one_shot = {self_executable().string(), "run-opencv", "{model}", "{inputs}", "{outputs}"};
        c.description = to::backends::opencv_version() + " DNN (readNetFromONNX, CPU), in a forked child";
        return c;
#else
        std::fprintf(stderr, "tensoracle campaign: backend 'opencv' skipped: this tensoracle was built without OpenCV (install libopencv-dev: scripts/setup)\n");
        return std::nullopt;
#endif
    }
    if (name == "torch" || name == "torchscript" || name == "torchscript-nnc") {
        // A separate worker executable (the command line never links libtorch): found
        // next to tensoracle, or named by $TENSORACLE_TORCH_WORKER.
        fs::path worker;
        if (const char* env = std::getenv("TENSORACLE_TORCH_WORKER"); env && *env) {
            worker = env;
        } else {
            worker = self_executable().parent_path() / "tensoracle-torch";
        }
        const auto probe = probe_backend(name, {worker.string(), "--probe"}, "tensoracle-torch is built when libtorch-dev is installed: scripts/setup");
        if (!probe) return std::nullopt;
        // torchscript-nnc adds NNC's CPU fusion groups, which Debian's libtorch (no LLVM) runs
        // through NNC's IR evaluator: seconds per 10^5 elements, so for small-tensor configs.
        std::vector<std::string> cmd{worker.string(), "--mode", name == "torch" ? "eager" : "script"};
        if (name == "torchscript-nnc") cmd.emplace_back("--fuse");
        auto c = command_choice(name, cmd, process_per_case);
        c.description = *probe +
                        (name == "torch"         ? " eager (one ATen call per node)"
                         : name == "torchscript" ? " TorchScript (traced, frozen, optimize_for_inference, profiling executor)"
                                                 : " TorchScript with NNC CPU fusion (IR evaluator)");
        return c;
    }
    if (name == "mlir" || name == "mlir-O0") {
        // MLIR 15 through its tools (tensoracle-mlir, next to tensoracle or named by
        // $TENSORACLE_MLIR_WORKER); skipped where mlir-15-tools is missing.
        fs::path worker;
        if (const char* env = std::getenv("TENSORACLE_MLIR_WORKER"); env && *env) {
            worker = env;
        } else {
            worker = self_executable().parent_path() / "tensoracle-mlir";
        }
        const std::string pipeline = name == "mlir" ? "opt" : "O0";
        const auto probe = probe_backend(name, {worker.string(), "--pipeline", pipeline, "--probe"}, "install mlir-15-tools and libmlir-15-dev: scripts/setup");
        if (!probe) return std::nullopt;
        auto c = command_choice(name, {worker.string(), "--pipeline", pipeline}, process_per_case);
        c.description = *probe + (name == "mlir" ? ": TOSA -> Linalg (fused) -> affine (fused loops) -> LLVM -O3, JIT" : ": TOSA -> Linalg -> loops -> LLVM -O0, JIT, no fusion");
        return c;
    }
    if (name == "reference") {
        backend_choice c;
        c.one_shot = {self_executable().string(), "run-reference", "{model}", "{inputs}", "{outputs}"};
        c.backend = std::make_unique<to::campaign::command_backend>(name, c.one_shot);
        c.description = "tensoracle run-reference";
        return c;
    }
    throw to::error("tensoracle campaign", "unknown backend '" + name + "' (built in: onnxruntime, onnxruntime-noopt, opencv, torch, torchscript, torchscript-nnc, mlir, mlir-O0, reference; or --backend-cmd)");
}

struct campaign_args {
    std::vector<std::string> backends, commands, command_names, known;
    std::uint64_t count = 100, seed = 0, first = 0;
    std::string out, config_file;
    double time_limit = 0.0, timeout = 10.0, level = -4.0;
    unsigned jobs = 1;
    bool quiet = false, process_per_case = false, no_float64 = false, no_recheck = false, no_localize = false;
    bool no_reduce = false;
    std::string shard;  ///< "i/N", or empty: from the environment (Slurm, Kubernetes), else the whole campaign
    bool probe = false, no_probe_cache = false;
    std::size_t mutants = 0, mutation_steps = 1;
    std::vector<std::string> mutation_families, mutation_names;
    std::size_t reduce_calls = 300;
    double reduce_time = 60.0;
    std::string guide;  ///< rewrites, none, or empty: rewrites where a built-in backend reports them
    std::size_t guide_round = 32;
    /// How reproducers reach each backend (filled by make_backends).
    to::campaign::bundle_info bundle;
};

/// The backends asked for on the command line; built-ins not available here are skipped with a message.
std::vector<std::unique_ptr<to::campaign::backend>> make_backends(campaign_args& a, std::map<std::string, std::string>& descriptions,
                                                                  bool& uses_ort) {
    std::vector<std::unique_ptr<to::campaign::backend>> backends;
    for (const auto& name : a.backends) {
        auto c = builtin_backend(name, a.process_per_case);
        if (!c) continue;
        uses_ort |= name.rfind("onnxruntime", 0) == 0;
        descriptions[name] = c->description;
        a.bundle.backend_commands[name] = c->one_shot;
        a.bundle.backend_descriptions[name] = c->description;
        backends.push_back(std::move(c->backend));
    }
    if (a.command_names.size() > a.commands.size()) throw to::error("tensoracle", "more --backend-name than --backend-cmd");
    for (std::size_t i = 0; i < a.commands.size(); ++i) {
        const std::string name = i < a.command_names.size() ? a.command_names[i] : "cmd" + std::to_string(i + 1);
        auto words = to::campaign::split_command(a.commands[i]);
        // A command that names none of the case's paths takes them on stdin: a persistent worker.
        const bool one_shot = std::any_of(words.begin(), words.end(), [](const std::string& w) {
            return w.find("{model}") != std::string::npos || w.find("{inputs}") != std::string::npos || w.find("{outputs}") != std::string::npos;
        });
        if (one_shot) {
            backends.push_back(std::make_unique<to::campaign::command_backend>(name, std::move(words)));
        } else {
            backends.push_back(std::make_unique<to::campaign::worker_backend>(name, std::move(words)));
        }
        descriptions[name] = (one_shot ? "command: " : "worker: ") + a.commands[i];
        a.bundle.backend_commands[name] = to::campaign::split_command(a.commands[i]);
        a.bundle.backend_descriptions[name] = descriptions[name];
    }
    if (backends.empty()) throw to::error("tensoracle", "no backend to run (every one asked for was skipped, or none was given)");
    return backends;
}

/// What names a backend's version for the support cache: its description (built-ins
/// carry their library's version) and, for a command, its executable's size and time.
std::string probe_key(const std::string& description, const std::vector<std::string>& words) {
    std::string key = description;
    if (words.empty()) return key;
    fs::path exe = words[0];
    if (exe.string().find('/') == std::string::npos) {
        const char* path = std::getenv("PATH");
        std::string dirs = path ? path : "";
        for (std::size_t b = 0; b <= dirs.size();) {
            auto e = dirs.find(':', b);
            if (e == std::string::npos) e = dirs.size();
            const fs::path candidate = fs::path(dirs.substr(b, e - b)) / exe;
            if (!dirs.substr(b, e - b).empty() && fs::exists(candidate)) {
                exe = candidate;
                break;
            }
            b = e + 1;
        }
    }
    std::error_code ec;
    const auto size = fs::file_size(exe, ec);
    if (!ec) {
        const auto time = fs::last_write_time(exe, ec).time_since_epoch().count();
        key += " | " + exe.string() + " " + std::to_string(size) + " bytes, modified " + std::to_string(ec ? 0 : time);
    }
    return key;
}

/// The shard this process runs: --shard i/N, else Slurm's array task (SLURM_ARRAY_TASK_ID
/// from SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT), else a Kubernetes Indexed Job's
/// JOB_COMPLETION_INDEX of TENSORACLE_SHARD_COUNT; {0, 1} for a whole campaign.
std::pair<std::uint64_t, std::uint64_t> shard_of(const std::string& flag) {
    const char* where = "tensoracle campaign --shard";
    auto number = [&](const std::string& text, const std::string& what) {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
            throw to::error(where, what + " is not a number: '" + text + "'");
        }
        return std::stoull(text);
    };
    auto env = [](const char* k) { const char* v = std::getenv(k); return std::string(v ? v : ""); };
    std::uint64_t i = 0, n = 1;
    if (!flag.empty()) {
        const auto slash = flag.find('/');
        if (slash == std::string::npos) throw to::error(where, "takes i/N (shard i of N, from 0), not '" + flag + "'");
        i = number(flag.substr(0, slash), "the shard index");
        n = number(flag.substr(slash + 1), "the shard count");
    } else if (!env("SLURM_ARRAY_TASK_ID").empty() && !env("SLURM_ARRAY_TASK_COUNT").empty()) {
        const auto min = env("SLURM_ARRAY_TASK_MIN").empty() ? 0 : number(env("SLURM_ARRAY_TASK_MIN"), "SLURM_ARRAY_TASK_MIN");
        i = number(env("SLURM_ARRAY_TASK_ID"), "SLURM_ARRAY_TASK_ID") - min;
        n = number(env("SLURM_ARRAY_TASK_COUNT"), "SLURM_ARRAY_TASK_COUNT");
    } else if (!env("JOB_COMPLETION_INDEX").empty()) {
        if (env("TENSORACLE_SHARD_COUNT").empty()) {
            throw to::error(where, "JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but TENSORACLE_SHARD_COUNT, the job's completions, is not");
        }
        i = number(env("JOB_COMPLETION_INDEX"), "JOB_COMPLETION_INDEX");
        n = number(env("TENSORACLE_SHARD_COUNT"), "TENSORACLE_SHARD_COUNT");
    }
    if (n == 0 || i >= n) throw to::error(where, "shard " + std::to_string(i) + " of " + std::to_string(n) + ": the index must be below the count");
    return {i, n};
}

int run_campaign_command(campaign_args& a) {
    to::campaign::campaign_options o;
    const auto [shard_index, shard_count] = shard_of(a.shard);
    o.shard_index = shard_index;
    o.shard_count = shard_count;
    if (shard_count > 1) {
        // Every shard of one command line writes a folder of its own under --out.
        a.out = (fs::path(a.out) / ("shard-" + std::to_string(shard_index) + "-of-" + std::to_string(shard_count))).string();
    }
    bool uses_ort = false;
    auto backends = make_backends(a, o.backend_descriptions, uses_ort);
    o.config = command_line_config();
    if (!a.config_file.empty()) {
        o.config = to::gen::load_config(a.config_file, o.config);
    } else if (uses_ort) {
        // bfloat16 tensors cannot cross onnxruntime-node's API (it has no such tensor type).
        std::erase(o.config.dtypes, to::dtype::bf16);
    }
    o.config.validate();
    // Triage: the kit's confirmed findings (in its source tree, where this tensoracle was built) and the user's.
#ifdef TENSORACLE_SOURCE_DIR
    if (const auto data = fs::path(TENSORACLE_SOURCE_DIR) / "tests" / "data"; fs::is_directory(data)) {
        o.known.add(data);
        // Discrepancies judged no one's bug (precision, specification gaps): labelled judged.
        if (const auto judged = data / "judged"; fs::is_directory(judged)) {
            for (const auto& f : fs::directory_iterator(judged)) {
                if (f.path().extension() == ".json") o.known.add(f.path());
            }
        }
    }
#endif
    for (const auto& k : a.known) o.known.add(k);
    std::vector<to::campaign::support_table> support;
    if (a.probe) {
        // Single-op trials per (op, dtype), cached per backend version, before the first case.
        to::campaign::probe_options po;
        po.timeout_seconds = a.timeout;
        po.use_cache = !a.no_probe_cache;
        po.scratch = fs::temp_directory_path() / ("tensoracle_probe_" + std::to_string(::getpid()));
        const bool tty = ::isatty(2) != 0;
        for (auto& b : backends) {
            const auto words = a.bundle.backend_commands.count(b->name()) ? a.bundle.backend_commands.at(b->name()) : std::vector<std::string>{};
            auto t = to::campaign::probe_support(*b, probe_key(o.backend_descriptions[b->name()], words), o.config, po, [&](std::size_t k, std::size_t n) {
                if (!a.quiet && tty) std::fprintf(stderr, "\rprobing %s: %zu/%zu (op, dtype) pairs   ", b->name().c_str(), k, n);
            });
            if (!a.quiet && tty) std::fprintf(stderr, "\n");
            std::size_t no = 0;
            for (const auto& [op, m] : t.pairs) {
                for (const auto& [d, what] : m) no += what == "unsupported" ? 1 : 0;
            }
            std::printf("support of %s: %zu (op, dtype) pairs unsupported, %zu probe runs%s\n", b->name().c_str(), no, t.runs,
                        t.runs == 0 ? " (all from the cache)" : "");
            support.push_back(std::move(t));
        }
        std::error_code ec;
        fs::remove_all(po.scratch, ec);
        o.config.support = to::campaign::combined_support(support, o.config);
        o.config.validate();
    }
    o.seed = a.seed;
    o.first = a.first;
    o.count = a.count;
    o.out = a.out;
    o.level = a.level;
    o.timeout_seconds = a.timeout;
    o.time_limit_seconds = a.time_limit;
    o.jobs = a.jobs;
    o.float64_oracle = !a.no_float64;
    o.recheck = !a.no_recheck;
    o.localize = !a.no_localize;
    o.mutants = a.mutants;
    {
        // Built-ins that report what they rewrote: ORT at an optimization level, TorchScript, MLIR with fusion.
        const bool reports = std::any_of(backends.begin(), backends.end(), [](const auto& b) {
            return b->name() == "onnxruntime" || b->name() == "mlir" || b->name().rfind("torchscript", 0) == 0;
        });
        o.guide.mode = to::campaign::guide_mode_from_string(a.guide.empty() ? (reports ? "rewrites" : "none") : a.guide);
        o.guide.round = a.guide_round;
    }
    if (a.mutation_steps < 1 || a.mutation_steps > 16) throw to::error("tensoracle campaign", "--mutation-steps must be in 1..16");
    o.mutation_max_steps = a.mutation_steps;
    for (const auto& f : a.mutation_families) o.mutation.families.push_back(to::mutate::family_from_string(f));
    for (const auto& m : a.mutation_names) o.mutation.only.push_back(std::string(to::mutate::find_mutation(m).name));
    if (a.mutants == 0 && (!a.mutation_families.empty() || !a.mutation_names.empty() || a.mutation_steps != 1)) {
        throw to::error("tensoracle campaign", "--mutation-family, --mutation and --mutation-steps choose mutants: give --mutants K too");
    }

    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    const bool tty = ::isatty(2) != 0;
    auto progress = [&](const to::campaign::campaign_progress& p) {
        if (a.quiet) return;
        std::string line;
        char buf[160];
        std::snprintf(buf, sizeof buf, "campaign: %llu/%llu cases, %.1f cases/s", static_cast<unsigned long long>(p.done),
                      static_cast<unsigned long long>(p.total),
                      p.seconds > 0 ? static_cast<double>(p.done - p.skipped) / p.seconds : 0.0);
        line = buf;
        if (p.skipped) line += " (" + std::to_string(p.skipped) + " resumed)";
        for (const auto& [k, v] : p.outcomes) line += ", " + k + " " + std::to_string(v);
        line += ", signatures " + std::to_string(p.signatures);
        // A progress line rewritten in place on a terminal; every 50 cases in a log.
        if (tty) {
            std::fprintf(stderr, "\r%s   ", line.c_str());
        } else if (p.done % 50 == 0 || p.done == p.total) {
            std::fprintf(stderr, "%s\n", line.c_str());
        }
    };
    std::vector<std::unique_ptr<to::campaign::backend>> prototypes;
    for (const auto& b : backends) prototypes.push_back(b->clone());
    const auto judging = o.judging();
    auto summary = to::campaign::run_campaign(std::move(o), std::move(backends), progress, &interrupted);
    if (!a.quiet && tty) std::fprintf(stderr, "\n");
    if (!a.no_reduce && !interrupted.load() && !summary["signatures"].empty()) {
        to::campaign::reduce_options ro;
        ro.max_calls = a.reduce_calls;
        ro.time_limit_seconds = a.reduce_time;
        summary = to::campaign::reduce_signatures(a.out, prototypes, judging, ro, a.bundle,
                                                  [&](const std::string& id, const to::campaign::reduce_progress& p) {
                                                      if (a.quiet || !tty) return;
                                                      std::fprintf(stderr, "\rreducing %s: %zu nodes, %zu check runs, %s          ", id.c_str(),
                                                                   p.nodes, p.calls, p.phase.c_str());
                                                  });
        if (!a.quiet && tty) std::fprintf(stderr, "\n");
    }
    if (!support.empty()) {
        nlohmann::json sj;
        for (const auto& t : support) sj["backends"][t.backend] = t.json();
        to::campaign::detail::write_json(fs::path(a.out) / "support.json", sj);
    }
    const auto report = to::campaign::write_report(a.out);
    std::fputs(to::campaign::campaign_runner::summary_text(summary).c_str(), stdout);
    std::printf("\nresults: %s/summary.json, summary.txt, results.jsonl, cases/%s\nreport: %s\n", a.out.c_str(),
                a.no_reduce || summary["signatures"].empty() ? "" : ", reduced/", report.string().c_str());
    if (interrupted.load()) {
        std::printf("interrupted: the results so far are kept; the same command resumes\n");
        return 130;
    }
    return 0;
}

// --- node-tests -----------------------------------------------------------------

int run_node_tests(campaign_args& a, const std::string& data, const std::string& json_out, const std::string& filter) {
    std::map<std::string, std::string> descriptions;
    bool uses_ort = false;
    auto backends = make_backends(a, descriptions, uses_ort);
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(data)) {
        if (e.is_directory() && fs::exists(e.path() / "model.onnx") && fs::exists(e.path() / "test_data_set_0")) dirs.push_back(e.path());
    }
    std::sort(dirs.begin(), dirs.end());
    if (!filter.empty()) {
        const std::regex re(filter);
        std::erase_if(dirs, [&](const fs::path& d) { return !std::regex_search(d.filename().string(), re); });
    }
    const auto scratch = fs::temp_directory_path() / ("tensoracle_node_tests_" + std::to_string(::getpid()));
    to::io::conformance_options co;  // the ONNX runner's tolerance: rtol 1e-3, atol 1e-7
    nlohmann::json j;
    j["data"] = data;
    j["tolerance"] = {{"rtol", co.rtol}, {"atol", co.atol}};
    std::map<std::string, std::map<std::string, std::size_t>> table;
    std::vector<std::string> disagreements;
    std::size_t done = 0;
    for (const auto& dir : dirs) {
        const auto name = dir.filename().string();
        nlohmann::json row;
        const auto ours = to::io::run_conformance_case(dir, co);
        // Our reference in the backends' words: a failed test is a mismatch, a skipped one unsupported.
        const std::string ours_outcome = ours.status == to::io::case_status::passed   ? "pass"
                                         : ours.status == to::io::case_status::failed ? "mismatch"
                                                                                      : "unsupported";
        row["reference"] = {{"outcome", ours_outcome}, {"reason", ours.reason}};
        // The model's op types, so a figure can be restricted to the ops a backend covers
        // (scripts/mlir-sweep --node-tests); a model the loader refuses has none listed.
        try {
            std::set<std::string> ops;
            for (const auto& n : to::io::load_model(dir / "model.onnx").nodes) ops.insert(n.op_type);
            row["ops"] = ops;
        } catch (const std::exception&) {
            row["ops"] = nlohmann::json::array();
        }
        ++table["reference (ours)"][ours_outcome];
        const auto expected_files = to::io::detail::numbered_files(dir / "test_data_set_0", "output_");
        for (auto& b : backends) {
            const auto out = scratch / b->name();
            fs::remove_all(out);
            fs::create_directories(out);
            to::campaign::case_paths p{dir / "model.onnx", dir / "test_data_set_0", out, expected_files.size()};
            auto r = b->run(p, a.timeout);
            std::string outcome{to::campaign::to_string(r.status)}, detail = r.message;
            if (r.status == to::campaign::run_status::ran) {
                outcome = "pass";
                for (std::size_t k = 0; k < expected_files.size(); ++k) {
                    if (k >= r.outputs.size()) {
                        outcome = "bad_output";
                        detail = "wrote " + std::to_string(r.outputs.size()) + " outputs for " + std::to_string(expected_files.size()) + " expected";
                        break;
                    }
                    to::tensor expected;
                    try {
                        // bfloat16 test data stored as UINT16 bits reads as bfloat16 (the conformance runner's rule).
                        expected = to::io::detail::load_test_tensor(expected_files[k], r.outputs[k].element_dtype());
                    } catch (const to::unsupported_error& e) {
                        // An element type the kit has no kernels for (uint16 ...): nothing to compare with.
                        outcome = "unsupported";
                        detail = std::string("tensoracle cannot compare output ") + std::to_string(k) + ": " + e.what();
                        break;
                    }
                    const auto report = to::compare(r.outputs[k], expected);
                    const auto v = to::judge(report, to::tolerance{co.atol, co.rtol});
                    if (!v.passed()) {
                        outcome = v.reason == to::failure_reason::value_mismatch ? "mismatch"
                                  : v.reason == to::failure_reason::nan_inf_mismatch ? "nan_inf" : "shape_dtype";
                        detail = "output " + std::to_string(k) + ": " + v.detail;
                        break;
                    }
                }
            }
            ++table[b->name()][outcome];
            row["backends"][b->name()] = {{"outcome", outcome}, {"detail", detail}};
            const bool ours_pass = ours.status == to::io::case_status::passed, theirs_pass = outcome == "pass";
            if (ours.status != to::io::case_status::skipped && ours_pass != theirs_pass && outcome != "unsupported") {
                disagreements.push_back(name + ": " + b->name() + " " + outcome + (detail.empty() ? "" : " (" + detail + ")") +
                                        "; reference " + std::string(to::io::to_string(ours.status)) +
                                        (ours.reason.empty() ? "" : " (" + ours.reason + ")"));
            }
        }
        j["tests"][name] = row;
        if (!a.quiet && ::isatty(2)) std::fprintf(stderr, "\rnode-tests: %zu/%zu", ++done, dirs.size());
    }
    if (!a.quiet && ::isatty(2)) std::fprintf(stderr, "\n");
    fs::remove_all(scratch);
    j["table"] = table;
    j["disagreements"] = disagreements;
    std::set<std::string> cols;
    for (const auto& [b, m] : table) {
        for (const auto& [k, v] : m) cols.insert(k);
    }
    std::printf("ONNX node tests: %zu in %s (rtol %g, atol %g against the tests' own outputs)\n\n%-20s", dirs.size(), data.c_str(), co.rtol,
                co.atol, "");
    for (const auto& c : cols) std::printf(" %15s", c.c_str());
    std::printf("\n");
    for (const auto& [b, m] : table) {
        std::printf("%-20s", b.c_str());
        for (const auto& c : cols) std::printf(" %15zu", m.count(c) ? m.at(c) : 0);
        std::printf("\n");
    }
    std::printf("\nbackend and reference disagree on passing (backend unsupported left out): %zu\n", disagreements.size());
    for (const auto& d : disagreements) std::printf("  %s\n", d.c_str());
    if (!json_out.empty()) {
        std::ofstream f(json_out);
        f << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        if (!f) throw to::error("tensoracle node-tests", "cannot write " + json_out);
    }
    return 0;
}


// --- reduce -------------------------------------------------------------------

struct reduce_args {
    std::string input, out, check, signature, fail_regex;
    std::optional<int> fail_code;
    std::uint64_t seed = 0;
    to::campaign::reduce_options options;
    bool no_shapes = false, no_values = false, no_attributes = false;
};

int run_reduce(campaign_args& a, reduce_args& r, const std::string& command_line) {
    const bool tty = ::isatty(2) != 0;
    if (r.check.empty() == (a.backends.empty() && a.commands.empty())) {
        throw to::error("tensoracle reduce", "give either --check CMD or the backend(s) to reduce against (--backend / --backend-cmd)");
    }
    r.options.shapes = !r.no_shapes;
    r.options.values = !r.no_values;
    r.options.attributes = !r.no_attributes;
    const auto original = to::campaign::load_case(r.input, r.seed);
    to::campaign::bundle_info info;
    info.rerun = command_line;
    const auto scratch = fs::temp_directory_path() / ("tensoracle_reduce_" + std::to_string(::getpid()));
    if (!r.check.empty() && !r.signature.empty()) throw to::error("tensoracle reduce", "--signature is for a backend's signature, not with --check");
    if (r.check.empty() && (r.fail_code || !r.fail_regex.empty())) {
        throw to::error("tensoracle reduce", "--fail-code and --fail-regex narrow a --check command; a backend's failure is its signature");
    }
    std::unique_ptr<to::campaign::failure_check> check;
    if (!r.check.empty()) {
        if (r.check.find("{model}") == std::string::npos && r.check.find("{dir}") == std::string::npos) {
            throw to::error("tensoracle reduce", "--check must name the candidate: {model} or {dir}");
        }
        check = std::make_unique<to::campaign::command_check>(to::campaign::split_command(r.check), scratch, a.timeout, r.fail_code, r.fail_regex);
    } else {
        std::map<std::string, std::string> descriptions;
        bool uses_ort = false;
        auto backends = make_backends(a, descriptions, uses_ort);
        if (backends.size() > 2) throw to::error("tensoracle reduce", "reduce against one backend, or two configurations of one system");
        info.backend_commands = a.bundle.backend_commands;
        info.backend_descriptions = a.bundle.backend_descriptions;
        to::campaign::judge_options jo;
        jo.level = a.level;
        jo.timeout_seconds = a.timeout;
        jo.float64_oracle = !a.no_float64;
        jo.recheck = !a.no_recheck;
        jo.localize = !a.no_localize;
        check = std::make_unique<to::campaign::signature_check>(std::move(backends), jo, scratch, r.signature);
    }
    struct cleanup {
        fs::path p;
        ~cleanup() {
            std::error_code ec;
            fs::remove_all(p, ec);
        }
    } clean{scratch};
    to::campaign::reduce_result result;
    try {
        result = to::campaign::reduce(original, *check, r.options, [&](const to::campaign::reduce_progress& p) {
            if (a.quiet) return;
            if (tty) {
                std::fprintf(stderr, "\rreduce: %zu nodes, %zu check runs, %.1f s, %s          ", p.nodes, p.calls, p.seconds, p.phase.c_str());
            }
        });
    } catch (const to::campaign::original_does_not_fail& e) {
        if (!a.quiet && tty) std::fprintf(stderr, "\n");
        std::fprintf(stderr, "tensoracle reduce: %s\n", e.what());
        return 1;
    }
    if (!a.quiet && tty) std::fprintf(stderr, "\n");
    (void)to::campaign::write_bundle(result, *check, r.out, info);
    std::printf("failure kept: %s\n", result.failure.c_str());
    if (result.failure_rate < 1.0) {
        std::printf("flaky: the original failed in %.0f%% of %u runs; each candidate ran up to %u times\n", 100.0 * result.failure_rate,
                    result.measured, result.repeats);
    }
    std::printf("reduced %s\n     to %s\nin %zu check runs (%zu candidates, %zu invalid ones never run, %zu hangs), %.1f s%s\n",
                to::campaign::detail::size_text(result.original).c_str(), to::campaign::detail::size_text(result.reduced).c_str(), result.calls,
                result.candidates, result.invalid, result.hangs, result.seconds, result.out_of_budget ? " (budget spent: it may reduce further)" : "");
    std::printf("\n%s\nbundle: %s/ (model.onnx, test_data_set_0/, manifest.json, repro.cpp, CMakeLists.txt, README.md)\n",
                to::io::model_text(result.reduced.model).c_str(), r.out.c_str());
    return 0;
}
// --- mutate -------------------------------------------------------------------------

struct mutate_args {
    std::string input, out;
    std::uint64_t count = 10, seed = 0;
    std::size_t max_steps = 1;
    std::vector<std::string> families, mutations;
    bool quiet = false, list_markdown = false;
};

int run_mutate(const mutate_args& a) {
    if (a.list_markdown) {
        std::fputs(to::mutate::mutations_markdown().c_str(), stdout);
        return 0;
    }
    if (a.input.empty() || a.out.empty()) throw to::error("tensoracle mutate", "give the case (a folder or model.onnx) and --out");
    if (a.max_steps < 1 || a.max_steps > 16) throw to::error("tensoracle mutate", "--max-steps must be in 1..16");
    to::mutate::mutate_options o;
    for (const auto& f : a.families) o.families.push_back(to::mutate::family_from_string(f));
    for (const auto& m : a.mutations) o.only.push_back(std::string(to::mutate::find_mutation(m).name));
    const auto original = to::campaign::load_case(a.input, a.seed);
    std::error_code ec;
    fs::create_directories(a.out, ec);
    if (ec) throw to::error("tensoracle mutate", "cannot create " + a.out + ": " + ec.message());
    const bool tty = ::isatty(2) != 0;
    std::set<std::string> seen;
    std::map<std::string, std::size_t> by_family, by_mutation;
    std::size_t written = 0, duplicates = 0, no_site = 0, invalid = 0, disagree = 0, draws = 0;
    to::mutate::mutate_stats stats;
    const std::uint64_t max_draws = std::max<std::uint64_t>(a.count * 8, 32);
    while (written < a.count && draws < max_draws) {
        const std::uint64_t draw = draws++;
        // Mutant k of seed s: its chain length and choices are a pure function of (case, s, k).
        const std::uint64_t seed = to::fnv1a(std::to_string(a.seed) + "/" + std::to_string(draw));
        to::mutate::mutate_options ok = o;
        ok.steps = 1 + static_cast<std::size_t>(seed % a.max_steps);
        const auto m = to::mutate::mutate_graph(original.model, original.inputs, seed, ok, &stats);
        if (!m) {
            ++no_site;
            continue;
        }
        if (!seen.insert(to::mutate::mutant_key(*m)).second) {
            ++duplicates;
            continue;
        }
        const auto values = to::graph::run(m->model, original.inputs, {.record_intermediates = true}).values;
        if (const auto problem = to::mutate::onnx_problem(m->model, values); !problem.empty()) {
            ++invalid;
            std::fprintf(stderr, "tensoracle mutate: %s is not valid for ONNX (not written): %s\n", m->chain_text().c_str(), problem.c_str());
            continue;
        }
        const auto verdict = to::mutate::check(*m, original.outputs);
        if (!verdict.agrees) {
            ++disagree;
            std::fprintf(stderr, "tensoracle mutate: %s disagrees with the original on the interpreter (not written): %s\n", m->chain_text().c_str(),
                         verdict.detail.c_str());
            continue;
        }
        char id[64];
        std::snprintf(id, sizeof id, "m%04zu_%s", written, to::mutate::mutant_key(*m).substr(0, 8).c_str());
        (void)to::mutate::write_mutant(original, *m, a.out, id, to::mutate::mutation_json(*m, seed, a.input));
        ++written;
        for (const auto& step : m->chain) {
            ++by_family[std::string(to::mutate::to_string(step.family))];
            ++by_mutation[step.mutation];
        }
        if (!a.quiet && tty) std::fprintf(stderr, "\rmutate: %zu/%llu mutants, %zu duplicates skipped   ", written, static_cast<unsigned long long>(a.count), duplicates);
    }
    if (!a.quiet && tty) std::fprintf(stderr, "\n");
    std::printf("%zu mutants of %s in %s/ (%zu draws: %zu duplicates skipped, %zu found no site, %zu invalid, %zu disagreeing)\n", written,
                a.input.c_str(), a.out.c_str(), static_cast<std::size_t>(draws), duplicates, no_site, invalid, disagree);
    std::printf("applied per family:");
    for (const auto f : to::mutate::all_families) std::printf(" %s %zu", std::string(to::mutate::to_string(f)).c_str(), by_family[std::string(to::mutate::to_string(f))]);
    std::printf("\napplied per mutation:");
    for (const auto& [k, v] : by_mutation) std::printf(" %s %zu", k.c_str(), v);
    std::printf("\n");
    if (written < a.count) {
        std::printf("only %zu of %llu: the case has too few places the allowed mutations apply\n", written, static_cast<unsigned long long>(a.count));
        return written == 0 ? 1 : 0;
    }
    return invalid + disagree == 0 ? 0 : 1;
}
}  // namespace

#if defined(__SANITIZE_ADDRESS__)
constexpr bool built_with_address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool built_with_address_sanitizer = true;
#else
constexpr bool built_with_address_sanitizer = false;
#endif
#else
constexpr bool built_with_address_sanitizer = false;
#endif

int main(int argc, char** argv) {
    CLI::App app{"tensoracle: test kit for deep-learning compilers and AD engines"};
    app.require_subcommand(1);
    app.fallthrough();  // the options below may follow the subcommand
    std::string memory_limit;
    app.add_option("--memory-limit", memory_limit,
                   "Memory budget of the reference: bytes, a size (512M, 8G) or a percentage of physical memory (50%). A tensor "
                   "or node over it is an error naming the node, op, shape and bytes; campaigns label such a case "
                   "reference_skipped. Workers started from here get it too (TENSORACLE_MEMORY_LIMIT). Default: "
                   "$TENSORACLE_MEMORY_LIMIT, else half of physical memory");
    std::string backend_memory_limit;
    app.add_option("--backend-memory-limit", backend_memory_limit,
                   "Memory each process started here (backends, workers, check commands) may allocate (RLIMIT_DATA): a size as "
                   "for --memory-limit, or none. A backend over it fails an allocation and is labelled out of memory, instead "
                   "of the machine's OOM killer ending the campaign. Default: the memory budget (none in AddressSanitizer "
                   "builds, whose shadow memory counts against the limit)");
#ifdef TENSORACLE_WITH_BLAS
    bool blas = false;
    app.add_flag("--blas", blas,
                 "Run the reference's float32/float64 MatMul, Gemm and Conv through OpenBLAS (ops/fast_paths.hpp): faster on "
                 "large shapes, but summed in another order, so results and generated cases can differ in rounding from a "
                 "run without it, and between CPUs");
#endif

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
    bool list_motifs = false;
    auto* out_option = gen->add_option("--out", out, "Output folder (one folder per case)");
    gen->add_flag("--list-motifs", list_motifs, "Print the built-in motif library as Markdown (docs/MOTIFS.md) and exit");
    gen->add_option("--config", config_file, "Generator configuration, JSON (keys of tensoracle::gen::config)")
        ->check(CLI::ExistingFile);
    gen->add_option("--jobs", jobs, "Worker threads")->capture_default_str()->check(CLI::Range(1u, 256u));
    gen->add_flag("--quiet", quiet, "No progress line");

    auto* camp = app.add_subcommand("campaign", "Run generated cases on real backends against the reference; classify, deduplicate, summarise");
    campaign_args ca;
    camp->add_option("--backend", ca.backends, "Built-in backend: onnxruntime, onnxruntime-noopt, opencv, torch, torchscript, torchscript-nnc, mlir, mlir-O0, reference (repeatable)");
    camp->add_option("--backend-cmd", ca.commands,
                     "A backend command (repeatable): with {model} {inputs} {outputs} it runs once per case; without, it is a "
                     "persistent worker reading case paths on stdin (docs/BACKENDS.md)");
    camp->add_option("--backend-name", ca.command_names, "Name of the matching --backend-cmd (in order)");
    camp->add_option("--count", ca.count, "Number of cases")->capture_default_str();
    camp->add_option("--seed", ca.seed, "Seed of the case stream")->capture_default_str();
    camp->add_option("--first", ca.first, "Index of the first case")->capture_default_str();
    camp->add_option("--out", ca.out, "Campaign folder (an existing one with the same settings resumes)")->required();
    camp->add_option("--config", ca.config_file, "Generator configuration, JSON")->check(CLI::ExistingFile);
    camp->add_option("--known", ca.known, "Confirmed findings whose signatures are labelled known: a folder of finding folders "
                                          "(each with expected.json) or a JSON file {signature: name} or [{signature, name, verdict}] "
                                          "(verdict precision or specification gap: labelled judged; repeatable; the kit's own "
                                          "tests/data/findings* and tests/data/judged/*.json are always read where the source tree is)")
        ->check(CLI::ExistingPath);
    camp->add_option("--time-limit", ca.time_limit, "Stop starting cases after this many seconds (0: none)")->capture_default_str();
    camp->add_option("--timeout", ca.timeout, "Seconds one backend run may take before it counts as a hang")->capture_default_str();
    camp->add_option("--level", ca.level, "GraphNet tolerance level t in [-10, 0] of every comparison")->capture_default_str()->check(CLI::Range(-10.0, 0.0));
    camp->add_option("--jobs", ca.jobs, "Cases in flight at once")->capture_default_str()->check(CLI::Range(1u, 256u));
    camp->add_flag("--process-per-case", ca.process_per_case, "Built-in backends start a process per case instead of a persistent worker");
    camp->add_flag("--no-float64", ca.no_float64, "No float64 re-evaluation of low-precision graphs");
    camp->add_flag("--no-recheck", ca.no_recheck, "Do not run a mismatch again (non-determinism) or a time-out again (a hang is one that repeats)");
    camp->add_flag("--no-localize", ca.no_localize, "Do not mark intermediates as outputs to find the first disagreeing node");
    camp->add_flag("--quiet", ca.quiet, "No progress line");
    camp->add_flag("--no-reduce", ca.no_reduce, "Do not reduce each signature's smallest case into a bundle (reduced/<id>/)");
    camp->add_option("--reduce-calls", ca.reduce_calls, "Backend runs one signature's reduction may take")->capture_default_str();
    camp->add_option("--reduce-time", ca.reduce_time, "Seconds one signature's reduction may take")->capture_default_str();
    camp->add_flag("--probe", ca.probe,
                   "Before the cases, probe each backend with single-op cases per (op, dtype) (cached per backend version) and "
                   "draw only what some backend does not call unsupported; DIR/support.json, the report's support matrix");
    camp->add_flag("--no-probe-cache", ca.no_probe_cache, "Probe again, ignoring the cache");
    camp->add_option("--shard", ca.shard,
                     "Run shard i of N (i/N, from 0) into --out/shard-i-of-N; default from SLURM_ARRAY_TASK_ID/COUNT or "
                     "JOB_COMPLETION_INDEX with TENSORACLE_SHARD_COUNT; merge with tensoracle report");
    camp->add_option("--mutants", ca.mutants, "Mutants per case for the metamorphic oracle: each backend on a mutant vs itself on the original")
        ->capture_default_str();
    camp->add_option("--mutation-steps", ca.mutation_steps, "Mutations per mutant: 1..K, drawn per mutant")->capture_default_str();
    camp->add_option("--mutation-family", ca.mutation_families, "Only these mutation families: resolution, recover, rewrite, emi (repeatable)");
    camp->add_option("--mutation", ca.mutation_names, "Only these mutations, by name (repeatable; tensoracle mutate --list-markdown)");
    camp->add_option("--guide", ca.guide,
                     "rewrites: keep a corpus of cases that fired rewrite kinds, outcomes or signatures not seen before and derive "
                     "later cases from it (mutants, regrown motifs); none: every case afresh. Default: rewrites when a built-in "
                     "backend reports rewrites (onnxruntime, torchscript), else none")
        ->check(CLI::IsMember({"rewrites", "none"}));
    camp->add_option("--guide-round", ca.guide_round, "Cases per round of a guided campaign (its corpus changes between rounds)")
        ->capture_default_str()
        ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));

    auto* red = app.add_subcommand("reduce", "Reduce a failing model or case to a small reproducer bundle, against a backend or any check command");
    campaign_args ra;
    reduce_args rr;
    red->add_option("model_or_case", rr.input, "model.onnx, or a case folder (model.onnx, test_data_set_0/)")->required()->check(CLI::ExistingPath);
    red->add_option("--out", rr.out, "Bundle folder (new, empty, or an earlier bundle)")->required();
    red->add_option("--backend", ra.backends, "Built-in backend (one, or two configurations of one system)");
    red->add_option("--backend-cmd", ra.commands, "A backend command, as for campaign");
    red->add_option("--backend-name", ra.command_names, "Name of the matching --backend-cmd");
    red->add_option("--signature", rr.signature, "Keep this signature id (default: the original's first)");
    red->add_option("--check", rr.check, "Instead of a backend: a command that exits non-zero while the failure is there; {model}, {inputs}, {dir}");
    red->add_option("--fail-code", rr.fail_code, "With --check: only this exit code is the failure (a signal N reads as 128+N)")
        ->check(CLI::Range(1, 255));
    red->add_option("--fail-regex", rr.fail_regex, "With --check: only a failure whose stdout or stderr matches this is the failure");
    red->add_option("--timeout", ra.timeout, "Seconds one check or backend run may take (past it: a hang, not the failure)")->capture_default_str();
    red->add_option("--level", ra.level, "GraphNet tolerance level of the comparisons")->capture_default_str()->check(CLI::Range(-10.0, 0.0));
    red->add_option("--max-calls", rr.options.max_calls, "Check runs the reduction may take")->capture_default_str();
    red->add_option("--time-limit", rr.options.time_limit_seconds, "Seconds the reduction may take")->capture_default_str();
    red->add_option("--repeats", rr.options.repeats, "Runs per candidate (default: 1, more when the original is flaky)");
    red->add_option("--seed", rr.seed, "Seed of random inputs when the case has none")->capture_default_str();
    red->add_flag("--no-shapes", rr.no_shapes, "Do not shrink shapes");
    red->add_flag("--no-values", rr.no_values, "Do not simplify values");
    red->add_flag("--no-attributes", rr.no_attributes, "Do not reset attributes to defaults");
    red->add_flag("--process-per-case", ra.process_per_case, "Built-in backends start a process per run");
    red->add_flag("--no-float64", ra.no_float64, "No float64 re-evaluation of low-precision graphs");
    red->add_flag("--no-recheck", ra.no_recheck, "Do not run a mismatch again (non-determinism) or a time-out again (a hang is one that repeats)");
    red->add_flag("--no-localize", ra.no_localize, "Do not localize the first disagreeing node");
    red->add_flag("--quiet", ra.quiet, "No progress line");

    auto* nodes_cmd = app.add_subcommand("node-tests", "Run the ONNX backend node tests through backends and the reference; tables and disagreements");
    campaign_args na;
    std::string node_data = TENSORACLE_ONNX_NODE_TESTS_DIR, node_json, node_filter;
    nodes_cmd->add_option("--backend", na.backends, "Built-in backend (repeatable)");
    nodes_cmd->add_option("--backend-cmd", na.commands, "A backend command (repeatable), as for campaign");
    nodes_cmd->add_option("--backend-name", na.command_names, "Name of the matching --backend-cmd");
    nodes_cmd->add_option("--data", node_data, "Folder of node tests")->capture_default_str()->check(CLI::ExistingDirectory);
    nodes_cmd->add_option("--json", node_json, "Write every test's outcome here");
    nodes_cmd->add_option("--filter", node_filter, "Regular expression on test names");
    nodes_cmd->add_option("--timeout", na.timeout, "Seconds per test run")->capture_default_str();
    nodes_cmd->add_flag("--process-per-case", na.process_per_case, "Built-in backends start a process per test");
    nodes_cmd->add_flag("--quiet", na.quiet, "No progress line");

    auto* mut = app.add_subcommand("mutate", "Write semantics-preserving mutants of a case (docs/MUTATIONS.md), each a case of its own");
    mutate_args ma;
    mut->add_option("case", ma.input, "A case folder (model.onnx, test_data_set_0/) or a model.onnx (random inputs from --seed)")
        ->check(CLI::ExistingPath);
    mut->add_option("--out", ma.out, "Output folder: one folder per mutant");
    mut->add_option("--count", ma.count, "Number of distinct mutants")->capture_default_str();
    mut->add_option("--seed", ma.seed, "Seed of the mutants (and of random inputs when the case has none)")->capture_default_str();
    mut->add_option("--max-steps", ma.max_steps, "Mutations per mutant: 1..K, drawn per mutant (composition)")->capture_default_str();
    mut->add_option("--only", ma.families, "Only these families: resolution, recover, rewrite, emi (repeatable)");
    mut->add_option("--mutation", ma.mutations, "Only these mutations, by name (repeatable; --list-markdown lists them)");
    mut->add_flag("--list-markdown", ma.list_markdown, "Print every mutation as Markdown (docs/MUTATIONS.md) and exit");
    mut->add_flag("--quiet", ma.quiet, "No progress line");

    auto* rep = app.add_subcommand("report", "Write report.html of a campaign folder, or merge campaign (shard) folders into one with --out");
    std::vector<std::string> report_dirs;
    std::string report_out;
    rep->add_option("dirs", report_dirs, "Campaign folders")->required()->check(CLI::ExistingDirectory);
    rep->add_option("--out", report_out, "Merge the folders into this new folder (signatures combined, report.html written)");

    auto* ref = app.add_subcommand("run-reference", "The reference interpreter as an executable backend (exit 0 ran, 3 did not load, 1 failed)");
    std::string ref_model, ref_inputs, ref_outputs;
    planted_bugs bugs;
    ref->add_option("model", ref_model, "model.onnx")->required();
    ref->add_option("inputs", ref_inputs, "Folder of input_<k>.pb")->required();
    ref->add_option("outputs", ref_outputs, "Folder to write output_<k>.pb into")->required();
    ref->add_option("--plant-wrong", bugs.wrong, "For testing campaigns: scale this op's outputs by 1.25");
    ref->add_option("--plant-crash", bugs.crash, "For testing campaigns: abort() at this op");
    ref->add_option("--plant-hang", bugs.hang, "For testing campaigns: never return at this op");
    ref->add_option("--plant-nondeterministic", bugs.nondeterministic, "For testing campaigns: a different small error at this op on every run");
    ref->add_option("--plant-wrong-pair", bugs.wrong_pair, "For testing reduction: A,B scales B's outputs by 1.25 where B reads an output of A");
    ref->add_flag("--plant-bn-fold", bugs.bn_fold, "For testing the metamorphic oracle: BatchNormalization after a Conv loses its mean");

    auto* cv_cmd = app.add_subcommand("run-opencv", "OpenCV DNN as an executable backend (exit 0 ran, 3 unsupported or did not load, 1 failed)");
    std::string cv_model, cv_inputs, cv_outputs;
    cv_cmd->add_option("model", cv_model, "model.onnx")->required();
    cv_cmd->add_option("inputs", cv_inputs, "Folder of input_<k>.pb")->required();
    cv_cmd->add_option("outputs", cv_outputs, "Folder to write output_<k>.pb into")->required();

    CLI11_PARSE(app, argc, argv);
    if (!memory_limit.empty()) {
        try {
            to::set_memory_limit(to::parse_memory_size(memory_limit, "--memory-limit"));
        } catch (const to::error& e) {
            std::fprintf(stderr, "%s\n", e.what());
            return 2;
        }
        ::setenv("TENSORACLE_MEMORY_LIMIT", memory_limit.c_str(), 1);  // for the workers this process starts
    }
    try {
        if (backend_memory_limit == "none") {
            to::campaign::set_backend_memory_limit(0);
        } else if (!backend_memory_limit.empty()) {
            to::campaign::set_backend_memory_limit(to::parse_memory_size(backend_memory_limit, "--backend-memory-limit"));
        } else if (!built_with_address_sanitizer && to::memory_limit() != std::numeric_limits<std::uint64_t>::max()) {
            to::campaign::set_backend_memory_limit(to::memory_limit());
        }
    } catch (const to::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
#ifdef TENSORACLE_WITH_BLAS
    if (blas) tensoracle::use_blas_fast_paths();
#endif
    try {
        if (gen->parsed()) {
            if (list_motifs) {
                std::fputs(to::gen::motifs_markdown().c_str(), stdout);
                return 0;
            }
            if (out_option->count() == 0) throw to::error("tensoracle gen", "--out is required: the folder the cases are written to");
            return run_gen(count, seed, first, nodes, out, config_file, jobs, quiet);
        }
        if (camp->parsed()) return run_campaign_command(ca);
        if (red->parsed()) {
            // Shell-quoted, so the line in the bundle pastes back into a shell.
            std::string line;
            for (int i = 0; i < argc; ++i) {
                std::string w = argv[i];
                const bool plain = !w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == std::string::npos;
                if (!plain) {
                    std::string q = "'";
                    for (const char ch : w) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
                    w = q + "'";
                }
                line += (i ? " " : "") + w;
            }
            return run_reduce(ra, rr, line);
        }
        if (nodes_cmd->parsed()) return run_node_tests(na, node_data, node_json, node_filter);
        if (mut->parsed()) return run_mutate(ma);
        if (rep->parsed()) {
            if (report_out.empty()) {
                if (report_dirs.size() != 1) throw to::error("tensoracle report", "give --out to merge several folders");
                std::printf("report: %s\n", to::campaign::write_report(report_dirs[0]).string().c_str());
                return 0;
            }
            std::vector<fs::path> dirs(report_dirs.begin(), report_dirs.end());
            const auto s = to::campaign::merge_campaigns(dirs, report_out);
            std::fputs(to::campaign::campaign_runner::summary_text(s).c_str(), stdout);
            std::printf("\nmerged %zu folders into %s/ (report.html, summary.json, results.jsonl, cases/, reduced/)\n", dirs.size(), report_out.c_str());
            return 0;
        }
        if (ref->parsed()) return run_reference(ref_model, ref_inputs, ref_outputs, bugs);
        if (cv_cmd->parsed()) {
#ifdef TENSORACLE_WITH_OPENCV
            std::string err;
            const int code = to::campaign::serve_case({cv_model, cv_inputs, cv_outputs, 0}, to::backends::opencv_preparer(), err);
            if (!err.empty()) std::fputs(err.c_str(), stderr);
            return code;
#else
            std::fputs("unsupported: this tensoracle was built without OpenCV\n", stderr);
            return 3;
#endif
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tensoracle: %s\n", e.what());
        return 2;
    }
    return 0;
}
