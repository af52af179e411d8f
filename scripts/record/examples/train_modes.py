"""(c) A small training loop that makes a new FakeTensorMode per step over
long-lived parameters (as a tracer re-run per step does): each step
converts every parameter and its grad, the mode dies at the end of the
step, and 1.13.1's finalizers accumulate on the parameters."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(20):
    x = torch.randn(4, 8)
    loss = net(x).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    mode = FakeTensorMode()
    fakes = [mode.from_tensor(p) for p in net.parameters()]
    fx = mode.from_tensor(x)
    del fakes, fx, mode
