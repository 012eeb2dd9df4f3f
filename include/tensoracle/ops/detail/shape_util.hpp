// tensoracle: helpers for shape and data-movement specs: symbolic axis
// arithmetic (normalization, indexing a dim list with a symbolic position,
// products) and concrete helpers for kernels (int values of a tensor,
// ravel / unravel with strides). Namespace shape_util, apart from other
// families' detail helpers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/core/error.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/op.hpp"

namespace tensoracle::ops::shape_util {

using detail::strides_of;

using spec::expr;

/// The constant -n (expr has no unary minus).
inline expr negative(std::size_t n) { return expr(-static_cast<std::int64_t>(n)); }

/// max / min of expressions. expr's min and max are hidden friends found by
/// ADL; the block-scope using-declaration keeps unqualified lookup from
/// stopping at the ops::min / ops::max op types (which would disable ADL).
inline expr emax(const expr& a, const expr& b) {
    using std::max;
    return max(a, b);
}
inline expr emin(const expr& a, const expr& b) {
    using std::min;
    return min(a, b);
}

/// a in [-rank, rank) (an axis of a tensor of that rank).
inline expr axis_in_range(const expr& a, std::size_t rank) { return a >= negative(rank) && a < expr(rank); }

/// A possibly negative axis made non-negative: a < 0 ? a + rank : a.
inline expr normalized_axis(const expr& a, std::size_t rank) { return select(a < 0, a + expr(rank), a); }

/// v[idx] for a symbolic idx, as a chain of selects; `fallback` where idx is
/// outside [0, v.size()) (callers constrain idx so that it never is).
inline expr pick(const std::vector<expr>& v, const expr& idx, const expr& fallback = expr(0)) {
    expr out = fallback;
    for (std::size_t j = v.size(); j-- > 0;) out = select(idx == expr(j), v[j], out);
    return out;
}

/// Sum of expressions (0 for none).
inline expr sum(const std::vector<expr>& v) {
    expr out(0);
    for (const auto& e : v) out = out + e;
    return out;
}

/// 1 where cond holds, else 0 (an integer, not a boolean, so it can be summed).
inline expr indicator(const expr& cond) { return select(cond, expr(1), expr(0)); }

/// Logical OR of conditions (false for none).
inline expr any_of(const std::vector<expr>& v) {
    expr out(0);
    for (const auto& e : v) out = out || e;
    return out;
}

/// Constraints that normalized axes are pairwise distinct.
inline std::vector<spec::constraint> distinct_axes(const std::vector<expr>& normalized, const std::string& what) {
    std::vector<spec::constraint> out;
    for (std::size_t i = 0; i < normalized.size(); ++i) {
        for (std::size_t j = i + 1; j < normalized.size(); ++j) {
            out.push_back({normalized[i] != normalized[j], what + " " + std::to_string(i) + " and " +
                                                               std::to_string(j) + " name different axes"});
        }
    }
    return out;
}

/// A constraint whose truth is known now (a concrete-only fact): a constant
/// that fails with `reason` when false.
inline spec::constraint concrete_fact(bool holds, std::string reason) { return {expr(holds ? 1 : 0) == 1, std::move(reason)}; }

/// Ranks 0..max as a list (input candidates).
inline std::vector<std::size_t> ranks_between(std::size_t lo, std::size_t hi) {
    std::vector<std::size_t> out;
    for (std::size_t r = lo; r <= hi; ++r) out.push_back(r);
    return out;
}

/// The values of an int32 / int64 tensor as int64 (any rank).
inline std::vector<std::int64_t> int_values(const tensor& t, std::string_view where) {
    if (t.element_dtype() != dtype::i64 && t.element_dtype() != dtype::i32) {
        throw dtype_error(where, "expected an int32 or int64 tensor, got " + std::string(name(t.element_dtype())));
    }
    const auto a = t.to<std::int64_t>();
    return std::vector<std::int64_t>(a.data(), a.data() + a.size());
}

/// Concrete axis normalization that throws naming the op.
inline std::size_t checked_axis(std::int64_t axis, std::size_t rank, std::string_view op, std::string_view what = "axis") {
    const auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r) {
        throw shape_error(op, std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                                  std::to_string(rank) + " (allowed: [" + std::to_string(-r) + ", " +
                                  std::to_string(r - 1) + "])");
    }
    return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

/// Shape of a typed array as a shape_type.
template <class A>
shape_type shape_of(const A& a) {
    return shape_type(a.shape().begin(), a.shape().end());
}

/// Flat offset of a multi-index under row-major strides.
inline std::size_t ravel(const shape_type& idx, const shape_type& strides) {
    std::size_t f = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) f += idx[k] * strides[k];
    return f;
}

/// A non-negative int64 as a dim, or a shape_error naming the op.
inline std::size_t to_dim(std::int64_t v, std::string_view op, std::string_view what) {
    if (v < 0) throw shape_error(op, std::string(what) + " is negative (" + std::to_string(v) + ")");
    return static_cast<std::size_t>(v);
}

/// Advances idx to the next multi-index over dims in row-major order; false
/// (idx back to all zeros) after the last one. Kernels walk their output with
/// it instead of unravelling each flat offset into a fresh vector.
inline bool next_index(shape_type& idx, const shape_type& dims) {
    for (std::size_t k = idx.size(); k-- > 0;) {
        if (++idx[k] < dims[k]) return true;
        idx[k] = 0;
    }
    return false;
}

/// out[f] = x[source(out multi-index)] for every output element: the common
/// loop of the data-movement kernels. `source` returns the input flat offset.
template <class T, class F>
array<T> gather_elements_by(const array<T>& x, const shape_type& out_shape, std::string_view op, F&& source) {
    auto y = array<T>::from_shape(out_shape);
    const std::size_t n = element_count(out_shape, op);
    shape_type index(out_shape.size(), 0);  // the output multi-index of offset f
    for (std::size_t f = 0; f < n; ++f, next_index(index, out_shape)) {
        const std::size_t s = source(static_cast<const shape_type&>(index));
        if (s >= x.size()) throw error(op, "internal: source offset out of range");
        y.data()[f] = x.data()[s];
    }
    return y;
}

}  // namespace tensoracle::ops::shape_util
