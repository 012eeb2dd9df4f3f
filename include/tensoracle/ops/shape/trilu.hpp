// tensoracle: Trilu (the upper or lower triangle of the last two dims, the rest zeroed).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct trilu_attr {
    std::int64_t upper = 1;
};

/// Trilu-14(input, k?): keeps, in each of the last two dims' matrices, the
/// elements with j - i >= k (upper != 0) or j - i <= k (upper == 0); zeroes
/// the rest. k is a scalar (rank 0, or one value), default 0.
struct Trilu : spec::like_input<0> {
    static constexpr std::string_view op_type = "Trilu";
    static constexpr int opset = 14;
    using attributes = trilu_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all, {2, 8}}, {"k", spec::types::int64, {0, 1}, "T1", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {2, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (c.has_input(1) && c.rank(1) == 1) return {{c.dim(1, 0) == 1, "k is a single value"}};
        return {};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank < 2) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {0, 1}}};  // k: a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::int64_t k = 0, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Trilu, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.size() < 2) throw shape_error(op_type, "input must have rank >= 2, got " + std::to_string(in.size()));
        const std::size_t rows = in[in.size() - 2], cols = in[in.size() - 1];
        auto y = array<T>::from_shape(in);
        for (std::size_t f = 0; f < x.size(); ++f) {
            const auto i = static_cast<std::int64_t>(f / cols % rows), j = static_cast<std::int64_t>(f % cols);
            const bool keep = a.upper != 0 ? j - i >= k : j - i <= k;
            y.data()[f] = keep ? x.data()[f] : T{};
        }
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        std::int64_t k = 0;
        if (c.has_input(1)) {
            const auto v = shape_util::int_values(c.input(1), op_type);
            if (v.size() != 1) throw shape_error(op_type, "k must hold one value, got " + std::to_string(v.size()));
            k = v[0];
        }
        return compute<T>(x, k, a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Trilu>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Trilu>(c, x);
    }
    template <int = 0>
    static spec::hints hints() {
        // Zeros where the triangle leaves elements out (every matrix but 1 x 1 and the widest k).
        return spec::hints{}.nan_faithful().flag("upper").facts([](std::span<const spec::value_facts> in, const spec::attribute_map&,
                                                    std::span<const shape_type> shapes) {
            spec::value_facts out = in.empty() ? spec::value_facts{} : in[0];
            const bool single = !shapes.empty() && shapes[0].size() >= 2 && shapes[0][shapes[0].size() - 1] == 1 &&
                                shapes[0][shapes[0].size() - 2] == 1;
            if (!single) out.force(0.0);
            return std::vector<spec::value_facts>{out};
        });
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::trilu_attr, upper);
