// GENERATED FILE - DO NOT EDIT.
// Made by scripts/amalgamate from include/tensoracle/onnx.hpp; edit those headers and rerun it.
// tensoracle: header-only test kit for deep-learning compilers and AD engines.
#pragma once
#include "tensoracle.hpp"
// ---- begin tensoracle/onnx.hpp ----
// tensoracle: ONNX I/O and what builds on it (optional part: libonnx,
// protobuf and nlohmann-json; CMake target tensoracle::onnx): models and
// tensors to and from files, the conformance runner, test cases on disk,
// JSON generator configurations and mutant files. Includes the whole kit.


// ---- begin tensoracle/gen/config_json.hpp ----
// tensoracle: gen::config as JSON (optional: needs nlohmann/json, Debian's
// nlohmann-json3-dev). Keys are the config's member names; a key the config
// does not have is an error, so a typo never silently runs the default.
//
//   {"max_nodes": 20, "dtypes": ["f32", "f16"], "exclude_ops": ["Resize"],
//    "support": {"Conv": ["f32"]}}

#include <nlohmann/json.hpp>

#include <boost/hana/accessors.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>

#include <fstream>
#include <map>
#include <set>
#include <string>


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
// ---- end tensoracle/gen/config_json.hpp ----
// ---- begin tensoracle/io/case_files.hpp ----
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

// ---- begin tensoracle/io/onnx.hpp ----
// tensoracle: ONNX import and export through the official libonnx (optional:
// link tensoracle::onnx, which brings libonnx, protobuf and the ONNX_ML /
// ONNX_NAMESPACE definitions).
//
// Import: model.onnx with initializers and attributes, TensorProto .pb files
// with raw or typed data, external data only from inside the model's folder.
// Export: passes onnx::checker::check_model. Shape inference: onnx's own, as
// a second opinion on the specs' inference.

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>


namespace tensoracle::io {

using tensoracle::unsupported_error;

namespace detail {

static_assert(std::endian::native == std::endian::little,
              "tensoracle::io: ONNX raw_data is little-endian; big-endian hosts are not supported yet");

inline dtype dtype_of_onnx(int elem_type, const std::string& where) {
    try {
        return dtype_from_onnx(elem_type);
    } catch (const dtype_error&) {
        throw unsupported_error(where, "ONNX element type " + std::to_string(elem_type) + " (" +
                                           onnx::TensorProto_DataType_Name(
                                               static_cast<onnx::TensorProto_DataType>(elem_type)) +
                                           ") is not supported");
    }
}

/// Resolves an external-data location strictly inside `base` (no absolute
/// paths, no "..", no symlink escaping it).
inline std::filesystem::path resolve_external(const std::filesystem::path& base, const std::string& location, const std::string& where) {
    if (base.empty()) throw error(where, "external data needs the model's folder, but none is known");
    const std::filesystem::path rel(location);
    if (location.empty() || rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) {
        throw error(where, "external data location '" + location + "' must be a relative path inside the model folder");
    }
    for (const auto& part : rel) {
        if (part == "..") throw error(where, "external data location '" + location + "' must not contain '..'");
    }
    const std::filesystem::path root = std::filesystem::weakly_canonical(base);
    const std::filesystem::path full = std::filesystem::weakly_canonical(root / rel);
    const auto r = root.string(), f = full.string();
    if (f.size() <= r.size() || f.compare(0, r.size(), r) != 0 || (f[r.size()] != '/' && r.back() != '/')) {
        throw error(where, "external data location '" + location + "' resolves outside the model folder");
    }
    return full;
}

inline std::string read_external(const onnx::TensorProto& t, const std::filesystem::path& base, const std::string& where) {
    std::string location;
    std::int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
        try {
            if (kv.key() == "location") location = kv.value();
            if (kv.key() == "offset") offset = std::stoll(kv.value());
            if (kv.key() == "length") length = std::stoll(kv.value());
        } catch (const std::exception&) {
            throw error(where, "external data entry '" + kv.key() + "' has a malformed value '" + kv.value() + "'");
        }
    }
    const std::filesystem::path file = resolve_external(base, location, where);
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    if (ec) throw error(where, "cannot read external data file '" + location + "': " + ec.message());
    if (offset < 0 || static_cast<std::uint64_t>(offset) > size ||
        (length >= 0 && static_cast<std::uint64_t>(length) > size - static_cast<std::uint64_t>(offset))) {
        throw error(where, "external data range (offset " + std::to_string(offset) + ", length " +
                               std::to_string(length) + ") exceeds '" + location + "' (" + std::to_string(size) +
                               " bytes)");
    }
    const auto n = length >= 0 ? static_cast<std::uint64_t>(length) : size - static_cast<std::uint64_t>(offset);
    check_memory(n, where, "external data '" + location + "'");
    std::ifstream in(file, std::ios::binary);
    in.seekg(offset);
    std::string bytes(n, '\0');
    if (!in.read(bytes.data(), static_cast<std::streamsize>(n))) throw error(where, "short read from '" + location + "'");
    return bytes;
}

/// The typed field of a TensorProto that holds elements of dtype d, and its length.
inline std::pair<const char*, int> typed_field(const onnx::TensorProto& t, dtype d) {
    switch (d) {
        case dtype::f32: return {"float_data", t.float_data_size()};
        case dtype::f64: return {"double_data", t.double_data_size()};
        case dtype::i64: return {"int64_data", t.int64_data_size()};
        default: return {"int32_data", t.int32_data_size()};  // 8-, 16-, 32-bit integers, bool, f16 and bf16 bits
    }
}

/// Copies n elements of a typed field whose length from_proto checked (typed_field).
template <class T, class Field>
void copy_typed(const Field& field, std::size_t n, std::span<T> out) {
    for (std::size_t i = 0; i < n; ++i) {
        const auto v = field.Get(static_cast<int>(i));
        if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
            out[i] = T::from_bits(static_cast<std::uint16_t>(v));  // int32_data holds the 16 bits
        } else if constexpr (std::is_same_v<T, bool>) {
            out[i] = v != 0;
        } else {
            out[i] = static_cast<T>(v);
        }
    }
}

}  // namespace detail

