// Registry-driven gradients in double: first and second order.
#include "op_gradients.hpp"

#include "tensoracle/ad/typed_engine.hpp"

#include <set>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ad_op_gradients_f64_test {

TEST_CASE("op gradients: every differentiable op, f64, orders 1 and 2") {
    const auto tally = tensoracle::testing::check_registry_gradients<double>(8, 2, tensoracle::dtype::f64);
    CHECK(tally.size() >= 80);
    tensoracle::testing::require_clean_passes(tally);
}

TEST_CASE("op gradients: the ops without derivative rules are exactly the non-differentiable ones") {
    // Outputs that are not floating, or floating outputs that do not depend on
    // floating input values. A new op missing from here and without run_real fails.
    const std::set<std::string> expected{
        "And", "ArgMax", "ArgMin", "Constant", "ConstantOfShape", "Equal", "EyeLike", "Greater", "GreaterOrEqual",
        "IsInf", "IsNaN", "Less", "LessOrEqual", "Not", "Or", "Range", "Shape", "Size", "Xor"};
    std::set<std::string> without;
    for (const auto& e : tensoracle::ops::registry()) {
        if (tensoracle::ad::find_rules<double>(e.op_type) == nullptr) without.emplace(e.op_type);
    }
    CHECK(without == expected);
}

TEST_CASE("op gradients: tensor-level VJPs equal the tape's (element-wise ops, broadcasting, proxies, own VJPs)") {
    using namespace tensoracle;
    std::set<std::string_view> own;  // ops with a hand-written VJP (has_tensor_vjp)
    int checked = 0, broadcast = 0, proxied = 0;
    for (const auto& rules : ad::rules_table<double>()) {
        if (!rules.tensor_level) continue;
        const auto& op = ops::get_op(rules.op_type);
        rng g(std::hash<std::string_view>{}(rules.op_type) ^ 0xe1);
        const int samples = rules.elementwise ? 6 : 24;  // own VJPs: more attribute combinations
        for (int s = 0; s < samples; ++s) {
            const auto inst = gen::sample_op(op, g);
            ad::tensors x;
            for (const auto& in : inst.inputs) x.push_back(in ? *in : tensor());
            const auto ctx = ad::make_context(op, ad::detail::pointers(x), inst.attributes);
            const auto ids = rules.differentiable_inputs(ctx);
            if (ids.empty()) continue;
            std::vector<array<double>> xs(ctx.input_count(), ad::detail::empty_array<double>());
            for (const std::size_t i : ids) xs[i] = ad::lift<double>(x[i]);
            const auto y = rules.vjp(ctx, xs, {}, {}).values;  // non-floating outputs: empty
            REQUIRE(!y.empty());
            std::vector<array<double>> w;
            for (const auto& yo : y) {
                const shape_type ys(yo.shape().begin(), yo.shape().end());
                w.push_back(ad::detail::is_empty(yo) ? ad::detail::empty_array<double>()
                                                     : g.uniform_tensor(dtype::f64, ys, -1.0, 1.0).to<double>());
            }
            for (const std::size_t i : ids) broadcast += rules.elementwise && x[i].size() != w[0].size() ? 1 : 0;
            for (const bool proxy : {false, true}) {
                const auto tape = rules.vjp(ctx, xs, w, {.proxy = proxy, .tensor_level = false});
                const auto fast = rules.vjp(ctx, xs, w, {.proxy = proxy, .tensor_level = true});
                INFO(rules.op_type, " sample ", s, " proxy ", proxy);
                REQUIRE(fast.values.size() == tape.values.size());
                for (std::size_t o = 0; o < tape.values.size(); ++o) {
                    TENSORACLE_CHECK_ALLCLOSE(tensor(fast.values[o]), tensor(tape.values[o]), (tolerance{0.0, 0.0}));
                }
                for (const std::size_t i : ids) {
                    INFO("input ", i);
                    TENSORACLE_CHECK_ALLCLOSE(tensor(fast.cotangents[i]), tensor(tape.cotangents[i]), (tolerance{1e-12, 1e-12}));
                }
                proxied += proxy && rules.proxy_slope != 0.0 ? 1 : 0;
            }
            if (!rules.elementwise) {
                own.insert(rules.op_type);
                // Without values (the input search's call): the same cotangents, no forward run.
                const auto fast = rules.vjp(ctx, xs, w, {.tensor_level = true});
                const auto lean = rules.vjp(ctx, xs, w, {.tensor_level = true, .values = false});
                for (const auto& v : lean.values) CHECK(ad::detail::is_empty(v));
                for (const std::size_t i : ids) {
                    TENSORACLE_CHECK_ALLCLOSE(tensor(lean.cotangents[i]), tensor(fast.cotangents[i]), (tolerance{0.0, 0.0}));
                }
                // A cotangent of another shape than its output's is an error naming both.
                auto wrong = w;
                wrong[0] = array<double>::from_shape({w[0].size() + 1});
                CHECK_THROWS_WITH_AS((void)rules.vjp(ctx, xs, wrong, {.tensor_level = true, .values = false}),
                                     doctest::Contains("cotangent of output 0 has shape"), shape_error);
            }
            ++checked;
        }
    }
    CHECK(checked >= 300);
    CHECK(broadcast >= 20);
    CHECK(proxied >= 20);
    CHECK(own == std::set<std::string_view>{"AveragePool", "Conv", "ConvTranspose", "Gemm", "Hardmax", "LogSoftmax", "MatMul",
                                            "MaxPool", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                                            "ReduceMin", "ReduceSum", "ReduceSumSquare", "Softmax", "TopK"});
}

