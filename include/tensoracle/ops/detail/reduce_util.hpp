// tensoracle: helpers of the reduction family (ops/reduce.hpp): symbolic axis
// constraints and reduced shapes, and the runtime plan that maps each input
// element to the output element it is reduced into.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tensoracle/core/error.hpp"
#include "tensoracle/core/scalar.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/spec/expr.hpp"

namespace tensoracle::ops::detail {

// ---------------------------------------------------------------- symbolic

/// `a` (an axis symbol in [-r, r)) names axis k of a rank-r tensor.
[[nodiscard]] inline spec::expr axis_is(const spec::expr& a, std::size_t k, std::size_t r) {
    return a == spec::expr(k) || a == spec::expr(static_cast<std::int64_t>(k) - static_cast<std::int64_t>(r));
}

/// Some axis of `axes` names axis k (false for an empty list).
[[nodiscard]] inline spec::expr any_axis_is(const std::vector<spec::expr>& axes, std::size_t k, std::size_t r) {
    if (axes.empty()) return spec::expr(0) == spec::expr(1);
    spec::expr e = axis_is(axes[0], k, r);
    for (std::size_t j = 1; j < axes.size(); ++j) e = e || axis_is(axes[j], k, r);
    return e;
}

/// The axis symbol normalized into [0, r) (valid once the range constraint holds).
[[nodiscard]] inline spec::expr normalized_axis(const spec::expr& a, std::size_t r) {
    return select(a < spec::expr(0), a + spec::expr(r), a);
}

/// One axis lies in [-r, r).
[[nodiscard]] inline spec::constraint axis_in_range(const spec::expr& a, std::size_t r, const std::string& what) {
    return {spec::expr(-static_cast<std::int64_t>(r)) <= a && a < spec::expr(r),
            what + " lies in [-rank, rank) with rank " + std::to_string(r)};
}

/// Every axis lies in [-r, r) and no two name the same axis.
[[nodiscard]] inline std::vector<spec::constraint> axes_constraints(const std::vector<spec::expr>& axes, std::size_t r,
                                                                  const std::string& what) {
    std::vector<spec::constraint> out;
    for (std::size_t j = 0; j < axes.size(); ++j) {
        out.push_back(axis_in_range(axes[j], r, what + "[" + std::to_string(j) + "]"));
    }
    for (std::size_t i = 0; i < axes.size(); ++i) {
        for (std::size_t j = i + 1; j < axes.size(); ++j) {
            out.push_back({normalized_axis(axes[i], r) != normalized_axis(axes[j], r),
                           what + "[" + std::to_string(i) + "] and " + what + "[" + std::to_string(j) +
                               "] name different axes"});
        }
    }
    return out;
}

/// An int attribute is 0 or 1.
[[nodiscard]] inline spec::constraint is_flag(const spec::expr& a, const std::string& name) {
    return {a == spec::expr(0) || a == spec::expr(1), name + " is 0 or 1"};
}

/// Output dims of reducing `dims` over distinct `axes` (every axis when the
/// list is empty): reduced dims become 1 (keepdims) or are dropped. With
/// symbolic axes the surviving dims are selected by counting: output dim m is
/// the input dim k that is not reduced and has m unreduced dims before it.
[[nodiscard]] inline std::vector<spec::expr> reduced_dims(const std::vector<spec::expr>& dims,
                                                          const std::vector<spec::expr>& axes, bool keepdims,
                                                          std::string_view op) {
    const std::size_t r = dims.size();
    if (axes.empty()) return keepdims ? std::vector<spec::expr>(r, spec::expr(1)) : std::vector<spec::expr>{};
    std::vector<spec::expr> red;
    for (std::size_t k = 0; k < r; ++k) red.push_back(any_axis_is(axes, k, r));
    if (keepdims) {
        std::vector<spec::expr> out;
        for (std::size_t k = 0; k < r; ++k) out.push_back(select(red[k], spec::expr(1), dims[k]));
        return out;
    }
    if (axes.size() > r) {
        throw shape_error(op, std::to_string(axes.size()) + " axes cannot be distinct axes of rank " + std::to_string(r));
    }
    std::vector<spec::expr> out;
    for (std::size_t m = 0; m + axes.size() < r; ++m) {
        spec::expr d(0), before(0);  // before: unreduced dims left of k
        for (std::size_t k = 0; k < r; ++k) {
            d = d + select(!red[k] && before == spec::expr(m), dims[k], spec::expr(0));
            before = before + select(red[k], spec::expr(0), spec::expr(1));
        }
        out.push_back(d);
    }
    return out;
}

// ---------------------------------------------------------------- runtime

/// Which axes of a rank-r tensor `axes` names (negative counts from the end);
/// out of range or repeated axes are a shape_error naming the op.
[[nodiscard]] inline std::vector<bool> axis_mask(const std::vector<std::int64_t>& axes, std::size_t r,
                                                 std::string_view op) {
    std::vector<bool> mask(r, false);
    const auto sr = static_cast<std::int64_t>(r);
    for (const std::int64_t a : axes) {
        if (a < -sr || a >= sr) {
            throw shape_error(op, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(r));
        }
        const auto k = static_cast<std::size_t>(a < 0 ? a + sr : a);
        if (mask[k]) throw shape_error(op, "axis " + std::to_string(a) + " is repeated in axes");
        mask[k] = true;
    }
    return mask;
}

/// Where each input element goes in a reduction.
struct reduce_plan {
    shape_type out_shape;                 // reduced dims 1 (keepdims) or dropped
    std::size_t out_size = 0;             // element count of the output
    std::vector<std::size_t> out_index;   // input flat index -> output flat index
};

/// The plan of reducing a tensor of shape `in` over the axes in `mask`.
/// Dropping size-1 dims does not move elements, so the flat output index is
/// the same with and without keepdims.
[[nodiscard]] inline reduce_plan make_reduce_plan(const shape_type& in, const std::vector<bool>& mask, bool keepdims) {
    reduce_plan p;
    shape_type kept(in);
    for (std::size_t k = 0; k < in.size(); ++k) {
        if (mask[k]) kept[k] = 1;
        if (!mask[k] || keepdims) p.out_shape.push_back(kept[k]);
    }
    p.out_size = element_count(kept);
    shape_type kept_strides(kept.size(), 1);
    for (std::size_t k = kept.size(); k-- > 1;) kept_strides[k - 1] = kept_strides[k] * kept[k];
    const std::size_t n = element_count(in);
    p.out_index.resize(n);
    shape_type idx(in.size(), 0);
    for (std::size_t f = 0; f < n; ++f) {
        std::size_t o = 0;
        for (std::size_t k = 0; k < in.size(); ++k) o += mask[k] ? 0 : idx[k] * kept_strides[k];
        p.out_index[f] = o;
        for (std::size_t k = in.size(); k-- > 0;) {  // row-major increment
            if (++idx[k] < in[k]) break;
            idx[k] = 0;
        }
    }
    return p;
}

/// The values of each reduction group, in input order, converted to A.
template <class A, class T>
[[nodiscard]] std::vector<std::vector<A>> reduce_groups(std::span<const T> x, const reduce_plan& p) {
    std::vector<std::vector<A>> groups(p.out_size);
    for (std::size_t f = 0; f < x.size(); ++f) groups[p.out_index[f]].push_back(value_cast<A>(x[f]));
    return groups;
}

/// A tensor split around one axis: outer x n x inner, element (o, i, j) at
/// o * n * inner + i * inner + j.
struct axis_split {
    std::size_t outer = 1, n = 1, inner = 1;
    [[nodiscard]] std::size_t at(std::size_t o, std::size_t i, std::size_t j) const { return (o * n + i) * inner + j; }
};
[[nodiscard]] inline axis_split split_at(const shape_type& s, std::size_t axis) {
    axis_split r;
    for (std::size_t k = 0; k < s.size(); ++k) {
        if (k < axis) r.outer *= s[k];
        if (k == axis) r.n = s[k];
        if (k > axis) r.inner *= s[k];
    }
    return r;
}

/// Accumulator of the family: float for f16/bf16/f32, double for f64,
/// int64 (wrapping) for integers; AD scalars accumulate in themselves so that
/// derivatives flow through the accumulation.
template <class T>
using reduce_acc_t =
    std::conditional_t<ad_scalar<T>, T,
                       std::conditional_t<std::is_same_v<T, double>, double,
                                          std::conditional_t<floating_element<T>, float, std::int64_t>>>;

/// a + b and a * b; integers wrap modulo 2^64 (no UB), then once more to T's width.
template <class A>
[[nodiscard]] A acc_add(A a, A b) {
    if constexpr (std::is_integral_v<A>) {
        return static_cast<A>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
    } else {
        return a + b;
    }
}
template <class A>
[[nodiscard]] A acc_mul(A a, A b) {
    if constexpr (std::is_integral_v<A>) {
        return static_cast<A>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
    } else {
        return a * b;
    }
}
template <class A>
[[nodiscard]] A acc_abs(A a) {
    if constexpr (std::is_integral_v<A>) {
        return a < 0 ? static_cast<A>(std::uint64_t{0} - static_cast<std::uint64_t>(a)) : a;  // INT64_MIN wraps
    } else {
        return math::fabs(a);
    }
}

}  // namespace tensoracle::ops::detail
