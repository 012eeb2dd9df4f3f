// tensoracle: motifs, the subgraph patterns compilers rewrite, for the generator
// to splice into random graphs (gen::config::motif_probability).
//
// A motif is a short chain of op steps. Each step names, for some input slots,
// where the slot's value comes from ("prev": the previous step's output 0, a
// new weight or constant shaped like the previous output, ...); every other
// slot, every shape and every attribute is the solver's, so each instance is
// valid by the op specs like any generated node. A step may require something
// of its instance ("last_axis", "keepdims", ...): what the rule it aims at needs.
//
// Bugs live in rewrites' preconditions, so an instance is varied with
// probability config::motif_near_miss, one way at a time (motif_variant): the
// producer on another input slot, a requirement dropped, a constant computed
// instead, a constant broadcast along another axis, an extra consumer of an
// intermediate, the chain cut short. Dtypes, ranks and the other attributes
// vary with the graph anyway.
//
// The built-in library (builtin_motifs) aims at the rules of ONNX Runtime's
// graph transformers (basic, extended and layout levels), TorchScript's freeze
// and optimize_for_inference passes and OpenCV DNN's layer fusions; each motif
// names its rule. A user's own (config::user_motifs, or JSON through
// gen/config_json.hpp) are written the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/core/error.hpp"

namespace tensoracle::gen {

/// Where a step's input slot takes its value, parsed from text:
///   "prev"               output 0 of the previous step (step 0: a value of the graph)
///   "x"                  the value step 0 read through "prev" (the motif's input)
///   "step:K"             output 0 of step K
///   "weight[:SHAPE]"     a new weight (an initializer with config::weight_probability)
///   "input[:SHAPE]"      a new graph input (a computed operand)
///   "const:V[:SHAPE]"    a constant holding V everywhere (fixed data)
/// SHAPE is relative to the reference value (the previous step's output, or x
/// at step 0): "same" (default for weights and inputs), "scalar" (default for
/// constants), "channel" ([C, 1, ..., 1] against [N, C, ...]), "last" ([D] of
/// the last axis), "axisK" (ones but axis K).
struct motif_source {
    enum class kind { previous, motif_input, step, weight, input, constant };
    kind what = kind::previous;
    std::size_t step = 0;   ///< step:K
    double value = 0.0;     ///< const:V
    std::string shape = "same";

