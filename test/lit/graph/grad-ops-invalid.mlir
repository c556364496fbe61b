// Verifier failures of the backward ops, at the op's line.
// RUN: kitsune-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @ln_stats_shape(%g: tensor<4x8xf32>, %x: tensor<4x8xf32>, %m: tensor<4xf32>) {
  // CHECK: {{.*}}grad-ops-invalid.mlir:[[# @LINE + 1]]:3: 'graph.layer_norm_backward' mean has shape [4], expected [4, 1] (the statistics layer_norm saved)
  %y = graph.layer_norm_backward %g, %x, %m, %m : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @softmax_backward_rank(%g: tensor<4x8xf32>, %y: tensor<8xf32>) {
  // CHECK: {{.*}}grad-ops-invalid.mlir:[[# @LINE + 1]]:3: 'graph.softmax_backward' grad [4, 8] and output [8] must have the same shape
  %d = graph.softmax_backward %g, %y : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return
}
