// RUN: kitsune-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A stage range outside the grid.
// CHECK: 'gpu_queue.stage' "relu_1" program ids [4, 9) must be a non-empty range inside the grid [0, 8) of kernel "k0"
func.func @f(%x: tensor<256x64xf32>, %w: tensor<128x64xf32>) -> tensor<256x128xf32> {
  %r = gpu_queue.program (%x, %w) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
  ^bb0(%gx: tensor<256x64xf32>, %gw: tensor<128x64xf32>):
    %k = gpu_queue.kernel "k0" grid 8 warps 4 smem 0 (%gx, %gw) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
    ^bb0(%a: tensor<256x64xf32>, %b: tensor<128x64xf32>):
      gpu_queue.queue "q0" tile [128, 128] capacity 2 : tensor<256x128xf32>
      %s0 = gpu_queue.stage "linear_0" pids [0, 4) tile [128, 128] (%a, %b) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
      ^bb0(%sa: tensor<256x64xf32>, %sb: tensor<128x64xf32>):
        %y = graph.linear %sa, %sb : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
        gpu_queue.push %y into "q0" : tensor<256x128xf32>
        gpu_queue.yield %y : tensor<256x128xf32>
      }
      %s1 = gpu_queue.stage "relu_1" pids [4, 9) tile [128, 128] () : () -> tensor<256x128xf32> {
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

// -----

// Overlapping stages.
// CHECK: 'gpu_queue.kernel' "k0" stages "linear_0" [0, 5) and "relu_1" [4, 8) overlap
func.func @f(%x: tensor<256x64xf32>, %w: tensor<128x64xf32>) -> tensor<256x128xf32> {
  %r = gpu_queue.program (%x, %w) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
  ^bb0(%gx: tensor<256x64xf32>, %gw: tensor<128x64xf32>):
    %k = gpu_queue.kernel "k0" grid 8 warps 4 smem 0 (%gx, %gw) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
    ^bb0(%a: tensor<256x64xf32>, %b: tensor<128x64xf32>):
      gpu_queue.queue "q0" tile [128, 128] capacity 2 : tensor<256x128xf32>
      %s0 = gpu_queue.stage "linear_0" pids [0, 5) tile [128, 128] (%a, %b) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
      ^bb0(%sa: tensor<256x64xf32>, %sb: tensor<128x64xf32>):
        %y = graph.linear %sa, %sb : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
        gpu_queue.push %y into "q0" : tensor<256x128xf32>
        gpu_queue.yield %y : tensor<256x128xf32>
      }
      %s1 = gpu_queue.stage "relu_1" pids [4, 8) tile [128, 128] () : () -> tensor<256x128xf32> {
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

// -----

// A pop from a queue nobody pushes.
// CHECK: 'gpu_queue.kernel' "k0" queue "q0" is popped by stage "relu_1" but no stage pushes it
func.func @f(%x: tensor<256x64xf32>, %w: tensor<128x64xf32>) -> tensor<256x128xf32> {
  %r = gpu_queue.program (%x, %w) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
  ^bb0(%gx: tensor<256x64xf32>, %gw: tensor<128x64xf32>):
    %k = gpu_queue.kernel "k0" grid 8 warps 4 smem 0 (%gx, %gw) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
    ^bb0(%a: tensor<256x64xf32>, %b: tensor<128x64xf32>):
      gpu_queue.queue "q0" tile [128, 128] capacity 2 : tensor<256x128xf32>
      %s0 = gpu_queue.stage "linear_0" pids [0, 4) tile [128, 128] (%a, %b) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
      ^bb0(%sa: tensor<256x64xf32>, %sb: tensor<128x64xf32>):
        %y = graph.linear %sa, %sb : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
        
        gpu_queue.yield %y : tensor<256x128xf32>
      }
      %s1 = gpu_queue.stage "relu_1" pids [4, 8) tile [128, 128] () : () -> tensor<256x128xf32> {
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

// -----

// A wait on a tile of a higher program id.
// CHECK: 'gpu_queue.kernel' "k0" stage "relu_1" (program ids [0, 4)) waits on tiles of queue "q0" pushed by stage "linear_0" (program ids [4, 8)): a program may wait only on tiles of lower program ids
func.func @f(%x: tensor<256x64xf32>, %w: tensor<128x64xf32>) -> tensor<256x128xf32> {
  %r = gpu_queue.program (%x, %w) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
  ^bb0(%gx: tensor<256x64xf32>, %gw: tensor<128x64xf32>):
    %k = gpu_queue.kernel "k0" grid 8 warps 4 smem 0 (%gx, %gw) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
    ^bb0(%a: tensor<256x64xf32>, %b: tensor<128x64xf32>):
      gpu_queue.queue "q0" tile [128, 128] capacity 2 : tensor<256x128xf32>
      %s0 = gpu_queue.stage "linear_0" pids [4, 8) tile [128, 128] (%a, %b) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
      ^bb0(%sa: tensor<256x64xf32>, %sb: tensor<128x64xf32>):
        %y = graph.linear %sa, %sb : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
        gpu_queue.push %y into "q0" : tensor<256x128xf32>
        gpu_queue.yield %y : tensor<256x128xf32>
      }
      %s1 = gpu_queue.stage "relu_1" pids [0, 4) tile [128, 128] () : () -> tensor<256x128xf32> {
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

// -----

// A capacity of 0.
// CHECK: 'gpu_queue.queue' "q0" capacity must be at least 1 tile, got 0
func.func @f(%x: tensor<256x64xf32>, %w: tensor<128x64xf32>) -> tensor<256x128xf32> {
  %r = gpu_queue.program (%x, %w) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
  ^bb0(%gx: tensor<256x64xf32>, %gw: tensor<128x64xf32>):
    %k = gpu_queue.kernel "k0" grid 8 warps 4 smem 0 (%gx, %gw) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
    ^bb0(%a: tensor<256x64xf32>, %b: tensor<128x64xf32>):
      gpu_queue.queue "q0" tile [128, 128] capacity 0 : tensor<256x128xf32>
      %s0 = gpu_queue.stage "linear_0" pids [0, 4) tile [128, 128] (%a, %b) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
      ^bb0(%sa: tensor<256x64xf32>, %sb: tensor<128x64xf32>):
        %y = graph.linear %sa, %sb : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
        gpu_queue.push %y into "q0" : tensor<256x128xf32>
        gpu_queue.yield %y : tensor<256x128xf32>
      }
      %s1 = gpu_queue.stage "relu_1" pids [4, 8) tile [128, 128] () : () -> tensor<256x128xf32> {
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

// -----

// An unknown relation.
// CHECK: 'gpu_queue.pop' relation must be one of tile, rows, all, got 'cols'
func.func @f(%x: tensor<256x64xf32>, %w: tensor<128x64xf32>) -> tensor<256x128xf32> {
  %r = gpu_queue.program (%x, %w) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
  ^bb0(%gx: tensor<256x64xf32>, %gw: tensor<128x64xf32>):
    %k = gpu_queue.kernel "k0" grid 8 warps 4 smem 0 (%gx, %gw) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
    ^bb0(%a: tensor<256x64xf32>, %b: tensor<128x64xf32>):
      gpu_queue.queue "q0" tile [128, 128] capacity 2 : tensor<256x128xf32>
      %s0 = gpu_queue.stage "linear_0" pids [0, 4) tile [128, 128] (%a, %b) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
      ^bb0(%sa: tensor<256x64xf32>, %sb: tensor<128x64xf32>):
        %y = graph.linear %sa, %sb : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
        gpu_queue.push %y into "q0" : tensor<256x128xf32>
        gpu_queue.yield %y : tensor<256x128xf32>
      }
      %s1 = gpu_queue.stage "relu_1" pids [4, 8) tile [128, 128] () : () -> tensor<256x128xf32> {
        %t = gpu_queue.pop "q0" {relation = "cols"} : tensor<256x128xf32>
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

// -----

// A launch plan out of order.
// CHECK: 'gpu_queue.launch_plan' lists kernels [k1] but the program launches [k0] in that order
func.func @f(%x: tensor<256x64xf32>, %w: tensor<128x64xf32>) -> tensor<256x128xf32> {
  %r = gpu_queue.program (%x, %w) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
  ^bb0(%gx: tensor<256x64xf32>, %gw: tensor<128x64xf32>):
    %k = gpu_queue.kernel "k0" grid 8 warps 4 smem 0 (%gx, %gw) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
    ^bb0(%a: tensor<256x64xf32>, %b: tensor<128x64xf32>):
      gpu_queue.queue "q0" tile [128, 128] capacity 2 : tensor<256x128xf32>
      %s0 = gpu_queue.stage "linear_0" pids [0, 4) tile [128, 128] (%a, %b) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
      ^bb0(%sa: tensor<256x64xf32>, %sb: tensor<128x64xf32>):
        %y = graph.linear %sa, %sb : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
        gpu_queue.push %y into "q0" : tensor<256x128xf32>
        gpu_queue.yield %y : tensor<256x128xf32>
      }
      %s1 = gpu_queue.stage "relu_1" pids [4, 8) tile [128, 128] () : () -> tensor<256x128xf32> {
        %t = gpu_queue.pop "q0" {relation = "tile"} : tensor<256x128xf32>
        %z = graph.relu %t : tensor<256x128xf32> -> tensor<256x128xf32>
        gpu_queue.yield %z : tensor<256x128xf32>
      }
      gpu_queue.yield %s1 : tensor<256x128xf32>
    }
    gpu_queue.launch_plan ["k1"] buffers []
    gpu_queue.yield %k : tensor<256x128xf32>
  }
  func.return %r : tensor<256x128xf32>
}

// -----

// An empty program-id range.
// CHECK: 'gpu_queue.stage' "linear_0" program ids [4, 4) must be a non-empty range
func.func @f(%x: tensor<256x64xf32>, %w: tensor<128x64xf32>) -> tensor<256x128xf32> {
  %r = gpu_queue.program (%x, %w) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
  ^bb0(%gx: tensor<256x64xf32>, %gw: tensor<128x64xf32>):
    %k = gpu_queue.kernel "k0" grid 8 warps 4 smem 0 (%gx, %gw) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
    ^bb0(%a: tensor<256x64xf32>, %b: tensor<128x64xf32>):
      gpu_queue.queue "q0" tile [128, 128] capacity 2 : tensor<256x128xf32>
      %s0 = gpu_queue.stage "linear_0" pids [4, 4) tile [128, 128] (%a, %b) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
      ^bb0(%sa: tensor<256x64xf32>, %sb: tensor<128x64xf32>):
        %y = graph.linear %sa, %sb : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
        gpu_queue.push %y into "q0" : tensor<256x128xf32>
        gpu_queue.yield %y : tensor<256x128xf32>
      }
      %s1 = gpu_queue.stage "relu_1" pids [4, 8) tile [128, 128] () : () -> tensor<256x128xf32> {
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
