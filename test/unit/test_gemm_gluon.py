"""The gemm template's Hopper form (``GemmConfig.GLUON``, ``templates/gemm_tma.py``): a Gluon kernel, operands
by TMA through a ring of shared-memory stages, asynchronous wgmma, the epilogue from the evaluator, the result
stored by TMA.

* the text the generator writes for both forms (pipelined; warp-specialised: a loader partition and the wgmma
  partition with the kernel's parameters), weights [N, K] and [K, N], a 256-column tile stored in two halves,
  results stored from registers where TMA does not apply;
* where the form does not apply (f32 operands, rows that are not 16-byte aligned, a tile that is not whole,
  Triton's interpreter), the module is the Triton form of the same config, with the reason printed, and it
  computes what the reference interpreter computes;
* the search space offers the forms only where they may apply; the resources they claim; the tuner's
  ``--only`` filter; a ring too deep for the result's own buffer: the tile through the ring's first slots (one
  tile a program) or from registers;
* a tile of no power-of-two width (96, 192 columns) in two parts: two W blocks, accumulators and stores;
* K split in two parts that meet in an fp32 workspace: the first to arrive publishes its slice, the last adds it
  and runs the epilogue; the last part a few K steps longer (``SKEW``);
* an sm_90 compile of both forms: wgmma, TMA loads and stores, setmaxnreg for the warp-specialised one, no
  spills (marked ``aot``);
* ping-pong (``GLUON = 3``): two one-warpgroup consumers of one function take a program's tiles in turn, handed
  over through the ``_turn`` barriers, each storing through a result buffer of its own;
* an [n, k] weight that is a parameter read by this stage alone is uploaded packed in [BN, BK] blocks: the
  loads' coordinates, evaluated from the text, find each block of the weight where ``packed`` put it (tails in
  N and K included); a weight read twice, an input, a split whose parts run past K, or ``KITSUNE_PACK=0``
  leave it row-major;
* GPU (marked): both forms against the reference on shapes whose rows and columns do not divide the tile, and
  the packed weight through ``Program``'s upload.
"""

from __future__ import annotations

import re

from dataclasses import replace

import numpy as np
import pytest

from kitsune.codegen.triton_gen import generate_triton
from kitsune.codegen.triton_gen.templates.gemm_tma import GemmTmaGen
from kitsune.schedule.configs import GemmConfig, Problem
from test_templates import linear_module, lower_forced, matmul_module, run  # noqa: E402
from test_triton_codegen import load_generated  # noqa: E402

WS = GemmConfig(BM=128, BN=128, BK=64, GROUP_M=8, SPLIT=1, warps=8, stages=4, GLUON=2)
PIPE = GemmConfig(BM=128, BN=256, BK=64, GROUP_M=8, SPLIT=1, warps=8, stages=3, GLUON=1)
DEEP = GemmConfig(BM=128, BN=128, BK=64, GROUP_M=8, SPLIT=1, warps=8, stages=7, GLUON=2)  # 224 KB of ring
# tiles of no power-of-two width: 128 + 64 and 64 + 32 columns, two accumulators
WIDE = GemmConfig(BM=128, BN=192, BK=64, GROUP_M=8, SPLIT=1, warps=8, stages=4, GLUON=2)
NARROW = GemmConfig(BM=128, BN=96, BK=64, GROUP_M=8, SPLIT=1, warps=8, stages=4, GLUON=1)
SPLIT2 = GemmConfig(BM=128, BN=192, BK=64, GROUP_M=8, SPLIT=2, warps=8, stages=4, GLUON=2)  # K in two parts
SKEWED = GemmConfig(BM=128, BN=192, BK=64, GROUP_M=8, SPLIT=2, warps=8, stages=4, GLUON=2, SKEW=2)  # uneven parts
PING = GemmConfig(BM=128, BN=128, BK=64, GROUP_M=8, SPLIT=1, warps=4, stages=4, GLUON=3)  # two consumers in turn


def gluon_source(text, cfg, gluon=True, mode="bulk-sync"):
    return generate_triton(lower_forced(text, cfg, mode), capacity="all", gluon=gluon)


def kernel_text(src: str) -> str:
    """The module's kernel functions (after the runtime's helpers)."""
    return src[src.index("# kernel \"k0\""):]


