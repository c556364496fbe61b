// graph-decompose: every composite op to primitives (default: all of them), and
// the `ops` option choosing a subset: one check prefix per option value, each
// checking that only the chosen composites are decomposed in @all_composites.
// RUN: kitsune-opt %s --split-input-file -p graph-decompose | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p graph-decompose | kitsune-opt --split-input-file | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p 'graph-decompose{ops=softmax}' | filecheck %s --check-prefix=SOFTMAX
// RUN: kitsune-opt %s --split-input-file -p 'graph-decompose{ops=log_softmax}' | filecheck %s --check-prefix=LOGSOFTMAX
// RUN: kitsune-opt %s --split-input-file -p 'graph-decompose{ops=layer_norm}' | filecheck %s --check-prefix=LAYERNORM
// RUN: kitsune-opt %s --split-input-file -p 'graph-decompose{ops=rms_norm}' | filecheck %s --check-prefix=RMSNORM
// RUN: kitsune-opt %s --split-input-file -p 'graph-decompose{ops=batch_norm}' | filecheck %s --check-prefix=BATCHNORM
// RUN: kitsune-opt %s --split-input-file -p 'graph-decompose{ops=gelu}' | filecheck %s --check-prefix=GELU
// RUN: kitsune-opt %s --split-input-file -p 'graph-decompose{ops=silu}' | filecheck %s --check-prefix=SILU
// RUN: kitsune-opt %s --split-input-file -p 'graph-decompose{ops=linear}' | filecheck %s --check-prefix=LINEAR
// RUN: kitsune-opt %s --split-input-file -p 'graph-decompose{ops=mean}' | filecheck %s --check-prefix=MEAN
// RUN: kitsune-opt %s --split-input-file -p 'graph-decompose{ops=attention}' | filecheck %s --check-prefix=ATTENTION
// RUN: kitsune-opt %s --split-input-file -p 'graph-decompose{ops=softmax,gelu}' | filecheck %s --check-prefix=SOFTMAX-GELU
// RUN: not kitsune-opt %s --split-input-file -p 'graph-decompose{ops=softmax,bogus}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// UNKNOWN: kitsune-opt: error: ValueError: graph-decompose: unknown op(s) bogus; choose from softmax, log_softmax, layer_norm, rms_norm, batch_norm, gelu, silu, linear, mean, attention
// UNKNOWN-NOT: builtin.module

// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT:    %0 = graph.amax %x {dims = [1], keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %1 = graph.sub %x, %0 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %2 = graph.exp %1 : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %3 = graph.sum %2 {dims = [1], keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %y = graph.div %2, %3 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.softmax %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @softmax_dim0(
// CHECK-NEXT:    %0 = graph.amax %x {dims = [0], keepdim = true} : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    %1 = graph.sub %x, %0 : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %2 = graph.exp %1 : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %3 = graph.sum %2 {dims = [0], keepdim = true} : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    %y = graph.div %2, %3 : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @softmax_dim0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.softmax %x {dim = 0} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax(
// CHECK-NEXT:    %0 = graph.amax %x {dims = [1], keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %1 = graph.sub %x, %0 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %2 = graph.exp %1 : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %3 = graph.sum %2 {dims = [1], keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %4 = graph.log %3 : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %y = graph.sub %1, %4 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @log_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.log_softmax %x {dim = -1} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm(
// CHECK-NEXT:    %0 = graph.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    %1 = graph.sum %x {dims = [2], keepdim = true} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
// CHECK-NEXT:    %2 = graph.mul %1, %0 : tensor<2x4x1xf32>, tensor<f32> -> tensor<2x4x1xf32>
// CHECK-NEXT:    %3 = graph.sub %x, %2 : tensor<2x4x8xf32>, tensor<2x4x1xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %4 = graph.mul %3, %3 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %5 = graph.sum %4 {dims = [2], keepdim = true} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
// CHECK-NEXT:    %6 = graph.mul %5, %0 : tensor<2x4x1xf32>, tensor<f32> -> tensor<2x4x1xf32>
// CHECK-NEXT:    %7 = graph.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %8 = graph.add %6, %7 : tensor<2x4x1xf32>, tensor<f32> -> tensor<2x4x1xf32>
// CHECK-NEXT:    %9 = graph.rsqrt %8 : tensor<2x4x1xf32> -> tensor<2x4x1xf32>
// CHECK-NEXT:    %10 = graph.mul %3, %9 : tensor<2x4x8xf32>, tensor<2x4x1xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %11 = graph.mul %10, %w : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %y = graph.add %11, %b : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<2x4x8xf32>
// CHECK-NEXT:  }
func.func @layer_norm(%x: tensor<2x4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %y = graph.layer_norm %x, %w, %b : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm_rank2(
// CHECK-NEXT:    %0 = graph.constant dense<3.125000e-02> : tensor<f32>
// CHECK-NEXT:    %1 = graph.sum %x {dims = [1, 2], keepdim = true} : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %2 = graph.mul %1, %0 : tensor<2x1x1xf32>, tensor<f32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %3 = graph.sub %x, %2 : tensor<2x4x8xf32>, tensor<2x1x1xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %4 = graph.mul %3, %3 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %5 = graph.sum %4 {dims = [1, 2], keepdim = true} : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %6 = graph.mul %5, %0 : tensor<2x1x1xf32>, tensor<f32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %7 = graph.constant dense<1.000000e-03> : tensor<f32>
// CHECK-NEXT:    %8 = graph.add %6, %7 : tensor<2x1x1xf32>, tensor<f32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %9 = graph.rsqrt %8 : tensor<2x1x1xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %y = graph.mul %3, %9 : tensor<2x4x8xf32>, tensor<2x1x1xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<2x4x8xf32>
// CHECK-NEXT:  }
func.func @layer_norm_rank2(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %y = graph.layer_norm %x {normalized_rank = 2, eps = 0.001} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm(
// CHECK-NEXT:    %0 = graph.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    %1 = graph.mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %2 = graph.sum %1 {dims = [1], keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %3 = graph.mul %2, %0 : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %4 = graph.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:    %5 = graph.add %3, %4 : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %6 = graph.rsqrt %5 : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %7 = graph.mul %x, %6 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %y = graph.mul %7, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @rms_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = graph.rms_norm %x, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @batch_norm(
// CHECK-NEXT:    %0 = graph.reshape %m : tensor<3xf32> -> tensor<1x3x1x1xf32>
// CHECK-NEXT:    %1 = graph.reshape %v : tensor<3xf32> -> tensor<1x3x1x1xf32>
// CHECK-NEXT:    %2 = graph.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %3 = graph.add %1, %2 : tensor<1x3x1x1xf32>, tensor<f32> -> tensor<1x3x1x1xf32>
// CHECK-NEXT:    %4 = graph.rsqrt %3 : tensor<1x3x1x1xf32> -> tensor<1x3x1x1xf32>
// CHECK-NEXT:    %5 = graph.sub %x, %0 : tensor<2x3x5x5xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %6 = graph.mul %5, %4 : tensor<2x3x5x5xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %7 = graph.reshape %w : tensor<3xf32> -> tensor<1x3x1x1xf32>
// CHECK-NEXT:    %8 = graph.mul %6, %7 : tensor<2x3x5x5xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %9 = graph.reshape %b : tensor<3xf32> -> tensor<1x3x1x1xf32>
// CHECK-NEXT:    %y = graph.add %8, %9 : tensor<2x3x5x5xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    func.return %y : tensor<2x3x5x5xf32>
// CHECK-NEXT:  }
func.func @batch_norm(%x: tensor<2x3x5x5xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x5x5xf32> {
  %y = graph.batch_norm %x, %m, %v, %w, %b : tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x5x5xf32>
  func.return %y : tensor<2x3x5x5xf32>
}

// -----

// CHECK-LABEL: func.func @gelu(
// CHECK-NEXT:    %0 = graph.constant dense<0.707106769> : tensor<f32>
// CHECK-NEXT:    %1 = graph.mul %x, %0 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    %2 = graph.erf %1 : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %3 = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %4 = graph.add %2, %3 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    %5 = graph.mul %x, %4 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %6 = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %y = graph.mul %5, %6 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.gelu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @gelu_tanh(
// CHECK-NEXT:    %0 = graph.mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %1 = graph.mul %0, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %2 = graph.constant dense<4.471500e-02> : tensor<f32>
// CHECK-NEXT:    %3 = graph.mul %1, %2 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    %4 = graph.add %x, %3 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %5 = graph.constant dense<0.797884583> : tensor<f32>
// CHECK-NEXT:    %6 = graph.mul %4, %5 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    %7 = graph.tanh %6 : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %8 = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %9 = graph.add %7, %8 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    %10 = graph.mul %x, %9 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %11 = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %y = graph.mul %10, %11 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @gelu_tanh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.gelu %x {approximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @silu(
// CHECK-NEXT:    %0 = graph.sigmoid %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %y = graph.mul %x, %0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @silu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.silu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @linear(
// CHECK-NEXT:    %0 = graph.matmul %x, %w {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %y = graph.add %0, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @linear(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %y = graph.linear %x, %w, %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @linear_no_bias(
// CHECK-NEXT:    %y = graph.matmul %x, %w {transpose_b = true} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<2x4x16xf32>
// CHECK-NEXT:  }
func.func @linear_no_bias(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>) -> tensor<2x4x16xf32> {
  %y = graph.linear %x, %w : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  func.return %y : tensor<2x4x16xf32>
}

// -----

// CHECK-LABEL: func.func @mean(
// CHECK-NEXT:    %0 = graph.sum %x {dims = [1, 2], keepdim = true} : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %1 = graph.constant dense<3.125000e-02> : tensor<f32>
// CHECK-NEXT:    %y = graph.mul %0, %1 : tensor<2x1x1xf32>, tensor<f32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    func.return %y : tensor<2x1x1xf32>
// CHECK-NEXT:  }
func.func @mean(%x: tensor<2x4x8xf32>) -> tensor<2x1x1xf32> {
  %y = graph.mean %x {dims = [1, 2], keepdim = true} : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
  func.return %y : tensor<2x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @mean_all(
// CHECK-NEXT:    %0 = graph.sum %x {dims = [0, 1, 2]} : tensor<2x4x8xf32> -> tensor<f32>
// CHECK-NEXT:    %1 = graph.constant dense<1.562500e-02> : tensor<f32>
// CHECK-NEXT:    %y = graph.mul %0, %1 : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:    func.return %y : tensor<f32>
// CHECK-NEXT:  }
func.func @mean_all(%x: tensor<2x4x8xf32>) -> tensor<f32> {
  %y = graph.mean %x : tensor<2x4x8xf32> -> tensor<f32>
  func.return %y : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @attention(
// CHECK-NEXT:    %0 = graph.matmul %q, %k {transpose_b = true} : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x4x6xf32>
// CHECK-NEXT:    %1 = graph.constant dense<0.353553385> : tensor<f32>
// CHECK-NEXT:    %2 = graph.mul %0, %1 : tensor<1x2x4x6xf32>, tensor<f32> -> tensor<1x2x4x6xf32>
// CHECK-NEXT:    %3 = graph.amax %2 {dims = [3], keepdim = true} : tensor<1x2x4x6xf32> -> tensor<1x2x4x1xf32>
// CHECK-NEXT:    %4 = graph.sub %2, %3 : tensor<1x2x4x6xf32>, tensor<1x2x4x1xf32> -> tensor<1x2x4x6xf32>
// CHECK-NEXT:    %5 = graph.exp %4 : tensor<1x2x4x6xf32> -> tensor<1x2x4x6xf32>
// CHECK-NEXT:    %6 = graph.sum %5 {dims = [3], keepdim = true} : tensor<1x2x4x6xf32> -> tensor<1x2x4x1xf32>
// CHECK-NEXT:    %7 = graph.div %5, %6 : tensor<1x2x4x6xf32>, tensor<1x2x4x1xf32> -> tensor<1x2x4x6xf32>
// CHECK-NEXT:    %y = graph.matmul %7, %v : tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<1x2x4x8xf32>
// CHECK-NEXT:  }
func.func @attention(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  %y = graph.attention %q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x4x8xf32>
  func.return %y : tensor<1x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @attention_gqa(
// CHECK-NEXT:    %0 = graph.reshape %k : tensor<1x2x6x8xf32> -> tensor<1x2x1x6x8xf32>
// CHECK-NEXT:    %1 = graph.expand %0 {shape = [1, 2, 2, 6, 8]} : tensor<1x2x1x6x8xf32> -> tensor<1x2x2x6x8xf32>
// CHECK-NEXT:    %2 = graph.reshape %1 : tensor<1x2x2x6x8xf32> -> tensor<1x4x6x8xf32>
// CHECK-NEXT:    %3 = graph.reshape %v : tensor<1x2x6x8xf32> -> tensor<1x2x1x6x8xf32>
// CHECK-NEXT:    %4 = graph.expand %3 {shape = [1, 2, 2, 6, 8]} : tensor<1x2x1x6x8xf32> -> tensor<1x2x2x6x8xf32>
// CHECK-NEXT:    %5 = graph.reshape %4 : tensor<1x2x2x6x8xf32> -> tensor<1x4x6x8xf32>
// CHECK-NEXT:    %6 = graph.matmul %q, %2 {transpose_b = true} : tensor<1x4x4x8xf32>, tensor<1x4x6x8xf32> -> tensor<1x4x4x6xf32>
// CHECK-NEXT:    %7 = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %8 = graph.mul %6, %7 : tensor<1x4x4x6xf32>, tensor<f32> -> tensor<1x4x4x6xf32>
// CHECK-NEXT:    %9 = graph.amax %8 {dims = [3], keepdim = true} : tensor<1x4x4x6xf32> -> tensor<1x4x4x1xf32>
// CHECK-NEXT:    %10 = graph.sub %8, %9 : tensor<1x4x4x6xf32>, tensor<1x4x4x1xf32> -> tensor<1x4x4x6xf32>
// CHECK-NEXT:    %11 = graph.exp %10 : tensor<1x4x4x6xf32> -> tensor<1x4x4x6xf32>
// CHECK-NEXT:    %12 = graph.sum %11 {dims = [3], keepdim = true} : tensor<1x4x4x6xf32> -> tensor<1x4x4x1xf32>
// CHECK-NEXT:    %13 = graph.div %11, %12 : tensor<1x4x4x6xf32>, tensor<1x4x4x1xf32> -> tensor<1x4x4x6xf32>
// CHECK-NEXT:    %y = graph.matmul %13, %5 : tensor<1x4x4x6xf32>, tensor<1x4x6x8xf32> -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<1x4x4x8xf32>
// CHECK-NEXT:  }
func.func @attention_gqa(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x4x4x8xf32> {
  %y = graph.attention %q, %k, %v {scale = 0.5} : tensor<1x4x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_kept(
// CHECK-NEXT:    %0 = graph.amax %x {dims = [1], keepdim = true} : tensor<?x8xf32> -> tensor<?x1xf32>
// CHECK-NEXT:    %1 = graph.sub %x, %0 : tensor<?x8xf32>, tensor<?x1xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %2 = graph.exp %1 : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %3 = graph.sum %2 {dims = [1], keepdim = true} : tensor<?x8xf32> -> tensor<?x1xf32>
// CHECK-NEXT:    %a = graph.div %2, %3 : tensor<?x8xf32>, tensor<?x1xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %b = graph.linear %x, %w : tensor<?x8xf32>, tensor<16x8xf32> -> tensor<?x16xf32>
// CHECK-NEXT:    %c = graph.mean %x {dims = [1]} : tensor<?x8xf32> -> tensor<?xf32>
// CHECK-NEXT:    func.return %a, %b, %c : tensor<?x8xf32>, tensor<?x16xf32>, tensor<?xf32>
// CHECK-NEXT:  }
func.func @dynamic_kept(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> (tensor<?x8xf32>, tensor<?x16xf32>, tensor<?xf32>) {
  %a = graph.softmax %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %b = graph.linear %x, %w : tensor<?x8xf32>, tensor<16x8xf32> -> tensor<?x16xf32>
  %c = graph.mean %x {dims = [1]} : tensor<?x8xf32> -> tensor<?xf32>
  func.return %a, %b, %c : tensor<?x8xf32>, tensor<?x16xf32>, tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @mean_dynamic_reduced(
// CHECK-NEXT:    %y = graph.mean %x : tensor<?x?xf32> -> tensor<f32>
// CHECK-NEXT:    func.return %y : tensor<f32>
// CHECK-NEXT:  }
func.func @mean_dynamic_reduced(%x: tensor<?x?xf32>) -> tensor<f32> {
  %y = graph.mean %x : tensor<?x?xf32> -> tensor<f32>
  func.return %y : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @primitives_kept(
// CHECK-NEXT:    %a = graph.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %b = graph.sum %a {dims = [1], keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %c = graph.div %a, %b : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %c : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @primitives_kept(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = graph.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %b = graph.sum %a {dims = [1], keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %c = graph.div %a, %b : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}

// -----

// All composites decomposed by default:
// CHECK-LABEL: func.func @all_composites(
// CHECK-NOT:   graph.{{(softmax|log_softmax|layer_norm|rms_norm|batch_norm|gelu|silu|linear|mean|attention) }}
// CHECK:       func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention :

// Only softmax:
// SOFTMAX-LABEL: func.func @all_composites(
// SOFTMAX-NEXT:    %0 = graph.amax %x {dims = [1], keepdim = true} : tensor<2x4xf32> -> tensor<2x1xf32>
// SOFTMAX-NEXT:    %1 = graph.sub %x, %0 : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
// SOFTMAX-NEXT:    %2 = graph.exp %1 : tensor<2x4xf32> -> tensor<2x4xf32>
// SOFTMAX-NEXT:    %3 = graph.sum %2 {dims = [1], keepdim = true} : tensor<2x4xf32> -> tensor<2x1xf32>
// SOFTMAX-NEXT:    %softmax = graph.div %2, %3 : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
// SOFTMAX-NEXT:    %log_softmax = graph.log_softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// SOFTMAX-NEXT:    %layer_norm = graph.layer_norm %x, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// SOFTMAX-NEXT:    %rms_norm = graph.rms_norm %x : tensor<2x4xf32> -> tensor<2x4xf32>
// SOFTMAX-NEXT:    %batch_norm = graph.batch_norm %n, %w, %w : tensor<2x4x1x1xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x1x1xf32>
// SOFTMAX-NEXT:    %gelu = graph.gelu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// SOFTMAX-NEXT:    %silu = graph.silu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// SOFTMAX-NEXT:    %linear = graph.linear %x, %lw : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
// SOFTMAX-NEXT:    %mean = graph.mean %x {dims = [1]} : tensor<2x4xf32> -> tensor<2xf32>
// SOFTMAX-NEXT:    %attention = graph.attention %q, %q, %q : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
// SOFTMAX-NEXT:    func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>
// SOFTMAX-NEXT:  }

// Only log_softmax:
// LOGSOFTMAX-LABEL: func.func @all_composites(
// LOGSOFTMAX-NEXT:    %softmax = graph.softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LOGSOFTMAX-NEXT:    %0 = graph.amax %x {dims = [1], keepdim = true} : tensor<2x4xf32> -> tensor<2x1xf32>
// LOGSOFTMAX-NEXT:    %1 = graph.sub %x, %0 : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
// LOGSOFTMAX-NEXT:    %2 = graph.exp %1 : tensor<2x4xf32> -> tensor<2x4xf32>
// LOGSOFTMAX-NEXT:    %3 = graph.sum %2 {dims = [1], keepdim = true} : tensor<2x4xf32> -> tensor<2x1xf32>
// LOGSOFTMAX-NEXT:    %4 = graph.log %3 : tensor<2x1xf32> -> tensor<2x1xf32>
// LOGSOFTMAX-NEXT:    %log_softmax = graph.sub %1, %4 : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
// LOGSOFTMAX-NEXT:    %layer_norm = graph.layer_norm %x, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// LOGSOFTMAX-NEXT:    %rms_norm = graph.rms_norm %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LOGSOFTMAX-NEXT:    %batch_norm = graph.batch_norm %n, %w, %w : tensor<2x4x1x1xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x1x1xf32>
// LOGSOFTMAX-NEXT:    %gelu = graph.gelu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LOGSOFTMAX-NEXT:    %silu = graph.silu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LOGSOFTMAX-NEXT:    %linear = graph.linear %x, %lw : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
// LOGSOFTMAX-NEXT:    %mean = graph.mean %x {dims = [1]} : tensor<2x4xf32> -> tensor<2xf32>
// LOGSOFTMAX-NEXT:    %attention = graph.attention %q, %q, %q : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
// LOGSOFTMAX-NEXT:    func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>
// LOGSOFTMAX-NEXT:  }

// Only layer_norm:
// LAYERNORM-LABEL: func.func @all_composites(
// LAYERNORM-NEXT:    %softmax = graph.softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LAYERNORM-NEXT:    %log_softmax = graph.log_softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LAYERNORM-NEXT:    %0 = graph.constant dense<2.500000e-01> : tensor<f32>
// LAYERNORM-NEXT:    %1 = graph.sum %x {dims = [1], keepdim = true} : tensor<2x4xf32> -> tensor<2x1xf32>
// LAYERNORM-NEXT:    %2 = graph.mul %1, %0 : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
// LAYERNORM-NEXT:    %3 = graph.sub %x, %2 : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
// LAYERNORM-NEXT:    %4 = graph.mul %3, %3 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// LAYERNORM-NEXT:    %5 = graph.sum %4 {dims = [1], keepdim = true} : tensor<2x4xf32> -> tensor<2x1xf32>
// LAYERNORM-NEXT:    %6 = graph.mul %5, %0 : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
// LAYERNORM-NEXT:    %7 = graph.constant dense<1.000000e-05> : tensor<f32>
// LAYERNORM-NEXT:    %8 = graph.add %6, %7 : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
// LAYERNORM-NEXT:    %9 = graph.rsqrt %8 : tensor<2x1xf32> -> tensor<2x1xf32>
// LAYERNORM-NEXT:    %10 = graph.mul %3, %9 : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
// LAYERNORM-NEXT:    %layer_norm = graph.mul %10, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// LAYERNORM-NEXT:    %rms_norm = graph.rms_norm %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LAYERNORM-NEXT:    %batch_norm = graph.batch_norm %n, %w, %w : tensor<2x4x1x1xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x1x1xf32>
// LAYERNORM-NEXT:    %gelu = graph.gelu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LAYERNORM-NEXT:    %silu = graph.silu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LAYERNORM-NEXT:    %linear = graph.linear %x, %lw : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
// LAYERNORM-NEXT:    %mean = graph.mean %x {dims = [1]} : tensor<2x4xf32> -> tensor<2xf32>
// LAYERNORM-NEXT:    %attention = graph.attention %q, %q, %q : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
// LAYERNORM-NEXT:    func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>
// LAYERNORM-NEXT:  }

// Only rms_norm:
// RMSNORM-LABEL: func.func @all_composites(
// RMSNORM-NEXT:    %softmax = graph.softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// RMSNORM-NEXT:    %log_softmax = graph.log_softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// RMSNORM-NEXT:    %layer_norm = graph.layer_norm %x, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// RMSNORM-NEXT:    %0 = graph.constant dense<2.500000e-01> : tensor<f32>
// RMSNORM-NEXT:    %1 = graph.mul %x, %x : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// RMSNORM-NEXT:    %2 = graph.sum %1 {dims = [1], keepdim = true} : tensor<2x4xf32> -> tensor<2x1xf32>
// RMSNORM-NEXT:    %3 = graph.mul %2, %0 : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
// RMSNORM-NEXT:    %4 = graph.constant dense<1.000000e-06> : tensor<f32>
// RMSNORM-NEXT:    %5 = graph.add %3, %4 : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
// RMSNORM-NEXT:    %6 = graph.rsqrt %5 : tensor<2x1xf32> -> tensor<2x1xf32>
// RMSNORM-NEXT:    %rms_norm = graph.mul %x, %6 : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
// RMSNORM-NEXT:    %batch_norm = graph.batch_norm %n, %w, %w : tensor<2x4x1x1xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x1x1xf32>
// RMSNORM-NEXT:    %gelu = graph.gelu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// RMSNORM-NEXT:    %silu = graph.silu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// RMSNORM-NEXT:    %linear = graph.linear %x, %lw : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
// RMSNORM-NEXT:    %mean = graph.mean %x {dims = [1]} : tensor<2x4xf32> -> tensor<2xf32>
// RMSNORM-NEXT:    %attention = graph.attention %q, %q, %q : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
// RMSNORM-NEXT:    func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>
// RMSNORM-NEXT:  }

// Only batch_norm:
// BATCHNORM-LABEL: func.func @all_composites(
// BATCHNORM-NEXT:    %softmax = graph.softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// BATCHNORM-NEXT:    %log_softmax = graph.log_softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// BATCHNORM-NEXT:    %layer_norm = graph.layer_norm %x, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// BATCHNORM-NEXT:    %rms_norm = graph.rms_norm %x : tensor<2x4xf32> -> tensor<2x4xf32>
// BATCHNORM-NEXT:    %0 = graph.reshape %w : tensor<4xf32> -> tensor<1x4x1x1xf32>
// BATCHNORM-NEXT:    %1 = graph.reshape %w : tensor<4xf32> -> tensor<1x4x1x1xf32>
// BATCHNORM-NEXT:    %2 = graph.constant dense<1.000000e-05> : tensor<f32>
// BATCHNORM-NEXT:    %3 = graph.add %1, %2 : tensor<1x4x1x1xf32>, tensor<f32> -> tensor<1x4x1x1xf32>
// BATCHNORM-NEXT:    %4 = graph.rsqrt %3 : tensor<1x4x1x1xf32> -> tensor<1x4x1x1xf32>
// BATCHNORM-NEXT:    %5 = graph.sub %n, %0 : tensor<2x4x1x1xf32>, tensor<1x4x1x1xf32> -> tensor<2x4x1x1xf32>
// BATCHNORM-NEXT:    %batch_norm = graph.mul %5, %4 : tensor<2x4x1x1xf32>, tensor<1x4x1x1xf32> -> tensor<2x4x1x1xf32>
// BATCHNORM-NEXT:    %gelu = graph.gelu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// BATCHNORM-NEXT:    %silu = graph.silu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// BATCHNORM-NEXT:    %linear = graph.linear %x, %lw : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
// BATCHNORM-NEXT:    %mean = graph.mean %x {dims = [1]} : tensor<2x4xf32> -> tensor<2xf32>
// BATCHNORM-NEXT:    %attention = graph.attention %q, %q, %q : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
// BATCHNORM-NEXT:    func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>
// BATCHNORM-NEXT:  }

// Only gelu:
// GELU-LABEL: func.func @all_composites(
// GELU-NEXT:    %softmax = graph.softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// GELU-NEXT:    %log_softmax = graph.log_softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// GELU-NEXT:    %layer_norm = graph.layer_norm %x, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// GELU-NEXT:    %rms_norm = graph.rms_norm %x : tensor<2x4xf32> -> tensor<2x4xf32>
// GELU-NEXT:    %batch_norm = graph.batch_norm %n, %w, %w : tensor<2x4x1x1xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x1x1xf32>
// GELU-NEXT:    %0 = graph.constant dense<0.707106769> : tensor<f32>
// GELU-NEXT:    %1 = graph.mul %x, %0 : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
// GELU-NEXT:    %2 = graph.erf %1 : tensor<2x4xf32> -> tensor<2x4xf32>
// GELU-NEXT:    %3 = graph.constant dense<1.000000e+00> : tensor<f32>
// GELU-NEXT:    %4 = graph.add %2, %3 : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
// GELU-NEXT:    %5 = graph.mul %x, %4 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// GELU-NEXT:    %6 = graph.constant dense<5.000000e-01> : tensor<f32>
// GELU-NEXT:    %gelu = graph.mul %5, %6 : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
// GELU-NEXT:    %silu = graph.silu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// GELU-NEXT:    %linear = graph.linear %x, %lw : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
// GELU-NEXT:    %mean = graph.mean %x {dims = [1]} : tensor<2x4xf32> -> tensor<2xf32>
// GELU-NEXT:    %attention = graph.attention %q, %q, %q : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
// GELU-NEXT:    func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>
// GELU-NEXT:  }

// Only silu:
// SILU-LABEL: func.func @all_composites(
// SILU-NEXT:    %softmax = graph.softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// SILU-NEXT:    %log_softmax = graph.log_softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// SILU-NEXT:    %layer_norm = graph.layer_norm %x, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// SILU-NEXT:    %rms_norm = graph.rms_norm %x : tensor<2x4xf32> -> tensor<2x4xf32>
// SILU-NEXT:    %batch_norm = graph.batch_norm %n, %w, %w : tensor<2x4x1x1xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x1x1xf32>
// SILU-NEXT:    %gelu = graph.gelu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// SILU-NEXT:    %0 = graph.sigmoid %x : tensor<2x4xf32> -> tensor<2x4xf32>
// SILU-NEXT:    %silu = graph.mul %x, %0 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// SILU-NEXT:    %linear = graph.linear %x, %lw : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
// SILU-NEXT:    %mean = graph.mean %x {dims = [1]} : tensor<2x4xf32> -> tensor<2xf32>
// SILU-NEXT:    %attention = graph.attention %q, %q, %q : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
// SILU-NEXT:    func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>
// SILU-NEXT:  }

// Only linear:
// LINEAR-LABEL: func.func @all_composites(
// LINEAR-NEXT:    %softmax = graph.softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LINEAR-NEXT:    %log_softmax = graph.log_softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LINEAR-NEXT:    %layer_norm = graph.layer_norm %x, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// LINEAR-NEXT:    %rms_norm = graph.rms_norm %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LINEAR-NEXT:    %batch_norm = graph.batch_norm %n, %w, %w : tensor<2x4x1x1xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x1x1xf32>
// LINEAR-NEXT:    %gelu = graph.gelu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LINEAR-NEXT:    %silu = graph.silu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// LINEAR-NEXT:    %linear = graph.matmul %x, %lw {transpose_b = true} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
// LINEAR-NEXT:    %mean = graph.mean %x {dims = [1]} : tensor<2x4xf32> -> tensor<2xf32>
// LINEAR-NEXT:    %attention = graph.attention %q, %q, %q : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
// LINEAR-NEXT:    func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>
// LINEAR-NEXT:  }

// Only mean:
// MEAN-LABEL: func.func @all_composites(
// MEAN-NEXT:    %softmax = graph.softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// MEAN-NEXT:    %log_softmax = graph.log_softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// MEAN-NEXT:    %layer_norm = graph.layer_norm %x, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// MEAN-NEXT:    %rms_norm = graph.rms_norm %x : tensor<2x4xf32> -> tensor<2x4xf32>
// MEAN-NEXT:    %batch_norm = graph.batch_norm %n, %w, %w : tensor<2x4x1x1xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x1x1xf32>
// MEAN-NEXT:    %gelu = graph.gelu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// MEAN-NEXT:    %silu = graph.silu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// MEAN-NEXT:    %linear = graph.linear %x, %lw : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
// MEAN-NEXT:    %0 = graph.sum %x {dims = [1]} : tensor<2x4xf32> -> tensor<2xf32>
// MEAN-NEXT:    %1 = graph.constant dense<2.500000e-01> : tensor<f32>
// MEAN-NEXT:    %mean = graph.mul %0, %1 : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
// MEAN-NEXT:    %attention = graph.attention %q, %q, %q : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
// MEAN-NEXT:    func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>
// MEAN-NEXT:  }

// Only attention:
// ATTENTION-LABEL: func.func @all_composites(
// ATTENTION-NEXT:    %softmax = graph.softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// ATTENTION-NEXT:    %log_softmax = graph.log_softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// ATTENTION-NEXT:    %layer_norm = graph.layer_norm %x, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// ATTENTION-NEXT:    %rms_norm = graph.rms_norm %x : tensor<2x4xf32> -> tensor<2x4xf32>
// ATTENTION-NEXT:    %batch_norm = graph.batch_norm %n, %w, %w : tensor<2x4x1x1xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x1x1xf32>
// ATTENTION-NEXT:    %gelu = graph.gelu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// ATTENTION-NEXT:    %silu = graph.silu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// ATTENTION-NEXT:    %linear = graph.linear %x, %lw : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
// ATTENTION-NEXT:    %mean = graph.mean %x {dims = [1]} : tensor<2x4xf32> -> tensor<2xf32>
// ATTENTION-NEXT:    %0 = graph.matmul %q, %q {transpose_b = true} : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x2xf32>
// ATTENTION-NEXT:    %1 = graph.constant dense<5.000000e-01> : tensor<f32>
// ATTENTION-NEXT:    %2 = graph.mul %0, %1 : tensor<1x1x2x2xf32>, tensor<f32> -> tensor<1x1x2x2xf32>
// ATTENTION-NEXT:    %3 = graph.amax %2 {dims = [3], keepdim = true} : tensor<1x1x2x2xf32> -> tensor<1x1x2x1xf32>
// ATTENTION-NEXT:    %4 = graph.sub %2, %3 : tensor<1x1x2x2xf32>, tensor<1x1x2x1xf32> -> tensor<1x1x2x2xf32>
// ATTENTION-NEXT:    %5 = graph.exp %4 : tensor<1x1x2x2xf32> -> tensor<1x1x2x2xf32>
// ATTENTION-NEXT:    %6 = graph.sum %5 {dims = [3], keepdim = true} : tensor<1x1x2x2xf32> -> tensor<1x1x2x1xf32>
// ATTENTION-NEXT:    %7 = graph.div %5, %6 : tensor<1x1x2x2xf32>, tensor<1x1x2x1xf32> -> tensor<1x1x2x2xf32>
// ATTENTION-NEXT:    %attention = graph.matmul %7, %q : tensor<1x1x2x2xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
// ATTENTION-NEXT:    func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>
// ATTENTION-NEXT:  }

// softmax and gelu:
// SOFTMAX-GELU-LABEL: func.func @all_composites(
// SOFTMAX-GELU-NEXT:    %0 = graph.amax %x {dims = [1], keepdim = true} : tensor<2x4xf32> -> tensor<2x1xf32>
// SOFTMAX-GELU-NEXT:    %1 = graph.sub %x, %0 : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
// SOFTMAX-GELU-NEXT:    %2 = graph.exp %1 : tensor<2x4xf32> -> tensor<2x4xf32>
// SOFTMAX-GELU-NEXT:    %3 = graph.sum %2 {dims = [1], keepdim = true} : tensor<2x4xf32> -> tensor<2x1xf32>
// SOFTMAX-GELU-NEXT:    %softmax = graph.div %2, %3 : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
// SOFTMAX-GELU-NEXT:    %log_softmax = graph.log_softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
// SOFTMAX-GELU-NEXT:    %layer_norm = graph.layer_norm %x, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// SOFTMAX-GELU-NEXT:    %rms_norm = graph.rms_norm %x : tensor<2x4xf32> -> tensor<2x4xf32>
// SOFTMAX-GELU-NEXT:    %batch_norm = graph.batch_norm %n, %w, %w : tensor<2x4x1x1xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x1x1xf32>
// SOFTMAX-GELU-NEXT:    %4 = graph.constant dense<0.707106769> : tensor<f32>
// SOFTMAX-GELU-NEXT:    %5 = graph.mul %x, %4 : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
// SOFTMAX-GELU-NEXT:    %6 = graph.erf %5 : tensor<2x4xf32> -> tensor<2x4xf32>
// SOFTMAX-GELU-NEXT:    %7 = graph.constant dense<1.000000e+00> : tensor<f32>
// SOFTMAX-GELU-NEXT:    %8 = graph.add %6, %7 : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
// SOFTMAX-GELU-NEXT:    %9 = graph.mul %x, %8 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// SOFTMAX-GELU-NEXT:    %10 = graph.constant dense<5.000000e-01> : tensor<f32>
// SOFTMAX-GELU-NEXT:    %gelu = graph.mul %9, %10 : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
// SOFTMAX-GELU-NEXT:    %silu = graph.silu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// SOFTMAX-GELU-NEXT:    %linear = graph.linear %x, %lw : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
// SOFTMAX-GELU-NEXT:    %mean = graph.mean %x {dims = [1]} : tensor<2x4xf32> -> tensor<2xf32>
// SOFTMAX-GELU-NEXT:    %attention = graph.attention %q, %q, %q : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
// SOFTMAX-GELU-NEXT:    func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>
// SOFTMAX-GELU-NEXT:  }
func.func @all_composites(%x: tensor<2x4xf32>, %w: tensor<4xf32>, %lw: tensor<3x4xf32>, %n: tensor<2x4x1x1xf32>, %q: tensor<1x1x2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>) {
  %softmax = graph.softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
  %log_softmax = graph.log_softmax %x : tensor<2x4xf32> -> tensor<2x4xf32>
  %layer_norm = graph.layer_norm %x, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %rms_norm = graph.rms_norm %x : tensor<2x4xf32> -> tensor<2x4xf32>
  %batch_norm = graph.batch_norm %n, %w, %w : tensor<2x4x1x1xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4x1x1xf32>
  %gelu = graph.gelu %x : tensor<2x4xf32> -> tensor<2x4xf32>
  %silu = graph.silu %x : tensor<2x4xf32> -> tensor<2x4xf32>
  %linear = graph.linear %x, %lw : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %mean = graph.mean %x {dims = [1]} : tensor<2x4xf32> -> tensor<2xf32>
  %attention = graph.attention %q, %q, %q : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
  func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %silu, %linear, %mean, %attention : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<1x1x2x4xf32>
}
