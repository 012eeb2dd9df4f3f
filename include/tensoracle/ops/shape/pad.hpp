// tensoracle: Pad (each axis padded or cropped: constant, edge or reflect).
//
// Semantics chosen where ONNX leaves them open: negative pads crop; reflect/edge
// read the original input (the index map is i = o - pad_begin, then reflected /
// clamped at the input borders); reflect needs pads <= dim - 1 (as onnxruntime),
// edge needs dim >= 1 where it pads.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct pad_attr {
    std::string mode = "constant";
};

/// Pad-13(data, pads, constant_value?): pads = [x1_begin, ..., xn_begin,
/// x1_end, ..., xn_end]; negative pads crop. Output index o reads input
/// index i = o - begin: constant fills outside [0, dim); edge clamps to the
/// border; reflect mirrors without repeating the border (needs every pad <=
/// dim - 1, as onnxruntime). constant_value (a scalar, default 0) is used only
/// in constant mode.
struct Pad : spec::dtype_of_input<0> {
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
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}, {{out}, {0, 1}}};  // constant_value: a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> pads, T value, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Pad, T>::value);
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

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::pad_attr, mode);
