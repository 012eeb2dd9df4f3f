// expect: tensoracle::tolerance_level<T>\(t\): T must be a floating element type
#include <cstdint>

#include <tensoracle/core.hpp>

int main() {
#ifdef TENSORACLE_COMPILE_FAIL_CONTROL
    return tensoracle::tolerance_level<float>(-5).atol > 0 ? 0 : 1;
#else
    return tensoracle::tolerance_level<std::int32_t>(-5).atol > 0 ? 0 : 1;
#endif
}
