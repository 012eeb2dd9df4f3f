// tensoracle: the type-erased entry of one op spec, and checked evaluation of
// an op on runtime tensors (arity, dtypes, attributes, constraints, shape
// inference, kernel, and the kernel's output checked against the inference).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/core/memory.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/spec/hints.hpp"
#include "tensoracle/spec/mixins.hpp"
#include "tensoracle/spec/op.hpp"

namespace tensoracle::spec {

struct op_entry {
    std::string_view op_type;
    int opset = 0;
    std::span<const value_spec> inputs;
    std::span<const value_spec> outputs;
    /// The last opset at which this spec's version of the op is current (a
    /// later opset has a newer version or deprecates the op).
    int last_opset = 17;
    std::vector<std::string> (*attribute_names)() = nullptr;
    std::vector<attribute_info> (*attribute_infos)() = nullptr;
    attribute_map (*normalize_attributes)(const attribute_map&) = nullptr;
    std::vector<constraint> (*constraints)(const context&) = nullptr;
    shape_exprs (*output_shapes)(const context&) = nullptr;
    /// Both of the above from one model; nullptr when the spec has no such member.
    constraints_with_shapes (*constraints_and_shapes)(const context&) = nullptr;
    std::vector<dtype> (*output_dtypes)(const context&) = nullptr;
    std::vector<input_candidate> (*input_candidates)(dtype, std::size_t) = nullptr;
    std::vector<domain_rule> (*domain)(const attribute_map&) = nullptr;
    std::vector<tensor> (*run)(const context&) = nullptr;
    /// What the graph generator cannot infer from the constraints (see hints.hpp).
    spec::hints (*hints)() = nullptr;
    /// Slope the input search uses where the op's true derivative is zero or
    /// undefined (NNSmith's proxy derivative); 0 when the op needs none.
    double proxy_slope = 0.0;
};

/// The members of spec Op's entry that checked evaluation (evaluate, infer)
/// needs: arity and dtypes, attributes, constraints, shape and dtype
/// inference, the kernel. The generator's members (attribute tables, input
/// candidates, domain, hints) stay null, so an engine of one op
/// (ad::op_engine<Op>) does not compile them.
template <class Op>
[[nodiscard]] op_entry make_evaluation_entry() {
    op_entry e;
    e.op_type = Op::op_type;
    e.opset = Op::opset;
    e.inputs = std::span<const value_spec>(Op::inputs);
    e.outputs = std::span<const value_spec>(Op::outputs);
    if constexpr (requires { Op::last_opset; }) e.last_opset = Op::last_opset;
    e.normalize_attributes = [](const attribute_map& m) {
        return to_attribute_map(parse_attributes<typename Op::attributes>(m, Op::op_type));
    };
    e.constraints = &Op::constraints;
    e.output_shapes = &Op::output_shapes;
    // A call, not `&Op::constraints_and_shapes`: the member may be a template
    // (template <int = 0>, see spec/op.hpp), whose bare address is no expression.
    if constexpr (requires(const context& c) { Op::constraints_and_shapes(c); }) {
        e.constraints_and_shapes = &Op::constraints_and_shapes;
    }
    e.output_dtypes = &Op::output_dtypes;
    e.run = &Op::run;
    if constexpr (requires { Op::proxy_slope; }) e.proxy_slope = Op::proxy_slope;
    return e;
}

/// The entry of spec Op (see op.hpp for the members a spec provides).
template <class Op>
[[nodiscard]] op_entry make_entry() {
    op_entry e = make_evaluation_entry<Op>();
    e.attribute_names = &attribute_names<typename Op::attributes>;
    e.attribute_infos = &attribute_infos<typename Op::attributes>;
    e.input_candidates = &Op::input_candidates;
    e.domain = &Op::domain;
    if constexpr (requires { Op::hints(); }) {
        e.hints = &Op::hints;
    } else {
        e.hints = [] { return spec::hints{}; };
    }
    return e;
}

namespace detail {
inline void check_inputs(const op_entry& op, const std::vector<const tensor*>& in) {
    const std::string where(op.op_type);
    const bool variadic = !op.inputs.empty() && op.inputs.back().variadic;
    if (!variadic && in.size() > op.inputs.size()) {
        throw error(where, "takes at most " + std::to_string(op.inputs.size()) + " inputs, got " +
                               std::to_string(in.size()));
    }
    std::vector<std::pair<std::string_view, dtype>> bound;  // type variable -> dtype
    for (std::size_t i = 0; i < std::max(in.size(), op.inputs.size()); ++i) {
        const value_spec& s = op.inputs[std::min(i, op.inputs.size() - 1)];
        if (i >= in.size() || in[i] == nullptr) {
            if (i < op.inputs.size() && !s.optional && !s.variadic) {
                throw error(where, "input " + std::to_string(i) + " ('" + std::string(s.name) + "') is required");
            }
            continue;
        }
        const dtype d = in[i]->element_dtype();
        if (!s.types.contains(d)) {
            throw dtype_error(where, "input " + std::to_string(i) + " ('" + std::string(s.name) + "') has dtype " +
                                         std::string(name(d)) + "; allowed: " + s.types.to_string());
        }
        if (!s.ranks.contains(in[i]->rank())) {
            throw shape_error(where, "input " + std::to_string(i) + " ('" + std::string(s.name) + "') has rank " +
                                         std::to_string(in[i]->rank()) + "; allowed: " + std::to_string(s.ranks.min) +
                                         ".." + std::to_string(s.ranks.max));
        }
        bool found = false;
        for (const auto& [var, bd] : bound) {
            if (var == s.type_var) {
                found = true;
                if (bd != d) {
                    throw dtype_error(where, "input " + std::to_string(i) + " ('" + std::string(s.name) + "') has dtype " +
                                                 std::string(name(d)) + " but type " + std::string(s.type_var) +
                                                 " is already " + std::string(name(bd)));
                }
            }
        }
        if (!found) bound.emplace_back(s.type_var, d);
    }
}
}  // namespace detail

/// Validates and infers without running: returns output dtypes and shapes.
struct inferred_outputs {
    std::vector<dtype> dtypes;
    std::vector<shape_type> shapes;
};

namespace detail {
// Constraints checked, then the output shapes: from one model where the spec has one.
inline std::vector<shape_type> checked_shapes(const op_entry& op, const context& c) {
    if (op.constraints_and_shapes != nullptr) {
        const auto m = op.constraints_and_shapes(c);
        check_constraints(c, m.constraints);
        return eval_shapes(c, m.shapes);
    }
    check_constraints(c, op.constraints(c));
    return eval_shapes(c, op.output_shapes(c));
}
}  // namespace detail

[[nodiscard]] inline inferred_outputs infer(const op_entry& op, const std::vector<const tensor*>& inputs,
                                            const attribute_map& attributes) {
    detail::check_inputs(op, inputs);
    const context c(op.op_type, inputs, op.normalize_attributes(attributes));
    auto shapes = detail::checked_shapes(op, c);
    return {op.output_dtypes(c), std::move(shapes)};
}

namespace detail {
/// What a kernel of the reference allocates, known before it runs: each output built
/// in a work array and then copied into a tensor (twice its bytes), plus the work
/// copies of the inputs. Checked against the memory budget so that an output shape
/// no machine holds is a memory_error naming the op, the shape and the bytes.
inline void check_kernel_memory(const op_entry& op, const std::vector<const tensor*>& inputs,
                                const std::vector<dtype>& dtypes, const std::vector<shape_type>& shapes) {
    constexpr std::uint64_t saturated = std::numeric_limits<std::uint64_t>::max();
    auto add = [&](std::uint64_t a, std::uint64_t b) { return a > saturated - b ? saturated : a + b; };
    auto bytes_of = [&](dtype d, const shape_type& s) {
        const std::uint64_t n = element_count(s, op.op_type), w = d == dtype::boolean ? 1 : info(d).bits / 8;
        return n > saturated / w ? saturated : n * w;
    };
    std::uint64_t outputs = 0, work = 0;
    for (std::size_t o = 0; o < shapes.size() && o < dtypes.size(); ++o) outputs = add(outputs, bytes_of(dtypes[o], shapes[o]));
    for (const tensor* t : inputs) {
        if (t != nullptr) work = add(work, t->nbytes());
    }
    const std::uint64_t total = add(add(outputs, outputs), work);
    if (memory_fits(total)) return;  // the message only for a failure: this runs for every node
    std::string what = shapes.size() == 1 ? "the output " : "the outputs ";
    for (std::size_t o = 0; o < shapes.size() && o < dtypes.size(); ++o) {
        what += (o != 0 ? ", " : "") + std::string(name(dtypes[o])) + tensoracle::to_string(shapes[o]);
    }
    check_memory(total, op.op_type, what + " (" + memory_size_text(outputs) + ", with the kernel's work copies of inputs and outputs)");
}
}  // namespace detail

/// Runs op on inputs (nullptr = absent optional input) with checks before
/// and after: a kernel whose output disagrees with the spec's inference is a
/// bug in the kit, reported as such.
[[nodiscard]] inline std::vector<tensor> evaluate(const op_entry& op, const std::vector<const tensor*>& inputs,
                                                  const attribute_map& attributes) {
    detail::check_inputs(op, inputs);
    const context c(op.op_type, inputs, op.normalize_attributes(attributes));
    const auto shapes = detail::checked_shapes(op, c);
    const auto dtypes = op.output_dtypes(c);
    detail::check_kernel_memory(op, inputs, dtypes, shapes);
    auto out = op.run(c);
    if (out.size() != shapes.size() || out.size() != dtypes.size()) {
        throw error(std::string(op.op_type), "internal: kernel produced " + std::to_string(out.size()) +
                                                 " outputs, spec infers " + std::to_string(shapes.size()));
    }
    for (std::size_t o = 0; o < out.size(); ++o) {
        if (out[o].shape() != shapes[o] || out[o].element_dtype() != dtypes[o]) {
            throw error(std::string(op.op_type),
                        "internal: kernel output " + std::to_string(o) + " is " + std::string(name(out[o].element_dtype())) +
                            tensoracle::to_string(out[o].shape()) + " but the spec infers " +
                            std::string(name(dtypes[o])) + tensoracle::to_string(shapes[o]));
        }
    }
    return out;
}

}  // namespace tensoracle::spec
