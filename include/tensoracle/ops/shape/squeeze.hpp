// tensoracle: Squeeze (removes axes of size 1).
//
// Semantics chosen where ONNX leaves them open: Squeeze with an *empty* axes
// input removes nothing (the literal reading, numpy's squeeze(axis=()));
// without the input it removes every dim of 1.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// Squeeze-13(data, axes?): removes the listed axes (each of size 1); without
/// axes, every dim of size 1. An empty axes input removes nothing (ONNX's numpy
/// reference and shape inference; onnxruntime removes every dim of 1): the
/// generator never draws one.
struct Squeeze : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Squeeze";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0).nonempty_values(1); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all}, {"axes", spec::types::int64, {1, 1}, "T1", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"squeezed", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (!c.has_input(1)) return {};
        const std::size_t r = c.rank(0);
        const auto axes = c.values(1);
        std::vector<spec::constraint> out;
        std::vector<spec::expr> norm;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            out.push_back({shape_util::axis_in_range(axes[i], r), "axes[" + std::to_string(i) + "] is in [-rank, rank)"});
            norm.push_back(shape_util::normalized_axis(axes[i], r));
            out.push_back({shape_util::pick(c.shape(0), norm.back(), spec::expr(1)) == 1,
                           "the dim at axes[" + std::to_string(i) + "] is 1"});
        }
        auto d = shape_util::distinct_axes(norm, "axes");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto dims = c.shape(0);
        std::vector<spec::expr> out;
        if (!c.has_input(1)) {  // depends on dim values: concrete
            for (const auto& d : dims) {
                const auto v = c.eval(d);
                if (v != 1) out.emplace_back(v);
            }
            return {out};
        }
        const auto axes = c.values(1);
        // removed[j]: some axis names j; output dim m is the m-th kept input dim.
        std::vector<spec::expr> removed(r, spec::expr(0));
        for (std::size_t j = 0; j < r; ++j) {
            std::vector<spec::expr> hits;
            for (const auto& a : axes) hits.push_back(shape_util::normalized_axis(a, r) == spec::expr(j));
            removed[j] = shape_util::any_of(hits);
        }
        const std::size_t out_rank = axes.size() <= r ? r - axes.size() : 0;
        for (std::size_t m = 0; m < out_rank; ++m) {
            spec::expr e(0), kept_before(0);
            std::vector<std::pair<spec::expr, spec::expr>> cases;
            for (std::size_t j = 0; j < r; ++j) {
                cases.emplace_back(!removed[j] && kept_before == spec::expr(m), dims[j]);
                kept_before = kept_before + shape_util::indicator(!removed[j]);
            }
            for (std::size_t j = cases.size(); j-- > 0;) e = select(cases[j].first, cases[j].second, e);
            out.push_back(e);
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(rank, shape_detail::max_rank)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const std::optional<std::vector<std::int64_t>>& axes) {
        static_assert(spec::dtype_accepted<Squeeze, T>::value);
        const auto in = shape_util::shape_of(x);
        std::vector<bool> remove(in.size(), false);
        if (axes) {
            for (const auto a : *axes) {
                const auto k = shape_util::checked_axis(a, in.size(), op_type);
                if (remove[k]) throw shape_error(op_type, "axis " + std::to_string(a) + " is listed twice");
                if (in[k] != 1) throw shape_error(op_type, "cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[k]));
                remove[k] = true;
            }
        } else {
            for (std::size_t k = 0; k < in.size(); ++k) remove[k] = in[k] == 1;
        }
        shape_type out;
        for (std::size_t k = 0; k < in.size(); ++k) {
            if (!remove[k]) out.push_back(in[k]);
        }
        auto y = array<T>::from_shape(out);
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        std::optional<std::vector<std::int64_t>> axes;
        if (c.has_input(1)) axes = shape_util::int_values(c.input(1), op_type);
        return compute<T>(x, axes);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Squeeze>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Squeeze>(c, x);
    }
};

}  // namespace tensoracle::ops
