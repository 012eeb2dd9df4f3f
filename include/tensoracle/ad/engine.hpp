// tensoracle: any op of the kit, by its ONNX name, as an engine for the
// gradient oracle (value, JVP, VJP, second order). Goes through the registry
// of every op, so it suits campaigns and graphs; a test of one op compiles far
// faster with op_engine<ops::X>() from ad/typed_engine.hpp.
#pragma once

#include <concepts>
#include <string>
#include <string_view>

#include "tensoracle/ad/op_rules.hpp"
#include "tensoracle/ad/typed_engine.hpp"

namespace tensoracle::ad {

namespace detail {
template <class V>
const derivative_rules<V>& rules_or_throw(std::string_view op_type) {
    const auto* r = find_rules<V>(op_type);
    if (r == nullptr) {
        throw unsupported_error("tensoracle::ad::op_engine(" + std::string(op_type) + ")",
                                "the op has no derivative rules (not differentiable)");
    }
    return *r;
}
}  // namespace detail

/// Engine for the op named op_type with fixed attributes (see the typed
/// op_engine<Op, V> for the conventions). Throws for an unknown or
/// non-differentiable op.
template <class V = double>
    requires std::floating_point<V>
[[nodiscard]] engine op_engine(std::string_view op_type, spec::attribute_map attributes = {}) {
    return detail::make_op_engine<V>(&ops::get_op(op_type), &detail::rules_or_throw<V>(op_type),
                                     &detail::rules_or_throw<dual<V>>(op_type), std::move(attributes));
}

}  // namespace tensoracle::ad
