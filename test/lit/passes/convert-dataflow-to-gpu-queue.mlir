// Dataflow graphs -> gpu_queue programs, per mode, on small workloads (inputs: scale 0.02 graph IR).

// GPT MLP: dataflow = one persistent kernel, linear_0 pushes its tiles into a queue that
// linear_1 pops by row bands (linear_0 below linear_1 in program ids); bulk-sync = two kernels.
// RUN: kitsune-opt %S/inputs/mlp_gpt3_T256.mlir -p 'kitsune-form-regions,convert-dataflow-to-gpu-queue{mode=dataflow placement=spatial}' | filecheck %s --check-prefix=MLP-DF
// MLP-DF: gpu_queue.program
// MLP-DF: gpu_queue.kernel "k0" grid 2 warps 4 smem 0
// MLP-DF-NEXT: ^{{.*}}
// MLP-DF-NEXT: gpu_queue.queue "q0" tile [5, 120] capacity 1 : tensor<5x120xf32>
// MLP-DF-NEXT: gpu_queue.stage "linear_0" pids [0, 1) tile [5, 120]
// MLP-DF: gpu_queue.push %{{.*}} into "q0" : tensor<5x120xf32>
// MLP-DF: gpu_queue.stage "linear_1" pids [1, 2) tile [5, 128]
// MLP-DF-NEXT: ^{{.*}}
// MLP-DF-NEXT: gpu_queue.pop "q0" {relation = "rows"} : tensor<5x120xf32>
// MLP-DF: gpu_queue.launch_plan ["k0"] buffers []
// MLP-DF-NOT: gpu_queue.kernel
// RUN: kitsune-opt %S/inputs/mlp_gpt3_T256.mlir -p 'kitsune-form-regions,convert-dataflow-to-gpu-queue{mode=bulk-sync}' | filecheck %s --check-prefix=MLP-BS
// MLP-BS: %[[K0:.*]] = gpu_queue.kernel "k0" grid 1
// MLP-BS-NOT: gpu_queue.queue
// MLP-BS: gpu_queue.stage "linear_0" pids [0, 1)
// MLP-BS: gpu_queue.kernel "k1" grid 1 warps 4 smem 0 (%[[K0]],
// MLP-BS: gpu_queue.stage "linear_1" pids [0, 1)
// MLP-BS: gpu_queue.launch_plan ["k0", "k1"] buffers ["k0#0 -> k1"]

// DLRM: the bottom MLP (its three layers a row-band pipeline) and the 8 embedding bags are independent:
// concurrent stages of one kernel; the interaction reads them all ("all" relation): a kernel boundary.
// RUN: kitsune-opt %S/inputs/dlrm_b2048.mlir -p 'kitsune-form-regions,kitsune-split-reduction,convert-dataflow-to-gpu-queue{mode=dataflow placement=spatial}' | filecheck %s --check-prefix=DLRM-DF
// DLRM-DF: gpu_queue.kernel "k0" grid 11
// DLRM-DF: gpu_queue.stage "linear_0" pids [0, 1)
// DLRM-DF: gpu_queue.stage "linear_1" pids [1, 2)
// DLRM-DF: gpu_queue.pop "q0" {relation = "rows"}
// DLRM-DF: gpu_queue.stage "linear_2" pids [2, 3)
// DLRM-DF: gpu_queue.pop "q1" {relation = "rows"}
// DLRM-DF: gpu_queue.stage "embedding_bag_3" pids [3, 4)
// DLRM-DF: gpu_queue.stage "embedding_bag_10" pids [10, 11)
// DLRM-DF: gpu_queue.kernel "k1" grid 1
// DLRM-DF: gpu_queue.stage "matmul_11" pids [0, 1) tile [1, 9, 9]
// DLRM-DF: gpu_queue.kernel "k2" grid 3
// DLRM-DF: gpu_queue.stage "linear_12" pids [0, 1)
// DLRM-DF: gpu_queue.stage "linear_14" pids [2, 3)
// DLRM-DF-NEXT: ^{{.*}}
// DLRM-DF-NEXT: gpu_queue.pop "q3" {relation = "rows"}
// DLRM-DF: gpu_queue.launch_plan ["k0", "k1", "k2"] buffers ["k0#0 -> k2, k1", {{.*}}, "k1#0 -> k2"]
// RUN: kitsune-opt %S/inputs/dlrm_b2048.mlir -p 'kitsune-form-regions,kitsune-split-reduction,convert-dataflow-to-gpu-queue{mode=bulk-sync}' | filecheck %s --check-prefix=DLRM-BS
// Bulk-sync: every channel is a kernel boundary, and the independent tasks of one level and schedule class (here
// all on the evaluator: no choose-schedules) share a kernel: the first layer beside the eight bags.
// DLRM-BS-NOT: gpu_queue.queue
// DLRM-BS: gpu_queue.kernel "k0"
// DLRM-BS: gpu_queue.stage "linear_0"
// DLRM-BS: gpu_queue.stage "embedding_bag_3"
// DLRM-BS: gpu_queue.stage "embedding_bag_10"
// DLRM-BS-NEXT: ^{{.*}}
// DLRM-BS-NOT: gpu_queue.stage
// DLRM-BS: gpu_queue.kernel "k1"
// DLRM-BS-NEXT: ^{{.*}}
// DLRM-BS-NEXT: gpu_queue.stage "linear_1"
// DLRM-BS-NOT: gpu_queue.queue
// DLRM-BS: gpu_queue.launch_plan ["k0", "k1", "k2", "k3", "k4", "k5", "k6"]{{ }}

