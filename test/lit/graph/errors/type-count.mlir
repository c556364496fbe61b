// Two operands but one operand type.
// RUN: not kitsune-opt %s 2>&1 | filecheck %s
// RUN: rm -f %t && not kitsune-opt %s -o %t && not test -e %t

func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK:      {{.*}}type-count.mlir:[[# @LINE + 5]]:27{{$}}
  // CHECK-NEXT: %y = graph.add %a, %b : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: ^^^^^^
  // CHECK-NEXT: 'graph.add' has 2 operand(s) but 1 operand type(s)
  // CHECK-NEXT: kitsune-opt: error: the input is not valid MLIR (see above)
  %y = graph.add %a, %b : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
// CHECK-NOT: Traceback
