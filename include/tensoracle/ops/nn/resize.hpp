// tensoracle: Resize (nearest, linear or cubic interpolation of X to new sizes or scales).
//
// Resize follows the ONNX 1.12 reference implementation (the one that made
// the test data): the coordinate transforms use length_resized =
// scale * length_original as a real number, taps are picked from the
// edge-padded input, exclude_outside renormalizes the weights inside X
// (kept edge-clamped when no weight is left inside); with scales, the
// output size is floor(x * scale) (roi does not scale it). X of any type:
// integer and bool images interpolate in double and truncate once.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/nn/detail/resize_impl.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// Resize(X, roi?, scales?, sizes?): exactly one of scales (float32) and sizes
/// (int64) is given and non-empty; roi is used by tf_crop_and_resize only.
// Derivatives: X only: roi and scales are grid parameters (the coordinates are computed
// in double, and scales also fix the output shape), not data.
struct Resize : spec::dtype_of_input<0>, spec::differentiable_input<0> {
    static constexpr std::string_view op_type = "Resize";
    static constexpr int opset = 13;
    using attributes = resize_attr;
    static constexpr spec::dtype_set types = spec::types::all;
    static constexpr std::array<spec::value_spec, 4> inputs{{{"X", types, {1, 8}},
                                                             {"roi", spec::types::ieee_floating, {1, 1}, "T2", true},
                                                             {"scales", spec::dtypes_of(dtype::f32), {1, 1}, "Tscales", true},
                                                             {"sizes", spec::types::int64, {1, 1}, "Tsizes", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {1, 8}}}};

