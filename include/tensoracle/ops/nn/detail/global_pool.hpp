// tensoracle: global_pool<Max>, the spec of GlobalAveragePool (Max = false) and
// GlobalMaxPool (Max = true).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/nn/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace nn {
/// Y[n, c, 1, ..., 1] = mean (or max) of X[n, c, :, ..., :].
template <bool Max>
struct global_pool : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = Max ? "GlobalMaxPool" : "GlobalAveragePool";
    static constexpr int opset = 1;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = float3;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 8}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 8}}}};

    static std::vector<constraint> constraints(const spec::context& c) {
        std::vector<constraint> cs{{expr(c.rank(0)) >= 3, "X has rank >= 3: (N, C, D1, ...)"}};
        for (std::size_t i = 2; i < c.rank(0); ++i) {
            cs.push_back({c.dim(0, i) >= 1, "spatial dims are non-empty (axis " + std::to_string(i) + ")"});
        }
        return cs;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) {
        std::vector<expr> y{c.dim(0, 0), c.dim(0, 1)};
        for (std::size_t i = 2; i < c.rank(0); ++i) y.emplace_back(1);
        return {y};
    }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3) return {};
        return {{{out}, {rank}}};
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x) {
        static_assert(spec::dtype_accepted<global_pool, T>::value);
        if (x.dimension() < 3) throw shape_error(std::string(op_type), "X must have rank >= 3: (N, C, D1, ...)");
        shape_type ys{x.shape()[0], x.shape()[1]};
        std::size_t plane = 1;
        for (std::size_t i = 2; i < x.dimension(); ++i) {
            if (x.shape()[i] == 0) throw shape_error(std::string(op_type), "spatial dims must be non-empty");
            plane *= x.shape()[i];
            ys.push_back(1);
        }
        auto y = array<T>::from_shape(ys);
        for (std::size_t p = 0; p < y.size(); ++p) {
            const T* v = x.data() + p * plane;
            if constexpr (Max) {
                T best = v[0];
                for (std::size_t i = 1; i < plane; ++i) {
                    if (is_nan(best)) break;
                    if (v[i] > best || is_nan(v[i])) best = v[i];
                }
                y.data()[p] = best;
            } else {
                acc_t<T> s = 0;
                for (std::size_t i = 0; i < plane; ++i) s += static_cast<acc_t<T>>(v[i]);
                y.data()[p] = value_cast<T>(s / static_cast<acc_t<T>>(plane));
            }
        }
        return y;
    }
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using U = typename decltype(t)::type;
            return tensor(compute<U>(c.input(0).as_array<U>()));
        }));
    }
    /// The kernel on AD scalar S (GlobalMaxPool: the derivative of the selected element).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context&, const std::vector<array<S>>& x) {
        return {compute<S>(x[0])};
    }
};
}  // namespace nn

}  // namespace tensoracle::ops
