"""The model zoo: real architectures from transformers, timm and torchvision, tiny configs, random weights.

Each entry builds ``(model, example_inputs)`` from the library's own model definition with a small
config and random weights (nothing is downloaded). ``ZOO`` maps a name to (builder, marks).
"""

from __future__ import annotations

import os
import sys

import torch


def _torchvision():
    """Import torchvision with the CPU torch.

    torchvision 0.28.0 is the release for torch 2.13.0, but PyPI has only its CUDA-linked build: its
    compiled ops (``_C.so``) need ``libtorch_cuda.so`` and do not load with the CPU torch. torchvision
    handles that (``extension._has_ops()`` is False and every meta kernel is skipped) except for two
    unguarded ``register_fake`` calls (``torchvision::nms`` / ``qnms``) at import time. Declaring those
    two schemas (no kernels) lets the import finish; the model definitions use no custom op, and
    calling ``torchvision.ops.nms`` would still fail loudly ("no kernel").
    """
    if "torchvision" not in sys.modules:
        try:
            torch.ops.torchvision.nms  # noqa: B018 - the real extension is loaded
        except (AttributeError, RuntimeError):
            lib = torch.library.Library("torchvision", "FRAGMENT")  # noqa: TOR901
            try:
                lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
                lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            except RuntimeError:
                pass
            _torchvision.lib = lib  # keep the registration alive
    import torchvision

    return torchvision


def _seed():
    torch.manual_seed(0)


_torchvision()  # transformers and timm import torchvision too


# ------------------------------------------------------------------ transformers


def _hf_ids(vocab, b=2, t=8):
    return torch.randint(0, vocab, (b, t))


def gpt2():
    from transformers import GPT2Config, GPT2Model

    _seed()
    cfg = GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2, attn_implementation="sdpa")
    m = GPT2Model(cfg).eval()
    ids = _hf_ids(64)
    mask = torch.ones_like(ids)
    mask[0, :3] = 0  # left padding: causal + padding mask, fully masked query rows
    return _Wrap(m, "last_hidden_state", ("input_ids", "attention_mask")), (ids, mask)


def llama():
    from transformers import LlamaConfig, LlamaModel

    _seed()
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32,
                      attn_implementation="sdpa")
    m = LlamaModel(cfg).eval()
    return _Wrap(m, "last_hidden_state"), (_hf_ids(64),)


def llama_mha():
    from transformers import LlamaConfig, LlamaModel

    _seed()
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32,
                      attn_implementation="sdpa")
    return _Wrap(LlamaModel(cfg).eval(), "last_hidden_state"), (_hf_ids(64),)


def bert():
    from transformers import BertConfig, BertModel

    _seed()
    cfg = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=32, attn_implementation="sdpa")
    m = BertModel(cfg, add_pooling_layer=False).eval()
    ids = _hf_ids(64)
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0  # padding
    return _Wrap(m, "last_hidden_state"), (ids, mask)


def t5():
    from transformers import T5Config, T5EncoderModel

    _seed()
    cfg = T5Config(vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                   relative_attention_num_buckets=8, relative_attention_max_distance=16)
    return _Wrap(T5EncoderModel(cfg).eval(), "last_hidden_state"), (_hf_ids(64),)


def t5_full():
    from transformers import T5Config, T5Model

    _seed()
    cfg = T5Config(vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=1, num_decoder_layers=1, num_heads=4,
                   relative_attention_num_buckets=8, relative_attention_max_distance=16, decoder_start_token_id=0)
    return _Wrap(T5Model(cfg).eval(), "last_hidden_state", ("input_ids", "decoder_input_ids")), \
        (_hf_ids(64), _hf_ids(64, 2, 5))


