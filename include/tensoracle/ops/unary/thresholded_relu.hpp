// tensoracle: ThresholdedRelu (X where X > alpha, 0 elsewhere).
#pragma once

#include <string_view>
#include <utility>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/formulas.hpp"
#include "tensoracle/ops/unary/detail/unary_elementwise.hpp"

namespace tensoracle::ops {

namespace unary {

struct thresholded_relu_fn
    : formula::thresholded_relu,
      spec::elementwise_signature<"ThresholdedRelu", 10, types::ieee_floating, thresholded_relu_attr> {
    static constexpr double proxy_slope = 0.1;  // derivative is 0 at or below alpha
    // Y is 0 or above alpha: with alpha > 0 nothing lies in (0, alpha), which a
    // sampled image cannot see (Atanh of it is finite only at 0 when alpha >= 1).
    static void refine_facts(spec::value_facts& y, const attributes& a) {
        if (a.alpha > 0.0f && !y.in_gap(0.0)) y.gap = std::make_pair(0.0, static_cast<double>(a.alpha));
    }
};

}  // namespace unary

using ThresholdedRelu = unary_elementwise<unary::thresholded_relu_fn>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::thresholded_relu_attr, alpha);
