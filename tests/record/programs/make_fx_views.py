"""make_fx(fn, tracing_mode="fake") over three small functions and 40 input
shapes, every graph dropped. Real PyTorch 1.13.1 keeps the graphs of the
one function whose trace makes a view (x.t() @ x): 13 GraphModules and
their fakes survive gc.collect() (tests/record/probe_make_fx.py says why)."""
import torch
from torch.fx.experimental.proxy_tensor import make_fx


def f1(x):
    return torch.relu(x).sum(0)


def f2(x):
    return (x * 2 + 1).tanh()


def f3(x):
    return x.t() @ x


for i, n in enumerate(range(1, 41)):
    fn = (f1, f2, f3)[i % 3]
    g = make_fx(fn, tracing_mode="fake")(torch.randn(n, 1 + n % 5))
    del g
