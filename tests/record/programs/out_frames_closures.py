"""Callbacks made by a factory close over the fake they were made for;
CALLBACKS keeps the callbacks, their cells keep the fakes. Real PyTorch
1.13.1 keeps all 8, held at CALLBACKS[i].__closure__[0].cell_contents."""
import gc
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
CALLBACKS = []
REFS = []


def make_check(t):
    fake = MODE.from_tensor(t)
    REFS.append(weakref.ref(fake))

    def check(shape):
        return tuple(fake.shape) == tuple(shape)
    return check


sizes = [2, 3, 5, 7, 11, 13, 17, 19]
CALLBACKS.extend(make_check(torch.randn(n)) for n in sizes)
gc.collect()
print("real: %d fakes alive, in CALLBACKS' cells" % sum(r() is not None for r in REFS))
