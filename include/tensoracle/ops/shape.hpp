// tensoracle: shape and data-movement ops (Reshape, Transpose, Squeeze,
// Unsqueeze, Flatten, Slice, Concat, Split, Expand, Tile, Pad, Gather,
// GatherElements, Trilu, Shape, Size, ConstantOfShape, Range, DepthToSpace,
// SpaceToDepth).
//
// Output shapes are symbolic wherever ONNX's formula is integer arithmetic
// over dims, int attributes and values of int64 inputs (shape, axes, pads,
// repeats, starts/ends/steps, ...); symbolic axes index dim lists through
// chains of selects (shape_util::pick). Shapes that depend on dim *values* in a
// way that changes the output rank (Squeeze without axes) or on float data
// (Range on floats) are computed concretely.
//
// Derivatives (run_real): these kernels only move scalars, so they run
// unchanged on AD scalars and each output element carries the derivative of
// the input element it copies; fill values are constants, except Pad's
// constant_value input, which is differentiable when given. Shape, Size,
// ConstantOfShape and Range have no run_real (see their specs).
//
// Semantics chosen where ONNX leaves them open (each op's comment repeats its own):
//  - negative axes are normalized; out-of-range axes, perms, indices of shape
//    values are constraint violations (shape_error), never clamped;
//  - Transpose's perm must be a permutation of [0, rank) (no negative entries);
//  - Squeeze with an *empty* axes input removes nothing (the literal reading,
//    numpy's squeeze(axis=())); without the input it removes every dim of 1;
//  - Pad: negative pads crop; reflect/edge read the original input (the index
//    map is i = o - pad_begin, then reflected / clamped at the input borders);
//    reflect needs pads <= dim - 1 (as onnxruntime), edge needs dim >= 1 where
//    it pads;
//  - GatherElements needs indices dims <= data dims off the axis (onnxruntime);
//  - Split-13 cannot see its node's output count: the reserved attribute
//    `__num_outputs` (default 2, set by the interpreter / ONNX importer from the
//    node's output count) gives the number of equal parts when `split` is absent;
//  - Range on floats computes the count and the values start + i * delta in
//    double and rounds once to T.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>

#include "tensoracle/ops/detail/broadcast.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace shape_detail {
namespace types = spec::types;
using spec::expr;
using spec::constraint;
using spec::context;

inline constexpr std::size_t max_rank = 8;

/// Random indices of dtype d and shape s into the dim of input 0 at the op's
/// `axis` attribute, negative ones included (Gather, GatherElements hints).
inline tensor random_indices(rng& g, const context& c, dtype d, const shape_type& s) {
    const auto axis = std::get<std::int64_t>(c.attributes().at("axis"));
    const auto dims = c.input(0).shape();
    const auto dim = static_cast<std::int64_t>(dims[spec::normalize_axis(axis, dims.size(), c.op_type())]);
    auto idx = array<std::int64_t>::from_shape(s);
    for (auto& v : idx) v = dim > 0 ? g.integer(-dim, dim - 1) : 0;
    return tensor::from_array_as(idx, d);
}

/// An int64 scalar tensor.
inline tensor int64_scalar(std::int64_t v) {
    auto a = array<std::int64_t>::from_shape(shape_type{});
    a.data()[0] = v;
    return tensor(a);
}

/// run() of an op with one output of the data input's dtype: Op::run_typed<T>(c, x) reads the op's other
/// inputs and attributes from c and runs the kernel on x, input 0 as stored.
template <class Op>
std::vector<tensor> run_data(const context& c) {
    return detail::single_output(detail::dispatch<Op::inputs[0].types>(c.input_dtype(0), Op::op_type, [&](auto t) {
        using T = typename decltype(t)::type;
        return tensor(Op::template run_typed<T>(c, c.input(0).as_array<T>()));
    }));
}

/// run_real() of the same ops: the same kernel on input 0 lifted to S. Data
/// movement copies scalars, so each output element carries the derivative of
/// the input element it came from. Integer and bool data make an integer /
/// bool output, which run_real leaves to run() (a placeholder).
template <class Op, class S>
std::vector<array<S>> run_real_data(const context& c, const std::vector<array<S>>& x) {
    if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
    return {Op::template run_typed<S>(c, x[0])};
}
}  // namespace shape_detail

// ---------------------------------------------------------------- Reshape

struct reshape_attr {
    std::int64_t allowzero = 0;
};

/// Reshape-14(data, shape): 0 copies the input dim at the same position
/// (unless allowzero != 0, where it is a literal 0), -1 (at most one) is
/// inferred from the element count.
struct reshape {
    static constexpr std::string_view op_type = "Reshape";
    static constexpr int opset = 14;
    using attributes = reshape_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all}, {"shape", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"reshaped", spec::types::all}}};

    /// What shape value i stands for, with -1 counted as 1.
    static spec::expr resolved(const spec::context& c, const std::vector<spec::expr>& v, std::size_t i) {
        const spec::expr copy = i < c.rank(0) ? c.dim(0, i) : spec::expr(0);
        return select(v[i] == -1, spec::expr(1), select(v[i] == 0 && c.attr("allowzero") == 0, copy, v[i]));
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto v = c.values(1);
        const auto az = c.attr("allowzero");
        std::vector<spec::constraint> out;
        std::vector<spec::expr> minus, zero, res;
        for (std::size_t i = 0; i < v.size(); ++i) {
            out.push_back({v[i] >= -1, "shape value " + std::to_string(i) + " is >= -1"});
            if (i >= c.rank(0)) {
                out.push_back({!(v[i] == 0 && az == 0), "shape value " + std::to_string(i) +
                                                            " = 0 copies input dim " + std::to_string(i) +
                                                            ", which does not exist (input rank " +
                                                            std::to_string(c.rank(0)) + ")"});
            }
            minus.push_back(shape_util::indicator(v[i] == -1));
            zero.push_back(v[i] == 0);
            res.push_back(resolved(c, v, i));
        }
        out.push_back({shape_util::sum(minus) <= 1, "at most one shape value is -1"});
        out.push_back({az == 0 || !(shape_util::any_of(zero) && shape_util::sum(minus) >= 1), "with allowzero, shape may not hold both 0 and -1"});
        const auto p = spec::product(res), total = spec::product(c.shape(0));
        out.push_back({select(shape_util::sum(minus) >= 1, p != 0 && total % shape_util::emax(p, spec::expr(1)) == 0, p == total),
                       "the new shape holds as many elements as the input (-1 divides exactly)"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto v = c.values(1);
        std::vector<spec::expr> res, out;
        for (std::size_t i = 0; i < v.size(); ++i) res.push_back(resolved(c, v, i));
        const auto p = spec::product(res), total = spec::product(c.shape(0));
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back(select(v[i] == -1, total / shape_util::emax(p, spec::expr(1)), res[i]));
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(0, shape_detail::max_rank)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// The output shape, checked concretely (same rules as the constraints).
    static shape_type target_shape(const shape_type& in, std::span<const std::int64_t> shape, bool allowzero) {
        shape_type out;
        std::optional<std::size_t> minus;
        bool has_zero = false;
        for (std::size_t i = 0; i < shape.size(); ++i) {
            const std::int64_t v = shape[i];
            if (v == -1) {
                if (minus) throw shape_error(op_type, "shape has more than one -1 (positions " + std::to_string(*minus) + " and " + std::to_string(i) + ")");
                minus = i;
                out.push_back(1);
            } else if (v < -1) {
                throw shape_error(op_type, "shape value " + std::to_string(i) + " is " + std::to_string(v) + " (must be >= -1)");
            } else if (v == 0 && !allowzero) {
                if (i >= in.size()) {
                    throw shape_error(op_type, "shape value " + std::to_string(i) + " = 0 copies an input dim, but the input has rank " + std::to_string(in.size()));
                }
                out.push_back(in[i]);
            } else {
                has_zero = has_zero || v == 0;
                out.push_back(static_cast<std::size_t>(v));
            }
        }
        if (allowzero && has_zero && minus) throw shape_error(op_type, "with allowzero=1 the shape may not hold both 0 and -1");
        const std::size_t p = element_count(out, op_type), total = element_count(in, op_type);
        if (minus) {
            if (p == 0 || total % p != 0) {
                throw shape_error(op_type, "cannot infer the -1 dim: " + std::to_string(total) + " elements into " + to_string(out));
            }
            out[*minus] = total / p;
        } else if (p != total) {
            throw shape_error(op_type, "shape " + to_string(out) + " holds " + std::to_string(p) + " elements, the input " + to_string(in) + " holds " + std::to_string(total));
        }
        return out;
    }
    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> shape, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<reshape, T>::value);
        const auto out_shape = target_shape(shape_util::shape_of(x), shape, a.allowzero != 0);
        auto y = array<T>::from_shape(out_shape);
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return compute<T>(x, shape_util::int_values(c.input(1), op_type), a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<reshape>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<reshape>(c, x);
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.flag("allowzero", 0.3).copies(0); }
};

// ---------------------------------------------------------------- Transpose

struct transpose_attr {
    std::optional<std::vector<std::int64_t>> perm;
};

/// Transpose-13(data): output axis i is input axis perm[i]; perm defaults to
/// the reversed axes. perm must be a permutation of [0, rank).
struct transpose {
    static constexpr std::string_view op_type = "Transpose";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = transpose_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"transposed", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto p = c.attr_ints("perm");
        const std::size_t r = c.rank(0);
        if (!c.has_attribute("perm")) return {};
        std::vector<spec::constraint> out{{spec::list_length(p) == spec::expr(r), "perm has one entry per input axis"}};
        if (p.size() != r) return out;
        for (std::size_t i = 0; i < p.size(); ++i) {
            out.push_back({p[i] >= 0 && p[i] < spec::expr(r), "perm[" + std::to_string(i) + "] is an axis in [0, rank)"});
        }
        auto d = shape_util::distinct_axes(p, "perm entries");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto dims = c.shape(0);
        std::vector<spec::expr> out;
        if (!c.has_attribute("perm")) {
            out.assign(dims.rbegin(), dims.rend());
        } else {
            for (const auto& p : c.attr_ints("perm")) out.push_back(shape_util::pick(dims, p));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<transpose, T>::value);
        const std::size_t r = x.dimension();
        std::vector<std::size_t> perm(r);
        if (a.perm) {
            if (a.perm->size() != r) {
                throw shape_error(op_type, "perm has " + std::to_string(a.perm->size()) + " entries; the input has rank " + std::to_string(r));
            }
            std::vector<bool> seen(r, false);
            for (std::size_t i = 0; i < r; ++i) {
                const std::int64_t p = (*a.perm)[i];
                if (p < 0 || p >= static_cast<std::int64_t>(r) || seen[static_cast<std::size_t>(p)]) {
                    throw shape_error(op_type, "perm is not a permutation of [0, " + std::to_string(r) + "): bad entry " + std::to_string(p));
                }
                seen[static_cast<std::size_t>(p)] = true;
                perm[i] = static_cast<std::size_t>(p);
            }
        } else {
            for (std::size_t i = 0; i < r; ++i) perm[i] = r - 1 - i;
        }
        const auto in = shape_util::shape_of(x);
        const auto st = detail::strides_of(in);
        shape_type out(r);
        for (std::size_t i = 0; i < r; ++i) out[i] = in[perm[i]];
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0;
            for (std::size_t i = 0; i < r; ++i) f += o[i] * st[perm[i]];
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<transpose>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<transpose>(c, x);
    }
};

