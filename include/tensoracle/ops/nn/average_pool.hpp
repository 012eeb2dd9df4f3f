// tensoracle: AveragePool (the mean over each pooling window).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/nn_util.hpp"
#include "tensoracle/ops/nn/detail/helpers.hpp"
#include "tensoracle/ops/nn/detail/pool_windows.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct average_pool_attr {
    std::string auto_pad = "NOTSET";
    std::int64_t ceil_mode = 0;
    std::int64_t count_include_pad = 0;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
    static constexpr std::array<std::string_view, 1> required{"kernel_shape"};
};

/// AveragePool(X): mean over each window; the divisor counts the window's
/// positions inside X (count_include_pad=0) or inside the padded input
/// (count_include_pad=1; positions past the end pad, from ceil_mode, are not counted).
struct AveragePool : spec::one_shape_model<AveragePool>, spec::dtype_of_input<0>,
                     detail::one_input_kernel<AveragePool> {
    static constexpr std::string_view op_type = "AveragePool";
    static constexpr int opset = 11;
    using attributes = average_pool_attr;
    static constexpr spec::dtype_set types = nn::float3;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 5}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 5}}}};

    template <int = 0>
    static nn::pool_model context_model(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return nn::pool_shape_model(c.shape(0), c.attr_ints("kernel_shape"), c.attr_ints("strides"), {},
                                    c.attr_ints("pads"), detail::nn::parse_auto_pad(a.auto_pad, op_type),
                                    c.attr("ceil_mode"));
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = context_model(c);
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }


    /// X's windows under `at`, shared by compute and vjp.
    template <class Shape>
    static nn::pool_windows windows(const Shape& x_shape, const attributes& at) {
        return {op_type, x_shape, at.kernel_shape, at.strides, {}, at.pads, at.auto_pad, at.ceil_mode};
    }
    static std::int64_t checked_divisor(const nn::pool_windows& win, std::span<const std::int64_t> o,
                                        const nn::window_taps& taps, const attributes& at) {
        const auto d = win.divisor(o, taps, at.count_include_pad != 0);
        if (d == 0) throw error(std::string(op_type), "a pooling window covers only padding");
        return d;
    }
    template <class T>
    static array<T> compute(const array<T>& x, const attributes& at) {
        static_assert(spec::dtype_accepted<AveragePool, T>::value);
        using acc = nn::acc_t<T>;
        const auto win = windows(x.shape(), at);
        auto y = array<T>::from_shape(win.y());
        win.for_each([&](std::size_t f, std::int64_t base, std::span<const std::int64_t> o, nn::window_taps& taps) {
            const auto divisor = checked_divisor(win, o, taps, at);
            acc s = 0;
            taps.visit(o, [&](std::int64_t row, std::int64_t) { s += static_cast<acc>(x.data()[base + row]); });
            y.data()[f] = value_cast<T>(s / static_cast<acc>(divisor));
        });
        return y;
    }
    /// The VJP: each output's cotangent, over its divisor, to every in-bounds
    /// tap of its window (ad/op_derivatives.hpp).
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto win = windows(x[0].shape(), at);
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape())};
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, win.y());
        if (wy == nullptr) return g;
        win.for_each([&](std::size_t f, std::int64_t base, std::span<const std::int64_t> o, nn::window_taps& taps) {
            const V share = wy->data()[f] / static_cast<V>(checked_divisor(win, o, taps, at));
            taps.visit(o, [&](std::int64_t row, std::int64_t) { g[0].data()[base + row] += share; });
        });
        return g;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.4)
            .flag("ceil_mode", 0.4)
            .flag("count_include_pad", 0.5)
            .work(nn::pool_work)
            .visits([](const spec::context& c) {
                return windows(c.input(0).shape(), spec::parse_attributes<attributes>(c.attributes(), op_type)).visited_taps();
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::average_pool_attr, auto_pad, ceil_mode, count_include_pad, kernel_shape, pads,
                        strides);
