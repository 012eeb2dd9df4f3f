// tensoracle: a gradient oracle for other people's AD engines.
//
// The engine under test is a set of callables over kit tensors: its value
// function and any of VJP, JVP, full Jacobian, and (for order >= 2) the engine
// of its own gradient. check_gradients() follows ∇Fuzz's Algorithm 1 and Stan
// Math's expect_ad:
//   1. exceptions: if the value throws, every AD path must throw, and not otherwise;
//   2. the value repeated (10× by default): any difference is nondeterminism;
//   3. values returned by the AD paths against the direct value;
//   4. reverse against forward via ⟨Ju, w⟩ = ⟨u, Jᵀw⟩ (no finite differences needed);
//   5. both against finite differences in float64 (full Jacobians for small
//      inputs, random projections otherwise);
//   6. order >= 2: the same checks on x ↦ Jᵀ(x)·w, the engine's own gradient.
// Failures are then run through filters that label (never drop) the usual
// false positives: a non-differentiable point (5 neighbours within 1e-4 whose
// numerical derivatives disagree), precision conversion (an input wider than
// an output), NaN in the gradients.
#pragma once

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensoracle/accuracy/compare.hpp"
#include "tensoracle/accuracy/tolerance.hpp"
#include "tensoracle/ad/finite_difference.hpp"
#include "tensoracle/core/rng.hpp"
#include "tensoracle/core/tensor.hpp"

namespace tensoracle::ad {

using tensors = std::vector<tensor>;

/// What an engine's JVP returns for inputs x and input tangents u: the
/// function's outputs and, per output, its tangent J·u (shaped like that output;
/// an output that is not floating may have an empty tangent).
struct jvp_result {
    tensors outputs;
    tensors output_tangents;  ///< one per output
};

/// What an engine's VJP returns for inputs x and output cotangents w: the
/// function's outputs and, per input, its cotangent Jᵀ·w (shaped like that input;
/// an input the engine does not differentiate may have an empty cotangent).
struct vjp_result {
    tensors outputs;
    tensors input_cotangents;  ///< one per input
};

/// A full Jacobian as blocks ∂y_o/∂x_i, each shaped shape(y_o) ++ shape(x_i)
/// (row-major: output element, then input element). Blocks start empty.
class jacobian_blocks {
public:
    jacobian_blocks() = default;
    jacobian_blocks(std::size_t outputs, std::size_t inputs)
        : outputs_(outputs), inputs_(inputs), blocks_(outputs * inputs) {}
    [[nodiscard]] std::size_t outputs() const noexcept { return outputs_; }
    [[nodiscard]] std::size_t inputs() const noexcept { return inputs_; }
    /// ∂(output o)/∂(input i).
    [[nodiscard]] tensor& block(std::size_t o, std::size_t i) { return blocks_.at(index(o, i)); }
    [[nodiscard]] const tensor& block(std::size_t o, std::size_t i) const { return blocks_.at(index(o, i)); }

private:
    std::size_t index(std::size_t o, std::size_t i) const {
        if (o >= outputs_ || i >= inputs_) {
            throw shape_error("tensoracle::ad::jacobian_blocks::block",
                              "block (" + std::to_string(o) + ", " + std::to_string(i) + ") of a Jacobian with " +
                                  std::to_string(outputs_) + " outputs and " + std::to_string(inputs_) + " inputs");
        }
        return o * inputs_ + i;
    }
    std::size_t outputs_ = 0, inputs_ = 0;
    tensors blocks_;
};

/// The engine under test, as callables. Only `value` is required. Building it
/// with engine_builder (below) checks each callable's signature where it is
/// given. A path that is given is always compared, or reported as not checked.
struct engine {
    /// x -> outputs.
    std::function<tensors(const tensors& x)> value;
    /// (x, w: one cotangent per output) -> outputs and one cotangent Jᵀw per input.
    std::function<vjp_result(const tensors& x, const tensors& output_cotangents)> vjp;
    /// (x, u: one tangent per input) -> outputs and one tangent Ju per output.
    std::function<jvp_result(const tensors& x, const tensors& input_tangents)> jvp;
    /// x -> every block ∂y_o/∂x_i.
    std::function<jacobian_blocks(const tensors& x)> jacobian;
    /// w -> the engine of g(x) = Jᵀ(x)·w, for order >= 2. Its outputs are the
    /// input cotangents: one per input, as in vjp_result (empty where not differentiated).
    std::function<engine(const tensors& output_cotangents)> gradient;
};

/// Assembles an engine, checking at compile time that each callable has the
/// signature of its path (a JVP given where the VJP belongs does not compile):
///
///     auto e = ad::engine_builder()
///                  .value([](const ad::tensors& x) { ...; return ys; })
///                  .vjp([](const ad::tensors& x, const ad::tensors& w) { ...; return ad::vjp_result{ys, dxs}; })
///                  .build();
class engine_builder {
public:
    template <class F>
    engine_builder& value(F f) {
        static_assert(std::is_invocable_r_v<tensors, F&, const tensors&>,
                      "engine_builder::value(f): f must be callable as f(const tensors& x) and return tensors "
                      "(one per output)");
        e_.value = std::move(f);
        return *this;
    }
    template <class F>
    engine_builder& vjp(F f) {
        static_assert(std::is_invocable_r_v<vjp_result, F&, const tensors&, const tensors&>,
                      "engine_builder::vjp(f): f must be callable as f(const tensors& x, const tensors& "
                      "output_cotangents) and return vjp_result{outputs, input_cotangents (one per input)}");
        e_.vjp = std::move(f);
        return *this;
    }
    template <class F>
    engine_builder& jvp(F f) {
        static_assert(std::is_invocable_r_v<jvp_result, F&, const tensors&, const tensors&>,
                      "engine_builder::jvp(f): f must be callable as f(const tensors& x, const tensors& "
                      "input_tangents) and return jvp_result{outputs, output_tangents (one per output)}");
        e_.jvp = std::move(f);
        return *this;
    }
    template <class F>
    engine_builder& jacobian(F f) {
        static_assert(std::is_invocable_r_v<jacobian_blocks, F&, const tensors&>,
                      "engine_builder::jacobian(f): f must be callable as f(const tensors& x) and return "
                      "jacobian_blocks (block(o, i) shaped like output o followed by input i)");
        e_.jacobian = std::move(f);
        return *this;
    }
    template <class F>
    engine_builder& gradient(F f) {
        static_assert(std::is_invocable_r_v<engine, F&, const tensors&>,
                      "engine_builder::gradient(f): f must be callable as f(const tensors& output_cotangents) and "
                      "return the engine of x -> J^T(x) w");
        e_.gradient = std::move(f);
        return *this;
    }
    /// The engine; throws when no value function was given.
    [[nodiscard]] engine build() const {
        if (!e_.value) {
            throw error("tensoracle::ad::engine_builder::build", "the engine has no value function (call .value(f))");
        }
        return e_;
    }

private:
    engine e_;
};

enum class gradient_outcome {
    pass,
    nondeterministic,          ///< the value differs between identical runs
    output_inconsistent,       ///< an AD path returned other outputs than the value function
    reverse_forward_mismatch,  ///< ⟨Ju, w⟩ ≠ ⟨u, Jᵀw⟩, or a full Jacobian disagrees with an AD path
    gradient_fd_mismatch,      ///< an AD path disagrees with finite differences
    exception_mismatch,        ///< the value and an AD path disagree on throwing (or an AD path crashed)
    skipped,                   ///< nothing to check (no AD paths, or the value and every AD path threw)
    malformed_derivative,      ///< a derivative or Jacobian block is missing, empty, or of the wrong shape or dtype
    reference_mismatch,        ///< an AD path disagrees element by element with the reference engine
    not_checked,               ///< no failure, but a provided path was never compared (reasons in the report)
};

[[nodiscard]] inline std::string_view name(gradient_outcome o) {
    switch (o) {
        case gradient_outcome::pass: return "pass";
        case gradient_outcome::nondeterministic: return "nondeterministic";
        case gradient_outcome::output_inconsistent: return "output inconsistent";
        case gradient_outcome::reverse_forward_mismatch: return "reverse != forward";
        case gradient_outcome::gradient_fd_mismatch: return "gradient != finite differences";
        case gradient_outcome::exception_mismatch: return "exception mismatch";
        case gradient_outcome::skipped: return "skipped";
        case gradient_outcome::malformed_derivative: return "malformed derivative";
        case gradient_outcome::reference_mismatch: return "gradient != reference";
        case gradient_outcome::not_checked: return "not checked";
    }
    return "?";
}

/// Labels of likely false positives, attached to a failing check.
enum class filter_label : unsigned {
    non_differentiable_point = 1U,
    precision_conversion = 2U,
    nan_in_gradient = 4U,
};
[[nodiscard]] inline std::string_view name(filter_label l) {
    switch (l) {
        case filter_label::non_differentiable_point: return "non-differentiable point";
        case filter_label::precision_conversion: return "precision conversion";
        case filter_label::nan_in_gradient: return "NaN in gradient";
    }
    return "?";
}

/// Tolerances keyed by dtype and derivative order (0 = values). Defaults:
/// values from Stan's expect_ad (1e-8 relative in f64); first order from JAX
/// check_grads (f64 1e-5, f32 2e-3, f16 1e-2, bf16 1e-1); second order from
/// Stan's Hessian tolerance (1e-3 in f64), third order 1e-2; lower precisions
/// scaled like first order. Any entry can be replaced.
class derivative_tolerances {
public:
    [[nodiscard]] static derivative_tolerances defaults() {
        derivative_tolerances t;
        const auto both = [](double v) { return tolerance{v, v}; };
        t.set(dtype::f64, 0, both(1e-8));
        t.set(dtype::f32, 0, both(1e-5));
        t.set(dtype::f16, 0, both(1e-3));
        t.set(dtype::bf16, 0, both(1e-2));
        t.set(dtype::f64, 1, both(1e-5));
        t.set(dtype::f32, 1, both(2e-3));
        t.set(dtype::f16, 1, both(1e-2));
        t.set(dtype::bf16, 1, both(1e-1));
        t.set(dtype::f64, 2, both(1e-3));
        t.set(dtype::f32, 2, both(1e-2));
        t.set(dtype::f16, 2, both(5e-2));
        t.set(dtype::bf16, 2, both(2e-1));
        t.set(dtype::f64, 3, both(1e-2));
        t.set(dtype::f32, 3, both(5e-2));
        t.set(dtype::f16, 3, both(1e-1));
        t.set(dtype::bf16, 3, both(3e-1));
        return t;
    }
    /// ∇Fuzz's fuzzing preset: allclose(atol 0.1, rtol 1e-3) everywhere.
    [[nodiscard]] static derivative_tolerances nabla_fuzz() {
        derivative_tolerances t = defaults();
        for (auto& [k, v] : t.table_) v = {0.1, 1e-3};
        return t;
    }
    void set(dtype d, int order, tolerance tol) { table_[{d, order}] = tol; }
    /// The entry for (d, order); orders above the largest set reuse it.
    [[nodiscard]] tolerance get(dtype d, int order) const {
        for (int o = order; o >= 0; --o) {
            const auto it = table_.find({d, o});
            if (it != table_.end()) return it->second;
        }
        throw error("tensoracle::ad::derivative_tolerances", "no tolerance for dtype " + std::string(tensoracle::name(d)));
    }

private:
    std::map<std::pair<dtype, int>, tolerance> table_;
};

struct oracle_options {
    int determinism_runs = 10;
    int probes = 3;                         ///< random (u, w) pairs for projections
    int order = 1;                          ///< highest derivative order to check (>= 2 needs engine.gradient)
    std::size_t full_jacobian_limit = 24;   ///< full Jacobians when inputs and outputs have at most this many elements
    std::vector<std::size_t> wrt;           ///< inputs to differentiate (default: every floating input)
    fd_options fd{stencil::central6, {1e-3, true}, true};
    /// Second opinion where `fd` disagrees: torch.gradcheck's central difference, eps 1e-6.
    fd_options fine_fd = fd_options::torch();
    derivative_tolerances tolerances = derivative_tolerances::defaults();
    int neighbours = 5;                     ///< ∇Fuzz's non-differentiability filter
    double neighbour_radius = 1e-4;
    fd_options neighbour_fd = fd_options::torch();
    /// How far the neighbours' numerical derivatives may spread before x
    /// counts as non-differentiable: a smooth function moves them by about
    /// radius·|f''| (~1e-4), a kink by the jump in slope (O(1)).
    tolerance neighbour_tolerance{1e-2, 1e-2};
    /// A failure at a non-differentiable point is re-checked at this many
    /// points nudged off it (each element moved by up to `nudge_radius`·max(1, |x|)):
    /// only a failure that disappears at one of them is the kink's doing.
    int nudges = 3;
    double nudge_radius = 1e-3;
    /// The kit's own derivative of the same function (e.g. op_engine of the op
    /// the engine implements), when there is one: every JVP and VJP of the engine
    /// is then compared with it element by element, so an error in a single
    /// element of a large tensor cannot hide in a projection. Empty: none.
    engine reference;
    std::uint64_t seed = 0x5eed;
};

/// What became of one comparison.
enum class check_status {
    agreed,
    failed,   ///< a disagreement no filter explains
    excused,  ///< a disagreement a filter explains (labels say which)
};

struct check_entry {
    std::string what;  ///< e.g. "probe 1: vjp vs finite differences"
    check_status status = check_status::agreed;
    gradient_outcome kind = gradient_outcome::pass;  ///< the kind of disagreement (pass when agreed)
    unsigned labels = 0;                             ///< filters that excused it
    std::string detail;
};

struct gradient_report {
    /// The first failure no filter explains; else the first excused one; else
    /// pass (every provided path compared), not_checked, or skipped.
    gradient_outcome outcome = gradient_outcome::skipped;
    unsigned labels = 0;  ///< filters of the excused failures
    int order = 1;
    dtype precision = dtype::f64;  ///< the dtype whose tolerances applied
    tolerance used{};
    std::string message;           ///< what failed and where (the outcome's check)
    std::optional<comparison_report> comparison;  ///< that check's elementwise comparison, if any
    std::vector<check_entry> checks;              ///< every comparison made, in order
    std::vector<std::string> not_checked;         ///< provided paths (or parts) never compared, and why
    /// For derivatives compared only through random projections (no reference,
    /// too large for full Jacobians): a wrong single element of Jᵀw or of J
    /// smaller than this may have gone unnoticed. 0 when none were.
    double projection_blind_spot = 0.0;
    std::vector<std::string> log;         ///< notes beside the checks
    std::vector<gradient_report> higher;  ///< order + 1

