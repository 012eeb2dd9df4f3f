// tensoracle: Transpose (permutes the axes).
//
// Semantics chosen where ONNX leaves them open: Transpose's perm must be a
// permutation of [0, rank) (no negative entries).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct transpose_attr {
    std::optional<std::vector<std::int64_t>> perm;
};

/// Transpose-13(data): output axis i is input axis perm[i]; perm defaults to
/// the reversed axes. perm must be a permutation of [0, rank).
struct Transpose : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "Transpose";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = transpose_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"transposed", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto p = c.attr_ints("perm");
        const std::size_t r = c.rank(0);
        if (!c.has_attribute("perm")) return {};
        std::vector<spec::constraint> out{{spec::list_length(p) == spec::expr(r), "perm has one entry per input axis"}};
        if (p.size() != r) return out;
        for (std::size_t i = 0; i < p.size(); ++i) {
            out.push_back({p[i] >= 0 && p[i] < spec::expr(r), "perm[" + std::to_string(i) + "] is an axis in [0, rank)"});
        }
        auto d = shape_util::distinct_axes(p, "perm entries");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto dims = c.shape(0);
        std::vector<spec::expr> out;
        if (!c.has_attribute("perm")) {
            out.assign(dims.rbegin(), dims.rend());
        } else {
            for (const auto& p : c.attr_ints("perm")) out.push_back(shape_util::pick(dims, p));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<Transpose, T>::value);
        const std::size_t r = x.dimension();
        std::vector<std::size_t> perm(r);
        if (a.perm) {
            if (a.perm->size() != r) {
                throw shape_error(op_type, "perm has " + std::to_string(a.perm->size()) + " entries; the input has rank " + std::to_string(r));
            }
            std::vector<bool> seen(r, false);
            for (std::size_t i = 0; i < r; ++i) {
                const std::int64_t p = (*a.perm)[i];
                if (p < 0 || p >= static_cast<std::int64_t>(r) || seen[static_cast<std::size_t>(p)]) {
                    throw shape_error(op_type, "perm is not a permutation of [0, " + std::to_string(r) + "): bad entry " + std::to_string(p));
                }
                seen[static_cast<std::size_t>(p)] = true;
                perm[i] = static_cast<std::size_t>(p);
            }
        } else {
            for (std::size_t i = 0; i < r; ++i) perm[i] = r - 1 - i;
        }
        const auto in = shape_util::shape_of(x);
        const auto st = detail::strides_of(in);
        shape_type out(r);
        for (std::size_t i = 0; i < r; ++i) out[i] = in[perm[i]];
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0;
            for (std::size_t i = 0; i < r; ++i) f += o[i] * st[perm[i]];
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<Transpose>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<Transpose>(c, x);
    }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::transpose_attr, perm);
