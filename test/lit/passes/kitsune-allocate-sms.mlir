// RUN: kitsune-opt %s --split-input-file -p 'kitsune-allocate-sms' | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-allocate-sms{report=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: not kitsune-opt %s --split-input-file -p 'kitsune-allocate-sms{gpu="h100,sm_count=1"}' 2>&1 | filecheck %s --check-prefix=TOOMANY

// Two memory-bound stages, 3:1 in bytes (768 and 256 tiles): SMs 99 : 33, equal times;
// 4 CTAs per SM (4 warps, no shared memory). They exchange no queues, so nothing needs to be resident:
// each gets a program per tile (grid 768 + 256) and the hardware balances them.
// CHECK-LABEL: func.func @ratio
// CHECK: gpu_queue.kernel "k0" grid 1024 warps 4 smem 0 ({{.*}}) attributes {ctas_per_sm = 4 : i64, est_us = [[T:.*]] : f64, num_stages = 3 : i64}
// CHECK: gpu_queue.stage "relu_0" pids [0, 768) tile [128, 128] ({{.*}}) attributes {kind = "elementwise", sms = 99 : i64, est_us = [[T]] : f64, bound = "memory"}
// CHECK: gpu_queue.stage "exp_1" pids [768, 1024) tile [128, 128] ({{.*}}) attributes {kind = "elementwise", sms = 33 : i64, est_us = [[T]] : f64, bound = "memory"}
// REPORT: kitsune-allocate-sms (h100, 132 SMs):
// REPORT-NEXT: kernel "k0": 2 stage(s), 132 of 132 SMs, grid 1024, 4 warps, 0 B smem, 4 CTA/SM, est {{.*}} us
// REPORT-NEXT: k0 stage "relu_0": 99 SMs, programs [0, 768) for 768 tiles, {{.*}} us (memory)
// REPORT-NEXT: k0 stage "exp_1": 33 SMs, programs [768, 1024) for 256 tiles, {{.*}} us (memory)
// TOOMANY: 'gpu_queue.kernel' "k0" has 2 concurrent stages but h100+sm_count=1 has only 1 SMs (each stage needs at least one)
func.func @ratio(%x: tensor<3072x4096xf32>, %y: tensor<1024x4096xf32>) -> (tensor<3072x4096xf32>, tensor<1024x4096xf32>) {
  %r:2 = gpu_queue.program (%x, %y) : (tensor<3072x4096xf32>, tensor<1024x4096xf32>) -> (tensor<3072x4096xf32>, tensor<1024x4096xf32>) {
  ^bb0(%gx: tensor<3072x4096xf32>, %gy: tensor<1024x4096xf32>):
    %k:2 = gpu_queue.kernel "k0" grid 2 warps 4 smem 0 (%gx, %gy) : (tensor<3072x4096xf32>, tensor<1024x4096xf32>) -> (tensor<3072x4096xf32>, tensor<1024x4096xf32>) {
    ^bb0(%a: tensor<3072x4096xf32>, %b: tensor<1024x4096xf32>):
      %s0 = gpu_queue.stage "relu_0" pids [0, 1) tile [128, 128] (%a) attributes {kind = "elementwise"} : (tensor<3072x4096xf32>) -> tensor<3072x4096xf32> {
      ^bb0(%sa: tensor<3072x4096xf32>):
        %v = graph.relu %sa : tensor<3072x4096xf32> -> tensor<3072x4096xf32>
        gpu_queue.yield %v : tensor<3072x4096xf32>
      }
      %s1 = gpu_queue.stage "exp_1" pids [1, 2) tile [128, 128] (%b) attributes {kind = "elementwise"} : (tensor<1024x4096xf32>) -> tensor<1024x4096xf32> {
      ^bb0(%sb: tensor<1024x4096xf32>):
        %w = graph.exp %sb : tensor<1024x4096xf32> -> tensor<1024x4096xf32>
        gpu_queue.yield %w : tensor<1024x4096xf32>
      }
      gpu_queue.yield %s0, %s1 : tensor<3072x4096xf32>, tensor<1024x4096xf32>
    }
    gpu_queue.launch_plan ["k0"] buffers []
    gpu_queue.yield %k#0, %k#1 : tensor<3072x4096xf32>, tensor<1024x4096xf32>
  }
  func.return %r#0, %r#1 : tensor<3072x4096xf32>, tensor<1024x4096xf32>
}

// -----

