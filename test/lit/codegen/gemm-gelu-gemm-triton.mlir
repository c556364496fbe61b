// GEMM -> GELU -> GEMM through the whole pipeline to Triton, in both schedules.

// RUN: kitsune-opt %s -p 'kitsune-pipeline{mode=dataflow placement=spatial}' -t triton | filecheck %s --check-prefix=DF
// The queue primitives: acquire spin with a watchdog, release after a CTA barrier.
// DF: def _acquire(ptr, target, err, code, WATCHDOG: tl.constexpr):
// DF: tl.atomic_add(ptr, 0, sem="acquire", scope="gpu")
// DF: tl.atomic_max(err, code + 1)
// DF: def _pop_free(
// DF: tl.debug_barrier()
// DF-NEXT: for x in range(0, n):
// DF: tl.atomic_add(ctr + base + cap + s, 1, sem="release", scope="gpu")
// DF: def _push_done(
// DF-NEXT: # all stores of the tile are done (each thread's fence, barrier), then publish it (release)
// DF-NEXT: _fence_gpu()
// DF-NEXT: tl.debug_barrier()
// DF-NEXT: tl.atomic_add(ctr + base + j % cap, 1, sem="release", scope="gpu")
// One persistent kernel; stages on disjoint program ranges, in order. Each GEMM is a gemm template; the second
// splits its K across programs in the kernel (no replicated partial tasks): each part stores its partial sums
// to its fp32 slice, the last part of a tile (acquire-release counter) adds them up and runs the epilogue.
// DF: # kernel "k0": grid [[GRID:[0-9]+]], 8 warps, 2 stage(s), 1 queue(s)
// DF: # queue "q0" (id 0): "linear_0" -> "linear_1", tile [128, 128] x 16, 16 slots, relation rows, [[R:[0-9]+]] reader(s) per tile
// DF: # stage "linear_0" (contraction): programs [0, [[P1:[0-9]+]]), tile [128, 128] of [256, 1024], 16 tiles
// DF: for {{k[0-9]+}} in range(0, 512, 64):
// DF: _dot_lp(
// DF: tl.erf(
// The queue's counters count from the kernel's ticket (its counter region): the same numbers in every kernel of
// this code.
// DF: _push_wait(ctr, [[QB:[0-9]+]], t, {{.*}} cbase + [[QB]], WATCHDOG)
// DF-NEXT: tl.store(queue_k0_q0 +
// DF-NEXT: _push_done(ctr, [[QB]], t,
// A part of the second GEMM waits on its row band of the GELU output, and every part frees it.
// DF: # stage "linear_1" (contraction): programs [[[P1]], {{[0-9]+}}), tile [128, 128] of [256, 512], 8 tiles
// DF: w = pid - [[P1]] + it * {{[0-9]+}}
// DF-NEXT: t = w // [[S1:[0-9]+]]
// DF-NEXT: ks = w % [[S1]]
// DF: _pop_wait(ctr, [[QB]], (t // {{[0-9]+}}) * {{[0-9]+}}, {{[0-9]+}}, {{.*}}# queue "q0" (rows) from stage "linear_0"
// DF: for {{k[0-9]+}} in range(0, {{[0-9]+}}, 64):
// DF: [[ACC:acc[0-9]+]] = _dot_lp(
// DF: tl.store(k0_linear_1_partials + ks * 131072 + {{.*}}, [[ACC]])
// DF-NEXT: _fence_gpu()
// DF-NEXT: tl.debug_barrier()
// DF-NEXT: arrived = tl.atomic_add(ctr + {{[0-9]+}} + t, 1, sem="acq_rel", scope="gpu")
// DF-NEXT: if arrived % [[S1]] == {{[0-9]+}}:
// DF-NEXT: _fence_gpu()
// DF-NEXT: {{acc[0-9]+}} = tl.load(k0_linear_1_partials + 0 + {{.*}}, cache_modifier=".cg") + tl.load(k0_linear_1_partials + 131072 +
// DF: tl.store(k0_out0 +
// DF: _pop_free(ctr, [[QB]], (t // {{[0-9]+}}) * {{[0-9]+}}, {{[0-9]+}}, 16)  # queue "q0"
// DF: @triton.jit(do_not_specialize=["ticket"])
// DF-NEXT: def k0({{.*}}, ctr, err, epoch_ptr, ticket, WATCHDOG: tl.constexpr, PDL: tl.constexpr = 0, BUMP: tl.constexpr = 0):
// DF: if PDL:
// DF-NEXT: gdc_wait()
// DF: epoch = tl.load(epoch_ptr)
// DF-NEXT: pid = tl.atomic_add(ctr + ticket, 1) - epoch * [[GRID]]
// The launch's last kernel (BUMP) moves the epoch on: the program with the last ticket.
// DF-NEXT: if BUMP:
// DF: if pid == [[LAST:[0-9]+]]:
// DF-NEXT: tl.store(epoch_ptr, epoch + 1)
// DF-NEXT: if pid < [[P1]]:
// DF-NEXT: k0_linear_0(pid,
// DF: TENSORS = {
// DF: 'k0_linear_1_partials': ((3, 256, 512), 'f32', 'workspace'),
// DF: KERNELS = [
// DF-NEXT: {"name": "k0", "fn": k0, "grid": [[GRID]], "ticket": {{[0-9]+}}, "num_warps": 8, "num_stages": 5,

