// tensoracle: inputs and weights under which no node of a graph produces
// NaN or Inf (NNSmith's Algorithm 3, gradient-guided value search).
//
// Start from random values; run the graph; at the first node whose output
// is not finite, take the first of its domain rules whose loss is positive
// (spec::domain_rule: a hinge loss that is zero inside the op's domain),
// back-propagate that loss's gradient to the graph's free values (inputs and
// weights) through the op rules' VJPs with proxy derivatives (so ReLU,
// Floor... do not stop the gradient), take an Adam step, and repeat; the
// optimizer's state resets whenever the target (node, rule) changes.
// Zero gradients re-draw the values; non-finite ones are replaced by random
// values. The budget is a number of graph evaluations, so a search is
// reproducible from its seed. `sampling` mode is the baseline: fresh
// uniform values every evaluation, no gradients.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensoracle/ad/graph.hpp"
#include "tensoracle/gen/generator.hpp"
#include "tensoracle/graph/interpreter.hpp"
#include "tensoracle/ops/nn/detail/fast_gemm.hpp"

namespace tensoracle::gen {

struct search_options {
    std::size_t iterations = 256;  ///< graph evaluations at most
    double learning_rate = 0.5;    ///< Adam's step size (NNSmith: 0.5)
    /// Initial range of floating values without a hinted range.
    std::pair<double, double> init{-4.0, 4.0};
    /// The sampling baseline: re-draw every value from `baseline_range` each evaluation.
    bool sampling = false;
    std::pair<double, double> baseline_range{1.0, 9.0};
    /// The first start is the sampling baseline's draw (NNSmith's protocol for
    /// comparing the two: the same initial data); later starts use `init` and
    /// the hinted ranges. Off by default: a campaign wants signs and magnitudes
    /// beyond [1, 9] in its data.
    bool start_from_baseline = false;
    /// Work units the search may spend (a node costs its op's work estimate,
    /// spec::hints::work, or its element count, per evaluation, and three times
    /// that per VJP through it): the search fails once it is spent, so a graph
    /// that takes many steps through a large Conv is left for another graph
    /// rather than searched for minutes. Deterministic, unlike a time limit.
    double work_budget = static_cast<double>(default_search_work);
    /// A start whose target loss has not dropped by 1% for this many steps is left
    /// for the next start, as is one that has taken `steps_per_start` steps in all
    /// (targets that keep trading places). Short starts let a 256-evaluation budget
    /// reach the later start kinds and scales: twice these lengths succeed on fewer
    /// graphs of every sample of the search benchmark, with more evaluations per
    /// graph (docs/FIGURES.md).
    std::size_t stalled_steps_per_start = 24;
    std::size_t steps_per_start = 48;
    /// A start that has spent this share of `work_budget` is left for the next
    /// one too: otherwise a slowly shrinking loss through a large Conv can spend
    /// the whole budget in the first start, and the later start kinds (all zeros,
    /// which makes a Cosh of that Conv finite at once) are never tried.
    double work_share_per_start = 0.25;
};

struct search_result {
    bool success = false;
    std::size_t evaluations = 0;
    std::size_t restarts = 0;  ///< re-draws after zero or unexplained gradients
    std::size_t gradient_steps = 0;
    double work = 0.0;         ///< work units spent (search_options::work_budget)
    bool out_of_work = false;  ///< stopped by work_budget, not by iterations
    std::string last_failure;  ///< the last failing node and why
    std::string failing_op;    ///< op_type of that node (empty on success)
    /// Data of every free value (graph inputs and weights).
    std::map<std::string, tensor, std::less<>> values;
    /// Every value of the successful run (graph outputs included).
    std::map<std::string, tensor, std::less<>> run;
};

namespace detail {

struct free_value {
    std::string name;
    dtype type = dtype::f32;
    shape_type shape;
    std::pair<double, double> range;
    array<double> x, m, v;  // master copy (floating) and Adam moments
    /// `x` in its dtype, kept from a draw until the next evaluation takes it
    /// (a fresh draw is already in its dtype: converting back costs a rounding
    /// per element, float16's in software).
    std::optional<tensor> drawn;
    /// `x` does not hold the draw yet: most graphs succeed at their first
    /// evaluation and never need it, so it is widened from the drawn tensor
    /// only when a gradient step needs it.
    bool x_pending = false;
    /// Integer data drawn without zeros: a node it feeds divided by zero.
    bool nonzero = false;
};

/// Names of the values node `k` of `m` reads, directly or through other nodes.
inline std::set<std::string, std::less<>> upstream_values(const graph::graph& m, std::size_t k) {
    std::map<std::string_view, std::size_t> producer;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        for (const auto& o : m.nodes[i].outputs) producer.emplace(o, i);
    }
    std::set<std::string, std::less<>> seen;
    std::vector<std::size_t> todo{k};
    std::vector<char> visited(m.nodes.size(), 0);
    while (!todo.empty()) {
        const std::size_t i = todo.back();
        todo.pop_back();
        if (i >= m.nodes.size() || visited[i] != 0) continue;
        visited[i] = 1;
        for (const auto& in : m.nodes[i].inputs) {
            if (in.empty() || !seen.insert(in).second) continue;
            if (const auto it = producer.find(in); it != producer.end()) todo.push_back(it->second);
        }
    }
    return seen;
}

/// The master copy in the value's dtype (value_cast semantics, as tensor::cast),
/// converted in one pass: this runs for every free value at every evaluation.
inline tensor to_dtype(const array<double>& a, dtype d) {
    shape_type dims(a.shape().begin(), a.shape().end());
    auto out = tensor::for_overwrite(d, dims);
    out.visit([&](auto dst) {
        using T = typename decltype(dst)::value_type;
        for (std::size_t k = 0; k < dst.size(); ++k) dst[k] = value_cast<T>(a.data()[k]);
    });
    return out;
}

/// Whether every element is finite, read in the tensor's own dtype (a copy
/// widened to double would cost an allocation and a pass per node and evaluation).
inline bool all_finite(const tensor& t) {
    if (!info(t.element_dtype()).is_floating) return true;
    return t.visit([](auto v) {
        using T = typename decltype(v)::value_type;
        if constexpr (std::is_floating_point_v<T>) {
            return ops::nn::all_finite<T>(v);  // the kernels' vectorized check
        } else if constexpr (dtype_traits<T>::is_floating) {
            // On the bits, in blocks without an early exit, so that the loop vectorizes.
            constexpr std::size_t block = 32;
            unsigned any = 0;
            std::size_t i = 0;
            for (; i + block <= v.size(); i += block) {
                unsigned lane = 0;
                for (std::size_t j = 0; j < block; ++j) lane |= tensoracle::isfinite(v[i + j]) ? 0u : 1u;
                any |= lane;
            }
            for (; i < v.size(); ++i) any |= tensoracle::isfinite(v[i]) ? 0u : 1u;
            return any == 0;
        } else {
            return true;
        }
    });
}

/// The first node that fails on `values` (mutated: gains every computed value).
struct failure {
    std::size_t node = 0;
    bool thrown = false;
    std::string reason;
};

/// The node's domain rules (none when its attributes do not parse) and a copy of its
/// arguments (an absent optional input as an empty tensor), as the rules take them.
inline std::vector<spec::domain_rule> domain_rules(const ad::detail::node_call& call) {
    try {
        return call.op->domain(call.op->normalize_attributes(call.attributes));
    } catch (const error&) {
        return {};
    }
}
inline std::vector<tensor> rule_arguments(const ad::detail::node_call& call) {
    std::vector<tensor> args;
    for (const auto* a : call.args) args.push_back(a != nullptr ? *a : tensor());
    return args;
}
/// The first rule whose loss is positive on `args`, with that loss.
inline std::optional<std::pair<std::size_t, double>> first_violated_rule(const std::vector<spec::domain_rule>& rules,
                                                                         const std::vector<tensor>& args) {
    for (std::size_t r = 0; r < rules.size(); ++r) {
        double loss = 0.0;
        try {
            loss = rules[r].loss(args);
        } catch (const error&) {
            loss = 0.0;
        }
        if (loss > 0.0) return std::make_pair(r, loss);
    }
    return std::nullopt;
}

/// A node's cost in work units: the work its kernel does at these inputs
/// (spec::hints::visits), else its op's work estimate at these shapes
/// (spec::hints::work), at least the elements it reads and writes.
inline double node_work(const ad::detail::node_call& call, const std::vector<tensor>& out) {
    double elements = 0.0;
    for (const auto* a : call.args) elements += a != nullptr ? static_cast<double>(a->size()) : 0.0;
    for (const auto& o : out) elements += static_cast<double>(o.size());
    const auto hints = call.op->hints();
    if (!hints.work_estimate && !hints.visited_work) return elements;
    try {
        const auto ctx = ad::make_context(*call.op, call.args, call.attributes);
        if (hints.visited_work) return std::max(elements, hints.visited_work(ctx));
        std::vector<std::vector<spec::expr>> shapes;
        for (const auto& o : out) {
            std::vector<spec::expr> dims;
            for (const auto d : o.shape()) dims.emplace_back(static_cast<std::int64_t>(d));
            shapes.push_back(std::move(dims));
        }
        return std::max(elements, static_cast<double>(hints.work_estimate(ctx, shapes).eval(ctx.env())));
    } catch (const error&) {
        return elements;
    }
}

/// Runs the graph's nodes in order until one fails. `work` caches each node's
/// cost (negative: not known yet; shapes do not change between evaluations)
/// and `spent` gains the cost of the nodes run.
inline std::optional<failure> run_until_failure(const graph::graph& m,
                                                std::map<std::string, tensor, std::less<>>& values,
                                                std::vector<double>& work, double& spent) {
    work.resize(m.nodes.size(), -1.0);
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        const auto& n = m.nodes[i];
        const auto call = ad::detail::prepare(n, values);
        std::vector<tensor> out;
        try {
            out = spec::evaluate(*call.op, call.args, call.attributes);
        } catch (const error& e) {
            return failure{i, true, n.label() + ": " + e.what()};
        }
        if (work[i] < 0.0) work[i] = node_work(call, out);
        spent += work[i];
        for (std::size_t o = 0; o < n.outputs.size() && o < out.size(); ++o) {
            if (!all_finite(out[o])) {
                return failure{i, false, n.label() + ": output " + std::to_string(o) + " is not finite"};
            }
        }
        // An integer output has no NaN to show that it left the op's domain (Pow of an
        // integer base wraps or casts a NaN, which runtimes do differently): check the rules.
        const bool discrete = std::any_of(out.begin(), out.end(), [](const tensor& t) { return !info(t.element_dtype()).is_floating; });
        if (discrete) {
            const auto rules = domain_rules(call);
            if (const auto v = first_violated_rule(rules, rule_arguments(call))) {
                return failure{i, false, n.label() + ": integer output outside the domain (" + rules[v->first].description + ")"};
            }
        }
        for (std::size_t o = 0; o < n.outputs.size() && o < out.size(); ++o) {
            if (!n.outputs[o].empty()) values.insert_or_assign(n.outputs[o], std::move(out[o]));
        }
    }
    return std::nullopt;
}