// ---------------------------------------------------------------- Squeeze

/// Squeeze-13(data, axes?): removes the listed axes (each of size 1); without
/// axes, every dim of size 1. An empty axes input removes nothing (ONNX's numpy
/// reference and shape inference; onnxruntime removes every dim of 1): the
/// generator never draws one.
struct squeeze {
    static constexpr std::string_view op_type = "Squeeze";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0).nonempty_values(1); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all}, {"axes", spec::types::int64, {1, 1}, "T1", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"squeezed", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (!c.has_input(1)) return {};
        const std::size_t r = c.rank(0);
        const auto axes = c.values(1);
        std::vector<spec::constraint> out;
        std::vector<spec::expr> norm;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            out.push_back({shape_util::axis_in_range(axes[i], r), "axes[" + std::to_string(i) + "] is in [-rank, rank)"});
            norm.push_back(shape_util::normalized_axis(axes[i], r));
            out.push_back({shape_util::pick(c.shape(0), norm.back(), spec::expr(1)) == 1,
                           "the dim at axes[" + std::to_string(i) + "] is 1"});
        }
        auto d = shape_util::distinct_axes(norm, "axes");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto dims = c.shape(0);
        std::vector<spec::expr> out;
        if (!c.has_input(1)) {  // depends on dim values: concrete
            for (const auto& d : dims) {
                const auto v = c.eval(d);
                if (v != 1) out.emplace_back(v);
            }
            return {out};
        }
        const auto axes = c.values(1);
        // removed[j]: some axis names j; output dim m is the m-th kept input dim.
        std::vector<spec::expr> removed(r, spec::expr(0));
        for (std::size_t j = 0; j < r; ++j) {
            std::vector<spec::expr> hits;
            for (const auto& a : axes) hits.push_back(shape_util::normalized_axis(a, r) == spec::expr(j));
            removed[j] = shape_util::any_of(hits);
        }
        const std::size_t out_rank = axes.size() <= r ? r - axes.size() : 0;
        for (std::size_t m = 0; m < out_rank; ++m) {
            spec::expr e(0), kept_before(0);
            std::vector<std::pair<spec::expr, spec::expr>> cases;
            for (std::size_t j = 0; j < r; ++j) {
                cases.emplace_back(!removed[j] && kept_before == spec::expr(m), dims[j]);
                kept_before = kept_before + shape_util::indicator(!removed[j]);
            }
            for (std::size_t j = cases.size(); j-- > 0;) e = select(cases[j].first, cases[j].second, e);
            out.push_back(e);
        }
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(rank, shape_detail::max_rank)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const std::optional<std::vector<std::int64_t>>& axes) {
        static_assert(spec::dtype_accepted<squeeze, T>::value);
        const auto in = shape_util::shape_of(x);
        std::vector<bool> remove(in.size(), false);
        if (axes) {
            for (const auto a : *axes) {
                const auto k = shape_util::checked_axis(a, in.size(), op_type);
                if (remove[k]) throw shape_error(op_type, "axis " + std::to_string(a) + " is listed twice");
                if (in[k] != 1) throw shape_error(op_type, "cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[k]));
                remove[k] = true;
            }
        } else {
            for (std::size_t k = 0; k < in.size(); ++k) remove[k] = in[k] == 1;
        }
        shape_type out;
        for (std::size_t k = 0; k < in.size(); ++k) {
            if (!remove[k]) out.push_back(in[k]);
        }
        auto y = array<T>::from_shape(out);
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        std::optional<std::vector<std::int64_t>> axes;
        if (c.has_input(1)) axes = shape_util::int_values(c.input(1), op_type);
        return compute<T>(x, axes);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<squeeze>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<squeeze>(c, x);
    }
};

// ---------------------------------------------------------------- Unsqueeze

/// Unsqueeze-13(data, axes): inserts dims of 1 at the listed axes of the
/// output (axes normalized against the output rank, any order, no repeats).
struct unsqueeze {
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
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, shape_util::ranks_between(0, rank - 1)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> axes) {
        static_assert(spec::dtype_accepted<unsqueeze, T>::value);
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
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<unsqueeze>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<unsqueeze>(c, x);
    }
};

// ---------------------------------------------------------------- Flatten

struct flatten_attr {
    std::int64_t axis = 1;
};

/// Flatten-13(input): [prod(dims[:axis]), prod(dims[axis:])], axis in [-r, r].
struct flatten {
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
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank != 2) return {};
        return {{{out}, shape_util::ranks_between(0, shape_detail::max_rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<flatten, T>::value);
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
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<flatten>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<flatten>(c, x);
    }
};

// ---------------------------------------------------------------- Slice

