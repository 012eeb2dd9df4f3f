// Registry-driven gradient tests, shared by one translation unit per
// derivative arithmetic (each instantiates every kernel with its AD scalars).
// For every differentiable op and a few sampled instances from the op's
// domain, the gradient oracle checks the kit's own engine: forward (dual
// numbers) against reverse (tape) through ⟨Ju, w⟩ = ⟨u, Jᵀw⟩, both against
// six-point finite differences of the plain float64 kernel, full Jacobians
// for small instances, and the same at second order (forward-over-reverse
// against forward-over-forward and against finite differences of the VJP).
#pragma once

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "tensoracle/ad/engine.hpp"
#include "tensoracle/gen/instance.hpp"
#include "tensoracle/doctest.hpp"

namespace tensoracle::testing {

struct op_gradient_tally {
    int passed = 0, labelled = 0, skipped = 0, failed = 0;
};

/// Checks every differentiable op at derivative arithmetic V. Instances keep
/// the dtype the sampler drew, cast to `as` when the op accepts it.
template <class V>
std::map<std::string, op_gradient_tally> check_registry_gradients(int samples, int order, dtype as) {
    std::map<std::string, op_gradient_tally> tally;
    for (const auto& rules : ad::rules_table<V>()) {
        const auto& op = ops::get_op(rules.op_type);
        auto& t = tally[std::string(rules.op_type)];
        rng g(std::hash<std::string_view>{}(rules.op_type) ^ 0xad);
        // Draw until `samples` instances have something to differentiate (a sampler may
        // draw integer dtypes, or a Mod with integer semantics).
        int checked = 0;
        for (int s = 0; checked < samples && s < samples * 10; ++s) {
            const auto inst = gen::sample_op(op, g);
            ad::tensors x;
            for (const auto& in : inst.inputs) {
                if (!in) {
                    x.emplace_back();
                    continue;
                }
                x.push_back(*in);
                // Integer samples of numeric ops become floating ones: gradients need them.
                const auto& spec_in = op.inputs[std::min(x.size() - 1, op.inputs.size() - 1)];
                if (in->element_dtype() != dtype::boolean && spec_in.types.contains(as)) x.back() = in->cast(as);
            }
            // An instance the cast invalidates (a type variable shared with an input we
            // could not cast, Mod's integer semantics) falls back to the sample's own.
            try {
                (void)spec::evaluate(op, ad::detail::pointers(x), inst.attributes);
            } catch (const error&) {
                x.clear();
                for (const auto& in : inst.inputs) x.push_back(in ? *in : tensor());
            }
            // Only instances at the requested precision (the arithmetic V is chosen for it).
            const bool any_floating = std::any_of(x.begin(), x.end(), [](const tensor& v) {
                return info(v.element_dtype()).is_floating && v.size() != 0;
            });
            const bool all_as = std::all_of(x.begin(), x.end(), [&](const tensor& v) {
                return !info(v.element_dtype()).is_floating || v.element_dtype() == as || v.size() == 0;
            });
            if (!any_floating || !all_as) continue;
            double loss = 0.0;  // inside the op's numeric domain only
            for (const auto& rule : op.domain(op.normalize_attributes(inst.attributes))) {
                loss += rule.loss(std::span<const tensor>(x));
            }
            if (loss != 0.0) continue;
            ++checked;
            ad::oracle_options o;
            o.order = order;
            {  // the op's own differentiable inputs (not, e.g., OneHot's float indices)
                const auto args = ad::detail::pointers(x);
                o.wrt = rules.differentiable_inputs(ad::make_context(op, args, inst.attributes));
                if (o.wrt.empty()) {
                    --checked;
                    continue;
                }
            }
            o.seed = static_cast<std::uint64_t>(s) + 1;
            o.determinism_runs = 2;
            o.probes = 2;
            const auto r = ad::check_gradients(ad::op_engine<V>(rules.op_type, inst.attributes), x, o);
            const auto* deepest = &r;
            while (!deepest->higher.empty()) deepest = &deepest->higher.back();
            CAPTURE(rules.op_type);
            CAPTURE(s);
            TENSORACLE_CHECK_GRADIENTS(r);
            if (r.failed()) {
                ++t.failed;
            } else if (r.labels != 0 || (!r.higher.empty() && r.higher[0].labels != 0)) {
                ++t.labelled;
            } else if (r.outcome == ad::gradient_outcome::skipped) {
                ++t.skipped;
            } else {
                ++t.passed;
            }
        }
    }
    return tally;
}

/// Every differentiable op must pass cleanly (no filter label, not skipped)
/// on at least one sample: a test that only ever excuses itself proves nothing.
/// Exceptions: ops that do not take the dtype at all (no instance), and the
/// named ops whose every instance is rightly labelled (a cast that rounds).
inline void require_clean_passes(const std::map<std::string, op_gradient_tally>& tally,
                                 const std::set<std::string>& always_labelled = {}) {
    std::string untested;
    for (const auto& [op, t] : tally) {
        CAPTURE(op);
        CAPTURE(t.labelled);
        CAPTURE(t.skipped);
        if (t.passed + t.labelled + t.skipped + t.failed == 0) {
            untested += " " + op;
            continue;
        }
        if (always_labelled.count(op) != 0) {
            CHECK(t.labelled >= 1);
            continue;
        }
        CHECK(t.passed >= 1);
    }
    if (!untested.empty()) MESSAGE("ops that do not take this dtype:" << untested);
    int p = 0, l = 0, s = 0, f = 0;
    for (const auto& [op, t] : tally) {
        p += t.passed;
        l += t.labelled;
        s += t.skipped;
        f += t.failed;
    }
    std::string with_labels;
    for (const auto& [op, t] : tally) {
        if (t.labelled > 0) with_labels += " " + op + "(" + std::to_string(t.labelled) + ")";
    }
    MESSAGE("labelled by a filter:" << with_labels);
    MESSAGE(tally.size() << " differentiable ops: " << p << " instances passed, " << l << " labelled by a filter, "
                         << s << " skipped, " << f << " failed");
}

}  // namespace tensoracle::testing
