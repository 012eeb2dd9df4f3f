// tensoracle: mutants on disk, in the ONNX test layout of their original (so
// any runner of ONNX node tests, and every backend of a campaign, reads them):
//
//   <dir>/<id>/model.onnx               the mutant (same graph inputs and outputs, same order)
//   <dir>/<id>/test_data_set_0/         the original's inputs, the mutant's outputs (our interpreter)
//   <dir>/<id>/model.txt                readable dump
//   <dir>/<id>/mutation.json            the chain applied, its class and level, the seed
//
// and the checks every written mutant passes: onnx::checker, and ONNX's strict
// shape inference agreeing with our values wherever it infers a shape.
// Needs ONNX (libonnx, protobuf) and nlohmann/json.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tensoracle/io/case_files.hpp"
#include "tensoracle/io/onnx.hpp"
#include "tensoracle/mutate/mutate.hpp"

namespace tensoracle::mutate {

/// The mutant as a case: its graph, the original's inputs, the mutant's outputs and
/// every value (a campaign and the reducer take cases).
[[nodiscard]] inline io::generated_case as_case(const io::generated_case& original, const mutant& m) {
    io::generated_case c;
    c.seed = original.seed;
    c.index = original.index;
    c.config_hash = original.config_hash;
    c.model = m.model;
    c.inputs = original.inputs;
    c.search = original.search;
    c.values = graph::run(m.model, c.inputs, {.record_intermediates = true}).values;
    for (const auto& o : c.model.outputs) c.outputs.emplace(o.name, c.values.at(o.name));
    const auto ops = graph::op_types(m.model);
    for (const auto& n : m.model.nodes) c.op_types.push_back(n.op_type);
    // Ops that only a branch holds count too (a signature names the ops a case holds).
    for (const auto& op : ops) {
        if (std::find(c.op_types.begin(), c.op_types.end(), op) == c.op_types.end()) c.op_types.push_back(op);
    }
    return c;
}

/// Empty when ONNX accepts `g`: its checker, and strict shape inference (with data
/// propagation) whose every inferred dtype and shape equals the value's in `values`.
/// Otherwise the first problem, readable.
[[nodiscard]] inline std::string onnx_problem(const graph::graph& g, const std::map<std::string, tensor, std::less<>>& values) {
    try {
        io::check_model(io::to_model_proto(g));
    } catch (const std::exception& e) {
        return e.what();
    }
    std::map<std::string, graph::value_info> theirs;
    try {
        theirs = io::onnx_shape_inference(g);
    } catch (const std::exception& e) {
        return e.what();
    }
    for (const auto& [name, info] : theirs) {
        const auto it = values.find(name);
        if (it == values.end()) continue;
        if (info.type != it->second.element_dtype()) {
            return "ONNX infers " + name + " as " + std::string(tensoracle::name(info.type)) + ", it is " + std::string(tensoracle::name(it->second.element_dtype()));
        }
        if (info.shape && *info.shape != it->second.shape()) {
            return "ONNX infers " + name + " with shape " + tensoracle::to_string(*info.shape) + ", it is " + tensoracle::to_string(it->second.shape());
        }
    }
    return {};
}

/// mutation.json's content.
[[nodiscard]] inline nlohmann::json mutation_json(const mutant& m, std::uint64_t seed, const std::string& original) {
    nlohmann::json chain = nlohmann::json::array();
    for (const auto& a : m.chain) {
        chain.push_back({{"mutation", a.mutation},
                         {"family", std::string(to_string(a.family))},
                         {"class", std::string(to_string(a.numeric))},
                         {"level", a.level},
                         {"where", a.where}});
    }
    return {{"original", original},
            {"seed", seed},
            {"chain", chain},
            {"class", std::string(to_string(m.numeric))},
            {"level", m.level},
            {"nodes", m.model.nodes.size()}};
}

/// Writes mutant `m` of `original` under `dir`/`id`/; returns that folder.
inline std::filesystem::path write_mutant(const io::generated_case& original, const mutant& m, const std::filesystem::path& dir, const std::string& id,
                                          const nlohmann::json& info) {
    const auto folder = dir / id;
    const auto data = folder / "test_data_set_0";
    std::error_code ec;
    std::filesystem::create_directories(data, ec);
    if (ec) throw error("tensoracle::mutate::write_mutant(" + data.string() + ")", "cannot create: " + ec.message());
    io::save_model(m.model, folder / "model.onnx");
    for (std::size_t k = 0; k < m.model.inputs.size(); ++k) {
        const auto& name = m.model.inputs[k].name;
        io::save_tensor(original.inputs.at(name), data / ("input_" + std::to_string(k) + ".pb"), name);
    }
    for (std::size_t k = 0; k < m.model.outputs.size(); ++k) {
        const auto& name = m.model.outputs[k].name;
        io::save_tensor(m.outputs.at(name), data / ("output_" + std::to_string(k) + ".pb"), name);
    }
    auto write_text = [&](const std::filesystem::path& p, const std::string& text) {
        std::ofstream out(p, std::ios::binary);
        if (!out || !(out << text)) throw error("tensoracle::mutate::write_mutant(" + p.string() + ")", "cannot write");
    };
    write_text(folder / "model.txt", io::model_text(m.model));
    write_text(folder / "mutation.json", info.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return folder;
}

}  // namespace tensoracle::mutate
