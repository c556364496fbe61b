"""The one occupancy function: how many CTAs of a kernel fit on one SM at once.

Every part of Kitsune that needs residency asks here: ``kitsune-allocate-sms``
before the first compile (registers and shared memory from a template's resource
model), the runtime and the AOT tool after it (the compiled kernel's real
metadata). A persistent dataflow kernel must have its whole grid resident, so
the same numbers decide whether ring queues are safe (``fits``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kitsune.gpu import GPU, get_gpu

SMEM_RESERVED_PER_CTA = 1024  # the driver reserves 1 KB of shared memory per CTA on sm_80+
REG_ALLOC_UNIT = 256  # registers are allocated per warp in units of 256


@dataclass(frozen=True)
class Resources:
    """What one CTA of a kernel uses."""

    warps: int
    regs_per_thread: int
    smem_bytes: int

    def describe(self) -> str:
        return f"{self.warps} warps x {self.regs_per_thread} regs, {self.smem_bytes} B smem"


def ctas_per_sm(res: Resources, gpu: GPU | str = "h100") -> int:
    """CTAs of this kernel one SM holds at once (>= 0; 0 means it cannot launch at all)."""
    gpu = get_gpu(gpu)
    threads = 32 * max(1, res.warps)
    regs_warp = -(-max(1, res.regs_per_thread) * 32 // REG_ALLOC_UNIT) * REG_ALLOC_UNIT
    by_regs = gpu.regs_per_sm // (regs_warp * max(1, res.warps))
    by_threads = gpu.max_threads_per_sm // threads
    if res.smem_bytes > gpu.smem_per_cta_bytes:
        return 0
    by_smem = gpu.smem_per_sm_bytes // (res.smem_bytes + SMEM_RESERVED_PER_CTA) if res.smem_bytes else gpu.max_ctas_per_sm
    return max(0, min(by_regs, by_threads, by_smem, gpu.max_ctas_per_sm))


def resident_ctas(res: Resources, gpu: GPU | str = "h100") -> int:
    """CTAs of this kernel the whole GPU holds at once."""
    gpu = get_gpu(gpu)
    return ctas_per_sm(res, gpu) * gpu.sm_count


def fits(grid: int, res: Resources, gpu: GPU | str = "h100") -> bool:
    """Whether a grid of ``grid`` CTAs is resident all at once (what spinning dataflow kernels need)."""
    return grid <= resident_ctas(res, gpu)


__all__ = ["Resources", "ctas_per_sm", "resident_ctas", "fits"]
