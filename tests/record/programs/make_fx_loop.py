"""make_fx(f, tracing_mode="fake") in a loop over several shapes, each
graph dropped at once; the inputs are the program's own. Each trace makes a
FakeTensorMode, converts the inputs and dies with its graph: real PyTorch
1.13.1 keeps no fake and no mode after gc.collect() (objgraph finds none),
but every conversion leaves a weakref.finalize on the program's input, so
PyTorch's finalizer registry grows by 4 per trace while the inputs live."""
import torch
from torch.fx.experimental.proxy_tensor import make_fx


def f(x, w):
    return torch.relu(x @ w).sum(0)


inputs = [(torch.randn(n, 4), torch.randn(4, 3)) for n in (2, 3, 5, 8)]
for step in range(5):
    for x, w in inputs:
        g = make_fx(f, tracing_mode="fake")(x, w)
        del g
