"""torch.compile(backend="eager") of a small function, called on three
shapes, then torch._dynamo.reset(), four times over (a test suite that
resets Dynamo between tests does this): each round's dynamic ShapeEnv
stays in ShapeEnv's class-level lru_caches, which reset() does not clear,
with its input's fake and that fake's mode, one more per round."""
import torch


def f(x):
    return (x * 2).sum()


for rnd in range(4):
    g = torch.compile(f, backend="eager")
    for n in (2, 3, 4):
        g(torch.randn(n))
    torch._dynamo.reset()
