#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include <tensoracle/core.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace core_memory_test {

namespace to = tensoracle;

constexpr std::uint64_t MiB = 1024 * 1024;

TEST_CASE("memory sizes parse as bytes, binary units and percentages of physical memory") {
    CHECK(to::parse_memory_size("1048576") == MiB);
    CHECK(to::parse_memory_size("512K") == 512 * 1024);
    CHECK(to::parse_memory_size("64M") == 64 * MiB);
    CHECK(to::parse_memory_size("64MiB") == 64 * MiB);
    CHECK(to::parse_memory_size("1.5G") == 1536 * MiB);
    CHECK(to::parse_memory_size("2GB") == 2048 * MiB);
    CHECK(to::parse_memory_size("1T") == 1024 * 1024 * MiB);
    if (to::physical_memory_bytes() != 0) {
        const auto half = to::parse_memory_size("50%");
        CHECK(half <= to::physical_memory_bytes() / 2 + 1);
        CHECK(half + 1 >= to::physical_memory_bytes() / 2);
    }
    for (const char* bad : {"", "abc", "-1", "0", "12X", "150%", "0.1", "nan", "1e30G"}) {
        CAPTURE(bad);
        const std::string expected = "--memory-limit: memory size '" + std::string(bad) + "'";
        CHECK_THROWS_WITH_AS((void)to::parse_memory_size(bad, "--memory-limit"), doctest::Contains(expected.c_str()), to::error);
    }
    CHECK(to::memory_size_text(512) == "512 B");
    CHECK(to::memory_size_text(3 * MiB / 2) == "1.5 MiB");
}

TEST_CASE("tensors count their bytes in use while they live, moved or copied") {
    const auto before = to::memory_in_use();
    {
        auto a = to::tensor::zeros(to::dtype::f32, {256, 256});  // 256 KiB
        CHECK(to::memory_in_use() == before + 256 * 1024);
        const to::tensor b = a;  // a copy is storage of its own
        CHECK(to::memory_in_use() == before + 512 * 1024);
        const to::tensor c = std::move(a);  // a move is not
        CHECK(to::memory_in_use() == before + 512 * 1024);
    }
    CHECK(to::memory_in_use() == before);
}

TEST_CASE("a tensor over the memory budget is a memory_error naming dtype, shape and bytes, not bad_alloc") {
    const to::scoped_memory_limit limit(to::memory_in_use() + 1 * MiB);
    CHECK(to::memory_limit() == to::memory_in_use() + 1 * MiB);
    const auto before = to::memory_in_use();
    try {
        (void)to::tensor::zeros(to::dtype::f64, {1024, 1024});
        FAIL("no memory_error");
    } catch (const to::memory_error& e) {
        const std::string what = e.what();
        CHECK(what.find("tensoracle::tensor::zeros") != std::string::npos);
        CHECK(what.find("f64[1024, 1024] needs 8.0 MiB (8388608 bytes)") != std::string::npos);
        CHECK(what.find("over the memory budget of 1.0 MiB") != std::string::npos);
        CHECK(e.bytes_asked() == 8 * MiB);
        CHECK(e.limit() == before + 1 * MiB);
    }
    CHECK(to::memory_in_use() == before);  // a refused tensor counts nothing
    // What fits beside what is in use still allocates; the sum over the budget does not.
    const auto a = to::tensor::zeros(to::dtype::u8, {600 * 1024});
    CHECK_THROWS_AS((void)to::tensor::zeros(to::dtype::u8, {600 * 1024}), to::memory_error);
    CHECK(to::memory_in_use() == before + 600 * 1024);
}

TEST_CASE("the hostile shapes of a model end in memory_error before anything is allocated") {
    // [100000, 100000, 100] float32 is 4 TB: more than any budget of this machine.
    CHECK_THROWS_WITH_AS((void)to::tensor::for_overwrite(to::dtype::f32, {100000, 100000, 100}),
                         doctest::Contains("f32[100000, 100000, 100] needs 3.6 TiB (4000000000000 bytes)"), to::memory_error);
    // A declared shape whose data is 16 bytes is a size error, checked before a 4 TB allocation.
    const std::vector<std::byte> sixteen(16);
    CHECK_THROWS_WITH_AS((void)to::tensor::from_bytes(to::dtype::f32, {1000000, 1000000}, sixteen),
                         doctest::Contains("got 16 bytes for f32 [1000000, 1000000], which needs 4000000000000 bytes"),
                         to::error);
}

#if !defined(__SANITIZE_ADDRESS__) && !(defined(__has_feature) && __has_feature(address_sanitizer))
TEST_CASE("an allocation the system refuses within the budget is a memory_error too") {
    // ASan aborts on such a request instead of throwing, so this runs in the plain builds.
    const to::scoped_memory_limit unlimited(std::numeric_limits<std::uint64_t>::max());
    const auto before = to::memory_in_use();
    CHECK_THROWS_WITH_AS((void)to::tensor::for_overwrite(to::dtype::u8, {std::size_t{1} << 62}),
                         doctest::Contains("the system refused to allocate it"), to::memory_error);
    CHECK(to::memory_in_use() == before);
}
#endif

TEST_CASE("check_memory refuses what would not fit and counts nothing") {
    const to::scoped_memory_limit limit(to::memory_in_use() + 4 * MiB);
    CHECK_NOTHROW(to::check_memory(4 * MiB, "here", "a buffer"));
    CHECK_THROWS_WITH_AS(to::check_memory(4 * MiB + 1, "here", "a buffer"),
                         doctest::Contains("here: a buffer needs 4.0 MiB (4194305 bytes)"), to::memory_error);
    CHECK_THROWS_AS(to::check_memory(std::numeric_limits<std::uint64_t>::max(), "here", "all"), to::memory_error);
}

}  // namespace core_memory_test
