// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-split-reduction{templates=false}' | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-split-reduction{force=2 templates=false}' | filecheck %s --check-prefix=FORCE
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-split-reduction{sms=1 templates=false}' | filecheck %s --check-prefix=FULL
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-split-reduction{remarks=true templates=false}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-split-reduction{min_chunk=8 templates=false}' | filecheck %s --check-prefix=CHUNK
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-split-reduction{min_chunk=8 remarks=true templates=false}' -o /dev/null 2>&1 | filecheck %s --check-prefix=CHUNK-REMARK
// RUN: kitsune-opt %S/inputs/llama_decode_b1.mlir -p 'kitsune-form-regions,kitsune-split-reduction{templates=false}' | filecheck %s --check-prefix=LLAMA
// RUN: kitsune-opt %S/inputs/llama_decode_b1.mlir -p 'kitsune-form-regions,kitsune-split-reduction{force=2 templates=false}' | filecheck %s --check-prefix=LLAMA2
// RUN: kitsune-opt %S/inputs/llama_decode_b1.mlir -p 'kitsune-form-regions,kitsune-split-reduction{min_chunk=4 templates=false}' | filecheck %s --check-prefix=LLAMA5
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-form-regions,kitsune-split-reduction' | filecheck %s --check-prefix=TPL
// RUN: kitsune-opt %S/inputs/llama_decode_b1.mlir -p 'kitsune-form-regions,kitsune-split-reduction{force=3}' | filecheck %s --check-prefix=LLAMATPL

// A batch-1 GEMV has one output tile: split K=512 into min(132 / 1, 512 / min_chunk 64) = 8
// partial GEMVs and a combine that sums them, adds the bias and applies the epilogue.

// CHECK-LABEL: func.func @gemv
// CHECK-COUNT-8: dataflow.task "linear_0_part{{[0-7]}}" partial
// CHECK: dataflow.task "linear_0_combine" combine
// CHECK-NOT: dataflow.task

// FORCE-LABEL: func.func @gemv
// FORCE: %[[P0:.*]] = dataflow.task "linear_0_part0" partial (%[[X:.*]], %[[W:.*]]) tile [1, 64] : (tensor<1x512xf32>, tensor<64x512xf32>) -> tensor<1x64xf32> {
// FORCE-NEXT: ^{{.*}}(%[[A:.*]]: tensor<1x512xf32>, %[[B:.*]]: tensor<64x512xf32>):
// FORCE-NEXT: %[[S0:.*]] = graph.slice %[[A]] {dim = 1, end = 256} : tensor<1x512xf32> -> tensor<1x256xf32>
// FORCE-NEXT: %[[S1:.*]] = graph.slice %[[B]] {dim = 1, end = 256} : tensor<64x512xf32> -> tensor<64x256xf32>
// FORCE-NEXT: %[[L:.*]] = graph.linear %[[S0]], %[[S1]] : tensor<1x256xf32>, tensor<64x256xf32> -> tensor<1x64xf32>
// FORCE-NEXT: dataflow.yield %[[L]]
// FORCE-NEXT: }
// FORCE-NEXT: %[[C0:.*]] = dataflow.channel %[[P0]] {relation = "tile"} : tensor<1x64xf32>
// FORCE-NEXT: %[[P1:.*]] = dataflow.task "linear_0_part1" partial (%[[X]], %[[W]]) tile [1, 64]
// FORCE: graph.slice %{{.*}} {dim = 1, start = 256, end = 512}
// FORCE: %[[C1:.*]] = dataflow.channel %[[P1]] {relation = "tile"} : tensor<1x64xf32>
// FORCE-NEXT: %[[K:.*]] = dataflow.task "linear_0_combine" combine (%{{.*}}, %[[C0]], %[[C1]]) tile [1, 64] : (tensor<64xf32>, tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32> {
// FORCE-NEXT: ^{{.*}}(%[[BIAS:.*]]: tensor<64xf32>, %[[Q0:.*]]: tensor<1x64xf32>, %[[Q1:.*]]: tensor<1x64xf32>):
// FORCE-NEXT: %[[SUM:.*]] = graph.add %[[Q0]], %[[Q1]]
// FORCE-NEXT: %[[BB:.*]] = graph.add %[[SUM]], %[[BIAS]]
// FORCE-NEXT: %[[Y:.*]] = graph.silu %[[BB]]
// FORCE-NEXT: dataflow.yield %[[Y]]
// FORCE-NEXT: }
// FORCE-NEXT: dataflow.channel %[[K]] {relation = "all"}

