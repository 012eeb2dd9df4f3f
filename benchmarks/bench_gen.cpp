// Generation benchmark (issue: valid graph generation). Prints, side by side
// from one run on one core:
//   speed     median ms per valid graph (generation + solving), 10/20/50 nodes,
//             where the 10-node median band's time goes (generation_times),
//             and with the Z3 backend (when built with Z3)
//   binning   unique op instances (op, input types and shapes, attributes)
//             per N graphs with and without attribute binning
//   search    input search vs the sampling baseline on graphs that each hold
//             a vulnerable op: success rate, median, p90 and mean ms per graph
//             (--show-failures, --show-slowest N: which graphs fail, which take longest)
//   validity  graphs that pass our validation, onnx::checker, ONNX's strict
//             shape inference (agreeing with ours on every value it infers)
//             and run on the interpreter with finite outputs
//   mutate    chains of 1-5 mutations on generated graphs (default config):
//             every step valid for us and for ONNX, the mutant agreeing with
//             its original at its class's level; each family's applicability
//             (share of graphs where it has a site) and ms per mutant
// Usage: tensoracle_bench_gen [--graphs N] [--search-graphs N] [--validity N] [--validity-first I] [--seed S]
// The validity cases are I ... I+N-1 of one stream, so a long run shards over
// processes (--validity-first 0 --validity 5000, --validity-first 5000 ...).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <tensoracle/gen/generator.hpp>
#include <tensoracle/gen/input_search.hpp>
#include <tensoracle/graph/interpreter.hpp>
#ifdef TENSORACLE_BENCH_WITH_Z3
#include <tensoracle/gen/z3_backend.hpp>
#endif
#ifdef TENSORACLE_BENCH_WITH_ONNX
#include <tensoracle/io/case_files.hpp>
#include <tensoracle/io/onnx.hpp>
#include <tensoracle/mutate/mutant_files.hpp>
#endif

namespace to = tensoracle;
using clock_type = std::chrono::steady_clock;

namespace {

double ms_since(clock_type::time_point t) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

struct speed_figures {
    double median_ms = 0, p90_ms = 0, mean_ms = 0;
    std::size_t graphs = 0, short_graphs = 0, redrawn = 0;
    std::vector<std::size_t> median_band;  ///< graphs whose time lies between the 40th and 60th percentile
};

speed_figures time_generation(const to::gen::generator& gen, std::uint64_t seed, std::size_t graphs) {
    std::vector<double> t;
    to::gen::generation_stats stats;
    double total = 0;
    for (std::size_t i = 0; i < graphs; ++i) {
        auto g = to::gen::case_rng(seed, i, gen.settings().hash());
        const auto start = clock_type::now();
        const auto s = gen.generate(g, stats);
        const double ms = ms_since(start);
        t.push_back(ms);
        total += ms;
        if (s.model.nodes.empty()) std::abort();
    }
    std::vector<std::size_t> order(graphs);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return t[a] < t[b]; });
    std::vector<std::size_t> band(order.begin() + static_cast<std::ptrdiff_t>(graphs * 4 / 10),
                                  order.begin() + static_cast<std::ptrdiff_t>(graphs * 6 / 10));
    return {median(t), percentile(t, 0.9), total / static_cast<double>(graphs), graphs, stats.short_graphs, stats.redrawn,
            std::move(band)};
}

