"""A training-style loop that keeps every step's fake tensor in a list the
program never clears: 5 fake tensors (and their modes) accumulate, held by
KEEP, made at the from_tensor line."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

KEEP = []


def step(i):
    mode = FakeTensorMode()
    x = torch.ones(4)
    f = mode.from_tensor(x)
    KEEP.append(f)


for i in range(5):
    step(i)
