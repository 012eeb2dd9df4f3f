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
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
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
/// generator's placeholders. A template only so that its dtype dispatch is
/// compiled where it is called, not in every file including the op specs.
template <int = 0>
tensor random_values(rng& g, dtype d, const shape_type& s, double lo, double hi) {
    if (d == dtype::boolean) return g.uniform_tensor(d, s, 0.0, 2.0);
    if (!info(d).is_floating) {
        double ilo = std::ceil(lo), ihi = std::ceil(hi);
        if (d == dtype::u8) ilo = std::max(ilo, 0.0);
        if (ihi <= ilo) ihi = ilo + 1.0;
        return g.uniform_tensor(d, s, ilo, ihi);
    }
    return g.uniform_tensor(d, s, lo, hi);
}

/// What the generator knows of a value's data whatever the free inputs and
/// weights hold: an enclosure [lo, hi] of its elements (possibly infinite),
/// and values some element always takes (Hardmax's 0 and 1, an exclusive
/// CumSum's leading 0, Pad's constant). A vulnerable op placed on a value
/// whose facts exclude its domain (Acosh after Sigmoid, Log after Hardmax)
/// yields a graph no input search can make finite; the generator uses the
/// facts to keep such graphs out. Facts are an over-approximation: unknown
/// means anything.
struct value_facts {
    double lo = -std::numeric_limits<double>::infinity();
    double hi = std::numeric_limits<double>::infinity();
    std::vector<double> forced;  ///< values some element takes for every data (at most a few)
    /// For every data, some element is at most `some_at_most` and some element at least
    /// `some_at_least` (a LogSoftmax row of n holds one <= -log n); infinite: nothing known.
    double some_at_most = std::numeric_limits<double>::infinity();
    double some_at_least = -std::numeric_limits<double>::infinity();
    /// Every element is an integer (integer dtypes; Round, Floor, Ceil, Sign; sums and
    /// products of such), so a domain that holds only strictly between two integers
    /// leaves one value: Atanh of a Round is 0 wherever it is finite.
    bool integral = false;
    /// No element lies strictly between these two (an L2-normalized row of one
    /// element is -1 or 1; ThresholdedRelu is 0 or above alpha).
    std::optional<std::pair<double, double>> gap = std::nullopt;

