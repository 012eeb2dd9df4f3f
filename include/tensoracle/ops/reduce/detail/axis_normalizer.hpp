// tensoracle: axis_normalizer<F>, the op spec of Softmax, LogSoftmax and Hardmax from
// their row formula F, and their attribute struct.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/reduce_util.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
struct softmax_attr {
    std::int64_t axis = -1;
};
}  // namespace reduce

/// Softmax / LogSoftmax / Hardmax (13): F applied to each 1-D slice along `axis`.
// Hardmax's derivative is 0 wherever its output is defined (one-hot constants).
template <class F>
struct axis_normalizer : spec::like_input<0>, detail::one_input_kernel<axis_normalizer<F>> {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = 13;
    using attributes = reduce::softmax_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::floating}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::floating}}};

    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return {detail::axis_in_range(c.attr("axis"), c.rank(0), "axis")};
    }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}};
    }
    // Finite inputs give finite outputs (the kernels shift by the maximum).
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<axis_normalizer, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        const auto sp = detail::split_at(s, spec::normalize_axis(a.axis, s.size(), op_type));
        using A = detail::reduce_acc_t<T>;
        auto y = array<T>::from_shape(x.shape());
        std::vector<A> row(sp.n);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                for (std::size_t i = 0; i < sp.n; ++i) row[i] = value_cast<A>(x.data()[sp.at(o, i, j)]);
                F::apply(row);
                for (std::size_t i = 0; i < sp.n; ++i) y.data()[sp.at(o, i, j)] = value_cast<T>(row[i]);
            }
        }
        return y;
    }
    /// The VJP, one slice along `axis` at a time (F::vjp; ad/op_derivatives.hpp).
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const shape_type s(x[0].shape().begin(), x[0].shape().end());
        const auto sp = detail::split_at(s, spec::normalize_axis(a.axis, s.size(), op_type));
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape())};
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, s);
        if (wy == nullptr) return g;
        std::vector<V> row(sp.n), wrow(sp.n);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                for (std::size_t i = 0; i < sp.n; ++i) {
                    row[i] = x[0].data()[sp.at(o, i, j)];
                    wrow[i] = wy->data()[sp.at(o, i, j)];
                }
                F::vjp(row, wrow);
                for (std::size_t i = 0; i < sp.n; ++i) g[0].data()[sp.at(o, i, j)] = wrow[i];
            }
        }
        return g;
    }
    static spec::hints hints() {
        return spec::hints{}.range(0, -6, 6).facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes)
                -> std::vector<spec::value_facts> {
                if (shapes.empty() || shapes[0].empty()) return {spec::value_facts{}};
                const auto a = spec::parse_attributes<attributes>(attrs, op_type);
                return {F::facts(shapes[0][spec::normalize_axis(a.axis, shapes[0].size(), op_type)])};
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::softmax_attr, axis);
