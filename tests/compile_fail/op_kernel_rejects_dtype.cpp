// expect: tensoracle::ops: this op does not accept this element type
#include <tensoracle/ops/unary.hpp>

int main() {
#ifdef TENSORACLE_COMPILE_FAIL_CONTROL
    const tensoracle::array<float> x = {-1.f, 2.f};
    return tensoracle::ops::Relu::compute<float>(x)(0) == 0.f ? 0 : 1;
#else
    const tensoracle::array<bool> x = {true, false};
    return tensoracle::ops::Relu::compute<bool>(x)(0) ? 0 : 1;  // Relu takes no bool
#endif
}
