// The backward ops of training graphs (kitsune/semantics/grad_ops.py): round trip (custom and generic form).
// RUN: kitsune-opt %s --split-input-file | filecheck %s
// RUN: kitsune-opt %s --split-input-file --print-op-generic | kitsune-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @pointwise
// CHECK: graph.threshold_backward %g, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: graph.threshold_backward %g, %x {threshold = 0.5}
// CHECK: graph.gelu_backward %g, %x {approximate = "tanh"}
// CHECK: graph.sigmoid_backward %g, %x
// CHECK: graph.tanh_backward %g, %x
// CHECK: graph.silu_backward %g, %x
func.func @pointwise(%g: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = graph.threshold_backward %g, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %b = graph.threshold_backward %g, %x {threshold = 0.5} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %c = graph.gelu_backward %g, %x {approximate = "tanh"} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %d = graph.sigmoid_backward %g, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %e = graph.tanh_backward %g, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %f = graph.silu_backward %g, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %a, %b, %c, %d, %e, %f : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @rows
// CHECK: graph.softmax_backward %g, %y {dim = 0} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: graph.log_softmax_backward %g, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: graph.layer_norm_backward %g, %y, %m, %r, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<8xf32> -> tensor<4x8xf32>
func.func @rows(%g: tensor<4x8xf32>, %y: tensor<4x8xf32>, %m: tensor<4x1xf32>, %r: tensor<4x1xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = graph.softmax_backward %g, %y {dim = 0} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %b = graph.log_softmax_backward %g, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %c = graph.layer_norm_backward %g, %y, %m, %r, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %a, %b, %c : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
