// tensoracle: MatMul (numpy matmul: batched matrix products, 1-D operands as vectors).
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

#include "tensoracle/ops/detail/broadcast.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/nn_util.hpp"
#include "tensoracle/ops/nn/detail/fast_gemm.hpp"
#include "tensoracle/ops/nn/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// MatMul(A, B): numpy matmul. 1-D A is (1, K) and 1-D B is (K, 1) with the
/// added axis removed from the result; leading (batch) dims broadcast.
struct MatMul : spec::one_shape_model<MatMul>, spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "MatMul";
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = nn::matmul_types;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"A", types, {1, 8}}, {"B", types, {1, 8}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types}}};

    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y;
        bool ok = false;
    };
    static model shape_model(const std::vector<spec::expr>& a, const std::vector<spec::expr>& b) {
        using spec::expr;
        model m;
        m.constraints.push_back({expr(a.size()) >= 1, "A has rank >= 1"});
        m.constraints.push_back({expr(b.size()) >= 1, "B has rank >= 1"});
        if (a.empty() || b.empty()) return m;
        const std::size_t ra = a.size(), rb = b.size();
        const expr kb = rb == 1 ? b[0] : b[rb - 2];
        m.constraints.push_back({a[ra - 1] == kb, "A's last dim equals B's contraction dim (second to last, or only)"});
        const std::size_t ba = ra >= 2 ? ra - 2 : 0, bb = rb >= 2 ? rb - 2 : 0, br = std::max(ba, bb);
        for (std::size_t k = 0; k < br; ++k) {
            std::optional<expr> da, db;
            if (k + ba >= br) da = a[k + ba - br];
            if (k + bb >= br) db = b[k + bb - br];
            if (da && db) {
                m.constraints.push_back({*da == *db || *da == 1 || *db == 1,
                                         "batch dims broadcast at output axis " + std::to_string(k)});
                m.y.push_back(select(*da == 1, *db, *da));
            } else {
                m.y.push_back(da ? *da : *db);
            }
        }
        if (ra >= 2) m.y.push_back(a[ra - 2]);
        if (rb >= 2) m.y.push_back(b[rb - 1]);
        m.ok = true;
        return m;
    }

    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = shape_model(c.shape(0), c.shape(1));
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        // rank r output: (r, r) for r >= 2, or one 1-D operand with rank r + 1 on the other side.
        std::vector<std::size_t> ranks;
        for (std::size_t r = 1; r <= std::min<std::size_t>(rank + 1, 8); ++r) ranks.push_back(r);
        if (ranks.empty()) return {};
        return {{{out}, ranks}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// The checked dims of A (M x K) times B (K x N) per batch matrix, and the
    /// batch matrices of A and B that each batch matrix of Y multiplies.
    struct layout {
        std::int64_t M = 1, K = 1, N = 1;
        std::vector<std::vector<std::size_t>> batch_offsets;  ///< [A or B][batch matrix of Y]
        shape_type y;
    };
    template <class Shape>
    static layout layout_of(const Shape& as, const Shape& bs) {
        namespace util = detail::nn;
        const auto m = shape_model(util::constants(as), util::constants(bs));
        util::check_constant(op_type, m.constraints);
        const std::size_t ra = as.size(), rb = bs.size();
        layout l;
        l.M = ra >= 2 ? static_cast<std::int64_t>(as[ra - 2]) : 1;
        l.K = static_cast<std::int64_t>(as[ra - 1]);
        l.N = rb >= 2 ? static_cast<std::int64_t>(bs[rb - 1]) : 1;
        shape_type batch_a(as.begin(), as.end() - (ra >= 2 ? 2 : 1));
        shape_type batch_b(bs.begin(), bs.end() - (rb >= 2 ? 2 : 1));
        const auto batch = detail::broadcast_shapes({batch_a, batch_b}, op_type);
        l.batch_offsets = detail::broadcast_offsets({batch_a, batch_b}, batch);
        l.y = util::to_shape(util::values(m.y), op_type);
        return l;
    }
    template <class T>
    static array<T> compute(const array<T>& a, const array<T>& b) {
        static_assert(spec::dtype_accepted<MatMul, T>::value);
        const auto l = layout_of(a.shape(), b.shape());
        const std::int64_t M = l.M, K = l.K, N = l.N;
        const auto& off = l.batch_offsets;
        auto y = array<T>::from_shape(l.y);
        std::size_t f = 0;
        for (std::size_t bi = 0; bi < off[0].size(); ++bi) {
            const T* pa = a.data() + off[0][bi] * static_cast<std::size_t>(M * K);
            const T* pb = b.data() + off[1][bi] * static_cast<std::size_t>(K * N);
            for (std::int64_t i = 0; i < M; ++i) {
                for (std::int64_t j = 0; j < N; ++j) {
                    if constexpr (real_scalar<T>) {
                        nn::acc_t<T> s = 0;
                        for (std::int64_t k = 0; k < K; ++k) {
                            s += static_cast<nn::acc_t<T>>(pa[i * K + k]) * static_cast<nn::acc_t<T>>(pb[k * N + j]);
                        }
                        y.data()[f++] = value_cast<T>(s);
                    } else {
                        std::uint64_t s = 0;  // wraps
                        for (std::int64_t k = 0; k < K; ++k) {
                            s += static_cast<std::uint64_t>(static_cast<std::int64_t>(pa[i * K + k])) *
                                 static_cast<std::uint64_t>(static_cast<std::int64_t>(pb[k * N + j]));
                        }
                        y.data()[f++] = static_cast<T>(s);
                    }
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            if (auto y = fast<T>(c.input(0), c.input(1))) return std::move(*y);
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>()));
        }));
    }
    /// compute<T> through the plugged-in GEMM (ops/fast_paths.hpp), one call
    /// per batch matrix; nothing when none is plugged in for T, a dim is 0 or
    /// an input is not finite.
    template <class T>
    static std::optional<tensor> fast(const tensor& a, const tensor& b) {
        const auto gemm = nn::fast_gemm_for<T>({&a, &b});
        if (gemm == nullptr) return std::nullopt;
        // The shape model's arithmetic on numbers: evaluate() has already
        // checked its constraints and output shape, and rebuilding its
        // expressions here cost as much as a 64 x 64 GEMM.
        const std::size_t ra = a.rank(), rb = b.rank();
        if (ra == 0 || rb == 0) return std::nullopt;
        const std::size_t M = ra >= 2 ? a.shape()[ra - 2] : 1, K = a.shape()[ra - 1], N = rb >= 2 ? b.shape()[rb - 1] : 1;
        if (K != b.shape()[rb >= 2 ? rb - 2 : 0]) {
            throw shape_error(op_type, "A's last dim " + std::to_string(K) + " differs from B's contraction dim " +
                                           std::to_string(b.shape()[rb >= 2 ? rb - 2 : 0]));
        }
        if (M == 0 || N == 0 || K == 0) return std::nullopt;
        const shape_type batch_a(a.shape().begin(), a.shape().end() - (ra >= 2 ? 2 : 1));
        const shape_type batch_b(b.shape().begin(), b.shape().end() - (rb >= 2 ? 2 : 1));
        const auto batch = detail::broadcast_shapes({batch_a, batch_b}, op_type);
        shape_type out_shape = batch;
        if (ra >= 2) out_shape.push_back(M);
        if (rb >= 2) out_shape.push_back(N);
        auto y = tensor::for_overwrite(dtype_of<T>, out_shape);
        const T* pa = a.values<T>().data();
        const T* pb = b.values<T>().data();
        T* py = y.template values<T>().data();
        std::size_t bi = 0;
        detail::for_each_broadcast_run({batch_a, batch_b}, batch, [&](std::size_t, std::size_t len,
                                                                      std::span<const std::size_t> base,
                                                                      std::span<const std::size_t> step) {
            for (std::size_t i = 0; i < len; ++i, ++bi) {
                gemm(false, false, M, N, K, T(1), pa + (base[0] + i * step[0]) * M * K, K,
                     pb + (base[1] + i * step[1]) * K * N, N, T(0), py + bi * M * N, N);
            }
        });
        return y;
    }
    /// The kernel on AD scalar S; an integer product has no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute<S>(x[0], x[1])};
    }
    /// The VJP of compute: compute's loops, each product sending Y's cotangent
    /// back to both factors (ad/op_derivatives.hpp); broadcast batch matrices
    /// gather the cotangents of every batch matrix they are used in.
    template <class V>
    static std::vector<array<V>> vjp(const spec::context&, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto l = layout_of(x[0].shape(), x[1].shape());
        const std::int64_t M = l.M, K = l.K, N = l.N;
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape()), array<V>::from_shape(x[1].shape())};
        for (auto& gi : g) std::fill(gi.begin(), gi.end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, l.y);
        if (wy == nullptr) return g;
        const V* gy = wy->data();
        for (std::size_t bi = 0; bi < l.batch_offsets[0].size(); ++bi) {
            const std::size_t oa = l.batch_offsets[0][bi] * static_cast<std::size_t>(M * K);
            const std::size_t ob = l.batch_offsets[1][bi] * static_cast<std::size_t>(K * N);
            const V* pa = x[0].data() + oa;
            const V* pb = x[1].data() + ob;
            V* ga = g[0].data() + oa;
            V* gb = g[1].data() + ob;
            for (std::int64_t i = 0; i < M; ++i) {
                for (std::int64_t j = 0; j < N; ++j) {
                    const V gf = *gy++;
                    for (std::int64_t k = 0; k < K; ++k) {
                        ga[i * K + k] += gf * pb[k * N + j];
                        gb[k * N + j] += gf * pa[i * K + k];
                    }
                }
            }
        }
        return g;
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.weights({1}).range(0, -3, 3).range(1, -3, 3); }
};

}  // namespace tensoracle::ops
