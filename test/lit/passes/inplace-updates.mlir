// kitsune-inplace-updates: a buffer mutation (a result carrying kitsune.mutates) that is an index_copy of its own
// buffer, read by nothing else, is written in place, and its readers read it forwarded: selects over the buffer
// as it was (the sum reads the where, the return the update); an index_copy whose buffer is read elsewhere (its
// old value is still needed) becomes selects along its dim.

// RUN: kitsune-opt %s -p 'kitsune-inplace-updates' | filecheck %s
// CHECK-LABEL: func.func @cache
// CHECK: %[[EQ:[0-9]+]] = graph.eq
// CHECK: %[[FWD:[a-z0-9_]+]] = graph.where %[[EQ]], %{{[0-9]+}}, %c :
// CHECK: %[[UPD:[a-z0-9_]+]] = graph.index_copy %c, %i, %k {dim = 2, in_place = true, forwarded = true}
// CHECK: graph.sum %[[FWD]]
// CHECK: func.return %[[UPD]], %s
// CHECK-LABEL: func.func @read_elsewhere
// CHECK-NOT: graph.index_copy
// CHECK: %[[EQ:[0-9]+]] = graph.eq
// CHECK: graph.where %[[EQ]]
// CHECK-NOT: in_place
// CHECK-NOT: forwarded

// The whole lowering: the in-place update is a scatter stage storing into the buffer itself, beside the sum
// (which no longer depends on it) in one kernel.
// RUN: kitsune-opt %s -p 'kitsune-pipeline{mode=bulk-sync}' | filecheck %s --check-prefix=LOW
// LOW-LABEL: func.func @cache
// LOW: gpu_queue.kernel "k0"
// LOW-NOT: gpu_queue.kernel
// LOW: gpu_queue.stage "sum_0"
// LOW-NOT: gpu_queue.kernel
// LOW: gpu_queue.stage "index_copy_1" {{.*}}template = "scatter"
// LOW: graph.index_copy {{.*}}in_place = true, forwarded = true

func.func @cache(%c: tensor<1x2x8x4xf32> {kitsune.name = "cache", kitsune.kind = "buffer"}, %i: tensor<1xi64> {kitsune.name = "pos", kitsune.kind = "input"}, %k: tensor<1x2x1x4xf32> {kitsune.name = "k", kitsune.kind = "input"}) -> (tensor<1x2x8x4xf32> {kitsune.name = "c2", kitsune.mutates = "cache"}, tensor<1x2x4xf32>) {
  %y = graph.index_copy %c, %i, %k {dim = 2} : tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1x2x1x4xf32> -> tensor<1x2x8x4xf32>
  %s = graph.sum %y {dims = [2]} : tensor<1x2x8x4xf32> -> tensor<1x2x4xf32>
  func.return %y, %s : tensor<1x2x8x4xf32>, tensor<1x2x4xf32>
}

func.func @read_elsewhere(%c: tensor<1x2x8x4xf32> {kitsune.name = "cache", kitsune.kind = "buffer"}, %i: tensor<1xi64> {kitsune.name = "pos", kitsune.kind = "input"}, %k: tensor<1x2x1x4xf32> {kitsune.name = "k", kitsune.kind = "input"}) -> (tensor<1x2x8x4xf32> {kitsune.name = "c2", kitsune.mutates = "cache"}, tensor<1x2x4xf32>) {
  %y = graph.index_copy %c, %i, %k {dim = 2} : tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1x2x1x4xf32> -> tensor<1x2x8x4xf32>
  %s = graph.sum %c {dims = [2]} : tensor<1x2x8x4xf32> -> tensor<1x2x4xf32>
  func.return %y, %s : tensor<1x2x8x4xf32>, tensor<1x2x4xf32>
}
