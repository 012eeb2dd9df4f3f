// tensoracle: base classes that state, once, the spec facts most ops share, so
// an op file writes only what is particular to its op.
//
//   struct cosh_fn : formula::cosh, spec::elementwise_signature<"Cosh", 9, types::ieee_floating> {};
//   struct Trilu : spec::like_input<0> { ... };   // output 0: input 0's shape and dtype
//   struct Resize : spec::differentiable_input<0> { ... };   // derivatives in X only
//
// A member the op declares itself hides the inherited one, so an op whose output
// dtype is not its input's simply writes output_dtypes and keeps the rest.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/spec/attributes.hpp"
#include "tensoracle/spec/op.hpp"
#include "tensoracle/spec/op_name.hpp"

namespace tensoracle::spec {

/// What an element-wise formula struct (ops/unary, ops/binary) tells the family
/// template besides its arithmetic: the ONNX op type and the opset of the
/// schema it follows, the input dtypes (the output has the input's dtype) and
/// its attributes (none unless said).
template <op_name Name, int Opset, dtype_set Types, class Attributes = no_attributes>
struct elementwise_signature {
    static constexpr std::string_view op_type = Name.view();
    static constexpr int opset = Opset;
    static constexpr dtype_set types = Types;
    static constexpr dtype_set out_types = Types;
    using attributes = Attributes;
};

/// An element-wise predicate (comparisons, logic, IsNaN): a boolean output
/// whatever the input dtype.
template <op_name Name, int Opset, dtype_set Types, class Attributes = no_attributes>
struct predicate_signature : elementwise_signature<Name, Opset, Types, Attributes> {
    static constexpr dtype_set out_types = types::boolean;
    static constexpr dtype output_dtype = dtype::boolean;
};

/// output_dtypes: the one output has input I's dtype.
template <std::size_t I>
struct dtype_of_input {
    template <int = 0>
    static std::vector<dtype> output_dtypes(const context& c) {
        return {c.input_dtype(I)};
    }
};

/// output_shapes: the one output has input I's shape.
template <std::size_t I>
struct shape_of_input {
    template <int = 0>
    static shape_exprs output_shapes(const context& c) {
        return {c.shape(I)};
    }
};

/// differentiable_inputs: input I only, when it is floating; the other inputs
/// are parameters (geometry, a target dtype), not data.
template <std::size_t I>
struct differentiable_input {
    template <int = 0>
    static std::vector<std::size_t> differentiable_inputs(const context& c) {
        if (!info(c.input_dtype(I)).is_floating) return {};
        return {I};
    }
};

/// Both: the one output is shaped and typed like input I (normalizations,
/// element-wise ops with extra operands, masks).
template <std::size_t I>
struct like_input : dtype_of_input<I>, shape_of_input<I> {};

}  // namespace tensoracle::spec
