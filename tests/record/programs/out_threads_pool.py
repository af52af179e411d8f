"""A ThreadPoolExecutor converts a batch of tensors with one shared mode;
the program keeps the results of its futures in RESULTS and drops the rest
(every other conversion is for a shape check only). Real PyTorch 1.13.1
keeps the 6 kept results, held at RESULTS[i]."""
import gc
import weakref
from concurrent.futures import ThreadPoolExecutor

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
REFS = []


def convert(n):
    f = MODE.from_tensor(torch.randn(n, 3))
    REFS.append(weakref.ref(f))
    return f if n % 2 == 0 else None


with ThreadPoolExecutor(max_workers=3) as pool:
    RESULTS = [r for r in pool.map(convert, range(12)) if r is not None]
gc.collect()
print("real: %d fakes alive, in RESULTS" % sum(r() is not None for r in REFS))
