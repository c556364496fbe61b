"""Buffer mutation (issue 14): a KV cache updated in place.

torch.export records ``buffer.index_copy_(...)`` / ``buffer[..., pos] = x`` as a functional ``index_copy`` whose
result is returned with ``kitsune.mutates``; ``kitsune-inplace-updates`` writes it into the buffer's own storage
where nothing else reads the buffer, and the runtime keeps the buffers from call to call (``Program.buffers``).
Every test compares with eager torch (outputs and the buffers after the call), on the CPU (the reference
interpreter, Triton's interpreter).
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
import torch
from torch import nn

import kitsune
from kitsune.context import make_context
from kitsune.frontend.torch_export import UnsupportedOpsError, arguments, import_module, module_to_text, rel_err
from kitsune.interpreter import find_function, interpret, mutated_results
from kitsune.passes.inplace_updates import InplaceUpdatesPass

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")


class Cache(nn.Module):
    """A KV-cache-like update: the new rows at ``pos`` (index_copy_ or an indexed assignment), then a read."""

    def __init__(self, how: str = "index_copy", read_old: bool = False):
        super().__init__()
        self.how, self.read_old = how, read_old
        self.register_buffer("ck", torch.randn(2, 3, 8, 4, generator=torch.Generator().manual_seed(1)))

    def forward(self, k, pos):
        old = self.ck.sum(2) if self.read_old else None
        if self.how == "index_copy":
            self.ck.index_copy_(2, pos, k)
        else:
            self.ck[:, :, pos] = k
        y = torch.softmax(self.ck, dim=2).sum(2)
        return y - old if old is not None else y


def _inputs(seed: int, rows=(3,)):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(2, 3, len(rows), 4, generator=g), torch.tensor(rows)


@pytest.mark.parametrize("how", ["index_copy", "setitem"])
def test_import_marks_the_mutated_buffer_and_interprets_like_eager(how):
    model = Cache(how)
    ins = _inputs(0, (3, 6))
    module, weights = import_module(copy.deepcopy(model), ins)
    f = find_function(module, "main")
    assert mutated_results(f) == {0: "ck"}
    assert "graph.index_copy" in module_to_text(module)
    outs = interpret(module, arguments(module, weights, *ins))
    with torch.no_grad():
        want = model(*ins)
    assert rel_err(outs[1], want.numpy()) < 1e-6
    assert rel_err(outs[0], model.ck.numpy()) < 1e-7  # the new buffer value
    assert rel_err(outs[0], weights["ck"]) > 1e-3  # ... which is not the old one


def _pass_roundtrip(model, ins):
    module, weights = import_module(model, ins)
    args = arguments(module, weights, *ins)
    before = interpret(module, args)
    after_m = module.clone()
    InplaceUpdatesPass().apply(make_context(), after_m)
    after_m.verify()
    after = interpret(after_m, args)
    for a, b in zip(after, before):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    return module_to_text(after_m)


def test_inplace_pass_marks_a_buffer_read_by_nothing_else():
    """Written in place, its reader (the softmax) reading the update forwarded: selects over the buffer as it was,
    which the roundtrip shows mean the same."""
    text = _pass_roundtrip(Cache(), _inputs(1, (2, 5)))
    assert "in_place = true, forwarded = true" in text
    assert text.count("graph.where") == 2  # one select per index
    softmax = next(ln for ln in text.splitlines() if "graph.softmax" in ln)
    where = [ln for ln in text.splitlines() if "graph.where" in ln][-1]
    assert softmax.split("graph.softmax ")[1].split(" ")[0].rstrip(",") == where.split(" = ")[0].strip()


def test_forwarded_update_leaves_readers_free_of_the_write():
    """The forwarded reader does not wait for the write: it shares the writer's dependence level (one kernel
    here), and the generated reader takes the buffer's rows from the source where the update writes them."""
    cm = kitsune.compile(Cache(), _inputs(0), mode="bulk-sync", device="cpu")
    mod = cm.program.module
    assert len(mod.KERNELS) == 2  # softmax + update, then the sum (the update no longer a level of its own)
    src = cm.source
    reader = src[src.index("def k0_softmax"):src.index("def k0_index_copy")]
    assert "tl.where(" in reader and "tl.load(ck + " in reader


def test_inplace_pass_keeps_a_buffer_whose_old_value_is_read():
    """The old value is read after the update would have overwritten it: no in-place write; the copy becomes
    selects (the evaluator computes those)."""
    text = _pass_roundtrip(Cache(read_old=True), _inputs(1, (2, 5)))
    assert "in_place" not in text and "graph.index_copy" not in text
    assert text.count("graph.where") == 2  # one select per index


