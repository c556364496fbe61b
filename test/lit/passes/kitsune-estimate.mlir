// RUN: kitsune-opt %s --split-input-file -p 'kitsune-estimate' | filecheck %s --check-prefixes=CHECK,H100
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-estimate{gpu=h200}' | filecheck %s --check-prefixes=CHECK,H200
// RUN: kitsune-opt %s --split-input-file -p 'kitsune-estimate{gpu=h100 report=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: not kitsune-opt %s --split-input-file -p 'kitsune-estimate{gpu=a100}' 2>&1 | filecheck %s --check-prefix=BADGPU

// BADGPU: unknown GPU 'a100'; presets: h100, h200

// A GEMV is memory-bound: 2*4096*4096 FLOPs, (4096 + 4096*4096 + 4096) * 2 bytes.
// 33570816 B / 3.0 TB/s = 11.19 us (+ 4 us launch) on h100; / 4.3 TB/s = 7.807 us on h200.
// The reshape is a view (no estimate); a tiny gelu is launch-bound.

// CHECK-LABEL: func.func @gemv
// H100-SAME: kitsune.gpu = "h100", kitsune.flops = 33574912 : i64, kitsune.bytes = 33570816 : i64, kitsune.floor_us = 1.119000e+01 : f64, kitsune.est_us = 1.919600e+01 : f64
// H200-SAME: kitsune.gpu = "h200", kitsune.flops = 33574912 : i64, kitsune.bytes = 33570816 : i64, kitsune.floor_us = 7.807000e+00 : f64, kitsune.est_us = 1.581100e+01 : f64
// CHECK: graph.linear %{{.*}}, %{{.*}} attributes {kitsune.flops = 33554432 : i64, kitsune.bytes = 33570816 : i64,
// H100-SAME: kitsune.est_us = 1.519000e+01 : f64, kitsune.bound = "memory"}
// H200-SAME: kitsune.est_us = 1.180700e+01 : f64, kitsune.bound = "memory"}
// CHECK: graph.reshape %{{[^ ]*}} : tensor
// CHECK: graph.gelu %{{.*}} attributes {kitsune.flops = 20480 : i64, kitsune.bytes = 16384 : i64, kitsune.est_us = 4.00{{[0-9]+}}e+00 : f64, kitsune.bound = "launch"}

// REPORT: kitsune-estimate @gemv on h100: 132 SMs
// REPORT: %y = graph.linear {{.*}} memory
// REPORT-NEXT: %g = graph.gelu {{.*}} launch
// REPORT: total (one kernel each) {{.*}} 19.20 {{.*}} 2 kernels
// REPORT: roofline floor {{.*}} 11.19 memory
func.func @gemv(%x: tensor<1x4096xbf16>, %w: tensor<4096x4096xbf16>) -> tensor<1x4096xbf16> {
  %y = graph.linear %x, %w : tensor<1x4096xbf16>, tensor<4096x4096xbf16> -> tensor<1x4096xbf16>
  %r = graph.reshape %y : tensor<1x4096xbf16> -> tensor<4096xbf16>
  %g = graph.gelu %y : tensor<1x4096xbf16> -> tensor<1x4096xbf16>
  func.return %g : tensor<1x4096xbf16>
}

// -----

// A square bf16 GEMM is compute-bound: 2*4096^3 FLOPs / 800 TFLOP/s = 171.8 us on both GPUs.

// CHECK-LABEL: func.func @gemm
// CHECK-SAME: kitsune.flops = 137438953472 : i64, kitsune.bytes = 100663296 : i64, kitsune.floor_us = 1.717990e+02 : f64
// CHECK: graph.matmul {{.*}} attributes {kitsune.flops = 137438953472 : i64, kitsune.bytes = 100663296 : i64, kitsune.est_us = 1.757990e+02 : f64, kitsune.bound = "compute"}
// REPORT: kitsune-estimate @gemm on h100
// REPORT: roofline floor {{.*}} 171.80 compute
func.func @gemm(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %c = graph.matmul %a, %b : tensor<4096x4096xbf16>, tensor<4096x4096xbf16> -> tensor<4096x4096xbf16>
  func.return %c : tensor<4096x4096xbf16>
}

// -----

// An embedding reads only the gathered rows: the floor counts 8 rows of the 100000x64 table
// (8*64*2 B), the indices (8*8 B) and the output (8*64*2 B) = 2112 B, not the 12.8 MB table.

// CHECK-LABEL: func.func @gather
// CHECK-SAME: kitsune.flops = 0 : i64, kitsune.bytes = 2112 : i64
// CHECK: graph.embedding {{.*}} attributes {kitsune.flops = 0 : i64, kitsune.bytes = 2112 : i64, {{.*}} kitsune.bound = "launch"}
func.func @gather(%w: tensor<100000x64xbf16>, %i: tensor<8xi64>) -> tensor<8x64xbf16> {
  %y = graph.embedding %w, %i : tensor<100000x64xbf16>, tensor<8xi64> -> tensor<8x64xbf16>
  func.return %y : tensor<8x64xbf16>
}
