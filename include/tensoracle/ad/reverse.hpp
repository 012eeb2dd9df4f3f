// tensoracle: reverse-mode scalars recorded on a tape.
//
// rvar<V> is a value plus the index of the tape node that produced it. Every
// arithmetic operation on active rvars appends one node holding the local
// partial derivatives; a backward sweep over the nodes accumulates adjoints.
// Kernels templated on their scalar type run unchanged with rvar, so every op
// gets its VJP from the code that computes its value. With V = dual<double>
// the partials and adjoints are themselves duals: the sweep then returns
// gradient + ε·(Hessian·u), which is forward-over-reverse second order.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <ostream>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tensoracle/ad/dual.hpp"
#include "tensoracle/core/error.hpp"
#include "tensoracle/core/scalar.hpp"

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
        // VJPs, and growing the tape again each time would be a third of its time),
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
    const V q = math::round((a.v - r) / b.v);  // the exact quotient (see dual's fmod)
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
