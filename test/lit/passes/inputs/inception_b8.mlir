builtin.module {
  func.func @main(%0: tensor<1x6x1x1xf32> {kitsune.name = "b1.weight", kitsune.kind = "parameter"}, %1: tensor<1xf32> {kitsune.name = "b1.bias", kitsune.kind = "parameter"}, %2: tensor<2x6x1x1xf32> {kitsune.name = "b2_reduce.weight", kitsune.kind = "parameter"}, %3: tensor<2xf32> {kitsune.name = "b2_reduce.bias", kitsune.kind = "parameter"}, %4: tensor<3x2x3x3xf32> {kitsune.name = "b2.weight", kitsune.kind = "parameter"}, %5: tensor<3xf32> {kitsune.name = "b2.bias", kitsune.kind = "parameter"}, %6: tensor<1x6x1x1xf32> {kitsune.name = "b3_reduce.weight", kitsune.kind = "parameter"}, %7: tensor<1xf32> {kitsune.name = "b3_reduce.bias", kitsune.kind = "parameter"}, %8: tensor<1x1x5x5xf32> {kitsune.name = "b3.weight", kitsune.kind = "parameter"}, %9: tensor<1xf32> {kitsune.name = "b3.bias", kitsune.kind = "parameter"}, %10: tensor<1x6x1x1xf32> {kitsune.name = "b4.weight", kitsune.kind = "parameter"}, %11: tensor<1xf32> {kitsune.name = "b4.bias", kitsune.kind = "parameter"}, %12: tensor<8x6x4x4xf32> {kitsune.name = "x", kitsune.kind = "input"}) -> (tensor<8x6x4x4xf32> {kitsune.name = "relu_2"}) {
    %13 = graph.conv2d %12, %0, %1 : tensor<8x6x4x4xf32>, tensor<1x6x1x1xf32>, tensor<1xf32> -> tensor<8x1x4x4xf32>
    %14 = graph.conv2d %12, %2, %3 : tensor<8x6x4x4xf32>, tensor<2x6x1x1xf32>, tensor<2xf32> -> tensor<8x2x4x4xf32>
    %15 = graph.relu %14 : tensor<8x2x4x4xf32> -> tensor<8x2x4x4xf32>
    %16 = graph.conv2d %15, %4, %5 {padding = [1, 1]} : tensor<8x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32> -> tensor<8x3x4x4xf32>
    %17 = graph.conv2d %12, %6, %7 : tensor<8x6x4x4xf32>, tensor<1x6x1x1xf32>, tensor<1xf32> -> tensor<8x1x4x4xf32>
    %18 = graph.relu %17 : tensor<8x1x4x4xf32> -> tensor<8x1x4x4xf32>
    %19 = graph.conv2d %18, %8, %9 {padding = [2, 2]} : tensor<8x1x4x4xf32>, tensor<1x1x5x5xf32>, tensor<1xf32> -> tensor<8x1x4x4xf32>
    %20 = graph.max_pool2d %12 {kernel = [3, 3], stride = [1, 1], padding = [1, 1]} : tensor<8x6x4x4xf32> -> tensor<8x6x4x4xf32>
    %21 = graph.conv2d %20, %10, %11 : tensor<8x6x4x4xf32>, tensor<1x6x1x1xf32>, tensor<1xf32> -> tensor<8x1x4x4xf32>
    %22 = graph.concat %13, %16, %19, %21 {dim = 1} : tensor<8x1x4x4xf32>, tensor<8x3x4x4xf32>, tensor<8x1x4x4xf32>, tensor<8x1x4x4xf32> -> tensor<8x6x4x4xf32>
    %23 = graph.relu %22 : tensor<8x6x4x4xf32> -> tensor<8x6x4x4xf32>
    func.return %23 : tensor<8x6x4x4xf32>
  }
}
