"""A cache of compiled graphs that is never cleared: each round traces f
for a new shape with make_fx(tracing_mode="fake") and keeps the
GraphModule in COMPILED. Each graph keeps its nodes' fakes (meta['val'])
and, through the input's fake, its FakeTensorMode: the program's words for
them are COMPILED[1].graph node tanh (an fx graph's node by its name) and
one leak per site, "12 fake tensors and 12 modes in COMPILED, +1 per round
at compiled_graphs.py:19"; the mode's converters are its part, no objects
of their own."""
import torch
from torch.fx.experimental.proxy_tensor import make_fx


def f(x):
    return torch.tanh(x @ x.T).sum()


COMPILED = []
for step in range(12):
    COMPILED.append(make_fx(f, tracing_mode="fake")(torch.randn(step + 2, 4)))
