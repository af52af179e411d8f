"""(lost) PyTorch 1.13.1's own _fix_weakref leak: a fresh FakeTensorMode per
step converts the parameters of a layer twice while the first fake is still
held; the second conversion is a memo hit, which calls _fix_weakref on the
fake and leaks a reference to it. Nothing in the program holds the fakes
afterwards, yet 1.13.1 never frees them nor, through them, their modes:
20 fakes and 10 modes at the end that no referrer chain from a module
reaches."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

net = torch.nn.Linear(4, 4)
for step in range(10):
    mode = FakeTensorMode()
    for p in net.parameters():
        f = mode.from_tensor(p)
        g = mode.from_tensor(p)     # a memo hit: _fix_weakref
    del mode, f, g
