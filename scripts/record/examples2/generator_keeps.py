"""A generator that yields fakes and keeps each in a local list; the program
keeps the suspended generator, so its frame keeps them."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

mode = FakeTensorMode()


def fakes():
    kept = []
    while True:
        f = mode.from_tensor(torch.randn(3, 3))
        kept.append(f)
        yield f


GEN = fakes()
for _ in range(12):
    next(GEN)
