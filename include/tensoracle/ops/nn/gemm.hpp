// tensoracle: Gemm (alpha * A' B' + beta * C, A and B optionally transposed).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/broadcast.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/nn_util.hpp"
#include "tensoracle/ops/nn/detail/fast_gemm.hpp"
#include "tensoracle/ops/nn/detail/helpers.hpp"
#include "tensoracle/ops/nn/detail/two_inputs_and_optional_third.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct gemm_attr {
    float alpha = 1.0f;
    float beta = 1.0f;
    std::int64_t transA = 0;  // NOLINT(readability-identifier-naming): ONNX names
    std::int64_t transB = 0;  // NOLINT(readability-identifier-naming)
};

/// Gemm(A, B, C?) = alpha * A' B' + beta * C, A' = transA ? A^T : A (M x K),
/// B' = transB ? B^T : B (K x N); C broadcasts unidirectionally to (M, N).
struct Gemm : nn::two_inputs_and_optional_third<Gemm>, spec::one_shape_model<Gemm>, spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Gemm";
    static constexpr int opset = 13;
    using attributes = gemm_attr;
    static constexpr spec::dtype_set types = nn::matmul_types;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"A", types, {2, 2}}, {"B", types, {2, 2}}, {"C", types, {0, 2}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {2, 2}}}};

    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y;
    };
    static model shape_model(const std::vector<spec::expr>& a, const std::vector<spec::expr>& b,
                             const std::optional<std::vector<spec::expr>>& cdims, const spec::expr& ta,
                             const spec::expr& tb) {
        using spec::expr;
        model m;
        m.constraints.push_back({expr(a.size()) == 2 && expr(b.size()) == 2, "A and B are matrices"});
        if (a.size() != 2 || b.size() != 2) return m;
        const expr M = select(ta != 0, a[1], a[0]), K = select(ta != 0, a[0], a[1]);
        const expr K2 = select(tb != 0, b[1], b[0]), N = select(tb != 0, b[0], b[1]);
        m.constraints.push_back({K == K2, "inner dims of A' and B' agree"});
        if (cdims) {
            const std::size_t r = cdims->size();
            m.constraints.push_back({expr(r) <= 2, "C has rank <= 2"});
            if (r > 2) return m;
            const std::array<expr, 2> target{M, N};
            for (std::size_t j = 0; j < r; ++j) {
                const expr& t = target[2 - r + j];
                m.constraints.push_back({(*cdims)[j] == t || (*cdims)[j] == 1,
                                         "C broadcasts unidirectionally to (M, N) at its axis " + std::to_string(j)});
            }
        }
        m.y = {M, N};
        return m;
    }
    static model context_model(const spec::context& c) {
        std::optional<std::vector<spec::expr>> cd;
        if (c.has_input(2)) cd = c.shape(2);
        return shape_model(c.shape(0), c.shape(1), cd, c.attr("transA"), c.attr("transB"));
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = context_model(c);
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank != 2) return {};
        return {{{out}, {2}}, {{out}, {2}}, {{out}, {0, 1, 2}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& a, const array<T>& b, const std::optional<array<T>>& cm,
                            const attributes& at = {}) {
        static_assert(spec::dtype_accepted<Gemm, T>::value);
        namespace util = detail::nn;
        std::optional<std::vector<spec::expr>> cd;
        if (cm) cd = util::constants(cm->shape());
        const auto m = shape_model(util::constants(a.shape()), util::constants(b.shape()), cd, at.transA, at.transB);
        util::check_constant(op_type, m.constraints);
        const auto yd = util::values(m.y);
        const std::int64_t M = yd[0], N = yd[1], K = at.transA != 0 ? util::dims_of(a)[0] : util::dims_of(a)[1];
        const std::int64_t lda = util::dims_of(a)[1], ldb = util::dims_of(b)[1];
        auto A = [&](std::int64_t i, std::int64_t k) { return at.transA != 0 ? a.data()[k * lda + i] : a.data()[i * lda + k]; };
        auto B = [&](std::int64_t k, std::int64_t j) { return at.transB != 0 ? b.data()[j * ldb + k] : b.data()[k * ldb + j]; };
        auto y = array<T>::from_shape(util::to_shape(yd, op_type));
        std::vector<std::size_t> coff;
        if (cm) {
            coff = detail::broadcast_offsets({shape_type(cm->shape().begin(), cm->shape().end())},
                                             util::to_shape(yd, op_type))[0];
        }
        for (std::int64_t i = 0; i < M; ++i) {
            for (std::int64_t j = 0; j < N; ++j) {
                const auto f = static_cast<std::size_t>(i * N + j);
                if constexpr (real_scalar<T>) {
                    using acc = nn::acc_t<T>;
                    acc s = 0;
                    for (std::int64_t k = 0; k < K; ++k) s += static_cast<acc>(A(i, k)) * static_cast<acc>(B(k, j));
                    acc r = static_cast<acc>(at.alpha) * s;
                    if (cm) r += static_cast<acc>(at.beta) * static_cast<acc>(cm->data()[coff[f]]);
                    y.data()[f] = value_cast<T>(r);
                } else {
                    std::uint64_t s = 0;  // wraps
                    for (std::int64_t k = 0; k < K; ++k) {
                        s += static_cast<std::uint64_t>(static_cast<std::int64_t>(A(i, k))) *
                             static_cast<std::uint64_t>(static_cast<std::int64_t>(B(k, j)));
                    }
                    double r = static_cast<double>(at.alpha) * static_cast<double>(static_cast<std::int64_t>(s));
                    if (cm) r += static_cast<double>(at.beta) * static_cast<double>(cm->data()[coff[f]]);
                    y.data()[f] = value_cast<T>(r);
                }
            }
        }
        return y;
    }
    /// The VJP of compute: compute's loops, each product sending alpha times
    /// Y's cotangent back to both factors, and C gathering beta times the
    /// cotangents of the elements it is broadcast to (ad/op_derivatives.hpp).
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        namespace util = detail::nn;
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const bool has_c = c.has_input(2);
        std::optional<std::vector<spec::expr>> cd;
        if (has_c) cd = util::constants(x[2].shape());
        const auto m = shape_model(util::constants(x[0].shape()), util::constants(x[1].shape()), cd, at.transA, at.transB);
        util::check_constant(op_type, m.constraints);
        const auto yd = util::values(m.y);
        const std::int64_t M = yd[0], N = yd[1], K = at.transA != 0 ? util::dims_of(x[0])[0] : util::dims_of(x[0])[1];
        const std::int64_t lda = util::dims_of(x[0])[1], ldb = util::dims_of(x[1])[1];
        auto ia = [&](std::int64_t i, std::int64_t k) { return static_cast<std::size_t>(at.transA != 0 ? k * lda + i : i * lda + k); };
        auto ib = [&](std::int64_t k, std::int64_t j) { return static_cast<std::size_t>(at.transB != 0 ? j * ldb + k : k * ldb + j); };
        std::vector<array<V>> g;
        for (std::size_t i = 0; i < c.input_count(); ++i) {
            g.push_back(array<V>::from_shape(i < 2 || has_c ? x[i].shape() : shape_type{0}));
            std::fill(g.back().begin(), g.back().end(), V(0));
        }
        const auto* wy = detail::output_cotangent(op_type, w, 0, util::to_shape(yd, op_type));
        if (wy == nullptr) return g;
        std::vector<std::size_t> coff;
        if (has_c) {
            coff = detail::broadcast_offsets({shape_type(x[2].shape().begin(), x[2].shape().end())},
                                             util::to_shape(yd, op_type))[0];
        }
        const V alpha = static_cast<V>(at.alpha), beta = static_cast<V>(at.beta);
        for (std::int64_t i = 0; i < M; ++i) {
            for (std::int64_t j = 0; j < N; ++j) {
                const auto f = static_cast<std::size_t>(i * N + j);
                const V gs = alpha * wy->data()[f];
                for (std::int64_t k = 0; k < K; ++k) {
                    g[0].data()[ia(i, k)] += gs * x[1].data()[ib(k, j)];
                    g[1].data()[ib(k, j)] += gs * x[0].data()[ia(i, k)];
                }
                if (has_c) g[2].data()[coff[f]] += beta * wy->data()[f];
            }
        }
        return g;
    }
    /// compute<T> through the plugged-in GEMM (ops/fast_paths.hpp): Y starts
    /// as beta C, then one GEMM adds alpha A' B'. Nothing when none is plugged
    /// in for T, a dim is 0, alpha is 0 (a BLAS may then skip A' B') or a
    /// value is not finite.
    template <class T>
    static std::optional<tensor> fast(const spec::context& c, const attributes& at) {
        const tensor* cm = c.has_input(2) ? &c.input(2) : nullptr;
        const auto gemm = nn::fast_gemm_for<T>({&c.input(0), &c.input(1), cm});
        if (gemm == nullptr || at.alpha == 0.0f || !std::isfinite(at.alpha) || !std::isfinite(at.beta)) return std::nullopt;
        namespace util = detail::nn;
        const tensor& a = c.input(0);
        const tensor& b = c.input(1);
        std::optional<std::vector<spec::expr>> cd;
        if (cm) cd = util::constants(cm->shape());
        const auto m = shape_model(util::constants(a.shape()), util::constants(b.shape()), cd, at.transA, at.transB);
        util::check_constant(op_type, m.constraints);
        const auto out_shape = util::to_shape(util::values(m.y), op_type);
        const std::size_t M = out_shape[0], N = out_shape[1], K = at.transA != 0 ? a.shape()[0] : a.shape()[1];
        if (M == 0 || N == 0 || K == 0) return std::nullopt;
        auto y = tensor::for_overwrite(dtype_of<T>, out_shape);
        T* py = y.template values<T>().data();
        if (cm) {
            const T* pc = cm->values<T>().data();
            const T beta = static_cast<T>(at.beta);
            detail::for_each_broadcast_run({cm->shape()}, out_shape, [&](std::size_t f, std::size_t len,
                                                                        std::span<const std::size_t> base,
                                                                        std::span<const std::size_t> step) {
                for (std::size_t i = 0; i < len; ++i) py[f + i] = beta * pc[base[0] + i * step[0]];
            });
        }
        gemm(at.transA != 0, at.transB != 0, M, N, K, static_cast<T>(at.alpha), a.values<T>().data(), a.shape()[1],
             b.values<T>().data(), b.shape()[1], cm ? T(1) : T(0), py, N);
        return y;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.weights({1, 2}).flag("transA").flag("transB").real("alpha", -2.0, 2.0, 0.5).real("beta", -2.0, 2.0, 0.5).optional_input(2, 0.7);
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::gemm_attr, alpha, beta, transA, transB);
