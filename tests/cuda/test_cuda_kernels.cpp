// CUDA reference kernels against the CPU reference kernels (spec::evaluate) on
// random shapes from a seeded RNG: broadcasting, strided views (transposed,
// reversed slices), degenerate dims, large sizes; f16, bf16, f32, f64 where
// the op takes them, at GraphNet level t = -5 of each dtype. Reductions must
// also reproduce bit for bit. Exits 77 (CTest: skipped) without a GPU; each
// family runs as its own CTest case ("cuda: <family>").
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include <tensoracle/accuracy/compare.hpp>
#include <tensoracle/core/rng.hpp>
#include <tensoracle/cuda/graph.hpp>
#include <tensoracle/cuda/ops.hpp>
#include <tensoracle/graph/interpreter.hpp>
#include <tensoracle/ops/registry.hpp>

namespace to = tensoracle;
namespace tc = tensoracle::cuda;
using to::dtype;
using to::shape_type;
using to::spec::attribute_map;

namespace {

constexpr double level = -5.0;
const std::vector<dtype> floating{dtype::f32, dtype::f64, dtype::f16, dtype::bf16};

to::tensor random_tensor(to::rng& r, dtype d, const shape_type& shape, double lo = -3.0, double hi = 3.0) {
    auto a = to::array<double>::from_shape(shape);
    for (auto& v : a) v = r.uniform(lo, hi);
    return to::tensor(a).cast(d);
}

shape_type random_shape(to::rng& r, std::size_t max_rank = 4, std::size_t max_dim = 6) {
    shape_type s(r.below(max_rank + 1));
    for (auto& d : s) d = 1 + r.below(max_dim);
    return s;
}

std::vector<to::tensor> cpu(std::string_view op, const std::vector<const to::tensor*>& in, const attribute_map& a = {}) {
    return to::spec::evaluate(to::ops::get_op(op), in, a);
}

/// Device result vs CPU reference at level t of the dtype (exact for integers and bool).
void check_close(const tc::device_tensor& got_dev, const to::tensor& want, const std::string& label, double t = level) {
    const auto got = tc::to_host(got_dev);
    const auto rep = to::compare(got, want);
    INFO(label);
    INFO(rep.describe(to::tolerance_level(want.element_dtype(), t)));
    CHECK(rep.passes(to::level{t}));
}

bool accepts(std::string_view op, std::size_t input, dtype d) {
    return to::ops::get_op(op).inputs[input].types.contains(d);
}

std::pair<double, double> input_range(std::string_view op) {
    const auto& e = to::ops::get_op(op);
    if (e.hints != nullptr) {
        const auto h = e.hints();
        for (const auto& in : h.inputs) {
            if (in.index == 0 && in.range) return *in.range;
        }
    }
    return {-3.0, 3.0};
}

/// A view of a fresh device tensor with the logical contents of `t`, made
/// non-contiguous on purpose (stored transposed, or reversed along axis 0).
tc::device_tensor strided_copy_of(to::rng& r, const to::tensor& t) {
    if (t.rank() >= 2 && r.bernoulli(0.5)) {
        // Store the transpose of the last two axes contiguously, then view it transposed back.
        std::vector<std::size_t> perm(t.rank());
        for (std::size_t k = 0; k < perm.size(); ++k) perm[k] = k;
        std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
        const auto stored = tc::contiguous(tc::to_device(t).permuted(perm));
        return stored.permuted(perm);
    }
    if (t.rank() >= 1 && t.shape()[0] > 0) {
        const auto n = static_cast<std::int64_t>(t.shape()[0]);
        const auto stored = tc::contiguous(tc::to_device(t).sliced(0, n - 1, -1, t.shape()[0]));
        return stored.sliced(0, n - 1, -1, t.shape()[0]);  // reversing twice gives t back
    }
    return tc::to_device(t);
}

}  // namespace

TEST_CASE("cuda elementwise: device tensors round-trip, views gather the right elements") {
    to::rng r(1);
    for (const dtype d : {dtype::f32, dtype::f16, dtype::bf16, dtype::f64, dtype::i64, dtype::boolean}) {
        const auto t = random_tensor(r, d, {3, 5, 4});
        CHECK(tc::to_host(tc::to_device(t)).identical(t));
        const auto v = strided_copy_of(r, t);
        CHECK_FALSE(v.contiguous());
        CHECK(tc::to_host(v).identical(t));
        CHECK(tc::to_host(tc::contiguous(v)).identical(t));
    }
    const auto empty = tc::to_device(to::tensor::zeros(dtype::f32, {0, 3}));
    CHECK(tc::to_host(empty).shape() == shape_type{0, 3});
}

