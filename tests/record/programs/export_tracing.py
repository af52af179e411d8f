"""torch.export-style tracing in a loop: each traced program is kept in a
list, with the fakes its graph's nodes record (meta['val'])."""
import torch
from torch.fx.experimental.proxy_tensor import make_fx


def f(x):
    return x.relu() + 1


PROGRAMS = []
for n in range(5):
    PROGRAMS.append(make_fx(f, tracing_mode="fake")(torch.randn(n + 2)))
