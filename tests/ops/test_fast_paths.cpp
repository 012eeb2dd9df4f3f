// Fast paths of MatMul, Gemm and Conv (ops/fast_paths.hpp): on random shapes
// (batch broadcasting, 1-D operands, transposes, groups, strides, dilations,
// padding, degenerate dims) the interpreter's result with a GEMM plugged in
// agrees with the naive reference kernel within the dtype's tolerance level.
// The plumbing (im2col, batch offsets, beta C) is checked with a plain GEMM
// written here, so it runs everywhere; with TENSORACLE_TEST_WITH_BLAS the same
// checks run through OpenBLAS via <tensoracle/blas.hpp>.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <tensoracle/graph/interpreter.hpp>
#include <tensoracle/ops/fast_paths.hpp>
#include <tensoracle/ops/nn.hpp>
#include <tensoracle/ops/registry.hpp>
#include <tensoracle/core.hpp>

#ifdef TENSORACLE_TEST_WITH_BLAS
#include <tensoracle/blas.hpp>
#endif

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ops_fast_paths_test {

namespace to = tensoracle;
using to::spec::attribute_map;

namespace {

std::size_t gemm_calls = 0;

/// A GEMM straight from its definition, in double, counting its calls.
template <class T>
void plain_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, T alpha, const T* a, std::size_t lda,
                const T* b, std::size_t ldb, T beta, T* c, std::size_t ldc) {
    ++gemm_calls;
    for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            double s = 0;
            for (std::size_t l = 0; l < k; ++l) {
                s += static_cast<double>(ta ? a[l * lda + i] : a[i * lda + l]) *
                     static_cast<double>(tb ? b[j * ldb + l] : b[l * ldb + j]);
            }
            const double prev = beta == T(0) ? 0.0 : static_cast<double>(beta) * static_cast<double>(c[i * ldc + j]);
            c[i * ldc + j] = static_cast<T>(static_cast<double>(alpha) * s + prev);
        }
    }
}

void use_plain_gemm() {
    to::ops::fast_paths().sgemm = &plain_gemm<float>;
    to::ops::fast_paths().dgemm = &plain_gemm<double>;
}

struct instance {
    std::string op;
    std::vector<to::tensor> in;
    attribute_map attrs;
};

std::vector<to::tensor> eval(const instance& c) {
    std::vector<const to::tensor*> ptrs;
    for (const auto& t : c.in) ptrs.push_back(&t);
    return to::spec::evaluate(to::ops::get_op(c.op), ptrs, c.attrs);
}

std::size_t dim(to::rng& g, std::size_t lo, std::size_t hi) {
    return static_cast<std::size_t>(g.integer(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi)));
}

instance random_matmul(to::rng& g, to::dtype d) {
    const std::size_t M = dim(g, 1, 9), K = dim(g, 1, 9), N = dim(g, 1, 9);
    to::shape_type a{M, K}, b{K, N};
    if (g.bernoulli(0.2)) a = {K};  // 1-D operands
    if (g.bernoulli(0.2)) b = {K};
    if (g.bernoulli(0.5) && a.size() == 2 && b.size() == 2) {  // batches, broadcast against each other
        const std::size_t b0 = dim(g, 1, 3), b1 = dim(g, 1, 3);
        a.insert(a.begin(), {b0, g.bernoulli(0.5) ? b1 : 1});
        b.insert(b.begin(), g.bernoulli(0.5) ? b1 : 1);
    }
    return {"MatMul", {g.uniform_tensor(d, a, -2, 2), g.uniform_tensor(d, b, -2, 2)}, {}};
}

