// The CUDA layer's table of kernels (cuda/lowering.hpp) against the registry
// and against nvcc's side, without a GPU: each op of ops::all_ops is lowered
// or listed CPU-only (also a static_assert of the header, which names a
// missing op), the lookup by op_type agrees with the spec types, and the ops
// lowered to cuda::unary and cuda::binary are the ones those kernels list.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/contains.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>

#include <tensoracle/cuda/graph.hpp>
#include <tensoracle/cuda/lowering.hpp>
#include <tensoracle/ops/registry.hpp>

namespace cuda_lowering_test {

namespace to = tensoracle;
namespace tc = tensoracle::cuda;
namespace hana = boost::hana;

static_assert(to::ops::each_op_once<to::ops::all_ops_type, decltype(tc::lowerings), decltype(tc::cpu_only_ops)>);

std::vector<std::string_view> lowered_to(tc::device_kernel k) {
    std::vector<std::string_view> v;
    hana::for_each(to::ops::all_ops, [&](auto t) {
        using Op = typename decltype(t)::type;
        if (const auto* l = tc::lowering_of(Op::op_type); l != nullptr && l->kernel == k) v.push_back(Op::op_type);
    });
    std::sort(v.begin(), v.end());
    return v;
}

std::vector<std::string_view> sorted(std::vector<std::string_view> v) {
    std::sort(v.begin(), v.end());
    return v;
}

TEST_CASE("cuda lowering: every registry op is lowered or CPU-only, and looked up by its op_type") {
    std::size_t lowered = 0, cpu_only = 0;
    hana::for_each(to::ops::all_ops, [&](auto t) {
        using Op = typename decltype(t)::type;
        const bool has_kernel = tc::lowering_of(Op::op_type) != nullptr;
        const bool listed_cpu_only = hana::contains(tc::cpu_only_ops, t);
        INFO(Op::op_type);
        CHECK(has_kernel != listed_cpu_only);
        (has_kernel ? lowered : cpu_only) += 1;
    });
    CHECK(lowered == static_cast<std::size_t>(hana::length(tc::lowerings)));
    CHECK(cpu_only == static_cast<std::size_t>(hana::length(tc::cpu_only_ops)));
    CHECK(lowered + cpu_only == static_cast<std::size_t>(hana::length(to::ops::all_ops)));
    MESSAGE(lowered << " ops lowered to CUDA kernels, " << cpu_only << " CPU-only");
    CHECK(tc::lowering_of("NoSuchOp") == nullptr);
    CHECK(tc::lowering_of(to::ops::ReduceL2::op_type)->reduction == tc::reduce_kind::l2);
    CHECK(tc::lowering_of(to::ops::LogSoftmax::op_type)->kernel == tc::device_kernel::log_softmax);
}

TEST_CASE("cuda lowering: the element-wise ops are those nvcc's kernels list") {
    CHECK(lowered_to(tc::device_kernel::unary) == sorted(tc::unary_op_types()));
    CHECK(lowered_to(tc::device_kernel::binary) == sorted(tc::binary_op_types()));
}

TEST_CASE("cuda lowering: a CPU-only op is declined before any device work") {
    std::string why;
    const tc::node_inputs none;
    const auto r = tc::run_node_on_device(to::ops::Not::op_type, none, {}, {}, 1, tc::gemm_precision::pedantic, why);
    CHECK_FALSE(r.has_value());
    CHECK(why == "no CUDA kernel for Not");
}

}  // namespace cuda_lowering_test