// REMARK: kitsune-split-reduction: task "linear_0" has 1 tile(s) for 132 SMs: linear split along its reduction dim (512) into 8 partials + "linear_0_combine"
func.func @gemv(%x: tensor<1x512xf32>, %w: tensor<64x512xf32>, %b: tensor<64xf32>) -> tensor<1x64xf32> {
  %h = graph.linear %x, %w, %b : tensor<1x512xf32>, tensor<64x512xf32>, tensor<64xf32> -> tensor<1x64xf32>
  %y = graph.silu %h : tensor<1x64xf32> -> tensor<1x64xf32>
  func.return %y : tensor<1x64xf32>
}

// -----
// A long row sum (one row band): min(132 / 1, 1000 / 64) = 15 parts wanted, 10 taken (the largest
// divisor of 1000 up to 15): ONE partial task reshapes its operand [4, 1000] -> [4, 10, 100] (after the
// elementwise prologue, exp) and sums the last dim, keeping the 10 parts as a dim of its result, whose
// tiles are one part wide; the combine sums the parts and takes the log.

// CHECK-LABEL: func.func @long_sum
// CHECK: dataflow.task "sum_0_part" partial (%{{.*}}) tile [1, 1, 1] : (tensor<4x1000xf32>) -> tensor<4x10x1xf32> {
// CHECK-NEXT: ^
// CHECK-NEXT: graph.exp %{{.*}} : tensor<4x1000xf32> -> tensor<4x1000xf32>
// CHECK-NEXT: graph.reshape %{{.*}} : tensor<4x1000xf32> -> tensor<4x10x100xf32>
// CHECK-NEXT: graph.sum %{{.*}} {dims = [2], keepdim = true} : tensor<4x10x100xf32> -> tensor<4x10x1xf32>
// CHECK: dataflow.task "sum_0_combine" combine
// CHECK-NEXT: ^
// CHECK-NEXT: graph.sum %{{.*}} {dims = [1]} : tensor<4x10x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: graph.log
// CHECK-NOT: partial

// FORCE-LABEL: func.func @long_sum
// FORCE: dataflow.task "sum_0_part" partial (%{{.*}}) tile [1, 1, 1] : (tensor<4x1000xf32>) -> tensor<4x2x1xf32> {
// FORCE: graph.reshape %{{.*}} : tensor<4x1000xf32> -> tensor<4x2x500xf32>
// FORCE: dataflow.task "sum_0_combine" combine
// FORCE-NEXT: ^
// FORCE-NEXT: graph.sum
// FORCE-NEXT: graph.log
// FORCE-NEXT: dataflow.yield

// REMARK: task "sum_0" has 1 tile(s) for 132 SMs: sum split along its reduction dim (1000) into one partial task of 10 parts + "sum_0_combine"
func.func @long_sum(%x: tensor<4x1000xf32>) -> tensor<4x1xf32> {
  %e = graph.exp %x : tensor<4x1000xf32> -> tensor<4x1000xf32>
  %s = graph.sum %e {dims = [1], keepdim = true} : tensor<4x1000xf32> -> tensor<4x1xf32>
  %l = graph.log %s : tensor<4x1xf32> -> tensor<4x1xf32>
  func.return %l : tensor<4x1xf32>
}

// -----
// 16 x 10 = 160 output tiles already fill 132 SMs: nothing to split (unless forced).

// CHECK-LABEL: func.func @big
// CHECK: dataflow.task "linear_0" contraction
// CHECK-NOT: partial

// FULL-LABEL: func.func @big
// FULL: dataflow.task "linear_0" contraction
// FULL-NOT: partial

// FORCE-LABEL: func.func @big
// FORCE-COUNT-2: partial
// FORCE: dataflow.task "linear_0_combine" combine
func.func @big(%x: tensor<2048x256xf32>, %w: tensor<1280x256xf32>) -> tensor<2048x1280xf32> {
  %y = graph.linear %x, %w : tensor<2048x256xf32>, tensor<1280x256xf32> -> tensor<2048x1280xf32>
  func.return %y : tensor<2048x1280xf32>
}

// -----
// A composite softmax is not split: its output is elementwise over the whole row, so a combine
// would re-read and re-write the row at the same few row-band tiles (see the pass docs).

