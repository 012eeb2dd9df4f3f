// tensoracle: a generated test case on disk, in the ONNX backend-test
// layout, so any runner of ONNX node tests reads it:
//
//   <dir>/<case id>/model.onnx                 graph, weights as initializers
//   <dir>/<case id>/test_data_set_0/input_<k>.pb, output_<k>.pb
//   <dir>/<case id>/model.txt                  readable dump
//   <dir>/<case id>/case.json                  seed, index, config hash, ops,
//                                              input-search outcome
//
// Needs ONNX (libonnx, protobuf) and nlohmann/json. The case id depends on
// (seed, index) alone, and every file is a pure function of the case, so
// two runs (or shards) write byte-identical files.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "tensoracle/core/error.hpp"
#include "tensoracle/gen/generator.hpp"
#include "tensoracle/gen/input_search.hpp"
#include "tensoracle/graph/interpreter.hpp"
#include "tensoracle/io/onnx.hpp"

namespace tensoracle::io {

/// "s<seed>_c<index>" with the index zero-padded to 8 digits: folder names
/// sort in case order.
[[nodiscard]] inline std::string case_id(std::uint64_t seed, std::uint64_t index) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "s%llu_c%08llu", static_cast<unsigned long long>(seed),
                  static_cast<unsigned long long>(index));
    return buf;
}

/// One generated case: the graph with its searched data and every value.
struct generated_case {
    std::uint64_t seed = 0, index = 0;
    std::string config_hash;
    graph::graph model;                                  ///< weights filled in
    std::map<std::string, tensor, std::less<>> inputs;   ///< graph inputs
    std::map<std::string, tensor, std::less<>> outputs;  ///< graph outputs (our interpreter)
    std::vector<std::string> op_types;
    std::vector<std::string> motifs;  ///< motif instances spliced in (gen::graph_sketch::motifs)
    /// How a guided campaign derived this case from a corpus case (campaign/corpus.hpp):
    /// {"by": "mutation" | "regrow", "parent": id, ...}; null for a case generated from
    /// (seed, index) alone, which make_case reproduces.
    nlohmann::json derivation;
    gen::search_result search;
    std::size_t graphs_grown = 1;  ///< graphs this case took (more than 1: earlier input searches failed)
    /// Every value of the graph (inputs, weights, intermediates, outputs).
    std::map<std::string, tensor, std::less<>> values;
};

/// Generates and searches case `index` of `seed` under `gen`'s config: a
/// pure function of (seed, index, config).
[[nodiscard]] inline generated_case make_case(const gen::generator& gen, std::uint64_t seed, std::uint64_t index,
                                              gen::generation_stats& stats, const gen::growth_bias* bias = nullptr) {
    generated_case c;
    c.seed = seed;
    c.index = index;
    c.config_hash = gen.settings().hash();
    auto g = gen::case_rng(seed, index, c.config_hash);
    gen::search_options so;
    so.iterations = gen.settings().search_iterations;
    so.work_budget = static_cast<double>(gen.settings().search_work);
    gen::graph_sketch sketch;
    // A graph whose search fails is grown again from the same stream (still a pure
    // function of seed, index and config): a campaign gets NaN/Inf-free cases.
    for (std::size_t attempt = 1;; ++attempt) {
        sketch = gen.generate(g, stats, bias);
        c.search = gen::search_inputs(sketch, g, so);
        c.graphs_grown = attempt;
        if (c.search.success || attempt >= gen.settings().search_attempts) break;
        ++stats.search_regrown;
        if (c.search.out_of_work) ++stats.search_out_of_work;
    }
    if (sketch.model.nodes.empty()) {
        // No op of the config could be placed (its support table or limits rule them all out):
        // an empty graph tests nothing, and a backend would be asked to run it.
        throw error("tensoracle::io::make_case", "case " + std::to_string(index) + ": no op of the configuration could be placed in a graph");
    }
    c.model = sketch.model;
    c.op_types = sketch.op_types;
    c.motifs = sketch.motifs;
    for (auto& [name, t] : c.model.initializers) {
        if (const auto it = c.search.values.find(name); it != c.search.values.end()) t = it->second;
    }
    for (const auto& in : c.model.inputs) {
        const auto it = c.search.values.find(in.name);
        if (it == c.search.values.end()) {
            throw error("tensoracle::io::make_case", "input search returned no data for graph input '" + in.name + "'");
        }
        c.inputs.emplace(in.name, it->second);
    }
    if (c.search.success) {
        c.values = c.search.run;
    } else {
        // Still a valid graph: its outputs hold the non-finite values the search could not
        // avoid. An integer division by zero it could not avoid has no values at all.
        try {
            c.values = graph::run(c.model, c.inputs, {.record_intermediates = true}).values;
        } catch (const error& e) {
            throw error("tensoracle::io::make_case",
                        "no data found that runs the graph after " + std::to_string(c.graphs_grown) + " graph(s): " + e.what());
        }
        for (const auto& [name, t] : c.model.initializers) c.values.insert_or_assign(name, t);
        for (const auto& [name, t] : c.inputs) c.values.insert_or_assign(name, t);
    }
    for (const auto& out : c.model.outputs) c.outputs.emplace(out.name, c.values.at(out.name));
    return c;
}

