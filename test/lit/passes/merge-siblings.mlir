// kitsune-merge-siblings: sibling convolutions / linears of one input with parameter weights become one over a
// derived parameter (their weights concatenated, labelled with the recipe) and slices; form-regions then keeps
// the slices in the merged task as results written from its tiles, the merged output first (the domain).
// RUN: kitsune-opt %s --split-input-file -p kitsune-merge-siblings | filecheck %s
// RUN: kitsune-opt %s --split-input-file -p kitsune-merge-siblings,kitsune-form-regions | filecheck %s --check-prefix=FR

// CHECK-LABEL: func.func @inception_reduce(
// CHECK-SAME:    %x: tensor<2x16x6x6xf32> {kitsune.name = "x", kitsune.kind = "input"}
// CHECK-SAME:    %{{.*}}: tensor<20x16x1x1xf32> {kitsune.name = "concat(dim=0: a.weight, b.weight)", kitsune.kind = "parameter"}
// CHECK-SAME:    %{{.*}}: tensor<20xf32> {kitsune.name = "concat(dim=0: a.bias, b.bias)", kitsune.kind = "parameter"}
// CHECK-NOT:     a.weight"
// CHECK:         %[[Y:.*]] = graph.conv2d %x, %{{.*}}, %{{.*}} : tensor<2x16x6x6xf32>, tensor<20x16x1x1xf32>, tensor<20xf32> -> tensor<2x20x6x6xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.slice %[[Y]] {dim = 1, end = 8} : tensor<2x20x6x6xf32> -> tensor<2x8x6x6xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.slice %[[Y]] {dim = 1, start = 8, end = 20} : tensor<2x20x6x6xf32> -> tensor<2x12x6x6xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[A]]
// CHECK-NEXT:    %[[S:.*]] = graph.relu %[[B]]
// CHECK-NOT:     graph.conv2d
// FR-LABEL:  func.func @inception_reduce(
// FR:          dataflow.task "conv2d_0" contraction {{.*}} -> (tensor<2x20x6x6xf32>, tensor<2x12x6x6xf32>, tensor<2x8x6x6xf32>)
// FR:          dataflow.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x20x6x6xf32>, tensor<2x12x6x6xf32>, tensor<2x8x6x6xf32>
// FR-NOT:      dataflow.task
func.func @inception_reduce(%x: tensor<2x16x6x6xf32> {kitsune.name = "x", kitsune.kind = "input"},
                            %w1: tensor<8x16x1x1xf32> {kitsune.name = "a.weight", kitsune.kind = "parameter"},
                            %b1: tensor<8xf32> {kitsune.name = "a.bias", kitsune.kind = "parameter"},
                            %w2: tensor<12x16x1x1xf32> {kitsune.name = "b.weight", kitsune.kind = "parameter"},
                            %b2: tensor<12xf32> {kitsune.name = "b.bias", kitsune.kind = "parameter"})
    -> (tensor<2x8x6x6xf32>, tensor<2x12x6x6xf32>) {
  %y1 = graph.conv2d %x, %w1, %b1 : tensor<2x16x6x6xf32>, tensor<8x16x1x1xf32>, tensor<8xf32> -> tensor<2x8x6x6xf32>
  %y2 = graph.conv2d %x, %w2, %b2 : tensor<2x16x6x6xf32>, tensor<12x16x1x1xf32>, tensor<12xf32> -> tensor<2x12x6x6xf32>
  %r1 = graph.relu %y1 : tensor<2x8x6x6xf32> -> tensor<2x8x6x6xf32>
  %r2 = graph.relu %y2 : tensor<2x12x6x6xf32> -> tensor<2x12x6x6xf32>
  func.return %r1, %r2 : tensor<2x8x6x6xf32>, tensor<2x12x6x6xf32>
}

// -----

// Weights that are inputs (a training graph's, new every step) and convolutions of other windows stay apart.
// CHECK-LABEL: func.func @no_siblings(
// CHECK-COUNT-2: graph.conv2d
// CHECK-NOT:     concat(
// FR-LABEL:  func.func @no_siblings(
// FR-COUNT-2:  dataflow.task "conv2d_
func.func @no_siblings(%x: tensor<2x16x6x6xf32> {kitsune.name = "x", kitsune.kind = "input"},
                       %w1: tensor<8x16x1x1xf32> {kitsune.name = "a.weight", kitsune.kind = "input"},
                       %w2: tensor<12x16x1x1xf32> {kitsune.name = "b.weight", kitsune.kind = "input"})
    -> (tensor<2x8x6x6xf32>, tensor<2x12x6x6xf32>) {
  %y1 = graph.conv2d %x, %w1 : tensor<2x16x6x6xf32>, tensor<8x16x1x1xf32> -> tensor<2x8x6x6xf32>
  %y2 = graph.conv2d %x, %w2 : tensor<2x16x6x6xf32>, tensor<12x16x1x1xf32> -> tensor<2x12x6x6xf32>
  func.return %y1, %y2 : tensor<2x8x6x6xf32>, tensor<2x12x6x6xf32>
}
