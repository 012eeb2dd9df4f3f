// tensoracle: constants, casts and small index ops: Constant, CastLike,
// Dropout (inference), CumSum, EyeLike, OneHot, TopK.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace misc {
inline std::vector<spec::expr> constant_shape(const shape_type& s) {
    std::vector<spec::expr> out;
    for (const auto d : s) out.emplace_back(d);
    return out;
}
inline std::vector<std::size_t> all_ranks(std::size_t max_rank) {
    std::vector<std::size_t> r(max_rank + 1);
    std::iota(r.begin(), r.end(), std::size_t{0});
    return r;
}
}  // namespace misc

struct constant_attr {
    std::optional<tensor> value;
    std::optional<float> value_float;
    std::optional<std::vector<float>> value_floats;
    std::optional<std::int64_t> value_int;
    std::optional<std::vector<std::int64_t>> value_ints;
    std::optional<std::string> value_string;                // valid ONNX, unsupported here
    std::optional<std::vector<std::string>> value_strings;  // valid ONNX, unsupported here
};

/// Constant: exactly one of value, value_float(s), value_int(s). String values
/// are valid ONNX but outside the kit's dtypes (unsupported_error); sparse
/// values are not parsed.
// Not differentiable: no inputs, the output is the attribute's value.
struct Constant {
    static constexpr std::string_view op_type = "Constant";
    static constexpr int opset = 13;
    using attributes = constant_attr;
    static constexpr std::array<spec::value_spec, 0> inputs{};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    static tensor value_of(const attributes& a) {
        if (a.value_string || a.value_strings) {
            throw unsupported_error(std::string(op_type), "string constants are not supported");
        }
        const int given = (a.value ? 1 : 0) + (a.value_float ? 1 : 0) + (a.value_floats ? 1 : 0) + (a.value_int ? 1 : 0) +
                          (a.value_ints ? 1 : 0);
        if (given != 1) {
            throw error(std::string(op_type), "exactly one of value, value_float, value_floats, value_int, value_ints "
                                              "must be set, got " + std::to_string(given));
        }
        if (a.value) return *a.value;
        if (a.value_float) return tensor(array<float>(*a.value_float));
        if (a.value_int) return tensor(array<std::int64_t>(*a.value_int));
        if (a.value_floats) {
            auto t = array<float>::from_shape({a.value_floats->size()});
            std::copy(a.value_floats->begin(), a.value_floats->end(), t.data());
            return tensor(t);
        }
        return detail::int64_tensor(*a.value_ints);
    }
    template <int = 0>
    static attributes attrs(const spec::context& c) { return spec::parse_attributes<attributes>(c.attributes(), op_type); }

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        (void)value_of(attrs(c));
        return {};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        return {misc::constant_shape(value_of(attrs(c)).shape())};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {value_of(attrs(c)).element_dtype()}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype, std::size_t) { return {}; }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return {value_of(attrs(c))}; }
    template <int = 0>
    static spec::hints hints() {
        spec::hints h;
        for (const char* k : {"value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings"}) h.omit(k);
        // value: of the placeholder's dtype and shape when inserted backward, else a small random tensor.
        return h.tensor_attribute("value", [](rng& g, std::optional<dtype> d, const std::optional<shape_type>& s) {
            const dtype dt = d ? *d : detail::pick_dtype(g, spec::types::all);
            return spec::random_values(g, dt, s ? *s : detail::random_shape(g, 0, 3), -5, 5);
        });
    }
};

