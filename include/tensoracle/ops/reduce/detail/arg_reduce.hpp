// tensoracle: arg_reduce<Max>, the op spec of ArgMax (Max = true) and ArgMin (Max = false).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/reduce_util.hpp"
#include "tensoracle/ops/reduce/detail/replaces.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
struct arg_attr {
    std::int64_t axis = 0;
    std::int64_t keepdims = 1;
    std::int64_t select_last_index = 0;
};
}  // namespace reduce

/// ArgMax / ArgMin (13): the int64 index of the max / min along `axis`; the
/// first occurrence, or the last with select_last_index=1.
// Not differentiable: the only output is int64 indices.
template <bool Max>
struct arg_reduce {
    static constexpr std::string_view op_type = Max ? "ArgMax" : "ArgMin";
    static constexpr int opset = 13;
    using attributes = reduce::arg_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::numeric}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"reduced", spec::types::int64, {}, "tensor(int64)"}}};

    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto axis = c.attr("axis");
        std::vector<spec::constraint> out{detail::axis_in_range(axis, r, "axis"),
                                          detail::is_flag(c.attr("keepdims"), "keepdims"),
                                          detail::is_flag(c.attr("select_last_index"), "select_last_index")};
        for (std::size_t k = 0; k < r; ++k) {
            out.push_back({!detail::axis_is(axis, k, r) || c.dim(0, k) >= spec::expr(1),
                           "the reduced axis is not empty (axis " + std::to_string(k) + ")"});
        }
        return out;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const bool keep = spec::parse_attributes<attributes>(c.attributes(), op_type).keepdims != 0;
        return {detail::reduced_dims(c.shape(0), {c.attr("axis")}, keep, op_type)};
    }
    static std::vector<dtype> output_dtypes(const spec::context&) { return {dtype::i64}; }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (out != dtype::i64) return {};
        std::vector<std::size_t> ranks;
        if (rank >= 1) ranks.push_back(rank);  // keepdims=1
        ranks.push_back(rank + 1);             // keepdims=0
        return {{spec::types::numeric.members(), ranks}};
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<std::int64_t> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<arg_reduce, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        const std::size_t axis = spec::normalize_axis(a.axis, s.size(), op_type);
        if (a.keepdims != 0 && a.keepdims != 1) throw error(op_type, "keepdims must be 0 or 1");
        if (a.select_last_index != 0 && a.select_last_index != 1) throw error(op_type, "select_last_index must be 0 or 1");
        const auto sp = detail::split_at(s, axis);
        if (sp.n == 0) throw shape_error(op_type, "axis " + std::to_string(a.axis) + " is empty: there is no index to return");
        shape_type out_shape;
        for (std::size_t k = 0; k < s.size(); ++k) {
            if (k != axis) out_shape.push_back(s[k]);
            else if (a.keepdims != 0) out_shape.push_back(1);
        }
        auto y = array<std::int64_t>::from_shape(out_shape);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                std::size_t best = 0;
                for (std::size_t i = 1; i < sp.n; ++i) {
                    if (reduce::replaces<Max>(x.data()[sp.at(o, i, j)], x.data()[sp.at(o, best, j)], a.select_last_index != 0)) {
                        best = i;
                    }
                }
                y.data()[o * sp.inner + j] = static_cast<std::int64_t>(best);
            }
        }
        return y;
    }
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), a));
        }));
    }
    static spec::hints hints() {
        // Small integer ranges make ties likely, which exercises select_last_index.
        // Facts: indices in [0, n - 1] along the axis; all 0 when it has one element.
        return spec::hints{}.flag("keepdims").flag("select_last_index").range(0, -3, 3).facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                if (shapes.empty() || shapes[0].empty()) return std::vector<spec::value_facts>{spec::value_facts::constant(0.0)};
                const auto a = spec::parse_attributes<attributes>(attrs, op_type);
                const std::size_t axis = spec::normalize_axis(a.axis, shapes[0].size(), op_type);
                const auto n = static_cast<double>(shapes[0][axis]);
                return std::vector<spec::value_facts>{n <= 1.0 ? spec::value_facts::constant(0.0)
                                                               : spec::value_facts::within(0.0, n - 1.0)};
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::arg_attr, axis, keepdims, select_last_index);
