// MLIR 15.0.6: affine-loop-fusion moves a write of a reused buffer ahead of a read of it.
//
// @kernel is Softmax over a 1x3 row as MLIR itself lowers it (tosa-to-linalg, CSE,
// one-shot-bufferize, convert-linalg-to-affine-loops; written by tensoracle's `mlir`
// backend, unedited). Bufferization reuses %0, the row maximum's buffer, for the row
// sum once the maximum has been read: the loop computing x - max reads %0, then a loop
// resets %0 to 0 for the sum. affine-loop-fusion fuses that reset into the first nest
// ahead of the read, so x - 0 is exponentiated instead of x - max, and the sum of
// another row divides it. Softmax([-1, 0, 1]) prints [0.0900306, 0.244728, 0.665241]
// without the pass and [0.183777, 0.345794, 0.470428] with it. The program is valid
// before and after (mlir-opt verifies both). Upstream, affine-loop-fusion's missed
// producer-read / consumer-write dependences are llvm/llvm-project#212032 (open).
// Found by the `mlir` backend on the ONNX node tests (Softmax, LogSoftmax,
// AveragePool); docs/FINDINGS.md. tests/mlir/check_known_bugs.cmake runs it in CTest:
//
//   P=lower-affine,convert-scf-to-cf,convert-math-to-llvm,convert-memref-to-llvm,convert-arith-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts
//   mlir-opt-15 --pass-pipeline="$P" affine_loop_fusion_war.mlir | mlir-cpu-runner-15 -e main -entry-point-result=void \
//       -shared-libs=/usr/lib/llvm-15/lib/libmlir_runner_utils.so
//   mlir-opt-15 --pass-pipeline="func.func(affine-loop-fusion),$P" affine_loop_fusion_war.mlir | ...   (wrong)
func.func @kernel(%arg0: memref<1x3xf32>) -> memref<1x3xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant -3.40282347E+38 : f32
  %cst_0 = arith.constant 0.000000e+00 : f32
  %0 = memref.alloc() {alignment = 128 : i64} : memref<1xf32>
  affine.for %arg1 = 0 to 1 {
    affine.store %cst, %0[%arg1] : memref<1xf32>
  }
  affine.for %arg1 = 0 to 1 {
    affine.for %arg2 = 0 to 3 {
      %4 = affine.load %arg0[%arg1, %arg2] : memref<1x3xf32>
      %5 = affine.load %0[%arg1] : memref<1xf32>
      %6 = arith.cmpf ogt, %4, %5 : f32
      %7 = arith.select %6, %4, %5 : f32
      affine.store %7, %0[%arg1] : memref<1xf32>
    }
  }
  %1 = memref.alloc() {alignment = 128 : i64} : memref<1x3xf32>
  affine.for %arg1 = 0 to 1 {
    affine.for %arg2 = 0 to 3 {
      %4 = affine.load %arg0[%arg1, %arg2] : memref<1x3xf32>
      %5 = affine.load %0[%arg1] : memref<1xf32>
      %6 = arith.subf %4, %5 : f32
      affine.store %6, %1[%arg1, %arg2] : memref<1x3xf32>
    }
  }
  %2 = memref.alloc() {alignment = 128 : i64} : memref<1x3xf32>
  affine.for %arg1 = 0 to 1 {
    affine.for %arg2 = 0 to 3 {
      %4 = affine.load %1[%arg1, %arg2] : memref<1x3xf32>
      %5 = math.exp %4 : f32
      affine.store %5, %2[%arg1, %arg2] : memref<1x3xf32>
    }
  }
  affine.for %arg1 = 0 to 1 {
    affine.store %cst_0, %0[%arg1] : memref<1xf32>
  }
  affine.for %arg1 = 0 to 1 {
    affine.for %arg2 = 0 to 3 {
      %4 = affine.load %2[%arg1, %arg2] : memref<1x3xf32>
      %5 = affine.load %0[%arg1] : memref<1xf32>
      %6 = arith.addf %4, %5 : f32
      affine.store %6, %0[%arg1] : memref<1xf32>
    }
  }
  %3 = memref.expand_shape %0 [[0, 1]] : memref<1xf32> into memref<1x1xf32>
  affine.for %arg1 = 0 to 1 {
    affine.for %arg2 = 0 to 3 {
      %4 = affine.load %2[%arg1, %arg2] : memref<1x3xf32>
      %5 = affine.load %3[%arg1, %c0] : memref<1x1xf32>
      %6 = arith.divf %4, %5 : f32
      affine.store %6, %1[%arg1, %arg2] : memref<1x3xf32>
    }
  }
  memref.dealloc %0 : memref<1xf32>
  memref.dealloc %2 : memref<1x3xf32>
  return %1 : memref<1x3xf32>
}func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func @main() {
  %x = memref.alloc() : memref<1x3xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = arith.constant -1.0 : f32
  %b = arith.constant 0.0 : f32
  %c = arith.constant 1.0 : f32
  memref.store %a, %x[%c0, %c0] : memref<1x3xf32>
  memref.store %b, %x[%c0, %c1] : memref<1x3xf32>
  memref.store %c, %x[%c0, %c2] : memref<1x3xf32>
  %y = call @kernel(%x) : (memref<1x3xf32>) -> memref<1x3xf32>
  %u = memref.cast %y : memref<1x3xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
