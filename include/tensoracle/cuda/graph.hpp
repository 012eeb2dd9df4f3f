// tensoracle: runs a graph with its nodes on a CUDA device where the kit has
// a CUDA kernel for the node (op, dtype and attributes), and on the CPU
// reference kernels otherwise, with a note per fallen-back node. Values live
// where they were made and are copied across only when a node on the other
// side reads them. Output shapes and dtypes of device nodes are checked
// against the spec's inference, as spec::evaluate does for CPU kernels.
//
// Host code (any C++20 compiler); link tensoracle::cuda for the kernels.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/cuda/device_tensor.hpp"
#include "tensoracle/cuda/lowering.hpp"
#include "tensoracle/cuda/ops.hpp"
#include "tensoracle/graph/interpreter.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle::cuda {

struct device_run_options {
    gemm_precision precision = gemm_precision::pedantic;  ///< MatMul, Gemm, Conv
    /// false: a node without a CUDA kernel is an unsupported_error instead of a CPU fallback.
    bool fallback_to_cpu = true;
};

struct device_run_result {
    std::map<std::string, tensor, std::less<>> outputs;
    /// One line per node that ran on the CPU: "node <label>: <why>".
    std::vector<std::string> notes;
    std::size_t device_nodes = 0;
    std::size_t cpu_nodes = 0;
};

namespace detail {

/// A value of the graph: on the device, on the host, or both.
struct resident {
    std::optional<device_tensor> dev;
    std::optional<tensor> host;
    const device_tensor& on_device() {
        if (!dev) dev = to_device(*host);
        return *dev;
    }
    const tensor& on_host() {
        if (!host) host = to_host(*dev);
        return *host;
    }
    [[nodiscard]] dtype element_dtype() const { return dev ? dev->element_dtype() : host->element_dtype(); }
    [[nodiscard]] const shape_type& shape() const { return dev ? dev->shape() : host->shape(); }
};

inline std::int64_t attr_int(const spec::attribute_map& a, std::string_view k) {
    const auto it = a.find(k);
    return it == a.end() ? 0 : std::get<std::int64_t>(it->second);
}
inline float attr_float(const spec::attribute_map& a, std::string_view k) {
    const auto it = a.find(k);
    return it == a.end() ? 0.0f : static_cast<float>(std::get<double>(it->second));
}
inline std::vector<std::int64_t> attr_ints(const spec::attribute_map& a, std::string_view k) {
    const auto it = a.find(k);
    if (it == a.end()) return {};
    if (const auto* v = std::get_if<std::vector<std::int64_t>>(&it->second)) return *v;
    return {};
}
inline bool has_attr(const spec::attribute_map& a, std::string_view k) { return a.find(k) != a.end(); }
inline std::string attr_string(const spec::attribute_map& a, std::string_view k) {
    const auto it = a.find(k);
    if (it == a.end()) return {};
    if (const auto* v = std::get_if<std::string>(&it->second)) return *v;
    return {};
}

/// 2-D window of Conv/MaxPool/AveragePool from normalised attributes; nullopt
/// (with `why`) for what the CUDA kernels do not cover.
inline std::optional<window_2d> window_of(const spec::attribute_map& a, const shape_type& kernel, std::string& why) {
    const auto pad_mode = attr_string(a, "auto_pad");
    if (!pad_mode.empty() && pad_mode != "NOTSET") {
        why = "auto_pad=" + pad_mode + " has no CUDA kernel (explicit pads only)";
        return std::nullopt;
    }
    if (kernel.size() != 2) {
        why = "only 2-D windows have CUDA kernels";
        return std::nullopt;
    }
    window_2d w;
    const auto st = attr_ints(a, "strides"), di = attr_ints(a, "dilations"), pa = attr_ints(a, "pads");
    for (int k = 0; k < 2; ++k) {
        w.kernel[k] = static_cast<std::int64_t>(kernel[static_cast<std::size_t>(k)]);
        w.strides[k] = st.size() == 2 ? st[static_cast<std::size_t>(k)] : 1;
        w.dilations[k] = di.size() == 2 ? di[static_cast<std::size_t>(k)] : 1;
    }
    for (int k = 0; k < 4; ++k) w.pads[k] = pa.size() == 4 ? pa[static_cast<std::size_t>(k)] : 0;
    return w;
}

/// ONNX Slice on the device as a strided view, then a contiguous copy.
inline device_tensor slice(const device_tensor& x, const tensor& starts_t, const tensor& ends_t, const tensor* axes_t,
                           const tensor* steps_t) {
    const auto starts = starts_t.to<std::int64_t>(), ends = ends_t.to<std::int64_t>();
    const auto rank = static_cast<std::int64_t>(x.rank());
    device_tensor v = x;
    for (std::size_t i = 0; i < starts.size(); ++i) {
        std::int64_t axis = axes_t != nullptr ? axes_t->to<std::int64_t>().data()[i] : static_cast<std::int64_t>(i);
        if (axis < 0) axis += rank;
        const std::int64_t step = steps_t != nullptr ? steps_t->to<std::int64_t>().data()[i] : 1;
        const auto dim = static_cast<std::int64_t>(x.shape()[static_cast<std::size_t>(axis)]);
        std::int64_t s = starts.data()[i], e = ends.data()[i];
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        std::int64_t count = 0;
        if (step > 0) {
            s = std::clamp<std::int64_t>(s, 0, dim);
            e = std::clamp<std::int64_t>(e, 0, dim);
            count = e > s ? (e - s + step - 1) / step : 0;
        } else {
            s = std::clamp<std::int64_t>(s, 0, dim - 1);
            e = std::clamp<std::int64_t>(e, -1, dim - 1);
            count = s > e ? (s - e + (-step) - 1) / (-step) : 0;
        }
        v = v.sliced(static_cast<std::size_t>(axis), count == 0 ? 0 : s, step, static_cast<std::size_t>(count));
    }
    return contiguous(v);
}

}  // namespace detail

