// tensoracle: where ONNX 1.12's shape inference (Debian 12's libonnx) gives
// a different output shape than the operator documents, modelled from its
// inference code so a caller can tell these cases apart without linking
// libonnx. The generator avoids them by default (gen::config::
// avoid_onnx_shape_inference_bugs) so its graphs pass strict shape inference
// in that ONNX; tests/io/test_onnx.cpp checks this model against the real
// library on random configurations. Evidence and examples: docs/FINDINGS.md.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/core/tensor.hpp"
#include "tensoracle/spec/attributes.hpp"

namespace tensoracle::io {

namespace detail {
inline std::int64_t int_attribute(const spec::attribute_map& a, std::string_view key, std::int64_t fallback) {
    const auto it = a.find(key);
    if (it == a.end()) return fallback;
    const auto* v = std::get_if<std::int64_t>(&it->second);
    return v == nullptr ? fallback : *v;
}
inline std::vector<std::int64_t> ints_attribute(const spec::attribute_map& a, std::string_view key, std::size_t n,
                                                std::int64_t fallback) {
    const auto it = a.find(key);
    const auto* v = it == a.end() ? nullptr : std::get_if<std::vector<std::int64_t>>(&it->second);
    return v == nullptr ? std::vector<std::int64_t>(n, fallback) : *v;
}
inline std::string string_attribute(const spec::attribute_map& a, std::string_view key) {
    const auto it = a.find(key);
    const auto* v = it == a.end() ? nullptr : std::get_if<std::string>(&it->second);
    return v == nullptr ? std::string("NOTSET") : *v;
}
}  // namespace detail

/// Whether `onnx_1_12_inferred_shape` models this op (callers skip the rest otherwise).
[[nodiscard]] inline bool has_onnx_1_12_shape_model(std::string_view op_type) noexcept {
    return op_type == "MaxPool" || op_type == "AveragePool" || op_type == "ConvTranspose";
}

/// The output shape ONNX 1.12's shape inference gives a MaxPool, AveragePool
/// or ConvTranspose node with these input shapes and attributes (as the node
/// carries them), or nullopt for other ops and for inputs it would reject.
/// A result of lower rank than the input is what ONNX 1.12 really produces:
/// it stops adding dimensions part way (ConvTranspose with output_shape).
[[nodiscard]] inline std::optional<shape_type> onnx_1_12_inferred_shape(std::string_view op_type,
                                                                        const std::vector<shape_type>& inputs,
                                                                        const spec::attribute_map& a) {
    using detail::int_attribute, detail::ints_attribute, detail::string_attribute;
    const bool pool = op_type == "MaxPool" || op_type == "AveragePool";
    if (!has_onnx_1_12_shape_model(op_type) || inputs.empty() || inputs[0].size() < 3) return std::nullopt;
    const auto& x = inputs[0];
    const std::size_t n = x.size() - 2;
    auto kernel = ints_attribute(a, "kernel_shape", 0, 0);
    if (kernel.empty()) {
        if (pool || inputs.size() < 2 || inputs[1].size() != x.size()) return std::nullopt;
        for (std::size_t i = 2; i < inputs[1].size(); ++i) kernel.push_back(static_cast<std::int64_t>(inputs[1][i]));
    }
    const auto strides = ints_attribute(a, "strides", n, 1);
    // AveragePool-11 has no dilations; ONNX treats them as 1 there.
    const auto dilations = op_type == "AveragePool" ? std::vector<std::int64_t>(n, 1) : ints_attribute(a, "dilations", n, 1);
    if (kernel.size() != n || strides.size() != n || dilations.size() != n) return std::nullopt;
    std::vector<std::int64_t> ek(n);
    for (std::size_t i = 0; i < n; ++i) ek[i] = (kernel[i] - 1) * dilations[i] + 1;
    const std::string auto_pad = string_attribute(a, "auto_pad");
    shape_type out;

    if (pool) {
        out = {x[0], x[1]};
        auto pads = ints_attribute(a, "pads", 2 * n, 0);
        if (pads.size() != 2 * n) return std::nullopt;
        if (a.find("pads") == a.end() && auto_pad != "NOTSET" && auto_pad != "VALID") {
            // Its SAME padding: from the remainder of x by the stride, not from ceil(x / s).
            for (std::size_t i = 0; i < n; ++i) {
                std::int64_t residual = 0;
                if (strides[i] > 1) residual = static_cast<std::int64_t>(x[2 + i]) % strides[i];
                const std::int64_t total = std::max<std::int64_t>(0, residual == 0 ? ek[i] - strides[i] : ek[i] - residual);
                const std::int64_t small = total / 2, big = total - small;
                pads[i] = auto_pad == "SAME_UPPER" ? small : big;
                pads[n + i] = auto_pad == "SAME_UPPER" ? big : small;
            }
        }
        const bool ceil_mode = int_attribute(a, "ceil_mode", 0) == 1;
        for (std::size_t i = 0; i < n; ++i) {
            const std::int64_t span = static_cast<std::int64_t>(x[2 + i]) + pads[i] + pads[n + i] - ek[i];
            // Ceil mode without dropping a last window that starts in the end padding.
            const std::int64_t positions =
                ceil_mode ? static_cast<std::int64_t>(std::ceil(static_cast<float>(span) / static_cast<float>(strides[i])))
                          : span / strides[i];
            if (1 + positions < 1) return std::nullopt;
            out.push_back(static_cast<std::size_t>(1 + positions));
        }
        return out;
    }

    // ConvTranspose: N, then W's second dim times group.
    if (inputs.size() < 2 || inputs[1].size() < 2) return std::nullopt;
    out = {x[0], inputs[1][1] * static_cast<std::size_t>(std::max<std::int64_t>(1, int_attribute(a, "group", 1)))};
    const auto output_padding = ints_attribute(a, "output_padding", n, 0);
    if (output_padding.size() != n) return std::nullopt;
    if (const auto it = a.find("output_shape"); it != a.end()) {
        const auto requested = ints_attribute(a, "output_shape", n, 0);
        if (requested.size() != n) return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            // It gives up at the first requested size below the input size (a crop), keeping
            // the dimensions it has added: the inferred rank comes out short.
            if (requested[i] < static_cast<std::int64_t>(x[2 + i])) return out;
            out.push_back(static_cast<std::size_t>(requested[i]));
        }
        return out;
    }
    auto pads = ints_attribute(a, "pads", 2 * n, 0);
    if (pads.size() != 2 * n) return std::nullopt;
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t xi = static_cast<std::int64_t>(x[2 + i]);
        const std::int64_t full = strides[i] * (xi - 1) + output_padding[i] + ek[i];
        std::int64_t total = pads[i] + pads[n + i];
        // Its SAME padding leaves output_padding out and is never negative, so the size is
        // x * s only when ek >= s and output_padding is 0.
        if (same) total = std::max<std::int64_t>(0, strides[i] * (xi - 1) + ek[i] - xi * strides[i]);
        if (auto_pad == "VALID") total = 0;
        if (full - total < 0) return std::nullopt;
        out.push_back(static_cast<std::size_t>(full - total));
    }
    return out;
}