namespace detail {
[[nodiscard]] inline tensor from_proto_unnamed(const onnx::TensorProto& t, const std::filesystem::path& base, const std::string& where);
}

/// Converts a TensorProto (raw, typed or external data) to a tensor.
/// `base` is the model's folder, for external data. Errors name the tensor.
[[nodiscard]] inline tensor from_proto(const onnx::TensorProto& t, const std::filesystem::path& base = {}) {
    const std::string where = "tensoracle::io::from_proto(" + t.name() + ")";
    try {
        return detail::from_proto_unnamed(t, base, where);
    } catch (const error& e) {
        if (e.where() == where) throw;  // already named
        tensoracle::detail::rethrow_with_context(e, where, "");
    }
}

[[nodiscard]] inline tensor detail::from_proto_unnamed(const onnx::TensorProto& t, const std::filesystem::path& base, const std::string& where) {
    const dtype d = detail::dtype_of_onnx(t.data_type(), where);
    shape_type dims;
    for (const auto dim : t.dims()) {
        if (dim < 0) throw shape_error(where, "negative dim " + std::to_string(dim));
        dims.push_back(static_cast<std::size_t>(dim));
    }
    const std::size_t n = element_count(dims, where);
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
        const auto bytes = detail::read_external(t, base, where);
        return tensor::from_bytes(d, dims, std::as_bytes(std::span(bytes.data(), bytes.size())));
    }
    if (t.has_raw_data()) {
        const auto& raw = t.raw_data();
        return tensor::from_bytes(d, dims, std::as_bytes(std::span(raw.data(), raw.size())));
    }
    // The typed field's length is checked before allocating, as from_bytes checks raw data.
    if (const auto [field, given] = detail::typed_field(t, d); static_cast<std::size_t>(given) != n) {
        throw error(where, std::string(field) + " holds " + std::to_string(given) + " values, shape needs " + std::to_string(n) + " (" +
                               to_string(dims) + ")");
    }
    auto out = tensor::zeros(d, dims);
    out.visit([&](auto v) {
        using T = typename decltype(v)::value_type;
        if constexpr (std::is_same_v<T, float>) {
            detail::copy_typed(t.float_data(), n, v);
        } else if constexpr (std::is_same_v<T, double>) {
            detail::copy_typed(t.double_data(), n, v);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
            detail::copy_typed(t.int64_data(), n, v);
        } else {
            detail::copy_typed(t.int32_data(), n, v);
        }
    });
    return out;
}