TEST_CASE("cuda elementwise: unary ops match the CPU reference") {
    to::rng r(2);
    for (const auto op : tc::unary_op_types()) {
        const auto [lo, hi] = input_range(op);
        for (const dtype d : floating) {
            if (!accepts(op, 0, d)) continue;
            for (int trial = 0; trial < 4; ++trial) {
                const auto shape = trial == 3 ? shape_type{1u << 18} : random_shape(r);
                const auto x = random_tensor(r, d, shape, lo, hi);
                const auto dx = trial == 1 ? strided_copy_of(r, x) : tc::to_device(x);
                attribute_map a;
                tc::elementwise_attributes e;
                if (op == "LeakyRelu" || op == "Elu" || op == "ThresholdedRelu") {
                    a["alpha"] = 0.3;
                    e.alpha = 0.3f;
                    e.alpha_given = true;
                }
                check_close(tc::unary(op, dx, e), cpu(op, {&x}, a)[0],
                            std::string(op) + " " + std::string(name(d)) + to::to_string(shape));
            }
        }
    }
    // Integer branches of the shared formulas (wrapping Abs/Neg of INT_MIN).
    const to::tensor xi(to::array<std::int32_t>{std::numeric_limits<std::int32_t>::min(), -5, 0, 7});
    for (const auto* op : {"Abs", "Neg", "Sign", "Relu"}) {
        check_close(tc::unary(op, tc::to_device(xi)), cpu(op, {&xi})[0], op);
    }
}

TEST_CASE("cuda elementwise: binary ops broadcast as the CPU reference does") {
    to::rng r(3);
    for (const auto op : tc::binary_op_types()) {
        for (const dtype d : {dtype::f32, dtype::f64, dtype::f16, dtype::bf16, dtype::i32, dtype::i64}) {
            if (!accepts(op, 0, d)) continue;
            const bool integral = !to::info(d).is_floating;
            if (integral && (op == "Div" || op == "Pow" || op == "Mod")) continue;  // CPU-only here
            for (int trial = 0; trial < 4; ++trial) {
                const auto out = trial == 3 ? shape_type{512, 513} : random_shape(r);
                shape_type sa = out, sb = out;
                for (auto* s : {&sa, &sb}) {
                    s->erase(s->begin(), s->begin() + static_cast<std::ptrdiff_t>(r.below(s->size() + 1)));
                    for (auto& dim : *s) {
                        if (r.bernoulli(0.3)) dim = 1;
                    }
                }
                double lo = -3, hi = 3, blo = -3, bhi = 3;
                if (op == "Pow") lo = 0.5, hi = 2, blo = -2, bhi = 2;
                if (op == "Div" || op == "Mod") blo = 0.5, bhi = 4;
                auto a = random_tensor(r, d, sa, lo, hi), b = random_tensor(r, d, sb, blo, bhi);
                if (op == "Equal" || integral) {  // equal elements must occur; integers from a small range
                    a = random_tensor(r, dtype::i32, sa, -3, 3).cast(d);
                    b = random_tensor(r, dtype::i32, sb, -3, 3).cast(d);
                }
                attribute_map at;
                tc::elementwise_attributes e;
                if (op == "Mod") {
                    at["fmod"] = std::int64_t{1};
                    e.fmod = 1;
                }
                const auto da = trial == 1 ? strided_copy_of(r, a) : tc::to_device(a);
                check_close(tc::binary(op, da, tc::to_device(b), e), cpu(op, {&a, &b}, at)[0],
                            std::string(op) + " " + std::string(name(d)) + to::to_string(sa) + to::to_string(sb));
            }
        }
    }
}

