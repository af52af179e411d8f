"""A model keeps the fakes of its inputs on its own layers (a debugging hook
that stashes them): the holders are written as the program spells them,
net[0]._fake_inputs[0] and net.head._fake_inputs[0], not through the
_modules dicts that nn.Module stores them in."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

MODE = FakeTensorMode()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
        self.head = torch.nn.Linear(4, 2)


net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
model = Net()
for step in range(3):
    x = torch.randn(2, 4)
    net[0].__dict__.setdefault("_fake_inputs", []).append(MODE.from_tensor(x))
    model.head.__dict__.setdefault("_fake_inputs", []).append(MODE.from_tensor(x * 2))
