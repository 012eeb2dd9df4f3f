// tensoracle: test-case reduction. A failing case (graph + inputs) is made small
// while a check says it still fails the same way:
//
//   signature_check check(std::move(backends), judge_options{}, scratch);   // or command_check
//   const auto r = reduce(original, check, reduce_options{});              // r.reduced: a few nodes
//   write_bundle(r, check, "repro/");                                       // model.onnx, manifest.json, repro.cpp, README.md
//
// Passes, each repeated until nothing changes or the budget is spent:
//   1. node removal, delta-debugging style (ddmin over chunks of nodes in
//      topological order, so chunks are mostly connected), then one node at a time.
//      A removed node's consumers read a new graph input *frozen* to the value the
//      reference computed there (Polygraphy's approach), or, when that loses the
//      failure, the removed node's own input of the same type and shape;
//   2. graph outputs dropped (and the nodes only they needed);
//   3. attributes back to their defaults;
//   4. shapes: input and weight dims halved (a prefix slice), all dims of one size
//      together and then one axis at a time;
//   5. values: inputs and weights set to zeros, ones, small integers, and chunks of
//      elements zeroed, keeping the few that matter.
// Every candidate is validated (graph rules, the ops' constraints and shape
// inference, through a reference run that also gives its expected outputs) before
// the check sees it, so a reduced case is always a valid one. Candidates are tried
// in a fixed order: the same case and check give the same reduction.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tensoracle/campaign/campaign.hpp"
#include "tensoracle/core/rng.hpp"
#include "tensoracle/version.hpp"

namespace tensoracle::campaign {

using value_map = std::map<std::string, tensor, std::less<>>;

/// The case `g` fed with `inputs`, validated and evaluated by the reference: its
/// outputs, every intermediate value, and its interface's dtypes and shapes made
/// exact. Throws tensoracle::error when the graph is invalid or cannot run.
[[nodiscard]] inline io::generated_case evaluate_case(graph::graph g, value_map inputs, std::uint64_t seed = 0, std::uint64_t index = 0) {
    g.validate();
    for (auto& in : g.inputs) {
        const auto it = inputs.find(in.name);
        if (it == inputs.end()) throw error("tensoracle::campaign::evaluate_case", "no data for graph input '" + in.name + "'");
        in.type = it->second.element_dtype();
        in.shape = it->second.shape();
    }
    auto r = graph::run(g, inputs, {.record_intermediates = true});
    for (auto& out : g.outputs) {
        const auto& t = r.values.at(out.name);
        out.type = t.element_dtype();
        out.shape = t.shape();
    }
    io::generated_case c;
    c.seed = seed;
    c.index = index;
    c.values = std::move(r.values);
    for (const auto& [name, t] : g.initializers) c.values.insert_or_assign(name, t);
    for (const auto& [name, t] : inputs) c.values.insert_or_assign(name, t);
    for (const auto& out : g.outputs) c.outputs.emplace(out.name, c.values.at(out.name));
    for (const auto& n : g.nodes) c.op_types.push_back(n.op_type);
    c.model = std::move(g);
    c.inputs = std::move(inputs);
    return c;
}

namespace detail {
/// `c` in the ONNX test layout: `dir`/model.onnx, `dir`/test_data_set_0/ with
/// input_<k>.pb and our output_<k>.pb (the folder is created, not emptied).
inline void write_test_layout(const io::generated_case& c, const std::filesystem::path& dir) {
    const auto data = dir / "test_data_set_0";
    std::error_code ec;
    std::filesystem::create_directories(data, ec);
    if (ec) throw error("tensoracle::campaign::write_test_layout", "cannot create " + data.string() + ": " + ec.message());
    io::save_model(c.model, dir / "model.onnx");
    for (std::size_t k = 0; k < c.model.inputs.size(); ++k) {
        io::save_tensor(c.inputs.at(c.model.inputs[k].name), data / ("input_" + std::to_string(k) + ".pb"), c.model.inputs[k].name);
    }
    for (std::size_t k = 0; k < c.model.outputs.size(); ++k) {
        io::save_tensor(c.outputs.at(c.model.outputs[k].name), data / ("output_" + std::to_string(k) + ".pb"), c.model.outputs[k].name);
    }
}
}  // namespace detail

/// Decides whether a candidate still fails the way the original did.
class failure_check {
public:
    struct verdict {
        bool fails = false;    ///< the failure being reduced is there
        bool hang = false;     ///< the check ran past its time-out
        std::string observed;  ///< what happened, in a few words
    };
    virtual ~failure_check() = default;
    /// Runs the original once; fixes which failure the reduction keeps (from this
    /// first run unless it was chosen up front). `fails` false: it did not fail.
    virtual verdict run_original(const io::generated_case& c) = 0;
    virtual verdict run(const io::generated_case& c) = 0;
    /// The failure kept, in words ("onnxruntime mismatch op Sigmoid f32", "exit code 3").
    [[nodiscard]] virtual std::string failure() const = 0;
    /// The failure and how it was checked, for the bundle's manifest.
    [[nodiscard]] virtual nlohmann::json manifest() const = 0;
};

/// The campaign's judgement as the check: the candidate fails while one of its
/// signatures (case_judge, on the same backends) is the original's.
class signature_check final : public failure_check {
public:
    /// `backends`: one for a backend's signature, two (configurations of one system)
    /// for a "a vs b" one. `signature_id` empty: the original's first signature.
    signature_check(std::vector<std::unique_ptr<backend>> backends, judge_options o, std::filesystem::path scratch,
                    std::string signature_id = {})
        : judge_(o), target_id_(std::move(signature_id)) {
        if (backends.empty()) throw error("tensoracle::campaign::signature_check", "no backend");
        lane_.backends = std::move(backends);
        lane_.scratch = std::move(scratch);
    }

    verdict run_original(const io::generated_case& c) override {
        auto e = judge_.evaluate(lane_, c);
        const auto sigs = e.signatures();
        auto v = observe(e);
        const bool chosen = !target_id_.empty();
        if (!chosen && !sigs.empty()) target_id_ = sigs.front().id();
        for (const auto& s : sigs) {
            if (s.id() == target_id_) target_ = s;
        }
        v.fails = target_.has_value();
        if (chosen && !v.fails && !sigs.empty()) {
            std::string found;
            for (const auto& s : sigs) found += (found.empty() ? "" : ", ") + s.id() + " (" + s.backend + " " + std::string(to_string(s.outcome)) + " " + s.where + ")";
            v.observed += "; signature " + target_id_ + " is not among its signatures: " + found +
                          " (another --level, --no-localize or backend than the campaign's?)";
        }
        if (v.fails) last_failing_ = std::move(e);
        return v;
    }

    verdict run(const io::generated_case& c) override {
        if (!target_) throw error("tensoracle::campaign::signature_check", "run before run_original found the failure");
        auto e = judge_.evaluate(lane_, c);
        auto v = observe(e);
        bool exact = false;
        std::optional<signature> relaxed;
        for (const auto& s : e.signatures()) {
            exact |= s.id() == target_->id();
            if (!relaxed && same_unlocalized_failure(s)) relaxed = s;
        }
        v.fails = exact || relaxed.has_value();
        if (v.fails) {
            if (!exact) v.observed += " (as " + relaxed->where + ")";
            relaxed_ = exact ? std::nullopt : relaxed;
            last_failing_ = std::move(e);
        }
        return v;
    }

