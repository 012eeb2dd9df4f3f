// tensoracle: helpers of the neural-network op family (ops/nn.hpp): sliding-
// window geometry written once over spec::expr, so the same formulas give the
// symbolic constraints and output shapes of a spec (dims are symbols) and the
// concrete sizes and pads its kernel loops over (dims are constants, folded
// with int64 overflow checks by expr itself), plus N-D index helpers.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <span>
#include <vector>

#include "tensoracle/core/error.hpp"
#include "tensoracle/core/scalar.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/spec/expr.hpp"
#include "tensoracle/spec/op.hpp"

namespace tensoracle::ops::detail::nn {

using spec::constraint;
using spec::expr;

/// Float accumulation for f16/bf16/f32, double for f64 (ONNX reference kernels).
/// AD scalars accumulate in themselves: a float accumulator would drop their derivatives.
template <class T>
using float_acc_t =
    std::conditional_t<ad_scalar<T>, T, std::conditional_t<std::is_same_v<T, double>, double, float>>;

/// Constant expressions of concrete dims.
template <class Range>
std::vector<expr> constants(const Range& r) {
    std::vector<expr> out;
    for (const auto v : r) {
        if constexpr (std::is_signed_v<std::decay_t<decltype(v)>>) {
            out.emplace_back(static_cast<std::int64_t>(v));
        } else {
            out.emplace_back(static_cast<std::size_t>(v));
        }
    }
    return out;
}

/// The value of a constant expression (every symbol already folded away).
inline std::int64_t value(const expr& e) { return e.eval({}); }

/// Checks constraints whose expressions are all constants (a kernel called
/// directly, outside spec::evaluate): the same message as check_constraints.
inline void check_constant(std::string_view op_type, const std::vector<constraint>& cs) {
    for (const auto& k : cs) {
        if (k.condition.eval({}) != 0) continue;
        throw shape_error(std::string(op_type), "constraint violated: " + k.condition.to_string() + " (" + k.reason + ")");
    }
}

enum class auto_pad_mode : std::uint8_t { notset, same_upper, same_lower, valid };

inline auto_pad_mode parse_auto_pad(std::string_view s, std::string_view op_type) {
    if (s == "NOTSET") return auto_pad_mode::notset;
    if (s == "SAME_UPPER") return auto_pad_mode::same_upper;
    if (s == "SAME_LOWER") return auto_pad_mode::same_lower;
    if (s == "VALID") return auto_pad_mode::valid;
    throw error(std::string(op_type),
                "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '" + std::string(s) + "'");
}

/// An ints attribute as given, or n copies of its default when absent (empty).
inline std::vector<expr> or_default(const std::vector<expr>& given, std::size_t n, std::int64_t dflt) {
    return given.empty() ? std::vector<expr>(n, expr(dflt)) : given;
}

/// Adds "attribute has `want` values" when it is given; false when that fails.
inline bool check_length(std::vector<constraint>& cs, const std::vector<expr>& given, std::size_t want,
                         const std::string& name, const std::string& what) {
    if (given.empty()) return true;
    cs.push_back({spec::list_length(given) == expr(want), name + " has " + what});
    return given.size() == want;
}

/// Input of the forward sliding-window geometry (Conv, MaxPool, AveragePool):
/// spatial dims of X and of the kernel, and the ints attributes as given.
struct window_spec {
    std::vector<expr> x;          // spatial input dims
    std::vector<expr> kernel;     // spatial kernel dims
    std::vector<expr> strides;    // empty: all 1
    std::vector<expr> dilations;  // empty: all 1
    std::vector<expr> pads;       // empty: all 0; [b_1..b_n, e_1..e_n]
    auto_pad_mode auto_pad = auto_pad_mode::notset;
    expr ceil_mode = 0;           // pools only: nonzero rounds the output size up
    bool pads_below_kernel = false;  // pools: every window overlaps the (unpadded) input
};

/// Output of the geometry: validity constraints, and per spatial axis the
/// output size and the (possibly computed) begin / end pads.
struct window_geometry {
    std::vector<constraint> constraints;
    bool lengths_ok = true;  // false: a length constraint fails; the rest is empty
    std::vector<expr> out, pad_begin, pad_end, stride, dilation;
};

/// ONNX Conv / pool output sizes, per spatial axis (dk = d*(k-1)+1):
///   NOTSET: out = (x + pb + pe - dk) / s + 1    (ceil_mode: rounded up, and a
///           last window that would start in the end padding is dropped, as in
///           PyTorch and the ONNX >= 1.16 reference)
///   VALID:  pads 0, out = (x - dk) / s + 1
///   SAME_*: out = ceil(x / s), total pad = max(0, (out-1)*s + dk - x), split
///           evenly with the odd one at the end (UPPER) or the beginning (LOWER).
inline window_geometry forward_window(const window_spec& w) {
    window_geometry g;
    const std::size_t n = w.x.size();
    auto& cs = g.constraints;
    // Every check runs (no short-circuit), so all length constraints are recorded.
    const bool strides_ok = check_length(cs, w.strides, n, "strides", "one value per spatial axis");
    const bool dilations_ok = check_length(cs, w.dilations, n, "dilations", "one value per spatial axis");
    const bool pads_ok = check_length(cs, w.pads, 2 * n, "pads", "a begin and an end value per spatial axis");
    g.lengths_ok = strides_ok && dilations_ok && pads_ok;
    if (!g.lengths_ok) return g;
    if (w.auto_pad != auto_pad_mode::notset && !w.pads.empty()) {
        cs.push_back({expr(0), "pads cannot be given together with auto_pad other than NOTSET"});
        g.lengths_ok = false;
        return g;
    }
    const auto s = or_default(w.strides, n, 1), d = or_default(w.dilations, n, 1), p = or_default(w.pads, 2 * n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string ax = " (spatial axis " + std::to_string(i) + ")";
        cs.push_back({w.kernel[i] >= 1, "kernel size >= 1" + ax});
        cs.push_back({s[i] >= 1, "strides >= 1" + ax});
        cs.push_back({d[i] >= 1, "dilations >= 1" + ax});
        cs.push_back({p[i] >= 0 && p[n + i] >= 0, "pads >= 0" + ax});
        if (w.pads_below_kernel) {
            cs.push_back({p[i] < w.kernel[i] && p[n + i] < w.kernel[i], "pads are smaller than the kernel" + ax});
            // With pads below the kernel, every window starts at most d*(k-1) before the input;
            // a dilation no larger than the input then cannot step over it, so no window
            // covers only padding (ONNX leaves such windows undefined).
            cs.push_back({d[i] <= w.x[i], "dilations are at most the input size" + ax});
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        const std::string ax = " (spatial axis " + std::to_string(i) + ")";
        const expr dk = d[i] * (w.kernel[i] - 1) + 1;
        const expr si = max(s[i], expr(1));  // guarded: the constraint above rejects s < 1
        switch (w.auto_pad) {
            case auto_pad_mode::same_upper:
            case auto_pad_mode::same_lower: {
                const expr out = (w.x[i] + si - 1) / si;
                const expr total = max(expr(0), (out - 1) * si + dk - w.x[i]);
                const expr half = total / 2;
                const expr begin = w.auto_pad == auto_pad_mode::same_upper ? half : total - half;
                g.out.push_back(out);
                g.pad_begin.push_back(begin);
                g.pad_end.push_back(total - begin);
                break;
            }
            case auto_pad_mode::valid:
            case auto_pad_mode::notset: {
                const bool valid = w.auto_pad == auto_pad_mode::valid;
                const expr pb = valid ? expr(0) : p[i], pe = valid ? expr(0) : p[n + i];
                cs.push_back({w.x[i] + pb + pe >= dk, "the dilated kernel fits the padded input" + ax});
                const expr span = w.x[i] + pb + pe - dk;
                const expr floor_out = span / si + 1;
                const expr ceil_out = (span + si - 1) / si + 1;
                const expr ceiled = select((ceil_out - 1) * si >= w.x[i] + pb, ceil_out - 1, ceil_out);
                g.out.push_back(select(w.ceil_mode != 0, ceiled, floor_out));
                g.pad_begin.push_back(pb);
                g.pad_end.push_back(pe);
                break;
            }
        }
    }
    g.stride = s;
    g.dilation = d;
    return g;
}

/// Odometer increment of a multi-index over dims; false after the last one.
inline bool next_index(std::span<std::int64_t> idx, std::span<const std::int64_t> dims) {
    for (std::size_t k = idx.size(); k-- > 0;) {
        if (++idx[k] < dims[k]) return true;
        idx[k] = 0;
    }
    return false;
}

/// Calls f(idx) for every multi-index over dims (row-major; idx is a
/// std::span<const std::int64_t>); none when a dim is 0. Kernels call it per
/// output element, so the index lives on the stack up to rank 8.
template <class F>
void for_each_index(const std::vector<std::int64_t>& dims, F&& f) {
    for (const auto d : dims) {
        if (d <= 0) return;
    }
    std::array<std::int64_t, 8> small{};
    std::vector<std::int64_t> large;
    std::span<std::int64_t> idx(small.data(), dims.size());
    if (dims.size() > small.size()) {
        large.assign(dims.size(), 0);
        idx = std::span<std::int64_t>(large);
    }
    do {
        f(std::span<const std::int64_t>(idx));
    } while (next_index(idx, dims));
}

/// Number of elements of dims (all non-negative, product already validated).
inline std::int64_t count(const std::vector<std::int64_t>& dims) {
    std::int64_t n = 1;
    for (const auto d : dims) n *= d;
    return n;
}

/// Concrete values of constant expressions.
inline std::vector<std::int64_t> values(const std::vector<expr>& es) {
    std::vector<std::int64_t> out;
    for (const auto& e : es) out.push_back(value(e));
    return out;
}

/// Shape of an array as int64 values.
template <class A>
std::vector<std::int64_t> dims_of(const A& a) {
    std::vector<std::int64_t> out;
    for (const auto d : a.shape()) out.push_back(static_cast<std::int64_t>(d));
    return out;
}

/// Output shape as size_t from int64 values (validated non-negative).
inline shape_type to_shape(const std::vector<std::int64_t>& dims, std::string_view op_type) {
    shape_type s;
    for (const auto d : dims) {
        if (d < 0) throw shape_error(std::string(op_type), "negative output dim " + std::to_string(d));
        s.push_back(static_cast<std::size_t>(d));
    }
    return s;
}

/// Dims and int attributes shared by Conv and ConvTranspose: symbolic (from a
/// spec context) or constant (in a typed kernel), so one shape model serves both.
struct conv_dims {
    std::vector<expr> x, w;
    std::optional<std::vector<expr>> b;
    expr group = 1;
    std::vector<expr> kernel_shape, pads, strides, dilations;
    auto_pad_mode auto_pad = auto_pad_mode::notset;
};

/// The symbolic form, from a context whose attributes have their defaults filled in.
inline void fill_conv_dims(conv_dims& d, const spec::context& c, std::string_view auto_pad, std::string_view op_type) {
    d.x = c.shape(0);
    d.w = c.shape(1);
    if (c.has_input(2)) d.b = c.shape(2);
    d.group = c.attr("group");
    d.kernel_shape = c.attr_ints("kernel_shape");
    d.pads = c.attr_ints("pads");
    d.strides = c.attr_ints("strides");
    d.dilations = c.attr_ints("dilations");
    d.auto_pad = parse_auto_pad(auto_pad, op_type);
}

/// The constant form, from concrete shapes and a typed attribute struct.
template <class Shape, class Attrs>
void fill_conv_dims_from_shapes(conv_dims& d, const Shape& x, const Shape& w, const Shape* b, const Attrs& at,
                                std::string_view op_type) {
    d.x = constants(x);
    d.w = constants(w);
    if (b) d.b = constants(*b);
    d.group = at.group;
    d.kernel_shape = constants(at.kernel_shape);
    d.pads = constants(at.pads);
    d.strides = constants(at.strides);
    d.dilations = constants(at.dilations);
    d.auto_pad = parse_auto_pad(at.auto_pad, op_type);
}

/// The constant form, from typed arrays and a typed attribute struct.
template <class T, class Attrs>
void fill_conv_dims(conv_dims& d, const array<T>& x, const array<T>& w, const std::optional<array<T>>& b,
                    const Attrs& at, std::string_view op_type) {
    const shape_type bs = b ? shape_type(b->shape().begin(), b->shape().end()) : shape_type{};
    fill_conv_dims_from_shapes(d, shape_type(x.shape().begin(), x.shape().end()),
                               shape_type(w.shape().begin(), w.shape().end()), b ? &bs : nullptr, at, op_type);
}

}  // namespace tensoracle::ops::detail::nn