/// A TensorProto with raw little-endian data.
[[nodiscard]] inline onnx::TensorProto to_proto(const tensor& t, const std::string& name = {}) {
    onnx::TensorProto p;
    p.set_name(name);
    p.set_data_type(onnx_type(t.element_dtype()));
    for (const auto d : t.shape()) p.add_dims(static_cast<std::int64_t>(d));
    const auto bytes = t.to_bytes();
    p.set_raw_data(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    return p;
}

/// Reads a serialized TensorProto (.pb).
[[nodiscard]] inline tensor load_tensor(const std::filesystem::path& path) {
    const std::string where = "tensoracle::io::load_tensor(" + path.string() + ")";
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(where, "cannot open the file");
    onnx::TensorProto p;
    if (!p.ParseFromIstream(&in)) throw error(where, "not a valid serialized TensorProto");
    return from_proto(p, path.parent_path());
}

inline void save_tensor(const tensor& t, const std::filesystem::path& path, const std::string& name = {}) {
    std::ofstream out(path, std::ios::binary);
    if (!out || !to_proto(t, name).SerializeToOstream(&out)) {
        throw error("tensoracle::io::save_tensor(" + path.string() + ")", "cannot write the file");
    }
}

namespace detail {

inline spec::attribute_value from_attribute(const onnx::AttributeProto& a, const std::filesystem::path& base, const std::string& where) {
    const std::string w = where + ", attribute '" + a.name() + "'";
    if (!a.ref_attr_name().empty()) throw unsupported_error(w, "function attribute references are not supported");
    switch (a.type()) {
        case onnx::AttributeProto::INT: return a.i();
        case onnx::AttributeProto::FLOAT: return static_cast<double>(a.f());
        case onnx::AttributeProto::STRING: return a.s();
        case onnx::AttributeProto::INTS: return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
        case onnx::AttributeProto::FLOATS: {
            std::vector<double> v;
            for (const float f : a.floats()) v.push_back(static_cast<double>(f));
            return v;
        }
        case onnx::AttributeProto::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
        case onnx::AttributeProto::TENSOR: return from_proto(a.t(), base);
        default:
            throw unsupported_error(w, "attribute kind " + onnx::AttributeProto_AttributeType_Name(a.type()) +
                                           " is not supported");
    }
}

inline void to_attribute(const std::string& key, const spec::attribute_value& v, onnx::AttributeProto& a) {
    a.set_name(key);
    std::visit(
        [&](const auto& x) {
            using X = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<X, std::int64_t>) {
                a.set_type(onnx::AttributeProto::INT);
                a.set_i(x);
            } else if constexpr (std::is_same_v<X, double>) {
                a.set_type(onnx::AttributeProto::FLOAT);
                a.set_f(static_cast<float>(x));
            } else if constexpr (std::is_same_v<X, std::string>) {
                a.set_type(onnx::AttributeProto::STRING);
                a.set_s(x);
            } else if constexpr (std::is_same_v<X, std::vector<std::int64_t>>) {
                a.set_type(onnx::AttributeProto::INTS);
                for (const auto i : x) a.add_ints(i);
            } else if constexpr (std::is_same_v<X, std::vector<double>>) {
                a.set_type(onnx::AttributeProto::FLOATS);
                for (const auto f : x) a.add_floats(static_cast<float>(f));
            } else if constexpr (std::is_same_v<X, std::vector<std::string>>) {
                a.set_type(onnx::AttributeProto::STRINGS);
                for (const auto& s : x) a.add_strings(s);
            } else {
                a.set_type(onnx::AttributeProto::TENSOR);
                *a.mutable_t() = to_proto(x);
            }
        },
        v);
}

inline graph::value_info from_value_info(const onnx::ValueInfoProto& v, const std::string& where) {
    graph::value_info out;
    out.name = v.name();
    if (!v.type().has_tensor_type()) throw unsupported_error(where, "value '" + v.name() + "' is not a tensor");
    const auto& tt = v.type().tensor_type();
    out.type = dtype_of_onnx(tt.elem_type(), where + ", value '" + v.name() + "'");
    if (tt.has_shape()) {
        shape_type dims;
        bool known = true;
        for (const auto& d : tt.shape().dim()) {
            if (d.has_dim_value() && d.dim_value() >= 0) {
                dims.push_back(static_cast<std::size_t>(d.dim_value()));
            } else {
                known = false;
            }
        }
        if (known) out.shape = dims;
    }
    return out;
}

inline void to_value_info(const graph::value_info& v, onnx::ValueInfoProto& p) {
    p.set_name(v.name);
    auto* tt = p.mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx_type(v.type));
    if (v.shape) {
        auto* s = tt->mutable_shape();
        for (const auto d : *v.shape) s->add_dim()->set_dim_value(static_cast<std::int64_t>(d));
    }
}

}  // namespace detail