/// Slice-13(data, starts, ends, axes?, steps?): for each listed axis, the
/// elements start, start + step, ... before end. Negative starts/ends count
/// from the end (+ dim); then starts are clamped to [0, dim] (step > 0) or
/// [0, dim - 1] (step < 0), ends to [0, dim] or [-1, dim - 1]. Axes default
/// to [0, len(starts)), steps to 1; steps must be non-zero.
struct slice {
    static constexpr std::string_view op_type = "Slice";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.nan_faithful().facts(spec::facts::selection_of(0)); }  // a subset of the elements
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 5> inputs{{{"data", spec::types::all},
                                                             {"starts", spec::types::indices, {1, 1}, "Tind"},
                                                             {"ends", spec::types::indices, {1, 1}, "Tind"},
                                                             {"axes", spec::types::indices, {1, 1}, "Tind", true},
                                                             {"steps", spec::types::indices, {1, 1}, "Tind", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    struct plan {
        std::vector<spec::expr> starts, ends, axes, steps;  // axes normalized
    };
    static plan symbols(const spec::context& c) {
        plan p;
        p.starts = c.values(1);
        p.ends = c.values(2);
        const std::size_t n = std::min(p.starts.size(), p.ends.size()), r = c.rank(0);
        p.starts.resize(n, spec::expr(0));
        p.ends.resize(n, spec::expr(0));
        if (c.has_input(3)) {
            for (const auto& a : c.values(3)) p.axes.push_back(shape_util::normalized_axis(a, r));
        } else {
            for (std::size_t i = 0; i < n; ++i) p.axes.emplace_back(i);
        }
        p.axes.resize(n, spec::expr(0));
        if (c.has_input(4)) p.steps = c.values(4);
        p.steps.resize(n, spec::expr(1));
        return p;
    }
    /// The output length of one sliced axis of size dim (ONNX's clamping).
    static spec::expr length(const spec::expr& dim, const spec::expr& start, const spec::expr& end, const spec::expr& step) {
        const auto s0 = select(start < 0, start + dim, start);
        const auto e0 = select(end < 0, end + dim, end);
        const auto pos = step > 0;
        const auto s = select(pos, shape_util::emin(shape_util::emax(s0, spec::expr(0)), dim), shape_util::emin(shape_util::emax(s0, spec::expr(0)), dim - 1));
        const auto e = select(pos, shape_util::emin(shape_util::emax(e0, spec::expr(0)), dim), shape_util::emin(shape_util::emax(e0, spec::expr(-1)), dim - 1));
        // ceil((e - s) / step) clamped at 0, written so nothing overflows.
        return select(pos, select(e - s <= 0, spec::expr(0), (e - s - 1) / step + 1),
                      select(s - e <= 0, spec::expr(0), spec::expr(1) - (s - e - 1) / step));
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        std::vector<spec::constraint> out{{c.dim(1, 0) == c.dim(2, 0), "starts and ends have the same length"}};
        if (c.has_input(3)) {
            out.push_back({c.dim(3, 0) == c.dim(1, 0), "axes has the length of starts"});
            const auto axes = c.values(3);
            for (std::size_t i = 0; i < axes.size(); ++i) {
                out.push_back({shape_util::axis_in_range(axes[i], r), "axes[" + std::to_string(i) + "] is in [-rank, rank)"});
            }
        } else {
            out.push_back({c.dim(1, 0) <= spec::expr(r), "without axes, starts has at most rank entries"});
        }
        if (c.has_input(4)) {
            out.push_back({c.dim(4, 0) == c.dim(1, 0), "steps has the length of starts"});
            const auto steps = c.values(4);
            for (std::size_t i = 0; i < steps.size(); ++i) {
                out.push_back({steps[i] != 0, "steps[" + std::to_string(i) + "] is not 0"});
            }
        }
        auto d = shape_util::distinct_axes(symbols(c).axes, "axes");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto p = symbols(c);
        const auto dims = c.shape(0);
        std::vector<spec::expr> out;
        for (std::size_t j = 0; j < dims.size(); ++j) {
            spec::expr e = dims[j];
            for (std::size_t i = p.axes.size(); i-- > 0;) {
                e = select(p.axes[i] == spec::expr(j), length(dims[j], p.starts[i], p.ends[i], p.steps[i]), e);
            }
            out.push_back(e);
        }
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        const auto ind = spec::types::indices.members();
        return {{{out}, {rank}}, {ind, {1}}, {ind, {1}}, {ind, {1}}, {ind, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// Concrete start and count of one axis (the same formula as `length`).
    static std::pair<std::int64_t, std::int64_t> resolve(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
        if (step == 0) throw shape_error(op_type, "step is 0");
        if (start < 0) start += dim;
        if (end < 0) end += dim;
        std::int64_t count = 0;
        if (step > 0) {
            start = std::clamp<std::int64_t>(start, 0, dim);
            end = std::clamp<std::int64_t>(end, 0, dim);
            count = end - start <= 0 ? 0 : (end - start - 1) / step + 1;
        } else {
            start = std::clamp<std::int64_t>(start, 0, dim - 1);
            end = std::clamp<std::int64_t>(end, -1, dim - 1);
            // floor((start - end - 1) / |step|) + 1; |step| as unsigned, so INT64_MIN does not overflow.
            count = start - end <= 0 ? 0
                                     : static_cast<std::int64_t>(static_cast<std::uint64_t>(start - end - 1) /
                                                                 (0 - static_cast<std::uint64_t>(step))) + 1;
        }
        return {start, count};
    }
    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> starts, std::span<const std::int64_t> ends,
                            std::optional<std::vector<std::int64_t>> axes = std::nullopt,
                            std::optional<std::vector<std::int64_t>> steps = std::nullopt) {
        static_assert(spec::dtype_accepted<slice, T>::value);
        const auto in = shape_util::shape_of(x);
        const std::size_t r = in.size(), n = starts.size();
        if (ends.size() != n || (axes && axes->size() != n) || (steps && steps->size() != n)) {
            throw shape_error(op_type, "starts, ends, axes and steps must have the same length");
        }
        if (!axes && n > r) throw shape_error(op_type, "without axes, starts may have at most rank entries");
        std::vector<std::int64_t> first(r, 0), step(r, 1);
        shape_type out = in;
        std::vector<bool> seen(r, false);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = axes ? shape_util::checked_axis((*axes)[i], r, op_type) : i;
            if (seen[k]) throw shape_error(op_type, "axis " + std::to_string(k) + " is sliced twice");
            seen[k] = true;
            step[k] = steps ? (*steps)[i] : 1;
            const auto [s, count] = resolve(static_cast<std::int64_t>(in[k]), starts[i], ends[i], step[k]);
            first[k] = s;
            out[k] = static_cast<std::size_t>(count);
        }
        const auto st = detail::strides_of(in);
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0;  // first + o * step stays in [0, dim) when the count is positive
            for (std::size_t k = 0; k < r; ++k) {
                f += static_cast<std::size_t>(first[k] + static_cast<std::int64_t>(o[k]) * step[k]) * st[k];
            }
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto starts = shape_util::int_values(c.input(1), op_type), ends = shape_util::int_values(c.input(2), op_type);
        std::optional<std::vector<std::int64_t>> axes, steps;
        if (c.has_input(3)) axes = shape_util::int_values(c.input(3), op_type);
        if (c.has_input(4)) steps = shape_util::int_values(c.input(4), op_type);
        return compute<T>(x, starts, ends, axes, steps);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<slice>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<slice>(c, x);
    }
};

// ---------------------------------------------------------------- Concat

struct concat_attr {
    std::int64_t axis = 0;
    static constexpr std::array<std::string_view, 1> required{"axis"};
};

/// Concat-13(inputs...): joined along axis; every other dim must match.
struct concat {
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
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const std::vector<const array<T>*>& xs, const attributes& a) {
        static_assert(spec::dtype_accepted<concat, T>::value);
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

// ---------------------------------------------------------------- Split

struct split_attr {
    std::int64_t axis = 0;
    /// Reserved: the number of outputs of the ONNX node (Split-13 has no
    /// attribute for it; the interpreter sets it from the node's output
    /// count). 0 = not called from a node: then `split` must be given.
    std::int64_t num_outputs = 0;
};

/// Split-13(input, split?): parts of the lengths in `split` along axis, or
/// `__num_outputs` equal parts (the axis length must divide evenly). A node
/// with `split` names one output per length, as ONNX's inference demands.
struct split {
    static constexpr std::string_view op_type = "Split";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.nan_faithful().facts(spec::facts::selection_of(0)); }  // each part: some elements
    static constexpr int opset = 13;
    using attributes = split_attr;
    static constexpr std::string_view num_outputs_attribute = "__num_outputs";
    static constexpr std::int64_t max_outputs = 4096;  // implementation limit
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all, {1, 8}}, {"split", spec::types::int64, {1, 1}, "T1", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"outputs", spec::types::all, {1, 8}, "T", false, true}}};

    static std::size_t output_count(const spec::context& c) {
        if (c.has_input(1)) return c.element_count(1);
        const auto n = spec::parse_attributes<attributes>(c.attributes(), op_type).num_outputs;
        return n < 1 || n > max_outputs ? 0 : static_cast<std::size_t>(n);
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto a = c.attr("axis");
        std::vector<spec::constraint> out{{shape_util::axis_in_range(a, r), "axis is in [-rank, rank)"}};
        const auto dim = shape_util::pick(c.shape(0), shape_util::normalized_axis(a, r));
        if (c.has_input(1)) {
            const auto v = c.values(1);
            for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "split[" + std::to_string(i) + "] >= 0"});
            out.push_back({shape_util::sum(v) == dim, "the split lengths add up to the axis dim"});
            const auto n = c.attr(num_outputs_attribute);
            out.push_back({n == spec::expr(0) || n == c.dim(1, 0), "the node names one output per split length (len(split))"});
        } else {
            const auto n = c.attr(num_outputs_attribute);
            out.push_back({n >= 1 && n <= spec::expr(max_outputs), "__num_outputs (the node's output count; needed without `split`) is in [1, 4096]"});
            out.push_back({dim % shape_util::emax(n, spec::expr(1)) == 0, "the axis dim divides into __num_outputs equal parts"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto an = shape_util::normalized_axis(c.attr("axis"), r);
        const auto dims = c.shape(0);
        const auto dim = shape_util::pick(dims, an);
        std::vector<spec::expr> parts;
        if (c.has_input(1)) {
            parts = c.values(1);
        } else {
            parts.assign(output_count(c), dim / shape_util::emax(c.attr(num_outputs_attribute), spec::expr(1)));
        }
        spec::shape_exprs out;
        for (const auto& p : parts) {
            std::vector<spec::expr> s;
            for (std::size_t j = 0; j < r; ++j) s.push_back(select(an == spec::expr(j), p, dims[j]));
            out.push_back(s);
        }
        return out;
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return std::vector<dtype>(output_count(c), c.input_dtype(0)); }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static std::vector<array<T>> compute(const array<T>& x, const std::optional<std::vector<std::int64_t>>& split_lengths,
                                         const attributes& a = {}) {
        static_assert(spec::dtype_accepted<split, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.empty()) throw shape_error(op_type, "cannot split a scalar (rank 0)");
        const std::size_t k = shape_util::checked_axis(a.axis, in.size(), op_type);
        std::vector<std::size_t> lengths;
        if (split_lengths) {
            if (split_lengths->empty()) throw shape_error(op_type, "split is empty");
            std::size_t total = 0;
            for (const auto v : *split_lengths) {
                lengths.push_back(shape_util::to_dim(v, op_type, "a split length"));
                if (lengths.back() > in[k] - std::min(total, in[k])) {
                    throw shape_error(op_type, "split lengths exceed the axis dim " + std::to_string(in[k]));
                }
                total += lengths.back();
            }
            if (total != in[k]) {
                throw shape_error(op_type, "split lengths add up to " + std::to_string(total) + ", the axis dim is " + std::to_string(in[k]));
            }
        } else {
            if (a.num_outputs < 1 || a.num_outputs > max_outputs) {
                throw error(op_type, "__num_outputs must be in [1, 4096], got " + std::to_string(a.num_outputs));
            }
            const auto n = static_cast<std::size_t>(a.num_outputs);
            if (in[k] % n != 0) {
                throw shape_error(op_type, "axis dim " + std::to_string(in[k]) + " does not split into " + std::to_string(n) + " equal parts");
            }
            lengths.assign(n, in[k] / n);
        }
        const auto st = detail::strides_of(in);
        std::vector<array<T>> out;
        std::size_t offset = 0;
        for (const auto len : lengths) {
            shape_type s = in;
            s[k] = len;
            out.push_back(shape_util::gather_elements_by(x, s, op_type, [&](const shape_type& o) {
                return shape_util::ravel(o, st) + offset * st[k];  // o moved by offset along axis k
            }));
            offset += len;
        }
        return out;
    }
    template <class T>
    static std::vector<array<T>> run_typed(const spec::context& c, const array<T>& x) {
        std::optional<std::vector<std::int64_t>> lengths;
        if (c.has_input(1)) lengths = shape_util::int_values(c.input(1), op_type);
        return compute<T>(x, lengths, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::dispatch<spec::types::all, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::vector<tensor> out;
            for (const auto& y : run_typed<T>(c, c.input(0).as_array<T>())) out.emplace_back(y);
            return out;
        });
    }
    /// Every output copies part of the input (integer / bool data: one placeholder per output).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return std::vector<array<S>>(output_count(c));
        return run_typed<S>(c, x[0]);
    }
};

