// tensoracle: Expand (the input broadcast to a shape).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/ops/detail/broadcast.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// Expand-13(input, shape): input broadcast with `shape` (bidirectionally:
/// a 1 in shape keeps the input's dim).
struct Expand : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Expand";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all}, {"shape", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto v = c.values(1);
        const std::size_t r = c.rank(0), R = std::max(r, v.size());
        std::vector<spec::constraint> out;
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "shape[" + std::to_string(i) + "] >= 0"});
        for (std::size_t k = 0; k < R; ++k) {
            if (k + r < R || k + v.size() < R) continue;
            const auto a = c.dim(0, k + r - R), b = v[k + v.size() - R];
            out.push_back({a == b || a == 1 || b == 1, "input and shape broadcast at output axis " + std::to_string(k)});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto v = c.values(1);
        const std::size_t r = c.rank(0), R = std::max(r, v.size());
        std::vector<spec::expr> out;
        for (std::size_t k = 0; k < R; ++k) {
            if (k + r < R) {
                out.push_back(v[k + v.size() - R]);
            } else if (k + v.size() < R) {
                out.push_back(c.dim(0, k + r - R));
            } else {
                const auto a = c.dim(0, k + r - R), b = v[k + v.size() - R];
                out.push_back(select(a == 1, b, a));
            }
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(0, rank)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> shape) {
        static_assert(spec::dtype_accepted<Expand, T>::value);
        shape_type target;
        for (const auto v : shape) target.push_back(shape_util::to_dim(v, op_type, "a shape value"));
        const std::vector<shape_type> shapes{shape_util::shape_of(x), target};
        const auto out = detail::broadcast_shapes(shapes, op_type);
        const auto off = detail::broadcast_offsets({shapes[0]}, out);
        auto y = array<T>::from_shape(out);
        for (std::size_t f = 0; f < y.size(); ++f) y.data()[f] = x.data()[off[0][f]];
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, shape_util::int_values(c.input(1), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Expand>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Expand>(c, x);
    }
};

}  // namespace tensoracle::ops
