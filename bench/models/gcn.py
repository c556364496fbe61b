"""Two-layer GCN (Kipf & Welling 2017) on a random graph, inference, random weights, written out in plain torch so
that it needs no torch_geometric: a model outside the suite for ``python -m kitsune.bench --workloads
bench/models/gcn.py``.

Inputs: node features ``x`` [nodes, features] and the edge list as two int64 tensors ``src``, ``dst`` [edges].
``forward`` appends one self-loop per node as extra edges, takes the degree by ``index_add`` of ones over ``dst``
and the symmetric normalisation norm = 1 / sqrt(deg[src] deg[dst]) per edge (no data-dependent shapes); each layer is
h = x @ W (Linear without bias), messages h[src] * norm, summed into the nodes with ``index_add`` over ``dst``, + bias;
ReLU between the two layers, logits out.

``make_model``: 50 000 nodes, 500 000 random edges (+ 50 000 self-loops), 128 features -> 128 hidden -> 64 classes;
``small``: 12 nodes, 40 edges, 8 features -> 8 hidden -> 4 classes, for the CPU (Triton's interpreter).
"""

import torch
from torch import nn


class GCNConv(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out, bias=False)
        self.bias = nn.Parameter(torch.empty(d_out).uniform_(-0.1, 0.1))

    def forward(self, x, src, dst, norm):
        h = self.lin(x)
        msg = h[src] * norm.unsqueeze(-1)
        return torch.zeros_like(h).index_add(0, dst, msg) + self.bias


class GCN(nn.Module):
    def __init__(self, d_in: int, hidden: int, classes: int):
        super().__init__()
        self.conv1 = GCNConv(d_in, hidden)
        self.conv2 = GCNConv(hidden, classes)

    def forward(self, x, src, dst):
        n = x.shape[0]
        loop = torch.arange(n, device=x.device, dtype=src.dtype)
        src = torch.cat([src, loop])
        dst = torch.cat([dst, loop])
        # degrees counted in fp32 whatever the model's dtype (exact integers), then cast for the messages
        deg = torch.zeros(n, device=x.device).index_add(0, dst, torch.ones(dst.shape[0], device=x.device))
        dis = deg.rsqrt()
        norm = (dis[src] * dis[dst]).to(x.dtype)
        h = torch.relu(self.conv1(x, src, dst, norm))
        return self.conv2(h, src, dst, norm)


def _build(nodes: int, edges: int, d_in: int, hidden: int, classes: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(0)  # the weights stay the same whatever the seed: only the inputs (features and graph) change
    m = GCN(d_in, hidden, classes)
    x = torch.randn(nodes, d_in, generator=g)
    src = torch.randint(0, nodes, (edges,), generator=g)
    dst = torch.randint(0, nodes, (edges,), generator=g)
    return m.eval(), (x, src, dst)


def make_model(seed: int = 0):
    return _build(50000, 500000, 128, 128, 64, seed)


def small(seed: int = 0):
    return _build(12, 40, 8, 8, 4, seed)
