// The gradient oracle's soundness: deliberately wrong engines are caught
// every time (over many seeds), correct engines pass, and correct engines at
// non-differentiable points are labelled by the filters, not failed.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>

#include "tensoracle/ad/oracle.hpp"
#include "tensoracle/doctest.hpp"

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ad_oracle_test {

using namespace tensoracle;
using namespace tensoracle::ad;

namespace {

// f(x, y) = x·y + sin(x), x: [3, 4], y: [4] broadcast over rows.
struct toy {
    enum class bug { none, wrong_sign, wrong_broadcast_reduction, missing_term, wrong_second_derivative,
                     nondeterministic, throws_under_ad, throws_only_in_value };
    bug b = bug::none;
    std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);

    static array<double> a(const tensor& t) { return t.to<double>().size() ? t.cast(dtype::f64).as_array<double>() : array<double>{}; }

    tensors value(const tensors& x) const {
        if (b == bug::throws_only_in_value) throw error("toy", "value refuses");
        const auto X = a(x[0]), Y = a(x[1]);
        auto Z = array<double>::from_shape({3, 4});
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 4; ++j) Z(i, j) = X(i, j) * Y(j) + std::sin(X(i, j));
        if (b == bug::nondeterministic && (++*calls % 3) == 0) Z(1, 2) += 1e-12;
        return {tensor(Z).cast(x[0].element_dtype())};
    }
    jvp_result jvp(const tensors& x, const tensors& u) const {
        if (b == bug::throws_under_ad) throw error("toy", "jvp not implemented for this case");
        const auto X = a(x[0]), Y = a(x[1]), U = a(u[0]), V = a(u[1]);
        auto D = array<double>::from_shape({3, 4});
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 4; ++j) {
                const double cosine = b == bug::missing_term ? 0.0 : std::cos(X(i, j));
                D(i, j) = (Y(j) + cosine) * U(i, j) + X(i, j) * V(j);
            }
        return {value(x), {tensor(D)}};
    }
    vjp_result vjp(const tensors& x, const tensors& w) const {
        if (b == bug::throws_under_ad) throw error("toy", "vjp not implemented for this case");
        const auto X = a(x[0]), Y = a(x[1]), W = a(w[0]);
        auto GX = array<double>::from_shape({3, 4});
        auto GY = array<double>::from_shape({4});
        GY.fill(0.0);
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 4; ++j) {
                const double cosine = b == bug::missing_term ? 0.0 : std::cos(X(i, j));
                GX(i, j) = W(i, j) * (Y(j) + cosine);
                if (b == bug::wrong_sign) GX(i, j) = -GX(i, j);
                if (b != bug::wrong_broadcast_reduction || i == 0) GY(j) += W(i, j) * X(i, j);
            }
        return {value(x), {tensor(GX), tensor(GY)}};
    }
    // g_w(x, y) = Jᵀw = (w·(y + cos x), Σ_i w·x). Its JVP along (u, v):
    //   d gx = w·(v - sin(x)·u), d gy = Σ_i w·u.
    engine gradient(const tensors& w) const {
        engine g;
        const toy self = *this;
        g.value = [self, w](const tensors& x) { return self.vjp(x, w).input_cotangents; };
        auto second = [self, w](const tensors& x, const tensors& u) {
            const auto X = a(x[0]), W = a(w[0]), U = a(u[0]), V = a(u[1]);
            auto DX = array<double>::from_shape({3, 4});
            auto DY = array<double>::from_shape({4});
            DY.fill(0.0);
            const double s = self.b == bug::wrong_second_derivative ? 1.0 : -1.0;
            for (std::size_t i = 0; i < 3; ++i)
                for (std::size_t j = 0; j < 4; ++j) {
                    DX(i, j) = W(i, j) * (V(j) + s * std::sin(X(i, j)) * U(i, j));
                    DY(j) += W(i, j) * U(i, j);
                }
            return jvp_result{self.vjp(x, w).input_cotangents, {tensor(DX), tensor(DY)}};
        };
        g.jvp = second;
        // vᵀ ∂g/∂x: the Hessian of wᵀf is symmetric, so this is the JVP along v.
        g.vjp = [second](const tensors& x, const tensors& v) {
            auto r = second(x, v);
            return vjp_result{r.outputs, r.output_tangents};
        };
        return g;
    }
    engine as_engine() const {
        engine e;
        const toy self = *this;
        e.value = [self](const tensors& x) { return self.value(x); };
        e.jvp = [self](const tensors& x, const tensors& u) { return self.jvp(x, u); };
        e.vjp = [self](const tensors& x, const tensors& w) { return self.vjp(x, w); };
        e.gradient = [self](const tensors& w) { return self.gradient(w); };
        return e;
    }
};

tensors toy_inputs(std::uint64_t seed, dtype d = dtype::f64) {
    rng g(seed);
    return {g.uniform_tensor(d, {3, 4}, -2.0, 2.0), g.uniform_tensor(d, {4}, -2.0, 2.0)};
}

