// tensoracle: Concat (the inputs joined along an axis).
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
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct concat_attr {
    std::int64_t axis = 0;
    static constexpr std::array<std::string_view, 1> required{"axis"};
};

/// Concat-13(inputs...): joined along axis; every other dim must match.
struct Concat : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Concat";
    /// Every element of every input, in one tensor.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().facts([](std::span<const spec::value_facts> in, const spec::attribute_map&,
                                      std::span<const shape_type>) {
            spec::value_facts out = in.empty() ? spec::value_facts{} : in[0];
            for (std::size_t i = 1; i < in.size(); ++i) out.join(in[i]);
            return std::vector<spec::value_facts>{out};
        });
    }
    static constexpr int opset = 13;
    using attributes = concat_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"inputs", spec::types::all, {1, 8}, "T", false, true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"concat_result", spec::types::all, {1, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out{shape_util::concrete_fact(c.input_count() >= 1, "at least one input")};
        if (c.input_count() == 0) return out;
        const std::size_t r = c.rank(0);
        const auto a = c.attr("axis");
        out.push_back({shape_util::axis_in_range(a, r), "axis is in [-rank, rank)"});
        const auto an = shape_util::normalized_axis(a, r);
        for (std::size_t i = 1; i < c.input_count(); ++i) {
            out.push_back(shape_util::concrete_fact(c.rank(i) == r, "input " + std::to_string(i) + " has rank " +
                                                                    std::to_string(c.rank(i)) + ", input 0 has rank " + std::to_string(r)));
            if (c.rank(i) != r) return out;
            for (std::size_t j = 0; j < r; ++j) {
                out.push_back({an == spec::expr(j) || c.dim(i, j) == c.dim(0, j),
                               "input " + std::to_string(i) + " matches input 0 at axis " + std::to_string(j) + " (not the concat axis)"});
            }
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto an = shape_util::normalized_axis(c.attr("axis"), r);
        std::vector<spec::expr> out;
        for (std::size_t j = 0; j < r; ++j) {
            std::vector<spec::expr> ds;
            for (std::size_t i = 0; i < c.input_count(); ++i) ds.push_back(c.dim(i, j));
            out.push_back(select(an == spec::expr(j), shape_util::sum(ds), c.dim(0, j)));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const std::vector<const array<T>*>& xs, const attributes& a) {
        static_assert(spec::dtype_accepted<Concat, T>::value);
        if (xs.empty()) throw error(op_type, "needs at least one input");
        const auto s0 = shape_util::shape_of(*xs[0]);
        const std::size_t r = s0.size();
        if (r == 0) throw shape_error(op_type, "cannot concatenate scalars (rank 0)");
        const std::size_t k = shape_util::checked_axis(a.axis, r, op_type);
        shape_type out = s0;
        out[k] = 0;
        for (std::size_t i = 0; i < xs.size(); ++i) {
            const auto s = shape_util::shape_of(*xs[i]);
            if (s.size() != r) throw shape_error(op_type, "input " + std::to_string(i) + " has rank " + std::to_string(s.size()) + ", input 0 has rank " + std::to_string(r));
            for (std::size_t j = 0; j < r; ++j) {
                if (j != k && s[j] != s0[j]) {
                    throw shape_error(op_type, "input " + std::to_string(i) + " " + to_string(s) + " does not match input 0 " + to_string(s0) + " at axis " + std::to_string(j));
                }
            }
            out[k] += s[k];
        }
        auto y = array<T>::from_shape(out);
        // Row-major: each input contributes blocks of s[k] * inner elements per outer index.
        const std::size_t outer = element_count(std::span<const std::size_t>(s0).first(k));
        const std::size_t inner = element_count(std::span<const std::size_t>(s0).subspan(k + 1));
        std::size_t f = 0;
        for (std::size_t o = 0; o < outer; ++o) {
            for (const auto* x : xs) {
                const std::size_t block = x->shape()[k] * inner;
                std::copy(x->data() + o * block, x->data() + (o + 1) * block, y.data() + f);
                f += block;
            }
        }
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const std::vector<array<T>>& xs) {
        std::vector<const array<T>*> ptrs;
        for (const auto& x : xs) ptrs.push_back(&x);
        return compute<T>(ptrs, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::vector<array<T>> arrays;
            for (std::size_t i = 0; i < c.input_count(); ++i) arrays.push_back(c.input(i).as_array<T>());
            return tensor(run_typed<T>(c, arrays));
        }));
    }
    /// All inputs share one dtype: with floating data every input is lifted (the default differentiable inputs).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {run_typed<S>(c, x)};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::concat_attr, axis);
