// kitsune-choose-schedules: a template per task from the roles of its anchor's index variables, the config's
// tile on the task, reductions split in the kernel (a config field), not replicated.
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-choose-schedules{db=false}' | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-choose-schedules{db=false},kitsune-split-reduction' | filecheck %s --check-prefix=SPLIT

// gemm: many rows (M = 1024 > 16), a GELU epilogue; the tile is the config's BM x BN; the heuristic default is
// the Gluon form of the cost model's tile (128 x 256, pipelined: GLUON = 1; a long K).
// CHECK-LABEL: func.func @gemm(
// CHECK: dataflow.task "linear_0" contraction ({{.*}}) tile [128, [[BN:[0-9]+]]] attributes {template = "gemm", config = {{{.*}}BM = 128 : i64, BN = [[BN]] : i64, BK = 64 : i64, GROUP_M = 8 : i64, SPLIT = 1 : i64, GLUON = 1 : i64}, schedule = "heuristic: roles M=d0:1024 N=n:4096 K=k:4096"}
// CHECK: graph.gelu
func.func @gemm(%x: tensor<1024x4096xbf16>, %w: tensor<4096x4096xbf16>, %b: tensor<4096xbf16>) -> tensor<1024x4096xbf16> {
  %h = graph.linear %x, %w, %b : tensor<1024x4096xbf16>, tensor<4096x4096xbf16>, tensor<4096xbf16> -> tensor<1024x4096xbf16>
  %g = graph.gelu %h : tensor<1024x4096xbf16> -> tensor<1024x4096xbf16>
  func.return %g : tensor<1024x4096xbf16>
}

// -----

// Few tiles for 132 SMs and a long K: the heuristic splits K in the kernel; split-reduction then leaves the
// task alone (one task, no partial / combine tasks).
// CHECK-LABEL: func.func @gemm_split(
// CHECK: dataflow.task "linear_0" contraction ({{.*}}) tile [{{[0-9]+}}, {{[0-9]+}}] attributes {template = "gemm", config = {{{.*}}SPLIT = {{[2-8]}} : i64}
// SPLIT-LABEL: func.func @gemm_split(
// SPLIT-NOT: partial
// SPLIT: dataflow.task "linear_0" contraction
// SPLIT-NOT: dataflow.task
func.func @gemm_split(%x: tensor<128x16384xbf16>, %w: tensor<1024x16384xbf16>) -> tensor<128x1024xbf16> {
  %h = graph.linear %x, %w : tensor<128x16384xbf16>, tensor<1024x16384xbf16> -> tensor<128x1024xbf16>
  func.return %h : tensor<128x1024xbf16>
}

// -----

// gemv: one row (decode); all M rows in the tile, BN columns of the weight; one program per work item
// (PER_ITEM: 512 tiles of 16 columns are more than the resident programs).
// CHECK-LABEL: func.func @gemv(
// SPLIT-LABEL: func.func @gemv(
// CHECK: dataflow.task "linear_0" contraction ({{.*}}) tile [1, 1, [[BN:[0-9]+]]] attributes {template = "gemv", config = {{{.*}}BN = [[BN]] : i64, BK = {{[0-9]+}} : i64, SPLIT = {{[0-9]+}} : i64, DOT = 0 : i64, PER_ITEM = 1 : i64}, schedule = "heuristic: roles M=d0*d1:1 N=n:8192 K=k:2048"}
func.func @gemv(%x: tensor<1x1x2048xbf16>, %w: tensor<8192x2048xbf16>) -> tensor<1x1x8192xbf16> {
  %h = graph.linear %x, %w : tensor<1x1x2048xbf16>, tensor<8192x2048xbf16> -> tensor<1x1x8192xbf16>
  func.return %h : tensor<1x1x8192xbf16>
}

// -----

// A batched product (bmm) reads as M/N/K plus a batch role: gemm with a unit batch tile.
// CHECK-LABEL: func.func @bmm(
// CHECK: dataflow.task "matmul_0" contraction ({{.*}}) tile [1, {{[0-9]+}}, {{[0-9]+}}] attributes {template = "gemm", {{.*}}schedule = "heuristic: roles M=m:512 N=n:256 K=k:128 batch=b0:16"}
func.func @bmm(%a: tensor<16x512x128xbf16>, %b: tensor<16x128x256xbf16>) -> tensor<16x512x256xbf16> {
  %c = graph.matmul %a, %b : tensor<16x512x128xbf16>, tensor<16x128x256xbf16> -> tensor<16x512x256xbf16>
  func.return %c : tensor<16x512x256xbf16>
}

// -----

