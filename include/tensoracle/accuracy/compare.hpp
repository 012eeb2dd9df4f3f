// tensoracle: compare an actual tensor with an expected one, once, into a
// report that any tolerance can then judge without recomputing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <xtensor/xexpression.hpp>

#include "tensoracle/accuracy/tolerance.hpp"
#include "tensoracle/accuracy/ulp.hpp"
#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/core/value_cast.hpp"

namespace tensoracle {

struct compare_options {
    /// NaN in both tensors at the same position counts as agreement.
    bool nan_equal = true;
    /// Equal infinities (same sign) at the same position count as agreement.
    bool inf_equal = true;
    /// A dtype mismatch fails the comparison (values are still compared,
    /// widened to double, so the report says how far apart they are).
    bool require_same_dtype = true;
    /// How many worst elements describe() lists.
    std::size_t worst_count = 5;
};

/// Summary of one error measure over the elements where both values are finite.
/// median averages the two middle values; p99 is the nearest-rank 99th percentile.
struct error_stats {
    double max = 0.0;
    double mean = 0.0;
    double median = 0.0;
    double p99 = 0.0;
};

/// One element that breaks (or comes closest to breaking) a tolerance.
struct element_mismatch {
    std::size_t flat_index = 0;
    shape_type index;
    double actual = 0.0;
    double expected = 0.0;
    double abs_error = 0.0;
    double rel_error = 0.0;
    std::optional<std::uint64_t> ulp;  // in the actual's dtype; floating only
    bool nan_inf_mismatch = false;
};

class comparison_report;

namespace detail {
comparison_report compare_tensors(const tensor& actual, const tensor& expected, const compare_options& options);
}

/// Everything one comparison found. Built by compare(); judged by passes().
class comparison_report {
public:
    [[nodiscard]] dtype actual_dtype() const noexcept { return actual_dtype_; }
    [[nodiscard]] dtype expected_dtype() const noexcept { return expected_dtype_; }
    [[nodiscard]] const shape_type& actual_shape() const noexcept { return actual_shape_; }
    [[nodiscard]] const shape_type& expected_shape() const noexcept { return expected_shape_; }
    [[nodiscard]] bool same_shape() const noexcept { return actual_shape_ == expected_shape_; }
    [[nodiscard]] bool same_dtype() const noexcept { return actual_dtype_ == expected_dtype_; }
    [[nodiscard]] const compare_options& options() const noexcept { return options_; }

    /// Elements compared (0 when the shapes differ).
    [[nodiscard]] std::size_t size() const noexcept { return status_.size(); }
    [[nodiscard]] const error_stats& abs_error() const noexcept { return abs_stats_; }
    [[nodiscard]] const error_stats& rel_error() const noexcept { return rel_stats_; }
    /// Largest ULP distance over finite pairs, in the actual's dtype (empty for integer and bool).
    [[nodiscard]] std::optional<std::uint64_t> max_ulp() const noexcept { return max_ulp_; }
    [[nodiscard]] std::size_t nan_mismatches() const noexcept { return nan_mismatches_; }
    [[nodiscard]] std::size_t inf_mismatches() const noexcept { return inf_mismatches_; }
    [[nodiscard]] bool nan_inf_agree() const noexcept { return nan_mismatches_ == 0 && inf_mismatches_ == 0; }
    /// Integer and bool tensors compare exactly, whatever the tolerance.
    [[nodiscard]] bool exact() const noexcept { return exact_; }

    /// Shapes equal, dtypes equal (unless options allow otherwise).
    [[nodiscard]] bool structurally_equal() const noexcept {
        return same_shape() && (same_dtype() || !options_.require_same_dtype);
    }

    /// Elements that break |a - e| <= atol + rtol |e| (NaN/Inf disagreements included).
    [[nodiscard]] std::size_t mismatch_count(const tolerance& tol) const {
        std::size_t n = 0;
        for (std::size_t i = 0; i < size(); ++i) n += breaks(i, tol) ? 1 : 0;
        return n;
    }
    [[nodiscard]] std::size_t mismatch_count(const level& lv) const { return mismatch_count(resolve(lv, actual_dtype_)); }

