// tensoracle: a campaign's corpus guided by what the systems rewrote.
//
// With `--guide rewrites` a campaign keeps the cases that brought something not
// seen before on a backend: a rewrite kind it reported (campaign/rewrites.hpp), a
// combination of its optimization kinds, an outcome other than a pass, a failure
// signature. Each later case is either generated afresh from (seed, index), a
// mutant of a corpus case (the mutation layer: semantics-preserving rewrites,
// dead code, resolution changes), or regrown around a corpus case's motifs (a new
// graph whose draws favour the motifs that case spliced). The parent is drawn with
// AFL-style energy: the rarer its features and the fewer children it has had, the
// more often it is picked.
//
// Determinism: cases run in rounds of `round` indices (of this process's shard).
// The corpus changes only between rounds, from the round's results taken in
// index order, so a case's derivation depends on the results of earlier rounds
// only, never on which job finished first: a campaign is deterministic per seed
// for any --jobs (given backends that are), and resumes by replaying its journal.
// A derived case records its parent and operations (results.jsonl, case.json);
// corpus cases are kept under DIR/corpus/<id>/ so that every derived case can be
// rebuilt from its parent. Shards keep corpora of their own (one per shard
// folder), which `tensoracle report` merges like any results.
// Needs ONNX (libonnx, protobuf) and nlohmann/json, like campaign.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/core/error.hpp"
#include "tensoracle/core/hash.hpp"
#include "tensoracle/core/rng.hpp"
#include "tensoracle/gen/generator.hpp"
#include "tensoracle/graph/interpreter.hpp"
#include "tensoracle/io/case_files.hpp"
#include "tensoracle/io/onnx.hpp"
#include "tensoracle/mutate/mutate.hpp"

namespace tensoracle::campaign {

/// Whether a campaign draws cases from a corpus guided by rewrites, or each afresh.
enum class guide_mode { none, rewrites };

[[nodiscard]] constexpr std::string_view to_string(guide_mode m) noexcept { return m == guide_mode::rewrites ? "rewrites" : "none"; }

[[nodiscard]] inline guide_mode guide_mode_from_string(std::string_view s) {
    if (s == "rewrites") return guide_mode::rewrites;
    if (s == "none") return guide_mode::none;
    throw error("tensoracle::campaign::guide_mode_from_string", "unknown guide '" + std::string(s) + "' (known: rewrites, none)");
}

struct guide_options {
    guide_mode mode = guide_mode::none;
    /// Cases per round: the corpus changes only between rounds (see the file comment).
    std::size_t round = 32;
    /// The least share of cases each way of making them gets (fresh, mutation,
    /// regrow): the shares follow what each found per case in the rounds so far
    /// (new features, smoothed), and none starves.
    double min_share = 0.1;
    std::size_t mutation_max_steps = 2;   ///< mutations per mutant: 1..this
    double motif_factor = 8.0;            ///< a regrown case draws its parent's motifs this many times as often
    double motif_probability = 0.6;       ///< and splices a motif at this share of its draws
    /// A parent of more nodes than this is drawn proportionally less often (its
    /// energy times parent_nodes / nodes), as AFL favours small inputs: each
    /// mutation adds nodes, and without it mutants of mutants grow from 24 to 47
    /// nodes over a 2,000-case ORT run, which halves the cases run per second.
    std::size_t parent_nodes = 24;

