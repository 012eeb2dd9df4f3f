// tensoracle: generation hints, what an op spec tells the graph generator
// beyond its constraints.
//
// Validity lives in one place, the spec's constraints: the generator solves
// them for dims, int attributes and the values of shape-like inputs. Hints
// say only what a solver cannot know: value distributions ("prefer small
// kernels", the range an input's data is drawn from), float and string
// attributes, which int attributes are flags, and data an op needs before
// or after its shapes are solved (Resize's scales, Gather's indices). An op
// without a `hints()` member gets the defaults below, which suit every
// element-wise op.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <algorithm>
#include <cmath>
#include <vector>

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/rng.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/spec/attributes.hpp"
#include "tensoracle/spec/expr.hpp"

namespace tensoracle::spec {

class context;

/// Random values of dtype d in [lo, hi) (integers: [ceil(lo), ceil(hi)),
/// u8 non-negative; bool: 0/1): initial data of hinted inputs and of the
/// generator's placeholders.
inline tensor random_values(rng& g, dtype d, const shape_type& s, double lo, double hi) {
    if (d == dtype::boolean) return g.uniform_tensor(d, s, 0.0, 2.0);
    if (!info(d).is_floating) {
        double ilo = std::ceil(lo), ihi = std::ceil(hi);
        if (d == dtype::u8) ilo = std::max(ilo, 0.0);
        if (ihi <= ilo) ihi = ilo + 1.0;
        return g.uniform_tensor(d, s, ilo, ihi);
    }
    return g.uniform_tensor(d, s, lo, hi);
}

/// How the generator draws one attribute.
struct attribute_hint {
    enum class kind : std::uint8_t {
        solve,    ///< int / ints: unknowns of the constraint system, in [lo, hi] (binned)
        flag,     ///< int: 0 or 1
        choice,   ///< one of `choices` (strings, ints or floats)
        real,     ///< float in [real_lo, real_hi]
        dtype,    ///< int: an ONNX dtype number among the configured dtypes
        tensor,   ///< tensor attribute made by `make_tensor`
        omit,     ///< never given (the default applies)
    };
    std::string name;
    kind how = kind::solve;
    std::int64_t lo = -64, hi = 64;
    std::vector<attribute_value> choices;
    double real_lo = 0.0, real_hi = 1.0;
    double present = 0.7;  ///< probability the attribute is given (required ones always are)
    /// Tensor attributes: (rng, output dtype or nullopt, output shape or nullopt) -> value.
    std::function<tensor(rng&, std::optional<dtype>, const std::optional<shape_type>&)> make_tensor;
};

/// How the generator treats one input.
struct input_hint {
    std::size_t index = 0;
    std::optional<double> present;               ///< optional inputs: probability given
    std::optional<std::pair<double, double>> range;  ///< initial data range
    /// Data needed before solving (the spec reads it in its constraints or
    /// shapes): made from the symbolic context (ranks, dtypes known).
    std::function<tensor(rng&, const context&)> before_solving;
    /// Data valid only for the solved shapes (indices into a solved dim):
    /// made from the concrete context of the other inputs and its own shape.
    std::function<tensor(rng&, const context&, dtype, const shape_type&)> after_solving;
};

/// The hints of one op; built with the chained setters below.
struct hints {
    std::vector<attribute_hint> attributes;
    std::vector<input_hint> inputs;
    std::size_t variadic_min = 1, variadic_max = 3;
    double weight = 1.0;  ///< relative frequency among ops in generated graphs
    /// The kernel's work (multiply-adds, comparisons) in terms of the symbolic
    /// context and the output shapes: the generator keeps it at most
    /// gen::config::max_work, so a Conv of two 64K-element tensors does not
    /// cost billions of operations. Ops whose work is about their output size
    /// leave it empty.
    std::function<expr(const context&, const std::vector<std::vector<expr>>&)> work_estimate;

