// tensoracle: support probing (NNSmith's single-op trials). Before a campaign each
// backend runs single-op cases per (op, dtype of the op's first input), a few
// variants each (other shapes and attributes from the generator). A pair every
// variant of which the backend calls `unsupported` is left out of the campaign's
// generation (config::support): unsupported is a fact to report, not a bug.
// Anything else the backend does with a pair (runs it, fails to compile it,
// crashes) keeps it in, so refusals of valid models stay findings.
//
// Results are cached per backend and version (its description: ONNX Runtime's and
// OpenCV's versions, or a command's words and its executable's size and time):
// `${XDG_CACHE_HOME:-~/.cache}/tensoracle/support/<name>-<hash>.json`, so a new
// version is probed again. Needs ONNX (case files) and nlohmann/json.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tensoracle/campaign/campaign.hpp"
#include "tensoracle/core/hash.hpp"
#include "tensoracle/version.hpp"

namespace tensoracle::campaign {

/// What probing found for one backend: (op, dtype) -> "supported", "unsupported" or
/// "not generated" (the generator could not make that pair alone under the config).
struct support_table {
    std::string backend, description;
    std::map<std::string, std::map<dtype, std::string>> pairs;
    std::size_t runs = 0;  ///< backend runs this probe took (0: all from the cache)

    [[nodiscard]] bool supports(const std::string& op, dtype d) const {
        const auto it = pairs.find(op);
        if (it == pairs.end()) return true;
        const auto jt = it->second.find(d);
        return jt == it->second.end() || jt->second != "unsupported";
    }
    [[nodiscard]] nlohmann::json json() const {
        nlohmann::json ops = nlohmann::json::object(), unsupported = nlohmann::json::object();
        for (const auto& [op, m] : pairs) {
            for (const auto& [d, what] : m) {
                if (what == "supported") ops[op].push_back(std::string(name(d)));
                if (what == "unsupported") unsupported[op].push_back(std::string(name(d)));
            }
            if (!ops.contains(op)) ops[op] = nlohmann::json::array();
        }
        return {{"description", description}, {"ops", ops}, {"unsupported", unsupported}, {"probe_runs", runs}};
    }
};

struct probe_options {
    std::size_t variants = 2;  ///< single-op cases per (op, dtype)
    double timeout_seconds = 10.0;
    std::filesystem::path cache_dir;        ///< empty: the default cache folder
    std::filesystem::path scratch;          ///< where probe cases are written (required)
    bool use_cache = true;
};

/// The default cache folder: $XDG_CACHE_HOME/tensoracle/support or ~/.cache/tensoracle/support.
[[nodiscard]] inline std::filesystem::path default_support_cache() {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "tensoracle" / "support";
    if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "tensoracle" / "support";
    return std::filesystem::temp_directory_path() / "tensoracle-support-cache";
}

/// Probes backend `b` (described by `description`, its version included) on every op of
/// `config` (its include/exclude list, dtypes and opset), in the cache first.
inline support_table probe_support(backend& b, const std::string& description, const gen::config& config, const probe_options& o,
                                   const std::function<void(std::size_t, std::size_t)>& on_progress = {}) {
    const char* where = "tensoracle::campaign::probe_support";
    if (o.scratch.empty()) throw error(where, "no scratch folder");
    support_table t;
    t.backend = b.name();
    t.description = description;
    const auto cache_dir = o.cache_dir.empty() ? default_support_cache() : o.cache_dir;
    const auto cache = cache_dir / (b.name() + "-" + fnv1a_hex(description + "|" + std::string(version_string)) + ".json");
    nlohmann::json cached = nlohmann::json::object();
    if (o.use_cache && std::filesystem::exists(cache)) {
        std::ifstream f(cache);
        cached = nlohmann::json::parse(f, nullptr, false);
        if (!cached.is_object()) cached = nlohmann::json::object();
    }
    // The pairs to know: each op the config draws, each of the config's dtypes its first input takes.
    std::vector<std::pair<std::string, dtype>> todo;
    for (const auto& e : ops::registry()) {
        const std::string op(e.op_type);
        if (!config.include_ops.empty() && std::find(config.include_ops.begin(), config.include_ops.end(), op) == config.include_ops.end()) continue;
        if (std::find(config.exclude_ops.begin(), config.exclude_ops.end(), op) != config.exclude_ops.end()) continue;
        for (const auto d : config.dtypes) {
            if (!e.inputs.empty() && !e.inputs[0].types.contains(d)) continue;
            todo.emplace_back(op, d);
        }
    }
    detail::lane lane;
    lane.backends.push_back(b.clone());
    lane.scratch = o.scratch;
    const case_judge judge(judge_options{-4.0, o.timeout_seconds, false, false, false, false});
    std::size_t done = 0;
    for (const auto& [op, d] : todo) {
        const std::string key = op + "/" + std::string(name(d));
        if (cached.contains(key)) {
            t.pairs[op][d] = cached[key].get<std::string>();
            if (on_progress) on_progress(++done, todo.size());
            continue;
        }
        gen::config one = config;
        one.include_ops = {op};
        one.exclude_ops.clear();
        one.support = {{op, {d}}};
        // The op's values in that dtype, and int64 for shape-like inputs (Reshape's shape, axes).
        one.dtypes = {d};
        if (d != dtype::i64) one.dtypes.push_back(dtype::i64);
        one.max_nodes = 1;
        one.search_attempts = 2;
        std::string verdict = "not generated";
        try {
            const gen::generator gen(one);
            bool any = false, all_unsupported = true;
            for (std::size_t v = 0; v < o.variants; ++v) {
                gen::generation_stats stats;
                io::generated_case c;
                try {
                    c = io::make_case(gen, 0x5eed, v, stats);
                } catch (const error&) {
                    continue;
                }
                if (std::find(c.op_types.begin(), c.op_types.end(), op) == c.op_types.end()) continue;  // the op did not fit
                any = true;
                const auto e = judge.evaluate(lane, c);
                ++t.runs;
                all_unsupported = all_unsupported && e.results[0].run.status == run_status::unsupported;
            }
            if (any) verdict = all_unsupported ? "unsupported" : "supported";
        } catch (const backend_unavailable&) {
            throw;
        } catch (const error&) {
            // The config cannot draw this op alone (a rank or an element limit): nothing to ask the backend.
        }
        t.pairs[op][d] = verdict;
        cached[key] = verdict;
        if (on_progress) on_progress(++done, todo.size());
    }
    std::error_code ec;
    std::filesystem::create_directories(cache_dir, ec);
    cached["__description"] = description;
    if (!ec) detail::write_json(cache, cached);
    return t;
}

/// The generator's support table from the backends' probes: a pair is drawn when some
/// backend accepts it (so none loses coverage; the others report it unsupported).
[[nodiscard]] inline std::map<std::string, std::set<dtype>> combined_support(const std::vector<support_table>& tables, const gen::config& config) {
    std::map<std::string, std::set<dtype>> out;
    std::set<std::string> ops;
    for (const auto& t : tables) {
        for (const auto& [op, m] : t.pairs) ops.insert(op);
    }
    for (const auto& op : ops) {
        std::set<dtype> ds;
        for (const auto d : config.dtypes) {
            bool known = false, accepted = false;
            for (const auto& t : tables) {
                const auto it = t.pairs.find(op);
                if (it == t.pairs.end() || !it->second.count(d)) continue;
                known = true;
                accepted = accepted || it->second.at(d) != "unsupported";
            }
            if (!known || accepted) ds.insert(d);
        }
        out[op] = ds;
    }
    return out;
}

}  // namespace tensoracle::campaign