TEST_CASE("op gradients: own VJPs of selecting ops pick the tape's element on ties and NaN") {
    // Sampled instances draw distinct floats; here every group has ties and
    // some hold a NaN, so a VJP that picks another of equal elements (the last
    // maximum, or a maximum after a NaN) than the kernel does fails.
    using namespace tensoracle;
    using ints = std::vector<std::int64_t>;
    rng g(77);
    struct instance {
        const char* op;
        shape_type x;
        spec::attribute_map attrs;
    };
    const std::vector<instance> cases{
        {"ReduceMax", {4, 6, 5}, {{"axes", ints{1}}}},
        {"ReduceMax", {3, 4, 5}, {{"axes", ints{0, 2}}, {"keepdims", std::int64_t{0}}}},
        {"ReduceMin", {4, 6, 5}, {{"axes", ints{-1}}}},
        {"ReduceMin", {2, 3, 4}, {}},
        {"MaxPool", {1, 2, 7, 6}, {{"kernel_shape", ints{3, 2}}, {"pads", ints{1, 0, 1, 1}}}},
        {"MaxPool", {2, 1, 9}, {{"kernel_shape", ints{3}}, {"dilations", ints{2}}, {"storage_order", std::int64_t{0}}}},
        {"TopK", {3, 8}, {{"axis", std::int64_t{1}}}},
    };
    int with_nan = 0;
    for (const auto& k : cases) {
        for (int round = 0; round < 4; ++round) {
            INFO(k.op, " X ", to_string(k.x), " round ", round);
            auto x = g.uniform_array<double>(k.x, -2.0, 2.0);
            for (auto& v : x) v = std::round(v);  // five values: ties everywhere
            if (round % 2 == 1) {
                x.data()[g.below(x.size())] = std::nan("");
                ++with_nan;
            }
            ad::tensors in{tensor(x)};
            if (std::string_view(k.op) == "TopK") {
                auto kk = array<std::int64_t>::from_shape({1});
                kk.data()[0] = 3;
                in.push_back(tensor(kk));
            }
            const auto ctx = ad::make_context(ops::get_op(k.op), ad::detail::pointers(in), k.attrs);
            const auto* rules = ad::find_rules<double>(k.op);
            REQUIRE(rules != nullptr);
            std::vector<array<double>> xs{x};
            if (in.size() > 1) xs.push_back(ad::detail::empty_array<double>());
            const auto y = rules->value(ctx, xs);
            std::vector<array<double>> w;
            for (const auto& yo : y) {
                w.push_back(ad::detail::is_empty(yo) ? ad::detail::empty_array<double>()
                                                     : g.uniform_tensor(dtype::f64, shape_type(yo.shape().begin(), yo.shape().end()), -1, 1).to<double>());
            }
            const auto tape = rules->vjp(ctx, xs, w, {});
            const auto fast = rules->vjp(ctx, xs, w, {.tensor_level = true, .values = false});
            TENSORACLE_CHECK_ALLCLOSE(tensor(fast.cotangents[0]), tensor(tape.cotangents[0]), (tolerance{0.0, 0.0}));
        }
    }
    CHECK(with_nan == 14);
}

