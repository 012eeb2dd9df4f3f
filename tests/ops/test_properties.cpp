// Property tests of the reference kernels (SONNX's per-op properties): identities
// that hold in real arithmetic, checked on random shapes and values from a seeded
// rng at a stated GraphNet level per dtype (exact where the identity moves data or
// flips signs). External truth for kernels whose values no single formula pins.
#include <doctest/doctest.h>

#include <tensoracle/ops/registry.hpp>
#include <tensoracle/core.hpp>

#include <cmath>
#include <functional>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ops_properties_test {

namespace to = tensoracle;

namespace {

using attrs = to::spec::attribute_map;

to::tensor op(std::string_view name, std::vector<to::tensor> in, const attrs& a = {}) {
    std::vector<const to::tensor*> args;
    for (const auto& t : in) args.push_back(&t);
    return to::spec::evaluate(to::ops::get_op(name), args, a).at(0);
}
to::tensor full_like(const to::tensor& t, double v) {
    to::tensor out = to::tensor::zeros(t.element_dtype(), t.shape());
    out.visit([&](auto s) {
        for (auto& x : s) x = to::value_cast<typename decltype(s)::value_type>(v);
    });
    return out;
}

struct property {
    std::string name;
    double lo, hi;          ///< the domain the input is drawn from
    std::optional<int> level;  ///< GraphNet level; none: exact (equal element by element)
    std::function<std::pair<to::tensor, to::tensor>(const to::tensor&)> sides;
};

/// A random shape of rank 1..4 with at most 512 elements.
to::shape_type random_shape(to::rng& r) {
    to::shape_type s(static_cast<std::size_t>(r.integer(1, 4)));
    std::size_t n = 1;
    for (auto& d : s) {
        d = static_cast<std::size_t>(r.integer(1, 8));
        n *= d;
    }
    return n <= 512 ? s : to::shape_type{n % 512 + 1};
}

std::vector<property> properties() {

    return {
        {"Sqrt(x)^2 = x", 0.0, 100.0, -5, [](const to::tensor& x) { const auto s = op("Sqrt", {x}); return std::pair{op("Mul", {s, s}), x}; }},
        {"Log(Exp(x)) = x", -20.0, 20.0, -5, [](const to::tensor& x) { return std::pair{op("Log", {op("Exp", {x})}), x}; }},
        {"Exp(Log(x)) = x", 1e-3, 1e3, -4, [](const to::tensor& x) { return std::pair{op("Exp", {op("Log", {x})}), x}; }},
        {"x * Reciprocal(x) = 1", 0.01, 100.0, -5, [](const to::tensor& x) { return std::pair{op("Mul", {x, op("Reciprocal", {x})}), full_like(x, 1.0)}; }},
        {"Sin(x)^2 + Cos(x)^2 = 1", -10.0, 10.0, -5,
         [](const to::tensor& x) {
             const auto s = op("Sin", {x}), c = op("Cos", {x});
             return std::pair{op("Add", {op("Mul", {s, s}), op("Mul", {c, c})}), full_like(x, 1.0)};
         }},
        {"Tanh(x) = 2 Sigmoid(2x) - 1", -8.0, 8.0, -4,
         [](const to::tensor& x) {
             const auto two = full_like(x, 2.0);
             const auto sg = op("Sigmoid", {op("Mul", {x, two})});
             return std::pair{op("Tanh", {x}), op("Sub", {op("Mul", {sg, two}), full_like(x, 1.0)})};
         }},
        {"Atan(Tan(x)) = x", -1.4, 1.4, -4, [](const to::tensor& x) { return std::pair{op("Atan", {op("Tan", {x})}), x}; }},
        {"Asin(Sin(x)) = x", -1.4, 1.4, -4, [](const to::tensor& x) { return std::pair{op("Asin", {op("Sin", {x})}), x}; }},
        {"Exp(a + b) = Exp(a) Exp(b), b = x / 2", -10.0, 10.0, -4,
         [](const to::tensor& x) {
             const auto b = op("Div", {x, full_like(x, 2.0)});
             return std::pair{op("Exp", {op("Add", {x, b})}), op("Mul", {op("Exp", {x}), op("Exp", {b})})};
         }},
        {"Cosh(x)^2 - Sinh(x)^2 = 1", -3.0, 3.0, -3,
         [](const to::tensor& x) {
             const auto c = op("Cosh", {x}), s = op("Sinh", {x});
             return std::pair{op("Sub", {op("Mul", {c, c}), op("Mul", {s, s})}), full_like(x, 1.0)};
         }},
        {"rows of Softmax sum to 1", -10.0, 10.0, -5,
         [](const to::tensor& x) {
             const auto axis = std::int64_t{-1};
             const auto s = op("Softmax", {x}, {{"axis", axis}});
             to::tensor axes(to::array<std::int64_t>{axis});
             return std::pair{op("ReduceSum", {s, axes}, {{"keepdims", std::int64_t{0}}}), full_like(op("ReduceMax", {x}, {{"axes", std::vector<std::int64_t>{-1}}, {"keepdims", std::int64_t{0}}}), 1.0)};
         }},
        {"LogSoftmax(x) = Log(Softmax(x))", -10.0, 10.0, -4,
         [](const to::tensor& x) { return std::pair{op("LogSoftmax", {x}), op("Log", {op("Softmax", {x})})}; }},
        {"Neg(Neg(x)) = x", -100.0, 100.0, std::nullopt, [](const to::tensor& x) { return std::pair{op("Neg", {op("Neg", {x})}), x}; }},
        {"Relu(x) - Relu(-x) = x", -100.0, 100.0, std::nullopt,
         [](const to::tensor& x) { return std::pair{op("Sub", {op("Relu", {x}), op("Relu", {op("Neg", {x})})}), x}; }},
        {"Abs(x) = Max(x, -x)", -100.0, 100.0, std::nullopt, [](const to::tensor& x) { return std::pair{op("Abs", {x}), op("Max", {x, op("Neg", {x})})}; }},
        {"Erf(-x) = -Erf(x)", -4.0, 4.0, std::nullopt, [](const to::tensor& x) { return std::pair{op("Erf", {op("Neg", {x})}), op("Neg", {op("Erf", {x})})}; }},
        {"Transpose(Transpose(x, p), p^-1) = x (p reverses the axes)", -100.0, 100.0, std::nullopt,
         [](const to::tensor& x) {
             std::vector<std::int64_t> p(x.rank());
             for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<std::int64_t>(p.size() - 1 - i);
             return std::pair{op("Transpose", {op("Transpose", {x}, {{"perm", p}})}, {{"perm", p}}), x};
         }},
        {"Concat(Split(x, axis 0)) = x", -100.0, 100.0, std::nullopt,
         [](const to::tensor& x) {
             const auto& split_op = to::ops::get_op("Split");
             // Split without sizes cuts equal parts: as many as the first dimension's smallest divisor > 1.
             std::size_t parts = x.shape()[0];
             for (std::size_t k = 2; k <= x.shape()[0]; ++k) {
                 if (x.shape()[0] % k == 0) {
                     parts = k;
                     break;
                 }
             }
             auto pieces = to::spec::evaluate(split_op, {&x},
                                              {{"axis", std::int64_t{0}}, {"__num_outputs", static_cast<std::int64_t>(parts)}});
             return std::pair{op("Concat", pieces, {{"axis", std::int64_t{0}}}), x};
         }},
    };
}

}  // namespace

