"""Dynamic shapes: a mode with a ShapeEnv converts tensors of several
sizes symbolically; the fakes of each step are kept in KEEP, and the
ShapeEnv with them (accumulating)."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv, DimDynamic, StatelessSymbolicContext

mode = FakeTensorMode(shape_env=ShapeEnv())
KEEP = []
for n in range(2, 12):
    t = torch.randn(n, 4)
    ctx = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC, DimDynamic.STATIC])
    f = mode.from_tensor(t, symbolic_context=ctx)
    KEEP.append(f * 2)
    del t, f
