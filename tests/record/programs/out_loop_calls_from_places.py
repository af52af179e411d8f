"""A helper that logs the fake of what it is given, called from three
places in straight-line code (no loop around it), 9 calls in all; LOG
keeps every fake: real PyTorch 1.13.1 keeps 9, growing with each call."""
import gc
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
LOG = []
REFS = []


def note(t):
    f = MODE.from_tensor(t)
    REFS.append(weakref.ref(f))
    LOG.append(f)


def load():
    note(torch.randn(2))
    note(torch.randn(3))
    note(torch.randn(4))


def train():
    note(torch.randn(5, 2))
    note(torch.randn(6, 2))
    note(torch.randn(7, 2))


def evaluate():
    note(torch.randn(1, 1, 2))
    note(torch.randn(1, 1, 3))
    note(torch.randn(1, 1, 4))


load()
train()
evaluate()
gc.collect()
print("real: %d fakes alive, in LOG" % sum(r() is not None for r in REFS))
