// tensoracle: ONNX operators as PyTorch (libtorch 1.13, ATen) calls, for the
// `torch` and `torchscript` backends (backends/torch/tensoracle_torch.cpp).
//
// Each ONNX op maps to the ATen call that computes it, or to a short
// composition of ATen calls written from the ONNX formula, only where the
// mapping is exact: same values (up to rounding of the same formula), same
// shapes, same element type. Where ONNX and ATen differ and no exact
// composition was written (an attribute combination, a dtype ATen's CPU
// kernels lack), the node is refused as `unsupported_error` with the reason,
// never approximated. Attributes are read here with ONNX's own defaults, not
// through the kit's op specs: this backend is a system under test, independent
// of the reference it is compared with. Of the specs it takes only the types,
// as keys: the op_type strings, and the check that every op of the registry is
// mapped or marked unsupported.
#pragma once

#include <ATen/ATen.h>
#include <ATen/TracerMode.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>

#include <tensoracle/core/error.hpp>
#include <tensoracle/core/tensor.hpp>
#include <tensoracle/graph/graph.hpp>
#include <tensoracle/ops/all_ops.hpp>
#include <tensoracle/ops/keyed.hpp>
#include <tensoracle/ops/registry.hpp>

namespace tensoracle::backends::torch_onnx {

using at::Tensor;
using tensors = std::vector<Tensor>;

// ---- element types and conversions -----------------------------------------

[[nodiscard]] inline std::optional<at::ScalarType> scalar_type(dtype d) {
    switch (d) {
        case dtype::f16: return at::kHalf;
        case dtype::bf16: return at::kBFloat16;
        case dtype::f32: return at::kFloat;
        case dtype::f64: return at::kDouble;
        case dtype::i8: return at::kChar;
        case dtype::i16: return at::kShort;
        case dtype::i32: return at::kInt;
        case dtype::i64: return at::kLong;
        case dtype::u8: return at::kByte;
        case dtype::boolean: return at::kBool;
    }
    return std::nullopt;
}

[[nodiscard]] inline dtype kit_dtype(at::ScalarType s, const std::string& where) {
    for (const dtype d : {dtype::f16, dtype::bf16, dtype::f32, dtype::f64, dtype::i8, dtype::i16, dtype::i32, dtype::i64, dtype::u8,
                          dtype::boolean}) {
        if (scalar_type(d) == s) return d;
    }
    throw error(where, std::string("torch returned a tensor of type ") + c10::toString(s) + ", which has no ONNX counterpart here");
}

/// The ONNX TensorProto type number of an attribute tensor's element type.
[[nodiscard]] inline at::ScalarType scalar_type_of_onnx(std::int64_t onnx, const std::string& where) {
    for (std::size_t i = 0; i < dtype_count; ++i) {
        const auto d = static_cast<dtype>(i);
        if (info(d).onnx_type == onnx) return *scalar_type(d);
    }
    throw unsupported_error(where, "ONNX element type " + std::to_string(onnx) + " has no torch counterpart here");
}

/// Tensors made from data (constants, shapes) are made outside the JIT tracer: it would
/// record the allocation but not the bytes written into it. Untraced, a tensor the
/// traced program reads becomes a constant of the traced graph.
template <class F>
[[nodiscard]] Tensor untraced(F make) {
    at::tracer::impl::NoTracerDispatchMode guard;
    return make();
}

[[nodiscard]] inline Tensor to_torch(const tensor& t) {
    at::tracer::impl::NoTracerDispatchMode guard;
    const auto s = scalar_type(t.element_dtype());
    std::vector<std::int64_t> sizes(t.shape().begin(), t.shape().end());
    const auto bytes = t.to_bytes();
    auto out = at::empty(sizes, at::TensorOptions().dtype(*s));
    if (!bytes.empty()) std::memcpy(out.data_ptr(), bytes.data(), bytes.size());
    return out;
}

[[nodiscard]] inline tensor from_torch(const Tensor& x, const std::string& where) {
    const Tensor c = x.contiguous();
    const dtype d = kit_dtype(c.scalar_type(), where);
    shape_type dims(c.sizes().begin(), c.sizes().end());
    const auto* p = static_cast<const std::byte*>(c.data_ptr());
    return tensor::from_bytes(d, dims, std::span<const std::byte>(p, static_cast<std::size_t>(c.numel()) * c.element_size()));
}

// ---- attributes, with ONNX's defaults ---------------------------------------

struct node_view {
    const graph::node& n;
    std::string where;

    [[nodiscard]] const spec::attribute_value* find(std::string_view k) const {
        auto it = n.attributes.find(k);
        return it == n.attributes.end() ? nullptr : &it->second;
    }
    [[nodiscard]] std::int64_t i(std::string_view k, std::int64_t def) const {
        const auto* v = find(k);
        if (!v) return def;
        if (const auto* x = std::get_if<std::int64_t>(v)) return *x;
        throw error(where, "attribute '" + std::string(k) + "' is not an int");
    }
    [[nodiscard]] double f(std::string_view k, double def) const {
        const auto* v = find(k);
        if (!v) return def;
        if (const auto* x = std::get_if<double>(v)) return *x;
        throw error(where, "attribute '" + std::string(k) + "' is not a float");
    }
    [[nodiscard]] std::string s(std::string_view k, std::string def) const {
        const auto* v = find(k);
        if (!v) return def;
        if (const auto* x = std::get_if<std::string>(v)) return *x;
        throw error(where, "attribute '" + std::string(k) + "' is not a string");
    }
    [[nodiscard]] std::optional<std::vector<std::int64_t>> ints(std::string_view k) const {
        const auto* v = find(k);
        if (!v) return std::nullopt;
        if (const auto* x = std::get_if<std::vector<std::int64_t>>(v)) return *x;
        if (const auto* x = std::get_if<std::int64_t>(v)) return std::vector<std::int64_t>{*x};
        throw error(where, "attribute '" + std::string(k) + "' is not a list of ints");
    }
    [[noreturn]] void refuse(const std::string& why) const { throw unsupported_error(where, why); }
};

[[nodiscard]] inline bool present(const tensors& in, std::size_t k) { return k < in.size() && in[k].defined(); }

[[nodiscard]] inline std::vector<std::int64_t> int_values(const Tensor& t) {
    const Tensor c = t.to(at::kLong).contiguous();
    return {c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel()};
}

[[nodiscard]] inline std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank, const node_view& v) {
    const std::int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= std::max<std::int64_t>(rank, 1)) throw error(v.where, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
    return a;
}

[[nodiscard]] inline bool is_float(const Tensor& t) { return at::isFloatingType(t.scalar_type()); }

// ---- the op table -----------------------------------------------------------

using op_fn = std::function<tensors(const tensors&, const node_view&)>;

