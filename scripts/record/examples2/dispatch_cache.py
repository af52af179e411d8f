"""A long-lived mode runs the same ops over and over: the process-wide
dispatch cache serves them (hits), its outputs get no memo entry, and
nothing is kept once the step's fakes are dropped."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

mode = FakeTensorMode()
a = mode.from_tensor(torch.randn(16, 16))
for step in range(40):
    h = a @ a
    h = torch.relu(h) + 1
    del h
print(FakeTensorMode.cache_hits, FakeTensorMode.cache_misses)