/// Simultaneous-perturbation estimate of a loss's gradient (rules without an
/// analytic gradient): the average of (L(x + c D) - L(x - c D)) / (2c) * D
/// over a few random sign vectors D.
inline std::vector<tensor> estimate_gradient(const spec::domain_rule& rule, std::span<const tensor> in, rng& g) {
    std::vector<array<double>> x, acc;
    for (const auto& t : in) {
        x.push_back(info(t.element_dtype()).is_floating ? t.to<double>() : array<double>::from_shape({0}));
        acc.push_back(array<double>::from_shape(x.back().shape()));
        acc.back().fill(0.0);
    }
    constexpr int directions = 4;
    for (int r = 0; r < directions; ++r) {
        std::vector<array<double>> delta;
        std::vector<tensor> plus(in.begin(), in.end()), minus(in.begin(), in.end());
        for (std::size_t i = 0; i < in.size(); ++i) {
            delta.push_back(array<double>::from_shape(x[i].shape()));
            if (x[i].size() == 0) continue;
            auto p = x[i], q = x[i];
            for (std::size_t k = 0; k < x[i].size(); ++k) {
                const double d = g.bernoulli(0.5) ? 1.0 : -1.0;
                const double c = 1e-3 * std::max(1.0, std::fabs(x[i].data()[k]));
                delta[i].data()[k] = d * c;
                p.data()[k] += d * c;
                q.data()[k] -= d * c;
            }
            plus[i] = tensor::from_array_as(p, in[i].element_dtype());
            minus[i] = tensor::from_array_as(q, in[i].element_dtype());
        }
        const double diff = rule.loss(plus) - rule.loss(minus);
        if (!std::isfinite(diff)) continue;
        for (std::size_t i = 0; i < in.size(); ++i) {
            for (std::size_t k = 0; k < x[i].size(); ++k) {
                const double c = delta[i].data()[k];
                acc[i].data()[k] += diff / (2.0 * c) / directions;
            }
        }
    }
    std::vector<tensor> out;
    for (auto& a : acc) out.emplace_back(a);
    return out;
}

}  // namespace detail

