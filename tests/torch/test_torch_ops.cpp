// The torch backend's op table (backends/torch/torch_ops.hpp) against the
// registry: each op of ops::all_ops is mapped to ATen or marked unsupported
// (also a static_assert of the header, which names a missing op), the lookup
// by a node's op_type agrees with the spec types, and an unsupported op's node
// is refused as before.
#include <doctest/doctest.h>

#include <cstddef>
#include <string>

#include <boost/hana/contains.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>

#include "../../backends/torch/torch_ops.hpp"

// glog, through libtorch, defines CHECK as its own: doctest's macros by their full names.

namespace torch_ops_test {

namespace to = tensoracle;
namespace tb = tensoracle::backends::torch_onnx;
namespace hana = boost::hana;

static_assert(to::ops::each_op_once<to::ops::all_ops_type, decltype(tb::lowerings()), decltype(tb::unsupported_ops)>);

to::graph::node node_of(std::string op_type) {
    to::graph::node n;
    n.op_type = std::move(op_type);
    n.inputs = {"x"};
    n.outputs = {"y"};
    return n;
}

TEST_CASE("torch ops: every registry op is mapped to ATen or marked unsupported") {
    const auto& table = tb::op_table();
    std::size_t mapped = 0, unsupported = 0;
    hana::for_each(to::ops::all_ops, [&](auto t) {
        using Op = typename decltype(t)::type;
        const bool has_mapping = table.find(Op::op_type) != table.end();
        const bool marked = hana::contains(tb::unsupported_ops, t);
        DOCTEST_INFO(Op::op_type);
        DOCTEST_CHECK(has_mapping != marked);
        (has_mapping ? mapped : unsupported) += 1;
    });
    DOCTEST_CHECK(mapped == table.size());
    DOCTEST_CHECK(mapped == static_cast<std::size_t>(hana::length(tb::lowerings())));
    DOCTEST_CHECK(unsupported == static_cast<std::size_t>(hana::length(tb::unsupported_ops)));
    DOCTEST_MESSAGE(mapped << " ops mapped to ATen, " << unsupported << " unsupported");
}

TEST_CASE("torch ops: a node finds its mapping by op_type, one without is refused") {
    const at::Tensor x = at::tensor({-1.5, 0.0, 2.0}, at::kDouble);
    const auto n = node_of("Abs");
    const auto y = tb::mapping_of(n)({x}, tb::node_view{n, "test"});
    DOCTEST_REQUIRE(y.size() == 1);
    DOCTEST_CHECK(at::equal(y[0], at::abs(x)));
    DOCTEST_CHECK_THROWS_WITH_AS((void)tb::mapping_of(node_of("Upsample")),
                         "torch: no exact ATen mapping for ONNX op Upsample (node Upsample -> y)", to::unsupported_error);
    DOCTEST_CHECK_THROWS_AS((void)tb::mapping_of(node_of("NoSuchOp")), to::unsupported_error);
}

}  // namespace torch_ops_test
