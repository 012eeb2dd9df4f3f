// tensoracle: the operator-spec contract, the symbolic context specs are
// written against, and the type-erased entry the registry keeps for each op.
//
// An op spec is a struct with these static members (spec::make_entry reads
// them; docs/ADDING_AN_OP.md walks through one):
//   op_type, opset                         identity: ONNX name, opset whose semantics it implements
//   last_opset                             optional: the last opset with these semantics
//   using attributes = <struct with defaults, adapted by TENSORACLE_ADAPT_ATTRIBUTES>
//   inputs, outputs                        std::array<value_spec, N>: names, dtype sets, ranks
//   constraints(const context&)            validity constraints, in the integer constraint language
//   output_shapes(const context&)          forward shape inference, as expressions
//   constraints_and_shapes(const context&) optional: both of the above from one model, for
//                                          specs that derive them from one (built once per evaluation)
//   output_dtypes(const context&)          forward dtype inference, from the context's input
//                                          dtypes and attributes
//   input_candidates(dtype out, size_t rank)  backward inference: admissible input dtypes and ranks
//   domain(const attribute_map&)           tensor inequalities under which there is no NaN/Inf, with losses
//   run(const context&)                    the reference kernel on the context's runtime tensors
//   hints()                                optional: generator hints (value ranges, facts, work), spec/hints.hpp
//   proxy_slope                            optional: NNSmith's stand-in slope where the derivative is 0
// and, for derivatives (ad/op_derivatives.hpp), optionally:
//   run_real<S>(const context&, inputs)    the kernel on AD scalars S (ad::differentiable_op)
//   vjp<V>(const context&, inputs, output cotangents)  a tensor-level VJP in real V (ad::has_tensor_vjp)
//   differentiable_inputs(const context&)  which inputs derivatives are taken for (default: floating ones)
//   elementwise = true                     each output element depends on its broadcast position only
// There is no sampling member: the generator (gen/) draws instances from the
// constraints, dtypes and hints above, so a spec states validity only once.
// Members most ops state alike come from base classes (spec/mixins.hpp:
// elementwise_signature, like_input, dtype_of_input, shape_of_input; and
// one_shape_model below), so an op file holds only what is its own.
//
// The kit's specs declare these members `template <int = 0>`: a non-template
// member's body is compiled in every file including the spec, with the
// dispatch over dtypes it instantiates; as a template it is compiled only
// where the op is used. Calls and `&Op::run` deduce the 0, so code that uses
// specs cannot tell; detect a member with a call (`requires { Op::hints(); }`),
// not with its bare address.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
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
/// The IEEE types of ops whose ONNX schema (at the spec's opset) predates bfloat16.
inline constexpr dtype_set ieee_floating = dtypes_of(dtype::f16, dtype::f32, dtype::f64);
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

/// Thrown by a symbolic context (the graph generator's) when a spec needs
/// something the generator has left unknown: the values of a small integer
/// input (`values(i)`: the generator then makes that input a constant whose
/// values are unknowns), or the data of an input (`input(i)`: the op needs a
/// value hint for it). Concrete contexts never throw it.
class unknown_input_error : public error {
public:
    enum class need : std::uint8_t { values, data, shape };
    unknown_input_error(std::string_view op_type, std::size_t input, need what)
        : error(op_type, "input " + std::to_string(input) +
                             (what == need::values ? "'s values are needed as symbols"
                              : what == need::data ? "'s data is needed but unknown while generating"
                                                   : "'s shape is needed as numbers but is still unknown")),
          input_(input),
          need_(what) {}
    [[nodiscard]] std::size_t input() const noexcept { return input_; }
    [[nodiscard]] need needed() const noexcept { return need_; }

private:
    std::size_t input_;
    need need_;
};

/// What a symbolic context knows of one input: presence, dtype, and dims as
/// expressions (symbols the generator solves for, or constants bound to a
/// value already in the graph); optionally its data, or its values as
/// expressions when it is a small shape-like integer input.
struct symbolic_input {
    bool present = false;
    dtype type = dtype::f32;
    std::vector<expr> dims;
    const tensor* data = nullptr;
    std::optional<std::vector<expr>> values;
};