    [[nodiscard]] bool has(filter_label l) const { return (labels & static_cast<unsigned>(l)) != 0; }
    [[nodiscard]] std::size_t count(check_status s) const {
        return static_cast<std::size_t>(
            std::count_if(checks.begin(), checks.end(), [&](const check_entry& c) { return c.status == s; }));
    }
    /// A failure not explained by a filter (here or at a higher order).
    [[nodiscard]] bool failed() const {
        return count(check_status::failed) != 0 ||
               std::any_of(higher.begin(), higher.end(), [](const gradient_report& h) { return h.failed(); });
    }
    /// Every provided path was compared and nothing failed (here and above).
    [[nodiscard]] bool fully_checked() const {
        return !failed() && not_checked.empty() &&
               std::all_of(higher.begin(), higher.end(), [](const gradient_report& h) { return h.fully_checked(); });
    }
    [[nodiscard]] std::string to_string() const {
        std::ostringstream os;
        os << "gradient check, order " << order << ": " << name(outcome);
        for (const auto l : {filter_label::non_differentiable_point, filter_label::precision_conversion,
                             filter_label::nan_in_gradient}) {
            if (has(l)) os << " [excused: " << name(l) << "]";
        }
        os << " (" << tensoracle::name(precision) << ", " << used << ")\n";
        os << "  " << checks.size() << " comparisons: " << count(check_status::agreed) << " agreed, "
           << count(check_status::failed) << " failed, " << count(check_status::excused) << " excused by a filter; "
           << not_checked.size() << " not checked\n";
        if (!message.empty()) os << "  " << message << "\n";
        if (comparison) os << comparison->describe(used);
        for (const auto& c : checks) {
            if (c.status == check_status::agreed) continue;
            os << "  " << (c.status == check_status::failed ? "FAILED " : "excused ") << c.what << ": " << name(c.kind);
            for (const auto l : {filter_label::non_differentiable_point, filter_label::precision_conversion,
                                 filter_label::nan_in_gradient}) {
                if ((c.labels & static_cast<unsigned>(l)) != 0) os << " [" << name(l) << "]";
            }
            if (!c.detail.empty()) os << " — " << c.detail;
            os << "\n";
        }
        for (const auto& n : not_checked) os << "  NOT CHECKED " << n << "\n";
        if (projection_blind_spot > 0.0) {
            os << "  compared through projections only: a single wrong derivative element below about "
               << projection_blind_spot << " could go unnoticed (give oracle_options::reference to compare elementwise)\n";
        }
        for (const auto& line : log) os << "  - " << line << "\n";
        for (const auto& h : higher) os << h.to_string();
        return os.str();
    }
};

namespace detail {

// The checker treats both AD paths alike: outputs plus derivatives (per output
// for JVP, per input for VJP).
struct path_result {
    tensors outputs;
    tensors derivatives;
};
inline path_result jvp_of(const engine& e, const tensors& x, const tensors& u) {
    auto r = e.jvp(x, u);
    return {std::move(r.outputs), std::move(r.output_tangents)};
}
inline path_result vjp_of(const engine& e, const tensors& x, const tensors& w) {
    auto r = e.vjp(x, w);
    return {std::move(r.outputs), std::move(r.input_cotangents)};
}

inline bool is_floating(const tensor& t) { return info(t.element_dtype()).is_floating; }

inline std::vector<double> flat(const tensors& ts, const std::vector<std::size_t>& ids) {
    std::vector<double> v;
    for (const auto i : ids) {
        const auto d = ts[i].to<double>();
        v.insert(v.end(), d.begin(), d.end());
    }
    return v;
}
inline std::vector<double> flat_floating(const tensors& ts) {
    std::vector<double> v;
    for (const auto& t : ts) {
        if (!is_floating(t)) continue;
        const auto d = t.to<double>();
        v.insert(v.end(), d.begin(), d.end());
    }
    return v;
}
inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0.0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) s += a[i] * b[i];
    return s;
}
inline double abs_dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0.0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) s += std::fabs(a[i] * b[i]);
    return s;
}
inline bool any_nan(const std::vector<double>& v) {
    return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); });
}
inline double max_abs(const std::vector<double>& v) {
    double m = 0.0;
    for (const double x : v) {
        if (std::isfinite(x)) m = std::max(m, std::fabs(x));
    }
    return m;
}
// Largest finite |element| of a floating tensor; 0 for other dtypes.
inline double max_abs(const tensor& t) {
    if (!is_floating(t)) return 0.0;
    double m = 0.0;
    for (const double x : t.to<double>()) {
        if (std::isfinite(x)) m = std::max(m, std::fabs(x));
    }
    return m;
}
inline tensor vector_tensor(const std::vector<double>& v) {
    auto a = array<double>::from_shape({v.size()});
    std::copy(v.begin(), v.end(), a.data());
    return tensor(a);
}
// Scalars agree when |a - b| <= atol + rtol·scale, with scale the sum of
// absolute terms: an inner product that cancels must not demand more than its terms allow.
inline bool scalar_close(double a, double b, double scale, tolerance t) {
    if (std::isnan(a) || std::isnan(b)) return false;
    if (a == b) return true;  // equal infinities too
    return std::fabs(a - b) <= t.atol + t.rtol * scale;
}
// True only when compare(a, e, {nan_equal = false}) would pass at t: most
// comparisons agree, and the full report (statistics, ULPs, medians) is built
// only for the ones that do not.
inline bool element_close(double a, double e, tolerance t) {
    if (std::isnan(a) || std::isnan(e)) return false;
    if (std::isinf(a) || std::isinf(e)) return a == e;
    return std::fabs(a - e) <= t.atol + t.rtol * std::fabs(e);
}
inline bool quick_close(const tensor& a, const tensor& e, tolerance t) {
    if (a.shape() != e.shape() || !is_floating(a) || !is_floating(e)) return false;
    const auto av = a.to<double>(), ev = e.to<double>();
    for (std::size_t k = 0; k < av.size(); ++k) {
        if (!element_close(av.data()[k], ev.data()[k], t)) return false;
    }
    return true;
}
inline bool quick_close(const std::vector<double>& a, const std::vector<double>& e, tolerance t) {
    if (a.size() != e.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k) {
        if (!element_close(a[k], e[k], t)) return false;
    }
    return true;
}

