builtin.module {
  func.func @main(%0: tensor<8x63xf32> {kitsune.name = "layers.0.weight", kitsune.kind = "parameter"}, %1: tensor<8xf32> {kitsune.name = "layers.0.bias", kitsune.kind = "parameter"}, %2: tensor<8x8xf32> {kitsune.name = "layers.1.weight", kitsune.kind = "parameter"}, %3: tensor<8xf32> {kitsune.name = "layers.1.bias", kitsune.kind = "parameter"}, %4: tensor<8x8xf32> {kitsune.name = "layers.2.weight", kitsune.kind = "parameter"}, %5: tensor<8xf32> {kitsune.name = "layers.2.bias", kitsune.kind = "parameter"}, %6: tensor<8x8xf32> {kitsune.name = "layers.3.weight", kitsune.kind = "parameter"}, %7: tensor<8xf32> {kitsune.name = "layers.3.bias", kitsune.kind = "parameter"}, %8: tensor<8x71xf32> {kitsune.name = "layers.4.weight", kitsune.kind = "parameter"}, %9: tensor<8xf32> {kitsune.name = "layers.4.bias", kitsune.kind = "parameter"}, %10: tensor<8x8xf32> {kitsune.name = "layers.5.weight", kitsune.kind = "parameter"}, %11: tensor<8xf32> {kitsune.name = "layers.5.bias", kitsune.kind = "parameter"}, %12: tensor<8x8xf32> {kitsune.name = "layers.6.weight", kitsune.kind = "parameter"}, %13: tensor<8xf32> {kitsune.name = "layers.6.bias", kitsune.kind = "parameter"}, %14: tensor<8x8xf32> {kitsune.name = "layers.7.weight", kitsune.kind = "parameter"}, %15: tensor<8xf32> {kitsune.name = "layers.7.bias", kitsune.kind = "parameter"}, %16: tensor<4x8xf32> {kitsune.name = "out.weight", kitsune.kind = "parameter"}, %17: tensor<4xf32> {kitsune.name = "out.bias", kitsune.kind = "parameter"}, %18: tensor<1311x63xf32> {kitsune.name = "x", kitsune.kind = "input"}) -> (tensor<1311x4xf32> {kitsune.name = "linear_8"}) {
    %19 = graph.linear %18, %0, %1 : tensor<1311x63xf32>, tensor<8x63xf32>, tensor<8xf32> -> tensor<1311x8xf32>
    %20 = graph.relu %19 : tensor<1311x8xf32> -> tensor<1311x8xf32>
    %21 = graph.linear %20, %2, %3 : tensor<1311x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<1311x8xf32>
    %22 = graph.relu %21 : tensor<1311x8xf32> -> tensor<1311x8xf32>
    %23 = graph.linear %22, %4, %5 : tensor<1311x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<1311x8xf32>
    %24 = graph.relu %23 : tensor<1311x8xf32> -> tensor<1311x8xf32>
    %25 = graph.linear %24, %6, %7 : tensor<1311x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<1311x8xf32>
    %26 = graph.relu %25 : tensor<1311x8xf32> -> tensor<1311x8xf32>
    %27 = graph.concat %26, %18 {dim = 1} : tensor<1311x8xf32>, tensor<1311x63xf32> -> tensor<1311x71xf32>
    %28 = graph.linear %27, %8, %9 : tensor<1311x71xf32>, tensor<8x71xf32>, tensor<8xf32> -> tensor<1311x8xf32>
    %29 = graph.relu %28 : tensor<1311x8xf32> -> tensor<1311x8xf32>
    %30 = graph.linear %29, %10, %11 : tensor<1311x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<1311x8xf32>
    %31 = graph.relu %30 : tensor<1311x8xf32> -> tensor<1311x8xf32>
    %32 = graph.linear %31, %12, %13 : tensor<1311x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<1311x8xf32>
    %33 = graph.relu %32 : tensor<1311x8xf32> -> tensor<1311x8xf32>
    %34 = graph.linear %33, %14, %15 : tensor<1311x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<1311x8xf32>
    %35 = graph.relu %34 : tensor<1311x8xf32> -> tensor<1311x8xf32>
    %36 = graph.linear %35, %16, %17 : tensor<1311x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<1311x4xf32>
    func.return %36 : tensor<1311x4xf32>
  }
}
