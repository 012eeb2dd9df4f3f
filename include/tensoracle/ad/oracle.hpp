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
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tensoracle/accuracy/compare.hpp"
#include "tensoracle/accuracy/tolerance.hpp"
#include "tensoracle/ad/finite_difference.hpp"
#include "tensoracle/core/rng.hpp"
#include "tensoracle/core/tensor.hpp"

namespace tensoracle::ad {

using tensors = std::vector<tensor>;

/// What an AD path returns: the function's outputs and the derivatives (Ju per
/// output for JVP; Jᵀw per input for VJP). Derivatives may have any floating
/// dtype; inputs the engine does not differentiate may be empty tensors.
struct derivative_result {
    tensors outputs;
    tensors derivatives;
};

/// The engine under test, as callables. Only `value` is required.
struct engine {
    std::function<tensors(const tensors& x)> value;
    /// (x, w) -> outputs and Jᵀw, one tensor per input.
    std::function<derivative_result(const tensors& x, const tensors& w)> vjp;
    /// (x, u) -> outputs and Ju, one tensor per output.
    std::function<derivative_result(const tensors& x, const tensors& u)> jvp;
    /// x -> one tensor per (output o, input i), o-major, shaped out_shape ++ in_shape.
    std::function<tensors(const tensors& x)> jacobian;
    /// w -> the engine of g(x) = Jᵀ(x)·w (outputs: one per input), for order >= 2.
    std::function<engine(const tensors& w)> gradient;
};

enum class gradient_outcome {
    pass,
    nondeterministic,          ///< the value differs between identical runs
    output_inconsistent,       ///< an AD path returned other outputs than the value function
    reverse_forward_mismatch,  ///< ⟨Ju, w⟩ ≠ ⟨u, Jᵀw⟩, or a full Jacobian disagrees with an AD path
    gradient_fd_mismatch,      ///< an AD path disagrees with finite differences
    exception_mismatch,        ///< the value and an AD path disagree on throwing (or an AD path crashed)
    skipped,                   ///< nothing to check (no AD paths, or the value and every AD path threw)
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
    std::uint64_t seed = 0x5eed;
};

struct gradient_report {
    gradient_outcome outcome = gradient_outcome::skipped;
    unsigned labels = 0;
    int order = 1;
    dtype precision = dtype::f64;  ///< the dtype whose tolerances applied
    tolerance used{};
    std::string message;           ///< what failed and where
    std::optional<comparison_report> comparison;  ///< the failing elementwise comparison, if any
    std::vector<std::string> log;  ///< every check, passed or not
    std::vector<gradient_report> higher;  ///< order + 1

