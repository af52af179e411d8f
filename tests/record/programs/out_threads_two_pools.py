"""A data-preparation step with two thread pools over one function: the
training pool logs every batch it converts in TRAIN_LOG for later
inspection (nothing ever clears it); the evaluation pool, run after it,
checks shapes only and keeps nothing. Each pool is shut down and dropped.
Real PyTorch 1.13.1 keeps the 8 logged fakes, one more per training batch,
at TRAIN_LOG[i]; no pool or thread of one outlives the pool's use."""
import gc
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
MODE_LOCK = threading.Lock()
TRAIN_LOG = []
REFS = []


def prepare(batch, log):
    with MODE_LOCK:
        x = MODE.from_tensor(torch.zeros(batch, 4))
    REFS.append(weakref.ref(x))
    if log:
        TRAIN_LOG.append(x)
    return tuple(x.shape)


def run_pool(batches, log, workers):
    pool = ThreadPoolExecutor(max_workers=workers)
    shapes = list(pool.map(prepare, batches, [log] * len(batches)))
    refs = [weakref.ref(t) for t in pool._threads] + [weakref.ref(pool)]
    pool.shutdown()
    return shapes, refs


train_shapes, train_pool = run_pool(list(range(1, 9)), True, 2)
eval_shapes, eval_pool = run_pool(list(range(1, 9)), False, 3)
gc.collect()
print("real: %d fakes alive, in TRAIN_LOG" % sum(r() is not None for r in REFS))
print("pools and their threads alive: %d" % sum(r() is not None for r in train_pool + eval_pool))