/// CastLike(input, target_type): Cast to target_type's dtype.
struct CastLike {
    static constexpr std::string_view op_type = "CastLike";
    static constexpr int opset = 15;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all, {}, "T1"}, {"target_type", spec::types::all, {}, "T2"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {}, "T2"}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(1)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        return {{spec::types::all.members(), {rank}}, {{out}, misc::all_ranks(8)}};  // target_type: any rank
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) {
        return {detail::cast_range_rule([](std::span<const tensor> in) { return in[1].element_dtype(); })};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return {c.input(0).cast(c.input_dtype(1))}; }
    /// input only: target_type gives its dtype, not its values.
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        return {0};
    }
    /// The kernel on AD scalar S. Floating to floating has the value of run()
    /// (rounded to the target dtype) and passes the derivative through as the
    /// identity, as frameworks differentiate a cast, rather than the zero
    /// derivative of the rounding. A non-floating input gives constants; a
    /// non-floating target has no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(1)).is_floating) return {array<S>{}};
        if (info(c.input_dtype(0)).is_floating) {
            using B = base_scalar_t<S>;
            return detail::single_output(detail::dispatch<spec::types::floating, array<S>>(c.input_dtype(1), op_type, [&](auto t) {
                using To = typename decltype(t)::type;
                array<S> y = x[0];
                for (auto& v : y) {
                    const B p = primal(v);
                    const B r = value_cast<B>(value_cast<To>(p));
                    // r - p is exact in B, so v + (r - p) has the value r; a constant keeps v's derivatives.
                    if (!(r == p)) v += value_cast<S>(r - p);
                }
                return y;
            }));
        }
        const auto v = c.input(0).cast(c.input_dtype(1)).to<double>();
        auto y = array<S>::from_shape(v.shape());
        for (std::size_t i = 0; i < v.size(); ++i) y.data()[i] = value_cast<S>(v.data()[i]);
        return {y};
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::copy_of(0)).range(0, -50, 50); }
};

struct dropout_attr {
    std::optional<std::int64_t> seed;
};

/// Dropout in inference mode: output = data, mask = all true. Training mode
/// with a nonzero ratio is random and not supported (an error says so).
struct Dropout {
    static constexpr std::string_view op_type = "Dropout";
    static constexpr int opset = 13;
    using attributes = dropout_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"data", spec::types::floating},
                                                             {"ratio", spec::types::ieee_floating, {0, 0}, "T1", true},
                                                             {"training_mode", spec::types::boolean, {0, 0}, "T2", true}}};
    static constexpr std::array<spec::value_spec, 2> outputs{
        {{"output", spec::types::floating}, {"mask", spec::types::boolean, {}, "T2"}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0), c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0), dtype::boolean}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out)) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    static void check_inference(const spec::context& c) {
        const bool training = c.has_input(2) && c.input(2).values<bool>()[0];
        const double ratio = c.has_input(1) ? c.input(1).value_as_double(0) : 0.5;
        if (training && ratio != 0.0) {
            throw unsupported_error(std::string(op_type), "training mode with a nonzero ratio is random and not supported");
        }
    }
    /// data only: ratio and training_mode select the mode, they are not data.
    static std::vector<std::size_t> differentiable_inputs(const spec::context&) { return {0}; }
    /// The kernel on AD scalar S: the identity on data; mask (bool) is a placeholder.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        check_inference(c);
        return {x[0], array<S>{}};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        check_inference(c);
        auto mask = array<bool>::from_shape(c.input(0).shape());
        std::fill(mask.begin(), mask.end(), true);
        return {c.input(0), tensor(mask)};
    }
    template <int = 0>
    static spec::hints hints() {
        // Inference mode: ratio in [0, 0.9), training_mode false (training is random, not supported).
        return spec::hints{}
            .omit("seed")
            .after_solving(1, [](rng& g, const spec::context&, dtype d, const shape_type& s) {
                return spec::random_values(g, d, s, 0.0, 0.9);
            })
            .after_solving(2, [](rng&, const spec::context&, dtype d, const shape_type& s) { return tensor::zeros(d, s); });
    }
};

struct cumsum_attr {
    std::int64_t exclusive = 0;
    std::int64_t reverse = 0;
};

