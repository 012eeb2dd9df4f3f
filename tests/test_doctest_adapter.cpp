#include <doctest/doctest.h>

#include <tensoracle/core.hpp>
#include <tensoracle/doctest.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace core_doctest_adapter_test {

namespace to = tensoracle;

TEST_CASE("doctest adapter: passing checks of every kind") {
    const to::array<float> e = {1.f, 2.f, 3.f};
    const to::array<float> a = {1.f, 2.f, 3.000001f};
    TENSORACLE_CHECK_ALLCLOSE(a, e, to::level{-5});
    TENSORACLE_REQUIRE_ALLCLOSE(a, e, (to::tolerance{1e-6, 1e-6}));
    const to::array<std::int32_t> i = {1, 2};
    TENSORACLE_CHECK_ALLCLOSE(i, i, to::exact);
    TENSORACLE_CHECK_ALLCLOSE(to::tensor(a), to::tensor(e), to::level{-5});
}

}  // namespace core_doctest_adapter_test
