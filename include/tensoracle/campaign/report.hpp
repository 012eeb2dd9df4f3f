// tensoracle: a campaign folder for a person, and campaign folders merged.
//
//   write_report(dir)             dir/report.html: one self-contained page (no script,
//                                 no server): settings, outcome tables, GraphNet's S_t /
//                                 ES_t curves over tolerance levels and an error
//                                 histogram as inline SVG, the support matrix when the
//                                 backends were probed, one row per signature linking
//                                 to its case and its reduced bundle
//   merge_campaigns(dirs, out)    shards (or campaigns of one setting) into one folder:
//                                 results, cases and bundles copied, the summary grouped
//                                 again, signatures combined with their counts
//
// The SVG comes from `svg_chart`, a small writer with axes, ticks, units, labels and
// a legend, tested on its own. Needs nlohmann/json (and what campaign.hpp needs).
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tensoracle/accuracy/score.hpp"
#include "tensoracle/campaign/campaign.hpp"

namespace tensoracle::campaign {

/// Text made safe for HTML and SVG (element content and attribute values).
[[nodiscard]] inline std::string html_escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

/// One chart: lines (x, y points per series) or grouped bars (one value per category
/// per series), with axes, ticks, axis labels with their units, a title and a legend.
struct svg_chart {
    struct series {
        std::string name;
        std::vector<std::pair<double, double>> points;  ///< lines: (x, y)
        std::vector<double> bars;                       ///< bars: one value per category
    };
    std::string title, x_label, y_label;
    std::vector<std::string> categories;  ///< bars: the x axis' labels
    std::vector<series> data;
    int width = 640, height = 360;

