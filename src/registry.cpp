// tensoracle::compiled: ops::registry() and the registry-wide AD rule tables,
// joined from the op families' translation units (family_*.cpp).
#include <algorithm>
#include <array>
#include <vector>

#include "family_tables.hpp"
#include "tensoracle/ad/op_rules.hpp"
#include "tensoracle/ops/registry.hpp"

namespace tensoracle {
namespace compiled_detail {
namespace {
// Built on first use (a function-local static), so the tables exist before
// any caller in another translation unit's static initializer reads them.
const std::vector<family_tables>& families() {
#define TENSORACLE_CALL_FAMILY(name) name##_tables(),
    static const std::vector<family_tables> all{TENSORACLE_OP_FAMILIES(TENSORACLE_CALL_FAMILY)};
#undef TENSORACLE_CALL_FAMILY
    return all;
}
const std::vector<family_dual_tables>& dual_families() {
#define TENSORACLE_CALL_FAMILY(name) name##_dual_tables(),
    static const std::vector<family_dual_tables> all{TENSORACLE_OP_FAMILIES(TENSORACLE_CALL_FAMILY)};
#undef TENSORACLE_CALL_FAMILY
    return all;
}

template <class T, class Families, class Member>
std::vector<T> joined(const Families& families, Member member) {
    std::vector<T> v;
    for (const auto& f : families) v.insert(v.end(), (f.*member).begin(), (f.*member).end());
    return v;
}

template <class V, class Families, class Member>
const std::vector<ad::derivative_rules<V>>& sorted_rules(const Families& families, Member member) {
    static const std::vector<ad::derivative_rules<V>> table = [&] {
        auto v = joined<ad::derivative_rules<V>>(families, member);
        ad::detail::sort_rules(v);
        return v;
    }();
    return table;
}
}  // namespace
}  // namespace compiled_detail

namespace ops {
const std::vector<spec::op_entry>& registry() {
    static const std::vector<spec::op_entry> entries = [] {
        auto v = compiled_detail::joined<spec::op_entry>(compiled_detail::families(),
                                                         &compiled_detail::family_tables::entries);
        std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.op_type < b.op_type; });
        return v;
    }();
    return entries;
}
}  // namespace ops

namespace ad {
using compiled_detail::dual_families;
using compiled_detail::families;
using compiled_detail::family_dual_tables;
using compiled_detail::family_tables;
using compiled_detail::sorted_rules;
template <>
const std::vector<derivative_rules<double>>& rules_table<double>() {
    return sorted_rules<double>(families(), &family_tables::rules_f64);
}
template <>
const std::vector<derivative_rules<float>>& rules_table<float>() {
    return sorted_rules<float>(families(), &family_tables::rules_f32);
}
template <>
const std::vector<derivative_rules<dual<double>>>& rules_table<dual<double>>() {
    return sorted_rules<dual<double>>(dual_families(), &family_dual_tables::rules_f64);
}
template <>
const std::vector<derivative_rules<dual<float>>>& rules_table<dual<float>>() {
    return sorted_rules<dual<float>>(dual_families(), &family_dual_tables::rules_f32);
}
}  // namespace ad
}  // namespace tensoracle
