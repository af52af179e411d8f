"""A program in the style of PyTorch 1.13's own test_fake_tensor.py and
test_meta.py (TestMetaConverter), written as plain statements: memoized
conversion, views of non-leaf tensors, grads, a fake module forward, many
modes, and a stand-alone MetaConverter over a view chain."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode, FakeTensor
from torch._subclasses.meta_utils import MetaConverter

# test_memoized_conversion_to_meta
x = torch.rand(2, 2, 2)
mode = FakeTensorMode()
assert mode.from_tensor(x) is mode.from_tensor(x)

# test_fake_grad_copy
y = torch.rand([4, 4], requires_grad=True)
y.grad = torch.rand([4, 4])
fy = mode.from_tensor(y)
assert isinstance(fy.grad, FakeTensor)

# test_view_of_non_leaf / test_non_leaf_torture
z = torch.randn(4, 4, requires_grad=True)
w = z.mul(2)
v = w[1:3].t()
fv = mode.from_tensor(v)
del z, w

# a module's forward under the mode
lin = torch.nn.Linear(4, 3)
with mode:
    inp = torch.empty(5, 4)
    params = [mode.from_tensor(p) for p in lin.parameters()]
    out = torch.nn.functional.linear(inp, *params)
assert out.shape == (5, 3)
del inp, out, params

# test_weakref (TestMetaConverter)
m = MetaConverter()
a = torch.randn(4, 4)
b = a.view(16)
mb = m(b)
assert m.successful()
del a, b
mb2 = m(torch.randn(3))
del mb, mb2

# many short-lived modes over one long-lived tensor
for i in range(10):
    mm = FakeTensorMode()
    f = mm.from_tensor(x)
    g = f.add(1)
    del mm, f, g
