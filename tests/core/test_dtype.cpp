#include <doctest/doctest.h>

#include <set>
#include <string>

#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>

#include <tensoracle/core.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace core_dtype_test {

namespace to = tensoracle;
namespace hana = boost::hana;

static_assert(to::element_type<float> && to::element_type<to::bfloat16> && to::element_type<bool>);
static_assert(!to::element_type<long double> && !to::element_type<char> && !to::element_type<std::uint16_t>);
static_assert(to::floating_element<to::float16> && !to::floating_element<std::int32_t>);
static_assert(to::dtype_of<float> == to::dtype::f32 && to::dtype_of<bool> == to::dtype::boolean);
static_assert(std::is_same_v<to::scalar_of<to::dtype::bf16>, to::bfloat16>);
static_assert(std::is_same_v<to::scalar_of<to::dtype::u8>, std::uint8_t>);
static_assert(decltype(hana::length(to::all_dtypes))::value == 10);
static_assert(decltype(hana::length(to::floating_dtypes))::value == 4);
static_assert(decltype(hana::length(to::integer_dtypes))::value == 5);
static_assert(to::dtype_traits<double>::mantissa_bits == 52 && to::dtype_traits<double>::onnx_type == 11);
static_assert(to::dtype_traits<to::float16>::onnx_type == 10 && to::dtype_traits<to::bfloat16>::onnx_type == 16);
static_assert(to::dtype_traits<std::uint8_t>::is_integer && !to::dtype_traits<std::uint8_t>::is_signed);
static_assert(to::dtype_traits<bool>::is_bool && !to::dtype_traits<bool>::is_integer);

TEST_CASE("traits agree with the C++ types they stand for") {
    hana::for_each(to::all_dtypes, [](auto t) {
        using T = typename decltype(t)::type;
        using traits = to::dtype_traits<T>;
        CAPTURE(traits::name);
        CHECK(traits::bits == (std::is_same_v<T, bool> ? 8 : static_cast<int>(sizeof(T) * 8)));
        CHECK(std::is_same_v<to::scalar_of<traits::id>, T>);
        CHECK(to::info(traits::id) == traits::facts);  // the table's row, field by field
        if constexpr (traits::is_floating) {
            CHECK(traits::mantissa_bits + 1 == std::numeric_limits<T>::digits);
            CHECK(traits::epsilon == static_cast<double>(std::numeric_limits<T>::epsilon()));
            CHECK(1 + traits::exponent_bits + traits::mantissa_bits == traits::bits);
        } else {
            CHECK(traits::epsilon == 0.0);
            CHECK(traits::is_signed == std::numeric_limits<T>::is_signed);
        }
    });
}

TEST_CASE("runtime names and ONNX numbers round-trip") {
    std::set<int> onnx_numbers;
    for (std::size_t i = 0; i < to::dtype_count; ++i) {
        const auto d = static_cast<to::dtype>(i);
        const auto& row = to::info(d);
        CHECK(to::dtype_from_name(row.short_name) == d);
        CHECK(to::dtype_from_name(row.name) == d);
        CHECK(to::dtype_from_name(row.onnx_name) == d);
        CHECK(to::dtype_from_onnx(to::onnx_type(d)) == d);
        onnx_numbers.insert(row.onnx_type);
        const bool visited_floating = to::visit(d, [](auto t) {
            return to::dtype_traits<typename decltype(t)::type>::is_floating;
        });
        CHECK(visited_floating == row.is_floating);
    }
    CHECK(onnx_numbers.size() == to::dtype_count);
    std::ostringstream os;
    os << to::dtype::bf16 << ' ' << to::dtype::boolean;
    CHECK(os.str() == "bf16 bool");
}

TEST_CASE("bad runtime dtypes are clear errors") {
    CHECK_THROWS_WITH_AS((void)to::dtype_from_name("float8"),
                         doctest::Contains("tensoracle::dtype_from_name: unknown dtype name 'float8'"),
                         to::dtype_error);
    CHECK_THROWS_WITH_AS((void)to::dtype_from_onnx(8), doctest::Contains("ONNX element type 8 is not supported"),
                         to::dtype_error);
    CHECK_THROWS_WITH_AS((void)to::dtype_from_onnx(0), doctest::Contains("element type 0"), to::dtype_error);
    const auto bogus = static_cast<to::dtype>(42);
    CHECK_THROWS_WITH_AS((void)to::info(bogus), doctest::Contains("not a valid dtype value 42"), to::dtype_error);
    CHECK_THROWS_AS((void)to::visit(bogus, [](auto) { return 0; }), to::dtype_error);
    try {
        (void)to::dtype_from_name("");
        FAIL("expected an exception");
    } catch (const to::error& e) {
        CHECK(e.where() == "tensoracle::dtype_from_name");
    }
}

}  // namespace core_dtype_test
