// tensoracle: the multiply-adds of Conv and ConvTranspose over a conv_plan: the plan, which
// outputs no tap reaches (and the value facts that follow), the visited-taps work estimate,
// and tap_kernel<Op> (compute and vjp from the op's plan() and for_each_tap()).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/nn_util.hpp"
#include "tensoracle/ops/nn/detail/helpers.hpp"
#include "tensoracle/ops/nn/detail/tap_bounds.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace nn {
/// The multiply-adds of Conv or ConvTranspose with constant dims:
/// Y[f] = B[channel of f] + sum of X[xoff] * W[woff] over the taps (f, xoff, woff)
/// that Op::for_each_tap(plan, fn) visits in the reference order.
struct conv_plan {
    std::size_t n = 0;  ///< spatial axes
    std::vector<std::int64_t> xs, ks, os, pb, st, dl;  ///< X, kernel and Y spatial dims; pad_begin, strides, dilations
    std::int64_t N = 0, C = 0, M = 0, Cg = 0, Mg = 0;  ///< images, X and Y channels, and per group
    shape_type y;
    [[nodiscard]] std::size_t plane() const { return static_cast<std::size_t>(util::count(os)); }
    /// n, xs, ks, N and C from X's and W's shapes (both ops read them alike).
    static conv_plan of_shapes(const shape_type& x, const shape_type& w) {
        conv_plan p;
        p.n = x.size() - 2;
        for (std::size_t i = 0; i < p.n; ++i) {
            p.xs.push_back(static_cast<std::int64_t>(x[i + 2]));
            p.ks.push_back(static_cast<std::int64_t>(w[i + 2]));
        }
        p.N = static_cast<std::int64_t>(x[0]);
        p.C = static_cast<std::int64_t>(x[1]);
        return p;
    }
};

/// Which output positions of the plan receive no product at all (a Conv
/// window wholly in the padding, a ConvTranspose gap between strided or
/// dilated taps, or a row added by output_padding): without B such an output
/// is exactly 0 whatever the data (value facts: a divisor or a Log there
/// fails). An output is untouched when its position along one spatial axis
/// is, so the answer is per axis: none, some, or all of the outputs.
enum class untouched { none, some, all };
inline untouched untouched_outputs(const conv_plan& p, bool transpose) {
    if (p.N <= 0 || p.M <= 0 || p.os.size() != p.n) return untouched::none;
    for (std::size_t i = 0; i < p.n; ++i) {
        if (p.os[i] <= 0 || p.xs[i] <= 0 || p.ks[i] <= 0) return untouched::none;
    }
    untouched found = untouched::none;
    for (std::size_t i = 0; i < p.n; ++i) {
        std::vector<bool> hit(static_cast<std::size_t>(p.os[i]), false);
        if (!transpose) {
            for (std::int64_t o = 0; o < p.os[i]; ++o) {
                const auto [first, end] = taps_in_bounds(o * p.st[i] - p.pb[i], p.dl[i], p.ks[i], p.xs[i]);
                hit[static_cast<std::size_t>(o)] = first < end;
            }
        } else {
            for (std::int64_t j = 0; j < p.xs[i]; ++j) {
                for (std::int64_t k = 0; k < p.ks[i]; ++k) {
                    const std::int64_t o = j * p.st[i] + k * p.dl[i] - p.pb[i];
                    if (o >= 0 && o < p.os[i]) hit[static_cast<std::size_t>(o)] = true;
                }
            }
        }
        if (std::find(hit.begin(), hit.end(), true) == hit.end()) return untouched::all;
        if (std::find(hit.begin(), hit.end(), false) != hit.end()) found = untouched::some;
    }
    return found;
}

/// The steps of Op::for_each_tap over a plan: its products (in-bounds taps
/// only) plus one bounds test per outer kernel position of each window and
/// channel pair. This, not the kernel's full size, is what the reference
/// kernel and its VJP spend on a window mostly in the padding.
inline double visited_taps(const conv_plan& p, bool transpose) {
    if (p.n == 0 || p.os.size() != p.n) return 0.0;
    double products = 1.0, windows = 1.0, outer = 1.0;
    for (std::size_t i = 0; i < p.n; ++i) {
        const std::int64_t starts = transpose ? p.xs[i] : p.os[i], limit = transpose ? p.os[i] : p.xs[i];
        products *= axis_taps(starts, p.st[i], p.pb[i], p.dl[i], p.ks[i], limit);
        windows *= static_cast<double>(starts);
        if (i + 1 < p.n) outer *= static_cast<double>(p.ks[i]);
    }
    const double pairs = transpose ? static_cast<double>(p.N * p.C * p.Mg) : static_cast<double>(p.N * p.M * p.Cg);
    return pairs * (products + windows * outer);
}

/// Op::hints().visits for Conv and ConvTranspose: visited_taps at the context's shapes.
template <class Op>
double conv_visited_work(const spec::context& c, bool transpose) {
    const shape_type x = c.input(0).shape(), w = c.input(1).shape();
    const shape_type b = c.has_input(2) ? c.input(2).shape() : shape_type{};
    const auto p = Op::plan(x, w, c.has_input(2) ? &b : nullptr,
                            spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type));
    return visited_taps(p, transpose);
}

