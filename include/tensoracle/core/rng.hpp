// tensoracle: a seeded random number generator whose every value is the same
// on every platform and compiler.
//
// std::mt19937 is portable but std:: distributions are not (each standard
// library transforms differently), and libm's log/sin/cos may differ by an ulp
// between C libraries. So: xoshiro256** (Blackman & Vigna) seeded through
// splitmix64, and our own transforms built only from IEEE-exact operations
// (+ - * / sqrt and explicit std::fma, never a bare a*b+c that a compiler
// might fuse differently on another target).
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "tensoracle/core/error.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/core/value_cast.hpp"

namespace tensoracle {

static_assert(std::numeric_limits<double>::is_iec559,
              "tensoracle::rng needs IEEE 754 binary64 doubles for platform-independent values");

namespace detail {

/// Natural log for normal positive doubles from exact operations only, so its
/// result is bit-identical everywhere (accurate to about 1 ulp; used for
/// sampling, not as a math library).
[[nodiscard]] inline double portable_log(double x) noexcept {
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); exact bit manipulation.
    auto bits = std::bit_cast<std::uint64_t>(x);
    int e = static_cast<int>((bits >> 52) & 0x7ffu) - 1023;
    bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    double m = std::bit_cast<double>(bits);
    if (m > 0x1.6a09e667f3bcdp+0) {  // sqrt(2)
        m *= 0.5;
        ++e;
    }
    // log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.1716: an odd series in s.
    const double s = (m - 1.0) / (m + 1.0);
    const double z = s * s;
    double p = 1.0 / 25.0;
    for (int k = 11; k >= 1; --k) p = std::fma(p, z, 1.0 / (2.0 * k + 1.0));
    const double two_s = 2.0 * s;
    const double log_m = std::fma(two_s * z, p, two_s);
    constexpr double ln2_hi = 0x1.62e42fefa3800p-1;  // trailing zeros: e*ln2_hi is exact
    constexpr double ln2_lo = 0x1.ef35793c76730p-45;
    const double de = static_cast<double>(e);
    return std::fma(de, ln2_hi, std::fma(de, ln2_lo, log_m));
}

[[nodiscard]] constexpr std::uint64_t splitmix64_next(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// The 128-bit product of two 64-bit words as (high, low), portably.
[[nodiscard]] constexpr std::pair<std::uint64_t, std::uint64_t> multiply_wide_portable(std::uint64_t a,
                                                                                      std::uint64_t b) noexcept {
    const std::uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32;
    const std::uint64_t b_lo = b & 0xffffffffu, b_hi = b >> 32;
    const std::uint64_t lo_lo = a_lo * b_lo;
    const std::uint64_t hi_lo = a_hi * b_lo;
    const std::uint64_t lo_hi = a_lo * b_hi;
    const std::uint64_t hi_hi = a_hi * b_hi;
    const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
    return {hi_hi + (hi_lo >> 32) + (cross >> 32), (cross << 32) | (lo_lo & 0xffffffffu)};
}

/// The same product in one instruction where the compiler has a 128-bit type
/// (integer draws run it per element).
[[nodiscard]] constexpr std::pair<std::uint64_t, std::uint64_t> multiply_wide(std::uint64_t a,
                                                                             std::uint64_t b) noexcept {
#ifdef __SIZEOF_INT128__
    __extension__ const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
    return {static_cast<std::uint64_t>(p >> 64), static_cast<std::uint64_t>(p)};
#else
    return multiply_wide_portable(a, b);
#endif
}

}  // namespace detail

/// Reproducible random numbers for tests: same seed, same sequence, on every
/// platform. It models UniformRandomBitGenerator, but std:: distributions fed
/// from it are not portable; use the member functions instead.
class rng {
public:
    using result_type = std::uint64_t;

    explicit rng(std::uint64_t seed) noexcept {
        std::uint64_t sm = seed;
        for (auto& word : state_) word = detail::splitmix64_next(sm);
    }

