// tensoracle: MatMul, Gemm, convolutions, pooling, LRN, Resize and Upsample.
//
// Shapes and validity are written once over spec::expr (nn_util.hpp): the
// specs' constraints and output shapes use input dims and int attributes as
// symbols, and each typed kernel evaluates the very same expressions on
// constants (with the same constraint messages), so a kernel called directly
// with bad arguments throws shape_error naming the op and the reason.
//
// Semantics chosen where ONNX leaves room:
// - Float kernels accumulate in float for f16/bf16/f32 and in double for f64,
//   and round once. Integer MatMul/Gemm products wrap (two's complement);
//   integer Gemm applies alpha/beta in double and converts with value_cast.
// - run_real runs the same float kernels on AD scalars (ad/), which accumulate
//   in themselves. Max pools and Resize's nearest mode pass the derivative of
//   the selected element; Resize's weights depend on coordinates only, so
//   roi and scales are not differentiable inputs.
// - Pools: explicit pads must be smaller than the kernel (as onnxruntime
//   enforces). With ceil_mode, a last window that would start in the end
//   padding is dropped (PyTorch, ONNX reference >= 1.16; ONNX 1.12 keeps it,
//   the 1.12 test data never reaches the difference). A window that covers
//   only padding (possible with large dilations) is an error, not -inf/NaN.
// - MaxPool produces both outputs: Y and Indices (flat index into X of the
//   first maximum; NaN propagates; storage_order=1 makes the spatial part
//   column-major, as onnxruntime and the ONNX test data do).
// - Conv/pools: `pads` together with auto_pad != NOTSET is a violation (ONNX
//   shape inference rejects it). SAME_UPPER puts the odd pad at the end,
//   SAME_LOWER at the beginning.
// - ConvTranspose: with output_shape (or SAME_*), total padding is
//   max(0, s*(x-1) + output_padding + d*(k-1)+1 - out), split as the ONNX doc
//   says (SAME_UPPER: begin = total/2; otherwise begin = total - total/2);
//   output positions beyond the full result receive only the bias.
// - Resize follows the ONNX 1.12 reference implementation (the one that made
//   the test data): the coordinate transforms use length_resized =
//   scale * length_original as a real number, taps are picked from the
//   edge-padded input, exclude_outside renormalizes the weights inside X
//   (kept edge-clamped when no weight is left inside); with scales, the
//   output size is floor(x * scale) (roi does not scale it). Only floating X.
// - Upsample-9 is Resize with asymmetric coordinates, nearest_mode floor
//   (nearest) or linear, scales >= 1.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
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
#include "tensoracle/ops/fast_paths.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace nn {
using spec::constraint;
using spec::expr;
namespace util = detail::nn;

inline constexpr spec::dtype_set float3 = spec::dtypes_of(dtype::f16, dtype::f32, dtype::f64);
inline constexpr spec::dtype_set matmul_types = spec::types::floating | spec::types::indices;

template <class T>
using acc_t = util::float_acc_t<T>;

inline std::vector<expr> tail(const std::vector<expr>& v, std::size_t from) {
    return {v.begin() + static_cast<std::ptrdiff_t>(std::min(from, v.size())), v.end()};
}

using tensoracle::is_nan;

/// Whether every value is finite: the exponent bits are not all ones. One
/// pass without an early exit, which the compiler vectorizes (a GEMM of 64 x 64
/// takes microseconds; a branchy scan of its inputs took as long).
template <class T>
bool all_finite(std::span<const T> v) {
    using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    static_assert(sizeof(T) == sizeof(bits) && std::numeric_limits<T>::is_iec559);
    constexpr bits exponent = static_cast<bits>(sizeof(T) == 4 ? 0x7f800000ull : 0x7ff0000000000000ull);
    // Blocks of a fixed size, so that the compiler's cheapest vectorization applies.
    constexpr std::size_t block = 16;
    bits any = 0;
    std::size_t i = 0;
    for (; i + block <= v.size(); i += block) {
        bits lane = 0;
        for (std::size_t j = 0; j < block; ++j) {
            lane |= static_cast<bits>((std::bit_cast<bits>(v[i + j]) & exponent) == exponent);
        }
        any |= lane;
    }
    for (; i < v.size(); ++i) any |= static_cast<bits>((std::bit_cast<bits>(v[i]) & exponent) == exponent);
    return any == 0;
}

/// The GEMM plugged in for T (ops/fast_paths.hpp) when every value of `in`
/// is finite, else null: BLASes may skip products with a zero factor, which
/// would turn 0 * inf into 0 where the formula gives NaN.
template <class T>
gemm_function<T> fast_gemm_for(std::initializer_list<const tensor*> in) {
    if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, double>) {
        return nullptr;  // no GEMM in the table for other dtypes
    } else {
        const auto gemm = fast_gemm<T>();
        if (gemm == nullptr) return nullptr;
        for (const tensor* t : in) {
            if (t != nullptr && !all_finite(t->values<T>())) return nullptr;
        }
        return gemm;
    }
}

}  // namespace nn

// ---------------------------------------------------------------------------
// MatMul
// ---------------------------------------------------------------------------

/// MatMul(A, B): numpy matmul. 1-D A is (1, K) and 1-D B is (K, 1) with the
/// added axis removed from the result; leading (batch) dims broadcast.
struct matmul : spec::one_shape_model<matmul> {
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
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
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
        static_assert(spec::dtype_accepted<matmul, T>::value);
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

// ---------------------------------------------------------------------------
// Gemm
// ---------------------------------------------------------------------------

namespace nn {
/// run() and run_real<S>() of ops computed as Op::compute<T>(a, b, optional c,
/// attributes): Gemm (C), Conv and ConvTranspose (B). One body for plain
/// types and AD scalars; every floating input is differentiable, and integer
/// instances (Gemm) have no floating output (placeholder).
template <class Op>
struct two_inputs_and_optional_third {
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type);
        return ops::detail::single_output(ops::detail::dispatch<Op::types>(c.input_dtype(0), Op::op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (requires { Op::template fast<T>(c, at); }) {
                if (auto y = Op::template fast<T>(c, at)) return std::move(*y);
            }
            return tensor(run_typed<T>(c, at, [&](std::size_t i) { return c.input(i).template as_array<T>(); }));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        const auto at = spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type);
        return {run_typed<S>(c, at, [&](std::size_t i) -> const array<S>& { return x[i]; })};
    }
    // Attrs is a parameter, not Op::attributes: Op is incomplete where this base is instantiated.
    template <class T, class Attrs, class Get>
    static array<T> run_typed(const spec::context& c, const Attrs& at, const Get& get) {
        std::optional<array<T>> third;
        if (c.has_input(2)) third = get(2);
        return Op::template compute<T>(get(0), get(1), third, at);
    }
};

/// The multiply-adds of Conv or ConvTranspose with constant dims:
/// Y[f] = B[channel of f] + sum of X[xoff] * W[woff] over the taps (f, xoff, woff)
/// that Op::for_each_tap(plan, fn) visits in the reference order.
struct conv_plan {
    std::size_t n = 0;  ///< spatial axes
    std::vector<std::int64_t> xs, ks, os, pb, st, dl;  ///< X, kernel and Y spatial dims; pad_begin, strides, dilations
    std::int64_t N = 0, C = 0, M = 0, Cg = 0, Mg = 0;  ///< images, X and Y channels, and per group
    shape_type y;
    [[nodiscard]] std::size_t plane() const { return static_cast<std::size_t>(util::count(os)); }
    /// n, xs, ks, N and C from X's and W's shapes (both ops read them alike).
    static conv_plan of_shapes(const shape_type& x, const shape_type& w) {
        conv_plan p;
        p.n = x.size() - 2;
        for (std::size_t i = 0; i < p.n; ++i) {
            p.xs.push_back(static_cast<std::int64_t>(x[i + 2]));
            p.ks.push_back(static_cast<std::int64_t>(w[i + 2]));
        }
        p.N = static_cast<std::int64_t>(x[0]);
        p.C = static_cast<std::int64_t>(x[1]);
        return p;
    }
};

/// The kernel positions k in [0, ks) whose tap a + d * k lies in [0, limit):
/// [first, end) (empty when none). d >= 1.
inline std::pair<std::int64_t, std::int64_t> taps_in_bounds(std::int64_t a, std::int64_t d, std::int64_t ks,
                                                            std::int64_t limit) {
    const std::int64_t first = a >= 0 ? 0 : (-a + d - 1) / d;
    const std::int64_t end = std::min(ks, limit - 1 - a < 0 ? 0 : (limit - 1 - a) / d + 1);
    return {first, end};
}

/// Which output positions of the plan receive no product at all (a Conv
/// window wholly in the padding, a ConvTranspose gap between strided or
/// dilated taps, or a row added by output_padding): without B such an output
/// is exactly 0 whatever the data (value facts: a divisor or a Log there
/// fails). An output is untouched when its position along one spatial axis
/// is, so the answer is per axis: none, some, or all of the outputs.
enum class untouched { none, some, all };
inline untouched untouched_outputs(const conv_plan& p, bool transpose) {
    if (p.N <= 0 || p.M <= 0 || p.os.size() != p.n) return untouched::none;
    for (std::size_t i = 0; i < p.n; ++i) {
        if (p.os[i] <= 0 || p.xs[i] <= 0 || p.ks[i] <= 0) return untouched::none;
    }
    untouched found = untouched::none;
    for (std::size_t i = 0; i < p.n; ++i) {
        std::vector<bool> hit(static_cast<std::size_t>(p.os[i]), false);
        if (!transpose) {
            for (std::int64_t o = 0; o < p.os[i]; ++o) {
                const auto [first, end] = taps_in_bounds(o * p.st[i] - p.pb[i], p.dl[i], p.ks[i], p.xs[i]);
                hit[static_cast<std::size_t>(o)] = first < end;
            }
        } else {
            for (std::int64_t j = 0; j < p.xs[i]; ++j) {
                for (std::int64_t k = 0; k < p.ks[i]; ++k) {
                    const std::int64_t o = j * p.st[i] + k * p.dl[i] - p.pb[i];
                    if (o >= 0 && o < p.os[i]) hit[static_cast<std::size_t>(o)] = true;
                }
            }
        }
        if (std::find(hit.begin(), hit.end(), true) == hit.end()) return untouched::all;
        if (std::find(hit.begin(), hit.end(), false) != hit.end()) found = untouched::some;
    }
    return found;
}

/// The in-bounds taps of axis i summed over its window starts: for Conv and
/// the pools the windows of the outputs over X, for ConvTranspose those of
/// the inputs over Y. A window's in-bounds taps form a box (one range per
/// axis), so the taps of all windows are the product of these sums.
inline double axis_taps(std::int64_t windows, std::int64_t stride, std::int64_t pad_begin, std::int64_t dilation,
                        std::int64_t kernel, std::int64_t limit) {
    double sum = 0.0;
    for (std::int64_t o = 0; o < windows; ++o) {
        const auto [first, end] = taps_in_bounds(o * stride - pad_begin, dilation, kernel, limit);
        sum += static_cast<double>(std::max<std::int64_t>(end - first, 0));
    }
    return sum;
}

/// The steps of Op::for_each_tap over a plan: its products (in-bounds taps
/// only) plus one bounds test per outer kernel position of each window and
/// channel pair. This, not the kernel's full size, is what the reference
/// kernel and its VJP spend on a window mostly in the padding.
inline double visited_taps(const conv_plan& p, bool transpose) {
    if (p.n == 0 || p.os.size() != p.n) return 0.0;
    double products = 1.0, windows = 1.0, outer = 1.0;
    for (std::size_t i = 0; i < p.n; ++i) {
        const std::int64_t starts = transpose ? p.xs[i] : p.os[i], limit = transpose ? p.os[i] : p.xs[i];
        products *= axis_taps(starts, p.st[i], p.pb[i], p.dl[i], p.ks[i], limit);
        windows *= static_cast<double>(starts);
        if (i + 1 < p.n) outer *= static_cast<double>(p.ks[i]);
    }
    const double pairs = transpose ? static_cast<double>(p.N * p.C * p.Mg) : static_cast<double>(p.N * p.M * p.Cg);
    return pairs * (products + windows * outer);
}

/// Op::hints().visits for Conv and ConvTranspose: visited_taps at the context's shapes.
template <class Op>
double conv_visited_work(const spec::context& c, bool transpose) {
    const shape_type x = c.input(0).shape(), w = c.input(1).shape();
    const shape_type b = c.has_input(2) ? c.input(2).shape() : shape_type{};
    const auto p = Op::plan(x, w, c.has_input(2) ? &b : nullptr,
                            spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type));
    return visited_taps(p, transpose);
}

