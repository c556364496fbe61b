// Round trip of every graph op (custom syntax), through the generic form and back,
// and the generic form's properties for a few ops.
// RUN: kitsune-opt %s | filecheck %s
// RUN: kitsune-opt %s | kitsune-opt | filecheck %s
// RUN: kitsune-opt %s --print-op-generic | kitsune-opt | filecheck %s
// RUN: kitsune-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Attributes equal to their default are still printed in the generic form when
// they were given (gelu approximate = "none"), but dropped by the custom form.
// GENERIC:      %gelu_default = "graph.gelu"(%x) <{approximate = "none"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT: %gelu_tanh = "graph.gelu"(%x) <{approximate = "tanh"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT: %pow = "graph.pow"(%x) <{exponent = 2.000000e+00 : f64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC:      %tagged = "graph.relu"(%x) {kitsune.name = "act"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC:      %sum_keep = "graph.sum"(%x) <{dims = array<i64: 0, 2>, keepdim = true}> : (tensor<2x4x8xf32>) -> tensor<1x4x1xf32>
// GENERIC:      %softmax_d0 = "graph.softmax"(%x) <{dim = 0 : i64}> : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// GENERIC:      %ln = "graph.layer_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// GENERIC-NEXT: %ln_w = "graph.layer_norm"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// GENERIC-NEXT: %ln_wb = "graph.layer_norm"(%x, %w, %b) <{eps = 1.000000e-03 : f64, operandSegmentSizes = array<i32: 1, 1, 1>}>
// GENERIC:      %bn_w = "graph.batch_norm"(%n, %c, %c, %c) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}>
// GENERIC:      %mm_tt = "graph.matmul"(%at, %bt) <{transpose_a = true, transpose_b = true}> : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
// GENERIC:      %conv_s = "graph.conv2d"(%x, %w) <{stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 2, 2>}>
// GENERIC-NEXT: %conv_g = "graph.conv2d"(%x, %wg, %bias) <{groups = 2 : i64}>
// GENERIC:      %bag_mean = "graph.embedding_bag"(%w, %i) <{mode = "mean"}>
// GENERIC:      %iadd_a = "graph.index_add"(%x, %i1, %src) <{dim = 1 : i64, alpha = 5.000000e-01 : f64}>
// GENERIC:      %cat3 = "graph.concat"(%x, %y, %z) <{dim = -1 : i64}> : (tensor<4x8xf32>, tensor<4x5xf32>, tensor<4x1xf32>) -> tensor<4x14xf32>
// GENERIC:      %p0, %p1 = "graph.split"(%x) <{dim = 1 : i64, sizes = array<i64: 3, 5>}> : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x5xf32>)
// GENERIC:      %perm = "graph.permute"(%x) <{perm = array<i64: 1, 0>}> : (tensor<4x8xf32>) -> tensor<8x4xf32>
// GENERIC:      %expand_lead = "graph.expand"(%z) <{shape = array<i64: 2, -1, 8>}> : (tensor<4x1xf32>) -> tensor<2x4x8xf32>
// GENERIC-NEXT: %reshape = "graph.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32>
// GENERIC:      %splat = "graph.constant"() <{value = dense<1.000000e+00> : tensor<4xf32>}> : () -> tensor<4xf32>
// GENERIC:      %tagged = "graph.constant"() <{value = dense<0> : tensor<i32>}> {kitsune.name = "zero"} : () -> tensor<i32>

