"""Three worker threads, a FakeTensorMode each, each converting 5 tensors
and publishing only its last into a shared dict under its own name. Real
PyTorch 1.13.1 keeps 3 fakes (PUBLISHED['w0'] and so on) and their modes."""
import gc
import threading
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

PUBLISHED = {}
REFS = []
LOCK = threading.Lock()


def worker(name):
    mode = FakeTensorMode()
    last = None
    for k in range(5):
        last = mode.from_tensor(torch.randn(k + 1, 2))
        with LOCK:
            REFS.append(weakref.ref(last))
    with LOCK:
        PUBLISHED[name] = last


threads = [threading.Thread(target=worker, args=("w%d" % i,), name="w%d" % i)
           for i in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
gc.collect()
print("real: %d fakes alive, in PUBLISHED" % sum(r() is not None for r in REFS))
