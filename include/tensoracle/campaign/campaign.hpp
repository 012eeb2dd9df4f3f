// tensoracle: a differential campaign. Generated cases run on real backends in
// processes of their own, are compared with the kit's reference interpreter
// (and with a float64 re-evaluation for low-precision graphs) and with each
// other, classified, deduplicated by signature and summarised.
//
//   campaign_options o;  o.out = "camp"; o.count = 500;
//   std::vector<std::unique_ptr<backend>> b;  b.push_back(std::make_unique<command_backend>(...));
//   const auto s = run_campaign(o, std::move(b));   // camp/summary.json, summary.txt, cases/, results.jsonl
//
// Every case's result is appended (and flushed) to results.jsonl as soon as it is
// judged, so a campaign that is interrupted keeps its results and resumes: cases
// already in the journal are not run again, and the summary is rebuilt from it.
// Needs ONNX (libonnx, protobuf) and nlohmann/json, like io/case_files.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tensoracle/accuracy/compare.hpp"
#include "tensoracle/accuracy/tolerance.hpp"
#include "tensoracle/campaign/backend.hpp"
#include "tensoracle/campaign/corpus.hpp"
#include "tensoracle/campaign/rewrites.hpp"
#include "tensoracle/campaign/triage.hpp"
#include "tensoracle/core/hash.hpp"
#include "tensoracle/gen/config_json.hpp"
#include "tensoracle/gen/generator.hpp"
#include "tensoracle/graph/float64.hpp"
#include "tensoracle/graph/interpreter.hpp"
#include "tensoracle/io/case_files.hpp"
#include "tensoracle/mutate/mutant_files.hpp"

namespace tensoracle::campaign {

/// The class of one backend's result on one case (snake_case in every file).
enum class outcome_class {
    pass,
    mismatch,             ///< finite values beyond the tolerance level
    nan_inf,              ///< NaN/Inf at other positions
    shape_dtype,          ///< an output of another shape or element type
    unsupported,          ///< the backend lacks something, by its own evidence
    compile_failure,      ///< did not load/compile (or: unsupported here while another backend runs it)
    runtime_error,
    crash,
    hang,
    nondeterministic,     ///< a mismatch the backend did not repeat on a second run
    bad_output,           ///< exited 0 with outputs that break the protocol
    reference_precision,  ///< disagrees with our same-dtype reference, but is as close to float64 truth
};

inline constexpr outcome_class all_outcomes[] = {
    outcome_class::pass,          outcome_class::mismatch,        outcome_class::nan_inf,
    outcome_class::shape_dtype,   outcome_class::unsupported,     outcome_class::compile_failure,
    outcome_class::runtime_error, outcome_class::crash,           outcome_class::hang,
    outcome_class::nondeterministic, outcome_class::bad_output,   outcome_class::reference_precision,
};

[[nodiscard]] constexpr std::string_view to_string(outcome_class c) noexcept {
    switch (c) {
        case outcome_class::pass: return "pass";
        case outcome_class::mismatch: return "mismatch";
        case outcome_class::nan_inf: return "nan_inf";
        case outcome_class::shape_dtype: return "shape_dtype";
        case outcome_class::unsupported: return "unsupported";
        case outcome_class::compile_failure: return "compile_failure";
        case outcome_class::runtime_error: return "runtime_error";
        case outcome_class::crash: return "crash";
        case outcome_class::hang: return "hang";
        case outcome_class::nondeterministic: return "nondeterministic";
        case outcome_class::bad_output: return "bad_output";
        case outcome_class::reference_precision: return "reference_precision";
    }
    return "unknown";
}

/// Failures get signatures; a pass, an unsupported case or a reference-precision label do not.
[[nodiscard]] constexpr bool is_failure(outcome_class c) noexcept {
    return c != outcome_class::pass && c != outcome_class::unsupported && c != outcome_class::reference_precision;
}

/// GraphNet's error code: 1 accuracy, 2 runtime crash, 3 compile failure (0: none).
[[nodiscard]] constexpr int graphnet_error_code(outcome_class c) noexcept {
    switch (c) {
        case outcome_class::mismatch:
        case outcome_class::nan_inf:
        case outcome_class::shape_dtype:
        case outcome_class::nondeterministic: return 1;
        case outcome_class::runtime_error:
        case outcome_class::crash:
        case outcome_class::hang:
        case outcome_class::bad_output: return 2;
        case outcome_class::compile_failure: return 3;
        default: return 0;
    }
}

/// What judging one case compares, and how (a campaign's comparison settings).
struct judge_options {
    double level = -4.0;
    double timeout_seconds = 10.0;
    bool float64_oracle = true, recheck = true, localize = true, compare_backends = true;
};

struct campaign_options {
    gen::config config;
    std::uint64_t seed = 0, first = 0, count = 100;
    /// GraphNet tolerance level of every value comparison. At -4 an f32 output
    /// passes |a - e| <= 1e-4 + 1.96e-5 |e|, an f64 one 2.5e-6 + 2.5e-6 |e|: a 1%
    /// relative error on an output of magnitude 0.02 or more is a mismatch.
    double level = -4.0;
    double timeout_seconds = 10.0;
    double time_limit_seconds = 0.0;  ///< stop starting cases after this (0: none)
    unsigned jobs = 1;
    std::filesystem::path out;
    bool float64_oracle = true;    ///< re-evaluate f16/bf16/f32 graphs in float64 to label reference imprecision
    bool recheck = true;           ///< run a mismatch again to spot non-determinism, a time-out again (twice the limit) to confirm a hang
    bool localize = true;          ///< mark every intermediate as an output to find the first disagreeing node
    /// Configurations of one system (names equal up to the first '-': onnxruntime and
    /// onnxruntime-noopt) compared with each other, on outcomes and values.
    bool compare_backends = true;
    /// Human-readable labels of the backends (commands), recorded in campaign.json.
    std::map<std::string, std::string> backend_descriptions;
    /// Mutants per case for the metamorphic oracle (backend on a mutant vs the same
    /// backend on its original; docs/MUTATIONS.md), 0 for none.
    std::size_t mutants = 0;
    /// Mutations per mutant: 1..mutation_max_steps, drawn per mutant.
    std::size_t mutation_max_steps = 1;
    /// Which mutations (families, names); its `steps` is set per mutant.
    mutate::mutate_options mutation;
    /// Confirmed findings (campaign/triage.hpp): their signatures are labelled `known`.
    known_findings known;
    /// This process runs shard `shard_index` of `shard_count`: the cases whose offset from
    /// `first` is shard_index modulo shard_count (cases are pure functions of their index,
    /// so shards need no coordinator; `tensoracle report` merges their folders).
    std::uint64_t shard_index = 0, shard_count = 1;
    /// A corpus guided by rewrites (campaign/corpus.hpp), or every case afresh.
    guide_options guide;
    [[nodiscard]] judge_options judging() const {
        return {level, timeout_seconds, float64_oracle, recheck, localize, compare_backends};
    }
};

/// What the progress line shows.
struct campaign_progress {
    std::uint64_t done = 0, total = 0, skipped = 0;
    double seconds = 0.0;
    std::map<std::string, std::size_t> outcomes;  ///< over all backends
    std::size_t signatures = 0;
};

/// An error message with what changes between runs taken out: paths (any word
/// holding a '/', relative or absolute), addresses, numbers (value and node
/// names such as v12 keep their letters).
[[nodiscard]] inline std::string normalize_message(std::string_view m) {
    auto delimiter = [](char c) { return c == ' ' || c == '\t' || c == '\'' || c == '"' || c == ',' || c == '(' || c == ')' || c == '[' || c == ']'; };
    std::string out;
    std::size_t i = 0;
    while (i < m.size()) {
        if (delimiter(m[i])) {
            out += m[i++];
            continue;
        }
        std::size_t e = i;
        while (e < m.size() && !delimiter(m[e])) ++e;
        const auto word = m.substr(i, e - i);
        if (word.find('/') != std::string_view::npos) {
            out += "<path>";
            // keep a trailing ':' (e.g. "file.cc:12:") out of the path's place
            if (word.back() == ':') out += ':';
            i = e;
            continue;
        }
        for (std::size_t k = 0; k < word.size();) {
            const char c = word[k];
            if (c == '0' && k + 1 < word.size() && (word[k + 1] == 'x' || word[k + 1] == 'X')) {
                out += "0x#";
                k += 2;
                while (k < word.size() && std::isxdigit(static_cast<unsigned char>(word[k]))) ++k;
            } else if (std::isdigit(static_cast<unsigned char>(c))) {
                out += '#';
                while (k < word.size() && (std::isdigit(static_cast<unsigned char>(word[k])) || word[k] == '.')) ++k;
            } else {
                out += c;
                ++k;
            }
        }
        i = e;
    }
    return out;
}

/// A failure's identity: same content, same id, in any run, shard or machine.
struct signature {
    std::string backend;  ///< a backend, or "a vs b" for a disagreement between two
    outcome_class outcome = outcome_class::mismatch;
    std::string oracle;   ///< "reference", "backends", "protocol"
    std::string where;    ///< "op Sigmoid f32" (localized), "ops Add,Relu" (not), or a normalized message
    [[nodiscard]] std::string key() const { return backend + "|" + std::string(to_string(outcome)) + "|" + oracle + "|" + where; }
    [[nodiscard]] std::string id() const { return fnv1a_hex(key()); }
    /// The entry of a results.jsonl line's "signatures".
    [[nodiscard]] nlohmann::json json() const {
        return {{"id", id()}, {"backend", backend}, {"outcome", to_string(outcome)}, {"oracle", oracle}, {"where", where}};
    }
};

namespace detail {
using graph::detail::low_precision;
using graph::detail::widened;
}  // namespace detail
using graph::float64_refused;
using graph::widen_to_float64;
using graph::within_reference_precision;

namespace detail {

/// One backend's outputs judged against expected tensors (graph-output order).
struct judgement {
    outcome_class outcome = outcome_class::pass;
    std::string detail;
    std::size_t output = 0;  ///< the first failing output
    double max_abs_error = 0.0, max_rel_error = 0.0;
    std::optional<int> min_passing_level;
    /// The strictest GraphNet level every output passes (none when one passes none):
    /// what a speedup score S_t asks of a case that ran.
    std::optional<int> passing_level;
};

[[nodiscard]] inline judgement judge_outputs(const std::vector<tensor>& actual, const std::vector<tensor>& expected, double level_t) {
    judgement j;
    if (actual.size() != expected.size()) {
        j.outcome = outcome_class::shape_dtype;
        j.detail = std::to_string(actual.size()) + " outputs, expected " + std::to_string(expected.size());
        return j;
    }
    auto rank = [](outcome_class c) {
        return c == outcome_class::shape_dtype ? 3 : c == outcome_class::nan_inf ? 2 : c == outcome_class::mismatch ? 1 : 0;
    };
    bool every_output_passes_some_level = true;
    for (std::size_t k = 0; k < actual.size(); ++k) {
        const auto report = compare(actual[k], expected[k]);
        outcome_class c = outcome_class::pass;
        std::string d;
        if (!report.same_shape() || !report.same_dtype()) {
            c = outcome_class::shape_dtype;
            d = "output " + std::to_string(k) + ": " + std::string(name(actual[k].element_dtype())) + tensoracle::to_string(actual[k].shape()) +
                ", expected " + std::string(name(expected[k].element_dtype())) + tensoracle::to_string(expected[k].shape());
        } else if (!report.nan_inf_agree()) {
            c = outcome_class::nan_inf;
            d = "output " + std::to_string(k) + ": " + std::to_string(report.nan_mismatches()) + " NaN and " +
                std::to_string(report.inf_mismatches()) + " Inf positions disagree";
        } else if (!report.passes(level{level_t})) {
            c = outcome_class::mismatch;
            d = "output " + std::to_string(k) + ": " + std::to_string(report.mismatch_count(level{level_t})) + " of " +
                std::to_string(report.size()) + " elements beyond level " + std::to_string(static_cast<int>(level_t));
        }
        if (report.same_shape()) {
            j.max_abs_error = std::max(j.max_abs_error, report.abs_error().max);
            j.max_rel_error = std::max(j.max_rel_error, report.rel_error().max);
            if (c != outcome_class::pass && !j.min_passing_level) j.min_passing_level = report.min_passing_level();
        }
        const auto lvl = report.same_shape() && report.same_dtype() ? report.min_passing_level() : std::nullopt;
        if (!lvl) {
            every_output_passes_some_level = false;
        } else if (!j.passing_level || *lvl > *j.passing_level) {
            j.passing_level = lvl;
        }
        if (rank(c) > rank(j.outcome)) {
            j.outcome = c;
            j.detail = d;
            j.output = k;
        }
    }
    if (!every_output_passes_some_level) j.passing_level.reset();
    return j;
}

[[nodiscard]] inline bool identical(const std::vector<tensor>& a, const std::vector<tensor>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k) {
        const auto r = compare(a[k], b[k]);
        if (!r.passes(tolerance{0.0, 0.0})) return false;
    }
    return true;
}

inline void write_json(const std::filesystem::path& p, const nlohmann::json& j) {
    const auto tmp = std::filesystem::path(p.string() + ".tmp");
    {
        std::ofstream f(tmp);
        f << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        if (!f) throw error("tensoracle::campaign", "cannot write " + tmp.string());
    }
    std::filesystem::rename(tmp, p);
}

inline void reset_dir(const std::filesystem::path& d) {
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
    std::filesystem::create_directories(d, ec);
    if (ec) throw error("tensoracle::campaign", "cannot create " + d.string() + ": " + ec.message());
}

/// A localized signature's place: "op <type> <dtype>".
[[nodiscard]] inline std::string op_where(const std::string& op_type, dtype d) {
    return "op " + op_type + " " + std::string(name(d));
}

[[nodiscard]] inline std::string sorted_ops(const std::vector<std::string>& ops) {
    std::set<std::string> s(ops.begin(), ops.end());
    std::string out = "ops ";
    for (const auto& o : s) out += (out.size() > 4 ? "," : "") + o;
    return out;
}

/// One thread's state: its own backends (workers are per thread) and scratch folder.
struct lane {
    std::vector<std::unique_ptr<backend>> backends;
    std::filesystem::path scratch;
};

/// Writes a graph and its inputs where the backends read them: `dir`/model.onnx, `dir`/inputs/.
inline void write_model(const graph::graph& g, const std::map<std::string, tensor, std::less<>>& inputs, const std::filesystem::path& dir) {
    reset_dir(dir / "inputs");
    io::save_model(g, dir / "model.onnx");
    for (std::size_t k = 0; k < g.inputs.size(); ++k) {
        io::save_tensor(inputs.at(g.inputs[k].name), dir / "inputs" / ("input_" + std::to_string(k) + ".pb"), g.inputs[k].name);
    }
}

/// 10 as "10", 0.5 as "0.5".
[[nodiscard]] inline std::string seconds_text(double s) {
    std::ostringstream o;
    o << s;
    return o.str();
}

[[nodiscard]] inline backend_run run_on(backend& b, const std::filesystem::path& dir, const std::string& out_name, std::size_t outputs, double timeout) {
    case_paths p{dir / "model.onnx", dir / "inputs", dir / out_name, outputs};
    reset_dir(p.outputs);
    auto r = b.run(p, timeout);
    // A failure under the backends' memory limit says so: the system under test asked
    // for more than it was given (set_backend_memory_limit), it did not break by itself.
    if (const auto limit = backend_memory_limit();
        limit != 0 && (r.status == run_status::crash || r.status == run_status::runtime_error || r.status == run_status::compile_failure)) {
        const std::string text = r.message + "\n" + r.process.err;
        bool oom = false;
        for (const char* sign : {"bad_alloc", "Cannot allocate memory", "out of memory", "Out of memory", "failed to allocate", "Failed to allocate",
                                 "OOM", "ENOMEM", "mmap failed", "allocation failed", "MemoryError", "memory exhausted"}) {
            oom = oom || text.find(sign) != std::string::npos;
        }
        if (oom) {
            r.message += "; out of memory under the backends' limit of " + memory_size_text(limit) + " (--backend-memory-limit)";
        } else if (r.status == run_status::crash) {
            // A process that cannot map what it needs may die of a signal without a word.
            r.message += "; it ran under the backends' memory limit of " + memory_size_text(limit) + " (--backend-memory-limit)";
        }
    }
    return r;
}

/// The graph with every node output also a graph output (Polygraphy's "mark all").
[[nodiscard]] inline graph::graph mark_all(const graph::graph& g, const std::map<std::string, tensor, std::less<>>& values,
                                          std::vector<std::pair<std::size_t, std::string>>& marked) {
    graph::graph m = g;
    std::set<std::string> present;
    for (const auto& o : m.outputs) present.insert(o.name);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        for (const auto& o : g.nodes[i].outputs) {
            if (o.empty()) continue;
            marked.emplace_back(i, o);
            if (present.insert(o).second) {
                const auto& t = values.at(o);
                m.outputs.push_back({o, t.element_dtype(), t.shape()});
            }
        }
    }
    return m;
}

