// GEMM -> GELU -> GEMM through the whole pipeline to CUDA C++, in both schedules.

// RUN: kitsune-opt %s -p 'kitsune-pipeline{mode=dataflow placement=spatial}' -t cuda | filecheck %s --check-prefix=DF
// DF: // KITSUNE_TENSORS: x,fc1_weight,fc1_bias,fc2_weight,fc2_bias,k0_out0,queue_k0_q0
// The queue primitives: ld.acquire.gpu spin with a watchdog, red.release.gpu.
// DF: ld.acquire.gpu.global.s32
// DF: red.release.gpu.global.add.s32
// DF: while (kt_ld_acquire(p) < target) {
// DF: atomicMax(err, qid + 1)
// DF: // stage "linear_0" of kernel "k0": programs [0, [[P1:[0-9]+]]), tile [128, 128]
// DF: // publish tile t of queue "q0": release-increment filled[t % 16]
// DF-NEXT: __syncthreads();
// DF-NEXT: if (threadIdx.x == 0) { __threadfence(); kt_red_release(P.counters + [[QB:[0-9]+]] + (t % 16LL), 1); }
// DF: stage_k0_linear_1(const Params& P, int pid, int e) {
// DF: // pop "q0" (rows): acquire-wait on filled[slot] >= e * uses(slot) + j / cap + 1
// DF: kt_wait_geq(P.counters + [[QB]] + (s),
// DF: __global__ void __launch_bounds__(256) kitsune_k0(Params P) {
// DF: extern "C" int kitsune_launch(void** tensors, int* counters, int* epoch, int* err, long long watchdog, cudaStream_t stream) {
// DF: kitsune_k0<<<32, 256, 0, stream>>>(P);
// DF-NOT: kitsune_k1<<<

// RUN: kitsune-opt %s -p 'kitsune-pipeline{mode=dataflow placement=temporal}' -t cuda | filecheck %s --check-prefix=TEMP
// The reference backend runs the same temporal plan: the intermediate is read through L2, the producer's
// programs release-increment its counter once each, the consumer's thread 0 waits for all of them.
// TEMP: ld_k0_linear_0_out0({{.*}}kt_ldq(P.g_k0_linear_0_out0
// TEMP: void stage_k0_linear_0(
// TEMP: if (threadIdx.x == 0) { __threadfence(); kt_red_release(P.counters + [[C:[0-9]+]], 1); }
// TEMP: void stage_k0_linear_1(
// TEMP-NEXT: if (threadIdx.x == 0) {
// TEMP-NEXT: kt_wait_geq(P.counters + [[C]], (int)(((long long)e + 1) * {{[0-9]+}}LL), {{[0-9]+}}, P.err, P.watchdog);  // stage "linear_0"
// TEMP: __syncthreads();

// RUN: kitsune-opt %s -p 'kitsune-pipeline{mode=bulk-sync}' -t cuda | filecheck %s --check-prefix=BS
// BS-NOT: kt_wait_geq(P.counters
// BS: __global__ void __launch_bounds__(256) kitsune_k0(Params P) {
// BS: __global__ void __launch_bounds__(256) kitsune_k1(Params P) {
// BS: kitsune_k0<<<{{[0-9]+}}, 256, 0, stream>>>(P);
// BS-NEXT: {{.*}}
// BS: kitsune_k1<<<

func.func @main(%x: tensor<256x512xbf16> {kitsune.name = "x", kitsune.kind = "input"}, %w1: tensor<1024x512xbf16> {kitsune.name = "fc1.weight", kitsune.kind = "parameter"}, %b1: tensor<1024xbf16> {kitsune.name = "fc1.bias", kitsune.kind = "parameter"}, %w2: tensor<512x1024xbf16> {kitsune.name = "fc2.weight", kitsune.kind = "parameter"}, %b2: tensor<512xbf16> {kitsune.name = "fc2.bias", kitsune.kind = "parameter"}) -> tensor<256x512xbf16> {
  %h = graph.linear %x, %w1, %b1 : tensor<256x512xbf16>, tensor<1024x512xbf16>, tensor<1024xbf16> -> tensor<256x1024xbf16>
  %g = graph.gelu %h : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
  %y = graph.linear %g, %w2, %b2 : tensor<256x1024xbf16>, tensor<512x1024xbf16>, tensor<512xbf16> -> tensor<256x512xbf16>
  func.return %y : tensor<256x512xbf16>
}
