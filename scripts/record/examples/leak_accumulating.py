"""(accumulating) A helper that keeps every fake it makes in a module-level
list: 2 fakes per step, 50 steps, and the step's mode held through them.
Everything is reachable from the program (KEEP), and it grows every round."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

KEEP = []


def fake_of(mode, x):
    f = mode.from_tensor(x)
    KEEP.append(f)
    return f


for step in range(50):
    mode = FakeTensorMode()
    fake_of(mode, torch.empty(2, 3))
    fake_of(mode, torch.empty(4))
