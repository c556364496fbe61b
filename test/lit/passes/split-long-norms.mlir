// kitsune-split-long-norms: a norm or softmax over rows longer than max_row becomes its fp32 statistics and an
// elementwise normalisation rounded once to the norm's type; shorter rows stay one norm.
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-split-long-norms{max_row=32}' | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-split-long-norms{max_row=32}' | kitsune-opt --split-input-file | filecheck %s

// A bf16 GroupNorm-style row norm with weight and bias over rows of 64.
// CHECK-LABEL: func.func @layer_norm_long(
// CHECK:         %[[M:.*]], %[[R:.*]] = graph.layer_norm_stats %x {eps = 0.001} : tensor<4x64xbf16> -> (tensor<4x1xf32>, tensor<4x1xf32>)
// CHECK-NEXT:    %[[X:.*]] = graph.cast %x : tensor<4x64xbf16> -> tensor<4x64xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.sub %[[X]], %[[M]] : tensor<4x64xf32>, tensor<4x1xf32> -> tensor<4x64xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.mul %[[D]], %[[R]] : tensor<4x64xf32>, tensor<4x1xf32> -> tensor<4x64xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.cast %w : tensor<64xbf16> -> tensor<64xf32>
// CHECK-NEXT:    %[[NW:.*]] = graph.mul %[[N]], %[[W]] : tensor<4x64xf32>, tensor<64xf32> -> tensor<4x64xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.cast %b : tensor<64xbf16> -> tensor<64xf32>
// CHECK-NEXT:    %[[NB:.*]] = graph.add %[[NW]], %[[B]] : tensor<4x64xf32>, tensor<64xf32> -> tensor<4x64xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.cast %[[NB]] : tensor<4x64xf32> -> tensor<4x64xbf16>
// CHECK-NEXT:    func.return %[[Y]] : tensor<4x64xbf16>
func.func @layer_norm_long(%x: tensor<4x64xbf16>, %w: tensor<64xbf16>, %b: tensor<64xbf16>) -> tensor<4x64xbf16> {
  %y = graph.layer_norm %x, %w, %b {eps = 1.0e-03} : tensor<4x64xbf16>, tensor<64xbf16>, tensor<64xbf16> -> tensor<4x64xbf16>
  func.return %y : tensor<4x64xbf16>
}

// -----

// An RMS norm over two dims of 8 x 8 (64 elements a row), f32: no casts.
// CHECK-LABEL: func.func @rms_norm_long(
// CHECK:         %[[R:.*]] = graph.rms_norm_stats %x {normalized_rank = 2} : tensor<2x8x8xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.mul %x, %[[R]] : tensor<2x8x8xf32>, tensor<2x1x1xf32> -> tensor<2x8x8xf32>
// CHECK-NEXT:    func.return %[[N]] : tensor<2x8x8xf32>
func.func @rms_norm_long(%x: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %y = graph.rms_norm %x {normalized_rank = 2} : tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  func.return %y : tensor<2x8x8xf32>
}

// -----

// A log_softmax along dim 0 (rows of 48): the maximum and the sum of exponentials, then x - max - log(sum).
// CHECK-LABEL: func.func @log_softmax_long(
// CHECK:         %[[M:.*]], %[[S:.*]] = graph.softmax_stats %x {dim = 0} : tensor<48x2xf32> -> (tensor<1x2xf32>, tensor<1x2xf32>)
// CHECK-NEXT:    %[[D:.*]] = graph.sub %x, %[[M]] : tensor<48x2xf32>, tensor<1x2xf32> -> tensor<48x2xf32>
// CHECK-NEXT:    %[[L:.*]] = graph.log %[[S]] : tensor<1x2xf32> -> tensor<1x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.sub %[[D]], %[[L]] : tensor<48x2xf32>, tensor<1x2xf32> -> tensor<48x2xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<48x2xf32>
func.func @log_softmax_long(%x: tensor<48x2xf32>) -> tensor<48x2xf32> {
  %y = graph.log_softmax %x {dim = 0} : tensor<48x2xf32> -> tensor<48x2xf32>
  func.return %y : tensor<48x2xf32>
}

// -----

// Rows of 32 (not more than max_row) and a dynamic row stay whole.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     _stats
// CHECK:         graph.layer_norm %x
// CHECK:         graph.rms_norm %d
// CHECK-NOT:     _stats
func.func @kept(%x: tensor<4x32xf32>, %d: tensor<4x?xf32>) -> (tensor<4x32xf32>, tensor<4x?xf32>) {
  %y = graph.layer_norm %x : tensor<4x32xf32> -> tensor<4x32xf32>
  %z = graph.rms_norm %d : tensor<4x?xf32> -> tensor<4x?xf32>
  func.return %y, %z : tensor<4x32xf32>, tensor<4x?xf32>
}