    /// An original whose failure could not be localized has the op set for a place
    /// ("ops Add,Relu"), which any removal changes. Such a failure is kept while the same
    /// backend fails with the same class and oracle on a subset of the ops of the place
    /// kept so far, or at one of them once the smaller graph localizes it ("op Relu f32"),
    /// after which that place is kept exactly: the failure cannot drift to another op.
    [[nodiscard]] bool same_unlocalized_failure(const signature& s) const {
        if (!target_ || target_->where.rfind("ops ", 0) != 0) return false;
        const signature& base = relaxed_ ? *relaxed_ : *target_;
        if (base.where.rfind("ops ", 0) != 0) return s.id() == base.id();
        if (s.backend != base.backend || s.outcome != base.outcome || s.oracle != base.oracle) return false;
        auto op_set = [](const std::string& where) {
            std::set<std::string> out;
            std::string list;
            if (where.rfind("ops ", 0) == 0) {
                list = where.substr(4);
            } else if (where.rfind("op ", 0) == 0) {
                list = where.substr(3, where.find(' ', 3) - 3);
            } else {
                return out;
            }
            std::stringstream ss(list);
            for (std::string op; std::getline(ss, op, ',');) out.insert(op);
            return out;
        };
        const auto mine = op_set(base.where), theirs = op_set(s.where);
        return !theirs.empty() && std::includes(mine.begin(), mine.end(), theirs.begin(), theirs.end());
    }
    /// The signature the reduced case has when the original's was unlocalized and changed.
    [[nodiscard]] const std::optional<signature>& reduced_signature() const noexcept { return relaxed_; }

    [[nodiscard]] std::string failure() const override {
        return target_ ? target_->backend + " " + std::string(to_string(target_->outcome)) + " " + target_->where : "(none yet)";
    }

    [[nodiscard]] nlohmann::json manifest() const override {
        nlohmann::json j;
        j["check"] = "signature";
        j["level"] = judge_.options().level;
        j["timeout_seconds"] = judge_.options().timeout_seconds;
        if (target_) j["signature"] = target_->json();
        if (relaxed_) j["reduced_signature"] = relaxed_->json();  // the unlocalized original's, as the reduced case has it
        nlohmann::json b = nlohmann::json::array();
        for (std::size_t k = 0; k < lane_.backends.size(); ++k) {
            nlohmann::json jb{{"name", lane_.backends[k]->name()}};
            if (last_failing_ && k < last_failing_->results.size()) {
                const auto& r = last_failing_->results[k];
                jb["outcome"] = to_string(r.outcome);
                jb["detail"] = r.detail;
                if (r.run.status == run_status::ran) {
                    jb["max_abs_error"] = r.judged.max_abs_error;
                    jb["max_rel_error"] = r.judged.max_rel_error;
                    if (r.judged.min_passing_level) jb["min_passing_level"] = *r.judged.min_passing_level;
                }
                jb["stderr"] = r.run.process.err;
            }
            b.push_back(std::move(jb));
        }
        j["backends"] = b;
        return j;
    }

    [[nodiscard]] const std::optional<signature>& target() const noexcept { return target_; }
    [[nodiscard]] const std::vector<std::unique_ptr<backend>>& backends() const noexcept { return lane_.backends; }
    [[nodiscard]] const judge_options& options() const noexcept { return judge_.options(); }

private:
    /// What the backends did, before deciding whether it is the failure.
    [[nodiscard]] verdict observe(const case_judge::evaluation& e) const {
        verdict v;
        for (std::size_t k = 0; k < e.results.size(); ++k) {
            v.observed += (v.observed.empty() ? "" : "; ") + lane_.backends[k]->name() + " " + std::string(to_string(e.results[k].outcome));
            v.hang |= e.results[k].outcome == outcome_class::hang;
        }
        for (const auto& p : e.pair_signatures) v.observed += "; " + p.backend + " " + std::string(to_string(p.outcome));
        return v;
    }

    case_judge judge_;
    detail::lane lane_;
    std::string target_id_;
    std::optional<signature> target_, relaxed_;
    std::optional<case_judge::evaluation> last_failing_;
};

/// Polygraphy-style: any command is the check. It gets the candidate in the ONNX
/// test layout ({model} = DIR/model.onnx, {inputs} = DIR/test_data_set_0 with
/// input_<k>.pb and our output_<k>.pb, {dir} = DIR); exit 0 passes, a non-zero exit
/// (or a signal N, read as 128+N) fails, narrowed by `fail_code` and `fail_regex`
/// (searched in stdout and stderr). Past the time-out is neither: reported as a hang.
class command_check final : public failure_check {
public:
    command_check(std::vector<std::string> command, std::filesystem::path scratch, double timeout_seconds = 10.0,
                  std::optional<int> fail_code = std::nullopt, std::string fail_regex = {})
        : command_(std::move(command)), scratch_(std::move(scratch)), timeout_(timeout_seconds), fail_code_(fail_code),
          regex_text_(std::move(fail_regex)) {
        const char* where = "tensoracle::campaign::command_check";
        if (command_.empty()) throw error(where, "empty command");
        if (!(timeout_ > 0)) throw error(where, "the time-out must be positive");
        if (!regex_text_.empty()) {
            try {
                regex_ = std::regex(regex_text_);
            } catch (const std::regex_error& e) {
                throw error(where, "--fail-regex '" + regex_text_ + "' is not a regular expression: " + e.what());
            }
        }
    }

    verdict run_original(const io::generated_case& c) override {
        auto v = run(c);
        original_ = v.observed;
        return v;
    }

    verdict run(const io::generated_case& c) override {
        detail::reset_dir(scratch_);
        detail::write_test_layout(c, scratch_);
        std::vector<std::string> argv;
        for (const auto& w : command_) {
            argv.push_back(detail::substitute(w, {{"{model}", (scratch_ / "model.onnx").string()},
                                                  {"{inputs}", (scratch_ / "test_data_set_0").string()},
                                                  {"{dir}", scratch_.string()}}));
        }
        const auto p = run_process(argv, process_options::with_timeout(timeout_));
        verdict v;
        switch (p.kind) {
            case exit_kind::not_started:
                throw backend_unavailable("the check command", p.error_message);
            case exit_kind::timed_out:
                v.hang = true;
                v.observed = "timed out after " + std::to_string(timeout_) + " s";
                return v;
            case exit_kind::exited:
                v.observed = "exit code " + std::to_string(p.exit_code);
                break;
            case exit_kind::signalled:
                v.observed = "signal " + std::to_string(p.signal);
                break;
        }
        const int code = p.kind == exit_kind::exited ? p.exit_code : 128 + p.signal;
        v.fails = code != 0 && (!fail_code_ || code == *fail_code_) && (regex_text_.empty() || matches(p.out) || matches(p.err));
        if (v.fails) last_stderr_ = p.err;
        return v;
    }

    [[nodiscard]] std::string failure() const override {
        std::string s = original_.empty() ? "a failing exit" : original_;
        if (fail_code_) s += " (required: exit code " + std::to_string(*fail_code_) + ")";
        if (!regex_text_.empty()) s += " (required: output matching '" + regex_text_ + "')";
        return s;
    }

