"""An LRU cache of fakes by shape, bounded at 4 entries (OrderedDict,
oldest evicted): 20 rounds over 9 shapes. It looks like a growing cache,
but real PyTorch 1.13.1 keeps only the 4 cached: no growth, PASS."""
import gc
import weakref
from collections import OrderedDict

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
CACHE = OrderedDict()
LIMIT = 4
REFS = []


def fake_for(shape):
    if shape in CACHE:
        CACHE.move_to_end(shape)
        return CACHE[shape]
    f = MODE.from_tensor(torch.randn(*shape))
    REFS.append(weakref.ref(f))
    CACHE[shape] = f
    if len(CACHE) > LIMIT:
        CACHE.popitem(last=False)
    return f


for step in range(20):
    fake_for((2, step % 9 + 1))
gc.collect()
print("real: %d fakes alive, in CACHE" % sum(r() is not None for r in REFS))
