// tensoracle: gen::config as JSON (optional: needs nlohmann/json, Debian's
// nlohmann-json3-dev). Keys are the config's member names; a key the config
// does not have is an error, so a typo never silently runs the default.
//
//   {"max_nodes": 20, "dtypes": ["f32", "f16"], "exclude_ops": ["Resize"],
//    "support": {"Conv": ["f32"]}}
#pragma once

#include <nlohmann/json.hpp>

#include <boost/hana/accessors.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>

#include <fstream>
#include <map>
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

namespace detail {
// The JSON form of each kind of config member; dtypes are written by name.
template <class Dtypes>
nlohmann::json dtype_names(const Dtypes& ds) {
    auto names = nlohmann::json::array();
    for (const dtype d : ds) names.push_back(std::string(name(d)));
    return names;
}
inline nlohmann::json member_json(const std::vector<dtype>& v) { return dtype_names(v); }
inline nlohmann::json member_json(const std::map<std::string, std::set<dtype>>& support) {
    auto j = nlohmann::json::object();
    for (const auto& [op, ds] : support) j[op] = dtype_names(ds);
    return j;
}
inline nlohmann::json member_json(const std::vector<motif>& motifs) {
    auto j = nlohmann::json::array();
    for (const auto& m : motifs) j.push_back(to_json(m));
    return j;
}
template <class T>
nlohmann::json member_json(const T& v) {
    return v;
}

template <class Dtypes>
Dtypes dtypes_from_names(const nlohmann::json& v) {
    Dtypes out;
    for (const auto& n : v) out.insert(out.end(), dtype_from_name(n.get<std::string>()));
    return out;
}
inline void read_member(std::vector<dtype>& out, const nlohmann::json& v, const std::string&) {
    out = dtypes_from_names<std::vector<dtype>>(v);
}
inline void read_member(std::map<std::string, std::set<dtype>>& out, const nlohmann::json& v, const std::string&) {
    out.clear();
    for (const auto& [op, list] : v.items()) out[op] = dtypes_from_names<std::set<dtype>>(list);
}
/// Inline, or the path of a JSON file holding the list (a compiler team's own patterns).
inline void read_member(std::vector<motif>& out, const nlohmann::json& value, const std::string& at) {
    nlohmann::json list = value;
    if (value.is_string()) {
        std::ifstream in(value.get<std::string>());
        if (!in) throw error(at, "cannot open motif file " + value.get<std::string>());
        list = nlohmann::json::parse(in);
    }
    if (!list.is_array()) throw error(at, "expected a list of motifs (or a file holding one)");
    out.clear();
    for (const auto& jm : list) out.push_back(motif_from_json(jm, at));
}
template <class T>
void read_member(T& out, const nlohmann::json& v, const std::string&) {
    out = v.get<T>();
}
}  // namespace detail

/// The config as a JSON object: every member (gen/config.hpp's list), defaults included.
[[nodiscard]] inline nlohmann::json to_json(const config& c) {
    auto j = nlohmann::json::object();
    boost::hana::for_each(boost::hana::accessors<config>(), [&](auto member) {
        j[boost::hana::to<char const*>(boost::hana::first(member))] = detail::member_json(boost::hana::second(member)(c));
    });
    return j;
}

/// Reads keys of `j` over `base` (so a file states only what differs from
/// the defaults); throws naming the key and what was wrong. Validates.
[[nodiscard]] inline config config_from_json(const nlohmann::json& j, config base = {}, const std::string& where = "config") {
    if (!j.is_object()) throw error("tensoracle::gen::config_from_json(" + where + ")", "expected a JSON object");
    config c = std::move(base);
    for (const auto& item : j.items()) {
        // Named, not structured bindings: lambdas may not capture bindings (Clang 14).
        const std::string& key = item.key();
        const nlohmann::json& value = item.value();
        const std::string at = "tensoracle::gen::config_from_json(" + where + ": " + key + ")";
        try {
            bool known = false;
            boost::hana::for_each(boost::hana::accessors<config>(), [&](auto member) {
                if (known || key != boost::hana::to<char const*>(boost::hana::first(member))) return;
                known = true;
                detail::read_member(boost::hana::second(member)(c), value, at);
            });
            if (!known) throw error(at, "unknown key (see tensoracle::gen::config for the keys)");
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
