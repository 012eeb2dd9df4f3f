// tensoracle: finite differences, the AD-independent reference for
// derivatives. Functions are callables on flat vectors of a real type R
// (double or long double: evaluate after up-casting, so that truncation and
// rounding errors of the stencil stay below the tolerance being tested).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "tensoracle/core/error.hpp"

namespace tensoracle::ad {

/// Central stencils by order of accuracy: 2 (two points, h²), 4 (four points),
/// 6 (six points, Stan's choice for expect_ad).
enum class stencil { central2 = 2, central4 = 4, central6 = 6 };

/// How the step is chosen for one coordinate x: h = scale · max(1, |x|) when
/// relative (Stan: scale = eps^(1/7) for 6 points), h = scale when absolute.
struct step_policy {
    double scale = 1e-6;
    bool relative = true;
    [[nodiscard]] double step(double x) const { return relative ? scale * std::max(1.0, std::fabs(x)) : scale; }
};

struct fd_options {
    stencil kind = stencil::central2;
    step_policy step{};
    /// At a domain edge (the function throws or returns NaN on one side and
    /// not the other) fall back to a one-sided 3-point stencil on the good side.
    bool one_sided_at_edges = true;

    /// torch.autograd.gradcheck's choice: central differences, eps 1e-6.
    static fd_options torch() { return {stencil::central2, {1e-6, false}, true}; }
    /// Stan Math's: six points, h = eps^(1/7)·max(1,|x|) (about 5.7e-3 for double).
    static fd_options stan() {
        return {stencil::central6, {std::pow(std::numeric_limits<double>::epsilon(), 1.0 / 7.0), true}, true};
    }
};

/// Which stencil a directional derivative actually used.
enum class fd_side { central, forward, backward };

template <class R>
struct fd_result {
    std::vector<R> derivative;
    fd_side side = fd_side::central;
};

namespace detail {
// Weights of f(x + k·h) for the central stencils, k = ±1, ±2, ±3.
struct central_weights {
    std::array<int, 6> k{};
    std::array<double, 6> w{};
    int n = 0;
};
inline central_weights weights(stencil s) {
    switch (s) {
        case stencil::central2: return {{1, -1}, {0.5, -0.5}, 2};
        case stencil::central4: return {{1, -1, 2, -2}, {8.0 / 12, -8.0 / 12, -1.0 / 12, 1.0 / 12}, 4};
        case stencil::central6:
            return {{1, -1, 2, -2, 3, -3}, {45.0 / 60, -45.0 / 60, -9.0 / 60, 9.0 / 60, 1.0 / 60, -1.0 / 60}, 6};
    }
    throw error("tensoracle::ad::finite_difference", "unknown stencil");
}

template <class R>
bool all_finite_or_inf(const std::vector<R>& v) {
    return std::none_of(v.begin(), v.end(), [](R x) { return std::isnan(x); });
}

/// f at x + t·u, or nothing when f throws or gives NaN there.
template <class R, class F>
bool probe(F& f, std::span<const R> x, std::span<const R> u, R t, std::vector<R>& out) {
    std::vector<R> p(x.begin(), x.end());
    for (std::size_t i = 0; i < p.size(); ++i) p[i] += t * u[i];
    try {
        out = f(std::span<const R>(p));
    } catch (const std::exception&) {
        return false;
    }
    return all_finite_or_inf(out);
}
}  // namespace detail

/// Directional derivative (d/dt) f(x + t·u) at t = 0 with step h along u.
/// f: std::vector<R>(std::span<const R>). Throws when f fails on both sides.
template <class R, class F>
[[nodiscard]] fd_result<R> fd_directional(F&& f, std::span<const R> x, std::span<const R> u, R h,
                                          const fd_options& o = {}) {
    const auto cw = detail::weights(o.kind);
    std::vector<std::vector<R>> ys(static_cast<std::size_t>(cw.n));
    bool ok = true;
    for (int j = 0; j < cw.n && ok; ++j) ok = detail::probe<R>(f, x, u, static_cast<R>(cw.k[static_cast<std::size_t>(j)]) * h, ys[static_cast<std::size_t>(j)]);
    fd_result<R> r;
    if (ok) {
        r.derivative.assign(ys[0].size(), R(0));
        for (int j = 0; j < cw.n; ++j) {
            const auto& y = ys[static_cast<std::size_t>(j)];
            if (y.size() != r.derivative.size()) {
                throw error("tensoracle::ad::fd_directional", "the function's output size changed between probes");
            }
            for (std::size_t i = 0; i < y.size(); ++i) r.derivative[i] += static_cast<R>(cw.w[static_cast<std::size_t>(j)]) * y[i];
        }
        for (auto& d : r.derivative) d /= h;
        return r;
    }
    if (!o.one_sided_at_edges) {
        throw error("tensoracle::ad::fd_directional", "the function is undefined (throws or NaN) next to the point");
    }
    // Second-order one-sided: (-3 f(0) + 4 f(h) - f(2h)) / 2h on the side where f is defined.
    std::vector<R> f0, f1, f2;
    for (const R sgn : {R(1), R(-1)}) {
        if (detail::probe<R>(f, x, u, R(0), f0) && detail::probe<R>(f, x, u, sgn * h, f1) &&
            detail::probe<R>(f, x, u, sgn * 2 * h, f2)) {
            r.derivative.resize(f0.size());
            for (std::size_t i = 0; i < f0.size(); ++i) r.derivative[i] = sgn * (-3 * f0[i] + 4 * f1[i] - f2[i]) / (2 * h);
            r.side = sgn > 0 ? fd_side::forward : fd_side::backward;
            return r;
        }
    }
    throw error("tensoracle::ad::fd_directional",
                "the function is undefined (throws or NaN) on both sides of the point at step " +
                    std::to_string(static_cast<double>(h)));
}

/// Directional derivative with the step from the policy: h = step(max |x_i|
/// over the coordinates u moves) / max |u_i|, so that no coordinate moves by
/// more than its own relative step.
template <class R, class F>
[[nodiscard]] fd_result<R> fd_directional(F&& f, std::span<const R> x, std::span<const R> u, const fd_options& o = {}) {
    double xmax = 0.0, umax = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (u[i] != 0) xmax = std::max(xmax, std::fabs(static_cast<double>(x[i])));
        umax = std::max(umax, std::fabs(static_cast<double>(u[i])));
    }
    if (umax == 0.0) {
        std::vector<R> y;
        if (!detail::probe<R>(f, x, u, R(0), y)) y = f(x);
        return {std::vector<R>(y.size(), R(0)), fd_side::central};
    }
    return fd_directional<R>(f, x, u, static_cast<R>(o.step.step(xmax) / umax), o);
}

/// The m×n Jacobian by finite differences, one coordinate at a time (each with
/// its own relative step). Row-major: J[i*n + j] = ∂f_i/∂x_j.
template <class R, class F>
[[nodiscard]] std::vector<R> fd_jacobian(F&& f, std::span<const R> x, const fd_options& o = {}) {
    const std::size_t n = x.size();
    std::vector<R> jac;
    std::size_t m = 0;
    std::vector<R> e(n, R(0));
    for (std::size_t j = 0; j < n; ++j) {
        e[j] = R(1);
        const auto col = fd_directional<R>(f, x, std::span<const R>(e), static_cast<R>(o.step.step(static_cast<double>(x[j]))), o);
        e[j] = R(0);
        if (j == 0) {
            m = col.derivative.size();
            jac.assign(m * n, R(0));
        }
        for (std::size_t i = 0; i < m; ++i) jac[i * n + j] = col.derivative[i];
    }
    return jac;
}

}  // namespace tensoracle::ad