    void validate() const {
        const char* where = "tensoracle::campaign::guide_options";
        if (round == 0) throw error(where, "round must be at least 1 case");
        auto share = [&](double p, const char* what) {
            if (!(p >= 0.0 && p <= 1.0)) throw error(where, std::string(what) + " must be in [0, 1], got " + std::to_string(p));
        };
        if (!(min_share >= 0.0 && min_share <= 1.0 / 3.0)) throw error(where, "min_share must be in [0, 1/3], got " + std::to_string(min_share));
        share(motif_probability, "motif_probability");
        if (mutation_max_steps == 0 || mutation_max_steps > 16) throw error(where, "mutation_max_steps must be in 1..16");
        if (!(motif_factor >= 1.0)) throw error(where, "motif_factor must be at least 1");
        if (parent_nodes == 0) throw error(where, "parent_nodes must be at least 1");
    }
    /// campaign.json's "guide" (a resumed campaign must have the same).
    [[nodiscard]] nlohmann::json json() const {
        if (mode == guide_mode::none) return {{"mode", "none"}};
        return {{"mode", std::string(to_string(mode))}, {"round", round}, {"min_share", min_share}, {"mutation_max_steps", mutation_max_steps},
                {"motif_factor", motif_factor}, {"motif_probability", motif_probability}, {"parent_nodes", parent_nodes}};
    }
};

/// Whether an outcome (its results.jsonl name) means the backend produced outputs
/// that were compared: a rewrite it reported was then tested on values.
[[nodiscard]] inline bool outcome_ran(std::string_view outcome) noexcept {
    return outcome == "pass" || outcome == "mismatch" || outcome == "nan_inf" || outcome == "shape_dtype" ||
           outcome == "reference_precision" || outcome == "nondeterministic";
}

/// Whether some backend of a results.jsonl line produced outputs (see outcome_ran).
[[nodiscard]] inline bool some_backend_ran(const nlohmann::json& line) {
    const auto b = line.find("backends");
    if (b == line.end() || !b->is_object()) return false;
    return std::any_of(b->begin(), b->end(), [](const auto& r) { return outcome_ran(r.value("outcome", std::string("pass"))); });
}

/// What a guided corpus tracks in one results.jsonl line: per backend each rewrite
/// kind it reported ("onnxruntime|kind:Conv+Relu -> com.microsoft::FusedConv"), each
/// pair of its optimization kinds ("...|kinds:A&B"), its outcome
/// when not a pass ("...|outcome:crash"); and each failure signature ("sig:<id>").
/// A backend's rewrites count only when it ran the case (outcome_ran): a rewrite
/// reported by a session that then failed was reached but never tested on values,
/// so a later case that runs it is still new.
[[nodiscard]] inline std::vector<std::string> case_features(const nlohmann::json& line) {
    std::set<std::string> out;
    if (const auto b = line.find("backends"); b != line.end() && b->is_object()) {
        for (const auto& [name, r] : b->items()) {
            const auto outcome = r.value("outcome", std::string("pass"));
            if (outcome != "pass") out.insert(name + "|outcome:" + outcome);
            if (!outcome_ran(outcome)) continue;
            const auto rw = r.find("rewrites");
            if (rw == r.end() || !rw->is_array()) continue;
            std::set<std::string> optimizations;
            for (const auto& ev : *rw) {
                const auto kind = ev.value("kind", std::string());
                if (kind.empty()) continue;
                out.insert(name + "|kind:" + kind);
                const auto cls = ev.value("class", std::string());
                if (cls == "fusion" || cls == "elimination" || cls == "folding" || cls == "replacement") optimizations.insert(kind);
            }
            // Pairs, not whole sets: a case's whole set of kinds is nearly always new,
            // which would keep every case and guide nothing.
            for (auto a = optimizations.begin(); a != optimizations.end(); ++a) {
                for (auto z = std::next(a); z != optimizations.end(); ++z) out.insert(name + "|kinds:" + *a + "&" + *z);
            }
        }
    }
    if (const auto s = line.find("signatures"); s != line.end() && s->is_array()) {
        for (const auto& sig : *s) out.insert("sig:" + sig.value("id", std::string()));
    }
    return {out.begin(), out.end()};
}

/// How one case of a guided campaign is made.
struct derivation_plan {
    enum class kind { fresh, mutation, regrow };
    kind by = kind::fresh;
    std::size_t parent = 0;  ///< index into the corpus's entries
    std::uint64_t seed = 0;  ///< of the mutation chain
};

[[nodiscard]] constexpr std::string_view to_string(derivation_plan::kind k) noexcept {
    switch (k) {
        case derivation_plan::kind::fresh: return "fresh";
        case derivation_plan::kind::mutation: return "mutation";
        case derivation_plan::kind::regrow: return "regrow";
    }
    return "fresh";
}

/// One kept case.
struct corpus_entry {
    std::string id;
    std::uint64_t index = 0;
    std::vector<std::string> features;  ///< the features new when it was kept
    std::size_t children = 0;           ///< cases derived from it so far
    io::generated_case c;               ///< graph, inputs and motifs (no intermediate values)
};

/// The corpus of a guided campaign: see the file comment.
class rewrite_corpus {
public:
    explicit rewrite_corpus(guide_options o = {}) : o_(std::move(o)) { o_.validate(); }

