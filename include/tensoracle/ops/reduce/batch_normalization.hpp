// tensoracle: BatchNormalization (inference mode: per channel, (X - mean) / sqrt(var + epsilon) * scale + B).
//
// Semantics chosen where ONNX leaves it open (the family-wide notes: ops/reduce.hpp):
// - BatchNormalization: inference mode only (training_mode=1 throws
//   unsupported_error); momentum is accepted and ignored. X has rank >= 2 (N, C, ...).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/reduce_util.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace reduce {
struct batch_norm_attr {
    float epsilon = 1e-5f;
    float momentum = 0.9f;
    std::int64_t training_mode = 0;
};
}  // namespace reduce

/// BatchNormalization (15), inference mode:
/// Y = (X - input_mean[c]) / sqrt(input_var[c] + epsilon) * scale[c] + B[c], c = axis 1.
struct BatchNormalization : spec::like_input<0> {
    static constexpr std::string_view op_type = "BatchNormalization";
    static constexpr int opset = 15;
    using attributes = reduce::batch_norm_attr;
    static constexpr std::array<spec::value_spec, 5> inputs{{{"X", spec::types::floating, {2, 8}},
                                                             {"scale", spec::types::floating, {1, 1}, "T1"},
                                                             {"B", spec::types::floating, {1, 1}, "T1"},
                                                             {"input_mean", spec::types::floating, {1, 1}, "T2"},
                                                             {"input_var", spec::types::floating, {1, 1}, "T2"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", spec::types::floating}}};
    static constexpr std::array<std::string_view, 4> param_names{"scale", "B", "input_mean", "input_var"};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        // training_mode=1 is valid ONNX, just not implemented: run() throws
        // unsupported_error for it (conformance counts it as skipped).
        std::vector<spec::constraint> out;
        for (std::size_t i = 1; i < 5; ++i) {
            out.push_back({c.dim(i, 0) == c.dim(0, 1), std::string(param_names[i - 1]) + " has one value per channel (X axis 1)"});
        }
        return out;
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank < 2) return {};
        const auto f = spec::types::floating.members();
        return {{{out}, {rank}}, {f, {1}}, {f, {1}}, {f, {1}}, {f, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto eps = static_cast<double>(spec::parse_attributes<attributes>(attrs, op_type).epsilon);
        return {detail::hinge_rule("input_var + epsilon > 0", 4, [eps](double v) { return 1e-10 - (v + eps); })};
    }

    /// The typed kernel; the per-channel parameters come widened to double
    /// (exact for every floating dtype) and are used in the accumulator type.
    /// AD scalars take them as P = T, so that they carry derivatives too.
    template <class T, class P = double>
    static array<T> compute(const array<T>& x, const array<P>& scale, const array<P>& bias, const array<P>& input_mean,
                            const array<P>& var, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<BatchNormalization, T>::value);
        if (a.training_mode != 0) {
            throw unsupported_error(std::string(op_type), "training_mode=1 is not supported (inference mode only)");
        }
        if (x.dimension() < 2) throw shape_error(op_type, "X must have rank >= 2 (N, C, ...), got rank " + std::to_string(x.dimension()));
        const std::size_t ch = x.shape()[1];
        const std::array<const array<P>*, 4> params{&scale, &bias, &input_mean, &var};
        for (std::size_t p = 0; p < 4; ++p) {
            if (params[p]->dimension() != 1 || params[p]->shape()[0] != ch) {
                throw shape_error(op_type, std::string(param_names[p]) + " must have shape [" + std::to_string(ch) + "]");
            }
        }
        using A = detail::reduce_acc_t<T>;
        const auto sp = detail::split_at(shape_type(x.shape().begin(), x.shape().end()), 1);
        auto y = array<T>::from_shape(x.shape());
        const A eps = static_cast<A>(a.epsilon);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t c = 0; c < sp.n; ++c) {
                const A m = value_cast<A>(input_mean.data()[c]), s = value_cast<A>(scale.data()[c]),
                        b = value_cast<A>(bias.data()[c]);
                const A den = math::sqrt(value_cast<A>(var.data()[c]) + eps);
                for (std::size_t j = 0; j < sp.inner; ++j) {
                    const std::size_t f = sp.at(o, c, j);
                    y.data()[f] = value_cast<T>((value_cast<A>(x.data()[f]) - m) / den * s + b);
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
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).to<double>(), c.input(2).to<double>(),
                                     c.input(3).to<double>(), c.input(4).to<double>(), a));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return {compute<S, S>(x[0], x[1], x[2], x[3], x[4], a)};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .weights({1, 2, 3, 4})
            .real("epsilon", 1e-6, 1e-2, 0.3)
            .real("momentum", 0.5, 1.0, 0.3)
            .omit("training_mode")
            .range(1, 0.5, 2.0)
            .range(2, -1.0, 1.0)
            .range(3, -1.0, 1.0)
            .range(4, 0.1, 2.0);
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::batch_norm_attr, epsilon, momentum, training_mode);
