#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <tensoracle/core.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace core_tensor_test {

namespace to = tensoracle;

TEST_CASE("a tensor keeps dtype, shape and values") {
    to::array<float> a = {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};
    const to::tensor t(a);
    CHECK(t.element_dtype() == to::dtype::f32);
    CHECK(t.shape() == to::shape_type{2, 3});
    CHECK(t.rank() == 2);
    CHECK(t.size() == 6);
    CHECK(t.values<float>()[5] == 6.f);
    CHECK(t.as_array<float>() == a);
    CHECK(t.value_as_double(4) == 5.0);
    std::ostringstream os;
    os << t;
    CHECK(os.str() == "f32[2, 3]");

    const auto scalar = to::tensor::from(xt::xarray<double>(2.5));
    CHECK(scalar.rank() == 0);
    CHECK(scalar.size() == 1);
    const auto empty = to::tensor();
    CHECK(empty.size() == 0);
    CHECK(empty.shape() == to::shape_type{0});
}

TEST_CASE("typed access to the wrong dtype is an error naming both") {
    const to::tensor t(to::array<std::int32_t>{1, 2});
    CHECK_THROWS_WITH_AS((void)t.values<float>(),
                         "tensoracle::tensor::values: asked for f32 but the tensor holds i32", to::dtype_error);
    CHECK_THROWS_AS((void)t.as_array<double>(), to::dtype_error);
    CHECK_THROWS_WITH_AS((void)t.value_as_double(2), doctest::Contains("index 2 is out of range for 2 elements"),
                         to::error);
}

TEST_CASE("bytes round-trip for every dtype, and size mismatches are errors") {
    to::rng gen(5);
    for (std::size_t i = 0; i < to::dtype_count; ++i) {
        const auto d = static_cast<to::dtype>(i);
        const auto t = gen.uniform_tensor(d, {3, 4}, 0.0, 2.0);
        const auto back = to::tensor::from_bytes(d, t.shape(), t.to_bytes());
        CHECK(back.identical(t));
        CHECK_THROWS_WITH_AS((void)to::tensor::from_bytes(d, {3, 5}, t.to_bytes()), doctest::Contains("bytes for"),
                             to::error);
    }
    const std::byte raw[3] = {std::byte{0}, std::byte{7}, std::byte{1}};
    const auto b = to::tensor::from_bytes(to::dtype::boolean, {3}, raw);
    CHECK(b.values<bool>()[0] == false);
    CHECK(b.values<bool>()[1] == true);
    CHECK(b.to_bytes()[1] == std::byte{1});
}

TEST_CASE("hostile shapes are rejected before allocating") {
    const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2;
    CHECK_THROWS_WITH_AS((void)to::tensor::zeros(to::dtype::f32, {huge, 4}),
                         "tensoracle::tensor::zeros: the element count of the shape overflows size_t",
                         to::shape_error);
    CHECK_THROWS_AS((void)to::tensor::from_bytes(to::dtype::f64, {huge, huge}, {}), to::shape_error);
    CHECK(to::tensor::zeros(to::dtype::i8, {2, 0, 3}).size() == 0);
    CHECK(to::element_count(std::vector<std::size_t>{}) == 1);
}

TEST_CASE("value_cast defines every case") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    CHECK(to::value_cast<std::int32_t>(nan) == 0);
    CHECK(to::value_cast<std::int32_t>(inf) == std::numeric_limits<std::int32_t>::max());
    CHECK(to::value_cast<std::int32_t>(-inf) == std::numeric_limits<std::int32_t>::min());
    CHECK(to::value_cast<std::int8_t>(-3.9) == -3);
    CHECK(to::value_cast<std::int8_t>(200.0) == 127);
    CHECK(to::value_cast<std::uint8_t>(-1.5) == 0);
    CHECK(to::value_cast<std::int64_t>(0x1p63) == std::numeric_limits<std::int64_t>::max());
    CHECK(to::value_cast<std::int64_t>(-0x1p63) == std::numeric_limits<std::int64_t>::min());
    CHECK(to::value_cast<std::int64_t>(0x1p62) == (std::int64_t{1} << 62));
    CHECK(to::value_cast<std::int8_t>(std::int32_t{300}) == 44);  // wraps modulo 256
    CHECK(to::value_cast<std::uint8_t>(std::int32_t{-1}) == 255);
    CHECK(to::value_cast<bool>(nan) == true);
    CHECK(to::value_cast<bool>(-0.0) == false);
    CHECK(to::value_cast<bool>(to::float16(0.5)) == true);
    CHECK(to::value_cast<float>(true) == 1.0f);
    CHECK(to::value_cast<to::bfloat16>(to::float16(65504.0)).bits() == to::bfloat16(65504.0f).bits());
    CHECK(to::value_cast<std::int16_t>(to::bfloat16(1e10f)) == std::numeric_limits<std::int16_t>::max());
    CHECK(to::value_cast<double>(to::float16(0.1)) == static_cast<double>(static_cast<float>(to::float16(0.1))));
}

TEST_CASE("cast and to<T> follow value_cast") {
    const to::tensor t(to::array<double>{-1.5, 0.0, 2.7, 1e9});
    const auto i = t.cast(to::dtype::i16);
    CHECK(i.element_dtype() == to::dtype::i16);
    CHECK(i.as_array<std::int16_t>() == to::array<std::int16_t>{-1, 0, 2, 32767});
    CHECK(t.to<bool>() == to::array<bool>{true, false, true, true});
    CHECK(t.cast(to::dtype::f16).to<float>()(3) == std::numeric_limits<float>::infinity());
}

TEST_CASE("from_array_as converts like cast, for every target dtype and several sources") {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const to::array<double> d = {{-1.5, 0.0, 2.7, 1e9}, {-1e10, 0.1, 65504.0, 70000.0}, {inf, -inf, nan, -0.0}};
    const to::array<float> f = {3.5f, -0.25f, 1e30f, -7.0f};
    // 2^62 + 2^38 + 1 rounds to a different float directly than through double.
    const to::array<std::int64_t> i = {(std::int64_t{1} << 62) + (std::int64_t{1} << 38) + 1, -3, 0, 255};
    const to::array<bool> b = {true, false, true};
    for (const auto& row : to::detail::dtype_table) {
        CAPTURE(row.short_name);
        const to::dtype target = row.id;
        CHECK(to::tensor::from_array_as(d, target).identical(to::tensor(d).cast(target)));
        CHECK(to::tensor::from_array_as(f, target).identical(to::tensor(f).cast(target)));
        CHECK(to::tensor::from_array_as(i, target).identical(to::tensor(i).cast(target)));
        CHECK(to::tensor::from_array_as(b, target).identical(to::tensor(b).cast(target)));
        CHECK(to::tensor::from_array_as(d, target).shape() == to::shape_type{3, 4});
    }
    CHECK(to::tensor::from_array_as(to::array<double>::from_shape({0, 2}), to::dtype::i8).shape() == to::shape_type{0, 2});
}

}  // namespace core_tensor_test