TEST_CASE("cuda elementwise: Where, Clip and Cast") {
    to::rng r(4);
    for (int trial = 0; trial < 12; ++trial) {
        const auto shape = random_shape(r);
        const dtype d = floating[r.below(floating.size())];
        const auto c = random_tensor(r, dtype::f32, shape).cast(dtype::boolean);
        shape_type sx = shape;
        if (!sx.empty()) sx[0] = 1;
        const auto x = random_tensor(r, d, sx), y = random_tensor(r, d, {});
        check_close(tc::where(tc::to_device(c), tc::to_device(x), tc::to_device(y)), cpu("Where", {&c, &x, &y})[0],
                    "Where " + std::string(name(d)));
        const auto lo = random_tensor(r, d, {}, -2, 0), hi = random_tensor(r, d, {}, 0, 2);
        check_close(tc::clip(strided_copy_of(r, x), lo.value_as_double(0), hi.value_as_double(0)),
                    cpu("Clip", {&x, &lo, &hi})[0], "Clip " + std::string(name(d)));
        check_close(tc::clip(tc::to_device(x), std::nullopt, hi.value_as_double(0)), cpu("Clip", {&x, nullptr, &hi})[0],
                    "Clip max only");
    }
    // Cast between every pair, with values that round, truncate, saturate and are NaN.
    const to::tensor src(to::array<double>{0.0, -0.0, 1.5, -2.5, 2.5000001, 65519.0, 70000.0, -3e9, 3e9, 1e20, 1e-8,
                                           std::numeric_limits<double>::quiet_NaN(),
                                           std::numeric_limits<double>::infinity()});
    const std::vector<dtype> all{dtype::f16, dtype::bf16, dtype::f32, dtype::f64, dtype::i32, dtype::i64, dtype::boolean};
    for (const dtype from : all) {
        const auto x = src.cast(from);
        for (const dtype to_d : all) {
            const auto got = tc::to_host(tc::cast(tc::to_device(x), to_d));
            const auto want = cpu("Cast", {&x}, {{"to", static_cast<std::int64_t>(to::info(to_d).onnx_type)}})[0];
            INFO(name(from), " -> ", name(to_d));
            CHECK(to::compare(got, want).passes(to::tolerance{0.0, 0.0}));  // bit-exact rules
        }
    }
}

TEST_CASE("cuda reductions: every kind over random axes, and bit-for-bit reproducible") {
    to::rng r(5);
    const std::vector<std::pair<tc::reduce_kind, const char*>> kinds{
        {tc::reduce_kind::sum, "ReduceSum"},       {tc::reduce_kind::mean, "ReduceMean"},
        {tc::reduce_kind::max, "ReduceMax"},       {tc::reduce_kind::min, "ReduceMin"},
        {tc::reduce_kind::prod, "ReduceProd"},     {tc::reduce_kind::log_sum_exp, "ReduceLogSumExp"},
        {tc::reduce_kind::log_sum, "ReduceLogSum"}, {tc::reduce_kind::l1, "ReduceL1"},
        {tc::reduce_kind::l2, "ReduceL2"},         {tc::reduce_kind::sum_square, "ReduceSumSquare"}};
    for (const auto& [kind, op] : kinds) {
        for (const dtype d : floating) {
            if (!accepts(op, 0, d)) continue;
            for (int trial = 0; trial < 5; ++trial) {
                const auto shape = random_shape(r, 4, 9);
                const auto rank = static_cast<std::int64_t>(shape.size());
                std::vector<std::int64_t> axes;
                for (std::int64_t k = 0; k < rank; ++k) {
                    if (r.bernoulli(0.5)) axes.push_back(r.bernoulli(0.5) ? k : k - rank);
                }
                const bool keep = r.bernoulli(0.5);
                // Prod and LogSum stay finite and positive near 1.
                const double lo = (kind == tc::reduce_kind::prod || kind == tc::reduce_kind::log_sum) ? 0.5 : -3.0;
                const double hi = (kind == tc::reduce_kind::prod) ? 1.5 : 3.0;
                const auto x = random_tensor(r, d, shape, lo, hi);
                auto at = to::array<std::int64_t>::from_shape({axes.size()});
                for (std::size_t i = 0; i < axes.size(); ++i) at.data()[i] = axes[i];
                const to::tensor axes_tensor(at);
                const auto& entry = to::ops::get_op(op);
                attribute_map a{{"keepdims", std::int64_t{keep ? 1 : 0}}};
                std::vector<const to::tensor*> in{&x};
                if (entry.inputs.size() > 1) {
                    if (!axes.empty()) in.push_back(&axes_tensor);
                } else if (!axes.empty()) {
                    a["axes"] = axes;
                }
                const auto dx = trial % 2 == 1 ? strided_copy_of(r, x) : tc::to_device(x);
                const auto got = tc::reduce(kind, dx, axes, keep);
                check_close(got, cpu(op, in, a)[0], std::string(op) + " " + std::string(name(d)) + to::to_string(shape));
                CHECK(tc::to_host(tc::reduce(kind, dx, axes, keep)).identical(tc::to_host(got)));
            }
        }
    }
    // Large reductions (2^22 elements; several chunks per output): the CPU's f32
    // kernel accumulates sequentially in float, whose error at this size exceeds
    // level -5 itself, so the reference is the CPU kernel on the data in f64.
    const auto big = random_tensor(r, dtype::f32, {1024, 4096}, -1.0, 1.0);
    const auto big64 = big.cast(dtype::f64);
    const auto dbig = tc::to_device(big);
    for (const std::vector<std::int64_t>& axes : {std::vector<std::int64_t>{}, {0}, {1}}) {
        for (const auto& [kind, op] : {std::pair{tc::reduce_kind::sum, "ReduceSum"}, {tc::reduce_kind::mean, "ReduceMean"},
                                       {tc::reduce_kind::max, "ReduceMax"}, {tc::reduce_kind::l2, "ReduceL2"}}) {
            const auto got = tc::reduce(kind, dbig, axes, false);
            std::vector<const to::tensor*> in{&big64};
            auto at = to::array<std::int64_t>::from_shape({axes.size()});
            for (std::size_t i = 0; i < axes.size(); ++i) at.data()[i] = axes[i];
            const to::tensor axes_tensor(at);
            attribute_map a{{"keepdims", std::int64_t{0}}};
            if (to::ops::get_op(op).inputs.size() > 1) {
                if (!axes.empty()) in.push_back(&axes_tensor);
            } else if (!axes.empty()) {
                a["axes"] = axes;
            }
            check_close(got, cpu(op, in, a)[0].cast(dtype::f32), std::string(op) + " large, axes " + std::to_string(axes.size()));
            CHECK(tc::to_host(tc::reduce(kind, dbig, axes, false)).identical(tc::to_host(got)));
        }
    }
}

