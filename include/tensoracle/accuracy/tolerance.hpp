// tensoracle: tolerance levels t in [-10, 0] per dtype (GraphNet, Appendix A).
#pragma once

#include <cmath>
#include <ostream>
#include <string>

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/error.hpp"

namespace tensoracle {

/// A closeness rule |actual - expected| <= atol + rtol * |expected|.
struct tolerance {
    double atol = 0.0;
    double rtol = 0.0;

    friend bool operator==(const tolerance&, const tolerance&) = default;
    friend std::ostream& operator<<(std::ostream& os, const tolerance& t) {
        return os << "atol=" << t.atol << ", rtol=" << t.rtol;
    }
};

/// A tolerance level t, turned into a tolerance per dtype by tolerance_level.
/// Lower is stricter; t = -5 is torch.testing.assert_close's default.
struct level {
    double t;
};

inline constexpr double strictest_level = -10.0;
inline constexpr double loosest_level = 0.0;

namespace detail {
/// lg(atol(t)) = k_atol * t and lg(rtol(t)) = k_rtol * t: a log-linear
/// interpolation from t = 0 (atol = rtol = 1) to torch's defaults at t = -5.
struct level_slopes {
    double k_atol;
    double k_rtol;
};
constexpr level_slopes level_slopes_of(dtype d) {
    switch (d) {
        case dtype::f16: return {1.0, 3.0 / 5.0};
        case dtype::bf16: return {1.0, 1.796 / 5.0};
        case dtype::f32: return {1.0, 5.886 / 5.0};
        case dtype::f64: return {7.0 / 5.0, 7.0 / 5.0};
        default: return {0.0, 0.0};
    }
}
}  // namespace detail

/// The GraphNet tolerance of level t for a runtime dtype. Integer and bool
/// dtypes get {0, 0}: they compare exactly at every level.
[[nodiscard]] inline tolerance tolerance_level(dtype d, double t) {
    if (!(t >= strictest_level && t <= loosest_level)) {
        throw error("tensoracle::tolerance_level",
                    "level t must lie in [-10, 0], got " + std::to_string(t));
    }
    if (!info(d).is_floating) return {0.0, 0.0};
    const auto k = detail::level_slopes_of(d);
    return {std::pow(10.0, k.k_atol * t), std::pow(10.0, k.k_rtol * t)};
}

/// Typed form: a tolerance level only makes sense for floating element types.
template <class T>
[[nodiscard]] tolerance tolerance_level(double t) {
    static_assert(floating_element<T>,
                  "tensoracle::tolerance_level<T>(t): T must be a floating element type (float16, bfloat16, float, "
                  "double); integer and bool tensors compare exactly");
    return tolerance_level(dtype_of<T>, t);
}

[[nodiscard]] inline tolerance resolve(const tolerance& tol, dtype) { return tol; }
[[nodiscard]] inline tolerance resolve(const level& lv, dtype d) { return tolerance_level(d, lv.t); }

}  // namespace tensoracle