instance random_gemm(to::rng& g, to::dtype d) {
    const std::size_t M = dim(g, 1, 9), K = dim(g, 1, 9), N = dim(g, 1, 9);
    const std::int64_t ta = g.bernoulli(0.5) ? 1 : 0, tb = g.bernoulli(0.5) ? 1 : 0;
    instance c{"Gemm",
               {g.uniform_tensor(d, ta ? to::shape_type{K, M} : to::shape_type{M, K}, -2, 2),
                g.uniform_tensor(d, tb ? to::shape_type{N, K} : to::shape_type{K, N}, -2, 2)},
               {{"transA", ta}, {"transB", tb}, {"alpha", static_cast<float>(g.uniform(-2, 2))},
                {"beta", static_cast<float>(g.uniform(-2, 2))}}};
    const double pick = g.uniform(0, 1);
    if (pick < 0.25) {
        c.in.push_back(g.uniform_tensor(d, {M, N}, -2, 2));
    } else if (pick < 0.5) {
        c.in.push_back(g.uniform_tensor(d, {N}, -2, 2));  // broadcast along rows
    } else if (pick < 0.75) {
        c.in.push_back(g.uniform_tensor(d, {M, 1}, -2, 2));
    }
    return c;
}

instance random_conv(to::rng& g, to::dtype d) {
    const std::size_t n = dim(g, 1, 3), groups = dim(g, 1, 2);
    const std::size_t Cg = dim(g, 1, 3), Mg = dim(g, 1, 3), N = dim(g, 1, 2);
    to::shape_type xs{N, Cg * groups}, ws{Mg * groups, Cg};
    std::vector<std::int64_t> pads(2 * n), strides(n), dilations(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = dim(g, 1, 3);
        dilations[i] = g.integer(1, 2);
        strides[i] = g.integer(1, 2);
        pads[i] = g.integer(0, 2);
        pads[i + n] = g.integer(0, 2);
        const std::size_t span = static_cast<std::size_t>(dilations[i]) * (k - 1) + 1;
        xs.push_back(span + dim(g, 0, 5));
        ws.push_back(k);
    }
    instance c{"Conv",
               {g.uniform_tensor(d, xs, -2, 2), g.uniform_tensor(d, ws, -2, 2)},
               {{"group", static_cast<std::int64_t>(groups)}, {"pads", pads}, {"strides", strides}, {"dilations", dilations}}};
    if (g.bernoulli(0.5)) c.in.push_back(g.uniform_tensor(d, {Mg * groups}, -2, 2));
    return c;
}

/// The fast result (table as set by the caller) agrees with the naive one and
/// the GEMM ran (when counted).
void check_agrees(const instance& c, bool counted) {
    std::vector<to::tensor> naive;
    {
        const to::ops::naive_kernels_only scope;
        const std::size_t before = gemm_calls;
        naive = eval(c);
        CHECK(gemm_calls == before);  // the scope really turns the fast path off
    }
    const std::size_t before = gemm_calls;
    const auto fast = eval(c);
    if (counted) CHECK(gemm_calls > before);
    REQUIRE(fast.size() == 1);
    CHECK(fast[0].shape() == naive[0].shape());
    CHECK(fast[0].element_dtype() == naive[0].element_dtype());
    // The campaign's level for float32 (t = -4); float64 sums reordered in
    // double are held far tighter (t = -8: atol 1.6e-11, rtol 6.3e-12).
    const auto d = naive[0].element_dtype();
    const auto tol = to::tolerance_level(d, d == to::dtype::f64 ? -8.0 : -4.0);
    const auto r = to::compare(fast[0], naive[0]);
    CHECK_MESSAGE(r.passes(tol), c.op << " " << to::to_string(c.in[0].shape()) << " x "
                                      << to::to_string(c.in[1].shape()) << ": " << r.describe(tol));
}

void property_sweep(bool counted, int per_op) {
    to::rng g(8080);
    for (const auto d : {to::dtype::f32, to::dtype::f64}) {
        for (int i = 0; i < per_op; ++i) {
            CAPTURE(i);
            check_agrees(random_matmul(g, d), counted);
            check_agrees(random_gemm(g, d), counted);
            check_agrees(random_conv(g, d), counted);
        }
    }
}

}  // namespace

