// tensoracle: ONNX graphs lowered to MLIR 15's TOSA dialect (and linalg on
// tensors where TOSA has no exact op), for the `mlir` backends
// (backends/mlir/tensoracle_mlir.cpp, docs/BACKENDS.md).
//
// This is a compiler front end under test, written independently of the
// kit's reference: shapes are inferred here from ONNX's rules (every TOSA
// type is static), attributes are read with ONNX's defaults, and each node
// becomes the TOSA op that computes it exactly or a linalg.generic whose body
// is ONNX's formula in arith/math ops. What neither expresses exactly is an
// `unsupported_error` naming the node and the reason, never an approximation:
// TOSA 15 has no float64 and no float division, its Cast rounds where ONNX
// truncates, and its pools have no dilation or ceil mode.
//
// The module has `@graph` (the ONNX graph as a function on tensors) and
// `@main`, which reads every graph input with `tensoracle_load_<type>(memref,
// k)` and writes every output with `tensoracle_store_<type>`: C functions of
// backends/mlir/mlir_io.c, given to mlir-cpu-runner as a shared library, that
// copy exact bytes between memrefs and `input_k.bin` / `output_k.bin` files.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tensoracle/core/error.hpp>
#include <tensoracle/core/tensor.hpp>
#include <tensoracle/graph/graph.hpp>

namespace tensoracle::backends::mlir_tosa {

/// A value's static type: element type and shape.
struct vtype {
    dtype d = dtype::f32;
    shape_type s;
    [[nodiscard]] std::int64_t elements() const {
        return std::accumulate(s.begin(), s.end(), std::int64_t{1}, [](std::int64_t a, std::size_t b) { return a * static_cast<std::int64_t>(b); });
    }
    [[nodiscard]] std::size_t rank() const { return s.size(); }
};

/// An SSA value of the module and its type.
struct value {
    std::string ssa;
    vtype t;
};

[[nodiscard]] inline bool is_float(dtype d) { return info(d).is_floating; }

/// The MLIR element type of a kit dtype; u8 has no signless form TOSA's ops read as unsigned.
[[nodiscard]] inline std::string element_type(dtype d, const std::string& where) {
    switch (d) {
        case dtype::f16: return "f16";
        case dtype::bf16: return "bf16";
        case dtype::f32: return "f32";
        case dtype::f64: return "f64";
        case dtype::i8: return "i8";
        case dtype::i16: return "i16";
        case dtype::i32: return "i32";
        case dtype::i64: return "i64";
        case dtype::boolean: return "i1";
        case dtype::u8: break;
    }
    throw unsupported_error(where, "element type uint8: MLIR's integers are signless and TOSA reads ui8 only in rescale");
}

[[nodiscard]] inline std::string tensor_type(const vtype& t, const std::string& where) {
    std::string s = "tensor<";
    for (const auto d : t.s) s += std::to_string(d) + "x";
    return s + element_type(t.d, where) + ">";
}

[[nodiscard]] inline std::string memref_type(const vtype& t, const std::string& where) {
    std::string s = "memref<";
    for (const auto d : t.s) s += std::to_string(d) + "x";
    return s + element_type(t.d, where) + ">";
}

/// An array attribute of integers: [1, 2, 3].
[[nodiscard]] inline std::string int_list(const std::vector<std::int64_t>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) { s += (i ? ", " : ""); s += std::to_string(v[i]); }
    return s + "]";
}

/// The exact bits of a floating scalar as an MLIR hexadecimal literal of type `d`.
[[nodiscard]] inline std::string float_literal(double v, dtype d) {
    char buf[32];
    if (d == dtype::f64) {
        std::snprintf(buf, sizeof buf, "0x%016llX", static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(v)));
    } else {
        // f16 and bf16 bodies compute in f32 (extended, then truncated): see map().
        std::snprintf(buf, sizeof buf, "0x%08X", std::bit_cast<std::uint32_t>(static_cast<float>(v)));
    }
    return buf;
}

/// A dense elements attribute with the tensor's exact bytes (bools as a nested list).
[[nodiscard]] inline std::string dense_literal(const tensor& t, const std::string& where) {
    const vtype vt{t.element_dtype(), t.shape()};
    if (t.element_dtype() == dtype::boolean) {
        const auto b = t.to_bytes();
        std::string s;
        std::size_t k = 0;
        std::function<void(std::size_t)> rec = [&](std::size_t dim) {
            if (dim == vt.s.size()) {
                s += b[k++] != std::byte{0} ? "true" : "false";
                return;
            }
            s += "[";
            for (std::size_t i = 0; i < vt.s[dim]; ++i) {
                if (i) s += ", ";
                rec(dim + 1);
            }
            s += "]";
        };
        rec(0);
        return "dense<" + s + "> : " + tensor_type(vt, where);
    }
    const auto bytes = t.to_bytes();
    std::string hex = "\"0x";
    static const char* digits = "0123456789ABCDEF";
    for (const auto byte : bytes) {
        const auto u = static_cast<unsigned>(byte);
        hex += digits[u >> 4];
        hex += digits[u & 15];
    }
    return "dense<" + hex + "\"> : " + tensor_type(vt, where);
}

/// ONNX multidirectional broadcasting of two shapes.
[[nodiscard]] inline shape_type broadcast_shapes(const shape_type& a, const shape_type& b, const std::string& where) {
    const std::size_t r = std::max(a.size(), b.size());
    shape_type out(r);
    for (std::size_t i = 0; i < r; ++i) {
        const std::size_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
        const std::size_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
        if (da != db && da != 1 && db != 1) {
            throw error(where, "shapes do not broadcast: dim " + std::to_string(i) + " is " + std::to_string(da) + " and " + std::to_string(db));
        }
        out[i] = da == 1 ? db : da;
    }
    return out;
}

/// The body of a linalg.generic: scalar SSA code in one compute type.
class body_builder {
public:
    body_builder(std::ostringstream& os, int& counter, std::string compute) : os_(os), counter_(counter), compute_(std::move(compute)) {}
    /// `op %a, %b : T` in the compute type (or `type`).
    std::string op(const std::string& name, const std::vector<std::string>& args, const std::string& type = "") {
        const auto r = fresh();
        os_ << "    " << r << " = " << name << " ";
        for (std::size_t i = 0; i < args.size(); ++i) os_ << (i ? ", " : "") << args[i];
        os_ << " : " << (type.empty() ? compute_ : type) << "\n";
        return r;
    }
    std::string cmpf(const std::string& pred, const std::string& a, const std::string& b) { return op("arith.cmpf " + pred + ",", {a, b}); }
    std::string select(const std::string& c, const std::string& a, const std::string& b, const std::string& type = "") {
        const auto r = fresh();
        os_ << "    " << r << " = arith.select " << c << ", " << a << ", " << b << " : " << (type.empty() ? compute_ : type) << "\n";
        return r;
    }
    /// A floating constant in the compute type.
    std::string constant(double v) {
        const auto r = fresh();
        os_ << "    " << r << " = arith.constant " << float_literal(v, compute_ == "f64" ? dtype::f64 : dtype::f32) << " : " << compute_ << "\n";
        return r;
    }
    std::string int_constant(std::int64_t v, const std::string& type) {
        const auto r = fresh();
        os_ << "    " << r << " = arith.constant " << v << " : " << type << "\n";
        return r;
    }
    /// `from -> to` conversion `op` (arith.extf, arith.sitofp, ...).
    std::string convert(const std::string& name, const std::string& x, const std::string& from, const std::string& to) {
        const auto r = fresh();
        os_ << "    " << r << " = " << name << " " << x << " : " << from << " to " << to << "\n";
        return r;
    }
    void line(const std::string& s) { os_ << "    " << s << "\n"; }
    std::string fresh() { return "%s" + std::to_string(counter_++); }
    [[nodiscard]] const std::string& compute_type() const { return compute_; }

private:
    std::ostringstream& os_;
    int& counter_;
    std::string compute_;
};

using scalar_fn = std::function<std::string(body_builder&, const std::vector<std::string>&)>;

/// The ONNX ops the lowering handles (some attribute and type combinations of them
/// are still refused as unsupported, with the reason).
/// An affine dimension's name, "d<i>". Built by appending: GCC 12 at -O2 and above reports
/// a false -Wrestrict on `"d" + std::to_string(i)` (a prepend into a temporary).
[[nodiscard]] inline std::string affine_dim(std::size_t i) {
    std::string s = "d";
    s += std::to_string(i);
    return s;
}

[[nodiscard]] inline const std::vector<std::string>& lowered_op_types() {
    static const std::vector<std::string> ops{
        "Abs", "Add", "And", "ArgMax", "ArgMin", "Atan", "AveragePool", "BatchNormalization", "Cast", "Ceil", "Clip", "Concat",
        "Constant", "Conv", "Cos", "Div", "Dropout", "Elu", "Equal", "Erf", "Exp", "Expand", "Flatten", "Floor", "Gather", "Gemm",
        "GlobalAveragePool", "GlobalMaxPool", "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "LeakyRelu",
        "Less", "LessOrEqual", "Log", "LogSoftmax", "MatMul", "Max", "MaxPool", "Mean", "Min", "Mul", "Neg", "Not", "Or", "Pad",
        "Pow", "PRelu", "Reciprocal", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
        "ReduceSum", "ReduceSumSquare", "Relu", "Reshape", "Selu", "Shape", "Sigmoid", "Sign", "Sin", "Size", "Slice", "Softmax",
        "Softplus", "Softsign", "Sqrt", "Squeeze", "Sub", "Sum", "Tanh", "ThresholdedRelu", "Tile", "Transpose", "Unsqueeze",
        "Where", "Xor"};
    return ops;
}

class lowering {
public:
    /// `input_types`: the graph inputs' (non-initializer) element types and shapes,
    /// in graph-input order: the module is specialized to them.
    lowering(const graph::graph& g, std::vector<vtype> input_types) : g_(g), input_types_(std::move(input_types)) {}
    /// The lowering reads the graph it is given until module_text() returns: not a temporary.
    lowering(const graph::graph&& g, std::vector<vtype> input_types) = delete;

    /// Values of graph inputs known while compiling: the worker compiles one module per case,
    /// so an integer or bool input that an op reads as a shape, axes, pads, repeats or a flag
    /// is specialized to the case's value, as the module is to its shapes. Only those reads
    /// use it (constant_input); the data still arrives through @graph's arguments.
    void specialize_inputs(std::map<std::string, tensor, std::less<>> values) { input_values_ = std::move(values); }

    /// The module's text; throws unsupported_error (what TOSA cannot express) or error.
    [[nodiscard]] std::string module_text() {
        const std::string where = "tensoracle-mlir: lowering";
        g_.validate();
        const auto in_names = graph_input_names();
        if (in_names.size() != input_types_.size()) {
            throw error(where, "the graph has " + std::to_string(in_names.size()) + " inputs, " + std::to_string(input_types_.size()) + " were given");
        }
        std::ostringstream sig;
        for (std::size_t k = 0; k < in_names.size(); ++k) {
            check_type(input_types_[k], "graph input '" + in_names[k] + "'");
            const std::string arg = "%arg" + std::to_string(k);
            env_[in_names[k]] = {arg, input_types_[k]};
            sig << (k ? ", " : "") << arg << ": " << tensor_type(input_types_[k], where);
        }
        for (const auto& [name, t] : g_.initializers) {
            if (env_.count(name)) continue;  // an initializer that is a graph input's default: the input wins
            consts_.emplace(name, t);
        }
        for (const auto i : g_.topological_order()) lower_node(g_.nodes[i]);
        std::vector<value> outs;
        std::set<std::string> returned;
        for (const auto& o : g_.outputs) {
            auto v = get(o.name, "graph output");
            // An output that is a graph input, or a value already returned: a copy of its
            // own, since one-shot-bufferize refuses a function returning one buffer twice
            // ("input IR has RaW conflict"), as when identity Transposes alias two outputs.
            if (v.ssa.rfind("%arg", 0) == 0 || !returned.insert(v.ssa).second) {
                v = map({v}, v.t.d, [](body_builder&, const std::vector<std::string>& a) { return a[0]; });
                returned.insert(v.ssa);
            }
            outs.push_back(v);
        }
        output_types_.clear();
        for (const auto& o : outs) output_types_.push_back(o.t);

        std::ostringstream m;
        m << "// tensoracle: ONNX graph '" << g_.name << "' (opset " << g_.opset << ") lowered to TOSA\n";
        m << "func.func @graph(" << sig.str() << ") -> (";
        for (std::size_t i = 0; i < outs.size(); ++i) m << (i ? ", " : "") << tensor_type(outs[i].t, where);
        m << ") {\n" << body_.str() << "  return ";
        for (std::size_t i = 0; i < outs.size(); ++i) m << (i ? ", " : "") << outs[i].ssa;
        m << " : ";
        for (std::size_t i = 0; i < outs.size(); ++i) m << (i ? ", " : "") << tensor_type(outs[i].t, where);
        m << "\n}\n";
        m << main_text(in_names, outs);
        return m.str();
    }