TEST_CASE("cuda softmax: Softmax and LogSoftmax along every axis") {
    to::rng r(6);
    for (const dtype d : floating) {
        if (!accepts("Softmax", 0, d)) continue;
        for (int trial = 0; trial < 8; ++trial) {
            auto shape = random_shape(r, 4, 9);
            if (shape.empty()) shape = {5};
            if (trial == 7) shape = {64, 4096};
            const auto rank = static_cast<std::int64_t>(shape.size());
            const std::int64_t axis = static_cast<std::int64_t>(r.below(shape.size())) - (r.bernoulli(0.5) ? rank : 0);
            const auto x = random_tensor(r, d, shape, -5, 5);
            const auto dx = trial % 2 ? strided_copy_of(r, x) : tc::to_device(x);
            for (const bool log : {false, true}) {
                const char* op = log ? "LogSoftmax" : "Softmax";
                check_close(tc::softmax(dx, axis, log), cpu(op, {&x}, {{"axis", axis}})[0],
                            std::string(op) + " " + std::string(name(d)) + to::to_string(shape));
            }
        }
    }
}

TEST_CASE("cuda products: MatMul and Gemm through cuBLAS") {
    to::rng r(7);
    for (const dtype d : floating) {
        if (!accepts("MatMul", 0, d)) continue;
        for (int trial = 0; trial < 10; ++trial) {
            const std::size_t m = 1 + r.below(40), k = r.below(70), n = 1 + r.below(40);
            shape_type sa{m, k}, sb{k, n};
            if (trial % 3 == 1) {  // batch broadcasting: (2, 1, 3, m, k) x (4, 1, k, n)
                sa.insert(sa.begin(), {2, 1, 3});
                sb.insert(sb.begin(), {4, 1});
            } else if (trial % 3 == 2) {
                sa.insert(sa.begin(), 3);
            }
            if (trial == 4) sa = {k};  // 1-D operands
            if (trial == 5) sb = {k};
            const auto a = random_tensor(r, d, sa, -1, 1), b = random_tensor(r, d, sb, -1, 1);
            check_close(tc::matmul(trial == 7 ? strided_copy_of(r, a) : tc::to_device(a), tc::to_device(b)),
                        cpu("MatMul", {&a, &b})[0], "MatMul " + std::string(name(d)) + to::to_string(sa) + to::to_string(sb));
        }
        for (int trial = 0; trial < 8; ++trial) {
            const std::size_t m = 1 + r.below(30), k = 1 + r.below(50), n = 1 + r.below(30);
            const bool ta = r.bernoulli(0.5), tb = r.bernoulli(0.5);
            const auto a = random_tensor(r, d, ta ? shape_type{k, m} : shape_type{m, k}, -1, 1);
            const auto b = random_tensor(r, d, tb ? shape_type{n, k} : shape_type{k, n}, -1, 1);
            const shape_type sc = trial % 3 == 0 ? shape_type{n} : trial % 3 == 1 ? shape_type{m, 1} : shape_type{m, n};
            const auto c = random_tensor(r, d, sc, -1, 1);
            const double alpha = r.uniform(-2, 2), beta = trial == 5 ? 0.0 : r.uniform(-2, 2);
            const attribute_map at{{"alpha", alpha}, {"beta", beta}, {"transA", std::int64_t{ta}}, {"transB", std::int64_t{tb}}};
            const auto dc = tc::to_device(c);
            check_close(tc::gemm(tc::to_device(a), tc::to_device(b), &dc, static_cast<float>(alpha), static_cast<float>(beta), ta, tb),
                        cpu("Gemm", {&a, &b, &c}, at)[0], "Gemm " + std::string(name(d)));
        }
    }
    // TF32 is a user's choice: within TF32's own error of the reference, and really not pedantic f32.
    int major = 0;
    REQUIRE(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess);
    const auto a = random_tensor(r, dtype::f32, {128, 256}, -1, 1), b = random_tensor(r, dtype::f32, {256, 96}, -1, 1);
    const auto want = cpu("MatMul", {&a, &b})[0];
    const auto tf32 = tc::matmul(tc::to_device(a), tc::to_device(b), tc::gemm_precision::tf32);
    check_close(tf32, want, "MatMul TF32 at level -2", -2.0);
    if (major >= 8) CHECK_FALSE(to::compare(tc::to_host(tf32), want).passes(to::level{-5}));
    check_close(tc::matmul(tc::to_device(a), tc::to_device(b), tc::gemm_precision::pedantic), want, "MatMul pedantic");
}