// CHECK-LABEL: func.func @unary(
// CHECK-NEXT:    %relu = graph.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %silu = graph.silu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %sigmoid = graph.sigmoid %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %tanh = graph.tanh %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %exp = graph.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %log = graph.log %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %sqrt = graph.sqrt %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %rsqrt = graph.rsqrt %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %neg = graph.neg %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %abs = graph.abs %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %erf = graph.erf %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %recip = graph.reciprocal %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %relu_dyn = graph.relu %d : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %exp_f16 = graph.exp %h : tensor<2x3xf16> -> tensor<2x3xf16>
// CHECK-NEXT:    %gelu = graph.gelu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %gelu_default = graph.gelu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %gelu_tanh = graph.gelu %x {approximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %pow = graph.pow %x {exponent = 2.0} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %pow_neg = graph.pow %d {exponent = -0.5} : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %pow_big = graph.pow %x {exponent = 1.5e+20} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %pow_inf = graph.pow %x {exponent = -inf} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %pow_int = graph.pow %x {exponent = 3.0} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %cast_f16 = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK-NEXT:    %cast_i = graph.cast %i : tensor<4x8xi64> -> tensor<4x8xf32>
// CHECK-NEXT:    %cast_same = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %tagged = graph.relu %x attributes {kitsune.name = "act"} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @unary(%x: tensor<4x8xf32>, %d: tensor<?x8xf32>, %h: tensor<2x3xf16>, %i: tensor<4x8xi64>) {
  %relu = graph.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %silu = graph.silu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %sigmoid = graph.sigmoid %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %tanh = graph.tanh %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %exp = graph.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %log = graph.log %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %sqrt = graph.sqrt %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %rsqrt = graph.rsqrt %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %neg = graph.neg %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %abs = graph.abs %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %erf = graph.erf %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %recip = graph.reciprocal %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %relu_dyn = graph.relu %d : tensor<?x8xf32> -> tensor<?x8xf32>
  %exp_f16 = graph.exp %h : tensor<2x3xf16> -> tensor<2x3xf16>
  %gelu = graph.gelu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %gelu_default = graph.gelu %x {approximate = "none"} : tensor<4x8xf32> -> tensor<4x8xf32>
  %gelu_tanh = graph.gelu %x {approximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
  %pow = graph.pow %x {exponent = 2.0} : tensor<4x8xf32> -> tensor<4x8xf32>
  %pow_neg = graph.pow %d {exponent = -0.5} : tensor<?x8xf32> -> tensor<?x8xf32>
  %pow_big = graph.pow %x {exponent = 1.5e+20} : tensor<4x8xf32> -> tensor<4x8xf32>
  %pow_inf = graph.pow %x {exponent = -inf} : tensor<4x8xf32> -> tensor<4x8xf32>
  %pow_int = graph.pow %x {exponent = 3} : tensor<4x8xf32> -> tensor<4x8xf32>
  %cast_f16 = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
  %cast_i = graph.cast %i : tensor<4x8xi64> -> tensor<4x8xf32>
  %cast_same = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %tagged = graph.relu %x attributes {kitsune.name = "act"} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// CHECK-LABEL: func.func @binary(
// CHECK-NEXT:    %add = graph.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %sub = graph.sub %a, %c : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %mul = graph.mul %a, %s : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    %div = graph.div %c, %b : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %maximum = graph.maximum %a, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %minimum = graph.minimum %i, %j : tensor<4x8xi64>, tensor<8xi64> -> tensor<4x8xi64>
// CHECK-NEXT:    %add_dyn = graph.add %d, %b : tensor<?x8xf32>, tensor<8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %eq = graph.eq %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %ne = graph.ne %i, %j : tensor<4x8xi64>, tensor<8xi64> -> tensor<4x8xi1>
// CHECK-NEXT:    %lt = graph.lt %a, %c : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %le = graph.le %a, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %gt = graph.gt %a, %s : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xi1>
// CHECK-NEXT:    %ge = graph.ge %m, %m : tensor<4x8xi1>, tensor<4x8xi1> -> tensor<4x8xi1>
// CHECK-NEXT:    %where = graph.where %m, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %where_i = graph.where %m, %i, %j : tensor<4x8xi1>, tensor<4x8xi64>, tensor<8xi64> -> tensor<4x8xi64>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @binary(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>, %i: tensor<4x8xi64>, %j: tensor<8xi64>, %m: tensor<4x8xi1>, %s: tensor<f32>, %d: tensor<?x8xf32>) {
  %add = graph.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %sub = graph.sub %a, %c : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %mul = graph.mul %a, %s : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %div = graph.div %c, %b : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %maximum = graph.maximum %a, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %minimum = graph.minimum %i, %j : tensor<4x8xi64>, tensor<8xi64> -> tensor<4x8xi64>
  %add_dyn = graph.add %d, %b : tensor<?x8xf32>, tensor<8xf32> -> tensor<?x8xf32>
  %eq = graph.eq %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
  %ne = graph.ne %i, %j : tensor<4x8xi64>, tensor<8xi64> -> tensor<4x8xi1>
  %lt = graph.lt %a, %c : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xi1>
  %le = graph.le %a, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xi1>
  %gt = graph.gt %a, %s : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xi1>
  %ge = graph.ge %m, %m : tensor<4x8xi1>, tensor<4x8xi1> -> tensor<4x8xi1>
  %where = graph.where %m, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %where_i = graph.where %m, %i, %j : tensor<4x8xi1>, tensor<4x8xi64>, tensor<8xi64> -> tensor<4x8xi64>
  func.return
}

