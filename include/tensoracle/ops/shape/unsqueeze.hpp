// tensoracle: Unsqueeze (inserts axes of size 1).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// Unsqueeze-13(data, axes): inserts dims of 1 at the listed axes of the
/// output (axes normalized against the output rank, any order, no repeats).
struct Unsqueeze : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Unsqueeze";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all, {0, 7}}, {"axes", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"expanded", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto axes = c.values(1);
        const std::size_t R = c.rank(0) + axes.size();
        std::vector<spec::constraint> out{shape_util::concrete_fact(R <= shape_detail::max_rank, "the output rank " + std::to_string(R) + " is at most 8")};
        std::vector<spec::expr> norm;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            out.push_back({shape_util::axis_in_range(axes[i], R), "axes[" + std::to_string(i) + "] is in [-out_rank, out_rank)"});
            norm.push_back(shape_util::normalized_axis(axes[i], R));
        }
        auto d = shape_util::distinct_axes(norm, "axes");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto axes = c.values(1);
        const auto dims = c.shape(0);
        const std::size_t R = c.rank(0) + axes.size();
        std::vector<spec::expr> out;
        spec::expr inserted_before(0);
        for (std::size_t p = 0; p < R; ++p) {
            std::vector<spec::expr> hits;
            for (const auto& a : axes) hits.push_back(shape_util::normalized_axis(a, R) == spec::expr(p));
            const auto inserted = shape_util::any_of(hits);
            out.push_back(select(inserted, spec::expr(1), shape_util::pick(dims, spec::expr(p) - inserted_before)));
            inserted_before = inserted_before + shape_util::indicator(inserted);
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, shape_util::ranks_between(0, rank - 1)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> axes) {
        static_assert(spec::dtype_accepted<Unsqueeze, T>::value);
        const auto in = shape_util::shape_of(x);
        const std::size_t R = in.size() + axes.size();
        std::vector<bool> insert(R, false);
        for (const auto a : axes) {
            const auto k = shape_util::checked_axis(a, R, op_type);
            if (insert[k]) throw shape_error(op_type, "axis " + std::to_string(a) + " is listed twice");
            insert[k] = true;
        }
        shape_type out;
        std::size_t j = 0;
        for (std::size_t p = 0; p < R; ++p) out.push_back(insert[p] ? 1 : in[j++]);
        auto y = array<T>::from_shape(out);
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, shape_util::int_values(c.input(1), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Unsqueeze>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Unsqueeze>(c, x);
    }
};

}  // namespace tensoracle::ops