TEST_CASE("cuda conv: 2-D convolution with groups, strides, dilations and pads") {
    to::rng r(8);
    for (const dtype d : floating) {
        if (!accepts("Conv", 0, d)) continue;
        for (int trial = 0; trial < 6; ++trial) {
            const std::int64_t group = 1 + static_cast<std::int64_t>(r.below(2));
            const auto cg = 1 + r.below(4), mg = 1 + r.below(4);
            const auto kh = 1 + r.below(3), kw = 1 + r.below(3);
            const auto x = random_tensor(r, d, {1 + r.below(2), cg * group, 5 + r.below(8), 5 + r.below(8)}, -1, 1);
            const auto w = random_tensor(r, d, {mg * group, cg, kh, kw}, -1, 1);
            const auto bias = random_tensor(r, d, {mg * group}, -1, 1);
            const std::vector<std::int64_t> strides{1 + static_cast<std::int64_t>(r.below(2)), 1 + static_cast<std::int64_t>(r.below(2))};
            const std::vector<std::int64_t> dil{1 + static_cast<std::int64_t>(r.below(2)), 1};
            const std::vector<std::int64_t> pads{static_cast<std::int64_t>(r.below(2)), static_cast<std::int64_t>(r.below(2)),
                                                 static_cast<std::int64_t>(r.below(2)), static_cast<std::int64_t>(r.below(2))};
            const attribute_map at{{"group", group}, {"strides", strides}, {"dilations", dil}, {"pads", pads},
                                   {"kernel_shape", std::vector<std::int64_t>{static_cast<std::int64_t>(kh), static_cast<std::int64_t>(kw)}}};
            const bool with_bias = trial % 2 == 0;
            std::vector<const to::tensor*> in{&x, &w};
            if (with_bias) in.push_back(&bias);
            const auto want = cpu("Conv", in, at)[0];
            tc::window_2d win;
            win.kernel[0] = static_cast<std::int64_t>(kh);
            win.kernel[1] = static_cast<std::int64_t>(kw);
            for (int k = 0; k < 2; ++k) {
                win.strides[k] = strides[static_cast<std::size_t>(k)];
                win.dilations[k] = dil[static_cast<std::size_t>(k)];
            }
            for (int k = 0; k < 4; ++k) win.pads[k] = pads[static_cast<std::size_t>(k)];
            const auto db = tc::to_device(bias);
            check_close(tc::conv2d(trial == 3 ? strided_copy_of(r, x) : tc::to_device(x), tc::to_device(w),
                                   with_bias ? &db : nullptr, win, group, want.shape()),
                        want, "Conv " + std::string(name(d)) + to::to_string(x.shape()) + to::to_string(w.shape()));
        }
    }
}

