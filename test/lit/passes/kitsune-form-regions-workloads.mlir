// Regions formed for small versions (scale 0.02) of the benchmark workloads.
// The inputs are graph IR written by `kitsune-import --workload NAME --scale 0.02 --no-loc`.

// RUN: kitsune-opt %S/inputs/mlp_gpt3_T256.mlir -p 'kitsune-form-regions{remarks=true}' -o %t.mlp 2>&1 | filecheck %s --check-prefix=MLP
// MLP: task "linear_0" (contraction, 2 op(s), {{.*}}): linear (contraction anchor); gelu (elementwise); gelu: epilogue
// MLP-NEXT: task "linear_1" (contraction, 1 op(s)
// MLP-NOT: task
// RUN: kitsune-opt %S/inputs/mlp_gpt3_T256.mlir -p 'kitsune-form-regions{chain_bytes=1000000}' | filecheck %s --check-prefix=MLPCHAIN
// MLPCHAIN: dataflow.task "linear_0" contraction
// MLPCHAIN: graph.linear
// MLPCHAIN-NEXT: graph.gelu
// MLPCHAIN-NEXT: graph.linear
// MLPCHAIN-NOT: dataflow.task

// The llama layer: the rms norm joins the fused QKV projection as its prologue,
// attention keeps its head permute/reshape as epilogue, the O projection takes
// the residual add and the second norm, gate/up takes silu*up.
// RUN: kitsune-opt %S/inputs/llama_decode_b1.mlir -p 'kitsune-form-regions{remarks=true}' -o %t.llama 2>&1 | filecheck %s --check-prefix=LLAMA
// LLAMA: task "linear_0" (contraction, {{[0-9]+}} op(s){{.*}}): pow (elementwise); mean (row-wise reduction)
// LLAMA: task "attention_1" (contraction, 3 op(s){{.*}}): attention (contraction anchor); permute (layout)
// LLAMA: task "linear_2" (contraction, {{.*}}): linear (contraction anchor); add (elementwise)
// LLAMA: task "linear_3" (contraction, {{.*}}silu (elementwise)
// LLAMA: task "linear_4" (contraction, 2 op(s){{.*}}): linear (contraction anchor); add (elementwise)
// LLAMA-NOT: task
// RUN: filecheck %s --input-file=%t.llama --check-prefix=LLAMAIR
// LLAMAIR: dataflow.graph
// LLAMAIR: dataflow.task "linear_0" contraction
// LLAMAIR: graph.rsqrt
// LLAMAIR: graph.linear
// LLAMAIR: dataflow.channel %{{.*}} {relation = "{{tile|rows|all}}"}
// LLAMAIR: dataflow.task "attention_1" contraction
// LLAMAIR-NEXT: ^bb0
// LLAMAIR-NEXT: graph.attention

// In the DLRM model the eight embedding bags stay separate (independent: they can run
// concurrently), each with its index slice as a prologue. The bottom MLP's last layer keeps its own task:
// the stack of its output and the bags (a concat of nine computed results) joins none of them and is read
// in place by the interaction (a memory-only prologue), whose [B, 9, 9] result stays its own: the reshape
// to [B, 81] would merge the contraction's columns, so the triangle's index_select reads through it, in the
// first top layer's gather prologue.
// RUN: kitsune-opt %S/inputs/dlrm_b2048.mlir -p 'kitsune-form-regions{remarks=true}' -o %t.dlrm 2>&1 | filecheck %s --check-prefix=DLRM
// DLRM: task "linear_0" (contraction, 2 op(s){{.*}}relu: epilogue
// DLRM: task "linear_1" (contraction, 2 op(s)
// DLRM: task "linear_2" (contraction, 2 op(s){{.*}}relu: epilogue
// DLRM-COUNT-8: (gather, 3 op(s){{.*}}embedding_bag (gather anchor); memory-only prologue
// DLRM: task "matmul_11" (contraction, 4 op(s), tile [1, 9, 9]{{.*}}concat (layout); joins none of its producers (several anchors){{.*}}matmul (contraction anchor); memory-only prologue
// DLRM-NOT: task "index_select
// DLRM-NOT: task "concat
// DLRM: task "linear_12" (contraction, 5 op(s){{.*}}reshape (layout); index_select (gather anchor){{.*}}gather prologue
// DLRM-COUNT-2: (contraction

