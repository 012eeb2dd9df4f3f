// tensoracle: Tile (the input repeated along each axis).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

/// Tile-13(input, repeats): output dim i is dim i * repeats[i].
struct Tile : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Tile";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all}, {"repeats", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out{{c.dim(1, 0) == spec::expr(c.rank(0)), "repeats has one entry per input axis"}};
        const auto v = c.values(1);
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "repeats[" + std::to_string(i) + "] >= 0"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto v = c.values(1);
        std::vector<spec::expr> out;
        for (std::size_t i = 0; i < c.rank(0); ++i) out.push_back(c.dim(0, i) * (i < v.size() ? v[i] : spec::expr(1)));
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> repeats) {
        static_assert(spec::dtype_accepted<Tile, T>::value);
        const auto in = shape_util::shape_of(x);
        if (repeats.size() != in.size()) {
            throw shape_error(op_type, "repeats has " + std::to_string(repeats.size()) + " entries; the input has rank " + std::to_string(in.size()));
        }
        shape_type out(in.size());
        for (std::size_t i = 0; i < in.size(); ++i) {
            const auto rep = shape_util::to_dim(repeats[i], op_type, "repeats[" + std::to_string(i) + "]");
            if (in[i] != 0 && rep > std::numeric_limits<std::size_t>::max() / in[i]) throw shape_error(op_type, "output dim overflows");
            out[i] = in[i] * rep;
        }
        const auto st = detail::strides_of(in);
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0;
            for (std::size_t i = 0; i < o.size(); ++i) f += (o[i] % in[i]) * st[i];
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, shape_util::int_values(c.input(1), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Tile>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Tile>(c, x);
    }
};

}  // namespace tensoracle::ops
