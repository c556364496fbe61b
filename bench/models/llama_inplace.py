"""The Llama decode layer with its KV cache updated in place (``LlamaConfig(kv_inplace=True)``), for
``python -m kitsune.bench --workloads bench/models/llama_inplace.py:b1`` (or ``:b8``).

Same weights as the ``llama_decode_b1`` / ``_b8`` workloads (seed 0); the step runs at position 1024 (the
cache's 1024 past positions plus the new row written in place); fresh inputs (``seed``) redraw ``x`` only.
"""

import torch

from kitsune.models.llama import LlamaConfig, LlamaDecodeLayer


def _make(batch: int, seed: int):
    cfg = LlamaConfig(batch=batch, kv_inplace=True)
    with torch.device("meta"):
        model = LlamaDecodeLayer(cfg)
    model = model.to_empty(device="cpu")
    model.init_weights(torch.Generator().manual_seed(0))
    g = torch.Generator().manual_seed(1000 + seed)
    return model.eval(), (torch.randn(batch, 1, cfg.hidden, generator=g), torch.tensor([cfg.cache_len]))


def b1(seed: int = 0):
    return _make(1, seed)


def b8(seed: int = 0):
    return _make(8, seed)


make_model = b1