/// Value facts of Conv and ConvTranspose (Op): an output no tap reaches is
/// its channel's bias, 0 without B, for every data. Which outputs the taps
/// reach depends on the geometry alone, so such a place exists in every
/// channel: each value B is forced to hold (a Hardmax's zeros) is an output.
/// Where no tap reaches any output (pads wider than the input along one axis)
/// the output is B broadcast, or all 0, whatever X and W hold.
template <class Op>
std::vector<spec::value_facts> untouched_output_facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                      std::span<const shape_type> shapes, bool transpose) {
    if (shapes.size() < 2) return {spec::value_facts{}};
    const bool bias = shapes.size() > 2 && !shapes[2].empty();
    const auto p = Op::plan(shapes[0], shapes[1], nullptr, spec::parse_attributes<typename Op::attributes>(attrs, Op::op_type));
    const auto where = untouched_outputs(p, transpose);
    if (where == untouched::all) {
        if (!bias) return {spec::value_facts::constant(0.0)};
        return {in.size() > 2 ? in[2] : spec::value_facts{}};  // every channel's bias, nothing else
    }
    if (bias && (in.size() < 3 || in[2].forced.empty())) return {spec::value_facts{}};
    if (where == untouched::none) return {spec::value_facts{}};
    spec::value_facts out;
    if (!bias) return {out.force(0.0)};
    for (const double v : in[2].forced) out.force(v);
    return {out};
}

/// Op::compute<T> of a conv_plan: each output starts at its bias and adds
/// its taps in the plan's order, in T's accumulator type.
template <class Op, class T>
array<T> sum_taps(const array<T>& x, const array<T>& w, const std::optional<array<T>>& b,
                  const typename Op::attributes& at) {
    using acc = acc_t<T>;
    const shape_type bs = b ? shape_type(b->shape().begin(), b->shape().end()) : shape_type{};
    const auto p = Op::plan(shape_type(x.shape().begin(), x.shape().end()), shape_type(w.shape().begin(), w.shape().end()),
                            b ? &bs : nullptr, at);
    auto y = array<T>::from_shape(p.y);
    const std::size_t plane = p.plane(), channels = static_cast<std::size_t>(p.M);
    std::vector<acc> sum(y.size(), acc(0));
    if (b) {
        for (std::size_t f = 0; f < sum.size(); ++f) sum[f] = static_cast<acc>(b->data()[(f / plane) % channels]);
    }
    Op::for_each_tap(p, [&](std::size_t f, std::size_t xoff, std::size_t woff) {
        sum[f] += static_cast<acc>(x.data()[xoff]) * static_cast<acc>(w.data()[woff]);
    });
    for (std::size_t f = 0; f < sum.size(); ++f) y.data()[f] = value_cast<T>(sum[f]);
    return y;
}

/// Op::vjp<V> of a conv_plan: each tap sends its output's cotangent back to
/// both factors (times the other), and the bias gathers its channel's.
template <class Op, class V>
std::vector<array<V>> taps_vjp(const spec::context& c, const std::vector<array<V>>& x,
                               const std::vector<array<V>>& w) {
    const auto at = spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type);
    const bool has_b = c.has_input(2);
    const shape_type bs = has_b ? shape_type(x[2].shape().begin(), x[2].shape().end()) : shape_type{};
    const auto p = Op::plan(shape_type(x[0].shape().begin(), x[0].shape().end()),
                            shape_type(x[1].shape().begin(), x[1].shape().end()), has_b ? &bs : nullptr, at);
    std::vector<array<V>> g;
    for (std::size_t i = 0; i < c.input_count(); ++i) {
        g.push_back(array<V>::from_shape(i < 2 || has_b ? x[i].shape() : shape_type{0}));
        std::fill(g.back().begin(), g.back().end(), V(0));
    }
    const auto* wy = ops::detail::output_cotangent(Op::op_type, w, 0, p.y);
    if (wy == nullptr) return g;
    const V* gy = wy->data();
    const V* px = x[0].data();
    const V* pw = x[1].data();
    V* gx = g[0].data();
    V* gw = g[1].data();
    Op::for_each_tap(p, [&](std::size_t f, std::size_t xoff, std::size_t woff) {
        gx[xoff] += gy[f] * pw[woff];
        gw[woff] += gy[f] * px[xoff];
    });
    if (has_b) {
        const std::size_t plane = p.plane(), channels = static_cast<std::size_t>(p.M);
        for (std::size_t f = 0; f < wy->size(); ++f) g[2].data()[(f / plane) % channels] += gy[f];
    }
    return g;
}

/// compute<T> (sum_taps) and vjp<V> (taps_vjp) of Conv and ConvTranspose
/// from their plan() and for_each_tap(). Attrs is a parameter, not
/// Op::attributes: Op is incomplete where this base is instantiated.
template <class Op>
struct tap_kernel {
    template <class T, class Attrs>
    static array<T> compute(const array<T>& x, const array<T>& w, const std::optional<array<T>>& b, const Attrs& at) {
        static_assert(spec::dtype_accepted<Op, T>::value);
        return sum_taps<Op, T>(x, w, b, at);
    }
    template <class T>
    static array<T> compute(const array<T>& x, const array<T>& w, const std::optional<array<T>>& b) {
        return compute<T>(x, w, b, typename Op::attributes{});
    }
    /// The VJP of compute: the same taps, run backwards (ad/op_derivatives.hpp).
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        return taps_vjp<Op, V>(c, x, w);
    }
};

}  // namespace nn

struct gemm_attr {
    float alpha = 1.0f;
    float beta = 1.0f;
    std::int64_t transA = 0;  // NOLINT(readability-identifier-naming): ONNX names
    std::int64_t transB = 0;  // NOLINT(readability-identifier-naming)
};

