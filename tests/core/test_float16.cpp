// float16 / bfloat16 conversions checked bit-exactly against independent
// implementations: Debian's FP16 library (binary16 <-> binary32, and binary64
// through a round-to-odd float) and Eigen's bfloat16.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <fp16.h>
#include <Eigen/Core>

#include <tensoracle/core.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace core_float16_test {

using tensoracle::bfloat16;
using tensoracle::float16;

namespace {

std::uint32_t float_bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// Same bits, or both NaN with the same sign (libraries differ on NaN payloads).
bool same_half(std::uint16_t ours, std::uint16_t theirs, int exp_bits) {
    const unsigned inf_bits = ((1u << exp_bits) - 1u) << (15 - exp_bits);
    const bool ours_nan = (ours & 0x7fffu) > inf_bits;
    const bool theirs_nan = (theirs & 0x7fffu) > inf_bits;
    if (ours_nan || theirs_nan) return ours_nan && theirs_nan && ((ours ^ theirs) & 0x8000u) == 0;
    return ours == theirs;
}

// f32 values that probe the rounding of every binary16 interval: each value,
// the midpoint to its successor and the floats right next to that midpoint.
template <class Check>
void for_each_rounding_probe_f16(Check check) {
    for (std::uint32_t h = 0; h < 0x7c00u; ++h) {
        const float lo = fp16_ieee_to_fp32_value(static_cast<std::uint16_t>(h));
        const float hi = fp16_ieee_to_fp32_value(static_cast<std::uint16_t>(h + 1));  // 0x7c00 is inf
        const float mid = h + 1 == 0x7c00u ? 65520.0f : 0.5f * (lo + hi);
        for (const float f : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY),
                              std::nextafter(lo, INFINITY)}) {
            check(f);
            check(-f);
        }
    }
}

}  // namespace

TEST_CASE("float16 widening equals FP16's for all 65536 encodings") {
    for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
        const auto bits = static_cast<std::uint16_t>(b);
        const float ours = float16::from_bits(bits);
        if ((bits & 0x7fffu) == 0) {
            // FP16's fp16_ieee_to_fp32_bits(+-0) calls __builtin_clz(0), which is
            // undefined (UBSan reports it), so the zeros are checked by hand.
            REQUIRE(float_bits(ours) == static_cast<std::uint32_t>(bits) << 16);
            continue;
        }
        REQUIRE_MESSAGE(float_bits(ours) == fp16_ieee_to_fp32_bits(bits), "encoding " << b);
    }
}

TEST_CASE("float16 from float rounds to nearest even exactly as FP16 does") {
    std::size_t checked = 0;
    for_each_rounding_probe_f16([&](float f) {
        const auto ours = float16(f).bits();
        const auto theirs = fp16_ieee_from_fp32_value(f);
        REQUIRE_MESSAGE(same_half(ours, theirs, 5), "input " << f << " bits " << float_bits(f));
        ++checked;
    });
    tensoracle::rng gen(2026);
    for (int i = 0; i < 4'000'000; ++i) {
        const auto f = std::bit_cast<float>(static_cast<std::uint32_t>(gen()));
        REQUIRE_MESSAGE(same_half(float16(f).bits(), fp16_ieee_from_fp32_value(f), 5), "bits " << float_bits(f));
        ++checked;
    }
    CHECK(checked == 0x7c00u * 10u + 4'000'000u);
}