// ---------------------------------------------------------------- Expand

/// Expand-13(input, shape): input broadcast with `shape` (bidirectionally:
/// a 1 in shape keeps the input's dim).
struct expand {
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
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(0, rank)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> shape) {
        static_assert(spec::dtype_accepted<expand, T>::value);
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
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<expand>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<expand>(c, x);
    }
};

// ---------------------------------------------------------------- Tile

/// Tile-13(input, repeats): output dim i is dim i * repeats[i].
struct tile {
    static constexpr std::string_view op_type = "Tile";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all}, {"repeats", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out{{c.dim(1, 0) == spec::expr(c.rank(0)), "repeats has one entry per input axis"}};
        const auto v = c.values(1);
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "repeats[" + std::to_string(i) + "] >= 0"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto v = c.values(1);
        std::vector<spec::expr> out;
        for (std::size_t i = 0; i < c.rank(0); ++i) out.push_back(c.dim(0, i) * (i < v.size() ? v[i] : spec::expr(1)));
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> repeats) {
        static_assert(spec::dtype_accepted<tile, T>::value);
        const auto in = shape_util::shape_of(x);
        if (repeats.size() != in.size()) {
            throw shape_error(op_type, "repeats has " + std::to_string(repeats.size()) + " entries; the input has rank " + std::to_string(in.size()));
        }
        shape_type out(in.size());
        for (std::size_t i = 0; i < in.size(); ++i) {
            const auto rep = shape_util::to_dim(repeats[i], op_type, "repeats[" + std::to_string(i) + "]");
            if (in[i] != 0 && rep > std::numeric_limits<std::size_t>::max() / in[i]) throw shape_error(op_type, "output dim overflows");
            out[i] = in[i] * rep;
        }
        const auto st = detail::strides_of(in);
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0;
            for (std::size_t i = 0; i < o.size(); ++i) f += (o[i] % in[i]) * st[i];
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, shape_util::int_values(c.input(1), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<tile>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<tile>(c, x);
    }
};

// ---------------------------------------------------------------- Pad

struct pad_attr {
    std::string mode = "constant";
};

