// expect: tensoracle::allclose\(actual, expected, tol\): tol must be tensoracle::tolerance\{atol, rtol\}
#include <tensoracle/core.hpp>

int main() {
    const tensoracle::array<float> a = {1.f};
#ifdef TENSORACLE_COMPILE_FAIL_CONTROL
    return tensoracle::allclose(a, a, tensoracle::tolerance{1e-5, 0.0}) ? 0 : 1;
#else
    return tensoracle::allclose(a, a, 1e-5) ? 0 : 1;
#endif
}
