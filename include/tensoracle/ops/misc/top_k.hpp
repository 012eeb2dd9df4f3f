// tensoracle: TopK (the K largest or smallest elements along an axis, and their indices).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct top_k_attr {
    std::int64_t axis = -1;
    std::int64_t largest = 1;
    std::int64_t sorted = 1;
};

/// TopK(X, K): the K largest (or smallest) elements along axis and their
/// indices; ties keep the lower index first (ONNX's stable rule). Results
/// are always sorted, which also satisfies sorted=0.
struct TopK {
    static constexpr std::string_view op_type = "TopK";
    static constexpr int opset = 11;
    using attributes = top_k_attr;
    static constexpr spec::dtype_set types = spec::types::ieee_floating | spec::types::integers;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"X", types, {1, 8}}, {"K", spec::types::int64, {1, 1}, "I"}}};
    static constexpr std::array<spec::value_spec, 2> outputs{{{"Values", types}, {"Indices", spec::types::int64, {}, "I"}}};
    /// X's dims with the one at `axis` (symbolic, possibly negative) replaced by K.
    static std::vector<spec::expr> with_k(const spec::context& c) {
        auto s = c.shape(0);
        const auto r = static_cast<std::int64_t>(s.size());
        const auto axis = c.attr("axis");
        const auto k = c.value(1, 0);
        for (std::size_t a = 0; a < s.size(); ++a) {
            const auto ai = static_cast<std::int64_t>(a);
            s[a] = select(axis == ai || axis == ai - r, k, s[a]);
        }
        return s;
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto r = static_cast<std::int64_t>(c.rank(0));
        const auto axis = c.attr("axis");
        std::vector<spec::constraint> out{{axis >= -r && axis < r, "axis in [-rank, rank)"},
                                          {c.dim(1, 0) == 1, "K holds one value"}};
        if (c.element_count(1) == 1) {
            const auto k = c.value(1, 0);
            auto dim = c.dim(0, 0);
            for (std::size_t a = 1; a < c.rank(0); ++a) dim = select(axis == static_cast<std::int64_t>(a) || axis == static_cast<std::int64_t>(a) - r, c.dim(0, a), dim);
            out.push_back({k >= 0 && k <= dim, "0 <= K <= X.shape[axis]"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto s = with_k(c);
        return {s, s};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0), dtype::i64}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    /// Values and Indices of the k largest (or smallest) elements of x along axis.
    template <class T>
    static std::pair<array<T>, array<std::int64_t>> compute(const array<T>& x, std::size_t axis, std::size_t k,
                                                            const attributes& a) {
        static_assert(spec::dtype_accepted<TopK, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        if (axis >= s.size() || k > s[axis]) {
            throw shape_error(std::string(op_type), "axis must be < rank and K <= X.shape[axis]");
        }
        shape_type out_shape = s;
        out_shape[axis] = k;
        const auto st = detail::strides_of(s);
        const std::size_t n = s[axis], stride = st[axis];
        auto indices = array<std::int64_t>::from_shape(out_shape);
        const auto ost = detail::strides_of(out_shape);
        auto out = array<T>::from_shape(out_shape);
        std::vector<std::size_t> order(n);
        for (std::size_t base = 0; base < x.size(); ++base) {
            if ((base / stride) % n != 0) continue;
            std::iota(order.begin(), order.end(), std::size_t{0});
            std::stable_sort(order.begin(), order.end(), [&](std::size_t p, std::size_t q) {
                const T& xp = x.data()[base + p * stride];
                const T& xq = x.data()[base + q * stride];
                return a.largest != 0 ? xq < xp : xp < xq;
            });
            // Output line start: same outer/inner position with axis index 0.
            const std::size_t outer = base / (stride * n), inner = base % stride;
            const std::size_t obase = outer * ost[axis] * k + inner;
            for (std::size_t j = 0; j < k; ++j) {
                out.data()[obase + j * ost[axis]] = x.data()[base + order[j] * stride];
                indices.data()[obase + j * ost[axis]] = static_cast<std::int64_t>(order[j]);
            }
        }
        return {std::move(out), std::move(indices)};
    }
    static std::size_t k_of(const spec::context& c) {
        return static_cast<std::size_t>(c.input(1).values<std::int64_t>()[0]);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = spec::normalize_axis(a.axis, c.input(0).shape().size(), op_type);
        const auto k = k_of(c);
        return detail::dispatch<types, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            auto [values, indices] = compute<T>(c.input(0).as_array<T>(), axis, k, a);
            return std::vector<tensor>{tensor(values), tensor(indices)};
        });
    }
    /// The kernel on AD scalar S: Values carry the derivatives of the selected
    /// elements; Indices (int64) is a placeholder taken from run(). An integer
    /// X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = spec::normalize_axis(a.axis, c.input(0).shape().size(), op_type);
        const auto k = k_of(c);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}, array<S>{}};
        return {compute<S>(x[0], axis, k, a).first, array<S>{}};
    }
    /// The VJP of Values: each selected element gets its output's cotangent
    /// back (ad/op_derivatives.hpp). Indices has none.
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = spec::normalize_axis(a.axis, c.input(0).shape().size(), op_type);
        const auto k = k_of(c);
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape()), array<V>{}};
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto indices = compute<V>(x[0], axis, k, a).second;
        const auto* wy = detail::output_cotangent(op_type, w, 0, indices.shape());
        if (wy == nullptr) return g;
        // Values[outer, j, inner] is X[outer, indices[outer, j, inner], inner].
        const std::size_t n = x[0].shape()[axis], stride = detail::strides_of(shape_type(x[0].shape().begin(), x[0].shape().end()))[axis];
        for (std::size_t q = 0; q < indices.size(); ++q) {
            const std::size_t outer = q / (k * stride), inner = q % stride;
            const auto at = outer * n * stride + static_cast<std::size_t>(indices.data()[q]) * stride + inner;
            g[0].data()[at] += wy->data()[q];
        }
        return g;
    }
    // sorted=0 leaves the order of the k outputs to the implementation: such a case has no
    // single right answer to compare a backend with, so generated cases keep the default.
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(facts).flag("largest").omit("sorted").range(0, -50, 50); }
    /// Values: some of X's elements. Indices: in [0, n - 1] along the axis;
    /// when X is one value repeated, ties go to the lowest indices, so with
    /// k >= 1 every slice holds index 0 (Mod by those indices divides by 0).
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type> shapes) {
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        if (shapes.empty() || shapes[0].empty()) return {x.range_only(), spec::value_facts{}};
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        const std::size_t axis = spec::normalize_axis(a.axis, shapes[0].size(), op_type);
        const auto n = static_cast<double>(shapes[0][axis]);
        auto indices = spec::value_facts::within(0.0, std::max(n - 1.0, 0.0));
        const bool one_value = x.lo == x.hi && std::isfinite(x.lo);
        const bool some_k = in.size() > 1 && in[1].lo >= 1.0;
        if (one_value && some_k) indices.force(0.0);
        return {x.range_only(), indices};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::top_k_attr, axis, largest, sorted);
