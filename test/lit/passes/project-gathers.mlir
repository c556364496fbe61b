// kitsune-project-gathers: a linear over a concatenation of gathered rows projects the rows before the gather;
// kitsune-merge-siblings then makes the projections of one input one linear, and form-regions loads the gathered
// projections in the edge linear's epilogue (one task over the edges, no gather task).
// RUN: kitsune-opt %s --split-input-file -p kitsune-project-gathers | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p kitsune-project-gathers,kitsune-merge-siblings,kitsune-form-regions | filecheck %s --check-prefix=FR

// CHECK-LABEL: func.func @message(
// CHECK-SAME:    %{{.*}}: tensor<5x4xf32> {kitsune.name = "slice(dim=1, 16:20: fc.weight)", kitsune.kind = "parameter"}
// CHECK-SAME:    %{{.*}}: tensor<5x8xf32> {kitsune.name = "slice(dim=1, 0:8: fc.weight)", kitsune.kind = "parameter"}
// CHECK-SAME:    %{{.*}}: tensor<5x8xf32> {kitsune.name = "slice(dim=1, 8:16: fc.weight)", kitsune.kind = "parameter"}
// CHECK-NOT:     "fc.weight"
// CHECK:         %[[E:.*]] = graph.linear %e, %{{.*}}, %b : tensor<10x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<10x5xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.linear %x, %{{.*}} : tensor<6x8xf32>, tensor<5x8xf32> -> tensor<6x5xf32>
// CHECK-NEXT:    %[[PS:.*]] = graph.index_select %[[P]], %src {dim = 0} : tensor<6x5xf32>, tensor<10xi64> -> tensor<10x5xf32>
// CHECK-NEXT:    %[[Q:.*]] = graph.linear %x, %{{.*}} : tensor<6x8xf32>, tensor<5x8xf32> -> tensor<6x5xf32>
// CHECK-NEXT:    %[[QD:.*]] = graph.index_select %[[Q]], %dst {dim = 0} : tensor<6x5xf32>, tensor<10xi64> -> tensor<10x5xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[E]], %[[PS]]
// CHECK-NEXT:    %[[S:.*]] = graph.add %[[A]], %[[QD]]
// CHECK-NEXT:    graph.relu %[[S]]
// CHECK-NOT:     graph.concat
// FR-LABEL:  func.func @message(
// FR:          dataflow.task "linear_{{[0-9]+}}" contraction ({{.*}}) tile [6, 10] : ({{.*}}) -> (tensor<6x10xf32>, tensor<6x5xf32>, tensor<6x5xf32>)
// FR:          dataflow.task "linear_{{[0-9]+}}" contraction ({{.*}}) tile [10, 5] : ({{.*}}) -> tensor<10x5xf32>
// FR:            graph.index_select
// FR:            graph.index_select
// FR:            graph.relu
// FR-NOT:      dataflow.task
func.func @message(%w: tensor<5x20xf32> {kitsune.name = "fc.weight", kitsune.kind = "parameter"},
                   %b: tensor<5xf32> {kitsune.name = "fc.bias", kitsune.kind = "parameter"},
                   %x: tensor<6x8xf32> {kitsune.name = "x", kitsune.kind = "input"},
                   %e: tensor<10x4xf32> {kitsune.name = "e", kitsune.kind = "input"},
                   %src: tensor<10xi64> {kitsune.name = "src", kitsune.kind = "input"},
                   %dst: tensor<10xi64> {kitsune.name = "dst", kitsune.kind = "input"}) -> tensor<10x5xf32> {
  %xs = graph.index_select %x, %src {dim = 0} : tensor<6x8xf32>, tensor<10xi64> -> tensor<10x8xf32>
  %xd = graph.index_select %x, %dst {dim = 0} : tensor<6x8xf32>, tensor<10xi64> -> tensor<10x8xf32>
  %c = graph.concat %xs, %xd, %e {dim = 1} : tensor<10x8xf32>, tensor<10x8xf32>, tensor<10x4xf32> -> tensor<10x20xf32>
  %y = graph.linear %c, %w, %b : tensor<10x20xf32>, tensor<5x20xf32>, tensor<5xf32> -> tensor<10x5xf32>
  %r = graph.relu %y : tensor<10x5xf32> -> tensor<10x5xf32>
  func.return %r : tensor<10x5xf32>
}

// -----

// x has more rows than the edges pick: projecting first is no cheaper, nothing changes.
// CHECK-LABEL: func.func @more_rows(
// CHECK:         graph.concat
// CHECK:         graph.linear %{{.*}}, %w, %b : tensor<10x20xf32>
// FR-LABEL:  func.func @more_rows(
// FR:          dataflow.task "linear_0" contraction
func.func @more_rows(%w: tensor<5x20xf32> {kitsune.name = "fc.weight", kitsune.kind = "parameter"},
                     %b: tensor<5xf32> {kitsune.name = "fc.bias", kitsune.kind = "parameter"},
                     %x: tensor<16x8xf32> {kitsune.name = "x", kitsune.kind = "input"},
                     %e: tensor<10x4xf32> {kitsune.name = "e", kitsune.kind = "input"},
                     %src: tensor<10xi64> {kitsune.name = "src", kitsune.kind = "input"},
                     %dst: tensor<10xi64> {kitsune.name = "dst", kitsune.kind = "input"}) -> tensor<10x5xf32> {
  %xs = graph.index_select %x, %src {dim = 0} : tensor<16x8xf32>, tensor<10xi64> -> tensor<10x8xf32>
  %xd = graph.index_select %x, %dst {dim = 0} : tensor<16x8xf32>, tensor<10xi64> -> tensor<10x8xf32>
  %c = graph.concat %xs, %xd, %e {dim = 1} : tensor<10x8xf32>, tensor<10x8xf32>, tensor<10x4xf32> -> tensor<10x20xf32>
  %y = graph.linear %c, %w, %b : tensor<10x20xf32>, tensor<5x20xf32>, tensor<5xf32> -> tensor<10x5xf32>
  func.return %y : tensor<10x5xf32>
}
