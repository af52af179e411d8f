"""(clean) The helper of leak_accumulating without the list: every fake and
every mode dies with its step. Nothing is left at the end."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode


def fake_of(mode, x):
    return mode.from_tensor(x)


for step in range(50):
    mode = FakeTensorMode()
    fake_of(mode, torch.empty(2, 3))
    fake_of(mode, torch.empty(4))
del mode