/// Gemm(A, B, C?) = alpha * A' B' + beta * C, A' = transA ? A^T : A (M x K),
/// B' = transB ? B^T : B (K x N); C broadcasts unidirectionally to (M, N).
struct gemm : nn::two_inputs_and_optional_third<gemm>, spec::one_shape_model<gemm> {
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
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
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
        static_assert(spec::dtype_accepted<gemm, T>::value);
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

// ---------------------------------------------------------------------------
// Conv
// ---------------------------------------------------------------------------

struct conv_attr {
    std::string auto_pad = "NOTSET";
    std::vector<std::int64_t> dilations;
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
};

/// Conv(X, W, B?): X (N, C, D1..Dn), W (M, C/group, k1..kn), B (M).
/// Y[b, m, o] = B[m] + sum_{c < C/group} sum_{k} X[b, g*C/group + c, s*o + d*k - pad_begin] * W[m, c, k]
/// with g = m / (M/group) and zero padding (positions outside X contribute 0).
struct conv : nn::two_inputs_and_optional_third<conv>, nn::tap_kernel<conv>, spec::one_shape_model<conv> {
    static constexpr std::string_view op_type = "Conv";
    static constexpr int opset = 11;
    using attributes = conv_attr;
    static constexpr spec::dtype_set types = nn::float3;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"X", types, {3, 5}}, {"W", types, {3, 5}}, {"B", types, {1, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 5}}}};

    /// Dims and int attributes, symbolic (from a context) or constant (in the kernel).
    using dims = detail::nn::conv_dims;
    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y;
        detail::nn::window_geometry geo;
        bool ok = false;
    };
    static model shape_model(const dims& d) {
        using spec::expr;
        namespace util = detail::nn;
        model m;
        auto& cs = m.constraints;
        const std::size_t r = d.x.size();
        cs.push_back({expr(r) >= 3, "X has rank >= 3: (N, C, D1, ...)"});
        cs.push_back({expr(d.w.size()) == expr(r), "W has the rank of X: (M, C/group, k1, ...)"});
        if (r < 3 || d.w.size() != r) return m;
        const std::size_t n = r - 2;
        cs.push_back({d.group >= 1, "group >= 1"});
        cs.push_back({d.x[1] == d.w[1] * d.group, "X channels C equal W.shape[1] * group"});
        cs.push_back({d.w[0] % max(d.group, expr(1)) == 0, "output channels M = W.shape[0] are a multiple of group"});
        if (d.b) {
            cs.push_back({expr(d.b->size()) == 1, "B is 1-D"});
            if (d.b->size() != 1) return m;
            cs.push_back({(*d.b)[0] == d.w[0], "B has one value per output channel M = W.shape[0]"});
        }
        if (!util::check_length(cs, d.kernel_shape, n, "kernel_shape", "one value per spatial axis")) return m;
        for (std::size_t i = 0; i < d.kernel_shape.size(); ++i) {
            cs.push_back({d.kernel_shape[i] == d.w[2 + i],
                          "kernel_shape equals W's spatial dims (spatial axis " + std::to_string(i) + ")"});
        }
        util::window_spec ws;
        ws.x = nn::tail(d.x, 2);
        ws.kernel = nn::tail(d.w, 2);
        ws.strides = d.strides;
        ws.dilations = d.dilations;
        ws.pads = d.pads;
        ws.auto_pad = d.auto_pad;
        m.geo = util::forward_window(ws);
        cs.insert(cs.end(), m.geo.constraints.begin(), m.geo.constraints.end());
        if (!m.geo.lengths_ok) return m;
        m.y = {d.x[0], d.w[0]};
        m.y.insert(m.y.end(), m.geo.out.begin(), m.geo.out.end());
        m.ok = true;
        return m;
    }
    template <int = 0>
    static dims context_dims(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        dims d;
        detail::nn::fill_conv_dims(d, c, a.auto_pad, op_type);
        return d;
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = shape_model(context_dims(c));
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}, {{out}, {rank}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// The multiply-adds of X (shape xs) and W (shape ws), checked.
    static nn::conv_plan plan(const shape_type& xs, const shape_type& ws, const shape_type* bs, const attributes& at) {
        namespace util = detail::nn;
        dims d;
        util::fill_conv_dims_from_shapes(d, xs, ws, bs, at, op_type);
        const auto m = shape_model(d);
        util::check_constant(op_type, m.constraints);
        auto p = nn::conv_plan::of_shapes(xs, ws);
        p.os = util::values(m.geo.out);
        p.pb = util::values(m.geo.pad_begin);
        p.st = util::values(m.geo.stride);
        p.dl = util::values(m.geo.dilation);
        p.M = static_cast<std::int64_t>(ws[0]);
        p.Cg = static_cast<std::int64_t>(ws[1]);
        p.Mg = p.M / at.group;
        p.y = util::to_shape(util::values(m.y), op_type);
        return p;
    }
    /// fn(f, xoff, woff) for each product of Y[f]'s sum, output by output
    /// (row-major), then by input channel and kernel position; padded positions
    /// contribute nothing.
    template <class Fn>
    static void for_each_tap(const nn::conv_plan& p, Fn&& fn) {
        namespace util = detail::nn;
        const std::size_t last = p.n - 1;
        const std::vector<std::int64_t> outer_ks(p.ks.begin(), p.ks.end() - 1);
        std::size_t f = 0;
        for (std::int64_t bi = 0; bi < p.N; ++bi) {
            for (std::int64_t mi = 0; mi < p.M; ++mi) {
                const std::int64_t g = mi / p.Mg;
                util::for_each_index(p.os, [&](std::span<const std::int64_t> o) {
                    // The last kernel axis reads X at a + dl * k: only the k in
                    // [k_lo, k_hi) fall inside X, the rest are zero padding.
                    const std::int64_t a = p.st[last] * o[last] - p.pb[last], d = p.dl[last];
                    // (Named copies, not a structured binding: Clang 14 cannot capture one in the lambda below.)
                    const auto range = nn::taps_in_bounds(a, d, p.ks[last], p.xs[last]);
                    const std::int64_t k_lo = range.first, k_hi = range.second;
                    for (std::int64_t c = 0; c < p.Cg; ++c) {
                        util::for_each_index(outer_ks, [&](std::span<const std::int64_t> k) {
                            std::int64_t xoff = bi * p.C + g * p.Cg + c, woff = mi * p.Cg + c;
                            for (std::size_t i = 0; i < last; ++i) {
                                const std::int64_t xi = p.st[i] * o[i] + p.dl[i] * k[i] - p.pb[i];
                                if (xi < 0 || xi >= p.xs[i]) return;  // zero padding
                                xoff = xoff * p.xs[i] + xi;
                                woff = woff * p.ks[i] + k[i];
                            }
                            auto xo = static_cast<std::size_t>(xoff * p.xs[last] + a + d * k_lo);
                            auto wo = static_cast<std::size_t>(woff * p.ks[last] + k_lo);
                            for (std::int64_t kl = k_lo; kl < k_hi; ++kl, xo += static_cast<std::size_t>(d), ++wo) fn(f, xo, wo);
                        });
                    }
                    ++f;
                });
            }
        }
    }
    /// compute<T> as im2col + one GEMM per image and group through the
    /// plugged-in GEMM (ops/fast_paths.hpp), bias added after. Nothing when
    /// none is plugged in for T, a dim is 0 or a value is not finite.
    template <class T>
    static std::optional<tensor> fast(const spec::context& c, const attributes& at) {
        const tensor* bias = c.has_input(2) ? &c.input(2) : nullptr;
        const auto gemm = nn::fast_gemm_for<T>({&c.input(0), &c.input(1), bias});
        if (gemm == nullptr) return std::nullopt;
        namespace util = detail::nn;
        const tensor& x = c.input(0);
        const tensor& w = c.input(1);
        dims d;
        util::fill_conv_dims_from_shapes(d, x.shape(), w.shape(), bias ? &bias->shape() : nullptr, at, op_type);
        const auto m = shape_model(d);
        util::check_constant(op_type, m.constraints);
        const std::size_t n = x.rank() - 2;
        const auto os = util::values(m.geo.out), pb = util::values(m.geo.pad_begin);
        const auto st = util::values(m.geo.stride), dl = util::values(m.geo.dilation);
        const std::size_t N = x.shape()[0], C = x.shape()[1], M = w.shape()[0], Cg = w.shape()[1];
        const auto groups = static_cast<std::size_t>(at.group), Mg = M / groups;
        std::vector<std::int64_t> xs, ks;
        std::size_t P = 1, Kk = 1, X = 1;
        for (std::size_t i = 0; i < n; ++i) {
            xs.push_back(static_cast<std::int64_t>(x.shape()[i + 2]));
            ks.push_back(static_cast<std::int64_t>(w.shape()[i + 2]));
            P *= static_cast<std::size_t>(os[i]);
            Kk *= w.shape()[i + 2];
            X *= x.shape()[i + 2];
        }
        const std::size_t rows = Cg * Kk;
        if (N == 0 || Mg == 0 || P == 0 || rows == 0) return std::nullopt;
        auto y = tensor::for_overwrite(dtype_of<T>, util::to_shape(util::values(m.y), op_type));
        const T* px = x.values<T>().data();
        const T* pw = w.values<T>().data();
        T* py = y.template values<T>().data();
        std::vector<T> col(rows * P);
        const std::size_t last = n - 1, run = static_cast<std::size_t>(os[last]);
        std::vector<std::int64_t> k(n), o(n);
        for (std::size_t bi = 0; bi < N; ++bi) {
            for (std::size_t g = 0; g < groups; ++g) {
                // col[(c, k), p] = X[bi, g Cg + c, st p + dl k - pad], 0 in the padding.
                for (std::size_t ci = 0; ci < Cg; ++ci) {
                    const T* xc = px + (bi * C + g * Cg + ci) * X;
                    std::fill(k.begin(), k.end(), 0);
                    for (std::size_t kk = 0; kk < Kk; ++kk) {
                        T* dst = col.data() + (ci * Kk + kk) * P;
                        std::fill(o.begin(), o.end(), 0);
                        for (std::size_t p = 0; p < P; p += run) {
                            bool inside = true;
                            std::int64_t xoff = 0;
                            for (std::size_t i = 0; i < last; ++i) {
                                const std::int64_t xi = st[i] * o[i] + dl[i] * k[i] - pb[i];
                                inside = inside && xi >= 0 && xi < xs[i];
                                xoff = xoff * xs[i] + xi;
                            }
                            // The last axis: x index st*ol + off lies in [0, xs) for ol in [lo, hi);
                            // zeros before and after, a strided copy between (no test per element).
                            const std::int64_t off = dl[last] * k[last] - pb[last], s = st[last];
                            std::size_t lo = run, hi = run;
                            if (inside) {
                                const std::int64_t first = off >= 0 ? 0 : (-off + s - 1) / s;
                                const std::int64_t end = xs[last] - off <= 0 ? 0 : (xs[last] - off + s - 1) / s;
                                lo = static_cast<std::size_t>(std::min<std::int64_t>(first, static_cast<std::int64_t>(run)));
                                hi = std::max(lo, static_cast<std::size_t>(std::min<std::int64_t>(end, static_cast<std::int64_t>(run))));
                            }
                            T* row = dst + p;
                            std::fill(row, row + lo, T(0));
                            const std::int64_t base = xoff * xs[last] + off;
                            if (s == 1 && lo < hi) {
                                std::copy_n(xc + static_cast<std::size_t>(base + static_cast<std::int64_t>(lo)), hi - lo, row + lo);
                            } else {
                                for (std::size_t ol = lo; ol < hi; ++ol) {
                                    row[ol] = xc[static_cast<std::size_t>(base + static_cast<std::int64_t>(ol) * s)];
                                }
                            }
                            std::fill(row + hi, row + run, T(0));
                            for (std::size_t i = last; i-- > 0;) {  // odometer over the outer output axes
                                if (++o[i] < os[i]) break;
                                o[i] = 0;
                            }
                        }
                        for (std::size_t i = n; i-- > 0;) {  // odometer over the kernel window
                            if (++k[i] < ks[i]) break;
                            k[i] = 0;
                        }
                    }
                }
                T* yg = py + (bi * M + g * Mg) * P;
                gemm(false, false, Mg, P, rows, T(1), pw + g * Mg * rows, rows, col.data(), P, T(0), yg, P);
                if (bias) {
                    const T* pbias = bias->values<T>().data() + g * Mg;
                    for (std::size_t mi = 0; mi < Mg; ++mi) {
                        for (std::size_t p = 0; p < P; ++p) yg[mi * P + p] += pbias[mi];
                    }
                }
            }
        }
        return y;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().weights({1, 2})
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.4)
            .solve("group", 1, 16, 0.5)
            .range(0, -2, 2)
            .range(1, -1, 1)
            .range(2, -1, 1)
            // each output element: one multiply-add per weight of its group
            .work([](const spec::context& c, const std::vector<std::vector<spec::expr>>& out) {
                return spec::product(out[0]) * spec::product(nn::tail(c.shape(1), 1));
            })
            .visits([](const spec::context& c) { return nn::conv_visited_work<conv>(c, false); })
            .facts([](std::span<const spec::value_facts> in, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                return nn::untouched_output_facts<conv>(in, attrs, shapes, false);  // a window wholly in the padding
            });
    }
};

// ---------------------------------------------------------------------------
// ConvTranspose
// ---------------------------------------------------------------------------

struct conv_transpose_attr {
    std::string auto_pad = "NOTSET";
    std::vector<std::int64_t> dilations;
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> output_padding;
    std::vector<std::int64_t> output_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
};