/// The world a spec's constraints and shapes are written against: input
/// ranks and dtypes are concrete; dims, integer attributes and values of
/// small integer inputs are expressions. A concrete context (from tensors)
/// makes them symbols bound in `env()`; a symbolic context (the generator's)
/// leaves some of them unbound, as unknowns of a constraint system, and
/// binds the rest to constants.
class context {
public:
    /// A concrete context from actual inputs (absent optional inputs are
    /// nullptr) and the full attribute map (defaults filled in).
    context(std::string_view op_type, std::vector<const tensor*> inputs, attribute_map attributes)
        : op_type_(op_type), attributes_(std::move(attributes)) {
        inputs_.resize(inputs.size());
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            if (inputs[i] == nullptr) continue;
            auto& in = inputs_[i];
            in.present = true;
            in.type = inputs[i]->element_dtype();
            in.data = inputs[i];
            const auto& dims = inputs[i]->shape();
            for (std::size_t a = 0; a < dims.size(); ++a) {
                in.dims.push_back(dim_symbol(i, a));
                env_[dim_name(i, a)] = static_cast<std::int64_t>(dims[a]);
            }
            if (in.type == dtype::i64 || in.type == dtype::i32) {
                const auto vals = inputs[i]->to<std::int64_t>();
                for (std::size_t k = 0; k < vals.size() && k < max_value_symbols; ++k) {
                    env_[value_name(i, k)] = vals.data()[k];
                }
            }
        }
        for (const auto& [key, v] : attributes_) {
            if (const auto* p = std::get_if<std::int64_t>(&v)) {
                env_[attr_name(key)] = *p;
                int_attributes_.emplace(key, expr::symbol(attr_name(key)));
            }
            if (const auto* p = std::get_if<std::vector<std::int64_t>>(&v)) {
                std::vector<expr> syms;
                for (std::size_t k = 0; k < p->size(); ++k) {
                    env_[attr_element_name(key, k)] = (*p)[k];
                    syms.push_back(expr::symbol(attr_element_name(key, k)));
                }
                env_[attr_length_name(key)] = static_cast<std::int64_t>(p->size());
                ints_attributes_.emplace(key, std::move(syms));
            }
        }
    }

    /// A symbolic context: inputs as described, attributes from the map, where
    /// the int and ints attributes named in `unknown_attributes` become symbols
    /// ("attr.<name>", "attr.<name>[k]") and all others constants. The map must
    /// still hold every attribute (an unknown ints attribute with its length).
    [[nodiscard]] static context symbolic(std::string_view op_type, std::vector<symbolic_input> inputs,
                                          attribute_map attributes,
                                          const std::vector<std::string>& unknown_attributes = {}) {
        context c(op_type);
        c.inputs_ = std::move(inputs);
        c.attributes_ = std::move(attributes);
        const auto unknown = [&](const std::string& key) {
            return std::find(unknown_attributes.begin(), unknown_attributes.end(), key) != unknown_attributes.end();
        };
        for (const auto& [key, v] : c.attributes_) {
            if (const auto* p = std::get_if<std::int64_t>(&v)) {
                c.int_attributes_.emplace(key, unknown(key) ? expr::symbol(attr_name(key)) : expr(*p));
            }
            if (const auto* p = std::get_if<std::vector<std::int64_t>>(&v)) {
                std::vector<expr> e;
                for (std::size_t k = 0; k < p->size(); ++k) {
                    e.push_back(unknown(key) ? expr::symbol(attr_element_name(key, k)) : expr((*p)[k]));
                }
                c.ints_attributes_.emplace(key, std::move(e));
            }
        }
        return c;
    }

    /// Largest integer input whose values become symbols (shape-like inputs).
    static constexpr std::size_t max_value_symbols = 64;

    [[nodiscard]] std::string_view op_type() const noexcept { return op_type_; }
    [[nodiscard]] std::size_t input_count() const noexcept { return inputs_.size(); }
    [[nodiscard]] bool has_input(std::size_t i) const noexcept { return i < inputs_.size() && inputs_[i].present; }

    /// The data of input i (a symbolic context may not know it).
    [[nodiscard]] const tensor& input(std::size_t i) const {
        const auto& in = info(i);
        if (in.data == nullptr) throw unknown_input_error(op_type_, i, unknown_input_error::need::data);
        return *in.data;
    }
    [[nodiscard]] std::size_t rank(std::size_t i) const { return info(i).dims.size(); }
    [[nodiscard]] dtype input_dtype(std::size_t i) const { return info(i).type; }

    /// Input i's dim `axis` (a symbol named "in<i>.shape[<axis>]", or a constant).
    [[nodiscard]] expr dim(std::size_t i, std::size_t axis) const {
        const auto& in = info(i);
        if (axis >= in.dims.size()) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " has rank " +
                                                   std::to_string(in.dims.size()) + ", no axis " + std::to_string(axis));
        }
        return in.dims[axis];
    }
    [[nodiscard]] std::vector<expr> shape(std::size_t i) const { return info(i).dims; }
    /// Input i's shape as numbers, for rules that cannot be written as
    /// expressions (float scales); a symbolic context knows it only when the
    /// generator has fixed it.
    [[nodiscard]] shape_type concrete_shape(std::size_t i) const {
        const auto& in = info(i);
        if (in.data != nullptr) return in.data->shape();
        shape_type s;
        for (const auto& d : in.dims) {
            const auto v = d.constant_value();
            if (!v) throw unknown_input_error(op_type_, i, unknown_input_error::need::shape);
            s.push_back(static_cast<std::size_t>(*v));
        }
        return s;
    }
    /// How many elements input i has, known also where its data is not (a
    /// shape-like input's values, a shape the generator fixed).
    [[nodiscard]] std::size_t element_count(std::size_t i) const {
        const auto& in = info(i);
        if (in.data != nullptr) return in.data->size();
        if (in.values) {
            note_values_read(i);
            return in.values->size();
        }
        std::size_t n = 1;
        for (const auto d : concrete_shape(i)) n *= d;
        return n;
    }
    /// The value of integer input i at flat position k.
    [[nodiscard]] expr value(std::size_t i, std::size_t k) const {
        const auto v = values(i);
        if (k >= v.size()) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " has " + std::to_string(v.size()) +
                                                   " values, no value " + std::to_string(k));
        }
        return v[k];
    }
    /// The values of a small integer input (shape-like), as expressions.
    [[nodiscard]] std::vector<expr> values(std::size_t i) const {
        const auto& in = info(i);
        if (in.values) {
            note_values_read(i);
            return *in.values;
        }
        if (in.type != dtype::i64 && in.type != dtype::i32) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " must be int32/int64, got " +
                                                   std::string(name(in.type)));
        }
        if (in.data == nullptr) throw unknown_input_error(op_type_, i, unknown_input_error::need::values);
        const auto& t = *in.data;
        if (t.size() > max_value_symbols) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " has " + std::to_string(t.size()) +
                                                   " values; shape-like inputs may have at most 64");
        }
        std::vector<expr> out;
        const bool bound = env_.find(value_name(i, 0)) != env_.end();
        const auto vals = bound ? array<std::int64_t>{} : t.to<std::int64_t>();
        for (std::size_t k = 0; k < t.size(); ++k) {
            out.push_back(bound ? value_symbol(i, k) : expr(vals.data()[k]));
        }
        return out;
    }

    /// Whether a spec asked for input i's values as symbols (`values`,
    /// `value`, `element_count`) from this symbolic context: the generator
    /// checks that an input it made shape-like in advance is one.
    [[nodiscard]] bool values_were_read(std::size_t i) const noexcept { return i < values_read_.size() && values_read_[i] != 0; }

    [[nodiscard]] const attribute_map& attributes() const noexcept { return attributes_; }
    [[nodiscard]] bool has_attribute(std::string_view key) const { return attributes_.find(key) != attributes_.end(); }
    /// An int attribute (a symbol named "attr.<name>", or a constant).
    [[nodiscard]] expr attr(std::string_view key) const {
        const auto it = int_attributes_.find(key);
        if (it == int_attributes_.end()) {
            throw error(std::string(op_type_), "no int attribute '" + std::string(key) + "'");
        }
        return it->second;
    }
    /// An ints attribute ("attr.<name>[k]" symbols or constants); empty when absent.
    [[nodiscard]] std::vector<expr> attr_ints(std::string_view key) const {
        if (!has_attribute(key)) return {};
        const auto it = ints_attributes_.find(key);
        if (it == ints_attributes_.end()) {
            throw error(std::string(op_type_), "attribute '" + std::string(key) + "' is not a list of ints");
        }
        return it->second;
    }

    [[nodiscard]] const environment& env() const noexcept { return env_; }
    [[nodiscard]] std::int64_t eval(const expr& e) const { return e.eval(env_); }

    [[nodiscard]] static std::string dim_name(std::size_t i, std::size_t axis) {
        if (i < cached_inputs && axis < cached_axes) return symbol_cache().dim_names[i * cached_axes + axis];
        return make_dim_name(i, axis);
    }
    [[nodiscard]] static std::string value_name(std::size_t i, std::size_t k) {
        if (i < cached_inputs && k < max_value_symbols) return symbol_cache().value_names[i * max_value_symbols + k];
        return make_value_name(i, k);
    }
    /// expr::symbol(dim_name(i, axis)), shared: the generator asks for the
    /// same few symbols hundreds of times per graph.
    [[nodiscard]] static expr dim_symbol(std::size_t i, std::size_t axis) {
        if (i < cached_inputs && axis < cached_axes) return symbol_cache().dims[i * cached_axes + axis];
        return expr::symbol(make_dim_name(i, axis));
    }
    /// expr::symbol(value_name(i, k)), shared likewise.
    [[nodiscard]] static expr value_symbol(std::size_t i, std::size_t k) {
        if (i < cached_inputs && k < max_value_symbols) return symbol_cache().values[i * max_value_symbols + k];
        return expr::symbol(make_value_name(i, k));
    }
    /// The symbol of an int attribute ("attr.<key>").
    [[nodiscard]] static std::string attr_name(std::string_view key) { return "attr." + std::string(key); }
    [[nodiscard]] static std::string attr_element_name(std::string_view key, std::size_t k) {
        return attr_name(key) + "[" + std::to_string(k) + "]";
    }
    /// The symbol spec::list_length gives an ints attribute's elements.
    [[nodiscard]] static std::string attr_length_name(std::string_view key) {
        return attr_name(key) + ".length";
    }

