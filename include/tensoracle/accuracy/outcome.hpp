// tensoracle: outcome classes of one differential test, with GraphNet's error
// codes (1 accuracy, 2 runtime crash, 3 compile failure).
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "tensoracle/accuracy/compare.hpp"
#include "tensoracle/accuracy/tolerance.hpp"

namespace tensoracle {

/// The class of a result; the value is GraphNet's error code.
enum class outcome : int { pass = 0, accuracy = 1, runtime_crash = 2, compile_failure = 3 };

/// Why a result failed; the accuracy class splits into four reasons.
enum class failure_reason {
    none,
    value_mismatch,    // finite values beyond tolerance
    nan_inf_mismatch,  // NaN/Inf at different positions
    shape_mismatch,
    dtype_mismatch,
    runtime_crash,
    compile_failure,
};

[[nodiscard]] constexpr std::string_view to_string(outcome o) noexcept {
    switch (o) {
        case outcome::pass: return "pass";
        case outcome::accuracy: return "accuracy";
        case outcome::runtime_crash: return "runtime crash";
        case outcome::compile_failure: return "compile failure";
    }
    return "unknown outcome";
}

[[nodiscard]] constexpr std::string_view to_string(failure_reason r) noexcept {
    switch (r) {
        case failure_reason::none: return "none";
        case failure_reason::value_mismatch: return "value mismatch";
        case failure_reason::nan_inf_mismatch: return "NaN/Inf mismatch";
        case failure_reason::shape_mismatch: return "shape mismatch";
        case failure_reason::dtype_mismatch: return "dtype mismatch";
        case failure_reason::runtime_crash: return "runtime crash";
        case failure_reason::compile_failure: return "compile failure";
    }
    return "unknown reason";
}

[[nodiscard]] constexpr int error_code(outcome o) noexcept { return static_cast<int>(o); }

inline std::ostream& operator<<(std::ostream& os, outcome o) { return os << to_string(o); }
inline std::ostream& operator<<(std::ostream& os, failure_reason r) { return os << to_string(r); }

/// The judged result of one test: class, reason and a one-line detail.
struct verdict {
    outcome kind = outcome::pass;
    failure_reason reason = failure_reason::none;
    std::string detail;

    [[nodiscard]] bool passed() const noexcept { return kind == outcome::pass; }
    [[nodiscard]] int error_code() const noexcept { return tensoracle::error_code(kind); }
};

/// Judges a comparison: shape, then dtype, then NaN/Inf positions, then values.
[[nodiscard]] inline verdict judge(const comparison_report& r, const tolerance& tol) {
    if (!r.same_shape()) {
        return {outcome::accuracy, failure_reason::shape_mismatch,
                "actual " + to_string(r.actual_shape()) + " vs expected " + to_string(r.expected_shape())};
    }
    if (!r.same_dtype() && r.options().require_same_dtype) {
        return {outcome::accuracy, failure_reason::dtype_mismatch,
                "actual " + std::string(name(r.actual_dtype())) + " vs expected " +
                    std::string(name(r.expected_dtype()))};
    }
    if (!r.nan_inf_agree()) {
        return {outcome::accuracy, failure_reason::nan_inf_mismatch,
                std::to_string(r.nan_mismatches()) + " NaN and " + std::to_string(r.inf_mismatches()) +
                    " Inf positions disagree"};
    }
    if (!r.passes(tol)) {
        return {outcome::accuracy, failure_reason::value_mismatch,
                std::to_string(r.mismatch_count(tol)) + " of " + std::to_string(r.size()) + " elements beyond " +
                    (std::ostringstream() << tol).str()};
    }
    return {};
}
[[nodiscard]] inline verdict judge(const comparison_report& r, const level& lv) {
    return judge(r, resolve(lv, r.actual_dtype()));
}

/// Verdicts for tests that never produced an output.
[[nodiscard]] inline verdict runtime_crash(std::string what) {
    return {outcome::runtime_crash, failure_reason::runtime_crash, std::move(what)};
}
[[nodiscard]] inline verdict compile_failure(std::string what) {
    return {outcome::compile_failure, failure_reason::compile_failure, std::move(what)};
}

}  // namespace tensoracle
