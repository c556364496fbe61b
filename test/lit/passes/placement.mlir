// Placement in dataflow mode (kitsune.passes.placement): placement=auto makes a GEMV chain (decode: one row,
// every consumer tile needs the whole producer result) one temporal kernel where kernel launches are dear, and
// kernels of their own on the H100, where a launch in a CUDA graph costs 1.4 us and a shared kernel 1.2x its
// stages (measured); a GEMM chain with several row bands and few tiles per GEMM becomes a spatial pipeline (the
// first GEMM's 40 tiles would leave SMs idle alone).

// A launch of 20 us: the chain shares one temporal kernel.
// RUN: kitsune-opt %s -p 'kitsune-form-regions,convert-dataflow-to-gpu-queue{mode=dataflow gpu="h100,graph_launch_s=2e-5"},kitsune-allocate-sms{report=true}' 2>&1 | filecheck %s --check-prefix=CHAIN
// CHAIN: kernel "k0" (temporal): 2 stage(s) in order
// CHAIN: stage "linear_0": programs [0, [[P:[0-9]+]])
// CHAIN: stage "linear_1": programs [[[P]], {{[0-9]+}})
// CHAIN: gpu_queue.kernel "k0" {{.*}} attributes {placement = "temporal"
// CHAIN-NOT: gpu_queue.queue
// The consumer stage reads the producer stage's result (through global memory, after its programs finished).
// CHAIN: %[[S0:[0-9]+]] = gpu_queue.stage "linear_0"
// CHAIN: gpu_queue.stage "linear_1" pids [{{[0-9]+}}, {{[0-9]+}}) tile [1, 128] (%[[S0]],
// CHAIN-NOT: gpu_queue.kernel "k1"

// The H100's launch: two kernels of bulk-sync's kind (no placement attribute, no counter between them).
// RUN: kitsune-opt %s -p 'kitsune-form-regions,convert-dataflow-to-gpu-queue{mode=dataflow},kitsune-allocate-sms{report=true}' 2>&1 | filecheck %s --check-prefix=OWN
// OWN: kernel "k0": 1 stage(s)
// OWN: kernel "k1": 1 stage(s)
// OWN-NOT: temporal
// OWN: gpu_queue.kernel "k0"
// OWN-NOT: placement =
// OWN: gpu_queue.kernel "k1"
// OWN-NOT: placement =
// OWN: gpu_queue.launch_plan ["k0", "k1"]

// RUN: kitsune-opt %s -p 'kitsune-form-regions,convert-dataflow-to-gpu-queue{mode=dataflow placement=spatial}' | filecheck %s --check-prefix=FORCED
// FORCED: gpu_queue.queue "q0"
// FORCED: gpu_queue.pop "q0" {relation = "rows"}

// RUN: kitsune-opt %S/inputs/gemm-pipeline.mlir -p 'kitsune-form-regions,convert-dataflow-to-gpu-queue{mode=dataflow},kitsune-allocate-sms{report=true}' 2>&1 | filecheck %s --check-prefix=PIPE
// PIPE: kernel "k0": 2 stage(s)
// PIPE-NOT: temporal
// PIPE: gpu_queue.queue "q0" tile [128, 128]
// PIPE: gpu_queue.push
// PIPE: gpu_queue.pop "q0" {relation = "rows"}

// RUN: kitsune-opt %S/inputs/gemm-pipeline.mlir -p 'kitsune-form-regions,convert-dataflow-to-gpu-queue{mode=dataflow placement=temporal}' | filecheck %s --check-prefix=TEMP
// TEMP-NOT: gpu_queue.queue
// TEMP: placement = "temporal"

// placement=separate: bulk-sync's kernels (a candidate of the measured placement): two kernels, no queue, no counter.
// RUN: kitsune-opt %S/inputs/gemm-pipeline.mlir -p 'kitsune-form-regions,convert-dataflow-to-gpu-queue{mode=dataflow placement=separate}' | filecheck %s --check-prefix=SEP
// SEP-NOT: gpu_queue.queue
// SEP: gpu_queue.kernel "k0"
// SEP-NOT: temporal
// SEP: gpu_queue.kernel "k1"
// SEP-NOT: gpu_queue.push

// RUN: not kitsune-opt %s -p 'kitsune-form-regions,convert-dataflow-to-gpu-queue{mode=dataflow placement=diagonal}' 2>&1 | filecheck %s --check-prefix=BAD
// BAD: placement must be one of auto, spatial, temporal, separate, got 'diagonal'

func.func @main(%x: tensor<1x512xbf16> {kitsune.name = "x", kitsune.kind = "input"}, %w1: tensor<1024x512xbf16> {kitsune.name = "w1", kitsune.kind = "parameter"}, %w2: tensor<512x1024xbf16> {kitsune.name = "w2", kitsune.kind = "parameter"}) -> tensor<1x512xbf16> {
  %h = graph.linear %x, %w1 : tensor<1x512xbf16>, tensor<1024x512xbf16> -> tensor<1x1024xbf16>
  %g = graph.relu %h : tensor<1x1024xbf16> -> tensor<1x1024xbf16>
  %y = graph.linear %g, %w2 : tensor<1x1024xbf16>, tensor<512x1024xbf16> -> tensor<1x512xbf16>
  func.return %y : tensor<1x512xbf16>
}