// Inception: the four branches run side by side: 1x1 convs and the pool, then the
// second convs of the branches, then the concat of the four (a concat of several computed results joins
// none of them; convs read whole feature maps: "all").
// RUN: kitsune-opt %S/inputs/inception_b8.mlir -p 'kitsune-form-regions,kitsune-split-reduction,convert-dataflow-to-gpu-queue{mode=dataflow placement=spatial}' | filecheck %s --check-prefix=INC-DF
// INC-DF: gpu_queue.kernel "k0" grid 4
// INC-DF: gpu_queue.stage "conv2d_0" pids [0, 1)
// INC-DF: gpu_queue.stage "conv2d_1" pids [1, 2)
// INC-DF: gpu_queue.stage "conv2d_3" pids [2, 3)
// INC-DF: gpu_queue.stage "max_pool2d_5" pids [3, 4)
// INC-DF: gpu_queue.kernel "k1" grid 3
// INC-DF: gpu_queue.stage "conv2d_2" pids [0, 1)
// INC-DF: gpu_queue.stage "conv2d_4" pids [1, 2)
// INC-DF: gpu_queue.stage "conv2d_6" pids [2, 3)
// INC-DF: gpu_queue.kernel "k2" grid 1
// INC-DF: gpu_queue.stage "concat_7"
// INC-DF: gpu_queue.launch_plan ["k0", "k1", "k2"]
// RUN: kitsune-opt %S/inputs/inception_b8.mlir -p 'kitsune-form-regions,kitsune-split-reduction,convert-dataflow-to-gpu-queue{mode=bulk-sync}' | filecheck %s --check-prefix=INC-BS
// Bulk-sync: the same levels side by side, without queues.
// INC-BS-NOT: gpu_queue.queue
// INC-BS: gpu_queue.launch_plan ["k0", "k1", "k2"] buffers ["k0#0 -> k2", "k0#1 -> k1", "k0#2 -> k1", "k0#3 -> k1", "k1#0 -> k2", "k1#1 -> k2", "k1#2 -> k2"]

// Llama decode: the split-K partials of the QKV projection are concurrent stages; their
// combine reads all partials (a kernel boundary).
// RUN: kitsune-opt %S/inputs/llama_decode_b1.mlir -p 'kitsune-form-regions,kitsune-split-reduction,convert-dataflow-to-gpu-queue{mode=dataflow placement=spatial}' | filecheck %s --check-prefix=LLAMA-DF
// LLAMA-DF: gpu_queue.kernel "k0" grid 4
// LLAMA-DF: gpu_queue.stage "linear_0_part0" pids [0, 1)
// LLAMA-DF: gpu_queue.stage "linear_0_part3" pids [3, 4)
// LLAMA-DF: gpu_queue.kernel "k1" grid 1
// LLAMA-DF: gpu_queue.stage "linear_0_combine" pids [0, 1)
// LLAMA-DF: gpu_queue.kernel "k2"
// LLAMA-DF: gpu_queue.queue "q0"
// LLAMA-DF: gpu_queue.pop "q0"

// A level with more tasks than the GPU has SMs is cut into several kernels.
// RUN: kitsune-opt %S/inputs/inception_b8.mlir -p 'kitsune-form-regions,convert-dataflow-to-gpu-queue{mode=dataflow placement=spatial gpu="h100,sm_count=2"}' | filecheck %s --check-prefix=CUT
// CUT: gpu_queue.kernel "k0" grid 2
// CUT: gpu_queue.stage "conv2d_0" pids [0, 1)
// CUT: gpu_queue.stage "conv2d_1" pids [1, 2)
// CUT: gpu_queue.kernel "k1" grid 2
// CUT: gpu_queue.stage "conv2d_3" pids [0, 1)
// CUT: gpu_queue.stage "max_pool2d_5" pids [1, 2)

// RUN: not kitsune-opt %S/inputs/mlp_gpt3_T256.mlir -p 'kitsune-form-regions,convert-dataflow-to-gpu-queue{mode=async}' 2>&1 | filecheck %s --check-prefix=BADMODE
// BADMODE: kitsune-opt: error: convert-dataflow-to-gpu-queue: mode must be one of dataflow, bulk-sync, got 'async'
