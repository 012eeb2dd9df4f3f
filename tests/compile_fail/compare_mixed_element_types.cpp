// expect: tensoracle::compare\(actual, expected\): the element types differ; cast one side first
#include <tensoracle/core.hpp>

int main() {
    const tensoracle::array<double> e = {1.0, 2.0};
#ifdef TENSORACLE_COMPILE_FAIL_CONTROL
    const tensoracle::array<double> a = {1.0, 2.0};
#else
    const tensoracle::array<float> a = {1.f, 2.f};
#endif
    return tensoracle::compare(a, e).passes(tensoracle::level{-5}) ? 0 : 1;
}