TEST_CASE("fast paths: the table is empty unless a program fills it") {
    CHECK((to::ops::fast_paths().sgemm == nullptr));
    CHECK((to::ops::fast_paths().dgemm == nullptr));
    CHECK((to::ops::fast_gemm<to::float16>() == nullptr));
}

TEST_CASE("fast paths: MatMul, Gemm and Conv through a plugged-in GEMM agree with the naive kernels") {
    const to::ops::naive_kernels_only restore;  // leaves the table as found
    use_plain_gemm();
    property_sweep(true, 40);
}

TEST_CASE("fast paths: degenerate dims, non-finite values, alpha 0 and other dtypes take the naive kernel") {
    const to::ops::naive_kernels_only restore;
    use_plain_gemm();
    to::rng g(99);
    const auto unchanged = [](const instance& c) {
        std::vector<to::tensor> naive;
        {
            const to::ops::naive_kernels_only scope;
            naive = eval(c);
        }
        const std::size_t before = gemm_calls;
        const auto got = eval(c);
        CHECK(gemm_calls == before);
        REQUIRE(got[0].shape() == naive[0].shape());
        for (std::size_t i = 0; i < got[0].size(); ++i) {
            const double x = got[0].value_as_double(i), y = naive[0].value_as_double(i);
            CHECK((x == y || (std::isnan(x) && std::isnan(y))));
        }
    };
    // K = 0: an empty sum, zeros.
    unchanged({"MatMul", {g.uniform_tensor(to::dtype::f32, {3, 0}, -1, 1), g.uniform_tensor(to::dtype::f32, {0, 4}, -1, 1)}, {}});
    // A NaN and an infinity: 0 * inf must stay NaN, as the formula says.
    auto a = g.uniform_tensor(to::dtype::f32, {2, 2}, -1, 1);
    a.values<float>()[0] = std::numeric_limits<float>::infinity();
    auto b = to::tensor::zeros(to::dtype::f32, {2, 2});
    unchanged({"MatMul", {a, b}, {}});
    unchanged({"Gemm", {a, b}, {}});
    auto xc = g.uniform_tensor(to::dtype::f64, {1, 1, 3}, -1, 1);
    xc.values<double>()[1] = std::numeric_limits<double>::quiet_NaN();
    unchanged({"Conv", {xc, to::tensor::zeros(to::dtype::f64, {1, 1, 2})}, {}});
    // The last element of the second operand, too (the finite check has no early exit to get wrong).
    auto tail = g.uniform_tensor(to::dtype::f32, {2, 37}, -1, 1);
    tail.values<float>()[tail.size() - 1] = -std::numeric_limits<float>::infinity();
    unchanged({"MatMul", {g.uniform_tensor(to::dtype::f32, {3, 2}, -1, 1), tail}, {}});
    // alpha = 0: a BLAS may skip the product.
    unchanged({"Gemm", {g.uniform_tensor(to::dtype::f32, {2, 3}, -1, 1), g.uniform_tensor(to::dtype::f32, {3, 2}, -1, 1)},
               {{"alpha", 0.0f}}});
    // float16 and integers have no GEMM in the table.
    unchanged({"MatMul", {g.uniform_tensor(to::dtype::f16, {3, 4}, -1, 1), g.uniform_tensor(to::dtype::f16, {4, 2}, -1, 1)}, {}});
    unchanged({"MatMul", {g.uniform_tensor(to::dtype::i32, {3, 4}, -3, 3), g.uniform_tensor(to::dtype::i32, {4, 2}, -3, 3)}, {}});
}

