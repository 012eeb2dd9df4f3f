// Tests of the neural-network op family (ops/nn.hpp): known answers (hand
// computed, and the ONNX 1.12 node test data for these ops as literals at the
// end of this file), properties against naive formulas, and every error path.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include <tensoracle/ops/nn.hpp>
#include <tensoracle/ops/registry.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ops_nn_test {

namespace to = tensoracle;
namespace ops = tensoracle::ops;
using to::array;
using to::dtype;
using to::shape_type;
using to::tensor;

namespace {

tensor f32(const shape_type& s, std::initializer_list<double> v) {
    auto a = array<float>::from_shape(s);
    REQUIRE(v.size() == a.size());
    std::size_t i = 0;
    for (const double x : v) a.data()[i++] = static_cast<float>(x);
    return tensor(a);
}
tensor f64(const shape_type& s, std::initializer_list<double> v) {
    auto a = array<double>::from_shape(s);
    REQUIRE(v.size() == a.size());
    std::copy(v.begin(), v.end(), a.data());
    return tensor(a);
}
tensor i64(const shape_type& s, std::initializer_list<std::int64_t> v) {
    auto a = array<std::int64_t>::from_shape(s);
    REQUIRE(v.size() == a.size());
    std::copy(v.begin(), v.end(), a.data());
    return tensor(a);
}
tensor i32(const shape_type& s, std::initializer_list<std::int32_t> v) {
    auto a = array<std::int32_t>::from_shape(s);
    REQUIRE(v.size() == a.size());
    std::copy(v.begin(), v.end(), a.data());
    return tensor(a);
}
tensor u8(const shape_type& s, std::initializer_list<int> v) {
    auto a = array<std::uint8_t>::from_shape(s);
    REQUIRE(v.size() == a.size());
    std::size_t i = 0;
    for (const int x : v) a.data()[i++] = static_cast<std::uint8_t>(x);
    return tensor(a);
}

std::vector<const tensor*> ptrs(const std::vector<std::optional<tensor>>& in) {
    std::vector<const tensor*> p;
    for (const auto& t : in) p.push_back(t ? &*t : nullptr);
    return p;
}

/// Runs an op through the registry with every check of spec::evaluate.
std::vector<tensor> eval(std::string_view op, const std::vector<std::optional<tensor>>& in,
                         const to::spec::attribute_map& attrs = {}) {
    return to::spec::evaluate(ops::get_op(op), ptrs(in), attrs);
}

/// Same dtype and shape, values within atol + rtol * |expected| (exact for integers).
void check_close(const tensor& got, const tensor& want, double rtol = 1e-5, double atol = 1e-5) {
    REQUIRE(got.element_dtype() == want.element_dtype());
    REQUIRE(got.shape() == want.shape());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double g = got.value_as_double(i), w = want.value_as_double(i);
        CAPTURE(i);
        CAPTURE(g);
        CAPTURE(w);
        if (to::info(want.element_dtype()).is_floating) {
            CHECK(std::fabs(g - w) <= atol + rtol * std::fabs(w));
        } else {
            CHECK(g == w);
        }
    }
}

struct onnx_case {
    const char* name;
    const char* op;
    std::vector<std::optional<tensor>> inputs;
    to::spec::attribute_map attrs;
    std::vector<tensor> outputs;
};
std::vector<onnx_case> onnx_cases();

array<double> random_array(to::rng& g, const shape_type& s) { return g.uniform_array<double>(s, -2.0, 2.0); }

}  // namespace

// ---------------------------------------------------------------------------
// Known answers
// ---------------------------------------------------------------------------

TEST_CASE("nn: ONNX 1.12 node test data") {
    for (const auto& c : onnx_cases()) {
        CAPTURE(c.name);
        std::vector<tensor> out;
        REQUIRE_NOTHROW(out = eval(c.op, c.inputs, c.attrs));
        // MaxPool also yields Indices; the data may hold only Y.
        REQUIRE(out.size() >= c.outputs.size());
        for (std::size_t o = 0; o < c.outputs.size(); ++o) check_close(out[o], c.outputs[o], 1e-4, 1e-5);
    }
}

TEST_CASE("nn: MatMul known answers, 1-D operands and batch broadcasting") {
    const auto a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    const auto b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
    check_close(eval("MatMul", {a, b})[0], f32({2, 2}, {58, 64, 139, 154}));
    // 1-D x 2-D: (3) x (3, 2) -> (2); 2-D x 1-D: (2, 3) x (3) -> (2); 1-D x 1-D -> scalar.
    const auto v = f32({3}, {1, 0, -1});
    check_close(eval("MatMul", {v, b})[0], f32({2}, {-4, -4}));
    check_close(eval("MatMul", {a, v})[0], f32({2}, {-2, -2}));
    check_close(eval("MatMul", {v, v})[0], f32({}, {2}));
    // Batch (2, 1, 1, 2) x (3, 2, 1) -> (2, 3, 1, 1).
    const auto ba = f32({2, 1, 1, 2}, {1, 2, 3, 4});
    const auto bb = f32({3, 2, 1}, {1, 1, 0, 1, 1, 0});
    check_close(eval("MatMul", {ba, bb})[0], f32({2, 3, 1, 1}, {3, 2, 1, 7, 4, 3}));
    // Integers wrap.
    const auto big = i32({1, 2}, {2147483647, 1});
    const auto two = i32({2, 1}, {2, 0});
    check_close(eval("MatMul", {big, two})[0], i32({1, 1}, {-2}));
}

TEST_CASE("nn: Gemm known answers") {
    const auto a = f32({2, 2}, {1, 2, 3, 4});
    const auto b = f32({2, 2}, {5, 6, 7, 8});
    check_close(eval("Gemm", {a, b})[0], f32({2, 2}, {19, 22, 43, 50}));
    // transA, transB, alpha, beta, C as a row vector.
    const auto c = f32({2}, {1, -1});
    const auto y = eval("Gemm", {a, b, c},
                        {{"transA", std::int64_t{1}}, {"transB", std::int64_t{1}}, {"alpha", 0.5}, {"beta", 2.0}})[0];
    // A^T B^T = [[1,3],[2,4]] x [[5,7],[6,8]] = [[23, 31], [34, 46]].
    check_close(y, f32({2, 2}, {0.5 * 23 + 2, 0.5 * 31 - 2, 0.5 * 34 + 2, 0.5 * 46 - 2}));
    check_close(eval("Gemm", {i64({1, 1}, {3}), i64({1, 1}, {4}), i64({1, 1}, {5})})[0], i64({1, 1}, {17}));
}

TEST_CASE("nn: Conv known answers: bias, group, dilations, 1-D and 3-D") {
    // 1-D: x = [1 2 3 4], w = [1 -1], bias 10, dilation 2: y[i] = x[i] - x[i+2] + 10.
    const auto x = f32({1, 1, 4}, {1, 2, 3, 4});
    check_close(eval("Conv", {x, f32({1, 1, 2}, {1, -1}), f32({1}, {10})}, {{"dilations", std::vector<std::int64_t>{2}}})[0],
                f32({1, 1, 2}, {8, 8}));
    // group = 2: each output channel sees only its input channel.
    const auto x2 = f32({1, 2, 2}, {1, 2, 10, 20});
    check_close(eval("Conv", {x2, f32({2, 1, 1}, {3, -1})}, {{"group", std::int64_t{2}}})[0],
                f32({1, 2, 2}, {3, 6, -10, -20}));
    // 3-D 2x2x2 box sum of ones with SAME_UPPER: the last plane/row/column sees padding.
    const auto x3 = f32({1, 1, 2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1});
    const auto w3 = f32({1, 1, 2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1});
    check_close(eval("Conv", {x3, w3}, {{"auto_pad", std::string("SAME_UPPER")}})[0],
                f32({1, 1, 2, 2, 2}, {8, 4, 4, 2, 4, 2, 2, 1}));
    check_close(eval("Conv", {x3, w3}, {{"auto_pad", std::string("SAME_LOWER")}})[0],
                f32({1, 1, 2, 2, 2}, {1, 2, 2, 4, 2, 4, 4, 8}));
    check_close(eval("Conv", {x3, w3}, {{"auto_pad", std::string("VALID")}})[0], f32({1, 1, 1, 1, 1}, {8}));
}

TEST_CASE("nn: pools, LRN, Resize and Upsample hand-computed") {
    const auto x = f32({1, 1, 4}, {1, 5, 2, 4});
    auto mp = eval("MaxPool", {x}, {{"kernel_shape", std::vector<std::int64_t>{2}}, {"strides", std::vector<std::int64_t>{2}}});
    check_close(mp[0], f32({1, 1, 2}, {5, 4}));
    check_close(mp[1], i64({1, 1, 2}, {1, 3}));
    // ceil_mode: 3 windows (the last one is half outside); pads 1 with include/exclude counts.
    check_close(eval("AveragePool", {x}, {{"kernel_shape", std::vector<std::int64_t>{2}},
                                          {"strides", std::vector<std::int64_t>{2}},
                                          {"pads", std::vector<std::int64_t>{1, 1}}})[0],
                f32({1, 1, 3}, {1, 3.5, 4}));
    check_close(eval("AveragePool", {x}, {{"kernel_shape", std::vector<std::int64_t>{2}},
                                          {"strides", std::vector<std::int64_t>{2}},
                                          {"pads", std::vector<std::int64_t>{1, 1}},
                                          {"count_include_pad", std::int64_t{1}}})[0],
                f32({1, 1, 3}, {0.5, 3.5, 2}));
    check_close(eval("AveragePool", {f32({1, 1, 3}, {1, 2, 3})}, {{"kernel_shape", std::vector<std::int64_t>{2}},
                                                                  {"strides", std::vector<std::int64_t>{2}},
                                                                  {"ceil_mode", std::int64_t{1}}})[0],
                f32({1, 1, 2}, {1.5, 3}));
    // MaxPool NaN propagates; f64 GlobalMaxPool / GlobalAveragePool.
    const auto nan = std::nan("");
    const auto xn = f64({1, 1, 3}, {1, nan, 3});
    CHECK(std::isnan(eval("GlobalMaxPool", {xn})[0].value_as_double(0)));
    CHECK(std::isnan(eval("MaxPool", {xn}, {{"kernel_shape", std::vector<std::int64_t>{3}}})[0].value_as_double(0)));
    check_close(eval("GlobalAveragePool", {f64({1, 2, 2}, {1, 2, 3, 5})})[0], f64({1, 2, 1}, {1.5, 4}));
    // LRN size 1: y = x / (1 + 1e-4 * x^2)^0.75.
    const auto l = eval("LRN", {f64({1, 1, 1}, {2.0})}, {{"size", std::int64_t{1}}})[0];
    check_close(l, f64({1, 1, 1}, {2.0 / std::pow(1.0 + static_cast<double>(1e-4f) * 4.0, 0.75)}), 1e-12, 1e-12);
    // Resize linear half_pixel 1-D upsample x2 of [0 4]: [0 1 3 4]; nearest asymmetric: [0 0 4 4].
    const auto r = f32({2}, {0, 4});
    const auto sc = f32({1}, {2});
    check_close(eval("Resize", {r, std::nullopt, sc}, {{"mode", std::string("linear")}})[0], f32({4}, {0, 1, 3, 4}));
    check_close(eval("Resize", {r, std::nullopt, sc}, {{"coordinate_transformation_mode", std::string("asymmetric")}})[0],
                f32({4}, {0, 0, 4, 4}));
    check_close(eval("Resize", {r, std::nullopt, std::nullopt, i64({1}, {3})},
                     {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}})[0],
                f32({3}, {0, 2, 4}));
    check_close(eval("Upsample", {r, sc}, {{"mode", std::string("linear")}})[0], f32({4}, {0, 2, 4, 4}));
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

TEST_CASE("nn: Conv with a 1x1 identity kernel returns its input") {
    to::rng g(11);
    for (int rep = 0; rep < 5; ++rep) {
        const auto c = static_cast<std::size_t>(g.integer(1, 4));
        const auto x = random_array(g, {2, c, 3, 4});
        auto w = array<double>::from_shape({c, c, 1, 1});
        for (std::size_t i = 0; i < c; ++i) {
            for (std::size_t j = 0; j < c; ++j) w(i, j, 0, 0) = i == j ? 1.0 : 0.0;
        }
        const auto y = ops::Conv::compute<double>(x, w, std::nullopt);
        CHECK(tensor(y).identical(tensor(x)));
    }
}

TEST_CASE("nn: MatMul equals a naive triple loop on random shapes") {
    to::rng g(2026);
    for (int rep = 0; rep < 20; ++rep) {
        const auto B = static_cast<std::size_t>(g.integer(1, 3)), M = static_cast<std::size_t>(g.integer(1, 5)),
                   K = static_cast<std::size_t>(g.integer(0, 5)), N = static_cast<std::size_t>(g.integer(1, 5));
        const auto a = random_array(g, {B, M, K});
        const auto b = random_array(g, {K, N});  // broadcast over the batch
        const auto y = ops::MatMul::compute<double>(a, b);
        REQUIRE(y.shape() == (std::vector<std::size_t>{B, M, N}));
        for (std::size_t bi = 0; bi < B; ++bi) {
            for (std::size_t i = 0; i < M; ++i) {
                for (std::size_t j = 0; j < N; ++j) {
                    double s = 0;
                    for (std::size_t k = 0; k < K; ++k) s += a(bi, i, k) * b(k, j);
                    CHECK(y(bi, i, j) == doctest::Approx(s).epsilon(1e-12));
                }
            }
        }
    }
}

TEST_CASE("nn: Conv with group == C equals per-channel convolution") {
    to::rng g(7);
    for (int rep = 0; rep < 5; ++rep) {
        const auto C = static_cast<std::size_t>(g.integer(2, 4));
        const auto x = random_array(g, {1, C, 5, 4});
        const auto w = random_array(g, {C, 1, 3, 2});
        ops::conv_attr at;
        at.group = static_cast<std::int64_t>(C);
        at.pads = {1, 0, 1, 1};
        at.strides = {2, 1};
        const auto y = ops::Conv::compute<double>(x, w, std::nullopt, at);
        for (std::size_t c = 0; c < C; ++c) {
            array<double> xc = xt::view(x, xt::range(0, 1), xt::range(c, c + 1));
            array<double> wc = xt::view(w, xt::range(c, c + 1));
            ops::conv_attr one = at;
            one.group = 1;
            const auto yc = ops::Conv::compute<double>(xc, wc, std::nullopt, one);
            array<double> ys = xt::view(y, xt::range(0, 1), xt::range(c, c + 1));
            CHECK(tensor(ys).identical(tensor(yc)));
        }
    }
}

TEST_CASE("nn: ConvTranspose is the adjoint of Conv: <conv(x), y> == <x, convT(y)>") {
    to::rng g(5);
    for (int rep = 0; rep < 6; ++rep) {
        ops::conv_attr ca;
        ca.strides = {g.integer(1, 2), g.integer(1, 2)};
        ca.dilations = {g.integer(1, 2), g.integer(1, 2)};
        ca.pads = {g.integer(0, 1), g.integer(0, 1), g.integer(0, 1), g.integer(0, 1)};
        const auto x = random_array(g, {1, 2, 6, 5});
        const auto w = random_array(g, {3, 2, 2, 3});
        const auto y = ops::Conv::compute<double>(x, w, std::nullopt, ca);
        const auto r = random_array(g, shape_type(y.shape().begin(), y.shape().end()));
        ops::conv_transpose_attr ta;
        ta.strides = ca.strides;
        ta.dilations = ca.dilations;
        ta.pads = ca.pads;
        // full size s*(o-1) + d*(k-1) + 1 - pads may be smaller than x: add output_padding for the rest.
        for (std::size_t i = 0; i < 2; ++i) {
            const auto o = static_cast<std::int64_t>(y.shape()[2 + i]);
            const std::int64_t full = ca.strides[i] * (o - 1) + ca.dilations[i] * (static_cast<std::int64_t>(w.shape()[2 + i]) - 1) + 1 -
                                      ca.pads[i] - ca.pads[2 + i];
            ta.output_padding.push_back(static_cast<std::int64_t>(x.shape()[2 + i]) - full);
        }
        const auto xt_ = ops::ConvTranspose::compute<double>(r, w, std::nullopt, ta);
        REQUIRE(xt_.shape() == x.shape());
        double lhs = 0, rhs = 0;
        for (std::size_t i = 0; i < y.size(); ++i) lhs += y.data()[i] * r.data()[i];
        for (std::size_t i = 0; i < x.size(); ++i) rhs += x.data()[i] * xt_.data()[i];
        CHECK(lhs == doctest::Approx(rhs).epsilon(1e-10));
    }
}

