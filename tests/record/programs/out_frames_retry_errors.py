"""A retry helper keeps the last error of each failed attempt, as a log of
(attempt, error) pairs; the error was raised two calls down, where the fake
was a local. Real PyTorch 1.13.1 keeps 6 fakes (3 attempts of each of 2
jobs fail), held through FAILURES[i][1].__traceback__ frames."""
import gc
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
FAILURES = []
REFS = []


def validate(n, attempt):
    probe = MODE.from_tensor(torch.randn(n, attempt + 1))
    REFS.append(weakref.ref(probe))
    if attempt < 3:
        raise RuntimeError("attempt %d of %d too early" % (attempt, n))
    return probe.shape


def run(n, attempt):
    return validate(n, attempt)


def retry(n):
    attempt = 0
    while True:
        try:
            return run(n, attempt)
        except RuntimeError as err:
            FAILURES.append((attempt, err))
        attempt += 1


retry(4)
retry(9)
gc.collect()
print("real: %d fakes alive, through FAILURES' tracebacks" % sum(r() is not None for r in REFS))
