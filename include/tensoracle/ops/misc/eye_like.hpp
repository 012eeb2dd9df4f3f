// tensoracle: EyeLike (a 2-D tensor of the input's shape with ones on diagonal k).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct eye_like_attr {
    std::optional<std::int64_t> dtype;
    std::int64_t k = 0;
};

/// EyeLike(input): a 2-D tensor of input's shape with ones on diagonal k.
// Not differentiable: the output is 0/1 by position; the input gives only its shape.
struct EyeLike : spec::shape_of_input<0> {
    static constexpr std::string_view op_type = "EyeLike";
    static constexpr int opset = 9;
    using attributes = eye_like_attr;
    static constexpr spec::dtype_set types = spec::types::ieee_floating | spec::types::integers | spec::types::boolean;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", types, {2, 2}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", types, {2, 2}, "T2"}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
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

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::eye_like_attr, dtype, k);
