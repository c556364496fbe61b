builtin.module {
  func.func @main(%0: tensor<8x13xf32> {kitsune.name = "bottom.0.weight", kitsune.kind = "parameter"}, %1: tensor<8xf32> {kitsune.name = "bottom.0.bias", kitsune.kind = "parameter"}, %2: tensor<8x8xf32> {kitsune.name = "bottom.1.weight", kitsune.kind = "parameter"}, %3: tensor<8xf32> {kitsune.name = "bottom.1.bias", kitsune.kind = "parameter"}, %4: tensor<8x8xf32> {kitsune.name = "bottom.2.weight", kitsune.kind = "parameter"}, %5: tensor<8xf32> {kitsune.name = "bottom.2.bias", kitsune.kind = "parameter"}, %6: tensor<2000x8xf32> {kitsune.name = "emb.0.weight", kitsune.kind = "parameter"}, %7: tensor<2000x8xf32> {kitsune.name = "emb.1.weight", kitsune.kind = "parameter"}, %8: tensor<2000x8xf32> {kitsune.name = "emb.2.weight", kitsune.kind = "parameter"}, %9: tensor<2000x8xf32> {kitsune.name = "emb.3.weight", kitsune.kind = "parameter"}, %10: tensor<2000x8xf32> {kitsune.name = "emb.4.weight", kitsune.kind = "parameter"}, %11: tensor<2000x8xf32> {kitsune.name = "emb.5.weight", kitsune.kind = "parameter"}, %12: tensor<2000x8xf32> {kitsune.name = "emb.6.weight", kitsune.kind = "parameter"}, %13: tensor<2000x8xf32> {kitsune.name = "emb.7.weight", kitsune.kind = "parameter"}, %14: tensor<8x44xf32> {kitsune.name = "top.0.weight", kitsune.kind = "parameter"}, %15: tensor<8xf32> {kitsune.name = "top.0.bias", kitsune.kind = "parameter"}, %16: tensor<8x8xf32> {kitsune.name = "top.1.weight", kitsune.kind = "parameter"}, %17: tensor<8xf32> {kitsune.name = "top.1.bias", kitsune.kind = "parameter"}, %18: tensor<1x8xf32> {kitsune.name = "top.2.weight", kitsune.kind = "parameter"}, %19: tensor<1xf32> {kitsune.name = "top.2.bias", kitsune.kind = "parameter"}, %20: tensor<36xi64> {kitsune.name = "tri_idx", kitsune.kind = "buffer"}, %21: tensor<41x13xf32> {kitsune.name = "dense", kitsune.kind = "input"}, %22: tensor<8x41x20xi64> {kitsune.name = "indices", kitsune.kind = "input"}) -> (tensor<41x1xf32> {kitsune.name = "linear_5"}) {
    %23 = graph.linear %21, %0, %1 : tensor<41x13xf32>, tensor<8x13xf32>, tensor<8xf32> -> tensor<41x8xf32>
    %24 = graph.relu %23 : tensor<41x8xf32> -> tensor<41x8xf32>
    %25 = graph.linear %24, %2, %3 : tensor<41x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<41x8xf32>
    %26 = graph.relu %25 : tensor<41x8xf32> -> tensor<41x8xf32>
    %27 = graph.linear %26, %4, %5 : tensor<41x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<41x8xf32>
    %28 = graph.relu %27 : tensor<41x8xf32> -> tensor<41x8xf32>
    %29 = graph.slice %22 {dim = 0, end = 1} : tensor<8x41x20xi64> -> tensor<1x41x20xi64>
    %30 = graph.reshape %29 : tensor<1x41x20xi64> -> tensor<41x20xi64>
    %31 = graph.embedding_bag %6, %30 : tensor<2000x8xf32>, tensor<41x20xi64> -> tensor<41x8xf32>
    %32 = graph.slice %22 {dim = 0, start = 1, end = 2} : tensor<8x41x20xi64> -> tensor<1x41x20xi64>
    %33 = graph.reshape %32 : tensor<1x41x20xi64> -> tensor<41x20xi64>
    %34 = graph.embedding_bag %7, %33 : tensor<2000x8xf32>, tensor<41x20xi64> -> tensor<41x8xf32>
    %35 = graph.slice %22 {dim = 0, start = 2, end = 3} : tensor<8x41x20xi64> -> tensor<1x41x20xi64>
    %36 = graph.reshape %35 : tensor<1x41x20xi64> -> tensor<41x20xi64>
    %37 = graph.embedding_bag %8, %36 : tensor<2000x8xf32>, tensor<41x20xi64> -> tensor<41x8xf32>
    %38 = graph.slice %22 {dim = 0, start = 3, end = 4} : tensor<8x41x20xi64> -> tensor<1x41x20xi64>
    %39 = graph.reshape %38 : tensor<1x41x20xi64> -> tensor<41x20xi64>
    %40 = graph.embedding_bag %9, %39 : tensor<2000x8xf32>, tensor<41x20xi64> -> tensor<41x8xf32>
    %41 = graph.slice %22 {dim = 0, start = 4, end = 5} : tensor<8x41x20xi64> -> tensor<1x41x20xi64>
    %42 = graph.reshape %41 : tensor<1x41x20xi64> -> tensor<41x20xi64>
    %43 = graph.embedding_bag %10, %42 : tensor<2000x8xf32>, tensor<41x20xi64> -> tensor<41x8xf32>
    %44 = graph.slice %22 {dim = 0, start = 5, end = 6} : tensor<8x41x20xi64> -> tensor<1x41x20xi64>
    %45 = graph.reshape %44 : tensor<1x41x20xi64> -> tensor<41x20xi64>
    %46 = graph.embedding_bag %11, %45 : tensor<2000x8xf32>, tensor<41x20xi64> -> tensor<41x8xf32>
    %47 = graph.slice %22 {dim = 0, start = 6, end = 7} : tensor<8x41x20xi64> -> tensor<1x41x20xi64>
    %48 = graph.reshape %47 : tensor<1x41x20xi64> -> tensor<41x20xi64>
    %49 = graph.embedding_bag %12, %48 : tensor<2000x8xf32>, tensor<41x20xi64> -> tensor<41x8xf32>
    %50 = graph.slice %22 {dim = 0, start = 7, end = 8} : tensor<8x41x20xi64> -> tensor<1x41x20xi64>
    %51 = graph.reshape %50 : tensor<1x41x20xi64> -> tensor<41x20xi64>
    %52 = graph.embedding_bag %13, %51 : tensor<2000x8xf32>, tensor<41x20xi64> -> tensor<41x8xf32>
    %53 = graph.concat %28, %31, %34, %37, %40, %43, %46, %49, %52 {dim = 1} : tensor<41x8xf32>, tensor<41x8xf32>, tensor<41x8xf32>, tensor<41x8xf32>, tensor<41x8xf32>, tensor<41x8xf32>, tensor<41x8xf32>, tensor<41x8xf32>, tensor<41x8xf32> -> tensor<41x72xf32>
    %54 = graph.reshape %53 : tensor<41x72xf32> -> tensor<41x9x8xf32>
    %55 = graph.permute %54 {perm = [0, 2, 1]} : tensor<41x9x8xf32> -> tensor<41x8x9xf32>
    %56 = graph.matmul %54, %55 : tensor<41x9x8xf32>, tensor<41x8x9xf32> -> tensor<41x9x9xf32>
    %57 = graph.reshape %56 : tensor<41x9x9xf32> -> tensor<41x81xf32>
    %58 = graph.index_select %57, %20 {dim = 1} : tensor<41x81xf32>, tensor<36xi64> -> tensor<41x36xf32>
    %59 = graph.concat %28, %58 {dim = 1} : tensor<41x8xf32>, tensor<41x36xf32> -> tensor<41x44xf32>
    %60 = graph.linear %59, %14, %15 : tensor<41x44xf32>, tensor<8x44xf32>, tensor<8xf32> -> tensor<41x8xf32>
    %61 = graph.relu %60 : tensor<41x8xf32> -> tensor<41x8xf32>
    %62 = graph.linear %61, %16, %17 : tensor<41x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<41x8xf32>
    %63 = graph.relu %62 : tensor<41x8xf32> -> tensor<41x8xf32>
    %64 = graph.linear %63, %18, %19 : tensor<41x8xf32>, tensor<1x8xf32>, tensor<1xf32> -> tensor<41x1xf32>
    func.return %64 : tensor<41x1xf32>
  }
}