/// CumSum(x, axis): running sums along axis (exclusive: without the element
/// itself; reverse: from the end). Integer sums wrap.
struct CumSum {
    static constexpr std::string_view op_type = "CumSum";
    static constexpr int opset = 14;
    using attributes = cumsum_attr;
    static constexpr spec::dtype_set types =
        spec::types::floating | spec::dtypes_of(dtype::i32, dtype::i64);
    static constexpr std::array<spec::value_spec, 2> inputs{{{"x", types, {1, 8}}, {"axis", spec::types::indices, {0, 1}, "T2"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"y", types}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto r = static_cast<std::int64_t>(c.rank(0));
        const auto axis = c.values(1);
        std::vector<spec::constraint> out{{spec::expr(axis.size()) == 1, "axis is a single value"}};
        if (axis.size() == 1) out.push_back({axis[0] >= -r && axis[0] < r, "axis in [-rank, rank)"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {spec::types::indices.members(), {0, 1}}};  // axis: i32/i64, a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, std::size_t axis, const attributes& a) {
        static_assert(spec::dtype_accepted<CumSum, T>::value);
        // f16/bf16/f32 in float, f64 in double; integers and AD scalars in themselves.
        using acc = std::conditional_t<floating_element<T>, std::conditional_t<std::is_same_v<T, double>, double, float>, T>;
        const shape_type s(x.shape().begin(), x.shape().end());
        const auto st = detail::strides_of(s);
        auto y = array<T>::from_shape(s);
        const std::size_t n = s[axis], stride = st[axis];
        for (std::size_t base = 0; base < x.size(); ++base) {
            if ((base / stride) % n != 0) continue;  // start of a line along axis
            acc running = acc(0);
            for (std::size_t j = 0; j < n; ++j) {
                const std::size_t k = a.reverse != 0 ? n - 1 - j : j;
                const std::size_t f = base + k * stride;
                const acc v = static_cast<acc>(x.data()[f]);
                if (a.exclusive == 0) running = add(running, v);
                y.data()[f] = value_cast<T>(running);
                if (a.exclusive != 0) running = add(running, v);
            }
        }
        return y;
    }
    template <class V>
    static V add(V a, V b) {
        if constexpr (std::is_integral_v<V>) {
            return static_cast<V>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
        } else {
            return a + b;
        }
    }
    static std::size_t axis_of(const spec::context& c) {
        return spec::normalize_axis(c.input(1).to<std::int64_t>().data()[0], c.rank(0), op_type);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = axis_of(c);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), axis, a));
        }));
    }
    /// The kernel on AD scalar S; integer sums have no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = axis_of(c);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute<S>(x[0], axis, a)};
    }
    template <int = 0>
    static spec::hints hints() {
        // An exclusive sum starts every row at 0; along an axis of length 1 it is
        // all 0, and an inclusive one is X itself.
        return spec::hints{}.flag("exclusive").flag("reverse").facts(
            [](std::span<const spec::value_facts> in, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                const bool exclusive = spec::parse_attributes<attributes>(attrs, op_type).exclusive != 0;
                bool single = false;  // the summed axis has length 1
                if (!shapes.empty()) {
                    std::size_t n = 1;
                    for (const auto d : shapes[0]) n *= d;
                    single = n == 1;
                    if (!single && in.size() > 1 && in[1].lo == in[1].hi && std::fabs(in[1].lo) <= 64.0) {  // a known axis
                        const auto r = static_cast<std::int64_t>(shapes[0].size());
                        const auto a = static_cast<std::int64_t>(in[1].lo);
                        single = a >= -r && a < r && shapes[0][static_cast<std::size_t>(a < 0 ? a + r : a)] == 1;
                    }
                }
                spec::value_facts out;
                if (single) {
                    out = exclusive ? spec::value_facts::constant(0.0) : (in.empty() ? out : in[0]);
                } else if (exclusive) {
                    out.force(0.0);
                }
                return std::vector<spec::value_facts>{out};
            });
    }
};

