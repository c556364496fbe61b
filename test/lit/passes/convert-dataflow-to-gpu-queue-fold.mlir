// Last-arrival folding (kitsune/passes/last_arrival.py, fold=true): in dataflow mode a split reduction's combine runs on
// the programs of its partial when every combine tile reads the partial tiles of one group (the tiles that
// differ only in their part: here the partial's grid is [4, 8, 1], groups of 8 consecutive tiles).
// RUN: kitsune-opt %s -p 'convert-dataflow-to-gpu-queue{mode=dataflow placement=separate fold=true}' | filecheck %s --check-prefix=FOLD
// RUN: kitsune-opt %s -p 'convert-dataflow-to-gpu-queue{mode=dataflow placement=separate fold=true},kitsune-allocate-sms' | filecheck %s --check-prefix=ALLOC
// RUN: kitsune-opt %s -p 'convert-dataflow-to-gpu-queue{mode=bulk-sync}' | filecheck %s --check-prefix=BULK
// Off by default (measured slower on the H100's decode layers: bench/kernels/NOTES.md section 20).
// RUN: kitsune-opt %s -p 'convert-dataflow-to-gpu-queue{mode=dataflow placement=separate}' | filecheck %s --check-prefix=BULK

// FOLD-LABEL: func.func @rows
// FOLD: gpu_queue.kernel "k0" grid 1
// FOLD: %[[P:.*]] = gpu_queue.stage "p" pids [0, 1) tile [1, 1, 16]
// FOLD: gpu_queue.stage "c" pids [0, 1) tile [1, 16] (%[[P]]) attributes {kind = "combine", fold = "p", fold_parts = 8 : i64, fold_tiles = 1 : i64}
// FOLD: gpu_queue.launch_plan ["k0"]
// ALLOC-LABEL: func.func @rows
// ALLOC: gpu_queue.stage "p" pids [0, 32)
// ALLOC: gpu_queue.stage "c" pids [0, 32) tile [1, 16]
// BULK-LABEL: func.func @rows
// BULK-NOT: fold
// BULK: gpu_queue.launch_plan ["k0", "k1"]
func.func @rows(%x: tensor<4x8x16xf32>) -> tensor<4x16xf32> {
  %0 = dataflow.graph (%x) : (tensor<4x8x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: tensor<4x8x16xf32>):
    %p = dataflow.task "p" partial (%a) tile [1, 1, 16] : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
    ^bb0(%b: tensor<4x8x16xf32>):
      %e = graph.exp %b : tensor<4x8x16xf32> -> tensor<4x8x16xf32>
      dataflow.yield %e : tensor<4x8x16xf32>
    }
    %c = dataflow.channel %p {relation = "all"} : tensor<4x8x16xf32>
    %s = dataflow.task "c" combine (%c) tile [1, 16] : (tensor<4x8x16xf32>) -> tensor<4x16xf32> {
    ^bb0(%d: tensor<4x8x16xf32>):
      %r = graph.sum %d {dims = [1]} : tensor<4x8x16xf32> -> tensor<4x16xf32>
      dataflow.yield %r : tensor<4x16xf32>
    }
    %o = dataflow.channel %s {relation = "all"} : tensor<4x16xf32>
    dataflow.yield %o : tensor<4x16xf32>
  }
  func.return %0 : tensor<4x16xf32>
}

// A combine tile that reads two groups (the sum runs across them): no fold, two kernels.
// FOLD-LABEL: func.func @across
// FOLD-NOT: fold
// FOLD: gpu_queue.launch_plan ["k0", "k1"]
func.func @across(%x: tensor<4x8x16xf32>) -> tensor<8x16xf32> {
  %0 = dataflow.graph (%x) : (tensor<4x8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%a: tensor<4x8x16xf32>):
    %p = dataflow.task "p" partial (%a) tile [1, 1, 16] : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
    ^bb0(%b: tensor<4x8x16xf32>):
      %e = graph.exp %b : tensor<4x8x16xf32> -> tensor<4x8x16xf32>
      dataflow.yield %e : tensor<4x8x16xf32>
    }
    %c = dataflow.channel %p {relation = "all"} : tensor<4x8x16xf32>
    %s = dataflow.task "c" combine (%c) tile [1, 16] : (tensor<4x8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%d: tensor<4x8x16xf32>):
      %r = graph.sum %d {dims = [0]} : tensor<4x8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %r : tensor<8x16xf32>
    }
    %o = dataflow.channel %s {relation = "all"} : tensor<8x16xf32>
    dataflow.yield %o : tensor<8x16xf32>
  }
  func.return %0 : tensor<8x16xf32>
}

