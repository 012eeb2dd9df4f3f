// expect: tensoracle::dtype_traits<T>: T is not an element type
#include <tensoracle/core.hpp>

int main() {
#ifdef TENSORACLE_COMPILE_FAIL_CONTROL
    return tensoracle::dtype_traits<double>::bits == 64 ? 0 : 1;
#else
    return tensoracle::dtype_traits<long double>::bits == 80 ? 0 : 1;
#endif
}