@pytest.mark.parametrize("mode", ["bulk-sync", "dataflow"])
@pytest.mark.parametrize("read_old", [False, True])
def test_compiled_updates_its_buffers_call_after_call(mode, read_old):
    """Three calls at different positions: the outputs and the program's buffers follow eager's step by step
    (in place, or computed whole and copied back when the old value is still read)."""
    model = Cache(read_old=read_old)
    ref = copy.deepcopy(model)
    cm = kitsune.compile(model, _inputs(0), mode=mode, device="cpu")
    assert cm.program.mutated_buffers == ["ck"]
    mod = cm.program.module
    assert mod.MUTATES == [(0, "ck")]
    if read_old:  # computed whole into a buffer of its own, copied into the cache after the kernels
        assert mod.OUTPUTS[0] != "ck" and "tl.store(ck + " not in cm.source
    else:  # stored into the buffer itself: the output is the argument, nothing copied back
        assert mod.OUTPUTS[0] == "ck" and "tl.store(ck + " in cm.source
    for step, rows in enumerate([(3,), (0,), (7,)]):
        ins = _inputs(10 + step, rows)
        with torch.no_grad():
            want = ref(*ins)
        got = cm(*ins)
        assert rel_err(got.numpy(), want.numpy()) < 1e-5
        assert rel_err(cm.program.buffers()["ck"].numpy(), ref.ck.numpy()) < 1e-6


def test_inplace_cost_counts_only_the_rows():
    """The in-place update moves its source rows, not the buffer: the floor of the in-place form is below the
    functional form's by about the buffer written back."""
    from kitsune import cost

    mod_in, _ = import_module(Cache(), _inputs(0))
    InplaceUpdatesPass().apply(make_context(), mod_in)
    mod_fn, _ = import_module(Cache(read_old=False), _inputs(0))
    floor_in = cost.roofline_floor(find_function(mod_in, "main")).bytes
    floor_fn = cost.roofline_floor(find_function(mod_fn, "main")).bytes
    buffer_bytes = 2 * 3 * 8 * 4 * 4
    assert floor_fn - floor_in == pytest.approx(buffer_bytes - 2 * 3 * 1 * 4 * 4, abs=64)


def test_input_mutation_is_a_diagnostic():
    class M(nn.Module):
        def forward(self, x):
            x.add_(1.0)
            return x * 2

    with pytest.raises(UnsupportedOpsError) as e:
        import_module(M(), (torch.randn(3),))
    msg = str(e.value)
    assert "in-place updates of inputs" in msg and "register_buffer" in msg


@pytest.mark.parametrize("mode", ["dataflow"])
def test_llama_inplace_layer_compiled(mode):
    """The Llama decode layer with its cache updated in place (the attention's mask hides the slots not yet
    written): two decode steps compiled against eager, outputs and caches."""
    from kitsune.models import LlamaConfig, LlamaDecodeLayer
    from kitsune.models.llama import example_inputs

    cfg = LlamaConfig.from_scale(0.05, 1, kv_inplace=True)
    gen = torch.Generator().manual_seed(0)
    model = LlamaDecodeLayer(cfg)
    model.init_weights(gen)
    model.eval()
    ins = example_inputs(cfg, gen)
    ref = copy.deepcopy(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cm = kitsune.compile(model, ins, mode=mode, device="cpu")
    assert "decode_attention" in cm.lowered and 'template = "scatter"' in cm.lowered
    # the attention reads the cache forwarded, so its first key block streams before it waits for the QKV
    # projection (loads before waits: the update is another kernel's, and only its rows are selected away)
    src = cm.source
    part = src[src.index("_attention_"):]
    part = part[:part.index("@triton.jit")]
    assert "forwarded = true" in cm.lowered
    assert part.index("tl.load(cache_k + ") < part.index("gdc_wait()")
    for p in (cfg.cache_len - 2, cfg.cache_len):
        x = torch.randn(ins[0].shape, generator=gen)
        with torch.no_grad():
            want = ref(x, torch.tensor([p]))
        got = cm(x, torch.tensor([p]))
        assert rel_err(got.numpy(), want.numpy()) < 1e-5
        for n in ("cache_k", "cache_v"):
            assert rel_err(cm.program.buffers()[n].numpy(), getattr(ref, n).numpy()) < 1e-6