def test_warp_specialised_text():
    src = gluon_source(linear_module([300], 384, 192, "bf16", "gelu"), WS)
    k = kernel_text(src)
    assert "Gluon form does not apply" not in src
    assert k.count("gl.warp_specialize(") == 1
    assert "def k0_" in k and "_load(pid, _da, _dw, _abuf, _wbuf, _ready, _empty):" in k
    # operands and the result through descriptors the host makes (kernel parameters: none made in the kernel);
    # every ring slot's two barriers
    assert "tma.make_tensor_descriptor(" not in k
    assert "    _da = k0_linear_0_da" in k and "    _dw = k0_linear_0_dw" in k and "    _dc0 = k0_linear_0_dc0" in k
    assert "def k0(arg0, arg1, arg2, k0_out0, k0_linear_0_dc0, k0_linear_0_da, k0_linear_0_dw, ctr," in k
    assert "\"descs\": [('k0_linear_0_dc0', 'k0_out0', [300, 384], [384, 1], [128, 128], 'bf16'), " \
           "('k0_linear_0_da', 'arg0', [300, 192], [192, 1], [128, 64], 'bf16'), " \
           "('k0_linear_0_dw', 'arg1', [384, 192], [192, 1], [128, 64], 'bf16')]" in src
    assert "\"tensors\": ['arg0', 'arg1', 'arg2', 'k0_out0']" in src
    assert k.count("tma.async_copy_global_to_shared(") == 2 and "tma.async_copy_shared_to_global(" in k
    assert "mbarrier.init(_ready.index(_i), count=1)" in k and "mbarrier.init(_empty.index(_i), count=1)" in k
    # the loader waits for free slots, the wgmma partition releases them
    assert "mbarrier.wait(_empty.index(" in k and "mbarrier.arrive(_empty.index(" in k
    assert "_wbuf.index(" in k and ".permute((1, 0))" in k  # an [N, K] weight's block is read transposed
    # the epilogue is the evaluator's (bias, GELU), in Gluon
    assert "tl.erf(" in k and "gl.arange(0, 128, layout=gl.AutoLayout())" in k
    assert "tl.dot(" not in k and "_dot_lp(" not in k
    assert re.search(r"\"tma\": \['\w+', '\w+'\]", src)  # the host aligns both operands' bases for TMA


def param_weight(text: str, label: str = "fc.weight") -> str:
    """``text`` with its ``%w`` argument a parameter (uploaded once, by label) instead of an input."""
    return re.sub(r"%w: (tensor<[^>]*>)", rf'%w: \1 {{kitsune.name = "{label}", kitsune.kind = "parameter"}}', text,
                  count=1)