/// The first `k + 1` nodes of `order` (a topological order of `g`) as a graph of
/// their own: the graph inputs and initializers they read, and as outputs every value
/// they make that no node of the prefix reads (and the graph's outputs among them),
/// so that no node of the prefix is dead code a backend could drop.
[[nodiscard]] inline graph::graph prefix_graph(const graph::graph& g, const std::vector<std::size_t>& order, std::size_t k,
                                               const std::map<std::string, tensor, std::less<>>& values) {
    if (k >= order.size()) {
        throw error("tensoracle::campaign::prefix_graph", "a prefix of " + std::to_string(k + 1) + " nodes of a graph of " + std::to_string(order.size()));
    }
    graph::graph p;
    p.name = g.name + "_prefix" + std::to_string(k + 1);
    p.opset = g.opset;
    std::set<std::string> read, made;
    // In the graph's own node order, not the prefix's: a system runs the nodes of a
    // graph in an order of its own, and the whole prefix must be the graph itself.
    std::vector<std::size_t> kept(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k + 1));
    std::sort(kept.begin(), kept.end());
    for (const auto i : kept) {
        const auto& n = g.nodes.at(i);
        p.nodes.push_back(n);
        for (const auto& in : graph::graph::reads(n)) read.insert(in);
        for (const auto& o : n.outputs) {
            if (!o.empty()) made.insert(o);
        }
    }
    for (const auto& in : g.inputs) {
        if (read.contains(in.name)) p.inputs.push_back(in);
    }
    for (const auto& [name, t] : g.initializers) {
        if (read.contains(name)) p.initializers.insert_or_assign(name, t);
    }
    std::set<std::string> graph_outputs;
    for (const auto& o : g.outputs) graph_outputs.insert(o.name);
    for (const auto& n : p.nodes) {
        for (const auto& o : n.outputs) {
            if (o.empty() || (read.contains(o) && !graph_outputs.contains(o))) continue;
            const auto& t = values.at(o);
            p.outputs.push_back({o, t.element_dtype(), t.shape()});
        }
    }
    return p;
}

}  // namespace detail

/// Runs one case on a lane's backends and judges it: outcomes, backend-vs-backend
/// comparisons and signatures (localized where it can). The campaign's judgement,
/// shared with the reducer (campaign/reduce.hpp) so that a reduced case is held to
/// exactly the signature the campaign gave the original.
class case_judge {
public:
    struct backend_result {
        backend_run run;
        outcome_class outcome = outcome_class::pass;
        std::string detail;
        detail::judgement judged;
        std::optional<signature> sig;
        /// What the backend reported it executed (campaign/rewrites.hpp); empty optional: no report.
        std::optional<std::vector<rewrite_event>> rewrites;
    };

    struct evaluation {
        std::vector<backend_result> results;  ///< lane order
        nlohmann::json pairs = nlohmann::json::object();
        std::vector<signature> pair_signatures;
        std::string truth_note;
        /// Every signature of the case: the backends' in lane order, then the pairs'.
        [[nodiscard]] std::vector<signature> signatures() const {
            std::vector<signature> s;
            for (const auto& r : results) {
                if (r.sig) s.push_back(*r.sig);
            }
            s.insert(s.end(), pair_signatures.begin(), pair_signatures.end());
            return s;
        }
    };

    explicit case_judge(judge_options o) : o_(o) {
        if (!(o_.timeout_seconds > 0)) throw error("tensoracle::campaign::case_judge", "the time-out must be positive");
        (void)tolerance_level(dtype::f32, o_.level);  // throws for a level outside [-10, 0]
    }
    [[nodiscard]] const judge_options& options() const noexcept { return o_; }