def whisper_full():
    from transformers import WhisperConfig, WhisperModel

    _seed()
    cfg = WhisperConfig(vocab_size=64, num_mel_bins=8, encoder_layers=1, encoder_attention_heads=2,
                        decoder_layers=1, decoder_attention_heads=2, d_model=32, encoder_ffn_dim=64,
                        decoder_ffn_dim=64, max_source_positions=8, max_target_positions=8, pad_token_id=0,
                        bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, attn_implementation="sdpa")
    return _Wrap(WhisperModel(cfg).eval(), "last_hidden_state", ("input_features", "decoder_input_ids")), \
        (torch.randn(1, 8, 16), _hf_ids(64, 1, 4))


def whisper():
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    _seed()
    cfg = WhisperConfig(vocab_size=64, num_mel_bins=8, encoder_layers=1, encoder_attention_heads=2,
                        decoder_layers=1, decoder_attention_heads=2, d_model=32, encoder_ffn_dim=64,
                        decoder_ffn_dim=64, max_source_positions=8, max_target_positions=8,
                        attn_implementation="sdpa")
    return _Wrap(WhisperEncoder(cfg).eval(), "last_hidden_state"), (torch.randn(1, 8, 16),)


def vit_hf():
    from transformers import ViTConfig, ViTModel

    _seed()
    cfg = ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                    image_size=16, patch_size=8, num_channels=3, attn_implementation="sdpa")
    return _Wrap(ViTModel(cfg, add_pooling_layer=False).eval(), "last_hidden_state"), (torch.randn(1, 3, 16, 16),)


class _Wrap(torch.nn.Module):
    """A transformers model returning one tensor (its ``field``)."""

    def __init__(self, m, field, names=None):
        super().__init__()
        self.m = m
        self.field = field
        self.names = names  # keyword names of the inputs (None: positional)

    def forward(self, *args):
        out = self.m(**dict(zip(self.names, args))) if self.names else self.m(*args)
        return getattr(out, self.field)


# ------------------------------------------------------------------ torchvision


def tv_resnet18():
    tv = _torchvision()
    _seed()
    return tv.models.resnet18(num_classes=10).eval(), (torch.randn(1, 3, 16, 16),)


def tv_regnet():
    tv = _torchvision()
    from torchvision.models.regnet import BlockParams, RegNet

    _seed()
    p = BlockParams.from_init_params(depth=3, w_0=8, w_a=8.0, w_m=2.0, group_width=8)
    return RegNet(p, num_classes=10).eval(), (torch.randn(1, 3, 32, 32),)


def tv_mobilenet_v2():
    tv = _torchvision()
    _seed()
    return tv.models.mobilenet_v2(width_mult=0.25, num_classes=10).eval(), (torch.randn(1, 3, 16, 16),)


def tv_mobilenet_v3():
    tv = _torchvision()
    _seed()
    return tv.models.mobilenet_v3_small(width_mult=0.25, num_classes=10).eval(), (torch.randn(1, 3, 32, 32),)


def tv_efficientnet_b0():
    tv = _torchvision()
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf

    _seed()
    settings, last = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.25)
    return EfficientNet(settings, 0.2, last_channel=last, num_classes=10).eval(), (torch.randn(1, 3, 32, 32),)


def tv_shufflenet():
    tv = _torchvision()
    from torchvision.models.shufflenetv2 import ShuffleNetV2

    _seed()
    return ShuffleNetV2([2, 2, 2], [8, 16, 32, 64, 128], num_classes=10).eval(), (torch.randn(1, 3, 32, 32),)


def tv_vit():
    tv = _torchvision()
    from torchvision.models.vision_transformer import VisionTransformer

    _seed()
    m = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
                          num_classes=10)
    return m.eval(), (torch.randn(1, 3, 32, 32),)


def tv_swin():
    tv = _torchvision()
    from torchvision.models.swin_transformer import SwinTransformer

    _seed()
    m = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=[2, 2],
                        num_classes=10)
    return m.eval(), (torch.randn(1, 3, 16, 16),)


