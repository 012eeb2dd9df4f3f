// tensoracle: CastLike (Cast of input to the dtype of target_type).
#pragma once

#include <array>
#include <cstddef>
#include <numeric>
#include <span>
#include <string_view>
#include <vector>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace misc {
inline std::vector<std::size_t> all_ranks(std::size_t max_rank) {
    std::vector<std::size_t> r(max_rank + 1);
    std::iota(r.begin(), r.end(), std::size_t{0});
    return r;
}
}  // namespace misc

/// CastLike(input, target_type): Cast to target_type's dtype.
// Derivatives: input only: target_type gives its dtype, not its values.
struct CastLike : spec::dtype_of_input<1>, spec::shape_of_input<0>, spec::differentiable_input<0> {
    static constexpr std::string_view op_type = "CastLike";
    static constexpr int opset = 15;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all, {}, "T1"}, {"target_type", spec::types::all, {}, "T2"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {}, "T2"}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        return {{spec::types::all.members(), {rank}}, {{out}, misc::all_ranks(8)}};  // target_type: any rank
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) {
        return {detail::cast_range_rule([](std::span<const tensor> in) { return in[1].element_dtype(); })};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return {c.input(0).cast(c.input_dtype(1))}; }
    /// The kernel on AD scalar S. Floating to floating has the value of run()
    /// (rounded to the target dtype) and passes the derivative through as the
    /// identity, as frameworks differentiate a cast, rather than the zero
    /// derivative of the rounding. A non-floating input gives constants; a
    /// non-floating target has no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(1)).is_floating) return {array<S>{}};
        if (info(c.input_dtype(0)).is_floating) {
            using B = base_scalar_t<S>;
            return detail::single_output(detail::dispatch<spec::types::floating, array<S>>(c.input_dtype(1), op_type, [&](auto t) {
                using To = typename decltype(t)::type;
                array<S> y = x[0];
                for (auto& v : y) {
                    const B p = primal(v);
                    const B r = value_cast<B>(value_cast<To>(p));
                    // r - p is exact in B, so v + (r - p) has the value r; a constant keeps v's derivatives.
                    if (!(r == p)) v += value_cast<S>(r - p);
                }
                return y;
            }));
        }
        const auto v = c.input(0).cast(c.input_dtype(1)).to<double>();
        auto y = array<S>::from_shape(v.shape());
        for (std::size_t i = 0; i < v.size(); ++i) y.data()[i] = value_cast<S>(v.data()[i]);
        return {y};
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::copy_of(0)).range(0, -50, 50); }
};

}  // namespace tensoracle::ops