TEST_CASE("float16 from double rounds once (no double rounding through float)") {
    // 1 + 2^-11 is the midpoint between 1 and the next binary16; a double a
    // hair above it must round up, though float(value) is the midpoint itself.
    const double above_mid = 1.0 + 0x1p-11 + 0x1p-40;
    CHECK(static_cast<float>(above_mid) == 1.0f + 0x1p-11f);
    CHECK(float16(above_mid).bits() == 0x3c01u);
    CHECK(float16(1.0 + 0x1p-11).bits() == 0x3c00u);         // tie, to even
    CHECK(float16(1.0 + 3 * 0x1p-11).bits() == 0x3c02u);     // tie, to even (up)
    CHECK(float16(1.0 + 0x1p-11 - 0x1p-40).bits() == 0x3c00u);

    // Random doubles: the reference rounds the double to float *to odd*
    // (truncate, then set the last bit if anything was dropped), which keeps
    // enough information for FP16's float->half rounding to be exact
    // (Boldo & Melquiond). xtl's half_float is no reference here: it rounds
    // doubles through float, e.g. 0x1.99a000ed67854p+12 -> 0x6e66, not 0x6e67.
    auto to_float_round_to_odd = [](double d) {
        const auto b = std::bit_cast<std::uint64_t>(d);
        const auto sign = static_cast<std::uint32_t>(b >> 63) << 31;
        const int exp = static_cast<int>((b >> 52) & 0x7ffu) - 1023;
        REQUIRE((exp >= -126 && exp <= 127));  // stays in float's normal range
        auto man = static_cast<std::uint32_t>((b >> 29) & 0x7fffffu);
        if ((b & ((std::uint64_t{1} << 29) - 1)) != 0) man |= 1u;
        return std::bit_cast<float>(sign | (static_cast<std::uint32_t>(exp + 127) << 23) | man);
    };
    CHECK(float16(0x1.99a000ed67854p+12).bits() == 0x6e67u);
    tensoracle::rng gen(7);
    for (int i = 0; i < 1'000'000; ++i) {
        const double d = std::ldexp(gen.uniform(-1.0, 1.0), static_cast<int>(gen.integer(-30, 17)));
        if (d == 0.0) continue;
        REQUIRE_MESSAGE(same_half(float16(d).bits(), fp16_ieee_from_fp32_value(to_float_round_to_odd(d)), 5),
                        "input " << std::hexfloat << d);
    }
}

TEST_CASE("the inlined rounding agrees with the general one on every kind of double") {
    // round_to_narrow takes results in the narrow normal range in one addition
    // and hands the rest to round_to_narrow_any: random bit patterns reach NaN,
    // infinities, subnormals, overflow and every exponent in between.
    tensoracle::rng gen(99);
    for (int i = 0; i < 2'000'000; ++i) {
        const std::uint64_t bits = i % 2 == 0 ? gen() : (gen() & 0x800fffffffffffffULL) |
                                                            (static_cast<std::uint64_t>(gen.integer(1023 - 140, 1023 + 130)) << 52);
        const double d = std::bit_cast<double>(bits);
        REQUIRE(tensoracle::detail::round_to_narrow<5, 10>(d) == tensoracle::detail::round_to_narrow_any<5, 10>(d));
        REQUIRE(tensoracle::detail::round_to_narrow<8, 7>(d) == tensoracle::detail::round_to_narrow_any<8, 7>(d));
    }
}

TEST_CASE("bfloat16 widening is the top half of a binary32") {
    for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
        const float ours = bfloat16::from_bits(static_cast<std::uint16_t>(b));
        REQUIRE(float_bits(ours) == b << 16);
    }
}

TEST_CASE("bfloat16 from float rounds to nearest even exactly as Eigen does") {
    auto check = [](float f) {
        const auto theirs = Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(f));
        REQUIRE_MESSAGE(same_half(bfloat16(f).bits(), theirs, 8), "bits " << float_bits(f));
    };
    // Around every midpoint of the positive finite bfloat16 range.
    for (std::uint32_t h = 0; h < 0x7f80u; ++h) {
        const std::uint32_t mid = (h << 16) | 0x8000u;
        for (const std::uint32_t b : {h << 16, mid, mid - 1, mid + 1, (h << 16) | 0x7fffu}) {
            check(std::bit_cast<float>(b));
            check(std::bit_cast<float>(b | 0x80000000u));
        }
    }
    tensoracle::rng gen(11);
    for (int i = 0; i < 2'000'000; ++i) check(std::bit_cast<float>(static_cast<std::uint32_t>(gen())));
}

