// tensoracle: ConstantOfShape (a tensor of a given shape filled with one value).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct constant_of_shape_attr {
    tensor value = tensor::zeros(dtype::f32, {1});
};

/// ConstantOfShape-9(input): a tensor of shape `input` (int64, empty = scalar)
/// filled with the one element of attribute `value` (default float32 0); the
/// output dtype is value's dtype.
struct ConstantOfShape {
    static constexpr std::string_view op_type = "ConstantOfShape";
    static constexpr int opset = 9;
    using attributes = constant_of_shape_attr;
    static constexpr spec::dtype_set value_types = spec::dtypes_of(dtype::f16, dtype::f32, dtype::f64, dtype::i8, dtype::i16, dtype::i32,
                                                                   dtype::i64, dtype::u8, dtype::boolean);
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", value_types, {}, "T2"}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        std::vector<spec::constraint> out{
            shape_util::concrete_fact(a.value.size() == 1, "value holds exactly one element"),
            shape_util::concrete_fact(value_types.contains(a.value.element_dtype()),
                                  "value's dtype is one of " + value_types.to_string() + " (got " + std::string(name(a.value.element_dtype())) + ")")};
        const auto v = c.values(0);
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "input[" + std::to_string(i) + "] >= 0"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.values(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        return {spec::parse_attributes<attributes>(c.attributes(), op_type).value.element_dtype()};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t) {
        if (!value_types.contains(out)) return {};
        return {{{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// The typed kernel: T is the output (value) type; the shape is int64.
    template <class T>
    static array<T> compute(std::span<const std::int64_t> shape, T value) {
        static_assert(element_type<T> && value_types.contains(dtype_of<T>),
                      "ConstantOfShape: T is the element type of `value` and must be one of its allowed dtypes");
        shape_type s;
        for (const auto v : shape) s.push_back(shape_util::to_dim(v, op_type, "a shape value"));
        auto y = array<T>::from_shape(s);
        const std::size_t n = element_count(s, op_type);
        std::fill(y.data(), y.data() + n, value);
        return y;
    }
    // Not differentiable: the only input is an int64 shape; the fill value is an attribute, not an input.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (a.value.size() != 1) throw error(op_type, "value must hold exactly one element, got " + std::to_string(a.value.size()));
        const auto shape = shape_util::int_values(c.input(0), op_type);
        return detail::single_output(detail::dispatch<value_types>(a.value.element_dtype(), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(shape, a.value.values<T>()[0]));
        }));
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.tensor_attribute(
            "value",
            [](rng& g, std::optional<dtype> d, const std::optional<shape_type>&) {
                return spec::random_values(g, d ? *d : detail::pick_dtype(g, value_types), {1}, -9, 9);
            },
            0.7)
            .facts([](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type>) {
                // Every element is `value` (0 when not given), whatever the shape input.
                double v = 0.0;
                if (const auto it = attrs.find("value"); it != attrs.end()) {
                    if (const auto* t = std::get_if<tensor>(&it->second); t != nullptr && t->size() == 1) {
                        v = t->to<double>().data()[0];
                    }
                }
                return std::vector<spec::value_facts>{spec::value_facts::constant(v)};
            });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::constant_of_shape_attr, value);
