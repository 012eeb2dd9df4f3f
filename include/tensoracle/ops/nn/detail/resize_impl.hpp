// tensoracle: Resize's interpolation (resize_impl) and its attributes (resize_attr), shared
// by Resize and Upsample.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/nn_util.hpp"
#include "tensoracle/ops/nn/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct resize_attr {
    std::string coordinate_transformation_mode = "half_pixel";
    float cubic_coeff_a = -0.75f;
    std::int64_t exclude_outside = 0;
    float extrapolation_value = 0.0f;
    std::string mode = "nearest";
    std::string nearest_mode = "round_prefer_floor";
};

namespace nn {
/// Resize's interpolation (the ONNX 1.12 reference, resize.py, transcribed).
struct resize_impl {
    enum class mode_t : std::uint8_t { nearest, linear, cubic };
    enum class ctm_t : std::uint8_t { half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize };
    enum class nearest_t : std::uint8_t { round_prefer_floor, round_prefer_ceil, floor, ceil };
    struct settings {
        mode_t mode;
        ctm_t ctm;
        nearest_t nearest;
        double cubic_a;
        bool exclude_outside;
        double extrapolation;
    };
    static settings parse(const resize_attr& a, std::string_view op_type) {
        settings s{};
        const std::string where(op_type);
        if (a.mode == "nearest") s.mode = mode_t::nearest;
        else if (a.mode == "linear") s.mode = mode_t::linear;
        else if (a.mode == "cubic") s.mode = mode_t::cubic;
        else throw error(where, "mode must be nearest, linear or cubic, got '" + a.mode + "'");
        const auto& c = a.coordinate_transformation_mode;
        if (c == "half_pixel") s.ctm = ctm_t::half_pixel;
        else if (c == "pytorch_half_pixel") s.ctm = ctm_t::pytorch_half_pixel;
        else if (c == "align_corners") s.ctm = ctm_t::align_corners;
        else if (c == "asymmetric") s.ctm = ctm_t::asymmetric;
        else if (c == "tf_half_pixel_for_nn") s.ctm = ctm_t::tf_half_pixel_for_nn;
        else if (c == "tf_crop_and_resize") s.ctm = ctm_t::tf_crop_and_resize;
        else throw error(where, "unknown coordinate_transformation_mode '" + c + "'");
        if (a.nearest_mode == "round_prefer_floor") s.nearest = nearest_t::round_prefer_floor;
        else if (a.nearest_mode == "round_prefer_ceil") s.nearest = nearest_t::round_prefer_ceil;
        else if (a.nearest_mode == "floor") s.nearest = nearest_t::floor;
        else if (a.nearest_mode == "ceil") s.nearest = nearest_t::ceil;
        else throw error(where, "unknown nearest_mode '" + a.nearest_mode + "'");
        s.cubic_a = static_cast<double>(a.cubic_coeff_a);
        s.exclude_outside = a.exclude_outside != 0;
        s.extrapolation = static_cast<double>(a.extrapolation_value);
        if (!std::isfinite(s.cubic_a)) throw error(where, "cubic_coeff_a must be finite");
        return s;
    }

    /// floor(x * scale) per axis; scales must be positive and finite.
    static std::vector<std::int64_t> scaled_dims(const shape_type& x, std::span<const float> scales, std::string_view op_type) {
        if (scales.size() != x.size()) {
            throw shape_error(std::string(op_type), "scales has " + std::to_string(scales.size()) + " values for rank " +
                                                        std::to_string(x.size()));
        }
        std::vector<std::int64_t> out;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double s = static_cast<double>(scales[i]);
            if (!(s > 0.0) || !std::isfinite(s)) {
                throw error(std::string(op_type), "scales must be positive and finite, got " + std::to_string(s));
            }
            const double v = std::floor(s * static_cast<double>(x[i]));
            if (!(v < 0x1p31)) throw shape_error(std::string(op_type), "scaled output dim is too large");
            out.push_back(static_cast<std::int64_t>(v));
        }
        return out;
    }

