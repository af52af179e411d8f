"""A shape-inference service: each request is submitted to a
ThreadPoolExecutor, which converts the request's batch with one shared mode
and multiplies it by the weight converted once, one request at a time
inside the mode (a FakeTensorMode shared by threads is not thread-safe:
1.13.1 fails `assert device.type != "meta"` now and then without the
lock). For debugging, every output is appended to a module-level HISTORY
that nothing ever clears. Real PyTorch 1.13.1 keeps the 10 outputs, one
more per request, at HISTORY[i], and the weight's fake W."""
import gc
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor, as_completed

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
WEIGHT = torch.randn(8, 3)
W = MODE.from_tensor(WEIGHT)
HISTORY = []
REFS = [weakref.ref(W)]
MODE_LOCK = threading.Lock()


def infer_shape(batch):
    with MODE_LOCK:
        x = MODE.from_tensor(torch.zeros(batch, 8))
        with MODE:
            y = x @ W
        REFS.extend(weakref.ref(t) for t in (x, y))
        HISTORY.append(y)
    return tuple(y.shape)


shapes = {}
with ThreadPoolExecutor(max_workers=4) as ex:
    futures = {}
    for batch in range(1, 11):
        futures[ex.submit(infer_shape, batch)] = batch
    for fut in as_completed(futures):
        shapes[futures[fut]] = fut.result()
gc.collect()
print("real: %d fakes alive, in HISTORY and W" % sum(r() is not None for r in REFS))