// CHECK-LABEL: func.func @softmax
// CHECK-NOT: partial
// CHECK: dataflow.task "softmax_0" reduction
// CHECK-NOT: partial
func.func @softmax(%x: tensor<2x4096xf32>) -> tensor<2x4096xf32> {
  %y = graph.softmax %x : tensor<2x4096xf32> -> tensor<2x4096xf32>
  func.return %y : tensor<2x4096xf32>
}

// -----
// A decomposed softmax: its max and sum could be split, but the rest of the row band reads
// the whole input again, so splitting would not pay: no split.

// CHECK-LABEL: func.func @softmax_decomposed
// CHECK: dataflow.task "amax_0" reduction
// CHECK-NOT: partial
func.func @softmax_decomposed(%x: tensor<2x4096xf32>) -> tensor<2x4096xf32> {
  %m = graph.amax %x {dims = [1], keepdim = true} : tensor<2x4096xf32> -> tensor<2x1xf32>
  %s = graph.sub %x, %m : tensor<2x4096xf32>, tensor<2x1xf32> -> tensor<2x4096xf32>
  %e = graph.exp %s : tensor<2x4096xf32> -> tensor<2x4096xf32>
  %z = graph.sum %e {dims = [1], keepdim = true} : tensor<2x4096xf32> -> tensor<2x1xf32>
  %y = graph.div %e, %z : tensor<2x4096xf32>, tensor<2x1xf32> -> tensor<2x4096xf32>
  func.return %y : tensor<2x4096xf32>
}

// -----
// Grouped-query decode attention (8 query heads, 2 kv heads, 40 keys), one output tile.
// Flash-decoding: the partials slice k and v along L_kv (dim 2), expand the kv heads,
// and yield the unnormalised o = exp(S - m) @ v with the chunk's max m and sum l; the
// combine rescales by exp(m_i - max m) and divides, then runs the permute/reshape epilogue.
// Default: 40 keys < 2 chunks of min_chunk 64, no split; min_chunk=8: 5 partials.

// CHECK-LABEL: func.func @attention_gqa
// CHECK-NOT: partial
// CHECK: dataflow.task "attention_0" contraction
// CHECK-NOT: partial

// FULL-LABEL: func.func @attention_gqa
// FULL-NOT: partial

// With the decode_attention template (the default; one query, head dims 16): one partial task whose parts are
// chunks of at least 32 keys (40 keys: one part; one block of 64 keys, its lanes past 40 masked), a tile of the
// 4 query heads that share a kv head and one part, template and config on it; the combine reduces the parts dim.
// TPL-LABEL: func.func @attention_gqa
// TPL: dataflow.task "attention_0_part" partial ({{.*}}) tile [1, 4, 1, 16] attributes {template = "decode_attention", config = {warps = 4 : i64, stages = 2 : i64, BN = 64 : i64, PARTS = 1 : i64}} : ({{.*}}) -> (tensor<1x8x1x16xf32>, tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>) {
// TPL: graph.reshape {{.*}} -> tensor<1x8x1x40x16xf32>
// TPL-NOT: dataflow.task "attention_0_part
// TPL: dataflow.task "attention_0_combine" combine
// TPL: graph.amax %{{.*}} {dims = [2], keepdim = true} : tensor<1x8x1x1xf32> -> tensor<1x8x1x1xf32>

