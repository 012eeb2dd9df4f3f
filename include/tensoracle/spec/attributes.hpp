// tensoracle: operator attributes. Generic (a name -> value map, as ONNX
// carries them) and typed (a plain struct with defaults, adapted with
// TENSORACLE_ADAPT_ATTRIBUTES): reflection converts one into the other, so
// parsing, printing and export are written once for every op.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <utility>

#include <boost/hana/accessors.hpp>
#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/preprocessor/seq/enum.hpp>
#include <boost/preprocessor/seq/transform.hpp>
#include <boost/preprocessor/variadic/to_seq.hpp>

#include "tensoracle/core/error.hpp"
#include "tensoracle/core/tensor.hpp"

namespace tensoracle::spec {

/// One attribute value, in ONNX's kinds (INT, FLOAT, STRING, INTS, FLOATS, STRINGS, TENSOR).
using attribute_value = std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>,
                                     std::vector<std::string>, tensor>;
using attribute_map = std::map<std::string, attribute_value, std::less<>>;

/// Attribute struct of ops that have none.
struct no_attributes {};

[[nodiscard]] inline std::string_view attribute_kind_name(const attribute_value& v) {
    switch (v.index()) {
        case 0: return "int";
        case 1: return "float";
        case 2: return "string";
        case 3: return "ints";
        case 4: return "floats";
        case 5: return "strings";
        default: return "tensor";
    }
}

namespace detail {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

/// Reads one attribute into a typed member; ONNX writes float attributes as
/// float and int ones as int64, so floats widen and ints narrow (checked).
/// `where()` names the caller in an error (built only then: the interpreter
/// parses a node's attributes on every evaluation).
template <class T, class Where>
void read_attribute(const attribute_value& v, T& out, const Where& where, std::string_view name) {
    auto mismatch = [&](std::string_view expected) {
        throw error(where(), "attribute '" + std::string(name) + "' must be " + std::string(expected) + ", got " +
                               std::string(attribute_kind_name(v)));
    };
    if constexpr (is_optional<T>::value) {
        typename T::value_type inner{};
        read_attribute(v, inner, where, name);
        out = std::move(inner);
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
        if (const auto* p = std::get_if<std::int64_t>(&v)) {
            out = *p;
        } else {
            mismatch("an int");
        }
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        if (const auto* p = std::get_if<double>(&v)) {
            out = static_cast<T>(*p);
        } else if (const auto* q = std::get_if<std::int64_t>(&v)) {
            out = static_cast<T>(*q);  // some exporters write integral floats as ints
        } else {
            mismatch("a float");
        }
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (const auto* p = std::get_if<std::string>(&v)) {
            out = *p;
        } else {
            mismatch("a string");
        }
    } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
        if (const auto* p = std::get_if<std::vector<std::int64_t>>(&v)) {
            out = *p;
        } else {
            mismatch("a list of ints");
        }
    } else if constexpr (std::is_same_v<T, std::vector<float>> || std::is_same_v<T, std::vector<double>>) {
        if (const auto* p = std::get_if<std::vector<double>>(&v)) {
            out.assign(p->begin(), p->end());
        } else {
            mismatch("a list of floats");
        }
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
        if (const auto* p = std::get_if<std::vector<std::string>>(&v)) {
            out = *p;
        } else {
            mismatch("a list of strings");
        }
    } else if constexpr (std::is_same_v<T, tensor>) {
        if (const auto* p = std::get_if<tensor>(&v)) {
            out = *p;
        } else {
            mismatch("a tensor");
        }
    } else {
        static_assert(std::is_same_v<T, void>,
                      "tensoracle::spec attribute structs may hold int64_t, float, double, std::string, "
                      "std::vector of those, tensor, or std::optional of any of them");
    }
}

template <class T>
std::optional<attribute_value> write_attribute(const T& v) {
    if constexpr (is_optional<T>::value) {
        if (!v) return std::nullopt;
        return write_attribute(*v);
    } else if constexpr (std::is_same_v<T, float>) {
        return attribute_value(static_cast<double>(v));
    } else if constexpr (std::is_same_v<T, std::vector<float>>) {
        return attribute_value(std::vector<double>(v.begin(), v.end()));
    } else {
        return attribute_value(v);
    }
}

}  // namespace detail

/// The kinds of attribute values, as ONNX names them.
enum class attribute_kind : std::uint8_t { int_, float_, string, ints, floats, strings, tensor };

/// One member of an attribute struct: its name, kind, and whether it may be
/// absent without a default (std::optional) or must be given (`required`).
struct attribute_info {
    std::string name;
    attribute_kind kind = attribute_kind::int_;
    bool optional = false;
    bool required = false;
};

namespace detail {
template <class T>
constexpr attribute_kind kind_of() {
    if constexpr (is_optional<T>::value) {
        return kind_of<typename T::value_type>();
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
        return attribute_kind::int_;
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        return attribute_kind::float_;
    } else if constexpr (std::is_same_v<T, std::string>) {
        return attribute_kind::string;
    } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
        return attribute_kind::ints;
    } else if constexpr (std::is_same_v<T, std::vector<float>> || std::is_same_v<T, std::vector<double>>) {
        return attribute_kind::floats;
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
        return attribute_kind::strings;
    } else {
        return attribute_kind::tensor;
    }
}
}  // namespace detail

