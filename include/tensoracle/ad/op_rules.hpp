// tensoracle: the derivative rules of every differentiable op in the
// registry, looked up by op_type (graph AD, input search, op_engine by name).
// The rules of one op, without the registry, are in ad/op_derivatives.hpp.
#pragma once

#include <algorithm>
#include <string_view>
#include <vector>

#include <boost/hana/for_each.hpp>

#include "tensoracle/ad/op_derivatives.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle::ad {

/// Rules of every differentiable op in the Hana tuple of types `ops` (all
/// registry ops by default), sorted by op_type. Each V instantiates every
/// kernel three times (V, dual<V>, rvar<V>): call it from few translation units.
template <class V, class Ops = ops::all_ops_type>
[[nodiscard]] const std::vector<derivative_rules<V>>& rules_table(Ops op_list = ops::all_ops) {
    static const std::vector<derivative_rules<V>> table = [&] {
        std::vector<derivative_rules<V>> v;
        hana::for_each(op_list, [&](auto t) {
            using Op = typename decltype(t)::type;
            if constexpr (differentiable_op<Op>) v.push_back(make_rules<V, Op>());
        });
        std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.op_type < b.op_type; });
        return v;
    }();
    return table;
}

/// The rules of op_type, or nullptr when the op is not differentiable.
#ifdef TENSORACLE_SEPARATE_REGISTRY
// Instantiated once per target, in the file that includes
// <tensoracle/registry_definition.hpp> (see ops/registry.hpp).
extern template const std::vector<derivative_rules<double>>& rules_table<double, ops::all_ops_type>(ops::all_ops_type);
extern template const std::vector<derivative_rules<float>>& rules_table<float, ops::all_ops_type>(ops::all_ops_type);
#endif

template <class V, class Ops = ops::all_ops_type>
[[nodiscard]] const derivative_rules<V>* find_rules(std::string_view op_type, Ops op_list = ops::all_ops) {
    const auto& t = rules_table<V>(op_list);
    const auto it = std::lower_bound(t.begin(), t.end(), op_type,
                                     [](const derivative_rules<V>& r, std::string_view k) { return r.op_type < k; });
    return it != t.end() && it->op_type == op_type ? &*it : nullptr;
}

}  // namespace tensoracle::ad
