"""Concurrent request handling with asyncio.gather: every handler waits for
its input, converts it with the shared mode, waits again (a pretend
downstream call) and logs (request id, fake) in SESSION_LOG, which grows
for as long as the server runs. All 12 handlers start before the first
converts. Real PyTorch 1.13.1 keeps the 12 logged fakes, one more per
request, at SESSION_LOG[i][1]."""
import asyncio
import gc
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

SESSION_LOG = []
REFS = []


async def handle(request_id, mode):
    await asyncio.sleep(0.001 * (request_id % 3))
    fake = mode.from_tensor(torch.randn(request_id + 1, 2))
    REFS.append(weakref.ref(fake))
    await asyncio.sleep(0)
    SESSION_LOG.append((request_id, fake))
    return tuple(fake.shape)


async def main():
    mode = FakeTensorMode()
    return await asyncio.gather(*[handle(i, mode) for i in range(12)])


shapes = asyncio.run(main())
gc.collect()
print("real: %d fakes alive, in SESSION_LOG" % sum(r() is not None for r in REFS))