    [[nodiscard]] const std::vector<vtype>& output_types() const { return output_types_; }

    /// The graph inputs that are not initializers, in order.
    [[nodiscard]] std::vector<std::string> graph_input_names() const {
        std::vector<std::string> names;
        for (const auto& in : g_.inputs) names.push_back(in.name);
        return names;
    }

private:
    const graph::graph& g_;
    std::vector<vtype> input_types_;
    std::vector<vtype> output_types_;
    std::map<std::string, value, std::less<>> env_;
    std::map<std::string, tensor, std::less<>> consts_;  ///< values known while compiling (initializers, Constant)
    std::map<std::string, tensor, std::less<>> input_values_;  ///< graph inputs' values (specialize_inputs)
    std::ostringstream body_;
    int counter_ = 0;
    std::string where_;  ///< the node being lowered, for messages

    // ---- plumbing -----------------------------------------------------------

    std::string fresh() { return "%v" + std::to_string(counter_++); }

    void check_type(const vtype& t, const std::string& what) {
        (void)element_type(t.d, "tensoracle-mlir: " + what);
        for (const auto d : t.s) {
            if (d == 0) throw unsupported_error("tensoracle-mlir: " + what, "empty tensors (a dim of 0): TOSA 15's ops assume at least one element");
        }
    }

    /// The value of an ONNX tensor name (a constant is materialized on first use).
    value get(const std::string& name, const std::string& what) {
        if (auto it = env_.find(name); it != env_.end()) return it->second;
        if (auto it = consts_.find(name); it != consts_.end()) {
            check_type({it->second.element_dtype(), it->second.shape()}, "constant '" + name + "'");
            return env_[name] = tosa_const(it->second);
        }
        throw error(where_, what + " '" + name + "' is not defined");
    }

    /// A constant input's tensor (shape, axes, pads, ...), or unsupported when computed.
    const tensor& constant_input(const graph::node& n, std::size_t k, const std::string& what) {
        if (k >= n.inputs.size() || n.inputs[k].empty()) throw error(where_, what + " is absent");
        const auto it = consts_.find(n.inputs[k]);
        if (it != consts_.end()) return it->second;
        if (const auto v = input_values_.find(n.inputs[k]); v != input_values_.end() && env_.count(n.inputs[k])) {
            const auto d = v->second.element_dtype();
            if (!is_float(d)) return v->second;
        }
        throw unsupported_error(where_, what + " ('" + n.inputs[k] + "') is computed at run time; TOSA's shapes and attributes are static");
    }
    [[nodiscard]] std::vector<std::int64_t> ints_of(const tensor& t) const {
        const auto c = t.cast(dtype::i64);
        const auto v = c.values<std::int64_t>();
        return {v.begin(), v.end()};
    }
    [[nodiscard]] bool present(const graph::node& n, std::size_t k) const { return k < n.inputs.size() && !n.inputs[k].empty(); }