    [[nodiscard]] const guide_options& options() const noexcept { return o_; }
    [[nodiscard]] const std::vector<corpus_entry>& entries() const noexcept { return entries_; }
    /// Cases that showed `feature` so far (absorbed rounds only).
    [[nodiscard]] std::size_t hits(const std::string& feature) const {
        const auto it = hits_.find(feature);
        return it == hits_.end() ? 0 : it->second;
    }
    /// Whether a line with these features could be kept at the end of its round.
    [[nodiscard]] bool novel(const std::vector<std::string>& features) const {
        return std::any_of(features.begin(), features.end(), [&](const auto& f) { return hits(f) == 0; });
    }

    /// Takes a finished round's lines (any order; taken by index): keeps each whose
    /// features hold one not seen before and that some backend ran, in index order,
    /// its case given by `load` (nullopt: not available, not kept). Counts every
    /// line's features and each derived line's parent. Returns the ids kept.
    /// A case no backend ran is not a parent (as AFL keeps crashing inputs out of
    /// its queue): its descendants inherit the failure; in a 2,000-case ORT run
    /// one AveragePool refusal kept as a parent spreads to 319 cases, 16% of the run.
    std::vector<std::string> absorb(std::vector<const nlohmann::json*> lines,
                                    const std::function<std::optional<io::generated_case>(const std::string&)>& load) {
        std::sort(lines.begin(), lines.end(), [](const auto* a, const auto* b) { return a->at("index").template get<std::uint64_t>() < b->at("index").template get<std::uint64_t>(); });
        std::vector<std::string> kept;
        for (const auto* l : lines) {
            const auto features = case_features(*l);
            auto by = derivation_plan::kind::fresh;
            if (const auto d = l->find("derivation"); d != l->end() && d->contains("parent")) {
                by = d->value("by", std::string()) == "regrow" ? derivation_plan::kind::regrow : derivation_plan::kind::mutation;
                if (const auto it = position_.find(d->at("parent").get<std::string>()); it != position_.end()) ++entries_[it->second].children;
            }
            std::vector<std::string> fresh;
            for (const auto& f : features) {
                if (hits(f) == 0) fresh.push_back(f);
            }
            for (const auto& f : features) ++hits_[f];
            auto& y = yield_[static_cast<std::size_t>(by)];
            ++y.cases;
            y.found += fresh.size();
            if (fresh.empty() || !some_backend_ran(*l)) continue;
            const auto id = l->at("case").get<std::string>();
            auto c = load(id);
            if (!c) continue;
            c->values.clear();
            c->outputs.clear();
            position_.emplace(id, entries_.size());
            entries_.push_back({id, l->at("index").get<std::uint64_t>(), std::move(fresh), 0, std::move(*c)});
            kept.push_back(id);
        }
        // Energies change only here: every plan of the next round reads them.
        energies_.clear();
        energy_total_ = 0.0;
        for (const auto& e : entries_) {
            energies_.push_back(energy(e));
            energy_total_ += energies_.back();
        }
        return kept;
    }

    /// An entry's weight as a parent: the rarer its features now, the more; halved
    /// as its children grow fourfold; scaled down past guide_options::parent_nodes.
    [[nodiscard]] double energy(const corpus_entry& e) const {
        double sum = 0.0;
        for (const auto& f : e.features) sum += 1.0 / static_cast<double>(std::max<std::size_t>(1, hits(f)));
        const auto nodes = e.c.model.nodes.size();
        const double size = nodes > o_.parent_nodes ? static_cast<double>(o_.parent_nodes) / static_cast<double>(nodes) : 1.0;
        return sum * size / std::sqrt(1.0 + static_cast<double>(e.children));
    }