// RUN: kitsune-opt %s -p 'kitsune-pipeline{mode=dataflow placement=temporal}' -t triton | filecheck %s --check-prefix=TEMP
// Temporal placement: one kernel, the stages one after another; the first GEMM's programs each count themselves
// done once (fence, barrier, release); the second's wait for all 16 before their first work item (one vector of
// counters, wrap-safe), then read the intermediate through L2.
// TEMP: def _await_stages(ptrs, need, live, err, code, WATCHDOG: tl.constexpr):
// TEMP: late = tl.sum(((v - need) < 0).to(tl.int32) * live.to(tl.int32), 0)
// TEMP: def _stage_done(ctr, idx):
// TEMP-NEXT: # a temporal producer
// TEMP: _fence_gpu()
// TEMP-NEXT: tl.debug_barrier()
// TEMP-NEXT: tl.atomic_add(ctr + idx, 1, sem="release", scope="gpu")
// TEMP: # stage "linear_0" (contraction): programs [0, [[P:[0-9]+]])
// TEMP-NOT: _await_stages(
// TEMP: _stage_done(ctr, [[C:[0-9]+]])  # this program of "linear_0" has finished
// TEMP: # stage "linear_1" (contraction): programs [[[P]], {{[0-9]+}})
// TEMP: _await_stages(ctr + (_wk * 0 + [[C]]), (epoch + 1) * (_wk * 0 + [[P]]), _wk < 1, err, cbase + {{[0-9]+}}, WATCHDOG)
// TEMP-NEXT: for it in range(
// TEMP: tl.load(k0_linear_0_out0 + {{.*}}cache_modifier=".cg")
// TEMP-NOT: _stage_done(
// TEMP: WAITS = [('k0', 'linear_1', ['linear_0'])]
// TEMP-NEXT: WAIT_CODES = {0: 0}

