// tensoracle: Dropout (inference mode: output = data, mask all true).
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

struct dropout_attr {
    std::optional<std::int64_t> seed;
};

/// Dropout in inference mode: output = data, mask = all true. Training mode
/// with a nonzero ratio is random and not supported (an error says so).
struct Dropout {
    static constexpr std::string_view op_type = "Dropout";
    static constexpr int opset = 13;
    using attributes = dropout_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"data", spec::types::floating},
                                                             {"ratio", spec::types::ieee_floating, {0, 0}, "T1", true},
                                                             {"training_mode", spec::types::boolean, {0, 0}, "T2", true}}};
    static constexpr std::array<spec::value_spec, 2> outputs{
        {{"output", spec::types::floating}, {"mask", spec::types::boolean, {}, "T2"}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0), c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0), dtype::boolean}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out)) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    static void check_inference(const spec::context& c) {
        const bool training = c.has_input(2) && c.input(2).values<bool>()[0];
        const double ratio = c.has_input(1) ? c.input(1).value_as_double(0) : 0.5;
        if (training && ratio != 0.0) {
            throw unsupported_error(std::string(op_type), "training mode with a nonzero ratio is random and not supported");
        }
    }
    /// data only: ratio and training_mode select the mode, they are not data.
    static std::vector<std::size_t> differentiable_inputs(const spec::context&) { return {0}; }
    /// The kernel on AD scalar S: the identity on data; mask (bool) is a placeholder.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        check_inference(c);
        return {x[0], array<S>{}};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        check_inference(c);
        auto mask = array<bool>::from_shape(c.input(0).shape());
        std::fill(mask.begin(), mask.end(), true);
        return {c.input(0), tensor(mask)};
    }
    template <int = 0>
    static spec::hints hints() {
        // Inference mode: ratio in [0, 0.9), training_mode false (training is random, not supported).
        return spec::hints{}
            .omit("seed")
            .after_solving(1, [](rng& g, const spec::context&, dtype d, const shape_type& s) {
                return spec::random_values(g, d, s, 0.0, 0.9);
            })
            .after_solving(2, [](rng&, const spec::context&, dtype d, const shape_type& s) { return tensor::zeros(d, s); });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::dropout_attr, seed);