/// Where the time of the median band's graphs goes: they are generated again
/// with the generator's timers on (generation_times), so the shares are of a
/// timed run, not of the figures above.
void print_time_breakdown(const to::gen::generator& gen, std::uint64_t seed, const std::vector<std::size_t>& band) {
    if (band.empty()) return;
    to::gen::generation_stats stats;
    stats.times.enabled = true;
    for (const std::size_t i : band) {
        auto g = to::gen::case_rng(seed, i, gen.settings().hash());
        (void)gen.generate(g, stats);
    }
    const auto& t = stats.times;
    const double n = static_cast<double>(band.size());
    const auto us = [&](double ms) { return 1000.0 * ms / n; };  // per graph
    const auto share = [&](double ms) { return t.total_ms > 0 ? 100.0 * ms / t.total_ms : 0.0; };
    const double rest = t.total_ms - t.kept_ms - t.dropped_ms - t.refused_ms - t.reachability_ms - t.finish_ms;
    std::printf("  where the median band's time goes (%zu graphs between the 40th and 60th percentile, again with timers; "
                "us per graph, share):\n",
                band.size());
    std::printf("    instances kept as nodes    %6.1f us %5.1f%%  (%.1f per graph, %.1f us each)\n", us(t.kept_ms),
                share(t.kept_ms), static_cast<double>(t.kept) / n, t.kept > 0 ? 1000.0 * t.kept_ms / static_cast<double>(t.kept) : 0.0);
    std::printf("    instances refused          %6.1f us %5.1f%%  (%.1f per graph)\n", us(t.refused_ms), share(t.refused_ms),
                static_cast<double>(t.refused) / n);
    std::vector<std::pair<double, std::string>> reasons;
    for (const auto& [why, r] : t.refused_by_reason) reasons.emplace_back(r.second, why);
    std::sort(reasons.rbegin(), reasons.rend());
    for (std::size_t k = 0; k < reasons.size() && k < 5; ++k) {
        std::string why = reasons[k].second;
        if (why.size() > 60) why = why.substr(0, 57) + "...";
        std::printf("      %6.1f us %5.1f%%  %s\n", us(reasons[k].first), share(reasons[k].first), why.c_str());
    }
    std::printf("    instances dropped after    %6.1f us %5.1f%%  (a domain out of reach)\n", us(t.dropped_ms), share(t.dropped_ms));
    std::printf("    reachability check         %6.1f us %5.1f%%\n", us(t.reachability_ms), share(t.reachability_ms));
    std::printf("    building the model         %6.1f us %5.1f%%\n", us(t.finish_ms), share(t.finish_ms));
    std::printf("    the rest (type matching, value facts, adding nodes) %.1f us %.1f%%; total %.1f us\n", us(rest), share(rest),
                us(t.total_ms));
}