    [[nodiscard]] static value_facts constant(double c) { return {c, c, {c}}; }
    [[nodiscard]] static value_facts within(double lo, double hi, std::vector<double> forced = {}) {
        return {lo, hi, std::move(forced)};
    }
    [[nodiscard]] bool is_unknown() const noexcept {
        return std::isinf(lo) && lo < 0 && std::isinf(hi) && hi > 0 && forced.empty() && std::isinf(some_at_most) &&
               std::isinf(some_at_least) && !integral && !gap;
    }
    /// Whether v lies in the gap (where no element is).
    [[nodiscard]] bool in_gap(double v) const noexcept { return gap && v > gap->first && v < gap->second; }
    /// The same enclosure without the forced values, element bounds, gap and
    /// integrality (a mean or an interpolation of the elements lies in it too).
    [[nodiscard]] value_facts range_only() const { return {lo, hi, {}}; }
    /// What a subset of the elements holds (Slice, Gather, MaxPool may drop the
    /// elements the forced values and bounds speak of): the range, integrality, the gap.
    [[nodiscard]] value_facts selection() const {
        value_facts out{lo, hi, {}};
        out.integral = integral;
        out.gap = gap;
        return out;
    }
    /// Adds a forced value (widening the enclosure to hold it).
    value_facts& force(double v) {
        if (in_gap(v)) gap.reset();
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        if (std::find(forced.begin(), forced.end(), v) == forced.end()) forced.push_back(v);
        return *this;
    }
    /// These facts as data of dtype d holds them: integer and bool data lies in
    /// the dtype's range (a bool is 0 or 1, a u8 never negative). Facts that
    /// reach outside it were worked out without the wrap-around of integer
    /// arithmetic, so only the dtype's range and the forced values that fit
    /// are kept of them. Floating dtypes: as they are.
    [[nodiscard]] value_facts of_dtype(dtype d) const {
        const auto& i = info(d);
        if (i.is_floating) return d == dtype::f64 ? *this : rounded_to(d);
        double dlo = 0.0, dhi = 1.0;
        if (i.is_integer) {
            dlo = i.is_signed ? -std::ldexp(1.0, i.bits - 1) : 0.0;
            dhi = std::ldexp(1.0, i.is_signed ? i.bits - 1 : i.bits) - 1.0;
        }
        if (lo >= dlo && hi <= dhi) {
            value_facts out = *this;
            out.integral = true;
            return out;
        }
        // A forced value inside the range is still exact: wrap-around is
        // arithmetic modulo 2^bits, so a result that fits is the true one
        // (an exclusive CumSum's leading 0 whatever the sum's range).
        value_facts out = within(dlo, dhi);
        out.integral = true;
        for (const double v : forced) {
            if (v >= dlo && v <= dhi && v == std::floor(v)) out.forced.push_back(v);
        }
        return out;
    }
    /// These facts of values an op rounds to floating dtype d at the end: each
    /// bound rounded as the values are. Rounding to nearest is monotone, so a
    /// bound of the exact values, rounded, bounds the rounded values (a float16
    /// Erf of x <= -3.5 is -1 exactly: Atanh of it fails, while float32's
    /// -0.9999993 does not).
    [[nodiscard]] value_facts rounded_to(dtype d) const {
        const double top = visit(d, [](auto t) {
            using T = typename decltype(t)::type;
            return value_cast<double>(std::numeric_limits<T>::max());
        });
        auto round = [d, top](double v) {
            if (!std::isfinite(v) || std::fabs(v) > top) return v;  // beyond: as it is (weaker, still true)
            return visit(d, [v](auto t) {
                using T = typename decltype(t)::type;
                return value_cast<double>(value_cast<T>(v));
            });
        };
        value_facts out = *this;
        out.lo = round(lo);
        out.hi = round(hi);
        out.some_at_most = round(some_at_most);
        out.some_at_least = round(some_at_least);
        out.forced.clear();
        for (const double v : forced) {
            const double r = round(v);
            if (std::find(out.forced.begin(), out.forced.end(), r) == out.forced.end()) out.forced.push_back(r);
        }
        if (gap) out.gap = std::make_pair(round(gap->first), round(gap->second));
        return out;
    }
    /// Both values' elements in one (Concat, Pad's added constant): the hull, every forced value.
    value_facts& join(const value_facts& o) {
        if (gap && !(o.hi <= gap->first || o.lo >= gap->second)) gap.reset();
        lo = std::min(lo, o.lo);
        hi = std::max(hi, o.hi);
        for (const double v : o.forced) force(v);
        some_at_most = std::min(some_at_most, o.some_at_most);
        some_at_least = std::max(some_at_least, o.some_at_least);
        integral = integral && o.integral;
        return *this;
    }
};

/// Facts of an op's outputs from its inputs' facts, attributes and input
/// shapes (absent inputs: unknown facts, empty shape). Fewer facts than
/// outputs leave the rest unknown, except for a variadic output, which the
/// last fact describes. May throw tensoracle::error (attributes it cannot
/// parse): the generator then knows nothing of the outputs.
using facts_function = std::function<std::vector<value_facts>(std::span<const value_facts>, const attribute_map&,
                                                              std::span<const shape_type>)>;