    [[nodiscard]] bool passes(const tolerance& tol) const {
        if (!structurally_equal()) return false;
        for (std::size_t i = 0; i < size(); ++i) {
            if (breaks(i, tol)) return false;
        }
        return true;
    }
    /// A level is resolved with the actual's dtype: the precision under test.
    [[nodiscard]] bool passes(const level& lv) const { return passes(resolve(lv, actual_dtype_)); }

    /// The strictest integer level t in [-10, 0] at which the comparison
    /// passes; empty if it fails even at t = 0 or cannot pass at all.
    [[nodiscard]] std::optional<int> min_passing_level() const { return min_passing_level_; }

    /// Up to k elements ordered by how far they exceed `tol` (NaN/Inf
    /// disagreements first, then by |a - e| / (atol + rtol |e|)).
    [[nodiscard]] std::vector<element_mismatch> worst(const tolerance& tol, std::size_t k) const {
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < size(); ++i) {
            if (status_[i] != status::agree) order.push_back(i);
        }
        auto score = [&](std::size_t i) {
            if (status_[i] != status::compare) return std::numeric_limits<double>::infinity();
            const double err = std::fabs(actual_[i] - expected_[i]);
            const double allowed = tol.atol + tol.rtol * std::fabs(expected_[i]);
            if (allowed > 0.0) return err / allowed;
            return err > 0.0 ? std::numeric_limits<double>::max() : 0.0;
        };
        const std::size_t keep = std::min(k, order.size());
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                          [&](std::size_t a, std::size_t b) {
                              const double sa = score(a), sb = score(b);
                              return sa != sb ? sa > sb : a < b;
                          });
        order.resize(keep);
        std::vector<element_mismatch> out;
        for (const std::size_t i : order) out.push_back(element(i));
        return out;
    }

    /// A readable multi-line account: shapes, the stats line, the worst
    /// elements with their indices, and the strictest passing level.
    [[nodiscard]] std::string describe(const tolerance& tol) const {
        std::ostringstream os;
        os << std::setprecision(6);
        const bool ok = passes(tol);
        os << (ok ? "close" : "NOT close") << ": actual " << name(actual_dtype_) << to_string(actual_shape_)
           << " vs expected " << name(expected_dtype_) << to_string(expected_shape_);
        if (exact_) {
            os << ", compared exactly (integer/bool)\n";
        } else {
            os << " at " << tol << "\n";
        }
        if (!same_shape()) {
            os << "  shape mismatch: actual " << to_string(actual_shape_) << ", expected " << to_string(expected_shape_)
               << "\n";
            return os.str();
        }
        if (!same_dtype()) {
            os << "  dtype mismatch: actual " << name(actual_dtype_) << ", expected " << name(expected_dtype_)
               << (options_.require_same_dtype ? " (fails: require_same_dtype)" : " (allowed by options)") << "\n";
        }
        const std::size_t bad = mismatch_count(tol);
        os << "  mismatches: " << bad << " of " << size() << " elements";
        if (size() != 0) os << " (" << 100.0 * static_cast<double>(bad) / static_cast<double>(size()) << "%)";
        os << "; NaN mismatches: " << nan_mismatches_ << ", Inf mismatches: " << inf_mismatches_ << "\n";
        os << "  abs error: max " << abs_stats_.max << ", mean " << abs_stats_.mean << ", median " << abs_stats_.median
           << ", p99 " << abs_stats_.p99 << " | rel error: max " << rel_stats_.max << ", mean " << rel_stats_.mean
           << ", median " << rel_stats_.median << ", p99 " << rel_stats_.p99;
        if (max_ulp_) os << " | max ULP " << *max_ulp_;
        os << "\n";
        auto w = worst(tol, options_.worst_count);
        std::erase_if(w, [&](const element_mismatch& m) { return !breaks(m.flat_index, tol); });
        if (!w.empty()) {
            os << "  worst elements:\n";
            for (const auto& m : w) {
                os << "    " << to_string(m.index) << ": actual " << m.actual << ", expected " << m.expected;
                if (m.nan_inf_mismatch) {
                    os << " (NaN/Inf mismatch)";
                } else {
                    os << ", abs " << m.abs_error << ", rel " << m.rel_error;
                    if (m.ulp) os << ", ulp " << *m.ulp;
                }
                os << "\n";
            }
        }
        if (min_passing_level_) {
            os << "  strictest passing level: t = " << *min_passing_level_;
            if (!exact_) os << " (" << tolerance_level(actual_dtype_, *min_passing_level_) << ")";
            os << "\n";
        } else {
            os << "  passes at no level t in [-10, 0]\n";
        }
        return os.str();
    }
    [[nodiscard]] std::string describe(const level& lv) const { return describe(resolve(lv, actual_dtype_)); }