struct eye_like_attr {
    std::optional<std::int64_t> dtype;
    std::int64_t k = 0;
};

/// EyeLike(input): a 2-D tensor of input's shape with ones on diagonal k.
// Not differentiable: the output is 0/1 by position; the input gives only its shape.
struct EyeLike {
    static constexpr std::string_view op_type = "EyeLike";
    static constexpr int opset = 9;
    using attributes = eye_like_attr;
    static constexpr spec::dtype_set types = spec::types::ieee_floating | spec::types::integers | spec::types::boolean;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", types, {2, 2}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", types, {2, 2}, "T2"}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return {a.dtype ? dtype_from_onnx(static_cast<int>(*a.dtype)) : c.input_dtype(0)};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (rank != 2 || !types.contains(out)) return {};
        return {{types.members(), {2}}};  // the output dtype comes from `dtype`, not the input
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto k = spec::parse_attributes<attributes>(c.attributes(), op_type).k;
        const auto s = c.input(0).shape();
        auto out = tensor::zeros(output_dtypes(c)[0], s);
        out.visit([&](auto v) {
            using T = typename decltype(v)::value_type;
            for (std::size_t i = 0; i < s[0]; ++i) {
                const std::int64_t j = static_cast<std::int64_t>(i) + k;
                if (j >= 0 && j < static_cast<std::int64_t>(s[1])) v[i * s[1] + static_cast<std::size_t>(j)] = value_cast<T>(1);
            }
        });
        return detail::single_output(std::move(out));
    }
    template <int = 0>
    static spec::hints hints() {
        // Zeros off the diagonal (every matrix but 1 x 1), ones on it (where k keeps it inside).
        return spec::hints{}.dtype_attribute("dtype", 0.5).range(0, 0, 3).facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                spec::value_facts out = spec::value_facts::within(0.0, 1.0);
                if (shapes.empty() || shapes[0].size() != 2) return std::vector<spec::value_facts>{out};
                const auto rows = static_cast<std::int64_t>(shapes[0][0]), cols = static_cast<std::int64_t>(shapes[0][1]);
                const std::int64_t k = spec::parse_attributes<attributes>(attrs, op_type).k;
                if (k <= -rows || k >= cols) return std::vector<spec::value_facts>{spec::value_facts::constant(0.0)};  // no diagonal
                if (rows * cols != 1) out.force(0.0);
                out.force(1.0);
                return std::vector<spec::value_facts>{out};
            });
    }
};

struct one_hot_attr {
    std::int64_t axis = -1;
};