// NeRF: nine linear tasks, ReLU epilogues, the skip concat joins the fourth.
// RUN: kitsune-opt %S/inputs/nerf_65k.mlir -p 'kitsune-form-regions{remarks=true}' -o %t.nerf 2>&1 | filecheck %s --check-prefix=NERF
// NERF-COUNT-3: (contraction, 2 op(s){{.*}}relu: epilogue
// NERF-NEXT: task "linear_3" (contraction, 3 op(s){{.*}}relu: epilogue; concat (layout); concat: layout epilogue
// NERF-COUNT-4: (contraction, 2 op(s){{.*}}relu: epilogue
// NERF-NEXT: task "linear_8" (contraction, 1 op(s)
// NERF-NOT: task

// MeshGraphNet: the gathers x[src], x[dst] and their concat with e are the edge MLP's first GEMM's
// prologue (its row operand, loaded by index: the [E, 384] rows are never written), the edge and node MLPs
// with layer norm and residual in the second linear's epilogue, the scatter-add (index_add) as its own task.
// RUN: kitsune-opt %S/inputs/mgn_10k.mlir -p 'kitsune-form-regions{remarks=true}' -o %t.mgn 2>&1 | filecheck %s --check-prefix=MGN
// MGN-NOT: task "index_select
// MGN: task "linear_0" (contraction, 5 op(s){{.*}}index_select (gather anchor); index_select (gather anchor); concat (layout){{.*}}relu: epilogue; memory-only prologue; gather prologue{{.*}}; gather prologue
// MGN: task "linear_1" (contraction, 3 op(s){{.*}}layer_norm: row reduction in the contraction epilogue{{.*}}add: epilogue
// MGN: task "index_add_2" (gather
// MGN: task "linear_3" (contraction
// MGN: task "linear_4" (contraction, 3 op(s){{.*}}layer_norm

// Inception: the four branches are separate tasks (concurrent stages later); the concat of their four
// results joins none of them (several anchors), and the final ReLU joins it.
// RUN: kitsune-opt %S/inputs/inception_b8.mlir -p 'kitsune-form-regions{remarks=true}' -o %t.inc 2>&1 | filecheck %s --check-prefix=INC
// INC: task "conv2d_0" (contraction, 1 op(s)
// INC: task "conv2d_1" (contraction, 2 op(s){{.*}}relu: epilogue
// INC: task "conv2d_2" (contraction, 1 op(s)
// INC: task "conv2d_3" (contraction, 2 op(s)
// INC: task "conv2d_4" (contraction, 1 op(s)
// INC: task "max_pool2d_5" (reduction, 1 op(s)
// INC: task "conv2d_6" (contraction, 1 op(s)
// INC: task "concat_7" (elementwise, 2 op(s){{.*}}concat (layout); joins none of its producers (several anchors); relu (elementwise); relu: elementwise chain
// INC-NOT: task

// Reduction splitting on the llama layer: every projection has too few tiles
// for 132 SMs and is split along K.
// RUN: kitsune-opt %S/inputs/llama_decode_b1.mlir -p 'kitsune-form-regions,kitsune-split-reduction{remarks=true}' -o %t.split 2>&1 | filecheck %s --check-prefix=SPLIT
// SPLIT: task "linear_0" has 1 tile(s) for 132 SMs: linear split along its reduction dim (256) into 4 partials + "linear_0_combine"
// SPLIT: task "linear_4" has 2 tile(s) for 132 SMs: linear split along its reduction dim (1024) into 16 partials + "linear_4_combine"
// RUN: filecheck %s --input-file=%t.split --check-prefix=SPLITIR
// SPLITIR: dataflow.task "linear_0_part0" partial
// SPLITIR: graph.slice
// SPLITIR: dataflow.task "linear_0_combine" combine
// SPLITIR: graph.add
