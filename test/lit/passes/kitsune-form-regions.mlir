// RUN: kitsune-opt %s --split-input-file -p kitsune-form-regions | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions{chain_bytes=1048576}' | filecheck %s --check-prefix=CHAIN
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions{prologue=false}' | filecheck %s --check-prefix=NOPRO
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions{epilogue=false}' | filecheck %s --check-prefix=SINGLE
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions{tile_m=32 tile_n=64 costs=true}' | filecheck %s --check-prefix=TILES
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions{remarks=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions{small_k=0}' | filecheck %s --check-prefix=SK0

// GPT MLP: linear -> gelu -> linear. The gelu is the first GEMM's epilogue; the second GEMM
// reads the hidden activation by row bands. With chain_bytes, the hidden row band
// (128 x 512 x 4 B = 256 KiB) fits and the chain becomes one task.

// CHECK-LABEL: func.func @gpt_mlp
// CHECK: %[[G:.*]] = dataflow.graph (%x, %w1, %b1, %w2, %b2)
// CHECK: %[[T0:.*]] = dataflow.task "linear_0" contraction (%{{.*}}, %{{.*}}, %{{.*}}) tile [128, 128] : (tensor<256x128xf32>, tensor<512x128xf32>, tensor<512xf32>) -> tensor<256x512xf32> {
// CHECK-NEXT: ^{{.*}}(%{{.*}}: tensor<256x128xf32>, %{{.*}}: tensor<512x128xf32>, %{{.*}}: tensor<512xf32>):
// CHECK-NEXT: graph.linear
// CHECK-NEXT: graph.gelu
// CHECK-NEXT: dataflow.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[C0:.*]] = dataflow.channel %[[T0]] {relation = "rows"} : tensor<256x512xf32>
// CHECK-NEXT: %[[T1:.*]] = dataflow.task "linear_1" contraction (%[[C0]], %{{.*}}, %{{.*}}) tile [128, 128]
// CHECK-NEXT: ^
// CHECK-NEXT: graph.linear
// CHECK-NEXT: dataflow.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[C1:.*]] = dataflow.channel %[[T1]] {relation = "all"} : tensor<256x128xf32>
// CHECK-NEXT: dataflow.yield %[[C1]]
// CHECK: func.return %[[G]]

// CHAIN-LABEL: func.func @gpt_mlp
// CHAIN: dataflow.task "linear_0" contraction (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) tile [128, 128]
// CHAIN-NEXT: ^
// CHAIN-NEXT: graph.linear
// CHAIN-NEXT: graph.gelu
// CHAIN-NEXT: graph.linear
// CHAIN-NEXT: dataflow.yield
// CHAIN-NOT: dataflow.task

// SINGLE-LABEL: func.func @gpt_mlp
// SINGLE: dataflow.task "linear_0" contraction
// SINGLE: dataflow.channel %{{.*}} {relation = "tile"} : tensor<256x512xf32>
// SINGLE: dataflow.task "gelu_1" elementwise
// SINGLE: dataflow.task "linear_2" contraction

// TILES-LABEL: func.func @gpt_mlp
// TILES: dataflow.task "linear_0" contraction (%{{.*}}, %{{.*}}, %{{.*}}) tile [32, 64] attributes {est_flops = {{[0-9]+}} : i64, est_bytes = {{[0-9]+}} : i64, est_us = {{.*}} : f64}

// REMARK: kitsune-form-regions: task "linear_0" (contraction, 2 op(s), tile [128, 128], grid [2, 4], est {{.*}} us): linear (contraction anchor); gelu (elementwise); gelu: epilogue
// REMARK: kitsune-form-regions: task "linear_1" (contraction, 1 op(s), tile [128, 128], grid [2, 1], est {{.*}} us): linear (contraction anchor)
func.func @gpt_mlp(%x: tensor<256x128xf32>, %w1: tensor<512x128xf32>, %b1: tensor<512xf32>, %w2: tensor<128x512xf32>, %b2: tensor<128xf32>) -> tensor<256x128xf32> {
  %h = graph.linear %x, %w1, %b1 : tensor<256x128xf32>, tensor<512x128xf32>, tensor<512xf32> -> tensor<256x512xf32>
  %g = graph.gelu %h : tensor<256x512xf32> -> tensor<256x512xf32>
  %y = graph.linear %g, %w2, %b2 : tensor<256x512xf32>, tensor<128x512xf32>, tensor<128xf32> -> tensor<256x128xf32>
  func.return %y : tensor<256x128xf32>
}

// -----
// A decomposed softmax: max, subtract, exp, sum, divide become one row-band task.

// CHECK-LABEL: func.func @softmax
// CHECK: dataflow.task "amax_0" reduction (%{{.*}}) tile [128, 1000] : (tensor<512x1000xf32>) -> tensor<512x1000xf32> {
// CHECK-NEXT: ^
// CHECK-NEXT: graph.amax
// CHECK-NEXT: graph.sub
// CHECK-NEXT: graph.exp
// CHECK-NEXT: graph.sum
// CHECK-NEXT: graph.div
// CHECK-NEXT: dataflow.yield
// CHECK-NOT: dataflow.task

// CHAIN-LABEL: func.func @softmax
// SINGLE-LABEL: func.func @softmax
// SINGLE: dataflow.task "amax_0" reduction (%{{.*}}) tile [128, 1] : (tensor<512x1000xf32>) -> tensor<512x1xf32>
// SINGLE: %[[M:.*]] = dataflow.channel %{{.*}} {relation = "rows"} : tensor<512x1xf32>
// SINGLE: dataflow.task "sub_1" elementwise (%{{.*}}, %[[M]]) tile [128, 128]

// REMARK: task "amax_0" (reduction, 5 op(s), tile [128, 1000], grid [4, 1], est {{.*}}): amax (row-wise reduction); sub (elementwise); sub: reads row statistics; exp (elementwise); exp: elementwise chain; sum (row-wise reduction); sum: row chain; div (elementwise); div: elementwise chain
func.func @softmax(%x: tensor<512x1000xf32>) -> tensor<512x1000xf32> {
  %m = graph.amax %x {dims = [1], keepdim = true} : tensor<512x1000xf32> -> tensor<512x1xf32>
  %s = graph.sub %x, %m : tensor<512x1000xf32>, tensor<512x1xf32> -> tensor<512x1000xf32>
  %e = graph.exp %s : tensor<512x1000xf32> -> tensor<512x1000xf32>
  %z = graph.sum %e {dims = [1], keepdim = true} : tensor<512x1000xf32> -> tensor<512x1xf32>
  %y = graph.div %e, %z : tensor<512x1000xf32>, tensor<512x1xf32> -> tensor<512x1000xf32>
  func.return %y : tensor<512x1000xf32>
}

// -----
// RMSNorm feeding a linear: the cost model fuses the norm as the GEMM's prologue (the
// recompute per column tile is cheaper than the round trip); prologue=false keeps two tasks
// with a row-band channel between them.

// CHECK-LABEL: func.func @rms_linear
// CHECK: dataflow.task "linear_0" contraction (%{{.*}}, %{{.*}}, %{{.*}}) tile [16, 128] : (tensor<16x256xf32>, tensor<256xf32>, tensor<512x256xf32>) -> tensor<16x512xf32> {
// CHECK-NEXT: ^
// CHECK-NEXT: graph.rms_norm
// CHECK-NEXT: graph.linear
// CHECK-NEXT: dataflow.yield
// CHECK-NOT: dataflow.task

// NOPRO-LABEL: func.func @rms_linear
// NOPRO: %[[N:.*]] = dataflow.task "rms_norm_0" reduction (%{{.*}}, %{{.*}}) tile [16, 256]
// NOPRO: %[[C:.*]] = dataflow.channel %[[N]] {relation = "rows"} : tensor<16x256xf32>
// NOPRO: dataflow.task "linear_1" contraction (%[[C]], %{{.*}}) tile [16, 128]

// REMARK: task "linear_0" (contraction, 2 op(s), {{.*}}): rms_norm (row-wise reduction); linear (contraction anchor); norm prologue (cost model: fused {{.*}} us incl. recompute over 4 column tiles < separate {{.*}} us)
func.func @rms_linear(%x: tensor<16x256xf32>, %g: tensor<256xf32>, %w: tensor<512x256xf32>) -> tensor<16x512xf32> {
  %n = graph.rms_norm %x, %g : tensor<16x256xf32>, tensor<256xf32> -> tensor<16x256xf32>
  %y = graph.linear %n, %w : tensor<16x256xf32>, tensor<512x256xf32> -> tensor<16x512xf32>
  func.return %y : tensor<16x512xf32>
}

// -----
// Two independent branches stay separate tasks (they can run concurrently); the product
// joins the first branch as an epilogue and reads the second tile by tile.

// CHECK-LABEL: func.func @branches
// CHECK: %[[B:.*]] = dataflow.task "linear_0" contraction (%{{.*}}, %{{.*}}) tile [64, 128] : (tensor<64x32xf32>, tensor<256x32xf32>) -> tensor<64x256xf32> {
// CHECK-NEXT: ^
// CHECK-NEXT: graph.linear
// CHECK-NEXT: graph.sigmoid
// CHECK-NEXT: dataflow.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[C:.*]] = dataflow.channel %[[B]] {relation = "tile"} : tensor<64x256xf32>
// CHECK-NEXT: %[[A:.*]] = dataflow.task "linear_1" contraction (%{{.*}}, %{{.*}}, %[[C]]) tile [64, 128]
// CHECK-NEXT: ^
// CHECK-NEXT: graph.linear
// CHECK-NEXT: graph.relu
// CHECK-NEXT: graph.mul
// CHECK-NEXT: dataflow.yield
func.func @branches(%x: tensor<64x32xf32>, %wa: tensor<256x32xf32>, %wb: tensor<256x32xf32>) -> tensor<64x256xf32> {
  %a = graph.linear %x, %wa : tensor<64x32xf32>, tensor<256x32xf32> -> tensor<64x256xf32>
  %ra = graph.relu %a : tensor<64x256xf32> -> tensor<64x256xf32>
  %b = graph.linear %x, %wb : tensor<64x32xf32>, tensor<256x32xf32> -> tensor<64x256xf32>
  %sb = graph.sigmoid %b : tensor<64x256xf32> -> tensor<64x256xf32>
  %y = graph.mul %ra, %sb : tensor<64x256xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  func.return %y : tensor<64x256xf32>
}

// -----
// convert-graph-to-dataflow: one task per op (the unfused baseline), same channel rules.

// RUN: kitsune-opt %s --split-input-file -p convert-graph-to-dataflow | filecheck %s --check-prefix=CONVERT
// CONVERT-LABEL: func.func @bias_relu
// CONVERT: %[[T0:.*]] = dataflow.task "linear_0" contraction (%{{.*}}, %{{.*}}, %{{.*}}) tile [8, 16]
// CONVERT: %[[C0:.*]] = dataflow.channel %[[T0]] {relation = "tile"} : tensor<8x16xf32>
// CONVERT: dataflow.task "relu_1" elementwise (%[[C0]]) tile [8, 16]
func.func @bias_relu(%x: tensor<8x4xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %h = graph.linear %x, %w, %b : tensor<8x4xf32>, tensor<16x4xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %y = graph.relu %h : tensor<8x16xf32> -> tensor<8x16xf32>
  func.return %y : tensor<8x16xf32>
}

// -----
// DLRM's bottom layers: a linear of 13 features (at most small_k = 16 reduction steps) into 320 columns, read
// as the next linear's row operand, joins it as a prologue (its dot recomputed inside each K step of the next);
// small_k=0 and prologue=false keep two tasks. 24 features stay apart (@wide_k), and so does an intermediate of
// at most 256 columns (@chain_width: the chain rule's to fuse, here off: two layers).

// CHECK-LABEL: func.func @small_k
// CHECK: dataflow.task "linear_0" contraction (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) tile [64, 64] : (tensor<64x13xf32>, tensor<320x13xf32>, tensor<320xf32>, tensor<64x320xf32>, tensor<64xf32>) -> tensor<64x64xf32> {
// CHECK-NEXT: ^
// CHECK-NEXT: graph.linear
// CHECK-NEXT: graph.relu
// CHECK-NEXT: graph.linear
// CHECK-NEXT: dataflow.yield
// CHECK-NOT: dataflow.task
// SK0-LABEL: func.func @small_k
// SK0: dataflow.task "linear_0" contraction
// SK0: dataflow.task "linear_1" contraction
// NOPRO-LABEL: func.func @small_k
// NOPRO: dataflow.task "linear_0" contraction
// NOPRO: dataflow.task "linear_1" contraction
// REMARK: task "linear_0" (contraction, 3 op(s), {{.*}}): linear (contraction anchor); relu (elementwise); relu: epilogue; linear (contraction anchor); small-K contraction prologue (cost model: fused {{.*}} us incl. recompute over 1 column tiles < separate {{.*}} us)
func.func @small_k(%x: tensor<64x13xf32>, %w0: tensor<320x13xf32>, %b0: tensor<320xf32>, %w1: tensor<64x320xf32>, %b1: tensor<64xf32>) -> tensor<64x64xf32> {
  %h = graph.linear %x, %w0, %b0 : tensor<64x13xf32>, tensor<320x13xf32>, tensor<320xf32> -> tensor<64x320xf32>
  %r = graph.relu %h : tensor<64x320xf32> -> tensor<64x320xf32>
  %y = graph.linear %r, %w1, %b1 : tensor<64x320xf32>, tensor<64x320xf32>, tensor<64xf32> -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}

// -----
// CHECK-LABEL: func.func @wide_k
// CHECK: dataflow.task "linear_0" contraction
// CHECK: dataflow.task "linear_1" contraction
func.func @wide_k(%x: tensor<64x24xf32>, %w0: tensor<320x24xf32>, %w1: tensor<64x320xf32>) -> tensor<64x64xf32> {
  %h = graph.linear %x, %w0 : tensor<64x24xf32>, tensor<320x24xf32> -> tensor<64x320xf32>
  %y = graph.linear %h, %w1 : tensor<64x320xf32>, tensor<64x320xf32> -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}

// -----
// CHECK-LABEL: func.func @chain_width
// CHECK: dataflow.task "linear_0" contraction
// CHECK: dataflow.task "linear_1" contraction
func.func @chain_width(%x: tensor<64x13xf32>, %w0: tensor<256x13xf32>, %w1: tensor<64x256xf32>) -> tensor<64x64xf32> {
  %h = graph.linear %x, %w0 : tensor<64x13xf32>, tensor<256x13xf32> -> tensor<64x256xf32>
  %y = graph.linear %h, %w1 : tensor<64x256xf32>, tensor<64x256xf32> -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}
