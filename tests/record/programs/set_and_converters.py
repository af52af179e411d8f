"""What the language's version 1 cannot say: storage shared with other
sizes (set_ onto a slice of another storage), an offset on a non-view,
set_() after a tensor was converted, a stand-alone FakeTensorConverter.
Recorded with --lang 2 these become set_(), fake_converter() and
c.fake(m, t); with the default they are listed in the header."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode, FakeTensorConverter

mode = FakeTensorMode()
a = torch.randn(4, 4)
fa = mode.from_tensor(a)
b = torch.empty(0)
b.set_(a.storage(), 4, (2, 3), (3, 1))
fb = mode.from_tensor(b)
c = torch.randn(6, 6)
fc = mode.from_tensor(c)
c.set_(torch.empty(10))
other = torch.randn(3)
fo = mode.from_tensor(other)
del fc, c
conv = FakeTensorConverter()
d = torch.randn(5)
fd = conv(mode, d)
fd2 = conv(mode, d)
del d
del fa, a, fb, b, fd, fd2
