// Code generation needs the gpu_queue level: a graph-level module is a diagnostic, not a traceback.
// RUN: not kitsune-opt %s -t triton 2>&1 | filecheck %s
// RUN: not kitsune-opt %s -t cuda 2>&1 | filecheck %s
// CHECK: kitsune-opt: error: CodegenError: {{.*}}not-lowered.mlir:8:3: @main must hold exactly one gpu_queue.program and a func.return (found 0 program(s) and 'graph.relu'); lower it with kitsune-opt -p 'kitsune-pipeline' first
// CHECK-NOT: Traceback

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