// FORCE-LABEL: func.func @attention_gqa
// FORCE: %[[O0:.*]], %[[M0:.*]], %[[L0:.*]] = dataflow.task "attention_0_part0" partial (%[[Q:.*]], %[[K:.*]], %[[V:.*]]) tile [1, 1, 1, 16] : (tensor<1x8x1x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>) -> (tensor<1x8x1x16xf32>, tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>) {
// FORCE-NEXT: ^{{.*}}(%[[QA:.*]]: tensor<1x8x1x16xf32>, %[[KA:.*]]: tensor<1x2x40x16xf32>, %[[VA:.*]]: tensor<1x2x40x16xf32>):
// FORCE-NEXT: %[[KS:.*]] = graph.slice %[[KA]] {dim = 2, end = 20} : tensor<1x2x40x16xf32> -> tensor<1x2x20x16xf32>
// FORCE-NEXT: %[[VS:.*]] = graph.slice %[[VA]] {dim = 2, end = 20} : tensor<1x2x40x16xf32> -> tensor<1x2x20x16xf32>
// FORCE-NEXT: %[[K5:.*]] = graph.reshape %[[KS]] : tensor<1x2x20x16xf32> -> tensor<1x2x1x20x16xf32>
// FORCE-NEXT: %[[KE:.*]] = graph.expand %[[K5]] {shape = [1, 2, 4, 20, 16]}
// FORCE-NEXT: %[[KH:.*]] = graph.reshape %[[KE]] : tensor<1x2x4x20x16xf32> -> tensor<1x8x20x16xf32>
// FORCE-NEXT: %[[V5:.*]] = graph.reshape %[[VS]]
// FORCE-NEXT: %[[VE:.*]] = graph.expand %[[V5]]
// FORCE-NEXT: %[[VH:.*]] = graph.reshape %[[VE]] : tensor<1x2x4x20x16xf32> -> tensor<1x8x20x16xf32>
// FORCE-NEXT: %[[QK:.*]] = graph.matmul %[[QA]], %[[KH]] {transpose_b = true} : tensor<1x8x1x16xf32>, tensor<1x8x20x16xf32> -> tensor<1x8x1x20xf32>
// FORCE-NEXT: %[[SC:.*]] = graph.constant dense<2.500000e-01> : tensor<f32>
// FORCE-NEXT: %[[S:.*]] = graph.mul %[[QK]], %[[SC]]
// FORCE-NEXT: %[[M:.*]] = graph.amax %[[S]] {dims = [3], keepdim = true} : tensor<1x8x1x20xf32> -> tensor<1x8x1x1xf32>
// FORCE-NEXT: %[[D:.*]] = graph.sub %[[S]], %[[M]]
// FORCE-NEXT: %[[E:.*]] = graph.exp %[[D]]
// FORCE-NEXT: %[[L:.*]] = graph.sum %[[E]] {dims = [3], keepdim = true} : tensor<1x8x1x20xf32> -> tensor<1x8x1x1xf32>
// FORCE-NEXT: %[[O:.*]] = graph.matmul %[[E]], %[[VH]] : tensor<1x8x1x20xf32>, tensor<1x8x20x16xf32> -> tensor<1x8x1x16xf32>
// FORCE-NEXT: dataflow.yield %[[O]], %[[M]], %[[L]]
// FORCE-NEXT: }
// FORCE-NEXT: %[[CO0:.*]] = dataflow.channel %[[O0]] {relation = "all"} : tensor<1x8x1x16xf32>
// FORCE-NEXT: %[[CM0:.*]] = dataflow.channel %[[M0]] {relation = "all"} : tensor<1x8x1x1xf32>
// FORCE-NEXT: %[[CL0:.*]] = dataflow.channel %[[L0]] {relation = "all"} : tensor<1x8x1x1xf32>
// FORCE-NEXT: dataflow.task "attention_0_part1" partial (%[[Q]], %[[K]], %[[V]])
// FORCE-NEXT: ^
// FORCE-NEXT: graph.slice %{{.*}} {dim = 2, start = 20, end = 40} : tensor<1x2x40x16xf32> -> tensor<1x2x20x16xf32>
// FORCE-NEXT: graph.slice %{{.*}} {dim = 2, start = 20, end = 40} : tensor<1x2x40x16xf32> -> tensor<1x2x20x16xf32>
// FORCE: graph.amax
// FORCE: graph.exp
// FORCE: graph.sum
// FORCE: %[[CO1:.*]] = dataflow.channel %{{.*}} {relation = "all"} : tensor<1x8x1x16xf32>
// FORCE-NEXT: %[[CM1:.*]] = dataflow.channel
// FORCE-NEXT: %[[CL1:.*]] = dataflow.channel
// FORCE-NEXT: dataflow.task "attention_0_combine" combine (%[[CO0]], %[[CM0]], %[[CL0]], %[[CO1]], %[[CM1]], %[[CL1]]) tile [1, 1, 128] : ({{.*}}) -> tensor<1x1x128xf32> {
// FORCE-NEXT: ^{{.*}}(%[[o0:.*]]: tensor<1x8x1x16xf32>, %[[m0:.*]]: tensor<1x8x1x1xf32>, %[[l0:.*]]: tensor<1x8x1x1xf32>, %[[o1:.*]]: tensor<1x8x1x16xf32>, %[[m1:.*]]: tensor<1x8x1x1xf32>, %[[l1:.*]]: tensor<1x8x1x1xf32>):
// FORCE-NEXT: %[[MX:.*]] = graph.maximum %[[m0]], %[[m1]]
// FORCE-NEXT: %[[D0:.*]] = graph.sub %[[m0]], %[[MX]]
// FORCE-NEXT: %[[W0:.*]] = graph.exp %[[D0]]
// FORCE-NEXT: %[[WO0:.*]] = graph.mul %[[W0]], %[[o0]]
// FORCE-NEXT: %[[WL0:.*]] = graph.mul %[[W0]], %[[l0]]
// FORCE-NEXT: %[[D1:.*]] = graph.sub %[[m1]], %[[MX]]
// FORCE-NEXT: %[[W1:.*]] = graph.exp %[[D1]]
// FORCE-NEXT: %[[WO1:.*]] = graph.mul %[[W1]], %[[o1]]
// FORCE-NEXT: %[[WL1:.*]] = graph.mul %[[W1]], %[[l1]]
// FORCE-NEXT: %[[NUM:.*]] = graph.add %[[WO0]], %[[WO1]]
// FORCE-NEXT: %[[DEN:.*]] = graph.add %[[WL0]], %[[WL1]]
// FORCE-NEXT: %[[ATT:.*]] = graph.div %[[NUM]], %[[DEN]] : tensor<1x8x1x16xf32>, tensor<1x8x1x1xf32> -> tensor<1x8x1x16xf32>
// FORCE-NEXT: %[[P:.*]] = graph.permute %[[ATT]] {perm = [0, 2, 1, 3]}
// FORCE-NEXT: %[[Y:.*]] = graph.reshape %[[P]] : tensor<1x1x8x16xf32> -> tensor<1x1x128xf32>
// FORCE-NEXT: dataflow.yield %[[Y]]

