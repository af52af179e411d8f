"""A training loop fed by a generator function (`for x in batches()`), as
data pipelines are written: each batch's fake is kept in HISTORY. Real
PyTorch 1.13.1 keeps all 10, one more per batch: accumulating."""
import gc
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
HISTORY = []
REFS = []


def batches(n):
    for i in range(n):
        yield torch.randn(4, i + 2)


for x in batches(10):
    f = MODE.from_tensor(x)
    REFS.append(weakref.ref(f))
    HISTORY.append(f)
del f, x
gc.collect()
print("real: %d fakes alive, in HISTORY" % sum(r() is not None for r in REFS))