// CHECK-LABEL: func.func @reductions(
// CHECK-NEXT:    %sum_all = graph.sum %x : tensor<2x4x8xf32> -> tensor<f32>
// CHECK-NEXT:    %sum = graph.sum %x {dims = [1]} : tensor<2x4x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %sum_keep = graph.sum %x {dims = [0, 2], keepdim = true} : tensor<2x4x8xf32> -> tensor<1x4x1xf32>
// CHECK-NEXT:    %mean = graph.mean %x {dims = [-1]} : tensor<2x4x8xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %mean_keep = graph.mean %x {keepdim = true} : tensor<2x4x8xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:    %amax = graph.amax %x {dims = [2], keepdim = true} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
// CHECK-NEXT:    %amin = graph.amin %x {dims = [0]} : tensor<2x4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %prod = graph.prod %x {dims = [1, 2]} : tensor<2x4x8xf32> -> tensor<2xf32>
// CHECK-NEXT:    %sum_dyn = graph.sum %d {dims = [1]} : tensor<?x8xf32> -> tensor<?xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @reductions(%x: tensor<2x4x8xf32>, %d: tensor<?x8xf32>) {
  %sum_all = graph.sum %x : tensor<2x4x8xf32> -> tensor<f32>
  %sum = graph.sum %x {dims = [1]} : tensor<2x4x8xf32> -> tensor<2x8xf32>
  %sum_keep = graph.sum %x {dims = [0, 2], keepdim = true} : tensor<2x4x8xf32> -> tensor<1x4x1xf32>
  %mean = graph.mean %x {dims = [-1]} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %mean_keep = graph.mean %x {keepdim = true} : tensor<2x4x8xf32> -> tensor<1x1x1xf32>
  %amax = graph.amax %x {dims = [2], keepdim = true} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  %amin = graph.amin %x {dims = [0]} : tensor<2x4x8xf32> -> tensor<4x8xf32>
  %prod = graph.prod %x {dims = [1, 2]} : tensor<2x4x8xf32> -> tensor<2xf32>
  %sum_dyn = graph.sum %d {dims = [1]} : tensor<?x8xf32> -> tensor<?xf32>
  func.return
}

// CHECK-LABEL: func.func @normalization(
// CHECK-NEXT:    %softmax = graph.softmax %x : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %softmax_d0 = graph.softmax %x {dim = 0} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %softmax_dyn = graph.softmax %d {dim = 1} : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %log_softmax = graph.log_softmax %x : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %log_softmax_d1 = graph.log_softmax %x {dim = 1} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %ln = graph.layer_norm %x : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %ln_w = graph.layer_norm %x, %w : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %ln_wb = graph.layer_norm %x, %w, %b {eps = 0.001} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %ln_rank2 = graph.layer_norm %x, %w2 {normalized_rank = 2} : tensor<2x4x8xf32>, tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %rms = graph.rms_norm %x : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %rms_w = graph.rms_norm %x, %w {eps = 1.0e-05} : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %rms_rank2 = graph.rms_norm %x {normalized_rank = 2} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %bn = graph.batch_norm %n, %c, %c : tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %bn_w = graph.batch_norm %n, %c, %c, %c : tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %bn_wb = graph.batch_norm %n, %c, %c, %c, %c {eps = 0.001} : tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @normalization(%x: tensor<2x4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>, %w2: tensor<4x8xf32>, %n: tensor<2x3x5x5xf32>, %c: tensor<3xf32>, %d: tensor<?x8xf32>) {
  %softmax = graph.softmax %x : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %softmax_d0 = graph.softmax %x {dim = 0} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %softmax_dyn = graph.softmax %d {dim = 1} : tensor<?x8xf32> -> tensor<?x8xf32>
  %log_softmax = graph.log_softmax %x : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %log_softmax_d1 = graph.log_softmax %x {dim = 1} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %ln = graph.layer_norm %x : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %ln_w = graph.layer_norm %x, %w : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %ln_wb = graph.layer_norm %x, %w, %b {eps = 1.0e-3} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %ln_rank2 = graph.layer_norm %x, %w2 {normalized_rank = 2} : tensor<2x4x8xf32>, tensor<4x8xf32> -> tensor<2x4x8xf32>
  %rms = graph.rms_norm %x : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %rms_w = graph.rms_norm %x, %w {eps = 1.0e-5} : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %rms_rank2 = graph.rms_norm %x {normalized_rank = 2} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %bn = graph.batch_norm %n, %c, %c : tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x5x5xf32>
  %bn_w = graph.batch_norm %n, %c, %c, %c : tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x5x5xf32>
  %bn_wb = graph.batch_norm %n, %c, %c, %c, %c {eps = 0.001} : tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x5x5xf32>
  func.return
}