/// Why ONNX 1.12 infers a shape other than `ours` for this node, or nullopt
/// when it agrees (or the op is not one where it is known to differ).
[[nodiscard]] inline std::optional<std::string> onnx_1_12_shape_divergence(std::string_view op_type,
                                                                           const std::vector<shape_type>& inputs,
                                                                           const spec::attribute_map& attributes,
                                                                           const shape_type& ours) {
    const auto theirs = onnx_1_12_inferred_shape(op_type, inputs, attributes);
    if (!theirs || *theirs == ours) return std::nullopt;
    std::string why = std::string(op_type) + ": ONNX 1.12 infers " + to_string(*theirs) + ", the operator gives " + to_string(ours);
    if (op_type == "ConvTranspose") {
        why += attributes.count("output_shape") != 0 ? " (output_shape below the input size)"
                                                     : " (SAME padding with output_padding or a stride above the kernel)";
    } else {
        why += " (ceil_mode keeps a last window that starts in the end padding)";
    }
    return why;
}

/// Why ONNX 1.12's strict shape inference with data propagation may fail on
/// a valid Concat or Gather node, or nullopt when it cannot. ONNX carries the
/// values of small integer tensors (int32 and int64 initializers of rank 0 or
/// 1, Shape's output, and what Unsqueeze, Cast, Add or Concat make of them) as
/// a flat list, and these two ops check their `axis` against that list's
/// length instead of the input's rank: an axis outside [-n, n - 1], n the
/// element count of input 0, fails the whole inference ("axis must be in
/// [-rank, rank-1]"). Whether ONNX has values for input 0 depends on the graph
/// above the node, so this judges the node alone and answers "may fail"
/// (docs/FINDINGS.md; fixed upstream in onnx/onnx#6570).
[[nodiscard]] inline std::optional<std::string> onnx_1_12_data_propagation_failure(std::string_view op_type,
                                                                                  const shape_type& input0,
                                                                                  const spec::attribute_map& attributes) {
    if (op_type != "Concat" && op_type != "Gather") return std::nullopt;
    const auto it = attributes.find("axis");
    if (it == attributes.end()) return std::nullopt;  // Gather's default: ONNX skips the check
    const auto* axis = std::get_if<std::int64_t>(&it->second);
    if (axis == nullptr) return std::nullopt;
    const std::size_t n = element_count(input0, "tensoracle::io::onnx_1_12_data_propagation_failure");
    // |axis| in unsigned arithmetic: -axis overflows for the lowest int64.
    const std::uint64_t magnitude = *axis < 0 ? 0 - static_cast<std::uint64_t>(*axis) : static_cast<std::uint64_t>(*axis);
    if (*axis >= 0 ? magnitude < n : magnitude <= n) return std::nullopt;
    return std::string(op_type) + ": axis " + std::to_string(*axis) + " is outside [-n, n-1] for input 0's " +
           std::to_string(n) + " element(s), which ONNX 1.12's data propagation checks it against";
}

}  // namespace tensoracle::io
