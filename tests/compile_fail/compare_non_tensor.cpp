// expect: tensoracle::compare\(actual, expected\): 'actual' must be a tensoracle::tensor or an xtensor expression
#include <vector>

#include <tensoracle/core.hpp>

int main() {
    const tensoracle::array<float> e = {1.f, 2.f};
#ifdef TENSORACLE_COMPILE_FAIL_CONTROL
    const tensoracle::array<float> a = {1.f, 2.f};
#else
    const std::vector<float> a = {1.f, 2.f};
#endif
    return tensoracle::compare(a, e).passes(tensoracle::level{-5}) ? 0 : 1;
}