inline std::string fmt(double v) {
    std::ostringstream os;
    os.precision(10);
    os << v;
    return os.str();
}
/// Unit roundoff of a floating dtype.
inline double unit_roundoff(dtype d) {
    switch (d) {
        case dtype::f16: return std::ldexp(1.0, -11);
        case dtype::bf16: return std::ldexp(1.0, -8);
        case dtype::f32: return std::ldexp(1.0, -24);
        default: return std::ldexp(1.0, -53);
    }
}

/// A random tensor of t's dtype and shape with N(0, 1) entries.
inline tensor random_like(rng& g, const tensor& t) {
    auto a = array<double>::from_shape(t.shape());
    for (auto& v : a) v = g.normal();
    return tensor::from_array_as(a, t.element_dtype());
}

class checker {
public:
    checker(const engine& e, const tensors& x, const oracle_options& o, int order)
        : e_(e), x_(x), o_(o), g_(o.seed + static_cast<std::uint64_t>(order)) {
        r_.order = order;
        wrt_ = o.wrt;
        if (wrt_.empty()) {
            for (std::size_t i = 0; i < x.size(); ++i) {
                if (is_floating(x[i]) && x[i].size() != 0) wrt_.push_back(i);
            }
        }
        for (const auto i : wrt_) {
            if (i >= x.size() || !is_floating(x[i])) {
                throw error("tensoracle::ad::check_gradients", "input " + std::to_string(i) +
                                                                   " is not a floating input and cannot be differentiated");
            }
        }
    }

    gradient_report run() {
        if (!e_.value) throw error("tensoracle::ad::check_gradients", "the engine has no value function");
        // 1. Exceptions.
        std::string value_error;
        try {
            y_ = e_.value(x_);
        } catch (const std::exception& ex) {
            value_error = ex.what();
        }
        if (!value_error.empty()) return all_paths_throw(value_error);
        set_precision(y_);
        out_ids_ = floating_ids(y_);
        for (const auto& y : y_) y_max_.push_back(max_abs(y));
        if (wrt_.empty() || out_ids_.empty()) {
            r_.outcome = gradient_outcome::skipped;
            r_.message = "no floating inputs or outputs to differentiate";
            return r_;
        }
        // 2. Determinism: later checks compare against one run, so a value that
        // changes between runs makes every other comparison meaningless.
        for (int k = 1; k < o_.determinism_runs; ++k) {
            const auto y2 = e_.value(x_);
            bool same = y2.size() == y_.size();
            for (std::size_t i = 0; same && i < y_.size(); ++i) same = y_[i].identical(y2[i]);
            if (!same) {
                record("value determinism", gradient_outcome::nondeterministic,
                       "run " + std::to_string(k + 1) + " of the value function differs from run 1", false);
                return summarize();
            }
        }
        r_.log.push_back("value deterministic over " + std::to_string(o_.determinism_runs) + " runs");
        if (!e_.vjp && !e_.jvp && !e_.jacobian) {
            r_.outcome = gradient_outcome::skipped;
            r_.message = "the engine provides no AD path (vjp, jvp or jacobian)";
            return r_;
        }
        vt_ = o_.tolerances.get(r_.precision, r_.order - 1);
        gt_ = o_.tolerances.get(r_.precision, r_.order);
        r_.used = gt_;
        use_jvp_ = static_cast<bool>(e_.jvp);
        use_vjp_ = static_cast<bool>(e_.vjp);
        use_ref_ = static_cast<bool>(o_.reference.value) && (o_.reference.jvp || o_.reference.vjp);
        // 3.-5. per probe: structure, values, reverse vs forward, reference, finite differences.
        for (int p = 0; p < o_.probes; ++p) probe(p);
        jacobian_path();
        full_jacobians();
        blind_spot();
        const std::tuple<const char*, bool, std::size_t> paths[] = {
            {"jvp", static_cast<bool>(e_.jvp), compared_jvp_},
            {"vjp", static_cast<bool>(e_.vjp), compared_vjp_},
            {"jacobian", static_cast<bool>(e_.jacobian), compared_jacobian_}};
        for (const auto& [path, provided, used] : paths) {
            if (provided && used == 0 && !path_failed_[path]) {
                r_.not_checked.push_back(std::string(path) + ": no comparison could be made" +
                                         (fd_unavailable_.empty() ? std::string() : " (" + fd_unavailable_ + ")"));
            }
        }
        summarize();
        // Later orders run whatever this one found: a labelled (or real)
        // failure here must not hide a wrong second derivative.
        if (o_.order > r_.order) higher_order();
        return r_;
    }

private:
    const engine& e_;
    tensors x_;
    oracle_options o_;
    rng g_;
    gradient_report r_;
    std::vector<std::size_t> wrt_, out_ids_;
    tensors y_;
    std::vector<double> y_max_;  // max |y_j|, for the value tolerance's floor
    tolerance vt_{}, gt_{};
    bool use_jvp_ = false, use_vjp_ = false, use_ref_ = false;
    std::size_t compared_jvp_ = 0, compared_vjp_ = 0, compared_jacobian_ = 0;
    std::map<std::string, bool, std::less<>> path_failed_;
    std::string fd_unavailable_;
    // Projection probes, kept for the blind-spot figure.
    std::vector<std::vector<double>> probe_u_, probe_w_;
    std::vector<double> probe_scale_;  // the tolerance each probe's scalar comparison allowed