    /// Writes `c` to the lane's scratch folder, runs it on every backend of the lane and
    /// judges it. Throws backend_unavailable when a backend cannot be started.
    [[nodiscard]] evaluation evaluate(detail::lane& lane, const io::generated_case& c) const {
        evaluation e;
        e.results.resize(lane.backends.size());
        auto& results = e.results;
        std::vector<tensor> expected;
        for (const auto& out : c.model.outputs) expected.push_back(c.outputs.at(out.name));
        const auto dir = lane.scratch;
        detail::write_model(c.model, c.inputs, dir);
        std::optional<std::vector<tensor>> truth;  // float64 re-evaluation, computed when first needed
        bool truth_tried = false;
        for (std::size_t b = 0; b < lane.backends.size(); ++b) {
            auto& be = *lane.backends[b];
            auto& r = results[b];
            std::string out_name = "out_" + std::to_string(b);
            r.run = detail::run_on(be, dir, out_name, expected.size(), o_.timeout_seconds);
            std::string late;  // a first run that timed out and a second that did not
            if (r.run.status == run_status::hang && o_.recheck) {
                // A time-out is a claim only if it repeats with room to spare: a loaded
                // machine ends runs late, as does a run whose pipe another lane's child
                // holds open (process.hpp's child_pipes guards against that).
                auto again = detail::run_on(be, dir, "again_" + std::to_string(b), expected.size(), 2.0 * o_.timeout_seconds);
                if (again.status == run_status::hang) {
                    r.run.message += "; a second run timed out too, with twice the limit";
                } else {
                    late = "a first run timed out after " + detail::seconds_text(o_.timeout_seconds) +
                           " s; this is a second run's, with twice the limit";
                    r.run = std::move(again);
                    out_name = "again_" + std::to_string(b);
                }
            }
            r.rewrites = reported_rewrites(c.model, dir / out_name);
            r.detail = r.run.message;
            switch (r.run.status) {
                case run_status::ran: break;
                case run_status::unsupported: r.outcome = outcome_class::unsupported; break;
                case run_status::compile_failure: r.outcome = outcome_class::compile_failure; break;
                case run_status::runtime_error: r.outcome = outcome_class::runtime_error; break;
                case run_status::crash: r.outcome = outcome_class::crash; break;
                case run_status::hang: r.outcome = outcome_class::hang; break;
                case run_status::bad_output: r.outcome = outcome_class::bad_output; break;
            }
            if (!late.empty()) r.detail += (r.detail.empty() ? "" : "; ") + late;
            if (r.run.status != run_status::ran) continue;
            r.judged = detail::judge_outputs(r.run.outputs, expected, o_.level);
            r.outcome = r.judged.outcome;
            r.detail = r.judged.detail + (late.empty() ? "" : "; " + late);
            if (r.outcome == outcome_class::mismatch || r.outcome == outcome_class::nan_inf) {
                if (o_.recheck) {
                    const auto again = detail::run_on(be, dir, "again_" + std::to_string(b), expected.size(), o_.timeout_seconds);
                    if (again.status != run_status::ran || !detail::identical(again.outputs, r.run.outputs)) {
                        r.outcome = outcome_class::nondeterministic;
                        r.detail = "a second run " + (again.status == run_status::ran ? std::string("gave other values") : "ended " + std::string(to_string(again.status))) +
                                   " (first: " + r.detail + ")";
                        continue;
                    }
                }
                if (o_.float64_oracle && has_low_precision_values(c)) {
                    if (!truth_tried) {
                        truth_tried = true;
                        truth = float64_truth(c, e.truth_note);
                    }
                    if (truth && all_within_reference_precision(r.run.outputs, expected, *truth)) {
                        r.outcome = outcome_class::reference_precision;
                        r.detail += "; as close to the float64 re-evaluation as our same-dtype reference";
                    }
                }
            }
        }
        // Backend vs backend: outcomes, then values.
        if (o_.compare_backends) {
            for (std::size_t a = 0; a < results.size(); ++a) {
                for (std::size_t b = a + 1; b < results.size(); ++b) {
                    if (family(lane.backends[a]->name()) != family(lane.backends[b]->name())) continue;
                    compare_pair(lane, c, dir, a, b, results, e.pairs, e.pair_signatures);
                }
            }
        }
        for (std::size_t b = 0; b < results.size(); ++b) {
            if (is_failure(results[b].outcome)) results[b].sig = make_signature(lane, b, c, dir, results[b]);
        }
        return e;
    }

    /// Backends whose names share the part before the first '-' ("onnxruntime",
    /// "onnxruntime-noopt") are configurations of one system: compared with each other.
    /// "torchscript" is PyTorch's JIT, a configuration of "torch" (eager).
    static std::string family(const std::string& name) {
        std::string f = name.substr(0, name.find('-'));
        return f == "torchscript" ? "torch" : f;
    }

    static bool has_low_precision_values(const io::generated_case& c) {
        return std::any_of(c.values.begin(), c.values.end(), [](const auto& kv) { return detail::low_precision(kv.second.element_dtype()); });
    }

    std::optional<std::vector<tensor>> float64_truth(const io::generated_case& c, std::string& note) const {
        try {
            const auto refused = float64_refused(c.model);
            const auto w = widen_to_float64(c.model, refused);
            std::map<std::string, tensor, std::less<>> feeds;
            for (const auto& [name, t] : c.inputs) feeds.emplace(name, refused.count(name) ? t : detail::widened(t));
            const auto r = graph::run(w, feeds);
            std::vector<tensor> out;
            for (const auto& o : w.outputs) out.push_back(r.outputs.at(o.name));
            return out;
        } catch (const std::exception& e) {
            note = std::string("float64 re-evaluation unavailable: ") + e.what();
            return std::nullopt;
        }
    }

    bool all_within_reference_precision(const std::vector<tensor>& b, const std::vector<tensor>& r, const std::vector<tensor>& truth) const {
        for (std::size_t k = 0; k < b.size(); ++k) {
            const auto d = r[k].element_dtype();
            if (!info(d).is_floating) {
                // A discrete output (a comparison, an index) of low-precision arithmetic: each
                // element must equal ours or the float64 re-evaluation's.
                if (b[k].element_dtype() != d || b[k].shape() != r[k].shape() || truth[k].shape() != r[k].shape()) return false;
                for (std::size_t i = 0; i < b[k].size(); ++i) {
                    const double bv = b[k].value_as_double(i);
                    if (bv != r[k].value_as_double(i) && bv != truth[k].value_as_double(i)) return false;
                }
                continue;
            }
            if (d == dtype::f64) {
                if (!compare(b[k], r[k]).passes(level{o_.level})) return false;
                continue;
            }
            if (b[k].element_dtype() != d) return false;
            if (!within_reference_precision(b[k], r[k], truth[k], tolerance_level(d, o_.level))) return false;
        }
        return true;
    }

    void compare_pair(detail::lane& lane, const io::generated_case& c, const std::filesystem::path& dir, std::size_t a, std::size_t b,
                      std::vector<backend_result>& results, nlohmann::json& pairs,
                      std::vector<signature>& pair_sigs) const {
        auto& ra = results[a];
        auto& rb = results[b];
        const std::string pair = lane.backends[a]->name() + " vs " + lane.backends[b]->name();
        const bool a_ran = ra.run.status == run_status::ran, b_ran = rb.run.status == run_status::ran;
        // What one configuration runs is not "unsupported" in the other: it is that one's failure.
        if (a_ran && rb.outcome == outcome_class::unsupported) {
            rb.outcome = outcome_class::compile_failure;
            rb.detail = "unsupported here, but " + lane.backends[a]->name() + " runs it: " + rb.detail;
        }
        if (b_ran && ra.outcome == outcome_class::unsupported) {
            ra.outcome = outcome_class::compile_failure;
            ra.detail = "unsupported here, but " + lane.backends[b]->name() + " runs it: " + ra.detail;
        }
        // A load failure of one configuration only (an optimization that made the graph
        // invalid) is that configuration's fault, not a model the system refuses: its
        // signature says so, and triage does not file it as a limitation. The other
        // loaded the model when it ran it or failed only while running it.
        const bool a_loaded = a_ran || ra.run.status == run_status::runtime_error, b_loaded = b_ran || rb.run.status == run_status::runtime_error;
        if (a_loaded && rb.outcome == outcome_class::compile_failure && rb.detail.rfind("unsupported here, but ", 0) != 0) {
            rb.detail = "fails to load, but " + lane.backends[a]->name() + " loads it: " + rb.detail;
        }
        if (b_loaded && ra.outcome == outcome_class::compile_failure && ra.detail.rfind("unsupported here, but ", 0) != 0) {
            ra.detail = "fails to load, but " + lane.backends[b]->name() + " loads it: " + ra.detail;
        }
        if (!a_ran || !b_ran) return;
        const auto j = detail::judge_outputs(ra.run.outputs, rb.run.outputs, o_.level);
        pairs[pair] = {{"outcome", to_string(j.outcome)}, {"detail", j.detail}, {"max_abs_error", j.max_abs_error}};
        if (j.outcome == outcome_class::pass) return;
        // Both within the reference's tolerance (or as close to float64 truth as it is): they
        // may still differ by up to twice that from each other, which is no one's bug.
        auto acceptable = [](outcome_class k) { return k == outcome_class::pass || k == outcome_class::reference_precision; };
        if (j.outcome == outcome_class::mismatch && acceptable(ra.outcome) && acceptable(rb.outcome)) {
            pairs[pair]["outcome"] = to_string(outcome_class::reference_precision);
            pairs[pair]["detail"] = j.detail + "; each is within the reference's tolerance or precision";
            return;
        }
        // Which one disagrees: localized on the pair itself, comparing the marked intermediates of both.
        signature s{pair, j.outcome, "backends", detail::sorted_ops(c.op_types)};
        if (o_.localize) {
            const marked_graph mg(c, dir);
            const auto xa = mg.run(*lane.backends[a], "out_a", o_.timeout_seconds);
            const auto xb = mg.run(*lane.backends[b], "out_b", o_.timeout_seconds);
            if (xa.status == run_status::ran && xb.status == run_status::ran) {
                if (auto node = first_disagreement(mg, xa.outputs, [&](std::size_t k) -> const tensor& { return xb.outputs[k]; })) {
                    s.where = mg.where(*node, xa.outputs);
                }
            }
        }
        pairs[pair]["signature"] = s.id();
        pair_sigs.push_back(std::move(s));
    }

    /// The case's graph with every intermediate marked as an output, written once to
    /// `dir`/marked for the runs that localize one failure.
    struct marked_graph {
        std::vector<std::pair<std::size_t, std::string>> marked;  ///< (node, value) in graph order
        graph::graph model;
        std::map<std::string, std::size_t> position;  ///< value -> graph-output index
        std::filesystem::path dir;
        marked_graph(const io::generated_case& c, const std::filesystem::path& case_dir)
            : model(detail::mark_all(c.model, c.values, marked)), dir(case_dir / "marked") {
            for (std::size_t k = 0; k < model.outputs.size(); ++k) position.emplace(model.outputs[k].name, k);
            detail::write_model(model, c.inputs, dir);
        }
        [[nodiscard]] backend_run run(backend& be, const std::string& out, double timeout) const {
            return detail::run_on(be, dir, out, model.outputs.size(), timeout);
        }
        /// "op <type> <dtype>" of `node`, the dtype its first marked output has in `got`.
        [[nodiscard]] std::string where(std::size_t node, const std::vector<tensor>& got) const {
            for (const auto& [n, value] : marked) {
                if (n == node) return detail::op_where(model.nodes[node].op_type, got.at(position.at(value)).element_dtype());
            }
            return "op " + model.nodes[node].op_type + " ";  // no marked output (not reached: localized nodes have one)
        }
    };