    /// A generator resumed from a saved state() (not all zero).
    [[nodiscard]] static rng from_state(const std::array<std::uint64_t, 4>& state) {
        if (state == std::array<std::uint64_t, 4>{}) {
            throw error("tensoracle::rng::from_state", "the all-zero state is not a valid xoshiro256** state");
        }
        rng r(0);
        r.state_ = state;
        return r;
    }
    [[nodiscard]] const std::array<std::uint64_t, 4>& state() const noexcept { return state_; }

    static constexpr result_type min() noexcept { return 0; }
    static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }

    /// Next raw 64 bits (xoshiro256**).
    result_type operator()() noexcept {
        const std::uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
        const std::uint64_t t = state_[1] << 17;
        state_[2] ^= state_[0];
        state_[3] ^= state_[1];
        state_[1] ^= state_[2];
        state_[0] ^= state_[3];
        state_[2] ^= t;
        state_[3] = std::rotl(state_[3], 45);
        return result;
    }

    /// Uniform in [0, 1) with 53 random bits.
    double uniform() noexcept { return static_cast<double>((*this)() >> 11) * 0x1p-53; }

    /// Uniform in [lo, hi); throws when the interval is empty or not finite.
    double uniform(double lo, double hi) {
        check_uniform_range(lo, hi);
        return uniform_unchecked(lo, hi);
    }

    /// Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject).
    std::uint64_t below(std::uint64_t n) {
        if (n == 0) throw error("tensoracle::rng::below", "the range [0, 0) is empty");
        auto [high, low] = detail::multiply_wide((*this)(), n);
        if (low < n) {
            const std::uint64_t threshold = (0 - n) % n;
            while (low < threshold) {
                std::tie(high, low) = detail::multiply_wide((*this)(), n);
            }
        }
        return high;
    }