@pytest.mark.parametrize("cfg", [WS, WIDE], ids=["ws-128", "ws-192"])
def test_packed_weight_blocks_where_the_loads_look(tmp_path, cfg):
    """A parameter weight [300, 200] (tails in N and K) read only as this linear's W: ``PACKS`` names it, W's
    descriptors are of the packed [rows, 64] matrix, and each load's row coordinate, evaluated from the text for
    every column block and K step, finds in ``packed``'s result exactly W's block there (zeros past N and K)."""
    import torch

    src = gluon_source(param_weight(linear_module([300], 300, 200, "bf16", "gelu")), cfg)
    k = kernel_text(src)
    BN, KW = cfg.BN, 4  # ceil(200 / 64)
    rows = -(-300 // BN) * KW * BN
    assert f"PACKS = {{'fc_weight': ({BN}, 64)}}" in src
    assert f"'k0_linear_0_dw', 'fc_weight', [{rows}, 64], [64, 1], [{min(BN, 128)}, 64], 'bf16')" in src
    assert "'k0_linear_0_da', 'arg0', [300, 200], [200, 1], [128, 64], 'bf16')" in src  # (A as it is)
    loads = re.findall(r"tma\.async_copy_global_to_shared\((_dw1?), \[(.+?), 0\], _ready", k)
    BN0, BN1 = cfg.gluon_widths()
    parts = [(0, BN0), (BN0, BN1)] if BN1 else [(0, BN)]
    assert [d for d, _ in loads] == ["_dw", "_dw1"][:len(parts)], loads
    cvar = re.search(r"\(\((c\d+)\) \* 4 \+", loads[0][1]).group(1)
    w = torch.randn(300, 200)
    pw = load_generated(src, tmp_path, f"pack_{BN}").packed(w, BN, 64)  # (its host side only: ``packed``)
    assert tuple(pw.shape) == (rows, 64)
    wpad = torch.zeros(-(-300 // BN) * BN, KW * 64)
    wpad[:300, :200] = w
    for (d, expr), (off, width) in zip(loads, parts):
        for cn in range(-(-300 // BN)):
            for kt in range(KW):
                r = eval(expr, {cvar: cn, "kt": kt})  # noqa: S307 -- the generated coordinate, as Python
                want = wpad[cn * BN + off: cn * BN + off + width, kt * 64: kt * 64 + 64]
                assert torch.equal(pw[r: r + width], want), (d, cn, kt)


def test_weight_stays_row_major_where_packing_does_not_apply(monkeypatch):
    """An input weight (passed at every call), one that a second linear reads too, a split whose parts run past
    K (3 K steps in two parts of 2), and ``KITSUNE_PACK=0``: no ``PACKS`` entry, W's descriptor of [N, K]."""
    def packs(src):
        return re.search(r"^PACKS = (\{.*?\})", src, re.M).group(1)

    assert packs(gluon_source(linear_module([300], 384, 192, "bf16", "gelu"), WS)) == "{}"
    x, w = "tensor<256x192xbf16>", "tensor<384x192xbf16>"
    twice = (f'func.func @main(%x: {x}, %w: {w} {{kitsune.name = "w", kitsune.kind = "parameter"}}) -> '
             f"(tensor<256x384xbf16>, tensor<256x384xbf16>) {{\n"
             f"    %y = graph.linear %x, %w : {x}, {w} -> tensor<256x384xbf16>\n"
             f"    %r = graph.relu %x : {x} -> {x}\n"
             f"    %z = graph.linear %r, %w : {x}, {w} -> tensor<256x384xbf16>\n"
             f"    func.return %y, %z : tensor<256x384xbf16>, tensor<256x384xbf16>\n}}\n")
    assert packs(gluon_source(twice, WS)) == "{}"
    split = gluon_source(param_weight(linear_module([256], 384, 192, "bf16", "gelu")), SPLIT2)
    assert "Gluon form does not apply" not in split and packs(split) == "{}"
    assert packs(gluon_source(param_weight(linear_module([256], 384, 256, "bf16", "gelu")), SPLIT2)) \
        == "{'fc_weight': (192, 64)}"  # (4 K steps in two parts of 2: covered exactly)
    monkeypatch.setenv("KITSUNE_PACK", "0")
    src = gluon_source(param_weight(linear_module([300], 384, 192, "bf16", "gelu")), WS)
    assert packs(src) == "{}" and "'k0_linear_0_dw', 'fc_weight', [384, 192], [192, 1], [128, 64]" in src


def test_ping_pong_text():
    """``GLUON = 3``: the loader and two consumer partitions of one function (``CONSUMER`` 0 and 1: the default
    partition and a 4-warp worker); consumer c takes the program's work items c, c + 2, ...; before its K loop it
    waits for its turn (consumer 0 first), after issuing it hands the turn over, then retires its last wgmma and
    runs its epilogue; each stores through its own buffer."""
    src = gluon_source(linear_module([2000], 4096, 512, "bf16", "relu"), PING)  # 16 x 32 tiles: several a program
    k = kernel_text(src)
    assert "Gluon form does not apply" not in src
    assert k.count("gl.warp_specialize(") == 1 and re.search(r"\], \[4, 1\], \[\d+, 24\]\)", k), k
    calls = re.findall(r"\(k0_linear_0_mma, \(pid, [^)]*_turn, (_cbuf0\w*), _dc0, WATCHDOG, (\d)\)\)", k)
    assert calls == [("_cbuf0", "0"), ("_cbuf0_1", "1")], calls
    assert "_cbuf0_1 = gl.allocate_shared_memory(tl.bfloat16, [128, 128], _c0_l)" in k
    assert "mbarrier.init(_turn.index(_i), count=1)" in k
    mma = k[k.index("def k0_linear_0_mma("):k.index("def k0_linear_0_load(")]
    assert "WATCHDOG: tl.constexpr, CONSUMER: tl.constexpr):" in mma
    assert "warps_per_cta=[4, 1], instr_shape=[16, 128, 16]" in mma
    assert re.search(r"for it in range\(CONSUMER, \d+, 2\):", mma)
    wait = mma.index("mbarrier.wait(_turn.index(CONSUMER), ((it // 2) & 1) ^ (1 - CONSUMER))")
    loop, handover = mma.index("for kt in range("), mma.index("mbarrier.arrive(_turn.index(1 - CONSUMER))")
    retire = mma.index("warpgroup_mma_wait(num_outstanding=0")
    assert wait < loop < handover < retire < mma.index("_cbuf0.store(")
    load = k[k.index("def k0_linear_0_load("):]
    assert re.search(r"for it in range\(0, \d+\):", load)  # the loader walks every item of the program
    # the phase each consumer's n-th wait passes on: consumer 0 at once, then each after the other's hand-over
    for c in (0, 1):
        got = [((it // 2) & 1) ^ (1 - c) for it in range(c, 9, 2)]
        assert got == [(n & 1) ^ (1 - c) for n in range(len(got))]
    # two result buffers beside the ring; not where they do not fit (5 stages of 128 x 128: 224 KB with both)
    p = Problem("gemm", M=2000, N=4096, K=512)
    assert PING.resources(p).smem_bytes == 4 * 256 * 64 * 2 + 2 * 128 * 128 * 2 + 1024
    assert PING.resources(p).regs_per_thread == 65536 // (32 * 12)


def test_pipelined_text_and_kn_weight():
    src = gluon_source(matmul_module([300], 512, 192, "bf16"), PIPE)
    k = kernel_text(src)
    assert "Gluon form does not apply" not in src
    assert "gl.warp_specialize(" not in k and "_empty" not in k
    # the first stages - 1 chunks of a tile are issued before its loop, each later one predicated on the K extent
    assert k.count("tma.async_copy_global_to_shared(_dw,") == 3 and "pred=kt + 2 < 3)" in k
    assert ".permute((1, 0))" not in k  # a [K, N] weight's block is the wgmma's B as it is
    assert "'k0_matmul_0_dw', 'arg1', [192, 512], [512, 1], [64, 256], 'bf16')" in src
    # a 256-column tile leaves through a 128-column buffer in two halves
    assert k.count("tma.async_copy_shared_to_global(") == 2 and "gl.split(gl.permute(gl.reshape(" in k


def test_tile_of_no_power_of_two_width_in_two_parts():
    """A 192-column tile (an [N, K] weight, warp-specialised) and a 96-column one (a [K, N] weight, pipelined):
    W's block in two descriptors and ring buffers, two accumulators with their own wgmma layouts (N 128 / 64,
    64 / 32), and the epilogue twice, once per part, each stored through its own descriptor (the second part
    through a view of the first part's buffer)."""
    k = kernel_text(gluon_source(linear_module([300], 384, 512, "bf16", "gelu"), WIDE))
    assert "Gluon form does not apply" not in k
    assert "instr_shape=[16, 128, 16]" in k and "instr_shape=[16, 64, 16]" in k
    assert "_wbuf1 = gl.allocate_shared_memory(tl.bfloat16, [4, 64, 64], _w1_l)" in k
    assert "'k0_linear_0_dw', 'arg1', [384, 512], [512, 1], [128, 64], 'bf16')" in k
    assert "'k0_linear_0_dw1', 'arg1', [384, 512], [512, 1], [64, 64], 'bf16')" in k
    # the loader fills both buffers of a slot, at the tile's column and 128 columns on
    assert "tma.async_copy_global_to_shared(_dw, [c4 * 192, kt * 64]" in k
    assert "tma.async_copy_global_to_shared(_dw1, [c4 * 192 + 128, kt * 64]" in k
    assert k.count("= warpgroup_mma(") == 2 and "warpgroup_mma_wait(num_outstanding=2, deps=(" in k
    # each part's epilogue: its own bias columns, GELU, its store
    assert re.search(r"tl\.load\(arg2 \+ \(192 \* c4 \+ o\d+\)\)", k)
    assert re.search(r"tl\.load\(arg2 \+ \(192 \* c4 \+ o\d+ \+ 128\)\)", k)
    assert k.count("tl.erf(") == 2
    # the second part's buffer is its own: its store does not wait for the first part's (one store in flight)
    assert "_cbuf0p128 = gl.allocate_shared_memory(tl.bfloat16, [128, 64], _c0p128_l)" in k
    assert "tma.async_copy_shared_to_global(_dc0, [c2 * 128, c4 * 192 + 0], _cbuf0)" in k
    assert "tma.async_copy_shared_to_global(_dc0p128, [c2 * 128, c4 * 192 + 128], _cbuf0p128)" in k
    assert k.index("tma.store_wait(pendings=1)") > k.index("_cbuf0.store(")
    assert WIDE.resources(Problem("gemm", M=300, N=384, K=512)).smem_bytes == \
        4 * 320 * 64 * 2 + 128 * 192 * 2 + 1024
    # 5 stages: the ring leaves no room; one tile a program: the parts through the A ring's slots 0-1 and 2
    one = kernel_text(gluon_source(linear_module([256], 384, 512, "bf16", "gelu"),
                                   GemmConfig(BM=128, BN=192, BK=64, GROUP_M=8, warps=8, stages=5, GLUON=2)))
    assert "_cbuf0 = _abuf._reinterpret(tl.bfloat16, [128, 128], _c0_l)" in one
    assert "_cbuf0p128 = _abuf.index(2)._reinterpret(tl.bfloat16, [128, 64], _c0p128_l)" in one
    n = kernel_text(gluon_source(matmul_module([300], 512, 384, "bf16"), NARROW))
    assert "Gluon form does not apply" not in n and "gl.warp_specialize(" not in n
    assert "instr_shape=[16, 64, 16]" in n and "instr_shape=[16, 32, 16]" in n
    assert "'k0_matmul_0_dw', 'arg1', [384, 512], [512, 1], [64, 64], 'bf16')" in n
    assert "'k0_matmul_0_dw1', 'arg1', [384, 512], [512, 1], [64, 32], 'bf16')" in n
    assert re.search(r"tma\.async_copy_global_to_shared\(_dw1, \[[^,]+, c\d+ \* 96 \+ 64\]", n)
    assert ".permute((1, 0))" not in n


def test_split_k_parts_meet_in_the_workspace():
    """K in two parts (work item w = (tile t, part ks), parts major): both partitions walk K from the part's offset; each part
    counts itself in first; the first to arrive stores its accumulators into the slice its arrival names, fences
    and publishes it on the tile's second counter; the last stores nothing, waits for that counter, adds the slice
    and runs the epilogue (bias, GELU, the TMA stores) inside that branch."""
    k = kernel_text(gluon_source(linear_module([256], 384, 1024, "bf16", "gelu"), SPLIT2))
    assert "Gluon form does not apply" not in k
    # part-major: the programs of one part first, neighbours reading one W block (-1 us on T256's fc1 at 128 x 192
    # on the H100 against tile-major, bench/kernels/NOTES.md section 35); the loader's items are the same
    assert k.count("t = w % 4") == 2 and k.count("ks = w // 4") == 2
    assert "tma.async_copy_global_to_shared(_da, [c2 * 128, ks * 512 + kt * 64]" in k
    assert "for kt in range(0, 8):" in k and "kn = " not in k  # 16 K steps in two even parts
    arrive = re.search(r"arrived = tl\.atomic_add\(ctr \+ (\d+) \+ t, 1, sem=\"acq_rel\", scope=\"gpu\"\)", k)
    assert arrive and arrive.start() < k.index("tl.store(k0_linear_0_partials")  # counted in before any store
    first, last = k.index("if arrived % 2 != 1:"), k.index("if arrived % 2 == 1:")
    publish = k[first:last]
    assert len(re.findall(r"tl\.store\(k0_linear_0_partials \+ \(arrived % 2\) \* 98304 \+ o\d+, acc\d+, mask=m\d+\)",
                          publish)) == 2  # both column parts
    assert publish.index("_fence_gpu_gl()") < publish.index("gl.thread_barrier()")
    ready = re.search(r"tl\.atomic_add\(ctr \+ (\d+) \+ t, 1, sem=\"release\", scope=\"gpu\"\)", publish)
    assert ready and int(ready.group(1)) == int(arrive.group(1)) + 4  # (after the 4 tiles' arrival counters)
    tail = k[last:]
    assert "tl.store(k0_linear_0_partials" not in tail  # the last part stores no slice
    assert f"_await_count_gl(ctr + {ready.group(1)} + t, (arrived // 2 + 1) * 1)" in tail
    assert tail.index("_await_count_gl(") < tail.index("_fence_gpu_gl()") < tail.index("tl.load(k0_linear_0_partials")
    assert len(re.findall(r"acc\d+ = acc\d+ \+ tl\.load\(k0_linear_0_partials \+ 0 \+ o\d+", tail)) == 2
    assert tail.index("tl.load(k0_linear_0_partials") < tail.index("tl.erf(") < tail.index(
        "tma.async_copy_shared_to_global(")
    assert "_fence_gpu()" not in k
    src = gluon_source(linear_module([256], 384, 1024, "bf16", "gelu"), SPLIT2)
    # a slice a part (the last stores none here; the Triton form of the same config, below, stores all)
    assert "'k0_linear_0_partials': ((2, 256, 384), 'f32', 'workspace')" in src
    assert SPLIT2 in GemmConfig.space(Problem("gemm", M=256, N=6144, K=12288))
    assert SPLIT2 not in GemmConfig.space(Problem("gemm", M=256, N=6144, K=12288, split_ok=False))


def test_split_k_last_part_longer():
    """``SKEW``: where every program has one work item, the last part runs 2 K steps more than the others (its
    count a run-time value in both partitions, the ring's step count from 0); with more work items than
    programs, even parts."""
    k = kernel_text(gluon_source(linear_module([256], 384, 1024, "bf16", "gelu"), SKEWED))
    assert k.count("kn = tl.where(ks == 1, 9, 7)  # this part's K steps") == 2  # 16 = 7 + 9
    assert k.count("for kt in range(0, kn):") == 2
    assert "tma.async_copy_global_to_shared(_da, [c2 * 128, ks * 448 + kt * 64]" in k  # part 1 from step 7
    assert "mbarrier.arrive(_empty.index((g" in k and "+ kn - 1) % 4))" in k
    assert GemmTmaGen.kspan.__doc__
    assert SKEWED in GemmConfig.space(Problem("gemm", M=256, N=6144, K=12288))


def test_leading_dims_are_rows_of_one_matrix():
    """A linear over [4, 256, K] (a transformer's batch x tokens): the tile [1, 128, BN] of each matrix; A and the
    result through 2-D descriptors of [1024, K] / [1024, N], the tile's row block the batch entry's 2 blocks on
    (the grouped order walks the 8 row blocks of all batch entries as one run);
    where the tile does not divide a matrix's rows (300), the Triton form (a tile would cross into the next)."""
    k = kernel_text(gluon_source(linear_module([4, 256], 384, 512, "bf16", "gelu"), PIPE))
    assert "Gluon form does not apply" not in k and "@gluon.jit" in k
    src = gluon_source(linear_module([4, 256], 384, 512, "bf16", "gelu"), PIPE)
    assert "('k0_linear_0_da', 'arg0', [1024, 512], [512, 1], [128, 64], 'bf16')" in src
    assert "('k0_linear_0_dc0', 'k0_out0', [1024, 384], [384, 1], [128, 128], 'bf16')" in src
    m = re.search(r"tma\.async_copy_global_to_shared\(_da, \[\(\((c\d+)\) \* 2 \+ (c\d+)\) \* 128, ", k)
    assert m, "the row block: batch entry * 2 + its row block"
    # the batch entry and its row block from one run of 8 row blocks (the grouped order across batch entries)
    assert re.search(rf"{m.group(1)} = \(rb // 2\) % 4", k) and re.search(rf"{m.group(2)} = rb % 2", k), k
    assert "Gluon form does not apply" in gluon_source(linear_module([4, 300], 384, 512, "bf16", ""), PIPE)


def test_gluon_kernel_moves_the_epoch_on():
    """A Gluon kernel takes ``BUMP`` like a Triton one: the program with the last CTA id moves the epoch on (its
    stages never compute with it), so the launch needs no increment kernel of its own; a Gluon body that computed
    with the epoch would be marked ``nobump`` (the host's increment then)."""
    from kitsune.codegen.triton_gen.module import TritonGen

    src = gluon_source(linear_module([256], 384, 1024, "bf16", "gelu"), WS)
    k = kernel_text(src)
    assert "WATCHDOG: tl.constexpr, PDL: tl.constexpr = 0, BUMP: tl.constexpr = 0):" in k
    shell = k[k.index("def k0("):]
    assert "if BUMP:" in shell and "if gl.program_id(0) == 5:" in shell  # 2 x 3 tiles of 128 x 128
    assert shell.index("gdc_wait()") < shell.index("if BUMP:")  # after the previous kernel has finished
    assert '"nobump": True' not in src and '"gluon": True' in src
    assert not TritonGen._gluon_reads_epoch([(None, "f", ["    g(pid, ctr, err, epoch, WATCHDOG)"])])
    assert TritonGen._gluon_reads_epoch([(None, "f", ["    n = (epoch + 1) * 4"])])


@pytest.mark.parametrize("why,text,cfg", [
    ("operands of type ['f32']", linear_module([300], 256, 192, "f32", ""), WS),
    ("not 16-byte aligned", linear_module([300], 256, 36, "bf16", ""), WS),
    ("a tile [100, 128] of [100, 256]", linear_module([100], 256, 192, "bf16", ""), WS),
    ("16 rows a warp", linear_module([300], 256, 192, "bf16", ""),
     GemmConfig(BM=64, BN=128, BK=64, warps=8, stages=3, GLUON=1)),
    # ping-pong: one warpgroup a consumer, a power-of-two tile of at most 128 columns, K unsplit
    ("ping-pong over 128 x 192 tiles", linear_module([2000], 4096, 512, "bf16", "relu"), replace(PING, BN=192)),
    ("2 part(s) of K", linear_module([2000], 4096, 512, "bf16", "relu"), replace(PING, SPLIT=2)),
    ("8 warps", linear_module([2000], 4096, 512, "bf16", "relu"), replace(PING, warps=8)),
])
def test_falls_back_to_the_triton_form(why, text, cfg):
    src = gluon_source(text, cfg)
    assert "@gluon.jit" not in src and "tl.dot(" in src or "_dot_lp(" in src
    assert "Triton form of the gemm (the Gluon form does not apply:" in src and why in src, why


@pytest.mark.parametrize("BN", [32, 48])
def test_interpreter_runs_the_triton_form(tmp_path, BN):
    """Under Triton's interpreter (no Gluon) a GLUON config is its Triton form, and computes the reference (a
    tile of no power-of-two width too: its axis padded and clamped)."""
    cfg = GemmConfig(BM=32, BN=BN, BK=16, GROUP_M=2, SPLIT=1, warps=4, stages=2, GLUON=2)
    src = run(linear_module([70], 48, 96, "bf16", "gelu"), cfg, "bulk-sync", tmp_path, "bf16", 5)
    assert "@gluon.jit" not in src and "_dot_lp(" in src


def test_interpreter_runs_the_triton_form_of_a_split(tmp_path):
    """A split GLUON config under the interpreter is the Triton form of the same split: every part stores its
    slice of the workspace (one a part: the Gluon form's fewer would be written past), the last adds them all; it
    computes the reference."""
    cfg = GemmConfig(BM=32, BN=32, BK=16, GROUP_M=2, SPLIT=2, warps=4, stages=2, GLUON=2)
    src = run(linear_module([70], 48, 96, "bf16", "gelu"), cfg, "bulk-sync", tmp_path, "bf16", 5)
    assert "@gluon.jit" not in src and "ks * " in src
    assert re.search(r"'k0_linear_0_partials': \(\(2, 70, 48\), 'f32', 'workspace'\)", src)


def test_search_space_and_resources():
    big = Problem("gemm", M=1024, N=6144, K=12288)
    forms = [c for c in GemmConfig.space(big) if c.GLUON]
    assert {c.GLUON for c in forms} == {1, 2, 3} and not any(c.PER_ITEM for c in forms)
    assert all(c.warps == 4 and c.SPLIT == 1 and c.BN <= 128 for c in forms if c.GLUON == 3)
    assert {c.SPLIT for c in forms} == {1, 2} and all(c.BN in (128, 192) for c in forms if c.SPLIT == 2)
    assert not [c for c in GemmConfig.space(Problem("gemm", M=1024, N=6144, K=12288, elem_bytes=4)) if c.GLUON]
    assert not [c for c in GemmConfig.space(Problem("gemm", M=1024, N=6144, K=36)) if c.GLUON]  # unaligned rows
    assert not [c for c in GemmConfig.space(Problem("gemm", M=100, N=6144, K=12288)) if c.GLUON]  # M < BM
    # the ring, the result's 128-column buffer, the barriers; the launch's warps
    r = WS.resources(big)
    assert r.smem_bytes == 4 * 256 * 64 * 2 + 128 * 128 * 2 + 1024 and r.warps == 8
    assert GemmConfig().as_dict() == {k: v for k, v in GemmConfig(GLUON=0).as_dict().items()}
    assert "GLUON" not in GemmConfig().as_dict() and GemmConfig.from_dict(WS.as_dict()) == WS


def test_heuristic_default_widens_tiles_where_a_wave_runs_mostly_empty():
    """``GemmConfig.gluon_default``: 192-column tiles (warp-specialised, 4 stages) where they leave each SM fewer
    columns to run (``wave_columns``): N = 768 at 4096 rows is 192 tiles of 128 x 128 on 132 SMs (two waves, the
    second mostly empty) and 128 of 128 x 192 (one); N = 2304 five waves against three. Where the columns tie
    (GPT-2's 2048 rows, BERT's fc1) or 192 costs more (T256's fc1: 96 tiles of 128, 64 of 192; a 1024 x 4096
    GEMM's 128 x 256 tiles) the pick stays."""
    from kitsune.schedule.configs import default_config

    def pick(M, N, K):
        c = default_config(Problem("gemm", M=M, N=N, K=K, split_ok=True), "h100")
        return c.BN, c.GLUON, c.stages

    for shape in ((4096, 2304, 768), (4096, 768, 768), (4096, 768, 3072), (256, 12288, 6144)):
        assert pick(*shape) == (192, 2, 4), shape
    for shape in ((4096, 3072, 768), (2048, 2304, 768), (2048, 768, 768), (256, 6144, 12288)):
        assert pick(*shape) == (128, 2, 5), shape
    assert pick(1024, 4096, 4096) == (256, 1, 3)
    wide = GemmConfig(BM=128, BN=192, BK=64, GROUP_M=8, SPLIT=1, warps=8, stages=4, GLUON=2)
    p = Problem("gemm", M=4096, N=768, K=768)
    assert GemmConfig.wave_columns(p, wide, 132) == 192 and GemmConfig.wave_columns(p, WS, 132) == 256
    assert wide.gluon_result_buffer(2)  # (its own result buffer beside a 4-stage ring: several tiles a program)


def test_result_through_the_ring_when_its_own_buffer_does_not_fit():
    """At 7 stages the ring takes 224 KB: the result's 32 KB buffer does not fit beside it. Where every program
    has one tile, the tile leaves by TMA through the ring's first A slots; where a program has several (the ring
    is refilled for the next tile while the epilogue runs), from registers."""
    one = kernel_text(gluon_source(linear_module([300], 384, 192, "bf16", "gelu"), DEEP))  # 9 tiles
    assert "Gluon form does not apply" not in one
    assert "_cbuf0 = _abuf._reinterpret(tl.bfloat16, [128, 128], _c0_l)" in one
    assert "gl.allocate_shared_memory(tl.bfloat16, [128, 128]" not in one
    assert one.count("tma.async_copy_shared_to_global(") == 1 and "for it in range(0, 1):" in one
    many = kernel_text(gluon_source(linear_module([2048], 2048, 192, "bf16", "gelu"), DEEP))  # 256 tiles
    assert "for it in range(0, 2):" in many
    assert "_reinterpret" not in many and "tma.async_copy_shared_to_global(" not in many
    assert "_cbuf" not in many and "tl.store(" in many or "gl.store(" in many
    # below 7 stages the result keeps a buffer of its own
    six = kernel_text(gluon_source(linear_module([300], 384, 192, "bf16", "gelu"),
                                   GemmConfig(BM=128, BN=128, BK=64, GROUP_M=8, warps=8, stages=6, GLUON=2)))
    assert "_reinterpret" not in six and "_cbuf0 = gl.allocate_shared_memory(tl.bfloat16, [128, 128], _c0_l)" in six
    # the resources claim the ring alone at 7 stages, the ring and the buffer at 6
    p = Problem("gemm", M=256, N=6144, K=12288)
    assert DEEP.resources(p).smem_bytes == 7 * 256 * 64 * 2 + 1024 <= 227 * 1024
    assert GemmConfig(BM=128, BN=128, BK=64, warps=8, stages=6, GLUON=2).resources(p).smem_bytes == \
        6 * 256 * 64 * 2 + 128 * 128 * 2 + 1024
    assert DEEP in GemmConfig.space(p)


def test_tuner_only_filter():
    from kitsune.tools.tune import parse_only

    assert parse_only("GLUON=1,2") == {"GLUON": {1, 2}}
    assert parse_only("BM=128;warps=4,8") == {"BM": {128}, "warps": {4, 8}}
    assert parse_only(None) == {} and parse_only("") == {}


@pytest.mark.aot
@pytest.mark.parametrize("cfg", [WS, PIPE, DEEP, WIDE, NARROW, SPLIT2, SKEWED, PING],
                         ids=["ws", "pipelined", "ws-7-stages", "ws-192", "pipelined-96", "ws-192-split-2",
                              "ws-192-split-2-skew-2", "ping-pong"])
def test_compiles_for_sm90(cfg):
    from kitsune.codegen.aot import compile_source_in_subprocess

    # (GELU's erf beside a 128 x 256 accumulator, 128 registers a thread, spills: 44 bytes; the tuner sees that; so
    # does a ping-pong consumer's 128 x 128 on one warpgroup: 524 bytes)
    act = "gelu" if cfg.BN <= 128 and cfg.GLUON != 3 else "relu"
    mod = compile_source_in_subprocess(gluon_source(linear_module([1000], 1024, 512, "bf16", act), cfg), timeout=600)
    assert mod["kernels"], mod.get("error")
    (rec, ) = mod["kernels"]
    assert rec["ok"], rec.get("error")
    assert rec["wgmma"] and rec["tma_load"] and rec["tma_store"], rec
    assert rec["setmaxnreg"] == (cfg.GLUON >= 2), rec
    assert not rec["spill_stores"] and not rec["spill_loads"], rec
    assert rec["shared"] <= 227 * 1024, rec  # (7 stages: the result through the ring, 64 tiles on 64 programs)


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", [WS, PIPE, WIDE, SKEWED], ids=["ws", "pipelined", "ws-192", "ws-192-split-2-skew-2"])
def test_packed_weight_on_gpu(cfg):
    """A parameter weight with tails in N and K, uploaded packed by ``Program``, against the reference
    interpreter, twice."""
    import torch

    from kitsune.context import parse_module
    from kitsune.interpreter import interpret
    from kitsune.runtime import Program

    text = param_weight(linear_module([1000], 700, 520, "bf16", "gelu"))
    src = gluon_source(text, cfg)
    assert "@gluon.jit" in src and "PACKS = {'fc_weight'" in src
    rng = np.random.default_rng(5)
    module = parse_module(text)
    args = [(rng.standard_normal(tuple(a.type.get_shape())) / np.sqrt(a.type.get_shape()[-1])).astype(np.float32)
            for a in module.body.block.first_op.body.block.args]
    args = [torch.from_numpy(a).to(torch.bfloat16).float().numpy() for a in args]
    ref = interpret(module, args)[0]
    prog = Program(src, {"fc.weight": torch.from_numpy(args[1]).to(torch.bfloat16)}, "cuda")
    assert tuple(prog.parameters()["fc.weight"].shape) == (-(-700 // cfg.BN) * 9 * cfg.BN, 64)
    for _ in range(2):
        out = prog(torch.from_numpy(args[0]).to(torch.bfloat16).cuda(),
                   torch.from_numpy(args[2]).to(torch.bfloat16).cuda())[0].float().cpu().numpy()
        err = float(np.linalg.norm(out - ref) / np.linalg.norm(ref))
        assert err < 1e-2, err


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", [WS, PIPE, DEEP, WIDE, NARROW, SPLIT2, SKEWED, PING],
                         ids=["ws", "pipelined", "ws-7-stages", "ws-192", "pipelined-96", "ws-192-split-2",
                              "ws-192-split-2-skew-2", "ping-pong"])
@pytest.mark.parametrize("kind", ["linear", "matmul", "linear3d", "many"])
def test_on_gpu(tmp_path, cfg, kind):
    """Both forms against the reference interpreter (fp32 math of bf16 inputs) on a shape whose rows and columns
    do not divide the tile (and a linear over 3 x 256 rows: leading dims), run twice (the ring's barrier phases
    carry over tiles, not launches)."""
    import torch

    import importlib.util

    from kitsune.context import parse_module
    from kitsune.interpreter import interpret

    text = (linear_module([1000], 700, 520, "bf16", "gelu") if kind == "linear"
            else linear_module([3, 256], 704, 520, "bf16", "gelu") if kind == "linear3d"
            # (several tiles a program, an odd count on some: the ping-pong consumers' turns; a tail in M)
            else linear_module([2000], 4096, 520, "bf16", "relu") if kind == "many"
            else matmul_module([1000], 704, 520, "bf16"))
    src = gluon_source(text, cfg)
    assert "@gluon.jit" in src, "the Gluon form was not taken"
    if kind == "linear3d":  # (3 x 256 rows: each matrix's rows in whole 128-row blocks)
        assert "Gluon form does not apply" not in src
    if kind == "matmul":  # (the linear's 700-column result has an unaligned pitch: stored from registers)
        assert ("_abuf._reinterpret(" in src) == (cfg is DEEP)  # 7 stages: the result through the ring, 48 tiles
    rng = np.random.default_rng(3)
    module = parse_module(text)
    args = [(rng.standard_normal(tuple(a.type.get_shape())) / np.sqrt(a.type.get_shape()[-1])).astype(np.float32)
            for a in module.body.block.first_op.body.block.args]
    args = [torch.from_numpy(a).to(torch.bfloat16).float().numpy() for a in args]  # what the kernel sees
    ref = interpret(module, args)[0]
    path = tmp_path / f"gemm_gluon_{kind}_{cfg.GLUON}.py"  # (imported as is: not under Triton's interpreter)
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    tensors = {n: torch.from_numpy(v).to(torch.bfloat16).cuda() for n, v in zip(mod.ARGS, args)}
    state = mod.allocate("cuda")
    for _ in range(2):
        out = mod.launch(state, tensors)[0].float().cpu().numpy()
        mod.check(state)
        err = float(np.linalg.norm(out - ref) / np.linalg.norm(ref))
        assert err < 1e-2, err
    assert mod._bump_in_kernel(state, None) and int(state["epoch"][0]) == 2  # moved on by the kernel itself


THREE_RESULTS = """func.func @main(%x: tensor<256x384xbf16>, %w: tensor<128x384xbf16>, %r: tensor<256x128xbf16>)
    -> (tensor<256x128xbf16>, tensor<256x128xbf16>, tensor<256x128xbf16>) {
  %l = graph.linear %x, %w : tensor<256x384xbf16>, tensor<128x384xbf16> -> tensor<256x128xbf16>
  %h = graph.add %r, %l : tensor<256x128xbf16>, tensor<256x128xbf16> -> tensor<256x128xbf16>
  %q = graph.mul %h, %h : tensor<256x128xbf16>, tensor<256x128xbf16> -> tensor<256x128xbf16>
  %a = graph.relu %h : tensor<256x128xbf16> -> tensor<256x128xbf16>
  func.return %h, %q, %a : tensor<256x128xbf16>, tensor<256x128xbf16>, tensor<256x128xbf16>
}"""


def test_result_buffers_of_several_results_fit_together():
    """A Gluon gemm stage storing three results (Llama prefill's down projection: the residual sum and what the
    next RMSNorm reads of it) at 5 stages: the ring takes 160 KB, so two 32 KB result buffers fit beside it in
    the H100's 227 KB and the third result leaves from registers (each result asked for a buffer of its own
    before: 256 KB, which the GPU refused to launch)."""
    k = kernel_text(gluon_source(THREE_RESULTS, GemmConfig(BM=128, BN=128, BK=64, GROUP_M=8, warps=8, stages=5,
                                                          GLUON=2)))
    assert "Gluon form does not apply" not in k
    own = re.findall(r"_cbuf\d+ = gl\.allocate_shared_memory\(tl\.bfloat16, \[128, 128\]", k)
    assert len(own) == 2, k
    assert 5 * 256 * 64 * 2 + 2 * 128 * 128 * 2 + 1024 <= 227 * 1024 < 5 * 256 * 64 * 2 + 3 * 128 * 128 * 2
    assert k.count("tma.async_copy_shared_to_global(") == 2
    assert re.search(r"\b(tl|gl)\.store\(", k), k  # the third