    /// The first node (in graph order) one of whose marked outputs disagrees.
    template <class Expected>
    std::optional<std::size_t> first_disagreement(const marked_graph& mg, const std::vector<tensor>& got, Expected&& expected_at) const {
        for (const auto& [node, value] : mg.marked) {
            const auto k = mg.position.at(value);
            if (k >= got.size()) return std::nullopt;
            const auto j = detail::judge_outputs({got[k]}, {expected_at(k)}, o_.level);
            if (j.outcome != outcome_class::pass) return node;
        }
        return std::nullopt;
    }

    /// Does our kernel, fed the backend's own values of the node's inputs, give the
    /// backend's outputs of that node? Then the node is right and the disagreement
    /// is rounding from upstream (within tolerance there) amplified by it.
    bool node_reproduces(const marked_graph& mg, std::size_t node, const std::vector<tensor>& got,
                         const std::map<std::string, tensor, std::less<>>& values) const {
        const auto& position = mg.position;
        const auto& n = mg.model.nodes[node];
        try {
            std::vector<const tensor*> args;
            for (const auto& in : n.inputs) {
                if (in.empty()) {
                    args.push_back(nullptr);
                } else if (const auto it = position.find(in); it != position.end() && it->second < got.size()) {
                    args.push_back(&got[it->second]);
                } else {
                    args.push_back(&values.at(in));
                }
            }
            while (!args.empty() && args.back() == nullptr) args.pop_back();
            const auto& op = ops::get_op(n.op_type);
            const auto out = spec::evaluate(op, args, graph::call_attributes(op, n));
            for (std::size_t o = 0; o < n.outputs.size() && o < out.size(); ++o) {
                if (n.outputs[o].empty()) continue;
                const auto it = position.find(n.outputs[o]);
                if (it == position.end() || it->second >= got.size()) return false;
                if (detail::judge_outputs({got[it->second]}, {out[o]}, o_.level).outcome != outcome_class::pass) return false;
            }
            return true;
        } catch (const std::exception&) {
            return false;  // e.g. the backend's inputs are outside the op's domain: not evidence of anything
        }
    }

    /// The signature of a failure; for a value failure, localizes it first and may
    /// relabel it reference_precision (the node reproduces on the backend's inputs).
    std::optional<signature> make_signature(detail::lane& lane, std::size_t b, const io::generated_case& c, const std::filesystem::path& dir,
                                            backend_result& r) const {
        signature s{lane.backends[b]->name(), r.outcome, "reference", {}};
        switch (r.outcome) {
            case outcome_class::crash:
            case outcome_class::hang: {
                // No values to compare: the first node whose prefix of the topological
                // order crashes (or hangs) the same way, bisected, is the location; a
                // crash keeps its signal. Without one, the message (a crash) or the op
                // set (a hang) stays the signature.
                s.oracle = "process";
                s.where = r.outcome == outcome_class::crash
                              ? normalize_message(r.run.message) + "|" + normalize_message(detail::first_line(r.run.process.err))
                              : detail::sorted_ops(c.op_types);
                if (!o_.localize) return s;
                if (const auto node = first_failing_prefix(*lane.backends[b], c, dir, r.run.status)) {
                    const auto& n = c.model.nodes[*node];
                    const auto it = n.outputs.empty() ? c.values.end() : c.values.find(n.outputs[0]);
                    if (it != c.values.end()) {
                        s.where = detail::op_where(n.op_type, it->second.element_dtype());
                        if (r.outcome == outcome_class::crash) s.where += "|" + normalize_message(r.run.message);
                    }
                }
                return s;
            }
            case outcome_class::nondeterministic: {
                // The first node whose marked output differs between two runs.
                s.oracle = "rerun";
                s.where = detail::sorted_ops(c.op_types);
                if (!o_.localize) return s;
                const marked_graph mg(c, dir);
                const auto x = mg.run(*lane.backends[b], "out", o_.timeout_seconds);
                const auto y = mg.run(*lane.backends[b], "again", o_.timeout_seconds);
                if (x.status != run_status::ran || y.status != run_status::ran || y.outputs.size() != x.outputs.size()) return s;
                for (const auto& [node, value] : mg.marked) {
                    const auto k = mg.position.at(value);
                    if (k < x.outputs.size() && !detail::identical({x.outputs[k]}, {y.outputs[k]})) {
                        s.where = mg.where(node, x.outputs);
                        break;
                    }
                }
                return s;
            }
            case outcome_class::compile_failure:
            case outcome_class::runtime_error:
            case outcome_class::bad_output:
                s.oracle = "process";
                s.where = normalize_message(r.detail);
                return s;
            default: break;
        }
        s.where = detail::sorted_ops(c.op_types);
        if (!o_.localize) return s;
        const marked_graph mg(c, dir);
        const auto x = mg.run(*lane.backends[b], "out", o_.timeout_seconds);
        if (x.status != run_status::ran) return s;
        const auto node = first_disagreement(mg, x.outputs, [&](std::size_t k) -> const tensor& { return c.values.at(mg.model.outputs[k].name); });
        if (!node) return s;  // marking every output made it vanish: keep the op-set signature
        s.where = mg.where(*node, x.outputs);
        if (r.outcome != outcome_class::shape_dtype && node_reproduces(mg, *node, x.outputs, c.values)) {
            r.outcome = outcome_class::reference_precision;
            r.detail += "; first disagreeing node " + mg.model.nodes[*node].label() +
                        " gives the backend's values from the backend's own inputs (upstream rounding, amplified)";
            return std::nullopt;
        }
        return s;
    }

    /// The node (index into c.model.nodes) that ends the shortest prefix of the
    /// topological order on which `b` ends with `status` (a crash, a hang), found by
    /// bisection: about log2(nodes) runs, each a hang costing a time-out. Empty when
    /// the whole graph's prefix does not reproduce it (a failure of the graph's
    /// outputs or of the whole) or a value is missing.
    [[nodiscard]] std::optional<std::size_t> first_failing_prefix(backend& b, const io::generated_case& c, const std::filesystem::path& dir,
                                                                  run_status status) const {
        if (c.model.nodes.empty()) return std::nullopt;
        std::vector<std::size_t> order;
        try {
            order = c.model.topological_order();
        } catch (const std::exception&) {
            return std::nullopt;
        }
        auto fails = [&](std::size_t k) {
            try {
                const auto p = detail::prefix_graph(c.model, order, k, c.values);
                const auto folder = dir / ("prefix" + std::to_string(k + 1));
                detail::write_model(p, c.inputs, folder);
                return detail::run_on(b, folder, "out", p.outputs.size(), o_.timeout_seconds).status == status;
            } catch (const std::out_of_range&) {
                return false;  // a value the reference did not record
            }
        };
        std::size_t lo = 0, hi = order.size() - 1;
        if (!fails(hi)) return std::nullopt;
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (fails(mid)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return order[lo];
    }

private:
    judge_options o_;
};

/// What a summary covers: a campaign folder, its backends and the case indices that belong to it.
namespace detail {
/// Whether a results.jsonl line has the shape its readers rely on (the summary, the
/// report, resuming, merging): each field they read, where present, of the type they
/// read it as. A line that does not (cut by a kill, edited by hand, written by another
/// program) is treated as a line cut by a kill: left out, never half-read.
[[nodiscard]] inline bool is_result_line(const nlohmann::json& j) {
    using json = nlohmann::json;
    auto has = [](const json& o, const char* k, bool (json::*is)() const noexcept) {
        const auto it = o.find(k);
        return it == o.end() || ((*it).*is)();
    };
    auto strings = [&](const json& o, std::initializer_list<const char*> keys) {
        for (const char* k : keys) {
            if (!has(o, k, &json::is_string)) return false;
        }
        return true;
    };
    auto numbers = [&](const json& o, std::initializer_list<const char*> keys) {
        for (const char* k : keys) {
            if (!has(o, k, &json::is_number)) return false;
        }
        return true;
    };
    auto levels = [&](const json& o) {
        for (const char* k : {"passing_level", "min_passing_level", "graphnet_error_code"}) {
            const auto it = o.find(k);
            if (it != o.end() && (!it->is_number_integer() || it->get<std::int64_t>() < -1000 || it->get<std::int64_t>() > 1000)) return false;
        }
        return true;
    };
    // {name: {"outcome": string, ...}}: backends and pairs, of a case or a mutant.
    auto results = [&](const json& o, const char* key, bool backend) {
        const auto it = o.find(key);
        if (it == o.end()) return true;
        if (!it->is_object()) return false;
        for (const auto& r : *it) {
            if (!r.is_object() || !r.contains("outcome") || !r["outcome"].is_string() || !strings(r, {"detail", "signature"}) ||
                !numbers(r, {"seconds", "max_abs_error"}) || !levels(r)) {
                return false;
            }
            if (const auto e = r.find("max_rel_error"); e != r.end() && !e->is_number() && !e->is_null()) return false;
            if (!backend) continue;
            if (const auto rw = r.find("rewrites"); rw != r.end()) {
                if (!rw->is_array()) return false;
                for (const auto& ev : *rw) {
                    if (!ev.is_object() || !strings(ev, {"kind", "class"})) return false;
                }
            }
        }
        return true;
    };
    auto signatures = [&](const json& o) {
        const auto it = o.find("signatures");
        if (it == o.end()) return true;
        if (!it->is_array()) return false;
        for (const auto& g : *it) {
            if (!g.is_object() || !strings(g, {"case"})) return false;
            for (const char* k : {"id", "backend", "outcome", "oracle", "where"}) {
                if (!g.contains(k) || !g[k].is_string()) return false;
            }
            if (const auto n = g.find("nodes"); n != g.end() && !n->is_number_unsigned()) return false;
        }
        return true;
    };
    if (!j.is_object() || !j.contains("index") || !j["index"].is_number_unsigned() || !j.contains("case") || !j["case"].is_string()) return false;
    if (!signatures(j) || !results(j, "backends", true) || !results(j, "pairs", false) || !numbers(j, {"seconds", "reference_seconds"})) return false;
    if (const auto n = j.find("nodes"); n != j.end() && !n->is_number_unsigned()) return false;
    if (const auto m = j.find("motifs"); m != j.end()) {
        if (!m->is_array()) return false;
        for (const auto& x : *m) {
            if (!x.is_string()) return false;
        }
    }
    if (const auto d = j.find("derivation"); d != j.end() && (!d->is_object() || !strings(*d, {"by"}))) return false;
    if (const auto ms = j.find("mutants"); ms != j.end()) {
        if (!ms->is_array()) return false;
        for (const auto& m : *ms) {
            if (!m.is_object() || !strings(m, {"skipped"})) return false;
            if (m.contains("skipped")) continue;
            if (!m.contains("backends") || !results(m, "backends", false) || !results(m, "pairs", false)) return false;
            if (!signatures(m)) return false;
        }
    }
    return true;
}
}  // namespace detail

struct summary_scope {
    std::filesystem::path dir;
    std::vector<std::string> backends;
    std::function<bool(std::uint64_t)> includes;
    std::uint64_t requested = 0;
    double level = -4.0;
    std::uint64_t seed = 0;
    std::string config_hash;
    bool mutants = false;
    nlohmann::json shard;  ///< {"index", "count"} of a shard, null for a whole campaign
    known_findings known;  ///< labels signatures `known` (triage)
};
inline nlohmann::json write_summary(const summary_scope& sc);

/// How many of `count` cases shard `index` of `shards` runs (case k goes to shard k mod shards).
[[nodiscard]] constexpr std::uint64_t shard_size(std::uint64_t count, std::uint64_t index, std::uint64_t shards) noexcept {
    return count / shards + (index < count % shards ? 1 : 0);
}

/// Runs the campaign; see the file comment. Throws backend_unavailable when a
/// backend cannot be started at all, and tensoracle::error for a bad output folder.
class campaign_runner {
public:
    campaign_runner(campaign_options o, std::vector<std::unique_ptr<backend>> backends)
        : o_(std::move(o)), judge_(o_.judging()), gen_(o_.config), prototypes_(std::move(backends)) {
        const char* where = "tensoracle::campaign::run_campaign";
        if (prototypes_.empty()) throw error(where, "no backend to run");
        std::set<std::string> names;
        for (const auto& b : prototypes_) {
            if (!names.insert(b->name()).second) throw error(where, "two backends named '" + b->name() + "'");
            if (b->name().find(" vs ") != std::string::npos) throw error(where, "a backend name may not contain ' vs '");
        }
        if (o_.out.empty()) throw error(where, "no output folder");
        if (o_.shard_count == 0 || o_.shard_index >= o_.shard_count) {
            throw error(where, "shard " + std::to_string(o_.shard_index) + " of " + std::to_string(o_.shard_count) +
                                   ": the index must be below the count (shards are numbered from 0)");
        }
        o_.jobs = std::max(1u, o_.jobs);
        o_.guide.validate();
    }

