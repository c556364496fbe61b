// graph-canonicalize: one case per pattern, and cases where a pattern must not fire.
// RUN: kitsune-opt %s --split-input-file -p graph-canonicalize | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p graph-canonicalize | kitsune-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @fold_permute_lhs(
// CHECK-NEXT:    %y = graph.matmul %a, %b {transpose_a = true} : tensor<8x4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @fold_permute_lhs(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %t = graph.permute %a {perm = [1, 0]} : tensor<8x4xf32> -> tensor<4x8xf32>
  %y = graph.matmul %t, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @fold_permute_rhs(
// CHECK-NEXT:    %y = graph.matmul %a, %w {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @fold_permute_rhs(%a: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %t = graph.permute %w {perm = [1, 0]} : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = graph.matmul %a, %t : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @fold_permute_both_batched(
// CHECK-NEXT:    %y = graph.matmul %a, %b {transpose_a = true, transpose_b = true} : tensor<2x8x4xf32>, tensor<2x16x8xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<2x4x16xf32>
// CHECK-NEXT:  }
func.func @fold_permute_both_batched(%a: tensor<2x8x4xf32>, %b: tensor<2x16x8xf32>) -> tensor<2x4x16xf32> {
  %ta = graph.permute %a {perm = [0, 2, 1]} : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
  %tb = graph.permute %b {perm = [0, 2, 1]} : tensor<2x16x8xf32> -> tensor<2x8x16xf32>
  %y = graph.matmul %ta, %tb : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  func.return %y : tensor<2x4x16xf32>
}

// -----

// CHECK-LABEL: func.func @fold_permute_flips_flag(
// CHECK-NEXT:    %y = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @fold_permute_flips_flag(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %t = graph.permute %b {perm = [1, 0]} : tensor<8x16xf32> -> tensor<16x8xf32>
  %y = graph.matmul %a, %t {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @fold_permute_shared(
// CHECK-NEXT:    %t = graph.permute %w {perm = [1, 0]} : tensor<16x8xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %y = graph.matmul %a, %w {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y, %t : tensor<4x16xf32>, tensor<8x16xf32>
// CHECK-NEXT:  }
func.func @fold_permute_shared(%a: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> (tensor<4x16xf32>, tensor<8x16xf32>) {
  %t = graph.permute %w {perm = [1, 0]} : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = graph.matmul %a, %t : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  func.return %y, %t : tensor<4x16xf32>, tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @no_fold_permute_not_last_two(
// CHECK-NEXT:    %t = graph.permute %a {perm = [1, 0, 2]} : tensor<4x2x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %y = graph.matmul %t, %b : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<2x4x16xf32>
// CHECK-NEXT:  }
func.func @no_fold_permute_not_last_two(%a: tensor<4x2x8xf32>, %b: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  %t = graph.permute %a {perm = [1, 0, 2]} : tensor<4x2x8xf32> -> tensor<2x4x8xf32>
  %y = graph.matmul %t, %b : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  func.return %y : tensor<2x4x16xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_bias_to_linear(
// CHECK-NEXT:    %y = graph.linear %x, %w, %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @matmul_bias_to_linear(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = graph.matmul %x, %w {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %y = graph.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @bias_first_to_linear(
// CHECK-NEXT:    %y = graph.linear %x, %w, %b : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<2x4x16xf32>
// CHECK-NEXT:  }
func.func @bias_first_to_linear(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %m = graph.matmul %x, %w {transpose_b = true} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  %y = graph.add %b, %m : tensor<16xf32>, tensor<2x4x16xf32> -> tensor<2x4x16xf32>
  func.return %y : tensor<2x4x16xf32>
}

// -----

// CHECK-LABEL: func.func @t_addmm_to_linear(
// CHECK-NEXT:    %y = graph.linear %x, %w, %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @t_addmm_to_linear(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %t = graph.permute %w {perm = [1, 0]} : tensor<16x8xf32> -> tensor<8x16xf32>
  %m = graph.matmul %x, %t : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %y = graph.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @no_linear_bias_rank2(
// CHECK-NEXT:    %m = graph.matmul %x, %w {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %y = graph.add %m, %b : tensor<4x16xf32>, tensor<1x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @no_linear_bias_rank2(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<1x16xf32>) -> tensor<4x16xf32> {
  %m = graph.matmul %x, %w {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %y = graph.add %m, %b : tensor<4x16xf32>, tensor<1x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @no_linear_bias_broadcast_size(
// CHECK-NEXT:    %m = graph.matmul %x, %w {transpose_b = true} : tensor<4x1xf32>, tensor<1x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %y = graph.add %m, %b : tensor<4x1xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @no_linear_bias_broadcast_size(%x: tensor<4x1xf32>, %w: tensor<1x1xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = graph.matmul %x, %w {transpose_b = true} : tensor<4x1xf32>, tensor<1x1xf32> -> tensor<4x1xf32>
  %y = graph.add %m, %b : tensor<4x1xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @no_linear_two_uses(
// CHECK-NEXT:    %m = graph.matmul %x, %w {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %y = graph.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y, %m : tensor<4x16xf32>, tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @no_linear_two_uses(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %m = graph.matmul %x, %w {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %y = graph.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %y, %m : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @no_linear_without_transpose_b(
// CHECK-NEXT:    %m = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %y = graph.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @no_linear_without_transpose_b(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %y = graph.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @no_linear_transpose_a(
// CHECK-NEXT:    %m = graph.matmul %x, %w {transpose_a = true, transpose_b = true} : tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %y = graph.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @no_linear_transpose_a(%x: tensor<8x4xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = graph.matmul %x, %w {transpose_a = true, transpose_b = true} : tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %y = graph.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @no_linear_batched_weight(
// CHECK-NEXT:    %m = graph.matmul %x, %w {transpose_b = true} : tensor<2x4x8xf32>, tensor<2x16x8xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    %y = graph.add %m, %b : tensor<2x4x16xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<2x4x16xf32>
// CHECK-NEXT:  }
func.func @no_linear_batched_weight(%x: tensor<2x4x8xf32>, %w: tensor<2x16x8xf32>, %b: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %m = graph.matmul %x, %w {transpose_b = true} : tensor<2x4x8xf32>, tensor<2x16x8xf32> -> tensor<2x4x16xf32>
  %y = graph.add %m, %b : tensor<2x4x16xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
  func.return %y : tensor<2x4x16xf32>
}

// -----

// CHECK-LABEL: func.func @no_linear_sub(
// CHECK-NEXT:    %m = graph.matmul %x, %w {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %y = graph.sub %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @no_linear_sub(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = graph.matmul %x, %w {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %y = graph.sub %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @merge_reshapes(
// CHECK-NEXT:    %b = graph.reshape %x : tensor<4x8xf32> -> tensor<2x16xf32>
// CHECK-NEXT:    func.return %b : tensor<2x16xf32>
// CHECK-NEXT:  }
func.func @merge_reshapes(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
  %a = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %b = graph.reshape %a : tensor<32xf32> -> tensor<2x16xf32>
  func.return %b : tensor<2x16xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_round_trip(
// CHECK-NEXT:    func.return %x : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @reshape_round_trip(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %b = graph.reshape %a : tensor<32xf32> -> tensor<4x8xf32>
  func.return %b : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_shared(
// CHECK-NEXT:    %a = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
// CHECK-NEXT:    %b = graph.reshape %x : tensor<4x8xf32> -> tensor<2x16xf32>
// CHECK-NEXT:    func.return %a, %b : tensor<32xf32>, tensor<2x16xf32>
// CHECK-NEXT:  }
func.func @reshape_shared(%x: tensor<4x8xf32>) -> (tensor<32xf32>, tensor<2x16xf32>) {
  %a = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %b = graph.reshape %a : tensor<32xf32> -> tensor<2x16xf32>
  func.return %a, %b : tensor<32xf32>, tensor<2x16xf32>
}

// -----

// CHECK-LABEL: func.func @compose_permutes(
// CHECK-NEXT:    %b = graph.permute %x {perm = [1, 0, 2]} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
// CHECK-NEXT:    func.return %b : tensor<3x2x4xf32>
// CHECK-NEXT:  }
func.func @compose_permutes(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %a = graph.permute %x {perm = [2, 0, 1]} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %b = graph.permute %a {perm = [2, 1, 0]} : tensor<4x2x3xf32> -> tensor<3x2x4xf32>
  func.return %b : tensor<3x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @compose_permutes_to_identity(
// CHECK-NEXT:    func.return %x : tensor<2x3x4xf32>
// CHECK-NEXT:  }
func.func @compose_permutes_to_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %a = graph.permute %x {perm = [1, 2, 0]} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %b = graph.permute %a {perm = [2, 0, 1]} : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  func.return %b : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @drop_identities(
// CHECK-NEXT:    func.return %x : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @drop_identities(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = graph.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %b = graph.expand %a {shape = [4, 8]} : tensor<4x8xf32> -> tensor<4x8xf32>
  %c = graph.cast %b : tensor<4x8xf32> -> tensor<4x8xf32>
  %d = graph.permute %c {perm = [0, 1]} : tensor<4x8xf32> -> tensor<4x8xf32>
  %e = graph.slice %d {dim = 1} : tensor<4x8xf32> -> tensor<4x8xf32>
  %f = graph.slice %e {dim = 0, start = 0, end = 4} : tensor<4x8xf32> -> tensor<4x8xf32>
  %g = graph.expand %f {shape = [-1, -1]} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %g : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @keep_non_identities(
// CHECK-NEXT:    %a = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK-NEXT:    %b = graph.slice %d {dim = 0, start = 1} : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:    %c = graph.expand %s {shape = [4, 8]} : tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %e = graph.permute %x {perm = [1, 0]} : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    %f = graph.slice %x {dim = 1, step = 2} : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    func.return %a, %b, %c, %e, %f : tensor<4x8xf16>, tensor<?x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x4xf32>
// CHECK-NEXT:  }
func.func @keep_non_identities(%x: tensor<4x8xf32>, %d: tensor<?x8xf32>, %s: tensor<1x8xf32>) -> (tensor<4x8xf16>, tensor<?x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x4xf32>) {
  %a = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
  %b = graph.slice %d {dim = 0, start = 1} : tensor<?x8xf32> -> tensor<?x8xf32>
  %c = graph.expand %s {shape = [4, 8]} : tensor<1x8xf32> -> tensor<4x8xf32>
  %e = graph.permute %x {perm = [1, 0]} : tensor<4x8xf32> -> tensor<8x4xf32>
  %f = graph.slice %x {dim = 1, step = 2} : tensor<4x8xf32> -> tensor<4x4xf32>
  func.return %a, %b, %c, %e, %f : tensor<4x8xf16>, tensor<?x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @dead_code(
// CHECK-NEXT:    %y = graph.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }
func.func @dead_code(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %dead = graph.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %dead2 = graph.softmax %dead : tensor<4x8xf32> -> tensor<4x8xf32>
  %k = graph.constant dense<1.0> : tensor<4xf32>
  %y = graph.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @unchanged(
// CHECK-NEXT:    %m = graph.linear %x, %w : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %y = graph.softmax %m : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %y : tensor<4x16xf32>
// CHECK-NEXT:  }
func.func @unchanged(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %m = graph.linear %x, %w : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %y = graph.softmax %m : tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// transformers' Conv1D (view(-1, K), addmm, view back): the reshapes move out of the way and cancel.
// CHECK-LABEL: func.func @conv1d_reshapes_cancel(
// CHECK-NEXT:    %m = graph.matmul %x, %w : tensor<2x3x8xf32>, tensor<8x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:    %a = graph.add %m, %b : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:    func.return %a : tensor<2x3x16xf32>
// CHECK-NEXT:  }
func.func @conv1d_reshapes_cancel(%x: tensor<2x3x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<2x3x16xf32> {
  %f = graph.reshape %x : tensor<2x3x8xf32> -> tensor<6x8xf32>
  %m = graph.matmul %f, %w : tensor<6x8xf32>, tensor<8x16xf32> -> tensor<6x16xf32>
  %a = graph.add %m, %b : tensor<6x16xf32>, tensor<16xf32> -> tensor<6x16xf32>
  %y = graph.reshape %a : tensor<6x16xf32> -> tensor<2x3x16xf32>
  func.return %y : tensor<2x3x16xf32>
}

// -----

// The lhs reshape merges the last dims (heads): it stays; the unflatten rises above the bias and the matmul.
// CHECK-LABEL: func.func @unflatten_rises_to_the_matmul(
// CHECK-NEXT:    %[[U:.*]] = graph.reshape %x : tensor<2x3x4x2xf32> -> tensor<2x3x8xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.matmul %[[U]], %w : tensor<2x3x8xf32>, tensor<8x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %b, %[[M]] : tensor<16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:    %y = graph.add %[[A]], %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:    func.return %y : tensor<2x3x16xf32>
func.func @unflatten_rises_to_the_matmul(%x: tensor<2x3x4x2xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>, %r: tensor<2x3x16xf32>) -> tensor<2x3x16xf32> {
  %f = graph.reshape %x : tensor<2x3x4x2xf32> -> tensor<6x8xf32>
  %m = graph.matmul %f, %w : tensor<6x8xf32>, tensor<8x16xf32> -> tensor<6x16xf32>
  %a = graph.add %b, %m : tensor<16xf32>, tensor<6x16xf32> -> tensor<6x16xf32>
  %u = graph.reshape %a : tensor<6x16xf32> -> tensor<2x3x16xf32>
  %y = graph.add %u, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  func.return %y : tensor<2x3x16xf32>
}

// -----

// No move: a same-shape second operand, a matmul with another use, a same-rank regrouping.
// CHECK-LABEL: func.func @reshapes_that_stay(
// CHECK-NEXT:    %f = graph.reshape %x : tensor<2x3x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT:    %s = graph.add %f, %z
// CHECK-NEXT:    %m = graph.matmul %z, %w
// CHECK-NEXT:    %u = graph.reshape %m
// CHECK-NEXT:    %g = graph.reshape %x : tensor<2x3x8xf32> -> tensor<3x2x8xf32>
// CHECK-NEXT:    %n = graph.neg %g
// CHECK-NEXT:    func.return %s, %u, %m, %n
func.func @reshapes_that_stay(%x: tensor<2x3x8xf32>, %z: tensor<6x8xf32>, %w: tensor<8x16xf32>) -> (tensor<6x8xf32>, tensor<2x3x16xf32>, tensor<6x16xf32>, tensor<3x2x8xf32>) {
  %f = graph.reshape %x : tensor<2x3x8xf32> -> tensor<6x8xf32>
  %s = graph.add %f, %z : tensor<6x8xf32>, tensor<6x8xf32> -> tensor<6x8xf32>
  %m = graph.matmul %z, %w : tensor<6x8xf32>, tensor<8x16xf32> -> tensor<6x16xf32>
  %u = graph.reshape %m : tensor<6x16xf32> -> tensor<2x3x16xf32>
  %g = graph.reshape %x : tensor<2x3x8xf32> -> tensor<3x2x8xf32>
  %n = graph.neg %g : tensor<3x2x8xf32> -> tensor<3x2x8xf32>
  func.return %s, %u, %m, %n : tensor<6x8xf32>, tensor<2x3x16xf32>, tensor<6x16xf32>, tensor<3x2x8xf32>
}

// -----

// A one-operand elementwise op of a concat moves into the parts (their producers take it as an epilogue); a cast
// changes the parts' element type too. Not when the concat has another use, or for a two-operand op.
// CHECK-LABEL: func.func @unary_over_concat(
// CHECK-NEXT:    %{{.*}} = graph.relu %a : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %{{.*}} = graph.relu %b : tensor<2x5x4xf32> -> tensor<2x5x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.concat %{{.*}}, %{{.*}} {dim = 1} : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x8x4xf32>
// CHECK-NEXT:    %{{.*}} = graph.cast %a : tensor<2x3x4xf32> -> tensor<2x3x4xbf16>
// CHECK-NEXT:    %{{.*}} = graph.cast %b : tensor<2x5x4xf32> -> tensor<2x5x4xbf16>
// CHECK-NEXT:    %[[Z:.*]] = graph.concat %{{.*}}, %{{.*}} {dim = 1} : tensor<2x3x4xbf16>, tensor<2x5x4xbf16> -> tensor<2x8x4xbf16>
// CHECK-NEXT:    %s = graph.concat %a, %b {dim = 1}
// CHECK-NEXT:    %t = graph.neg %s
// CHECK-NEXT:    %u = graph.add %s, %s
// CHECK-NEXT:    func.return %[[Y]], %[[Z]], %t, %u
func.func @unary_over_concat(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xbf16>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %c = graph.concat %a, %b {dim = 1} : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x8x4xf32>
  %y = graph.relu %c : tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  %d = graph.concat %a, %b {dim = 1} : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x8x4xf32>
  %z = graph.cast %d : tensor<2x8x4xf32> -> tensor<2x8x4xbf16>
  %s = graph.concat %a, %b {dim = 1} : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x8x4xf32>
  %t = graph.neg %s : tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  %u = graph.add %s, %s : tensor<2x8x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  func.return %y, %z, %t, %u : tensor<2x8x4xf32>, tensor<2x8x4xbf16>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
}