private:
    friend comparison_report detail::compare_tensors(const tensor&, const tensor&, const compare_options&);

    enum class status : std::uint8_t { compare, agree, nan_mismatch, inf_mismatch, unequal };

    [[nodiscard]] bool breaks(std::size_t i, const tolerance& tol) const {
        switch (status_[i]) {
            case status::agree: return false;
            case status::compare:
                return !(std::fabs(actual_[i] - expected_[i]) <= tol.atol + tol.rtol * std::fabs(expected_[i]));
            default: return true;
        }
    }

    [[nodiscard]] element_mismatch element(std::size_t i) const {
        element_mismatch m;
        m.flat_index = i;
        m.index = unravel_index(i, actual_shape_);
        m.actual = actual_[i];
        m.expected = expected_[i];
        m.nan_inf_mismatch = status_[i] == status::nan_mismatch || status_[i] == status::inf_mismatch;
        if (!m.nan_inf_mismatch) {
            m.abs_error = std::fabs(m.actual - m.expected);
            m.rel_error = relative_error(m.actual, m.expected);
            m.ulp = ulp_in_actual_dtype(m.actual, m.expected);
        }
        return m;
    }

    static double relative_error(double a, double e) {
        if (e == 0.0) return a == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
        return std::fabs(a - e) / std::fabs(e);
    }

    [[nodiscard]] std::optional<std::uint64_t> ulp_in_actual_dtype(double a, double e) const {
        if (exact_) return std::nullopt;
        return tensoracle::visit(actual_dtype_, [&](auto t) -> std::optional<std::uint64_t> {
            using T = typename decltype(t)::type;
            if constexpr (dtype_traits<T>::is_floating) {
                return ulp_distance(value_cast<T>(a), value_cast<T>(e));
            } else {
                return std::nullopt;
            }
        });
    }

    static error_stats summarize(std::vector<double> v) {
        error_stats s;
        if (v.empty()) return s;
        double sum = 0.0;
        for (const double x : v) {
            s.max = std::max(s.max, x);
            sum += x;
        }
        s.mean = sum / static_cast<double>(v.size());
        const std::size_t n = v.size();
        double* const first = v.data();  // plain pointers: unoptimized builds pay per iterator call
        double* const mid = first + n / 2;
        std::nth_element(first, mid, first + n);
        s.median = *mid;
        if (n % 2 == 0) s.median = 0.5 * (s.median + *std::max_element(first, mid));
        const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n)));
        double* const p = first + (rank == 0 ? 0 : rank - 1);
        std::nth_element(first, p, first + n);
        s.p99 = *p;
        return s;
    }

    void finish() {
        std::vector<double> abs_err, rel_err;
        abs_err.reserve(size());
        rel_err.reserve(size());
        for (std::size_t i = 0; i < size(); ++i) {
            if (status_[i] == status::nan_mismatch) ++nan_mismatches_;
            if (status_[i] == status::inf_mismatch) ++inf_mismatches_;
            if (status_[i] != status::compare && status_[i] != status::unequal) continue;
            abs_err.push_back(std::fabs(actual_[i] - expected_[i]));
            rel_err.push_back(relative_error(actual_[i], expected_[i]));
        }
        // One dtype dispatch for all elements, not one per element.
        if (!exact_ && size() != 0) {
            tensoracle::visit(actual_dtype_, [&](auto t) {
                using T = typename decltype(t)::type;
                if constexpr (dtype_traits<T>::is_floating) {
                    std::uint64_t m = 0;
                    for (std::size_t i = 0; i < size(); ++i) {
                        if (status_[i] != status::compare) continue;
                        const auto u = ulp_distance(value_cast<T>(actual_[i]), value_cast<T>(expected_[i]));
                        if (u) m = std::max(m, *u);
                    }
                    max_ulp_ = m;
                }
            });
        }
        abs_stats_ = summarize(std::move(abs_err));
        rel_stats_ = summarize(std::move(rel_err));
        if (exact_) {
            if (passes(tolerance{})) min_passing_level_ = static_cast<int>(strictest_level);
            return;
        }
        for (int t = static_cast<int>(strictest_level); t <= static_cast<int>(loosest_level); ++t) {
            if (passes(tolerance_level(actual_dtype_, t))) {
                min_passing_level_ = t;
                break;
            }
        }
    }

    dtype actual_dtype_ = dtype::f32;
    dtype expected_dtype_ = dtype::f32;
    shape_type actual_shape_;
    shape_type expected_shape_;
    compare_options options_;
    bool exact_ = false;
    std::vector<double> actual_;
    std::vector<double> expected_;
    std::vector<status> status_;
    error_stats abs_stats_;
    error_stats rel_stats_;
    std::optional<std::uint64_t> max_ulp_;
    std::size_t nan_mismatches_ = 0;
    std::size_t inf_mismatches_ = 0;
    std::optional<int> min_passing_level_;
};