    static compare_options relaxed() {
        compare_options c;
        c.require_same_dtype = false;
        c.nan_equal = false;
        return c;
    }
    static std::vector<std::size_t> floating_ids(const tensors& y) {
        std::vector<std::size_t> ids;
        for (std::size_t j = 0; j < y.size(); ++j) {
            if (is_floating(y[j]) && y[j].size() != 0) ids.push_back(j);  // an empty output has nothing to differentiate
        }
        return ids;
    }

    // The narrowest floating dtype among differentiated inputs and outputs sets the tolerances.
    void set_precision(const tensors& y) {
        int bits = 64;
        dtype d = dtype::f64;
        auto consider = [&](dtype t) {
            if (info(t).is_floating && static_cast<int>(info(t).bits) <= bits) {
                // Of two 16-bit types bfloat16 is the coarser.
                if (static_cast<int>(info(t).bits) < bits || t == dtype::bf16) d = t;
                bits = static_cast<int>(info(t).bits);
            }
        };
        for (const auto i : wrt_) consider(x_[i].element_dtype());
        for (const auto& t : y) consider(t.element_dtype());
        r_.precision = d;
    }

    check_entry& record(std::string what, gradient_outcome kind, std::string detail, bool excused,
                        unsigned labels = 0) {
        r_.checks.push_back({std::move(what), excused ? check_status::excused : check_status::failed, kind, labels,
                             std::move(detail)});
        return r_.checks.back();
    }
    void agreed(std::string what) { r_.checks.push_back({std::move(what), check_status::agreed, gradient_outcome::pass, 0, {}}); }

    gradient_report& summarize() {
        const check_entry* first_failed = nullptr;
        const check_entry* first_excused = nullptr;
        r_.labels = 0;
        for (const auto& c : r_.checks) {
            if (c.status == check_status::failed && first_failed == nullptr) first_failed = &c;
            if (c.status == check_status::excused) {
                if (first_excused == nullptr) first_excused = &c;
                r_.labels |= c.labels;
            }
        }
        if (const auto* c = first_failed != nullptr ? first_failed : first_excused) {
            r_.outcome = c->kind;
            r_.message = c->what + ": " + c->detail;
        } else {
            r_.outcome = r_.not_checked.empty() ? gradient_outcome::pass : gradient_outcome::not_checked;
        }
        return r_;
    }

    template <class F>
    bool call(const char* what, F&& f) {
        try {
            f();
            return true;
        } catch (const std::exception& ex) {
            record(std::string(what) + " call", gradient_outcome::exception_mismatch,
                   std::string("the value function succeeds but ") + what + " throws: " + ex.what(), false);
        } catch (...) {
            record(std::string(what) + " call", gradient_outcome::exception_mismatch,
                   std::string("the value function succeeds but ") + what + " throws a non-standard exception", false);
        }
        path_failed_[what] = true;
        return false;
    }

    gradient_report all_paths_throw(const std::string& value_error) {
        std::vector<std::string> returned;
        auto probe_call = [&](const char* what, auto&& f) {
            try {
                f();
                returned.emplace_back(what);
            } catch (...) {
            }
        };
        tensors u(x_.size());
        for (std::size_t i = 0; i < x_.size(); ++i) u[i] = x_[i];
        if (e_.jvp) probe_call("jvp", [&] { (void)jvp_of(e_, x_, u); });
        // The output shapes are unknown when the value throws: the inputs stand in as cotangents.
        if (e_.vjp) probe_call("vjp", [&] { (void)vjp_of(e_, x_, u); });
        if (e_.jacobian) probe_call("jacobian", [&] { (void)e_.jacobian(x_); });
        if (!returned.empty()) {
            std::string list;
            for (const auto& s : returned) list += (list.empty() ? "" : ", ") + s;
            record("exceptions", gradient_outcome::exception_mismatch,
                   "the value function throws (" + value_error + ") but " + list + " returned normally", false);
            return summarize();
        }
        r_.outcome = gradient_outcome::skipped;
        r_.message = "the value function and every AD path throw: " + value_error;
        return r_;
    }

    // --- structure ----------------------------------------------------------
    static std::string shape_text(const shape_type& s) { return tensoracle::to_string(s); }

    // A derivative for a differentiated slot must be there, floating, and
    // shaped like its primal; other slots may be empty. Empty string: fine.
    static std::string derivative_problem(const tensors& ds, std::size_t k, const tensor& primal, const char* slot) {
        const std::string where = std::string(slot) + " " + std::to_string(k);
        if (k >= ds.size()) return "no derivative for " + where + " (expected shape " + shape_text(primal.shape()) + ")";
        const auto& d = ds[k];
        if (d.size() == 0 && primal.size() != 0) {
            return "the derivative for " + where + " is empty (expected shape " + shape_text(primal.shape()) + ")";
        }
        if (!is_floating(d)) {
            return "the derivative for " + where + " has dtype " + std::string(tensoracle::name(d.element_dtype())) +
                   ", not a floating dtype";
        }
        if (d.shape() != primal.shape()) {
            return "the derivative for " + where + " has shape " + shape_text(d.shape()) + ", expected " +
                   shape_text(primal.shape());
        }
        return {};
    }
    bool structure_ok(const path_result& r, bool forward, int p) {
        const char* path = forward ? "jvp" : "vjp";
        std::string problem;
        // JVP derivatives are per output, VJP derivatives per input.
        if (forward) {
            for (const auto j : out_ids_) {
                if (problem.empty()) problem = derivative_problem(r.derivatives, j, y_[j], "output");
            }
        } else {
            for (const auto i : wrt_) {
                if (problem.empty()) problem = derivative_problem(r.derivatives, i, x_[i], "input");
            }
        }
        if (problem.empty()) return true;
        record("probe " + std::to_string(p) + ": " + path + " result", gradient_outcome::malformed_derivative,
               std::string(path) + " " + problem, false);
        path_failed_[path] = true;
        return false;
    }

    bool outputs_consistent(const tensors& got, const char* what, int p) {
        const std::string label = "probe " + std::to_string(p) + ": " + what + " outputs vs value";
        if (got.size() != y_.size()) {
            record(label, gradient_outcome::output_inconsistent,
                   std::string(what) + " returned " + std::to_string(got.size()) + " outputs, the value function " +
                       std::to_string(y_.size()),
                   false);
            return false;
        }
        for (std::size_t j = 0; j < y_.size(); ++j) {
            // The absolute floor scales with the output's magnitude: a fixed floor
            // would let small outputs computed at a lower precision pass.
            const tolerance t = is_floating(y_[j])
                                    ? tolerance{vt_.atol * std::max(y_max_[j], std::numeric_limits<double>::min()), vt_.rtol}
                                    : tolerance{};
            if (got[j].element_dtype() == y_[j].element_dtype() && quick_close(got[j], y_[j], t)) continue;
            auto same_values = relaxed();
            same_values.nan_equal = true;  // a NaN the value function returns is the same NaN here
            auto cmp = compare(got[j], y_[j], same_values);
            if (!cmp.passes(t) || (is_floating(y_[j]) && got[j].element_dtype() != y_[j].element_dtype())) {
                const bool dtype_differs = got[j].element_dtype() != y_[j].element_dtype();
                if (!r_.comparison) {
                    r_.comparison = std::move(cmp);
                    r_.used = t;
                }
                record(label, gradient_outcome::output_inconsistent,
                       "output " + std::to_string(j) + " returned by " + what + " differs from the value function's" +
                           (dtype_differs ? " (dtype " + std::string(tensoracle::name(got[j].element_dtype())) + " vs " +
                                                std::string(tensoracle::name(y_[j].element_dtype())) + ")"
                                          : std::string()),
                       false);
                return false;
            }
        }
        return true;
    }