private:
    static std::string make_dim_name(std::size_t i, std::size_t axis) {
        return "in" + std::to_string(i) + ".shape[" + std::to_string(axis) + "]";
    }
    static std::string make_value_name(std::size_t i, std::size_t k) {
        return "in" + std::to_string(i) + ".value[" + std::to_string(k) + "]";
    }
    // Names and symbols of the first inputs' dims and values, built once.
    // Never destroyed: expressions held by other static objects may outlive
    // any destruction order (as expr's shared constants).
    static constexpr std::size_t cached_inputs = 16, cached_axes = 16;
    struct symbol_table {
        std::vector<std::string> dim_names, value_names;
        std::vector<expr> dims, values;
    };
    static const symbol_table& symbol_cache() {
        static const symbol_table* const table = [] {
            auto* t = new symbol_table();
            for (std::size_t i = 0; i < cached_inputs; ++i) {
                for (std::size_t a = 0; a < cached_axes; ++a) {
                    t->dim_names.push_back(make_dim_name(i, a));
                    t->dims.push_back(expr::symbol(t->dim_names.back()));
                }
                for (std::size_t k = 0; k < max_value_symbols; ++k) {
                    t->value_names.push_back(make_value_name(i, k));
                    t->values.push_back(expr::symbol(t->value_names.back()));
                }
            }
            return t;
        }();
        return *table;
    }

    explicit context(std::string_view op_type) : op_type_(op_type) {}

    void note_values_read(std::size_t i) const {
        if (values_read_.size() <= i) values_read_.resize(i + 1, 0);
        values_read_[i] = 1;
    }
    [[nodiscard]] const symbolic_input& info(std::size_t i) const {
        if (!has_input(i)) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " is required but absent");
        }
        return inputs_[i];
    }

    std::string_view op_type_;
    std::vector<symbolic_input> inputs_;
    mutable std::vector<char> values_read_;  // per input: values (or their count) asked for as symbols
    attribute_map attributes_;
    std::map<std::string, expr, std::less<>> int_attributes_;
    std::map<std::string, std::vector<expr>, std::less<>> ints_attributes_;
    environment env_;
};