namespace detail {
/// A GraphProto's content into `g` (name, interface, weights, nodes and their
/// graph attributes, recursively).
inline void from_graph_proto(const onnx::GraphProto& gp, graph::graph& g, const std::filesystem::path& base, const std::string& where) {
    for (const auto& init : gp.initializer()) g.initializers.insert_or_assign(init.name(), from_proto(init, base));
    if (gp.sparse_initializer_size() != 0) throw unsupported_error(where, "sparse initializers are not supported");
    for (const auto& in : gp.input()) {
        if (g.initializers.count(in.name()) != 0) continue;  // IR < 4 lists initializers as inputs too
        g.inputs.push_back(from_value_info(in, where));
    }
    for (const auto& out : gp.output()) g.outputs.push_back(from_value_info(out, where));
    for (const auto& np : gp.node()) {
        graph::node n;
        n.op_type = np.op_type();
        n.name = np.name();
        n.domain = np.domain();
        n.inputs.assign(np.input().begin(), np.input().end());
        n.outputs.assign(np.output().begin(), np.output().end());
        for (const auto& a : np.attribute()) {
            const std::string at = where + ", node " + n.label();
            if (a.type() == onnx::AttributeProto::GRAPH && a.ref_attr_name().empty()) {
                graph::graph sub;
                sub.name = a.g().name().empty() ? a.name() : a.g().name();
                sub.opset = g.opset;
                from_graph_proto(a.g(), sub, base, at + ", attribute '" + a.name() + "'");
                n.subgraphs.insert_or_assign(a.name(), graph::subgraph(std::move(sub)));
                continue;
            }
            n.attributes.insert_or_assign(a.name(), from_attribute(a, base, at));
        }
        g.nodes.push_back(std::move(n));
    }
}

/// The graph's content into a GraphProto (the inverse of from_graph_proto).
inline void to_graph_proto(const graph::graph& g, onnx::GraphProto& gp) {
    gp.set_name(g.name);
    for (const auto& in : g.inputs) to_value_info(in, *gp.add_input());
    for (const auto& out : g.outputs) to_value_info(out, *gp.add_output());
    for (const auto& [k, t] : g.initializers) *gp.add_initializer() = to_proto(t, k);
    for (const auto& n : g.nodes) {
        auto* np = gp.add_node();
        np->set_op_type(n.op_type);
        if (!n.name.empty()) np->set_name(n.name);
        if (!n.domain.empty()) np->set_domain(n.domain);
        for (const auto& i : n.inputs) np->add_input(i);
        for (const auto& o : n.outputs) np->add_output(o);
        for (const auto& [k, v] : n.attributes) {
            if (k.rfind("__", 0) == 0) continue;  // kit-internal attributes
            to_attribute(k, v, *np->add_attribute());
        }
        for (const auto& [k, sub] : n.subgraphs) {
            auto* a = np->add_attribute();
            a->set_name(k);
            a->set_type(onnx::AttributeProto::GRAPH);
            to_graph_proto(sub.get(), *a->mutable_g());
        }
    }
}
}  // namespace detail