/// Every member of an attribute struct, in declaration order.
template <class Attrs>
[[nodiscard]] std::vector<attribute_info> attribute_infos() {
    std::vector<attribute_info> out;
    if constexpr (!std::is_same_v<Attrs, no_attributes>) {
        hana::for_each(hana::accessors<Attrs>(), [&](auto pair) {
            using member = std::decay_t<decltype(hana::second(pair)(std::declval<Attrs&>()))>;
            attribute_info a{hana::to<const char*>(hana::first(pair)), detail::kind_of<member>(),
                             detail::is_optional<member>::value, false};
            if constexpr (requires { Attrs::required; }) {
                for (const std::string_view r : Attrs::required) a.required = a.required || r == a.name;
            }
            out.push_back(std::move(a));
        });
    }
    return out;
}

/// Names of the attributes of an attribute struct, in declaration order.
template <class Attrs>
[[nodiscard]] std::vector<std::string> attribute_names() {
    std::vector<std::string> names;
    if constexpr (!std::is_same_v<Attrs, no_attributes>) {
        hana::for_each(hana::accessors<Attrs>(), [&](auto pair) {
            names.emplace_back(hana::to<const char*>(hana::first(pair)));
        });
    }
    return names;
}

/// Typed attributes from a generic map: absent ones keep their defaults,
/// unknown names and wrong kinds are errors naming the op and the attribute.
/// Members listed in `Attrs::required` must be present.
template <class Attrs>
[[nodiscard]] Attrs parse_attributes(const attribute_map& map, std::string_view op_type) {
    const auto where = [op_type] { return "tensoracle::spec::parse_attributes(" + std::string(op_type) + ")"; };
    Attrs out{};
    static const std::vector<std::string> known = attribute_names<Attrs>();  // per struct, built once
    for (const auto& [key, value] : map) {
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            std::string list;
            for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
            throw error(where(), "unknown attribute '" + key + "'" +
                                   (known.empty() ? std::string("; the op has none") : "; known: " + list));
        }
    }
    if constexpr (!std::is_same_v<Attrs, no_attributes>) {
        hana::for_each(hana::accessors<Attrs>(), [&](auto pair) {
            const char* name = hana::to<const char*>(hana::first(pair));
            if (const auto it = map.find(name); it != map.end()) {
                detail::read_attribute(it->second, hana::second(pair)(out), where, name);
            }
        });
        if constexpr (requires { Attrs::required; }) {
            for (const std::string_view name : Attrs::required) {
                if (map.find(name) == map.end()) {
                    throw error(where(), "required attribute '" + std::string(name) + "' is missing");
                }
            }
        }
    }
    return out;
}

/// The generic map of typed attributes (every attribute, defaults included;
/// absent optionals are left out).
template <class Attrs>
[[nodiscard]] attribute_map to_attribute_map(const Attrs& attrs) {
    attribute_map out;
    if constexpr (!std::is_same_v<Attrs, no_attributes>) {
        hana::for_each(hana::accessors<Attrs>(), [&](auto pair) {
            if (auto v = detail::write_attribute(hana::second(pair)(attrs))) {
                out.emplace(hana::to<const char*>(hana::first(pair)), std::move(*v));
            }
        });
    }
    return out;
}

inline std::ostream& operator<<(std::ostream& os, const attribute_value& v) {
    std::visit(
        [&](const auto& x) {
            using X = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<X, std::string>) {
                os << '"' << x << '"';
            } else if constexpr (std::is_same_v<X, tensor>) {
                os << x;
            } else if constexpr (std::is_arithmetic_v<X>) {
                os << x;
            } else {
                os << '[';
                for (std::size_t i = 0; i < x.size(); ++i) os << (i ? ", " : "") << x[i];
                os << ']';
            }
        },
        v);
    return os;
}

/// One line for an attribute: as operator<< prints it, but a tensor by its
/// dtype and shape (a Constant's value may be large): dumps and keys.
[[nodiscard]] inline std::string attribute_summary(const attribute_value& v) {
    std::ostringstream os;
    if (const auto* t = std::get_if<tensor>(&v)) {
        os << "tensor " << name(t->element_dtype()) << tensoracle::to_string(t->shape());
    } else {
        os << v;
    }
    return os.str();
}

[[nodiscard]] inline std::string to_string(const attribute_map& m) {
    std::ostringstream os;
    bool first = true;
    for (const auto& [k, v] : m) {
        os << (first ? "" : ", ") << k << '=' << v;
        first = false;
    }
    return os.str();
}

}  // namespace tensoracle::spec

BOOST_HANA_ADAPT_STRUCT(tensoracle::spec::no_attributes);

/// Adapts an op's attribute struct for reflection, at global namespace, with
/// the members named as the ONNX attributes: BOOST_HANA_ADAPT_STRUCT with the
/// member table built only where attributes are parsed or written. Hana's
/// macro builds it in every file that includes the struct (0.8 s at -O0 for
/// the kit's structs, clang -ftime-trace).
#define TENSORACLE_ADAPT_ATTRIBUTES(TYPE, ...)                                                          \
    namespace boost::hana {                                                                             \
    template <>                                                                                         \
    struct accessors_impl<TYPE> {                                                                       \
        template <int = 0>                                                                              \
        static constexpr auto apply() {                                                                 \
            return ::boost::hana::make_tuple(BOOST_PP_SEQ_ENUM(                                         \
                BOOST_PP_SEQ_TRANSFORM(TENSORACLE_DETAIL_MEMBER, ~, BOOST_PP_VARIADIC_TO_SEQ(__VA_ARGS__)))); \
        }                                                                                               \
    };                                                                                                  \
    }                                                                                                   \
    static_assert(true, "TENSORACLE_ADAPT_ATTRIBUTES: end with a semicolon")

#define TENSORACLE_DETAIL_MEMBER(state, data, m) \
    ::boost::hana::make_pair(BOOST_HANA_STRING(#m), [](auto&& object) -> decltype(auto) { return (object.m); })
