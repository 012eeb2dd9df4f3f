// expect: tensoracle::ops: this op does not accept this element type
// Celu is float32-only in ONNX: a dual number over double is rejected like a double.
#include <tensoracle/ad/dual.hpp>
#include <tensoracle/ops/unary.hpp>

int main() {
#ifdef TENSORACLE_COMPILE_FAIL_CONTROL
    using S = tensoracle::ad::dual<float>;
#else
    using S = tensoracle::ad::dual<double>;
#endif
    auto x = tensoracle::array<S>::from_shape({2});
    x(0) = S(-1.0f, 1.0f);
    x(1) = S(2.0f, 1.0f);
    const auto y = tensoracle::ops::Celu::compute<S>(x);
    return y(1).d == 1.0f ? 0 : 1;
}