/// ConvTranspose(X, W, B?): X (N, C, D1..Dn), W (C, M/group, k1..kn), B (M).
/// Y[b, g*M/group + m, s*j + d*k - pad_begin] += X[b, g*C/group + c, j] * W[g*C/group + c, m, k],
/// Y starts at B; the full size per axis is s*(x-1) + output_padding + d*(k-1) + 1 - pads.
struct conv_transpose : nn::two_inputs_and_optional_third<conv_transpose>, nn::tap_kernel<conv_transpose>,
                        spec::one_shape_model<conv_transpose> {
    static constexpr std::string_view op_type = "ConvTranspose";
    static constexpr int opset = 11;
    using attributes = conv_transpose_attr;
    static constexpr spec::dtype_set types = nn::float3;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"X", types, {3, 5}}, {"W", types, {3, 5}}, {"B", types, {1, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 5}}}};

    struct dims : detail::nn::conv_dims {
        std::vector<spec::expr> output_padding, output_shape;
    };
    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y, pad_begin, strides, dilations;
        bool ok = false;
    };
    static model shape_model(const dims& d) {
        using spec::expr;
        namespace util = detail::nn;
        model m;
        auto& cs = m.constraints;
        const std::size_t r = d.x.size();
        cs.push_back({expr(r) >= 3, "X has rank >= 3: (N, C, D1, ...)"});
        cs.push_back({expr(d.w.size()) == expr(r), "W has the rank of X: (C, M/group, k1, ...)"});
        if (r < 3 || d.w.size() != r) return m;
        const std::size_t n = r - 2;
        cs.push_back({d.group >= 1, "group >= 1"});
        cs.push_back({d.x[1] == d.w[0], "X channels C equal W.shape[0]"});
        cs.push_back({d.w[0] % max(d.group, expr(1)) == 0, "input channels C are a multiple of group"});
        const expr M = d.w[1] * d.group;
        if (d.b) {
            cs.push_back({expr(d.b->size()) == 1, "B is 1-D"});
            if (d.b->size() != 1) return m;
            cs.push_back({(*d.b)[0] == M, "B has one value per output channel W.shape[1] * group"});
        }
        // Every check runs (no short-circuit), so all length constraints are recorded.
        const std::array<bool, 6> ok{
            util::check_length(cs, d.kernel_shape, n, "kernel_shape", "one value per spatial axis"),
            util::check_length(cs, d.strides, n, "strides", "one value per spatial axis"),
            util::check_length(cs, d.dilations, n, "dilations", "one value per spatial axis"),
            util::check_length(cs, d.output_padding, n, "output_padding", "one value per spatial axis"),
            util::check_length(cs, d.output_shape, n, "output_shape", "one value per spatial axis"),
            util::check_length(cs, d.pads, 2 * n, "pads", "a begin and an end value per spatial axis")};
        const bool lengths = std::all_of(ok.begin(), ok.end(), [](bool b) { return b; });
        if (!lengths) return m;
        if (d.auto_pad != util::auto_pad_mode::notset && !d.pads.empty()) {
            cs.push_back({expr(0), "pads cannot be given together with auto_pad other than NOTSET"});
            return m;
        }
        const auto s = util::or_default(d.strides, n, 1), dl = util::or_default(d.dilations, n, 1);
        const auto op = util::or_default(d.output_padding, n, 0), p = util::or_default(d.pads, 2 * n, 0);
        m.y = {d.x[0], M};
        for (std::size_t i = 0; i < n; ++i) {
            const std::string ax = " (spatial axis " + std::to_string(i) + ")";
            const expr k = d.w[2 + i];
            if (!d.kernel_shape.empty()) cs.push_back({d.kernel_shape[i] == k, "kernel_shape equals W's spatial dims" + ax});
            cs.push_back({k >= 1, "kernel size >= 1" + ax});
            cs.push_back({s[i] >= 1, "strides >= 1" + ax});
            cs.push_back({dl[i] >= 1, "dilations >= 1" + ax});
            cs.push_back({p[i] >= 0 && p[n + i] >= 0, "pads >= 0" + ax});
            cs.push_back({op[i] >= 0, "output_padding >= 0" + ax});
            // ONNX: "each padding value in output_padding must be less than the
            // corresponding stride/dilation dimension"; read as the larger of the two
            // (as onnxruntime checks), the reading that refuses the fewest models.
            cs.push_back({op[i] < max(s[i], dl[i]), "output_padding < max(stride, dilation)" + ax});
            const expr full = s[i] * (d.x[2 + i] - 1) + op[i] + dl[i] * (k - 1) + 1;
            expr out = 0, begin = 0;
            const bool same = d.auto_pad == util::auto_pad_mode::same_upper || d.auto_pad == util::auto_pad_mode::same_lower;
            if (!d.output_shape.empty() || same) {
                out = d.output_shape.empty() ? d.x[2 + i] * s[i] : d.output_shape[i];
                // A zero-size requested output is degenerate (ONNX's own inference drops the axis).
                if (!d.output_shape.empty()) cs.push_back({d.output_shape[i] >= 1, "output_shape >= 1" + ax});
                const expr total = max(expr(0), full - out);
                begin = d.auto_pad == util::auto_pad_mode::same_upper ? total / 2 : total - total / 2;
            } else if (d.auto_pad == util::auto_pad_mode::valid) {
                out = full;
            } else {
                out = full - p[i] - p[n + i];
                begin = p[i];
            }
            cs.push_back({out >= 0, "the output size is non-negative" + ax});
            m.y.push_back(out);
            m.pad_begin.push_back(begin);
        }
        m.strides = s;
        m.dilations = dl;
        m.ok = true;
        return m;
    }
    template <int = 0>
    static dims context_dims(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        dims d;
        detail::nn::fill_conv_dims(d, c, a.auto_pad, op_type);
        d.output_padding = c.attr_ints("output_padding");
        d.output_shape = c.attr_ints("output_shape");
        return d;
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = shape_model(context_dims(c));
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}, {{out}, {rank}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// The multiply-adds of X (shape xs) and W (shape ws), checked.
    static nn::conv_plan plan(const shape_type& xs, const shape_type& ws, const shape_type* bs, const attributes& at) {
        namespace util = detail::nn;
        dims d;
        util::fill_conv_dims_from_shapes(d, xs, ws, bs, at, op_type);
        d.output_padding = util::constants(at.output_padding);
        d.output_shape = util::constants(at.output_shape);
        const auto m = shape_model(d);
        util::check_constant(op_type, m.constraints);
        auto p = nn::conv_plan::of_shapes(xs, ws);
        const auto yd = util::values(m.y);
        p.os.assign(yd.begin() + 2, yd.end());
        p.pb = util::values(m.pad_begin);
        p.st = util::values(m.strides);
        p.dl = util::values(m.dilations);
        p.Mg = static_cast<std::int64_t>(ws[1]);
        p.M = yd[1];
        p.Cg = p.C / at.group;
        p.y = util::to_shape(yd, op_type);
        return p;
    }
    /// fn(yoff, xoff, woff) for each product X[xoff] * W[woff] scattered into
    /// Y[yoff], input element by input element (row-major), then by output
    /// channel of its group and kernel position; positions cropped by pads or
    /// output_shape receive nothing.
    template <class Fn>
    static void for_each_tap(const nn::conv_plan& p, Fn&& fn) {
        namespace util = detail::nn;
        const std::size_t last = p.n - 1;
        const std::vector<std::int64_t> outer_ks(p.ks.begin(), p.ks.end() - 1);
        for (std::int64_t bi = 0; bi < p.N; ++bi) {
            for (std::int64_t ci = 0; ci < p.C; ++ci) {
                const std::int64_t g = ci / p.Cg;
                util::for_each_index(p.xs, [&](std::span<const std::int64_t> j) {
                    std::int64_t xoff = bi * p.C + ci;
                    for (std::size_t i = 0; i < p.n; ++i) xoff = xoff * p.xs[i] + j[i];
                    // The last kernel axis writes Y at a + dl * k: only the k in
                    // [k_lo, k_hi) fall inside Y, the rest are cropped.
                    const std::int64_t a = p.st[last] * j[last] - p.pb[last], d = p.dl[last];
                    // (Named copies, not a structured binding: Clang 14 cannot capture one in the lambda below.)
                    const auto range = nn::taps_in_bounds(a, d, p.ks[last], p.os[last]);
                    const std::int64_t k_lo = range.first, k_hi = range.second;
                    for (std::int64_t mm = 0; mm < p.Mg; ++mm) {
                        const std::int64_t mi = g * p.Mg + mm;
                        util::for_each_index(outer_ks, [&](std::span<const std::int64_t> k) {
                            std::int64_t yoff = bi * p.M + mi, woff = ci * p.Mg + mm;
                            for (std::size_t i = 0; i < last; ++i) {
                                const std::int64_t yi = p.st[i] * j[i] + p.dl[i] * k[i] - p.pb[i];
                                if (yi < 0 || yi >= p.os[i]) return;  // cropped by pads / output_shape
                                yoff = yoff * p.os[i] + yi;
                                woff = woff * p.ks[i] + k[i];
                            }
                            auto yo = static_cast<std::size_t>(yoff * p.os[last] + a + d * k_lo);
                            auto wo = static_cast<std::size_t>(woff * p.ks[last] + k_lo);
                            const auto xo = static_cast<std::size_t>(xoff);
                            for (std::int64_t kl = k_lo; kl < k_hi; ++kl, yo += static_cast<std::size_t>(d), ++wo) fn(yo, xo, wo);
                        });
                    }
                });
            }
        }
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().weights({1, 2})
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.3)
            .solve("group", 1, 16, 0.5)
            .solve("output_padding", 0, 8, 0.3)
            .solve("output_shape", 1, 64, 0.2)
            .range(0, -2, 2)
            .range(1, -1, 1)
            .range(2, -1, 1)
            // each input element scatters into one window per output channel of its group
            .work([](const spec::context& c, const std::vector<std::vector<spec::expr>>&) {
                return spec::product(c.shape(0)) * spec::product(nn::tail(c.shape(1), 1));
            })
            .visits([](const spec::context& c) { return nn::conv_visited_work<conv_transpose>(c, true); })
            .facts([](std::span<const spec::value_facts> in, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                return nn::untouched_output_facts<conv_transpose>(in, attrs, shapes, true);  // gaps between strided taps
            });
    }
};

// ---------------------------------------------------------------------------
// MaxPool, AveragePool
// ---------------------------------------------------------------------------

