"""Conv + BatchNorm (eval) + ReLU + max-pool, and an int64 embedding lookup."""
import torch
from torch import nn


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return self.pool(torch.relu(self.bn(self.conv(x))))


def make_model():
    torch.manual_seed(0)
    return ConvBN().eval(), (torch.randn(2, 3, 8, 8),)


class Emb(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)

    def forward(self, idx):
        return self.emb(idx).sum(1)


def make_embedding():
    torch.manual_seed(0)
    return Emb().eval(), (torch.randint(0, 10, (3, 5)),)