namespace detail {
inline std::string value_text(const std::string& name, dtype d, const shape_type& s) {
    return name + ": " + std::string(tensoracle::name(d)) + to_string(s);
}
}  // namespace detail

namespace detail {
inline void model_text(std::ostringstream& os, const graph::graph& m, const std::string& indent) {
    for (const auto& in : m.inputs) os << indent << "input  " << value_text(in.name, in.type, in.shape.value_or(shape_type{})) << '\n';
    for (const auto& [name, t] : m.initializers) os << indent << "weight " << value_text(name, t.element_dtype(), t.shape()) << '\n';
    for (const auto& n : m.nodes) {
        os << indent;
        for (std::size_t i = 0; i < n.outputs.size(); ++i) os << (i ? ", " : "") << n.outputs[i];
        os << " = " << n.op_type << '(';
        for (std::size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << (n.inputs[i].empty() ? "<absent>" : n.inputs[i]);
        os << ')';
        bool first = true;
        for (const auto& [k, v] : n.attributes) {
            if (k.rfind("__", 0) == 0) continue;
            os << (first ? " {" : ", ") << k << '=' << spec::attribute_summary(v);
            first = false;
        }
        if (!first) os << '}';
        os << '\n';
        for (const auto& [k, sub] : n.subgraphs) {
            os << indent << "  " << k << ":\n";
            model_text(os, sub.get(), indent + "    ");
        }
    }
    for (const auto& out : m.outputs) os << indent << "output " << value_text(out.name, out.type, out.shape.value_or(shape_type{})) << '\n';
}
}  // namespace detail

/// A readable dump: interface, initializers, one line per node (branches indented).
[[nodiscard]] inline std::string model_text(const graph::graph& m) {
    std::ostringstream os;
    os << "graph " << m.name << " (opset " << m.opset << ")\n";
    detail::model_text(os, m, "  ");
    return os.str();
}

/// case.json's content.
[[nodiscard]] inline nlohmann::json case_json(const generated_case& c) {
    nlohmann::json j;
    j["id"] = case_id(c.seed, c.index);
    j["seed"] = c.seed;
    j["index"] = c.index;
    j["config_hash"] = c.config_hash;
    j["ops"] = c.op_types;
    if (!c.motifs.empty()) j["motifs"] = c.motifs;
    if (!c.derivation.is_null()) j["derivation"] = c.derivation;
    j["nodes"] = c.model.nodes.size();
    j["graphs_grown"] = c.graphs_grown;
    j["input_search"] = {{"success", c.search.success},
                         {"evaluations", c.search.evaluations},
                         {"restarts", c.search.restarts},
                         {"gradient_steps", c.search.gradient_steps},
                         {"work", c.search.work},
                         {"out_of_work", c.search.out_of_work},
                         {"last_failure", c.search.last_failure},
                         {"failing_op", c.search.failing_op}};
    return j;
}

/// Writes `c` under `dir`/<case id>/; returns that folder.
inline std::filesystem::path write_case(const generated_case& c, const std::filesystem::path& dir) {
    const auto folder = dir / case_id(c.seed, c.index);
    const auto data = folder / "test_data_set_0";
    std::error_code ec;
    std::filesystem::create_directories(data, ec);
    if (ec) throw error("tensoracle::io::write_case(" + data.string() + ")", "cannot create: " + ec.message());
    save_model(c.model, folder / "model.onnx");
    for (std::size_t k = 0; k < c.model.inputs.size(); ++k) {
        const auto& name = c.model.inputs[k].name;
        save_tensor(c.inputs.at(name), data / ("input_" + std::to_string(k) + ".pb"), name);
    }
    for (std::size_t k = 0; k < c.model.outputs.size(); ++k) {
        const auto& name = c.model.outputs[k].name;
        save_tensor(c.outputs.at(name), data / ("output_" + std::to_string(k) + ".pb"), name);
    }
    auto write_text = [&](const std::filesystem::path& p, const std::string& text) {
        std::ofstream out(p, std::ios::binary);
        if (!out || !(out << text)) throw error("tensoracle::io::write_case(" + p.string() + ")", "cannot write");
    };
    write_text(folder / "model.txt", model_text(c.model));
    write_text(folder / "case.json", case_json(c).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return folder;
}

}  // namespace tensoracle::io