/// Pad-13(data, pads, constant_value?): pads = [x1_begin, ..., xn_begin,
/// x1_end, ..., xn_end]; negative pads crop. Output index o reads input
/// index i = o - begin: constant fills outside [0, dim); edge clamps to the
/// border; reflect mirrors without repeating the border (needs every pad <=
/// dim - 1, as onnxruntime). constant_value (a scalar, default 0) is used only
/// in constant mode.
struct pad {
    static constexpr std::string_view op_type = "Pad";
    static constexpr int opset = 13;
    using attributes = pad_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"data", spec::types::all},
                                                             {"pads", spec::types::int64, {1, 1}, "T1"},
                                                             {"constant_value", spec::types::all, {0, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::string mode = spec::parse_attributes<attributes>(c.attributes(), op_type).mode;
        const std::size_t r = c.rank(0);
        std::vector<spec::constraint> out{
            shape_util::concrete_fact(mode == "constant" || mode == "reflect" || mode == "edge",
                                  "mode is constant, reflect or edge (got '" + mode + "')"),
            {c.dim(1, 0) == spec::expr(2 * r), "pads has 2 * rank entries"}};
        if (c.has_input(2) && c.rank(2) == 1) out.push_back({c.dim(2, 0) == 1, "constant_value is a single value"});
        const auto p = c.values(1);
        if (p.size() != 2 * r) return out;
        for (std::size_t j = 0; j < r; ++j) {
            const auto d = c.dim(0, j), b = p[j], e = p[j + r];
            out.push_back({d + b + e >= 0, "axis " + std::to_string(j) + " keeps a non-negative size after cropping"});
            if (mode == "reflect") {
                out.push_back({b <= d - 1 && e <= d - 1, "reflect pads of axis " + std::to_string(j) + " are at most dim - 1"});
            } else if (mode == "edge") {
                out.push_back({(b <= 0 && e <= 0) || d >= 1, "edge padding of axis " + std::to_string(j) + " needs a non-empty axis"});
            }
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto p = c.values(1);
        const std::size_t r = c.rank(0);
        std::vector<spec::expr> out;
        for (std::size_t j = 0; j < r; ++j) out.push_back(c.dim(0, j) + p[j] + p[j + r]);
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}, {{out}, {0, 1}}};  // constant_value: a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> pads, T value, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<pad, T>::value);
        const auto in = shape_util::shape_of(x);
        const std::size_t r = in.size();
        const std::string& mode = a.mode;
        if (mode != "constant" && mode != "reflect" && mode != "edge") {
            throw error(op_type, "mode must be constant, reflect or edge, got '" + mode + "'");
        }
        if (pads.size() != 2 * r) {
            throw shape_error(op_type, "pads has " + std::to_string(pads.size()) + " entries; needs 2 * rank = " + std::to_string(2 * r));
        }
        shape_type out(r);
        constexpr std::int64_t limit = std::int64_t{1} << 40;  // keeps the index arithmetic far from overflow
        for (std::size_t j = 0; j < r; ++j) {
            const auto d = static_cast<std::int64_t>(in[j]);
            const std::int64_t b = pads[j], e = pads[j + r];
            if (b > limit || e > limit || b < -limit || e < -limit) throw shape_error(op_type, "pads are too large");
            if (d + b + e < 0) throw shape_error(op_type, "pads crop axis " + std::to_string(j) + " below size 0");
            if (mode == "reflect" && (b > d - 1 || e > d - 1)) {
                throw shape_error(op_type, "reflect pads of axis " + std::to_string(j) + " must be at most dim - 1 = " + std::to_string(d - 1));
            }
            if (mode == "edge" && d == 0 && (b > 0 || e > 0)) {
                throw shape_error(op_type, "edge padding of axis " + std::to_string(j) + " needs a non-empty axis");
            }
            out[j] = static_cast<std::size_t>(d + b + e);
        }
        const auto st = detail::strides_of(in);
        auto y = array<T>::from_shape(out);
        // The mode once (checked above), not a string compare per element.
        enum class fill { constant, edge, reflect };
        const fill how = mode == "constant" ? fill::constant : mode == "edge" ? fill::edge : fill::reflect;
        shape_type o(r, 0);  // the output multi-index of offset f
        for (std::size_t f = 0; f < y.size(); ++f, shape_util::next_index(o, out)) {
            std::size_t src = 0;
            bool inside = true;
            for (std::size_t j = 0; j < r && inside; ++j) {
                const auto d = static_cast<std::int64_t>(in[j]);
                std::int64_t i = static_cast<std::int64_t>(o[j]) - pads[j];
                if (i < 0 || i >= d) {
                    if (how == fill::constant) {
                        inside = false;
                        break;
                    }
                    if (how == fill::edge) i = std::clamp<std::int64_t>(i, 0, d - 1);
                    if (how == fill::reflect) i = i < 0 ? -i : 2 * (d - 1) - i;
                }
                if (i < 0 || i >= d) throw error(op_type, "internal: padded index out of range");
                src += static_cast<std::size_t>(i) * st[j];
            }
            y.data()[f] = inside ? x.data()[src] : value;
        }
        return y;
    }
    /// constant_value is nullptr when absent.
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x, const array<T>* constant_value) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto pads = shape_util::int_values(c.input(1), op_type);
        T value{};
        if (constant_value) {
            const std::size_t n = constant_value->size();
            if (n != 1) throw shape_error(op_type, "constant_value must hold one value, got " + std::to_string(n));
            value = constant_value->data()[0];
        }
        return compute<T>(x, pads, value, a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::optional<array<T>> value;
            if (c.has_input(2)) value = c.input(2).as_array<T>();
            return tensor(run_typed<T>(c, c.input(0).as_array<T>(), value ? &*value : nullptr));
        }));
    }
    /// Differentiable in data and, when present, constant_value (its tangent
    /// reaches the constant-mode padding; reflect / edge only copy data).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {run_typed<S>(c, x[0], c.has_input(2) ? &x[2] : nullptr)};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().weights({2})
            .choice("mode", {std::string("constant"), std::string("reflect"), std::string("edge")}, 0.8)
            .facts_with_output_shapes(padded_facts);
    }
    /// Negative pads crop, so of the input's elements only a subset is sure to
    /// stay. Constant mode adds elements equal to constant_value (0 when absent;
    /// a graph's constant_value input is whatever the search makes it), and
    /// adds some wherever an output dim is longer than the input's, or where a
    /// pad is positive: its first or last positions along that axis are
    /// padding even when a negative pad crops the axis back to its length
    /// (pads [1, -1] shift the data out of a one-element axis).
    static std::vector<spec::value_facts> padded_facts(std::span<const spec::value_facts> in,
                                                       const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
        spec::value_facts out = in.empty() ? spec::value_facts{} : in[0].selection();
        if (spec::parse_attributes<attributes>(attrs, op_type).mode != "constant") return {out};
        if (in.size() > 2 && in[2].is_unknown()) return {spec::value_facts{}};
        bool grows = false;
        if (!in.empty() && shapes.size() > in.size() && shapes[0].size() == shapes[in.size()].size()) {
            for (std::size_t d = 0; d < shapes[0].size(); ++d) grows = grows || shapes[in.size()][d] > shapes[0][d];
            const bool empty = element_count(shapes[in.size()]) == 0;
            if (in.size() > 1 && !empty) {
                for (const double p : in[1].forced) grows = grows || p > 0.0;
            }
        }
        const spec::value_facts fill = in.size() > 2 ? in[2] : spec::value_facts::constant(0.0);
        if (!grows) return {out.join(fill.selection())};  // maybe some padding, maybe none
        return {out.join(fill)};
    }
};

// ---------------------------------------------------------------- Gather

struct gather_attr {
    std::int64_t axis = 0;
};

/// Gather-13(data, indices): out[i_0..i_{a-1}, j.., i_{a+1}..] =
/// data[i_0..i_{a-1}, indices[j..], i_{a+1}..]; indices in [-dim, dim),
/// negative ones count from the end; out-of-range indices throw.
struct gather {
    static constexpr std::string_view op_type = "Gather";
    static constexpr int opset = 13;
    using attributes = gather_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all, {1, 8}}, {"indices", spec::types::indices, {}, "Tind"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0), q = c.rank(1);
        return {{shape_util::axis_in_range(c.attr("axis"), r), "axis is in [-rank, rank)"},
                shape_util::concrete_fact(r + q - 1 <= shape_detail::max_rank, "the output rank is at most 8")};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0), q = c.rank(1);
        const auto an = shape_util::normalized_axis(c.attr("axis"), r);
        const auto d = c.shape(0), id = c.shape(1);
        std::vector<spec::expr> out;
        for (std::size_t k = 0; k + 1 < r + q; ++k) {
            const spec::expr kk(k);
            out.push_back(select(kk < an, shape_util::pick(d, kk),
                                 select(kk < an + spec::expr(q), shape_util::pick(id, kk - an), shape_util::pick(d, kk - spec::expr(q) + 1))));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(1, std::min(rank + 1, shape_detail::max_rank))},
                {spec::types::indices.members(), shape_util::ranks_between(0, rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const array<std::int64_t>& indices, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<gather, T>::value);
        const auto in = shape_util::shape_of(x), is = shape_util::shape_of(indices);
        if (in.empty()) throw shape_error(op_type, "data must have rank >= 1");
        const std::size_t k = shape_util::checked_axis(a.axis, in.size(), op_type);
        const auto dim = static_cast<std::int64_t>(in[k]);
        std::vector<std::size_t> idx(indices.size());
        for (std::size_t f = 0; f < indices.size(); ++f) {
            const std::int64_t v = indices.data()[f];
            if (v < -dim || v >= dim) {
                throw error(op_type, "index " + std::to_string(v) + " is out of range for axis " + std::to_string(k) +
                                         " of size " + std::to_string(dim) + " (allowed: [" + std::to_string(-dim) + ", " +
                                         std::to_string(dim - 1) + "])");
            }
            idx[f] = static_cast<std::size_t>(v < 0 ? v + dim : v);
        }
        shape_type out(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(k));
        out.insert(out.end(), is.begin(), is.end());
        out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(k) + 1, in.end());
        const auto st = detail::strides_of(in), ist = detail::strides_of(is);
        const std::size_t q = is.size();
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0, fi = 0;
            for (std::size_t j = 0; j < k; ++j) f += o[j] * st[j];
            for (std::size_t j = 0; j < q; ++j) fi += o[k + j] * ist[j];
            f += idx[fi] * st[k];
            for (std::size_t j = k + 1; j < in.size(); ++j) f += o[j + q - 1] * st[j];
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return compute<T>(x, c.input(1).to<std::int64_t>(), a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<gather>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<gather>(c, x);
    }
    template <int = 0>
    static spec::hints hints() {
        // Indices into the (solved) axis dim, negative ones included.
        return spec::hints{}.nan_faithful().facts(spec::facts::selection_of(0)).after_solving(1, [](rng& g, const spec::context& c, dtype d, const shape_type& s) {
            return shape_detail::random_indices(g, c, d, s);
        });
    }
};

