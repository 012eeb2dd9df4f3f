// expect: tensoracle::value_cast: converting an AD scalar to another floating or AD type would drop or mix derivatives
#include <tensoracle/ad/dual.hpp>
#include <tensoracle/core/value_cast.hpp>

int main() {
    const tensoracle::ad::dual<double> x(2.0, 1.0);
#ifdef TENSORACLE_COMPILE_FAIL_CONTROL
    return tensoracle::primal(x) == 2.0 ? 0 : 1;  // dropping the derivative on purpose
#else
    return tensoracle::value_cast<float>(x) == 2.0f ? 0 : 1;
#endif
}
