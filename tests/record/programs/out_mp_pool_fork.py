"""A fork Pool maps a conversion over 8 sizes; each worker keeps every fake
it makes in a module-level CACHE of its own (a leak in the children), and
returns only the shape. The parent converts nothing kept: real PyTorch
1.13.1 in the parent keeps 0 fakes."""
import gc
import multiprocessing as mp
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
CACHE = []
REFS = []


def shape_of(n):
    f = MODE.from_tensor(torch.randn(n, 2))
    CACHE.append(f)
    return tuple(f.shape)


if __name__ == "__main__":
    probe = MODE.from_tensor(torch.randn(1))
    REFS.append(weakref.ref(probe))
    del probe
    with mp.get_context("fork").Pool(2) as pool:
        SHAPES = pool.map(shape_of, range(1, 9))
    gc.collect()
    print("real: %d fakes alive in the parent; shapes %s" %
          (sum(r() is not None for r in REFS), SHAPES))
