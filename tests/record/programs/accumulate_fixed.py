"""accumulate.py with the leak fixed: each step's fake tensor is used and
dropped, nothing accumulates."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

KEEP = []


def step(i):
    mode = FakeTensorMode()
    x = torch.ones(4)
    f = mode.from_tensor(x)
    KEEP.append(f.shape)


for i in range(5):
    step(i)
