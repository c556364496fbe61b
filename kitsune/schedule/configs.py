"""Schedule configs: per template a frozen dataclass with its search space, resource model and cost estimate.

A config is what a template needs to emit a kernel: block sizes, warps, pipeline
depth, the reduction split. ``space(problem)`` lists the candidates ``kitsune-tune``
times; ``default(problem)`` is the heuristic choice (the candidate the cost model
ranks first) used without a GPU or for a shape the tuning database has not seen;
``resources()`` is the register / shared-memory model the occupancy function
uses before the first compile. Configs print as, and parse from, flat dicts
(the ``config`` attribute of a task or stage).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import ClassVar

from kitsune.gpu import GPU, get_gpu
from kitsune.schedule.occupancy import Resources, ctas_per_sm


@dataclass(frozen=True)
class Problem:
    """What a template instance computes, as the config heuristics see it."""

    template: str
    M: int = 1  # rows (M role; for gemv the skinny side)
    N: int = 1  # columns
    K: int = 1  # reduction extent
    batch: int = 1
    elem_bytes: int = 2
    out_elems: int = 0  # reserved for templates of other shapes (part of the database key)
    row: int = 0
    rows: int = 0
    split_ok: bool = True  # the epilogue allows a split reduction (elementwise only)
    mem_cols: int = 0  # chain: columns of the layers' operands read from memory, in 64-column chunks
    layout: int = 0  # conv: 1 where the program stores the input channels-last (``kitsune.schedule.storage``)
    stride: int = 0  # depthwise: the window's column stride (``row``: the input row's length)
    slices: int = 0  # gemm: slices of the contraction a result column reads (a gated projection's 2), one
    # accumulator each (``select.sliced_contraction``); N is then the result's columns

    def key(self) -> str:
        # (mem_cols, layout, stride and slices only where set: the keys of the tuning database's entries stay what
        # they were)
        return ",".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self)
                        if f.name not in ("mem_cols", "layout", "stride", "slices") or getattr(self, f.name))


def _pow2_ge(n: int) -> int:
    return 1 << max(0, (max(1, int(n)) - 1).bit_length())


BATCHED_MAX_MN = 64


def batched_small(p: Problem) -> bool:
    """A batched contraction of small matrices (each at most 64 x 64 and 8 rows at least: DLRM's interaction
    ``Z @ Z^T`` of [9, 64] per sample): one tile holds whole matrices of several batch entries (``GemmConfig.BB``)
    and runs one batched tl.dot, instead of a grid of one padded matrix per program."""
    return (p.template == "gemm" and p.batch > 1 and 8 <= p.M <= BATCHED_MAX_MN and p.N <= BATCHED_MAX_MN)


@dataclass(frozen=True)
class Config:
    template: ClassVar[str] = ""
    #: fields left out of ``as_dict`` while at their default: fields added after configs were printed and
    #: tuned, so that the configs without them print and hash as before
    LATER_FIELDS: ClassVar[tuple[str, ...]] = ()
    warps: int = 4
    stages: int = 1

    def as_dict(self) -> dict:
        d = asdict(self)
        for f in fields(self):
            if f.name in self.LATER_FIELDS and d[f.name] == f.default:
                del d[f.name]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Config":
        names = {f.name for f in fields(cls)}
        return cls(**{k: (bool(v) if isinstance(getattr(cls, k, None), bool) else int(v))
                      for k, v in d.items() if k in names})

    def resources(self, p: Problem) -> Resources:
        return Resources(self.warps, 64, 0)

    def heuristic(self) -> bool:
        """A candidate the heuristic default may be (``default_config``); some forms are tuned only."""
        return True

    def tile(self, p: Problem) -> tuple[int, ...]:
        raise NotImplementedError

    def work_items(self, p: Problem) -> int:
        return 1

    def estimate_s(self, p: Problem, gpu: GPU) -> float:
        return 0.0

    @classmethod
    def default(cls, p: Problem, gpu: GPU) -> "Config":
        """The heuristic choice for ``p`` (templates with a search space rank it with ``estimate_s`` instead)."""
        return cls()


@dataclass(frozen=True)
class GemmConfig(Config):
    """gemm: BM x BN output tiles, a pipelined K loop of BK, grouped tile order, an optional split of K.
    ``PER_ITEM``: one program per work item instead of a persistent grid of the resident CTAs (as for gemv:
    the hardware starts the next program as one ends, and the programs of one SM hide each other's latency,
    where a persistent program's tiles run one after another). ``GLUON`` (Hopper, 16-bit operands read from
    memory): the kernel in Gluon, operands by TMA through a ring of ``stages`` shared-memory slots, async wgmma
    (``templates/gemm_tma.py``); 1 one partition, 2 warp-specialised (a loader warp fills the ring across
    tiles), 3 ping-pong (the loader, and two one-warpgroup consumers taking tiles in turn, one's epilogue under the
    other's K loop: ``warps`` 4); elsewhere the Triton form of the same tile."""

    template: ClassVar[str] = "gemm"
    LATER_FIELDS: ClassVar[tuple[str, ...]] = ("BB", "PER_ITEM", "GLUON", "SKEW")
    BM: int = 128
    BN: int = 128
    BK: int = 64
    GROUP_M: int = 8
    SPLIT: int = 1
    warps: int = 8
    stages: int = 3
    BB: int = 1  # batch entries per tile (a batched dot of small matrices, ``batched_small``)
    PER_ITEM: bool = False
    GLUON: int = 0
    SKEW: int = 0  # Gluon, split: K steps the last part of a tile takes beyond an even share (``kspan``)

    def resources(self, p: Problem) -> Resources:
        # (Triton's ring: ``stages`` buffers of the K step's operand chunks, a weight chunk a slice)
        smem = (self.BM + self.BN * max(1, p.slices)) * self.BK * p.elem_bytes * self.stages * self.BB
        if self.GLUON:
            # (``warps``: the kernel's launch; the loader partition's warp takes a warpgroup's slot beside them, the
            # ping-pong form's second consumer another, and setmaxnreg shares the registers out)
            threads = 32 * (self.warps + {2: 4, 3: 8}.get(self.GLUON, 0))
            cbuf = self.gluon_result_buffer(p.elem_bytes)  # the result's way out (a TMA store), where it fits
            return Resources(self.warps, min(255, 65536 // threads), smem + cbuf + 1024)
        # fp32 accumulator registers per thread (one accumulator a slice the result reads: ``Problem.slices``)
        acc = self.BB * self.BM * self.BN * max(1, p.slices) // (32 * self.warps)
        norm = acc if p.row else 0  # a norm in the epilogue holds the centred row beside the accumulator
        return Resources(self.warps, min(255, acc + 40 + (acc // 2 if self.BN > 128 else 0) + norm), smem)

    def heuristic(self) -> bool:
        """Ping-pong (``GLUON`` 3) is tuned only: the cost model does not tell the Gluon forms apart, and in their
        programs on the H200 it ran even with the warp-specialised form on the LM head's and BERT's short-K GEMMs,
        40% slower under GELU's epilogue (bench/kernels/NOTES.md section 44)."""
        return self.GLUON != 3

    def gluon_widths(self) -> tuple[int, int]:
        """(BN0, BN1): the Gluon forms' tile columns as a power-of-two part and, where ``BN`` is none (96 = 64 +
        32, 192 = 128 + 64), a second one with an accumulator, wgmma and store of its own (Gluon's register
        tensors are powers of two; wgmma's N need not be). BN1 is 0 or a power of two."""
        BN0 = 1 << (self.BN.bit_length() - 1)
        return BN0, self.BN - BN0

    def gluon_ring_bytes(self) -> int:
        """Shared memory of the Gluon forms' ring: ``stages`` slots of an A and a W block (16-bit operands)."""
        return (self.BM + self.BN) * self.BK * 2 * self.stages

    def gluon_result_buffer(self, out_bytes: int, taken: int = 0) -> int:
        """Bytes of the Gluon forms' own shared-memory buffers for the result (``BM`` x 128 columns of an
        ``out_bytes``-byte type; ``BM`` x ``BN`` where the tile is two parts): 0 where it does not fit beside the ring
        (and ``taken`` bytes of other results' buffers) in one CTA's shared memory. The template
        then stores the tile through the ring's first slots, where every program has one tile (the ring is
        drained when its tile's K loop ends), and from registers otherwise (``templates/gemm_tma.py``)."""
        BN0, BN1 = self.gluon_widths()
        cbuf = self.BM * (min(BN0, 128) + BN1) * out_bytes  # (a second part has a buffer of its own)
        cbuf *= 2 if self.GLUON == 3 else 1  # (each ping-pong consumer its own)
        return cbuf if self.gluon_ring_bytes() + taken + cbuf + 1024 <= get_gpu("h100").smem_per_cta_bytes else 0

    def tile(self, p: Problem) -> tuple[int, int]:
        return (min(self.BM, p.M), min(self.BN, p.N))

    def tiles(self, p: Problem) -> int:
        return math.ceil(p.M / self.BM) * math.ceil(p.N / self.BN) * math.ceil(p.batch / self.BB)

    def work_items(self, p: Problem) -> int:
        return self.tiles(p) * self.SPLIT

    def estimate_s(self, p: Problem, gpu: GPU) -> float:
        if p.slices > 1:  # a tile of the result runs the K loop of each slice's columns: a tile as wide as all
            return replace(self, BN=self.BN * p.slices).estimate_s(replace(p, N=p.N * p.slices, slices=0), gpu)
        ctas = max(1, ctas_per_sm(self.resources(p), gpu))
        slots = gpu.sm_count * ctas
        items = self.work_items(p)
        waves = math.ceil(items / slots)
        # per-CTA tensor-core efficiency of a tile shape (bigger tiles reuse operands better)
        shape_eff = {128 * 256: 1.0, 128 * 128: 0.85, 64 * 256: 0.8, 64 * 128: 0.7}.get(self.BM * self.BN, 0.55)
        flops = 2.0 * p.M * p.N * p.K * p.batch
        # padded work: tiles cut at the matrix edges still cost a whole tile
        padded = self.tiles(p) * self.BB * self.BM * self.BN * p.K * 2.0
        per_item = padded / items / (gpu.tc_bf16_flops / gpu.sm_count * shape_eff / ctas)
        compute = waves * per_item
        nbytes = (p.M * p.K * math.ceil(p.N / self.BN) / max(1, min(8, math.ceil(p.N / self.BN)))
                  + p.N * p.K * math.ceil(p.M / self.BM) / max(1, min(self.GROUP_M, math.ceil(p.M / self.BM)))
                  ) * p.elem_bytes * p.batch + p.M * p.N * p.batch * p.elem_bytes
        memory = nbytes / gpu.dram_bw
        split = 0.0
        if self.SPLIT > 1:
            # fp32 partial slices: each part writes one, the last reads them all; measured on the H100 at about
            # half the DRAM rate (bench/kernels/NOTES.md: T256 fc1, split 4 at 125 us against 98 us unsplit)
            split = 2 * self.SPLIT * p.M * p.N * p.batch * 4 / (0.5 * gpu.dram_bw)
        return max(compute, memory, flops / gpu.tc_bf16_flops) + split

    @staticmethod
    def batched_blocks(p: Problem) -> tuple[int, int, int]:
        """(BM, BN, BK) of a batched dot of small matrices: whole M and N padded to the 16 an mma needs, K chunks
        of up to 64."""
        return max(16, _pow2_ge(p.M)), max(16, _pow2_ge(p.N)), min(64, max(16, _pow2_ge(p.K)))

    @staticmethod
    def batched_space(p: Problem) -> list["GemmConfig"]:
        """A batched dot of small matrices (``batched_blocks``), BB batch entries per tile with at most 8192
        accumulator elements."""
        BM, BN, BK = GemmConfig.batched_blocks(p)
        return [GemmConfig(BM=BM, BN=BN, BK=BK, GROUP_M=1, SPLIT=1, warps=w, stages=2, BB=bb)
                for bb in (1, 2, 4, 8, 16, 32) for w in (2, 4)
                if bb * BM * BN <= 8192 and bb <= _pow2_ge(p.batch)]

    @staticmethod
    def batched_default(p: Problem, gpu: GPU) -> "GemmConfig":
        """2048 accumulator elements per program of 4 warps (DLRM's interaction: 7.2 us against 19.2 for the
        evaluator's multiply-accumulate, bench/kernels/gather_probe.py), fewer while the grid has fewer than two
        programs per SM."""
        BM, BN, BK = GemmConfig.batched_blocks(p)
        bb = max(1, min(_pow2_ge(p.batch), 2048 // (BM * BN)))
        while bb > 1 and math.ceil(p.batch / bb) < 2 * gpu.sm_count:
            bb //= 2
        return GemmConfig(BM=BM, BN=BN, BK=BK, GROUP_M=1, SPLIT=1, warps=4, stages=2, BB=bb)

    @staticmethod
    def space(p: Problem) -> list["GemmConfig"]:
        if batched_small(p):
            return GemmConfig.batched_space(p)
        if p.row:
            return GemmConfig.row_space(p)
        out = []
        for BM, BN, w, st in ((128, 256, 8, 3), (128, 128, 8, 4), (128, 128, 4, 4), (64, 128, 4, 4), (64, 64, 4, 4),
                              (128, 128, 8, 5), (128, 128, 4, 5)):
            for split in (1, 2, 3, 4, 6, 8):
                if split > 1 and (not p.split_ok or p.K < 2 * split * 64 or BM * BN > 128 * 128):
                    continue  # (a split's combine holds two accumulators: larger tiles spill)
                if BN > max(64, _pow2_ge(p.N)) or BM > max(64, _pow2_ge(p.M)):
                    continue
                if p.K % 8 and p.K > 64 and BM * BN > 128 * 128:
                    continue  # rows not 16-byte aligned: no async copies, and a 128 x 256 tile spills (AOT)
                if p.slices and (BM * BN * p.slices > 128 * 32 * w
                                 or (BM + BN * p.slices) * 64 * p.elem_bytes * st > get_gpu("h100").smem_per_cta_bytes):
                    continue  # an accumulator a slice: at most 128 registers a thread, the ring within a CTA's
                    # shared memory
                out.append(GemmConfig(BM=BM, BN=BN, BK=64, GROUP_M=8, SPLIT=split, warps=w, stages=st))
        # one program per tile (after the persistent configs: the heuristic ranks them alike, ties keep the
        # persistent grid)
        out += [replace(c, PER_ITEM=True) for c in out if c.SPLIT == 1]
        out += GemmConfig.gluon_space(p)
        return out or [GemmConfig(BM=64, BN=64, BK=32, warps=4, stages=2)]

    @staticmethod
    def row_space(p: Problem) -> list["GemmConfig"]:
        """A norm over each row of the result follows in the epilogue (``Problem.row``): the tile spans the row
        (BN = row), unsplit, at most 128 fp32 accumulator registers per thread (the norm's statistics and the
        epilogue's operands need the rest)."""
        out = []
        for BM, w, st in ((64, 4, 4), (128, 8, 4), (64, 4, 3), (128, 8, 3), (64, 8, 4), (128, 4, 3), (32, 4, 4)):
            if BM > max(32, _pow2_ge(p.M)) or BM * p.row // (32 * w) > 128:
                continue
            out.append(GemmConfig(BM=BM, BN=p.row, BK=64, GROUP_M=8, SPLIT=1, warps=w, stages=st))
        out += [replace(c, PER_ITEM=True) for c in out]
        return out

    #: (BM, BN) of the cost model's pick -> (GLUON form, stages) of the Gluon config the heuristic default takes in
    #: its place (``gluon_default``)
    GLUON_DEFAULT: ClassVar[dict] = {(128, 256): (1, 3), (128, 128): (2, 5)}
    #: K up to which the heuristic default's Gluon form is warp-specialised 128 x 128 (16 steps of 64)
    SHORT_K: ClassVar[int] = 1024

    @staticmethod
    def wave_columns(p: Problem, c: "GemmConfig", sms: int) -> int:
        """Columns of tiles one SM runs one after another: waves of a persistent grid (``ceil(tiles / sms)``) times
        the tile's width (the rows, 128, alike for the Gluon forms)."""
        return math.ceil(c.tiles(p) / sms) * c.BN

    @staticmethod
    def gluon_default(p: Problem, best: "GemmConfig", sms: int = 132) -> "GemmConfig":
        """The heuristic default: the Gluon form of the cost model's pick ``best`` (its tile; 128 x 256 pipelined at
        3 stages, 128 x 128 warp-specialised at 5; for a K of at most ``SHORT_K`` 128 x 128 warp-specialised) where
        the space has it, else ``best``. The cost model does not tell the forms apart; on the H100 the Gluon form
        beat the Triton one on every large GEMM measured (bench/kernels/NOTES.md sections 34-35: T1024's fc2 226.7
        against 239.8 us at 128 x 256; T256's fc1 76-79 at 128 x 128, 7 stages, against 87 for the Triton default;
        bert_layer's QKV and fc1 33.0 / 52.8 against 35.7 / 59.7 at 128 x 256). Where the Gluon form does not apply
        to the task after all (``templates/gemm_tma.py``), the module emits the Triton form of the same config.

        Where 192-column tiles (warp-specialised, 4 stages: the result's own buffer still fits beside the ring)
        leave each SM fewer columns to run than that pick (``wave_columns`` on ``sms``), they are the default: the
        last wave of a grid of 128 x 128 tiles runs mostly empty where N is 768 (192 tiles on 132 SMs, 128 of
        128 x 192). On the H100 (section 36) BERT-base's GEMMs at 4096 rows ran so 25.4 / 14.7 / 33.1 us against
        27.4 / 17.1 / 37.9 (QKV, O, fc2), the layer 0.1612 ms against 0.1679 (T256's fc2, tuned: 128 x 192 at 5
        stages 64.4 against 72.7 for 128 x 256)."""
        space = GemmConfig.gluon_space(p)
        chosen = GemmConfig._gluon_pick(p, best, space)
        if not chosen.GLUON or chosen.BM != 128:
            return chosen
        wide = GemmConfig(BM=128, BN=192, BK=64, GROUP_M=8, SPLIT=1, warps=8, stages=4, GLUON=2)
        if wide in space and GemmConfig.wave_columns(p, wide, sms) < GemmConfig.wave_columns(p, chosen, sms):
            return wide
        return chosen

    @staticmethod
    def _gluon_pick(p: Problem, best: "GemmConfig", space: list["GemmConfig"]) -> "GemmConfig":
        """``gluon_default``'s form of ``best`` (``space``: ``gluon_space(p)``) before the wave comparison."""
        form = GemmConfig.GLUON_DEFAULT.get((best.BM, best.BN))
        if form is None or best.SPLIT != 1 or best.PER_ITEM or best.BB != 1:
            return best
        cand = replace(best, GLUON=form[0], stages=form[1], warps=8, GROUP_M=8, BK=64)
        if p.K <= GemmConfig.SHORT_K:
            # a short K loop: the loader partition fills the next tile's ring during this tile's epilogue, where the
            # pipelined form starts each tile with an empty one (bert_layer's K = 768 GEMMs on the H100, section 35:
            # QKV 27.9 against 33.0 us, fc1 47.8 against 52.8, O 17.3 against 16.6; the layer 0.1661 against 0.1794
            # ms on an H200, gpt2 even)
            short = replace(cand, BN=128, GLUON=2, stages=5)
            if short in space:
                return short
        return cand if cand in space else best

    @staticmethod
    def gluon_space(p: Problem) -> list["GemmConfig"]:
        """The Gluon forms (``GLUON``, persistent, unsplit) for 16-bit operands with 16-byte aligned rows and whole
        tiles (bench/kernels/NOTES.md section 13: within 1% of cuBLAS on the GPT-3 MLP shapes at 128 x 128 on two
        warpgroups, warp-specialised, and 128 x 256 pipelined); after the Triton forms, which win ties."""
        if p.elem_bytes != 2 or p.batch != 1 or p.K % 8 or p.slices:
            return []  # (sliced results: the Triton form, a dot a slice)
        out = []
        for form in (2, 1):
            # (128 x 128 at 6 stages: 225 KB of shared memory with the result's buffer; at 7, 224 KB of ring alone,
            # the result leaving through the ring: on the H100 the warp-specialised form ran T256's fc1 at 82.1 /
            # 78.6 us against 87.3 at 5, cuBLAS 78.7; bench/kernels/NOTES.md section 33. 96 and 192 columns: a
            # grid of 128 tiles where 128 x 128 makes 96 (T256's fc1) or 192 (its fc2): section 34)
            for BM, BN, w, st in ((128, 128, 8, 5), (128, 128, 8, 4), (128, 256, 8, 3), (128, 256, 8, 4),
                                  (128, 128, 4, 5), (128, 128, 8, 6), (128, 128, 8, 7), (128, 192, 8, 4),
                                  (128, 192, 8, 5), (128, 96, 8, 7), (128, 96, 8, 8)):
                if p.M >= BM and p.N >= BN:
                    out.append(GemmConfig(BM=BM, BN=BN, BK=64, GROUP_M=8, SPLIT=1, warps=w, stages=st, GLUON=form))
            # K in two parts that meet in an fp32 workspace, the last to arrive running the epilogue: 128 work items
            # where T256's fc1 has 64 tiles of 128 x 192 (section 34); the last part 2 K steps longer, so that the
            # other's slice is stored while it runs (where a program has one work item)
            for BM, BN, w, st, skew in ((128, 192, 8, 4, 0), (128, 192, 8, 5, 0), (128, 128, 8, 6, 0),
                                        (128, 192, 8, 5, 2), (128, 192, 8, 4, 2)):
                if p.split_ok and p.K >= 4 * 64 and p.M >= BM and p.N >= BN:
                    out.append(GemmConfig(BM=BM, BN=BN, BK=64, GROUP_M=8, SPLIT=2, warps=w, stages=st, GLUON=form,
                                          SKEW=skew))
        # ping-pong: two one-warpgroup consumers taking a program's tiles in turn (``templates/gemm_tma.py``); each has
        # a result buffer of its own beside the ring (128 x 128 at 5 stages: 224 KB)
        for BM, BN, st in ((128, 128, 4), (128, 128, 5), (128, 64, 6)):
            if p.M >= BM and p.N >= BN:
                out.append(GemmConfig(BM=BM, BN=BN, BK=64, GROUP_M=8, SPLIT=1, warps=4, stages=st, GLUON=3))
        return out


@dataclass(frozen=True)
class GemvConfig(Config):
    """gemv / skinny gemm (M <= 16): BN columns per program, K in chunks of BK, K split over SPLIT programs
    reduced in the kernel (fp32 atomics; the last program of a column block runs the epilogue).
    ``DOT``: pad M to 16 rows and use the tensor cores (mma) instead of FMAs. ``SWAP`` (with ``DOT``): the weight
    chunk is the product's first operand and the padded rows its second (acc[BN, 16] = W x^T, transposed once
    after the K loop), so BN >= 64 columns make a warpgroup's wgmma (m64n16) where x first is mma.sync m16n8
    (bench/kernels/skinny_probe.py, NOTES section 30). ``PER_ITEM``: one program per work
    item (the hardware starts the next as one ends) instead of a persistent grid whose programs walk their items
    one after another, each item's loads issued only once the last one is reduced (bench/kernels/NOTES.md
    sections 9 and 18)."""

    template: ClassVar[str] = "gemv"
    LATER_FIELDS: ClassVar[tuple[str, ...]] = ("PER_ITEM", "SWAP")
    BN: int = 16
    BK: int = 256
    SPLIT: int = 1
    DOT: bool = False
    warps: int = 4
    stages: int = 3
    PER_ITEM: bool = False
    SWAP: bool = False

    def resources(self, p: Problem) -> Resources:
        regs = 32 + (self.BN * self.BK) // (32 * self.warps) * (1 if self.DOT else 2)
        smem = (16 + self.BN) * self.BK * p.elem_bytes * self.ring_buffers() if self.DOT else 0
        return Resources(self.warps, min(255, regs), smem)

    def ring_buffers(self) -> int:
        """The [16 + BN, BK] operand buffers a tensor-core form's generated kernel takes (the sm_90 AOT reports of
        llama_decode_b8's kernels, 2026-11-27): ``stages - 1`` for x first (mma.sync: 80 KB for 64 x 256 at 3
        stages, 98 KB for 32 x 512); ``stages`` for the weight-first form (wgmma: 121 KB for 64 x 256 at 3), one
        more at 128 columns (288 KB for 128 x 256 at 3, 180 KB for 128 x 128 at 4; a bare Triton kernel of the same
        loop, ``bench/kernels/skinny_probe.py --aot``, takes ``stages`` there too: the extra buffer comes with the
        generated kernel's other code, not yet pinned down)."""
        if self.SWAP:
            return self.stages + (1 if self.BN >= 128 else 0)
        return max(1, self.stages - 1)

    def tile(self, p: Problem) -> tuple[int, int]:
        return (p.M, min(self.BN, p.N))

    def work_items(self, p: Problem) -> int:
        return math.ceil(p.N / self.BN) * self.SPLIT * p.batch

    def estimate_s(self, p: Problem, gpu: GPU) -> float:
        """Bytes over the bandwidth the programs can draw. Measured on the H100 (bench/kernels/NOTES.md): a
        memory-bound program needs ~32 KB of loads in flight per SM, and a wide FMA block (BN x BK > 8192
        elements on 4 warps) costs registers (fewer programs per SM) more than it brings."""
        items = self.work_items(p)
        ctas = max(1, ctas_per_sm(self.resources(p), gpu))
        per_sm = min(ctas, max(1, items // gpu.sm_count))
        active = min(gpu.sm_count, items)
        inflight = per_sm * self.BN * self.BK * p.elem_bytes
        eff = min(1.0, inflight / (32 * 1024)) * min(1.0, active / gpu.sm_count)
        if not self.DOT and self.BN * self.BK > 8192:
            eff *= 0.6
        if not self.PER_ITEM and items > ctas * gpu.sm_count:
            eff *= 0.9  # a persistent program's items run one after another
        nbytes = (p.N * p.K + p.M * p.K * math.ceil(p.N / self.BN)) * p.elem_bytes * p.batch
        if self.SPLIT > 1:
            nbytes += 2 * self.SPLIT * p.M * p.N * p.batch * 4  # the fp32 partial slices, written and read
        return nbytes / (gpu.dram_bw * max(eff, 1e-3)) + 0.5e-6 * (self.SPLIT - 1)

    @staticmethod
    def space(p: Problem) -> list["GemvConfig"]:
        out = []
        for dot in ((False, True) if p.M > 1 else (False,)):
            for BN in ((32, 64) if dot else (4, 8, 16, 32, 64)):
                for BK in (128, 256, 512, 1024, 2048):
                    if BN * BK > 16384 or (dot and BK > 512):
                        continue  # (the FMA block's registers)
                    for split in (1, 2, 4, 8):
                        if split > 1 and (not p.split_ok or p.K < split * BK):
                            continue
                        if BK > 2 * _pow2_ge(p.K):
                            continue
                        c = GemvConfig(BN=BN, BK=BK, SPLIT=split, DOT=dot, warps=4)
                        out.append(c)
                        if split == 1 and not dot and c.work_items(p) > 1:
                            out.append(replace(c, PER_ITEM=True))
        out = out or [GemvConfig(BN=16, BK=_pow2_ge(min(p.K, 256)))]
        if p.M > 1 and p.batch == 1:  # (after the x-first ones: the heuristic default is one of those)
            out += GemvConfig.swap_space(p)
        if p.M == 1:
            out += GemvConfig.row_space(p)
        return out

    @staticmethod
    def row_space(p: Problem) -> list["GemvConfig"]:
        """M = 1: one or two whole weight rows a program (chunks of up to 8192), one program per item, on 8 warps.
        On the H100 (bench/kernels/NOTES.md section 35): the down projection (K = 8192) 14.1 us at one row in one
        chunk against 14.5 for the 4-warp [4, 2048] tile, Llama's QKV / O (K = 2048) 7.7 / 6.3 against 8.0 / 6.4
        at two rows; tuned only (``heuristic``)."""
        out = []
        for BK in sorted({min(8192, _pow2_ge(p.K)), min(4096, _pow2_ge(p.K))}, reverse=True):
            for BN in (1, 2):
                out.append(GemvConfig(BN=BN, BK=BK, SPLIT=1, DOT=False, warps=8, PER_ITEM=True))
        return out

    def heuristic(self) -> bool:
        """A candidate the heuristic default may be (the weight-first and the 8-warp row forms are tuned only:
        as the default the weight-first one lost on the H100, llama_decode_b8 0.0931 -> 0.0972 ms, its gate / up
        at 128 columns a program on half the SMs, bench/kernels/NOTES.md section 30)."""
        return not self.SWAP and self.warps == 4

    @staticmethod
    def swap_space(p: Problem) -> list["GemvConfig"]:
        """The weight-first tensor-core form (``SWAP``): 64 or 128 columns (a warpgroup's wgmma rows), chunks of
        64-256 with a ring deep enough for ~64 KB in flight a program (6 / 4 / 3 stages)."""
        out = []
        for BN in (64, 128):
            for BK in (64, 128, 256):
                if BK > 2 * _pow2_ge(p.K) or BN > 2 * _pow2_ge(p.N):
                    continue
                for split in (1, 2, 4):
                    if split > 1 and (not p.split_ok or p.K < split * BK):
                        continue
                    out.append(GemvConfig(BN=BN, BK=BK, SPLIT=split, DOT=True, warps=4,
                                          stages={64: 6, 128: 4}.get(BK, 3), SWAP=True))
        return out


@dataclass(frozen=True)
class GenericConfig(Config):
    """generic: the comprehension evaluator with the task's tile (the correctness fallback)."""

    template: ClassVar[str] = "generic"
    warps: int = 4


@dataclass(frozen=True)
class ScatterConfig(Config):
    """scatter: a scatter-accumulate (``Y[I[j], d] += S[j, d]``) pushed from its source. A work item takes BJ
    source rows by BD columns and adds them into the (zeroed) result with atomics; SPLIT = the source's row
    chunks (work items per result tile), so the grid spans the source, not the result."""

    template: ClassVar[str] = "scatter"
    BJ: int = 64
    BD: int = 128
    SPLIT: int = 1
    warps: int = 4

    def resources(self, p: Problem) -> Resources:
        return Resources(self.warps, min(255, 32 + 2 * self.BJ * self.BD // (32 * self.warps)), 0)

    def work_items(self, p: Problem) -> int:
        return math.ceil(p.K / self.BJ) * math.ceil(p.N / self.BD) * p.batch

    def estimate_s(self, p: Problem, gpu: GPU) -> float:
        """Source rows read once, and one atomic read-modify-write in L2 per element (measured at about the
        DRAM rate for bf16 / fp32 atomics spread over the result)."""
        nbytes = p.K * p.N * p.batch * (p.elem_bytes + 8) + p.K * 8
        items = self.work_items(p)
        eff = min(1.0, items / (2 * gpu.sm_count))
        return nbytes / (gpu.dram_bw * max(eff, 1e-3))

    @staticmethod
    def space(p: Problem) -> list["ScatterConfig"]:
        if p.N == 1:  # one value a source row (index_add into a vector): long blocks of rows, one lane each
            return [ScatterConfig(BJ=bj, BD=1, SPLIT=math.ceil(p.K / bj), warps=4)
                    for bj in (256, 512, 1024, 2048) if bj <= max(256, _pow2_ge(p.K))]
        out = []
        for BD in (64, 128, 256):
            if BD > max(64, _pow2_ge(p.N)):
                continue
            for BJ in (16, 32, 64, 128):
                if BJ * BD > 16384 or BJ > max(16, _pow2_ge(p.K)):
                    continue
                out.append(ScatterConfig(BJ=BJ, BD=BD, SPLIT=math.ceil(p.K / BJ), warps=4))
        return out or [ScatterConfig(BJ=16, BD=64, SPLIT=math.ceil(p.K / 16))]

    @classmethod
    def default(cls, p: Problem, gpu: GPU) -> "ScatterConfig":
        """Whole rows up to 256 columns, BJ so that a block is 8192 elements, halved while the grid has fewer
        than four work items per SM (a scatter is latency-bound: atomics in flight decide its speed); one value
        a source row (``N = 1``): blocks of 1024 rows, halved down to 128 likewise."""
        if p.N == 1:
            BJ = max(128, min(1024, _pow2_ge(p.K)))
            while BJ > 128 and math.ceil(p.K / BJ) * p.batch < 4 * gpu.sm_count:
                BJ //= 2
            return ScatterConfig(BJ=BJ, BD=1, SPLIT=math.ceil(p.K / BJ), warps=4)
        BD = min(256, max(16, _pow2_ge(p.N)))
        BJ = max(16, min(128, 8192 // BD, _pow2_ge(p.K)))
        while BJ > 16 and math.ceil(p.K / BJ) * math.ceil(p.N / BD) * p.batch < 4 * gpu.sm_count:
            BJ //= 2
        return ScatterConfig(BJ=BJ, BD=BD, SPLIT=math.ceil(p.K / BJ), warps=4)


@dataclass(frozen=True)
class ConvConfig(Config):
    """conv (implicit GEMM, M = output pixels): a work item is BF output channels by up to BM output pixels,
    whole output rows of one image (or whole images) flattened into one pixel axis (a row wider than BM is
    cut into segments of BM). Its K loop runs over c * kh * kw in chunks of BK: the input read through the
    window (zero padding masked) as one tl.dot operand, the weights as the other. In the problem: M = pixels
    of all images, N = output channels, row = OW, rows = OH * OW."""

    template: ClassVar[str] = "conv"
    LATER_FIELDS: ClassVar[tuple[str, ...]] = ("AHEAD",)
    BF: int = 64
    BM: int = 64
    BK: int = 64
    warps: int = 4
    stages: int = 3
    AHEAD: bool = False
    """Load an input block read as single-element gathers (an NCHW input whose window runs are under 4 bytes:
    ``DotTemplate.gathers_along``) one K step ahead in registers: Triton pipelines only ``cp.async`` loads. It
    pays where each SM runs one program, whose load latency no other program hides (``default``)."""
    LONG_K: ClassVar[int] = 2048
    """Reduction length from which ``default`` takes the long-K forms."""

    def pixels(self, p: Problem) -> int:
        """Output pixels of one work item (the tile's row segment, rows or images)."""
        row, rows = max(1, p.row), max(1, p.rows or p.row)
        if row >= self.BM:
            return self.BM
        if rows >= self.BM:
            return (self.BM // row) * row
        return (self.BM // rows) * rows

    def resources(self, p: Problem) -> Resources:
        acc = self.BF * self.BM // (32 * self.warps)
        return Resources(self.warps, min(255, acc + 64), (self.BF + self.BM) * self.BK * p.elem_bytes * self.stages)

    def work_items(self, p: Problem) -> int:
        return math.ceil(p.N / self.BF) * math.ceil(p.M / self.pixels(p))

    def estimate_s(self, p: Problem, gpu: GPU) -> float:
        items = self.work_items(p)
        ctas = max(1, ctas_per_sm(self.resources(p), gpu))
        waves = math.ceil(items / (gpu.sm_count * ctas))
        lanes = _pow2_ge(self.pixels(p))
        per_item = 2.0 * lanes * self.BF * p.K / (gpu.tc_bf16_flops / gpu.sm_count * 0.5 / ctas)
        nbytes = (p.M * p.K * math.ceil(p.N / self.BF) + p.N * p.K * min(items, gpu.sm_count)) * p.elem_bytes
        return max(waves * per_item, nbytes / gpu.l2_bw)

    @staticmethod
    def space(p: Problem) -> list["ConvConfig"]:
        return [ConvConfig(BF=bf, BM=bm, BK=bk, warps=w, stages=s)
                for bf in (32, 64, 128) for bm in (32, 64, 128) for bk in (32, 64) for w, s in ((4, 3), (4, 4), (8, 3))
                if bf <= max(16, _pow2_ge(p.N)) and bk <= max(16, _pow2_ge(p.K)) and (w == 4 or bf * bm >= 8192)]

    @staticmethod
    def gathered_input(p: Problem) -> bool:
        """The input has too few channels, or a count that is no multiple of 8, for channels-last storage
        (``kitsune.codegen.layouts.channels_last_shape``; K = c * kh * kw is then no multiple of 8 either): its K
        loop is one flat gather over c * kh * kw, whose loads are single elements (a 7 x 7 stem over 3
        channels)."""
        return p.K % 8 != 0

    @classmethod
    def default(cls, p: Problem, gpu: GPU) -> "ConvConfig":
        """64 pixels (two 28-wide rows; bench/kernels/conv_probe.py), every output channel up to 128 in one block
        (the input is then read once: inception_b8's 1x1 256 -> 96 3.9 us at 128 against 5.3 at 64 on the H200,
        ``conv_layout_probe.py``, although 64 gives twice the work items) unless the grid would fill less than
        half the SMs, K chunks of 64; 8 warps 3 stages deep for a 128 x 64 block over a long K (the 3x3 96 -> 128
        channels-last: 7.2 us against 8.8 on 4 warps), else 4 warps 4 deep (the 5x5 16 -> 32: 4.1 against 5.1
        at 3). A gathered input (``gathered_input``) takes 128 pixels and the K chunk that pads K least (ties to
        the larger): ResNet's stem, K = 147 (``bench/kernels/stem_probe.py``, H100, its [K, pixels] loads): 109 us
        at 128 x 32 against 188 at 64 x 64 -- the chunk's padding (160 against 192) and its gather per weight chunk
        halved (3 stages: the gathered chunks wait in registers, not in shared memory). A grid of at most two
        programs an SM loads gathered input blocks a step ahead (``AHEAD``; H100, session 38: a UNet's 3 x 3
        stride-2 convolutions over NCHW inputs, 128 programs, 39.0 -> 27.7 and 32.1 -> 28.5 us; with 1792 or 3584
        programs, ResNet's first 3 x 3 and its stem, 53.9 -> 59.0 and 117.9 -> 120.6 us: other programs hid the
        latency already, the copy only took registers). A K of at least ``LONG_K`` (a 3 x 3 over 256 channels or
        more) runs on 4 warps: with 128 x 128 blocks, 3 stages deep (two programs an SM), where those still make a
        wave, else 4 stages deep (H100, session 38, a UNet's 3 x 3 512 -> 512 tuned alone over its channels-last
        input: 31.7 -> 23.5 us at 16 x 16, 128 work items; 89.6 -> 58.0 us at 32 x 32; the database's tuned
        winners for ResNet's K = 2304 / 4608 were 4-warp forms too)."""
        bf = max(16, min(128, _pow2_ge(p.N)))
        cfg = ConvConfig(BF=bf, BM=64, BK=64 if p.K >= 64 else max(16, _pow2_ge(p.K)), warps=4, stages=4)
        if cls.gathered_input(p):
            cfg = replace(cfg, BM=128, BK=min((64, 32, 16), key=lambda bk: (-(-p.K // bk) * bk, -bk)), stages=3)
        while cfg.BF > 32 and cfg.work_items(p) < 0.5 * gpu.sm_count:
            cfg = replace(cfg, BF=cfg.BF // 2)
        if p.K >= cls.LONG_K and not cls.gathered_input(p):  # (cfg is on 4 warps 4 stages deep already)
            wide = replace(cfg, BM=128, stages=3)
            if wide.work_items(p) >= gpu.sm_count:
                cfg = wide
        elif cfg.BF * cfg.BM >= 8192 and p.K >= 512:
            cfg = replace(cfg, warps=8, stages=3)
        if cfg.work_items(p) <= 2 * gpu.sm_count:  # (about a wave: one program an SM, AHEAD)
            cfg = replace(cfg, AHEAD=True)
        return cfg


@dataclass(frozen=True)
class DepthwiseConfig(Config):
    """depthwise: a window contraction with one input row band an output (``kitsune.schedule.depthwise``). A work
    item is BH output rows (of BC channels when BH is the whole image height) by the whole output row; every
    lane holds a strip of V adjacent outputs of a row (V from the row lengths, not a config field), loads the
    window's input as aligned V-vectors and forms the strip in registers. In the problem: M = output rows of all
    images and channels, N = the row length, K = the window's taps, rows = the image height, batch = the
    channels, row = the input row's length, stride = the window's column stride."""

    template: ClassVar[str] = "depthwise"
    BH: int = 16
    BC: int = 1
    warps: int = 2

    def lanes(self, p: Problem) -> tuple[int, int, int]:
        """(row lanes, strip lanes, strip width V) of a work item: its rows padded to a power of two, and the
        strips of a row at the widest strip its length allows (``kitsune.schedule.depthwise.strip_width``)."""
        from kitsune.schedule.depthwise import strip_width

        v = strip_width(p.row or p.N, p.N, p.stride or 1)
        return _pow2_ge(self.BC * min(self.BH, max(1, p.rows))), _pow2_ge(math.ceil(p.N / v)), v

    def resources(self, p: Problem) -> Resources:
        rl, g, _ = self.lanes(p)
        strips = max(1, rl * g // (32 * self.warps))
        return Resources(self.warps, min(255, 40 + 16 * strips), 0)

    def work_items(self, p: Problem) -> int:
        rows = max(1, p.rows)
        per_image = p.batch * rows
        bh = min(self.BH, rows)
        return max(1, p.M // per_image) * math.ceil(p.batch / self.BC) * math.ceil(rows / bh)

    def estimate_s(self, p: Problem, gpu: GPU) -> float:
        """The input read and the output written once, against the window's multiply-adds on the CUDA cores over
        every lane of the padded tiles."""
        rl, g, v = self.lanes(p)
        lanes = self.work_items(p) * rl * g * v
        return max(2 * p.M * p.N * p.elem_bytes / gpu.dram_bw, 2.0 * lanes * p.K / (gpu.fp32_flops * 0.5))

    @staticmethod
    def space(p: Problem) -> list["DepthwiseConfig"]:
        rows = max(1, p.rows)
        out = []
        for bh in (4, 8, 16, 32):
            if bh > _pow2_ge(rows):
                continue
            for bc in ((1, 2, 4) if bh >= rows else (1,)):
                for w in (1, 2, 4, 8):
                    c = DepthwiseConfig(BH=min(bh, rows), BC=bc, warps=w)
                    rl, g, _ = c.lanes(p)
                    if 32 * w <= rl * g <= 32 * w * 4:
                        out.append(c)
        return out or [DepthwiseConfig(BH=min(16, rows), BC=1, warps=1)]

    @classmethod
    def default(cls, p: Problem, gpu: GPU) -> "DepthwiseConfig":
        """A window of 25 taps or more (5 x 5 up: the multiply-adds weigh): one warp, 64 to 128 strips a work item
        (two to four a lane): whole images where their padded rows hold at most 128 strips (of enough channels
        to make about 16 rows), else bands of 64 strips of a tall image (taller than 32 rows) or of one whose
        strips read two input vectors each (column stride 2), 128 otherwise. A smaller window (memory-bound):
        about 16 rows a work item, two strips a lane: 16-row bands of a tall image, else whole images of enough
        channels to make 16 rows.

        Measured on the H100 in their programs (bench/kernels/NOTES.md section 38): ConvNeXt-T's 7 x 7 1.248 ->
        1.205 ms with the one-warp form (each of its four convolutions faster); MobileNetV2's 3 x 3 0.805 ->
        0.854 ms with it, although kitsune-tune, timing each task alone, ranked the one-warp configs first
        (up to 1.41x: bench/kernels/dwtune.py)."""
        rows = max(1, p.rows)
        _, g, _ = cls(BH=1, BC=1).lanes(p)
        if p.K >= 25:
            if rows <= 32 and _pow2_ge(rows) * g <= 128:
                c = cls(BH=rows, BC=max(1, 16 // rows), warps=1)
                return cls._small_images(c, p, gpu, per_lane=4)
            strips = 64 if rows > 32 or (p.stride or 1) > 1 else 128
            return cls(BH=max(1, min(rows, strips // g)), BC=1, warps=1)
        if rows > 32:
            c = cls(BH=16, BC=1, warps=1)
        else:
            c = cls(BH=rows, BC=max(1, 16 // rows), warps=1)
        rl, g, _ = c.lanes(p)
        return cls._small_images(replace(c, warps=max(1, min(8, rl * g // 64))), p, gpu, per_lane=2)

    SMALL_IMAGE_OUTPUTS: ClassVar[int] = 1024
    """Outputs a work item of whole small images holds at least (``_small_images``)."""

    @classmethod
    def _small_images(cls, c: "DepthwiseConfig", p: Problem, gpu: GPU, per_lane: int) -> "DepthwiseConfig":
        """``c`` (whole images a work item) with channels added until it holds ``SMALL_IMAGE_OUTPUTS`` outputs,
        while the grid keeps 16 work items an SM, at ``per_lane`` strips a lane: EfficientNet-B0's 14 x 14 and
        7 x 7 images ran one or two channels a program (15 360 - 21 504 programs of 196 outputs, 20-29 us each on
        the H100 for 6-7 MB: the programs' start-up, as its squeeze-excitation means)."""
        if c.BH < max(1, p.rows) or c.BC * c.BH * p.N >= cls.SMALL_IMAGE_OUTPUTS:
            return c
        bc = c.BC
        while bc < p.batch and bc * c.BH * p.N < cls.SMALL_IMAGE_OUTPUTS and \
                replace(c, BC=2 * bc).work_items(p) >= 16 * get_gpu(gpu).sm_count:
            bc *= 2
        if bc == c.BC:
            return c
        c = replace(c, BC=bc)
        rl, g, _ = c.lanes(p)
        return replace(c, warps=max(1, min(8, rl * g // (32 * per_lane))))


@dataclass(frozen=True)
class ChainConfig(Config):
    """chain: a tile of BM rows runs through every layer of a GEMM chain (``kitsune.schedule.chain``).

    TMA 0 (the register form, any GPU and Triton's interpreter): each intermediate stays in registers as
    SEG-wide column segments (the A operands of the next layer's tl.dot), the weights stream from L2 in
    [SEG, SEG] blocks, each loaded one dot ahead of its use (PREFETCH).
    TMA 1 (Hopper, a Gluon kernel): intermediates in shared memory, one accumulator per layer, the weights one
    TMA stream of [N, 64] chunks through a ring of ``RING`` slots (``templates/chain_tma.py``); the program
    loops over its tiles. Where the kernel cannot take that form, the register form (SEG, PREFETCH) is emitted.

    In the problem: M = rows, N = the last layer's width, K = the widest layer input, row = the widest
    intermediate, rows = layers, out_elems = weight elements of all layers."""

    template: ClassVar[str] = "chain"
    BM: int = 128
    SEG: int = 128
    PREFETCH: int = 1
    warps: int = 8
    stages: int = 1
    TMA: int = 0
    RING: int = 4

    def resources(self, p: Problem) -> Resources:
        if self.TMA:
            # the accumulator of the widest layer and its epilogue's copy (ptxas: 246-250 registers for NeRF's 256
            # wide layers on 8 warps, bench/kernels/gluon_chain_probe.py); shared memory: the weight ring, the
            # activation chunks and one operand from memory (the chain's input)
            acc = self.BM * p.row // (32 * self.warps)
            smem = (self.RING * p.row * 64 + self.BM * max(p.row, 64) + self.BM * max(p.mem_cols, 64)) * p.elem_bytes
            smem += 1024
            return Resources(self.warps, min(255, 2 * acc), smem)
        # fitted to ptxas (bench/kernels/chain_aot.py, NeRF and MeshGraphNet at full size): ptxas spends what the
        # accumulator and the held segments leave (255 at BM 128 / 8 warps, 170 for MeshGraphNet's 64 x 128);
        # shared memory is the weight blocks in flight and the layout conversions: 3 [SEG, SEG] blocks (4
        # prefetched) at SEG 64, 1.5 (3) at SEG 128
        acc = self.BM * self.SEG // (32 * self.warps)
        act = self.BM * max(p.row, self.SEG) * p.elem_bytes // (4 * 32 * self.warps)
        block = self.SEG * self.SEG * p.elem_bytes
        blocks = (4 if self.PREFETCH else 3) if self.SEG <= 64 else (3 if self.PREFETCH else 1.5)
        return Resources(self.warps, min(255, 2 * (acc + act) + 80), int(block * blocks))

    def tile(self, p: Problem) -> tuple[int, int]:
        return (min(self.BM, p.M), p.N)

    def work_items(self, p: Problem) -> int:
        return math.ceil(p.M / self.BM)

    @staticmethod
    def space(p: Problem) -> list["ChainConfig"]:
        """The tuner's candidates: the register form at 32-128 rows on 4 or 8 warps in segments of 64 or 128
        (those ptxas or the chain's row epilogue cannot take fail and are skipped), and with 16-bit weights the
        TMA form at 64 and 128 rows."""
        out = [ChainConfig(BM=bm, SEG=seg, PREFETCH=0, warps=w, TMA=0)
               for bm, w in ((32, 4), (64, 4), (64, 8), (128, 8)) for seg in (64, 128)]
        if p.elem_bytes == 2 and p.row <= 256:
            out += [ChainConfig(BM=64, SEG=64, PREFETCH=0, warps=4, TMA=1),
                    ChainConfig(BM=128, SEG=64, PREFETCH=2, warps=8, TMA=1)]
        return out

    @staticmethod
    def memory_bound(p: Problem, gpu: GPU) -> bool:
        """The chain's rows from and to memory take longer at DRAM bandwidth than its products at half the
        tensor cores' peak (what the register form reaches, bench/kernels/NOTES.md section 12)."""
        flops = gpu.tc_bf16_flops if p.elem_bytes <= 2 else gpu.fp32_flops  # (32-bit: ieee dots, no tf32)
        compute = 2.0 * p.M * p.out_elems / (0.5 * flops)
        memory = p.M * ((p.mem_cols or p.K) + p.N) * p.elem_bytes / gpu.dram_bw
        return memory > compute

    def estimate_s(self, p: Problem, gpu: GPU) -> float:
        tiles = self.work_items(p)
        waves = math.ceil(tiles / gpu.sm_count)
        per_sm = gpu.tc_bf16_flops / gpu.sm_count * ((0.7 if self.TMA else 0.5) if self.BM >= 128 else 0.35)
        compute = waves * 2.0 * self.BM * p.out_elems / per_sm
        weights = tiles * p.out_elems * p.elem_bytes / gpu.l2_bw  # every tile reads every weight from L2
        memory = p.M * (p.K + p.N) * p.elem_bytes / gpu.dram_bw
        return max(compute, weights, memory)

    @classmethod
    def default(cls, p: Problem, gpu: GPU) -> "ChainConfig":
        """On Hopper with 16-bit weights, the TMA form: BM 128 on 8 warps, a ring of 4 weight chunks (NeRF on the
        H100, bench/kernels/gluon_chain_probe.py, 2026-11-24: rings of 2 / 3 / 4 ran 0.121 / 0.119 / 0.113 ms
        against the register form's 0.199, NOTES section 13); its register-form fallback as below.
        Register form: BM 128 on 8 warps when the row tiles fill the GPU, SEG 64 with PREFETCH 2: the one ptxas
        compiles without spills (255 registers, 0 bytes; SEG 128 spills 16-32 bytes). NeRF on the H100
        (bench/kernels/chain_gpu.py, 2026-11-24, chain-gpu-nerf-h100-2026-11-24.json): SEG 64 PREFETCH 2 / 0 ran
        0.199 / 0.222 ms, SEG 128 PREFETCH 2 / 1 / 0 0.166 / 0.181 / 0.176 ms, so the spill-free choice costs 17%
        (bench/kernels/NOTES.md section 12). Fewer rows: 64 rows on 4 warps, twice the tiles."""
        if cls.memory_bound(p, gpu):
            # a chain whose rows move more bytes than its tensor cores take time (MeshGraphNet's two 128-wide
            # layers): one program per tile of 64 rows on 4 warps, several resident per SM to hide each other's
            # loads; on the H100 a hand-written edge MLP of mgn_10k took 45 us so against 55 at 128 rows on 8
            # warps and 52-69 with one persistent program per SM (bench/kernels/mgn_fused_probe.py, NOTES
            # section 26), and the TMA form, one CTA per SM, lost to separate GEMMs (section 13). Segments of 128:
            # the generated edge chain 50.0 us alone against 54.9 in segments of 64 (its operand from memory is
            # cut into pieces of the segment's width, each loaded again per output segment)
            return cls(BM=64, SEG=128, PREFETCH=0, warps=4, TMA=0)
        tma = int(gpu.sm_arch >= 90 and p.elem_bytes == 2 and p.row <= 256)
        if math.ceil(p.M / 128) >= gpu.sm_count:
            return cls(BM=128, SEG=64, PREFETCH=2, warps=8, TMA=tma)
        if tma:
            return cls(BM=64, SEG=64, PREFETCH=0, warps=4, TMA=1)
        return cls(BM=64, SEG=64, PREFETCH=0, warps=4)


@dataclass(frozen=True)
class DecodeAttentionConfig(Config):
    """decode_attention (flash-decoding partials): a work item is one (batch, query, group of query heads that
    share a key/value head) and one chunk of the key positions; the heads are the rows of the tl.dot (padded
    to 16), the keys are walked in blocks of BN with an online softmax (one pass over K and V). PARTS = the
    chunks of the key length (the partial tasks; not an in-kernel split). In the problem: M = query rows of a group (heads x
    queries), N = head dim, K = key length, batch = batch x key/value heads."""

    template: ClassVar[str] = "decode_attention"
    BN: int = 64
    PARTS: int = 1
    warps: int = 4
    stages: int = 2

    def resources(self, p: Problem) -> Resources:
        rows = max(16, _pow2_ge(p.M))
        regs = (rows * p.N * 2 + rows * self.BN * 2 + self.BN * p.N * 2) // (32 * self.warps)
        return Resources(self.warps, min(255, 48 + regs), self.BN * p.N * p.elem_bytes * 2 * self.stages)

    def work_items(self, p: Problem) -> int:
        return p.batch * self.PARTS

    def estimate_s(self, p: Problem, gpu: GPU) -> float:
        nbytes = 2 * p.batch * p.K * p.N * p.elem_bytes
        eff = min(1.0, self.work_items(p) / (2 * gpu.sm_count))
        return nbytes / (gpu.dram_bw * max(eff, 1e-3))

    @classmethod
    def default(cls, p: Problem, gpu: GPU) -> "DecodeAttentionConfig":
        """About two work items per SM (bench/kernels/decode_attn_probe.py, H100: 8 groups x 32 chunks and 64
        groups x 4-8 chunks were the fastest), chunks of at least 32 keys; blocks of 64 keys, 32 when a chunk
        is shorter."""
        return cls.for_sms(p, gpu.sm_count)

    @classmethod
    def for_sms(cls, p: Problem, sms: int) -> "DecodeAttentionConfig":
        split = max(1, min(math.ceil(2 * sms / max(1, p.batch)), p.K // 32))
        chunk = math.ceil(p.K / split)
        return DecodeAttentionConfig(BN=64 if chunk >= 64 else 32, PARTS=split, warps=4, stages=2)


@dataclass(frozen=True)
class AttentionConfig(Config):
    """attention (prefill, ``templates/flash_attention.py``): a work item is BM query rows of one (batch, query
    head) and the whole head dim; the keys are walked in blocks of BN with an online softmax, both products on
    tensor cores. In the problem: M = queries, N = head dim, K = keys, batch = batch x query heads."""

    template: ClassVar[str] = "attention"
    BM: int = 64
    BN: int = 64
    warps: int = 4
    stages: int = 2

    def resources(self, p: Problem) -> Resources:
        e = max(16, _pow2_ge(p.N))
        regs = (self.BM * e * 2 + self.BM * self.BN * 2) // (32 * self.warps)
        return Resources(self.warps, min(255, 48 + regs), self.BN * e * p.elem_bytes * 2 * self.stages)

    def work_items(self, p: Problem) -> int:
        return p.batch * math.ceil(p.M / self.BM)

    def estimate_s(self, p: Problem, gpu: GPU) -> float:
        flops = 4.0 * p.batch * p.M * p.K * p.N
        return flops / (gpu.tc_bf16_flops * 0.4)

    @staticmethod
    def space(p: Problem) -> list["AttentionConfig"]:
        e = max(16, _pow2_ge(p.N))
        return [AttentionConfig(BM=bm, BN=bn, warps=w, stages=s)
                for bm in (64, 128) for bn in (32, 64, 128) for w in (4, 8) for s in (1, 2, 3)
                if bm <= max(16, _pow2_ge(p.M)) and bn <= max(16, _pow2_ge(p.K)) and (bm * e * 2 + bm * bn * 2)
                // (32 * w) <= 200]

    @classmethod
    def default(cls, p: Problem, gpu: GPU) -> "AttentionConfig":
        """64 query rows on 4 warps (8 past a head dim of 128); blocks of 64 keys, never wider than the keys; three
        stages, two where the loop has at most four blocks. Measured on the H200 with the template's
        unmasked / masked split and base-2 exponentials (bench/kernels/NOTES.md section 43,
        ``attn_prefill_probe.py``): the best or within 4% of it on four prefill shapes (Llama 1024 causal, GPT-2
        256 causal, BERT 512, 2048 causal at head dim 128), where the Triton tutorial's 128 rows on 8 warps ran
        5-24% slower; the H100's earlier pick (section 36), blocks of 128 keys at one stage for a head dim up to
        64, ran 30-40% slower than this once the split was in."""
        keys = max(16, _pow2_ge(p.K))
        stages = 2 if p.K <= 256 else 3
        if p.N <= 128:
            return cls(BM=64, BN=min(64, keys), warps=4, stages=stages)
        # a head dim past 128 (Gemma's 256): the [64, 256] output on 8 warps, 64-key blocks (tuned in its program on
        # the H200, section 44: 1 x 8 x 1024 x 256 causal 48.2 us against 70.4 for 32-key blocks on 4 warps)
        return cls(BM=64, BN=min(64, keys), warps=8, stages=stages)


CONFIGS: dict[str, type[Config]] = {c.template: c for c in (GemmConfig, GemvConfig, GenericConfig, ScatterConfig,
                                                             ConvConfig, DecodeAttentionConfig, ChainConfig,
                                                             AttentionConfig, DepthwiseConfig)}


def config_from(template: str, d: dict) -> Config:
    return CONFIGS[template].from_dict(d)


def default_config(p: Problem, gpu: GPU | str = "h100") -> Config:
    """The heuristic choice: the candidate of the template's space the cost model ranks first."""
    gpu = get_gpu(gpu)
    cls = CONFIGS[p.template]
    if p.template == "gemm" and batched_small(p):
        return GemmConfig.batched_default(p, gpu)
    if p.template == "gemm" and p.row:
        # 64 rows on 4 warps: on the H100 the best or within 4% of it on mgn_10k's GEMM + LayerNorm tasks, where
        # the cost model's pick, 128 rows on 8 warps (255 registers, one CTA per SM), took 58 us against 46
        # (bench/kernels/NOTES.md section 25)
        return GemmConfig.row_space(p)[0]
    if p.template in ("gemm", "gemv"):
        # (not the gemv forms tuned only: ``GemvConfig.heuristic``)
        cands = [c for c in cls.space(p) if c.heuristic()]
        best = min(cands, key=lambda c: (round(c.estimate_s(p, gpu) * 1e8), -c.BN, c.SPLIT))
        return GemmConfig.gluon_default(p, best, gpu.sm_count) if p.template == "gemm" else best
    return cls.default(p, gpu)


__all__ = ["batched_small", "BATCHED_MAX_MN", "Problem", "Config", "GemmConfig", "GemvConfig", "GenericConfig", "ScatterConfig", "ConvConfig", "DepthwiseConfig", "DecodeAttentionConfig", "ChainConfig", "AttentionConfig", "CONFIGS", "config_from",
           "default_config"]