// No reduction: pointwise (the evaluator's shell with the task's tile).
// CHECK-LABEL: func.func @pointwise(
// CHECK: dataflow.task "relu_0" elementwise ({{.*}}) tile [{{[0-9]+}}, {{[0-9]+}}] attributes {template = "pointwise"
func.func @pointwise(%x: tensor<256x512xf32>) -> tensor<256x512xf32> {
  %y = graph.relu %x : tensor<256x512xf32> -> tensor<256x512xf32>
  func.return %y : tensor<256x512xf32>
}

// -----

// A convolution (roles M = n, oh, ow; N = f; K = c; window kh, kw): the conv template, implicit GEMM with
// M = output pixels. BM = 64 pixels covers a whole 8 x 8 image, so the tile is one image by all 16 channels
// (the codegen flattens oh, ow into one lane axis). Two work items, less than a wave: AHEAD (an input block
// read as single-element gathers would be loaded a step ahead; none here: f32 runs of 3 are 12 bytes).
// CHECK-LABEL: func.func @conv(
// CHECK: dataflow.task "conv2d_0" contraction ({{.*}}) tile [1, 16, 8, 8] attributes {template = "conv", config = {warps = 4 : i64, stages = 4 : i64, BF = 16 : i64, BM = 64 : i64, BK = 64 : i64, AHEAD = 1 : i64}, schedule = "heuristic: roles M=n:2 N=f:16 K=c:8 window=oh*ow*kh*kw:576: implicit GEMM, M = output pixels"}
func.func @conv(%x: tensor<2x8x10x10xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<2x16x8x8xf32> {
  %y = graph.conv2d %x, %w {stride = [1, 1], padding = [0, 0], dilation = [1, 1], groups = 1} : tensor<2x8x10x10xf32>, tensor<16x8x3x3xf32> -> tensor<2x16x8x8xf32>
  func.return %y : tensor<2x16x8x8xf32>
}

// -----

// Nine output pixels in all: fewer than the 16 rows of an mma, so no conv template; the evaluator, and why.
// CHECK-LABEL: func.func @tiny_conv(
// CHECK: dataflow.task "conv2d_0" contraction ({{.*}}) tile [1, 1, 3, 3] attributes {template = "generic", schedule = "roles {{.*}}window=oh*ow*kh*kw{{.*}}: no template yet for this anchor, the evaluator runs it"}
func.func @tiny_conv(%x: tensor<1x8x5x5xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x3x3xf32> {
  %y = graph.conv2d %x, %w {stride = [1, 1], padding = [0, 0], dilation = [1, 1], groups = 1} : tensor<1x8x5x5xf32>, tensor<16x8x3x3xf32> -> tensor<1x16x3x3xf32>
  func.return %y : tensor<1x16x3x3xf32>
}

// -----

// An embedding bag (gather role, 20 rows per bag): form-regions' tile [128, 64] gives 16 programs for 132
// SMs; the generic tile is halved to 16 rows (128 programs), no further: a gather keeps at least 16384
// element-steps per program (16 x 64 x 20 = 20480; 8 rows would be 10240).
// CHECK-LABEL: func.func @bag(
// CHECK: dataflow.task "embedding_bag_0" gather ({{.*}}) tile [16, 64] attributes {template = "generic", schedule = "roles gather=b*l:40960 P=e:64: no template yet
func.func @bag(%w: tensor<100000x64xbf16>, %i: tensor<2048x20xi64>) -> tensor<2048x64xbf16> {
  %y = graph.embedding_bag %w, %i {mode = "sum"} : tensor<100000x64xbf16>, tensor<2048x20xi64> -> tensor<2048x64xbf16>
  func.return %y : tensor<2048x64xbf16>
}

// -----

// chain: three weight GEMMs on 32768 rows (256 row tiles of 128 >= 132 SMs), intermediates 256 wide: one chain task (form-regions),
// the chain template in its TMA form (Hopper, [n, k] weights of bf16): BM 128, a ring of 4 weight chunks (and the register
// form's SEG 64 / PREFETCH 2 where the kernel cannot take it); the tile spans the row.
// CHECK-LABEL: func.func @chain(
// CHECK: dataflow.task "linear_0" contraction ({{.*}}) tile [128, 16] attributes {template = "chain", config = {warps = 8 : i64, stages = 1 : i64, BM = 128 : i64, SEG = 64 : i64, PREFETCH = 2 : i64, TMA = 1 : i64, RING = 4 : i64}, schedule = "heuristic: chain of 3 weight GEMMs on 32768 rows (widths 256-256-16), intermediates in shared memory, weights by TMA"}
// CHECK-COUNT-3: graph.linear
// CHECK-NOT: dataflow.task
func.func @chain(%x: tensor<32768x64xbf16>, %w0: tensor<256x64xbf16>, %w1: tensor<256x256xbf16>, %w2: tensor<16x256xbf16>) -> tensor<32768x16xbf16> {
  %h0 = graph.linear %x, %w0 : tensor<32768x64xbf16>, tensor<256x64xbf16> -> tensor<32768x256xbf16>
  %a0 = graph.relu %h0 : tensor<32768x256xbf16> -> tensor<32768x256xbf16>
  %h1 = graph.linear %a0, %w1 : tensor<32768x256xbf16>, tensor<256x256xbf16> -> tensor<32768x256xbf16>
  %a1 = graph.relu %h1 : tensor<32768x256xbf16> -> tensor<32768x256xbf16>
  %y = graph.linear %a1, %w2 : tensor<32768x256xbf16>, tensor<16x256xbf16> -> tensor<32768x16xbf16>
  func.return %y : tensor<32768x16xbf16>
}

// -----

// The same chain with [k, n] weights (matmul): the TMA form streams [n, k] weights, so the register form (TMA 0).
// CHECK-LABEL: func.func @chain_kn(
// CHECK: dataflow.task "matmul_0" contraction ({{.*}}) tile [128, 16] attributes {template = "chain", config = {warps = 8 : i64, stages = 1 : i64, BM = 128 : i64, SEG = 64 : i64, PREFETCH = 2 : i64, TMA = 0 : i64, RING = 4 : i64}, schedule = "heuristic: chain of 3 weight GEMMs on 32768 rows (widths 256-256-16), intermediates in registers"}
func.func @chain_kn(%x: tensor<32768x64xbf16>, %w0: tensor<64x256xbf16>, %w1: tensor<256x256xbf16>, %w2: tensor<256x16xbf16>) -> tensor<32768x16xbf16> {
  %h0 = graph.matmul %x, %w0 : tensor<32768x64xbf16>, tensor<64x256xbf16> -> tensor<32768x256xbf16>
  %a0 = graph.relu %h0 : tensor<32768x256xbf16> -> tensor<32768x256xbf16>
  %h1 = graph.matmul %a0, %w1 : tensor<32768x256xbf16>, tensor<256x256xbf16> -> tensor<32768x256xbf16>
  %a1 = graph.relu %h1 : tensor<32768x256xbf16> -> tensor<32768x256xbf16>
  %y = graph.matmul %a1, %w2 : tensor<32768x256xbf16>, tensor<256x16xbf16> -> tensor<32768x16xbf16>
  func.return %y : tensor<32768x16xbf16>
}

// -----

// The same chain on 2048 rows (too few tiles for a chain to fill the GPU): one gemm task per layer.
// CHECK-LABEL: func.func @chain_few_rows(
// CHECK: dataflow.task "linear_0" contraction ({{.*}}) tile {{.*}} attributes {template = "gemm"
// CHECK: dataflow.task "linear_1" contraction ({{.*}}) tile {{.*}} attributes {template = "gemm"
func.func @chain_few_rows(%x: tensor<2048x64xbf16>, %w0: tensor<256x64xbf16>, %w1: tensor<256x256xbf16>) -> tensor<2048x256xbf16> {
  %h0 = graph.linear %x, %w0 : tensor<2048x64xbf16>, tensor<256x64xbf16> -> tensor<2048x256xbf16>
  %a0 = graph.relu %h0 : tensor<2048x256xbf16> -> tensor<2048x256xbf16>
  %y = graph.linear %a0, %w1 : tensor<2048x256xbf16>, tensor<256x256xbf16> -> tensor<2048x256xbf16>
  func.return %y : tensor<2048x256xbf16>
}

// -----

// A LayerNorm over rows of 128 after the GEMM (bias, ReLU between): the gemm template with the norm in its
// epilogue, its tile spanning the row (BN = 128, 64 rows on 4 warps by default), the problem keyed by the row.
// A norm over rows of 192 (not a power of two: no tile spans it exactly) stays on the evaluator.
// CHECK-LABEL: func.func @gemm_norm(
// CHECK: dataflow.task "linear_0" contraction ({{.*}}) tile [64, 128] attributes {template = "gemm", config = {warps = 4 : i64, stages = 4 : i64, BM = 64 : i64, BN = 128 : i64, BK = 64 : i64, GROUP_M = 8 : i64, SPLIT = 1 : i64}, schedule = "heuristic: roles M=d0:60000 N=n:128 K=k:128, a norm over rows of 128 in the epilogue"}
// CHECK: graph.layer_norm
func.func @gemm_norm(%x: tensor<60000x128xbf16>, %w: tensor<128x128xbf16>, %b: tensor<128xbf16>, %g: tensor<128xbf16>, %c: tensor<128xbf16>) -> tensor<60000x128xbf16> {
  %h = graph.linear %x, %w, %b : tensor<60000x128xbf16>, tensor<128x128xbf16>, tensor<128xbf16> -> tensor<60000x128xbf16>
  %r = graph.relu %h : tensor<60000x128xbf16> -> tensor<60000x128xbf16>
  %n = graph.layer_norm %r, %g, %c : tensor<60000x128xbf16>, tensor<128xbf16>, tensor<128xbf16> -> tensor<60000x128xbf16>
  func.return %n : tensor<60000x128xbf16>
}

// -----

// CHECK-LABEL: func.func @gemm_norm_192(
// CHECK: dataflow.task "linear_0" contraction ({{.*}}) tile [{{[0-9]+}}, 192] attributes {template = "generic"
// CHECK: graph.layer_norm
func.func @gemm_norm_192(%x: tensor<4096x128xbf16>, %w: tensor<192x128xbf16>, %g: tensor<192xbf16>, %c: tensor<192xbf16>) -> tensor<4096x192xbf16> {
  %h = graph.linear %x, %w : tensor<4096x128xbf16>, tensor<192x128xbf16> -> tensor<4096x192xbf16>
  %n = graph.layer_norm %h, %g, %c : tensor<4096x192xbf16>, tensor<192xbf16>, tensor<192xbf16> -> tensor<4096x192xbf16>
  func.return %n : tensor<4096x192xbf16>
}

// -----

// A GEMM whose epilogue adds rows gathered by index (a graph network's projected endpoints,
// kitsune-project-gathers): the GEMM is the anchor (gemm template), the gathers load in its epilogue.
// CHECK-LABEL: func.func @gemm_gathered_epilogue(
// CHECK: dataflow.task "linear_0" contraction ({{.*}}) tile [{{[0-9]+}}, 128] attributes {template = "gemm"{{.*}}schedule = "heuristic: roles M=d0:60000 N=n:128 K=k:128"}
// CHECK: graph.index_select
// CHECK: graph.index_select
// CHECK-NOT: dataflow.task
func.func @gemm_gathered_epilogue(%e: tensor<60000x128xbf16>, %w: tensor<128x128xbf16>, %p: tensor<10000x128xbf16>, %q: tensor<10000x128xbf16>, %src: tensor<60000xi64>, %dst: tensor<60000xi64>) -> tensor<60000x128xbf16> {
  %h = graph.linear %e, %w : tensor<60000x128xbf16>, tensor<128x128xbf16> -> tensor<60000x128xbf16>
  %ps = graph.index_select %p, %src {dim = 0} : tensor<10000x128xbf16>, tensor<60000xi64> -> tensor<60000x128xbf16>
  %qd = graph.index_select %q, %dst {dim = 0} : tensor<10000x128xbf16>, tensor<60000xi64> -> tensor<60000x128xbf16>
  %a = graph.add %h, %ps : tensor<60000x128xbf16>, tensor<60000x128xbf16> -> tensor<60000x128xbf16>
  %s = graph.add %a, %qd : tensor<60000x128xbf16>, tensor<60000x128xbf16> -> tensor<60000x128xbf16>
  %r = graph.relu %s : tensor<60000x128xbf16> -> tensor<60000x128xbf16>
  func.return %r : tensor<60000x128xbf16>
}

// -----

// A depthwise convolution (one input channel an output: every reduction variable but the window's kh, kw of
// extent one; the column window dense): the depthwise template; a 7 x 7 window: one warp, bands of 8 whole output
// rows (56 rows > 32: 64 strips of 8 outputs, a row's 7 in 8 lanes); its BatchNorm epilogue in the task.
// CHECK-LABEL: func.func @depthwise(
// CHECK: dataflow.task "conv2d{{[a-z_0-9]*}}" contraction ({{.*}}) tile [1, 1, 8, 56] attributes {template = "depthwise", config = {warps = 1 : i64, stages = 1 : i64, BH = 8 : i64, BC = 1 : i64}, schedule = "heuristic: depthwise window 7x7: strips of a row in registers"}
// CHECK: graph.batch_norm
func.func @depthwise(%x: tensor<2x8x56x56xbf16>, %w: tensor<8x1x7x7xbf16>, %b: tensor<8xbf16>, %m: tensor<8xbf16>, %v: tensor<8xbf16>, %g: tensor<8xbf16>, %be: tensor<8xbf16>) -> tensor<2x8x56x56xbf16> {
  %y = graph.conv2d %x, %w, %b {padding = [3, 3], groups = 8} : tensor<2x8x56x56xbf16>, tensor<8x1x7x7xbf16>, tensor<8xbf16> -> tensor<2x8x56x56xbf16>
  %z = graph.batch_norm %y, %m, %v, %g, %be {eps = 1.0e-05} : tensor<2x8x56x56xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16> -> tensor<2x8x56x56xbf16>
  func.return %z : tensor<2x8x56x56xbf16>
}

// -----

// Small images, a 3 x 3 window: whole images of enough channels to make 16 rows (7 x 7: two channels a tile),
// two strips a lane (2 warps).
// CHECK-LABEL: func.func @depthwise_small(
// CHECK: dataflow.task "conv2d_0" contraction ({{.*}}) tile [1, 2, 7, 7] attributes {template = "depthwise", config = {warps = 2 : i64, stages = 1 : i64, BH = 7 : i64, BC = 2 : i64}
func.func @depthwise_small(%x: tensor<4x32x7x7xbf16>, %w: tensor<32x1x3x3xbf16>) -> tensor<4x32x7x7xbf16> {
  %y = graph.conv2d %x, %w {padding = [1, 1], groups = 32} : tensor<4x32x7x7xbf16>, tensor<32x1x3x3xbf16> -> tensor<4x32x7x7xbf16>
  func.return %y : tensor<4x32x7x7xbf16>
}

// -----

// Not depthwise: two input channels a group (a grouped convolution's K), and a dilated column window (a strip's
// outputs would not read adjacent inputs).
// CHECK-LABEL: func.func @not_depthwise(
// CHECK: dataflow.task "conv2d_0" contraction ({{.*}}) tile [{{.*}}] attributes {template = "generic"
// CHECK: dataflow.task "conv2d_1" contraction ({{.*}}) tile [{{.*}}] attributes {template = "generic"
func.func @not_depthwise(%x: tensor<2x8x16x16xbf16>, %w: tensor<4x2x3x3xbf16>, %w2: tensor<8x1x3x3xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x8x16x16xbf16>) {
  %y = graph.conv2d %x, %w {padding = [1, 1], groups = 4} : tensor<2x8x16x16xbf16>, tensor<4x2x3x3xbf16> -> tensor<2x4x16x16xbf16>
  %z = graph.conv2d %x, %w2 {padding = [1, 2], dilation = [1, 2], groups = 8} : tensor<2x8x16x16xbf16>, tensor<8x1x3x3xbf16> -> tensor<2x8x16x16xbf16>
  func.return %y, %z : tensor<2x4x16x16xbf16>, tensor<2x8x16x16xbf16>
}

// -----

// Strided (MobileNet's downsampling 3 x 3): still depthwise, each strip of outputs reading adjacent input vectors.
// CHECK-LABEL: func.func @depthwise_strided(
// CHECK: dataflow.task "conv2d_0" contraction ({{.*}}) tile [1, 2, 8, 8] attributes {template = "depthwise"
func.func @depthwise_strided(%x: tensor<2x8x16x16xbf16>, %w: tensor<8x1x3x3xbf16>) -> tensor<2x8x8x8xbf16> {
  %y = graph.conv2d %x, %w {padding = [1, 1], stride = [2, 2], groups = 8} : tensor<2x8x16x16xbf16>, tensor<8x1x3x3xbf16> -> tensor<2x8x8x8xbf16>
  func.return %y : tensor<2x8x8x8xbf16>
}

// -----

// A pointwise task reading a [pixels, channels] tensor permuted to [n, c, h, w]: rows of the result by 64
// channels (both its stores and that input's loads move whole sectors), not whole channel images.
// CHECK-LABEL: func.func @transposed_read(
// CHECK: dataflow.task "{{[a-z_0-9]+}}" elementwise ({{.*}}) tile [1, 64, 1, 56] attributes {template = "pointwise"
func.func @transposed_read(%x: tensor<4x96x56x56xbf16>, %y: tensor<12544x96xbf16>) -> tensor<4x96x56x56xbf16> {
  %r = graph.reshape %y : tensor<12544x96xbf16> -> tensor<4x56x56x96xbf16>
  %p = graph.permute %r {perm = [0, 3, 1, 2]} : tensor<4x56x56x96xbf16> -> tensor<4x96x56x56xbf16>
  %s = graph.add %x, %p : tensor<4x96x56x56xbf16>, tensor<4x96x56x56xbf16> -> tensor<4x96x56x56xbf16>
  func.return %s : tensor<4x96x56x56xbf16>
}
