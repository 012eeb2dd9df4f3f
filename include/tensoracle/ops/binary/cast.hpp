// tensoracle: Cast (input converted to the dtype named by attribute `to`).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct cast_attr {
    std::int64_t to = 1;
    static constexpr std::array<std::string_view, 1> required{"to"};
};

/// Cast(input) to the dtype named by attribute `to` (value_cast semantics:
/// float->int truncates and saturates, NaN->0; int->int wraps). ONNX leaves a
/// float outside the integer target's range undefined: the domain keeps it in.
struct Cast : spec::shape_of_input<0> {
    static constexpr std::string_view op_type = "Cast";
    static constexpr int opset = 13;
    using attributes = cast_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all, {}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {}, "T2"}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        return {dtype_from_onnx(static_cast<int>(spec::parse_attributes<attributes>(c.attributes(), op_type).to))};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype, std::size_t rank) {
        return {{spec::types::all.members(), {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& a) {
        const auto to = dtype_from_onnx(static_cast<int>(spec::parse_attributes<attributes>(a, op_type).to));
        auto rule = detail::cast_range_rule([to](std::span<const tensor>) { return to; });
        // For the generator: the range, where it knows the input is floating (integer inputs wrap, no rule).
        if (const auto b = detail::integer_cast_bounds(to)) {
            rule.elementwise_input = 0;
            rule.elementwise_at_limit = [lo = b->first, hi = b->second](double x, double) { return std::max(x - hi, lo - x); };
        }
        return {rule};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return {c.input(0).cast(output_dtypes(c)[0])}; }
    /// Only float -> float casts have a derivative (1: the cast is the identity up to rounding).
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (info(c.input_dtype(0)).is_floating && info(output_dtypes(c)[0]).is_floating) return {0};
        return {};
    }
    /// float -> float: the input plus the constant rounding error, so that values are run()'s and the
    /// derivative is 1. Integer or bool -> float: constants. -> integer or bool: the placeholder.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const dtype to = output_dtypes(c)[0];
        if (!info(to).is_floating) return {array<S>{}};
        const auto rounded = c.input(0).cast(to).to<double>();
        auto y = array<S>::from_shape(rounded.shape());
        for (std::size_t i = 0; i < y.size(); ++i) {
            const double r = rounded.data()[i];
            if (!info(c.input_dtype(0)).is_floating) {
                y.data()[i] = value_cast<S>(r);
                continue;
            }
            const S& v = x[0].data()[i];
            const double p = static_cast<double>(primal(v));
            // r - p is exact (Sterbenz: r is p rounded); equal values, infinities and NaN pass v unchanged.
            y.data()[i] = (r == p || std::isnan(r)) ? v : v + value_cast<S>(r - p);
        }
        return {y};
    }
    // Facts: to a floating dtype they carry over (0 and 1 stay 0 and 1; ranges hold
    // up to rounding); to an integer one they are truncated ([0.2, 0.8] becomes 0);
    // to bool, x != 0. The generator narrows them to the target dtype's range.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(cast_facts).dtype_attribute("to").range(0, -100, 100);
    }
    static std::vector<spec::value_facts> cast_facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                     std::span<const shape_type>) {
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        const auto to = dtype_from_onnx(static_cast<int>(spec::parse_attributes<attributes>(attrs, op_type).to));
        if (info(to).is_floating) return {x};
        if (to == dtype::boolean) return {spec::facts::image(x, [](double v) { return v != 0.0 ? 1.0 : 0.0; })};
        return {spec::facts::image(x, [](double v) { return std::trunc(v); })};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::cast_attr, to);
