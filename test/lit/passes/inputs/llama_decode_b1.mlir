builtin.module {
  func.func @main(%0: tensor<256xf32> {kitsune.name = "attn_norm.weight", kitsune.kind = "parameter"}, %1: tensor<384x256xf32> {kitsune.name = "qkv.weight", kitsune.kind = "parameter"}, %2: tensor<256x256xf32> {kitsune.name = "o.weight", kitsune.kind = "parameter"}, %3: tensor<256xf32> {kitsune.name = "mlp_norm.weight", kitsune.kind = "parameter"}, %4: tensor<2048x256xf32> {kitsune.name = "gate_up.weight", kitsune.kind = "parameter"}, %5: tensor<256x1024xf32> {kitsune.name = "down.weight", kitsune.kind = "parameter"}, %6: tensor<1x1x20x64xf32> {kitsune.name = "cache_k", kitsune.kind = "buffer"}, %7: tensor<1x1x20x64xf32> {kitsune.name = "cache_v", kitsune.kind = "buffer"}, %8: tensor<1x1x256xf32> {kitsune.name = "x", kitsune.kind = "input"}) -> (tensor<1x1x256xf32> {kitsune.name = "add_3"}) {
    %9 = graph.pow %8 {exponent = 2.0} : tensor<1x1x256xf32> -> tensor<1x1x256xf32>
    %10 = graph.mean %9 {dims = [2], keepdim = true} : tensor<1x1x256xf32> -> tensor<1x1x1xf32>
    %11 = graph.constant dense<1.000000e-05> : tensor<f32>
    %12 = graph.add %10, %11 : tensor<1x1x1xf32>, tensor<f32> -> tensor<1x1x1xf32>
    %13 = graph.rsqrt %12 : tensor<1x1x1xf32> -> tensor<1x1x1xf32>
    %14 = graph.mul %8, %13 : tensor<1x1x256xf32>, tensor<1x1x1xf32> -> tensor<1x1x256xf32>
    %15 = graph.mul %14, %0 : tensor<1x1x256xf32>, tensor<256xf32> -> tensor<1x1x256xf32>
    %16 = graph.linear %15, %1 : tensor<1x1x256xf32>, tensor<384x256xf32> -> tensor<1x1x384xf32>
    %17 = graph.slice %16 {dim = 2, end = 256} : tensor<1x1x384xf32> -> tensor<1x1x256xf32>
    %18 = graph.reshape %17 : tensor<1x1x256xf32> -> tensor<1x1x4x64xf32>
    %19 = graph.permute %18 {perm = [0, 2, 1, 3]} : tensor<1x1x4x64xf32> -> tensor<1x4x1x64xf32>
    %20 = graph.slice %16 {dim = 2, start = 256, end = 320} : tensor<1x1x384xf32> -> tensor<1x1x64xf32>
    %21 = graph.reshape %20 : tensor<1x1x64xf32> -> tensor<1x1x1x64xf32>
    %22 = graph.permute %21 {perm = [0, 2, 1, 3]} : tensor<1x1x1x64xf32> -> tensor<1x1x1x64xf32>
    %23 = graph.slice %16 {dim = 2, start = 320, end = 384} : tensor<1x1x384xf32> -> tensor<1x1x64xf32>
    %24 = graph.reshape %23 : tensor<1x1x64xf32> -> tensor<1x1x1x64xf32>
    %25 = graph.permute %24 {perm = [0, 2, 1, 3]} : tensor<1x1x1x64xf32> -> tensor<1x1x1x64xf32>
    %26 = graph.concat %6, %22 {dim = 2} : tensor<1x1x20x64xf32>, tensor<1x1x1x64xf32> -> tensor<1x1x21x64xf32>
    %27 = graph.concat %7, %25 {dim = 2} : tensor<1x1x20x64xf32>, tensor<1x1x1x64xf32> -> tensor<1x1x21x64xf32>
    %28 = graph.attention %19, %26, %27 : tensor<1x4x1x64xf32>, tensor<1x1x21x64xf32>, tensor<1x1x21x64xf32> -> tensor<1x4x1x64xf32>
    %29 = graph.permute %28 {perm = [0, 2, 1, 3]} : tensor<1x4x1x64xf32> -> tensor<1x1x4x64xf32>
    %30 = graph.reshape %29 : tensor<1x1x4x64xf32> -> tensor<1x1x256xf32>
    %31 = graph.linear %30, %2 : tensor<1x1x256xf32>, tensor<256x256xf32> -> tensor<1x1x256xf32>
    %32 = graph.add %8, %31 : tensor<1x1x256xf32>, tensor<1x1x256xf32> -> tensor<1x1x256xf32>
    %33 = graph.pow %32 {exponent = 2.0} : tensor<1x1x256xf32> -> tensor<1x1x256xf32>
    %34 = graph.mean %33 {dims = [2], keepdim = true} : tensor<1x1x256xf32> -> tensor<1x1x1xf32>
    %35 = graph.add %34, %11 : tensor<1x1x1xf32>, tensor<f32> -> tensor<1x1x1xf32>
    %36 = graph.rsqrt %35 : tensor<1x1x1xf32> -> tensor<1x1x1xf32>
    %37 = graph.mul %32, %36 : tensor<1x1x256xf32>, tensor<1x1x1xf32> -> tensor<1x1x256xf32>
    %38 = graph.mul %37, %3 : tensor<1x1x256xf32>, tensor<256xf32> -> tensor<1x1x256xf32>
    %39 = graph.linear %38, %4 : tensor<1x1x256xf32>, tensor<2048x256xf32> -> tensor<1x1x2048xf32>
    %40 = graph.slice %39 {dim = 2, end = 1024} : tensor<1x1x2048xf32> -> tensor<1x1x1024xf32>
    %41 = graph.slice %39 {dim = 2, start = 1024, end = 2048} : tensor<1x1x2048xf32> -> tensor<1x1x1024xf32>
    %42 = graph.silu %40 : tensor<1x1x1024xf32> -> tensor<1x1x1024xf32>
    %43 = graph.mul %42, %41 : tensor<1x1x1024xf32>, tensor<1x1x1024xf32> -> tensor<1x1x1024xf32>
    %44 = graph.linear %43, %5 : tensor<1x1x1024xf32>, tensor<256x1024xf32> -> tensor<1x1x256xf32>
    %45 = graph.add %32, %44 : tensor<1x1x256xf32>, tensor<1x1x256xf32> -> tensor<1x1x256xf32>
    func.return %45 : tensor<1x1x256xf32>
  }
}
