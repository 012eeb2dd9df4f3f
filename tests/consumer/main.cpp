#include <iostream>

#include <tensoracle/core.hpp>

int main() {
    const tensoracle::array<float> expected = {1.f, 2.f, 3.f};
    const tensoracle::array<float> actual = {1.f, 2.f, 3.0000005f};
    const auto result = tensoracle::allclose(actual, expected, tensoracle::level{-5});
    if (!result) {
        std::cerr << result;
        return 1;
    }
    std::cout << "consumer OK (tensoracle " << tensoracle::version_string << ")\n";
    return 0;
}
