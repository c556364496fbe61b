func.func @main(%x: tensor<640x8192xbf16> {kitsune.name = "x", kitsune.kind = "input"}, %w1: tensor<1024x8192xbf16> {kitsune.name = "w1", kitsune.kind = "parameter"}, %w2: tensor<128x1024xbf16> {kitsune.name = "w2", kitsune.kind = "parameter"}) -> tensor<640x128xbf16> {
  %h = graph.linear %x, %w1 : tensor<640x8192xbf16>, tensor<1024x8192xbf16> -> tensor<640x1024xbf16>
  %g = graph.relu %h : tensor<640x1024xbf16> -> tensor<640x1024xbf16>
  %y = graph.linear %g, %w2 : tensor<640x1024xbf16>, tensor<128x1024xbf16> -> tensor<640x128xbf16>
  func.return %y : tensor<640x128xbf16>
}
