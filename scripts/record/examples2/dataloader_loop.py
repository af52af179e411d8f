"""A DataLoader training loop that traces each batch under one FakeTensorMode
and keeps the fake batches in a history list: they accumulate."""
import torch
from torch.utils.data import DataLoader, TensorDataset
from torch._subclasses.fake_tensor import FakeTensorMode

data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
loader = DataLoader(data, batch_size=8)
mode = FakeTensorMode()
history = []
for epoch in range(2):
    for x, y in loader:
        fx = mode.from_tensor(x)
        fy = mode.from_tensor(y)
        history.append((fx, fy))