/// Value facts of Conv and ConvTranspose (Op): an output no tap reaches is
/// its channel's bias, 0 without B, for every data. Which outputs the taps
/// reach depends on the geometry alone, so such a place exists in every
/// channel: each value B is forced to hold (a Hardmax's zeros) is an output.
/// Where no tap reaches any output (pads wider than the input along one axis)
/// the output is B broadcast, or all 0, whatever X and W hold.
template <class Op>
std::vector<spec::value_facts> untouched_output_facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                      std::span<const shape_type> shapes, bool transpose) {
    if (shapes.size() < 2) return {spec::value_facts{}};
    const bool bias = shapes.size() > 2 && !shapes[2].empty();
    const auto p = Op::plan(shapes[0], shapes[1], nullptr, spec::parse_attributes<typename Op::attributes>(attrs, Op::op_type));
    const auto where = untouched_outputs(p, transpose);
    if (where == untouched::all) {
        if (!bias) return {spec::value_facts::constant(0.0)};
        return {in.size() > 2 ? in[2] : spec::value_facts{}};  // every channel's bias, nothing else
    }
    if (bias && (in.size() < 3 || in[2].forced.empty())) return {spec::value_facts{}};
    if (where == untouched::none) return {spec::value_facts{}};
    spec::value_facts out;
    if (!bias) return {out.force(0.0)};
    for (const double v : in[2].forced) out.force(v);
    return {out};
}

/// Op::compute<T> of a conv_plan: each output starts at its bias and adds
/// its taps in the plan's order, in T's accumulator type.
template <class Op, class T>
array<T> sum_taps(const array<T>& x, const array<T>& w, const std::optional<array<T>>& b,
                  const typename Op::attributes& at) {
    using acc = acc_t<T>;
    const shape_type bs = b ? shape_type(b->shape().begin(), b->shape().end()) : shape_type{};
    const auto p = Op::plan(shape_type(x.shape().begin(), x.shape().end()), shape_type(w.shape().begin(), w.shape().end()),
                            b ? &bs : nullptr, at);
    auto y = array<T>::from_shape(p.y);
    const std::size_t plane = p.plane(), channels = static_cast<std::size_t>(p.M);
    std::vector<acc> sum(y.size(), acc(0));
    if (b) {
        for (std::size_t f = 0; f < sum.size(); ++f) sum[f] = static_cast<acc>(b->data()[(f / plane) % channels]);
    }
    Op::for_each_tap(p, [&](std::size_t f, std::size_t xoff, std::size_t woff) {
        sum[f] += static_cast<acc>(x.data()[xoff]) * static_cast<acc>(w.data()[woff]);
    });
    for (std::size_t f = 0; f < sum.size(); ++f) y.data()[f] = value_cast<T>(sum[f]);
    return y;
}

/// Op::vjp<V> of a conv_plan: each tap sends its output's cotangent back to
/// both factors (times the other), and the bias gathers its channel's.
template <class Op, class V>
std::vector<array<V>> taps_vjp(const spec::context& c, const std::vector<array<V>>& x,
                               const std::vector<array<V>>& w) {
    const auto at = spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type);
    const bool has_b = c.has_input(2);
    const shape_type bs = has_b ? shape_type(x[2].shape().begin(), x[2].shape().end()) : shape_type{};
    const auto p = Op::plan(shape_type(x[0].shape().begin(), x[0].shape().end()),
                            shape_type(x[1].shape().begin(), x[1].shape().end()), has_b ? &bs : nullptr, at);
    std::vector<array<V>> g;
    for (std::size_t i = 0; i < c.input_count(); ++i) {
        g.push_back(array<V>::from_shape(i < 2 || has_b ? x[i].shape() : shape_type{0}));
        std::fill(g.back().begin(), g.back().end(), V(0));
    }
    const auto* wy = ops::detail::output_cotangent(Op::op_type, w, 0, p.y);
    if (wy == nullptr) return g;
    const V* gy = wy->data();
    const V* px = x[0].data();
    const V* pw = x[1].data();
    V* gx = g[0].data();
    V* gw = g[1].data();
    Op::for_each_tap(p, [&](std::size_t f, std::size_t xoff, std::size_t woff) {
        gx[xoff] += gy[f] * pw[woff];
        gw[woff] += gy[f] * px[xoff];
    });
    if (has_b) {
        const std::size_t plane = p.plane(), channels = static_cast<std::size_t>(p.M);
        for (std::size_t f = 0; f < wy->size(); ++f) g[2].data()[(f / plane) % channels] += gy[f];
    }
    return g;
}

/// compute<T> (sum_taps) and vjp<V> (taps_vjp) of Conv and ConvTranspose
/// from their plan() and for_each_tap(). Attrs is a parameter, not
/// Op::attributes: Op is incomplete where this base is instantiated.
template <class Op>
struct tap_kernel {
    template <class T, class Attrs>
    static array<T> compute(const array<T>& x, const array<T>& w, const std::optional<array<T>>& b, const Attrs& at) {
        static_assert(spec::dtype_accepted<Op, T>::value);
        return sum_taps<Op, T>(x, w, b, at);
    }
    template <class T>
    static array<T> compute(const array<T>& x, const array<T>& w, const std::optional<array<T>>& b) {
        return compute<T>(x, w, b, typename Op::attributes{});
    }
    /// The VJP of compute: the same taps, run backwards (ad/op_derivatives.hpp).
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        return taps_vjp<Op, V>(c, x, w);
    }
};
}  // namespace nn

}  // namespace tensoracle::ops
