// A syntax error (missing ':' before the types): file:line:col, the source line,
// the message, the kitsune-opt error line, exit code != 0 and no output file.
// RUN: not kitsune-opt %s 2>&1 | filecheck %s
// RUN: rm -f %t && not kitsune-opt %s -o %t && not test -e %t

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK:      {{.*}}syntax-error.mlir:[[# @LINE + 5]]:22{{$}}
  // CHECK-NEXT: %y = graph.relu %x tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: ^^^^^^
  // CHECK-NEXT: Expected ':'
  // CHECK-NEXT: kitsune-opt: error: the input is not valid MLIR (see above)
  %y = graph.relu %x tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
// CHECK-NOT: Traceback