/// Conv / ConvTranspose forward by their ONNX formulas, one tap at a time with
/// every bound tested: independent of the kernels' in-bounds ranges.
tensoracle::array<double> direct_conv(bool transpose, const tensoracle::array<double>& x, const tensoracle::array<double>& w,
                                      const tensoracle::shape_type& y_shape, std::int64_t group,
                                      const std::vector<std::int64_t>& st, const std::vector<std::int64_t>& dl,
                                      const std::vector<std::int64_t>& pb, const tensoracle::array<double>* bias) {
    using tensoracle::shape_type;
    const std::size_t n = x.dimension() - 2;
    auto y = tensoracle::array<double>::from_shape(y_shape);
    y.fill(0.0);
    auto unravel = [](std::size_t f, const auto& shape) {
        std::vector<std::int64_t> idx(shape.size());
        for (std::size_t a = shape.size(); a-- > 0;) {
            idx[a] = static_cast<std::int64_t>(f % shape[a]);
            f /= shape[a];
        }
        return idx;
    };
    auto ravel = [](const std::vector<std::int64_t>& idx, const auto& shape) {
        std::size_t f = 0;
        for (std::size_t a = 0; a < shape.size(); ++a) f = f * shape[a] + static_cast<std::size_t>(idx[a]);
        return f;
    };
    // Conv: Y[b, m, o] += X[b, g Cg + c, st o + dl k - pb] W[m, c, k];
    // ConvTranspose: Y[b, g Mg + m, st j + dl k - pb] += X[b, g Cg + c, j] W[g Cg + c, m, k].
    const auto& out_or_in = transpose ? x.shape() : y.shape();  // the side the spatial index runs over
    for (std::size_t f = 0; f < (transpose ? x.size() : y.size()); ++f) {
        const auto i = unravel(f, out_or_in);
        for (std::size_t q = 0; q < w.size(); ++q) {
            const auto k = unravel(q, w.shape());
            std::vector<std::int64_t> xi{i[0], 0}, yi{i[0], 0};
            if (transpose) {
                const auto cg = static_cast<std::int64_t>(x.shape()[1]) / group;
                if (k[0] != i[1]) continue;  // W's first axis is X's channel
                xi[1] = i[1];
                yi[1] = (i[1] / cg) * static_cast<std::int64_t>(w.shape()[1]) + k[1];
            } else {
                const auto mg = static_cast<std::int64_t>(w.shape()[0]) / group, cg = static_cast<std::int64_t>(w.shape()[1]);
                if (k[0] != i[1]) continue;  // W's first axis is Y's channel
                yi[1] = i[1];
                xi[1] = (i[1] / mg) * cg + k[1];
            }
            bool inside = true;
            for (std::size_t a = 0; a < n; ++a) {
                const std::int64_t p = st[a] * i[2 + a] + dl[a] * k[2 + a] - pb[a];
                const auto limit = static_cast<std::int64_t>(transpose ? y.shape()[2 + a] : x.shape()[2 + a]);
                inside = inside && p >= 0 && p < limit;
                (transpose ? yi : xi).push_back(p);
                (transpose ? xi : yi).push_back(i[2 + a]);
            }
            if (inside) y.data()[ravel(yi, y.shape())] += x.data()[ravel(xi, x.shape())] * w.data()[q];
        }
    }
    if (bias != nullptr) {
        const std::size_t plane = y.size() / (y.shape()[0] * y.shape()[1]);
        for (std::size_t f = 0; f < y.size(); ++f) y.data()[f] += bias->data()[(f / plane) % y.shape()[1]];
    }
    return y;
}