TEST_CASE("cuda pooling: MaxPool and AveragePool 2-D") {
    to::rng r(9);
    for (const dtype d : floating) {
        if (!accepts("MaxPool", 0, d) || !accepts("AveragePool", 0, d)) continue;
        for (int trial = 0; trial < 8; ++trial) {
            const auto x = random_tensor(r, d, {1 + r.below(2), 1 + r.below(3), 4 + r.below(9), 4 + r.below(9)});
            const std::vector<std::int64_t> k{2 + static_cast<std::int64_t>(r.below(2)), 2 + static_cast<std::int64_t>(r.below(2))};
            const std::vector<std::int64_t> s{1 + static_cast<std::int64_t>(r.below(2)), 1 + static_cast<std::int64_t>(r.below(2))};
            const std::vector<std::int64_t> p{static_cast<std::int64_t>(r.below(2)), 0, static_cast<std::int64_t>(r.below(2)), 1};
            const std::int64_t ceil = trial % 2, include = trial % 3 == 0 ? 1 : 0;
            tc::window_2d win;
            for (int i = 0; i < 2; ++i) {
                win.kernel[i] = k[static_cast<std::size_t>(i)];
                win.strides[i] = s[static_cast<std::size_t>(i)];
            }
            for (int i = 0; i < 4; ++i) win.pads[i] = p[static_cast<std::size_t>(i)];
            const attribute_map base{{"kernel_shape", k}, {"strides", s}, {"pads", p}, {"ceil_mode", ceil}};
            const auto want_max = cpu("MaxPool", {&x}, base)[0];
            check_close(tc::max_pool2d(tc::to_device(x), win, want_max.shape()), want_max, "MaxPool " + std::string(name(d)));
            auto avg_attrs = base;
            avg_attrs["count_include_pad"] = include;
            const auto want_avg = cpu("AveragePool", {&x}, avg_attrs)[0];
            check_close(tc::average_pool2d(strided_copy_of(r, x), win, include != 0, want_avg.shape()), want_avg,
                        "AveragePool " + std::string(name(d)) + " ceil " + std::to_string(ceil) + " include " + std::to_string(include));
        }
    }
}

TEST_CASE("cuda normalization: BatchNormalization and LayerNormalization") {
    to::rng r(10);
    for (const dtype d : floating) {
        if (!accepts("BatchNormalization", 0, d) || !accepts("LayerNormalization", 0, d)) continue;
        for (int trial = 0; trial < 5; ++trial) {
            const std::size_t c = 1 + r.below(6);
            shape_type shape{1 + r.below(3), c};
            for (std::size_t k = r.below(3); k > 0; --k) shape.push_back(1 + r.below(7));
            const auto x = random_tensor(r, d, shape);
            const auto scale = random_tensor(r, d, {c}), bias = random_tensor(r, d, {c}), mean = random_tensor(r, d, {c});
            const auto var = random_tensor(r, d, {c}, 0.1, 2.0);
            check_close(tc::batch_norm(strided_copy_of(r, x), tc::to_device(scale), tc::to_device(bias), tc::to_device(mean),
                                       tc::to_device(var), 1e-5f),
                        cpu("BatchNormalization", {&x, &scale, &bias, &mean, &var}, {{"epsilon", 1e-5}})[0],
                        "BatchNormalization " + std::string(name(d)) + to::to_string(shape));
            const auto rank = static_cast<std::int64_t>(shape.size());
            const std::int64_t axis = 1 + static_cast<std::int64_t>(r.below(shape.size() - 1)) - (trial % 2 ? rank : 0);
            const auto ax = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
            const shape_type norm(shape.begin() + static_cast<std::ptrdiff_t>(ax), shape.end());
            const auto ls = random_tensor(r, d, norm), lb = random_tensor(r, d, norm);
            const auto dls = tc::to_device(ls), dlb = tc::to_device(lb);
            check_close(tc::layer_norm(tc::to_device(x), dls, trial == 2 ? nullptr : &dlb, axis, 1e-5f),
                        cpu("LayerNormalization", trial == 2 ? std::vector<const to::tensor*>{&x, &ls}
                                                             : std::vector<const to::tensor*>{&x, &ls, &lb},
                            {{"axis", axis}, {"epsilon", 1e-5}})[0],
                        "LayerNormalization " + std::string(name(d)) + to::to_string(shape) + " axis " + std::to_string(axis));
        }
    }
}

