// Forward, reverse and forward-over-reverse over whole graphs, checked
// against finite differences of the plain interpreter in float64.
#include <doctest/doctest.h>

#include "tensoracle/ad/finite_difference.hpp"
#include "tensoracle/ad/graph.hpp"
#include "tensoracle/doctest.hpp"

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ad_graph_ad_test {

using namespace tensoracle;
namespace tg = tensoracle::graph;

namespace {
// loss = ReduceSum(Softmax(Tanh(Reshape(x, [2, 6]) @ W + b)) * Log(y))
tg::graph net() {
    tg::graph g;
    g.name = "net";
    g.inputs = {{"x", dtype::f64, shape_type{3, 4}}, {"y", dtype::f64, shape_type{2, 5}}};
    g.outputs = {{"loss", dtype::f64, std::nullopt}, {"s", dtype::f64, std::nullopt}};
    rng r(5);
    g.initializers.emplace("W", r.uniform_tensor(dtype::f64, {6, 5}, -1.0, 1.0));
    g.initializers.emplace("b", r.uniform_tensor(dtype::f64, {5}, -1.0, 1.0));
    g.initializers.emplace("shape", tensor(array<std::int64_t>{2, 6}));
    g.nodes = {{"Reshape", {"x", "shape"}, {"xr"}, {}, "reshape", ""},
               {"MatMul", {"xr", "W"}, {"h"}, {}, "matmul", ""},
               {"Add", {"h", "b"}, {"hb"}, {}, "add", ""},
               {"Tanh", {"hb"}, {"t"}, {}, "tanh", ""},
               {"Softmax", {"t"}, {"s"}, {}, "softmax", ""},
               {"Log", {"y"}, {"ly"}, {}, "log", ""},
               {"Mul", {"s", "ly"}, {"p"}, {}, "mul", ""},
               {"ReduceSum", {"p"}, {"loss"}, {{"keepdims", std::int64_t{0}}}, "sum", ""}};
    return g;
}
ad::value_map feeds(std::uint64_t seed) {
    rng r(seed);
    return {{"x", r.uniform_tensor(dtype::f64, {3, 4}, -1.0, 1.0)}, {"y", r.uniform_tensor(dtype::f64, {2, 5}, 0.5, 2.0)}};
}
std::vector<double> flat(const ad::value_map& m, const std::vector<std::string>& names) {
    std::vector<double> v;
    for (const auto& n : names) {
        const auto d = m.at(n).to<double>();
        v.insert(v.end(), d.begin(), d.end());
    }
    return v;
}
// The graph's outputs as a function of the concatenation of x and y.
std::vector<double> run_flat(const tg::graph& g, std::span<const double> xy) {
    auto x = array<double>::from_shape({3, 4});
    auto y = array<double>::from_shape({2, 5});
    std::copy(xy.begin(), xy.begin() + 12, x.data());
    std::copy(xy.begin() + 12, xy.end(), y.data());
    const auto r = tg::run(g, {{"x", tensor(x)}, {"y", tensor(y)}});
    return flat(r.outputs, {"loss", "s"});
}
double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}
}  // namespace

TEST_CASE("graph AD: jvp and vjp agree with each other and with finite differences") {
    const auto g = net();
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        const auto f = feeds(seed);
        rng r(seed * 17);
        const ad::value_map u{{"x", r.uniform_tensor(dtype::f64, {3, 4}, -1, 1)}, {"y", r.uniform_tensor(dtype::f64, {2, 5}, -1, 1)}};
        const ad::value_map w{{"loss", r.uniform_tensor(dtype::f64, {}, -1, 1)}, {"s", r.uniform_tensor(dtype::f64, {2, 5}, -1, 1)}};
        const auto fwd = ad::jvp(g, f, u);
        const auto rev = ad::vjp(g, f, w);
        CHECK(fwd.cut_at.empty());
        // values equal the interpreter's
        const auto plain = tg::run(g, f);
        TENSORACLE_CHECK_ALLCLOSE(fwd.outputs.at("loss"), plain.outputs.at("loss"), (tolerance{1e-14, 1e-14}));
        TENSORACLE_CHECK_ALLCLOSE(rev.outputs.at("s"), plain.outputs.at("s"), (tolerance{1e-14, 1e-14}));
        // <Ju, w> = <u, Jᵀw>
        const auto ju = flat(fwd.tangents, {"loss", "s"}), wf = flat(w, {"loss", "s"});
        const auto jtw = flat(rev.gradients, {"x", "y"}), uf = flat(u, {"x", "y"});
        CHECK(dot(ju, wf) == doctest::Approx(dot(uf, jtw)).epsilon(1e-12));
        // Ju against six-point finite differences
        const auto x0 = flat(f, {"x", "y"});
        const auto fd = ad::fd_directional<double>([&](std::span<const double> v) { return run_flat(g, v); },
                                                   std::span<const double>(x0), std::span<const double>(uf),
                                                   ad::fd_options::stan());
        for (std::size_t i = 0; i < ju.size(); ++i) CHECK(ju[i] == doctest::Approx(fd.derivative[i]).epsilon(1e-8));
    }
}

