"""Does a Gluon kernel (TMA + wgmma) beat cuDNN on inception_b8's merged 1x1 convolution over its NCHW input?

Issue 11's last convolution below cuDNN (0.76x): the three 1x1 convolutions reading the block's input
x [8, 256, 28, 28] merged into one of 176 output channels. Per image it is a GEMM, Y_n[f, p] = W[f, :] X_n[:, p],
X_n's rows (channels) 784 pixels long and contiguous. ``conv1x1_probe.py`` (session 29) found the best plain
Triton form at 0.93x cuDNN (0.87x with the block's epilogue). Here the weights are wgmma's A and an image's
channels x pixels block its B, both by TMA: W [176, 256] in [BF, 64] boxes (rows past 176 zero-filled), X viewed as
[8 * 256, 784] in [64, BP] boxes (an image's K range is whole 64-row boxes: 256 = 4 x 64, so no box crosses into
the next image; pixels past 784 zero-filled). One tile a program, its 4 K steps all issued at once, bias + ReLU,
stored NCHW from registers under a mask (a TMA store of BF channels would cross into the next image's rows).

    python bench/kernels/conv1x1_gluon_probe.py --aot     # no GPU: sm_90 compile, resources
    python bench/kernels/conv1x1_gluon_probe.py [--json OUT]   # H100: check against cuDNN, then time both

Timing as ``conv1x1_probe.py``: CUDA-graph replays rotating over 16 copies of the operands (past the L2), cuDNN
(``F.conv2d`` with bias, then ReLU: the epilogue this kernel runs) and without bias in the same process.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma, warpgroup_mma, warpgroup_mma_wait

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

N, C, H, W, FO = 8, 256, 28, 28, 176
P = H * W
BK = 64


@gluon.jit
def conv1x1_tma(w_desc, x_desc, b_ptr, y_ptr, C: gl.constexpr, P: gl.constexpr, FO: gl.constexpr,
                BF: gl.constexpr, BP: gl.constexpr, BK: gl.constexpr, STORE: gl.constexpr, num_warps: gl.constexpr):
    KT: gl.constexpr = C // BK
    pid = gl.program_id(0)
    npb = gl.cdiv(P, BP)
    nfb = gl.cdiv(FO, BF)
    n = pid // (npb * nfb)
    r = pid % (npb * nfb)
    pb = r // nfb  # the channel blocks of one pixel tile next to each other: its input block read once from DRAM
    fb = r % nfb
    a_bufs = gl.allocate_shared_memory(gl.bfloat16, [KT, BF, BK], w_desc.layout)
    b_bufs = gl.allocate_shared_memory(gl.bfloat16, [KT, BK, BP], x_desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [KT, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(KT):
        mbarrier.init(bars.index(i), count=1)
    for i in gl.static_range(KT):
        mbarrier.expect(bars.index(i), BF * BK * 2 + BK * BP * 2)
        tma.async_copy_global_to_shared(w_desc, [fb * BF, i * BK], bars.index(i), a_bufs.index(i))
        tma.async_copy_global_to_shared(x_desc, [n * C + i * BK, pb * BP], bars.index(i), b_bufs.index(i))
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1],
                                                  instr_shape=[16, BP, 16])
    acc = gl.zeros([BF, BP], gl.float32, layout=mma)
    for i in gl.static_range(KT):
        mbarrier.wait(bars.index(i), 0)
        acc = warpgroup_mma(a_bufs.index(i), b_bufs.index(i), acc, use_acc=i > 0, is_async=True)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
    for i in gl.static_range(KT):
        mbarrier.invalidate(bars.index(i))
    if STORE == 1:  # 16-byte runs of pixels a thread: the store coalesced along NCHW's rows
        TP: gl.constexpr = BP // 8 if BP < 256 else 32
        out_l: gl.constexpr = gl.BlockedLayout([1, 8], [32 // TP, TP], [num_warps, 1], [1, 0])
        acc = gl.convert_layout(acc, out_l)
    else:
        out_l: gl.constexpr = mma
    f = fb * BF + gl.arange(0, BF, layout=gl.SliceLayout(1, out_l))
    p = pb * BP + gl.arange(0, BP, layout=gl.SliceLayout(0, out_l))
    bias = gl.load(b_ptr + f, mask=f < FO, other=0.0).to(gl.float32)
    out = gl.maximum(acc + bias[:, None], 0.0)
    ptrs = y_ptr + n.to(gl.int64) * FO * P + f[:, None] * P + p[None, :]
    gl.store(ptrs, out.to(gl.bfloat16), mask=(f[:, None] < FO) & (p[None, :] < P))


CONFIGS = [(bf, bp, w, st) for bf in (64, 128) for bp in (32, 64, 128) for w in (4, 8) for st in (0, 1)
           if not (bf == 64 and w == 8) and bf * bp // (32 * w) <= 128]


def layouts(bf, bp):
    return (gl.NVMMASharedLayout.get_default_for([bf, BK], gl.bfloat16),
            gl.NVMMASharedLayout.get_default_for([BK, bp], gl.bfloat16))


def name(c):
    return (f"BF{c[0]} BP{c[1]} w{c[2]} st{c[3]} grid{N * triton.cdiv(P, c[1]) * triton.cdiv(FO, c[0])}")


def run_aot():
    """sm_90 compile of every config: registers, shared memory, wgmma and TMA in the PTX."""
    import contextlib
    import io

    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    from kitsune.codegen.aot import parse_ptxas_log  # (the repository's ptxas log reader)

    import tempfile

    knobs.cache.dir = tempfile.mkdtemp(prefix="conv1x1_gluon_")  # (a cached kernel runs no ptxas: no log)

    for bf, bp, w, st in CONFIGS:
        lw, lx = layouts(bf, bp)
        td = lambda shape, lay: f"tensordesc<bf16[{shape[0]}, {shape[1]}],{lay!r}>"  # noqa: E731
        sig = {"w_desc": td([bf, BK], lw), "x_desc": td([BK, bp], lx), "b_ptr": "*bf16", "y_ptr": "*bf16"}
        cx = dict(C=C, P=P, FO=FO, BF=bf, BP=bp, BK=BK, STORE=st, num_warps=w)
        sig.update({k: "constexpr" for k in cx})
        sig = {k: sig[k] for k in conv1x1_tma.arg_names}
        buf = io.StringIO()
        old = knobs.nvidia.dump_ptxas_log
        knobs.nvidia.dump_ptxas_log = True
        try:
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                ck = triton.compile(GluonASTSource(conv1x1_tma, sig, cx), target=GPUTarget("cuda", 90, 32),
                                    options={"num_warps": w})
            log = parse_ptxas_log(buf.getvalue())
            ptx = ck.asm["ptx"]
            print(f"{name((bf, bp, w, st)):<28} regs {log.get('registers')!s:>4} smem {ck.metadata.shared:>6} "
                  f"spills {log.get('spill_stores')}/{log.get('spill_loads')} "
                  f"wgmma {'wgmma.mma_async' in ptx} tma {'cp.async.bulk.tensor' in ptx}")
        except Exception as e:  # noqa: BLE001
            print(f"{name((bf, bp, w, st)):<28} FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        finally:
            knobs.nvidia.dump_ptxas_log = old


def run_gpu(json_path):
    import torch
    import torch.nn.functional as F
    from graphtime import rotating_us
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    torch.manual_seed(0)
    dev = "cuda"
    sets = [(torch.randn(N, C, H, W, device=dev, dtype=torch.bfloat16),
             torch.randn(FO, C, device=dev, dtype=torch.bfloat16) / 16,
             torch.randn(FO, device=dev, dtype=torch.bfloat16)) for _ in range(16)]
    y = torch.empty(N, FO, P, device=dev, dtype=torch.bfloat16)
    x0, w0, b0 = sets[0]
    ref = torch.relu(F.conv2d(x0, w0[:, :, None, None], b0).float()).reshape(N, FO, P)
    rows = []
    for label, fn in (("cudnn + relu", lambda x, w, b: (lambda: torch.relu(F.conv2d(x, w[:, :, None, None], b)))),
                      ("cudnn, bias", lambda x, w, b: (lambda: F.conv2d(x, w[:, :, None, None], b))),
                      ("cudnn, no bias (the kernel table's peer)",
                       lambda x, w, b: (lambda: F.conv2d(x, w[:, :, None, None])))):
        us = rotating_us([fn(*s) for s in sets])
        rows.append({"variant": label, "us": us})
        print(f"{label:<44} {us:7.2f} us", flush=True)
    peer = rows[0]["us"]
    bare = rows[2]["us"]
    for c in CONFIGS:
        bf, bp, w, st = c
        lw, lx = layouts(bf, bp)
        grid = (N * triton.cdiv(P, bp) * triton.cdiv(FO, bf), )

        def make(x, wt, b, bf=bf, bp=bp, w=w, st=st, lw=lw, lx=lx, grid=grid):
            wd = TensorDescriptor.from_tensor(wt, [bf, BK], lw)
            xd = TensorDescriptor.from_tensor(x.view(N * C, P), [BK, bp], lx)
            return lambda: conv1x1_tma[grid](wd, xd, b, y, C, P, FO, bf, bp, BK, st, num_warps=w)
        rec = {"variant": name(c)}
        try:
            y.zero_()
            make(x0, w0, b0)()
            torch.cuda.synchronize()
            rec["err"] = float((y.float() - ref).norm() / ref.norm())
            if rec["err"] < 2e-2:
                rec["us"] = rotating_us([make(*s) for s in sets])
                rec["x_cudnn_relu"] = peer / rec["us"]
                rec["x_cudnn_bare"] = bare / rec["us"]
        except Exception as e:  # noqa: BLE001
            rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
        rows.append(rec)
        print(f"{rec['variant']:<44} {rec.get('us', float('nan')):7.2f} us  x cuDNN+relu "
              f"{rec.get('x_cudnn_relu', float('nan')):5.2f}  x bare {rec.get('x_cudnn_bare', float('nan')):5.2f}  err {rec.get('err', float('nan')):.1e} "
              f"{rec.get('error', '')}", flush=True)
    if json_path:
        props = torch.cuda.get_device_properties(0)
        with open(json_path, "w") as fh:
            json.dump({"device": props.name, "torch": torch.__version__, "triton": triton.__version__,
                       "rows": rows}, fh, indent=1)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--aot", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    return run_aot() if a.aot else run_gpu(a.json)


if __name__ == "__main__":
    sys.exit(main())