/// Output shape expressions, one vector of dims per output.
using shape_exprs = std::vector<std::vector<expr>>;

/// What a spec's optional constraints_and_shapes() returns: its constraints()
/// and output_shapes() from one model (the shapes are read only when the
/// constraints hold).
struct constraints_with_shapes {
    std::vector<constraint> constraints;
    shape_exprs shapes;
};

/// Base of a spec Op that defines constraints_and_shapes(): its constraints()
/// and output_shapes() come from that one model.
template <class Op>
struct one_shape_model {
    static std::vector<constraint> constraints(const context& c) { return Op::constraints_and_shapes(c).constraints; }
    static shape_exprs output_shapes(const context& c) { return Op::constraints_and_shapes(c).shapes; }
};

/// A tensor inequality under which an op yields no NaN/Inf, with the loss
/// the input search minimizes (0 when satisfied). `loss` sees the inputs.
struct domain_rule {
    std::string description;  // e.g. "X > 0"
    std::function<double(std::span<const tensor>)> loss;
    /// d loss / d input, one double tensor per input (an empty tensor where
    /// the loss does not depend on it). Optional: without it the input search
    /// estimates the gradient from the loss alone (slower, noisier).
    std::function<std::vector<tensor>(std::span<const tensor>)> gradient;
    /// Rules of the form "f(x) <= 0 for every element x of one input" (most
    /// of them) name the input and f, so the generator can tell from what it
    /// knows of that input's values (spec::value_facts) whether the rule can
    /// hold at all. Empty for rules over whole tensors.
    std::optional<std::size_t> elementwise_input;
    std::function<double(double)> elementwise;
    /// f(x) <= 0 is needed of some element only (a sum's log needs one positive term):
    /// of some element in each group, a reduction's groups (|input| / |output| elements
    /// each), or with `any_along_axis` the slices along that axis (LpNormalization's rows).
    /// Groups of one element need it of every element.
    bool elementwise_any = false;
    std::optional<std::int64_t> any_along_axis;
    /// Rules that depend on the input's dtype (overflow: Exp's x <= log(max
    /// finite)): f(x, max finite of elementwise_input's dtype) <= 0. Used
    /// where the generator knows the dtype and `elementwise` is empty.
    std::function<double(double, double)> elementwise_at_limit;
    /// The dtypes of input elementwise_input (input 0 for a rule over whole
    /// tensors) the rule speaks of; on others it holds trivially and its loss
    /// is 0 (Pow's X > 0 is for a floating X: an integer base may be 0).
    dtype_set input_dtypes = types::all;

    domain_rule() = default;
    domain_rule(std::string what, std::function<double(std::span<const tensor>)> loss_of,
                std::function<std::vector<tensor>(std::span<const tensor>)> gradient_of = {})
        : description(std::move(what)), loss(std::move(loss_of)), gradient(std::move(gradient_of)) {}
};

/// Admissible input dtypes and ranks for a wanted output (backward inference).
struct input_candidate {
    std::vector<dtype> dtypes;
    std::vector<std::size_t> ranks;
};

/// One concrete instance of an op: inputs and attributes (gen::sample_op
/// draws them from the spec); valid when the constraints hold.
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
            const auto it = c.env().find(s);
            values += (values.empty() ? "" : ", ") + s + "=" + (it == c.env().end() ? "?" : std::to_string(it->second));
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