// CHECK-LABEL: func.func @contractions(
// CHECK-NEXT:    %mm = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %mm_tb = graph.matmul %a, %bt {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %mm_ta = graph.matmul %at, %b {transpose_a = true} : tensor<8x4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %mm_tt = graph.matmul %at, %bt {transpose_a = true, transpose_b = true} : tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %mm_batch = graph.matmul %ba, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    %mm_dyn = graph.matmul %d, %b : tensor<?x8xf32>, tensor<8x16xf32> -> tensor<?x16xf32>
// CHECK-NEXT:    %lin = graph.linear %a, %bt : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %lin_b = graph.linear %ba, %bt, %bias : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @contractions(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bt: tensor<16x8xf32>, %at: tensor<8x4xf32>, %ba: tensor<2x4x8xf32>, %bias: tensor<16xf32>, %d: tensor<?x8xf32>) {
  %mm = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %mm_tb = graph.matmul %a, %bt {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %mm_ta = graph.matmul %at, %b {transpose_a = true} : tensor<8x4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %mm_tt = graph.matmul %at, %bt {transpose_a = true, transpose_b = true} : tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %mm_batch = graph.matmul %ba, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  %mm_dyn = graph.matmul %d, %b : tensor<?x8xf32>, tensor<8x16xf32> -> tensor<?x16xf32>
  %lin = graph.linear %a, %bt : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %lin_b = graph.linear %ba, %bt, %bias : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
  func.return
}

// CHECK-LABEL: func.func @conv(
// CHECK-NEXT:    %conv = graph.conv2d %x, %w : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x6x6xf32>
// CHECK-NEXT:    %conv_b = graph.conv2d %x, %w, %bias {padding = [1, 1]} : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32> -> tensor<1x6x8x8xf32>
// CHECK-NEXT:    %conv_s = graph.conv2d %x, %w {stride = [2, 2], padding = [1, 1], dilation = [2, 2]} : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x3x3xf32>
// CHECK-NEXT:    %conv_g = graph.conv2d %x, %wg, %bias {groups = 2} : tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32> -> tensor<1x6x6x6xf32>
// CHECK-NEXT:    %pool = graph.max_pool2d %x {kernel = [2, 2]} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
// CHECK-NEXT:    %pool_s = graph.max_pool2d %x {kernel = [3, 3], stride = [1, 1], padding = [1, 1]} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    %pool_d = graph.max_pool2d %x {kernel = [2, 2], stride = [2, 2], dilation = [2, 2]} : tensor<1x4x8x8xf32> -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @conv(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %wg: tensor<6x2x3x3xf32>, %bias: tensor<6xf32>) {
  %conv = graph.conv2d %x, %w : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x6x6xf32>
  %conv_b = graph.conv2d %x, %w, %bias {padding = [1, 1]} : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32> -> tensor<1x6x8x8xf32>
  %conv_s = graph.conv2d %x, %w {stride = [2, 2], padding = [1, 1], dilation = [2, 2]} : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x3x3xf32>
  %conv_g = graph.conv2d %x, %wg, %bias {groups = 2} : tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32> -> tensor<1x6x6x6xf32>
  %pool = graph.max_pool2d %x {kernel = [2, 2]} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %pool_s = graph.max_pool2d %x {kernel = [3, 3], stride = [1, 1], padding = [1, 1]} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %pool_d = graph.max_pool2d %x {kernel = [2, 2], stride = [2, 2], dilation = [2, 2]} : tensor<1x4x8x8xf32> -> tensor<1x4x3x3xf32>
  func.return
}