    /// Runs (or resumes) and writes summary.json / summary.txt; returns the summary.
    nlohmann::json run(const std::function<void(const campaign_progress&)>& on_progress = {}, const std::atomic<bool>* stop = nullptr) {
        std::filesystem::create_directories(o_.out / "cases");
        check_or_write_settings();
        const bool guided = o_.guide.mode != guide_mode::none;
        corpus_ = rewrite_corpus(o_.guide);
        std::map<std::uint64_t, nlohmann::json> journaled;  // guided: the lines already judged, to replay
        const auto done = journal_indices(guided ? &journaled : nullptr);
        // This shard's cases, in rounds: the corpus changes only between rounds.
        const auto mine = shard_size(o_.count, o_.shard_index, o_.shard_count);
        const std::uint64_t per_round = guided ? o_.guide.round : std::max<std::uint64_t>(1, mine);
        std::vector<std::vector<std::uint64_t>> rounds;
        std::uint64_t position = 0;
        for (std::uint64_t k = o_.shard_index; k < o_.count; k += o_.shard_count, ++position) {
            if (position % per_round == 0) rounds.emplace_back();
            rounds.back().push_back(o_.first + k);
        }
        progress_.total = mine;
        progress_.skipped = done.size();
        progress_.done = progress_.skipped;
        journal_.open(o_.out / "results.jsonl", std::ios::app);
        if (!journal_) throw error("tensoracle::campaign", "cannot append to " + (o_.out / "results.jsonl").string());
        if (guided) std::filesystem::create_directories(o_.out / "corpus");

        std::vector<detail::lane> lanes(o_.jobs);
        for (unsigned j = 0; j < o_.jobs; ++j) {
            for (const auto& b : prototypes_) lanes[j].backends.push_back(b->clone());
            lanes[j].scratch = o_.out / ".work" / std::to_string(j);
        }
        std::exception_ptr fatal;
        const auto start = std::chrono::steady_clock::now();
        auto out_of_time = [&] {
            return (stop && stop->load()) ||
                   (o_.time_limit_seconds > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > o_.time_limit_seconds);
        };
        for (const auto& round : rounds) {
            std::vector<std::uint64_t> todo;
            for (const auto i : round) {
                if (!done.contains(i)) todo.push_back(i);
            }
            std::atomic<std::size_t> next{0};
            auto worker = [&](detail::lane& lane) {
                for (;;) {
                    if (out_of_time()) return;
                    {
                        std::lock_guard lock(mutex_);
                        if (fatal) return;
                    }
                    const std::size_t k = next.fetch_add(1);
                    if (k >= todo.size()) return;
                    try {
                        auto line = run_case(lane, todo[k]);
                        record(line, start, on_progress);
                    } catch (const backend_unavailable&) {
                        std::lock_guard lock(mutex_);
                        if (!fatal) fatal = std::current_exception();
                        return;
                    }
                }
            };
            if (!todo.empty()) {
                std::vector<std::thread> pool;
                for (unsigned j = 1; j < o_.jobs && j < todo.size(); ++j) pool.emplace_back(worker, std::ref(lanes[j]));
                worker(lanes[0]);
                for (auto& t : pool) t.join();
            }
            if (fatal || next.load() < todo.size()) break;  // stopped inside the round: its corpus update waits for the resume
            if (guided) end_round(round, journaled);
        }
        journal_.close();
        lanes.clear();  // stops the workers
        std::error_code ec;
        std::filesystem::remove_all(o_.out / ".work", ec);
        if (fatal) std::rethrow_exception(fatal);
        return write_summary();
    }

    /// The corpus so far (a guided campaign's, after run()).
    [[nodiscard]] const rewrite_corpus& corpus() const noexcept { return corpus_; }

private:
    // --- settings and journal --------------------------------------------------
    [[nodiscard]] nlohmann::json settings() const {
        nlohmann::json b = nlohmann::json::array();
        for (const auto& p : prototypes_) {
            const auto it = o_.backend_descriptions.find(p->name());
            b.push_back({{"name", p->name()}, {"command", it == o_.backend_descriptions.end() ? "" : it->second}});
        }
        return {{"seed", o_.seed},
                {"config_hash", o_.config.hash()},
                {"config", gen::to_json(o_.config)},
                {"level", o_.level},
                {"backends", b},
                {"float64_oracle", o_.float64_oracle},
                {"recheck", o_.recheck},
                {"localize", o_.localize},
                {"compare_backends", o_.compare_backends},
                {"mutants", mutation_settings()},
                {"first", o_.first},
                {"count", o_.count},
                {"shard", {{"index", o_.shard_index}, {"count", o_.shard_count}}},
                {"known_findings", o_.known.json()},
                {"guide", o_.guide.json()}};
    }

    [[nodiscard]] nlohmann::json mutation_settings() const {
        if (o_.mutants == 0) return 0;
        nlohmann::json families = nlohmann::json::array();
        for (const auto f : o_.mutation.families) families.push_back(std::string(mutate::to_string(f)));
        return {{"per_case", o_.mutants}, {"max_steps", o_.mutation_max_steps}, {"families", families}, {"only", o_.mutation.only}};
    }

    void check_or_write_settings() {
        const auto p = o_.out / "campaign.json";
        auto mine = settings();
        if (std::filesystem::exists(p)) {
            nlohmann::json theirs;
            try {
                std::ifstream f(p);
                theirs = nlohmann::json::parse(f);
            } catch (const std::exception& e) {
                throw error("tensoracle::campaign", p.string() + " is not readable JSON: " + e.what());
            }
            // A resumed campaign must be the same campaign: its journal only holds those results.
            for (const char* k : {"seed", "config_hash", "level", "backends", "float64_oracle", "recheck", "localize", "compare_backends", "mutants", "shard", "guide"}) {
                // Older campaigns recorded neither mutants, shards nor a guide.
                const auto fallback = std::string_view(k) == "mutants" ? nlohmann::json(0)
                                      : std::string_view(k) == "shard" ? nlohmann::json{{"index", 0}, {"count", 1}}
                                      : std::string_view(k) == "guide" ? nlohmann::json{{"mode", "none"}}
                                                                       : nlohmann::json();
                if (theirs.value(k, fallback) != mine[k]) {
                    throw error("tensoracle::campaign", o_.out.string() + " holds a campaign with another '" + k + "' (" +
                                                            theirs.value(k, fallback).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " there, " + mine[k].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                                                            " now): resume it with the same settings, or use another --out");
                }
            }
        }
        detail::write_json(p, mine);
    }

    /// Cases already judged (the journal's complete lines; a line cut by a kill is
    /// dropped); with `lines`, their lines too.
    std::set<std::uint64_t> journal_indices(std::map<std::uint64_t, nlohmann::json>* lines = nullptr) {
        std::set<std::uint64_t> done;
        const auto p = o_.out / "results.jsonl";
        std::ifstream f(p);
        std::string line, kept;
        bool cut = false;
        while (std::getline(f, line)) {
            try {
                const auto j = nlohmann::json::parse(line);
                if (!detail::is_result_line(j)) throw error("results.jsonl", "not a result line");
                const auto i = j.at("index").get<std::uint64_t>();
                if (i >= o_.first && i < o_.first + o_.count && (i - o_.first) % o_.shard_count == o_.shard_index) {
                    done.insert(i);
                    if (lines) lines->insert_or_assign(i, j);
                }
                kept += line + "\n";
            } catch (const std::exception&) {
                cut = true;
            }
        }
        f.close();
        if (cut) {  // rewrite without the partial line
            std::ofstream w(p, std::ios::trunc);
            w << kept;
        }
        return done;
    }

    void record(const nlohmann::json& line, std::chrono::steady_clock::time_point start,
                const std::function<void(const campaign_progress&)>& on_progress) {
        std::lock_guard lock(mutex_);
        journal_ << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        journal_.flush();
        ++progress_.done;
        for (const auto& [name, r] : line["backends"].items()) ++progress_.outcomes[r["outcome"].get<std::string>()];
        for (const auto& s : line["signatures"]) seen_signatures_.insert(s["id"].get<std::string>());
        progress_.signatures = seen_signatures_.size();
        if (o_.guide.mode != guide_mode::none) round_lines_.insert_or_assign(line["index"].get<std::uint64_t>(), line);
        progress_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (on_progress) on_progress(progress_);
    }

    // --- one case --------------------------------------------------------------
    using backend_result = case_judge::backend_result;