    [[nodiscard]] std::string render() const {
        static constexpr const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
        const double left = 64, right = 150, top = 36, bottom = 52;
        const double pw = width - left - right, ph = height - top - bottom;
        const bool bars = !categories.empty();
        double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
        bool any = false;
        for (const auto& s : data) {
            for (const auto& [x, y] : s.points) {
                if (!std::isfinite(x) || !std::isfinite(y)) continue;
                if (!any) {
                    x0 = x1 = x;
                    y0 = y1 = y;
                    any = true;
                }
                x0 = std::min(x0, x);
                x1 = std::max(x1, x);
                y0 = std::min(y0, y);
                y1 = std::max(y1, y);
            }
            for (const double v : s.bars) {
                if (std::isfinite(v)) y1 = std::max(y1, v);
            }
        }
        if (bars) {
            y0 = 0;
            x0 = 0;
            x1 = static_cast<double>(categories.size());
        }
        y0 = std::min(y0, 0.0);
        if (y1 <= y0) y1 = y0 + 1;
        if (x1 <= x0) x1 = x0 + 1;
        y1 += 0.05 * (y1 - y0);
        auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
        auto py = [&](double y) { return top + ph - (y - y0) / (y1 - y0) * ph; };
        std::ostringstream os;
        os.precision(4);
        os << "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" class=\"chart\" width=\"" << width << "\" height=\"" << height
           << "\" viewBox=\"0 0 " << width << ' ' << height << "\"><title>" << html_escape(title) << "</title>\n";
        os << "<text x=\"" << width / 2 << "\" y=\"20\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" << html_escape(title)
           << "</text>\n";
        // Axes, ticks and grid.
        os << "<g class=\"axes\" stroke=\"#333\" font-size=\"11\"><line x1=\"" << left << "\" y1=\"" << top + ph << "\" x2=\"" << left + pw
           << "\" y2=\"" << top + ph << "\"/><line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << top + ph << "\"/>\n";
        for (const double v : ticks(y0, y1, 5)) {
            os << "<line x1=\"" << left - 4 << "\" y1=\"" << py(v) << "\" x2=\"" << left + pw << "\" y2=\"" << py(v)
               << "\" stroke=\"#ddd\"/><text x=\"" << left - 8 << "\" y=\"" << py(v) + 4 << "\" text-anchor=\"end\" stroke=\"none\">" << tick(v)
               << "</text>\n";
        }
        if (bars) {
            for (std::size_t c = 0; c < categories.size(); ++c) {
                os << "<text x=\"" << px(static_cast<double>(c) + 0.5) << "\" y=\"" << top + ph + 16 << "\" text-anchor=\"middle\" stroke=\"none\">"
                   << html_escape(categories[c]) << "</text>\n";
            }
        } else {
            for (const double v : ticks(x0, x1, 7)) {
                os << "<line x1=\"" << px(v) << "\" y1=\"" << top + ph << "\" x2=\"" << px(v) << "\" y2=\"" << top + ph + 4 << "\"/><text x=\"" << px(v)
                   << "\" y=\"" << top + ph + 16 << "\" text-anchor=\"middle\" stroke=\"none\">" << tick(v) << "</text>\n";
            }
        }
        os << "</g>\n<text x=\"" << left + pw / 2 << "\" y=\"" << height - 12 << "\" text-anchor=\"middle\" font-size=\"12\">" << html_escape(x_label)
           << "</text>\n<text transform=\"translate(16," << top + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">"
           << html_escape(y_label) << "</text>\n";
        // Data.
        const double groups = static_cast<double>(std::max<std::size_t>(data.size(), 1));
        for (std::size_t k = 0; k < data.size(); ++k) {
            const auto& s = data[k];
            const char* color = colors[k % 8];
            if (bars) {
                for (std::size_t c = 0; c < s.bars.size() && c < categories.size(); ++c) {
                    const double w = 0.8 / groups;
                    const double x = static_cast<double>(c) + 0.1 + w * static_cast<double>(k);
                    os << "<rect class=\"bar\" x=\"" << px(x) << "\" y=\"" << py(s.bars[c]) << "\" width=\"" << std::max(1.0, px(x + w) - px(x))
                       << "\" height=\"" << std::max(0.0, py(0) - py(s.bars[c])) << "\" fill=\"" << color << "\"><title>" << html_escape(s.name) << ", "
                       << html_escape(categories[c]) << ": " << s.bars[c] << "</title></rect>\n";
                }
            } else {
                os << "<polyline class=\"series\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
                for (const auto& [x, y] : s.points) {
                    if (std::isfinite(x) && std::isfinite(y)) os << px(x) << ',' << py(y) << ' ';
                }
                os << "\"><title>" << html_escape(s.name) << "</title></polyline>\n";
            }
            const double ly = top + 14 + 18 * static_cast<double>(k);
            os << "<rect x=\"" << left + pw + 12 << "\" y=\"" << ly - 9 << "\" width=\"12\" height=\"10\" fill=\"" << color << "\"/><text x=\""
               << left + pw + 28 << "\" y=\"" << ly << "\" font-size=\"11\">" << html_escape(s.name) << "</text>\n";
        }
        os << "</svg>\n";
        return os.str();
    }

private:
    /// Round-valued ticks (1, 2 or 5 times a power of ten apart) covering [lo, hi], about `n` of them.
    [[nodiscard]] static std::vector<double> ticks(double lo, double hi, int n) {
        const double raw = (hi - lo) / n, mag = std::pow(10.0, std::floor(std::log10(raw)));
        double step = mag;
        for (const double m : {1.0, 2.0, 5.0, 10.0}) {
            step = m * mag;
            if (step >= raw) break;
        }
        std::vector<double> out;
        for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) out.push_back(std::abs(v) < 1e-12 * step ? 0.0 : v);
        return out;
    }
    [[nodiscard]] static std::string tick(double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, std::abs(v) >= 1000 || (std::abs(v) < 0.01 && v != 0) ? "%.1e" : "%.3g", v);
        return buf;
    }
};

namespace detail {

/// Every line of a campaign folder's results.jsonl (a line cut by a kill is skipped).
[[nodiscard]] inline std::vector<nlohmann::json> read_results(const std::filesystem::path& dir) {
    std::vector<nlohmann::json> out;
    std::ifstream f(dir / "results.jsonl");
    std::string line;
    while (std::getline(f, line)) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (is_result_line(j)) out.push_back(std::move(j));
    }
    return out;
}

[[nodiscard]] inline nlohmann::json read_json_file(const std::filesystem::path& p, const char* where) {
    std::ifstream f(p);
    if (!f) throw error(where, "no " + p.string());
    auto j = nlohmann::json::parse(f, nullptr, false);
    if (j.is_discarded()) throw error(where, p.string() + " is not readable JSON");
    return j;
}

