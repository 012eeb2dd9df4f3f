// tensoracle: Slice (strided ranges of the input along the given axes).
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

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// Slice-13(data, starts, ends, axes?, steps?): for each listed axis, the
/// elements start, start + step, ... before end. Negative starts/ends count
/// from the end (+ dim); then starts are clamped to [0, dim] (step > 0) or
/// [0, dim - 1] (step < 0), ends to [0, dim] or [-1, dim - 1]. Axes default
/// to [0, len(starts)), steps to 1; steps must be non-zero.
struct Slice : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Slice";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.nan_faithful().facts(spec::facts::selection_of(0)); }  // a subset of the elements
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 5> inputs{{{"data", spec::types::all},
                                                             {"starts", spec::types::indices, {1, 1}, "Tind"},
                                                             {"ends", spec::types::indices, {1, 1}, "Tind"},
                                                             {"axes", spec::types::indices, {1, 1}, "Tind", true},
                                                             {"steps", spec::types::indices, {1, 1}, "Tind", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    struct plan {
        std::vector<spec::expr> starts, ends, axes, steps;  // axes normalized
    };
    static plan symbols(const spec::context& c) {
        plan p;
        p.starts = c.values(1);
        p.ends = c.values(2);
        const std::size_t n = std::min(p.starts.size(), p.ends.size()), r = c.rank(0);
        p.starts.resize(n, spec::expr(0));
        p.ends.resize(n, spec::expr(0));
        if (c.has_input(3)) {
            for (const auto& a : c.values(3)) p.axes.push_back(shape_util::normalized_axis(a, r));
        } else {
            for (std::size_t i = 0; i < n; ++i) p.axes.emplace_back(i);
        }
        p.axes.resize(n, spec::expr(0));
        if (c.has_input(4)) p.steps = c.values(4);
        p.steps.resize(n, spec::expr(1));
        return p;
    }
    /// The output length of one sliced axis of size dim (ONNX's clamping).
    static spec::expr length(const spec::expr& dim, const spec::expr& start, const spec::expr& end, const spec::expr& step) {
        const auto s0 = select(start < 0, start + dim, start);
        const auto e0 = select(end < 0, end + dim, end);
        const auto pos = step > 0;
        const auto s = select(pos, shape_util::emin(shape_util::emax(s0, spec::expr(0)), dim), shape_util::emin(shape_util::emax(s0, spec::expr(0)), dim - 1));
        const auto e = select(pos, shape_util::emin(shape_util::emax(e0, spec::expr(0)), dim), shape_util::emin(shape_util::emax(e0, spec::expr(-1)), dim - 1));
        // ceil((e - s) / step) clamped at 0, written so nothing overflows.
        return select(pos, select(e - s <= 0, spec::expr(0), (e - s - 1) / step + 1),
                      select(s - e <= 0, spec::expr(0), spec::expr(1) - (s - e - 1) / step));
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        std::vector<spec::constraint> out{{c.dim(1, 0) == c.dim(2, 0), "starts and ends have the same length"}};
        if (c.has_input(3)) {
            out.push_back({c.dim(3, 0) == c.dim(1, 0), "axes has the length of starts"});
            const auto axes = c.values(3);
            for (std::size_t i = 0; i < axes.size(); ++i) {
                out.push_back({shape_util::axis_in_range(axes[i], r), "axes[" + std::to_string(i) + "] is in [-rank, rank)"});
            }
        } else {
            out.push_back({c.dim(1, 0) <= spec::expr(r), "without axes, starts has at most rank entries"});
        }
        if (c.has_input(4)) {
            out.push_back({c.dim(4, 0) == c.dim(1, 0), "steps has the length of starts"});
            const auto steps = c.values(4);
            for (std::size_t i = 0; i < steps.size(); ++i) {
                out.push_back({steps[i] != 0, "steps[" + std::to_string(i) + "] is not 0"});
            }
        }
        auto d = shape_util::distinct_axes(symbols(c).axes, "axes");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto p = symbols(c);
        const auto dims = c.shape(0);
        std::vector<spec::expr> out;
        for (std::size_t j = 0; j < dims.size(); ++j) {
            spec::expr e = dims[j];
            for (std::size_t i = p.axes.size(); i-- > 0;) {
                e = select(p.axes[i] == spec::expr(j), length(dims[j], p.starts[i], p.ends[i], p.steps[i]), e);
            }
            out.push_back(e);
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        const auto ind = spec::types::indices.members();
        return {{{out}, {rank}}, {ind, {1}}, {ind, {1}}, {ind, {1}}, {ind, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// Concrete start and count of one axis (the same formula as `length`).
    static std::pair<std::int64_t, std::int64_t> resolve(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
        if (step == 0) throw shape_error(op_type, "step is 0");
        if (start < 0) start += dim;
        if (end < 0) end += dim;
        std::int64_t count = 0;
        if (step > 0) {
            start = std::clamp<std::int64_t>(start, 0, dim);
            end = std::clamp<std::int64_t>(end, 0, dim);
            count = end - start <= 0 ? 0 : (end - start - 1) / step + 1;
        } else {
            start = std::clamp<std::int64_t>(start, 0, dim - 1);
            end = std::clamp<std::int64_t>(end, -1, dim - 1);
            // floor((start - end - 1) / |step|) + 1; |step| as unsigned, so INT64_MIN does not overflow.
            count = start - end <= 0 ? 0
                                     : static_cast<std::int64_t>(static_cast<std::uint64_t>(start - end - 1) /
                                                                 (0 - static_cast<std::uint64_t>(step))) + 1;
        }
        return {start, count};
    }
    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> starts, std::span<const std::int64_t> ends,
                            std::optional<std::vector<std::int64_t>> axes = std::nullopt,
                            std::optional<std::vector<std::int64_t>> steps = std::nullopt) {
        static_assert(spec::dtype_accepted<Slice, T>::value);
        const auto in = shape_util::shape_of(x);
        const std::size_t r = in.size(), n = starts.size();
        if (ends.size() != n || (axes && axes->size() != n) || (steps && steps->size() != n)) {
            throw shape_error(op_type, "starts, ends, axes and steps must have the same length");
        }
        if (!axes && n > r) throw shape_error(op_type, "without axes, starts may have at most rank entries");
        std::vector<std::int64_t> first(r, 0), step(r, 1);
        shape_type out = in;
        std::vector<bool> seen(r, false);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = axes ? shape_util::checked_axis((*axes)[i], r, op_type) : i;
            if (seen[k]) throw shape_error(op_type, "axis " + std::to_string(k) + " is sliced twice");
            seen[k] = true;
            step[k] = steps ? (*steps)[i] : 1;
            const auto [s, count] = resolve(static_cast<std::int64_t>(in[k]), starts[i], ends[i], step[k]);
            first[k] = s;
            out[k] = static_cast<std::size_t>(count);
        }
        const auto st = detail::strides_of(in);
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0;  // first + o * step stays in [0, dim) when the count is positive
            for (std::size_t k = 0; k < r; ++k) {
                f += static_cast<std::size_t>(first[k] + static_cast<std::int64_t>(o[k]) * step[k]) * st[k];
            }
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto starts = shape_util::int_values(c.input(1), op_type), ends = shape_util::int_values(c.input(2), op_type);
        std::optional<std::vector<std::int64_t>> axes, steps;
        if (c.has_input(3)) axes = shape_util::int_values(c.input(3), op_type);
        if (c.has_input(4)) steps = shape_util::int_values(c.input(4), op_type);
        return compute<T>(x, starts, ends, axes, steps);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Slice>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Slice>(c, x);
    }
};

}  // namespace tensoracle::ops