/// One node's inputs as the device runner sees them.
struct node_inputs {
    std::vector<detail::resident*> values;  ///< nullptr: absent optional input
    [[nodiscard]] bool has(std::size_t i) const { return i < values.size() && values[i] != nullptr; }
    const device_tensor& dev(std::size_t i) const { return values[i]->on_device(); }
    const tensor& host(std::size_t i) const { return values[i]->on_host(); }
};

/// Runs op on the device; nullopt (and `why`) when the kit has no CUDA kernel for
/// this op, dtype or attribute choice. Throws the kit's errors for bad input.
inline std::optional<std::vector<device_tensor>> run_node_on_device(std::string_view op, const node_inputs& in,
                                                                    const spec::attribute_map& a,
                                                                    const spec::inferred_outputs& inferred,
                                                                    std::size_t outputs, gemm_precision precision,
                                                                    std::string& why) {
    using namespace detail;
    const auto one = [](device_tensor t) { return std::optional<std::vector<device_tensor>>(std::vector<device_tensor>{std::move(t)}); };
    const lowering* l = lowering_of(op);
    if (l == nullptr) {
        why = "no CUDA kernel for " + std::string(op);
        return std::nullopt;
    }
    switch (l->kernel) {
        case device_kernel::unary: {
            elementwise_attributes e;
            if (has_attr(a, "alpha")) {
                e.alpha = attr_float(a, "alpha");
                e.alpha_given = true;
            }
            if (has_attr(a, "beta")) e.beta = attr_float(a, "beta");
            if (has_attr(a, "gamma")) e.gamma = attr_float(a, "gamma");
            return one(unary(op, in.dev(0), e));
        }
        case device_kernel::binary: {
            elementwise_attributes e;
            e.fmod = attr_int(a, "fmod");
            return one(binary(op, in.dev(0), in.dev(1), e));
        }
        case device_kernel::where: return one(where(in.dev(0), in.dev(1), in.dev(2)));
        case device_kernel::clip: {
            std::optional<double> lo, hi;
            if (in.has(1)) lo = in.host(1).value_as_double(0);
            if (in.has(2)) hi = in.host(2).value_as_double(0);
            return one(clip(in.dev(0), lo, hi));
        }
        case device_kernel::cast: return one(cast(in.dev(0), inferred.dtypes.at(0)));
        case device_kernel::reduce: {
            std::vector<std::int64_t> axes = attr_ints(a, "axes");
            if (in.has(1)) {
                const auto t = in.host(1).to<std::int64_t>();
                axes.assign(t.begin(), t.end());
            }
            return one(reduce(l->reduction, in.dev(0), axes, attr_int(a, "keepdims") != 0,
                              attr_int(a, "noop_with_empty_axes") != 0));
        }
        case device_kernel::softmax:
        case device_kernel::log_softmax:
            return one(softmax(in.dev(0), attr_int(a, "axis"), l->kernel == device_kernel::log_softmax));
        case device_kernel::matmul: return one(matmul(in.dev(0), in.dev(1), precision));
        case device_kernel::gemm:
            return one(gemm(in.dev(0), in.dev(1), in.has(2) ? &in.dev(2) : nullptr, attr_float(a, "alpha"),
                            attr_float(a, "beta"), attr_int(a, "transA") != 0, attr_int(a, "transB") != 0, precision));
        case device_kernel::conv:
        case device_kernel::max_pool:
        case device_kernel::average_pool: {
            if (outputs > 1) {
                why = "the Indices output of MaxPool has no CUDA kernel";
                return std::nullopt;
            }
            const bool is_conv = l->kernel == device_kernel::conv;
            const auto& x = in.dev(0);
            const shape_type spatial = is_conv ? shape_type(in.dev(1).shape().begin() + 2, in.dev(1).shape().end())
                                               : [&] {
                                                     const auto ks = attr_ints(a, "kernel_shape");
                                                     return shape_type(ks.begin(), ks.end());
                                                 }();
            if (x.rank() != 4) {
                why = "only 2-D (NCHW) windows have CUDA kernels";
                return std::nullopt;
            }
            const auto win = window_of(a, spatial, why);
            if (!win) return std::nullopt;
            const auto& out_shape = inferred.shapes.at(0);
            if (is_conv) {
                return one(conv2d(x, in.dev(1), in.has(2) ? &in.dev(2) : nullptr, *win, attr_int(a, "group"), out_shape,
                                  precision));
            }
            if (l->kernel == device_kernel::max_pool) {
                if (attr_int(a, "storage_order") != 0) {
                    why = "storage_order=1 has no CUDA kernel";
                    return std::nullopt;
                }
                return one(max_pool2d(x, *win, out_shape));
            }
            return one(average_pool2d(x, *win, attr_int(a, "count_include_pad") != 0, out_shape));
        }
        case device_kernel::batch_norm:
            if (outputs > 1 || attr_int(a, "training_mode") != 0) {
                why = "training mode has no CUDA kernel";
                return std::nullopt;
            }
            return one(batch_norm(in.dev(0), in.dev(1), in.dev(2), in.dev(3), in.dev(4), attr_float(a, "epsilon")));
        case device_kernel::layer_norm:
            if (outputs > 1) {
                why = "the Mean and InvStdDev outputs have no CUDA kernel";
                return std::nullopt;
            }
            return one(layer_norm(in.dev(0), in.dev(1), in.has(2) ? &in.dev(2) : nullptr, attr_int(a, "axis"),
                                  attr_float(a, "epsilon")));
        case device_kernel::transpose: {
            auto perm = attr_ints(a, "perm");
            const auto& x = in.dev(0);
            std::vector<std::size_t> p(x.rank());
            for (std::size_t k = 0; k < p.size(); ++k) p[k] = perm.empty() ? p.size() - 1 - k : static_cast<std::size_t>(perm[k]);
            return one(contiguous(x.permuted(p)));
        }
        case device_kernel::reshape: {
            const auto& x = in.dev(0);
            return one((x.contiguous() ? x : contiguous(x)).reshaped(inferred.shapes.at(0)));
        }
        case device_kernel::expand: return one(expand(in.dev(0), inferred.shapes.at(0)));
        case device_kernel::concat: {
            std::vector<device_tensor> xs;
            for (std::size_t i = 0; i < in.values.size(); ++i) xs.push_back(in.dev(i));
            return one(concat(xs, attr_int(a, "axis")));
        }
        case device_kernel::slice:
            return one(slice(in.dev(0), in.host(1), in.host(2), in.has(3) ? &in.host(3) : nullptr,
                             in.has(4) ? &in.host(4) : nullptr));
        case device_kernel::gather: return one(gather(in.dev(0), in.host(1), attr_int(a, "axis")));
    }
    why = "no CUDA kernel for " + std::string(op);
    return std::nullopt;
}

