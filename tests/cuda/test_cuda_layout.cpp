// The host-testable parts of the CUDA layer, run everywhere: the index maps
// the kernels read operands through (broadcasting, strides, negative steps,
// reductions), checked against the CPU reference's broadcasting and element
// order; and the rule that CPU and CUDA kernels share one per-element
// formula (ops/formulas.hpp): each CPU op struct derives its apply() from it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <tensoracle/core/rng.hpp>
#include <tensoracle/cuda/layout.hpp>
#include <tensoracle/ops/binary.hpp>
#include <tensoracle/ops/detail/broadcast.hpp>
#include <tensoracle/ops/unary.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ops_cuda_layout_test {

namespace to = tensoracle;
namespace tc = tensoracle::cuda;

TEST_CASE("cuda layout: broadcast maps give the CPU reference's broadcast offsets") {
    to::rng r(7);
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t rank = r.below(6);
        to::shape_type out(rank);
        for (auto& d : out) d = 1 + r.below(5);
        std::vector<to::shape_type> shapes(2);
        for (auto& s : shapes) {
            const std::size_t k = r.below(rank + 1);
            s.assign(out.end() - static_cast<std::ptrdiff_t>(k), out.end());
            for (auto& d : s) {
                if (r.bernoulli(0.3)) d = 1;
            }
        }
        const auto b = tc::broadcast_shape(shapes, "test");
        CHECK(b == to::ops::detail::broadcast_shapes(shapes, "test"));
        const auto want = to::ops::detail::broadcast_offsets(shapes, b);
        for (std::size_t i = 0; i < shapes.size(); ++i) {
            const auto m = tc::broadcast_map(b, shapes[i], tc::contiguous_strides(shapes[i]), 0, "test");
            for (std::size_t f = 0; f < want[i].size(); ++f) {
                REQUIRE(m.at(static_cast<std::int64_t>(f)) == static_cast<std::int64_t>(want[i][f]));
            }
        }
    }
}

TEST_CASE("cuda layout: strided maps read transposed and reversed views in row-major order") {
    // A 3x4 buffer read as its transpose (4x3) and with the columns reversed.
    const std::vector<std::size_t> shape{3, 4};
    const auto s = tc::contiguous_strides(shape);
    CHECK(s == std::vector<std::int64_t>{4, 1});
    const auto t = tc::broadcast_map({4, 3}, {4, 3}, {1, 4}, 0, "test");
    std::vector<std::int64_t> got;
    for (std::int64_t f = 0; f < 12; ++f) got.push_back(t.at(f));
    CHECK(got == std::vector<std::int64_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
    const auto rev = tc::broadcast_map({3, 4}, {3, 4}, {4, -1}, 3, "test");
    got.clear();
    for (std::int64_t f = 0; f < 4; ++f) got.push_back(rev.at(f));
    CHECK(got == std::vector<std::int64_t>{3, 2, 1, 0});
    // Rank 0: one element at the offset.
    CHECK(tc::broadcast_map({}, {}, {}, 5, "test").at(0) == 5);
}

TEST_CASE("cuda layout: reduction plans split kept and reduced axes") {
    const std::vector<std::size_t> shape{2, 3, 4};
    const auto s = tc::contiguous_strides(shape);
    auto p = tc::plan_reduction(shape, s, 0, {1, -1}, true, false, "test");
    CHECK(p.outputs == 2);
    CHECK(p.count == 12);
    CHECK(p.out_shape == to::shape_type{2, 1, 1});
    // Output 1 reads elements 12..23, in row-major order of the reduced axes.
    std::vector<std::int64_t> got;
    for (std::int64_t r = 0; r < p.count; ++r) got.push_back(p.kept.at(1) + p.reduced.at(r));
    for (std::int64_t r = 0; r < 12; ++r) CHECK(got[static_cast<std::size_t>(r)] == 12 + r);
    p = tc::plan_reduction(shape, s, 0, {}, false, false, "test");
    CHECK(p.outputs == 1);
    CHECK(p.count == 24);
    CHECK(p.out_shape.empty());
    p = tc::plan_reduction(shape, s, 0, {}, false, true, "test");  // noop_with_empty_axes
    CHECK(p.outputs == 24);
    CHECK(p.count == 1);
    CHECK(p.out_shape == shape);
}

TEST_CASE("cuda layout: division by multiplication is exact below 2^31") {
    to::rng r(12);
    for (int trial = 0; trial < 2000; ++trial) {
        // Divisors: small, powers of two and their neighbours, large.
        std::uint32_t d = 0;
        switch (trial % 4) {
            case 0: d = 1 + static_cast<std::uint32_t>(r.below(64)); break;
            case 1: d = (std::uint32_t{1} << r.below(30)) + static_cast<std::uint32_t>(r.below(3)) - 1; break;
            case 2: d = 1 + static_cast<std::uint32_t>(r.below(1u << 20)); break;
            default: d = 1 + static_cast<std::uint32_t>(r.below((std::uint64_t{1} << 31) - 1)); break;
        }
        if (d == 0) d = 1;
        tc::strided_map m;
        m.rank = 2;
        m.dims[0] = 1;
        m.dims[1] = d;
        m = m.narrowed();
        REQUIRE(m.narrow);
        for (int k = 0; k < 50; ++k) {
            std::uint32_t n = static_cast<std::uint32_t>(r.below(std::uint64_t{1} << 31));
            if (k < 4) n = std::uint32_t{0x7fffffff} - static_cast<std::uint32_t>(k);  // the largest numerators
            if (k == 4) n = d - 1;
            if (k == 5 && d < 0x7fffffff) n = d;
            REQUIRE(m.divide(n, 1) == n / d);
        }
    }
    // 2^31 elements or more: the 64-bit path.
    tc::strided_map big;
    big.rank = 2;
    big.dims[0] = 1 << 16;
    big.dims[1] = 1 << 15;
    CHECK_FALSE(big.narrowed().narrow);
}

TEST_CASE("cuda layout: collapsing axes keeps every map's offsets") {
    to::rng r(11);
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t rank = 1 + r.below(6);
        to::shape_type out(rank);
        for (auto& d : out) d = 1 + r.below(4);
        // Operands: contiguous, broadcast in places, and one stored transposed.
        to::shape_type sb = out;
        for (auto& d : sb) {
            if (r.bernoulli(0.4)) d = 1;
        }
        auto strides_t = tc::contiguous_strides(out);
        std::reverse(strides_t.begin(), strides_t.end());  // a permuted layout: not mergeable
        std::vector<tc::strided_map> maps{tc::broadcast_map(out, out, tc::contiguous_strides(out), 3, "test"),
                                          tc::broadcast_map(out, sb, tc::contiguous_strides(sb), 0, "test"),
                                          tc::broadcast_map(out, out, strides_t, 0, "test")};
        const std::size_t used = 1 + r.below(3);  // collapse 1, 2 or 3 maps jointly
        std::vector<std::vector<std::int64_t>> before(used);
        const auto n = static_cast<std::int64_t>(to::element_count(out));
        for (std::size_t m = 0; m < used; ++m) {
            for (std::int64_t f = 0; f < n; ++f) before[m].push_back(maps[m].at(f));
        }
        std::vector<tc::strided_map*> ptrs;
        for (std::size_t m = 0; m < used; ++m) ptrs.push_back(&maps[m]);
        tc::collapse(ptrs);
        for (std::size_t m = 0; m < used; ++m) {
            CHECK(maps[m].rank <= static_cast<int>(rank));
            CHECK(maps[m].narrow);
            for (std::int64_t f = 0; f < n; ++f) REQUIRE(maps[m].at(f) == before[m][static_cast<std::size_t>(f)]);
        }
        if (used == 1) CHECK(maps[0].rank == 1);  // a contiguous operand alone becomes one axis
    }
}

