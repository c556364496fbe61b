// The whole lowering graph -> gpu_queue in one pass, per mode, on small workloads.

// RUN: kitsune-opt %S/inputs/mlp_gpt3_T256.mlir -p 'kitsune-pipeline{mode=dataflow}' | filecheck %s --check-prefix=MLP-DF
// MLP-DF-NOT: dataflow.
// MLP-DF-NOT: graph.linear %{{.*}} : tensor<5x248xf32>, tensor<120x248xf32>, tensor<120xf32> -> tensor<5x120xf32>{{$}}
// MLP-DF: gpu_queue.program
// MLP-DF: gpu_queue.kernel "k0" grid {{[0-9]+}} warps {{[0-9]+}} smem {{[0-9]+}}
// MLP-DF: gpu_queue.stage "linear_0{{.*}}" pids [0, {{[0-9]+}})
// MLP-DF: gpu_queue.launch_plan
// MLP-DF: func.return

// RUN: kitsune-opt %S/inputs/mlp_gpt3_T256.mlir -p 'kitsune-pipeline{mode=bulk-sync gpu=h200 report=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=MLP-BS
// MLP-BS: kitsune-allocate-sms (h200, 132 SMs):
// MLP-BS: kernel "k0": 1 stage(s)
// MLP-BS: kernel "k1": 1 stage(s)

// RUN: kitsune-opt %S/inputs/dlrm_b2048.mlir -p 'kitsune-pipeline{mode=dataflow placement=spatial report=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=DLRM-DF
// DLRM-DF: kernel "k0": 11 stage(s)
// DLRM-DF: stage "linear_2": {{[0-9]+}} SMs
// DLRM-DF-COUNT-8: stage "embedding_bag_{{[0-9]+}}": {{[0-9]+}} SMs
// DLRM-DF: kernel "k1": 1 stage(s)
// DLRM-DF: stage "matmul_11"

// RUN: kitsune-opt %S/inputs/inception_b8.mlir -p 'kitsune-pipeline{mode=dataflow placement=spatial}' | filecheck %s --check-prefix=INC-DF
// INC-DF: gpu_queue.kernel "k0"
// The three 1x1 convolutions of x are one (kitsune-merge-siblings), its three slices its results beside the
// merged output (unused: no kernel result for it), next to the pool.
// INC-DF: gpu_queue.stage "conv2d_0" pids [0, [[A:[0-9]+]]) {{.*}} -> (tensor<8x4x4x4xf32>, tensor<8x2x4x4xf32>, tensor<8x1x4x4xf32>, tensor<8x1x4x4xf32>)
// INC-DF: gpu_queue.stage "max_pool2d_3" pids [[[A]], {{[0-9]+}})
// INC-DF: gpu_queue.kernel "k1"
// INC-DF: gpu_queue.stage "conv2d_1" pids [0, [[B:[0-9]+]])
// INC-DF: gpu_queue.stage "conv2d_2" pids [[[B]], [[C:[0-9]+]])
// INC-DF: gpu_queue.stage "conv2d_4" pids [[[C]], {{[0-9]+}})
// The concat of the four branches recomputes none of them: it joins none of its producers (a concat of
// several computed results) and reads all four from memory, one level after the second convolutions.
// INC-DF: gpu_queue.stage "concat_5"
// INC-DF: gpu_queue.launch_plan ["k0", "k1", "k2"]

// RUN: kitsune-opt %S/inputs/llama_decode_b1.mlir -p 'kitsune-pipeline{mode=dataflow placement=spatial}' | filecheck %s --check-prefix=LLAMA-DF
// LLAMA-DF: gpu_queue.stage "linear_0_part0"
// LLAMA-DF: gpu_queue.queue
// LLAMA-DF: gpu_queue.pop
// LLAMA-DF: gpu_queue.launch_plan
// RUN: kitsune-opt %S/inputs/llama_decode_b1.mlir -p 'kitsune-pipeline{mode=bulk-sync}' | filecheck %s --check-prefix=LLAMA-BS
// LLAMA-BS-NOT: gpu_queue.queue
// LLAMA-BS: gpu_queue.launch_plan

// RUN: kitsune-opt %S/inputs/nerf_65k.mlir -p 'kitsune-pipeline{mode=dataflow}' | kitsune-opt | filecheck %s --check-prefix=NERF
// RUN: kitsune-opt %S/inputs/mgn_10k.mlir -p 'kitsune-pipeline{mode=bulk-sync}' | kitsune-opt | filecheck %s --check-prefix=NERF
// NERF: gpu_queue.launch_plan

// RUN: not kitsune-opt %S/inputs/mlp_gpt3_T256.mlir -p 'kitsune-pipeline{gpu=a100}' 2>&1 | filecheck %s --check-prefix=BADGPU
// BADGPU: kitsune-opt: error: {{.*}}unknown GPU 'a100'; presets: h100, h200