/// Converts a ModelProto into the kit's graph. `base` is the model's folder.
[[nodiscard]] inline graph::graph from_model_proto(const onnx::ModelProto& m, const std::filesystem::path& base = {}) {
    const std::string where = "tensoracle::io::from_model_proto";
    graph::graph g;
    g.name = m.graph().name().empty() ? "model" : m.graph().name();
    g.opset = 0;
    for (const auto& imp : m.opset_import()) {
        if (imp.domain().empty() || imp.domain() == "ai.onnx") g.opset = static_cast<int>(imp.version());
    }
    if (g.opset == 0) {
        throw unsupported_error(where, "the model imports no version of the default ONNX domain (only " +
                                           (m.opset_import_size() ? m.opset_import(0).domain() : std::string("none")) + ")");
    }
    detail::from_graph_proto(m.graph(), g, base, where);
    return g;
}

/// Loads model.onnx (binary protobuf) and validates the graph rules.
[[nodiscard]] inline graph::graph load_model(const std::filesystem::path& path) {
    const std::string where = "tensoracle::io::load_model(" + path.string() + ")";
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(where, "cannot open the file");
    onnx::ModelProto m;
    if (!m.ParseFromIstream(&in)) throw error(where, "not a valid ONNX model (protobuf parse failed)");
    return from_model_proto(m, path.parent_path());
}

/// A ModelProto of the graph (IR version 8, the graph's opset).
[[nodiscard]] inline onnx::ModelProto to_model_proto(const graph::graph& g) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.set_producer_name("tensoracle");
    auto* imp = m.add_opset_import();
    imp->set_domain("");
    imp->set_version(g.opset);
    detail::to_graph_proto(g, *m.mutable_graph());
    return m;
}

/// Throws tensoracle::error with onnx's checker message when the model is invalid.
inline void check_model(const onnx::ModelProto& m) {
    try {
        onnx::checker::check_model(m);
    } catch (const std::exception& e) {
        throw error("tensoracle::io::check_model", std::string("onnx checker: ") + e.what());
    }
}

/// Writes the graph as model.onnx after onnx::checker accepts it.
inline void save_model(const graph::graph& g, const std::filesystem::path& path) {
    const auto m = to_model_proto(g);
    check_model(m);
    std::ofstream out(path, std::ios::binary);
    if (!out || !m.SerializeToOstream(&out)) throw error("tensoracle::io::save_model(" + path.string() + ")", "cannot write");
}

/// ONNX's own shape inference on a graph: inferred (dtype, shape) of every
/// value it could infer, keyed by value name.
[[nodiscard]] inline std::map<std::string, graph::value_info> onnx_shape_inference(const graph::graph& g) {
    auto m = to_model_proto(g);
    try {
        onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), {1, 1, 1});
    } catch (const std::exception& e) {
        throw error("tensoracle::io::onnx_shape_inference", std::string("onnx: ") + e.what());
    }
    std::map<std::string, graph::value_info> out;
    auto take = [&](const onnx::ValueInfoProto& v) {
        try {
            out.insert_or_assign(v.name(), detail::from_value_info(v, "onnx_shape_inference"));
        } catch (const error&) {
        }
    };
    for (const auto& v : m.graph().value_info()) take(v);
    for (const auto& v : m.graph().output()) take(v);
    return out;
}

}  // namespace tensoracle::io
// ---- end tensoracle/io/onnx.hpp ----

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
// ---- end tensoracle/io/case_files.hpp ----
// ---- begin tensoracle/io/conformance.hpp ----
// tensoracle: the ONNX backend node-test runner. Walks folders laid out like
// onnx/backend/test/data/node (model.onnx + test_data_set_*/{input,output}_*.pb),
// runs each model on the reference interpreter and compares with the expected
// outputs at ONNX's runner defaults (rtol 1e-3, atol 1e-7).

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
// ---- end tensoracle/io/conformance.hpp ----
// ---- begin tensoracle/mutate/mutant_files.hpp ----
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

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>


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
// ---- end tensoracle/mutate/mutant_files.hpp ----
// ---- end tensoracle/onnx.hpp ----