TEST_CASE("fast paths: the finite check sees every non-finite value, wherever it is") {
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{1001}}) {
        CAPTURE(n);
        std::vector<float> f(n, 1.5f);
        std::vector<double> d(n, -2.5);
        if (n > 2) {
            f[1] = std::numeric_limits<float>::max();
            f[2] = std::numeric_limits<float>::denorm_min();
            d[1] = -std::numeric_limits<double>::max();
            d[2] = -0.0;
        }
        CHECK(to::ops::nn::all_finite<float>(f));
        CHECK(to::ops::nn::all_finite<double>(d));
        for (std::size_t at : {std::size_t{0}, n / 2, n == 0 ? 0 : n - 1}) {
            if (n == 0) break;
            for (const double bad : {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                                     std::numeric_limits<double>::quiet_NaN()}) {
                auto f2 = f;
                auto d2 = d;
                f2[at] = static_cast<float>(bad);
                d2[at] = bad;
                CHECK_FALSE(to::ops::nn::all_finite<float>(f2));
                CHECK_FALSE(to::ops::nn::all_finite<double>(d2));
            }
        }
    }
}

TEST_CASE("fast paths: MatMul's fast path called without evaluate() still rejects mismatched contraction dims") {
    const to::ops::naive_kernels_only restore;
    use_plain_gemm();
    to::rng g(6);
    const auto x = g.uniform_tensor(to::dtype::f32, {2, 3}, -1, 1), w = g.uniform_tensor(to::dtype::f32, {4, 5}, -1, 1);
    CHECK_THROWS_WITH_AS((void)to::ops::MatMul::fast<float>(x, w), doctest::Contains("MatMul"), to::shape_error);
    // 1-D operands: (K) x (K, N) and (M, K) x (K).
    const auto v = g.uniform_tensor(to::dtype::f32, {3}, -1, 1), m = g.uniform_tensor(to::dtype::f32, {3, 5}, -1, 1);
    const auto y = to::ops::MatMul::fast<float>(v, m);
    REQUIRE(y.has_value());
    CHECK(y->shape() == to::shape_type{5});
    CHECK(to::ops::MatMul::fast<float>(x, v)->shape() == to::shape_type{2});
    const auto batched = to::ops::MatMul::fast<float>(g.uniform_tensor(to::dtype::f32, {4, 1, 2, 3}, -1, 1),
                                                      g.uniform_tensor(to::dtype::f32, {3, 3, 5}, -1, 1));
    CHECK(batched->shape() == to::shape_type{4, 3, 2, 5});
}

TEST_CASE("fast paths: the interpreter uses the table, and a shape error still names the op") {
    const to::ops::naive_kernels_only restore;
    use_plain_gemm();
    namespace tg = to::graph;
    tg::graph gr;
    gr.name = "mm";
    gr.inputs = {{"x", to::dtype::f32, to::shape_type{2, 3}}};
    to::rng g(5);
    gr.initializers.emplace("w", g.uniform_tensor(to::dtype::f32, {3, 4}, -1, 1));
    gr.nodes = {{"MatMul", {"x", "w"}, {"y"}, {}, "mm", ""}};
    gr.outputs = {{"y", to::dtype::f32, std::nullopt}};
    const std::size_t before = gemm_calls;
    const auto r = tg::run(gr, {{"x", g.uniform_tensor(to::dtype::f32, {2, 3}, -1, 1)}});
    CHECK(gemm_calls == before + 1);
    CHECK(r.outputs.at("y").shape() == to::shape_type{2, 4});
    const auto x = g.uniform_tensor(to::dtype::f32, {2, 3}, -1, 1), w = g.uniform_tensor(to::dtype::f32, {4, 4}, -1, 1);
    CHECK_THROWS_WITH_AS((void)to::spec::evaluate(to::ops::get_op("MatMul"), {&x, &w}, {}), doctest::Contains("MatMul"),
                         to::error);
}

#ifdef TENSORACLE_TEST_WITH_BLAS
TEST_CASE("fast paths: OpenBLAS through <tensoracle/blas.hpp> agrees with the naive kernels") {
    const to::ops::naive_kernels_only restore;
    to::use_blas_fast_paths();
    CHECK((to::ops::fast_paths().sgemm != nullptr));
    property_sweep(false, 40);
}
#endif

}  // namespace ops_fast_paths_test
