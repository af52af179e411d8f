"""(still reachable) A cache keyed by shape that fills in its first three
rounds and then only hits: 3 fakes kept on purpose in CACHE, the mode held by
the program, nothing growing after the warm-up. Reported, does not fail."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

mode = FakeTensorMode()
CACHE = {}
shapes = [(2, 3), (4,), (5, 5)]
for step in range(60):
    shape = shapes[step % 3]
    if shape not in CACHE:
        CACHE[shape] = (mode.from_tensor(torch.empty(shape)), step)
    f = CACHE[shape][0]
del f
