"""A model with two ops the graph dialect lacks (topk, flip)."""
import torch
from torch import nn


class Bad(nn.Module):
    def forward(self, x):
        a = torch.topk(x, 2, dim=1).values
        b = torch.relu(a)
        c = torch.flip(b, dims=[0])
        return c + 1.0


def make_model():
    return Bad(), (torch.randn(4, 8),)