    /// How case `index` of campaign `seed` is made: a pure function of the corpus
    /// (as of the round's start) and the case's id.
    [[nodiscard]] derivation_plan plan(std::uint64_t seed, std::uint64_t index) const {
        rng r(fnv1a(io::case_id(seed, index) + "/guide"));
        derivation_plan p;
        if (o_.mode == guide_mode::none || entries_.empty()) return p;
        const auto sh = shares();
        const double u = r.uniform();
        if (u < sh[0]) return p;
        const bool regrow = u >= sh[0] + sh[1];
        double x = r.uniform() * energy_total_;
        std::size_t k = 0;
        while (k + 1 < entries_.size() && x >= energies_[k]) x -= energies_[k++];
        p.parent = k;
        // A parent without motifs has nothing to regrow around: it is mutated.
        p.by = regrow && !entries_[k].c.motifs.empty() ? derivation_plan::kind::regrow : derivation_plan::kind::mutation;
        p.seed = r();
        return p;
    }

    /// The shares of fresh, mutation and regrow for the next round: each way's new
    /// features per case so far, smoothed ((found + 1) / (cases + 2)), normalised,
    /// then raised to min_share.
    [[nodiscard]] std::array<double, 3> shares() const {
        std::array<double, 3> w{};
        double total = 0.0;
        for (std::size_t k = 0; k < 3; ++k) {
            w[k] = (static_cast<double>(yield_[k].found) + 1.0) / (static_cast<double>(yield_[k].cases) + 2.0);
            total += w[k];
        }
        double raised = 0.0, rest = 0.0;
        for (auto& x : w) {
            x /= total;
            if (x < o_.min_share) {
                raised += o_.min_share;
                x = -1.0;  // fixed at the floor
            } else {
                rest += x;
            }
        }
        for (auto& x : w) x = x < 0.0 ? o_.min_share : x * (1.0 - raised) / rest;
        return w;
    }