namespace nn {
/// The pools' shared shape model: rank, kernel_shape and the window geometry.
struct pool_model {
    std::vector<constraint> constraints;
    std::vector<expr> y;
    util::window_geometry geo;
    bool ok = false;
};
inline pool_model pool_shape_model(const std::vector<expr>& x, const std::vector<expr>& kernel_shape,
                                   const std::vector<expr>& strides, const std::vector<expr>& dilations,
                                   const std::vector<expr>& pads, util::auto_pad_mode auto_pad, const expr& ceil_mode) {
    pool_model m;
    auto& cs = m.constraints;
    const std::size_t r = x.size();
    cs.push_back({expr(r) >= 3, "X has rank >= 3: (N, C, D1, ...)"});
    if (r < 3) return m;
    const std::size_t n = r - 2;
    cs.push_back({spec::list_length(kernel_shape) == expr(n), "kernel_shape has one value per spatial axis"});
    if (kernel_shape.size() != n) return m;
    util::window_spec ws;
    ws.x = tail(x, 2);
    ws.kernel = kernel_shape;
    ws.strides = strides;
    ws.dilations = dilations;
    ws.pads = pads;
    ws.auto_pad = auto_pad;
    ws.ceil_mode = ceil_mode;
    ws.pads_below_kernel = true;
    m.geo = util::forward_window(ws);
    cs.insert(cs.end(), m.geo.constraints.begin(), m.geo.constraints.end());
    if (!m.geo.lengths_ok) return m;
    m.y = {x[0], x[1]};
    m.y.insert(m.y.end(), m.geo.out.begin(), m.geo.out.end());
    m.ok = true;
    return m;
}

/// The pools' work estimate (spec::hints::work): one step per window element per output.
inline spec::expr pool_work(const spec::context& c, const std::vector<std::vector<spec::expr>>& out) {
    return spec::product(out[0]) * spec::product(c.attr_ints("kernel_shape"));
}

/// The taps of one pooling window that lie inside X, in row-major kernel
/// order (the order the ONNX formula sums and compares them in): each tap
/// p_i = stride_i * o_i + dilation_i * k_i - pad_begin_i inside [0, X_i) on
/// every axis. The in-bounds kernel positions form a box, found per axis
/// (taps_in_bounds), so no tap is tested for padding one by one.
class window_taps {
public:
    /// dl empty: dilation 1 on every axis (AveragePool).
    window_taps(std::span<const std::int64_t> xs, std::span<const std::int64_t> ks, std::span<const std::int64_t> st,
                std::span<const std::int64_t> dl, std::span<const std::int64_t> pb)
        : xs_(xs), ks_(ks), st_(st), pb_(pb), n_(xs.size()), dl_(n_, 1), lo_(n_), hi_(n_), k_(n_), rs_(n_), cs_(n_) {
        if (!dl.empty()) dl_.assign(dl.begin(), dl.end());
        for (std::size_t i = n_, r = 1; i-- > 0;) {
            rs_[i] = static_cast<std::int64_t>(r);
            r *= static_cast<std::size_t>(xs[i]);
        }
        for (std::size_t i = 0, c = 1; i < n_; ++i) {
            cs_[i] = static_cast<std::int64_t>(c);
            c *= static_cast<std::size_t>(xs[i]);
        }
    }
    /// How many in-bounds taps output position o has.
    [[nodiscard]] std::int64_t count(std::span<const std::int64_t> o) const {
        std::int64_t c = 1;
        for (std::size_t i = 0; i < n_; ++i) {
            const auto range = taps_in_bounds(st_[i] * o[i] - pb_[i], dl_[i], ks_[i], xs_[i]);
            c *= std::max<std::int64_t>(range.second - range.first, 0);
        }
        return c;
    }
    /// fn(row, column) for each in-bounds tap of output position o: the tap's
    /// offset in its plane, row-major and column-major (MaxPool's storage_order 1).
    template <class Fn>
    void visit(std::span<const std::int64_t> o, Fn&& fn) {
        std::int64_t row = 0, col = 0;
        for (std::size_t i = 0; i < n_; ++i) {
            const std::int64_t a = st_[i] * o[i] - pb_[i];
            const auto range = taps_in_bounds(a, dl_[i], ks_[i], xs_[i]);
            if (range.first >= range.second) return;
            lo_[i] = k_[i] = range.first;
            hi_[i] = range.second;
            row += (a + dl_[i] * range.first) * rs_[i];
            col += (a + dl_[i] * range.first) * cs_[i];
        }
        // The last axis as one run; the axes before it as an odometer.
        const std::size_t last = n_ - 1;
        const std::int64_t run = hi_[last] - lo_[last], row_step = dl_[last], col_step = dl_[last] * cs_[last];
        for (;;) {
            for (std::int64_t j = 0, r = row, c = col; j < run; ++j, r += row_step, c += col_step) fn(r, c);
            for (std::size_t i = last;;) {
                if (i == 0) return;
                --i;
                if (++k_[i] < hi_[i]) {
                    row += dl_[i] * rs_[i];
                    col += dl_[i] * cs_[i];
                    break;
                }
                row -= (hi_[i] - 1 - lo_[i]) * dl_[i] * rs_[i];
                col -= (hi_[i] - 1 - lo_[i]) * dl_[i] * cs_[i];
                k_[i] = lo_[i];
            }
        }
    }

private:
    std::span<const std::int64_t> xs_, ks_, st_, pb_;
    std::size_t n_;
    std::vector<std::int64_t> dl_, lo_, hi_, k_, rs_, cs_;  // dilations, box, odometer, row- and column-major strides
};

/// A pool's windows over X (shape model checked), shared by MaxPool and
/// AveragePool, compute and vjp: for_each calls fn(f, base, o, taps) for each
/// output f, with base the offset of its plane in X, o its spatial position
/// and taps its in-bounds taps (taps.visit(o, ...)).
class pool_windows {
public:
    /// dilations empty: 1 on every axis (AveragePool has none).
    template <class Shape>
    pool_windows(std::string_view op_type, const Shape& x_shape, const std::vector<std::int64_t>& kernel_shape,
                 const std::vector<std::int64_t>& strides, const std::vector<std::int64_t>& dilations,
                 const std::vector<std::int64_t>& pads, std::string_view auto_pad, std::int64_t ceil_mode) {
        namespace util = detail::nn;
        const auto m = pool_shape_model(util::constants(x_shape), util::constants(kernel_shape), util::constants(strides),
                                        util::constants(dilations), util::constants(pads),
                                        util::parse_auto_pad(auto_pad, op_type), spec::expr(ceil_mode));
        util::check_constant(op_type, m.constraints);
        const auto yd = util::values(m.y);
        for (std::size_t i = 2; i < x_shape.size(); ++i) xs_.push_back(static_cast<std::int64_t>(x_shape[i]));
        os_.assign(yd.begin() + 2, yd.end());
        ks_ = kernel_shape;
        pb_ = util::values(m.geo.pad_begin);
        pe_ = util::values(m.geo.pad_end);
        st_ = util::values(m.geo.stride);
        dl_ = util::values(m.geo.dilation);
        planes_ = static_cast<std::int64_t>(x_shape[0] * x_shape[1]);
        plane_ = util::count(xs_);
        y_ = util::to_shape(yd, op_type);
    }
    [[nodiscard]] const shape_type& y() const noexcept { return y_; }
    /// The taps for_each visits, plus one step per window (hints' visits).
    [[nodiscard]] double visited_taps() const {
        double taps = 1.0, windows = 1.0;
        for (std::size_t i = 0; i < xs_.size(); ++i) {
            taps *= axis_taps(os_[i], st_[i], pb_[i], dl_[i], ks_[i], xs_[i]);
            windows *= static_cast<double>(os_[i]);
        }
        return static_cast<double>(planes_) * (taps + windows);
    }
    template <class Fn>
    void for_each(Fn&& fn) const {
        window_taps taps(xs_, ks_, st_, dl_, pb_);
        std::size_t f = 0;
        for (std::int64_t pl = 0; pl < planes_; ++pl) {
            detail::nn::for_each_index(os_, [&](std::span<const std::int64_t> o) { fn(f++, pl * plane_, o, taps); });
        }
    }
    /// AveragePool's divisor at o: its in-bounds taps, or with include_pad the
    /// pads too but not the taps past them that ceil_mode adds (per axis,
    /// positions before X_i + pad_end_i). 0 for a window wholly in padding.
    [[nodiscard]] std::int64_t divisor(std::span<const std::int64_t> o, const window_taps& taps, bool include_pad) const {
        if (!include_pad) return taps.count(o);
        std::int64_t d = 1;
        for (std::size_t i = 0; i < xs_.size(); ++i) {
            d *= std::clamp<std::int64_t>(xs_[i] + pe_[i] - (st_[i] * o[i] - pb_[i]), 0, ks_[i]);
        }
        return d;
    }

private:
    std::vector<std::int64_t> xs_, os_, ks_, pb_, pe_, st_, dl_;
    std::int64_t planes_ = 0, plane_ = 0;
    shape_type y_;
};

}  // namespace nn

struct max_pool_attr {
    std::string auto_pad = "NOTSET";
    std::int64_t ceil_mode = 0;
    std::vector<std::int64_t> dilations;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::int64_t storage_order = 0;
    std::vector<std::int64_t> strides;
    static constexpr std::array<std::string_view, 1> required{"kernel_shape"};
};

/// MaxPool(X) -> (Y, Indices): the maximum over each (dilated) window of the
/// input, padding excluded; Indices is the flat index into X of that maximum.
struct max_pool : spec::one_shape_model<max_pool> {
    static constexpr std::string_view op_type = "MaxPool";
    static constexpr int opset = 12;
    using attributes = max_pool_attr;
    static constexpr spec::dtype_set types = nn::float3 | spec::dtypes_of(dtype::i8, dtype::u8);
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 5}}}};
    static constexpr std::array<spec::value_spec, 2> outputs{
        {{"Y", types, {3, 5}}, {"Indices", spec::types::int64, {3, 5}, "I", true}}};

    template <int = 0>
    static nn::pool_model context_model(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return nn::pool_shape_model(c.shape(0), c.attr_ints("kernel_shape"), c.attr_ints("strides"),
                                    c.attr_ints("dilations"), c.attr_ints("pads"),
                                    detail::nn::parse_auto_pad(a.auto_pad, op_type), c.attr("ceil_mode"));
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = context_model(c);
        m.constraints.push_back({c.attr("storage_order") == 0 || c.attr("storage_order") == 1, "storage_order is 0 or 1"});
        return {std::move(m.constraints), {m.y, m.y}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0), dtype::i64}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// X's windows under `at`, shared by compute and the hints' visits.
    template <class Shape>
    static nn::pool_windows windows(const Shape& x_shape, const attributes& at) {
        return {op_type, x_shape, at.kernel_shape, at.strides, at.dilations, at.pads, at.auto_pad, at.ceil_mode};
    }
    /// Y and Indices.
    template <class T>
    static std::pair<array<T>, array<std::int64_t>> compute(const array<T>& x, const attributes& at) {
        static_assert(spec::dtype_accepted<max_pool, T>::value);
        const auto win = windows(x.shape(), at);
        if (at.storage_order != 0 && at.storage_order != 1) throw error(std::string(op_type), "storage_order must be 0 or 1");
        auto y = array<T>::from_shape(win.y());
        auto ind = array<std::int64_t>::from_shape(win.y());
        win.for_each([&](std::size_t f, std::int64_t base, std::span<const std::int64_t> o, nn::window_taps& taps) {
            bool found = false;
            T best{};
            std::int64_t best_idx = 0;
            taps.visit(o, [&](std::int64_t row, std::int64_t col) {  // padding taps are ignored
                const T v = x.data()[base + row];
                bool take = !found || v > best;
                if constexpr (real_scalar<T>) {
                    if (found && nn::is_nan(best)) take = false;  // NaN stays
                    if (found && nn::is_nan(v) && !nn::is_nan(best)) take = true;
                }
                if (take) {
                    best = v;
                    best_idx = base + (at.storage_order == 0 ? row : col);
                    found = true;
                }
            });
            if (!found) throw error(std::string(op_type), "a pooling window covers only padding (dilations too large)");
            y.data()[f] = best;
            ind.data()[f] = best_idx;
        });
        return {std::move(y), std::move(ind)};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::dispatch<types, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            auto [y, i] = compute<T>(c.input(0).as_array<T>(), at);
            return std::vector<tensor>{tensor(y), tensor(i)};
        });
    }
    /// The kernel on AD scalar S: Y carries the derivative of the selected
    /// element; Indices (int64) is a placeholder taken from run(). An integer
    /// X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}, array<S>{}};
        return {compute<S>(x[0], at).first, array<S>{}};
    }
    /// The VJP of Y: each output's cotangent to the element it selected
    /// (ad/op_derivatives.hpp). Indices has none.
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        at.storage_order = 0;  // row-major indices are offsets into X
        const auto selected = compute<V>(x[0], at).second;
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape())};
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, selected.shape());
        if (wy == nullptr) return g;
        for (std::size_t f = 0; f < selected.size(); ++f) g[0].data()[static_cast<std::size_t>(selected.data()[f])] += wy->data()[f];
        return g;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(spec::facts::selection_of(0))
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.4)
            .flag("ceil_mode", 0.4)
            .flag("storage_order", 0.3)
            .work(nn::pool_work)
            .visits([](const spec::context& c) {
                return windows(c.input(0).shape(), spec::parse_attributes<attributes>(c.attributes(), op_type)).visited_taps();
            });
    }
};