/// Finds data for the free values of `sketch` (its graph inputs and weights
/// not fixed by the generator) under which every node's output is finite.
[[nodiscard]] inline search_result search_inputs(const graph_sketch& sketch, rng& g,
                                                 const search_options& options = {}) {
    // Settings that would make the search take no step, or never end a start: named, not run.
    // (The message is built only on failure: this runs once per searched graph.)
    auto require = [](bool ok, const char* what, double got) {
        if (!ok) throw error("tensoracle::gen::search_inputs", std::string("search_options: ") + what + ", got " + std::to_string(got));
    };
    require(std::isfinite(options.learning_rate) && options.learning_rate > 0.0, "learning_rate must be finite and positive",
            options.learning_rate);
    require(options.work_budget > 0.0, "work_budget must be positive", options.work_budget);
    require(options.work_share_per_start > 0.0 && options.work_share_per_start <= 1.0,
            "work_share_per_start must lie in (0, 1]", options.work_share_per_start);
    const auto& m = sketch.model;
    search_result result;
    std::vector<detail::free_value> free;
    auto add_free = [&](const std::string& name, dtype d, const shape_type& s) {
        detail::free_value f;
        f.name = name;
        f.type = d;
        f.shape = s;
        const auto it = sketch.ranges.find(name);
        f.range = it != sketch.ranges.end() ? it->second : options.init;
        free.push_back(std::move(f));
    };
    for (const auto& in : m.inputs) add_free(in.name, in.type, in.shape ? *in.shape : shape_type{});
    for (const auto& [name, t] : m.initializers) {
        if (sketch.fixed.count(name) == 0) add_free(name, t.element_dtype(), t.shape());
    }
    double scale = 1.0;     // range scale of the current start (see restart)
    bool positive = false;  // the current start draws only the positive part of each range
    bool from_one = false;  // the current start draws values >= 1 (NNSmith's sampling range starts there)
    bool some_zero = false;  // the current start sets each free value to all zeros with probability 1/2
    bool floats_zero = false;  // ... and every floating one to all zeros
    bool some_one = false;  // the current start sets each free value to all ones with probability 1/2
    auto draw = [&](detail::free_value& f, bool baseline) {
        auto r = baseline ? options.baseline_range : f.range;
        if (!baseline && positive && r.second > 0.0) {
            // Integers from 1: a zero is what divisions and Relu paths fail on, and no gradient moves it.
            r.first = std::max(r.first, info(f.type).is_floating ? 0.0 : 1.0 / scale);
        }
        double lo = baseline ? r.first : r.first * scale, hi = baseline ? r.second : r.second * scale;
        if (!baseline && from_one && r.second >= 1.0) {
            // Domains such as x > 1 in every element (Log of Acosh, Log of a ReduceMin of Log)
            // are rarely all met by a draw that starts below 1, and a gradient through a
            // reduction moves one element per step.
            lo = 1.0;
            hi = std::max(hi, 2.0);
        }
        tensor t = spec::random_values(g, f.type, f.shape, std::min(lo, hi), std::max(hi, lo + 1e-9));
        // x is widened from t only where a start below changes the draw; an
        // unchanged draw goes to the evaluation as it is, and x is widened
        // later if a gradient step needs it (most graphs succeed first time).
        f.x_pending = true;
        auto widen = [&]() {
            if (f.x_pending) f.x = t.to<double>();
            f.x_pending = false;
        };
        bool changed = false;  // x no longer holds the draw t
        if (f.type == dtype::boolean && !baseline && (positive || from_one)) {
            // No gradient moves a bool: starts take turns over random, all
            // false (Atanh of a Cast needs no true) and all true (Log of one).
            widen();
            f.x.fill(from_one ? 1.0 : 0.0);
            changed = true;
        }
        if (!baseline && some_zero && ((floats_zero && info(f.type).is_floating) || g.bernoulli(0.5))) {
            if (f.x_pending) f.x = array<double>::from_shape(t.shape());
            f.x_pending = false;
            f.x.fill(0.0);
            changed = true;
        }
        if (!baseline && some_one && g.bernoulli(0.5)) {
            if (f.x_pending) f.x = array<double>::from_shape(t.shape());
            f.x_pending = false;
            f.x.fill(1.0);
            changed = true;
        }
        if (f.nonzero && !info(f.type).is_floating && f.type != dtype::boolean) {
            widen();
            for (auto& v : f.x) {
                if (v == 0.0) v = positive || g.bernoulli(0.5) || !info(f.type).is_signed ? 1.0 : -1.0;
            }
            changed = true;
        }
        // A draw that round-trips through double exactly (every floating one;
        // integers below 2^53) is what to_dtype(x) would give: keep it.
        const bool exact = info(f.type).is_floating || std::max(std::abs(lo), std::abs(hi)) < 0x1p52;
        f.drawn.reset();
        if (!changed && exact) {
            f.drawn = std::move(t);
        } else {
            widen();
        }
        // Adam's moments are (re)set when a target is chosen, before any step:
        // most graphs succeed at their first evaluation and never need them.
    };
    for (auto& f : free) draw(f, options.sampling || options.start_from_baseline);
    std::pair<std::size_t, std::size_t> target{SIZE_MAX, SIZE_MAX};
    std::set<std::pair<std::size_t, std::size_t>> visited;  // (node, rule) targets since the last draw
    double step_scale = 1.0;
    std::size_t adam_t = 0, stalled_steps = 0, steps_since_start = 0;
    double work_at_start = 0.0;  // result.work when the current start began
    double best_loss = 0.0;  // lowest loss on the current target
    // A fresh random start. Ranges cycle through scales 1, 1/2, ..., 1/128:
    // small values avoid overflow and the flat zones of integer and
    // piecewise-constant paths no gradient crosses; large ones reach domains
    // such as x >= 1. Starts take turns: the whole range; one where each free
    // value is all zeros or not, at random (domains only an exact value
    // reaches: Atanh(Selu(Sign(y / x))) needs y = 0, Ceil(Cosh(x)) is 1 only
    // at x = 0, a sum of Pow(x, e) over 60,000 float16 elements fits at e = 0;
    // a gradient steps over such points), every other such start with every
    // floating value zero (a product of Ceil(Cosh(Tan(w))) padded with a free
    // constant needs both at 0: 1 chance in 4 otherwise; it adds 8 successes
    // over the search benchmark's five samples); the positive part of each range (a
    // domain behind a sign change, Acosh(Floor(1 / x)) needs x > 0 in every
    // element, is a local minimum the gradient does not leave); values from 1 up,
    // every other such start with each free value all ones with probability 1/2
    // (a ReduceProd of 60,000 bfloat16 elements is finite and non-zero when they
    // are about 1: exactly 1 is the one draw that makes it so).
    auto restart = [&]() {
        ++result.restarts;
        const std::size_t kind = result.restarts % 4;
        some_zero = kind == 1;
        floats_zero = some_zero && (result.restarts / 4) % 2 == 0;
        positive = kind == 2;
        from_one = kind == 3;
        some_one = from_one && (result.restarts / 4) % 2 == 1;
        scale = std::ldexp(1.0, -static_cast<int>((result.restarts / 4) % 8));
        for (auto& f : free) draw(f, false);
        target = {SIZE_MAX, SIZE_MAX};
        visited.clear();
        step_scale = 1.0;
        steps_since_start = 0;
        work_at_start = result.work;
    };

    std::vector<double> node_work;
    for (; result.evaluations < options.iterations;) {
        if (result.work >= options.work_budget) {
            result.out_of_work = true;
            break;
        }
        ++result.evaluations;
        std::map<std::string, tensor, std::less<>> values;
        for (const auto& [name, t] : m.initializers) {
            if (sketch.fixed.count(name) != 0) values.emplace(name, t);
        }
        for (auto& f : free) {
            if (f.drawn) {
                values.insert_or_assign(f.name, std::move(*f.drawn));
                f.drawn.reset();
            } else {
                values.insert_or_assign(f.name, detail::to_dtype(f.x, f.type));
            }
        }
        const auto fail = detail::run_until_failure(m, values, node_work, result.work);
        if (!fail) {
            result.success = true;
            result.last_failure.clear();
            result.failing_op.clear();
            for (const auto& f : free) result.values.emplace(f.name, values.at(f.name));
            result.run = std::move(values);
            return result;
        }
        result.last_failure = fail->reason;
        result.failing_op = m.nodes[fail->node].op_type;
        if (options.sampling) {
            for (auto& f : free) draw(f, true);
            continue;
        }
        // The gradient step below works on x: widen the draws the evaluation took.
        for (auto& f : free) {
            if (f.x_pending) {
                f.x = values.at(f.name).to<double>();
                f.x_pending = false;
            }
        }
        const auto& n = m.nodes[fail->node];
        const auto call = ad::detail::prepare(n, values);
        const auto args = detail::rule_arguments(call);
        // The first violated domain rule of the failing node (none for a thrown error).
        const auto rules = detail::domain_rules(call);
        std::optional<std::size_t> which;
        double loss = 0.0;
        if (!fail->thrown) {
            if (const auto v = detail::first_violated_rule(rules, args)) std::tie(which, loss) = *v;
        }
        if (!which) {
            // Nothing to descend on (an overflow no rule describes, or an
            // integer error): re-draw at the next scale. After an integer
            // division by zero, the integer data the node reads is drawn
            // without zeros; other integer data may need its zeros (an
            // Atanh of a Cast is finite only at 0).
            if (fail->thrown) {
                const auto upstream = detail::upstream_values(m, fail->node);
                for (auto& f : free) f.nonzero = f.nonzero || upstream.count(f.name) != 0;
            }
            restart();
            continue;
        }
        if (target != std::make_pair(fail->node, *which)) {
            // Back to a target fixed before: two rules pull against each other
            // (Acos then Atanh of it). Adam's first steps are about lr whatever
            // the gradient, so halve the step until it fits their common interval.
            if (!visited.insert({fail->node, *which}).second) step_scale = std::max(step_scale * 0.5, 1.0 / 64.0);
            target = {fail->node, *which};
            stalled_steps = 0;
            best_loss = loss;
            adam_t = 0;
            for (auto& f : free) {
                if (f.m.shape() != f.x.shape()) f.m = array<double>::from_shape(f.x.shape());
                if (f.v.shape() != f.x.shape()) f.v = array<double>::from_shape(f.x.shape());
                f.m.fill(0.0);
                f.v.fill(0.0);
            }
        }
        // d loss / d (node inputs), then back through the nodes before it.
        std::vector<tensor> grads =
            rules[*which].gradient ? rules[*which].gradient(args) : detail::estimate_gradient(rules[*which], args, g);
        std::map<std::string, array<double>, std::less<>> cot;
        auto accumulate = [&](const std::string& name, const array<double>& d) {
            if (name.empty() || d.size() == 0) return;
            auto [it, fresh] = cot.emplace(name, d);
            if (!fresh && it->second.shape() == d.shape()) it->second += d;
        };
        for (std::size_t i = 0; i < grads.size() && i < n.inputs.size(); ++i) {
            if (grads[i].size() == 0) continue;
            accumulate(n.inputs[i], grads[i].to<double>());
        }
        for (std::size_t k = fail->node; k-- > 0;) {
            const auto& node = m.nodes[k];
            bool seeded = false;
            for (const auto& o : node.outputs) seeded = seeded || (!o.empty() && cot.count(o) != 0);
            if (!seeded) continue;
            const auto* r = ad::find_rules<double>(node.op_type);
            if (r == nullptr) continue;  // not differentiable: the gradient stops here
            try {
                const auto c2 = ad::detail::prepare(node, values);
                const auto ctx = ad::make_context(*c2.op, c2.args, c2.attributes);
                const auto ids = r->differentiable_inputs(ctx);
                std::vector<array<double>> xs(ctx.input_count(), ad::detail::empty_array<double>());
                for (const std::size_t i : ids) xs[i] = ad::lift<double>(*c2.args[i]);
                const auto dts = c2.op->output_dtypes(ctx);
                std::vector<array<double>> w;
                for (std::size_t o = 0; o < dts.size(); ++o) {
                    const auto it = o < node.outputs.size() ? cot.find(node.outputs[o]) : cot.end();
                    w.push_back(it != cot.end() && info(dts[o]).is_floating ? it->second
                                                                            : ad::detail::empty_array<double>());
                }
                result.work += 3.0 * std::max(node_work[k], 0.0);
                const auto back = r->vjp(ctx, xs, w, {.proxy = true, .tensor_level = true, .values = false});
                for (const std::size_t i : ids) accumulate(node.inputs[i], back.cotangents[i]);
            } catch (const error&) {
                continue;
            }
        }
        // Adam on the free floating values the loss reaches. A target whose
        // loss has not dropped by 1% in 16 steps gets smaller steps (it may be
        // narrower than lr); one that is still shrinking keeps its pace, since
        // a large tensor can need many steps of lr to move all its elements.
        if (loss < best_loss * 0.99) {
            best_loss = loss;
            stalled_steps = 0;
        } else if (++stalled_steps % 16 == 0) {
            step_scale = std::max(step_scale * 0.5, 1.0 / 64.0);
        }
        // A local minimum (smaller steps did not help), or targets that keep
        // trading places (each fix breaks another rule): start elsewhere.
        if (stalled_steps >= options.stalled_steps_per_start || ++steps_since_start >= options.steps_per_start ||
            result.work - work_at_start >= options.work_share_per_start * options.work_budget) {
            restart();
            continue;
        }
        ++adam_t;
        ++result.gradient_steps;
        bool moved = false;
        constexpr double b1 = 0.9, b2 = 0.999, eps = 1e-8;
        for (auto& f : free) {
            if (!info(f.type).is_floating) continue;
            const auto it = cot.find(f.name);
            if (it == cot.end() || it->second.shape() != f.x.shape()) continue;
            const auto& d = it->second;
            for (std::size_t k = 0; k < f.x.size(); ++k) {
                double gk = d.data()[k];
                if (std::isnan(gk)) {  // no direction at all: this value restarts at random
                    f.x.data()[k] = g.uniform(f.range.first, std::max(f.range.second, f.range.first + 1e-9));
                    moved = true;
                    continue;
                }
                // An infinite slope (Acosh at 1, Sqrt at 0) still says which way to go; Adam
                // takes about lr in that direction whatever the size.
                if (std::isinf(gk)) gk = std::copysign(1e100, gk);
                if (gk == 0.0) continue;
                f.m.data()[k] = b1 * f.m.data()[k] + (1 - b1) * gk;
                f.v.data()[k] = b2 * f.v.data()[k] + (1 - b2) * gk * gk;
                const double mh = f.m.data()[k] / (1 - std::pow(b1, static_cast<double>(adam_t)));
                const double vh = f.v.data()[k] / (1 - std::pow(b2, static_cast<double>(adam_t)));
                f.x.data()[k] -= step_scale * options.learning_rate * mh / (std::sqrt(vh) + eps);
                moved = true;
            }
        }
        if (!moved) restart();  // no free value reached: start elsewhere
    }
    // Budget spent: the last data tried (the case is still a valid graph).
    for (auto& f : free) {
        // A draw not yet evaluated is x in its dtype (x itself may still be pending).
        result.values.insert_or_assign(f.name, f.drawn ? std::move(*f.drawn) : detail::to_dtype(f.x, f.type));
    }
    return result;
}

}  // namespace tensoracle::gen
