"""The same parameters converted twice per step (memo hits), a fresh mode
per step: PyTorch 1.13.1's _fix_weakref keeps each hit fake, and its mode,
alive for good; 2.0 fixed it (pytorch#90823)."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

params = [torch.randn(4, 4), torch.randn(8)]
for step in range(10):
    mode = FakeTensorMode()
    first = [mode.from_tensor(p) for p in params]
    again = [mode.from_tensor(p) for p in params]
    del first, again, mode
