// tensoracle: tables keyed by op spec type, for the backends outside the spec
// layer (cuda/lowering.hpp, backends/torch/torch_ops.hpp). An entry names its
// op by type, so its op_type string comes from the spec, and a table is a Hana
// tuple of entries, so which ops it covers is known at compile time:
// each_op_once checks that every op of the registry has exactly one entry, a
// lowering or an explicit "unsupported" mark, and a miss fails to compile with
// the op_type in the diagnostic, e.g. 'no_backend_entry_for<tensoracle::spec::op_name<4>{"Abs"}>'.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>

#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

#include "tensoracle/spec/op_name.hpp"

namespace tensoracle {
namespace hana = boost::hana;
}  // namespace tensoracle

namespace tensoracle::ops {

/// A backend's value for the op spec Op. `type` is Op, as in hana::type, so
/// that a tuple of entries and a hana::tuple_t of ops are read alike.
template <class Op, class V>
struct keyed {
    using type = Op;
    V value;
};

/// A Hana tuple of keyed entries as a map from each op's op_type to its value.
template <class V, class... Ops>
[[nodiscard]] std::map<std::string, V, std::less<>> by_op_type(hana::tuple<keyed<Ops, V>...> entries) {
    std::map<std::string, V, std::less<>> m;
    hana::unpack(std::move(entries), [&](auto&&... e) {
        (m.emplace(std::string(std::remove_cvref_t<decltype(e)>::type::op_type), std::move(e.value)), ...);
    });
    return m;
}

namespace detail {

// Never defined: using one is the error, and its argument names the op.
template <spec::op_name Name>
struct no_backend_entry_for;
template <spec::op_name Name>
struct several_backend_entries_for;

template <class Op, class List>
struct entries_in;
template <class Op, class... E>
struct entries_in<Op, hana::tuple<E...>> : std::integral_constant<std::size_t, (std::size_t{std::is_same_v<Op, typename E::type>} + ... + std::size_t{0})> {};

template <class Op, class... Lists>
inline constexpr std::size_t entries_of = (entries_in<Op, Lists>::value + ... + std::size_t{0});

template <class Op, std::size_t N>
constexpr bool one_entry() {
    if constexpr (N == 0) {
        return sizeof(no_backend_entry_for<spec::op_name_of<Op>()>) != 0;
    } else if constexpr (N > 1) {
        return sizeof(several_backend_entries_for<spec::op_name_of<Op>()>) != 0;
    } else {
        return true;
    }
}

template <class Ops, class... Lists>
struct each_op_once;
template <class... Ops, class... Lists>
struct each_op_once<hana::tuple<Ops...>, Lists...>
    : std::bool_constant<(one_entry<typename Ops::type, entries_of<typename Ops::type, Lists...>>() && ...)> {};

}  // namespace detail

/// True when each op of the Hana tuple of types `Ops` has exactly one entry in
/// all of `Lists` together (Hana tuples of keyed entries or of types: a
/// backend's lowerings and its ops marked unsupported); otherwise the program
/// does not compile, and the diagnostic names the op missing or listed twice.
template <class Ops, class... Lists>
inline constexpr bool each_op_once =
    detail::each_op_once<std::remove_cvref_t<Ops>, std::remove_cvref_t<Lists>...>::value;

}  // namespace tensoracle::ops
