// tensoracle: a graph's float64 twin. Every f16/bf16/f32 value, weight, Cast
// target and constant widened to float64 gives the truth that a low-precision
// reference and a backend are both measured against (the campaign's float64
// oracle, the mutation oracle's precision check).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <variant>

#include "tensoracle/accuracy/tolerance.hpp"
#include "tensoracle/graph/graph.hpp"

namespace tensoracle::graph {

namespace detail {
/// f16, bf16 and f32: what a float64 re-evaluation widens.
[[nodiscard]] constexpr bool low_precision(dtype d) noexcept { return d == dtype::f16 || d == dtype::bf16 || d == dtype::f32; }
[[nodiscard]] inline tensor widened(const tensor& t) { return low_precision(t.element_dtype()) ? tensor(t.to<double>()) : t; }
}  // namespace detail

/// Graph inputs and weights read where an op takes no float64 (Resize's scales: f32
/// only): widen_to_float64 leaves them as they are, or the re-evaluation would not run.
[[nodiscard]] inline std::set<std::string> float64_refused(const graph& g) {
    std::set<std::string> refused;
    for (const auto& n : g.nodes) {
        for (const auto& [key, sub] : n.subgraphs) {
            const auto inner = float64_refused(sub.get());
            refused.insert(inner.begin(), inner.end());
        }
        const auto* op = ops::find_op(n.op_type);
        if (op == nullptr || op->inputs.empty()) continue;
        for (std::size_t k = 0; k < n.inputs.size(); ++k) {
            const auto& slot = op->inputs[std::min(k, op->inputs.size() - 1)];
            if (!n.inputs[k].empty() && !slot.types.contains(dtype::f64)) refused.insert(n.inputs[k]);
        }
    }
    return refused;
}

/// The graph with every f16/bf16/f32 value, weight, Cast target and constant widened to
/// float64, in its branches too (but those in `refused`, float64_refused(g)): the truth
/// a low-precision reference and backend are both measured against.
[[nodiscard]] inline graph widen_to_float64(const graph& g, const std::set<std::string>& refused) {
    graph w = g;
    for (auto* list : {&w.inputs, &w.outputs}) {
        for (auto& v : *list) {
            if (detail::low_precision(v.type) && !refused.count(v.name)) v.type = dtype::f64;
        }
    }
    for (auto& [name, t] : w.initializers) {
        if (!refused.count(name)) t = detail::widened(t);
    }
    for (auto& n : w.nodes) {
        for (auto& [key, value] : n.attributes) {
            if (auto* code = std::get_if<std::int64_t>(&value); code && (key == "to" || key == "dtype")) {
                for (const dtype d : {dtype::f16, dtype::bf16, dtype::f32}) {
                    if (*code == onnx_type(d)) *code = onnx_type(dtype::f64);
                }
            } else if (auto* t = std::get_if<tensor>(&value)) {
                *t = detail::widened(*t);
            }
        }
        for (auto& [key, sub] : n.subgraphs) sub.get() = widen_to_float64(sub.get(), refused);
    }
    return w;
}
[[nodiscard]] inline graph widen_to_float64(const graph& g) { return widen_to_float64(g, float64_refused(g)); }

/// True when `backend` is as close to float64 truth as our same-dtype reference,
/// element by element: |b - t| <= atol + rtol |t| + |r - t|, with NaN/Inf in b
/// accepted where the truth or the reference has the same.
[[nodiscard]] inline bool within_reference_precision(const tensor& b, const tensor& r, const tensor& truth, const tolerance& tol) {
    if (b.shape() != truth.shape() || r.shape() != truth.shape()) return false;
    auto kind = [](double v) { return std::isnan(v) ? 1 : std::isinf(v) ? (v > 0 ? 2 : 3) : 0; };
    for (std::size_t i = 0; i < b.size(); ++i) {
        const double bv = b.value_as_double(i), rv = r.value_as_double(i), tv = truth.value_as_double(i);
        const int kb = kind(bv), kr = kind(rv), kt = kind(tv);
        if (kb != 0 || kt != 0) {
            if (kb != kt && kb != kr) return false;
            continue;
        }
        const double ref_error = kr == 0 ? std::abs(rv - tv) : std::numeric_limits<double>::infinity();
        if (!(std::abs(bv - tv) <= tol.atol + tol.rtol * std::abs(tv) + ref_error)) return false;
    }
    return true;
}

}  // namespace tensoracle::graph
