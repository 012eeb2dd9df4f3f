// tensoracle: the windows of MaxPool and AveragePool: their shared shape model
// (pool_shape_model), work estimate (pool_work), the in-bounds taps of one window
// (window_taps) and all windows over X (pool_windows).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tensoracle/ops/detail/nn_util.hpp"
#include "tensoracle/ops/nn/detail/helpers.hpp"
#include "tensoracle/ops/nn/detail/tap_bounds.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace nn {
/// The pools' shared shape model: rank, kernel_shape and the window geometry.
struct pool_model {
    std::vector<constraint> constraints;
    std::vector<expr> y;
    util::window_geometry geo;
    bool ok = false;
};
inline pool_model pool_shape_model(const std::vector<expr>& x, const std::vector<expr>& kernel_shape,
                                   const std::vector<expr>& strides, const std::vector<expr>& dilations,
                                   const std::vector<expr>& pads, util::auto_pad_mode auto_pad, const expr& ceil_mode) {
    pool_model m;
    auto& cs = m.constraints;
    const std::size_t r = x.size();
    cs.push_back({expr(r) >= 3, "X has rank >= 3: (N, C, D1, ...)"});
    if (r < 3) return m;
    const std::size_t n = r - 2;
    cs.push_back({spec::list_length(kernel_shape) == expr(n), "kernel_shape has one value per spatial axis"});
    if (kernel_shape.size() != n) return m;
    util::window_spec ws;
    ws.x = tail(x, 2);
    ws.kernel = kernel_shape;
    ws.strides = strides;
    ws.dilations = dilations;
    ws.pads = pads;
    ws.auto_pad = auto_pad;
    ws.ceil_mode = ceil_mode;
    ws.pads_below_kernel = true;
    m.geo = util::forward_window(ws);
    cs.insert(cs.end(), m.geo.constraints.begin(), m.geo.constraints.end());
    if (!m.geo.lengths_ok) return m;
    m.y = {x[0], x[1]};
    m.y.insert(m.y.end(), m.geo.out.begin(), m.geo.out.end());
    m.ok = true;
    return m;
}

/// The pools' work estimate (spec::hints::work): one step per window element per output.
inline spec::expr pool_work(const spec::context& c, const std::vector<std::vector<spec::expr>>& out) {
    return spec::product(out[0]) * spec::product(c.attr_ints("kernel_shape"));
}

/// The taps of one pooling window that lie inside X, in row-major kernel
/// order (the order the ONNX formula sums and compares them in): each tap
/// p_i = stride_i * o_i + dilation_i * k_i - pad_begin_i inside [0, X_i) on
/// every axis. The in-bounds kernel positions form a box, found per axis
/// (taps_in_bounds), so no tap is tested for padding one by one.
class window_taps {
public:
    /// dl empty: dilation 1 on every axis (AveragePool).
    window_taps(std::span<const std::int64_t> xs, std::span<const std::int64_t> ks, std::span<const std::int64_t> st,
                std::span<const std::int64_t> dl, std::span<const std::int64_t> pb)
        : xs_(xs), ks_(ks), st_(st), pb_(pb), n_(xs.size()), dl_(n_, 1), lo_(n_), hi_(n_), k_(n_), rs_(n_), cs_(n_) {
        if (!dl.empty()) dl_.assign(dl.begin(), dl.end());
        for (std::size_t i = n_, r = 1; i-- > 0;) {
            rs_[i] = static_cast<std::int64_t>(r);
            r *= static_cast<std::size_t>(xs[i]);
        }
        for (std::size_t i = 0, c = 1; i < n_; ++i) {
            cs_[i] = static_cast<std::int64_t>(c);
            c *= static_cast<std::size_t>(xs[i]);
        }
    }
    /// How many in-bounds taps output position o has.
    [[nodiscard]] std::int64_t count(std::span<const std::int64_t> o) const {
        std::int64_t c = 1;
        for (std::size_t i = 0; i < n_; ++i) {
            const auto range = taps_in_bounds(st_[i] * o[i] - pb_[i], dl_[i], ks_[i], xs_[i]);
            c *= std::max<std::int64_t>(range.second - range.first, 0);
        }
        return c;
    }
    /// fn(row, column) for each in-bounds tap of output position o: the tap's
    /// offset in its plane, row-major and column-major (MaxPool's storage_order 1).
    template <class Fn>
    void visit(std::span<const std::int64_t> o, Fn&& fn) {
        std::int64_t row = 0, col = 0;
        for (std::size_t i = 0; i < n_; ++i) {
            const std::int64_t a = st_[i] * o[i] - pb_[i];
            const auto range = taps_in_bounds(a, dl_[i], ks_[i], xs_[i]);
            if (range.first >= range.second) return;
            lo_[i] = k_[i] = range.first;
            hi_[i] = range.second;
            row += (a + dl_[i] * range.first) * rs_[i];
            col += (a + dl_[i] * range.first) * cs_[i];
        }
        // The last axis as one run; the axes before it as an odometer.
        const std::size_t last = n_ - 1;
        const std::int64_t run = hi_[last] - lo_[last], row_step = dl_[last], col_step = dl_[last] * cs_[last];
        for (;;) {
            for (std::int64_t j = 0, r = row, c = col; j < run; ++j, r += row_step, c += col_step) fn(r, c);
            for (std::size_t i = last;;) {
                if (i == 0) return;
                --i;
                if (++k_[i] < hi_[i]) {
                    row += dl_[i] * rs_[i];
                    col += dl_[i] * cs_[i];
                    break;
                }
                row -= (hi_[i] - 1 - lo_[i]) * dl_[i] * rs_[i];
                col -= (hi_[i] - 1 - lo_[i]) * dl_[i] * cs_[i];
                k_[i] = lo_[i];
            }
        }
    }

private:
    std::span<const std::int64_t> xs_, ks_, st_, pb_;
    std::size_t n_;
    std::vector<std::int64_t> dl_, lo_, hi_, k_, rs_, cs_;  // dilations, box, odometer, row- and column-major strides
};