struct average_pool_attr {
    std::string auto_pad = "NOTSET";
    std::int64_t ceil_mode = 0;
    std::int64_t count_include_pad = 0;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
    static constexpr std::array<std::string_view, 1> required{"kernel_shape"};
};

/// AveragePool(X): mean over each window; the divisor counts the window's
/// positions inside X (count_include_pad=0) or inside the padded input
/// (count_include_pad=1; positions past the end pad, from ceil_mode, are not counted).
struct average_pool : spec::one_shape_model<average_pool> {
    static constexpr std::string_view op_type = "AveragePool";
    static constexpr int opset = 11;
    using attributes = average_pool_attr;
    static constexpr spec::dtype_set types = nn::float3;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 5}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 5}}}};

    template <int = 0>
    static nn::pool_model context_model(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return nn::pool_shape_model(c.shape(0), c.attr_ints("kernel_shape"), c.attr_ints("strides"), {},
                                    c.attr_ints("pads"), detail::nn::parse_auto_pad(a.auto_pad, op_type),
                                    c.attr("ceil_mode"));
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = context_model(c);
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }


    /// X's windows under `at`, shared by compute and vjp.
    template <class Shape>
    static nn::pool_windows windows(const Shape& x_shape, const attributes& at) {
        return {op_type, x_shape, at.kernel_shape, at.strides, {}, at.pads, at.auto_pad, at.ceil_mode};
    }
    static std::int64_t checked_divisor(const nn::pool_windows& win, std::span<const std::int64_t> o,
                                        const nn::window_taps& taps, const attributes& at) {
        const auto d = win.divisor(o, taps, at.count_include_pad != 0);
        if (d == 0) throw error(std::string(op_type), "a pooling window covers only padding");
        return d;
    }
    template <class T>
    static array<T> compute(const array<T>& x, const attributes& at) {
        static_assert(spec::dtype_accepted<average_pool, T>::value);
        using acc = nn::acc_t<T>;
        const auto win = windows(x.shape(), at);
        auto y = array<T>::from_shape(win.y());
        win.for_each([&](std::size_t f, std::int64_t base, std::span<const std::int64_t> o, nn::window_taps& taps) {
            const auto divisor = checked_divisor(win, o, taps, at);
            acc s = 0;
            taps.visit(o, [&](std::int64_t row, std::int64_t) { s += static_cast<acc>(x.data()[base + row]); });
            y.data()[f] = value_cast<T>(s / static_cast<acc>(divisor));
        });
        return y;
    }
    /// The VJP: each output's cotangent, over its divisor, to every in-bounds
    /// tap of its window (ad/op_derivatives.hpp).
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto win = windows(x[0].shape(), at);
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape())};
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto* wy = detail::output_cotangent(op_type, w, 0, win.y());
        if (wy == nullptr) return g;
        win.for_each([&](std::size_t f, std::int64_t base, std::span<const std::int64_t> o, nn::window_taps& taps) {
            const V share = wy->data()[f] / static_cast<V>(checked_divisor(win, o, taps, at));
            taps.visit(o, [&](std::int64_t row, std::int64_t) { g[0].data()[base + row] += share; });
        });
        return g;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), at));
        }));
    }
    /// The kernel on AD scalar S.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return {compute<S>(x[0], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.4)
            .flag("ceil_mode", 0.4)
            .flag("count_include_pad", 0.5)
            .work(nn::pool_work)
            .visits([](const spec::context& c) {
                return windows(c.input(0).shape(), spec::parse_attributes<attributes>(c.attributes(), op_type)).visited_taps();
            });
    }
};

// ---------------------------------------------------------------------------
// GlobalAveragePool, GlobalMaxPool
// ---------------------------------------------------------------------------

namespace nn {
/// Y[n, c, 1, ..., 1] = mean (or max) of X[n, c, :, ..., :].
template <bool Max>
struct global_pool {
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
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
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

using global_average_pool = nn::global_pool<false>;
using global_max_pool = nn::global_pool<true>;

// ---------------------------------------------------------------------------
// LRN
// ---------------------------------------------------------------------------

struct lrn_attr {
    float alpha = 0.0001f;
    float beta = 0.75f;
    float bias = 1.0f;
    std::int64_t size = 1;
    static constexpr std::array<std::string_view, 1> required{"size"};
};

/// LRN(X): Y = X / (bias + alpha / size * square_sum)^beta, square_sum over the
/// channels [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
struct lrn {
    static constexpr std::string_view op_type = "LRN";
    static constexpr int opset = 13;
    using attributes = lrn_attr;
    static constexpr spec::dtype_set types = spec::types::floating;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 8}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return {{spec::expr(c.rank(0)) >= 3, "X has rank >= 3: (N, C, D1, ...)"}, {c.attr("size") >= 1, "size >= 1"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3) return {};
        return {{{out}, {rank}}};
    }
    /// The base raised to beta must be positive.
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        return {{"bias + alpha / size * square_sum > 0", [a](std::span<const tensor> in) {
                     const auto x = in[0].to<double>();
                     if (x.dimension() < 3 || a.size < 1) return 0.0;
                     const auto base = bases(x, a);
                     double loss = 0.0;
                     for (const double b : base) loss += b > 0 ? 0.0 : (1e-10 - b);
                     return loss;
                 }}};
    }
    /// bias + alpha / size * square_sum for every element, in double.
    static std::vector<double> bases(const array<double>& x, const attributes& a) {
        const std::size_t N = x.shape()[0], C = x.shape()[1], plane = x.size() / std::max<std::size_t>(1, N * C);
        const auto lo = (a.size - 1) / 2, hi = a.size - 1 - lo;
        std::vector<double> out(x.size());
        for (std::size_t b = 0; b < N; ++b) {
            for (std::size_t c = 0; c < C; ++c) {
                const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(c) - lo);
                const auto last = std::min<std::int64_t>(static_cast<std::int64_t>(C) - 1, static_cast<std::int64_t>(c) + hi);
                for (std::size_t p = 0; p < plane; ++p) {
                    double s = 0;
                    for (auto j = first; j <= last; ++j) {
                        const double v = x.data()[(b * C + static_cast<std::size_t>(j)) * plane + p];
                        s += v * v;
                    }
                    out[(b * C + c) * plane + p] =
                        static_cast<double>(a.bias) + static_cast<double>(a.alpha) / static_cast<double>(a.size) * s;
                }
            }
        }
        return out;
    }
    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a) {
        static_assert(spec::dtype_accepted<lrn, T>::value);
        using acc = nn::acc_t<T>;
        if (x.dimension() < 3) throw shape_error(std::string(op_type), "X must have rank >= 3: (N, C, D1, ...)");
        if (a.size < 1) throw error(std::string(op_type), "size must be >= 1");
        const std::size_t N = x.shape()[0], C = x.shape()[1], plane = x.size() / std::max<std::size_t>(1, N * C);
        const auto lo = (a.size - 1) / 2, hi = a.size - 1 - lo;
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t b = 0; b < N; ++b) {
            for (std::size_t c = 0; c < C; ++c) {
                const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(c) - lo);
                const auto last = std::min<std::int64_t>(static_cast<std::int64_t>(C) - 1, static_cast<std::int64_t>(c) + hi);
                for (std::size_t p = 0; p < plane; ++p) {
                    acc s = 0;
                    for (auto j = first; j <= last; ++j) {
                        const auto v = static_cast<acc>(x.data()[(b * C + static_cast<std::size_t>(j)) * plane + p]);
                        s += v * v;
                    }
                    const std::size_t f = (b * C + c) * plane + p;
                    const acc base = static_cast<acc>(a.bias) + static_cast<acc>(a.alpha) / static_cast<acc>(a.size) * s;
                    const acc scale = math::pow(base, static_cast<acc>(a.beta));
                    y.data()[f] = value_cast<T>(static_cast<acc>(x.data()[f]) / scale);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), at));
        }));
    }
    /// The kernel on AD scalar S; beta is a constant exponent of a positive base.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return {compute<S>(x[0], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.solve("size", 1, 9, 1.0).real("alpha", 1e-4, 1e-2, 0.5).real("beta", 0.5, 0.9, 0.5).real("bias", 1.0, 3.0, 0.5).range(0, -3, 3).facts(facts);
    }
    /// Y = X * s with s = (bias + alpha/size * sum)^-beta in (0, bias^-beta] when
    /// alpha, beta >= 0 and bias > 0: signs stay, magnitudes scale by at most
    /// bias^-beta (LRN of values in [0, 1] with bias > 1 stays below 1).
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type>) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        if (in.empty() || !(a.alpha >= 0.0f && a.beta >= 0.0f && a.bias > 0.0f)) return {spec::value_facts{}};
        const auto& x = in[0];
        const double s = std::pow(static_cast<double>(a.bias), -static_cast<double>(a.beta));
        spec::value_facts y;
        y.lo = x.lo >= 0.0 ? 0.0 : x.lo * s;
        y.hi = x.hi <= 0.0 ? 0.0 : x.hi * s;
        if (std::isfinite(x.some_at_most)) y.some_at_most = x.some_at_most >= 0.0 ? x.some_at_most * s : 0.0;
        if (std::isfinite(x.some_at_least)) y.some_at_least = x.some_at_least <= 0.0 ? x.some_at_least * s : 0.0;
        for (const double v : x.forced) {
            if (v == 0.0) {
                y.force(0.0);  // 0 stays 0
            } else if (a.size == 1) {
                // A window of one channel: element-wise, so a forced value maps exactly.
                y.force(v * std::pow(static_cast<double>(a.bias) + static_cast<double>(a.alpha) * v * v,
                                     -static_cast<double>(a.beta)));
            }
        }
        return {y};
    }
};

// ---------------------------------------------------------------------------
// Resize, Upsample
// ---------------------------------------------------------------------------

struct resize_attr {
    std::string coordinate_transformation_mode = "half_pixel";
    float cubic_coeff_a = -0.75f;
    std::int64_t exclude_outside = 0;
    float extrapolation_value = 0.0f;
    std::string mode = "nearest";
    std::string nearest_mode = "round_prefer_floor";
};

