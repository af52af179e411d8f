"""make_fx(tracing_mode="fake") in a loop: each trace's mode and fakes go
when the trace is dropped; the graphs kept in GRAPHS hold no fake."""
import torch
from torch.fx.experimental.proxy_tensor import make_fx


def f(x, y):
    return (x * y).sum(0) + 1


GRAPHS = []
for step in range(10):
    g = make_fx(f, tracing_mode="fake")(torch.randn(3, 4), torch.randn(3, 4))
    GRAPHS.append(len(g.graph.nodes))
    del g
