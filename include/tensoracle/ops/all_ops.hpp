// tensoracle: every op spec of the kit, as one Hana tuple of types
// (ops::all_ops), built from the families' tuples. Tests and backend tables
// iterate it; the by-name registry (ops/registry.hpp) is built from it.
#pragma once

#include <type_traits>

#include <boost/hana/tuple.hpp>

#include "tensoracle/ops/binary.hpp"
#include "tensoracle/ops/misc.hpp"
#include "tensoracle/ops/nn.hpp"
#include "tensoracle/ops/reduce.hpp"
#include "tensoracle/ops/shape.hpp"
#include "tensoracle/ops/unary.hpp"

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

}  // namespace tensoracle::ops
