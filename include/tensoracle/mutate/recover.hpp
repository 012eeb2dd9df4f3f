// tensoracle: mutate-then-recover mutations (TorchProbe): a value is changed
// and changed back before its readers see it (transpose and transpose back,
// reshape and back, pad then slice, split then concat, a wider cast and back,
// a power-of-two scale and back, an integer offset and back, unsqueeze then
// squeeze). All are exact: data movement and exact arithmetic.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "tensoracle/mutate/mutation.hpp"

namespace tensoracle::mutate {

namespace detail {

/// Int64 values read where an op wants constant shape data (Reshape's shape, Slice's
/// starts, axes, pads...): backends need those constant, so no value rewrite touches them.
[[nodiscard]] inline bool feeds_shape_slot(const context& c, const std::string& v) {
    if (c.dtype_of(v) != dtype::i64) return false;
    for (const auto i : c.readers(v)) {
        const auto& n = c.graph().nodes[i];
        for (std::size_t k = 1; k < n.inputs.size(); ++k) {
            if (n.inputs[k] == v && (graph::detail::is_control_flow(n.op_type) || !accepts(n.op_type, k, dtype::f32))) return true;
        }
    }
    return false;
}

/// Common acceptance of value rewrites: a profiled value that is not shape data.
[[nodiscard]] inline bool plain_value(const context& c, const std::string& v) {
    return !feeds_shape_slot(c, v) && c.value(v).size() > 0;
}

/// The inverse of permutation p.
[[nodiscard]] inline std::vector<std::int64_t> inverse_permutation(const std::vector<std::int64_t>& p) {
    std::vector<std::int64_t> q(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) q[static_cast<std::size_t>(p[i])] = static_cast<std::int64_t>(i);
    return q;
}

/// An integer dtype twice as wide or wider that holds every value of `d`, exactly.
[[nodiscard]] inline std::vector<dtype> exact_widenings(dtype d) {
    switch (d) {
        case dtype::f16:
        case dtype::bf16: return {dtype::f32, dtype::f64};
        case dtype::f32: return {dtype::f64};
        case dtype::i8: return {dtype::i16, dtype::i32, dtype::i64};
        case dtype::u8: return {dtype::i16, dtype::i32, dtype::i64};
        case dtype::i16: return {dtype::i32, dtype::i64};
        case dtype::i32: return {dtype::i64};
        case dtype::boolean: return {dtype::i32, dtype::f32};
        default: return {};
    }
}

// --- transpose_roundtrip --------------------------------------------------------
inline std::vector<site> transpose_roundtrip_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) { return c.shape_of(v).size() >= 2 && plain_value(c, v); });
}
inline void transpose_roundtrip_apply(context& c, const site& s) {
    const auto p = random_permutation(c.random(), c.shape_of(s.value).size());
    const auto [src, dst] = c.intercept(s.value);
    const auto t = c.add("Transpose", {src}, {{"perm", p}});
    c.add("Transpose", {t}, {{"perm", inverse_permutation(p)}}, dst);
}

// --- reshape_roundtrip ----------------------------------------------------------
inline std::vector<std::size_t> divisors(std::size_t n) {
    std::vector<std::size_t> d;
    for (std::size_t k = 1; k <= n; ++k) {
        if (n % k == 0) d.push_back(k);
    }
    return d;
}
inline std::vector<site> reshape_roundtrip_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) { return !c.shape_of(v).empty() && plain_value(c, v); });
}
inline void reshape_roundtrip_apply(context& c, const site& s) {
    const auto& shape = c.shape_of(s.value);
    const std::size_t n = c.value(s.value).size();
    // A random other factorization of the element count: [n], [a, n/a] or [a, b, n/(a b)].
    std::vector<std::int64_t> mid;
    auto& r = c.random();
    const std::size_t parts = 1 + r.below(3);
    std::size_t rest = n;
    for (std::size_t k = 1; k < parts; ++k) {
        const auto dv = divisors(rest);
        const std::size_t f = dv[r.below(dv.size())];
        mid.push_back(static_cast<std::int64_t>(f));
        rest /= f;
    }
    mid.push_back(static_cast<std::int64_t>(rest));
    std::vector<std::int64_t> back(shape.begin(), shape.end());
    const auto [src, dst] = c.intercept(s.value);
    const auto t = c.add("Reshape", {src, c.add_ints(mid, "shape")});
    c.add("Reshape", {t, c.add_ints(back, "shape")}, {}, dst);
}

