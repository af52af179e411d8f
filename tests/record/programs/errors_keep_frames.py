"""A program keeps the exceptions of its failed checks in a module-level
list; each traceback keeps the frame that raised, and the frame its local
fakes. Real PyTorch 1.13.1 keeps those fakes (3 per failed check, 10
checks): held at ERRORS[i].__traceback__.tb_next.tb_frame.f_locals['a'];
and 3 suspended generators keep one each at GENS[i].gi_frame.f_locals['x']."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()
ERRORS = []


def check(n):
    a = MODE.from_tensor(torch.randn(n, 2))
    b = MODE.from_tensor(torch.randn(2, n))
    c = MODE.from_tensor(torch.randn(n))
    if n % 2 == 0:
        raise ValueError("shape %d rejected" % n)
    return a.shape, b.shape, c.shape


for n in range(20):
    try:
        check(n)
    except ValueError as e:
        ERRORS.append(e)


def pending(n):
    x = MODE.from_tensor(torch.randn(5, n))
    yield x.shape
    yield n


GENS = []           # suspended generators: each frame keeps its fake
for n in range(3):
    g = pending(n)
    next(g)
    GENS.append(g)
del g
