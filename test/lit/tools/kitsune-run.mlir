// kitsune-run prints one line per output: shape, dtype and checksums. The same
// program run before and after graph-decompose gives the same shapes and dtypes
// (both RUN lines check the same lines), softmax row sums are exact (= rows), and
// the saved outputs agree numerically.
// RUN: kitsune-run %s | filecheck %s
// RUN: kitsune-run %s -p graph-decompose | filecheck %s
// RUN: kitsune-run %s -p 'graph-canonicalize,graph-decompose{ops=softmax,linear}' | filecheck %s
// RUN: kitsune-run %s --save %t.ref.npz && kitsune-run %s -p graph-decompose --save %t.dec.npz
// RUN: %python -c "import numpy as np, sys; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]); assert sorted(a) == sorted(b) and len(a) == 11, sorted(a); bad = [k for k in a if a[k].shape != b[k].shape or not np.allclose(a[k], b[k], rtol=1e-4, atol=1e-5)]; print(bad); sys.exit(1 if bad else 0)" %t.ref.npz %t.dec.npz
// RUN: kitsune-run %s --fn rows | filecheck %s --check-prefix=ROWS
// RUN: kitsune-run %s --fn rows -p graph-decompose | filecheck %s --check-prefix=ROWS
// RUN: kitsune-run %s --fn rows --seed 7 | filecheck %s --check-prefix=ROWS
// RUN: kitsune-run %s --fn ints --index-high 10 | filecheck %s --check-prefix=INTS
// RUN: not kitsune-run %s --fn nope 2>&1 | filecheck %s --check-prefix=NOFN
// RUN: not kitsune-run %S/../graph/errors/shape-mismatch.mlir 2>&1 | filecheck %s --check-prefix=VERIFY

// CHECK:      output #0: shape [4, 8] dtype float32 sum 4 abs-sum 4
// CHECK-NEXT: output #1: shape [4, 8] dtype float32 sum
// CHECK-NEXT: output #2: shape [4, 8] dtype float32 sum
// CHECK-NEXT: output #3: shape [4, 8] dtype float32 sum
// CHECK-NEXT: output #4: shape [2, 8, 2, 2] dtype float32 sum
// CHECK-NEXT: output #5: shape [4, 8] dtype float32 sum
// CHECK-NEXT: output #6: shape [4, 8] dtype float32 sum
// CHECK-NEXT: output #7: shape [4, 8] dtype float32 sum
// CHECK-NEXT: output #8: shape [4, 3] dtype float32 sum
// CHECK-NEXT: output #9: shape [4] dtype float32 sum
// CHECK-NEXT: output #10: shape [1, 4, 4, 8] dtype float32 sum
// CHECK-NOT:  output

// ROWS:      output #0: shape [5, 16] dtype float32 sum 5 abs-sum 5
// ROWS-NOT:  output

// INTS:      output #0: shape [3, 2, 4] dtype float32 sum
// INTS-NEXT: output #1: shape [3, 2] dtype bool sum 6 abs-sum 6
// INTS-NEXT: output #2: shape [3, 2] dtype int64 sum
// INTS-NOT:  output

// NOFN: kitsune-run: error: InterpretError: no function @nope in the module (functions: @main, @rows, @ints)

// VERIFY: kitsune-run: error: {{.*}}shape-mismatch.mlir:9:3: 'graph.matmul' size mismatch for index 'k'
// VERIFY-NOT: Traceback

func.func @main(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>, %lw: tensor<3x8xf32>, %lb: tensor<3xf32>, %n: tensor<2x8x2x2xf32>, %q: tensor<1x4x4x8xf32>, %kv: tensor<1x2x5x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x8x2x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<1x4x4x8xf32>) {
  %softmax = graph.softmax %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %log_softmax = graph.log_softmax %x {dim = 0} : tensor<4x8xf32> -> tensor<4x8xf32>
  %layer_norm = graph.layer_norm %x, %w, %b : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %rms_norm = graph.rms_norm %x, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %var = graph.abs %w : tensor<8xf32> -> tensor<8xf32>
  %batch_norm = graph.batch_norm %n, %b, %var, %w, %b : tensor<2x8x2x2xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8x2x2xf32>
  %gelu = graph.gelu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %gelu_tanh = graph.gelu %x {approximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
  %silu = graph.silu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %linear = graph.linear %x, %lw, %lb : tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %mean = graph.mean %x {dims = [1]} : tensor<4x8xf32> -> tensor<4xf32>
  %attention = graph.attention %q, %kv, %kv : tensor<1x4x4x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x4x4x8xf32>
  func.return %softmax, %log_softmax, %layer_norm, %rms_norm, %batch_norm, %gelu, %gelu_tanh, %silu, %linear, %mean, %attention : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x8x2x2xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<1x4x4x8xf32>
}

func.func @rows(%x: tensor<5x16xf32>) -> tensor<5x16xf32> {
  %y = graph.softmax %x {dim = 1} : tensor<5x16xf32> -> tensor<5x16xf32>
  func.return %y : tensor<5x16xf32>
}

func.func @ints(%w: tensor<10x4xf32>, %i: tensor<3x2xi64>) -> (tensor<3x2x4xf32>, tensor<3x2xi1>, tensor<3x2xi64>) {
  %e = graph.embedding %w, %i : tensor<10x4xf32>, tensor<3x2xi64> -> tensor<3x2x4xf32>
  %c = graph.eq %i, %i : tensor<3x2xi64>, tensor<3x2xi64> -> tensor<3x2xi1>
  %s = graph.add %i, %i : tensor<3x2xi64>, tensor<3x2xi64> -> tensor<3x2xi64>
  func.return %e, %c, %s : tensor<3x2x4xf32>, tensor<3x2xi1>, tensor<3x2xi64>
}