/// A pool's windows over X (shape model checked), shared by MaxPool and
/// AveragePool, compute and vjp: for_each calls fn(f, base, o, taps) for each
/// output f, with base the offset of its plane in X, o its spatial position
/// and taps its in-bounds taps (taps.visit(o, ...)).
class pool_windows {
public:
    /// dilations empty: 1 on every axis (AveragePool has none).
    template <class Shape>
    pool_windows(std::string_view op_type, const Shape& x_shape, const std::vector<std::int64_t>& kernel_shape,
                 const std::vector<std::int64_t>& strides, const std::vector<std::int64_t>& dilations,
                 const std::vector<std::int64_t>& pads, std::string_view auto_pad, std::int64_t ceil_mode) {
        namespace util = detail::nn;
        const auto m = pool_shape_model(util::constants(x_shape), util::constants(kernel_shape), util::constants(strides),
                                        util::constants(dilations), util::constants(pads),
                                        util::parse_auto_pad(auto_pad, op_type), spec::expr(ceil_mode));
        util::check_constant(op_type, m.constraints);
        const auto yd = util::values(m.y);
        for (std::size_t i = 2; i < x_shape.size(); ++i) xs_.push_back(static_cast<std::int64_t>(x_shape[i]));
        os_.assign(yd.begin() + 2, yd.end());
        ks_ = kernel_shape;
        pb_ = util::values(m.geo.pad_begin);
        pe_ = util::values(m.geo.pad_end);
        st_ = util::values(m.geo.stride);
        dl_ = util::values(m.geo.dilation);
        planes_ = static_cast<std::int64_t>(x_shape[0] * x_shape[1]);
        plane_ = util::count(xs_);
        y_ = util::to_shape(yd, op_type);
    }
    [[nodiscard]] const shape_type& y() const noexcept { return y_; }
    /// The taps for_each visits, plus one step per window (hints' visits).
    [[nodiscard]] double visited_taps() const {
        double taps = 1.0, windows = 1.0;
        for (std::size_t i = 0; i < xs_.size(); ++i) {
            taps *= axis_taps(os_[i], st_[i], pb_[i], dl_[i], ks_[i], xs_[i]);
            windows *= static_cast<double>(os_[i]);
        }
        return static_cast<double>(planes_) * (taps + windows);
    }
    template <class Fn>
    void for_each(Fn&& fn) const {
        window_taps taps(xs_, ks_, st_, dl_, pb_);
        std::size_t f = 0;
        for (std::int64_t pl = 0; pl < planes_; ++pl) {
            detail::nn::for_each_index(os_, [&](std::span<const std::int64_t> o) { fn(f++, pl * plane_, o, taps); });
        }
    }
    /// AveragePool's divisor at o: its in-bounds taps, or with include_pad the
    /// pads too but not the taps past them that ceil_mode adds (per axis,
    /// positions before X_i + pad_end_i). 0 for a window wholly in padding.
    [[nodiscard]] std::int64_t divisor(std::span<const std::int64_t> o, const window_taps& taps, bool include_pad) const {
        if (!include_pad) return taps.count(o);
        std::int64_t d = 1;
        for (std::size_t i = 0; i < xs_.size(); ++i) {
            d *= std::clamp<std::int64_t>(xs_[i] + pe_[i] - (st_[i] * o[i] - pb_[i]), 0, ks_[i]);
        }
        return d;
    }

private:
    std::vector<std::int64_t> xs_, os_, ks_, pb_, pe_, st_, dl_;
    std::int64_t planes_ = 0, plane_ = 0;
    shape_type y_;
};
}  // namespace nn

}  // namespace tensoracle::ops
