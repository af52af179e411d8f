"""A dict keeps every step's fake (and an op's output on it): 100 fakes
accumulate, held by the program at CACHE[i]."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

mode = FakeTensorMode()
CACHE = {}
for i in range(50):
    t = torch.randn(8, 8)
    f = mode.from_tensor(t)
    CACHE[i] = (f, f + 1)
    del t, f
