// RUN: kitsune-opt %s | filecheck %s
// RUN: kitsune-opt %s --print-op-generic | kitsune-opt | filecheck %s
// RUN: kitsune-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @mlp
// CHECK: %[[R:.*]] = dataflow.graph (%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<256x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<256x64xf32> {
// CHECK-NEXT: ^{{.*}}(%[[X:.*]]: tensor<256x64xf32>, %[[W1:.*]]: tensor<128x64xf32>, %[[W2:.*]]: tensor<64x128xf32>):
// CHECK-NEXT: %[[T1:.*]] = dataflow.task "fc1" contraction (%[[X]], %[[W1]]) tile [128, 128] attributes {est_time_s = 1.000000e-06 : f64} : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
// CHECK-NEXT: ^{{.*}}(%[[A:.*]]: tensor<256x64xf32>, %[[B:.*]]: tensor<128x64xf32>):
// CHECK-NEXT: %[[Y:.*]] = graph.linear %[[A]], %[[B]] : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
// CHECK-NEXT: %[[G:.*]] = graph.gelu %[[Y]] : tensor<256x128xf32> -> tensor<256x128xf32>
// CHECK-NEXT: dataflow.yield %[[G]] : tensor<256x128xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[C1:.*]] = dataflow.channel %[[T1]] {relation = "rows"} : tensor<256x128xf32>
// CHECK-NEXT: %[[T2:.*]] = dataflow.task "fc2" contraction (%[[C1]], %[[W2]]) tile [128, 64]
// CHECK: %[[C2:.*]] = dataflow.channel %[[T2]] {relation = "all"} : tensor<256x64xf32>
// CHECK-NEXT: dataflow.yield %[[C2]] : tensor<256x64xf32>
// CHECK: func.return %[[R]]

// GENERIC: "dataflow.graph"(%{{.*}}, %{{.*}}, %{{.*}}) ({
// GENERIC: "dataflow.task"(%{{.*}}, %{{.*}}) <{sym_name = "fc1", kind = "contraction", tile = array<i64: 128, 128>}> ({
// GENERIC: "dataflow.channel"(%{{.*}}) <{relation = "rows"}>
func.func @mlp(%x: tensor<256x64xf32>, %w1: tensor<128x64xf32>, %w2: tensor<64x128xf32>) -> tensor<256x64xf32> {
  %r = dataflow.graph (%x, %w1, %w2) : (tensor<256x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<256x64xf32> {
  ^bb0(%gx: tensor<256x64xf32>, %gw1: tensor<128x64xf32>, %gw2: tensor<64x128xf32>):
    %t1 = dataflow.task "fc1" contraction (%gx, %gw1) tile [128, 128] attributes {est_time_s = 1.0e-06 : f64} : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
    ^bb0(%a: tensor<256x64xf32>, %b: tensor<128x64xf32>):
      %y = graph.linear %a, %b : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
      %g = graph.gelu %y : tensor<256x128xf32> -> tensor<256x128xf32>
      dataflow.yield %g : tensor<256x128xf32>
    }
    %c1 = dataflow.channel %t1 {relation = "rows"} : tensor<256x128xf32>
    %t2 = dataflow.task "fc2" contraction (%c1, %gw2) tile [128, 64] : (tensor<256x128xf32>, tensor<64x128xf32>) -> tensor<256x64xf32> {
    ^bb0(%a: tensor<256x128xf32>, %b: tensor<64x128xf32>):
      %y = graph.linear %a, %b : tensor<256x128xf32>, tensor<64x128xf32> -> tensor<256x64xf32>
      dataflow.yield %y : tensor<256x64xf32>
    }
    %c2 = dataflow.channel %t2 {relation = "all"} : tensor<256x64xf32>
    dataflow.yield %c2 : tensor<256x64xf32>
  }
  func.return %r : tensor<256x64xf32>
}

// A second function in the same module.
// A softmax row-band task feeding an elementwise task tile by tile, and a two-result task.

// CHECK-LABEL: func.func @rows
// CHECK: dataflow.task "softmax_0" reduction (%{{.*}}) tile [4, 16] : (tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x1xf32>)
// CHECK: dataflow.channel %{{.*}} {relation = "tile"} : tensor<8x16xf32>
// CHECK: dataflow.task "relu_1" elementwise (%{{.*}}) tile [4, 16]
func.func @rows(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x1xf32>) {
  %r:2 = dataflow.graph (%x) : (tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x1xf32>) {
  ^bb0(%gx: tensor<8x16xf32>):
    %t:2 = dataflow.task "softmax_0" reduction (%gx) tile [4, 16] : (tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x1xf32>) {
    ^bb0(%a: tensor<8x16xf32>):
      %m = graph.amax %a {dims = [1], keepdim = true} : tensor<8x16xf32> -> tensor<8x1xf32>
      %s = graph.softmax %a : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %s, %m : tensor<8x16xf32>, tensor<8x1xf32>
    }
    %c = dataflow.channel %t#0 {relation = "tile"} : tensor<8x16xf32>
    %cm = dataflow.channel %t#1 {relation = "all"} : tensor<8x1xf32>
    %u = dataflow.task "relu_1" elementwise (%c) tile [4, 16] : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a: tensor<8x16xf32>):
      %y = graph.relu %a : tensor<8x16xf32> -> tensor<8x16xf32>
      dataflow.yield %y : tensor<8x16xf32>
    }
    %cu = dataflow.channel %u {relation = "all"} : tensor<8x16xf32>
    dataflow.yield %cu, %cm : tensor<8x16xf32>, tensor<8x1xf32>
  }
  func.return %r#0, %r#1 : tensor<8x16xf32>, tensor<8x1xf32>
}
