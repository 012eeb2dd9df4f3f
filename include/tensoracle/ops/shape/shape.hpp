// tensoracle: Shape (a slice of the input's dims as an int64 vector).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct shape_attr {
    std::int64_t start = 0;
    std::optional<std::int64_t> end;
};

/// Shape-15(data): dims[start:end] as int64; negative start/end count from
/// the end (+ rank), then both are clamped to [0, rank]; empty if end <= start.
struct Shape {
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
        static_assert(spec::dtype_accepted<Shape, T>::value);
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

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::shape_attr, start, end);
