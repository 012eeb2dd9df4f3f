// tensoracle: gen::config as JSON (optional: needs nlohmann/json, Debian's
// nlohmann-json3-dev). Keys are the config's member names; a key the config
// does not have is an error, so a typo never silently runs the default.
//
//   {"max_nodes": 20, "dtypes": ["f32", "f16"], "exclude_ops": ["Resize"],
//    "support": {"Conv": ["f32"]}}
#pragma once

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <string>

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/error.hpp"
#include "tensoracle/gen/config.hpp"

namespace tensoracle::gen {

/// A motif as JSON: {"name", "rule", "weight", "steps": [{"op", "inputs": {"0": "prev", ...}, "require": [...]}]}.
[[nodiscard]] inline nlohmann::json to_json(const motif& m) {
    nlohmann::json j{{"name", m.name}, {"rule", m.rule}, {"weight", m.weight}, {"steps", nlohmann::json::array()}};
    for (const auto& st : m.steps) {
        nlohmann::json js{{"op", st.op}, {"inputs", nlohmann::json::object()}, {"require", st.require}};
        for (const auto& [slot, src] : st.inputs) js["inputs"][std::to_string(slot)] = src.text();
        j["steps"].push_back(js);
    }
    return j;
}

/// Reads a motif (to_json's form); throws naming the motif, step and key.
[[nodiscard]] inline motif motif_from_json(const nlohmann::json& j, const std::string& where) {
    motif m;
    try {
        m.name = j.at("name").get<std::string>();
        m.rule = j.value("rule", std::string());
        m.weight = j.value("weight", 1.0);
        const auto& steps = j.at("steps");
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const auto& js = steps.at(i);
            const std::string at = where + ", motif '" + m.name + "', step " + std::to_string(i);
            motif_step st;
            st.op = js.at("op").get<std::string>();
            if (js.contains("inputs")) {
                for (const auto& [slot, text] : js.at("inputs").items()) {
                    if (slot.empty() || slot.find_first_not_of("0123456789") != std::string::npos) {
                        throw error(at, "input slot '" + slot + "' is not a number");
                    }
                    st.inputs.emplace(std::stoul(slot), motif_source::parse(text.get<std::string>(), at));
                }
            }
            st.require = js.value("require", std::vector<std::string>{});
            m.steps.push_back(std::move(st));
        }
    } catch (const nlohmann::json::exception& e) {
        throw error(where, std::string("a motif: wrong or missing key: ") + e.what());
    }
    m.validate(where);
    return m;
}

/// The config as a JSON object (every key, defaults included).
[[nodiscard]] inline nlohmann::json to_json(const config& c) {
    nlohmann::json j;
    j["include_ops"] = c.include_ops;
    j["exclude_ops"] = c.exclude_ops;
    auto names = nlohmann::json::array();
    for (const auto d : c.dtypes) names.push_back(std::string(name(d)));
    j["dtypes"] = names;
    j["min_rank"] = c.min_rank;
    j["max_rank"] = c.max_rank;
    j["max_nodes"] = c.max_nodes;
    j["max_elements"] = c.max_elements;
    j["max_work"] = c.max_work;
    j["min_dim"] = c.min_dim;
    j["max_dim"] = c.max_dim;
    j["vulnerable_ops"] = c.vulnerable_ops;
    j["forward_probability"] = c.forward_probability;
    j["single_io"] = c.single_io;
    j["initializer_probability"] = c.initializer_probability;
    j["weight_probability"] = c.weight_probability;
    j["motif_probability"] = c.motif_probability;
    j["motif_near_miss"] = c.motif_near_miss;
    j["builtin_motifs"] = c.builtin_motifs;
    j["motif_weights"] = c.motif_weights;
    j["user_motifs"] = nlohmann::json::array();
    for (const auto& m : c.user_motifs) j["user_motifs"].push_back(to_json(m));
    j["binning"] = c.binning;
    j["avoid_onnx_shape_inference_bugs"] = c.avoid_onnx_shape_inference_bugs;
    j["bins"] = c.bins;
    j["opset"] = c.opset;
    auto support = nlohmann::json::object();
    for (const auto& [op, ds] : c.support) {
        auto list = nlohmann::json::array();
        for (const auto d : ds) list.push_back(std::string(name(d)));
        support[op] = list;
    }
    j["support"] = support;
    j["search_iterations"] = c.search_iterations;
    j["search_work"] = c.search_work;
    j["search_attempts"] = c.search_attempts;
    return j;
}