namespace {

/// The ONNX pooling formula one tap at a time, every bound tested per tap:
/// the reference the kernels' in-bounds boxes (nn::window_taps) are held to.
/// Output shape and pad_end come from the kernel's own output (shape
/// inference is the node tests' and the generator's to check).
struct direct_pool_result {
    std::vector<double> y;
    std::vector<std::int64_t> indices;
};
direct_pool_result direct_pool(bool max, const array<double>& x, const shape_type& y_shape, const std::vector<std::int64_t>& ks,
                               const std::vector<std::int64_t>& st, const std::vector<std::int64_t>& dl,
                               const std::vector<std::int64_t>& pads, bool include_pad, bool column_major) {
    const std::size_t n = ks.size();
    std::vector<std::int64_t> xs(n), os(n);
    for (std::size_t i = 0; i < n; ++i) {
        xs[i] = static_cast<std::int64_t>(x.shape()[i + 2]);
        os[i] = static_cast<std::int64_t>(y_shape[i + 2]);
    }
    std::int64_t plane = 1, outs = 1, taps = 1;
    for (std::size_t i = 0; i < n; ++i) {
        plane *= xs[i];
        outs *= os[i];
        taps *= ks[i];
    }
    const auto planes = static_cast<std::int64_t>(x.shape()[0] * x.shape()[1]);
    direct_pool_result r;
    for (std::int64_t pl = 0; pl < planes; ++pl) {
        for (std::int64_t fo = 0; fo < outs; ++fo) {
            std::vector<std::int64_t> o(n);
            for (std::size_t i = n, rest = static_cast<std::size_t>(fo); i-- > 0;) {
                o[i] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(os[i]));
                rest /= static_cast<std::size_t>(os[i]);
            }
            double sum = 0.0, best = 0.0;
            std::int64_t inside = 0, counted = 0, best_index = -1;
            for (std::int64_t t = 0; t < taps; ++t) {  // row-major over the kernel
                std::vector<std::int64_t> k(n);
                for (std::size_t i = n, rest = static_cast<std::size_t>(t); i-- > 0;) {
                    k[i] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(ks[i]));
                    rest /= static_cast<std::size_t>(ks[i]);
                }
                bool in_x = true, before_end = true;
                std::int64_t row = 0, col = 0, step = 1;
                for (std::size_t i = 0; i < n; ++i) {
                    const std::int64_t p = st[i] * o[i] + dl[i] * k[i] - pads[i];
                    in_x = in_x && p >= 0 && p < xs[i];
                    before_end = before_end && p < xs[i] + pads[n + i];
                    row = row * xs[i] + p;
                    col += p * step;
                    step *= xs[i];
                }
                counted += before_end ? 1 : 0;
                if (!in_x) continue;
                ++inside;
                const double v = x.data()[static_cast<std::size_t>(pl * plane + row)];
                sum += v;
                // The first maximum in kernel order; a NaN, once taken, stays.
                if (best_index < 0 || (!std::isnan(best) && (v > best || std::isnan(v)))) {
                    best = v;
                    best_index = pl * plane + (column_major ? col : row);
                }
            }
            if (max) {
                r.y.push_back(best);
                r.indices.push_back(best_index);
            } else {
                r.y.push_back(sum / static_cast<double>(include_pad ? counted : inside));
            }
        }
    }
    return r;
}

}  // namespace

TEST_CASE("nn: MaxPool and AveragePool equal the per-tap formula on random geometries") {
    to::rng g(4242);
    int compared = 0;
    for (int trial = 0; trial < 400; ++trial) {
        const bool max = trial % 2 == 0;
        const std::size_t n = static_cast<std::size_t>(g.integer(1, 3));
        shape_type xs{static_cast<std::size_t>(g.integer(1, 2)), static_cast<std::size_t>(g.integer(1, 3))};
        std::vector<std::int64_t> ks(n), st(n), dl(n, 1), pads(2 * n);
        for (std::size_t i = 0; i < n; ++i) {
            ks[i] = g.integer(1, 4);
            st[i] = g.integer(1, 3);
            if (max) dl[i] = g.integer(1, 3);
            xs.push_back(static_cast<std::size_t>(g.integer(1, 9)));
        }
        // Pads below the kernel, as ONNX requires; often none, often asymmetric.
        for (std::size_t i = 0; i < 2 * n; ++i) pads[i] = g.bernoulli(0.3) ? 0 : g.integer(0, ks[i % n] - 1);
        const bool ceil = g.bernoulli(0.4), include_pad = g.bernoulli(0.5), column_major = g.bernoulli(0.3);
        // Small integers make ties (the first maximum wins); a few NaNs.
        auto x = g.uniform_array<double>(xs, -3.0, 3.0);
        for (auto& v : x) v = g.bernoulli(0.03) ? std::nan("") : std::round(v);
        to::spec::attribute_map a{{"kernel_shape", ks}, {"strides", st}, {"pads", pads}, {"ceil_mode", std::int64_t{ceil}}};
        if (max) {
            a["dilations"] = dl;
            a["storage_order"] = std::int64_t{column_major};
        } else {
            a["count_include_pad"] = std::int64_t{include_pad};
        }
        std::vector<tensor> out;
        try {
            out = eval(max ? "MaxPool" : "AveragePool", {tensor(x)}, a);
        } catch (const to::error&) {
            continue;  // a geometry the spec refuses (empty output, a window only in padding)
        }
        ++compared;
        CAPTURE(trial);
        const shape_type ys(out[0].shape().begin(), out[0].shape().end());
        const auto want = direct_pool(max, x, ys, ks, st, dl, pads, include_pad, column_major);
        REQUIRE(out[0].size() == want.y.size());
        for (std::size_t f = 0; f < want.y.size(); ++f) {
            const double got = out[0].value_as_double(f);
            CAPTURE(f);
            // The same taps in the same order: equal, NaN where the formula gives NaN.
            CHECK((std::isnan(want.y[f]) ? std::isnan(got) : got == want.y[f]));
            if (max) CHECK(out[1].value_as_double(f) == static_cast<double>(want.indices[f]));
        }
    }
    CHECK(compared >= 250);  // most geometries are valid: the comparison is not skipped
}

TEST_CASE("nn: the work the input search charges Conv, ConvTranspose and the pools is the taps their kernels visit") {
    // hints().visits: the products for_each_tap makes (counted here from the
    // kernel's own loop) plus one bounds test per outer kernel position of each
    // window; for a pool, the taps window_taps visits plus one step per window.
    to::rng g(77);
    int compared = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const bool transpose = trial % 3 == 1, pool = trial % 3 == 2;
        const std::size_t n = static_cast<std::size_t>(g.integer(1, 3));
        const std::int64_t group = pool ? 1 : g.integer(1, 2);
        const auto N = static_cast<std::size_t>(g.integer(1, 2));
        const auto C = static_cast<std::size_t>(group * g.integer(1, 2)), M = static_cast<std::size_t>(group * g.integer(1, 2));
        shape_type xs{N, C}, ws{transpose ? C : M, static_cast<std::size_t>(transpose ? M / static_cast<std::size_t>(group) : C / static_cast<std::size_t>(group))};
        std::vector<std::int64_t> ks(n), st(n), dl(n), pads(2 * n);
        for (std::size_t i = 0; i < n; ++i) {
            ks[i] = g.integer(1, 4);
            st[i] = g.integer(1, 3);
            dl[i] = pool ? 1 : g.integer(1, 2);
            xs.push_back(static_cast<std::size_t>(g.integer(1, 9)));
            ws.push_back(static_cast<std::size_t>(ks[i]));
        }
        // Pools need pads below the kernel; Conv's may reach past it (windows wholly in the padding).
        for (std::size_t i = 0; i < 2 * n; ++i) pads[i] = pool ? g.integer(0, ks[i % n] - 1) : g.integer(0, 6);
        const std::string op = pool ? "AveragePool" : transpose ? "ConvTranspose" : "Conv";
        to::spec::attribute_map a{{"kernel_shape", ks}, {"strides", st}, {"pads", pads}};
        if (!pool) {
            a["dilations"] = dl;
            a["group"] = group;
        }
        double counted = 0.0;
        try {
            if (pool) {
                const ops::nn::pool_windows win(op, xs, ks, st, {}, pads, "NOTSET", 0);
                win.for_each([&](std::size_t, std::int64_t, std::span<const std::int64_t> o, ops::nn::window_taps& taps) {
                    counted += 1.0;  // the window's step
                    taps.visit(o, [&](std::int64_t, std::int64_t) { counted += 1.0; });
                });
            } else {
                const auto at_c = to::spec::parse_attributes<ops::Conv::attributes>(a, "Conv");
                const auto at_t = to::spec::parse_attributes<ops::ConvTranspose::attributes>(a, "ConvTranspose");
                const auto p = transpose ? ops::ConvTranspose::plan(xs, ws, nullptr, at_t) : ops::Conv::plan(xs, ws, nullptr, at_c);
                auto count = [&](auto, auto, auto) { counted += 1.0; };
                if (transpose) {
                    ops::ConvTranspose::for_each_tap(p, count);
                } else {
                    ops::Conv::for_each_tap(p, count);
                }
                // The bounds tests: one per outer kernel position, window and channel pair.
                double outer = 1.0, windows = 1.0;
                for (std::size_t i = 0; i < n; ++i) {
                    if (i + 1 < n) outer *= static_cast<double>(p.ks[i]);
                    windows *= static_cast<double>(transpose ? p.xs[i] : p.os[i]);
                }
                counted += static_cast<double>(N * (transpose ? C * (M / static_cast<std::size_t>(group)) : M * (C / static_cast<std::size_t>(group)))) * windows * outer;
            }
        } catch (const to::error&) {
            continue;  // a geometry the spec refuses (an empty output, a window only in padding)
        }
        const tensor x = tensor::zeros(to::dtype::f32, xs), w = tensor::zeros(to::dtype::f32, ws);
        std::vector<const tensor*> in{&x};
        if (!pool) in.push_back(&w);
        const to::spec::context ctx(op, in, a);
        const auto hints = ops::get_op(op).hints();
        REQUIRE(hints.visited_work);
        CAPTURE(trial);
        CHECK(hints.visited_work(ctx) == counted);
        ++compared;
    }
    CHECK(compared >= 200);
    // A window mostly in the padding (a generated case the search had given up on
    // after three evaluations): the kernel visits under a five-hundredth of what its windows span.
    const tensor x = tensor::zeros(to::dtype::f64, {32, 43, 2, 8, 2});
    const to::spec::attribute_map a{{"kernel_shape", std::vector<std::int64_t>{32, 6, 48}},
                                    {"pads", std::vector<std::int64_t>{12, 3, 24, 21, 2, 47}},
                                    {"strides", std::vector<std::int64_t>{58, 12, 64}}};
    const std::vector<const tensor*> in{&x};
    const to::spec::context ctx("AveragePool", in, a);
    const double visited = ops::get_op("AveragePool").hints().visited_work(ctx);
    const double window_size = 32.0 * 43.0 * 32.0 * 6.0 * 48.0;  // outputs times kernel taps (the work estimate)
    CHECK(visited == 32.0 * 43.0 * (2.0 * 3.0 * 2.0 + 1.0));
    CHECK(visited < window_size / 500.0);
}

TEST_CASE("nn: GlobalAveragePool equals AveragePool over the whole plane, and Gemm equals MatMul plus C") {
    to::rng g(3);
    const auto x = random_array(g, {2, 3, 4, 5});
    ops::average_pool_attr at;
    at.kernel_shape = {4, 5};
    const auto a = ops::AveragePool::compute<double>(x, at);
    const auto b = ops::GlobalAveragePool::compute<double>(x);
    CHECK(a.shape() == b.shape());
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a.data()[i] == doctest::Approx(b.data()[i]).epsilon(1e-12));
    const auto m = random_array(g, {3, 4}), n = random_array(g, {4, 2}), c = random_array(g, {2});
    const auto gm = ops::Gemm::compute<double>(m, n, std::optional<array<double>>(c));
    const auto mm = ops::MatMul::compute<double>(m, n);
    for (std::size_t i = 0; i < 3; ++i) {
        for (std::size_t j = 0; j < 2; ++j) CHECK(gm(i, j) == doctest::Approx(mm(i, j) + c(j)).epsilon(1e-12));
    }
}