    [[nodiscard]] nlohmann::json manifest() const override {
        nlohmann::json j{{"check", "command"}, {"command", command_}, {"timeout_seconds", timeout_}, {"original", original_}, {"stderr", last_stderr_}};
        if (fail_code_) j["fail_code"] = *fail_code_;
        if (!regex_text_.empty()) j["fail_regex"] = regex_text_;
        return j;
    }

    [[nodiscard]] const std::vector<std::string>& command() const noexcept { return command_; }

private:
    /// Line by line: libstdc++'s matcher recurses per character, so one search over a
    /// long log could exhaust the stack.
    [[nodiscard]] bool matches(const std::string& text) const {
        std::istringstream is(text);
        for (std::string line; std::getline(is, line);) {
            if (std::regex_search(line, regex_)) return true;
        }
        return false;
    }

    std::vector<std::string> command_;
    std::filesystem::path scratch_;
    double timeout_;
    std::optional<int> fail_code_;
    std::string regex_text_;
    std::regex regex_;
    std::string original_, last_stderr_;
};

/// The original does not fail (or fails otherwise): nothing to reduce.
class original_does_not_fail : public error {
public:
    using error::error;
};

struct reduce_options {
    std::size_t max_calls = 2000;         ///< check runs (each repeat counts)
    double time_limit_seconds = 600.0;    ///< stop trying candidates after this
    /// Runs of the original to measure how reliably it fails: three, and ten when one passes.
    /// A flaky failure is then checked `repeats` times per candidate (it fails if any run does),
    /// enough to miss it with at most 5% probability (at most 20).
    unsigned measure_runs = 3;
    unsigned repeats = 0;  ///< 0: from the measured rate
    bool shapes = true, attributes = true, values = true;
};

struct reduce_progress {
    std::string phase;
    std::size_t calls = 0, nodes = 0, accepted = 0;
    double seconds = 0.0;
};

struct reduce_result {
    io::generated_case original, reduced;
    std::string failure;                 ///< the kept failure, in words
    double failure_rate = 1.0;           ///< of the original, over `measured` runs
    unsigned measured = 0, repeats = 1;
    std::size_t calls = 0, candidates = 0, invalid = 0, hangs = 0;
    bool out_of_budget = false;
    double seconds = 0.0;
    std::vector<std::string> steps;      ///< accepted reductions, in order
};

namespace detail {

/// Elements of a tensor's interface counted for "size".
[[nodiscard]] inline std::size_t element_total(const io::generated_case& c) {
    std::size_t n = 0;
    for (const auto& [name, t] : c.inputs) n += t.size();
    for (const auto& [name, t] : c.model.initializers) n += t.size();
    return n;
}

/// The first `keep` entries of `t` along `axis` (a prefix slice).
[[nodiscard]] inline tensor prefix_slice(const tensor& t, std::size_t axis, std::size_t keep) {
    auto dims = t.shape();
    const std::size_t outer = std::accumulate(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(axis), std::size_t{1}, std::multiplies<>());
    const std::size_t inner = std::accumulate(dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, dims.end(), std::size_t{1}, std::multiplies<>());
    const std::size_t old = dims[axis];
    dims[axis] = keep;
    const auto bytes = t.to_bytes();
    const std::size_t width = t.size() == 0 ? 0 : bytes.size() / t.size();
    std::vector<std::byte> out;
    out.reserve(outer * keep * inner * width);
    for (std::size_t o = 0; o < outer; ++o) {
        const auto* from = bytes.data() + (o * old * inner) * width;
        out.insert(out.end(), from, from + keep * inner * width);
    }
    return tensor::from_bytes(t.element_dtype(), dims, out);
}

/// `t` with its elements in [lo, hi) replaced by `value` (cast to its dtype).
[[nodiscard]] inline tensor with_elements(const tensor& t, std::size_t lo, std::size_t hi, double value) {
    auto v = t.to<double>();
    for (std::size_t i = lo; i < hi && i < v.size(); ++i) v.data()[i] = value;
    return tensor::from_array_as(v, t.element_dtype());
}

[[nodiscard]] inline bool all_equal(const tensor& t, std::size_t lo, std::size_t hi, double value) {
    for (std::size_t i = lo; i < hi; ++i) {
        if (t.value_as_double(i) != value) return false;
    }
    return true;
}

[[nodiscard]] inline tensor rounded(const tensor& t) {
    auto v = t.to<double>();
    for (auto& x : v) x = std::isfinite(x) ? std::nearbyint(x) : x;
    return tensor::from_array_as(v, t.element_dtype());
}

/// A graph's node, input and output counts, in words.
[[nodiscard]] inline std::string size_text(const io::generated_case& c) {
    return std::to_string(c.model.nodes.size()) + " nodes, " + std::to_string(c.model.inputs.size()) + " inputs, " +
           std::to_string(c.model.initializers.size()) + " weights, " + std::to_string(element_total(c)) + " elements";
}

/// The graph and feeds left when the nodes in `removed` go: their consumers read
/// new graph inputs frozen to the values they computed (or, with `bypass`, the
/// removed node's input `bypass[v]`); values the kept nodes computed for a removed
/// consumer become graph outputs, so what they computed stays observed.
[[nodiscard]] inline std::optional<std::pair<graph::graph, value_map>> without_nodes(const io::generated_case& c, const std::set<std::size_t>& removed,
                                                                                     const std::map<std::string, std::string>& bypass = {}) {
    const auto& g = c.model;
    graph::graph out;
    out.name = g.name;
    out.opset = g.opset;
    std::set<std::string> removed_outputs, removed_inputs;
    for (const auto i : removed) {
        for (const auto& o : g.nodes[i].outputs) removed_outputs.insert(o);
        for (const auto& in : g.nodes[i].inputs) removed_inputs.insert(in);
    }
    auto rename = [&](const std::string& v) {
        const auto it = bypass.find(v);
        return it == bypass.end() ? v : it->second;
    };
    std::set<std::string> produced;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        if (removed.count(i)) continue;
        auto n = g.nodes[i];
        for (auto& in : n.inputs) in = in.empty() ? in : rename(in);
        for (const auto& o : n.outputs) produced.insert(o);
        out.nodes.push_back(std::move(n));
    }
    std::set<std::string> needed;
    for (const auto& n : out.nodes) {
        for (const auto& in : n.inputs) {
            if (!in.empty()) needed.insert(in);
        }
    }
    std::vector<std::string> outputs;
    std::set<std::string> seen;
    for (const auto& o : g.outputs) {
        const auto name = rename(o.name);
        if (produced.count(name) && seen.insert(name).second) outputs.push_back(name);
    }
    for (const auto& n : out.nodes) {
        for (const auto& o : n.outputs) {
            if (!o.empty() && removed_inputs.count(o) && !needed.count(o) && seen.insert(o).second) outputs.push_back(o);
        }
    }
    if (outputs.empty()) return std::nullopt;
    for (const auto& o : outputs) {
        const auto& t = c.values.at(o);
        out.outputs.push_back({o, t.element_dtype(), t.shape()});
    }
    value_map feeds;
    for (const auto& in : g.inputs) {
        if (needed.count(in.name)) {
            out.inputs.push_back(in);
            feeds.emplace(in.name, c.inputs.at(in.name));
        }
    }
    for (const auto& [name, t] : g.initializers) {
        if (needed.count(name)) out.initializers.emplace(name, t);
    }
    for (const auto& n : out.nodes) {  // first-use order: deterministic
        for (const auto& in : n.inputs) {
            if (in.empty() || !removed_outputs.count(in) || feeds.count(in)) continue;
            const auto& t = c.values.at(in);
            out.inputs.push_back({in, t.element_dtype(), t.shape()});
            feeds.emplace(in, t);
        }
    }
    return std::make_pair(std::move(out), std::move(feeds));
}

/// `c` without graph output `k`, and without the nodes, inputs and weights only it needed.
[[nodiscard]] inline std::optional<std::pair<graph::graph, value_map>> without_output(const io::generated_case& c, std::size_t k) {
    if (c.model.outputs.size() < 2) return std::nullopt;
    graph::graph g = c.model;
    g.outputs.erase(g.outputs.begin() + static_cast<std::ptrdiff_t>(k));
    std::set<std::string> live;
    for (const auto& o : g.outputs) live.insert(o.name);
    std::vector<bool> keep(g.nodes.size(), false);
    for (std::size_t i = g.nodes.size(); i-- > 0;) {  // reverse topological (generated graphs are in order; checked below)
        const auto& n = g.nodes[i];
        if (std::any_of(n.outputs.begin(), n.outputs.end(), [&](const std::string& o) { return !o.empty() && live.count(o) > 0; })) {
            keep[i] = true;
            for (const auto& in : n.inputs) {
                if (!in.empty()) live.insert(in);
            }
        }
    }
    graph::graph out = g;
    out.nodes.clear();
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        if (keep[i]) out.nodes.push_back(g.nodes[i]);
    }
    out.inputs.clear();
    value_map feeds;
    for (const auto& in : g.inputs) {
        if (live.count(in.name)) {
            out.inputs.push_back(in);
            feeds.emplace(in.name, c.inputs.at(in.name));
        }
    }
    std::erase_if(out.initializers, [&](const auto& kv) { return live.count(kv.first) == 0; });
    return std::make_pair(std::move(out), std::move(feeds));
}