    // --- the function for finite differences ---------------------------------
    std::function<std::vector<double>(std::span<const double>)> fd_function(const tensors& x) const {
        tensors base = x;
        for (const auto i : wrt_) base[i] = tensor(x[i].to<double>());
        return [this, base](std::span<const double> flatx) {
            tensors xi = base;
            std::size_t off = 0;
            for (const auto i : wrt_) {
                auto a = array<double>::from_shape(base[i].shape());
                std::copy(flatx.begin() + static_cast<std::ptrdiff_t>(off),
                          flatx.begin() + static_cast<std::ptrdiff_t>(off + a.size()), a.data());
                off += a.size();
                xi[i] = tensor(a);
            }
            return flat_floating(e_.value(xi));
        };
    }
    std::vector<double> fd_along(const tensors& x, const tensors& u, const fd_options& fo) const {
        const auto f = fd_function(x);
        const auto x0 = flat(x, wrt_), uf = flat(u, wrt_);
        return fd_directional<double>(f, std::span<const double>(x0), std::span<const double>(uf), fo).derivative;
    }
    // What rounding the outputs to their dtype adds to a wide-stencil
    // difference quotient, times its step: sum|weights|·(u/2)·max|y|.
    double fd_rounding_times_step() const {
        dtype narrowest = r_.precision;
        for (const auto j : out_ids_) {
            if (unit_roundoff(y_[j].element_dtype()) > unit_roundoff(narrowest)) narrowest = y_[j].element_dtype();
        }
        const auto cw = weights(o_.fd.kind);
        double wsum = 0.0;
        for (int k = 0; k < cw.n; ++k) wsum += std::fabs(cw.w[static_cast<std::size_t>(k)]);
        return wsum * unit_roundoff(narrowest) * *std::max_element(y_max_.begin(), y_max_.end());
    }
    // That rounding in a difference quotient along u.
    double fd_rounding_noise(const tensors& u) const {
        const auto x0 = flat(x_, wrt_), uf = flat(u, wrt_);
        double xmax = 0.0;
        for (std::size_t k = 0; k < x0.size(); ++k) {
            if (uf[k] != 0) xmax = std::max(xmax, std::fabs(x0[k]));
        }
        const double umax = std::max(max_abs(uf), std::numeric_limits<double>::min());
        const double step = o_.fd.step.step(xmax) / umax;
        return fd_rounding_times_step() / step;
    }

    // --- one probe ------------------------------------------------------------
    struct probe_data {
        tensors u, w;
        std::optional<path_result> fwd, rev;
        std::vector<double> ju, jtw, uf, wf;
    };
    // Random directions u and cotangents w at inputs x with outputs y (x_, y_ by default).
    probe_data draw_probe() { return draw_probe(x_, y_); }
    probe_data draw_probe(const tensors& x, const tensors& y) {
        probe_data d;
        d.u.resize(x.size());
        d.w.resize(y.size());
        for (const auto i : wrt_) d.u[i] = random_like(g_, x[i]);
        for (const auto j : out_ids_) d.w[j] = random_like(g_, y[j]);
        d.uf = flat(d.u, wrt_);
        d.wf = flat(d.w, out_ids_);
        return d;
    }
    std::vector<double> flat_outputs(const tensors& ds) const {
        std::vector<double> v;
        for (const auto j : out_ids_) {
            const auto a = ds[j].to<double>();
            v.insert(v.end(), a.begin(), a.end());
        }
        return v;
    }

    void probe(int p) {
        auto d = draw_probe();
        const std::string tag = "probe " + std::to_string(p) + ": ";
        if (use_jvp_ && call("jvp", [&] { d.fwd = jvp_of(e_, x_, d.u); })) {
            if (!structure_ok(*d.fwd, true, p) || !outputs_consistent(d.fwd->outputs, "jvp", p)) {
                use_jvp_ = false;
                d.fwd.reset();
            }
        } else if (use_jvp_) {
            use_jvp_ = false;
        }
        if (use_vjp_ && call("vjp", [&] { d.rev = vjp_of(e_, x_, d.w); })) {
            if (!structure_ok(*d.rev, false, p) || !outputs_consistent(d.rev->outputs, "vjp", p)) {
                use_vjp_ = false;
                d.rev.reset();
            }
        } else if (use_vjp_) {
            use_vjp_ = false;
        }
        if (d.fwd) d.ju = flat_outputs(d.fwd->derivatives);
        if (d.rev) d.jtw = flat(d.rev->derivatives, wrt_);
        if (d.fwd && d.rev) {
            const double a = dot(d.ju, d.wf), b = dot(d.uf, d.jtw);
            const std::string what = tag + "<Ju, w> (jvp) vs <u, J^T w> (vjp)";
            ++compared_jvp_;  // compared, whatever the verdict
            ++compared_vjp_;
            if (scalar_close(a, b, std::max(abs_dot(d.ju, d.wf), abs_dot(d.uf, d.jtw)), gt_)) {
                agreed(what);
            } else {
                judge(what, gradient_outcome::reverse_forward_mismatch,
                      "<Ju, w> = " + fmt(a) + " but <u, J^T w> = " + fmt(b), d, std::nullopt);
            }
        }
        if (use_ref_) reference_checks(d, tag);
        // Finite differences in float64: the accurate wide stencil first; where it
        // disagrees, a second opinion from the fine stencil (a wide stencil that
        // straddles a kink next to x is wrong about a derivative that is right at x).
        if (!d.fwd && !d.rev) return;
        std::vector<double> fd;
        try {
            fd = fd_along(x_, d.u, o_.fd);
            if (!fd_agrees(d, fd, gt_)) {
                const auto fine = fd_along(x_, d.u, o_.fine_fd);
                if (fd_agrees(d, fine, gt_)) {
                    r_.log.push_back(tag + "the wide stencil disagrees, the fine one agrees (a kink within the wide step)");
                    fd = fine;
                }
            }
        } catch (const std::exception& ex) {
            fd_unavailable_ = std::string("finite differences unavailable: ") + ex.what();
            r_.log.push_back(tag + fd_unavailable_);
            return;
        }
        if (d.fwd) {
            const std::string what = tag + "Ju (jvp) vs finite differences";
            ++compared_jvp_;
            if (quick_close(d.ju, fd, gt_)) {
                agreed(what);
            } else {
                auto cmp = compare(vector_tensor(d.ju), vector_tensor(fd), relaxed());
                probe_data only = d;  // the filters judge this comparison alone
                only.rev.reset();
                only.jtw.clear();
                judge(what, gradient_outcome::gradient_fd_mismatch,
                      "Ju (jvp) differs from finite differences (actual: jvp, expected: FD, flattened over outputs)", only,
                      std::move(cmp), &fd);
            }
        }
        if (d.rev) {
            const double a = dot(fd, d.wf), b = dot(d.uf, d.jtw);
            const double scale = std::max(abs_dot(fd, d.wf), abs_dot(d.uf, d.jtw));
            probe_u_.push_back(d.uf);
            probe_w_.push_back(d.wf);
            probe_scale_.push_back(gt_.atol + gt_.rtol * scale);
            const std::string what = tag + "<u, J^T w> (vjp) vs finite differences";
            ++compared_vjp_;
            if (scalar_close(b, a, scale, gt_)) {
                agreed(what);
            } else {
                probe_data only = d;
                only.fwd.reset();
                only.ju.clear();
                judge(what, gradient_outcome::gradient_fd_mismatch,
                      "<u, J^T w> = " + fmt(b) + " but finite differences give " + fmt(a), only, std::nullopt, &fd);
            }
        }
    }

    // AD vs FD at tolerance t widened by `noise` (absolute, per output element; empty: none).
    bool fd_agrees(const probe_data& d, const std::vector<double>& fd, tolerance t,
                   const std::vector<double>& noise = {}) const {
        if (d.fwd) {
            if (d.ju.size() != fd.size()) return false;
            for (std::size_t k = 0; k < fd.size(); ++k) {
                const double allowed = t.atol + t.rtol * std::fabs(fd[k]) + (noise.empty() ? 0.0 : noise[k]);
                if (!(std::fabs(d.ju[k] - fd[k]) <= allowed)) return false;
            }
        }
        if (!d.rev) return true;
        const double extra = noise.empty() ? 0.0 : abs_dot(noise, d.wf);
        return scalar_close(dot(d.uf, d.jtw), dot(fd, d.wf), std::max(abs_dot(fd, d.wf), abs_dot(d.uf, d.jtw)),
                            {t.atol + extra, t.rtol});
    }