/// GraphNet's sample of one backend's result on one case (nullopt: unsupported or no baseline).
[[nodiscard]] inline std::optional<benchmark_sample> score_sample(const nlohmann::json& line, const nlohmann::json& r) {
    const auto oc = r.value("outcome", std::string());
    if (oc == "unsupported" || oc == "not_compared") return std::nullopt;
    benchmark_sample s;
    const int code = r.value("graphnet_error_code", 0);
    if (code == 2) {
        s.failure = outcome::runtime_crash;
        return s;
    }
    if (code == 3) {
        s.failure = outcome::compile_failure;
        return s;
    }
    const double ref = line.value("reference_seconds", 0.0), mine = r.value("seconds", 0.0);
    if (!(ref > 0) || !(mine > 0)) return std::nullopt;
    s.failure = code == 1 ? outcome::accuracy : outcome::pass;
    s.speedup = ref / mine;
    if (r.contains("passing_level")) {
        s.passing_level = r["passing_level"].get<int>();
    } else if (r.contains("min_passing_level")) {
        s.passing_level = r["min_passing_level"].get<int>();
    } else if (oc == "pass" || oc == "reference_precision") {
        s.passing_level = -4;  // journals of earlier versions: passed at the campaign's level
    }
    return s;
}

}  // namespace detail