namespace detail {

template <class F>
op_fn unary(F f) {
    return [f](const tensors& in, const node_view&) {
        Tensor y = f(in[0]);
        // ONNX keeps an integer input's type (Erf-13 of int8 is int8); ATen promotes to float32,
        // whose rounding (erf(4) == 1.0f) would change the truncated integer: compute in double.
        if (!is_float(in[0]) && is_float(y)) y = f(in[0].to(at::kDouble)).to(in[0].scalar_type());
        return tensors{y};
    };
}
template <class F>
op_fn binary(F f) {
    return [f](const tensors& in, const node_view&) { return tensors{f(in[0], in[1])}; };
}
template <class F>
op_fn variadic(F f) {
    return [f](const tensors& in, const node_view&) {
        Tensor y = in[0];
        for (std::size_t k = 1; k < in.size(); ++k) y = f(y, in[k]);
        if (in.size() == 1) y = y.clone();
        return tensors{y};
    };
}

/// Reduce*: axes from the attribute (opset < 18; ReduceSum from 13 takes them as input).
inline op_fn reduction(std::function<Tensor(const Tensor&, std::vector<std::int64_t>, bool)> f, bool integer_ok = true) {
    return [f, integer_ok](const tensors& in, const node_view& v) {
        if (!integer_ok && !is_float(in[0])) v.refuse("this reduction has no integer kernel in ATen (it refuses to infer an output type)");
        std::vector<std::int64_t> axes;
        bool have_axes = false;
        if (present(in, 1)) {
            axes = int_values(in[1]);
            have_axes = !axes.empty();
        } else if (auto a = v.ints("axes")) {
            axes = *a;
            have_axes = !axes.empty();
        }
        const bool keep = v.i("keepdims", 1) != 0;
        if (!have_axes) {
            if (v.i("noop_with_empty_axes", 0) != 0) return tensors{in[0].clone()};
            for (std::int64_t d = 0; d < in[0].dim(); ++d) axes.push_back(d);
        }
        for (auto& a : axes) a = normalize_axis(a, in[0].dim(), v);
        std::sort(axes.begin(), axes.end());
        // ATen sums integers into int64; ONNX keeps the type (wrapping).
        return tensors{f(in[0], axes, keep).to(in[0].scalar_type())};
    };
}

/// Spatial pads [b1, b2, ..., e1, e2, ...] from `pads` or `auto_pad`, for windows of
/// `effective` size (kernel dilated) and `strides`.
inline std::vector<std::int64_t> spatial_pads(const Tensor& x, const std::vector<std::int64_t>& effective, const std::vector<std::int64_t>& strides,
                                              const node_view& v) {
    const std::size_t r = effective.size();
    const std::string auto_pad = v.s("auto_pad", "NOTSET");
    std::vector<std::int64_t> pads(2 * r, 0);
    if (auto_pad == "NOTSET") {
        if (auto p = v.ints("pads")) {
            if (p->size() != 2 * r) throw error(v.where, "pads has " + std::to_string(p->size()) + " values for " + std::to_string(r) + " spatial axes");
            pads = *p;
        }
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        for (std::size_t k = 0; k < r; ++k) {
            const std::int64_t in = x.size(static_cast<std::int64_t>(k + 2));
            const std::int64_t out = (in + strides[k] - 1) / strides[k];
            const std::int64_t total = std::max<std::int64_t>((out - 1) * strides[k] + effective[k] - in, 0);
            const std::int64_t small = total / 2;
            pads[k] = auto_pad == "SAME_UPPER" ? small : total - small;
            pads[k + r] = total - pads[k];
        }
    } else if (auto_pad != "VALID") {
        throw error(v.where, "auto_pad '" + auto_pad + "' is not an ONNX value");
    }
    return pads;
}

/// at::constant_pad_nd's order: last axis first, (begin, end) pairs.
inline std::vector<std::int64_t> torch_pad_order(const std::vector<std::int64_t>& pads, std::size_t axes_before) {
    const std::size_t r = pads.size() / 2;
    std::vector<std::int64_t> p;
    for (std::size_t k = r; k-- > 0;) {
        p.push_back(pads[k]);
        p.push_back(pads[k + r]);
    }
    for (std::size_t k = 0; k < axes_before; ++k) {
        p.push_back(0);
        p.push_back(0);
    }
    return p;
}

/// ONNX-ordered pads (negative: crop) applied as ONNX means them: ONNX lets a crop on one side
/// exceed the axis when the other side pads it back (begin -43, end +44 on an axis of 1), while
/// at::constant_pad_nd crops first and refuses. Padding first, then cropping, is the same map.
inline Tensor pad_then_crop(const Tensor& x, const std::vector<std::int64_t>& pads, double value) {
    std::vector<std::int64_t> grow(pads), shrink(pads);
    for (auto& p : grow) p = std::max<std::int64_t>(p, 0);
    for (auto& p : shrink) p = std::min<std::int64_t>(p, 0);
    const std::size_t before = static_cast<std::size_t>(x.dim()) - pads.size() / 2;
    const Tensor grown = at::constant_pad_nd(x, torch_pad_order(grow, before), value);
    return at::constant_pad_nd(grown, torch_pad_order(shrink, before), value);
}

inline bool symmetric(const std::vector<std::int64_t>& pads) {
    const std::size_t r = pads.size() / 2;
    for (std::size_t k = 0; k < r; ++k) {
        if (pads[k] != pads[k + r]) return false;
    }
    return true;
}

inline std::vector<std::int64_t> kernel_of(const node_view& v) {
    auto k = v.ints("kernel_shape");
    if (!k) throw error(v.where, "kernel_shape is required");
    return *k;
}

/// A per-spatial-axis attribute (strides, dilations), ones when absent; a list of another
/// length is an invalid model, refused with a message rather than read out of bounds.
inline std::vector<std::int64_t> per_axis(const node_view& v, std::string_view name, std::size_t r) {
    auto a = v.ints(name);
    if (!a) return std::vector<std::int64_t>(r, 1);
    if (a->size() != r) {
        throw error(v.where, "attribute '" + std::string(name) + "' has " + std::to_string(a->size()) + " values for " + std::to_string(r) + " spatial axes");
    }
    return *a;
}

inline Tensor pool_max(const Tensor& x, const std::vector<std::int64_t>& k, const std::vector<std::int64_t>& s, const std::vector<std::int64_t>& p,
                       const std::vector<std::int64_t>& d, bool ceil) {
    switch (k.size()) {
        case 1: return at::max_pool1d(x, k, s, p, d, ceil);
        case 2: return at::max_pool2d(x, k, s, p, d, ceil);
        default: return at::max_pool3d(x, k, s, p, d, ceil);
    }
}

inline tensors max_pool(const tensors& in, const node_view& v, std::size_t outputs) {
    const Tensor& x = in[0];
    const auto k = kernel_of(v);
    const std::size_t r = k.size();
    if (r < 1 || r > 3 || x.dim() != static_cast<std::int64_t>(r) + 2) v.refuse("ATen's max pools take 1 to 3 spatial axes");
    const auto s = per_axis(v, "strides", r);
    const auto d = per_axis(v, "dilations", r);
    std::vector<std::int64_t> eff(r);
    for (std::size_t a = 0; a < r; ++a) eff[a] = (k[a] - 1) * d[a] + 1;
    const auto pads = spatial_pads(x, eff, s, v);
    const bool ceil = v.i("ceil_mode", 0) != 0;
    if (v.i("storage_order", 0) != 0) v.refuse("MaxPool storage_order=1 (column-major indices) has no ATen counterpart");
    bool native = symmetric(pads);
    for (std::size_t a = 0; a < r && native; ++a) native = pads[a] * 2 <= k[a];
    if (!is_float(x)) v.refuse("ATen's CPU max pools take floating-point inputs only");
    if (native) {
        const std::vector<std::int64_t> p(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(r));
        if (outputs < 2) return {pool_max(x, k, s, p, d, ceil)};
        std::tuple<Tensor, Tensor> yi;
        if (r == 1) {
            auto y2 = at::max_pool2d_with_indices(x.unsqueeze(2), {1, k[0]}, {1, s[0]}, {0, p[0]}, {1, d[0]}, ceil);
            yi = {std::get<0>(y2).squeeze(2), std::get<1>(y2).squeeze(2)};
        } else if (r == 2) {
            yi = at::max_pool2d_with_indices(x, k, s, p, d, ceil);
        } else {
            yi = at::max_pool3d_with_indices(x, k, s, p, d, ceil);
        }
        // ATen's indices are flat within each (n, c) plane; ONNX's within the tensor.
        const std::int64_t plane = x[0][0].numel();
        const Tensor base = at::arange(x.size(0) * x.size(1), x.options().dtype(at::kLong)).mul(plane);
        std::vector<std::int64_t> bshape{x.size(0), x.size(1)};
        bshape.resize(r + 2, 1);
        return {std::get<0>(yi), std::get<1>(yi) + base.reshape(bshape)};
    }
    // Padding beyond ATen's limits: pad with -inf first (never chosen), then pool without padding.
    if (ceil) v.refuse("MaxPool with ceil_mode and asymmetric or large pads: ATen's rule for a window starting in the padding needs its own padding");
    if (outputs > 1) v.refuse("MaxPool's Indices with asymmetric or large pads (they would index the padded tensor)");
    const Tensor padded = at::constant_pad_nd(x, torch_pad_order(pads, 0), -std::numeric_limits<double>::infinity());
    return {pool_max(padded, k, s, std::vector<std::int64_t>(r, 0), d, false)};
}

inline tensors average_pool(const tensors& in, const node_view& v) {
    const Tensor& x = in[0];
    const auto k = kernel_of(v);
    const std::size_t r = k.size();
    if (r < 1 || r > 3 || x.dim() != static_cast<std::int64_t>(r) + 2) v.refuse("ATen's average pools take 1 to 3 spatial axes");
    if (!is_float(x)) v.refuse("ATen's CPU average pools take floating-point inputs only");
    const auto s = per_axis(v, "strides", r);
    if (auto d = v.ints("dilations"); d && std::any_of(d->begin(), d->end(), [](std::int64_t e) { return e != 1; })) {
        v.refuse("AveragePool dilations (opset 19) have no ATen counterpart");
    }
    const auto pads = spatial_pads(x, k, s, v);
    const bool ceil = v.i("ceil_mode", 0) != 0;
    const bool include = v.i("count_include_pad", 0) != 0;
    bool native = symmetric(pads);
    for (std::size_t a = 0; a < r && native; ++a) native = pads[a] * 2 <= k[a];
    std::vector<std::int64_t> p(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(r));
    Tensor src = x;
    if (!native) {
        // Zero padding counted in the divisor is the same as padding the input with zeros.
        if (!include || ceil) v.refuse("AveragePool with asymmetric or large pads and count_include_pad=0 or ceil_mode");
        src = at::constant_pad_nd(x, torch_pad_order(pads, 0), 0.0);
        std::fill(p.begin(), p.end(), 0);
    }
    switch (r) {
        case 1: return {at::avg_pool1d(src, k, s, p, ceil, include)};
        case 2: return {at::avg_pool2d(src, k, s, p, ceil, include)};
        default: return {at::avg_pool3d(src, k, s, p, ceil, include)};
    }
}

inline tensors conv(const tensors& in, const node_view& v) {
    const Tensor& x = in[0];
    const Tensor& w = in[1];
    const std::size_t r = static_cast<std::size_t>(x.dim()) - 2;
    if (x.dim() < 3 || x.dim() > 5) v.refuse("ATen's convolution takes 1 to 3 spatial axes");
    if (w.dim() != x.dim()) throw error(v.where, "the weight's rank differs from the input's");
    std::vector<std::int64_t> k(r);
    for (std::size_t a = 0; a < r; ++a) k[a] = w.size(static_cast<std::int64_t>(a) + 2);
    const auto s = per_axis(v, "strides", r);
    const auto d = per_axis(v, "dilations", r);
    std::vector<std::int64_t> eff(r);
    for (std::size_t a = 0; a < r; ++a) eff[a] = (k[a] - 1) * d[a] + 1;
    const auto pads = spatial_pads(x, eff, s, v);
    const Tensor b = present(in, 2) ? in[2] : Tensor();
    const std::int64_t group = v.i("group", 1);
    if (symmetric(pads)) {
        const std::vector<std::int64_t> p(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(r));
        return {at::convolution(x, w, b, s, p, d, false, std::vector<std::int64_t>(r, 0), group)};
    }
    const Tensor padded = at::constant_pad_nd(x, torch_pad_order(pads, 0), 0.0);
    return {at::convolution(padded, w, b, s, std::vector<std::int64_t>(r, 0), d, false, std::vector<std::int64_t>(r, 0), group)};
}

inline tensors conv_transpose(const tensors& in, const node_view& v) {
    const Tensor& x = in[0];
    const Tensor& w = in[1];
    if (x.dim() < 3 || x.dim() > 5) v.refuse("ATen's transposed convolution takes 1 to 3 spatial axes");
    const std::size_t r = static_cast<std::size_t>(x.dim()) - 2;
    if (v.s("auto_pad", "NOTSET") != "NOTSET" && v.s("auto_pad", "NOTSET") != "VALID") v.refuse("ConvTranspose auto_pad SAME_*: no exact mapping written");
    if (v.ints("output_shape")) v.refuse("ConvTranspose output_shape: no exact mapping written");
    const auto s = per_axis(v, "strides", r);
    const auto d = per_axis(v, "dilations", r);
    std::vector<std::int64_t> pads(2 * r, 0), outpad(r, 0);
    if (auto p = v.ints("pads"); p && v.s("auto_pad", "NOTSET") == "NOTSET") pads = *p;
    if (v.ints("output_padding")) outpad = per_axis(v, "output_padding", r);
    if (pads.size() != 2 * r) throw error(v.where, "pads has " + std::to_string(pads.size()) + " values for " + std::to_string(r) + " spatial axes");
    const std::int64_t group = v.i("group", 1);
    // Full transposed convolution, then ONNX's output_padding (zeros at the end) and pads (cropping), then the bias.
    Tensor y = at::convolution(x, w, Tensor(), s, std::vector<std::int64_t>(r, 0), d, true, std::vector<std::int64_t>(r, 0), group);
    std::vector<std::int64_t> crop(2 * r);
    for (std::size_t a = 0; a < r; ++a) {
        crop[a] = -pads[a];
        crop[a + r] = outpad[a] - pads[a + r];
    }
    y = pad_then_crop(y, crop, 0.0);
    if (present(in, 2)) {
        std::vector<std::int64_t> bshape(r + 2, 1);
        bshape[1] = in[2].size(0);
        y = y + in[2].reshape(bshape);
    }
    return {y};
}

/// Resize (opset 11-13 inputs X, roi, scales, sizes) where ATen's upsampling computes ONNX's
/// formula: nearest with asymmetric coordinates and floor (ATen's `nearest`); linear (1-3
/// spatial axes) and cubic (2) with half_pixel (align_corners=false: ATen's source index
/// (dst + 0.5) / scale - 0.5, clamped at 0 for linear, which the edge padding of ONNX's taps
/// gives too), align_corners, or pytorch_half_pixel when no output axis has length 1 (then it is
/// half_pixel). Scales on the batch and channel axes must be 1. Anything else is refused.
inline tensors resize(const tensors& in, const node_view& v) {
    const Tensor& x = in[0];
    const std::int64_t r = x.dim() - 2;
    if (r < 1 || r > 3) v.refuse("Resize of rank " + std::to_string(x.dim()) + ": ATen upsamples 1 to 3 spatial axes of (N, C, ...)");
    std::vector<double> scales;
    std::vector<std::int64_t> sizes;
    if (present(in, 3) && in[3].numel() > 0) {
        sizes = int_values(in[3]);
    } else if (present(in, 2) && in[2].numel() > 0) {
        const Tensor sc = in[2].to(at::kDouble).contiguous();
        scales.assign(sc.data_ptr<double>(), sc.data_ptr<double>() + sc.numel());
        if (static_cast<std::int64_t>(scales.size()) != x.dim()) throw error(v.where, "Resize's scales do not match the rank");
        for (std::int64_t a = 0; a < x.dim(); ++a) {
            sizes.push_back(static_cast<std::int64_t>(std::floor(scales[static_cast<std::size_t>(a)] * static_cast<double>(x.size(a)))));
        }
    } else {
        throw error(v.where, "Resize needs scales or sizes");
    }
    if (static_cast<std::int64_t>(sizes.size()) != x.dim()) throw error(v.where, "Resize's scales or sizes do not match the rank");
    if (sizes[0] != x.size(0) || sizes[1] != x.size(1)) v.refuse("Resize of the batch or channel axis: ATen upsamples spatial axes only");
    if (!scales.empty() && (scales[0] != 1.0 || scales[1] != 1.0)) v.refuse("Resize with a scale other than 1 on the batch or channel axis");
    const std::vector<std::int64_t> out(sizes.begin() + 2, sizes.end());
    // ATen's per-axis scales are ONNX's scales when given (the coordinate map uses 1/scale).
    const auto sc = [&](std::int64_t a) { return scales.empty() ? c10::optional<double>() : c10::optional<double>(scales[static_cast<std::size_t>(a + 2)]); };
    const std::string mode = v.s("mode", "nearest"), ctm = v.s("coordinate_transformation_mode", "half_pixel");
    if (v.i("exclude_outside", 0) != 0) v.refuse("Resize exclude_outside=1");
    if (mode == "nearest") {
        if (ctm != "asymmetric" || v.s("nearest_mode", "round_prefer_floor") != "floor") {
            v.refuse("Resize nearest with " + ctm + " coordinates and nearest_mode " + v.s("nearest_mode", "round_prefer_floor") +
                     ": ATen's nearest is asymmetric with floor");
        }
        if (r == 1) return {at::upsample_nearest1d(x, out, sc(0))};
        if (r == 2) return {at::upsample_nearest2d(x, out, sc(0), sc(1))};
        return {at::upsample_nearest3d(x, out, sc(0), sc(1), sc(2))};
    }
    bool align = false;
    if (ctm == "align_corners") {
        align = true;
        // ONNX (1.12's reference, the test data) maps by (in - 1) / (scale * in - 1), the real
        // resized length; ATen by (in - 1) / (out - 1): the same only when scale * in is whole.
        for (std::int64_t a = 0; a < r && !scales.empty(); ++a) {
            const double len = scales[static_cast<std::size_t>(a + 2)] * static_cast<double>(x.size(a + 2));
            if (len != std::floor(len)) v.refuse("Resize align_corners with a scale whose resized length is not whole");
        }
    } else if (ctm == "pytorch_half_pixel") {
        if (std::any_of(out.begin(), out.end(), [](std::int64_t d) { return d == 1; })) v.refuse("Resize pytorch_half_pixel to an axis of length 1");
    } else if (ctm != "half_pixel") {
        v.refuse("Resize " + mode + " with " + ctm + " coordinates");
    }
    // With align_corners ATen ignores the scales (the map is (in - 1) / (out - 1)), as ONNX does.
    if (mode == "linear") {
        if (r == 1) return {at::upsample_linear1d(x, out, align, sc(0))};
        if (r == 2) return {at::upsample_bilinear2d(x, out, align, sc(0), sc(1))};
        return {at::upsample_trilinear3d(x, out, align, sc(0), sc(1), sc(2))};
    }
    if (mode == "cubic") {
        if (r != 2) v.refuse("Resize cubic on " + std::to_string(r) + " spatial axes: ATen's bicubic takes 2");
        if (v.f("cubic_coeff_a", -0.75) != -0.75) v.refuse("Resize cubic_coeff_a other than ATen's -0.75");
        return {at::upsample_bicubic2d(x, out, align, sc(0), sc(1))};
    }
    throw error(v.where, "Resize mode '" + mode + "' is not an ONNX value");
}

inline Tensor cast_to(const Tensor& x, at::ScalarType t) { return x.scalar_type() == t ? x.clone() : x.to(t); }

/// The mapping of the op spec Op.
template <class Op>
ops::keyed<Op, op_fn> lower(op_fn f) {
    return {std::move(f)};
}

}  // namespace detail