    /// corpus.json: the kept cases, their new features and their children.
    [[nodiscard]] nlohmann::json json() const {
        nlohmann::json j{{"guide", o_.json()}, {"entries", nlohmann::json::array()}};
        const auto sh = shares();
        for (std::size_t k = 0; k < 3; ++k) {
            const auto name = std::string(to_string(static_cast<derivation_plan::kind>(k)));
            j["ways"][name] = {{"cases", yield_[k].cases}, {"new_features", yield_[k].found}, {"next_share", sh[k]}};
        }
        for (const auto& e : entries_) {
            nlohmann::json je{{"case", e.id}, {"index", e.index}, {"features", e.features}, {"children", e.children}, {"energy", energy(e)}};
            if (!e.c.derivation.is_null()) je["derivation"] = e.c.derivation;
            j["entries"].push_back(std::move(je));
        }
        return j;
    }

private:
    guide_options o_;
    std::vector<corpus_entry> entries_;
    std::map<std::string, std::size_t> position_;  ///< case id -> index into entries_
    std::vector<double> energies_;                 ///< energy(entries_[k]) as of the last absorb
    double energy_total_ = 0.0;
    std::map<std::string, std::size_t> hits_;
    struct yield {
        std::size_t cases = 0, found = 0;
    };
    std::array<yield, 3> yield_{};  ///< by derivation_plan::kind
};

/// The motif a spliced instance name stands for ("conv_bn/extra_consumer" -> "conv_bn").
[[nodiscard]] inline std::string motif_base_name(std::string_view instance) {
    return std::string(instance.substr(0, instance.find('/')));
}

/// Case `index` made by `p` from `corpus` (a derived case keeps its index and so
/// its id); nullopt when the derivation finds no place (no mutation applies, an
/// opset outside the mutation layer's, a mutant whose values do not run): the
/// caller generates afresh. `why` says what failed.
[[nodiscard]] inline std::optional<io::generated_case> derive_case(const gen::generator& gen, const rewrite_corpus& corpus, const derivation_plan& p,
                                                                   std::uint64_t seed, std::uint64_t index, gen::generation_stats& stats,
                                                                   std::string& why) {
    if (p.by == derivation_plan::kind::fresh) return std::nullopt;
    const auto& parent = corpus.entries().at(p.parent);
    const auto& o = corpus.options();
    if (p.by == derivation_plan::kind::regrow) {
        gen::growth_bias bias;
        for (const auto& m : parent.c.motifs) bias.motifs.insert(motif_base_name(m));
        bias.factor = o.motif_factor;
        bias.motif_probability = o.motif_probability;
        if (!gen.motifs().empty()) {
            auto c = io::make_case(gen, seed, index, stats, &bias);
            c.derivation = {{"by", "regrow"}, {"parent", parent.id}, {"motifs", std::vector<std::string>(bias.motifs.begin(), bias.motifs.end())}};
            return c;
        }
        // No motif in this config: mutate instead.
    }
    mutate::mutate_options mo;
    mo.steps = 1 + static_cast<std::size_t>(p.seed % o.mutation_max_steps);
    std::optional<mutate::mutant> m;
    try {
        m = mutate::mutate_graph(parent.c.model, parent.c.inputs, p.seed, mo);
    } catch (const std::exception& e) {
        why = std::string("mutation failed: ") + e.what();
        return std::nullopt;
    }
    if (!m) {
        why = "no mutation applies to " + parent.id;
        return std::nullopt;
    }
    io::generated_case c;
    c.seed = seed;
    c.index = index;
    c.config_hash = parent.c.config_hash;
    c.model = std::move(m->model);
    c.inputs = std::move(m->inputs);
    for (const auto& n : c.model.nodes) c.op_types.push_back(n.op_type);
    c.motifs = parent.c.motifs;
    c.search.success = true;
    try {
        c.values = graph::run(c.model, c.inputs, {.record_intermediates = true}).values;
    } catch (const std::exception& e) {
        why = std::string("the mutant does not run: ") + e.what();
        return std::nullopt;
    }
    for (const auto& [name, t] : c.model.initializers) c.values.insert_or_assign(name, t);
    for (const auto& [name, t] : c.inputs) c.values.insert_or_assign(name, t);
    for (const auto& out : c.model.outputs) c.outputs.emplace(out.name, c.values.at(out.name));
    c.derivation = {{"by", "mutation"}, {"parent", parent.id}, {"chain", m->chain_text()}, {"seed", p.seed}, {"steps", mo.steps}};
    return c;
}

/// A case folder written by io::write_case (model.onnx, test_data_set_0/input_<k>.pb,
/// case.json), read back as a corpus entry's case (graph, inputs, motifs).
[[nodiscard]] inline io::generated_case read_corpus_case(const std::filesystem::path& folder) {
    const std::string where = "tensoracle::campaign::read_corpus_case(" + folder.string() + ")";
    io::generated_case c;
    c.model = io::load_model(folder / "model.onnx");
    for (std::size_t k = 0; k < c.model.inputs.size(); ++k) {
        const auto file = folder / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb");
        if (!std::filesystem::exists(file)) throw error(where, "no " + file.filename().string() + " for graph input '" + c.model.inputs[k].name + "'");
        c.inputs.emplace(c.model.inputs[k].name, io::load_tensor(file));
    }
    std::ifstream f(folder / "case.json");
    if (!f) throw error(where, "no case.json");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(f);
    } catch (const std::exception& e) {
        throw error(where, std::string("case.json is not readable JSON: ") + e.what());
    }
    c.seed = j.value("seed", std::uint64_t{0});
    c.index = j.value("index", std::uint64_t{0});
    c.config_hash = j.value("config_hash", std::string());
    c.motifs = j.value("motifs", std::vector<std::string>{});
    c.op_types = j.value("ops", std::vector<std::string>{});
    if (j.contains("derivation")) c.derivation = j["derivation"];
    return c;
}

}  // namespace tensoracle::campaign