namespace nn {
/// Resize's interpolation (the ONNX 1.12 reference, resize.py, transcribed).
struct resize_impl {
    enum class mode_t : std::uint8_t { nearest, linear, cubic };
    enum class ctm_t : std::uint8_t { half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize };
    enum class nearest_t : std::uint8_t { round_prefer_floor, round_prefer_ceil, floor, ceil };
    struct settings {
        mode_t mode;
        ctm_t ctm;
        nearest_t nearest;
        double cubic_a;
        bool exclude_outside;
        double extrapolation;
    };
    static settings parse(const resize_attr& a, std::string_view op_type) {
        settings s{};
        const std::string where(op_type);
        if (a.mode == "nearest") s.mode = mode_t::nearest;
        else if (a.mode == "linear") s.mode = mode_t::linear;
        else if (a.mode == "cubic") s.mode = mode_t::cubic;
        else throw error(where, "mode must be nearest, linear or cubic, got '" + a.mode + "'");
        const auto& c = a.coordinate_transformation_mode;
        if (c == "half_pixel") s.ctm = ctm_t::half_pixel;
        else if (c == "pytorch_half_pixel") s.ctm = ctm_t::pytorch_half_pixel;
        else if (c == "align_corners") s.ctm = ctm_t::align_corners;
        else if (c == "asymmetric") s.ctm = ctm_t::asymmetric;
        else if (c == "tf_half_pixel_for_nn") s.ctm = ctm_t::tf_half_pixel_for_nn;
        else if (c == "tf_crop_and_resize") s.ctm = ctm_t::tf_crop_and_resize;
        else throw error(where, "unknown coordinate_transformation_mode '" + c + "'");
        if (a.nearest_mode == "round_prefer_floor") s.nearest = nearest_t::round_prefer_floor;
        else if (a.nearest_mode == "round_prefer_ceil") s.nearest = nearest_t::round_prefer_ceil;
        else if (a.nearest_mode == "floor") s.nearest = nearest_t::floor;
        else if (a.nearest_mode == "ceil") s.nearest = nearest_t::ceil;
        else throw error(where, "unknown nearest_mode '" + a.nearest_mode + "'");
        s.cubic_a = static_cast<double>(a.cubic_coeff_a);
        s.exclude_outside = a.exclude_outside != 0;
        s.extrapolation = static_cast<double>(a.extrapolation_value);
        if (!std::isfinite(s.cubic_a)) throw error(where, "cubic_coeff_a must be finite");
        return s;
    }

    /// floor(x * scale) per axis; scales must be positive and finite.
    static std::vector<std::int64_t> scaled_dims(const shape_type& x, std::span<const float> scales, std::string_view op_type) {
        if (scales.size() != x.size()) {
            throw shape_error(std::string(op_type), "scales has " + std::to_string(scales.size()) + " values for rank " +
                                                        std::to_string(x.size()));
        }
        std::vector<std::int64_t> out;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double s = static_cast<double>(scales[i]);
            if (!(s > 0.0) || !std::isfinite(s)) {
                throw error(std::string(op_type), "scales must be positive and finite, got " + std::to_string(s));
            }
            const double v = std::floor(s * static_cast<double>(x[i]));
            if (!(v < 0x1p31)) throw shape_error(std::string(op_type), "scaled output dim is too large");
            out.push_back(static_cast<std::int64_t>(v));
        }
        return out;
    }

    struct taps {
        bool extrapolate = false;
        std::vector<std::int64_t> index;
        std::vector<double> weight;
    };
    static std::vector<double> coeffs(const settings& s, double ratio, bool integral) {
        switch (s.mode) {
            case mode_t::nearest:
                if (integral) return {0.0, 1.0};
                switch (s.nearest) {
                    case nearest_t::round_prefer_floor: return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
                    case nearest_t::round_prefer_ceil: return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
                    case nearest_t::floor: return {1.0, 0.0};
                    case nearest_t::ceil: return {0.0, 1.0};
                }
                return {};
            case mode_t::linear: return {1.0 - ratio, ratio};
            case mode_t::cubic: {
                const double A = s.cubic_a, r = ratio, q = 1.0 - ratio;
                return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
                        ((A + 2) * r - (A + 3)) * r * r + 1,
                        ((A + 2) * q - (A + 3)) * q * q + 1,
                        ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A};
            }
        }
        return {};
    }
    /// Taps of output coordinate x along an axis of `in` elements.
    static taps axis_taps(const settings& s, std::int64_t x_resized, std::int64_t in, double scale, double roi_start,
                          double roi_end, std::string_view op_type) {
        const double x = static_cast<double>(x_resized), len = static_cast<double>(in);
        const double out_w = scale * len;  // the reference's output_width (a real number)
        double xo = 0.0;
        taps t;
        switch (s.ctm) {
            case ctm_t::align_corners: xo = out_w == 1.0 ? 0.0 : x * (len - 1) / (out_w - 1); break;
            case ctm_t::asymmetric: xo = x / scale; break;
            case ctm_t::tf_crop_and_resize:
                xo = out_w == 1.0 ? (roi_end - roi_start) * (len - 1) / 2 : x * (roi_end - roi_start) * (len - 1) / (out_w - 1);
                xo += roi_start * (len - 1);
                if (xo < 0 || xo > len - 1) {
                    t.extrapolate = true;
                    return t;
                }
                break;
            case ctm_t::pytorch_half_pixel: xo = out_w == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5; break;
            case ctm_t::half_pixel: xo = (x + 0.5) / scale - 0.5; break;
            case ctm_t::tf_half_pixel_for_nn: xo = (x + 0.5) / scale; break;
        }
        if (!std::isfinite(xo) || std::fabs(xo) > 0x1p40) {
            throw error(std::string(op_type), "source coordinate " + std::to_string(xo) + " is out of range");
        }
        const double fl = std::floor(xo);
        const bool integral = xo == fl;
        const double ratio = integral ? 1.0 : xo - fl;
        auto w = coeffs(s, ratio, integral);
        const auto n = static_cast<std::int64_t>(w.size());
        const std::int64_t p = (n + 1) / 2;  // edge padding of the reference
        const std::int64_t L = in + 2 * p;
        // The n padded indices nearest to xo + p (ties to the lower index), kept inside [0, L).
        std::int64_t start = static_cast<std::int64_t>(std::ceil(xo + static_cast<double>(p))) - n / 2;
        start = std::clamp<std::int64_t>(start, 0, L - n);
        std::vector<double> inside = w;
        double sum = 0;
        for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t idx = start + j - p;
            if (idx < 0 || idx >= in) inside[static_cast<std::size_t>(j)] = 0.0;
            sum += inside[static_cast<std::size_t>(j)];
            t.index.push_back(std::clamp<std::int64_t>(idx, 0, in - 1));
        }
        // exclude_outside renormalizes the weights inside X. When none is left
        // (only nearest can pick a tap outside alone), the reference divides by
        // zero; we keep the edge-clamped tap instead.
        if (s.exclude_outside && sum != 0.0) {
            for (double& v : inside) v /= sum;
            w = std::move(inside);
        }
        t.weight = std::move(w);
        return t;
    }

    /// Y from X, output dims, per-axis scales (used by the coordinate transforms) and roi.
    template <class T>
    static array<T> interpolate(const array<T>& x, const std::vector<std::int64_t>& out, const std::vector<double>& scales,
                                const std::vector<double>& roi, const settings& s, std::string_view op_type) {
        // Integer and bool images interpolate in double and truncate once (ONNX's
        // reference: numpy, then astype); nearest picks stay exact.
        using acc = std::conditional_t<std::is_integral_v<T>, double, acc_t<T>>;
        namespace util = detail::nn;
        const auto xd = util::dims_of(x);
        const std::size_t r = xd.size();
        std::vector<std::vector<taps>> axis(r);
        for (std::size_t i = 0; i < r; ++i) {
            if (xd[i] == 0 && out[i] != 0) throw shape_error(std::string(op_type), "cannot resize an empty axis to a non-empty one");
            for (std::int64_t o = 0; o < out[i] && xd[i] > 0; ++o) {
                const double rs = roi.empty() ? 0.0 : roi[i], re = roi.empty() ? 1.0 : roi[r + i];
                axis[i].push_back(axis_taps(s, o, xd[i], scales[i], rs, re, op_type));
            }
        }
        auto y = array<T>::from_shape(util::to_shape(out, op_type));
        const auto xstrides = detail::strides_of(shape_type(x.shape().begin(), x.shape().end()));
        std::size_t f = 0;
        // Scratch reused across output elements (the loops run per element).
        std::vector<const taps*> tp(r);
        std::vector<std::size_t> counts(r), j(r);
        util::for_each_index(out, [&](std::span<const std::int64_t> o) {
            bool empty = false;
            for (std::size_t i = 0; i < r; ++i) {
                tp[i] = &axis[i][static_cast<std::size_t>(o[i])];
                if (tp[i]->extrapolate) {
                    y.data()[f++] = value_cast<T>(s.extrapolation);
                    return;
                }
                counts[i] = tp[i]->index.size();
                empty = empty || counts[i] == 0;
            }
            acc sum = 0;
            // Every tap combination, row-major (the last axis fastest).
            std::fill(j.begin(), j.end(), std::size_t{0});
            for (bool more = !empty; more;) {
                double w = 1.0;
                std::size_t off = 0;
                for (std::size_t i = 0; i < r; ++i) {
                    w *= tp[i]->weight[j[i]];
                    off += static_cast<std::size_t>(tp[i]->index[j[i]]) * xstrides[i];
                }
                sum += static_cast<acc>(w) * static_cast<acc>(x.data()[off]);
                more = false;
                for (std::size_t i = r; i-- > 0;) {
                    if (++j[i] < counts[i]) {
                        more = true;
                        break;
                    }
                    j[i] = 0;
                }
            }
            y.data()[f++] = value_cast<T>(sum);
        });
        return y;
    }
};
}  // namespace nn

/// Resize(X, roi?, scales?, sizes?): exactly one of scales (float32) and sizes
/// (int64) is given and non-empty; roi is used by tf_crop_and_resize only.
struct resize {
    static constexpr std::string_view op_type = "Resize";
    static constexpr int opset = 13;
    using attributes = resize_attr;
    static constexpr spec::dtype_set types = spec::types::all;
    static constexpr std::array<spec::value_spec, 4> inputs{{{"X", types, {1, 8}},
                                                             {"roi", spec::types::ieee_floating, {1, 1}, "T2", true},
                                                             {"scales", spec::dtypes_of(dtype::f32), {1, 1}, "Tscales", true},
                                                             {"sizes", spec::types::int64, {1, 1}, "Tsizes", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {1, 8}}}};

