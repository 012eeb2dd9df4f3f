// tensoracle: ONNX import and export through the official libonnx (optional:
// link tensoracle::onnx, which brings libonnx, protobuf and the ONNX_ML /
// ONNX_NAMESPACE definitions).
//
// Import: model.onnx with initializers and attributes, TensorProto .pb files
// with raw or typed data, external data only from inside the model's folder.
// Export: passes onnx::checker::check_model. Shape inference: onnx's own, as
// a second opinion on the specs' inference.
#pragma once

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

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/error.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/graph/graph.hpp"

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
