"""A multi-task model keeps its heads in an nn.ModuleDict and its blocks in
an nn.ModuleList; a debugging hook stores the fake of each head's input on
the head (heads['cls'].seen) and the last block's fake on the block
(blocks[1].last_fake). Real PyTorch 1.13.1 keeps 4 + 4 + 1 fakes."""
import gc
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
REFS = []


class MultiTask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)])
        self.heads = torch.nn.ModuleDict({"cls": torch.nn.Linear(4, 3),
                                          "reg": torch.nn.Linear(4, 1)})


model = MultiTask()
for name, head in model.heads.items():
    head.seen = []
for step in range(4):
    x = torch.randn(2, 4)
    for name in ("cls", "reg"):
        f = MODE.from_tensor(x + step)
        REFS.append(weakref.ref(f))
        model.heads[name].seen.append(f)
    g = MODE.from_tensor(x * step)
    REFS.append(weakref.ref(g))
    model.blocks[1].last_fake = g
del f, g
gc.collect()
print("real: %d fakes alive, on model.heads and model.blocks[1]" %
      sum(r() is not None for r in REFS))