TEST_CASE("integers convert with a single rounding") {
    // 2^62 + 2^54 + 1 lies just above a bfloat16 midpoint; through double it
    // would become the midpoint and round down to even.
    const std::int64_t x = (std::int64_t{1} << 62) + (std::int64_t{1} << 54) + 1;
    CHECK(static_cast<double>(bfloat16(x)) == 0x1p62 + 0x1p55);
    CHECK(static_cast<double>(bfloat16(-x)) == -(0x1p62 + 0x1p55));
    CHECK(static_cast<float>(float16(std::int32_t{2049})) == 2048.0f);  // tie to even
    CHECK(static_cast<float>(float16(std::int32_t{2051})) == 2052.0f);
    CHECK(isinf(float16(std::int32_t{65520})));                      // rounds past max
    CHECK(static_cast<float>(float16(std::int32_t{65519})) == 65504.0f);
    CHECK(static_cast<float>(float16(true)) == 1.0f);
}

TEST_CASE("special values and numeric_limits") {
    using L = std::numeric_limits<float16>;
    CHECK(static_cast<float>(L::max()) == 65504.0f);
    CHECK(static_cast<float>(L::lowest()) == -65504.0f);
    CHECK(static_cast<float>(L::min()) == 0x1p-14f);
    CHECK(static_cast<float>(L::denorm_min()) == 0x1p-24f);
    CHECK(static_cast<float>(L::epsilon()) == 0x1p-10f);
    CHECK(L::digits == 11);
    CHECK(isinf(L::infinity()));
    CHECK(isnan(L::quiet_NaN()));
    CHECK(isnan(L::signaling_NaN()));
    using B = std::numeric_limits<bfloat16>;
    CHECK(static_cast<float>(B::max()) == std::bit_cast<float>(0x7f7f0000u));
    CHECK(static_cast<float>(B::min()) == std::numeric_limits<float>::min());
    CHECK(static_cast<float>(B::epsilon()) == 0x1p-7f);
    CHECK(static_cast<float>(B::denorm_min()) == 0x1p-133f);
    CHECK(B::digits == 8);

    CHECK(float16(-0.0).bits() == 0x8000u);
    CHECK(float16(0.0) == float16(-0.0));
    CHECK(isinf(float16(1e6)));
    CHECK(signbit(float16(-1e6)));
    CHECK(float16(1e-9).bits() == 0);  // below half the smallest subnormal
    CHECK(float16(0x1p-25 * 1.0000001).bits() == 1);  // just above half of it
    CHECK(float16(0x1p-25).bits() == 0);              // exactly half: tie to even (zero)
    const float16 nan(std::numeric_limits<double>::quiet_NaN());
    CHECK(isnan(nan));
    CHECK_FALSE(nan == nan);
    CHECK(isnan(bfloat16(-std::numeric_limits<float>::quiet_NaN())));
    CHECK(signbit(bfloat16(-std::numeric_limits<float>::quiet_NaN())));
    CHECK(tensoracle::abs(float16(-2.5)) == float16(2.5));
    CHECK(-float16(2.0) == float16(-2.0));
}

TEST_CASE_TEMPLATE("arithmetic is correctly rounded (property test)", T, float16, bfloat16) {
    tensoracle::rng gen(99);
    for (int i = 0; i < 200'000; ++i) {
        const T a(gen.normal(0.0, 100.0));
        const T b(gen.normal(0.0, 100.0));
        const double da = static_cast<float>(a);
        const double db = static_cast<float>(b);
        REQUIRE((a + b).bits() == T(da + db).bits());
        REQUIRE((a - b).bits() == T(da - db).bits());
        REQUIRE((a * b).bits() == T(da * db).bits());
        if (db != 0.0) REQUIRE((a / b).bits() == T(da / db).bits());
        T c = a;
        c += b;
        REQUIRE(c.bits() == (a + b).bits());
        CHECK((a < b) == (da < db));
    }
}

TEST_CASE("constexpr conversions") {
    static_assert(float16(1.0).bits() == 0x3c00u);
    static_assert(bfloat16(1.0f).bits() == 0x3f80u);
    static_assert(static_cast<float>(float16::from_bits(0x3555u)) == 0x1.554p-2f);
    static_assert(float16(65504.0).bits() == 0x7bffu);
}

}  // namespace core_float16_test
