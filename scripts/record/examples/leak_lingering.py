"""(lingering) A long-lived mode converts 20 short-lived tensors: each one's
fake and memo entries go with it, but under 1.13.1's periodic sweep its
storage stays on the converter's pending list until the next sweep (every
128 conversions). Reported; fails only with --fail-on lingering."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

mode = FakeTensorMode()
for step in range(20):
    x = torch.empty(8, 8)
    mode.from_tensor(x)
    del x