// ---------------------------------------------------------------- GatherElements

struct gather_elements_attr {
    std::int64_t axis = 0;
};

/// GatherElements-13(data, indices): out[i] = data[i with i[axis] replaced by
/// indices[i]]; same ranks, indices dims <= data dims off the axis (as
/// onnxruntime); indices in [-dim, dim), out-of-range ones throw.
struct gather_elements {
    static constexpr std::string_view op_type = "GatherElements";
    static constexpr int opset = 13;
    using attributes = gather_elements_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all, {1, 8}}, {"indices", spec::types::indices, {1, 8}, "Tind"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {1, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto a = c.attr("axis");
        std::vector<spec::constraint> out{{shape_util::axis_in_range(a, r), "axis is in [-rank, rank)"},
                                          shape_util::concrete_fact(c.rank(1) == r, "indices has the rank of data")};
        if (c.rank(1) != r) return out;
        const auto an = shape_util::normalized_axis(a, r);
        for (std::size_t j = 0; j < r; ++j) {
            out.push_back({an == spec::expr(j) || c.dim(1, j) <= c.dim(0, j),
                           "indices dim " + std::to_string(j) + " <= data dim (off the axis)"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(1)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {spec::types::indices.members(), {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const array<std::int64_t>& indices, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<gather_elements, T>::value);
        const auto in = shape_util::shape_of(x), is = shape_util::shape_of(indices);
        if (in.empty()) throw shape_error(op_type, "data must have rank >= 1");
        const std::size_t k = shape_util::checked_axis(a.axis, in.size(), op_type);
        if (is.size() != in.size()) throw shape_error(op_type, "indices rank " + std::to_string(is.size()) + " differs from data rank " + std::to_string(in.size()));
        for (std::size_t j = 0; j < in.size(); ++j) {
            if (j != k && is[j] > in[j]) throw shape_error(op_type, "indices " + to_string(is) + " exceeds data " + to_string(in) + " at axis " + std::to_string(j));
        }
        const auto dim = static_cast<std::int64_t>(in[k]);
        const auto st = detail::strides_of(in);
        const auto ist = detail::strides_of(is);
        return shape_util::gather_elements_by(x, is, op_type, [&](const shape_type& o) {
            const std::int64_t v = indices.data()[shape_util::ravel(o, ist)];
            if (v < -dim || v >= dim) {
                throw error(op_type, "index " + std::to_string(v) + " is out of range for axis " + std::to_string(k) +
                                         " of size " + std::to_string(dim));
            }
            // o with its axis-k coordinate replaced by the index read
            return shape_util::ravel(o, st) - o[k] * st[k] + static_cast<std::size_t>(v < 0 ? v + dim : v) * st[k];
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return compute<T>(x, c.input(1).to<std::int64_t>(), a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<gather_elements>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<gather_elements>(c, x);
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.nan_faithful().facts(spec::facts::selection_of(0)).after_solving(1, [](rng& g, const spec::context& c, dtype d, const shape_type& s) {
            return shape_detail::random_indices(g, c, d, s);
        });
    }
};

// ---------------------------------------------------------------- Trilu

struct trilu_attr {
    std::int64_t upper = 1;
};

/// Trilu-14(input, k?): keeps, in each of the last two dims' matrices, the
/// elements with j - i >= k (upper != 0) or j - i <= k (upper == 0); zeroes
/// the rest. k is a scalar (rank 0, or one value), default 0.
struct trilu {
    static constexpr std::string_view op_type = "Trilu";
    static constexpr int opset = 14;
    using attributes = trilu_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all, {2, 8}}, {"k", spec::types::int64, {0, 1}, "T1", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {2, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (c.has_input(1) && c.rank(1) == 1) return {{c.dim(1, 0) == 1, "k is a single value"}};
        return {};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank < 2) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {0, 1}}};  // k: a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::int64_t k = 0, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<trilu, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.size() < 2) throw shape_error(op_type, "input must have rank >= 2, got " + std::to_string(in.size()));
        const std::size_t rows = in[in.size() - 2], cols = in[in.size() - 1];
        auto y = array<T>::from_shape(in);
        for (std::size_t f = 0; f < x.size(); ++f) {
            const auto i = static_cast<std::int64_t>(f / cols % rows), j = static_cast<std::int64_t>(f % cols);
            const bool keep = a.upper != 0 ? j - i >= k : j - i <= k;
            y.data()[f] = keep ? x.data()[f] : T{};
        }
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        std::int64_t k = 0;
        if (c.has_input(1)) {
            const auto v = shape_util::int_values(c.input(1), op_type);
            if (v.size() != 1) throw shape_error(op_type, "k must hold one value, got " + std::to_string(v.size()));
            k = v[0];
        }
        return compute<T>(x, k, a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<trilu>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<trilu>(c, x);
    }
    template <int = 0>
    static spec::hints hints() {
        // Zeros where the triangle leaves elements out (every matrix but 1 x 1 and the widest k).
        return spec::hints{}.nan_faithful().flag("upper").facts([](std::span<const spec::value_facts> in, const spec::attribute_map&,
                                                    std::span<const shape_type> shapes) {
            spec::value_facts out = in.empty() ? spec::value_facts{} : in[0];
            const bool single = !shapes.empty() && shapes[0].size() >= 2 && shapes[0][shapes[0].size() - 1] == 1 &&
                                shapes[0][shapes[0].size() - 2] == 1;
            if (!single) out.force(0.0);
            return std::vector<spec::value_facts>{out};
        });
    }
};

// ---------------------------------------------------------------- Shape

struct shape_attr {
    std::int64_t start = 0;
    std::optional<std::int64_t> end;
};

/// Shape-15(data): dims[start:end] as int64; negative start/end count from
/// the end (+ rank), then both are clamped to [0, rank]; empty if end <= start.
struct shape {
    static constexpr std::string_view op_type = "Shape";
    static constexpr int opset = 15;
    using attributes = shape_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"shape", spec::types::int64, {1, 1}, "T1"}}};

    static spec::expr clamped(const spec::expr& v, std::size_t r) {
        return shape_util::emin(shape_util::emax(select(v < 0, v + spec::expr(r), v), spec::expr(0)), spec::expr(r));
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto s = clamped(c.attr("start"), r);
        const auto e = c.has_attribute("end") ? clamped(c.attr("end"), r) : spec::expr(r);
        return {{shape_util::emax(e - s, spec::expr(0))}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context&) { return {dtype::i64}; }
    // Facts: the dims it returns, known once shapes are solved (Sinh of a Shape in float16 may overflow).
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                spec::value_facts f;
                if (shapes.empty()) return std::vector<spec::value_facts>{f};
                const auto a = spec::parse_attributes<attributes>(attrs, op_type);
                const auto r = static_cast<std::int64_t>(shapes[0].size());
                auto clamp = [r](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + r : v, 0, r); };
                const std::int64_t s = clamp(a.start), e = a.end ? clamp(*a.end) : r;
                for (std::int64_t i = s; i < e; ++i) {
                    const auto d = static_cast<double>(shapes[0][static_cast<std::size_t>(i)]);
                    if (i == s) f = spec::value_facts::constant(d);
                    f.force(d);
                }
                return std::vector<spec::value_facts>{f};
            });
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (out != dtype::i64 || rank != 1) return {};
        return {{spec::types::all.members(), shape_util::ranks_between(0, shape_detail::max_rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<std::int64_t> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<shape, T>::value);
        const auto r = static_cast<std::int64_t>(x.dimension());
        auto clamp = [r](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + r : v, 0, r); };
        const std::int64_t s = clamp(a.start), e = a.end ? clamp(*a.end) : r;
        std::vector<std::int64_t> dims;
        for (std::int64_t i = s; i < e; ++i) dims.push_back(static_cast<std::int64_t>(x.shape()[static_cast<std::size_t>(i)]));
        auto y = array<std::int64_t>::from_shape({dims.size()});
        std::copy(dims.begin(), dims.end(), y.data());
        return y;
    }
    // Not differentiable: the output is int64 dims, which no element value of the input changes.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), a));
        }));
    }
};

