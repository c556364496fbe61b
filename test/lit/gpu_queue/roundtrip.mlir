// RUN: kitsune-opt %s | filecheck %s
// RUN: kitsune-opt %s | kitsune-opt | filecheck %s

// CHECK-LABEL: func.func @pipe
// CHECK: %{{.*}} = gpu_queue.program (%{{.*}}, %{{.*}}) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
// CHECK: gpu_queue.kernel "k0" grid 132 warps 4 smem 0 (%{{.*}}, %{{.*}}) attributes {ctas_per_sm = 4 : i64} : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
// CHECK: gpu_queue.queue "q0" tile [128, 128] capacity 2 : tensor<256x128xf32>
// CHECK: gpu_queue.stage "linear_0" pids [0, 99) tile [128, 128] (%{{.*}}, %{{.*}}) attributes {sms = 25 : i64} : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
// CHECK: gpu_queue.push %[[Y:.*]] into "q0" : tensor<256x128xf32>
// CHECK-NEXT: gpu_queue.yield %[[Y]] : tensor<256x128xf32>
// CHECK: gpu_queue.stage "relu_1" pids [99, 132) tile [128, 128] () : () -> tensor<256x128xf32> {
// CHECK-NEXT: %[[T:.*]] = gpu_queue.pop "q0" {relation = "tile"} : tensor<256x128xf32>
// CHECK-NEXT: graph.relu %[[T]]
// CHECK: gpu_queue.launch_plan ["k0"] buffers []
func.func @pipe(%x: tensor<256x64xf32>, %w: tensor<128x64xf32>) -> tensor<256x128xf32> {
  %r = gpu_queue.program (%x, %w) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
  ^bb0(%gx: tensor<256x64xf32>, %gw: tensor<128x64xf32>):
    %k = gpu_queue.kernel "k0" grid 132 warps 4 smem 0 (%gx, %gw) attributes {ctas_per_sm = 4 : i64} : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
    ^bb0(%a: tensor<256x64xf32>, %b: tensor<128x64xf32>):
      gpu_queue.queue "q0" tile [128, 128] capacity 2 : tensor<256x128xf32>
      %s0 = gpu_queue.stage "linear_0" pids [0, 99) tile [128, 128] (%a, %b) attributes {sms = 25 : i64} : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
      ^bb0(%sa: tensor<256x64xf32>, %sb: tensor<128x64xf32>):
        %y = graph.linear %sa, %sb : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
        gpu_queue.push %y into "q0" : tensor<256x128xf32>
        gpu_queue.yield %y : tensor<256x128xf32>
      }
      %s1 = gpu_queue.stage "relu_1" pids [99, 132) tile [128, 128] () : () -> tensor<256x128xf32> {
        %t = gpu_queue.pop "q0" {relation = "tile"} : tensor<256x128xf32>
        %z = graph.relu %t : tensor<256x128xf32> -> tensor<256x128xf32>
        gpu_queue.yield %z : tensor<256x128xf32>
      }
      gpu_queue.yield %s1 : tensor<256x128xf32>
    }
    gpu_queue.launch_plan ["k0"] buffers []
    gpu_queue.yield %k : tensor<256x128xf32>
  }
  func.return %r : tensor<256x128xf32>
}

// Two kernels sharing a buffer; the second reads the first's result (a barrier).
// CHECK-LABEL: func.func @two
// CHECK: %[[K0:.*]] = gpu_queue.kernel "k0" grid 2 warps 4 smem 0
// CHECK: gpu_queue.kernel "k1" grid 1 warps 4 smem 0 (%[[K0]])
// CHECK: gpu_queue.launch_plan ["k0", "k1"] buffers ["k0#0 -> k1"]
func.func @two(%x: tensor<8x16xf32>) -> tensor<8x1xf32> {
  %r = gpu_queue.program (%x) : (tensor<8x16xf32>) -> tensor<8x1xf32> {
  ^bb0(%gx: tensor<8x16xf32>):
    %k0 = gpu_queue.kernel "k0" grid 2 warps 4 smem 0 (%gx) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a: tensor<8x16xf32>):
      %s = gpu_queue.stage "exp_0" pids [0, 2) tile [4, 16] (%a) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
      ^bb0(%sa: tensor<8x16xf32>):
        %e = graph.exp %sa : tensor<8x16xf32> -> tensor<8x16xf32>
        gpu_queue.yield %e : tensor<8x16xf32>
      }
      gpu_queue.yield %s : tensor<8x16xf32>
    }
    %k1 = gpu_queue.kernel "k1" grid 1 warps 4 smem 0 (%k0) : (tensor<8x16xf32>) -> tensor<8x1xf32> {
    ^bb0(%a: tensor<8x16xf32>):
      %s = gpu_queue.stage "sum_1" pids [0, 1) tile [8, 1] (%a) : (tensor<8x16xf32>) -> tensor<8x1xf32> {
      ^bb0(%sa: tensor<8x16xf32>):
        %m = graph.sum %sa {dims = [1], keepdim = true} : tensor<8x16xf32> -> tensor<8x1xf32>
        gpu_queue.yield %m : tensor<8x1xf32>
      }
      gpu_queue.yield %s : tensor<8x1xf32>
    }
    gpu_queue.launch_plan ["k0", "k1"] buffers ["k0#0 -> k1"]
    gpu_queue.yield %k1 : tensor<8x1xf32>
  }
  func.return %r : tensor<8x1xf32>
}
