"""Four threads converting and dropping tensors: two with a mode each (an
op under it, every fifth fake kept in a module-level list), two sharing one
mode. Python runs them one at a time (the GIL): the recording says the
events in the order they happened, each thread's marked, and replays with
0 fidelity mismatches; real PyTorch 1.13.1 keeps the 8 listed fakes."""
import threading

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

KEEP = []
SHARED = FakeTensorMode()


def own_mode(n):
    m = FakeTensorMode()
    for i in range(20):
        t = torch.randn(2, n)
        f = m.from_tensor(t)
        with m:
            y = f * 2
        if i % 5 == 0:
            KEEP.append(f)
        del t, f, y


def shared(n):
    for i in range(20):
        t = torch.randn(3, n)
        f = SHARED.from_tensor(t)
        del t, f


ts = [threading.Thread(target=own_mode, args=(k + 1,)) for k in range(2)]
ts += [threading.Thread(target=shared, args=(k + 1,)) for k in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
