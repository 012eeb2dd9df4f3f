// tensoracle: Upsample (deprecated Resize: opset 9 only).
//
// Upsample-9 is Resize with asymmetric coordinates, nearest_mode floor
// (nearest) or linear, scales >= 1.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/nn/detail/resize_impl.hpp"
#include "tensoracle/ops/nn/resize.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct upsample_attr {
    std::string mode = "nearest";
};

/// Upsample-9(X, scales): deprecated Resize; asymmetric coordinates, nearest
/// rounds down, linear interpolates; scales >= 1, output floor(x * scale).
// Derivatives: X only: the (float) scales set the geometry, they are not data.
struct Upsample : spec::dtype_of_input<0>, spec::differentiable_input<0> {
    static constexpr std::string_view op_type = "Upsample";
    static constexpr int opset = 9;
    static constexpr int last_opset = 9;  // deprecated from opset 10 on (Resize replaces it)
    using attributes = upsample_attr;
    static constexpr spec::dtype_set types = spec::types::ieee_floating | spec::types::integers | spec::types::boolean;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"X", types, {1, 8}}, {"scales", spec::dtypes_of(dtype::f32), {1, 1}, "Tscales"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {1, 8}}}};

    static resize_attr as_resize(const attributes& a) {
        if (a.mode != "nearest" && a.mode != "linear") {
            throw error(std::string(op_type), "mode must be nearest or linear, got '" + a.mode + "'");
        }
        resize_attr r;
        r.mode = a.mode;
        r.coordinate_transformation_mode = "asymmetric";
        r.nearest_mode = "floor";
        return r;
    }
    static void check_scales(std::span<const float> s) {
        for (const float v : s) {
            if (!(v >= 1.0f) || !std::isfinite(v)) throw error(std::string(op_type), "scales must be finite and >= 1");
        }
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        (void)as_resize(spec::parse_attributes<attributes>(c.attributes(), op_type));
        check_scales(c.input(1).values<float>());
        return {{c.dim(1, 0) == spec::expr(c.rank(0)), "scales has one value per axis of X"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto d = nn::resize_impl::scaled_dims(c.concrete_shape(0), c.input(1).values<float>(), op_type);
        std::vector<spec::expr> y;
        for (const auto v : d) y.emplace_back(v);
        return {y};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        return {{{out}, {rank}}, {{dtype::f32}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, const std::vector<float>& scales, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Upsample, T>::value);
        check_scales(scales);
        return Resize::compute<T>(x, {}, scales, {}, as_resize(a));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto scales = scales_of(c);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), scales, at));
        }));
    }
    static std::vector<float> scales_of(const spec::context& c) {
        const auto v = c.input(1).values<float>();
        return {v.begin(), v.end()};
    }
    /// The kernel on AD scalar S (linear in X); an integer X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute<S>(x[0], scales_of(c), at)};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .choice("mode", {std::string("nearest"), std::string("linear")}, 0.8)
            .before_solving(1, [](rng& g, const spec::context& c) {  // scales >= 1
                static constexpr std::array<float, 4> choices{1.0f, 1.5f, 2.0f, 3.0f};
                auto t = array<float>::from_shape({c.rank(0)});
                for (auto& v : t) v = choices[static_cast<std::size_t>(g.below(choices.size()))];
                return tensor(t);
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::upsample_attr, mode);
