// tensoracle: the operator-spec contract, the symbolic context specs are
// written against, and the type-erased entry the registry keeps for each op.
//
// An op spec is a struct with (see docs/ADDING_AN_OP.md):
//   op_type, opset                         identity: ONNX name, opset whose semantics it implements
//   using attributes = <hana-adapted struct with defaults>
//   inputs, outputs                        std::array<value_spec, N>: names, dtype sets, ranks
//   constraints(const context&)            validity constraints, in the integer constraint language
//   output_shapes(const context&)          forward shape inference, as expressions
//   output_dtypes(input dtypes, attrs)     forward dtype inference
//   input_candidates(out dtype, out rank)  backward inference: admissible input dtypes and ranks
//   domain(attrs)                          tensor inequalities under which there is no NaN/Inf, with losses
//   run(const context&, inputs, attrs)     the reference kernel on runtime tensors
//   sample(rng&)                           a random (proposed) instance; checked against constraints
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/scalar.hpp"
#include "tensoracle/core/error.hpp"
#include "tensoracle/core/rng.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/spec/attributes.hpp"
#include "tensoracle/spec/expr.hpp"

namespace tensoracle::spec {

/// A set of dtypes as a bit mask over the dtype enum.
struct dtype_set {
    std::uint16_t mask = 0;

    [[nodiscard]] constexpr bool contains(dtype d) const noexcept {
        return (mask >> static_cast<unsigned>(d) & 1u) != 0;
    }
    [[nodiscard]] constexpr bool empty() const noexcept { return mask == 0; }
    friend constexpr dtype_set operator|(dtype_set a, dtype_set b) noexcept {
        return {static_cast<std::uint16_t>(a.mask | b.mask)};
    }
    friend constexpr dtype_set operator&(dtype_set a, dtype_set b) noexcept {
        return {static_cast<std::uint16_t>(a.mask & b.mask)};
    }
    [[nodiscard]] std::vector<dtype> members() const {
        std::vector<dtype> out;
        for (std::size_t i = 0; i < dtype_count; ++i) {
            if (contains(static_cast<dtype>(i))) out.push_back(static_cast<dtype>(i));
        }
        return out;
    }
    [[nodiscard]] std::string to_string() const {
        std::string s;
        for (const dtype d : members()) s += (s.empty() ? "" : ", ") + std::string(name(d));
        return "{" + s + "}";
    }
};

template <class... D>
constexpr dtype_set dtypes_of(D... ds) noexcept {
    return {static_cast<std::uint16_t>(((1u << static_cast<unsigned>(ds)) | ... | 0u))};
}

namespace types {
inline constexpr dtype_set floating = dtypes_of(dtype::f16, dtype::bf16, dtype::f32, dtype::f64);
inline constexpr dtype_set signed_integers = dtypes_of(dtype::i8, dtype::i16, dtype::i32, dtype::i64);
inline constexpr dtype_set integers = signed_integers | dtypes_of(dtype::u8);
inline constexpr dtype_set numeric = floating | integers;
inline constexpr dtype_set signed_numeric = floating | signed_integers;
inline constexpr dtype_set boolean = dtypes_of(dtype::boolean);
inline constexpr dtype_set all = numeric | boolean;
inline constexpr dtype_set int64 = dtypes_of(dtype::i64);
inline constexpr dtype_set indices = dtypes_of(dtype::i32, dtype::i64);
}  // namespace types

/// Inclusive rank range of one input or output.
struct rank_range {
    std::size_t min = 0;
    std::size_t max = 8;
    [[nodiscard]] constexpr bool contains(std::size_t r) const noexcept { return r >= min && r <= max; }
};

/// One input or output of an op. Inputs that share `type_var` must share
/// their dtype (ONNX's type constraints, e.g. "T").
struct value_spec {
    std::string_view name;
    dtype_set types;
    rank_range ranks{};
    std::string_view type_var = "T";
    bool optional = false;
    bool variadic = false;  // this and all further inputs (Concat, Sum, Max, ...)
};

/// The world a spec's constraints and shapes are written against: input
/// ranks are concrete; dims, integer attributes and values of small integer
/// inputs are symbols, bound in `env()` when the instance is concrete.
class context {
public:
    /// A concrete context from actual inputs (absent optional inputs are
    /// nullptr) and the full attribute map (defaults filled in).
    context(std::string_view op_type, std::vector<const tensor*> inputs, attribute_map attributes)
        : op_type_(op_type), inputs_(std::move(inputs)), attributes_(std::move(attributes)) {
        for (std::size_t i = 0; i < inputs_.size(); ++i) {
            if (inputs_[i] == nullptr) continue;
            shapes_.emplace_back(inputs_[i]->shape());
            const auto& dims = shapes_.back();
            for (std::size_t a = 0; a < dims.size(); ++a) env_[dim_name(i, a)] = static_cast<std::int64_t>(dims[a]);
            if (inputs_[i]->element_dtype() == dtype::i64 || inputs_[i]->element_dtype() == dtype::i32) {
                const auto vals = inputs_[i]->to<std::int64_t>();
                for (std::size_t k = 0; k < vals.size() && k < max_value_symbols; ++k) {
                    env_[value_name(i, k)] = vals.data()[k];
                }
            }
        }
        for (const auto& [key, v] : attributes_) {
            if (const auto* p = std::get_if<std::int64_t>(&v)) env_["attr." + key] = *p;
            if (const auto* p = std::get_if<std::vector<std::int64_t>>(&v)) {
                for (std::size_t k = 0; k < p->size(); ++k) env_[attr_element_name(key, k)] = (*p)[k];
            }
        }
    }