def tv_squeezenet():
    tv = _torchvision()
    _seed()
    return tv.models.squeezenet1_1(num_classes=10).eval(), (torch.randn(1, 3, 32, 32),)


# ------------------------------------------------------------------ timm


def timm_resnet10t():
    _torchvision()
    import timm

    _seed()
    return timm.create_model("resnet10t", pretrained=False, num_classes=10).eval(), (torch.randn(1, 3, 16, 16),)


def timm_convnext():
    _torchvision()
    from timm.models.convnext import ConvNeXt

    _seed()
    return ConvNeXt(depths=(1, 1, 1, 1), dims=(8, 16, 32, 64), num_classes=10).eval(), (torch.randn(1, 3, 32, 32),)


def timm_mixer():
    _torchvision()
    from timm.models.mlp_mixer import MlpMixer

    _seed()
    return MlpMixer(num_classes=10, img_size=32, patch_size=8, num_blocks=2, embed_dim=32).eval(), \
        (torch.randn(1, 3, 32, 32),)


# ------------------------------------------------------------------ GNN layers


class GCNLayer(torch.nn.Module):
    """GCN (Kipf & Welling): symmetric-normalised neighbour sum by scatter-add (index_add)."""

    def __init__(self, d_in=16, d_out=16):
        super().__init__()
        self.lin = torch.nn.Linear(d_in, d_out)

    def forward(self, x, src, dst):
        n = x.shape[0]
        deg = torch.zeros(n).index_add(0, dst, torch.ones(dst.shape[0])) + 1.0
        norm = deg.rsqrt()
        h = self.lin(x)
        msg = h[src] * (norm[src] * norm[dst]).unsqueeze(-1)
        out = torch.zeros_like(h).index_add(0, dst, msg)
        return torch.relu(out + h * (norm * norm).unsqueeze(-1))


class SAGEMaxLayer(torch.nn.Module):
    """GraphSAGE with max aggregation (scatter_reduce amax)."""

    def __init__(self, d_in=16, d_out=16):
        super().__init__()
        self.l_self = torch.nn.Linear(d_in, d_out)
        self.l_nbr = torch.nn.Linear(d_in, d_out)

    def forward(self, x, src, dst):
        msg = x[src]
        idx = dst.unsqueeze(-1).expand(-1, x.shape[1])
        agg = torch.zeros_like(x).scatter_reduce(0, idx, msg, reduce="amax", include_self=False)
        return self.l_self(x) + self.l_nbr(agg)


def _graph(n=12, e=40):
    g = torch.Generator().manual_seed(1)
    return torch.randn(n, 16, generator=g), torch.randint(0, n, (e,), generator=g), torch.randint(0, n, (e,), generator=g)


def gnn_gcn():
    _seed()
    return GCNLayer().eval(), _graph()


def gnn_sage_max():
    _seed()
    return SAGEMaxLayer().eval(), _graph()


ZOO = {
    "hf_gpt2": gpt2,
    "hf_llama_gqa": llama,
    "hf_llama_mha": llama_mha,
    "hf_bert": bert,
    "hf_t5_encoder": t5,
    "hf_t5": t5_full,
    "hf_whisper_encoder": whisper,
    "hf_whisper": whisper_full,
    "hf_vit": vit_hf,
    "tv_resnet18": tv_resnet18,
    "tv_regnet": tv_regnet,
    "tv_mobilenet_v2": tv_mobilenet_v2,
    "tv_mobilenet_v3": tv_mobilenet_v3,
    "tv_efficientnet_b0": tv_efficientnet_b0,
    "tv_shufflenet_v2": tv_shufflenet,
    "tv_vit": tv_vit,
    "tv_swin": tv_swin,
    "tv_squeezenet": tv_squeezenet,
    "timm_resnet10t": timm_resnet10t,
    "timm_convnext": timm_convnext,
    "timm_mixer": timm_mixer,
    "gnn_gcn": gnn_gcn,
    "gnn_sage_max": gnn_sage_max,
}
