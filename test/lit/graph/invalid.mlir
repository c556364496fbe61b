// Verifier failures of graph ops: one or more per op category, many for the
// important ops. Each message names what was expected and what was given; ops in
// custom syntax carry their file:line:col (generic-form ops have no location).
// RUN: kitsune-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @relu_result_shape(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.relu' result #0 has type tensor<4x9xf32>, but the operands give shape [4, 8]
  %y = graph.relu %x : tensor<4x8xf32> -> tensor<4x9xf32>
  func.return
}

// -----

func.func @relu_result_rank(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.relu' result #0 has type tensor<32xf32>, but the operands give shape [4, 8]
  %y = graph.relu %x : tensor<4x8xf32> -> tensor<32xf32>
  func.return
}

// -----

func.func @relu_result_dtype(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.relu' result #0 must have element type f32, got tensor<4x8xf16>
  %y = graph.relu %x : tensor<4x8xf32> -> tensor<4x8xf16>
  func.return
}

// -----

func.func @exp_int(%x: tensor<4xi64>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.exp' operand 'x' must have float elements, got tensor<4xi64>
  %y = graph.exp %x : tensor<4xi64> -> tensor<4xi64>
  func.return
}

// -----

func.func @gelu_choice(%x: tensor<4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.gelu' attribute 'approximate' must be one of 'none', 'tanh', got 'fast'
  %y = graph.gelu %x {approximate = "fast"} : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @pow_missing(%x: tensor<4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.pow' needs attribute 'exponent' (float)
  %y = graph.pow %x : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @add_broadcast(%a: tensor<4x8xf32>, %b: tensor<4x7xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.add' shapes [4, 8], [4, 7] do not broadcast (dim 1: sizes [7, 8])
  %y = graph.add %a, %b : tensor<4x8xf32>, tensor<4x7xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @add_mixed(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.add' operands must have one element type: 'a' is f32, 'b' is f16 (insert a graph.cast)
  %y = graph.add %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  func.return
}

// -----

func.func @add_result_broadcast(%a: tensor<4x1xf32>, %b: tensor<8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.add' result #0 has type tensor<4x1xf32>, but the operands give shape [4, 8]
  %y = graph.add %a, %b : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x1xf32>
  func.return
}

// -----

func.func @eq_result_not_i1(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.eq' result must have i1 elements, got tensor<4xf32>
  %y = graph.eq %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @lt_mixed(%a: tensor<4xf32>, %b: tensor<4xi64>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.lt' operands must have one element type, got f32 and i64
  %y = graph.lt %a, %b : tensor<4xf32>, tensor<4xi64> -> tensor<4xi1>
  func.return
}

// -----

func.func @where_cond_float(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.where' operand 'cond' must have bool elements, got tensor<4xf32>
  %y = graph.where %c, %a, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @where_result_dtype(%c: tensor<4xi1>, %a: tensor<4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.where' result element type f16 must match 'a' (f32)
  %y = graph.where %c, %a, %a : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf16>
  func.return
}

// -----

func.func @sum_dim_range(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.sum' dims 2 is out of range for rank 2
  %y = graph.sum %x {dims = [2]} : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @sum_dim_repeat(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.sum' dims [1, -1] repeats a dimension
  %y = graph.sum %x {dims = [1, -1]} : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @sum_keepdim(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.sum' result #0 has type tensor<4xf32>, but the operands give shape [4, 1]
  %y = graph.sum %x {dims = [1], keepdim = true} : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @mean_int(%x: tensor<4x8xi32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.mean' operand 'x' must have float elements, got tensor<4x8xi32>
  %y = graph.mean %x : tensor<4x8xi32> -> tensor<i32>
  func.return
}

// -----

func.func @amax_result(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.amax' result #0 has type tensor<4xf32>, but the operands give shape [8]
  %y = graph.amax %x {dims = [0]} : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @pool_missing_kernel(%x: tensor<1x2x8x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.max_pool2d' needs attribute 'kernel' (ints)
  %y = graph.max_pool2d %x : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>
  func.return
}

// -----

func.func @pool_rank(%x: tensor<2x8x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.max_pool2d' input must be [N, C, H, W], got [2, 8, 8]
  %y = graph.max_pool2d %x {kernel = [2, 2]} : tensor<2x8x8xf32> -> tensor<2x4x4xf32>
  func.return
}

// -----

func.func @pool_padding(%x: tensor<1x2x8x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.max_pool2d' padding [2, 2] must be at most half the kernel [2, 2]
  %y = graph.max_pool2d %x {kernel = [2, 2], padding = [2, 2]} : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>
  func.return
}

// -----

func.func @pool_result(%x: tensor<1x2x8x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.max_pool2d' result #0 has type tensor<1x2x8x8xf32>, but the operands give shape [1, 2, 4, 4]
  %y = graph.max_pool2d %x {kernel = [2, 2]} : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  func.return
}

// -----

func.func @softmax_dim(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.softmax' dim 2 is out of range for rank 2
  %y = graph.softmax %x {dim = 2} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @softmax_neg_dim(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.log_softmax' dim -3 is out of range for rank 2
  %y = graph.log_softmax %x {dim = -3} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @softmax_int(%x: tensor<4x8xi32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.softmax' operand 'x' must have float elements, got tensor<4x8xi32>
  %y = graph.softmax %x : tensor<4x8xi32> -> tensor<4x8xi32>
  func.return
}

// -----

func.func @layer_norm_weight(%x: tensor<4x8xf32>, %w: tensor<4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.layer_norm' weight has shape [4], expected [8]
  %y = graph.layer_norm %x, %w : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @layer_norm_bias(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.layer_norm' bias has shape [4], expected [8]
  %y = graph.layer_norm %x, %w, %b : tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @layer_norm_rank(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.layer_norm' normalized_rank 3 must be between 1 and the rank 2
  %y = graph.layer_norm %x {normalized_rank = 3} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @rms_norm_rank0(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.rms_norm' normalized_rank 0 must be between 1 and the rank 2
  %y = graph.rms_norm %x {normalized_rank = 0} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @rms_norm_weight(%x: tensor<4x8xf32>, %w: tensor<4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.rms_norm' size mismatch for index 'r0': weight dim 0 has size 4 but x dim 1 has size 8
  %y = graph.rms_norm %x, %w : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @batch_norm_rank(%x: tensor<8xf32>, %m: tensor<8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.batch_norm' input must have rank >= 2 (N, C, ...), got [8]
  %y = graph.batch_norm %x, %m, %m : tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @batch_norm_channels(%x: tensor<2x3x4x4xf32>, %m: tensor<4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.batch_norm' size mismatch for index 'c': mean dim 0 has size 4 but x dim 1 has size 3
  %y = graph.batch_norm %x, %m, %m : tensor<2x3x4x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x3x4x4xf32>
  func.return
}

// -----

func.func @matmul_k(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.matmul' size mismatch for index 'k': b dim 0 has size 7 but a dim 1 has size 8
  %y = graph.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @matmul_k_transpose_b(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.matmul' size mismatch for index 'k': b dim 1 has size 16 but a dim 1 has size 8
  %y = graph.matmul %a, %b {transpose_b = true} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @matmul_rank1(%a: tensor<8xf32>, %b: tensor<8x16xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.matmul' operands must have rank >= 2, got [8] and [8, 16]
  %y = graph.matmul %a, %b : tensor<8xf32>, tensor<8x16xf32> -> tensor<16xf32>
  func.return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.matmul' shapes [2], [3] do not broadcast (dim 0: sizes [2, 3])
  %y = graph.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x16xf32> -> tensor<2x4x16xf32>
  func.return
}

// -----

func.func @matmul_result(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.matmul' result #0 has type tensor<16x4xf32>, but the operands give shape [4, 16]
  %y = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<16x4xf32>
  func.return
}

// -----

func.func @matmul_int(%a: tensor<4x8xi32>, %b: tensor<8x16xi32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.matmul' operand 'a' must have float elements, got tensor<4x8xi32>
  %y = graph.matmul %a, %b : tensor<4x8xi32>, tensor<8x16xi32> -> tensor<4x16xi32>
  func.return
}

// -----

func.func @linear_in_features(%x: tensor<4x8xf32>, %w: tensor<16x9xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.linear' size mismatch for index 'k': weight dim 1 has size 9 but x dim 1 has size 8
  %y = graph.linear %x, %w : tensor<4x8xf32>, tensor<16x9xf32> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @linear_weight_rank(%x: tensor<4x8xf32>, %w: tensor<2x16x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.linear' weight must be [out_features, in_features], got [2, 16, 8]
  %y = graph.linear %x, %w : tensor<4x8xf32>, tensor<2x16x8xf32> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @linear_bias_rank(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<1x16xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.linear' bias must be [out_features], got [1, 16]
  %y = graph.linear %x, %w, %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<1x16xf32> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @linear_bias_size(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.linear' bias has 8 elements, weight has 16 out_features
  %y = graph.linear %x, %w, %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x16xf32>
  func.return
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.conv2d' weight has 2 input channels per group, input has 3 channels / 1 groups
  %y = graph.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.conv2d' groups = 3 must divide input channels 4 and output channels 6
  %y = graph.conv2d %x, %w {groups = 3} : tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @conv_group_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.conv2d' weight has 4 input channels per group, input has 4 channels / 2 groups
  %y = graph.conv2d %x, %w {groups = 2} : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @conv_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.conv2d' input must be [N, C, H, W] and weight [F, C/groups, KH, KW], got [3, 8, 8] and [4, 3, 3, 3]
  %y = graph.conv2d %x, %w : tensor<3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<4x6x6xf32>
  func.return
}

// -----

func.func @conv_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.conv2d' stride must have 1 or 2 values, got [1, 2, 3]
  %y = graph.conv2d %x, %w {stride = [1, 2, 3]} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.conv2d' result #0 has type tensor<1x4x6x6xf32>, but the operands give shape [1, 4, 8, 8]
  %y = graph.conv2d %x, %w {padding = [1, 1]} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.conv2d' bias must be [4] (one per output channel), got [3]
  %y = graph.conv2d %x, %w, %b : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32> -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @attention_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x3x8x16xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.attention' query heads 4 must be a multiple of key/value heads 3
  %y = graph.attention %q, %k, %k : tensor<1x4x8x16xf32>, tensor<1x3x8x16xf32>, tensor<1x3x8x16xf32> -> tensor<1x4x8x16xf32>
  func.return
}

// -----

func.func @attention_rank(%q: tensor<4x8x16xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.attention' q, k, v must be [B, H, L, E], got [4, 8, 16], [4, 8, 16], [4, 8, 16]
  %y = graph.attention %q, %q, %q : tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32> -> tensor<4x8x16xf32>
  func.return
}

// -----

func.func @attention_embed(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x32xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.attention' size mismatch for index 'e': k dim 3 has size 32 but q dim 3 has size 16
  %y = graph.attention %q, %k, %k : tensor<1x4x8x16xf32>, tensor<1x4x8x32xf32>, tensor<1x4x8x32xf32> -> tensor<1x4x8x32xf32>
  func.return
}

// -----

func.func @embedding_float_index(%w: tensor<10x8xf32>, %i: tensor<4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.embedding' operand 'indices' must have int elements, got tensor<4xf32>
  %y = graph.embedding %w, %i : tensor<10x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @embedding_weight_rank(%w: tensor<10xf32>, %i: tensor<4xi64>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.embedding' weight must be [num, dim], got [10]
  %y = graph.embedding %w, %i : tensor<10xf32>, tensor<4xi64> -> tensor<4xf32>
  func.return
}

// -----

func.func @embedding_result(%w: tensor<10x8xf32>, %i: tensor<4xi64>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.embedding' result #0 has type tensor<4x10xf32>, but the operands give shape [4, 8]
  %y = graph.embedding %w, %i : tensor<10x8xf32>, tensor<4xi64> -> tensor<4x10xf32>
  func.return
}

// -----

func.func @embedding_bag_mode(%w: tensor<10x8xf32>, %i: tensor<4x2xi64>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.embedding_bag' attribute 'mode' must be one of 'sum', 'mean', 'max', got 'min'
  %y = graph.embedding_bag %w, %i {mode = "min"} : tensor<10x8xf32>, tensor<4x2xi64> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @embedding_bag_rank(%w: tensor<10x8xf32>, %i: tensor<4xi64>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.embedding_bag' weight must be [num, dim] and indices [bags, per_bag], got [10, 8] and [4]
  %y = graph.embedding_bag %w, %i : tensor<10x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @index_select_missing_dim(%x: tensor<5x8xf32>, %i: tensor<3xi64>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.index_select' needs attribute 'dim' (int)
  %y = graph.index_select %x, %i : tensor<5x8xf32>, tensor<3xi64> -> tensor<3x8xf32>
  func.return
}

// -----

func.func @index_select_rank(%x: tensor<5x8xf32>, %i: tensor<3x1xi64>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.index_select' indices must be rank 1, got [3, 1]
  %y = graph.index_select %x, %i {dim = 0} : tensor<5x8xf32>, tensor<3x1xi64> -> tensor<3x8xf32>
  func.return
}

// -----

func.func @index_select_bool_index(%x: tensor<5x8xf32>, %i: tensor<3xi1>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.index_select' operand 'indices' must have int elements, got tensor<3xi1>
  %y = graph.index_select %x, %i {dim = 0} : tensor<5x8xf32>, tensor<3xi1> -> tensor<3x8xf32>
  func.return
}

// -----

func.func @gather_rank(%x: tensor<5x8xf32>, %i: tensor<5xi64>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.gather' indices must have the rank of x (2), got [5]
  %y = graph.gather %x, %i {dim = 1} : tensor<5x8xf32>, tensor<5xi64> -> tensor<5xf32>
  func.return
}

// -----

func.func @gather_dim(%x: tensor<5x8xf32>, %i: tensor<5x2xi64>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.gather' dim 2 is out of range for rank 2
  %y = graph.gather %x, %i {dim = 2} : tensor<5x8xf32>, tensor<5x2xi64> -> tensor<5x2xf32>
  func.return
}

// -----

func.func @gather_result_dtype(%x: tensor<5x8xf32>, %i: tensor<5x2xi64>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.gather' result element type i64 must match 'x' (f32)
  %y = graph.gather %x, %i {dim = 1} : tensor<5x8xf32>, tensor<5x2xi64> -> tensor<5x2xi64>
  func.return
}

// -----

func.func @index_add_source_rank(%x: tensor<5x8xf32>, %i: tensor<3xi64>, %s: tensor<3xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.index_add' source must have the rank of x (2), got [3]
  %y = graph.index_add %x, %i, %s {dim = 0} : tensor<5x8xf32>, tensor<3xi64>, tensor<3xf32> -> tensor<5x8xf32>
  func.return
}

// -----

func.func @index_add_source_size(%x: tensor<5x8xf32>, %i: tensor<3xi64>, %s: tensor<3x7xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.index_add' source has size 7 in dim 1, x has 8
  %y = graph.index_add %x, %i, %s {dim = 0} : tensor<5x8xf32>, tensor<3xi64>, tensor<3x7xf32> -> tensor<5x8xf32>
  func.return
}

// -----

func.func @permute_repeat(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.permute' perm [0, 0] is not a permutation of 0..1
  %y = graph.permute %x {perm = [0, 0]} : tensor<4x8xf32> -> tensor<4x4xf32>
  func.return
}

// -----

func.func @permute_length(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.permute' perm [2, 0, 1] is not a permutation of 0..1
  %y = graph.permute %x {perm = [2, 0, 1]} : tensor<4x8xf32> -> tensor<8x4xf32>
  func.return
}

// -----

func.func @permute_missing(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.permute' needs attribute 'perm' (ints)
  %y = graph.permute %x : tensor<4x8xf32> -> tensor<8x4xf32>
  func.return
}

// -----

func.func @permute_result(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.permute' result #0 has type tensor<4x8xf32>, but the operands give shape [8, 4]
  %y = graph.permute %x {perm = [1, 0]} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.reshape' reshape from [4, 8] (32 elements) to [30] (30 elements)
  %y = graph.reshape %x : tensor<4x8xf32> -> tensor<30xf32>
  func.return
}

// -----

func.func @reshape_two_dyn(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.reshape' cannot reshape [4, 8] to [?, ?]
  %y = graph.reshape %x : tensor<4x8xf32> -> tensor<?x?xf32>
  func.return
}

// -----

func.func @reshape_dyn_indivisible(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.reshape' cannot reshape [4, 8] to [?, 5]
  %y = graph.reshape %x : tensor<4x8xf32> -> tensor<?x5xf32>
  func.return
}

// -----

func.func @reshape_dtype(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.reshape' result element type i32 must match 'x' (f32)
  %y = graph.reshape %x : tensor<4x8xf32> -> tensor<32xi32>
  func.return
}

// -----

func.func @concat_size(%a: tensor<4x8xf32>, %b: tensor<3x5xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.concat' operand #1 has size 3 in dim 0, operand #0 has 4
  %y = graph.concat %a, %b {dim = 1} : tensor<4x8xf32>, tensor<3x5xf32> -> tensor<4x13xf32>
  func.return
}

// -----

func.func @concat_rank(%a: tensor<4x8xf32>, %b: tensor<4x5x1xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.concat' operand #1 has rank 3, operand #0 has rank 2
  %y = graph.concat %a, %b {dim = 1} : tensor<4x8xf32>, tensor<4x5x1xf32> -> tensor<4x13xf32>
  func.return
}

// -----

func.func @concat_dim(%a: tensor<4x8xf32>, %b: tensor<4x5xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.concat' dim 2 is out of range for rank 2
  %y = graph.concat %a, %b {dim = 2} : tensor<4x8xf32>, tensor<4x5xf32> -> tensor<4x13xf32>
  func.return
}

// -----

func.func @concat_result(%a: tensor<4x8xf32>, %b: tensor<4x5xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.concat' result #0 has type tensor<4x12xf32>, but the operands give shape [4, 13]
  %y = graph.concat %a, %b {dim = 1} : tensor<4x8xf32>, tensor<4x5xf32> -> tensor<4x12xf32>
  func.return
}

// -----

func.func @concat_no_operands() {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.concat' needs at least one operand
  %y = graph.concat {dim = 0} : tensor<4x8xf32>
  func.return
}

// -----

func.func @concat_dtype(%a: tensor<4x8xf32>, %b: tensor<4x5xf16>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.concat' result element type f32 must match 'inputs#1' (f16)
  %y = graph.concat %a, %b {dim = 1} : tensor<4x8xf32>, tensor<4x5xf16> -> tensor<4x13xf32>
  func.return
}

// -----

func.func @split_sizes(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.split' sizes [3, 4] add up to 7, dim 1 has size 8
  %y, %z = graph.split %x {dim = 1, sizes = [3, 4]} : tensor<4x8xf32> -> (tensor<4x3xf32>, tensor<4x4xf32>)
  func.return
}

// -----

func.func @split_count(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.split' has 2 results, the attributes give 3
  %y, %z = graph.split %x {dim = 1, sizes = [2, 2, 4]} : tensor<4x8xf32> -> (tensor<4x2xf32>, tensor<4x2xf32>)
  func.return
}

// -----

func.func @split_result(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.split' result #1 has type tensor<4x4xf32>, but the operands give shape [4, 5]
  %y, %z = graph.split %x {dim = 1, sizes = [3, 5]} : tensor<4x8xf32> -> (tensor<4x3xf32>, tensor<4x4xf32>)
  func.return
}

// -----

func.func @split_missing_sizes(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.split' needs attribute 'sizes' (ints)
  %y = graph.split %x {dim = 1} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @expand_size(%x: tensor<2x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.expand' cannot expand dim 0 of size 2 to 4
  %y = graph.expand %x {shape = [4, 8]} : tensor<2x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @expand_fewer(%x: tensor<2x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.expand' shape [8] has fewer dims than the input [2, 8]
  %y = graph.expand %x {shape = [8]} : tensor<2x8xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @expand_lead_neg(%x: tensor<8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.expand' -1 in new leading dim 0
  %y = graph.expand %x {shape = [-1, 8]} : tensor<8xf32> -> tensor<1x8xf32>
  func.return
}

// -----

func.func @slice_step(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.slice' step must be >= 1, got 0
  %y = graph.slice %x {dim = 1, step = 0} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @slice_result(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.slice' result #0 has type tensor<4x5xf32>, but the operands give shape [4, 4]
  %y = graph.slice %x {dim = 1, start = 2, end = 6} : tensor<4x8xf32> -> tensor<4x5xf32>
  func.return
}

// -----

func.func @slice_dim(%x: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.slice' dim -3 is out of range for rank 2
  %y = graph.slice %x {dim = -3} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @slice_scatter_source(%x: tensor<4x8xf32>, %s: tensor<4x3xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.slice_scatter' source has size 3 along dim 1, the slice has 4
  %y = graph.slice_scatter %x, %s {dim = 1, start = 0, end = 4} : tensor<4x8xf32>, tensor<4x3xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @index_add_indices(%x: tensor<5x8xf32>, %i: tensor<3xi64>, %s: tensor<4x8xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.index_add' source has size 4 along dim 0, indices has 3
  %y = graph.index_add %x, %i, %s {dim = 0} : tensor<5x8xf32>, tensor<3xi64>, tensor<4x8xf32> -> tensor<5x8xf32>
  func.return
}

// -----

func.func @slice_scatter_other_dim(%x: tensor<4x8xf32>, %s: tensor<3x4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.slice_scatter' source has size 3 in dim 0, x has 4
  %y = graph.slice_scatter %x, %s {dim = 1, end = 4} : tensor<4x8xf32>, tensor<3x4xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @slice_scatter_rank(%x: tensor<4x8xf32>, %s: tensor<4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.slice_scatter' source must have the rank of x (2), got [4]
  %y = graph.slice_scatter %x, %s {dim = 1, end = 4} : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @slice_scatter_dtype(%x: tensor<4x8xf32>, %s: tensor<4x4xf32>) {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: 'graph.slice_scatter' result element type i32 must match 'x' (f32)
  %y = graph.slice_scatter %x, %s {dim = 1, end = 4} : tensor<4x8xf32>, tensor<4x4xf32> -> tensor<4x8xi32>
  func.return
}

// -----

func.func @matmul_bool_attr(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // CHECK: {{^}}'graph.matmul' attribute 'transpose_a' must be a bool (true/false)
  %y = "graph.matmul"(%a, %b) <{transpose_a = 1 : i64}> : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return
}

// -----

func.func @softmax_int_attr(%x: tensor<4x8xf32>) {
  // CHECK: {{^}}'graph.softmax' attribute 'dim' must be int, got "last"
  %y = "graph.softmax"(%x) <{dim = "last"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @permute_ints_attr(%x: tensor<4x8xf32>) {
  // CHECK: {{^}}'graph.permute' attribute 'perm' must be ints, got [1 : i64, 0 : i64]
  %y = "graph.permute"(%x) <{perm = [1, 0]}> : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

func.func @pow_float_attr(%x: tensor<4xf32>) {
  // CHECK: {{^}}'graph.pow' attribute 'exponent' must be float, got 2 : i64
  %y = "graph.pow"(%x) <{exponent = 2 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @gelu_str_attr(%x: tensor<4xf32>) {
  // CHECK: {{^}}'graph.gelu' attribute 'approximate' must be str, got 1 : i64
  %y = "graph.gelu"(%x) <{approximate = 1 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @relu_not_tensor(%x: f32) {
  // CHECK: {{^}}operand 'x' at position 0 does not verify:
  // CHECK-NEXT: {{^}}f32 should be of base attribute tensor
  %y = "graph.relu"(%x) : (f32) -> f32
  func.return
}

// -----

func.func @split_no_results(%x: tensor<4x8xf32>) {
  // CHECK: {{^}}'graph.split' has 0 results, the attributes give 1
  "graph.split"(%x) <{dim = 1 : i64, sizes = array<i64: 8>}> : (tensor<4x8xf32>) -> ()
  func.return
}

// -----

func.func @layer_norm_bias_without_weight(%x: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // CHECK: {{^}}'graph.layer_norm' optional operand 'bias' is given without 'weight' (optional operands are positional)
  %y = "graph.layer_norm"(%x, %b) <{operandSegmentSizes = array<i32: 1, 0, 1>}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @batch_norm_bias_without_weight(%x: tensor<2x3x4x4xf32>, %m: tensor<3xf32>) {
  // CHECK: {{^}}'graph.batch_norm' optional operand 'bias' is given without 'weight' (optional operands are positional)
  %y = "graph.batch_norm"(%x, %m, %m, %m) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>}> : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  func.return
}

// -----

func.func @constant_type() {
  // CHECK: {{^}}'graph.constant' value type tensor<4xf32> does not match result type tensor<3xf32>
  %c = "graph.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<3xf32>
  func.return
}

// -----

func.func @constant_missing_value() {
  // CHECK: {{^}}'graph.constant' needs a dense elements value
  %c = "graph.constant"() : () -> tensor<3xf32>
  func.return
}

// -----

func.func @constant_not_dense() {
  // CHECK: {{^}}'graph.constant' needs a dense elements value
  %c = "graph.constant"() <{value = 1.0 : f32}> : () -> tensor<f32>
  func.return
}
