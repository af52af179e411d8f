"""(d) A view-heavy workload: slices and transposes of one base, converted
under one FakeTensorMode, so the storage memo is shared and the periodic
sweep runs (check_expired_frequency 128) while views die."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

mode = FakeTensorMode()
base = torch.randn(64, 64)
fb = mode.from_tensor(base)
for step in range(150):
    v = base[step % 60:step % 60 + 4]
    w = v.t()
    fv = mode.from_tensor(v)
    fw = mode.from_tensor(w)
    del v, w, fv, fw
d = base.detach()
fd = mode.from_tensor(d)
other = torch.randn(8, 8)
fo = mode.from_tensor(other)
del other
for i in range(130):
    x = torch.empty(2, 2)
    fx = mode.from_tensor(x)
    del x, fx
