"""A small MLP block for the kitsune-import lit tests."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 16)
        self.norm = nn.LayerNorm(16)
        self.register_buffer("scale", torch.full((16,), 0.5))

    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc1(x))
        y = self.norm(self.fc2(h) + x)
        return torch.softmax(y * self.scale, dim=-1)


def make_model():
    torch.manual_seed(0)
    return Block().eval(), (torch.randn(4, 16),)


def make_dynamic():
    model, (x,) = make_model()
    return model, (x,), ({0: torch.export.Dim("batch", min=2, max=1024)},)


def make_two_outputs():
    class Two(nn.Module):
        def forward(self, a, b):
            return a + b, torch.relu(a) * 2.0

    return Two(), (torch.randn(2, 3), torch.randn(2, 3))
