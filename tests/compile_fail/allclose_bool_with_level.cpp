// expect: tensoracle::allclose\(actual, expected, tol\): integer and bool tensors compare exactly
#include <tensoracle/core.hpp>

int main() {
    const tensoracle::array<bool> a = {true, false};
#ifdef TENSORACLE_COMPILE_FAIL_CONTROL
    return tensoracle::allclose(a, a, tensoracle::exact) ? 0 : 1;
#else
    return tensoracle::allclose(a, a, tensoracle::level{-5}) ? 0 : 1;
#endif
}
