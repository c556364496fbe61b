// A verifier error (not a parse error): one line with file:line:col, exit code
// exactly 1, no traceback, no output file.
// RUN: not kitsune-opt %s 2>&1 | filecheck %s
// RUN: %python -c "import subprocess, sys; sys.exit(subprocess.run(['kitsune-opt', sys.argv[1]], capture_output=True).returncode != 1)" %s
// RUN: rm -f %t && not kitsune-opt %s -o %t && not test -e %t

func.func @main(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) -> tensor<4x16xf32> {
  // CHECK: kitsune-opt: error: {{.*}}shape-mismatch.mlir:[[# @LINE + 1]]:3: 'graph.matmul' size mismatch for index 'k': b dim 0 has size 7 but a dim 1 has size 8
  %y = graph.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
// CHECK-NOT: Traceback
// CHECK-NOT: builtin.module
