"""The model zoo: real architectures (transformers, torchvision, timm, two GNN layers), tiny configs, random
weights, imported with ``kitsune.import_module`` and compiled with ``kitsune.compile`` in both modes under
Triton's CPU interpreter, each against torch eager. See ``zoo.py`` for the models and README "Model zoo".
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import kitsune
from kitsune.frontend.torch_export import UnsupportedOpsError, arguments, import_module, rel_err
from kitsune.interpreter import interpret
from zoo import ZOO

pytestmark = [pytest.mark.zoo, pytest.mark.filterwarnings("ignore")]

# compile under the interpreter takes more than ~20 s (both modes together)
SLOW = {"tv_resnet18", "tv_squeezenet", "timm_resnet10t", "tv_mobilenet_v2", "tv_mobilenet_v3", "tv_efficientnet_b0"}
TOL = 1e-4


def _marks(name):
    return [pytest.mark.slow] if name in SLOW else []


NAMES = [pytest.param(n, marks=_marks(n), id=n) for n in ZOO]


def _eager(model, inputs):
    with torch.no_grad():
        out = model(*inputs)
    return out


def _build(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ZOO[name]()


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in ZOO])
def test_imports_and_interprets(name):
    model, inputs = _build(name)
    module, weights = import_module(model, inputs)
    got = interpret(module, arguments(module, weights, *inputs))[0]
    want = _eager(model, inputs)
    assert rel_err(got, want.detach().float().numpy()) < TOL


@pytest.mark.parametrize("mode", ["bulk-sync", "dataflow"])
@pytest.mark.parametrize("name", NAMES)
def test_compiles_and_matches_eager(name, mode):
    model, inputs = _build(name)
    cm = kitsune.compile(model, inputs, mode=mode, cache=False)
    got = cm(*inputs)
    want = _eager(model, inputs)
    assert got.shape == want.shape
    assert rel_err(got.detach().float().numpy(), want.detach().float().numpy()) < TOL


class _Unsupported(torch.nn.Module):
    def forward(self, x):
        y = torch.sort(x, dim=-1).values
        return y + torch.sort(x * 2, dim=-1).values


def test_unsupported_model_names_the_op_at_its_line():
    with pytest.raises(UnsupportedOpsError) as e:
        import_module(_Unsupported(), (torch.randn(3, 4),))
    msg = str(e.value)
    assert msg.startswith("1 unsupported op in the exported graph:")  # listed once
    assert "aten.sort" in msg and "test_zoo.py:" in msg and "torch.sort(x, dim=-1)" in msg
    assert "(and 1 more place)" in msg
