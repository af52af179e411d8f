"""Closures made per step keep their step's fake alive in a list of
callbacks: 30 fakes accumulate, held through the closures' cells."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

mode = FakeTensorMode()
CALLBACKS = []


def make_callback(x):
    fake = mode.from_tensor(x)
    return lambda: fake.shape


for step in range(30):
    CALLBACKS.append(make_callback(torch.randn(4, step + 1)))