// The group of a combine tile followed through a permute and a reshape (decode attention's epilogue): heads
// [4 h, 4 h + 4) of the partial's tile h land in combine tiles [2 h, 2 h + 2) of the reshaped result, so the
// combine's tile [1, 1, 32] is widened to one tile per group, [1, 1, 64] (bulk-sync keeps it).
// FOLD-LABEL: func.func @heads
// FOLD: gpu_queue.stage "c" pids [0, 1) tile [1, 1, 64] ({{.*}}) attributes {kind = "combine", fold = "p", fold_parts = 3 : i64, fold_tiles = 1 : i64}
// BULK-LABEL: func.func @heads
// BULK: gpu_queue.stage "c" pids [0, 1) tile [1, 1, 32]
func.func @heads(%x: tensor<1x8x3x16xf32>) -> tensor<1x1x128xf32> {
  %0 = dataflow.graph (%x) : (tensor<1x8x3x16xf32>) -> tensor<1x1x128xf32> {
  ^bb0(%a: tensor<1x8x3x16xf32>):
    %p = dataflow.task "p" partial (%a) tile [1, 4, 1, 16] : (tensor<1x8x3x16xf32>) -> tensor<1x8x3x16xf32> {
    ^bb0(%b: tensor<1x8x3x16xf32>):
      %e = graph.exp %b : tensor<1x8x3x16xf32> -> tensor<1x8x3x16xf32>
      dataflow.yield %e : tensor<1x8x3x16xf32>
    }
    %c = dataflow.channel %p {relation = "all"} : tensor<1x8x3x16xf32>
    %s = dataflow.task "c" combine (%c) tile [1, 1, 32] : (tensor<1x8x3x16xf32>) -> tensor<1x1x128xf32> {
    ^bb0(%d: tensor<1x8x3x16xf32>):
      %r = graph.sum %d {dims = [2], keepdim = true} : tensor<1x8x3x16xf32> -> tensor<1x8x1x16xf32>
      %t = graph.permute %r {perm = [0, 2, 1, 3]} : tensor<1x8x1x16xf32> -> tensor<1x1x8x16xf32>
      %y = graph.reshape %t : tensor<1x1x8x16xf32> -> tensor<1x1x128xf32>
      dataflow.yield %y : tensor<1x1x128xf32>
    }
    %o = dataflow.channel %s {relation = "all"} : tensor<1x1x128xf32>
    dataflow.yield %o : tensor<1x1x128xf32>
  }
  func.return %0 : tensor<1x1x128xf32>
}

// The heads interleaved before the reshape (head 4 i + j goes to position 2 j + i): tile 0 of the result holds
// heads 0 and 4, of groups 0 and 1: no fold.
// FOLD-LABEL: func.func @swapped
// FOLD-NOT: fold
// FOLD: gpu_queue.launch_plan ["k0", "k1"]
func.func @swapped(%x: tensor<1x8x3x16xf32>) -> tensor<1x1x128xf32> {
  %0 = dataflow.graph (%x) : (tensor<1x8x3x16xf32>) -> tensor<1x1x128xf32> {
  ^bb0(%a: tensor<1x8x3x16xf32>):
    %p = dataflow.task "p" partial (%a) tile [1, 4, 1, 16] : (tensor<1x8x3x16xf32>) -> tensor<1x8x3x16xf32> {
    ^bb0(%b: tensor<1x8x3x16xf32>):
      %e = graph.exp %b : tensor<1x8x3x16xf32> -> tensor<1x8x3x16xf32>
      dataflow.yield %e : tensor<1x8x3x16xf32>
    }
    %c = dataflow.channel %p {relation = "all"} : tensor<1x8x3x16xf32>
    %s = dataflow.task "c" combine (%c) tile [1, 1, 32] : (tensor<1x8x3x16xf32>) -> tensor<1x1x128xf32> {
    ^bb0(%d: tensor<1x8x3x16xf32>):
      %r = graph.sum %d {dims = [2], keepdim = true} : tensor<1x8x3x16xf32> -> tensor<1x8x1x16xf32>
      %h = graph.reshape %r : tensor<1x8x1x16xf32> -> tensor<1x2x4x16xf32>
      %w = graph.permute %h {perm = [0, 2, 1, 3]} : tensor<1x2x4x16xf32> -> tensor<1x4x2x16xf32>
      %y = graph.reshape %w : tensor<1x4x2x16xf32> -> tensor<1x1x128xf32>
      dataflow.yield %y : tensor<1x1x128xf32>
    }
    %o = dataflow.channel %s {relation = "all"} : tensor<1x1x128xf32>
    dataflow.yield %o : tensor<1x1x128xf32>
  }
  func.return %0 : tensor<1x1x128xf32>
}