// ---------------------------------------------------------------- Size

/// Size-13(data): the element count as an int64 scalar.
struct size {
    static constexpr std::string_view op_type = "Size";
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"size", spec::types::int64, {0, 0}, "T1"}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context&) { return {{}}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context&) { return {dtype::i64}; }
    // Facts: the element count, known once shapes are solved.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map&, std::span<const shape_type> shapes) {
                if (shapes.empty()) return std::vector<spec::value_facts>{spec::value_facts{}};
                double n = 1.0;
                for (const auto d : shapes[0]) n *= static_cast<double>(d);
                return std::vector<spec::value_facts>{spec::value_facts::constant(n)};
            });
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (out != dtype::i64 || rank != 0) return {};
        return {{spec::types::all.members(), shape_util::ranks_between(0, shape_detail::max_rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<std::int64_t> compute(const array<T>& x) {
        static_assert(spec::dtype_accepted<size, T>::value);
        auto y = array<std::int64_t>::from_shape(shape_type{});
        y.data()[0] = static_cast<std::int64_t>(x.size());
        return y;
    }
    // Not differentiable: the output is the int64 element count, which no element value of the input changes.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>()));
        }));
    }
};

// ---------------------------------------------------------------- ConstantOfShape

struct constant_of_shape_attr {
    tensor value = tensor::zeros(dtype::f32, {1});
};

/// ConstantOfShape-9(input): a tensor of shape `input` (int64, empty = scalar)
/// filled with the one element of attribute `value` (default float32 0); the
/// output dtype is value's dtype.
struct constant_of_shape {
    static constexpr std::string_view op_type = "ConstantOfShape";
    static constexpr int opset = 9;
    using attributes = constant_of_shape_attr;
    static constexpr spec::dtype_set value_types = spec::dtypes_of(dtype::f16, dtype::f32, dtype::f64, dtype::i8, dtype::i16, dtype::i32,
                                                                   dtype::i64, dtype::u8, dtype::boolean);
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", value_types, {}, "T2"}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        std::vector<spec::constraint> out{
            shape_util::concrete_fact(a.value.size() == 1, "value holds exactly one element"),
            shape_util::concrete_fact(value_types.contains(a.value.element_dtype()),
                                  "value's dtype is one of " + value_types.to_string() + " (got " + std::string(name(a.value.element_dtype())) + ")")};
        const auto v = c.values(0);
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "input[" + std::to_string(i) + "] >= 0"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.values(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        return {spec::parse_attributes<attributes>(c.attributes(), op_type).value.element_dtype()};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t) {
        if (!value_types.contains(out)) return {};
        return {{{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// The typed kernel: T is the output (value) type; the shape is int64.
    template <class T>
    static array<T> compute(std::span<const std::int64_t> shape, T value) {
        static_assert(element_type<T> && value_types.contains(dtype_of<T>),
                      "ConstantOfShape: T is the element type of `value` and must be one of its allowed dtypes");
        shape_type s;
        for (const auto v : shape) s.push_back(shape_util::to_dim(v, op_type, "a shape value"));
        auto y = array<T>::from_shape(s);
        const std::size_t n = element_count(s, op_type);
        std::fill(y.data(), y.data() + n, value);
        return y;
    }
    // Not differentiable: the only input is an int64 shape; the fill value is an attribute, not an input.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (a.value.size() != 1) throw error(op_type, "value must hold exactly one element, got " + std::to_string(a.value.size()));
        const auto shape = shape_util::int_values(c.input(0), op_type);
        return detail::single_output(detail::dispatch<value_types>(a.value.element_dtype(), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(shape, a.value.values<T>()[0]));
        }));
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.tensor_attribute(
            "value",
            [](rng& g, std::optional<dtype> d, const std::optional<shape_type>&) {
                return spec::random_values(g, d ? *d : detail::pick_dtype(g, value_types), {1}, -9, 9);
            },
            0.7)
            .facts([](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type>) {
                // Every element is `value` (0 when not given), whatever the shape input.
                double v = 0.0;
                if (const auto it = attrs.find("value"); it != attrs.end()) {
                    if (const auto* t = std::get_if<tensor>(&it->second); t != nullptr && t->size() == 1) {
                        v = t->to<double>().data()[0];
                    }
                }
                return std::vector<spec::value_facts>{spec::value_facts::constant(v)};
            });
    }
};

// ---------------------------------------------------------------- Range

