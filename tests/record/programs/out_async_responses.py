"""An asyncio server loop: requests arrive from an async generator, each is
handled by a coroutine that converts its payload with the server's mode and
appends the response (with its fake) to RESPONSES, which is never trimmed.
Real PyTorch 1.13.1 keeps the 12 fakes, one more per request, at
RESPONSES[i]['meta']."""
import asyncio
import gc
import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

RESPONSES = []
REFS = []


async def requests(n):
    for i in range(n):
        await asyncio.sleep(0)
        yield {"id": i, "payload": torch.randn(i % 3 + 1, 4)}


async def handle(req, mode):
    await asyncio.sleep(0)
    fake = mode.from_tensor(req["payload"])
    REFS.append(weakref.ref(fake))
    RESPONSES.append({"id": req["id"], "meta": fake})


async def serve():
    mode = FakeTensorMode()
    async for req in requests(12):
        await handle(req, mode)


asyncio.run(serve())
gc.collect()
print("real: %d fakes alive, in RESPONSES" % sum(r() is not None for r in REFS))
