// MLIR 15.0.6: canonicalize folds tosa.reshape of an all-true i1 constant into
// [true, false, false, false].
//
// The constant is written element by element (dense<[[true, true], [true, true]]>);
// MLIR stores it as a splat, and the reshape folder re-reads the splat's one byte as
// packed bits, so one element stays true. Printed in hex for a large tensor, the same
// folded constant is `dense<"0x01">`, which MLIR's own parser then rejects ("elements
// hex data size is invalid"): how the mlir and mlir-O0 backends met it, on a Dropout
// mask (all true) reshaped twice. docs/FINDINGS.md; tests/mlir/check_known_bugs.cmake
// runs `mlir-opt-15 --canonicalize` on it in CTest, expecting the wrong fold.
func.func @main() -> tensor<4xi1> {
  %0 = "tosa.const"() {value = dense<[[true, true], [true, true]]> : tensor<2x2xi1>} : () -> tensor<2x2xi1>
  %1 = "tosa.reshape"(%0) {new_shape = [4]} : (tensor<2x2xi1>) -> tensor<4xi1>
  return %1 : tensor<4xi1>
}