TEST_CASE("graph AD: forward-over-reverse Hessian-vector products match finite differences of the gradient") {
    const auto g = net();
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const auto f = feeds(seed);
        rng r(seed * 29);
        const ad::value_map u{{"x", r.uniform_tensor(dtype::f64, {3, 4}, -1, 1)}, {"y", r.uniform_tensor(dtype::f64, {2, 5}, -1, 1)}};
        const ad::value_map w{{"loss", tensor(array<double>(1.0))}};
        const auto h = ad::hvp(g, f, w, u);
        const auto grad = ad::vjp(g, f, w);
        TENSORACLE_CHECK_ALLCLOSE(h.gradients.at("x"), grad.gradients.at("x"), (tolerance{1e-13, 1e-13}));
        const auto x0 = flat(f, {"x", "y"}), uf = flat(u, {"x", "y"});
        const auto gradient_of = [&](std::span<const double> v) {
            auto x = array<double>::from_shape({3, 4});
            auto y = array<double>::from_shape({2, 5});
            std::copy(v.begin(), v.begin() + 12, x.data());
            std::copy(v.begin() + 12, v.end(), y.data());
            return flat(ad::vjp(g, {{"x", tensor(x)}, {"y", tensor(y)}}, w).gradients, {"x", "y"});
        };
        const auto fd = ad::fd_directional<double>(gradient_of, std::span<const double>(x0), std::span<const double>(uf),
                                                   ad::fd_options::stan());
        const auto hu = flat(h.hessian_vector, {"x", "y"});
        for (std::size_t i = 0; i < hu.size(); ++i) CHECK(hu[i] == doctest::Approx(fd.derivative[i]).epsilon(1e-7));
        // The Hessian is symmetric: <v, H u> = <u, H v>.
        const ad::value_map v{{"x", r.uniform_tensor(dtype::f64, {3, 4}, -1, 1)}, {"y", r.uniform_tensor(dtype::f64, {2, 5}, -1, 1)}};
        const auto hv = flat(ad::hvp(g, f, w, v).hessian_vector, {"x", "y"});
        CHECK(dot(flat(v, {"x", "y"}), hu) == doctest::Approx(dot(uf, hv)).epsilon(1e-10));
    }
}

TEST_CASE("graph AD: non-differentiable ops cut the derivative and are listed, and the proxy mode") {
    tg::graph g;
    g.name = "steps";
    g.inputs = {{"x", dtype::f64, shape_type{4}}};
    g.outputs = {{"y", dtype::f64, std::nullopt}, {"e", dtype::f64, std::nullopt}};
    g.nodes = {{"Floor", {"x"}, {"y"}, {}, "floor", ""}, {"EyeLike", {"x2"}, {"e"}, {}, "eye", ""},
               {"Reshape", {"x", "s"}, {"x2"}, {}, "reshape", ""}, {"Shape", {"x"}, {"s0"}, {}, "shape", ""}};
    g.initializers.emplace("s", tensor(array<std::int64_t>{2, 2}));
    const ad::value_map f{{"x", tensor(array<double>{0.5, 1.5, -2.5, 3.25})}};
    const ad::value_map w{{"y", tensor(array<double>{1.0, 2.0, 3.0, 4.0})}};
    const auto r = ad::vjp(g, f, w);
    TENSORACLE_CHECK_ALLCLOSE(r.gradients.at("x"), tensor(array<double>{0, 0, 0, 0}), (tolerance{}));
    REQUIRE(r.cut_at.size() == 1);  // EyeLike; Shape's output is int64 and loses nothing
    CHECK(r.cut_at[0].find("EyeLike") != std::string::npos);
    const auto p = ad::vjp(g, f, w, {}, {.proxy = true, .tensor_level = false});
    TENSORACLE_CHECK_ALLCLOSE(p.gradients.at("x"), tensor(array<double>{0.1, 0.2, 0.3, 0.4}), (tolerance{1e-15, 1e-15}));
}

TEST_CASE("graph AD: bad requests are errors naming the value") {
    const auto g = net();
    const auto f = feeds(1);
    CHECK_THROWS_WITH_AS((void)ad::vjp(g, f, {{"nope", tensor(array<double>(1.0))}}), doctest::Contains("'nope', which is not a graph output"), error);
    CHECK_THROWS_WITH_AS((void)ad::vjp(g, f, {{"s", tensor(array<double>{1.0})}}), doctest::Contains("cotangent for 's' has shape"), shape_error);
    CHECK_THROWS_WITH_AS((void)ad::vjp(g, f, {}, {"W"}), doctest::Contains("'W' is not fed"), error);
    CHECK_THROWS_WITH_AS((void)ad::jvp(g, f, {{"x", tensor(array<double>{1.0})}}), doctest::Contains("has shape"), shape_error);
    CHECK_THROWS_WITH_AS((void)ad::hvp(g, f, {}, {{"q", tensor(array<double>{1.0})}}), doctest::Contains("'q', which is not differentiated"), error);
}

}  // namespace ad_graph_ad_test
