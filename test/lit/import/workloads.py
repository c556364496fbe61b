# RUN: kitsune-import --list | filecheck %s --check-prefix=LIST
# RUN: kitsune-import --workload nerf_65k --scale 0.02 --no-loc | filecheck %s
# RUN: not kitsune-import --workload nope 2>&1 | filecheck %s --check-prefix=BAD

# LIST: mlp_gpt3_T1024
# LIST: nerf_65k
# LIST: inception_b8

# CHECK: kitsune.name = "layers.0.weight", kitsune.kind = "parameter"
# CHECK: graph.linear
# CHECK: graph.relu
# CHECK: graph.concat
# CHECK: func.return


# BAD: kitsune-import: error: {{.*}}unknown workload 'nope'
