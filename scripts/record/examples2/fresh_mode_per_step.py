"""A fresh FakeTensorMode per step over long-lived parameters: every mode,
its fakes and their memo entries go with the step (clean under 2.x; 1.13.1
keeps a finalizer per parameter per step)."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

model = torch.nn.Linear(8, 4)
for step in range(20):
    mode = FakeTensorMode()
    with mode:
        w = mode.from_tensor(model.weight)
        b = mode.from_tensor(model.bias)
        x = torch.empty(2, 8)
        y = x @ w.t() + b
    del mode, w, b, x, y
