// tensoracle: the ONNX backend node-test runner. Walks folders laid out like
// onnx/backend/test/data/node (model.onnx + test_data_set_*/{input,output}_*.pb),
// runs each model on the reference interpreter and compares with the expected
// outputs at ONNX's runner defaults (rtol 1e-3, atol 1e-7).
#pragma once

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tensoracle/accuracy/compare.hpp"
#include "tensoracle/graph/interpreter.hpp"
#include "tensoracle/io/onnx.hpp"
#include "tensoracle/ops/fast_paths.hpp"
#include <onnx/defs/schema.h>

namespace tensoracle::io {

enum class case_status { passed, failed, skipped };

[[nodiscard]] inline std::string_view to_string(case_status s) {
    switch (s) {
        case case_status::passed: return "passed";
        case case_status::failed: return "failed";
        default: return "skipped";
    }
}

struct conformance_case {
    std::string name;     // folder name, e.g. test_abs
    std::string op_key;   // op types of the model, '+'-joined
    case_status status = case_status::skipped;
    std::string reason;   // why it failed or was skipped
    std::optional<int> strictest_level;  // of the worst output, when it ran
};

struct conformance_options {
    double rtol = 1e-3;
    double atol = 1e-7;
    std::string filter;  // ECMAScript regex on the case name; empty = all
};

struct conformance_report {
    std::vector<conformance_case> cases;

    [[nodiscard]] std::size_t count(case_status s) const {
        return static_cast<std::size_t>(std::count_if(cases.begin(), cases.end(), [&](const auto& c) { return c.status == s; }));
    }
    /// passed / (passed + failed): the share of supported tests that pass.
    [[nodiscard]] double pass_rate() const {
        const auto p = count(case_status::passed), f = count(case_status::failed);
        return p + f == 0 ? 1.0 : static_cast<double>(p) / static_cast<double>(p + f);
    }

    /// Per-op table: op, passed, failed, skipped.
    void print_table(std::ostream& os) const {
        std::map<std::string, std::array<std::size_t, 3>> rows;
        for (const auto& c : cases) ++rows[c.op_key][static_cast<std::size_t>(c.status)];
        os << "op                                  passed  failed skipped\n";
        for (const auto& [op, n] : rows) {
            std::ostringstream line;
            line << op;
            std::string s = line.str();
            if (s.size() < 34) s.resize(34, ' ');
            os << s << "  " << std::setw(6) << n[0] << "  " << std::setw(6) << n[1] << "  " << std::setw(6) << n[2] << "\n";
        }
    }

    void print_problems(std::ostream& os) const {
        for (const auto status : {case_status::failed, case_status::skipped}) {
            for (const auto& c : cases) {
                if (c.status == status) os << to_string(status) << ": " << c.name << ": " << c.reason << "\n";
            }
        }
    }

    /// The closing line: "conformance: P passed, F failed, S skipped".
    [[nodiscard]] std::string summary() const {
        return "conformance: " + std::to_string(count(case_status::passed)) + " passed, " +
               std::to_string(count(case_status::failed)) + " failed, " + std::to_string(count(case_status::skipped)) +
               " skipped";
    }

    [[nodiscard]] std::string to_json() const {
        auto esc = [](const std::string& s) {
            std::string o;
            for (const char ch : s) {
                if (ch == '"' || ch == '\\') {
                    o += '\\';
                    o += ch;
                } else if (static_cast<unsigned char>(ch) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(ch)));
                    o += buf;
                } else {
                    o += ch;
                }
            }
            return o;
        };
        std::ostringstream os;
        os << "{\n  \"passed\": " << count(case_status::passed) << ",\n  \"failed\": " << count(case_status::failed)
           << ",\n  \"skipped\": " << count(case_status::skipped) << ",\n  \"cases\": [\n";
        for (std::size_t i = 0; i < cases.size(); ++i) {
            const auto& c = cases[i];
            os << "    {\"name\": \"" << esc(c.name) << "\", \"op\": \"" << esc(c.op_key) << "\", \"status\": \""
               << to_string(c.status) << "\", \"reason\": \"" << esc(c.reason) << "\"";
            if (c.strictest_level) os << ", \"strictest_level\": " << *c.strictest_level;
            os << "}" << (i + 1 < cases.size() ? "," : "") << "\n";
        }
        os << "  ]\n}\n";
        return os.str();
    }
};

namespace detail {

inline std::vector<std::filesystem::path> numbered_files(const std::filesystem::path& dir, const std::string& prefix) {
    std::vector<std::filesystem::path> out;
    for (std::size_t i = 0;; ++i) {
        const auto p = dir / (prefix + std::to_string(i) + ".pb");
        if (!std::filesystem::exists(p)) break;
        out.push_back(p);
    }
    return out;
}

/// Loads a test-data tensor the model declares as `expected`. ONNX's test
/// data stores bfloat16 as UINT16 bit patterns (numpy has no bfloat16); those
/// are read back as the bfloat16 values they encode.
inline tensor load_test_tensor(const std::filesystem::path& path, std::optional<dtype> expected) {
    if (expected != dtype::bf16) return load_tensor(path);
    std::ifstream in(path, std::ios::binary);
    onnx::TensorProto p;
    if (!in || !p.ParseFromIstream(&in)) return load_tensor(path);  // reports the error
    if (p.data_type() == onnx::TensorProto::UINT16) p.set_data_type(onnx::TensorProto::BFLOAT16);
    return from_proto(p, path.parent_path());
}

/// Whether an error means "the kit does not support this variant" rather than
/// "the kit computed something wrong".
inline bool is_unsupported(const std::exception& e) {
    if (dynamic_cast<const unsupported_error*>(&e) != nullptr) return true;
    // A test the reference cannot afford within the memory budget is skipped, with why.
    if (dynamic_cast<const memory_error*>(&e) != nullptr) return true;
    // A dtype outside an op's signature (the signatures cover ONNX's types within
    // the kit's ten dtypes, checked by a test) or a foreign domain.
    const std::string what = e.what();
    return what.find("; allowed: {") != std::string::npos ||
           what.find("which tensoracle does not support") != std::string::npos;
}

}  // namespace detail

