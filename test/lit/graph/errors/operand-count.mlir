// Too few and too many operands for the op table's operand list. Without
// --parsing-diagnostics the first error stops kitsune-opt (exit 1); with it every
// chunk's error is printed.
// RUN: not kitsune-opt %s --split-input-file 2>&1 | filecheck %s
// RUN: kitsune-opt %s --split-input-file --parsing-diagnostics 2>&1 | filecheck %s --check-prefix=ALL
// RUN: rm -f %t && not kitsune-opt %s -o %t && not test -e %t

func.func @too_few(%a: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // CHECK:      {{.*}}operand-count.mlir:[[# @LINE + 5]]:21{{$}}
  // CHECK-NEXT: %y = graph.matmul %a : tensor<4x8xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: ^^
  // CHECK-NEXT: 'graph.matmul' expects 2 operand(s) (a, b), got 1
  // CHECK-NEXT: kitsune-opt: error: the input is not valid MLIR (see above)
  %y = graph.matmul %a : tensor<4x8xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
// CHECK-NOT: Traceback

// -----

func.func @too_many_optional(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  // ALL: 'graph.matmul' expects 2 operand(s) (a, b), got 1
  // ALL: {{.*}}operand-count.mlir:[[# @LINE + 2]]:25{{$}}
  // ALL: 'graph.layer_norm' expects 1 to 3 operand(s) (x, weight?, bias?), got 4
  %y = graph.layer_norm %x, %w, %w, %w : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

func.func @no_operands() -> tensor<4x8xf32> {
  // ALL: {{.*}}operand-count.mlir:[[# @LINE + 2]]:19{{$}}
  // ALL: 'graph.relu' expects 1 operand(s) (x), got 0
  %y = graph.relu : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
