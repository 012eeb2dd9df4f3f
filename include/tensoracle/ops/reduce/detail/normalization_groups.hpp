// tensoracle: the domain helpers of the normalizations: reduce::variance_loss
// (LayerNormalization, InstanceNormalization) and reduce::split_groups (those two and
// LpNormalization).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "tensoracle/core/tensor.hpp"
#include "tensoracle/ops/detail/reduce_util.hpp"

namespace tensoracle::ops {

namespace reduce {
/// Loss of "variance + epsilon > 0" for a list of groups.
inline double variance_loss(const std::vector<std::vector<double>>& groups, double eps) {
    double loss = 0.0;
    for (const auto& g : groups) {
        if (g.empty()) continue;  // no element is normalized
        double m = 0.0, v = 0.0;
        for (const double x : g) m += x;
        m /= static_cast<double>(g.size());
        for (const double x : g) v += (x - m) * (x - m);
        v /= static_cast<double>(g.size());
        const double h = 1e-10 - (v + eps);
        loss += std::isnan(h) ? 1.0 : std::max(h, 0.0);
    }
    return loss;
}

/// The values of x (in double) grouped by their indices outside the axes
/// [from_axis, to_axis_excl): one group per normalized row / channel / vector.
inline std::vector<std::vector<double>> split_groups(const tensor& x, std::size_t from_axis, std::size_t to_axis_excl) {
    const auto& s = x.shape();
    std::vector<bool> mask(s.size(), false);
    for (std::size_t k = from_axis; k < to_axis_excl && k < s.size(); ++k) mask[k] = true;
    const auto v = x.to<double>();
    return detail::reduce_groups<double>(std::span<const double>(v.data(), v.size()), s, mask);
}
}  // namespace reduce

}  // namespace tensoracle::ops
