"""(a) The TorchDynamo setup: every parameter and buffer of a torchvision
ResNet-18 (random weights, no download) made fake under one FakeTensorMode,
as dynamo does before tracing; then the model is dropped."""
import torch
import torchvision
from torch._subclasses.fake_tensor import FakeTensorMode

torch.manual_seed(0)
model = torchvision.models.resnet18(weights=None)
mode = FakeTensorMode()
fakes = {}
for name, p in model.named_parameters():
    fakes[name] = mode.from_tensor(p)
for name, b in model.named_buffers():
    fakes[name] = mode.from_tensor(b)
# a second pass hits the fake memo for every tensor
again = [mode.from_tensor(p) for p in model.parameters()]
del again
del model