/// Runs one test folder, on the naive kernels (what conformance proves) even
/// where a program plugged in fast paths.
[[nodiscard]] inline conformance_case run_conformance_case(const std::filesystem::path& dir, const conformance_options& options = {}) {
    const ops::naive_kernels_only naive;
    conformance_case c;
    c.name = dir.filename().string();
    graph::graph g;
    std::string version_note;
    // A failure on an op version the spec does not implement is a skipped variant.
    auto fail_or_skip = [&](case_status s, std::string reason) {
        if (s == case_status::failed && !version_note.empty()) {
            s = case_status::skipped;
            reason = "op version not implemented (" + version_note + "): " + reason;
        }
        c.status = s;
        c.reason = std::move(reason);
        return c;
    };
    try {
        g = load_model(dir / "model.onnx");
        const auto ops = graph::op_types(g);
        for (const auto& op : ops) c.op_key += (c.op_key.empty() ? "" : "+") + op;
        for (const auto& op : ops) {
            const auto* spec = ops::find_op(op);
            const bool control_flow = graph::detail::is_control_flow(op);
            if (spec == nullptr && !control_flow) {
                c.status = case_status::skipped;
                c.reason = "op " + op + " is not supported";
                return c;
            }
            const int spec_opset = control_flow ? graph::if_spec::opset : spec->opset;
            // The op version the model's opset selects may differ from the one the spec implements.
            const auto* schema = onnx::OpSchemaRegistry::Schema(op, g.opset, "");
            if (schema != nullptr && schema->since_version() != spec_opset) {
                version_note += (version_note.empty() ? "" : "; ") + op + "-" + std::to_string(schema->since_version()) +
                                " in the model, " + op + "-" + std::to_string(spec_opset) + " in the spec";
            }
        }
        g.validate();
    } catch (const std::exception& e) {
        return fail_or_skip(detail::is_unsupported(e) ? case_status::skipped : case_status::failed,
                            std::string("load: ") + e.what());
    }
    std::vector<std::filesystem::path> sets;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
            sets.push_back(entry.path());
        }
    }
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) {
        c.status = case_status::skipped;
        c.reason = "no test_data_set_* folder";
        return c;
    }
    const tolerance tol{options.atol, options.rtol};
    for (const auto& set : sets) {
        try {
            const auto inputs = detail::numbered_files(set, "input_");
            const auto outputs = detail::numbered_files(set, "output_");
            if (inputs.size() > g.inputs.size()) throw error("conformance", "more input files than graph inputs");
            std::map<std::string, tensor, std::less<>> feeds;
            for (std::size_t i = 0; i < inputs.size(); ++i) {
                auto t = detail::load_test_tensor(inputs[i], g.inputs[i].type);
                // Some ONNX 1.12 test data contradicts its own model (test_castlike_*:
                // 'like' declared [3, 4], stored as [1]); such a case tests nothing.
                if (g.inputs[i].shape && *g.inputs[i].shape != t.shape()) {
                    c.status = case_status::skipped;
                    c.reason = set.filename().string() + ": test data gives input '" + g.inputs[i].name + "' shape " +
                               tensoracle::to_string(t.shape()) + " but the model declares " +
                               tensoracle::to_string(*g.inputs[i].shape);
                    return c;
                }
                feeds.emplace(g.inputs[i].name, std::move(t));
            }
            const auto result = graph::run(g, feeds);
            if (outputs.size() != g.outputs.size()) throw error("conformance", "output file count differs from graph outputs");
            for (std::size_t o = 0; o < outputs.size(); ++o) {
                const auto expected = detail::load_test_tensor(outputs[o], g.outputs[o].type);
                const auto& actual = result.outputs.at(g.outputs[o].name);
                const auto report = compare(actual, expected);
                if (const auto lv = report.min_passing_level()) {
                    c.strictest_level = c.strictest_level ? std::max(*c.strictest_level, *lv) : *lv;
                }
                if (!report.passes(tol)) {
                    return fail_or_skip(case_status::failed, set.filename().string() + ", output " +
                                                                 g.outputs[o].name + ": " + report.describe(tol));
                }
            }
        } catch (const std::exception& e) {
            return fail_or_skip(detail::is_unsupported(e) ? case_status::skipped : case_status::failed,
                                set.filename().string() + ": " + e.what());
        }
    }
    c.status = case_status::passed;
    return c;
}

/// Runs every test folder under `root` (sorted by name) that matches the filter.
[[nodiscard]] inline conformance_report run_conformance(const std::filesystem::path& root, const conformance_options& options = {}) {
    if (!std::filesystem::is_directory(root)) throw error("tensoracle::io::run_conformance", "'" + root.string() + "' is not a directory");
    std::vector<std::filesystem::path> dirs;
    for (const auto& entry : std::filesystem::directory_iterator(root)) {
        if (entry.is_directory() && std::filesystem::exists(entry.path() / "model.onnx")) dirs.push_back(entry.path());
    }
    std::sort(dirs.begin(), dirs.end());
    const std::regex filter(options.filter.empty() ? ".*" : options.filter);
    conformance_report r;
    for (const auto& d : dirs) {
        if (!std::regex_search(d.filename().string(), filter)) continue;
        r.cases.push_back(run_conformance_case(d, options));
    }
    return r;
}

}  // namespace tensoracle::io