/// The graph with its nodes in topological order (the passes rely on it). A graph
/// already in one keeps it: localized signatures name the first disagreeing node in
/// node order, so reordering could move the signature.
[[nodiscard]] inline graph::graph in_topological_order(graph::graph g) {
    const auto order = g.topological_order();
    std::set<std::string> defined;
    for (const auto& in : g.inputs) defined.insert(in.name);
    for (const auto& [name, t] : g.initializers) defined.insert(name);
    bool in_order = true;
    for (const auto& n : g.nodes) {
        for (const auto& in : n.inputs) in_order &= in.empty() || defined.count(in) > 0;
        for (const auto& o : n.outputs) defined.insert(o);
    }
    if (in_order) return g;
    std::vector<graph::node> nodes;
    for (const auto i : order) nodes.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(nodes);
    return g;
}

}  // namespace detail

/// Reduces `original` while `check` says it fails the same way; see the file comment.
/// Throws original_does_not_fail when the original does not fail, and
/// tensoracle::error when the original itself is not a valid case.
class reducer {
public:
    reducer(failure_check& check, reduce_options o, std::function<void(const reduce_progress&)> on_progress = {})
        : check_(check), o_(o), on_progress_(std::move(on_progress)) {}

    reduce_result run(const io::generated_case& given) {
        start_ = std::chrono::steady_clock::now();
        r_ = {};
        auto original = evaluate_case(detail::in_topological_order(given.model), given.inputs, given.seed, given.index);
        original.config_hash = given.config_hash;
        r_.original = original;
        measure(original);
        cur_ = original;
        for (bool changed = true; changed && !out_of_budget();) {
            changed = false;
            changed |= remove_nodes_ddmin();
            changed |= remove_nodes_one_by_one();
            changed |= drop_outputs();
        }
        for (bool changed = true; changed && !out_of_budget();) {
            changed = false;
            if (o_.attributes) changed |= reset_attributes();
            if (o_.shapes) changed |= shrink_shapes();
            if (o_.values) changed |= simplify_values();
            if (changed) changed |= remove_nodes_one_by_one();  // smaller values may free a node
        }
        r_.reduced = cur_;
        r_.reduced.config_hash = original.config_hash;
        r_.out_of_budget = out_of_budget();
        r_.seconds = elapsed();
        report("done");
        return r_;
    }

private:
    [[nodiscard]] double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
    [[nodiscard]] bool out_of_budget() const {
        return r_.calls >= o_.max_calls || (o_.time_limit_seconds > 0 && elapsed() > o_.time_limit_seconds);
    }
    void report(const std::string& phase) {
        if (!on_progress_) return;
        on_progress_({phase, r_.calls, cur_.model.nodes.size(), r_.steps.size(), elapsed()});
    }

    void measure(const io::generated_case& original) {
        report("measuring the original");
        auto first = check_.run_original(original);
        ++r_.calls;
        r_.failure = check_.failure();
        if (!first.fails) {
            throw original_does_not_fail("tensoracle::campaign::reduce",
                                         "original does not fail (" + (first.observed.empty() ? std::string("it passed") : first.observed) +
                                             "): nothing to reduce");
        }
        unsigned runs = 1, fails = 1;
        const unsigned planned = std::max(1u, o_.measure_runs);
        for (; runs < planned; ++runs) fails += check_.run(original).fails ? 1 : 0;
        if (fails < runs) {  // flaky: measure over more runs
            for (; runs < std::max(planned, 10u); ++runs) fails += check_.run(original).fails ? 1 : 0;
        }
        r_.calls += runs - 1;
        r_.measured = runs;
        r_.failure_rate = static_cast<double>(fails) / runs;
        if (o_.repeats > 0) {
            r_.repeats = o_.repeats;
        } else if (fails == runs) {
            r_.repeats = 1;
        } else {
            r_.repeats = static_cast<unsigned>(std::min(20.0, std::ceil(std::log(0.05) / std::log(1.0 - r_.failure_rate))));
        }
    }

    /// Validates the candidate, runs the check (with repeats); keeps it when it fails.
    bool try_candidate(std::optional<std::pair<graph::graph, value_map>> cand, const std::string& step) {
        if (!cand || out_of_budget()) return false;
        ++r_.candidates;
        io::generated_case c;
        try {
            c = evaluate_case(std::move(cand->first), std::move(cand->second), cur_.seed, cur_.index);
        } catch (const std::exception&) {
            ++r_.invalid;  // breaks a rule or an op's constraint: never shown to the check
            return false;
        }
        for (unsigned k = 0; k < r_.repeats && !out_of_budget(); ++k) {
            const auto v = check_.run(c);
            ++r_.calls;
            if (v.hang) ++r_.hangs;
            if (v.fails) {
                cur_ = std::move(c);
                r_.steps.push_back(step);
                report(step);
                return true;
            }
        }
        return false;
    }

    bool remove_set(const std::set<std::size_t>& s, const std::string& step) {
        return try_candidate(detail::without_nodes(cur_, s), step);
    }

    static std::string names(const io::generated_case& c, const std::set<std::size_t>& s) {
        std::string out;
        for (const auto i : s) out += (out.empty() ? "" : ",") + c.model.nodes[i].op_type;
        return out;
    }

