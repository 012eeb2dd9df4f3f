// tensoracle: ConvTranspose (the transpose of Conv: each input scatters into a window of Y, plus bias).
//
// With output_shape (or SAME_*), total padding is
// max(0, s*(x-1) + output_padding + d*(k-1)+1 - out), split as the ONNX doc
// says (SAME_UPPER: begin = total/2; otherwise begin = total - total/2);
// output positions beyond the full result receive only the bias.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/nn_util.hpp"
#include "tensoracle/ops/nn/detail/conv_family.hpp"
#include "tensoracle/ops/nn/detail/conv_taps.hpp"
#include "tensoracle/ops/nn/detail/helpers.hpp"
#include "tensoracle/ops/nn/detail/tap_bounds.hpp"
#include "tensoracle/ops/nn/detail/two_inputs_and_optional_third.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct conv_transpose_attr {
    std::string auto_pad = "NOTSET";
    std::vector<std::int64_t> dilations;
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> output_padding;
    std::vector<std::int64_t> output_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
};

/// ConvTranspose(X, W, B?): X (N, C, D1..Dn), W (C, M/group, k1..kn), B (M).
/// Y[b, g*M/group + m, s*j + d*k - pad_begin] += X[b, g*C/group + c, j] * W[g*C/group + c, m, k],
/// Y starts at B; the full size per axis is s*(x-1) + output_padding + d*(k-1) + 1 - pads.
struct ConvTranspose : nn::two_inputs_and_optional_third<ConvTranspose>, nn::tap_kernel<ConvTranspose>,
                       nn::conv_family<ConvTranspose>, spec::one_shape_model<ConvTranspose>,
                       spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "ConvTranspose";
    static constexpr int opset = 11;
    using attributes = conv_transpose_attr;
    static constexpr spec::dtype_set types = nn::float3;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"X", types, {3, 5}}, {"W", types, {3, 5}}, {"B", types, {1, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 5}}}};

    struct dims : detail::nn::conv_dims {
        std::vector<spec::expr> output_padding, output_shape;
    };
    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y, pad_begin, strides, dilations;
        bool ok = false;
    };
    static model shape_model(const dims& d) {
        using spec::expr;
        namespace util = detail::nn;
        model m;
        auto& cs = m.constraints;
        const std::size_t r = d.x.size();
        cs.push_back({expr(r) >= 3, "X has rank >= 3: (N, C, D1, ...)"});
        cs.push_back({expr(d.w.size()) == expr(r), "W has the rank of X: (C, M/group, k1, ...)"});
        if (r < 3 || d.w.size() != r) return m;
        const std::size_t n = r - 2;
        cs.push_back({d.group >= 1, "group >= 1"});
        cs.push_back({d.x[1] == d.w[0], "X channels C equal W.shape[0]"});
        cs.push_back({d.w[0] % max(d.group, expr(1)) == 0, "input channels C are a multiple of group"});
        const expr M = d.w[1] * d.group;
        if (d.b) {
            cs.push_back({expr(d.b->size()) == 1, "B is 1-D"});
            if (d.b->size() != 1) return m;
            cs.push_back({(*d.b)[0] == M, "B has one value per output channel W.shape[1] * group"});
        }
        // Every check runs (no short-circuit), so all length constraints are recorded.
        const std::array<bool, 6> ok{
            util::check_length(cs, d.kernel_shape, n, "kernel_shape", "one value per spatial axis"),
            util::check_length(cs, d.strides, n, "strides", "one value per spatial axis"),
            util::check_length(cs, d.dilations, n, "dilations", "one value per spatial axis"),
            util::check_length(cs, d.output_padding, n, "output_padding", "one value per spatial axis"),
            util::check_length(cs, d.output_shape, n, "output_shape", "one value per spatial axis"),
            util::check_length(cs, d.pads, 2 * n, "pads", "a begin and an end value per spatial axis")};
        const bool lengths = std::all_of(ok.begin(), ok.end(), [](bool b) { return b; });
        if (!lengths) return m;
        if (d.auto_pad != util::auto_pad_mode::notset && !d.pads.empty()) {
            cs.push_back({expr(0), "pads cannot be given together with auto_pad other than NOTSET"});
            return m;
        }
        const auto s = util::or_default(d.strides, n, 1), dl = util::or_default(d.dilations, n, 1);
        const auto op = util::or_default(d.output_padding, n, 0), p = util::or_default(d.pads, 2 * n, 0);
        m.y = {d.x[0], M};
        for (std::size_t i = 0; i < n; ++i) {
            const std::string ax = " (spatial axis " + std::to_string(i) + ")";
            const expr k = d.w[2 + i];
            if (!d.kernel_shape.empty()) cs.push_back({d.kernel_shape[i] == k, "kernel_shape equals W's spatial dims" + ax});
            cs.push_back({k >= 1, "kernel size >= 1" + ax});
            cs.push_back({s[i] >= 1, "strides >= 1" + ax});
            cs.push_back({dl[i] >= 1, "dilations >= 1" + ax});
            cs.push_back({p[i] >= 0 && p[n + i] >= 0, "pads >= 0" + ax});
            cs.push_back({op[i] >= 0, "output_padding >= 0" + ax});
            // ONNX: "each padding value in output_padding must be less than the
            // corresponding stride/dilation dimension"; read as the larger of the two
            // (as onnxruntime checks), the reading that refuses the fewest models.
            cs.push_back({op[i] < max(s[i], dl[i]), "output_padding < max(stride, dilation)" + ax});
            const expr full = s[i] * (d.x[2 + i] - 1) + op[i] + dl[i] * (k - 1) + 1;
            expr out = 0, begin = 0;
            const bool same = d.auto_pad == util::auto_pad_mode::same_upper || d.auto_pad == util::auto_pad_mode::same_lower;
            if (!d.output_shape.empty() || same) {
                out = d.output_shape.empty() ? d.x[2 + i] * s[i] : d.output_shape[i];
                // A zero-size requested output is degenerate (ONNX's own inference drops the axis).
                if (!d.output_shape.empty()) cs.push_back({d.output_shape[i] >= 1, "output_shape >= 1" + ax});
                const expr total = max(expr(0), full - out);
                begin = d.auto_pad == util::auto_pad_mode::same_upper ? total / 2 : total - total / 2;
            } else if (d.auto_pad == util::auto_pad_mode::valid) {
                out = full;
            } else {
                out = full - p[i] - p[n + i];
                begin = p[i];
            }
            cs.push_back({out >= 0, "the output size is non-negative" + ax});
            m.y.push_back(out);
            m.pad_begin.push_back(begin);
        }
        m.strides = s;
        m.dilations = dl;
        m.ok = true;
        return m;
    }
    template <int = 0>
    static dims context_dims(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        dims d;
        detail::nn::fill_conv_dims(d, c, a.auto_pad, op_type);
        d.output_padding = c.attr_ints("output_padding");
        d.output_shape = c.attr_ints("output_shape");
        return d;
    }

    /// The multiply-adds of X (shape xs) and W (shape ws), checked.
    static nn::conv_plan plan(const shape_type& xs, const shape_type& ws, const shape_type* bs, const attributes& at) {
        namespace util = detail::nn;
        dims d;
        util::fill_conv_dims_from_shapes(d, xs, ws, bs, at, op_type);
        d.output_padding = util::constants(at.output_padding);
        d.output_shape = util::constants(at.output_shape);
        const auto m = shape_model(d);
        util::check_constant(op_type, m.constraints);
        auto p = nn::conv_plan::of_shapes(xs, ws);
        const auto yd = util::values(m.y);
        p.os.assign(yd.begin() + 2, yd.end());
        p.pb = util::values(m.pad_begin);
        p.st = util::values(m.strides);
        p.dl = util::values(m.dilations);
        p.Mg = static_cast<std::int64_t>(ws[1]);
        p.M = yd[1];
        p.Cg = p.C / at.group;
        p.y = util::to_shape(yd, op_type);
        return p;
    }
    /// fn(yoff, xoff, woff) for each product X[xoff] * W[woff] scattered into
    /// Y[yoff], input element by input element (row-major), then by output
    /// channel of its group and kernel position; positions cropped by pads or
    /// output_shape receive nothing.
    template <class Fn>
    static void for_each_tap(const nn::conv_plan& p, Fn&& fn) {
        namespace util = detail::nn;
        const std::size_t last = p.n - 1;
        const std::vector<std::int64_t> outer_ks(p.ks.begin(), p.ks.end() - 1);
        for (std::int64_t bi = 0; bi < p.N; ++bi) {
            for (std::int64_t ci = 0; ci < p.C; ++ci) {
                const std::int64_t g = ci / p.Cg;
                util::for_each_index(p.xs, [&](std::span<const std::int64_t> j) {
                    std::int64_t xoff = bi * p.C + ci;
                    for (std::size_t i = 0; i < p.n; ++i) xoff = xoff * p.xs[i] + j[i];
                    // The last kernel axis writes Y at a + dl * k: only the k in
                    // [k_lo, k_hi) fall inside Y, the rest are cropped.
                    const std::int64_t a = p.st[last] * j[last] - p.pb[last], d = p.dl[last];
                    // (Named copies, not a structured binding: Clang 14 cannot capture one in the lambda below.)
                    const auto range = nn::taps_in_bounds(a, d, p.ks[last], p.os[last]);
                    const std::int64_t k_lo = range.first, k_hi = range.second;
                    for (std::int64_t mm = 0; mm < p.Mg; ++mm) {
                        const std::int64_t mi = g * p.Mg + mm;
                        util::for_each_index(outer_ks, [&](std::span<const std::int64_t> k) {
                            std::int64_t yoff = bi * p.M + mi, woff = ci * p.Mg + mm;
                            for (std::size_t i = 0; i < last; ++i) {
                                const std::int64_t yi = p.st[i] * j[i] + p.dl[i] * k[i] - p.pb[i];
                                if (yi < 0 || yi >= p.os[i]) return;  // cropped by pads / output_shape
                                yoff = yoff * p.os[i] + yi;
                                woff = woff * p.ks[i] + k[i];
                            }
                            auto yo = static_cast<std::size_t>(yoff * p.os[last] + a + d * k_lo);
                            auto wo = static_cast<std::size_t>(woff * p.ks[last] + k_lo);
                            const auto xo = static_cast<std::size_t>(xoff);
                            for (std::int64_t kl = k_lo; kl < k_hi; ++kl, yo += static_cast<std::size_t>(d), ++wo) fn(yo, xo, wo);
                        });
                    }
                });
            }
        }
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().weights({1, 2})
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.3)
            .solve("group", 1, 16, 0.5)
            .solve("output_padding", 0, 8, 0.3)
            .solve("output_shape", 1, 64, 0.2)
            .range(0, -2, 2)
            .range(1, -1, 1)
            .range(2, -1, 1)
            // each input element scatters into one window per output channel of its group
            .work([](const spec::context& c, const std::vector<std::vector<spec::expr>>&) {
                return spec::product(c.shape(0)) * spec::product(nn::tail(c.shape(1), 1));
            })
            .visits([](const spec::context& c) { return nn::conv_visited_work<ConvTranspose>(c, true); })
            .facts([](std::span<const spec::value_facts> in, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                return nn::untouched_output_facts<ConvTranspose>(in, attrs, shapes, true);  // gaps between strided taps
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::conv_transpose_attr, auto_pad, dilations, group, kernel_shape, output_padding,
                        output_shape, pads, strides);