namespace detail {

inline comparison_report compare_tensors(const tensor& actual, const tensor& expected, const compare_options& options) {
    comparison_report r;
    r.actual_dtype_ = actual.element_dtype();
    r.expected_dtype_ = expected.element_dtype();
    r.actual_shape_ = actual.shape();
    r.expected_shape_ = expected.shape();
    r.options_ = options;
    r.exact_ = !info(r.actual_dtype_).is_floating && !info(r.expected_dtype_).is_floating;
    if (!r.same_shape()) {
        r.finish();
        return r;
    }
    const std::size_t n = actual.size();
    r.actual_.resize(n);
    r.expected_.resize(n);
    r.status_.resize(n);
    using status = comparison_report::status;
    // Integers are compared exactly in their own domain (int64 does not fit a double).
    const auto ai = r.exact_ ? actual.to<std::int64_t>() : array<std::int64_t>();
    const auto ei = r.exact_ ? expected.to<std::int64_t>() : array<std::int64_t>();
    // Converted once, not one dtype dispatch per element.
    const auto av = actual.to<double>();
    const auto ev = expected.to<double>();
    for (std::size_t i = 0; i < n; ++i) {
        const double a = av.data()[i];
        const double e = ev.data()[i];
        r.actual_[i] = a;
        r.expected_[i] = e;
        if (r.exact_) {
            r.status_[i] = ai.data()[i] == ei.data()[i] ? status::agree : status::unequal;
        } else if (std::isnan(a) || std::isnan(e)) {
            r.status_[i] = (std::isnan(a) && std::isnan(e) && options.nan_equal) ? status::agree : status::nan_mismatch;
        } else if (std::isinf(a) || std::isinf(e)) {
            r.status_[i] = (a == e && options.inf_equal) ? status::agree : status::inf_mismatch;
        } else {
            r.status_[i] = status::compare;
        }
    }
    r.finish();
    return r;
}

template <class T>
struct is_xexpression : std::is_base_of<xt::xexpression<T>, T> {};

}  // namespace detail

/// What compare() and allclose() accept: a tensoracle::tensor, or an xtensor
/// expression whose elements are one of the kit's element types.
template <class T>
concept comparable = std::same_as<T, tensor> ||
                     (detail::is_xexpression<T>::value && element_type<typename T::value_type>);

namespace detail {
template <class T>
tensor as_tensor(const T& x) {
    if constexpr (std::same_as<T, tensor>) {
        return x;
    } else {
        return tensor::from(x);
    }
}
template <class T>
struct value_type_of {
    using type = void;
};
template <class T>
    requires requires { typename T::value_type; }
struct value_type_of<T> {
    using type = typename T::value_type;
};
}  // namespace detail