/// Range-11(start, limit, delta): start + i * delta for i in
/// [0, max(ceil((limit - start) / delta), 0)). delta must be non-zero. Integer
/// inputs are symbols (the length is symbolic); float inputs are computed in
/// double (count and values) and rounded once to T.
struct range {
    static constexpr std::string_view op_type = "Range";
    static constexpr int opset = 11;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::dtypes_of(dtype::f32, dtype::f64, dtype::i16, dtype::i32, dtype::i64);
    static constexpr std::array<spec::value_spec, 3> inputs{{{"start", types, {0, 0}}, {"limit", types, {0, 0}}, {"delta", types, {0, 0}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", types, {1, 1}}}};
    static constexpr std::int64_t max_elements = std::int64_t{1} << 40;  // implementation limit

    static bool symbolic(const spec::context& c) { return c.input_dtype(0) == dtype::i64 || c.input_dtype(0) == dtype::i32; }
    /// The concrete element count; throws on delta == 0, non-finite inputs, overflow.
    static std::int64_t count(const tensor& start, const tensor& limit, const tensor& delta) {
        if (info(start.element_dtype()).is_floating) {
            const double s = start.value_as_double(0), l = limit.value_as_double(0), d = delta.value_as_double(0);
            if (!std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) throw error(op_type, "start, limit and delta must be finite");
            if (d == 0.0) throw error(op_type, "delta is 0");
            const double n = std::ceil((l - s) / d);
            if (!(n < static_cast<double>(max_elements))) throw error(op_type, "the output would have more than 2^40 elements");
            return n > 0 ? static_cast<std::int64_t>(n) : 0;
        }
        const auto s = start.to<std::int64_t>().data()[0], l = limit.to<std::int64_t>().data()[0], d = delta.to<std::int64_t>().data()[0];
        if (d == 0) throw error(op_type, "delta is 0");
        std::int64_t diff = 0;
        if (__builtin_sub_overflow(l, s, &diff)) throw error(op_type, "limit - start overflows int64");
        std::int64_t n = 0;
        if (d > 0) {
            n = diff <= 0 ? 0 : (diff - 1) / d + 1;
        } else {
            // ceil(|diff| / |d|) = floor((|diff| - 1) / |d|) + 1; |d| as unsigned, so INT64_MIN does not overflow.
            n = diff >= 0 ? 0 : static_cast<std::int64_t>(static_cast<std::uint64_t>(-(diff + 1)) / (0 - static_cast<std::uint64_t>(d))) + 1;
        }
        if (n > max_elements) throw error(op_type, "the output would have more than 2^40 elements");
        return n;
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (symbolic(c)) {
            return {{c.value(2, 0) != 0, "delta is not 0"}};
        }
        const double d = c.input(2).value_as_double(0);
        return {shape_util::concrete_fact(d != 0.0, "delta is not 0")};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        if (symbolic(c)) {
            const auto s = c.value(0, 0), l = c.value(1, 0), d = c.value(2, 0);
            const auto diff = l - s;
            return {{select(d > 0, select(diff <= 0, spec::expr(0), (diff - 1) / d + 1),
                            select(diff >= 0, spec::expr(0), spec::expr(1) - (spec::expr(-1) - diff) / d))}};
        }
        return {{spec::expr(count(c.input(0), c.input(1), c.input(2)))}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank != 1) return {};
        return {{{out}, {0}}, {{out}, {0}}, {{out}, {0}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(T start, T limit, T delta) {
        static_assert(spec::dtype_accepted<range, T>::value);
        const auto scalar = [](T v) {
            auto a = array<T>::from_shape(shape_type{});
            a.data()[0] = v;
            return tensor(a);
        };
        const auto n = static_cast<std::size_t>(count(scalar(start), scalar(limit), scalar(delta)));
        auto y = array<T>::from_shape({n});
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (std::is_floating_point_v<T>) {
                y.data()[i] = static_cast<T>(static_cast<double>(start) + static_cast<double>(i) * static_cast<double>(delta));
            } else {  // stays within [start, limit): no overflow
                y.data()[i] = static_cast<T>(static_cast<std::int64_t>(start) + static_cast<std::int64_t>(i) * static_cast<std::int64_t>(delta));
            }
        }
        return y;
    }
    // Not differentiable: a generator of positions / index sequences whose length steps with its inputs; kept constant.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).values<T>()[0], c.input(1).values<T>()[0], c.input(2).values<T>()[0]));
        }));
    }
    template <int = 0>
    static spec::hints hints() {
        // Floating (and int16) ranges read their data: start, limit, delta giving 1..10 elements.
        auto scalar = [](std::size_t which) {
            return [which](rng& g, const spec::context& c) {
                const double start = static_cast<double>(g.integer(-10, 10));
                const double delta = g.bernoulli(0.5) ? static_cast<double>(g.integer(1, 4)) : -static_cast<double>(g.integer(1, 4));
                const double v = which == 0 ? start : which == 2 ? delta : start + delta * static_cast<double>(g.integer(1, 10));
                auto t = array<double>::from_shape(shape_type{});
                t.data()[0] = v;
                return tensor::from_array_as(t, c.input_dtype(which));
            };
        };
        return spec::hints{}.before_solving(0, scalar(0)).before_solving(1, scalar(1)).before_solving(2, scalar(2));
    }
};

// ---------------------------------------------------------------- DepthToSpace / SpaceToDepth

struct depth_to_space_attr {
    std::int64_t blocksize = 1;
    std::string mode = "DCR";
    static constexpr std::array<std::string_view, 1> required{"blocksize"};
};

/// DepthToSpace-13(input [N, C, H, W]) -> [N, C / b², H * b, W * b]:
/// DCR: out[n, c, h*b + i, w*b + j] = in[n, (i*b + j) * C/b² + c, h, w];
/// CRD: out[n, c, h*b + i, w*b + j] = in[n, c * b² + i*b + j, h, w].
struct depth_to_space {
    static constexpr std::string_view op_type = "DepthToSpace";
    static constexpr int opset = 13;
    using attributes = depth_to_space_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all, {4, 4}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {4, 4}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto mode = spec::parse_attributes<attributes>(c.attributes(), op_type).mode;
        const auto b = c.attr("blocksize");
        return {shape_util::concrete_fact(mode == "DCR" || mode == "CRD", "mode is DCR or CRD (got '" + mode + "')"),
                {b >= 1, "blocksize >= 1"},
                {c.dim(0, 1) % shape_util::emax(b * b, spec::expr(1)) == 0, "channels divide by blocksize²"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto b = c.attr("blocksize");
        return {{c.dim(0, 0), c.dim(0, 1) / shape_util::emax(b * b, spec::expr(1)), c.dim(0, 2) * b, c.dim(0, 3) * b}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank != 4) return {};
        return {{{out}, {4}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a) {
        static_assert(spec::dtype_accepted<depth_to_space, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.size() != 4) throw shape_error(op_type, "input must have rank 4, got " + std::to_string(in.size()));
        if (a.mode != "DCR" && a.mode != "CRD") throw error(op_type, "mode must be DCR or CRD, got '" + a.mode + "'");
        if (a.blocksize < 1 || a.blocksize > (std::int64_t{1} << 16)) throw error(op_type, "blocksize must be in [1, 65536], got " + std::to_string(a.blocksize));
        const auto b = static_cast<std::size_t>(a.blocksize);
        if (in[1] % (b * b) != 0) throw shape_error(op_type, "channels " + std::to_string(in[1]) + " do not divide by blocksize² = " + std::to_string(b * b));
        const std::size_t oc = in[1] / (b * b);
        const shape_type out{in[0], oc, in[2] * b, in[3] * b};
        const auto st = detail::strides_of(in);
        const bool dcr = a.mode == "DCR";
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            const std::size_t i = o[2] % b, j = o[3] % b;
            const std::size_t ch = dcr ? (i * b + j) * oc + o[1] : o[1] * b * b + i * b + j;
            return o[0] * st[0] + ch * st[1] + (o[2] / b) * st[2] + (o[3] / b) * st[3];
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<depth_to_space>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<depth_to_space>(c, x);
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0).choice("mode", {std::string("DCR"), std::string("CRD")}, 0.6).solve("blocksize", 1, 4, 1.0); }
};

struct space_to_depth_attr {
    std::int64_t blocksize = 1;
    static constexpr std::array<std::string_view, 1> required{"blocksize"};
};

/// SpaceToDepth-13(input [N, C, H, W]) -> [N, C * b², H / b, W / b]:
/// out[n, (i*b + j) * C + c, h, w] = in[n, c, h*b + i, w*b + j].
struct space_to_depth {
    static constexpr std::string_view op_type = "SpaceToDepth";
    static constexpr int opset = 13;
    using attributes = space_to_depth_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all, {4, 4}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {4, 4}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto b = c.attr("blocksize");
        return {{b >= 1, "blocksize >= 1"},
                {c.dim(0, 2) % shape_util::emax(b, spec::expr(1)) == 0, "height divides by blocksize"},
                {c.dim(0, 3) % shape_util::emax(b, spec::expr(1)) == 0, "width divides by blocksize"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto b = c.attr("blocksize");
        const auto bb = shape_util::emax(b, spec::expr(1));
        return {{c.dim(0, 0), c.dim(0, 1) * b * b, c.dim(0, 2) / bb, c.dim(0, 3) / bb}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank != 4) return {};
        return {{{out}, {4}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a) {
        static_assert(spec::dtype_accepted<space_to_depth, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.size() != 4) throw shape_error(op_type, "input must have rank 4, got " + std::to_string(in.size()));
        if (a.blocksize < 1 || a.blocksize > (std::int64_t{1} << 16)) throw error(op_type, "blocksize must be in [1, 65536], got " + std::to_string(a.blocksize));
        const auto b = static_cast<std::size_t>(a.blocksize);
        if (in[2] % b != 0 || in[3] % b != 0) {
            throw shape_error(op_type, "height and width " + std::to_string(in[2]) + ", " + std::to_string(in[3]) + " do not divide by blocksize " + std::to_string(b));
        }
        const std::size_t ch = in[1];
        const shape_type out{in[0], ch * b * b, in[2] / b, in[3] / b};
        const auto st = detail::strides_of(in);
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            const std::size_t c = o[1] % ch, blk = o[1] / ch, i = blk / b, j = blk % b;
            return o[0] * st[0] + c * st[1] + (o[2] * b + i) * st[2] + (o[3] * b + j) * st[3];
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<space_to_depth>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<space_to_depth>(c, x);
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0).solve("blocksize", 1, 4, 1.0); }
};

inline constexpr auto shape_ops =
    hana::tuple_t<reshape, transpose, squeeze, unsqueeze, flatten, slice, concat, split, expand, tile, pad, gather,
                  gather_elements, trilu, shape, size, constant_of_shape, range, depth_to_space, space_to_depth>;

/// ONNX-named aliases, the names the rest of the kit uses for op specs.
using Reshape = reshape;
using Transpose = transpose;
using Squeeze = squeeze;
using Unsqueeze = unsqueeze;
using Flatten = flatten;
using Slice = slice;
using Concat = concat;
using Split = split;
using Expand = expand;
using Tile = tile;
using Pad = pad;
using Gather = gather;
using GatherElements = gather_elements;
using Trilu = trilu;
using Shape = shape;
using Size = size;
using ConstantOfShape = constant_of_shape;
using Range = range;
using DepthToSpace = depth_to_space;
using SpaceToDepth = space_to_depth;


}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reshape_attr, allowzero);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::transpose_attr, perm);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::flatten_attr, axis);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::concat_attr, axis);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::pad_attr, mode);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::gather_attr, axis);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::gather_elements_attr, axis);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::trilu_attr, upper);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::shape_attr, start, end);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::constant_of_shape_attr, value);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::depth_to_space_attr, blocksize, mode);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::space_to_depth_attr, blocksize);

// Split's attribute struct is adapted by hand: its reserved attribute is named
// "__num_outputs", which is not a valid (non-reserved) C++ member name.
namespace boost::hana {
template <>
struct accessors_impl<tensoracle::ops::split_attr> {
    template <int = 0>  // built only where used, as TENSORACLE_ADAPT_ATTRIBUTES does
    static constexpr auto apply() {
        return boost::hana::make_tuple(
            boost::hana::make_pair(BOOST_HANA_STRING("axis"), [](auto&& s) -> decltype(auto) { return (s.axis); }),
            boost::hana::make_pair(BOOST_HANA_STRING("__num_outputs"), [](auto&& s) -> decltype(auto) { return (s.num_outputs); }));
    }
};
}  // namespace boost::hana
