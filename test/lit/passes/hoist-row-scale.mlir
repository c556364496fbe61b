// kitsune-hoist-row-scale: a row-constant factor of a contraction's row operand multiplies its result instead;
// cases where it must not move.
// RUN: kitsune-opt %s --split-input-file -p kitsune-hoist-row-scale | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p kitsune-hoist-row-scale | kitsune-opt --split-input-file | filecheck %s

// RMSNorm before a projection: the scale rsqrt(mean(x^2) + eps) moves to the result, the weight g stays.
// CHECK-LABEL: func.func @rms_norm_linear(
// CHECK:         %s = graph.rsqrt %e : tensor<8x1xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    %{{.*}} = graph.mul %x, %g : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.linear %{{.*}}, %w : tensor<8x64xf32>, tensor<32x64xf32> -> tensor<8x32xf32>
// CHECK-NEXT:    %[[Z:.*]] = graph.mul %[[Y]], %s : tensor<8x32xf32>, tensor<8x1xf32> -> tensor<8x32xf32>
// CHECK-NEXT:    func.return %[[Z]] : tensor<8x32xf32>
func.func @rms_norm_linear(%x: tensor<8x64xf32>, %g: tensor<64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  %p = graph.pow %x {exponent = 2.0} : tensor<8x64xf32> -> tensor<8x64xf32>
  %m = graph.mean %p {dims = [1], keepdim = true} : tensor<8x64xf32> -> tensor<8x1xf32>
  %c = graph.constant dense<1.0e-05> : tensor<f32>
  %e = graph.add %m, %c : tensor<8x1xf32>, tensor<f32> -> tensor<8x1xf32>
  %s = graph.rsqrt %e : tensor<8x1xf32> -> tensor<8x1xf32>
  %n = graph.mul %x, %s : tensor<8x64xf32>, tensor<8x1xf32> -> tensor<8x64xf32>
  %a = graph.mul %n, %g : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %y = graph.linear %a, %w : tensor<8x64xf32>, tensor<32x64xf32> -> tensor<8x32xf32>
  func.return %y : tensor<8x32xf32>
}

// -----

// A matmul with a [K, N] weight, the scale first in the product.
// CHECK-LABEL: func.func @scale_first_matmul(
// CHECK-NEXT:    %[[Y:.*]] = graph.matmul %x, %w : tensor<2x8x64xf32>, tensor<64x16xf32> -> tensor<2x8x16xf32>
// CHECK-NEXT:    %[[Z:.*]] = graph.mul %[[Y]], %s : tensor<2x8x16xf32>, tensor<2x8x1xf32> -> tensor<2x8x16xf32>
// CHECK-NEXT:    func.return %[[Z]]
func.func @scale_first_matmul(%x: tensor<2x8x64xf32>, %s: tensor<2x8x1xf32>, %w: tensor<64x16xf32>) -> tensor<2x8x16xf32> {
  %a = graph.mul %s, %x : tensor<2x8x1xf32>, tensor<2x8x64xf32> -> tensor<2x8x64xf32>
  %y = graph.matmul %a, %w : tensor<2x8x64xf32>, tensor<64x16xf32> -> tensor<2x8x16xf32>
  func.return %y : tensor<2x8x16xf32>
}

// -----

// Not moved: a bias (it would be scaled too), a factor varying along K only, a product used twice.
// CHECK-LABEL: func.func @bias(
// CHECK-NEXT:    graph.mul %x, %s
// CHECK-NEXT:    graph.linear
// CHECK-NEXT:    func.return
func.func @bias(%x: tensor<8x64xf32>, %s: tensor<8x1xf32>, %w: tensor<32x64xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %a = graph.mul %x, %s : tensor<8x64xf32>, tensor<8x1xf32> -> tensor<8x64xf32>
  %y = graph.linear %a, %w, %b : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32> -> tensor<8x32xf32>
  func.return %y : tensor<8x32xf32>
}

// CHECK-LABEL: func.func @along_k(
// CHECK-NEXT:    graph.mul %x, %g
// CHECK-NEXT:    graph.linear
// CHECK-NEXT:    func.return
func.func @along_k(%x: tensor<8x64xf32>, %g: tensor<64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  %a = graph.mul %x, %g : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %y = graph.linear %a, %w : tensor<8x64xf32>, tensor<32x64xf32> -> tensor<8x32xf32>
  func.return %y : tensor<8x32xf32>
}

// CHECK-LABEL: func.func @used_twice(
// CHECK-NEXT:    %a = graph.mul %x, %s
// CHECK-NEXT:    graph.linear %a, %w
// CHECK-NEXT:    graph.add
// CHECK-NEXT:    func.return
func.func @used_twice(%x: tensor<8x64xf32>, %s: tensor<8x1xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %a = graph.mul %x, %s : tensor<8x64xf32>, tensor<8x1xf32> -> tensor<8x64xf32>
  %y = graph.linear %a, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %z = graph.add %y, %a : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  func.return %z : tensor<8x64xf32>
}
