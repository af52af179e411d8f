"""A training step compiled once (torch.compile, backend="eager") and
called on batches of a few sizes, as a user trains on ragged data: the
losses are kept (detached, real), the compiled step lives on, no
torch._dynamo.reset(). What the step's compiles keep of their fakes."""
import torch

torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


@torch.compile(backend="eager")
def step(x, y):
    return torch.nn.functional.mse_loss(model(x), y)


LOSSES = []
for n in (8, 8, 16, 24, 32):
    x, y = torch.randn(n, 4), torch.randn(n, 2)
    opt.zero_grad()
    loss = step(x, y)
    loss.backward()
    opt.step()
    LOSSES.append(loss.detach())