/// Writes `dir`/report.html from its summary.json, results.jsonl and campaign.json;
/// returns its path.
inline std::filesystem::path write_report(const std::filesystem::path& dir) {
    const char* where = "tensoracle::campaign::write_report";
    const auto summary = detail::read_json_file(dir / "summary.json", where);
    const auto settings = std::filesystem::exists(dir / "campaign.json") ? detail::read_json_file(dir / "campaign.json", where) : nlohmann::json::object();
    const auto lines = detail::read_results(dir);
    std::ostringstream h;
    h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tensoracle campaign report</title>\n<style>\n"
         "body{font-family:sans-serif;margin:24px;max-width:1200px;color:#222}table{border-collapse:collapse;margin:8px 0 20px}"
         "th,td{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}"
         "code{font-size:12px}.note{color:#666;font-size:13px}\n</style></head><body>\n";
    h << "<h1>tensoracle campaign report</h1>\n<p class=\"note\">" << summary.value("cases", 0) << " of " << summary.value("requested", 0)
      << " cases, seed " << summary.value("seed", 0) << ", config " << html_escape(summary.value("config_hash", std::string())) << ", tolerance level "
      << summary.value("level", -4.0) << " (GraphNet)";
    if (summary.contains("merged_from")) h << ", merged from " << summary["merged_from"].size() << " folders";
    h << ".</p>\n";
    // The first screen: what is new and real (campaign/triage.hpp), before anything else.
    {
        std::size_t new_count = 0;
        for (const auto& g : summary["signatures"]) new_count += g.value("triage", std::string("new")) == "new" ? 1 : 0;
        const auto t = summary.value("triage", nlohmann::json::object());
        h << "<h2>New and real</h2>\n<p>" << new_count << " new signature(s); " << t.value("known", 0) << " known (confirmed findings), "
          << t.value("judged", 0) << " judged not bugs (precision, specification gaps), " << t.value("limitation", 0)
          << " limitations (valid models a system refuses), listed at the end.</p>\n";
        if (new_count > 0) {
            h << "<table id=\"new\"><tr><th class=\"l\">id</th><th>cases</th><th class=\"l\">backend</th><th class=\"l\">outcome</th><th class=\"l\">where</th></tr>\n";
            for (const auto& g : summary["signatures"]) {
                if (g.value("triage", std::string("new")) != "new") continue;
                h << "<tr><td class=\"l\"><code>" << html_escape(g.value("id", std::string())) << "</code></td><td>" << g.value("count", 0)
                  << "</td><td class=\"l\">" << html_escape(g.value("backend", std::string())) << "</td><td class=\"l\">"
                  << html_escape(g.value("outcome", std::string())) << "</td><td class=\"l\">" << html_escape(g.value("where", std::string())) << "</td></tr>\n";
            }
            h << "</table>\n";
        }
    }
    if (summary.contains("rewrites")) {
        // What the systems rewrote comes first: a case reaches a compiler's bugs through it.
        h << "<h2>What the backends rewrote</h2>\n<p class=\"note\">From the graph each backend reported it executed "
             "(its rewritten.onnx against the case's model.onnx): nodes that vanished, appeared or changed, grouped by the tensors they share.</p>\n";
        for (const auto& [name, t] : summary["rewrites"].items()) {
            h << "<p>" << html_escape(name) << ": " << t.value("rewritten", 0) << " of " << t.value("reported", 0)
              << " reported graphs changed by an optimization; " << t.value("optimization_kinds", 0) << " optimization kinds.</p>\n"
              << "<table class=\"rewrites\"><tr><th class=\"l\">kind</th><th class=\"l\">class</th><th>cases</th><th>events</th><th class=\"l\">first case</th></tr>\n";
            for (const auto& k : t["kinds"]) {
                h << "<tr><td class=\"l\"><code>" << html_escape(k.value("kind", std::string())) << "</code></td><td class=\"l\">"
                  << html_escape(k.value("class", std::string())) << "</td><td>" << k.value("cases", 0) << "</td><td>" << k.value("events", 0)
                  << "</td><td class=\"l\">" << html_escape(k.value("first_case", std::string())) << "</td></tr>\n";
            }
            h << "</table>\n";
        }
    }
    if (settings.contains("backends")) {
        h << "<h2>Backends</h2>\n<table><tr><th class=\"l\">name</th><th class=\"l\">command</th></tr>\n";
        for (const auto& b : settings["backends"]) {
            h << "<tr><td class=\"l\">" << html_escape(b.value("name", std::string())) << "</td><td class=\"l\"><code>"
              << html_escape(b.value("command", std::string())) << "</code></td></tr>\n";
        }
        h << "</table>\n";
    }
    auto outcome_table = [&](const nlohmann::json& rows, const std::string& title, const std::string& id) {
        std::vector<std::string> cols;
        for (const auto c : all_outcomes) cols.emplace_back(to_string(c));
        for (const auto& [name, r] : rows.items()) {
            for (const auto& [k, v] : r["outcomes"].items()) {
                if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
            }
        }
        std::vector<std::string> shown;
        for (const auto& c : cols) {
            bool used = c == "pass";
            for (const auto& [name, r] : rows.items()) used = used || r["outcomes"].value(c, 0) > 0;
            if (used) shown.push_back(c);
        }
        h << "<h2>" << html_escape(title) << "</h2>\n<table id=\"" << id << "\"><tr><th class=\"l\"></th>";
        for (const auto& c : shown) h << "<th>" << html_escape(c) << "</th>";
        h << "</tr>\n";
        for (const auto& [name, r] : rows.items()) {
            h << "<tr><td class=\"l\">" << html_escape(name) << "</td>";
            for (const auto& c : shown) h << "<td>" << r["outcomes"].value(c, 0) << "</td>";
            h << "</tr>\n";
        }
        h << "</table>\n";
    };
    outcome_table(summary["backends"], "Outcomes per backend", "outcomes");
    if (summary.contains("pairs")) outcome_table(summary["pairs"], "Backend vs backend", "pairs");
    if (summary.contains("metamorphic")) outcome_table(summary["metamorphic"], "Metamorphic oracle: each backend on a mutant vs itself on the original", "metamorphic");

    // GraphNet's scores over tolerance levels: the baseline is our reference interpreter's time on the case.
    std::map<std::string, std::vector<benchmark_sample>> samples;
    std::map<std::string, std::vector<double>> rel_errors;
    for (const auto& line : lines) {
        if (!line.contains("backends")) continue;
        for (const auto& [name, r] : line["backends"].items()) {
            if (const auto s = detail::score_sample(line, r)) samples[name].push_back(*s);
            if (r.contains("max_rel_error")) {
                // JSON has no infinity: an infinite relative error (against a reference 0) is written as null.
                const auto& e = r["max_rel_error"];
                rel_errors[name].push_back(e.is_number() ? e.get<double>() : std::numeric_limits<double>::infinity());
            }
        }
    }
    svg_chart scores;
    scores.title = "S_t (t <= 0) and ES_t (t > 0) over tolerance levels";
    scores.x_label = "tolerance level t (GraphNet; t = -4 is the campaign's comparison)";
    scores.y_label = "score (no unit)";
    for (const auto& [name, v] : samples) {
        svg_chart::series s{name, {}, {}};
        for (int t = -10; t <= 3; ++t) s.points.emplace_back(t, speedup_score(v, t).score);
        scores.data.push_back(std::move(s));
    }
    svg_chart hist;
    hist.title = "Largest relative error per case, against the reference";
    hist.x_label = "log10 of the largest relative error of a case's outputs";
    hist.y_label = "cases";
    const std::vector<std::pair<std::string, double>> bins = {{"exact", -1e300}, {"<-12", -12}, {"-12..-9", -9}, {"-9..-6", -6}, {"-6..-4", -4},
                                                              {"-4..-2", -2}, {"-2..0", 0},   {">=0", 1e300}};
    for (const auto& b : bins) hist.categories.push_back(b.first);
    for (const auto& [name, v] : rel_errors) {
        svg_chart::series s{name, {}, std::vector<double>(bins.size(), 0.0)};
        for (const double e : v) {
            if (!(e > 0)) {
                s.bars[0] += 1;
                continue;
            }
            const double l = std::log10(e);
            for (std::size_t k = 1; k < bins.size(); ++k) {
                if (l < bins[k].second || k + 1 == bins.size()) {
                    s.bars[k] += 1;
                    break;
                }
            }
        }
        hist.data.push_back(std::move(s));
    }
    h << "<h2>Scores and errors</h2>\n<p class=\"note\">GraphNet's scores: the geometric mean of rectified speedups, where the speedup "
         "of a case is our reference interpreter's time over the backend's (its process and file exchange included, so below 1 for "
         "a separate process); a case that fails at level t scores b = 0.1; ES_t forgives error code c once t &gt;= c (1 accuracy, "
         "2 runtime, 3 compile). Unsupported cases are left out.</p>\n";
    if (!scores.data.empty()) h << scores.render();
    if (!hist.data.empty()) h << hist.render();

    // Support matrix, when the backends were probed (support.json).
    if (std::filesystem::exists(dir / "support.json")) {
        const auto support = detail::read_json_file(dir / "support.json", where);
        h << "<h2>Support matrix</h2>\n<p class=\"note\">From single-op probes (cached per backend version); the generator drew only "
             "supported (op, dtype) pairs.</p>\n<table id=\"support\"><tr><th class=\"l\">op</th>";
        std::vector<std::string> names;
        for (const auto& [name, b] : support["backends"].items()) names.push_back(name);
        for (const auto& n : names) h << "<th>" << html_escape(n) << "</th>";
        h << "</tr>\n";
        std::set<std::string> ops;
        for (const auto& n : names) {
            for (const auto& [op, d] : support["backends"][n]["ops"].items()) ops.insert(op);
        }
        for (const auto& op : ops) {
            h << "<tr><td class=\"l\">" << html_escape(op) << "</td>";
            for (const auto& n : names) {
                std::string cell;
                if (support["backends"][n]["ops"].contains(op)) {
                    for (const auto& d : support["backends"][n]["ops"][op]) cell += (cell.empty() ? "" : " ") + d.get<std::string>();
                }
                h << "<td class=\"l\">" << html_escape(cell.empty() ? "-" : cell) << "</td>";
            }
            h << "</tr>\n";
        }
        h << "</table>\n";
    }

    h << "<h2>Signatures</h2>\n<table id=\"signatures\"><tr><th class=\"l\">id</th><th>cases</th><th class=\"l\">backend</th><th class=\"l\">outcome</th>"
         "<th class=\"l\">oracle</th><th class=\"l\">where</th><th class=\"l\">smallest case</th><th class=\"l\">reduced</th><th class=\"l\">triage</th></tr>\n";
    for (const auto& g : summary["signatures"]) {
        const auto id = g.value("id", std::string()), c = g.value("case", std::string());
        h << "<tr><td class=\"l\"><code>" << html_escape(id) << "</code></td><td>" << g.value("count", 0) << "</td><td class=\"l\">"
          << html_escape(g.value("backend", std::string())) << "</td><td class=\"l\">" << html_escape(g.value("outcome", std::string()))
          << "</td><td class=\"l\">" << html_escape(g.value("oracle", std::string())) << "</td><td class=\"l\">" << html_escape(g.value("where", std::string()))
          << "</td><td class=\"l\"><a href=\"cases/" << html_escape(c) << "/model.txt\">" << html_escape(c) << "</a> (" << g.value("case_nodes", 0)
          << " nodes)</td><td class=\"l\">";
        if (g.contains("bundle")) {
            h << "<a href=\"" << html_escape(g["bundle"].get<std::string>()) << "/README.md\">" << g.value("reduced_nodes", 0) << " node(s)</a>";
        } else {
            h << html_escape(g.value("reduction", std::string("-")));
        }
        h << "</td><td class=\"l\">" << html_escape(g.value("triage", std::string("new")))
          << (g.contains("finding") ? ": " + html_escape(g["finding"].get<std::string>()) : std::string()) << "</td></tr>\n";
    }
    h << "</table>\n</body></html>\n";
    const auto path = dir / "report.html";
    std::ofstream out(path, std::ios::binary);
    if (!out || !(out << h.str())) throw error(where, "cannot write " + path.string());
    return path;
}