    const spec::attribute_value* attr(const graph::node& n, std::string_view k) const {
        auto it = n.attributes.find(k);
        return it == n.attributes.end() ? nullptr : &it->second;
    }
    std::int64_t attr_i(const graph::node& n, std::string_view k, std::int64_t def) const {
        const auto* v = attr(n, k);
        if (!v) return def;
        if (const auto* x = std::get_if<std::int64_t>(v)) return *x;
        throw error(where_, "attribute '" + std::string(k) + "' is not an int");
    }
    double attr_f(const graph::node& n, std::string_view k, double def) const {
        const auto* v = attr(n, k);
        if (!v) return def;
        if (const auto* x = std::get_if<double>(v)) return *x;
        if (const auto* x = std::get_if<std::int64_t>(v)) return static_cast<double>(*x);
        throw error(where_, "attribute '" + std::string(k) + "' is not a float");
    }
    std::string attr_s(const graph::node& n, std::string_view k, std::string def) const {
        const auto* v = attr(n, k);
        if (!v) return def;
        if (const auto* x = std::get_if<std::string>(v)) return *x;
        throw error(where_, "attribute '" + std::string(k) + "' is not a string");
    }
    std::optional<std::vector<std::int64_t>> attr_ints(const graph::node& n, std::string_view k) const {
        const auto* v = attr(n, k);
        if (!v) return std::nullopt;
        if (const auto* x = std::get_if<std::vector<std::int64_t>>(v)) return *x;
        throw error(where_, "attribute '" + std::string(k) + "' is not a list of ints");
    }
    std::int64_t norm_axis(std::int64_t a, std::size_t rank) const {
        const auto r = static_cast<std::int64_t>(rank);
        if (a < -r || a >= r) throw error(where_, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
        return a < 0 ? a + r : a;
    }

    void bind(const graph::node& n, std::size_t k, value v) {
        if (k < n.outputs.size() && !n.outputs[k].empty()) env_[n.outputs[k]] = std::move(v);
    }
    void only_outputs(const graph::node& n, std::size_t count) {
        for (std::size_t k = count; k < n.outputs.size(); ++k) {
            if (!n.outputs[k].empty()) throw unsupported_error(where_, "output " + std::to_string(k) + " ('" + n.outputs[k] + "') is not lowered");
        }
    }

    // ---- emitters -----------------------------------------------------------

    /// `"tosa.op"(ins) {attrs} : (types) -> out`.
    value tosa(const std::string& op, const std::vector<value>& ins, const vtype& out, const std::string& attrs = "") {
        tosa_can_express(op, ins, out);
        const auto r = fresh();
        body_ << "  " << r << " = \"tosa." << op << "\"(";
        for (std::size_t i = 0; i < ins.size(); ++i) body_ << (i ? ", " : "") << ins[i].ssa;
        body_ << ")";
        if (!attrs.empty()) body_ << " {" << attrs << "}";
        body_ << " : (";
        for (std::size_t i = 0; i < ins.size(); ++i) body_ << (i ? ", " : "") << tensor_type(ins[i].t, where_);
        body_ << ") -> " << tensor_type(out, where_) << "\n";
        return {r, out};
    }
    /// What MLIR 15's TOSA dialect rejects, refused before mlir-opt sees it: float64 is
    /// no TOSA type, and ops carry rank limits (reductions, argmax and tile 1-D to 4-D,
    /// slice and transpose 1-D to 6-D). Callers route such values through
    /// linalg where they can; the rest is unsupported, with the op and the type.
    void tosa_can_express(const std::string& op, const std::vector<value>& ins, const vtype& out) const {
        auto check = [&](const vtype& t) {
            if (t.d == dtype::f64) throw unsupported_error(where_, "tosa." + op + " on float64 (no TOSA type in MLIR 15)");
            const bool upto4 = op.rfind("reduce_", 0) == 0 || op == "argmax" || op == "tile";
            const bool upto6 = op == "slice" || op == "transpose";
            const std::size_t limit = upto4 ? 4 : 6;
            if ((upto4 || upto6) && t.rank() == 0) throw unsupported_error(where_, "tosa." + op + " on a rank-0 tensor (MLIR 15 takes 1-D and up)");
            if ((upto4 || upto6) && t.rank() > limit) {
                throw unsupported_error(where_, "tosa." + op + " on a rank-" + std::to_string(t.rank()) + " tensor (MLIR 15 takes up to " +
                                                    std::to_string(limit) + "-D)");
            }
        };
        for (const auto& v : ins) check(v.t);
        check(out);
    }
    value tosa_const(const tensor& t) {
        const vtype vt{t.element_dtype(), t.shape()};
        const auto r = fresh();
        if (vt.d == dtype::f64) {
            // No TOSA type: a builtin tensor constant, which linalg consumers read alike.
            body_ << "  " << r << " = arith.constant " << dense_literal(t, where_) << "\n";
            return {r, vt};
        }
        tosa_can_express("const", {}, vt);
        body_ << "  " << r << " = \"tosa.const\"() {value = " << dense_literal(t, where_) << "} : () -> " << tensor_type(vt, where_) << "\n";
        return {r, vt};
    }
    /// `tosa.slice` of `size` elements from `start`.
    value slice(const value& x, const std::vector<std::int64_t>& start, const shape_type& size) {
        return tosa("slice", {x}, {x.t.d, size}, "size = " + int_list({size.begin(), size.end()}) + ", start = " + int_list(start));
    }
    value reshape(const value& x, const shape_type& s) {
        if (x.t.s == s) return x;
        std::vector<std::int64_t> dims(s.begin(), s.end());
        return tosa("reshape", {x}, {x.t.d, s}, "new_shape = " + int_list(dims));
    }
    value transpose(const value& x, const std::vector<std::int64_t>& perm) {
        bool identity = true;
        for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<std::int64_t>(i);
        if (identity) return x;
        tensor p = tensor::zeros(dtype::i32, {perm.size()});
        for (std::size_t i = 0; i < perm.size(); ++i) p.values<std::int32_t>()[i] = static_cast<std::int32_t>(perm[i]);
        const auto pv = tosa_const(p);
        shape_type s(perm.size());
        for (std::size_t i = 0; i < perm.size(); ++i) s[i] = x.t.s[static_cast<std::size_t>(perm[i])];
        return tosa("transpose", {x, pv}, {x.t.d, s});
    }
    /// `x` reshaped to rank `r` with leading 1s (TOSA's element-wise ops need equal ranks).
    value rank_align(const value& x, std::size_t r) {
        if (x.t.rank() >= r) return x;
        shape_type s(r - x.t.rank(), 1);
        s.insert(s.end(), x.t.s.begin(), x.t.s.end());
        return reshape(x, s);
    }
    /// A TOSA element-wise op with ONNX broadcasting.
    value tosa_elementwise(const std::string& op, std::vector<value> ins, dtype out_d, const std::string& attrs = "") {
        shape_type s = ins[0].t.s;
        for (std::size_t i = 1; i < ins.size(); ++i) s = broadcast_shapes(s, ins[i].t.s, where_);
        for (auto& v : ins) v = rank_align(v, s.size());
        return tosa(op, ins, {out_d, s}, attrs);
    }

    /// A linalg.generic over `out`'s shape reading `ins` with ONNX broadcasting; `f`
    /// computes one element in the compute type (f16/bf16 are extended to f32 and the
    /// result truncated, as ONNX Runtime's kernels do).
    value map(const std::vector<value>& ins, dtype out_d, const scalar_fn& f, std::optional<shape_type> out_shape = std::nullopt,
              std::vector<std::string> maps = {}) {
        shape_type s = out_shape ? *out_shape : ins.at(0).t.s;
        if (!out_shape) {
            for (std::size_t i = 1; i < ins.size(); ++i) s = broadcast_shapes(s, ins[i].t.s, where_);
        }
        const vtype out{out_d, s};
        const std::size_t r = s.size();
        std::string dims;
        for (std::size_t i = 0; i < r; ++i) { dims += (i ? ", " : ""); dims += affine_dim(i); }
        if (maps.empty()) {
            for (const auto& v : ins) {
                if (v.t.rank() > r) {
                    throw error(where_, "an input of rank " + std::to_string(v.t.rank()) + " is read over a rank-" + std::to_string(r) +
                                            " result (no broadcast)");
                }
                std::string e;
                for (std::size_t i = 0; i < v.t.rank(); ++i) {
                    const std::size_t od = r - v.t.rank() + i;
                    e += (i ? ", " : "");
                    e += (v.t.s[i] == 1 && s[od] != 1 ? std::string("0") : affine_dim(od));
                }
                maps.push_back("affine_map<(" + dims + ") -> (" + e + ")>");
            }
        }
        maps.push_back("affine_map<(" + dims + ") -> (" + dims + ")>");
        const auto init = fresh();
        std::vector<std::int64_t> sz(s.begin(), s.end());
        std::string szs;
        for (std::size_t i = 0; i < sz.size(); ++i) { szs += (i ? ", " : ""); szs += std::to_string(sz[i]); }
        body_ << "  " << init << " = linalg.init_tensor [" << szs << "] : " << tensor_type(out, where_) << "\n";
        const auto r_ssa = fresh();
        body_ << "  " << r_ssa << " = linalg.generic {indexing_maps = [";
        for (std::size_t i = 0; i < maps.size(); ++i) body_ << (i ? ", " : "") << maps[i];
        body_ << "], iterator_types = [";
        for (std::size_t i = 0; i < r; ++i) body_ << (i ? ", " : "") << "\"parallel\"";
        body_ << "]} ins(";
        for (std::size_t i = 0; i < ins.size(); ++i) body_ << (i ? ", " : "") << ins[i].ssa;
        body_ << " : ";
        for (std::size_t i = 0; i < ins.size(); ++i) body_ << (i ? ", " : "") << tensor_type(ins[i].t, where_);
        body_ << ") outs(" << init << " : " << tensor_type(out, where_) << ") {\n";
        body_ << "  ^bb0(";
        std::vector<std::string> args;
        for (std::size_t i = 0; i < ins.size(); ++i) {
            args.push_back("%in" + std::to_string(counter_++));
            body_ << args.back() << ": " << element_type(ins[i].t.d, where_) << ", ";
        }
        body_ << "%out" << counter_++ << ": " << element_type(out_d, where_) << "):\n";
        // The compute type: the widest float among inputs and output (f16/bf16 as f32).
        std::string compute = "f32";
        for (const auto& v : ins) {
            if (v.t.d == dtype::f64) compute = "f64";
        }
        if (out_d == dtype::f64) compute = "f64";
        body_builder b(body_, counter_, compute);
        // Float inputs of several widths (BatchNormalization's T and T1 may differ): all
        // extended to the compute type, the result truncated back to the output's.
        // (Only among the inputs: an op converting one type to another, Cast, does its own.)
        bool any_f64 = false, any_narrower = false;
        for (const auto& v : ins) {
            any_f64 = any_f64 || v.t.d == dtype::f64;
            any_narrower = any_narrower || (is_float(v.t.d) && v.t.d != dtype::f64);
        }
        const bool mixed = any_f64 && any_narrower;
        std::vector<std::string> cargs;
        for (std::size_t i = 0; i < ins.size(); ++i) {
            const auto d = ins[i].t.d;
            if (mixed && is_float(d) && d != dtype::f64) {
                cargs.push_back(b.convert("arith.extf", args[i], element_type(d, where_), "f64"));
            } else {
                cargs.push_back((d == dtype::f16 || d == dtype::bf16) ? b.convert("arith.extf", args[i], element_type(d, where_), "f32") : args[i]);
            }
        }
        auto res = f(b, cargs);
        if (mixed && is_float(out_d) && out_d != dtype::f64) {
            res = b.convert("arith.truncf", res, "f64", element_type(out_d, where_));
        } else if (out_d == dtype::f16 || out_d == dtype::bf16) {
            res = b.convert("arith.truncf", res, "f32", element_type(out_d, where_));
        }
        body_ << "    linalg.yield " << res << " : " << element_type(out_d, where_) << "\n  } -> " << tensor_type(out, where_) << "\n";
        return {r_ssa, out};
    }

    /// A binary ONNX op as a linalg.generic: for the types TOSA 15 lacks (float64) or
    /// computes otherwise (i8/i16/i64 products). Integers wrap and divide toward zero.
    value linalg_binary(const std::string& op, const value& a, const value& b) {
        static const std::map<std::string, std::pair<std::string, std::string>, std::less<>> ops = {
            // op -> (float op, integer op); comparisons give i1
            {"Add", {"arith.addf", "arith.addi"}},       {"Sub", {"arith.subf", "arith.subi"}},
            {"Mul", {"arith.mulf", "arith.muli"}},       {"Div", {"arith.divf", "arith.divsi"}},
            {"Pow", {"math.powf", ""}},                  {"Max", {"arith.maxf", "arith.maxsi"}},
            {"Min", {"arith.minf", "arith.minsi"}},      {"Sum", {"arith.addf", "arith.addi"}},
            {"Equal", {"arith.cmpf oeq,", "arith.cmpi eq,"}}, {"Greater", {"arith.cmpf ogt,", "arith.cmpi sgt,"}},
            {"GreaterOrEqual", {"arith.cmpf oge,", "arith.cmpi sge,"}}, {"Less", {"arith.cmpf olt,", "arith.cmpi slt,"}},
            {"LessOrEqual", {"arith.cmpf ole,", "arith.cmpi sle,"}},
        };
        const auto it = ops.find(op);
        if (it == ops.end()) throw unsupported_error(where_, op + " on " + std::string(name(a.t.d)) + " is not lowered");
        if (a.t.d != b.t.d) throw error(where_, "operands of types " + std::string(name(a.t.d)) + " and " + std::string(name(b.t.d)));
        const bool fl = is_float(a.t.d);
        if (a.t.d == dtype::boolean) throw unsupported_error(where_, op + " on bool");
        const std::string& f = fl ? it->second.first : it->second.second;
        if (f.empty()) throw unsupported_error(where_, op + " on " + std::string(name(a.t.d)) + " is not lowered");
        const bool cmp = f.find("cmp") != std::string::npos;
        const std::string et = element_type(a.t.d, where_);
        return map({a, b}, cmp ? dtype::boolean : a.t.d, [&](body_builder& bb, const std::vector<std::string>& x) {
            // Comparisons read the operands' type; f16/bf16 arrive extended to f32.
            const std::string t = fl ? bb.compute_type() : et;
            return bb.op(f, {x[0], x[1]}, t);
        });
    }

    void require_float(const value& v, const std::string& why = "") {
        if (!is_float(v.t.d)) throw unsupported_error(where_, std::string("integer or bool input (") + std::string(name(v.t.d)) + ")" + (why.empty() ? "" : ": " + why));
    }
    /// TOSA's types: f32, f16, bf16 and the integers; float64 is not one in MLIR 15.
    void require_tosa_type(const value& v) {
        if (v.t.d == dtype::f64) throw unsupported_error(where_, "float64 is not a TOSA element type in MLIR 15");
    }

    // ---- the ops ------------------------------------------------------------

    void lower_node(const graph::node& n) {
        where_ = "tensoracle-mlir: node " + n.label();
        if (!n.domain.empty() && n.domain != "ai.onnx") throw unsupported_error(where_, "domain '" + n.domain + "' is not lowered");
        const auto& op = n.op_type;
        auto in = [&](std::size_t k) { return get(n.inputs.at(k), "input"); };

        // Element-wise unary, in linalg: ONNX's formula in arith/math ops.
        static const std::map<std::string, std::function<std::string(body_builder&, const std::string&, const graph::node&, const lowering&)>, std::less<>>
            unary_math = {
                {"Sqrt", [](body_builder& b, const std::string& x, const graph::node&, const lowering&) { return b.op("math.sqrt", {x}); }},
                {"Erf", [](body_builder& b, const std::string& x, const graph::node&, const lowering&) { return b.op("math.erf", {x}); }},
                {"Sin", [](body_builder& b, const std::string& x, const graph::node&, const lowering&) { return b.op("math.sin", {x}); }},
                {"Cos", [](body_builder& b, const std::string& x, const graph::node&, const lowering&) { return b.op("math.cos", {x}); }},
                {"Atan", [](body_builder& b, const std::string& x, const graph::node&, const lowering&) { return b.op("math.atan", {x}); }},
                {"Relu",
                 [](body_builder& b, const std::string& x, const graph::node&, const lowering&) {
                     const auto z = b.constant(0.0);
                     return b.select(b.cmpf("ugt", x, z), x, z);
                 }},
                {"LeakyRelu",
                 [](body_builder& b, const std::string& x, const graph::node& nd, const lowering& l) {
                     const auto a = b.constant(l.attr_f(nd, "alpha", 0.01));
                     const auto z = b.constant(0.0);
                     return b.select(b.cmpf("olt", x, z), b.op("arith.mulf", {a, x}), x);
                 }},
                {"Elu",
                 [](body_builder& b, const std::string& x, const graph::node& nd, const lowering& l) {
                     const auto a = b.constant(l.attr_f(nd, "alpha", 1.0));
                     const auto z = b.constant(0.0);
                     const auto one = b.constant(1.0);
                     const auto e = b.op("arith.mulf", {a, b.op("arith.subf", {b.op("math.exp", {x}), one})});
                     return b.select(b.cmpf("olt", x, z), e, x);
                 }},
                {"Selu",
                 [](body_builder& b, const std::string& x, const graph::node& nd, const lowering& l) {
                     const auto a = b.constant(l.attr_f(nd, "alpha", 1.67326319217681884765625));
                     const auto g = b.constant(l.attr_f(nd, "gamma", 1.05070102214813232421875));
                     const auto z = b.constant(0.0);
                     const auto neg = b.op("arith.subf", {b.op("arith.mulf", {a, b.op("math.exp", {x})}), a});
                     return b.op("arith.mulf", {g, b.select(b.cmpf("ogt", x, z), x, neg)});
                 }},
                {"HardSigmoid",
                 [](body_builder& b, const std::string& x, const graph::node& nd, const lowering& l) {
                     const auto a = b.constant(l.attr_f(nd, "alpha", 0.2));
                     const auto c = b.constant(l.attr_f(nd, "beta", 0.5));
                     const auto y = b.op("arith.addf", {b.op("arith.mulf", {a, x}), c});
                     return b.op("arith.minf", {b.op("arith.maxf", {y, b.constant(0.0)}), b.constant(1.0)});
                 }},
                {"HardSwish",
                 [](body_builder& b, const std::string& x, const graph::node&, const lowering&) {
                     const auto y = b.op("arith.addf", {b.op("arith.mulf", {b.constant(1.0 / 6.0), x}), b.constant(0.5)});
                     return b.op("arith.mulf", {x, b.op("arith.minf", {b.op("arith.maxf", {y, b.constant(0.0)}), b.constant(1.0)})});
                 }},
                {"Softplus",
                 [](body_builder& b, const std::string& x, const graph::node&, const lowering&) {
                     return b.op("math.log", {b.op("arith.addf", {b.op("math.exp", {x}), b.constant(1.0)})});
                 }},
                {"Softsign",
                 [](body_builder& b, const std::string& x, const graph::node&, const lowering&) {
                     return b.op("arith.divf", {x, b.op("arith.addf", {b.constant(1.0), b.op("math.abs", {x})})});
                 }},
                {"Sign",
                 [](body_builder& b, const std::string& x, const graph::node&, const lowering&) {
                     const auto z = b.constant(0.0);
                     return b.select(b.cmpf("ogt", x, z), b.constant(1.0), b.select(b.cmpf("olt", x, z), b.constant(-1.0), z));
                 }},
                {"ThresholdedRelu",
                 [](body_builder& b, const std::string& x, const graph::node& nd, const lowering& l) {
                     return b.select(b.cmpf("ogt", x, b.constant(l.attr_f(nd, "alpha", 1.0))), x, b.constant(0.0));
                 }},
            };
        // Element-wise unary with an exact TOSA op (float types).
        static const std::map<std::string, std::string, std::less<>> unary_tosa = {
            {"Abs", "abs"},  {"Neg", "negate"},   {"Exp", "exp"},   {"Log", "log"},   {"Tanh", "tanh"},
            {"Sigmoid", "sigmoid"}, {"Floor", "floor"}, {"Ceil", "ceil"}, {"Reciprocal", "reciprocal"},
        };
        static const std::map<std::string, std::string, std::less<>> binary_tosa = {
            {"Add", "add"}, {"Sub", "sub"}, {"Pow", "pow"}, {"Equal", "equal"}, {"Greater", "greater"}, {"GreaterOrEqual", "greater_equal"},
            {"And", "logical_and"}, {"Or", "logical_or"}, {"Xor", "logical_xor"},
        };

        if (auto it = unary_math.find(op); it != unary_math.end()) {
            only_outputs(n, 1);
            const auto x = in(0);
            require_float(x);
            const auto& f = it->second;
            bind(n, 0, map({x}, x.t.d, [&](body_builder& b, const std::vector<std::string>& a) { return f(b, a[0], n, *this); }));
            return;
        }
        if (auto it = unary_tosa.find(op); it != unary_tosa.end()) {
            only_outputs(n, 1);
            const auto x = in(0);
            const bool int_ok = op == "Abs" || op == "Neg";
            if (!int_ok) require_float(x);
            if (x.t.d == dtype::f64) {
                // linalg on tensors computes float64; the same formula as TOSA's lowering.
                static const std::map<std::string, std::string, std::less<>> f64_op = {
                    {"Abs", "math.abs"}, {"Neg", "arith.negf"}, {"Exp", "math.exp"}, {"Log", "math.log"}, {"Tanh", "math.tanh"},
                    {"Floor", "math.floor"}, {"Ceil", "math.ceil"}};
                if (op == "Sigmoid" || op == "Reciprocal") {
                    // 1 / (1 + exp(-x)) and 1 / x, ONNX's formulas.
                    bind(n, 0, map({x}, x.t.d, [&](body_builder& b, const std::vector<std::string>& a) {
                        const auto one = b.constant(1.0);
                        if (op == "Reciprocal") return b.op("arith.divf", {one, a[0]});
                        return b.op("arith.divf", {one, b.op("arith.addf", {one, b.op("math.exp", {b.op("arith.negf", {a[0]})})})});
                    }));
                    return;
                }
                const auto f = f64_op.find(op);
                if (f == f64_op.end()) require_tosa_type(x);
                bind(n, 0, map({x}, x.t.d, [&](body_builder& b, const std::vector<std::string>& a) { return b.op(f->second, {a[0]}); }));
                return;
            }
            bind(n, 0, tosa(it->second, {x}, x.t));
            return;
        }
        if (auto it = binary_tosa.find(op); it != binary_tosa.end()) {
            only_outputs(n, 1);
            auto a = in(0), b = in(1);
            const bool logical = op == "And" || op == "Or" || op == "Xor";
            const bool compare = op == "Equal" || op == "Greater" || op == "GreaterOrEqual";
            if (op == "Pow") {
                require_float(a);
                if (b.t.d != a.t.d) throw unsupported_error(where_, "Pow with an exponent of another type (" + std::string(name(b.t.d)) + ")");
            }
            if (a.t.d == dtype::f64) {
                bind(n, 0, linalg_binary(op, a, b));
                return;
            }
            bind(n, 0, tosa_elementwise(it->second, {a, b}, logical || compare ? dtype::boolean : a.t.d));
            return;
        }
        if (op == "Less" || op == "LessOrEqual") {
            only_outputs(n, 1);
            auto a = in(0), b = in(1);
            if (a.t.d == dtype::f64) {
                bind(n, 0, linalg_binary(op, a, b));
                return;
            }
            bind(n, 0, tosa_elementwise(op == "Less" ? "greater" : "greater_equal", {b, a}, dtype::boolean));
            return;
        }
        if (op == "Not") {
            bind(n, 0, tosa("logical_not", {in(0)}, in(0).t));
            return;
        }
        if (op == "Mul") {
            only_outputs(n, 1);
            auto a = in(0), b = in(1);
            if (a.t.d == dtype::f64 || (!is_float(a.t.d) && a.t.d != dtype::i32)) {
                // float64 is no TOSA type; TOSA multiplies i8/i16 into i32 and has no i64 product.
                bind(n, 0, linalg_binary(op, a, b));
                return;
            }
            bind(n, 0, tosa_elementwise("mul", {a, b}, a.t.d, "shift = 0 : i32"));
            return;
        }
        if (op == "Div") {
            // TOSA 15 has no float division (reciprocal then multiply rounds twice): arith.divf;
            // integers divide toward zero (arith.divsi), as the kit's reference and ORT do.
            only_outputs(n, 1);
            auto a = in(0), b = in(1);
            bind(n, 0, linalg_binary(op, a, b));
            return;
        }
        if (op == "Max" || op == "Min" || op == "Sum" || op == "Mean") {
            only_outputs(n, 1);
            std::vector<value> xs;
            for (std::size_t k = 0; k < n.inputs.size(); ++k) xs.push_back(in(k));
            if ((op == "Sum" || op == "Mean") && !is_float(xs[0].t.d)) require_float(xs[0]);
            if ((op == "Sum" || op == "Mean") && (xs[0].t.d == dtype::f16 || xs[0].t.d == dtype::bf16)) {
                // One linalg body over all inputs: summed in f32 and rounded once, as the
                // other f16/bf16 element-wise ops here (a chain of f16 tosa.add rounds at
                // every step and drifts from the reference by an ulp or more).
                const double cnt = op == "Mean" ? static_cast<double>(xs.size()) : 1.0;
                bind(n, 0, map(xs, xs[0].t.d, [cnt](body_builder& b, const std::vector<std::string>& x) {
                    std::string acc = x[0];
                    for (std::size_t k = 1; k < x.size(); ++k) acc = b.op("arith.addf", {acc, x[k]});
                    return cnt == 1.0 ? acc : b.op("arith.divf", {acc, b.constant(cnt)});
                }));
                return;
            }
            value acc = xs[0];
            const std::string t = op == "Max" ? "maximum" : op == "Min" ? "minimum" : "add";
            const bool linalg = xs[0].t.d == dtype::f64 || xs[0].t.d == dtype::i8 || xs[0].t.d == dtype::i16;
            for (std::size_t k = 1; k < xs.size(); ++k) {
                acc = linalg ? linalg_binary(op == "Mean" ? "Sum" : op, acc, xs[k]) : tosa_elementwise(t, {acc, xs[k]}, acc.t.d);
            }
            if (op == "Mean") {
                const double cnt = static_cast<double>(xs.size());
                acc = map({acc}, acc.t.d, [cnt](body_builder& b, const std::vector<std::string>& x) { return b.op("arith.divf", {x[0], b.constant(cnt)}); });
            }
            bind(n, 0, acc);
            return;
        }
        if (op == "Clip") {
            only_outputs(n, 1);
            const auto x = in(0);
            if (x.t.d == dtype::i8 || x.t.d == dtype::i16 || x.t.d == dtype::i32 || x.t.d == dtype::i64) {
                // Integer Clip: signed compares against the constant bounds, exact.
                std::optional<std::int64_t> lo_i, hi_i;
                if (present(n, 1)) lo_i = ints_of(constant_input(n, 1, "Clip's min")).at(0);
                if (present(n, 2)) hi_i = ints_of(constant_input(n, 2, "Clip's max")).at(0);
                const std::string et = element_type(x.t.d, where_);
                bind(n, 0, map({x}, x.t.d, [lo_i, hi_i, et](body_builder& b, const std::vector<std::string>& a) {
                    std::string y = a[0];
                    if (lo_i) {
                        const auto l = b.int_constant(*lo_i, et);
                        y = b.select(b.op("arith.cmpi slt,", {y, l}, et), l, y, et);
                    }
                    if (hi_i) {
                        const auto h = b.int_constant(*hi_i, et);
                        y = b.select(b.op("arith.cmpi sgt,", {y, h}, et), h, y, et);
                    }
                    return y;
                }));
                return;
            }
            require_float(x);
            double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
            const bool computed = (present(n, 1) && !consts_.count(n.inputs[1])) || (present(n, 2) && !consts_.count(n.inputs[2]));
            if (computed) {
                // Bounds computed at run time: scalar tensors read by the same linalg body.
                std::vector<value> ins{x};
                int lo_k = -1, hi_k = -1;
                if (present(n, 1)) {
                    lo_k = static_cast<int>(ins.size());
                    ins.push_back(in(1));
                }
                if (present(n, 2)) {
                    hi_k = static_cast<int>(ins.size());
                    ins.push_back(in(2));
                }
                // A bound is one element (ONNX: a scalar; a [1] tensor is read alike), at
                // index 0 of every dim whatever the ranks of x and the bound.
                std::string dims;
                for (std::size_t i = 0; i < x.t.rank(); ++i) { dims += (i ? ", " : ""); dims += affine_dim(i); }
                std::vector<std::string> maps{"affine_map<(" + dims + ") -> (" + dims + ")>"};
                for (std::size_t k = 1; k < ins.size(); ++k) {
                    if (ins[k].t.elements() != 1) throw error(where_, "a Clip bound of " + std::to_string(ins[k].t.elements()) + " elements");
                    std::string zeros;
                    for (std::size_t i = 0; i < ins[k].t.rank(); ++i) zeros += i ? ", 0" : "0";
                    maps.push_back("affine_map<(" + dims + ") -> (" + zeros + ")>");
                }
                bind(n, 0, map(ins, x.t.d, [lo_k, hi_k](body_builder& b, const std::vector<std::string>& a) {
                    std::string y = a[0];
                    if (lo_k >= 0) y = b.select(b.cmpf("olt", y, a[static_cast<std::size_t>(lo_k)]), a[static_cast<std::size_t>(lo_k)], y);
                    if (hi_k >= 0) y = b.select(b.cmpf("ogt", y, a[static_cast<std::size_t>(hi_k)]), a[static_cast<std::size_t>(hi_k)], y);
                    return y;
                }, x.t.s, maps));
                return;
            }
            if (present(n, 1)) lo = constant_input(n, 1, "Clip's min").cast(dtype::f64).values<double>()[0];
            if (present(n, 2)) hi = constant_input(n, 2, "Clip's max").cast(dtype::f64).values<double>()[0];
            if (attr(n, "min")) lo = attr_f(n, "min", lo);
            if (attr(n, "max")) hi = attr_f(n, "max", hi);
            // ONNX: min(max(x, lo), hi), in that order (lo > hi gives hi).
            bind(n, 0, map({x}, x.t.d, [lo, hi](body_builder& b, const std::vector<std::string>& a) {
                const auto l = b.constant(lo), h = b.constant(hi);
                const auto y = b.select(b.cmpf("olt", a[0], l), l, a[0]);
                return b.select(b.cmpf("ogt", y, h), h, y);
            }));
            return;
        }
        if (op == "PRelu") {
            only_outputs(n, 1);
            const auto x = in(0), slope = in(1);
            require_float(x);
            bind(n, 0, map({x, slope}, x.t.d, [](body_builder& b, const std::vector<std::string>& a) {
                return b.select(b.cmpf("olt", a[0], b.constant(0.0)), b.op("arith.mulf", {a[1], a[0]}), a[0]);
            }));
            return;
        }
        if (op == "Where") {
            only_outputs(n, 1);
            auto c = in(0), a = in(1), b = in(2);
            if (a.t.d == dtype::f64) {
                bind(n, 0, map({c, a, b}, a.t.d, [](body_builder& bb, const std::vector<std::string>& x) { return bb.select(x[0], x[1], x[2]); }));
                return;
            }
            bind(n, 0, tosa_elementwise("select", {c, a, b}, a.t.d));
            return;
        }
        if (op == "Cast") {
            only_outputs(n, 1);
            lower_cast(n, in(0));
            return;
        }
        if (op == "Identity" || op == "Dropout") {
            if (op == "Dropout" && n.outputs.size() > 1 && !n.outputs[1].empty()) {
                // Inference: the mask keeps every element.
                const auto x = in(0);
                tensor mask = tensor::zeros(dtype::boolean, x.t.s);
                auto bytes = mask.to_bytes();
                std::fill(bytes.begin(), bytes.end(), std::byte{1});
                consts_.emplace(n.outputs[1], tensor::from_bytes(dtype::boolean, x.t.s, bytes));
            }
            only_outputs(n, op == "Dropout" ? 2 : 1);
            if (op == "Dropout" && (present(n, 2) || attr_i(n, "training_mode", 0) != 0)) {
                const bool training = present(n, 2) ? constant_input(n, 2, "Dropout's training_mode").cast(dtype::i64).values<std::int64_t>()[0] != 0 : false;
                if (training) throw unsupported_error(where_, "training-mode Dropout (random)");
            }
            bind(n, 0, in(0));
            return;
        }
        if (op == "Constant") {
            const auto* v = attr(n, "value");
            const tensor* t = v ? std::get_if<tensor>(v) : nullptr;
            if (!t) throw unsupported_error(where_, "Constant without a 'value' tensor (value_float, value_ints, ...)");
            consts_.emplace(n.outputs.at(0), *t);
            return;
        }
        if (op == "Shape" || op == "Size") {
            const auto x = in(0);
            shape_type s = x.t.s;
            tensor t = tensor::zeros(dtype::i64, op == "Size" ? shape_type{} : shape_type{s.size()});
            if (op == "Size") {
                t.values<std::int64_t>()[0] = x.t.elements();
            } else {
                const auto r = static_cast<std::int64_t>(s.size());
                std::int64_t start = attr_i(n, "start", 0), end = attr_i(n, "end", r);
                if (start < 0) start += r;
                if (end < 0) end += r;
                start = std::clamp<std::int64_t>(start, 0, r);
                end = std::clamp<std::int64_t>(end, 0, r);
                t = tensor::zeros(dtype::i64, {static_cast<std::size_t>(std::max<std::int64_t>(0, end - start))});
                for (std::int64_t i = start; i < end; ++i) t.values<std::int64_t>()[static_cast<std::size_t>(i - start)] = static_cast<std::int64_t>(s[static_cast<std::size_t>(i)]);
            }
            consts_.emplace(n.outputs.at(0), t);
            return;
        }
        if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") {
            only_outputs(n, 1);
            const auto x = in(0);
            bind(n, 0, reshape(x, reshaped(n, x.t.s)));
            return;
        }
        if (op == "Transpose") {
            only_outputs(n, 1);
            const auto x = in(0);
            std::vector<std::int64_t> perm;
            if (auto p = attr_ints(n, "perm")) {
                perm = *p;
            } else {
                for (std::size_t i = x.t.rank(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
            }
            if (perm.size() != x.t.rank()) throw error(where_, "perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(x.t.rank()));
            bind(n, 0, transpose(x, perm));
            return;
        }
        if (op == "Concat") {
            only_outputs(n, 1);
            std::vector<value> xs;
            for (std::size_t k = 0; k < n.inputs.size(); ++k) xs.push_back(in(k));
            const auto axis = static_cast<std::size_t>(norm_axis(attr_i(n, "axis", 0), xs[0].t.rank()));
            value acc = xs[0];
            // One tosa.concat of two operands at a time (MLIR 15's concat is variadic too, but
            // pairs keep each op's shape check simple).
            for (std::size_t k = 1; k < xs.size(); ++k) {
                auto s = acc.t.s;
                s[axis] += xs[k].t.s[axis];
                acc = tosa("concat", {acc, xs[k]}, {acc.t.d, s}, "axis = " + std::to_string(axis) + " : i64");
            }
            bind(n, 0, acc);
            return;
        }
        if (op == "Slice") {
            only_outputs(n, 1);
            lower_slice(n, in(0));
            return;
        }
        if (op == "Pad") {
            only_outputs(n, 1);
            lower_pad(n, in(0));
            return;
        }
        if (op == "Tile") {
            only_outputs(n, 1);
            const auto x = in(0);
            const auto reps = ints_of(constant_input(n, 1, "Tile's repeats"));
            if (reps.size() != x.t.rank()) throw error(where_, "repeats has " + std::to_string(reps.size()) + " entries for rank " + std::to_string(x.t.rank()));
            auto s = x.t.s;
            for (std::size_t i = 0; i < s.size(); ++i) {
                if (reps[i] < 1) throw unsupported_error(where_, "Tile with a repeat of " + std::to_string(reps[i]) + " (an empty result)");
                s[i] *= static_cast<std::size_t>(reps[i]);
            }
            if (x.t.rank() <= 4) {
                bind(n, 0, tosa("tile", {x}, {x.t.d, s}, "multiples = " + int_list(reps)));
                return;
            }
            // TOSA 15 tiles ranks 1-4: a linalg copy reading index mod dim.
            std::string dims, e;
            for (std::size_t i = 0; i < s.size(); ++i) {
                dims += (i ? ", " : "");
                dims += affine_dim(i);
                e += (i ? ", " : "");
                e += (affine_dim(i) + " mod " + std::to_string(x.t.s[i]));
            }
            bind(n, 0, map({x}, x.t.d, [](body_builder&, const std::vector<std::string>& a) { return a[0]; }, s, {"affine_map<(" + dims + ") -> (" + e + ")>"}));
            return;
        }
        if (op == "Expand") {
            only_outputs(n, 1);
            const auto x = in(0);
            const auto target = ints_of(constant_input(n, 1, "Expand's shape"));
            shape_type ts;
            for (const auto d : target) {
                if (d < 1) throw unsupported_error(where_, "Expand to a shape with dim " + std::to_string(d));
                ts.push_back(static_cast<std::size_t>(d));
            }
            const auto s = broadcast_shapes(x.t.s, ts, where_);
            bind(n, 0, map({x}, x.t.d, [](body_builder&, const std::vector<std::string>& a) { return a[0]; }, s));
            return;
        }
        if (op == "Gather") {
            only_outputs(n, 1);
            lower_gather(n, in(0), in(1));
            return;
        }
        if (op == "MatMul") {
            only_outputs(n, 1);
            bind(n, 0, matmul(in(0), in(1)));
            return;
        }
        if (op == "Gemm") {
            only_outputs(n, 1);
            lower_gemm(n);
            return;
        }
        if (op == "Conv") {
            only_outputs(n, 1);
            lower_conv(n);
            return;
        }
        if (op == "MaxPool" || op == "AveragePool") {
            only_outputs(n, 1);
            lower_pool(n, in(0));
            return;
        }
        if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
            only_outputs(n, 1);
            const auto x = in(0);
            require_float(x);
            require_tosa_type(x);
            if (x.t.rank() < 3) throw error(where_, "rank " + std::to_string(x.t.rank()) + " input");
            std::vector<std::int64_t> axes;
            for (std::size_t a = 2; a < x.t.rank(); ++a) axes.push_back(static_cast<std::int64_t>(a));
            bind(n, 0, reduce(op == "GlobalMaxPool" ? "ReduceMax" : "ReduceMean", x, axes, true));
            return;
        }
        if (op.rfind("Reduce", 0) == 0) {
            only_outputs(n, 1);
            lower_reduce(n, in(0));
            return;
        }
        if (op == "ArgMax" || op == "ArgMin") {
            only_outputs(n, 1);
            lower_arg(n, in(0));
            return;
        }
        if (op == "Softmax" || op == "LogSoftmax") {
            only_outputs(n, 1);
            lower_softmax(n, in(0));
            return;
        }
        if (op == "BatchNormalization") {
            only_outputs(n, 1);
            if (attr_i(n, "training_mode", 0) != 0) throw unsupported_error(where_, "training-mode BatchNormalization");
            const auto x = in(0), scale = in(1), bias = in(2), mean = in(3), var = in(4);
            require_float(x);
            const double eps = attr_f(n, "epsilon", 1e-5);
            if (x.t.rank() < 2) throw error(where_, "rank " + std::to_string(x.t.rank()) + " input");
            // The per-channel parameters read along dim 1.
            std::string dims;
            for (std::size_t i = 0; i < x.t.rank(); ++i) { dims += (i ? ", " : ""); dims += affine_dim(i); }
            const std::string id = "affine_map<(" + dims + ") -> (" + dims + ")>";
            const std::string ch = "affine_map<(" + dims + ") -> (d1)>";
            bind(n, 0, map({x, scale, bias, mean, var}, x.t.d, [eps](body_builder& b, const std::vector<std::string>& a) {
                // (x - mean) / sqrt(var + epsilon) * scale + B, ONNX's formula.
                const auto d = b.op("math.sqrt", {b.op("arith.addf", {a[4], b.constant(eps)})});
                const auto y = b.op("arith.divf", {b.op("arith.subf", {a[0], a[3]}), d});
                return b.op("arith.addf", {b.op("arith.mulf", {y, a[1]}), a[2]});
            }, x.t.s, {id, ch, ch, ch, ch}));
            return;
        }
        throw unsupported_error(where_, "op " + op + " is not lowered to TOSA");
    }

    void lower_cast(const graph::node& n, const value& x) {
        const auto to_onnx = attr_i(n, "to", -1);
        std::optional<dtype> to;
        for (std::size_t i = 0; i < dtype_count; ++i) {
            if (info(static_cast<dtype>(i)).onnx_type == to_onnx) to = static_cast<dtype>(i);
        }
        if (!to) throw unsupported_error(where_, "Cast to ONNX type " + std::to_string(to_onnx));
        const dtype from = x.t.d;
        const std::string fe = element_type(from, where_), te = element_type(*to, where_);
        if (from == *to) {
            bind(n, 0, x);
            return;
        }
        auto width = [](dtype d) { return info(d).bits; };
        // In linalg: TOSA's cast rounds float to int to nearest, ONNX truncates toward zero.
        bind(n, 0, map({x}, *to, [&](body_builder& b, const std::vector<std::string>& a) -> std::string {
            const std::string src = (from == dtype::f16 || from == dtype::bf16) ? "f32" : fe;
            const std::string v = a[0];
            if (is_float(from) && is_float(*to)) {
                const std::string dst = (*to == dtype::f16 || *to == dtype::bf16) ? "f32" : te;
                if (src == dst) return v;
                return b.convert(src == "f64" ? "arith.truncf" : "arith.extf", v, src, dst);
            }
            if (is_float(from)) {
                if (*to == dtype::boolean) return b.op("arith.cmpf une,", {v, b.constant(0.0)}, src);
                return b.convert("arith.fptosi", v, src, te);
            }
            if (from == dtype::boolean) {
                if (is_float(*to)) {
                    const std::string dst = (*to == dtype::f16 || *to == dtype::bf16) ? "f32" : te;
                    return b.convert("arith.uitofp", v, "i1", dst);
                }
                return b.convert("arith.extui", v, "i1", te);
            }
            if (is_float(*to)) {
                const std::string dst = (*to == dtype::f16 || *to == dtype::bf16) ? "f32" : te;
                return b.convert("arith.sitofp", v, fe, dst);
            }
            if (*to == dtype::boolean) return b.op("arith.cmpi ne,", {v, b.int_constant(0, fe)}, fe);
            if (width(*to) > width(from)) return b.convert("arith.extsi", v, fe, te);
            return b.convert("arith.trunci", v, fe, te);
        }));
    }

    /// The output shape of Reshape / Flatten / Squeeze / Unsqueeze.
    shape_type reshaped(const graph::node& n, const shape_type& in) {
        const auto& op = n.op_type;
        const auto r = in.size();
        shape_type s;
        if (op == "Flatten") {
            const auto axis = static_cast<std::size_t>(attr_i(n, "axis", 1) < 0 ? attr_i(n, "axis", 1) + static_cast<std::int64_t>(r) : attr_i(n, "axis", 1));
            if (axis > r) throw error(where_, "axis " + std::to_string(axis) + " for rank " + std::to_string(r));
            std::size_t a = 1, b = 1;
            for (std::size_t i = 0; i < r; ++i) (i < axis ? a : b) *= in[i];
            return {a, b};
        }
        if (op == "Reshape") {
            const auto target = ints_of(constant_input(n, 1, "Reshape's shape"));
            const bool allowzero = attr_i(n, "allowzero", 0) != 0;
            std::int64_t known = 1;
            int minus = -1;
            for (std::size_t i = 0; i < target.size(); ++i) {
                std::int64_t d = target[i];
                if (d == 0 && !allowzero) {
                    if (i >= r) throw error(where_, "shape entry " + std::to_string(i) + " is 0 but the input has rank " + std::to_string(r));
                    d = static_cast<std::int64_t>(in[i]);
                }
                if (d == -1) {
                    minus = static_cast<int>(i);
                    s.push_back(1);
                    continue;
                }
                if (d < 0) throw error(where_, "shape entry " + std::to_string(d));
                known *= d;
                s.push_back(static_cast<std::size_t>(d));
            }
            std::int64_t total = 1;
            for (const auto d : in) total *= static_cast<std::int64_t>(d);
            if (minus >= 0) {
                if (known == 0 || total % known != 0) throw error(where_, "cannot infer the -1 dim");
                s[static_cast<std::size_t>(minus)] = static_cast<std::size_t>(total / known);
            }
            return s;
        }
        std::vector<std::int64_t> axes;
        if (auto a = attr_ints(n, "axes")) {
            axes = *a;
        } else if (present(n, 1)) {
            axes = ints_of(constant_input(n, 1, op + "'s axes"));
        }
        if (op == "Squeeze") {
            std::set<std::int64_t> drop;
            if (axes.empty()) {
                for (std::size_t i = 0; i < r; ++i) {
                    if (in[i] == 1) drop.insert(static_cast<std::int64_t>(i));
                }
            }
            for (const auto a : axes) drop.insert(norm_axis(a, r));
            for (std::size_t i = 0; i < r; ++i) {
                if (!drop.count(static_cast<std::int64_t>(i))) s.push_back(in[i]);
            }
            return s;
        }
        const auto out_r = r + axes.size();
        std::set<std::int64_t> add;
        for (const auto a : axes) add.insert(norm_axis(a, out_r));
        std::size_t k = 0;
        for (std::size_t i = 0; i < out_r; ++i) s.push_back(add.count(static_cast<std::int64_t>(i)) ? 1 : in[k++]);
        return s;
    }

    void lower_slice(const graph::node& n, const value& x) {
        const auto r = x.t.rank();
        std::vector<std::int64_t> starts, ends, axes, steps;
        if (auto s = attr_ints(n, "starts")) {
            starts = *s;
            ends = *attr_ints(n, "ends");
            if (auto a = attr_ints(n, "axes")) axes = *a;
        } else {
            starts = ints_of(constant_input(n, 1, "Slice's starts"));
            ends = ints_of(constant_input(n, 2, "Slice's ends"));
            if (present(n, 3)) axes = ints_of(constant_input(n, 3, "Slice's axes"));
            if (present(n, 4)) steps = ints_of(constant_input(n, 4, "Slice's steps"));
        }
        if (axes.empty()) {
            for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
        }
        if (steps.empty()) steps.assign(starts.size(), 1);
        std::vector<std::int64_t> st(r, 0), sp(r, 1);
        shape_type out = x.t.s;
        for (std::size_t i = 0; i < starts.size(); ++i) {
            const auto a = static_cast<std::size_t>(norm_axis(axes[i], r));
            const auto dim = static_cast<std::int64_t>(x.t.s[a]);
            const auto step = steps[i];
            if (step == 0) throw error(where_, "step 0");
            std::int64_t b = starts[i], e = ends[i];
            if (b < 0) b += dim;
            if (e < 0) e += dim;
            if (step > 0) {
                b = std::clamp<std::int64_t>(b, 0, dim);
                e = std::clamp<std::int64_t>(e, 0, dim);
            } else {
                b = std::clamp<std::int64_t>(b, 0, dim - 1);
                e = std::clamp<std::int64_t>(e, -1, dim - 1);
            }
            const std::int64_t len = step > 0 ? std::max<std::int64_t>(0, (e - b + step - 1) / step) : std::max<std::int64_t>(0, (b - e + (-step) - 1) / (-step));
            if (len == 0) throw unsupported_error(where_, "an empty slice");
            st[a] = b;
            sp[a] = step;
            out[a] = static_cast<std::size_t>(len);
        }
        if (std::all_of(sp.begin(), sp.end(), [](std::int64_t s) { return s == 1; })) {
            bind(n, 0, slice(x, st, out));
            return;
        }
        // Strided (or reversed) slices: a linalg copy whose read map is start + step * d.
        std::string dims, e;
        for (std::size_t i = 0; i < r; ++i) {
            dims += (i ? ", " : "");
            dims += affine_dim(i);
            e += (i ? ", " : "");
            e += (affine_dim(i) + " * " + std::to_string(sp[i]) + " + " + std::to_string(st[i]));
        }
        bind(n, 0, map({x}, x.t.d, [](body_builder&, const std::vector<std::string>& a) { return a[0]; }, out, {"affine_map<(" + dims + ") -> (" + e + ")>"}));
    }

    void lower_pad(const graph::node& n, const value& x) {
        const auto mode = attr_s(n, "mode", "constant");
        if (mode != "constant") throw unsupported_error(where_, "Pad mode '" + mode + "' (TOSA 15's pad is constant only)");
        require_tosa_type(x);
        const auto r = x.t.rank();
        std::vector<std::int64_t> pads;
        if (auto p = attr_ints(n, "pads")) {
            pads = *p;
        } else {
            pads = ints_of(constant_input(n, 1, "Pad's pads"));
        }
        std::vector<std::int64_t> axes;
        if (present(n, 3)) {
            axes = ints_of(constant_input(n, 3, "Pad's axes"));
        } else {
            for (std::size_t i = 0; i < r; ++i) axes.push_back(static_cast<std::int64_t>(i));
        }
        if (pads.size() != 2 * axes.size()) throw error(where_, "pads has " + std::to_string(pads.size()) + " entries for " + std::to_string(axes.size()) + " axes");
        std::vector<std::int64_t> before(r, 0), after(r, 0);
        for (std::size_t i = 0; i < axes.size(); ++i) {
            const auto a = static_cast<std::size_t>(norm_axis(axes[i], r));
            before[a] = pads[i];
            after[a] = pads[i + axes.size()];
        }
        value src = x;
        if (std::any_of(before.begin(), before.end(), [](std::int64_t p) { return p < 0; }) ||
            std::any_of(after.begin(), after.end(), [](std::int64_t p) { return p < 0; })) {
            // Negative pads crop: a tosa.slice first, then the positive pads.
            std::vector<std::int64_t> start(r, 0);
            shape_type cs = x.t.s;
            for (std::size_t i = 0; i < r; ++i) {
                const auto b0 = std::max<std::int64_t>(0, -before[i]), e0 = std::max<std::int64_t>(0, -after[i]);
                const auto len = static_cast<std::int64_t>(x.t.s[i]) - b0 - e0;
                if (len < 1) throw unsupported_error(where_, "pads that crop dim " + std::to_string(i) + " to nothing");
                start[i] = b0;
                cs[i] = static_cast<std::size_t>(len);
                before[i] = std::max<std::int64_t>(0, before[i]);
                after[i] = std::max<std::int64_t>(0, after[i]);
            }
            src = slice(x, start, cs);
        }
        shape_type s = src.t.s;
        tensor padding = tensor::zeros(dtype::i64, {r, 2});
        for (std::size_t i = 0; i < r; ++i) {
            s[i] += static_cast<std::size_t>(before[i] + after[i]);
            padding.values<std::int64_t>()[2 * i] = before[i];
            padding.values<std::int64_t>()[2 * i + 1] = after[i];
        }
        double cv = attr_f(n, "value", 0.0);
        if (present(n, 2)) cv = constant_input(n, 2, "Pad's constant_value").cast(dtype::f64).values<double>()[0];
        const auto pv = tosa_const(padding);
        tensor c64 = tensor::zeros(dtype::f64, {});
        c64.values<double>()[0] = cv;
        const tensor c = c64.cast(x.t.d);
        const auto cvv = tosa_const(c);
        bind(n, 0, tosa("pad", {src, pv, cvv}, {x.t.d, s}));
    }

    void lower_gather(const graph::node& n, const value& data, const value& idx) {
        const auto r = data.t.rank();
        const auto axis = static_cast<std::size_t>(norm_axis(attr_i(n, "axis", 0), r));
        if (idx.t.d != dtype::i32 && idx.t.d != dtype::i64) throw error(where_, "indices of type " + std::string(name(idx.t.d)));
        shape_type out;
        for (std::size_t i = 0; i < axis; ++i) out.push_back(data.t.s[i]);
        for (const auto d : idx.t.s) out.push_back(d);
        for (std::size_t i = axis + 1; i < r; ++i) out.push_back(data.t.s[i]);
        // A linalg.generic over the output reads the index and extracts from the data
        // (negative indices count from the end, as ONNX says).
        const auto q = idx.t.rank();
        std::string dims, e;
        for (std::size_t i = 0; i < out.size(); ++i) { dims += (i ? ", " : ""); dims += affine_dim(i); }
        for (std::size_t i = 0; i < q; ++i) { e += (i ? ", " : ""); e += affine_dim(axis + i); }
        const std::string idx_map = "affine_map<(" + dims + ") -> (" + e + ")>";
        const auto dim = static_cast<std::int64_t>(data.t.s[axis]);
        const std::string data_ssa = data.ssa, data_ty = tensor_type(data.t, where_), ie = element_type(idx.t.d, where_);
        bind(n, 0, map({idx}, data.t.d, [&](body_builder& b, const std::vector<std::string>& a) {
            auto i = a[0];
            const auto neg = b.op("arith.cmpi slt,", {i, b.int_constant(0, ie)}, ie);
            i = b.select(neg, b.op("arith.addi", {i, b.int_constant(dim, ie)}, ie), i, ie);
            const auto ix = b.convert("arith.index_cast", i, ie, "index");
            std::vector<std::string> coords;
            for (std::size_t k = 0; k < r; ++k) {
                if (k == axis) {
                    coords.push_back(ix);
                    continue;
                }
                const std::size_t od = k < axis ? k : k - 1 + q;
                const auto c = b.fresh();
                b.line(c + " = linalg.index " + std::to_string(od) + " : index");
                coords.push_back(c);
            }
            const auto v = b.fresh();
            std::string cs;
            for (std::size_t k = 0; k < coords.size(); ++k) { cs += (k ? ", " : ""); cs += coords[k]; }
            b.line(v + " = tensor.extract " + data_ssa + "[" + cs + "] : " + data_ty);
            // f16/bf16 results are truncated from f32 by map(): extend the element first.
            if (data.t.d == dtype::f16 || data.t.d == dtype::bf16) return b.convert("arith.extf", v, element_type(data.t.d, where_), "f32");
            return v;
        }, out, {idx_map}));
    }

    value matmul(value a, value b) {
        require_float(a);
        require_tosa_type(a);
        if (a.t.d != dtype::f32) throw unsupported_error(where_, "tosa.matmul on " + std::string(name(a.t.d)) + " accumulates in another type; f32 only here");
        const bool a1 = a.t.rank() == 1, b1 = b.t.rank() == 1;
        if (a1) a = reshape(a, {1, a.t.s[0]});
        if (b1) b = reshape(b, {b.t.s[0], 1});
        const auto m = a.t.s[a.t.rank() - 2], k = a.t.s[a.t.rank() - 1];
        const auto k2 = b.t.s[b.t.rank() - 2], nn = b.t.s[b.t.rank() - 1];
        if (k != k2) throw error(where_, "inner dims " + std::to_string(k) + " and " + std::to_string(k2));
        shape_type ba(a.t.s.begin(), a.t.s.end() - 2), bb(b.t.s.begin(), b.t.s.end() - 2);
        const auto batch = broadcast_shapes(ba, bb, where_);
        std::size_t nb = 1;
        for (const auto d : batch) nb *= d;
        auto expand = [&](value v, const shape_type& bs, std::size_t rows, std::size_t cols) {
            // Broadcast the batch dims (a linalg copy after aligning ranks), then fold them into one.
            shape_type full(batch.size() - bs.size(), 1);
            full.insert(full.end(), bs.begin(), bs.end());
            full.push_back(rows);
            full.push_back(cols);
            v = reshape(v, full);
            shape_type tiled = full;
            for (std::size_t i = 0; i < batch.size(); ++i) tiled[i] = batch[i];
            v = broadcast_to(v, tiled);
            return reshape(v, {nb, rows, cols});
        };
        a = expand(a, ba, m, k);
        b = expand(b, bb, k, nn);
        auto c = tosa("matmul", {a, b}, {dtype::f32, {nb, m, nn}});
        shape_type out = batch;
        if (!a1) out.push_back(m);
        if (!b1) out.push_back(nn);
        return reshape(c, out);
    }

    void lower_gemm(const graph::node& n) {
        auto a = get(n.inputs.at(0), "input"), b = get(n.inputs.at(1), "input");
        if (attr_i(n, "transA", 0)) a = transpose(a, {1, 0});
        if (attr_i(n, "transB", 0)) b = transpose(b, {1, 0});
        auto y = matmul(a, b);
        const double alpha = attr_f(n, "alpha", 1.0), beta = attr_f(n, "beta", 1.0);
        if (alpha != 1.0) y = map({y}, y.t.d, [alpha](body_builder& bb, const std::vector<std::string>& x) { return bb.op("arith.mulf", {bb.constant(alpha), x[0]}); });
        if (present(n, 2)) {
            auto c = get(n.inputs[2], "input");
            if (beta != 1.0) c = map({c}, c.t.d, [beta](body_builder& bb, const std::vector<std::string>& x) { return bb.op("arith.mulf", {bb.constant(beta), x[0]}); });
            y = tosa_elementwise("add", {y, c}, y.t.d);
        }
        bind(n, 0, y);
    }

    /// ONNX's spatial pads (begin..., end...) and output dims for a 2-D window op.
    struct window {
        std::vector<std::int64_t> kernel, strides, dilations, pads;  // pads: top, left, bottom, right (ONNX order)
        shape_type out;                                               // spatial output dims
    };
    window window_of(const graph::node& n, const shape_type& spatial, std::vector<std::int64_t> kernel) {
        window w;
        const auto sr = spatial.size();
        w.kernel = kernel;
        w.strides = attr_ints(n, "strides").value_or(std::vector<std::int64_t>(sr, 1));
        w.dilations = attr_ints(n, "dilations").value_or(std::vector<std::int64_t>(sr, 1));
        w.pads = attr_ints(n, "pads").value_or(std::vector<std::int64_t>(2 * sr, 0));
        if (w.strides.size() != sr || w.dilations.size() != sr || w.pads.size() != 2 * sr) throw error(where_, "strides, dilations or pads of the wrong length");
        const auto auto_pad = attr_s(n, "auto_pad", "NOTSET");
        for (std::size_t i = 0; i < sr; ++i) {
            const auto in = static_cast<std::int64_t>(spatial[i]);
            const auto ek = (kernel[i] - 1) * w.dilations[i] + 1;
            if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
                const auto o = (in + w.strides[i] - 1) / w.strides[i];
                const auto total = std::max<std::int64_t>(0, (o - 1) * w.strides[i] + ek - in);
                const auto small = total / 2, big = total - small;
                w.pads[i] = auto_pad == "SAME_UPPER" ? small : big;
                w.pads[i + sr] = auto_pad == "SAME_UPPER" ? big : small;
            } else if (auto_pad == "VALID") {
                w.pads[i] = w.pads[i + sr] = 0;
            } else if (auto_pad != "NOTSET") {
                throw error(where_, "auto_pad '" + auto_pad + "'");
            }
            const auto o = (in + w.pads[i] + w.pads[i + sr] - ek) / w.strides[i] + 1;
            if (o < 1) throw error(where_, "an empty output along spatial dim " + std::to_string(i));
            w.out.push_back(static_cast<std::size_t>(o));
        }
        return w;
    }

    void lower_conv(const graph::node& n) {
        auto x = get(n.inputs.at(0), "input"), w = get(n.inputs.at(1), "input");
        require_float(x);
        require_tosa_type(x);
        if (x.t.d != dtype::f32) throw unsupported_error(where_, "tosa.conv2d on " + std::string(name(x.t.d)) + "; f32 only here");
        const bool one_d = x.t.rank() == 3;
        if (x.t.rank() != 4 && !one_d) throw unsupported_error(where_, "Conv of rank " + std::to_string(x.t.rank()) + " (2-D and 1-D are lowered)");
        if (one_d) {
            x = reshape(x, {x.t.s[0], x.t.s[1], 1, x.t.s[2]});
            w = reshape(w, {w.t.s[0], w.t.s[1], 1, w.t.s[2]});
        }
        const auto group = attr_i(n, "group", 1);
        const auto N = x.t.s[0], C = x.t.s[1], O = w.t.s[0];
        std::vector<std::int64_t> kernel{static_cast<std::int64_t>(w.t.s[2]), static_cast<std::int64_t>(w.t.s[3])};
        graph::node nn = n;
        if (one_d) {
            // The 1-D attributes as 2-D ones with a height of 1.
            auto widen = [&](const char* k, std::int64_t fill, bool pads) {
                if (auto v = attr_ints(n, k)) nn.attributes[k] = pads ? std::vector<std::int64_t>{0, (*v)[0], 0, (*v)[1]} : std::vector<std::int64_t>{fill, (*v)[0]};
            };
            widen("strides", 1, false);
            widen("dilations", 1, false);
            widen("pads", 0, true);
        }
        const auto win = window_of(nn, {x.t.s[2], x.t.s[3]}, kernel);
        value bias;
        if (present(n, 2)) {
            bias = get(n.inputs[2], "input");
        } else {
            bias = tosa_const(tensor::zeros(dtype::f32, {O}));
        }
        const std::string attrs = "dilation = " + int_list(win.dilations) + ", pad = " +
                                  int_list({win.pads[0], win.pads[2], win.pads[1], win.pads[3]}) + ", stride = " + int_list(win.strides);
        const auto xh = transpose(x, {0, 2, 3, 1});  // NCHW -> NHWC
        const shape_type out_nhwc{N, win.out[0], win.out[1], O};
        value y;
        const auto cg = C / static_cast<std::size_t>(group);
        if (group == 1) {
            y = tosa("conv2d", {xh, transpose(w, {0, 2, 3, 1}), bias}, {dtype::f32, out_nhwc}, attrs);
        } else if (static_cast<std::size_t>(group) == C && cg == 1) {
            // Depthwise: W [C*M, 1, KH, KW] -> [KH, KW, C, M]; output channel c*M + m.
            const auto M = O / C;
            auto wd = reshape(w, {C, M, w.t.s[2], w.t.s[3]});
            wd = transpose(wd, {2, 3, 0, 1});
            y = tosa("depthwise_conv2d", {xh, wd, bias}, {dtype::f32, out_nhwc}, attrs);
        } else {
            // Grouped: one conv2d per group on its channel slices, concatenated.
            const auto og = O / static_cast<std::size_t>(group);
            for (std::int64_t gi = 0; gi < group; ++gi) {
                const auto g = static_cast<std::size_t>(gi);
                const auto gc = static_cast<std::int64_t>(g * cg), go = static_cast<std::int64_t>(g * og);
                auto xs = slice(xh, {0, 0, 0, gc}, {N, xh.t.s[1], xh.t.s[2], cg});
                auto ws = slice(w, {go, 0, 0, 0}, {og, w.t.s[1], w.t.s[2], w.t.s[3]});
                auto bs = slice(bias, {go}, {og});
                auto yg = tosa("conv2d", {xs, transpose(ws, {0, 2, 3, 1}), bs}, {dtype::f32, {N, win.out[0], win.out[1], og}}, attrs);
                if (gi == 0) {
                    y = yg;
                } else {
                    auto s = y.t.s;
                    s[3] += og;
                    y = tosa("concat", {y, yg}, {dtype::f32, s}, "axis = 3 : i64");
                }
            }
        }
        y = transpose(y, {0, 3, 1, 2});  // NHWC -> NCHW
        if (one_d) y = reshape(y, {N, O, win.out[1]});
        bind(n, 0, y);
    }

    void lower_pool(const graph::node& n, value x) {
        require_float(x);
        require_tosa_type(x);
        if (x.t.d != dtype::f32) throw unsupported_error(where_, "TOSA pools on " + std::string(name(x.t.d)) + "; f32 only here");
        const bool one_d = x.t.rank() == 3;
        if (x.t.rank() != 4 && !one_d) throw unsupported_error(where_, n.op_type + " of rank " + std::to_string(x.t.rank()) + " (2-D and 1-D are lowered)");
        if (attr_i(n, "ceil_mode", 0) != 0) throw unsupported_error(where_, "ceil_mode (TOSA's pools floor their output size)");
        auto kernel = *attr_ints(n, "kernel_shape");
        graph::node nn = n;
        const auto in_shape = x.t.s;
        if (one_d) {
            // A 1-D pool as a 2-D one of height 1.
            x = reshape(x, {x.t.s[0], x.t.s[1], 1, x.t.s[2]});
            kernel = {1, kernel.at(0)};
            if (auto v = attr_ints(n, "strides")) nn.attributes["strides"] = std::vector<std::int64_t>{1, v->at(0)};
            if (auto v = attr_ints(n, "dilations")) nn.attributes["dilations"] = std::vector<std::int64_t>{1, v->at(0)};
            if (auto v = attr_ints(n, "pads")) nn.attributes["pads"] = std::vector<std::int64_t>{0, v->at(0), 0, v->at(1)};
        }
        const auto win = window_of(nn, {x.t.s[2], x.t.s[3]}, kernel);
        if (win.dilations != std::vector<std::int64_t>{1, 1}) throw unsupported_error(where_, "dilated pools (TOSA has no pool dilation)");
        if (n.op_type == "MaxPool" && attr_i(n, "storage_order", 0) != 0) throw unsupported_error(where_, "storage_order");
        auto xh = transpose(x, {0, 2, 3, 1});
        std::vector<std::int64_t> pad{win.pads[0], win.pads[2], win.pads[1], win.pads[3]};
        const bool any_pad = std::any_of(pad.begin(), pad.end(), [](std::int64_t p) { return p != 0; });
        if (n.op_type == "AveragePool" && attr_i(n, "count_include_pad", 0) != 0 && any_pad) {
            // Zeros counted: pad explicitly, then average without padding.
            tensor padding = tensor::zeros(dtype::i64, {4, 2});
            auto p = padding.values<std::int64_t>();
            p[2] = pad[0];
            p[3] = pad[1];
            p[4] = pad[2];
            p[5] = pad[3];
            auto s = xh.t.s;
            s[1] += static_cast<std::size_t>(pad[0] + pad[1]);
            s[2] += static_cast<std::size_t>(pad[2] + pad[3]);
            xh = tosa("pad", {xh, tosa_const(padding), tosa_const(tensor::zeros(dtype::f32, {}))}, {dtype::f32, s});
            pad = {0, 0, 0, 0};
        }
        const shape_type out{x.t.s[0], win.out[0], win.out[1], x.t.s[1]};
        const std::string attrs = "kernel = " + int_list(kernel) + ", pad = " + int_list(pad) + ", stride = " + int_list(win.strides);
        auto y = tosa(n.op_type == "MaxPool" ? "max_pool2d" : "avg_pool2d", {xh}, {dtype::f32, out}, attrs);
        y = transpose(y, {0, 3, 1, 2});
        if (one_d) y = reshape(y, {in_shape[0], in_shape[1], win.out[1]});
        bind(n, 0, y);
    }

    /// ReduceSum/Max/Min/Prod/Mean over `axes`, one tosa.reduce_* per axis.
    value reduce(const std::string& op, value x, std::vector<std::int64_t> axes, bool keepdims) {
        std::sort(axes.begin(), axes.end());
        axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
        const auto in_shape = x.t.s;
        const std::string base = op == "ReduceMean" ? "reduce_sum" : op == "ReduceSum" ? "reduce_sum" : op == "ReduceMax" ? "reduce_max" : op == "ReduceMin" ? "reduce_min" : "reduce_prod";
        std::int64_t count = 1;
        for (const auto a : axes) {
            auto s = x.t.s;
            count *= static_cast<std::int64_t>(s[static_cast<std::size_t>(a)]);
            s[static_cast<std::size_t>(a)] = 1;
            if (x.t.rank() <= 4) {
                x = tosa(base, {x}, {x.t.d, s}, "axis = " + std::to_string(a) + " : i64");
                continue;
            }
            // TOSA 15 reduces tensors of rank 1-4: reduce a [outer, dim, inner] view.
            const auto [outer, inner] = outer_inner(x.t.s, static_cast<std::size_t>(a));
            const auto dim = x.t.s[static_cast<std::size_t>(a)];
            auto v = reshape(x, {outer, dim, inner});
            v = tosa(base, {v}, {x.t.d, {outer, 1, inner}}, "axis = 1 : i64");
            x = reshape(v, s);
        }
        if (op == "ReduceMean") {
            const double c = static_cast<double>(count);
            x = map({x}, x.t.d, [c](body_builder& b, const std::vector<std::string>& v) { return b.op("arith.divf", {v[0], b.constant(c)}); });
        }
        if (!keepdims) {
            shape_type s;
            for (std::size_t i = 0; i < in_shape.size(); ++i) {
                if (!std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(i))) s.push_back(in_shape[i]);
            }
            x = reshape(x, s);
        }
        return x;
    }