    // How far finite differences along u can be trusted when the outputs are
    // rounded (or computed) below float64: the rounding of the outputs divided
    // by the step, or the spread between the stencil at steps h, 2h and h/2
    // (Richardson's check: a resolved derivative does not move with the step),
    // whichever is larger. Per output element.
    std::vector<double> fd_noise(const tensors& x, const tensors& u, const std::vector<double>& fd) const {
        std::vector<double> noise(fd.size(), fd_rounding_noise(u));
        for (const double factor : {2.0, 0.5, 0.25}) {
            fd_options fo = o_.fd;
            fo.step.scale *= factor;
            try {
                const auto other = fd_along(x, u, fo);
                for (std::size_t k = 0; k < noise.size() && k < other.size(); ++k) {
                    noise[k] = std::max(noise[k], 2.0 * std::fabs(other[k] - fd[k]));
                }
            } catch (const std::exception&) {
            }
        }
        return noise;
    }

    void reference_checks(const probe_data& d, const std::string& tag) {
        const auto& ref = o_.reference;
        if (d.fwd && ref.jvp) {
            path_result rr;
            try {
                rr = jvp_of(ref, x_, d.u);
            } catch (const std::exception& ex) {
                r_.log.push_back(tag + "the reference's jvp throws: " + ex.what());
                return;
            }
            compare_per_slot(tag + "jvp vs reference, element by element", d.fwd->derivatives, rr.derivatives, out_ids_,
                             d, true);
        }
        if (d.rev && ref.vjp) {
            path_result rr;
            try {
                rr = vjp_of(ref, x_, d.w);
            } catch (const std::exception& ex) {
                r_.log.push_back(tag + "the reference's vjp throws: " + ex.what());
                return;
            }
            compare_per_slot(tag + "vjp vs reference, element by element", d.rev->derivatives, rr.derivatives, wrt_, d,
                             false);
        }
    }
    void compare_per_slot(const std::string& what, const tensors& got, const tensors& want,
                          const std::vector<std::size_t>& ids, const probe_data& d, bool forward) {
        ++(forward ? compared_jvp_ : compared_vjp_);
        for (const auto k : ids) {
            if (k >= want.size() || want[k].size() == 0) continue;
            if (quick_close(got[k], want[k], gt_)) continue;
            auto cmp = compare(got[k], want[k], relaxed());
            if (!cmp.passes(gt_)) {
                judge(what + " (" + (forward ? "output " : "input ") + std::to_string(k) + ")",
                      gradient_outcome::reference_mismatch,
                      std::to_string(cmp.mismatch_count(gt_)) + " of " + std::to_string(cmp.size()) +
                          " elements differ from the reference",
                      d, std::move(cmp));
                return;
            }
        }
        agreed(what);
    }

    // --- filters: a label excuses only the comparison it explains --------------
    void judge(const std::string& what, gradient_outcome kind, std::string detail, const probe_data& d,
               std::optional<comparison_report> cmp, const std::vector<double>* fd = nullptr) {
        unsigned labels = 0;
        bool excused = false;
        // An infinite derivative (Acos at 1) agrees with finite differences that
        // grow without bound as the step shrinks (same sign, the fine stencil at
        // least 10x the wide one); the other elements must still agree.
        if (fd != nullptr && d.rev && !d.fwd && std::any_of(d.jtw.begin(), d.jtw.end(), [](double v) { return std::isinf(v); })) {
            try {
                const double a = dot(d.uf, d.jtw), wide = dot(*fd, d.wf), fine = dot(fd_along(x_, d.u, o_.fine_fd), d.wf);
                if (std::isinf(a) && std::signbit(a) == std::signbit(fine) && std::fabs(fine) >= 10.0 * std::fabs(wide)) {
                    record(what, kind, detail + "; infinite slope where finite differences grow without bound", true,
                           static_cast<unsigned>(filter_label::non_differentiable_point));
                    return;
                }
            } catch (const std::exception&) {
            }
        }
        if (fd != nullptr && d.fwd && std::any_of(d.ju.begin(), d.ju.end(), [](double v) { return std::isinf(v); })) {
            try {
                const auto fine = fd_along(x_, d.u, o_.fine_fd);
                probe_data rest = d;
                rest.rev.reset();
                bool slopes = true;
                std::vector<double> ref = *fd;
                for (std::size_t k = 0; k < rest.ju.size() && k < ref.size(); ++k) {
                    if (!std::isinf(rest.ju[k])) continue;
                    slopes = slopes && std::signbit(fine[k]) == std::signbit(rest.ju[k]) &&
                             std::fabs(fine[k]) >= 10.0 * std::fabs(ref[k]);
                    rest.ju[k] = ref[k] = 0.0;
                }
                if (slopes && fd_agrees(rest, ref, gt_, computed_below_f64() ? fd_noise(x_, d.u, *fd) : std::vector<double>{})) {
                    labels |= static_cast<unsigned>(filter_label::non_differentiable_point);
                    record(what, kind, detail + "; infinite slope where finite differences grow without bound", true,
                           labels);
                    return;
                }
            } catch (const std::exception&) {
            }
        }
        // NaN in a derivative is explained only where the function itself is not
        // finite (the value, or finite differences of it).
        const bool ad_nan = any_nan(d.ju) || any_nan(d.jtw);
        if (ad_nan) {
            const auto yv = flat_floating(y_);
            const bool value_bad = std::any_of(yv.begin(), yv.end(), [](double v) { return !std::isfinite(v); });
            bool fd_bad = false;
            if (fd != nullptr) {
                for (std::size_t k = 0; k < d.ju.size() && k < fd->size(); ++k) {
                    if (std::isnan(d.ju[k]) && !std::isfinite((*fd)[k])) fd_bad = true;
                }
                if (!d.jtw.empty() && any_nan(d.jtw) && !std::isfinite(dot(*fd, d.wf))) fd_bad = true;
            }
            if (value_bad || fd_bad) {
                labels |= static_cast<unsigned>(filter_label::nan_in_gradient);
                excused = true;
            } else {
                detail += "; NaN in the derivative where the value and finite differences are finite";
            }
        }
        // Outputs rounded to a narrower dtype: finite differences carry that
        // rounding divided by the step. Excused only within that noise.
        if (!excused && !ad_nan && fd != nullptr && kind == gradient_outcome::gradient_fd_mismatch &&
            computed_below_f64()) {
            const auto noise = fd_noise(x_, d.u, *fd);
            if (fd_agrees(d, *fd, gt_, noise)) {
                labels |= static_cast<unsigned>(filter_label::precision_conversion);
                excused = true;
            } else {
                detail += "; beyond the finite differences' rounding noise (up to " + fmt(max_abs(noise)) +
                          ") of the narrower outputs";
            }
        }
        // Near a kink: re-check at points nudged off it.
        // (A NaN derivative at a kink counts too: the kink explains it when it is gone off the kink.)
        if (!excused && near_a_kink(d.u)) {
            if (agrees_off_the_kink()) {
                labels |= static_cast<unsigned>(filter_label::non_differentiable_point);
                excused = true;
            } else {
                detail += "; x is next to a non-differentiable point, but the disagreement persists at points nudged off it";
            }
        }
        if (cmp && !r_.comparison && !excused) r_.comparison = std::move(cmp);
        record(what, kind, std::move(detail), excused, labels);
    }

    // Finite differences run in float64; a function computed or rounded below
    // that (float32 inputs, or narrower outputs) carries its rounding into them.
    bool computed_below_f64() const {
        if (r_.precision != dtype::f64) return true;
        for (const auto j : out_ids_) {
            if (y_[j].element_dtype() != dtype::f64) return true;
        }
        return false;
    }

    // Along u, or along two fresh directions: one direction can miss a kink
    // (a tie between two elements u happens to move alike).
    bool near_a_kink(const tensors& u) {
        if (non_differentiable_here(u)) return true;
        for (int k = 0; k < 2; ++k) {
            tensors v(x_.size());
            for (const auto i : wrt_) v[i] = random_like(g_, x_[i]);
            if (non_differentiable_here(v)) return true;
        }
        return false;
    }

    // ∇Fuzz's filter: numerical derivatives along u at x and at N neighbours
    // x + U(-r, r); if they do not all agree, x sits at (or next to) a point
    // where the function is not differentiable.
    bool non_differentiable_here(const tensors& u) {
        if (o_.neighbours <= 0) return false;
        try {
            const auto f = fd_function(x_);
            const auto x0 = flat(x_, wrt_), uf = flat(u, wrt_);
            std::vector<std::vector<double>> ds;
            ds.push_back(fd_directional<double>(f, std::span<const double>(x0), std::span<const double>(uf),
                                                o_.neighbour_fd)
                             .derivative);
            for (int k = 0; k < o_.neighbours; ++k) {
                auto xn = x0;
                for (auto& v : xn) v += g_.uniform(-o_.neighbour_radius, o_.neighbour_radius);
                ds.push_back(fd_directional<double>(f, std::span<const double>(xn), std::span<const double>(uf),
                                                    o_.neighbour_fd)
                                 .derivative);
            }
            const tolerance t = o_.neighbour_tolerance;
            for (std::size_t a = 0; a < ds.size(); ++a) {
                for (std::size_t b = a + 1; b < ds.size(); ++b) {
                    if (!quick_close(ds[a], ds[b], t)) return true;
                }
            }
        } catch (const std::exception&) {
            return true;  // undefined right next to x: an edge of the domain
        }
        return false;
    }