/// Merges campaign folders of one setting (shards, or runs of other case ranges) into
/// `out`: results (each case index once), cases and reduced bundles copied, the summary
/// grouped again (signatures combined with their counts) and report.html written.
/// Folders of other settings (seed, config, level, backends, mutants) are refused.
inline nlohmann::json merge_campaigns(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out) {
    const char* where = "tensoracle::campaign::merge_campaigns";
    if (dirs.empty()) throw error(where, "no campaign folder to merge");
    nlohmann::json base;
    std::vector<std::string> backends;
    std::uint64_t requested = 0;
    for (std::size_t k = 0; k < dirs.size(); ++k) {
        const auto settings = detail::read_json_file(dirs[k] / "campaign.json", where);
        if (k == 0) {
            base = settings;
            for (const auto& b : settings["backends"]) backends.push_back(b.value("name", std::string()));
        } else {
            for (const char* key : {"seed", "config_hash", "level", "backends", "float64_oracle", "recheck", "localize", "compare_backends", "mutants"}) {
                if (settings.value(key, nlohmann::json()) != base.value(key, nlohmann::json())) {
                    throw error(where, dirs[k].string() + " holds a campaign with another '" + key + "' than " + dirs[0].string() + " (" +
                                           settings.value(key, nlohmann::json()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " vs " + base.value(key, nlohmann::json()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ")");
                }
            }
        }
        requested += detail::read_json_file(dirs[k] / "summary.json", where).value("requested", std::uint64_t{0});
    }
    std::filesystem::create_directories(out / "cases");
    if (std::filesystem::exists(out / "results.jsonl")) throw error(where, out.string() + " already holds a campaign: merge into a new folder");
    std::ofstream journal(out / "results.jsonl");
    std::set<std::uint64_t> seen;
    for (const auto& d : dirs) {
        for (const auto& line : detail::read_results(d)) {
            if (seen.insert(line["index"].get<std::uint64_t>()).second) journal << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        }
        for (const char* sub : {"cases", "reduced"}) {
            if (!std::filesystem::exists(d / sub)) continue;
            for (const auto& e : std::filesystem::directory_iterator(d / sub)) {
                const auto to = out / sub / e.path().filename();
                if (std::filesystem::exists(to)) continue;
                std::filesystem::create_directories(to.parent_path());
                std::filesystem::copy(e.path(), to, std::filesystem::copy_options::recursive);
            }
        }
    }
    journal.close();
    auto settings = base;
    settings.erase("shard");
    settings["merged_from"] = nlohmann::json::array();
    for (const auto& d : dirs) settings["merged_from"].push_back(d.string());
    detail::write_json(out / "campaign.json", settings);
    summary_scope sc;
    sc.dir = out;
    sc.backends = backends;
    sc.includes = [](std::uint64_t) { return true; };
    sc.requested = requested;
    sc.level = base.value("level", -4.0);
    if (base.contains("known_findings") && base["known_findings"].is_object()) {
        for (const auto& [id, name] : base["known_findings"].items()) {
            if (name.is_string()) sc.known.by_signature.emplace(id, name.get<std::string>());
        }
    }
    sc.seed = base.value("seed", std::uint64_t{0});
    sc.config_hash = base.value("config_hash", std::string());
    sc.mutants = base.contains("mutants") && !(base["mutants"].is_number() && base["mutants"].get<int>() == 0);
    auto s = write_summary(sc);
    s["merged_from"] = settings["merged_from"];
    detail::write_json(out / "summary.json", s);
    (void)write_report(out);
    return s;
}

}  // namespace tensoracle::campaign