    /// Largest integer input whose values become symbols (shape-like inputs).
    static constexpr std::size_t max_value_symbols = 64;

    [[nodiscard]] std::string_view op_type() const noexcept { return op_type_; }
    [[nodiscard]] std::size_t input_count() const noexcept { return inputs_.size(); }
    [[nodiscard]] bool has_input(std::size_t i) const noexcept { return i < inputs_.size() && inputs_[i] != nullptr; }

    [[nodiscard]] const tensor& input(std::size_t i) const {
        if (!has_input(i)) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " is required but absent");
        }
        return *inputs_[i];
    }
    [[nodiscard]] std::size_t rank(std::size_t i) const { return input(i).rank(); }
    [[nodiscard]] dtype input_dtype(std::size_t i) const { return input(i).element_dtype(); }

    /// Symbol of input i's dim `axis` (named "in<i>.shape[<axis>]").
    [[nodiscard]] expr dim(std::size_t i, std::size_t axis) const {
        if (axis >= rank(i)) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " has rank " +
                                                   std::to_string(rank(i)) + ", no axis " + std::to_string(axis));
        }
        return expr::symbol(dim_name(i, axis));
    }
    [[nodiscard]] std::vector<expr> shape(std::size_t i) const {
        std::vector<expr> out;
        for (std::size_t a = 0; a < rank(i); ++a) out.push_back(dim(i, a));
        return out;
    }
    /// Symbol of the value of integer input i at flat position k.
    [[nodiscard]] expr value(std::size_t i, std::size_t k) const { return expr::symbol(value_name(i, k)); }
    /// The values of a small integer input (shape-like), as symbols.
    [[nodiscard]] std::vector<expr> values(std::size_t i) const {
        const auto& t = input(i);
        if (t.element_dtype() != dtype::i64 && t.element_dtype() != dtype::i32) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " must be int32/int64, got " +
                                                   std::string(name(t.element_dtype())));
        }
        if (t.size() > max_value_symbols) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " has " + std::to_string(t.size()) +
                                                   " values; shape-like inputs may have at most 64");
        }
        std::vector<expr> out;
        for (std::size_t k = 0; k < t.size(); ++k) out.push_back(value(i, k));
        return out;
    }

    [[nodiscard]] const attribute_map& attributes() const noexcept { return attributes_; }
    [[nodiscard]] bool has_attribute(std::string_view key) const { return attributes_.find(key) != attributes_.end(); }
    /// Symbol of an int attribute (named "attr.<name>").
    [[nodiscard]] expr attr(std::string_view key) const {
        const auto it = attributes_.find(key);
        if (it == attributes_.end() || !std::holds_alternative<std::int64_t>(it->second)) {
            throw error(std::string(op_type_), "no int attribute '" + std::string(key) + "'");
        }
        return expr::symbol("attr." + std::string(key));
    }
    /// Symbols of an ints attribute ("attr.<name>[k]").
    [[nodiscard]] std::vector<expr> attr_ints(std::string_view key) const {
        const auto it = attributes_.find(key);
        if (it == attributes_.end()) return {};
        const auto* p = std::get_if<std::vector<std::int64_t>>(&it->second);
        if (p == nullptr) throw error(std::string(op_type_), "attribute '" + std::string(key) + "' is not a list of ints");
        std::vector<expr> out;
        for (std::size_t k = 0; k < p->size(); ++k) out.push_back(expr::symbol(attr_element_name(key, k)));
        return out;
    }

    [[nodiscard]] const environment& env() const noexcept { return env_; }
    [[nodiscard]] std::int64_t eval(const expr& e) const { return e.eval(env_); }

    [[nodiscard]] static std::string dim_name(std::size_t i, std::size_t axis) {
        return "in" + std::to_string(i) + ".shape[" + std::to_string(axis) + "]";
    }
    [[nodiscard]] static std::string value_name(std::size_t i, std::size_t k) {
        return "in" + std::to_string(i) + ".value[" + std::to_string(k) + "]";
    }
    [[nodiscard]] static std::string attr_element_name(std::string_view key, std::size_t k) {
        return "attr." + std::string(key) + "[" + std::to_string(k) + "]";
    }