gradient_report check_toy(toy::bug b, std::uint64_t seed, int order = 1) {
    toy t;
    t.b = b;
    oracle_options o;
    o.order = order;
    o.seed = seed;
    return check_gradients(t.as_engine(), toy_inputs(seed), o);
}

}  // namespace

TEST_CASE("oracle: a correct engine passes, first and second order, over many seeds") {
    for (std::uint64_t s = 1; s <= 20; ++s) {
        const auto r = check_toy(toy::bug::none, s, 2);
        INFO(r.to_string());
        CHECK(r.outcome == gradient_outcome::pass);
        REQUIRE(r.higher.size() == 1);
        CHECK(r.higher[0].outcome == gradient_outcome::pass);
        CHECK_FALSE(r.failed());
        CHECK(r.precision == dtype::f64);
    }
}

TEST_CASE("oracle: deliberately wrong engines are caught every time") {
    struct expectation {
        toy::bug bug;
        gradient_outcome outcome;
        int order;
    };
    const expectation cases[] = {
        {toy::bug::wrong_sign, gradient_outcome::reverse_forward_mismatch, 1},
        {toy::bug::wrong_broadcast_reduction, gradient_outcome::reverse_forward_mismatch, 1},
        {toy::bug::missing_term, gradient_outcome::gradient_fd_mismatch, 1},
        {toy::bug::nondeterministic, gradient_outcome::nondeterministic, 1},
        {toy::bug::throws_under_ad, gradient_outcome::exception_mismatch, 1},
        {toy::bug::throws_only_in_value, gradient_outcome::skipped, 1},
    };
    for (const auto& c : cases) {
        for (std::uint64_t s = 1; s <= 20; ++s) {
            const auto r = check_toy(c.bug, s);
            INFO("bug " << static_cast<int>(c.bug) << ", seed " << s << "\n" << r.to_string());
            CHECK(r.outcome == c.outcome);
            if (c.outcome != gradient_outcome::skipped) {
                CHECK(r.failed());
                CHECK(r.labels == 0);  // no filter may excuse these
            }
        }
    }
}

TEST_CASE("oracle: a wrong second derivative is caught at order 2 only") {
    for (std::uint64_t s = 1; s <= 20; ++s) {
        const auto r = check_toy(toy::bug::wrong_second_derivative, s, 2);
        INFO(r.to_string());
        CHECK(r.outcome == gradient_outcome::pass);
        REQUIRE(r.higher.size() == 1);
        CHECK(r.higher[0].outcome == gradient_outcome::gradient_fd_mismatch);
        CHECK(r.higher[0].order == 2);
        CHECK(r.failed());
        CHECK(check_toy(toy::bug::wrong_second_derivative, s, 1).outcome == gradient_outcome::pass);
    }
}

TEST_CASE("oracle: a value that throws while AD paths return is an exception mismatch") {
    engine e;
    e.value = [](const tensors&) -> tensors { throw error("engine", "value fails"); };
    e.vjp = [](const tensors& x, const tensors&) { return vjp_result{{x[0]}, {x[0]}}; };
    const auto r = check_gradients(e, toy_inputs(3));
    CHECK(r.outcome == gradient_outcome::exception_mismatch);
    CHECK(r.message.find("vjp returned normally") != std::string::npos);
    CHECK(r.failed());
}

TEST_CASE("oracle: AD outputs that differ from the value are output inconsistencies") {
    toy t;
    engine e = t.as_engine();
    e.vjp = [t](const tensors& x, const tensors& w) {
        auto d = t.vjp(x, w);
        auto y = d.outputs[0].as_array<double>();
        y(0, 0) += 1e-3;
        d.outputs[0] = tensor(y);
        return d;
    };
    const auto r = check_gradients(e, toy_inputs(4));
    CHECK(r.outcome == gradient_outcome::output_inconsistent);
    REQUIRE(r.comparison.has_value());
    CHECK(r.to_string().find("worst elements") != std::string::npos);
}

namespace {
// ReLU with the subgradient 0 at 0: correct everywhere it is differentiable.
engine relu_engine(dtype out = dtype::f64) {
    engine e;
    e.value = [out](const tensors& x) {
        auto v = x[0].cast(dtype::f64).as_array<double>();
        for (auto& z : v) z = z > 0 ? z : 0.0;
        return tensors{tensor(v).cast(out)};
    };
    e.jvp = [e](const tensors& x, const tensors& u) {
        const auto v = x[0].to<double>();
        auto d = u[0].cast(dtype::f64).as_array<double>();
        for (std::size_t i = 0; i < v.size(); ++i) d.data()[i] *= v.data()[i] > 0 ? 1.0 : 0.0;
        return jvp_result{e.value(x), {tensor(d)}};
    };
    e.vjp = [e](const tensors& x, const tensors& w) {
        const auto v = x[0].to<double>();
        auto d = w[0].cast(dtype::f64).as_array<double>();
        for (std::size_t i = 0; i < v.size(); ++i) d.data()[i] *= v.data()[i] > 0 ? 1.0 : 0.0;
        return vjp_result{e.value(x), {tensor(d)}};
    };
    return e;
}
}  // namespace

