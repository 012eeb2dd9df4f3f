// tensoracle: Reshape (the input's elements in a new shape; 0 copies and -1 infers a dim).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct reshape_attr {
    std::int64_t allowzero = 0;
};

/// Reshape-14(data, shape): 0 copies the input dim at the same position
/// (unless allowzero != 0, where it is a literal 0), -1 (at most one) is
/// inferred from the element count.
struct Reshape : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Reshape";
    static constexpr int opset = 14;
    using attributes = reshape_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all}, {"shape", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"reshaped", spec::types::all}}};

    /// What shape value i stands for, with -1 counted as 1.
    static spec::expr resolved(const spec::context& c, const std::vector<spec::expr>& v, std::size_t i) {
        const spec::expr copy = i < c.rank(0) ? c.dim(0, i) : spec::expr(0);
        return select(v[i] == -1, spec::expr(1), select(v[i] == 0 && c.attr("allowzero") == 0, copy, v[i]));
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto v = c.values(1);
        const auto az = c.attr("allowzero");
        std::vector<spec::constraint> out;
        std::vector<spec::expr> minus, zero, res;
        for (std::size_t i = 0; i < v.size(); ++i) {
            out.push_back({v[i] >= -1, "shape value " + std::to_string(i) + " is >= -1"});
            if (i >= c.rank(0)) {
                out.push_back({!(v[i] == 0 && az == 0), "shape value " + std::to_string(i) +
                                                            " = 0 copies input dim " + std::to_string(i) +
                                                            ", which does not exist (input rank " +
                                                            std::to_string(c.rank(0)) + ")"});
            }
            minus.push_back(shape_util::indicator(v[i] == -1));
            zero.push_back(v[i] == 0);
            res.push_back(resolved(c, v, i));
        }
        out.push_back({shape_util::sum(minus) <= 1, "at most one shape value is -1"});
        out.push_back({az == 0 || !(shape_util::any_of(zero) && shape_util::sum(minus) >= 1), "with allowzero, shape may not hold both 0 and -1"});
        const auto p = spec::product(res), total = spec::product(c.shape(0));
        out.push_back({select(shape_util::sum(minus) >= 1, p != 0 && total % shape_util::emax(p, spec::expr(1)) == 0, p == total),
                       "the new shape holds as many elements as the input (-1 divides exactly)"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto v = c.values(1);
        std::vector<spec::expr> res, out;
        for (std::size_t i = 0; i < v.size(); ++i) res.push_back(resolved(c, v, i));
        const auto p = spec::product(res), total = spec::product(c.shape(0));
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back(select(v[i] == -1, total / shape_util::emax(p, spec::expr(1)), res[i]));
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(0, shape_detail::max_rank)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// The output shape, checked concretely (same rules as the constraints).
    static shape_type target_shape(const shape_type& in, std::span<const std::int64_t> shape, bool allowzero) {
        shape_type out;
        std::optional<std::size_t> minus;
        bool has_zero = false;
        for (std::size_t i = 0; i < shape.size(); ++i) {
            const std::int64_t v = shape[i];
            if (v == -1) {
                if (minus) throw shape_error(op_type, "shape has more than one -1 (positions " + std::to_string(*minus) + " and " + std::to_string(i) + ")");
                minus = i;
                out.push_back(1);
            } else if (v < -1) {
                throw shape_error(op_type, "shape value " + std::to_string(i) + " is " + std::to_string(v) + " (must be >= -1)");
            } else if (v == 0 && !allowzero) {
                if (i >= in.size()) {
                    throw shape_error(op_type, "shape value " + std::to_string(i) + " = 0 copies an input dim, but the input has rank " + std::to_string(in.size()));
                }
                out.push_back(in[i]);
            } else {
                has_zero = has_zero || v == 0;
                out.push_back(static_cast<std::size_t>(v));
            }
        }
        if (allowzero && has_zero && minus) throw shape_error(op_type, "with allowzero=1 the shape may not hold both 0 and -1");
        const std::size_t p = element_count(out, op_type), total = element_count(in, op_type);
        if (minus) {
            if (p == 0 || total % p != 0) {
                throw shape_error(op_type, "cannot infer the -1 dim: " + std::to_string(total) + " elements into " + to_string(out));
            }
            out[*minus] = total / p;
        } else if (p != total) {
            throw shape_error(op_type, "shape " + to_string(out) + " holds " + std::to_string(p) + " elements, the input " + to_string(in) + " holds " + std::to_string(total));
        }
        return out;
    }
    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> shape, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Reshape, T>::value);
        const auto out_shape = target_shape(shape_util::shape_of(x), shape, a.allowzero != 0);
        auto y = array<T>::from_shape(out_shape);
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return compute<T>(x, shape_util::int_values(c.input(1), op_type), a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Reshape>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Reshape>(c, x);
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.flag("allowzero", 0.3).copies(0); }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reshape_attr, allowzero);
