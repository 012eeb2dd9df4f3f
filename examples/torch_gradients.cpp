// Checks PyTorch's C++ autograd with tensoracle's gradient oracle.
//
// For every op the kit and PyTorch share, over many random inputs drawn from
// the kit's op samplers (inside each op's domain), PyTorch becomes an
// `ad::engine`: value, reverse mode (torch::autograd::grad), forward mode
// (forward_ad levels, at::_make_dual / at::_unpack_dual) and second order
// (double backward, and forward-over-reverse). The oracle checks it (exception
// consistency, determinism, rev vs fwd, FD in float64, order 2, filters), and
// the kit's own engine gives a second opinion on every VJP. Discrepancies are
// printed with their filter labels; the last line is a summary.
//
//   tensoracle_torch_gradients [--samples N] [--seed S] [--op NAME] [--verbose]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "tensoracle/ad/engine.hpp"
#include "tensoracle/gen/instance.hpp"
#include "torch_engine.hpp"

using namespace tensoracle_torch;

namespace {

std::string labels(const ad::gradient_report& r) {
    std::string s;
    for (const auto l : {ad::filter_label::non_differentiable_point, ad::filter_label::precision_conversion,
                         ad::filter_label::nan_in_gradient}) {
        if (r.has(l)) s += std::string(s.empty() ? "" : ", ") + std::string(ad::name(l));
    }
    return s.empty() ? "none" : s;
}
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }
// Comparisons a filter excused, at every order.
std::size_t excused(const ad::gradient_report& r) {
    std::size_t n = r.count(ad::check_status::excused);
    for (const auto& h : r.higher) n += excused(h);
    return n;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Check PyTorch's C++ autograd against tensoracle's gradient oracle"};
    int samples = 8;
    std::uint64_t seed = 2026;
    std::string only;
    bool verbose = false;
    app.add_option("--samples", samples, "random instances per op and dtype")->check(CLI::PositiveNumber);
    app.add_option("--seed", seed, "seed for the instances");
    app.add_option("--op", only, "check one op only");
    app.add_flag("--verbose", verbose, "print whole reports of discrepancies");
    CLI11_PARSE(app, argc, argv);
    torch::set_num_threads(1);

    const auto ops = shared_ops();
    int checks = 0, clean = 0, labelled = 0, found = 0, not_implemented = 0, kit_disagreements = 0, partial = 0;
    std::map<std::string, int> by_outcome;
    for (const auto& [op_type, fn] : ops) {
        if (!only.empty() && op_type != only) continue;
        const auto& op = to::ops::get_op(op_type);
        const auto kit = ad::op_engine<double>(op_type, {});
        to::rng g(seed ^ std::hash<std::string>{}(op_type));
        for (const auto as : {to::dtype::f64, to::dtype::f32}) {
            for (int s = 0; s < samples; ++s) {
                const auto inst = to::gen::sample_op(op, g);
                // Numeric inputs (integer samples too) at the dtype under test;
                // an instance the cast invalidates is not one of the op's.
                ad::tensors x;
                for (std::size_t k = 0; k < inst.inputs.size(); ++k) {
                    const auto& in = inst.inputs[k];
                    const auto& spec_in = op.inputs[std::min(k, op.inputs.size() - 1)];
                    const bool numeric = in && in->element_dtype() != to::dtype::boolean && spec_in.types.contains(as);
                    x.push_back(!in ? to::tensor() : (numeric ? in->cast(as) : *in));
                }
                try {
                    (void)to::spec::evaluate(op, ad::detail::pointers(x), inst.attributes);
                } catch (const to::error&) {
                    continue;
                }
                if (std::none_of(x.begin(), x.end(), [](const to::tensor& t) { return floating(t) && t.size() > 0; })) {
                    continue;
                }
                // Inside the op's numeric domain only (the cast may have moved an integer sample out of it).
                double loss = 0.0;
                for (const auto& rule : op.domain(op.normalize_attributes(inst.attributes))) {
                    loss += rule.loss(std::span<const to::tensor>(x));
                }
                if (loss != 0.0) continue;
                ad::oracle_options o;
                o.order = 2;
                o.seed = seed + static_cast<std::uint64_t>(s);
                const auto r = ad::check_gradients(torch_engine(fn, inst.attributes), x, o);
                ++checks;
                // The order that has something to say: the first that failed, else the first with an excuse.
                const ad::gradient_report* worst = &r;
                if (!r.failed() && r.count(ad::check_status::excused) == 0 && !r.higher.empty()) worst = &r.higher[0];
                if (r.count(ad::check_status::failed) == 0 && !r.higher.empty() && r.higher[0].failed()) worst = &r.higher[0];
                ++by_outcome[std::string(ad::name(worst->outcome)) + (worst->order == 2 ? " (order 2)" : "")];
                // The kit's own engine as a second opinion on the VJP, in f64.
                std::string kit_note;
                try {
                    ad::tensors x64 = x;
                    for (auto& t : x64) {
                        if (!absent(t) && floating(t)) t = t.cast(to::dtype::f64);
                    }
                    try {
                        (void)to::spec::infer(op, ad::detail::pointers(x64), inst.attributes);
                    } catch (const to::dtype_error&) {
                        x64 = x;  // an op without float64 (Celu): compare at the instance's dtype
                    }
                    const auto kit_engine = ad::op_engine<double>(op_type, inst.attributes);
                    const auto y = kit_engine.value(x64);
                    to::rng gw(static_cast<std::uint64_t>(s) + 99);
                    ad::tensors w;
                    for (const auto& t : y) {
                        w.push_back(floating(t) ? gw.uniform_tensor(to::dtype::f64, t.shape(), -1.0, 1.0) : to::tensor());
                    }
                    const auto mine = kit_engine.vjp(x64, w);
                    const auto theirs = torch_engine(fn, inst.attributes).vjp(x64, w);
                    for (std::size_t i = 0; i < x.size(); ++i) {
                        if (absent(x[i]) || !floating(x[i]) || absent(mine.input_cotangents[i])) continue;
                        to::compare_options co;
                        co.require_same_dtype = false;  // torch answers in the input's dtype, the kit in f64
                        const auto cmp = to::compare(theirs.input_cotangents[i], mine.input_cotangents[i], co);
                        const double t = x64[i].element_dtype() == to::dtype::f64 ? 1e-6 : 1e-4;
                        if (!cmp.passes(to::tolerance{t, t})) {
                            kit_note = "kit VJP differs from torch's on input " + std::to_string(i) +
                                       " (max abs " + std::to_string(cmp.abs_error().max) + ")";
                        }
                    }
                } catch (const std::exception& ex) {
                    kit_note = std::string("comparing with the kit: ") + first_line(ex.what());
                }
                if (!kit_note.empty()) ++kit_disagreements;
                // Unexplained: a failure no filter explains, at any order. Labelled: none, but
                // some disagreement a filter explained (kink, rounding, NaN of the function).
                const bool unexplained = r.failed();
                const bool problem = unexplained || excused(r) != 0;
                if (!r.fully_checked() && !unexplained) ++partial;
                if (!problem && kit_note.empty()) {
                    ++clean;
                    continue;
                }
                if (unexplained) {
                    ++found;
                    if (worst->message.find("has not been implemented") != std::string::npos) ++not_implemented;
                } else if (problem) {
                    ++labelled;
                }
                std::printf("%-16s %s sample %d: %s%s, order %d; filter labels: %s%s%s\n", op_type.c_str(),
                            std::string(to::name(as)).c_str(), s, unexplained ? "UNEXPLAINED " : "",
                            std::string(ad::name(worst->outcome)).c_str(), worst->order, labels(*worst).c_str(),
                            kit_note.empty() ? "" : "; ", kit_note.c_str());
                if (problem) std::printf("    %s\n", first_line(worst->message).c_str());
                if (verbose) std::cout << r.to_string() << "\n";
            }
        }
    }
    std::printf("\noutcomes:");
    for (const auto& [k, v] : by_outcome) std::printf(" %s %d;", k.c_str(), v);
    std::printf("\ntorch gradient summary: %d checks over %zu ops, %d clean, %d labelled by a filter, %d unexplained "
                "(%d of them an AD path torch reports as not implemented), %d kit/torch VJP disagreements, "
                "%d passing with a provided path not checked\n",
                checks, only.empty() ? ops.size() : std::size_t{1}, clean, labelled, found, not_implemented,
                kit_disagreements, partial);
    return 0;
}
