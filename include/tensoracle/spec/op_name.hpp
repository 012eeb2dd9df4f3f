// tensoracle: spec::op_name, an ONNX op type as a template argument.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace tensoracle::spec {

/// An op type usable as a template argument (`elementwise_signature<"Relu", ...>`),
/// which compilers also print in full in a diagnostic naming the template.
template <std::size_t N>
struct op_name {
    char text[N]{};
    consteval op_name(const char (&name)[N]) { std::copy_n(name, N, text); }  // NOLINT: implicit on purpose
    [[nodiscard]] constexpr std::string_view view() const { return {text, N - 1}; }
};

/// Op's op_type as an op_name.
template <class Op>
consteval auto op_name_of() {
    char text[Op::op_type.size() + 1]{};
    std::copy_n(Op::op_type.data(), Op::op_type.size(), text);
    return op_name<Op::op_type.size() + 1>(text);
}

}  // namespace tensoracle::spec