    bool remove_nodes_ddmin() {
        report("removing nodes (ddmin)");
        bool any = false;
        std::size_t n = 2;
        while (cur_.model.nodes.size() >= 2 && !out_of_budget()) {
            const std::size_t size = cur_.model.nodes.size();
            n = std::min(n, size);
            std::vector<std::set<std::size_t>> chunks(n);
            for (std::size_t i = 0; i < size; ++i) chunks[i * n / size].insert(i);
            bool reduced = false;
            for (const auto& chunk : chunks) {  // remove a chunk
                if (remove_set(chunk, "removed " + names(cur_, chunk))) {
                    n = std::max<std::size_t>(n - 1, 2);
                    reduced = true;
                    break;
                }
            }
            if (!reduced && n > 2) {
                for (const auto& chunk : chunks) {  // keep only a chunk
                    std::set<std::size_t> rest;
                    for (std::size_t i = 0; i < size; ++i) {
                        if (!chunk.count(i)) rest.insert(i);
                    }
                    if (remove_set(rest, "kept only " + names(cur_, chunk))) {
                        n = 2;
                        reduced = true;
                        break;
                    }
                }
            }
            if (reduced) {
                any = true;
                continue;
            }
            if (n >= size) break;
            n = std::min(2 * n, size);
        }
        return any;
    }

    bool remove_nodes_one_by_one() {
        report("removing nodes one by one");
        bool any = false;
        for (std::size_t i = cur_.model.nodes.size(); i-- > 0 && !out_of_budget();) {
            if (i >= cur_.model.nodes.size()) continue;
            const auto n = cur_.model.nodes[i];
            if (remove_set({i}, "removed " + n.op_type)) {
                any = true;
                continue;
            }
            // Else its consumers read one of its own inputs of the same type and shape.
            const auto out = std::find_if(n.outputs.begin(), n.outputs.end(), [](const std::string& o) { return !o.empty(); });
            const bool one_output = std::count_if(n.outputs.begin(), n.outputs.end(), [](const std::string& o) { return !o.empty(); }) == 1;
            for (const auto& in : n.inputs) {
                if (in.empty() || !one_output) continue;
                const auto& a = cur_.values.at(in);
                const auto& b = cur_.values.at(*out);
                if (a.element_dtype() != b.element_dtype() || a.shape() != b.shape()) continue;
                if (try_candidate(detail::without_nodes(cur_, {i}, {{*out, in}}), "bypassed " + n.op_type)) {
                    any = true;
                    break;
                }
            }
        }
        return any;
    }

    bool drop_outputs() {
        report("dropping outputs");
        bool any = false;
        for (std::size_t k = cur_.model.outputs.size(); k-- > 0 && !out_of_budget();) {
            if (k >= cur_.model.outputs.size()) continue;
            const auto name = cur_.model.outputs[k].name;
            any |= try_candidate(detail::without_output(cur_, k), "dropped output " + name);
        }
        return any;
    }

    bool reset_attributes() {
        report("attributes to defaults");
        bool any = false;
        for (std::size_t i = 0; i < cur_.model.nodes.size() && !out_of_budget(); ++i) {
            std::vector<std::string> keys;
            for (const auto& [k, v] : cur_.model.nodes[i].attributes) {
                if (k.rfind("__", 0) != 0) keys.push_back(k);
            }
            for (const auto& k : keys) {
                graph::graph g = cur_.model;
                g.nodes[i].attributes.erase(k);
                any |= try_candidate(std::make_pair(std::move(g), cur_.inputs), "default " + cur_.model.nodes[i].op_type + "." + k);
            }
        }
        return any;
    }

    /// The names of the current case's inputs and weights, inputs first.
    [[nodiscard]] std::vector<std::string> tensor_names() const {
        std::vector<std::string> names;
        for (const auto& in : cur_.model.inputs) names.push_back(in.name);
        for (const auto& [name, t] : cur_.model.initializers) names.push_back(name);
        return names;
    }
    /// The current case's input or weight `name` (null once a reduction removed it).
    [[nodiscard]] const tensor* find_tensor(const std::string& name) const {
        if (const auto it = cur_.inputs.find(name); it != cur_.inputs.end()) return &it->second;
        if (const auto it = cur_.model.initializers.find(name); it != cur_.model.initializers.end()) return &it->second;
        return nullptr;
    }

    /// The current case with `f` applied to every input and weight tensor (by name).
    template <class F>
    [[nodiscard]] std::pair<graph::graph, value_map> with_tensors(F&& f) const {
        graph::graph g = cur_.model;
        value_map feeds = cur_.inputs;
        for (auto& [name, t] : feeds) t = f(name, t);
        for (auto& [name, t] : g.initializers) t = f(name, t);
        return {std::move(g), std::move(feeds)};
    }

    bool shrink_shapes() {
        report("shrinking shapes");
        bool any = false;
        // All dims of one size at once (shapes that must agree shrink together), largest first.
        for (bool changed = true; changed && !out_of_budget();) {
            changed = false;
            std::set<std::size_t, std::greater<>> sizes;
            for (const auto* m : {&cur_.inputs, &cur_.model.initializers}) {
                for (const auto& [name, t] : *m) {
                    for (const auto d : t.shape()) {
                        if (d > 1) sizes.insert(d);
                    }
                }
            }
            for (const auto d : sizes) {
                auto cand = with_tensors([&](const std::string&, const tensor& t) {
                    tensor s = t;
                    for (std::size_t a = 0; a < s.rank(); ++a) {
                        if (s.shape()[a] == d) s = detail::prefix_slice(s, a, (d + 1) / 2);
                    }
                    return s;
                });
                if (try_candidate(std::move(cand), "dims " + std::to_string(d) + " -> " + std::to_string((d + 1) / 2))) {
                    changed = any = true;
                    break;
                }
            }
        }
        // Then one axis of one tensor at a time.
        for (const auto& name : tensor_names()) {
            for (std::size_t a = 0;; ++a) {
                const tensor* t = find_tensor(name);
                if (t == nullptr || a >= t->rank() || out_of_budget()) break;
                const auto d = t->shape()[a];
                if (d < 2) continue;
                auto cand = with_tensors([&](const std::string& n, const tensor& x) { return n == name ? detail::prefix_slice(x, a, (d + 1) / 2) : x; });
                if (try_candidate(std::move(cand), name + " axis " + std::to_string(a) + " " + std::to_string(d) + " -> " + std::to_string((d + 1) / 2))) {
                    any = true;
                    --a;  // the same axis again
                }
            }
        }
        return any;
    }

    bool simplify_values() {
        report("simplifying values");
        bool any = false;
        for (const auto& name : tensor_names()) {
            auto replace = [&](tensor v, const std::string& step) {
                const tensor* t = find_tensor(name);
                if (t == nullptr || v.identical(*t)) return false;
                return try_candidate(with_tensors([&](const std::string& n, const tensor& x) { return n == name ? v : x; }), step);
            };
            // Only ever simpler (all zeros < all ones < integers < the rest; more zeros is
            // simpler), so the passes end.
            const tensor* t = find_tensor(name);
            if (t == nullptr || t->size() == 0) continue;
            const auto size = t->size();
            if (detail::all_equal(*t, 0, size, 0.0)) continue;
            if (replace(detail::with_elements(*t, 0, size, 0.0), name + " = 0")) {
                any = true;
                continue;
            }
            if (detail::all_equal(*t, 0, size, 1.0)) continue;
            if (replace(detail::with_elements(*t, 0, size, 1.0), name + " = 1")) {
                any = true;
                continue;
            }
            if (info(t->element_dtype()).is_floating) any |= replace(detail::rounded(*t), name + " rounded");
            // Chunks zeroed, halves to sixteenths: the few elements that matter stay.
            for (std::size_t parts = 2; parts <= 16 && parts <= size && !out_of_budget(); parts *= 2) {
                for (std::size_t p = 0; p < parts; ++p) {
                    t = find_tensor(name);
                    if (t == nullptr) break;
                    const std::size_t lo = p * size / parts, hi = (p + 1) * size / parts;
                    if (detail::all_equal(*t, lo, hi, 0.0)) continue;
                    any |= replace(detail::with_elements(*t, lo, hi, 0.0),
                                   name + "[" + std::to_string(lo) + ":" + std::to_string(hi) + "] = 0");
                }
            }
        }
        return any;
    }

