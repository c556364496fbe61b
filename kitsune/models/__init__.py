"""Benchmark workloads (WORKLOADS.md) as plain ``torch.nn.Module``\\ s.

Usage::

    from kitsune.models import WORKLOADS, get_workload
    model, inputs = get_workload("llama_decode_b8").build(dtype=torch.bfloat16, device="cuda")
    out = model(*inputs)
    ep = torch.export.export(model, inputs)

``Workload.build(scale, dtype, device, seed)`` returns ``(module, inputs)``:

* the module is in eval mode, its parameters / floating buffers are ``dtype`` on
  ``device``; they are initialised on the CPU in fp32 from
  ``torch.Generator().manual_seed(seed)`` (variance-preserving normal init, small
  biases, norm weights near 1) and then cast, so weights are identical across
  devices for a given seed and outputs are O(1);
* inputs are a tuple of tensors on ``device``: floats in ``dtype`` (~N(0, 1)),
  index tensors ``int64`` (always in range);
* ``device="meta"`` builds without initialising anything (fast shape /
  parameter-count checks at full size; ``torch.export.export`` of a meta-built
  model also works, giving the full-size graph without allocating weights);
* ``scale`` (> 0) shrinks widths and sizes, keeping the structure; ``scale=1.0``
  is exactly the spec. What each workload scales is documented in its module
  (``gpt_mlp``, ``llama``, ``dlrm``, ``nerf``, ``mgn``, ``inception``) and in
  ``Workload.description``. Scale 0.05 runs every model well under a second on CPU.

Registered workloads (see each module for the exact architecture):

==================  =========================================  ==========================
name                model                                      inputs (scale 1)
==================  =========================================  ==========================
mlp_gpt3_T1024      GPT-3 MLP shard 12288->6144->12288 (GELU)  x [1024, 12288]
mlp_gpt3_T256       same                                       x [256, 12288]
llama_decode_b1     Llama-3.2-1B layer, 1 decode step, GQA     x [1, 1, 2048], cache 1024
llama_decode_b8     same                                       x [8, 1, 2048], cache 1024
llama1b_decode_b1   Llama-3.2-1B, 16 layers + tied lm_head     token [1, 1], pos [1]; caches in place
dlrm_b2048          DLRM, 8 EmbeddingBag(100000, 64)           dense [2048, 13], idx [8, 2048, 20]
nerf_65k            NeRF 8x256 MLP with skip at layer 4        x [65536, 63]
mgn_10k             MeshGraphNet message passing, latent 128   x, e, src, dst (N=10k, E=60k)
inception_b8        Inception block, 256 channels              x [8, 256, 28, 28]
==================  =========================================  ==========================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

import torch
from torch import nn

from . import dlrm, gpt_mlp, inception, llama, mgn, nerf
from .dlrm import DLRM, DLRMConfig
from .gpt_mlp import GPTMLP, GPTMLPConfig
from .inception import InceptionBlock, InceptionConfig
from .llama import LlamaConfig, LlamaDecodeLayer, LlamaModel, LlamaModelConfig, RMSNorm
from .mgn import MeshGraphNetStep, MGNConfig
from .nerf import NeRFConfig, NeRFMLP

__all__ = [
    "WORKLOADS",
    "Workload",
    "get_workload",
    "DLRM",
    "DLRMConfig",
    "GPTMLP",
    "GPTMLPConfig",
    "InceptionBlock",
    "InceptionConfig",
    "LlamaConfig",
    "LlamaDecodeLayer",
    "LlamaModel",
    "LlamaModelConfig",
    "RMSNorm",
    "MeshGraphNetStep",
    "MGNConfig",
    "NeRFConfig",
    "NeRFMLP",
]


@dataclass(frozen=True)
class Workload:
    """A named benchmark: model class + size config + example-input factory."""

    name: str
    description: str
    make_config: Callable[[float], Any] = field(repr=False)
    module_cls: type[nn.Module] = field(repr=False)
    make_inputs: Callable[[Any, torch.Generator], tuple[torch.Tensor, ...]] = field(repr=False)

    def config(self, scale: float = 1.0) -> Any:
        """The (frozen dataclass) size config for ``scale``."""
        if not scale > 0:
            raise ValueError(f"scale must be > 0, got {scale!r}")
        return self.make_config(float(scale))

    def build(
        self,
        scale: float = 1.0,
        dtype: torch.dtype = torch.float32,
        device: str | torch.device = "cpu",
        seed: int = 0,
    ) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
        cfg = self.config(scale)
        device = torch.device(device)
        # Construct on meta (skips torch's default init), then materialise on CPU
        # and initialise deterministically from `seed`.
        with torch.device("meta"):
            model = self.module_cls(cfg)
        gen = torch.Generator(device="cpu").manual_seed(seed)
        if device.type == "meta":
            model = model.to(dtype=dtype)
        else:
            model = model.to_empty(device="cpu")
            model.init_weights(gen)
            model = model.to(device=device, dtype=dtype)
        inputs = self.make_inputs(cfg, gen)  # CPU fp32 / int64, deterministic
        inputs = tuple(
            t.to(device=device, dtype=dtype) if t.is_floating_point() else t.to(device=device) for t in inputs
        )
        return model.eval(), inputs



def _w(name: str, description: str, config: Callable[..., Any], cls: type[nn.Module], inputs, **kw) -> Workload:
    return Workload(name, description, partial(config, **kw), cls, inputs)


_GPT = "GPT-3 MLP shard (8-way TP): Linear(12288->6144) -> GELU(erf) -> Linear(6144->12288), x [{T}, 12288]. " \
    "scale: d_model, d_ff (multiples of 8), tokens."
_LLAMA = "Llama-3.2-1B decoder layer, one decode step, GQA 32q/8kv heads x 64, KV cache 1024 (+1 new), x [{b}, 1, 2048]. " \
    "scale: number of KV heads (heads = 4x, hidden = 64*heads, ffn = 4*hidden), cache length; batch fixed."

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        _w("mlp_gpt3_T1024", _GPT.format(T=1024), GPTMLPConfig.from_scale, GPTMLP, gpt_mlp.example_inputs, tokens=1024),
        _w("mlp_gpt3_T256", _GPT.format(T=256), GPTMLPConfig.from_scale, GPTMLP, gpt_mlp.example_inputs, tokens=256),
        _w("llama_decode_b1", _LLAMA.format(b=1), LlamaConfig.from_scale, LlamaDecodeLayer, llama.example_inputs, batch=1),
        _w("llama_decode_b8", _LLAMA.format(b=8), LlamaConfig.from_scale, LlamaDecodeLayer, llama.example_inputs, batch=8),
        _w(
            "llama1b_decode_b1",
            "Llama-3.2-1B, one decode step: embedding (vocab 128256, tied lm_head) -> 16 decoder layers (GQA "
            "32q/8kv x 64, KV caches of 1024 past positions updated in place at pos) -> RMSNorm -> logits; "
            "token [1, 1], pos [1]. scale: layers (>= 2), vocabulary and every layer as in llama_decode_b1.",
            LlamaModelConfig.from_scale, LlamaModel, llama.model_example_inputs, batch=1,
        ),
        _w(
            "dlrm_b2048",
            "DLRM: bottom MLP 13->512->256->64, 8 EmbeddingBag(100000, 64, sum) x 20 idx/bag, dot interaction "
            "(36 pairs) + bottom -> top MLP 100->512->256->1; dense [2048, 13], indices [8, 2048, 20]. "
            "scale: MLP widths, embedding dim (multiples of 8), rows per table, batch.",
            DLRMConfig.from_scale, DLRM, dlrm.example_inputs, batch=2048,
        ),
        _w(
            "nerf_65k",
            "NeRF MLP: 8 x Linear(256)+ReLU, input (63) re-concatenated before layer 4, Linear(256->4); x [65536, 63]. "
            "scale: width (multiple of 8), number of points.",
            NeRFConfig.from_scale, NeRFMLP, nerf.example_inputs, points=65536,
        ),
        _w(
            "mgn_10k",
            "MeshGraphNet message-passing step, latent 128: edge MLP(384->128->128, LN), index_add to dst, "
            "node MLP(256->128->128, LN), residuals; x [10000, 128], e [60000, 128], src/dst [60000]. "
            "scale: latent (multiple of 8), nodes, edges.",
            MGNConfig.from_scale, MeshGraphNetStep, mgn.example_inputs, nodes=10000, edges=60000,
        ),
        _w(
            "inception_b8",
            "Inception block, 256 -> [1x1 64 | 1x1 96, 3x3 128 | 1x1 16, 5x5 32 | maxpool3, 1x1 32] -> cat 256, ReLU; "
            "x [8, 256, 28, 28]. scale: branch widths (input channels = sum of outputs), spatial size; batch fixed.",
            InceptionConfig.from_scale, InceptionBlock, inception.example_inputs, batch=8,
        ),
    )
}


def get_workload(name: str) -> Workload:
    """Look up a workload by name; ``KeyError`` lists the valid names."""
    try:
        return WORKLOADS[name]
    except KeyError:
        raise KeyError(f"unknown workload {name!r}; valid names: {', '.join(WORKLOADS)}") from None
