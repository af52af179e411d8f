"""A loop that converts inputs and weights each round, appends them to a
list for the round's checks, and deletes the list and its locals at the
end of the round. Real PyTorch 1.13.1 keeps 0 fakes: PASS."""
import gc
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
REFS = []
step = 0
while step < 12:
    batch = [MODE.from_tensor(torch.randn(2, step + 1)) for _ in range(3)]
    w = MODE.from_tensor(torch.randn(step + 1, 4))
    REFS.extend(weakref.ref(t) for t in batch + [w])
    assert all(b.shape[1] == w.shape[0] for b in batch)
    del batch, w
    step += 1
gc.collect()
print("real: %d fakes alive" % sum(r() is not None for r in REFS))
