"""functools.lru_cache on a method, keyed by shape: each model config gets
its own ShapeProp, whose example inputs are cached per shape. The cache is
the class's, and its keys hold self: every ShapeProp ever made, its mode
and its fakes stay after the program drops it. Four configs of three
shapes each; real PyTorch 1.13.1 keeps all 12 fakes and the 4 modes."""
import functools
import gc
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

REFS = []


class ShapeProp:
    def __init__(self, hidden):
        self.mode = FakeTensorMode()
        self.weight = torch.randn(hidden, hidden)

    @functools.lru_cache(maxsize=None)
    def example(self, shape):
        fake = self.mode.from_tensor(torch.empty(shape))
        REFS.append(weakref.ref(fake))
        return fake

    def out_shape(self, batch):
        x = self.example((batch, self.weight.shape[0]))
        w = self.mode.from_tensor(self.weight)
        with self.mode:
            return tuple((x @ w).shape)


for hidden in (16, 32, 64, 128):
    prop = ShapeProp(hidden)
    for batch in (1, 8, 32):
        assert prop.out_shape(batch) == (batch, hidden)
    del prop
gc.collect()
print("real: %d fakes alive, kept by ShapeProp.example's cache"
      % sum(r() is not None for r in REFS))