TEST_CASE("nn: symbolic output shapes mention the formula's symbols") {
    const auto x = tensor(to::array<float>(xt::ones<float>({1, 1, 5, 5})));
    const auto w = f32({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
    const auto& op = ops::get_op("Conv");
    const to::spec::context c(op.op_type, {&x, &w}, op.normalize_attributes({{"pads", std::vector<std::int64_t>{1, 0, 1, 0}}}));
    const auto shapes = op.output_shapes(c);
    REQUIRE(shapes.size() == 1);
    const auto h = shapes[0][2].symbols();
    CHECK(std::find(h.begin(), h.end(), "in0.shape[2]") != h.end());
    CHECK(std::find(h.begin(), h.end(), "attr.pads[0]") != h.end());
    CHECK(std::find(h.begin(), h.end(), "attr.strides[0]") == h.end());  // absent: the default 1 is a constant
    CHECK(c.eval(shapes[0][2]) == 5);
    CHECK(c.eval(shapes[0][3]) == 3);
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

TEST_CASE("nn: Conv constraint violations through spec::evaluate") {
    auto X = tensor(to::array<float>(xt::ones<float>({1, 2, 4, 4})));
    auto W = tensor(to::array<float>(xt::ones<float>({2, 2, 3, 3})));
    auto W1 = tensor(to::array<float>(xt::ones<float>({2, 1, 3, 3})));
    auto W3 = tensor(to::array<float>(xt::ones<float>({3, 1, 3, 3})));
    auto Wr = tensor(to::array<float>(xt::ones<float>({2, 2, 3})));
    auto B3 = tensor(to::array<float>(xt::ones<float>({3})));
    const auto& conv = ops::get_op("Conv");
    using ints = std::vector<std::int64_t>;
    auto bad = [&](std::vector<const tensor*> in, const to::spec::attribute_map& attrs, const char* what) {
        CAPTURE(what);
        CHECK_THROWS_WITH_AS((void)to::spec::evaluate(conv, in, attrs), doctest::Contains(what), to::error);
    };
    bad({&X, &Wr}, {}, "W has the rank of X");
    bad({&X, &W1}, {}, "X channels C equal W.shape[1] * group");
    bad({&X, &W3}, {{"group", std::int64_t{2}}}, "multiple of group");
    bad({&X, &W}, {{"group", std::int64_t{0}}}, "group >= 1");
    bad({&X, &W, &B3}, {}, "B has one value per output channel");
    bad({&X, &W}, {{"kernel_shape", ints{3}}}, "kernel_shape has one value per spatial axis");
    bad({&X, &W}, {{"kernel_shape", ints{3, 2}}}, "kernel_shape equals W's spatial dims (spatial axis 1)");
    bad({&X, &W}, {{"pads", ints{0, 0}}}, "pads has a begin and an end value per spatial axis");
    bad({&X, &W}, {{"strides", ints{1}}}, "strides has one value per spatial axis");
    bad({&X, &W}, {{"dilations", ints{1, 1, 1}}}, "dilations has one value per spatial axis");
    bad({&X, &W}, {{"strides", ints{1, 0}}}, "strides >= 1 (spatial axis 1)");
    bad({&X, &W}, {{"dilations", ints{0, 1}}}, "dilations >= 1 (spatial axis 0)");
    bad({&X, &W}, {{"pads", ints{0, -1, 0, 0}}}, "pads >= 0 (spatial axis 1)");
    bad({&X, &W}, {{"dilations", ints{1, 2}}}, "the dilated kernel fits the padded input (spatial axis 1)");
    bad({&X, &W}, {{"auto_pad", std::string("VALID")}, {"dilations", ints{2, 1}}}, "the dilated kernel fits");
    bad({&X, &W}, {{"auto_pad", std::string("SAME_UPPER")}, {"pads", ints{1, 1, 1, 1}}}, "pads cannot be given together");
    bad({&X, &W}, {{"auto_pad", std::string("SAME")}}, "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID");
    bad({&X, &W}, {{"padz", ints{0}}}, "unknown attribute 'padz'");
    // Rank checks of the signature, and the message of a violation names the symbols' values.
    auto X2 = tensor(to::array<float>(xt::ones<float>({2, 4})));
    bad({&X2, &W}, {}, "has rank 2; allowed: 3..5");
    CHECK_THROWS_WITH_AS((void)to::spec::evaluate(conv, {&X, &W}, {{"dilations", ints{1, 2}}}),
                         doctest::Contains("in0.shape[3]=4"), to::shape_error);
    // The typed kernel checks the same constraints.
    ops::conv_attr at;
    at.strides = {1, 0};
    CHECK_THROWS_WITH_AS((void)ops::Conv::compute<float>(X.as_array<float>(), W.as_array<float>(), std::nullopt, at),
                         doctest::Contains("strides >= 1"), to::shape_error);
}

TEST_CASE("nn: error paths of the other ops") {
    using ints = std::vector<std::int64_t>;
    auto bad = [](std::string_view op, const std::vector<std::optional<tensor>>& in, const to::spec::attribute_map& attrs,
                  const char* what) {
        CAPTURE(op);
        CAPTURE(what);
        CHECK_THROWS_WITH_AS((void)eval(op, in, attrs), doctest::Contains(what), to::error);
    };
    const auto m23 = tensor(to::array<float>(xt::ones<float>({2, 3})));
    const auto m24 = tensor(to::array<float>(xt::ones<float>({2, 4})));
    const auto b23 = tensor(to::array<float>(xt::ones<float>({2, 2, 3})));
    const auto b33 = tensor(to::array<float>(xt::ones<float>({3, 3, 4})));
    // MatMul
    bad("MatMul", {m23, m24}, {}, "contraction dim");
    bad("MatMul", {b23, b33}, {}, "batch dims broadcast at output axis 0");
    bad("MatMul", {m23, tensor(to::array<float>(xt::ones<float>({3})))}, {{"x", std::int64_t{1}}}, "the op has none");
    CHECK_THROWS_WITH_AS((void)ops::MatMul::compute<float>(m23.as_array<float>(), m24.as_array<float>()),
                         doctest::Contains("MatMul"), to::shape_error);
    // Gemm
    bad("Gemm", {m23, m24}, {}, "inner dims of A' and B' agree");
    bad("Gemm", {m23, m24, m24}, {{"transA", std::int64_t{1}}}, "C broadcasts unidirectionally to (M, N) at its axis 0");
    bad("Gemm", {b23, m23}, {}, "has rank 3; allowed: 2..2");
    // ConvTranspose
    const auto x = tensor(to::array<float>(xt::ones<float>({1, 2, 3, 3})));
    const auto w = tensor(to::array<float>(xt::ones<float>({2, 1, 2, 2})));
    const auto w3 = tensor(to::array<float>(xt::ones<float>({3, 1, 2, 2})));
    bad("ConvTranspose", {x, w3}, {}, "X channels C equal W.shape[0]");
    bad("ConvTranspose", {x, w3}, {{"group", std::int64_t{2}}}, "X channels C equal W.shape[0]");
    bad("ConvTranspose", {x, w}, {{"group", std::int64_t{4}}}, "multiple of group");
    bad("ConvTranspose", {x, w}, {{"output_padding", ints{1}}}, "output_padding has one value per spatial axis");
    bad("ConvTranspose", {x, w}, {{"output_padding", ints{-1, 0}}}, "output_padding >= 0");
    // ONNX: less than the stride/dilation; strides and dilations default to 1.
    bad("ConvTranspose", {x, w}, {{"output_padding", ints{1, 0}}}, "output_padding < max(stride, dilation) (spatial axis 0)");
    bad("ConvTranspose", {x, w}, {{"output_shape", ints{4}}}, "output_shape has one value per spatial axis");
    bad("ConvTranspose", {x, w}, {{"pads", ints{3, 0, 3, 0}}}, "the output size is non-negative (spatial axis 0)");
    bad("ConvTranspose", {x, w}, {{"strides", ints{0, 1}}}, "strides >= 1");
    bad("ConvTranspose", {x, w}, {{"kernel_shape", ints{3, 2}}}, "kernel_shape equals W's spatial dims");
    bad("ConvTranspose", {x, w, tensor(to::array<float>(xt::ones<float>({2})))}, {}, "B has one value per output channel");
    bad("ConvTranspose", {x, w}, {{"auto_pad", std::string("VALID")}, {"pads", ints{0, 0, 0, 0}}}, "pads cannot be given");
    // Pools
    bad("MaxPool", {x}, {}, "required attribute 'kernel_shape' is missing");
    bad("MaxPool", {x}, {{"kernel_shape", ints{2}}}, "kernel_shape has one value per spatial axis");
    bad("MaxPool", {x}, {{"kernel_shape", ints{2, 2}}, {"pads", ints{2, 0, 0, 0}}}, "pads are smaller than the kernel");
    bad("MaxPool", {x}, {{"kernel_shape", ints{4, 2}}}, "the dilated kernel fits the padded input (spatial axis 0)");
    bad("MaxPool", {x}, {{"kernel_shape", ints{2, 2}}, {"storage_order", std::int64_t{2}}}, "storage_order is 0 or 1");
    bad("MaxPool", {x}, {{"kernel_shape", ints{2, 2}}, {"dilations", ints{0, 1}}}, "dilations >= 1");
    bad("MaxPool", {tensor(to::array<std::int32_t>(xt::ones<std::int32_t>({1, 1, 2})))}, {{"kernel_shape", ints{1}}},
        "allowed: {");
    bad("AveragePool", {x}, {{"kernel_shape", ints{2, 2}}, {"strides", ints{1, -1}}}, "strides >= 1");
    bad("AveragePool", {x}, {{"kernel_shape", ints{2, 2}}, {"dilations", ints{1, 1}}}, "unknown attribute 'dilations'");
    bad("AveragePool", {x}, {{"kernel_shape", ints{0, 2}}}, "kernel size >= 1");
    bad("GlobalAveragePool", {tensor(to::array<float>(xt::ones<float>({1, 2, 0})))}, {}, "spatial dims are non-empty");
    bad("GlobalMaxPool", {m23}, {}, "has rank 2");
    // A window over padding only (dilation larger than the input): a constraint violation.
    ops::max_pool_attr mp;
    mp.kernel_shape = {2};
    mp.dilations = {3};
    mp.pads = {1, 1};
    CHECK_THROWS_WITH_AS((void)ops::MaxPool::compute<float>(xt::ones<float>({1, 1, 2}), mp),
                         doctest::Contains("dilations are at most the input size"), to::error);
    // LRN
    bad("LRN", {x}, {}, "required attribute 'size' is missing");
    bad("LRN", {x}, {{"size", std::int64_t{0}}}, "size >= 1");
    // Resize
    const auto r = f32({1, 2}, {1, 2});
    const auto sc = f32({2}, {1, 2});
    bad("Resize", {r}, {}, "exactly one of scales and sizes is given");
    bad("Resize", {r, std::nullopt, sc, i64({2}, {1, 4})}, {}, "exactly one of scales and sizes is given");
    bad("Resize", {r, std::nullopt, f32({3}, {1, 1, 1})}, {}, "scales has one value per axis of X");
    bad("Resize", {r, std::nullopt, f32({2}, {1, -2})}, {}, "scales must be positive and finite");
    bad("Resize", {r, std::nullopt, std::nullopt, i64({1}, {4})}, {}, "sizes has one value per axis of X");
    bad("Resize", {r, std::nullopt, std::nullopt, i64({2}, {1, -4})}, {}, "sizes >= 0 (axis 1)");
    bad("Resize", {r, std::nullopt, sc}, {{"mode", std::string("bilinear")}}, "mode must be nearest, linear or cubic");
    bad("Resize", {r, std::nullopt, sc}, {{"coordinate_transformation_mode", std::string("x")}},
        "unknown coordinate_transformation_mode");
    bad("Resize", {r, std::nullopt, sc}, {{"nearest_mode", std::string("x")}}, "unknown nearest_mode");
    bad("Resize", {r, std::nullopt, sc}, {{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}},
        "tf_crop_and_resize needs roi");
    bad("Resize", {r, f32({2}, {0, 1}), sc}, {{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}},
        "roi has a start and an end per axis of X");
    bad("Resize", {r, std::nullopt, i64({2}, {1, 2})}, {}, "dtype i64");
    bad("Resize", {tensor(to::array<float>(xt::ones<float>({0, 2}))), std::nullopt, std::nullopt, i64({2}, {1, 2})}, {},
        "an empty axis resizes to 0");
    CHECK_THROWS_WITH_AS((void)ops::Resize::compute<float>(r.as_array<float>(), {}, {1.0f, 2.0f}, {1, 2}),
                         doctest::Contains("exactly one of scales and sizes"), to::shape_error);
    // Upsample
    bad("Upsample", {r, f32({2}, {1, 0.5})}, {}, "scales must be finite and >= 1");
    bad("Upsample", {r, f32({1}, {2})}, {}, "scales has one value per axis of X");
    bad("Upsample", {r, sc}, {{"mode", std::string("cubic")}}, "mode must be nearest or linear");
}

// ---------------------------------------------------------------------------
// ONNX 1.12 node test data (generated from /usr/share/libonnx-testdata/data/node/test_<op>*/test_data_set_0)
// ---------------------------------------------------------------------------

namespace {
std::vector<onnx_case> onnx_cases() {
    // clang-format off
    return {
    {"test_basic_conv_with_padding", "Conv",
     {f32({1, 1, 5, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}), f32({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {{"kernel_shape", std::vector<std::int64_t>{3, 3}}, {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}},
     {f32({1, 1, 5, 5}, {12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84})}},
    {"test_basic_conv_without_padding", "Conv",
     {f32({1, 1, 5, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}), f32({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {{"kernel_shape", std::vector<std::int64_t>{3, 3}}, {"pads", std::vector<std::int64_t>{0, 0, 0, 0}}},
     {f32({1, 1, 3, 3}, {54, 63, 72, 99, 108, 117, 144, 153, 162})}},
    {"test_conv_with_autopad_same", "Conv",
     {f32({1, 1, 5, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}), f32({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {{"auto_pad", std::string("SAME_LOWER")}, {"kernel_shape", std::vector<std::int64_t>{3, 3}}, {"strides", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 1, 3, 3}, {12, 27, 24, 63, 108, 81, 72, 117, 84})}},
    {"test_conv_with_strides_and_asymmetric_padding", "Conv",
     {f32({1, 1, 7, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34}), f32({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {{"kernel_shape", std::vector<std::int64_t>{3, 3}}, {"pads", std::vector<std::int64_t>{1, 0, 1, 0}}, {"strides", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 1, 4, 2}, {21, 33, 99, 117, 189, 207, 171, 183})}},
    {"test_conv_with_strides_no_padding", "Conv",
     {f32({1, 1, 7, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34}), f32({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {{"kernel_shape", std::vector<std::int64_t>{3, 3}}, {"pads", std::vector<std::int64_t>{0, 0, 0, 0}}, {"strides", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 1, 3, 2}, {54, 72, 144, 162, 234, 252})}},
    {"test_conv_with_strides_padding", "Conv",
     {f32({1, 1, 7, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34}), f32({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {{"kernel_shape", std::vector<std::int64_t>{3, 3}}, {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}, {"strides", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 1, 4, 3}, {12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124})}},
    {"test_convtranspose", "ConvTranspose",
     {f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8}), f32({1, 2, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {},
     {f32({1, 2, 5, 5}, {0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15, 9, 20, 33, 24, 13, 6, 13, 21, 15, 8, 0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15, 9, 20, 33, 24, 13, 6, 13, 21, 15, 8})}},
    {"test_convtranspose_1d", "ConvTranspose",
     {f32({1, 1, 3}, {0, 1, 2}), f32({1, 2, 3}, {1, 1, 1, 1, 1, 1})},
     {},
     {f32({1, 2, 5}, {0, 1, 3, 3, 2, 0, 1, 3, 3, 2})}},
    {"test_convtranspose_3d", "ConvTranspose",
     {f32({1, 1, 3, 4, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59}), f32({1, 2, 3, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {},
     {f32({1, 2, 5, 6, 7}, {0, 1, 3, 6, 9, 7, 4, 5, 12, 21, 27, 33, 24, 13, 15, 33, 54, 63, 72, 51, 27, 30, 63, 99, 108, 117, 81, 42, 25, 52, 81, 87, 93, 64, 33, 15, 31, 48, 51, 54, 37, 19, 20, 42, 66, 72, 78, 54, 28, 50, 104, 162, 174, 186, 128, 66, 90, 186, 288, 306, 324, 222, 114, 120, 246, 378, 396, 414, 282, 144, 90, 184, 282, 294, 306, 208, 106, 50, 102, 156, 162, 168, 114, 58, 60, 123, 189, 198, 207, 141, 72, 135, 276, 423, 441, 459, 312, 159, 225, 459, 702, 729, 756, 513, 261, 270, 549, 837, 864, 891, 603, 306, 195, 396, 603, 621, 639, 432, 219, 105, 213, 324, 333, 342, 231, 117, 60, 122, 186, 192, 198, 134, 68, 130, 264, 402, 414, 426, 288, 146, 210, 426, 648, 666, 684, 462, 234, 240, 486, 738, 756, 774, 522, 264, 170, 344, 522, 534, 546, 368, 186, 90, 182, 276, 282, 288, 194, 98, 40, 81, 123, 126, 129, 87, 44, 85, 172, 261, 267, 273, 184, 93, 135, 273, 414, 423, 432, 291, 147, 150, 303, 459, 468, 477, 321, 162, 105, 212, 321, 327, 333, 224, 113, 55, 111, 168, 171, 174, 117, 59, 0, 1, 3, 6, 9, 7, 4, 5, 12, 21, 27, 33, 24, 13, 15, 33, 54, 63, 72, 51, 27, 30, 63, 99, 108, 117, 81, 42, 25, 52, 81, 87, 93, 64, 33, 15, 31, 48, 51, 54, 37, 19, 20, 42, 66, 72, 78, 54, 28, 50, 104, 162, 174, 186, 128, 66, 90, 186, 288, 306, 324, 222, 114, 120, 246, 378, 396, 414, 282, 144, 90, 184, 282, 294, 306, 208, 106, 50, 102, 156, 162, 168, 114, 58, 60, 123, 189, 198, 207, 141, 72, 135, 276, 423, 441, 459, 312, 159, 225, 459, 702, 729, 756, 513, 261, 270, 549, 837, 864, 891, 603, 306, 195, 396, 603, 621, 639, 432, 219, 105, 213, 324, 333, 342, 231, 117, 60, 122, 186, 192, 198, 134, 68, 130, 264, 402, 414, 426, 288, 146, 210, 426, 648, 666, 684, 462, 234, 240, 486, 738, 756, 774, 522, 264, 170, 344, 522, 534, 546, 368, 186, 90, 182, 276, 282, 288, 194, 98, 40, 81, 123, 126, 129, 87, 44, 85, 172, 261, 267, 273, 184, 93, 135, 273, 414, 423, 432, 291, 147, 150, 303, 459, 468, 477, 321, 162, 105, 212, 321, 327, 333, 224, 113, 55, 111, 168, 171, 174, 117, 59})}},
    {"test_convtranspose_autopad_same", "ConvTranspose",
     {f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8}), f32({1, 2, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {{"auto_pad", std::string("SAME_UPPER")}, {"strides", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 2, 6, 6}, {0, 0, 1, 1, 3, 2, 0, 0, 1, 1, 3, 2, 3, 3, 8, 5, 12, 7, 3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8, 0, 0, 1, 1, 3, 2, 0, 0, 1, 1, 3, 2, 3, 3, 8, 5, 12, 7, 3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8})}},
    {"test_convtranspose_dilations", "ConvTranspose",
     {f32({1, 1, 3, 3}, {3, 8, 1, 9, 5, 7, 3, 2, 6}), f32({1, 1, 2, 2}, {7, 2, 1, 9})},
     {{"dilations", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 1, 5, 5}, {21, 56, 13, 16, 2, 63, 35, 67, 10, 14, 24, 22, 76, 76, 21, 9, 5, 88, 45, 63, 3, 2, 33, 18, 54})}},
    {"test_convtranspose_kernel_shape", "ConvTranspose",
     {f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8}), f32({1, 2, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {{"kernel_shape", std::vector<std::int64_t>{3, 3}}, {"output_padding", std::vector<std::int64_t>{1, 1}}, {"output_shape", std::vector<std::int64_t>{10, 8}}, {"strides", std::vector<std::int64_t>{3, 2}}},
     {f32({1, 2, 10, 8}, {0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0})}},
    {"test_convtranspose_output_shape", "ConvTranspose",
     {f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8}), f32({1, 2, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {{"output_shape", std::vector<std::int64_t>{10, 8}}, {"strides", std::vector<std::int64_t>{3, 2}}},
     {f32({1, 2, 10, 8}, {0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0})}},
    {"test_convtranspose_pad", "ConvTranspose",
     {f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8}), f32({1, 2, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {{"output_padding", std::vector<std::int64_t>{1, 1}}, {"strides", std::vector<std::int64_t>{3, 2}}},
     {f32({1, 2, 10, 8}, {0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0})}},
    {"test_convtranspose_pads", "ConvTranspose",
     {f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8}), f32({1, 2, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {{"pads", std::vector<std::int64_t>{1, 2, 1, 2}}, {"strides", std::vector<std::int64_t>{3, 2}}},
     {f32({1, 2, 7, 3}, {1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15, 1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15})}},
    {"test_convtranspose_with_kernel", "ConvTranspose",
     {f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8}), f32({1, 2, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})},
     {{"kernel_shape", std::vector<std::int64_t>{3, 3}}, {"output_padding", std::vector<std::int64_t>{1, 1}}, {"output_shape", std::vector<std::int64_t>{10, 8}}, {"strides", std::vector<std::int64_t>{3, 2}}},
     {f32({1, 2, 10, 8}, {0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0})}},
    {"test_gemm_all_attributes", "Gemm",
     {f32({4, 3}, {0.548813522, 0.715189338, 0.602763355, 0.544883192, 0.423654795, 0.64589411, 0.437587202, 0.891772985, 0.963662744, 0.383441508, 0.791725039, 0.528894901}), f32({5, 4}, {0.568044543, 0.925596654, 0.0710360557, 0.0871293023, 0.0202183966, 0.832619846, 0.778156757, 0.870012164, 0.978618324, 0.799158573, 0.461479366, 0.780529201, 0.118274428, 0.63992101, 0.143353283, 0.944668889, 0.521848321, 0.414661944, 0.264555603, 0.774233699}), f32({1, 5}, {0.456150323, 0.56843394, 0.0187897999, 0.617635489, 0.612095714})},
     {{"alpha", double{0.25}}, {"beta", double{0.349999994}}, {"transA", std::int64_t{1}}, {"transB", std::int64_t{1}}},
     {f32({3, 5}, {0.379799128, 0.483673602, 0.375014365, 0.425809324, 0.44547832, 0.392333448, 0.636440158, 0.523567438, 0.524035096, 0.563682914, 0.423345327, 0.638951063, 0.497470319, 0.496769249, 0.525935829})}},
    {"test_gemm_alpha", "Gemm",
     {f32({3, 5}, {0.548813522, 0.715189338, 0.602763355, 0.544883192, 0.423654795, 0.64589411, 0.437587202, 0.891772985, 0.963662744, 0.383441508, 0.791725039, 0.528894901, 0.568044543, 0.925596654, 0.0710360557}), f32({5, 4}, {0.0871293023, 0.0202183966, 0.832619846, 0.778156757, 0.870012164, 0.978618324, 0.799158573, 0.461479366, 0.780529201, 0.118274428, 0.63992101, 0.143353283, 0.944668889, 0.521848321, 0.414661944, 0.264555603, 0.774233699, 0.456150323, 0.56843394, 0.0187897999}), f32({1, 4}, {0, 0, 0, 0})},
     {{"alpha", double{0.5}}},
     {f32({3, 4}, {0.991628766, 0.629940867, 0.940492928, 0.497814238, 1.17012644, 0.612278223, 1.03785276, 0.547265053, 0.950941861, 0.558101475, 0.93478477, 0.593898952})}},
    {"test_gemm_beta", "Gemm",
     {f32({2, 7}, {0.548813522, 0.715189338, 0.602763355, 0.544883192, 0.423654795, 0.64589411, 0.437587202, 0.891772985, 0.963662744, 0.383441508, 0.791725039, 0.528894901, 0.568044543, 0.925596654}), f32({7, 4}, {0.0710360557, 0.0871293023, 0.0202183966, 0.832619846, 0.778156757, 0.870012164, 0.978618324, 0.799158573, 0.461479366, 0.780529201, 0.118274428, 0.63992101, 0.143353283, 0.944668889, 0.521848321, 0.414661944, 0.264555603, 0.774233699, 0.456150323, 0.56843394, 0.0187897999, 0.617635489, 0.612095714, 0.616934001, 0.943748057, 0.681820273, 0.359507889, 0.437031955}), f32({1, 4}, {0.69763118, 0.0602254719, 0.666766703, 0.670637846})},
     {{"beta", double{0.5}}},
     {f32({2, 4}, {1.83779275, 2.71065331, 2.14593029, 2.80601835, 2.47661686, 3.3848393, 2.67469573, 3.47721958})}},
    {"test_gemm_default_matrix_bias", "Gemm",
     {f32({3, 6}, {0.548813522, 0.715189338, 0.602763355, 0.544883192, 0.423654795, 0.64589411, 0.437587202, 0.891772985, 0.963662744, 0.383441508, 0.791725039, 0.528894901, 0.568044543, 0.925596654, 0.0710360557, 0.0871293023, 0.0202183966, 0.832619846}), f32({6, 4}, {0.778156757, 0.870012164, 0.978618324, 0.799158573, 0.461479366, 0.780529201, 0.118274428, 0.63992101, 0.143353283, 0.944668889, 0.521848321, 0.414661944, 0.264555603, 0.774233699, 0.456150323, 0.56843394, 0.0187897999, 0.617635489, 0.612095714, 0.616934001, 0.943748057, 0.681820273, 0.359507889, 0.437031955}), f32({3, 4}, {0.69763118, 0.0602254719, 0.666766703, 0.670637846, 0.210382566, 0.128926292, 0.315428346, 0.363710761, 0.570196748, 0.438601524, 0.988373816, 0.102044813})},
     {},
     {f32({3, 4}, {2.30282092, 2.78925252, 2.34305525, 2.67020798, 1.71603453, 3.26251149, 2.20167923, 2.6212182, 2.25876522, 2.37001109, 2.04227018, 1.60364938})}},
    {"test_gemm_default_no_bias", "Gemm",
     {f32({2, 10}, {0.548813522, 0.715189338, 0.602763355, 0.544883192, 0.423654795, 0.64589411, 0.437587202, 0.891772985, 0.963662744, 0.383441508, 0.791725039, 0.528894901, 0.568044543, 0.925596654, 0.0710360557, 0.0871293023, 0.0202183966, 0.832619846, 0.778156757, 0.870012164}), f32({10, 3}, {0.978618324, 0.799158573, 0.461479366, 0.780529201, 0.118274428, 0.63992101, 0.143353283, 0.944668889, 0.521848321, 0.414661944, 0.264555603, 0.774233699, 0.456150323, 0.56843394, 0.0187897999, 0.617635489, 0.612095714, 0.616934001, 0.943748057, 0.681820273, 0.359507889, 0.437031955, 0.69763118, 0.0602254719, 0.666766703, 0.670637846, 0.210382566, 0.128926292, 0.315428346, 0.363710761})},
     {},
     {f32({2, 3}, {3.49451232, 3.56061172, 2.40700626, 2.75305176, 2.96139979, 2.30952168})}},
    {"test_gemm_default_scalar_bias", "Gemm",
     {f32({2, 3}, {0.548813522, 0.715189338, 0.602763355, 0.544883192, 0.423654795, 0.64589411}), f32({3, 4}, {0.437587202, 0.891772985, 0.963662744, 0.383441508, 0.791725039, 0.528894901, 0.568044543, 0.925596654, 0.0710360557, 0.0871293023, 0.0202183966, 0.832619846}), f32({}, {3.1400001})},
     {},
     {f32({2, 4}, {3.98920512, 4.06019545, 4.08731747, 4.51428747, 3.75973392, 3.90625739, 3.91879749, 4.27884865})}},
    {"test_gemm_default_single_elem_vector_bias", "Gemm",
     {f32({3, 7}, {0.548813522, 0.715189338, 0.602763355, 0.544883192, 0.423654795, 0.64589411, 0.437587202, 0.891772985, 0.963662744, 0.383441508, 0.791725039, 0.528894901, 0.568044543, 0.925596654, 0.0710360557, 0.0871293023, 0.0202183966, 0.832619846, 0.778156757, 0.870012164, 0.978618324}), f32({7, 3}, {0.799158573, 0.461479366, 0.780529201, 0.118274428, 0.63992101, 0.143353283, 0.944668889, 0.521848321, 0.414661944, 0.264555603, 0.774233699, 0.456150323, 0.56843394, 0.0187897999, 0.617635489, 0.612095714, 0.616934001, 0.943748057, 0.681820273, 0.359507889, 0.437031955}), f32({1}, {0.69763118})},
     {},
     {f32({3, 3}, {2.8688972, 2.70873046, 2.78947759, 3.37538648, 3.2320559, 3.31924486, 2.64618254, 2.34454465, 2.88312769})}},
    {"test_gemm_default_vector_bias", "Gemm",
     {f32({2, 7}, {0.548813522, 0.715189338, 0.602763355, 0.544883192, 0.423654795, 0.64589411, 0.437587202, 0.891772985, 0.963662744, 0.383441508, 0.791725039, 0.528894901, 0.568044543, 0.925596654}), f32({7, 4}, {0.0710360557, 0.0871293023, 0.0202183966, 0.832619846, 0.778156757, 0.870012164, 0.978618324, 0.799158573, 0.461479366, 0.780529201, 0.118274428, 0.63992101, 0.143353283, 0.944668889, 0.521848321, 0.414661944, 0.264555603, 0.774233699, 0.456150323, 0.56843394, 0.0187897999, 0.617635489, 0.612095714, 0.616934001, 0.943748057, 0.681820273, 0.359507889, 0.437031955}), f32({1, 4}, {0.69763118, 0.0602254719, 0.666766703, 0.670637846})},
     {},
     {f32({2, 4}, {2.18660831, 2.74076605, 2.47931361, 3.14133739, 2.8254323, 3.41495204, 3.00807905, 3.81253862})}},
    {"test_gemm_default_zero_bias", "Gemm",
     {f32({3, 5}, {0.548813522, 0.715189338, 0.602763355, 0.544883192, 0.423654795, 0.64589411, 0.437587202, 0.891772985, 0.963662744, 0.383441508, 0.791725039, 0.528894901, 0.568044543, 0.925596654, 0.0710360557}), f32({5, 4}, {0.0871293023, 0.0202183966, 0.832619846, 0.778156757, 0.870012164, 0.978618324, 0.799158573, 0.461479366, 0.780529201, 0.118274428, 0.63992101, 0.143353283, 0.944668889, 0.521848321, 0.414661944, 0.264555603, 0.774233699, 0.456150323, 0.56843394, 0.0187897999}), f32({1, 4}, {0, 0, 0, 0})},
     {},
     {f32({3, 4}, {1.98325753, 1.25988173, 1.88098586, 0.995628476, 2.34025288, 1.22455645, 2.07570553, 1.09453011, 1.90188372, 1.11620295, 1.86956954, 1.1877979})}},
    {"test_gemm_transposeA", "Gemm",
     {f32({6, 3}, {0.548813522, 0.715189338, 0.602763355, 0.544883192, 0.423654795, 0.64589411, 0.437587202, 0.891772985, 0.963662744, 0.383441508, 0.791725039, 0.528894901, 0.568044543, 0.925596654, 0.0710360557, 0.0871293023, 0.0202183966, 0.832619846}), f32({6, 4}, {0.778156757, 0.870012164, 0.978618324, 0.799158573, 0.461479366, 0.780529201, 0.118274428, 0.63992101, 0.143353283, 0.944668889, 0.521848321, 0.414661944, 0.264555603, 0.774233699, 0.456150323, 0.56843394, 0.0187897999, 0.617635489, 0.612095714, 0.616934001, 0.943748057, 0.681820273, 0.359507889, 0.437031955}), f32({1, 4}, {0, 0, 0, 0})},
     {{"transA", std::int64_t{1}}},
     {f32({3, 4}, {0.935588062, 2.02327108, 1.38380706, 1.57520747, 1.12580419, 2.99377537, 2.15034318, 2.24235129, 1.83229566, 2.95995259, 1.75322366, 2.00296688})}},
    {"test_gemm_transposeB", "Gemm",
     {f32({3, 6}, {0.548813522, 0.715189338, 0.602763355, 0.544883192, 0.423654795, 0.64589411, 0.437587202, 0.891772985, 0.963662744, 0.383441508, 0.791725039, 0.528894901, 0.568044543, 0.925596654, 0.0710360557, 0.0871293023, 0.0202183966, 0.832619846}), f32({4, 6}, {0.778156757, 0.870012164, 0.978618324, 0.799158573, 0.461479366, 0.780529201, 0.118274428, 0.63992101, 0.143353283, 0.944668889, 0.521848321, 0.414661944, 0.264555603, 0.774233699, 0.456150323, 0.56843394, 0.0187897999, 0.617635489, 0.612095714, 0.616934001, 0.943748057, 0.681820273, 0.359507889, 0.437031955}), f32({1, 4}, {0, 0, 0, 0})},
     {{"transB", std::int64_t{1}}},
     {f32({3, 4}, {2.77425694, 1.61262882, 1.69048369, 2.1521039, 3.14403629, 1.75526202, 1.80528367, 2.50467873, 2.04566979, 1.10779214, 1.46347332, 1.41632652})}},
    {"test_globalaveragepool", "GlobalAveragePool",
     {f32({1, 3, 5, 5}, {1.76405239, 0.400157213, 0.97873801, 2.24089313, 1.867558, -0.977277875, 0.950088441, -0.151357204, -0.103218853, 0.410598516, 0.144043565, 1.45427346, 0.761037707, 0.121675014, 0.443863243, 0.333674341, 1.49407911, -0.205158263, 0.313067704, -0.854095757, -2.55298972, 0.653618574, 0.864436209, -0.742165029, 2.26975465, -1.45436573, 0.0457585156, -0.187183857, 1.53277922, 1.4693588, 0.15494743, 0.378162533, -0.887785733, -1.98079646, -0.347912163, 0.156348974, 1.23029065, 1.20237982, -0.387326807, -0.302302748, -1.04855299, -1.42001796, -1.70627022, 1.95077538, -0.509652197, -0.438074291, -1.25279534, 0.777490377, -1.6138978, -0.212740287, -0.895466566, 0.386902511, -0.51080513, -1.18063223, -0.028182229, 0.428331882, 0.0665172189, 0.302471906, -0.634322107, -0.362741172, -0.672460437, -0.359553158, -0.813146293, -1.7262826, 0.177426144, -0.401780933, -1.63019836, 0.462782264, -0.907298386, 0.0519453958, 0.729090571, 0.128982916, 1.13940072, -1.23482585, 0.402341634})},
     {},
     {f32({1, 3, 1, 1}, {0.475173861, -0.194055304, -0.283260077})}},
    {"test_globalaveragepool_precomputed", "GlobalAveragePool",
     {f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
     {},
     {f32({1, 1, 1, 1}, {5})}},
    {"test_globalmaxpool", "GlobalMaxPool",
     {f32({1, 3, 5, 5}, {1.76405239, 0.400157213, 0.97873801, 2.24089313, 1.867558, -0.977277875, 0.950088441, -0.151357204, -0.103218853, 0.410598516, 0.144043565, 1.45427346, 0.761037707, 0.121675014, 0.443863243, 0.333674341, 1.49407911, -0.205158263, 0.313067704, -0.854095757, -2.55298972, 0.653618574, 0.864436209, -0.742165029, 2.26975465, -1.45436573, 0.0457585156, -0.187183857, 1.53277922, 1.4693588, 0.15494743, 0.378162533, -0.887785733, -1.98079646, -0.347912163, 0.156348974, 1.23029065, 1.20237982, -0.387326807, -0.302302748, -1.04855299, -1.42001796, -1.70627022, 1.95077538, -0.509652197, -0.438074291, -1.25279534, 0.777490377, -1.6138978, -0.212740287, -0.895466566, 0.386902511, -0.51080513, -1.18063223, -0.028182229, 0.428331882, 0.0665172189, 0.302471906, -0.634322107, -0.362741172, -0.672460437, -0.359553158, -0.813146293, -1.7262826, 0.177426144, -0.401780933, -1.63019836, 0.462782264, -0.907298386, 0.0519453958, 0.729090571, 0.128982916, 1.13940072, -1.23482585, 0.402341634})},
     {},
     {f32({1, 3, 1, 1}, {2.26975465, 1.95077538, 1.13940072})}},
    {"test_globalmaxpool_precomputed", "GlobalMaxPool",
     {f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
     {},
     {f32({1, 1, 1, 1}, {9})}},
    {"test_matmul_2d", "MatMul",
     {f32({3, 4}, {1.76405239, 0.400157213, 0.97873801, 2.24089313, 1.867558, -0.977277875, 0.950088441, -0.151357204, -0.103218853, 0.410598516, 0.144043565, 1.45427346}), f32({4, 3}, {0.761037707, 0.121675014, 0.443863243, 0.333674341, 1.49407911, -0.205158263, 0.313067704, -0.854095757, -2.55298972, 0.653618574, 0.864436209, -0.742165029})},
     {},
     {f32({3, 3}, {3.24713302, 1.91368079, -3.46091819, 1.29370153, -2.17520046, -1.28379714, 1.05408823, 1.73500717, -1.5771054})}},
    {"test_matmul_3d", "MatMul",
     {f32({2, 3, 4}, {2.26975465, -1.45436573, 0.0457585156, -0.187183857, 1.53277922, 1.4693588, 0.15494743, 0.378162533, -0.887785733, -1.98079646, -0.347912163, 0.156348974, 1.23029065, 1.20237982, -0.387326807, -0.302302748, -1.04855299, -1.42001796, -1.70627022, 1.95077538, -0.509652197, -0.438074291, -1.25279534, 0.777490377}), f32({2, 4, 3}, {-1.6138978, -0.212740287, -0.895466566, 0.386902511, -0.51080513, -1.18063223, -0.028182229, 0.428331882, 0.0665172189, 0.302471906, -0.634322107, -0.362741172, -0.672460437, -0.359553158, -0.813146293, -1.7262826, 0.177426144, -0.401780933, -1.63019836, 0.462782264, -0.907298386, 0.0519453958, 0.729090571, 0.128982916})},
     {},
     {f32({2, 3, 3}, {-4.28375673, 0.398363918, -0.244475216, -1.79523349, -1.25014782, -3.23419333, 0.723516405, 0.952471316, 3.05371809, -2.2872529, -0.628675342, -1.17107046, 6.03935528, 0.757722557, 3.22287607, 3.18165302, 0.0926106796, 1.82737386})}},
    {"test_matmul_4d", "MatMul",
     {f32({1, 2, 3, 4}, {1.13940072, -1.23482585, 0.402341634, -0.684810102, -0.870797157, -0.578849673, -0.311552525, 0.0561653413, -1.16514981, 0.900826514, 0.46566245, -1.53624368, 1.48825216, 1.89588916, 1.1787796, -0.179924831, -1.07075262, 1.0544517, -0.403176934, 1.22244501, 0.208274975, 0.976639032, 0.356366396, 0.706573188}), f32({1, 2, 4, 3}, {0.0105000203, 1.78587055, 0.126912087, 0.401989371, 1.8831507, -1.34775901, -1.27048504, 0.96939671, -1.17312336, 1.94362116, -0.413618982, -0.747454822, 1.92294204, 1.48051476, 1.86755896, 0.906044662, -0.861225665, 1.91006494, -0.268003374, 0.802456379, 0.947251976, -0.155010089, 0.614079356, 0.9222067})},
     {},
     {f32({1, 2, 3, 3}, {-2.32660365, 0.382738173, 1.8487196, 0.263152152, -2.9704411, 0.993143737, -3.22760439, 0.702416539, -0.759975433, 4.29155588, 1.40602195, 7.35134363, -1.18505347, -2.06623936, 0.759814441, 1.08034599, 0.18710804, 3.24358511})}},
    {"test_maxpool_1d_default", "MaxPool",
     {f32({1, 3, 32}, {1.76405239, 0.400157213, 0.97873801, 2.24089313, 1.867558, -0.977277875, 0.950088441, -0.151357204, -0.103218853, 0.410598516, 0.144043565, 1.45427346, 0.761037707, 0.121675014, 0.443863243, 0.333674341, 1.49407911, -0.205158263, 0.313067704, -0.854095757, -2.55298972, 0.653618574, 0.864436209, -0.742165029, 2.26975465, -1.45436573, 0.0457585156, -0.187183857, 1.53277922, 1.4693588, 0.15494743, 0.378162533, -0.887785733, -1.98079646, -0.347912163, 0.156348974, 1.23029065, 1.20237982, -0.387326807, -0.302302748, -1.04855299, -1.42001796, -1.70627022, 1.95077538, -0.509652197, -0.438074291, -1.25279534, 0.777490377, -1.6138978, -0.212740287, -0.895466566, 0.386902511, -0.51080513, -1.18063223, -0.028182229, 0.428331882, 0.0665172189, 0.302471906, -0.634322107, -0.362741172, -0.672460437, -0.359553158, -0.813146293, -1.7262826, 0.177426144, -0.401780933, -1.63019836, 0.462782264, -0.907298386, 0.0519453958, 0.729090571, 0.128982916, 1.13940072, -1.23482585, 0.402341634, -0.684810102, -0.870797157, -0.578849673, -0.311552525, 0.0561653413, -1.16514981, 0.900826514, 0.46566245, -1.53624368, 1.48825216, 1.89588916, 1.1787796, -0.179924831, -1.07075262, 1.0544517, -0.403176934, 1.22244501, 0.208274975, 0.976639032, 0.356366396, 0.706573188})},
     {{"kernel_shape", std::vector<std::int64_t>{2}}},
     {f32({1, 3, 31}, {1.76405239, 0.97873801, 2.24089313, 2.24089313, 1.867558, 0.950088441, 0.950088441, -0.103218853, 0.410598516, 0.410598516, 1.45427346, 1.45427346, 0.761037707, 0.443863243, 0.443863243, 1.49407911, 1.49407911, 0.313067704, 0.313067704, -0.854095757, 0.653618574, 0.864436209, 0.864436209, 2.26975465, 2.26975465, 0.0457585156, 0.0457585156, 1.53277922, 1.53277922, 1.4693588, 0.378162533, -0.887785733, -0.347912163, 0.156348974, 1.23029065, 1.23029065, 1.20237982, -0.302302748, -0.302302748, -1.04855299, -1.42001796, 1.95077538, 1.95077538, -0.438074291, -0.438074291, 0.777490377, 0.777490377, -0.212740287, -0.212740287, 0.386902511, 0.386902511, -0.51080513, -0.028182229, 0.428331882, 0.428331882, 0.302471906, 0.302471906, -0.362741172, -0.362741172, -0.359553158, -0.359553158, -0.813146293, 0.177426144, -0.401780933, 0.462782264, 0.462782264, 0.0519453958, 0.729090571, 0.729090571, 1.13940072, 1.13940072, 0.402341634, 0.402341634, -0.684810102, -0.578849673, -0.311552525, 0.0561653413, 0.0561653413, 0.900826514, 0.900826514, 0.46566245, 1.48825216, 1.89588916, 1.89588916, 1.1787796, -0.179924831, 1.0544517, 1.0544517, 1.22244501, 1.22244501, 0.976639032, 0.976639032, 0.706573188})}},
    {"test_maxpool_2d_ceil", "MaxPool",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})},
     {{"ceil_mode", std::int64_t{1}}, {"kernel_shape", std::vector<std::int64_t>{3, 3}}, {"strides", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 1, 2, 2}, {11, 12, 15, 16})}},
    {"test_maxpool_2d_dilations", "MaxPool",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})},
     {{"dilations", std::vector<std::int64_t>{2, 2}}, {"kernel_shape", std::vector<std::int64_t>{2, 2}}, {"strides", std::vector<std::int64_t>{1, 1}}},
     {f32({1, 1, 2, 2}, {11, 12, 15, 16})}},
    {"test_maxpool_2d_precomputed_pads", "MaxPool",
     {f32({1, 1, 5, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})},
     {{"kernel_shape", std::vector<std::int64_t>{5, 5}}, {"pads", std::vector<std::int64_t>{2, 2, 2, 2}}},
     {f32({1, 1, 5, 5}, {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25})}},
    {"test_maxpool_2d_precomputed_same_upper", "MaxPool",
     {f32({1, 1, 5, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})},
     {{"auto_pad", std::string("SAME_UPPER")}, {"kernel_shape", std::vector<std::int64_t>{3, 3}}, {"strides", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 1, 3, 3}, {7, 9, 10, 17, 19, 20, 22, 24, 25})}},
    {"test_maxpool_2d_precomputed_strides", "MaxPool",
     {f32({1, 1, 5, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})},
     {{"kernel_shape", std::vector<std::int64_t>{2, 2}}, {"strides", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 1, 2, 2}, {7, 9, 17, 19})}},
    {"test_maxpool_2d_uint8", "MaxPool",
     {u8({1, 1, 5, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})},
     {{"kernel_shape", std::vector<std::int64_t>{5, 5}}, {"pads", std::vector<std::int64_t>{2, 2, 2, 2}}},
     {u8({1, 1, 5, 5}, {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25})}},
    {"test_maxpool_with_argmax_2d_precomputed_pads", "MaxPool",
     {f32({1, 1, 5, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})},
     {{"kernel_shape", std::vector<std::int64_t>{5, 5}}, {"pads", std::vector<std::int64_t>{2, 2, 2, 2}}},
     {f32({1, 1, 5, 5}, {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25}), i64({1, 1, 5, 5}, {12, 13, 14, 14, 14, 17, 18, 19, 19, 19, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24})}},
    {"test_maxpool_with_argmax_2d_precomputed_strides", "MaxPool",
     {f32({1, 1, 5, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})},
     {{"kernel_shape", std::vector<std::int64_t>{2, 2}}, {"storage_order", std::int64_t{1}}, {"strides", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 1, 2, 2}, {7, 9, 17, 19}), i64({1, 1, 2, 2}, {6, 16, 8, 18})}},
    {"test_averagepool_1d_default", "AveragePool",
     {f32({1, 3, 32}, {1.76405239, 0.400157213, 0.97873801, 2.24089313, 1.867558, -0.977277875, 0.950088441, -0.151357204, -0.103218853, 0.410598516, 0.144043565, 1.45427346, 0.761037707, 0.121675014, 0.443863243, 0.333674341, 1.49407911, -0.205158263, 0.313067704, -0.854095757, -2.55298972, 0.653618574, 0.864436209, -0.742165029, 2.26975465, -1.45436573, 0.0457585156, -0.187183857, 1.53277922, 1.4693588, 0.15494743, 0.378162533, -0.887785733, -1.98079646, -0.347912163, 0.156348974, 1.23029065, 1.20237982, -0.387326807, -0.302302748, -1.04855299, -1.42001796, -1.70627022, 1.95077538, -0.509652197, -0.438074291, -1.25279534, 0.777490377, -1.6138978, -0.212740287, -0.895466566, 0.386902511, -0.51080513, -1.18063223, -0.028182229, 0.428331882, 0.0665172189, 0.302471906, -0.634322107, -0.362741172, -0.672460437, -0.359553158, -0.813146293, -1.7262826, 0.177426144, -0.401780933, -1.63019836, 0.462782264, -0.907298386, 0.0519453958, 0.729090571, 0.128982916, 1.13940072, -1.23482585, 0.402341634, -0.684810102, -0.870797157, -0.578849673, -0.311552525, 0.0561653413, -1.16514981, 0.900826514, 0.46566245, -1.53624368, 1.48825216, 1.89588916, 1.1787796, -0.179924831, -1.07075262, 1.0544517, -0.403176934, 1.22244501, 0.208274975, 0.976639032, 0.356366396, 0.706573188})},
     {{"kernel_shape", std::vector<std::int64_t>{2}}},
     {f32({1, 3, 31}, {1.0821048, 0.689447641, 1.6098156, 2.05422544, 0.445140064, -0.0135947168, 0.399365604, -0.127288029, 0.153689831, 0.277321041, 0.799158514, 1.10765553, 0.441356361, 0.282769144, 0.388768792, 0.913876712, 0.64446044, 0.0539547205, -0.270514011, -1.70354271, -0.949685574, 0.759027362, 0.0611355901, 0.76379478, 0.407694459, -0.704303622, -0.0707126707, 0.67279768, 1.50106907, 0.812153101, 0.266554981, -1.43429112, -1.16435432, -0.0957815945, 0.693319798, 1.2163353, 0.407526493, -0.344814777, -0.675427854, -1.23428547, -1.56314409, 0.122252584, 0.720561624, -0.473863244, -0.845434785, -0.237652481, -0.418203712, -0.913319051, -0.554103434, -0.254282027, -0.0619513094, -0.845718682, -0.604407251, 0.200074822, 0.247424543, 0.184494555, -0.1659251, -0.49853164, -0.517600775, -0.516006827, -0.586349726, -1.26971447, -0.112177394, -1.01598966, -0.583708048, -0.222258061, -0.427676499, 0.39051798, 0.429036736, 0.634191811, -0.0477125645, -0.416242123, -0.141234234, -0.777803659, -0.724823415, -0.445201099, -0.127693594, -0.554492235, -0.132161647, 0.683244467, -0.535290599, -0.0239957571, 1.69207072, 1.53733444, 0.499427378, -0.625338733, -0.00815045834, 0.3256374, 0.409634054, 0.715359986, 0.592456996, 0.666502714, 0.531469822})}},
    {"test_averagepool_2d_ceil", "AveragePool",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})},
     {{"ceil_mode", std::int64_t{1}}, {"kernel_shape", std::vector<std::int64_t>{3, 3}}, {"strides", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 1, 2, 2}, {6, 7.5, 12, 13.5})}},
    {"test_averagepool_2d_precomputed_pads", "AveragePool",
     {f32({1, 1, 5, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})},
     {{"kernel_shape", std::vector<std::int64_t>{5, 5}}, {"pads", std::vector<std::int64_t>{2, 2, 2, 2}}},
     {f32({1, 1, 5, 5}, {7, 7.5, 8, 8.5, 9, 9.5, 10, 10.5, 11, 11.5, 12, 12.5, 13, 13.5, 14, 14.5, 15, 15.5, 16, 16.5, 17, 17.5, 18, 18.5, 19})}},
    {"test_averagepool_2d_precomputed_pads_count_include_pad", "AveragePool",
     {f32({1, 1, 5, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})},
     {{"count_include_pad", std::int64_t{1}}, {"kernel_shape", std::vector<std::int64_t>{5, 5}}, {"pads", std::vector<std::int64_t>{2, 2, 2, 2}}},
     {f32({1, 1, 5, 5}, {2.51999998, 3.5999999, 4.80000019, 4.07999992, 3.24000001, 4.55999994, 6.4000001, 8.39999962, 7.03999996, 5.51999998, 7.19999981, 10, 13, 10.8000002, 8.39999962, 6.96000004, 9.60000038, 12.3999996, 10.2399998, 7.92000008, 6.11999989, 8.39999962, 10.8000002, 8.88000011, 6.84000015})}},
    {"test_averagepool_2d_precomputed_same_upper", "AveragePool",
     {f32({1, 1, 5, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})},
     {{"auto_pad", std::string("SAME_UPPER")}, {"kernel_shape", std::vector<std::int64_t>{3, 3}}, {"strides", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 1, 3, 3}, {4, 5.5, 7, 11.5, 13, 14.5, 19, 20.5, 22})}},
    {"test_averagepool_2d_precomputed_strides", "AveragePool",
     {f32({1, 1, 5, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})},
     {{"kernel_shape", std::vector<std::int64_t>{2, 2}}, {"strides", std::vector<std::int64_t>{2, 2}}},
     {f32({1, 1, 2, 2}, {4, 6, 14, 16})}},
    {"test_resize_downsample_scales_cubic", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, f32({4}, {1, 1, 0.800000012, 0.800000012})},
     {{"mode", std::string("cubic")}},
     {f32({1, 1, 3, 3}, {1.47119141, 2.78125, 4.08251953, 6.71142578, 8.02148438, 9.32275391, 11.9165039, 13.2265625, 14.527832})}},
    {"test_resize_downsample_scales_cubic_A_n0p5_exclude_outside", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, f32({4}, {1, 1, 0.800000012, 0.800000012})},
     {{"cubic_coeff_a", double{-0.5}}, {"exclude_outside", std::int64_t{1}}, {"mode", std::string("cubic")}},
     {f32({1, 1, 3, 3}, {1.36812675, 2.6695013, 4.01333666, 6.57362509, 7.875, 9.21883488, 11.948966, 13.2503414, 14.5941763})}},
    {"test_resize_downsample_scales_cubic_align_corners", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, f32({4}, {1, 1, 0.800000012, 0.800000012})},
     {{"coordinate_transformation_mode", std::string("align_corners")}, {"mode", std::string("cubic")}},
     {f32({1, 1, 3, 3}, {1, 2.39519167, 3.7903831, 6.5807662, 7.97595787, 9.37114906, 12.1615324, 13.5567236, 14.9519157})}},
    {"test_resize_downsample_scales_linear", "Resize",
     {f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), std::nullopt, f32({4}, {1, 1, 0.600000024, 0.600000024})},
     {{"mode", std::string("linear")}},
     {f32({1, 1, 1, 2}, {2.66666651, 4.33333302})}},
    {"test_resize_downsample_scales_linear_align_corners", "Resize",
     {f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), std::nullopt, f32({4}, {1, 1, 0.600000024, 0.600000024})},
     {{"coordinate_transformation_mode", std::string("align_corners")}, {"mode", std::string("linear")}},
     {f32({1, 1, 1, 2}, {1, 3.14285707})}},
    {"test_resize_downsample_scales_nearest", "Resize",
     {f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), std::nullopt, f32({4}, {1, 1, 0.600000024, 0.600000024})},
     {{"mode", std::string("nearest")}},
     {f32({1, 1, 1, 2}, {1, 3})}},
    {"test_resize_downsample_sizes_cubic", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, std::nullopt, i64({4}, {1, 1, 3, 3})},
     {{"mode", std::string("cubic")}},
     {f32({1, 1, 3, 3}, {1.63078701, 3.00462961, 4.37847233, 7.12615728, 8.5, 9.87384224, 12.6215277, 13.9953699, 15.3692131})}},
    {"test_resize_downsample_sizes_linear_pytorch_half_pixel", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, std::nullopt, i64({4}, {1, 1, 3, 1})},
     {{"coordinate_transformation_mode", std::string("pytorch_half_pixel")}, {"mode", std::string("linear")}},
     {f32({1, 1, 3, 1}, {1.66666663, 7, 12.333333})}},
    {"test_resize_downsample_sizes_nearest", "Resize",
     {f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), std::nullopt, std::nullopt, i64({4}, {1, 1, 1, 3})},
     {{"mode", std::string("nearest")}},
     {f32({1, 1, 1, 3}, {1, 2, 4})}},
    {"test_resize_tf_crop_and_resize", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), f32({8}, {0, 0, 0.400000006, 0.600000024, 1, 1, 1.20000005, 1.70000005}), std::nullopt, i64({4}, {1, 1, 3, 3})},
     {{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}, {"extrapolation_value", double{10}}, {"mode", std::string("linear")}},
     {f32({1, 1, 3, 3}, {7.60000038, 10, 10, 12.4000006, 10, 10, 10, 10, 10})}},
    {"test_resize_upsample_scales_cubic", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, f32({4}, {1, 1, 2, 2})},
     {{"mode", std::string("cubic")}},
     {f32({1, 1, 8, 8}, {0.47265625, 0.76953125, 1.24609375, 1.875, 2.28125, 2.91015625, 3.38671875, 3.68359375, 1.66015625, 1.95703125, 2.43359375, 3.0625, 3.46875, 4.09765625, 4.57421875, 4.87109375, 3.56640625, 3.86328125, 4.33984375, 4.96875, 5.375, 6.00390625, 6.48046875, 6.77734375, 6.08203125, 6.37890625, 6.85546875, 7.484375, 7.890625, 8.51953125, 8.99609375, 9.29296875, 7.70703125, 8.00390625, 8.48046875, 9.109375, 9.515625, 10.1445312, 10.6210938, 10.9179688, 10.2226562, 10.5195312, 10.9960938, 11.625, 12.03125, 12.6601562, 13.1367188, 13.4335938, 12.1289062, 12.4257812, 12.9023438, 13.53125, 13.9375, 14.5664062, 15.0429688, 15.3398438, 13.3164062, 13.6132812, 14.0898438, 14.71875, 15.125, 15.7539062, 16.2304688, 16.5273438})}},
    {"test_resize_upsample_scales_cubic_A_n0p5_exclude_outside", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, f32({4}, {1, 1, 2, 2})},
     {{"cubic_coeff_a", double{-0.5}}, {"exclude_outside", std::int64_t{1}}, {"mode", std::string("cubic")}},
     {f32({1, 1, 8, 8}, {0.558823526, 0.814942062, 1.35698247, 1.89705884, 2.39705873, 2.93713522, 3.47917557, 3.7352941, 1.58329761, 1.83941603, 2.38145661, 2.92153287, 3.42153287, 3.96160913, 4.50364971, 4.75976801, 3.75145936, 4.0075779, 4.54961824, 5.0896945, 5.5896945, 6.12977076, 6.67181158, 6.92792988, 5.91176462, 6.1678834, 6.70992374, 7.25, 7.75, 8.29007626, 8.83211708, 9.0882349, 7.91176462, 8.16788292, 8.70992374, 9.25, 9.75, 10.2900763, 10.8321171, 11.0882349, 10.0720701, 10.3281889, 10.8702288, 11.410305, 11.910305, 12.4503813, 12.9924221, 13.2485409, 12.2402315, 12.4963503, 13.0383911, 13.5784674, 14.0784674, 14.6185436, 15.1605835, 15.4167023, 13.2647057, 13.5208244, 14.0628653, 14.6029415, 15.1029415, 15.6430178, 16.1850586, 16.4411774})}},
    {"test_resize_upsample_scales_cubic_align_corners", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, f32({4}, {1, 1, 2, 2})},
     {{"coordinate_transformation_mode", std::string("align_corners")}, {"mode", std::string("cubic")}},
     {f32({1, 1, 8, 8}, {1, 1.34110785, 1.80029154, 2.32944608, 2.67055392, 3.19970846, 3.65889215, 4, 2.36443138, 2.70553946, 3.16472292, 3.69387746, 4.03498554, 4.56413984, 5.02332354, 5.36443138, 4.20116615, 4.542274, 5.00145769, 5.53061247, 5.87172031, 6.40087461, 6.86005831, 7.20116615, 6.31778431, 6.65889215, 7.11807585, 7.64723015, 7.98833799, 8.51749229, 8.97667599, 9.31778431, 7.68221569, 8.02332401, 8.48250771, 9.01166153, 9.35276985, 9.88192463, 10.3411083, 10.6822157, 9.79883385, 10.1399412, 10.5991249, 11.1282797, 11.469388, 11.9985418, 12.4577255, 12.7988338, 11.6355686, 11.976676, 12.4358597, 12.9650145, 13.3061228, 13.8352766, 14.2944603, 14.6355686, 13, 13.3411083, 13.800292, 14.3294458, 14.6705542, 15.199708, 15.6588917, 16})}},
    {"test_resize_upsample_scales_cubic_asymmetric", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, f32({4}, {1, 1, 2, 2})},
     {{"coordinate_transformation_mode", std::string("asymmetric")}, {"mode", std::string("cubic")}},
     {f32({1, 1, 8, 8}, {1, 1.40625, 2, 2.5, 3, 3.59375, 4, 4.09375, 2.625, 3.03125, 3.625, 4.125, 4.625, 5.21875, 5.625, 5.71875, 5, 5.40625, 6, 6.5, 7, 7.59375, 8, 8.09375, 7, 7.40625, 8, 8.5, 9, 9.59375, 10, 10.09375, 9, 9.40625, 10, 10.5, 11, 11.59375, 12, 12.09375, 11.375, 11.78125, 12.375, 12.875, 13.375, 13.96875, 14.375, 14.46875, 13, 13.40625, 14, 14.5, 15, 15.59375, 16, 16.09375, 13.375, 13.78125, 14.375, 14.875, 15.375, 15.96875, 16.375, 16.46875})}},
    {"test_resize_upsample_scales_linear", "Resize",
     {f32({1, 1, 2, 2}, {1, 2, 3, 4}), std::nullopt, f32({4}, {1, 1, 2, 2})},
     {{"mode", std::string("linear")}},
     {f32({1, 1, 4, 4}, {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4})}},
    {"test_resize_upsample_scales_linear_align_corners", "Resize",
     {f32({1, 1, 2, 2}, {1, 2, 3, 4}), std::nullopt, f32({4}, {1, 1, 2, 2})},
     {{"coordinate_transformation_mode", std::string("align_corners")}, {"mode", std::string("linear")}},
     {f32({1, 1, 4, 4}, {1, 1.33333337, 1.66666663, 2, 1.66666663, 2, 2.33333325, 2.66666675, 2.33333325, 2.66666675, 3, 3.33333325, 3, 3.33333325, 3.66666675, 4})}},
    {"test_resize_upsample_scales_nearest", "Resize",
     {f32({1, 1, 2, 2}, {1, 2, 3, 4}), std::nullopt, f32({4}, {1, 1, 2, 3})},
     {{"mode", std::string("nearest")}},
     {f32({1, 1, 4, 6}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4})}},
    {"test_resize_upsample_sizes_cubic", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, std::nullopt, i64({4}, {1, 1, 9, 10})},
     {{"mode", std::string("cubic")}},
     {f32({1, 1, 9, 10}, {0.455079228, 0.640579224, 0.971579194, 1.42257917, 1.9073292, 2.22332931, 2.7080791, 3.15907931, 3.49007916, 3.67557931, 1.39437962, 1.57987964, 1.91087961, 2.36187959, 2.84662962, 3.1626296, 3.64737964, 4.09837961, 4.42937946, 4.61487961, 2.95130682, 3.13680696, 3.46780682, 3.91880703, 4.40355682, 4.71955681, 5.20430708, 5.65530682, 5.98630714, 6.17180681, 5.20525074, 5.39075089, 5.72175074, 6.17275047, 6.65750074, 6.97350073, 7.45825052, 7.90925074, 8.24025059, 8.42575073, 6.88975, 7.07525015, 7.40625, 7.85725021, 8.34200001, 8.65799999, 9.14274979, 9.59375, 9.92475033, 10.1102505, 8.57424927, 8.75974941, 9.09074974, 9.541749, 10.0264997, 10.3424997, 10.8272495, 11.2782497, 11.6092491, 11.7947493, 10.8281927, 11.0136929, 11.3446932, 11.7956934, 12.2804432, 12.5964432, 13.081193, 13.5321932, 13.8631935, 14.0486927, 12.3851204, 12.5706205, 12.9016199, 13.3526201, 13.8373699, 14.1533699, 14.6381207, 15.0891199, 15.4201202, 15.6056204, 13.3244209, 13.5099211, 13.8409204, 14.2919207, 14.7766705, 15.0926704, 15.5774212, 16.0284214, 16.3594208, 16.54492})}},
    {"test_resize_upsample_sizes_nearest", "Resize",
     {f32({1, 1, 2, 2}, {1, 2, 3, 4}), std::nullopt, std::nullopt, i64({4}, {1, 1, 7, 8})},
     {{"mode", std::string("nearest")}},
     {f32({1, 1, 7, 8}, {1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 3, 3, 4, 4, 4, 4})}},
    {"test_resize_upsample_sizes_nearest_ceil_half_pixel", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, std::nullopt, i64({4}, {1, 1, 8, 8})},
     {{"coordinate_transformation_mode", std::string("half_pixel")}, {"mode", std::string("nearest")}, {"nearest_mode", std::string("ceil")}},
     {f32({1, 1, 8, 8}, {1, 2, 2, 3, 3, 4, 4, 4, 5, 6, 6, 7, 7, 8, 8, 8, 5, 6, 6, 7, 7, 8, 8, 8, 9, 10, 10, 11, 11, 12, 12, 12, 9, 10, 10, 11, 11, 12, 12, 12, 13, 14, 14, 15, 15, 16, 16, 16, 13, 14, 14, 15, 15, 16, 16, 16, 13, 14, 14, 15, 15, 16, 16, 16})}},
    {"test_resize_upsample_sizes_nearest_floor_align_corners", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, std::nullopt, i64({4}, {1, 1, 8, 8})},
     {{"coordinate_transformation_mode", std::string("align_corners")}, {"mode", std::string("nearest")}, {"nearest_mode", std::string("floor")}},
     {f32({1, 1, 8, 8}, {1, 1, 1, 2, 2, 3, 3, 4, 1, 1, 1, 2, 2, 3, 3, 4, 1, 1, 1, 2, 2, 3, 3, 4, 5, 5, 5, 6, 6, 7, 7, 8, 5, 5, 5, 6, 6, 7, 7, 8, 9, 9, 9, 10, 10, 11, 11, 12, 9, 9, 9, 10, 10, 11, 11, 12, 13, 13, 13, 14, 14, 15, 15, 16})}},
    {"test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric", "Resize",
     {f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}), std::nullopt, std::nullopt, i64({4}, {1, 1, 8, 8})},
     {{"coordinate_transformation_mode", std::string("asymmetric")}, {"mode", std::string("nearest")}, {"nearest_mode", std::string("round_prefer_ceil")}},
     {f32({1, 1, 8, 8}, {1, 2, 2, 3, 3, 4, 4, 4, 5, 6, 6, 7, 7, 8, 8, 8, 5, 6, 6, 7, 7, 8, 8, 8, 9, 10, 10, 11, 11, 12, 12, 12, 9, 10, 10, 11, 11, 12, 12, 12, 13, 14, 14, 15, 15, 16, 16, 16, 13, 14, 14, 15, 15, 16, 16, 16, 13, 14, 14, 15, 15, 16, 16, 16})}},
    {"test_upsample_nearest", "Upsample",
     {f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({4}, {1, 1, 2, 3})},
     {{"mode", std::string("nearest")}},
     {f32({1, 1, 4, 6}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4})}},
    {"test_lrn", "LRN",
     {f32({5, 5, 5, 5}, {1.76405239, 0.400157213, 0.97873801, 2.24089313, 1.867558, -0.977277875, 0.950088441, -0.151357204, -0.103218853, 0.410598516, 0.144043565, 1.45427346, 0.761037707, 0.121675014, 0.443863243, 0.333674341, 1.49407911, -0.205158263, 0.313067704, -0.854095757, -2.55298972, 0.653618574, 0.864436209, -0.742165029, 2.26975465, -1.45436573, 0.0457585156, -0.187183857, 1.53277922, 1.4693588, 0.15494743, 0.378162533, -0.887785733, -1.98079646, -0.347912163, 0.156348974, 1.23029065, 1.20237982, -0.387326807, -0.302302748, -1.04855299, -1.42001796, -1.70627022, 1.95077538, -0.509652197, -0.438074291, -1.25279534, 0.777490377, -1.6138978, -0.212740287, -0.895466566, 0.386902511, -0.51080513, -1.18063223, -0.028182229, 0.428331882, 0.0665172189, 0.302471906, -0.634322107, -0.362741172, -0.672460437, -0.359553158, -0.813146293, -1.7262826, 0.177426144, -0.401780933, -1.63019836, 0.462782264, -0.907298386, 0.0519453958, 0.729090571, 0.128982916, 1.13940072, -1.23482585, 0.402341634, -0.684810102, -0.870797157, -0.578849673, -0.311552525, 0.0561653413, -1.16514981, 0.900826514, 0.46566245, -1.53624368, 1.48825216, 1.89588916, 1.1787796, -0.179924831, -1.07075262, 1.0544517, -0.403176934, 1.22244501, 0.208274975, 0.976639032, 0.356366396, 0.706573188, 0.0105000203, 1.78587055, 0.126912087, 0.401989371, 1.8831507, -1.34775901, -1.27048504, 0.96939671, -1.17312336, 1.94362116, -0.413618982, -0.747454822, 1.92294204, 1.48051476, 1.86755896, 0.906044662, -0.861225665, 1.91006494, -0.268003374, 0.802456379, 0.947251976, -0.155010089, 0.614079356, 0.9222067, 0.376425534, -1.09940076, 0.298238188, 1.32638586, -0.694567859, -0.14963454, -0.435153544, 1.84926379, 0.672294736, 0.407461822, -0.769916058, 0.539249182, -0.674332678, 0.0318305567, -0.635846078, 0.676433265, 0.576590836, -0.208298758, 0.396006703, -1.09306157, -1.49125755, 0.439391702, 0.166673496, 0.635031462, 2.38314486, 0.944479465, -0.912822247, 1.11701632, -1.31590736, -0.461584598, -0.0682416037, 1.71334267, -0.744754851, -0.826438546, -0.0984525234, -0.663478315, 1.12663591, -1.0799315, -1.14746869, -0.437820047, -0.498032451, 1.92953205, 0.94942081, 0.0875512436, -1.2254355, 0.844362974, -1.00021529, -1.54477108, 1.18802977, 0.316942602, 0.9208588, 0.318727642, 0.856830597, -0.651025593, -1.03424287, 0.681594491, -0.803409636, -0.689549804, -0.455532491, 0.0174791589, -0.353993922, -1.37495124, -0.643618405, -2.22340322, 0.625231445, -1.6020577, -1.10438335, 0.0521650799, -0.739562988, 1.54301465, -1.29285693, 0.267050862, -0.0392828174, -1.16809344, 0.523276687, -0.171546325, 0.771790564, 0.82350415, 2.1632359, 1.33652794, -0.369181842, -0.239379182, 1.09965956, 0.655263722, 0.640131533, -1.616956, -0.0243261252, -0.73803091, 0.279924601, -0.0981503874, 0.9101789, 0.317218214, 0.786327958, -0.466419101, -0.944446266, -0.410049707, -0.0170204137, 0.379151732, 2.25930905, -0.0422571525, -0.955945015, -0.345981777, -0.463595986, 0.481481463, -1.540797, 0.0632619932, 0.156506538, 0.232181042, -0.597316086, -0.23792173, -1.42406094, -0.493319869, -0.542861462, 0.416050047, -1.15618241, 0.781198084, 1.49448454, -2.06998491, 0.426258743, 0.676908016, -0.637437046, -0.397271812, -0.132880583, -0.297790885, -0.309012979, -1.67600381, 1.15233159, 1.07961857, -0.813364267, -1.46642435, 0.521064878, -0.575787961, 0.14195317, -0.319328427, 0.691538751, 0.694749117, -0.725597382, -1.38336396, -1.58293843, 0.610379398, -1.18885922, -0.506816328, -0.596314013, -0.0525672957, -1.93627977, 0.188778594, 0.523891032, 0.0884220898, -0.310886174, 0.0974001661, 0.399046332, -2.77259278, 1.95591235, 0.390093327, -0.6524086, -0.390953362, 0.493741781, -0.11610394, -2.03068447, 2.06449294, -0.110540658, 1.02017272, -0.692049861, 1.53637707, 0.286343694, 0.608843863, -1.0452534, 1.21114528, 0.689818144, 1.30184627, -0.62808758, -0.481027126, 2.30391669, -1.0600158, -0.135949701, 1.13689137, 0.0977249667, 0.582953691, -0.399449021, 0.370055884, -1.3065269, 1.65813065, -0.118164048, -0.680178225, 0.666383088, -0.460719794, -1.33425844, -1.34671748, 0.69377315, -0.159573436, -0.133701563, 1.07774377, -1.12682581, -0.730677724, -0.384879798, 0.0943515897, -0.0421714522, -0.286887199, -0.0616264008, -0.107305273, -0.719604373, -0.81299299, 0.274516344, -0.890915096, -1.15735531, -0.312292248, -0.157667011, 2.2567234, -0.704700291, 0.943260729, 0.74718833, -1.18894494, 0.773252964, -1.18388069, -2.6591723, 0.606319547, -1.75589061, 0.45093447, -0.684010923, 1.65955079, 1.06850934, -0.4533858, -0.687837601, -1.21407735, -0.440922618, -0.280355483, -0.364693552, 0.15670386, 0.57852149, 0.349654466, -0.764143944, -1.43779147, 1.36453187, -0.689449191, -0.652293622, -0.521189332, -1.84306955, -0.477973998, -0.479655802, 0.620358288, 0.698457122, 0.00377088902, 0.931848347, 0.339964986, -0.0156821124, 0.160928175, -0.190653488, -0.394849509, -0.267733544, -1.12801135, 0.280441701, -0.993123591, 0.841631293, -0.249458581, 0.0494949818, 0.49383679, 0.643314481, -1.5706234, -0.206903681, 0.880178928, -1.69810581, 0.387280464, -2.25556421, -1.02250683, 0.0386305526, -1.65671515, -0.985510767, -1.47183502, 1.64813495, 0.164227754, 0.567290306, -0.2226751, -0.353431761, -1.61647415, -0.291837364, -0.761492193, 0.857923925, 1.14110184, 1.46657872, 0.852551937, -0.598653913, -1.11589694, 0.766663194, 0.356292814, -1.76853848, 0.355481803, 0.814519823, 0.0589255877, -0.185053676, -0.80764848, -1.44653475, 0.800297976, -0.309114456, -0.233466655, 1.73272121, 0.684501112, 0.370824993, 0.1420618, 1.51999485, 1.71958935, 0.92950511, 0.582224607, -2.09460306, 0.123721913, -0.130106956, 0.0939532295, 0.943046093, -2.73967719, -0.569312036, 0.269904345, -0.466845542, -1.41690612, 0.86896348, 0.27687192, -0.971104562, 0.31481719, 0.821585715, 0.00529264612, 0.800564826, 0.0782601759, -0.395228982, -1.15942049, -0.0859307647, 0.194292933, 0.875832736, -0.115107469, 0.457415611, -0.964612007, -0.782629132, -0.1103893, -1.05462849, 0.820247829, 0.463130325, 0.279095769, 0.338904113, 2.02104354, -0.468864202, -2.20144129, 0.1993002, -0.0506035425, -0.517519057, -0.978829861, -0.439189523, 0.181338429, -0.502816677, 2.41245365, -0.960504353, -0.793117344, -2.28862, 0.251484424, -2.01640654, -0.539454639, -0.275670528, -0.709727943, 1.73887265, 0.994394362, 1.31913686, -0.882418811, 1.12859404, 0.496000946, 0.771405935, 1.02943885, -0.90876323, -0.424317628, 0.862596035, -2.65561914, 1.51332808, 0.553132057, -0.0457039624, 0.220507652, -1.02993524, -0.34994337, 1.10028434, 1.29802203, 2.69622397, -0.0739246681, -0.658552945, -0.514233947, -1.01804185, -0.0778547525, 0.382732421, -0.0342422798, 1.09634686, -0.234215796, -0.347450644, -0.581268489, -1.63263452, -1.56776774, -1.17915797, 1.30142808, 0.895260274, 1.37496412, -1.33221161, -1.96862471, -0.660056293, 0.17581895, 0.498690277, 1.0479722, 0.284279674, 1.74266875, -0.222605675, -0.913079202, -1.68121827, -0.888971329, 0.242117956, -0.888720274, 0.936742485, 1.41232765, -2.36958694, 0.864052296, -2.239604, 0.401499063, 1.22487056, 0.0648561046, -1.27968919, -0.585431218, -0.261645436, -0.182244778, -0.202896833, -0.109882779, 0.213480055, -1.2085737, -0.242019832, 1.51826119, -0.384645432, -0.443836093, 1.07819736, -2.55918455, 1.1813786, -0.631903768, 0.163928568, 0.0963213593, 0.942468107, -0.267594755, -0.678025782, 1.29784584, -2.36417389, 0.0203341823, -1.34792542, -0.761573374, 2.01125669, -0.0445954278, 0.1950697, -1.78156281, -0.729044676, 0.196557403, 0.354757696, 0.616886556, 0.00862789899, 0.527004182, 0.453781903, -1.82974041, 0.0370057225, 0.767902434, 0.589879811, -0.363858819, -0.805626512, -1.11831188, -0.131054014, 1.13307989, -1.95180416, -0.659891725, -1.13980246, 0.784957528, -0.554309607, -0.470637649, -0.216949567, 0.445393264, -0.392388999, -3.04614305, 0.543311894, 0.439042956, -0.219541028, -1.08403659, 0.351780117, 0.379235536, -0.470032871, -0.216731474, -0.930156529, -0.178589091, -1.55042934, 0.417318821, -0.944368482, 0.238103151, -1.40596294, -0.590057671, -0.110489406, -1.66069984, 0.115147874, -0.379147559, -1.74235618, -1.3032428, 0.605120063, 0.895555973, -0.13190864, 0.404761821, 0.22384356, 0.329622984, 1.28598404, -1.50699842, 0.676460743, -0.38200897, -0.224258929, -0.30224973, -0.375147104})},
     {{"alpha", double{0.000199999995}}, {"beta", double{0.5}}, {"bias", double{2}}, {"size", std::int64_t{3}}},
     {f32({5, 5, 5, 5}, {1.24726474, 0.282953113, 0.692060828, 1.58435619, 1.32043862, -0.691028535, 0.671802282, -0.107024252, -0.0729819685, 0.290335596, 0.101854108, 1.0282644, 0.538116813, 0.0860369876, 0.313857198, 0.235938624, 1.05639875, -0.145061657, 0.221357897, -0.603926957, -1.80503452, 0.462162733, 0.611234963, -0.524762332, 1.60481989, -1.0282886, 0.0323559865, -0.132356212, 1.08368027, 1.03889573, 0.109562255, 0.267396599, -0.62774992, -1.40053332, -0.246009305, 0.110554509, 0.869892418, 0.850172877, -0.273867071, -0.213759199, -0.741421938, -1.00398874, -1.20645154, 1.37929785, -0.360372573, -0.309727907, -0.885830402, 0.549744427, -1.14110899, -0.150416672, -0.63315475, 0.273577243, -0.361189961, -0.83477962, -0.0199271273, 0.302868456, 0.0470340252, 0.213876024, -0.448483497, -0.256486207, -0.475469083, -0.254229635, -0.574960768, -1.22057915, 0.125456646, -0.284095287, -1.15260577, 0.327219188, -0.641497135, 0.036730703, 0.515534401, 0.0912022814, 0.805609584, -0.873093426, 0.284496754, -0.484194964, -0.615718603, -0.409293473, -0.220291972, 0.0397139788, -0.823812306, 0.636970103, 0.329268336, -1.08617139, 1.05227363, 1.34042776, 0.833490551, -0.12722303, -0.757038355, 0.7455948, -0.285084546, 0.864326358, 0.147271961, 0.690563321, 0.251984984, 0.499612927, 0.00742448354, 1.26270485, 0.0897354633, 0.28424561, 1.33149958, -0.952968657, -0.898339391, 0.685455143, -0.82950443, 1.37423003, -0.292467982, -0.528523505, 1.35958803, 1.04680514, 1.32040775, 0.640646756, -0.608970642, 1.35051203, -0.189503267, 0.567414701, 0.669781625, -0.109608561, 0.434210062, 0.652087986, 0.266170204, -0.777378082, 0.210874707, 0.937868714, -0.491128385, -0.105807543, -0.307684004, 1.3075403, 0.475375205, 0.288118184, -0.544403493, 0.381296873, -0.476812303, 0.0225071087, -0.449606597, 0.478304923, 0.40768373, -0.147287145, 0.28001824, -0.772876561, -1.05442667, 0.310690671, 0.11785122, 0.449021459, 1.68497562, 0.667828441, -0.645452738, 0.789823711, -0.930453539, -0.326382607, -0.0482537076, 1.21144021, -0.526582181, -0.584367275, -0.0696162432, -0.469140977, 0.796606064, -0.763600945, -0.811298251, -0.309580445, -0.35214293, 1.36426532, 0.671331286, 0.0619073436, -0.866440415, 0.597008884, -0.707244039, -1.09227419, 0.840019405, 0.224089652, 0.651126325, 0.225368723, 0.605843902, -0.46029219, -0.731282771, 0.48195523, -0.568062007, -0.487567157, -0.322103024, 0.0123595456, -0.250298232, -0.972186148, -0.455090821, -1.57201743, 0.442101002, -1.13275707, -0.780851364, 0.0368853472, -0.522943258, 1.09098935, -0.914148986, 0.188830107, -0.0277759749, -0.825858295, 0.370010197, -0.121297956, 0.545730948, 0.582289577, 1.52950275, 0.944985628, -0.261048347, -0.169264585, 0.777554214, 0.463333726, 0.452637851, -1.14326966, -0.0172005557, -0.521855772, 0.197919443, -0.0694007948, 0.643550694, 0.224293858, 0.555972397, -0.329802901, -0.667782843, -0.289938092, -0.0120352041, 0.268100023, 1.59739816, -0.0298801325, -0.675912917, -0.244637728, -0.327800632, 0.34042719, -1.08939338, 0.0447328798, 0.110666685, 0.164173335, -0.422360718, -0.168234766, -1.00688529, -0.348828405, -0.383855671, 0.294190586, -0.817526102, 0.552377224, 1.05671906, -1.46358073, 0.30140844, 0.47863549, -0.450731725, -0.280912876, -0.0939605087, -0.210551724, -0.218504831, -1.18504012, 0.814801812, 0.763388038, -0.575126827, -1.03684044, 0.368445903, -0.407139659, 0.100375995, -0.225783393, 0.488953143, 0.491257757, -0.513061404, -0.97814703, -1.11921561, 0.431600153, -0.840625405, -0.358365208, -0.421644866, -0.0371703953, -1.36903238, 0.133485675, 0.370443791, 0.062518321, -0.219825253, 0.0688722879, 0.282161534, -1.96026766, 1.3829428, 0.2758362, -0.461318225, -0.276435941, 0.349108815, -0.0820978209, -1.43579865, 1.45969081, -0.0781631246, 0.721330822, -0.489318848, 1.08628583, 0.202473953, 0.43050468, -0.739074826, 0.856364906, 0.487766862, 0.920458496, -0.444121748, -0.34013465, 1.6289686, -0.749529064, -0.0961308926, 0.803877175, 0.0690923631, 0.412181377, -0.282447904, 0.261660725, -0.923823893, 1.17241645, -0.0835474655, -0.480917901, 0.471160054, -0.325773835, -0.943396628, -0.952227175, 0.490536988, -0.112821966, -0.0945400968, 0.762012184, -0.796747148, -0.516654491, -0.272130281, 0.0667149276, -0.0298195016, -0.20284006, -0.0435745604, -0.0758759975, -0.50882107, -0.574865162, 0.194110945, -0.62995857, -0.818351984, -0.220815167, -0.111478411, 1.59555912, -0.498286426, 0.666966498, 0.52833277, -0.84061873, 0.54674834, -0.837100565, -1.8800844, 0.428726405, -1.24151433, 0.318846375, -0.483659774, 1.17342281, 0.755535364, -0.320590883, -0.486368865, -0.858460188, -0.311771691, -0.198239028, -0.257869631, 0.110804871, 0.409068346, 0.247237027, -0.540325224, -1.01663661, 0.964757919, -0.48750627, -0.461231142, -0.368531436, -1.30314255, -0.337973982, -0.339158654, 0.43860507, 0.493876725, 0.0026662841, 0.658904493, 0.240389228, -0.0110884188, 0.11379119, -0.134811834, -0.279197842, -0.189311326, -0.797604978, 0.198301718, -0.702231288, 0.59511596, -0.176392689, 0.0349981636, 0.349191844, 0.454879463, -1.11054194, -0.146302596, 0.622340024, -1.20068181, 0.273844928, -1.59478939, -0.723008513, 0.0273156259, -1.17138004, -0.696842611, -1.04070532, 1.16535354, 0.116120696, 0.401129544, -0.15745458, -0.249913394, -1.14292598, -0.206349716, -0.538443327, 0.606632948, 0.806804359, 1.03699028, 0.602837801, -0.423307925, -0.78902477, 0.542017341, 0.251934975, -1.25046277, 0.251350045, 0.57592541, 0.0416626222, -0.130850181, -0.571078539, -1.0227704, 0.565874577, -0.218568698, -0.165076464, 1.2251569, 0.484007716, 0.262206167, 0.100452602, 1.07470977, 1.21585619, 0.657243431, 0.411686152, -1.48094463, 0.0874805525, -0.0919983536, 0.0664333254, 0.666803122, -1.93697608, -0.40256086, 0.190840647, -0.330085278, -1.00185561, 0.614392579, 0.195777521, -0.686656356, 0.222600237, 0.580926776, 0.00374244805, 0.566077948, 0.0553352945, -0.279439092, -0.819801271, -0.0607615635, 0.137368485, 0.619268179, -0.0813865736, 0.323437154, -0.682022393, -0.553391933, -0.0780530497, -0.745708764, 0.579970896, 0.327436239, 0.197344989, 0.23963967, 1.42897701, -0.331518888, -1.55648732, 0.140925825, -0.0357811004, -0.365895987, -0.692092001, -0.310551316, 0.128224194, -0.355543256, 1.70566225, -0.679152071, -0.560801387, -1.61811101, 0.177802339, -1.42571771, -0.381446093, -0.194924384, -0.501835406, 1.22950625, 0.703118384, 0.932733119, -0.623953998, 0.798018575, 0.350723505, 0.545423806, 0.727907658, -0.642531872, -0.300036788, 0.609939933, -1.87757719, 1.07002664, 0.391120195, -0.0323175639, 0.155921668, -0.72819066, -0.24744302, 0.777994633, 0.917734265, 1.90628529, -0.05226909, -0.465661615, -0.363616258, -0.719845772, -0.0550488457, 0.270628482, -0.0242125932, 0.775193036, -0.165599927, -0.245681152, -0.410982221, -1.1543926, -1.10850608, -0.833771229, 0.920197546, 0.63303256, 0.972214699, -0.941987455, -1.39193714, -0.46672678, 0.124322616, 0.352617234, 0.741013944, 0.201008096, 1.23218751, -0.157405332, -0.645623028, -1.18861508, -0.628574789, 0.171201944, -0.628410101, 0.662367165, 0.998598456, -1.67539072, 0.610963702, -1.58345342, 0.283862889, 0.866057158, 0.0458577387, -0.904817879, -0.413926601, -0.185005218, -0.12886256, -0.143452778, -0.07769759, 0.150952905, -0.854564548, -0.17112948, 1.07353008, -0.271969706, -0.313837141, 0.762332737, -1.80933404, 0.835322201, -0.446817458, 0.115913168, 0.0681077391, 0.666379631, -0.189200073, -0.479416758, 0.917554915, -1.67155111, 0.0143777672, -0.953088522, -0.53849107, 1.42206395, -0.031533666, 0.137934491, -1.25968444, -0.515428066, 0.1389862, 0.250844121, 0.436201155, 0.00610049209, 0.372644812, 0.320869356, -1.29371977, 0.0261641201, 0.542963207, 0.417102605, -0.257276058, -0.569656074, -0.790726006, -0.092668958, 0.801158786, -1.37999952, -0.46656695, -0.805907488, 0.555026174, -0.391949356, -0.332750589, -0.153402045, 0.314937443, -0.277441829, -2.15359569, 0.384176344, 0.310448349, -0.15523757, -0.76649344, 0.24873504, 0.268156409, -0.332342833, -0.153252035, -0.657703042, -0.126280457, -1.09627271, 0.295084924, -0.667745531, 0.168364137, -0.994111896, -0.417204857, -0.0781272203, -1.17421281, 0.0814209878, -0.268095791, -1.23196507, -0.921505034, 0.427880466, 0.63324362, -0.093259044, 0.286207646, 0.158280656, 0.233078048, 0.909285128, -1.0655663, 0.478325188, -0.270119488, -0.15857476, -0.213719428, -0.265268296})}},
    {"test_lrn_default", "LRN",
     {f32({5, 5, 5, 5}, {1.76405239, 0.400157213, 0.97873801, 2.24089313, 1.867558, -0.977277875, 0.950088441, -0.151357204, -0.103218853, 0.410598516, 0.144043565, 1.45427346, 0.761037707, 0.121675014, 0.443863243, 0.333674341, 1.49407911, -0.205158263, 0.313067704, -0.854095757, -2.55298972, 0.653618574, 0.864436209, -0.742165029, 2.26975465, -1.45436573, 0.0457585156, -0.187183857, 1.53277922, 1.4693588, 0.15494743, 0.378162533, -0.887785733, -1.98079646, -0.347912163, 0.156348974, 1.23029065, 1.20237982, -0.387326807, -0.302302748, -1.04855299, -1.42001796, -1.70627022, 1.95077538, -0.509652197, -0.438074291, -1.25279534, 0.777490377, -1.6138978, -0.212740287, -0.895466566, 0.386902511, -0.51080513, -1.18063223, -0.028182229, 0.428331882, 0.0665172189, 0.302471906, -0.634322107, -0.362741172, -0.672460437, -0.359553158, -0.813146293, -1.7262826, 0.177426144, -0.401780933, -1.63019836, 0.462782264, -0.907298386, 0.0519453958, 0.729090571, 0.128982916, 1.13940072, -1.23482585, 0.402341634, -0.684810102, -0.870797157, -0.578849673, -0.311552525, 0.0561653413, -1.16514981, 0.900826514, 0.46566245, -1.53624368, 1.48825216, 1.89588916, 1.1787796, -0.179924831, -1.07075262, 1.0544517, -0.403176934, 1.22244501, 0.208274975, 0.976639032, 0.356366396, 0.706573188, 0.0105000203, 1.78587055, 0.126912087, 0.401989371, 1.8831507, -1.34775901, -1.27048504, 0.96939671, -1.17312336, 1.94362116, -0.413618982, -0.747454822, 1.92294204, 1.48051476, 1.86755896, 0.906044662, -0.861225665, 1.91006494, -0.268003374, 0.802456379, 0.947251976, -0.155010089, 0.614079356, 0.9222067, 0.376425534, -1.09940076, 0.298238188, 1.32638586, -0.694567859, -0.14963454, -0.435153544, 1.84926379, 0.672294736, 0.407461822, -0.769916058, 0.539249182, -0.674332678, 0.0318305567, -0.635846078, 0.676433265, 0.576590836, -0.208298758, 0.396006703, -1.09306157, -1.49125755, 0.439391702, 0.166673496, 0.635031462, 2.38314486, 0.944479465, -0.912822247, 1.11701632, -1.31590736, -0.461584598, -0.0682416037, 1.71334267, -0.744754851, -0.826438546, -0.0984525234, -0.663478315, 1.12663591, -1.0799315, -1.14746869, -0.437820047, -0.498032451, 1.92953205, 0.94942081, 0.0875512436, -1.2254355, 0.844362974, -1.00021529, -1.54477108, 1.18802977, 0.316942602, 0.9208588, 0.318727642, 0.856830597, -0.651025593, -1.03424287, 0.681594491, -0.803409636, -0.689549804, -0.455532491, 0.0174791589, -0.353993922, -1.37495124, -0.643618405, -2.22340322, 0.625231445, -1.6020577, -1.10438335, 0.0521650799, -0.739562988, 1.54301465, -1.29285693, 0.267050862, -0.0392828174, -1.16809344, 0.523276687, -0.171546325, 0.771790564, 0.82350415, 2.1632359, 1.33652794, -0.369181842, -0.239379182, 1.09965956, 0.655263722, 0.640131533, -1.616956, -0.0243261252, -0.73803091, 0.279924601, -0.0981503874, 0.9101789, 0.317218214, 0.786327958, -0.466419101, -0.944446266, -0.410049707, -0.0170204137, 0.379151732, 2.25930905, -0.0422571525, -0.955945015, -0.345981777, -0.463595986, 0.481481463, -1.540797, 0.0632619932, 0.156506538, 0.232181042, -0.597316086, -0.23792173, -1.42406094, -0.493319869, -0.542861462, 0.416050047, -1.15618241, 0.781198084, 1.49448454, -2.06998491, 0.426258743, 0.676908016, -0.637437046, -0.397271812, -0.132880583, -0.297790885, -0.309012979, -1.67600381, 1.15233159, 1.07961857, -0.813364267, -1.46642435, 0.521064878, -0.575787961, 0.14195317, -0.319328427, 0.691538751, 0.694749117, -0.725597382, -1.38336396, -1.58293843, 0.610379398, -1.18885922, -0.506816328, -0.596314013, -0.0525672957, -1.93627977, 0.188778594, 0.523891032, 0.0884220898, -0.310886174, 0.0974001661, 0.399046332, -2.77259278, 1.95591235, 0.390093327, -0.6524086, -0.390953362, 0.493741781, -0.11610394, -2.03068447, 2.06449294, -0.110540658, 1.02017272, -0.692049861, 1.53637707, 0.286343694, 0.608843863, -1.0452534, 1.21114528, 0.689818144, 1.30184627, -0.62808758, -0.481027126, 2.30391669, -1.0600158, -0.135949701, 1.13689137, 0.0977249667, 0.582953691, -0.399449021, 0.370055884, -1.3065269, 1.65813065, -0.118164048, -0.680178225, 0.666383088, -0.460719794, -1.33425844, -1.34671748, 0.69377315, -0.159573436, -0.133701563, 1.07774377, -1.12682581, -0.730677724, -0.384879798, 0.0943515897, -0.0421714522, -0.286887199, -0.0616264008, -0.107305273, -0.719604373, -0.81299299, 0.274516344, -0.890915096, -1.15735531, -0.312292248, -0.157667011, 2.2567234, -0.704700291, 0.943260729, 0.74718833, -1.18894494, 0.773252964, -1.18388069, -2.6591723, 0.606319547, -1.75589061, 0.45093447, -0.684010923, 1.65955079, 1.06850934, -0.4533858, -0.687837601, -1.21407735, -0.440922618, -0.280355483, -0.364693552, 0.15670386, 0.57852149, 0.349654466, -0.764143944, -1.43779147, 1.36453187, -0.689449191, -0.652293622, -0.521189332, -1.84306955, -0.477973998, -0.479655802, 0.620358288, 0.698457122, 0.00377088902, 0.931848347, 0.339964986, -0.0156821124, 0.160928175, -0.190653488, -0.394849509, -0.267733544, -1.12801135, 0.280441701, -0.993123591, 0.841631293, -0.249458581, 0.0494949818, 0.49383679, 0.643314481, -1.5706234, -0.206903681, 0.880178928, -1.69810581, 0.387280464, -2.25556421, -1.02250683, 0.0386305526, -1.65671515, -0.985510767, -1.47183502, 1.64813495, 0.164227754, 0.567290306, -0.2226751, -0.353431761, -1.61647415, -0.291837364, -0.761492193, 0.857923925, 1.14110184, 1.46657872, 0.852551937, -0.598653913, -1.11589694, 0.766663194, 0.356292814, -1.76853848, 0.355481803, 0.814519823, 0.0589255877, -0.185053676, -0.80764848, -1.44653475, 0.800297976, -0.309114456, -0.233466655, 1.73272121, 0.684501112, 0.370824993, 0.1420618, 1.51999485, 1.71958935, 0.92950511, 0.582224607, -2.09460306, 0.123721913, -0.130106956, 0.0939532295, 0.943046093, -2.73967719, -0.569312036, 0.269904345, -0.466845542, -1.41690612, 0.86896348, 0.27687192, -0.971104562, 0.31481719, 0.821585715, 0.00529264612, 0.800564826, 0.0782601759, -0.395228982, -1.15942049, -0.0859307647, 0.194292933, 0.875832736, -0.115107469, 0.457415611, -0.964612007, -0.782629132, -0.1103893, -1.05462849, 0.820247829, 0.463130325, 0.279095769, 0.338904113, 2.02104354, -0.468864202, -2.20144129, 0.1993002, -0.0506035425, -0.517519057, -0.978829861, -0.439189523, 0.181338429, -0.502816677, 2.41245365, -0.960504353, -0.793117344, -2.28862, 0.251484424, -2.01640654, -0.539454639, -0.275670528, -0.709727943, 1.73887265, 0.994394362, 1.31913686, -0.882418811, 1.12859404, 0.496000946, 0.771405935, 1.02943885, -0.90876323, -0.424317628, 0.862596035, -2.65561914, 1.51332808, 0.553132057, -0.0457039624, 0.220507652, -1.02993524, -0.34994337, 1.10028434, 1.29802203, 2.69622397, -0.0739246681, -0.658552945, -0.514233947, -1.01804185, -0.0778547525, 0.382732421, -0.0342422798, 1.09634686, -0.234215796, -0.347450644, -0.581268489, -1.63263452, -1.56776774, -1.17915797, 1.30142808, 0.895260274, 1.37496412, -1.33221161, -1.96862471, -0.660056293, 0.17581895, 0.498690277, 1.0479722, 0.284279674, 1.74266875, -0.222605675, -0.913079202, -1.68121827, -0.888971329, 0.242117956, -0.888720274, 0.936742485, 1.41232765, -2.36958694, 0.864052296, -2.239604, 0.401499063, 1.22487056, 0.0648561046, -1.27968919, -0.585431218, -0.261645436, -0.182244778, -0.202896833, -0.109882779, 0.213480055, -1.2085737, -0.242019832, 1.51826119, -0.384645432, -0.443836093, 1.07819736, -2.55918455, 1.1813786, -0.631903768, 0.163928568, 0.0963213593, 0.942468107, -0.267594755, -0.678025782, 1.29784584, -2.36417389, 0.0203341823, -1.34792542, -0.761573374, 2.01125669, -0.0445954278, 0.1950697, -1.78156281, -0.729044676, 0.196557403, 0.354757696, 0.616886556, 0.00862789899, 0.527004182, 0.453781903, -1.82974041, 0.0370057225, 0.767902434, 0.589879811, -0.363858819, -0.805626512, -1.11831188, -0.131054014, 1.13307989, -1.95180416, -0.659891725, -1.13980246, 0.784957528, -0.554309607, -0.470637649, -0.216949567, 0.445393264, -0.392388999, -3.04614305, 0.543311894, 0.439042956, -0.219541028, -1.08403659, 0.351780117, 0.379235536, -0.470032871, -0.216731474, -0.930156529, -0.178589091, -1.55042934, 0.417318821, -0.944368482, 0.238103151, -1.40596294, -0.590057671, -0.110489406, -1.66069984, 0.115147874, -0.379147559, -1.74235618, -1.3032428, 0.605120063, 0.895555973, -0.13190864, 0.404761821, 0.22384356, 0.329622984, 1.28598404, -1.50699842, 0.676460743, -0.38200897, -0.224258929, -0.30224973, -0.375147104})},
     {{"size", std::int64_t{3}}},
     {f32({5, 5, 5, 5}, {1.76382196, 0.400155604, 0.978713751, 2.24048018, 1.86729443, -0.977253973, 0.950063646, -0.151354134, -0.103208706, 0.410595536, 0.144043386, 1.4541415, 0.760999262, 0.121674523, 0.443860024, 0.333664238, 1.49392045, -0.205143124, 0.313037127, -0.854074597, -2.55256152, 0.65358603, 0.864407063, -0.742106557, 2.26945972, -1.45414662, 0.0457581617, -0.187177986, 1.5324434, 1.4691515, 0.15494293, 0.378152609, -0.887765706, -1.98058164, -0.347908527, 0.156347036, 1.23017514, 1.20229912, -0.387296379, -0.302300334, -1.04851699, -1.41977286, -1.70613515, 1.95054495, -0.509639561, -0.437994987, -1.25273228, 0.777438819, -1.61370885, -0.212711811, -0.895390809, 0.386893749, -0.510797083, -1.18051898, -0.0281807035, 0.428315133, 0.0665156245, 0.302463621, -0.63421613, -0.362718821, -0.67239207, -0.359525889, -0.813102841, -1.72609806, 0.177420661, -0.401766658, -1.62994695, 0.462745637, -0.907171726, 0.0519448891, 0.729068339, 0.12897779, 1.13925564, -1.23469794, 0.402337939, -0.684727669, -0.87073791, -0.578817725, -0.31153357, 0.0561634079, -1.16499496, 0.900804281, 0.465652406, -1.53599572, 1.48808324, 1.89553213, 1.1787107, -0.179918379, -1.0705446, 1.05441964, -0.403167188, 1.22229075, 0.208273515, 0.976586521, 0.356357694, 0.706552446, 0.010499699, 1.78566623, 0.126901612, 0.401981264, 1.88296175, -1.34767222, -1.27042305, 0.969371617, -1.17308295, 1.94337165, -0.413608819, -0.747440279, 1.92265093, 1.48035169, 1.86722839, 0.905994654, -0.861209035, 1.90983593, -0.267995447, 0.802440226, 0.947195292, -0.155009836, 0.614058912, 0.922184169, 0.376419514, -1.09936762, 0.29821372, 1.32632709, -0.694556653, -0.149634436, -0.435119569, 1.8490802, 0.672275662, 0.407460034, -0.76989615, 0.539228141, -0.67430532, 0.0318295099, -0.635836601, 0.676421344, 0.576532423, -0.20829384, 0.396005094, -1.0929879, -1.49114799, 0.439378619, 0.166663438, 0.635002673, 2.38280058, 0.944438398, -0.912800908, 1.116961, -1.31583643, -0.461569786, -0.0682407692, 1.71318138, -0.744672, -0.82641089, -0.0984520912, -0.663459122, 1.12653863, -1.07987654, -1.14728916, -0.437809229, -0.497991741, 1.92927766, 0.949398279, 0.0875496864, -1.22527993, 0.84426564, -1.0001837, -1.54467785, 1.18793535, 0.316894621, 0.92081809, 0.318715453, 0.856773615, -0.650914371, -1.03416359, 0.681584179, -0.803336561, -0.68951124, -0.455517441, 0.0174789764, -0.353965789, -1.37484252, -0.643584251, -2.22305107, 0.625222206, -1.60191178, -1.10424423, 0.052163098, -0.739548683, 1.54283059, -1.29277444, 0.26704371, -0.0392803326, -1.16786337, 0.523271739, -0.171538636, 0.771774828, 0.823470652, 2.16294742, 1.3363533, -0.369176239, -0.239374846, 1.09961188, 0.65524745, 0.640124142, -1.61676323, -0.0243248269, -0.738007784, 0.279888242, -0.0981461257, 0.910087764, 0.317190051, 0.786231518, -0.466408044, -0.94435823, -0.410026699, -0.0170203168, 0.379150182, 2.25893879, -0.0422567613, -0.95585531, -0.345964134, -0.463572115, 0.481414437, -1.54055381, 0.0632617772, 0.156506225, 0.232173711, -0.597304344, -0.237918973, -1.42389584, -0.493316859, -0.542850077, 0.416047454, -1.15614355, 0.78117007, 1.49439728, -2.06973124, 0.426254481, 0.676885188, -0.637427866, -0.397270262, -0.132880047, -0.297752231, -0.309012234, -1.67584777, 1.15228987, 1.07958138, -0.813346148, -1.46625853, 0.521059334, -0.575779676, 0.141953051, -0.319294691, 0.691456795, 0.694740593, -0.72556901, -1.38328123, -1.58274579, 0.610372484, -1.18880618, -0.506799221, -0.596286833, -0.0525666699, -1.93601644, 0.188776568, 0.523884416, 0.0884103477, -0.310876697, 0.097400099, 0.399031878, -2.77205944, 1.95570862, 0.390090317, -0.652399421, -0.39093253, 0.493700773, -0.116103798, -2.03044653, 2.06422544, -0.110538706, 1.02008736, -0.691977084, 1.53617179, 0.286340266, 0.608816445, -1.04518783, 1.21105158, 0.689800739, 1.30166423, -0.628080666, -0.481021047, 2.30360579, -1.05998349, -0.135949567, 1.13683534, 0.0977045521, 0.582891941, -0.399437964, 0.370038271, -1.306463, 1.65800548, -0.118148923, -0.680091798, 0.666289866, -0.460710794, -1.33411717, -1.3466202, 0.693699539, -0.159544811, -0.133699045, 1.0776, -1.12674308, -0.730650723, -0.384835571, 0.0943479463, -0.0421709903, -0.286845148, -0.0616223961, -0.10730467, -0.719570398, -0.812976599, 0.274513334, -0.890886426, -1.15730906, -0.312273592, -0.157647938, 2.25633025, -0.704675019, 0.943219244, 0.747168899, -1.18874907, 0.773202002, -1.18381822, -2.65867496, 0.606306314, -1.75570428, 0.450908065, -0.683991849, 1.65943027, 1.06847787, -0.453383058, -0.687825382, -1.21403027, -0.440906316, -0.280350745, -0.36467734, 0.156700701, 0.578504264, 0.349641681, -0.76413089, -1.43771625, 1.36429453, -0.689432442, -0.652272165, -0.521178544, -1.84284794, -0.477964133, -0.479636252, 0.620242655, 0.698442221, 0.00377059868, 0.931823373, 0.339960039, -0.015681034, 0.160923496, -0.190652326, -0.39484331, -0.267723203, -1.1279701, 0.280440599, -0.993095756, 0.841615856, -0.249456108, 0.049494829, 0.49382937, 0.643287778, -1.57050359, -0.206902817, 0.880093098, -1.69797814, 0.387272626, -2.25527716, -1.0224793, 0.038629923, -1.65651476, -0.98547107, -1.47175181, 1.64802074, 0.164215326, 0.5672791, -0.222674072, -0.35343045, -1.61627507, -0.291815162, -0.761464715, 0.857900798, 1.14093959, 1.46649933, 0.852536082, -0.598644793, -1.11582577, 0.766460836, 0.356288433, -1.76836264, 0.355453104, 0.814462364, 0.0589169785, -0.185048342, -0.807616234, -1.4463563, 0.800252259, -0.309096992, -0.233446762, 1.7325896, 0.684484899, 0.370810807, 0.142061263, 1.51980639, 1.71942556, 0.929471314, 0.582205951, -2.09425664, 0.123713315, -0.130104512, 0.0939497575, 0.942979872, -2.73910832, -0.569304526, 0.269881994, -0.466793895, -1.41680372, 0.868841767, 0.276870906, -0.97106576, 0.314797819, 0.821538985, 0.00529260747, 0.800550222, 0.0782537982, -0.395165354, -1.15935087, -0.0859293491, 0.194256097, 0.875749826, -0.115093254, 0.457406014, -0.96448195, -0.782607019, -0.110380881, -1.05457294, 0.820180178, 0.463031977, 0.279084057, 0.338900447, 2.02079606, -0.468825698, -2.20108747, 0.199298725, -0.0506014079, -0.517423093, -0.978733838, -0.43918407, 0.18133536, -0.502812862, 2.41202927, -0.960447013, -0.793080747, -2.28822207, 0.251433492, -2.01620078, -0.539442062, -0.275661796, -0.709689796, 1.73874044, 0.994342208, 1.31905735, -0.882396936, 1.12855601, 0.495996445, 0.771315634, 1.02940595, -0.908634424, -0.424315304, 0.862579882, -2.65513325, 1.51320529, 0.553125203, -0.0457039252, 0.220505998, -1.0297581, -0.34993422, 1.10023379, 1.29779744, 2.69572997, -0.0739171505, -0.658541024, -0.514229596, -1.01800263, -0.0778488591, 0.38272348, -0.0342415273, 1.09625936, -0.234182596, -0.347443104, -0.581190705, -1.63251936, -1.56761265, -1.17911696, 1.3013196, 0.895234644, 1.37489676, -1.33215141, -1.96843207, -0.660048902, 0.175818607, 0.498668998, 1.04794192, 0.284262717, 1.74252999, -0.22260429, -0.913033724, -1.68082428, -0.888922811, 0.242115185, -0.888698876, 0.936721742, 1.41218352, -2.36924696, 0.864023685, -2.23920989, 0.401414603, 1.22474933, 0.064850904, -1.27956414, -0.585355282, -0.261632621, -0.182236373, -0.202860877, -0.109880097, 0.213479444, -1.20851827, -0.242010549, 1.51817071, -0.384612143, -0.443831056, 1.07805347, -2.55858493, 1.18129659, -0.631891012, 0.163924679, 0.0963176638, 0.942370713, -0.267556608, -0.677983582, 1.2975049, -2.36380839, 0.0203327592, -1.34784329, -0.761525333, 2.01102495, -0.0445952937, 0.195068404, -1.78141284, -0.728865683, 0.196555555, 0.354741931, 0.616879046, 0.00862714835, 0.52699697, 0.453775674, -1.82952404, 0.0369996168, 0.767847717, 0.589868367, -0.363835484, -0.805609703, -1.11822724, -0.131053522, 1.13297451, -1.95151913, -0.659792125, -1.13968682, 0.784909546, -0.554295361, -0.470551759, -0.216940075, 0.445386589, -0.392348498, -3.0453949, 0.543305159, 0.439038932, -0.219538093, -1.08395994, 0.351756632, 0.379227906, -0.46998924, -0.216730937, -0.930120587, -0.178586766, -1.550331, 0.417310268, -0.944317937, 0.238102704, -1.40584826, -0.589996338, -0.110488169, -1.66053164, 0.115146063, -0.379143298, -1.74221432, -1.30318594, 0.605111539, 0.895534635, -0.131878003, 0.404757202, 0.223842204, 0.329621673, 1.28589308, -1.5069083, 0.67645061, -0.382005453, -0.224258393, -0.302242517, -0.375145495})}},
    };
    // clang-format on
}
}  // namespace

}  // namespace ops_nn_test
