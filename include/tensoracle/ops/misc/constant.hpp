// tensoracle: Constant (a tensor given by its attribute: value, value_float(s) or value_int(s)).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::constant_attr, value, value_float, value_floats, value_int, value_ints,
                        value_string, value_strings);