    nlohmann::json run_case(detail::lane& lane, std::uint64_t index) {
        const auto case_start = std::chrono::steady_clock::now();
        nlohmann::json line;
        line["case"] = io::case_id(o_.seed, index);
        line["index"] = index;
        line["signatures"] = nlohmann::json::array();
        line["backends"] = nlohmann::json::object();
        io::generated_case c;
        try {
            gen::generation_stats stats;
            std::optional<io::generated_case> derived;
            if (o_.guide.mode != guide_mode::none) {
                // The corpus is only read during a round (end_round changes it).
                const auto plan = corpus_.plan(o_.seed, index);
                std::string why;
                derived = derive_case(gen_, corpus_, plan, o_.seed, index, stats, why);
                if (!derived && plan.by != derivation_plan::kind::fresh) line["derivation_failed"] = why;
            }
            c = derived ? std::move(*derived) : io::make_case(gen_, o_.seed, index, stats);
        } catch (const memory_error& e) {
            // The reference cannot afford the case within the memory budget: not a
            // backend's failure, and not the generator's.
            line["reference_skipped"] = e.what();
            return line;
        } catch (const std::exception& e) {
            line["generation_error"] = e.what();
            return line;
        }
        if (!c.derivation.is_null()) line["derivation"] = c.derivation;
        line["nodes"] = c.model.nodes.size();
        line["ops"] = c.op_types;
        if (!c.motifs.empty()) line["motifs"] = c.motifs;
        // The reference's own time on the case: the baseline of the report's speedup scores.
        const auto ref_start = std::chrono::steady_clock::now();
        try {
            (void)graph::run(c.model, c.inputs);
            line["reference_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - ref_start).count();
        } catch (const std::exception&) {
            // A case whose search failed may hold an integer division by zero: no baseline.
        }
        const auto e = judge_.evaluate(lane, c);
        const auto& results = e.results;
        // Signatures (before any reduction), then the record.
        for (std::size_t b = 0; b < results.size(); ++b) {
            const auto& r = results[b];
            nlohmann::json jr{{"outcome", to_string(r.outcome)},
                              {"detail", r.detail},
                              {"seconds", r.run.process.seconds},
                              {"graphnet_error_code", graphnet_error_code(r.outcome)}};
            if (r.run.status == run_status::ran) {
                jr["max_abs_error"] = r.judged.max_abs_error;
                jr["max_rel_error"] = r.judged.max_rel_error;
                if (r.judged.min_passing_level) jr["min_passing_level"] = *r.judged.min_passing_level;
                if (r.judged.passing_level) jr["passing_level"] = *r.judged.passing_level;
            }
            if (r.rewrites) {
                jr["rewrites"] = nlohmann::json::array();
                for (const auto& ev : *r.rewrites) jr["rewrites"].push_back(ev.json());
            }
            if (r.sig) {
                jr["signature"] = r.sig->id();
                line["signatures"].push_back(r.sig->json());
            }
            line["backends"][lane.backends[b]->name()] = jr;
        }
        for (const auto& s : e.pair_signatures) line["signatures"].push_back(s.json());
        if (!e.pairs.empty()) line["pairs"] = e.pairs;
        if (!e.truth_note.empty()) line["float64_oracle"] = e.truth_note;
        if (!line["signatures"].empty()) save_failing_case(c, lane, lane.scratch, results, line);
        if (o_.mutants > 0) run_mutants(lane, c, e, line);
        line["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - case_start).count();
        // A case that may join the corpus at the round's end is kept on disk until then
        // (a resumed campaign replays its rounds from the journal and these folders).
        if (o_.guide.mode != guide_mode::none && corpus_.novel(case_features(line))) {
            c.values.clear();
            io::write_case(c, o_.out / "corpus");
        }
        return line;
    }

    /// A guided round is over: its lines (journaled before or just now) update the
    /// corpus in index order; candidates not kept leave corpus/.
    void end_round(const std::vector<std::uint64_t>& round, std::map<std::uint64_t, nlohmann::json>& journaled) {
        std::vector<const nlohmann::json*> lines;
        for (const auto i : round) {
            if (const auto it = journaled.find(i); it != journaled.end()) {
                lines.push_back(&it->second);
            } else if (const auto jt = round_lines_.find(i); jt != round_lines_.end()) {
                lines.push_back(&jt->second);
            }
        }
        const auto folder = [&](const std::string& id) { return o_.out / "corpus" / id; };
        const auto kept = corpus_.absorb(lines, [&](const std::string& id) -> std::optional<io::generated_case> {
            if (!std::filesystem::exists(folder(id) / "model.onnx")) return std::nullopt;
            try {
                return read_corpus_case(folder(id));
            } catch (const std::exception&) {
                return std::nullopt;  // a folder cut by a kill: not kept
            }
        });
        const std::set<std::string> keep(kept.begin(), kept.end());
        for (const auto* l : lines) {
            const auto id = l->at("case").get<std::string>();
            std::error_code ec;
            if (!keep.contains(id)) std::filesystem::remove_all(folder(id), ec);
        }
        for (const auto i : round) {
            journaled.erase(i);
            round_lines_.erase(i);
        }
        detail::write_json(o_.out / "corpus.json", corpus_.json());
    }

    // --- metamorphic oracle ----------------------------------------------------
    /// Mutant `k` of case `c`: its chain is a pure function of the case and k.
    [[nodiscard]] std::optional<mutate::mutant> make_mutant(const io::generated_case& c, std::size_t k, nlohmann::json& jm) const {
        const auto seed = fnv1a(io::case_id(c.seed, c.index) + "/mutant/" + std::to_string(k));
        auto mo = o_.mutation;
        mo.steps = 1 + static_cast<std::size_t>(seed % std::max<std::size_t>(1, o_.mutation_max_steps));
        try {
            auto m = mutate::mutate_graph(c.model, c.inputs, seed, mo);
            if (!m) jm["skipped"] = "no place to apply the allowed mutations";
            return m;
        } catch (const std::exception& e) {
            jm["skipped"] = std::string("mutation failed: ") + e.what();
            return std::nullopt;
        }
    }

    /// Runs each mutant of `c` on the lane's backends and compares every backend with
    /// itself on the original (the metamorphic oracle); failures get signatures with
    /// oracle "metamorphic", and the mutant's own backend-vs-backend disagreements are
    /// kept where the original had none.
    void run_mutants(detail::lane& lane, const io::generated_case& c, const case_judge::evaluation& e, nlohmann::json& line) {
        line["mutants"] = nlohmann::json::array();
        const auto original_ops = graph::op_types(c.model);
        for (std::size_t k = 0; k < o_.mutants; ++k) {
            const std::string id = io::case_id(c.seed, c.index) + "_m" + std::to_string(k);
            nlohmann::json jm{{"k", k}, {"case", id}};
            const auto m = make_mutant(c, k, jm);
            if (!m) {
                line["mutants"].push_back(jm);
                continue;
            }
            jm["chain"] = m->chain_text();
            jm["class"] = std::string(mutate::to_string(m->numeric));
            // A mutant ONNX would refuse is a fault of a mutation, not of a backend: recorded, not run.
            const auto mc = mutate::as_case(c, *m);
            if (const auto problem = mutate::onnx_problem(mc.model, mc.values); !problem.empty()) {
                jm["skipped"] = "the mutant is not a valid ONNX model (a fault of the mutation, please report it): " + problem;
                line["mutants"].push_back(jm);
                continue;
            }
            bool new_ops = false;
            for (const auto& op : graph::op_types(m->model)) new_ops |= original_ops.count(op) == 0;
            // The mutant runs in a scratch folder of its own: the original's outputs stay for its record.
            struct scratch_swap {
                detail::lane& l;
                std::filesystem::path saved;
                ~scratch_swap() { l.scratch = saved; }
            } swap{lane, lane.scratch};
            lane.scratch = swap.saved / "mutant";
            const auto em = judge_.evaluate(lane, mc);
            std::vector<signature> found;
            for (std::size_t b = 0; b < em.results.size(); ++b) {
                const auto& r0 = e.results[b];
                const auto& r1 = em.results[b];
                std::string outcome;
                std::string detail;
                std::optional<outcome_class> failure;
                if (r0.run.status != run_status::ran || is_failure(r0.outcome)) {
                    outcome = "not_compared";
                    detail = "the original " + std::string(r0.run.status != run_status::ran ? "did not run" : "failed on its own");
                } else if (r1.run.status != run_status::ran) {
                    if (r1.run.status == run_status::unsupported && new_ops) {
                        outcome = "unsupported";  // the mutant uses an op the backend lacks
                    } else {
                        failure = r1.outcome == outcome_class::unsupported ? outcome_class::compile_failure : r1.outcome;
                    }
                    detail = r1.detail;
                } else {
                    const auto j = detail::judge_outputs(r1.run.outputs, r0.run.outputs, o_.level);
                    detail = j.detail;
                    auto acceptable = [](outcome_class x) { return x == outcome_class::pass || x == outcome_class::reference_precision; };
                    if (j.outcome == outcome_class::pass) {
                        outcome = "pass";
                    } else if (acceptable(r0.outcome) && acceptable(r1.outcome)) {
                        outcome = "reference_precision";  // both within the reference's tolerance: rounding, no one's bug
                    } else {
                        failure = j.outcome;
                    }
                }
                nlohmann::json jb{{"detail", detail}};
                if (failure) {
                    outcome = std::string(to_string(*failure));
                    signature s{lane.backends[b]->name(), *failure, "metamorphic", "mutation " + m->chain_text()};
                    if (r1.sig && r1.sig->where.rfind("op ", 0) == 0) s.where += ": " + r1.sig->where;
                    auto js = s.json();
                    js["case"] = id;
                    js["nodes"] = m->model.nodes.size();
                    if (r1.sig) js["reduce_as"] = r1.sig->id();  // the mutant's own failure, reducible alone
                    line["signatures"].push_back(js);
                    jb["signature"] = s.id();
                    found.push_back(s);
                }
                jb["outcome"] = outcome;
                jm["backends"][lane.backends[b]->name()] = jb;
            }
            // The mutant's disagreements between configurations, where the original's pair agreed.
            for (const auto& s : em.pair_signatures) {
                const auto it = e.pairs.find(s.backend);
                if (it != e.pairs.end() && it->contains("signature")) continue;
                auto js = s.json();
                js["case"] = id;
                js["nodes"] = m->model.nodes.size();
                line["signatures"].push_back(js);
                found.push_back(s);
            }
            if (!em.pairs.empty()) jm["pairs"] = em.pairs;
            if (!found.empty()) save_failing_mutant(c, *m, id, lane, em, jm);
            line["mutants"].push_back(jm);
        }
    }

    void save_failing_mutant(const io::generated_case& c, const mutate::mutant& m, const std::string& id, const detail::lane& lane,
                             const case_judge::evaluation& em, const nlohmann::json& jm) const {
        auto info = mutate::mutation_json(m, 0, io::case_id(c.seed, c.index));
        const auto folder = mutate::write_mutant(c, m, o_.out / "cases", id, info);
        nlohmann::json rj = jm;
        for (std::size_t b = 0; b < em.results.size(); ++b) {
            const auto& name = lane.backends[b]->name();
            auto& jb = rj["backends"][name];
            jb["stderr"] = em.results[b].run.process.err;
            jb["exit_code"] = em.results[b].run.process.exit_code;
            jb["signal"] = em.results[b].run.process.signal;
            jb["reference_outcome"] = to_string(em.results[b].outcome);
            if (em.results[b].run.status == run_status::ran) {
                const auto to = folder / "backends" / name;
                std::error_code ec;
                std::filesystem::create_directories(to, ec);
                std::filesystem::copy(lane.scratch / ("out_" + std::to_string(b)), to, std::filesystem::copy_options::overwrite_existing | std::filesystem::copy_options::recursive, ec);
            }
        }
        detail::write_json(folder / "result.json", rj);
    }

    void save_failing_case(const io::generated_case& c, detail::lane& lane, const std::filesystem::path& dir, const std::vector<backend_result>& results,
                           const nlohmann::json& line) const {
        const auto folder = io::write_case(c, o_.out / "cases");
        nlohmann::json rj = line;
        for (std::size_t b = 0; b < results.size(); ++b) {
            const auto& name = lane.backends[b]->name();
            auto& jb = rj["backends"][name];
            jb["stdout"] = results[b].run.process.out;
            jb["stderr"] = results[b].run.process.err;
            jb["exit_code"] = results[b].run.process.exit_code;
            jb["signal"] = results[b].run.process.signal;
            if (results[b].run.status == run_status::ran) {
                const auto to = folder / "backends" / name;
                std::error_code ec;
                std::filesystem::create_directories(to, ec);
                std::filesystem::copy(dir / ("out_" + std::to_string(b)), to, std::filesystem::copy_options::overwrite_existing | std::filesystem::copy_options::recursive, ec);
            }
        }
        detail::write_json(folder / "result.json", rj);
    }

    // --- summary ---------------------------------------------------------------
    nlohmann::json write_summary() const {
        summary_scope sc;
        sc.dir = o_.out;
        for (const auto& p : prototypes_) sc.backends.push_back(p->name());
        const auto first = o_.first, count = o_.count, index = o_.shard_index, shards = o_.shard_count;
        sc.includes = [=](std::uint64_t i) { return i >= first && i < first + count && (i - first) % shards == index; };
        sc.requested = shard_size(o_.count, o_.shard_index, o_.shard_count);
        sc.level = o_.level;
        sc.seed = o_.seed;
        sc.config_hash = o_.config.hash();
        sc.mutants = o_.mutants > 0;
        sc.known = o_.known;
        if (o_.shard_count > 1) sc.shard = {{"index", o_.shard_index}, {"count", o_.shard_count}};
        return campaign::write_summary(sc);
    }

public:
    /// What the backends reported they rewrote: per backend, its kinds by cases
    /// (optimizations first; insertions, layout changes and expansions after them).
    [[nodiscard]] static std::string rewrite_text(const nlohmann::json& rewrites, std::size_t rows = 40) {
        std::ostringstream os;
        for (const auto& [name, t] : rewrites.items()) {
            os << "\nrewrites by " << name << ": " << t["rewritten"].get<std::size_t>() << " of " << t["reported"].get<std::size_t>()
               << " reported graphs changed by an optimization, " << t.value("optimization_kinds", std::size_t{0})
               << " optimization kinds (fusion, elimination, folding, replacement)\n";
            std::size_t shown = 0;
            for (const auto& k : t["kinds"]) {
                if (shown++ == rows) {
                    os << "  ... " << t["kinds"].size() - rows << " more kinds in summary.json\n";
                    break;
                }
                char buf[48];
                std::snprintf(buf, sizeof buf, "  %6zu cases  %-12s", k["cases"].get<std::size_t>(), k["class"].get<std::string>().c_str());
                os << buf << k["kind"].get<std::string>() << "  (first: case " << k["first_case"].get<std::string>() << ")\n";
            }
        }
        return os.str();
    }

    /// The readable summary: one outcome table, then the signatures.
    [[nodiscard]] static std::string summary_text(const nlohmann::json& s) {
        std::ostringstream os;
        os << "tensoracle campaign: " << s["cases"].get<std::size_t>() << " of " << s["requested"].get<std::uint64_t>()
           << " cases (seed " << s["seed"].get<std::uint64_t>() << ", config " << s["config_hash"].get<std::string>() << ", level "
           << s["level"].get<double>() << ")\n";
        if (s["generation_errors"].get<std::size_t>() > 0) os << "generation errors: " << s["generation_errors"].get<std::size_t>() << "\n";
        if (s.value("reference_skipped", std::size_t{0}) > 0) {
            os << "reference_skipped: " << s["reference_skipped"].get<std::size_t>() << " (over the memory budget, --memory-limit)\n";
        }
        if (s.contains("rewrites")) os << rewrite_text(s["rewrites"]);
        if (s.contains("guide")) {
            const auto& g = s["guide"];
            os << "\nguided by rewrites: " << g.value("features", std::size_t{0}) << " features";
            if (g.contains("corpus")) os << ", corpus of " << g["corpus"].get<std::size_t>() << " cases";
            os << "; new features per 100 cases:";
            for (const auto& [how, b] : g["by"].items()) {
                const auto n = b["cases"].get<std::size_t>();
                char buf[96];
                std::snprintf(buf, sizeof buf, " %s %.1f (%zu cases)", how.c_str(), n ? 100.0 * static_cast<double>(b["new_features"].get<std::size_t>()) / static_cast<double>(n) : 0.0, n);
                os << buf;
            }
            os << "\n";
        }
        auto table = [&](const nlohmann::json& rows, const char* title) {
            std::vector<std::string> cols;
            for (const auto c : all_outcomes) {
                bool any = false;
                for (const auto& [name, r] : rows.items()) any |= r["outcomes"].value(std::string(to_string(c)), 0) > 0;
                if (any || c == outcome_class::pass) cols.emplace_back(to_string(c));
            }
            char buf[64];
            std::snprintf(buf, sizeof buf, "%-34s", title);
            os << '\n' << buf;
            for (const auto& c : cols) {
                std::snprintf(buf, sizeof buf, " %*s", static_cast<int>(std::max<std::size_t>(c.size(), 5)), c.c_str());
                os << buf;
            }
            os << '\n';
            for (const auto& [name, r] : rows.items()) {
                std::snprintf(buf, sizeof buf, "%-34s", name.c_str());
                os << buf;
                for (const auto& c : cols) {
                    std::snprintf(buf, sizeof buf, " %*zu", static_cast<int>(std::max<std::size_t>(c.size(), 5)), r["outcomes"].value(c, std::size_t{0}));
                    os << buf;
                }
                os << '\n';
            }
        };
        table(s["backends"], "backend");
        if (s.contains("pairs")) table(s["pairs"], "backend vs backend");
        if (s.contains("metamorphic")) {
            const auto invalid = s["mutants"].value("invalid", std::size_t{0});
            os << "\nmutants: " << s["mutants"]["run"].get<std::size_t>() << " run, " << s["mutants"]["skipped"].get<std::size_t>() - invalid
               << " skipped (no place to apply the mutations)";
            if (invalid > 0) os << ", " << invalid << " not valid for ONNX (a fault of a mutation: results.jsonl says which)";
            os << "\n";
            // Outcome names of the metamorphic oracle that are not outcome classes.
            nlohmann::json rows = s["metamorphic"];
            table(rows, "metamorphic (mutant vs original)");
            for (const auto& [name, r] : rows.items()) {
                for (const char* extra : {"not_compared"}) {
                    if (r["outcomes"].value(extra, std::size_t{0}) > 0) os << "  " << name << ": " << r["outcomes"][extra].get<std::size_t>() << " " << extra << "\n";
                }
            }
            if (s.contains("mutant_pairs")) table(s["mutant_pairs"], "backend vs backend on mutants");
        }
        os << "\nsignatures: " << s["signatures"].size();
        if (s.contains("triage")) {
            os << " (" << s["triage"].value("new", 0) << " new, " << s["triage"].value("known", 0) << " known, ";
            if (s["triage"].value("judged", 0) > 0) os << s["triage"].value("judged", 0) << " judged not bugs, ";
            os << s["triage"].value("limitation", 0) << " limitations: valid models a system refuses)";
        }
        os << "\n";
        std::map<std::string, std::size_t> limitations;  // collapsed: "backend outcome" -> cases
        for (const auto& g : s["signatures"]) {
            const auto label = g.value("triage", std::string("new"));
            if (label == "limitation") {
                limitations[g["backend"].get<std::string>() + " " + g["outcome"].get<std::string>()] += g["count"].get<std::size_t>();
                continue;
            }
            os << "  " << (label == "known" ? "known  " : label == "judged" ? "judged " : "NEW    ") << g["id"].get<std::string>() << "  " << g["count"].get<std::size_t>() << "x  " << g["backend"].get<std::string>() << "  "
               << g["outcome"].get<std::string>() << "  " << g["where"].get<std::string>() << "  (smallest: cases/" << g["case"].get<std::string>()
               << ", " << g["case_nodes"].get<std::size_t>() << " nodes)" << (g.contains("finding") ? "  finding " + g["finding"].get<std::string>() : std::string()) << "\n";
            if (g.contains("bundle")) {
                os << "      reduced to " << g["reduced_nodes"].get<std::size_t>() << " node(s): " << g["bundle"].get<std::string>() << "/\n";
            } else if (g.contains("reduction")) {
                os << "      " << g["reduction"].get<std::string>() << "\n";
            }
        }
        if (!limitations.empty()) {
            os << "  limitations (signatures collapsed, cases):";
            for (const auto& [what, n] : limitations) os << "  " << what << " " << n;
            os << "\n";
        }
        return os.str();
    }

private:
    campaign_options o_;
    case_judge judge_;
    gen::generator gen_;
    std::vector<std::unique_ptr<backend>> prototypes_;
    std::mutex mutex_;
    std::ofstream journal_;
    campaign_progress progress_;
    std::set<std::string> seen_signatures_;
    rewrite_corpus corpus_;
    std::map<std::uint64_t, nlohmann::json> round_lines_;  ///< a guided round's new lines, until end_round
};

/// Each signature whose reduced bundle is in `dir`/reduced/<id>/ (complete: it has its
/// manifest) names it, with its size.
inline void attach_bundles(const std::filesystem::path& dir, nlohmann::json& summary) {
    for (auto& g : summary["signatures"]) {
        const auto bundle = dir / "reduced" / g["id"].get<std::string>();
        if (!std::filesystem::exists(bundle / "manifest.json")) continue;
        std::ifstream f(bundle / "manifest.json");
        const auto m = nlohmann::json::parse(f, nullptr, false);
        if (!m.is_object() || !m.contains("reduced")) continue;
        g["bundle"] = "reduced/" + g["id"].get<std::string>();
        g["reduced_nodes"] = m["reduced"]["nodes"];
        g.erase("reduction");
    }
}

/// Groups a campaign folder's results.jsonl into summary.json and summary.txt.
inline nlohmann::json write_summary(const summary_scope& sc) {
    std::map<std::string, std::map<std::string, std::size_t>> outcomes;
    std::map<std::string, std::map<std::string, std::size_t>> pair_outcomes;
    struct group {
        nlohmann::json first;
        std::size_t count = 0;
        std::string smallest_case;
        std::size_t smallest_nodes = SIZE_MAX;
    };
    std::map<std::string, group> groups;
    // Rewrite feedback per backend: kind -> its class, the cases it fired in, the first such case.
    struct rewrite_kind {
        std::string what, first_case;  ///< the case of smallest index it fired in (jobs finish in any order)
        std::size_t cases = 0, events = 0;
        std::uint64_t first_index = UINT64_MAX;
    };
    struct rewrite_tally {
        std::size_t reported = 0, rewritten = 0;
        std::map<std::string, rewrite_kind> kinds;
    };
    std::map<std::string, rewrite_tally> rewrites;
    std::map<std::string, std::size_t> motif_cases;  ///< motif instance ("name" or "name/variant") -> cases holding one
    // Guided campaigns: each case's derivation and features, to count what each way of making cases found first.
    std::vector<std::tuple<std::uint64_t, std::string, std::vector<std::string>>> derivations;
    bool guided = false;
    std::size_t cases = 0, generation_errors = 0, reference_skipped = 0, mutants = 0, mutants_skipped = 0, mutants_invalid = 0;
    std::map<std::string, std::map<std::string, std::size_t>> metamorphic, mutant_pair_outcomes;
    double seconds = 0.0;
    std::set<std::uint64_t> seen_index;
    for (const auto& b : sc.backends) {
        for (const auto c : all_outcomes) outcomes[b][std::string(to_string(c))] = 0;
    }
    std::ifstream f(sc.dir / "results.jsonl");
    std::string text;
    while (std::getline(f, text)) {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(text);
        } catch (const std::exception&) {
            continue;
        }
        if (!detail::is_result_line(j)) continue;
        const auto i = j.value("index", std::uint64_t{0});
        if (!sc.includes(i) || !seen_index.insert(i).second) continue;
        ++cases;
        seconds += j.value("seconds", 0.0);
        if (j.contains("generation_error")) ++generation_errors;
        if (j.contains("reference_skipped")) ++reference_skipped;
        guided = guided || j.contains("derivation");
        derivations.emplace_back(i, j.contains("derivation") ? j["derivation"].value("by", std::string("fresh")) : std::string("fresh"), case_features(j));
        if (j.contains("motifs")) {
            std::set<std::string> seen;
            for (const auto& m : j["motifs"]) {
                if (seen.insert(m.get<std::string>()).second) ++motif_cases[m.get<std::string>()];
            }
        }
        for (const auto& [name, r] : j["backends"].items()) {
            ++outcomes[name][r["outcome"].get<std::string>()];
            if (!r.contains("rewrites")) continue;
            auto& t = rewrites[name];
            ++t.reported;
            std::set<std::string> seen;
            bool optimized = false;
            for (const auto& ev : r["rewrites"]) {
                const auto kind = ev.value("kind", std::string());
                auto& k = t.kinds[kind];
                k.what = ev.value("class", std::string());
                ++k.events;
                const auto what = rewrite_class_named(k.what);
                optimized = optimized || (what && is_optimization(*what));
                if (!seen.insert(kind).second) continue;
                ++k.cases;
                if (i < k.first_index) {
                    k.first_index = i;
                    k.first_case = j.value("case", std::string());
                }
            }
            if (optimized) ++t.rewritten;
        }
        if (j.contains("pairs")) {
            for (const auto& [name, r] : j["pairs"].items()) ++pair_outcomes[name][r["outcome"].get<std::string>()];
        }
        if (j.contains("mutants")) {
            for (const auto& jm : j["mutants"]) {
                ++mutants;
                if (jm.contains("skipped")) {
                    ++mutants_skipped;
                    if (jm["skipped"].get<std::string>().rfind("the mutant is not a valid", 0) == 0) ++mutants_invalid;
                    continue;
                }
                for (const auto& [name, r] : jm["backends"].items()) ++metamorphic[name][r["outcome"].get<std::string>()];
                if (jm.contains("pairs")) {
                    for (const auto& [name, r] : jm["pairs"].items()) ++mutant_pair_outcomes[name][r["outcome"].get<std::string>()];
                }
            }
        }
        for (const auto& s : j["signatures"]) {
            auto& g = groups[s["id"].get<std::string>()];
            if (g.count++ == 0) g.first = s;
            // A mutant's signature names the mutant's folder and size.
            const std::size_t nodes = s.value("nodes", j.value("nodes", std::size_t{0}));
            const auto id = s.value("case", j["case"].get<std::string>());
            if (nodes < g.smallest_nodes || (nodes == g.smallest_nodes && id < g.smallest_case)) {
                g.smallest_nodes = nodes;
                g.smallest_case = id;
            }
        }
    }
    nlohmann::json s;
    s["schema"] = "tensoracle.campaign.summary/1";
    s["cases"] = cases;
    s["requested"] = sc.requested;
    s["generation_errors"] = generation_errors;
    s["reference_skipped"] = reference_skipped;
    s["case_seconds"] = seconds;
    s["level"] = sc.level;
    s["seed"] = sc.seed;
    s["config_hash"] = sc.config_hash;
    if (!sc.shard.is_null()) s["shard"] = sc.shard;
    if (guided || std::filesystem::exists(sc.dir / "corpus.json")) {
        // What each way of making cases found first, in index order: a feature (rewrite
        // kind, kind set, outcome, signature; campaign/corpus.hpp) counts for the case of
        // smallest index that showed it.
        std::sort(derivations.begin(), derivations.end());
        std::set<std::string> seen;
        nlohmann::json by = nlohmann::json::object();
        for (const auto& [index, how, features] : derivations) {
            auto& b = by[how];
            if (b.is_null()) b = {{"cases", 0}, {"new_features", 0}};
            b["cases"] = b["cases"].get<std::size_t>() + 1;
            std::size_t fresh = 0;
            for (const auto& feature : features) fresh += seen.insert(feature).second ? 1 : 0;
            b["new_features"] = b["new_features"].get<std::size_t>() + fresh;
        }
        s["guide"]["by"] = by;
        s["guide"]["features"] = seen.size();
        if (std::filesystem::exists(sc.dir / "corpus.json")) {
            try {
                std::ifstream cf(sc.dir / "corpus.json");
                const auto cj = nlohmann::json::parse(cf);
                s["guide"]["corpus"] = cj.at("entries").size();
                s["guide"]["mode"] = cj.at("guide").value("mode", std::string("rewrites"));
            } catch (const std::exception&) {
                // a corpus.json cut by a kill: the counts above still hold
            }
        }
    }
    for (const auto& [name, m] : outcomes) s["backends"][name]["outcomes"] = m;
    for (const auto& [name, m] : pair_outcomes) s["pairs"][name]["outcomes"] = m;
    for (const auto& [name, t] : rewrites) {
        std::vector<std::pair<std::string, const rewrite_kind*>> kinds;
        for (const auto& [kind, k] : t.kinds) kinds.emplace_back(kind, &k);
        // Optimizations first (what rewrite reach counts), then by how many cases each fired in.
        auto rank = [](const rewrite_kind& k) {
            const auto what = rewrite_class_named(k.what);
            return what && !is_optimization(*what) ? 1 : 0;
        };
        std::sort(kinds.begin(), kinds.end(), [&](const auto& x, const auto& y) {
            if (rank(*x.second) != rank(*y.second)) return rank(*x.second) < rank(*y.second);
            return x.second->cases != y.second->cases ? x.second->cases > y.second->cases : x.first < y.first;
        });
        nlohmann::json jt{{"reported", t.reported}, {"rewritten", t.rewritten}, {"kinds", nlohmann::json::array()}};
        std::size_t optimization_kinds = 0;
        for (const auto& [kind, k] : kinds) {
            optimization_kinds += rank(*k) == 0 ? 1 : 0;
            jt["kinds"].push_back({{"kind", kind}, {"class", k->what}, {"cases", k->cases}, {"events", k->events}, {"first_case", k->first_case}});
        }
        jt["optimization_kinds"] = optimization_kinds;
        s["rewrites"][name] = jt;
    }
    if (!motif_cases.empty()) s["motifs"] = motif_cases;
    if (sc.mutants) {
        s["mutants"] = {{"run", mutants - mutants_skipped}, {"skipped", mutants_skipped}, {"invalid", mutants_invalid}};
        for (const auto& [name, m] : metamorphic) s["metamorphic"][name]["outcomes"] = m;
        for (const auto& [name, m] : mutant_pair_outcomes) s["mutant_pairs"][name]["outcomes"] = m;
    }
    // Triage: new wrong results first, then other new failures, known findings, limitations;
    // by count within each.
    for (auto& [id, g] : groups) {
        g.first["id"] = id;
        g.first["triage"] = triage_label(g.first, sc.known);
    }
    std::vector<std::pair<std::string, const group*>> sorted;
    for (const auto& [id, g] : groups) sorted.emplace_back(id, &g);
    std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
        const int rx = triage_rank(x.second->first), ry = triage_rank(y.second->first);
        if (rx != ry) return rx < ry;
        return x.second->count != y.second->count ? x.second->count > y.second->count : x.first < y.first;
    });
    s["signatures"] = nlohmann::json::array();
    std::map<std::string, std::size_t> triage_counts{{"new", 0}, {"known", 0}, {"judged", 0}, {"limitation", 0}};
    for (const auto& [id, g] : sorted) {
        const auto label = g->first["triage"].get<std::string>();
        ++triage_counts[label];
        s["signatures"].push_back({{"id", id},
                                   {"triage", label},
                                   {"backend", g->first["backend"]},
                                   {"outcome", g->first["outcome"]},
                                   {"oracle", g->first["oracle"]},
                                   {"where", g->first["where"]},
                                   {"count", g->count},
                                   {"case", g->smallest_case},
                                   {"case_nodes", g->smallest_nodes}});
        if (g->first.contains("reduce_as")) s["signatures"].back()["reduce_as"] = g->first["reduce_as"];
        if (label == "known" || label == "judged") s["signatures"].back()["finding"] = sc.known.by_signature.at(id);
    }
    s["triage"] = triage_counts;
    attach_bundles(sc.dir, s);
    detail::write_json(sc.dir / "summary.json", s);
    std::ofstream t(sc.dir / "summary.txt");
    t << campaign_runner::summary_text(s);
    return s;
}

/// Runs (or resumes) a campaign; see campaign_runner.
inline nlohmann::json run_campaign(campaign_options o, std::vector<std::unique_ptr<backend>> backends,
                                   const std::function<void(const campaign_progress&)>& on_progress = {},
                                   const std::atomic<bool>* stop = nullptr) {
    campaign_runner r(std::move(o), std::move(backends));
    return r.run(on_progress, stop);
}

}  // namespace tensoracle::campaign