// A GEMM stage (128x128 tiles: 8 warps, 3-deep 64-wide operand tiles in shared memory)
// feeding a row-wise stage through a queue: the kernel takes the largest needs; the
// producer keeps the lower program ids.
// CHECK-LABEL: func.func @gemm_rows
// CHECK: gpu_queue.kernel "k0" grid {{[0-9]+}} warps 8 smem 196608 ({{.*}}) attributes {ctas_per_sm = 1 : i64
// CHECK-SAME: num_stages = 3 : i64}
// CHECK: gpu_queue.stage "linear_0" pids [0, [[H:[0-9]+]]) tile [128, 128]
// CHECK: gpu_queue.stage "sum_1" pids [[[H]], {{[0-9]+}}) tile [128, 1]
func.func @gemm_rows(%x: tensor<4096x1024xf32>, %w: tensor<512x1024xf32>) -> tensor<4096x1xf32> {
  %r = gpu_queue.program (%x, %w) : (tensor<4096x1024xf32>, tensor<512x1024xf32>) -> tensor<4096x1xf32> {
  ^bb0(%gx: tensor<4096x1024xf32>, %gw: tensor<512x1024xf32>):
    %k = gpu_queue.kernel "k0" grid 2 warps 4 smem 0 (%gx, %gw) : (tensor<4096x1024xf32>, tensor<512x1024xf32>) -> tensor<4096x1xf32> {
    ^bb0(%a: tensor<4096x1024xf32>, %b: tensor<512x1024xf32>):
      gpu_queue.queue "q0" tile [128, 128] capacity 8 : tensor<4096x512xf32>
      %s0 = gpu_queue.stage "linear_0" pids [0, 1) tile [128, 128] (%a, %b) : (tensor<4096x1024xf32>, tensor<512x1024xf32>) -> tensor<4096x512xf32> {
      ^bb0(%sa: tensor<4096x1024xf32>, %sb: tensor<512x1024xf32>):
        %y = graph.linear %sa, %sb : tensor<4096x1024xf32>, tensor<512x1024xf32> -> tensor<4096x512xf32>
        gpu_queue.push %y into "q0" : tensor<4096x512xf32>
        gpu_queue.yield %y : tensor<4096x512xf32>
      }
      %s1 = gpu_queue.stage "sum_1" pids [1, 2) tile [128, 1] () : () -> tensor<4096x1xf32> {
        %t = gpu_queue.pop "q0" {relation = "rows"} : tensor<4096x512xf32>
        %m = graph.sum %t {dims = [1], keepdim = true} : tensor<4096x512xf32> -> tensor<4096x1xf32>
        gpu_queue.yield %m : tensor<4096x1xf32>
      }
      gpu_queue.yield %s1 : tensor<4096x1xf32>
    }
    gpu_queue.launch_plan ["k0"] buffers []
    gpu_queue.yield %k : tensor<4096x1xf32>
  }
  func.return %r : tensor<4096x1xf32>
}

// -----

// Two gemm stages in one (temporal) kernel: a 128x128 tile tuned 5 deep (32 KB per depth) and a 128x256 one
// tuned 3 deep (48 KB per depth). Triton pipelines every loop of a kernel to one depth: the deepest asked for
// (5) would need 240 KB for the 128x256 stage, so the kernel takes the deepest at which both fit one CTA's
// 227 KB (4), and the shared memory of the larger stage at that depth (4 x 48 KB).
// CHECK-LABEL: func.func @two_depths
// CHECK: gpu_queue.kernel "k0" grid {{[0-9]+}} warps 8 smem 196608 ({{.*}}) attributes {placement = "temporal", ctas_per_sm = 1 : i64, est_us = {{.*}} : f64, num_stages = 4 : i64}
func.func @two_depths(%x: tensor<1024x4096xbf16>, %w1: tensor<4096x4096xbf16>, %w2: tensor<4096x4096xbf16>) -> tensor<1024x4096xbf16> {
  %r = gpu_queue.program (%x, %w1, %w2) : (tensor<1024x4096xbf16>, tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1024x4096xbf16> {
  ^bb0(%gx: tensor<1024x4096xbf16>, %gw1: tensor<4096x4096xbf16>, %gw2: tensor<4096x4096xbf16>):
    %k = gpu_queue.kernel "k0" grid 2 warps 8 smem 0 (%gx, %gw1, %gw2) attributes {placement = "temporal"} : (tensor<1024x4096xbf16>, tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1024x4096xbf16> {
    ^bb0(%a: tensor<1024x4096xbf16>, %b1: tensor<4096x4096xbf16>, %b2: tensor<4096x4096xbf16>):
      %s0 = gpu_queue.stage "linear_0" pids [0, 1) tile [128, 128] (%a, %b1) attributes {template = "gemm", config = {BM = 128 : i64, BN = 128 : i64, BK = 64 : i64, GROUP_M = 8 : i64, SPLIT = 1 : i64, warps = 8 : i64, stages = 5 : i64}} : (tensor<1024x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1024x4096xbf16> {
      ^bb0(%sa: tensor<1024x4096xbf16>, %sb: tensor<4096x4096xbf16>):
        %y = graph.linear %sa, %sb : tensor<1024x4096xbf16>, tensor<4096x4096xbf16> -> tensor<1024x4096xbf16>
        gpu_queue.yield %y : tensor<1024x4096xbf16>
      }
      %s1 = gpu_queue.stage "linear_1" pids [1, 2) tile [128, 256] (%s0, %b2) attributes {template = "gemm", config = {BM = 128 : i64, BN = 256 : i64, BK = 64 : i64, GROUP_M = 8 : i64, SPLIT = 1 : i64, warps = 8 : i64, stages = 3 : i64}} : (tensor<1024x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1024x4096xbf16> {
      ^bb0(%sy: tensor<1024x4096xbf16>, %sc: tensor<4096x4096xbf16>):
        %z = graph.linear %sy, %sc : tensor<1024x4096xbf16>, tensor<4096x4096xbf16> -> tensor<1024x4096xbf16>
        gpu_queue.yield %z : tensor<1024x4096xbf16>
      }
      gpu_queue.yield %s1 : tensor<1024x4096xbf16>
    }
    gpu_queue.launch_plan ["k0"] buffers []
    gpu_queue.yield %k : tensor<1024x4096xbf16>
  }
  func.return %r : tensor<1024x4096xbf16>
}
