"""multiprocessing with the fork start method: the child leaks 10 fakes
into a list of its own (and exits), the parent keeps one fake in
PARENT_KEEP. Real PyTorch 1.13.1 in the parent keeps 1; the child's 10 are
in a process of their own (it prints its count on its own line)."""
import gc
import multiprocessing as mp
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
PARENT_KEEP = [MODE.from_tensor(torch.randn(2, 2))]
REFS = [weakref.ref(PARENT_KEEP[0])]


def child():
    mine = []
    for n in range(10):
        mine.append(MODE.from_tensor(torch.randn(n + 1)))
    gc.collect()
    print("real (child): %d fakes alive, in mine" % len(mine), flush=True)


if __name__ == "__main__":
    p = mp.get_context("fork").Process(target=child)
    p.start()
    p.join()
    gc.collect()
    print("real: %d fakes alive, in PARENT_KEEP" % sum(r() is not None for r in REFS))
