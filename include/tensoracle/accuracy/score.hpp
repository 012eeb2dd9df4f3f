// tensoracle: GraphNet's Speedup Score S_t and Error-aware Speedup Score ES_t.
#pragma once

#include <cmath>
#include <optional>
#include <span>
#include <string>

#include "tensoracle/accuracy/outcome.hpp"
#include "tensoracle/core/error.hpp"

namespace tensoracle {

/// One benchmark sample: how it ended and, if it ran, its speedup over the
/// reference and the strictest tolerance level its output passes.
struct benchmark_sample {
    outcome failure = outcome::pass;  // pass or accuracy: it ran; runtime_crash, compile_failure: it did not
    double speedup = 1.0;             // reference time / compiled time
    std::optional<int> passing_level;  // comparison_report::min_passing_level()
};

struct score_options {
    double p = 0.1;  // slowdown penalty exponent, in (0, 1)
    double b = 0.1;  // failure penalty, in (0, 1)
};

/// The macro components of Eq. 1/3 and the score; alpha and beta are 1 and
/// eta 0 when there is nothing to average (as in GraphNet's tables).
struct score_components {
    double alpha = 1.0;   // geometric mean speedup of correct samples
    double beta = 1.0;    // geometric mean speedup of correct slowdowns
    double lambda = 0.0;  // fraction of correct samples
    double eta = 0.0;     // fraction of correct samples that are slowdowns
    double gamma = 0.0;   // penalty of the failed samples (b for t <= 0)
    double score = 0.0;   // S_t for t <= 0, ES_t for any t
};

namespace detail {
inline void check_score_inputs(std::span<const benchmark_sample> samples, const score_options& o) {
    if (samples.empty()) throw error("tensoracle::speedup_score", "needs at least one sample");
    if (!(o.p > 0.0 && o.p < 1.0) || !(o.b > 0.0 && o.b < 1.0)) {
        throw error("tensoracle::speedup_score", "p and b must lie in (0, 1), got p=" + std::to_string(o.p) +
                                                      ", b=" + std::to_string(o.b));
    }
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const auto& s = samples[i];
        const bool ran = s.failure == outcome::pass || s.failure == outcome::accuracy;
        if (ran && !(s.speedup > 0.0 && std::isfinite(s.speedup))) {
            throw error("tensoracle::speedup_score", "sample " + std::to_string(i) +
                                                          " ran but its speedup is not a finite positive number");
        }
    }
}

/// Error code of a sample at level t (0 when correct). Tolerance levels above
/// 0 do not loosen numeric checks; they forgive error codes instead.
inline int error_code_at(const benchmark_sample& s, double t) {
    if (s.failure == outcome::runtime_crash || s.failure == outcome::compile_failure) return error_code(s.failure);
    const double numeric_t = t < 0.0 ? t : 0.0;
    return (s.passing_level && *s.passing_level <= numeric_t) ? 0 : 1;
}
}  // namespace detail

/// Eq. 1 / Eq. 3 from its macro components: alpha^lambda * beta^(lambda eta p) * gamma^(1-lambda).
[[nodiscard]] inline double score_from_components(double alpha, double beta, double lambda, double eta, double gamma,
                                                  double p) {
    return std::pow(alpha, lambda) * std::pow(beta, lambda * eta * p) * std::pow(gamma, 1.0 - lambda);
}

/// Error-aware rectified speedup of one sample at level t (Eqs. 4 and 10):
/// s if correct and s >= 1, s^(p+1) if correct and s < 1, otherwise b, or 1
/// once t >= the sample's error code.
[[nodiscard]] inline double rectified_speedup(const benchmark_sample& s, double t, const score_options& o = {}) {
    detail::check_score_inputs(std::span(&s, 1), o);
    const int c = detail::error_code_at(s, t);
    if (c == 0) return s.speedup >= 1.0 ? s.speedup : std::pow(s.speedup, o.p + 1.0);
    return t < c ? o.b : 1.0;
}

/// S_t (t <= 0) or ES_t (any t) over samples, with its components.
[[nodiscard]] inline score_components speedup_score(std::span<const benchmark_sample> samples, double t,
                                                    const score_options& o = {}) {
    detail::check_score_inputs(samples, o);
    double log_all = 0.0, log_slow = 0.0, log_penalty = 0.0;
    std::size_t correct = 0, slow = 0, failed = 0;
    for (const auto& s : samples) {
        const int c = detail::error_code_at(s, t);
        if (c == 0) {
            ++correct;
            log_all += std::log(s.speedup);
            if (s.speedup < 1.0) {
                ++slow;
                log_slow += std::log(s.speedup);
            }
        } else {
            ++failed;
            log_penalty += t < c ? std::log(o.b) : 0.0;
        }
    }
    score_components r;
    const double n = static_cast<double>(samples.size());
    r.lambda = static_cast<double>(correct) / n;
    if (correct != 0) {
        r.alpha = std::exp(log_all / static_cast<double>(correct));
        r.eta = static_cast<double>(slow) / static_cast<double>(correct);
    }
    if (slow != 0) r.beta = std::exp(log_slow / static_cast<double>(slow));
    r.gamma = failed != 0 ? std::exp(log_penalty / static_cast<double>(failed)) : (t < 1.0 ? o.b : 1.0);
    r.score = score_from_components(r.alpha, r.beta, r.lambda, r.eta, r.gamma, o.p);
    return r;
}

}  // namespace tensoracle