TEST_CASE("cuda movement: Transpose, Concat, Slice, Gather, Expand") {
    to::rng r(11);
    for (const dtype d : {dtype::f32, dtype::f16, dtype::i64, dtype::boolean}) {
        for (int trial = 0; trial < 6; ++trial) {
            auto shape = random_shape(r, 4, 6);
            if (shape.empty()) shape = {3};
            const auto x = random_tensor(r, d, shape);
            const auto dx = tc::to_device(x);
            // Transpose: a random permutation, copied contiguous.
            std::vector<std::size_t> perm(shape.size());
            for (std::size_t k = 0; k < perm.size(); ++k) perm[k] = k;
            for (std::size_t k = perm.size(); k > 1; --k) std::swap(perm[k - 1], perm[r.below(k)]);
            const std::vector<std::int64_t> perm64(perm.begin(), perm.end());
            check_close(tc::contiguous(dx.permuted(perm)), cpu("Transpose", {&x}, {{"perm", perm64}})[0], "Transpose");
            // Concat along a random axis with a second tensor differing on that axis.
            const auto axis = static_cast<std::int64_t>(r.below(shape.size()));
            auto shape2 = shape;
            shape2[static_cast<std::size_t>(axis)] = r.below(4);
            const auto y = random_tensor(r, d, shape2);
            check_close(tc::concat({dx, strided_copy_of(r, y), dx}, axis), cpu("Concat", {&x, &y, &x}, {{"axis", axis}})[0], "Concat");
            // Gather with negative indices.
            const auto len = static_cast<std::int64_t>(shape[static_cast<std::size_t>(axis)]);
            to::array<std::int64_t> idx = to::array<std::int64_t>::from_shape({2, 3});
            for (auto& v : idx) v = static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(2 * len))) - len;
            const to::tensor ti(idx);
            check_close(tc::gather(strided_copy_of(r, x), ti, axis), cpu("Gather", {&x, &ti}, {{"axis", axis}})[0], "Gather");
            // Slice with negative and positive steps, through the graph runner's ONNX clamping.
            const auto n = static_cast<std::int64_t>(shape[0]);
            const to::tensor st(to::array<std::int64_t>{r.bernoulli(0.5) ? -1 : 0}), en(to::array<std::int64_t>{r.bernoulli(0.5) ? -n - 5 : n + 3});
            const to::tensor ax(to::array<std::int64_t>{0});
            const to::tensor sp(to::array<std::int64_t>{st.value_as_double(0) < 0 ? -1 - static_cast<std::int64_t>(r.below(2)) : 1 + static_cast<std::int64_t>(r.below(2))});
            check_close(tc::detail::slice(dx, st, en, &ax, &sp), cpu("Slice", {&x, &st, &en, &ax, &sp})[0], "Slice");
            // Expand.
            shape_type big = shape;
            big.insert(big.begin(), 2);
            const auto small = random_tensor(r, d, shape_type(shape.size(), 1));
            auto tv = to::array<std::int64_t>::from_shape({big.size()});
            for (std::size_t k = 0; k < big.size(); ++k) tv.data()[k] = static_cast<std::int64_t>(big[k]);
            const to::tensor target_t(tv);
            check_close(tc::expand(tc::to_device(small), big), cpu("Expand", {&small, &target_t})[0], "Expand");
        }
    }
}

