// A small MLP block: linear -> gelu -> linear -> layer norm -> softmax.
func.func @main(%x: tensor<8x32xf32>, %w1: tensor<64x32xf32>, %b1: tensor<64xf32>,
                %w2: tensor<32x64xf32>, %b2: tensor<32xf32>) -> tensor<8x32xf32> {
  %h = graph.linear %x, %w1, %b1 : tensor<8x32xf32>, tensor<64x32xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %g = graph.gelu %h : tensor<8x64xf32> -> tensor<8x64xf32>
  %y = graph.linear %g, %w2, %b2 : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32> -> tensor<8x32xf32>
  %r = graph.add %y, %x : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  %n = graph.layer_norm %r : tensor<8x32xf32> -> tensor<8x32xf32>
  %s = graph.softmax %n {dim = 1} : tensor<8x32xf32> -> tensor<8x32xf32>
  func.return %s : tensor<8x32xf32>
}