/// Unique (op, input dtypes and shapes, attributes) over `graphs` graphs.
std::size_t unique_instances(const to::gen::generator& gen, std::uint64_t seed, std::size_t graphs) {
    std::set<std::string> seen;
    to::gen::generation_stats stats;
    for (std::size_t i = 0; i < graphs; ++i) {
        auto g = to::gen::case_rng(seed, i, gen.settings().hash());
        const auto s = gen.generate(g, stats);
        std::map<std::string, std::pair<to::dtype, to::shape_type>> types;
        for (const auto& in : s.model.inputs) types[in.name] = {in.type, *in.shape};
        for (const auto& [k, t] : s.model.initializers) types[k] = {t.element_dtype(), t.shape()};
        // Intermediate shapes from a run on zeros would cost more than generation;
        // node output types come from the spec's inference instead.
        for (const auto& n : s.model.nodes) {
            seen.insert(to::gen::instance_key(n, [&](const std::string& v) { return types.at(v); }));
            std::vector<to::tensor> tmp;
            std::vector<const to::tensor*> ptrs;
            tmp.reserve(n.inputs.size());
            for (const auto& in : n.inputs) {
                if (in.empty()) {
                    ptrs.push_back(nullptr);
                    continue;
                }
                const auto& [d, shape] = types.at(in);
                const auto init = s.model.initializers.find(in);
                tmp.push_back(init != s.model.initializers.end() ? init->second : to::tensor::zeros(d, shape));
                ptrs.push_back(&tmp.back());
            }
            const auto& op = to::ops::get_op(n.op_type);
            const auto inferred = to::spec::infer(op, ptrs, to::graph::call_attributes(op, n));
            for (std::size_t o = 0; o < n.outputs.size() && o < inferred.shapes.size(); ++o) {
                if (!n.outputs[o].empty()) types[n.outputs[o]] = {inferred.dtypes[o], inferred.shapes[o]};
            }
        }
    }
    return seen.size();
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"tensoracle generation benchmark"};
    std::size_t graphs = 1000, search_graphs = 512, validity = 1000, validity_first = 0;
    std::uint64_t seed = 1;
    app.add_option("--graphs", graphs, "Graphs per speed and binning figure")->capture_default_str();
    app.add_option("--search-graphs", search_graphs, "Vulnerable graphs for the input search figure")
        ->capture_default_str();
    app.add_option("--validity", validity, "Graphs for the validity figure (0: skip)")->capture_default_str();
    app.add_option("--validity-first", validity_first, "First case of the validity figure (sharding)")
        ->capture_default_str();
    app.add_option("--seed", seed, "Seed")->capture_default_str();
    bool show_failures = false;
    std::size_t search_iterations = to::gen::search_options{}.iterations;
    double search_work = to::gen::search_options{}.work_budget;
    app.add_option("--search-iterations", search_iterations, "Graph evaluations the input search may spend per graph");
    app.add_option("--search-work", search_work, "Work units the input search may spend per graph");
    app.add_flag("--show-failures", show_failures, "List every graph the gradient search fails on, with its last failure");
    std::size_t show_slowest = 0;
    app.add_option("--show-slowest", show_slowest, "List the N graphs the gradient search spends longest on");
    std::size_t z3_graphs = 100;
    app.add_option("--z3-graphs", z3_graphs, "Graphs for each Z3-backend figure (speed, binning)")
        ->capture_default_str();
    std::vector<std::string> sections{"speed", "binning", "search", "validity", "mutate"};
    std::size_t mutate_graphs = 200, chains_per_graph = 5;
    app.add_option("--mutate-graphs", mutate_graphs, "Generated graphs for the mutation figure")->capture_default_str();
    app.add_option("--chains-per-graph", chains_per_graph, "Mutation chains (of 1-5 steps) per graph")->capture_default_str();
    app.add_option("--sections", sections, "Which figures to measure")
        ->delimiter(',')
        ->check(CLI::IsMember({"speed", "binning", "search", "validity", "mutate"}))
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    const auto want = [&](const char* name) {
        return std::find(sections.begin(), sections.end(), name) != sections.end();
    };
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // sections appear as they finish, also through a pipe

    if (want("speed")) {
        std::printf("== speed: median ms per valid graph (generation + solving), one core, %zu graphs each ==\n",
                    graphs);
        for (const std::size_t nodes : {10u, 20u, 50u}) {
            to::gen::config cfg;
            cfg.max_nodes = nodes;
            const to::gen::generator gen(cfg);
            const auto f = time_generation(gen, seed, nodes == 50 ? std::max<std::size_t>(graphs / 4, 1) : graphs);
            std::printf(
                "  %2zu nodes: median %.3f ms, p90 %.3f ms, mean %.3f ms (%zu graphs; %zu grown again for a domain out "
                "of reach, their time included; %zu grown short of %zu nodes)\n",
                nodes, f.median_ms, f.p90_ms, f.mean_ms, f.graphs, f.redrawn, f.short_graphs, nodes);
            if (nodes == 10) print_time_breakdown(gen, seed, f.median_band);
        }
#ifdef TENSORACLE_BENCH_WITH_Z3
        if (z3_graphs > 0) {
            to::gen::config cfg;
            to::gen::generator gen(cfg);
            const auto ours = time_generation(gen, seed, z3_graphs);
            gen.set_hooks({.solver = to::gen::z3_solver(), .observe = {}});
            const auto z3 = time_generation(gen, seed, z3_graphs);
            std::printf(
                "  10 nodes, Z3 backend: median %.3f ms, mean %.3f ms vs ours median %.3f ms, mean %.3f ms (%zu "
                "graphs): %.1fx\n",
                z3.median_ms, z3.mean_ms, ours.median_ms, ours.mean_ms, z3.graphs,
                z3.median_ms / std::max(ours.median_ms, 1e-9));
        }
#else
        std::printf("  (built without Z3: no Z3-backend figure)\n");
#endif
    }

    if (want("binning")) {
        std::printf("== binning: unique op instances per %zu graphs of 10 nodes ==\n", graphs);
        // With vs without binning, same seeds; `solver` empty means ours.
        const auto compare = [&](const char* label, std::size_t n, const to::gen::instance_hooks& hooks) {
            to::gen::config with, without;
            without.binning = false;
            to::gen::generator a_gen(with), b_gen(without);
            a_gen.set_hooks(hooks);
            b_gen.set_hooks(hooks);
            const auto a = unique_instances(a_gen, seed, n);
            const auto b = unique_instances(b_gen, seed, n);
            std::printf("  %s (%zu graphs): with binning %zu, without %zu: %.2fx (NNSmith reported 2.07x)\n", label, n,
                        a, b, static_cast<double>(a) / static_cast<double>(std::max<std::size_t>(b, 1)));
        };
        compare("our solver (randomized)", graphs, {});
#ifdef TENSORACLE_BENCH_WITH_Z3
        // NNSmith's setting: an SMT solver returns the same corner of the
        // solution space each time unless binning pushes it elsewhere.
        if (z3_graphs > 0) compare("Z3 backend", z3_graphs, {.solver = to::gen::z3_solver(), .observe = {}});
#endif
    }

    if (want("search")) {
        std::printf("== input search: %zu graphs of 10 nodes, each with a vulnerable op ==\n", search_graphs);
        to::gen::config cfg;
        const to::gen::generator gen(cfg);
        std::set<std::string> vulnerable;
        for (const auto& p : gen.ops()) {
            if (p.vulnerable) vulnerable.insert(std::string(p.op->op_type));
        }
        to::gen::generation_stats stats;
        std::vector<to::gen::graph_sketch> sketches;
        for (std::uint64_t i = 0; sketches.size() < search_graphs; ++i) {
            auto g = to::gen::case_rng(seed + 1000, i, cfg.hash());
            auto s = gen.generate(g, stats);
            if (std::any_of(s.op_types.begin(), s.op_types.end(),
                            [&](const std::string& o) { return vulnerable.count(o) != 0; })) {
                sketches.push_back(std::move(s));
            }
        }
        // The kit's default start, NNSmith's protocol (the gradient search starts
        // from the sampling baseline's draw), and the sampling baseline itself.
        enum class method { gradient, gradient_from_baseline, sampling };
        for (const method how : {method::gradient, method::gradient_from_baseline, method::sampling}) {
            const bool sampling = how == method::sampling;
            std::vector<double> t, per_evaluation;
            std::size_t ok = 0, evaluations = 0;
            std::map<std::string, std::size_t> failures;  // op of the node still failing at the end
            std::vector<std::tuple<double, std::size_t, std::size_t, double, bool>> slow;  // ms, graph, evaluations, work, success
            for (std::size_t i = 0; i < sketches.size(); ++i) {
                to::rng g(seed * 7919 + i);
                to::gen::search_options so;
                so.sampling = sampling;
                so.start_from_baseline = how == method::gradient_from_baseline;
                so.iterations = search_iterations;
                so.work_budget = search_work;
                const auto start = clock_type::now();
                const auto r = to::gen::search_inputs(sketches[i], g, so);
                t.push_back(ms_since(start));
                per_evaluation.push_back(t.back() / static_cast<double>(std::max<std::size_t>(r.evaluations, 1)));
                ok += r.success ? 1 : 0;
                evaluations += r.evaluations;
                if (!r.success) ++failures[r.failing_op];
                slow.emplace_back(t.back(), i, r.evaluations, r.work, r.success);
                if (!r.success && show_failures && how == method::gradient) {
                    // Why it stopped tells a budget too small from a graph no start reaches.
                    std::printf("    graph %zu failed after %zu evaluations, %zu restarts, %.3g work units%s: %s\n     ops:", i,
                                r.evaluations, r.restarts, r.work, r.out_of_work ? " (work budget spent)" : "",
                                r.last_failure.c_str());
                    for (const auto& o : sketches[i].op_types) std::printf(" %s", o.c_str());
                    std::printf("\n");
#ifdef TENSORACLE_BENCH_WITH_ONNX
                    std::printf("%s", to::io::model_text(sketches[i].model).c_str());
#endif
                }
            }
            // The mean is NNSmith's figure (3.5 ms for 98%): failures spend the whole budget, so it grows with it.
            double total_ms = 0.0;
            for (const double x : t) total_ms += x;
            std::printf("  %-30s success %5.1f%% (%zu/%zu), median %.3f ms, p90 %.3f ms, mean %.3f ms, %.1f evaluations/graph, "
                        "median %.3f ms/evaluation\n",
                        how == method::sampling ? "sampling baseline [1, 9]:"
                        : how == method::gradient ? "gradient search (Adam, proxy):"
                                                  : "gradient, baseline's start:",
                        100.0 * static_cast<double>(ok) / static_cast<double>(sketches.size()), ok, sketches.size(),
                        median(t), percentile(t, 0.9), total_ms / static_cast<double>(std::max<std::size_t>(t.size(), 1)),
                        static_cast<double>(evaluations) / static_cast<double>(sketches.size()), median(per_evaluation));
            if (show_slowest > 0 && how == method::gradient) {
                std::sort(slow.begin(), slow.end(), [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
                for (std::size_t k = 0; k < std::min(show_slowest, slow.size()); ++k) {
                    const auto& [ms, i, evals, work, success] = slow[k];
                    std::printf("    slow: graph %zu %.1f ms, %zu evaluations, %.3g work units, %s; ops:", i, ms, evals, work,
                                success ? "success" : "failure");
                    for (const auto& o : sketches[i].op_types) std::printf(" %s", o.c_str());
                    std::printf("\n");
#ifdef TENSORACLE_BENCH_WITH_ONNX
                    if (k < 3) std::printf("%s", to::io::model_text(sketches[i].model).c_str());
#endif
                }
            }
            if (!failures.empty()) {
                std::printf("    still failing at the end, by node:");
                for (const auto& [what, count] : failures) std::printf(" %s %zu", what.c_str(), count);
                std::printf("\n");
            }
        }
    }

#ifdef TENSORACLE_BENCH_WITH_ONNX
    if (validity > 0 && want("validity")) {
        std::printf("== validity: %zu graphs of 10 nodes (cases %zu..%zu), default config (vulnerable ops on) ==\n",
                    validity, validity_first, validity_first + validity - 1);
        to::gen::config cfg;
        const to::gen::generator gen(cfg);
        to::gen::generation_stats stats;
        std::size_t ours = 0, checker = 0, shapes = 0, ran = 0, finite = 0, regrown_cases = 0;
        std::map<std::string, std::size_t> problems;
        std::map<std::string, std::uint64_t> first_case;  // a problem's first case index, to reproduce it
        auto problem = [&](const std::string& what, std::uint64_t i) {
            if (problems[what]++ == 0) first_case[what] = i;
        };
        for (std::uint64_t i = validity_first; i < validity_first + validity; ++i) {
            // Progress on stderr (a 10,000-graph run takes about half an hour).
            if ((i - validity_first) % 100 == 0) {
                std::fprintf(stderr, "\r  %llu/%zu graphs", static_cast<unsigned long long>(i - validity_first), validity);
            }
            // The case as `tensoracle gen` makes it: a graph whose input search fails is grown again.
            to::io::generated_case c;
            try {
                c = to::io::make_case(gen, seed + 2000, i, stats);
            } catch (const std::exception& e) {
                problem(std::string("make_case: ") + e.what(), i);
                continue;
            }
            regrown_cases += c.graphs_grown > 1 ? 1 : 0;
            try {
                c.model.validate();
                ++ours;
            } catch (const std::exception& e) {
                problem(std::string("validate: ") + e.what(), i);
                continue;
            }
            try {
                to::io::check_model(to::io::to_model_proto(c.model));
                ++checker;
            } catch (const std::exception& e) {
                problem(std::string("checker: ") + e.what(), i);
                continue;
            }
            std::map<std::string, to::graph::value_info> inferred;
            try {
                inferred = to::io::onnx_shape_inference(c.model);
            } catch (const std::exception& e) {
                problem(std::string("shape inference: ") + e.what(), i);
                continue;
            }
            // Run again from the stored data: what a reader of the case files gets.
            to::graph::run_result run;
            try {
                run = to::graph::run(c.model, c.inputs, {.record_intermediates = true});
                ++ran;
            } catch (const std::exception& e) {
                problem(std::string("run: ") + e.what(), i);
                continue;
            }
            const auto& model = c.model;
            bool agree = true;
            for (const auto& [name, t] : run.values) {
                const auto it = inferred.find(name);
                if (it == inferred.end() || !it->second.shape) continue;
                if (it->second.type != t.element_dtype() || *it->second.shape != t.shape()) {
                    agree = false;
                    problem("shape inference disagrees on " + name, i);
                }
            }
            shapes += agree ? 1 : 0;
            bool all_finite = true;
            for (const auto& o : model.outputs) {
                const auto& t = run.values.at(o.name);
                if (!to::info(t.element_dtype()).is_floating) continue;
                const auto d = t.to<double>();
                all_finite = all_finite && std::all_of(d.begin(), d.end(), [](double x) { return std::isfinite(x); });
            }
            finite += all_finite ? 1 : 0;
        }
        std::fprintf(stderr, "\r%40s\r", "");  // clears the progress line
        std::printf(
            "  our validation %zu, onnx checker %zu, strict shape inference agrees %zu, runs %zu, finite outputs %zu "
            "(of %zu)\n",
            ours, checker, shapes, ran, finite, validity);
        std::size_t avoided = 0, refused_axes = 0;  // reasons read "<op>: ONNX 1.12 would infer another shape", ...
        for (const auto& [why, n] : stats.rejected.by_reason) {
            if (why.find("ONNX 1.12 would infer another shape") != std::string::npos) avoided += n;
            if (why.find("ONNX 1.12's data propagation would refuse the axis") != std::string::npos) refused_axes += n;
        }
        std::printf("  cases whose first graph's input search failed, grown again: %zu; instances rejected because "
                    "ONNX 1.12 infers their shape wrongly: %zu, because its data propagation would refuse their axis: %zu\n",
                    regrown_cases, avoided, refused_axes);
        for (const auto& [what, n] : problems) {
            std::printf("    %zu x (first: case %llu of seed %llu) %s\n", n, static_cast<unsigned long long>(first_case[what]),
                        static_cast<unsigned long long>(seed + 2000), what.substr(0, 300).c_str());
        }
    }
    if (mutate_graphs > 0 && want("mutate")) {
        std::printf("== mutate: %zu chains of 1-5 mutations on %zu generated graphs of 10 nodes (default config) ==\n",
                    mutate_graphs * chains_per_graph, mutate_graphs);
        const to::gen::generator gen(to::gen::config{});
        to::gen::generation_stats gs;
        to::mutate::mutate_stats stats;
        std::size_t chains = 0, none = 0, steps = 0, valid_steps = 0, agree = 0, exact = 0;
        std::map<std::string, std::size_t> family_graphs, mutation_graphs;
        std::map<std::string, std::uint64_t> first_problem;
        std::vector<double> ms;
        for (std::uint64_t i = 0; i < mutate_graphs; ++i) {
            if (i % 10 == 0) std::fprintf(stderr, "\r  %llu/%zu graphs", static_cast<unsigned long long>(i), mutate_graphs);
            const auto c = to::io::make_case(gen, seed + 3000, i, gs);
            std::set<std::string> fams;
            for (const auto& [name, n] : to::mutate::applicability(c.model, c.inputs)) {
                if (n == 0) continue;
                ++mutation_graphs[name];
                fams.insert(std::string(to::mutate::to_string(to::mutate::find_mutation(name).family)));
            }
            for (const auto& f : fams) ++family_graphs[f];
            for (std::uint64_t k = 0; k < chains_per_graph; ++k) {
                to::mutate::mutate_options o;
                o.steps = 1 + (i * chains_per_graph + k) % 5;
                o.after_step = [&](const to::mutate::context& ctx) {
                    ++steps;
                    const auto p = to::mutate::onnx_problem(ctx.graph(), ctx.values());
                    if (p.empty()) {
                        ++valid_steps;
                    } else if (!first_problem.count(p)) {
                        first_problem[p] = i;
                    }
                };
                const auto t0 = clock_type::now();
                const auto m = to::mutate::mutate_graph(c.model, c.inputs, i * 1000 + k, o, &stats);
                ms.push_back(ms_since(t0));
                if (!m) {
                    ++none;
                    continue;
                }
                ++chains;
                exact += m->numeric == to::mutate::numeric_class::exact ? 1 : 0;
                const auto v = to::mutate::check(*m, c.outputs);
                if (v.agrees) {
                    ++agree;
                } else if (!first_problem.count(m->chain_text() + ": " + v.detail.substr(0, 200))) {
                    first_problem[m->chain_text() + ": " + v.detail.substr(0, 200)] = i;
                }
            }
        }
        std::fprintf(stderr, "\r%40s\r", "");
        std::size_t invalid = 0;
        for (const auto& [k, v] : stats.invalid) invalid += v;
        std::printf("  chains %zu (+%zu found no place), steps %zu: valid for us and ONNX %zu, rewrites refused as invalid %zu; "
                    "mutants agreeing with their original %zu of %zu (%zu exact); median %.2f ms per chain (one core)\n",
                    chains, none, steps, valid_steps, invalid, agree, chains, exact, median(ms));
        std::printf("  applicability (share of graphs with a site):");
        for (const auto f : to::mutate::all_families) {
            const std::string name(to::mutate::to_string(f));
            std::printf(" %s %.1f%%", name.c_str(), 100.0 * static_cast<double>(family_graphs[name]) / static_cast<double>(mutate_graphs));
        }
        std::printf("\n  per mutation (graphs with a site / applied / refused as ill-conditioned):\n");
        for (const auto& m : to::mutate::registry()) {
            const std::string n(m.name);
            std::printf("    %-30s %5.1f%% %6zu %6zu\n", n.c_str(), 100.0 * static_cast<double>(mutation_graphs[n]) / static_cast<double>(mutate_graphs),
                        stats.applied[n], stats.ill_conditioned[n]);
        }
        for (const auto& [what, i] : first_problem) std::printf("    problem (first: graph %llu): %s\n", static_cast<unsigned long long>(i), what.c_str());
        for (const auto& msg : stats.invalid_messages) std::printf("    invalid: %s\n", msg.substr(0, 300).c_str());
    }
#endif
    return 0;
}
