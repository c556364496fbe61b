# RUN: rm -f %t.mlir %t.npz
# RUN: kitsune-import %S/inputs/mlp.py -o %t.mlir --weights %t.npz
# RUN: filecheck %s < %t.mlir
# RUN: %python -c "import numpy as np; w = np.load('%t.npz'); print(sorted(w.keys()), w['fc1.weight'].shape)" | filecheck %s --check-prefix=NPZ
# RUN: kitsune-run %t.mlir --inputs %t.npz | filecheck %s --check-prefix=OUT

# CHECK: func.func @main(
# CHECK-SAME: %{{.*}}: tensor<32x16xf32> {kitsune.name = "fc1.weight", kitsune.kind = "parameter"}
# CHECK-SAME: tensor<32xf32> {kitsune.name = "fc1.bias", kitsune.kind = "parameter"}
# CHECK-SAME: tensor<16xf32> {kitsune.name = "scale", kitsune.kind = "buffer"}
# CHECK-SAME: %[[X:[0-9]+]]: tensor<4x16xf32> {kitsune.name = "x", kitsune.kind = "input"})
# CHECK-SAME: -> (tensor<4x16xf32> {kitsune.name = "{{.*}}"})
# CHECK: graph.linear %[[X]], %{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32> -> tensor<4x32xf32> loc("{{.*}}inputs/mlp.py":15:9)
# CHECK: graph.gelu {{.*}} loc("{{.*}}inputs/mlp.py":15:9)
# CHECK: graph.linear
# CHECK: graph.add
# CHECK: graph.layer_norm {{.*}} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<4x16xf32> loc("{{.*}}inputs/mlp.py":16:9)
# CHECK: graph.mul
# CHECK: graph.softmax {{.*}}{dim = 1}
# CHECK: func.return

# NPZ: ['fc1.bias', 'fc1.weight', 'fc2.bias', 'fc2.weight', 'norm.bias', 'norm.weight', 'scale'] (32, 16)
# OUT: output #0: shape [4, 16]