TEST_CASE("oracle: a correct engine at a non-differentiable point is labelled, not failed") {
    auto x = array<double>::from_shape({4});
    x = {0.5, 0.0, -1.0, 2.0};  // ReLU's kink at x[1]
    const auto r = check_gradients(relu_engine(), {tensor(x)});
    INFO(r.to_string());
    CHECK(r.outcome == gradient_outcome::gradient_fd_mismatch);
    CHECK(r.has(filter_label::non_differentiable_point));
    CHECK_FALSE(r.failed());
    // Away from the kink the same engine passes.
    x = {0.5, 0.25, -1.0, 2.0};
    CHECK(check_gradients(relu_engine(), {tensor(x)}).outcome == gradient_outcome::pass);
}

TEST_CASE("oracle: a NaN derivative at a kink and precision conversion are excused") {
    // |x| written as x / sqrt(x²) in the derivative: NaN at 0.
    engine e;
    e.value = [](const tensors& x) {
        auto v = x[0].as_array<double>();
        for (auto& z : v) z = std::fabs(z);
        return tensors{tensor(v)};
    };
    e.vjp = [e](const tensors& x, const tensors& w) {
        auto v = x[0].as_array<double>();
        const auto wv = w[0].as_array<double>();
        for (std::size_t i = 0; i < v.size(); ++i) v.data()[i] = wv.data()[i] * v.data()[i] / std::sqrt(v.data()[i] * v.data()[i]);
        return vjp_result{e.value(x), {tensor(v)}};
    };
    auto x = array<double>::from_shape({3});
    x = {1.0, 0.0, -2.0};
    const auto r = check_gradients(e, {tensor(x)});
    INFO(r.to_string());
    // The value and finite differences are finite at 0, so the NaN is not the
    // function's: the kink at 0 explains it (gone at points nudged off it).
    CHECK_FALSE(r.has(filter_label::nan_in_gradient));
    CHECK(r.has(filter_label::non_differentiable_point));
    CHECK_FALSE(r.failed());

    // f64 in, f16 out: finite differences of a float16 output cannot resolve the derivative.
    auto y = array<double>::from_shape({8});
    rng g(11);
    for (auto& v : y) v = g.uniform(0.1, 3.0);
    const auto rp = check_gradients(relu_engine(dtype::f16), {tensor(y)});
    INFO(rp.to_string());
    CHECK(rp.precision == dtype::f16);
    CHECK(rp.outcome == gradient_outcome::gradient_fd_mismatch);
    CHECK(rp.has(filter_label::precision_conversion));
    CHECK_FALSE(rp.failed());
}

TEST_CASE("oracle: tolerances are data keyed by dtype and order") {
    auto t = derivative_tolerances::defaults();
    CHECK(t.get(dtype::f64, 1) == tolerance{1e-5, 1e-5});
    CHECK(t.get(dtype::f32, 1) == tolerance{2e-3, 2e-3});
    CHECK(t.get(dtype::bf16, 1) == tolerance{1e-1, 1e-1});
    CHECK(t.get(dtype::f64, 2) == tolerance{1e-3, 1e-3});
    CHECK(t.get(dtype::f64, 5) == t.get(dtype::f64, 3));  // higher orders reuse the last
    t.set(dtype::f64, 1, {1e-9, 0.0});
    CHECK(t.get(dtype::f64, 1) == tolerance{1e-9, 0.0});
    CHECK(derivative_tolerances::nabla_fuzz().get(dtype::f32, 1) == tolerance{0.1, 1e-3});
    CHECK_THROWS_AS((void)derivative_tolerances{}.get(dtype::f64, 1), error);
}

TEST_CASE("oracle: bad use is an error that says what") {
    engine e;
    CHECK_THROWS_WITH_AS((void)check_gradients(e, toy_inputs(1)), doctest::Contains("no value function"), error);
    e = toy{}.as_engine();
    oracle_options o;
    o.wrt = {7};
    CHECK_THROWS_WITH_AS((void)check_gradients(e, toy_inputs(1), o), doctest::Contains("input 7"), error);
    engine only_value;
    only_value.value = e.value;
    CHECK(check_gradients(only_value, toy_inputs(1)).outcome == gradient_outcome::skipped);
}

TEST_CASE("oracle: the doctest adapter asserts on the report") {
    const auto r = check_toy(toy::bug::none, 5, 2);
    TENSORACLE_CHECK_GRADIENTS(r);
}

}  // namespace ad_oracle_test