TEST_CASE("properties: kernels satisfy their real-arithmetic identities on random shapes (f32 and f64 at the stated level, exact ones exactly)") {
    to::rng r(2026);
    for (const auto& p : properties()) {
        CAPTURE(p.name);
        for (const auto d : {to::dtype::f32, to::dtype::f64}) {
            CAPTURE(d);
            for (int trial = 0; trial < 8; ++trial) {
                const auto x = r.uniform_tensor(d, random_shape(r), p.lo, p.hi);
                CAPTURE(x);
                const auto [lhs, rhs] = p.sides(x);
                REQUIRE(lhs.shape() == rhs.shape());
                if (!p.level) {
                    for (std::size_t i = 0; i < lhs.size(); ++i) REQUIRE(lhs.value_as_double(i) == rhs.value_as_double(i));
                    continue;
                }
                const auto report = to::compare(lhs, rhs);
                CHECK_MESSAGE(report.passes(to::level{static_cast<double>(*p.level)}), report.describe(to::tolerance_level(d, *p.level)));
            }
        }
    }
}

TEST_CASE("properties: a wrong kernel breaks its identity (the check has teeth)") {
    // Sqrt(x)^2 with Sqrt one ulp-scaled off (x * 1.001): the level -5 check fails.
    to::rng r(3);
    const auto x = r.uniform_tensor(to::dtype::f32, {64}, 1.0, 100.0);
    const auto s = op("Mul", {op("Sqrt", {x}), full_like(x, 1.001)});
    CHECK_FALSE(to::compare(op("Mul", {s, s}), x).passes(to::level{-5}));
}

TEST_CASE("broadcast walk: each output element reads what numpy's index rule names") {
    to::rng g(4242);
    for (int trial = 0; trial < 400; ++trial) {
        const std::size_t r = static_cast<std::size_t>(g.integer(0, 5));
        to::shape_type out(r);
        for (auto& d : out) d = static_cast<std::size_t>(g.below(8) == 0 ? g.integer(0, 1) : g.integer(1, 4));
        const std::size_t m = static_cast<std::size_t>(g.integer(1, 3));
        std::vector<to::shape_type> in(m);
        for (auto& s : in) {
            const std::size_t rj = static_cast<std::size_t>(g.integer(0, static_cast<std::int64_t>(r)));
            for (std::size_t k = r - rj; k < r; ++k) s.push_back(g.bernoulli(0.3) ? 1 : out[k]);
        }
        CAPTURE(to::to_string(out));
        const auto got = to::ops::detail::broadcast_offsets(in, out);
        const std::size_t n = to::element_count(out);
        to::shape_type idx(r, 0);
        for (std::size_t f = 0; f < n; ++f) {
            for (std::size_t j = 0; j < m; ++j) {
                std::size_t off = 0;
                for (std::size_t k = r - in[j].size(); k < r; ++k) {
                    const std::size_t d = in[j][k - (r - in[j].size())];
                    off = off * d + (d == 1 ? 0 : idx[k]);
                }
                REQUIRE(got[j][f] == off);
            }
            for (std::size_t k = r; k-- > 0;) {
                if (++idx[k] < out[k]) break;
                idx[k] = 0;
            }
        }
        for (const auto& o : got) CHECK(o.size() == n);
    }
}

}  // namespace ops_properties_test
