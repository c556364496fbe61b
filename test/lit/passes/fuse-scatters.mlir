// kitsune-fuse-scatters: a zero-started index_add whose source rows another task computes (with that task's
// domain shape) becomes one more result of that task, added by its tiles in the epilogue; the scatter's own
// task goes, and its reader reads the producer's new result through an "all" channel.
// RUN: kitsune-opt %s -p 'kitsune-form-regions,kitsune-materialize,kitsune-fuse-copies,kitsune-fuse-scatters' | filecheck %s
// RUN: kitsune-opt %s -p 'kitsune-form-regions,kitsune-materialize,kitsune-fuse-copies' | filecheck %s --check-prefix=APART

// CHECK-LABEL: func.func @edges(
// CHECK:         %{{.*}}, %{{.*}}, %[[AGG:.*]] = dataflow.task "linear_0" contraction ({{.*}}) tile {{.*}} -> (tensor<40x16xf32>, tensor<40x16xf32>, tensor<9x16xf32>) {
// CHECK:           %[[M:.*]] = graph.linear
// CHECK:           %[[R:.*]] = graph.relu %[[M]]
// CHECK:           %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<9x16xf32>
// CHECK-NEXT:      %[[S:.*]] = graph.index_add %[[Z]], %{{.*}}, %[[R]] {dim = 0}
// CHECK-NEXT:      dataflow.yield %{{.*}}, %[[R]], %[[S]] : tensor<40x16xf32>, tensor<40x16xf32>, tensor<9x16xf32>
// CHECK:         dataflow.channel %[[AGG]] {relation = "all"} : tensor<9x16xf32>
// CHECK-NOT:     graph.index_add
// APART:         dataflow.task "index_add{{.*}}" gather
func.func @edges(%h: tensor<40x16xf32>, %w: tensor<16x16xf32>, %e: tensor<40x16xf32>, %dst: tensor<40xi64>,
                 %x: tensor<9x16xf32>, %w2: tensor<8x32xf32>) -> (tensor<40x16xf32>, tensor<9x8xf32>) {
  %m = graph.linear %h, %w : tensor<40x16xf32>, tensor<16x16xf32> -> tensor<40x16xf32>
  %r = graph.relu %m : tensor<40x16xf32> -> tensor<40x16xf32>
  %out = graph.add %e, %r : tensor<40x16xf32>, tensor<40x16xf32> -> tensor<40x16xf32>
  %z = graph.constant dense<0.0> : tensor<9x16xf32>
  %agg = graph.index_add %z, %dst, %r {dim = 0} : tensor<9x16xf32>, tensor<40xi64>, tensor<40x16xf32> -> tensor<9x16xf32>
  %c = graph.concat %x, %agg {dim = 1} : tensor<9x16xf32>, tensor<9x16xf32> -> tensor<9x32xf32>
  %n = graph.linear %c, %w2 : tensor<9x32xf32>, tensor<8x32xf32> -> tensor<9x8xf32>
  func.return %out, %n : tensor<40x16xf32>, tensor<9x8xf32>
}
