// RUN: kitsune-opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: 'dataflow.task' "a" tile [4] has 1 sizes but result #0 tensor<8x16xf32> has rank 2
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [4] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "all"} : tensor<8x16xf32>
    dataflow.yield %c : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// CHECK: 'dataflow.task' "a" tile size 32 of dim 1 exceeds the dim size 16 of tensor<8x16xf32>
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [4, 32] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "all"} : tensor<8x16xf32>
    dataflow.yield %c : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// CHECK: 'dataflow.task' "a" tile size 0 of dim 0 must be positive
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [0, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "all"} : tensor<8x16xf32>
    dataflow.yield %c : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// CHECK: 'dataflow.task' "a" kind must be one of contraction, reduction, elementwise, gather, layout, partial, combine, got 'magic'
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" magic (%g0) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "all"} : tensor<8x16xf32>
    dataflow.yield %c : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// CHECK: 'dataflow.channel' relation "tile" from task "a" to task "b": needs identical tiles, got producer tile [4, 16] and consumer tile [8, 8]
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "tile"} : tensor<8x16xf32>
    %b = dataflow.task "b" elementwise (%c) tile [8, 8] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %d = dataflow.channel %b {relation = "all"} : tensor<8x16xf32>
    dataflow.yield %d : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// CHECK: 'dataflow.channel' relation "tile" from task "a" to task "b": needs identical shapes, got producer [8, 16], channel [8, 16], consumer [8, 1]
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x1xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x1xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "tile"} : tensor<8x16xf32>
    %b = dataflow.task "b" reduction (%c) tile [4, 1] : (tensor<8x16xf32>) -> tensor<8x1xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.sum %a0 {dims = [1], keepdim = true} : tensor<8x16xf32> -> tensor<8x1xf32>
      dataflow.yield %y : tensor<8x1xf32>
    }
    %d = dataflow.channel %b {relation = "all"} : tensor<8x1xf32>
    dataflow.yield %d : tensor<8x1xf32>
  }
  func.return %r : tensor<8x1xf32>
}

// -----

// CHECK: 'dataflow.channel' relation "rows" from task "a" to task "b": needs the same leading tile sizes, got producer tile [4, 16] and consumer tile [2, 1]
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x1xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x1xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "rows"} : tensor<8x16xf32>
    %b = dataflow.task "b" reduction (%c) tile [2, 1] : (tensor<8x16xf32>) -> tensor<8x1xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.sum %a0 {dims = [1], keepdim = true} : tensor<8x16xf32> -> tensor<8x1xf32>
      dataflow.yield %y : tensor<8x1xf32>
    }
    %d = dataflow.channel %b {relation = "all"} : tensor<8x1xf32>
    dataflow.yield %d : tensor<8x1xf32>
  }
  func.return %r : tensor<8x1xf32>
}

// -----

// CHECK: 'dataflow.channel' relation "rows" from task "a" to task "b": needs the same leading dims, got producer [8, 16], channel [8, 16], consumer [16, 8]
func.func @f(%x: tensor<8x16xf32>) -> tensor<16x8xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<16x8xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "rows"} : tensor<8x16xf32>
    %b = dataflow.task "b" layout (%c) tile [4, 8] : (tensor<8x16xf32>) -> tensor<16x8xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.permute %a0 {perm = [1, 0]} : tensor<8x16xf32> -> tensor<16x8xf32>
      dataflow.yield %y : tensor<16x8xf32>
    }
    %d = dataflow.channel %b {relation = "all"} : tensor<16x8xf32>
    dataflow.yield %d : tensor<16x8xf32>
  }
  func.return %r : tensor<16x8xf32>
}

// -----

// CHECK: 'dataflow.channel' relation must be one of tile, rows, all, got 'cols'
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "cols"} : tensor<8x16xf32>
    dataflow.yield %c : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// CHECK: 'dataflow.task' "b" operand #0 comes from 'dataflow.task'; tasks read graph arguments or dataflow.channel values only
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %b = dataflow.task "b" elementwise (%a) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %d = dataflow.channel %b {relation = "all"} : tensor<8x16xf32>
    dataflow.yield %d : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// CHECK: 'dataflow.channel' source must be a dataflow.task result
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %c = dataflow.channel %g0 {relation = "all"} : tensor<8x16xf32>
    dataflow.yield %c : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// CHECK: 'dataflow.task' "a" yields (tensor<8x16xf32>) but has results (tensor<8x1xf32>)
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x1xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x1xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [4, 1] : (tensor<8x16xf32>) -> tensor<8x1xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "all"} : tensor<8x1xf32>
    dataflow.yield %c : tensor<8x1xf32>
  }
  func.return %r : tensor<8x1xf32>
}

// -----

// CHECK: 'dataflow.task' "a" block arguments (tensor<8x1xf32>) must mirror the operands (tensor<8x16xf32>)
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x1xf32>):
      %y = graph.expand %a0 {shape = [8, 16]} : tensor<8x1xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "all"} : tensor<8x16xf32>
    dataflow.yield %c : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// CHECK: 'dataflow.task' "a" body op 'graph.add' uses a value defined outside the task; pass it as an operand
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.add %a0, %g0 : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "all"} : tensor<8x16xf32>
    dataflow.yield %c : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// CHECK: 'dataflow.graph' may hold only dataflow.task, dataflow.channel and dataflow.yield ops, got 'graph.relu'
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %y = graph.relu %g0 : tensor<8x16xf32> -> tensor<8x16xf32>
    dataflow.yield %y : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// CHECK: 'dataflow.graph' has two tasks named "a"
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = dataflow.graph (%x) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%g0: tensor<8x16xf32>):
    %a = dataflow.task "a" elementwise (%g0) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %a2 = dataflow.task "a" elementwise (%g0) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %c = dataflow.channel %a {relation = "all"} : tensor<8x16xf32>
    dataflow.yield %c : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// CHECK: 'dataflow.task' "a" must be directly inside a dataflow.graph
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %a = dataflow.task "a" elementwise (%x) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a0: tensor<8x16xf32>):
      %y = graph.relu %a0 : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
  func.return %a : tensor<8x16xf32>
}