// --- pad_slice --------------------------------------------------------------------
inline std::vector<site> pad_slice_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        return !c.shape_of(v).empty() && c.shape_of(v).size() <= 5 && plain_value(c, v) && c.accepts("Pad", 0, c.dtype_of(v));
    });
}
inline void pad_slice_apply(context& c, const site& s) {
    const auto& shape = c.shape_of(s.value);
    const std::size_t rank = shape.size();
    auto& r = c.random();
    std::vector<std::int64_t> pads(2 * rank, 0), starts, ends, axes;
    // Pad some axes (the last always), while the padded tensor stays within padded_size_limit.
    const double limit = padded_size_limit(c.value(s.value).size());
    double padded = static_cast<double>(c.value(s.value).size());
    for (std::size_t a = rank; a-- > 0;) {
        if (!(r.bernoulli(0.5) || a + 1 == rank)) continue;
        const auto before = r.integer(0, 2);
        const auto after = r.integer(before == 0 ? 1 : 0, 2);
        const double grown = padded / static_cast<double>(shape[a]) * static_cast<double>(shape[a] + static_cast<std::size_t>(before + after));
        if (grown > limit && !axes.empty()) continue;
        padded = grown;
        pads[a] = before;
        pads[a + rank] = after;
        starts.insert(starts.begin(), before);
        ends.insert(ends.begin(), before + static_cast<std::int64_t>(shape[a]));
        axes.insert(axes.begin(), static_cast<std::int64_t>(a));
    }
    const dtype d = c.dtype_of(s.value);
    const double fill = detail::is_float(d) ? r.uniform(-4.0, 4.0) : static_cast<double>(r.integer(0, 1));
    const auto [src, dst] = c.intercept(s.value);
    const auto padded_value = c.add("Pad", {src, c.add_ints(pads, "pads"), c.add_scalar(d, fill, "fill")}, {{"mode", std::string("constant")}});
    c.add("Slice", {padded_value, c.add_ints(starts, "starts"), c.add_ints(ends, "ends"), c.add_ints(axes, "axes")}, {}, dst);
}

// --- split_concat -----------------------------------------------------------------
inline std::vector<site> split_concat_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        const auto& sh = c.shape_of(v);
        return plain_value(c, v) && std::any_of(sh.begin(), sh.end(), [](std::size_t x) { return x >= 2; });
    });
}
inline void split_concat_apply(context& c, const site& s) {
    const auto& shape = c.shape_of(s.value);
    auto& r = c.random();
    std::vector<std::int64_t> axes;
    for (std::size_t a = 0; a < shape.size(); ++a) {
        if (shape[a] >= 2) axes.push_back(static_cast<std::int64_t>(a));
    }
    const auto axis = axes[r.below(axes.size())];
    const auto len = static_cast<std::int64_t>(shape[static_cast<std::size_t>(axis)]);
    // Two or three parts of random (positive) sizes.
    std::vector<std::int64_t> sizes;
    std::int64_t left = len;
    const std::size_t parts = len >= 3 && r.bernoulli(0.5) ? 3 : 2;
    for (std::size_t k = 0; k + 1 < parts; ++k) {
        const auto remaining_parts = static_cast<std::int64_t>(parts - k - 1);
        const auto take = r.integer(1, left - remaining_parts);
        sizes.push_back(take);
        left -= take;
    }
    sizes.push_back(left);
    const auto [src, dst] = c.intercept(s.value);
    const auto pieces = c.add_node("Split", {src, c.add_ints(sizes, "split")}, std::vector<std::string>(parts), {{"axis", axis}});
    c.add("Concat", pieces, {{"axis", axis}}, dst);
}

// --- cast_roundtrip ---------------------------------------------------------------
inline std::vector<site> cast_roundtrip_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) { return plain_value(c, v) && !exact_widenings(c.dtype_of(v)).empty(); });
}
inline void cast_roundtrip_apply(context& c, const site& s) {
    const dtype d = c.dtype_of(s.value);
    const auto wider = exact_widenings(d);
    const dtype w = wider[c.random().below(wider.size())];
    const auto [src, dst] = c.intercept(s.value);
    const auto t = c.add("Cast", {src}, {{"to", std::int64_t{onnx_type(w)}}});
    c.add("Cast", {t}, {{"to", std::int64_t{onnx_type(d)}}}, dst);
}

// --- scale_roundtrip --------------------------------------------------------------
/// The largest k in 1..4 such that max|v| * 2^k stays finite with a factor 4 to spare.
inline int safe_scale_exponent(const tensor& t) {
    const double big = max_finite(t.element_dtype());
    const double m = max_abs(t);
    for (int k = 4; k >= 1; --k) {
        if (m * std::ldexp(1.0, k + 2) < big) return k;
    }
    return 0;
}
inline std::vector<site> scale_roundtrip_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        return plain_value(c, v) && is_float(c.dtype_of(v)) && safe_scale_exponent(c.value(v)) > 0;
    });
}
inline void scale_roundtrip_apply(context& c, const site& s) {
    const dtype d = c.dtype_of(s.value);
    const int k = static_cast<int>(c.random().integer(1, safe_scale_exponent(c.value(s.value))));
    const auto [src, dst] = c.intercept(s.value);
    // x * 2^k * 2^-k: a power of two scales exactly while nothing overflows.
    const auto t = c.add("Mul", {src, c.add_scalar(d, std::ldexp(1.0, k), "pow2")});
    c.add("Mul", {t, c.add_scalar(d, std::ldexp(1.0, -k), "pow2")}, {}, dst);
}