    static bool given(const spec::context& c, std::size_t i) { return c.has_input(i) && c.element_count(i) > 0; }

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        using spec::expr;
        const auto s = nn::resize_impl::parse(spec::parse_attributes<attributes>(c.attributes(), op_type), op_type);
        const std::size_t r = c.rank(0);
        const bool has_scales = given(c, 2), has_sizes = given(c, 3);
        std::vector<spec::constraint> cs{{expr(has_scales != has_sizes), "exactly one of scales and sizes is given"}};
        if (has_scales) {
            cs.push_back({c.dim(2, 0) == expr(r), "scales has one value per axis of X"});
            if (c.element_count(2) == r) (void)nn::resize_impl::scaled_dims(c.concrete_shape(0), c.input(2).values<float>(), op_type);
        }
        if (has_sizes) {
            cs.push_back({c.dim(3, 0) == expr(r), "sizes has one value per axis of X"});
            if (c.element_count(3) == r) {
                const auto v = c.values(3);
                for (std::size_t i = 0; i < r; ++i) {
                    cs.push_back({v[i] >= 0, "sizes >= 0 (axis " + std::to_string(i) + ")"});
                    cs.push_back({c.dim(0, i) >= 1 || v[i] == 0, "an empty axis resizes to 0 (axis " + std::to_string(i) + ")"});
                }
            }
        }
        if (s.ctm == nn::resize_impl::ctm_t::tf_crop_and_resize) {
            cs.push_back({expr(c.has_input(1)), "tf_crop_and_resize needs roi"});
            if (c.has_input(1)) cs.push_back({c.dim(1, 0) == expr(2 * r), "roi has a start and an end per axis of X"});
        }
        return cs;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        if (given(c, 3)) return {c.values(3)};
        const auto d = nn::resize_impl::scaled_dims(c.concrete_shape(0), c.input(2).values<float>(), op_type);
        std::vector<spec::expr> y;
        for (const auto v : d) y.emplace_back(v);
        return {y};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        return {{{out}, {rank}}, {types.members(), {1}}, {{dtype::f32}, {1}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// scales or sizes: exactly one non-empty. roi: 2 * rank values or empty.
    template <class T>
    static array<T> compute(const array<T>& x, const std::vector<double>& roi, const std::vector<float>& scales,
                            const std::vector<std::int64_t>& sizes, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Resize, T>::value);
        const auto s = nn::resize_impl::parse(a, op_type);
        const std::size_t r = x.dimension();
        const shape_type xs(x.shape().begin(), x.shape().end());
        if (scales.empty() == sizes.empty()) throw shape_error(std::string(op_type), "exactly one of scales and sizes must be given");
        std::vector<std::int64_t> out;
        std::vector<double> sc(r);
        if (!sizes.empty()) {
            if (sizes.size() != r) throw shape_error(std::string(op_type), "sizes must have one value per axis of X");
            out = sizes;
            for (std::size_t i = 0; i < r; ++i) {
                if (out[i] < 0) throw shape_error(std::string(op_type), "sizes must be >= 0");
                sc[i] = xs[i] == 0 ? 1.0 : static_cast<double>(out[i]) / static_cast<double>(xs[i]);
            }
        } else {
            out = nn::resize_impl::scaled_dims(xs, scales, op_type);
            for (std::size_t i = 0; i < r; ++i) sc[i] = static_cast<double>(scales[i]);
        }
        if (s.ctm == nn::resize_impl::ctm_t::tf_crop_and_resize && roi.size() != 2 * r) {
            throw shape_error(std::string(op_type), "tf_crop_and_resize needs roi with a start and an end per axis");
        }
        return nn::resize_impl::interpolate(x, out, sc, s.ctm == nn::resize_impl::ctm_t::tf_crop_and_resize ? roi : std::vector<double>{},
                                            s, op_type);
    }
    /// roi, scales and sizes as compute takes them (empty when absent).
    struct params {
        std::vector<double> roi;
        std::vector<float> scales;
        std::vector<std::int64_t> sizes;
    };
    static params read_params(const spec::context& c) {
        params p;
        if (c.has_input(1)) {
            const auto v = c.input(1).to<double>();
            p.roi.assign(v.begin(), v.end());
        }
        if (given(c, 2)) {
            const auto v = c.input(2).values<float>();
            p.scales.assign(v.begin(), v.end());
        }
        if (given(c, 3)) {
            const auto v = c.input(3).values<std::int64_t>();
            p.sizes.assign(v.begin(), v.end());
        }
        return p;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto p = read_params(c);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), p.roi, p.scales, p.sizes, at));
        }));
    }
    /// The kernel on AD scalar S. The interpolation weights depend on
    /// coordinates only, so Y is linear in X; an integer X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        const auto p = read_params(c);
        return {compute<S>(x[0], p.roi, p.scales, p.sizes, at)};
    }
    /// Nearest picks input elements and linear weighs two neighbours per axis by
    /// weights in [0, 1] (edges repeated): both stay within X's range, plus the
    /// extrapolation value under tf_crop_and_resize. Cubic overshoots: unknown.
    template <int = 0>
    static std::vector<spec::value_facts> interpolation_facts(std::span<const spec::value_facts> in,
                                                              const spec::attribute_map& attrs, std::span<const shape_type>) {
        const auto at = spec::parse_attributes<attributes>(attrs, op_type);
        if (in.empty() || (at.mode != "nearest" && at.mode != "linear")) return {spec::value_facts{}};
        auto f = at.mode == "nearest" ? in[0].selection() : in[0].range_only();
        if (at.coordinate_transformation_mode == "tf_crop_and_resize") {  // may appear, is not forced to
            f.integral = f.integral && static_cast<double>(at.extrapolation_value) == std::floor(at.extrapolation_value);
            f.lo = std::min(f.lo, static_cast<double>(at.extrapolation_value));
            f.hi = std::max(f.hi, static_cast<double>(at.extrapolation_value));
        }
        return {f};
    }
    template <int = 0>
    static spec::hints hints() {
        const auto floats = [](rng& g, std::size_t n, double lo, double hi) {
            auto t = array<float>::from_shape({n});
            for (std::size_t i = 0; i < n; ++i) t.data()[i] = static_cast<float>(g.uniform(lo, hi));
            return tensor(t);
        };
        return spec::hints{}
            .facts(interpolation_facts<>)
            .choice("mode", {std::string("nearest"), std::string("linear"), std::string("cubic")}, 0.8)
            // Each output element reads 1 (nearest), 2 (linear) or 4 (cubic) taps along every axis.
            .work([](const spec::context& c, const std::vector<std::vector<spec::expr>>& out) {
                const auto it = c.attributes().find("mode");
                const auto* mode = it != c.attributes().end() ? std::get_if<std::string>(&it->second) : nullptr;
                const std::int64_t per_axis = mode == nullptr || *mode == "nearest" ? 1 : (*mode == "linear" ? 2 : 4);
                std::int64_t taps = 1;
                for (std::size_t a = 0; a < c.rank(0); ++a) taps *= per_axis;
                return spec::product(out[0]) * taps;
            })
            .choice("coordinate_transformation_mode",
                    {std::string("half_pixel"), std::string("pytorch_half_pixel"), std::string("align_corners"),
                     std::string("asymmetric"), std::string("tf_half_pixel_for_nn"), std::string("tf_crop_and_resize")},
                    0.8)
            .choice("nearest_mode", {std::string("round_prefer_floor"), std::string("round_prefer_ceil"), std::string("floor"), std::string("ceil")}, 0.5)
            .real("cubic_coeff_a", -0.75, -0.5, 0.3)
            .flag("exclude_outside", 0.3)
            .real("extrapolation_value", -10.0, 10.0, 0.3)
            .optional_input(1, 0.3)
            .optional_input(2, 0.5)
            .optional_input(3, 0.5)
            .before_solving(1, [floats](rng& g, const spec::context& c) {  // roi: starts in [0, 0.3], ends in [0.7, 1]
                const std::size_t r = c.rank(0);
                tensor t = floats(g, 2 * r, 0.0, 0.3);
                for (std::size_t i = 0; i < r; ++i) t.values<float>()[r + i] = static_cast<float>(g.uniform(0.7, 1.0));
                return t.cast(c.input_dtype(1));
            })
            .before_solving(2, [](rng& g, const spec::context& c) {  // scales: a few exact binary fractions
                static constexpr std::array<float, 6> choices{0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 3.0f};
                auto t = array<float>::from_shape({c.rank(0)});
                for (auto& v : t) v = choices[static_cast<std::size_t>(g.below(choices.size()))];
                return tensor(t);
            });
    }
};

}  // namespace tensoracle::ops