/// Compares `actual` with `expected` once; judge the report with passes().
/// Typed arguments must share their element type (a mixed-precision check is
/// a decision: make it explicit with a cast, or compare runtime tensors).
template <class A, class E>
[[nodiscard]] comparison_report compare(const A& actual, const E& expected, const compare_options& options = {}) {
    static_assert(comparable<A>,
                  "tensoracle::compare(actual, expected): 'actual' must be a tensoracle::tensor or an xtensor "
                  "expression of a tensoracle element type");
    static_assert(comparable<E>,
                  "tensoracle::compare(actual, expected): 'expected' must be a tensoracle::tensor or an xtensor "
                  "expression of a tensoracle element type");
    if constexpr (comparable<A> && comparable<E>) {
        if constexpr (!std::same_as<A, tensor> && !std::same_as<E, tensor>) {
            static_assert(std::is_same_v<typename A::value_type, typename E::value_type>,
                          "tensoracle::compare(actual, expected): the element types differ; cast one side first "
                          "(or compare tensoracle::tensor values to report a dtype mismatch at run time)");
        }
        return detail::compare_tensors(detail::as_tensor(actual), detail::as_tensor(expected), options);
    } else {
        return {};
    }
}

/// Tag for allclose on integer and bool tensors, which compare exactly.
struct exact_t {
    explicit constexpr exact_t() = default;
};
inline constexpr exact_t exact{};

/// The verdict of allclose with its report; converts to bool and prints the
/// report's description (what test-framework adapters show on failure).
class allclose_result {
public:
    allclose_result(comparison_report report, tolerance tol)
        : report_(std::move(report)), tol_(tol), passed_(report_.passes(tol_)) {}

    explicit operator bool() const noexcept { return passed_; }
    [[nodiscard]] bool passed() const noexcept { return passed_; }
    [[nodiscard]] const comparison_report& report() const noexcept { return report_; }
    [[nodiscard]] const tolerance& tolerance_used() const noexcept { return tol_; }

    friend std::ostream& operator<<(std::ostream& os, const allclose_result& r) {
        return os << r.report_.describe(r.tol_);
    }

private:
    comparison_report report_;
    tolerance tol_;
    bool passed_;
};

/// allclose(actual, expected, tol) with tol a tensoracle::tolerance{atol, rtol},
/// a tensoracle::level{t}, or tensoracle::exact. For typed integer and bool
/// tensors only `exact` compiles: a float tolerance there is a mistake.
template <class A, class E, class Tol>
[[nodiscard]] allclose_result allclose(const A& actual, const E& expected, const Tol& tol,
                                       const compare_options& options = {}) {
    static_assert(std::is_same_v<Tol, tolerance> || std::is_same_v<Tol, level> || std::is_same_v<Tol, exact_t>,
                  "tensoracle::allclose(actual, expected, tol): tol must be tensoracle::tolerance{atol, rtol}, "
                  "tensoracle::level{t} or tensoracle::exact");
    using value_type = typename detail::value_type_of<A>::type;
    if constexpr (element_type<value_type> && !std::is_same_v<Tol, exact_t>) {
        static_assert(floating_element<value_type>,
                      "tensoracle::allclose(actual, expected, tol): integer and bool tensors compare exactly; "
                      "pass tensoracle::exact instead of a floating-point tolerance or level");
    }
    auto report = compare(actual, expected, options);
    tolerance resolved{};
    if constexpr (std::is_same_v<Tol, tolerance>) {
        if (!(tol.atol >= 0.0) || !(tol.rtol >= 0.0)) {
            throw error("tensoracle::allclose", "atol and rtol must be >= 0 (and not NaN)");
        }
        resolved = tol;
    } else if constexpr (std::is_same_v<Tol, level>) {
        resolved = tolerance_level(report.actual_dtype(), tol.t);
    }
    return allclose_result(std::move(report), resolved);
}

}  // namespace tensoracle
