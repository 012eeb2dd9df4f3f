// GENERATED FILE - DO NOT EDIT.
// Made by scripts/amalgamate from include/tensoracle/tensoracle.hpp; edit those headers and rerun it.
// tensoracle: header-only test kit for deep-learning compilers and AD engines.
#pragma once
#include "core.hpp"
// ---- begin tensoracle/tensoracle.hpp ----
// tensoracle: the whole header-only kit that needs only the core dependencies
// (xtensor, xtl, Boost.Hana): core and accuracy, operator specs and reference
// kernels, graphs and the interpreter, automatic differentiation and gradient
// oracles, generation and input search, mutations.
//
// Including it instantiates the op registry (every kernel of every op, and
// their AD versions) in this file unless TENSORACLE_SEPARATE_REGISTRY is
// defined (then <tensoracle/registry_definition.hpp> goes in one file of the
// target): a test that only compares tensors is cheaper with
// <tensoracle/core.hpp>. Parts with optional dependencies have umbrellas of
// their own: <tensoracle/onnx.hpp> (ONNX I/O, conformance, case files;
// libonnx, protobuf, nlohmann-json), <tensoracle/campaign.hpp> (differential
// campaigns against real runtimes), <tensoracle/z3.hpp> (the Z3 solver
// backend), <tensoracle/blas.hpp> (BLAS fast paths).


// ---- begin tensoracle/spec/attributes.hpp ----
// tensoracle: operator attributes. Generic (a name -> value map, as ONNX
// carries them) and typed (a plain struct with defaults, adapted with
// TENSORACLE_ADAPT_ATTRIBUTES): reflection converts one into the other, so
// parsing, printing and export are written once for every op.

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
// ---- end tensoracle/spec/attributes.hpp ----
// ---- begin tensoracle/spec/entry.hpp ----
// tensoracle: the type-erased entry of one op spec, and checked evaluation of
// an op on runtime tensors (arity, dtypes, attributes, constraints, shape
// inference, kernel, and the kernel's output checked against the inference).

#include <span>
#include <string>
#include <string_view>
#include <vector>

// ---- begin tensoracle/spec/hints.hpp ----
// tensoracle: generation hints, what an op spec tells the graph generator
// beyond its constraints.
//
// Validity lives in one place, the spec's constraints: the generator solves
// them for dims, int attributes and the values of shape-like inputs. Hints
// say only what a solver cannot know: value distributions ("prefer small
// kernels", the range an input's data is drawn from), float and string
// attributes, which int attributes are flags, and data an op needs before
// or after its shapes are solved (Resize's scales, Gather's indices). An op
// without a `hints()` member gets the defaults below, which suit every
// element-wise op.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

// ---- begin tensoracle/spec/expr.hpp ----
// tensoracle: a small integer constraint language for operator specs.
//
// An op's validity constraints and output shapes are written once as
// expressions over symbols (input dims, integer attributes, values of small
// constant inputs). The same expression is evaluated on concrete values by
// the interpreter and the instance sampler, printed in error messages, and
// can be handed to an SMT solver by the graph generator (its / and % are
// Euclidean, as in SMT-LIB integers).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>


namespace tensoracle::spec {

enum class expr_kind : std::uint8_t {
    constant,
    symbol,
    add,
    sub,
    mul,
    div,  // Euclidean: remainder is non-negative
    mod,  // Euclidean: result in [0, |b|)
    min,
    max,
    eq,
    ne,
    lt,
    le,
    gt,
    ge,
    logical_and,
    logical_or,
    logical_not,
    select,  // cond ? a : b (SMT ite)
};

namespace detail {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool pool_expression_nodes = false;  // keep use-after-free detection on nodes
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool pool_expression_nodes = false;
#else
inline constexpr bool pool_expression_nodes = true;
#endif
#else
inline constexpr bool pool_expression_nodes = true;
#endif

/// Blocks of one size, recycled per thread. Expression nodes are made and
/// released by the thousand per generated graph (every spec constraint is a
/// tree of them), in bursts the general allocator handles slowly. A block
/// freed on another thread joins that thread's list; each list is bounded and
/// freed when its thread ends (later releases go to the heap directly).
template <std::size_t Size>
class block_pool {
    struct free_block {
        free_block* next;
    };
    struct list {  // trivially destructible: usable until the thread's storage goes
        free_block* head = nullptr;
        std::size_t count = 0;
        bool closed = false;
    };
    struct closer {
        ~closer() {
            auto& l = local();
            while (l.head != nullptr) {
                free_block* next = l.head->next;
                ::operator delete(l.head);
                l.head = next;
            }
            l.count = 0;
            l.closed = true;
        }
    };
    static list& local() noexcept {
        thread_local list l;
        return l;
    }
    static void open() noexcept { thread_local closer c; (void)c; }
    static constexpr std::size_t max_free = 4096;

public:
    static void* take() {
        open();
        auto& l = local();
        if (l.head == nullptr) return ::operator new(Size);
        free_block* b = l.head;
        l.head = b->next;
        --l.count;
        return b;
    }
    static void give(void* p) noexcept {
        auto& l = local();
        if (l.closed || l.count >= max_free) {
            ::operator delete(p);
            return;
        }
        open();
        auto* b = static_cast<free_block*>(p);
        b->next = l.head;
        l.head = b;
        ++l.count;
    }
};

/// std::allocator for one object at a time from block_pool (arrays: the heap).
template <class T>
struct pooled_allocator {
    using value_type = T;
    pooled_allocator() noexcept = default;
    template <class U>
    pooled_allocator(const pooled_allocator<U>&) noexcept {}  // NOLINT: rebinding, as allocators do
    [[nodiscard]] T* allocate(std::size_t n) {
        static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "pooled_allocator: over-aligned type");
        if (!pool_expression_nodes || n != 1) return std::allocator<T>{}.allocate(n);
        return static_cast<T*>(pool::take());
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (!pool_expression_nodes || n != 1) {
            std::allocator<T>{}.deallocate(p, n);
            return;
        }
        pool::give(p);
    }
    friend bool operator==(const pooled_allocator&, const pooled_allocator&) noexcept { return true; }

private:
    using pool = block_pool<sizeof(T) < sizeof(void*) ? sizeof(void*) : sizeof(T)>;  // a free block holds a pointer
};

}  // namespace detail

/// Values of the symbols an expression is evaluated with.
using environment = std::map<std::string, std::int64_t, std::less<>>;

/// An immutable integer or boolean expression (booleans evaluate to 0 / 1).
class expr {
public:
    struct node {
        expr_kind kind;
        std::int64_t value = 0;  // constant
        std::string name;        // symbol
        std::shared_ptr<const node> lhs, rhs, cond;
        std::size_t name_hash = 0;  // symbol: std::hash of name, so lookups compare names rarely
    };

    expr(std::int64_t v) : node_(constant_node(v)) {}  // NOLINT
    expr(int v) : expr(static_cast<std::int64_t>(v)) {}  // NOLINT
    expr(std::size_t v) : expr(checked_int(v)) {}         // NOLINT

    [[nodiscard]] static expr symbol(std::string name) {
        const std::size_t h = std::hash<std::string_view>{}(name);
        return expr(new_node(node{expr_kind::symbol, 0, std::move(name), {}, {}, {}, h}));
    }

    [[nodiscard]] expr_kind kind() const noexcept { return node_->kind; }
    [[nodiscard]] const node& root() const noexcept { return *node_; }
    [[nodiscard]] bool is_constant() const noexcept { return node_->kind == expr_kind::constant; }
    [[nodiscard]] bool is_boolean() const noexcept { return node_->kind >= expr_kind::eq; }

    /// The value under `env`; throws when a symbol is unbound, on division by
    /// zero and on int64 overflow (never UB).
    [[nodiscard]] std::int64_t eval(const environment& env) const { return eval_node(*node_, env); }

    /// Constant folding where both sides are constants, so a concrete context
    /// builds constants directly.
    [[nodiscard]] std::optional<std::int64_t> constant_value() const {
        if (is_constant()) return node_->value;
        return std::nullopt;
    }

    /// Symbols the expression mentions, sorted, without duplicates.
    [[nodiscard]] std::vector<std::string> symbols() const {
        std::vector<std::string> out;
        collect(*node_, out);
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }

    [[nodiscard]] std::string to_string() const { return print(*node_, 0); }

    friend expr operator+(const expr& a, const expr& b) { return make(expr_kind::add, a, b); }
    friend expr operator-(const expr& a, const expr& b) { return make(expr_kind::sub, a, b); }
    friend expr operator*(const expr& a, const expr& b) { return make(expr_kind::mul, a, b); }
    friend expr operator/(const expr& a, const expr& b) { return make(expr_kind::div, a, b); }
    friend expr operator%(const expr& a, const expr& b) { return make(expr_kind::mod, a, b); }
    friend expr operator==(const expr& a, const expr& b) { return make(expr_kind::eq, a, b); }
    friend expr operator!=(const expr& a, const expr& b) { return make(expr_kind::ne, a, b); }
    friend expr operator<(const expr& a, const expr& b) { return make(expr_kind::lt, a, b); }
    friend expr operator<=(const expr& a, const expr& b) { return make(expr_kind::le, a, b); }
    friend expr operator>(const expr& a, const expr& b) { return make(expr_kind::gt, a, b); }
    friend expr operator>=(const expr& a, const expr& b) { return make(expr_kind::ge, a, b); }
    friend expr operator&&(const expr& a, const expr& b) { return make(expr_kind::logical_and, a, b); }
    friend expr operator||(const expr& a, const expr& b) { return make(expr_kind::logical_or, a, b); }
    friend expr operator-(const expr& a) { return expr(0) - a; }
    friend expr operator!(const expr& a) { return make(expr_kind::logical_not, a, expr(0)); }
    friend expr min(const expr& a, const expr& b) { return make(expr_kind::min, a, b); }
    friend expr max(const expr& a, const expr& b) { return make(expr_kind::max, a, b); }
    /// cond ? a : b.
    friend expr select(const expr& cond, const expr& a, const expr& b) {
        if (const auto c = cond.constant_value()) return *c != 0 ? a : b;
        return expr(new_node(node{expr_kind::select, 0, {}, a.node_, b.node_, cond.node_}));
    }

private:
    explicit expr(std::shared_ptr<const node> n) : node_(std::move(n)) {}

    static std::shared_ptr<const node> new_node(node&& n) {
        return std::allocate_shared<const node>(detail::pooled_allocator<node>{}, std::move(n));
    }

    static std::int64_t checked_int(std::size_t v) {
        if (v > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())) {
            throw error("tensoracle::spec::expr", "value " + std::to_string(v) + " does not fit int64");
        }
        return static_cast<std::int64_t>(v);
    }

    static expr make(expr_kind k, const expr& a, const expr& b) {
        if (a.is_constant() && b.is_constant()) {
            const node folded{k, 0, {}, a.node_, b.node_, {}};  // on the stack: only its value is kept
            return expr(eval_node(folded, environment{}));
        }
        return expr(new_node(node{k, 0, {}, a.node_, b.node_, {}}));
    }

    // A model built from concrete shapes folds to a constant at every step, so
    // kernels and the interpreter build many constants; the small ones (dims,
    // axes, attribute values) share one immutable node each instead of
    // allocating one per use. The table is never destroyed: an expression held
    // by another static object may outlive any destruction order.
    static std::shared_ptr<const node> constant_node(std::int64_t v) {
        constexpr std::int64_t lowest = -64, highest = 1024;
        if (v < lowest || v > highest) return new_node(node{expr_kind::constant, v, {}, {}, {}, {}});
        static const auto* const shared = [] {
            auto* t = new std::vector<std::shared_ptr<const node>>();
            t->reserve(static_cast<std::size_t>(highest - lowest + 1));
            for (std::int64_t c = lowest; c <= highest; ++c) {
                t->push_back(std::make_shared<const node>(node{expr_kind::constant, c, {}, {}, {}, {}}));
            }
            return t;
        }();
        return (*shared)[static_cast<std::size_t>(v - lowest)];
    }

    static std::int64_t eval_node(const node& n, const environment& env) {
        using L = std::numeric_limits<std::int64_t>;
        switch (n.kind) {
            case expr_kind::constant: return n.value;
            case expr_kind::symbol: {
                const auto it = env.find(n.name);
                if (it == env.end()) throw error("tensoracle::spec::expr", "symbol '" + n.name + "' has no value");
                return it->second;
            }
            case expr_kind::logical_not: return eval_node(*n.lhs, env) == 0 ? 1 : 0;
            case expr_kind::logical_and: return (eval_node(*n.lhs, env) != 0 && eval_node(*n.rhs, env) != 0) ? 1 : 0;
            case expr_kind::logical_or: return (eval_node(*n.lhs, env) != 0 || eval_node(*n.rhs, env) != 0) ? 1 : 0;
            case expr_kind::select: return eval_node(*n.cond, env) != 0 ? eval_node(*n.lhs, env) : eval_node(*n.rhs, env);
            default: break;
        }
        const std::int64_t a = eval_node(*n.lhs, env);
        const std::int64_t b = eval_node(*n.rhs, env);
        std::int64_t r = 0;
        auto overflow = [&]() -> std::int64_t {
            throw error("tensoracle::spec::expr", "int64 overflow evaluating " + print(n, 0));
        };
        switch (n.kind) {
            case expr_kind::add: return __builtin_add_overflow(a, b, &r) ? overflow() : r;
            case expr_kind::sub: return __builtin_sub_overflow(a, b, &r) ? overflow() : r;
            case expr_kind::mul: return __builtin_mul_overflow(a, b, &r) ? overflow() : r;
            case expr_kind::div:
            case expr_kind::mod: {
                if (b == 0) throw error("tensoracle::spec::expr", "division by zero evaluating " + print(n, 0));
                if (a == L::min() && b == -1) return n.kind == expr_kind::div ? overflow() : 0;
                std::int64_t q = a / b;
                std::int64_t m = a % b;
                if (m < 0) {  // Euclidean: make the remainder non-negative
                    // |b| in unsigned arithmetic: b may be INT64_MIN, whose negation overflows
                    m = static_cast<std::int64_t>(static_cast<std::uint64_t>(m) +
                                                  (b > 0 ? static_cast<std::uint64_t>(b) : std::uint64_t{0} - static_cast<std::uint64_t>(b)));
                    q += (b > 0 ? -1 : 1);
                }
                return n.kind == expr_kind::div ? q : m;
            }
            case expr_kind::min: return a < b ? a : b;
            case expr_kind::max: return a > b ? a : b;
            case expr_kind::eq: return a == b;
            case expr_kind::ne: return a != b;
            case expr_kind::lt: return a < b;
            case expr_kind::le: return a <= b;
            case expr_kind::gt: return a > b;
            case expr_kind::ge: return a >= b;
            default: return 0;
        }
    }

    static void collect(const node& n, std::vector<std::string>& out) {
        if (n.kind == expr_kind::symbol) out.push_back(n.name);
        if (n.lhs) collect(*n.lhs, out);
        if (n.rhs) collect(*n.rhs, out);
        if (n.cond) collect(*n.cond, out);
    }

    static int precedence(expr_kind k) {
        switch (k) {
            case expr_kind::logical_or: return 1;
            case expr_kind::logical_and: return 2;
            case expr_kind::eq:
            case expr_kind::ne:
            case expr_kind::lt:
            case expr_kind::le:
            case expr_kind::gt:
            case expr_kind::ge: return 3;
            case expr_kind::add:
            case expr_kind::sub: return 4;
            case expr_kind::mul:
            case expr_kind::div:
            case expr_kind::mod: return 5;
            default: return 6;
        }
    }

    static std::string print(const node& n, int outer) {
        const char* op = nullptr;
        switch (n.kind) {
            case expr_kind::constant: return std::to_string(n.value);
            case expr_kind::symbol: return n.name;
            case expr_kind::logical_not: return "!(" + print(*n.lhs, 0) + ")";
            case expr_kind::min: return "min(" + print(*n.lhs, 0) + ", " + print(*n.rhs, 0) + ")";
            case expr_kind::max: return "max(" + print(*n.lhs, 0) + ", " + print(*n.rhs, 0) + ")";
            case expr_kind::select:
                return "(" + print(*n.cond, 0) + " ? " + print(*n.lhs, 0) + " : " + print(*n.rhs, 0) + ")";
            case expr_kind::add: op = " + "; break;
            case expr_kind::sub: op = " - "; break;
            case expr_kind::mul: op = " * "; break;
            case expr_kind::div: op = " / "; break;
            case expr_kind::mod: op = " % "; break;
            case expr_kind::eq: op = " == "; break;
            case expr_kind::ne: op = " != "; break;
            case expr_kind::lt: op = " < "; break;
            case expr_kind::le: op = " <= "; break;
            case expr_kind::gt: op = " > "; break;
            case expr_kind::ge: op = " >= "; break;
            case expr_kind::logical_and: op = " && "; break;
            case expr_kind::logical_or: op = " || "; break;
        }
        const int p = precedence(n.kind);
        // Left-associative: the right operand of - / % needs parentheses at equal precedence.
        std::string s = print(*n.lhs, p) + op + print(*n.rhs, p + 1);
        return p < outer ? "(" + s + ")" : s;
    }

    std::shared_ptr<const node> node_;
};

// Namespace-scope declarations, so spec::min / spec::max / spec::select also
// work by qualified name (e.g. where an op spec named Max hides them).
expr min(const expr& a, const expr& b);
expr max(const expr& a, const expr& b);
expr select(const expr& cond, const expr& a, const expr& b);

/// Product of expressions (1 for none): element counts, work estimates.
[[nodiscard]] inline expr product(const std::vector<expr>& v) {
    expr out(1);
    for (const auto& e : v) out = out * e;
    return out;
}

/// The length of a list of expressions as an expression: for a list an op
/// spec got from a context (`attr_ints`), the symbol "<name>.length" that the
/// context binds (concrete) or leaves unknown (the generator's symbolic
/// contexts, which solve for it); for any other list, its size. Write length
/// rules with it, so a solver can infer how long a list must be.
[[nodiscard]] inline expr list_length(const std::vector<expr>& list) {
    if (!list.empty() && list.front().kind() == expr_kind::symbol) {
        const std::string& n = list.front().root().name;
        if (n.size() > 3 && n.compare(n.size() - 3, 3, "[0]") == 0) {
            return expr::symbol(n.substr(0, n.size() - 3) + ".length");
        }
    }
    return expr(list.size());
}

/// A named validity constraint: the boolean expression and why it exists.
struct constraint {
    expr condition;
    std::string reason;  // e.g. "input channels match weight channels times group"
};

}  // namespace tensoracle::spec
// ---- end tensoracle/spec/expr.hpp ----

namespace tensoracle::spec {

class context;

/// Random values of dtype d in [lo, hi) (integers: [ceil(lo), ceil(hi)),
/// u8 non-negative; bool: 0/1): initial data of hinted inputs and of the
/// generator's placeholders. A template only so that its dtype dispatch is
/// compiled where it is called, not in every file including the op specs.
template <int = 0>
tensor random_values(rng& g, dtype d, const shape_type& s, double lo, double hi) {
    if (d == dtype::boolean) return g.uniform_tensor(d, s, 0.0, 2.0);
    if (!info(d).is_floating) {
        double ilo = std::ceil(lo), ihi = std::ceil(hi);
        if (d == dtype::u8) ilo = std::max(ilo, 0.0);
        if (ihi <= ilo) ihi = ilo + 1.0;
        return g.uniform_tensor(d, s, ilo, ihi);
    }
    return g.uniform_tensor(d, s, lo, hi);
}

/// What the generator knows of a value's data whatever the free inputs and
/// weights hold: an enclosure [lo, hi] of its elements (possibly infinite),
/// and values some element always takes (Hardmax's 0 and 1, an exclusive
/// CumSum's leading 0, Pad's constant). A vulnerable op placed on a value
/// whose facts exclude its domain (Acosh after Sigmoid, Log after Hardmax)
/// yields a graph no input search can make finite; the generator uses the
/// facts to keep such graphs out. Facts are an over-approximation: unknown
/// means anything.
struct value_facts {
    double lo = -std::numeric_limits<double>::infinity();
    double hi = std::numeric_limits<double>::infinity();
    std::vector<double> forced;  ///< values some element takes for every data (at most a few)
    /// For every data, some element is at most `some_at_most` and some element at least
    /// `some_at_least` (a LogSoftmax row of n holds one <= -log n); infinite: nothing known.
    double some_at_most = std::numeric_limits<double>::infinity();
    double some_at_least = -std::numeric_limits<double>::infinity();

    [[nodiscard]] static value_facts constant(double c) { return {c, c, {c}}; }
    [[nodiscard]] static value_facts within(double lo, double hi, std::vector<double> forced = {}) {
        return {lo, hi, std::move(forced)};
    }
    [[nodiscard]] bool is_unknown() const noexcept {
        return std::isinf(lo) && lo < 0 && std::isinf(hi) && hi > 0 && forced.empty() && std::isinf(some_at_most) &&
               std::isinf(some_at_least);
    }
    /// The same enclosure without the forced values and element bounds (selections:
    /// Slice, Gather, MaxPool may drop the elements they speak of).
    [[nodiscard]] value_facts range_only() const { return {lo, hi, {}}; }
    /// Adds a forced value (widening the enclosure to hold it).
    value_facts& force(double v) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        if (std::find(forced.begin(), forced.end(), v) == forced.end()) forced.push_back(v);
        return *this;
    }
    /// These facts as data of dtype d holds them: integer and bool data lies in
    /// the dtype's range (a bool is 0 or 1, a u8 never negative). Facts that
    /// reach outside it were worked out without the wrap-around of integer
    /// arithmetic, so only the dtype's range and the forced values that fit
    /// are kept of them. Floating dtypes: as they are.
    [[nodiscard]] value_facts of_dtype(dtype d) const {
        const auto& i = info(d);
        if (i.is_floating) return *this;
        double dlo = 0.0, dhi = 1.0;
        if (i.is_integer) {
            dlo = i.is_signed ? -std::ldexp(1.0, i.bits - 1) : 0.0;
            dhi = std::ldexp(1.0, i.is_signed ? i.bits - 1 : i.bits) - 1.0;
        }
        if (lo >= dlo && hi <= dhi) return *this;
        // A forced value inside the range is still exact: wrap-around is
        // arithmetic modulo 2^bits, so a result that fits is the true one
        // (an exclusive CumSum's leading 0 whatever the sum's range).
        value_facts out = within(dlo, dhi);
        for (const double v : forced) {
            if (v >= dlo && v <= dhi && v == std::floor(v)) out.forced.push_back(v);
        }
        return out;
    }
    /// Both values' elements in one (Concat, Pad's added constant): the hull, every forced value.
    value_facts& join(const value_facts& o) {
        lo = std::min(lo, o.lo);
        hi = std::max(hi, o.hi);
        for (const double v : o.forced) force(v);
        some_at_most = std::min(some_at_most, o.some_at_most);
        some_at_least = std::max(some_at_least, o.some_at_least);
        return *this;
    }
};

/// Facts of an op's outputs from its inputs' facts, attributes and input
/// shapes (absent inputs: unknown facts, empty shape). Fewer facts than
/// outputs leave the rest unknown, except for a variadic output, which the
/// last fact describes. May throw tensoracle::error (attributes it cannot
/// parse): the generator then knows nothing of the outputs.
using facts_function = std::function<std::vector<value_facts>(std::span<const value_facts>, const attribute_map&,
                                                              std::span<const shape_type>)>;

namespace facts {
/// Every output element is an input element of input `i` and every input element appears
/// (Reshape, Transpose, Expand, Tile): range and forced values carry over.
[[nodiscard]] inline facts_function copy_of(std::size_t i = 0) {
    return [i](std::span<const value_facts> in, const attribute_map&, std::span<const shape_type>) {
        return std::vector<value_facts>{i < in.size() ? in[i] : value_facts{}};
    };
}
/// Every output element is some element of input `i` (Slice, Gather, MaxPool, ReduceMax):
/// the range carries over, forced values may be left out.
[[nodiscard]] inline facts_function selection_of(std::size_t i = 0) {
    return [i](std::span<const value_facts> in, const attribute_map&, std::span<const shape_type>) {
        return std::vector<value_facts>{i < in.size() ? in[i].range_only() : value_facts{}};
    };
}
/// Points of [lo, hi] that probe an element-wise function: both ends, a
/// dense grid where values are moderate, and magnitudes 1e-8 ... 1e30 of
/// both signs, so saturation, poles near 0 and overflow show.
[[nodiscard]] inline std::vector<double> probe_points(double lo, double hi) {
    static constexpr double magnitudes[] = {1e-8, 1e-4, 1e-2, 1e2, 1e3, 1e4, 1e6, 1e10, 1e20, 1e30};
    std::vector<double> p;
    p.reserve(56);
    auto add = [&](double x) {
        if (x >= lo && x <= hi) p.push_back(x);
    };
    add(lo);
    add(hi);
    add(0.0);
    const double a = std::max(lo, -16.0), b = std::min(hi, 16.0);
    if (a <= b) {
        for (int k = 0; k <= 32; ++k) add(a + (b - a) * k / 32.0);
    }
    for (const double m : magnitudes) {
        add(m);
        add(-m);
    }
    return p;
}

/// The facts of f applied to every element of a value with facts `x`: the
/// enclosure of f over probe points (a sampled image, exact for the monotone
/// and saturating functions of the unary ops), forced values mapped. Points
/// where f is NaN (outside its domain) are left out.
template <class Fn>
[[nodiscard]] value_facts image(const value_facts& x, Fn&& f) {
    value_facts out;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const double p : probe_points(x.lo, x.hi)) {
        const double y = static_cast<double>(f(p));
        if (std::isnan(y)) continue;
        lo = std::min(lo, y);
        hi = std::max(hi, y);
    }
    if (lo > hi) return out;  // f is NaN everywhere probed: nothing known
    out.lo = lo;
    out.hi = hi;
    for (const double v : x.forced) {
        const double y = static_cast<double>(f(v));
        if (!std::isnan(y)) out.force(y);
    }
    // Element bounds survive a monotone f (Asinh of a LogSoftmax row still has
    // one element <= asinh(-log n)); a decreasing f swaps them. Monotonicity is
    // judged on the sorted probe points, as the enclosure is.
    if (std::isfinite(x.some_at_most) || std::isfinite(x.some_at_least)) {
        auto points = probe_points(x.lo, x.hi);
        std::sort(points.begin(), points.end());
        bool up = true, down = true;
        double prev = std::numeric_limits<double>::quiet_NaN();
        for (const double p : points) {
            const double y = static_cast<double>(f(p));
            if (std::isnan(y)) {
                up = down = false;
                break;
            }
            if (!std::isnan(prev)) {
                up = up && y >= prev;
                down = down && y <= prev;
            }
            prev = y;
        }
        auto at = [&](double m) {
            const double y = static_cast<double>(f(std::clamp(m, x.lo, x.hi)));
            return std::isnan(y) ? std::numeric_limits<double>::quiet_NaN() : y;
        };
        const double m = at(x.some_at_most), l = at(x.some_at_least);
        if (up) {
            if (std::isfinite(x.some_at_most) && !std::isnan(m)) out.some_at_most = m;
            if (std::isfinite(x.some_at_least) && !std::isnan(l)) out.some_at_least = l;
        } else if (down) {
            if (std::isfinite(x.some_at_most) && !std::isnan(m)) out.some_at_least = m;
            if (std::isfinite(x.some_at_least) && !std::isnan(l)) out.some_at_most = l;
        }
    }
    return out;
}

/// Facts of an element-wise op of several inputs from the corners of their
/// enclosures, for ops monotone in each input (Max, Min, Add, Sub) or
/// bilinear (Mul): the extremes of f over a box lie at its corners. A NaN
/// corner (inf - inf, 0 * inf) leaves the output unknown. Element bounds
/// carry over where f keeps them: Min keeps "some element <= m" of every
/// input, Max "some element >= m".
template <class Fn>
[[nodiscard]] value_facts corners(std::span<const value_facts> in, Fn&& f, bool keeps_at_most = false,
                                  bool keeps_at_least = false) {
    if (in.empty()) return {};
    value_facts acc = in[0].range_only();
    acc.some_at_most = in[0].some_at_most;
    acc.some_at_least = in[0].some_at_least;
    for (std::size_t k = 1; k < in.size(); ++k) {
        const auto& b = in[k];
        const double c[4] = {f(acc.lo, b.lo), f(acc.lo, b.hi), f(acc.hi, b.lo), f(acc.hi, b.hi)};
        value_facts next;
        if (std::none_of(c, c + 4, [](double v) { return std::isnan(v); })) {
            next.lo = *std::min_element(c, c + 4);
            next.hi = *std::max_element(c, c + 4);
        }
        if (keeps_at_most) next.some_at_most = std::min(acc.some_at_most, b.some_at_most);
        if (keeps_at_least) next.some_at_least = std::max(acc.some_at_least, b.some_at_least);
        acc = next;
    }
    if (!keeps_at_most && in.size() > 1) acc.some_at_most = std::numeric_limits<double>::infinity();
    if (!keeps_at_least && in.size() > 1) acc.some_at_least = -std::numeric_limits<double>::infinity();
    return acc;
}

}  // namespace facts

/// How the generator draws one attribute.
struct attribute_hint {
    enum class kind : std::uint8_t {
        solve,    ///< int / ints: unknowns of the constraint system, in [lo, hi] (binned)
        flag,     ///< int: 0 or 1
        choice,   ///< one of `choices` (strings, ints or floats)
        real,     ///< float in [real_lo, real_hi]
        dtype,    ///< int: an ONNX dtype number among the configured dtypes
        tensor,   ///< tensor attribute made by `make_tensor`
        omit,     ///< never given (the default applies)
    };
    std::string name;
    kind how = kind::solve;
    std::int64_t lo = -64, hi = 64;
    std::vector<attribute_value> choices;
    double real_lo = 0.0, real_hi = 1.0;
    double present = 0.7;  ///< probability the attribute is given (required ones always are)
    /// Tensor attributes: (rng, output dtype or nullopt, output shape or nullopt) -> value.
    std::function<tensor(rng&, std::optional<dtype>, const std::optional<shape_type>&)> make_tensor;
};

/// How the generator treats one input.
struct input_hint {
    std::size_t index = 0;
    std::optional<double> present;               ///< optional inputs: probability given
    std::optional<std::pair<double, double>> range;  ///< initial data range
    /// Data needed before solving (the spec reads it in its constraints or
    /// shapes): made from the symbolic context (ranks, dtypes known).
    std::function<tensor(rng&, const context&)> before_solving;
    /// Data valid only for the solved shapes (indices into a solved dim):
    /// made from the concrete context of the other inputs and its own shape.
    std::function<tensor(rng&, const context&, dtype, const shape_type&)> after_solving;
};

/// The hints of one op; built with the chained setters below.
struct hints {
    std::vector<attribute_hint> attributes;
    std::vector<input_hint> inputs;
    std::size_t variadic_min = 1, variadic_max = 3;
    double weight = 1.0;  ///< relative frequency among ops in generated graphs
    /// The kernel's work (multiply-adds, comparisons) in terms of the symbolic
    /// context and the output shapes: the generator keeps it at most
    /// gen::config::max_work, so a Conv of two 64K-element tensors does not
    /// cost billions of operations. Ops whose work is about their output size
    /// leave it empty.
    std::function<expr(const context&, const std::vector<std::vector<expr>>&)> work_estimate;
    /// What the op's outputs hold given what its inputs hold (value_facts);
    /// empty: nothing known (every output may be anything).
    facts_function output_facts;

    [[nodiscard]] const attribute_hint* attribute(std::string_view name) const {
        for (const auto& a : attributes) {
            if (a.name == name) return &a;
        }
        return nullptr;
    }
    [[nodiscard]] const input_hint* input(std::size_t i) const {
        for (const auto& h : inputs) {
            if (h.index == i) return &h;
        }
        return nullptr;
    }

    static attribute_hint named(std::string name, attribute_hint::kind how) {
        attribute_hint h;
        h.name = std::move(name);
        h.how = how;
        return h;
    }
    hints& work(std::function<expr(const context&, const std::vector<std::vector<expr>>&)> estimate) {
        work_estimate = std::move(estimate);
        return *this;
    }
    /// An int or ints attribute solved for within [lo, hi].
    hints& solve(std::string name, std::int64_t lo, std::int64_t hi, double present = 0.7) {
        attribute_hint h = named(std::move(name), attribute_hint::kind::solve);
        h.lo = lo;
        h.hi = hi;
        h.present = present;
        return add(std::move(h));
    }
    /// An int attribute that is a boolean switch.
    hints& flag(std::string name, double present = 0.7) {
        attribute_hint h = named(std::move(name), attribute_hint::kind::flag);
        h.present = present;
        return add(std::move(h));
    }
    /// One of a few values (strings such as auto_pad or mode).
    hints& choice(std::string name, std::vector<attribute_value> choices, double present = 0.7) {
        attribute_hint h = named(std::move(name), attribute_hint::kind::choice);
        h.choices = std::move(choices);
        h.present = present;
        return add(std::move(h));
    }
    /// A float attribute drawn uniformly from [lo, hi].
    hints& real(std::string name, double lo, double hi, double present = 0.7) {
        attribute_hint h = named(std::move(name), attribute_hint::kind::real);
        h.real_lo = lo;
        h.real_hi = hi;
        h.present = present;
        return add(std::move(h));
    }
    /// An int attribute holding an ONNX dtype number (Cast's `to`).
    hints& dtype_attribute(std::string name, double present = 1.0) {
        attribute_hint h = named(std::move(name), attribute_hint::kind::dtype);
        h.present = present;
        return add(std::move(h));
    }
    /// A tensor attribute (Constant's value).
    hints& tensor_attribute(std::string name,
                            std::function<tensor(rng&, std::optional<dtype>, const std::optional<shape_type>&)> make,
                            double present = 1.0) {
        attribute_hint h = named(std::move(name), attribute_hint::kind::tensor);
        h.make_tensor = std::move(make);
        h.present = present;
        return add(std::move(h));
    }
    /// An attribute the generator leaves at its default.
    hints& omit(std::string name) { return add(named(std::move(name), attribute_hint::kind::omit)); }

    /// Initial data of input i drawn from [lo, hi] (the input search then moves it into the domain).
    hints& range(std::size_t i, double lo, double hi) {
        input_hint& h = at(i);
        h.range = std::make_pair(lo, hi);
        return *this;
    }
    /// Probability that optional input i is given.
    hints& optional_input(std::size_t i, double present) {
        at(i).present = present;
        return *this;
    }
    hints& before_solving(std::size_t i, std::function<tensor(rng&, const context&)> make) {
        at(i).before_solving = std::move(make);
        return *this;
    }
    hints& after_solving(std::size_t i, std::function<tensor(rng&, const context&, dtype, const shape_type&)> make) {
        at(i).after_solving = std::move(make);
        return *this;
    }
    hints& variadic(std::size_t lo, std::size_t hi) {
        variadic_min = lo;
        variadic_max = hi;
        return *this;
    }
    hints& facts(facts_function f) {
        output_facts = std::move(f);
        return *this;
    }
    hints& frequency(double w) {
        weight = w;
        return *this;
    }

private:
    hints& add(attribute_hint h) {
        for (auto& a : attributes) {
            if (a.name == h.name) {
                a = std::move(h);
                return *this;
            }
        }
        attributes.push_back(std::move(h));
        return *this;
    }
    input_hint& at(std::size_t i) {
        for (auto& h : inputs) {
            if (h.index == i) return h;
        }
        inputs.push_back({});
        inputs.back().index = i;
        return inputs.back();
    }
};

}  // namespace tensoracle::spec
// ---- end tensoracle/spec/hints.hpp ----
// ---- begin tensoracle/spec/op.hpp ----
// tensoracle: the operator-spec contract, the symbolic context specs are
// written against, and the type-erased entry the registry keeps for each op.
//
// An op spec is a struct with (see docs/ADDING_AN_OP.md):
//   op_type, opset                         identity: ONNX name, opset whose semantics it implements
//   using attributes = <hana-adapted struct with defaults>
//   inputs, outputs                        std::array<value_spec, N>: names, dtype sets, ranks
//   constraints(const context&)            validity constraints, in the integer constraint language
//   output_shapes(const context&)          forward shape inference, as expressions
//   constraints_and_shapes(const context&) optional: both of the above from one model, for
//                                          specs that derive them from one (built once per evaluation)
//   output_dtypes(input dtypes, attrs)     forward dtype inference
//   input_candidates(out dtype, out rank)  backward inference: admissible input dtypes and ranks
//   domain(attrs)                          tensor inequalities under which there is no NaN/Inf, with losses
//   run(const context&, inputs, attrs)     the reference kernel on runtime tensors
//   sample(rng&)                           a random (proposed) instance; checked against constraints
//
// The kit's specs declare these members `template <int = 0>`: a non-template
// member's body is compiled in every file including the spec, with the
// dispatch over dtypes it instantiates; as a template it is compiled only
// where the op is used. Calls and `&Op::run` deduce the 0, so code that uses
// specs cannot tell; detect a member with a call (`requires { Op::hints(); }`),
// not with its bare address.

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>


namespace tensoracle::spec {

/// A set of dtypes as a bit mask over the dtype enum.
struct dtype_set {
    std::uint16_t mask = 0;

    [[nodiscard]] constexpr bool contains(dtype d) const noexcept {
        return (mask >> static_cast<unsigned>(d) & 1u) != 0;
    }
    [[nodiscard]] constexpr bool empty() const noexcept { return mask == 0; }
    friend constexpr dtype_set operator|(dtype_set a, dtype_set b) noexcept {
        return {static_cast<std::uint16_t>(a.mask | b.mask)};
    }
    friend constexpr dtype_set operator&(dtype_set a, dtype_set b) noexcept {
        return {static_cast<std::uint16_t>(a.mask & b.mask)};
    }
    [[nodiscard]] std::vector<dtype> members() const {
        std::vector<dtype> out;
        for (std::size_t i = 0; i < dtype_count; ++i) {
            if (contains(static_cast<dtype>(i))) out.push_back(static_cast<dtype>(i));
        }
        return out;
    }
    [[nodiscard]] std::string to_string() const {
        std::string s;
        for (const dtype d : members()) s += (s.empty() ? "" : ", ") + std::string(name(d));
        return "{" + s + "}";
    }
};

template <class... D>
constexpr dtype_set dtypes_of(D... ds) noexcept {
    return {static_cast<std::uint16_t>(((1u << static_cast<unsigned>(ds)) | ... | 0u))};
}

namespace types {
inline constexpr dtype_set floating = dtypes_of(dtype::f16, dtype::bf16, dtype::f32, dtype::f64);
/// The IEEE types of ops whose ONNX schema (at the spec's opset) predates bfloat16.
inline constexpr dtype_set ieee_floating = dtypes_of(dtype::f16, dtype::f32, dtype::f64);
inline constexpr dtype_set signed_integers = dtypes_of(dtype::i8, dtype::i16, dtype::i32, dtype::i64);
inline constexpr dtype_set integers = signed_integers | dtypes_of(dtype::u8);
inline constexpr dtype_set numeric = floating | integers;
inline constexpr dtype_set signed_numeric = floating | signed_integers;
inline constexpr dtype_set boolean = dtypes_of(dtype::boolean);
inline constexpr dtype_set all = numeric | boolean;
inline constexpr dtype_set int64 = dtypes_of(dtype::i64);
inline constexpr dtype_set indices = dtypes_of(dtype::i32, dtype::i64);
}  // namespace types

/// Inclusive rank range of one input or output.
struct rank_range {
    std::size_t min = 0;
    std::size_t max = 8;
    [[nodiscard]] constexpr bool contains(std::size_t r) const noexcept { return r >= min && r <= max; }
};

/// One input or output of an op. Inputs that share `type_var` must share
/// their dtype (ONNX's type constraints, e.g. "T").
struct value_spec {
    std::string_view name;
    dtype_set types;
    rank_range ranks{};
    std::string_view type_var = "T";
    bool optional = false;
    bool variadic = false;  // this and all further inputs (Concat, Sum, Max, ...)
};

/// Thrown by a symbolic context (the graph generator's) when a spec needs
/// something the generator has left unknown: the values of a small integer
/// input (`values(i)`: the generator then makes that input a constant whose
/// values are unknowns), or the data of an input (`input(i)`: the op needs a
/// value hint for it). Concrete contexts never throw it.
class unknown_input_error : public error {
public:
    enum class need : std::uint8_t { values, data, shape };
    unknown_input_error(std::string_view op_type, std::size_t input, need what)
        : error(op_type, "input " + std::to_string(input) +
                             (what == need::values ? "'s values are needed as symbols"
                              : what == need::data ? "'s data is needed but unknown while generating"
                                                   : "'s shape is needed as numbers but is still unknown")),
          input_(input),
          need_(what) {}
    [[nodiscard]] std::size_t input() const noexcept { return input_; }
    [[nodiscard]] need needed() const noexcept { return need_; }

private:
    std::size_t input_;
    need need_;
};

/// What a symbolic context knows of one input: presence, dtype, and dims as
/// expressions (symbols the generator solves for, or constants bound to a
/// value already in the graph); optionally its data, or its values as
/// expressions when it is a small shape-like integer input.
struct symbolic_input {
    bool present = false;
    dtype type = dtype::f32;
    std::vector<expr> dims;
    const tensor* data = nullptr;
    std::optional<std::vector<expr>> values;
};

/// The world a spec's constraints and shapes are written against: input
/// ranks and dtypes are concrete; dims, integer attributes and values of
/// small integer inputs are expressions. A concrete context (from tensors)
/// makes them symbols bound in `env()`; a symbolic context (the generator's)
/// leaves some of them unbound, as unknowns of a constraint system, and
/// binds the rest to constants.
class context {
public:
    /// A concrete context from actual inputs (absent optional inputs are
    /// nullptr) and the full attribute map (defaults filled in).
    context(std::string_view op_type, std::vector<const tensor*> inputs, attribute_map attributes)
        : op_type_(op_type), attributes_(std::move(attributes)) {
        inputs_.resize(inputs.size());
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            if (inputs[i] == nullptr) continue;
            auto& in = inputs_[i];
            in.present = true;
            in.type = inputs[i]->element_dtype();
            in.data = inputs[i];
            const auto& dims = inputs[i]->shape();
            for (std::size_t a = 0; a < dims.size(); ++a) {
                in.dims.push_back(dim_symbol(i, a));
                env_[dim_name(i, a)] = static_cast<std::int64_t>(dims[a]);
            }
            if (in.type == dtype::i64 || in.type == dtype::i32) {
                const auto vals = inputs[i]->to<std::int64_t>();
                for (std::size_t k = 0; k < vals.size() && k < max_value_symbols; ++k) {
                    env_[value_name(i, k)] = vals.data()[k];
                }
            }
        }
        for (const auto& [key, v] : attributes_) {
            if (const auto* p = std::get_if<std::int64_t>(&v)) {
                env_[attr_name(key)] = *p;
                int_attributes_.emplace(key, expr::symbol(attr_name(key)));
            }
            if (const auto* p = std::get_if<std::vector<std::int64_t>>(&v)) {
                std::vector<expr> syms;
                for (std::size_t k = 0; k < p->size(); ++k) {
                    env_[attr_element_name(key, k)] = (*p)[k];
                    syms.push_back(expr::symbol(attr_element_name(key, k)));
                }
                env_[attr_length_name(key)] = static_cast<std::int64_t>(p->size());
                ints_attributes_.emplace(key, std::move(syms));
            }
        }
    }

    /// A symbolic context: inputs as described, attributes from the map, where
    /// the int and ints attributes named in `unknown_attributes` become symbols
    /// ("attr.<name>", "attr.<name>[k]") and all others constants. The map must
    /// still hold every attribute (an unknown ints attribute with its length).
    [[nodiscard]] static context symbolic(std::string_view op_type, std::vector<symbolic_input> inputs,
                                          attribute_map attributes,
                                          const std::vector<std::string>& unknown_attributes = {}) {
        context c(op_type);
        c.inputs_ = std::move(inputs);
        c.attributes_ = std::move(attributes);
        const auto unknown = [&](const std::string& key) {
            return std::find(unknown_attributes.begin(), unknown_attributes.end(), key) != unknown_attributes.end();
        };
        for (const auto& [key, v] : c.attributes_) {
            if (const auto* p = std::get_if<std::int64_t>(&v)) {
                c.int_attributes_.emplace(key, unknown(key) ? expr::symbol(attr_name(key)) : expr(*p));
            }
            if (const auto* p = std::get_if<std::vector<std::int64_t>>(&v)) {
                std::vector<expr> e;
                for (std::size_t k = 0; k < p->size(); ++k) {
                    e.push_back(unknown(key) ? expr::symbol(attr_element_name(key, k)) : expr((*p)[k]));
                }
                c.ints_attributes_.emplace(key, std::move(e));
            }
        }
        return c;
    }

    /// Largest integer input whose values become symbols (shape-like inputs).
    static constexpr std::size_t max_value_symbols = 64;

    [[nodiscard]] std::string_view op_type() const noexcept { return op_type_; }
    [[nodiscard]] std::size_t input_count() const noexcept { return inputs_.size(); }
    [[nodiscard]] bool has_input(std::size_t i) const noexcept { return i < inputs_.size() && inputs_[i].present; }

    /// The data of input i (a symbolic context may not know it).
    [[nodiscard]] const tensor& input(std::size_t i) const {
        const auto& in = info(i);
        if (in.data == nullptr) throw unknown_input_error(op_type_, i, unknown_input_error::need::data);
        return *in.data;
    }
    [[nodiscard]] std::size_t rank(std::size_t i) const { return info(i).dims.size(); }
    [[nodiscard]] dtype input_dtype(std::size_t i) const { return info(i).type; }

    /// Input i's dim `axis` (a symbol named "in<i>.shape[<axis>]", or a constant).
    [[nodiscard]] expr dim(std::size_t i, std::size_t axis) const {
        const auto& in = info(i);
        if (axis >= in.dims.size()) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " has rank " +
                                                   std::to_string(in.dims.size()) + ", no axis " + std::to_string(axis));
        }
        return in.dims[axis];
    }
    [[nodiscard]] std::vector<expr> shape(std::size_t i) const { return info(i).dims; }
    /// Input i's shape as numbers, for rules that cannot be written as
    /// expressions (float scales); a symbolic context knows it only when the
    /// generator has fixed it.
    [[nodiscard]] shape_type concrete_shape(std::size_t i) const {
        const auto& in = info(i);
        if (in.data != nullptr) return in.data->shape();
        shape_type s;
        for (const auto& d : in.dims) {
            const auto v = d.constant_value();
            if (!v) throw unknown_input_error(op_type_, i, unknown_input_error::need::shape);
            s.push_back(static_cast<std::size_t>(*v));
        }
        return s;
    }
    /// How many elements input i has, known also where its data is not (a
    /// shape-like input's values, a shape the generator fixed).
    [[nodiscard]] std::size_t element_count(std::size_t i) const {
        const auto& in = info(i);
        if (in.data != nullptr) return in.data->size();
        if (in.values) return in.values->size();
        std::size_t n = 1;
        for (const auto d : concrete_shape(i)) n *= d;
        return n;
    }
    /// The value of integer input i at flat position k.
    [[nodiscard]] expr value(std::size_t i, std::size_t k) const {
        const auto v = values(i);
        if (k >= v.size()) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " has " + std::to_string(v.size()) +
                                                   " values, no value " + std::to_string(k));
        }
        return v[k];
    }
    /// The values of a small integer input (shape-like), as expressions.
    [[nodiscard]] std::vector<expr> values(std::size_t i) const {
        const auto& in = info(i);
        if (in.values) return *in.values;
        if (in.type != dtype::i64 && in.type != dtype::i32) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " must be int32/int64, got " +
                                                   std::string(name(in.type)));
        }
        if (in.data == nullptr) throw unknown_input_error(op_type_, i, unknown_input_error::need::values);
        const auto& t = *in.data;
        if (t.size() > max_value_symbols) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " has " + std::to_string(t.size()) +
                                                   " values; shape-like inputs may have at most 64");
        }
        std::vector<expr> out;
        const bool bound = env_.find(value_name(i, 0)) != env_.end();
        const auto vals = bound ? array<std::int64_t>{} : t.to<std::int64_t>();
        for (std::size_t k = 0; k < t.size(); ++k) {
            out.push_back(bound ? value_symbol(i, k) : expr(vals.data()[k]));
        }
        return out;
    }

    [[nodiscard]] const attribute_map& attributes() const noexcept { return attributes_; }
    [[nodiscard]] bool has_attribute(std::string_view key) const { return attributes_.find(key) != attributes_.end(); }
    /// An int attribute (a symbol named "attr.<name>", or a constant).
    [[nodiscard]] expr attr(std::string_view key) const {
        const auto it = int_attributes_.find(key);
        if (it == int_attributes_.end()) {
            throw error(std::string(op_type_), "no int attribute '" + std::string(key) + "'");
        }
        return it->second;
    }
    /// An ints attribute ("attr.<name>[k]" symbols or constants); empty when absent.
    [[nodiscard]] std::vector<expr> attr_ints(std::string_view key) const {
        if (!has_attribute(key)) return {};
        const auto it = ints_attributes_.find(key);
        if (it == ints_attributes_.end()) {
            throw error(std::string(op_type_), "attribute '" + std::string(key) + "' is not a list of ints");
        }
        return it->second;
    }

    [[nodiscard]] const environment& env() const noexcept { return env_; }
    [[nodiscard]] std::int64_t eval(const expr& e) const { return e.eval(env_); }

    [[nodiscard]] static std::string dim_name(std::size_t i, std::size_t axis) {
        if (i < cached_inputs && axis < cached_axes) return symbol_cache().dim_names[i * cached_axes + axis];
        return make_dim_name(i, axis);
    }
    [[nodiscard]] static std::string value_name(std::size_t i, std::size_t k) {
        if (i < cached_inputs && k < max_value_symbols) return symbol_cache().value_names[i * max_value_symbols + k];
        return make_value_name(i, k);
    }
    /// expr::symbol(dim_name(i, axis)), shared: the generator asks for the
    /// same few symbols hundreds of times per graph.
    [[nodiscard]] static expr dim_symbol(std::size_t i, std::size_t axis) {
        if (i < cached_inputs && axis < cached_axes) return symbol_cache().dims[i * cached_axes + axis];
        return expr::symbol(make_dim_name(i, axis));
    }
    /// expr::symbol(value_name(i, k)), shared likewise.
    [[nodiscard]] static expr value_symbol(std::size_t i, std::size_t k) {
        if (i < cached_inputs && k < max_value_symbols) return symbol_cache().values[i * max_value_symbols + k];
        return expr::symbol(make_value_name(i, k));
    }
    /// The symbol of an int attribute ("attr.<key>").
    [[nodiscard]] static std::string attr_name(std::string_view key) { return "attr." + std::string(key); }
    [[nodiscard]] static std::string attr_element_name(std::string_view key, std::size_t k) {
        return attr_name(key) + "[" + std::to_string(k) + "]";
    }
    /// The symbol spec::list_length gives an ints attribute's elements.
    [[nodiscard]] static std::string attr_length_name(std::string_view key) {
        return attr_name(key) + ".length";
    }

private:
    static std::string make_dim_name(std::size_t i, std::size_t axis) {
        return "in" + std::to_string(i) + ".shape[" + std::to_string(axis) + "]";
    }
    static std::string make_value_name(std::size_t i, std::size_t k) {
        return "in" + std::to_string(i) + ".value[" + std::to_string(k) + "]";
    }
    // Names and symbols of the first inputs' dims and values, built once.
    // Never destroyed: expressions held by other static objects may outlive
    // any destruction order (as expr's shared constants).
    static constexpr std::size_t cached_inputs = 16, cached_axes = 16;
    struct symbol_table {
        std::vector<std::string> dim_names, value_names;
        std::vector<expr> dims, values;
    };
    static const symbol_table& symbol_cache() {
        static const symbol_table* const table = [] {
            auto* t = new symbol_table();
            for (std::size_t i = 0; i < cached_inputs; ++i) {
                for (std::size_t a = 0; a < cached_axes; ++a) {
                    t->dim_names.push_back(make_dim_name(i, a));
                    t->dims.push_back(expr::symbol(t->dim_names.back()));
                }
                for (std::size_t k = 0; k < max_value_symbols; ++k) {
                    t->value_names.push_back(make_value_name(i, k));
                    t->values.push_back(expr::symbol(t->value_names.back()));
                }
            }
            return t;
        }();
        return *table;
    }

    explicit context(std::string_view op_type) : op_type_(op_type) {}

    [[nodiscard]] const symbolic_input& info(std::size_t i) const {
        if (!has_input(i)) {
            throw error(std::string(op_type_), "input " + std::to_string(i) + " is required but absent");
        }
        return inputs_[i];
    }

    std::string_view op_type_;
    std::vector<symbolic_input> inputs_;
    attribute_map attributes_;
    std::map<std::string, expr, std::less<>> int_attributes_;
    std::map<std::string, std::vector<expr>, std::less<>> ints_attributes_;
    environment env_;
};

/// Output shape expressions, one vector of dims per output.
using shape_exprs = std::vector<std::vector<expr>>;

/// What a spec's optional constraints_and_shapes() returns: its constraints()
/// and output_shapes() from one model (the shapes are read only when the
/// constraints hold).
struct constraints_with_shapes {
    std::vector<constraint> constraints;
    shape_exprs shapes;
};

/// Base of a spec Op that defines constraints_and_shapes(): its constraints()
/// and output_shapes() come from that one model.
template <class Op>
struct one_shape_model {
    static std::vector<constraint> constraints(const context& c) { return Op::constraints_and_shapes(c).constraints; }
    static shape_exprs output_shapes(const context& c) { return Op::constraints_and_shapes(c).shapes; }
};

/// A tensor inequality under which an op yields no NaN/Inf, with the loss
/// the input search minimizes (0 when satisfied). `loss` sees the inputs.
struct domain_rule {
    std::string description;  // e.g. "X > 0"
    std::function<double(std::span<const tensor>)> loss;
    /// d loss / d input, one double tensor per input (an empty tensor where
    /// the loss does not depend on it). Optional: without it the input search
    /// estimates the gradient from the loss alone (slower, noisier).
    std::function<std::vector<tensor>(std::span<const tensor>)> gradient;
    /// Rules of the form "f(x) <= 0 for every element x of one input" (most
    /// of them) name the input and f, so the generator can tell from what it
    /// knows of that input's values (spec::value_facts) whether the rule can
    /// hold at all. Empty for rules over whole tensors.
    std::optional<std::size_t> elementwise_input;
    std::function<double(double)> elementwise;
    /// f(x) <= 0 is needed of some element only (a sum's log needs one positive term).
    bool elementwise_any = false;
    /// Rules that depend on the input's dtype (overflow: Exp's x <= log(max
    /// finite)): f(x, max finite of elementwise_input's dtype) <= 0. Used
    /// where the generator knows the dtype and `elementwise` is empty.
    std::function<double(double, double)> elementwise_at_limit;
    /// The dtypes of input elementwise_input (input 0 for a rule over whole
    /// tensors) the rule speaks of; on others it holds trivially and its loss
    /// is 0 (Pow's X > 0 is for a floating X: an integer base may be 0).
    dtype_set input_dtypes = types::all;

    domain_rule() = default;
    domain_rule(std::string what, std::function<double(std::span<const tensor>)> loss_of,
                std::function<std::vector<tensor>(std::span<const tensor>)> gradient_of = {})
        : description(std::move(what)), loss(std::move(loss_of)), gradient(std::move(gradient_of)) {}
};

/// Admissible input dtypes and ranks for a wanted output (backward inference).
struct input_candidate {
    std::vector<dtype> dtypes;
    std::vector<std::size_t> ranks;
};

/// One concrete instance of an op: inputs and attributes. Produced by the
/// per-op sampler; valid when the constraints hold.
struct instance {
    std::vector<std::optional<tensor>> inputs;
    attribute_map attributes;
};

/// Evaluates every constraint; throws naming the op, the constraint, its
/// reason and the values of its symbols when one fails.
inline void check_constraints(const context& c, const std::vector<constraint>& cs) {
    for (const auto& k : cs) {
        if (c.eval(k.condition) != 0) continue;
        std::string values;
        for (const auto& s : k.condition.symbols()) {
            const auto it = c.env().find(s);
            values += (values.empty() ? "" : ", ") + s + "=" + (it == c.env().end() ? "?" : std::to_string(it->second));
        }
        throw shape_error(std::string(c.op_type()), "constraint violated: " + k.condition.to_string() + " (" +
                                                        k.reason + ")" + (values.empty() ? "" : " with " + values));
    }
}

/// Evaluates output shape expressions; negative dims are an error.
[[nodiscard]] inline std::vector<shape_type> eval_shapes(const context& c, const shape_exprs& shapes) {
    std::vector<shape_type> out;
    for (std::size_t o = 0; o < shapes.size(); ++o) {
        shape_type dims;
        for (const auto& d : shapes[o]) {
            const std::int64_t v = c.eval(d);
            if (v < 0) {
                throw shape_error(std::string(c.op_type()), "output " + std::to_string(o) + " gets dim " +
                                                                std::to_string(v) + " from " + d.to_string());
            }
            dims.push_back(static_cast<std::size_t>(v));
        }
        out.push_back(std::move(dims));
    }
    return out;
}

/// Normalizes a possibly negative axis into [0, rank); throws when out of range.
[[nodiscard]] inline std::size_t normalize_axis(std::int64_t axis, std::size_t rank, std::string_view where) {
    const auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r) {
        throw shape_error(where, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    }
    return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

/// Compile-time check at a typed kernel's entry: the error names the op and
/// the element type through this template's arguments.
template <class Op, class T>
struct dtype_accepted {
    static constexpr bool value = [] {
        if constexpr (ad_scalar<T>) {
            return Op::inputs[0].types.contains(dtype_of<base_scalar_t<T>>);  // AD over an accepted float type
        } else {
            return element_type<T> && Op::inputs[0].types.contains(dtype_of<T>);
        }
    }();
    static_assert(value,
                  "tensoracle::ops: this op does not accept this element type; see the op's inputs[0].types "
                  "(dtype_accepted<Op, T> names both)");
};

/// Float accumulation for f16 and bf16, as ONNX reference kernels do; AD
/// scalars accumulate in themselves.
template <class T>
using accumulator_t = std::conditional_t<floating_element<T> && sizeof(T) == 2, float, T>;

}  // namespace tensoracle::spec
// ---- end tensoracle/spec/op.hpp ----

namespace tensoracle::spec {

struct op_entry {
    std::string_view op_type;
    int opset = 0;
    std::span<const value_spec> inputs;
    std::span<const value_spec> outputs;
    /// The last opset at which this spec's version of the op is current (a
    /// later opset has a newer version or deprecates the op).
    int last_opset = 17;
    std::vector<std::string> (*attribute_names)() = nullptr;
    std::vector<attribute_info> (*attribute_infos)() = nullptr;
    attribute_map (*normalize_attributes)(const attribute_map&) = nullptr;
    std::vector<constraint> (*constraints)(const context&) = nullptr;
    shape_exprs (*output_shapes)(const context&) = nullptr;
    /// Both of the above from one model; nullptr when the spec has no such member.
    constraints_with_shapes (*constraints_and_shapes)(const context&) = nullptr;
    std::vector<dtype> (*output_dtypes)(const context&) = nullptr;
    std::vector<input_candidate> (*input_candidates)(dtype, std::size_t) = nullptr;
    std::vector<domain_rule> (*domain)(const attribute_map&) = nullptr;
    std::vector<tensor> (*run)(const context&) = nullptr;
    /// What the graph generator cannot infer from the constraints (see hints.hpp).
    spec::hints (*hints)() = nullptr;
    /// Slope the input search uses where the op's true derivative is zero or
    /// undefined (NNSmith's proxy derivative); 0 when the op needs none.
    double proxy_slope = 0.0;
};

/// The entry of spec Op (see op.hpp for the members a spec provides).
template <class Op>
[[nodiscard]] op_entry make_entry() {
    op_entry e;
    e.op_type = Op::op_type;
    e.opset = Op::opset;
    e.inputs = std::span<const value_spec>(Op::inputs);
    e.outputs = std::span<const value_spec>(Op::outputs);
    if constexpr (requires { Op::last_opset; }) e.last_opset = Op::last_opset;
    e.attribute_names = &attribute_names<typename Op::attributes>;
    e.attribute_infos = &attribute_infos<typename Op::attributes>;
    e.normalize_attributes = [](const attribute_map& m) {
        return to_attribute_map(parse_attributes<typename Op::attributes>(m, Op::op_type));
    };
    e.constraints = &Op::constraints;
    e.output_shapes = &Op::output_shapes;
    // A call, not `&Op::constraints_and_shapes`: the member may be a template
    // (template <int = 0>, see spec/op.hpp), whose bare address is no expression.
    if constexpr (requires(const context& c) { Op::constraints_and_shapes(c); }) {
        e.constraints_and_shapes = &Op::constraints_and_shapes;
    }
    e.output_dtypes = &Op::output_dtypes;
    e.input_candidates = &Op::input_candidates;
    e.domain = &Op::domain;
    e.run = &Op::run;
    if constexpr (requires { Op::hints(); }) {
        e.hints = &Op::hints;
    } else {
        e.hints = [] { return spec::hints{}; };
    }
    if constexpr (requires { Op::proxy_slope; }) e.proxy_slope = Op::proxy_slope;
    return e;
}

namespace detail {
inline void check_inputs(const op_entry& op, const std::vector<const tensor*>& in) {
    const std::string where(op.op_type);
    const bool variadic = !op.inputs.empty() && op.inputs.back().variadic;
    if (!variadic && in.size() > op.inputs.size()) {
        throw error(where, "takes at most " + std::to_string(op.inputs.size()) + " inputs, got " +
                               std::to_string(in.size()));
    }
    std::vector<std::pair<std::string_view, dtype>> bound;  // type variable -> dtype
    for (std::size_t i = 0; i < std::max(in.size(), op.inputs.size()); ++i) {
        const value_spec& s = op.inputs[std::min(i, op.inputs.size() - 1)];
        if (i >= in.size() || in[i] == nullptr) {
            if (i < op.inputs.size() && !s.optional && !s.variadic) {
                throw error(where, "input " + std::to_string(i) + " ('" + std::string(s.name) + "') is required");
            }
            continue;
        }
        const dtype d = in[i]->element_dtype();
        if (!s.types.contains(d)) {
            throw dtype_error(where, "input " + std::to_string(i) + " ('" + std::string(s.name) + "') has dtype " +
                                         std::string(name(d)) + "; allowed: " + s.types.to_string());
        }
        if (!s.ranks.contains(in[i]->rank())) {
            throw shape_error(where, "input " + std::to_string(i) + " ('" + std::string(s.name) + "') has rank " +
                                         std::to_string(in[i]->rank()) + "; allowed: " + std::to_string(s.ranks.min) +
                                         ".." + std::to_string(s.ranks.max));
        }
        bool found = false;
        for (const auto& [var, bd] : bound) {
            if (var == s.type_var) {
                found = true;
                if (bd != d) {
                    throw dtype_error(where, "input " + std::to_string(i) + " ('" + std::string(s.name) + "') has dtype " +
                                                 std::string(name(d)) + " but type " + std::string(s.type_var) +
                                                 " is already " + std::string(name(bd)));
                }
            }
        }
        if (!found) bound.emplace_back(s.type_var, d);
    }
}
}  // namespace detail

/// Validates and infers without running: returns output dtypes and shapes.
struct inferred_outputs {
    std::vector<dtype> dtypes;
    std::vector<shape_type> shapes;
};

namespace detail {
// Constraints checked, then the output shapes: from one model where the spec has one.
inline std::vector<shape_type> checked_shapes(const op_entry& op, const context& c) {
    if (op.constraints_and_shapes != nullptr) {
        const auto m = op.constraints_and_shapes(c);
        check_constraints(c, m.constraints);
        return eval_shapes(c, m.shapes);
    }
    check_constraints(c, op.constraints(c));
    return eval_shapes(c, op.output_shapes(c));
}
}  // namespace detail

[[nodiscard]] inline inferred_outputs infer(const op_entry& op, const std::vector<const tensor*>& inputs,
                                            const attribute_map& attributes) {
    detail::check_inputs(op, inputs);
    const context c(op.op_type, inputs, op.normalize_attributes(attributes));
    auto shapes = detail::checked_shapes(op, c);
    return {op.output_dtypes(c), std::move(shapes)};
}

/// Runs op on inputs (nullptr = absent optional input) with checks before
/// and after: a kernel whose output disagrees with the spec's inference is a
/// bug in the kit, reported as such.
[[nodiscard]] inline std::vector<tensor> evaluate(const op_entry& op, const std::vector<const tensor*>& inputs,
                                                  const attribute_map& attributes) {
    detail::check_inputs(op, inputs);
    const context c(op.op_type, inputs, op.normalize_attributes(attributes));
    const auto shapes = detail::checked_shapes(op, c);
    const auto dtypes = op.output_dtypes(c);
    auto out = op.run(c);
    if (out.size() != shapes.size() || out.size() != dtypes.size()) {
        throw error(std::string(op.op_type), "internal: kernel produced " + std::to_string(out.size()) +
                                                 " outputs, spec infers " + std::to_string(shapes.size()));
    }
    for (std::size_t o = 0; o < out.size(); ++o) {
        if (out[o].shape() != shapes[o] || out[o].element_dtype() != dtypes[o]) {
            throw error(std::string(op.op_type),
                        "internal: kernel output " + std::to_string(o) + " is " + std::string(name(out[o].element_dtype())) +
                            tensoracle::to_string(out[o].shape()) + " but the spec infers " +
                            std::string(name(dtypes[o])) + tensoracle::to_string(shapes[o]));
        }
    }
    return out;
}

}  // namespace tensoracle::spec
// ---- end tensoracle/spec/entry.hpp ----

// ---- begin tensoracle/ops/fast_paths.hpp ----
// tensoracle: optional accelerated kernels behind MatMul, Gemm and Conv.
//
// The reference kernels are naive on purpose: each is the ONNX formula as
// loops, which is what the conformance runner proves. Campaigns and input
// searches evaluate thousands of graphs, and there the three matrix ops are
// most of the arithmetic. This table lets a program plug in a GEMM (BLAS:
// <tensoracle/blas.hpp>) that the interpreter then uses for float32 and
// float64 instances of those ops; everything else stays naive. The table is
// empty unless a program fills it, so the core headers need no BLAS.
//
// The results are the same formula with another summation order, so they
// differ from the naive kernels by rounding (tests hold them to the dtype's
// tolerance level); a BLAS may round differently per CPU, which is why
// `tensoracle gen` leaves the table empty unless asked (--blas).

#include <cstddef>
#include <type_traits>

namespace tensoracle::ops {

/// C = alpha op(A) op(B) + beta C for row-major matrices: op(A) is M x K
/// (A is stored K x M when trans_a), op(B) is K x N (N x K when trans_b);
/// ld* are row strides. beta is 0 (C is only written) or 1.
template <class T>
using gemm_function = void (*)(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, T alpha,
                               const T* a, std::size_t lda, const T* b, std::size_t ldb, T beta, T* c, std::size_t ldc);

/// The accelerated kernels in use; null members mean the naive kernel.
struct fast_path_table {
    gemm_function<float> sgemm = nullptr;
    gemm_function<double> dgemm = nullptr;
};

/// The process's table. Fill it before evaluating (it is not synchronized).
[[nodiscard]] inline fast_path_table& fast_paths() noexcept {
    static fast_path_table table;
    return table;
}

/// The GEMM for element type T, or null when T has none or none is plugged in.
template <class T>
[[nodiscard]] gemm_function<T> fast_gemm() noexcept {
    if constexpr (std::is_same_v<T, float>) {
        return fast_paths().sgemm;
    } else if constexpr (std::is_same_v<T, double>) {
        return fast_paths().dgemm;
    } else {
        return nullptr;
    }
}

/// Within its lifetime only the naive kernels run (the conformance runner and
/// the cross-checks of the fast paths use it); the table comes back after.
class naive_kernels_only {
public:
    naive_kernels_only() noexcept : saved_(fast_paths()) { fast_paths() = {}; }
    ~naive_kernels_only() { fast_paths() = saved_; }
    naive_kernels_only(const naive_kernels_only&) = delete;
    naive_kernels_only& operator=(const naive_kernels_only&) = delete;

private:
    fast_path_table saved_;
};

}  // namespace tensoracle::ops
// ---- end tensoracle/ops/fast_paths.hpp ----
// ---- begin tensoracle/ops/registry.hpp ----
// tensoracle: the registry of every op spec. Adding an op is one spec in its
// family header and one entry in that family's tuple; tests iterate this.

#include <algorithm>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>

// ---- begin tensoracle/ops/binary.hpp ----
// tensoracle: broadcast element-wise ops with two or more inputs: arithmetic,
// comparison and logic, Where, PRelu, Clip and Cast.
//
// Semantics chosen where ONNX leaves them open: integer Div and Mod by zero
// throw (no UB, no silent value); integer overflow wraps (two's complement);
// integer Div truncates toward zero (C, numpy's np.trunc(a / b) for ONNX);
// Mod with fmod=0 takes the divisor's sign, with fmod=1 the dividend's.
// Ops with floating outputs also run on AD scalars (run_real): the same
// kernels, with the scalar type as accumulator.

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

// ---- begin tensoracle/ops/detail/broadcast.hpp ----
// tensoracle: ONNX multidirectional broadcasting, symbolic and concrete.

#include <algorithm>
#include <span>
#include <string>
#include <vector>


namespace tensoracle::ops::detail {

/// Constraints that inputs `ids` broadcast together (right-aligned dims are
/// equal or 1).
inline std::vector<spec::constraint> broadcast_constraints(const spec::context& c, const std::vector<std::size_t>& ids) {
    std::vector<spec::constraint> out;
    std::size_t rank = 0;
    for (const auto i : ids) rank = std::max(rank, c.rank(i));
    for (std::size_t k = 0; k < rank; ++k) {
        std::vector<spec::expr> dims;
        for (const auto i : ids) {
            if (c.rank(i) + k >= rank) dims.push_back(c.dim(i, c.rank(i) + k - rank));
        }
        for (std::size_t a = 0; a < dims.size(); ++a) {
            for (std::size_t b = a + 1; b < dims.size(); ++b) {
                out.push_back({dims[a] == dims[b] || dims[a] == 1 || dims[b] == 1,
                               "broadcastable dims at output axis " + std::to_string(k)});
            }
        }
    }
    return out;
}

/// The broadcast output shape of inputs `ids`: 1 gives way to any other dim.
inline std::vector<spec::expr> broadcast_shape(const spec::context& c, const std::vector<std::size_t>& ids) {
    std::size_t rank = 0;
    for (const auto i : ids) rank = std::max(rank, c.rank(i));
    std::vector<spec::expr> out;
    for (std::size_t k = 0; k < rank; ++k) {
        std::optional<spec::expr> d;
        for (const auto i : ids) {
            if (c.rank(i) + k < rank) continue;
            const auto e = c.dim(i, c.rank(i) + k - rank);
            d = d ? select(*d == 1, e, *d) : e;
        }
        out.push_back(*d);
    }
    return out;
}

/// Concrete broadcast of shapes; throws shape_error naming the axis.
inline shape_type broadcast_shapes(const std::vector<shape_type>& shapes, std::string_view where) {
    std::size_t rank = 0;
    for (const auto& s : shapes) rank = std::max(rank, s.size());
    shape_type out(rank, 1);
    for (std::size_t k = 0; k < rank; ++k) {
        bool set = false;
        for (const auto& s : shapes) {
            if (s.size() + k < rank) continue;
            const std::size_t d = s[s.size() + k - rank];
            if (!set || out[k] == 1) {
                out[k] = d;
                set = true;
            } else if (d != 1 && d != out[k]) {
                throw shape_error(where, "shapes " + to_string(shapes.front()) + " and " + to_string(s) +
                                             " do not broadcast at output axis " + std::to_string(k));
            }
        }
    }
    return out;
}

/// Walks a broadcast output in runs along its innermost axis, after merging
/// every pair of neighbouring axes that all inputs step through alike (so a
/// broadcast without broadcasting is one run). visit(f, len, base, step): output
/// elements f .. f+len-1 read element base[j] + i * step[j] of input j (step 0
/// where input j is broadcast along the run). Kernels loop over a run with
/// plain pointer arithmetic instead of a multi-index per element.
template <class Visit>
void for_each_broadcast_run(const std::vector<shape_type>& in, const shape_type& out, Visit&& visit) {
    const std::size_t m = in.size();
    if (element_count(out) == 0) return;
    // Merged axes, outer to inner: length and each input's stride along it.
    std::vector<std::size_t> len;
    std::vector<std::vector<std::size_t>> st;  // st[axis][j]
    std::vector<std::size_t> stride(m, 1);
    std::vector<std::size_t> cur(m);
    for (std::size_t k = out.size(); k-- > 0;) {
        if (out[k] == 1) continue;
        for (std::size_t j = 0; j < m; ++j) {
            const std::size_t rj = in[j].size();
            const bool has = rj + k >= out.size();
            const std::size_t d = has ? in[j][rj + k - out.size()] : 1;
            cur[j] = d == 1 ? 0 : stride[j];
        }
        bool merge = !len.empty();
        for (std::size_t j = 0; merge && j < m; ++j) merge = cur[j] == st.back()[j] * len.back();
        if (merge) {
            len.back() *= out[k];
        } else {
            len.push_back(out[k]);
            st.push_back(cur);
        }
        for (std::size_t j = 0; j < m; ++j) {
            const std::size_t rj = in[j].size();
            if (rj + k >= out.size()) stride[j] *= in[j][rj + k - out.size()];
        }
    }
    if (len.empty()) {  // every dim is 1: one element
        len.push_back(1);
        st.emplace_back(m, 0);
    }
    // Innermost first in `len`; the run is axis 0, the odometer the rest.
    const std::size_t run = len[0], axes = len.size();
    std::vector<std::size_t> idx(axes, 0), base(m, 0);
    const std::size_t n = element_count(out);
    for (std::size_t f = 0; f < n; f += run) {
        visit(f, run, std::span<const std::size_t>(base), std::span<const std::size_t>(st[0]));
        for (std::size_t a = 1; a < axes; ++a) {
            for (std::size_t j = 0; j < m; ++j) base[j] += st[a][j];
            if (++idx[a] < len[a]) break;
            for (std::size_t j = 0; j < m; ++j) base[j] -= st[a][j] * len[a];
            idx[a] = 0;
        }
    }
}

/// For each input, the flat offset of the element that feeds each output
/// element (row-major, broadcast axes repeating).
inline std::vector<std::vector<std::size_t>> broadcast_offsets(const std::vector<shape_type>& in, const shape_type& out) {
    const std::size_t n = element_count(out);
    std::vector<std::vector<std::size_t>> offsets(in.size(), std::vector<std::size_t>(n));
    for_each_broadcast_run(in, out, [&](std::size_t f, std::size_t len, std::span<const std::size_t> base,
                                        std::span<const std::size_t> step) {
        for (std::size_t j = 0; j < in.size(); ++j) {
            for (std::size_t i = 0; i < len; ++i) offsets[j][f + i] = base[j] + i * step[j];
        }
    });
    return offsets;
}

}  // namespace tensoracle::ops::detail
// ---- end tensoracle/ops/detail/broadcast.hpp ----
// ---- begin tensoracle/ops/detail/common.hpp ----
// tensoracle: helpers shared by op families (runtime dispatch to typed
// kernels, losses of domain rules, random instances).

#include <algorithm>
#include <cmath>
#include <limits>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>


namespace tensoracle::ops::detail {

using namespace tensoracle::spec;

/// Calls f(hana::type_c<T>) for the runtime dtype d, instantiating f only for
/// dtypes in `Allowed` (the spec's set), so kernels are never instantiated for
/// element types the op rejects. R is f's result type (a tensor by default).
template <dtype_set Allowed, class R = tensor, class F>
R dispatch(dtype d, std::string_view op_type, F&& f) {
    return tensoracle::visit(d, [&](auto t) -> R {
        using T = typename decltype(t)::type;
        if constexpr (Allowed.contains(dtype_of<T>)) {
            return f(t);
        } else {
            throw dtype_error(std::string(op_type), "dtype " + std::string(name(d)) + " is not accepted");
        }
    });
}

/// A kernel's one output as run()'s result, moved in: `return {t};` would
/// copy t out of the initializer list, a second pass over every output.
/// (Also run_real's arrays.)
template <class T>
    requires(!std::is_lvalue_reference_v<T>)
std::vector<T> single_output(T&& t) {
    std::vector<T> out;
    out.push_back(std::move(t));
    return out;
}

/// The domain rules of a formula struct F, or none when it declares none.
template <class F>
std::vector<domain_rule> domain_of() {
    if constexpr (requires { F::domain(); }) {
        return F::domain();
    } else {
        return {};
    }
}

/// Sum over elements of max(f(x), 0): zero exactly when f(x) <= 0 everywhere.
template <class F>
double hinge_loss(const tensor& t, F f) {
    return t.visit([&](auto v) {
        double loss = 0.0;
        for (const auto x : v) {
            const double h = f(value_cast<double>(x));
            if (h > 0.0 || std::isnan(h)) loss += std::isnan(h) ? 1.0 : h;
        }
        return loss;
    });
}

/// d hinge_loss / d input `input` (other inputs: empty): f' by a central
/// difference on each violating element, 0 elsewhere.
template <class F>
std::vector<tensor> hinge_gradient(std::span<const tensor> in, std::size_t input, F f) {
    std::vector<tensor> grads(in.size());
    const auto x = in[input].to<double>();
    auto d = array<double>::from_shape(x.shape());
    for (std::size_t k = 0; k < x.size(); ++k) {
        const double v = x.data()[k];
        double slope = 0.0;
        if (const double fv = f(v); fv > 0.0) {
            const double step = 1e-6 * std::max(1.0, std::fabs(v));
            slope = (f(v + step) - f(v - step)) / (2.0 * step);
            if (slope == 0.0 || !std::isfinite(slope)) {
                // At a symmetric kink (|B| > 0 at B = 0 exactly, as ReLU
                // outputs it) the central difference is 0: take the one-sided
                // slope that descends, upwards on a tie, so the search moves.
                const double up = (f(v + step) - fv) / step, down = (fv - f(v - step)) / step;
                slope = up <= -down ? up : down;
                if (!std::isfinite(slope)) slope = 0.0;
            }
        }
        d.data()[k] = slope;
    }
    grads[input] = tensor(d);
    return grads;
}

/// The rule "f(x) <= 0 for every element x of input `input`" with its
/// hinge loss and the loss's gradient, for the input search.
template <class F>
domain_rule hinge_rule(std::string text, std::size_t input, F f) {
    domain_rule r{std::move(text), [input, f](std::span<const tensor> in) { return hinge_loss(in[input], f); },
                  [input, f](std::span<const tensor> in) { return hinge_gradient(in, input, f); }};
    r.elementwise_input = input;
    r.elementwise = [f](double x) { return static_cast<double>(f(x)); };
    return r;
}

/// The floating values a cast to integer dtype `to` keeps in range (none for
/// floating and bool targets). The cast truncates toward zero first (ONNX, and
/// C++'s conversion, whose behaviour is undefined only when the truncated value
/// does not fit), so the range is the open interval (min - 1, max + 1): -0.5
/// becomes 0 in uint8, -1 does not fit. Bounds are the doubles just inside it.
inline std::optional<std::pair<double, double>> integer_cast_bounds(dtype to) {
    auto open = [](double lo, double hi) { return std::pair{std::nextafter(lo, 0.0), std::nextafter(hi, 0.0)}; };
    switch (to) {
        case dtype::i8: return open(-129.0, 128.0);
        case dtype::i16: return open(-32769.0, 32768.0);
        case dtype::i32: return open(-2147483649.0, 2147483648.0);
        // -2^63 - 1 rounds to -2^63 in double, which fits; the largest double below 2^63 is 2^63 - 1024.
        case dtype::i64: return std::pair{-9223372036854775808.0, 9223372036854774784.0};
        case dtype::u8: return open(-1.0, 256.0);
        default: return std::nullopt;
    }
}

/// ONNX Cast leaves a floating value outside an integer target's range undefined
/// (runtimes saturate, wrap or give INT_MIN): the rule keeps a floating input 0
/// within [min, max] of the target `target_of(inputs)` returns. Integer sources
/// (they wrap, which is defined) and bool or floating targets always pass.
template <class Target>
domain_rule cast_range_rule(Target target_of) {
    auto f_of = [=](std::span<const tensor> in) -> std::optional<std::function<double(double)>> {
        if (!info(in[0].element_dtype()).is_floating) return std::nullopt;
        const auto b = integer_cast_bounds(target_of(in));
        if (!b) return std::nullopt;
        return [lo = b->first, hi = b->second](double x) { return std::max(x - hi, lo - x); };
    };
    return {"floating input within the integer target's range",
            [f_of](std::span<const tensor> in) {
                const auto f = f_of(in);
                return f ? hinge_loss(in[0], *f) : 0.0;
            },
            [f_of](std::span<const tensor> in) {
                const auto f = f_of(in);
                if (f) return hinge_gradient(in, 0, *f);
                return std::vector<tensor>(in.size());
            }};
}

/// hinge_rule for the elements of `input` only where its dtype is in `dtypes`
/// (elsewhere the loss is 0 and the generator does not apply it).
template <class F>
domain_rule hinge_rule_for(dtype_set dtypes, std::string text, std::size_t input, F f) {
    auto r = hinge_rule(std::move(text), input, f);
    r.loss = [input, dtypes, loss = std::move(r.loss)](std::span<const tensor> in) {
        return dtypes.contains(in[input].element_dtype()) ? loss(in) : 0.0;
    };
    r.gradient = [input, dtypes, gradient = std::move(r.gradient)](std::span<const tensor> in) {
        return dtypes.contains(in[input].element_dtype()) ? gradient(in) : std::vector<tensor>(in.size());
    };
    r.input_dtypes = dtypes;
    return r;
}

/// Largest finite value of a floating dtype, as double.
inline double max_finite(dtype d) {
    switch (d) {
        case dtype::f16: return 65504.0;
        case dtype::bf16: return static_cast<double>(static_cast<float>(std::numeric_limits<bfloat16>::max()));
        case dtype::f32: return static_cast<double>(std::numeric_limits<float>::max());
        default: return std::numeric_limits<double>::max();
    }
}

/// hinge_rule for an f that also depends on the input's largest finite value
/// (overflow limits): f(x, max_finite(dtype)) <= 0.
template <class F>
domain_rule overflow_rule(std::string text, std::size_t input, F f) {
    auto at_limit = [input, f](std::span<const tensor> in) {
        return [m = max_finite(in[input].element_dtype()), f](double x) { return f(x, m); };
    };
    domain_rule r{std::move(text), [input, at_limit](std::span<const tensor> in) { return hinge_loss(in[input], at_limit(in)); },
                  [input, at_limit](std::span<const tensor> in) { return hinge_gradient(in, input, at_limit(in)); }};
    r.elementwise_input = input;
    r.elementwise_at_limit = [f](double x, double m) { return static_cast<double>(f(x, m)); };
    return r;
}

/// A random dtype from a set.
inline dtype pick_dtype(rng& g, dtype_set s) {
    const auto m = s.members();
    return m[static_cast<std::size_t>(g.below(m.size()))];
}

/// A random shape: rank in [min_rank, max_rank], dims in [1, max_dim].
inline shape_type random_shape(rng& g, std::size_t min_rank, std::size_t max_rank, std::size_t max_dim = 5) {
    shape_type s(static_cast<std::size_t>(g.integer(static_cast<std::int64_t>(min_rank),
                                                    static_cast<std::int64_t>(max_rank))));
    for (auto& d : s) d = static_cast<std::size_t>(g.integer(1, static_cast<std::int64_t>(max_dim)));
    return s;
}

/// An int64 1-D tensor from values.
inline tensor int64_tensor(const std::vector<std::int64_t>& v) {
    auto a = array<std::int64_t>::from_shape({v.size()});
    std::copy(v.begin(), v.end(), a.data());
    return tensor(a);
}

/// Row-major strides of a shape.
inline shape_type strides_of(const shape_type& s) {
    shape_type st(s.size(), 1);
    for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
    return st;
}

}  // namespace tensoracle::ops::detail
// ---- end tensoracle/ops/detail/common.hpp ----
// ---- begin tensoracle/ops/formulas.hpp ----
// tensoracle: the per-element formulas of the element-wise ops, in one place
// for the CPU kernels (ops/unary.hpp, ops/binary.hpp) and the CUDA kernels
// (cuda/kernels.cuh). A fix to a formula lands in both, so they cannot drift.
//
// This header depends on core/scalar.hpp alone so that nvcc parses it (the
// spec layer does not go through nvcc's device compiler). Each formula is a
// struct with `apply(x, attributes)`; the op's spec struct derives from it.
// Formulas are written for any real V: float, double, AD scalars on the host.
// Integer branches (wrapping arithmetic) stay host-and-device safe; integer
// errors (division by zero) are thrown by the spec layer, not here.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>


/// Marks a function callable from host and device code under nvcc; empty
/// for host compilers. Calls into std:: math need nvcc's --expt-relaxed-constexpr.
#if defined(__CUDACC__)
#define TENSORACLE_HD __host__ __device__
#else
#define TENSORACLE_HD
#endif

namespace tensoracle::ops {

namespace formula {
/// Integer arithmetic that wraps instead of overflowing (UB-free).
template <class V>
TENSORACLE_HD constexpr V wrapping_add(V a, V b) {
    return static_cast<V>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
template <class V>
TENSORACLE_HD constexpr V wrapping_sub(V a, V b) {
    return static_cast<V>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
template <class V>
TENSORACLE_HD constexpr V wrapping_mul(V a, V b) {
    return static_cast<V>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}
/// std::max(0, std::min(1, v)) exactly: NaN gives 1, and at 0 and 1 the
/// constant is taken (its derivative 0 on AD scalars).
template <class V>
TENSORACLE_HD constexpr V clamp01(V v) {
    const V t = v < V(1) ? v : V(1);
    return V(0) < t ? t : V(0);
}
}  // namespace formula

namespace unary {

// Attributes of the activations (the spec layer adapts them for parsing).
struct alpha_attr {
    float alpha = 0.01f;
};
struct elu_attr {
    float alpha = 1.0f;
};
struct selu_attr {
    float alpha = 1.67326319217681884765625f;
    float gamma = 1.05070102214813232421875f;
};
struct hard_sigmoid_attr {
    float alpha = 0.2f;
    float beta = 0.5f;
};
struct thresholded_relu_attr {
    float alpha = 1.0f;
};

namespace formula {
using namespace tensoracle::ops::formula;

#define TENSORACLE_FORMULA(NAME, BODY)                     \
    struct NAME {                                          \
        template <class V, class A>                        \
        TENSORACLE_HD static V apply(V x, const A& a) {    \
            (void)a;                                       \
            BODY                                           \
        }                                                  \
    };

TENSORACLE_FORMULA(relu, return x > V(0) ? x : V(0);)
TENSORACLE_FORMULA(abs, if constexpr (std::is_unsigned_v<V>) {
    return x;
} else if constexpr (std::is_integral_v<V>) {
    return x < 0 ? static_cast<V>(-static_cast<std::int64_t>(x)) : x;  // INT_MIN wraps
} else {
    return math::fabs(x);
})
TENSORACLE_FORMULA(neg, if constexpr (std::is_integral_v<V>) {
    return static_cast<V>(0 - static_cast<std::uint64_t>(static_cast<std::int64_t>(x)));  // wraps
} else {
    return -x;
})
TENSORACLE_FORMULA(sign, if constexpr (std::is_unsigned_v<V>) {
    return x > V(0) ? V(1) : V(0);
} else {
    return x > V(0) ? V(1) : (x < V(0) ? V(-1) : V(0));
})
TENSORACLE_FORMULA(ceil, return math::ceil(x);)
TENSORACLE_FORMULA(floor, return math::floor(x);)
/// Halves go to the even neighbour (ONNX and IEEE default).
TENSORACLE_FORMULA(round, return math::nearbyint(x);)
TENSORACLE_FORMULA(exp, return math::exp(x);)
TENSORACLE_FORMULA(log, return math::log(x);)
TENSORACLE_FORMULA(sqrt, return math::sqrt(x);)
TENSORACLE_FORMULA(reciprocal, return V(1) / x;)
/// Two branches so that exp never overflows: same value as 1/(1+exp(-x)).
TENSORACLE_FORMULA(sigmoid, return x >= V(0) ? V(1) / (V(1) + math::exp(-x)) : math::exp(x) / (V(1) + math::exp(x));)
TENSORACLE_FORMULA(tanh, return math::tanh(x);)
/// log(exp(x) + 1) as x + log1p(exp(-x)) for x >= 0: no overflow for large x,
/// and per sign, so that no kink of max or |.| shows in the derivative at 0.
TENSORACLE_FORMULA(softplus, return x >= V(0) ? x + math::log1p(math::exp(-x)) : math::log1p(math::exp(x));)
TENSORACLE_FORMULA(softsign, return x / (V(1) + math::fabs(x));)
TENSORACLE_FORMULA(sin, return math::sin(x);)
TENSORACLE_FORMULA(cos, return math::cos(x);)
TENSORACLE_FORMULA(tan, return math::tan(x);)
TENSORACLE_FORMULA(asin, return math::asin(x);)
TENSORACLE_FORMULA(acos, return math::acos(x);)
TENSORACLE_FORMULA(atan, return math::atan(x);)
TENSORACLE_FORMULA(sinh, return math::sinh(x);)
TENSORACLE_FORMULA(cosh, return math::cosh(x);)
TENSORACLE_FORMULA(asinh, return math::asinh(x);)
TENSORACLE_FORMULA(acosh, return math::acosh(x);)
TENSORACLE_FORMULA(atanh, return math::atanh(x);)
TENSORACLE_FORMULA(not_, return !x;)
TENSORACLE_FORMULA(identity, return x;)
TENSORACLE_FORMULA(leaky_relu, return x >= V(0) ? x : V(a.alpha) * x;)
TENSORACLE_FORMULA(elu, return x >= V(0) ? x : V(a.alpha) * math::expm1(x);)
/// max(0, x) + min(0, alpha * expm1(x / alpha)), written per sign with the same values (also -0 -> +0 and
/// NaN -> 0, as max/min give), so that the derivative at 0 is 1 and not max's and min's 0.
TENSORACLE_FORMULA(celu, const V al(a.alpha); if (x >= V(0)) return x + V(0); if (!(x < V(0))) return V(0);
                   const V m = al * math::expm1(x / al); return V(0) + (m < V(0) ? m : V(0));)
TENSORACLE_FORMULA(selu, return V(a.gamma) * (x > V(0) ? x : V(a.alpha) * math::expm1(x));)
TENSORACLE_FORMULA(hard_sigmoid, return clamp01(V(a.alpha) * x + V(a.beta));)
TENSORACLE_FORMULA(hard_swish, return x * clamp01(V(1.0f / 6.0f) * x + V(0.5f));)
TENSORACLE_FORMULA(thresholded_relu, return x > V(a.alpha) ? x : V(0);)
#undef TENSORACLE_FORMULA

/// Erf also takes integers (ONNX-13): erf in double, truncated to the type
/// (the spec layer handles integers; this is the floating formula).
struct erf {
    template <class V, class A>
    TENSORACLE_HD static V apply(V x, const A&) {
        return math::erf(x);
    }
};
}  // namespace formula
}  // namespace unary

namespace binary {
namespace formula {
using namespace tensoracle::ops::formula;

#define TENSORACLE_FORMULA(NAME, BODY)                          \
    struct NAME {                                               \
        template <class V, class A>                             \
        TENSORACLE_HD static V apply(V a, V b, const A& at) {   \
            (void)at;                                           \
            BODY                                                \
        }                                                       \
    };
TENSORACLE_FORMULA(add, if constexpr (std::is_integral_v<V>) { return wrapping_add(a, b); } else { return a + b; })
TENSORACLE_FORMULA(sub, if constexpr (std::is_integral_v<V>) { return wrapping_sub(a, b); } else { return a - b; })
TENSORACLE_FORMULA(mul, if constexpr (std::is_integral_v<V>) { return wrapping_mul(a, b); } else { return a * b; })
/// Floating division (integer division by zero is the spec layer's error).
TENSORACLE_FORMULA(div, return a / b;)
/// NaN in either operand gives NaN (ONNX Max/Min); otherwise the larger (smaller) one.
TENSORACLE_FORMULA(max, if constexpr (!std::is_integral_v<V>) {
    if (math::isnan(a) || math::isnan(b)) return std::numeric_limits<V>::quiet_NaN();
} return a < b ? b : a;)
TENSORACLE_FORMULA(min, if constexpr (!std::is_integral_v<V>) {
    if (math::isnan(a) || math::isnan(b)) return std::numeric_limits<V>::quiet_NaN();
} return b < a ? b : a;)
/// Sum and Mean fold their inputs with +; Mean divides at the end (spec layer).
struct sum : add {};
struct mean : add {};
/// Floating Mod with fmod=1: the dividend's sign (C fmod).
TENSORACLE_FORMULA(fmod, return math::fmod(a, b);)
/// Floating Pow of same-type operands.
TENSORACLE_FORMULA(pow, return math::pow(a, b);)
#undef TENSORACLE_FORMULA
}  // namespace formula
}  // namespace binary

}  // namespace tensoracle::ops
// ---- end tensoracle/ops/formulas.hpp ----

namespace tensoracle::ops {

namespace binary {
using spec::dtype_set;
namespace types = spec::types;
using spec::no_attributes;

/// How an op's output enclosure follows from its inputs' (spec::facts::corners):
/// Min keeps every input's "some element <= m", Max its "some element >= m".
enum class corner_kind : std::uint8_t { plain, min, max };

/// Exact integer arithmetic that wraps instead of overflowing (UB-free).
template <class V>
V wrap(std::int64_t v) {
    return static_cast<V>(v);
}
using ops::formula::wrapping_add;
using ops::formula::wrapping_mul;
using ops::formula::wrapping_sub;
}  // namespace binary

/// Two (or, with F::variadic, one or more) inputs broadcast together.
template <class F>
struct broadcast_elementwise {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = F::opset;
    using attributes = typename F::attributes;
    static constexpr bool variadic = requires { F::variadic; };
    static constexpr auto inputs = [] {
        if constexpr (variadic) {
            return std::array<spec::value_spec, 1>{{{"data_0", F::types, {}, "T", false, true}}};
        } else {
            return std::array<spec::value_spec, 2>{{{"A", F::types}, {"B", F::types}}};
        }
    }();
    static constexpr std::array<spec::value_spec, 1> outputs{{{"C", F::out_types, {}, "T1"}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    static std::vector<std::size_t> all_inputs(const spec::context& c) {
        std::vector<std::size_t> ids(c.input_count());
        for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i;
        return ids;
    }
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out;
        if (variadic) out.push_back({spec::expr(c.input_count()) >= 1, "at least one input"});
        auto b = detail::broadcast_constraints(c, all_inputs(c));
        out.insert(out.end(), b.begin(), b.end());
        if constexpr (requires { F::constraints(c); }) {
            auto extra = F::constraints(c);
            out.insert(out.end(), extra.begin(), extra.end());
        }
        return out;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) { return {detail::broadcast_shape(c, all_inputs(c))}; }
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        if constexpr (requires { F::output_dtype; }) {
            return {F::output_dtype};
        } else {
            return {c.input_dtype(0)};
        }
    }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        std::vector<std::size_t> ranks(rank + 1);
        for (std::size_t r = 0; r <= rank; ++r) ranks[r] = r;
        if constexpr (requires { F::output_dtype; }) {
            if (out != F::output_dtype) return {};
            return {{F::types.members(), ranks}, {F::types.members(), ranks}};
        } else {
            if (!F::types.contains(out)) return {};
            return {{{out}, ranks}, {{out}, ranks}};
        }
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return detail::domain_of<F>(); }

    /// The typed kernel on two arrays (numpy-style broadcasting).
    template <class T>
    static auto compute(const array<T>& a, const array<T>& b, const attributes& attrs = {}) {
        static_assert(spec::dtype_accepted<broadcast_elementwise, T>::value);
        return compute_n<T>({&a, &b}, attrs);
    }

    template <class T>
    static auto compute_n(const std::vector<const array<T>*>& in, const attributes& attrs) {
        using out_t = std::conditional_t<requires { F::output_dtype; }, bool, T>;
        std::vector<shape_type> shapes;
        std::vector<const T*> data;
        for (const auto* x : in) {
            shapes.emplace_back(x->shape().begin(), x->shape().end());
            data.push_back(x->data());
        }
        const auto out_shape = detail::broadcast_shapes(shapes, op_type);
        auto y = array<out_t>::from_shape(out_shape);
        compute_into<T>(data, shapes, out_shape, y.data(), attrs);
        return y;
    }

    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<F::types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            using out_t = std::conditional_t<requires { F::output_dtype; }, bool, T>;
            // Straight from the inputs' buffers into the output's: no typed copies.
            std::vector<shape_type> shapes;
            std::vector<const T*> data;
            for (std::size_t i = 0; i < c.input_count(); ++i) {
                shapes.push_back(c.input(i).shape());
                data.push_back(c.input(i).values<T>().data());
            }
            const auto out_shape = detail::broadcast_shapes(shapes, op_type);
            auto y = tensor::for_overwrite(dtype_of<out_t>, out_shape);
            compute_into<T>(data, shapes, out_shape, y.template values<out_t>().data(), a);
            return y;
        }));
    }

    /// The kernel on AD scalar S (docs/ADDING_AN_OP.md, "Derivatives").
    /// Comparisons and logic have none: their output is bool. Integer inputs
    /// give the placeholder.
    template <class S>
        requires(!requires { F::output_dtype; } && !(F::types & spec::types::floating).empty())
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute_all<S>(x, spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    static spec::hints hints() {
        spec::hints h;
        if constexpr (requires { F::range; }) {
            for (std::size_t i = 0; i < 4; ++i) h.range(i, F::range[0], F::range[1]);
        }
        if constexpr (requires { F::rhs_range; }) h.range(1, F::rhs_range[0], F::rhs_range[1]);
        if constexpr (requires { F::hints(h); }) F::hints(h);
        // Ops monotone in each input, or bilinear: the output's enclosure from the inputs' corners.
        if constexpr (requires { F::corner_facts; }) {
            h.facts([](std::span<const spec::value_facts> in, const spec::attribute_map&, std::span<const shape_type>) {
                return std::vector<spec::value_facts>{spec::facts::corners(
                    in, [](double a, double b) { return static_cast<double>(F::apply(a, b, attributes{})); },
                    F::corner_facts == binary::corner_kind::min, F::corner_facts == binary::corner_kind::max)};
            });
        }
        return h;
    }

private:
    /// Y = F(X0, X1, ...) over the broadcast of `shapes` into dst (out_shape's elements).
    template <class T, class Out>
    static void compute_into(const std::vector<const T*>& in, const std::vector<shape_type>& shapes,
                             const shape_type& out_shape, Out* dst, const attributes& attrs) {
        using acc = std::conditional_t<floating_element<T>, std::conditional_t<std::is_same_v<T, double>, double, float>, T>;
        detail::for_each_broadcast_run(shapes, out_shape, [&](std::size_t f, std::size_t len,
                                                               std::span<const std::size_t> base,
                                                               std::span<const std::size_t> step) {
            const T* p0 = in[0] + base[0];
            const std::size_t s0 = step[0];
            if constexpr (requires { F::output_dtype; }) {
                const T* p1 = in[1] + base[1];
                const std::size_t s1 = step[1];
                for (std::size_t i = 0; i < len; ++i) {
                    dst[f + i] = F::apply(static_cast<acc>(p0[i * s0]), static_cast<acc>(p1[i * s1]), attrs);
                }
            } else if (in.size() == 2) {  // the common case, without the variadic loop
                const T* p1 = in[1] + base[1];
                const std::size_t s1 = step[1];
                for (std::size_t i = 0; i < len; ++i) {
                    acc v = F::apply(static_cast<acc>(p0[i * s0]), static_cast<acc>(p1[i * s1]), attrs);
                    if constexpr (requires { F::finish(v, in.size()); }) v = F::finish(v, in.size());
                    dst[f + i] = value_cast<Out>(v);
                }
            } else {
                for (std::size_t i = 0; i < len; ++i) {
                    acc v = static_cast<acc>(p0[i * s0]);
                    for (std::size_t j = 1; j < in.size(); ++j) {
                        v = F::apply(v, static_cast<acc>(in[j][base[j] + i * step[j]]), attrs);
                    }
                    if constexpr (requires { F::finish(v, in.size()); }) v = F::finish(v, in.size());
                    dst[f + i] = value_cast<Out>(v);
                }
            }
        });
    }

    template <class T>
    static auto compute_all(const std::vector<array<T>>& arrays, const attributes& attrs) {
        std::vector<const array<T>*> ptrs;
        for (const auto& x : arrays) ptrs.push_back(&x);
        return compute_n<T>(ptrs, attrs);
    }
    static std::array<double, 2> rhs_range() {
        if constexpr (requires { F::rhs_range; }) {
            return F::rhs_range;
        } else {
            return {-4.0, 4.0};
        }
    }
};

namespace binary {

// The per-element formula comes from ops/formulas.hpp (shared with CUDA).
#define TENSORACLE_BINARY(NAME, OPTYPE, OPSET, TYPES)        \
    struct NAME##_fn : formula::NAME {                        \
        static constexpr std::string_view op_type = OPTYPE;   \
        static constexpr int opset = OPSET;                   \
        static constexpr dtype_set types = TYPES;             \
        static constexpr dtype_set out_types = TYPES;         \
        using attributes = no_attributes;

TENSORACLE_BINARY(add, "Add", 14, types::numeric)
    static constexpr corner_kind corner_facts = corner_kind::plain;
};
TENSORACLE_BINARY(sub, "Sub", 14, types::numeric)
    static constexpr corner_kind corner_facts = corner_kind::plain;
};
TENSORACLE_BINARY(mul, "Mul", 14, types::numeric)
    static constexpr corner_kind corner_facts = corner_kind::plain;
};
TENSORACLE_BINARY(div, "Div", 14, types::numeric)
    template <class V>
    static V apply(V a, V b, const attributes&) {
        if constexpr (std::is_integral_v<V>) {
            if (b == 0) throw error("Div", "integer division by zero");
            if (std::is_signed_v<V> && b == V(-1)) return wrapping_sub(V(0), a);  // INT_MIN / -1 wraps
            return static_cast<V>(a / b);
        } else {
            return formula::div::apply(a, b, attributes{});
        }
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::hinge_rule("|B| > 0", 1, [](double y) { return -std::fabs(y) + 1e-10; })};
    }
    static constexpr std::array<double, 2> rhs_range{1.0, 4.0};
};
struct mod_attr {
    std::int64_t fmod = 0;
};
struct mod_fn {
    static constexpr std::string_view op_type = "Mod";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::numeric;
    static constexpr dtype_set out_types = types::numeric;
    using attributes = mod_attr;
    template <class V>
    static V apply(V a, V b, const attributes& at) {
        if constexpr (std::is_integral_v<V>) {
            if (b == 0) throw error("Mod", "integer modulo by zero");
            if (std::is_signed_v<V> && b == V(-1)) return V(0);
            V r = static_cast<V>(a % b);
            if (at.fmod == 0 && r != 0 && ((r < 0) != (b < 0))) r = static_cast<V>(r + b);
            return r;
        } else {
            if (at.fmod == 0) throw error("Mod", "floating-point inputs require fmod=1");
            return formula::fmod::apply(a, b, at);  // d/da = 1, d/db = -trunc(a/b)
        }
    }
    static constexpr std::array<double, 2> rhs_range{1.0, 5.0};
    static void hints(spec::hints& h) { h.flag("fmod"); }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        return {{c.attr("fmod") == 1, "floating-point inputs require fmod=1"}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::hinge_rule("|B| > 0", 1, [](double y) { return -std::fabs(y) + 1e-10; })};
    }
};
TENSORACLE_BINARY(max, "Max", 13, types::numeric)
    static constexpr corner_kind corner_facts = corner_kind::max;
    static constexpr bool variadic = true;
};
TENSORACLE_BINARY(min, "Min", 13, types::numeric)
    static constexpr corner_kind corner_facts = corner_kind::min;
    static constexpr bool variadic = true;
};
TENSORACLE_BINARY(sum, "Sum", 13, types::floating)
    static constexpr corner_kind corner_facts = corner_kind::plain;
    static constexpr bool variadic = true;
};
TENSORACLE_BINARY(mean, "Mean", 13, types::floating)
    static constexpr bool variadic = true;
    template <class V>
    static V finish(V v, std::size_t n) { return v / static_cast<V>(n); }
};
#undef TENSORACLE_BINARY

// Not differentiable: comparisons and logic have boolean outputs.
#define TENSORACLE_PREDICATE(NAME, OPTYPE, OPSET, TYPES, EXPR) \
    struct NAME##_fn {                                          \
        static constexpr std::string_view op_type = OPTYPE;     \
        static constexpr int opset = OPSET;                     \
        static constexpr dtype_set types = TYPES;               \
        static constexpr dtype_set out_types = types::boolean;  \
        static constexpr dtype output_dtype = dtype::boolean;   \
        using attributes = no_attributes;                       \
        template <class V>                                      \
        static bool apply(V a, V b, const attributes&) {        \
            return EXPR;                                        \
        }                                                       \
    };
TENSORACLE_PREDICATE(equal, "Equal", 13, types::all, a == b)
TENSORACLE_PREDICATE(less, "Less", 13, types::numeric, a < b)
TENSORACLE_PREDICATE(greater, "Greater", 13, types::numeric, a > b)
TENSORACLE_PREDICATE(less_or_equal, "LessOrEqual", 16, types::numeric, a <= b)
TENSORACLE_PREDICATE(greater_or_equal, "GreaterOrEqual", 16, types::numeric, a >= b)
TENSORACLE_PREDICATE(logical_and, "And", 7, types::boolean, a && b)
TENSORACLE_PREDICATE(logical_or, "Or", 7, types::boolean, a || b)
TENSORACLE_PREDICATE(logical_xor, "Xor", 7, types::boolean, a != b)
#undef TENSORACLE_PREDICATE

}  // namespace binary

using Add = broadcast_elementwise<binary::add_fn>;
using Sub = broadcast_elementwise<binary::sub_fn>;
using Mul = broadcast_elementwise<binary::mul_fn>;
using Div = broadcast_elementwise<binary::div_fn>;
using Mod = broadcast_elementwise<binary::mod_fn>;
using Max = broadcast_elementwise<binary::max_fn>;
using Min = broadcast_elementwise<binary::min_fn>;
using Sum = broadcast_elementwise<binary::sum_fn>;
using Mean = broadcast_elementwise<binary::mean_fn>;
using Equal = broadcast_elementwise<binary::equal_fn>;
using Less = broadcast_elementwise<binary::less_fn>;
using Greater = broadcast_elementwise<binary::greater_fn>;
using LessOrEqual = broadcast_elementwise<binary::less_or_equal_fn>;
using GreaterOrEqual = broadcast_elementwise<binary::greater_or_equal_fn>;
using And = broadcast_elementwise<binary::logical_and_fn>;
using Or = broadcast_elementwise<binary::logical_or_fn>;
using Xor = broadcast_elementwise<binary::logical_xor_fn>;

/// Pow(X, Y): X and Y broadcast; Y may have another numeric type (ONNX T1).
/// Same-type operands compute in the accumulator type; mixed ones in double,
/// rounded once to X's type (numpy's promotion, then ONNX's cast to T). On AD
/// scalars both operands are the scalar type; an integer Y is a constant.
struct Pow {
    static constexpr std::string_view op_type = "Pow";
    static constexpr int opset = 15;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::types::floating | spec::types::indices;
    static constexpr spec::dtype_set exponent_types = spec::types::numeric;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"X", types}, {"Y", exponent_types, {}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Z", types}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) { return detail::broadcast_constraints(c, {0, 1}); }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {detail::broadcast_shape(c, {0, 1})}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        std::vector<std::size_t> ranks(rank + 1);
        for (std::size_t r = 0; r <= rank; ++r) ranks[r] = r;
        return {{{out}, ranks}, {exponent_types.members(), ranks}};
    }
    /// The bound on Y * log(X): NNSmith's 40 (keeps later ops' values
    /// moderate), or the log of the largest value X's dtype holds where that
    /// is less (f16 overflows at e^11.1, int32 at e^21.5).
    static double log_limit(dtype d) {
        const auto& i = info(d);
        const double top = i.is_floating ? detail::max_finite(d) : std::ldexp(1.0, i.is_signed ? i.bits - 1 : i.bits) - 1.0;
        return std::min(40.0, std::log(top));
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) {
        // NNSmith, Table 1: X > 0 and Y * log(X) <= 40 keep Pow finite and real.
        // An integer base has no NaN to avoid but must not leave its dtype:
        // 0 is fine unless Y < 0 (a pole), negative bases are left out (a
        // fractional Y makes them NaN, which the cast back makes arbitrary).
        spec::domain_rule zero_base{
            "X = 0 needs Y >= 0 (integer X)",
            [](std::span<const tensor> in) {
                double loss = 0.0;
                if (info(in[0].element_dtype()).is_floating) return loss;
                for_each_pair(in, [&](std::size_t, std::size_t, double x, double y) {
                    if (x == 0.0 && y < 0.0) loss += -y;
                });
                return loss;
            },
            [](std::span<const tensor> in) {  // d/dy = -1 where violated
                std::vector<tensor> g(2);
                if (info(in[0].element_dtype()).is_floating) return g;
                auto gy = array<double>::from_shape(in[1].shape());
                gy.fill(0.0);
                for_each_pair(in, [&](std::size_t, std::size_t j, double x, double y) {
                    if (x == 0.0 && y < 0.0) gy.data()[j] -= 1.0;
                });
                g[1] = tensor(gy);
                return g;
            }};
        zero_base.input_dtypes = types & spec::types::integers;
        return {detail::hinge_rule_for(types & spec::types::floating, "X > 0 (floating X)", 0, [](double x) { return -x + 1e-10; }),
                detail::hinge_rule_for(types & spec::types::integers, "X >= 0 (integer X)", 0, [](double x) { return -x; }),
                std::move(zero_base),
                {"Y * log(X) <= min(40, log of X's largest value)",
                 [](std::span<const tensor> in) {
                     const double limit = log_limit(in[0].element_dtype());
                     double loss = 0.0;
                     for_each_pair(in, [&](std::size_t, std::size_t, double x, double y) {
                         const double h = x > 0 ? y * std::log(x) - limit : 0.0;
                         loss += h > 0 ? h : 0.0;
                     });
                     return loss;
                 },
                 [](std::span<const tensor> in) {  // d/dx = y / x, d/dy = log x where violated
                     const double limit = log_limit(in[0].element_dtype());
                     auto gx = array<double>::from_shape(in[0].shape()), gy = array<double>::from_shape(in[1].shape());
                     gx.fill(0.0);
                     gy.fill(0.0);
                     for_each_pair(in, [&](std::size_t i, std::size_t j, double x, double y) {
                         if (!(x > 0) || !(y * std::log(x) - limit > 0)) return;
                         gx.data()[i] += y / x;
                         gy.data()[j] += std::log(x);
                     });
                     return std::vector<tensor>{tensor(gx), tensor(gy)};
                 }}};
    }
    /// f(offset of X, offset of Y, x, y) over the broadcast pairs of X and Y.
    template <class F>
    static void for_each_pair(std::span<const tensor> in, F f) {
        const auto a = in[0].to<double>(), b = in[1].to<double>();
        std::vector<shape_type> shapes{in[0].shape(), in[1].shape()};
        const auto out = detail::broadcast_shapes(shapes, "Pow domain");
        const auto off = detail::broadcast_offsets(shapes, out);
        for (std::size_t k = 0; k < off[0].size(); ++k) f(off[0][k], off[1][k], a.data()[off[0][k]], b.data()[off[1][k]]);
    }

    template <class T, class E>
    static T apply(T x, E y) {
        if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
            // Integer power by squaring with wrap-around; negative exponents give 0 (or +-1 for +-1 bases).
            if (y < 0) return x == 1 ? T(1) : (x == -1 ? ((y % 2 == 0) ? T(1) : T(-1)) : T(0));
            T result = 1, base = x;
            for (auto e = static_cast<std::uint64_t>(y); e != 0; e >>= 1) {
                if (e & 1u) result = binary::wrapping_mul(result, base);
                base = binary::wrapping_mul(base, base);
            }
            return result;
        } else if constexpr (std::is_same_v<T, E> && floating_element<T>) {
            using acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
            return value_cast<T>(binary::formula::pow::apply(static_cast<acc>(x), static_cast<acc>(y), 0));
        } else if constexpr (ad_scalar<T>) {
            // A constant exponent makes no log(x) term, so x <= 0 keeps a finite derivative.
            return math::pow(x, value_cast<T>(y));
        } else {
            return value_cast<T>(std::pow(value_cast<double>(x), value_cast<double>(y)));
        }
    }

    template <class T, class E>
    static array<T> compute(const array<T>& x, const array<E>& y) {
        static_assert(spec::dtype_accepted<Pow, T>::value);
        std::vector<shape_type> shapes{shape_type(x.shape().begin(), x.shape().end()),
                                       shape_type(y.shape().begin(), y.shape().end())};
        const auto out_shape = detail::broadcast_shapes(shapes, op_type);
        const auto off = detail::broadcast_offsets(shapes, out_shape);
        auto z = array<T>::from_shape(out_shape);
        for (std::size_t f = 0; f < z.size(); ++f) z.data()[f] = apply(x.data()[off[0][f]], y.data()[off[1][f]]);
        return z;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return detail::dispatch<exponent_types>(c.input_dtype(1), op_type, [&](auto e) {
                using E = typename decltype(e)::type;
                return tensor(compute<T, E>(c.input(0).as_array<T>(), c.input(1).as_array<E>()));
            });
        }));
    }
    /// Y counts only when floating, and only when X is (an integer X makes an integer Z).
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        if (!info(c.input_dtype(1)).is_floating) return {0};
        return {0, 1};
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        if (info(c.input_dtype(1)).is_floating) return {compute<S, S>(x[0], x[1])};
        // Integer exponents are exact in double, as in run()'s mixed-type path.
        return {compute<S, double>(x[0], c.input(1).to<double>())};
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.range(0, 0.5, 3.0).range(1, -2.0, 3.0); }
};

/// Where(condition, X, Y): X where condition holds, else Y; all three broadcast.
struct Where {
    static constexpr std::string_view op_type = "Where";
    static constexpr int opset = 16;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"condition", spec::types::boolean, {}, "B"}, {"X", spec::types::all}, {"Y", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return detail::broadcast_constraints(c, {0, 1, 2});
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {detail::broadcast_shape(c, {0, 1, 2})}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(1)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        std::vector<std::size_t> ranks(rank + 1);
        for (std::size_t r = 0; r <= rank; ++r) ranks[r] = r;
        return {{{dtype::boolean}, ranks}, {{out}, ranks}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<bool>& cond, const array<T>& x, const array<T>& y) {
        std::vector<shape_type> shapes{shape_type(cond.shape().begin(), cond.shape().end()),
                                       shape_type(x.shape().begin(), x.shape().end()),
                                       shape_type(y.shape().begin(), y.shape().end())};
        const auto out_shape = detail::broadcast_shapes(shapes, op_type);
        const auto off = detail::broadcast_offsets(shapes, out_shape);
        auto out = array<T>::from_shape(out_shape);
        for (std::size_t f = 0; f < out.size(); ++f) {
            out.data()[f] = cond.data()[off[0][f]] ? x.data()[off[1][f]] : y.data()[off[2][f]];
        }
        return out;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto cond = c.input(0).as_array<bool>();
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(1), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(cond, c.input(1).as_array<T>(), c.input(2).as_array<T>()));
        }));
    }
    /// X and Y are differentiable when floating; the condition is bool.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(1)).is_floating) return {array<S>{}};
        return {compute<S>(c.input(0).as_array<bool>(), x[1], x[2])};
    }
};

/// PRelu(X, slope): slope broadcasts to X (unidirectionally).
struct PRelu {
    static constexpr std::string_view op_type = "PRelu";
    static constexpr int opset = 16;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::types::floating | spec::types::indices;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"X", types}, {"slope", types}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out{{spec::expr(c.rank(1)) <= spec::expr(c.rank(0)), "slope rank <= X rank"}};
        const std::size_t r0 = c.rank(0), r1 = c.rank(1);
        for (std::size_t k = 0; k < r1 && r1 <= r0; ++k) {
            const auto s = c.dim(1, k), x = c.dim(0, r0 - r1 + k);
            out.push_back({s == x || s == 1, "slope broadcasts to X at axis " + std::to_string(r0 - r1 + k)});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        std::vector<std::size_t> ranks(rank + 1);
        for (std::size_t r = 0; r <= rank; ++r) ranks[r] = r;
        return {{{out}, {rank}}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, const array<T>& slope) {
        static_assert(spec::dtype_accepted<PRelu, T>::value);
        std::vector<shape_type> shapes{shape_type(x.shape().begin(), x.shape().end()),
                                       shape_type(slope.shape().begin(), slope.shape().end())};
        const auto off = detail::broadcast_offsets(shapes, shapes[0]);
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t f = 0; f < y.size(); ++f) {
            const T v = x.data()[f];
            if (!(v < T(0))) {
                y.data()[f] = v;
            } else if constexpr (ad_scalar<T>) {
                y.data()[f] = slope.data()[off[1][f]] * v;  // in the scalar type: both factors carry derivatives
            } else {
                y.data()[f] = value_cast<T>(value_cast<double>(slope.data()[off[1][f]]) * value_cast<double>(v));
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>()));
        }));
    }
    /// X and slope are both differentiable (floating T); integer T gives the placeholder.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute<S>(x[0], x[1])};
    }
    // Facts: X >= 0 passes unchanged (the slope never applies); otherwise nothing known.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.range(1, 0.0, 1.0).facts(
            [](std::span<const spec::value_facts> in, const spec::attribute_map&, std::span<const shape_type>) {
                return std::vector<spec::value_facts>{!in.empty() && in[0].lo >= 0.0 ? in[0] : spec::value_facts{}};
            });
    }
};

/// Clip(input, min?, max?): min and max are optional scalars.
struct Clip {
    static constexpr std::string_view op_type = "Clip";
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::types::numeric;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"input", types}, {"min", types, {0, 1}, "T", true}, {"max", types, {0, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", types}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out;
        for (std::size_t i = 1; i < 3; ++i) {
            if (!c.has_input(i) || c.rank(i) == 0) continue;
            out.push_back({c.dim(i, 0) == 1, "min and max are single values"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        return {{{out}, {rank}}, {{out}, {0, 1}}, {{out}, {0, 1}}};  // min, max: a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, std::optional<T> lo, std::optional<T> hi) {
        static_assert(spec::dtype_accepted<Clip, T>::value);
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t f = 0; f < y.size(); ++f) {
            T v = x.data()[f];
            if (lo && v < *lo) v = *lo;
            if (hi && *hi < v) v = *hi;
            y.data()[f] = v;
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            auto bound = [&](std::size_t i) -> std::optional<T> {
                if (!c.has_input(i)) return std::nullopt;
                return c.input(i).values<T>()[0];
            };
            return tensor(compute<T>(c.input(0).as_array<T>(), bound(1), bound(2)));
        }));
    }
    /// Input, min and max (when present) are differentiable: a clipped element takes the bound's derivative.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        auto bound = [&](std::size_t i) -> std::optional<S> {
            if (!c.has_input(i)) return std::nullopt;
            return x[i].data()[0];
        };
        return {compute<S>(x[0], bound(1), bound(2))};
    }
    // Facts: min(max(x, lo), hi) is monotone in each input (an absent bound counts as unknown).
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.range(0, -5, 5).range(1, -3, -1).range(2, 1, 3).facts(
            [](std::span<const spec::value_facts> in, const spec::attribute_map&, std::span<const shape_type>) {
                if (in.empty()) return std::vector<spec::value_facts>{spec::value_facts{}};
                const spec::value_facts none;
                const auto& a = in.size() > 1 ? in[1] : none;
                const auto& b = in.size() > 2 ? in[2] : none;
                return std::vector<spec::value_facts>{spec::value_facts::within(
                    std::min(std::max(in[0].lo, a.lo), b.lo), std::min(std::max(in[0].hi, a.hi), b.hi))};
            });
    }
};

struct cast_attr {
    std::int64_t to = 1;
    static constexpr std::array<std::string_view, 1> required{"to"};
};

/// Cast(input) to the dtype named by attribute `to` (value_cast semantics:
/// float->int truncates and saturates, NaN->0; int->int wraps). ONNX leaves a
/// float outside the integer target's range undefined: the domain keeps it in.
struct Cast {
    static constexpr std::string_view op_type = "Cast";
    static constexpr int opset = 13;
    using attributes = cast_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all, {}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {}, "T2"}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        return {dtype_from_onnx(static_cast<int>(spec::parse_attributes<attributes>(c.attributes(), op_type).to))};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype, std::size_t rank) {
        return {{spec::types::all.members(), {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& a) {
        const auto to = dtype_from_onnx(static_cast<int>(spec::parse_attributes<attributes>(a, op_type).to));
        auto rule = detail::cast_range_rule([to](std::span<const tensor>) { return to; });
        // For the generator: the range, where it knows the input is floating (integer inputs wrap, no rule).
        if (const auto b = detail::integer_cast_bounds(to)) {
            rule.elementwise_input = 0;
            rule.elementwise_at_limit = [lo = b->first, hi = b->second](double x, double) { return std::max(x - hi, lo - x); };
        }
        return {rule};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return {c.input(0).cast(output_dtypes(c)[0])}; }
    /// Only float -> float casts have a derivative (1: the cast is the identity up to rounding).
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (info(c.input_dtype(0)).is_floating && info(output_dtypes(c)[0]).is_floating) return {0};
        return {};
    }
    /// float -> float: the input plus the constant rounding error, so that values are run()'s and the
    /// derivative is 1. Integer or bool -> float: constants. -> integer or bool: the placeholder.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const dtype to = output_dtypes(c)[0];
        if (!info(to).is_floating) return {array<S>{}};
        const auto rounded = c.input(0).cast(to).to<double>();
        auto y = array<S>::from_shape(rounded.shape());
        for (std::size_t i = 0; i < y.size(); ++i) {
            const double r = rounded.data()[i];
            if (!info(c.input_dtype(0)).is_floating) {
                y.data()[i] = value_cast<S>(r);
                continue;
            }
            const S& v = x[0].data()[i];
            const double p = static_cast<double>(primal(v));
            // r - p is exact (Sterbenz: r is p rounded); equal values, infinities and NaN pass v unchanged.
            y.data()[i] = (r == p || std::isnan(r)) ? v : v + value_cast<S>(r - p);
        }
        return {y};
    }
    // Facts: to a floating dtype they carry over (0 and 1 stay 0 and 1; ranges hold
    // up to rounding); to an integer one they are truncated ([0.2, 0.8] becomes 0);
    // to bool, x != 0. The generator narrows them to the target dtype's range.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(cast_facts).dtype_attribute("to").range(0, -100, 100);
    }
    static std::vector<spec::value_facts> cast_facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                     std::span<const shape_type>) {
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        const auto to = dtype_from_onnx(static_cast<int>(spec::parse_attributes<attributes>(attrs, op_type).to));
        if (info(to).is_floating) return {x};
        if (to == dtype::boolean) return {spec::facts::image(x, [](double v) { return v != 0.0 ? 1.0 : 0.0; })};
        return {spec::facts::image(x, [](double v) { return std::trunc(v); })};
    }
};

inline constexpr auto binary_ops =
    hana::tuple_t<Add, Sub, Mul, Div, Pow, Mod, Max, Min, Sum, Mean, Equal, Less, Greater, LessOrEqual,
                  GreaterOrEqual, And, Or, Xor, Where, PRelu, Clip, Cast>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::binary::mod_attr, fmod);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::cast_attr, to);
// ---- end tensoracle/ops/binary.hpp ----
// ---- begin tensoracle/ops/misc.hpp ----
// tensoracle: constants, casts and small index ops: Constant, CastLike,
// Dropout (inference), CumSum, EyeLike, OneHot, TopK.

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

namespace misc {
inline std::vector<spec::expr> constant_shape(const shape_type& s) {
    std::vector<spec::expr> out;
    for (const auto d : s) out.emplace_back(d);
    return out;
}
inline std::vector<std::size_t> all_ranks(std::size_t max_rank) {
    std::vector<std::size_t> r(max_rank + 1);
    std::iota(r.begin(), r.end(), std::size_t{0});
    return r;
}
}  // namespace misc

struct constant_attr {
    std::optional<tensor> value;
    std::optional<float> value_float;
    std::optional<std::vector<float>> value_floats;
    std::optional<std::int64_t> value_int;
    std::optional<std::vector<std::int64_t>> value_ints;
    std::optional<std::string> value_string;                // valid ONNX, unsupported here
    std::optional<std::vector<std::string>> value_strings;  // valid ONNX, unsupported here
};

/// Constant: exactly one of value, value_float(s), value_int(s). String values
/// are valid ONNX but outside the kit's dtypes (unsupported_error); sparse
/// values are not parsed.
// Not differentiable: no inputs, the output is the attribute's value.
struct Constant {
    static constexpr std::string_view op_type = "Constant";
    static constexpr int opset = 13;
    using attributes = constant_attr;
    static constexpr std::array<spec::value_spec, 0> inputs{};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    static tensor value_of(const attributes& a) {
        if (a.value_string || a.value_strings) {
            throw unsupported_error(std::string(op_type), "string constants are not supported");
        }
        const int given = (a.value ? 1 : 0) + (a.value_float ? 1 : 0) + (a.value_floats ? 1 : 0) + (a.value_int ? 1 : 0) +
                          (a.value_ints ? 1 : 0);
        if (given != 1) {
            throw error(std::string(op_type), "exactly one of value, value_float, value_floats, value_int, value_ints "
                                              "must be set, got " + std::to_string(given));
        }
        if (a.value) return *a.value;
        if (a.value_float) return tensor(array<float>(*a.value_float));
        if (a.value_int) return tensor(array<std::int64_t>(*a.value_int));
        if (a.value_floats) {
            auto t = array<float>::from_shape({a.value_floats->size()});
            std::copy(a.value_floats->begin(), a.value_floats->end(), t.data());
            return tensor(t);
        }
        return detail::int64_tensor(*a.value_ints);
    }
    template <int = 0>
    static attributes attrs(const spec::context& c) { return spec::parse_attributes<attributes>(c.attributes(), op_type); }

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        (void)value_of(attrs(c));
        return {};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        return {misc::constant_shape(value_of(attrs(c)).shape())};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {value_of(attrs(c)).element_dtype()}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype, std::size_t) { return {}; }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return {value_of(attrs(c))}; }
    template <int = 0>
    static spec::hints hints() {
        spec::hints h;
        for (const char* k : {"value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings"}) h.omit(k);
        // value: of the placeholder's dtype and shape when inserted backward, else a small random tensor.
        return h.tensor_attribute("value", [](rng& g, std::optional<dtype> d, const std::optional<shape_type>& s) {
            const dtype dt = d ? *d : detail::pick_dtype(g, spec::types::all);
            return spec::random_values(g, dt, s ? *s : detail::random_shape(g, 0, 3), -5, 5);
        });
    }
};

/// CastLike(input, target_type): Cast to target_type's dtype.
struct CastLike {
    static constexpr std::string_view op_type = "CastLike";
    static constexpr int opset = 15;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all, {}, "T1"}, {"target_type", spec::types::all, {}, "T2"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {}, "T2"}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(1)}; }
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
    /// input only: target_type gives its dtype, not its values.
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        return {0};
    }
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

struct dropout_attr {
    std::optional<std::int64_t> seed;
};

/// Dropout in inference mode: output = data, mask = all true. Training mode
/// with a nonzero ratio is random and not supported (an error says so).
struct Dropout {
    static constexpr std::string_view op_type = "Dropout";
    static constexpr int opset = 13;
    using attributes = dropout_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"data", spec::types::floating},
                                                             {"ratio", spec::types::ieee_floating, {0, 0}, "T1", true},
                                                             {"training_mode", spec::types::boolean, {0, 0}, "T2", true}}};
    static constexpr std::array<spec::value_spec, 2> outputs{
        {{"output", spec::types::floating}, {"mask", spec::types::boolean, {}, "T2"}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0), c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0), dtype::boolean}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out)) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    static void check_inference(const spec::context& c) {
        const bool training = c.has_input(2) && c.input(2).values<bool>()[0];
        const double ratio = c.has_input(1) ? c.input(1).value_as_double(0) : 0.5;
        if (training && ratio != 0.0) {
            throw unsupported_error(std::string(op_type), "training mode with a nonzero ratio is random and not supported");
        }
    }
    /// data only: ratio and training_mode select the mode, they are not data.
    static std::vector<std::size_t> differentiable_inputs(const spec::context&) { return {0}; }
    /// The kernel on AD scalar S: the identity on data; mask (bool) is a placeholder.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        check_inference(c);
        return {x[0], array<S>{}};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        check_inference(c);
        auto mask = array<bool>::from_shape(c.input(0).shape());
        std::fill(mask.begin(), mask.end(), true);
        return {c.input(0), tensor(mask)};
    }
    template <int = 0>
    static spec::hints hints() {
        // Inference mode: ratio in [0, 0.9), training_mode false (training is random, not supported).
        return spec::hints{}
            .omit("seed")
            .after_solving(1, [](rng& g, const spec::context&, dtype d, const shape_type& s) {
                return spec::random_values(g, d, s, 0.0, 0.9);
            })
            .after_solving(2, [](rng&, const spec::context&, dtype d, const shape_type& s) { return tensor::zeros(d, s); });
    }
};

struct cumsum_attr {
    std::int64_t exclusive = 0;
    std::int64_t reverse = 0;
};

/// CumSum(x, axis): running sums along axis (exclusive: without the element
/// itself; reverse: from the end). Integer sums wrap.
struct CumSum {
    static constexpr std::string_view op_type = "CumSum";
    static constexpr int opset = 14;
    using attributes = cumsum_attr;
    static constexpr spec::dtype_set types =
        spec::types::floating | spec::dtypes_of(dtype::i32, dtype::i64);
    static constexpr std::array<spec::value_spec, 2> inputs{{{"x", types, {1, 8}}, {"axis", spec::types::indices, {0, 1}, "T2"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"y", types}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto r = static_cast<std::int64_t>(c.rank(0));
        const auto axis = c.values(1);
        std::vector<spec::constraint> out{{spec::expr(axis.size()) == 1, "axis is a single value"}};
        if (axis.size() == 1) out.push_back({axis[0] >= -r && axis[0] < r, "axis in [-rank, rank)"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {spec::types::indices.members(), {0, 1}}};  // axis: i32/i64, a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, std::size_t axis, const attributes& a) {
        static_assert(spec::dtype_accepted<CumSum, T>::value);
        // f16/bf16/f32 in float, f64 in double; integers and AD scalars in themselves.
        using acc = std::conditional_t<floating_element<T>, std::conditional_t<std::is_same_v<T, double>, double, float>, T>;
        const shape_type s(x.shape().begin(), x.shape().end());
        const auto st = detail::strides_of(s);
        auto y = array<T>::from_shape(s);
        const std::size_t n = s[axis], stride = st[axis];
        for (std::size_t base = 0; base < x.size(); ++base) {
            if ((base / stride) % n != 0) continue;  // start of a line along axis
            acc running = acc(0);
            for (std::size_t j = 0; j < n; ++j) {
                const std::size_t k = a.reverse != 0 ? n - 1 - j : j;
                const std::size_t f = base + k * stride;
                const acc v = static_cast<acc>(x.data()[f]);
                if (a.exclusive == 0) running = add(running, v);
                y.data()[f] = value_cast<T>(running);
                if (a.exclusive != 0) running = add(running, v);
            }
        }
        return y;
    }
    template <class V>
    static V add(V a, V b) {
        if constexpr (std::is_integral_v<V>) {
            return static_cast<V>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
        } else {
            return a + b;
        }
    }
    static std::size_t axis_of(const spec::context& c) {
        return spec::normalize_axis(c.input(1).to<std::int64_t>().data()[0], c.rank(0), op_type);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = axis_of(c);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), axis, a));
        }));
    }
    /// The kernel on AD scalar S; integer sums have no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = axis_of(c);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute<S>(x[0], axis, a)};
    }
    template <int = 0>
    static spec::hints hints() {
        // An exclusive sum starts every row at 0.
        return spec::hints{}.flag("exclusive").flag("reverse").facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type>) {
                spec::value_facts out;
                if (spec::parse_attributes<attributes>(attrs, op_type).exclusive != 0) out.force(0.0);
                return std::vector<spec::value_facts>{out};
            });
    }
};

struct eye_like_attr {
    std::optional<std::int64_t> dtype;
    std::int64_t k = 0;
};

/// EyeLike(input): a 2-D tensor of input's shape with ones on diagonal k.
// Not differentiable: the output is 0/1 by position; the input gives only its shape.
struct EyeLike {
    static constexpr std::string_view op_type = "EyeLike";
    static constexpr int opset = 9;
    using attributes = eye_like_attr;
    static constexpr spec::dtype_set types = spec::types::ieee_floating | spec::types::integers | spec::types::boolean;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", types, {2, 2}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", types, {2, 2}, "T2"}}};
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return {a.dtype ? dtype_from_onnx(static_cast<int>(*a.dtype)) : c.input_dtype(0)};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (rank != 2 || !types.contains(out)) return {};
        return {{types.members(), {2}}};  // the output dtype comes from `dtype`, not the input
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto k = spec::parse_attributes<attributes>(c.attributes(), op_type).k;
        const auto s = c.input(0).shape();
        auto out = tensor::zeros(output_dtypes(c)[0], s);
        out.visit([&](auto v) {
            using T = typename decltype(v)::value_type;
            for (std::size_t i = 0; i < s[0]; ++i) {
                const std::int64_t j = static_cast<std::int64_t>(i) + k;
                if (j >= 0 && j < static_cast<std::int64_t>(s[1])) v[i * s[1] + static_cast<std::size_t>(j)] = value_cast<T>(1);
            }
        });
        return detail::single_output(std::move(out));
    }
    template <int = 0>
    static spec::hints hints() {
        // Zeros off the diagonal (every matrix but 1 x 1), ones on it (where k keeps it inside).
        return spec::hints{}.dtype_attribute("dtype", 0.5).range(0, 0, 3).facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                spec::value_facts out = spec::value_facts::within(0.0, 1.0);
                if (shapes.empty() || shapes[0].size() != 2) return std::vector<spec::value_facts>{out};
                const auto rows = static_cast<std::int64_t>(shapes[0][0]), cols = static_cast<std::int64_t>(shapes[0][1]);
                const std::int64_t k = spec::parse_attributes<attributes>(attrs, op_type).k;
                if (k <= -rows || k >= cols) return std::vector<spec::value_facts>{spec::value_facts::constant(0.0)};  // no diagonal
                if (rows * cols != 1) out.force(0.0);
                out.force(1.0);
                return std::vector<spec::value_facts>{out};
            });
    }
};

struct one_hot_attr {
    std::int64_t axis = -1;
};

/// OneHot(indices, depth, values): values[1] where the index (negative counts
/// from depth) matches, values[0] elsewhere; out-of-range indices match nothing.
struct OneHot {
    static constexpr std::string_view op_type = "OneHot";
    // OneHot-11's schema lists no bfloat16.
    static constexpr spec::dtype_set onnx11_numeric = spec::types::ieee_floating | spec::types::integers;
    static constexpr spec::dtype_set onnx11_all = onnx11_numeric | spec::types::boolean;
    static constexpr int opset = 11;
    using attributes = one_hot_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"indices", onnx11_numeric, {1, 7}, "T1"},
                                                             {"depth", onnx11_numeric, {0, 1}, "T2"},
                                                             {"values", onnx11_all, {1, 1}, "T3"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", onnx11_all, {}, "T3"}}};
    static std::int64_t depth_of(const spec::context& c) {
        if (c.input(1).size() != 1) throw shape_error(std::string(op_type), "depth must hold one value");
        const double d = c.input(1).value_as_double(0);
        if (!(d >= 1.0 && d <= 1e9)) throw error(std::string(op_type), "depth must be a positive count, got " + std::to_string(d));
        return static_cast<std::int64_t>(d);
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto r = static_cast<std::int64_t>(c.rank(0)) + 1;
        const auto axis = c.attr("axis");
        return {{axis >= -r && axis < r, "axis in [-(rank+1), rank+1)"}, {c.dim(2, 0) == 2, "values holds [off, on]"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        // Output axis j is depth where j is the (normalized) axis, else the input
        // dim j (before the axis) or j - 1 (after it).
        const auto s = c.shape(0);
        const auto R = static_cast<std::int64_t>(s.size()) + 1;
        const auto a = c.attr("axis");
        const auto axis = select(a < 0, a + R, a);
        const spec::expr depth(depth_of(c));
        std::vector<spec::expr> out;
        for (std::int64_t j = 0; j < R; ++j) {
            const auto ju = static_cast<std::size_t>(j);
            const spec::expr before = ju < s.size() ? s[ju] : spec::expr(0), after = j >= 1 ? s[ju - 1] : spec::expr(0);
            out.push_back(select(axis == j, depth, select(spec::expr(j) < axis, before, after)));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(2)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (rank == 0) return {};
        // indices and depth: any numeric type (ONNX's T1, T2); depth a scalar or one value.
        if (!onnx11_all.contains(out)) return {};
        return {{onnx11_numeric.members(), {rank - 1}}, {onnx11_numeric.members(), {0, 1}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    /// The output shape, and per output element (row-major) whether it holds
    /// values[1] (on) rather than values[0] (off).
    struct layout {
        shape_type shape;
        std::vector<bool> on;
    };
    static layout layout_of(const spec::context& c) {
        const auto depth = depth_of(c);
        const auto in_shape = c.input(0).shape();
        const auto axis = spec::normalize_axis(std::get<std::int64_t>(c.attributes().at("axis")), in_shape.size() + 1, op_type);
        layout l;
        l.shape = in_shape;
        l.shape.insert(l.shape.begin() + static_cast<std::ptrdiff_t>(axis), static_cast<std::size_t>(depth));
        const auto idx = c.input(0).to<double>();
        const std::size_t outer = element_count(std::span(in_shape).first(axis));
        const std::size_t inner = element_count(std::span(in_shape).subspan(axis));
        l.on.resize(element_count(l.shape));
        for (std::size_t o = 0; o < outer; ++o) {
            for (std::size_t d = 0; d < static_cast<std::size_t>(depth); ++d) {
                for (std::size_t i = 0; i < inner; ++i) {
                    double want = std::trunc(idx.data()[o * inner + i]);
                    if (want < 0) want += static_cast<double>(depth);
                    l.on[(o * static_cast<std::size_t>(depth) + d) * inner + i] = want == static_cast<double>(d);
                }
            }
        }
        return l;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto l = layout_of(c);
        auto out = tensor::zeros(c.input_dtype(2), l.shape);
        out.visit([&](auto v) {
            using T = typename decltype(v)::value_type;
            const auto vals = c.input(2).values<T>();
            for (std::size_t f = 0; f < v.size(); ++f) v[f] = l.on[f] ? vals[1] : vals[0];
        });
        return detail::single_output(std::move(out));
    }
    /// values only (when floating): indices and depth pick positions, which
    /// is piecewise constant in them.
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(2)).is_floating) return {};
        return {2};
    }
    /// The kernel on AD scalar S: each output element is values[0] or
    /// values[1]; non-floating values have no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(2)).is_floating) return {array<S>{}};
        const auto l = layout_of(c);
        auto y = array<S>::from_shape(l.shape);
        for (std::size_t f = 0; f < y.size(); ++f) y.data()[f] = x[2].data()[l.on[f] ? 1 : 0];
        return {y};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .before_solving(1, [](rng& g, const spec::context& c) {  // depth: a small count
                auto t = tensor::zeros(dtype::i64, g.bernoulli(0.5) ? shape_type{} : shape_type{1});
                t.values<std::int64_t>()[0] = g.integer(1, 8);
                return t.cast(c.input_dtype(1));
            })
            .after_solving(0, [](rng& g, const spec::context& c, dtype d, const shape_type& s) {
                const double depth = static_cast<double>(depth_of(c));  // indices in [-depth, depth]: some miss
                return spec::random_values(g, d, s, -depth, depth + 1);
            });
    }
};

struct top_k_attr {
    std::int64_t axis = -1;
    std::int64_t largest = 1;
    std::int64_t sorted = 1;
};

/// TopK(X, K): the K largest (or smallest) elements along axis and their
/// indices; ties keep the lower index first (ONNX's stable rule). Results
/// are always sorted, which also satisfies sorted=0.
struct TopK {
    static constexpr std::string_view op_type = "TopK";
    static constexpr int opset = 11;
    using attributes = top_k_attr;
    static constexpr spec::dtype_set types = spec::types::ieee_floating | spec::types::integers;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"X", types, {1, 8}}, {"K", spec::types::int64, {1, 1}, "I"}}};
    static constexpr std::array<spec::value_spec, 2> outputs{{{"Values", types}, {"Indices", spec::types::int64, {}, "I"}}};
    /// X's dims with the one at `axis` (symbolic, possibly negative) replaced by K.
    static std::vector<spec::expr> with_k(const spec::context& c) {
        auto s = c.shape(0);
        const auto r = static_cast<std::int64_t>(s.size());
        const auto axis = c.attr("axis");
        const auto k = c.value(1, 0);
        for (std::size_t a = 0; a < s.size(); ++a) {
            const auto ai = static_cast<std::int64_t>(a);
            s[a] = select(axis == ai || axis == ai - r, k, s[a]);
        }
        return s;
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto r = static_cast<std::int64_t>(c.rank(0));
        const auto axis = c.attr("axis");
        std::vector<spec::constraint> out{{axis >= -r && axis < r, "axis in [-rank, rank)"},
                                          {c.dim(1, 0) == 1, "K holds one value"}};
        if (c.element_count(1) == 1) {
            const auto k = c.value(1, 0);
            auto dim = c.dim(0, 0);
            for (std::size_t a = 1; a < c.rank(0); ++a) dim = select(axis == static_cast<std::int64_t>(a) || axis == static_cast<std::int64_t>(a) - r, c.dim(0, a), dim);
            out.push_back({k >= 0 && k <= dim, "0 <= K <= X.shape[axis]"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto s = with_k(c);
        return {s, s};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0), dtype::i64}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    /// Values and Indices of the k largest (or smallest) elements of x along axis.
    template <class T>
    static std::pair<array<T>, array<std::int64_t>> compute(const array<T>& x, std::size_t axis, std::size_t k,
                                                            const attributes& a) {
        static_assert(spec::dtype_accepted<TopK, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        if (axis >= s.size() || k > s[axis]) {
            throw shape_error(std::string(op_type), "axis must be < rank and K <= X.shape[axis]");
        }
        shape_type out_shape = s;
        out_shape[axis] = k;
        const auto st = detail::strides_of(s);
        const std::size_t n = s[axis], stride = st[axis];
        auto indices = array<std::int64_t>::from_shape(out_shape);
        const auto ost = detail::strides_of(out_shape);
        auto out = array<T>::from_shape(out_shape);
        std::vector<std::size_t> order(n);
        for (std::size_t base = 0; base < x.size(); ++base) {
            if ((base / stride) % n != 0) continue;
            std::iota(order.begin(), order.end(), std::size_t{0});
            std::stable_sort(order.begin(), order.end(), [&](std::size_t p, std::size_t q) {
                const T& xp = x.data()[base + p * stride];
                const T& xq = x.data()[base + q * stride];
                return a.largest != 0 ? xq < xp : xp < xq;
            });
            // Output line start: same outer/inner position with axis index 0.
            const std::size_t outer = base / (stride * n), inner = base % stride;
            const std::size_t obase = outer * ost[axis] * k + inner;
            for (std::size_t j = 0; j < k; ++j) {
                out.data()[obase + j * ost[axis]] = x.data()[base + order[j] * stride];
                indices.data()[obase + j * ost[axis]] = static_cast<std::int64_t>(order[j]);
            }
        }
        return {std::move(out), std::move(indices)};
    }
    static std::size_t k_of(const spec::context& c) {
        return static_cast<std::size_t>(c.input(1).values<std::int64_t>()[0]);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = spec::normalize_axis(a.axis, c.input(0).shape().size(), op_type);
        const auto k = k_of(c);
        return detail::dispatch<types, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            auto [values, indices] = compute<T>(c.input(0).as_array<T>(), axis, k, a);
            return std::vector<tensor>{tensor(values), tensor(indices)};
        });
    }
    /// The kernel on AD scalar S: Values carry the derivatives of the selected
    /// elements; Indices (int64) is a placeholder taken from run(). An integer
    /// X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto axis = spec::normalize_axis(a.axis, c.input(0).shape().size(), op_type);
        const auto k = k_of(c);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}, array<S>{}};
        return {compute<S>(x[0], axis, k, a).first, array<S>{}};
    }
    // sorted=0 leaves the order of the k outputs to the implementation: such a case has no
    // single right answer to compare a backend with, so generated cases keep the default.
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(facts).flag("largest").omit("sorted").range(0, -50, 50); }
    /// Values: some of X's elements. Indices: in [0, n - 1] along the axis;
    /// when X is one value repeated, ties go to the lowest indices, so with
    /// k >= 1 every slice holds index 0 (Mod by those indices divides by 0).
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type> shapes) {
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        if (shapes.empty() || shapes[0].empty()) return {x.range_only(), spec::value_facts{}};
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        const std::size_t axis = spec::normalize_axis(a.axis, shapes[0].size(), op_type);
        const auto n = static_cast<double>(shapes[0][axis]);
        auto indices = spec::value_facts::within(0.0, std::max(n - 1.0, 0.0));
        const bool one_value = x.lo == x.hi && std::isfinite(x.lo);
        const bool some_k = in.size() > 1 && in[1].lo >= 1.0;
        if (one_value && some_k) indices.force(0.0);
        return {x.range_only(), indices};
    }
};

inline constexpr auto misc_ops = hana::tuple_t<Constant, CastLike, Dropout, CumSum, EyeLike, OneHot, TopK>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::constant_attr, value, value_float, value_floats, value_int, value_ints,
                        value_string, value_strings);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::dropout_attr, seed);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::cumsum_attr, exclusive, reverse);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::eye_like_attr, dtype, k);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::one_hot_attr, axis);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::top_k_attr, axis, largest, sorted);
// ---- end tensoracle/ops/misc.hpp ----
// ---- begin tensoracle/ops/nn.hpp ----
// tensoracle: MatMul, Gemm, convolutions, pooling, LRN, Resize and Upsample.
//
// Shapes and validity are written once over spec::expr (nn_util.hpp): the
// specs' constraints and output shapes use input dims and int attributes as
// symbols, and each typed kernel evaluates the very same expressions on
// constants (with the same constraint messages), so a kernel called directly
// with bad arguments throws shape_error naming the op and the reason.
//
// Semantics chosen where ONNX leaves room:
// - Float kernels accumulate in float for f16/bf16/f32 and in double for f64,
//   and round once. Integer MatMul/Gemm products wrap (two's complement);
//   integer Gemm applies alpha/beta in double and converts with value_cast.
// - run_real runs the same float kernels on AD scalars (ad/), which accumulate
//   in themselves. Max pools and Resize's nearest mode pass the derivative of
//   the selected element; Resize's weights depend on coordinates only, so
//   roi and scales are not differentiable inputs.
// - Pools: explicit pads must be smaller than the kernel (as onnxruntime
//   enforces). With ceil_mode, a last window that would start in the end
//   padding is dropped (PyTorch, ONNX reference >= 1.16; ONNX 1.12 keeps it,
//   the 1.12 test data never reaches the difference). A window that covers
//   only padding (possible with large dilations) is an error, not -inf/NaN.
// - MaxPool produces both outputs: Y and Indices (flat index into X of the
//   first maximum; NaN propagates; storage_order=1 makes the spatial part
//   column-major, as onnxruntime and the ONNX test data do).
// - Conv/pools: `pads` together with auto_pad != NOTSET is a violation (ONNX
//   shape inference rejects it). SAME_UPPER puts the odd pad at the end,
//   SAME_LOWER at the beginning.
// - ConvTranspose: with output_shape (or SAME_*), total padding is
//   max(0, s*(x-1) + output_padding + d*(k-1)+1 - out), split as the ONNX doc
//   says (SAME_UPPER: begin = total/2; otherwise begin = total - total/2);
//   output positions beyond the full result receive only the bias.
// - Resize follows the ONNX 1.12 reference implementation (the one that made
//   the test data): the coordinate transforms use length_resized =
//   scale * length_original as a real number, taps are picked from the
//   edge-padded input, exclude_outside renormalizes the weights inside X
//   (kept edge-clamped when no weight is left inside); with scales, the
//   output size is floor(x * scale) (roi does not scale it). Only floating X.
// - Upsample-9 is Resize with asymmetric coordinates, nearest_mode floor
//   (nearest) or linear, scales >= 1.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

// ---- begin tensoracle/ops/detail/nn_util.hpp ----
// tensoracle: helpers of the neural-network op family (ops/nn.hpp): sliding-
// window geometry written once over spec::expr, so the same formulas give the
// symbolic constraints and output shapes of a spec (dims are symbols) and the
// concrete sizes and pads its kernel loops over (dims are constants, folded
// with int64 overflow checks by expr itself), plus N-D index helpers.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <span>
#include <vector>


namespace tensoracle::ops::detail::nn {

using spec::constraint;
using spec::expr;

/// Float accumulation for f16/bf16/f32, double for f64 (ONNX reference kernels).
/// AD scalars accumulate in themselves: a float accumulator would drop their derivatives.
template <class T>
using float_acc_t =
    std::conditional_t<ad_scalar<T>, T, std::conditional_t<std::is_same_v<T, double>, double, float>>;

/// Constant expressions of concrete dims.
template <class Range>
std::vector<expr> constants(const Range& r) {
    std::vector<expr> out;
    for (const auto v : r) {
        if constexpr (std::is_signed_v<std::decay_t<decltype(v)>>) {
            out.emplace_back(static_cast<std::int64_t>(v));
        } else {
            out.emplace_back(static_cast<std::size_t>(v));
        }
    }
    return out;
}

/// The value of a constant expression (every symbol already folded away).
inline std::int64_t value(const expr& e) { return e.eval({}); }

/// Checks constraints whose expressions are all constants (a kernel called
/// directly, outside spec::evaluate): the same message as check_constraints.
inline void check_constant(std::string_view op_type, const std::vector<constraint>& cs) {
    for (const auto& k : cs) {
        if (k.condition.eval({}) != 0) continue;
        throw shape_error(std::string(op_type), "constraint violated: " + k.condition.to_string() + " (" + k.reason + ")");
    }
}

enum class auto_pad_mode : std::uint8_t { notset, same_upper, same_lower, valid };

inline auto_pad_mode parse_auto_pad(std::string_view s, std::string_view op_type) {
    if (s == "NOTSET") return auto_pad_mode::notset;
    if (s == "SAME_UPPER") return auto_pad_mode::same_upper;
    if (s == "SAME_LOWER") return auto_pad_mode::same_lower;
    if (s == "VALID") return auto_pad_mode::valid;
    throw error(std::string(op_type),
                "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '" + std::string(s) + "'");
}

/// An ints attribute as given, or n copies of its default when absent (empty).
inline std::vector<expr> or_default(const std::vector<expr>& given, std::size_t n, std::int64_t dflt) {
    return given.empty() ? std::vector<expr>(n, expr(dflt)) : given;
}

/// Adds "attribute has `want` values" when it is given; false when that fails.
inline bool check_length(std::vector<constraint>& cs, const std::vector<expr>& given, std::size_t want,
                         const std::string& name, const std::string& what) {
    if (given.empty()) return true;
    cs.push_back({spec::list_length(given) == expr(want), name + " has " + what});
    return given.size() == want;
}

/// Input of the forward sliding-window geometry (Conv, MaxPool, AveragePool):
/// spatial dims of X and of the kernel, and the ints attributes as given.
struct window_spec {
    std::vector<expr> x;          // spatial input dims
    std::vector<expr> kernel;     // spatial kernel dims
    std::vector<expr> strides;    // empty: all 1
    std::vector<expr> dilations;  // empty: all 1
    std::vector<expr> pads;       // empty: all 0; [b_1..b_n, e_1..e_n]
    auto_pad_mode auto_pad = auto_pad_mode::notset;
    expr ceil_mode = 0;           // pools only: nonzero rounds the output size up
    bool pads_below_kernel = false;  // pools: every window overlaps the (unpadded) input
};

/// Output of the geometry: validity constraints, and per spatial axis the
/// output size and the (possibly computed) begin / end pads.
struct window_geometry {
    std::vector<constraint> constraints;
    bool lengths_ok = true;  // false: a length constraint fails; the rest is empty
    std::vector<expr> out, pad_begin, pad_end, stride, dilation;
};

/// ONNX Conv / pool output sizes, per spatial axis (dk = d*(k-1)+1):
///   NOTSET: out = (x + pb + pe - dk) / s + 1    (ceil_mode: rounded up, and a
///           last window that would start in the end padding is dropped, as in
///           PyTorch and the ONNX >= 1.16 reference)
///   VALID:  pads 0, out = (x - dk) / s + 1
///   SAME_*: out = ceil(x / s), total pad = max(0, (out-1)*s + dk - x), split
///           evenly with the odd one at the end (UPPER) or the beginning (LOWER).
inline window_geometry forward_window(const window_spec& w) {
    window_geometry g;
    const std::size_t n = w.x.size();
    auto& cs = g.constraints;
    // Every check runs (no short-circuit), so all length constraints are recorded.
    const bool strides_ok = check_length(cs, w.strides, n, "strides", "one value per spatial axis");
    const bool dilations_ok = check_length(cs, w.dilations, n, "dilations", "one value per spatial axis");
    const bool pads_ok = check_length(cs, w.pads, 2 * n, "pads", "a begin and an end value per spatial axis");
    g.lengths_ok = strides_ok && dilations_ok && pads_ok;
    if (!g.lengths_ok) return g;
    if (w.auto_pad != auto_pad_mode::notset && !w.pads.empty()) {
        cs.push_back({expr(0), "pads cannot be given together with auto_pad other than NOTSET"});
        g.lengths_ok = false;
        return g;
    }
    const auto s = or_default(w.strides, n, 1), d = or_default(w.dilations, n, 1), p = or_default(w.pads, 2 * n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string ax = " (spatial axis " + std::to_string(i) + ")";
        cs.push_back({w.kernel[i] >= 1, "kernel size >= 1" + ax});
        cs.push_back({s[i] >= 1, "strides >= 1" + ax});
        cs.push_back({d[i] >= 1, "dilations >= 1" + ax});
        cs.push_back({p[i] >= 0 && p[n + i] >= 0, "pads >= 0" + ax});
        if (w.pads_below_kernel) {
            cs.push_back({p[i] < w.kernel[i] && p[n + i] < w.kernel[i], "pads are smaller than the kernel" + ax});
            // With pads below the kernel, every window starts at most d*(k-1) before the input;
            // a dilation no larger than the input then cannot step over it, so no window
            // covers only padding (ONNX leaves such windows undefined).
            cs.push_back({d[i] <= w.x[i], "dilations are at most the input size" + ax});
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        const std::string ax = " (spatial axis " + std::to_string(i) + ")";
        const expr dk = d[i] * (w.kernel[i] - 1) + 1;
        const expr si = max(s[i], expr(1));  // guarded: the constraint above rejects s < 1
        switch (w.auto_pad) {
            case auto_pad_mode::same_upper:
            case auto_pad_mode::same_lower: {
                const expr out = (w.x[i] + si - 1) / si;
                const expr total = max(expr(0), (out - 1) * si + dk - w.x[i]);
                const expr half = total / 2;
                const expr begin = w.auto_pad == auto_pad_mode::same_upper ? half : total - half;
                g.out.push_back(out);
                g.pad_begin.push_back(begin);
                g.pad_end.push_back(total - begin);
                break;
            }
            case auto_pad_mode::valid:
            case auto_pad_mode::notset: {
                const bool valid = w.auto_pad == auto_pad_mode::valid;
                const expr pb = valid ? expr(0) : p[i], pe = valid ? expr(0) : p[n + i];
                cs.push_back({w.x[i] + pb + pe >= dk, "the dilated kernel fits the padded input" + ax});
                const expr span = w.x[i] + pb + pe - dk;
                const expr floor_out = span / si + 1;
                const expr ceil_out = (span + si - 1) / si + 1;
                const expr ceiled = select((ceil_out - 1) * si >= w.x[i] + pb, ceil_out - 1, ceil_out);
                g.out.push_back(select(w.ceil_mode != 0, ceiled, floor_out));
                g.pad_begin.push_back(pb);
                g.pad_end.push_back(pe);
                break;
            }
        }
    }
    g.stride = s;
    g.dilation = d;
    return g;
}

/// Odometer increment of a multi-index over dims; false after the last one.
inline bool next_index(std::span<std::int64_t> idx, std::span<const std::int64_t> dims) {
    for (std::size_t k = idx.size(); k-- > 0;) {
        if (++idx[k] < dims[k]) return true;
        idx[k] = 0;
    }
    return false;
}

/// Calls f(idx) for every multi-index over dims (row-major; idx is a
/// std::span<const std::int64_t>); none when a dim is 0. Kernels call it per
/// output element, so the index lives on the stack up to rank 8.
template <class F>
void for_each_index(const std::vector<std::int64_t>& dims, F&& f) {
    for (const auto d : dims) {
        if (d <= 0) return;
    }
    std::array<std::int64_t, 8> small{};
    std::vector<std::int64_t> large;
    std::span<std::int64_t> idx(small.data(), dims.size());
    if (dims.size() > small.size()) {
        large.assign(dims.size(), 0);
        idx = std::span<std::int64_t>(large);
    }
    do {
        f(std::span<const std::int64_t>(idx));
    } while (next_index(idx, dims));
}

/// Number of elements of dims (all non-negative, product already validated).
inline std::int64_t count(const std::vector<std::int64_t>& dims) {
    std::int64_t n = 1;
    for (const auto d : dims) n *= d;
    return n;
}

/// Concrete values of constant expressions.
inline std::vector<std::int64_t> values(const std::vector<expr>& es) {
    std::vector<std::int64_t> out;
    for (const auto& e : es) out.push_back(value(e));
    return out;
}

/// Shape of an array as int64 values.
template <class A>
std::vector<std::int64_t> dims_of(const A& a) {
    std::vector<std::int64_t> out;
    for (const auto d : a.shape()) out.push_back(static_cast<std::int64_t>(d));
    return out;
}

/// Output shape as size_t from int64 values (validated non-negative).
inline shape_type to_shape(const std::vector<std::int64_t>& dims, std::string_view op_type) {
    shape_type s;
    for (const auto d : dims) {
        if (d < 0) throw shape_error(std::string(op_type), "negative output dim " + std::to_string(d));
        s.push_back(static_cast<std::size_t>(d));
    }
    return s;
}

/// Dims and int attributes shared by Conv and ConvTranspose: symbolic (from a
/// spec context) or constant (in a typed kernel), so one shape model serves both.
struct conv_dims {
    std::vector<expr> x, w;
    std::optional<std::vector<expr>> b;
    expr group = 1;
    std::vector<expr> kernel_shape, pads, strides, dilations;
    auto_pad_mode auto_pad = auto_pad_mode::notset;
};

/// The symbolic form, from a context whose attributes have their defaults filled in.
inline void fill_conv_dims(conv_dims& d, const spec::context& c, std::string_view auto_pad, std::string_view op_type) {
    d.x = c.shape(0);
    d.w = c.shape(1);
    if (c.has_input(2)) d.b = c.shape(2);
    d.group = c.attr("group");
    d.kernel_shape = c.attr_ints("kernel_shape");
    d.pads = c.attr_ints("pads");
    d.strides = c.attr_ints("strides");
    d.dilations = c.attr_ints("dilations");
    d.auto_pad = parse_auto_pad(auto_pad, op_type);
}

/// The constant form, from concrete shapes and a typed attribute struct.
template <class Shape, class Attrs>
void fill_conv_dims_from_shapes(conv_dims& d, const Shape& x, const Shape& w, const Shape* b, const Attrs& at,
                                std::string_view op_type) {
    d.x = constants(x);
    d.w = constants(w);
    if (b) d.b = constants(*b);
    d.group = at.group;
    d.kernel_shape = constants(at.kernel_shape);
    d.pads = constants(at.pads);
    d.strides = constants(at.strides);
    d.dilations = constants(at.dilations);
    d.auto_pad = parse_auto_pad(at.auto_pad, op_type);
}

/// The constant form, from typed arrays and a typed attribute struct.
template <class T, class Attrs>
void fill_conv_dims(conv_dims& d, const array<T>& x, const array<T>& w, const std::optional<array<T>>& b,
                    const Attrs& at, std::string_view op_type) {
    const shape_type bs = b ? shape_type(b->shape().begin(), b->shape().end()) : shape_type{};
    fill_conv_dims_from_shapes(d, shape_type(x.shape().begin(), x.shape().end()),
                               shape_type(w.shape().begin(), w.shape().end()), b ? &bs : nullptr, at, op_type);
}

}  // namespace tensoracle::ops::detail::nn
// ---- end tensoracle/ops/detail/nn_util.hpp ----

namespace tensoracle::ops {

namespace nn {
using spec::constraint;
using spec::expr;
namespace util = detail::nn;

inline constexpr spec::dtype_set float3 = spec::dtypes_of(dtype::f16, dtype::f32, dtype::f64);
inline constexpr spec::dtype_set matmul_types = spec::types::floating | spec::types::indices;

template <class T>
using acc_t = util::float_acc_t<T>;

inline std::vector<expr> tail(const std::vector<expr>& v, std::size_t from) {
    return {v.begin() + static_cast<std::ptrdiff_t>(std::min(from, v.size())), v.end()};
}

using tensoracle::is_nan;

/// Whether every value is finite: the exponent bits are not all ones. One
/// pass without an early exit, which the compiler vectorizes (a GEMM of 64 x 64
/// takes microseconds; a branchy scan of its inputs took as long).
template <class T>
bool all_finite(std::span<const T> v) {
    using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    static_assert(sizeof(T) == sizeof(bits) && std::numeric_limits<T>::is_iec559);
    constexpr bits exponent = static_cast<bits>(sizeof(T) == 4 ? 0x7f800000ull : 0x7ff0000000000000ull);
    // Blocks of a fixed size, so that the compiler's cheapest vectorization applies.
    constexpr std::size_t block = 16;
    bits any = 0;
    std::size_t i = 0;
    for (; i + block <= v.size(); i += block) {
        bits lane = 0;
        for (std::size_t j = 0; j < block; ++j) {
            lane |= static_cast<bits>((std::bit_cast<bits>(v[i + j]) & exponent) == exponent);
        }
        any |= lane;
    }
    for (; i < v.size(); ++i) any |= static_cast<bits>((std::bit_cast<bits>(v[i]) & exponent) == exponent);
    return any == 0;
}

/// The GEMM plugged in for T (ops/fast_paths.hpp) when every value of `in`
/// is finite, else null: BLASes may skip products with a zero factor, which
/// would turn 0 * inf into 0 where the formula gives NaN.
template <class T>
gemm_function<T> fast_gemm_for(std::initializer_list<const tensor*> in) {
    if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, double>) {
        return nullptr;  // no GEMM in the table for other dtypes
    } else {
        const auto gemm = fast_gemm<T>();
        if (gemm == nullptr) return nullptr;
        for (const tensor* t : in) {
            if (t != nullptr && !all_finite(t->values<T>())) return nullptr;
        }
        return gemm;
    }
}

}  // namespace nn

// ---------------------------------------------------------------------------
// MatMul
// ---------------------------------------------------------------------------

/// MatMul(A, B): numpy matmul. 1-D A is (1, K) and 1-D B is (K, 1) with the
/// added axis removed from the result; leading (batch) dims broadcast.
struct matmul : spec::one_shape_model<matmul> {
    static constexpr std::string_view op_type = "MatMul";
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = nn::matmul_types;
    static constexpr std::array<spec::value_spec, 2> inputs{{{"A", types, {1, 8}}, {"B", types, {1, 8}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types}}};

    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y;
        bool ok = false;
    };
    static model shape_model(const std::vector<spec::expr>& a, const std::vector<spec::expr>& b) {
        using spec::expr;
        model m;
        m.constraints.push_back({expr(a.size()) >= 1, "A has rank >= 1"});
        m.constraints.push_back({expr(b.size()) >= 1, "B has rank >= 1"});
        if (a.empty() || b.empty()) return m;
        const std::size_t ra = a.size(), rb = b.size();
        const expr kb = rb == 1 ? b[0] : b[rb - 2];
        m.constraints.push_back({a[ra - 1] == kb, "A's last dim equals B's contraction dim (second to last, or only)"});
        const std::size_t ba = ra >= 2 ? ra - 2 : 0, bb = rb >= 2 ? rb - 2 : 0, br = std::max(ba, bb);
        for (std::size_t k = 0; k < br; ++k) {
            std::optional<expr> da, db;
            if (k + ba >= br) da = a[k + ba - br];
            if (k + bb >= br) db = b[k + bb - br];
            if (da && db) {
                m.constraints.push_back({*da == *db || *da == 1 || *db == 1,
                                         "batch dims broadcast at output axis " + std::to_string(k)});
                m.y.push_back(select(*da == 1, *db, *da));
            } else {
                m.y.push_back(da ? *da : *db);
            }
        }
        if (ra >= 2) m.y.push_back(a[ra - 2]);
        if (rb >= 2) m.y.push_back(b[rb - 1]);
        m.ok = true;
        return m;
    }

    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = shape_model(c.shape(0), c.shape(1));
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        // rank r output: (r, r) for r >= 2, or one 1-D operand with rank r + 1 on the other side.
        std::vector<std::size_t> ranks;
        for (std::size_t r = 1; r <= std::min<std::size_t>(rank + 1, 8); ++r) ranks.push_back(r);
        if (ranks.empty()) return {};
        return {{{out}, ranks}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& a, const array<T>& b) {
        static_assert(spec::dtype_accepted<matmul, T>::value);
        namespace util = detail::nn;
        const auto m = shape_model(util::constants(a.shape()), util::constants(b.shape()));
        util::check_constant(op_type, m.constraints);
        const auto ad = util::dims_of(a), bd = util::dims_of(b);
        const std::size_t ra = ad.size(), rb = bd.size();
        const std::int64_t M = ra >= 2 ? ad[ra - 2] : 1, K = ad[ra - 1], N = rb >= 2 ? bd[rb - 1] : 1;
        shape_type batch_a(a.shape().begin(), a.shape().end() - (ra >= 2 ? 2 : 1));
        shape_type batch_b(b.shape().begin(), b.shape().end() - (rb >= 2 ? 2 : 1));
        const auto batch = detail::broadcast_shapes({batch_a, batch_b}, op_type);
        const auto off = detail::broadcast_offsets({batch_a, batch_b}, batch);
        auto y = array<T>::from_shape(util::to_shape(util::values(m.y), op_type));
        std::size_t f = 0;
        for (std::size_t bi = 0; bi < off[0].size(); ++bi) {
            const T* pa = a.data() + off[0][bi] * static_cast<std::size_t>(M * K);
            const T* pb = b.data() + off[1][bi] * static_cast<std::size_t>(K * N);
            for (std::int64_t i = 0; i < M; ++i) {
                for (std::int64_t j = 0; j < N; ++j) {
                    if constexpr (real_scalar<T>) {
                        nn::acc_t<T> s = 0;
                        for (std::int64_t k = 0; k < K; ++k) {
                            s += static_cast<nn::acc_t<T>>(pa[i * K + k]) * static_cast<nn::acc_t<T>>(pb[k * N + j]);
                        }
                        y.data()[f++] = value_cast<T>(s);
                    } else {
                        std::uint64_t s = 0;  // wraps
                        for (std::int64_t k = 0; k < K; ++k) {
                            s += static_cast<std::uint64_t>(static_cast<std::int64_t>(pa[i * K + k])) *
                                 static_cast<std::uint64_t>(static_cast<std::int64_t>(pb[k * N + j]));
                        }
                        y.data()[f++] = static_cast<T>(s);
                    }
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            if (auto y = fast<T>(c.input(0), c.input(1))) return std::move(*y);
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>()));
        }));
    }
    /// compute<T> through the plugged-in GEMM (ops/fast_paths.hpp), one call
    /// per batch matrix; nothing when none is plugged in for T, a dim is 0 or
    /// an input is not finite.
    template <class T>
    static std::optional<tensor> fast(const tensor& a, const tensor& b) {
        const auto gemm = nn::fast_gemm_for<T>({&a, &b});
        if (gemm == nullptr) return std::nullopt;
        // The shape model's arithmetic on numbers: evaluate() has already
        // checked its constraints and output shape, and rebuilding its
        // expressions here cost as much as a 64 x 64 GEMM.
        const std::size_t ra = a.rank(), rb = b.rank();
        if (ra == 0 || rb == 0) return std::nullopt;
        const std::size_t M = ra >= 2 ? a.shape()[ra - 2] : 1, K = a.shape()[ra - 1], N = rb >= 2 ? b.shape()[rb - 1] : 1;
        if (K != b.shape()[rb >= 2 ? rb - 2 : 0]) {
            throw shape_error(op_type, "A's last dim " + std::to_string(K) + " differs from B's contraction dim " +
                                           std::to_string(b.shape()[rb >= 2 ? rb - 2 : 0]));
        }
        if (M == 0 || N == 0 || K == 0) return std::nullopt;
        const shape_type batch_a(a.shape().begin(), a.shape().end() - (ra >= 2 ? 2 : 1));
        const shape_type batch_b(b.shape().begin(), b.shape().end() - (rb >= 2 ? 2 : 1));
        const auto batch = detail::broadcast_shapes({batch_a, batch_b}, op_type);
        shape_type out_shape = batch;
        if (ra >= 2) out_shape.push_back(M);
        if (rb >= 2) out_shape.push_back(N);
        auto y = tensor::for_overwrite(dtype_of<T>, out_shape);
        const T* pa = a.values<T>().data();
        const T* pb = b.values<T>().data();
        T* py = y.template values<T>().data();
        std::size_t bi = 0;
        detail::for_each_broadcast_run({batch_a, batch_b}, batch, [&](std::size_t, std::size_t len,
                                                                      std::span<const std::size_t> base,
                                                                      std::span<const std::size_t> step) {
            for (std::size_t i = 0; i < len; ++i, ++bi) {
                gemm(false, false, M, N, K, T(1), pa + (base[0] + i * step[0]) * M * K, K,
                     pb + (base[1] + i * step[1]) * K * N, N, T(0), py + bi * M * N, N);
            }
        });
        return y;
    }
    /// The kernel on AD scalar S; an integer product has no floating output (placeholder).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute<S>(x[0], x[1])};
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.range(0, -3, 3).range(1, -3, 3); }
};

// ---------------------------------------------------------------------------
// Gemm
// ---------------------------------------------------------------------------

namespace nn {
/// run() and run_real<S>() of ops computed as Op::compute<T>(a, b, optional c,
/// attributes): Gemm (C), Conv and ConvTranspose (B). One body for plain
/// types and AD scalars; every floating input is differentiable, and integer
/// instances (Gemm) have no floating output (placeholder).
template <class Op>
struct two_inputs_and_optional_third {
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type);
        return ops::detail::single_output(ops::detail::dispatch<Op::types>(c.input_dtype(0), Op::op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (requires { Op::template fast<T>(c, at); }) {
                if (auto y = Op::template fast<T>(c, at)) return std::move(*y);
            }
            return tensor(run_typed<T>(c, at, [&](std::size_t i) { return c.input(i).template as_array<T>(); }));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        const auto at = spec::parse_attributes<typename Op::attributes>(c.attributes(), Op::op_type);
        return {run_typed<S>(c, at, [&](std::size_t i) -> const array<S>& { return x[i]; })};
    }
    // Attrs is a parameter, not Op::attributes: Op is incomplete where this base is instantiated.
    template <class T, class Attrs, class Get>
    static array<T> run_typed(const spec::context& c, const Attrs& at, const Get& get) {
        std::optional<array<T>> third;
        if (c.has_input(2)) third = get(2);
        return Op::template compute<T>(get(0), get(1), third, at);
    }
};

}  // namespace nn

struct gemm_attr {
    float alpha = 1.0f;
    float beta = 1.0f;
    std::int64_t transA = 0;  // NOLINT(readability-identifier-naming): ONNX names
    std::int64_t transB = 0;  // NOLINT(readability-identifier-naming)
};

/// Gemm(A, B, C?) = alpha * A' B' + beta * C, A' = transA ? A^T : A (M x K),
/// B' = transB ? B^T : B (K x N); C broadcasts unidirectionally to (M, N).
struct gemm : nn::two_inputs_and_optional_third<gemm>, spec::one_shape_model<gemm> {
    static constexpr std::string_view op_type = "Gemm";
    static constexpr int opset = 13;
    using attributes = gemm_attr;
    static constexpr spec::dtype_set types = nn::matmul_types;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"A", types, {2, 2}}, {"B", types, {2, 2}}, {"C", types, {0, 2}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {2, 2}}}};

    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y;
    };
    static model shape_model(const std::vector<spec::expr>& a, const std::vector<spec::expr>& b,
                             const std::optional<std::vector<spec::expr>>& cdims, const spec::expr& ta,
                             const spec::expr& tb) {
        using spec::expr;
        model m;
        m.constraints.push_back({expr(a.size()) == 2 && expr(b.size()) == 2, "A and B are matrices"});
        if (a.size() != 2 || b.size() != 2) return m;
        const expr M = select(ta != 0, a[1], a[0]), K = select(ta != 0, a[0], a[1]);
        const expr K2 = select(tb != 0, b[1], b[0]), N = select(tb != 0, b[0], b[1]);
        m.constraints.push_back({K == K2, "inner dims of A' and B' agree"});
        if (cdims) {
            const std::size_t r = cdims->size();
            m.constraints.push_back({expr(r) <= 2, "C has rank <= 2"});
            if (r > 2) return m;
            const std::array<expr, 2> target{M, N};
            for (std::size_t j = 0; j < r; ++j) {
                const expr& t = target[2 - r + j];
                m.constraints.push_back({(*cdims)[j] == t || (*cdims)[j] == 1,
                                         "C broadcasts unidirectionally to (M, N) at its axis " + std::to_string(j)});
            }
        }
        m.y = {M, N};
        return m;
    }
    static model context_model(const spec::context& c) {
        std::optional<std::vector<spec::expr>> cd;
        if (c.has_input(2)) cd = c.shape(2);
        return shape_model(c.shape(0), c.shape(1), cd, c.attr("transA"), c.attr("transB"));
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = context_model(c);
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank != 2) return {};
        return {{{out}, {2}}, {{out}, {2}}, {{out}, {0, 1, 2}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& a, const array<T>& b, const std::optional<array<T>>& cm,
                            const attributes& at = {}) {
        static_assert(spec::dtype_accepted<gemm, T>::value);
        namespace util = detail::nn;
        std::optional<std::vector<spec::expr>> cd;
        if (cm) cd = util::constants(cm->shape());
        const auto m = shape_model(util::constants(a.shape()), util::constants(b.shape()), cd, at.transA, at.transB);
        util::check_constant(op_type, m.constraints);
        const auto yd = util::values(m.y);
        const std::int64_t M = yd[0], N = yd[1], K = at.transA != 0 ? util::dims_of(a)[0] : util::dims_of(a)[1];
        const std::int64_t lda = util::dims_of(a)[1], ldb = util::dims_of(b)[1];
        auto A = [&](std::int64_t i, std::int64_t k) { return at.transA != 0 ? a.data()[k * lda + i] : a.data()[i * lda + k]; };
        auto B = [&](std::int64_t k, std::int64_t j) { return at.transB != 0 ? b.data()[j * ldb + k] : b.data()[k * ldb + j]; };
        auto y = array<T>::from_shape(util::to_shape(yd, op_type));
        std::vector<std::size_t> coff;
        if (cm) {
            coff = detail::broadcast_offsets({shape_type(cm->shape().begin(), cm->shape().end())},
                                             util::to_shape(yd, op_type))[0];
        }
        for (std::int64_t i = 0; i < M; ++i) {
            for (std::int64_t j = 0; j < N; ++j) {
                const auto f = static_cast<std::size_t>(i * N + j);
                if constexpr (real_scalar<T>) {
                    using acc = nn::acc_t<T>;
                    acc s = 0;
                    for (std::int64_t k = 0; k < K; ++k) s += static_cast<acc>(A(i, k)) * static_cast<acc>(B(k, j));
                    acc r = static_cast<acc>(at.alpha) * s;
                    if (cm) r += static_cast<acc>(at.beta) * static_cast<acc>(cm->data()[coff[f]]);
                    y.data()[f] = value_cast<T>(r);
                } else {
                    std::uint64_t s = 0;  // wraps
                    for (std::int64_t k = 0; k < K; ++k) {
                        s += static_cast<std::uint64_t>(static_cast<std::int64_t>(A(i, k))) *
                             static_cast<std::uint64_t>(static_cast<std::int64_t>(B(k, j)));
                    }
                    double r = static_cast<double>(at.alpha) * static_cast<double>(static_cast<std::int64_t>(s));
                    if (cm) r += static_cast<double>(at.beta) * static_cast<double>(cm->data()[coff[f]]);
                    y.data()[f] = value_cast<T>(r);
                }
            }
        }
        return y;
    }
    /// compute<T> through the plugged-in GEMM (ops/fast_paths.hpp): Y starts
    /// as beta C, then one GEMM adds alpha A' B'. Nothing when none is plugged
    /// in for T, a dim is 0, alpha is 0 (a BLAS may then skip A' B') or a
    /// value is not finite.
    template <class T>
    static std::optional<tensor> fast(const spec::context& c, const attributes& at) {
        const tensor* cm = c.has_input(2) ? &c.input(2) : nullptr;
        const auto gemm = nn::fast_gemm_for<T>({&c.input(0), &c.input(1), cm});
        if (gemm == nullptr || at.alpha == 0.0f || !std::isfinite(at.alpha) || !std::isfinite(at.beta)) return std::nullopt;
        namespace util = detail::nn;
        const tensor& a = c.input(0);
        const tensor& b = c.input(1);
        std::optional<std::vector<spec::expr>> cd;
        if (cm) cd = util::constants(cm->shape());
        const auto m = shape_model(util::constants(a.shape()), util::constants(b.shape()), cd, at.transA, at.transB);
        util::check_constant(op_type, m.constraints);
        const auto out_shape = util::to_shape(util::values(m.y), op_type);
        const std::size_t M = out_shape[0], N = out_shape[1], K = at.transA != 0 ? a.shape()[0] : a.shape()[1];
        if (M == 0 || N == 0 || K == 0) return std::nullopt;
        auto y = tensor::for_overwrite(dtype_of<T>, out_shape);
        T* py = y.template values<T>().data();
        if (cm) {
            const T* pc = cm->values<T>().data();
            const T beta = static_cast<T>(at.beta);
            detail::for_each_broadcast_run({cm->shape()}, out_shape, [&](std::size_t f, std::size_t len,
                                                                        std::span<const std::size_t> base,
                                                                        std::span<const std::size_t> step) {
                for (std::size_t i = 0; i < len; ++i) py[f + i] = beta * pc[base[0] + i * step[0]];
            });
        }
        gemm(at.transA != 0, at.transB != 0, M, N, K, static_cast<T>(at.alpha), a.values<T>().data(), a.shape()[1],
             b.values<T>().data(), b.shape()[1], cm ? T(1) : T(0), py, N);
        return y;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.flag("transA").flag("transB").real("alpha", -2.0, 2.0, 0.5).real("beta", -2.0, 2.0, 0.5).optional_input(2, 0.7);
    }
};

// ---------------------------------------------------------------------------
// Conv
// ---------------------------------------------------------------------------

struct conv_attr {
    std::string auto_pad = "NOTSET";
    std::vector<std::int64_t> dilations;
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
};

/// Conv(X, W, B?): X (N, C, D1..Dn), W (M, C/group, k1..kn), B (M).
/// Y[b, m, o] = B[m] + sum_{c < C/group} sum_{k} X[b, g*C/group + c, s*o + d*k - pad_begin] * W[m, c, k]
/// with g = m / (M/group) and zero padding (positions outside X contribute 0).
struct conv : nn::two_inputs_and_optional_third<conv>, spec::one_shape_model<conv> {
    static constexpr std::string_view op_type = "Conv";
    static constexpr int opset = 11;
    using attributes = conv_attr;
    static constexpr spec::dtype_set types = nn::float3;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"X", types, {3, 5}}, {"W", types, {3, 5}}, {"B", types, {1, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 5}}}};

    /// Dims and int attributes, symbolic (from a context) or constant (in the kernel).
    using dims = detail::nn::conv_dims;
    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y;
        detail::nn::window_geometry geo;
        bool ok = false;
    };
    static model shape_model(const dims& d) {
        using spec::expr;
        namespace util = detail::nn;
        model m;
        auto& cs = m.constraints;
        const std::size_t r = d.x.size();
        cs.push_back({expr(r) >= 3, "X has rank >= 3: (N, C, D1, ...)"});
        cs.push_back({expr(d.w.size()) == expr(r), "W has the rank of X: (M, C/group, k1, ...)"});
        if (r < 3 || d.w.size() != r) return m;
        const std::size_t n = r - 2;
        cs.push_back({d.group >= 1, "group >= 1"});
        cs.push_back({d.x[1] == d.w[1] * d.group, "X channels C equal W.shape[1] * group"});
        cs.push_back({d.w[0] % max(d.group, expr(1)) == 0, "output channels M = W.shape[0] are a multiple of group"});
        if (d.b) {
            cs.push_back({expr(d.b->size()) == 1, "B is 1-D"});
            if (d.b->size() != 1) return m;
            cs.push_back({(*d.b)[0] == d.w[0], "B has one value per output channel M = W.shape[0]"});
        }
        if (!util::check_length(cs, d.kernel_shape, n, "kernel_shape", "one value per spatial axis")) return m;
        for (std::size_t i = 0; i < d.kernel_shape.size(); ++i) {
            cs.push_back({d.kernel_shape[i] == d.w[2 + i],
                          "kernel_shape equals W's spatial dims (spatial axis " + std::to_string(i) + ")"});
        }
        util::window_spec ws;
        ws.x = nn::tail(d.x, 2);
        ws.kernel = nn::tail(d.w, 2);
        ws.strides = d.strides;
        ws.dilations = d.dilations;
        ws.pads = d.pads;
        ws.auto_pad = d.auto_pad;
        m.geo = util::forward_window(ws);
        cs.insert(cs.end(), m.geo.constraints.begin(), m.geo.constraints.end());
        if (!m.geo.lengths_ok) return m;
        m.y = {d.x[0], d.w[0]};
        m.y.insert(m.y.end(), m.geo.out.begin(), m.geo.out.end());
        m.ok = true;
        return m;
    }
    template <int = 0>
    static dims context_dims(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        dims d;
        detail::nn::fill_conv_dims(d, c, a.auto_pad, op_type);
        return d;
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = shape_model(context_dims(c));
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}, {{out}, {rank}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const array<T>& w, const std::optional<array<T>>& b,
                            const attributes& at = {}) {
        static_assert(spec::dtype_accepted<conv, T>::value);
        namespace util = detail::nn;
        using acc = nn::acc_t<T>;
        dims d;
        util::fill_conv_dims(d, x, w, b, at, op_type);
        const auto m = shape_model(d);
        util::check_constant(op_type, m.constraints);

        const auto xd = util::dims_of(x), wd = util::dims_of(w);
        const std::size_t n = xd.size() - 2;
        const std::vector<std::int64_t> xs(xd.begin() + 2, xd.end()), ks(wd.begin() + 2, wd.end());
        const auto os = util::values(m.geo.out), pb = util::values(m.geo.pad_begin);
        const auto st = util::values(m.geo.stride), dl = util::values(m.geo.dilation);
        const std::int64_t N = xd[0], C = xd[1], M = wd[0], Cg = wd[1], Mg = M / at.group;
        auto y = array<T>::from_shape(util::to_shape(util::values(m.y), op_type));
        std::size_t f = 0;
        for (std::int64_t bi = 0; bi < N; ++bi) {
            for (std::int64_t mi = 0; mi < M; ++mi) {
                const std::int64_t g = mi / Mg;
                util::for_each_index(os, [&](std::span<const std::int64_t> o) {
                    acc s = b ? static_cast<acc>(b->data()[mi]) : acc(0);
                    for (std::int64_t c = 0; c < Cg; ++c) {
                        util::for_each_index(ks, [&](std::span<const std::int64_t> k) {
                            std::int64_t xoff = bi * C + g * Cg + c, woff = mi * Cg + c;
                            for (std::size_t i = 0; i < n; ++i) {
                                const std::int64_t xi = st[i] * o[i] + dl[i] * k[i] - pb[i];
                                if (xi < 0 || xi >= xs[i]) return;  // zero padding
                                xoff = xoff * xs[i] + xi;
                                woff = woff * ks[i] + k[i];
                            }
                            s += static_cast<acc>(x.data()[xoff]) * static_cast<acc>(w.data()[woff]);
                        });
                    }
                    y.data()[f++] = value_cast<T>(s);
                });
            }
        }
        return y;
    }
    /// compute<T> as im2col + one GEMM per image and group through the
    /// plugged-in GEMM (ops/fast_paths.hpp), bias added after. Nothing when
    /// none is plugged in for T, a dim is 0 or a value is not finite.
    template <class T>
    static std::optional<tensor> fast(const spec::context& c, const attributes& at) {
        const tensor* bias = c.has_input(2) ? &c.input(2) : nullptr;
        const auto gemm = nn::fast_gemm_for<T>({&c.input(0), &c.input(1), bias});
        if (gemm == nullptr) return std::nullopt;
        namespace util = detail::nn;
        const tensor& x = c.input(0);
        const tensor& w = c.input(1);
        dims d;
        util::fill_conv_dims_from_shapes(d, x.shape(), w.shape(), bias ? &bias->shape() : nullptr, at, op_type);
        const auto m = shape_model(d);
        util::check_constant(op_type, m.constraints);
        const std::size_t n = x.rank() - 2;
        const auto os = util::values(m.geo.out), pb = util::values(m.geo.pad_begin);
        const auto st = util::values(m.geo.stride), dl = util::values(m.geo.dilation);
        const std::size_t N = x.shape()[0], C = x.shape()[1], M = w.shape()[0], Cg = w.shape()[1];
        const auto groups = static_cast<std::size_t>(at.group), Mg = M / groups;
        std::vector<std::int64_t> xs, ks;
        std::size_t P = 1, Kk = 1, X = 1;
        for (std::size_t i = 0; i < n; ++i) {
            xs.push_back(static_cast<std::int64_t>(x.shape()[i + 2]));
            ks.push_back(static_cast<std::int64_t>(w.shape()[i + 2]));
            P *= static_cast<std::size_t>(os[i]);
            Kk *= w.shape()[i + 2];
            X *= x.shape()[i + 2];
        }
        const std::size_t rows = Cg * Kk;
        if (N == 0 || Mg == 0 || P == 0 || rows == 0) return std::nullopt;
        auto y = tensor::for_overwrite(dtype_of<T>, util::to_shape(util::values(m.y), op_type));
        const T* px = x.values<T>().data();
        const T* pw = w.values<T>().data();
        T* py = y.template values<T>().data();
        std::vector<T> col(rows * P);
        const std::size_t last = n - 1, run = static_cast<std::size_t>(os[last]);
        std::vector<std::int64_t> k(n), o(n);
        for (std::size_t bi = 0; bi < N; ++bi) {
            for (std::size_t g = 0; g < groups; ++g) {
                // col[(c, k), p] = X[bi, g Cg + c, st p + dl k - pad], 0 in the padding.
                for (std::size_t ci = 0; ci < Cg; ++ci) {
                    const T* xc = px + (bi * C + g * Cg + ci) * X;
                    std::fill(k.begin(), k.end(), 0);
                    for (std::size_t kk = 0; kk < Kk; ++kk) {
                        T* dst = col.data() + (ci * Kk + kk) * P;
                        std::fill(o.begin(), o.end(), 0);
                        for (std::size_t p = 0; p < P; p += run) {
                            bool inside = true;
                            std::int64_t xoff = 0;
                            for (std::size_t i = 0; i < last; ++i) {
                                const std::int64_t xi = st[i] * o[i] + dl[i] * k[i] - pb[i];
                                inside = inside && xi >= 0 && xi < xs[i];
                                xoff = xoff * xs[i] + xi;
                            }
                            // The last axis: x index st*ol + off lies in [0, xs) for ol in [lo, hi);
                            // zeros before and after, a strided copy between (no test per element).
                            const std::int64_t off = dl[last] * k[last] - pb[last], s = st[last];
                            std::size_t lo = run, hi = run;
                            if (inside) {
                                const std::int64_t first = off >= 0 ? 0 : (-off + s - 1) / s;
                                const std::int64_t end = xs[last] - off <= 0 ? 0 : (xs[last] - off + s - 1) / s;
                                lo = static_cast<std::size_t>(std::min<std::int64_t>(first, static_cast<std::int64_t>(run)));
                                hi = std::max(lo, static_cast<std::size_t>(std::min<std::int64_t>(end, static_cast<std::int64_t>(run))));
                            }
                            T* row = dst + p;
                            std::fill(row, row + lo, T(0));
                            const std::int64_t base = xoff * xs[last] + off;
                            if (s == 1 && lo < hi) {
                                std::copy_n(xc + static_cast<std::size_t>(base + static_cast<std::int64_t>(lo)), hi - lo, row + lo);
                            } else {
                                for (std::size_t ol = lo; ol < hi; ++ol) {
                                    row[ol] = xc[static_cast<std::size_t>(base + static_cast<std::int64_t>(ol) * s)];
                                }
                            }
                            std::fill(row + hi, row + run, T(0));
                            for (std::size_t i = last; i-- > 0;) {  // odometer over the outer output axes
                                if (++o[i] < os[i]) break;
                                o[i] = 0;
                            }
                        }
                        for (std::size_t i = n; i-- > 0;) {  // odometer over the kernel window
                            if (++k[i] < ks[i]) break;
                            k[i] = 0;
                        }
                    }
                }
                T* yg = py + (bi * M + g * Mg) * P;
                gemm(false, false, Mg, P, rows, T(1), pw + g * Mg * rows, rows, col.data(), P, T(0), yg, P);
                if (bias) {
                    const T* pbias = bias->values<T>().data() + g * Mg;
                    for (std::size_t mi = 0; mi < Mg; ++mi) {
                        for (std::size_t p = 0; p < P; ++p) yg[mi * P + p] += pbias[mi];
                    }
                }
            }
        }
        return y;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.4)
            .solve("group", 1, 16, 0.5)
            .range(0, -2, 2)
            .range(1, -1, 1)
            .range(2, -1, 1)
            // each output element: one multiply-add per weight of its group
            .work([](const spec::context& c, const std::vector<std::vector<spec::expr>>& out) {
                return spec::product(out[0]) * spec::product(nn::tail(c.shape(1), 1));
            });
    }
};

// ---------------------------------------------------------------------------
// ConvTranspose
// ---------------------------------------------------------------------------

struct conv_transpose_attr {
    std::string auto_pad = "NOTSET";
    std::vector<std::int64_t> dilations;
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> output_padding;
    std::vector<std::int64_t> output_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
};

/// ConvTranspose(X, W, B?): X (N, C, D1..Dn), W (C, M/group, k1..kn), B (M).
/// Y[b, g*M/group + m, s*j + d*k - pad_begin] += X[b, g*C/group + c, j] * W[g*C/group + c, m, k],
/// Y starts at B; the full size per axis is s*(x-1) + output_padding + d*(k-1) + 1 - pads.
struct conv_transpose : nn::two_inputs_and_optional_third<conv_transpose>,
                        spec::one_shape_model<conv_transpose> {
    static constexpr std::string_view op_type = "ConvTranspose";
    static constexpr int opset = 11;
    using attributes = conv_transpose_attr;
    static constexpr spec::dtype_set types = nn::float3;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"X", types, {3, 5}}, {"W", types, {3, 5}}, {"B", types, {1, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 5}}}};

    struct dims : detail::nn::conv_dims {
        std::vector<spec::expr> output_padding, output_shape;
    };
    struct model {
        std::vector<spec::constraint> constraints;
        std::vector<spec::expr> y, pad_begin, strides, dilations;
        bool ok = false;
    };
    static model shape_model(const dims& d) {
        using spec::expr;
        namespace util = detail::nn;
        model m;
        auto& cs = m.constraints;
        const std::size_t r = d.x.size();
        cs.push_back({expr(r) >= 3, "X has rank >= 3: (N, C, D1, ...)"});
        cs.push_back({expr(d.w.size()) == expr(r), "W has the rank of X: (C, M/group, k1, ...)"});
        if (r < 3 || d.w.size() != r) return m;
        const std::size_t n = r - 2;
        cs.push_back({d.group >= 1, "group >= 1"});
        cs.push_back({d.x[1] == d.w[0], "X channels C equal W.shape[0]"});
        cs.push_back({d.w[0] % max(d.group, expr(1)) == 0, "input channels C are a multiple of group"});
        const expr M = d.w[1] * d.group;
        if (d.b) {
            cs.push_back({expr(d.b->size()) == 1, "B is 1-D"});
            if (d.b->size() != 1) return m;
            cs.push_back({(*d.b)[0] == M, "B has one value per output channel W.shape[1] * group"});
        }
        // Every check runs (no short-circuit), so all length constraints are recorded.
        const std::array<bool, 6> ok{
            util::check_length(cs, d.kernel_shape, n, "kernel_shape", "one value per spatial axis"),
            util::check_length(cs, d.strides, n, "strides", "one value per spatial axis"),
            util::check_length(cs, d.dilations, n, "dilations", "one value per spatial axis"),
            util::check_length(cs, d.output_padding, n, "output_padding", "one value per spatial axis"),
            util::check_length(cs, d.output_shape, n, "output_shape", "one value per spatial axis"),
            util::check_length(cs, d.pads, 2 * n, "pads", "a begin and an end value per spatial axis")};
        const bool lengths = std::all_of(ok.begin(), ok.end(), [](bool b) { return b; });
        if (!lengths) return m;
        if (d.auto_pad != util::auto_pad_mode::notset && !d.pads.empty()) {
            cs.push_back({expr(0), "pads cannot be given together with auto_pad other than NOTSET"});
            return m;
        }
        const auto s = util::or_default(d.strides, n, 1), dl = util::or_default(d.dilations, n, 1);
        const auto op = util::or_default(d.output_padding, n, 0), p = util::or_default(d.pads, 2 * n, 0);
        m.y = {d.x[0], M};
        for (std::size_t i = 0; i < n; ++i) {
            const std::string ax = " (spatial axis " + std::to_string(i) + ")";
            const expr k = d.w[2 + i];
            if (!d.kernel_shape.empty()) cs.push_back({d.kernel_shape[i] == k, "kernel_shape equals W's spatial dims" + ax});
            cs.push_back({k >= 1, "kernel size >= 1" + ax});
            cs.push_back({s[i] >= 1, "strides >= 1" + ax});
            cs.push_back({dl[i] >= 1, "dilations >= 1" + ax});
            cs.push_back({p[i] >= 0 && p[n + i] >= 0, "pads >= 0" + ax});
            cs.push_back({op[i] >= 0, "output_padding >= 0" + ax});
            const expr full = s[i] * (d.x[2 + i] - 1) + op[i] + dl[i] * (k - 1) + 1;
            expr out = 0, begin = 0;
            const bool same = d.auto_pad == util::auto_pad_mode::same_upper || d.auto_pad == util::auto_pad_mode::same_lower;
            if (!d.output_shape.empty() || same) {
                out = d.output_shape.empty() ? d.x[2 + i] * s[i] : d.output_shape[i];
                // A zero-size requested output is degenerate (ONNX's own inference drops the axis).
                if (!d.output_shape.empty()) cs.push_back({d.output_shape[i] >= 1, "output_shape >= 1" + ax});
                const expr total = max(expr(0), full - out);
                begin = d.auto_pad == util::auto_pad_mode::same_upper ? total / 2 : total - total / 2;
            } else if (d.auto_pad == util::auto_pad_mode::valid) {
                out = full;
            } else {
                out = full - p[i] - p[n + i];
                begin = p[i];
            }
            cs.push_back({out >= 0, "the output size is non-negative" + ax});
            m.y.push_back(out);
            m.pad_begin.push_back(begin);
        }
        m.strides = s;
        m.dilations = dl;
        m.ok = true;
        return m;
    }
    template <int = 0>
    static dims context_dims(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        dims d;
        detail::nn::fill_conv_dims(d, c, a.auto_pad, op_type);
        d.output_padding = c.attr_ints("output_padding");
        d.output_shape = c.attr_ints("output_shape");
        return d;
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = shape_model(context_dims(c));
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}, {{out}, {rank}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const array<T>& w, const std::optional<array<T>>& b,
                            const attributes& at = {}) {
        static_assert(spec::dtype_accepted<conv_transpose, T>::value);
        namespace util = detail::nn;
        using acc = nn::acc_t<T>;
        dims d;
        util::fill_conv_dims(d, x, w, b, at, op_type);
        d.output_padding = util::constants(at.output_padding);
        d.output_shape = util::constants(at.output_shape);
        const auto m = shape_model(d);
        util::check_constant(op_type, m.constraints);

        const auto xd = util::dims_of(x), wd = util::dims_of(w), yd = util::values(m.y);
        const std::size_t n = xd.size() - 2;
        const std::vector<std::int64_t> xs(xd.begin() + 2, xd.end()), ks(wd.begin() + 2, wd.end()),
            os(yd.begin() + 2, yd.end());
        const auto pb = util::values(m.pad_begin), st = util::values(m.strides), dl = util::values(m.dilations);
        const std::int64_t N = xd[0], C = xd[1], Mg = wd[1], M = yd[1], Cg = C / at.group;
        const std::int64_t plane = util::count(os);
        std::vector<acc> sum(static_cast<std::size_t>(N * M * plane), acc(0));
        for (std::int64_t bi = 0; bi < N; ++bi) {
            for (std::int64_t mi = 0; mi < M; ++mi) {
                const acc bias = b ? static_cast<acc>(b->data()[mi]) : acc(0);
                for (std::int64_t f = 0; f < plane; ++f) sum[static_cast<std::size_t>((bi * M + mi) * plane + f)] = bias;
            }
            for (std::int64_t ci = 0; ci < C; ++ci) {
                const std::int64_t g = ci / Cg;
                util::for_each_index(xs, [&](std::span<const std::int64_t> j) {
                    std::int64_t xoff = bi * C + ci;
                    for (std::size_t i = 0; i < n; ++i) xoff = xoff * xs[i] + j[i];
                    const acc xv = static_cast<acc>(x.data()[xoff]);
                    for (std::int64_t mm = 0; mm < Mg; ++mm) {
                        const std::int64_t mi = g * Mg + mm;
                        util::for_each_index(ks, [&](std::span<const std::int64_t> k) {
                            std::int64_t yoff = bi * M + mi, woff = ci * Mg + mm;
                            for (std::size_t i = 0; i < n; ++i) {
                                const std::int64_t yi = st[i] * j[i] + dl[i] * k[i] - pb[i];
                                if (yi < 0 || yi >= os[i]) return;  // cropped by pads / output_shape
                                yoff = yoff * os[i] + yi;
                                woff = woff * ks[i] + k[i];
                            }
                            sum[static_cast<std::size_t>(yoff)] += xv * static_cast<acc>(w.data()[woff]);
                        });
                    }
                });
            }
        }
        auto y = array<T>::from_shape(util::to_shape(yd, op_type));
        for (std::size_t f = 0; f < sum.size(); ++f) y.data()[f] = value_cast<T>(sum[f]);
        return y;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.3)
            .solve("group", 1, 16, 0.5)
            .solve("output_padding", 0, 8, 0.3)
            .solve("output_shape", 1, 64, 0.2)
            .range(0, -2, 2)
            .range(1, -1, 1)
            .range(2, -1, 1)
            // each input element scatters into one window per output channel of its group
            .work([](const spec::context& c, const std::vector<std::vector<spec::expr>>&) {
                return spec::product(c.shape(0)) * spec::product(nn::tail(c.shape(1), 1));
            });
    }
};

// ---------------------------------------------------------------------------
// MaxPool, AveragePool
// ---------------------------------------------------------------------------

namespace nn {
/// The pools' shared shape model: rank, kernel_shape and the window geometry.
struct pool_model {
    std::vector<constraint> constraints;
    std::vector<expr> y;
    util::window_geometry geo;
    bool ok = false;
};
inline pool_model pool_shape_model(const std::vector<expr>& x, const std::vector<expr>& kernel_shape,
                                   const std::vector<expr>& strides, const std::vector<expr>& dilations,
                                   const std::vector<expr>& pads, util::auto_pad_mode auto_pad, const expr& ceil_mode) {
    pool_model m;
    auto& cs = m.constraints;
    const std::size_t r = x.size();
    cs.push_back({expr(r) >= 3, "X has rank >= 3: (N, C, D1, ...)"});
    if (r < 3) return m;
    const std::size_t n = r - 2;
    cs.push_back({spec::list_length(kernel_shape) == expr(n), "kernel_shape has one value per spatial axis"});
    if (kernel_shape.size() != n) return m;
    util::window_spec ws;
    ws.x = tail(x, 2);
    ws.kernel = kernel_shape;
    ws.strides = strides;
    ws.dilations = dilations;
    ws.pads = pads;
    ws.auto_pad = auto_pad;
    ws.ceil_mode = ceil_mode;
    ws.pads_below_kernel = true;
    m.geo = util::forward_window(ws);
    cs.insert(cs.end(), m.geo.constraints.begin(), m.geo.constraints.end());
    if (!m.geo.lengths_ok) return m;
    m.y = {x[0], x[1]};
    m.y.insert(m.y.end(), m.geo.out.begin(), m.geo.out.end());
    m.ok = true;
    return m;
}

/// The pools' work estimate (spec::hints::work): one step per window element per output.
inline spec::expr pool_work(const spec::context& c, const std::vector<std::vector<spec::expr>>& out) {
    return spec::product(out[0]) * spec::product(c.attr_ints("kernel_shape"));
}

}  // namespace nn

struct max_pool_attr {
    std::string auto_pad = "NOTSET";
    std::int64_t ceil_mode = 0;
    std::vector<std::int64_t> dilations;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::int64_t storage_order = 0;
    std::vector<std::int64_t> strides;
    static constexpr std::array<std::string_view, 1> required{"kernel_shape"};
};

/// MaxPool(X) -> (Y, Indices): the maximum over each (dilated) window of the
/// input, padding excluded; Indices is the flat index into X of that maximum.
struct max_pool : spec::one_shape_model<max_pool> {
    static constexpr std::string_view op_type = "MaxPool";
    static constexpr int opset = 12;
    using attributes = max_pool_attr;
    static constexpr spec::dtype_set types = nn::float3 | spec::dtypes_of(dtype::i8, dtype::u8);
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 5}}}};
    static constexpr std::array<spec::value_spec, 2> outputs{
        {{"Y", types, {3, 5}}, {"Indices", spec::types::int64, {3, 5}, "I", true}}};

    template <int = 0>
    static nn::pool_model context_model(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return nn::pool_shape_model(c.shape(0), c.attr_ints("kernel_shape"), c.attr_ints("strides"),
                                    c.attr_ints("dilations"), c.attr_ints("pads"),
                                    detail::nn::parse_auto_pad(a.auto_pad, op_type), c.attr("ceil_mode"));
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = context_model(c);
        m.constraints.push_back({c.attr("storage_order") == 0 || c.attr("storage_order") == 1, "storage_order is 0 or 1"});
        return {std::move(m.constraints), {m.y, m.y}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0), dtype::i64}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// Y and Indices.
    template <class T>
    static std::pair<array<T>, array<std::int64_t>> compute(const array<T>& x, const attributes& at) {
        static_assert(spec::dtype_accepted<max_pool, T>::value);
        namespace util = detail::nn;
        const auto m = nn::pool_shape_model(util::constants(x.shape()), util::constants(at.kernel_shape),
                                            util::constants(at.strides), util::constants(at.dilations),
                                            util::constants(at.pads), util::parse_auto_pad(at.auto_pad, op_type),
                                            spec::expr(at.ceil_mode));
        util::check_constant(op_type, m.constraints);
        if (at.storage_order != 0 && at.storage_order != 1) throw error(std::string(op_type), "storage_order must be 0 or 1");
        const auto xd = util::dims_of(x), yd = util::values(m.y);
        const std::size_t n = xd.size() - 2;
        const std::vector<std::int64_t> xs(xd.begin() + 2, xd.end()), os(yd.begin() + 2, yd.end());
        const auto ks = at.kernel_shape;
        const auto pb = util::values(m.geo.pad_begin), st = util::values(m.geo.stride), dl = util::values(m.geo.dilation);
        const std::int64_t planes = xd[0] * xd[1], plane = util::count(xs);
        const auto shape = util::to_shape(yd, op_type);
        auto y = array<T>::from_shape(shape);
        auto ind = array<std::int64_t>::from_shape(shape);
        std::size_t f = 0;
        std::vector<std::int64_t> pos(n);
        for (std::int64_t pl = 0; pl < planes; ++pl) {
            util::for_each_index(os, [&](std::span<const std::int64_t> o) {
                bool found = false;
                T best{};
                std::int64_t best_idx = 0;
                util::for_each_index(ks, [&](std::span<const std::int64_t> k) {
                    for (std::size_t i = 0; i < n; ++i) {
                        pos[i] = st[i] * o[i] + dl[i] * k[i] - pb[i];
                        if (pos[i] < 0 || pos[i] >= xs[i]) return;  // padding: ignored
                    }
                    std::int64_t row = 0, col = 0, step = 1;
                    for (std::size_t i = 0; i < n; ++i) row = row * xs[i] + pos[i];
                    for (std::size_t i = 0; i < n; ++i) {
                        col += pos[i] * step;
                        step *= xs[i];
                    }
                    const T v = x.data()[pl * plane + row];
                    bool take = !found || v > best;
                    if constexpr (real_scalar<T>) {
                        if (found && nn::is_nan(best)) take = false;  // NaN stays
                        if (found && nn::is_nan(v) && !nn::is_nan(best)) take = true;
                    }
                    if (take) {
                        best = v;
                        best_idx = pl * plane + (at.storage_order == 0 ? row : col);
                        found = true;
                    }
                });
                if (!found) throw error(std::string(op_type), "a pooling window covers only padding (dilations too large)");
                y.data()[f] = best;
                ind.data()[f] = best_idx;
                ++f;
            });
        }
        return {std::move(y), std::move(ind)};
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::dispatch<types, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            auto [y, i] = compute<T>(c.input(0).as_array<T>(), at);
            return std::vector<tensor>{tensor(y), tensor(i)};
        });
    }
    /// The kernel on AD scalar S: Y carries the derivative of the selected
    /// element; Indices (int64) is a placeholder taken from run(). An integer
    /// X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}, array<S>{}};
        return {compute<S>(x[0], at).first, array<S>{}};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(spec::facts::selection_of(0))
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.4)
            .flag("ceil_mode", 0.4)
            .flag("storage_order", 0.3)
            .work(nn::pool_work);
    }
};

struct average_pool_attr {
    std::string auto_pad = "NOTSET";
    std::int64_t ceil_mode = 0;
    std::int64_t count_include_pad = 0;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
    static constexpr std::array<std::string_view, 1> required{"kernel_shape"};
};

/// AveragePool(X): mean over each window; the divisor counts the window's
/// positions inside X (count_include_pad=0) or inside the padded input
/// (count_include_pad=1; positions past the end pad, from ceil_mode, are not counted).
struct average_pool : spec::one_shape_model<average_pool> {
    static constexpr std::string_view op_type = "AveragePool";
    static constexpr int opset = 11;
    using attributes = average_pool_attr;
    static constexpr spec::dtype_set types = nn::float3;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 5}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 5}}}};

    template <int = 0>
    static nn::pool_model context_model(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return nn::pool_shape_model(c.shape(0), c.attr_ints("kernel_shape"), c.attr_ints("strides"), {},
                                    c.attr_ints("pads"), detail::nn::parse_auto_pad(a.auto_pad, op_type),
                                    c.attr("ceil_mode"));
    }
    template <int = 0>
    static spec::constraints_with_shapes constraints_and_shapes(const spec::context& c) {
        auto m = context_model(c);
        return {std::move(m.constraints), {std::move(m.y)}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3 || rank > 5) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& at) {
        static_assert(spec::dtype_accepted<average_pool, T>::value);
        namespace util = detail::nn;
        using acc = nn::acc_t<T>;
        const auto m = nn::pool_shape_model(util::constants(x.shape()), util::constants(at.kernel_shape),
                                            util::constants(at.strides), {}, util::constants(at.pads),
                                            util::parse_auto_pad(at.auto_pad, op_type), spec::expr(at.ceil_mode));
        util::check_constant(op_type, m.constraints);
        const auto xd = util::dims_of(x), yd = util::values(m.y);
        const std::size_t n = xd.size() - 2;
        const std::vector<std::int64_t> xs(xd.begin() + 2, xd.end()), os(yd.begin() + 2, yd.end());
        const auto ks = at.kernel_shape;
        const auto pb = util::values(m.geo.pad_begin), pe = util::values(m.geo.pad_end), st = util::values(m.geo.stride);
        const std::int64_t planes = xd[0] * xd[1], plane = util::count(xs);
        auto y = array<T>::from_shape(util::to_shape(yd, op_type));
        std::size_t f = 0;
        for (std::int64_t pl = 0; pl < planes; ++pl) {
            util::for_each_index(os, [&](std::span<const std::int64_t> o) {
                acc s = 0;
                std::int64_t inside = 0, padded = 0;
                util::for_each_index(ks, [&](std::span<const std::int64_t> k) {
                    std::int64_t row = 0;
                    bool in_x = true;
                    for (std::size_t i = 0; i < n; ++i) {
                        const std::int64_t p = st[i] * o[i] + k[i] - pb[i];
                        if (p >= xs[i] + pe[i]) return;  // past the end padding (ceil_mode)
                        if (p < 0 || p >= xs[i]) in_x = false;
                        row = row * xs[i] + p;
                    }
                    ++padded;
                    if (!in_x) return;
                    ++inside;
                    s += static_cast<acc>(x.data()[pl * plane + row]);
                });
                const std::int64_t divisor = at.count_include_pad != 0 ? padded : inside;
                if (divisor == 0) throw error(std::string(op_type), "a pooling window covers only padding");
                y.data()[f++] = value_cast<T>(s / static_cast<acc>(divisor));
            });
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), at));
        }));
    }
    /// The kernel on AD scalar S.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return {compute<S>(x[0], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .choice("auto_pad", {std::string("NOTSET"), std::string("SAME_UPPER"), std::string("SAME_LOWER"), std::string("VALID")}, 0.4)
            .flag("ceil_mode", 0.4)
            .flag("count_include_pad", 0.5)
            .work(nn::pool_work);
    }
};

// ---------------------------------------------------------------------------
// GlobalAveragePool, GlobalMaxPool
// ---------------------------------------------------------------------------

namespace nn {
/// Y[n, c, 1, ..., 1] = mean (or max) of X[n, c, :, ..., :].
template <bool Max>
struct global_pool {
    static constexpr std::string_view op_type = Max ? "GlobalMaxPool" : "GlobalAveragePool";
    static constexpr int opset = 1;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = float3;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 8}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 8}}}};

    static std::vector<constraint> constraints(const spec::context& c) {
        std::vector<constraint> cs{{expr(c.rank(0)) >= 3, "X has rank >= 3: (N, C, D1, ...)"}};
        for (std::size_t i = 2; i < c.rank(0); ++i) {
            cs.push_back({c.dim(0, i) >= 1, "spatial dims are non-empty (axis " + std::to_string(i) + ")"});
        }
        return cs;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) {
        std::vector<expr> y{c.dim(0, 0), c.dim(0, 1)};
        for (std::size_t i = 2; i < c.rank(0); ++i) y.emplace_back(1);
        return {y};
    }
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3) return {};
        return {{{out}, {rank}}};
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x) {
        static_assert(spec::dtype_accepted<global_pool, T>::value);
        if (x.dimension() < 3) throw shape_error(std::string(op_type), "X must have rank >= 3: (N, C, D1, ...)");
        shape_type ys{x.shape()[0], x.shape()[1]};
        std::size_t plane = 1;
        for (std::size_t i = 2; i < x.dimension(); ++i) {
            if (x.shape()[i] == 0) throw shape_error(std::string(op_type), "spatial dims must be non-empty");
            plane *= x.shape()[i];
            ys.push_back(1);
        }
        auto y = array<T>::from_shape(ys);
        for (std::size_t p = 0; p < y.size(); ++p) {
            const T* v = x.data() + p * plane;
            if constexpr (Max) {
                T best = v[0];
                for (std::size_t i = 1; i < plane; ++i) {
                    if (is_nan(best)) break;
                    if (v[i] > best || is_nan(v[i])) best = v[i];
                }
                y.data()[p] = best;
            } else {
                acc_t<T> s = 0;
                for (std::size_t i = 0; i < plane; ++i) s += static_cast<acc_t<T>>(v[i]);
                y.data()[p] = value_cast<T>(s / static_cast<acc_t<T>>(plane));
            }
        }
        return y;
    }
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using U = typename decltype(t)::type;
            return tensor(compute<U>(c.input(0).as_array<U>()));
        }));
    }
    /// The kernel on AD scalar S (GlobalMaxPool: the derivative of the selected element).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context&, const std::vector<array<S>>& x) {
        return {compute<S>(x[0])};
    }
};
}  // namespace nn

using global_average_pool = nn::global_pool<false>;
using global_max_pool = nn::global_pool<true>;

// ---------------------------------------------------------------------------
// LRN
// ---------------------------------------------------------------------------

struct lrn_attr {
    float alpha = 0.0001f;
    float beta = 0.75f;
    float bias = 1.0f;
    std::int64_t size = 1;
    static constexpr std::array<std::string_view, 1> required{"size"};
};

/// LRN(X): Y = X / (bias + alpha / size * square_sum)^beta, square_sum over the
/// channels [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
struct lrn {
    static constexpr std::string_view op_type = "LRN";
    static constexpr int opset = 13;
    using attributes = lrn_attr;
    static constexpr spec::dtype_set types = spec::types::floating;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", types, {3, 8}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {3, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return {{spec::expr(c.rank(0)) >= 3, "X has rank >= 3: (N, C, D1, ...)"}, {c.attr("size") >= 1, "size >= 1"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank < 3) return {};
        return {{{out}, {rank}}};
    }
    /// The base raised to beta must be positive.
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        return {{"bias + alpha / size * square_sum > 0", [a](std::span<const tensor> in) {
                     const auto x = in[0].to<double>();
                     if (x.dimension() < 3 || a.size < 1) return 0.0;
                     const auto base = bases(x, a);
                     double loss = 0.0;
                     for (const double b : base) loss += b > 0 ? 0.0 : (1e-10 - b);
                     return loss;
                 }}};
    }
    /// bias + alpha / size * square_sum for every element, in double.
    static std::vector<double> bases(const array<double>& x, const attributes& a) {
        const std::size_t N = x.shape()[0], C = x.shape()[1], plane = x.size() / std::max<std::size_t>(1, N * C);
        const auto lo = (a.size - 1) / 2, hi = a.size - 1 - lo;
        std::vector<double> out(x.size());
        for (std::size_t b = 0; b < N; ++b) {
            for (std::size_t c = 0; c < C; ++c) {
                const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(c) - lo);
                const auto last = std::min<std::int64_t>(static_cast<std::int64_t>(C) - 1, static_cast<std::int64_t>(c) + hi);
                for (std::size_t p = 0; p < plane; ++p) {
                    double s = 0;
                    for (auto j = first; j <= last; ++j) {
                        const double v = x.data()[(b * C + static_cast<std::size_t>(j)) * plane + p];
                        s += v * v;
                    }
                    out[(b * C + c) * plane + p] =
                        static_cast<double>(a.bias) + static_cast<double>(a.alpha) / static_cast<double>(a.size) * s;
                }
            }
        }
        return out;
    }
    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a) {
        static_assert(spec::dtype_accepted<lrn, T>::value);
        using acc = nn::acc_t<T>;
        if (x.dimension() < 3) throw shape_error(std::string(op_type), "X must have rank >= 3: (N, C, D1, ...)");
        if (a.size < 1) throw error(std::string(op_type), "size must be >= 1");
        const std::size_t N = x.shape()[0], C = x.shape()[1], plane = x.size() / std::max<std::size_t>(1, N * C);
        const auto lo = (a.size - 1) / 2, hi = a.size - 1 - lo;
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t b = 0; b < N; ++b) {
            for (std::size_t c = 0; c < C; ++c) {
                const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(c) - lo);
                const auto last = std::min<std::int64_t>(static_cast<std::int64_t>(C) - 1, static_cast<std::int64_t>(c) + hi);
                for (std::size_t p = 0; p < plane; ++p) {
                    acc s = 0;
                    for (auto j = first; j <= last; ++j) {
                        const auto v = static_cast<acc>(x.data()[(b * C + static_cast<std::size_t>(j)) * plane + p]);
                        s += v * v;
                    }
                    const std::size_t f = (b * C + c) * plane + p;
                    const acc base = static_cast<acc>(a.bias) + static_cast<acc>(a.alpha) / static_cast<acc>(a.size) * s;
                    const acc scale = math::pow(base, static_cast<acc>(a.beta));
                    y.data()[f] = value_cast<T>(static_cast<acc>(x.data()[f]) / scale);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), at));
        }));
    }
    /// The kernel on AD scalar S; beta is a constant exponent of a positive base.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return {compute<S>(x[0], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.solve("size", 1, 9, 1.0).real("alpha", 1e-4, 1e-2, 0.5).real("beta", 0.5, 0.9, 0.5).real("bias", 1.0, 3.0, 0.5).range(0, -3, 3).facts(facts);
    }
    /// Y = X * s with s = (bias + alpha/size * sum)^-beta in (0, bias^-beta] when
    /// alpha, beta >= 0 and bias > 0: signs stay, magnitudes scale by at most
    /// bias^-beta (LRN of values in [0, 1] with bias > 1 stays below 1).
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type>) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        if (in.empty() || !(a.alpha >= 0.0f && a.beta >= 0.0f && a.bias > 0.0f)) return {spec::value_facts{}};
        const auto& x = in[0];
        const double s = std::pow(static_cast<double>(a.bias), -static_cast<double>(a.beta));
        spec::value_facts y;
        y.lo = x.lo >= 0.0 ? 0.0 : x.lo * s;
        y.hi = x.hi <= 0.0 ? 0.0 : x.hi * s;
        if (std::isfinite(x.some_at_most)) y.some_at_most = x.some_at_most >= 0.0 ? x.some_at_most * s : 0.0;
        if (std::isfinite(x.some_at_least)) y.some_at_least = x.some_at_least <= 0.0 ? x.some_at_least * s : 0.0;
        for (const double v : x.forced) {
            if (v == 0.0) y.force(0.0);  // 0 stays 0
        }
        return {y};
    }
};

// ---------------------------------------------------------------------------
// Resize, Upsample
// ---------------------------------------------------------------------------

struct resize_attr {
    std::string coordinate_transformation_mode = "half_pixel";
    float cubic_coeff_a = -0.75f;
    std::int64_t exclude_outside = 0;
    float extrapolation_value = 0.0f;
    std::string mode = "nearest";
    std::string nearest_mode = "round_prefer_floor";
};

namespace nn {
/// Resize's interpolation (the ONNX 1.12 reference, resize.py, transcribed).
struct resize_impl {
    enum class mode_t : std::uint8_t { nearest, linear, cubic };
    enum class ctm_t : std::uint8_t { half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize };
    enum class nearest_t : std::uint8_t { round_prefer_floor, round_prefer_ceil, floor, ceil };
    struct settings {
        mode_t mode;
        ctm_t ctm;
        nearest_t nearest;
        double cubic_a;
        bool exclude_outside;
        double extrapolation;
    };
    static settings parse(const resize_attr& a, std::string_view op_type) {
        settings s{};
        const std::string where(op_type);
        if (a.mode == "nearest") s.mode = mode_t::nearest;
        else if (a.mode == "linear") s.mode = mode_t::linear;
        else if (a.mode == "cubic") s.mode = mode_t::cubic;
        else throw error(where, "mode must be nearest, linear or cubic, got '" + a.mode + "'");
        const auto& c = a.coordinate_transformation_mode;
        if (c == "half_pixel") s.ctm = ctm_t::half_pixel;
        else if (c == "pytorch_half_pixel") s.ctm = ctm_t::pytorch_half_pixel;
        else if (c == "align_corners") s.ctm = ctm_t::align_corners;
        else if (c == "asymmetric") s.ctm = ctm_t::asymmetric;
        else if (c == "tf_half_pixel_for_nn") s.ctm = ctm_t::tf_half_pixel_for_nn;
        else if (c == "tf_crop_and_resize") s.ctm = ctm_t::tf_crop_and_resize;
        else throw error(where, "unknown coordinate_transformation_mode '" + c + "'");
        if (a.nearest_mode == "round_prefer_floor") s.nearest = nearest_t::round_prefer_floor;
        else if (a.nearest_mode == "round_prefer_ceil") s.nearest = nearest_t::round_prefer_ceil;
        else if (a.nearest_mode == "floor") s.nearest = nearest_t::floor;
        else if (a.nearest_mode == "ceil") s.nearest = nearest_t::ceil;
        else throw error(where, "unknown nearest_mode '" + a.nearest_mode + "'");
        s.cubic_a = static_cast<double>(a.cubic_coeff_a);
        s.exclude_outside = a.exclude_outside != 0;
        s.extrapolation = static_cast<double>(a.extrapolation_value);
        if (!std::isfinite(s.cubic_a)) throw error(where, "cubic_coeff_a must be finite");
        return s;
    }

    /// floor(x * scale) per axis; scales must be positive and finite.
    static std::vector<std::int64_t> scaled_dims(const shape_type& x, std::span<const float> scales, std::string_view op_type) {
        if (scales.size() != x.size()) {
            throw shape_error(std::string(op_type), "scales has " + std::to_string(scales.size()) + " values for rank " +
                                                        std::to_string(x.size()));
        }
        std::vector<std::int64_t> out;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double s = static_cast<double>(scales[i]);
            if (!(s > 0.0) || !std::isfinite(s)) {
                throw error(std::string(op_type), "scales must be positive and finite, got " + std::to_string(s));
            }
            const double v = std::floor(s * static_cast<double>(x[i]));
            if (!(v < 0x1p31)) throw shape_error(std::string(op_type), "scaled output dim is too large");
            out.push_back(static_cast<std::int64_t>(v));
        }
        return out;
    }

    struct taps {
        bool extrapolate = false;
        std::vector<std::int64_t> index;
        std::vector<double> weight;
    };
    static std::vector<double> coeffs(const settings& s, double ratio, bool integral) {
        switch (s.mode) {
            case mode_t::nearest:
                if (integral) return {0.0, 1.0};
                switch (s.nearest) {
                    case nearest_t::round_prefer_floor: return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
                    case nearest_t::round_prefer_ceil: return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
                    case nearest_t::floor: return {1.0, 0.0};
                    case nearest_t::ceil: return {0.0, 1.0};
                }
                return {};
            case mode_t::linear: return {1.0 - ratio, ratio};
            case mode_t::cubic: {
                const double A = s.cubic_a, r = ratio, q = 1.0 - ratio;
                return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
                        ((A + 2) * r - (A + 3)) * r * r + 1,
                        ((A + 2) * q - (A + 3)) * q * q + 1,
                        ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A};
            }
        }
        return {};
    }
    /// Taps of output coordinate x along an axis of `in` elements.
    static taps axis_taps(const settings& s, std::int64_t x_resized, std::int64_t in, double scale, double roi_start,
                          double roi_end, std::string_view op_type) {
        const double x = static_cast<double>(x_resized), len = static_cast<double>(in);
        const double out_w = scale * len;  // the reference's output_width (a real number)
        double xo = 0.0;
        taps t;
        switch (s.ctm) {
            case ctm_t::align_corners: xo = out_w == 1.0 ? 0.0 : x * (len - 1) / (out_w - 1); break;
            case ctm_t::asymmetric: xo = x / scale; break;
            case ctm_t::tf_crop_and_resize:
                xo = out_w == 1.0 ? (roi_end - roi_start) * (len - 1) / 2 : x * (roi_end - roi_start) * (len - 1) / (out_w - 1);
                xo += roi_start * (len - 1);
                if (xo < 0 || xo > len - 1) {
                    t.extrapolate = true;
                    return t;
                }
                break;
            case ctm_t::pytorch_half_pixel: xo = out_w == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5; break;
            case ctm_t::half_pixel: xo = (x + 0.5) / scale - 0.5; break;
            case ctm_t::tf_half_pixel_for_nn: xo = (x + 0.5) / scale; break;
        }
        if (!std::isfinite(xo) || std::fabs(xo) > 0x1p40) {
            throw error(std::string(op_type), "source coordinate " + std::to_string(xo) + " is out of range");
        }
        const double fl = std::floor(xo);
        const bool integral = xo == fl;
        const double ratio = integral ? 1.0 : xo - fl;
        auto w = coeffs(s, ratio, integral);
        const auto n = static_cast<std::int64_t>(w.size());
        const std::int64_t p = (n + 1) / 2;  // edge padding of the reference
        const std::int64_t L = in + 2 * p;
        // The n padded indices nearest to xo + p (ties to the lower index), kept inside [0, L).
        std::int64_t start = static_cast<std::int64_t>(std::ceil(xo + static_cast<double>(p))) - n / 2;
        start = std::clamp<std::int64_t>(start, 0, L - n);
        std::vector<double> inside = w;
        double sum = 0;
        for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t idx = start + j - p;
            if (idx < 0 || idx >= in) inside[static_cast<std::size_t>(j)] = 0.0;
            sum += inside[static_cast<std::size_t>(j)];
            t.index.push_back(std::clamp<std::int64_t>(idx, 0, in - 1));
        }
        // exclude_outside renormalizes the weights inside X. When none is left
        // (only nearest can pick a tap outside alone), the reference divides by
        // zero; we keep the edge-clamped tap instead.
        if (s.exclude_outside && sum != 0.0) {
            for (double& v : inside) v /= sum;
            w = std::move(inside);
        }
        t.weight = std::move(w);
        return t;
    }

    /// Y from X, output dims, per-axis scales (used by the coordinate transforms) and roi.
    template <class T>
    static array<T> interpolate(const array<T>& x, const std::vector<std::int64_t>& out, const std::vector<double>& scales,
                                const std::vector<double>& roi, const settings& s, std::string_view op_type) {
        // Integer and bool images interpolate in double and truncate once (ONNX's
        // reference: numpy, then astype); nearest picks stay exact.
        using acc = std::conditional_t<std::is_integral_v<T>, double, acc_t<T>>;
        namespace util = detail::nn;
        const auto xd = util::dims_of(x);
        const std::size_t r = xd.size();
        std::vector<std::vector<taps>> axis(r);
        for (std::size_t i = 0; i < r; ++i) {
            if (xd[i] == 0 && out[i] != 0) throw shape_error(std::string(op_type), "cannot resize an empty axis to a non-empty one");
            for (std::int64_t o = 0; o < out[i] && xd[i] > 0; ++o) {
                const double rs = roi.empty() ? 0.0 : roi[i], re = roi.empty() ? 1.0 : roi[r + i];
                axis[i].push_back(axis_taps(s, o, xd[i], scales[i], rs, re, op_type));
            }
        }
        auto y = array<T>::from_shape(util::to_shape(out, op_type));
        const auto xstrides = detail::strides_of(shape_type(x.shape().begin(), x.shape().end()));
        std::size_t f = 0;
        // Scratch reused across output elements (the loops run per element).
        std::vector<const taps*> tp(r);
        std::vector<std::size_t> counts(r), j(r);
        util::for_each_index(out, [&](std::span<const std::int64_t> o) {
            bool empty = false;
            for (std::size_t i = 0; i < r; ++i) {
                tp[i] = &axis[i][static_cast<std::size_t>(o[i])];
                if (tp[i]->extrapolate) {
                    y.data()[f++] = value_cast<T>(s.extrapolation);
                    return;
                }
                counts[i] = tp[i]->index.size();
                empty = empty || counts[i] == 0;
            }
            acc sum = 0;
            // Every tap combination, row-major (the last axis fastest).
            std::fill(j.begin(), j.end(), std::size_t{0});
            for (bool more = !empty; more;) {
                double w = 1.0;
                std::size_t off = 0;
                for (std::size_t i = 0; i < r; ++i) {
                    w *= tp[i]->weight[j[i]];
                    off += static_cast<std::size_t>(tp[i]->index[j[i]]) * xstrides[i];
                }
                sum += static_cast<acc>(w) * static_cast<acc>(x.data()[off]);
                more = false;
                for (std::size_t i = r; i-- > 0;) {
                    if (++j[i] < counts[i]) {
                        more = true;
                        break;
                    }
                    j[i] = 0;
                }
            }
            y.data()[f++] = value_cast<T>(sum);
        });
        return y;
    }
};
}  // namespace nn

/// Resize(X, roi?, scales?, sizes?): exactly one of scales (float32) and sizes
/// (int64) is given and non-empty; roi is used by tf_crop_and_resize only.
struct resize {
    static constexpr std::string_view op_type = "Resize";
    static constexpr int opset = 13;
    using attributes = resize_attr;
    static constexpr spec::dtype_set types = spec::types::all;
    static constexpr std::array<spec::value_spec, 4> inputs{{{"X", types, {1, 8}},
                                                             {"roi", spec::types::ieee_floating, {1, 1}, "T2", true},
                                                             {"scales", spec::dtypes_of(dtype::f32), {1, 1}, "Tscales", true},
                                                             {"sizes", spec::types::int64, {1, 1}, "Tsizes", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {1, 8}}}};

    static bool given(const spec::context& c, std::size_t i) { return c.has_input(i) && c.element_count(i) > 0; }

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        using spec::expr;
        const auto s = nn::resize_impl::parse(spec::parse_attributes<attributes>(c.attributes(), op_type), op_type);
        const std::size_t r = c.rank(0);
        const bool has_scales = given(c, 2), has_sizes = given(c, 3);
        std::vector<spec::constraint> cs{{expr(has_scales != has_sizes), "exactly one of scales and sizes is given"}};
        if (has_scales) {
            cs.push_back({c.dim(2, 0) == expr(r), "scales has one value per axis of X"});
            if (c.element_count(2) == r) (void)nn::resize_impl::scaled_dims(c.concrete_shape(0), c.input(2).values<float>(), op_type);
        }
        if (has_sizes) {
            cs.push_back({c.dim(3, 0) == expr(r), "sizes has one value per axis of X"});
            if (c.element_count(3) == r) {
                const auto v = c.values(3);
                for (std::size_t i = 0; i < r; ++i) {
                    cs.push_back({v[i] >= 0, "sizes >= 0 (axis " + std::to_string(i) + ")"});
                    cs.push_back({c.dim(0, i) >= 1 || v[i] == 0, "an empty axis resizes to 0 (axis " + std::to_string(i) + ")"});
                }
            }
        }
        if (s.ctm == nn::resize_impl::ctm_t::tf_crop_and_resize) {
            cs.push_back({expr(c.has_input(1)), "tf_crop_and_resize needs roi"});
            if (c.has_input(1)) cs.push_back({c.dim(1, 0) == expr(2 * r), "roi has a start and an end per axis of X"});
        }
        return cs;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        if (given(c, 3)) return {c.values(3)};
        const auto d = nn::resize_impl::scaled_dims(c.concrete_shape(0), c.input(2).values<float>(), op_type);
        std::vector<spec::expr> y;
        for (const auto v : d) y.emplace_back(v);
        return {y};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        return {{{out}, {rank}}, {types.members(), {1}}, {{dtype::f32}, {1}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// scales or sizes: exactly one non-empty. roi: 2 * rank values or empty.
    template <class T>
    static array<T> compute(const array<T>& x, const std::vector<double>& roi, const std::vector<float>& scales,
                            const std::vector<std::int64_t>& sizes, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<resize, T>::value);
        const auto s = nn::resize_impl::parse(a, op_type);
        const std::size_t r = x.dimension();
        const shape_type xs(x.shape().begin(), x.shape().end());
        if (scales.empty() == sizes.empty()) throw shape_error(std::string(op_type), "exactly one of scales and sizes must be given");
        std::vector<std::int64_t> out;
        std::vector<double> sc(r);
        if (!sizes.empty()) {
            if (sizes.size() != r) throw shape_error(std::string(op_type), "sizes must have one value per axis of X");
            out = sizes;
            for (std::size_t i = 0; i < r; ++i) {
                if (out[i] < 0) throw shape_error(std::string(op_type), "sizes must be >= 0");
                sc[i] = xs[i] == 0 ? 1.0 : static_cast<double>(out[i]) / static_cast<double>(xs[i]);
            }
        } else {
            out = nn::resize_impl::scaled_dims(xs, scales, op_type);
            for (std::size_t i = 0; i < r; ++i) sc[i] = static_cast<double>(scales[i]);
        }
        if (s.ctm == nn::resize_impl::ctm_t::tf_crop_and_resize && roi.size() != 2 * r) {
            throw shape_error(std::string(op_type), "tf_crop_and_resize needs roi with a start and an end per axis");
        }
        return nn::resize_impl::interpolate(x, out, sc, s.ctm == nn::resize_impl::ctm_t::tf_crop_and_resize ? roi : std::vector<double>{},
                                            s, op_type);
    }
    /// roi, scales and sizes as compute takes them (empty when absent).
    struct params {
        std::vector<double> roi;
        std::vector<float> scales;
        std::vector<std::int64_t> sizes;
    };
    static params read_params(const spec::context& c) {
        params p;
        if (c.has_input(1)) {
            const auto v = c.input(1).to<double>();
            p.roi.assign(v.begin(), v.end());
        }
        if (given(c, 2)) {
            const auto v = c.input(2).values<float>();
            p.scales.assign(v.begin(), v.end());
        }
        if (given(c, 3)) {
            const auto v = c.input(3).values<std::int64_t>();
            p.sizes.assign(v.begin(), v.end());
        }
        return p;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto p = read_params(c);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), p.roi, p.scales, p.sizes, at));
        }));
    }
    /// X only: roi and scales are grid parameters (the coordinates are computed
    /// in double, and scales also fix the output shape), not data.
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        return {0};
    }
    /// The kernel on AD scalar S. The interpolation weights depend on
    /// coordinates only, so Y is linear in X; an integer X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        const auto p = read_params(c);
        return {compute<S>(x[0], p.roi, p.scales, p.sizes, at)};
    }
    template <int = 0>
    static spec::hints hints() {
        const auto floats = [](rng& g, std::size_t n, double lo, double hi) {
            auto t = array<float>::from_shape({n});
            for (std::size_t i = 0; i < n; ++i) t.data()[i] = static_cast<float>(g.uniform(lo, hi));
            return tensor(t);
        };
        return spec::hints{}
            .choice("mode", {std::string("nearest"), std::string("linear"), std::string("cubic")}, 0.8)
            // Each output element reads 1 (nearest), 2 (linear) or 4 (cubic) taps along every axis.
            .work([](const spec::context& c, const std::vector<std::vector<spec::expr>>& out) {
                const auto it = c.attributes().find("mode");
                const auto* mode = it != c.attributes().end() ? std::get_if<std::string>(&it->second) : nullptr;
                const std::int64_t per_axis = mode == nullptr || *mode == "nearest" ? 1 : (*mode == "linear" ? 2 : 4);
                std::int64_t taps = 1;
                for (std::size_t a = 0; a < c.rank(0); ++a) taps *= per_axis;
                return spec::product(out[0]) * taps;
            })
            .choice("coordinate_transformation_mode",
                    {std::string("half_pixel"), std::string("pytorch_half_pixel"), std::string("align_corners"),
                     std::string("asymmetric"), std::string("tf_half_pixel_for_nn"), std::string("tf_crop_and_resize")},
                    0.8)
            .choice("nearest_mode", {std::string("round_prefer_floor"), std::string("round_prefer_ceil"), std::string("floor"), std::string("ceil")}, 0.5)
            .real("cubic_coeff_a", -0.75, -0.5, 0.3)
            .flag("exclude_outside", 0.3)
            .real("extrapolation_value", -10.0, 10.0, 0.3)
            .optional_input(1, 0.3)
            .optional_input(2, 0.5)
            .optional_input(3, 0.5)
            .before_solving(1, [floats](rng& g, const spec::context& c) {  // roi: starts in [0, 0.3], ends in [0.7, 1]
                const std::size_t r = c.rank(0);
                tensor t = floats(g, 2 * r, 0.0, 0.3);
                for (std::size_t i = 0; i < r; ++i) t.values<float>()[r + i] = static_cast<float>(g.uniform(0.7, 1.0));
                return t.cast(c.input_dtype(1));
            })
            .before_solving(2, [](rng& g, const spec::context& c) {  // scales: a few exact binary fractions
                static constexpr std::array<float, 6> choices{0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 3.0f};
                auto t = array<float>::from_shape({c.rank(0)});
                for (auto& v : t) v = choices[static_cast<std::size_t>(g.below(choices.size()))];
                return tensor(t);
            });
    }
};

struct upsample_attr {
    std::string mode = "nearest";
};

/// Upsample-9(X, scales): deprecated Resize; asymmetric coordinates, nearest
/// rounds down, linear interpolates; scales >= 1, output floor(x * scale).
struct upsample {
    static constexpr std::string_view op_type = "Upsample";
    static constexpr int opset = 9;
    static constexpr int last_opset = 9;  // deprecated from opset 10 on (Resize replaces it)
    using attributes = upsample_attr;
    static constexpr spec::dtype_set types = spec::types::ieee_floating | spec::types::integers | spec::types::boolean;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"X", types, {1, 8}}, {"scales", spec::dtypes_of(dtype::f32), {1, 1}, "Tscales"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", types, {1, 8}}}};

    static resize_attr as_resize(const attributes& a) {
        if (a.mode != "nearest" && a.mode != "linear") {
            throw error(std::string(op_type), "mode must be nearest or linear, got '" + a.mode + "'");
        }
        resize_attr r;
        r.mode = a.mode;
        r.coordinate_transformation_mode = "asymmetric";
        r.nearest_mode = "floor";
        return r;
    }
    static void check_scales(std::span<const float> s) {
        for (const float v : s) {
            if (!(v >= 1.0f) || !std::isfinite(v)) throw error(std::string(op_type), "scales must be finite and >= 1");
        }
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        (void)as_resize(spec::parse_attributes<attributes>(c.attributes(), op_type));
        check_scales(c.input(1).values<float>());
        return {{c.dim(1, 0) == spec::expr(c.rank(0)), "scales has one value per axis of X"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto d = nn::resize_impl::scaled_dims(c.concrete_shape(0), c.input(1).values<float>(), op_type);
        std::vector<spec::expr> y;
        for (const auto v : d) y.emplace_back(v);
        return {y};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out)) return {};
        return {{{out}, {rank}}, {{dtype::f32}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }
    template <class T>
    static array<T> compute(const array<T>& x, const std::vector<float>& scales, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<upsample, T>::value);
        check_scales(scales);
        return resize::compute<T>(x, {}, scales, {}, as_resize(a));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto scales = scales_of(c);
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), scales, at));
        }));
    }
    static std::vector<float> scales_of(const spec::context& c) {
        const auto v = c.input(1).values<float>();
        return {v.begin(), v.end()};
    }
    /// X only: the (float) scales set the geometry, they are not data.
    static std::vector<std::size_t> differentiable_inputs(const spec::context& c) {
        if (!info(c.input_dtype(0)).is_floating) return {};
        return {0};
    }
    /// The kernel on AD scalar S (linear in X); an integer X has no floating output.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto at = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {compute<S>(x[0], scales_of(c), at)};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .choice("mode", {std::string("nearest"), std::string("linear")}, 0.8)
            .before_solving(1, [](rng& g, const spec::context& c) {  // scales >= 1
                static constexpr std::array<float, 4> choices{1.0f, 1.5f, 2.0f, 3.0f};
                auto t = array<float>::from_shape({c.rank(0)});
                for (auto& v : t) v = choices[static_cast<std::size_t>(g.below(choices.size()))];
                return tensor(t);
            });
    }
};

inline constexpr auto nn_ops = hana::tuple_t<matmul, gemm, conv, conv_transpose, max_pool, average_pool, global_average_pool,
                                             global_max_pool, lrn, resize, upsample>;

/// ONNX-named aliases, the names the rest of the kit uses for op specs.
using GlobalAveragePool = global_average_pool;
using GlobalMaxPool = global_max_pool;
using MatMul = matmul;
using Gemm = gemm;
using Conv = conv;
using ConvTranspose = conv_transpose;
using MaxPool = max_pool;
using AveragePool = average_pool;
using LRN = lrn;
using Resize = resize;
using Upsample = upsample;


}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::gemm_attr, alpha, beta, transA, transB);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::conv_attr, auto_pad, dilations, group, kernel_shape, pads, strides);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::conv_transpose_attr, auto_pad, dilations, group, kernel_shape, output_padding,
                        output_shape, pads, strides);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::max_pool_attr, auto_pad, ceil_mode, dilations, kernel_shape, pads, storage_order,
                        strides);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::average_pool_attr, auto_pad, ceil_mode, count_include_pad, kernel_shape, pads,
                        strides);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::lrn_attr, alpha, beta, bias, size);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::resize_attr, coordinate_transformation_mode, cubic_coeff_a, exclude_outside,
                        extrapolation_value, mode, nearest_mode);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::upsample_attr, mode);
// ---- end tensoracle/ops/nn.hpp ----
// ---- begin tensoracle/ops/reduce.hpp ----
// tensoracle: reductions, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax and
// normalizations (LayerNormalization, BatchNormalization, InstanceNormalization,
// LpNormalization).
//
// Semantics chosen where ONNX leaves them open:
// - Axes: negative axes count from the end; out-of-range or repeated axes are
//   constraint violations (and a shape_error from the typed kernels).
// - `axes` of the Reduce* ops: the attribute form (ReduceSum-11, the others up
//   to opset 17) is accepted by every op; ReduceSum also takes the opset-13
//   optional int64 input. Giving both is a constraint violation. An empty or
//   absent list reduces over every axis, except that ReduceSum with
//   noop_with_empty_axes=1 then returns the input unchanged (keepdims ignored).
// - Empty reductions: Sum, L1, L2, SumSquare give 0; Prod gives 1; Mean gives
//   NaN (0/0); Max gives -inf (integers: the type's lowest value), Min gives
//   +inf (integers: the type's max), as ONNX-18 documents; LogSum and
//   LogSumExp give log(0) = -inf. ArgMax/ArgMin over an empty axis are
//   constraint violations (there is no index to return).
// - NaN: ReduceMax/ReduceMin propagate NaN (numpy maximum.reduce); ArgMax,
//   ArgMin and Hardmax treat NaN as the extreme value (numpy argmax/argmin:
//   the first NaN wins, the last one with select_last_index=1).
// - Integers: ReduceSum/Prod/L1/SumSquare (int32, int64) and ReduceMax/Min
//   (int8, uint8, int32, int64) accumulate in int64 with wrap-around and wrap
//   once more to the element width (two's complement, no UB). ReduceMean, L2,
//   LogSum and LogSumExp are floating-only here: ONNX lists int32/int64 for
//   them but leaves the rounding of the integer result unspecified.
// - Precision: float accumulation for f16/bf16/f32, double for f64, one
//   rounding to the element type at the end. LayerNormalization's stash_type
//   selects the dtype of Mean/InvStdDev (1: float, 16: bfloat16); the
//   computation itself uses the accumulator above (double for f64 inputs),
//   i.e. at least the stash precision.
// - ReduceLogSumExp and Softmax/LogSoftmax subtract the maximum before exp;
//   this is value-preserving in real arithmetic (see the kernels).
// - BatchNormalization: inference mode only (training_mode=1 throws
//   unsupported_error); momentum is accepted and ignored. X has rank >= 2 (N, C, ...).
// - InstanceNormalization: X has rank >= 3 (N, C, D1, ...); statistics per
//   (n, c) over D1..Dk, population variance.
// - LayerNormalization: Scale and B broadcast unidirectionally to the
//   normalized shape X.shape[axis:] (right-aligned, dims equal or 1).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

// ---- begin tensoracle/ops/detail/reduce_util.hpp ----
// tensoracle: helpers of the reduction family (ops/reduce.hpp): symbolic axis
// constraints and reduced shapes, and the runtime plan that maps each input
// element to the output element it is reduced into.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>


namespace tensoracle::ops::detail {

// ---------------------------------------------------------------- symbolic

/// `a` (an axis symbol in [-r, r)) names axis k of a rank-r tensor.
[[nodiscard]] inline spec::expr axis_is(const spec::expr& a, std::size_t k, std::size_t r) {
    return a == spec::expr(k) || a == spec::expr(static_cast<std::int64_t>(k) - static_cast<std::int64_t>(r));
}

/// Some axis of `axes` names axis k (false for an empty list).
[[nodiscard]] inline spec::expr any_axis_is(const std::vector<spec::expr>& axes, std::size_t k, std::size_t r) {
    if (axes.empty()) return spec::expr(0) == spec::expr(1);
    spec::expr e = axis_is(axes[0], k, r);
    for (std::size_t j = 1; j < axes.size(); ++j) e = e || axis_is(axes[j], k, r);
    return e;
}

/// The axis symbol normalized into [0, r) (valid once the range constraint holds).
[[nodiscard]] inline spec::expr normalized_axis(const spec::expr& a, std::size_t r) {
    return select(a < spec::expr(0), a + spec::expr(r), a);
}

/// One axis lies in [-r, r).
[[nodiscard]] inline spec::constraint axis_in_range(const spec::expr& a, std::size_t r, const std::string& what) {
    return {spec::expr(-static_cast<std::int64_t>(r)) <= a && a < spec::expr(r),
            what + " lies in [-rank, rank) with rank " + std::to_string(r)};
}

/// Every axis lies in [-r, r) and no two name the same axis.
[[nodiscard]] inline std::vector<spec::constraint> axes_constraints(const std::vector<spec::expr>& axes, std::size_t r,
                                                                  const std::string& what) {
    std::vector<spec::constraint> out;
    for (std::size_t j = 0; j < axes.size(); ++j) {
        out.push_back(axis_in_range(axes[j], r, what + "[" + std::to_string(j) + "]"));
    }
    for (std::size_t i = 0; i < axes.size(); ++i) {
        for (std::size_t j = i + 1; j < axes.size(); ++j) {
            out.push_back({normalized_axis(axes[i], r) != normalized_axis(axes[j], r),
                           what + "[" + std::to_string(i) + "] and " + what + "[" + std::to_string(j) +
                               "] name different axes"});
        }
    }
    return out;
}

/// An int attribute is 0 or 1.
[[nodiscard]] inline spec::constraint is_flag(const spec::expr& a, const std::string& name) {
    return {a == spec::expr(0) || a == spec::expr(1), name + " is 0 or 1"};
}

/// Output dims of reducing `dims` over distinct `axes` (every axis when the
/// list is empty): reduced dims become 1 (keepdims) or are dropped. With
/// symbolic axes the surviving dims are selected by counting: output dim m is
/// the input dim k that is not reduced and has m unreduced dims before it.
[[nodiscard]] inline std::vector<spec::expr> reduced_dims(const std::vector<spec::expr>& dims,
                                                          const std::vector<spec::expr>& axes, bool keepdims,
                                                          std::string_view op) {
    const std::size_t r = dims.size();
    if (axes.empty()) return keepdims ? std::vector<spec::expr>(r, spec::expr(1)) : std::vector<spec::expr>{};
    std::vector<spec::expr> red;
    for (std::size_t k = 0; k < r; ++k) red.push_back(any_axis_is(axes, k, r));
    if (keepdims) {
        std::vector<spec::expr> out;
        for (std::size_t k = 0; k < r; ++k) out.push_back(select(red[k], spec::expr(1), dims[k]));
        return out;
    }
    if (axes.size() > r) {
        throw shape_error(op, std::to_string(axes.size()) + " axes cannot be distinct axes of rank " + std::to_string(r));
    }
    std::vector<spec::expr> out;
    for (std::size_t m = 0; m + axes.size() < r; ++m) {
        spec::expr d(0), before(0);  // before: unreduced dims left of k
        for (std::size_t k = 0; k < r; ++k) {
            d = d + select(!red[k] && before == spec::expr(m), dims[k], spec::expr(0));
            before = before + select(red[k], spec::expr(0), spec::expr(1));
        }
        out.push_back(d);
    }
    return out;
}

// ---------------------------------------------------------------- runtime

/// Which axes of a rank-r tensor `axes` names (negative counts from the end);
/// out of range or repeated axes are a shape_error naming the op.
[[nodiscard]] inline std::vector<bool> axis_mask(const std::vector<std::int64_t>& axes, std::size_t r,
                                                 std::string_view op) {
    std::vector<bool> mask(r, false);
    const auto sr = static_cast<std::int64_t>(r);
    for (const std::int64_t a : axes) {
        if (a < -sr || a >= sr) {
            throw shape_error(op, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(r));
        }
        const auto k = static_cast<std::size_t>(a < 0 ? a + sr : a);
        if (mask[k]) throw shape_error(op, "axis " + std::to_string(a) + " is repeated in axes");
        mask[k] = true;
    }
    return mask;
}

/// The output shape of reducing `in` over the axes in `mask`: reduced dims
/// become 1 (keepdims) or are dropped. Dropping size-1 dims does not move
/// elements, so the flat output index is the same either way.
[[nodiscard]] inline shape_type reduced_shape(const shape_type& in, const std::vector<bool>& mask, bool keepdims) {
    shape_type out;
    for (std::size_t k = 0; k < in.size(); ++k) {
        if (!mask[k]) out.push_back(in[k]);
        else if (keepdims) out.push_back(1);
    }
    return out;
}

/// Calls visit(o, group) for each output element o of reducing a tensor of
/// shape `in` (values x) over the axes in `mask`, in row-major output order;
/// `group` holds the group's values converted to A, in input order (the order
/// the formulas accumulate in). Adjacent axes of the same kind are merged, so
/// the walk costs one odometer step per contiguous run, not index arithmetic
/// per element; an empty reduced axis gives empty groups.
template <class A, class T, class Visit>
void for_each_reduce_group(std::span<const T> x, const shape_type& in, const std::vector<bool>& mask, Visit&& visit) {
    struct run {
        std::size_t n, stride;
    };
    std::vector<run> kept, red;  // outer to inner, each list merged
    std::size_t stride = 1;
    bool last_reduced = false, any = false;
    for (std::size_t k = in.size(); k-- > 0;) {
        const std::size_t n = in[k];
        if (n != 1) {
            auto& list = mask[k] ? red : kept;
            if (any && last_reduced == mask[k]) {
                list.back().n *= n;  // row-major neighbours of one kind form one axis
            } else {
                list.push_back({n, stride});
            }
            last_reduced = mask[k];
            any = true;
        }
        stride *= n;
    }
    std::reverse(kept.begin(), kept.end());
    std::reverse(red.begin(), red.end());
    std::size_t group = 1, outputs = 1;
    for (const auto& r : red) group *= r.n;
    for (const auto& r : kept) outputs *= r.n;
    if (element_count(in) == 0) {  // some axis is 0: either no outputs or empty groups
        std::size_t out_n = 1;
        for (std::size_t k = 0; k < in.size(); ++k) out_n *= mask[k] ? 1 : in[k];
        for (std::size_t o = 0; o < out_n; ++o) visit(o, std::span<const A>{});
        return;
    }
    std::vector<A> buf;
    // The innermost reduced axis is copied as one (possibly strided) run.
    const std::size_t inner = red.empty() ? 1 : red.back().n, inner_stride = red.empty() ? 1 : red.back().stride;
    const std::size_t outer_red = red.empty() ? 0 : red.size() - 1;
    std::vector<std::size_t> kidx(kept.size(), 0), ridx(outer_red, 0);
    std::size_t base = 0;
    // A contiguous group already in the accumulator's type is handed over in place.
    const bool in_place = std::is_same_v<A, T> && outer_red == 0 && inner_stride == 1;
    if (!in_place) buf.resize(group);
    for (std::size_t o = 0; o < outputs; ++o) {
        if constexpr (std::is_same_v<A, T>) {
            if (in_place) visit(o, std::span<const A>(x.data() + base, group));
        }
        std::size_t off = base, b = 0;
        while (!in_place && b < group) {
            const T* src = x.data() + off;
            if (inner_stride == 1) {
                for (std::size_t i = 0; i < inner; ++i) buf[b + i] = value_cast<A>(src[i]);
            } else {
                for (std::size_t i = 0; i < inner; ++i) buf[b + i] = value_cast<A>(src[i * inner_stride]);
            }
            b += inner;
            for (std::size_t k = outer_red; k-- > 0;) {
                off += red[k].stride;
                if (++ridx[k] < red[k].n) break;
                off -= red[k].stride * red[k].n;
                ridx[k] = 0;
            }
        }
        if (!in_place) visit(o, std::span<const A>(buf.data(), group));
        for (std::size_t k = kept.size(); k-- > 0;) {
            base += kept[k].stride;
            if (++kidx[k] < kept[k].n) break;
            base -= kept[k].stride * kept[k].n;
            kidx[k] = 0;
        }
    }
}

/// The values of each reduction group, in input order, converted to A.
template <class A, class T>
[[nodiscard]] std::vector<std::vector<A>> reduce_groups(std::span<const T> x, const shape_type& in,
                                                        const std::vector<bool>& mask) {
    std::vector<std::vector<A>> groups;
    for_each_reduce_group<A>(x, in, mask,
                             [&](std::size_t, std::span<const A> g) { groups.emplace_back(g.begin(), g.end()); });
    return groups;
}

/// A tensor split around one axis: outer x n x inner, element (o, i, j) at
/// o * n * inner + i * inner + j.
struct axis_split {
    std::size_t outer = 1, n = 1, inner = 1;
    [[nodiscard]] std::size_t at(std::size_t o, std::size_t i, std::size_t j) const { return (o * n + i) * inner + j; }
};
[[nodiscard]] inline axis_split split_at(const shape_type& s, std::size_t axis) {
    axis_split r;
    for (std::size_t k = 0; k < s.size(); ++k) {
        if (k < axis) r.outer *= s[k];
        if (k == axis) r.n = s[k];
        if (k > axis) r.inner *= s[k];
    }
    return r;
}

/// Accumulator of the family: float for f16/bf16/f32, double for f64,
/// int64 (wrapping) for integers; AD scalars accumulate in themselves so that
/// derivatives flow through the accumulation.
template <class T>
using reduce_acc_t =
    std::conditional_t<ad_scalar<T>, T,
                       std::conditional_t<std::is_same_v<T, double>, double,
                                          std::conditional_t<floating_element<T>, float, std::int64_t>>>;

/// a + b and a * b; integers wrap modulo 2^64 (no UB), then once more to T's width.
template <class A>
[[nodiscard]] A acc_add(A a, A b) {
    if constexpr (std::is_integral_v<A>) {
        return static_cast<A>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
    } else {
        return a + b;
    }
}
template <class A>
[[nodiscard]] A acc_mul(A a, A b) {
    if constexpr (std::is_integral_v<A>) {
        return static_cast<A>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
    } else {
        return a * b;
    }
}
template <class A>
[[nodiscard]] A acc_abs(A a) {
    if constexpr (std::is_integral_v<A>) {
        return a < 0 ? static_cast<A>(std::uint64_t{0} - static_cast<std::uint64_t>(a)) : a;  // INT64_MIN wraps
    } else {
        return math::fabs(a);
    }
}

}  // namespace tensoracle::ops::detail
// ---- end tensoracle/ops/detail/reduce_util.hpp ----

namespace tensoracle::ops {

namespace reduce {
using spec::dtype_set;
namespace types = spec::types;

struct reduce_attr {
    std::optional<std::vector<std::int64_t>> axes;
    std::int64_t keepdims = 1;
};
struct reduce_sum_attr {
    std::optional<std::vector<std::int64_t>> axes;
    std::int64_t keepdims = 1;
    std::int64_t noop_with_empty_axes = 0;
};

using tensoracle::is_nan;

/// For ArgMax/ArgMin/Hardmax: does candidate v beat (or, with `ties`, tie)
/// the current best b? NaN is the extreme value either way.
template <bool Max, class T>
bool replaces(const T& v, const T& b, bool ties) {
    if (is_nan(b)) return ties && is_nan(v);
    if (is_nan(v)) return true;
    if constexpr (Max) {
        return v > b || (ties && v == b);
    } else {
        return v < b || (ties && v == b);
    }
}

/// The value of a scalar as a constant of its own type (no derivative parts).
/// The max shifts of log-sum-exp and softmax use it: any constant shift c gives
/// the same function (exp(a - c) = exp(a) / exp(c) cancels), so its derivative
/// is exactly the unshifted one, to every order; a shift that carried the
/// derivative of the maximum would cancel only up to rounding.
template <class A>
A constant_of(const A& m) {
    if constexpr (ad_scalar<A>) {
        return A(primal(m));
    } else {
        return m;
    }
}

/// Stable log(sum(exp(v))): with m = max(v), log(sum(exp(v))) = m + log(sum(exp(v - m)))
/// exactly in real arithmetic (exp(a - m) = exp(a) / exp(m)), and exp(v - m) <= 1
/// cannot overflow. Empty or all -inf: -inf (log 0); a NaN or +inf: NaN or +inf.
template <class A>
A log_sum_exp(std::span<const A> v) {
    A m = -std::numeric_limits<A>::infinity();
    for (const A& x : v) {
        if (math::isnan(x)) return x;
        m = std::max(m, x);
    }
    if (math::isinf(m)) return m;  // -inf: every term is exp(-inf) = 0; +inf: the sum is +inf
    m = constant_of(m);
    A s = 0;
    for (const A& x : v) s += math::exp(x - m);
    return m + math::log(s);
}

#define TENSORACLE_REDUCE(NAME, OPTYPE, TYPES)               \
    struct NAME##_fn {                                        \
        static constexpr std::string_view op_type = OPTYPE;  \
        static constexpr int opset = 13;                      \
        static constexpr dtype_set types = TYPES;

inline constexpr dtype_set sum_types = types::floating | types::indices;
inline constexpr dtype_set minmax_types = types::floating | spec::dtypes_of(dtype::i8, dtype::u8, dtype::i32, dtype::i64);

// reduced = sum(x)
TENSORACLE_REDUCE(sum, "ReduceSum", sum_types)
    static constexpr bool axes_input = true;
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s = detail::acc_add(s, x);
        return s;
    }
};
// reduced = sum(x) / count (empty: 0 / 0 = NaN)
TENSORACLE_REDUCE(mean, "ReduceMean", sum_types)
    static constexpr bool within_input = true;  // value facts: inside the input's range
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s += x;
        return s / static_cast<A>(v.size());
    }
};
// reduced = max(x) (empty: -inf / lowest; NaN propagates)
TENSORACLE_REDUCE(max, "ReduceMax", minmax_types)
    static constexpr bool within_input = true;
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A m;
        if constexpr (std::is_integral_v<A>) {
            m = static_cast<A>(std::numeric_limits<T>::lowest());
        } else {
            m = -std::numeric_limits<A>::infinity();
        }
        for (const A& x : v) {
            if constexpr (!std::is_integral_v<A>) {
                if (math::isnan(x)) return x;
            }
            m = x > m ? x : m;  // a tie keeps the earlier element: the result carries its derivative
        }
        return m;
    }
};
// reduced = min(x) (empty: +inf / max; NaN propagates)
TENSORACLE_REDUCE(min, "ReduceMin", minmax_types)
    static constexpr bool within_input = true;
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A m;
        if constexpr (std::is_integral_v<A>) {
            m = static_cast<A>(std::numeric_limits<T>::max());
        } else {
            m = std::numeric_limits<A>::infinity();
        }
        for (const A& x : v) {
            if constexpr (!std::is_integral_v<A>) {
                if (math::isnan(x)) return x;
            }
            m = x < m ? x : m;
        }
        return m;
    }
};
// reduced = prod(x) (empty: 1)
TENSORACLE_REDUCE(prod, "ReduceProd", sum_types)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A p{1};
        for (const A& x : v) p = detail::acc_mul(p, x);
        return p;
    }
    static constexpr std::array<double, 2> range{-1.5, 1.5};
    static constexpr std::size_t max_dim = 3;  // groups of at most 27: |prod| <= 1.5^27 < f16 max
    /// Its finiteness rule measures sum(log |x|) (reduce_op::domain): a product of thousands of
    /// factors overflows even double, and a loss of "1 per infinite group" has no slope to follow.
    static constexpr bool multiplicative = true;
};
// reduced = sum(|x|)
TENSORACLE_REDUCE(l1, "ReduceL1", sum_types)
    static constexpr bool non_negative = true;  // value facts: [0, inf)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s = detail::acc_add(s, detail::acc_abs(x));
        return s;
    }
};
// reduced = sqrt(sum(x^2))
TENSORACLE_REDUCE(l2, "ReduceL2", sum_types)
    static constexpr bool non_negative = true;
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        // An empty group is the constant 0: sqrt's derivative at 0 (1 / 0) would
        // turn a zero tangent into NaN although nothing depends on an input.
        if (v.empty()) return A{0};
        A s{0};
        for (const A& x : v) s += x * x;
        return math::sqrt(s);
    }
    static std::vector<std::pair<std::string, double (*)(std::span<const double>, dtype)>> rules() {
        // The sum of squares is formed before the root: it must not overflow the
        // accumulator, and its root must fit the element type.
        return {{"sum(X^2) <= min(max finite of the accumulator, max finite^2)", [](std::span<const double> g, dtype d) {
                     double s = 0;
                     for (const double x : g) s += x * x;
                     const double acc_max = d == dtype::f64 ? detail::max_finite(dtype::f64) : detail::max_finite(dtype::f32);
                     const double m = detail::max_finite(d);
                     return s - std::min(acc_max, m * m);
                 }}};
    }
};
// reduced = sum(x^2)
TENSORACLE_REDUCE(sum_square, "ReduceSumSquare", sum_types)
    static constexpr bool non_negative = true;
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s = detail::acc_add(s, detail::acc_mul(x, x));
        return s;
    }
};
// reduced = log(sum(x)) (empty: -inf)
TENSORACLE_REDUCE(log_sum, "ReduceLogSum", sum_types)
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        A s{0};
        for (const A& x : v) s += x;
        return math::log(s);
    }
    static std::vector<std::pair<std::string, double (*)(std::span<const double>, dtype)>> rules() {
        return {{"sum(X) > 0 over each reduced group", [](std::span<const double> g, dtype) {
                     double s = 0;
                     for (const double x : g) s += x;
                     return 1e-10 - s;
                 }}};
    }
    /// A group's sum is positive only if some element is.
    static constexpr double (*some_element)(double) = [](double x) { return 1e-10 - x; };
    static constexpr std::array<double, 2> range{0.1, 4.0};
};
// reduced = log(sum(exp(x))), computed as max + log(sum(exp(x - max))) (value-preserving)
TENSORACLE_REDUCE(log_sum_exp, "ReduceLogSumExp", sum_types)
    static constexpr bool real_valued = true;  // integer inputs: computed in double, truncated (numpy astype)
    template <class T, class A>
    static A reduce(std::span<const A> v) {
        return log_sum_exp(v);
    }
    static std::vector<std::pair<std::string, double (*)(std::span<const double>, dtype)>> rules() {
        // Kept inside the range where the naive formula log(sum(exp(X))) is finite
        // too, so implementations without the max shift are comparable.
        return {{"sum(exp(X)) <= max finite", [](std::span<const double> g, dtype d) {
                     return log_sum_exp(g) - std::log(detail::max_finite(d));
                 }}};
    }
};
#undef TENSORACLE_REDUCE

/// Formulas computed in double for integer inputs. A named concept, not an
/// inline requires-expression: Clang 14 cannot mangle the latter in a template.
template <class F>
concept real_valued_reduction = requires { F::real_valued; };

}  // namespace reduce

/// A Reduce* op from its formula F (F::reduce<T, A> maps one group, as A, to A).
template <class F>
struct reduce_op {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = F::opset;
    static constexpr bool axes_input = requires { F::axes_input; };
    using attributes = std::conditional_t<axes_input, reduce::reduce_sum_attr, reduce::reduce_attr>;
    static constexpr auto inputs = [] {
        if constexpr (axes_input) {
            return std::array<spec::value_spec, 2>{
                {{"data", F::types}, {"axes", spec::types::int64, {1, 1}, "tensor(int64)", true}}};
        } else {
            return std::array<spec::value_spec, 1>{{{"data", F::types}}};
        }
    }();
    static constexpr std::array<spec::value_spec, 1> outputs{{{"reduced", F::types}}};

    static attributes parse(const spec::attribute_map& m) { return spec::parse_attributes<attributes>(m, op_type); }
    static bool noop(const attributes& a) {
        if constexpr (axes_input) {
            return a.noop_with_empty_axes != 0;
        } else {
            (void)a;
            return false;
        }
    }
    /// The axes as symbols: values of the `axes` input, else the attribute's elements.
    static std::vector<spec::expr> axes_symbols(const spec::context& c) {
        if (c.has_input(1)) return c.values(1);
        return c.attr_ints("axes");
    }

    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto a = parse(c.attributes());
        std::vector<spec::constraint> out{detail::is_flag(c.attr("keepdims"), "keepdims")};
        if constexpr (axes_input) {
            out.push_back(detail::is_flag(c.attr("noop_with_empty_axes"), "noop_with_empty_axes"));
            const bool both = c.has_input(1) && a.axes.has_value();
            out.push_back({spec::expr(both ? 0 : 1) == spec::expr(1),
                           "axes is given either as the attribute or as the input, not both"});
        }
        auto ax = detail::axes_constraints(axes_symbols(c), c.rank(0), "axes");
        out.insert(out.end(), ax.begin(), ax.end());
        return out;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto a = parse(c.attributes());
        const auto axes = axes_symbols(c);
        if (axes.empty() && noop(a)) return {c.shape(0)};
        return {detail::reduced_dims(c.shape(0), axes, a.keepdims != 0, op_type)};
    }
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!F::types.contains(out)) return {};
        std::vector<std::size_t> ranks;
        for (std::size_t r = rank; r <= spec::rank_range{}.max; ++r) ranks.push_back(r);
        if constexpr (axes_input) {
            return {{{out}, ranks}, {{dtype::i64}, {1}}};
        } else {
            return {{{out}, ranks}};
        }
    }

    /// The reduction groups of an instance's data (for domain losses), in double.
    static std::vector<std::vector<double>> groups_of(std::span<const tensor> in, const attributes& a) {
        std::vector<std::int64_t> axes = a.axes.value_or(std::vector<std::int64_t>{});
        if (in.size() > 1 && in[1].element_dtype() == dtype::i64 && in[1].size() > 0) {
            const auto v = in[1].values<std::int64_t>();
            axes.assign(v.begin(), v.end());
        }
        const auto& s = in[0].shape();
        const bool identity = axes.empty() && noop(a);
        const auto mask = identity ? std::vector<bool>(s.size(), false)
                                   : axes.empty() ? std::vector<bool>(s.size(), true) : detail::axis_mask(axes, s.size(), op_type);
        const auto x = in[0].to<double>();
        return detail::reduce_groups<double>(std::span<const double>(x.data(), x.size()), s, mask);
    }

    /// A product's finiteness in the log domain: a group overflows when the sum of
    /// log |x| over it exceeds log(max finite) (a zero factor keeps it finite); the
    /// loss is that excess, its gradient 1 / x on the elements of overflowing groups.
    static spec::domain_rule product_rule(const attributes& a) {
        // Per group: its elements' positions in the input and the excess of sum(log |x|).
        auto excess = [a](std::span<const tensor> in) {
            std::vector<std::pair<std::vector<double>, double>> over;
            const dtype d = in[0].element_dtype();
            if (!info(d).is_floating) return over;  // integers wrap, always finite
            const double limit = std::log(detail::max_finite(d));
            auto positions = array<double>::from_shape(in[0].shape());
            for (std::size_t k = 0; k < positions.size(); ++k) positions.data()[k] = static_cast<double>(k);
            const std::vector<tensor> where{tensor(positions)};
            const auto values = groups_of(in, a);
            const auto at = groups_of(where, a);
            for (std::size_t g = 0; g < values.size(); ++g) {
                double s = 0.0;
                for (const double x : values[g]) s += std::log(std::fabs(x));  // log 0 = -inf: finite
                if (std::isnan(s) || s > limit) over.emplace_back(at[g], std::isnan(s) ? 1.0 : s - limit);
            }
            return over;
        };
        return {"every product is finite (sum of log |x| per group <= log of the dtype's largest value)",
                [excess](std::span<const tensor> in) {
                    double loss = 0.0;
                    for (const auto& g : excess(in)) loss += g.second;
                    return loss;
                },
                [excess](std::span<const tensor> in) {
                    std::vector<tensor> grads(in.size());
                    const auto x = in[0].to<double>();
                    auto d = array<double>::from_shape(x.shape());
                    d.fill(0.0);
                    for (const auto& g : excess(in)) {
                        for (const double p : g.first) {
                            const auto k = static_cast<std::size_t>(p);
                            d.data()[k] = 1.0 / x.data()[k];
                        }
                    }
                    grads[0] = tensor(d);
                    return grads;
                }};
    }

    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = parse(attrs);
        std::vector<spec::domain_rule> out;
        if constexpr (requires { F::multiplicative; }) {
            out.push_back(product_rule(a));
        } else {
            out.push_back({"every reduced value is finite (non-empty groups, no overflow; computed in double)",
                           [a](std::span<const tensor> in) {
                               const dtype d = in[0].element_dtype();
                               if (!info(d).is_floating) return 0.0;  // integers wrap, always finite
                               double loss = 0.0;
                               const double m = detail::max_finite(d);
                               for (const auto& g : groups_of(in, a)) {
                                   const double r = F::template reduce<double, double>(std::span<const double>(g));
                                   if (!std::isfinite(r)) {
                                       loss += 1.0;
                                   } else if (std::fabs(r) > m) {
                                       loss += std::fabs(r) / m - 1.0;
                                   }
                               }
                               return loss;
                           }});
        }
        if constexpr (requires { F::rules(); }) {
            for (auto& rule : F::rules()) {
                const auto f = rule.second;  // named: lambdas may not capture bindings (Clang 14)
                out.push_back({rule.first, [a, f](std::span<const tensor> in) {
                                   double loss = 0.0;
                                   for (const auto& g : groups_of(in, a)) {
                                       const double h = f(std::span<const double>(g), in[0].element_dtype());
                                       loss += std::isnan(h) ? 1.0 : std::max(h, 0.0);
                                   }
                                   return loss;
                               }});
            }
        }
        if constexpr (requires { F::some_element; }) {
            // The last rule holds only if some element satisfies F::some_element (what the generator checks).
            out.back().elementwise_input = 0;
            out.back().elementwise = F::some_element;
            out.back().elementwise_any = true;
        }
        return out;
    }

    /// The typed kernel. `axes_in` is ReduceSum's `axes` input, when given.
    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {},
                            const std::optional<std::vector<std::int64_t>>& axes_in = std::nullopt) {
        static_assert(spec::dtype_accepted<reduce_op, T>::value);
        array<T> y;
        const bool same = reduce_into<T>(std::span<const T>(x.data(), x.size()),
                                         shape_type(x.shape().begin(), x.shape().end()), a, axes_in,
                                         [&](const shape_type& out) {
                                             y = array<T>::from_shape(out);
                                             return y.data();
                                         });
        if (same) return x;  // noop_with_empty_axes: the input, unchanged
        return y;
    }

    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<F::types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            // Straight from the input's buffer into the output's: no typed copies.
            tensor y;
            const bool same = reduce_into<T>(c.input(0).values<T>(), c.input(0).shape(), parse(c.attributes()),
                                             axes_input_of(c), [&](const shape_type& out) {
                                                 y = tensor::for_overwrite(dtype_of<T>, out);
                                                 return y.template values<T>().data();
                                             });
            return same ? c.input(0) : y;
        }));
    }
    /// Integer data has an integer output: nothing to differentiate, run() gives it.
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!spec::types::floating.contains(c.input_dtype(0))) return {array<S>{}};
        return {run_typed<S>(c, x[0])};
    }
    static spec::hints hints() {
        spec::hints h;
        h.flag("keepdims");
        // ReduceSum-13 takes axes only as an input: the attribute (which the spec
        // still reads, for older models) is not valid ONNX there.
        if constexpr (axes_input) h.flag("noop_with_empty_axes", 0.3).optional_input(1, 0.7).omit("axes");
        if constexpr (requires { F::range; }) h.range(0, F::range[0], F::range[1]);
        if constexpr (requires { F::within_input; }) {
            h.facts(spec::facts::selection_of(0));
        } else if constexpr (requires { F::non_negative; }) {
            h.facts([](std::span<const spec::value_facts>, const spec::attribute_map&, std::span<const shape_type>) {
                return std::vector<spec::value_facts>{spec::value_facts::within(0.0, std::numeric_limits<double>::infinity())};
            });
        }
        return h;
    }

private:
    /// compute<T> on the context's attributes and `axes` input; `data` is input 0 as T.
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& data) {
        return compute<T>(data, parse(c.attributes()), axes_input_of(c));
    }
    static std::optional<std::vector<std::int64_t>> axes_input_of(const spec::context& c) {
        if (!c.has_input(1)) return std::nullopt;
        const auto v = c.input(1).values<std::int64_t>();
        return std::vector<std::int64_t>(v.begin(), v.end());
    }
    /// Reduces x (shape s) into the buffer `make_output(out_shape)` returns;
    /// true, with nothing written, when the op is the identity
    /// (noop_with_empty_axes and no axes).
    template <class T, class MakeOutput>
    static bool reduce_into(std::span<const T> x, const shape_type& s, const attributes& a,
                            const std::optional<std::vector<std::int64_t>>& axes_in, MakeOutput&& make_output) {
        if (axes_in && a.axes) throw error(op_type, "axes is given both as the attribute and as the input");
        if (a.keepdims != 0 && a.keepdims != 1) {
            throw error(op_type, "keepdims must be 0 or 1, got " + std::to_string(a.keepdims));
        }
        const std::vector<std::int64_t> axes = axes_in ? *axes_in : a.axes.value_or(std::vector<std::int64_t>{});
        if (axes.empty() && noop(a)) return true;
        const auto mask = axes.empty() ? std::vector<bool>(s.size(), true) : detail::axis_mask(axes, s.size(), op_type);
        // Real-valued reductions (mean, L2, logs) of integers compute in double and
        // truncate once, as ONNX's reference does with numpy's astype.
        using A = std::conditional_t<std::is_integral_v<T> && reduce::real_valued_reduction<F>, double,
                                     detail::reduce_acc_t<T>>;
        T* y = make_output(detail::reduced_shape(s, mask, a.keepdims != 0));
        detail::for_each_reduce_group<A>(x, s, mask, [&](std::size_t o, std::span<const A> g) {
            y[o] = value_cast<T>(F::template reduce<T, A>(g));
        });
        return false;
    }
};

using reduce_sum = reduce_op<reduce::sum_fn>;
using reduce_mean = reduce_op<reduce::mean_fn>;
using reduce_max = reduce_op<reduce::max_fn>;
using reduce_min = reduce_op<reduce::min_fn>;
using reduce_prod = reduce_op<reduce::prod_fn>;
using reduce_l1 = reduce_op<reduce::l1_fn>;
using reduce_l2 = reduce_op<reduce::l2_fn>;
using reduce_sum_square = reduce_op<reduce::sum_square_fn>;
using reduce_log_sum = reduce_op<reduce::log_sum_fn>;
using reduce_log_sum_exp = reduce_op<reduce::log_sum_exp_fn>;

// ------------------------------------------------------------ ArgMax / ArgMin

namespace reduce {
struct arg_attr {
    std::int64_t axis = 0;
    std::int64_t keepdims = 1;
    std::int64_t select_last_index = 0;
};
}  // namespace reduce

/// ArgMax / ArgMin (13): the int64 index of the max / min along `axis`; the
/// first occurrence, or the last with select_last_index=1.
// Not differentiable: the only output is int64 indices.
template <bool Max>
struct arg_reduce {
    static constexpr std::string_view op_type = Max ? "ArgMax" : "ArgMin";
    static constexpr int opset = 13;
    using attributes = reduce::arg_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::numeric}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"reduced", spec::types::int64, {}, "tensor(int64)"}}};

    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto axis = c.attr("axis");
        std::vector<spec::constraint> out{detail::axis_in_range(axis, r, "axis"),
                                          detail::is_flag(c.attr("keepdims"), "keepdims"),
                                          detail::is_flag(c.attr("select_last_index"), "select_last_index")};
        for (std::size_t k = 0; k < r; ++k) {
            out.push_back({!detail::axis_is(axis, k, r) || c.dim(0, k) >= spec::expr(1),
                           "the reduced axis is not empty (axis " + std::to_string(k) + ")"});
        }
        return out;
    }
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const bool keep = spec::parse_attributes<attributes>(c.attributes(), op_type).keepdims != 0;
        return {detail::reduced_dims(c.shape(0), {c.attr("axis")}, keep, op_type)};
    }
    static std::vector<dtype> output_dtypes(const spec::context&) { return {dtype::i64}; }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (out != dtype::i64) return {};
        std::vector<std::size_t> ranks;
        if (rank >= 1) ranks.push_back(rank);  // keepdims=1
        ranks.push_back(rank + 1);             // keepdims=0
        return {{spec::types::numeric.members(), ranks}};
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<std::int64_t> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<arg_reduce, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        const std::size_t axis = spec::normalize_axis(a.axis, s.size(), op_type);
        if (a.keepdims != 0 && a.keepdims != 1) throw error(op_type, "keepdims must be 0 or 1");
        if (a.select_last_index != 0 && a.select_last_index != 1) throw error(op_type, "select_last_index must be 0 or 1");
        const auto sp = detail::split_at(s, axis);
        if (sp.n == 0) throw shape_error(op_type, "axis " + std::to_string(a.axis) + " is empty: there is no index to return");
        shape_type out_shape;
        for (std::size_t k = 0; k < s.size(); ++k) {
            if (k != axis) out_shape.push_back(s[k]);
            else if (a.keepdims != 0) out_shape.push_back(1);
        }
        auto y = array<std::int64_t>::from_shape(out_shape);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                std::size_t best = 0;
                for (std::size_t i = 1; i < sp.n; ++i) {
                    if (reduce::replaces<Max>(x.data()[sp.at(o, i, j)], x.data()[sp.at(o, best, j)], a.select_last_index != 0)) {
                        best = i;
                    }
                }
                y.data()[o * sp.inner + j] = static_cast<std::int64_t>(best);
            }
        }
        return y;
    }
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), a));
        }));
    }
    static spec::hints hints() {
        // Small integer ranges make ties likely, which exercises select_last_index.
        // Facts: indices in [0, n - 1] along the axis; all 0 when it has one element.
        return spec::hints{}.flag("keepdims").flag("select_last_index").range(0, -3, 3).facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                if (shapes.empty() || shapes[0].empty()) return std::vector<spec::value_facts>{spec::value_facts::constant(0.0)};
                const auto a = spec::parse_attributes<attributes>(attrs, op_type);
                const std::size_t axis = spec::normalize_axis(a.axis, shapes[0].size(), op_type);
                const auto n = static_cast<double>(shapes[0][axis]);
                return std::vector<spec::value_facts>{n <= 1.0 ? spec::value_facts::constant(0.0)
                                                               : spec::value_facts::within(0.0, n - 1.0)};
            });
    }
};

using arg_max = arg_reduce<true>;
using arg_min = arg_reduce<false>;

// ------------------------------------------------ Softmax, LogSoftmax, Hardmax

namespace reduce {
struct softmax_attr {
    std::int64_t axis = -1;
};

// Softmax and LogSoftmax subtract the row maximum m first: exp(x - m) / sum(exp(x - m))
// equals exp(x) / sum(exp(x)) exactly in real arithmetic (the factor exp(-m) cancels),
// and x - m - log(sum(exp(x - m))) equals log(exp(x) / sum(exp(x))). With the shift every
// exp is <= 1 and the sum is >= 1, so nothing overflows or divides by zero. The shift is
// a constant (constant_of) so that AD scalars get the unshifted derivative exactly.
struct softmax_fn {
    static constexpr std::string_view op_type = "Softmax";
    template <class A>
    static void apply(std::vector<A>& v) {
        A m = -std::numeric_limits<A>::infinity();
        for (const A& x : v) m = std::max(m, x);
        m = constant_of(m);
        A s = 0;
        for (A& x : v) s += (x = math::exp(x - m));
        for (A& x : v) x /= s;
    }
    /// Rows of length n: (0, 1] (0 on underflow), one element <= 1/n and one >= 1/n
    /// (1% slack for rounding); all ones when n = 1.
    static spec::value_facts facts(std::size_t n) {
        if (n == 1) return spec::value_facts::constant(1.0);
        auto f = spec::value_facts::within(0.0, 1.0);
        f.some_at_most = 1.01 / static_cast<double>(n);
        f.some_at_least = 0.99 / static_cast<double>(n);
        return f;
    }
};
struct log_softmax_fn {
    static constexpr std::string_view op_type = "LogSoftmax";
    template <class A>
    static void apply(std::vector<A>& v) {
        A m = -std::numeric_limits<A>::infinity();
        for (const A& x : v) m = std::max(m, x);
        m = constant_of(m);
        A s = 0;
        for (const A& x : v) s += math::exp(x - m);
        const A ls = math::log(s);
        for (A& x : v) x = (x - m) - ls;
    }
    /// (-inf, 0], one element <= -log n (1% slack for rounding); all zeros when n = 1.
    static spec::value_facts facts(std::size_t n) {
        if (n == 1) return spec::value_facts::constant(0.0);
        auto f = spec::value_facts::within(-std::numeric_limits<double>::infinity(), 0.0);
        f.some_at_most = -0.99 * std::log(static_cast<double>(n));
        return f;
    }
};
// 1 at the first maximum of the row (numpy argmax: the first NaN, if any), 0 elsewhere.
struct hardmax_fn {
    static constexpr std::string_view op_type = "Hardmax";
    template <class A>
    static void apply(std::vector<A>& v) {
        std::size_t best = 0;
        for (std::size_t i = 1; i < v.size(); ++i) {
            if (replaces<true>(v[i], v[best], false)) best = i;
        }
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = i == best ? A(1) : A(0);
    }
    /// A one in every row, zeros beside it when n > 1.
    static spec::value_facts facts(std::size_t n) {
        return n == 1 ? spec::value_facts::constant(1.0) : spec::value_facts::within(0.0, 1.0, {0.0, 1.0});
    }
};
}  // namespace reduce

/// Softmax / LogSoftmax / Hardmax (13): F applied to each 1-D slice along `axis`.
template <class F>
struct axis_normalizer {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = 13;
    using attributes = reduce::softmax_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::floating}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::floating}}};

    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return {detail::axis_in_range(c.attr("axis"), c.rank(0), "axis")};
    }
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}};
    }
    // Finite inputs give finite outputs (the kernels shift by the maximum).
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<axis_normalizer, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        const auto sp = detail::split_at(s, spec::normalize_axis(a.axis, s.size(), op_type));
        using A = detail::reduce_acc_t<T>;
        auto y = array<T>::from_shape(x.shape());
        std::vector<A> row(sp.n);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                for (std::size_t i = 0; i < sp.n; ++i) row[i] = value_cast<A>(x.data()[sp.at(o, i, j)]);
                F::apply(row);
                for (std::size_t i = 0; i < sp.n; ++i) y.data()[sp.at(o, i, j)] = value_cast<T>(row[i]);
            }
        }
        return y;
    }
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), a));
        }));
    }
    /// Hardmax's derivative is 0 wherever its output is defined (one-hot constants).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return {compute<S>(x[0], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    static spec::hints hints() {
        return spec::hints{}.range(0, -6, 6).facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes)
                -> std::vector<spec::value_facts> {
                if (shapes.empty() || shapes[0].empty()) return {spec::value_facts{}};
                const auto a = spec::parse_attributes<attributes>(attrs, op_type);
                return {F::facts(shapes[0][spec::normalize_axis(a.axis, shapes[0].size(), op_type)])};
            });
    }
};

using softmax = axis_normalizer<reduce::softmax_fn>;
using log_softmax = axis_normalizer<reduce::log_softmax_fn>;
using hardmax = axis_normalizer<reduce::hardmax_fn>;

// ---------------------------------------------------------- LayerNormalization

namespace reduce {
struct layer_norm_attr {
    std::int64_t axis = -1;
    float epsilon = 1e-5f;
    std::int64_t stash_type = 1;
};

/// Loss of "variance + epsilon > 0" for a list of groups.
inline double variance_loss(const std::vector<std::vector<double>>& groups, double eps) {
    double loss = 0.0;
    for (const auto& g : groups) {
        if (g.empty()) continue;  // no element is normalized
        double m = 0.0, v = 0.0;
        for (const double x : g) m += x;
        m /= static_cast<double>(g.size());
        for (const double x : g) v += (x - m) * (x - m);
        v /= static_cast<double>(g.size());
        const double h = 1e-10 - (v + eps);
        loss += std::isnan(h) ? 1.0 : std::max(h, 0.0);
    }
    return loss;
}

/// The values of x (in double) grouped by their indices outside the axes
/// [from_axis, to_axis_excl): one group per normalized row / channel / vector.
inline std::vector<std::vector<double>> split_groups(const tensor& x, std::size_t from_axis, std::size_t to_axis_excl) {
    const auto& s = x.shape();
    std::vector<bool> mask(s.size(), false);
    for (std::size_t k = from_axis; k < to_axis_excl && k < s.size(); ++k) mask[k] = true;
    const auto v = x.to<double>();
    return detail::reduce_groups<double>(std::span<const double>(v.data(), v.size()), s, mask);
}
}  // namespace reduce

/// LayerNormalization (17): per row (the elements sharing X.shape[:axis]),
/// Mean = mean(x), InvStdDev = 1 / sqrt(mean((x - Mean)^2) + epsilon),
/// Y = (x - Mean) * InvStdDev * Scale + B. Outputs: Y, Mean, InvStdDev, the
/// last two of shape X.shape[:axis] + [1] * (rank - axis).
struct layer_normalization {
    static constexpr std::string_view op_type = "LayerNormalization";
    static constexpr int opset = 17;
    using attributes = reduce::layer_norm_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{
        {{"X", spec::types::floating}, {"Scale", spec::types::floating}, {"B", spec::types::floating, {}, "T", true}}};
    static constexpr spec::dtype_set stash_types = spec::dtypes_of(dtype::f32, dtype::bf16);
    static constexpr std::array<spec::value_spec, 3> outputs{{{"Y", spec::types::floating},
                                                              {"Mean", stash_types, {}, "U", true},
                                                              {"InvStdDev", stash_types, {}, "U", true}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto axis = c.attr("axis");
        const auto stash = c.attr("stash_type");
        std::vector<spec::constraint> out{detail::axis_in_range(axis, r, "axis"),
                                          {stash == spec::expr(1) || stash == spec::expr(16),
                                           "stash_type is 1 (float) or 16 (bfloat16)"}};
        const auto an = detail::normalized_axis(axis, r);
        for (const std::size_t i : {std::size_t{1}, std::size_t{2}}) {
            if (!c.has_input(i)) continue;
            const std::string name = i == 1 ? "Scale" : "B";
            const std::size_t ri = c.rank(i);
            out.push_back({spec::expr(ri) <= spec::expr(r) - an, name + " has at most the rank of X.shape[axis:]"});
            for (std::size_t k = 0; k < ri && ri <= r; ++k) {
                const auto dk = c.dim(i, k), xk = c.dim(0, r - ri + k);
                out.push_back({dk == xk || dk == spec::expr(1),
                               name + " broadcasts to X.shape[axis:] (X axis " + std::to_string(r - ri + k) + ")"});
            }
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto an = detail::normalized_axis(c.attr("axis"), r);
        std::vector<spec::expr> stat;
        for (std::size_t k = 0; k < r; ++k) stat.push_back(select(an > spec::expr(k), c.dim(0, k), spec::expr(1)));
        return {c.shape(0), stat, stat};
    }
    static dtype stash_dtype(const attributes& a) { return a.stash_type == 16 ? dtype::bf16 : dtype::f32; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        const dtype u = stash_dtype(spec::parse_attributes<attributes>(c.attributes(), op_type));
        return {c.input_dtype(0), u, u};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank == 0) return {};
        std::vector<std::size_t> ranks;
        for (std::size_t r = 0; r <= rank; ++r) ranks.push_back(r);
        return {{{out}, {rank}}, {{out}, ranks}, {{out}, ranks}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        return {{"variance + epsilon > 0 over each normalized row", [a](std::span<const tensor> in) {
                     const std::size_t r = in[0].rank();
                     if (a.axis < -static_cast<std::int64_t>(r) || a.axis >= static_cast<std::int64_t>(r)) return 1.0;
                     const std::size_t axis = spec::normalize_axis(a.axis, r, op_type);
                     return reduce::variance_loss(reduce::split_groups(in[0], axis, r), static_cast<double>(a.epsilon));
                 }}};
    }

    template <class A, class T>
    struct result {
        array<T> y;
        array<A> mean;
        array<A> inv_std_dev;
    };

    /// The typed kernel; Mean and InvStdDev come in the accumulator type A
    /// (float, double for f64) and are rounded to the stash dtype by `run`.
    template <class T, class A = detail::reduce_acc_t<T>>
    static result<A, T> compute(const array<T>& x, const array<T>& scale, const std::optional<array<T>>& bias,
                                const attributes& a = {}) {
        static_assert(spec::dtype_accepted<layer_normalization, T>::value);
        const shape_type s(x.shape().begin(), x.shape().end());
        const std::size_t axis = spec::normalize_axis(a.axis, s.size(), op_type);
        const shape_type norm_shape(s.begin() + static_cast<std::ptrdiff_t>(axis), s.end());
        // Scale and B broadcast to X.shape[axis:]; offsets of their element for each i.
        auto offsets_of = [&](const array<T>& p, std::string_view name) {
            const shape_type ps(p.shape().begin(), p.shape().end());
            if (ps.size() > norm_shape.size()) {
                throw shape_error(op_type, std::string(name) + " " + to_string(ps) + " has a higher rank than X.shape[axis:] " +
                                               to_string(norm_shape));
            }
            for (std::size_t k = 0; k < ps.size(); ++k) {
                const std::size_t xk = norm_shape[norm_shape.size() - ps.size() + k];
                if (ps[k] != xk && ps[k] != 1) {
                    throw shape_error(op_type, std::string(name) + " " + to_string(ps) + " does not broadcast to X.shape[axis:] " +
                                                   to_string(norm_shape));
                }
            }
            return detail::broadcast_offsets({ps}, norm_shape)[0];
        };
        const auto so = offsets_of(scale, "Scale");
        const auto bo = bias ? offsets_of(*bias, "B") : std::vector<std::size_t>{};
        shape_type stat_shape(s);
        for (std::size_t k = axis; k < s.size(); ++k) stat_shape[k] = 1;
        result<A, T> out{array<T>::from_shape(s), array<A>::from_shape(stat_shape), array<A>::from_shape(stat_shape)};
        const std::size_t n = element_count(norm_shape), rows = out.mean.size();
        const A eps = static_cast<A>(a.epsilon);
        for (std::size_t row = 0; row < rows; ++row) {
            const T* xr = x.data() + row * n;
            A mu = 0;
            for (std::size_t i = 0; i < n; ++i) mu += value_cast<A>(xr[i]);
            mu /= static_cast<A>(n);  // n == 0: NaN statistics, no element to normalize
            A var = 0;
            for (std::size_t i = 0; i < n; ++i) var += (value_cast<A>(xr[i]) - mu) * (value_cast<A>(xr[i]) - mu);
            var /= static_cast<A>(n);
            const A inv = A(1) / math::sqrt(var + eps);
            out.mean.data()[row] = mu;
            out.inv_std_dev.data()[row] = inv;
            for (std::size_t i = 0; i < n; ++i) {
                A v = (value_cast<A>(xr[i]) - mu) * inv * value_cast<A>(scale.data()[so[i]]);
                if (bias) v += value_cast<A>(bias->data()[bo[i]]);
                out.y.data()[row * n + i] = value_cast<T>(v);
            }
        }
        return out;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = checked_attributes(c);
        return detail::dispatch<inputs[0].types, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::optional<array<T>> bias;
            if (c.has_input(2)) bias = c.input(2).as_array<T>();
            auto res = compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>(), bias, a);
            const dtype u = stash_dtype(a);
            return std::vector<tensor>{tensor(res.y), tensor(res.mean).cast(u), tensor(res.inv_std_dev).cast(u)};
        });
    }
    /// Mean and InvStdDev stay in S: run() rounds them to the stash dtype, which
    /// only loses precision (the derivative of that rounding is taken as 1).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        std::optional<array<S>> bias;
        if (c.has_input(2)) bias = x[2];
        auto res = compute<S>(x[0], x[1], bias, checked_attributes(c));
        return {std::move(res.y), std::move(res.mean), std::move(res.inv_std_dev)};
    }
    static attributes checked_attributes(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (a.stash_type != 1 && a.stash_type != 16) {
            throw error(op_type, "stash_type must be 1 (float) or 16 (bfloat16), got " + std::to_string(a.stash_type));
        }
        return a;
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .real("epsilon", 1e-6, 1e-2, 0.3)
            .choice("stash_type", {std::int64_t{1}}, 0.2)
            .range(1, 0.5, 2.0)
            .range(2, -1.0, 1.0)
            .optional_input(2, 0.7)
            .facts(facts);
    }
    /// Y: unknown (Scale and B move it). Mean: inside X's range. InvStdDev =
    /// 1 / sqrt(var + epsilon), with var at most (hi - lo)^2 / 4 for X in
    /// [lo, hi]: InvStdDev of Cos values is never below 1 / sqrt(1 + epsilon).
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts> in, const spec::attribute_map& attrs,
                                                std::span<const shape_type>) {
        const spec::value_facts x = in.empty() ? spec::value_facts{} : in[0];
        const double eps = spec::parse_attributes<attributes>(attrs, op_type).epsilon;
        if (!(eps > 0.0)) return {spec::value_facts{}, x.range_only(), spec::value_facts{}};
        const double var_max = (x.hi - x.lo) * (x.hi - x.lo) / 4.0;
        // 1% slack for rounding in float32 / bfloat16 statistics.
        const auto inv = spec::value_facts::within(0.99 / std::sqrt(var_max + eps), 1.01 / std::sqrt(eps));
        return {spec::value_facts{}, x.range_only(), inv};
    }
};

// ---------------------------------------------------------- BatchNormalization

namespace reduce {
struct batch_norm_attr {
    float epsilon = 1e-5f;
    float momentum = 0.9f;
    std::int64_t training_mode = 0;
};
}  // namespace reduce

/// BatchNormalization (15), inference mode:
/// Y = (X - input_mean[c]) / sqrt(input_var[c] + epsilon) * scale[c] + B[c], c = axis 1.
struct batch_normalization {
    static constexpr std::string_view op_type = "BatchNormalization";
    static constexpr int opset = 15;
    using attributes = reduce::batch_norm_attr;
    static constexpr std::array<spec::value_spec, 5> inputs{{{"X", spec::types::floating, {2, 8}},
                                                             {"scale", spec::types::floating, {1, 1}, "T1"},
                                                             {"B", spec::types::floating, {1, 1}, "T1"},
                                                             {"input_mean", spec::types::floating, {1, 1}, "T2"},
                                                             {"input_var", spec::types::floating, {1, 1}, "T2"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", spec::types::floating}}};
    static constexpr std::array<std::string_view, 4> param_names{"scale", "B", "input_mean", "input_var"};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        // training_mode=1 is valid ONNX, just not implemented: run() throws
        // unsupported_error for it (conformance counts it as skipped).
        std::vector<spec::constraint> out;
        for (std::size_t i = 1; i < 5; ++i) {
            out.push_back({c.dim(i, 0) == c.dim(0, 1), std::string(param_names[i - 1]) + " has one value per channel (X axis 1)"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank < 2) return {};
        const auto f = spec::types::floating.members();
        return {{{out}, {rank}}, {f, {1}}, {f, {1}}, {f, {1}}, {f, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto eps = static_cast<double>(spec::parse_attributes<attributes>(attrs, op_type).epsilon);
        return {detail::hinge_rule("input_var + epsilon > 0", 4, [eps](double v) { return 1e-10 - (v + eps); })};
    }

    /// The typed kernel; the per-channel parameters come widened to double
    /// (exact for every floating dtype) and are used in the accumulator type.
    /// AD scalars take them as P = T, so that they carry derivatives too.
    template <class T, class P = double>
    static array<T> compute(const array<T>& x, const array<P>& scale, const array<P>& bias, const array<P>& input_mean,
                            const array<P>& var, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<batch_normalization, T>::value);
        if (a.training_mode != 0) {
            throw unsupported_error(std::string(op_type), "training_mode=1 is not supported (inference mode only)");
        }
        if (x.dimension() < 2) throw shape_error(op_type, "X must have rank >= 2 (N, C, ...), got rank " + std::to_string(x.dimension()));
        const std::size_t ch = x.shape()[1];
        const std::array<const array<P>*, 4> params{&scale, &bias, &input_mean, &var};
        for (std::size_t p = 0; p < 4; ++p) {
            if (params[p]->dimension() != 1 || params[p]->shape()[0] != ch) {
                throw shape_error(op_type, std::string(param_names[p]) + " must have shape [" + std::to_string(ch) + "]");
            }
        }
        using A = detail::reduce_acc_t<T>;
        const auto sp = detail::split_at(shape_type(x.shape().begin(), x.shape().end()), 1);
        auto y = array<T>::from_shape(x.shape());
        const A eps = static_cast<A>(a.epsilon);
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t c = 0; c < sp.n; ++c) {
                const A m = value_cast<A>(input_mean.data()[c]), s = value_cast<A>(scale.data()[c]),
                        b = value_cast<A>(bias.data()[c]);
                const A den = math::sqrt(value_cast<A>(var.data()[c]) + eps);
                for (std::size_t j = 0; j < sp.inner; ++j) {
                    const std::size_t f = sp.at(o, c, j);
                    y.data()[f] = value_cast<T>((value_cast<A>(x.data()[f]) - m) / den * s + b);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).to<double>(), c.input(2).to<double>(),
                                     c.input(3).to<double>(), c.input(4).to<double>(), a));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return {compute<S, S>(x[0], x[1], x[2], x[3], x[4], a)};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .real("epsilon", 1e-6, 1e-2, 0.3)
            .real("momentum", 0.5, 1.0, 0.3)
            .omit("training_mode")
            .range(1, 0.5, 2.0)
            .range(2, -1.0, 1.0)
            .range(3, -1.0, 1.0)
            .range(4, 0.1, 2.0);
    }
};

// ------------------------------------------------------- InstanceNormalization

namespace reduce {
struct instance_norm_attr {
    float epsilon = 1e-5f;
};
}  // namespace reduce

/// InstanceNormalization (6): per (n, c), over the spatial axes 2..:
/// y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c] (population variance).
struct instance_normalization {
    static constexpr std::string_view op_type = "InstanceNormalization";
    static constexpr int opset = 6;
    using attributes = reduce::instance_norm_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"input", spec::types::ieee_floating, {3, 8}},
                                                             {"scale", spec::types::ieee_floating, {1, 1}},
                                                             {"B", spec::types::ieee_floating, {1, 1}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::ieee_floating}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        return {{c.dim(1, 0) == c.dim(0, 1), "scale has one value per channel (input axis 1)"},
                {c.dim(2, 0) == c.dim(0, 1), "B has one value per channel (input axis 1)"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank < 3) return {};
        return {{{out}, {rank}}, {{out}, {1}}, {{out}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto eps = static_cast<double>(spec::parse_attributes<attributes>(attrs, op_type).epsilon);
        return {{"variance + epsilon > 0 over each (n, c)", [eps](std::span<const tensor> in) {
                     return reduce::variance_loss(reduce::split_groups(in[0], 2, in[0].rank()), eps);
                 }}};
    }

    template <class T>
    static array<T> compute(const array<T>& x, const array<T>& scale, const array<T>& bias, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<instance_normalization, T>::value);
        if (x.dimension() < 3) {
            throw shape_error(op_type, "input must have rank >= 3 (N, C, D1, ...), got rank " + std::to_string(x.dimension()));
        }
        const std::size_t ch = x.shape()[1];
        for (const auto* p : {&scale, &bias}) {
            if (p->dimension() != 1 || p->shape()[0] != ch) {
                throw shape_error(op_type, std::string(p == &scale ? "scale" : "B") + " must have shape [" + std::to_string(ch) + "]");
            }
        }
        using A = detail::reduce_acc_t<T>;
        const auto sp = detail::split_at(shape_type(x.shape().begin(), x.shape().end()), 1);
        const std::size_t n = sp.inner;  // spatial elements per (n, c)
        const A eps = static_cast<A>(a.epsilon);
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t c = 0; c < ch; ++c) {
                const std::size_t base = sp.at(o, c, 0);
                A mu = 0, var = 0;
                for (std::size_t j = 0; j < n; ++j) mu += value_cast<A>(x.data()[base + j]);
                mu /= static_cast<A>(n);
                for (std::size_t j = 0; j < n; ++j) {
                    const A dlt = value_cast<A>(x.data()[base + j]) - mu;
                    var += dlt * dlt;
                }
                var /= static_cast<A>(n);
                const A den = math::sqrt(var + eps);
                const A s = value_cast<A>(scale.data()[c]), b = value_cast<A>(bias.data()[c]);
                for (std::size_t j = 0; j < n; ++j) {
                    y.data()[base + j] = value_cast<T>(s * (value_cast<A>(x.data()[base + j]) - mu) / den + b);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), c.input(1).as_array<T>(), c.input(2).as_array<T>(), a));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return {compute<S>(x[0], x[1], x[2], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.real("epsilon", 1e-6, 1e-2, 0.3).range(1, 0.5, 2.0).range(2, -1.0, 1.0); }
};

// ------------------------------------------------------------ LpNormalization

namespace reduce {
struct lp_norm_attr {
    std::int64_t axis = -1;
    std::int64_t p = 2;
};
}  // namespace reduce

/// LpNormalization (1): y = x / ||x||_p along `axis`, p in {1, 2}. A zero
/// vector gives 0 / 0 = NaN (as the ONNX reference); the domain excludes it.
struct lp_normalization {
    static constexpr std::string_view op_type = "LpNormalization";
    static constexpr int opset = 1;
    using attributes = reduce::lp_norm_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::ieee_floating}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::ieee_floating}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto p = c.attr("p");
        return {detail::axis_in_range(c.attr("axis"), c.rank(0), "axis"),
                {p == spec::expr(1) || p == spec::expr(2), "p is 1 or 2"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::floating.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map& attrs) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        std::vector<spec::domain_rule> rules{{"||x||_p > 0 along axis (and finite)", [a](std::span<const tensor> in) {
                     const std::size_t r = in[0].rank();
                     if (a.axis < -static_cast<std::int64_t>(r) || a.axis >= static_cast<std::int64_t>(r)) return 1.0;
                     const std::size_t axis = spec::normalize_axis(a.axis, r, op_type);
                     const double m = detail::max_finite(in[0].element_dtype());
                     double loss = 0.0;
                     for (const auto& g : reduce::split_groups(in[0], axis, axis + 1)) {
                         double s = 0.0;
                         for (const double x : g) s += a.p == 1 ? std::fabs(x) : x * x;
                         const double norm = a.p == 1 ? s : std::sqrt(s);
                         loss += std::max(1e-10 - norm, 0.0) + (a.p == 2 && s > m ? s / m - 1.0 : 0.0);
                     }
                     return loss;
                 }}};
        // A non-zero norm needs some non-zero element (what the generator checks).
        rules[0].elementwise_input = 0;
        rules[0].elementwise = [](double x) { return 1e-10 - std::fabs(x); };
        rules[0].elementwise_any = true;
        return rules;
    }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<lp_normalization, T>::value);
        if (a.p != 1 && a.p != 2) throw error(op_type, "p must be 1 or 2, got " + std::to_string(a.p));
        const shape_type s(x.shape().begin(), x.shape().end());
        const auto sp = detail::split_at(s, spec::normalize_axis(a.axis, s.size(), op_type));
        using A = detail::reduce_acc_t<T>;
        auto y = array<T>::from_shape(x.shape());
        for (std::size_t o = 0; o < sp.outer; ++o) {
            for (std::size_t j = 0; j < sp.inner; ++j) {
                A acc = 0;
                for (std::size_t i = 0; i < sp.n; ++i) {
                    const A v = value_cast<A>(x.data()[sp.at(o, i, j)]);
                    acc += a.p == 1 ? math::fabs(v) : v * v;
                }
                const A norm = a.p == 1 ? acc : math::sqrt(acc);
                for (std::size_t i = 0; i < sp.n; ++i) {
                    y.data()[sp.at(o, i, j)] = value_cast<T>(value_cast<A>(x.data()[sp.at(o, i, j)]) / norm);
                }
            }
        }
        return y;
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<inputs[0].types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), a));
        }));
    }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return {compute<S>(x[0], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.choice("p", {std::int64_t{1}, std::int64_t{2}}, 0.7).facts(facts); }
    /// Every element lies in [-1, 1], and in a slice of n along the axis the
    /// smallest |y| is at most n^(-1/p) (the p-th powers sum to 1): some element
    /// is <= n^(-1/p) and some >= -n^(-1/p), so Acosh of it is out of reach.
    static std::vector<spec::value_facts> facts(std::span<const spec::value_facts>, const spec::attribute_map& attrs,
                                                std::span<const shape_type> shapes) {
        auto f = spec::value_facts::within(-1.0, 1.0);
        if (shapes.empty() || shapes[0].empty()) return {f};
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        const std::size_t axis = spec::normalize_axis(a.axis, shapes[0].size(), op_type);
        const auto n = static_cast<double>(shapes[0][axis]);
        if (n < 2.0 || (a.p != 1 && a.p != 2)) return {f};
        const double m = 1.01 * std::pow(n, -1.0 / static_cast<double>(a.p));  // 1% slack for rounding
        f.some_at_most = m;
        f.some_at_least = -m;
        return {f};
    }
};

inline constexpr auto reduce_ops =
    hana::tuple_t<reduce_sum, reduce_mean, reduce_max, reduce_min, reduce_prod, reduce_l1, reduce_l2, reduce_sum_square,
                  reduce_log_sum, reduce_log_sum_exp, arg_max, arg_min, softmax, log_softmax, hardmax,
                  layer_normalization, batch_normalization, instance_normalization, lp_normalization>;

/// ONNX-named aliases, the names the rest of the kit uses for op specs.
using ReduceSum = reduce_sum;
using ReduceMean = reduce_mean;
using ReduceMax = reduce_max;
using ReduceMin = reduce_min;
using ReduceProd = reduce_prod;
using ReduceL1 = reduce_l1;
using ReduceL2 = reduce_l2;
using ReduceSumSquare = reduce_sum_square;
using ReduceLogSum = reduce_log_sum;
using ReduceLogSumExp = reduce_log_sum_exp;
using ArgMax = arg_max;
using ArgMin = arg_min;
using Softmax = softmax;
using LogSoftmax = log_softmax;
using Hardmax = hardmax;
using LayerNormalization = layer_normalization;
using BatchNormalization = batch_normalization;
using InstanceNormalization = instance_normalization;
using LpNormalization = lp_normalization;


}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::reduce_attr, axes, keepdims);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::reduce_sum_attr, axes, keepdims, noop_with_empty_axes);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::arg_attr, axis, keepdims, select_last_index);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::softmax_attr, axis);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::layer_norm_attr, axis, epsilon, stash_type);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::batch_norm_attr, epsilon, momentum, training_mode);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::instance_norm_attr, epsilon);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reduce::lp_norm_attr, axis, p);
// ---- end tensoracle/ops/reduce.hpp ----
// ---- begin tensoracle/ops/shape.hpp ----
// tensoracle: shape and data-movement ops (Reshape, Transpose, Squeeze,
// Unsqueeze, Flatten, Slice, Concat, Split, Expand, Tile, Pad, Gather,
// GatherElements, Trilu, Shape, Size, ConstantOfShape, Range, DepthToSpace,
// SpaceToDepth).
//
// Output shapes are symbolic wherever ONNX's formula is integer arithmetic
// over dims, int attributes and values of int64 inputs (shape, axes, pads,
// repeats, starts/ends/steps, ...); symbolic axes index dim lists through
// chains of selects (shape_util::pick). Shapes that depend on dim *values* in a
// way that changes the output rank (Squeeze without axes) or on float data
// (Range on floats) are computed concretely.
//
// Derivatives (run_real): these kernels only move scalars, so they run
// unchanged on AD scalars and each output element carries the derivative of
// the input element it copies; fill values are constants, except Pad's
// constant_value input, which is differentiable when given. Shape, Size,
// ConstantOfShape and Range have no run_real (see their specs).
//
// Semantics chosen where ONNX leaves them open (each op's comment repeats its own):
//  - negative axes are normalized; out-of-range axes, perms, indices of shape
//    values are constraint violations (shape_error), never clamped;
//  - Transpose's perm must be a permutation of [0, rank) (no negative entries);
//  - Squeeze with an *empty* axes input removes nothing (the literal reading,
//    numpy's squeeze(axis=())); without the input it removes every dim of 1;
//  - Pad: negative pads crop; reflect/edge read the original input (the index
//    map is i = o - pad_begin, then reflected / clamped at the input borders);
//    reflect needs pads <= dim - 1 (as onnxruntime), edge needs dim >= 1 where
//    it pads;
//  - GatherElements needs indices dims <= data dims off the axis (onnxruntime);
//  - Split-13 cannot see its node's output count: the reserved attribute
//    `__num_outputs` (default 2, set by the interpreter / ONNX importer from the
//    node's output count) gives the number of equal parts when `split` is absent;
//  - Range on floats computes the count and the values start + i * delta in
//    double and rounds once to T.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>

// ---- begin tensoracle/ops/detail/shape_util.hpp ----
// tensoracle: helpers for shape and data-movement specs: symbolic axis
// arithmetic (normalization, indexing a dim list with a symbolic position,
// products) and concrete helpers for kernels (int values of a tensor,
// ravel / unravel with strides). Namespace shape_util, apart from other
// families' detail helpers.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>


namespace tensoracle::ops::shape_util {

using detail::strides_of;

using spec::expr;

/// The constant -n (expr has no unary minus).
inline expr negative(std::size_t n) { return expr(-static_cast<std::int64_t>(n)); }

/// max / min of expressions. expr's min and max are hidden friends found by
/// ADL; the block-scope using-declaration keeps unqualified lookup from
/// stopping at the ops::min / ops::max op types (which would disable ADL).
inline expr emax(const expr& a, const expr& b) {
    using std::max;
    return max(a, b);
}
inline expr emin(const expr& a, const expr& b) {
    using std::min;
    return min(a, b);
}

/// a in [-rank, rank) (an axis of a tensor of that rank).
inline expr axis_in_range(const expr& a, std::size_t rank) { return a >= negative(rank) && a < expr(rank); }

/// A possibly negative axis made non-negative: a < 0 ? a + rank : a.
inline expr normalized_axis(const expr& a, std::size_t rank) { return select(a < 0, a + expr(rank), a); }

/// v[idx] for a symbolic idx, as a chain of selects; `fallback` where idx is
/// outside [0, v.size()) (callers constrain idx so that it never is).
inline expr pick(const std::vector<expr>& v, const expr& idx, const expr& fallback = expr(0)) {
    expr out = fallback;
    for (std::size_t j = v.size(); j-- > 0;) out = select(idx == expr(j), v[j], out);
    return out;
}

/// Sum of expressions (0 for none).
inline expr sum(const std::vector<expr>& v) {
    expr out(0);
    for (const auto& e : v) out = out + e;
    return out;
}

/// 1 where cond holds, else 0 (an integer, not a boolean, so it can be summed).
inline expr indicator(const expr& cond) { return select(cond, expr(1), expr(0)); }

/// Logical OR of conditions (false for none).
inline expr any_of(const std::vector<expr>& v) {
    expr out(0);
    for (const auto& e : v) out = out || e;
    return out;
}

/// Constraints that normalized axes are pairwise distinct.
inline std::vector<spec::constraint> distinct_axes(const std::vector<expr>& normalized, const std::string& what) {
    std::vector<spec::constraint> out;
    for (std::size_t i = 0; i < normalized.size(); ++i) {
        for (std::size_t j = i + 1; j < normalized.size(); ++j) {
            out.push_back({normalized[i] != normalized[j], what + " " + std::to_string(i) + " and " +
                                                               std::to_string(j) + " name different axes"});
        }
    }
    return out;
}

/// A constraint whose truth is known now (a concrete-only fact): a constant
/// that fails with `reason` when false.
inline spec::constraint concrete_fact(bool holds, std::string reason) { return {expr(holds ? 1 : 0) == 1, std::move(reason)}; }

/// Ranks 0..max as a list (input candidates).
inline std::vector<std::size_t> ranks_between(std::size_t lo, std::size_t hi) {
    std::vector<std::size_t> out;
    for (std::size_t r = lo; r <= hi; ++r) out.push_back(r);
    return out;
}

/// The values of an int32 / int64 tensor as int64 (any rank).
inline std::vector<std::int64_t> int_values(const tensor& t, std::string_view where) {
    if (t.element_dtype() != dtype::i64 && t.element_dtype() != dtype::i32) {
        throw dtype_error(where, "expected an int32 or int64 tensor, got " + std::string(name(t.element_dtype())));
    }
    const auto a = t.to<std::int64_t>();
    return std::vector<std::int64_t>(a.data(), a.data() + a.size());
}

/// Concrete axis normalization that throws naming the op.
inline std::size_t checked_axis(std::int64_t axis, std::size_t rank, std::string_view op, std::string_view what = "axis") {
    const auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r) {
        throw shape_error(op, std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                                  std::to_string(rank) + " (allowed: [" + std::to_string(-r) + ", " +
                                  std::to_string(r - 1) + "])");
    }
    return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

/// Shape of a typed array as a shape_type.
template <class A>
shape_type shape_of(const A& a) {
    return shape_type(a.shape().begin(), a.shape().end());
}

/// Flat offset of a multi-index under row-major strides.
inline std::size_t ravel(const shape_type& idx, const shape_type& strides) {
    std::size_t f = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) f += idx[k] * strides[k];
    return f;
}

/// A non-negative int64 as a dim, or a shape_error naming the op.
inline std::size_t to_dim(std::int64_t v, std::string_view op, std::string_view what) {
    if (v < 0) throw shape_error(op, std::string(what) + " is negative (" + std::to_string(v) + ")");
    return static_cast<std::size_t>(v);
}

/// Advances idx to the next multi-index over dims in row-major order; false
/// (idx back to all zeros) after the last one. Kernels walk their output with
/// it instead of unravelling each flat offset into a fresh vector.
inline bool next_index(shape_type& idx, const shape_type& dims) {
    for (std::size_t k = idx.size(); k-- > 0;) {
        if (++idx[k] < dims[k]) return true;
        idx[k] = 0;
    }
    return false;
}

/// out[f] = x[source(out multi-index)] for every output element: the common
/// loop of the data-movement kernels. `source` returns the input flat offset.
template <class T, class F>
array<T> gather_elements_by(const array<T>& x, const shape_type& out_shape, std::string_view op, F&& source) {
    auto y = array<T>::from_shape(out_shape);
    const std::size_t n = element_count(out_shape, op);
    shape_type index(out_shape.size(), 0);  // the output multi-index of offset f
    for (std::size_t f = 0; f < n; ++f, next_index(index, out_shape)) {
        const std::size_t s = source(static_cast<const shape_type&>(index));
        if (s >= x.size()) throw error(op, "internal: source offset out of range");
        y.data()[f] = x.data()[s];
    }
    return y;
}

}  // namespace tensoracle::ops::shape_util
// ---- end tensoracle/ops/detail/shape_util.hpp ----

namespace tensoracle::ops {

namespace shape_detail {
namespace types = spec::types;
using spec::expr;
using spec::constraint;
using spec::context;

inline constexpr std::size_t max_rank = 8;

/// Random indices of dtype d and shape s into the dim of input 0 at the op's
/// `axis` attribute, negative ones included (Gather, GatherElements hints).
inline tensor random_indices(rng& g, const context& c, dtype d, const shape_type& s) {
    const auto axis = std::get<std::int64_t>(c.attributes().at("axis"));
    const auto dims = c.input(0).shape();
    const auto dim = static_cast<std::int64_t>(dims[spec::normalize_axis(axis, dims.size(), c.op_type())]);
    auto idx = array<std::int64_t>::from_shape(s);
    for (auto& v : idx) v = dim > 0 ? g.integer(-dim, dim - 1) : 0;
    return tensor(idx).cast(d);
}

/// An int64 scalar tensor.
inline tensor int64_scalar(std::int64_t v) {
    auto a = array<std::int64_t>::from_shape(shape_type{});
    a.data()[0] = v;
    return tensor(a);
}

/// run() of an op with one output of the data input's dtype: Op::run_typed<T>(c, x) reads the op's other
/// inputs and attributes from c and runs the kernel on x, input 0 as stored.
template <class Op>
std::vector<tensor> run_data(const context& c) {
    return detail::single_output(detail::dispatch<Op::inputs[0].types>(c.input_dtype(0), Op::op_type, [&](auto t) {
        using T = typename decltype(t)::type;
        return tensor(Op::template run_typed<T>(c, c.input(0).as_array<T>()));
    }));
}

/// run_real() of the same ops: the same kernel on input 0 lifted to S. Data
/// movement copies scalars, so each output element carries the derivative of
/// the input element it came from. Integer and bool data make an integer /
/// bool output, which run_real leaves to run() (a placeholder).
template <class Op, class S>
std::vector<array<S>> run_real_data(const context& c, const std::vector<array<S>>& x) {
    if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
    return {Op::template run_typed<S>(c, x[0])};
}
}  // namespace shape_detail

// ---------------------------------------------------------------- Reshape

struct reshape_attr {
    std::int64_t allowzero = 0;
};

/// Reshape-14(data, shape): 0 copies the input dim at the same position
/// (unless allowzero != 0, where it is a literal 0), -1 (at most one) is
/// inferred from the element count.
struct reshape {
    static constexpr std::string_view op_type = "Reshape";
    static constexpr int opset = 14;
    using attributes = reshape_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all}, {"shape", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"reshaped", spec::types::all}}};

    /// What shape value i stands for, with -1 counted as 1.
    static spec::expr resolved(const spec::context& c, const std::vector<spec::expr>& v, std::size_t i) {
        const spec::expr copy = i < c.rank(0) ? c.dim(0, i) : spec::expr(0);
        return select(v[i] == -1, spec::expr(1), select(v[i] == 0 && c.attr("allowzero") == 0, copy, v[i]));
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto v = c.values(1);
        const auto az = c.attr("allowzero");
        std::vector<spec::constraint> out;
        std::vector<spec::expr> minus, zero, res;
        for (std::size_t i = 0; i < v.size(); ++i) {
            out.push_back({v[i] >= -1, "shape value " + std::to_string(i) + " is >= -1"});
            if (i >= c.rank(0)) {
                out.push_back({!(v[i] == 0 && az == 0), "shape value " + std::to_string(i) +
                                                            " = 0 copies input dim " + std::to_string(i) +
                                                            ", which does not exist (input rank " +
                                                            std::to_string(c.rank(0)) + ")"});
            }
            minus.push_back(shape_util::indicator(v[i] == -1));
            zero.push_back(v[i] == 0);
            res.push_back(resolved(c, v, i));
        }
        out.push_back({shape_util::sum(minus) <= 1, "at most one shape value is -1"});
        out.push_back({az == 0 || !(shape_util::any_of(zero) && shape_util::sum(minus) >= 1), "with allowzero, shape may not hold both 0 and -1"});
        const auto p = spec::product(res), total = spec::product(c.shape(0));
        out.push_back({select(shape_util::sum(minus) >= 1, p != 0 && total % shape_util::emax(p, spec::expr(1)) == 0, p == total),
                       "the new shape holds as many elements as the input (-1 divides exactly)"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto v = c.values(1);
        std::vector<spec::expr> res, out;
        for (std::size_t i = 0; i < v.size(); ++i) res.push_back(resolved(c, v, i));
        const auto p = spec::product(res), total = spec::product(c.shape(0));
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back(select(v[i] == -1, total / shape_util::emax(p, spec::expr(1)), res[i]));
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(0, shape_detail::max_rank)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// The output shape, checked concretely (same rules as the constraints).
    static shape_type target_shape(const shape_type& in, std::span<const std::int64_t> shape, bool allowzero) {
        shape_type out;
        std::optional<std::size_t> minus;
        bool has_zero = false;
        for (std::size_t i = 0; i < shape.size(); ++i) {
            const std::int64_t v = shape[i];
            if (v == -1) {
                if (minus) throw shape_error(op_type, "shape has more than one -1 (positions " + std::to_string(*minus) + " and " + std::to_string(i) + ")");
                minus = i;
                out.push_back(1);
            } else if (v < -1) {
                throw shape_error(op_type, "shape value " + std::to_string(i) + " is " + std::to_string(v) + " (must be >= -1)");
            } else if (v == 0 && !allowzero) {
                if (i >= in.size()) {
                    throw shape_error(op_type, "shape value " + std::to_string(i) + " = 0 copies an input dim, but the input has rank " + std::to_string(in.size()));
                }
                out.push_back(in[i]);
            } else {
                has_zero = has_zero || v == 0;
                out.push_back(static_cast<std::size_t>(v));
            }
        }
        if (allowzero && has_zero && minus) throw shape_error(op_type, "with allowzero=1 the shape may not hold both 0 and -1");
        const std::size_t p = element_count(out, op_type), total = element_count(in, op_type);
        if (minus) {
            if (p == 0 || total % p != 0) {
                throw shape_error(op_type, "cannot infer the -1 dim: " + std::to_string(total) + " elements into " + to_string(out));
            }
            out[*minus] = total / p;
        } else if (p != total) {
            throw shape_error(op_type, "shape " + to_string(out) + " holds " + std::to_string(p) + " elements, the input " + to_string(in) + " holds " + std::to_string(total));
        }
        return out;
    }
    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> shape, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<reshape, T>::value);
        const auto out_shape = target_shape(shape_util::shape_of(x), shape, a.allowzero != 0);
        auto y = array<T>::from_shape(out_shape);
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return compute<T>(x, shape_util::int_values(c.input(1), op_type), a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<reshape>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<reshape>(c, x);
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.flag("allowzero", 0.3).facts(spec::facts::copy_of(0)); }
};

// ---------------------------------------------------------------- Transpose

struct transpose_attr {
    std::optional<std::vector<std::int64_t>> perm;
};

/// Transpose-13(data): output axis i is input axis perm[i]; perm defaults to
/// the reversed axes. perm must be a permutation of [0, rank).
struct transpose {
    static constexpr std::string_view op_type = "Transpose";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::copy_of(0)); }  // every element carries over
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
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<transpose, T>::value);
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
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<transpose>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<transpose>(c, x);
    }
};

// ---------------------------------------------------------------- Squeeze

/// Squeeze-13(data, axes?): removes the listed axes (each of size 1); without
/// axes, every dim of size 1. An empty axes input removes nothing.
struct squeeze {
    static constexpr std::string_view op_type = "Squeeze";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::copy_of(0)); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all}, {"axes", spec::types::int64, {1, 1}, "T1", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"squeezed", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (!c.has_input(1)) return {};
        const std::size_t r = c.rank(0);
        const auto axes = c.values(1);
        std::vector<spec::constraint> out;
        std::vector<spec::expr> norm;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            out.push_back({shape_util::axis_in_range(axes[i], r), "axes[" + std::to_string(i) + "] is in [-rank, rank)"});
            norm.push_back(shape_util::normalized_axis(axes[i], r));
            out.push_back({shape_util::pick(c.shape(0), norm.back(), spec::expr(1)) == 1,
                           "the dim at axes[" + std::to_string(i) + "] is 1"});
        }
        auto d = shape_util::distinct_axes(norm, "axes");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto dims = c.shape(0);
        std::vector<spec::expr> out;
        if (!c.has_input(1)) {  // depends on dim values: concrete
            for (const auto& d : dims) {
                const auto v = c.eval(d);
                if (v != 1) out.emplace_back(v);
            }
            return {out};
        }
        const auto axes = c.values(1);
        // removed[j]: some axis names j; output dim m is the m-th kept input dim.
        std::vector<spec::expr> removed(r, spec::expr(0));
        for (std::size_t j = 0; j < r; ++j) {
            std::vector<spec::expr> hits;
            for (const auto& a : axes) hits.push_back(shape_util::normalized_axis(a, r) == spec::expr(j));
            removed[j] = shape_util::any_of(hits);
        }
        const std::size_t out_rank = axes.size() <= r ? r - axes.size() : 0;
        for (std::size_t m = 0; m < out_rank; ++m) {
            spec::expr e(0), kept_before(0);
            std::vector<std::pair<spec::expr, spec::expr>> cases;
            for (std::size_t j = 0; j < r; ++j) {
                cases.emplace_back(!removed[j] && kept_before == spec::expr(m), dims[j]);
                kept_before = kept_before + shape_util::indicator(!removed[j]);
            }
            for (std::size_t j = cases.size(); j-- > 0;) e = select(cases[j].first, cases[j].second, e);
            out.push_back(e);
        }
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(rank, shape_detail::max_rank)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const std::optional<std::vector<std::int64_t>>& axes) {
        static_assert(spec::dtype_accepted<squeeze, T>::value);
        const auto in = shape_util::shape_of(x);
        std::vector<bool> remove(in.size(), false);
        if (axes) {
            for (const auto a : *axes) {
                const auto k = shape_util::checked_axis(a, in.size(), op_type);
                if (remove[k]) throw shape_error(op_type, "axis " + std::to_string(a) + " is listed twice");
                if (in[k] != 1) throw shape_error(op_type, "cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[k]));
                remove[k] = true;
            }
        } else {
            for (std::size_t k = 0; k < in.size(); ++k) remove[k] = in[k] == 1;
        }
        shape_type out;
        for (std::size_t k = 0; k < in.size(); ++k) {
            if (!remove[k]) out.push_back(in[k]);
        }
        auto y = array<T>::from_shape(out);
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        std::optional<std::vector<std::int64_t>> axes;
        if (c.has_input(1)) axes = shape_util::int_values(c.input(1), op_type);
        return compute<T>(x, axes);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<squeeze>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<squeeze>(c, x);
    }
};

// ---------------------------------------------------------------- Unsqueeze

/// Unsqueeze-13(data, axes): inserts dims of 1 at the listed axes of the
/// output (axes normalized against the output rank, any order, no repeats).
struct unsqueeze {
    static constexpr std::string_view op_type = "Unsqueeze";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::copy_of(0)); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all, {0, 7}}, {"axes", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"expanded", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto axes = c.values(1);
        const std::size_t R = c.rank(0) + axes.size();
        std::vector<spec::constraint> out{shape_util::concrete_fact(R <= shape_detail::max_rank, "the output rank " + std::to_string(R) + " is at most 8")};
        std::vector<spec::expr> norm;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            out.push_back({shape_util::axis_in_range(axes[i], R), "axes[" + std::to_string(i) + "] is in [-out_rank, out_rank)"});
            norm.push_back(shape_util::normalized_axis(axes[i], R));
        }
        auto d = shape_util::distinct_axes(norm, "axes");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto axes = c.values(1);
        const auto dims = c.shape(0);
        const std::size_t R = c.rank(0) + axes.size();
        std::vector<spec::expr> out;
        spec::expr inserted_before(0);
        for (std::size_t p = 0; p < R; ++p) {
            std::vector<spec::expr> hits;
            for (const auto& a : axes) hits.push_back(shape_util::normalized_axis(a, R) == spec::expr(p));
            const auto inserted = shape_util::any_of(hits);
            out.push_back(select(inserted, spec::expr(1), shape_util::pick(dims, spec::expr(p) - inserted_before)));
            inserted_before = inserted_before + shape_util::indicator(inserted);
        }
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, shape_util::ranks_between(0, rank - 1)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> axes) {
        static_assert(spec::dtype_accepted<unsqueeze, T>::value);
        const auto in = shape_util::shape_of(x);
        const std::size_t R = in.size() + axes.size();
        std::vector<bool> insert(R, false);
        for (const auto a : axes) {
            const auto k = shape_util::checked_axis(a, R, op_type);
            if (insert[k]) throw shape_error(op_type, "axis " + std::to_string(a) + " is listed twice");
            insert[k] = true;
        }
        shape_type out;
        std::size_t j = 0;
        for (std::size_t p = 0; p < R; ++p) out.push_back(insert[p] ? 1 : in[j++]);
        auto y = array<T>::from_shape(out);
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, shape_util::int_values(c.input(1), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<unsqueeze>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<unsqueeze>(c, x);
    }
};

// ---------------------------------------------------------------- Flatten

struct flatten_attr {
    std::int64_t axis = 1;
};

/// Flatten-13(input): [prod(dims[:axis]), prod(dims[axis:])], axis in [-r, r].
struct flatten {
    static constexpr std::string_view op_type = "Flatten";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::copy_of(0)); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = flatten_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {2, 2}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto a = c.attr("axis");
        const std::size_t r = c.rank(0);
        return {{a >= shape_util::negative(r) && a <= spec::expr(r), "axis is in [-rank, rank]"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto a = shape_util::normalized_axis(c.attr("axis"), r);
        std::vector<spec::expr> outer, inner;
        for (std::size_t j = 0; j < r; ++j) {
            outer.push_back(select(spec::expr(j) < a, c.dim(0, j), spec::expr(1)));
            inner.push_back(select(spec::expr(j) < a, spec::expr(1), c.dim(0, j)));
        }
        return {{spec::product(outer), spec::product(inner)}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank != 2) return {};
        return {{{out}, shape_util::ranks_between(0, shape_detail::max_rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<flatten, T>::value);
        const auto in = shape_util::shape_of(x);
        const auto r = static_cast<std::int64_t>(in.size());
        if (a.axis < -r || a.axis > r) {
            throw shape_error(op_type, "axis " + std::to_string(a.axis) + " is out of range for rank " + std::to_string(r) + " (allowed: [-rank, rank])");
        }
        const auto k = static_cast<std::size_t>(a.axis < 0 ? a.axis + r : a.axis);
        const std::size_t outer = element_count(std::span<const std::size_t>(in).first(k), op_type);
        const std::size_t inner = element_count(std::span<const std::size_t>(in).subspan(k), op_type);
        auto y = array<T>::from_shape(shape_type{outer, inner});
        std::copy(x.data(), x.data() + x.size(), y.data());
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<flatten>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<flatten>(c, x);
    }
};

// ---------------------------------------------------------------- Slice

/// Slice-13(data, starts, ends, axes?, steps?): for each listed axis, the
/// elements start, start + step, ... before end. Negative starts/ends count
/// from the end (+ dim); then starts are clamped to [0, dim] (step > 0) or
/// [0, dim - 1] (step < 0), ends to [0, dim] or [-1, dim - 1]. Axes default
/// to [0, len(starts)), steps to 1; steps must be non-zero.
struct slice {
    static constexpr std::string_view op_type = "Slice";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::selection_of(0)); }  // a subset of the elements
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 5> inputs{{{"data", spec::types::all},
                                                             {"starts", spec::types::indices, {1, 1}, "Tind"},
                                                             {"ends", spec::types::indices, {1, 1}, "Tind"},
                                                             {"axes", spec::types::indices, {1, 1}, "Tind", true},
                                                             {"steps", spec::types::indices, {1, 1}, "Tind", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    struct plan {
        std::vector<spec::expr> starts, ends, axes, steps;  // axes normalized
    };
    static plan symbols(const spec::context& c) {
        plan p;
        p.starts = c.values(1);
        p.ends = c.values(2);
        const std::size_t n = std::min(p.starts.size(), p.ends.size()), r = c.rank(0);
        p.starts.resize(n, spec::expr(0));
        p.ends.resize(n, spec::expr(0));
        if (c.has_input(3)) {
            for (const auto& a : c.values(3)) p.axes.push_back(shape_util::normalized_axis(a, r));
        } else {
            for (std::size_t i = 0; i < n; ++i) p.axes.emplace_back(i);
        }
        p.axes.resize(n, spec::expr(0));
        if (c.has_input(4)) p.steps = c.values(4);
        p.steps.resize(n, spec::expr(1));
        return p;
    }
    /// The output length of one sliced axis of size dim (ONNX's clamping).
    static spec::expr length(const spec::expr& dim, const spec::expr& start, const spec::expr& end, const spec::expr& step) {
        const auto s0 = select(start < 0, start + dim, start);
        const auto e0 = select(end < 0, end + dim, end);
        const auto pos = step > 0;
        const auto s = select(pos, shape_util::emin(shape_util::emax(s0, spec::expr(0)), dim), shape_util::emin(shape_util::emax(s0, spec::expr(0)), dim - 1));
        const auto e = select(pos, shape_util::emin(shape_util::emax(e0, spec::expr(0)), dim), shape_util::emin(shape_util::emax(e0, spec::expr(-1)), dim - 1));
        // ceil((e - s) / step) clamped at 0, written so nothing overflows.
        return select(pos, select(e - s <= 0, spec::expr(0), (e - s - 1) / step + 1),
                      select(s - e <= 0, spec::expr(0), spec::expr(1) - (s - e - 1) / step));
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        std::vector<spec::constraint> out{{c.dim(1, 0) == c.dim(2, 0), "starts and ends have the same length"}};
        if (c.has_input(3)) {
            out.push_back({c.dim(3, 0) == c.dim(1, 0), "axes has the length of starts"});
            const auto axes = c.values(3);
            for (std::size_t i = 0; i < axes.size(); ++i) {
                out.push_back({shape_util::axis_in_range(axes[i], r), "axes[" + std::to_string(i) + "] is in [-rank, rank)"});
            }
        } else {
            out.push_back({c.dim(1, 0) <= spec::expr(r), "without axes, starts has at most rank entries"});
        }
        if (c.has_input(4)) {
            out.push_back({c.dim(4, 0) == c.dim(1, 0), "steps has the length of starts"});
            const auto steps = c.values(4);
            for (std::size_t i = 0; i < steps.size(); ++i) {
                out.push_back({steps[i] != 0, "steps[" + std::to_string(i) + "] is not 0"});
            }
        }
        auto d = shape_util::distinct_axes(symbols(c).axes, "axes");
        out.insert(out.end(), d.begin(), d.end());
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto p = symbols(c);
        const auto dims = c.shape(0);
        std::vector<spec::expr> out;
        for (std::size_t j = 0; j < dims.size(); ++j) {
            spec::expr e = dims[j];
            for (std::size_t i = p.axes.size(); i-- > 0;) {
                e = select(p.axes[i] == spec::expr(j), length(dims[j], p.starts[i], p.ends[i], p.steps[i]), e);
            }
            out.push_back(e);
        }
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        const auto ind = spec::types::indices.members();
        return {{{out}, {rank}}, {ind, {1}}, {ind, {1}}, {ind, {1}}, {ind, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// Concrete start and count of one axis (the same formula as `length`).
    static std::pair<std::int64_t, std::int64_t> resolve(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
        if (step == 0) throw shape_error(op_type, "step is 0");
        if (start < 0) start += dim;
        if (end < 0) end += dim;
        std::int64_t count = 0;
        if (step > 0) {
            start = std::clamp<std::int64_t>(start, 0, dim);
            end = std::clamp<std::int64_t>(end, 0, dim);
            count = end - start <= 0 ? 0 : (end - start - 1) / step + 1;
        } else {
            start = std::clamp<std::int64_t>(start, 0, dim - 1);
            end = std::clamp<std::int64_t>(end, -1, dim - 1);
            // floor((start - end - 1) / |step|) + 1; |step| as unsigned, so INT64_MIN does not overflow.
            count = start - end <= 0 ? 0
                                     : static_cast<std::int64_t>(static_cast<std::uint64_t>(start - end - 1) /
                                                                 (0 - static_cast<std::uint64_t>(step))) + 1;
        }
        return {start, count};
    }
    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> starts, std::span<const std::int64_t> ends,
                            std::optional<std::vector<std::int64_t>> axes = std::nullopt,
                            std::optional<std::vector<std::int64_t>> steps = std::nullopt) {
        static_assert(spec::dtype_accepted<slice, T>::value);
        const auto in = shape_util::shape_of(x);
        const std::size_t r = in.size(), n = starts.size();
        if (ends.size() != n || (axes && axes->size() != n) || (steps && steps->size() != n)) {
            throw shape_error(op_type, "starts, ends, axes and steps must have the same length");
        }
        if (!axes && n > r) throw shape_error(op_type, "without axes, starts may have at most rank entries");
        std::vector<std::int64_t> first(r, 0), step(r, 1);
        shape_type out = in;
        std::vector<bool> seen(r, false);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = axes ? shape_util::checked_axis((*axes)[i], r, op_type) : i;
            if (seen[k]) throw shape_error(op_type, "axis " + std::to_string(k) + " is sliced twice");
            seen[k] = true;
            step[k] = steps ? (*steps)[i] : 1;
            const auto [s, count] = resolve(static_cast<std::int64_t>(in[k]), starts[i], ends[i], step[k]);
            first[k] = s;
            out[k] = static_cast<std::size_t>(count);
        }
        const auto st = detail::strides_of(in);
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0;  // first + o * step stays in [0, dim) when the count is positive
            for (std::size_t k = 0; k < r; ++k) {
                f += static_cast<std::size_t>(first[k] + static_cast<std::int64_t>(o[k]) * step[k]) * st[k];
            }
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto starts = shape_util::int_values(c.input(1), op_type), ends = shape_util::int_values(c.input(2), op_type);
        std::optional<std::vector<std::int64_t>> axes, steps;
        if (c.has_input(3)) axes = shape_util::int_values(c.input(3), op_type);
        if (c.has_input(4)) steps = shape_util::int_values(c.input(4), op_type);
        return compute<T>(x, starts, ends, axes, steps);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<slice>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<slice>(c, x);
    }
};

// ---------------------------------------------------------------- Concat

struct concat_attr {
    std::int64_t axis = 0;
    static constexpr std::array<std::string_view, 1> required{"axis"};
};

/// Concat-13(inputs...): joined along axis; every other dim must match.
struct concat {
    static constexpr std::string_view op_type = "Concat";
    /// Every element of every input, in one tensor.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts([](std::span<const spec::value_facts> in, const spec::attribute_map&,
                                      std::span<const shape_type>) {
            spec::value_facts out = in.empty() ? spec::value_facts{} : in[0];
            for (std::size_t i = 1; i < in.size(); ++i) out.join(in[i]);
            return std::vector<spec::value_facts>{out};
        });
    }
    static constexpr int opset = 13;
    using attributes = concat_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"inputs", spec::types::all, {1, 8}, "T", false, true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"concat_result", spec::types::all, {1, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out{shape_util::concrete_fact(c.input_count() >= 1, "at least one input")};
        if (c.input_count() == 0) return out;
        const std::size_t r = c.rank(0);
        const auto a = c.attr("axis");
        out.push_back({shape_util::axis_in_range(a, r), "axis is in [-rank, rank)"});
        const auto an = shape_util::normalized_axis(a, r);
        for (std::size_t i = 1; i < c.input_count(); ++i) {
            out.push_back(shape_util::concrete_fact(c.rank(i) == r, "input " + std::to_string(i) + " has rank " +
                                                                    std::to_string(c.rank(i)) + ", input 0 has rank " + std::to_string(r)));
            if (c.rank(i) != r) return out;
            for (std::size_t j = 0; j < r; ++j) {
                out.push_back({an == spec::expr(j) || c.dim(i, j) == c.dim(0, j),
                               "input " + std::to_string(i) + " matches input 0 at axis " + std::to_string(j) + " (not the concat axis)"});
            }
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto an = shape_util::normalized_axis(c.attr("axis"), r);
        std::vector<spec::expr> out;
        for (std::size_t j = 0; j < r; ++j) {
            std::vector<spec::expr> ds;
            for (std::size_t i = 0; i < c.input_count(); ++i) ds.push_back(c.dim(i, j));
            out.push_back(select(an == spec::expr(j), shape_util::sum(ds), c.dim(0, j)));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const std::vector<const array<T>*>& xs, const attributes& a) {
        static_assert(spec::dtype_accepted<concat, T>::value);
        if (xs.empty()) throw error(op_type, "needs at least one input");
        const auto s0 = shape_util::shape_of(*xs[0]);
        const std::size_t r = s0.size();
        if (r == 0) throw shape_error(op_type, "cannot concatenate scalars (rank 0)");
        const std::size_t k = shape_util::checked_axis(a.axis, r, op_type);
        shape_type out = s0;
        out[k] = 0;
        for (std::size_t i = 0; i < xs.size(); ++i) {
            const auto s = shape_util::shape_of(*xs[i]);
            if (s.size() != r) throw shape_error(op_type, "input " + std::to_string(i) + " has rank " + std::to_string(s.size()) + ", input 0 has rank " + std::to_string(r));
            for (std::size_t j = 0; j < r; ++j) {
                if (j != k && s[j] != s0[j]) {
                    throw shape_error(op_type, "input " + std::to_string(i) + " " + to_string(s) + " does not match input 0 " + to_string(s0) + " at axis " + std::to_string(j));
                }
            }
            out[k] += s[k];
        }
        auto y = array<T>::from_shape(out);
        // Row-major: each input contributes blocks of s[k] * inner elements per outer index.
        const std::size_t outer = element_count(std::span<const std::size_t>(s0).first(k));
        const std::size_t inner = element_count(std::span<const std::size_t>(s0).subspan(k + 1));
        std::size_t f = 0;
        for (std::size_t o = 0; o < outer; ++o) {
            for (const auto* x : xs) {
                const std::size_t block = x->shape()[k] * inner;
                std::copy(x->data() + o * block, x->data() + (o + 1) * block, y.data() + f);
                f += block;
            }
        }
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const std::vector<array<T>>& xs) {
        std::vector<const array<T>*> ptrs;
        for (const auto& x : xs) ptrs.push_back(&x);
        return compute<T>(ptrs, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::vector<array<T>> arrays;
            for (std::size_t i = 0; i < c.input_count(); ++i) arrays.push_back(c.input(i).as_array<T>());
            return tensor(run_typed<T>(c, arrays));
        }));
    }
    /// All inputs share one dtype: with floating data every input is lifted (the default differentiable inputs).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {run_typed<S>(c, x)};
    }
};

// ---------------------------------------------------------------- Split

struct split_attr {
    std::int64_t axis = 0;
    /// Reserved: the number of outputs of the ONNX node (Split-13 has no
    /// attribute for it; the interpreter / ONNX importer sets it from the
    /// node's output count). Used only when the `split` input is absent.
    std::int64_t num_outputs = 2;
};

/// Split-13(input, split?): parts of the lengths in `split` along axis, or
/// `__num_outputs` equal parts (the axis length must divide evenly).
struct split {
    static constexpr std::string_view op_type = "Split";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::selection_of(0)); }  // each part: some elements
    static constexpr int opset = 13;
    using attributes = split_attr;
    static constexpr std::string_view num_outputs_attribute = "__num_outputs";
    static constexpr std::int64_t max_outputs = 4096;  // implementation limit
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all, {1, 8}}, {"split", spec::types::int64, {1, 1}, "T1", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"outputs", spec::types::all, {1, 8}, "T", false, true}}};

    static std::size_t output_count(const spec::context& c) {
        if (c.has_input(1)) return c.input(1).size();
        const auto n = spec::parse_attributes<attributes>(c.attributes(), op_type).num_outputs;
        return n < 1 || n > max_outputs ? 0 : static_cast<std::size_t>(n);
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto a = c.attr("axis");
        std::vector<spec::constraint> out{{shape_util::axis_in_range(a, r), "axis is in [-rank, rank)"}};
        const auto dim = shape_util::pick(c.shape(0), shape_util::normalized_axis(a, r));
        if (c.has_input(1)) {
            const auto v = c.values(1);
            for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "split[" + std::to_string(i) + "] >= 0"});
            out.push_back({shape_util::sum(v) == dim, "the split lengths add up to the axis dim"});
        } else {
            const auto n = c.attr(num_outputs_attribute);
            out.push_back({n >= 1 && n <= spec::expr(max_outputs), "__num_outputs (the node's output count) is in [1, 4096]"});
            out.push_back({dim % shape_util::emax(n, spec::expr(1)) == 0, "the axis dim divides into __num_outputs equal parts"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto an = shape_util::normalized_axis(c.attr("axis"), r);
        const auto dims = c.shape(0);
        const auto dim = shape_util::pick(dims, an);
        std::vector<spec::expr> parts;
        if (c.has_input(1)) {
            parts = c.values(1);
        } else {
            parts.assign(output_count(c), dim / shape_util::emax(c.attr(num_outputs_attribute), spec::expr(1)));
        }
        spec::shape_exprs out;
        for (const auto& p : parts) {
            std::vector<spec::expr> s;
            for (std::size_t j = 0; j < r; ++j) s.push_back(select(an == spec::expr(j), p, dims[j]));
            out.push_back(s);
        }
        return out;
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return std::vector<dtype>(output_count(c), c.input_dtype(0)); }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static std::vector<array<T>> compute(const array<T>& x, const std::optional<std::vector<std::int64_t>>& split_lengths,
                                         const attributes& a = {}) {
        static_assert(spec::dtype_accepted<split, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.empty()) throw shape_error(op_type, "cannot split a scalar (rank 0)");
        const std::size_t k = shape_util::checked_axis(a.axis, in.size(), op_type);
        std::vector<std::size_t> lengths;
        if (split_lengths) {
            if (split_lengths->empty()) throw shape_error(op_type, "split is empty");
            std::size_t total = 0;
            for (const auto v : *split_lengths) {
                lengths.push_back(shape_util::to_dim(v, op_type, "a split length"));
                if (lengths.back() > in[k] - std::min(total, in[k])) {
                    throw shape_error(op_type, "split lengths exceed the axis dim " + std::to_string(in[k]));
                }
                total += lengths.back();
            }
            if (total != in[k]) {
                throw shape_error(op_type, "split lengths add up to " + std::to_string(total) + ", the axis dim is " + std::to_string(in[k]));
            }
        } else {
            if (a.num_outputs < 1 || a.num_outputs > max_outputs) {
                throw error(op_type, "__num_outputs must be in [1, 4096], got " + std::to_string(a.num_outputs));
            }
            const auto n = static_cast<std::size_t>(a.num_outputs);
            if (in[k] % n != 0) {
                throw shape_error(op_type, "axis dim " + std::to_string(in[k]) + " does not split into " + std::to_string(n) + " equal parts");
            }
            lengths.assign(n, in[k] / n);
        }
        const auto st = detail::strides_of(in);
        std::vector<array<T>> out;
        std::size_t offset = 0;
        for (const auto len : lengths) {
            shape_type s = in;
            s[k] = len;
            out.push_back(shape_util::gather_elements_by(x, s, op_type, [&](const shape_type& o) {
                return shape_util::ravel(o, st) + offset * st[k];  // o moved by offset along axis k
            }));
            offset += len;
        }
        return out;
    }
    template <class T>
    static std::vector<array<T>> run_typed(const spec::context& c, const array<T>& x) {
        std::optional<std::vector<std::int64_t>> lengths;
        if (c.has_input(1)) lengths = shape_util::int_values(c.input(1), op_type);
        return compute<T>(x, lengths, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::dispatch<spec::types::all, std::vector<tensor>>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::vector<tensor> out;
            for (const auto& y : run_typed<T>(c, c.input(0).as_array<T>())) out.emplace_back(y);
            return out;
        });
    }
    /// Every output copies part of the input (integer / bool data: one placeholder per output).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return std::vector<array<S>>(output_count(c));
        return run_typed<S>(c, x[0]);
    }
};

// ---------------------------------------------------------------- Expand

/// Expand-13(input, shape): input broadcast with `shape` (bidirectionally:
/// a 1 in shape keeps the input's dim).
struct expand {
    static constexpr std::string_view op_type = "Expand";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::copy_of(0)); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all}, {"shape", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto v = c.values(1);
        const std::size_t r = c.rank(0), R = std::max(r, v.size());
        std::vector<spec::constraint> out;
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "shape[" + std::to_string(i) + "] >= 0"});
        for (std::size_t k = 0; k < R; ++k) {
            if (k + r < R || k + v.size() < R) continue;
            const auto a = c.dim(0, k + r - R), b = v[k + v.size() - R];
            out.push_back({a == b || a == 1 || b == 1, "input and shape broadcast at output axis " + std::to_string(k)});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto v = c.values(1);
        const std::size_t r = c.rank(0), R = std::max(r, v.size());
        std::vector<spec::expr> out;
        for (std::size_t k = 0; k < R; ++k) {
            if (k + r < R) {
                out.push_back(v[k + v.size() - R]);
            } else if (k + v.size() < R) {
                out.push_back(c.dim(0, k + r - R));
            } else {
                const auto a = c.dim(0, k + r - R), b = v[k + v.size() - R];
                out.push_back(select(a == 1, b, a));
            }
        }
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(0, rank)}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> shape) {
        static_assert(spec::dtype_accepted<expand, T>::value);
        shape_type target;
        for (const auto v : shape) target.push_back(shape_util::to_dim(v, op_type, "a shape value"));
        const std::vector<shape_type> shapes{shape_util::shape_of(x), target};
        const auto out = detail::broadcast_shapes(shapes, op_type);
        const auto off = detail::broadcast_offsets({shapes[0]}, out);
        auto y = array<T>::from_shape(out);
        for (std::size_t f = 0; f < y.size(); ++f) y.data()[f] = x.data()[off[0][f]];
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, shape_util::int_values(c.input(1), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<expand>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<expand>(c, x);
    }
};

// ---------------------------------------------------------------- Tile

/// Tile-13(input, repeats): output dim i is dim i * repeats[i].
struct tile {
    static constexpr std::string_view op_type = "Tile";
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::copy_of(0)); }  // every element carries over
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all}, {"repeats", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        std::vector<spec::constraint> out{{c.dim(1, 0) == spec::expr(c.rank(0)), "repeats has one entry per input axis"}};
        const auto v = c.values(1);
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "repeats[" + std::to_string(i) + "] >= 0"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto v = c.values(1);
        std::vector<spec::expr> out;
        for (std::size_t i = 0; i < c.rank(0); ++i) out.push_back(c.dim(0, i) * (i < v.size() ? v[i] : spec::expr(1)));
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> repeats) {
        static_assert(spec::dtype_accepted<tile, T>::value);
        const auto in = shape_util::shape_of(x);
        if (repeats.size() != in.size()) {
            throw shape_error(op_type, "repeats has " + std::to_string(repeats.size()) + " entries; the input has rank " + std::to_string(in.size()));
        }
        shape_type out(in.size());
        for (std::size_t i = 0; i < in.size(); ++i) {
            const auto rep = shape_util::to_dim(repeats[i], op_type, "repeats[" + std::to_string(i) + "]");
            if (in[i] != 0 && rep > std::numeric_limits<std::size_t>::max() / in[i]) throw shape_error(op_type, "output dim overflows");
            out[i] = in[i] * rep;
        }
        const auto st = detail::strides_of(in);
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0;
            for (std::size_t i = 0; i < o.size(); ++i) f += (o[i] % in[i]) * st[i];
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, shape_util::int_values(c.input(1), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<tile>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<tile>(c, x);
    }
};

// ---------------------------------------------------------------- Pad

struct pad_attr {
    std::string mode = "constant";
};

/// Pad-13(data, pads, constant_value?): pads = [x1_begin, ..., xn_begin,
/// x1_end, ..., xn_end]; negative pads crop. Output index o reads input
/// index i = o - begin: constant fills outside [0, dim); edge clamps to the
/// border; reflect mirrors without repeating the border (needs every pad <=
/// dim - 1, as onnxruntime). constant_value (a scalar, default 0) is used only
/// in constant mode.
struct pad {
    static constexpr std::string_view op_type = "Pad";
    static constexpr int opset = 13;
    using attributes = pad_attr;
    static constexpr std::array<spec::value_spec, 3> inputs{{{"data", spec::types::all},
                                                             {"pads", spec::types::int64, {1, 1}, "T1"},
                                                             {"constant_value", spec::types::all, {0, 1}, "T", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::string mode = spec::parse_attributes<attributes>(c.attributes(), op_type).mode;
        const std::size_t r = c.rank(0);
        std::vector<spec::constraint> out{
            shape_util::concrete_fact(mode == "constant" || mode == "reflect" || mode == "edge",
                                  "mode is constant, reflect or edge (got '" + mode + "')"),
            {c.dim(1, 0) == spec::expr(2 * r), "pads has 2 * rank entries"}};
        if (c.has_input(2) && c.rank(2) == 1) out.push_back({c.dim(2, 0) == 1, "constant_value is a single value"});
        const auto p = c.values(1);
        if (p.size() != 2 * r) return out;
        for (std::size_t j = 0; j < r; ++j) {
            const auto d = c.dim(0, j), b = p[j], e = p[j + r];
            out.push_back({d + b + e >= 0, "axis " + std::to_string(j) + " keeps a non-negative size after cropping"});
            if (mode == "reflect") {
                out.push_back({b <= d - 1 && e <= d - 1, "reflect pads of axis " + std::to_string(j) + " are at most dim - 1"});
            } else if (mode == "edge") {
                out.push_back({(b <= 0 && e <= 0) || d >= 1, "edge padding of axis " + std::to_string(j) + " needs a non-empty axis"});
            }
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto p = c.values(1);
        const std::size_t r = c.rank(0);
        std::vector<spec::expr> out;
        for (std::size_t j = 0; j < r; ++j) out.push_back(c.dim(0, j) + p[j] + p[j + r]);
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {1}}, {{out}, {0, 1}}};  // constant_value: a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::span<const std::int64_t> pads, T value, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<pad, T>::value);
        const auto in = shape_util::shape_of(x);
        const std::size_t r = in.size();
        const std::string& mode = a.mode;
        if (mode != "constant" && mode != "reflect" && mode != "edge") {
            throw error(op_type, "mode must be constant, reflect or edge, got '" + mode + "'");
        }
        if (pads.size() != 2 * r) {
            throw shape_error(op_type, "pads has " + std::to_string(pads.size()) + " entries; needs 2 * rank = " + std::to_string(2 * r));
        }
        shape_type out(r);
        constexpr std::int64_t limit = std::int64_t{1} << 40;  // keeps the index arithmetic far from overflow
        for (std::size_t j = 0; j < r; ++j) {
            const auto d = static_cast<std::int64_t>(in[j]);
            const std::int64_t b = pads[j], e = pads[j + r];
            if (b > limit || e > limit || b < -limit || e < -limit) throw shape_error(op_type, "pads are too large");
            if (d + b + e < 0) throw shape_error(op_type, "pads crop axis " + std::to_string(j) + " below size 0");
            if (mode == "reflect" && (b > d - 1 || e > d - 1)) {
                throw shape_error(op_type, "reflect pads of axis " + std::to_string(j) + " must be at most dim - 1 = " + std::to_string(d - 1));
            }
            if (mode == "edge" && d == 0 && (b > 0 || e > 0)) {
                throw shape_error(op_type, "edge padding of axis " + std::to_string(j) + " needs a non-empty axis");
            }
            out[j] = static_cast<std::size_t>(d + b + e);
        }
        const auto st = detail::strides_of(in);
        auto y = array<T>::from_shape(out);
        // The mode once (checked above), not a string compare per element.
        enum class fill { constant, edge, reflect };
        const fill how = mode == "constant" ? fill::constant : mode == "edge" ? fill::edge : fill::reflect;
        shape_type o(r, 0);  // the output multi-index of offset f
        for (std::size_t f = 0; f < y.size(); ++f, shape_util::next_index(o, out)) {
            std::size_t src = 0;
            bool inside = true;
            for (std::size_t j = 0; j < r && inside; ++j) {
                const auto d = static_cast<std::int64_t>(in[j]);
                std::int64_t i = static_cast<std::int64_t>(o[j]) - pads[j];
                if (i < 0 || i >= d) {
                    if (how == fill::constant) {
                        inside = false;
                        break;
                    }
                    if (how == fill::edge) i = std::clamp<std::int64_t>(i, 0, d - 1);
                    if (how == fill::reflect) i = i < 0 ? -i : 2 * (d - 1) - i;
                }
                if (i < 0 || i >= d) throw error(op_type, "internal: padded index out of range");
                src += static_cast<std::size_t>(i) * st[j];
            }
            y.data()[f] = inside ? x.data()[src] : value;
        }
        return y;
    }
    /// constant_value is nullptr when absent.
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x, const array<T>* constant_value) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        const auto pads = shape_util::int_values(c.input(1), op_type);
        T value{};
        if (constant_value) {
            const std::size_t n = constant_value->size();
            if (n != 1) throw shape_error(op_type, "constant_value must hold one value, got " + std::to_string(n));
            value = constant_value->data()[0];
        }
        return compute<T>(x, pads, value, a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            std::optional<array<T>> value;
            if (c.has_input(2)) value = c.input(2).as_array<T>();
            return tensor(run_typed<T>(c, c.input(0).as_array<T>(), value ? &*value : nullptr));
        }));
    }
    /// Differentiable in data and, when present, constant_value (its tangent
    /// reaches the constant-mode padding; reflect / edge only copy data).
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        return {run_typed<S>(c, x[0], c.has_input(2) ? &x[2] : nullptr)};
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}
            .choice("mode", {std::string("constant"), std::string("reflect"), std::string("edge")}, 0.8)
            .facts(padded_facts);
    }
    /// Constant mode adds elements equal to constant_value (0 when absent; a
    /// graph's constant_value input is whatever the search makes it).
    static std::vector<spec::value_facts> padded_facts(std::span<const spec::value_facts> in,
                                                       const spec::attribute_map& attrs, std::span<const shape_type>) {
        spec::value_facts out = in.empty() ? spec::value_facts{} : in[0];
        if (spec::parse_attributes<attributes>(attrs, op_type).mode != "constant") return {out};
        if (in.size() <= 2) return {out.force(0.0)};
        if (in[2].is_unknown()) return {spec::value_facts{}};
        return {out.join(in[2])};
    }
};

// ---------------------------------------------------------------- Gather

struct gather_attr {
    std::int64_t axis = 0;
};

/// Gather-13(data, indices): out[i_0..i_{a-1}, j.., i_{a+1}..] =
/// data[i_0..i_{a-1}, indices[j..], i_{a+1}..]; indices in [-dim, dim),
/// negative ones count from the end; out-of-range indices throw.
struct gather {
    static constexpr std::string_view op_type = "Gather";
    static constexpr int opset = 13;
    using attributes = gather_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all, {1, 8}}, {"indices", spec::types::indices, {}, "Tind"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0), q = c.rank(1);
        return {{shape_util::axis_in_range(c.attr("axis"), r), "axis is in [-rank, rank)"},
                shape_util::concrete_fact(r + q - 1 <= shape_detail::max_rank, "the output rank is at most 8")};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0), q = c.rank(1);
        const auto an = shape_util::normalized_axis(c.attr("axis"), r);
        const auto d = c.shape(0), id = c.shape(1);
        std::vector<spec::expr> out;
        for (std::size_t k = 0; k + 1 < r + q; ++k) {
            const spec::expr kk(k);
            out.push_back(select(kk < an, shape_util::pick(d, kk),
                                 select(kk < an + spec::expr(q), shape_util::pick(id, kk - an), shape_util::pick(d, kk - spec::expr(q) + 1))));
        }
        return {out};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out)) return {};
        return {{{out}, shape_util::ranks_between(1, std::min(rank + 1, shape_detail::max_rank))},
                {spec::types::indices.members(), shape_util::ranks_between(0, rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const array<std::int64_t>& indices, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<gather, T>::value);
        const auto in = shape_util::shape_of(x), is = shape_util::shape_of(indices);
        if (in.empty()) throw shape_error(op_type, "data must have rank >= 1");
        const std::size_t k = shape_util::checked_axis(a.axis, in.size(), op_type);
        const auto dim = static_cast<std::int64_t>(in[k]);
        std::vector<std::size_t> idx(indices.size());
        for (std::size_t f = 0; f < indices.size(); ++f) {
            const std::int64_t v = indices.data()[f];
            if (v < -dim || v >= dim) {
                throw error(op_type, "index " + std::to_string(v) + " is out of range for axis " + std::to_string(k) +
                                         " of size " + std::to_string(dim) + " (allowed: [" + std::to_string(-dim) + ", " +
                                         std::to_string(dim - 1) + "])");
            }
            idx[f] = static_cast<std::size_t>(v < 0 ? v + dim : v);
        }
        shape_type out(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(k));
        out.insert(out.end(), is.begin(), is.end());
        out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(k) + 1, in.end());
        const auto st = detail::strides_of(in), ist = detail::strides_of(is);
        const std::size_t q = is.size();
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            std::size_t f = 0, fi = 0;
            for (std::size_t j = 0; j < k; ++j) f += o[j] * st[j];
            for (std::size_t j = 0; j < q; ++j) fi += o[k + j] * ist[j];
            f += idx[fi] * st[k];
            for (std::size_t j = k + 1; j < in.size(); ++j) f += o[j + q - 1] * st[j];
            return f;
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return compute<T>(x, c.input(1).to<std::int64_t>(), a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<gather>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<gather>(c, x);
    }
    template <int = 0>
    static spec::hints hints() {
        // Indices into the (solved) axis dim, negative ones included.
        return spec::hints{}.facts(spec::facts::selection_of(0)).after_solving(1, [](rng& g, const spec::context& c, dtype d, const shape_type& s) {
            return shape_detail::random_indices(g, c, d, s);
        });
    }
};

// ---------------------------------------------------------------- GatherElements

struct gather_elements_attr {
    std::int64_t axis = 0;
};

/// GatherElements-13(data, indices): out[i] = data[i with i[axis] replaced by
/// indices[i]]; same ranks, indices dims <= data dims off the axis (as
/// onnxruntime); indices in [-dim, dim), out-of-range ones throw.
struct gather_elements {
    static constexpr std::string_view op_type = "GatherElements";
    static constexpr int opset = 13;
    using attributes = gather_elements_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"data", spec::types::all, {1, 8}}, {"indices", spec::types::indices, {1, 8}, "Tind"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {1, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto a = c.attr("axis");
        std::vector<spec::constraint> out{{shape_util::axis_in_range(a, r), "axis is in [-rank, rank)"},
                                          shape_util::concrete_fact(c.rank(1) == r, "indices has the rank of data")};
        if (c.rank(1) != r) return out;
        const auto an = shape_util::normalized_axis(a, r);
        for (std::size_t j = 0; j < r; ++j) {
            out.push_back({an == spec::expr(j) || c.dim(1, j) <= c.dim(0, j),
                           "indices dim " + std::to_string(j) + " <= data dim (off the axis)"});
        }
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(1)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank == 0) return {};
        return {{{out}, {rank}}, {spec::types::indices.members(), {rank}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const array<std::int64_t>& indices, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<gather_elements, T>::value);
        const auto in = shape_util::shape_of(x), is = shape_util::shape_of(indices);
        if (in.empty()) throw shape_error(op_type, "data must have rank >= 1");
        const std::size_t k = shape_util::checked_axis(a.axis, in.size(), op_type);
        if (is.size() != in.size()) throw shape_error(op_type, "indices rank " + std::to_string(is.size()) + " differs from data rank " + std::to_string(in.size()));
        for (std::size_t j = 0; j < in.size(); ++j) {
            if (j != k && is[j] > in[j]) throw shape_error(op_type, "indices " + to_string(is) + " exceeds data " + to_string(in) + " at axis " + std::to_string(j));
        }
        const auto dim = static_cast<std::int64_t>(in[k]);
        const auto st = detail::strides_of(in);
        const auto ist = detail::strides_of(is);
        return shape_util::gather_elements_by(x, is, op_type, [&](const shape_type& o) {
            const std::int64_t v = indices.data()[shape_util::ravel(o, ist)];
            if (v < -dim || v >= dim) {
                throw error(op_type, "index " + std::to_string(v) + " is out of range for axis " + std::to_string(k) +
                                         " of size " + std::to_string(dim));
            }
            // o with its axis-k coordinate replaced by the index read
            return shape_util::ravel(o, st) - o[k] * st[k] + static_cast<std::size_t>(v < 0 ? v + dim : v) * st[k];
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return compute<T>(x, c.input(1).to<std::int64_t>(), a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<gather_elements>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<gather_elements>(c, x);
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(spec::facts::selection_of(0)).after_solving(1, [](rng& g, const spec::context& c, dtype d, const shape_type& s) {
            return shape_detail::random_indices(g, c, d, s);
        });
    }
};

// ---------------------------------------------------------------- Trilu

struct trilu_attr {
    std::int64_t upper = 1;
};

/// Trilu-14(input, k?): keeps, in each of the last two dims' matrices, the
/// elements with j - i >= k (upper != 0) or j - i <= k (upper == 0); zeroes
/// the rest. k is a scalar (rank 0, or one value), default 0.
struct trilu {
    static constexpr std::string_view op_type = "Trilu";
    static constexpr int opset = 14;
    using attributes = trilu_attr;
    static constexpr std::array<spec::value_spec, 2> inputs{
        {{"input", spec::types::all, {2, 8}}, {"k", spec::types::int64, {0, 1}, "T1", true}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {2, 8}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (c.has_input(1) && c.rank(1) == 1) return {{c.dim(1, 0) == 1, "k is a single value"}};
        return {};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank < 2) return {};
        return {{{out}, {rank}}, {{dtype::i64}, {0, 1}}};  // k: a scalar or one value
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, std::int64_t k = 0, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<trilu, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.size() < 2) throw shape_error(op_type, "input must have rank >= 2, got " + std::to_string(in.size()));
        const std::size_t rows = in[in.size() - 2], cols = in[in.size() - 1];
        auto y = array<T>::from_shape(in);
        for (std::size_t f = 0; f < x.size(); ++f) {
            const auto i = static_cast<std::int64_t>(f / cols % rows), j = static_cast<std::int64_t>(f % cols);
            const bool keep = a.upper != 0 ? j - i >= k : j - i <= k;
            y.data()[f] = keep ? x.data()[f] : T{};
        }
        return y;
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        std::int64_t k = 0;
        if (c.has_input(1)) {
            const auto v = shape_util::int_values(c.input(1), op_type);
            if (v.size() != 1) throw shape_error(op_type, "k must hold one value, got " + std::to_string(v.size()));
            k = v[0];
        }
        return compute<T>(x, k, a);
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<trilu>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<trilu>(c, x);
    }
    template <int = 0>
    static spec::hints hints() {
        // Zeros where the triangle leaves elements out (every matrix but 1 x 1 and the widest k).
        return spec::hints{}.flag("upper").facts([](std::span<const spec::value_facts> in, const spec::attribute_map&,
                                                    std::span<const shape_type> shapes) {
            spec::value_facts out = in.empty() ? spec::value_facts{} : in[0];
            const bool single = !shapes.empty() && shapes[0].size() >= 2 && shapes[0][shapes[0].size() - 1] == 1 &&
                                shapes[0][shapes[0].size() - 2] == 1;
            if (!single) out.force(0.0);
            return std::vector<spec::value_facts>{out};
        });
    }
};

// ---------------------------------------------------------------- Shape

struct shape_attr {
    std::int64_t start = 0;
    std::optional<std::int64_t> end;
};

/// Shape-15(data): dims[start:end] as int64; negative start/end count from
/// the end (+ rank), then both are clamped to [0, rank]; empty if end <= start.
struct shape {
    static constexpr std::string_view op_type = "Shape";
    static constexpr int opset = 15;
    using attributes = shape_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"shape", spec::types::int64, {1, 1}, "T1"}}};

    static spec::expr clamped(const spec::expr& v, std::size_t r) {
        return shape_util::emin(shape_util::emax(select(v < 0, v + spec::expr(r), v), spec::expr(0)), spec::expr(r));
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const std::size_t r = c.rank(0);
        const auto s = clamped(c.attr("start"), r);
        const auto e = c.has_attribute("end") ? clamped(c.attr("end"), r) : spec::expr(r);
        return {{shape_util::emax(e - s, spec::expr(0))}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context&) { return {dtype::i64}; }
    // Facts: the dims it returns, known once shapes are solved (Sinh of a Shape in float16 may overflow).
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type> shapes) {
                spec::value_facts f;
                if (shapes.empty()) return std::vector<spec::value_facts>{f};
                const auto a = spec::parse_attributes<attributes>(attrs, op_type);
                const auto r = static_cast<std::int64_t>(shapes[0].size());
                auto clamp = [r](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + r : v, 0, r); };
                const std::int64_t s = clamp(a.start), e = a.end ? clamp(*a.end) : r;
                for (std::int64_t i = s; i < e; ++i) {
                    const auto d = static_cast<double>(shapes[0][static_cast<std::size_t>(i)]);
                    if (i == s) f = spec::value_facts::constant(d);
                    f.force(d);
                }
                return std::vector<spec::value_facts>{f};
            });
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (out != dtype::i64 || rank != 1) return {};
        return {{spec::types::all.members(), shape_util::ranks_between(0, shape_detail::max_rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<std::int64_t> compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<shape, T>::value);
        const auto r = static_cast<std::int64_t>(x.dimension());
        auto clamp = [r](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + r : v, 0, r); };
        const std::int64_t s = clamp(a.start), e = a.end ? clamp(*a.end) : r;
        std::vector<std::int64_t> dims;
        for (std::int64_t i = s; i < e; ++i) dims.push_back(static_cast<std::int64_t>(x.shape()[static_cast<std::size_t>(i)]));
        auto y = array<std::int64_t>::from_shape({dims.size()});
        std::copy(dims.begin(), dims.end(), y.data());
        return y;
    }
    // Not differentiable: the output is int64 dims, which no element value of the input changes.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>(), a));
        }));
    }
};

// ---------------------------------------------------------------- Size

/// Size-13(data): the element count as an int64 scalar.
struct size {
    static constexpr std::string_view op_type = "Size";
    static constexpr int opset = 13;
    using attributes = spec::no_attributes;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"data", spec::types::all}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"size", spec::types::int64, {0, 0}, "T1"}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context&) { return {{}}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context&) { return {dtype::i64}; }
    // Facts: the element count, known once shapes are solved.
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.facts(
            [](std::span<const spec::value_facts>, const spec::attribute_map&, std::span<const shape_type> shapes) {
                if (shapes.empty()) return std::vector<spec::value_facts>{spec::value_facts{}};
                double n = 1.0;
                for (const auto d : shapes[0]) n *= static_cast<double>(d);
                return std::vector<spec::value_facts>{spec::value_facts::constant(n)};
            });
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (out != dtype::i64 || rank != 0) return {};
        return {{spec::types::all.members(), shape_util::ranks_between(0, shape_detail::max_rank)}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<std::int64_t> compute(const array<T>& x) {
        static_assert(spec::dtype_accepted<size, T>::value);
        auto y = array<std::int64_t>::from_shape(shape_type{});
        y.data()[0] = static_cast<std::int64_t>(x.size());
        return y;
    }
    // Not differentiable: the output is the int64 element count, which no element value of the input changes.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<spec::types::all>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).as_array<T>()));
        }));
    }
};

// ---------------------------------------------------------------- ConstantOfShape

struct constant_of_shape_attr {
    tensor value = tensor::zeros(dtype::f32, {1});
};

/// ConstantOfShape-9(input): a tensor of shape `input` (int64, empty = scalar)
/// filled with the one element of attribute `value` (default float32 0); the
/// output dtype is value's dtype.
struct constant_of_shape {
    static constexpr std::string_view op_type = "ConstantOfShape";
    static constexpr int opset = 9;
    using attributes = constant_of_shape_attr;
    static constexpr spec::dtype_set value_types = spec::dtypes_of(dtype::f16, dtype::f32, dtype::f64, dtype::i8, dtype::i16, dtype::i32,
                                                                   dtype::i64, dtype::u8, dtype::boolean);
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::int64, {1, 1}, "T1"}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", value_types, {}, "T2"}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        std::vector<spec::constraint> out{
            shape_util::concrete_fact(a.value.size() == 1, "value holds exactly one element"),
            shape_util::concrete_fact(value_types.contains(a.value.element_dtype()),
                                  "value's dtype is one of " + value_types.to_string() + " (got " + std::string(name(a.value.element_dtype())) + ")")};
        const auto v = c.values(0);
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back({v[i] >= 0, "input[" + std::to_string(i) + "] >= 0"});
        return out;
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.values(0)}; }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        return {spec::parse_attributes<attributes>(c.attributes(), op_type).value.element_dtype()};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t) {
        if (!value_types.contains(out)) return {};
        return {{{dtype::i64}, {1}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    /// The typed kernel: T is the output (value) type; the shape is int64.
    template <class T>
    static array<T> compute(std::span<const std::int64_t> shape, T value) {
        static_assert(element_type<T> && value_types.contains(dtype_of<T>),
                      "ConstantOfShape: T is the element type of `value` and must be one of its allowed dtypes");
        shape_type s;
        for (const auto v : shape) s.push_back(shape_util::to_dim(v, op_type, "a shape value"));
        auto y = array<T>::from_shape(s);
        const std::size_t n = element_count(s, op_type);
        std::fill(y.data(), y.data() + n, value);
        return y;
    }
    // Not differentiable: the only input is an int64 shape; the fill value is an attribute, not an input.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        if (a.value.size() != 1) throw error(op_type, "value must hold exactly one element, got " + std::to_string(a.value.size()));
        const auto shape = shape_util::int_values(c.input(0), op_type);
        return detail::single_output(detail::dispatch<value_types>(a.value.element_dtype(), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(shape, a.value.values<T>()[0]));
        }));
    }
    template <int = 0>
    static spec::hints hints() {
        return spec::hints{}.tensor_attribute(
            "value",
            [](rng& g, std::optional<dtype> d, const std::optional<shape_type>&) {
                return spec::random_values(g, d ? *d : detail::pick_dtype(g, value_types), {1}, -9, 9);
            },
            0.7)
            .facts([](std::span<const spec::value_facts>, const spec::attribute_map& attrs, std::span<const shape_type>) {
                // Every element is `value` (0 when not given), whatever the shape input.
                double v = 0.0;
                if (const auto it = attrs.find("value"); it != attrs.end()) {
                    if (const auto* t = std::get_if<tensor>(&it->second); t != nullptr && t->size() == 1) {
                        v = t->to<double>().data()[0];
                    }
                }
                return std::vector<spec::value_facts>{spec::value_facts::constant(v)};
            });
    }
};

// ---------------------------------------------------------------- Range

/// Range-11(start, limit, delta): start + i * delta for i in
/// [0, max(ceil((limit - start) / delta), 0)). delta must be non-zero. Integer
/// inputs are symbols (the length is symbolic); float inputs are computed in
/// double (count and values) and rounded once to T.
struct range {
    static constexpr std::string_view op_type = "Range";
    static constexpr int opset = 11;
    using attributes = spec::no_attributes;
    static constexpr spec::dtype_set types = spec::dtypes_of(dtype::f32, dtype::f64, dtype::i16, dtype::i32, dtype::i64);
    static constexpr std::array<spec::value_spec, 3> inputs{{{"start", types, {0, 0}}, {"limit", types, {0, 0}}, {"delta", types, {0, 0}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", types, {1, 1}}}};
    static constexpr std::int64_t max_elements = std::int64_t{1} << 40;  // implementation limit

    static bool symbolic(const spec::context& c) { return c.input_dtype(0) == dtype::i64 || c.input_dtype(0) == dtype::i32; }
    /// The concrete element count; throws on delta == 0, non-finite inputs, overflow.
    static std::int64_t count(const tensor& start, const tensor& limit, const tensor& delta) {
        if (info(start.element_dtype()).is_floating) {
            const double s = start.value_as_double(0), l = limit.value_as_double(0), d = delta.value_as_double(0);
            if (!std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) throw error(op_type, "start, limit and delta must be finite");
            if (d == 0.0) throw error(op_type, "delta is 0");
            const double n = std::ceil((l - s) / d);
            if (!(n < static_cast<double>(max_elements))) throw error(op_type, "the output would have more than 2^40 elements");
            return n > 0 ? static_cast<std::int64_t>(n) : 0;
        }
        const auto s = start.to<std::int64_t>().data()[0], l = limit.to<std::int64_t>().data()[0], d = delta.to<std::int64_t>().data()[0];
        if (d == 0) throw error(op_type, "delta is 0");
        std::int64_t diff = 0;
        if (__builtin_sub_overflow(l, s, &diff)) throw error(op_type, "limit - start overflows int64");
        std::int64_t n = 0;
        if (d > 0) {
            n = diff <= 0 ? 0 : (diff - 1) / d + 1;
        } else {
            // ceil(|diff| / |d|) = floor((|diff| - 1) / |d|) + 1; |d| as unsigned, so INT64_MIN does not overflow.
            n = diff >= 0 ? 0 : static_cast<std::int64_t>(static_cast<std::uint64_t>(-(diff + 1)) / (0 - static_cast<std::uint64_t>(d))) + 1;
        }
        if (n > max_elements) throw error(op_type, "the output would have more than 2^40 elements");
        return n;
    }
    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        if (symbolic(c)) {
            return {{c.value(2, 0) != 0, "delta is not 0"}};
        }
        const double d = c.input(2).value_as_double(0);
        return {shape_util::concrete_fact(d != 0.0, "delta is not 0")};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        if (symbolic(c)) {
            const auto s = c.value(0, 0), l = c.value(1, 0), d = c.value(2, 0);
            const auto diff = l - s;
            return {{select(d > 0, select(diff <= 0, spec::expr(0), (diff - 1) / d + 1),
                            select(diff >= 0, spec::expr(0), spec::expr(1) - (spec::expr(-1) - diff) / d))}};
        }
        return {{spec::expr(count(c.input(0), c.input(1), c.input(2)))}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!types.contains(out) || rank != 1) return {};
        return {{{out}, {0}}, {{out}, {0}}, {{out}, {0}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(T start, T limit, T delta) {
        static_assert(spec::dtype_accepted<range, T>::value);
        const auto scalar = [](T v) {
            auto a = array<T>::from_shape(shape_type{});
            a.data()[0] = v;
            return tensor(a);
        };
        const auto n = static_cast<std::size_t>(count(scalar(start), scalar(limit), scalar(delta)));
        auto y = array<T>::from_shape({n});
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (std::is_floating_point_v<T>) {
                y.data()[i] = static_cast<T>(static_cast<double>(start) + static_cast<double>(i) * static_cast<double>(delta));
            } else {  // stays within [start, limit): no overflow
                y.data()[i] = static_cast<T>(static_cast<std::int64_t>(start) + static_cast<std::int64_t>(i) * static_cast<std::int64_t>(delta));
            }
        }
        return y;
    }
    // Not differentiable: a generator of positions / index sequences whose length steps with its inputs; kept constant.
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) {
        return detail::single_output(detail::dispatch<types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            return tensor(compute<T>(c.input(0).values<T>()[0], c.input(1).values<T>()[0], c.input(2).values<T>()[0]));
        }));
    }
    template <int = 0>
    static spec::hints hints() {
        // Floating (and int16) ranges read their data: start, limit, delta giving 1..10 elements.
        auto scalar = [](std::size_t which) {
            return [which](rng& g, const spec::context& c) {
                const double start = static_cast<double>(g.integer(-10, 10));
                const double delta = g.bernoulli(0.5) ? static_cast<double>(g.integer(1, 4)) : -static_cast<double>(g.integer(1, 4));
                const double v = which == 0 ? start : which == 2 ? delta : start + delta * static_cast<double>(g.integer(1, 10));
                auto t = array<double>::from_shape(shape_type{});
                t.data()[0] = v;
                return tensor(t).cast(c.input_dtype(which));
            };
        };
        return spec::hints{}.before_solving(0, scalar(0)).before_solving(1, scalar(1)).before_solving(2, scalar(2));
    }
};

// ---------------------------------------------------------------- DepthToSpace / SpaceToDepth

struct depth_to_space_attr {
    std::int64_t blocksize = 1;
    std::string mode = "DCR";
    static constexpr std::array<std::string_view, 1> required{"blocksize"};
};

/// DepthToSpace-13(input [N, C, H, W]) -> [N, C / b², H * b, W * b]:
/// DCR: out[n, c, h*b + i, w*b + j] = in[n, (i*b + j) * C/b² + c, h, w];
/// CRD: out[n, c, h*b + i, w*b + j] = in[n, c * b² + i*b + j, h, w].
struct depth_to_space {
    static constexpr std::string_view op_type = "DepthToSpace";
    static constexpr int opset = 13;
    using attributes = depth_to_space_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all, {4, 4}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {4, 4}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto mode = spec::parse_attributes<attributes>(c.attributes(), op_type).mode;
        const auto b = c.attr("blocksize");
        return {shape_util::concrete_fact(mode == "DCR" || mode == "CRD", "mode is DCR or CRD (got '" + mode + "')"),
                {b >= 1, "blocksize >= 1"},
                {c.dim(0, 1) % shape_util::emax(b * b, spec::expr(1)) == 0, "channels divide by blocksize²"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto b = c.attr("blocksize");
        return {{c.dim(0, 0), c.dim(0, 1) / shape_util::emax(b * b, spec::expr(1)), c.dim(0, 2) * b, c.dim(0, 3) * b}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank != 4) return {};
        return {{{out}, {4}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a) {
        static_assert(spec::dtype_accepted<depth_to_space, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.size() != 4) throw shape_error(op_type, "input must have rank 4, got " + std::to_string(in.size()));
        if (a.mode != "DCR" && a.mode != "CRD") throw error(op_type, "mode must be DCR or CRD, got '" + a.mode + "'");
        if (a.blocksize < 1 || a.blocksize > (std::int64_t{1} << 16)) throw error(op_type, "blocksize must be in [1, 65536], got " + std::to_string(a.blocksize));
        const auto b = static_cast<std::size_t>(a.blocksize);
        if (in[1] % (b * b) != 0) throw shape_error(op_type, "channels " + std::to_string(in[1]) + " do not divide by blocksize² = " + std::to_string(b * b));
        const std::size_t oc = in[1] / (b * b);
        const shape_type out{in[0], oc, in[2] * b, in[3] * b};
        const auto st = detail::strides_of(in);
        const bool dcr = a.mode == "DCR";
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            const std::size_t i = o[2] % b, j = o[3] % b;
            const std::size_t ch = dcr ? (i * b + j) * oc + o[1] : o[1] * b * b + i * b + j;
            return o[0] * st[0] + ch * st[1] + (o[2] / b) * st[2] + (o[3] / b) * st[3];
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<depth_to_space>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<depth_to_space>(c, x);
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::copy_of(0)).choice("mode", {std::string("DCR"), std::string("CRD")}, 0.6).solve("blocksize", 1, 4, 1.0); }
};

struct space_to_depth_attr {
    std::int64_t blocksize = 1;
    static constexpr std::array<std::string_view, 1> required{"blocksize"};
};

/// SpaceToDepth-13(input [N, C, H, W]) -> [N, C * b², H / b, W / b]:
/// out[n, (i*b + j) * C + c, h, w] = in[n, c, h*b + i, w*b + j].
struct space_to_depth {
    static constexpr std::string_view op_type = "SpaceToDepth";
    static constexpr int opset = 13;
    using attributes = space_to_depth_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all, {4, 4}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {4, 4}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto b = c.attr("blocksize");
        return {{b >= 1, "blocksize >= 1"},
                {c.dim(0, 2) % shape_util::emax(b, spec::expr(1)) == 0, "height divides by blocksize"},
                {c.dim(0, 3) % shape_util::emax(b, spec::expr(1)) == 0, "width divides by blocksize"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto b = c.attr("blocksize");
        const auto bb = shape_util::emax(b, spec::expr(1));
        return {{c.dim(0, 0), c.dim(0, 1) * b * b, c.dim(0, 2) / bb, c.dim(0, 3) / bb}};
    }
    template <int = 0>
    static std::vector<dtype> output_dtypes(const spec::context& c) { return {c.input_dtype(0)}; }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank != 4) return {};
        return {{{out}, {4}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a) {
        static_assert(spec::dtype_accepted<space_to_depth, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.size() != 4) throw shape_error(op_type, "input must have rank 4, got " + std::to_string(in.size()));
        if (a.blocksize < 1 || a.blocksize > (std::int64_t{1} << 16)) throw error(op_type, "blocksize must be in [1, 65536], got " + std::to_string(a.blocksize));
        const auto b = static_cast<std::size_t>(a.blocksize);
        if (in[2] % b != 0 || in[3] % b != 0) {
            throw shape_error(op_type, "height and width " + std::to_string(in[2]) + ", " + std::to_string(in[3]) + " do not divide by blocksize " + std::to_string(b));
        }
        const std::size_t ch = in[1];
        const shape_type out{in[0], ch * b * b, in[2] / b, in[3] / b};
        const auto st = detail::strides_of(in);
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            const std::size_t c = o[1] % ch, blk = o[1] / ch, i = blk / b, j = blk % b;
            return o[0] * st[0] + c * st[1] + (o[2] * b + i) * st[2] + (o[3] * b + j) * st[3];
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<space_to_depth>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<space_to_depth>(c, x);
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.facts(spec::facts::copy_of(0)).solve("blocksize", 1, 4, 1.0); }
};

inline constexpr auto shape_ops =
    hana::tuple_t<reshape, transpose, squeeze, unsqueeze, flatten, slice, concat, split, expand, tile, pad, gather,
                  gather_elements, trilu, shape, size, constant_of_shape, range, depth_to_space, space_to_depth>;

/// ONNX-named aliases, the names the rest of the kit uses for op specs.
using Reshape = reshape;
using Transpose = transpose;
using Squeeze = squeeze;
using Unsqueeze = unsqueeze;
using Flatten = flatten;
using Slice = slice;
using Concat = concat;
using Split = split;
using Expand = expand;
using Tile = tile;
using Pad = pad;
using Gather = gather;
using GatherElements = gather_elements;
using Trilu = trilu;
using Shape = shape;
using Size = size;
using ConstantOfShape = constant_of_shape;
using Range = range;
using DepthToSpace = depth_to_space;
using SpaceToDepth = space_to_depth;


}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::reshape_attr, allowzero);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::transpose_attr, perm);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::flatten_attr, axis);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::concat_attr, axis);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::pad_attr, mode);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::gather_attr, axis);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::gather_elements_attr, axis);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::trilu_attr, upper);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::shape_attr, start, end);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::constant_of_shape_attr, value);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::depth_to_space_attr, blocksize, mode);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::space_to_depth_attr, blocksize);

// Split's attribute struct is adapted by hand: its reserved attribute is named
// "__num_outputs", which is not a valid (non-reserved) C++ member name.
namespace boost::hana {
template <>
struct accessors_impl<tensoracle::ops::split_attr> {
    template <int = 0>  // built only where used, as TENSORACLE_ADAPT_ATTRIBUTES does
    static constexpr auto apply() {
        return boost::hana::make_tuple(
            boost::hana::make_pair(BOOST_HANA_STRING("axis"), [](auto&& s) -> decltype(auto) { return (s.axis); }),
            boost::hana::make_pair(BOOST_HANA_STRING("__num_outputs"), [](auto&& s) -> decltype(auto) { return (s.num_outputs); }));
    }
};
}  // namespace boost::hana
// ---- end tensoracle/ops/shape.hpp ----
// ---- begin tensoracle/ops/unary.hpp ----
// tensoracle: element-wise unary ops (math and activations).
//
// Each op is a small formula struct F; unary_elementwise<F> turns it into a
// full spec (signature, shape inference both ways, domain, kernel, sampler).
// Floating kernels compute in float for f16/bf16/f32 and in double for f64
// (ONNX reference behaviour), then round once to the element type. AD scalars
// (ad::dual, ad::rvar) run the same formulas in themselves: run_real.

#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>


namespace tensoracle::ops {

using spec::no_attributes;

/// A sampling range for random instances, inside the op's domain.
struct value_range {
    double lo = -4.0;
    double hi = 4.0;
};

template <class F>
struct unary_elementwise {
    static constexpr std::string_view op_type = F::op_type;
    static constexpr int opset = F::opset;
    using attributes = typename F::attributes;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"X", F::types}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"Y", F::out_types}}};
    static constexpr bool elementwise = true;  ///< ad::elementwise_op
    /// NNSmith's proxy derivative for ops whose derivative is 0 almost everywhere.
    static constexpr double proxy_slope = [] {
        if constexpr (requires { F::proxy_slope; }) {
            return F::proxy_slope;
        } else {
            return 0.0;
        }
    }();

    static std::vector<spec::constraint> constraints(const spec::context&) { return {}; }
    static spec::shape_exprs output_shapes(const spec::context& c) { return {c.shape(0)}; }
    static std::vector<dtype> output_dtypes(const spec::context& c) {
        if constexpr (requires { F::output_dtype; }) {
            return {F::output_dtype};
        } else {
            return {c.input_dtype(0)};
        }
    }
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if constexpr (requires { F::output_dtype; }) {
            if (out != F::output_dtype) return {};
            return {{F::types.members(), {rank}}};
        } else {
            if (!F::types.contains(out)) return {};
            return {{{out}, {rank}}};
        }
    }
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return detail::domain_of<F>(); }

    /// The typed kernel: Y[i] = F(X[i]).
    template <class T>
    static auto compute(const array<T>& x, const attributes& a = {}) {
        static_assert(spec::dtype_accepted<unary_elementwise, T>::value);
        return compute_unchecked<T>(x, a);
    }

    static std::vector<tensor> run(const spec::context& c) {
        const auto a = spec::parse_attributes<attributes>(c.attributes(), op_type);
        return detail::single_output(detail::dispatch<F::types>(c.input_dtype(0), op_type, [&](auto t) {
            using T = typename decltype(t)::type;
            using out_t = std::conditional_t<requires { F::output_dtype; }, bool, T>;
            // Straight from the input's buffer into the output's: no typed copies.
            const auto x = c.input(0).values<T>();
            auto y = tensor::for_overwrite(dtype_of<out_t>, c.input(0).shape());
            apply_into<T>(x.data(), x.size(), y.template values<out_t>().data(), a);
            return y;
        }));
    }

    /// The kernel on AD scalar S (docs/ADDING_AN_OP.md, "Derivatives"). Only ops
    /// with a floating output computed from a floating input have it; integer
    /// inputs of mixed-type ops give the placeholder (run() holds the output).
    template <class S>
        requires(!requires { F::output_dtype; } && !(F::types & spec::types::floating).empty())
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        if (!info(c.input_dtype(0)).is_floating) return {array<S>{}};
        // Unchecked: S is over double also for f32-only ops (Celu), since the AD path lifts f32 to double.
        return {compute_unchecked<S>(x[0], spec::parse_attributes<attributes>(c.attributes(), op_type))};
    }
    static spec::hints hints() {
        spec::hints h;
        if constexpr (requires { F::hints(); }) {
            h = F::hints();
        } else {
            if constexpr (requires { F::range; }) h.range(0, F::range.lo, F::range.hi);
        }
        // What Y holds is F's image of what X holds (Sigmoid's (0, 1), Relu's
        // [0, inf)); integer-only ops (bitwise) are left unknown.
        if constexpr (!(F::types & spec::types::floating).empty()) {
            if (!h.output_facts) h.facts(image_facts);
        }
        return h;
    }
    static std::vector<spec::value_facts> image_facts(std::span<const spec::value_facts> in,
                                                      const spec::attribute_map& attrs, std::span<const shape_type>) {
        const auto a = spec::parse_attributes<attributes>(attrs, op_type);
        return {spec::facts::image(in.empty() ? spec::value_facts{} : in[0],
                                   [&a](double x) { return static_cast<double>(F::apply(x, a)); })};
    }

private:
    template <class T>
    static auto compute_unchecked(const array<T>& x, const attributes& a) {
        using out_t = std::conditional_t<requires { F::output_dtype; }, bool, T>;
        auto y = array<out_t>::from_shape(x.shape());
        apply_into<T>(x.data(), x.size(), y.data(), a);
        return y;
    }
    template <class T, class Out>
    static void apply_into(const T* x, std::size_t n, Out* y, const attributes& a) {
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (real_scalar<T>) {
                using acc = std::conditional_t<ad_scalar<T>, T,
                                               std::conditional_t<std::is_same_v<T, double>, double, float>>;
                y[i] = value_cast<Out>(F::apply(static_cast<acc>(x[i]), a));
            } else {
                y[i] = static_cast<Out>(F::apply(x[i], a));
            }
        }
    }
};

namespace unary {

using spec::dtype_set;
namespace types = spec::types;

// Domain rules: predicates on X, written as "f(x) <= 0" hinges.
inline spec::domain_rule rule(std::string text, double (*f)(double)) {
    return detail::hinge_rule(std::move(text), 0, f);
}
constexpr double eps = 1e-10;  // strict inequalities: f(x) + eps <= 0

// Each op's struct derives its apply() from the shared formula (ops/formulas.hpp).
#define TENSORACLE_UNARY(NAME, OPTYPE, OPSET, TYPES)        \
    struct NAME##_fn : formula::NAME {                       \
        static constexpr std::string_view op_type = OPTYPE;  \
        static constexpr int opset = OPSET;                  \
        static constexpr dtype_set types = TYPES;            \
        static constexpr dtype_set out_types = TYPES;        \
        using attributes = no_attributes;

TENSORACLE_UNARY(relu, "Relu", 14, types::signed_numeric)
    static constexpr double proxy_slope = 0.1;  // derivative is 0 for x < 0
};
TENSORACLE_UNARY(abs, "Abs", 13, types::numeric)
};
TENSORACLE_UNARY(neg, "Neg", 13, types::signed_numeric)
};
TENSORACLE_UNARY(sign, "Sign", 13, types::numeric)
    static constexpr double proxy_slope = 0.1;
};
TENSORACLE_UNARY(ceil, "Ceil", 13, types::floating)
    static constexpr double proxy_slope = 0.1;
};
TENSORACLE_UNARY(floor, "Floor", 13, types::floating)
    static constexpr double proxy_slope = 0.1;
};
/// Round: halves go to the even neighbour (ONNX and IEEE default).
TENSORACLE_UNARY(round, "Round", 11, types::ieee_floating)
    static constexpr double proxy_slope = 0.1;
};
TENSORACLE_UNARY(exp, "Exp", 13, types::floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::overflow_rule("X <= log(max finite)", 0, [](double x, double m) { return x - std::log(m); })};
    }
};
TENSORACLE_UNARY(log, "Log", 13, types::floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("X > 0", [](double x) { return -x + eps; })}; }
    static constexpr value_range range{0.1, 10.0};
};
TENSORACLE_UNARY(sqrt, "Sqrt", 13, types::floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("X >= 0", [](double x) { return -x; })}; }
    static constexpr value_range range{0.0, 10.0};
};
TENSORACLE_UNARY(reciprocal, "Reciprocal", 13, types::floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {rule("|X| > 0", [](double x) { return -std::fabs(x) + eps; })};
    }
    static constexpr value_range range{0.5, 4.0};
};
TENSORACLE_UNARY(sigmoid, "Sigmoid", 13, types::floating)
};
TENSORACLE_UNARY(tanh, "Tanh", 13, types::floating)
};
/// Softplus = log(exp(x) + 1), evaluated as max(x, 0) + log1p(exp(-|x|)) so
/// that it does not overflow for large x (same value where both are finite).
/// Written per sign so that no kink of max or |.| shows in the derivative at 0.
TENSORACLE_UNARY(softplus, "Softplus", 1, types::ieee_floating)
};
TENSORACLE_UNARY(softsign, "Softsign", 1, types::ieee_floating)
};
/// Erf also takes integers (ONNX-13): erf in double, truncated to the type.
TENSORACLE_UNARY(erf, "Erf", 13, types::numeric)
    template <class V>
    static V apply(V x, const attributes& a) {
        if constexpr (std::is_integral_v<V>) {
            return value_cast<V>(std::erf(static_cast<double>(x)));
        } else {
            return formula::erf::apply(x, a);
        }
    }
};
TENSORACLE_UNARY(sin, "Sin", 7, types::ieee_floating)
};
TENSORACLE_UNARY(cos, "Cos", 7, types::ieee_floating)
};
TENSORACLE_UNARY(tan, "Tan", 7, types::ieee_floating)
    static constexpr value_range range{-1.5, 1.5};
};
TENSORACLE_UNARY(asin, "Asin", 7, types::ieee_floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("|X| <= 1", [](double x) { return std::fabs(x) - 1.0; })}; }
    static constexpr value_range range{-1.0, 1.0};
};
TENSORACLE_UNARY(acos, "Acos", 7, types::ieee_floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("|X| <= 1", [](double x) { return std::fabs(x) - 1.0; })}; }
    static constexpr value_range range{-1.0, 1.0};
};
TENSORACLE_UNARY(atan, "Atan", 7, types::ieee_floating)
};
TENSORACLE_UNARY(sinh, "Sinh", 9, types::ieee_floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::overflow_rule("|X| <= log(2 max finite)", 0,
                                      [](double x, double m) { return std::fabs(x) - std::log(2.0 * m / 2.0); })};
    }
};
TENSORACLE_UNARY(cosh, "Cosh", 9, types::ieee_floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {detail::overflow_rule("|X| <= log(max finite)", 0,
                                      [](double x, double m) { return std::fabs(x) - std::log(m); })};
    }
};
TENSORACLE_UNARY(asinh, "Asinh", 9, types::ieee_floating)
};
TENSORACLE_UNARY(acosh, "Acosh", 9, types::ieee_floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() { return {rule("X >= 1", [](double x) { return 1.0 - x; })}; }
    static constexpr value_range range{1.0, 6.0};
};
TENSORACLE_UNARY(atanh, "Atanh", 9, types::ieee_floating)
    template <int = 0>
    static std::vector<spec::domain_rule> domain() {
        return {rule("|X| < 1", [](double x) { return std::fabs(x) - 1.0 + eps; })};
    }
    static constexpr value_range range{-0.95, 0.95};
};
// Not differentiable: boolean in and out.
TENSORACLE_UNARY(not_, "Not", 1, types::boolean)
};
TENSORACLE_UNARY(identity, "Identity", 16, types::all)
};
#undef TENSORACLE_UNARY

// Activations with attributes.
struct leaky_relu_fn : formula::leaky_relu {
    static constexpr std::string_view op_type = "LeakyRelu";
    static constexpr int opset = 16;
    static constexpr dtype_set types = types::floating;
    static constexpr dtype_set out_types = types::floating;
    using attributes = alpha_attr;
};
struct elu_fn : formula::elu {
    static constexpr std::string_view op_type = "Elu";
    static constexpr int opset = 6;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = elu_attr;
};
struct celu_fn : formula::celu {
    static constexpr std::string_view op_type = "Celu";
    static constexpr int opset = 12;
    static constexpr dtype_set types = spec::dtypes_of(dtype::f32);
    static constexpr dtype_set out_types = types;
    using attributes = elu_attr;
    /// max(0, x) + min(0, alpha * expm1(x / alpha)), written per sign with the same values (also -0 -> +0 and
    /// NaN -> 0, as max/min give), so that the derivative at 0 is 1 and not max's and min's 0.
};
struct selu_fn : formula::selu {
    static constexpr std::string_view op_type = "Selu";
    static constexpr int opset = 6;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = selu_attr;
};
struct hard_sigmoid_fn : formula::hard_sigmoid {
    static constexpr std::string_view op_type = "HardSigmoid";
    static constexpr int opset = 6;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = hard_sigmoid_attr;
    static constexpr double proxy_slope = 0.1;
};
struct hard_swish_fn : formula::hard_swish {
    static constexpr std::string_view op_type = "HardSwish";
    static constexpr int opset = 14;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = no_attributes;
    static constexpr double proxy_slope = 0.1;  // derivative is 0 below -3
};
struct thresholded_relu_fn : formula::thresholded_relu {
    static constexpr std::string_view op_type = "ThresholdedRelu";
    static constexpr int opset = 10;
    static constexpr dtype_set types = types::ieee_floating;
    static constexpr dtype_set out_types = types::ieee_floating;
    using attributes = thresholded_relu_attr;
    static constexpr double proxy_slope = 0.1;  // derivative is 0 at or below alpha
};
struct shrink_attr {
    float bias = 0.0f;
    float lambd = 0.5f;
};
template <class V>
V cast_to(double d) {
    return value_cast<V>(d);
}
struct shrink_fn {
    static constexpr std::string_view op_type = "Shrink";
    static constexpr int opset = 9;
    static constexpr dtype_set types = (types::ieee_floating | types::integers);
    static constexpr dtype_set out_types = (types::ieee_floating | types::integers);
    using attributes = shrink_attr;
    static constexpr double proxy_slope = 0.1;  // derivative is 0 inside [-lambd, lambd]
    template <class V>
    static V apply(V x, const attributes& a) {
        if constexpr (std::is_integral_v<V>) {
            // Integers compare and shift in double, then truncate and saturate to the type.
            const double d = static_cast<double>(x);
            if (d < -a.lambd) return cast_to<V>(d + a.bias);
            if (d > a.lambd) return cast_to<V>(d - a.bias);
            return V(0);
        } else {
            // In V itself, so that AD scalars keep the derivative 1 outside [-lambd, lambd]. Same values
            // as in double for f16/bf16/f32 (V = float): a float sum rounded from double is the float sum.
            if (x < V(-a.lambd)) return x + V(a.bias);
            if (x > V(a.lambd)) return x - V(a.bias);
            return V(0);
        }
    }
    static constexpr value_range range{-4.0, 4.0};
};
// Not differentiable: boolean output.
struct is_nan_fn {
    static constexpr std::string_view op_type = "IsNaN";
    static constexpr int opset = 13;
    static constexpr dtype_set types = types::floating;
    static constexpr dtype_set out_types = types::boolean;
    static constexpr dtype output_dtype = dtype::boolean;
    using attributes = no_attributes;
    template <class V>
    static bool apply(V x, const attributes&) { return std::isnan(x); }
};
struct is_inf_attr {
    std::int64_t detect_negative = 1;
    std::int64_t detect_positive = 1;
};
// Not differentiable: boolean output.
struct is_inf_fn {
    static constexpr std::string_view op_type = "IsInf";
    static constexpr int opset = 10;
    static constexpr dtype_set types = spec::dtypes_of(dtype::f32, dtype::f64);
    static constexpr dtype_set out_types = types::boolean;
    static constexpr dtype output_dtype = dtype::boolean;
    using attributes = is_inf_attr;
    template <class V>
    static bool apply(V x, const attributes& a) {
        return std::isinf(x) && ((x > V(0) && a.detect_positive != 0) || (x < V(0) && a.detect_negative != 0));
    }
};

}  // namespace unary

using Relu = unary_elementwise<unary::relu_fn>;
using Abs = unary_elementwise<unary::abs_fn>;
using Neg = unary_elementwise<unary::neg_fn>;
using Sign = unary_elementwise<unary::sign_fn>;
using Ceil = unary_elementwise<unary::ceil_fn>;
using Floor = unary_elementwise<unary::floor_fn>;
using Round = unary_elementwise<unary::round_fn>;
using Exp = unary_elementwise<unary::exp_fn>;
using Log = unary_elementwise<unary::log_fn>;
using Sqrt = unary_elementwise<unary::sqrt_fn>;
using Reciprocal = unary_elementwise<unary::reciprocal_fn>;
using Sigmoid = unary_elementwise<unary::sigmoid_fn>;
using Tanh = unary_elementwise<unary::tanh_fn>;
using Softplus = unary_elementwise<unary::softplus_fn>;
using Softsign = unary_elementwise<unary::softsign_fn>;
using Erf = unary_elementwise<unary::erf_fn>;
using Sin = unary_elementwise<unary::sin_fn>;
using Cos = unary_elementwise<unary::cos_fn>;
using Tan = unary_elementwise<unary::tan_fn>;
using Asin = unary_elementwise<unary::asin_fn>;
using Acos = unary_elementwise<unary::acos_fn>;
using Atan = unary_elementwise<unary::atan_fn>;
using Sinh = unary_elementwise<unary::sinh_fn>;
using Cosh = unary_elementwise<unary::cosh_fn>;
using Asinh = unary_elementwise<unary::asinh_fn>;
using Acosh = unary_elementwise<unary::acosh_fn>;
using Atanh = unary_elementwise<unary::atanh_fn>;
using Not = unary_elementwise<unary::not__fn>;
using Identity = unary_elementwise<unary::identity_fn>;
using LeakyRelu = unary_elementwise<unary::leaky_relu_fn>;
using Elu = unary_elementwise<unary::elu_fn>;
using Celu = unary_elementwise<unary::celu_fn>;
using Selu = unary_elementwise<unary::selu_fn>;
using HardSigmoid = unary_elementwise<unary::hard_sigmoid_fn>;
using HardSwish = unary_elementwise<unary::hard_swish_fn>;
using ThresholdedRelu = unary_elementwise<unary::thresholded_relu_fn>;
using Shrink = unary_elementwise<unary::shrink_fn>;
using IsNaN = unary_elementwise<unary::is_nan_fn>;
using IsInf = unary_elementwise<unary::is_inf_fn>;

/// Every op of this family, for the registry.
inline constexpr auto unary_ops =
    hana::tuple_t<Relu, Abs, Neg, Sign, Ceil, Floor, Round, Exp, Log, Sqrt, Reciprocal, Sigmoid, Tanh, Softplus,
                  Softsign, Erf, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Not,
                  Identity, LeakyRelu, Elu, Celu, Selu, HardSigmoid, HardSwish, ThresholdedRelu, Shrink, IsNaN,
                  IsInf>;

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::alpha_attr, alpha);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::elu_attr, alpha);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::selu_attr, alpha, gamma);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::hard_sigmoid_attr, alpha, beta);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::thresholded_relu_attr, alpha);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::shrink_attr, bias, lambd);
TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::unary::is_inf_attr, detect_negative, detect_positive);
// ---- end tensoracle/ops/unary.hpp ----

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
// ---- end tensoracle/ops/registry.hpp ----

// ---- begin tensoracle/graph/float64.hpp ----
// tensoracle: a graph's float64 twin. Every f16/bf16/f32 value, weight, Cast
// target and constant widened to float64 gives the truth that a low-precision
// reference and a backend are both measured against (the campaign's float64
// oracle, the mutation oracle's precision check).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <variant>

// ---- begin tensoracle/graph/graph.hpp ----
// tensoracle: a graph IR of values and nodes bound to op specs, with the
// SONNX graph rules enforced by validate():
//   T01/T02a  every tensor has one unique name within the graph;
//   T03b      a node's inputs/outputs map 1-to-1 onto its op's signature;
//   T05a/e    every node input is defined (graph input, initializer or node
//             output) and every tensor is assigned at most once;
//   acyclic   nodes can be ordered so each runs after its inputs exist.
// A node may hold graphs (If's branches): they read values of the scopes
// around them by name, define none of those names again, and count as
// reads of their node for the order (graph/control_flow.hpp).

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>


namespace tensoracle::graph {

/// A named value of the graph's interface. An empty `shape` with
/// `shape_known == false` means the shape is only known at run time.
struct value_info {
    std::string name;
    dtype type = dtype::f32;
    std::optional<shape_type> shape;
};

class graph;

/// A graph-valued attribute (If's then_branch / else_branch), held by value:
/// copying a node copies its branches, so a rewritten copy never changes the original.
class subgraph {
public:
    subgraph();
    explicit subgraph(graph g);
    subgraph(const subgraph& other);
    subgraph& operator=(const subgraph& other);
    subgraph(subgraph&&) noexcept = default;
    subgraph& operator=(subgraph&&) noexcept = default;
    ~subgraph();

    [[nodiscard]] graph& get() noexcept { return *g_; }
    [[nodiscard]] const graph& get() const noexcept { return *g_; }
    graph* operator->() noexcept { return g_.get(); }
    const graph* operator->() const noexcept { return g_.get(); }

private:
    std::unique_ptr<graph> g_;
};

/// One op application. An empty input name is an absent optional input.
struct node {
    std::string op_type;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    spec::attribute_map attributes;
    std::string name;    // optional, for messages
    std::string domain;  // "" or "ai.onnx" for standard ops
    /// Graph attributes by name (If: "then_branch", "else_branch"); kept apart from
    /// `attributes`, which op specs read, because only the graph layer runs graphs.
    std::map<std::string, subgraph, std::less<>> subgraphs = {};

    [[nodiscard]] std::string label() const {
        return name.empty() ? op_type + " -> " + (outputs.empty() ? std::string("?") : outputs.front())
                            : name + " (" + op_type + ")";
    }
};

namespace detail {
/// Ops whose semantics the graph layer holds, because they run graphs (If).
[[nodiscard]] bool is_control_flow(std::string_view op_type) noexcept;
/// Checks a control-flow node against its spec; `scope` is every name defined
/// around it (graph/control_flow.hpp).
void check_control_flow(const node& n, const std::set<std::string, std::less<>>& scope, const std::string& where);
}  // namespace detail

class graph {
public:
    std::string name = "graph";
    int opset = 17;
    std::vector<value_info> inputs;
    std::vector<value_info> outputs;
    std::map<std::string, tensor, std::less<>> initializers;
    std::vector<node> nodes;

    /// Throws tensoracle::error naming the rule, node and value at fault.
    void validate() const { (void)topological_order(); }

    /// Node indices in an order where every node runs after its inputs are
    /// defined; validates the graph rules on the way.
    [[nodiscard]] std::vector<std::size_t> topological_order() const { return topological_order({}); }

    /// The same for a graph nested in others (a branch): `outer` holds the names
    /// its enclosing scopes define, which it may read but not define again.
    [[nodiscard]] std::vector<std::size_t> topological_order(const std::set<std::string, std::less<>>& outer) const {
        const std::string where = "tensoracle::graph::validate(" + name + ")";
        std::map<std::string, int, std::less<>> producer;  // value -> node index, or -1 for graph inputs/initializers/outer scopes
        // `what()` describes the definition; built only for an error (this
        // runs for every model the interpreter or the generator checks).
        auto define = [&](const std::string& v, int by, const auto& what) {
            if (v.empty()) throw error(where, what() + " has an empty output name");
            if (outer.count(v) != 0) {
                throw error(where, "tensor '" + v + "' is already defined in an enclosing graph (single assignment across scopes, T05e): " + what());
            }
            if (!producer.emplace(v, by).second) {
                throw error(where, "tensor '" + v + "' is assigned more than once (single assignment, T05e): " + what());
            }
        };
        for (const auto& in : inputs) define(in.name, -1, [] { return std::string("graph input"); });
        for (const auto& entry : initializers) {
            // ONNX allows an initializer to double as a graph input's default.
            const std::string& k = entry.first;  // a named copy: lambdas may not capture bindings (Clang 14)
            if (std::any_of(inputs.begin(), inputs.end(), [&](const value_info& v) { return v.name == k; })) continue;
            define(k, -1, [] { return std::string("initializer"); });
        }
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const auto& n = nodes[i];
            if (n.outputs.empty()) throw error(where, "node " + n.label() + " has no outputs");
            for (const auto& o : n.outputs) {
                if (!o.empty()) define(o, static_cast<int>(i), [&n] { return "output of node " + n.label(); });
            }
        }
        // Names an enclosing scope defines are readable here (a branch reads them by name).
        for (const auto& v : outer) producer.emplace(v, -1);
        for (std::size_t i = 0; i < nodes.size(); ++i) check_node(nodes[i], producer, where);
        for (const auto& out : outputs) {
            if (producer.find(out.name) == producer.end()) {
                throw error(where, "graph output '" + out.name + "' is never defined");
            }
        }
        // Kahn's algorithm over node dependencies (a branch's reads are its node's).
        std::vector<std::vector<std::size_t>> users(nodes.size());
        std::vector<std::size_t> pending(nodes.size(), 0);
        std::vector<int> deps;  // one node's producers, ascending and distinct
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            deps.clear();
            for (const auto& in : reads(nodes[i])) {
                const int p = producer.at(in);
                if (p >= 0) deps.push_back(p);
            }
            std::sort(deps.begin(), deps.end());
            deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
            pending[i] = deps.size();
            for (const int p : deps) users[static_cast<std::size_t>(p)].push_back(i);
        }
        std::vector<std::size_t> order, ready;
        for (std::size_t i = nodes.size(); i-- > 0;) {
            if (pending[i] == 0) ready.push_back(i);
        }
        while (!ready.empty()) {
            const std::size_t i = ready.back();
            ready.pop_back();
            order.push_back(i);
            for (const std::size_t u : users[i]) {
                if (--pending[u] == 0) ready.push_back(u);
            }
        }
        if (order.size() != nodes.size()) {
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                if (pending[i] != 0) throw error(where, "the graph has a cycle through node " + nodes[i].label());
            }
        }
        return order;
    }

    /// Every value `n` reads, each once: its inputs, then what its branches read
    /// from the scopes around them (branches in name order).
    [[nodiscard]] static std::vector<std::string> reads(const node& n) {
        std::vector<std::string> r;
        for (const auto& in : n.inputs) {
            if (!in.empty() && std::find(r.begin(), r.end(), in) == r.end()) r.push_back(in);
        }
        for (const auto& [key, sub] : n.subgraphs) {
            for (const auto& v : sub->outer_reads()) {
                if (std::find(r.begin(), r.end(), v) == r.end()) r.push_back(v);
            }
        }
        return r;
    }

    /// The names this graph (and the graphs in it) read but does not define:
    /// what it takes from enclosing scopes.
    [[nodiscard]] std::set<std::string, std::less<>> outer_reads() const {
        std::set<std::string, std::less<>> defined, out;
        for (const auto& in : inputs) defined.insert(in.name);
        for (const auto& [k, t] : initializers) defined.insert(k);
        for (const auto& n : nodes) {
            for (const auto& o : n.outputs) defined.insert(o);
        }
        for (const auto& n : nodes) {
            for (const auto& v : reads(n)) {
                if (defined.count(v) == 0) out.insert(v);
            }
        }
        for (const auto& o : outputs) {
            if (defined.count(o.name) == 0) out.insert(o.name);
        }
        return out;
    }

private:
    static void check_node(const node& n, const std::map<std::string, int, std::less<>>& producer,
                           const std::string& where) {
        if (!n.domain.empty() && n.domain != "ai.onnx") {
            throw error(where, "node " + n.label() + " is in domain '" + n.domain + "', which tensoracle does not support");
        }
        if (detail::is_control_flow(n.op_type)) {
            std::set<std::string, std::less<>> scope;
            for (const auto& [v, by] : producer) scope.insert(v);
            detail::check_control_flow(n, scope, where);
            return;
        }
        if (!n.subgraphs.empty()) {
            throw error(where, "node " + n.label() + " has graph attribute '" + n.subgraphs.begin()->first + "', which " + n.op_type + " does not take");
        }
        const auto* op = ops::find_op(n.op_type);
        if (op == nullptr) throw error(where, "node " + n.label() + " uses unknown op '" + n.op_type + "'");
        const bool variadic = !op->inputs.empty() && op->inputs.back().variadic;
        if (!variadic && n.inputs.size() > op->inputs.size()) {
            throw error(where, "node " + n.label() + " has " + std::to_string(n.inputs.size()) + " inputs; " +
                                   n.op_type + " takes at most " + std::to_string(op->inputs.size()));
        }
        for (std::size_t k = 0; k < op->inputs.size() && !op->inputs[k].variadic; ++k) {
            const bool given = k < n.inputs.size() && !n.inputs[k].empty();
            if (!given && !op->inputs[k].optional) {
                throw error(where, "node " + n.label() + " lacks required input " + std::to_string(k) + " ('" +
                                       std::string(op->inputs[k].name) + "')");
            }
        }
        for (const auto& in : n.inputs) {
            if (!in.empty() && producer.find(in) == producer.end()) {
                throw error(where, "node " + n.label() + " reads '" + in + "', which is never defined (T05a)");
            }
        }
        try {
            (void)op->normalize_attributes(n.attributes);
        } catch (const unsupported_error& e) {
            throw unsupported_error(where, "node " + n.label() + ": " + e.what());
        } catch (const error& e) {
            throw error(where, "node " + n.label() + ": " + e.what());
        }
    }
};

/// Every op type `g` uses, its branches' included.
[[nodiscard]] inline std::set<std::string> op_types(const graph& g) {
    std::set<std::string> out;
    for (const auto& n : g.nodes) {
        out.insert(n.op_type);
        for (const auto& [k, sub] : n.subgraphs) {
            const auto inner = op_types(sub.get());
            out.insert(inner.begin(), inner.end());
        }
    }
    return out;
}

inline subgraph::subgraph() : g_(std::make_unique<graph>()) {}
inline subgraph::subgraph(graph g) : g_(std::make_unique<graph>(std::move(g))) {}
inline subgraph::subgraph(const subgraph& other) : g_(other.g_ ? std::make_unique<graph>(*other.g_) : std::make_unique<graph>()) {}
inline subgraph& subgraph::operator=(const subgraph& other) {
    if (this != &other) g_ = other.g_ ? std::make_unique<graph>(*other.g_) : std::make_unique<graph>();
    return *this;
}
inline subgraph::~subgraph() = default;

}  // namespace tensoracle::graph

// ---- begin tensoracle/graph/control_flow.hpp ----
// tensoracle: the control-flow op If (ONNX If-16, tensor values only), whose
// semantics belong to the graph layer because its "kernel" runs a graph.
//
//   If(cond) -> outputs        cond: a bool tensor of exactly one element
//   then_branch, else_branch:  graphs with no inputs and as many outputs as
//                              the node; output k of both has one dtype
//                              (shapes may differ, as ONNX allows)
//
// A branch reads values of the scopes around it by name and defines none of
// them again (checked by graph::validate); the interpreter runs the branch
// cond selects (graph/interpreter.hpp). Sequence and optional outputs
// (If-16's other types) are not supported, like every non-tensor value.

#include <set>
#include <string>
#include <string_view>


namespace tensoracle::graph {

/// ONNX's If, as the graph layer checks and runs it.
struct if_spec {
    static constexpr std::string_view op_type = "If";
    static constexpr int opset = 16;
    static constexpr std::string_view then_branch = "then_branch";
    static constexpr std::string_view else_branch = "else_branch";

    /// The structural rules (the node's arity, its graph attributes, each branch
    /// valid in the scope around the node, matching output dtypes).
    static void check(const node& n, const std::set<std::string, std::less<>>& scope, const std::string& where) {
        const std::string at = where + ", node " + n.label();
        if (n.inputs.size() != 1 || n.inputs[0].empty()) {
            throw error(at, "If takes exactly one input (cond), got " + std::to_string(n.inputs.size()));
        }
        for (const auto& [key, value] : n.attributes) {
            if (key.rfind("__", 0) == 0) continue;  // kit-internal
            throw error(at, "If takes no attribute '" + key + "' (only the graphs then_branch and else_branch)");
        }
        for (const auto& [key, sub] : n.subgraphs) {
            if (key != then_branch && key != else_branch) throw error(at, "If takes no graph attribute '" + key + "'");
        }
        const graph* branches[2] = {nullptr, nullptr};
        for (int b = 0; b < 2; ++b) {
            const auto key = b == 0 ? then_branch : else_branch;
            const auto it = n.subgraphs.find(key);
            if (it == n.subgraphs.end()) throw error(at, "If lacks its required graph attribute '" + std::string(key) + "'");
            const graph& g = it->second.get();
            if (!g.inputs.empty()) throw error(at, std::string(key) + " declares " + std::to_string(g.inputs.size()) + " input(s); If's branches take none");
            if (g.outputs.size() != n.outputs.size()) {
                throw error(at, std::string(key) + " has " + std::to_string(g.outputs.size()) + " output(s) for the node's " +
                                    std::to_string(n.outputs.size()));
            }
            try {
                (void)g.topological_order(scope);
            } catch (const error& e) {
                throw error(at, std::string(key) + ": " + e.what());
            }
            branches[b] = &g;
        }
        for (std::size_t k = 0; k < n.outputs.size(); ++k) {
            const auto& t = branches[0]->outputs[k];
            const auto& e = branches[1]->outputs[k];
            if (t.type != e.type) {
                throw dtype_error(at, "output " + std::to_string(k) + " is " + std::string(name(t.type)) + " in then_branch but " +
                                          std::string(name(e.type)) + " in else_branch");
            }
        }
    }

    /// The branch `cond` selects; cond must be a bool tensor of one element.
    [[nodiscard]] static const graph& select(const node& n, const tensor& cond, const std::string& where) {
        if (cond.element_dtype() != dtype::boolean || cond.size() != 1) {
            throw error(where + ", node " + n.label(), "If's cond must be a bool tensor of one element, got " +
                                                           std::string(name(cond.element_dtype())) + to_string(cond.shape()));
        }
        const bool c = cond.values<bool>()[0];
        return n.subgraphs.at(std::string(c ? then_branch : else_branch)).get();
    }
};

namespace detail {
inline bool is_control_flow(std::string_view op_type) noexcept { return op_type == if_spec::op_type; }
inline void check_control_flow(const node& n, const std::set<std::string, std::less<>>& scope, const std::string& where) {
    if (n.op_type == if_spec::op_type) if_spec::check(n, scope, where);
}
}  // namespace detail

}  // namespace tensoracle::graph
// ---- end tensoracle/graph/control_flow.hpp ----
// ---- end tensoracle/graph/graph.hpp ----

namespace tensoracle::graph {

namespace detail {
/// f16, bf16 and f32: what a float64 re-evaluation widens.
[[nodiscard]] constexpr bool low_precision(dtype d) noexcept { return d == dtype::f16 || d == dtype::bf16 || d == dtype::f32; }
[[nodiscard]] inline tensor widened(const tensor& t) { return low_precision(t.element_dtype()) ? tensor(t.to<double>()) : t; }
}  // namespace detail

/// Graph inputs and weights read where an op takes no float64 (Resize's scales: f32
/// only): widen_to_float64 leaves them as they are, or the re-evaluation would not run.
[[nodiscard]] inline std::set<std::string> float64_refused(const graph& g) {
    std::set<std::string> refused;
    for (const auto& n : g.nodes) {
        for (const auto& [key, sub] : n.subgraphs) {
            const auto inner = float64_refused(sub.get());
            refused.insert(inner.begin(), inner.end());
        }
        const auto* op = ops::find_op(n.op_type);
        if (op == nullptr || op->inputs.empty()) continue;
        for (std::size_t k = 0; k < n.inputs.size(); ++k) {
            const auto& slot = op->inputs[std::min(k, op->inputs.size() - 1)];
            if (!n.inputs[k].empty() && !slot.types.contains(dtype::f64)) refused.insert(n.inputs[k]);
        }
    }
    return refused;
}

/// The graph with every f16/bf16/f32 value, weight, Cast target and constant widened to
/// float64, in its branches too (but those in `refused`, float64_refused(g)): the truth
/// a low-precision reference and backend are both measured against.
[[nodiscard]] inline graph widen_to_float64(const graph& g, const std::set<std::string>& refused) {
    graph w = g;
    for (auto* list : {&w.inputs, &w.outputs}) {
        for (auto& v : *list) {
            if (detail::low_precision(v.type) && !refused.count(v.name)) v.type = dtype::f64;
        }
    }
    for (auto& [name, t] : w.initializers) {
        if (!refused.count(name)) t = detail::widened(t);
    }
    for (auto& n : w.nodes) {
        for (auto& [key, value] : n.attributes) {
            if (auto* code = std::get_if<std::int64_t>(&value); code && (key == "to" || key == "dtype")) {
                for (const dtype d : {dtype::f16, dtype::bf16, dtype::f32}) {
                    if (*code == onnx_type(d)) *code = onnx_type(dtype::f64);
                }
            } else if (auto* t = std::get_if<tensor>(&value)) {
                *t = detail::widened(*t);
            }
        }
        for (auto& [key, sub] : n.subgraphs) sub.get() = widen_to_float64(sub.get(), refused);
    }
    return w;
}
[[nodiscard]] inline graph widen_to_float64(const graph& g) { return widen_to_float64(g, float64_refused(g)); }

/// True when `backend` is as close to float64 truth as our same-dtype reference,
/// element by element: |b - t| <= atol + rtol |t| + |r - t|, with NaN/Inf in b
/// accepted where the truth or the reference has the same.
[[nodiscard]] inline bool within_reference_precision(const tensor& b, const tensor& r, const tensor& truth, const tolerance& tol) {
    if (b.shape() != truth.shape() || r.shape() != truth.shape()) return false;
    auto kind = [](double v) { return std::isnan(v) ? 1 : std::isinf(v) ? (v > 0 ? 2 : 3) : 0; };
    for (std::size_t i = 0; i < b.size(); ++i) {
        const double bv = b.value_as_double(i), rv = r.value_as_double(i), tv = truth.value_as_double(i);
        const int kb = kind(bv), kr = kind(rv), kt = kind(tv);
        if (kb != 0 || kt != 0) {
            if (kb != kt && kb != kr) return false;
            continue;
        }
        const double ref_error = kr == 0 ? std::abs(rv - tv) : std::numeric_limits<double>::infinity();
        if (!(std::abs(bv - tv) <= tol.atol + tol.rtol * std::abs(tv) + ref_error)) return false;
    }
    return true;
}

}  // namespace tensoracle::graph
// ---- end tensoracle/graph/float64.hpp ----
// ---- begin tensoracle/graph/interpreter.hpp ----
// tensoracle: runs a graph on the reference kernels, node by node in a
// topological order, optionally recording every intermediate value (for
// input search, reduction and EMI later).

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>


namespace tensoracle::graph {

/// Attribute the interpreter sets on ops that declare it: the node's output
/// count (Split-13 infers its number of outputs from the node).
inline constexpr std::string_view num_outputs_attribute = "__num_outputs";

struct run_options {
    bool record_intermediates = false;
};

struct run_result {
    std::map<std::string, tensor, std::less<>> outputs;  // graph outputs
    std::map<std::string, tensor, std::less<>> values;   // every value, if recorded
};

/// The attributes op receives for node n: the node's own, plus the node's
/// output count for ops whose outputs are counted that way (Split).
[[nodiscard]] inline spec::attribute_map call_attributes(const spec::op_entry& op, const node& n) {
    auto attrs = n.attributes;
    const auto names = op.attribute_names();
    if (std::find(names.begin(), names.end(), num_outputs_attribute) != names.end()) {
        attrs.insert_or_assign(std::string(num_outputs_attribute), static_cast<std::int64_t>(n.outputs.size()));
    }
    return attrs;
}

namespace detail {
inline void check_feed(const value_info& v, const tensor& t, const std::string& where) {
    if (t.element_dtype() != v.type) {
        throw dtype_error(where, "input '" + v.name + "' is declared " + std::string(name(v.type)) + " but fed " +
                                     std::string(name(t.element_dtype())));
    }
    if (v.shape && *v.shape != t.shape()) {
        throw shape_error(
            where, "input '" + v.name + "' is declared " + to_string(*v.shape) + " but fed " + to_string(t.shape()));
    }
}
/// Rethrows e with more context, keeping its kind (unsupported, dtype, shape).
[[noreturn]] inline void rethrow_with_context(const error& e, const std::string& where, const std::string& prefix) {
    const std::string msg = prefix + e.what();
    if (dynamic_cast<const unsupported_error*>(&e) != nullptr) throw unsupported_error(where, msg);
    if (dynamic_cast<const dtype_error*>(&e) != nullptr) throw dtype_error(where, msg);
    if (dynamic_cast<const shape_error*>(&e) != nullptr) throw shape_error(where, msg);
    throw error(where, msg);
}
}  // namespace detail

namespace detail {
/// The values one graph defines, and the scopes around it (a branch reads its
/// enclosing graphs' values by name without copying them).
struct scope {
    std::map<std::string, tensor, std::less<>> values;
    const scope* parent = nullptr;
    [[nodiscard]] const tensor* find(std::string_view name) const {
        for (const scope* s = this; s != nullptr; s = s->parent) {
            if (const auto it = s->values.find(name); it != s->values.end()) return &it->second;
        }
        return nullptr;
    }
    [[nodiscard]] const tensor& at(const std::string& name, const std::string& where) const {
        if (const tensor* t = find(name)) return *t;
        throw error(where, "value '" + name + "' is not defined when it is read");
    }
};

/// Runs g's nodes in `order` within scope `s` (g's inputs and initializers already there).
inline void run_nodes(const graph& g, const std::vector<std::size_t>& order, scope& s, const std::string& where);

/// Runs the branch of If node `n` that its cond selects; returns its outputs.
inline std::vector<tensor> run_if(const node& n, const scope& s, const std::string& where) {
    const graph& branch = if_spec::select(n, s.at(n.inputs[0], where), where);
    scope inner;
    inner.parent = &s;
    for (const auto& [k, t] : branch.initializers) inner.values.emplace(k, t);
    const std::string at = where + ", node " + n.label() + " (" + branch.name + ")";
    // The branch was checked with the graph; its order is computed for this run.
    std::set<std::string, std::less<>> outer;
    for (const scope* p = &s; p != nullptr; p = p->parent) {
        for (const auto& [k, t] : p->values) outer.insert(k);
    }
    run_nodes(branch, branch.topological_order(outer), inner, at);
    std::vector<tensor> out;
    for (const auto& o : branch.outputs) {
        const tensor& t = inner.at(o.name, at);
        if (t.element_dtype() != o.type) {
            throw dtype_error(at, "branch output '" + o.name + "' is declared " + std::string(name(o.type)) + " but holds " +
                                      std::string(name(t.element_dtype())));
        }
        out.push_back(t);
    }
    return out;
}

inline void run_nodes(const graph& g, const std::vector<std::size_t>& order, scope& s, const std::string& where) {
    for (const std::size_t i : order) {
        const auto& n = g.nodes[i];
        std::vector<tensor> out;
        if (is_control_flow(n.op_type)) {
            out = run_if(n, s, where);
        } else {
            const auto& op = ops::get_op(n.op_type);
            std::vector<const tensor*> args;
            for (const auto& in : n.inputs) args.push_back(in.empty() ? nullptr : &s.at(in, where));
            while (!args.empty() && args.back() == nullptr) args.pop_back();
            const auto attrs = call_attributes(op, n);
            try {
                out = spec::evaluate(op, args, attrs);
            } catch (const error& e) {
                rethrow_with_context(e, where, "node " + n.label() + ": ");
            }
        }
        if (n.outputs.size() > out.size()) {
            throw error(where, "node " + n.label() + " names " + std::to_string(n.outputs.size()) + " outputs; " +
                                   n.op_type + " produced " + std::to_string(out.size()));
        }
        for (std::size_t o = 0; o < n.outputs.size(); ++o) {
            if (!n.outputs[o].empty()) s.values.insert_or_assign(n.outputs[o], std::move(out[o]));
        }
    }
}
}  // namespace detail

/// Runs `g` on `feeds` (graph input name -> tensor). Errors name the node.
[[nodiscard]] inline run_result run(const graph& g, const std::map<std::string, tensor, std::less<>>& feeds,
                                    const run_options& options = {}) {
    const std::string where = "tensoracle::graph::run(" + g.name + ")";
    const auto order = g.topological_order();
    detail::scope s;
    auto& values = s.values;
    for (const auto& [k, t] : g.initializers) values.emplace(k, t);
    for (const auto& feed : feeds) {
        const std::string& k = feed.first;  // named: lambdas may not capture bindings (Clang 14)
        const tensor& t = feed.second;
        const auto it =
            std::find_if(g.inputs.begin(), g.inputs.end(), [&](const value_info& v) { return v.name == k; });
        if (it == g.inputs.end()) throw error(where, "feed '" + k + "' is not a graph input");
        detail::check_feed(*it, t, where);
        values.insert_or_assign(k, t);
    }
    for (const auto& in : g.inputs) {
        if (values.find(in.name) == values.end()) throw error(where, "graph input '" + in.name + "' is not fed");
    }
    detail::run_nodes(g, order, s, where);
    run_result r;
    for (const auto& o : g.outputs) {
        const auto& t = values.at(o.name);
        r.outputs.emplace(o.name, t);
    }
    if (options.record_intermediates) r.values = std::move(values);
    return r;
}

}  // namespace tensoracle::graph
// ---- end tensoracle/graph/interpreter.hpp ----

// ---- begin tensoracle/ad.hpp ----
// tensoracle: automatic differentiation and gradient oracles in one include.
//   dual numbers and tape variables (forward, reverse, nested), finite
//   differences, per-op JVP/VJP rules from the reference kernels, graph
//   JVP/VJP/HVP, the gradient oracle for engines given as callables, and the
//   kit's own ops as such an engine.

// ---- begin tensoracle/ad/dual.hpp ----
// tensoracle: forward-mode dual numbers, x = v + d·ε with ε² = 0.
//
// dual<V> carries one directional derivative. V may itself be a dual (or any
// AD scalar), so dual<dual<double>> gives second directional derivatives:
// seed the inner and outer tangents with u and w and the innermost derivative
// part is wᵀ H u. Kernels templated on their scalar type run unchanged with
// duals: that is how every op gets its JVP from the same code that computes
// its value.

#include <cmath>
#include <limits>
#include <numbers>
#include <ostream>
#include <type_traits>


namespace tensoracle::ad {

template <class V>
struct dual;

template <class T>
struct is_dual : std::false_type {};
template <class V>
struct is_dual<dual<V>> : std::true_type {};

namespace detail {
/// Exactly zero in every part (a nested dual is zero only if all its parts are).
template <class V>
constexpr bool exactly_zero(const V& x) {
    if constexpr (is_dual<V>::value) {
        return exactly_zero(x.v) && exactly_zero(x.d);
    } else if constexpr (ad_scalar<V>) {
        return primal(x) == 0 && x.is_constant();
    } else {
        return x == V(0);
    }
}
}  // namespace detail

template <class V>
struct dual {
    using value_type = V;
    V v{};  ///< value
    V d{};  ///< derivative along the seeded direction

    constexpr dual() = default;
    constexpr dual(const V& value, const V& derivative) : v(value), d(derivative) {}
    // Implicit from the value type and from arithmetic constants, so that
    // kernels can write `x > V(0)` or `V(a.alpha) * x` as they do for double.
    constexpr dual(const V& value) : v(value), d(V(0)) {}  // NOLINT(google-explicit-constructor)
    template <class U>
        requires(std::is_arithmetic_v<U> && !std::is_same_v<U, V>)
    constexpr dual(U value) : v(V(static_cast<base_scalar_t<V>>(value))), d(V(0)) {}  // NOLINT

    friend constexpr dual operator+(const dual& a) { return a; }
    friend constexpr dual operator-(const dual& a) { return {-a.v, -a.d}; }
    friend constexpr dual operator+(const dual& a, const dual& b) { return {a.v + b.v, a.d + b.d}; }
    friend constexpr dual operator-(const dual& a, const dual& b) { return {a.v - b.v, a.d - b.d}; }
    friend constexpr dual operator*(const dual& a, const dual& b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }
    friend constexpr dual operator/(const dual& a, const dual& b) {
        const V q = a.v / b.v;
        return {q, (a.d - q * b.d) / b.v};
    }
    constexpr dual& operator+=(const dual& b) { return *this = *this + b; }
    constexpr dual& operator-=(const dual& b) { return *this = *this - b; }
    constexpr dual& operator*=(const dual& b) { return *this = *this * b; }
    constexpr dual& operator/=(const dual& b) { return *this = *this / b; }

    // Comparisons look at values only: a kernel's branches follow the primal.
    friend constexpr bool operator==(const dual& a, const dual& b) { return a.v == b.v; }
    friend constexpr bool operator!=(const dual& a, const dual& b) { return a.v != b.v; }
    friend constexpr bool operator<(const dual& a, const dual& b) { return a.v < b.v; }
    friend constexpr bool operator<=(const dual& a, const dual& b) { return a.v <= b.v; }
    friend constexpr bool operator>(const dual& a, const dual& b) { return a.v > b.v; }
    friend constexpr bool operator>=(const dual& a, const dual& b) { return a.v >= b.v; }

    explicit constexpr operator bool() const { return v != V(0); }

    friend std::ostream& operator<<(std::ostream& os, const dual& x) { return os << x.v << "+" << x.d << "e"; }
};

// Elementary functions: value through math:: (std:: or the inner AD type), times the derivative.
template <class V>
dual<V> exp(const dual<V>& x) {
    const V e = math::exp(x.v);
    return {e, x.d * e};
}
template <class V>
dual<V> expm1(const dual<V>& x) {
    return {math::expm1(x.v), x.d * math::exp(x.v)};
}
template <class V>
dual<V> log(const dual<V>& x) {
    return {math::log(x.v), x.d / x.v};
}
template <class V>
dual<V> log1p(const dual<V>& x) {
    return {math::log1p(x.v), x.d / (V(1) + x.v)};
}
template <class V>
dual<V> sqrt(const dual<V>& x) {
    const V s = math::sqrt(x.v);
    return {s, x.d / (V(2) * s)};
}
template <class V>
dual<V> sin(const dual<V>& x) {
    return {math::sin(x.v), x.d * math::cos(x.v)};
}
template <class V>
dual<V> cos(const dual<V>& x) {
    return {math::cos(x.v), -x.d * math::sin(x.v)};
}
template <class V>
dual<V> tan(const dual<V>& x) {
    const V t = math::tan(x.v);
    return {t, x.d * (V(1) + t * t)};
}
template <class V>
dual<V> asin(const dual<V>& x) {
    return {math::asin(x.v), x.d / math::sqrt(V(1) - x.v * x.v)};
}
template <class V>
dual<V> acos(const dual<V>& x) {
    return {math::acos(x.v), -x.d / math::sqrt(V(1) - x.v * x.v)};
}
template <class V>
dual<V> atan(const dual<V>& x) {
    return {math::atan(x.v), x.d / (V(1) + x.v * x.v)};
}
template <class V>
dual<V> sinh(const dual<V>& x) {
    return {math::sinh(x.v), x.d * math::cosh(x.v)};
}
template <class V>
dual<V> cosh(const dual<V>& x) {
    return {math::cosh(x.v), x.d * math::sinh(x.v)};
}
template <class V>
dual<V> tanh(const dual<V>& x) {
    const V t = math::tanh(x.v);
    return {t, x.d * (V(1) - t * t)};
}
template <class V>
dual<V> asinh(const dual<V>& x) {
    return {math::asinh(x.v), x.d / math::sqrt(x.v * x.v + V(1))};
}
template <class V>
dual<V> acosh(const dual<V>& x) {
    return {math::acosh(x.v), x.d / math::sqrt(x.v * x.v - V(1))};
}
template <class V>
dual<V> atanh(const dual<V>& x) {
    return {math::atanh(x.v), x.d / (V(1) - x.v * x.v)};
}
template <class V>
dual<V> erf(const dual<V>& x) {
    const V k(static_cast<base_scalar_t<V>>(2.0 / std::sqrt(std::numbers::pi)));
    return {math::erf(x.v), x.d * k * math::exp(-x.v * x.v)};
}
/// |x|' = sign(x), and 0 at 0 (the subgradient PyTorch and JAX pick).
template <class V>
dual<V> fabs(const dual<V>& x) {
    if (x.v > V(0)) return x;
    if (x.v < V(0)) return -x;
    return {math::fabs(x.v), V(0)};
}
template <class V>
dual<V> abs(const dual<V>& x) {
    return fabs(x);
}
// Piecewise-constant functions: derivative 0 (the proxy mode of the reverse pass substitutes a slope).
#define TENSORACLE_DUAL_STEP(NAME) \
    template <class V>             \
    dual<V> NAME(const dual<V>& x) { return {math::NAME(x.v), V(0)}; }
TENSORACLE_DUAL_STEP(floor)
TENSORACLE_DUAL_STEP(ceil)
TENSORACLE_DUAL_STEP(trunc)
TENSORACLE_DUAL_STEP(round)
TENSORACLE_DUAL_STEP(nearbyint)
#undef TENSORACLE_DUAL_STEP
template <class V>
bool isnan(const dual<V>& x) {
    return math::isnan(x.v);
}
template <class V>
bool isinf(const dual<V>& x) {
    return math::isinf(x.v);
}
template <class V>
bool isfinite(const dual<V>& x) {
    return math::isfinite(x.v);
}
template <class V>
bool signbit(const dual<V>& x) {
    return math::signbit(x.v);
}

/// a^b: the log term only when b carries a derivative, so that a constant
/// exponent at a = 0 gives b·a^(b-1)·a' and not 0·(-inf).
template <class V>
dual<V> pow(const dual<V>& a, const dual<V>& b) {
    const V y = math::pow(a.v, b.v);
    V dy = detail::exactly_zero(a.d) ? V(0) : a.d * b.v * math::pow(a.v, b.v - V(1));
    if (!detail::exactly_zero(b.d)) dy += b.d * y * math::log(a.v);
    return {y, dy};
}
template <class V, class U>
    requires(!is_dual<U>::value && std::is_constructible_v<dual<V>, U>)
dual<V> pow(const dual<V>& a, const U& b) {
    return pow(a, dual<V>(b));
}
template <class V, class U>
    requires(!is_dual<U>::value && std::is_constructible_v<dual<V>, U>)
dual<V> pow(const U& a, const dual<V>& b) {
    return pow(dual<V>(a), b);
}
/// fmod(a, b) = a - trunc(a/b)·b, with trunc(a/b) constant almost everywhere.
template <class V>
dual<V> fmod(const dual<V>& a, const dual<V>& b) {
    const V r = math::fmod(a.v, b.v);
    const V q = math::trunc((a.v - r) / b.v);
    return {r, a.d - q * b.d};
}
template <class V>
dual<V> atan2(const dual<V>& y, const dual<V>& x) {
    const V r2 = x.v * x.v + y.v * y.v;
    return {math::atan2(y.v, x.v), (x.v * y.d - y.v * x.d) / r2};
}

/// A dual seeded as an independent variable: value x, derivative 1.
template <class V>
[[nodiscard]] constexpr dual<V> make_variable(const V& x) {
    return {x, V(1)};
}

}  // namespace tensoracle::ad

template <class V>
struct tensoracle::ad_scalar_traits<tensoracle::ad::dual<V>> {
    static constexpr bool is_ad = true;
    using base = base_scalar_t<V>;
    static constexpr base primal(const ad::dual<V>& x) { return tensoracle::primal(x.v); }
};

template <class V>
class std::numeric_limits<tensoracle::ad::dual<V>> : public std::numeric_limits<V> {
    using D = tensoracle::ad::dual<V>;
    using L = std::numeric_limits<V>;

public:
    static constexpr D min() noexcept { return D(L::min()); }
    static constexpr D max() noexcept { return D(L::max()); }
    static constexpr D lowest() noexcept { return D(L::lowest()); }
    static constexpr D epsilon() noexcept { return D(L::epsilon()); }
    static constexpr D infinity() noexcept { return D(L::infinity()); }
    static constexpr D quiet_NaN() noexcept { return D(L::quiet_NaN()); }
    static constexpr D denorm_min() noexcept { return D(L::denorm_min()); }
};
// ---- end tensoracle/ad/dual.hpp ----
// ---- begin tensoracle/ad/engine.hpp ----
// tensoracle: any op of the kit, by its ONNX name, as an engine for the
// gradient oracle (value, JVP, VJP, second order). Goes through the registry
// of every op, so it suits campaigns and graphs; a test of one op compiles far
// faster with op_engine<ops::X>() from ad/typed_engine.hpp.

#include <concepts>
#include <string>
#include <string_view>

// ---- begin tensoracle/ad/op_rules.hpp ----
// tensoracle: the derivative rules of every differentiable op in the
// registry, looked up by op_type (graph AD, input search, op_engine by name).
// The rules of one op, without the registry, are in ad/op_derivatives.hpp.

#include <algorithm>
#include <string_view>
#include <vector>

#include <boost/hana/for_each.hpp>

// ---- begin tensoracle/ad/op_derivatives.hpp ----
// tensoracle: JVP and VJP rules of one op spec, on tensors.
//
// An op is differentiable when its spec provides `run_real<S>` (its kernel
// run on scalar type S, see docs/ADDING_AN_OP.md). The rules here run that one
// kernel with dual numbers (JVP: forward mode) or tape variables (VJP:
// reverse mode), so the derivatives are those of the reference kernel itself,
// and the tests check them against finite differences, each other and a
// second engine. V is the arithmetic of the derivative computation: double or
// float for first order, dual<double>/dual<float> for second order
// (forward-over-forward through jvp, forward-over-reverse through vjp).
//
// Nothing here includes the op registry: a test of one op includes this, the
// op's family header and ad/typed_engine.hpp, and instantiates that op only.
// The table of every op's rules, looked up by name, is in ad/op_rules.hpp.

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// ---- begin tensoracle/ad/reverse.hpp ----
// tensoracle: reverse-mode scalars recorded on a tape.
//
// rvar<V> is a value plus the index of the tape node that produced it. Every
// arithmetic operation on active rvars appends one node holding the local
// partial derivatives; a backward sweep over the nodes accumulates adjoints.
// Kernels templated on their scalar type run unchanged with rvar, so every op
// gets its VJP from the code that computes its value. With V = dual<double>
// the partials and adjoints are themselves duals: the sweep then returns
// gradient + ε·(Hessian·u), which is forward-over-reverse second order.

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <ostream>
#include <span>
#include <string>
#include <type_traits>
#include <vector>


namespace tensoracle::ad {

/// The tape of one scalar type on one thread. Use through tape_scope.
template <class V>
class tape {
public:
    static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
    struct node {
        std::uint32_t a = none;
        std::uint32_t b = none;
        V da{};
        V db{};
    };

    /// The thread's tape for V.
    static tape& active() {
        thread_local tape t;
        return t;
    }

    std::uint32_t push(std::uint32_t a, const V& da, std::uint32_t b, const V& db) {
        if (nodes_.size() >= static_cast<std::size_t>(none) - 1) {
            throw error("tensoracle::ad::tape", "more than 2^32 - 2 nodes recorded; the computation is too large "
                                                "for a scalar tape");
        }
        if (depth_ == 0) {
            throw error("tensoracle::ad::tape",
                        "an operation on active reverse-mode variables ran outside a tape_scope");
        }
        nodes_.push_back({a, b, da, db});
        return static_cast<std::uint32_t>(nodes_.size() - 1);
    }
    /// A fresh independent variable (a node without parents).
    std::uint32_t variable() { return push(none, V(0), none, V(0)); }

    [[nodiscard]] std::size_t size() const { return nodes_.size(); }

    /// Adjoints of every node after seeding the given nodes and sweeping
    /// backwards. Seeds on the same node add up.
    [[nodiscard]] std::vector<V> sweep(std::span<const std::uint32_t> seeds_at, std::span<const V> seeds) const {
        std::vector<V> adj(nodes_.size(), V(0));
        for (std::size_t i = 0; i < seeds_at.size(); ++i) {
            if (seeds_at[i] != none) adj[seeds_at[i]] += seeds[i];
        }
        for (std::size_t i = nodes_.size(); i-- > 0;) {
            const node& n = nodes_[i];
            if (detail::exactly_zero(adj[i])) continue;
            if (n.a != none) adj[n.a] += n.da * adj[i];
            if (n.b != none) adj[n.b] += n.db * adj[i];
        }
        return adj;
    }

private:
    template <class>
    friend class tape_scope;
    std::vector<node> nodes_;
    int depth_ = 0;
};

/// Opens the thread's tape for V, empty, and clears it when closed. Tapes of
/// the same V do not nest (a nested scope would invalidate the outer one's
/// node indices); a second scope throws.
template <class V>
class tape_scope {
public:
    tape_scope() : t_(tape<V>::active()) {
        if (t_.depth_ != 0) {
            throw error("tensoracle::ad::tape_scope", "a tape for this scalar type is already open on this thread");
        }
        t_.nodes_.clear();
        ++t_.depth_;
    }
    ~tape_scope() {
        --t_.depth_;
        t_.nodes_.clear();
        // Keep the storage for the next scope (a search takes thousands of
        // VJPs; growing the tape again each time was a third of its time),
        // unless it is large enough to matter to the process.
        if (t_.nodes_.capacity() * sizeof(typename tape<V>::node) > kept_bytes) t_.nodes_.shrink_to_fit();
    }
    /// The most tape storage that outlives a scope.
    static constexpr std::size_t kept_bytes = std::size_t{32} << 20;
    tape_scope(const tape_scope&) = delete;
    tape_scope& operator=(const tape_scope&) = delete;
    tape<V>& get() { return t_; }

private:
    tape<V>& t_;
};

template <class V>
struct rvar {
    using value_type = V;
    static constexpr std::uint32_t none = tape<V>::none;
    V v{};
    std::uint32_t id = none;  ///< tape node, or none for a constant

    constexpr rvar() = default;
    constexpr rvar(const V& value) : v(value) {}  // NOLINT(google-explicit-constructor): constants
    template <class U>
        requires(std::is_arithmetic_v<U> && !std::is_same_v<U, V>)
    constexpr rvar(U value) : v(V(static_cast<base_scalar_t<V>>(value))) {}  // NOLINT
    constexpr rvar(const V& value, std::uint32_t node) : v(value), id(node) {}

    [[nodiscard]] constexpr bool is_constant() const { return id == none; }

    /// A new independent variable on the open tape.
    static rvar variable(const V& value) { return {value, tape<V>::active().variable()}; }

    static rvar unary(const V& y, const rvar& x, const V& dy_dx) {
        if (x.id == none) return rvar(y);
        return {y, tape<V>::active().push(x.id, dy_dx, none, V(0))};
    }
    static rvar binary(const V& y, const rvar& a, const V& da, const rvar& b, const V& db) {
        if (a.id == none && b.id == none) return rvar(y);
        return {y, tape<V>::active().push(a.id, da, b.id, db)};
    }

    friend rvar operator+(const rvar& a) { return a; }
    friend rvar operator-(const rvar& a) { return unary(-a.v, a, V(-1)); }
    friend rvar operator+(const rvar& a, const rvar& b) { return binary(a.v + b.v, a, V(1), b, V(1)); }
    friend rvar operator-(const rvar& a, const rvar& b) { return binary(a.v - b.v, a, V(1), b, V(-1)); }
    friend rvar operator*(const rvar& a, const rvar& b) { return binary(a.v * b.v, a, b.v, b, a.v); }
    friend rvar operator/(const rvar& a, const rvar& b) {
        const V q = a.v / b.v;
        return binary(q, a, V(1) / b.v, b, -q / b.v);
    }
    rvar& operator+=(const rvar& b) { return *this = *this + b; }
    rvar& operator-=(const rvar& b) { return *this = *this - b; }
    rvar& operator*=(const rvar& b) { return *this = *this * b; }
    rvar& operator/=(const rvar& b) { return *this = *this / b; }

    friend bool operator==(const rvar& a, const rvar& b) { return a.v == b.v; }
    friend bool operator!=(const rvar& a, const rvar& b) { return a.v != b.v; }
    friend bool operator<(const rvar& a, const rvar& b) { return a.v < b.v; }
    friend bool operator<=(const rvar& a, const rvar& b) { return a.v <= b.v; }
    friend bool operator>(const rvar& a, const rvar& b) { return a.v > b.v; }
    friend bool operator>=(const rvar& a, const rvar& b) { return a.v >= b.v; }
    explicit operator bool() const { return v != V(0); }

    friend std::ostream& operator<<(std::ostream& os, const rvar& x) { return os << x.v; }
};

template <class V>
rvar<V> exp(const rvar<V>& x) {
    const V e = math::exp(x.v);
    return rvar<V>::unary(e, x, e);
}
template <class V>
rvar<V> expm1(const rvar<V>& x) {
    return rvar<V>::unary(math::expm1(x.v), x, math::exp(x.v));
}
template <class V>
rvar<V> log(const rvar<V>& x) {
    return rvar<V>::unary(math::log(x.v), x, V(1) / x.v);
}
template <class V>
rvar<V> log1p(const rvar<V>& x) {
    return rvar<V>::unary(math::log1p(x.v), x, V(1) / (V(1) + x.v));
}
template <class V>
rvar<V> sqrt(const rvar<V>& x) {
    const V s = math::sqrt(x.v);
    return rvar<V>::unary(s, x, V(1) / (V(2) * s));
}
template <class V>
rvar<V> sin(const rvar<V>& x) {
    return rvar<V>::unary(math::sin(x.v), x, math::cos(x.v));
}
template <class V>
rvar<V> cos(const rvar<V>& x) {
    return rvar<V>::unary(math::cos(x.v), x, -math::sin(x.v));
}
template <class V>
rvar<V> tan(const rvar<V>& x) {
    const V t = math::tan(x.v);
    return rvar<V>::unary(t, x, V(1) + t * t);
}
template <class V>
rvar<V> asin(const rvar<V>& x) {
    return rvar<V>::unary(math::asin(x.v), x, V(1) / math::sqrt(V(1) - x.v * x.v));
}
template <class V>
rvar<V> acos(const rvar<V>& x) {
    return rvar<V>::unary(math::acos(x.v), x, V(-1) / math::sqrt(V(1) - x.v * x.v));
}
template <class V>
rvar<V> atan(const rvar<V>& x) {
    return rvar<V>::unary(math::atan(x.v), x, V(1) / (V(1) + x.v * x.v));
}
template <class V>
rvar<V> sinh(const rvar<V>& x) {
    return rvar<V>::unary(math::sinh(x.v), x, math::cosh(x.v));
}
template <class V>
rvar<V> cosh(const rvar<V>& x) {
    return rvar<V>::unary(math::cosh(x.v), x, math::sinh(x.v));
}
template <class V>
rvar<V> tanh(const rvar<V>& x) {
    const V t = math::tanh(x.v);
    return rvar<V>::unary(t, x, V(1) - t * t);
}
template <class V>
rvar<V> asinh(const rvar<V>& x) {
    return rvar<V>::unary(math::asinh(x.v), x, V(1) / math::sqrt(x.v * x.v + V(1)));
}
template <class V>
rvar<V> acosh(const rvar<V>& x) {
    return rvar<V>::unary(math::acosh(x.v), x, V(1) / math::sqrt(x.v * x.v - V(1)));
}
template <class V>
rvar<V> atanh(const rvar<V>& x) {
    return rvar<V>::unary(math::atanh(x.v), x, V(1) / (V(1) - x.v * x.v));
}
template <class V>
rvar<V> erf(const rvar<V>& x) {
    const V k(static_cast<base_scalar_t<V>>(2.0 / std::sqrt(std::numbers::pi)));
    return rvar<V>::unary(math::erf(x.v), x, k * math::exp(-x.v * x.v));
}
template <class V>
rvar<V> fabs(const rvar<V>& x) {
    const V s = x.v > V(0) ? V(1) : (x.v < V(0) ? V(-1) : V(0));
    return rvar<V>::unary(math::fabs(x.v), x, s);
}
template <class V>
rvar<V> abs(const rvar<V>& x) {
    return fabs(x);
}
#define TENSORACLE_RVAR_STEP(NAME) \
    template <class V>             \
    rvar<V> NAME(const rvar<V>& x) { return rvar<V>(math::NAME(x.v)); }
TENSORACLE_RVAR_STEP(floor)
TENSORACLE_RVAR_STEP(ceil)
TENSORACLE_RVAR_STEP(trunc)
TENSORACLE_RVAR_STEP(round)
TENSORACLE_RVAR_STEP(nearbyint)
#undef TENSORACLE_RVAR_STEP
template <class V>
bool isnan(const rvar<V>& x) {
    return math::isnan(x.v);
}
template <class V>
bool isinf(const rvar<V>& x) {
    return math::isinf(x.v);
}
template <class V>
bool isfinite(const rvar<V>& x) {
    return math::isfinite(x.v);
}
template <class V>
bool signbit(const rvar<V>& x) {
    return math::signbit(x.v);
}
template <class V>
rvar<V> pow(const rvar<V>& a, const rvar<V>& b) {
    const V y = math::pow(a.v, b.v);
    const V da = a.is_constant() ? V(0) : b.v * math::pow(a.v, b.v - V(1));
    const V db = b.is_constant() ? V(0) : y * math::log(a.v);
    return rvar<V>::binary(y, a, da, b, db);
}
template <class V, class U>
    requires(!std::is_same_v<U, rvar<V>> && std::is_constructible_v<rvar<V>, U>)
rvar<V> pow(const rvar<V>& a, const U& b) {
    return pow(a, rvar<V>(b));
}
template <class V, class U>
    requires(!std::is_same_v<U, rvar<V>> && std::is_constructible_v<rvar<V>, U>)
rvar<V> pow(const U& a, const rvar<V>& b) {
    return pow(rvar<V>(a), b);
}
template <class V>
rvar<V> fmod(const rvar<V>& a, const rvar<V>& b) {
    const V r = math::fmod(a.v, b.v);
    const V q = math::trunc((a.v - r) / b.v);
    return rvar<V>::binary(r, a, V(1), b, -q);
}
template <class V>
rvar<V> atan2(const rvar<V>& y, const rvar<V>& x) {
    const V r2 = x.v * x.v + y.v * y.v;
    return rvar<V>::binary(math::atan2(y.v, x.v), y, x.v / r2, x, -y.v / r2);
}

}  // namespace tensoracle::ad

template <class V>
struct tensoracle::ad_scalar_traits<tensoracle::ad::rvar<V>> {
    static constexpr bool is_ad = true;
    using base = base_scalar_t<V>;
    static constexpr base primal(const ad::rvar<V>& x) { return tensoracle::primal(x.v); }
};

template <class V>
class std::numeric_limits<tensoracle::ad::rvar<V>> : public std::numeric_limits<V> {
    using R = tensoracle::ad::rvar<V>;
    using L = std::numeric_limits<V>;

public:
    static constexpr R min() noexcept { return R(L::min()); }
    static constexpr R max() noexcept { return R(L::max()); }
    static constexpr R lowest() noexcept { return R(L::lowest()); }
    static constexpr R epsilon() noexcept { return R(L::epsilon()); }
    static constexpr R infinity() noexcept { return R(L::infinity()); }
    static constexpr R quiet_NaN() noexcept { return R(L::quiet_NaN()); }
    static constexpr R denorm_min() noexcept { return R(L::denorm_min()); }
};
// ---- end tensoracle/ad/reverse.hpp ----

namespace tensoracle::ad {

/// True when op spec Op has a kernel that runs on AD scalars.
template <class Op>
concept differentiable_op = requires(const spec::context& c, const std::vector<array<dual<double>>>& x) {
    { Op::template run_real<dual<double>>(c, x) } -> std::same_as<std::vector<array<dual<double>>>>;
};

/// The inputs of this instance that derivatives are taken with respect to.
template <class Op>
[[nodiscard]] std::vector<std::size_t> differentiable_inputs_of(const spec::context& c) {
    if constexpr (requires { Op::differentiable_inputs(c); }) {
        return Op::differentiable_inputs(c);
    } else {
        std::vector<std::size_t> ids;
        for (std::size_t i = 0; i < c.input_count(); ++i) {
            if (c.has_input(i) && info(c.input_dtype(i)).is_floating) ids.push_back(i);
        }
        return ids;
    }
}

/// Values and derivatives of an op's outputs. Entries of outputs that are not
/// floating (indices, masks) are empty.
template <class V>
struct forward_result {
    std::vector<array<V>> values;
    std::vector<array<V>> tangents;
};
template <class V>
struct reverse_result {
    std::vector<array<V>> values;
    std::vector<array<V>> cotangents;  ///< one per op input; empty for inputs not differentiated
};

struct reverse_options {
    /// NNSmith's proxy derivative: where an op's true derivative is zero (Relu
    /// below 0, Floor...), use the op's proxy slope instead, so that gradient
    /// descent on input-domain losses does not stall. Not a derivative: never
    /// compare it with finite differences.
    bool proxy = false;
    /// For element-wise ops (elementwise_op), compute the VJP from one JVP per
    /// differentiable input instead of a scalar tape: several times faster on
    /// large tensors, which is what the input search needs. The two ways agree
    /// except where a zero tangent meets an infinite partial derivative (0 * inf
    /// is NaN in forward mode); the AD engines keep the tape, so that their
    /// reverse mode stays independent of their forward mode.
    bool elementwise_forward = false;
};

/// An op whose single output's every element depends only on the inputs'
/// elements at its (ONNX multidirectional) broadcast position.
template <class Op>
concept elementwise_op = requires { requires Op::elementwise; };

namespace detail {
template <class V>
bool is_empty(const array<V>& a) {
    return a.dimension() == 1 && a.shape()[0] == 0;
}
template <class V>
array<V> empty_array() {
    return array<V>::from_shape({0});
}

inline void check_same_shape(std::string_view op_type, std::string_view what, std::size_t i,
                             std::span<const std::size_t> expected, std::span<const std::size_t> got) {
    if (!std::equal(expected.begin(), expected.end(), got.begin(), got.end())) {
        throw shape_error("tensoracle::ad(" + std::string(op_type) + ")",
                          std::string(what) + " " + std::to_string(i) + " has shape " +
                              to_string(shape_type(got.begin(), got.end())) + " but the input has shape " +
                              to_string(shape_type(expected.begin(), expected.end())));
    }
}

template <class Op>
std::vector<bool> floating_outputs(const spec::context& c) {
    std::vector<bool> f;
    for (const dtype d : Op::output_dtypes(c)) f.push_back(info(d).is_floating);
    return f;
}
}  // namespace detail

/// An input tensor as an array of V (constants: no derivative parts).
template <class V>
[[nodiscard]] array<V> lift(const tensor& t) {
    const auto d = t.to<double>();
    auto a = array<V>::from_shape(t.shape());
    for (std::size_t i = 0; i < d.size(); ++i) a.data()[i] = V(static_cast<base_scalar_t<V>>(d.data()[i]));
    return a;
}

/// The primal values of an array of V as a tensor of dtype d (rounded once).
template <class V>
[[nodiscard]] tensor lower(const array<V>& a, dtype d = dtype::f64) {
    array<double> v = array<double>::from_shape(a.shape());
    for (std::size_t i = 0; i < a.size(); ++i) v.data()[i] = static_cast<double>(primal(a.data()[i]));
    return tensor(v).cast(d);
}

/// The op on values of V (differentiable inputs from x, the others from c).
template <class Op, class V>
[[nodiscard]] std::vector<array<V>> op_value(const spec::context& c, const std::vector<array<V>>& x) {
    return Op::template run_real<V>(c, x);
}

/// JVP: outputs and their derivatives along tangents u (one per input; only
/// the differentiable inputs' entries are read).
template <class Op, class V>
[[nodiscard]] forward_result<V> op_jvp(const spec::context& c, const std::vector<array<V>>& x,
                                       const std::vector<array<V>>& u) {
    using D = dual<V>;
    std::vector<array<D>> xd(c.input_count(), detail::empty_array<D>());
    for (const std::size_t i : differentiable_inputs_of<Op>(c)) {
        detail::check_same_shape(Op::op_type, "tangent", i, x[i].shape(), u[i].shape());
        xd[i] = array<D>::from_shape(x[i].shape());
        for (std::size_t k = 0; k < x[i].size(); ++k) xd[i].data()[k] = D(x[i].data()[k], u[i].data()[k]);
    }
    const auto yd = Op::template run_real<D>(c, xd);
    const auto fl = detail::floating_outputs<Op>(c);
    forward_result<V> r;
    for (std::size_t o = 0; o < yd.size(); ++o) {
        if (!fl[o]) {
            r.values.push_back(detail::empty_array<V>());
            r.tangents.push_back(detail::empty_array<V>());
            continue;
        }
        auto v = array<V>::from_shape(yd[o].shape());
        auto t = array<V>::from_shape(yd[o].shape());
        for (std::size_t k = 0; k < yd[o].size(); ++k) {
            v.data()[k] = yd[o].data()[k].v;
            t.data()[k] = yd[o].data()[k].d;
        }
        r.values.push_back(std::move(v));
        r.tangents.push_back(std::move(t));
    }
    return r;
}

namespace detail {
/// The VJP of an element-wise op through forward mode: the JVP along ones in
/// input i (zeros elsewhere) holds each output element's partial derivative
/// in the input element that feeds it, and Jᵀw sums w times it over the
/// output elements each input element is broadcast to.
template <class Op, class V>
[[nodiscard]] reverse_result<V> elementwise_vjp(const spec::context& c, const std::vector<array<V>>& x,
                                                const std::vector<array<V>>& w, const reverse_options& options) {
    const auto ids = differentiable_inputs_of<Op>(c);
    reverse_result<V> r;
    r.cotangents.assign(c.input_count(), empty_array<V>());
    if (ids.empty()) {
        const auto fl = floating_outputs<Op>(c);
        r.values = op_value<Op, V>(c, x);
        for (std::size_t o = 0; o < r.values.size(); ++o) {
            if (!fl[o]) r.values[o] = empty_array<V>();
        }
        return r;
    }
    const bool seeded = !w.empty() && !is_empty(w[0]);
    double slope = 0.0;  // the proxy slope where the true derivative is zero (single-input ops)
    if constexpr (requires { Op::proxy_slope; }) {
        if (options.proxy && ids.size() == 1) slope = Op::proxy_slope;
    }
    std::vector<array<V>> u(c.input_count(), empty_array<V>());
    for (const std::size_t i : ids) {
        u[i] = array<V>::from_shape(x[i].shape());
        std::fill(u[i].begin(), u[i].end(), V(0));
    }
    for (std::size_t n = 0; n < ids.size(); ++n) {
        const std::size_t i = ids[n];
        std::fill(u[i].begin(), u[i].end(), V(1));
        auto fr = op_jvp<Op, V>(c, x, u);
        std::fill(u[i].begin(), u[i].end(), V(0));
        if (n == 0) r.values = std::move(fr.values);
        auto& cot = r.cotangents[i];
        cot = array<V>::from_shape(x[i].shape());
        std::fill(cot.begin(), cot.end(), V(0));
        if (!seeded || fr.tangents.empty() || is_empty(fr.tangents[0])) continue;
        const auto& t = fr.tangents[0];
        check_same_shape(Op::op_type, "cotangent of output", 0, t.shape(), w[0].shape());
        // Where input i feeds output element f: itself (same size), its one element
        // (Clip's bounds, a scalar operand), or its broadcast position.
        std::vector<std::size_t> offsets;
        if (x[i].size() != t.size() && x[i].size() != 1) {
            offsets = ops::detail::broadcast_offsets({shape_type(x[i].shape().begin(), x[i].shape().end())},
                                                     shape_type(t.shape().begin(), t.shape().end()))[0];
        }
        for (std::size_t f = 0; f < t.size(); ++f) {
            V local = t.data()[f];
            if (slope != 0.0 && local == V(0)) local = V(slope);
            const std::size_t k = x[i].size() == t.size() ? f : (x[i].size() == 1 ? 0 : offsets[f]);
            cot.data()[k] += w[0].data()[f] * local;
        }
    }
    return r;
}
}  // namespace detail

/// VJP: outputs and the input cotangents Jᵀw for output cotangents w (one per
/// output; empty entries count as zero).
template <class Op, class V>
[[nodiscard]] reverse_result<V> op_vjp(const spec::context& c, const std::vector<array<V>>& x,
                                       const std::vector<array<V>>& w, const reverse_options& options = {}) {
    if constexpr (elementwise_op<Op>) {
        if (options.elementwise_forward) return detail::elementwise_vjp<Op, V>(c, x, w, options);
    }
    using R = rvar<V>;
    tape_scope<V> scope;
    const auto ids = differentiable_inputs_of<Op>(c);
    std::vector<array<R>> xr(c.input_count(), detail::empty_array<R>());
    for (const std::size_t i : ids) {
        xr[i] = array<R>::from_shape(x[i].shape());
        for (std::size_t k = 0; k < x[i].size(); ++k) xr[i].data()[k] = R::variable(x[i].data()[k]);
    }
    const auto yr = Op::template run_real<R>(c, xr);
    const auto fl = detail::floating_outputs<Op>(c);
    std::vector<std::uint32_t> at;
    std::vector<V> seeds;
    reverse_result<V> r;
    for (std::size_t o = 0; o < yr.size(); ++o) {
        if (!fl[o]) {
            r.values.push_back(detail::empty_array<V>());
            continue;
        }
        auto v = array<V>::from_shape(yr[o].shape());
        for (std::size_t k = 0; k < yr[o].size(); ++k) v.data()[k] = yr[o].data()[k].v;
        r.values.push_back(std::move(v));
        if (o >= w.size() || detail::is_empty(w[o])) continue;
        detail::check_same_shape(Op::op_type, "cotangent of output", o, yr[o].shape(), w[o].shape());
        for (std::size_t k = 0; k < yr[o].size(); ++k) {
            at.push_back(yr[o].data()[k].id);
            seeds.push_back(w[o].data()[k]);
        }
    }
    const auto adj = scope.get().sweep(at, seeds);
    r.cotangents.assign(c.input_count(), detail::empty_array<V>());
    for (const std::size_t i : ids) {
        r.cotangents[i] = array<V>::from_shape(x[i].shape());
        for (std::size_t k = 0; k < x[i].size(); ++k) r.cotangents[i].data()[k] = adj[xr[i].data()[k].id];
    }
    if constexpr (requires { Op::proxy_slope; }) {
        if (options.proxy && Op::proxy_slope != 0.0 && ids.size() == 1 && yr.size() == 1 && !w.empty() &&
            !detail::is_empty(w[0])) {
            // Proxy ops are element-wise: the local derivative is the JVP along ones.
            const std::size_t i = ids[0];
            std::vector<array<V>> ones(c.input_count(), detail::empty_array<V>());
            ones[i] = array<V>::from_shape(x[i].shape());
            std::fill(ones[i].begin(), ones[i].end(), V(1));
            const auto local = op_jvp<Op, V>(c, x, ones).tangents[0];
            for (std::size_t k = 0; k < local.size(); ++k) {
                if (local.data()[k] == V(0)) r.cotangents[i].data()[k] = V(Op::proxy_slope) * w[0].data()[k];
            }
        }
    }
    return r;
}

/// The type-erased rules of one op for arithmetic V.
template <class V>
struct derivative_rules {
    std::string_view op_type;
    std::vector<std::size_t> (*differentiable_inputs)(const spec::context&) = nullptr;
    std::vector<array<V>> (*value)(const spec::context&, const std::vector<array<V>>&) = nullptr;
    forward_result<V> (*jvp)(const spec::context&, const std::vector<array<V>>&, const std::vector<array<V>>&) =
        nullptr;
    reverse_result<V> (*vjp)(const spec::context&, const std::vector<array<V>>&, const std::vector<array<V>>&,
                             const reverse_options&) = nullptr;
    double proxy_slope = 0.0;
    bool elementwise = false;  ///< elementwise_op: vjp honours reverse_options::elementwise_forward
};

template <class V, class Op>
[[nodiscard]] derivative_rules<V> make_rules() {
    derivative_rules<V> r;
    r.op_type = Op::op_type;
    r.differentiable_inputs = &differentiable_inputs_of<Op>;
    r.value = &op_value<Op, V>;
    r.jvp = &op_jvp<Op, V>;
    r.vjp = &op_vjp<Op, V>;
    if constexpr (requires { Op::proxy_slope; }) r.proxy_slope = Op::proxy_slope;
    r.elementwise = elementwise_op<Op>;
    return r;
}

/// A checked context for an op instance, as spec::evaluate builds it.
[[nodiscard]] inline spec::context make_context(const spec::op_entry& op, const std::vector<const tensor*>& inputs,
                                                const spec::attribute_map& attributes) {
    spec::detail::check_inputs(op, inputs);
    spec::context c(op.op_type, inputs, op.normalize_attributes(attributes));
    spec::check_constraints(c, op.constraints(c));
    return c;
}

}  // namespace tensoracle::ad
// ---- end tensoracle/ad/op_derivatives.hpp ----

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
// ---- end tensoracle/ad/op_rules.hpp ----
// ---- begin tensoracle/ad/typed_engine.hpp ----
// tensoracle: one op of the kit as an engine for the gradient oracle, with
// value, JVP, VJP and second order (forward-over-reverse).
//
//     #include <tensoracle/ad/typed_engine.hpp>
//     #include <tensoracle/ops/reduce.hpp>
//     const auto e = ad::op_engine<ops::Softmax>({{"axis", std::int64_t{0}}});
//
// instantiates Softmax's kernel and nothing else: a test of one op compiles in
// seconds. ad/engine.hpp adds op_engine("Softmax") by name, which goes through
// the registry of every op (campaigns, graphs). Use an op engine as the
// known-good engine beside the one under test (oracle_options::reference), or
// to see how an engine is put together from callables.

#include <algorithm>
#include <concepts>
#include <string>
#include <string_view>

// ---- begin tensoracle/ad/oracle.hpp ----
// tensoracle: a gradient oracle for other people's AD engines.
//
// The engine under test is a set of callables over kit tensors: its value
// function and any of VJP, JVP, full Jacobian, and (for order >= 2) the engine
// of its own gradient. check_gradients() follows ∇Fuzz's Algorithm 1 and Stan
// Math's expect_ad:
//   1. exceptions: if the value throws, every AD path must throw, and not otherwise;
//   2. the value repeated (10× by default): any difference is nondeterminism;
//   3. values returned by the AD paths against the direct value;
//   4. reverse against forward via ⟨Ju, w⟩ = ⟨u, Jᵀw⟩ (no finite differences needed);
//   5. both against finite differences in float64 (full Jacobians for small
//      inputs, random projections otherwise);
//   6. order >= 2: the same checks on x ↦ Jᵀ(x)·w, the engine's own gradient.
// Failures are then run through filters that label (never drop) the usual
// false positives: a non-differentiable point (5 neighbours within 1e-4 whose
// numerical derivatives disagree), precision conversion (an input wider than
// an output), NaN in the gradients.

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// ---- begin tensoracle/ad/finite_difference.hpp ----
// tensoracle: finite differences, the AD-independent reference for
// derivatives. Functions are callables on flat vectors of a real type R
// (double or long double: evaluate after up-casting, so that truncation and
// rounding errors of the stencil stay below the tolerance being tested).

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>


namespace tensoracle::ad {

/// Central stencils by order of accuracy: 2 (two points, h²), 4 (four points),
/// 6 (six points, Stan's choice for expect_ad).
enum class stencil { central2 = 2, central4 = 4, central6 = 6 };

/// How the step is chosen for one coordinate x: h = scale · max(1, |x|) when
/// relative (Stan: scale = eps^(1/7) for 6 points), h = scale when absolute.
struct step_policy {
    double scale = 1e-6;
    bool relative = true;
    [[nodiscard]] double step(double x) const { return relative ? scale * std::max(1.0, std::fabs(x)) : scale; }
};

struct fd_options {
    stencil kind = stencil::central2;
    step_policy step{};
    /// At a domain edge (the function throws or returns NaN on one side and
    /// not the other) fall back to a one-sided 3-point stencil on the good side.
    bool one_sided_at_edges = true;

    /// torch.autograd.gradcheck's choice: central differences, eps 1e-6.
    static fd_options torch() { return {stencil::central2, {1e-6, false}, true}; }
    /// Stan Math's: six points, h = eps^(1/7)·max(1,|x|) (about 5.7e-3 for double).
    static fd_options stan() {
        return {stencil::central6, {std::pow(std::numeric_limits<double>::epsilon(), 1.0 / 7.0), true}, true};
    }
};

/// Which stencil a directional derivative actually used.
enum class fd_side { central, forward, backward };

template <class R>
struct fd_result {
    std::vector<R> derivative;
    fd_side side = fd_side::central;
};

namespace detail {
// Weights of f(x + k·h) for the central stencils, k = ±1, ±2, ±3.
struct central_weights {
    std::array<int, 6> k{};
    std::array<double, 6> w{};
    int n = 0;
};
inline central_weights weights(stencil s) {
    switch (s) {
        case stencil::central2: return {{1, -1}, {0.5, -0.5}, 2};
        case stencil::central4: return {{1, -1, 2, -2}, {8.0 / 12, -8.0 / 12, -1.0 / 12, 1.0 / 12}, 4};
        case stencil::central6:
            return {{1, -1, 2, -2, 3, -3}, {45.0 / 60, -45.0 / 60, -9.0 / 60, 9.0 / 60, 1.0 / 60, -1.0 / 60}, 6};
    }
    throw error("tensoracle::ad::finite_difference", "unknown stencil");
}

template <class R>
bool all_finite_or_inf(const std::vector<R>& v) {
    return std::none_of(v.begin(), v.end(), [](R x) { return std::isnan(x); });
}

/// f at x + t·u, or nothing when f throws or gives NaN there.
template <class R, class F>
bool probe(F& f, std::span<const R> x, std::span<const R> u, R t, std::vector<R>& out) {
    std::vector<R> p(x.begin(), x.end());
    for (std::size_t i = 0; i < p.size(); ++i) p[i] += t * u[i];
    try {
        out = f(std::span<const R>(p));
    } catch (const std::exception&) {
        return false;
    }
    return all_finite_or_inf(out);
}
}  // namespace detail

/// Directional derivative (d/dt) f(x + t·u) at t = 0 with step h along u.
/// f: std::vector<R>(std::span<const R>). Throws when f fails on both sides.
template <class R, class F>
[[nodiscard]] fd_result<R> fd_directional(F&& f, std::span<const R> x, std::span<const R> u, R h,
                                          const fd_options& o = {}) {
    const auto cw = detail::weights(o.kind);
    std::vector<std::vector<R>> ys(static_cast<std::size_t>(cw.n));
    bool ok = true;
    for (int j = 0; j < cw.n && ok; ++j) ok = detail::probe<R>(f, x, u, static_cast<R>(cw.k[static_cast<std::size_t>(j)]) * h, ys[static_cast<std::size_t>(j)]);
    fd_result<R> r;
    if (ok) {
        r.derivative.assign(ys[0].size(), R(0));
        for (int j = 0; j < cw.n; ++j) {
            const auto& y = ys[static_cast<std::size_t>(j)];
            if (y.size() != r.derivative.size()) {
                throw error("tensoracle::ad::fd_directional", "the function's output size changed between probes");
            }
            for (std::size_t i = 0; i < y.size(); ++i) r.derivative[i] += static_cast<R>(cw.w[static_cast<std::size_t>(j)]) * y[i];
        }
        for (auto& d : r.derivative) d /= h;
        return r;
    }
    if (!o.one_sided_at_edges) {
        throw error("tensoracle::ad::fd_directional", "the function is undefined (throws or NaN) next to the point");
    }
    // Second-order one-sided: (-3 f(0) + 4 f(h) - f(2h)) / 2h on the side where f is defined.
    std::vector<R> f0, f1, f2;
    for (const R sgn : {R(1), R(-1)}) {
        if (detail::probe<R>(f, x, u, R(0), f0) && detail::probe<R>(f, x, u, sgn * h, f1) &&
            detail::probe<R>(f, x, u, sgn * 2 * h, f2)) {
            r.derivative.resize(f0.size());
            for (std::size_t i = 0; i < f0.size(); ++i) r.derivative[i] = sgn * (-3 * f0[i] + 4 * f1[i] - f2[i]) / (2 * h);
            r.side = sgn > 0 ? fd_side::forward : fd_side::backward;
            return r;
        }
    }
    throw error("tensoracle::ad::fd_directional",
                "the function is undefined (throws or NaN) on both sides of the point at step " +
                    std::to_string(static_cast<double>(h)));
}

/// Directional derivative with the step from the policy: h = step(max |x_i|
/// over the coordinates u moves) / max |u_i|, so that no coordinate moves by
/// more than its own relative step.
template <class R, class F>
[[nodiscard]] fd_result<R> fd_directional(F&& f, std::span<const R> x, std::span<const R> u, const fd_options& o = {}) {
    double xmax = 0.0, umax = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (u[i] != 0) xmax = std::max(xmax, std::fabs(static_cast<double>(x[i])));
        umax = std::max(umax, std::fabs(static_cast<double>(u[i])));
    }
    if (umax == 0.0) {
        std::vector<R> y;
        if (!detail::probe<R>(f, x, u, R(0), y)) y = f(x);
        return {std::vector<R>(y.size(), R(0)), fd_side::central};
    }
    return fd_directional<R>(f, x, u, static_cast<R>(o.step.step(xmax) / umax), o);
}

/// The m×n Jacobian by finite differences, one coordinate at a time (each with
/// its own relative step). Row-major: J[i*n + j] = ∂f_i/∂x_j.
template <class R, class F>
[[nodiscard]] std::vector<R> fd_jacobian(F&& f, std::span<const R> x, const fd_options& o = {}) {
    const std::size_t n = x.size();
    std::vector<R> jac;
    std::size_t m = 0;
    std::vector<R> e(n, R(0));
    for (std::size_t j = 0; j < n; ++j) {
        e[j] = R(1);
        const auto col = fd_directional<R>(f, x, std::span<const R>(e), static_cast<R>(o.step.step(static_cast<double>(x[j]))), o);
        e[j] = R(0);
        if (j == 0) {
            m = col.derivative.size();
            jac.assign(m * n, R(0));
        }
        for (std::size_t i = 0; i < m; ++i) jac[i * n + j] = col.derivative[i];
    }
    return jac;
}

}  // namespace tensoracle::ad
// ---- end tensoracle/ad/finite_difference.hpp ----

namespace tensoracle::ad {

using tensors = std::vector<tensor>;

/// What an engine's JVP returns for inputs x and input tangents u: the
/// function's outputs and, per output, its tangent J·u (shaped like that output;
/// an output that is not floating may have an empty tangent).
struct jvp_result {
    tensors outputs;
    tensors output_tangents;  ///< one per output
};

/// What an engine's VJP returns for inputs x and output cotangents w: the
/// function's outputs and, per input, its cotangent Jᵀ·w (shaped like that input;
/// an input the engine does not differentiate may have an empty cotangent).
struct vjp_result {
    tensors outputs;
    tensors input_cotangents;  ///< one per input
};

/// A full Jacobian as blocks ∂y_o/∂x_i, each shaped shape(y_o) ++ shape(x_i)
/// (row-major: output element, then input element). Blocks start empty.
class jacobian_blocks {
public:
    jacobian_blocks() = default;
    jacobian_blocks(std::size_t outputs, std::size_t inputs)
        : outputs_(outputs), inputs_(inputs), blocks_(outputs * inputs) {}
    [[nodiscard]] std::size_t outputs() const noexcept { return outputs_; }
    [[nodiscard]] std::size_t inputs() const noexcept { return inputs_; }
    /// ∂(output o)/∂(input i).
    [[nodiscard]] tensor& block(std::size_t o, std::size_t i) { return blocks_.at(index(o, i)); }
    [[nodiscard]] const tensor& block(std::size_t o, std::size_t i) const { return blocks_.at(index(o, i)); }

private:
    std::size_t index(std::size_t o, std::size_t i) const {
        if (o >= outputs_ || i >= inputs_) {
            throw shape_error("tensoracle::ad::jacobian_blocks::block",
                              "block (" + std::to_string(o) + ", " + std::to_string(i) + ") of a Jacobian with " +
                                  std::to_string(outputs_) + " outputs and " + std::to_string(inputs_) + " inputs");
        }
        return o * inputs_ + i;
    }
    std::size_t outputs_ = 0, inputs_ = 0;
    tensors blocks_;
};

/// The engine under test, as callables. Only `value` is required. Building it
/// with engine_builder (below) checks each callable's signature where it is
/// given. A path that is given is always compared, or reported as not checked.
struct engine {
    /// x -> outputs.
    std::function<tensors(const tensors& x)> value;
    /// (x, w: one cotangent per output) -> outputs and one cotangent Jᵀw per input.
    std::function<vjp_result(const tensors& x, const tensors& output_cotangents)> vjp;
    /// (x, u: one tangent per input) -> outputs and one tangent Ju per output.
    std::function<jvp_result(const tensors& x, const tensors& input_tangents)> jvp;
    /// x -> every block ∂y_o/∂x_i.
    std::function<jacobian_blocks(const tensors& x)> jacobian;
    /// w -> the engine of g(x) = Jᵀ(x)·w, for order >= 2. Its outputs are the
    /// input cotangents: one per input, as in vjp_result (empty where not differentiated).
    std::function<engine(const tensors& output_cotangents)> gradient;
};

/// Assembles an engine, checking at compile time that each callable has the
/// signature of its path (a JVP given where the VJP belongs does not compile):
///
///     auto e = ad::engine_builder()
///                  .value([](const ad::tensors& x) { ...; return ys; })
///                  .vjp([](const ad::tensors& x, const ad::tensors& w) { ...; return ad::vjp_result{ys, dxs}; })
///                  .build();
class engine_builder {
public:
    template <class F>
    engine_builder& value(F f) {
        static_assert(std::is_invocable_r_v<tensors, F&, const tensors&>,
                      "engine_builder::value(f): f must be callable as f(const tensors& x) and return tensors "
                      "(one per output)");
        e_.value = std::move(f);
        return *this;
    }
    template <class F>
    engine_builder& vjp(F f) {
        static_assert(std::is_invocable_r_v<vjp_result, F&, const tensors&, const tensors&>,
                      "engine_builder::vjp(f): f must be callable as f(const tensors& x, const tensors& "
                      "output_cotangents) and return vjp_result{outputs, input_cotangents (one per input)}");
        e_.vjp = std::move(f);
        return *this;
    }
    template <class F>
    engine_builder& jvp(F f) {
        static_assert(std::is_invocable_r_v<jvp_result, F&, const tensors&, const tensors&>,
                      "engine_builder::jvp(f): f must be callable as f(const tensors& x, const tensors& "
                      "input_tangents) and return jvp_result{outputs, output_tangents (one per output)}");
        e_.jvp = std::move(f);
        return *this;
    }
    template <class F>
    engine_builder& jacobian(F f) {
        static_assert(std::is_invocable_r_v<jacobian_blocks, F&, const tensors&>,
                      "engine_builder::jacobian(f): f must be callable as f(const tensors& x) and return "
                      "jacobian_blocks (block(o, i) shaped like output o followed by input i)");
        e_.jacobian = std::move(f);
        return *this;
    }
    template <class F>
    engine_builder& gradient(F f) {
        static_assert(std::is_invocable_r_v<engine, F&, const tensors&>,
                      "engine_builder::gradient(f): f must be callable as f(const tensors& output_cotangents) and "
                      "return the engine of x -> J^T(x) w");
        e_.gradient = std::move(f);
        return *this;
    }
    /// The engine; throws when no value function was given.
    [[nodiscard]] engine build() const {
        if (!e_.value) {
            throw error("tensoracle::ad::engine_builder::build", "the engine has no value function (call .value(f))");
        }
        return e_;
    }

private:
    engine e_;
};

enum class gradient_outcome {
    pass,
    nondeterministic,          ///< the value differs between identical runs
    output_inconsistent,       ///< an AD path returned other outputs than the value function
    reverse_forward_mismatch,  ///< ⟨Ju, w⟩ ≠ ⟨u, Jᵀw⟩, or a full Jacobian disagrees with an AD path
    gradient_fd_mismatch,      ///< an AD path disagrees with finite differences
    exception_mismatch,        ///< the value and an AD path disagree on throwing (or an AD path crashed)
    skipped,                   ///< nothing to check (no AD paths, or the value and every AD path threw)
    malformed_derivative,      ///< a derivative or Jacobian block is missing, empty, or of the wrong shape or dtype
    reference_mismatch,        ///< an AD path disagrees element by element with the reference engine
    not_checked,               ///< no failure, but a provided path was never compared (reasons in the report)
};

[[nodiscard]] inline std::string_view name(gradient_outcome o) {
    switch (o) {
        case gradient_outcome::pass: return "pass";
        case gradient_outcome::nondeterministic: return "nondeterministic";
        case gradient_outcome::output_inconsistent: return "output inconsistent";
        case gradient_outcome::reverse_forward_mismatch: return "reverse != forward";
        case gradient_outcome::gradient_fd_mismatch: return "gradient != finite differences";
        case gradient_outcome::exception_mismatch: return "exception mismatch";
        case gradient_outcome::skipped: return "skipped";
        case gradient_outcome::malformed_derivative: return "malformed derivative";
        case gradient_outcome::reference_mismatch: return "gradient != reference";
        case gradient_outcome::not_checked: return "not checked";
    }
    return "?";
}

/// Labels of likely false positives, attached to a failing check.
enum class filter_label : unsigned {
    non_differentiable_point = 1U,
    precision_conversion = 2U,
    nan_in_gradient = 4U,
};
[[nodiscard]] inline std::string_view name(filter_label l) {
    switch (l) {
        case filter_label::non_differentiable_point: return "non-differentiable point";
        case filter_label::precision_conversion: return "precision conversion";
        case filter_label::nan_in_gradient: return "NaN in gradient";
    }
    return "?";
}

/// Tolerances keyed by dtype and derivative order (0 = values). Defaults:
/// values from Stan's expect_ad (1e-8 relative in f64); first order from JAX
/// check_grads (f64 1e-5, f32 2e-3, f16 1e-2, bf16 1e-1); second order from
/// Stan's Hessian tolerance (1e-3 in f64), third order 1e-2; lower precisions
/// scaled like first order. Any entry can be replaced.
class derivative_tolerances {
public:
    [[nodiscard]] static derivative_tolerances defaults() {
        derivative_tolerances t;
        const auto both = [](double v) { return tolerance{v, v}; };
        t.set(dtype::f64, 0, both(1e-8));
        t.set(dtype::f32, 0, both(1e-5));
        t.set(dtype::f16, 0, both(1e-3));
        t.set(dtype::bf16, 0, both(1e-2));
        t.set(dtype::f64, 1, both(1e-5));
        t.set(dtype::f32, 1, both(2e-3));
        t.set(dtype::f16, 1, both(1e-2));
        t.set(dtype::bf16, 1, both(1e-1));
        t.set(dtype::f64, 2, both(1e-3));
        t.set(dtype::f32, 2, both(1e-2));
        t.set(dtype::f16, 2, both(5e-2));
        t.set(dtype::bf16, 2, both(2e-1));
        t.set(dtype::f64, 3, both(1e-2));
        t.set(dtype::f32, 3, both(5e-2));
        t.set(dtype::f16, 3, both(1e-1));
        t.set(dtype::bf16, 3, both(3e-1));
        return t;
    }
    /// ∇Fuzz's fuzzing preset: allclose(atol 0.1, rtol 1e-3) everywhere.
    [[nodiscard]] static derivative_tolerances nabla_fuzz() {
        derivative_tolerances t = defaults();
        for (auto& [k, v] : t.table_) v = {0.1, 1e-3};
        return t;
    }
    void set(dtype d, int order, tolerance tol) { table_[{d, order}] = tol; }
    /// The entry for (d, order); orders above the largest set reuse it.
    [[nodiscard]] tolerance get(dtype d, int order) const {
        for (int o = order; o >= 0; --o) {
            const auto it = table_.find({d, o});
            if (it != table_.end()) return it->second;
        }
        throw error("tensoracle::ad::derivative_tolerances", "no tolerance for dtype " + std::string(tensoracle::name(d)));
    }

private:
    std::map<std::pair<dtype, int>, tolerance> table_;
};

struct oracle_options {
    int determinism_runs = 10;
    int probes = 3;                         ///< random (u, w) pairs for projections
    int order = 1;                          ///< highest derivative order to check (>= 2 needs engine.gradient)
    std::size_t full_jacobian_limit = 24;   ///< full Jacobians when inputs and outputs have at most this many elements
    std::vector<std::size_t> wrt;           ///< inputs to differentiate (default: every floating input)
    fd_options fd{stencil::central6, {1e-3, true}, true};
    /// Second opinion where `fd` disagrees: torch.gradcheck's central difference, eps 1e-6.
    fd_options fine_fd = fd_options::torch();
    derivative_tolerances tolerances = derivative_tolerances::defaults();
    int neighbours = 5;                     ///< ∇Fuzz's non-differentiability filter
    double neighbour_radius = 1e-4;
    fd_options neighbour_fd = fd_options::torch();
    /// How far the neighbours' numerical derivatives may spread before x
    /// counts as non-differentiable: a smooth function moves them by about
    /// radius·|f''| (~1e-4), a kink by the jump in slope (O(1)).
    tolerance neighbour_tolerance{1e-2, 1e-2};
    /// A failure at a non-differentiable point is re-checked at this many
    /// points nudged off it (each element moved by up to `nudge_radius`·max(1, |x|)):
    /// only a failure that disappears at one of them is the kink's doing.
    int nudges = 3;
    double nudge_radius = 1e-3;
    /// The kit's own derivative of the same function (e.g. op_engine of the op
    /// the engine implements), when there is one: every JVP and VJP of the engine
    /// is then compared with it element by element, so an error in a single
    /// element of a large tensor cannot hide in a projection. Empty: none.
    engine reference;
    std::uint64_t seed = 0x5eed;
};

/// What became of one comparison.
enum class check_status {
    agreed,
    failed,   ///< a disagreement no filter explains
    excused,  ///< a disagreement a filter explains (labels say which)
};

struct check_entry {
    std::string what;  ///< e.g. "probe 1: vjp vs finite differences"
    check_status status = check_status::agreed;
    gradient_outcome kind = gradient_outcome::pass;  ///< the kind of disagreement (pass when agreed)
    unsigned labels = 0;                             ///< filters that excused it
    std::string detail;
};

struct gradient_report {
    /// The first failure no filter explains; else the first excused one; else
    /// pass (every provided path compared), not_checked, or skipped.
    gradient_outcome outcome = gradient_outcome::skipped;
    unsigned labels = 0;  ///< filters of the excused failures
    int order = 1;
    dtype precision = dtype::f64;  ///< the dtype whose tolerances applied
    tolerance used{};
    std::string message;           ///< what failed and where (the outcome's check)
    std::optional<comparison_report> comparison;  ///< that check's elementwise comparison, if any
    std::vector<check_entry> checks;              ///< every comparison made, in order
    std::vector<std::string> not_checked;         ///< provided paths (or parts) never compared, and why
    /// For derivatives compared only through random projections (no reference,
    /// too large for full Jacobians): a wrong single element of Jᵀw or of J
    /// smaller than this may have gone unnoticed. 0 when none were.
    double projection_blind_spot = 0.0;
    std::vector<std::string> log;         ///< notes beside the checks
    std::vector<gradient_report> higher;  ///< order + 1

    [[nodiscard]] bool has(filter_label l) const { return (labels & static_cast<unsigned>(l)) != 0; }
    [[nodiscard]] std::size_t count(check_status s) const {
        return static_cast<std::size_t>(
            std::count_if(checks.begin(), checks.end(), [&](const check_entry& c) { return c.status == s; }));
    }
    /// A failure not explained by a filter (here or at a higher order).
    [[nodiscard]] bool failed() const {
        return count(check_status::failed) != 0 ||
               std::any_of(higher.begin(), higher.end(), [](const gradient_report& h) { return h.failed(); });
    }
    /// Every provided path was compared and nothing failed (here and above).
    [[nodiscard]] bool fully_checked() const {
        return !failed() && not_checked.empty() &&
               std::all_of(higher.begin(), higher.end(), [](const gradient_report& h) { return h.fully_checked(); });
    }
    [[nodiscard]] std::string to_string() const {
        std::ostringstream os;
        os << "gradient check, order " << order << ": " << name(outcome);
        for (const auto l : {filter_label::non_differentiable_point, filter_label::precision_conversion,
                             filter_label::nan_in_gradient}) {
            if (has(l)) os << " [excused: " << name(l) << "]";
        }
        os << " (" << tensoracle::name(precision) << ", " << used << ")\n";
        os << "  " << checks.size() << " comparisons: " << count(check_status::agreed) << " agreed, "
           << count(check_status::failed) << " failed, " << count(check_status::excused) << " excused by a filter; "
           << not_checked.size() << " not checked\n";
        if (!message.empty()) os << "  " << message << "\n";
        if (comparison) os << comparison->describe(used);
        for (const auto& c : checks) {
            if (c.status == check_status::agreed) continue;
            os << "  " << (c.status == check_status::failed ? "FAILED " : "excused ") << c.what << ": " << name(c.kind);
            for (const auto l : {filter_label::non_differentiable_point, filter_label::precision_conversion,
                                 filter_label::nan_in_gradient}) {
                if ((c.labels & static_cast<unsigned>(l)) != 0) os << " [" << name(l) << "]";
            }
            if (!c.detail.empty()) os << " — " << c.detail;
            os << "\n";
        }
        for (const auto& n : not_checked) os << "  NOT CHECKED " << n << "\n";
        if (projection_blind_spot > 0.0) {
            os << "  compared through projections only: a single wrong derivative element below about "
               << projection_blind_spot << " could go unnoticed (give oracle_options::reference to compare elementwise)\n";
        }
        for (const auto& line : log) os << "  - " << line << "\n";
        for (const auto& h : higher) os << h.to_string();
        return os.str();
    }
};

namespace detail {

// The checker treats both AD paths alike: outputs plus derivatives (per output
// for JVP, per input for VJP).
struct path_result {
    tensors outputs;
    tensors derivatives;
};
inline path_result jvp_of(const engine& e, const tensors& x, const tensors& u) {
    auto r = e.jvp(x, u);
    return {std::move(r.outputs), std::move(r.output_tangents)};
}
inline path_result vjp_of(const engine& e, const tensors& x, const tensors& w) {
    auto r = e.vjp(x, w);
    return {std::move(r.outputs), std::move(r.input_cotangents)};
}

inline bool is_floating(const tensor& t) { return info(t.element_dtype()).is_floating; }

inline std::vector<double> flat(const tensors& ts, const std::vector<std::size_t>& ids) {
    std::vector<double> v;
    for (const auto i : ids) {
        const auto d = ts[i].to<double>();
        v.insert(v.end(), d.begin(), d.end());
    }
    return v;
}
inline std::vector<double> flat_floating(const tensors& ts) {
    std::vector<double> v;
    for (const auto& t : ts) {
        if (!is_floating(t)) continue;
        const auto d = t.to<double>();
        v.insert(v.end(), d.begin(), d.end());
    }
    return v;
}
inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0.0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) s += a[i] * b[i];
    return s;
}
inline double abs_dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0.0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) s += std::fabs(a[i] * b[i]);
    return s;
}
inline bool any_nan(const std::vector<double>& v) {
    return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); });
}
inline double max_abs(const std::vector<double>& v) {
    double m = 0.0;
    for (const double x : v) {
        if (std::isfinite(x)) m = std::max(m, std::fabs(x));
    }
    return m;
}
// Largest finite |element| of a floating tensor; 0 for other dtypes.
inline double max_abs(const tensor& t) {
    if (!is_floating(t)) return 0.0;
    double m = 0.0;
    for (const double x : t.to<double>()) {
        if (std::isfinite(x)) m = std::max(m, std::fabs(x));
    }
    return m;
}
inline tensor vector_tensor(const std::vector<double>& v) {
    auto a = array<double>::from_shape({v.size()});
    std::copy(v.begin(), v.end(), a.data());
    return tensor(a);
}
// Scalars agree when |a - b| <= atol + rtol·scale, with scale the sum of
// absolute terms: an inner product that cancels must not demand more than its terms allow.
inline bool scalar_close(double a, double b, double scale, tolerance t) {
    if (std::isnan(a) || std::isnan(b)) return false;
    if (a == b) return true;  // equal infinities too
    return std::fabs(a - b) <= t.atol + t.rtol * scale;
}
// True only when compare(a, e, {nan_equal = false}) would pass at t: most
// comparisons agree, and the full report (statistics, ULPs, medians) is built
// only for the ones that do not.
inline bool element_close(double a, double e, tolerance t) {
    if (std::isnan(a) || std::isnan(e)) return false;
    if (std::isinf(a) || std::isinf(e)) return a == e;
    return std::fabs(a - e) <= t.atol + t.rtol * std::fabs(e);
}
inline bool quick_close(const tensor& a, const tensor& e, tolerance t) {
    if (a.shape() != e.shape() || !is_floating(a) || !is_floating(e)) return false;
    const auto av = a.to<double>(), ev = e.to<double>();
    for (std::size_t k = 0; k < av.size(); ++k) {
        if (!element_close(av.data()[k], ev.data()[k], t)) return false;
    }
    return true;
}
inline bool quick_close(const std::vector<double>& a, const std::vector<double>& e, tolerance t) {
    if (a.size() != e.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k) {
        if (!element_close(a[k], e[k], t)) return false;
    }
    return true;
}

inline std::string fmt(double v) {
    std::ostringstream os;
    os.precision(10);
    os << v;
    return os.str();
}
/// Unit roundoff of a floating dtype.
inline double unit_roundoff(dtype d) {
    switch (d) {
        case dtype::f16: return std::ldexp(1.0, -11);
        case dtype::bf16: return std::ldexp(1.0, -8);
        case dtype::f32: return std::ldexp(1.0, -24);
        default: return std::ldexp(1.0, -53);
    }
}

/// A random tensor of t's dtype and shape with N(0, 1) entries.
inline tensor random_like(rng& g, const tensor& t) {
    auto a = array<double>::from_shape(t.shape());
    for (auto& v : a) v = g.normal();
    return tensor(a).cast(t.element_dtype());
}

class checker {
public:
    checker(const engine& e, const tensors& x, const oracle_options& o, int order)
        : e_(e), x_(x), o_(o), g_(o.seed + static_cast<std::uint64_t>(order)) {
        r_.order = order;
        wrt_ = o.wrt;
        if (wrt_.empty()) {
            for (std::size_t i = 0; i < x.size(); ++i) {
                if (is_floating(x[i]) && x[i].size() != 0) wrt_.push_back(i);
            }
        }
        for (const auto i : wrt_) {
            if (i >= x.size() || !is_floating(x[i])) {
                throw error("tensoracle::ad::check_gradients", "input " + std::to_string(i) +
                                                                   " is not a floating input and cannot be differentiated");
            }
        }
    }

    gradient_report run() {
        if (!e_.value) throw error("tensoracle::ad::check_gradients", "the engine has no value function");
        // 1. Exceptions.
        std::string value_error;
        try {
            y_ = e_.value(x_);
        } catch (const std::exception& ex) {
            value_error = ex.what();
        }
        if (!value_error.empty()) return all_paths_throw(value_error);
        set_precision(y_);
        out_ids_ = floating_ids(y_);
        for (const auto& y : y_) y_max_.push_back(max_abs(y));
        if (wrt_.empty() || out_ids_.empty()) {
            r_.outcome = gradient_outcome::skipped;
            r_.message = "no floating inputs or outputs to differentiate";
            return r_;
        }
        // 2. Determinism: later checks compare against one run, so a value that
        // changes between runs makes every other comparison meaningless.
        for (int k = 1; k < o_.determinism_runs; ++k) {
            const auto y2 = e_.value(x_);
            bool same = y2.size() == y_.size();
            for (std::size_t i = 0; same && i < y_.size(); ++i) same = y_[i].identical(y2[i]);
            if (!same) {
                record("value determinism", gradient_outcome::nondeterministic,
                       "run " + std::to_string(k + 1) + " of the value function differs from run 1", false);
                return summarize();
            }
        }
        r_.log.push_back("value deterministic over " + std::to_string(o_.determinism_runs) + " runs");
        if (!e_.vjp && !e_.jvp && !e_.jacobian) {
            r_.outcome = gradient_outcome::skipped;
            r_.message = "the engine provides no AD path (vjp, jvp or jacobian)";
            return r_;
        }
        vt_ = o_.tolerances.get(r_.precision, r_.order - 1);
        gt_ = o_.tolerances.get(r_.precision, r_.order);
        r_.used = gt_;
        use_jvp_ = static_cast<bool>(e_.jvp);
        use_vjp_ = static_cast<bool>(e_.vjp);
        use_ref_ = static_cast<bool>(o_.reference.value) && (o_.reference.jvp || o_.reference.vjp);
        // 3.-5. per probe: structure, values, reverse vs forward, reference, finite differences.
        for (int p = 0; p < o_.probes; ++p) probe(p);
        jacobian_path();
        full_jacobians();
        blind_spot();
        const std::tuple<const char*, bool, std::size_t> paths[] = {
            {"jvp", static_cast<bool>(e_.jvp), compared_jvp_},
            {"vjp", static_cast<bool>(e_.vjp), compared_vjp_},
            {"jacobian", static_cast<bool>(e_.jacobian), compared_jacobian_}};
        for (const auto& [path, provided, used] : paths) {
            if (provided && used == 0 && !path_failed_[path]) {
                r_.not_checked.push_back(std::string(path) + ": no comparison could be made" +
                                         (fd_unavailable_.empty() ? std::string() : " (" + fd_unavailable_ + ")"));
            }
        }
        summarize();
        // Later orders run whatever this one found: a labelled (or real)
        // failure here must not hide a wrong second derivative.
        if (o_.order > r_.order) higher_order();
        return r_;
    }

private:
    const engine& e_;
    tensors x_;
    oracle_options o_;
    rng g_;
    gradient_report r_;
    std::vector<std::size_t> wrt_, out_ids_;
    tensors y_;
    std::vector<double> y_max_;  // max |y_j|, for the value tolerance's floor
    tolerance vt_{}, gt_{};
    bool use_jvp_ = false, use_vjp_ = false, use_ref_ = false;
    std::size_t compared_jvp_ = 0, compared_vjp_ = 0, compared_jacobian_ = 0;
    std::map<std::string, bool, std::less<>> path_failed_;
    std::string fd_unavailable_;
    // Projection probes, kept for the blind-spot figure.
    std::vector<std::vector<double>> probe_u_, probe_w_;
    std::vector<double> probe_scale_;  // the tolerance each probe's scalar comparison allowed

    static compare_options relaxed() {
        compare_options c;
        c.require_same_dtype = false;
        c.nan_equal = false;
        return c;
    }
    static std::vector<std::size_t> floating_ids(const tensors& y) {
        std::vector<std::size_t> ids;
        for (std::size_t j = 0; j < y.size(); ++j) {
            if (is_floating(y[j]) && y[j].size() != 0) ids.push_back(j);  // an empty output has nothing to differentiate
        }
        return ids;
    }

    // The narrowest floating dtype among differentiated inputs and outputs sets the tolerances.
    void set_precision(const tensors& y) {
        int bits = 64;
        dtype d = dtype::f64;
        auto consider = [&](dtype t) {
            if (info(t).is_floating && static_cast<int>(info(t).bits) <= bits) {
                // Of two 16-bit types bfloat16 is the coarser.
                if (static_cast<int>(info(t).bits) < bits || t == dtype::bf16) d = t;
                bits = static_cast<int>(info(t).bits);
            }
        };
        for (const auto i : wrt_) consider(x_[i].element_dtype());
        for (const auto& t : y) consider(t.element_dtype());
        r_.precision = d;
    }

    check_entry& record(std::string what, gradient_outcome kind, std::string detail, bool excused,
                        unsigned labels = 0) {
        r_.checks.push_back({std::move(what), excused ? check_status::excused : check_status::failed, kind, labels,
                             std::move(detail)});
        return r_.checks.back();
    }
    void agreed(std::string what) { r_.checks.push_back({std::move(what), check_status::agreed, gradient_outcome::pass, 0, {}}); }

    gradient_report& summarize() {
        const check_entry* first_failed = nullptr;
        const check_entry* first_excused = nullptr;
        r_.labels = 0;
        for (const auto& c : r_.checks) {
            if (c.status == check_status::failed && first_failed == nullptr) first_failed = &c;
            if (c.status == check_status::excused) {
                if (first_excused == nullptr) first_excused = &c;
                r_.labels |= c.labels;
            }
        }
        if (const auto* c = first_failed != nullptr ? first_failed : first_excused) {
            r_.outcome = c->kind;
            r_.message = c->what + ": " + c->detail;
        } else {
            r_.outcome = r_.not_checked.empty() ? gradient_outcome::pass : gradient_outcome::not_checked;
        }
        return r_;
    }

    template <class F>
    bool call(const char* what, F&& f) {
        try {
            f();
            return true;
        } catch (const std::exception& ex) {
            record(std::string(what) + " call", gradient_outcome::exception_mismatch,
                   std::string("the value function succeeds but ") + what + " throws: " + ex.what(), false);
        } catch (...) {
            record(std::string(what) + " call", gradient_outcome::exception_mismatch,
                   std::string("the value function succeeds but ") + what + " throws a non-standard exception", false);
        }
        path_failed_[what] = true;
        return false;
    }

    gradient_report all_paths_throw(const std::string& value_error) {
        std::vector<std::string> returned;
        auto probe_call = [&](const char* what, auto&& f) {
            try {
                f();
                returned.emplace_back(what);
            } catch (...) {
            }
        };
        tensors u(x_.size());
        for (std::size_t i = 0; i < x_.size(); ++i) u[i] = x_[i];
        if (e_.jvp) probe_call("jvp", [&] { (void)jvp_of(e_, x_, u); });
        // The output shapes are unknown when the value throws: the inputs stand in as cotangents.
        if (e_.vjp) probe_call("vjp", [&] { (void)vjp_of(e_, x_, u); });
        if (e_.jacobian) probe_call("jacobian", [&] { (void)e_.jacobian(x_); });
        if (!returned.empty()) {
            std::string list;
            for (const auto& s : returned) list += (list.empty() ? "" : ", ") + s;
            record("exceptions", gradient_outcome::exception_mismatch,
                   "the value function throws (" + value_error + ") but " + list + " returned normally", false);
            return summarize();
        }
        r_.outcome = gradient_outcome::skipped;
        r_.message = "the value function and every AD path throw: " + value_error;
        return r_;
    }

    // --- structure ----------------------------------------------------------
    static std::string shape_text(const shape_type& s) { return tensoracle::to_string(s); }

    // A derivative for a differentiated slot must be there, floating, and
    // shaped like its primal; other slots may be empty. Empty string: fine.
    static std::string derivative_problem(const tensors& ds, std::size_t k, const tensor& primal, const char* slot) {
        const std::string where = std::string(slot) + " " + std::to_string(k);
        if (k >= ds.size()) return "no derivative for " + where + " (expected shape " + shape_text(primal.shape()) + ")";
        const auto& d = ds[k];
        if (d.size() == 0 && primal.size() != 0) {
            return "the derivative for " + where + " is empty (expected shape " + shape_text(primal.shape()) + ")";
        }
        if (!is_floating(d)) {
            return "the derivative for " + where + " has dtype " + std::string(tensoracle::name(d.element_dtype())) +
                   ", not a floating dtype";
        }
        if (d.shape() != primal.shape()) {
            return "the derivative for " + where + " has shape " + shape_text(d.shape()) + ", expected " +
                   shape_text(primal.shape());
        }
        return {};
    }
    bool structure_ok(const path_result& r, bool forward, int p) {
        const char* path = forward ? "jvp" : "vjp";
        std::string problem;
        // JVP derivatives are per output, VJP derivatives per input.
        if (forward) {
            for (const auto j : out_ids_) {
                if (problem.empty()) problem = derivative_problem(r.derivatives, j, y_[j], "output");
            }
        } else {
            for (const auto i : wrt_) {
                if (problem.empty()) problem = derivative_problem(r.derivatives, i, x_[i], "input");
            }
        }
        if (problem.empty()) return true;
        record("probe " + std::to_string(p) + ": " + path + " result", gradient_outcome::malformed_derivative,
               std::string(path) + " " + problem, false);
        path_failed_[path] = true;
        return false;
    }

    bool outputs_consistent(const tensors& got, const char* what, int p) {
        const std::string label = "probe " + std::to_string(p) + ": " + what + " outputs vs value";
        if (got.size() != y_.size()) {
            record(label, gradient_outcome::output_inconsistent,
                   std::string(what) + " returned " + std::to_string(got.size()) + " outputs, the value function " +
                       std::to_string(y_.size()),
                   false);
            return false;
        }
        for (std::size_t j = 0; j < y_.size(); ++j) {
            // The absolute floor scales with the output's magnitude: a fixed floor
            // would let small outputs computed at a lower precision pass.
            const tolerance t = is_floating(y_[j])
                                    ? tolerance{vt_.atol * std::max(y_max_[j], std::numeric_limits<double>::min()), vt_.rtol}
                                    : tolerance{};
            if (got[j].element_dtype() == y_[j].element_dtype() && quick_close(got[j], y_[j], t)) continue;
            auto same_values = relaxed();
            same_values.nan_equal = true;  // a NaN the value function returns is the same NaN here
            auto cmp = compare(got[j], y_[j], same_values);
            if (!cmp.passes(t) || (is_floating(y_[j]) && got[j].element_dtype() != y_[j].element_dtype())) {
                const bool dtype_differs = got[j].element_dtype() != y_[j].element_dtype();
                if (!r_.comparison) {
                    r_.comparison = std::move(cmp);
                    r_.used = t;
                }
                record(label, gradient_outcome::output_inconsistent,
                       "output " + std::to_string(j) + " returned by " + what + " differs from the value function's" +
                           (dtype_differs ? " (dtype " + std::string(tensoracle::name(got[j].element_dtype())) + " vs " +
                                                std::string(tensoracle::name(y_[j].element_dtype())) + ")"
                                          : std::string()),
                       false);
                return false;
            }
        }
        return true;
    }

    // --- the function for finite differences ---------------------------------
    std::function<std::vector<double>(std::span<const double>)> fd_function(const tensors& x) const {
        tensors base = x;
        for (const auto i : wrt_) base[i] = x[i].cast(dtype::f64);
        return [this, base](std::span<const double> flatx) {
            tensors xi = base;
            std::size_t off = 0;
            for (const auto i : wrt_) {
                auto a = array<double>::from_shape(base[i].shape());
                std::copy(flatx.begin() + static_cast<std::ptrdiff_t>(off),
                          flatx.begin() + static_cast<std::ptrdiff_t>(off + a.size()), a.data());
                off += a.size();
                xi[i] = tensor(a);
            }
            return flat_floating(e_.value(xi));
        };
    }
    std::vector<double> fd_along(const tensors& x, const tensors& u, const fd_options& fo) const {
        const auto f = fd_function(x);
        const auto x0 = flat(x, wrt_), uf = flat(u, wrt_);
        return fd_directional<double>(f, std::span<const double>(x0), std::span<const double>(uf), fo).derivative;
    }
    // What rounding the outputs to their dtype adds to a wide-stencil
    // difference quotient, times its step: sum|weights|·(u/2)·max|y|.
    double fd_rounding_times_step() const {
        dtype narrowest = r_.precision;
        for (const auto j : out_ids_) {
            if (unit_roundoff(y_[j].element_dtype()) > unit_roundoff(narrowest)) narrowest = y_[j].element_dtype();
        }
        const auto cw = weights(o_.fd.kind);
        double wsum = 0.0;
        for (int k = 0; k < cw.n; ++k) wsum += std::fabs(cw.w[static_cast<std::size_t>(k)]);
        return wsum * unit_roundoff(narrowest) * *std::max_element(y_max_.begin(), y_max_.end());
    }
    // That rounding in a difference quotient along u.
    double fd_rounding_noise(const tensors& u) const {
        const auto x0 = flat(x_, wrt_), uf = flat(u, wrt_);
        double xmax = 0.0;
        for (std::size_t k = 0; k < x0.size(); ++k) {
            if (uf[k] != 0) xmax = std::max(xmax, std::fabs(x0[k]));
        }
        const double umax = std::max(max_abs(uf), std::numeric_limits<double>::min());
        const double step = o_.fd.step.step(xmax) / umax;
        return fd_rounding_times_step() / step;
    }

    // --- one probe ------------------------------------------------------------
    struct probe_data {
        tensors u, w;
        std::optional<path_result> fwd, rev;
        std::vector<double> ju, jtw, uf, wf;
    };
    // Random directions u and cotangents w at inputs x with outputs y (x_, y_ by default).
    probe_data draw_probe() { return draw_probe(x_, y_); }
    probe_data draw_probe(const tensors& x, const tensors& y) {
        probe_data d;
        d.u.resize(x.size());
        d.w.resize(y.size());
        for (const auto i : wrt_) d.u[i] = random_like(g_, x[i]);
        for (const auto j : out_ids_) d.w[j] = random_like(g_, y[j]);
        d.uf = flat(d.u, wrt_);
        d.wf = flat(d.w, out_ids_);
        return d;
    }
    std::vector<double> flat_outputs(const tensors& ds) const {
        std::vector<double> v;
        for (const auto j : out_ids_) {
            const auto a = ds[j].to<double>();
            v.insert(v.end(), a.begin(), a.end());
        }
        return v;
    }

    void probe(int p) {
        auto d = draw_probe();
        const std::string tag = "probe " + std::to_string(p) + ": ";
        if (use_jvp_ && call("jvp", [&] { d.fwd = jvp_of(e_, x_, d.u); })) {
            if (!structure_ok(*d.fwd, true, p) || !outputs_consistent(d.fwd->outputs, "jvp", p)) {
                use_jvp_ = false;
                d.fwd.reset();
            }
        } else if (use_jvp_) {
            use_jvp_ = false;
        }
        if (use_vjp_ && call("vjp", [&] { d.rev = vjp_of(e_, x_, d.w); })) {
            if (!structure_ok(*d.rev, false, p) || !outputs_consistent(d.rev->outputs, "vjp", p)) {
                use_vjp_ = false;
                d.rev.reset();
            }
        } else if (use_vjp_) {
            use_vjp_ = false;
        }
        if (d.fwd) d.ju = flat_outputs(d.fwd->derivatives);
        if (d.rev) d.jtw = flat(d.rev->derivatives, wrt_);
        if (d.fwd && d.rev) {
            const double a = dot(d.ju, d.wf), b = dot(d.uf, d.jtw);
            const std::string what = tag + "<Ju, w> (jvp) vs <u, J^T w> (vjp)";
            ++compared_jvp_;  // compared, whatever the verdict
            ++compared_vjp_;
            if (scalar_close(a, b, std::max(abs_dot(d.ju, d.wf), abs_dot(d.uf, d.jtw)), gt_)) {
                agreed(what);
            } else {
                judge(what, gradient_outcome::reverse_forward_mismatch,
                      "<Ju, w> = " + fmt(a) + " but <u, J^T w> = " + fmt(b), d, std::nullopt);
            }
        }
        if (use_ref_) reference_checks(d, tag);
        // Finite differences in float64: the accurate wide stencil first; where it
        // disagrees, a second opinion from the fine stencil (a wide stencil that
        // straddles a kink next to x is wrong about a derivative that is right at x).
        if (!d.fwd && !d.rev) return;
        std::vector<double> fd;
        try {
            fd = fd_along(x_, d.u, o_.fd);
            if (!fd_agrees(d, fd, gt_)) {
                const auto fine = fd_along(x_, d.u, o_.fine_fd);
                if (fd_agrees(d, fine, gt_)) {
                    r_.log.push_back(tag + "the wide stencil disagrees, the fine one agrees (a kink within the wide step)");
                    fd = fine;
                }
            }
        } catch (const std::exception& ex) {
            fd_unavailable_ = std::string("finite differences unavailable: ") + ex.what();
            r_.log.push_back(tag + fd_unavailable_);
            return;
        }
        if (d.fwd) {
            const std::string what = tag + "Ju (jvp) vs finite differences";
            ++compared_jvp_;
            if (quick_close(d.ju, fd, gt_)) {
                agreed(what);
            } else {
                auto cmp = compare(vector_tensor(d.ju), vector_tensor(fd), relaxed());
                probe_data only = d;  // the filters judge this comparison alone
                only.rev.reset();
                only.jtw.clear();
                judge(what, gradient_outcome::gradient_fd_mismatch,
                      "Ju (jvp) differs from finite differences (actual: jvp, expected: FD, flattened over outputs)", only,
                      std::move(cmp), &fd);
            }
        }
        if (d.rev) {
            const double a = dot(fd, d.wf), b = dot(d.uf, d.jtw);
            const double scale = std::max(abs_dot(fd, d.wf), abs_dot(d.uf, d.jtw));
            probe_u_.push_back(d.uf);
            probe_w_.push_back(d.wf);
            probe_scale_.push_back(gt_.atol + gt_.rtol * scale);
            const std::string what = tag + "<u, J^T w> (vjp) vs finite differences";
            ++compared_vjp_;
            if (scalar_close(b, a, scale, gt_)) {
                agreed(what);
            } else {
                probe_data only = d;
                only.fwd.reset();
                only.ju.clear();
                judge(what, gradient_outcome::gradient_fd_mismatch,
                      "<u, J^T w> = " + fmt(b) + " but finite differences give " + fmt(a), only, std::nullopt, &fd);
            }
        }
    }

    // AD vs FD at tolerance t widened by `noise` (absolute, per output element; empty: none).
    bool fd_agrees(const probe_data& d, const std::vector<double>& fd, tolerance t,
                   const std::vector<double>& noise = {}) const {
        if (d.fwd) {
            if (d.ju.size() != fd.size()) return false;
            for (std::size_t k = 0; k < fd.size(); ++k) {
                const double allowed = t.atol + t.rtol * std::fabs(fd[k]) + (noise.empty() ? 0.0 : noise[k]);
                if (!(std::fabs(d.ju[k] - fd[k]) <= allowed)) return false;
            }
        }
        if (!d.rev) return true;
        const double extra = noise.empty() ? 0.0 : abs_dot(noise, d.wf);
        return scalar_close(dot(d.uf, d.jtw), dot(fd, d.wf), std::max(abs_dot(fd, d.wf), abs_dot(d.uf, d.jtw)),
                            {t.atol + extra, t.rtol});
    }

    // How far finite differences along u can be trusted when the outputs are
    // rounded (or computed) below float64: the rounding of the outputs divided
    // by the step, or the spread between the stencil at steps h, 2h and h/2
    // (Richardson's check: a resolved derivative does not move with the step),
    // whichever is larger. Per output element.
    std::vector<double> fd_noise(const tensors& x, const tensors& u, const std::vector<double>& fd) const {
        std::vector<double> noise(fd.size(), fd_rounding_noise(u));
        for (const double factor : {2.0, 0.5, 0.25}) {
            fd_options fo = o_.fd;
            fo.step.scale *= factor;
            try {
                const auto other = fd_along(x, u, fo);
                for (std::size_t k = 0; k < noise.size() && k < other.size(); ++k) {
                    noise[k] = std::max(noise[k], 2.0 * std::fabs(other[k] - fd[k]));
                }
            } catch (const std::exception&) {
            }
        }
        return noise;
    }

    void reference_checks(const probe_data& d, const std::string& tag) {
        const auto& ref = o_.reference;
        if (d.fwd && ref.jvp) {
            path_result rr;
            try {
                rr = jvp_of(ref, x_, d.u);
            } catch (const std::exception& ex) {
                r_.log.push_back(tag + "the reference's jvp throws: " + ex.what());
                return;
            }
            compare_per_slot(tag + "jvp vs reference, element by element", d.fwd->derivatives, rr.derivatives, out_ids_,
                             d, true);
        }
        if (d.rev && ref.vjp) {
            path_result rr;
            try {
                rr = vjp_of(ref, x_, d.w);
            } catch (const std::exception& ex) {
                r_.log.push_back(tag + "the reference's vjp throws: " + ex.what());
                return;
            }
            compare_per_slot(tag + "vjp vs reference, element by element", d.rev->derivatives, rr.derivatives, wrt_, d,
                             false);
        }
    }
    void compare_per_slot(const std::string& what, const tensors& got, const tensors& want,
                          const std::vector<std::size_t>& ids, const probe_data& d, bool forward) {
        ++(forward ? compared_jvp_ : compared_vjp_);
        for (const auto k : ids) {
            if (k >= want.size() || want[k].size() == 0) continue;
            if (quick_close(got[k], want[k], gt_)) continue;
            auto cmp = compare(got[k], want[k], relaxed());
            if (!cmp.passes(gt_)) {
                judge(what + " (" + (forward ? "output " : "input ") + std::to_string(k) + ")",
                      gradient_outcome::reference_mismatch,
                      std::to_string(cmp.mismatch_count(gt_)) + " of " + std::to_string(cmp.size()) +
                          " elements differ from the reference",
                      d, std::move(cmp));
                return;
            }
        }
        agreed(what);
    }

    // --- filters: a label excuses only the comparison it explains --------------
    void judge(const std::string& what, gradient_outcome kind, std::string detail, const probe_data& d,
               std::optional<comparison_report> cmp, const std::vector<double>* fd = nullptr) {
        unsigned labels = 0;
        bool excused = false;
        // An infinite derivative (Acos at 1) agrees with finite differences that
        // grow without bound as the step shrinks (same sign, the fine stencil at
        // least 10x the wide one); the other elements must still agree.
        if (fd != nullptr && d.rev && !d.fwd && std::any_of(d.jtw.begin(), d.jtw.end(), [](double v) { return std::isinf(v); })) {
            try {
                const double a = dot(d.uf, d.jtw), wide = dot(*fd, d.wf), fine = dot(fd_along(x_, d.u, o_.fine_fd), d.wf);
                if (std::isinf(a) && std::signbit(a) == std::signbit(fine) && std::fabs(fine) >= 10.0 * std::fabs(wide)) {
                    record(what, kind, detail + "; infinite slope where finite differences grow without bound", true,
                           static_cast<unsigned>(filter_label::non_differentiable_point));
                    return;
                }
            } catch (const std::exception&) {
            }
        }
        if (fd != nullptr && d.fwd && std::any_of(d.ju.begin(), d.ju.end(), [](double v) { return std::isinf(v); })) {
            try {
                const auto fine = fd_along(x_, d.u, o_.fine_fd);
                probe_data rest = d;
                rest.rev.reset();
                bool slopes = true;
                std::vector<double> ref = *fd;
                for (std::size_t k = 0; k < rest.ju.size() && k < ref.size(); ++k) {
                    if (!std::isinf(rest.ju[k])) continue;
                    slopes = slopes && std::signbit(fine[k]) == std::signbit(rest.ju[k]) &&
                             std::fabs(fine[k]) >= 10.0 * std::fabs(ref[k]);
                    rest.ju[k] = ref[k] = 0.0;
                }
                if (slopes && fd_agrees(rest, ref, gt_, computed_below_f64() ? fd_noise(x_, d.u, *fd) : std::vector<double>{})) {
                    labels |= static_cast<unsigned>(filter_label::non_differentiable_point);
                    record(what, kind, detail + "; infinite slope where finite differences grow without bound", true,
                           labels);
                    return;
                }
            } catch (const std::exception&) {
            }
        }
        // NaN in a derivative is explained only where the function itself is not
        // finite (the value, or finite differences of it).
        const bool ad_nan = any_nan(d.ju) || any_nan(d.jtw);
        if (ad_nan) {
            const auto yv = flat_floating(y_);
            const bool value_bad = std::any_of(yv.begin(), yv.end(), [](double v) { return !std::isfinite(v); });
            bool fd_bad = false;
            if (fd != nullptr) {
                for (std::size_t k = 0; k < d.ju.size() && k < fd->size(); ++k) {
                    if (std::isnan(d.ju[k]) && !std::isfinite((*fd)[k])) fd_bad = true;
                }
                if (!d.jtw.empty() && any_nan(d.jtw) && !std::isfinite(dot(*fd, d.wf))) fd_bad = true;
            }
            if (value_bad || fd_bad) {
                labels |= static_cast<unsigned>(filter_label::nan_in_gradient);
                excused = true;
            } else {
                detail += "; NaN in the derivative where the value and finite differences are finite";
            }
        }
        // Outputs rounded to a narrower dtype: finite differences carry that
        // rounding divided by the step. Excused only within that noise.
        if (!excused && !ad_nan && fd != nullptr && kind == gradient_outcome::gradient_fd_mismatch &&
            computed_below_f64()) {
            const auto noise = fd_noise(x_, d.u, *fd);
            if (fd_agrees(d, *fd, gt_, noise)) {
                labels |= static_cast<unsigned>(filter_label::precision_conversion);
                excused = true;
            } else {
                detail += "; beyond the finite differences' rounding noise (up to " + fmt(max_abs(noise)) +
                          ") of the narrower outputs";
            }
        }
        // Near a kink: re-check at points nudged off it.
        // (A NaN derivative at a kink counts too: the kink explains it when it is gone off the kink.)
        if (!excused && near_a_kink(d.u)) {
            if (agrees_off_the_kink()) {
                labels |= static_cast<unsigned>(filter_label::non_differentiable_point);
                excused = true;
            } else {
                detail += "; x is next to a non-differentiable point, but the disagreement persists at points nudged off it";
            }
        }
        if (cmp && !r_.comparison && !excused) r_.comparison = std::move(cmp);
        record(what, kind, std::move(detail), excused, labels);
    }

    // Finite differences run in float64; a function computed or rounded below
    // that (float32 inputs, or narrower outputs) carries its rounding into them.
    bool computed_below_f64() const {
        if (r_.precision != dtype::f64) return true;
        for (const auto j : out_ids_) {
            if (y_[j].element_dtype() != dtype::f64) return true;
        }
        return false;
    }

    // Along u, or along two fresh directions: one direction can miss a kink
    // (a tie between two elements u happens to move alike).
    bool near_a_kink(const tensors& u) {
        if (non_differentiable_here(u)) return true;
        for (int k = 0; k < 2; ++k) {
            tensors v(x_.size());
            for (const auto i : wrt_) v[i] = random_like(g_, x_[i]);
            if (non_differentiable_here(v)) return true;
        }
        return false;
    }

    // ∇Fuzz's filter: numerical derivatives along u at x and at N neighbours
    // x + U(-r, r); if they do not all agree, x sits at (or next to) a point
    // where the function is not differentiable.
    bool non_differentiable_here(const tensors& u) {
        if (o_.neighbours <= 0) return false;
        try {
            const auto f = fd_function(x_);
            const auto x0 = flat(x_, wrt_), uf = flat(u, wrt_);
            std::vector<std::vector<double>> ds;
            ds.push_back(fd_directional<double>(f, std::span<const double>(x0), std::span<const double>(uf),
                                                o_.neighbour_fd)
                             .derivative);
            for (int k = 0; k < o_.neighbours; ++k) {
                auto xn = x0;
                for (auto& v : xn) v += g_.uniform(-o_.neighbour_radius, o_.neighbour_radius);
                ds.push_back(fd_directional<double>(f, std::span<const double>(xn), std::span<const double>(uf),
                                                    o_.neighbour_fd)
                                 .derivative);
            }
            const tolerance t = o_.neighbour_tolerance;
            for (std::size_t a = 0; a < ds.size(); ++a) {
                for (std::size_t b = a + 1; b < ds.size(); ++b) {
                    if (!quick_close(ds[a], ds[b], t)) return true;
                }
            }
        } catch (const std::exception&) {
            return true;  // undefined right next to x: an edge of the domain
        }
        return false;
    }

    // Every comparison this probe makes, at x nudged off the kink with fresh
    // directions; a disagreement the kink caused is gone at one of them.
    bool agrees_off_the_kink() {
        // A nudge off a domain edge (Acos at 1) lands outside the domain: up to
        // four times as many tries as `nudges`, counting only nudges that land inside.
        int landed = 0;
        for (int k = 0; k < 4 * o_.nudges && landed < o_.nudges; ++k) {
            tensors xn = x_;
            for (const auto i : wrt_) {
                auto a = x_[i].to<double>();
                // At least a few units of the input's precision, or the nudge rounds away.
                const double r = std::max(o_.nudge_radius, 8.0 * unit_roundoff(x_[i].element_dtype()));
                for (auto& v : a) v += g_.uniform(-r, r) * std::max(1.0, std::fabs(v));
                xn[i] = tensor(a).cast(x_[i].element_dtype());
            }
            try {
                const auto yv = flat_floating(e_.value(xn));
                if (std::any_of(yv.begin(), yv.end(), [](double v) { return !std::isfinite(v); })) continue;
            } catch (const std::exception&) {
                continue;
            }
            ++landed;
            if (agrees_at(xn)) return true;
        }
        return false;
    }
    bool agrees_at(const tensors& xn) {
        try {
            const auto yn = e_.value(xn);
            auto d = draw_probe(xn, yn);
            if (e_.jvp) {
                d.fwd = jvp_of(e_, xn, d.u);
                d.ju = flat_outputs(d.fwd->derivatives);
            }
            if (e_.vjp) {
                d.rev = vjp_of(e_, xn, d.w);
                d.jtw = flat(d.rev->derivatives, wrt_);
            }
            if (d.fwd && d.rev &&
                !scalar_close(dot(d.ju, d.wf), dot(d.uf, d.jtw), std::max(abs_dot(d.ju, d.wf), abs_dot(d.uf, d.jtw)), gt_)) {
                return false;
            }
            if (use_ref_) {
                if (d.fwd && o_.reference.jvp) {
                    const auto rr = jvp_of(o_.reference, xn, d.u);
                    for (const auto j : out_ids_) {
                        if (!quick_close(d.fwd->derivatives[j], rr.derivatives[j], gt_) &&
                            !compare(d.fwd->derivatives[j], rr.derivatives[j], relaxed()).passes(gt_)) {
                            return false;
                        }
                    }
                }
                if (d.rev && o_.reference.vjp) {
                    const auto rr = vjp_of(o_.reference, xn, d.w);
                    for (const auto i : wrt_) {
                        if (!quick_close(d.rev->derivatives[i], rr.derivatives[i], gt_) &&
                            !compare(d.rev->derivatives[i], rr.derivatives[i], relaxed()).passes(gt_)) {
                            return false;
                        }
                    }
                }
            }
            if (e_.jacobian && !e_.jvp && !e_.vjp) {
                d.ju = jacobian_times(e_.jacobian(xn), xn, yn, d.u);
                d.fwd = path_result{};
            }
            const bool noisy = computed_below_f64();
            for (const auto* fo : {&o_.fd, &o_.fine_fd}) {
                const auto fd = fd_along(xn, d.u, *fo);
                if (fd_agrees(d, fd, gt_, noisy ? fd_noise(xn, d.u, fd) : std::vector<double>{})) return true;
            }
            return false;
        } catch (const std::exception&) {
            return false;
        }
    }

    // --- the engine's full Jacobian ---------------------------------------------
    // Blocks are o-major, one per (output, input), shaped out_shape ++ in_shape.
    std::string block_problem(const jacobian_blocks& js, const tensors& y) const {
        if (js.outputs() != y.size() || js.inputs() != x_.size()) {
            return "returned " + std::to_string(js.outputs()) + " x " + std::to_string(js.inputs()) +
                   " Jacobian blocks, expected " + std::to_string(y.size()) + " x " + std::to_string(x_.size()) +
                   " (outputs x inputs)";
        }
        for (const auto j : out_ids_) {
            for (const auto i : wrt_) {
                const auto& b = js.block(j, i);
                shape_type want = y[j].shape();
                want.insert(want.end(), x_[i].shape().begin(), x_[i].shape().end());
                if (!is_floating(b) || b.shape() != want) {
                    return "the block for output " + std::to_string(j) + ", input " + std::to_string(i) +
                           " has shape " + shape_text(b.shape()) + " and dtype " +
                           std::string(tensoracle::name(b.element_dtype())) + ", expected a floating " + shape_text(want);
                }
            }
        }
        return {};
    }
    // J·u, flattened over the floating outputs.
    std::vector<double> jacobian_times(const jacobian_blocks& js, const tensors& x, const tensors& y, const tensors& u) const {
        std::vector<double> out;
        for (const auto j : out_ids_) {
            std::vector<double> acc(y[j].size(), 0.0);
            for (const auto i : wrt_) {
                const auto b = js.block(j, i).to<double>();
                const auto ui = u[i].to<double>();
                const std::size_t n = x[i].size();
                for (std::size_t a = 0; a < acc.size(); ++a) {
                    double s = 0.0;
                    for (std::size_t c = 0; c < n; ++c) s += b.data()[a * n + c] * ui.data()[c];
                    acc[a] += s;
                }
            }
            out.insert(out.end(), acc.begin(), acc.end());
        }
        return out;
    }

    // A provided jacobian() is always checked: fully against finite differences
    // when small (full_jacobians), else by J·u along random directions.
    void jacobian_path() {
        if (!e_.jacobian) return;
        jacobian_blocks js;
        if (!call("jacobian", [&] { js = e_.jacobian(x_); })) return;
        if (const auto problem = block_problem(js, y_); !problem.empty()) {
            record("jacobian result", gradient_outcome::malformed_derivative, "jacobian " + problem, false);
            path_failed_["jacobian"] = true;
            return;
        }
        jacobian_ = js;
        if (small()) return;  // compared in full below
        for (int p = 0; p < o_.probes; ++p) {
            auto d = draw_probe();
            d.ju = jacobian_times(js, x_, y_, d.u);
            d.fwd = path_result{};
            const std::string tag = "probe " + std::to_string(p) + ": J u (jacobian) ";
            if (use_jvp_) {
                path_result fr;
                if (call("jvp", [&] { fr = jvp_of(e_, x_, d.u); }) && structure_ok(fr, true, p)) {
                    auto cmp = compare(vector_tensor(d.ju), vector_tensor(flat_outputs(fr.derivatives)), relaxed());
                    ++compared_jacobian_;
                    if (cmp.passes(gt_)) {
                        agreed(tag + "vs jvp");
                    } else {
                        judge(tag + "vs jvp", gradient_outcome::reverse_forward_mismatch,
                              "the Jacobian times u differs from the jvp along u", d, std::move(cmp));
                    }
                }
            }
            std::vector<double> fd;
            try {
                fd = fd_along(x_, d.u, o_.fd);
                if (!fd_agrees(d, fd, gt_)) {
                    const auto fine = fd_along(x_, d.u, o_.fine_fd);
                    if (fd_agrees(d, fine, gt_)) fd = fine;
                }
            } catch (const std::exception& ex) {
                fd_unavailable_ = std::string("finite differences unavailable: ") + ex.what();
                continue;
            }
            auto cmp = compare(vector_tensor(d.ju), vector_tensor(fd), relaxed());
            ++compared_jacobian_;
            if (cmp.passes(gt_)) {
                agreed(tag + "vs finite differences");
            } else {
                judge(tag + "vs finite differences", gradient_outcome::gradient_fd_mismatch,
                      "the Jacobian times u differs from finite differences along u", d, std::move(cmp), &fd);
            }
        }
    }

    [[nodiscard]] bool small() const {
        std::size_t n = 0, m = 0;
        for (const auto i : wrt_) n += x_[i].size();
        for (const auto j : out_ids_) m += y_[j].size();
        return n <= o_.full_jacobian_limit && m <= o_.full_jacobian_limit;
    }

    void full_jacobians() {
        if (!small()) return;
        std::size_t n = 0, m = 0;
        for (const auto i : wrt_) n += x_[i].size();
        for (const auto j : out_ids_) m += y_[j].size();
        std::vector<double> jfd;
        try {
            const auto f = fd_function(x_);
            const auto x0 = flat(x_, wrt_);
            jfd = fd_jacobian<double>(f, std::span<const double>(x0), o_.fd);
        } catch (const std::exception& ex) {
            fd_unavailable_ = std::string("full finite-difference Jacobian unavailable: ") + ex.what();
            r_.log.push_back(fd_unavailable_);
            return;
        }
        std::vector<double> jfine;  // the fine stencil's Jacobian, computed on first need
        auto check = [&](const std::vector<double>& jad, const char* what, std::size_t& counter) {
            auto cmp = compare(vector_tensor(jad), vector_tensor(jfd), relaxed());
            if (!cmp.passes(gt_)) {
                try {
                    if (jfine.empty()) {
                        const auto x0 = flat(x_, wrt_);
                        jfine = fd_jacobian<double>(fd_function(x_), std::span<const double>(x0), o_.fine_fd);
                    }
                    auto fine = compare(vector_tensor(jad), vector_tensor(jfine), relaxed());
                    if (fine.passes(gt_)) cmp = std::move(fine);
                } catch (const std::exception&) {
                }
            }
            const std::string label = std::string("full ") + std::to_string(m) + "x" + std::to_string(n) +
                                      " Jacobian by " + what + " vs finite differences";
            ++counter;
            if (cmp.passes(gt_)) {
                agreed(label);
                return;
            }
            if (computed_below_f64() && !any_nan(jad)) {
                // Column c of the FD Jacobian carries the outputs' rounding divided by its step.
                const auto x0 = flat(x_, wrt_);
                const double noise = fd_rounding_times_step();
                std::vector<double> spread(jfd.size(), 0.0);  // Richardson: the stencil at 2h and h/2
                for (const double factor : {2.0, 0.5}) {
                    fd_options fo = o_.fd;
                    fo.step.scale *= factor;
                    try {
                        const auto other = fd_jacobian<double>(fd_function(x_), std::span<const double>(x0), fo);
                        for (std::size_t e = 0; e < spread.size() && e < other.size(); ++e) {
                            spread[e] = std::max(spread[e], 2.0 * std::fabs(other[e] - jfd[e]));
                        }
                    } catch (const std::exception&) {
                    }
                }
                bool within = true;
                for (std::size_t e = 0; e < jad.size() && within; ++e) {
                    const double allowed = gt_.atol + gt_.rtol * std::fabs(jfd[e]) +
                                           std::max(noise / o_.fd.step.step(x0[e % n]), spread[e]);
                    within = std::fabs(jad[e] - jfd[e]) <= allowed;
                }
                if (within) {
                    record(label, gradient_outcome::gradient_fd_mismatch,
                           "within the finite differences' rounding noise of the narrower outputs", true,
                           static_cast<unsigned>(filter_label::precision_conversion));
                    return;
                }
            }
            probe_data d = draw_probe();
            d.ju = jad;  // NaN screening looks at the derivative itself
            judge(label, gradient_outcome::gradient_fd_mismatch,
                  "row-major m x n, m = " + std::to_string(m) + " output elements, n = " + std::to_string(n) +
                      " input elements",
                  d, std::move(cmp));
        };
        if (use_jvp_) {  // column j = J e_j
            std::vector<double> jad(m * n, 0.0);
            std::size_t col = 0;
            for (const auto i : wrt_) {
                for (std::size_t k = 0; k < x_[i].size(); ++k, ++col) {
                    tensors u(x_.size());
                    for (const auto i2 : wrt_) u[i2] = tensor::zeros(x_[i2].element_dtype(), x_[i2].shape());
                    u[i] = unit(x_[i], k);
                    std::optional<path_result> r;
                    if (!call("jvp", [&] { r = jvp_of(e_, x_, u); })) return;
                    if (!structure_ok(*r, true, -1)) return;
                    const auto c = flat_outputs(r->derivatives);
                    for (std::size_t row = 0; row < m && row < c.size(); ++row) jad[row * n + col] = c[row];
                }
            }
            check(jad, "jvp columns", compared_jvp_);
        }
        if (use_vjp_) {  // row i = e_iᵀ J
            std::vector<double> jad(m * n, 0.0);
            std::size_t row = 0;
            for (const auto j : out_ids_) {
                for (std::size_t k = 0; k < y_[j].size(); ++k, ++row) {
                    tensors w(y_.size());
                    for (const auto j2 : out_ids_) w[j2] = tensor::zeros(y_[j2].element_dtype(), y_[j2].shape());
                    w[j] = unit(y_[j], k);
                    std::optional<path_result> r;
                    if (!call("vjp", [&] { r = vjp_of(e_, x_, w); })) return;
                    if (!structure_ok(*r, false, -1)) return;
                    const auto rr = flat(r->derivatives, wrt_);
                    for (std::size_t c = 0; c < n && c < rr.size(); ++c) jad[row * n + c] = rr[c];
                }
            }
            check(jad, "vjp rows", compared_vjp_);
        }
        if (jacobian_) {
            std::vector<double> jad(m * n, 0.0);
            std::size_t row0 = 0;
            for (const auto j : out_ids_) {
                std::size_t col0 = 0;
                for (const auto i : wrt_) {
                    const auto v = jacobian_->block(j, i).to<double>();
                    for (std::size_t a = 0; a < y_[j].size(); ++a) {
                        for (std::size_t b = 0; b < x_[i].size(); ++b) {
                            jad[(row0 + a) * n + col0 + b] = v.data()[a * x_[i].size() + b];
                        }
                    }
                    col0 += x_[i].size();
                }
                row0 += y_[j].size();
            }
            check(jad, "jacobian()", compared_jacobian_);
        }
    }
    std::optional<jacobian_blocks> jacobian_;

    // The smallest single-element error in Jᵀw that every VJP probe could have
    // missed: element k moves <u, Jᵀw> by u_k·δ, caught once that exceeds the
    // probe's tolerance; the worst element is the one all probes weigh least.
    void blind_spot() {
        if (small() || use_ref_ || probe_u_.empty()) return;
        double worst = 0.0;
        for (std::size_t k = 0; k < probe_u_[0].size(); ++k) {
            double best = std::numeric_limits<double>::infinity();
            for (std::size_t p = 0; p < probe_u_.size(); ++p) {
                const double uk = std::fabs(probe_u_[p][k]);
                if (uk > 0) best = std::min(best, probe_scale_[p] / uk);
            }
            worst = std::max(worst, best);
        }
        r_.projection_blind_spot = worst;
    }

    static tensor unit(const tensor& like, std::size_t k) {
        auto a = array<double>::from_shape(like.shape());
        std::fill(a.begin(), a.end(), 0.0);
        a.data()[k] = 1.0;
        return tensor(a).cast(like.element_dtype());
    }

    void higher_order() {
        if (!e_.gradient) {
            r_.not_checked.push_back("order " + std::to_string(r_.order + 1) + ": the engine has no gradient()");
            if (r_.outcome == gradient_outcome::pass) r_.outcome = gradient_outcome::not_checked;
            return;
        }
        tensors w(y_.size());
        for (const auto j : out_ids_) w[j] = random_like(g_, y_[j]);
        engine e2;
        try {
            e2 = e_.gradient(w);
        } catch (const std::exception& ex) {
            record("gradient(w) call", gradient_outcome::exception_mismatch, std::string("gradient(w) throws: ") + ex.what(),
                   false);
            summarize();
            return;
        }
        oracle_options o2 = o_;
        o2.seed = o_.seed * 31 + 7;
        o2.reference = engine{};
        if (o_.reference.gradient) {
            try {
                o2.reference = o_.reference.gradient(w);
            } catch (const std::exception& ex) {
                r_.log.push_back(std::string("the reference's gradient(w) throws: ") + ex.what());
            }
        }
        checker next(e2, x_, o2, r_.order + 1);
        // The gradient has one output per input; only the differentiated ones are compared.
        r_.higher.push_back(next.run());
    }
};

}  // namespace detail

/// Runs the oracle on engine e at inputs x. The report's failed() is what a
/// test should assert on: a failure a filter explains is reported as excused,
/// and fully_checked() says whether every provided path was compared.
[[nodiscard]] inline gradient_report check_gradients(const engine& e, const tensors& x, const oracle_options& o = {}) {
    return detail::checker(e, x, o, 1).run();
}

}  // namespace tensoracle::ad
// ---- end tensoracle/ad/oracle.hpp ----

namespace tensoracle::ad {

/// Inputs up to this many elements get second-order VJPs forward-over-forward.
inline constexpr std::size_t forward_over_forward_limit = 64;

namespace detail {
// An absent optional input is passed as a default tensor (float32, shape [0]).
inline std::vector<const tensor*> pointers(const tensors& x) {
    std::vector<const tensor*> p;
    for (const auto& t : x) {
        const bool absent = t.element_dtype() == dtype::f32 && t.rank() == 1 && t.shape()[0] == 0;
        p.push_back(absent ? nullptr : &t);
    }
    while (!p.empty() && p.back() == nullptr) p.pop_back();
    return p;
}

template <class V>
std::vector<array<V>> lifted(const spec::context& c, const tensors& x, const std::vector<std::size_t>& ids) {
    std::vector<array<V>> xs(c.input_count(), empty_array<V>());
    for (const auto i : ids) xs[i] = lift<V>(x[i]);
    return xs;
}

// Outputs: values rounded to the op's output dtypes; non-floating outputs
// (indices, masks) from a plain run, made only when there are some.
template <class V>
tensors outputs_of(const std::vector<array<V>>& values, const std::vector<dtype>& dtypes, const spec::op_entry& op,
                   const std::vector<const tensor*>& args, const spec::attribute_map& attributes) {
    tensors out, plain;
    for (std::size_t o = 0; o < dtypes.size(); ++o) {
        if (info(dtypes[o]).is_floating && o < values.size() && !is_empty(values[o])) {
            out.push_back(lower(values[o], dtypes[o]));
        } else {
            if (plain.empty()) plain = spec::evaluate(op, args, attributes);
            out.push_back(plain[o]);
        }
    }
    return out;
}

// Output cotangents as arrays of W; an entry that is absent, not floating or
// misshapen counts as zero (empty).
template <class W>
std::vector<array<W>> cotangents(const tensors& w, const std::vector<dtype>& dtypes,
                                 const std::vector<shape_type>* shapes = nullptr) {
    std::vector<array<W>> ws;
    for (std::size_t o = 0; o < dtypes.size(); ++o) {
        const bool given = o < w.size() && w[o].size() != 0 && info(dtypes[o]).is_floating &&
                           (shapes == nullptr || w[o].shape() == (*shapes)[o]);
        ws.push_back(given ? lift<W>(w[o]) : empty_array<W>());
    }
    return ws;
}

/// The engine of one op instance, from its entry and its rules in V and
/// dual<V>. The engine keeps pointers to the three: both callers pass objects
/// that live as long as the program (function-local statics, the registry).
template <class V>
[[nodiscard]] engine make_op_engine(const spec::op_entry* op, const derivative_rules<V>* rules,
                                    const derivative_rules<dual<V>>* rules2, spec::attribute_map attributes) {
    engine e;
    e.value = [op, attributes](const tensors& x) { return spec::evaluate(*op, pointers(x), attributes); };
    e.jvp = [op, attributes, rules](const tensors& x, const tensors& u) {
        const auto args = pointers(x);
        const auto c = make_context(*op, args, attributes);
        const auto dtypes = op->output_dtypes(c);
        const auto ids = rules->differentiable_inputs(c);
        const auto r = rules->jvp(c, lifted<V>(c, x, ids), lifted<V>(c, u, ids));
        jvp_result d{outputs_of(r.values, dtypes, *op, args, attributes), {}};
        for (std::size_t o = 0; o < dtypes.size(); ++o) {
            d.output_tangents.push_back(is_empty(r.tangents[o]) ? tensor() : lower(r.tangents[o]));
        }
        return d;
    };
    e.vjp = [op, attributes, rules](const tensors& x, const tensors& w) {
        const auto args = pointers(x);
        const auto c = make_context(*op, args, attributes);
        const auto dtypes = op->output_dtypes(c);
        const auto shapes = spec::eval_shapes(c, op->output_shapes(c));
        const auto ids = rules->differentiable_inputs(c);
        const auto r = rules->vjp(c, lifted<V>(c, x, ids), cotangents<V>(w, dtypes, &shapes), {});
        vjp_result d{outputs_of(r.values, dtypes, *op, args, attributes), {}};
        for (std::size_t i = 0; i < x.size(); ++i) {
            const bool diff = std::find(ids.begin(), ids.end(), i) != ids.end();
            d.input_cotangents.push_back(diff ? lower(r.cotangents[i]) : tensor());
        }
        return d;
    };
    // Order 2: g(x) = Jᵀ(x)·w, one output per input (empty where not
    // differentiated); its JVP is forward-over-reverse, and its VJP the same
    // product because the Hessian of wᵀf is symmetric.
    e.gradient = [op, attributes, rules, rules2](const tensors& w) {
        engine g;
        g.value = [op, attributes, rules, w](const tensors& x) {
            const auto args = pointers(x);
            const auto c = make_context(*op, args, attributes);
            const auto ids = rules->differentiable_inputs(c);
            const auto r = rules->vjp(c, lifted<V>(c, x, ids), cotangents<V>(w, op->output_dtypes(c)), {});
            tensors out(x.size());
            for (const auto i : ids) out[i] = lower(r.cotangents[i]);
            return out;
        };
        // Outputs Jᵀw and tangents (∂(Jᵀw)/∂x)·u, one per input.
        const auto second = [op, attributes, rules2, w](const tensors& x, const tensors& u) {
            using D = dual<V>;
            const auto args = pointers(x);
            const auto c = make_context(*op, args, attributes);
            const auto ids = rules2->differentiable_inputs(c);
            auto xs = lifted<D>(c, x, ids);
            for (const auto i : ids) {
                if (i >= u.size() || u[i].size() == 0) continue;  // no tangent: zero
                const auto ui = lift<V>(u[i]);
                for (std::size_t k = 0; k < ui.size() && k < xs[i].size(); ++k) xs[i].data()[k].d = ui.data()[k];
            }
            const auto r = rules2->vjp(c, xs, cotangents<D>(w, op->output_dtypes(c)), {});
            jvp_result d{tensors(x.size()), tensors(x.size())};
            for (const auto i : ids) {
                auto v = array<double>::from_shape(r.cotangents[i].shape());
                auto t = array<double>::from_shape(r.cotangents[i].shape());
                for (std::size_t k = 0; k < v.size(); ++k) {
                    v.data()[k] = static_cast<double>(primal(r.cotangents[i].data()[k].v));
                    t.data()[k] = static_cast<double>(primal(r.cotangents[i].data()[k].d));
                }
                d.outputs[i] = tensor(v);
                d.output_tangents[i] = tensor(t);
            }
            return d;
        };
        g.jvp = second;
        // vᵀ ∂(Jᵀw)/∂x, computed forward-over-forward (a mode independent of the
        // JVP above) one coordinate at a time for small inputs: component i is
        // Σ_o w_o·∂²f_o[v, e_i], from a dual<dual> run seeded with v outside and
        // e_i inside. Large inputs use the JVP, since the Hessian of wᵀf is symmetric.
        g.vjp = [second, op, attributes, rules2, w](const tensors& x, const tensors& v) {
            using D = dual<V>;
            auto s = second(x, v);  // outputs, and the fallback
            vjp_result d{std::move(s.outputs), std::move(s.output_tangents)};
            const auto args = pointers(x);
            const auto c = make_context(*op, args, attributes);
            const auto ids = rules2->differentiable_inputs(c);
            std::size_t n = 0;
            for (const auto i : ids) n += x[i].size();
            if (n > forward_over_forward_limit) return d;
            const auto dtypes = op->output_dtypes(c);
            auto xs = lifted<D>(c, x, ids);
            for (const auto i : ids) {
                if (i >= v.size() || v[i].size() == 0) continue;
                const auto vi = lift<V>(v[i]);
                for (std::size_t k = 0; k < vi.size() && k < xs[i].size(); ++k) xs[i].data()[k].d = vi.data()[k];
            }
            std::vector<array<D>> us(c.input_count(), empty_array<D>());
            for (const auto i : ids) {
                us[i] = array<D>::from_shape(xs[i].shape());
                std::fill(us[i].begin(), us[i].end(), D(0));
            }
            for (const auto i : ids) {
                auto out = array<double>::from_shape(x[i].shape());
                for (std::size_t k = 0; k < x[i].size(); ++k) {
                    us[i].data()[k] = D(1);
                    const auto r = rules2->jvp(c, xs, us);
                    us[i].data()[k] = D(0);
                    double acc = 0.0;
                    for (std::size_t o = 0; o < dtypes.size(); ++o) {
                        if (o >= w.size() || w[o].size() == 0 || is_empty(r.tangents[o])) continue;
                        const auto wo = w[o].to<double>();
                        for (std::size_t j = 0; j < wo.size(); ++j) {
                            acc += wo.data()[j] * static_cast<double>(primal(r.tangents[o].data()[j].d));
                        }
                    }
                    out.data()[k] = acc;
                }
                d.input_cotangents[i] = tensor(out);
            }
            return d;
        };
        return g;
    };
    return e;
}
}  // namespace detail

/// Engine for op spec Op with fixed attributes (inputs in op order; an absent
/// optional input is a default-constructed tensor). Derivatives are computed
/// in V (double by default, so an f32 op's derivatives come from the same
/// kernel run in double). Only Op's kernel is instantiated.
template <class Op, class V = double>
    requires(!std::floating_point<Op>)
[[nodiscard]] engine op_engine(spec::attribute_map attributes = {}) {
    static_assert(differentiable_op<Op>,
                  "op_engine<Op>: Op has no kernel on AD scalars (run_real<S>), so the op is not differentiable");
    static_assert(std::floating_point<V>, "op_engine<Op, V>: V, the arithmetic of the derivatives, must be float or double");
    static const spec::op_entry op = spec::make_entry<Op>();
    static const derivative_rules<V> rules = make_rules<V, Op>();
    static const derivative_rules<dual<V>> rules2 = make_rules<dual<V>, Op>();
    return detail::make_op_engine<V>(&op, &rules, &rules2, std::move(attributes));
}

}  // namespace tensoracle::ad
// ---- end tensoracle/ad/typed_engine.hpp ----

namespace tensoracle::ad {

namespace detail {
template <class V>
const derivative_rules<V>& rules_or_throw(std::string_view op_type) {
    const auto* r = find_rules<V>(op_type);
    if (r == nullptr) {
        throw unsupported_error("tensoracle::ad::op_engine(" + std::string(op_type) + ")",
                                "the op has no derivative rules (not differentiable)");
    }
    return *r;
}
}  // namespace detail

/// Engine for the op named op_type with fixed attributes (see the typed
/// op_engine<Op, V> for the conventions). Throws for an unknown or
/// non-differentiable op.
template <class V = double>
    requires std::floating_point<V>
[[nodiscard]] engine op_engine(std::string_view op_type, spec::attribute_map attributes = {}) {
    return detail::make_op_engine<V>(&ops::get_op(op_type), &detail::rules_or_throw<V>(op_type),
                                     &detail::rules_or_throw<dual<V>>(op_type), std::move(attributes));
}

}  // namespace tensoracle::ad
// ---- end tensoracle/ad/engine.hpp ----
// ---- begin tensoracle/ad/graph.hpp ----
// tensoracle: forward and reverse mode over a whole graph.
//
// The interpreter's recorded values give every node its context (shapes,
// integer inputs, attributes); derivatives flow through the op rules of
// op_rules.hpp. jvp() pushes tangents forward node by node, vjp() runs the
// graph forward once and sweeps the nodes backwards (a tape over the graph),
// hvp() is forward-over-reverse: the reverse sweep in dual numbers.
// Ops without derivative rules (Shape, ArgMax, comparisons...) cut the
// derivative: their outputs are constants, and the result lists them.

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>


namespace tensoracle::ad {

using value_map = std::map<std::string, tensor, std::less<>>;

struct graph_jvp_result {
    value_map outputs;   ///< graph outputs (f64, computed in the derivative arithmetic)
    value_map tangents;  ///< derivative of each graph output along the input tangents (f64)
    std::vector<std::string> cut_at;  ///< nodes without derivative rules that active values reached
};
struct graph_vjp_result {
    value_map outputs;
    value_map gradients;  ///< Jᵀw for each differentiated graph input (f64)
    std::vector<std::string> cut_at;
};
struct graph_hvp_result {
    value_map outputs;
    value_map gradients;       ///< Jᵀw
    value_map hessian_vector;  ///< d/dt Jᵀ(x + t·u) w at t = 0
    std::vector<std::string> cut_at;
};

namespace detail {

template <class V>
using array_map = std::map<std::string, array<V>, std::less<>>;

struct node_call {
    const spec::op_entry* op = nullptr;
    std::vector<const tensor*> args;
    spec::attribute_map attributes;
};

// The same argument list and attributes the interpreter builds for node n.
inline node_call prepare(const graph::node& n, const value_map& values) {
    node_call call;
    call.op = &ops::get_op(n.op_type);
    for (const auto& in : n.inputs) call.args.push_back(in.empty() ? nullptr : &values.at(in));
    while (!call.args.empty() && call.args.back() == nullptr) call.args.pop_back();
    call.attributes = graph::call_attributes(*call.op, n);
    return call;
}

template <class V>
array<V> zeros_like(const array<V>& a) {
    auto z = array<V>::from_shape(a.shape());
    std::fill(z.begin(), z.end(), V(0));
    return z;
}

/// Forward pass in V over the active part of the graph: values of every
/// value that depends on the differentiated inputs, optionally with tangents.
template <class V>
struct forward_state {
    value_map plain;
    array_map<V> values;
    array_map<V> tangents;
    std::vector<std::string> cut_at;
    std::vector<std::size_t> order;
};

template <class V>
forward_state<V> forward(const graph::graph& g, const value_map& feeds, const array_map<V>& x,
                         const array_map<V>* u) {
    forward_state<V> s;
    s.plain = graph::run(g, feeds, {.record_intermediates = true}).values;
    s.order = g.topological_order();
    s.values = x;
    if (u != nullptr) s.tangents = *u;
    for (const std::size_t ni : s.order) {
        const auto& n = g.nodes[ni];
        const auto call = prepare(n, s.plain);
        bool active = false;
        for (const auto& in : n.inputs) active = active || (!in.empty() && s.values.count(in) != 0);
        if (!active) continue;
        const auto* rules = find_rules<V>(n.op_type);
        const auto c = make_context(*call.op, call.args, call.attributes);
        if (rules == nullptr) {
            // Only a floating output cut from its inputs loses a derivative (Shape's int64 loses nothing).
            const auto dts = call.op->output_dtypes(c);
            if (std::any_of(dts.begin(), dts.end(), [](dtype d) { return info(d).is_floating; })) {
                s.cut_at.push_back(n.label());
            }
            continue;
        }
        const auto ids = rules->differentiable_inputs(c);
        std::vector<array<V>> xs(c.input_count(), empty_array<V>()), us(c.input_count(), empty_array<V>());
        bool any = false;
        for (const std::size_t i : ids) {
            const auto it = s.values.find(n.inputs[i]);
            any = any || it != s.values.end();
            xs[i] = it != s.values.end() ? it->second : lift<V>(*call.args[i]);
            if (u != nullptr) {
                const auto t = s.tangents.find(n.inputs[i]);
                us[i] = t != s.tangents.end() ? t->second : zeros_like(xs[i]);
            }
        }
        if (!any) continue;  // active inputs feed only non-differentiable slots (shapes, indices)
        if (u != nullptr) {
            auto r = rules->jvp(c, xs, us);
            for (std::size_t o = 0; o < n.outputs.size() && o < r.values.size(); ++o) {
                if (n.outputs[o].empty() || is_empty(r.values[o])) continue;
                s.values.insert_or_assign(n.outputs[o], std::move(r.values[o]));
                s.tangents.insert_or_assign(n.outputs[o], std::move(r.tangents[o]));
            }
        } else {
            auto r = rules->value(c, xs);
            const auto dtypes = call.op->output_dtypes(c);
            for (std::size_t o = 0; o < n.outputs.size() && o < r.size(); ++o) {
                if (n.outputs[o].empty() || !info(dtypes[o]).is_floating) continue;
                s.values.insert_or_assign(n.outputs[o], std::move(r[o]));
            }
        }
    }
    return s;
}

template <class V>
array_map<V> lift_inputs(const graph::graph& g, const value_map& feeds, const std::vector<std::string>& wrt,
                         const char* where) {
    array_map<V> x;
    for (const auto& name : wrt) {
        const auto it = feeds.find(name);
        if (it == feeds.end()) throw error(where, "differentiated input '" + name + "' is not fed");
        if (!info(it->second.element_dtype()).is_floating) {
            throw dtype_error(where, "differentiated input '" + name + "' has dtype " +
                                         std::string(tensoracle::name(it->second.element_dtype())) +
                                         "; only floating inputs have derivatives");
        }
        x.emplace(name, lift<V>(it->second));
    }
    (void)g;
    return x;
}

inline std::vector<std::string> floating_inputs(const graph::graph& g) {
    std::vector<std::string> v;
    for (const auto& in : g.inputs) {
        if (info(in.type).is_floating) v.push_back(in.name);
    }
    return v;
}

template <class V>
array<V> as_cotangent(const tensor& t, const std::string& name, const array<V>& like, const char* where) {
    auto a = lift<V>(t);
    if (!std::equal(a.shape().begin(), a.shape().end(), like.shape().begin(), like.shape().end())) {
        throw shape_error(where, "cotangent for '" + name + "' has shape " + to_string(t.shape()) +
                                     " but the value has shape " +
                                     to_string(shape_type(like.shape().begin(), like.shape().end())));
    }
    return a;
}

/// Reverse sweep from output cotangents w; returns cotangents of wrt inputs.
template <class V>
array_map<V> backward(const graph::graph& g, const forward_state<V>& s, array_map<V> cot,
                      const reverse_options& options) {
    for (auto it = s.order.rbegin(); it != s.order.rend(); ++it) {
        const auto& n = g.nodes[*it];
        bool seeded = false;
        for (const auto& o : n.outputs) seeded = seeded || (!o.empty() && cot.count(o) != 0);
        if (!seeded) continue;
        const auto* rules = find_rules<V>(n.op_type);
        if (rules == nullptr) continue;
        const auto call = prepare(n, s.plain);
        const auto c = make_context(*call.op, call.args, call.attributes);
        const auto ids = rules->differentiable_inputs(c);
        std::vector<array<V>> xs(c.input_count(), empty_array<V>());
        bool any = false;
        for (const std::size_t i : ids) {
            const auto v = s.values.find(n.inputs[i]);
            any = any || v != s.values.end();
            xs[i] = v != s.values.end() ? v->second : lift<V>(*call.args[i]);
        }
        if (!any) continue;
        std::vector<array<V>> ws;
        for (const auto& o : n.outputs) {
            const auto w = o.empty() ? cot.end() : cot.find(o);
            ws.push_back(w != cot.end() ? w->second : empty_array<V>());
        }
        const auto r = rules->vjp(c, xs, ws, options);
        for (const std::size_t i : ids) {
            const auto& name = n.inputs[i];
            if (s.values.count(name) == 0) continue;  // constant: no one asks for its cotangent
            auto acc = cot.find(name);
            if (acc == cot.end()) {
                cot.emplace(name, r.cotangents[i]);
            } else {
                for (std::size_t k = 0; k < acc->second.size(); ++k) acc->second.data()[k] += r.cotangents[i].data()[k];
            }
        }
    }
    return cot;
}

template <class V>
array_map<V> seed_outputs(const graph::graph& g, const forward_state<V>& s, const value_map& cotangents,
                          const char* where) {
    array_map<V> cot;
    for (const auto& entry : cotangents) {
        // Not a structured binding: Clang before 16 cannot capture one in a lambda.
        const std::string& name = entry.first;
        const auto& t = entry.second;
        const bool is_output = std::any_of(g.outputs.begin(), g.outputs.end(),
                                           [&](const graph::value_info& v) { return v.name == name; });
        if (!is_output) throw error(where, "cotangent given for '" + name + "', which is not a graph output");
        const auto v = s.values.find(name);
        if (v == s.values.end()) continue;  // the output does not depend on the differentiated inputs
        cot.emplace(name, as_cotangent<V>(t, name, v->second, where));
    }
    return cot;
}

}  // namespace detail

/// Forward mode over graph g: derivatives of every graph output along
/// `tangents` (one per differentiated graph input; their names say which).
template <class V = double>
[[nodiscard]] graph_jvp_result jvp(const graph::graph& g, const value_map& feeds, const value_map& tangents) {
    constexpr const char* where = "tensoracle::ad::jvp";
    std::vector<std::string> wrt;
    for (const auto& [name, t] : tangents) wrt.push_back(name);
    const auto x = detail::lift_inputs<V>(g, feeds, wrt, where);
    detail::array_map<V> u;
    for (const auto& [name, t] : tangents) {
        u.emplace(name, detail::as_cotangent<V>(t, name, x.at(name), where));
    }
    const auto s = detail::forward<V>(g, feeds, x, &u);
    graph_jvp_result r;
    r.cut_at = s.cut_at;
    for (const auto& o : g.outputs) {
        const auto v = s.values.find(o.name);
        if (v != s.values.end()) {
            r.outputs.emplace(o.name, lower(v->second));
            r.tangents.emplace(o.name, lower(s.tangents.at(o.name)));
        } else {
            r.outputs.emplace(o.name, s.plain.at(o.name));
            if (info(s.plain.at(o.name).element_dtype()).is_floating) {
                r.tangents.emplace(o.name, tensor::zeros(dtype::f64, s.plain.at(o.name).shape()));
            }
        }
    }
    return r;
}

/// Reverse mode over graph g: Jᵀw for output cotangents w (by output name;
/// outputs not named get zero), with respect to `wrt` (default: every
/// floating graph input).
template <class V = double>
[[nodiscard]] graph_vjp_result vjp(const graph::graph& g, const value_map& feeds, const value_map& cotangents,
                                   std::vector<std::string> wrt = {}, const reverse_options& options = {}) {
    constexpr const char* where = "tensoracle::ad::vjp";
    if (wrt.empty()) wrt = detail::floating_inputs(g);
    const auto x = detail::lift_inputs<V>(g, feeds, wrt, where);
    const auto s = detail::forward<V>(g, feeds, x, nullptr);
    const auto cot = detail::backward<V>(g, s, detail::seed_outputs<V>(g, s, cotangents, where), options);
    graph_vjp_result r;
    r.cut_at = s.cut_at;
    for (const auto& o : g.outputs) {
        const auto v = s.values.find(o.name);
        r.outputs.emplace(o.name, v != s.values.end() ? lower(v->second) : s.plain.at(o.name));
    }
    for (const auto& name : wrt) {
        const auto c = cot.find(name);
        r.gradients.emplace(name, c != cot.end() ? lower(c->second) : tensor::zeros(dtype::f64, feeds.at(name).shape()));
    }
    return r;
}

/// Forward-over-reverse second order: the gradient Jᵀw and its derivative
/// along input tangents u (for a scalar output and w = 1: the Hessian-vector
/// product H·u).
template <class V = double>
[[nodiscard]] graph_hvp_result hvp(const graph::graph& g, const value_map& feeds, const value_map& cotangents,
                                   const value_map& tangents, std::vector<std::string> wrt = {}) {
    constexpr const char* where = "tensoracle::ad::hvp";
    using D = dual<V>;
    if (wrt.empty()) wrt = detail::floating_inputs(g);
    auto x = detail::lift_inputs<D>(g, feeds, wrt, where);
    for (const auto& [name, t] : tangents) {
        const auto it = x.find(name);
        if (it == x.end()) throw error(where, "tangent given for '" + name + "', which is not differentiated");
        const auto u = detail::as_cotangent<V>(t, name, lift<V>(feeds.at(name)), where);
        for (std::size_t k = 0; k < u.size(); ++k) it->second.data()[k].d = u.data()[k];
    }
    const auto s = detail::forward<D>(g, feeds, x, nullptr);
    const auto cot = detail::backward<D>(g, s, detail::seed_outputs<D>(g, s, cotangents, where), {});
    graph_hvp_result r;
    r.cut_at = s.cut_at;
    auto split = [](const array<D>& a, bool tangent) {
        auto v = array<double>::from_shape(a.shape());
        for (std::size_t k = 0; k < a.size(); ++k) v.data()[k] = static_cast<double>(tangent ? primal(a.data()[k].d) : primal(a.data()[k].v));
        return tensor(v);
    };
    for (const auto& o : g.outputs) {
        const auto v = s.values.find(o.name);
        r.outputs.emplace(o.name, v != s.values.end() ? split(v->second, false) : s.plain.at(o.name));
    }
    for (const auto& name : wrt) {
        const auto c = cot.find(name);
        if (c != cot.end()) {
            r.gradients.emplace(name, split(c->second, false));
            r.hessian_vector.emplace(name, split(c->second, true));
        } else {
            r.gradients.emplace(name, tensor::zeros(dtype::f64, feeds.at(name).shape()));
            r.hessian_vector.emplace(name, tensor::zeros(dtype::f64, feeds.at(name).shape()));
        }
    }
    return r;
}

}  // namespace tensoracle::ad
// ---- end tensoracle/ad/graph.hpp ----
// ---- end tensoracle/ad.hpp ----

// ---- begin tensoracle/gen/generator.hpp ----
// tensoracle: random valid graphs from the op specs (NNSmith's Algorithm 1).
//
// A graph grows from one placeholder. Each step draws an op and either
// inserts it forward (it consumes existing values: type matching on dtype
// and rank picks them, then the op's constraints are solved with the
// consumed values' shapes as constants) or backward (it replaces a
// placeholder: the op's output must equal the placeholder's type and shape,
// backward inference proposes input types, and its new inputs become
// placeholders). Shape-like inputs and hinted data become initializers;
// remaining placeholders become graph inputs or weights; values nothing
// consumes become graph outputs.
//
// Case i of seed s under config c is a pure function of (s, i, c): its
// random stream is seeded from those three alone.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// ---- begin tensoracle/gen/config.hpp ----
// tensoracle: what the graph generator may produce. Plain data, so a
// campaign stores it as JSON (gen/config_json.hpp) and any case is
// regenerated from (seed, index, config); `hash()` identifies a config.

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

// ---- begin tensoracle/core/hash.hpp ----
// tensoracle: FNV-1a, the kit's stable content hash (config hashes, failure
// signatures): the same text gives the same 16 hex digits on every machine.

#include <cstdint>
#include <string>
#include <string_view>

namespace tensoracle {

/// The 64-bit FNV-1a hash of `text` (a seed derived from text, for instance).
[[nodiscard]] constexpr std::uint64_t fnv1a(std::string_view text) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const char ch : text) {
        h ^= static_cast<unsigned char>(ch);
        h *= 0x100000001b3ULL;
    }
    return h;
}

[[nodiscard]] inline std::string fnv1a_hex(std::string_view text) {
    std::uint64_t h = fnv1a(text);
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = digits[h & 15];
    return out;
}

}  // namespace tensoracle
// ---- end tensoracle/core/hash.hpp ----

namespace tensoracle::gen {

/// The input search's default budget in work units (config::search_work,
/// search_options::work_budget): about a second on the 2-core machine of the README's figures.
inline constexpr std::size_t default_search_work = std::size_t{1} << 27;

struct config {
    /// Ops to draw from (empty: every op of the registry) and ops never drawn.
    std::vector<std::string> include_ops;
    std::vector<std::string> exclude_ops;
    /// Element types values may have.
    std::vector<dtype> dtypes{dtype::f16, dtype::bf16, dtype::f32, dtype::f64, dtype::i8, dtype::i16,
                              dtype::i32, dtype::i64,  dtype::u8,   dtype::boolean};
    std::size_t min_rank = 0;
    std::size_t max_rank = 5;
    std::size_t max_nodes = 10;
    std::size_t max_elements = 65536;  ///< per tensor
    /// Per node: an op's work estimate (spec::hints::work, multiply-adds) stays below this.
    std::size_t max_work = std::size_t{1} << 24;
    std::int64_t min_dim = 1;
    std::int64_t max_dim = 64;  ///< placeholder (input) dims; outputs are bounded by max_elements
    /// Ops with a numeric domain (Log, Sqrt, Div, Pow, ...): the input search keeps their inputs inside it.
    bool vulnerable_ops = true;
    /// Probability that an insertion is forward (consumes existing values) rather than backward.
    double forward_probability = 0.5;
    /// One graph input and one graph output (forward insertion only; extra inputs become weights).
    bool single_io = false;
    /// Probability that a floating placeholder becomes an initializer (a weight) rather than a graph input.
    double initializer_probability = 0.3;
    /// Attribute binning (NNSmith's Algorithm 2) with this many exponential bins.
    bool binning = true;
    int bins = 7;
    /// The model's opset; ops whose spec is not the current version at it are not drawn.
    int opset = 17;
    /// What the target accepts: op_type -> dtypes of the op's first input (absent op: anything).
    std::map<std::string, std::set<dtype>> support;
    /// Leave out the few valid configurations whose shape ONNX 1.12 (Debian 12's libonnx)
    /// infers wrongly (io/onnx_known_issues.hpp), so every graph passes its strict shape
    /// inference. Off: those configurations too (ceil_mode windows that start in the
    /// padding, ConvTranspose crops and SAME with output_padding), for newer runtimes.
    bool avoid_onnx_shape_inference_bugs = true;
    /// Input search budget (iterations of Algorithm 3).
    std::size_t search_iterations = 256;
    /// Input search budget in work units (about one multiply-add of a node's forward
    /// kernel, three per unit through its VJP; gen::search_options::work_budget): a
    /// graph whose search would cost more (a large Conv that needs many steps) is
    /// grown again. Deterministic, unlike a time limit. About a second here.
    std::size_t search_work = default_search_work;
    /// A case whose input search fails is grown again from its own random stream, up to
    /// this many graphs in all, so what a campaign receives is NaN/Inf-free; 1: keep the
    /// first graph whatever the search found.
    std::size_t search_attempts = 8;

    /// A canonical text form: equal configs give equal text.
    [[nodiscard]] std::string canonical() const {
        std::ostringstream os;
        auto list = [&](const char* key, std::vector<std::string> v) {
            std::sort(v.begin(), v.end());
            os << key << '=';
            for (const auto& s : v) os << s << ',';
            os << ';';
        };
        list("include", include_ops);
        list("exclude", exclude_ops);
        std::vector<std::string> dt;
        for (const auto d : dtypes) dt.emplace_back(name(d));
        list("dtypes", dt);
        os << "rank=" << min_rank << ".." << max_rank << ";nodes=" << max_nodes << ";elements=" << max_elements << ";work=" << max_work
           << ";dims=" << min_dim << ".." << max_dim << ";vulnerable=" << vulnerable_ops
           << ";forward=" << forward_probability << ";single_io=" << single_io
           << ";initializers=" << initializer_probability << ";binning=" << binning << ";bins=" << bins
           << ";opset=" << opset << ";avoid_onnx_bugs=" << avoid_onnx_shape_inference_bugs << ";search=" << search_iterations << ";search_work=" << search_work << ";attempts=" << search_attempts << ";support=";
        for (const auto& [op, ds] : support) {
            os << op << ':';
            std::vector<std::string> names;
            for (const auto d : ds) names.emplace_back(name(d));
            std::sort(names.begin(), names.end());
            for (const auto& n : names) os << n << ',';
            os << '|';
        }
        return os.str();
    }
    /// FNV-1a of the canonical form, as 16 hex digits.
    [[nodiscard]] std::string hash() const { return fnv1a_hex(canonical()); }

    /// Throws naming the first setting that cannot work.
    void validate() const {
        const char* where = "tensoracle::gen::config";
        if (dtypes.empty()) throw error(where, "dtypes is empty: no value could have a type");
        if (min_rank > max_rank) {
            throw error(where, "min_rank " + std::to_string(min_rank) + " > max_rank " + std::to_string(max_rank));
        }
        if (max_rank > 8) throw error(where, "max_rank " + std::to_string(max_rank) + " exceeds 8");
        if (min_dim < 1 || min_dim > max_dim) {
            throw error(where, "dims range [" + std::to_string(min_dim) + ", " + std::to_string(max_dim) +
                                   "] is empty or below 1");
        }
        if (max_elements < 1) throw error(where, "max_elements must be at least 1");
        if (max_work < 1) throw error(where, "max_work must be at least 1");
        if (max_nodes < 1) throw error(where, "max_nodes must be at least 1");
        if (bins < 1 || bins > 30) throw error(where, "bins must be in [1, 30], got " + std::to_string(bins));
        if (!(forward_probability >= 0.0 && forward_probability <= 1.0)) {
            throw error(where, "forward_probability must be in [0, 1]");
        }
        if (!(initializer_probability >= 0.0 && initializer_probability <= 1.0)) {
            throw error(where, "initializer_probability must be in [0, 1]");
        }
        if (opset < 1) throw error(where, "opset must be positive");
        if (search_attempts < 1) throw error(where, "search_attempts must be at least 1");
        if (search_work < 1) throw error(where, "search_work must be at least 1");
    }
};

}  // namespace tensoracle::gen
// ---- end tensoracle/gen/config.hpp ----
// ---- begin tensoracle/gen/instance.hpp ----
// tensoracle: one valid op instance, solved from the op's own spec.
//
// The generator decides the structure (which optional inputs, dtypes by
// type matching, ranks, which attributes are given and how long their
// lists are), builds a *symbolic* context in which dims, int attributes and
// the values of shape-like inputs are unknowns, collects the op's
// constraints plus the equalities that bind it to values already in the
// graph, and solves (gen/solver.hpp) with NNSmith's attribute binning. The
// spec's constraints are the only statement of validity; hints
// (spec/hints.hpp) add only value distributions and non-integer attributes.
//
// Structure the solver infers:
// - a small integer input whose values the spec reads (`c.values(i)`, e.g.
//   Reshape's shape) is found when the spec asks for them, and becomes a
//   constant whose values are unknowns;
// - list lengths: a list attribute's length (spec::list_length) and a
//   shape-like input's length (its dim 0) are unknowns too; the generator
//   guesses, propagates the length rules, and re-guesses from the implied
//   domain.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

// ---- begin tensoracle/gen/solver.hpp ----
// tensoracle: a finite-domain solver for the specs' integer constraint
// language (spec::expr), used by the graph generator.
//
// A constraint system is a few integer unknowns with interval domains (an
// op's dims, int attributes, values of shape-like inputs) and boolean
// constraints over them, exactly as the specs write them. The solver
// propagates intervals through the expression trees (forward evaluation,
// then backward narrowing: HC4-revise) and searches by randomized domain
// splitting with propagation at every choice point, which is complete on
// finite domains within its budget. Every answer is checked by evaluating
// each constraint exactly (spec::expr::eval's semantics, on the compiled
// form; tests hold the two to agree), so an answer is never wrong;
// the budget only bounds how hard it looks before giving up.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>


namespace tensoracle::gen {

/// An inclusive integer interval; empty when lo > hi.
struct interval {
    std::int64_t lo = 0;
    std::int64_t hi = -1;
    [[nodiscard]] constexpr bool empty() const noexcept { return lo > hi; }
    [[nodiscard]] constexpr bool singleton() const noexcept { return lo == hi; }
    [[nodiscard]] constexpr bool contains(std::int64_t v) const noexcept { return lo <= v && v <= hi; }
    [[nodiscard]] constexpr std::uint64_t width() const noexcept {
        return empty() ? 0 : static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    }
    friend constexpr bool operator==(interval, interval) = default;
};

/// One unknown: its symbol name (as the constraints spell it) and domain.
struct variable {
    std::string name;
    interval domain;
};

/// Unknowns, their domains, and constraints over them. Constraints may only
/// mention the system's variables (and constants).
struct constraint_system {
    std::vector<variable> variables;
    std::vector<spec::constraint> constraints;

    /// Adds a variable (or narrows the domain of one already there).
    std::size_t add_variable(std::string name, std::int64_t lo, std::int64_t hi) {
        for (std::size_t i = 0; i < variables.size(); ++i) {
            if (variables[i].name == name) {
                variables[i].domain.lo = std::max(variables[i].domain.lo, lo);
                variables[i].domain.hi = std::min(variables[i].domain.hi, hi);
                return i;
            }
        }
        variables.push_back({std::move(name), {lo, hi}});
        return variables.size() - 1;
    }
    [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const {
        for (std::size_t i = 0; i < variables.size(); ++i) {
            if (variables[i].name == name) return i;
        }
        return std::nullopt;
    }
    void add(spec::expr condition, std::string reason) { constraints.push_back({std::move(condition), std::move(reason)}); }

    /// True when `values` (one per variable) satisfies every constraint exactly.
    [[nodiscard]] bool satisfied_by(const std::vector<std::int64_t>& values, std::string* failed = nullptr) const {
        spec::environment env;
        for (std::size_t i = 0; i < variables.size(); ++i) {
            if (!variables[i].domain.contains(values[i])) {
                if (failed != nullptr) *failed = variables[i].name + " outside its domain";
                return false;
            }
            env.emplace(variables[i].name, values[i]);
        }
        for (const auto& c : constraints) {
            bool ok = false;
            try {
                ok = c.condition.eval(env) != 0;
            } catch (const error&) {
                ok = false;  // division by zero or overflow: this assignment is not a solution
            }
            if (!ok) {
                if (failed != nullptr) *failed = c.condition.to_string() + " (" + c.reason + ")";
                return false;
            }
        }
        return true;
    }
};

enum class solve_status : std::uint8_t { sat, unsat, unknown };

struct solve_result {
    solve_status status = solve_status::unknown;
    std::vector<std::int64_t> values;  ///< one per variable when sat
    std::string conflict;              ///< when unsat at the root: the constraint that emptied a domain
    std::size_t nodes = 0;             ///< choice points visited
    [[nodiscard]] bool sat() const noexcept { return status == solve_status::sat; }
};

struct solver_options {
    std::size_t max_nodes = 4000;         ///< choice points before giving up (unknown)
    std::size_t max_propagation_rounds = 40;
    /// Name the constraint when unsat at the root (solve_result::conflict);
    /// off where the caller retries anyway and needs no reason: printing
    /// the constraint costs more than a failed search of a small system.
    bool explain = true;
};

namespace detail {

inline constexpr std::int64_t big = std::int64_t{1} << 62;  // "infinite" interval bounds

[[nodiscard]] constexpr std::int64_t clamp_big(__int128 v) noexcept {
    if (v > big) return big;
    if (v < -big) return -big;
    return static_cast<std::int64_t>(v);
}
[[nodiscard]] constexpr interval hull(interval a, interval b) noexcept {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}
[[nodiscard]] constexpr interval meet(interval a, interval b) noexcept {
    return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)};
}
// Bounds are int64: 64-bit division is several times cheaper than 128-bit,
// and only min / -1 leaves the int64 range.
[[nodiscard]] constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
    if (b == -1) return clamp_big(-__int128(a));
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return clamp_big(q);
}
[[nodiscard]] constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept {
    if (b == -1) return clamp_big(-__int128(a));
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
    return clamp_big(q);
}
/// Euclidean division, as spec::expr evaluates it.
[[nodiscard]] constexpr std::int64_t euclid_div(std::int64_t a, std::int64_t b) noexcept {
    std::int64_t q = a / b, m = a % b;
    if (m < 0) q += (b > 0 ? -1 : 1);
    return q;
}

/// A constraint flattened for fast repeated propagation: nodes in post-order,
/// symbols resolved to variable indices.
struct flat_node {
    spec::expr_kind kind;
    std::int64_t value = 0;  // constant
    std::int32_t var = -1;   // symbol
    std::int32_t a = -1, b = -1, cond = -1;
};
/// One compiled constraint, as a view into its system's storage (every
/// constraint of a system shares a few arrays: compiling allocates per
/// system, not per constraint or node).
struct flat_constraint {
    std::span<const flat_node> nodes;  // root last; operand indices are local
    std::span<const std::int32_t> vars;  // the variables it mentions, sorted
    // Forward evaluation sets the leaves in one pass and then walks only the
    // operator nodes: half the nodes are leaves, and one switch over all of
    // them mispredicts more than it computes.
    std::span<const std::pair<std::int32_t, std::int32_t>> symbol_leaves;  // (node, variable)
    std::span<const std::int32_t> constant_leaves;
    std::span<const std::int32_t> operators;  // post-order
};

class compiled_system {
public:
    compiled_system() = default;
    explicit compiled_system(const constraint_system& s) { extend(s); }

    /// Forgets every compiled constraint and variable but keeps the storage,
    /// so one object compiles system after system without reallocating (the
    /// generator compiles a fresh system for every instance it tries).
    void reset() noexcept {
        spans_.clear();
        nodes_.clear();
        vars_.clear();
        symbol_leaves_.clear();
        constant_leaves_.clear();
        operators_.clear();
        watch_head_.clear();
        watch_tail_.clear();
        watch_next_.clear();
        watch_constraint_.clear();
        name_hash_.clear();
        slots_.clear();
    }

    /// Compiles what `s` gained since the last call (the generator adds
    /// constraints between propagations; each is flattened once).
    void extend(const constraint_system& s) {
        const bool more_variables = watch_head_.size() < s.variables.size();
        for (std::size_t i = watch_head_.size(); i < s.variables.size(); ++i) {
            watch_head_.push_back(-1);
            watch_tail_.push_back(-1);
            name_hash_.push_back(std::hash<std::string_view>{}(s.variables[i].name));
        }
        if (more_variables || slots_.empty()) {
            // Symbol lookup: an open-addressing table of variable indices by
            // name hash, at most half full (flattening looks up every symbol).
            std::size_t size = 8;
            while (size < 2 * name_hash_.size()) size *= 2;
            slots_.assign(size, -1);
            for (std::size_t v = 0; v < name_hash_.size(); ++v) {
                std::size_t at = name_hash_[v] & (size - 1);
                while (slots_[at] >= 0) at = (at + 1) & (size - 1);
                slots_[at] = static_cast<std::int32_t>(v);
            }
        }
        // A typical constraint has about 15 nodes, half of them leaves:
        // reserving for that avoids most regrowth of a fresh system's arrays.
        const std::size_t fresh = s.constraints.size() - std::min(spans_.size(), s.constraints.size());
        const auto make_room = [](auto& v, std::size_t more) {  // geometric, as push_back would grow
            if (v.size() + more > v.capacity()) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
        };
        make_room(spans_, fresh);
        make_room(nodes_, 16 * fresh);
        make_room(operators_, 8 * fresh);
        make_room(symbol_leaves_, 5 * fresh);
        make_room(constant_leaves_, 4 * fresh);
        make_room(vars_, 5 * fresh);
        make_room(watch_constraint_, 4 * fresh);
        make_room(watch_next_, 4 * fresh);
        for (std::size_t k = spans_.size(); k < s.constraints.size(); ++k) {
            spans_.push_back({static_cast<std::uint32_t>(nodes_.size()), static_cast<std::uint32_t>(vars_.size()),
                              static_cast<std::uint32_t>(symbol_leaves_.size()),
                              static_cast<std::uint32_t>(constant_leaves_.size()),
                              static_cast<std::uint32_t>(operators_.size())});
            const std::size_t var_begin = vars_.size();
            flatten(s.constraints[k].condition.root(), s.variables, spans_.back().nodes);
            std::sort(vars_.begin() + static_cast<std::ptrdiff_t>(var_begin), vars_.end());
            vars_.erase(std::unique(vars_.begin() + static_cast<std::ptrdiff_t>(var_begin), vars_.end()), vars_.end());
            for (std::size_t j = var_begin; j < vars_.size(); ++j) watch(static_cast<std::size_t>(vars_[j]), k);
        }
    }

    /// Narrows `dom` towards a fixpoint of all constraints; false when a
    /// domain became empty (`*failed` names the constraint). `changed`: `dom`
    /// is a fixpoint except for that variable's domain (a search branch of a
    /// propagated box), so only the constraints that mention it start queued.
    /// `entailed` (one flag per constraint, or null): constraints known to hold
    /// everywhere in `dom`. They are skipped, and a constraint whose interval
    /// evaluation is true on the whole box is flagged. A box's flags stay true
    /// in every box inside it (interval evaluation is monotone), so the search
    /// hands them down; skipping is exact, as revising such a constraint
    /// narrows nothing, and the queue order (and its round limit) is unchanged.
    bool propagate(std::vector<interval>& dom, std::size_t max_rounds, std::size_t* failed,
                   std::optional<std::size_t> changed = std::nullopt, std::vector<char>* entailed = nullptr) const {
        if (dom.size() != watch_head_.size() || (entailed != nullptr && entailed->size() != spans_.size())) {
            throw error("tensoracle::gen::detail::compiled_system::propagate",
                        "the box or the entailment flags do not match the compiled system");
        }
        return propagate(dom.data(), max_rounds, failed, changed, entailed != nullptr ? entailed->data() : nullptr);
    }
    /// The same on a box of size() variables and size() flags held elsewhere (the search's stack).
    bool propagate(interval* dom, std::size_t max_rounds, std::size_t* failed, std::optional<std::size_t> changed,
                   char* entailed) const {
        // Scratch reused across calls: the search propagates at every choice point.
        auto& queued = scratch_.queued;
        auto& queue = scratch_.queue;
        auto& fwd = scratch_.fwd;
        auto& touched = scratch_.touched;
        if (changed) {
            queued.assign(spans_.size(), 0);
            queue.clear();
            for (std::int32_t e = watch_head_[*changed]; e >= 0; e = watch_next_[static_cast<std::size_t>(e)]) {
                const std::size_t w = watch_constraint_[static_cast<std::size_t>(e)];
                queued[w] = 1;
                queue.push_back(w);
            }
        } else {
            queued.assign(spans_.size(), 1);
            queue.resize(spans_.size());
            for (std::size_t k = 0; k < queue.size(); ++k) queue[k] = k;
        }
        std::size_t head = 0;
        const std::size_t limit = max_rounds * std::max<std::size_t>(spans_.size(), 1);
        while (head < queue.size()) {
            if (head > limit) break;  // a slow fixpoint: stop narrowing (still sound)
            const std::size_t k = queue[head++];
            queued[k] = 0;
            if (entailed != nullptr && entailed[k] != 0) continue;
            touched.clear();
            bool holds = false;
            if (!revise(view(k), dom, fwd, touched, holds)) {
                if (failed != nullptr) *failed = k;
                return false;
            }
            if (holds && entailed != nullptr) entailed[k] = 1;
            for (const auto v : touched) {
                for (std::int32_t e = watch_head_[static_cast<std::size_t>(v)]; e >= 0; e = watch_next_[static_cast<std::size_t>(e)]) {
                    const std::size_t w = watch_constraint_[static_cast<std::size_t>(e)];
                    if (!queued[w] && w != k) {
                        queued[w] = 1;
                        queue.push_back(w);
                    }
                }
            }
        }
        return true;
    }

    /// Whether `values` (one per variable) satisfies every constraint under
    /// exact evaluation, as spec::expr::eval decides it: int64 overflow or a
    /// division by zero on a path the evaluation takes fails the constraint;
    /// on a branch it skips (the other side of a short-circuit `&&`/`||`, the
    /// unchosen arm of a select) it does not. The search checks each candidate
    /// answer with this rather than building a name -> value map for eval.
    [[nodiscard]] bool satisfied_exactly(const std::vector<std::int64_t>& values) const {
        if (values.size() != watch_head_.size()) {
            throw error("tensoracle::gen::detail::compiled_system::satisfied_exactly",
                        "got " + std::to_string(values.size()) + " values for " + std::to_string(watch_head_.size()) +
                            " variables");
        }
        auto& val = scratch_.exact;
        auto& bad = scratch_.exact_bad;
        for (std::size_t k = 0; k < spans_.size(); ++k) {
            const flat_constraint f = view(k);
            val.resize(f.nodes.size());
            bad.resize(f.nodes.size());
            for (std::size_t i = 0; i < f.nodes.size(); ++i) exact_node(f, i, values, val, bad);
            if (bad.back() != 0 || val.back() == 0) return false;
        }
        return true;
    }

    [[nodiscard]] std::size_t size() const noexcept { return spans_.size(); }
    /// Constraint k, compiled.
    [[nodiscard]] flat_constraint view(std::size_t k) const {
        const auto& a = spans_[k];
        const auto b = k + 1 < spans_.size() ? spans_[k + 1] : span_ends();
        const auto part = [](const auto& v, std::uint32_t from, std::uint32_t to) {
            return std::span(v.data() + from, to - from);
        };
        return {part(nodes_, a.nodes, b.nodes), part(vars_, a.vars, b.vars),
                part(symbol_leaves_, a.symbols, b.symbols), part(constant_leaves_, a.constants, b.constants),
                part(operators_, a.operators, b.operators)};
    }
    /// Whether this is `s` compiled up to its last constraint (not a stale compile).
    [[nodiscard]] bool compiles(const constraint_system& s) const noexcept {
        return spans_.size() == s.constraints.size() && watch_head_.size() == s.variables.size();
    }
    /// Whether any constraint mentions variable i.
    [[nodiscard]] bool constrained(std::size_t i) const noexcept { return watch_head_[i] >= 0; }

private:
    // Appends n's subtree to nodes_ in post-order; indices are relative to `base`.
    std::int32_t flatten(const spec::expr::node& n, const std::vector<variable>& vars, std::uint32_t base) {
        flat_node out{n.kind};
        if (n.kind == spec::expr_kind::constant) {
            out.value = n.value;
        } else if (n.kind == spec::expr_kind::symbol) {
            std::size_t i = vars.size();
            for (std::size_t at = n.name_hash & (slots_.size() - 1);; at = (at + 1) & (slots_.size() - 1)) {
                const std::int32_t v = slots_[at];
                if (v < 0) break;
                if (name_hash_[static_cast<std::size_t>(v)] == n.name_hash && vars[static_cast<std::size_t>(v)].name == n.name) {
                    i = static_cast<std::size_t>(v);
                    break;
                }
            }
            if (i == vars.size()) {
                throw error("tensoracle::gen::solve", "constraint mentions '" + n.name + "', which is not a variable of the system");
            }
            out.var = static_cast<std::int32_t>(i);
            vars_.push_back(out.var);
        } else {
            if (n.lhs) out.a = flatten(*n.lhs, vars, base);
            if (n.rhs) out.b = flatten(*n.rhs, vars, base);
            if (n.cond) out.cond = flatten(*n.cond, vars, base);
        }
        nodes_.push_back(out);
        const auto at = static_cast<std::int32_t>(nodes_.size() - 1 - base);
        if (n.kind == spec::expr_kind::symbol) symbol_leaves_.emplace_back(at, out.var);
        else if (n.kind == spec::expr_kind::constant) constant_leaves_.push_back(at);
        else operators_.push_back(at);
        return at;
    }

    // Variable var's watcher list gains constraint w (kept in insertion order:
    // the propagation queue's order, and so its round limit, depend on it).
    void watch(std::size_t var, std::size_t w) {
        const auto e = static_cast<std::int32_t>(watch_constraint_.size());
        watch_constraint_.push_back(w);
        watch_next_.push_back(-1);
        if (watch_tail_[var] >= 0) watch_next_[static_cast<std::size_t>(watch_tail_[var])] = e;
        else watch_head_[var] = e;
        watch_tail_[var] = e;
    }

    // Node i from its (already evaluated) children; bad[i]: evaluating it fails.
    static void exact_node(const flat_constraint& f, std::size_t i, const std::vector<std::int64_t>& values,
                           std::vector<std::int64_t>& val, std::vector<char>& bad) {
        using K = spec::expr_kind;
        const auto& n = f.nodes[i];
        const auto at = [&](std::int32_t c) { return static_cast<std::size_t>(c); };
        std::int64_t r = 0;
        char fail = 0;
        switch (n.kind) {
            case K::constant: r = n.value; break;
            case K::symbol: r = values[static_cast<std::size_t>(n.var)]; break;
            case K::logical_not:
                fail = bad[at(n.a)];
                r = val[at(n.a)] == 0 ? 1 : 0;
                break;
            case K::logical_and:  // short-circuits: the right side counts only when the left is true
                if (bad[at(n.a)] != 0) fail = 1;
                else if (val[at(n.a)] == 0) r = 0;
                else fail = bad[at(n.b)], r = val[at(n.b)] != 0 ? 1 : 0;
                break;
            case K::logical_or:
                if (bad[at(n.a)] != 0) fail = 1;
                else if (val[at(n.a)] != 0) r = 1;
                else fail = bad[at(n.b)], r = val[at(n.b)] != 0 ? 1 : 0;
                break;
            case K::select: {
                if (bad[at(n.cond)] != 0) {
                    fail = 1;
                    break;
                }
                const std::size_t arm = val[at(n.cond)] != 0 ? at(n.a) : at(n.b);
                fail = bad[arm];
                r = val[arm];
                break;
            }
            default: {
                if (bad[at(n.a)] != 0 || bad[at(n.b)] != 0) {
                    fail = 1;
                    break;
                }
                const std::int64_t a = val[at(n.a)], b = val[at(n.b)];
                switch (n.kind) {
                    case K::add: fail = __builtin_add_overflow(a, b, &r) ? 1 : 0; break;
                    case K::sub: fail = __builtin_sub_overflow(a, b, &r) ? 1 : 0; break;
                    case K::mul: fail = __builtin_mul_overflow(a, b, &r) ? 1 : 0; break;
                    case K::div:
                    case K::mod: {
                        if (b == 0 || (a == std::numeric_limits<std::int64_t>::min() && b == -1 && n.kind == K::div)) {
                            fail = 1;
                            break;
                        }
                        if (b == -1) {  // a % -1 is 0; a / -1 is -a (min handled above)
                            r = n.kind == K::div ? -a : 0;
                            break;
                        }
                        std::int64_t q = a / b, m = a % b;
                        if (m < 0) {  // Euclidean: the remainder is non-negative
                            // |b| in unsigned arithmetic: b may be INT64_MIN, whose negation overflows
                            m = static_cast<std::int64_t>(
                                static_cast<std::uint64_t>(m) +
                                (b > 0 ? static_cast<std::uint64_t>(b) : std::uint64_t{0} - static_cast<std::uint64_t>(b)));
                            q += (b > 0 ? -1 : 1);
                        }
                        r = n.kind == K::div ? q : m;
                        break;
                    }
                    case K::min: r = a < b ? a : b; break;
                    case K::max: r = a > b ? a : b; break;
                    case K::eq: r = a == b; break;
                    case K::ne: r = a != b; break;
                    case K::lt: r = a < b; break;
                    case K::le: r = a <= b; break;
                    case K::gt: r = a > b; break;
                    case K::ge: r = a >= b; break;
                    default: break;
                }
            }
        }
        val[i] = r;
        bad[i] = fail;
    }

    static bool truthy_known(interval i) noexcept { return !i.empty() && !i.contains(0); }
    static bool falsy_known(interval i) noexcept { return i.lo == 0 && i.hi == 0; }

    // Forward: the interval of every node, bottom-up.
    static void forward(const flat_constraint& f, const interval* dom, std::vector<interval>& out) {
        using K = spec::expr_kind;
        out.resize(f.nodes.size());
        interval* const v = out.data();
        const flat_node* const nodes = f.nodes.data();
        for (const auto& [i, var] : f.symbol_leaves) v[i] = dom[static_cast<std::size_t>(var)];
        for (const auto i : f.constant_leaves) v[i] = {nodes[i].value, nodes[i].value};
        for (const auto i : f.operators) {
            const auto& n = nodes[i];
            // Every operator has a left operand; all but logical_not a right one.
            const interval A = v[n.a];
            const interval B = n.b >= 0 ? v[n.b] : interval{};
            interval r{0, 1};
            switch (n.kind) {
                case K::constant:
                case K::symbol: break;  // leaves: set above
                case K::add: r = {clamp_big(__int128(A.lo) + B.lo), clamp_big(__int128(A.hi) + B.hi)}; break;
                case K::sub: r = {clamp_big(__int128(A.lo) - B.hi), clamp_big(__int128(A.hi) - B.lo)}; break;
                case K::mul: {
                    const __int128 p[4] = {__int128(A.lo) * B.lo, __int128(A.lo) * B.hi, __int128(A.hi) * B.lo,
                                           __int128(A.hi) * B.hi};
                    r = {clamp_big(*std::min_element(p, p + 4)), clamp_big(*std::max_element(p, p + 4))};
                    break;
                }
                case K::div: r = div_range(A, B); break;
                case K::mod: {
                    if (A.singleton() && B.singleton()) {
                        if (B.lo == 0) {
                            r = {};  // division by zero: no value
                        } else {
                            const std::int64_t q = euclid_div(A.lo, B.lo);
                            r.lo = r.hi = clamp_big(__int128(A.lo) - __int128(q) * B.lo);
                        }
                        break;
                    }
                    const std::int64_t m = std::max(B.hi > 0 ? B.hi : 0, B.lo < 0 ? clamp_big(-__int128(B.lo)) : 0);
                    r = {0, m > 0 ? m - 1 : 0};
                    if (A.lo >= 0) r.hi = std::min(r.hi, A.hi);
                    if (A.lo >= 0 && B.lo > A.hi) r = A;  // a < b: a % b = a
                    break;
                }
                case K::min: r = {std::min(A.lo, B.lo), std::min(A.hi, B.hi)}; break;
                case K::max: r = {std::max(A.lo, B.lo), std::max(A.hi, B.hi)}; break;
                case K::eq:
                    if (A.singleton() && B.singleton() && A.lo == B.lo) r = {1, 1};
                    else if (meet(A, B).empty()) r = {0, 0};
                    break;
                case K::ne:
                    if (A.singleton() && B.singleton() && A.lo == B.lo) r = {0, 0};
                    else if (meet(A, B).empty()) r = {1, 1};
                    break;
                case K::lt: r = A.hi < B.lo ? interval{1, 1} : (A.lo >= B.hi ? interval{0, 0} : r); break;
                case K::le: r = A.hi <= B.lo ? interval{1, 1} : (A.lo > B.hi ? interval{0, 0} : r); break;
                case K::gt: r = A.lo > B.hi ? interval{1, 1} : (A.hi <= B.lo ? interval{0, 0} : r); break;
                case K::ge: r = A.lo >= B.hi ? interval{1, 1} : (A.hi < B.lo ? interval{0, 0} : r); break;
                case K::logical_and:
                    if (falsy_known(A) || falsy_known(B)) r = {0, 0};
                    else if (truthy_known(A) && truthy_known(B)) r = {1, 1};
                    break;
                case K::logical_or:
                    if (truthy_known(A) || truthy_known(B)) r = {1, 1};
                    else if (falsy_known(A) && falsy_known(B)) r = {0, 0};
                    break;
                case K::logical_not:
                    if (truthy_known(A)) r = {0, 0};
                    else if (falsy_known(A)) r = {1, 1};
                    break;
                case K::select: {
                    const interval C = v[n.cond];
                    r = truthy_known(C) ? A : (falsy_known(C) ? B : hull(A, B));
                    break;
                }
            }
            v[i] = r;
        }
    }

    static interval div_range(interval A, interval B) {
        interval r{};  // empty: only b == 0
        auto part = [&](std::int64_t lo, std::int64_t hi) {
            if (lo > hi) return;
            const std::int64_t c[4] = {euclid_div(A.lo, lo), euclid_div(A.lo, hi), euclid_div(A.hi, lo), euclid_div(A.hi, hi)};
            r = hull(r, {*std::min_element(c, c + 4), *std::max_element(c, c + 4)});
        };
        part(std::max<std::int64_t>(B.lo, 1), B.hi);
        part(B.lo, std::min<std::int64_t>(B.hi, -1));
        return r;
    }

    // Backward: narrows node i to target t, and its children accordingly.
    static bool narrow(const flat_constraint& f, std::size_t i, interval t, std::vector<interval>& v,
                       interval* dom, std::vector<std::int32_t>& touched) {
        using K = spec::expr_kind;
        const auto& n = f.nodes[i];
        interval cur = meet(v[i], t);
        if (cur.empty()) return false;
        v[i] = cur;
        auto child = [&](std::int32_t c, interval target) {
            return narrow(f, static_cast<std::size_t>(c), target, v, dom, touched);
        };
        const interval A = n.a >= 0 ? v[static_cast<std::size_t>(n.a)] : interval{};
        const interval B = n.b >= 0 ? v[static_cast<std::size_t>(n.b)] : interval{};
        const interval any{-big, big};
        switch (n.kind) {
            case K::constant: return cur.contains(n.value);
            case K::symbol: {
                auto& d = dom[static_cast<std::size_t>(n.var)];
                const interval nd = meet(d, cur);
                if (nd.empty()) return false;
                if (!(nd == d)) {
                    d = nd;
                    touched.push_back(n.var);
                }
                return true;
            }
            case K::add:
                return child(n.a, {clamp_big(__int128(cur.lo) - B.hi), clamp_big(__int128(cur.hi) - B.lo)}) &&
                       child(n.b, {clamp_big(__int128(cur.lo) - v[static_cast<std::size_t>(n.a)].hi),
                                   clamp_big(__int128(cur.hi) - v[static_cast<std::size_t>(n.a)].lo)});
            case K::sub:
                return child(n.a, {clamp_big(__int128(cur.lo) + B.lo), clamp_big(__int128(cur.hi) + B.hi)}) &&
                       child(n.b, {clamp_big(__int128(v[static_cast<std::size_t>(n.a)].lo) - cur.hi),
                                   clamp_big(__int128(v[static_cast<std::size_t>(n.a)].hi) - cur.lo)});
            case K::mul: {
                auto quotient = [&](interval other) -> interval {
                    if (other.contains(0)) return any;  // 0 * x covers anything
                    std::int64_t lo = big, hi = -big;
                    for (const std::int64_t y : {cur.lo, cur.hi}) {
                        for (const std::int64_t d : {other.lo, other.hi}) {
                            lo = std::min(lo, ceil_div(y, d));
                            hi = std::max(hi, floor_div(y, d));
                        }
                    }
                    // cur spans 0 with one-signed divisor: zero is reachable
                    if (cur.contains(0)) {
                        lo = std::min<std::int64_t>(lo, 0);
                        hi = std::max<std::int64_t>(hi, 0);
                    }
                    return {lo, hi};
                };
                if (!child(n.a, quotient(B))) return false;
                return child(n.b, quotient(v[static_cast<std::size_t>(n.a)]));
            }
            case K::div:
            case K::mod: {
                if (n.kind == K::mod || !(B.lo > 0)) return true;
                // b > 0: q = floor(a / b), so b*q <= a <= b*q + b - 1.
                const __int128 lo = std::min(__int128(cur.lo) * B.lo, __int128(cur.lo) * B.hi);
                const __int128 hi = std::max(__int128(cur.hi) * B.hi + B.hi - 1, __int128(cur.hi) * B.lo + B.lo - 1);
                return child(n.a, {clamp_big(lo), clamp_big(hi)});
            }
            case K::min:
                return child(n.a, {cur.lo, big}) && child(n.b, {cur.lo, big}) &&
                       (v[static_cast<std::size_t>(n.b)].lo <= cur.hi || child(n.a, {-big, cur.hi})) &&
                       (v[static_cast<std::size_t>(n.a)].lo <= cur.hi || child(n.b, {-big, cur.hi}));
            case K::max:
                return child(n.a, {-big, cur.hi}) && child(n.b, {-big, cur.hi}) &&
                       (v[static_cast<std::size_t>(n.b)].hi >= cur.lo || child(n.a, {cur.lo, big})) &&
                       (v[static_cast<std::size_t>(n.a)].hi >= cur.lo || child(n.b, {cur.lo, big}));
            case K::eq:
            case K::ne:
            case K::lt:
            case K::le:
            case K::gt:
            case K::ge: {
                if (!cur.singleton()) return true;
                K k = n.kind;
                if (cur.lo == 0) {  // the comparison must be false: negate it
                    switch (k) {
                        case K::eq: k = K::ne; break;
                        case K::ne: k = K::eq; break;
                        case K::lt: k = K::ge; break;
                        case K::le: k = K::gt; break;
                        case K::gt: k = K::le; break;
                        default: k = K::lt; break;
                    }
                }
                switch (k) {
                    case K::eq: return child(n.a, B) && child(n.b, v[static_cast<std::size_t>(n.a)]);
                    case K::ne:
                        if (B.singleton()) {
                            if (A.lo == B.lo && !child(n.a, {A.lo + 1, big})) return false;
                            if (A.hi == B.lo && !child(n.a, {-big, v[static_cast<std::size_t>(n.a)].hi - 1})) return false;
                        }
                        if (A.singleton()) {
                            const interval b2 = v[static_cast<std::size_t>(n.b)];
                            if (b2.lo == A.lo && !child(n.b, {b2.lo + 1, big})) return false;
                            if (v[static_cast<std::size_t>(n.b)].hi == A.lo &&
                                !child(n.b, {-big, v[static_cast<std::size_t>(n.b)].hi - 1})) {
                                return false;
                            }
                        }
                        return true;
                    case K::lt: return child(n.a, {-big, B.hi - 1}) && child(n.b, {v[static_cast<std::size_t>(n.a)].lo + 1, big});
                    case K::le: return child(n.a, {-big, B.hi}) && child(n.b, {v[static_cast<std::size_t>(n.a)].lo, big});
                    case K::gt: return child(n.a, {B.lo + 1, big}) && child(n.b, {-big, v[static_cast<std::size_t>(n.a)].hi - 1});
                    default: return child(n.a, {B.lo, big}) && child(n.b, {-big, v[static_cast<std::size_t>(n.a)].hi});
                }
            }
            case K::logical_and:
                if (truthy_known(cur)) return require(f, n.a, true, v, dom, touched) && require(f, n.b, true, v, dom, touched);
                if (falsy_known(cur)) {
                    if (truthy_known(A)) return require(f, n.b, false, v, dom, touched);
                    if (truthy_known(B)) return require(f, n.a, false, v, dom, touched);
                }
                return true;
            case K::logical_or:
                if (falsy_known(cur)) return require(f, n.a, false, v, dom, touched) && require(f, n.b, false, v, dom, touched);
                if (truthy_known(cur)) {
                    if (falsy_known(A)) return require(f, n.b, true, v, dom, touched);
                    if (falsy_known(B)) return require(f, n.a, true, v, dom, touched);
                }
                return true;
            case K::logical_not:
                if (truthy_known(cur)) return require(f, n.a, false, v, dom, touched);
                if (falsy_known(cur)) return require(f, n.a, true, v, dom, touched);
                return true;
            case K::select: {
                const interval C = v[static_cast<std::size_t>(n.cond)];
                if (truthy_known(C)) return child(n.a, cur);
                if (falsy_known(C)) return child(n.b, cur);
                const bool a_ok = !meet(A, cur).empty(), b_ok = !meet(B, cur).empty();
                if (!a_ok && !b_ok) return false;
                if (!a_ok) return require(f, n.cond, false, v, dom, touched) && child(n.b, cur);
                if (!b_ok) return require(f, n.cond, true, v, dom, touched) && child(n.a, cur);
                return true;
            }
        }
        return true;
    }

    // A boolean-used node must be nonzero (truth) or zero.
    static bool require(const flat_constraint& f, std::int32_t c, bool truth, std::vector<interval>& v,
                        interval* dom, std::vector<std::int32_t>& touched) {
        const interval cur = v[static_cast<std::size_t>(c)];
        if (!truth) return narrow(f, static_cast<std::size_t>(c), {0, 0}, v, dom, touched);
        if (cur.lo == 0 && cur.hi == 0) return false;
        if (cur.lo == 0) return narrow(f, static_cast<std::size_t>(c), {1, cur.hi}, v, dom, touched);
        if (cur.hi == 0) return narrow(f, static_cast<std::size_t>(c), {cur.lo, -1}, v, dom, touched);
        return true;  // 0 strictly inside an integer range: nothing to narrow
    }

    // `holds`: the constraint is true on the whole box (then nothing narrows).
    static bool revise(const flat_constraint& f, interval* dom, std::vector<interval>& v,
                       std::vector<std::int32_t>& touched, bool& holds) {
        forward(f, dom, v);
        holds = truthy_known(v.back());
        if (holds) return true;
        return require(f, static_cast<std::int32_t>(f.nodes.size() - 1), true, v, dom, touched);
    }

    struct scratch {
        std::vector<char> queued;
        std::vector<std::size_t> queue;
        std::vector<interval> fwd;
        std::vector<std::int32_t> touched;
        std::vector<std::int64_t> exact;  // satisfied_exactly's node values
        std::vector<char> exact_bad;
    };
    mutable scratch scratch_;  // propagate's buffers (a compiled system is used by one thread)
    // Where constraint k starts in each array; it ends where k + 1 starts.
    struct starts {
        std::uint32_t nodes, vars, symbols, constants, operators;
    };
    [[nodiscard]] starts span_ends() const noexcept {
        return {static_cast<std::uint32_t>(nodes_.size()), static_cast<std::uint32_t>(vars_.size()),
                static_cast<std::uint32_t>(symbol_leaves_.size()), static_cast<std::uint32_t>(constant_leaves_.size()),
                static_cast<std::uint32_t>(operators_.size())};
    }
    std::vector<starts> spans_;
    std::vector<flat_node> nodes_;
    std::vector<std::int32_t> vars_;
    std::vector<std::pair<std::int32_t, std::int32_t>> symbol_leaves_;
    std::vector<std::int32_t> constant_leaves_;
    std::vector<std::int32_t> operators_;
    // Per variable, the constraints that mention it: a linked list in two
    // shared arrays (head and tail per variable, -1 when none).
    std::vector<std::int32_t> watch_head_, watch_tail_, watch_next_;
    std::vector<std::size_t> watch_constraint_;
    std::vector<std::size_t> name_hash_;  // std::hash of each variable's name (as expr symbols carry)
    std::vector<std::int32_t> slots_;     // variable indices by name hash (open addressing; -1: empty)
};

/// A compiled_system for one use at a time on this thread, empty but with
/// the storage of the one compiled before it (a nested lease gets its own).
class reused_compiled_system {
public:
    reused_compiled_system() {
        auto& s = shared();
        if (!s.busy) {
            s.busy = true;
            system_ = &s.system;
            system_->reset();
        } else {
            own_.emplace();
            system_ = &*own_;
        }
    }
    reused_compiled_system(const reused_compiled_system&) = delete;
    reused_compiled_system& operator=(const reused_compiled_system&) = delete;
    ~reused_compiled_system() {
        if (!own_) shared().busy = false;
    }
    [[nodiscard]] compiled_system& get() noexcept { return *system_; }

private:
    struct slot {
        compiled_system system;
        bool busy = false;
    };
    static slot& shared() {
        thread_local slot s;
        return s;
    }
    std::optional<compiled_system> own_;
    compiled_system* system_ = nullptr;
};

}  // namespace detail

/// The domains `dom` narrowed by propagation with `compiled` (the system
/// compiled once: see detail::compiled_system::extend); nullopt when a domain
/// became empty (`*conflict` names the constraint).
[[nodiscard]] inline std::optional<std::vector<interval>> propagate(const constraint_system& system,
                                                                    const detail::compiled_system& compiled,
                                                                    std::vector<interval> dom,
                                                                    std::string* conflict = nullptr,
                                                                    const solver_options& options = {}) {
    if (dom.size() != system.variables.size() || !compiled.compiles(system)) {
        throw error("tensoracle::gen::propagate", "the compiled system or the domains do not match the system");
    }
    std::size_t failed = 0;
    if (std::any_of(dom.begin(), dom.end(), [](interval d) { return d.empty(); })) {
        if (conflict != nullptr) *conflict = "a variable has an empty domain";
        return std::nullopt;
    }
    if (!compiled.propagate(dom, options.max_propagation_rounds, &failed)) {
        if (conflict != nullptr) {
            const auto& c = system.constraints[failed];
            *conflict = c.condition.to_string() + " (" + c.reason + ")";
        }
        return std::nullopt;
    }
    return dom;
}

/// The variables' declared domains, one per variable.
[[nodiscard]] inline std::vector<interval> domains_of(const constraint_system& system) {
    std::vector<interval> dom(system.variables.size());
    for (std::size_t i = 0; i < dom.size(); ++i) dom[i] = system.variables[i].domain;
    return dom;
}

/// The domains of `system` narrowed by propagation alone; nullopt when a
/// domain became empty (`*conflict` names the constraint).
[[nodiscard]] inline std::optional<std::vector<interval>> propagate(const constraint_system& system,
                                                                    std::string* conflict = nullptr,
                                                                    const solver_options& options = {}) {
    const detail::compiled_system compiled(system);
    return propagate(system, compiled, domains_of(system), conflict, options);
}

/// Solves `system` by propagation and randomized search; `g` picks values, so
/// different generators give different (valid) solutions.
/// `root` replaces the variables' declared domains (it must lie inside them),
/// and `compiled` is `system` compiled once (see propagate).
[[nodiscard]] inline solve_result solve(const constraint_system& system, const detail::compiled_system& compiled,
                                        std::vector<interval> root, rng& g, const solver_options& options = {}) {
    solve_result result;
    if (root.size() != system.variables.size() || !compiled.compiles(system)) {
        throw error("tensoracle::gen::solve", "the compiled system or the domains do not match the system");
    }
    for (std::size_t i = 0; i < root.size(); ++i) {
        root[i] = detail::meet(root[i], system.variables[i].domain);
        if (root[i].empty()) {
            result.status = solve_status::unsat;
            result.conflict = "variable " + system.variables[i].name + " has an empty domain";
            return result;
        }
    }
    std::size_t failed = 0;
    // Constraints true on a whole box are not revised again inside it (see propagate).
    std::vector<char> root_entailed(compiled.size(), 0);
    if (!compiled.propagate(root, options.max_propagation_rounds, &failed, std::nullopt, &root_entailed)) {
        result.status = solve_status::unsat;
        if (options.explain) {
            const auto& c = system.constraints[failed];
            result.conflict = c.condition.to_string() + " (" + c.reason + ")";
        } else {
            result.conflict = "constraint " + std::to_string(failed) + " (not explained: solver_options::explain is off)";
        }
        return result;
    }
    // Depth-first search over domain splits: pick the variable with the
    // smallest non-singleton domain, a value v in it (often a special one:
    // -1, 0, 1 or a bound, where shape rules have their solutions), and
    // branch on {v}, then the two sides of v in random order. Branches are
    // propagated when popped, not when pushed (the first usually succeeds).
    // Randomized restarts with a growing node budget cut the heavy tail of
    // one unlucky early choice; a restart that exhausts its tree without
    // hitting the budget has searched everything, so the system is unsat.
    std::size_t budget = std::min<std::size_t>(64, options.max_nodes);
    // The stack's boxes live in two arrays (domains, entailment flags), one
    // slot per box: a popped box is processed in place at the top, and its
    // branches are written above it. Nothing is allocated per choice point.
    const std::size_t nv = root.size(), nc = compiled.size();
    std::vector<interval> doms;
    std::vector<char> flags;
    std::vector<std::int64_t> values(nv);
    // A box: its slot, and the variable it differs in from its propagated parent.
    struct box {
        std::size_t slot;
        std::size_t split;
    };
    std::vector<box> stack;
    for (;;) {
        std::size_t nodes = 0;
        bool cut = false;
        doms.assign(root.begin(), root.end());
        flags.assign(root_entailed.begin(), root_entailed.end());
        stack.clear();
        stack.push_back({0, nv});
        while (!stack.empty()) {
            if (nodes >= budget) {
                cut = true;
                break;
            }
            ++nodes;
            ++result.nodes;
            const box entry = stack.back();
            stack.pop_back();
            // Slots above this one belong to boxes already popped.
            doms.resize((entry.slot + 1) * nv);
            flags.resize((entry.slot + 1) * nc);
            interval* dom = doms.data() + entry.slot * nv;
            const std::size_t split = entry.split;
            if (split < nv &&
                !compiled.propagate(dom, options.max_propagation_rounds, nullptr, split, flags.data() + entry.slot * nc)) {
                continue;
            }
            // Constrained variables first (smallest domain first: fail early);
            // free ones last, where any value works.
            std::size_t pick = nv;
            auto better = [&](std::size_t i) {
                if (pick == nv) return true;
                const bool ci = compiled.constrained(i), cp = compiled.constrained(pick);
                if (ci != cp) return ci;
                return dom[i].width() < dom[pick].width();
            };
            for (std::size_t i = 0; i < nv; ++i) {
                if (!dom[i].singleton() && better(i)) pick = i;
            }
            if (pick == nv) {
                for (std::size_t i = 0; i < nv; ++i) values[i] = dom[i].lo;
                if (compiled.satisfied_exactly(values)) {
                    result.status = solve_status::sat;
                    result.values = std::move(values);
                    return result;
                }
                continue;  // propagation is a relaxation: an all-singleton box can still fail exactly
            }
            const interval d = dom[pick];
            std::int64_t v = d.lo + static_cast<std::int64_t>(g.below(d.width() + 1));
            if (compiled.constrained(pick) && g.bernoulli(0.25)) {
                const std::int64_t special[] = {-1, 0, 1, d.lo, d.hi};
                const std::int64_t s = special[g.below(5)];
                if (d.contains(s)) v = s;
            }
            interval branches[3] = {{v, v}, {}, {}};
            const bool low_first = g.bernoulli(0.5);
            if (v > d.lo) branches[low_first ? 2 : 1] = {d.lo, v - 1};
            if (v < d.hi) branches[low_first ? 1 : 2] = {v + 1, d.hi};
            // Push in reverse so {v} is explored first. Slots rise with the
            // stack (the top box has the highest slot, so popping it frees
            // everything above): the first pushed branch takes the parent's
            // slot, the others copy the parent's box into the slots above.
            int order[3];
            std::size_t count = 0;
            for (int b = 2; b >= 0; --b) {
                if (!branches[b].empty()) order[count++] = b;
            }
            const std::size_t parent = entry.slot;
            doms.resize((parent + count) * nv);
            flags.resize((parent + count) * nc);
            for (std::size_t j = 0; j < count; ++j) {
                const std::size_t slot = parent + count - 1 - j;  // the parent's own slot last
                if (slot != parent) {
                    std::copy_n(doms.data() + parent * nv, nv, doms.data() + slot * nv);
                    std::copy_n(flags.data() + parent * nc, nc, flags.data() + slot * nc);
                }
                doms[slot * nv + pick] = branches[order[count - 1 - j]];
            }
            for (std::size_t j = 0; j < count; ++j) stack.push_back({parent + j, pick});
        }
        if (!cut) break;  // the whole tree was searched
        if (result.nodes >= options.max_nodes) {
            result.status = solve_status::unknown;
            return result;
        }
        budget = std::min(budget * 2, options.max_nodes - result.nodes);
    }
    result.status = solve_status::unsat;  // the whole finite space was searched
    result.conflict = "no assignment satisfies every constraint (exhaustive search)";
    return result;
}

/// Solves `system` by propagation and randomized search; `g` picks values, so
/// different generators give different (valid) solutions.
[[nodiscard]] inline solve_result solve(const constraint_system& system, rng& g, const solver_options& options = {}) {
    const detail::compiled_system compiled(system);
    return solve(system, compiled, domains_of(system), g, options);
}

}  // namespace tensoracle::gen
// ---- end tensoracle/gen/solver.hpp ----
// ---- begin tensoracle/io/onnx_known_issues.hpp ----
// tensoracle: where ONNX 1.12's shape inference (Debian 12's libonnx) gives
// a different output shape than the operator documents, modelled from its
// inference code so a caller can tell these cases apart without linking
// libonnx. The generator avoids them by default (gen::config::
// avoid_onnx_shape_inference_bugs) so its graphs pass strict shape inference
// in that ONNX; tests/io/test_onnx.cpp checks this model against the real
// library on random configurations. Evidence and examples: docs/FINDINGS.md.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>


namespace tensoracle::io {

namespace detail {
inline std::int64_t int_attribute(const spec::attribute_map& a, std::string_view key, std::int64_t fallback) {
    const auto it = a.find(key);
    if (it == a.end()) return fallback;
    const auto* v = std::get_if<std::int64_t>(&it->second);
    return v == nullptr ? fallback : *v;
}
inline std::vector<std::int64_t> ints_attribute(const spec::attribute_map& a, std::string_view key, std::size_t n,
                                                std::int64_t fallback) {
    const auto it = a.find(key);
    const auto* v = it == a.end() ? nullptr : std::get_if<std::vector<std::int64_t>>(&it->second);
    return v == nullptr ? std::vector<std::int64_t>(n, fallback) : *v;
}
inline std::string string_attribute(const spec::attribute_map& a, std::string_view key) {
    const auto it = a.find(key);
    const auto* v = it == a.end() ? nullptr : std::get_if<std::string>(&it->second);
    return v == nullptr ? std::string("NOTSET") : *v;
}
}  // namespace detail

/// Whether `onnx_1_12_inferred_shape` models this op (callers skip the rest otherwise).
[[nodiscard]] inline bool has_onnx_1_12_shape_model(std::string_view op_type) noexcept {
    return op_type == "MaxPool" || op_type == "AveragePool" || op_type == "ConvTranspose";
}

/// The output shape ONNX 1.12's shape inference gives a MaxPool, AveragePool
/// or ConvTranspose node with these input shapes and attributes (as the node
/// carries them), or nullopt for other ops and for inputs it would reject.
/// A result of lower rank than the input is what ONNX 1.12 really produces:
/// it stops adding dimensions part way (ConvTranspose with output_shape).
[[nodiscard]] inline std::optional<shape_type> onnx_1_12_inferred_shape(std::string_view op_type,
                                                                        const std::vector<shape_type>& inputs,
                                                                        const spec::attribute_map& a) {
    using detail::int_attribute, detail::ints_attribute, detail::string_attribute;
    const bool pool = op_type == "MaxPool" || op_type == "AveragePool";
    if (!has_onnx_1_12_shape_model(op_type) || inputs.empty() || inputs[0].size() < 3) return std::nullopt;
    const auto& x = inputs[0];
    const std::size_t n = x.size() - 2;
    auto kernel = ints_attribute(a, "kernel_shape", 0, 0);
    if (kernel.empty()) {
        if (pool || inputs.size() < 2 || inputs[1].size() != x.size()) return std::nullopt;
        for (std::size_t i = 2; i < inputs[1].size(); ++i) kernel.push_back(static_cast<std::int64_t>(inputs[1][i]));
    }
    const auto strides = ints_attribute(a, "strides", n, 1);
    // AveragePool-11 has no dilations; ONNX treats them as 1 there.
    const auto dilations = op_type == "AveragePool" ? std::vector<std::int64_t>(n, 1) : ints_attribute(a, "dilations", n, 1);
    if (kernel.size() != n || strides.size() != n || dilations.size() != n) return std::nullopt;
    std::vector<std::int64_t> ek(n);
    for (std::size_t i = 0; i < n; ++i) ek[i] = (kernel[i] - 1) * dilations[i] + 1;
    const std::string auto_pad = string_attribute(a, "auto_pad");
    shape_type out;

    if (pool) {
        out = {x[0], x[1]};
        auto pads = ints_attribute(a, "pads", 2 * n, 0);
        if (pads.size() != 2 * n) return std::nullopt;
        if (a.find("pads") == a.end() && auto_pad != "NOTSET" && auto_pad != "VALID") {
            // Its SAME padding: from the remainder of x by the stride, not from ceil(x / s).
            for (std::size_t i = 0; i < n; ++i) {
                std::int64_t residual = 0;
                if (strides[i] > 1) residual = static_cast<std::int64_t>(x[2 + i]) % strides[i];
                const std::int64_t total = std::max<std::int64_t>(0, residual == 0 ? ek[i] - strides[i] : ek[i] - residual);
                const std::int64_t small = total / 2, big = total - small;
                pads[i] = auto_pad == "SAME_UPPER" ? small : big;
                pads[n + i] = auto_pad == "SAME_UPPER" ? big : small;
            }
        }
        const bool ceil_mode = int_attribute(a, "ceil_mode", 0) == 1;
        for (std::size_t i = 0; i < n; ++i) {
            const std::int64_t span = static_cast<std::int64_t>(x[2 + i]) + pads[i] + pads[n + i] - ek[i];
            // Ceil mode without dropping a last window that starts in the end padding.
            const std::int64_t positions =
                ceil_mode ? static_cast<std::int64_t>(std::ceil(static_cast<float>(span) / static_cast<float>(strides[i])))
                          : span / strides[i];
            if (1 + positions < 1) return std::nullopt;
            out.push_back(static_cast<std::size_t>(1 + positions));
        }
        return out;
    }

    // ConvTranspose: N, then W's second dim times group.
    if (inputs.size() < 2 || inputs[1].size() < 2) return std::nullopt;
    out = {x[0], inputs[1][1] * static_cast<std::size_t>(std::max<std::int64_t>(1, int_attribute(a, "group", 1)))};
    const auto output_padding = ints_attribute(a, "output_padding", n, 0);
    if (output_padding.size() != n) return std::nullopt;
    if (const auto it = a.find("output_shape"); it != a.end()) {
        const auto requested = ints_attribute(a, "output_shape", n, 0);
        if (requested.size() != n) return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            // It gives up at the first requested size below the input size (a crop), keeping
            // the dimensions it has added: the inferred rank comes out short.
            if (requested[i] < static_cast<std::int64_t>(x[2 + i])) return out;
            out.push_back(static_cast<std::size_t>(requested[i]));
        }
        return out;
    }
    auto pads = ints_attribute(a, "pads", 2 * n, 0);
    if (pads.size() != 2 * n) return std::nullopt;
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t xi = static_cast<std::int64_t>(x[2 + i]);
        const std::int64_t full = strides[i] * (xi - 1) + output_padding[i] + ek[i];
        std::int64_t total = pads[i] + pads[n + i];
        // Its SAME padding leaves output_padding out and is never negative, so the size is
        // x * s only when ek >= s and output_padding is 0.
        if (same) total = std::max<std::int64_t>(0, strides[i] * (xi - 1) + ek[i] - xi * strides[i]);
        if (auto_pad == "VALID") total = 0;
        if (full - total < 0) return std::nullopt;
        out.push_back(static_cast<std::size_t>(full - total));
    }
    return out;
}

/// Why ONNX 1.12 infers a shape other than `ours` for this node, or nullopt
/// when it agrees (or the op is not one where it is known to differ).
[[nodiscard]] inline std::optional<std::string> onnx_1_12_shape_divergence(std::string_view op_type,
                                                                           const std::vector<shape_type>& inputs,
                                                                           const spec::attribute_map& attributes,
                                                                           const shape_type& ours) {
    const auto theirs = onnx_1_12_inferred_shape(op_type, inputs, attributes);
    if (!theirs || *theirs == ours) return std::nullopt;
    std::string why = std::string(op_type) + ": ONNX 1.12 infers " + to_string(*theirs) + ", the operator gives " + to_string(ours);
    if (op_type == "ConvTranspose") {
        why += attributes.count("output_shape") != 0 ? " (output_shape below the input size)"
                                                     : " (SAME padding with output_padding or a stride above the kernel)";
    } else {
        why += " (ceil_mode keeps a last window that starts in the end padding)";
    }
    return why;
}

}  // namespace tensoracle::io
// ---- end tensoracle/io/onnx_known_issues.hpp ----

namespace tensoracle::gen {

/// A value already in the graph: its dtype and concrete shape.
struct typed_shape {
    dtype type = dtype::f32;
    shape_type shape;
    friend bool operator==(const typed_shape&, const typed_shape&) = default;
};

/// What an insertion asks of an op instance.
struct instance_request {
    const spec::op_entry* op = nullptr;
    /// Forward insertion: input slot -> the existing value it consumes.
    std::map<std::size_t, typed_shape> bound_inputs;
    /// Backward insertion: output 0 must be exactly this.
    std::optional<typed_shape> bound_output;
    /// Only output 0 may be named (single-input single-output graphs).
    bool single_output = false;
};

enum class input_role : std::uint8_t {
    absent,       ///< an optional input left out
    bound,        ///< an existing value of the graph
    placeholder,  ///< a new value of solved shape (a graph input, weight, or a later backward insertion)
    constant,     ///< data fixed here (shape-like values, hinted data): an initializer
};

struct instance_input {
    input_role role = input_role::absent;
    dtype type = dtype::f32;
    shape_type shape;
    std::optional<tensor> data;  ///< constants only
    std::optional<std::pair<double, double>> range;  ///< placeholders: the hint's initial data range
};

/// A solved op instance: what a node needs, and what it produces.
struct op_instance {
    const spec::op_entry* op = nullptr;
    std::vector<instance_input> inputs;
    spec::attribute_map attributes;  ///< as the node carries them (defaults not filled in)
    std::vector<dtype> output_dtypes;
    std::vector<shape_type> output_shapes;
    std::size_t output_count = 1;  ///< outputs the node names (Split: its __num_outputs)
};

/// Why instances were rejected, counted by reason.
struct rejection_counts {
    std::map<std::string, std::size_t> by_reason;
    void add(const std::string& reason) { ++by_reason[reason]; }
    void merge(const rejection_counts& o) {
        for (const auto& [k, v] : o.by_reason) by_reason[k] += v;
    }
    [[nodiscard]] std::size_t total() const {
        std::size_t n = 0;
        for (const auto& kv : by_reason) n += kv.second;
        return n;
    }
};

/// The attribute the interpreter fills with the node's output count.
inline constexpr std::string_view output_count_attribute = "__num_outputs";

/// What an unknown int attribute holds in the map a symbolic context carries:
/// far outside any valid value, so a spec that reads it as a number instead
/// of through `c.attr()` fails loudly (an axis out of range) rather than
/// silently using a made-up value.
inline constexpr std::int64_t unknown_placeholder = -(std::int64_t{1} << 40);

/// Choice points the solver may spend on a system narrowed to bins before
/// fewer bins are tried.
inline constexpr std::size_t binned_solver_nodes = 256;
/// Choice points for the system without bins, the last try: over 1,000
/// generated 10-node graphs, 10,437 of 10,446 solved systems needed at most
/// 1,024, while the 62 systems given up on (Reshape's element count, mostly)
/// spent 4,000 each, most of all search work (solver_options' default).
inline constexpr std::size_t unbinned_solver_nodes = 1024;

namespace detail {

/// NNSmith's Algorithm 2: a random bin of k exponential bins [2^(i-1), 2^i)
/// (the last one open), plus a zero bin and mirrored negative bins where the
/// domain allows, then a random sub-range of that bin.
inline interval pick_bin(interval dom, int k, rng& g) {
    // (signed bin index, range); reused: drawn for every unknown of every instance
    thread_local std::vector<std::pair<int, interval>> bins;
    bins.clear();
    const auto p2 = [](int i) { return std::int64_t{1} << i; };
    if (dom.contains(0)) bins.push_back({0, {0, 0}});
    for (int i = 1; i <= k; ++i) {
        const interval pos{p2(i - 1), i < k ? p2(i) - 1 : detail::big};
        const interval a = detail::meet(pos, dom);
        if (!a.empty()) bins.push_back({i, a});
        const interval neg{i < k ? -(p2(i) - 1) : -detail::big, -p2(i - 1)};
        const interval b = detail::meet(neg, dom);
        if (!b.empty()) bins.push_back({-i, b});
    }
    if (bins.empty()) return dom;
    const auto [i, range] = bins[static_cast<std::size_t>(g.below(bins.size()))];
    if (i == 0 || std::abs(i) == k) return range;
    // Two points b < t uniformly in (|i|-1, |i|): the sub-range [2^b, 2^t].
    double b = g.uniform(std::abs(i) - 1.0, static_cast<double>(std::abs(i)));
    double t = g.uniform(std::abs(i) - 1.0, static_cast<double>(std::abs(i)));
    if (b > t) std::swap(b, t);
    auto lo = static_cast<std::int64_t>(std::floor(std::exp2(b))), hi = static_cast<std::int64_t>(std::floor(std::exp2(t)));
    interval sub = i > 0 ? interval{lo, hi} : interval{-hi, -lo};
    sub = detail::meet(sub, range);
    return sub.empty() ? range : sub;
}

}  // namespace detail

/// The generator's view of one op: hints and attribute reflection, computed once.
struct op_profile {
    const spec::op_entry* op = nullptr;
    spec::hints hints;
    std::vector<spec::attribute_info> attributes;
    spec::attribute_map defaults;  ///< normalize_attributes({}) where it works
    bool vulnerable = false;       ///< has a numeric domain
    /// domain() needs required attributes (Cast's `to`): whether it has rules
    /// is known per instance only, so the generator checks every instance.
    bool domain_per_instance = false;
    bool variadic = false;

    explicit op_profile(const spec::op_entry& e) : op(&e), hints(e.hints()), attributes(e.attribute_infos()) {
        variadic = !e.inputs.empty() && e.inputs.back().variadic;
        try {
            defaults = e.normalize_attributes({});
        } catch (const error&) {
            defaults = {};  // required attributes: filled in per instance
        }
        try {
            vulnerable = !e.domain(defaults).empty();
        } catch (const error&) {
            vulnerable = false;
            domain_per_instance = true;
        }
    }
};

/// Optional hooks into generation: another solver (the Z3 backend,
/// gen/z3_backend.hpp), and an observer of every constraint system solved
/// (the cross-check test draws its systems from it).
struct instance_hooks {
    std::function<solve_result(const constraint_system&, rng&)> solver;
    std::function<void(const constraint_system&)> observe;
};

/// Solves one instance of `p.op` for `req`; nullopt (with the reason
/// counted in `rejected`) when this structure has no solution. Deterministic
/// in `g`.
[[nodiscard]] inline std::optional<op_instance> generate_instance(const op_profile& p, const instance_request& req,
                                                                  const config& cfg, rng& g,
                                                                  rejection_counts& rejected,
                                                                  const instance_hooks& hooks = {}) {
    const spec::op_entry& op = *p.op;
    const std::string name(op.op_type);
    auto reject = [&](const std::string& why) -> std::optional<op_instance> {
        rejected.add(name + ": " + why);
        return std::nullopt;
    };
    const auto& hints = p.hints;
    const std::size_t slots = op.inputs.size();
    auto slot = [&](std::size_t i) -> const spec::value_spec& { return op.inputs[std::min(i, slots - 1)]; };

    // --- structure: input count and presence ---------------------------------
    std::size_t count = slots;
    std::size_t max_bound = 0;
    for (const auto& kv : req.bound_inputs) max_bound = std::max(max_bound, kv.first + 1);
    if (p.variadic) {
        const std::size_t fixed = slots - 1;
        const auto extra = static_cast<std::size_t>(
            g.integer(static_cast<std::int64_t>(hints.variadic_min), static_cast<std::int64_t>(hints.variadic_max)));
        count = std::max(fixed + extra, max_bound);
    } else if (max_bound > slots) {
        return reject("bound input beyond the op's inputs");
    }
    std::vector<instance_input> in(count);
    for (std::size_t i = 0; i < count; ++i) {
        const auto& s = slot(i);
        const auto* ih = hints.input(i);
        if (ih != nullptr && ih->range) in[i].range = ih->range;
        if (req.bound_inputs.count(i) != 0) {
            in[i].role = input_role::bound;
            in[i].type = req.bound_inputs.at(i).type;
            in[i].shape = req.bound_inputs.at(i).shape;
            continue;
        }
        const bool optional = s.optional && !s.variadic;
        const double pr = ih != nullptr && ih->present ? *ih->present : 0.5;
        in[i].role = (!optional || g.bernoulli(pr)) ? input_role::placeholder : input_role::absent;
    }
    // ONNX drops trailing absent inputs; keep the list tidy.
    while (!in.empty() && in.back().role == input_role::absent) in.pop_back();

    // --- dtypes (type matching) and ranks ------------------------------------
    std::vector<spec::input_candidate> cands;
    if (req.bound_output) {
        cands = op.input_candidates(req.bound_output->type, req.bound_output->shape.size());
        if (cands.empty()) return reject("cannot produce the wanted output type");
    }
    auto allowed = [&](dtype d) { return std::find(cfg.dtypes.begin(), cfg.dtypes.end(), d) != cfg.dtypes.end(); };
    std::map<std::string_view, dtype> type_var;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i].role == input_role::bound) {
            const auto [it, fresh] = type_var.emplace(slot(i).type_var, in[i].type);
            if (!fresh && it->second != in[i].type) return reject("bound inputs disagree on a type variable");
            if (!slot(i).types.contains(in[i].type)) return reject("bound input dtype not accepted");
        }
    }
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i].role != input_role::placeholder) continue;
        const auto& s = slot(i);
        std::vector<dtype> choices;
        std::vector<std::size_t> ranks;
        if (!cands.empty()) {
            const auto& c = cands[std::min(i, cands.size() - 1)];
            for (const auto d : c.dtypes) {
                if (s.types.contains(d)) choices.push_back(d);  // candidates never widen the slot's types
            }
            ranks = c.ranks;
        } else {
            choices = s.types.members();
        }
        const auto tv = type_var.find(s.type_var);
        if (tv != type_var.end()) {
            if (std::find(choices.begin(), choices.end(), tv->second) == choices.end()) {
                return reject("no dtype fits the type variable");
            }
            in[i].type = tv->second;
        } else {
            std::vector<dtype> ok;
            const bool shape_like = (s.types & spec::types::floating).empty() && (s.types & spec::types::boolean).empty() &&
                                    !(s.types & spec::types::int64).empty() && s.ranks.max <= 1;
            for (const auto d : choices) {
                if (allowed(d) || shape_like) ok.push_back(d);
            }
            if (ok.empty()) {
                return reject("input " + std::to_string(i) + " ('" + std::string(s.name) + "') takes " + s.types.to_string() +
                              ", none of them configured");
            }
            in[i].type = ok[static_cast<std::size_t>(g.below(ok.size()))];
            type_var.emplace(s.type_var, in[i].type);
        }
        // Ranks: backward inference's candidates, or near the first bound input's rank.
        std::vector<std::size_t> ok_ranks;
        if (!ranks.empty()) {
            for (const auto r : ranks) {
                if (s.ranks.contains(r) && r <= cfg.max_rank) ok_ranks.push_back(r);
            }
        } else {
            for (std::size_t r = s.ranks.min; r <= std::min(s.ranks.max, cfg.max_rank); ++r) ok_ranks.push_back(r);
        }
        if (ok_ranks.empty()) {
            return reject("input " + std::to_string(i) + " ('" + std::string(s.name) + "') needs rank " +
                          std::to_string(s.ranks.min) + ".." + std::to_string(s.ranks.max) + ", max_rank is " +
                          std::to_string(cfg.max_rank));
        }
        std::size_t rank = ok_ranks[static_cast<std::size_t>(g.below(ok_ranks.size()))];
        if (ranks.empty() && !req.bound_inputs.empty() && g.bernoulli(0.5)) {
            const std::size_t near = req.bound_inputs.begin()->second.shape.size();
            if (std::find(ok_ranks.begin(), ok_ranks.end(), near) != ok_ranks.end()) rank = near;
        } else if (ranks.empty() && req.bound_inputs.empty() && i > 0 && in[0].role == input_role::placeholder &&
                   g.bernoulli(0.5)) {
            // Standalone: operands mostly share input 0's rank (ConvTranspose's W, Add's B).
            const std::size_t near = in[0].shape.size();
            if (std::find(ok_ranks.begin(), ok_ranks.end(), near) != ok_ranks.end()) rank = near;
        }
        in[i].shape.assign(rank, 0);  // dims solved below
    }
    if (!in.empty() && in[0].role != input_role::absent) {
        const auto it = cfg.support.find(name);
        if (it != cfg.support.end() && it->second.count(in[0].type) == 0) return reject("dtype not supported by the target");
    }

    // --- attributes ---------------------------------------------------------
    spec::attribute_map given;                 // what the node will carry
    std::vector<std::string> unknown_attrs;    // int / ints attributes the solver decides
    std::map<std::string, std::size_t> list_guess;  // unknown ints attribute -> guessed length
    std::map<std::string, interval> attr_domain;
    std::size_t output_count = 1;
    const interval default_attr_domain{-cfg.max_dim, cfg.max_dim};
    // A first guess at a list length (a list attribute, a shape-like input).
    // Lists of one op mostly share a length (Slice's starts/ends/axes/steps,
    // a pool's kernel_shape/strides) or match input 0's rank: guess those
    // often; propagation corrects the rest.
    std::vector<std::size_t> guessed_lengths;
    auto guess_length = [&](std::size_t max_len) -> std::size_t {
        const std::size_t hi = std::max<std::size_t>(max_len, 1);
        std::size_t len = static_cast<std::size_t>(g.integer(1, static_cast<std::int64_t>(hi)));
        const double u = g.uniform(0.0, 1.0);
        if (!guessed_lengths.empty() && u < 0.6) {
            len = guessed_lengths[g.below(guessed_lengths.size())];
        } else if (!in.empty() && in[0].role != input_role::absent && u < 0.8 && !in[0].shape.empty()) {
            len = std::min(in[0].shape.size(), hi);
        }
        guessed_lengths.push_back(len);
        return len;
    };
    for (const auto& a : p.attributes) {
        const auto* h = hints.attribute(a.name);
        if (a.name == output_count_attribute) {
            if (h != nullptr && h->how == spec::attribute_hint::kind::choice && !h->choices.empty()) {
                output_count = static_cast<std::size_t>(std::get<std::int64_t>(h->choices[g.below(h->choices.size())]));
            } else {
                output_count = static_cast<std::size_t>(g.integer(1, 4));
            }
            if (req.single_output) output_count = 1;
            continue;
        }
        if (h != nullptr && h->how == spec::attribute_hint::kind::omit) continue;
        const double present = h != nullptr ? h->present : (a.kind == spec::attribute_kind::ints ? 0.6 : 0.7);
        if (!a.required && !g.bernoulli(present)) continue;
        using K = spec::attribute_hint::kind;
        const K how = h != nullptr ? h->how : K::solve;
        switch (how) {
            case K::flag: given[a.name] = std::int64_t{g.bernoulli(0.5) ? 1 : 0}; break;
            case K::choice: given[a.name] = h->choices[g.below(h->choices.size())]; break;
            case K::real: given[a.name] = h->real_lo < h->real_hi ? g.uniform(h->real_lo, h->real_hi) : h->real_lo; break;
            case K::dtype: {
                // Only dtypes the first output takes (EyeLike has no bfloat16 in ONNX).
                std::vector<dtype> fitting;
                for (const dtype c : cfg.dtypes) {
                    if (op.outputs.empty() || op.outputs[0].types.contains(c)) fitting.push_back(c);
                }
                if (fitting.empty()) return reject("no configured dtype fits the '" + a.name + "' attribute");
                dtype d = fitting[g.below(fitting.size())];
                if (req.bound_output) d = req.bound_output->type;
                given[a.name] = std::int64_t{onnx_type(d)};
                break;
            }
            case K::tensor: {
                std::optional<dtype> od;
                std::optional<shape_type> os;
                if (req.bound_output) {
                    od = req.bound_output->type;
                    os = req.bound_output->shape;
                }
                given[a.name] = h->make_tensor(g, od, os);
                break;
            }
            case K::omit: break;
            case K::solve: {
                if (a.kind == spec::attribute_kind::int_) {
                    given[a.name] = unknown_placeholder;
                } else if (a.kind == spec::attribute_kind::ints) {
                    const auto len = guess_length(cfg.max_rank);
                    list_guess[a.name] = len;
                    given[a.name] = std::vector<std::int64_t>(len, unknown_placeholder);
                } else if (a.required) {
                    return reject("required attribute '" + a.name + "' needs a hint");
                } else {
                    continue;  // float/string/tensor attributes without hints keep their defaults
                }
                unknown_attrs.push_back(a.name);
                attr_domain[a.name] = h != nullptr ? interval{h->lo, h->hi} : default_attr_domain;
                break;
            }
        }
    }

    // --- solve, re-guessing structure from what propagation implies ----------
    std::set<std::size_t> values_inputs;             // shape-like inputs (values are unknowns)
    std::map<std::size_t, std::size_t> values_len;   // their guessed lengths
    std::map<std::size_t, tensor> before;            // hinted data needed before solving
    std::set<std::size_t> fixed_dims;                // placeholders whose dims were fixed early
    constexpr int max_rounds = 16;
    for (int round = 0; round < max_rounds; ++round) {
        // The attribute map the spec sees: defaults filled in, unknowns as placeholders.
        spec::attribute_map full;
        try {
            full = op.normalize_attributes(given);
        } catch (const error& e) {
            return reject(std::string("attributes rejected: ") + e.what());
        }
        if (std::find_if(p.attributes.begin(), p.attributes.end(),
                         [](const spec::attribute_info& a) { return a.name == output_count_attribute; }) != p.attributes.end()) {
            full[std::string(output_count_attribute)] = static_cast<std::int64_t>(output_count);
        }
        std::vector<spec::symbolic_input> sym(in.size());
        for (std::size_t i = 0; i < in.size(); ++i) {
            auto& s = sym[i];
            if (in[i].role == input_role::absent) continue;
            s.present = true;
            s.type = in[i].type;
            if (before.count(i) != 0) {
                s.data = &before.at(i);
                for (const auto d : before.at(i).shape()) s.dims.emplace_back(static_cast<std::int64_t>(d));
            } else if (values_inputs.count(i) != 0) {
                const std::size_t len = values_len[i];
                if (!in[i].shape.empty()) s.dims.push_back(spec::context::dim_symbol(i, 0));
                std::vector<spec::expr> v;
                for (std::size_t k = 0; k < len; ++k) v.push_back(spec::context::value_symbol(i, k));
                s.values = std::move(v);
            } else if (in[i].role == input_role::bound || fixed_dims.count(i) != 0) {
                for (const auto d : in[i].shape) s.dims.emplace_back(static_cast<std::int64_t>(d));
            } else {
                for (std::size_t a = 0; a < in[i].shape.size(); ++a) s.dims.push_back(spec::context::dim_symbol(i, a));
            }
        }
        const auto ctx = spec::context::symbolic(op.op_type, sym, full, unknown_attrs);
        // What the spec asked for that the generator had left unknown: returns
        // the rejection reason, or "" when the structure changed (next round).
        auto resolve = [&](const spec::unknown_input_error& e) -> std::string {
            const std::size_t i = e.input();
            if (i >= in.size() || in[i].role == input_role::absent) return "spec reads an absent input";
            const auto* ih = hints.input(i);
            const bool has_hint = ih != nullptr && ih->before_solving && before.count(i) == 0;
            const auto& s = slot(i);
            const bool int_slot = (s.types & (spec::types::floating | spec::types::boolean)).empty() && s.ranks.max <= 1;
            using need = spec::unknown_input_error::need;
            if (e.needed() == need::values || (e.needed() == need::shape && !has_hint && int_slot)) {
                // A shape-like input: a constant whose values are unknowns.
                if (in[i].role == input_role::bound) return "a shape-like input cannot consume a graph value";
                if (values_inputs.count(i) != 0) return "shape-like input not resolvable";
                values_inputs.insert(i);
                in[i].role = input_role::constant;
                if (in[i].type != dtype::i64 && in[i].type != dtype::i32) in[i].type = dtype::i64;
                const bool scalar = s.ranks.max == 0 || (s.ranks.min == 0 && g.bernoulli(0.5));
                in[i].shape.assign(scalar ? 0 : 1, 0);
                values_len[i] = scalar ? 1 : guess_length(cfg.max_rank);
                return "";
            }
            if (e.needed() == need::shape && !has_hint && in[i].role == input_role::placeholder && fixed_dims.count(i) == 0) {
                // A rule on float data (scales) needs numbers: fix this input's dims now.
                std::int64_t budget = static_cast<std::int64_t>(cfg.max_elements);
                for (auto& d : in[i].shape) {
                    const interval dom{cfg.min_dim, std::max<std::int64_t>(cfg.min_dim, std::min(cfg.max_dim, budget))};
                    const interval bin = cfg.binning ? detail::pick_bin(dom, cfg.bins, g) : dom;
                    const std::int64_t v = bin.lo + static_cast<std::int64_t>(g.below(bin.width() + 1));
                    d = static_cast<std::size_t>(v);
                    budget /= std::max<std::int64_t>(v, 1);
                }
                fixed_dims.insert(i);
                return "";
            }
            if (!has_hint) return "spec needs the data of input " + std::to_string(i) + " (no before_solving hint)";
            if (in[i].role == input_role::bound) return "hinted data input cannot consume a graph value";
            try {
                before.emplace(i, ih->before_solving(g, ctx));
            } catch (const error& e2) {
                return std::string("before_solving hint failed: ") + e2.what();
            }
            in[i].role = input_role::constant;
            in[i].type = before.at(i).element_dtype();
            in[i].shape = before.at(i).shape();
            return "";
        };
        // Calls into the spec with the symbolic context: it may ask for an input
        // the generator left unknown (resolved: the next round) or reject the structure.
        enum class asked { ok, next_round, refused };
        std::string rejection;
        auto ask = [&](auto&& call) {
            try {
                call();
                return asked::ok;
            } catch (const spec::unknown_input_error& e) {
                rejection = resolve(e);
                return rejection.empty() ? asked::next_round : asked::refused;
            } catch (const error& e) {
                rejection = std::string("structure: ") + e.what();
                return asked::refused;
            }
        };
        std::vector<spec::constraint> cs;
        if (const auto a = ask([&] { cs = op.constraints(ctx); }); a != asked::ok) {
            if (a == asked::refused) return reject(rejection);
            continue;
        }
        // A rule that already folded to false: this structure is invalid (and the
        // spec's shape inference may assume it holds, so do not call it).
        for (const auto& k : cs) {
            if (k.condition.is_constant() && k.condition.constant_value() == 0) return reject("structure: " + k.reason);
        }

        try {
        // The system: every symbol the spec used is one of our unknowns.
        constraint_system sys;
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].role == input_role::placeholder && fixed_dims.count(i) == 0) {
                for (std::size_t a = 0; a < in[i].shape.size(); ++a) sys.add_variable(spec::context::dim_name(i, a), cfg.min_dim, cfg.max_dim);
            }
            if (values_inputs.count(i) != 0) {
                if (!in[i].shape.empty()) sys.add_variable(spec::context::dim_name(i, 0), 0, 2 * static_cast<std::int64_t>(cfg.max_rank) + 2);
                for (std::size_t k = 0; k < values_len[i]; ++k) sys.add_variable(spec::context::value_name(i, k), -cfg.max_dim, cfg.max_dim);
            }
        }
        for (const auto& key : unknown_attrs) {
            const interval d = attr_domain[key];
            if (const auto* v = std::get_if<std::vector<std::int64_t>>(&given[key])) {
                sys.add_variable(spec::context::attr_length_name(key), 1, 2 * static_cast<std::int64_t>(cfg.max_rank) + 2);
                for (std::size_t k = 0; k < v->size(); ++k) sys.add_variable(spec::context::attr_element_name(key, k), d.lo, d.hi);
            } else {
                sys.add_variable(spec::context::attr_name(key), d.lo, d.hi);
            }
        }
        sys.constraints = std::move(cs);

        // Length inference: propagate the length rules without our guesses.
        struct link {
            std::string symbol;
            std::size_t* guess;
        };
        std::vector<link> links;
        for (auto& [i, len] : values_len) {
            if (!in[i].shape.empty()) links.push_back({spec::context::dim_name(i, 0), &len});
        }
        for (auto& [key, len] : list_guess) links.push_back({spec::context::attr_length_name(key), &len});
        std::string conflict;
        // Compiled once; each later propagation compiles only the constraints added since.
        // The storage is the thread's, reused from the instance tried before.
        detail::reused_compiled_system lease;
        detail::compiled_system& compiled = lease.get();
        compiled.extend(sys);
        const auto implied = propagate(sys, compiled, domains_of(sys), &conflict);
        // Our length guesses may be what conflicts: guess again (mostly all
        // equal, the usual rule; sometimes independent) while rounds remain.
        auto redraw_lengths = [&]() {
            if (links.empty() || guessed_lengths.empty() || round + 2 >= max_rounds) return false;
            const bool together = g.bernoulli(0.75);
            const std::size_t common = guessed_lengths[g.below(guessed_lengths.size())];
            for (auto& l : links) *l.guess = together ? common : guessed_lengths[g.below(guessed_lengths.size())];
            for (auto& [key, len] : list_guess) given[key] = std::vector<std::int64_t>(len, unknown_placeholder);
            return true;
        };
        if (!implied) {
            if (redraw_lengths()) continue;
            return reject("unsatisfiable: " + conflict);
        }
        bool regress = false;
        for (const auto& l : links) {
            const auto idx = sys.find(l.symbol);
            if (!idx) continue;
            const interval d = (*implied)[*idx];
            if (!d.contains(static_cast<std::int64_t>(*l.guess))) {
                const interval c = detail::meet(d, {0, 2 * static_cast<std::int64_t>(cfg.max_rank) + 2});
                if (c.empty()) return reject("no list length fits");
                *l.guess = static_cast<std::size_t>(c.lo + static_cast<std::int64_t>(g.below(c.width() + 1)));
                regress = true;
            }
        }
        if (regress) {
            for (auto& [key, len] : list_guess) given[key] = std::vector<std::int64_t>(len, unknown_placeholder);
            continue;
        }
        for (const auto& l : links) {
            if (sys.find(l.symbol)) sys.add(spec::expr::symbol(l.symbol) == static_cast<std::int64_t>(*l.guess), "the guessed length");
        }
        compiled.extend(sys);
        if (!links.empty() && !propagate(sys, compiled, domains_of(sys), &conflict)) {
            if (redraw_lengths()) continue;
            return reject("unsatisfiable: " + conflict);
        }

        // Shapes and dtypes, now that the structure is consistent.
        spec::shape_exprs shapes;
        std::vector<dtype> out_dtypes;
        if (const auto a = ask([&] {
                shapes = op.output_shapes(ctx);
                out_dtypes = op.output_dtypes(ctx);
            });
            a != asked::ok) {
            if (a == asked::refused) return reject(rejection);
            continue;
        }
        if (shapes.empty()) return reject("no outputs");
        if (req.single_output && shapes.size() > 1) {
            for (std::size_t o = 1; o < op.outputs.size() && o < shapes.size(); ++o) {
                if (!op.outputs[o].optional && !op.outputs[o].variadic) return reject("a required second output in single-output mode");
            }
        }
        if (output_count > shapes.size()) output_count = shapes.size();
        if (!std::any_of(p.attributes.begin(), p.attributes.end(),
                         [](const spec::attribute_info& a) { return a.name == output_count_attribute; })) {
            output_count = req.single_output ? 1 : shapes.size();
        }
        // Backward insertion: output 0's rank must match; nudge one length guess.
        if (req.bound_output && shapes[0].size() != req.bound_output->shape.size()) {
            const auto want = static_cast<std::int64_t>(req.bound_output->shape.size());
            const auto have = static_cast<std::int64_t>(shapes[0].size());
            bool nudged = false;
            for (auto& [i, len] : values_len) {
                const std::int64_t next = static_cast<std::int64_t>(len) + (want - have);
                if (!in[i].shape.empty() && next >= 0 && next <= 2 * static_cast<std::int64_t>(cfg.max_rank) + 2) {
                    len = static_cast<std::size_t>(next);
                    nudged = true;
                    break;
                }
            }
            if (!nudged) return reject("output rank cannot match");
            continue;
        }
        for (std::size_t o = 0; o < shapes.size(); ++o) {
            for (const auto& d : shapes[o]) sys.add(d >= 1, "output " + std::to_string(o) + " dims are at least 1");
            sys.add(spec::product(shapes[o]) <= static_cast<std::int64_t>(cfg.max_elements),
                    "output " + std::to_string(o) + " has at most max_elements elements");
        }
        if (hints.work_estimate) {
            const auto a = ask([&] {
                sys.add(hints.work_estimate(ctx, shapes) <= static_cast<std::int64_t>(cfg.max_work), "work is at most max_work");
            });
            if (a == asked::refused) return reject(rejection);
            if (a == asked::next_round) continue;
        }
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].role != input_role::placeholder || in[i].shape.empty() || fixed_dims.count(i) != 0) continue;
            std::vector<spec::expr> dims;
            for (std::size_t a = 0; a < in[i].shape.size(); ++a) dims.push_back(spec::context::dim_symbol(i, a));
            sys.add(spec::product(dims) <= static_cast<std::int64_t>(cfg.max_elements),
                    "input " + std::to_string(i) + " has at most max_elements elements");
        }
        if (req.bound_output) {
            for (std::size_t a = 0; a < shapes[0].size(); ++a) {
                sys.add(shapes[0][a] == static_cast<std::int64_t>(req.bound_output->shape[a]), "output 0 is the placeholder's shape");
            }
            if (out_dtypes[0] != req.bound_output->type) return reject("output dtype differs from the placeholder's");
        }

        // Binning (Algorithm 2): a random bin per unknown; when the binned system
        // has no solution, drop half of the bin constraints and retry.
        compiled.extend(sys);
        auto domains = propagate(sys, compiled, domains_of(sys), &conflict);
        if (!domains) return reject("unsatisfiable: " + conflict);
        std::vector<std::pair<std::size_t, interval>> bins;
        if (cfg.binning) {
            for (std::size_t v = 0; v < sys.variables.size(); ++v) {
                if ((*domains)[v].singleton()) continue;
                bins.emplace_back(v, detail::pick_bin((*domains)[v], cfg.bins, g));
            }
        }
        solve_result solved;
        for (;;) {
            auto root = *domains;
            for (const auto& [v, b] : bins) root[v] = detail::meet(root[v], b);
            std::optional<constraint_system> binned;  // the hooks see a whole system; ours needs no copy
            if (hooks.observe || hooks.solver) {
                binned = sys;
                for (std::size_t v = 0; v < root.size(); ++v) binned->variables[v].domain = root[v];
            }
            if (hooks.observe) hooks.observe(*binned);
            // Bins are a preference: a binned system the search does not solve quickly is
            // dropped to fewer bins rather than searched to the end (that was the heavy
            // tail of generation time). The system without bins gets a larger budget.
            solver_options so;
            so.max_nodes = unbinned_solver_nodes;
            if (!bins.empty()) {
                so.max_nodes = binned_solver_nodes;
                so.explain = false;  // a failure retries with fewer bins; the last try (none) explains
            }
            solved = hooks.solver ? hooks.solver(*binned, g) : solve(sys, compiled, std::move(root), g, so);
            if (solved.sat() || bins.empty()) break;
            // drop a random half (at least one)
            for (std::size_t k = bins.size(); k-- > 1;) std::swap(bins[k], bins[static_cast<std::size_t>(g.below(k + 1))]);
            bins.resize(bins.size() / 2);
        }
        if (!solved.sat()) {
            return reject(solved.status == solve_status::unsat ? "unsatisfiable: " + solved.conflict
                                                               : std::string("solver gave up"));
        }

        // --- materialize ----------------------------------------------------
        spec::environment env;
        for (std::size_t v = 0; v < sys.variables.size(); ++v) env.emplace(sys.variables[v].name, solved.values[v]);
        for (const auto& key : unknown_attrs) {
            if (auto* v = std::get_if<std::vector<std::int64_t>>(&given[key])) {
                for (std::size_t k = 0; k < v->size(); ++k) (*v)[k] = env.at(spec::context::attr_element_name(key, k));
            } else {
                given[key] = env.at(spec::context::attr_name(key));
            }
        }
        op_instance out;
        out.op = &op;
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].role == input_role::placeholder && fixed_dims.count(i) == 0) {
                for (std::size_t a = 0; a < in[i].shape.size(); ++a) {
                    in[i].shape[a] = static_cast<std::size_t>(env.at(spec::context::dim_name(i, a)));
                }
            } else if (values_inputs.count(i) != 0) {
                const std::size_t len = values_len[i];
                shape_type s = in[i].shape.empty() ? shape_type{} : shape_type{len};
                auto a = array<std::int64_t>::from_shape(s);
                for (std::size_t k = 0; k < len; ++k) a.data()[k] = env.at(spec::context::value_name(i, k));
                in[i].data = tensor(a).cast(in[i].type);
                in[i].shape = s;
            } else if (before.count(i) != 0) {
                in[i].data = before.at(i);
            }
        }
        for (const auto& sh : shapes) {
            shape_type s;
            for (const auto& d : sh) s.push_back(static_cast<std::size_t>(d.eval(env)));
            out.output_shapes.push_back(std::move(s));
        }
        out.output_dtypes = out_dtypes;
        out.output_count = output_count;
        // Only the few ops it models: the shape copy below stays off every other instance.
        if (cfg.avoid_onnx_shape_inference_bugs && !out.output_shapes.empty() && io::has_onnx_1_12_shape_model(op.op_type)) {
            std::vector<shape_type> in_shapes;
            for (const auto& i : in) in_shapes.push_back(i.shape);
            if (io::onnx_1_12_shape_divergence(op.op_type, in_shapes, given, out.output_shapes[0])) {
                return reject("ONNX 1.12 would infer another shape");
            }
        }
        // Data valid only for the solved shapes (indices): from a concrete context.
        bool after = false;
        for (std::size_t i = 0; i < in.size(); ++i) after = after || (hints.input(i) != nullptr && hints.input(i)->after_solving && in[i].role == input_role::placeholder);
        if (after) {
            std::vector<tensor> tmp(in.size());
            std::vector<const tensor*> ptrs(in.size(), nullptr);
            for (std::size_t i = 0; i < in.size(); ++i) {
                if (in[i].role == input_role::absent) continue;
                tmp[i] = in[i].data ? *in[i].data : tensor::zeros(in[i].type, in[i].shape);
                ptrs[i] = &tmp[i];
            }
            spec::attribute_map solved_attrs = op.normalize_attributes(given);
            if (output_count > 1 || solved_attrs.count(std::string(output_count_attribute)) != 0) {
                solved_attrs[std::string(output_count_attribute)] = static_cast<std::int64_t>(output_count);
            }
            const spec::context concrete(op.op_type, ptrs, solved_attrs);
            for (std::size_t i = 0; i < in.size(); ++i) {
                const auto* ih = hints.input(i);
                if (ih == nullptr || !ih->after_solving || in[i].role != input_role::placeholder) continue;
                in[i].data = ih->after_solving(g, concrete, in[i].type, in[i].shape);
                in[i].role = input_role::constant;
            }
        }
        out.inputs = std::move(in);
        out.attributes = std::move(given);
        return out;
        } catch (const error& e) {
            return reject(std::string("system: ") + e.what());
        }
    }
    return reject("structure did not settle");
}

/// A single random instance of an op, standalone: every placeholder input
/// gets random data in its hinted range. This is what the registry tests
/// and the gradient tests draw from (it replaces hand-written samplers).
[[nodiscard]] inline std::optional<spec::instance> sample_instance(const op_profile& p, const config& cfg, rng& g,
                                                                   rejection_counts& rejected, int attempts = 20) {
    for (int a = 0; a < attempts; ++a) {
        auto inst = generate_instance(p, {p.op, {}, {}, false}, cfg, g, rejected);
        if (!inst) continue;
        spec::instance out;
        for (auto& i : inst->inputs) {
            if (i.role == input_role::absent) {
                out.inputs.emplace_back(std::nullopt);
            } else if (i.data) {
                out.inputs.emplace_back(std::move(*i.data));
            } else {
                const auto r = i.range.value_or(std::make_pair(-4.0, 4.0));
                out.inputs.emplace_back(spec::random_values(g, i.type, i.shape, r.first, r.second));
            }
        }
        out.attributes = std::move(inst->attributes);
        if (std::any_of(p.attributes.begin(), p.attributes.end(),
                        [](const spec::attribute_info& x) { return x.name == output_count_attribute; })) {
            out.attributes[std::string(output_count_attribute)] = static_cast<std::int64_t>(inst->output_count);
        }
        return out;
    }
    return std::nullopt;
}

/// Small instances (at most 4096 elements a tensor, dims up to 16, 2^18
/// multiply-adds): what unit tests and examples run many of, in Debug.
[[nodiscard]] inline config small_instances() {
    config c;
    c.max_elements = 4096;
    c.max_dim = 16;
    c.max_work = std::size_t{1} << 18;
    return c;
}

/// `sample_instance` for tests and examples that want "some valid instance
/// of this op": throws when none is found (the rejection reasons name why).
[[nodiscard]] inline spec::instance sample_op(const spec::op_entry& e, rng& g, const config& cfg) {
    const op_profile p(e);
    rejection_counts rejected;
    if (auto inst = sample_instance(p, cfg, g, rejected)) return std::move(*inst);
    std::string why;
    for (const auto& [reason, n] : rejected.by_reason) why += " [" + reason + " x" + std::to_string(n) + "]";
    throw error("tensoracle::gen::sample_op", "no valid instance of " + std::string(e.op_type) + " found:" + why);
}

[[nodiscard]] inline spec::instance sample_op(const spec::op_entry& e, rng& g) {
    static const config small = small_instances();
    return sample_op(e, g, small);
}

}  // namespace tensoracle::gen
// ---- end tensoracle/gen/instance.hpp ----

namespace tensoracle::gen {

/// The random stream of case `index` of `seed` under a config with hash `config_hash`.
[[nodiscard]] inline rng case_rng(std::uint64_t seed, std::uint64_t index, const std::string& config_hash) {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ seed;
    std::uint64_t s = h;
    h ^= tensoracle::detail::splitmix64_next(s) ^ index;
    for (const unsigned char ch : config_hash) h = (h ^ ch) * 0x100000001b3ULL;
    std::uint64_t t = h;
    return rng(tensoracle::detail::splitmix64_next(t));
}

/// A generated graph before its data: which initializers and inputs the
/// input search may change, and the ranges their first values come from.
struct graph_sketch {
    graph::graph model;
    /// Initializers whose data the generator fixed (shape-like values, indices): never changed.
    std::set<std::string> fixed;
    /// Initial data range of a free value (graph input or weight), from the consuming op's hint.
    std::map<std::string, std::pair<double, double>> ranges;
    std::vector<std::string> op_types;  ///< node ops, in node order
    /// Shape of every value: graph inputs, initializers and node outputs.
    std::map<std::string, shape_type, std::less<>> shapes;
    /// Dtype of every value, as `shapes` (integer and bool data lies in the dtype's range).
    std::map<std::string, dtype, std::less<>> dtypes;
};

/// A node as one op instance (NNSmith's unit of diversity): op type, each
/// input's dtype and shape (`type_of(name)` -> (dtype, shape)), attributes.
template <class TypeOf>
[[nodiscard]] std::string instance_key(const graph::node& n, TypeOf&& type_of) {
    std::string key = n.op_type + '(';
    for (const auto& in : n.inputs) {
        if (in.empty()) {
            key += "-,";
            continue;
        }
        const auto [d, shape] = type_of(in);
        key += std::string(tensoracle::name(d)) + tensoracle::to_string(shape) + ',';
    }
    key += ')';
    for (const auto& [k, v] : n.attributes) key += k + '=' + spec::attribute_summary(v) + ';';
    return key;
}

/// Counts of what generation did, for the statistics a run prints.
struct generation_stats {
    rejection_counts rejected;
    std::size_t forward = 0, backward = 0, graphs = 0, short_graphs = 0;  // graphs grown, kept or not
    std::size_t redrawn = 0;  ///< graphs grown again because a domain was out of reach
    std::size_t search_regrown = 0;  ///< graphs grown again because the input search failed (io::make_case)
    std::size_t search_out_of_work = 0;  ///< of those, searches stopped by config::search_work
    void merge(const generation_stats& o) {
        rejected.merge(o.rejected);
        forward += o.forward;
        backward += o.backward;
        graphs += o.graphs;
        short_graphs += o.short_graphs;
        redrawn += o.redrawn;
        search_regrown += o.search_regrown;
        search_out_of_work += o.search_out_of_work;
    }
};

class generator {
public:
    /// Builds the op table for `cfg`: ops the config allows, each probed
    /// standalone; throws naming the conflict when no op can be generated.
    explicit generator(config cfg) : cfg_(std::move(cfg)) {
        cfg_.validate();
        const char* where = "tensoracle::gen::generator";
        for (const auto& name : cfg_.include_ops) {
            if (ops::find_op(name) == nullptr) throw error(where, "include_ops names '" + name + "', which has no spec");
        }
        for (const auto& name : cfg_.exclude_ops) {
            if (ops::find_op(name) == nullptr) throw error(where, "exclude_ops names '" + name + "', which has no spec");
        }
        std::vector<std::string> dropped;
        for (const auto& e : ops::registry()) {
            const std::string name(e.op_type);
            auto drop = [&](const std::string& why) { excluded_.emplace(name, why); };
            if (!cfg_.include_ops.empty() &&
                std::find(cfg_.include_ops.begin(), cfg_.include_ops.end(), name) == cfg_.include_ops.end()) {
                continue;  // not asked for: not listed as excluded either
            }
            if (std::find(cfg_.exclude_ops.begin(), cfg_.exclude_ops.end(), name) != cfg_.exclude_ops.end()) {
                drop("excluded by the config");
                continue;
            }
            if (cfg_.opset < e.opset || cfg_.opset > e.last_opset) {
                drop("the spec implements " + name + "-" + std::to_string(e.opset) + ", current only at opsets " +
                     std::to_string(e.opset) + ".." + std::to_string(e.last_opset) + "; the config's opset is " +
                     std::to_string(cfg_.opset));
                continue;
            }
            op_profile p(e);
            if (p.vulnerable && !cfg_.vulnerable_ops) {
                drop("vulnerable (has a numeric domain) and vulnerable_ops is off");
                continue;
            }
            if (const auto it = cfg_.support.find(name); it != cfg_.support.end()) {
                bool any = false;
                for (const auto d : it->second) any = any || e.inputs.empty() || e.inputs[0].types.contains(d);
                if (!any) {
                    drop("the support table lists no dtype it accepts");
                    continue;
                }
            }
            // Probe: can this op be instantiated standalone under the config?
            rejection_counts why;
            rng probe(0x5eed ^ std::hash<std::string>{}(name));
            bool ok = false;
            for (int a = 0; a < 40 && !ok; ++a) ok = generate_instance(p, {&e, {}, {}, cfg_.single_io}, cfg_, probe, why).has_value();
            if (!ok) {
                std::string top;
                std::size_t most = 0;
                for (const auto& [reason, n] : why.by_reason) {
                    if (n > most) {
                        most = n;
                        top = reason;
                    }
                }
                drop("cannot be instantiated under the config (" + top + ")");
                continue;
            }
            profiles_.push_back(std::move(p));
        }
        if (profiles_.empty()) {
            std::string msg = "no op can be generated under this configuration";
            std::size_t shown = 0;
            for (const auto& [op, why] : excluded_) {
                if (shown++ == 8) {
                    msg += "; ...";
                    break;
                }
                msg += (shown == 1 ? ": " : "; ") + op + ": " + why;
            }
            if (excluded_.empty()) msg += ": include_ops selects nothing";
            throw error(where, msg);
        }
        for (std::size_t i = 0; i < profiles_.size(); ++i) by_type_.emplace(std::string(profiles_[i].op->op_type), i);
        // Seed values must have a dtype some op consumes.
        for (const auto d : cfg_.dtypes) {
            for (const auto& p : profiles_) {
                if (!p.op->inputs.empty() && p.op->inputs[0].types.contains(d)) {
                    seed_dtypes_.push_back(d);
                    break;
                }
            }
        }
        if (seed_dtypes_.empty()) throw error(where, "no configured dtype is accepted by any configured op");
    }

    /// Another solver, or an observer of the constraint systems (see instance_hooks).
    void set_hooks(instance_hooks hooks) { hooks_ = std::move(hooks); }
    [[nodiscard]] const config& settings() const noexcept { return cfg_; }
    [[nodiscard]] const std::vector<op_profile>& ops() const noexcept { return profiles_; }
    /// Ops of the registry the config leaves out, with the reason.
    [[nodiscard]] const std::map<std::string, std::string>& excluded() const noexcept { return excluded_; }

    /// Grows one graph from `g` (generate() keeps only reachable domains).
    [[nodiscard]] graph_sketch grow(rng& g, generation_stats& stats) const {
        state s;
        // The seed placeholder.
        {
            dtype d = seed_dtypes_[g.below(seed_dtypes_.size())];
            std::vector<dtype> floats;
            for (const auto x : seed_dtypes_) {
                if (info(x).is_floating) floats.push_back(x);
            }
            if (!floats.empty() && g.bernoulli(0.75)) d = floats[g.below(floats.size())];
            s.add_value(d, random_shape(g), true);
        }
        std::vector<double> weights;
        double total = 0.0;
        for (const auto& p : profiles_) {
            weights.push_back(p.hints.weight);
            total += p.hints.weight;
        }
        const std::size_t attempts = 40 * cfg_.max_nodes + 40;
        for (std::size_t a = 0; a < attempts && s.nodes.size() < cfg_.max_nodes; ++a) {
            double r = g.uniform() * total;
            std::size_t k = 0;
            while (k + 1 < weights.size() && r >= weights[k]) r -= weights[k++];
            const auto& p = profiles_[k];
            const bool forward = cfg_.single_io || g.bernoulli(cfg_.forward_probability);
            if (forward ? insert_forward(p, s, g, stats) : insert_backward(p, s, g, stats)) {
                ++(forward ? stats.forward : stats.backward);
            }
        }
        ++stats.graphs;
        if (s.nodes.size() < cfg_.max_nodes) ++stats.short_graphs;
        return finish(s, g);
    }

    /// Grows graphs from `g` until one has no domain that data cannot reach
    /// (unreachable_domain), at most `attempts` times; the last one otherwise.
    [[nodiscard]] graph_sketch generate(rng& g, generation_stats& stats) const {
        constexpr int attempts = 16;
        for (int a = 1;; ++a) {
            graph_sketch sk = grow(g, stats);
            const auto why = unreachable_domain(sk);
            if (!why || a == attempts) return sk;
            stats.rejected.add("graph re-drawn: " + *why);
            ++stats.redrawn;
        }
    }

    /// Why no data for the free values of `sketch` can make every node
    /// finite, judged from the value facts of its ops (spec::value_facts):
    /// a vulnerable node whose element-wise domain rule fails on a value its
    /// input always holds (Log after Hardmax's zeros) or on every value its
    /// input can hold (Acosh after Sigmoid), or whose rules together leave
    /// no room (Asin and Acosh of the same value). "op: rule (why)"; empty
    /// when nothing is found (which does not prove the graph feasible).
    [[nodiscard]] std::optional<std::string> unreachable_domain(const graph_sketch& sketch) const {
        const auto& m = sketch.model;
        // Only a node with domain rules can fail, and facts flow forward (the
        // nodes are in topological order): nodes after the last such node need
        // no facts, and a graph without one needs none at all.
        std::size_t end = 0;
        for (std::size_t k = 0; k < m.nodes.size(); ++k) {
            const auto* p = profile(m.nodes[k].op_type);
            if (p != nullptr && (p->vulnerable || p->domain_per_instance)) end = k + 1;
        }
        if (end == 0) return std::nullopt;
        std::map<std::string, spec::value_facts, std::less<>> facts;
        for (const auto& [name, t] : m.initializers) {
            if (sketch.fixed.count(name) != 0) facts.emplace(name, data_facts(t));
        }
        for (const auto& [name, d] : sketch.dtypes) {
            if (!info(d).is_floating && facts.count(name) == 0) facts.emplace(name, spec::value_facts{}.of_dtype(d));
        }
        auto dtype_of = [&](const std::string& name) -> std::optional<dtype> {
            const auto it = sketch.dtypes.find(name);
            return it == sketch.dtypes.end() ? std::nullopt : std::optional<dtype>(it->second);
        };
        const spec::value_facts unknown;
        for (std::size_t at = 0; at < end; ++at) {
            const auto& n = m.nodes[at];
            const auto* p = profile(n.op_type);
            if (p == nullptr) continue;
            std::vector<spec::value_facts> in;
            std::vector<shape_type> in_shapes;
            for (const auto& name : n.inputs) {
                const auto f = facts.find(name);
                in.push_back(name.empty() || f == facts.end() ? unknown : f->second);
                const auto it = sketch.shapes.find(name);
                in_shapes.push_back(it == sketch.shapes.end() ? shape_type{} : it->second);
            }
            std::vector<std::optional<dtype>> in_dtypes;
            for (const auto& name : n.inputs) in_dtypes.push_back(name.empty() ? std::nullopt : dtype_of(name));
            if (auto why = check_domain(*p, n.attributes, in, in_dtypes)) return why;
            for (std::size_t k = 0; k < n.inputs.size(); ++k) {
                if (!n.inputs[k].empty() && !in[k].is_unknown()) facts.insert_or_assign(n.inputs[k], in[k]);
            }
            const auto out = output_facts(*p, n.attributes, in, in_shapes, n.outputs.size());
            for (std::size_t o = 0; o < n.outputs.size(); ++o) {
                if (n.outputs[o].empty()) continue;
                const auto d = dtype_of(n.outputs[o]);
                const auto f = d ? out[o].of_dtype(*d) : out[o];
                if (!f.is_unknown()) facts.insert_or_assign(n.outputs[o], f);
            }
        }
        return std::nullopt;
    }

    /// Facts of fixed data: its range, its extremes as forced values.
    [[nodiscard]] static spec::value_facts data_facts(const tensor& t) {
        if (t.size() == 0) return {};
        const auto d = t.to<double>();
        const auto [lo, hi] = std::minmax_element(d.begin(), d.end());
        spec::value_facts f = spec::value_facts::within(*lo, *hi);
        f.force(*lo).force(*hi);
        return f;
    }

    /// Why one of p's element-wise domain rules cannot hold on inputs with
    /// facts `in` (empty: each can); narrows `in` to where the rules hold,
    /// so later readers of the same values see only what is left.
    [[nodiscard]] static std::optional<std::string> check_domain(const op_profile& p, const spec::attribute_map& attrs,
                                                                 std::vector<spec::value_facts>& in,
                                                                 std::span<const std::optional<dtype>> dtypes = {}) {
        if (!p.vulnerable && !p.domain_per_instance) return std::nullopt;
        std::vector<spec::domain_rule> rules;
        try {
            rules = p.op->domain(p.op->normalize_attributes(attrs));
        } catch (const error&) {
            return std::nullopt;
        }
        const std::string op(p.op->op_type);
        for (const auto& r : rules) {
            if (!r.elementwise_input || *r.elementwise_input >= in.size()) continue;
            const std::size_t k = *r.elementwise_input;
            const std::optional<dtype> dk = k < dtypes.size() ? dtypes[k] : std::nullopt;
            // A rule for some dtypes only judges an input whose dtype is known to be one of them.
            if (r.input_dtypes.mask != spec::types::all.mask && (!dk || !r.input_dtypes.contains(*dk))) continue;
            std::function<double(double)> at_limit;
            if (!r.elementwise) {
                // A dtype-dependent rule (overflow), where the input's dtype is known.
                if (!r.elementwise_at_limit || k >= dtypes.size() || !dtypes[k] || !info(*dtypes[k]).is_floating) continue;
                at_limit = [&r, m = ops::detail::max_finite(*dtypes[k])](double v) { return r.elementwise_at_limit(v, m); };
            }
            auto& x = in[k];
            const auto& f = r.elementwise ? r.elementwise : at_limit;
            for (const double v : x.forced) {
                if (!r.elementwise_any && f(v) > 0.0) {
                    return op + ": " + r.description + " (input " + std::to_string(k) + " always holds a value outside it)";
                }
            }
            // An element bound: some element lies in [lo, a] (or [b, hi]); if the rule
            // fails on all of it, that element is always outside.
            auto fails_on = [&](double a, double b) {
                if (!(a <= b) || !(f(a) > 0.0) || !(f(b) > 0.0)) return false;
                for (const double v : spec::facts::probe_points(a, b)) {
                    if (!(f(v) > 0.0)) return false;
                }
                return true;
            };
            if (!r.elementwise_any && ((std::isfinite(x.some_at_most) && fails_on(x.lo, x.some_at_most)) ||
                                       (std::isfinite(x.some_at_least) && fails_on(x.some_at_least, x.hi)))) {
                return op + ": " + r.description + " (input " + std::to_string(k) + " always holds an element outside it)";
            }
            // Where the rule holds strictly inside the input's enclosure (a
            // single point such as Sigmoid's saturation does not count).
            double lo = std::numeric_limits<double>::infinity(), hi = -lo;
            const bool point = x.lo == x.hi;
            for (const double v : spec::facts::probe_points(x.lo, x.hi)) {
                if (point ? f(v) <= 0.0 : f(v) < 0.0) {
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                }
            }
            if (lo > hi) return op + ": " + r.description + " (input " + std::to_string(k) + " holds no value inside it)";
            if (r.elementwise_any) continue;
            x.lo = std::max(x.lo, lo);
            x.hi = std::min(x.hi, hi);
        }
        return std::nullopt;
    }

    /// Facts of a node's `count` outputs (unknown where the op gives none).
    [[nodiscard]] static std::vector<spec::value_facts> output_facts(const op_profile& p, const spec::attribute_map& attrs,
                                                                     const std::vector<spec::value_facts>& in,
                                                                     const std::vector<shape_type>& in_shapes,
                                                                     std::size_t count) {
        std::vector<spec::value_facts> out(count);
        if (!p.hints.output_facts) return out;
        std::vector<spec::value_facts> given;
        try {
            given = p.hints.output_facts(in, attrs, in_shapes);
        } catch (const error&) {
            return out;
        }
        // A variadic output (Split's) is one kind of value: the last fact given holds for the rest.
        const bool variadic = !p.op->outputs.empty() && p.op->outputs.back().variadic;
        for (std::size_t o = 0; o < count && !given.empty(); ++o) {
            if (o >= given.size() && !variadic) break;
            out[o] = given[std::min(o, given.size() - 1)];
        }
        return out;
    }

private:
    struct value {
        std::string name;
        dtype type = dtype::f32;
        shape_type shape;
        bool placeholder = false;  // not produced yet: a later backward insertion, an input or a weight
        bool fixed = false;        // data fixed by the generator (an initializer)
        std::optional<tensor> data;
        std::optional<std::pair<double, double>> range;
        std::size_t uses = 0;
        bool seed = false;
        spec::value_facts facts;  // what its data holds whatever the free values (unknown for those)
    };
    struct state {
        std::vector<value> values;
        std::vector<graph::node> nodes;
        std::size_t add_value(dtype d, shape_type shape, bool placeholder) {
            value v;
            v.name = "v" + std::to_string(values.size());
            v.type = d;
            v.shape = std::move(shape);
            v.placeholder = placeholder;
            v.seed = values.empty();
            v.facts = spec::value_facts{}.of_dtype(d);  // bool data is 0 or 1 whatever it is
            values.push_back(std::move(v));
            return values.size() - 1;
        }
        /// The single leaf in single-input single-output mode (the last node's output 0, or the seed).
        std::size_t leaf = 0;
    };

    shape_type random_shape(rng& g) const {
        const auto rank = static_cast<std::size_t>(
            g.integer(static_cast<std::int64_t>(cfg_.min_rank), static_cast<std::int64_t>(cfg_.max_rank)));
        shape_type s(rank);
        std::int64_t budget = static_cast<std::int64_t>(cfg_.max_elements);
        for (std::size_t a = 0; a < rank; ++a) {
            const std::int64_t left = std::max<std::int64_t>(1, budget);
            const interval dom{cfg_.min_dim, std::min(cfg_.max_dim, left)};
            const interval bin = cfg_.binning ? detail::pick_bin(dom, cfg_.bins, g) : dom;
            const std::int64_t d = bin.empty() ? cfg_.min_dim : bin.lo + static_cast<std::int64_t>(g.below(bin.width() + 1));
            s[a] = static_cast<std::size_t>(d);
            budget /= std::max<std::int64_t>(d, 1);
        }
        return s;
    }

    /// Facts and shapes of an instance's inputs: bound values' facts, fixed data's, unknown for new placeholders.
    static std::pair<std::vector<spec::value_facts>, std::vector<shape_type>> input_facts(
        const state& s, const op_instance& inst, const std::map<std::size_t, std::size_t>& bound) {
        std::vector<spec::value_facts> in(inst.inputs.size());
        std::vector<shape_type> shapes(inst.inputs.size());
        for (std::size_t i = 0; i < inst.inputs.size(); ++i) {
            const auto& x = inst.inputs[i];
            shapes[i] = x.shape;
            if (x.role == input_role::bound) {
                in[i] = s.values[bound.at(i)].facts;
            } else if (x.role == input_role::constant && x.data) {
                in[i] = data_facts(*x.data);
            }
        }
        return {std::move(in), std::move(shapes)};
    }

    /// Adds the node of a solved instance; `inputs` names the bound slots'
    /// values; `out0` reuses a placeholder as output 0 (backward insertion);
    /// `out_facts` holds the facts of every output the instance can have.
    void add_node(state& s, const op_instance& inst, const std::map<std::size_t, std::size_t>& bound,
                  std::optional<std::size_t> out0, const std::vector<spec::value_facts>& out_facts, rng& g) const {
        graph::node n;
        n.op_type = std::string(inst.op->op_type);
        n.name = "n" + std::to_string(s.nodes.size()) + "_" + n.op_type;
        n.attributes = inst.attributes;
        for (std::size_t i = 0; i < inst.inputs.size(); ++i) {
            const auto& in = inst.inputs[i];
            switch (in.role) {
                case input_role::absent: n.inputs.emplace_back(); break;
                case input_role::bound: {
                    auto& v = s.values[bound.at(i)];
                    ++v.uses;
                    n.inputs.push_back(v.name);
                    break;
                }
                case input_role::placeholder:
                case input_role::constant: {
                    const std::size_t k = s.add_value(in.type, in.shape, true);
                    auto& v = s.values[k];
                    v.uses = 1;
                    v.range = in.range;
                    if (in.role == input_role::constant) {
                        v.fixed = true;
                        v.data = in.data;
                        if (in.data) v.facts = data_facts(*in.data);
                    }
                    n.inputs.push_back(v.name);
                    break;
                }
            }
        }
        while (!n.inputs.empty() && n.inputs.back().empty()) n.inputs.pop_back();
        // Outputs: the instance's count (Split), or every required one plus a
        // random prefix of the optional ones.
        std::size_t count = inst.output_count;
        const auto& outs = inst.op->outputs;
        const bool counted = std::any_of(inst.op->outputs.begin(), inst.op->outputs.end(),
                                         [](const spec::value_spec& v) { return v.variadic; });
        if (!counted) {
            count = 1;
            for (std::size_t o = 1; o < inst.output_shapes.size() && o < outs.size(); ++o) {
                if (cfg_.single_io && outs[o].optional) break;
                if (outs[o].optional && !g.bernoulli(0.5)) break;
                count = o + 1;
            }
        }
        count = std::min(count, inst.output_shapes.size());
        for (std::size_t o = 0; o < count; ++o) {
            if (o == 0 && out0) {
                s.values[*out0].placeholder = false;
                s.values[*out0].facts = out_facts[0].of_dtype(s.values[*out0].type);
                n.outputs.push_back(s.values[*out0].name);
                continue;
            }
            const std::size_t k = s.add_value(inst.output_dtypes[o], inst.output_shapes[o], false);
            s.values[k].facts = out_facts[o].of_dtype(inst.output_dtypes[o]);
            n.outputs.push_back(s.values[k].name);
            if (o == 0 && cfg_.single_io) s.leaf = k;
        }
        s.nodes.push_back(std::move(n));
    }

    bool insert_forward(const op_profile& p, state& s, rng& g, generation_stats& stats) const {
        const auto& op = *p.op;
        const std::size_t slots = op.inputs.size();
        // Type matching: slots with candidate values (dtype and rank fit).
        auto fits = [&](std::size_t slot, const value& v) {
            const auto& sp = op.inputs[std::min(slot, op.inputs.size() - 1)];
            // Inputs whose data the op's hints make (indices, switches) must not take a
            // graph value: its data would be whatever the graph computes.
            const auto* ih = p.hints.input(slot);
            if (ih != nullptr && (ih->before_solving || ih->after_solving)) return false;
            return !v.fixed && sp.types.contains(v.type) && sp.ranks.contains(v.shape.size());
        };
        std::vector<std::pair<std::size_t, std::size_t>> options;  // (slot, value)
        for (std::size_t slot = 0; slot < slots; ++slot) {
            if (cfg_.single_io) {
                if (fits(slot, s.values[s.leaf])) options.emplace_back(slot, s.leaf);
                continue;
            }
            for (std::size_t k = 0; k < s.values.size(); ++k) {
                if (fits(slot, s.values[k]) && (!s.values[k].placeholder || s.values[k].uses > 0 || s.values[k].seed)) {
                    options.emplace_back(slot, k);
                }
            }
        }
        if (options.empty()) {
            stats.rejected.add(std::string(op.op_type) + ": no value matches an input (forward)");
            return false;
        }
        // Prefer binding the first input: most ops read their main operand there.
        std::vector<std::pair<std::size_t, std::size_t>> first;
        for (const auto& o : options) {
            if (o.first == 0) first.push_back(o);
        }
        const auto& pool = (!first.empty() && g.bernoulli(0.7)) ? first : options;
        const auto [slot, k] = pool[g.below(pool.size())];
        std::map<std::size_t, std::size_t> bound{{slot, k}};
        instance_request req{&op, {{slot, {s.values[k].type, s.values[k].shape}}}, std::nullopt, cfg_.single_io};
        // Sometimes a second operand from the graph too (a DAG, not a chain).
        if (!cfg_.single_io && op.inputs.size() > 1 && g.bernoulli(0.3)) {
            std::vector<std::pair<std::size_t, std::size_t>> second;
            for (const auto& o : options) {
                if (o.first != slot && s.values[o.second].type == s.values[k].type) second.push_back(o);
            }
            if (!second.empty()) {
                const auto [slot2, k2] = second[g.below(second.size())];
                bound.emplace(slot2, k2);
                req.bound_inputs.emplace(slot2, typed_shape{s.values[k2].type, s.values[k2].shape});
            }
        }
        auto inst = generate_instance(p, req, cfg_, g, stats.rejected, hooks_);
        if (!inst) return false;
        auto [in_facts, in_shapes] = input_facts(s, *inst, bound);
        if (p.vulnerable || p.domain_per_instance) {
            // A domain the consumed values cannot reach: no data would make the node finite.
            std::vector<std::optional<dtype>> in_dtypes;
            for (const auto& x : inst->inputs) {
                in_dtypes.push_back(x.role == input_role::absent ? std::nullopt : std::optional<dtype>(x.type));
            }
            if (check_domain(p, inst->attributes, in_facts, in_dtypes)) {
                stats.rejected.add(std::string(op.op_type) + ": its domain is out of reach of the values (forward)");
                return false;
            }
            for (const auto& [b_slot, b_value] : bound) s.values[b_value].facts = in_facts[b_slot];
        }
        add_node(s, *inst, bound, std::nullopt,
                 output_facts(p, inst->attributes, in_facts, in_shapes, inst->output_shapes.size()), g);
        return true;
    }

    bool insert_backward(const op_profile& p, state& s, rng& g, generation_stats& stats) const {
        const auto& op = *p.op;
        if (op.outputs.empty()) return false;
        const auto& out = op.outputs[0];
        std::vector<std::size_t> cands;
        for (std::size_t k = 0; k < s.values.size(); ++k) {
            const auto& v = s.values[k];
            if (v.placeholder && !v.fixed && out.types.contains(v.type) && out.ranks.contains(v.shape.size())) cands.push_back(k);
        }
        if (cands.empty()) {
            stats.rejected.add(std::string(op.op_type) + ": no placeholder matches its output (backward)");
            return false;
        }
        const std::size_t k = cands[g.below(cands.size())];
        const instance_request req{&op, {}, typed_shape{s.values[k].type, s.values[k].shape}, false};
        auto inst = generate_instance(p, req, cfg_, g, stats.rejected, hooks_);
        if (!inst) return false;
        // The placeholder's readers were placed when it could hold anything:
        // what the op produces must leave their domains within reach.
        const auto [in_facts, in_shapes] = input_facts(s, *inst, {});
        auto produced =
            output_facts(p, inst->attributes, in_facts, in_shapes, std::max<std::size_t>(inst->output_shapes.size(), 1));
        produced[0] = produced[0].of_dtype(s.values[k].type);
        if (!produced[0].is_unknown() && leaves_reader_out_of_reach(s, k, produced[0])) {
            stats.rejected.add(std::string(op.op_type) + ": a reader's domain would be out of reach (backward)");
            return false;
        }
        add_node(s, *inst, {}, k, produced, g);
        return true;
    }

    /// Whether value k holding `facts` leaves a vulnerable reader's domain out of reach.
    bool leaves_reader_out_of_reach(const state& s, std::size_t k, const spec::value_facts& facts) const {
        const std::string& name = s.values[k].name;
        for (const auto& n : s.nodes) {
            if (std::find(n.inputs.begin(), n.inputs.end(), name) == n.inputs.end()) continue;
            const auto* q = profile(n.op_type);
            if (q == nullptr || (!q->vulnerable && !q->domain_per_instance)) continue;
            std::vector<spec::value_facts> in;
            std::vector<std::optional<dtype>> in_dtypes;
            for (const auto& input : n.inputs) {
                const auto it = std::find_if(s.values.begin(), s.values.end(),
                                             [&](const value& v) { return v.name == input; });
                in_dtypes.push_back(input.empty() || it == s.values.end() ? std::nullopt : std::optional<dtype>(it->type));
                if (input == name) {
                    in.push_back(facts);
                    continue;
                }
                in.push_back(input.empty() || it == s.values.end() ? spec::value_facts{} : it->facts);
            }
            if (check_domain(*q, n.attributes, in, in_dtypes)) return true;
        }
        return false;
    }

    graph_sketch finish(state& s, rng& g) const {
        graph_sketch out;
        auto& m = out.model;
        m.name = "tensoracle_generated";
        m.opset = cfg_.opset;
        // Placeholders become graph inputs or weights; fixed data becomes initializers.
        std::vector<std::size_t> free;
        for (std::size_t k = 0; k < s.values.size(); ++k) {
            const auto& v = s.values[k];
            if (!v.placeholder) continue;
            if (v.uses == 0 && !v.seed) continue;
            if (v.fixed) {
                m.initializers.emplace(v.name, *v.data);
                out.fixed.insert(v.name);
                continue;
            }
            free.push_back(k);
        }
        bool any_input = false;
        for (const std::size_t k : free) {
            const auto& v = s.values[k];
            if (v.uses == 0) continue;  // an unconsumed seed (every insertion went elsewhere)
            const bool weight = cfg_.single_io ? !v.seed : g.bernoulli(cfg_.initializer_probability);
            if (weight) {
                m.initializers.emplace(v.name, tensor::zeros(v.type, v.shape));  // data from the input search
            } else {
                m.inputs.push_back({v.name, v.type, v.shape});
                any_input = true;
            }
            if (v.range) out.ranges.emplace(v.name, *v.range);
        }
        if (!any_input) {
            // Keep one graph input: a model of constants only is folded away whole by most backends.
            for (const std::size_t k : free) {
                const auto& v = s.values[k];
                if (v.uses == 0 || !m.initializers.count(v.name)) continue;
                m.initializers.erase(v.name);
                m.inputs.push_back({v.name, v.type, v.shape});
                break;
            }
        }
        // Nodes in topological order (ONNX requires it).
        // Inputs and initializers are passed by name only, as an enclosing scope
        // would define them: copying the initializers' data would cost more than
        // the sort (the same validation: a node may read them, never redefine them).
        graph::graph unordered;
        unordered.nodes = std::move(s.nodes);
        std::set<std::string, std::less<>> defined;
        for (const auto& in : m.inputs) defined.insert(in.name);
        for (const auto& [name, t] : m.initializers) defined.insert(name);
        for (const std::size_t i : unordered.topological_order(defined)) {
            out.op_types.push_back(unordered.nodes[i].op_type);
            m.nodes.push_back(std::move(unordered.nodes[i]));
        }
        // Outputs: node outputs nothing consumes.
        std::map<std::string, std::size_t> by_name;
        for (std::size_t k = 0; k < s.values.size(); ++k) {
            by_name.emplace(s.values[k].name, k);
            out.shapes.emplace(s.values[k].name, s.values[k].shape);
            out.dtypes.emplace(s.values[k].name, s.values[k].type);
        }
        std::set<std::string> consumed;
        for (const auto& n : m.nodes) {
            for (const auto& in : n.inputs) consumed.insert(in);
        }
        for (const auto& n : m.nodes) {
            for (const auto& o : n.outputs) {
                if (o.empty() || consumed.count(o) != 0) continue;
                const auto& v = s.values[by_name.at(o)];
                if (cfg_.single_io && by_name.at(o) != s.leaf) continue;
                m.outputs.push_back({v.name, v.type, v.shape});
            }
        }
        return out;
    }

    [[nodiscard]] const op_profile* profile(std::string_view op_type) const {
        const auto it = by_type_.find(op_type);
        return it == by_type_.end() ? nullptr : &profiles_[it->second];
    }

    config cfg_;
    instance_hooks hooks_;
    std::map<std::string, std::size_t, std::less<>> by_type_;  ///< op type -> index in profiles_
    std::vector<op_profile> profiles_;
    std::map<std::string, std::string> excluded_;
    std::vector<dtype> seed_dtypes_;
};

}  // namespace tensoracle::gen
// ---- end tensoracle/gen/generator.hpp ----
// ---- begin tensoracle/gen/input_search.hpp ----
// tensoracle: inputs and weights under which no node of a graph produces
// NaN or Inf (NNSmith's Algorithm 3, gradient-guided value search).
//
// Start from random values; run the graph; at the first node whose output
// is not finite, take the first of its domain rules whose loss is positive
// (spec::domain_rule: a hinge loss that is zero inside the op's domain),
// back-propagate that loss's gradient to the graph's free values (inputs and
// weights) through the op rules' VJPs with proxy derivatives (so ReLU,
// Floor... do not stop the gradient), take an Adam step, and repeat; the
// optimizer's state resets whenever the target (node, rule) changes.
// Zero gradients re-draw the values; non-finite ones are replaced by random
// values. The budget is a number of graph evaluations, so a search is
// reproducible from its seed. `sampling` mode is the baseline: fresh
// uniform values every evaluation, no gradients.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>


namespace tensoracle::gen {

struct search_options {
    std::size_t iterations = 256;  ///< graph evaluations at most
    double learning_rate = 0.5;    ///< Adam's step size (NNSmith: 0.5)
    /// Initial range of floating values without a hinted range.
    std::pair<double, double> init{-4.0, 4.0};
    /// The sampling baseline: re-draw every value from `baseline_range` each evaluation.
    bool sampling = false;
    std::pair<double, double> baseline_range{1.0, 9.0};
    /// The first start is the sampling baseline's draw (NNSmith's protocol for
    /// comparing the two: the same initial data); later starts use `init` and
    /// the hinted ranges. Off by default: a campaign wants signs and magnitudes
    /// beyond [1, 9] in its data.
    bool start_from_baseline = false;
    /// Work units the search may spend (a node costs its op's work estimate,
    /// spec::hints::work, or its element count, per evaluation, and three times
    /// that per VJP through it): the search fails once it is spent, so a graph
    /// that takes many steps through a large Conv is left for another graph
    /// rather than searched for minutes. Deterministic, unlike a time limit.
    double work_budget = static_cast<double>(default_search_work);
    /// A start whose target loss has not dropped by 1% for this many steps is left
    /// for the next start, as is one that has taken `steps_per_start` steps in all
    /// (targets that keep trading places). Short starts let a 256-evaluation budget
    /// reach the later start kinds and scales: on five 512-graph samples of the
    /// benchmark (seeds 1, 11, 12, 13, 21) 24 / 48 succeeded on 2,502 graphs of 2,560
    /// and 48 / 96 on 2,489, fewer on every sample, with more evaluations per graph.
    std::size_t stalled_steps_per_start = 24;
    std::size_t steps_per_start = 48;
};

struct search_result {
    bool success = false;
    std::size_t evaluations = 0;
    std::size_t restarts = 0;  ///< re-draws after zero or unexplained gradients
    std::size_t gradient_steps = 0;
    double work = 0.0;         ///< work units spent (search_options::work_budget)
    bool out_of_work = false;  ///< stopped by work_budget, not by iterations
    std::string last_failure;  ///< the last failing node and why
    std::string failing_op;    ///< op_type of that node (empty on success)
    /// Data of every free value (graph inputs and weights).
    std::map<std::string, tensor, std::less<>> values;
    /// Every value of the successful run (graph outputs included).
    std::map<std::string, tensor, std::less<>> run;
};

namespace detail {

struct free_value {
    std::string name;
    dtype type = dtype::f32;
    shape_type shape;
    std::pair<double, double> range;
    array<double> x, m, v;  // master copy (floating) and Adam moments
    /// `x` in its dtype, kept from a draw until the next evaluation takes it
    /// (a fresh draw is already in its dtype: converting back costs a rounding
    /// per element, float16's in software).
    std::optional<tensor> drawn;
    /// `x` does not hold the draw yet: most graphs succeed at their first
    /// evaluation and never need it, so it is widened from the drawn tensor
    /// only when a gradient step needs it.
    bool x_pending = false;
};

/// The master copy in the value's dtype (value_cast semantics, as tensor::cast),
/// converted in one pass: this runs for every free value at every evaluation.
inline tensor to_dtype(const array<double>& a, dtype d) {
    shape_type dims(a.shape().begin(), a.shape().end());
    auto out = tensor::for_overwrite(d, dims);
    out.visit([&](auto dst) {
        using T = typename decltype(dst)::value_type;
        for (std::size_t k = 0; k < dst.size(); ++k) dst[k] = value_cast<T>(a.data()[k]);
    });
    return out;
}

/// Whether every element is finite, read in the tensor's own dtype (a copy
/// widened to double would cost an allocation and a pass per node and evaluation).
inline bool all_finite(const tensor& t) {
    if (!info(t.element_dtype()).is_floating) return true;
    return t.visit([](auto v) {
        using T = typename decltype(v)::value_type;
        if constexpr (std::is_floating_point_v<T>) {
            return ops::nn::all_finite<T>(v);  // the kernels' vectorized check
        } else if constexpr (dtype_traits<T>::is_floating) {
            // On the bits, in blocks without an early exit, so that the loop vectorizes.
            constexpr std::size_t block = 32;
            unsigned any = 0;
            std::size_t i = 0;
            for (; i + block <= v.size(); i += block) {
                unsigned lane = 0;
                for (std::size_t j = 0; j < block; ++j) lane |= tensoracle::isfinite(v[i + j]) ? 0u : 1u;
                any |= lane;
            }
            for (; i < v.size(); ++i) any |= tensoracle::isfinite(v[i]) ? 0u : 1u;
            return any == 0;
        } else {
            return true;
        }
    });
}

/// The first node that fails on `values` (mutated: gains every computed value).
struct failure {
    std::size_t node = 0;
    bool thrown = false;
    std::string reason;
};

/// The node's domain rules (none when its attributes do not parse) and a copy of its
/// arguments (an absent optional input as an empty tensor), as the rules take them.
inline std::vector<spec::domain_rule> domain_rules(const ad::detail::node_call& call) {
    try {
        return call.op->domain(call.op->normalize_attributes(call.attributes));
    } catch (const error&) {
        return {};
    }
}
inline std::vector<tensor> rule_arguments(const ad::detail::node_call& call) {
    std::vector<tensor> args;
    for (const auto* a : call.args) args.push_back(a != nullptr ? *a : tensor());
    return args;
}
/// The first rule whose loss is positive on `args`, with that loss.
inline std::optional<std::pair<std::size_t, double>> first_violated_rule(const std::vector<spec::domain_rule>& rules,
                                                                         const std::vector<tensor>& args) {
    for (std::size_t r = 0; r < rules.size(); ++r) {
        double loss = 0.0;
        try {
            loss = rules[r].loss(args);
        } catch (const error&) {
            loss = 0.0;
        }
        if (loss > 0.0) return std::make_pair(r, loss);
    }
    return std::nullopt;
}

/// A node's cost in work units: its op's work estimate at these shapes
/// (spec::hints::work), at least the elements it reads and writes.
inline double node_work(const ad::detail::node_call& call, const std::vector<tensor>& out) {
    double elements = 0.0;
    for (const auto* a : call.args) elements += a != nullptr ? static_cast<double>(a->size()) : 0.0;
    for (const auto& o : out) elements += static_cast<double>(o.size());
    const auto hints = call.op->hints();
    if (!hints.work_estimate) return elements;
    try {
        const auto ctx = ad::make_context(*call.op, call.args, call.attributes);
        std::vector<std::vector<spec::expr>> shapes;
        for (const auto& o : out) {
            std::vector<spec::expr> dims;
            for (const auto d : o.shape()) dims.emplace_back(static_cast<std::int64_t>(d));
            shapes.push_back(std::move(dims));
        }
        return std::max(elements, static_cast<double>(hints.work_estimate(ctx, shapes).eval(ctx.env())));
    } catch (const error&) {
        return elements;
    }
}

/// Runs the graph's nodes in order until one fails. `work` caches each node's
/// cost (negative: not known yet; shapes do not change between evaluations)
/// and `spent` gains the cost of the nodes run.
inline std::optional<failure> run_until_failure(const graph::graph& m,
                                                std::map<std::string, tensor, std::less<>>& values,
                                                std::vector<double>& work, double& spent) {
    work.resize(m.nodes.size(), -1.0);
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        const auto& n = m.nodes[i];
        const auto call = ad::detail::prepare(n, values);
        std::vector<tensor> out;
        try {
            out = spec::evaluate(*call.op, call.args, call.attributes);
        } catch (const error& e) {
            return failure{i, true, n.label() + ": " + e.what()};
        }
        if (work[i] < 0.0) work[i] = node_work(call, out);
        spent += work[i];
        for (std::size_t o = 0; o < n.outputs.size() && o < out.size(); ++o) {
            if (!all_finite(out[o])) {
                return failure{i, false, n.label() + ": output " + std::to_string(o) + " is not finite"};
            }
        }
        // An integer output has no NaN to show that it left the op's domain (Pow of an
        // integer base wraps or casts a NaN, which runtimes do differently): check the rules.
        const bool discrete = std::any_of(out.begin(), out.end(), [](const tensor& t) { return !info(t.element_dtype()).is_floating; });
        if (discrete) {
            const auto rules = domain_rules(call);
            if (const auto v = first_violated_rule(rules, rule_arguments(call))) {
                return failure{i, false, n.label() + ": integer output outside the domain (" + rules[v->first].description + ")"};
            }
        }
        for (std::size_t o = 0; o < n.outputs.size() && o < out.size(); ++o) {
            if (!n.outputs[o].empty()) values.insert_or_assign(n.outputs[o], std::move(out[o]));
        }
    }
    return std::nullopt;
}

/// Simultaneous-perturbation estimate of a loss's gradient (rules without an
/// analytic gradient): the average of (L(x + c D) - L(x - c D)) / (2c) * D
/// over a few random sign vectors D.
inline std::vector<tensor> estimate_gradient(const spec::domain_rule& rule, std::span<const tensor> in, rng& g) {
    std::vector<array<double>> x, acc;
    for (const auto& t : in) {
        x.push_back(info(t.element_dtype()).is_floating ? t.to<double>() : array<double>::from_shape({0}));
        acc.push_back(array<double>::from_shape(x.back().shape()));
        acc.back().fill(0.0);
    }
    constexpr int directions = 4;
    for (int r = 0; r < directions; ++r) {
        std::vector<array<double>> delta;
        std::vector<tensor> plus(in.begin(), in.end()), minus(in.begin(), in.end());
        for (std::size_t i = 0; i < in.size(); ++i) {
            delta.push_back(array<double>::from_shape(x[i].shape()));
            if (x[i].size() == 0) continue;
            auto p = x[i], q = x[i];
            for (std::size_t k = 0; k < x[i].size(); ++k) {
                const double d = g.bernoulli(0.5) ? 1.0 : -1.0;
                const double c = 1e-3 * std::max(1.0, std::fabs(x[i].data()[k]));
                delta[i].data()[k] = d * c;
                p.data()[k] += d * c;
                q.data()[k] -= d * c;
            }
            plus[i] = tensor(p).cast(in[i].element_dtype());
            minus[i] = tensor(q).cast(in[i].element_dtype());
        }
        const double diff = rule.loss(plus) - rule.loss(minus);
        if (!std::isfinite(diff)) continue;
        for (std::size_t i = 0; i < in.size(); ++i) {
            for (std::size_t k = 0; k < x[i].size(); ++k) {
                const double c = delta[i].data()[k];
                acc[i].data()[k] += diff / (2.0 * c) / directions;
            }
        }
    }
    std::vector<tensor> out;
    for (auto& a : acc) out.emplace_back(a);
    return out;
}

}  // namespace detail

/// Finds data for the free values of `sketch` (its graph inputs and weights
/// not fixed by the generator) under which every node's output is finite.
[[nodiscard]] inline search_result search_inputs(const graph_sketch& sketch, rng& g,
                                                 const search_options& options = {}) {
    const auto& m = sketch.model;
    search_result result;
    std::vector<detail::free_value> free;
    auto add_free = [&](const std::string& name, dtype d, const shape_type& s) {
        detail::free_value f;
        f.name = name;
        f.type = d;
        f.shape = s;
        const auto it = sketch.ranges.find(name);
        f.range = it != sketch.ranges.end() ? it->second : options.init;
        free.push_back(std::move(f));
    };
    for (const auto& in : m.inputs) add_free(in.name, in.type, in.shape ? *in.shape : shape_type{});
    for (const auto& [name, t] : m.initializers) {
        if (sketch.fixed.count(name) == 0) add_free(name, t.element_dtype(), t.shape());
    }
    double scale = 1.0;     // range scale of the current start (see restart)
    bool positive = false;  // the current start draws only the positive part of each range
    bool from_one = false;  // the current start draws values >= 1 (NNSmith's sampling range starts there)
    bool some_zero = false;  // the current start sets each free value to all zeros with probability 1/2
    bool nonzero_integers = false;  // after an integer division by zero: integer data without zeros
    auto draw = [&](detail::free_value& f, bool baseline) {
        auto r = baseline ? options.baseline_range : f.range;
        if (!baseline && positive && r.second > 0.0) {
            // Integers from 1: a zero is what divisions and Relu paths fail on, and no gradient moves it.
            r.first = std::max(r.first, info(f.type).is_floating ? 0.0 : 1.0 / scale);
        }
        double lo = baseline ? r.first : r.first * scale, hi = baseline ? r.second : r.second * scale;
        if (!baseline && from_one && r.second >= 1.0) {
            // Domains such as x > 1 in every element (Log of Acosh, Log of a ReduceMin of Log)
            // are rarely all met by a draw that starts below 1, and a gradient through a
            // reduction moves one element per step.
            lo = 1.0;
            hi = std::max(hi, 2.0);
        }
        tensor t = spec::random_values(g, f.type, f.shape, std::min(lo, hi), std::max(hi, lo + 1e-9));
        // x is widened from t only where a start below changes the draw; an
        // unchanged draw goes to the evaluation as it is, and x is widened
        // later if a gradient step needs it (most graphs succeed first time).
        f.x_pending = true;
        auto widen = [&]() {
            if (f.x_pending) f.x = t.to<double>();
            f.x_pending = false;
        };
        bool changed = false;  // x no longer holds the draw t
        if (f.type == dtype::boolean && !baseline && (positive || from_one)) {
            // No gradient moves a bool: starts take turns over random, all
            // false (Atanh of a Cast needs no true) and all true (Log of one).
            widen();
            f.x.fill(from_one ? 1.0 : 0.0);
            changed = true;
        }
        if (!baseline && some_zero && g.bernoulli(0.5)) {
            if (f.x_pending) f.x = array<double>::from_shape(t.shape());
            f.x_pending = false;
            f.x.fill(0.0);
            changed = true;
        }
        if (nonzero_integers && !info(f.type).is_floating && f.type != dtype::boolean) {
            widen();
            for (auto& v : f.x) {
                if (v == 0.0) v = positive || g.bernoulli(0.5) || !info(f.type).is_signed ? 1.0 : -1.0;
            }
            changed = true;
        }
        // A draw that round-trips through double exactly (every floating one;
        // integers below 2^53) is what to_dtype(x) would give: keep it.
        const bool exact = info(f.type).is_floating || std::max(std::abs(lo), std::abs(hi)) < 0x1p52;
        f.drawn.reset();
        if (!changed && exact) {
            f.drawn = std::move(t);
        } else {
            widen();
        }
        // Adam's moments are (re)set when a target is chosen, before any step:
        // most graphs succeed at their first evaluation and never need them.
    };
    for (auto& f : free) draw(f, options.sampling || options.start_from_baseline);
    std::pair<std::size_t, std::size_t> target{SIZE_MAX, SIZE_MAX};
    std::set<std::pair<std::size_t, std::size_t>> visited;  // (node, rule) targets since the last draw
    double step_scale = 1.0;
    std::size_t adam_t = 0, stalled_steps = 0, steps_since_start = 0;
    double best_loss = 0.0;  // lowest loss on the current target
    // A fresh random start. Ranges cycle through scales 1, 1/2, ..., 1/128:
    // small values avoid overflow and the flat zones of integer and
    // piecewise-constant paths no gradient crosses; large ones reach domains
    // such as x >= 1. Starts take turns: the whole range; one where each free
    // value is all zeros or not, at random (domains only an exact value
    // reaches: Atanh(Selu(Sign(y / x))) needs y = 0, Ceil(Cosh(x)) is 1 only
    // at x = 0, a sum of Pow(x, e) over 60,000 float16 elements fits at e = 0;
    // a gradient steps over such points); the positive part of each range (a
    // domain behind a sign change, Acosh(Floor(1 / x)) needs x > 0 in every
    // element, is a local minimum the gradient does not leave); values from 1 up.
    auto restart = [&]() {
        ++result.restarts;
        const std::size_t kind = result.restarts % 4;
        some_zero = kind == 1;
        positive = kind == 2;
        from_one = kind == 3;
        scale = std::ldexp(1.0, -static_cast<int>((result.restarts / 4) % 8));
        for (auto& f : free) draw(f, false);
        target = {SIZE_MAX, SIZE_MAX};
        visited.clear();
        step_scale = 1.0;
        steps_since_start = 0;
    };

    std::vector<double> node_work;
    for (; result.evaluations < options.iterations;) {
        if (result.work >= options.work_budget) {
            result.out_of_work = true;
            break;
        }
        ++result.evaluations;
        std::map<std::string, tensor, std::less<>> values;
        for (const auto& [name, t] : m.initializers) {
            if (sketch.fixed.count(name) != 0) values.emplace(name, t);
        }
        for (auto& f : free) {
            if (f.drawn) {
                values.insert_or_assign(f.name, std::move(*f.drawn));
                f.drawn.reset();
            } else {
                values.insert_or_assign(f.name, detail::to_dtype(f.x, f.type));
            }
        }
        const auto fail = detail::run_until_failure(m, values, node_work, result.work);
        if (!fail) {
            result.success = true;
            result.last_failure.clear();
            result.failing_op.clear();
            for (const auto& f : free) result.values.emplace(f.name, values.at(f.name));
            result.run = std::move(values);
            return result;
        }
        result.last_failure = fail->reason;
        result.failing_op = m.nodes[fail->node].op_type;
        if (options.sampling) {
            for (auto& f : free) draw(f, true);
            continue;
        }
        // The gradient step below works on x: widen the draws the evaluation took.
        for (auto& f : free) {
            if (f.x_pending) {
                f.x = values.at(f.name).to<double>();
                f.x_pending = false;
            }
        }
        const auto& n = m.nodes[fail->node];
        const auto call = ad::detail::prepare(n, values);
        const auto args = detail::rule_arguments(call);
        // The first violated domain rule of the failing node (none for a thrown error).
        const auto rules = detail::domain_rules(call);
        std::optional<std::size_t> which;
        double loss = 0.0;
        if (!fail->thrown) {
            if (const auto v = detail::first_violated_rule(rules, args)) std::tie(which, loss) = *v;
        }
        if (!which) {
            // Nothing to descend on (an overflow no rule describes, or an
            // integer error): re-draw at the next scale.
            nonzero_integers = nonzero_integers || fail->thrown;
            restart();
            continue;
        }
        if (target != std::make_pair(fail->node, *which)) {
            // Back to a target fixed before: two rules pull against each other
            // (Acos then Atanh of it). Adam's first steps are about lr whatever
            // the gradient, so halve the step until it fits their common interval.
            if (!visited.insert({fail->node, *which}).second) step_scale = std::max(step_scale * 0.5, 1.0 / 64.0);
            target = {fail->node, *which};
            stalled_steps = 0;
            best_loss = loss;
            adam_t = 0;
            for (auto& f : free) {
                if (f.m.shape() != f.x.shape()) f.m = array<double>::from_shape(f.x.shape());
                if (f.v.shape() != f.x.shape()) f.v = array<double>::from_shape(f.x.shape());
                f.m.fill(0.0);
                f.v.fill(0.0);
            }
        }
        // d loss / d (node inputs), then back through the nodes before it.
        std::vector<tensor> grads =
            rules[*which].gradient ? rules[*which].gradient(args) : detail::estimate_gradient(rules[*which], args, g);
        std::map<std::string, array<double>, std::less<>> cot;
        auto accumulate = [&](const std::string& name, const array<double>& d) {
            if (name.empty() || d.size() == 0) return;
            auto [it, fresh] = cot.emplace(name, d);
            if (!fresh && it->second.shape() == d.shape()) it->second += d;
        };
        for (std::size_t i = 0; i < grads.size() && i < n.inputs.size(); ++i) {
            if (grads[i].size() == 0) continue;
            accumulate(n.inputs[i], grads[i].to<double>());
        }
        for (std::size_t k = fail->node; k-- > 0;) {
            const auto& node = m.nodes[k];
            bool seeded = false;
            for (const auto& o : node.outputs) seeded = seeded || (!o.empty() && cot.count(o) != 0);
            if (!seeded) continue;
            const auto* r = ad::find_rules<double>(node.op_type);
            if (r == nullptr) continue;  // not differentiable: the gradient stops here
            try {
                const auto c2 = ad::detail::prepare(node, values);
                const auto ctx = ad::make_context(*c2.op, c2.args, c2.attributes);
                const auto ids = r->differentiable_inputs(ctx);
                std::vector<array<double>> xs(ctx.input_count(), ad::detail::empty_array<double>());
                for (const std::size_t i : ids) xs[i] = ad::lift<double>(*c2.args[i]);
                const auto dts = c2.op->output_dtypes(ctx);
                std::vector<array<double>> w;
                for (std::size_t o = 0; o < dts.size(); ++o) {
                    const auto it = o < node.outputs.size() ? cot.find(node.outputs[o]) : cot.end();
                    w.push_back(it != cot.end() && info(dts[o]).is_floating ? it->second
                                                                            : ad::detail::empty_array<double>());
                }
                result.work += 3.0 * std::max(node_work[k], 0.0);
                const auto back = r->vjp(ctx, xs, w, {.proxy = true, .elementwise_forward = true});
                for (const std::size_t i : ids) accumulate(node.inputs[i], back.cotangents[i]);
            } catch (const error&) {
                continue;
            }
        }
        // Adam on the free floating values the loss reaches. A target whose
        // loss has not dropped by 1% in 16 steps gets smaller steps (it may be
        // narrower than lr); one that is still shrinking keeps its pace, since
        // a large tensor can need many steps of lr to move all its elements.
        if (loss < best_loss * 0.99) {
            best_loss = loss;
            stalled_steps = 0;
        } else if (++stalled_steps % 16 == 0) {
            step_scale = std::max(step_scale * 0.5, 1.0 / 64.0);
        }
        // A local minimum (smaller steps did not help), or targets that keep
        // trading places (each fix breaks another rule): start elsewhere.
        if (stalled_steps >= options.stalled_steps_per_start || ++steps_since_start >= options.steps_per_start) {
            restart();
            continue;
        }
        ++adam_t;
        ++result.gradient_steps;
        bool moved = false;
        constexpr double b1 = 0.9, b2 = 0.999, eps = 1e-8;
        for (auto& f : free) {
            if (!info(f.type).is_floating) continue;
            const auto it = cot.find(f.name);
            if (it == cot.end() || it->second.shape() != f.x.shape()) continue;
            const auto& d = it->second;
            for (std::size_t k = 0; k < f.x.size(); ++k) {
                double gk = d.data()[k];
                if (std::isnan(gk)) {  // no direction at all: this value restarts at random
                    f.x.data()[k] = g.uniform(f.range.first, std::max(f.range.second, f.range.first + 1e-9));
                    moved = true;
                    continue;
                }
                // An infinite slope (Acosh at 1, Sqrt at 0) still says which way to go; Adam
                // takes about lr in that direction whatever the size.
                if (std::isinf(gk)) gk = std::copysign(1e100, gk);
                if (gk == 0.0) continue;
                f.m.data()[k] = b1 * f.m.data()[k] + (1 - b1) * gk;
                f.v.data()[k] = b2 * f.v.data()[k] + (1 - b2) * gk * gk;
                const double mh = f.m.data()[k] / (1 - std::pow(b1, static_cast<double>(adam_t)));
                const double vh = f.v.data()[k] / (1 - std::pow(b2, static_cast<double>(adam_t)));
                f.x.data()[k] -= step_scale * options.learning_rate * mh / (std::sqrt(vh) + eps);
                moved = true;
            }
        }
        if (!moved) restart();  // no free value reached: start elsewhere
    }
    // Budget spent: the last data tried (the case is still a valid graph).
    for (auto& f : free) {
        // A draw not yet evaluated is x in its dtype (x itself may still be pending).
        result.values.insert_or_assign(f.name, f.drawn ? std::move(*f.drawn) : detail::to_dtype(f.x, f.type));
    }
    return result;
}

}  // namespace tensoracle::gen
// ---- end tensoracle/gen/input_search.hpp ----

// ---- begin tensoracle/mutate/mutate.hpp ----
// tensoracle: semantics-preserving mutations, the whole layer: the registry of
// every mutation (resolution, recover, rewrite, emi), chains of mutations from
// a seed (composition), the interpreter oracle that says whether a mutant
// agrees with its original at its class's level, and the list of mutations
// as a Markdown table (docs/MUTATIONS.md is generated from it).
//
//   auto m = mutate::mutate_graph(g, inputs, seed, {.steps = 3});
//   if (m) { auto verdict = mutate::check(*m); ... }   // m->model, m->chain
//
// Approximate steps are applied only where the graph is well conditioned on
// the profiled inputs: before keeping one, its rewritten values are perturbed
// by `probe_ulps` units in the last place of their magnitude plus their operands'
// mean magnitude (up, down, at random), and the graph's outputs must stay
// within the step's level. A
// comparison or a rounding downstream of a value computed near a tie would
// otherwise turn the rewrite's last-bit differences into different answers,
// which is no fault of the rewrite (or of a compiler doing the same).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

// ---- begin tensoracle/mutate/emi.hpp ----
// tensoracle: equivalence modulo inputs (EMI). Dead code behind guards that
// are true (or zero) on the profiled inputs: the mutant equals the original on
// those inputs, and a compiler that mishandles the control flow or the dead
// code shows it. Guards follow TorchProbe's grammar (a reduction, an element
// or a dimension of a value compared with a constant), with a margin of
// |value| + 1 so that no rounding a compiler does upstream flips them.
//
//   emi_if          nodes moved into an If's then_branch; else_branch holds a
//                   perturbed copy (dead); cond is true on the profile
//   emi_zero_guard  x -> x + g * dead(x), g == 0 exactly on the profile
//   emi_where_guard x -> Where(cond, x, dead(x)), cond true on the profile

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

// ---- begin tensoracle/mutate/recover.hpp ----
// tensoracle: mutate-then-recover mutations (TorchProbe): a value is changed
// and changed back before its readers see it (transpose and transpose back,
// reshape and back, pad then slice, split then concat, a wider cast and back,
// a power-of-two scale and back, an integer offset and back, unsqueeze then
// squeeze). All are exact: data movement and exact arithmetic.

#include <cmath>
#include <cstdint>
#include <vector>

// ---- begin tensoracle/mutate/mutation.hpp ----
// tensoracle: semantics-preserving graph mutations, the common part.
//
// A mutation is a small named unit (TorchProbe's mutations, PolyJuice's
// equality rewrites): where it applies (a typed precondition over a node or a
// value: op, dtypes, shapes, attributes, and for EMI the values on the
// profiled inputs), what it rewrites, and its numeric class:
//   exact        the mutant computes the same values (data movement, identity
//                casts, guarded dead code): equal element by element on our
//                interpreter (+0 and -0 equal, NaN where the original has NaN);
//   approximate  the same function in real arithmetic, rounded differently
//                (reassociation, decompositions): equal at a GraphNet
//                tolerance level the mutation states, resolved per dtype.
// Mutations rewrite a `context`: the graph, the values of every tensor on the
// profiled inputs, names no scope uses yet, and a seeded rng, so a mutant is a
// pure function of (graph, inputs, seed).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>


namespace tensoracle::mutate {

/// How closely a mutant must agree with its original (see the header comment).
enum class numeric_class : std::uint8_t { exact, approximate };

/// The four families of the issue's taxonomy.
enum class family : std::uint8_t {
    resolution,  ///< an op replaced by its decomposition
    recover,     ///< mutate-then-recover: a value changed and changed back
    rewrite,     ///< the identities compilers rewrite with, applied by us
    emi,         ///< equivalence modulo inputs: dead code behind guards true on the profiled inputs
};

inline constexpr family all_families[] = {family::resolution, family::recover, family::rewrite, family::emi};

[[nodiscard]] constexpr std::string_view to_string(numeric_class c) noexcept {
    return c == numeric_class::exact ? "exact" : "approximate";
}
[[nodiscard]] constexpr std::string_view to_string(family f) noexcept {
    switch (f) {
        case family::resolution: return "resolution";
        case family::recover: return "recover";
        case family::rewrite: return "rewrite";
        case family::emi: return "emi";
    }
    return "unknown";
}
/// The family named `s` ("resolution", "recover", "rewrite", "emi"); throws otherwise.
[[nodiscard]] inline family family_from_string(std::string_view s) {
    for (const auto f : all_families) {
        if (to_string(f) == s) return f;
    }
    throw error("tensoracle::mutate::family_from_string",
                "unknown mutation family '" + std::string(s) + "' (known: resolution, recover, rewrite, emi)");
}

/// One place a mutation applies, as its `sites` function found it.
struct site {
    static constexpr std::size_t no_node = std::numeric_limits<std::size_t>::max();
    std::size_t node = no_node;  ///< the node it rewrites, or no_node
    std::string value;           ///< the value it intercepts, or ""
    numeric_class numeric = numeric_class::exact;
    std::string op_type;         ///< the op it is anchored at ("" for a graph input or weight)
    dtype type = dtype::f32;     ///< the dtype it works in
    /// Values the rewrite reads and the values it redefines: an approximate
    /// rewrite's conditioning probe perturbs `rewritten` at the scale of `reads`.
    std::vector<std::string> reads, rewritten;
    [[nodiscard]] std::string where() const {
        return (op_type.empty() ? std::string("value") : op_type) + " " + std::string(name(type));
    }
};

/// The graph being mutated, what its values are on the profiled inputs, and the
/// means to rewrite it.
class context {
public:
    /// Profiles `g` on `feeds` (every graph input fed); the seed drives every random choice.
    context(graph::graph g, std::map<std::string, tensor, std::less<>> feeds, std::uint64_t seed)
        : graph_(std::move(g)), feeds_(std::move(feeds)), rng_(seed) {
        refresh();
    }

    [[nodiscard]] const graph::graph& graph() const noexcept { return graph_; }
    /// The graph, to rewrite: what producer() and readers() knew is forgotten.
    [[nodiscard]] graph::graph& graph() noexcept {
        index_.reset();
        return graph_;
    }
    [[nodiscard]] const std::map<std::string, tensor, std::less<>>& feeds() const noexcept { return feeds_; }
    /// Every value of the graph's own scope on the profiled inputs.
    [[nodiscard]] const std::map<std::string, tensor, std::less<>>& values() const noexcept { return values_; }
    [[nodiscard]] rng& random() noexcept { return rng_; }

    [[nodiscard]] const tensor& value(const std::string& v) const {
        const auto it = values_.find(v);
        if (it == values_.end()) throw error("tensoracle::mutate::context", "no profiled value '" + v + "'");
        return it->second;
    }
    [[nodiscard]] dtype dtype_of(const std::string& v) const { return value(v).element_dtype(); }
    [[nodiscard]] const shape_type& shape_of(const std::string& v) const { return value(v).shape(); }

    /// The node that defines `v`, if a node does.
    [[nodiscard]] std::optional<std::size_t> producer(const std::string& v) const {
        const auto& p = index().producer;
        const auto it = p.find(v);
        if (it == p.end()) return std::nullopt;
        return it->second;
    }
    /// The nodes that read `v` (as an input or from inside a branch), in node order.
    [[nodiscard]] const std::vector<std::size_t>& readers(const std::string& v) const {
        static const std::vector<std::size_t> none;
        const auto& r = index().readers;
        const auto it = r.find(v);
        return it == r.end() ? none : it->second;
    }
    [[nodiscard]] bool is_graph_output(const std::string& v) const {
        return std::any_of(graph_.outputs.begin(), graph_.outputs.end(), [&](const auto& o) { return o.name == v; });
    }
    [[nodiscard]] bool is_graph_input(const std::string& v) const {
        return std::any_of(graph_.inputs.begin(), graph_.inputs.end(), [&](const auto& o) { return o.name == v; });
    }
    [[nodiscard]] bool is_initializer(const std::string& v) const { return graph_.initializers.count(v) != 0; }

    /// Does op `op_type` take dtype `d` at input slot `k` in this graph's opset? The
    /// registry holds one version of each op: an older graph opset may take fewer
    /// dtypes (Add took no int8 before opset 14), so there only float16/32/64 count.
    [[nodiscard]] bool accepts(std::string_view op_type, std::size_t k, dtype d) const {
        const auto* op = ops::find_op(op_type);
        if (op == nullptr || op->inputs.empty()) return false;
        if (!op->inputs[std::min(k, op->inputs.size() - 1)].types.contains(d)) return false;
        return graph_.opset >= op->opset || d == dtype::f32 || d == dtype::f64 || d == dtype::f16;
    }

    /// A name no scope of the graph uses ("m<k>_<hint>").
    [[nodiscard]] std::string fresh(std::string_view hint) {
        for (;;) {
            std::string n = "m" + std::to_string(counter_++) + "_" + std::string(hint);
            if (used_.insert(n).second) return n;
        }
    }
    /// A new weight holding `t`; returns its name.
    std::string add_constant(tensor t, std::string_view hint = "c") {
        auto n = fresh(hint);
        graph().initializers.emplace(n, std::move(t));
        return n;
    }
    /// A 1-D int64 weight (shapes, axes, pads, split sizes).
    std::string add_ints(const std::vector<std::int64_t>& v, std::string_view hint = "i") {
        array<std::int64_t> a = xt::zeros<std::int64_t>({v.size()});
        std::copy(v.begin(), v.end(), a.begin());
        return add_constant(tensor(a), hint);
    }
    /// A rank-0 weight of dtype `d` holding `x` (converted with value_cast).
    std::string add_scalar(dtype d, double x, std::string_view hint = "s") { return add_constant(scalar(d, x), hint); }

    /// Appends a node; `outputs` names it writes (fresh names for empty ones). Returns its outputs.
    std::vector<std::string> add_node(std::string op_type, std::vector<std::string> inputs, std::vector<std::string> outputs,
                                      spec::attribute_map attributes = {}) {
        for (auto& o : outputs) {
            if (o.empty()) o = fresh(op_type);
        }
        graph::node n;
        n.op_type = std::move(op_type);
        n.inputs = std::move(inputs);
        n.outputs = outputs;
        n.attributes = std::move(attributes);
        graph().nodes.push_back(std::move(n));
        return outputs;
    }
    /// add_node for one output; returns its name.
    std::string add(std::string op_type, std::vector<std::string> inputs, spec::attribute_map attributes = {}, std::string output = {}) {
        return add_node(std::move(op_type), std::move(inputs), {std::move(output)}, std::move(attributes)).front();
    }

    /// Where a rewrite of value `v` plugs in: it reads `src` and must define `dst`,
    /// which every reader of `v` then reads. A value a node defines keeps its name for
    /// its readers (and as a graph output): the node's output is renamed `src`. A graph
    /// input or weight keeps its name as `src`; its readers move to a new `dst`.
    struct splice {
        std::string src, dst;
    };
    splice intercept(const std::string& v) {
        if (const auto p = producer(v)) {
            auto& outs = graph().nodes[*p].outputs;
            const auto src = fresh(v + "_pre");
            std::replace(outs.begin(), outs.end(), v, src);
            if (const auto it = values_.find(v); it != values_.end()) values_.insert_or_assign(src, it->second);  // same value until refresh
            return {src, v};
        }
        const auto dst = fresh(v + "_m");
        for (auto& n : graph().nodes) rename_reads(n, v, dst);
        if (const auto it = values_.find(v); it != values_.end()) values_.insert_or_assign(dst, it->second);
        return {v, dst};
    }

    /// Removes node `i` (its outputs must be defined again by the caller's new nodes).
    graph::node take_node(std::size_t i) {
        auto& nodes = graph().nodes;
        graph::node n = std::move(nodes.at(i));
        nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(i));
        return n;
    }

    /// Puts the nodes back in a topological order (ONNX requires it), validates the
    /// graph and profiles it again on the same inputs. Throws what validation or the
    /// interpreter throws.
    void refresh() {
        const auto order = graph_.topological_order();
        std::vector<graph::node> sorted;
        sorted.reserve(graph_.nodes.size());
        for (const auto i : order) sorted.push_back(std::move(graph_.nodes[i]));
        graph_.nodes = std::move(sorted);
        index_.reset();
        values_ = graph::run(graph_, feeds_, {.record_intermediates = true}).values;
        used_.clear();
        collect_names(graph_, used_);
    }

    /// A rank-0 tensor of dtype `d` holding `x`.
    [[nodiscard]] static tensor scalar(dtype d, double x) {
        tensor t = tensor::zeros(d, {});
        t.visit([&](auto s) { s[0] = value_cast<typename decltype(s)::value_type>(x); });
        return t;
    }

    /// Renames reads of `from` to `to` in `n`, inside its branches too.
    static void rename_reads(graph::node& n, const std::string& from, const std::string& to) {
        std::replace(n.inputs.begin(), n.inputs.end(), from, to);
        for (auto& [k, sub] : n.subgraphs) {
            for (auto& inner : sub->nodes) rename_reads(inner, from, to);
            for (auto& o : sub->outputs) {
                if (o.name == from) o.name = to;
            }
        }
    }

private:
    /// Who defines and who reads each value, computed when first asked after a change.
    struct value_index {
        std::map<std::string, std::size_t, std::less<>> producer;
        std::map<std::string, std::vector<std::size_t>, std::less<>> readers;
    };
    [[nodiscard]] const value_index& index() const {
        if (!index_) {
            value_index x;
            for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
                for (const auto& o : graph_.nodes[i].outputs) {
                    if (!o.empty()) x.producer.emplace(o, i);
                }
                for (const auto& r : graph::graph::reads(graph_.nodes[i])) x.readers[r].push_back(i);
            }
            index_ = std::move(x);
        }
        return *index_;
    }

    static void collect_names(const graph::graph& g, std::set<std::string>& out) {
        for (const auto& v : g.inputs) out.insert(v.name);
        for (const auto& v : g.outputs) out.insert(v.name);
        for (const auto& [k, t] : g.initializers) out.insert(k);
        for (const auto& n : g.nodes) {
            for (const auto& v : n.inputs) out.insert(v);
            for (const auto& v : n.outputs) out.insert(v);
            for (const auto& [k, sub] : n.subgraphs) collect_names(sub.get(), out);
        }
    }

    graph::graph graph_;
    std::map<std::string, tensor, std::less<>> feeds_;
    std::map<std::string, tensor, std::less<>> values_;
    rng rng_;
    std::set<std::string> used_;
    std::size_t counter_ = 0;
    mutable std::optional<value_index> index_;
};

/// One named mutation (a registry entry; see the family headers).
struct mutation {
    std::string_view name;
    mutate::family family = family::rewrite;
    std::string_view rewrites;      ///< what it does, in one line of formulas
    std::string_view precondition;  ///< where it applies, in words (its `sites` is the code)
    numeric_class numeric = numeric_class::exact;  ///< its class on floating data (integers may be exact)
    /// GraphNet level at which an approximate mutant agrees with its original.
    double level = -4.0;
    std::vector<site> (*sites)(const context&) = nullptr;
    void (*apply)(context&, const site&) = nullptr;
};

namespace detail {

[[nodiscard]] inline bool is_float(dtype d) noexcept { return info(d).is_floating; }

/// Does op `op_type` take dtype `d` at input slot `k` (in its registry version)?
[[nodiscard]] inline bool accepts(std::string_view op_type, std::size_t k, dtype d) {
    const auto* op = ops::find_op(op_type);
    if (op == nullptr || op->inputs.empty()) return false;
    return op->inputs[std::min(k, op->inputs.size() - 1)].types.contains(d);
}

/// The attribute `key` of `n` as an int, or `fallback` when absent.
[[nodiscard]] inline std::int64_t int_attr(const graph::node& n, std::string_view key, std::int64_t fallback) {
    const auto it = n.attributes.find(key);
    if (it == n.attributes.end()) return fallback;
    if (const auto* v = std::get_if<std::int64_t>(&it->second)) return *v;
    return fallback;
}
[[nodiscard]] inline double float_attr(const graph::node& n, std::string_view key, double fallback) {
    const auto it = n.attributes.find(key);
    if (it == n.attributes.end()) return fallback;
    if (const auto* v = std::get_if<double>(&it->second)) return *v;
    if (const auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
    return fallback;
}
[[nodiscard]] inline std::optional<std::vector<std::int64_t>> ints_attr(const graph::node& n, std::string_view key) {
    const auto it = n.attributes.find(key);
    if (it == n.attributes.end()) return std::nullopt;
    if (const auto* v = std::get_if<std::vector<std::int64_t>>(&it->second)) return *v;
    return std::nullopt;
}
[[nodiscard]] inline std::string str_attr(const graph::node& n, std::string_view key, std::string fallback) {
    const auto it = n.attributes.find(key);
    if (it == n.attributes.end()) return fallback;
    if (const auto* v = std::get_if<std::string>(&it->second)) return *v;
    return fallback;
}

/// The node's input k, or "" when absent.
[[nodiscard]] inline std::string input_or_empty(const graph::node& n, std::size_t k) { return k < n.inputs.size() ? n.inputs[k] : std::string(); }

/// Normalizes axis `a` for rank `r` (negative axes count from the end).
[[nodiscard]] inline std::int64_t norm_axis(std::int64_t a, std::size_t r) { return a < 0 ? a + static_cast<std::int64_t>(r) : a; }

/// A random permutation of 0..n-1 other than the identity where n > 1.
[[nodiscard]] inline std::vector<std::int64_t> random_permutation(rng& r, std::size_t n) {
    std::vector<std::int64_t> p(n);
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::int64_t>(i);
    for (int attempt = 0; attempt < 8; ++attempt) {
        for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[r.below(i)]);
        bool identity = true;
        for (std::size_t i = 0; i < n; ++i) identity = identity && p[i] == static_cast<std::int64_t>(i);
        if (!identity || n < 2) break;
    }
    return p;
}

/// The most elements a rewrite may materialize for a value of `n` elements (Pad):
/// 4 n, and never more than 2^20, so that a mutant costs what its original does.
[[nodiscard]] inline double padded_size_limit(std::size_t n) noexcept {
    return std::min(4.0 * static_cast<double>(std::max<std::size_t>(n, 16)), 1048576.0);
}

/// The largest finite value of dtype `d`, as a double.
[[nodiscard]] inline double max_finite(dtype d) noexcept {
    switch (d) {
        case dtype::f16: return 65504.0;
        case dtype::bf16: return 0x1.fep127;
        case dtype::f32: return static_cast<double>(std::numeric_limits<float>::max());
        case dtype::f64: return std::numeric_limits<double>::max();
        case dtype::i8: return 127.0;
        case dtype::i16: return 32767.0;
        case dtype::i32: return 2147483647.0;
        case dtype::i64: return 0x1p63;
        case dtype::u8: return 255.0;
        case dtype::boolean: return 1.0;
    }
    return 0.0;
}

/// The largest finite |x| of a floating tensor (0 for none).
[[nodiscard]] inline double max_abs(const tensor& t) {
    double m = 0.0;
    if (!is_float(t.element_dtype())) return m;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const double v = std::abs(t.value_as_double(i));
        if (std::isfinite(v)) m = std::max(m, v);
    }
    return m;
}

/// The mean finite |x| of a floating tensor (0 for none).
[[nodiscard]] inline double mean_abs(const tensor& t) {
    double sum = 0.0;
    std::size_t n = 0;
    if (!is_float(t.element_dtype())) return sum;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const double v = std::abs(t.value_as_double(i));
        if (std::isfinite(v)) {
            sum += v;
            ++n;
        }
    }
    return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

/// Sites of one op type: every node of `op_type` whose first output is profiled.
template <class Accept>
[[nodiscard]] std::vector<site> node_sites(const context& c, std::string_view op_type, numeric_class numeric, Accept&& accept) {
    std::vector<site> out;
    const auto& g = c.graph();
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const auto& n = g.nodes[i];
        if (n.op_type != op_type || n.outputs.empty() || n.outputs[0].empty() || c.values().count(n.outputs[0]) == 0) continue;
        if (!accept(n)) continue;
        site s;
        s.node = i;
        s.op_type = n.op_type;
        s.type = c.dtype_of(n.outputs[0]);
        s.numeric = is_float(s.type) ? numeric : numeric_class::exact;
        for (const auto& in : n.inputs) {
            if (!in.empty()) s.reads.push_back(in);
        }
        for (const auto& o : n.outputs) {
            if (!o.empty()) s.rewritten.push_back(o);
        }
        out.push_back(std::move(s));
    }
    return out;
}

/// Sites at values: every profiled value of the graph's scope `accept`s (graph
/// inputs, weights and node outputs alike), anchored at its producer's op.
template <class Accept>
[[nodiscard]] std::vector<site> value_sites(const context& c, numeric_class numeric, Accept&& accept) {
    std::vector<site> out;
    const auto& g = c.graph();
    auto consider = [&](const std::string& v, const std::string& op) {
        if (v.empty() || c.values().count(v) == 0) return;
        // A value nobody reads and no output shows is dead: rewriting it tests nothing.
        if (c.readers(v).empty() && !c.is_graph_output(v)) return;
        if (!accept(v)) return;
        site s;
        s.value = v;
        s.op_type = op;
        s.type = c.dtype_of(v);
        s.numeric = is_float(s.type) ? numeric : numeric_class::exact;
        s.reads = {v};
        s.rewritten = {v};
        out.push_back(std::move(s));
    };
    for (const auto& in : g.inputs) consider(in.name, "");
    for (const auto& [k, t] : g.initializers) consider(k, "");
    for (const auto& n : g.nodes) {
        for (const auto& o : n.outputs) consider(o, n.op_type);
    }
    return out;
}

}  // namespace detail

}  // namespace tensoracle::mutate
// ---- end tensoracle/mutate/mutation.hpp ----

namespace tensoracle::mutate {

namespace detail {

/// Int64 values read where an op wants constant shape data (Reshape's shape, Slice's
/// starts, axes, pads...): backends need those constant, so no value rewrite touches them.
[[nodiscard]] inline bool feeds_shape_slot(const context& c, const std::string& v) {
    if (c.dtype_of(v) != dtype::i64) return false;
    for (const auto i : c.readers(v)) {
        const auto& n = c.graph().nodes[i];
        for (std::size_t k = 1; k < n.inputs.size(); ++k) {
            if (n.inputs[k] == v && (graph::detail::is_control_flow(n.op_type) || !accepts(n.op_type, k, dtype::f32))) return true;
        }
    }
    return false;
}

/// Common acceptance of value rewrites: a profiled value that is not shape data.
[[nodiscard]] inline bool plain_value(const context& c, const std::string& v) {
    return !feeds_shape_slot(c, v) && c.value(v).size() > 0;
}

/// The inverse of permutation p.
[[nodiscard]] inline std::vector<std::int64_t> inverse_permutation(const std::vector<std::int64_t>& p) {
    std::vector<std::int64_t> q(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) q[static_cast<std::size_t>(p[i])] = static_cast<std::int64_t>(i);
    return q;
}

/// An integer dtype twice as wide or wider that holds every value of `d`, exactly.
[[nodiscard]] inline std::vector<dtype> exact_widenings(dtype d) {
    switch (d) {
        case dtype::f16:
        case dtype::bf16: return {dtype::f32, dtype::f64};
        case dtype::f32: return {dtype::f64};
        case dtype::i8: return {dtype::i16, dtype::i32, dtype::i64};
        case dtype::u8: return {dtype::i16, dtype::i32, dtype::i64};
        case dtype::i16: return {dtype::i32, dtype::i64};
        case dtype::i32: return {dtype::i64};
        case dtype::boolean: return {dtype::i32, dtype::f32};
        default: return {};
    }
}

// --- transpose_roundtrip --------------------------------------------------------
inline std::vector<site> transpose_roundtrip_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) { return c.shape_of(v).size() >= 2 && plain_value(c, v); });
}
inline void transpose_roundtrip_apply(context& c, const site& s) {
    const auto p = random_permutation(c.random(), c.shape_of(s.value).size());
    const auto [src, dst] = c.intercept(s.value);
    const auto t = c.add("Transpose", {src}, {{"perm", p}});
    c.add("Transpose", {t}, {{"perm", inverse_permutation(p)}}, dst);
}

// --- reshape_roundtrip ----------------------------------------------------------
inline std::vector<std::size_t> divisors(std::size_t n) {
    std::vector<std::size_t> d;
    for (std::size_t k = 1; k <= n; ++k) {
        if (n % k == 0) d.push_back(k);
    }
    return d;
}
inline std::vector<site> reshape_roundtrip_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) { return !c.shape_of(v).empty() && plain_value(c, v); });
}
inline void reshape_roundtrip_apply(context& c, const site& s) {
    const auto& shape = c.shape_of(s.value);
    const std::size_t n = c.value(s.value).size();
    // A random other factorization of the element count: [n], [a, n/a] or [a, b, n/(a b)].
    std::vector<std::int64_t> mid;
    auto& r = c.random();
    const std::size_t parts = 1 + r.below(3);
    std::size_t rest = n;
    for (std::size_t k = 1; k < parts; ++k) {
        const auto dv = divisors(rest);
        const std::size_t f = dv[r.below(dv.size())];
        mid.push_back(static_cast<std::int64_t>(f));
        rest /= f;
    }
    mid.push_back(static_cast<std::int64_t>(rest));
    std::vector<std::int64_t> back(shape.begin(), shape.end());
    const auto [src, dst] = c.intercept(s.value);
    const auto t = c.add("Reshape", {src, c.add_ints(mid, "shape")});
    c.add("Reshape", {t, c.add_ints(back, "shape")}, {}, dst);
}

// --- pad_slice --------------------------------------------------------------------
inline std::vector<site> pad_slice_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        return !c.shape_of(v).empty() && c.shape_of(v).size() <= 5 && plain_value(c, v) && c.accepts("Pad", 0, c.dtype_of(v));
    });
}
inline void pad_slice_apply(context& c, const site& s) {
    const auto& shape = c.shape_of(s.value);
    const std::size_t rank = shape.size();
    auto& r = c.random();
    std::vector<std::int64_t> pads(2 * rank, 0), starts, ends, axes;
    // Pad some axes (the last always), while the padded tensor stays within padded_size_limit.
    const double limit = padded_size_limit(c.value(s.value).size());
    double padded = static_cast<double>(c.value(s.value).size());
    for (std::size_t a = rank; a-- > 0;) {
        if (!(r.bernoulli(0.5) || a + 1 == rank)) continue;
        const auto before = r.integer(0, 2);
        const auto after = r.integer(before == 0 ? 1 : 0, 2);
        const double grown = padded / static_cast<double>(shape[a]) * static_cast<double>(shape[a] + static_cast<std::size_t>(before + after));
        if (grown > limit && !axes.empty()) continue;
        padded = grown;
        pads[a] = before;
        pads[a + rank] = after;
        starts.insert(starts.begin(), before);
        ends.insert(ends.begin(), before + static_cast<std::int64_t>(shape[a]));
        axes.insert(axes.begin(), static_cast<std::int64_t>(a));
    }
    const dtype d = c.dtype_of(s.value);
    const double fill = detail::is_float(d) ? r.uniform(-4.0, 4.0) : static_cast<double>(r.integer(0, 1));
    const auto [src, dst] = c.intercept(s.value);
    const auto padded_value = c.add("Pad", {src, c.add_ints(pads, "pads"), c.add_scalar(d, fill, "fill")}, {{"mode", std::string("constant")}});
    c.add("Slice", {padded_value, c.add_ints(starts, "starts"), c.add_ints(ends, "ends"), c.add_ints(axes, "axes")}, {}, dst);
}

// --- split_concat -----------------------------------------------------------------
inline std::vector<site> split_concat_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        const auto& sh = c.shape_of(v);
        return plain_value(c, v) && std::any_of(sh.begin(), sh.end(), [](std::size_t x) { return x >= 2; });
    });
}
inline void split_concat_apply(context& c, const site& s) {
    const auto& shape = c.shape_of(s.value);
    auto& r = c.random();
    std::vector<std::int64_t> axes;
    for (std::size_t a = 0; a < shape.size(); ++a) {
        if (shape[a] >= 2) axes.push_back(static_cast<std::int64_t>(a));
    }
    const auto axis = axes[r.below(axes.size())];
    const auto len = static_cast<std::int64_t>(shape[static_cast<std::size_t>(axis)]);
    // Two or three parts of random (positive) sizes.
    std::vector<std::int64_t> sizes;
    std::int64_t left = len;
    const std::size_t parts = len >= 3 && r.bernoulli(0.5) ? 3 : 2;
    for (std::size_t k = 0; k + 1 < parts; ++k) {
        const auto remaining_parts = static_cast<std::int64_t>(parts - k - 1);
        const auto take = r.integer(1, left - remaining_parts);
        sizes.push_back(take);
        left -= take;
    }
    sizes.push_back(left);
    const auto [src, dst] = c.intercept(s.value);
    const auto pieces = c.add_node("Split", {src, c.add_ints(sizes, "split")}, std::vector<std::string>(parts), {{"axis", axis}});
    c.add("Concat", pieces, {{"axis", axis}}, dst);
}

// --- cast_roundtrip ---------------------------------------------------------------
inline std::vector<site> cast_roundtrip_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) { return plain_value(c, v) && !exact_widenings(c.dtype_of(v)).empty(); });
}
inline void cast_roundtrip_apply(context& c, const site& s) {
    const dtype d = c.dtype_of(s.value);
    const auto wider = exact_widenings(d);
    const dtype w = wider[c.random().below(wider.size())];
    const auto [src, dst] = c.intercept(s.value);
    const auto t = c.add("Cast", {src}, {{"to", std::int64_t{onnx_type(w)}}});
    c.add("Cast", {t}, {{"to", std::int64_t{onnx_type(d)}}}, dst);
}

// --- scale_roundtrip --------------------------------------------------------------
/// The largest k in 1..4 such that max|v| * 2^k stays finite with a factor 4 to spare.
inline int safe_scale_exponent(const tensor& t) {
    const double big = max_finite(t.element_dtype());
    const double m = max_abs(t);
    for (int k = 4; k >= 1; --k) {
        if (m * std::ldexp(1.0, k + 2) < big) return k;
    }
    return 0;
}
inline std::vector<site> scale_roundtrip_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        return plain_value(c, v) && is_float(c.dtype_of(v)) && safe_scale_exponent(c.value(v)) > 0;
    });
}
inline void scale_roundtrip_apply(context& c, const site& s) {
    const dtype d = c.dtype_of(s.value);
    const int k = static_cast<int>(c.random().integer(1, safe_scale_exponent(c.value(s.value))));
    const auto [src, dst] = c.intercept(s.value);
    // x * 2^k * 2^-k: a power of two scales exactly while nothing overflows.
    const auto t = c.add("Mul", {src, c.add_scalar(d, std::ldexp(1.0, k), "pow2")});
    c.add("Mul", {t, c.add_scalar(d, std::ldexp(1.0, -k), "pow2")}, {}, dst);
}

// --- offset_roundtrip -------------------------------------------------------------
inline bool offset_fits(const tensor& t, std::int64_t k) {
    const double top = max_finite(t.element_dtype());
    for (std::size_t i = 0; i < t.size(); ++i) {
        const double v = t.value_as_double(i);
        if (v + static_cast<double>(k) > top) return false;
    }
    return true;
}
inline std::vector<site> offset_roundtrip_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        const dtype d = c.dtype_of(v);
        return plain_value(c, v) && !is_float(d) && d != dtype::boolean && c.accepts("Add", 0, d) && c.accepts("Sub", 0, d) && offset_fits(c.value(v), 1);
    });
}
inline void offset_roundtrip_apply(context& c, const site& s) {
    const dtype d = c.dtype_of(s.value);
    std::int64_t k = c.random().integer(1, 100);
    while (k > 1 && !offset_fits(c.value(s.value), k)) k /= 2;
    const auto [src, dst] = c.intercept(s.value);
    const auto cst = c.add_scalar(d, static_cast<double>(k), "offset");
    const auto t = c.add("Add", {src, cst});
    c.add("Sub", {t, cst}, {}, dst);
}

// --- unsqueeze_squeeze ------------------------------------------------------------
inline std::vector<site> unsqueeze_squeeze_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) { return c.shape_of(v).size() <= 4 && plain_value(c, v); });
}
inline void unsqueeze_squeeze_apply(context& c, const site& s) {
    const auto rank = static_cast<std::int64_t>(c.shape_of(s.value).size());
    const auto axis = c.random().integer(0, rank);
    const auto [src, dst] = c.intercept(s.value);
    const auto t = c.add("Unsqueeze", {src, c.add_ints({axis}, "axes")});
    c.add("Squeeze", {t, c.add_ints({axis}, "axes")}, {}, dst);
}

}  // namespace detail

/// The mutate-then-recover family.
[[nodiscard]] inline std::vector<mutation> recover_mutations() {
    using namespace detail;
    return {
        {"transpose_roundtrip", family::recover, "x -> Transpose(Transpose(x, p), p^-1)",
         "any value of rank >= 2 (p: a random permutation other than the identity)", numeric_class::exact, 0.0,
         &transpose_roundtrip_sites, &transpose_roundtrip_apply},
        {"reshape_roundtrip", family::recover, "x -> Reshape(Reshape(x, s'), shape(x))",
         "any value of rank >= 1 and at least one element (s': a random factorization of its size)", numeric_class::exact, 0.0,
         &reshape_roundtrip_sites, &reshape_roundtrip_apply},
        {"pad_slice", family::recover, "x -> Slice(Pad(x, pads, c), pads_begin, pads_begin + shape(x))",
         "any value of rank 1..5 whose dtype Pad takes (pads in 0..2 per side, constant c random)", numeric_class::exact, 0.0,
         &pad_slice_sites, &pad_slice_apply},
        {"split_concat", family::recover, "x -> Concat(Split(x, axis, sizes), axis)",
         "any value with a dimension >= 2 (2 or 3 parts of random sizes)", numeric_class::exact, 0.0, &split_concat_sites,
         &split_concat_apply},
        {"cast_roundtrip", family::recover, "x -> Cast(Cast(x, wider), dtype(x))",
         "f16/bf16 (to f32/f64), f32 (to f64), int8/uint8/int16/int32 (to a wider int), bool (to int32/f32)", numeric_class::exact, 0.0,
         &cast_roundtrip_sites, &cast_roundtrip_apply},
        {"scale_roundtrip", family::recover, "x -> Mul(Mul(x, 2^k), 2^-k)",
         "floating values whose profiled max abs(x) * 2^(k+2) stays finite, k in 1..4 (a power of two scales exactly)",
         numeric_class::exact, 0.0, &scale_roundtrip_sites, &scale_roundtrip_apply},
        {"offset_roundtrip", family::recover, "x -> Sub(Add(x, k), k)",
         "integer values whose profiled max + k fits the dtype, k in 1..100", numeric_class::exact, 0.0, &offset_roundtrip_sites,
         &offset_roundtrip_apply},
        {"unsqueeze_squeeze", family::recover, "x -> Squeeze(Unsqueeze(x, [a]), [a])", "any value of rank <= 4 (a: a random axis)",
         numeric_class::exact, 0.0, &unsqueeze_squeeze_sites, &unsqueeze_squeeze_apply},
    };
}

}  // namespace tensoracle::mutate
// ---- end tensoracle/mutate/recover.hpp ----

namespace tensoracle::mutate {

namespace detail {

/// Nodes downstream of node `i` (those that read, transitively, what it defines), with i.
inline std::set<std::size_t> descendants(const context& c, std::size_t i) {
    std::set<std::size_t> out{i};
    std::vector<std::size_t> todo{i};
    while (!todo.empty()) {
        const auto k = todo.back();
        todo.pop_back();
        for (const auto& o : c.graph().nodes[k].outputs) {
            if (o.empty()) continue;
            for (const auto r : c.readers(o)) {
                if (out.insert(r).second) todo.push_back(r);
            }
        }
    }
    return out;
}

/// Values a guard may read without depending on `after` (nodes it must not read from).
inline std::vector<std::string> guard_operands(const context& c, const std::set<std::size_t>& after) {
    std::vector<std::string> out;
    for (const auto& [v, t] : c.values()) {
        if (t.size() == 0 || feeds_shape_slot(c, v)) continue;
        if (const auto p = c.producer(v); p && after.count(*p) != 0) continue;
        out.push_back(v);
    }
    return out;
}

/// A rank-0 bool that is true on the profiled inputs, from one of `operands`.
inline std::string true_condition(context& c, const std::vector<std::string>& operands) {
    auto& r = c.random();
    const auto& u = operands[r.below(operands.size())];
    const tensor& t = c.value(u);
    const dtype d = t.element_dtype();
    // Value forms compare what u holds: only for finite data (a NaN compares false).
    bool finite = true;
    for (std::size_t i = 0; i < t.size() && finite; ++i) finite = std::isfinite(t.value_as_double(i));
    const bool reducible = finite && c.accepts("ReduceMax", 0, d) && d != dtype::u8 && d != dtype::boolean;
    const auto form = reducible ? r.below(5) : 4 + r.below(2);
    const auto rank0 = std::int64_t{0};
    if (form <= 3) {
        // A statistic of u, or one element, compared with a constant abs(s) + 1 away from it.
        double s = 0.0;
        std::string stat;
        if (form == 3) {
            const auto pos = static_cast<std::int64_t>(r.below(t.size()));
            s = t.value_as_double(static_cast<std::size_t>(pos));
            const auto flat = c.add("Reshape", {u, c.add_ints({-1}, "shape")});
            tensor index = tensor::zeros(dtype::i64, {});
            index.values<std::int64_t>()[0] = pos;
            stat = c.add("Gather", {flat, c.add_constant(index, "pos")}, {{"axis", rank0}});
        } else {
            const bool use_max = form != 1;
            s = use_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
            for (std::size_t i = 0; i < t.size(); ++i) s = use_max ? std::max(s, t.value_as_double(i)) : std::min(s, t.value_as_double(i));
            stat = c.add(use_max ? "ReduceMax" : "ReduceMin", {u}, {{"keepdims", rank0}});
        }
        const bool above = form == 2;  // stat < s + margin, else stat > s - margin
        const double margin = std::abs(s) + 1.0;
        const double k = above ? s + margin : s - margin;
        if (std::isfinite(s) && std::abs(k) <= 0.5 * max_finite(d)) {
            return c.add(above ? "Less" : "Greater", {stat, c.add_scalar(d, is_float(d) ? k : std::round(k), "guard")});
        }
    }
    // A dimension or the rank of u, exact whatever the arithmetic.
    const auto shape = c.add("Shape", {u});
    if (form == 5 || t.rank() == 0) {
        const auto rank = c.add("Size", {shape});
        return c.add("Equal", {rank, c.add_scalar(dtype::i64, static_cast<double>(t.rank()), "rank")});
    }
    const auto axis = r.below(t.rank());
    tensor index = tensor::zeros(dtype::i64, {});
    index.values<std::int64_t>()[0] = static_cast<std::int64_t>(axis);
    const auto dim = c.add("Gather", {shape, c.add_constant(index, "axis")}, {{"axis", rank0}});
    return c.add("Greater", {dim, c.add_scalar(dtype::i64, static_cast<double>(t.shape()[axis]) - 1.0, "guard")});
}

/// Dead code of x's dtype and shape: bounded (finite whatever x) for floating x.
inline std::string dead_value(context& c, const std::string& x, dtype d) {
    auto& r = c.random();
    if (is_float(d)) {
        std::string y = x;
        const std::size_t steps = 1 + r.below(2);
        for (std::size_t k = 0; k < steps; ++k) {
            switch (r.below(3)) {
                case 0: y = c.add("Tanh", {y}); break;
                case 1: y = c.add("Sigmoid", {y}); break;
                default: y = c.add("Exp", {c.add("Neg", {c.add("Abs", {y})})}); break;  // in (0, 1]
            }
        }
        return r.bernoulli(0.5) ? c.add("Mul", {y, y}) : y;
    }
    if (d == dtype::boolean) return c.add("Not", {x});
    if (info(d).is_signed && c.accepts("Neg", 0, d)) return c.add("Neg", {x});
    return c.add(c.accepts("Add", 0, d) ? "Add" : "Max", {x, c.add_scalar(d, 1.0, "one")});
}

/// Guards may read what lies upstream of `v` (or elsewhere), never downstream of it.
inline std::set<std::size_t> downstream_of_value(const context& c, const std::string& v) {
    std::set<std::size_t> out;
    for (const auto rd : c.readers(v)) {
        const auto d = descendants(c, rd);
        out.insert(d.begin(), d.end());
    }
    return out;
}

// --- emi_zero_guard ----------------------------------------------------------------------
inline std::vector<site> zero_guard_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        const dtype d = c.dtype_of(v);
        if (!plain_value(c, v) || d == dtype::boolean || !c.accepts("Mul", 0, d) || !c.accepts("Cast", 0, d)) return false;
        // Floating data must be finite: 0 * inf would be NaN.
        if (is_float(d)) {
            const auto& t = c.value(v);
            for (std::size_t i = 0; i < t.size(); ++i) {
                if (!std::isfinite(t.value_as_double(i))) return false;
            }
        }
        return !guard_operands(c, downstream_of_value(c, v)).empty();
    });
}
inline void zero_guard_apply(context& c, const site& s) {
    const dtype d = s.type;
    auto operands = guard_operands(c, downstream_of_value(c, s.value));
    auto& r = c.random();
    const auto [src, dst] = c.intercept(s.value);
    std::replace(operands.begin(), operands.end(), s.value, src);  // the value itself, read before the guard
    std::string zero;
    const auto& u = operands[r.below(operands.size())];
    if (is_float(c.dtype_of(u)) && r.bernoulli(0.5)) {
        // Relu(k - min(u)) with k below min(u) by |min| + 1: exactly 0.
        const tensor& t = c.value(u);
        double m = std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < t.size(); ++i) {
            const double x = t.value_as_double(i);
            m = std::isnan(x) ? std::numeric_limits<double>::quiet_NaN() : std::min(m, x);
            if (std::isnan(m)) break;
        }
        const auto ud = c.dtype_of(u);
        const double k = m - (std::abs(m) + 1.0);
        if (std::isfinite(m) && std::abs(k) <= 0.5 * max_finite(ud)) {
            zero = c.add("Relu", {c.add("Sub", {c.add_scalar(ud, k, "guard"), c.add("ReduceMin", {u}, {{"keepdims", std::int64_t{0}}})})});
            if (ud != d) zero = c.add("Cast", {zero}, {{"to", std::int64_t{onnx_type(d)}}});
        }
    }
    if (zero.empty()) {
        // Cast(Not(cond)) with cond true: exactly 0.
        const auto cond = true_condition(c, operands);
        zero = c.add("Cast", {c.add("Not", {cond})}, {{"to", std::int64_t{onnx_type(d)}}});
    }
    const auto dead = dead_value(c, src, d);
    c.add("Add", {src, c.add("Mul", {dead, zero})}, {}, dst);
}

// --- emi_where_guard ---------------------------------------------------------------------
inline std::vector<site> where_guard_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        return plain_value(c, v) && !guard_operands(c, downstream_of_value(c, v)).empty();
    });
}
inline void where_guard_apply(context& c, const site& s) {
    auto operands = guard_operands(c, downstream_of_value(c, s.value));
    const auto [src, dst] = c.intercept(s.value);
    std::replace(operands.begin(), operands.end(), s.value, src);
    const auto cond = true_condition(c, operands);
    const auto dead = dead_value(c, src, s.type);
    c.add("Where", {cond, src, dead}, {}, dst);
}

// --- emi_if --------------------------------------------------------------------------------
/// The region an If wraps, from node `i`: i and up to two later nodes that read its
/// outputs and nothing downstream of the region (so the If adds no cycle).
inline std::vector<std::size_t> if_region(const context& c, std::size_t i, std::size_t max_nodes) {
    const auto& g = c.graph();
    std::vector<std::size_t> region{i};
    std::set<std::string> defined(g.nodes[i].outputs.begin(), g.nodes[i].outputs.end());
    auto down = descendants(c, i);
    for (std::size_t j = i + 1; j < g.nodes.size() && region.size() < max_nodes; ++j) {
        const auto& n = g.nodes[j];
        if (graph::detail::is_control_flow(n.op_type)) continue;
        const auto reads = graph::graph::reads(n);
        bool uses_region = false, clean = true;
        for (const auto& v : reads) {
            if (defined.count(v) != 0) {
                uses_region = true;
            } else if (const auto p = c.producer(v); p && down.count(*p) != 0) {
                clean = false;  // reads something the region feeds from outside it
            }
        }
        if (!uses_region || !clean) continue;
        region.push_back(j);
        defined.insert(n.outputs.begin(), n.outputs.end());
    }
    return region;
}
/// Values the region defines that something outside it (or the graph's outputs) reads.
inline std::vector<std::string> region_outputs(const context& c, const std::vector<std::size_t>& region) {
    std::vector<std::string> out;
    const std::set<std::size_t> in(region.begin(), region.end());
    for (const auto i : region) {
        for (const auto& o : c.graph().nodes[i].outputs) {
            if (o.empty()) continue;
            bool outside = c.is_graph_output(o);
            for (const auto r : c.readers(o)) outside = outside || in.count(r) == 0;
            if (outside) out.push_back(o);
        }
    }
    return out;
}
inline std::vector<site> if_sites(const context& c) {
    std::vector<site> out;
    const auto& g = c.graph();
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const auto& n = g.nodes[i];
        if (graph::detail::is_control_flow(n.op_type) || n.outputs.empty()) continue;
        const auto outs = region_outputs(c, {i});
        if (outs.empty()) continue;
        bool ok = true;
        for (const auto& o : outs) ok = ok && c.values().count(o) != 0 && !feeds_shape_slot(c, o);
        if (!ok || guard_operands(c, descendants(c, i)).empty()) continue;
        site s;
        s.node = i;
        s.op_type = n.op_type;
        s.type = c.dtype_of(outs[0]);
        s.numeric = numeric_class::exact;
        out.push_back(std::move(s));
    }
    return out;
}
/// A copy of the region's nodes with every value they define renamed (fresh), for a branch.
inline std::vector<graph::node> renamed_copy(context& c, const std::vector<graph::node>& nodes, std::map<std::string, std::string>& names,
                                             std::string_view tag) {
    std::vector<graph::node> out = nodes;
    for (auto& n : out) {
        for (auto& o : n.outputs) {
            if (o.empty()) continue;
            const auto fresh = c.fresh(o + "_" + std::string(tag));
            names[o] = fresh;
            o = fresh;
        }
    }
    for (auto& n : out) {
        for (const auto& [from, to] : names) context::rename_reads(n, from, to);
    }
    return out;
}
inline void if_apply(context& c, const site& s) {
    auto& r = c.random();
    const auto region = if_region(c, s.node, 1 + r.below(3));
    const auto outs = region_outputs(c, region);
    const auto operands = guard_operands(c, descendants(c, s.node));
    std::vector<graph::node> nodes;
    for (const auto i : region) nodes.push_back(c.graph().nodes[i]);
    std::vector<graph::value_info> infos;
    for (const auto& o : outs) infos.push_back({o, c.dtype_of(o), c.shape_of(o)});
    for (auto k = region.size(); k-- > 0;) c.take_node(region[k]);
    const auto cond = true_condition(c, operands);

    graph::graph then_branch, else_branch;
    then_branch.name = c.fresh("then");
    else_branch.name = c.fresh("else");
    then_branch.opset = else_branch.opset = c.graph().opset;
    std::map<std::string, std::string> then_names, else_names;
    then_branch.nodes = renamed_copy(c, nodes, then_names, "t");
    else_branch.nodes = renamed_copy(c, nodes, else_names, "e");
    for (const auto& vi : infos) {
        then_branch.outputs.push_back({then_names.at(vi.name), vi.type, vi.shape});
        // The dead branch: the same computation, perturbed at its end.
        const auto live = else_names.at(vi.name);
        const auto dead = c.fresh(vi.name + "_dead");
        graph::node p;
        p.inputs = {live};
        p.outputs = {dead};
        if (vi.type == dtype::boolean) {
            p.op_type = "Not";
        } else if (info(vi.type).is_signed && c.accepts("Neg", 0, vi.type)) {
            p.op_type = "Neg";
        } else {
            p.op_type = "Identity";
        }
        else_branch.nodes.push_back(std::move(p));
        else_branch.outputs.push_back({dead, vi.type, vi.shape});
    }
    graph::node n;
    n.op_type = "If";
    n.inputs = {cond};
    for (const auto& vi : infos) n.outputs.push_back(vi.name);
    n.subgraphs.emplace("then_branch", graph::subgraph(std::move(then_branch)));
    n.subgraphs.emplace("else_branch", graph::subgraph(std::move(else_branch)));
    c.graph().nodes.push_back(std::move(n));
}

}  // namespace detail

/// The EMI family.
[[nodiscard]] inline std::vector<mutation> emi_mutations() {
    using namespace detail;
    return {
        {"emi_if", family::emi, "nodes N -> If(cond, then: N, else: N perturbed (Neg/Not) at its outputs)",
         "1-3 connected nodes (not If) whose outputs are read elsewhere; cond true on the profiled inputs: ReduceMax/ReduceMin/an "
         "element of an upstream value vs a constant abs(s) + 1 away, or a dimension or rank of one",
         numeric_class::exact, 0.0, &if_sites, &if_apply},
        {"emi_zero_guard", family::emi, "x -> Add(x, Mul(dead(x), g)), g = Relu(k - ReduceMin(u)) or Cast(Not(cond)) == 0",
         "any non-bool value (floating: finite on the profile) with an upstream value u for the guard; dead(x) is bounded "
         "(Tanh, Sigmoid, Exp(-Abs(x))) so 0 * dead(x) == 0",
         numeric_class::exact, 0.0, &zero_guard_sites, &zero_guard_apply},
        {"emi_where_guard", family::emi, "x -> Where(cond, x, dead(x))", "any value with an upstream value for the guard (cond as emi_if's)",
         numeric_class::exact, 0.0, &where_guard_sites, &where_guard_apply},
    };
}

}  // namespace tensoracle::mutate
// ---- end tensoracle/mutate/emi.hpp ----
// ---- begin tensoracle/mutate/resolution.hpp ----
// tensoracle: operator resolution (TorchProbe): an op replaced by its
// decomposition into simpler ops, the way a compiler lowers it. Data movement
// resolutions (an element-wise op unrolled over slices, Max/Min chains) are
// exact; arithmetic ones round differently and are approximate.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>


namespace tensoracle::mutate {

namespace detail {

/// The unary element-wise ops of the registry (one output element per input element).
inline constexpr std::string_view unary_elementwise_ops[] = {
    "Abs",   "Acos",  "Acosh", "Asin",     "Asinh",       "Atan",      "Atanh",     "Ceil",      "Celu",  "Cos",  "Cosh",
    "Elu",   "Erf",   "Exp",   "Floor",    "HardSigmoid", "HardSwish", "Identity",  "IsInf",     "IsNaN", "LeakyRelu",
    "Log",   "Neg",   "Not",   "Reciprocal", "Relu",      "Round",     "Selu",      "Shrink",    "Sigmoid", "Sign",
    "Sin",   "Sinh",  "Softplus", "Softsign", "Sqrt",      "Tan",       "Tanh",      "ThresholdedRelu"};

[[nodiscard]] inline bool is_unary_elementwise(std::string_view op) {
    return std::find(std::begin(unary_elementwise_ops), std::end(unary_elementwise_ops), op) != std::end(unary_elementwise_ops);
}

/// The node's first output is its only one in use (others absent or unread).
[[nodiscard]] inline bool only_first_output_used(const context& c, const graph::node& n) {
    for (std::size_t o = 1; o < n.outputs.size(); ++o) {
        if (!n.outputs[o].empty() && (!c.readers(n.outputs[o]).empty() || c.is_graph_output(n.outputs[o]))) return false;
    }
    return true;
}

/// A per-channel vector (length C) reshaped to broadcast along axis 1 of a rank-`rank` tensor.
inline std::string channel_view(context& c, const std::string& v, std::size_t rank) {
    const auto C = static_cast<std::int64_t>(c.value(v).size());
    std::vector<std::int64_t> shape(rank - 1, 1);
    shape[0] = C;
    return c.add("Reshape", {v, c.add_ints(shape, "shape")});
}

// --- gemm_decompose ----------------------------------------------------------------
inline std::vector<site> gemm_sites(const context& c) {
    return node_sites(c, "Gemm", numeric_class::approximate,
                      [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
inline void gemm_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const dtype d = s.type;
    auto a = n.inputs[0], b = n.inputs[1];
    if (int_attr(n, "transA", 0) != 0) a = c.add("Transpose", {a}, {{"perm", std::vector<std::int64_t>{1, 0}}});
    if (int_attr(n, "transB", 0) != 0) b = c.add("Transpose", {b}, {{"perm", std::vector<std::int64_t>{1, 0}}});
    const double alpha = float_attr(n, "alpha", 1.0), beta = float_attr(n, "beta", 1.0);
    const auto c_in = input_or_empty(n, 2);
    std::string y = c.add("MatMul", {a, b});
    const bool has_c = !c_in.empty();
    if (alpha != 1.0) y = c.add("Mul", {y, c.add_scalar(d, alpha, "alpha")}, {}, has_c ? std::string() : n.outputs[0]);
    if (has_c) {
        const auto cc = beta != 1.0 ? c.add("Mul", {c_in, c.add_scalar(d, beta, "beta")}) : c_in;
        c.add("Add", {y, cc}, {}, n.outputs[0]);
    } else if (alpha == 1.0) {
        c.add("Identity", {y}, {}, n.outputs[0]);
    }
}

// --- softmax_decompose / logsoftmax_decompose ----------------------------------------
inline std::vector<site> softmax_sites(const context& c) {
    return node_sites(c, "Softmax", numeric_class::approximate, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
inline std::vector<site> logsoftmax_sites(const context& c) {
    return node_sites(c, "LogSoftmax", numeric_class::approximate, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
/// x - max(x) along `axis` (kept), the stable shift both softmaxes start from.
inline std::string shifted(context& c, const std::string& x, std::int64_t axis) {
    const auto m = c.add("ReduceMax", {x}, {{"axes", std::vector<std::int64_t>{axis}}, {"keepdims", std::int64_t{1}}});
    return c.add("Sub", {x, m});
}
inline void softmax_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto rank = c.shape_of(n.inputs[0]).size();
    const auto axis = norm_axis(int_attr(n, "axis", -1), rank);
    const auto e = c.add("Exp", {shifted(c, n.inputs[0], axis)});
    const auto sum = c.add("ReduceSum", {e, c.add_ints({axis}, "axes")}, {{"keepdims", std::int64_t{1}}});
    c.add("Div", {e, sum}, {}, n.outputs[0]);
}
inline void logsoftmax_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto rank = c.shape_of(n.inputs[0]).size();
    const auto axis = norm_axis(int_attr(n, "axis", -1), rank);
    const auto z = shifted(c, n.inputs[0], axis);
    const auto sum = c.add("ReduceSum", {c.add("Exp", {z}), c.add_ints({axis}, "axes")}, {{"keepdims", std::int64_t{1}}});
    c.add("Sub", {z, c.add("Log", {sum})}, {}, n.outputs[0]);
}

// --- layernorm_decompose -------------------------------------------------------------
inline std::vector<site> layernorm_sites(const context& c) {
    return node_sites(c, "LayerNormalization", numeric_class::approximate, [&](const graph::node& n) {
        const dtype d = c.dtype_of(n.outputs[0]);
        return is_float(d) && only_first_output_used(c, n);
    });
}
inline void layernorm_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const dtype d = s.type;
    const auto rank = c.shape_of(n.inputs[0]).size();
    const auto axis = norm_axis(int_attr(n, "axis", -1), rank);
    const double eps = float_attr(n, "epsilon", 1e-5);
    // stash_type = 1 (the default) computes the statistics in float32: so does the decomposition.
    const bool widen = (d == dtype::f16 || d == dtype::bf16) && int_attr(n, "stash_type", 1) == 1;
    const dtype w = widen ? dtype::f32 : d;
    auto cast_to = [&](const std::string& v, dtype t) { return c.add("Cast", {v}, {{"to", std::int64_t{onnx_type(t)}}}); };
    std::vector<std::int64_t> axes;
    for (auto a = axis; a < static_cast<std::int64_t>(rank); ++a) axes.push_back(a);
    const auto x = widen ? cast_to(n.inputs[0], w) : n.inputs[0];
    const auto mean = c.add("ReduceMean", {x}, {{"axes", axes}, {"keepdims", std::int64_t{1}}});
    const auto dev = c.add("Sub", {x, mean});
    const auto var = c.add("ReduceMean", {c.add("Mul", {dev, dev})}, {{"axes", axes}, {"keepdims", std::int64_t{1}}});
    const auto sd = c.add("Sqrt", {c.add("Add", {var, c.add_scalar(w, eps, "eps")})});
    auto y = c.add("Div", {dev, sd});
    if (widen) y = cast_to(y, d);
    y = c.add("Mul", {y, n.inputs[1]});
    const auto bias = input_or_empty(n, 2);
    if (!bias.empty()) {
        c.add("Add", {y, bias}, {}, n.outputs[0]);
    } else {
        c.add("Identity", {y}, {}, n.outputs[0]);
    }
}

// --- batchnorm_decompose -------------------------------------------------------------
inline std::vector<site> batchnorm_sites(const context& c) {
    return node_sites(c, "BatchNormalization", numeric_class::approximate, [&](const graph::node& n) {
        return is_float(c.dtype_of(n.outputs[0])) && int_attr(n, "training_mode", 0) == 0 && only_first_output_used(c, n) &&
               c.shape_of(n.inputs[0]).size() >= 2;
    });
}
inline void batchnorm_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto rank = c.shape_of(n.inputs[0]).size();
    const double eps = float_attr(n, "epsilon", 1e-5);
    // As the kernel does: every operand in float32 (float64 for float64 X), one rounding to X's dtype at the end.
    const dtype w = s.type == dtype::f64 ? dtype::f64 : dtype::f32;
    auto as_w = [&](const std::string& v, dtype from) {
        return from == w ? v : c.add("Cast", {v}, {{"to", std::int64_t{onnx_type(w)}}});
    };
    auto param = [&](std::size_t k) { return as_w(channel_view(c, n.inputs[k], rank), c.dtype_of(n.inputs[k])); };
    const auto scale = param(1), bias = param(2), mean = param(3), var = param(4);
    const auto sd = c.add("Sqrt", {c.add("Add", {var, c.add_scalar(w, eps, "eps")})});
    const auto x = as_w(n.inputs[0], s.type);
    const auto norm = c.add("Mul", {c.add("Div", {c.add("Sub", {x, mean}), sd}), scale});
    if (w == s.type) {
        c.add("Add", {norm, bias}, {}, n.outputs[0]);
    } else {
        c.add("Cast", {c.add("Add", {norm, bias})}, {{"to", std::int64_t{onnx_type(s.type)}}}, n.outputs[0]);
    }
}

// --- grouped_conv_split ---------------------------------------------------------------
inline std::vector<site> grouped_conv_sites(const context& c) {
    return node_sites(c, "Conv", numeric_class::approximate, [&](const graph::node& n) {
        const auto g = int_attr(n, "group", 1);
        return g > 1 && g <= 8;
    });
}
inline void grouped_conv_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto groups = static_cast<std::size_t>(int_attr(n, "group", 1));
    auto parts = [&](const std::string& v, std::int64_t axis) {
        return c.add_node("Split", {v}, std::vector<std::string>(groups), {{"axis", axis}});
    };
    const auto xs = parts(n.inputs[0], 1);
    const auto ws = parts(n.inputs[1], 0);
    const auto b = input_or_empty(n, 2);
    std::vector<std::string> bs;
    if (!b.empty()) bs = parts(b, 0);
    auto attrs = n.attributes;
    attrs.insert_or_assign("group", std::int64_t{1});
    std::vector<std::string> ys;
    for (std::size_t k = 0; k < groups; ++k) {
        std::vector<std::string> in{xs[k], ws[k]};
        if (!b.empty()) in.push_back(bs[k]);
        ys.push_back(c.add("Conv", in, attrs));
    }
    c.add("Concat", ys, {{"axis", std::int64_t{1}}}, n.outputs[0]);
}

// --- sigmoid_decompose ----------------------------------------------------------------
inline std::vector<site> sigmoid_sites(const context& c) {
    return node_sites(c, "Sigmoid", numeric_class::approximate, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
inline void sigmoid_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto one = c.add_scalar(s.type, 1.0, "one");
    const auto e = c.add("Exp", {c.add("Neg", {n.inputs[0]})});
    c.add("Div", {one, c.add("Add", {one, e})}, {}, n.outputs[0]);
}

// --- hardsigmoid_decompose / hardswish_decompose ----------------------------------------
inline std::vector<site> hardsigmoid_sites(const context& c) {
    return node_sites(c, "HardSigmoid", numeric_class::approximate, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
inline std::vector<site> hardswish_sites(const context& c) {
    return node_sites(c, "HardSwish", numeric_class::approximate, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
/// Clip(alpha x + beta, 0, 1)
inline std::string hard_sigmoid_of(context& c, const std::string& x, dtype d, double alpha, double beta, const std::string& out = {}) {
    const auto lin = c.add("Add", {c.add("Mul", {x, c.add_scalar(d, alpha, "alpha")}), c.add_scalar(d, beta, "beta")});
    return c.add("Clip", {lin, c.add_scalar(d, 0.0, "zero"), c.add_scalar(d, 1.0, "one")}, {}, out);
}
inline void hardsigmoid_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    (void)hard_sigmoid_of(c, n.inputs[0], s.type, float_attr(n, "alpha", 0.2), float_attr(n, "beta", 0.5), n.outputs[0]);
}
inline void hardswish_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    c.add("Mul", {n.inputs[0], hard_sigmoid_of(c, n.inputs[0], s.type, 1.0 / 6.0, 0.5)}, {}, n.outputs[0]);
}

// --- variadic_chain ------------------------------------------------------------------------
inline std::vector<site> variadic_sites(const context& c, std::initializer_list<std::string_view> ops, numeric_class numeric) {
    std::vector<site> out;
    for (const auto op : ops) {
        auto s = node_sites(c, op, numeric, [&](const graph::node& n) {
            std::size_t present = 0;
            for (const auto& in : n.inputs) present += in.empty() ? 0 : 1;
            return present >= 2;
        });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline std::vector<site> sum_chain_sites(const context& c) { return variadic_sites(c, {"Sum", "Mean"}, numeric_class::approximate); }
inline std::vector<site> minmax_chain_sites(const context& c) { return variadic_sites(c, {"Max", "Min"}, numeric_class::exact); }
inline void variadic_chain_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    std::vector<std::string> in;
    for (const auto& v : n.inputs) {
        if (!v.empty()) in.push_back(v);
    }
    const std::string binary = n.op_type == "Sum" || n.op_type == "Mean" ? "Add" : n.op_type;
    const bool mean = n.op_type == "Mean";
    std::string acc = in[0];
    for (std::size_t k = 1; k < in.size(); ++k) {
        acc = c.add(binary, {acc, in[k]}, {}, k + 1 == in.size() && !mean ? n.outputs[0] : std::string());
    }
    if (mean) c.add("Div", {acc, c.add_scalar(s.type, static_cast<double>(in.size()), "count")}, {}, n.outputs[0]);
}

// --- elementwise_unroll (TorchProbe's resolution: the op applied slice by slice) -----------
inline std::vector<site> unroll_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : unary_elementwise_ops) {
        auto s = node_sites(c, op, numeric_class::exact, [&](const graph::node& n) {
            const auto& sh = c.shape_of(n.inputs[0]);
            return std::any_of(sh.begin(), sh.end(), [](std::size_t x) { return x >= 2; });
        });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void unroll_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto& sh = c.shape_of(n.inputs[0]);
    std::vector<std::int64_t> axes;
    for (std::size_t a = 0; a < sh.size(); ++a) {
        if (sh[a] >= 2) axes.push_back(static_cast<std::int64_t>(a));
    }
    auto& r = c.random();
    const auto axis = axes[r.below(axes.size())];
    const auto len = static_cast<std::size_t>(sh[static_cast<std::size_t>(axis)]);
    const std::size_t parts = std::min<std::size_t>(len, 2 + r.below(3));  // 2..4 slices
    // Equal slices but the last (Split without sizes needs equal parts).
    std::vector<std::int64_t> sizes(parts, static_cast<std::int64_t>(len / parts));
    sizes.back() += static_cast<std::int64_t>(len % parts);
    const auto pieces = c.add_node("Split", {n.inputs[0], c.add_ints(sizes, "split")}, std::vector<std::string>(parts), {{"axis", axis}});
    std::vector<std::string> ys;
    for (const auto& p : pieces) ys.push_back(c.add(n.op_type, {p}, n.attributes));
    c.add("Concat", ys, {{"axis", axis}}, n.outputs[0]);
}

// --- reduce_decompose ------------------------------------------------------------------------
inline std::vector<site> reduce_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : {"ReduceMean", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceLogSum"}) {
        auto s = node_sites(c, op, numeric_class::approximate, [&](const graph::node& n) {
            return is_float(c.dtype_of(n.outputs[0])) && c.value(n.inputs[0]).size() > 0;
        });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void reduce_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto& x = n.inputs[0];
    const auto& shape = c.shape_of(x);
    const auto keep = int_attr(n, "keepdims", 1);
    std::vector<std::int64_t> axes;
    if (const auto a = ints_attr(n, "axes")) {
        for (const auto v : *a) axes.push_back(norm_axis(v, shape.size()));
    } else {
        for (std::size_t k = 0; k < shape.size(); ++k) axes.push_back(static_cast<std::int64_t>(k));
    }
    auto reduce_sum = [&](const std::string& v, std::int64_t keepdims, const std::string& out = {}) {
        return c.add("ReduceSum", {v, c.add_ints(axes, "axes")}, {{"keepdims", keepdims}}, out);
    };
    const auto& y = n.outputs[0];
    if (n.op_type == "ReduceMean") {
        double count = 1;
        for (const auto a : axes) count *= static_cast<double>(shape[static_cast<std::size_t>(a)]);
        c.add("Div", {reduce_sum(x, keep), c.add_scalar(s.type, count, "count")}, {}, y);
    } else if (n.op_type == "ReduceL1") {
        reduce_sum(c.add("Abs", {x}), keep, y);
    } else if (n.op_type == "ReduceL2") {
        c.add("Sqrt", {reduce_sum(c.add("Mul", {x, x}), keep)}, {}, y);
    } else if (n.op_type == "ReduceSumSquare") {
        reduce_sum(c.add("Mul", {x, x}), keep, y);
    } else if (n.op_type == "ReduceLogSum") {
        c.add("Log", {reduce_sum(x, keep)}, {}, y);
    } else {  // ReduceLogSumExp, in its stable form m + log(sum(exp(x - m)))
        // ONNX refuses an empty ints attribute: a scalar's (empty) axes are left out, which reduces all.
        auto max_attrs = [&](std::int64_t keepdims) {
            spec::attribute_map a{{"keepdims", keepdims}};
            if (!axes.empty()) a.emplace("axes", axes);
            return a;
        };
        const auto m = c.add("ReduceMax", {x}, max_attrs(1));
        const auto lse = c.add("Log", {reduce_sum(c.add("Exp", {c.add("Sub", {x, m})}), keep)});
        const auto mk = keep != 0 ? m : c.add("ReduceMax", {x}, max_attrs(0));
        c.add("Add", {mk, lse}, {}, y);
    }
}

// --- activation_decompose ---------------------------------------------------------------------
inline std::vector<site> activation_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : {"Relu", "LeakyRelu", "Softsign", "Elu", "Selu", "Softplus"}) {
        auto s = node_sites(c, op, op == std::string_view("Relu") ? numeric_class::exact : numeric_class::approximate,
                            [&](const graph::node& n) {
                                const dtype d = c.dtype_of(n.outputs[0]);
                                if (!is_float(d)) return false;
                                // log(1 + exp(x)) overflows where Softplus does not: only where exp(x) stays finite.
                                if (n.op_type == "Softplus") return max_abs(c.value(n.inputs[0])) < 0.5 * std::log(max_finite(d));
                                return true;
                            });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void activation_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto& x = n.inputs[0];
    const auto& y = n.outputs[0];
    const dtype d = s.type;
    const auto zero = c.add_scalar(d, 0.0, "zero");
    if (n.op_type == "Relu") {
        c.add("Max", {x, zero}, {}, y);
    } else if (n.op_type == "LeakyRelu") {
        const auto neg = c.add("Mul", {x, c.add_scalar(d, float_attr(n, "alpha", 0.01), "alpha")});
        c.add("Where", {c.add("Less", {x, zero}), neg, x}, {}, y);
    } else if (n.op_type == "Softsign") {
        c.add("Div", {x, c.add("Add", {c.add("Abs", {x}), c.add_scalar(d, 1.0, "one")})}, {}, y);
    } else if (n.op_type == "Softplus") {
        c.add("Log", {c.add("Add", {c.add("Exp", {x}), c.add_scalar(d, 1.0, "one")})}, {}, y);
    } else {  // Elu, Selu: x > 0 ? g x : g alpha (exp(x) - 1)
        const bool selu = n.op_type == "Selu";
        const double alpha = float_attr(n, "alpha", selu ? 1.67326319217681884765625 : 1.0);
        const double gamma = selu ? float_attr(n, "gamma", 1.05070102214813232421875) : 1.0;
        const auto em1 = c.add("Sub", {c.add("Exp", {x}), c.add_scalar(d, 1.0, "one")});
        const auto neg = c.add("Mul", {em1, c.add_scalar(d, alpha * gamma, "alpha")});
        const auto pos = selu ? c.add("Mul", {x, c.add_scalar(d, gamma, "gamma")}) : x;
        c.add("Where", {c.add("Greater", {x, zero}), pos, neg}, {}, y);
    }
}

}  // namespace detail

/// The resolution family.
[[nodiscard]] inline std::vector<mutation> resolution_mutations() {
    using namespace detail;
    return {
        {"gemm_decompose", family::resolution, "Gemm(A, B, C) -> Add(Mul(MatMul(A', B'), alpha), Mul(C, beta))",
         "floating Gemm (A', B': transposed where transA/transB say)", numeric_class::approximate, -4.0, &gemm_sites, &gemm_apply},
        {"softmax_decompose", family::resolution, "Softmax(x) -> Div(Exp(x - ReduceMax(x)), ReduceSum(Exp(x - ReduceMax(x))))",
         "floating Softmax (its axis kept)", numeric_class::approximate, -4.0, &softmax_sites, &softmax_apply},
        {"logsoftmax_decompose", family::resolution, "LogSoftmax(x) -> Sub(x - m, Log(ReduceSum(Exp(x - m)))), m = ReduceMax(x)",
         "floating LogSoftmax", numeric_class::approximate, -4.0, &logsoftmax_sites, &logsoftmax_apply},
        {"layernorm_decompose", family::resolution,
         "LayerNormalization(X, S, B) -> (X - mean) / Sqrt(var + eps) * S + B over axes axis..r-1",
         "floating LayerNormalization whose Mean/InvStdDev outputs are unused (f16/bf16 with stash_type 1: statistics in f32)",
         numeric_class::approximate, -4.0, &layernorm_sites, &layernorm_apply},
        {"batchnorm_decompose", family::resolution,
         "BatchNormalization(X, s, b, m, v) -> (X - m) / Sqrt(v + eps) * s + b, parameters reshaped to [C, 1, ...]",
         "floating BatchNormalization in inference mode, rank >= 2, running statistics outputs unused", numeric_class::approximate,
         -4.0, &batchnorm_sites, &batchnorm_apply},
        {"grouped_conv_split", family::resolution, "Conv(X, W, B, group=g) -> Concat(Conv(X_k, W_k, B_k) for k < g), parts by Split",
         "Conv with 1 < group <= 8", numeric_class::approximate, -4.0, &grouped_conv_sites, &grouped_conv_apply},
        {"sigmoid_decompose", family::resolution, "Sigmoid(x) -> Div(1, Add(1, Exp(Neg(x))))", "floating Sigmoid",
         numeric_class::approximate, -4.0, &sigmoid_sites, &sigmoid_apply},
        {"hardsigmoid_decompose", family::resolution, "HardSigmoid(x) -> Clip(alpha x + beta, 0, 1)", "floating HardSigmoid",
         numeric_class::approximate, -4.0, &hardsigmoid_sites, &hardsigmoid_apply},
        {"hardswish_decompose", family::resolution, "HardSwish(x) -> Mul(x, Clip(x / 6 + 1/2, 0, 1))", "floating HardSwish",
         numeric_class::approximate, -4.0, &hardswish_sites, &hardswish_apply},
        {"sum_chain", family::resolution, "Sum(a, b, c...) -> Add(Add(a, b), c)...; Mean(...) -> Div(that, n)",
         "Sum or Mean with >= 2 inputs (broadcasting kept)", numeric_class::approximate, -4.0, &sum_chain_sites,
         &variadic_chain_apply},
        {"minmax_chain", family::resolution, "Max(a, b, c...) -> Max(Max(a, b), c)...; Min likewise", "Max or Min with >= 2 inputs",
         numeric_class::exact, 0.0, &minmax_chain_sites, &variadic_chain_apply},
        {"elementwise_unroll", family::resolution, "U(x) -> Concat(U(x_1), ..., U(x_k)), x_i = Split(x, axis)",
         "any unary element-wise op whose input has a dimension >= 2 (2..4 slices along it)", numeric_class::exact, 0.0,
         &unroll_sites, &unroll_apply},
        {"reduce_decompose", family::resolution,
         "ReduceMean -> ReduceSum / n; ReduceL1 -> ReduceSum(Abs); ReduceL2 -> Sqrt(ReduceSum(x x)); ReduceSumSquare -> "
         "ReduceSum(x x); ReduceLogSum -> Log(ReduceSum); ReduceLogSumExp -> m + Log(ReduceSum(Exp(x - m)))",
         "those reductions on floating, non-empty inputs (axes and keepdims kept)", numeric_class::approximate, -4.0, &reduce_sites,
         &reduce_apply},
        {"activation_decompose", family::resolution,
         "Relu -> Max(x, 0); LeakyRelu -> Where(x < 0, alpha x, x); Softsign -> x / (1 + Abs(x)); Softplus -> Log(Exp(x) + 1); "
         "Elu, Selu -> Where(x > 0, g x, g alpha (Exp(x) - 1))",
         "those ops on floating inputs (Softplus only where the profiled max abs(x) keeps Exp finite); Relu is exact",
         numeric_class::approximate, -4.0, &activation_sites, &activation_apply},
    };
}

}  // namespace tensoracle::mutate
// ---- end tensoracle/mutate/resolution.hpp ----
// ---- begin tensoracle/mutate/rewrite.hpp ----
// tensoracle: the identities optimizers rewrite with, applied by us, so a
// compiler must agree with itself on both sides: commutativity and
// associativity, distributivity, MatMul linearity, transposes moved through
// element-wise ops, split(concat), BatchNorm folded into (and out of) a Conv,
// Conv and MatMul bias fusion, the stable softmax shift, Clip and Relu
// merging, Pad folded into Conv pads, Flatten/Reshape chains, +0 and *1.
// Rewrites that move data are exact; rewrites that change arithmetic are
// approximate on floating data and exact on integers.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>


namespace tensoracle::mutate {

namespace detail {

/// The node that defines `v`, when `v` is its only use: read by exactly one node
/// and not a graph output (so it may be rewritten away).
[[nodiscard]] inline std::optional<std::size_t> sole_producer(const context& c, const std::string& v, std::string_view op_type) {
    if (v.empty() || c.is_graph_output(v) || c.readers(v).size() != 1) return std::nullopt;
    const auto p = c.producer(v);
    if (!p || c.graph().nodes[*p].op_type != op_type) return std::nullopt;
    return p;
}

// --- commute ---------------------------------------------------------------------------
inline std::vector<site> commute_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : {"Add", "Mul", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal"}) {
        auto s = node_sites(c, op, numeric_class::exact, [](const graph::node& n) {
            return n.inputs.size() == 2 && !n.inputs[0].empty() && !n.inputs[1].empty() && n.inputs[0] != n.inputs[1];
        });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void commute_apply(context& c, const site& s) {
    auto& n = c.graph().nodes[s.node];
    std::swap(n.inputs[0], n.inputs[1]);
}

// --- associate -------------------------------------------------------------------------
inline std::vector<site> associate_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : {"Add", "Mul", "Max", "Min"}) {
        const auto numeric = std::string_view(op) == "Add" || std::string_view(op) == "Mul" ? numeric_class::approximate : numeric_class::exact;
        auto s = node_sites(c, op, numeric, [&](const graph::node& n) {
            if (n.inputs.size() != 2) return false;
            for (int k = 0; k < 2; ++k) {
                const auto p = sole_producer(c, n.inputs[static_cast<std::size_t>(k)], n.op_type);
                if (p && c.graph().nodes[*p].inputs.size() == 2) return true;
            }
            return false;
        });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void associate_apply(context& c, const site& s) {
    // (x . y) . q -> x . (y . q)   or   q . (x . y) -> (q . x) . y
    const auto& n1 = c.graph().nodes[s.node];
    const std::size_t k = sole_producer(c, n1.inputs[0], n1.op_type) && c.graph().nodes[*c.producer(n1.inputs[0])].inputs.size() == 2 ? 0 : 1;
    const auto inner = c.graph().nodes[*c.producer(n1.inputs[k])];
    const auto op = n1.op_type;
    const auto q = n1.inputs[1 - k];
    const auto out = n1.outputs[0];
    const auto x = inner.inputs[0], y = inner.inputs[1];
    // Remove both nodes (the later index first).
    const auto i_inner = *c.producer(n1.inputs[k]);
    const auto i_outer = s.node;
    c.take_node(std::max(i_inner, i_outer));
    c.take_node(std::min(i_inner, i_outer));
    if (k == 0) {
        c.add(op, {x, c.add(op, {y, q})}, {}, out);
    } else {
        c.add(op, {c.add(op, {q, x}), y}, {}, out);
    }
}

// --- distribute ------------------------------------------------------------------------
inline std::vector<site> distribute_sites(const context& c) {
    return node_sites(c, "Mul", numeric_class::approximate, [&](const graph::node& n) {
        if (n.inputs.size() != 2) return false;
        for (std::size_t k = 0; k < 2; ++k) {
            if (sole_producer(c, n.inputs[k], "Add")) return true;
        }
        return false;
    });
}
inline void distribute_apply(context& c, const site& s) {
    // a * (b + c) -> a * b + a * c
    const auto mul = c.graph().nodes[s.node];
    const std::size_t k = sole_producer(c, mul.inputs[0], "Add") ? 0 : 1;
    const auto i_add = *c.producer(mul.inputs[k]);
    const auto add = c.graph().nodes[i_add];
    const auto a = mul.inputs[1 - k];
    c.take_node(std::max(i_add, s.node));
    c.take_node(std::min(i_add, s.node));
    const auto ab = k == 0 ? c.add("Mul", {add.inputs[0], a}) : c.add("Mul", {a, add.inputs[0]});
    const auto ac = k == 0 ? c.add("Mul", {add.inputs[1], a}) : c.add("Mul", {a, add.inputs[1]});
    c.add("Add", {ab, ac}, {}, mul.outputs[0]);
}

// --- matmul_linearity ---------------------------------------------------------------------
inline std::vector<site> matmul_linearity_sites(const context& c) {
    return node_sites(c, "MatMul", numeric_class::approximate, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])); });
}
inline void matmul_linearity_apply(context& c, const site& s) {
    // A B -> A (B - R) + A R, R random at B's scale
    const auto n = c.take_node(s.node);
    const auto& b = c.value(n.inputs[1]);
    const double scale = std::max(max_abs(b), 1e-3);
    const auto r = c.add_constant(c.random().uniform_tensor(s.type, b.shape(), -scale, scale), "r");
    const auto left = c.add("MatMul", {n.inputs[0], c.add("Sub", {n.inputs[1], r})});
    const auto right = c.add("MatMul", {n.inputs[0], r});
    c.add("Add", {left, right}, {}, n.outputs[0]);
}

// --- transpose_sink / transpose_through_elementwise -------------------------------------------
inline std::vector<site> transpose_sink_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : unary_elementwise_ops) {
        auto s = node_sites(c, op, numeric_class::exact, [&](const graph::node& n) { return sole_producer(c, n.inputs[0], "Transpose").has_value(); });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void transpose_sink_apply(context& c, const site& s) {
    // U(Transpose(x, p)) -> Transpose(U(x), p)
    const auto u = c.graph().nodes[s.node];
    const auto i_t = *c.producer(u.inputs[0]);
    const auto t = c.graph().nodes[i_t];
    c.take_node(std::max(i_t, s.node));
    c.take_node(std::min(i_t, s.node));
    const auto y = c.add(u.op_type, {t.inputs[0]}, u.attributes);
    c.add("Transpose", {y}, t.attributes, u.outputs[0]);
}
inline std::vector<site> transpose_through_sites(const context& c) {
    std::vector<site> out;
    for (const auto op : unary_elementwise_ops) {
        auto s = node_sites(c, op, numeric_class::exact, [&](const graph::node& n) { return c.shape_of(n.inputs[0]).size() >= 2; });
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}
inline void transpose_through_apply(context& c, const site& s) {
    // U(x) -> Transpose(U(Transpose(x, p)), p^-1)
    const auto n = c.take_node(s.node);
    const auto p = random_permutation(c.random(), c.shape_of(n.inputs[0]).size());
    const auto t = c.add("Transpose", {n.inputs[0]}, {{"perm", p}});
    const auto y = c.add(n.op_type, {t}, n.attributes);
    c.add("Transpose", {y}, {{"perm", inverse_permutation(p)}}, n.outputs[0]);
}

// --- concat_split ------------------------------------------------------------------------------
/// Nodes upstream of value v (those it depends on), by index.
inline std::set<std::size_t> ancestors(const context& c, const std::string& v) {
    std::set<std::size_t> out;
    std::vector<std::string> todo{v};
    while (!todo.empty()) {
        const auto x = todo.back();
        todo.pop_back();
        const auto p = c.producer(x);
        if (!p || !out.insert(*p).second) continue;
        for (const auto& in : graph::graph::reads(c.graph().nodes[*p])) todo.push_back(in);
    }
    return out;
}
/// A partner for `a` along `axis`: a value of a's dtype and rank, equal dims but on `axis`.
inline std::vector<std::string> concat_partners(const context& c, const std::string& a, std::size_t axis) {
    std::vector<std::string> out;
    const auto& sa = c.shape_of(a);
    for (const auto& [b, t] : c.values()) {
        if (b == a || t.element_dtype() != c.dtype_of(a) || t.shape().size() != sa.size() || t.size() == 0) continue;
        bool ok = true;
        for (std::size_t k = 0; k < sa.size(); ++k) ok = ok && (k == axis || t.shape()[k] == sa[k]);
        if (ok && !feeds_shape_slot(c, b)) out.push_back(b);
    }
    return out;
}
inline std::vector<site> concat_split_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        if (c.shape_of(v).empty() || !plain_value(c, v)) return false;
        for (std::size_t axis = 0; axis < c.shape_of(v).size(); ++axis) {
            if (!concat_partners(c, v, axis).empty()) return true;
        }
        return false;
    });
}
inline void concat_split_apply(context& c, const site& s) {
    // (a, b) -> Split(Concat(a, b, axis), axis): readers of a and b read the parts
    const auto& a = s.value;
    auto& r = c.random();
    std::vector<std::pair<std::size_t, std::string>> options;
    for (std::size_t axis = 0; axis < c.shape_of(a).size(); ++axis) {
        for (const auto& b : concat_partners(c, a, axis)) options.emplace_back(axis, b);
    }
    const auto [axis, b] = options[r.below(options.size())];
    // Readers upstream of the Concat's inputs keep their originals (else a cycle).
    auto up = ancestors(c, a);
    const auto up_b = ancestors(c, b);
    up.insert(up_b.begin(), up_b.end());
    const auto first = r.bernoulli(0.5);
    const std::string x = first ? a : b, y = first ? b : a;
    const auto cat = c.add("Concat", {x, y}, {{"axis", static_cast<std::int64_t>(axis)}});
    const std::vector<std::int64_t> sizes{static_cast<std::int64_t>(c.shape_of(x)[axis]), static_cast<std::int64_t>(c.shape_of(y)[axis])};
    const auto parts = c.add_node("Split", {cat, c.add_ints(sizes, "split")}, {{}, {}}, {{"axis", static_cast<std::int64_t>(axis)}});
    const auto n_before = c.graph().nodes.size() - 2;  // the two new nodes are last
    for (std::size_t i = 0; i < n_before; ++i) {
        if (up.count(i) != 0) continue;
        context::rename_reads(c.graph().nodes[i], x, parts[0]);
        context::rename_reads(c.graph().nodes[i], y, parts[1]);
    }
}

// --- conv_bn_fold / conv_bn_unfold -----------------------------------------------------------------
inline bool plain_conv(const context& c, const graph::node& n) {
    return is_float(c.dtype_of(n.outputs[0])) && c.shape_of(n.inputs[0]).size() >= 3;
}
inline std::vector<site> conv_bn_fold_sites(const context& c) {
    return node_sites(c, "BatchNormalization", numeric_class::approximate, [&](const graph::node& n) {
        if (int_attr(n, "training_mode", 0) != 0 || !only_first_output_used(c, n)) return false;
        const auto p = sole_producer(c, n.inputs[0], "Conv");
        return p && plain_conv(c, c.graph().nodes[*p]);
    });
}
/// s = scale / sqrt(var + eps) per channel, as a rank-`rank` tensor view [C, 1, ...] (rank-1 ones).
inline std::string bn_factor(context& c, const graph::node& bn, dtype d, std::size_t rank) {
    const double eps = float_attr(bn, "epsilon", 1e-5);
    auto as = [&](const std::string& v) { return c.dtype_of(v) == d ? v : c.add("Cast", {v}, {{"to", std::int64_t{onnx_type(d)}}}); };
    const auto sd = c.add("Sqrt", {c.add("Add", {as(bn.inputs[4]), c.add_scalar(d, eps, "eps")})});
    const auto s = c.add("Div", {as(bn.inputs[1]), sd});
    (void)rank;
    return s;
}
inline void conv_bn_fold_apply(context& c, const site& s) {
    // BN(Conv(x, W, B)) -> Conv(x, W s, (B - m) s + b)
    const auto bn = c.graph().nodes[s.node];
    const auto i_conv = *c.producer(bn.inputs[0]);
    const auto conv = c.graph().nodes[i_conv];
    const dtype d = s.type;
    const auto wrank = c.shape_of(conv.inputs[1]).size();
    c.take_node(std::max(i_conv, s.node));
    c.take_node(std::min(i_conv, s.node));
    auto as = [&](const std::string& v) { return c.dtype_of(v) == d ? v : c.add("Cast", {v}, {{"to", std::int64_t{onnx_type(d)}}}); };
    const auto factor = bn_factor(c, bn, d, wrank);
    std::vector<std::int64_t> wshape(wrank, 1);
    wshape[0] = -1;
    const auto w = c.add("Mul", {conv.inputs[1], c.add("Reshape", {factor, c.add_ints(wshape, "shape")})});
    const auto b0 = input_or_empty(conv, 2);
    const auto centered = b0.empty() ? c.add("Neg", {as(bn.inputs[3])}) : c.add("Sub", {b0, as(bn.inputs[3])});
    const auto b = c.add("Add", {c.add("Mul", {centered, factor}), as(bn.inputs[2])});
    c.add("Conv", {conv.inputs[0], w, b}, conv.attributes, bn.outputs[0]);
}
inline std::vector<site> conv_bn_unfold_sites(const context& c) {
    return node_sites(c, "Conv", numeric_class::approximate, [&](const graph::node& n) { return plain_conv(c, n); });
}
inline void conv_bn_unfold_apply(context& c, const site& s) {
    // Conv(x, W, B) -> BN(Conv(x, W / s, (B - b) / s + m), scale, b, m, v): s = scale / sqrt(v + eps)
    const auto conv = c.take_node(s.node);
    const dtype d = s.type;
    const auto& wshape = c.shape_of(conv.inputs[1]);
    const std::size_t M = wshape[0];
    auto& r = c.random();
    const double eps = 1e-5;
    auto vec = [&](double lo, double hi) { return r.uniform_tensor(d, {M}, lo, hi); };
    const auto scale = vec(0.5, 2.0), bias = vec(-1.0, 1.0), mean = vec(-1.0, 1.0), var = vec(0.25, 4.0);
    tensor factor = tensor::zeros(d, {M});
    for (std::size_t k = 0; k < M; ++k) {
        const double f = scale.value_as_double(k) / std::sqrt(var.value_as_double(k) + eps);
        factor.visit([&](auto v) { v[k] = value_cast<typename decltype(v)::value_type>(f); });
    }
    const auto f = c.add_constant(factor, "bn_factor");
    std::vector<std::int64_t> view(wshape.size(), 1);
    view[0] = -1;
    const auto w = c.add("Div", {conv.inputs[1], c.add("Reshape", {f, c.add_ints(view, "shape")})});
    const auto bn_bias = c.add_constant(bias, "bn_bias"), bn_mean = c.add_constant(mean, "bn_mean");
    const auto b0 = input_or_empty(conv, 2);
    const auto shifted = b0.empty() ? c.add("Neg", {bn_bias}) : c.add("Sub", {b0, bn_bias});
    const auto b = c.add("Add", {c.add("Div", {shifted, f}), bn_mean});
    const auto y = c.add("Conv", {conv.inputs[0], w, b}, conv.attributes);
    c.add("BatchNormalization", {y, c.add_constant(scale, "bn_scale"), bn_bias, bn_mean, c.add_constant(var, "bn_var")},
          {{"epsilon", eps}}, conv.outputs[0]);
}

// --- conv_bias_unfuse / conv_bias_fuse ------------------------------------------------------------
inline std::vector<site> conv_bias_unfuse_sites(const context& c) {
    return node_sites(c, "Conv", numeric_class::approximate, [&](const graph::node& n) { return !input_or_empty(n, 2).empty(); });
}
inline void conv_bias_unfuse_apply(context& c, const site& s) {
    // Conv(x, W, B) -> Add(Conv(x, W), B as [M, 1, ...])
    const auto conv = c.take_node(s.node);
    const auto rank = c.shape_of(conv.outputs[0]).size();
    const auto y = c.add("Conv", {conv.inputs[0], conv.inputs[1]}, conv.attributes);
    c.add("Add", {y, channel_view(c, conv.inputs[2], rank)}, {}, conv.outputs[0]);
}
/// Is `b` a per-channel bias of a [N, M, ...] output: M elements laid along axis 1?
inline bool per_channel(const shape_type& b, const shape_type& y) {
    if (b.size() > y.size() || y.size() < 3) return false;
    std::size_t size = 1;
    for (const auto d : b) size *= d;
    if (size != y[1]) return false;
    // Aligned to the right: b's axis for y's axis 1 holds M, every other is 1.
    const std::size_t offset = y.size() - b.size();
    for (std::size_t k = 0; k < b.size(); ++k) {
        const std::size_t yk = k + offset;
        if (b[k] != (yk == 1 ? y[1] : 1)) return false;
    }
    return offset <= 1;
}
/// The operand k of Add node `n` that a bias-free Conv used nowhere else defines, with a
/// per-channel tensor of the same dtype on the other side; none when there is none.
inline std::optional<std::size_t> fusable_conv_operand(const context& c, const graph::node& n) {
    if (n.inputs.size() != 2) return std::nullopt;
    for (std::size_t k = 0; k < 2; ++k) {
        const auto p = sole_producer(c, n.inputs[k], "Conv");
        if (p && input_or_empty(c.graph().nodes[*p], 2).empty() && per_channel(c.shape_of(n.inputs[1 - k]), c.shape_of(n.inputs[k])) &&
            c.dtype_of(n.inputs[1 - k]) == c.dtype_of(n.inputs[k])) {
            return k;
        }
    }
    return std::nullopt;
}
inline std::vector<site> conv_bias_fuse_sites(const context& c) {
    return node_sites(c, "Add", numeric_class::approximate, [&](const graph::node& n) { return fusable_conv_operand(c, n).has_value(); });
}
inline void conv_bias_fuse_apply(context& c, const site& s) {
    // Add(Conv(x, W), b [M, 1, ...]) -> Conv(x, W, Reshape(b, [M]))
    const auto add = c.graph().nodes[s.node];
    const std::size_t k = *fusable_conv_operand(c, add);
    const auto i_conv = *c.producer(add.inputs[k]);
    const auto conv = c.graph().nodes[i_conv];
    const auto b = add.inputs[1 - k];
    c.take_node(std::max(i_conv, s.node));
    c.take_node(std::min(i_conv, s.node));
    const auto flat = c.add("Reshape", {b, c.add_ints({-1}, "shape")});
    c.add("Conv", {conv.inputs[0], conv.inputs[1], flat}, conv.attributes, add.outputs[0]);
}

// --- softmax_shift -------------------------------------------------------------------------------
inline std::vector<site> softmax_shift_sites(const context& c) {
    auto out = softmax_sites(c);
    auto more = logsoftmax_sites(c);
    out.insert(out.end(), more.begin(), more.end());
    return out;
}
inline void softmax_shift_apply(context& c, const site& s) {
    // softmax(x) -> softmax(x - max(x)) (and LogSoftmax): a shift along the axis cancels
    auto& n = c.graph().nodes[s.node];
    const auto x = n.inputs[0];
    const auto axis = norm_axis(int_attr(n, "axis", -1), c.shape_of(x).size());
    const auto shifted_x = shifted(c, x, axis);
    c.graph().nodes[s.node].inputs[0] = shifted_x;
}

// --- clip_split / relu_as_clip ---------------------------------------------------------------------
inline std::vector<site> clip_split_sites(const context& c) {
    return node_sites(c, "Clip", numeric_class::exact, [&](const graph::node& n) { return is_float(c.dtype_of(n.outputs[0])) || c.accepts("Clip", 0, c.dtype_of(n.outputs[0])); });
}
inline void clip_split_apply(context& c, const site& s) {
    // Clip(x, lo, hi) -> Clip(Clip(x, lo', hi'), lo, hi) with lo' <= lo, hi' >= hi
    const auto n = c.graph().nodes[s.node];
    const dtype d = s.type;
    auto& r = c.random();
    auto bound = [&](std::size_t k, double dir) -> std::string {
        const auto v = input_or_empty(n, k);
        if (v.empty() || c.value(v).size() != 1) return {};
        const double b = c.value(v).value_as_double(0);
        if (!std::isfinite(b)) return {};
        double wider = b + dir * (std::abs(b) * r.uniform(0.25, 1.0) + 1.0);
        if (std::abs(wider) > 0.5 * max_finite(d)) return {};
        if (!is_float(d)) wider = std::round(wider);
        return c.add_scalar(d, wider, dir < 0 ? "lo" : "hi");
    };
    const auto lo = bound(1, -1.0), hi = bound(2, +1.0);
    std::vector<std::string> in{n.inputs[0], lo, hi};
    while (!in.empty() && in.back().empty()) in.pop_back();
    const auto inner = c.add("Clip", in);
    c.graph().nodes[s.node].inputs[0] = inner;
}
inline std::vector<site> relu_as_clip_sites(const context& c) {
    return node_sites(c, "Relu", numeric_class::exact, [&](const graph::node& n) { return c.accepts("Clip", 0, c.dtype_of(n.outputs[0])); });
}
inline void relu_as_clip_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    c.add("Clip", {n.inputs[0], c.add_scalar(s.type, 0.0, "zero")}, {}, n.outputs[0]);
}

// --- conv_pad_out / pad_into_conv ----------------------------------------------------------------
inline bool explicit_pads(const graph::node& n) {
    const auto ap = str_attr(n, "auto_pad", "NOTSET");
    return ap == "NOTSET" || ap.empty();
}
inline std::vector<site> conv_pad_out_sites(const context& c) {
    return node_sites(c, "Conv", numeric_class::approximate, [&](const graph::node& n) {
        if (!explicit_pads(n)) return false;
        const auto p = ints_attr(n, "pads");
        if (!p || std::none_of(p->begin(), p->end(), [](std::int64_t x) { return x > 0; })) return false;
        // The padded input is materialized: keep it within padded_size_limit of the input's size.
        const auto& x = c.shape_of(n.inputs[0]);
        const std::size_t spatial = p->size() / 2;
        if (x.size() != spatial + 2) return false;
        double padded = static_cast<double>(x[0] * x[1]);
        for (std::size_t k = 0; k < spatial; ++k) padded *= static_cast<double>(x[2 + k]) + static_cast<double>((*p)[k] + (*p)[spatial + k]);
        return padded <= padded_size_limit(c.value(n.inputs[0]).size());
    });
}
inline void conv_pad_out_apply(context& c, const site& s) {
    // Conv(x, W, pads p) -> Conv(Pad(x, p, 0), W, pads 0)
    auto n = c.take_node(s.node);
    const auto p = *ints_attr(n, "pads");
    const std::size_t spatial = p.size() / 2;
    std::vector<std::int64_t> pads(2 * (spatial + 2), 0);
    for (std::size_t k = 0; k < spatial; ++k) {
        pads[2 + k] = p[k];
        pads[spatial + 4 + k] = p[spatial + k];
    }
    const auto padded = c.add("Pad", {n.inputs[0], c.add_ints(pads, "pads")}, {{"mode", std::string("constant")}});
    n.attributes.insert_or_assign("pads", std::vector<std::int64_t>(p.size(), 0));
    auto in = n.inputs;
    in[0] = padded;
    c.add("Conv", in, n.attributes, n.outputs[0]);
}
inline std::vector<site> pad_into_conv_sites(const context& c) {
    return node_sites(c, "Conv", numeric_class::approximate, [&](const graph::node& n) {
        if (!explicit_pads(n)) return false;
        const auto p = sole_producer(c, n.inputs[0], "Pad");
        if (!p) return false;
        const auto& pad = c.graph().nodes[*p];
        if (str_attr(pad, "mode", "constant") != "constant") return false;
        const auto cv = input_or_empty(pad, 2);
        if (!cv.empty() && c.value(cv).size() == 1 && c.value(cv).value_as_double(0) != 0.0) return false;
        const auto pads_v = input_or_empty(pad, 1);
        if (pads_v.empty() || input_or_empty(pad, 3).size() != 0) return false;  // Pad-18's axes: not at opset 17
        const auto& pads = c.value(pads_v);
        const std::size_t r = pads.size() / 2;
        for (std::size_t k = 0; k < pads.size(); ++k) {
            const double v = pads.value_as_double(k);
            if (v < 0 || ((k % r) < 2 && v != 0)) return false;  // no cropping, nothing on N and C
        }
        return true;
    });
}
inline void pad_into_conv_apply(context& c, const site& s) {
    // Conv(Pad(x, p), W, pads q) -> Conv(x, W, pads q + p)
    auto conv = c.graph().nodes[s.node];
    const auto i_pad = *c.producer(conv.inputs[0]);
    const auto pad = c.graph().nodes[i_pad];
    const auto& pads = c.value(pad.inputs[1]);
    const std::size_t r = pads.size() / 2, spatial = r - 2;
    auto q = ints_attr(conv, "pads").value_or(std::vector<std::int64_t>(2 * spatial, 0));
    for (std::size_t k = 0; k < spatial; ++k) {
        q[k] += static_cast<std::int64_t>(pads.value_as_double(2 + k));
        q[spatial + k] += static_cast<std::int64_t>(pads.value_as_double(r + 2 + k));
    }
    c.take_node(std::max(i_pad, s.node));
    c.take_node(std::min(i_pad, s.node));
    conv.attributes.insert_or_assign("pads", q);
    conv.inputs[0] = pad.inputs[0];
    c.add("Conv", conv.inputs, conv.attributes, conv.outputs[0]);
}

// --- flatten_as_reshape / reshape_collapse ---------------------------------------------------------
inline std::vector<site> flatten_sites(const context& c) {
    return node_sites(c, "Flatten", numeric_class::exact, [](const graph::node&) { return true; });
}
inline void flatten_apply(context& c, const site& s) {
    const auto n = c.take_node(s.node);
    const auto& out = c.shape_of(n.outputs[0]);
    c.add("Reshape", {n.inputs[0], c.add_ints({static_cast<std::int64_t>(out[0]), static_cast<std::int64_t>(out[1])}, "shape")}, {},
          n.outputs[0]);
}
inline std::vector<site> reshape_collapse_sites(const context& c) {
    return node_sites(c, "Reshape", numeric_class::exact, [&](const graph::node& n) {
        return sole_producer(c, n.inputs[0], "Reshape").has_value() || sole_producer(c, n.inputs[0], "Flatten").has_value();
    });
}
inline void reshape_collapse_apply(context& c, const site& s) {
    // Reshape(Reshape(x, s1), s2) -> Reshape(x, s2) (a Flatten inside likewise)
    const auto outer = c.graph().nodes[s.node];
    const auto i_inner = *c.producer(outer.inputs[0]);
    const auto inner = c.graph().nodes[i_inner];
    c.take_node(std::max(i_inner, s.node));
    c.take_node(std::min(i_inner, s.node));
    const auto& target = c.shape_of(outer.outputs[0]);
    std::vector<std::int64_t> shape(target.begin(), target.end());
    c.add("Reshape", {inner.inputs[0], c.add_ints(shape, "shape")}, {}, outer.outputs[0]);
}

// --- matmul_bias_fusion ----------------------------------------------------------------------------
inline bool gemm_bias(const shape_type& cshape, std::size_t m, std::size_t n) {
    if (cshape.size() > 2) return false;
    if (cshape.size() == 2) return (cshape[0] == 1 || cshape[0] == m) && (cshape[1] == 1 || cshape[1] == n);
    if (cshape.size() == 1) return cshape[0] == 1 || cshape[0] == n;
    return true;
}
/// The operand k of Add node `n` that a 2-D MatMul used nowhere else defines, with a C on
/// the other side that Gemm can broadcast; none when there is none.
inline std::optional<std::size_t> fusable_matmul_operand(const context& c, const graph::node& n) {
    if (n.inputs.size() != 2) return std::nullopt;
    for (std::size_t k = 0; k < 2; ++k) {
        const auto p = sole_producer(c, n.inputs[k], "MatMul");
        if (!p) continue;
        const auto& mm = c.graph().nodes[*p];
        const auto& a = c.shape_of(mm.inputs[0]);
        const auto& b = c.shape_of(mm.inputs[1]);
        if (a.size() == 2 && b.size() == 2 && gemm_bias(c.shape_of(n.inputs[1 - k]), a[0], b[1])) return k;
    }
    return std::nullopt;
}
inline std::vector<site> matmul_bias_sites(const context& c) {
    return node_sites(c, "Add", numeric_class::approximate, [&](const graph::node& n) {
        const dtype d = c.dtype_of(n.outputs[0]);
        return is_float(d) && c.accepts("Gemm", 0, d) && fusable_matmul_operand(c, n).has_value();
    });
}
inline void matmul_bias_apply(context& c, const site& s) {
    const auto add = c.graph().nodes[s.node];
    const std::size_t k = *fusable_matmul_operand(c, add);
    const auto i_mm = *c.producer(add.inputs[k]);
    const auto mm = c.graph().nodes[i_mm];
    const auto bias = add.inputs[1 - k];
    c.take_node(std::max(i_mm, s.node));
    c.take_node(std::min(i_mm, s.node));
    c.add("Gemm", {mm.inputs[0], mm.inputs[1], bias}, {}, add.outputs[0]);
}

// --- neutral_element -------------------------------------------------------------------------------
inline std::vector<site> neutral_sites(const context& c) {
    return value_sites(c, numeric_class::exact, [&](const std::string& v) {
        const dtype d = c.dtype_of(v);
        return plain_value(c, v) && d != dtype::boolean && c.accepts("Add", 0, d) && c.accepts("Mul", 0, d);
    });
}
inline void neutral_apply(context& c, const site& s) {
    // x -> x * 1 or x + 0, what constant folding removes
    const dtype d = s.type;
    const bool mul = c.random().bernoulli(0.5);
    const auto [src, dst] = c.intercept(s.value);
    c.add(mul ? "Mul" : "Add", {src, c.add_scalar(d, mul ? 1.0 : 0.0, mul ? "one" : "zero")}, {}, dst);
}

}  // namespace detail

/// The compiler-rewrite family.
[[nodiscard]] inline std::vector<mutation> rewrite_mutations() {
    using namespace detail;
    return {
        {"commute", family::rewrite, "a . b -> b . a", "Add, Mul, Max, Min, Sum, Mean, And, Or, Xor or Equal with two distinct inputs",
         numeric_class::exact, 0.0, &commute_sites, &commute_apply},
        {"associate", family::rewrite, "(x . y) . q -> x . (y . q);  q . (x . y) -> (q . x) . y",
         "Add, Mul, Max or Min reading a two-input node of the same op used nowhere else (Max, Min and integers: exact)",
         numeric_class::approximate, -4.0, &associate_sites, &associate_apply},
        {"distribute", family::rewrite, "a * (b + c) -> a * b + a * c", "Mul reading an Add used nowhere else (integers: exact)",
         numeric_class::approximate, -4.0, &distribute_sites, &distribute_apply},
        {"matmul_linearity", family::rewrite, "A B -> A (B - R) + A R", "floating MatMul (R: random at B's scale, a new weight)",
         numeric_class::approximate, -4.0, &matmul_linearity_sites, &matmul_linearity_apply},
        {"transpose_sink", family::rewrite, "U(Transpose(x, p)) -> Transpose(U(x), p)",
         "a unary element-wise op reading a Transpose used nowhere else", numeric_class::exact, 0.0, &transpose_sink_sites,
         &transpose_sink_apply},
        {"transpose_through_elementwise", family::rewrite, "U(x) -> Transpose(U(Transpose(x, p)), p^-1)",
         "a unary element-wise op on rank >= 2", numeric_class::exact, 0.0, &transpose_through_sites, &transpose_through_apply},
        {"concat_split", family::rewrite, "(a, b) -> Split(Concat(a, b, axis), axis)",
         "two values of one dtype and rank, equal dims but on the axis; readers upstream of either keep the originals",
         numeric_class::exact, 0.0, &concat_split_sites, &concat_split_apply},
        {"conv_bn_fold", family::rewrite, "BN(Conv(x, W, B)) -> Conv(x, W s, (B - m) s + b), s = scale / sqrt(v + eps)",
         "inference BatchNormalization reading a floating Conv (rank >= 3) used nowhere else", numeric_class::approximate, -4.0,
         &conv_bn_fold_sites, &conv_bn_fold_apply},
        {"conv_bn_unfold", family::rewrite, "Conv(x, W, B) -> BN(Conv(x, W / s, (B - b) / s + m), scale, b, m, v)",
         "floating Conv of rank >= 3 (BN parameters random: scale in [0.5, 2], var in [0.25, 4])", numeric_class::approximate, -4.0,
         &conv_bn_unfold_sites, &conv_bn_unfold_apply},
        {"conv_bias_unfuse", family::rewrite, "Conv(x, W, B) -> Add(Conv(x, W), B as [M, 1, ...])", "Conv with a bias",
         numeric_class::approximate, -4.0, &conv_bias_unfuse_sites, &conv_bias_unfuse_apply},
        {"conv_bias_fuse", family::rewrite, "Add(Conv(x, W), b) -> Conv(x, W, Reshape(b, [M]))",
         "Add of a bias-free Conv used nowhere else and a per-channel tensor ([M, 1, ...] or [1, M, 1, ...])",
         numeric_class::approximate, -4.0, &conv_bias_fuse_sites, &conv_bias_fuse_apply},
        {"softmax_shift", family::rewrite, "Softmax(x) -> Softmax(x - ReduceMax(x, axis)); LogSoftmax likewise",
         "floating Softmax or LogSoftmax", numeric_class::approximate, -4.0, &softmax_shift_sites, &softmax_shift_apply},
        {"clip_split", family::rewrite, "Clip(x, lo, hi) -> Clip(Clip(x, lo', hi'), lo, hi), lo' < lo, hi' > hi",
         "Clip (absent bounds stay absent)", numeric_class::exact, 0.0, &clip_split_sites, &clip_split_apply},
        {"relu_as_clip", family::rewrite, "Relu(x) -> Clip(x, 0)", "Relu of a dtype Clip takes", numeric_class::exact, 0.0,
         &relu_as_clip_sites, &relu_as_clip_apply},
        {"conv_pad_out", family::rewrite, "Conv(x, W, pads p) -> Conv(Pad(x, p, 0), W, pads 0)",
         "Conv with explicit pads (auto_pad NOTSET), one of them > 0", numeric_class::approximate, -4.0, &conv_pad_out_sites,
         &conv_pad_out_apply},
        {"pad_into_conv", family::rewrite, "Conv(Pad(x, p, 0), W, pads q) -> Conv(x, W, pads q + p)",
         "Conv (auto_pad NOTSET) reading a zero constant Pad used nowhere else that pads spatial axes only, by >= 0",
         numeric_class::approximate, -4.0, &pad_into_conv_sites, &pad_into_conv_apply},
        {"flatten_as_reshape", family::rewrite, "Flatten(x, axis) -> Reshape(x, [a, b])", "any Flatten", numeric_class::exact, 0.0,
         &flatten_sites, &flatten_apply},
        {"reshape_collapse", family::rewrite, "Reshape(Reshape(x, s1), s2) -> Reshape(x, s2)",
         "Reshape reading a Reshape or Flatten used nowhere else", numeric_class::exact, 0.0, &reshape_collapse_sites,
         &reshape_collapse_apply},
        {"matmul_bias_fusion", family::rewrite, "Add(MatMul(A, B), C) -> Gemm(A, B, C)",
         "Add of a 2-D floating MatMul used nowhere else and a C Gemm can broadcast", numeric_class::approximate, -4.0,
         &matmul_bias_sites, &matmul_bias_apply},
        {"neutral_element", family::rewrite, "x -> Mul(x, 1) or Add(x, 0)", "any non-bool value of a dtype Add and Mul take",
         numeric_class::exact, 0.0, &neutral_sites, &neutral_apply},
    };
}

}  // namespace tensoracle::mutate
// ---- end tensoracle/mutate/rewrite.hpp ----

namespace tensoracle::mutate {

/// Mutations write opset-13 forms (axes, split sizes, pads and Clip bounds as
/// inputs) and stay within opset 17 (ReduceMax's axes as an attribute): graphs of
/// other opsets are not mutated.
inline constexpr int min_opset = 13, max_opset = 17;

[[nodiscard]] inline bool mutable_opset(const graph::graph& g) noexcept { return g.opset >= min_opset && g.opset <= max_opset; }

/// Every mutation, in family order (resolution, recover, rewrite, emi), names unique.
[[nodiscard]] inline const std::vector<mutation>& registry() {
    static const std::vector<mutation> all = [] {
        std::vector<mutation> v;
        for (auto part : {resolution_mutations(), recover_mutations(), rewrite_mutations(), emi_mutations()}) {
            v.insert(v.end(), part.begin(), part.end());
        }
        return v;
    }();
    return all;
}

/// The mutation named `name`; throws naming the known ones otherwise.
[[nodiscard]] inline const mutation& find_mutation(std::string_view name) {
    for (const auto& m : registry()) {
        if (m.name == name) return m;
    }
    std::string known;
    for (const auto& m : registry()) known += (known.empty() ? "" : ", ") + std::string(m.name);
    throw error("tensoracle::mutate::find_mutation", "unknown mutation '" + std::string(name) + "' (known: " + known + ")");
}

/// One step of a chain, as applied.
struct applied_step {
    std::string mutation;
    mutate::family family = family::rewrite;
    numeric_class numeric = numeric_class::exact;
    double level = 0.0;
    std::string where;  ///< the site: "Conv f32", "value f16"
};

/// A mutant: the rewritten graph, its chain, its class and level, and its
/// outputs on the original's inputs (from our interpreter).
struct mutant {
    graph::graph model;
    std::map<std::string, tensor, std::less<>> inputs;
    std::map<std::string, tensor, std::less<>> outputs;  ///< the mutant's own, graph-output names
    std::vector<applied_step> chain;
    numeric_class numeric = numeric_class::exact;
    double level = 0.0;  ///< the loosest level of the chain's approximate steps (0 for exact)
    /// "softmax_decompose+transpose_roundtrip": the chain's names, for reports.
    [[nodiscard]] std::string chain_text() const {
        std::string s;
        for (const auto& a : chain) s += (s.empty() ? "" : "+") + a.mutation;
        return s;
    }
};

/// What a chain is drawn from.
struct mutate_options {
    std::size_t steps = 1;              ///< mutations applied in sequence
    std::vector<family> families = {};  ///< allowed families (empty: all)
    std::vector<std::string> only = {};  ///< allowed mutations by name (empty: all of the families)
    std::size_t attempts = 12;          ///< (mutation, site) draws tried per step before giving up
    double probe_ulps = 16.0;           ///< conditioning probe of approximate steps (see the header)
    /// Called with each intermediate graph once it is kept (validated and profiled):
    /// a test checks every step of a chain with it, not only the last.
    std::function<void(const context&)> after_step = {};
};

/// What drawing chains rejected, and why (for statistics and tests).
struct mutate_stats {
    std::map<std::string, std::size_t> applied, ill_conditioned, invalid, no_site;
    /// Messages of invalid rewrites (a bug in a mutation, or an op the interpreter refuses).
    std::vector<std::string> invalid_messages;
    void merge(const mutate_stats& o) {
        auto add = [](auto& a, const auto& b) {
            for (const auto& [k, v] : b) a[k] += v;
        };
        add(applied, o.applied);
        add(ill_conditioned, o.ill_conditioned);
        add(invalid, o.invalid);
        add(no_site, o.no_site);
        invalid_messages.insert(invalid_messages.end(), o.invalid_messages.begin(), o.invalid_messages.end());
    }
};

namespace detail {

/// `g` run on `feeds` with the values in `overrides` replacing what the graph
/// computes for them (a node's output becomes a fed input).
[[nodiscard]] inline std::map<std::string, tensor, std::less<>> run_with(graph::graph g, std::map<std::string, tensor, std::less<>> feeds,
                                                                         const std::map<std::string, tensor, std::less<>>& overrides) {
    std::size_t k = 0;
    for (const auto& [name, t] : overrides) {
        if (g.initializers.count(name) != 0) {
            g.initializers.insert_or_assign(name, t);
            continue;
        }
        if (feeds.count(name) != 0) {
            feeds.insert_or_assign(name, t);
            continue;
        }
        for (auto& n : g.nodes) {
            for (auto& o : n.outputs) {
                if (o == name) o = "__probe_dead_" + std::to_string(k++);
            }
        }
        g.inputs.push_back({name, t.element_dtype(), t.shape()});
        feeds.insert_or_assign(name, t);
    }
    return graph::run(g, feeds).outputs;
}

/// `t` with every element x moved by ulps * eps * (|x| + scale) in `direction` (+1 up,
/// -1 down, 0 each at random): eps of t's dtype, `scale` the rewrite's operands' mean
/// magnitude (a rewrite that cancels errs at the scale of what it reads).
[[nodiscard]] inline tensor perturbed(const tensor& t, double scale, double ulps, int direction, rng& r) {
    const double eps = info(t.element_dtype()).epsilon;
    tensor out = t;
    out.visit([&](auto v) {
        using T = typename decltype(v)::value_type;
        for (auto& x : v) {
            const double d = static_cast<double>(value_cast<double>(x));
            if (!std::isfinite(d)) continue;
            const double dir = direction != 0 ? direction : (r.bernoulli(0.5) ? 1.0 : -1.0);
            x = value_cast<T>(d + dir * ulps * eps * (std::abs(d) + scale));
        }
    });
    return out;
}

}  // namespace detail

/// How a mutant's outputs compare with its original's on our interpreter.
struct agreement {
    bool agrees = true;
    std::string detail;  ///< the first disagreement, readable
};

/// Compares outputs at `numeric`'s level: exact = equal element by element (+0 == -0,
/// NaN where the original has NaN); approximate = GraphNet level `level` per dtype.
[[nodiscard]] inline agreement compare_outputs(const std::map<std::string, tensor, std::less<>>& original,
                                               const std::map<std::string, tensor, std::less<>>& mutated, numeric_class numeric, double level) {
    for (const auto& [name, o] : original) {
        const auto it = mutated.find(name);
        if (it == mutated.end()) return {false, "output '" + name + "' is missing"};
        const tensor& m = it->second;
        if (m.element_dtype() != o.element_dtype() || m.shape() != o.shape()) {
            return {false, "output '" + name + "' is " + std::string(tensoracle::name(m.element_dtype())) + tensoracle::to_string(m.shape()) + ", the original " +
                               std::string(tensoracle::name(o.element_dtype())) + tensoracle::to_string(o.shape())};
        }
        if (numeric == numeric_class::exact || !info(o.element_dtype()).is_floating) {
            for (std::size_t i = 0; i < o.size(); ++i) {
                const double a = o.value_as_double(i), b = m.value_as_double(i);
                if (a == b || (std::isnan(a) && std::isnan(b))) continue;
                std::ostringstream os;
                os << "output '" << name << "' element " << i << ": " << b << ", the original " << a << " (exact class)";
                return {false, os.str()};
            }
            continue;
        }
        const auto report = compare(m, o);
        if (!report.passes(tensoracle::level{level})) {
            return {false, "output '" + name + "': " + report.describe(tolerance_level(o.element_dtype(), level))};
        }
    }
    return {};
}

/// The oracle on our interpreter: the mutant's outputs against the original's.
[[nodiscard]] inline agreement check(const mutant& m, const std::map<std::string, tensor, std::less<>>& original_outputs) {
    return compare_outputs(original_outputs, m.outputs, m.numeric, m.level);
}

namespace detail {

/// Is the graph well conditioned at site `s` (see the header)? `c` is the graph before the rewrite.
[[nodiscard]] inline bool well_conditioned(const context& c, const site& s, double level, double ulps, std::uint64_t seed) {
    if (s.numeric == numeric_class::exact || s.rewritten.empty()) return true;
    double scale = 0.0;
    for (const auto& v : s.reads) {
        if (c.values().count(v) != 0) scale = std::max(scale, mean_abs(c.value(v)));
    }
    std::map<std::string, tensor, std::less<>> base;
    for (const auto& o : c.graph().outputs) base.emplace(o.name, c.value(o.name));
    rng r(seed);
    for (const int direction : {+1, -1, 0}) {
        std::map<std::string, tensor, std::less<>> overrides;
        for (const auto& v : s.rewritten) {
            if (c.values().count(v) == 0 || !info(c.dtype_of(v)).is_floating) continue;
            overrides.emplace(v, perturbed(c.value(v), scale, ulps, direction, r));
        }
        if (overrides.empty()) return true;
        try {
            const auto out = run_with(c.graph(), c.feeds(), overrides);
            if (!compare_outputs(base, out, numeric_class::approximate, level).agrees) return false;
        } catch (const std::exception&) {
            return false;  // perturbed values leave an op's domain: as ill-conditioned as it gets
        }
    }
    return true;
}

[[nodiscard]] inline bool allowed(const mutation& m, const mutate_options& o) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), std::string(m.name)) == o.only.end()) return false;
    if (!o.families.empty() && std::find(o.families.begin(), o.families.end(), m.family) == o.families.end()) return false;
    return true;
}

}  // namespace detail

/// Draws a chain of `options.steps` mutations of `g` from `seed` and applies it:
/// every intermediate graph is validated and profiled on `inputs`. Returns
/// nullopt when some step found nowhere to apply (no mutation allowed has a
/// site, or every draw was ill-conditioned) or the graph's opset is outside
/// [min_opset, max_opset]. A pure function of its arguments.
[[nodiscard]] inline std::optional<mutant> mutate_graph(const graph::graph& g, const std::map<std::string, tensor, std::less<>>& inputs,
                                                        std::uint64_t seed, const mutate_options& options = {},
                                                        mutate_stats* stats = nullptr) {
    mutate_stats local;
    mutate_stats& st = stats ? *stats : local;
    std::vector<const mutation*> pool;
    for (const auto& m : registry()) {
        if (detail::allowed(m, options)) pool.push_back(&m);
    }
    if (pool.empty()) throw error("tensoracle::mutate::mutate_graph", "no mutation is allowed by the options (families / only)");
    if (!mutable_opset(g)) return std::nullopt;
    context c(g, inputs, seed);
    mutant out;
    out.inputs = inputs;
    rng draw(seed ^ 0x9e3779b97f4a7c15ULL);
    for (std::size_t step = 0; step < options.steps; ++step) {
        // Mutations with somewhere to apply, each drawn with equal chance (so that one
        // with many sites does not crowd out the others), then one of its sites.
        std::vector<std::pair<const mutation*, std::vector<site>>> candidates;
        for (const auto* m : pool) {
            auto s = m->sites(c);
            if (s.empty()) {
                ++st.no_site[std::string(m->name)];
                continue;
            }
            candidates.emplace_back(m, std::move(s));
        }
        bool done = false;
        for (std::size_t attempt = 0; attempt < options.attempts && !candidates.empty() && !done; ++attempt) {
            const std::size_t pick = draw.below(candidates.size());
            auto& [m, sites] = candidates[pick];
            const std::size_t which = draw.below(sites.size());
            const site s = sites[which];
            sites.erase(sites.begin() + static_cast<std::ptrdiff_t>(which));
            const mutation* chosen = m;
            if (sites.empty()) candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(pick));
            const double level = s.numeric == numeric_class::approximate ? chosen->level : 0.0;
            if (!detail::well_conditioned(c, s, level, options.probe_ulps, draw())) {
                ++st.ill_conditioned[std::string(chosen->name)];
                continue;
            }
            context next = c;
            try {
                chosen->apply(next, s);
                next.refresh();
            } catch (const std::exception& e) {
                ++st.invalid[std::string(chosen->name)];
                st.invalid_messages.push_back(std::string(chosen->name) + " at " + s.where() + ": " + e.what());
                continue;
            }
            c = std::move(next);
            if (options.after_step) options.after_step(c);
            ++st.applied[std::string(chosen->name)];
            out.chain.push_back({std::string(chosen->name), chosen->family, s.numeric, level, s.where()});
            if (s.numeric == numeric_class::approximate) {
                out.numeric = numeric_class::approximate;
                out.level = out.chain.size() == 1 || out.level == 0.0 ? level : std::max(out.level, level);
            }
            done = true;
        }
        if (!done) return std::nullopt;
    }
    out.model = c.graph();
    for (const auto& o : out.model.outputs) out.outputs.emplace(o.name, c.value(o.name));
    return out;
}

/// The sites every allowed mutation has in `g` (how applicable each is), by name.
[[nodiscard]] inline std::map<std::string, std::size_t> applicability(const graph::graph& g, const std::map<std::string, tensor, std::less<>>& inputs,
                                                                      const mutate_options& options = {}) {
    std::map<std::string, std::size_t> out;
    if (!mutable_opset(g)) {
        for (const auto& m : registry()) {
            if (detail::allowed(m, options)) out[std::string(m.name)] = 0;
        }
        return out;
    }
    const context c(g, inputs, 0);
    for (const auto& m : registry()) {
        if (detail::allowed(m, options)) out[std::string(m.name)] = m.sites(c).size();
    }
    return out;
}

/// A stable id of a mutant's chain and graph (for duplicate detection across draws).
[[nodiscard]] inline std::string mutant_key(const mutant& m) {
    std::string k = m.chain_text() + "|";
    for (const auto& n : m.model.nodes) {
        k += n.op_type + "(";
        for (const auto& i : n.inputs) k += i + ",";
        k += ")";
    }
    return fnv1a_hex(k);
}

/// docs/MUTATIONS.md: every mutation with its family, class, rewrite and precondition.
[[nodiscard]] inline std::string mutations_markdown() {
    std::ostringstream os;
    os << "# Mutations\n\n"
       << "Generated by `tensoracle mutate --list-markdown` from `include/tensoracle/mutate/` (a CTest case fails when this file is\n"
       << "stale). " << registry().size() << " mutations in four families. *exact*: the mutant equals the original element by\n"
       << "element on our interpreter; *approximate*: it agrees at the GraphNet level given (per dtype), and only where the graph\n"
       << "is well conditioned on the profiled inputs; an approximate mutation is exact on integer data.\n";
    for (const auto f : all_families) {
        os << "\n## " << to_string(f) << "\n\n| mutation | class | level | rewrites | applies to |\n| --- | --- | --- | --- | --- |\n";
        for (const auto& m : registry()) {
            if (m.family != f) continue;
            os << "| `" << m.name << "` | " << to_string(m.numeric) << " | "
               << (m.numeric == numeric_class::approximate ? std::to_string(static_cast<int>(m.level)) : std::string("-")) << " | `"
               << m.rewrites << "` | " << m.precondition << " |\n";
        }
    }
    return os.str();
}

}  // namespace tensoracle::mutate
// ---- end tensoracle/mutate/mutate.hpp ----
// ---- end tensoracle/tensoracle.hpp ----
