#include <iostream>

#include <tensoracle/core.hpp>
#ifdef TENSORACLE_COMPILED
#include <tensoracle/ad/engine.hpp>
#include <tensoracle/ad/oracle.hpp>
#include <tensoracle/ops/registry.hpp>
#endif

int main() {
    const tensoracle::array<float> expected = {1.f, 2.f, 3.f};
    const tensoracle::array<float> actual = {1.f, 2.f, 3.0000005f};
    const auto result = tensoracle::allclose(actual, expected, tensoracle::level{-5});
    if (!result) {
        std::cerr << result;
        return 1;
    }
#ifdef TENSORACLE_COMPILED
    // By name, from the installed library: an op's gradients against finite differences.
    tensoracle::rng g(3);
    const tensoracle::ad::tensors x{g.uniform_tensor(tensoracle::dtype::f64, {4, 5}, -1.0, 1.0)};
    const auto report = tensoracle::ad::check_gradients(tensoracle::ad::op_engine("Softmax"), x, {});
    if (report.failed()) {
        std::cerr << report.to_string();
        return 1;
    }
    std::cout << "consumer OK (compiled mode: " << tensoracle::ops::registry().size()
              << " ops by name, Softmax's gradients checked; tensoracle " << tensoracle::version_string << ")\n";
#else
    std::cout << "consumer OK (tensoracle " << tensoracle::version_string << ")\n";
#endif
    return 0;
}