// CHUNK-LABEL: func.func @attention_gqa
// CHUNK-COUNT-5: dataflow.task "attention_0_part{{[0-4]}}" partial
// CHUNK: dataflow.task "attention_0_combine" combine
// CHUNK-COUNT-4: graph.maximum
// CHUNK-NOT: graph.maximum
// CHUNK: graph.div
// CHUNK-NOT: dataflow.task

// CHUNK-REMARK: kitsune-split-reduction: task "attention_0" has 1 tile(s) for 132 SMs: attention split along its key/value length (40) into 5 partials + "attention_0_combine"
func.func @attention_gqa(%q: tensor<1x8x1x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x16xf32>) -> tensor<1x1x128xf32> {
  %a = graph.attention %q, %k, %v : tensor<1x8x1x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x8x1x16xf32>
  %p = graph.permute %a {perm = [0, 2, 1, 3]} : tensor<1x8x1x16xf32> -> tensor<1x1x8x16xf32>
  %y = graph.reshape %p : tensor<1x1x8x16xf32> -> tensor<1x1x128xf32>
  func.return %y : tensor<1x1x128xf32>
}

// -----
// Multi-head attention (no GQA), two queries, an explicit scale: no head expansion.

// CHUNK-LABEL: func.func @attention_mha
// CHUNK-COUNT-4: dataflow.task "attention_0_part{{[0-3]}}" partial
// CHUNK-NEXT: ^
// CHUNK-NEXT: graph.slice %{{.*}} {dim = 2, start = 25, end = 33}
// CHUNK: dataflow.task "attention_0_combine" combine

