// tensoracle: the derivative rules of every differentiable op in the
// registry, looked up by op_type (graph AD, input search, op_engine by name).
// The rules of one op, without the registry, are in ad/op_derivatives.hpp.
//
// In compiled mode (TENSORACLE_COMPILED) the registry-wide tables,
// rules_table<V>() and find_rules<V>(op_type), are defined once in
// tensoracle::compiled, for V = double, float, dual<double> and dual<float>
// (the last two are what op_engine by name and graph AD use for second
// order); the forms that take a Hana tuple of op types stay templates in
// every mode.
#pragma once

#include <algorithm>
#include <string_view>
#include <vector>

#include <boost/hana/for_each.hpp>

#include "tensoracle/ad/op_derivatives.hpp"
#include "tensoracle/core/compiled.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle::ad {

namespace detail {
/// The rules of every differentiable op in the Hana tuple of types
/// `op_list`, in tuple order. Each V instantiates every kernel three times
/// (V, dual<V>, rvar<V>): call it from few translation units.
template <class V, class Ops>
[[nodiscard]] std::vector<derivative_rules<V>> collect_rules(Ops op_list) {
    std::vector<derivative_rules<V>> v;
    hana::for_each(op_list, [&](auto t) {
        using Op = typename decltype(t)::type;
        if constexpr (differentiable_op<Op>) v.push_back(make_rules<V, Op>());
    });
    return v;
}

template <class V>
void sort_rules(std::vector<derivative_rules<V>>& v) {
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.op_type < b.op_type; });
}

template <class V>
[[nodiscard]] const derivative_rules<V>* lookup_rules(const std::vector<derivative_rules<V>>& t,
                                                      std::string_view op_type) {
    const auto it = std::lower_bound(t.begin(), t.end(), op_type,
                                     [](const derivative_rules<V>& r, std::string_view k) { return r.op_type < k; });
    return it != t.end() && it->op_type == op_type ? &*it : nullptr;
}
}  // namespace detail

/// Rules of every differentiable op in the Hana tuple of types `op_list`,
/// sorted by op_type, built once per (V, tuple type).
template <class V, class Ops>
[[nodiscard]] const std::vector<derivative_rules<V>>& rules_table(Ops op_list) {
    static const std::vector<derivative_rules<V>> table = [&] {
        auto v = detail::collect_rules<V>(op_list);
        detail::sort_rules(v);
        return v;
    }();
    return table;
}

/// The rules of op_type among the ops of `op_list`, or nullptr when none of
/// them is op_type or it is not differentiable.
template <class V, class Ops>
[[nodiscard]] const derivative_rules<V>* find_rules(std::string_view op_type, Ops op_list) {
    return detail::lookup_rules(rules_table<V>(op_list), op_type);
}

#if defined(TENSORACLE_COMPILED)
/// Rules of every differentiable op of the registry, sorted by op_type.
/// Compiled mode holds the tables for double, float, dual<double> and
/// dual<float> (the specializations below, defined in tensoracle::compiled).
template <class V>
[[nodiscard]] const std::vector<derivative_rules<V>>& rules_table() {
    static_assert(sizeof(V) == 0,
                  "tensoracle::ad::rules_table<V>(): in compiled mode (TENSORACLE_COMPILED) the registry's rule "
                  "tables exist for V = double, float, dual<double> and dual<float> only; use "
                  "rules_table<V>(ops::all_ops) from <tensoracle/ops/all_ops.hpp> for another V");
    static const std::vector<derivative_rules<V>> none;
    return none;
}
template <>
[[nodiscard]] const std::vector<derivative_rules<double>>& rules_table<double>();
template <>
[[nodiscard]] const std::vector<derivative_rules<float>>& rules_table<float>();
template <>
[[nodiscard]] const std::vector<derivative_rules<dual<double>>>& rules_table<dual<double>>();
template <>
[[nodiscard]] const std::vector<derivative_rules<dual<float>>>& rules_table<dual<float>>();
#else
#ifdef TENSORACLE_SEPARATE_REGISTRY
// Instantiated once per target, in the file that includes
// <tensoracle/registry_definition.hpp> (see ops/registry.hpp).
extern template const std::vector<derivative_rules<double>>& rules_table<double, ops::all_ops_type>(ops::all_ops_type);
extern template const std::vector<derivative_rules<float>>& rules_table<float, ops::all_ops_type>(ops::all_ops_type);
extern template const std::vector<derivative_rules<dual<double>>>& rules_table<dual<double>, ops::all_ops_type>(
    ops::all_ops_type);
extern template const std::vector<derivative_rules<dual<float>>>& rules_table<dual<float>, ops::all_ops_type>(
    ops::all_ops_type);
#endif
/// Rules of every differentiable op of the registry, sorted by op_type.
template <class V>
[[nodiscard]] const std::vector<derivative_rules<V>>& rules_table() {
    return rules_table<V>(ops::all_ops);
}
#endif

/// The rules of op_type, or nullptr when the registry has no such op or it
/// is not differentiable.
template <class V>
[[nodiscard]] const derivative_rules<V>* find_rules(std::string_view op_type) {
    return detail::lookup_rules(rules_table<V>(), op_type);
}

}  // namespace tensoracle::ad

#if defined(TENSORACLE_COMPILED) && defined(TENSORACLE_IMPLEMENTATION)
#include "tensoracle/ad/detail/op_rules_impl.hpp"
#endif