// CHECK-LABEL: func.func @attention(
// CHECK-NEXT:    %att = graph.attention %q, %k, %v : tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x6xf32> -> tensor<2x4x16x6xf32>
// CHECK-NEXT:    %att_s = graph.attention %q, %k, %v {scale = 0.125} : tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x6xf32> -> tensor<2x4x16x6xf32>
// CHECK-NEXT:    %att_gqa = graph.attention %q, %k2, %v2 : tensor<2x4x16x8xf32>, tensor<2x2x32x8xf32>, tensor<2x2x32x8xf32> -> tensor<2x4x16x8xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @attention(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x32x8xf32>, %v: tensor<2x4x32x6xf32>, %k2: tensor<2x2x32x8xf32>, %v2: tensor<2x2x32x8xf32>) {
  %att = graph.attention %q, %k, %v : tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x6xf32> -> tensor<2x4x16x6xf32>
  %att_s = graph.attention %q, %k, %v {scale = 0.125} : tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x6xf32> -> tensor<2x4x16x6xf32>
  %att_gqa = graph.attention %q, %k2, %v2 : tensor<2x4x16x8xf32>, tensor<2x2x32x8xf32>, tensor<2x2x32x8xf32> -> tensor<2x4x16x8xf32>
  func.return
}

// CHECK-LABEL: func.func @gather(
// CHECK-NEXT:    %emb = graph.embedding %w, %i : tensor<10x8xf32>, tensor<4x3xi64> -> tensor<4x3x8xf32>
// CHECK-NEXT:    %emb1 = graph.embedding %w, %i1 : tensor<10x8xf32>, tensor<3xi32> -> tensor<3x8xf32>
// CHECK-NEXT:    %bag = graph.embedding_bag %w, %i : tensor<10x8xf32>, tensor<4x3xi64> -> tensor<4x8xf32>
// CHECK-NEXT:    %bag_mean = graph.embedding_bag %w, %i {mode = "mean"} : tensor<10x8xf32>, tensor<4x3xi64> -> tensor<4x8xf32>
// CHECK-NEXT:    %bag_max = graph.embedding_bag %w, %i {mode = "max"} : tensor<10x8xf32>, tensor<4x3xi64> -> tensor<4x8xf32>
// CHECK-NEXT:    %sel0 = graph.index_select %x, %i1 {dim = 0} : tensor<5x8xf32>, tensor<3xi32> -> tensor<3x8xf32>
// CHECK-NEXT:    %sel1 = graph.index_select %x, %i1 {dim = -1} : tensor<5x8xf32>, tensor<3xi32> -> tensor<5x3xf32>
// CHECK-NEXT:    %gather = graph.gather %x, %gi {dim = 1} : tensor<5x8xf32>, tensor<5x2xi64> -> tensor<5x2xf32>
// CHECK-NEXT:    %iadd = graph.index_add %x, %i1, %src {dim = 1} : tensor<5x8xf32>, tensor<3xi32>, tensor<5x3xf32> -> tensor<5x8xf32>
// CHECK-NEXT:    %iadd_a = graph.index_add %x, %i1, %src {dim = 1, alpha = 0.5} : tensor<5x8xf32>, tensor<3xi32>, tensor<5x3xf32> -> tensor<5x8xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @gather(%w: tensor<10x8xf32>, %i: tensor<4x3xi64>, %i1: tensor<3xi32>, %x: tensor<5x8xf32>, %gi: tensor<5x2xi64>, %src: tensor<5x3xf32>) {
  %emb = graph.embedding %w, %i : tensor<10x8xf32>, tensor<4x3xi64> -> tensor<4x3x8xf32>
  %emb1 = graph.embedding %w, %i1 : tensor<10x8xf32>, tensor<3xi32> -> tensor<3x8xf32>
  %bag = graph.embedding_bag %w, %i : tensor<10x8xf32>, tensor<4x3xi64> -> tensor<4x8xf32>
  %bag_mean = graph.embedding_bag %w, %i {mode = "mean"} : tensor<10x8xf32>, tensor<4x3xi64> -> tensor<4x8xf32>
  %bag_max = graph.embedding_bag %w, %i {mode = "max"} : tensor<10x8xf32>, tensor<4x3xi64> -> tensor<4x8xf32>
  %sel0 = graph.index_select %x, %i1 {dim = 0} : tensor<5x8xf32>, tensor<3xi32> -> tensor<3x8xf32>
  %sel1 = graph.index_select %x, %i1 {dim = -1} : tensor<5x8xf32>, tensor<3xi32> -> tensor<5x3xf32>
  %gather = graph.gather %x, %gi {dim = 1} : tensor<5x8xf32>, tensor<5x2xi64> -> tensor<5x2xf32>
  %iadd = graph.index_add %x, %i1, %src {dim = 1} : tensor<5x8xf32>, tensor<3xi32>, tensor<5x3xf32> -> tensor<5x8xf32>
  %iadd_a = graph.index_add %x, %i1, %src {dim = 1, alpha = 0.5} : tensor<5x8xf32>, tensor<3xi32>, tensor<5x3xf32> -> tensor<5x8xf32>
  func.return
}