// An ATen function as a callable (they are overloaded: no function pointers).
#define TENSORACLE_AT1(f) [](const Tensor& a_) { return at::f(a_); }
#define TENSORACLE_AT2(f) [](const Tensor& a_, const Tensor& b_) { return at::f(a_, b_); }

/// ONNX op -> ATen, keyed by the kit's op spec type (its op_type is the
/// node's), for the ops of the registry that map exactly.
inline auto lowerings() {
    using namespace detail;
    // ArgMax, ArgMin
    const auto arg = [](bool max) {
        return [max](const tensors& in, const node_view& v) {
            const Tensor& x = in[0];
            const std::int64_t axis = normalize_axis(v.i("axis", 0), x.dim(), v);
            const bool keep = v.i("keepdims", 1) != 0;
            if (v.i("select_last_index", 0) == 0) return tensors{max ? at::argmax(x, axis, keep) : at::argmin(x, axis, keep)};
            const Tensor f = at::flip(x, {axis});
            const Tensor i = max ? at::argmax(f, axis, keep) : at::argmin(f, axis, keep);
            return tensors{(x.size(axis) - 1) - i};
        };
    };
    return hana::make_tuple(
        // element-wise, one input
        lower<ops::Abs>(unary(TENSORACLE_AT1(abs))),
        lower<ops::Neg>(unary(TENSORACLE_AT1(neg))),
        lower<ops::Sign>(unary(TENSORACLE_AT1(sign))),
        lower<ops::Ceil>(unary(TENSORACLE_AT1(ceil))),
        lower<ops::Floor>(unary(TENSORACLE_AT1(floor))),
        lower<ops::Round>(unary(TENSORACLE_AT1(round))),  // half to even, as ONNX
        lower<ops::Exp>(unary(TENSORACLE_AT1(exp))),
        lower<ops::Log>(unary(TENSORACLE_AT1(log))),
        lower<ops::Sqrt>(unary(TENSORACLE_AT1(sqrt))),
        lower<ops::Reciprocal>(unary(TENSORACLE_AT1(reciprocal))),
        lower<ops::Sigmoid>(unary(TENSORACLE_AT1(sigmoid))),
        lower<ops::Tanh>(unary(TENSORACLE_AT1(tanh))),
        lower<ops::Erf>(unary(TENSORACLE_AT1(erf))),
        lower<ops::Sin>(unary(TENSORACLE_AT1(sin))),
        lower<ops::Cos>(unary(TENSORACLE_AT1(cos))),
        lower<ops::Tan>(unary(TENSORACLE_AT1(tan))),
        lower<ops::Asin>(unary(TENSORACLE_AT1(asin))),
        lower<ops::Acos>(unary(TENSORACLE_AT1(acos))),
        lower<ops::Atan>(unary(TENSORACLE_AT1(atan))),
        lower<ops::Sinh>(unary(TENSORACLE_AT1(sinh))),
        lower<ops::Cosh>(unary(TENSORACLE_AT1(cosh))),
        lower<ops::Asinh>(unary(TENSORACLE_AT1(asinh))),
        lower<ops::Acosh>(unary(TENSORACLE_AT1(acosh))),
        lower<ops::Atanh>(unary(TENSORACLE_AT1(atanh))),
        lower<ops::Relu>(unary(TENSORACLE_AT1(relu))),
        lower<ops::HardSwish>(unary(TENSORACLE_AT1(hardswish))),
        lower<ops::IsNaN>(unary(TENSORACLE_AT1(isnan))),
        lower<ops::Not>(unary(TENSORACLE_AT1(logical_not))),
        lower<ops::Identity>([](const tensors& in, const node_view&) { return tensors{in[0].clone()}; }),
        lower<ops::Softplus>([](const tensors& in, const node_view&) {
            // ln(exp(x) + 1); ATen switches to x above `threshold`, so put it where exp overflows and ln(exp(x)+1) == x.
            const double threshold = in[0].scalar_type() == at::kDouble ? 700.0 : 80.0;
            return tensors{at::softplus(in[0], 1.0, threshold)};
        }),
        lower<ops::Softsign>([](const tensors& in, const node_view&) { return tensors{in[0] / (at::abs(in[0]) + 1)}; }),
        lower<ops::IsInf>([](const tensors& in, const node_view& v) {
            const bool neg = v.i("detect_negative", 1) != 0, pos = v.i("detect_positive", 1) != 0;
            if (neg && pos) return tensors{at::isinf(in[0])};
            if (neg) return tensors{at::isneginf(in[0])};
            if (pos) return tensors{at::isposinf(in[0])};
            return tensors{at::zeros_like(in[0], in[0].options().dtype(at::kBool))};
        }),
        lower<ops::LeakyRelu>([](const tensors& in, const node_view& v) { return tensors{at::leaky_relu(in[0], v.f("alpha", 0.01))}; }),
        lower<ops::Elu>([](const tensors& in, const node_view& v) { return tensors{at::elu(in[0], v.f("alpha", 1.0))}; }),
        lower<ops::Celu>([](const tensors& in, const node_view& v) { return tensors{at::celu(in[0], v.f("alpha", 1.0))}; }),
        lower<ops::Selu>([](const tensors& in, const node_view& v) {
            const double alpha = v.f("alpha", 1.67326319217681884765625), gamma = v.f("gamma", 1.05070102214813232421875);
            return tensors{at::where(in[0] > 0, in[0] * gamma, (at::exp(in[0]) * alpha - alpha) * gamma)};
        }),
        lower<ops::HardSigmoid>([](const tensors& in, const node_view& v) {
            return tensors{at::clamp(in[0] * v.f("alpha", 0.2) + v.f("beta", 0.5), 0.0, 1.0)};
        }),
        lower<ops::ThresholdedRelu>([](const tensors& in, const node_view& v) {
            return tensors{at::where(in[0] > v.f("alpha", 1.0), in[0], at::zeros_like(in[0]))};
        }),
        lower<ops::Shrink>([](const tensors& in, const node_view& v) {
            const double lambd = v.f("lambd", 0.5), bias = v.f("bias", 0.0);
            const Tensor x = is_float(in[0]) ? in[0] : in[0].to(at::kDouble);  // integers: bias is a float
            const Tensor y = at::where(x < -lambd, x + bias, at::where(x > lambd, x - bias, at::zeros_like(x)));
            return tensors{y.to(in[0].scalar_type())};
        }),
        lower<ops::Cast>([](const tensors& in, const node_view& v) { return tensors{cast_to(in[0], scalar_type_of_onnx(v.i("to", 1), v.where))}; }),
        lower<ops::CastLike>([](const tensors& in, const node_view&) { return tensors{cast_to(in[0], in[1].scalar_type())}; }),
        lower<ops::Dropout>([](const tensors& in, const node_view& v) {
            if (present(in, 2) && int_values(in[2]).at(0) != 0) v.refuse("Dropout in training mode is random");
            return tensors{in[0].clone(), at::ones_like(in[0], in[0].options().dtype(at::kBool))};
        }),
        // element-wise, two or more inputs (ONNX's broadcasting is ATen's)
        lower<ops::Add>(binary(TENSORACLE_AT2(add))),
        lower<ops::Sub>(binary(TENSORACLE_AT2(sub))),
        lower<ops::Mul>(binary(TENSORACLE_AT2(mul))),
        lower<ops::Div>([](const tensors& in, const node_view&) {
            return tensors{is_float(in[0]) ? at::div(in[0], in[1]) : at::div(in[0], in[1], "trunc")};
        }),
        lower<ops::Mod>([](const tensors& in, const node_view& v) {
            return tensors{v.i("fmod", 0) != 0 ? at::fmod(in[0], in[1]) : at::remainder(in[0], in[1])};
        }),
        lower<ops::Pow>([](const tensors& in, const node_view&) {
            const Tensor &a = in[0], &b = in[1];
            if (a.scalar_type() == b.scalar_type()) return tensors{at::pow(a, b)};
            // A float32 exponent rounded to a bfloat16 base's type would change the power (by 16%
            // at 2^100): compute in the wider of the two, round once to the base's type.
            if (is_float(a) && is_float(b)) {
                const auto wide = at::promote_types(a.scalar_type(), b.scalar_type());
                return tensors{at::pow(a.to(wide), b.to(wide)).to(a.scalar_type())};
            }
            if (is_float(a)) return tensors{at::pow(a, b.to(a.scalar_type()))};
            return tensors{at::pow(a.to(at::kDouble), b.to(at::kDouble)).to(a.scalar_type())};
        }),
        lower<ops::Equal>(binary(TENSORACLE_AT2(eq))),
        lower<ops::Greater>(binary(TENSORACLE_AT2(gt))),
        lower<ops::GreaterOrEqual>(binary(TENSORACLE_AT2(ge))),
        lower<ops::Less>(binary(TENSORACLE_AT2(lt))),
        lower<ops::LessOrEqual>(binary(TENSORACLE_AT2(le))),
        lower<ops::And>(binary(TENSORACLE_AT2(logical_and))),
        lower<ops::Or>(binary(TENSORACLE_AT2(logical_or))),
        lower<ops::Xor>(binary(TENSORACLE_AT2(logical_xor))),
        lower<ops::Max>(variadic(TENSORACLE_AT2(maximum))),
        lower<ops::Min>(variadic(TENSORACLE_AT2(minimum))),
        lower<ops::Sum>(variadic(TENSORACLE_AT2(add))),
        lower<ops::Mean>([](const tensors& in, const node_view& v) {
            Tensor y = variadic(TENSORACLE_AT2(add))(in, v)[0];
            return tensors{y / static_cast<double>(in.size())};
        }),
        lower<ops::Where>([](const tensors& in, const node_view&) { return tensors{at::where(in[0], in[1], in[2])}; }),
        lower<ops::PRelu>([](const tensors& in, const node_view&) { return tensors{at::where(in[0] < 0, in[0] * in[1], in[0])}; }),
        lower<ops::Clip>([](const tensors& in, const node_view&) {
            // The bounds are scalars: as tensors ATen would broadcast a one-element bound into x's shape.
            const c10::optional<Tensor> lo = present(in, 1) ? c10::optional<Tensor>(in[1].reshape({})) : c10::nullopt;
            const c10::optional<Tensor> hi = present(in, 2) ? c10::optional<Tensor>(in[2].reshape({})) : c10::nullopt;
            if (!lo && !hi) return tensors{in[0].clone()};
            return tensors{at::clamp(in[0], lo, hi)};
        }),
        // reductions and normalizations
        lower<ops::ReduceSum>(reduction([](const Tensor& x, std::vector<std::int64_t> a, bool k) { return at::sum(x, a, k); })),
        lower<ops::ReduceMean>(reduction([](const Tensor& x, std::vector<std::int64_t> a, bool k) { return at::mean(x, a, k); }, false)),
        lower<ops::ReduceMax>(reduction([](const Tensor& x, std::vector<std::int64_t> a, bool k) { return at::amax(x, a, k); })),
        lower<ops::ReduceMin>(reduction([](const Tensor& x, std::vector<std::int64_t> a, bool k) { return at::amin(x, a, k); })),
        lower<ops::ReduceSumSquare>(reduction([](const Tensor& x, std::vector<std::int64_t> a, bool k) { return at::sum(x * x, a, k); })),
        lower<ops::ReduceL1>(reduction([](const Tensor& x, std::vector<std::int64_t> a, bool k) { return at::sum(at::abs(x), a, k); })),
        lower<ops::ReduceL2>(reduction([](const Tensor& x, std::vector<std::int64_t> a, bool k) { return at::sqrt(at::sum(x * x, a, k)); }, false)),
        lower<ops::ReduceLogSum>(reduction([](const Tensor& x, std::vector<std::int64_t> a, bool k) { return at::log(at::sum(x, a, k)); }, false)),
        lower<ops::ReduceLogSumExp>(reduction([](const Tensor& x, std::vector<std::int64_t> a, bool k) { return at::logsumexp(x, a, k); }, false)),
        lower<ops::ReduceProd>(reduction([](const Tensor& x, std::vector<std::int64_t> a, bool k) {
            Tensor y = x;
            for (auto it = a.rbegin(); it != a.rend(); ++it) y = at::prod(y, *it, k);
            return a.empty() ? x.clone() : y;
        })),
        lower<ops::ArgMax>(arg(true)),
        lower<ops::ArgMin>(arg(false)),
        lower<ops::Softmax>([](const tensors& in, const node_view& v) {
            return tensors{at::softmax(in[0], normalize_axis(v.i("axis", -1), in[0].dim(), v))};
        }),
        lower<ops::LogSoftmax>([](const tensors& in, const node_view& v) {
            return tensors{at::log_softmax(in[0], normalize_axis(v.i("axis", -1), in[0].dim(), v))};
        }),
        lower<ops::Hardmax>([](const tensors& in, const node_view& v) {
            const std::int64_t axis = normalize_axis(v.i("axis", -1), in[0].dim(), v);
            const Tensor i = at::argmax(in[0], axis, true);  // the first maximum, as ONNX
            return tensors{at::zeros_like(in[0]).scatter(axis, i, 1)};
        }),
        lower<ops::BatchNormalization>([](const tensors& in, const node_view& v) {
            if (v.i("training_mode", 0) != 0) v.refuse("BatchNormalization training_mode=1");
            const auto t = in[0].scalar_type();
            bool same = true;
            for (std::size_t k = 1; k < 5; ++k) same = same && in[k].scalar_type() == t;
            if (same) return tensors{at::batch_norm(in[0], in[1], in[2], in[3], in[4], false, v.f("momentum", 0.9), v.f("epsilon", 1e-5), false)};
            // ONNX lets scale/B and mean/var take other float types; ATen wants one: compute in the
            // widest of them and round once to X's type.
            at::ScalarType wide = t;
            for (std::size_t k = 1; k < 5; ++k) wide = at::promote_types(wide, in[k].scalar_type());
            tensors w;
            for (std::size_t k = 0; k < 5; ++k) w.push_back(in[k].to(wide));
            return tensors{at::batch_norm(w[0], w[1], w[2], w[3], w[4], false, v.f("momentum", 0.9), v.f("epsilon", 1e-5), false).to(t)};
        }),
        lower<ops::InstanceNormalization>([](const tensors& in, const node_view& v) {
            return tensors{at::instance_norm(in[0], in[1], in[2], Tensor(), Tensor(), true, 0.1, v.f("epsilon", 1e-5), false)};
        }),
        lower<ops::LayerNormalization>([](const tensors& in, const node_view& v) {
            const Tensor& x = in[0];
            const std::int64_t axis = normalize_axis(v.i("axis", -1), x.dim(), v);
            std::vector<std::int64_t> normalized(x.sizes().begin() + axis, x.sizes().end());
            if (v.i("stash_type", 1) != 1 && x.scalar_type() != at::kFloat) v.refuse("LayerNormalization stash_type other than float32");
            const Tensor scale = in[1].expand(normalized).contiguous();
            const Tensor bias = present(in, 2) ? in[2].expand(normalized).contiguous() : Tensor();
            auto [y, mean, rstd] = at::native_layer_norm(x, normalized, scale, bias, v.f("epsilon", 1e-5));
            return tensors{y, mean.to(at::kFloat), rstd.to(at::kFloat)};  // Mean, InvStdDev: the stash type
        }),
        lower<ops::LpNormalization>([](const tensors& in, const node_view& v) {
            const std::int64_t axis = normalize_axis(v.i("axis", -1), in[0].dim(), v);
            const std::int64_t p = v.i("p", 2);
            if (p != 1 && p != 2) throw error(v.where, "p must be 1 or 2");
            return tensors{in[0] / at::norm(in[0], static_cast<double>(p), {axis}, true)};
        }),
        lower<ops::LRN>([](const tensors& in, const node_view& v) {
            // y = x / (bias + alpha / size * sum of squares over channels [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta
            const Tensor& x = in[0];
            const std::int64_t size = v.i("size", 0);
            if (size < 1) throw error(v.where, "size must be positive");
            const std::int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
            std::vector<std::int64_t> pad(static_cast<std::size_t>(2 * (x.dim() - 2)), 0);
            pad.push_back(lo);
            pad.push_back(hi);
            const Tensor sq = at::constant_pad_nd(x * x, pad, 0.0);
            Tensor sum = at::zeros_like(x);
            for (std::int64_t o = 0; o < size; ++o) sum = sum + sq.narrow(1, o, x.size(1));
            return tensors{x / at::pow(sum * (v.f("alpha", 1e-4) / static_cast<double>(size)) + v.f("bias", 1.0), v.f("beta", 0.75))};
        }),
        lower<ops::GlobalAveragePool>([](const tensors& in, const node_view&) {
            std::vector<std::int64_t> axes;
            for (std::int64_t d = 2; d < in[0].dim(); ++d) axes.push_back(d);
            return tensors{at::mean(in[0], axes, true)};
        }),
        lower<ops::GlobalMaxPool>([](const tensors& in, const node_view&) {
            std::vector<std::int64_t> axes;
            for (std::int64_t d = 2; d < in[0].dim(); ++d) axes.push_back(d);
            return tensors{at::amax(in[0], axes, true)};
        }),
        lower<ops::MaxPool>([](const tensors& in, const node_view& v) { return max_pool(in, v, v.n.outputs.size() > 1 && !v.n.outputs[1].empty() ? 2 : 1); }),
        lower<ops::AveragePool>(average_pool),
        lower<ops::Conv>(conv),
        lower<ops::Resize>(resize),
        lower<ops::ConvTranspose>(conv_transpose),
        lower<ops::MatMul>(binary(TENSORACLE_AT2(matmul))),
        lower<ops::Gemm>([](const tensors& in, const node_view& v) {
            const Tensor a = v.i("transA", 0) != 0 ? in[0].t() : in[0];
            const Tensor b = v.i("transB", 0) != 0 ? in[1].t() : in[1];
            const double alpha = v.f("alpha", 1.0), beta = v.f("beta", 1.0);
            if (!is_float(in[0]) && (alpha != 1.0 || beta != 1.0)) v.refuse("Gemm on integers with a float alpha or beta (how ONNX rounds the product is not defined)");
            Tensor y = at::mm(a, b);
            if (alpha != 1.0) y = y * alpha;
            if (present(in, 2)) y = y + (beta != 1.0 ? in[2] * beta : in[2]);
            return tensors{y};
        }),
        lower<ops::CumSum>([](const tensors& in, const node_view& v) {
            const std::int64_t axis = normalize_axis(int_values(in[1]).at(0), in[0].dim(), v);
            Tensor x = v.i("reverse", 0) != 0 ? at::flip(in[0], {axis}) : in[0];
            if (v.i("exclusive", 0) != 0) {
                std::vector<std::int64_t> pad(static_cast<std::size_t>(2 * (x.dim() - 1 - axis)), 0);
                pad.push_back(1);
                pad.push_back(-1);
                x = at::constant_pad_nd(x, pad, 0.0);
            }
            Tensor y = at::cumsum(x, axis, x.scalar_type());
            return tensors{v.i("reverse", 0) != 0 ? at::flip(y, {axis}) : y};
        }),
        lower<ops::TopK>([](const tensors& in, const node_view& v) {
            const std::int64_t axis = normalize_axis(v.i("axis", -1), in[0].dim(), v);
            // ONNX orders equal elements by index; at::topk promises no order among ties (it returned
            // index 2 before 0 for a tie): a stable sort, cut at k, is the exact mapping.
            const std::int64_t k = int_values(in[1]).at(0);
            auto [values, indices] = at::sort(in[0], true, axis, v.i("largest", 1) != 0);
            return tensors{values.narrow(axis, 0, k).contiguous(), indices.narrow(axis, 0, k).contiguous()};
        }),
        // shapes and data movement
        lower<ops::Shape>([](const tensors& in, const node_view& v) {
            const std::int64_t r = in[0].dim();
            std::int64_t b = v.i("start", 0), e = v.i("end", r);
            b = std::clamp<std::int64_t>(b < 0 ? b + r : b, 0, r);
            e = std::clamp<std::int64_t>(e < 0 ? e + r : e, 0, r);
            std::vector<std::int64_t> dims(in[0].sizes().begin() + b, in[0].sizes().begin() + std::max(b, e));
            return tensors{untraced([&] { return at::tensor(dims, at::kLong); })};
        }),
        lower<ops::Size>([](const tensors& in, const node_view&) { return tensors{untraced([&] { return at::scalar_tensor(in[0].numel(), at::kLong); })}; }),
        lower<ops::Reshape>([](const tensors& in, const node_view& v) {
            auto dims = int_values(in[1]);
            if (v.i("allowzero", 0) == 0) {
                for (std::size_t k = 0; k < dims.size(); ++k) {
                    if (dims[k] == 0) dims[k] = in[0].size(static_cast<std::int64_t>(k));
                }
            }
            return tensors{in[0].reshape(dims).clone()};
        }),
        lower<ops::Flatten>([](const tensors& in, const node_view& v) {
            const std::int64_t r = in[0].dim();
            std::int64_t axis = v.i("axis", 1);
            if (axis < 0) axis += r;
            std::int64_t outer = 1;
            for (std::int64_t d = 0; d < axis; ++d) outer *= in[0].size(d);
            return tensors{in[0].reshape({outer, outer == 0 ? 0 : in[0].numel() / std::max<std::int64_t>(outer, 1)}).clone()};
        }),
        lower<ops::Squeeze>([](const tensors& in, const node_view& v) {
            std::vector<std::int64_t> axes = present(in, 1) ? int_values(in[1]) : v.ints("axes").value_or(std::vector<std::int64_t>{});
            if (axes.empty()) return tensors{in[0].squeeze()};
            for (auto& a : axes) a = normalize_axis(a, in[0].dim(), v);
            std::vector<std::int64_t> dims;
            for (std::int64_t d = 0; d < in[0].dim(); ++d) {
                if (std::find(axes.begin(), axes.end(), d) == axes.end()) dims.push_back(in[0].size(d));
            }
            return tensors{in[0].reshape(dims).clone()};
        }),
        lower<ops::Unsqueeze>([](const tensors& in, const node_view& v) {
            std::vector<std::int64_t> axes = present(in, 1) ? int_values(in[1]) : v.ints("axes").value_or(std::vector<std::int64_t>{});
            const std::int64_t r = in[0].dim() + static_cast<std::int64_t>(axes.size());
            for (auto& a : axes) a = normalize_axis(a, r, v);
            std::vector<std::int64_t> dims;
            std::int64_t next = 0;
            for (std::int64_t d = 0; d < r; ++d) dims.push_back(std::find(axes.begin(), axes.end(), d) != axes.end() ? 1 : in[0].size(next++));
            return tensors{in[0].reshape(dims).clone()};
        }),
        lower<ops::Transpose>([](const tensors& in, const node_view& v) {
            std::vector<std::int64_t> perm;
            if (auto p = v.ints("perm")) {
                perm = *p;
            } else {
                for (std::int64_t d = in[0].dim(); d-- > 0;) perm.push_back(d);
            }
            return tensors{in[0].permute(perm).contiguous()};
        }),
        lower<ops::Concat>([](const tensors& in, const node_view& v) {
            return tensors{at::cat(in, normalize_axis(v.i("axis", 0), in[0].dim(), v))};
        }),
        lower<ops::Split>([](const tensors& in, const node_view& v) {
            const std::int64_t axis = normalize_axis(v.i("axis", 0), in[0].dim(), v);
            std::vector<std::int64_t> sizes;
            if (present(in, 1)) {
                sizes = int_values(in[1]);
            } else if (auto s = v.ints("split")) {
                sizes = *s;
            } else {
                const auto n = static_cast<std::int64_t>(v.n.outputs.size());
                const std::int64_t d = in[0].size(axis);
                if (d % n != 0) v.refuse("Split into " + std::to_string(n) + " unequal parts without 'split'");
                sizes.assign(static_cast<std::size_t>(n), d / n);
            }
            tensors out;
            for (const auto& t : at::split_with_sizes(in[0], sizes, axis)) out.push_back(t.clone());
            return out;
        }),
        lower<ops::Slice>([](const tensors& in, const node_view& v) {
            const auto starts = int_values(in[1]), ends = int_values(in[2]);
            std::vector<std::int64_t> axes, steps;
            if (present(in, 3)) {
                axes = int_values(in[3]);
            } else {
                for (std::size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<std::int64_t>(k));
            }
            steps = present(in, 4) ? int_values(in[4]) : std::vector<std::int64_t>(starts.size(), 1);
            if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
                throw error(v.where, "Slice's starts, ends, axes and steps differ in length");
            }
            Tensor y = in[0];
            for (std::size_t k = 0; k < axes.size(); ++k) {
                const std::int64_t a = normalize_axis(axes[k], y.dim(), v), d = y.size(a), step = steps[k];
                if (step == 0) throw error(v.where, "Slice step 0");
                std::int64_t b = starts[k] < 0 ? starts[k] + d : starts[k];
                std::int64_t e = ends[k] < 0 ? ends[k] + d : ends[k];
                if (step > 0) {
                    b = std::clamp<std::int64_t>(b, 0, d);
                    e = std::clamp<std::int64_t>(e, 0, d);
                    y = y.slice(a, b, std::max(b, e), step);
                } else {
                    b = std::clamp<std::int64_t>(b, 0, d - 1);
                    e = std::clamp<std::int64_t>(e, -1, d - 1);
                    const Tensor idx = b > e ? at::arange(b, e, step, at::kLong) : at::empty({0}, at::kLong);
                    y = at::index_select(y, a, idx);
                }
            }
            return tensors{y.clone()};
        }),
        lower<ops::Gather>([](const tensors& in, const node_view& v) {
            const Tensor& x = in[0];
            const std::int64_t axis = normalize_axis(v.i("axis", 0), x.dim(), v);
            const Tensor i = in[1].to(at::kLong);
            const Tensor idx = at::where(i < 0, i + x.size(axis), i);
            std::vector<std::int64_t> shape(x.sizes().begin(), x.sizes().begin() + axis);
            shape.insert(shape.end(), idx.sizes().begin(), idx.sizes().end());
            shape.insert(shape.end(), x.sizes().begin() + axis + 1, x.sizes().end());
            return tensors{at::index_select(x, axis, idx.reshape({-1})).reshape(shape)};
        }),
        lower<ops::GatherElements>([](const tensors& in, const node_view& v) {
            const std::int64_t axis = normalize_axis(v.i("axis", 0), in[0].dim(), v);
            const Tensor i = in[1].to(at::kLong);
            return tensors{at::gather(in[0], axis, at::where(i < 0, i + in[0].size(axis), i))};
        }),
        lower<ops::Expand>([](const tensors& in, const node_view&) {
            const auto shape = at::infer_size(in[0].sizes(), int_values(in[1]));
            return tensors{in[0].expand(shape).contiguous()};
        }),
        lower<ops::Tile>([](const tensors& in, const node_view&) { return tensors{in[0].repeat(int_values(in[1]))}; }),
        lower<ops::Pad>([](const tensors& in, const node_view& v) {
            const Tensor& x = in[0];
            auto pads = present(in, 1) ? int_values(in[1]) : v.ints("pads").value_or(std::vector<std::int64_t>{});
            if (present(in, 3)) v.refuse("Pad with 'axes' (opset 18)");
            if (pads.size() != 2 * static_cast<std::size_t>(x.dim())) throw error(v.where, "pads has the wrong length");
            const std::string mode = v.s("mode", "constant");
            if (mode == "constant") {
                const double value = present(in, 2) ? in[2].to(at::kDouble).item<double>() : v.f("value", 0.0);
                return tensors{pad_then_crop(x, pads, value)};
            }
            // reflect / edge: ATen pads the last 1-3 axes of a batched tensor only.
            const std::int64_t r = x.dim();
            std::int64_t first = r;
            for (std::int64_t d = 0; d < r; ++d) {
                if (pads[static_cast<std::size_t>(d)] != 0 || pads[static_cast<std::size_t>(d + r)] != 0) {
                    first = d;
                    break;
                }
            }
            if (first == r) return tensors{x.clone()};
            const std::int64_t spatial = r - first;
            if (spatial > 3 || first < 1) v.refuse("Pad mode '" + mode + "' on these axes: ATen pads the last 1-3 axes of a batched tensor");
            if (std::any_of(pads.begin(), pads.end(), [](std::int64_t p) { return p < 0; })) v.refuse("Pad mode '" + mode + "' with negative pads");
            std::vector<std::int64_t> sp;
            for (std::int64_t d = first; d < r; ++d) sp.push_back(pads[static_cast<std::size_t>(d)]);
            for (std::int64_t d = first; d < r; ++d) sp.push_back(pads[static_cast<std::size_t>(d + r)]);
            const auto tp = torch_pad_order(sp, 0);
            // ATen's pads want (N, C, spatial...): fold the leading axes into one batch and one channel axis.
            std::vector<std::int64_t> lead(x.sizes().begin(), x.sizes().begin() + first);
            std::int64_t batch = 1;
            for (std::size_t k = 0; k + 1 < lead.size(); ++k) batch *= lead[k];
            std::vector<std::int64_t> folded{batch, lead.back()};
            folded.insert(folded.end(), x.sizes().begin() + first, x.sizes().end());
            const Tensor xf = x.reshape(folded);
            Tensor y;
            if (mode == "reflect") {
                y = spatial == 1 ? at::reflection_pad1d(xf, tp) : spatial == 2 ? at::reflection_pad2d(xf, tp) : at::reflection_pad3d(xf, tp);
            } else if (mode == "edge") {
                y = spatial == 1 ? at::replication_pad1d(xf, tp) : spatial == 2 ? at::replication_pad2d(xf, tp) : at::replication_pad3d(xf, tp);
            } else {
                throw error(v.where, "Pad mode '" + mode + "' is not an ONNX value");
            }
            std::vector<std::int64_t> out_shape = lead;
            out_shape.insert(out_shape.end(), y.sizes().begin() + 2, y.sizes().end());
            return tensors{y.reshape(out_shape)};
        }),
        lower<ops::DepthToSpace>([](const tensors& in, const node_view& v) {
            const Tensor& x = in[0];
            const std::int64_t b = v.i("blocksize", 0);
            if (x.dim() != 4 || b < 1) throw error(v.where, "DepthToSpace takes a rank-4 input and a positive blocksize");
            const std::int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
            if (v.s("mode", "DCR") == "CRD") return tensors{at::pixel_shuffle(x, b)};
            const Tensor t = x.reshape({n, b, b, c / (b * b), h, w}).permute({0, 3, 4, 1, 5, 2});
            return tensors{t.reshape({n, c / (b * b), h * b, w * b})};
        }),
        lower<ops::SpaceToDepth>([](const tensors& in, const node_view& v) {
            const Tensor& x = in[0];
            const std::int64_t b = v.i("blocksize", 0);
            if (x.dim() != 4 || b < 1) throw error(v.where, "SpaceToDepth takes a rank-4 input and a positive blocksize");
            const std::int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
            const Tensor t = x.reshape({n, c, h / b, b, w / b, b}).permute({0, 3, 5, 1, 2, 4});
            return tensors{t.reshape({n, c * b * b, h / b, w / b})};
        }),
        lower<ops::Trilu>([](const tensors& in, const node_view& v) {
            const std::int64_t k = present(in, 1) ? int_values(in[1]).at(0) : 0;
            return tensors{v.i("upper", 1) != 0 ? at::triu(in[0], k) : at::tril(in[0], k)};
        }),
        lower<ops::Range>([](const tensors& in, const node_view&) {
            const auto t = in[0].scalar_type();
            if (is_float(in[0])) {
                return tensors{at::arange(in[0].item<double>(), in[1].item<double>(), in[2].item<double>(), at::TensorOptions().dtype(t))};
            }
            return tensors{at::arange(in[0].item<std::int64_t>(), in[1].item<std::int64_t>(), in[2].item<std::int64_t>(), at::TensorOptions().dtype(t))};
        }),
        lower<ops::ConstantOfShape>([](const tensors& in, const node_view& v) {
            const auto shape = int_values(in[0]);
            if (const auto* a = v.find("value")) {
                const Tensor value = to_torch(std::get<tensor>(*a));
                return tensors{value.reshape({}).expand(shape).clone()};
            }
            return tensors{at::zeros(shape, at::kFloat)};
        }),
        lower<ops::Constant>([](const tensors&, const node_view& v) {
            if (const auto* a = v.find("value")) return tensors{to_torch(std::get<tensor>(*a))};
            if (const auto* a = v.find("value_float")) return tensors{untraced([&] { return at::scalar_tensor(std::get<double>(*a), at::kFloat); })};
            if (const auto* a = v.find("value_int")) return tensors{untraced([&] { return at::scalar_tensor(std::get<std::int64_t>(*a), at::kLong); })};
            if (auto a = v.ints("value_ints")) return tensors{untraced([&] { return at::tensor(*a, at::kLong); })};
            if (const auto* a = v.find("value_floats")) {
                const auto& d = std::get<std::vector<double>>(*a);
                return tensors{untraced([&] { return at::tensor(d, at::kDouble).to(at::kFloat); })};
            }
            v.refuse("Constant without a tensor, float or int value");
        }),
        lower<ops::EyeLike>([](const tensors& in, const node_view& v) {
            const Tensor& x = in[0];
            const auto t = v.find("dtype") ? scalar_type_of_onnx(v.i("dtype", 1), v.where) : x.scalar_type();
            const std::int64_t k = v.i("k", 0);
            const Tensor rows = at::arange(x.size(0), at::kLong).unsqueeze(1), cols = at::arange(x.size(1), at::kLong).unsqueeze(0);
            return tensors{at::eq(cols - rows, k).to(t)};
        }),
        lower<ops::OneHot>([](const tensors& in, const node_view& v) {
            const Tensor& idx = in[0];
            const std::int64_t depth = static_cast<std::int64_t>(in[1].to(at::kDouble).item<double>());
            const std::int64_t r = idx.dim() + 1;
            const std::int64_t axis = normalize_axis(v.i("axis", -1), r, v);
            const Tensor i = idx.to(at::kLong);
            const Tensor norm = at::where(i < 0, i + depth, i).unsqueeze(axis);
            std::vector<std::int64_t> shape(static_cast<std::size_t>(r), 1);
            shape[static_cast<std::size_t>(axis)] = depth;
            const Tensor hot = at::eq(norm, at::arange(depth, at::kLong).reshape(shape));
            const Tensor values = in[2];
            return tensors{at::where(hot, values[1], values[0])};
        }));
}

