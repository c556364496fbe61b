// RUN: kitsune-opt %s | filecheck %s
// RUN: kitsune-opt %s --print-op-generic | kitsune-opt | filecheck %s

// CHECK-LABEL: func.func @main
// CHECK: %[[Y:.*]] = graph.softmax %{{.*}} {dim = 0} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: func.return %[[Y]]
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.softmax %x {dim = 0} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