    // Every comparison this probe makes, at x nudged off the kink with fresh
    // directions; a disagreement the kink caused is gone at one of them.
    bool agrees_off_the_kink() {
        // A nudge off a domain edge (Acos at 1) lands outside the domain: up to
        // four times as many tries as `nudges`, counting only nudges that land inside.
        int landed = 0;
        for (int k = 0; k < 4 * o_.nudges && landed < o_.nudges; ++k) {
            tensors xn = x_;
            for (const auto i : wrt_) {
                auto a = x_[i].to<double>();
                // At least a few units of the input's precision, or the nudge rounds away.
                const double r = std::max(o_.nudge_radius, 8.0 * unit_roundoff(x_[i].element_dtype()));
                for (auto& v : a) v += g_.uniform(-r, r) * std::max(1.0, std::fabs(v));
                xn[i] = tensor::from_array_as(a, x_[i].element_dtype());
            }
            try {
                const auto yv = flat_floating(e_.value(xn));
                if (std::any_of(yv.begin(), yv.end(), [](double v) { return !std::isfinite(v); })) continue;
            } catch (const std::exception&) {
                continue;
            }
            ++landed;
            if (agrees_at(xn)) return true;
        }
        return false;
    }
    bool agrees_at(const tensors& xn) {
        try {
            const auto yn = e_.value(xn);
            auto d = draw_probe(xn, yn);
            if (e_.jvp) {
                d.fwd = jvp_of(e_, xn, d.u);
                d.ju = flat_outputs(d.fwd->derivatives);
            }
            if (e_.vjp) {
                d.rev = vjp_of(e_, xn, d.w);
                d.jtw = flat(d.rev->derivatives, wrt_);
            }
            if (d.fwd && d.rev &&
                !scalar_close(dot(d.ju, d.wf), dot(d.uf, d.jtw), std::max(abs_dot(d.ju, d.wf), abs_dot(d.uf, d.jtw)), gt_)) {
                return false;
            }
            if (use_ref_) {
                if (d.fwd && o_.reference.jvp) {
                    const auto rr = jvp_of(o_.reference, xn, d.u);
                    for (const auto j : out_ids_) {
                        if (!quick_close(d.fwd->derivatives[j], rr.derivatives[j], gt_) &&
                            !compare(d.fwd->derivatives[j], rr.derivatives[j], relaxed()).passes(gt_)) {
                            return false;
                        }
                    }
                }
                if (d.rev && o_.reference.vjp) {
                    const auto rr = vjp_of(o_.reference, xn, d.w);
                    for (const auto i : wrt_) {
                        if (!quick_close(d.rev->derivatives[i], rr.derivatives[i], gt_) &&
                            !compare(d.rev->derivatives[i], rr.derivatives[i], relaxed()).passes(gt_)) {
                            return false;
                        }
                    }
                }
            }
            if (e_.jacobian && !e_.jvp && !e_.vjp) {
                d.ju = jacobian_times(e_.jacobian(xn), xn, yn, d.u);
                d.fwd = path_result{};
            }
            const bool noisy = computed_below_f64();
            for (const auto* fo : {&o_.fd, &o_.fine_fd}) {
                const auto fd = fd_along(xn, d.u, *fo);
                if (fd_agrees(d, fd, gt_, noisy ? fd_noise(xn, d.u, fd) : std::vector<double>{})) return true;
            }
            return false;
        } catch (const std::exception&) {
            return false;
        }
    }

    // --- the engine's full Jacobian ---------------------------------------------
    // Blocks are o-major, one per (output, input), shaped out_shape ++ in_shape.
    std::string block_problem(const jacobian_blocks& js, const tensors& y) const {
        if (js.outputs() != y.size() || js.inputs() != x_.size()) {
            return "returned " + std::to_string(js.outputs()) + " x " + std::to_string(js.inputs()) +
                   " Jacobian blocks, expected " + std::to_string(y.size()) + " x " + std::to_string(x_.size()) +
                   " (outputs x inputs)";
        }
        for (const auto j : out_ids_) {
            for (const auto i : wrt_) {
                const auto& b = js.block(j, i);
                shape_type want = y[j].shape();
                want.insert(want.end(), x_[i].shape().begin(), x_[i].shape().end());
                if (!is_floating(b) || b.shape() != want) {
                    return "the block for output " + std::to_string(j) + ", input " + std::to_string(i) +
                           " has shape " + shape_text(b.shape()) + " and dtype " +
                           std::string(tensoracle::name(b.element_dtype())) + ", expected a floating " + shape_text(want);
                }
            }
        }
        return {};
    }
    // J·u, flattened over the floating outputs.
    std::vector<double> jacobian_times(const jacobian_blocks& js, const tensors& x, const tensors& y, const tensors& u) const {
        std::vector<double> out;
        for (const auto j : out_ids_) {
            std::vector<double> acc(y[j].size(), 0.0);
            for (const auto i : wrt_) {
                const auto b = js.block(j, i).to<double>();
                const auto ui = u[i].to<double>();
                const std::size_t n = x[i].size();
                for (std::size_t a = 0; a < acc.size(); ++a) {
                    double s = 0.0;
                    for (std::size_t c = 0; c < n; ++c) s += b.data()[a * n + c] * ui.data()[c];
                    acc[a] += s;
                }
            }
            out.insert(out.end(), acc.begin(), acc.end());
        }
        return out;
    }

    // A provided jacobian() is always checked: fully against finite differences
    // when small (full_jacobians), else by J·u along random directions.
    void jacobian_path() {
        if (!e_.jacobian) return;
        jacobian_blocks js;
        if (!call("jacobian", [&] { js = e_.jacobian(x_); })) return;
        if (const auto problem = block_problem(js, y_); !problem.empty()) {
            record("jacobian result", gradient_outcome::malformed_derivative, "jacobian " + problem, false);
            path_failed_["jacobian"] = true;
            return;
        }
        jacobian_ = js;
        if (small()) return;  // compared in full below
        for (int p = 0; p < o_.probes; ++p) {
            auto d = draw_probe();
            d.ju = jacobian_times(js, x_, y_, d.u);
            d.fwd = path_result{};
            const std::string tag = "probe " + std::to_string(p) + ": J u (jacobian) ";
            if (use_jvp_) {
                path_result fr;
                if (call("jvp", [&] { fr = jvp_of(e_, x_, d.u); }) && structure_ok(fr, true, p)) {
                    auto cmp = compare(vector_tensor(d.ju), vector_tensor(flat_outputs(fr.derivatives)), relaxed());
                    ++compared_jacobian_;
                    if (cmp.passes(gt_)) {
                        agreed(tag + "vs jvp");
                    } else {
                        judge(tag + "vs jvp", gradient_outcome::reverse_forward_mismatch,
                              "the Jacobian times u differs from the jvp along u", d, std::move(cmp));
                    }
                }
            }
            std::vector<double> fd;
            try {
                fd = fd_along(x_, d.u, o_.fd);
                if (!fd_agrees(d, fd, gt_)) {
                    const auto fine = fd_along(x_, d.u, o_.fine_fd);
                    if (fd_agrees(d, fine, gt_)) fd = fine;
                }
            } catch (const std::exception& ex) {
                fd_unavailable_ = std::string("finite differences unavailable: ") + ex.what();
                continue;
            }
            auto cmp = compare(vector_tensor(d.ju), vector_tensor(fd), relaxed());
            ++compared_jacobian_;
            if (cmp.passes(gt_)) {
                agreed(tag + "vs finite differences");
            } else {
                judge(tag + "vs finite differences", gradient_outcome::gradient_fd_mismatch,
                      "the Jacobian times u differs from finite differences along u", d, std::move(cmp), &fd);
            }
        }
    }

    [[nodiscard]] bool small() const {
        std::size_t n = 0, m = 0;
        for (const auto i : wrt_) n += x_[i].size();
        for (const auto j : out_ids_) m += y_[j].size();
        return n <= o_.full_jacobian_limit && m <= o_.full_jacobian_limit;
    }

