"""Fakes kept in a class attribute: every instance's step appends to the
class-level list, which outlives the instances."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode


class Tracer:
    seen = []

    def __init__(self):
        self.mode = FakeTensorMode()

    def step(self, t):
        f = self.mode.from_tensor(t)
        Tracer.seen.append(f)
        return f.shape


for i in range(10):
    Tracer().step(torch.randn(4, 4))
