// tensoracle: MaxPool (the maximum over each pooling window, and its index into X).
//
// MaxPool produces both outputs: Y and Indices (flat index into X of the
// first maximum; NaN propagates; storage_order=1 makes the spatial part
// column-major, as onnxruntime and the ONNX test data do).
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
#include "tensoracle/ops/nn/detail/helpers.hpp"
#include "tensoracle/ops/nn/detail/pool_windows.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct max_pool_attr {
    std::string auto_pad = "NOTSET";
    std::int64_t ceil_mode = 0;
    std::vector<std::int64_t> dilations;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::int64_t storage_order = 0;
    std::vector<std::int64_t> strides;
    static constexpr std::array<std::string_view, 1> required{"kernel_shape"};
};

/// MaxPool(X) -> (Y, Indices): the maximum over each (dilated) window of the
/// input, padding excluded; Indices is the flat index into X of that maximum.
struct MaxPool : spec::one_shape_model<MaxPool> {
    static constexpr std::string_view op_type = "MaxPool";
    static constexpr int opset = 12;
    using attributes = max_pool_attr;
    static constexpr spec::dtype_set types = nn::float3 | spec::dtypes_of(dtype::i8, dtype::u8);
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 5}}}};
    static constexpr std::array<spec::value_spec, 2> outputs{
        {{"Y", types, {3, 5}}, {"Indices", spec::types::int64, {3, 5}, "I", true}}};

    template <int = 0>
    static nn::pool_model context_model(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return nn::pool_shape_model(c.shape(0), c.attr_ints("kernel_shape"), c.attr_ints("strides"),
                                    c.attr_ints("dilations"), c.attr_ints("pads"),
                                    detail::nn::parse_auto_pad(a.auto_pad, op_type), c.attr("ceil_mode"));
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = context_model(c);
        m.constraints.push_back({c.attr("storage_order") == 0 || c.attr("storage_order") == 1, "storage_order is 0 or 1"});
        return {std::move(m.constraints), {m.y, m.y}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0), dtype::i64}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// X's windows under `at`, shared by compute and the hints' visits.
    template <class Shape>
    static nn::pool_windows windows(const Shape& x_shape, const attributes& at) {
        return {op_type, x_shape, at.kernel_shape, at.strides, at.dilations, at.pads, at.auto_pad, at.ceil_mode};
    }
    /// Y and Indices.
    template <class T>
    static std::pair<array<T>, array<std::int64_t>> compute(const array<T>& x, const attributes& at) {
        static_assert(spec::dtype_accepted<MaxPool, T>::value);
        const auto win = windows(x.shape(), at);
        if (at.storage_order != 0 && at.storage_order != 1) throw error(std::string(op_type), "storage_order must be 0 or 1");
        auto y = array<T>::from_shape(win.y());
        auto ind = array<std::int64_t>::from_shape(win.y());
        win.for_each([&](std::size_t f, std::int64_t base, std::span<const std::int64_t> o, nn::window_taps& taps) {
            bool found = false;
            T best{};
            std::int64_t best_idx = 0;
            taps.visit(o, [&](std::int64_t row, std::int64_t col) {  // padding taps are ignored
                const T v = x.data()[base + row];
                bool take = !found || v > best;
                if constexpr (real_scalar<T>) {
                    if (found && nn::is_nan(best)) take = false;  // NaN stays
                    if (found && nn::is_nan(v) && !nn::is_nan(best)) take = true;
                }
                if (take) {
                    best = v;
                    best_idx = base + (at.storage_order == 0 ? row : col);
                    found = true;
                }
            });
            if (!found) throw error(std::string(op_type), "a pooling window covers only padding (dilations too large)");
            y.data()[f] = best;
            ind.data()[f] = best_idx;
        });
        return {std::move(y), std::move(ind)};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::dispatch<types, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            auto [y, i] = compute<T>(c.input(0).as_array<T>(), at);
            return std::vector<tensor>{tensor(y), tensor(i)};
        });
    }
    /// The kernel on AD scalar S: Y carries the derivative of the selected
    /// element; Indices (int64) is a placeholder taken from run(). An integer
    /// X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}, array<S>{}};
        return {compute<S>(x[0], at).first, array<S>{}};
    }
    /// The VJP of Y: each output's cotangent to the element it selected
    /// (ad/op_derivatives.hpp). Indices has none.
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        at.storage_order = 0;  // row-major indices are offsets into X
        const auto selected = compute<V>(x[0], at).second;
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape())};
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, selected.shape());
        if (wy == nullptr) return g;
        for (std::size_t f = 0; f < selected.size(); ++f) g[0].data()[static_cast<std::size_t>(selected.data()[f])] += wy->data()[f];
        return g;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(spec::facts::selection_of(0))
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.4)
            .flag("ceil_mode", 0.4)
            .flag("storage_order", 0.3)
            .work(nn::pool_work)
            .visits([](const spec::context& c) {
                return windows(c.input(0).shape(), spec::parse_attributes<attributes>(c.attributes(), op_type)).visited_taps();
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::max_pool_attr, auto_pad, ceil_mode, dilations, kernel_shape, pads, storage_order,
                        strides);