    static bool given(const spec::context& c, std::size_t i) { return c.has_input(i) && c.element_count(i) > 0; }

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        using spec::expr;
        const auto s = nn::resize_impl::parse(spec::parse_attributes<attributes>(c.attributes(), op_type), op_type);
        const std::size_t r = c.rank(0);
        const bool has_scales = given(c, 2), has_sizes = given(c, 3);
        std::vector<spec::constraint> cs{{expr(has_scales != has_sizes), "exactly one of scales and sizes is given"}};
        if (has_scales) {
            cs.push_back({c.dim(2, 0) == expr(r), "scales has one value per axis of X"});
            if (c.element_count(2) == r) (void)nn::resize_impl::scaled_dims(c.concrete_shape(0), c.input(2).values<float>(), op_type);
        }
        if (has_sizes) {
            cs.push_back({c.dim(3, 0) == expr(r), "sizes has one value per axis of X"});
            if (c.element_count(3) == r) {
                const auto v = c.values(3);
                for (std::size_t i = 0; i < r; ++i) {
                    cs.push_back({v[i] >= 0, "sizes >= 0 (axis " + std::to_string(i) + ")"});
                    cs.push_back({c.dim(0, i) >= 1 || v[i] == 0, "an empty axis resizes to 0 (axis " + std::to_string(i) + ")"});
                }
            }
        }
        if (s.ctm == nn::resize_impl::ctm_t::tf_crop_and_resize) {
            cs.push_back({expr(c.has_input(1)), "tf_crop_and_resize needs roi"});
            if (c.has_input(1)) cs.push_back({c.dim(1, 0) == expr(2 * r), "roi has a start and an end per axis of X"});
        }
        return cs;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        if (given(c, 3)) return {c.values(3)};
        const auto d = nn::resize_impl::scaled_dims(c.concrete_shape(0), c.input(2).values<float>(), op_type);
        std::vector<spec::expr> y;
        for (const auto v : d) y.emplace_back(v);
        return {y};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        return {{{out}, {rank}}, {types.members(), {1}}, {{dtype::f32}, {1}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// scales or sizes: exactly one non-empty. roi: 2 * rank values or empty.
    template <class T>
    static array<T> compute(const array<T>& x, const std::vector<double>& roi, const std::vector<float>& scales,
                            const std::vector<std::int64_t>& sizes, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<resize, T>::value);
        const auto s = nn::resize_impl::parse(a, op_type);
        const std::size_t r = x.dimension();
        const shape_type xs(x.shape().begin(), x.shape().end());
        if (scales.empty() == sizes.empty()) throw shape_error(std::string(op_type), "exactly one of scales and sizes must be given");
        std::vector<std::int64_t> out;
        std::vector<double> sc(r);
        if (!sizes.empty()) {
            if (sizes.size() != r) throw shape_error(std::string(op_type), "sizes must have one value per axis of X");
            out = sizes;
            for (std::size_t i = 0; i < r; ++i) {
                if (out[i] < 0) throw shape_error(std::string(op_type), "sizes must be >= 0");
                sc[i] = xs[i] == 0 ? 1.0 : static_cast<double>(out[i]) / static_cast<double>(xs[i]);
            }
        } else {
            out = nn::resize_impl::scaled_dims(xs, scales, op_type);
            for (std::size_t i = 0; i < r; ++i) sc[i] = static_cast<double>(scales[i]);
        }
        if (s.ctm == nn::resize_impl::ctm_t::tf_crop_and_resize && roi.size() != 2 * r) {
            throw shape_error(std::string(op_type), "tf_crop_and_resize needs roi with a start and an end per axis");
        }
        return nn::resize_impl::interpolate(x, out, sc, s.ctm == nn::resize_impl::ctm_t::tf_crop_and_resize ? roi : std::vector<double>{},
                                            s, op_type);
    }
    /// roi, scales and sizes as compute takes them (empty when absent).
    struct params {
        std::vector<double> roi;
        std::vector<float> scales;
        std::vector<std::int64_t> sizes;
    };
    static params read_params(const spec::context& c) {
        params p;
        if (c.has_input(1)) {
            const auto v = c.input(1).to<double>();
            p.roi.assign(v.begin(), v.end());
        }
        if (given(c, 2)) {
            const auto v = c.input(2).values<float>();
            p.scales.assign(v.begin(), v.end());
        }
        if (given(c, 3)) {
            const auto v = c.input(3).values<std::int64_t>();
            p.sizes.assign(v.begin(), v.end());
        }
        return p;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto p = read_params(c);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), p.roi, p.scales, p.sizes, at));
        }));
    }
    /// X only: roi and scales are grid parameters (the coordinates are computed
    /// in double, and scales also fix the output shape), not data.
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        return {0};
    }
    /// The kernel on AD scalar S. The interpolation weights depend on
    /// coordinates only, so Y is linear in X; an integer X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        const auto p = read_params(c);
        return {compute<S>(x[0], p.roi, p.scales, p.sizes, at)};
    }
    /// Nearest picks input elements and linear weighs two neighbours per axis by
    /// weights in [0, 1] (edges repeated): both stay within X's range, plus the
    /// extrapolation value under tf_crop_and_resize. Cubic overshoots: unknown.
    template <int = 0>
    static std::vector<spec::value_facts> interpolation_facts(std::span<const spec::value_facts> in,
                                                              const spec::attribute_map& attrs, std::span<const shape_type>) {
        const auto at = spec::parse_attributes<attributes>(attrs, op_type);
        if (in.empty() || (at.mode != "nearest" && at.mode != "linear")) return {spec::value_facts{}};
        auto f = at.mode == "nearest" ? in[0].selection() : in[0].range_only();
        if (at.coordinate_transformation_mode == "tf_crop_and_resize") {  // may appear, is not forced to
            f.integral = f.integral && static_cast<double>(at.extrapolation_value) == std::floor(at.extrapolation_value);
            f.lo = std::min(f.lo, static_cast<double>(at.extrapolation_value));
            f.hi = std::max(f.hi, static_cast<double>(at.extrapolation_value));
        }
        return {f};
    }
    template <int = 0>
    static spec::hints hints() {
        const auto floats = [](rng& g, std::size_t n, double lo, double hi) {
            auto t = array<float>::from_shape({n});
            for (std::size_t i = 0; i < n; ++i) t.data()[i] = static_cast<float>(g.uniform(lo, hi));
            return tensor(t);
        };
        return spec::hints{}
            .facts(interpolation_facts<>)
            .choice("mode", {std::string("nearest"), std::string("linear"), std::string("cubic")}, 0.8)
            // Each output element reads 1 (nearest), 2 (linear) or 4 (cubic) taps along every axis.
            .work([](const spec::context& c, const std::vector<std::vector<spec::expr>>& out) {
                const auto it = c.attributes().find("mode");
                const auto* mode = it != c.attributes().end() ? std::get_if<std::string>(&it->second) : nullptr;
                const std::int64_t per_axis = mode == nullptr || *mode == "nearest" ? 1 : (*mode == "linear" ? 2 : 4);
                std::int64_t taps = 1;
                for (std::size_t a = 0; a < c.rank(0); ++a) taps *= per_axis;
                return spec::product(out[0]) * taps;
            })
            .choice("coordinate_transformation_mode",
                    {std::string("half_pixel"), std::string("pytorch_half_pixel"), std::string("align_corners"),
                     std::string("asymmetric"), std::string("tf_half_pixel_for_nn"), std::string("tf_crop_and_resize")},
                    0.8)
            .choice("nearest_mode", {std::string("round_prefer_floor"), std::string("round_prefer_ceil"), std::string("floor"), std::string("ceil")}, 0.5)
            .real("cubic_coeff_a", -0.75, -0.5, 0.3)
            .flag("exclude_outside", 0.3)
            .real("extrapolation_value", -10.0, 10.0, 0.3)
            .optional_input(1, 0.3)
            .optional_input(2, 0.5)
            .optional_input(3, 0.5)
            .before_solving(1, [floats](rng& g, const spec::context& c) {  // roi: starts in [0, 0.3], ends in [0.7, 1]
                const std::size_t r = c.rank(0);
                tensor t = floats(g, 2 * r, 0.0, 0.3);
                for (std::size_t i = 0; i < r; ++i) t.values<float>()[r + i] = static_cast<float>(g.uniform(0.7, 1.0));
                return t.cast(c.input_dtype(1));
            })
            .before_solving(2, [](rng& g, const spec::context& c) {  // scales: a few exact binary fractions
                static constexpr std::array<float, 6> choices{0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 3.0f};
                auto t = array<float>::from_shape({c.rank(0)});
                for (auto& v : t) v = choices[static_cast<std::size_t>(g.below(choices.size()))];
                return tensor(t);
            });
    }
};

struct upsample_attr {
    std::string mode = "nearest";
};

/// Upsample-9(X, scales): deprecated Resize; asymmetric coordinates, nearest
/// rounds down, linear interpolates; scales >= 1, output floor(x * scale).
struct upsample {
    static constexpr std::string_view op_type = "Upsample";
    static constexpr int opset = 9;
    static constexpr int last_opset = 9;  // deprecated from opset 10 on (Resize replaces it)
    using attributes = upsample_attr;
    static constexpr spec::dtype_set types = spec::types::ieee_floating | spec::types::integers | spec::types::boolean;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"X", types, {1, 8}}, {"scales", spec::dtypes_of(dtype::f32), {1, 1}, "Tscales"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {1, 8}}}};

    static resize_attr as_resize(const attributes& a) {
        if (a.mode != "nearest" && a.mode != "linear") {
            throw error(std::string(op_type), "mode must be nearest or linear, got '" + a.mode + "'");
        }
        resize_attr r;
        r.mode = a.mode;
        r.coordinate_transformation_mode = "asymmetric";
        r.nearest_mode = "floor";
        return r;
    }
    static void check_scales(std::span<const float> s) {
        for (const float v : s) {
            if (!(v >= 1.0f) || !std::isfinite(v)) throw error(std::string(op_type), "scales must be finite and >= 1");
        }
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        (void)as_resize(spec::parse_attributes<attributes>(c.attributes(), op_type));
        check_scales(c.input(1).values<float>());
        return {{c.dim(1, 0) == spec::expr(c.rank(0)), "scales has one value per axis of X"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto d = nn::resize_impl::scaled_dims(c.concrete_shape(0), c.input(1).values<float>(), op_type);
        std::vector<spec::expr> y;
        for (const auto v : d) y.emplace_back(v);
        return {y};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        return {{{out}, {rank}}, {{dtype::f32}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, const std::vector<float>& scales, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<upsample, T>::value);
        check_scales(scales);
        return resize::compute<T>(x, {}, scales, {}, as_resize(a));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto scales = scales_of(c);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), scales, at));
        }));
    }
    static std::vector<float> scales_of(const spec::context& c) {
        const auto v = c.input(1).values<float>();
        return {v.begin(), v.end()};
    }
    /// X only: the (float) scales set the geometry, they are not data.
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        return {0};
    }
    /// The kernel on AD scalar S (linear in X); an integer X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute<S>(x[0], scales_of(c), at)};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .choice("mode", {std::string("nearest"), std::string("linear")}, 0.8)
            .before_solving(1, [](rng& g, const spec::context& c) {  // scales >= 1
                static constexpr std::array<float, 4> choices{1.0f, 1.5f, 2.0f, 3.0f};
                auto t = array<float>::from_shape({c.rank(0)});
                for (auto& v : t) v = choices[static_cast<std::size_t>(g.below(choices.size()))];
                return tensor(t);
            });
    }
};

inline constexpr auto nn_ops = hana::tuple_t<matmul, gemm, conv, conv_transpose, max_pool, average_pool, global_average_pool,
                                             global_max_pool, lrn, resize, upsample>;

/// ONNX-named aliases, the names the rest of the kit uses for op specs.
using GlobalAveragePool = global_average_pool;
using GlobalMaxPool = global_max_pool;
using MatMul = matmul;
using Gemm = gemm;
using Conv = conv;
using ConvTranspose = conv_transpose;
using MaxPool = max_pool;
using AveragePool = average_pool;
using LRN = lrn;
using Resize = resize;
using Upsample = upsample;


}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::gemm_attr, alpha, beta, transA, transB);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::conv_attr, auto_pad, dilations, group, kernel_shape, pads, strides);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::conv_transpose_attr, auto_pad, dilations, group, kernel_shape, output_padding,
                        output_shape, pads, strides);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::max_pool_attr, auto_pad, ceil_mode, dilations, kernel_shape, pads, storage_order,
                        strides);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::average_pool_attr, auto_pad, ceil_mode, count_include_pad, kernel_shape, pads,
                        strides);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::lrn_attr, alpha, beta, bias, size);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::resize_attr, coordinate_transformation_mode, cubic_coeff_a, exclude_outside,
                        extrapolation_value, mode, nearest_mode);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::upsample_attr, mode);
