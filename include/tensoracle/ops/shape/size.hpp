// tensoracle: Size (the input's element count as an int64 scalar).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// Size-13(data): the element count as an int64 scalar.
struct Size {
    static constexpr std::string_view op_type = "Size";
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"size", spec::types::int64, {0, 0}, "T1"}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context&) { return {{}}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context&) { return {dtype::i64}; }
    // Facts: the element count, known once shapes are solved.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map&, std::span<const shape_type> shapes) {
                if (shapes.empty()) return std::vector<spec::value_facts>{spec::value_facts{}};
                double n = 1.0;
                for (const auto d : shapes[0]) n *= static_cast<double>(d);
                return std::vector<spec::value_facts>{spec::value_facts::constant(n)};
            });
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (out != dtype::i64 || rank != 0) return {};
        return {{spec::types::all.members(), shape_util::ranks_between(0, shape_detail::max_rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<std::int64_t> compute(const array<T>& x) {
        static_assert(spec::dtype_accepted<Size, T>::value);
        auto y = array<std::int64_t>::from_shape(shape_type{});
        y.data()[0] = static_cast<std::int64_t>(x.size());
        return y;
    }
    // Not differentiable: the output is the int64 element count, which no element value of the input changes.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>()));
        }));
    }
};

}  // namespace tensoracle::ops