    [[nodiscard]] static motif_source parse(std::string_view text, const std::string& where) {
        auto fail = [&](const std::string& why) -> motif_source {
            throw error(where, "input '" + std::string(text) + "': " + why +
                                   " (expected prev, x, step:K, weight[:SHAPE], input[:SHAPE] or const:V[:SHAPE])");
        };
        std::vector<std::string> parts;
        std::size_t b = 0;
        for (;;) {
            const auto e = text.find(':', b);
            parts.emplace_back(text.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
            if (e == std::string_view::npos) break;
            b = e + 1;
        }
        motif_source s;
        const auto& head = parts[0];
        auto shape_at = [&](std::size_t i, const char* fallback) {
            s.shape = parts.size() > i ? parts[i] : fallback;
            if (s.shape != "same" && s.shape != "scalar" && s.shape != "channel" && s.shape != "last" &&
                !(s.shape.size() > 4 && s.shape.rfind("axis", 0) == 0 && s.shape.find_first_not_of("0123456789", 4) == std::string::npos)) {
                fail("unknown shape '" + s.shape + "' (same, scalar, channel, last or axisK)");
            }
        };
        if (head == "prev" && parts.size() == 1) {
            s.what = kind::previous;
        } else if (head == "x" && parts.size() == 1) {
            s.what = kind::motif_input;
        } else if (head == "step" && parts.size() == 2) {
            s.what = kind::step;
            if (parts[1].empty() || parts[1].find_first_not_of("0123456789") != std::string::npos) fail("step needs an index");
            s.step = std::stoul(parts[1]);
        } else if ((head == "weight" || head == "input") && parts.size() <= 2) {
            s.what = head == "weight" ? kind::weight : kind::input;
            shape_at(1, "same");
        } else if (head == "const" && (parts.size() == 2 || parts.size() == 3)) {
            s.what = kind::constant;
            std::size_t used = 0;
            try {
                s.value = std::stod(parts[1], &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used == 0 || used != parts[1].size()) fail("const needs a number");
            shape_at(2, "scalar");
        } else {
            fail("not understood");
        }
        return s;
    }
    [[nodiscard]] std::string text() const {
        switch (what) {
            case kind::previous: return "prev";
            case kind::motif_input: return "x";
            case kind::step: return "step:" + std::to_string(step);
            case kind::weight: return "weight:" + shape;
            case kind::input: return "input:" + shape;
            case kind::constant: {
                std::string v = std::to_string(value);
                return "const:" + v + ":" + shape;
            }
        }
        return {};
    }
};

/// Requirements a step may put on its instance (what a rule's precondition needs).
inline constexpr std::string_view motif_requirements[] = {
    "last_axis",      // axes / axis is the last one (Softmax, Reduce*, LayerNormalization)
    "keepdims",       // a reduction keeps its dims
    "swap_last_two",  // a Transpose swaps the last two axes and keeps the others
    "two_d",          // output 0 has rank 2
    "same_type",      // a Cast to its input's own type
    "constant_mode",  // Pad in constant mode
    "no_bias",        // Conv / Gemm without its optional bias (C)
    "same_shape",     // output 0 has input 0's shape (an Expand that changes nothing)
};

struct motif_step {
    std::string op;
    std::map<std::size_t, motif_source> inputs;  ///< slot -> source; other slots: the solver's
    std::vector<std::string> require;
};

struct motif {
    std::string name;  ///< "conv_bn"
    std::string rule;  ///< what it aims at: "ORT ConvBNFusion (basic)"
    std::vector<motif_step> steps;
    double weight = 1.0;

    /// Throws naming the motif and step when a step is malformed (an op name is checked
    /// by the generator, which knows the registry and the config).
    void validate(const std::string& where) const {
        const std::string at = where + ", motif '" + name + "'";
        if (name.empty()) throw error(where, "a motif needs a name");
        if (steps.empty()) throw error(at, "has no steps");
        if (!(weight >= 0.0)) throw error(at, "weight must be non-negative");
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const auto& st = steps[i];
            const std::string ws = at + ", step " + std::to_string(i) + " (" + st.op + ")";
            if (st.op.empty()) throw error(ws, "names no op");
            for (const auto& [slot, src] : st.inputs) {
                if (src.what == motif_source::kind::step && src.step >= i) {
                    throw error(ws, "input " + std::to_string(slot) + " reads step " + std::to_string(src.step) + ", which is not an earlier step");
                }
                if (i == 0 && src.what == motif_source::kind::motif_input) throw error(ws, "step 0 reads x: use prev");
            }
            for (const auto& r : st.require) {
                bool known = false;
                for (const auto k : motif_requirements) known = known || r == k;
                if (!known) throw error(ws, "unknown requirement '" + r + "'");
            }
        }
    }
    [[nodiscard]] std::string canonical() const {
        std::string s = name + "{" + std::to_string(weight) + ";";
        for (const auto& st : steps) {
            s += st.op + "(";
            for (const auto& [slot, src] : st.inputs) s += std::to_string(slot) + "=" + src.text() + ",";
            s += ")";
            for (const auto& r : st.require) s += "!" + r;
            s += ";";
        }
        return s + "}";
    }
};

/// One way an instance of a motif differs from the rule's pattern.
enum class motif_variant { exact, other_slot, requirement_dropped, computed_constant, other_broadcast, extra_consumer, cut_short };

[[nodiscard]] constexpr std::string_view to_string(motif_variant v) noexcept {
    switch (v) {
        case motif_variant::exact: return "exact";
        case motif_variant::other_slot: return "other_slot";
        case motif_variant::requirement_dropped: return "requirement_dropped";
        case motif_variant::computed_constant: return "computed_constant";
        case motif_variant::other_broadcast: return "other_broadcast";
        case motif_variant::extra_consumer: return "extra_consumer";
        case motif_variant::cut_short: return "cut_short";
    }
    return "unknown";
}

/// A step from "Op", {slot, source text} pairs and requirements (a motif in C++).
[[nodiscard]] inline motif_step make_step(std::string op, std::initializer_list<std::pair<std::size_t, std::string_view>> in = {{0, "prev"}},
                                          std::vector<std::string> require = {}) {
    motif_step s;
    s.op = std::move(op);
    for (const auto& [slot, text] : in) s.inputs.emplace(slot, motif_source::parse(text, "tensoracle::gen::make_step(" + s.op + ")"));
    s.require = std::move(require);
    return s;
}

/// The built-in motif library: the rules of the systems the kit runs, from their
/// public sources (ONNX Runtime's onnxruntime/core/optimizer, PyTorch's
/// torch/csrc/jit/passes, OpenCV's dnn module); docs/MOTIFS.md lists them.
[[nodiscard]] inline const std::vector<motif>& builtin_motifs() {
    static const std::vector<motif> library = [] {
        std::vector<motif> m;
        auto add = [&](std::string name, std::string rule, std::vector<motif_step> steps, double weight = 1.0) {
            m.push_back({std::move(name), std::move(rule), std::move(steps), weight});
        };
        const auto channel = std::string_view("weight:channel");
        // --- ONNX Runtime, basic level: Conv folds and eliminations ---
        add("conv_bn", "ORT ConvBNFusion; TorchScript conv-bn folding; OpenCV Conv+BatchNorm", {make_step("Conv"), make_step("BatchNormalization")});
        add("conv_add", "ORT ConvAddFusion (a per-channel constant into the bias)", {make_step("Conv"), make_step("Add", {{0, "prev"}, {1, channel}})});
        add("conv_mul", "ORT ConvMulFusion (a per-channel constant into the weights)", {make_step("Conv"), make_step("Mul", {{0, "prev"}, {1, channel}})});
        add("conv_bn_relu", "TorchScript conv-bn folding then an activation; OpenCV Conv+BatchNorm+ReLU",
            {make_step("Conv"), make_step("BatchNormalization"), make_step("Relu")});
        add("pad_conv", "ORT PadFusion (a constant 0 Pad into Conv's pads)", {make_step("Pad", {{0, "prev"}, {2, "const:0"}}, {"constant_mode"}), make_step("Conv")});
        add("pad_maxpool", "ORT PadFusion into MaxPool", {make_step("Pad", {{0, "prev"}, {2, "const:0"}}, {"constant_mode"}), make_step("MaxPool")});
        add("pad_avgpool", "ORT PadFusion into AveragePool", {make_step("Pad", {{0, "prev"}, {2, "const:0"}}, {"constant_mode"}), make_step("AveragePool")});
        add("relu_clip", "ORT FuseReluClip (Relu raises Clip's min)", {make_step("Relu"), make_step("Clip")});
        add("div_mul", "ORT DivMulFusion: Div(1, x) -> Mul into Div", {make_step("Div", {{0, "const:1"}, {1, "prev"}}), make_step("Mul", {{0, "prev"}, {1, "input"}})});
        add("not_where", "ORT NotWhereFusion (X and Y swapped)", {make_step("Not"), make_step("Where", {{0, "prev"}, {1, "input"}, {2, "input"}})});
        add("gemm_sum", "ORT GemmSumFusion (Sum into Gemm's C)", {make_step("Gemm", {{0, "prev"}}, {"no_bias"}), make_step("Sum", {{0, "prev"}, {1, "weight:same"}})});
        add("gemm_transpose", "ORT GemmTransposeFusion (a 2-D Transpose into transA)", {make_step("Transpose", {{0, "prev"}}, {"two_d"}), make_step("Gemm")});
        add("matmul_add", "ORT MatMulAddFusion (into Gemm)", {make_step("MatMul"), make_step("Add", {{0, "prev"}, {1, "weight:last"}})});
        add("matmul_bn", "ORT MatMulBNFusion (constant B; into Gemm)", {make_step("MatMul", {{0, "prev"}}, {"two_d"}), make_step("BatchNormalization")});
        add("identity_elim", "ORT IdentityElimination", {make_step("Identity"), make_step("Relu")});
        add("dropout_elim", "ORT EliminateDropout", {make_step("Dropout"), make_step("Sigmoid")});
        add("expand_elim", "ORT ExpandElimination (an Expand that keeps the shape)", {make_step("Expand", {{0, "prev"}}, {"same_shape"}), make_step("Abs")});
        add("cast_same", "ORT CastElimination (a Cast to its input's type)", {make_step("Cast", {{0, "prev"}}, {"same_type"}), make_step("Neg")});
        add("cast_chain", "ORT Cast chains (removed with a session option; kept otherwise)", {make_step("Cast"), make_step("Cast")});
        add("add_zero", "ORT NoopElimination (Add of a scalar 0)", {make_step("Add", {{0, "prev"}, {1, "const:0"}}), make_step("Relu")});
        add("mul_one", "ORT NoopElimination (Mul by 1)", {make_step("Mul", {{0, "prev"}, {1, "const:1"}}), make_step("Tanh")});
        add("sub_zero", "ORT NoopElimination (Sub of 0)", {make_step("Sub", {{0, "prev"}, {1, "const:0"}}), make_step("Abs")});
        add("div_one", "ORT NoopElimination (Div by 1)", {make_step("Div", {{0, "prev"}, {1, "const:1"}}), make_step("Sigmoid")});
        add("constant_fold", "ORT ConstantFolding (a node of constants only)",
            {make_step("Add", {{0, "weight:same"}, {1, "weight:same"}}), make_step("Mul", {{0, "x"}, {1, "prev"}})});
        add("cse", "ORT CommonSubexpressionElimination (two equal nodes on one input)",
            {make_step("Sigmoid"), make_step("Sigmoid", {{0, "x"}}), make_step("Add", {{0, "step:0"}, {1, "prev"}})});
        add("reshape_reshape", "ORT ReshapeFusion / transpose optimizer (Reshape chains)", {make_step("Reshape"), make_step("Reshape")});
        add("transpose_transpose", "ORT transpose optimizer (inverse Transposes cancel)", {make_step("Transpose"), make_step("Transpose")});
        add("transpose_relu_transpose", "ORT transpose optimizer (pushed through element-wise ops)",
            {make_step("Transpose"), make_step("Relu"), make_step("Transpose")});
        add("unsqueeze_squeeze", "ORT transpose optimizer / Unsqueeze elimination", {make_step("Unsqueeze"), make_step("Squeeze")});
        // --- ONNX Runtime, extended level: activations into Conv and Gemm, MatMul scales ---
        add("conv_relu", "ORT ConvActivationFusion (FusedConv); OpenCV Conv+ReLU", {make_step("Conv"), make_step("Relu")}, 2.0);
        add("conv_sigmoid", "ORT ConvActivationFusion (FusedConv, Sigmoid)", {make_step("Conv"), make_step("Sigmoid")});
        add("conv_tanh", "ORT ConvActivationFusion (FusedConv, Tanh)", {make_step("Conv"), make_step("Tanh")});
        add("conv_leakyrelu", "ORT ConvActivationFusion (FusedConv, LeakyRelu)", {make_step("Conv"), make_step("LeakyRelu")});
        add("conv_clip", "ORT ConvActivationFusion (FusedConv, Clip); OpenCV Conv+ReLU6",
            {make_step("Conv"), make_step("Clip", {{0, "prev"}, {1, "const:0"}, {2, "const:6"}})});
        add("conv_hardsigmoid", "ORT ConvActivationFusion (FusedConv, HardSigmoid)", {make_step("Conv"), make_step("HardSigmoid")});
        add("conv_add_relu", "ORT layout-level Conv+Add(+activation) into FusedConv with a sum; OpenCV Conv+Eltwise+ReLU",
            {make_step("Conv"), make_step("Add", {{0, "prev"}, {1, "input"}}), make_step("Relu")});
        add("gemm_relu", "ORT GemmActivationFusion (FusedGemm, Relu)", {make_step("Gemm"), make_step("Relu")});
        add("gemm_sigmoid", "ORT GemmActivationFusion (FusedGemm, Sigmoid)", {make_step("Gemm"), make_step("Sigmoid")});
        add("gemm_tanh", "ORT GemmActivationFusion (FusedGemm, Tanh)", {make_step("Gemm"), make_step("Tanh")});
        add("gemm_leakyrelu", "ORT GemmActivationFusion (FusedGemm, LeakyRelu)", {make_step("Gemm"), make_step("LeakyRelu")});
        add("gemm_elu", "ORT GemmActivationFusion (FusedGemm, Elu)", {make_step("Gemm"), make_step("Elu")});
        add("gemm_softplus", "ORT GemmActivationFusion (FusedGemm, Softplus)", {make_step("Gemm"), make_step("Softplus")});
        add("matmul_scale_after", "ORT MatMulScaleFusion (a scalar Mul after MatMul into FusedMatMul's alpha)",
            {make_step("MatMul"), make_step("Mul", {{0, "prev"}, {1, "const:0.5"}})});
        add("matmul_scale_before", "ORT MatMulScaleFusion (a scalar Mul before MatMul)",
            {make_step("Mul", {{0, "prev"}, {1, "const:0.25"}}), make_step("MatMul")});
        add("matmul_div_scale", "ORT MatMulScaleFusion (a scalar Div after MatMul)", {make_step("MatMul"), make_step("Div", {{0, "prev"}, {1, "const:8"}})});
        add("transpose_matmul", "ORT MatmulTransposeFusion (the last two axes swapped into FusedMatMul)",
            {make_step("Transpose", {{0, "prev"}}, {"swap_last_two"}), make_step("MatMul")});
        add("gelu", "ORT GeluFusion: Div(sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5)",
            {make_step("Div", {{0, "prev"}, {1, "const:1.4142135623730951"}}), make_step("Erf"), make_step("Add", {{0, "prev"}, {1, "const:1"}}),
             make_step("Mul", {{0, "x"}, {1, "prev"}}), make_step("Mul", {{0, "prev"}, {1, "const:0.5"}})});
        add("bias_gelu", "ORT BiasGeluFusion: Add(bias) then the Gelu chain",
            {make_step("Add", {{0, "prev"}, {1, "weight:last"}}), make_step("Div", {{0, "prev"}, {1, "const:1.4142135623730951"}}), make_step("Erf"),
             make_step("Add", {{0, "prev"}, {1, "const:1"}}), make_step("Mul", {{0, "step:0"}, {1, "prev"}}), make_step("Mul", {{0, "prev"}, {1, "const:0.5"}})});
        add("fast_gelu", "ORT FastGeluFusion (the tanh form)",
            {make_step("Pow", {{0, "prev"}, {1, "const:3"}}), make_step("Mul", {{0, "prev"}, {1, "const:0.044715"}}), make_step("Add", {{0, "x"}, {1, "prev"}}),
             make_step("Mul", {{0, "prev"}, {1, "const:0.7978845608028654"}}), make_step("Tanh"), make_step("Add", {{0, "prev"}, {1, "const:1"}}),
             make_step("Mul", {{0, "x"}, {1, "prev"}}), make_step("Mul", {{0, "prev"}, {1, "const:0.5"}})});
        add("quick_gelu", "ORT QuickGeluFusion: x * Sigmoid(1.702 x)",
            {make_step("Mul", {{0, "prev"}, {1, "const:1.702"}}), make_step("Sigmoid"), make_step("Mul", {{0, "x"}, {1, "prev"}})});
        add("silu", "ORT QuickGeluFusion with alpha 1: x * Sigmoid(x)", {make_step("Sigmoid"), make_step("Mul", {{0, "x"}, {1, "prev"}})});
        add("layer_norm", "ORT LayerNormFusion: mean, centred, variance, sqrt, divide, scale and bias over the last axis",
            {make_step("ReduceMean", {{0, "prev"}}, {"last_axis", "keepdims"}), make_step("Sub", {{0, "x"}, {1, "prev"}}),
             make_step("Pow", {{0, "prev"}, {1, "const:2"}}), make_step("ReduceMean", {{0, "prev"}}, {"last_axis", "keepdims"}),
             make_step("Add", {{0, "prev"}, {1, "const:1e-05"}}), make_step("Sqrt"), make_step("Div", {{0, "step:1"}, {1, "prev"}}),
             make_step("Mul", {{0, "prev"}, {1, "weight:last"}}), make_step("Add", {{0, "prev"}, {1, "weight:last"}})});
        add("simplified_layer_norm", "ORT SimplifiedLayerNormFusion (RMS norm)",
            {make_step("Pow", {{0, "prev"}, {1, "const:2"}}), make_step("ReduceMean", {{0, "prev"}}, {"last_axis", "keepdims"}),
             make_step("Add", {{0, "prev"}, {1, "const:1e-06"}}), make_step("Sqrt"), make_step("Div", {{0, "x"}, {1, "prev"}}),
             make_step("Mul", {{0, "prev"}, {1, "weight:last"}})});
        add("skip_layer_norm", "ORT SkipLayerNormFusion: Add then LayerNormalization",
            {make_step("Add", {{0, "prev"}, {1, "input"}}), make_step("LayerNormalization", {{0, "prev"}}, {"last_axis"})});
        add("softmax_last", "Softmax over the last axis (attention's fusions, MLIR's decomposition)",
            {make_step("MatMul"), make_step("Softmax", {{0, "prev"}}, {"last_axis"})});
        // --- TorchScript freeze / optimize_for_inference; OpenCV DNN ---
        add("gemm_bn", "TorchScript linear-bn folding", {make_step("Gemm", {{0, "prev"}}, {"two_d"}), make_step("BatchNormalization")});
        add("conv_add_const", "TorchScript conv-add folding (a constant added to the output)",
            {make_step("Conv"), make_step("Add", {{0, "prev"}, {1, "weight:channel"}}), make_step("Relu")});
        add("bn_scale_shift", "OpenCV BatchNorm+Scale (a Mul and an Add per channel)",
            {make_step("BatchNormalization"), make_step("Mul", {{0, "prev"}, {1, channel}}), make_step("Add", {{0, "prev"}, {1, channel}})});
        add("convtranspose_relu", "OpenCV Deconvolution+activation; ORT layout-level ConvTranspose handling", {make_step("ConvTranspose"), make_step("Relu")});
        return m;
    }();
    return library;
}

/// The library as Markdown: docs/MOTIFS.md (tensoracle gen --list-motifs).
[[nodiscard]] inline std::string motifs_markdown() {
    std::string md =
        "# Motifs: the patterns the generator splices in\n\n"
        "Generated by `tensoracle gen --list-motifs` from `include/tensoracle/gen/motifs.hpp` (a CTest case fails when\n"
        "this file is stale). The command line splices motifs into random graphs by default\n"
        "(`motif_probability` 0.3 per insertion; 0 turns them off); the C++ `gen::config` leaves them off.\n"
        "Each instance is valid by the op specs (the solver picks shapes and attributes), and with\n"
        "`motif_near_miss` (0.3) it is varied one way: `other_slot` (the producer read through another\n"
        "input), `requirement_dropped`, `computed_constant` (a graph input instead of a constant),\n"
        "`other_broadcast` (a constant shaped along another axis), `extra_consumer` (an intermediate read\n"
        "twice), `cut_short` (the last step left out). `motif_weights` reweights or disables a motif by\n"
        "name; `user_motifs` (a list, or a JSON file's path) adds a team's own, written as below.\n\n"
        "Step inputs: `prev` the previous step's output (at step 0, a value of the graph), `x` the value\n"
        "step 0 read, `step:K` step K's output, `weight:SHAPE` a new initializer, `input:SHAPE` a new graph\n"
        "input, `const:V:SHAPE` a constant V; SHAPE is `same`, `scalar`, `channel` ([C,1,..,1]), `last` or\n"
        "`axisK`, relative to the previous output. Other inputs are the solver's.\n\n"
        "| motif | steps | aims at |\n| --- | --- | --- |\n";
    for (const auto& m : builtin_motifs()) {
        std::string steps;
        for (const auto& st : m.steps) {
            std::string s = st.op;
            std::string in;
            for (const auto& [slot, src] : st.inputs) {
                if (src.what == motif_source::kind::previous && slot == 0 && st.inputs.size() == 1) continue;
                std::string t = src.text();
                if (src.what == motif_source::kind::constant) {
                    // "const:0.500000:scalar" -> "const:0.5"
                    auto v = std::to_string(src.value);
                    while (v.size() > 1 && v.back() == '0') v.pop_back();
                    if (!v.empty() && v.back() == '.') v.pop_back();
                    t = "const:" + v + (src.shape == "scalar" ? "" : ":" + src.shape);
                }
                in += (in.empty() ? "" : ", ") + std::to_string(slot) + "=" + t;
            }
            if (!in.empty()) s += "(" + in + ")";
            for (const auto& r : st.require) s += " [" + r + "]";
            steps += (steps.empty() ? "" : " → ") + s;
        }
        md += "| `" + m.name + "` | " + steps + " | " + m.rule + " |\n";
    }
    return md;
}

}  // namespace tensoracle::gen
