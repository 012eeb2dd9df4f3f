// tensoracle: triage of a campaign's signatures, new and real first.
//
// A signature is `known` when a confirmed finding has it (the findings the kit
// keeps as reproducers under tests/data/findings*/<name>/expected.json, or a
// user's file), a `limitation` when it is a system refusing a valid model
// (compile failures: what it does not support), and `new` otherwise. Summaries
// list new wrong results first, then new crashes and other failures, then
// known ones, then limitations, so what a person should look at comes first.
// Needs nlohmann/json, like campaign/campaign.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/core/error.hpp"

namespace tensoracle::campaign {

/// Confirmed findings by signature id: the finding's name (its folder) or label,
/// and the verdict of a judged discrepancy that is no fault of the system.
struct known_findings {
    std::map<std::string, std::string> by_signature;
    /// Signatures judged "precision" or "specification gap" (docs/FINDINGS.md): no one's
    /// bug, so a campaign labels them `judged`, not `known`. Absent: a confirmed finding.
    std::map<std::string, std::string> verdict_by_signature;

    /// The verdicts a judged signature may carry; "bug" and "limitation" are confirmed findings.
    static constexpr std::array<std::string_view, 4> verdicts{"bug", "limitation", "precision", "specification gap"};

    /// Adds `path`: a folder holding finding folders (each with an expected.json that
    /// names its "signature", or its "signatures" as a list), a folder of such folders, one finding folder, or a JSON
    /// file: {"<signature id>": "<name>", ...} or [{"signature": ..., "name": ..., "verdict": ...}]
    /// (verdict one of `verdicts`; "precision" and "specification gap" label it judged).
    /// Throws naming the path when it holds none of these.
    void add(const std::filesystem::path& path) {
        const std::string where = "tensoracle::campaign::known_findings(" + path.string() + ")";
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec)) {
            std::size_t found = 0;
            for (std::filesystem::recursive_directory_iterator it(path, ec), end; it != end; it.increment(ec)) {
                if (ec) break;
                if (it.depth() > 2) {
                    it.disable_recursion_pending();
                    continue;
                }
                if (it->path().filename() != "expected.json") continue;
                const auto j = read(it->path(), where);
                if (!j.is_object()) continue;
                // "signature": one id; "signatures": a list (one per configuration the finding shows in).
                std::vector<std::string> ids;
                if (j.contains("signature") && j["signature"].is_string()) ids.push_back(j["signature"].get<std::string>());
                if (j.contains("signatures") && j["signatures"].is_array()) {
                    for (const auto& id : j["signatures"]) {
                        if (id.is_string()) ids.push_back(id.get<std::string>());
                    }
                }
                for (const auto& id : ids) by_signature.emplace(id, it->path().parent_path().filename().string());
                found += ids.empty() ? 0 : 1;
            }
            if (found == 0) throw error(where, "no finding folder (one holding an expected.json with a \"signature\" or \"signatures\") below this folder");
            return;
        }
        const auto j = read(path, where);
        if (j.is_object()) {
            for (const auto& [id, name] : j.items()) {
                if (!name.is_string()) throw error(where, "the finding of signature " + id + " is not a name (a string)");
                by_signature.emplace(id, name.get<std::string>());
            }
            return;
        }
        if (!j.is_array()) throw error(where, "expected an object {signature: name} or a list of {\"signature\", \"name\"}");
        for (const auto& e : j) {
            if (!e.is_object() || !e.contains("signature") || !e["signature"].is_string()) {
                throw error(where, "a list entry has no \"signature\" string: " + e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
            }
            const auto id = e["signature"].get<std::string>();
            by_signature.emplace(id, e.value("name", id));
            if (const auto v = e.find("verdict"); v != e.end()) {
                const std::string verdict = v->is_string() ? v->get<std::string>() : v->dump();
                if (std::find(verdicts.begin(), verdicts.end(), verdict) == verdicts.end()) {
                    throw error(where, "signature " + id + ": unknown verdict '" + verdict + "' (known: bug, limitation, precision, specification gap)");
                }
                if (verdict == "precision" || verdict == "specification gap") verdict_by_signature.emplace(id, verdict);
            }
        }
    }
    /// Whether `id` was judged no fault of the system (precision, a specification gap).
    [[nodiscard]] bool judged_not_a_bug(const std::string& id) const { return verdict_by_signature.count(id) != 0; }

    [[nodiscard]] nlohmann::json json() const { return by_signature; }

private:
    static nlohmann::json read(const std::filesystem::path& p, const std::string& where) {
        std::ifstream in(p);
        if (!in) throw error(where, "cannot open " + p.string());
        try {
            return nlohmann::json::parse(in);
        } catch (const nlohmann::json::exception& e) {
            throw error(where, p.string() + " is not JSON: " + e.what());
        }
    }
};

/// A summary signature's label: "new", "known" (a confirmed finding), "judged" (judged
/// no fault: precision, a specification gap) or "limitation" (a valid model a system
/// refuses in every configuration the campaign runs).
[[nodiscard]] inline std::string triage_label(const nlohmann::json& sig, const known_findings& known) {
    const auto id = sig.value("id", std::string());
    if (known.judged_not_a_bug(id)) return "judged";
    if (known.by_signature.count(id) != 0) return "known";
    const auto outcome = sig.value("outcome", std::string());
    // What another configuration of the same system runs is no limitation of the system
    // (campaign.hpp's pair comparison words such a failure "..., but <other> runs it").
    const auto where = sig.value("where", std::string());
    const bool sibling_runs = where.rfind("unsupported here, but ", 0) == 0 || where.rfind("fails to load, but ", 0) == 0;
    if ((outcome == "compile_failure" || outcome == "unsupported") && !sibling_runs) return "limitation";
    return "new";
}

/// Where a labelled signature goes in a summary: new wrong results (mismatch, NaN/Inf,
/// shape or dtype, non-determinism) 0, other new failures (crash, hang, run-time
/// error, bad output) 1, known 2, judged 3, limitations 4.
[[nodiscard]] inline int triage_rank(const nlohmann::json& sig) {
    const auto label = sig.value("triage", std::string("new"));
    if (label == "known") return 2;
    if (label == "judged") return 3;
    if (label == "limitation") return 4;
    const auto outcome = sig.value("outcome", std::string());
    const bool wrong = outcome == "mismatch" || outcome == "nan_inf" || outcome == "shape_dtype" || outcome == "nondeterministic";
    return wrong ? 0 : 1;
}

}  // namespace tensoracle::campaign