/// OneHot(indices, depth, values): values[1] where the index (negative counts
/// from depth) matches, values[0] elsewhere; out-of-range indices match nothing.
struct OneHot {
    static constexpr std::string_view op_type = "OneHot";
    // OneHot-11's schema lists no bfloat16.
    static constexpr spec::dtype_set onnx11_numeric = spec::types::ieee_floating | spec::types::integers;
    static constexpr spec::dtype_set onnx11_all = onnx11_numeric | spec::types::boolean;
    static constexpr int opset = 11;
    using attributes = one_hot_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"indices", onnx11_numeric, {1, 7}, "T1"},
                                                             {"depth", onnx11_numeric, {0, 1}, "T2"},
                                                             {"values", onnx11_all, {1, 1}, "T3"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", onnx11_all, {}, "T3"}}};
    static std::int64_t depth_of(const spec::context& c) {
        if (c.input(1).size() != 1) throw shape_error(std::string(op_type), "depth must hold one value");
        const double d = c.input(1).value_as_double(0);
        if (!(d >= 1.0 && d <= 1e9)) throw error(std::string(op_type), "depth must be a positive count, got " + std::to_string(d));
        return static_cast<std::int64_t>(d);
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto r = static_cast<std::int64_t>(c.rank(0)) + 1;
        const auto axis = c.attr("axis");
        return {{axis >= -r && axis < r, "axis in [-(rank+1), rank+1)"}, {c.dim(2, 0) == 2, "values holds [off, on]"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        // Output axis j is depth where j is the (normalized) axis, else the input
        // dim j (before the axis) or j - 1 (after it).
        const auto s = c.shape(0);
        const auto R = static_cast<std::int64_t>(s.size()) + 1;
        const auto a = c.attr("axis");
        const auto axis = select(a < 0, a + R, a);
        const spec::expr depth(depth_of(c));
        std::vector<spec::expr> out;
        for (std::int64_t j = 0; j < R; ++j) {
            const auto ju = static_cast<std::size_t>(j);
            const spec::expr before = ju < s.size() ? s[ju] : spec::expr(0), after = j >= 1 ? s[ju - 1] : spec::expr(0);
            out.push_back(select(axis == j, depth, select(spec::expr(j) < axis, before, after)));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(2)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (rank == 0) return {};
        // indices and depth: any numeric type (ONNX's T1, T2); depth a scalar or one value.
        if (!onnx11_all.contains(out)) return {};
        return {{onnx11_numeric.members(), {rank - 1}}, {onnx11_numeric.members(), {0, 1}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    /// The output shape, and per output element (row-major) whether it holds
    /// values[1] (on) rather than values[0] (off).
    struct layout {
        shape_type shape;
        std::vector<bool> on;
    };
    static layout layout_of(const spec::context& c) {
        const auto depth = depth_of(c);
        const auto in_shape = c.input(0).shape();
        const auto axis = spec::normalize_axis(std::get<std::int64_t>(c.attributes().at("axis")), in_shape.size() + 1, op_type);
        layout l;
        l.shape = in_shape;
        l.shape.insert(l.shape.begin() + static_cast<std::ptrdiff_t>(axis), static_cast<std::size_t>(depth));
        const auto idx = c.input(0).to<double>();
        const std::size_t outer = element_count(std::span(in_shape).first(axis));
        const std::size_t inner = element_count(std::span(in_shape).subspan(axis));
        l.on.resize(element_count(l.shape));
        for (std::size_t o = 0; o < outer; ++o) {
            for (std::size_t d = 0; d < static_cast<std::size_t>(depth); ++d) {
                for (std::size_t i = 0; i < inner; ++i) {
                    double want = std::trunc(idx.data()[o * inner + i]);
                    if (want < 0) want += static_cast<double>(depth);
                    l.on[(o * static_cast<std::size_t>(depth) + d) * inner + i] = want == static_cast<double>(d);
                }
            }
        }
        return l;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto l = layout_of(c);
        auto out = tensor::zeros(c.input_dtype(2), l.shape);
        out.visit([&](auto v) {
            using T = typename decltype(v)::value_type;
            const auto vals = c.input(2).values<T>();
            for (std::size_t f = 0; f < v.size(); ++f) v[f] = l.on[f] ? vals[1] : vals[0];
        });
        return detail::single_output(std::move(out));
    }
    /// values only (when floating): indices and depth pick positions, which
    /// is piecewise constant in them.
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(2)).is_floating) return {};
        return {2};
    }
    /// The kernel on AD scalar S: each output element is values[0] or
    /// values[1]; non-floating values have no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(2)).is_floating) return {array<S>{}};
        const auto l = layout_of(c);
        auto y = array<S>::from_shape(l.shape);
        for (std::size_t f = 0; f < y.size(); ++f) y.data()[f] = x[2].data()[l.on[f] ? 1 : 0];
        return {y};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .before_solving(1, [](rng& g, const spec::context& c) {  // depth: a small count
                auto t = tensor::zeros(dtype::i64, g.bernoulli(0.5) ? shape_type{} : shape_type{1});
                t.values<std::int64_t>()[0] = g.integer(1, 8);
                return t.cast(c.input_dtype(1));
            })
            .after_solving(0, [](rng& g, const spec::context& c, dtype d, const shape_type& s) {
                const double depth = static_cast<double>(depth_of(c));  // indices in [-depth, depth]: some miss
                return spec::random_values(g, d, s, -depth, depth + 1);
            });
    }
};

struct top_k_attr {
    std::int64_t axis = -1;
    std::int64_t largest = 1;
    std::int64_t sorted = 1;
};

/// TopK(X, K): the K largest (or smallest) elements along axis and their
/// indices; ties keep the lower index first (ONNX's stable rule). Results
/// are always sorted, which also satisfies sorted=0.
struct TopK {
    static constexpr std::string_view op_type = "TopK";
    static constexpr int opset = 11;
    using attributes = top_k_attr;
    static constexpr spec::dtype_set types = spec::types::ieee_floating | spec::types::integers;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"X", types, {1, 8}}, {"K", spec::types::int64, {1, 1}, "I"}}};
    static constexpr std::array<spec::value_spec, 2> outputs{{{"Values", types}, {"Indices", spec::types::int64, {}, "I"}}};
    /// X's dims with the one at `axis` (symbolic, possibly negative) replaced by K.
    static std::vector<spec::expr> with_k(const spec::context& c) {
        auto s = c.shape(0);
        const auto r = static_cast<std::int64_t>(s.size());
        const auto axis = c.attr("axis");
        const auto k = c.value(1, 0);
        for (std::size_t a = 0; a < s.size(); ++a) {
            const auto ai = static_cast<std::int64_t>(a);
            s[a] = select(axis == ai || axis == ai - r, k, s[a]);
        }
        return s;
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto r = static_cast<std::int64_t>(c.rank(0));
        const auto axis = c.attr("axis");
        std::vector<spec::constraint> out{{axis >= -r && axis < r, "axis in [-rank, rank)"},
                                          {c.dim(1, 0) == 1, "K holds one value"}};
        if (c.element_count(1) == 1) {
            const auto k = c.value(1, 0);
            auto dim = c.dim(0, 0);
            for (std::size_t a = 1; a < c.rank(0); ++a) dim = select(axis == static_cast<std::int64_t>(a) || axis == static_cast<std::int64_t>(a) - r, c.dim(0, a), dim);
            out.push_back({k >= 0 && k <= dim, "0 <= K <= X.shape[axis]"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto s = with_k(c);
        return {s, s};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0), dtype::i64}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    /// Values and Indices of the k largest (or smallest) elements of x along axis.
    template <class T>
    static std::pair<array<T>, array<std::int64_t>> compute(const array<T>& x, std::size_t axis, std::size_t k,
                                                            const attributes& a) {
        static_assert(spec::dtype_accepted<TopK, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        if (axis >= s.size() || k > s[axis]) {
            throw shape_error(std::string(op_type), "axis must be < rank and K <= X.shape[axis]");
        }
        shape_type out_shape = s;
        out_shape[axis] = k;
        const auto st = detail::strides_of(s);
        const std::size_t n = s[axis], stride = st[axis];
        auto indices = array<std::int64_t>::from_shape(out_shape);
        const auto ost = detail::strides_of(out_shape);
        auto out = array<T>::from_shape(out_shape);
        std::vector<std::size_t> order(n);
        for (std::size_t base = 0; base < x.size(); ++base) {
            if ((base / stride) % n != 0) continue;
            std::iota(order.begin(), order.end(), std::size_t{0});
            std::stable_sort(order.begin(), order.end(), [&](std::size_t p, std::size_t q) {
                const T& xp = x.data()[base + p * stride];
                const T& xq = x.data()[base + q * stride];
                return a.largest != 0 ? xq < xp : xp < xq;
            });
            // Output line start: same outer/inner position with axis index 0.
            const std::size_t outer = base / (stride * n), inner = base % stride;
            const std::size_t obase = outer * ost[axis] * k + inner;
            for (std::size_t j = 0; j < k; ++j) {
                out.data()[obase + j * ost[axis]] = x.data()[base + order[j] * stride];
                indices.data()[obase + j * ost[axis]] = static_cast<std::int64_t>(order[j]);
            }
        }
        return {std::move(out), std::move(indices)};
    }
    static std::size_t k_of(const spec::context& c) {
        return static_cast<std::size_t>(c.input(1).values<std::int64_t>()[0]);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = spec::normalize_axis(a.axis, c.input(0).shape().size(), op_type);
        const auto k = k_of(c);
        return detail::dispatch<types, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            auto [values, indices] = compute<T>(c.input(0).as_array<T>(), axis, k, a);
            return std::vector<tensor>{tensor(values), tensor(indices)};
        });
    }
    /// The kernel on AD scalar S: Values carry the derivatives of the selected
    /// elements; Indices (int64) is a placeholder taken from run(). An integer
    /// X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = spec::normalize_axis(a.axis, c.input(0).shape().size(), op_type);
        const auto k = k_of(c);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}, array<S>{}};
        return {compute<S>(x[0], axis, k, a).first, array<S>{}};
    }
    /// The VJP of Values: each selected element gets its output's cotangent
    /// back (ad/op_derivatives.hpp). Indices has none.
    template <class V>
    static std::vector<array<V>> vjp(const spec::context& c, const std::vector<array<V>>& x,
                                     const std::vector<array<V>>& w) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = spec::normalize_axis(a.axis, c.input(0).shape().size(), op_type);
        const auto k = k_of(c);
        std::vector<array<V>> g{array<V>::from_shape(x[0].shape()), array<V>{}};
        std::fill(g[0].begin(), g[0].end(), V(0));
        const auto indices = compute<V>(x[0], axis, k, a).second;
        const auto* wy = detail::output_cotangent(op_type, w, 0, indices.shape());
        if (wy == nullptr) return g;
        // Values[outer, j, inner] is X[outer, indices[outer, j, inner], inner].
        const std::size_t n = x[0].shape()[axis], stride = detail::strides_of(shape_type(x[0].shape().begin(), x[0].shape().end()))[axis];
        for (std::size_t q = 0; q < indices.size(); ++q) {
            const std::size_t outer = q / (k * stride), inner = q % stride;
            const auto at = outer * n * stride + static_cast<std::size_t>(indices.data()[q]) * stride + inner;
            g[0].data()[at] += wy->data()[q];
        }
        return g;
    }
    // sorted=0 leaves the order of the k outputs to the implementation: such a case has no
    // single right answer to compare a backend with, so generated cases keep the default.
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(facts).flag("largest").omit("sorted").range(0, -50, 50); }
    /// Values: some of X's elements. Indices: in [0, n - 1] along the axis;
    /// when X is one value repeated, ties go to the lowest indices, so with
    /// k >= 1 every slice holds index 0 (Mod by those indices divides by 0).
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type> shapes) {
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        if (shapes.empty() || shapes[0].empty()) return {x.range_only(), spec::value_facts{}};
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        const std::size_t axis = spec::normalize_axis(a.axis, shapes[0].size(), op_type);
        const auto n = static_cast<double>(shapes[0][axis]);
        auto indices = spec::value_facts::within(0.0, std::max(n - 1.0, 0.0));
        const bool one_value = x.lo == x.hi && std::isfinite(x.lo);
        const bool some_k = in.size() > 1 && in[1].lo >= 1.0;
        if (one_value && some_k) indices.force(0.0);
        return {x.range_only(), indices};
    }
};

inline constexpr auto misc_ops = hana::tuple_t<Constant, CastLike, Dropout, CumSum, EyeLike, OneHot, TopK>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::constant_attr, value, value_float, value_floats, value_int, value_ints,
                        value_string, value_strings);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::dropout_attr, seed);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::cumsum_attr, exclusive, reverse);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::eye_like_attr, dtype, k);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::one_hot_attr, axis);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::top_k_attr, axis, largest, sorted);
