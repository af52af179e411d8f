"""(b) A fake forward pass of a torchvision ResNet-18: the parameters and
buffers are made fake once, then torch.nn.utils.stateless.functional_call
runs under `with mode:` over batches of different sizes."""
import torch
import torchvision
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.nn.utils import stateless

torch.manual_seed(0)
model = torchvision.models.resnet18(weights=None)
model.eval()
mode = FakeTensorMode()
params = {n: mode.from_tensor(p) for n, p in model.named_parameters()}
params.update({n: mode.from_tensor(b) for n, b in model.named_buffers()})
for batch in (1, 2, 4):
    x = torch.randn(batch, 3, 64, 64)
    fx = mode.from_tensor(x)
    with mode:
        out = stateless.functional_call(model, params, (fx,))
    assert out.shape == (batch, 1000)
    del x, fx, out