// RUN: env KITSUNE_GLUON=0 kitsune-opt %s -p 'kitsune-pipeline{mode=bulk-sync}' -t triton | filecheck %s --check-prefix=BS
// (the Triton form of the first GEMM here, KITSUNE_GLUON=0; by default it is the Gluon form, checked below)
// BS: # kernel "k0": grid {{[0-9]+}}, {{[0-9]+}} warps, 1 stage(s), 0 queue(s)
// BS-NOT: _pop_wait(ctr
// BS: # stage "linear_0" (contraction): programs [0, {{[0-9]+}})
// Without queues the gemm template walks tiles in groups of GROUP_M row tiles.
// BS: tg = (t) % {{[0-9]+}}
// Loads before waits: the stage reads only the input and parameters (x, the weights, the bias), so its whole K loop
// and epilogue run before it waits for the kernel before it (PDL), right before its store.
// BS: for k{{[0-9]+}} in range(0, 512, 64):
// BS: _dot_lp(
// BS: tl.load(fc1_bias +
// BS: if PDL:
// BS-NEXT: gdc_wait()
// BS-NEXT: tl.store(k0_out0 +
// The kernel takes no wait of its own before the stage; its programs read the epoch after one.
// BS: def k0(
// BS-NOT: gdc_wait()
// BS: pid = tl.program_id(0)
// BS-NEXT: if pid < {{[0-9]+}}:
// BS-NEXT: k0_linear_0(pid, x, fc1_weight, fc1_bias, k0_out0, ctr, err, 0, WATCHDOG, PDL)
// BS-NEXT: if PDL:
// BS-NEXT: gdc_wait()
// BS: epoch = tl.load(epoch_ptr)
// The split-K kernel counts its tiles' partial sums in (a counter, moved modulo the split after the work): its
// stage waits before the K loop that reads the first GEMM's result (a GEMM's loop is not peeled), its partial
// store and its count come after; the kernel reads the epoch after a wait of its own.
// BS: # kernel "k1": grid
// BS-NOT: _pop_wait(ctr
// BS: def k1_linear_1(pid, {{.*}}, WATCHDOG: tl.constexpr, PDL: tl.constexpr):
// BS: if PDL:
// BS-NEXT: gdc_wait()
// BS-NEXT: for k{{[0-9]+}} in range(0, {{[0-9]+}}, 64):
// BS-NOT: _p0 = 0
// BS: tl.load(k0_out0 +
// BS: tl.store(k1_linear_1_partials +
// BS: tl.atomic_add(ctr + {{[0-9]+}} + t, 1
// BS: def k1(
// BS-NOT: gdc_wait()
// BS: k1_linear_1(pid, {{.*}}, WATCHDOG, PDL)
// BS-NEXT: if PDL:
// BS-NEXT: gdc_wait()
// BS: epoch = tl.load(epoch_ptr)
// BS: KERNELS = [
// BS-NEXT: {"name": "k0"
// BS-NEXT: {"name": "k1"

func.func @main(%x: tensor<256x512xbf16> {kitsune.name = "x", kitsune.kind = "input"}, %w1: tensor<1024x512xbf16> {kitsune.name = "fc1.weight", kitsune.kind = "parameter"}, %b1: tensor<1024xbf16> {kitsune.name = "fc1.bias", kitsune.kind = "parameter"}, %w2: tensor<512x1024xbf16> {kitsune.name = "fc2.weight", kitsune.kind = "parameter"}, %b2: tensor<512xbf16> {kitsune.name = "fc2.bias", kitsune.kind = "parameter"}) -> tensor<256x512xbf16> {
  %h = graph.linear %x, %w1, %b1 : tensor<256x512xbf16>, tensor<1024x512xbf16>, tensor<1024xbf16> -> tensor<256x1024xbf16>
  %g = graph.gelu %h : tensor<256x1024xbf16> -> tensor<256x1024xbf16>
  %y = graph.linear %g, %w2, %b2 : tensor<256x1024xbf16>, tensor<512x1024xbf16>, tensor<512xbf16> -> tensor<256x512xbf16>
  func.return %y : tensor<256x512xbf16>
}

// RUN: kitsune-opt %s -p 'kitsune-pipeline{mode=bulk-sync}' -t triton | filecheck %s --check-prefix=GL
// By default the first GEMM (K = 512: a short K) is the Gluon kernel, warp-specialised (a loader partition beside
// the wgmma one, the heuristic default ``GemmConfig.gluon_default``); the second, split in K, stays Triton.
// GL: # kernel "k0"
// GL: def k0_linear_0_mma(
// GL: warpgroup_mma(
// GL: def k0_linear_0_load(
// GL: tma.async_copy_global_to_shared(
// GL: gl.warp_specialize(
// GL: # kernel "k1"
// GL: def k1_linear_1(
// GL: arrived = tl.atomic_add(
