"""A model with two ops the graph dialect lacks (cumsum, flip)."""
import torch
from torch import nn


class Bad(nn.Module):
    def forward(self, x):
        a = torch.cumsum(x, dim=1)
        b = torch.relu(a)
        c = torch.flip(b, dims=[0])
        return c + 1.0


def make_model():
    return Bad(), (torch.randn(4, 8),)
