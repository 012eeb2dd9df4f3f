// tensoracle: a small integer constraint language for operator specs.
//
// An op's validity constraints and output shapes are written once as
// expressions over symbols (input dims, integer attributes, values of small
// constant inputs). The same expression is evaluated on concrete values by
// the interpreter and the instance sampler, printed in error messages, and
// can be handed to an SMT solver by the graph generator (its / and % are
// Euclidean, as in SMT-LIB integers).
#pragma once

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

#include "tensoracle/core/error.hpp"

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
    [[nodiscard]] std::int64_t eval(const environment& env) const {
        return eval_node(*node_, [&env](const node& s) {
            const auto it = env.find(s.name);
            if (it == env.end()) throw error("tensoracle::spec::expr", "symbol '" + s.name + "' has no value");
            return it->second;
        });
    }
    /// The value where each symbol's value is `value_of(symbol node)` (a lookup
    /// by index through the node's name and name_hash, without building an
    /// environment); throws as eval does.
    template <class ValueOf>
    [[nodiscard]] std::int64_t eval_with(const ValueOf& value_of) const {
        return eval_node(*node_, value_of);
    }

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
            return expr(eval_node(folded, [](const node&) -> std::int64_t { return 0; }));  // no symbols: both sides constant
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

    template <class ValueOf>
    static std::int64_t eval_node(const node& n, const ValueOf& env) {
        using L = std::numeric_limits<std::int64_t>;
        switch (n.kind) {
            case expr_kind::constant: return n.value;
            case expr_kind::symbol: return env(n);
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