// CHECK-LABEL: func.func @layout(
// CHECK-NEXT:    %slice = graph.slice %x {dim = 1, start = 2, end = 6} : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    %slice_step = graph.slice %x {dim = 1, step = 3} : tensor<4x8xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %slice_neg = graph.slice %x {dim = -1, start = -2} : tensor<4x8xf32> -> tensor<4x2xf32>
// CHECK-NEXT:    %slice_i = graph.slice %i {dim = 0, end = 1} : tensor<4x8xi64> -> tensor<1x8xi64>
// CHECK-NEXT:    %slice_dyn = graph.slice %d {dim = 0, start = 1} : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %scatter = graph.slice_scatter %x, %s {dim = 1, end = 8, step = 4} : tensor<4x8xf32>, tensor<4x2xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %cat = graph.concat %x, %y {dim = 1} : tensor<4x8xf32>, tensor<4x5xf32> -> tensor<4x13xf32>
// CHECK-NEXT:    %cat3 = graph.concat %x, %y, %z {dim = -1} : tensor<4x8xf32>, tensor<4x5xf32>, tensor<4x1xf32> -> tensor<4x14xf32>
// CHECK-NEXT:    %cat1 = graph.concat %x {dim = 0} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %cat_dyn = graph.concat %d, %x {dim = 0} : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %p0, %p1 = graph.split %x {dim = 1, sizes = [3, 5]} : tensor<4x8xf32> -> (tensor<4x3xf32>, tensor<4x5xf32>)
// CHECK-NEXT:    %q, %q_1, %q_2 = graph.split %x {dim = 0, sizes = [1, 1, 2]} : tensor<4x8xf32> -> (tensor<1x8xf32>, tensor<1x8xf32>, tensor<2x8xf32>)
// CHECK-NEXT:    %one = graph.split %x {dim = 0, sizes = [4]} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %perm = graph.permute %x {perm = [1, 0]} : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    %perm_i = graph.permute %i {perm = [1, 0]} : tensor<4x8xi64> -> tensor<8x4xi64>
// CHECK-NEXT:    %expand = graph.expand %r {shape = [4, 8]} : tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %expand_lead = graph.expand %z {shape = [2, -1, 8]} : tensor<4x1xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %reshape = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
// CHECK-NEXT:    %reshape_rank3 = graph.reshape %x : tensor<4x8xf32> -> tensor<2x2x8xf32>
// CHECK-NEXT:    %reshape_dyn = graph.reshape %x : tensor<4x8xf32> -> tensor<?x16xf32>
// CHECK-NEXT:    %reshape_from_dyn = graph.reshape %d : tensor<?x8xf32> -> tensor<?xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @layout(%x: tensor<4x8xf32>, %y: tensor<4x5xf32>, %z: tensor<4x1xf32>, %r: tensor<1x8xf32>, %s: tensor<4x2xf32>, %d: tensor<?x8xf32>, %i: tensor<4x8xi64>) {
  %slice = graph.slice %x {dim = 1, start = 2, end = 6} : tensor<4x8xf32> -> tensor<4x4xf32>
  %slice_step = graph.slice %x {dim = 1, step = 3} : tensor<4x8xf32> -> tensor<4x3xf32>
  %slice_neg = graph.slice %x {dim = -1, start = -2} : tensor<4x8xf32> -> tensor<4x2xf32>
  %slice_i = graph.slice %i {dim = 0, end = 1} : tensor<4x8xi64> -> tensor<1x8xi64>
  %slice_dyn = graph.slice %d {dim = 0, start = 1} : tensor<?x8xf32> -> tensor<?x8xf32>
  %scatter = graph.slice_scatter %x, %s {dim = 1, start = 0, end = 8, step = 4} : tensor<4x8xf32>, tensor<4x2xf32> -> tensor<4x8xf32>
  %cat = graph.concat %x, %y {dim = 1} : tensor<4x8xf32>, tensor<4x5xf32> -> tensor<4x13xf32>
  %cat3 = graph.concat %x, %y, %z {dim = -1} : tensor<4x8xf32>, tensor<4x5xf32>, tensor<4x1xf32> -> tensor<4x14xf32>
  %cat1 = graph.concat %x {dim = 0} : tensor<4x8xf32> -> tensor<4x8xf32>
  %cat_dyn = graph.concat %d, %x {dim = 0} : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x8xf32>
  %p0, %p1 = graph.split %x {dim = 1, sizes = [3, 5]} : tensor<4x8xf32> -> (tensor<4x3xf32>, tensor<4x5xf32>)
  %q:3 = graph.split %x {dim = 0, sizes = [1, 1, 2]} : tensor<4x8xf32> -> (tensor<1x8xf32>, tensor<1x8xf32>, tensor<2x8xf32>)
  %one = graph.split %x {dim = 0, sizes = [4]} : tensor<4x8xf32> -> tensor<4x8xf32>
  %perm = graph.permute %x {perm = [1, 0]} : tensor<4x8xf32> -> tensor<8x4xf32>
  %perm_i = graph.permute %i {perm = [1, 0]} : tensor<4x8xi64> -> tensor<8x4xi64>
  %expand = graph.expand %r {shape = [4, 8]} : tensor<1x8xf32> -> tensor<4x8xf32>
  %expand_lead = graph.expand %z {shape = [2, -1, 8]} : tensor<4x1xf32> -> tensor<2x4x8xf32>
  %reshape = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %reshape_rank3 = graph.reshape %x : tensor<4x8xf32> -> tensor<2x2x8xf32>
  %reshape_dyn = graph.reshape %x : tensor<4x8xf32> -> tensor<?x16xf32>
  %reshape_from_dyn = graph.reshape %d : tensor<?x8xf32> -> tensor<?xf32>
  func.return
}