// FORCE-LABEL: func.func @attention_mha
// FORCE: dataflow.task "attention_0_part0" partial
// FORCE-NEXT: ^
// FORCE-NEXT: graph.slice %{{.*}} {dim = 2, end = 16} : tensor<1x2x33x16xf32> -> tensor<1x2x16x16xf32>
// FORCE-NEXT: graph.slice %{{.*}} {dim = 2, end = 16} : tensor<1x2x33x8xf32> -> tensor<1x2x16x8xf32>
// FORCE-NEXT: graph.matmul %{{.*}}, %{{.*}} {transpose_b = true} : tensor<1x2x2x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x2x2x16xf32>
// FORCE-NEXT: graph.constant dense<5.000000e-01> : tensor<f32>
// FORCE: dataflow.task "attention_0_part1" partial
// FORCE-NOT: graph.expand
// FORCE: dataflow.task "attention_0_combine" combine
// FORCE: graph.div {{.*}} -> tensor<1x2x2x8xf32>
// FORCE-NEXT: dataflow.yield
func.func @attention_mha(%q: tensor<1x2x2x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x2x8xf32> {
  %a = graph.attention %q, %k, %v {scale = 0.5} : tensor<1x2x2x16xf32>, tensor<1x2x33x16xf32>, tensor<1x2x33x8xf32> -> tensor<1x2x2x8xf32>
  func.return %a : tensor<1x2x2x8xf32>
}

// The llama decode layer (scale 0.02): attention over 21 cached keys, 4 query heads on 1 kv head.
// Default: 21 keys are less than two chunks of 64, the attention task stays whole.
// force=2: chunks of 10 and 11 keys. min_chunk=4: 21 // 4 = 5 partials (4, 4, 5, 4, 4 keys).

// With the template, force=3: one partial task of 3 parts of 7 keys (a work item: the 4 query heads and a part);
// k and v reshaped to [B, Hq, parts, keys, E], the query repeated over the parts; the combine rescales the parts
// by exp(m - max m) and sums them over the parts dim.
// LLAMATPL: dataflow.task "attention_1_part" partial {{.*}} tile [1, 4, 1, 64] attributes {template = "decode_attention", config = {warps = 4 : i64, stages = 2 : i64, BN = 32 : i64, PARTS = 3 : i64}} : ({{.*}}) -> (tensor<1x4x3x64xf32>, tensor<1x4x3x1xf32>, tensor<1x4x3x1xf32>)
// LLAMATPL: graph.reshape {{.*}} : tensor<1x4x21x64xf32> -> tensor<1x4x3x7x64xf32>
// LLAMATPL: graph.expand {{.*}} {shape = [1, 4, 3, 1, 64]}
// LLAMATPL: graph.matmul {{.*}} {transpose_b = true} : tensor<1x4x3x1x64xf32>, tensor<1x4x3x7x64xf32> -> tensor<1x4x3x1x7xf32>
// LLAMATPL: graph.amax {{.*}} {dims = [4], keepdim = true}
// LLAMATPL-NOT: dataflow.task "attention_1_part
// LLAMATPL: dataflow.task "attention_1_combine" combine
// LLAMATPL: graph.amax {{.*}} {dims = [2], keepdim = true} : tensor<1x4x3x1xf32> -> tensor<1x4x1x1xf32>
// LLAMATPL: graph.sum {{.*}} {dims = [2], keepdim = true} : tensor<1x4x3x64xf32> -> tensor<1x4x1x64xf32>
// LLAMATPL: graph.div

// LLAMA: dataflow.task "attention_1" contraction
// LLAMA-NOT: attention_1_part

// LLAMA2: dataflow.task "attention_1_part0" partial {{.*}} -> (tensor<1x4x1x64xf32>, tensor<1x4x1x1xf32>, tensor<1x4x1x1xf32>)
// LLAMA2: graph.slice %{{.*}} {dim = 2, end = 10} : tensor<1x1x21x64xf32> -> tensor<1x1x10x64xf32>
// LLAMA2: graph.expand %{{.*}} {shape = [1, 1, 4, 10, 64]}
// LLAMA2: graph.constant dense<1.250000e-01>
// LLAMA2: graph.amax
// LLAMA2: graph.exp
// LLAMA2: graph.sum
// LLAMA2: dataflow.task "attention_1_part1" partial
// LLAMA2: graph.slice %{{.*}} {dim = 2, start = 10, end = 21} : tensor<1x1x21x64xf32> -> tensor<1x1x11x64xf32>
// LLAMA2: dataflow.task "attention_1_combine" combine {{.*}} -> tensor<1x1x256xf32>
// LLAMA2: graph.maximum
// LLAMA2: graph.exp
// LLAMA2: graph.mul
// LLAMA2: graph.add
// LLAMA2: graph.div
// LLAMA2-NEXT: graph.permute
// LLAMA2-NEXT: graph.reshape
// LLAMA2-NEXT: dataflow.yield

// LLAMA5-COUNT-5: dataflow.task "attention_1_part{{[0-4]}}" partial
// LLAMA5: dataflow.task "attention_1_combine" combine
// LLAMA5-COUNT-4: graph.maximum
// LLAMA5-NOT: graph.maximum
// LLAMA5: graph.div