    [[nodiscard]] bool has(filter_label l) const { return (labels & static_cast<unsigned>(l)) != 0; }
    /// A failure not explained by a filter label (here or at a higher order).
    [[nodiscard]] bool failed() const {
        const bool here = outcome != gradient_outcome::pass && outcome != gradient_outcome::skipped && labels == 0;
        return here || std::any_of(higher.begin(), higher.end(), [](const gradient_report& h) { return h.failed(); });
    }
    [[nodiscard]] std::string to_string() const {
        std::ostringstream os;
        os << "gradient check, order " << order << ": " << name(outcome);
        for (const auto l : {filter_label::non_differentiable_point, filter_label::precision_conversion,
                             filter_label::nan_in_gradient}) {
            if (has(l)) os << " [likely false positive: " << name(l) << "]";
        }
        os << " (" << tensoracle::name(precision) << ", " << used << ")\n";
        if (!message.empty()) os << "  " << message << "\n";
        if (comparison) os << comparison->describe(used);
        for (const auto& line : log) os << "  - " << line << "\n";
        for (const auto& h : higher) os << h.to_string();
        return os.str();
    }
};

namespace detail {

inline bool is_floating(const tensor& t) { return info(t.element_dtype()).is_floating; }

inline std::vector<double> flat(const tensors& ts, const std::vector<std::size_t>& ids) {
    std::vector<double> v;
    for (const auto i : ids) {
        const auto d = ts[i].to<double>();
        v.insert(v.end(), d.begin(), d.end());
    }
    return v;
}
// Derivatives per differentiated input, flattened; an input the engine left
// out (missing or empty) counts as a zero derivative of the input's size.
inline std::vector<double> flat_like(const tensors& ds, const tensors& like, const std::vector<std::size_t>& ids) {
    std::vector<double> v;
    for (const auto i : ids) {
        if (i < ds.size() && ds[i].size() == like[i].size() && ds[i].size() != 0) {
            const auto d = ds[i].to<double>();
            v.insert(v.end(), d.begin(), d.end());
        } else if (i < ds.size() && ds[i].size() != 0) {
            throw error("tensoracle::ad::check_gradients", "the engine's derivative for input " + std::to_string(i) +
                                                               " has " + std::to_string(ds[i].size()) +
                                                               " elements, the input " + std::to_string(like[i].size()));
        } else {
            v.insert(v.end(), like[i].size(), 0.0);
        }
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
inline tensor vector_tensor(const std::vector<double>& v) {
    auto a = array<double>::from_shape({v.size()});
    std::copy(v.begin(), v.end(), a.data());
    return tensor(a);
}
// Scalars agree when |a - b| <= atol + rtol·scale, with scale the sum of
// absolute terms: an inner product that cancels must not demand more than its terms allow.
inline bool scalar_close(double a, double b, double scale, tolerance t) {
    if (std::isnan(a) || std::isnan(b)) return false;
    return std::fabs(a - b) <= t.atol + t.rtol * scale;
}
inline std::string fmt(double v) {
    std::ostringstream os;
    os.precision(10);
    os << v;
    return os.str();
}

/// A random tensor of t's dtype and shape with N(0, 1) entries.
inline tensor random_like(rng& g, const tensor& t) {
    auto a = array<double>::from_shape(t.shape());
    for (auto& v : a) v = g.normal();
    return tensor(a).cast(t.element_dtype());
}

class checker {
public:
    checker(const engine& e, const tensors& x, const oracle_options& o, int order)
        : e_(e), x_(x), o_(o), g_(o.seed + static_cast<std::uint64_t>(order)) {
        r_.order = order;
        wrt_ = o.wrt;
        if (wrt_.empty()) {
            for (std::size_t i = 0; i < x.size(); ++i) {
                if (is_floating(x[i])) wrt_.push_back(i);
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
        tensors y;
        std::string value_error;
        try {
            y = e_.value(x_);
        } catch (const std::exception& ex) {
            value_error = ex.what();
        }
        if (!value_error.empty()) return all_paths_throw(value_error);
        set_precision(y);
        const auto out_ids = floating_ids(y);
        if (wrt_.empty() || out_ids.empty()) {
            r_.outcome = gradient_outcome::skipped;
            r_.message = "no floating inputs or outputs to differentiate";
            return r_;
        }
        // 2. Determinism.
        for (int k = 1; k < o_.determinism_runs; ++k) {
            const auto y2 = e_.value(x_);
            bool same = y2.size() == y.size();
            for (std::size_t i = 0; same && i < y.size(); ++i) same = y[i].identical(y2[i]);
            if (!same) {
                return fail(gradient_outcome::nondeterministic,
                            "run " + std::to_string(k + 1) + " of the value function differs from run 1");
            }
        }
        r_.log.push_back("value deterministic over " + std::to_string(o_.determinism_runs) + " runs");
        if (!e_.vjp && !e_.jvp && !e_.jacobian) {
            r_.outcome = gradient_outcome::skipped;
            r_.message = "the engine provides no AD path (vjp, jvp or jacobian)";
            return r_;
        }
        const tolerance vt = o_.tolerances.get(r_.precision, r_.order - 1);
        const tolerance gt = o_.tolerances.get(r_.precision, r_.order);
        r_.used = gt;
        // 3.-5. per probe: consistency of values, rev vs fwd, vs FD.
        for (int p = 0; p < o_.probes; ++p) {
            tensors u(x_.size()), w(y.size());
            for (const auto i : wrt_) u[i] = random_like(g_, x_[i]);
            for (const auto j : out_ids) w[j] = random_like(g_, y[j]);
            std::optional<derivative_result> fwd, rev;
            if (e_.jvp && !call("jvp", [&] { fwd = e_.jvp(x_, u); })) return r_;
            if (e_.vjp && !call("vjp", [&] { rev = e_.vjp(x_, w); })) return r_;
            if (fwd && !outputs_consistent(y, fwd->outputs, vt, "jvp")) return r_;
            if (rev && !outputs_consistent(y, rev->outputs, vt, "vjp")) return r_;
            const auto ju = fwd ? flat_floating(pick(fwd->derivatives, out_ids)) : std::vector<double>{};
            const auto jtw = rev ? flat_like(rev->derivatives, x_, wrt_) : std::vector<double>{};
            const auto uf = flat(u, wrt_), wf = flat(w, out_ids);
            if (fwd && rev) {
                const double a = dot(ju, wf), b = dot(uf, jtw);
                if (!scalar_close(a, b, std::max(abs_dot(ju, wf), abs_dot(uf, jtw)), gt)) {
                    fail(gradient_outcome::reverse_forward_mismatch,
                         "probe " + std::to_string(p) + ": <Ju, w> = " + fmt(a) + " but <u, J^T w> = " + fmt(b));
                    return filtered(u, ju, jtw);
                }
                r_.log.push_back("probe " + std::to_string(p) + ": <Ju, w> = <u, J^T w> = " + fmt(a));
            }
            // Finite differences in float64: the accurate wide stencil first; where it
            // disagrees, a second opinion from the fine stencil (a wide stencil that
            // straddles a kink next to x is wrong about a derivative that is right at x).
            const auto agrees = [&](const std::vector<double>& fd) {
                if (fwd && !compare(vector_tensor(ju), vector_tensor(fd), relaxed()).passes(gt)) return false;
                return !rev || scalar_close(dot(uf, jtw), dot(fd, wf), std::max(abs_dot(fd, wf), abs_dot(uf, jtw)), gt);
            };
            std::vector<double> fd;
            try {
                fd = fd_along(x_, u, o_.fd);
                if (!agrees(fd)) {
                    const auto fine = fd_along(x_, u, o_.fine_fd);
                    if (agrees(fine)) {
                        r_.log.push_back("probe " + std::to_string(p) +
                                         ": the wide stencil disagrees, the fine one agrees (a kink within the wide step)");
                        continue;
                    }
                }
            } catch (const std::exception& ex) {
                r_.log.push_back(std::string("finite differences unavailable: ") + ex.what());
                continue;
            }
            if (fwd) {
                auto cmp = compare(vector_tensor(ju), vector_tensor(fd), relaxed());
                if (!cmp.passes(gt)) {
                    r_.comparison = std::move(cmp);
                    fail(gradient_outcome::gradient_fd_mismatch,
                         "probe " + std::to_string(p) + ": Ju (jvp) differs from finite differences (actual: jvp, "
                         "expected: FD, flattened over outputs)");
                    return filtered(u, ju, jtw);
                }
            }
            if (rev) {
                const double a = dot(fd, wf), b = dot(uf, jtw);
                if (!scalar_close(b, a, std::max(abs_dot(fd, wf), abs_dot(uf, jtw)), gt)) {
                    fail(gradient_outcome::gradient_fd_mismatch, "probe " + std::to_string(p) + ": <u, J^T w> (vjp) = " +
                                                                     fmt(b) + " but finite differences give " + fmt(a));
                    return filtered(u, ju, jtw);
                }
            }
            r_.log.push_back("probe " + std::to_string(p) + ": AD paths agree with finite differences");
        }
        if (!full_jacobians(y, out_ids, gt)) return r_;
        r_.outcome = gradient_outcome::pass;
        if (o_.order > r_.order) higher_order(y, out_ids);
        return r_;
    }

private:
    const engine& e_;
    tensors x_;
    oracle_options o_;
    rng g_;
    gradient_report r_;
    std::vector<std::size_t> wrt_;

    static compare_options relaxed() {
        compare_options c;
        c.require_same_dtype = false;
        c.nan_equal = false;
        return c;
    }
    static std::vector<std::size_t> floating_ids(const tensors& y) {
        std::vector<std::size_t> ids;
        for (std::size_t j = 0; j < y.size(); ++j) {
            if (is_floating(y[j])) ids.push_back(j);
        }
        return ids;
    }
    static tensors pick(const tensors& ts, const std::vector<std::size_t>& ids) {
        tensors out;
        for (const auto i : ids) {
            if (i < ts.size()) out.push_back(ts[i]);
        }
        return out;
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

    gradient_report& fail(gradient_outcome o, std::string msg) {
        r_.outcome = o;
        r_.message = std::move(msg);
        return r_;
    }

    template <class F>
    bool call(const char* what, F&& f) {
        try {
            f();
            return true;
        } catch (const std::exception& ex) {
            fail(gradient_outcome::exception_mismatch,
                 std::string("the value function succeeds but ") + what + " throws: " + ex.what());
            return false;
        } catch (...) {
            fail(gradient_outcome::exception_mismatch,
                 std::string("the value function succeeds but ") + what + " throws a non-standard exception");
            return false;
        }
    }

    gradient_report all_paths_throw(const std::string& value_error) {
        std::vector<std::string> returned;
        auto probe = [&](const char* what, auto&& f) {
            try {
                f();
                returned.emplace_back(what);
            } catch (...) {
            }
        };
        tensors u(x_.size());
        for (std::size_t i = 0; i < x_.size(); ++i) u[i] = x_[i];
        if (e_.jvp) probe("jvp", [&] { (void)e_.jvp(x_, u); });
        // The output shapes are unknown when the value throws: the inputs stand in as cotangents.
        if (e_.vjp) probe("vjp", [&] { (void)e_.vjp(x_, u); });
        if (e_.jacobian) probe("jacobian", [&] { (void)e_.jacobian(x_); });
        if (!returned.empty()) {
            std::string list;
            for (const auto& s : returned) list += (list.empty() ? "" : ", ") + s;
            return fail(gradient_outcome::exception_mismatch,
                        "the value function throws (" + value_error + ") but " + list + " returned normally");
        }
        r_.outcome = gradient_outcome::skipped;
        r_.message = "the value function and every AD path throw: " + value_error;
        return r_;
    }

    bool outputs_consistent(const tensors& y, const tensors& got, tolerance vt, const char* what) {
        if (got.size() != y.size()) {
            fail(gradient_outcome::output_inconsistent, std::string(what) + " returned " + std::to_string(got.size()) +
                                                            " outputs, the value function " + std::to_string(y.size()));
            return false;
        }
        for (std::size_t j = 0; j < y.size(); ++j) {
            auto cmp = compare(got[j], y[j], relaxed());
            if (!cmp.passes(is_floating(y[j]) ? vt : tolerance{})) {
                r_.comparison = std::move(cmp);
                r_.used = vt;
                fail(gradient_outcome::output_inconsistent,
                     "output " + std::to_string(j) + " returned by " + what + " differs from the value function's");
                return false;
            }
        }
        return true;
    }

    // x with the differentiated inputs in float64, and the FD function of their concatenation.
    std::vector<double> fd_along(const tensors& x, const tensors& u, const fd_options& fo) const {
        const auto f = fd_function(x);
        const auto x0 = flat(x, wrt_), uf = flat(u, wrt_);
        return fd_directional<double>(f, std::span<const double>(x0), std::span<const double>(uf), fo).derivative;
    }
    std::function<std::vector<double>(std::span<const double>)> fd_function(const tensors& x) const {
        tensors base = x;
        for (const auto i : wrt_) base[i] = x[i].cast(dtype::f64);
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

    bool full_jacobians(const tensors& y, const std::vector<std::size_t>& out_ids, tolerance gt) {
        std::size_t n = 0, m = 0;
        for (const auto i : wrt_) n += x_[i].size();
        for (const auto j : out_ids) m += y[j].size();
        if (n > o_.full_jacobian_limit || m > o_.full_jacobian_limit) return true;
        std::vector<double> jfd;
        try {
            const auto f = fd_function(x_);
            const auto x0 = flat(x_, wrt_);
            jfd = fd_jacobian<double>(f, std::span<const double>(x0), o_.fd);
        } catch (const std::exception& ex) {
            r_.log.push_back(std::string("full finite-difference Jacobian unavailable: ") + ex.what());
            return true;
        }
        std::vector<double> jfine;  // the fine stencil's Jacobian, computed on first need
        auto check = [&](const std::vector<double>& jad, const char* what) {
            auto cmp = compare(vector_tensor(jad), vector_tensor(jfd), relaxed());
            if (!cmp.passes(gt)) {
                try {
                    if (jfine.empty()) {
                        const auto x0 = flat(x_, wrt_);
                        jfine = fd_jacobian<double>(fd_function(x_), std::span<const double>(x0), o_.fine_fd);
                    }
                    if (compare(vector_tensor(jad), vector_tensor(jfine), relaxed()).passes(gt)) {
                        cmp = compare(vector_tensor(jad), vector_tensor(jfine), relaxed());
                    }
                } catch (const std::exception&) {
                }
            }
            if (cmp.passes(gt)) {
                r_.log.push_back(std::string("full ") + std::to_string(m) + "x" + std::to_string(n) + " Jacobian by " +
                                 what + " agrees with finite differences");
                return true;
            }
            r_.comparison = std::move(cmp);
            fail(gradient_outcome::gradient_fd_mismatch,
                 std::string("full Jacobian by ") + what + " differs from finite differences (row-major m x n, m = " +
                     std::to_string(m) + " output elements, n = " + std::to_string(n) + " input elements)");
            tensors u(x_.size());
            for (const auto i : wrt_) u[i] = random_like(g_, x_[i]);
            filtered(u, jad, {});
            return false;
        };
        if (e_.jvp) {  // column j = J e_j
            std::vector<double> jad(m * n, 0.0);
            std::size_t col = 0;
            for (const auto i : wrt_) {
                for (std::size_t k = 0; k < x_[i].size(); ++k, ++col) {
                    tensors u(x_.size());
                    for (const auto i2 : wrt_) u[i2] = tensor::zeros(x_[i2].element_dtype(), x_[i2].shape());
                    u[i] = unit(x_[i], k);
                    std::optional<derivative_result> r;
                    if (!call("jvp", [&] { r = e_.jvp(x_, u); })) return false;
                    const auto c = flat_floating(pick(r->derivatives, out_ids));
                    for (std::size_t row = 0; row < m && row < c.size(); ++row) jad[row * n + col] = c[row];
                }
            }
            if (!check(jad, "jvp columns")) return false;
        }
        if (e_.vjp) {  // row i = e_iᵀ J
            std::vector<double> jad(m * n, 0.0);
            std::size_t row = 0;
            for (const auto j : out_ids) {
                for (std::size_t k = 0; k < y[j].size(); ++k, ++row) {
                    tensors w(y.size());
                    for (const auto j2 : out_ids) w[j2] = tensor::zeros(y[j2].element_dtype(), y[j2].shape());
                    w[j] = unit(y[j], k);
                    std::optional<derivative_result> r;
                    if (!call("vjp", [&] { r = e_.vjp(x_, w); })) return false;
                    const auto rr = flat_like(r->derivatives, x_, wrt_);
                    for (std::size_t c = 0; c < n && c < rr.size(); ++c) jad[row * n + c] = rr[c];
                }
            }
            if (!check(jad, "vjp rows")) return false;
        }
        if (e_.jacobian) {
            tensors js;
            if (!call("jacobian", [&] { js = e_.jacobian(x_); })) return false;
            std::vector<double> jad(m * n, 0.0);
            std::size_t row0 = 0;
            for (const auto j : out_ids) {
                std::size_t col0 = 0;
                for (const auto i : wrt_) {
                    const std::size_t idx = j * x_.size() + i;
                    if (idx < js.size() && js[idx].size() == y[j].size() * x_[i].size()) {
                        const auto v = js[idx].to<double>();
                        for (std::size_t a = 0; a < y[j].size(); ++a) {
                            for (std::size_t b = 0; b < x_[i].size(); ++b) {
                                jad[(row0 + a) * n + col0 + b] = v.data()[a * x_[i].size() + b];
                            }
                        }
                    }
                    col0 += x_[i].size();
                }
                row0 += y[j].size();
            }
            if (!check(jad, "jacobian()")) return false;
        }
        return true;
    }

    static tensor unit(const tensor& like, std::size_t k) {
        auto a = array<double>::from_shape(like.shape());
        std::fill(a.begin(), a.end(), 0.0);
        a.data()[k] = 1.0;
        return tensor(a).cast(like.element_dtype());
    }

    // Labels a failure with every filter that explains it; the outcome stays.
    gradient_report filtered(const tensors& u, const std::vector<double>& ju, const std::vector<double>& jtw) {
        if (any_nan(ju) || any_nan(jtw)) r_.labels |= static_cast<unsigned>(filter_label::nan_in_gradient);
        for (const auto i : wrt_) {
            if (outputs_bits_below(static_cast<int>(info(x_[i].element_dtype()).bits))) {
                r_.labels |= static_cast<unsigned>(filter_label::precision_conversion);
            }
        }
        if (non_differentiable_here(u)) r_.labels |= static_cast<unsigned>(filter_label::non_differentiable_point);
        return r_;
    }
    // An output narrower than the inputs, either as given or as finite
    // differences feed them (float64): the function rounds, and differences
    // of rounded values cannot resolve its derivative.
    bool outputs_bits_below(int bits) const {
        try {
            for (const auto& t : e_.value(x_)) {
                if (is_floating(t) && static_cast<int>(info(t.element_dtype()).bits) < bits) return true;
            }
            tensors x64 = x_;
            for (const auto i : wrt_) x64[i] = x_[i].cast(dtype::f64);
            for (const auto& t : e_.value(x64)) {
                if (is_floating(t) && info(t.element_dtype()).bits < 64) return true;
            }
        } catch (...) {
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
                    if (!compare(vector_tensor(ds[a]), vector_tensor(ds[b]), relaxed()).passes(t)) return true;
                }
            }
        } catch (const std::exception&) {
            return true;  // undefined right next to x: an edge of the domain
        }
        return false;
    }

    void higher_order(const tensors& y, const std::vector<std::size_t>& out_ids) {
        if (!e_.gradient) {
            r_.log.push_back("order " + std::to_string(r_.order + 1) + " not checked: the engine has no gradient()");
            return;
        }
        tensors w(y.size());
        for (const auto j : out_ids) w[j] = random_like(g_, y[j]);
        engine e2;
        try {
            e2 = e_.gradient(w);
        } catch (const std::exception& ex) {
            fail(gradient_outcome::exception_mismatch, std::string("gradient(w) throws: ") + ex.what());
            return;
        }
        oracle_options o2 = o_;
        o2.seed = o_.seed * 31 + 7;
        checker next(e2, x_, o2, r_.order + 1);
        // The gradient has one output per input; only the differentiated ones are compared.
        r_.higher.push_back(next.run());
    }
};

}  // namespace detail

/// Runs the oracle on engine e at inputs x. The report's failed() is what a
/// test should assert on: a failure labelled by a filter is reported, not failed.
[[nodiscard]] inline gradient_report check_gradients(const engine& e, const tensors& x, const oracle_options& o = {}) {
    return detail::checker(e, x, o, 1).run();
}

}  // namespace tensoracle::ad