/// The registry's ops with no exact ATen mapping written: their nodes are refused as unsupported.
inline constexpr auto unsupported_ops = hana::tuple_t<ops::Upsample>;

// A new op of the registry does not compile until it is mapped above or listed here.
static_assert(ops::each_op_once<ops::all_ops_type, decltype(lowerings()), decltype(unsupported_ops)>);

/// ONNX op_type -> ATen, the lookup of the nodes.
inline const std::map<std::string, op_fn, std::less<>>& op_table() {
    static const std::map<std::string, op_fn, std::less<>> table = ops::by_op_type(lowerings());
    return table;
}
#undef TENSORACLE_AT1
#undef TENSORACLE_AT2

/// The node's ATen mapping, or unsupported_error saying there is none.
[[nodiscard]] inline const op_fn& mapping_of(const graph::node& n) {
    const auto& t = op_table();
    if (!n.domain.empty() && n.domain != "ai.onnx") throw unsupported_error("torch", "domain '" + n.domain + "' of node " + n.label());
    auto it = t.find(n.op_type);
    if (it == t.end()) throw unsupported_error("torch", "no exact ATen mapping for ONNX op " + n.op_type + " (node " + n.label() + ")");
    return it->second;
}

/// The first line of an ATen message (they carry a C++ backtrace after it).
[[nodiscard]] inline std::string detail_first_line(const std::string& msg) {
    const auto e = msg.find('\n');
    return msg.substr(0, std::min<std::size_t>(e == std::string::npos ? msg.size() : e, 400));
}

