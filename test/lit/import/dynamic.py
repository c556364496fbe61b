# A symbolic batch dimension (torch.export.Dim) becomes `?`; the factory is named after the colon.
# RUN: kitsune-import %S/inputs/mlp.py:make_dynamic --no-loc | filecheck %s
# RUN: kitsune-import %S/inputs/mlp.py:make_two_outputs | filecheck %s --check-prefix=TWO

# CHECK: %[[X:[0-9]+]]: tensor<?x16xf32> {kitsune.name = "x", kitsune.kind = "input"}) -> (tensor<?x16xf32>
# CHECK: graph.linear %[[X]], {{.*}} -> tensor<?x32xf32>
# CHECK-NOT: loc(
# CHECK: graph.softmax {{.*}} -> tensor<?x16xf32>

# TWO: func.func @main(%{{.*}}: tensor<2x3xf32> {kitsune.name = "a", kitsune.kind = "input"}, %{{.*}}: tensor<2x3xf32> {kitsune.name = "b", kitsune.kind = "input"}) -> (tensor<2x3xf32> {kitsune.name = "add"}, tensor<2x3xf32> {kitsune.name = "mul"})
# TWO: graph.add
# TWO: graph.relu
# TWO: graph.constant dense<2.000000e+00> : tensor<f32>
# TWO: graph.mul
# TWO: func.return %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32>
