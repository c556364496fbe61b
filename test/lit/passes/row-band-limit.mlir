// kitsune-choose-schedules in a dataflow schedule (queues=true, the default): a generic task takes its row-band
// neighbour's rows only while its tile stays within row_band_limit elements (8192, the evaluator's block budget).
// GPT-2's MLP: the second GEMM + residual + LayerNorm (generic, whole 768-wide rows) reads the first GEMM's
// 128-row bands. Taking them made a [128, 768] tile on 2 programs, which kitsune-split-reduction replicated into
// 16 partials and a combine of that tile (minutes of ptxas); it keeps its own rows and fills the GPU instead.

// (row_max=1024: the fusion form-regions made before its default became 256, the gemm template's widest BN.)
// RUN: kitsune-opt %s -p 'kitsune-form-regions{row_max=1024},kitsune-choose-schedules{db=false},kitsune-split-reduction' | filecheck %s
// CHECK: %[[G:[0-9]+]] = dataflow.task "linear_0" contraction ({{.*}}) tile [128, 128] attributes {template = "gemm"
// CHECK: dataflow.channel %[[G]] {relation = "all"}
// CHECK: dataflow.task "matmul_1" contraction ({{.*}}) tile [1, 768] attributes {template = "generic"
// CHECK-NOT: partial

// A limit above the band's 128 x 1024 (padded) elements alone: still its own rows, since the band's element-steps
// (131 072 elements x 3072 steps) pass row_band_steps (64) x the limit.
// RUN: kitsune-opt %s -p 'kitsune-form-regions{row_max=1024},kitsune-choose-schedules{db=false row_band_limit=131072}' | filecheck %s --check-prefix=STEPS
// STEPS: %[[G:[0-9]+]] = dataflow.task "linear_0" contraction ({{.*}}) tile [128, 128] attributes {template = "gemm"
// STEPS: dataflow.channel %[[G]] {relation = "all"}
// STEPS: dataflow.task "matmul_1" contraction ({{.*}}) tile [1, 768] attributes {template = "generic"

// Both limits above the band's: the old behaviour, a row-band channel and the split.
// RUN: kitsune-opt %s -p 'kitsune-form-regions{row_max=1024},kitsune-choose-schedules{db=false row_band_limit=131072 row_band_steps=4096},kitsune-split-reduction' | filecheck %s --check-prefix=BAND
// BAND: %[[G:[0-9]+]] = dataflow.task "linear_0" contraction ({{.*}}) tile [128, 128] attributes {template = "gemm"
// BAND: dataflow.channel %[[G]] {relation = "rows"}
// BAND: dataflow.task "matmul_1_part0" partial ({{.*}}) tile [128, 768]
// BAND: dataflow.task "matmul_1_part15" partial ({{.*}}) tile [128, 768]
// BAND: dataflow.task "matmul_1_combine" combine ({{.*}}) tile [128, 768]

// By default (row_max=256) the LayerNorm over 768-wide rows is a task of its own and the GEMM + residual runs on
// the gemm template.
// RUN: kitsune-opt %s -p 'kitsune-form-regions,kitsune-choose-schedules{db=false}' | filecheck %s --check-prefix=DEF
// DEF: dataflow.task "matmul_1" contraction ({{.*}}) tile [128, 128] attributes {template = "gemm"
// DEF: dataflow.task "layer_norm_2" reduction

// Bulk-sync's tiles (queues=false) are not limited this way (its own rule: a grid that fills the GPU).
// RUN: kitsune-opt %s -p 'kitsune-form-regions{row_max=1024},kitsune-choose-schedules{db=false queues=false}' | filecheck %s --check-prefix=BS
// BS: dataflow.task "matmul_1" contraction ({{.*}}) tile [1, 768] attributes {template = "generic"

func.func @main(%x: tensor<256x768xbf16>, %w: tensor<3072x768xbf16>, %b: tensor<3072xbf16>, %w2: tensor<768x3072xbf16>, %g: tensor<768xbf16>, %be: tensor<768xbf16>) -> tensor<256x768xbf16> {
  %h = graph.linear %x, %w, %b : tensor<256x768xbf16>, tensor<3072x768xbf16>, tensor<3072xbf16> -> tensor<256x3072xbf16>
  %a = graph.gelu %h {approximate = "tanh"} : tensor<256x3072xbf16> -> tensor<256x3072xbf16>
  %y = graph.matmul %a, %w2 {transpose_b = true} : tensor<256x3072xbf16>, tensor<768x3072xbf16> -> tensor<256x768xbf16>
  %r = graph.add %y, %x : tensor<256x768xbf16>, tensor<256x768xbf16> -> tensor<256x768xbf16>
  %n = graph.layer_norm %r, %g, %be {normalized_rank = 1, eps = 1.0e-05} : tensor<256x768xbf16>, tensor<768xbf16>, tensor<768xbf16> -> tensor<256x768xbf16>
  func.return %n : tensor<256x768xbf16>
}