/// Runs the graph eagerly: every node one ATen call (or composition), in topological order.
/// Errors keep ATen's message, prefixed with the node; a kernel ATen lacks for a dtype
/// ("not implemented for 'Half'") is unsupported_error.
[[nodiscard]] inline tensors run_eager(const graph::graph& g, const std::map<std::string, Tensor, std::less<>>& initializers, const tensors& inputs) {
    std::map<std::string, Tensor, std::less<>> env(initializers.begin(), initializers.end());
    for (std::size_t k = 0; k < g.inputs.size() && k < inputs.size(); ++k) env[g.inputs[k].name] = inputs[k];
    for (const std::size_t i : g.topological_order()) {
        const auto& n = g.nodes[i];
        const node_view v{n, "torch: node " + n.label()};
        tensors in;
        for (const auto& name : n.inputs) {
            if (name.empty()) {
                in.emplace_back();
                continue;
            }
            auto it = env.find(name);
            if (it == env.end()) throw error(v.where, "input '" + name + "' is not defined");
            in.push_back(it->second);
        }
        tensors out;
        try {
            out = mapping_of(n)(in, v);
        } catch (const c10::Error& e) {
            const std::string msg = e.what_without_backtrace();
            if (msg.find("not implemented for") != std::string::npos) throw unsupported_error(v.where, detail_first_line(msg));
            throw error(v.where, detail_first_line(msg));
        }
        for (std::size_t k = 0; k < n.outputs.size() && k < out.size(); ++k) {
            if (!n.outputs[k].empty()) env[n.outputs[k]] = out[k];
        }
    }
    tensors result;
    for (const auto& o : g.outputs) result.push_back(env.at(o.name));
    return result;
}

}  // namespace tensoracle::backends::torch_onnx
