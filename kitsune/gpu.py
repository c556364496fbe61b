"""Machine descriptions for the cost model (``kitsune.cost``) and SM allocation.

A :class:`GPU` holds the few numbers a roofline-style model needs: SM count and
per-SM limits, cache sizes, DRAM / L2 bandwidth, peak FLOP/s per math class and
the fixed cost of one kernel launch. Bandwidth and the tensor-core peak are
*measured-like* figures (what a good kernel reaches), not the datasheet
maxima; the datasheet figures are kept next to them for reference.

Sources
-------
* H100 SXM5 80GB: NVIDIA H100 Tensor Core GPU datasheet and the "NVIDIA H100
  Tensor Core GPU Architecture" whitepaper (v1.0x): 132 SMs, 50 MB L2, 228 KB
  shared memory per SM (227 KB usable by one CTA), 64K 32-bit registers per SM,
  2048 threads and 32 CTAs per SM, max boost 1.98 GHz, HBM3 3.35 TB/s,
  989 TFLOP/s dense BF16/FP16 tensor, 495 TF32 tensor, 67 FP32 (non-tensor),
  134 FP16/BF16 non-tensor, 1979 FP8 dense.
  Measured on the project's H100 (``/work/shared/WORKLOADS.md``): ~3.0 TB/s
  device-to-device copy and ~800 TFLOP/s bf16 GEMM; we scale TF32 / FP32 by the
  same ~0.81 / ~0.9 ratio.
* H200 SXM 141GB: NVIDIA H200 Tensor Core GPU datasheet (2024): same GH100
  compute as H100 SXM (989 TFLOP/s dense BF16, 67 FP32), HBM3e 4.8 TB/s.  The
  datasheet does not list the L2; H200 is the same GH100 die, so 50 MB (as the
  H100 whitepaper documents for GH100 in the SXM5 configuration).  Measured-like
  DRAM bandwidth ~4.3 TB/s (~90% of nominal, as on H100).
* L2 bandwidth is not in NVIDIA's documents; ~5.5 TB/s is the order that public
  micro-benchmarks report for H100 (Chips and Cheese, 2023).  Treat as rough.
* ``sm_dram_bw`` (what one SM can pull from DRAM) is a model assumption: about
  50 SMs are enough to saturate HBM on Hopper, so dram_bw / 50.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

KB = 1024
MB = 1024 * 1024


@dataclass(frozen=True)
class GPU:
    name: str
    sm_count: int
    l2_bytes: int
    smem_per_sm_bytes: int  # shared memory per SM (the part one CTA may use is a little less)
    smem_per_cta_bytes: int
    regs_per_sm: int  # 32-bit registers
    max_threads_per_sm: int
    max_ctas_per_sm: int
    clock_hz: float  # boost clock
    dram_bytes: int
    dram_bw: float  # bytes/s, measured-like
    dram_bw_nominal: float  # bytes/s, datasheet
    l2_bw: float  # bytes/s, rough
    sm_dram_bw: float  # bytes/s one SM can stream from DRAM (model assumption)
    # peak FLOP/s (dense), measured-like; *_nominal = datasheet
    tc_bf16_flops: float  # tensor core bf16 / fp16, fp32 accumulate
    tc_tf32_flops: float
    tc_fp8_flops: float
    fp32_flops: float  # CUDA cores, non-tensor
    fp16_flops: float  # CUDA cores, packed half2 / bfloat162
    fp64_flops: float
    tc_bf16_flops_nominal: float
    fp32_flops_nominal: float
    launch_overhead_s: float  # one kernel launch + ramp / tail (bulk-sync, in a CUDA graph)
    sm_arch: int = 90  # compute capability x 10 (90: Hopper: wgmma, TMA)
    # one more kernel in a CUDA graph's replay, beyond its work: 13 one-element kernels 21.95 us against 4.86 for
    # one (H100, 2026-11-27, bench/kernels/overhead_probe.py)
    graph_launch_s: float = 1.4e-6
    # presets whose tuning-database entries serve this GPU where it has none of its own: the same SMs, clocks and
    # shared memory (an H200 is an H100's die with faster memory), so a config tuned on one is a measured
    # starting point on the other, better than a heuristic
    tuning_twins: tuple[str, ...] = ()

    def peak(self, kind: str) -> float:
        """Peak FLOP/s of a math class: 'tc_bf16' (also 'tc_fp16'), 'tc_tf32', 'tc_fp8', 'fp32', 'fp16', 'fp64'."""
        key = {"tc_fp16": "tc_bf16", "bf16": "fp16"}.get(kind, kind)
        v = getattr(self, key + "_flops", None)
        if v is None:
            raise ValueError(f"unknown math class {kind!r}: tc_bf16, tc_fp16, tc_tf32, tc_fp8, fp32, fp16, fp64")
        return v

    def describe(self) -> str:
        return (f"{self.name}: {self.sm_count} SMs, L2 {self.l2_bytes / MB:.0f} MB, "
                f"DRAM {self.dram_bw / 1e12:.2f} TB/s, bf16 TC {self.tc_bf16_flops / 1e12:.0f} TFLOP/s, "
                f"fp32 {self.fp32_flops / 1e12:.0f} TFLOP/s, launch {self.launch_overhead_s * 1e6:.1f} us")


H100 = GPU(
    name="h100",
    sm_count=132,
    l2_bytes=50 * MB,
    smem_per_sm_bytes=228 * KB,
    smem_per_cta_bytes=227 * KB,
    regs_per_sm=65536,
    max_threads_per_sm=2048,
    max_ctas_per_sm=32,
    clock_hz=1.98e9,
    dram_bytes=80 * 10**9,
    dram_bw=3.0e12,
    dram_bw_nominal=3.35e12,
    l2_bw=5.5e12,
    sm_dram_bw=3.0e12 / 50,
    tc_bf16_flops=800e12,
    tc_tf32_flops=400e12,
    tc_fp8_flops=1600e12,
    fp32_flops=60e12,
    fp16_flops=120e12,
    fp64_flops=30e12,
    tc_bf16_flops_nominal=989.4e12,
    fp32_flops_nominal=66.9e12,
    launch_overhead_s=4e-6,
    tuning_twins=("h200",),
)

H200 = replace(
    H100,
    name="h200",
    dram_bytes=141 * 10**9,
    dram_bw=4.3e12,
    dram_bw_nominal=4.8e12,
    sm_dram_bw=4.3e12 / 50,
    tuning_twins=("h100",),
)

PRESETS: dict[str, GPU] = {"h100": H100, "h200": H200}
_ALIASES = {"h100-sxm": "h100", "h100_sxm": "h100", "h100-80gb": "h100", "h200-sxm": "h200", "h200_sxm": "h200"}


def get_gpu(name: str | GPU) -> GPU:
    """The preset called ``name`` (case-insensitive); a GPU passes through. Raises ValueError naming the presets."""
    if isinstance(name, GPU):
        return name
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in PRESETS:
        raise ValueError(f"unknown GPU {name!r}; presets: {', '.join(sorted(PRESETS))}")
    return PRESETS[key]


def parse_gpu_option(spec: str) -> GPU:
    """A GPU from a pass-option string: 'h100', 'gpu=h100' or 'h100,sm_count=66,dram_bw=2e12' (overrides)."""
    parts = [p.strip() for p in spec.replace(" ", ",").split(",") if p.strip()]
    if not parts:
        raise ValueError("empty GPU option; presets: " + ", ".join(sorted(PRESETS)))
    head = parts[0]
    if head.startswith("gpu="):
        head = head[4:]
    gpu = get_gpu(head)
    known = {f.name: f.type for f in fields(GPU)}
    over = {}
    for p in parts[1:]:
        k, sep, v = p.partition("=")
        if not sep or k not in known or k == "name":
            raise ValueError(f"bad GPU override {p!r}; use FIELD=VALUE with FIELD one of "
                             + ", ".join(n for n in known if n != "name"))
        cur = getattr(gpu, k)
        over[k] = int(float(v)) if isinstance(cur, int) else float(v)
    if not over:
        return gpu
    return replace(gpu, name=gpu.name + "+" + ",".join(f"{k}={v}" for k, v in over.items()), **over)
