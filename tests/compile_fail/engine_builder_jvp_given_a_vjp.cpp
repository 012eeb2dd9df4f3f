// expect: engine_builder::jvp\(f\): f must be callable as f\(const tensors& x, const tensors& input_tangents\) and return jvp_result
// A VJP (cotangents per input) handed to the JVP slot: the builder names the
// slot and the signature it needs instead of failing at run time.
#include <tensoracle/ad/oracle.hpp>

namespace ad = tensoracle::ad;

int main() {
    const auto vjp = [](const ad::tensors& x, const ad::tensors& w) { return ad::vjp_result{x, w}; };
    auto b = ad::engine_builder().value([](const ad::tensors& x) { return x; });
#ifdef TENSORACLE_COMPILE_FAIL_CONTROL
    b.vjp(vjp);
#else
    b.jvp(vjp);
#endif
    return b.build().vjp ? 0 : 1;
}
