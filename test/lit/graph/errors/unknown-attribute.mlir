// An attribute name the op does not have: the message lists the ones it has.
// RUN: not kitsune-opt %s 2>&1 | filecheck %s
// RUN: rm -f %t && not kitsune-opt %s -o %t && not test -e %t

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK:      {{.*}}unknown-attribute.mlir:[[# @LINE + 5]]:26{{$}}
  // CHECK-NEXT: %y = graph.softmax %x {axis = 1} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: ^^^^
  // CHECK-NEXT: 'graph.softmax' has no attribute 'axis'; it has: dim
  // CHECK-NEXT: kitsune-opt: error: the input is not valid MLIR (see above)
  %y = graph.softmax %x {axis = 1} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
// CHECK-NOT: Traceback
