// An op the graph dialect does not have.
// RUN: not kitsune-opt %s 2>&1 | filecheck %s
// RUN: rm -f %t && not kitsune-opt %s -o %t && not test -e %t

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK:      {{.*}}unknown-op.mlir:[[# @LINE + 4]]:25{{$}}
  // CHECK-NEXT: %y = graph.frobnicate %x : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK:      Operation graph.frobnicate is not registered
  // CHECK-NEXT: kitsune-opt: error: the input is not valid MLIR (see above)
  %y = graph.frobnicate %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
// CHECK-NOT: Traceback
