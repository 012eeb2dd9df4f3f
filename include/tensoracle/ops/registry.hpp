// tensoracle: the registry of every op spec, looked up by ONNX op_type
// (ops::get_op, find_op). Adding an op is one spec in its family header and
// one entry in that family's tuple (ops/all_ops.hpp joins them).
//
// In compiled mode (TENSORACLE_COMPILED) this header only declares the
// registry and includes no op spec: the library built it once. Include
// <tensoracle/ops/all_ops.hpp> there for the typed list of every op.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/for_each.hpp>

#include "tensoracle/core/compiled.hpp"
#include "tensoracle/spec/entry.hpp"
#if !defined(TENSORACLE_COMPILED)
#include "tensoracle/ops/all_ops.hpp"
#endif

namespace tensoracle::ops {

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

#if defined(TENSORACLE_COMPILED) || defined(TENSORACLE_SEPARATE_REGISTRY)
/// The type-erased entries, one per op, sorted by op_type. In compiled mode
/// this is only a declaration: tensoracle::compiled (or the one
/// TENSORACLE_IMPLEMENTATION file) defines it, so every kernel of every op is
/// instantiated once per build instead of once per file (~20 s each at -O0).
/// TENSORACLE_SEPARATE_REGISTRY is the older form of the same: exactly one
/// source file of the target includes <tensoracle/registry_definition.hpp>.
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

#if defined(TENSORACLE_COMPILED) && defined(TENSORACLE_IMPLEMENTATION)
#include "tensoracle/ops/detail/registry_impl.hpp"
#endif
