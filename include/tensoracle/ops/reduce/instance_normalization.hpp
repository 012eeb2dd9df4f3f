// tensoracle: InstanceNormalization (per (n, c) over the spatial axes: scale * (x - mean) / stddev + B).
//
// Semantics chosen where ONNX leaves it open (the family-wide notes: ops/reduce.hpp):
// - InstanceNormalization: X has rank >= 3 (N, C, D1, ...); statistics per
//   (n, c) over D1..Dk, population variance.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/reduce_util.hpp"
#include "tensoracle/ops/reduce/detail/normalization_groups.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
struct instance_norm_attr {
    float epsilon = 1e-5f;
};
}  // namespace reduce

/// InstanceNormalization (6): per (n, c), over the spatial axes 2..:
/// y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c] (population variance).
struct InstanceNormalization : spec::like_input<0> {
    static constexpr std::string_view op_type = "InstanceNormalization";
    static constexpr int opset = 6;
    using attributes = reduce::instance_norm_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"input", spec::types::ieee_floating, {3, 8}},
                                                             {"scale", spec::types::ieee_floating, {1, 1}},
                                                             {"B", spec::types::ieee_floating, {1, 1}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::ieee_floating}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return {{c.dim(1, 0) == c.dim(0, 1), "scale has one value per channel (input axis 1)"},
                {c.dim(2, 0) == c.dim(0, 1), "B has one value per channel (input axis 1)"}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank < 3) return {};
        return {{{out}, {rank}}, {{out}, {1}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto eps = static_cast<double>(spec::parse_attributes<attributes>(attrs, op_type).epsilon);
        return {{"variance + epsilon > 0 over each (n, c)", [eps](std::span<const tensor> in) {
                     return reduce::variance_loss(reduce::split_groups(in[0], 2, in[0].rank()), eps);
                 }}};
    }

    template <class T>
    static array<T> compute(const array<T>& x, const array<T>& scale, const array<T>& bias, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<InstanceNormalization, T>::value);
        if (x.dimension() < 3) {
            throw shape_error(op_type, "input must have rank >= 3 (N, C, D1, ...), got rank " + std::to_string(x.dimension()));
        }
        const std::size_t ch = x.shape()[1];
        for (const auto* p : {&scale, &bias}) {
            if (p->dimension() != 1 || p->shape()[0] != ch) {
                throw shape_error(op_type, std::string(p == &scale ? "scale" : "B") + " must have shape [" + std::to_string(ch) + "]");
            }
        }
        using A = detail::reduce_acc_t<T>;
        const auto sp = detail::split_at(shape_type(x.shape().begin(), x.shape().end()), 1);
        const std::size_t n = sp.inner;  // spatial elements per (n, c)
        const A eps = static_cast<A>(a.epsilon);
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t c = 0; c < ch; ++c) {
                const std::size_t base = sp.at(o, c, 0);
                A mu = 0, var = 0;
                for (std::size_t j = 0; j < n; ++j) mu += value_cast<A>(x.data()[base + j]);
                mu /= static_cast<A>(n);
                for (std::size_t j = 0; j < n; ++j) {
                    const A dlt = value_cast<A>(x.data()[base + j]) - mu;
                    var += dlt * dlt;
                }
                var /= static_cast<A>(n);
                const A den = math::sqrt(var + eps);
                const A s = value_cast<A>(scale.data()[c]), b = value_cast<A>(bias.data()[c]);
                for (std::size_t j = 0; j < n; ++j) {
                    y.data()[base + j] = value_cast<T>(s * (value_cast<A>(x.data()[base + j]) - mu) / den + b);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>(), c.input(2).as_array<T>(), a));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return {compute<S>(x[0], x[1], x[2], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.weights({1, 2}).real("epsilon", 1e-6, 1e-2, 0.3).range(1, 0.5, 2.0).range(2, -1.0, 1.0).facts(facts);
    }
    /// Y: unknown, except over one spatial element per channel, where x - mean is 0 and Y is B.
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map&,
                                                std::span<const shape_type> shapes) {
        if (in.size() < 3 || shapes.empty() || shapes[0].size() < 3) return {spec::value_facts{}};
        std::size_t spatial = 1;
        for (std::size_t i = 2; i < shapes[0].size(); ++i) spatial *= shapes[0][i];
        return {spatial == 1 ? in[2].range_only() : spec::value_facts{}};
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::instance_norm_attr, epsilon);
