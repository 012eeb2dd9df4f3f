// tensoracle: the in-bounds kernel positions of a sliding window along one axis
// (taps_in_bounds, axis_taps), used by Conv, ConvTranspose, MaxPool and AveragePool.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>


namespace tensoracle::ops {

namespace nn {
/// The kernel positions k in [0, ks) whose tap a + d * k lies in [0, limit):
/// [first, end) (empty when none). d >= 1.
inline std::pair<std::int64_t, std::int64_t> taps_in_bounds(std::int64_t a, std::int64_t d, std::int64_t ks,
                                                            std::int64_t limit) {
    const std::int64_t first = a >= 0 ? 0 : (-a + d - 1) / d;
    const std::int64_t end = std::min(ks, limit - 1 - a < 0 ? 0 : (limit - 1 - a) / d + 1);
    return {first, end};
}

/// The in-bounds taps of axis i summed over its window starts: for Conv and
/// the pools the windows of the outputs over X, for ConvTranspose those of
/// the inputs over Y. A window's in-bounds taps form a box (one range per
/// axis), so the taps of all windows are the product of these sums.
inline double axis_taps(std::int64_t windows, std::int64_t stride, std::int64_t pad_begin, std::int64_t dilation,
                        std::int64_t kernel, std::int64_t limit) {
    double sum = 0.0;
    for (std::int64_t o = 0; o < windows; ++o) {
        const auto [first, end] = taps_in_bounds(o * stride - pad_begin, dilation, kernel, limit);
        sum += static_cast<double>(std::max<std::int64_t>(end - first, 0));
    }
    return sum;
}
}  // namespace nn

}  // namespace tensoracle::ops
