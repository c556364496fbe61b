// The scatter template: kitsune-materialize gives a scatter-accumulate (index_add) a task of its own that
// starts from zero (a non-zero start stays behind as an add in the consumer); kitsune-choose-schedules pushes
// it from its source rows (SPLIT = source row blocks of BJ, the tile the whole result's rows by BD columns)
// and every channel into or out of it carries the whole tensor.
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-materialize,kitsune-choose-schedules{db=false}' | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-materialize' | filecheck %s --check-prefix=MAT

// MeshGraphNet's aggregation: index_add into zeros, concatenated after x.
// CHECK-LABEL: func.func @aggregate(
// CHECK: %[[S:.*]] = dataflow.task "index_add_{{.*}}" gather ({{.*}}) tile [10000, 128] attributes {template = "scatter", config = {warps = 4 : i64, stages = 1 : i64, BJ = [[BJ:[0-9]+]] : i64, BD = 128 : i64, SPLIT = {{[0-9]+}} : i64}, schedule = "heuristic: roles scatter=j:60000 P=d1:128: pushed from 60000 source rows"}
// CHECK: graph.index_add
// CHECK: %[[C:.*]] = dataflow.channel %[[S]] {relation = "all"}
// CHECK: dataflow.task "{{.*}}" {{.*}}(%{{.*}}, %[[C]])
// CHECK-NOT: graph.index_add
// CHECK: graph.concat
func.func @aggregate(%x: tensor<10000x128xbf16>, %dst: tensor<60000xi64>, %m: tensor<60000x128xbf16>) -> tensor<10000x256xbf16> {
  %z = graph.constant dense<0.0> : tensor<10000x128xbf16>
  %a = graph.index_add %z, %dst, %m {dim = 0} : tensor<10000x128xbf16>, tensor<60000xi64>, tensor<60000x128xbf16> -> tensor<10000x128xbf16>
  %c = graph.concat %x, %a {dim = 1} : tensor<10000x128xbf16>, tensor<10000x128xbf16> -> tensor<10000x256xbf16>
  func.return %c : tensor<10000x256xbf16>
}

// -----

// A non-zero start: index_add(x, I, S) = x + index_add(0, I, S); the scatter is fed by the relu of its
// source (cloned into the scatter's task), the add stays with the consumer.
// MAT-LABEL: func.func @start(
// MAT: %[[S:.*]] = dataflow.task "index_add_{{.*}}" gather
// MAT: graph.relu
// MAT: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<64x32xf32>
// MAT: graph.index_add %[[Z]]
// MAT: dataflow.channel %[[S]] {relation = "all"}
// MAT: dataflow.task
// MAT-NOT: graph.index_add
// MAT: graph.add
// MAT: graph.exp
// CHECK-LABEL: func.func @start(
// CHECK: dataflow.task "index_add_{{.*}}" gather ({{.*}}) tile [64, 32] attributes {template = "scatter", config = {warps = 4 : i64, stages = 1 : i64, BJ = 16 : i64, BD = 32 : i64, SPLIT = 63 : i64}
func.func @start(%x: tensor<64x32xf32>, %i: tensor<1000xi64>, %s: tensor<1000x32xf32>) -> tensor<64x32xf32> {
  %r = graph.relu %s : tensor<1000x32xf32> -> tensor<1000x32xf32>
  %a = graph.index_add %x, %i, %r {dim = 0} : tensor<64x32xf32>, tensor<1000xi64>, tensor<1000x32xf32> -> tensor<64x32xf32>
  %e = graph.exp %a : tensor<64x32xf32> -> tensor<64x32xf32>
  func.return %e : tensor<64x32xf32>
}
