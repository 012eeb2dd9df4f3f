// Soundness of the gradient oracle (issue 14): each way a wrong engine used to
// pass is planted in engines here, over several ops, sizes up to 65,536
// elements, f32 and f64, first and second order. Every planted bug must fail
// with the right outcome; the same engines without the bug must pass.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "tensoracle/ad/engine.hpp"
#include "tensoracle/ad/oracle.hpp"
#include "tensoracle/ops/reduce.hpp"
#include "tensoracle/doctest.hpp"

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ad_oracle_soundness_test {

using namespace tensoracle;
using namespace tensoracle::ad;

namespace {

enum class plant {
    none,
    scale_all,         // every derivative element 1.5x
    one_element,       // one element of the derivative off by 1%
    nan_element,       // one element NaN (the function is smooth and finite there)
    far_from_kink,     // one element 1.5x, far from the kink the input also holds
    nothing_returned,  // the path returns no derivatives at all
    wrong_shape,       // right element count, wrong shape
    low_precision_outputs,  // the AD path's outputs computed in float32 (the engine claims float64)
};

// An elementwise function y = f(x) of one input, with f and f' given.
struct elementwise {
    std::function<double(double)> f, df;
    plant bug = plant::none;
    dtype out = dtype::f64;         // output dtype (as the engine claims it)
    std::size_t where = 0;          // the planted element
    bool in_jvp = true, in_vjp = true;

    tensors value(const tensors& x) const {
        auto v = x[0].cast(dtype::f64).as_array<double>();
        for (auto& z : v) z = f(z);
        return {tensor(v).cast(out == dtype::f64 ? x[0].element_dtype() : out)};
    }
    tensors ad_outputs(const tensors& x) const {
        auto y = value(x);
        if (bug == plant::low_precision_outputs) y[0] = y[0].cast(dtype::f32).cast(y[0].element_dtype());
        return y;
    }
    tensor derivative(const tensors& x, const tensor& seed, bool planted) const {
        const auto v = x[0].cast(dtype::f64).as_array<double>();
        auto d = seed.cast(dtype::f64).as_array<double>();
        for (std::size_t k = 0; k < v.size(); ++k) {
            double s = df(v.data()[k]);
            if (planted && bug == plant::scale_all) s *= 1.5;
            if (planted && k == where && (bug == plant::one_element)) s *= 1.01;
            if (planted && k == where && (bug == plant::far_from_kink)) s *= 1.5;
            d.data()[k] *= s;
            if (planted && k == where && bug == plant::nan_element) d.data()[k] = std::nan("");
        }
        tensor t = tensor(d).cast(seed.element_dtype());
        if (planted && bug == plant::wrong_shape) {
            auto a = d;
            a.reshape({d.size() / 2, std::size_t{2}});
            t = tensor(a).cast(seed.element_dtype());
        }
        return t;
    }
    engine as_engine() const {
        engine e;
        const elementwise self = *this;
        e.value = [self](const tensors& x) { return self.value(x); };
        e.jvp = [self](const tensors& x, const tensors& u) {
            if (self.bug == plant::nothing_returned && self.in_jvp) return jvp_result{self.ad_outputs(x), {}};
            return jvp_result{self.ad_outputs(x), {self.derivative(x, u[0], self.in_jvp)}};
        };
        e.vjp = [self](const tensors& x, const tensors& w) {
            if (self.bug == plant::nothing_returned && self.in_vjp) return vjp_result{self.ad_outputs(x), {}};
            return vjp_result{self.ad_outputs(x), {self.derivative(x, w[0], self.in_vjp)}};
        };
        return e;
    }
};

elementwise sine() {
    elementwise s;
    s.f = [](double v) { return std::sin(v); };
    s.df = [](double v) { return std::cos(v); };
    return s;
}
elementwise tanh_op() {
    elementwise s;
    s.f = [](double v) { return std::tanh(v); };
    s.df = [](double v) { return 1.0 - std::tanh(v) * std::tanh(v); };
    return s;
}
elementwise relu() {
    elementwise s;
    s.f = [](double v) { return v > 0 ? v : 0.0; };
    s.df = [](double v) { return v > 0 ? 1.0 : 0.0; };
    return s;
}

// s with bug b planted in its JVP (in_jvp) or its VJP (otherwise).
elementwise planted(elementwise s, plant b, bool in_jvp) {
    s.bug = b;
    s.in_jvp = in_jvp;
    s.in_vjp = !in_jvp;
    return s;
}

tensors uniform_input(std::size_t n, dtype d, std::uint64_t seed, double lo = -2.0, double hi = 2.0) {
    rng g(seed);
    return {g.uniform_tensor(d, {n}, lo, hi)};
}

oracle_options quick(std::uint64_t seed) {
    oracle_options o;
    o.seed = seed;
    o.determinism_runs = 2;
    return o;
}

}  // namespace

TEST_CASE("oracle soundness 1: a jacobian()-only engine is checked at any size, and an empty result fails") {
    // 400 elements: far above the full-Jacobian limit, where the oracle used to compare nothing.
    for (const dtype d : {dtype::f64, dtype::f32}) {
        CAPTURE(d);
        const std::size_t n = 400;
        auto jac_engine = [n](double scale, bool empty) {
            engine e;
            e.value = [](const tensors& x) { return sine().value(x); };
            e.jacobian = [n, scale, empty](const tensors& x) -> jacobian_blocks {
                if (empty) return {};
                const auto v = x[0].cast(dtype::f64).as_array<double>();
                auto j = array<double>::from_shape({n, n});
                j.fill(0.0);
                for (std::size_t k = 0; k < n; ++k) j(k, k) = std::cos(v(k)) * scale;
                jacobian_blocks b(1, 1);
                b.block(0, 0) = tensor(j).cast(x[0].element_dtype());
                return b;
            };
            return e;
        };
        const auto x = uniform_input(n, d, 3);
        const auto good = check_gradients(jac_engine(1.0, false), x, quick(1));
        INFO(good.to_string());
        CHECK(good.outcome == gradient_outcome::pass);
        CHECK(good.fully_checked());
        const auto wrong = check_gradients(jac_engine(1.5, false), x, quick(1));
        INFO(wrong.to_string());
        CHECK(wrong.outcome == gradient_outcome::gradient_fd_mismatch);
        CHECK(wrong.failed());
        const auto empty = check_gradients(jac_engine(1.0, true), x, quick(1));
        INFO(empty.to_string());
        CHECK(empty.outcome == gradient_outcome::malformed_derivative);
        CHECK(empty.failed());
    }
}

TEST_CASE("oracle soundness 1: a JVP or VJP that returns no derivative fails, an unchecked path is reported") {
    for (const bool in_jvp : {true, false}) {
        for (const std::size_t n : {std::size_t{6}, std::size_t{65536}}) {
            CAPTURE(in_jvp);
            CAPTURE(n);
            const auto s = planted(sine(), plant::nothing_returned, in_jvp);
            const auto r = check_gradients(s.as_engine(), uniform_input(n, dtype::f64, 5), quick(2));
            INFO(r.to_string());
            CHECK(r.outcome == gradient_outcome::malformed_derivative);
            CHECK(r.failed());
            CHECK(r.message.find("no derivative") != std::string::npos);
        }
    }
    // Finite differences impossible (the value throws off x): the paths agree
    // with each other, but the comparison with FD never happened, and the
    // report says so instead of "pass".
    engine e = sine().as_engine();
    const auto base = e.value;
    e.vjp = nullptr;
    e.value = [base](const tensors& x) {
        const auto v = x[0].to<double>();
        if (v.data()[0] != std::floor(v.data()[0] * 8) / 8) throw error("engine", "only defined on a 1/8 grid");
        return base(x);
    };
    auto x = array<double>::from_shape({4});
    x = {0.5, 0.25, -1.0, 2.0};
    const auto r = check_gradients(e, {tensor(x)}, quick(3));
    INFO(r.to_string());
    CHECK(r.outcome == gradient_outcome::not_checked);
    CHECK_FALSE(r.fully_checked());
    REQUIRE_FALSE(r.not_checked.empty());
    CHECK(r.not_checked[0].find("jvp") != std::string::npos);
}

TEST_CASE("oracle soundness 2: a kink excuses only what it explains") {
    // ReLU with an exact zero in x, and a wrong derivative at an element far from it.
    for (const dtype d : {dtype::f64, dtype::f32}) {
        for (const std::size_t n : {std::size_t{4}, std::size_t{65536}}) {
            CAPTURE(d);
            CAPTURE(n);
            auto x = uniform_input(n, d, 7, 0.5, 2.0)[0].cast(dtype::f64).as_array<double>();
            x(0) = 0.0;  // the kink
            const tensors xs{tensor(x).cast(d)};
            auto good = relu();
            const auto ok = check_gradients(good.as_engine(), xs, quick(4));
            INFO(ok.to_string());
            CHECK_FALSE(ok.failed());
            auto bad = relu();
            bad.bug = plant::far_from_kink;
            bad.where = n - 1;
            const auto r = check_gradients(bad.as_engine(), xs, quick(4));
            INFO(r.to_string());
            CHECK(r.failed());
            CHECK(r.outcome == gradient_outcome::gradient_fd_mismatch);
            CHECK(r.message.find("persists") != std::string::npos);
        }
    }
}

TEST_CASE("oracle soundness 2: NaN is excused only where the function is not finite") {
    for (const dtype d : {dtype::f64, dtype::f32}) {
        for (const std::size_t n : {std::size_t{8}, std::size_t{65536}}) {
            CAPTURE(d);
            CAPTURE(n);
            auto s = tanh_op();
            s.bug = plant::nan_element;
            s.where = n / 2;
            const auto r = check_gradients(s.as_engine(), uniform_input(n, d, 9), quick(5));
            INFO(r.to_string());
            CHECK(r.failed());
            CHECK_FALSE(r.has(filter_label::nan_in_gradient));
        }
    }
    // log(x) at x = 0: the value itself is -inf, so NaN derivatives there are the function's.
    engine e;
    e.value = [](const tensors& x) {
        auto v = x[0].as_array<double>();
        for (auto& z : v) z = std::log(z);
        return tensors{tensor(v)};
    };
    e.vjp = [e](const tensors& x, const tensors& w) {
        auto v = x[0].as_array<double>();
        const auto wv = w[0].as_array<double>();
        for (std::size_t i = 0; i < v.size(); ++i) v.data()[i] = v.data()[i] == 0 ? std::nan("") : wv.data()[i] / v.data()[i];
        return vjp_result{e.value(x), {tensor(v)}};
    };
    auto x = array<double>::from_shape({3});
    x = {1.0, 0.0, 2.0};
    const auto r = check_gradients(e, {tensor(x)}, quick(6));
    INFO(r.to_string());
    CHECK(r.has(filter_label::nan_in_gradient));
    CHECK_FALSE(r.failed());
}

TEST_CASE("oracle soundness 2: precision conversion excuses only within the rounding noise it causes") {
    // float64 in, float32 out: finite differences of the rounded output are good to
    // about 1e-4 here, so a derivative 50% off is a real failure, not rounding.
    for (const std::size_t n : {std::size_t{8}, std::size_t{65536}}) {
        CAPTURE(n);
        auto good = sine();
        good.out = dtype::f32;
        const auto x = uniform_input(n, dtype::f64, 11);
        const auto ok = check_gradients(good.as_engine(), x, quick(7));
        INFO(ok.to_string());
        CHECK_FALSE(ok.failed());
        auto bad = good;
        bad.bug = plant::scale_all;
        const auto r = check_gradients(bad.as_engine(), x, quick(7));
        INFO(r.to_string());
        CHECK(r.failed());
        CHECK(r.message.find("rounding noise") != std::string::npos);
    }
}

namespace {
// f(x) = relu(x) + x³/6 elementwise: a kink at 0 at first order (the engine's
// subgradient 0 vs central differences' 1/2); f'' = x away from 0. The
// engine's second derivative is planted wrong (2x) when `bug`.
engine relu_cubic(bool bug) {
    engine e;
    e.value = [](const tensors& x) {
        auto v = x[0].as_array<double>();
        for (auto& z : v) z = (z > 0 ? z : 0.0) + z * z * z / 6;
        return tensors{tensor(v)};
    };
    auto grad = [](const tensors& x, const tensors& w) {
        auto v = x[0].as_array<double>();
        const auto wv = w[0].as_array<double>();
        for (std::size_t i = 0; i < v.size(); ++i) {
            const double z = v.data()[i];
            v.data()[i] = wv.data()[i] * ((z > 0 ? 1.0 : 0.0) + z * z / 2);
        }
        return tensor(v);
    };
    e.vjp = [e, grad](const tensors& x, const tensors& w) { return vjp_result{e.value(x), {grad(x, w)}}; };
    e.jvp = [e, grad](const tensors& x, const tensors& u) { return jvp_result{e.value(x), {grad(x, u)}}; };
    e.gradient = [grad, bug](const tensors& w) {
        engine g;
        g.value = [grad, w](const tensors& x) { return tensors{grad(x, w)}; };
        auto second = [grad, w, bug](const tensors& x, const tensors& u) {
            auto v = x[0].as_array<double>();
            const auto wv = w[0].as_array<double>(), uv = u[0].as_array<double>();
            for (std::size_t i = 0; i < v.size(); ++i) v.data()[i] = wv.data()[i] * uv.data()[i] * (bug ? 2 : 1) * v.data()[i];
            return jvp_result{tensors{grad(x, w)}, {tensor(v)}};
        };
        g.jvp = second;
        g.vjp = [second](const tensors& x, const tensors& v) {
            auto r = second(x, v);
            return vjp_result{r.outputs, r.output_tangents};
        };
        return g;
    };
    return e;
}
}  // namespace

TEST_CASE("oracle soundness 2: an excused failure does not stop the checks after it (second order)") {
    auto x = array<double>::from_shape({5});
    x = {0.0, 0.7, -1.3, 1.9, -0.4};  // the kink at x[0]
    oracle_options o = quick(8);
    o.order = 2;
    const auto good = check_gradients(relu_cubic(false), {tensor(x)}, o);
    INFO(good.to_string());
    CHECK(good.has(filter_label::non_differentiable_point));  // order 1 at the kink: excused
    CHECK_FALSE(good.failed());
    REQUIRE(good.higher.size() == 1);
    const auto bad = check_gradients(relu_cubic(true), {tensor(x)}, o);
    INFO(bad.to_string());
    REQUIRE(bad.higher.size() == 1);  // order 2 ran after order 1's excused failure
    CHECK(bad.higher[0].failed());
    CHECK(bad.failed());
}

TEST_CASE("oracle soundness 3: one wrong element of 65,536 is caught against the kit's reference") {
    const std::size_t n = 65536;
    for (const dtype d : {dtype::f64, dtype::f32}) {
        for (const bool in_jvp : {true, false}) {
            for (const char* op : {"Sin", "Tanh"}) {
                CAPTURE(d);
                CAPTURE(in_jvp);
                CAPTURE(op);
                auto s = planted(std::string_view(op) == "Sin" ? sine() : tanh_op(), plant::one_element, in_jvp);
                s.where = 40000;
                const auto x = uniform_input(n, d, 13);
                oracle_options o = quick(9);
                o.reference = op_engine(op);
                const auto r = check_gradients(s.as_engine(), x, o);
                INFO(r.to_string());
                CHECK(r.failed());
                CHECK(r.outcome == gradient_outcome::reference_mismatch);
                // The same engine without the bug agrees with the reference everywhere.
                auto ok = s;
                ok.bug = plant::none;
                const auto r2 = check_gradients(ok.as_engine(), x, o);
                INFO(r2.to_string());
                CHECK(r2.outcome == gradient_outcome::pass);
            }
        }
    }
}

TEST_CASE("oracle soundness 3: without a reference, the report states what projections could miss") {
    auto s = sine();
    s.bug = plant::one_element;
    s.where = 40000;
    const auto r = check_gradients(s.as_engine(), uniform_input(65536, dtype::f64, 15), quick(10));
    INFO(r.to_string());
    // A 1% error in one of 65,536 elements is below what random projections resolve:
    // the oracle does not claim otherwise.
    CHECK(r.projection_blind_spot > 0.01);
    CHECK(r.to_string().find("could go unnoticed") != std::string::npos);
    // Small inputs are compared in full: no blind spot.
    CHECK(check_gradients(sine().as_engine(), uniform_input(8, dtype::f64, 15), quick(10)).projection_blind_spot == 0.0);
}

TEST_CASE("oracle soundness 4: derivatives and Jacobian blocks of the wrong shape fail, naming the expected shape") {
    for (const std::size_t n : {std::size_t{8}, std::size_t{65536}}) {
        for (const bool in_jvp : {true, false}) {
            CAPTURE(n);
            CAPTURE(in_jvp);
            const auto s = planted(tanh_op(), plant::wrong_shape, in_jvp);
            const auto r = check_gradients(s.as_engine(), uniform_input(n, dtype::f32, 17), quick(11));
            INFO(r.to_string());
            CHECK(r.outcome == gradient_outcome::malformed_derivative);
            CHECK(r.message.find("expected [" + std::to_string(n) + "]") != std::string::npos);
        }
    }
    // A Jacobian block one column short (it used to be read as zeros).
    engine e;
    e.value = [](const tensors& x) { return sine().value(x); };
    e.jacobian = [](const tensors& x) {
        const std::size_t n = x[0].size();
        auto j = array<double>::from_shape({n, n - 1});
        j.fill(0.0);
        jacobian_blocks b(1, 1);
        b.block(0, 0) = tensor(j);
        return b;
    };
    const auto r = check_gradients(e, uniform_input(6, dtype::f64, 19), quick(12));
    INFO(r.to_string());
    CHECK(r.outcome == gradient_outcome::malformed_derivative);
    CHECK(r.message.find("expected a floating [6, 6]") != std::string::npos);
}

TEST_CASE("oracle soundness 5: outputs at a lower precision than claimed fail the value check") {
    // Outputs of order 1e-3: float32 rounding (~1e-10 absolute) used to hide under a 1e-8 absolute floor.
    for (const std::size_t n : {std::size_t{8}, std::size_t{65536}}) {
        for (const bool in_jvp : {true, false}) {
            CAPTURE(n);
            CAPTURE(in_jvp);
            auto s = sine();
            s.f = [](double v) { return 1e-3 * std::sin(v); };
            s.df = [](double v) { return 1e-3 * std::cos(v); };
            s.bug = plant::low_precision_outputs;
            engine e = s.as_engine();
            if (in_jvp) e.vjp = nullptr;
            else e.jvp = nullptr;
            const auto r = check_gradients(e, uniform_input(n, dtype::f64, 21), quick(13));
            INFO(r.to_string());
            CHECK(r.outcome == gradient_outcome::output_inconsistent);
            CHECK(r.failed());
            auto ok = s;
            ok.bug = plant::none;
            CHECK_FALSE(check_gradients(ok.as_engine(), uniform_input(n, dtype::f64, 21), quick(13)).failed());
        }
    }
}

// ---------------------------------------------------------------- the engine API

TEST_CASE("engine API: the builder assembles an engine and refuses one without a value function") {
    const auto e = engine_builder()
                       .value([](const tensors& x) { return sine().value(x); })
                       .vjp([](const tensors& x, const tensors& w) {
                           return vjp_result{sine().value(x), {sine().derivative(x, w[0], false)}};
                       })
                       .jvp([](const tensors& x, const tensors& u) {
                           return jvp_result{sine().value(x), {sine().derivative(x, u[0], false)}};
                       })
                       .build();
    const auto r = check_gradients(e, uniform_input(40, dtype::f64, 23), quick(14));
    INFO(r.to_string());
    CHECK(r.outcome == gradient_outcome::pass);
    CHECK(r.fully_checked());
    CHECK_THROWS_WITH_AS((void)engine_builder().vjp([](const tensors& x, const tensors&) { return vjp_result{x, x}; }).build(),
                         doctest::Contains("no value function"), error);
}

TEST_CASE("engine API: Jacobian blocks are addressed by (output, input) and refuse a block that does not exist") {
    jacobian_blocks j(2, 3);
    CHECK(j.outputs() == 2);
    CHECK(j.inputs() == 3);
    j.block(1, 2) = tensor::zeros(dtype::f64, {4, 5});
    CHECK(j.block(1, 2).shape() == shape_type{4, 5});
    CHECK(j.block(0, 0).size() == 0);
    CHECK_THROWS_WITH_AS((void)j.block(2, 0), doctest::Contains("block (2, 0) of a Jacobian with 2 outputs and 3 inputs"),
                         shape_error);
}

TEST_CASE("engine API: the typed op engine is the by-name one, and its gradient has one output per input") {
    rng g(29);
    const tensors x{g.uniform_tensor(dtype::f64, {3, 5}, -1.0, 1.0)};
    const auto typed = op_engine<ops::Softmax>({{"axis", std::int64_t{0}}});
    const auto named = op_engine("Softmax", {{"axis", std::int64_t{0}}});
    const tensors u{g.uniform_tensor(dtype::f64, {3, 5}, -1.0, 1.0)};
    CHECK(typed.value(x)[0].identical(named.value(x)[0]));
    CHECK(typed.jvp(x, u).output_tangents[0].identical(named.jvp(x, u).output_tangents[0]));
    CHECK(typed.vjp(x, u).input_cotangents[0].identical(named.vjp(x, u).input_cotangents[0]));
    oracle_options o = quick(15);
    o.order = 2;
    const auto r = check_gradients(typed, x, o);
    INFO(r.to_string());
    CHECK(r.fully_checked());
    // Where(condition, a, b): the bool condition is not differentiated, yet keeps its slot.
    const tensors w3{tensor(array<bool>{true, false, true}), g.uniform_tensor(dtype::f64, {3}, -1.0, 1.0),
                     g.uniform_tensor(dtype::f64, {3}, -1.0, 1.0)};
    const auto where = op_engine("Where");
    const tensors cot{g.uniform_tensor(dtype::f64, {3}, -1.0, 1.0)};
    const auto grad = where.gradient(cot).value(w3);
    REQUIRE(grad.size() == 3);
    CHECK(grad[0].size() == 0);
    CHECK(grad[1].shape() == shape_type{3});
    CHECK(where.vjp(w3, cot).input_cotangents.size() == 3);
    o.order = 2;
    const auto rw = check_gradients(where, w3, o);
    INFO(rw.to_string());
    CHECK(rw.fully_checked());
}

TEST_CASE("oracle soundness 5: a NaN the value function returns is the same NaN in the AD paths' outputs") {
    // sqrt at -1: the value is NaN, and so are the outputs the AD paths return beside it.
    elementwise s;
    s.f = [](double v) { return std::sqrt(v); };
    s.df = [](double v) { return 0.5 / std::sqrt(v); };
    auto x = array<double>::from_shape({4});
    x = {0.5, -1.0, 2.0, 3.0};
    const auto r = check_gradients(s.as_engine(), {tensor(x)}, quick(16));
    INFO(r.to_string());
    CHECK(r.count(check_status::failed) == 0);
    CHECK(r.has(filter_label::nan_in_gradient));
    // A NaN in an AD path's outputs where the value is finite is still inconsistent.
    auto bad = s.as_engine();
    const auto good_vjp = bad.vjp;
    bad.vjp = [good_vjp](const tensors& in, const tensors& w) {
        auto res = good_vjp(in, w);
        auto y = res.outputs[0].as_array<double>();
        y(0) = std::nan("");
        res.outputs[0] = tensor(y);
        return res;
    };
    const auto r2 = check_gradients(bad, {tensor(x)}, quick(16));
    INFO(r2.to_string());
    CHECK(r2.outcome == gradient_outcome::output_inconsistent);
    CHECK(r2.failed());
}

}  // namespace ad_oracle_soundness_test