TEST_CASE("op gradients: Conv and ConvTranspose own VJPs on hand-picked geometries equal the tape's, and Conv's X cotangent is ConvTranspose") {
    // Sampled instances rarely combine dilation, stride, asymmetric pads, groups
    // and cropping; the tap loop's in-bounds ranges are exactly what they stress.
    using namespace tensoracle;
    using ints = std::vector<std::int64_t>;
    rng g(4207);
    struct geometry {
        const char* op;
        shape_type x, w;
        std::size_t bias;  // its length; 0: none
        spec::attribute_map attrs;
    };
    const std::vector<geometry> cases{
        {"Conv", {2, 4, 9}, {6, 2, 3}, 6, {{"group", std::int64_t{2}}, {"dilations", ints{3}}, {"strides", ints{2}}, {"pads", ints{4, 1}}}},
        {"Conv", {1, 3, 7, 6}, {2, 3, 3, 2}, 0, {{"dilations", ints{2, 1}}, {"strides", ints{3, 1}}, {"pads", ints{0, 3, 2, 0}}}},
        {"Conv", {1, 2, 5, 4}, {2, 2, 4, 4}, 2, {{"auto_pad", std::string("SAME_UPPER")}}},
        {"Conv", {1, 2, 3, 4, 5}, {3, 2, 2, 3, 2}, 3, {{"pads", ints{1, 0, 2, 0, 1, 1}}, {"strides", ints{1, 2, 2}}}},
        {"Conv", {1, 1, 4}, {1, 1, 3}, 0, {{"pads", ints{5, 5}}}},  // windows wholly in the padding
        {"Conv", {2, 3, 6, 5}, {4, 3, 3, 2}, 4, {{"pads", ints{2, 0, 1, 1}}}},
        {"ConvTranspose", {2, 4, 5}, {4, 3, 3}, 6, {{"group", std::int64_t{2}}, {"strides", ints{3}}, {"dilations", ints{2}}, {"pads", ints{2, 4}}}},
        {"ConvTranspose", {1, 2, 4, 3}, {2, 2, 3, 2}, 0, {{"strides", ints{2, 3}}, {"output_padding", ints{1, 2}}, {"pads", ints{1, 0, 0, 2}}}},
        {"ConvTranspose", {1, 3, 6}, {3, 2, 4}, 2, {{"strides", ints{2}}, {"output_shape", ints{5}}}},  // cropped
        {"ConvTranspose", {1, 2, 2, 3, 2}, {2, 1, 2, 2, 3}, 1, {{"strides", ints{2, 1, 2}}, {"pads", ints{1, 1, 0, 0, 1, 2}}}},
    };
    int crossed = 0, direct = 0;
    for (const auto& k : cases) {
        INFO(k.op, " X ", to_string(k.x), " W ", to_string(k.w));
        ad::tensors in{g.uniform_tensor(dtype::f64, k.x, -1, 1), g.uniform_tensor(dtype::f64, k.w, -1, 1)};
        if (k.bias != 0) in.push_back(g.uniform_tensor(dtype::f64, {k.bias}, -1, 1));
        const auto ctx = ad::make_context(ops::get_op(k.op), ad::detail::pointers(in), k.attrs);
        const auto* rules = ad::find_rules<double>(k.op);
        REQUIRE(rules != nullptr);
        std::vector<array<double>> xs;
        for (const auto& t : in) xs.push_back(ad::lift<double>(t));
        const auto y = rules->value(ctx, xs)[0];
        if (k.attrs.count("auto_pad") + k.attrs.count("output_shape") == 0) {
            // The forward kernel itself against the formula (the tape shares its tap loop).
            const std::size_t n = k.x.size() - 2;
            auto get = [&](const char* name, std::int64_t dflt, std::size_t len) {
                return k.attrs.count(name) ? std::get<ints>(k.attrs.at(name)) : ints(len, dflt);
            };
            const auto group = k.attrs.count("group") ? std::get<std::int64_t>(k.attrs.at("group")) : std::int64_t{1};
            const auto ref = direct_conv(std::string_view(k.op) == "ConvTranspose", xs[0], xs[1],
                                         shape_type(y.shape().begin(), y.shape().end()), group, get("strides", 1, n),
                                         get("dilations", 1, n), get("pads", 0, 2 * n), k.bias != 0 ? &xs[2] : nullptr);
            TENSORACLE_CHECK_ALLCLOSE(tensor(y), tensor(ref), (tolerance{1e-12, 1e-12}));
            ++direct;
        }
        const std::vector<array<double>> w{
            g.uniform_tensor(dtype::f64, shape_type(y.shape().begin(), y.shape().end()), -1, 1).to<double>()};
        const auto tape = rules->vjp(ctx, xs, w, {});
        const auto fast = rules->vjp(ctx, xs, w, {.tensor_level = true, .values = false});
        for (std::size_t i = 0; i < xs.size(); ++i) {
            INFO("input ", i);
            TENSORACLE_CHECK_ALLCLOSE(tensor(fast.cotangents[i]), tensor(tape.cotangents[i]), (tolerance{1e-12, 1e-12}));
        }
        if (std::string_view(k.op) == "Conv" && k.attrs.count("auto_pad") + k.attrs.count("group") +
                                                        k.attrs.count("dilations") + k.attrs.count("strides") == 0) {
            // Stride 1: Conv's X cotangent is ConvTranspose of Y's cotangent with the
            // same W and pads (its output is X's size): a second kernel, not the same loop.
            const tensor wt(w[0]);
            const auto back = spec::evaluate(ops::get_op("ConvTranspose"), {&wt, &in[1]}, {{"pads", k.attrs.at("pads")}})[0];
            TENSORACLE_CHECK_ALLCLOSE(tensor(fast.cotangents[0]), back, (tolerance{1e-12, 1e-12}));
            ++crossed;
        }
    }
    CHECK(crossed == 2);
    CHECK(direct == 8);
}

}  // namespace ad_op_gradients_f64_test
