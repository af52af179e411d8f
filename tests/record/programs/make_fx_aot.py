"""AOT-style: functorch.compile.aot_function over three small functions
and 12 input shapes, forward and backward each run once, the compiled
function and its outputs dropped. With use_fake_tensor (as TorchDynamo sets
it), AOT Autograd traces the joint forward and backward with make_fx under
a FakeTensorMode of its own and partitions it
into a forward and a backward GraphModule; the compiler here keeps the
graphs as they are. Real PyTorch 1.13.1 keeps the graphs whose trace made a
view of a fake (tests/record/probe_make_fx.py), their fakes and modes."""
import torch
from functorch.compile import aot_function, config, make_boxed_func

try:
    config.use_fake_tensor = True     # 1.13.1 traces with fakes when told (TorchDynamo tells it)
except AttributeError:
    pass                              # 2.x always does


def keep_graph(gm, example_inputs):
    return make_boxed_func(gm)



def f1(x, w):
    return torch.relu(x @ w).sum(0)


def f2(x, w):
    return (x * 2 + 1).tanh() @ w


def f3(x, w):
    return x.t() @ x @ w


for i, n in enumerate(range(1, 13)):
    fn = (f1, f2, f3)[i % 3]
    c = aot_function(fn, fw_compiler=keep_graph, bw_compiler=keep_graph)
    x = torch.randn(n, 3, requires_grad=True)
    w = torch.randn(3, 2, requires_grad=True)
    out = c(x, w)
    out.sum().backward()
    del c, out, x, w
