"""A WeakValueDictionary of fakes by name, filled every round; nothing else
keeps them, so each entry goes when its round ends. It looks like a
registry that grows: real PyTorch 1.13.1 keeps 0 fakes, PASS."""
import gc
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
BY_NAME = weakref.WeakValueDictionary()
REFS = []


def round_(i):
    f = MODE.from_tensor(torch.randn(3, i + 1))
    REFS.append(weakref.ref(f))
    BY_NAME["x%d" % i] = f
    return f.shape


shapes = list(map(round_, range(15)))
gc.collect()
print("real: %d fakes alive, %d left in BY_NAME" %
      (sum(r() is not None for r in REFS), len(BY_NAME)))