    void full_jacobians() {
        if (!small()) return;
        std::size_t n = 0, m = 0;
        for (const auto i : wrt_) n += x_[i].size();
        for (const auto j : out_ids_) m += y_[j].size();
        std::vector<double> jfd;
        try {
            const auto f = fd_function(x_);
            const auto x0 = flat(x_, wrt_);
            jfd = fd_jacobian<double>(f, std::span<const double>(x0), o_.fd);
        } catch (const std::exception& ex) {
            fd_unavailable_ = std::string("full finite-difference Jacobian unavailable: ") + ex.what();
            r_.log.push_back(fd_unavailable_);
            return;
        }
        std::vector<double> jfine;  // the fine stencil's Jacobian, computed on first need
        auto check = [&](const std::vector<double>& jad, const char* what, std::size_t& counter) {
            auto cmp = compare(vector_tensor(jad), vector_tensor(jfd), relaxed());
            if (!cmp.passes(gt_)) {
                try {
                    if (jfine.empty()) {
                        const auto x0 = flat(x_, wrt_);
                        jfine = fd_jacobian<double>(fd_function(x_), std::span<const double>(x0), o_.fine_fd);
                    }
                    auto fine = compare(vector_tensor(jad), vector_tensor(jfine), relaxed());
                    if (fine.passes(gt_)) cmp = std::move(fine);
                } catch (const std::exception&) {
                }
            }
            const std::string label = std::string("full ") + std::to_string(m) + "x" + std::to_string(n) +
                                      " Jacobian by " + what + " vs finite differences";
            ++counter;
            if (cmp.passes(gt_)) {
                agreed(label);
                return;
            }
            if (computed_below_f64() && !any_nan(jad)) {
                // Column c of the FD Jacobian carries the outputs' rounding divided by its step.
                const auto x0 = flat(x_, wrt_);
                const double noise = fd_rounding_times_step();
                std::vector<double> spread(jfd.size(), 0.0);  // Richardson: the stencil at 2h and h/2
                for (const double factor : {2.0, 0.5}) {
                    fd_options fo = o_.fd;
                    fo.step.scale *= factor;
                    try {
                        const auto other = fd_jacobian<double>(fd_function(x_), std::span<const double>(x0), fo);
                        for (std::size_t e = 0; e < spread.size() && e < other.size(); ++e) {
                            spread[e] = std::max(spread[e], 2.0 * std::fabs(other[e] - jfd[e]));
                        }
                    } catch (const std::exception&) {
                    }
                }
                bool within = true;
                for (std::size_t e = 0; e < jad.size() && within; ++e) {
                    const double allowed = gt_.atol + gt_.rtol * std::fabs(jfd[e]) +
                                           std::max(noise / o_.fd.step.step(x0[e % n]), spread[e]);
                    within = std::fabs(jad[e] - jfd[e]) <= allowed;
                }
                if (within) {
                    record(label, gradient_outcome::gradient_fd_mismatch,
                           "within the finite differences' rounding noise of the narrower outputs", true,
                           static_cast<unsigned>(filter_label::precision_conversion));
                    return;
                }
            }
            probe_data d = draw_probe();
            d.ju = jad;  // NaN screening looks at the derivative itself
            judge(label, gradient_outcome::gradient_fd_mismatch,
                  "row-major m x n, m = " + std::to_string(m) + " output elements, n = " + std::to_string(n) +
                      " input elements",
                  d, std::move(cmp));
        };
        if (use_jvp_) {  // column j = J e_j
            std::vector<double> jad(m * n, 0.0);
            std::size_t col = 0;
            for (const auto i : wrt_) {
                for (std::size_t k = 0; k < x_[i].size(); ++k, ++col) {
                    tensors u(x_.size());
                    for (const auto i2 : wrt_) u[i2] = tensor::zeros(x_[i2].element_dtype(), x_[i2].shape());
                    u[i] = unit(x_[i], k);
                    std::optional<path_result> r;
                    if (!call("jvp", [&] { r = jvp_of(e_, x_, u); })) return;
                    if (!structure_ok(*r, true, -1)) return;
                    const auto c = flat_outputs(r->derivatives);
                    for (std::size_t row = 0; row < m && row < c.size(); ++row) jad[row * n + col] = c[row];
                }
            }
            check(jad, "jvp columns", compared_jvp_);
        }
        if (use_vjp_) {  // row i = e_iᵀ J
            std::vector<double> jad(m * n, 0.0);
            std::size_t row = 0;
            for (const auto j : out_ids_) {
                for (std::size_t k = 0; k < y_[j].size(); ++k, ++row) {
                    tensors w(y_.size());
                    for (const auto j2 : out_ids_) w[j2] = tensor::zeros(y_[j2].element_dtype(), y_[j2].shape());
                    w[j] = unit(y_[j], k);
                    std::optional<path_result> r;
                    if (!call("vjp", [&] { r = vjp_of(e_, x_, w); })) return;
                    if (!structure_ok(*r, false, -1)) return;
                    const auto rr = flat(r->derivatives, wrt_);
                    for (std::size_t c = 0; c < n && c < rr.size(); ++c) jad[row * n + c] = rr[c];
                }
            }
            check(jad, "vjp rows", compared_vjp_);
        }
        if (jacobian_) {
            std::vector<double> jad(m * n, 0.0);
            std::size_t row0 = 0;
            for (const auto j : out_ids_) {
                std::size_t col0 = 0;
                for (const auto i : wrt_) {
                    const auto v = jacobian_->block(j, i).to<double>();
                    for (std::size_t a = 0; a < y_[j].size(); ++a) {
                        for (std::size_t b = 0; b < x_[i].size(); ++b) {
                            jad[(row0 + a) * n + col0 + b] = v.data()[a * x_[i].size() + b];
                        }
                    }
                    col0 += x_[i].size();
                }
                row0 += y_[j].size();
            }
            check(jad, "jacobian()", compared_jacobian_);
        }
    }
    std::optional<jacobian_blocks> jacobian_;

    // The smallest single-element error in Jᵀw that every VJP probe could have
    // missed: element k moves <u, Jᵀw> by u_k·δ, caught once that exceeds the
    // probe's tolerance; the worst element is the one all probes weigh least.
    void blind_spot() {
        if (small() || use_ref_ || probe_u_.empty()) return;
        double worst = 0.0;
        for (std::size_t k = 0; k < probe_u_[0].size(); ++k) {
            double best = std::numeric_limits<double>::infinity();
            for (std::size_t p = 0; p < probe_u_.size(); ++p) {
                const double uk = std::fabs(probe_u_[p][k]);
                if (uk > 0) best = std::min(best, probe_scale_[p] / uk);
            }
            worst = std::max(worst, best);
        }
        r_.projection_blind_spot = worst;
    }

    static tensor unit(const tensor& like, std::size_t k) {
        auto a = array<double>::from_shape(like.shape());
        std::fill(a.begin(), a.end(), 0.0);
        a.data()[k] = 1.0;
        return tensor::from_array_as(a, like.element_dtype());
    }

    void higher_order() {
        if (!e_.gradient) {
            r_.not_checked.push_back("order " + std::to_string(r_.order + 1) + ": the engine has no gradient()");
            if (r_.outcome == gradient_outcome::pass) r_.outcome = gradient_outcome::not_checked;
            return;
        }
        tensors w(y_.size());
        for (const auto j : out_ids_) w[j] = random_like(g_, y_[j]);
        engine e2;
        try {
            e2 = e_.gradient(w);
        } catch (const std::exception& ex) {
            record("gradient(w) call", gradient_outcome::exception_mismatch, std::string("gradient(w) throws: ") + ex.what(),
                   false);
            summarize();
            return;
        }
        oracle_options o2 = o_;
        o2.seed = o_.seed * 31 + 7;
        o2.reference = engine{};
        if (o_.reference.gradient) {
            try {
                o2.reference = o_.reference.gradient(w);
            } catch (const std::exception& ex) {
                r_.log.push_back(std::string("the reference's gradient(w) throws: ") + ex.what());
            }
        }
        checker next(e2, x_, o2, r_.order + 1);
        // The gradient has one output per input; only the differentiated ones are compared.
        r_.higher.push_back(next.run());
    }
};

}  // namespace detail

/// Runs the oracle on engine e at inputs x. The report's failed() is what a
/// test should assert on: a failure a filter explains is reported as excused,
/// and fully_checked() says whether every provided path was compared.
[[nodiscard]] inline gradient_report check_gradients(const engine& e, const tensors& x, const oracle_options& o = {}) {
    return detail::checker(e, x, o, 1).run();
}

}  // namespace tensoracle::ad