// CHECK-LABEL: func.func @constant(
// CHECK-NEXT:    %splat = graph.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %ints = graph.constant dense<{{\[\[}}1, 2], [3, 4]]> : tensor<2x2xi64>
// CHECK-NEXT:    %scalar = graph.constant dense<-2.500000e+00> : tensor<f32>
// CHECK-NEXT:    %bools = graph.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:    %half = graph.constant dense<5.000000e-01> : tensor<3xf16>
// CHECK-NEXT:    %tagged = graph.constant dense<0> : tensor<i32> attributes {kitsune.name = "zero"}
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @constant() {
  %splat = graph.constant dense<1.0> : tensor<4xf32>
  %ints = graph.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %scalar = graph.constant dense<-2.5> : tensor<f32>
  %bools = graph.constant dense<[true, false]> : tensor<2xi1>
  %half = graph.constant dense<0.5> : tensor<3xf16>
  %tagged = graph.constant dense<0> : tensor<i32> attributes {kitsune.name = "zero"}
  func.return
}

// CHECK-LABEL: func.func @dynamic(
// CHECK-NEXT:    %lin = graph.linear %d, %w : tensor<?x8xf32>, tensor<16x8xf32> -> tensor<?x16xf32>
// CHECK-NEXT:    %ln = graph.layer_norm %d, %v, %v : tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %rms = graph.rms_norm %d : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %mean = graph.mean %d {dims = [0]} : tensor<?x8xf32> -> tensor<8xf32>
// CHECK-NEXT:    %lsm = graph.log_softmax %d : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %emb = graph.embedding %e, %i : tensor<10x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
// CHECK-NEXT:    %sel = graph.index_select %d, %i {dim = 0} : tensor<?x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
// CHECK-NEXT:    %conv = graph.conv2d %img, %k {padding = [1, 1]} : tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<?x4x8x8xf32>
// CHECK-NEXT:    %pool = graph.max_pool2d %img {kernel = [2, 2]} : tensor<?x3x8x8xf32> -> tensor<?x3x4x4xf32>
// CHECK-NEXT:    %att = graph.attention %q, %q, %q : tensor<?x2x4x8xf32>, tensor<?x2x4x8xf32>, tensor<?x2x4x8xf32> -> tensor<?x2x4x8xf32>
// CHECK-NEXT:    %perm = graph.permute %d {perm = [1, 0]} : tensor<?x8xf32> -> tensor<8x?xf32>
// CHECK-NEXT:    %exp = graph.expand %m {shape = [-1, 8]} : tensor<?x1xi1> -> tensor<?x8xi1>
// CHECK-NEXT:    %where = graph.where %exp, %d, %v : tensor<?x8xi1>, tensor<?x8xf32>, tensor<8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %s0, %s1 = graph.split %d {dim = 1, sizes = [2, 6]} : tensor<?x8xf32> -> (tensor<?x2xf32>, tensor<?x6xf32>)
// CHECK-NEXT:    %sc = graph.slice_scatter %d, %s0 {dim = 1, end = 2} : tensor<?x8xf32>, tensor<?x2xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %cmp = graph.gt %d, %v : tensor<?x8xf32>, tensor<8xf32> -> tensor<?x8xi1>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @dynamic(%d: tensor<?x8xf32>, %w: tensor<16x8xf32>, %v: tensor<8xf32>, %e: tensor<10x8xf32>, %i: tensor<?xi64>, %img: tensor<?x3x8x8xf32>, %k: tensor<4x3x3x3xf32>, %q: tensor<?x2x4x8xf32>, %m: tensor<?x1xi1>) {
  %lin = graph.linear %d, %w : tensor<?x8xf32>, tensor<16x8xf32> -> tensor<?x16xf32>
  %ln = graph.layer_norm %d, %v, %v : tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<?x8xf32>
  %rms = graph.rms_norm %d : tensor<?x8xf32> -> tensor<?x8xf32>
  %mean = graph.mean %d {dims = [0]} : tensor<?x8xf32> -> tensor<8xf32>
  %lsm = graph.log_softmax %d : tensor<?x8xf32> -> tensor<?x8xf32>
  %emb = graph.embedding %e, %i : tensor<10x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
  %sel = graph.index_select %d, %i {dim = 0} : tensor<?x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
  %conv = graph.conv2d %img, %k {padding = [1, 1]} : tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<?x4x8x8xf32>
  %pool = graph.max_pool2d %img {kernel = [2, 2]} : tensor<?x3x8x8xf32> -> tensor<?x3x4x4xf32>
  %att = graph.attention %q, %q, %q : tensor<?x2x4x8xf32>, tensor<?x2x4x8xf32>, tensor<?x2x4x8xf32> -> tensor<?x2x4x8xf32>
  %perm = graph.permute %d {perm = [1, 0]} : tensor<?x8xf32> -> tensor<8x?xf32>
  %exp = graph.expand %m {shape = [-1, 8]} : tensor<?x1xi1> -> tensor<?x8xi1>
  %where = graph.where %exp, %d, %v : tensor<?x8xi1>, tensor<?x8xf32>, tensor<8xf32> -> tensor<?x8xf32>
  %s0, %s1 = graph.split %d {dim = 1, sizes = [2, 6]} : tensor<?x8xf32> -> (tensor<?x2xf32>, tensor<?x6xf32>)
  %sc = graph.slice_scatter %d, %s0 {dim = 1, end = 2} : tensor<?x8xf32>, tensor<?x2xf32> -> tensor<?x8xf32>
  %cmp = graph.gt %d, %v : tensor<?x8xf32>, tensor<8xf32> -> tensor<?x8xi1>
  func.return
}

