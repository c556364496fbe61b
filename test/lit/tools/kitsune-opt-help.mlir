// kitsune-opt --help lists the Kitsune passes with their summaries; -p knows them;
// -o writes the output file when everything succeeds.
// RUN: kitsune-opt --help | filecheck %s
// RUN: kitsune-opt --help | filecheck %s --check-prefix=PIPELINE
// RUN: rm -f %t && kitsune-opt %s -p graph-canonicalize,graph-decompose -o %t && filecheck %s --input-file=%t --check-prefix=OUT

// CHECK:      usage: kitsune-opt
// CHECK:      Kitsune modular optimizer driver.
// CHECK:      Kitsune passes (-p NAME or -p 'NAME{option=value}'):
// CHECK-DAG:  graph-canonicalize {{ +}}Local simplifications: fold transposes into matmul, matmul+bias -> linear, merge reshapes / permutes, drop identity reshape / expand / cast / permute / slice, dead code.
// CHECK-DAG:  graph-decompose {{ +}}Decompose composite graph ops (softmax, norms, gelu, silu, linear, mean, attention) into primitives.
// CHECK:      -p PASSES, --passes PASSES

// The -p help lists the registered pass names (xDSL's and Kitsune's).
// PIPELINE: -p PASSES, --passes PASSES
// PIPELINE: {{.*}}graph-canonicalize,graph-{{$}}
// PIPELINE-NEXT: decompose,

// OUT:      func.func @main(%x: tensor<8x4xf32>, %w: tensor<4x8xf32>) -> tensor<4x4xf32> {
// OUT-NEXT:   %m = graph.matmul %x, %w {transpose_a = true, transpose_b = true} : tensor<8x4xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
// OUT-NEXT:   %0 = graph.amax %m {dims = [1], keepdim = true}
// OUT:        func.return
func.func @main(%x: tensor<8x4xf32>, %w: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %xt = graph.permute %x {perm = [1, 0]} : tensor<8x4xf32> -> tensor<4x8xf32>
  %wt = graph.permute %w {perm = [1, 0]} : tensor<4x8xf32> -> tensor<8x4xf32>
  %m = graph.matmul %xt, %wt : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  %y = graph.softmax %m : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}
