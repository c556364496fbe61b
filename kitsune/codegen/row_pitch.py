"""Intermediates stored at a 16-byte row pitch.

A tensor whose rows are not a whole number of 16-byte vectors -- a language model's logits over GPT-2's 50 257
tokens, any odd width in bf16 -- has rows that start at every alignment: no load or store of a row can be a
vector (Triton proves alignment from the row stride, and 50 257 elements prove none), and a TMA descriptor needs
16-byte strides, so the Gluon gemm stores such a result from registers, two bytes at a time. An LM head's
projection to 50 257 columns ran at 240 TFLOP/s on the H200 for that, its log_softmax statistics read the
logits at 0.7 TB/s (bench/kernels/NOTES.md section 42).

Where nobody outside the program sees the tensor, its rows can live at a wider pitch: the buffer is allocated
with its last dim rounded up to 16 bytes, and the tensor is a view of it (``Tensor.view``: the runtime passes
``base.narrow(-1, 0, n)``; every address uses the base's strides, ``Tensor.strides``). The padding is never read
(loads are masked to the tensor's own columns, as before) and costs at most 15 bytes a row.

Only a buffer every stage of which can address it by its strides: the evaluator's (``generic``, ``pointwise``)
and the gemm template's (its Triton form's loads and stores by strides; its Gluon form's TMA descriptors take
the pitch, ``row_pitch``). Not a program input or output, a mutated or forwarded buffer, a zero-filled one
(filled flat), a view already or the base of one, and not a row shorter than ``MIN_ROW`` (the padding's share).
"""

from __future__ import annotations

from kitsune.codegen.plan import ELEM_BYTES, Plan, Tensor

PITCH_BYTES = 16
"""A row's start alignment: a 16-byte vector load or store, and a TMA descriptor's strides."""
MIN_ROW = 128
"""The shortest row padded (elements): at most 7 padding elements of a 2-byte type, under 6% of the buffer."""
TEMPLATES = frozenset({"generic", "pointwise", "gemm"})
"""Stage templates that address every tensor by its strides (``row_pitch`` in the Gluon gemm's descriptors)."""


def row_pitch(t: Tensor) -> int | None:
    """The row pitch (elements) of a tensor stored as rows of a wider buffer (``pad_row_pitches``), or None."""
    v = t.view
    if v is None or v[1] != len(t.shape) - 1 or v[2] != 0 or tuple(v[3][:-1]) != tuple(t.shape[:-1]):
        return None
    return v[3][-1]


def pad_row_pitches(plan: Plan) -> list[str]:
    """Give every buffer the module doc allows a base buffer of 16-byte rows, itself a view of it; the names of
    the buffers padded."""
    users: dict[str, list] = {}
    for k in plan.kernels:
        for st in k.stages:
            for name in set(st.args.values()) | {buf for _, buf, _ in st.stores}:
                users.setdefault(name, []).append(st)
    fixed = set(plan.args) | {a for _, a in plan.mutates} | set(plan.outputs) | set(plan.forwarded)
    fixed |= {b for k in plan.kernels for b in k.zero}
    fixed |= {t.view[0] for t in plan.tensors.values() if t.view is not None}
    padded = []
    for name, t in list(plan.tensors.items()):
        eb = ELEM_BYTES.get(t.dtype)
        if t.role != "buffer" or name in fixed or not t.row_major or len(t.shape) < 2 or eb is None:
            continue
        n = t.shape[-1]
        if n < MIN_ROW or (n * eb) % PITCH_BYTES == 0:
            continue
        if not users.get(name) or any(st.template not in TEMPLATES for st in users[name]):
            continue
        pitch = -(-n * eb // PITCH_BYTES) * PITCH_BYTES // eb
        base = f"{name}_rows"
        while base in plan.tensors:
            base += "_"
        shape = tuple(t.shape[:-1]) + (pitch, )
        plan.tensors[base] = Tensor(base, shape, t.dtype, "buffer", label=f"{t.label or name} (rows of {pitch})")
        t.view = (base, len(t.shape) - 1, 0, shape)
        padded.append(name)
    return padded


__all__ = ["pad_row_pitches", "row_pitch", "PITCH_BYTES", "MIN_ROW"]
