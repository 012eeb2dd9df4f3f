// tensoracle: Flatten (the input as a matrix, split at an axis).
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

#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct flatten_attr {
    std::int64_t axis = 1;
};

/// Flatten-13(input): [prod(dims[:axis]), prod(dims[axis:])], axis in [-r, r].
struct Flatten : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Flatten";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = flatten_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {2, 2}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto a = c.attr("axis");
        const std::size_t r = c.rank(0);
        return {{a >= shape_util::negative(r) && a <= spec::expr(r), "axis is in [-rank, rank]"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto a = shape_util::normalized_axis(c.attr("axis"), r);
        std::vector<spec::expr> outer, inner;
        for (std::size_t j = 0; j < r; ++j) {
            outer.push_back(select(spec::expr(j) < a, c.dim(0, j), spec::expr(1)));
            inner.push_back(select(spec::expr(j) < a, spec::expr(1), c.dim(0, j)));
        }
        return {{spec::product(outer), spec::product(inner)}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank != 2) return {};
        return {{{out}, shape_util::ranks_between(0, shape_detail::max_rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Flatten, T>::value);
        const auto in = shape_util::shape_of(x);
        const auto r = static_cast<std::int64_t>(in.size());
        if (a.axis < -r || a.axis > r) {
            throw shape_error(op_type, "axis " + std::to_string(a.axis) + " is out of range for rank " + std::to_string(r) + " (allowed: [-rank, rank])");
        }
        const auto k = static_cast<std::size_t>(a.axis < 0 ? a.axis + r : a.axis);
        const std::size_t outer = element_count(std::span<const std::size_t>(in).first(k), op_type);
        const std::size_t inner = element_count(std::span<const std::size_t>(in).subspan(k), op_type);
        auto y = array<T>::from_shape(shape_type{outer, inner});
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Flatten>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Flatten>(c, x);
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::flatten_attr, axis);