    /// Uniform integer in [lo, hi], both ends included.
    std::int64_t integer(std::int64_t lo, std::int64_t hi) {
        if (lo > hi) {
            throw error("tensoracle::rng::integer",
                        "needs lo <= hi, got [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        }
        const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
        const std::uint64_t offset = span == max() ? (*this)() : below(span + 1);
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + offset);
    }

    bool bernoulli(double p) {
        if (!(p >= 0.0 && p <= 1.0)) {
            throw error("tensoracle::rng::bernoulli", "needs p in [0, 1], got " + std::to_string(p));
        }
        return uniform() < p;
    }

    /// Standard normal (Marsaglia's polar method; the second value of each
    /// pair is kept for the next call).
    double normal() noexcept {
        if (has_spare_) {
            has_spare_ = false;
            return spare_;
        }
        double u = 0.0;
        double v = 0.0;
        double s = 0.0;
        do {
            u = 2.0 * uniform() - 1.0;  // 2x is exact, so fusing cannot change it
            v = 2.0 * uniform() - 1.0;
            s = std::fma(u, u, v * v);
        } while (s >= 1.0 || s == 0.0);
        const double factor = std::sqrt(-2.0 * detail::portable_log(s) / s);
        spare_ = v * factor;
        has_spare_ = true;
        return u * factor;
    }

    double normal(double mean, double stddev) {
        if (!(stddev >= 0.0) || !std::isfinite(stddev) || !std::isfinite(mean)) {
            throw error("tensoracle::rng::normal", "needs a finite mean and a finite stddev >= 0, got mean " +
                                                       std::to_string(mean) + ", stddev " + std::to_string(stddev));
        }
        return std::fma(stddev, normal(), mean);
    }

    /// An independent generator for a sub-task (the next splitmix64-seeded
    /// stream), so that adding draws to one task does not shift another.
    rng split() noexcept { return rng((*this)()); }

    /// Array of uniform values in [lo, hi), drawn in double and rounded to T
    /// (for integer T and bool: uniform integers in [lo, hi), which must lie
    /// in T's range).
    template <element_type T>
    array<T> uniform_array(const shape_type& dims, double lo, double hi) {
        const std::size_t n = element_count(dims, "tensoracle::rng::uniform_array");
        auto out = array<T>::from_shape(dims);
        if constexpr (dtype_traits<T>::is_floating) {
            // The checks of uniform(lo, hi) once per array, not per element: the same values.
            if (n > 0) check_uniform_range(lo, hi);
            for (std::size_t i = 0; i < n; ++i) out.data()[i] = value_cast<T>(uniform_unchecked(lo, hi));
        } else {
            constexpr double t_min = std::is_same_v<T, bool> ? 0.0 : static_cast<double>(std::numeric_limits<T>::min());
            constexpr double t_max = std::is_same_v<T, bool> ? 1.0 : static_cast<double>(std::numeric_limits<T>::max());
            if (!(std::ceil(lo) >= t_min && std::ceil(hi) - 1.0 <= t_max && std::ceil(hi) - 1.0 < 0x1p63)) {
                throw error("tensoracle::rng::uniform_array",
                            "[" + std::to_string(lo) + ", " + std::to_string(hi) + ") is outside the range of " +
                                std::string(dtype_traits<T>::short_name));
            }
            const auto ilo = static_cast<std::int64_t>(std::ceil(lo));
            const auto ihi = static_cast<std::int64_t>(std::ceil(hi) - 1.0);
            if (ilo > ihi) {
                throw error("tensoracle::rng::uniform_array", "no integer lies in [" + std::to_string(lo) + ", " +
                                                                  std::to_string(hi) + ")");
            }
            // integer(ilo, ihi) per element with its checks and Lemire's threshold
            // computed once: the same draws, the same values.
            const std::uint64_t span = static_cast<std::uint64_t>(ihi) - static_cast<std::uint64_t>(ilo);
            const std::uint64_t range = span + 1;  // ihi < 2^63, so span < 2^64 - 1
            const std::uint64_t threshold = (0 - range) % range;
            for (std::size_t i = 0; i < n; ++i) {
                auto [high, low] = detail::multiply_wide((*this)(), range);
                while (low < threshold) std::tie(high, low) = detail::multiply_wide((*this)(), range);
                out.data()[i] = value_cast<T>(static_cast<std::int64_t>(static_cast<std::uint64_t>(ilo) + high));
            }
        }
        return out;
    }

    template <element_type T>
    array<T> normal_array(const shape_type& dims, double mean = 0.0, double stddev = 1.0) {
        static_assert(dtype_traits<T>::is_floating,
                      "tensoracle::rng::normal_array<T>: T must be a floating element type (f16, bf16, f32, f64)");
        const std::size_t n = element_count(dims, "tensoracle::rng::normal_array");
        auto out = array<T>::from_shape(dims);
        for (std::size_t i = 0; i < n; ++i) out.data()[i] = value_cast<T>(normal(mean, stddev));
        return out;
    }

    /// Runtime-dtype variant of uniform_array (a template only so that it is
    /// compiled where used).
    template <std::same_as<dtype> D>
    tensor uniform_tensor(D d, const shape_type& dims, double lo, double hi) {
        return tensoracle::visit(d, [&](auto t) { return tensor(uniform_array<typename decltype(t)::type>(dims, lo, hi)); });
    }

private:
    static void check_uniform_range(double lo, double hi) {
        if (!(lo < hi) || !std::isfinite(hi - lo)) {
            throw error("tensoracle::rng::uniform", "needs finite lo < hi, got [" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
        }
    }
    double uniform_unchecked(double lo, double hi) noexcept {
        const double r = std::fma(hi - lo, uniform(), lo);
        return r < hi ? r : std::nextafter(hi, lo);  // rounding may reach hi
    }

    std::array<std::uint64_t, 4> state_{};
    double spare_ = 0.0;
    bool has_spare_ = false;
};

}  // namespace tensoracle