    /// The products of the dims before and after `axis`.
    static std::pair<std::size_t, std::size_t> outer_inner(const shape_type& s, std::size_t axis) {
        std::size_t outer = 1, inner = 1;
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (i < axis) outer *= s[i];
            if (i > axis) inner *= s[i];
        }
        return {outer, inner};
    }

    /// `x` broadcast to `s` (ONNX rules) by a linalg copy: TOSA 15's tile takes ranks 1-4.
    value broadcast_to(const value& x, const shape_type& s) {
        if (x.t.s == s) return x;
        return map({x}, x.t.d, [](body_builder&, const std::vector<std::string>& a) { return a[0]; }, s);
    }

    void lower_reduce(const graph::node& n, value x) {
        const auto& op = n.op_type;
        static const std::set<std::string, std::less<>> known = {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceMean",
                                                                 "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum"};
        if (!known.count(op)) throw unsupported_error(where_, "op " + op + " is not lowered to TOSA");
        require_tosa_type(x);
        if (!is_float(x.t.d) && op != "ReduceMax" && op != "ReduceMin") require_float(x, "TOSA reduces integers in their own width");
        if (x.t.d == dtype::f16 || x.t.d == dtype::bf16) {
            if (op != "ReduceMax" && op != "ReduceMin") throw unsupported_error(where_, "a float16 reduction would accumulate in float16");
        }
        const auto r = x.t.rank();
        std::vector<std::int64_t> axes;
        bool given = false;
        if (auto a = attr_ints(n, "axes")) {
            axes = *a;
            given = true;
        } else if (present(n, 1)) {
            axes = ints_of(constant_input(n, 1, op + "'s axes"));
            given = true;
        }
        const bool keepdims = attr_i(n, "keepdims", 1) != 0;
        if (axes.empty()) {
            if (given || attr_i(n, "noop_with_empty_axes", 0) != 0) {
                if (attr_i(n, "noop_with_empty_axes", 0) != 0) {
                    bind(n, 0, x);
                    return;
                }
            }
            for (std::size_t i = 0; i < r; ++i) axes.push_back(static_cast<std::int64_t>(i));
        }
        for (auto& a : axes) a = norm_axis(a, r);
        if (op == "ReduceL1") x = tosa("abs", {x}, x.t);
        if (op == "ReduceL2" || op == "ReduceSumSquare") x = tosa("mul", {x, x}, x.t, "shift = 0 : i32");
        const std::string base = (op == "ReduceL1" || op == "ReduceL2" || op == "ReduceSumSquare" || op == "ReduceLogSum") ? "ReduceSum" : op;
        // A rank-0 input has nothing to reduce, but ReduceL2 and ReduceLogSum still apply
        // their sqrt and log (log(x), not x).
        auto y = r == 0 ? x : reduce(base, x, axes, keepdims);
        if (op == "ReduceL2") y = map({y}, y.t.d, [](body_builder& b, const std::vector<std::string>& v) { return b.op("math.sqrt", {v[0]}); });
        if (op == "ReduceLogSum") y = map({y}, y.t.d, [](body_builder& b, const std::vector<std::string>& v) { return b.op("math.log", {v[0]}); });
        bind(n, 0, y);
    }

    void lower_arg(const graph::node& n, value x) {
        require_float(x);
        require_tosa_type(x);
        // select_last_index: the first maximum of x reversed along the axis is the last of x.
        const bool last = attr_i(n, "select_last_index", 0) != 0;
        const auto r = x.t.rank();
        if (r == 0) throw error(where_, "a rank-0 input");
        const auto axis = static_cast<std::size_t>(norm_axis(attr_i(n, "axis", 0), r));
        if (n.op_type == "ArgMin") x = tosa("negate", {x}, x.t);  // exact for floats: the first minimum is the first maximum of -x
        shape_type s;
        for (std::size_t i = 0; i < r; ++i) {
            if (i != axis) s.push_back(x.t.s[i]);
        }
        value y;
        if (r <= 4) {
            const std::string ax = "axis = " + std::to_string(axis) + " : i64";
            y = tosa("argmax", {last ? tosa("reverse", {x}, x.t, ax) : x}, {dtype::i32, s}, ax);
        } else {
            // TOSA 15's argmax takes ranks 1-4: a [outer, dim, inner] view.
            const auto [outer, inner] = outer_inner(x.t.s, axis);
            auto v = reshape(x, {outer, x.t.s[axis], inner});
            if (last) v = tosa("reverse", {v}, v.t, "axis = 1 : i64");
            y = tosa("argmax", {v}, {dtype::i32, {outer, inner}}, "axis = 1 : i64");
            y = reshape(y, s);
        }
        const auto top = static_cast<std::int64_t>(x.t.s[axis]) - 1;
        y = map({y}, dtype::i64, [last, top](body_builder& b, const std::vector<std::string>& v) {
            const auto i = b.convert("arith.extsi", v[0], "i32", "i64");
            return last ? b.op("arith.subi", {b.int_constant(top, "i64"), i}, "i64") : i;
        });
        if (attr_i(n, "keepdims", 1) != 0) {
            auto k = x.t.s;
            k[axis] = 1;
            y = reshape(y, k);
        }
        bind(n, 0, y);
    }

    void lower_softmax(const graph::node& n, value x) {
        require_float(x);
        require_tosa_type(x);
        if (x.t.d != dtype::f32) throw unsupported_error(where_, "Softmax on " + std::string(name(x.t.d)) + "; f32 only here");
        const auto r = x.t.rank();
        const auto in_shape = x.t.s;
        std::int64_t axis = attr_i(n, "axis", g_.opset >= 13 ? -1 : 1);
        axis = norm_axis(axis, r);
        if (g_.opset < 13) {
            // Softmax-1/11: the input as a 2-D matrix [prod(dims < axis), prod(dims >= axis)].
            std::size_t a = 1, b = 1;
            for (std::size_t i = 0; i < r; ++i) (static_cast<std::int64_t>(i) < axis ? a : b) *= in_shape[i];
            x = reshape(x, {a, b});
            axis = 1;
        }
        // Decomposed as a compiler does: e = exp(x - max(x)), e / sum(e); log: (x - max) - log(sum(e)).
        auto s = x.t.s;
        s[static_cast<std::size_t>(axis)] = 1;
        const std::string ax = "axis = " + std::to_string(axis) + " : i64";
        const auto mx = tosa("reduce_max", {x}, {x.t.d, s}, ax);
        const auto shifted = tosa_elementwise("sub", {x, mx}, x.t.d);
        const auto e = tosa("exp", {shifted}, shifted.t);
        const auto sum = tosa("reduce_sum", {e}, {x.t.d, s}, ax);
        value y;
        if (n.op_type == "Softmax") {
            y = map({e, sum}, x.t.d, [](body_builder& b, const std::vector<std::string>& v) { return b.op("arith.divf", {v[0], v[1]}); });
        } else {
            const auto ls = tosa("log", {sum}, sum.t);
            y = tosa_elementwise("sub", {shifted, ls}, x.t.d);
        }
        bind(n, 0, reshape(y, in_shape));
    }

    [[nodiscard]] std::string main_text(const std::vector<std::string>& in_names, const std::vector<value>& outs) const {
        const std::string where = "tensoracle-mlir: main";
        std::ostringstream m;
        std::set<std::string> decl;
        for (const auto& t : input_types_) decl.insert("load_" + element_type(t.d, where));
        for (const auto& o : outs) decl.insert("store_" + element_type(o.t.d, where));
        for (const auto& d : decl) {
            const auto e = d.substr(d.find('_') + 1);
            m << "func.func private @tensoracle_" << d << "(memref<*x" << e << ">, i64) attributes {llvm.emit_c_interface}\n";
        }
        m << "func.func @main() {\n";
        std::vector<std::string> args;
        for (std::size_t k = 0; k < in_names.size(); ++k) {
            const auto& t = input_types_[k];
            const auto e = element_type(t.d, where);
            const std::string K = std::to_string(k);
            m << "  %i" << K << " = arith.constant " << K << " : i64\n";
            m << "  %m" << K << " = memref.alloc() : " << memref_type(t, where) << "\n";
            m << "  %u" << K << " = memref.cast %m" << K << " : " << memref_type(t, where) << " to memref<*x" << e << ">\n";
            m << "  call @tensoracle_load_" << e << "(%u" << K << ", %i" << K << ") : (memref<*x" << e << ">, i64) -> ()\n";
            m << "  %t" << K << " = bufferization.to_tensor %m" << K << " : " << memref_type(t, where) << "\n";
            args.push_back("%t" + K);
        }
        m << "  ";
        for (std::size_t i = 0; i < outs.size(); ++i) m << (i ? ", " : "") << "%r" << i;
        m << " = call @graph(";
        for (std::size_t i = 0; i < args.size(); ++i) m << (i ? ", " : "") << args[i];
        m << ") : (";
        for (std::size_t i = 0; i < input_types_.size(); ++i) m << (i ? ", " : "") << tensor_type(input_types_[i], where);
        m << ") -> (";
        for (std::size_t i = 0; i < outs.size(); ++i) m << (i ? ", " : "") << tensor_type(outs[i].t, where);
        m << ")\n";
        for (std::size_t i = 0; i < outs.size(); ++i) {
            const auto& t = outs[i].t;
            const auto e = element_type(t.d, where);
            const std::string K = std::to_string(i);
            m << "  %o" << K << " = arith.constant " << K << " : i64\n";
            m << "  %rm" << K << " = bufferization.to_memref %r" << K << " : " << memref_type(t, where) << "\n";
            m << "  %ru" << K << " = memref.cast %rm" << K << " : " << memref_type(t, where) << " to memref<*x" << e << ">\n";
            m << "  call @tensoracle_store_" << e << "(%ru" << K << ", %o" << K << ") : (memref<*x" << e << ">, i64) -> ()\n";
        }
        m << "  return\n}\n";
        return m.str();
    }
};

}  // namespace tensoracle::backends::mlir_tosa
