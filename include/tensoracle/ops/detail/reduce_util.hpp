// tensoracle: helpers of the reduction family (ops/reduce.hpp): symbolic axis
// constraints and reduced shapes, and the runtime plan that maps each input
// element to the output element it is reduced into.
#pragma once

#include <algorithm>
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

/// The output shape of reducing `in` over the axes in `mask`: reduced dims
/// become 1 (keepdims) or are dropped. Dropping size-1 dims does not move
/// elements, so the flat output index is the same either way.
[[nodiscard]] inline shape_type reduced_shape(const shape_type& in, const std::vector<bool>& mask, bool keepdims) {
    shape_type out;
    for (std::size_t k = 0; k < in.size(); ++k) {
        if (!mask[k]) out.push_back(in[k]);
        else if (keepdims) out.push_back(1);
    }
    return out;
}

/// Calls visit(o, group) for each output element o of reducing a tensor of
/// shape `in` (values x) over the axes in `mask`, in row-major output order;
/// `group` holds the group's values converted to A, in input order (the order
/// the formulas accumulate in). Adjacent axes of the same kind are merged, so
/// the walk costs one odometer step per contiguous run, not index arithmetic
/// per element; an empty reduced axis gives empty groups.
template <class A, class T, class Visit>
void for_each_reduce_group(std::span<const T> x, const shape_type& in, const std::vector<bool>& mask, Visit&& visit) {
    struct run {
        std::size_t n, stride;
    };
    std::vector<run> kept, red;  // outer to inner, each list merged
    std::size_t stride = 1;
    bool last_reduced = false, any = false;
    for (std::size_t k = in.size(); k-- > 0;) {
        const std::size_t n = in[k];
        if (n != 1) {
            auto& list = mask[k] ? red : kept;
            if (any && last_reduced == mask[k]) {
                list.back().n *= n;  // row-major neighbours of one kind form one axis
            } else {
                list.push_back({n, stride});
            }
            last_reduced = mask[k];
            any = true;
        }
        stride *= n;
    }
    std::reverse(kept.begin(), kept.end());
    std::reverse(red.begin(), red.end());
    std::size_t group = 1, outputs = 1;
    for (const auto& r : red) group *= r.n;
    for (const auto& r : kept) outputs *= r.n;
    if (element_count(in) == 0) {  // some axis is 0: either no outputs or empty groups
        std::size_t out_n = 1;
        for (std::size_t k = 0; k < in.size(); ++k) out_n *= mask[k] ? 1 : in[k];
        for (std::size_t o = 0; o < out_n; ++o) visit(o, std::span<const A>{});
        return;
    }
    std::vector<A> buf;
    // The innermost reduced axis is copied as one (possibly strided) run.
    const std::size_t inner = red.empty() ? 1 : red.back().n, inner_stride = red.empty() ? 1 : red.back().stride;
    const std::size_t outer_red = red.empty() ? 0 : red.size() - 1;
    std::vector<std::size_t> kidx(kept.size(), 0), ridx(outer_red, 0);
    std::size_t base = 0;
    // A contiguous group already in the accumulator's type is handed over in place.
    const bool in_place = std::is_same_v<A, T> && outer_red == 0 && inner_stride == 1;
    if (!in_place) buf.resize(group);
    for (std::size_t o = 0; o < outputs; ++o) {
        if constexpr (std::is_same_v<A, T>) {
            if (in_place) visit(o, std::span<const A>(x.data() + base, group));
        }
        std::size_t off = base, b = 0;
        while (!in_place && b < group) {
            const T* src = x.data() + off;
            if (inner_stride == 1) {
                for (std::size_t i = 0; i < inner; ++i) buf[b + i] = value_cast<A>(src[i]);
            } else {
                for (std::size_t i = 0; i < inner; ++i) buf[b + i] = value_cast<A>(src[i * inner_stride]);
            }
            b += inner;
            for (std::size_t k = outer_red; k-- > 0;) {
                off += red[k].stride;
                if (++ridx[k] < red[k].n) break;
                off -= red[k].stride * red[k].n;
                ridx[k] = 0;
            }
        }
        if (!in_place) visit(o, std::span<const A>(buf.data(), group));
        for (std::size_t k = kept.size(); k-- > 0;) {
            base += kept[k].stride;
            if (++kidx[k] < kept[k].n) break;
            base -= kept[k].stride * kept[k].n;
            kidx[k] = 0;
        }
    }
}

/// The values of each reduction group, in input order, converted to A.
template <class A, class T>
[[nodiscard]] std::vector<std::vector<A>> reduce_groups(std::span<const T> x, const shape_type& in,
                                                        const std::vector<bool>& mask) {
    std::vector<std::vector<A>> groups;
    for_each_reduce_group<A>(x, in, mask,
                             [&](std::size_t, std::span<const A> g) { groups.emplace_back(g.begin(), g.end()); });
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
