// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-split-reduction' | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-split-reduction{force=2}' | filecheck %s --check-prefix=FORCE
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-split-reduction{sms=1}' | filecheck %s --check-prefix=FULL
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-split-reduction{remarks=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK

// A batch-1 GEMV has one output tile: split K=512 into min(132 / 1, 512 / min_chunk 64) = 8
// partial GEMVs and a combine that sums them, adds the bias and applies the epilogue.

// CHECK-LABEL: func.func @gemv
// CHECK-COUNT-8: dataflow.task "linear_0_part{{[0-7]}}" partial
// CHECK: dataflow.task "linear_0_combine" combine
// CHECK-NOT: dataflow.task

// FORCE-LABEL: func.func @gemv
// FORCE: %[[P0:.*]] = dataflow.task "linear_0_part0" partial (%[[X:.*]], %[[W:.*]]) tile [1, 64] : (tensor<1x512xf32>, tensor<64x512xf32>) -> tensor<1x64xf32> {
// FORCE-NEXT: ^{{.*}}(%[[A:.*]]: tensor<1x512xf32>, %[[B:.*]]: tensor<64x512xf32>):
// FORCE-NEXT: %[[S0:.*]] = graph.slice %[[A]] {dim = 1, end = 256} : tensor<1x512xf32> -> tensor<1x256xf32>
// FORCE-NEXT: %[[S1:.*]] = graph.slice %[[B]] {dim = 1, end = 256} : tensor<64x512xf32> -> tensor<64x256xf32>
// FORCE-NEXT: %[[L:.*]] = graph.linear %[[S0]], %[[S1]] : tensor<1x256xf32>, tensor<64x256xf32> -> tensor<1x64xf32>
// FORCE-NEXT: dataflow.yield %[[L]]
// FORCE-NEXT: }
// FORCE-NEXT: %[[C0:.*]] = dataflow.channel %[[P0]] {relation = "tile"} : tensor<1x64xf32>
// FORCE-NEXT: %[[P1:.*]] = dataflow.task "linear_0_part1" partial (%[[X]], %[[W]]) tile [1, 64]
// FORCE: graph.slice %{{.*}} {dim = 1, start = 256, end = 512}
// FORCE: %[[C1:.*]] = dataflow.channel %[[P1]] {relation = "tile"} : tensor<1x64xf32>
// FORCE-NEXT: %[[K:.*]] = dataflow.task "linear_0_combine" combine (%{{.*}}, %[[C0]], %[[C1]]) tile [1, 64] : (tensor<64xf32>, tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32> {
// FORCE-NEXT: ^{{.*}}(%[[BIAS:.*]]: tensor<64xf32>, %[[Q0:.*]]: tensor<1x64xf32>, %[[Q1:.*]]: tensor<1x64xf32>):
// FORCE-NEXT: %[[SUM:.*]] = graph.add %[[Q0]], %[[Q1]]
// FORCE-NEXT: %[[BB:.*]] = graph.add %[[SUM]], %[[BIAS]]
// FORCE-NEXT: %[[Y:.*]] = graph.silu %[[BB]]
// FORCE-NEXT: dataflow.yield %[[Y]]
// FORCE-NEXT: }
// FORCE-NEXT: dataflow.channel %[[K]] {relation = "all"}

// REMARK: kitsune-split-reduction: task "linear_0" has 1 tile(s) for 132 SMs: linear split along its reduction dim (512) into 8 partials + "linear_0_combine"
func.func @gemv(%x: tensor<1x512xf32>, %w: tensor<64x512xf32>, %b: tensor<64xf32>) -> tensor<1x64xf32> {
  %h = graph.linear %x, %w, %b : tensor<1x512xf32>, tensor<64x512xf32>, tensor<64xf32> -> tensor<1x64xf32>
  %y = graph.silu %h : tensor<1x64xf32> -> tensor<1x64xf32>
  func.return %y : tensor<1x64xf32>
}

// -----
// A long row sum (one row band): the partials slice the input before the elementwise
// prologue (exp), so each computes exp on its chunk only; the combine adds and takes the log.

// CHECK-LABEL: func.func @long_sum
// CHECK-COUNT-15: dataflow.task "sum_0_part{{[0-9]+}}" partial
// CHECK: dataflow.task "sum_0_combine" combine

// FORCE-LABEL: func.func @long_sum
// FORCE: dataflow.task "sum_0_part0" partial (%{{.*}}) tile [4, 1] : (tensor<4x1000xf32>) -> tensor<4x1xf32> {
// FORCE-NEXT: ^
// FORCE-NEXT: graph.slice %{{.*}} {dim = 1, end = 500} : tensor<4x1000xf32> -> tensor<4x500xf32>
// FORCE-NEXT: graph.exp %{{.*}} : tensor<4x500xf32> -> tensor<4x500xf32>
// FORCE-NEXT: graph.sum %{{.*}} {dims = [1], keepdim = true} : tensor<4x500xf32> -> tensor<4x1xf32>
// FORCE: dataflow.task "sum_0_combine" combine
// FORCE-NEXT: ^
// FORCE-NEXT: graph.add
// FORCE-NEXT: graph.log
// FORCE-NEXT: dataflow.yield

// REMARK: task "sum_0" has 1 tile(s) for 132 SMs: sum split along its reduction dim (1000) into 15 partials
func.func @long_sum(%x: tensor<4x1000xf32>) -> tensor<4x1xf32> {
  %e = graph.exp %x : tensor<4x1000xf32> -> tensor<4x1000xf32>
  %s = graph.sum %e {dims = [1], keepdim = true} : tensor<4x1000xf32> -> tensor<4x1xf32>
  %l = graph.log %s : tensor<4x1xf32> -> tensor<4x1xf32>
  func.return %l : tensor<4x1xf32>
}

// -----
// 16 x 10 = 160 output tiles already fill 132 SMs: nothing to split (unless forced).

// CHECK-LABEL: func.func @big
// CHECK: dataflow.task "linear_0" contraction
// CHECK-NOT: partial

// FULL-LABEL: func.func @big
// FULL: dataflow.task "linear_0" contraction
// FULL-NOT: partial

// FORCE-LABEL: func.func @big
// FORCE-COUNT-2: partial
// FORCE: dataflow.task "linear_0_combine" combine
func.func @big(%x: tensor<2048x256xf32>, %w: tensor<1280x256xf32>) -> tensor<2048x1280xf32> {
  %y = graph.linear %x, %w : tensor<2048x256xf32>, tensor<1280x256xf32> -> tensor<2048x1280xf32>
  func.return %y : tensor<2048x1280xf32>
}

// -----
// A composite softmax is not split (no online max/sum combine yet).

// CHECK-LABEL: func.func @softmax
// CHECK-NOT: partial
// CHECK: dataflow.task "softmax_0" reduction
// CHECK-NOT: partial
func.func @softmax(%x: tensor<2x4096xf32>) -> tensor<2x4096xf32> {
  %y = graph.softmax %x : tensor<2x4096xf32> -> tensor<2x4096xf32>
  func.return %y : tensor<2x4096xf32>
}

// -----
// A decomposed softmax: its max and sum could be split, but the rest of the row band reads
// the whole input again, so splitting would not pay: no split.

// CHECK-LABEL: func.func @softmax_decomposed
// CHECK: dataflow.task "amax_0" reduction
// CHECK-NOT: partial
func.func @softmax_decomposed(%x: tensor<2x4096xf32>) -> tensor<2x4096xf32> {
  %m = graph.amax %x {dims = [1], keepdim = true} : tensor<2x4096xf32> -> tensor<2x1xf32>
  %s = graph.sub %x, %m : tensor<2x4096xf32>, tensor<2x1xf32> -> tensor<2x4096xf32>
  %e = graph.exp %s : tensor<2x4096xf32> -> tensor<2x4096xf32>
  %z = graph.sum %e {dims = [1], keepdim = true} : tensor<2x4096xf32> -> tensor<2x1xf32>
  %y = graph.div %e, %z : tensor<2x4096xf32>, tensor<2x1xf32> -> tensor<2x4096xf32>
  func.return %y : tensor<2x4096xf32>
}