/// Reads keys of `j` over `base` (so a file states only what differs from
/// the defaults); throws naming the key and what was wrong. Validates.
[[nodiscard]] inline config config_from_json(const nlohmann::json& j, config base = {}, const std::string& where = "config") {
    if (!j.is_object()) throw error("tensoracle::gen::config_from_json(" + where + ")", "expected a JSON object");
    config c = std::move(base);
    for (const auto& [key, value] : j.items()) {
        const std::string at = "tensoracle::gen::config_from_json(" + where + ": " + key + ")";
        try {
            auto dtypes_of = [&](const nlohmann::json& v) {
                std::set<dtype> out;
                for (const auto& n : v) out.insert(dtype_from_name(n.get<std::string>()));
                return out;
            };
            if (key == "include_ops") c.include_ops = value.get<std::vector<std::string>>();
            else if (key == "exclude_ops") c.exclude_ops = value.get<std::vector<std::string>>();
            else if (key == "dtypes") {
                c.dtypes.clear();
                for (const auto& n : value) c.dtypes.push_back(dtype_from_name(n.get<std::string>()));
            }
            else if (key == "min_rank") c.min_rank = value.get<std::size_t>();
            else if (key == "max_rank") c.max_rank = value.get<std::size_t>();
            else if (key == "max_nodes") c.max_nodes = value.get<std::size_t>();
            else if (key == "max_elements") c.max_elements = value.get<std::size_t>();
            else if (key == "max_work") c.max_work = value.get<std::size_t>();
            else if (key == "min_dim") c.min_dim = value.get<std::int64_t>();
            else if (key == "max_dim") c.max_dim = value.get<std::int64_t>();
            else if (key == "vulnerable_ops") c.vulnerable_ops = value.get<bool>();
            else if (key == "forward_probability") c.forward_probability = value.get<double>();
            else if (key == "single_io") c.single_io = value.get<bool>();
            else if (key == "initializer_probability") c.initializer_probability = value.get<double>();
            else if (key == "weight_probability") c.weight_probability = value.get<double>();
            else if (key == "motif_probability") c.motif_probability = value.get<double>();
            else if (key == "motif_near_miss") c.motif_near_miss = value.get<double>();
            else if (key == "builtin_motifs") c.builtin_motifs = value.get<bool>();
            else if (key == "motif_weights") c.motif_weights = value.get<std::map<std::string, double>>();
            else if (key == "user_motifs") {
                // Inline, or the path of a JSON file holding the list (a compiler team's own patterns).
                nlohmann::json list = value;
                if (value.is_string()) {
                    std::ifstream in(value.get<std::string>());
                    if (!in) throw error(at, "cannot open motif file " + value.get<std::string>());
                    list = nlohmann::json::parse(in);
                }
                if (!list.is_array()) throw error(at, "expected a list of motifs (or a file holding one)");
                c.user_motifs.clear();
                for (const auto& jm : list) c.user_motifs.push_back(motif_from_json(jm, at));
            }
            else if (key == "binning") c.binning = value.get<bool>();
            else if (key == "avoid_onnx_shape_inference_bugs") c.avoid_onnx_shape_inference_bugs = value.get<bool>();
            else if (key == "bins") c.bins = value.get<int>();
            else if (key == "opset") c.opset = value.get<int>();
            else if (key == "search_iterations") c.search_iterations = value.get<std::size_t>();
            else if (key == "search_work") c.search_work = value.get<std::size_t>();
            else if (key == "search_attempts") c.search_attempts = value.get<std::size_t>();
            else if (key == "support") {
                c.support.clear();
                for (const auto& [op, list] : value.items()) c.support[op] = dtypes_of(list);
            } else {
                throw error(at, "unknown key (see tensoracle::gen::config for the keys)");
            }
        } catch (const nlohmann::json::exception& e) {
            throw error(at, std::string("wrong type: ") + e.what());
        } catch (const dtype_error& e) {
            throw error(at, e.what());
        }
    }
    c.validate();
    return c;
}

/// config_from_json of a file.
[[nodiscard]] inline config load_config(const std::string& path, config base = {}) {
    std::ifstream in(path);
    if (!in) throw error("tensoracle::gen::load_config(" + path + ")", "cannot open the file");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw error("tensoracle::gen::load_config(" + path + ")", std::string("not JSON: ") + e.what());
    }
    return config_from_json(j, std::move(base), path);
}

}  // namespace tensoracle::gen