    struct taps {
        bool extrapolate = false;
        std::vector<std::int64_t> index;
        std::vector<double> weight;
    };
    static std::vector<double> coeffs(const settings& s, double ratio, bool integral) {
        switch (s.mode) {
            case mode_t::nearest:
                if (integral) return {0.0, 1.0};
                switch (s.nearest) {
                    case nearest_t::round_prefer_floor: return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
                    case nearest_t::round_prefer_ceil: return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
                    case nearest_t::floor: return {1.0, 0.0};
                    case nearest_t::ceil: return {0.0, 1.0};
                }
                return {};
            case mode_t::linear: return {1.0 - ratio, ratio};
            case mode_t::cubic: {
                const double A = s.cubic_a, r = ratio, q = 1.0 - ratio;
                return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
                        ((A + 2) * r - (A + 3)) * r * r + 1,
                        ((A + 2) * q - (A + 3)) * q * q + 1,
                        ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A};
            }
        }
        return {};
    }
    /// Taps of output coordinate x along an axis of `in` elements.
    static taps axis_taps(const settings& s, std::int64_t x_resized, std::int64_t in, double scale, double roi_start,
                          double roi_end, std::string_view op_type) {
        const double x = static_cast<double>(x_resized), len = static_cast<double>(in);
        const double out_w = scale * len;  // the reference's output_width (a real number)
        double xo = 0.0;
        taps t;
        switch (s.ctm) {
            case ctm_t::align_corners: xo = out_w == 1.0 ? 0.0 : x * (len - 1) / (out_w - 1); break;
            case ctm_t::asymmetric: xo = x / scale; break;
            case ctm_t::tf_crop_and_resize:
                xo = out_w == 1.0 ? (roi_end - roi_start) * (len - 1) / 2 : x * (roi_end - roi_start) * (len - 1) / (out_w - 1);
                xo += roi_start * (len - 1);
                if (xo < 0 || xo > len - 1) {
                    t.extrapolate = true;
                    return t;
                }
                break;
            case ctm_t::pytorch_half_pixel: xo = out_w == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5; break;
            case ctm_t::half_pixel: xo = (x + 0.5) / scale - 0.5; break;
            case ctm_t::tf_half_pixel_for_nn: xo = (x + 0.5) / scale; break;
        }
        if (!std::isfinite(xo) || std::fabs(xo) > 0x1p40) {
            throw error(std::string(op_type), "source coordinate " + std::to_string(xo) + " is out of range");
        }
        const double fl = std::floor(xo);
        const bool integral = xo == fl;
        const double ratio = integral ? 1.0 : xo - fl;
        auto w = coeffs(s, ratio, integral);
        const auto n = static_cast<std::int64_t>(w.size());
        const std::int64_t p = (n + 1) / 2;  // edge padding of the reference
        const std::int64_t L = in + 2 * p;
        // The n padded indices nearest to xo + p (ties to the lower index), kept inside [0, L).
        std::int64_t start = static_cast<std::int64_t>(std::ceil(xo + static_cast<double>(p))) - n / 2;
        start = std::clamp<std::int64_t>(start, 0, L - n);
        std::vector<double> inside = w;
        double sum = 0;
        for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t idx = start + j - p;
            if (idx < 0 || idx >= in) inside[static_cast<std::size_t>(j)] = 0.0;
            sum += inside[static_cast<std::size_t>(j)];
            t.index.push_back(std::clamp<std::int64_t>(idx, 0, in - 1));
        }
        // exclude_outside renormalizes the weights inside X. When none is left
        // (only nearest can pick a tap outside alone), the reference divides by
        // zero; we keep the edge-clamped tap instead.
        if (s.exclude_outside && sum != 0.0) {
            for (double& v : inside) v /= sum;
            w = std::move(inside);
        }
        t.weight = std::move(w);
        return t;
    }

    /// Y from X, output dims, per-axis scales (used by the coordinate transforms) and roi.
    template <class T>
    static array<T> interpolate(const array<T>& x, const std::vector<std::int64_t>& out, const std::vector<double>& scales,
                                const std::vector<double>& roi, const settings& s, std::string_view op_type) {
        // Integer and bool images interpolate in double and truncate once (ONNX's
        // reference: numpy, then astype); nearest picks stay exact.
        using acc = std::conditional_t<std::is_integral_v<T>, double, acc_t<T>>;
        namespace util = detail::nn;
        const auto xd = util::dims_of(x);
        const std::size_t r = xd.size();
        std::vector<std::vector<taps>> axis(r);
        for (std::size_t i = 0; i < r; ++i) {
            if (xd[i] == 0 && out[i] != 0) throw shape_error(std::string(op_type), "cannot resize an empty axis to a non-empty one");
            for (std::int64_t o = 0; o < out[i] && xd[i] > 0; ++o) {
                const double rs = roi.empty() ? 0.0 : roi[i], re = roi.empty() ? 1.0 : roi[r + i];
                axis[i].push_back(axis_taps(s, o, xd[i], scales[i], rs, re, op_type));
            }
        }
        auto y = array<T>::from_shape(util::to_shape(out, op_type));
        const auto xstrides = detail::strides_of(shape_type(x.shape().begin(), x.shape().end()));
        std::size_t f = 0;
        // Scratch reused across output elements (the loops run per element).
        std::vector<const taps*> tp(r);
        std::vector<std::size_t> counts(r), j(r);
        util::for_each_index(out, [&](std::span<const std::int64_t> o) {
            bool empty = false;
            for (std::size_t i = 0; i < r; ++i) {
                tp[i] = &axis[i][static_cast<std::size_t>(o[i])];
                if (tp[i]->extrapolate) {
                    y.data()[f++] = value_cast<T>(s.extrapolation);
                    return;
                }
                counts[i] = tp[i]->index.size();
                empty = empty || counts[i] == 0;
            }
            acc sum = 0;
            // Every tap combination, row-major (the last axis fastest).
            std::fill(j.begin(), j.end(), std::size_t{0});
            for (bool more = !empty; more;) {
                double w = 1.0;
                std::size_t off = 0;
                for (std::size_t i = 0; i < r; ++i) {
                    w *= tp[i]->weight[j[i]];
                    off += static_cast<std::size_t>(tp[i]->index[j[i]]) * xstrides[i];
                }
                sum += static_cast<acc>(w) * static_cast<acc>(x.data()[off]);
                more = false;
                for (std::size_t i = r; i-- > 0;) {
                    if (++j[i] < counts[i]) {
                        more = true;
                        break;
                    }
                    j[i] = 0;
                }
            }
            y.data()[f++] = value_cast<T>(sum);
        });
        return y;
    }
};
}  // namespace nn

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::resize_attr, coordinate_transformation_mode, cubic_coeff_a, exclude_outside,
                        extrapolation_value, mode, nearest_mode);