// --- offset_roundtrip -------------------------------------------------------------
inline bool offset_fits(const tensor& t, std::int64_t k) {
    const double top = max_finite(t.element_dtype());
    for (std::size_t i = 0; i < t.size(); ++i) {
        const double v = t.value_as_double(i);
        if (v + static_cast<double>(k) > top) return false;
    }
    return true;
}
inline std::vector<site> offset_roundtrip_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        const dtype d = c.dtype_of(v);
        return plain_value(c, v) && !is_float(d) && d != dtype::boolean && c.accepts("Add", 0, d) && c.accepts("Sub", 0, d) && offset_fits(c.value(v), 1);
    });
}
inline void offset_roundtrip_apply(context& c, const site& s) {
    const dtype d = c.dtype_of(s.value);
    std::int64_t k = c.random().integer(1, 100);
    while (k > 1 && !offset_fits(c.value(s.value), k)) k /= 2;
    const auto [src, dst] = c.intercept(s.value);
    const auto cst = c.add_scalar(d, static_cast<double>(k), "offset");
    const auto t = c.add("Add", {src, cst});
    c.add("Sub", {t, cst}, {}, dst);
}

// --- unsqueeze_squeeze ------------------------------------------------------------
inline std::vector<site> unsqueeze_squeeze_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) { return c.shape_of(v).size() <= 4 && plain_value(c, v); });
}
inline void unsqueeze_squeeze_apply(context& c, const site& s) {
    const auto rank = static_cast<std::int64_t>(c.shape_of(s.value).size());
    const auto axis = c.random().integer(0, rank);
    const auto [src, dst] = c.intercept(s.value);
    const auto t = c.add("Unsqueeze", {src, c.add_ints({axis}, "axes")});
    c.add("Squeeze", {t, c.add_ints({axis}, "axes")}, {}, dst);
}

}  // namespace detail

/// The mutate-then-recover family.
[[nodiscard]] inline std::vector<mutation> recover_mutations() {
    using namespace detail;
    return {
        {"transpose_roundtrip", family::recover, "x -> Transpose(Transpose(x, p), p^-1)",
         "any value of rank >= 2 (p: a random permutation other than the identity)", numeric_class::exact, 0.0,
         &transpose_roundtrip_sites, &transpose_roundtrip_apply},
        {"reshape_roundtrip", family::recover, "x -> Reshape(Reshape(x, s'), shape(x))",
         "any value of rank >= 1 and at least one element (s': a random factorization of its size)", numeric_class::exact, 0.0,
         &reshape_roundtrip_sites, &reshape_roundtrip_apply},
        {"pad_slice", family::recover, "x -> Slice(Pad(x, pads, c), pads_begin, pads_begin + shape(x))",
         "any value of rank 1..5 whose dtype Pad takes (pads in 0..2 per side, constant c random)", numeric_class::exact, 0.0,
         &pad_slice_sites, &pad_slice_apply},
        {"split_concat", family::recover, "x -> Concat(Split(x, axis, sizes), axis)",
         "any value with a dimension >= 2 (2 or 3 parts of random sizes)", numeric_class::exact, 0.0, &split_concat_sites,
         &split_concat_apply},
        {"cast_roundtrip", family::recover, "x -> Cast(Cast(x, wider), dtype(x))",
         "f16/bf16 (to f32/f64), f32 (to f64), int8/uint8/int16/int32 (to a wider int), bool (to int32/f32)", numeric_class::exact, 0.0,
         &cast_roundtrip_sites, &cast_roundtrip_apply},
        {"scale_roundtrip", family::recover, "x -> Mul(Mul(x, 2^k), 2^-k)",
         "floating values whose profiled max abs(x) * 2^(k+2) stays finite, k in 1..4 (a power of two scales exactly)",
         numeric_class::exact, 0.0, &scale_roundtrip_sites, &scale_roundtrip_apply},
        {"offset_roundtrip", family::recover, "x -> Sub(Add(x, k), k)",
         "integer values whose profiled max + k fits the dtype, k in 1..100", numeric_class::exact, 0.0, &offset_roundtrip_sites,
         &offset_roundtrip_apply},
        {"unsqueeze_squeeze", family::recover, "x -> Squeeze(Unsqueeze(x, [a]), [a])", "any value of rank <= 4 (a: a random axis)",
         numeric_class::exact, 0.0, &unsqueeze_squeeze_sites, &unsqueeze_squeeze_apply},
    };
}

}  // namespace tensoracle::mutate