namespace facts {
/// Every output element is an input element of input `i` and every input element appears
/// (Reshape, Transpose, Expand, Tile): range and forced values carry over.
[[nodiscard]] inline facts_function copy_of(std::size_t i = 0) {
    return [i](std::span<const value_facts> in, const attribute_map&, std::span<const shape_type>) {
        return std::vector<value_facts>{i < in.size() ? in[i] : value_facts{}};
    };
}
/// Every output element is some element of input `i` (Slice, Gather, MaxPool, ReduceMax):
/// the range carries over, forced values may be left out.
[[nodiscard]] inline facts_function selection_of(std::size_t i = 0) {
    return [i](std::span<const value_facts> in, const attribute_map&, std::span<const shape_type>) {
        return std::vector<value_facts>{i < in.size() ? in[i].selection() : value_facts{}};
    };
}
/// Points of [lo, hi] that probe an element-wise function: both ends, a
/// dense grid where values are moderate, and magnitudes 1e-8 ... 1e30 of
/// both signs, so saturation, poles near 0 and overflow show.
[[nodiscard]] inline std::vector<double> probe_points(double lo, double hi) {
    static constexpr double magnitudes[] = {1e-8, 1e-4, 1e-2, 1e2, 1e3, 1e4, 1e6, 1e10, 1e20, 1e30};
    std::vector<double> p;
    p.reserve(56);
    auto add = [&](double x) {
        if (x >= lo && x <= hi) p.push_back(x);
    };
    add(lo);
    add(hi);
    add(0.0);
    const double a = std::max(lo, -16.0), b = std::min(hi, 16.0);
    if (a <= b) {
        for (int k = 0; k <= 32; ++k) add(a + (b - a) * k / 32.0);
    }
    for (const double m : magnitudes) {
        add(m);
        add(-m);
    }
    return p;
}

/// The facts of f applied to every element of a value with facts `x`: the
/// enclosure of f over probe points (a sampled image, exact for the monotone
/// and saturating functions of the unary ops), forced values mapped. Points
/// where f is NaN (outside its domain) are left out.
template <class Fn>
[[nodiscard]] value_facts image(const value_facts& x, Fn&& f) {
    value_facts out;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    // Each side of a gap on its own: images apart keep a gap between them.
    double below_lo = lo, below_hi = -lo, above_lo = lo, above_hi = -lo;
    auto probe = [&](double p) {
        if (x.in_gap(p)) return;
        const double y = static_cast<double>(f(p));
        if (std::isnan(y)) return;
        lo = std::min(lo, y);
        hi = std::max(hi, y);
        if (x.gap && p <= x.gap->first) {
            below_lo = std::min(below_lo, y);
            below_hi = std::max(below_hi, y);
        } else if (x.gap) {
            above_lo = std::min(above_lo, y);
            above_hi = std::max(above_hi, y);
        }
    };
    for (const double p : probe_points(x.lo, x.hi)) probe(p);
    if (x.gap) {
        for (const double p : {x.gap->first, x.gap->second}) {
            if (p >= x.lo && p <= x.hi) probe(p);
        }
    }
    if (lo > hi) return out;  // f is NaN everywhere probed: nothing known
    out.lo = lo;
    out.hi = hi;
    if (below_lo <= below_hi && above_lo <= above_hi) {
        if (below_hi < above_lo) out.gap = std::make_pair(below_hi, above_lo);
        if (above_hi < below_lo) out.gap = std::make_pair(above_hi, below_lo);
    }
    for (const double v : x.forced) {
        const double y = static_cast<double>(f(v));
        if (!std::isnan(y)) out.force(y);
    }
    // Element bounds survive a monotone f (Asinh of a LogSoftmax row still has
    // one element <= asinh(-log n)); a decreasing f swaps them. Monotonicity is
    // judged on the sorted probe points, as the enclosure is.
    if (std::isfinite(x.some_at_most) || std::isfinite(x.some_at_least)) {
        auto points = probe_points(x.lo, x.hi);
        std::sort(points.begin(), points.end());
        bool up = true, down = true;
        double prev = std::numeric_limits<double>::quiet_NaN();
        for (const double p : points) {
            const double y = static_cast<double>(f(p));
            if (std::isnan(y)) {
                up = down = false;
                break;
            }
            if (!std::isnan(prev)) {
                up = up && y >= prev;
                down = down && y <= prev;
            }
            prev = y;
        }
        auto at = [&](double m) {
            const double y = static_cast<double>(f(std::clamp(m, x.lo, x.hi)));
            return std::isnan(y) ? std::numeric_limits<double>::quiet_NaN() : y;
        };
        const double m = at(x.some_at_most), l = at(x.some_at_least);
        if (up) {
            if (std::isfinite(x.some_at_most) && !std::isnan(m)) out.some_at_most = m;
            if (std::isfinite(x.some_at_least) && !std::isnan(l)) out.some_at_least = l;
        } else if (down) {
            if (std::isfinite(x.some_at_most) && !std::isnan(m)) out.some_at_least = m;
            if (std::isfinite(x.some_at_least) && !std::isnan(l)) out.some_at_most = l;
        }
    }
    return out;
}

/// Facts of an element-wise op of several inputs from the corners of their
/// enclosures, for ops monotone in each input (Max, Min, Add, Sub) or
/// bilinear (Mul): the extremes of f over a box lie at its corners. A NaN
/// corner leaves the output unknown. Element bounds
/// carry over where f keeps them: Min keeps "some element <= m" of every
/// input, Max "some element >= m".
template <class Fn>
[[nodiscard]] value_facts corners(std::span<const value_facts> in, Fn&& f, bool keeps_at_most = false,
                                  bool keeps_at_least = false) {
    if (in.empty()) return {};
    value_facts acc = in[0].range_only();
    acc.forced = in[0].forced;
    acc.some_at_most = in[0].some_at_most;
    acc.some_at_least = in[0].some_at_least;
    // An infinite end only says "unbounded": every element of a run that goes on
    // is finite, so f is taken at the largest finite values (0 * x is 0, not NaN).
    auto finite = [](double v) { return std::clamp(v, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max()); };
    for (std::size_t k = 1; k < in.size(); ++k) {
        const auto& b = in[k];
        const double al = finite(acc.lo), ah = finite(acc.hi), bl = finite(b.lo), bh = finite(b.hi);
        const double c[4] = {f(al, bl), f(al, bh), f(ah, bl), f(ah, bh)};
        value_facts next;
        if (std::none_of(c, c + 4, [](double v) { return std::isnan(v); })) {
            next.lo = *std::min_element(c, c + 4);
            next.hi = *std::max_element(c, c + 4);
        }
        // A forced value whose image is the same at both ends of the other operand's
        // enclosure (0 * y, max(a, y) with y <= a, a + c for a constant c) has that
        // image wherever it meets the other operand: f monotone or linear in that
        // operand is constant between equal ends.
        for (const double a : acc.forced) {
            const double u = f(finite(a), bl);
            if (!std::isnan(u) && u == f(finite(a), bh)) next.force(u);
        }
        for (const double v : b.forced) {
            const double u = f(al, finite(v));
            if (!std::isnan(u) && u == f(ah, finite(v))) next.force(u);
        }
        if (keeps_at_most) next.some_at_most = std::min(acc.some_at_most, b.some_at_most);
        if (keeps_at_least) next.some_at_least = std::max(acc.some_at_least, b.some_at_least);
        acc = next;
    }
    // Sums, differences, products, maxima and minima of integers are integers.
    acc.integral = std::all_of(in.begin(), in.end(), [](const value_facts& x) { return x.integral; });
    if (!keeps_at_most && in.size() > 1) acc.some_at_most = std::numeric_limits<double>::infinity();
    if (!keeps_at_least && in.size() > 1) acc.some_at_least = -std::numeric_limits<double>::infinity();
    return acc;
}

}  // namespace facts

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
    bool nonempty = false;                       ///< shape-like values: never generated empty (nonempty_values)
    std::optional<std::pair<double, double>> range;  ///< initial data range
    /// Initial data range when the input's dtype is an integer one (overrides `range`):
    /// integer data moves only by re-drawing, so it must be drawn where the op does something.
    std::optional<std::pair<double, double>> integer_range;
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
    /// Inputs real models hold as constants (Conv's W and B, normalization
    /// parameters, a slope, clip bounds): the generator makes them initializers
    /// with config::weight_probability, because what compilers rewrite (a
    /// BatchNormalization folded into a Conv) needs them constant.
    std::vector<std::size_t> weight_inputs;
    /// The kernel's work (multiply-adds, comparisons) in terms of the symbolic
    /// context and the output shapes: the generator keeps it at most
    /// gen::config::max_work, so a Conv of two 64K-element tensors does not
    /// cost billions of operations. Ops whose work is about their output size
    /// leave it empty.
    std::function<expr(const context&, const std::vector<std::vector<expr>>&)> work_estimate;
    /// The work the kernel does at concrete inputs and attributes, where it
    /// can be far below work_estimate's bound (a Conv or pool window mostly in
    /// the padding visits only its in-bounds taps): what the input search
    /// charges a node against its budget. Empty: work_estimate's value.
    std::function<double(const context&)> visited_work;
    /// What the op's outputs hold given what its inputs hold (value_facts);
    /// empty: nothing known (every output may be anything).
    facts_function output_facts;
    /// The shapes `output_facts` gets are the inputs' followed by the outputs'
    /// (a reduction's group size is the ratio of their element counts).
    bool facts_read_output_shapes = false;
    /// Set by copies(i): input i's elements are exactly the output's (see there).
    std::optional<std::size_t> copied_input;
    /// The output's facts when both operands are one value (Sub(x, x) is 0).
    std::optional<value_facts> equal_operands_facts;
    /// Whether the generator may run the kernel on data some of whose floating
    /// elements no one knows, marked NaN, to find the elements that hold the same
    /// value for every data (Pad's constant, Trilu's zeros, a Conv output no tap
    /// reaches, and where Slice or Gather take them). `nan_faithful`: every output
    /// element that reads a NaN is NaN (copies, selections, sums of products), so
    /// one that is not reads known elements only. `elementwise`: output element k
    /// reads input element k alone; where that is NaN the output is taken as
    /// unknown whatever the kernel gave (Relu's max(0, NaN) may be 0).
    enum class unknown_data { not_run, nan_faithful, elementwise };
    unknown_data runs_on_unknowns = unknown_data::not_run;

    [[nodiscard]] const attribute_hint* attribute(std::string_view name) const {
        for (const auto& a : attributes) {
            if (a.name == name) return &a;
        }
        return nullptr;
    }
    [[nodiscard]] bool is_weight(std::size_t i) const {
        return std::find(weight_inputs.begin(), weight_inputs.end(), i) != weight_inputs.end();
    }
    /// Marks inputs as weights (see weight_inputs).
    hints& weights(std::initializer_list<std::size_t> slots) {
        // One push_back per slot, not a range insert: GCC 12 at -O3 reports a false
        // -Wstringop-overflow on the inlined range insert into an empty vector.
        for (const auto s : slots) weight_inputs.push_back(s);
        return *this;
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
    hints& visits(std::function<double(const context&)> work) {
        visited_work = std::move(work);
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
    /// Initial data of input i drawn from [lo, hi] when its dtype is an integer one
    /// (no gradient moves integers: Erf of an integer is 0 unless |x| >= 6).
    hints& integer_range(std::size_t i, double lo, double hi) {
        at(i).integer_range = std::make_pair(lo, hi);
        return *this;
    }
    /// Input i (shape-like values) is generated with at least one value: where ONNX's
    /// text leaves an empty list open (Squeeze's axes: nothing, or every dim of 1?),
    /// the generator does not draw it; the op still accepts it.
    hints& nonempty_values(std::size_t i) {
        at(i).nonempty = true;
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
    hints& facts(facts_function f) {
        output_facts = std::move(f);
        return *this;
    }
    /// As facts(f), with the output shapes after the input shapes in f's `shapes`
    /// (the first in.size() are the inputs').
    hints& facts_with_output_shapes(facts_function f) {
        output_facts = std::move(f);
        facts_read_output_shapes = true;
        return *this;
    }
    /// Every output element is an element of input i, and every element of
    /// input i appears in the output unless it is empty (Reshape, Transpose,
    /// Expand, Tile): the facts carry over both ways, so a domain rule one
    /// reader of the output imposes holds for input i and its other readers.
    hints& copies(std::size_t i = 0) {
        output_facts = facts::copy_of(i);
        copied_input = i;
        runs_on_unknowns = unknown_data::nan_faithful;
        return *this;
    }
    /// See runs_on_unknowns.
    hints& nan_faithful() {
        runs_on_unknowns = unknown_data::nan_faithful;
        return *this;
    }
    /// What the output holds when both operands are the same value (Sub(x, x)
    /// is 0): facts of the inputs alone cannot tell.
    hints& when_operands_equal(value_facts f) {
        equal_operands_facts = std::move(f);
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