private:
    std::string_view op_type_;
    std::vector<const tensor*> inputs_;
    std::vector<shape_type> shapes_;
    attribute_map attributes_;
    environment env_;
};

/// Output shape expressions, one vector of dims per output.
using shape_exprs = std::vector<std::vector<expr>>;

/// A tensor inequality under which an op yields no NaN/Inf, with the loss
/// the input search minimizes (0 when satisfied). `loss` sees the inputs.
struct domain_rule {
    std::string description;  // e.g. "X > 0"
    std::function<double(std::span<const tensor>)> loss;
};

/// Admissible input dtypes and ranks for a wanted output (backward inference).
struct input_candidate {
    std::vector<dtype> dtypes;
    std::vector<std::size_t> ranks;
};

/// One concrete instance of an op: inputs and attributes. Produced by the
/// per-op sampler; valid when the constraints hold.
struct instance {
    std::vector<std::optional<tensor>> inputs;
    attribute_map attributes;
};

/// Evaluates every constraint; throws naming the op, the constraint, its
/// reason and the values of its symbols when one fails.
inline void check_constraints(const context& c, const std::vector<constraint>& cs) {
    for (const auto& k : cs) {
        if (c.eval(k.condition) != 0) continue;
        std::string values;
        for (const auto& s : k.condition.symbols()) {
            values += (values.empty() ? "" : ", ") + s + "=" + std::to_string(c.env().at(s));
        }
        throw shape_error(std::string(c.op_type()), "constraint violated: " + k.condition.to_string() + " (" +
                                                        k.reason + ")" + (values.empty() ? "" : " with " + values));
    }
}

/// Evaluates output shape expressions; negative dims are an error.
[[nodiscard]] inline std::vector<shape_type> eval_shapes(const context& c, const shape_exprs& shapes) {
    std::vector<shape_type> out;
    for (std::size_t o = 0; o < shapes.size(); ++o) {
        shape_type dims;
        for (const auto& d : shapes[o]) {
            const std::int64_t v = c.eval(d);
            if (v < 0) {
                throw shape_error(std::string(c.op_type()), "output " + std::to_string(o) + " gets dim " +
                                                                std::to_string(v) + " from " + d.to_string());
            }
            dims.push_back(static_cast<std::size_t>(v));
        }
        out.push_back(std::move(dims));
    }
    return out;
}

/// Normalizes a possibly negative axis into [0, rank); throws when out of range.
[[nodiscard]] inline std::size_t normalize_axis(std::int64_t axis, std::size_t rank, std::string_view where) {
    const auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r) {
        throw shape_error(where, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    }
    return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

/// Compile-time check at a typed kernel's entry: the error names the op and
/// the element type through this template's arguments.
template <class Op, class T>
struct dtype_accepted {
    static constexpr bool value = [] {
        if constexpr (ad_scalar<T>) {
            return Op::inputs[0].types.contains(dtype_of<base_scalar_t<T>>);  // AD over an accepted float type
        } else {
            return element_type<T> && Op::inputs[0].types.contains(dtype_of<T>);
        }
    }();
    static_assert(value,
                  "tensoracle::ops: this op does not accept this element type; see the op's inputs[0].types "
                  "(dtype_accepted<Op, T> names both)");
};

/// Float accumulation for f16 and bf16, as ONNX reference kernels do; AD
/// scalars accumulate in themselves.
template <class T>
using accumulator_t = std::conditional_t<floating_element<T> && sizeof(T) == 2, float, T>;

}  // namespace tensoracle::spec
