"""An LRU cache of fakes by shape: functools.lru_cache(maxsize=4) keeps the
last four, the others are evicted and die."""
import functools
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

mode = FakeTensorMode()


@functools.lru_cache(maxsize=4)
def fake_of(n):
    return mode.from_tensor(torch.randn(n, 3))


for n in range(1, 21):
    fake_of(n)
