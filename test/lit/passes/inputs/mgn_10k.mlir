builtin.module {
  func.func @main(%0: tensor<8x24xf32> {kitsune.name = "edge_mlp.fc1.weight", kitsune.kind = "parameter"}, %1: tensor<8xf32> {kitsune.name = "edge_mlp.fc1.bias", kitsune.kind = "parameter"}, %2: tensor<8x8xf32> {kitsune.name = "edge_mlp.fc2.weight", kitsune.kind = "parameter"}, %3: tensor<8xf32> {kitsune.name = "edge_mlp.fc2.bias", kitsune.kind = "parameter"}, %4: tensor<8xf32> {kitsune.name = "edge_mlp.norm.weight", kitsune.kind = "parameter"}, %5: tensor<8xf32> {kitsune.name = "edge_mlp.norm.bias", kitsune.kind = "parameter"}, %6: tensor<8x16xf32> {kitsune.name = "node_mlp.fc1.weight", kitsune.kind = "parameter"}, %7: tensor<8xf32> {kitsune.name = "node_mlp.fc1.bias", kitsune.kind = "parameter"}, %8: tensor<8x8xf32> {kitsune.name = "node_mlp.fc2.weight", kitsune.kind = "parameter"}, %9: tensor<8xf32> {kitsune.name = "node_mlp.fc2.bias", kitsune.kind = "parameter"}, %10: tensor<8xf32> {kitsune.name = "node_mlp.norm.weight", kitsune.kind = "parameter"}, %11: tensor<8xf32> {kitsune.name = "node_mlp.norm.bias", kitsune.kind = "parameter"}, %12: tensor<200x8xf32> {kitsune.name = "x", kitsune.kind = "input"}, %13: tensor<1200x8xf32> {kitsune.name = "e", kitsune.kind = "input"}, %14: tensor<1200xi64> {kitsune.name = "src", kitsune.kind = "input"}, %15: tensor<1200xi64> {kitsune.name = "dst", kitsune.kind = "input"}) -> (tensor<200x8xf32> {kitsune.name = "add"}, tensor<1200x8xf32> {kitsune.name = "add_1"}) {
    %16 = graph.index_select %12, %14 {dim = 0} : tensor<200x8xf32>, tensor<1200xi64> -> tensor<1200x8xf32>
    %17 = graph.index_select %12, %15 {dim = 0} : tensor<200x8xf32>, tensor<1200xi64> -> tensor<1200x8xf32>
    %18 = graph.concat %16, %17, %13 {dim = 1} : tensor<1200x8xf32>, tensor<1200x8xf32>, tensor<1200x8xf32> -> tensor<1200x24xf32>
    %19 = graph.linear %18, %0, %1 : tensor<1200x24xf32>, tensor<8x24xf32>, tensor<8xf32> -> tensor<1200x8xf32>
    %20 = graph.relu %19 : tensor<1200x8xf32> -> tensor<1200x8xf32>
    %21 = graph.linear %20, %2, %3 : tensor<1200x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<1200x8xf32>
    %22 = graph.layer_norm %21, %4, %5 : tensor<1200x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<1200x8xf32>
    %23 = graph.constant dense<0.000000e+00> : tensor<200x8xf32>
    %24 = graph.index_add %23, %15, %22 {dim = 0} : tensor<200x8xf32>, tensor<1200xi64>, tensor<1200x8xf32> -> tensor<200x8xf32>
    %25 = graph.concat %12, %24 {dim = 1} : tensor<200x8xf32>, tensor<200x8xf32> -> tensor<200x16xf32>
    %26 = graph.linear %25, %6, %7 : tensor<200x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<200x8xf32>
    %27 = graph.relu %26 : tensor<200x8xf32> -> tensor<200x8xf32>
    %28 = graph.linear %27, %8, %9 : tensor<200x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<200x8xf32>
    %29 = graph.layer_norm %28, %10, %11 : tensor<200x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<200x8xf32>
    %30 = graph.add %12, %29 : tensor<200x8xf32>, tensor<200x8xf32> -> tensor<200x8xf32>
    %31 = graph.add %13, %22 : tensor<1200x8xf32>, tensor<1200x8xf32> -> tensor<1200x8xf32>
    func.return %30, %31 : tensor<200x8xf32>, tensor<1200x8xf32>
  }
}