/// Runs `g` on `feeds` with device nodes where the kit has CUDA kernels.
[[nodiscard]] inline device_run_result run_on_device(const graph::graph& g,
                                                     const std::map<std::string, tensor, std::less<>>& feeds,
                                                     const device_run_options& options = {}) {
    const std::string where = "tensoracle::cuda::run_on_device(" + g.name + ")";
    const auto order = g.topological_order();
    std::map<std::string, detail::resident, std::less<>> values;
    for (const auto& [k, t] : g.initializers) values[k].host = t;
    for (const auto& feed : feeds) {
        const auto it = std::find_if(g.inputs.begin(), g.inputs.end(),
                                     [&](const graph::value_info& v) { return v.name == feed.first; });
        if (it == g.inputs.end()) throw error(where, "feed '" + feed.first + "' is not a graph input");
        graph::detail::check_feed(*it, feed.second, where);
        values[feed.first] = detail::resident{std::nullopt, feed.second};
    }
    for (const auto& in : g.inputs) {
        if (values.find(in.name) == values.end()) throw error(where, "graph input '" + in.name + "' is not fed");
    }
    device_run_result r;
    for (const std::size_t i : order) {
        const auto& n = g.nodes[i];
        if (graph::detail::is_control_flow(n.op_type)) {
            throw unsupported_error(where, "node " + n.label() + ": control flow runs only in graph::run");
        }
        const auto& op = ops::get_op(n.op_type);
        node_inputs in;
        for (const auto& name : n.inputs) {
            if (name.empty()) {
                in.values.push_back(nullptr);
                continue;
            }
            const auto it = values.find(name);
            if (it == values.end()) throw error(where, "value '" + name + "' is not defined when it is read");
            in.values.push_back(&it->second);
        }
        while (!in.values.empty() && in.values.back() == nullptr) in.values.pop_back();
        const auto attrs = graph::call_attributes(op, n);
        std::vector<tensor> out;
        std::string why;
        try {
            // Shapes and dtypes from the spec: small inputs by value (shape-like), large ones by a stand-in.
            std::vector<tensor> proxies;
            proxies.reserve(in.values.size());
            std::vector<const tensor*> args;
            for (auto* v : in.values) {
                if (v == nullptr) {
                    args.push_back(nullptr);
                } else if (v->host || element_count(v->shape()) <= 4096) {
                    args.push_back(&v->on_host());
                } else {
                    proxies.push_back(tensor::zeros(v->element_dtype(), v->shape()));
                    args.push_back(&proxies.back());
                }
            }
            const auto inferred = spec::infer(op, args, attrs);
            std::optional<std::vector<device_tensor>> dev;
            try {
                // Outputs the node uses (optional trailing outputs may be named "").
                std::size_t used = 0;
                for (std::size_t o = 0; o < n.outputs.size(); ++o) {
                    if (!n.outputs[o].empty()) used = o + 1;
                }
                dev = run_node_on_device(n.op_type, in, op.normalize_attributes(attrs), inferred, used,
                                         options.precision, why);
            } catch (const unsupported_error& e) {
                why = e.what();
            }
            if (dev) {
                for (std::size_t o = 0; o < dev->size(); ++o) {
                    const auto& t = (*dev)[o];
                    if (t.shape() != inferred.shapes.at(o) || t.element_dtype() != inferred.dtypes.at(o)) {
                        throw error(n.op_type, "internal: CUDA kernel output " + std::to_string(o) + " is " +
                                                   std::string(name(t.element_dtype())) + to_string(t.shape()) +
                                                   " but the spec infers " + std::string(name(inferred.dtypes.at(o))) +
                                                   to_string(inferred.shapes.at(o)));
                    }
                }
                ++r.device_nodes;
                for (std::size_t o = 0; o < n.outputs.size() && o < dev->size(); ++o) {
                    if (!n.outputs[o].empty()) values[n.outputs[o]] = detail::resident{std::move((*dev)[o]), std::nullopt};
                }
                continue;
            }
            if (!options.fallback_to_cpu) throw unsupported_error(n.op_type, why);
            std::vector<const tensor*> host_args;
            for (auto* v : in.values) host_args.push_back(v == nullptr ? nullptr : &v->on_host());
            out = spec::evaluate(op, host_args, attrs);
        } catch (const error& e) {
            graph::detail::rethrow_with_context(e, where, "node " + n.label() + ": ");
        }
        ++r.cpu_nodes;
        r.notes.push_back("node " + n.label() + " ran on the CPU: " + why);
        if (n.outputs.size() > out.size()) {
            throw error(where, "node " + n.label() + " names " + std::to_string(n.outputs.size()) + " outputs; " +
                                   n.op_type + " produced " + std::to_string(out.size()));
        }
        for (std::size_t o = 0; o < n.outputs.size(); ++o) {
            if (!n.outputs[o].empty()) values[n.outputs[o]] = detail::resident{std::nullopt, std::move(out[o])};
        }
    }
    for (const auto& o : g.outputs) r.outputs.emplace(o.name, values.at(o.name).on_host());
    return r;
}

}  // namespace tensoracle::cuda
