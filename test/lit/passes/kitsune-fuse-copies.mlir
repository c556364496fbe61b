// RUN: kitsune-opt %s -p 'kitsune-form-regions,kitsune-materialize,kitsune-fuse-copies' | filecheck %s
// RUN: kitsune-opt %s -p 'kitsune-form-regions,kitsune-materialize' | filecheck %s --check-prefix=BEFORE

// A decode step's KV-cache concat: once materialize has moved the projection into a task of its own, the
// concat (and the head split of q) are tasks of layout ops only, copies of the whole cache. fuse-copies
// inlines them into the attention task, which then reads the cache and the projection directly.

// BEFORE: dataflow.task "linear_0" contraction
// BEFORE: graph.concat
// BEFORE: dataflow.task "attention_1"

// CHECK-LABEL: func.func @main
// CHECK: %[[P:.*]] = dataflow.task "linear_linear_0" contraction
// CHECK: graph.linear
// CHECK-NOT: dataflow.task
// CHECK: %[[C:.*]] = dataflow.channel %[[P]] {relation = "all"}
// CHECK-NEXT: dataflow.task "attention_1" contraction (%{{.*}}, %[[C]])
// CHECK: graph.concat
// CHECK: graph.attention
// CHECK-NOT: dataflow.task
func.func @main(%x: tensor<2x32xf32>, %w: tensor<64x32xf32>, %cache: tensor<2x2x40x8xf32>) -> tensor<2x32xf32> {
  %p = graph.linear %x, %w : tensor<2x32xf32>, tensor<64x32xf32> -> tensor<2x64xf32>
  %q, %k, %v = graph.split %p {dim = 1, sizes = [32, 16, 16]} : tensor<2x64xf32> -> (tensor<2x32xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  %q4 = graph.reshape %q : tensor<2x32xf32> -> tensor<2x4x1x8xf32>
  %k4 = graph.reshape %k : tensor<2x16xf32> -> tensor<2x2x1x8xf32>
  %v4 = graph.reshape %v : tensor<2x16xf32> -> tensor<2x2x1x8xf32>
  %kc = graph.concat %cache, %k4 {dim = 2} : tensor<2x2x40x8xf32>, tensor<2x2x1x8xf32> -> tensor<2x2x41x8xf32>
  %vc = graph.concat %cache, %v4 {dim = 2} : tensor<2x2x40x8xf32>, tensor<2x2x1x8xf32> -> tensor<2x2x41x8xf32>
  %a = graph.attention %q4, %kc, %vc : tensor<2x4x1x8xf32>, tensor<2x2x41x8xf32>, tensor<2x2x41x8xf32> -> tensor<2x4x1x8xf32>
  %y = graph.reshape %a : tensor<2x4x1x8xf32> -> tensor<2x32xf32>
  func.return %y : tensor<2x32xf32>
}
