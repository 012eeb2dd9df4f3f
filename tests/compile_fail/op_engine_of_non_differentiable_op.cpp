// expect: op_engine<Op>: Op has no kernel on AD scalars \(run_real<S>\), so the op is not differentiable
// ArgMax has no derivative: asking for its engine is a compile error naming the op engine.
#include <tensoracle/ad/typed_engine.hpp>
#include <tensoracle/ops/reduce.hpp>

namespace ad = tensoracle::ad;
namespace ops = tensoracle::ops;

int main() {
#ifdef TENSORACLE_COMPILE_FAIL_CONTROL
    const auto e = ad::op_engine<ops::ReduceSum>();
#else
    const auto e = ad::op_engine<ops::ArgMax>();
#endif
    return e.value ? 0 : 1;
}