TEST_CASE("cuda layout: bad shapes and axes are errors naming the call") {
    CHECK_THROWS_AS((void)tc::broadcast_shape({{2, 3}, {4, 3}}, "op"), to::shape_error);
    CHECK_THROWS_WITH((void)tc::broadcast_shape({{2, 3}, {4, 3}}, "op"), doctest::Contains("op: shapes do not broadcast"));
    CHECK_THROWS_AS((void)tc::broadcast_map({2}, {3}, {1}, 0, "op"), to::shape_error);
    CHECK_THROWS_AS((void)tc::broadcast_map({1, 1, 1, 1, 1, 1, 1, 1, 1}, {1}, {1}, 0, "op"), to::unsupported_error);
    const std::vector<std::size_t> shape{2, 3};
    const auto s = tc::contiguous_strides(shape);
    CHECK_THROWS_AS((void)tc::plan_reduction(shape, s, 0, {2}, true, false, "op"), to::shape_error);
    CHECK_THROWS_WITH((void)tc::plan_reduction(shape, s, 0, {1, -1}, true, false, "op"), doctest::Contains("repeated"));
}

// One formula per op: the CPU op structs take apply() from ops/formulas.hpp, which the CUDA kernels instantiate.
namespace u = to::ops::unary;
namespace b = to::ops::binary;
static_assert(std::is_base_of_v<u::formula::sigmoid, u::sigmoid_fn>);
static_assert(std::is_base_of_v<u::formula::softplus, u::softplus_fn>);
static_assert(std::is_base_of_v<u::formula::celu, u::celu_fn>);
static_assert(std::is_base_of_v<u::formula::hard_sigmoid, u::hard_sigmoid_fn>);
static_assert(std::is_base_of_v<u::formula::thresholded_relu, u::thresholded_relu_fn>);
static_assert(std::is_base_of_v<b::formula::add, b::add_fn>);
static_assert(std::is_base_of_v<b::formula::max, b::max_fn>);
static_assert(std::is_base_of_v<b::formula::div, b::div_fn>);

TEST_CASE("cuda layout: the shared formulas keep the CPU kernels' edge cases") {
    const u::alpha_attr leaky{0.1f};
    CHECK(u::leaky_relu_fn::apply(-2.0f, leaky) == doctest::Approx(-0.2f));
    // HardSigmoid is max(0, min(1, alpha x + beta)) exactly: NaN gives 1, as std::max/min do.
    CHECK(u::hard_sigmoid_fn::apply(std::numeric_limits<float>::quiet_NaN(), u::hard_sigmoid_attr{}) == 1.0f);
    CHECK(u::celu_fn::apply(std::numeric_limits<float>::quiet_NaN(), u::elu_attr{}) == 0.0f);
    CHECK(std::isnan(b::max_fn::apply(1.0, std::numeric_limits<double>::quiet_NaN(), to::spec::no_attributes{})));
    CHECK(b::add_fn::apply(std::int32_t{2147483647}, std::int32_t{1}, to::spec::no_attributes{}) == -2147483647 - 1);
}

}  // namespace ops_cuda_layout_test
