"""Storage sharing that is not a view: detach(), .data and set_() onto
another tensor's storage, each converted under one mode; a grad set before
conversion is converted with its tensor; a tensor whose storage the program
keeps through an unrecorded alias."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

mode = FakeTensorMode()
w = torch.nn.Parameter(torch.randn(6, 6))
w.grad = torch.ones(6, 6)
fw = mode.from_tensor(w)
d = w.detach()
fd = mode.from_tensor(d)
data = w.data
fdata = mode.from_tensor(data)
b = torch.empty(0)
b.set_(w.storage(), 0, w.size(), w.stride())
fb = mode.from_tensor(b)
a = torch.randn(3, 3)
hidden = a.detach()          # never converted: keeps a's storage
fa = mode.from_tensor(a)
del a, fa
c = hidden.view(9)          # a view of that storage, converted after a died
fc = mode.from_tensor(c)
del hidden, c, fc
w.grad = None
del d, fd, data, fdata, b, fb
