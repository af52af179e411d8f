"""Constructors under a long-lived mode: a shape-checking step function
builds its buffers with torch.zeros / torch.empty / torch.ones under one
FakeTensorMode made once (as a planner that sizes buffers before it
allocates them would), keeps each step's running sum and, every other
step, its scratch buffer in a list, and drops the rest. PyTorch 2.14
memoizes a constructor's fake made under the mode (from_meta_and_device,
fake_impls.py constructors()), an entry that lives as long as the fake;
2.6 does not."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
KEPT = []


def step(n):
    with MODE:
        scratch = torch.empty(n, 4)
        total = torch.zeros(4)
        weight = torch.ones(n)
        total = total + weight @ scratch
        KEPT.append(total)
        if n % 2 == 0:
            KEPT.append(scratch)
        bias = torch.zeros(n, 2)
        del bias


for n in range(1, 9):
    step(n)
