// MLIR 15.0.6: tosa-to-linalg divides an avg_pool2d window by a wrong element count when
// the kernel is wider than the input plus its left padding.
//
// A 1x2 row of ones, kernel 1x38, right padding 37: the one window holds both ones and
// 36 padding zeros. TOSA's avg_pool2d divides by the elements that are not padding
// (ONNX AveragePool with count_include_pad=0 the same), so the answer is 1; MLIR 15
// prints 2, a count of 1. The module is valid TOSA (pads below the kernel size, output
// width (2 + 37 - 38) / 28 + 1 = 1). Found by the mlir-O0 backend (a generated
// AveragePool reduced by `tensoracle reduce` to the ONNX op alone, then written here as
// TOSA by hand); docs/FINDINGS.md. tests/mlir/check_known_bugs.cmake runs it in CTest
// through the mlir-O0 pipeline of docs/BACKENDS.md, expecting the wrong 2.
func.func @main() {
  %x = "tosa.const"() {value = dense<1.0> : tensor<1x1x2x1xf32>} : () -> tensor<1x1x2x1xf32>
  %y = "tosa.avg_pool2d"(%x) {kernel = [1, 38], pad = [0, 0, 0, 37], stride = [1, 28]} : (tensor<1x1x2x1xf32>) -> tensor<1x1x1x1xf32>
  %u = tensor.cast %y : tensor<1x1x1x1xf32> to tensor<*xf32>
  %m = bufferization.to_memref %u : memref<*xf32>
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(memref<*xf32>)