    failure_check& check_;
    reduce_options o_;
    std::function<void(const reduce_progress&)> on_progress_;
    std::chrono::steady_clock::time_point start_;
    reduce_result r_;
    io::generated_case cur_;
};

/// Reduces `original` under `check`; see reducer.
[[nodiscard]] inline reduce_result reduce(const io::generated_case& original, failure_check& check, const reduce_options& o = {},
                                          std::function<void(const reduce_progress&)> on_progress = {}) {
    reducer r(check, o, std::move(on_progress));
    return r.run(original);
}

/// How the bundle's repro.cpp reaches the backend (empty command: it has no repro.cpp
/// test of a backend, only of the check command or nothing).
struct bundle_info {
    /// By backend name: with {model} {inputs} {outputs} run once per case; without, a worker.
    std::map<std::string, std::vector<std::string>> backend_commands;
    std::map<std::string, std::string> backend_descriptions;  ///< version and command, for the manifest
    std::string rerun;                                         ///< the command line that made this bundle
};

namespace detail {

[[nodiscard]] inline std::string cpp_string(const std::string& s) {
    std::string out = "\"";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\%03o", c);
            out += buf;
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

[[nodiscard]] inline std::string cpp_strings(const std::vector<std::string>& v) {
    std::string out = "{";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + cpp_string(v[i]);
    return out + "}";
}

[[nodiscard]] inline nlohmann::json size_json(const io::generated_case& c) {
    return {{"nodes", c.model.nodes.size()}, {"inputs", c.model.inputs.size()}, {"weights", c.model.initializers.size()},
            {"elements", element_total(c)}, {"outputs", c.model.outputs.size()}, {"ops", c.op_types}};
}

/// The standalone doctest test of a bundle: the case through the backend(s), or the check command.
[[nodiscard]] inline std::string repro_source(const reduce_result& r, const failure_check& check, const bundle_info& info) {
    std::ostringstream os;
    os << "// A reproducer written by tensoracle " << version_string << " (tensoracle reduce): " << r.failure << ".\n"
       << "// Build with the CMakeLists.txt beside it against an installed tensoracle; the test fails while the bug is there.\n"
       << "#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n#include <doctest/doctest.h>\n\n#include <filesystem>\n#include <string>\n#include <vector>\n\n"
       << "#include <tensoracle/campaign/backend.hpp>\n#include <tensoracle/doctest.hpp>\n#include <tensoracle/io/onnx.hpp>\n\n"
       << "#ifndef TENSORACLE_REPRO_DIR\n#define TENSORACLE_REPRO_DIR \".\"\n#endif\n\n"
       << "namespace fs = std::filesystem;\nnamespace tc = tensoracle::campaign;\n\n";
    const std::size_t outputs = r.reduced.model.outputs.size();
    if (const auto* sc = dynamic_cast<const signature_check*>(&check)) {
        const auto& sig = *sc->target();
        const double level = sc->options().level;
        os << "// The backend as the campaign ran it; the reference's outputs are test_data_set_0/output_<k>.pb.\n"
           << "static tc::backend_run run_backend(const std::string& name, const std::vector<std::string>& command, const std::string& out) {\n"
           << "    const fs::path dir = TENSORACLE_REPRO_DIR;\n"
           << "    const fs::path outputs = fs::temp_directory_path() / (\"tensoracle_repro_" << sig.id() << "_\" + out);\n"
           << "    fs::remove_all(outputs);\n    fs::create_directories(outputs);\n"
           << "    bool one_shot = false;\n    for (const auto& w : command) one_shot |= w.find(\"{model}\") != std::string::npos;\n"
           << "    tc::case_paths paths{dir / \"model.onnx\", dir / \"test_data_set_0\", outputs, " << outputs << "};\n"
           << "    if (one_shot) return tc::command_backend(name, command).run(paths, " << sc->options().timeout_seconds << ");\n"
           << "    return tc::worker_backend(name, command).run(paths, " << sc->options().timeout_seconds << ");\n}\n\n"
           << "TEST_CASE(" << cpp_string(sig.backend + ": " + std::string(to_string(sig.outcome)) + " at " + sig.where) << ") {\n"
           << "    const fs::path dir = TENSORACLE_REPRO_DIR;\n";
        // A backend's signature: its outputs against ours. "a vs b": a's against b's.
        std::vector<std::string> names{sig.backend};
        if (const auto p = sig.backend.find(" vs "); p != std::string::npos) names = {sig.backend.substr(0, p), sig.backend.substr(p + 4)};
        for (const auto& n : names) {
            if (info.backend_commands.count(n) == 0) {
                os << "    // " << n << " was given in-process (a C++ callable): run the reduced case through it here.\n"
                   << "    FAIL(\"write the call of your backend here; the bundle's manifest.json says what went wrong\");\n}\n";
                return os.str();
            }
        }
        for (std::size_t b = 0; b < names.size(); ++b) {
            os << "    const auto r" << b << " = run_backend(" << cpp_string(names[b]) << ", " << cpp_strings(info.backend_commands.at(names[b]))
               << ", \"out" << b << "\");\n"
               << "    INFO(" << cpp_string(names[b] + ": ") << ", tc::to_string(r" << b << ".status), \" \", r" << b << ".message);\n"
               << "    REQUIRE(r" << b << ".status == tc::run_status::ran);\n"
               << "    REQUIRE(r" << b << ".outputs.size() == " << outputs << "u);\n";
        }
        os << "    for (std::size_t k = 0; k < " << outputs << "u; ++k) {\n        CAPTURE(k);\n";
        if (names.size() == 1) {
            os << "        const auto expected = tensoracle::io::load_tensor(dir / \"test_data_set_0\" / (\"output_\" + std::to_string(k) + \".pb\"));\n"
               << "        TENSORACLE_CHECK_ALLCLOSE(r0.outputs[k], expected, tensoracle::level{" << level << "});\n    }\n}\n";
        } else {
            os << "        TENSORACLE_CHECK_ALLCLOSE(r0.outputs[k], r1.outputs[k], tensoracle::level{" << level << "});\n    }\n}\n";
        }
        return os.str();
    }
    if (const auto* cc = dynamic_cast<const command_check*>(&check)) {
        os << "#include <tensoracle/campaign/process.hpp>\n\n"
           << "TEST_CASE(" << cpp_string("check command passes: " + r.failure) << ") {\n"
           << "    const fs::path dir = TENSORACLE_REPRO_DIR;\n"
           << "    std::vector<std::string> argv = " << cpp_strings(cc->command()) << ";\n"
           << "    for (auto& w : argv) {\n"
           << "        for (const auto& [key, value] : {std::pair<std::string, std::string>{\"{model}\", (dir / \"model.onnx\").string()},\n"
           << "                                         {\"{inputs}\", (dir / \"test_data_set_0\").string()}, {\"{dir}\", dir.string()}}) {\n"
           << "            for (auto p = w.find(key); p != std::string::npos; p = w.find(key, p + value.size())) w.replace(p, key.size(), value);\n"
           << "        }\n    }\n"
           << "    const auto p = tc::run_process(argv, tc::process_options::with_timeout(60));\n"
           << "    INFO(\"stderr: \", p.err);\n"
           << "    CHECK(p.kind == tc::exit_kind::exited);\n    CHECK(p.exit_code == 0);\n}\n";
    }
    return os.str();
}

[[nodiscard]] inline std::string repro_cmake() {
    return "# Builds repro.cpp against an installed tensoracle (cmake -DCMAKE_PREFIX_PATH=<its prefix>).\n"
           "cmake_minimum_required(VERSION 3.21)\n"
           "project(tensoracle_repro LANGUAGES CXX)\n"
           "find_package(tensoracle CONFIG REQUIRED)\n"
           "find_package(doctest CONFIG REQUIRED)\n"
           "find_package(nlohmann_json 3 CONFIG REQUIRED)\n"
           "if(NOT TARGET tensoracle::onnx)\n"
           "  message(FATAL_ERROR \"the reproducer needs tensoracle's ONNX I/O (tensoracle::onnx: libonnx and protobuf)\")\n"
           "endif()\n"
           "add_executable(repro repro.cpp)\n"
           "target_link_libraries(repro PRIVATE tensoracle::onnx doctest::doctest nlohmann_json::nlohmann_json)\n"
           "target_compile_definitions(repro PRIVATE TENSORACLE_REPRO_DIR=\"${CMAKE_CURRENT_SOURCE_DIR}\")\n"
           "enable_testing()\n"
           "add_test(NAME repro COMMAND repro)\n";
}

}  // namespace detail

/// Writes the reproducer bundle of `r` into `dir`: model.onnx and test_data_set_0/
/// (inputs, our expected outputs), model.txt, manifest.json, repro.cpp with its
/// CMakeLists.txt, README.md. Returns the manifest.
inline nlohmann::json write_bundle(const reduce_result& r, const failure_check& check, const std::filesystem::path& dir,
                                   const bundle_info& info = {}) {
    const char* where = "tensoracle::campaign::write_bundle";
    std::error_code ec;
    if (std::filesystem::exists(dir) && !std::filesystem::is_empty(dir, ec) && !std::filesystem::exists(dir / "manifest.json")) {
        throw error(where, dir.string() + " exists and holds something else than a bundle: give an empty or new folder");
    }
    std::filesystem::remove_all(dir / "test_data_set_0", ec);
    const auto& c = r.reduced;
    detail::write_test_layout(c, dir);
    auto write_text = [&](const char* name, const std::string& text) {
        std::ofstream f(dir / name, std::ios::binary);
        if (!f || !(f << text)) throw error(where, "cannot write " + (dir / name).string());
    };
    const auto graph_text = io::model_text(c.model);
    write_text("model.txt", graph_text);
    write_text("original.txt", io::model_text(r.original.model));

    nlohmann::json m;
    m["schema"] = "tensoracle.reduce.bundle/1";
    m["kit_version"] = version_string;
    m["case"] = {{"id", io::case_id(r.original.seed, r.original.index)},
                 {"seed", r.original.seed},
                 {"index", r.original.index},
                 {"config_hash", r.original.config_hash}};
    m["failure"] = r.failure;
    m["check"] = check.manifest();
    if (!info.backend_commands.empty()) m["backend_commands"] = info.backend_commands;
    if (!info.backend_descriptions.empty()) m["backend_descriptions"] = info.backend_descriptions;
    m["failure_rate"] = r.failure_rate;
    m["measured_runs"] = r.measured;
    m["repeats"] = r.repeats;
    m["original"] = detail::size_json(r.original);
    m["reduced"] = detail::size_json(c);
    m["check_runs"] = r.calls;
    m["candidates"] = r.candidates;
    m["invalid_candidates"] = r.invalid;
    m["hangs"] = r.hangs;
    m["seconds"] = r.seconds;
    m["out_of_budget"] = r.out_of_budget;
    m["steps"] = r.steps;
    if (!info.rerun.empty()) m["rerun"] = info.rerun;
    write_text("repro.cpp", detail::repro_source(r, check, info));
    write_text("CMakeLists.txt", detail::repro_cmake());

    std::ostringstream rd;
    std::string chain;
    for (const auto& n : c.model.nodes) chain += (chain.empty() ? "" : " -> ") + n.op_type;
    rd << "# " << r.failure << "\n\n";
    rd << "Found and reduced by tensoracle " << version_string << " (case " << io::case_id(r.original.seed, r.original.index) << ").\n\n";
    rd << "**What goes wrong.** " << r.failure << ", on the op chain " << (chain.empty() ? "(no nodes)" : chain) << ".";
    if (const auto* sc = dynamic_cast<const signature_check*>(&check)) {
        const auto cj = sc->manifest();
        for (const auto& b : cj["backends"]) {
            if (!b.contains("outcome")) continue;
            rd << "\n" << b["name"].get<std::string>() << ": " << b["outcome"].get<std::string>();
            if (b.contains("detail") && !b["detail"].get<std::string>().empty()) rd << " (" << b["detail"].get<std::string>() << ")";
            if (b.contains("max_abs_error")) {
                // null: infinite (JSON has no infinity; a relative error against a reference 0)
                const auto put = [&rd](const nlohmann::json& e) {
                    if (e.is_number()) {
                        rd << e.get<double>();
                    } else {
                        rd << "inf";
                    }
                };
                rd << "; max abs error ";
                put(b["max_abs_error"]);
                rd << ", max rel error ";
                put(b.value("max_rel_error", nlohmann::json()));
            }
            if (b.contains("min_passing_level")) rd << "; it passes only from tolerance level " << b["min_passing_level"].get<int>();
            if (b.contains("max_abs_error")) rd << " (compared at level " << sc->options().level << ")";
            rd << ".";
        }
    }
    rd << "\n\n**Size.** " << detail::size_text(r.original) << " reduced to " << detail::size_text(c) << " in " << r.calls
       << " check runs (" << r.seconds << " s)";
    if (r.failure_rate < 1.0) rd << "; the original failed in " << r.failure_rate * 100 << "% of " << r.measured << " runs (flaky: each candidate ran up to " << r.repeats << " times)";
    if (r.out_of_budget) rd << "; the budget ran out, so it may reduce further";
    rd << ".\n\n**Reduced graph** (model.onnx; inputs and our expected outputs in test_data_set_0/):\n\n```text\n" << graph_text << "```\n\n";
    rd << "**Rerun.** Build and run the standalone test (it fails while the bug is there):\n\n```sh\n"
       << "cmake -S . -B build -DCMAKE_PREFIX_PATH=<tensoracle's install prefix> && cmake --build build && ./build/repro\n```\n";
    if (!info.rerun.empty()) rd << "\nReduced with:\n\n```sh\n" << info.rerun << "\n```\n";
    rd << "\nmanifest.json holds the same facts for scripts; original.txt the graph before reduction.\n";
    write_text("README.md", rd.str());
    detail::write_json(dir / "manifest.json", m);  // last: a bundle with a manifest is complete
    return m;
}

/// A case to reduce from disk: a model.onnx, or a case folder in the ONNX test layout
/// (model.onnx, test_data_set_0/input_<k>.pb; case.json's seed and index when there).
/// Without input files the inputs are random (floats in [-1, 1), integers in [0, 4),
/// from `seed`); a model they do not run on is an error that says to give inputs.
[[nodiscard]] inline io::generated_case load_case(const std::filesystem::path& model_or_case, std::uint64_t seed = 0) {
    const std::string where = "tensoracle::campaign::load_case(" + model_or_case.string() + ")";
    if (!std::filesystem::exists(model_or_case)) throw error(where, "no such file or folder");
    const std::filesystem::path dir = std::filesystem::is_directory(model_or_case) ? model_or_case : model_or_case.parent_path();
    const std::filesystem::path model = std::filesystem::is_directory(model_or_case) ? model_or_case / "model.onnx" : model_or_case;
    if (!std::filesystem::exists(model)) throw error(where, "no model.onnx in the folder");
    auto g = io::load_model(model);
    std::uint64_t index = 0;
    std::string config_hash;
    if (std::filesystem::exists(dir / "case.json")) {
        try {
            std::ifstream f(dir / "case.json");
            const auto j = nlohmann::json::parse(f);
            seed = j.value("seed", seed);
            index = j.value("index", std::uint64_t{0});
            config_hash = j.value("config_hash", std::string());
        } catch (const std::exception& e) {
            throw error(where, std::string("case.json is not readable: ") + e.what());
        }
    }
    value_map inputs;
    const auto data = dir / "test_data_set_0";
    std::vector<const graph::value_info*> fed;
    for (const auto& in : g.inputs) {
        if (!g.initializers.count(in.name)) fed.push_back(&in);
    }
    if (std::filesystem::exists(data / "input_0.pb") || fed.empty()) {
        for (std::size_t k = 0; k < fed.size(); ++k) {
            const auto file = data / ("input_" + std::to_string(k) + ".pb");
            if (!std::filesystem::exists(file)) throw error(where, "graph input '" + fed[k]->name + "' has no " + file.string());
            auto t = io::load_tensor(file);
            if (t.element_dtype() != fed[k]->type || (fed[k]->shape && *fed[k]->shape != t.shape())) {
                throw error(where, file.string() + " holds " + std::string(name(t.element_dtype())) + tensoracle::to_string(t.shape()) + ", but graph input '" +
                                       fed[k]->name + "' is declared " + std::string(name(fed[k]->type)) +
                                       (fed[k]->shape ? tensoracle::to_string(*fed[k]->shape) : std::string("[?]")));
            }
            inputs.emplace(fed[k]->name, std::move(t));
        }
    } else {
        rng r(seed);
        for (const auto* in : fed) {
            if (!in->shape) throw error(where, "graph input '" + in->name + "' has no static shape and there are no input files to take one from");
            const bool floating = info(in->type).is_floating;
            inputs.emplace(in->name, r.uniform_tensor(in->type, *in->shape, floating ? -1.0 : 0.0, in->type == dtype::boolean ? 2.0 : floating ? 1.0 : 4.0));
        }
    }
    std::erase_if(g.inputs, [&](const graph::value_info& v) { return g.initializers.count(v.name) > 0; });
    io::generated_case c;
    try {
        c = evaluate_case(std::move(g), std::move(inputs), seed, index);
    } catch (const error& e) {
        throw error(where, std::string("the reference cannot run it on these inputs (give a case folder with test_data_set_0/): ") + e.what());
    }
    c.config_hash = config_hash;
    return c;
}

/// The campaign's second step: every signature in `dir`/summary.json gets its smallest
/// case reduced (under the backends of the signature, with `judging`) into a bundle at
/// `dir`/reduced/<signature id>/, unless one is there already (a resumed campaign).
/// summary.json and summary.txt then name each bundle and its size. Returns the summary.
inline nlohmann::json reduce_signatures(const std::filesystem::path& dir, const std::vector<std::unique_ptr<backend>>& prototypes,
                                        const judge_options& judging, const reduce_options& options,
                                        const bundle_info& info = {},
                                        const std::function<void(const std::string&, const reduce_progress&)>& on_progress = {}) {
    const char* where = "tensoracle::campaign::reduce_signatures";
    nlohmann::json summary;
    {
        std::ifstream f(dir / "summary.json");
        if (!f) throw error(where, "no summary.json in " + dir.string());
        summary = nlohmann::json::parse(f);
    }
    for (auto& s : summary["signatures"]) {
        const auto id = s["id"].get<std::string>();
        const auto bundle = dir / "reduced" / id;
        nlohmann::json done;
        if (std::filesystem::exists(bundle / "manifest.json")) {
            std::ifstream f(bundle / "manifest.json");
            done = nlohmann::json::parse(f, nullptr, false);
        }
        if (done.is_object() && done.contains("reduced")) {
            s["bundle"] = "reduced/" + id;
            s["reduced_nodes"] = done["reduced"]["nodes"];
            continue;
        }
        // The backends of the signature's system, as the campaign ran them: a configuration's
        // "unsupported" is a compile failure only beside a sibling that runs the case.
        const auto b = s["backend"].get<std::string>();
        const auto first = b.substr(0, b.find(" vs "));
        const auto family = first.substr(0, first.find('-'));
        std::vector<std::unique_ptr<backend>> backends;
        for (const auto& proto : prototypes) {
            if (proto->name().substr(0, proto->name().find('-')) == family) backends.push_back(proto->clone());
        }
        if (std::none_of(backends.begin(), backends.end(), [&](const auto& x) { return x->name() == first; })) {
            s["reduction"] = "not reduced: backend " + b + " is not in this run";
            continue;
        }
        // A metamorphic signature compares two runs; its mutant's own failure (the same
        // backend against the reference on the mutant) is what reduces alone.
        std::string keep = id;
        if (s.value("oracle", std::string()) == "metamorphic") {
            if (!s.contains("reduce_as")) {
                s["reduction"] = "not reduced: the mutant fails only against its original, not against the reference";
                continue;
            }
            keep = s["reduce_as"].get<std::string>();
        }
        const auto scratch = dir / ".work" / "reduce";
        try {
            const auto original = load_case(dir / "cases" / s["case"].get<std::string>());
            signature_check check(std::move(backends), judging, scratch, keep);
            const auto r = reduce(original, check, options, [&](const reduce_progress& p) {
                if (on_progress) on_progress(id, p);
            });
            (void)write_bundle(r, check, bundle, info);
            s["bundle"] = "reduced/" + id;
            s["reduced_nodes"] = r.reduced.model.nodes.size();
        } catch (const original_does_not_fail& e) {
            s["reduction"] = std::string("not reduced: ") + e.what();
        } catch (const backend_unavailable&) {
            throw;
        } catch (const error& e) {
            s["reduction"] = std::string("not reduced: ") + e.what();
        }
        std::error_code ec;
        std::filesystem::remove_all(dir / ".work", ec);
    }
    detail::write_json(dir / "summary.json", summary);
    std::ofstream t(dir / "summary.txt");
    t << campaign_runner::summary_text(summary);
    return summary;
}

}  // namespace tensoracle::campaign
