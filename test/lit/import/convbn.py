# RUN: kitsune-import %S/inputs/convbn.py | filecheck %s

# CHECK: tensor<8x3x3x3xf32> {kitsune.name = "conv.weight", kitsune.kind = "parameter"}
# CHECK-SAME: tensor<8xf32> {kitsune.name = "bn.running_mean", kitsune.kind = "buffer"}
# CHECK: graph.conv2d {{.*}} {padding = [1, 1]} : tensor<2x3x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<2x8x8x8xf32>
# CHECK: graph.batch_norm
# CHECK: graph.relu
# CHECK: graph.max_pool2d {{.*}} {kernel = [2, 2], stride = [2, 2]} : tensor<2x8x8x8xf32> -> tensor<2x8x4x4xf32>

