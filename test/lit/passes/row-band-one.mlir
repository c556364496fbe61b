// kitsune-choose-schedules in a dataflow schedule (queues=true): a generic task does not take a row-band
// neighbour's rows when that would leave it a single row band. A queue of one band pipelines nothing (a consumer
// tile needs the producer's last tile either way), and the wider tile cuts the grid: llama_decode_b8's attention
// combine, aligned to the O projection's [8, 32], ran 16 programs at 5.8 us against its own 128 at 2.2 us (H100).

// RUN: kitsune-opt %s -p 'kitsune-form-regions,kitsune-choose-schedules{db=false}' | filecheck %s
// CHECK: %[[S:[0-9]+]] = dataflow.task "sum_0" reduction ({{.*}}) tile [1, 128] attributes {template = "generic"
// CHECK: dataflow.channel %[[S]] {relation = "all"}
// CHECK: dataflow.task "linear_1" contraction ({{.*}}) tile [8, 32] attributes {template = "gemv"

// (With several bands the rows are still taken: row-band-limit.mlir's BAND run, 256 rows in bands of 128.)

func.func @main(%x: tensor<8x5x2048xbf16> {kitsune.name = "x", kitsune.kind = "input"}, %w: tensor<2048x2048xbf16> {kitsune.name = "w", kitsune.kind = "parameter"}) -> tensor<8x2048xbf16> {
  %s = graph.sum %x {dims = [1], keepdim = false} : tensor<8x5x2048xbf16> -> tensor<8x2048xbf16>
  %y = graph.linear %s, %w : tensor<8x2048xbf16>, tensor<2048x2048xbf16> -> tensor<8x2048xbf16>
  func.return %y : tensor<8x2048xbf16>
}
