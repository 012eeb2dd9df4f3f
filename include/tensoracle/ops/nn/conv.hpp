// tensoracle: Conv (N-D grouped, strided, dilated, padded convolution plus bias).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
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
#include "tensoracle/ops/nn/detail/fast_gemm.hpp"
#include "tensoracle/ops/nn/detail/helpers.hpp"
#include "tensoracle/ops/nn/detail/tap_bounds.hpp"
#include "tensoracle/ops/nn/detail/two_inputs_and_optional_third.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct conv_attr {
    std::string auto_pad = "NOTSET";
    std::vector<std::int64_t> dilations;
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
};

/// Conv(X, W, B?): X (N, C, D1..Dn), W (M, C/group, k1..kn), B (M).
/// Y[b, m, o] = B[m] + sum_{c < C/group} sum_{k} X[b, g*C/group + c, s*o + d*k - pad_begin] * W[m, c, k]
/// with g = m / (M/group) and zero padding (positions outside X contribute 0).
struct Conv : nn::two_inputs_and_optional_third<Conv>, nn::tap_kernel<Conv>, nn::conv_family<Conv>,
              spec::one_shape_model<Conv>, spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Conv";
    static constexpr int opset = 11;
    using attributes = conv_attr;
    static constexpr spec::dtype_set types = nn::float3;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"X", types, {3, 5}}, {"W", types, {3, 5}}, {"B", types, {1, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 5}}}};

    /// Dims and int attributes, symbolic (from a context) or constant (in the kernel).
    using dims = detail::nn::conv_dims;
    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y;
        detail::nn::window_geometry geo;
        bool ok = false;
    };
    static model shape_model(const dims& d) {
        using spec::expr;
        namespace util = detail::nn;
        model m;
        auto& cs = m.constraints;
        const std::size_t r = d.x.size();
        cs.push_back({expr(r) >= 3, "X has rank >= 3: (N, C, D1, ...)"});
        cs.push_back({expr(d.w.size()) == expr(r), "W has the rank of X: (M, C/group, k1, ...)"});
        if (r < 3 || d.w.size() != r) return m;
        const std::size_t n = r - 2;
        cs.push_back({d.group >= 1, "group >= 1"});
        cs.push_back({d.x[1] == d.w[1] * d.group, "X channels C equal W.shape[1] * group"});
        cs.push_back({d.w[0] % max(d.group, expr(1)) == 0, "output channels M = W.shape[0] are a multiple of group"});
        if (d.b) {
            cs.push_back({expr(d.b->size()) == 1, "B is 1-D"});
            if (d.b->size() != 1) return m;
            cs.push_back({(*d.b)[0] == d.w[0], "B has one value per output channel M = W.shape[0]"});
        }
        if (!util::check_length(cs, d.kernel_shape, n, "kernel_shape", "one value per spatial axis")) return m;
        for (std::size_t i = 0; i < d.kernel_shape.size(); ++i) {
            cs.push_back({d.kernel_shape[i] == d.w[2 + i],
                          "kernel_shape equals W's spatial dims (spatial axis " + std::to_string(i) + ")"});
        }
        util::window_spec ws;
        ws.x = nn::tail(d.x, 2);
        ws.kernel = nn::tail(d.w, 2);
        ws.strides = d.strides;
        ws.dilations = d.dilations;
        ws.pads = d.pads;
        ws.auto_pad = d.auto_pad;
        m.geo = util::forward_window(ws);
        cs.insert(cs.end(), m.geo.constraints.begin(), m.geo.constraints.end());
        if (!m.geo.lengths_ok) return m;
        m.y = {d.x[0], d.w[0]};
        m.y.insert(m.y.end(), m.geo.out.begin(), m.geo.out.end());
        m.ok = true;
        return m;
    }
    template <int = 0>
    static dims context_dims(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        dims d;
        detail::nn::fill_conv_dims(d, c, a.auto_pad, op_type);
        return d;
    }

    /// The multiply-adds of X (shape xs) and W (shape ws), checked.
    static nn::conv_plan plan(const shape_type& xs, const shape_type& ws, const shape_type* bs, const attributes& at) {
        namespace util = detail::nn;
        dims d;
        util::fill_conv_dims_from_shapes(d, xs, ws, bs, at, op_type);
        const auto m = shape_model(d);
        util::check_constant(op_type, m.constraints);
        auto p = nn::conv_plan::of_shapes(xs, ws);
        p.os = util::values(m.geo.out);
        p.pb = util::values(m.geo.pad_begin);
        p.st = util::values(m.geo.stride);
        p.dl = util::values(m.geo.dilation);
        p.M = static_cast<std::int64_t>(ws[0]);
        p.Cg = static_cast<std::int64_t>(ws[1]);
        p.Mg = p.M / at.group;
        p.y = util::to_shape(util::values(m.y), op_type);
        return p;
    }
    /// fn(f, xoff, woff) for each product of Y[f]'s sum, output by output
    /// (row-major), then by input channel and kernel position; padded positions
    /// contribute nothing.
    template <class Fn>
    static void for_each_tap(const nn::conv_plan& p, Fn&& fn) {
        namespace util = detail::nn;
        const std::size_t last = p.n - 1;
        const std::vector<std::int64_t> outer_ks(p.ks.begin(), p.ks.end() - 1);
        std::size_t f = 0;
        for (std::int64_t bi = 0; bi < p.N; ++bi) {
            for (std::int64_t mi = 0; mi < p.M; ++mi) {
                const std::int64_t g = mi / p.Mg;
                util::for_each_index(p.os, [&](std::span<const std::int64_t> o) {
                    // The last kernel axis reads X at a + dl * k: only the k in
                    // [k_lo, k_hi) fall inside X, the rest are zero padding.
                    const std::int64_t a = p.st[last] * o[last] - p.pb[last], d = p.dl[last];
                    // (Named copies, not a structured binding: Clang 14 cannot capture one in the lambda below.)
                    const auto range = nn::taps_in_bounds(a, d, p.ks[last], p.xs[last]);
                    const std::int64_t k_lo = range.first, k_hi = range.second;
                    for (std::int64_t c = 0; c < p.Cg; ++c) {
                        util::for_each_index(outer_ks, [&](std::span<const std::int64_t> k) {
                            std::int64_t xoff = bi * p.C + g * p.Cg + c, woff = mi * p.Cg + c;
                            for (std::size_t i = 0; i < last; ++i) {
                                const std::int64_t xi = p.st[i] * o[i] + p.dl[i] * k[i] - p.pb[i];
                                if (xi < 0 || xi >= p.xs[i]) return;  // zero padding
                                xoff = xoff * p.xs[i] + xi;
                                woff = woff * p.ks[i] + k[i];
                            }
                            auto xo = static_cast<std::size_t>(xoff * p.xs[last] + a + d * k_lo);
                            auto wo = static_cast<std::size_t>(woff * p.ks[last] + k_lo);
                            for (std::int64_t kl = k_lo; kl < k_hi; ++kl, xo += static_cast<std::size_t>(d), ++wo) fn(f, xo, wo);
                        });
                    }
                    ++f;
                });
            }
        }
    }
    /// compute<T> as im2col + one GEMM per image and group through the
    /// plugged-in GEMM (ops/fast_paths.hpp), bias added after. Nothing when
    /// none is plugged in for T, a dim is 0 or a value is not finite.
    template <class T>
    static std::optional<tensor> fast(const spec::context& c, const attributes& at) {
        const tensor* bias = c.has_input(2) ? &c.input(2) : nullptr;
        const auto gemm = nn::fast_gemm_for<T>({&c.input(0), &c.input(1), bias});
        if (gemm == nullptr) return std::nullopt;
        namespace util = detail::nn;
        const tensor& x = c.input(0);
        const tensor& w = c.input(1);
        dims d;
        util::fill_conv_dims_from_shapes(d, x.shape(), w.shape(), bias ? &bias->shape() : nullptr, at, op_type);
        const auto m = shape_model(d);
        util::check_constant(op_type, m.constraints);
        const std::size_t n = x.rank() - 2;
        const auto os = util::values(m.geo.out), pb = util::values(m.geo.pad_begin);
        const auto st = util::values(m.geo.stride), dl = util::values(m.geo.dilation);
        const std::size_t N = x.shape()[0], C = x.shape()[1], M = w.shape()[0], Cg = w.shape()[1];
        const auto groups = static_cast<std::size_t>(at.group), Mg = M / groups;
        std::vector<std::int64_t> xs, ks;
        std::size_t P = 1, Kk = 1, X = 1;
        for (std::size_t i = 0; i < n; ++i) {
            xs.push_back(static_cast<std::int64_t>(x.shape()[i + 2]));
            ks.push_back(static_cast<std::int64_t>(w.shape()[i + 2]));
            P *= static_cast<std::size_t>(os[i]);
            Kk *= w.shape()[i + 2];
            X *= x.shape()[i + 2];
        }
        const std::size_t rows = Cg * Kk;
        if (N == 0 || Mg == 0 || P == 0 || rows == 0) return std::nullopt;
        auto y = tensor::for_overwrite(dtype_of<T>, util::to_shape(util::values(m.y), op_type));
        const T* px = x.values<T>().data();
        const T* pw = w.values<T>().data();
        T* py = y.template values<T>().data();
        std::vector<T> col(rows * P);
        const std::size_t last = n - 1, run = static_cast<std::size_t>(os[last]);
        std::vector<std::int64_t> k(n), o(n);
        for (std::size_t bi = 0; bi < N; ++bi) {
            for (std::size_t g = 0; g < groups; ++g) {
                // col[(c, k), p] = X[bi, g Cg + c, st p + dl k - pad], 0 in the padding.
                for (std::size_t ci = 0; ci < Cg; ++ci) {
                    const T* xc = px + (bi * C + g * Cg + ci) * X;
                    std::fill(k.begin(), k.end(), 0);
                    for (std::size_t kk = 0; kk < Kk; ++kk) {
                        T* dst = col.data() + (ci * Kk + kk) * P;
                        std::fill(o.begin(), o.end(), 0);
                        for (std::size_t p = 0; p < P; p += run) {
                            bool inside = true;
                            std::int64_t xoff = 0;
                            for (std::size_t i = 0; i < last; ++i) {
                                const std::int64_t xi = st[i] * o[i] + dl[i] * k[i] - pb[i];
                                inside = inside && xi >= 0 && xi < xs[i];
                                xoff = xoff * xs[i] + xi;
                            }
                            // The last axis: x index st*ol + off lies in [0, xs) for ol in [lo, hi);
                            // zeros before and after, a strided copy between (no test per element).
                            const std::int64_t off = dl[last] * k[last] - pb[last], s = st[last];
                            std::size_t lo = run, hi = run;
                            if (inside) {
                                const std::int64_t first = off >= 0 ? 0 : (-off + s - 1) / s;
                                const std::int64_t end = xs[last] - off <= 0 ? 0 : (xs[last] - off + s - 1) / s;
                                lo = static_cast<std::size_t>(std::min<std::int64_t>(first, static_cast<std::int64_t>(run)));
                                hi = std::max(lo, static_cast<std::size_t>(std::min<std::int64_t>(end, static_cast<std::int64_t>(run))));
                            }
                            T* row = dst + p;
                            std::fill(row, row + lo, T(0));
                            const std::int64_t base = xoff * xs[last] + off;
                            if (s == 1 && lo < hi) {
                                std::copy_n(xc + static_cast<std::size_t>(base + static_cast<std::int64_t>(lo)), hi - lo, row + lo);
                            } else {
                                for (std::size_t ol = lo; ol < hi; ++ol) {
                                    row[ol] = xc[static_cast<std::size_t>(base + static_cast<std::int64_t>(ol) * s)];
                                }
                            }
                            std::fill(row + hi, row + run, T(0));
                            for (std::size_t i = last; i-- > 0;) {  // odometer over the outer output axes
                                if (++o[i] < os[i]) break;
                                o[i] = 0;
                            }
                        }
                        for (std::size_t i = n; i-- > 0;) {  // odometer over the kernel window
                            if (++k[i] < ks[i]) break;
                            k[i] = 0;
                        }
                    }
                }
                T* yg = py + (bi * M + g * Mg) * P;
                gemm(false, false, Mg, P, rows, T(1), pw + g * Mg * rows, rows, col.data(), P, T(0), yg, P);
                if (bias) {
                    const T* pbias = bias->values<T>().data() + g * Mg;
                    for (std::size_t mi = 0; mi < Mg; ++mi) {
                        for (std::size_t p = 0; p < P; ++p) yg[mi * P + p] += pbias[mi];
                    }
                }
            }
        }
        return y;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().weights({1, 2})
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.4)
            .solve("group", 1, 16, 0.5)
            .range(0, -2, 2)
            .range(1, -1, 1)
            .range(2, -1, 1)
            // each output element: one multiply-add per weight of its group
            .work([](const spec::context& c, const std::vector<std::vector<spec::expr>>& out) {
                return spec::product(out[0]) * spec::product(nn::tail(c.shape(1), 1));
            })
            .visits([](const spec::context& c) { return nn::conv_visited_work<Conv>(c, false); })
            .facts([](std::span<const spec::value_facts> in, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                return nn::untouched_output_facts<Conv>(in, attrs, shapes, false);  // a window wholly in the padding
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::conv_attr, auto_pad, dilations, group, kernel_shape, pads, strides);
