builtin.module {
  func.func @main(%0: tensor<120x248xf32> {kitsune.name = "fc1.weight", kitsune.kind = "parameter"}, %1: tensor<120xf32> {kitsune.name = "fc1.bias", kitsune.kind = "parameter"}, %2: tensor<248x120xf32> {kitsune.name = "fc2.weight", kitsune.kind = "parameter"}, %3: tensor<248xf32> {kitsune.name = "fc2.bias", kitsune.kind = "parameter"}, %4: tensor<5x248xf32> {kitsune.name = "x", kitsune.kind = "input"}) -> (tensor<5x248xf32> {kitsune.name = "linear_1"}) {
    %5 = graph.linear %4, %0, %1 : tensor<5x248xf32>, tensor<120x248xf32>, tensor<120xf32> -> tensor<5x120xf32>
    %6 = graph.gelu %5 : tensor<5x120xf32> -> tensor<5x120xf32>
    %7 = graph.linear %6, %2, %3 : tensor<5x120xf32>, tensor<248x120xf32>, tensor<248xf32> -> tensor<5x248xf32>
    func.return %7 : tensor<5x248xf32>
  }
}
