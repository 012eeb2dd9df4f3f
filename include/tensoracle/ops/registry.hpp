// tensoracle: the registry of every op spec. Adding an op is one spec in its
// family header and one entry in that family's tuple; tests iterate this.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>

#include "tensoracle/ops/binary.hpp"
#include "tensoracle/ops/misc.hpp"
#include "tensoracle/ops/nn.hpp"
#include "tensoracle/ops/reduce.hpp"
#include "tensoracle/ops/shape.hpp"
#include "tensoracle/ops/unary.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

namespace detail {
// Joins Hana tuples of types at the type level: hana::concat on these
// constexpr values cost every including file 0.6 s at -O0 (clang -ftime-trace).
template <class... Tuples>
struct join_types;
template <class... A>
struct join_types<hana::tuple<A...>> {
    using type = hana::tuple<A...>;
};
template <class... A, class... B, class... Rest>
struct join_types<hana::tuple<A...>, hana::tuple<B...>, Rest...> : join_types<hana::tuple<A..., B...>, Rest...> {};
}  // namespace detail

/// The type of all_ops (a Hana tuple of types).
using all_ops_type =
    typename detail::join_types<std::remove_cv_t<decltype(unary_ops)>, std::remove_cv_t<decltype(binary_ops)>,
                                std::remove_cv_t<decltype(shape_ops)>, std::remove_cv_t<decltype(reduce_ops)>,
                                std::remove_cv_t<decltype(nn_ops)>, std::remove_cv_t<decltype(misc_ops)>>::type;

/// Every op spec, as a Hana tuple of types.
inline constexpr all_ops_type all_ops{};

namespace detail {
/// The entries of the ops in `op_list`, sorted by op_type. A template so
/// that only a translation unit that calls it instantiates every kernel.
template <class Ops>
[[nodiscard]] std::vector<spec::op_entry> make_registry(Ops op_list) {
    std::vector<spec::op_entry> v;
    hana::for_each(op_list, [&](auto t) { v.push_back(spec::make_entry<typename decltype(t)::type>()); });
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.op_type < b.op_type; });
    return v;
}
}  // namespace detail

#ifdef TENSORACLE_SEPARATE_REGISTRY
/// The type-erased entries, one per op, sorted by op_type. With
/// TENSORACLE_SEPARATE_REGISTRY defined for a whole target, this is only a
/// declaration: exactly one source file of the target includes
/// <tensoracle/registry_definition.hpp>, so every kernel of every op is
/// instantiated once per target instead of once per file (~20 s each at -O0).
[[nodiscard]] const std::vector<spec::op_entry>& registry();
#else
/// The type-erased entries, one per op, sorted by op_type.
[[nodiscard]] inline const std::vector<spec::op_entry>& registry() {
    static const std::vector<spec::op_entry> entries = detail::make_registry(all_ops);
    return entries;
}
#endif

/// The entry of an ONNX op_type; nullptr when the kit has no spec for it.
[[nodiscard]] inline const spec::op_entry* find_op(std::string_view op_type) {
    const auto& r = registry();
    const auto it = std::lower_bound(r.begin(), r.end(), op_type,
                                     [](const spec::op_entry& e, std::string_view k) { return e.op_type < k; });
    return it != r.end() && it->op_type == op_type ? &*it : nullptr;
}

/// Like find_op, but an unknown op is an error naming it.
[[nodiscard]] inline const spec::op_entry& get_op(std::string_view op_type) {
    if (const auto* e = find_op(op_type)) return *e;
    throw error("tensoracle::ops::get_op", "no spec for op_type '" + std::string(op_type) + "'");
}

}  // namespace tensoracle::ops