    [[nodiscard]] const attribute_hint* attribute(std::string_view name) const {
        for (const auto& a : attributes) {
            if (a.name == name) return &a;
        }
        return nullptr;
    }
    [[nodiscard]] const input_hint* input(std::size_t i) const {
        for (const auto& h : inputs) {
            if (h.index == i) return &h;
        }
        return nullptr;
    }

    static attribute_hint named(std::string name, attribute_hint::kind how) {
        attribute_hint h;
        h.name = std::move(name);
        h.how = how;
        return h;
    }
    hints& work(std::function<expr(const context&, const std::vector<std::vector<expr>>&)> estimate) {
        work_estimate = std::move(estimate);
        return *this;
    }
    /// An int or ints attribute solved for within [lo, hi].
    hints& solve(std::string name, std::int64_t lo, std::int64_t hi, double present = 0.7) {
        attribute_hint h = named(std::move(name), attribute_hint::kind::solve);
        h.lo = lo;
        h.hi = hi;
        h.present = present;
        return add(std::move(h));
    }
    /// An int attribute that is a boolean switch.
    hints& flag(std::string name, double present = 0.7) {
        attribute_hint h = named(std::move(name), attribute_hint::kind::flag);
        h.present = present;
        return add(std::move(h));
    }
    /// One of a few values (strings such as auto_pad or mode).
    hints& choice(std::string name, std::vector<attribute_value> choices, double present = 0.7) {
        attribute_hint h = named(std::move(name), attribute_hint::kind::choice);
        h.choices = std::move(choices);
        h.present = present;
        return add(std::move(h));
    }
    /// A float attribute drawn uniformly from [lo, hi].
    hints& real(std::string name, double lo, double hi, double present = 0.7) {
        attribute_hint h = named(std::move(name), attribute_hint::kind::real);
        h.real_lo = lo;
        h.real_hi = hi;
        h.present = present;
        return add(std::move(h));
    }
    /// An int attribute holding an ONNX dtype number (Cast's `to`).
    hints& dtype_attribute(std::string name, double present = 1.0) {
        attribute_hint h = named(std::move(name), attribute_hint::kind::dtype);
        h.present = present;
        return add(std::move(h));
    }
    /// A tensor attribute (Constant's value).
    hints& tensor_attribute(std::string name,
                            std::function<tensor(rng&, std::optional<dtype>, const std::optional<shape_type>&)> make,
                            double present = 1.0) {
        attribute_hint h = named(std::move(name), attribute_hint::kind::tensor);
        h.make_tensor = std::move(make);
        h.present = present;
        return add(std::move(h));
    }
    /// An attribute the generator leaves at its default.
    hints& omit(std::string name) { return add(named(std::move(name), attribute_hint::kind::omit)); }

    /// Initial data of input i drawn from [lo, hi] (the input search then moves it into the domain).
    hints& range(std::size_t i, double lo, double hi) {
        input_hint& h = at(i);
        h.range = std::make_pair(lo, hi);
        return *this;
    }
    /// Probability that optional input i is given.
    hints& optional_input(std::size_t i, double present) {
        at(i).present = present;
        return *this;
    }
    hints& before_solving(std::size_t i, std::function<tensor(rng&, const context&)> make) {
        at(i).before_solving = std::move(make);
        return *this;
    }
    hints& after_solving(std::size_t i, std::function<tensor(rng&, const context&, dtype, const shape_type&)> make) {
        at(i).after_solving = std::move(make);
        return *this;
    }
    hints& variadic(std::size_t lo, std::size_t hi) {
        variadic_min = lo;
        variadic_max = hi;
        return *this;
    }
    hints& frequency(double w) {
        weight = w;
        return *this;
    }

private:
    hints& add(attribute_hint h) {
        for (auto& a : attributes) {
            if (a.name == h.name) {
                a = std::move(h);
                return *this;
            }
        }
        attributes.push_back(std::move(h));
        return *this;
    }
    input_hint& at(std::size_t i) {
        for (auto& h : inputs) {
            if (h.index == i) return h;
        }
        inputs.push_back({});
        inputs.back().index = i;
        return inputs.back();
    }
};

}  // namespace tensoracle::spec
