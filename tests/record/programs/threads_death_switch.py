"""Two threads sharing a mode, each of whose fakes gives up the GIL twice in
the middle of its death (a 2 ms sleep), so that the other thread's next
event comes right there, every time, and a recorder that reads PyTorch's
counters then would see memo_storage one high. Nothing is kept.
  - an attribute's __del__, run when the fake's dict is cleared: its Python
    callbacks are done (tensor memo entry gone) but its C++ tensor, and so
    its meta storage, is not freed yet;
  - a weak reference to its meta storage, whose callback runs when that
    storage dies, before PyTorch's own (older) callback pops the storage
    memo's dead entry."""
import threading
import time
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

SHARED = FakeTensorMode()
WATCH = {}


class Slow:
    def __del__(self):
        time.sleep(0.002)


def watch(f):
    f.tag = Slow()
    st = f.untyped_storage()          # the memo's own storage object (2.x)
    key = id(st)
    WATCH[key] = weakref.ref(st, lambda r: (WATCH.pop(key, None), time.sleep(0.002)))


def convert(n):
    for i in range(20):
        t = torch.randn(3, n)
        f = SHARED.from_tensor(t)
        watch(f)
        del t, f


ts = [threading.Thread(target=convert, args=(k + 1,)) for k in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