TEST_CASE("cuda graph: a model runs on the device with per-node CPU fallback") {
    to::rng r(12);
    namespace tg = to::graph;
    tg::graph g;
    g.name = "cnn";
    g.inputs = {{"x", dtype::f32, shape_type{2, 3, 12, 12}}};
    g.outputs = {{"y", dtype::f32, std::nullopt}, {"top", dtype::f32, std::nullopt}};
    g.initializers = {{"w", random_tensor(r, dtype::f32, {8, 3, 3, 3}, -0.5, 0.5)},
                      {"b", random_tensor(r, dtype::f32, {8}, -0.5, 0.5)},
                      {"shape", to::tensor(to::array<std::int64_t>{2, -1})},
                      {"fc", random_tensor(r, dtype::f32, {10, 8 * 6 * 6}, -0.1, 0.1)},
                      {"fcb", random_tensor(r, dtype::f32, {10}, -0.1, 0.1)},
                      {"k", to::tensor(to::array<std::int64_t>{3})}};
    g.nodes = {{"Conv", {"x", "w", "b"}, {"c"}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}, {"kernel_shape", std::vector<std::int64_t>{3, 3}}}, "conv", ""},
               {"Relu", {"c"}, {"cr"}, {}, "relu", ""},
               {"MaxPool", {"cr"}, {"p"}, {{"kernel_shape", std::vector<std::int64_t>{2, 2}}, {"strides", std::vector<std::int64_t>{2, 2}}}, "pool", ""},
               {"Reshape", {"p", "shape"}, {"f"}, {}, "flatten", ""},
               {"Gemm", {"f", "fc", "fcb"}, {"z"}, {{"transB", std::int64_t{1}}}, "fc", ""},
               {"Softmax", {"z"}, {"y"}, {{"axis", std::int64_t{1}}}, "softmax", ""},
               {"TopK", {"z", "k"}, {"top", "top_idx"}, {}, "topk", ""}};
    const auto x = random_tensor(r, dtype::f32, {2, 3, 12, 12});
    const auto want = tg::run(g, {{"x", x}});
    const auto got = tc::run_on_device(g, {{"x", x}});
    CHECK(got.device_nodes == 6);
    CHECK(got.cpu_nodes == 1);
    REQUIRE(got.notes.size() == 1);
    CHECK(got.notes[0].find("TopK") != std::string::npos);
    for (const auto* name : {"y", "top"}) {
        const auto rep = to::compare(got.outputs.at(name), want.outputs.at(name));
        INFO(name, rep.describe(to::tolerance_level(dtype::f32, level)));
        CHECK(rep.passes(to::level{level}));
    }
    tc::device_run_options strict;
    strict.fallback_to_cpu = false;
    CHECK_THROWS_AS((void)tc::run_on_device(g, {{"x", x}}, strict), to::unsupported_error);
}

TEST_CASE("cuda errors: bad input is an error naming the call, never a crash") {
    const auto a = tc::to_device(to::tensor::zeros(dtype::f32, {2, 3}));
    const auto b = tc::to_device(to::tensor::zeros(dtype::f32, {4, 3}));
    CHECK_THROWS_WITH((void)tc::binary("Add", a, b), doctest::Contains("cuda::binary(Add)"));
    CHECK_THROWS_AS((void)tc::binary("Add", a, b), to::shape_error);
    CHECK_THROWS_AS((void)tc::binary("Add", a, tc::to_device(to::tensor::zeros(dtype::f64, {2, 3}))), to::unsupported_error);
    CHECK_THROWS_AS((void)tc::unary("NoSuchOp", a), to::unsupported_error);
    CHECK_THROWS_AS((void)tc::matmul(a, a), to::shape_error);
    CHECK_THROWS_AS((void)tc::reduce(tc::reduce_kind::sum, a, {2}), to::shape_error);
    CHECK_THROWS_AS((void)tc::softmax(a, 5), to::shape_error);
    CHECK_THROWS_AS((void)tc::gather(a, to::tensor(to::array<std::int64_t>{3}), 0), to::shape_error);
    CHECK_THROWS_AS((void)a.sliced(0, 0, 1, 3), to::shape_error);
    CHECK_THROWS_AS((void)a.permuted({0, 0}), to::shape_error);
    CHECK_THROWS_AS((void)a.permuted({1, 0}).reshaped({6}), to::shape_error);
    // Contiguous operands of any rank need no index map; strided ones above rank 8 are unsupported.
    const auto x9 = to::tensor::zeros(dtype::f32, shape_type(9, 1));
    CHECK(tc::to_host(tc::unary("Relu", tc::to_device(x9))).identical(x9));
    CHECK_THROWS_AS((void)tc::unary("Relu", tc::to_device(x9).sliced(0, 0, -1, 1)), to::unsupported_error);
    // The runtime's own failure: an allocation no GPU has.
    CHECK_THROWS_AS((void)tc::device_tensor::empty(dtype::f64, {std::size_t{1} << 60}), tc::cuda_error);
    CHECK_THROWS_WITH((void)tc::device_tensor::empty(dtype::f64, {std::size_t{1} << 60}), doctest::Contains("cudaMalloc"));
}

int main(int argc, char** argv) {
    if (!tc::device_available()) {
        std::puts("no CUDA device: skipped");
        return 77;
    }
    doctest::Context context(argc, argv);
    return context.run();
}
