"""torch.compile(backend="eager") on a small function, called on a few
shapes, then torch._dynamo.reset(): what the compile's fakes leave."""
import torch


def f(x):
    return (x * 2).sum()


g = torch.compile(f, backend="eager")
for n in (2, 3, 4):
    g(torch.randn(n))
torch._dynamo.reset()
