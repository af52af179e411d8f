"""real_2_14.py - what PyTorch 2.14.1 itself does on the rows of the
pytorch-2.14 design (fakegc-semantics(7), DESIGNS): run under a real 2.14
(tests/designs/real_2_14.sh). Each line says ok or MISMATCH; exit 1 on any
mismatch, so a PyTorch that changes one of these facts is noticed.

Facts asserted (Debian python3-torch 2.14.1):
- item() memos: the same symbol twice; a new one after an in-place op on
  the fake or on its base (a view shares its base's version counter); a
  new one after fake_mode.epoch += 1;
- inference mode: item() memoizes there too (2.14.1 stores the memo);
- Dynamo's collection after a compile is gc.collect(1);
- no constant_scalar: a constant fake of a 0-d CPU tensor has no such
  attribute and untyped_storage() leaves its constant;
- PyCodegen's collect_temp_sources is iterative (pytorch#155791).
"""
import inspect
import sys

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

bad = 0


def check(what, got, want):
    global bad
    ok = got == want
    bad += not ok
    print(f"{'ok      ' if ok else 'MISMATCH'} {what}: {got!r}" + ("" if ok else f" (want {want!r})"))


print(f"torch {torch.__version__}")
m = FakeTensorMode(shape_env=ShapeEnv())
f = m.from_tensor(torch.zeros((), dtype=torch.int64))
with m:
    a, b = f.item(), f.item()
    check("item() twice", (str(a), str(b)), ("u0", "u0"))
    f.add_(1)
    check("after f.add_(1)", str(f.item()), "u1")
    m.epoch += 1
    check("after epoch + 1", str(f.item()), "u2")
    g = m.from_tensor(torch.zeros(4, dtype=torch.int64))
    v = g[1]
    s1 = v.item()
    g.add_(1)
    check("a view's memo after its base's add_", (str(s1), str(v.item())), ("u3", "u4"))
m2 = FakeTensorMode(shape_env=ShapeEnv())
h = m2.from_tensor(torch.zeros((), dtype=torch.int64))
with m2:
    with torch.inference_mode():
        i1, i2 = h.item(), h.item()
    check("inference mode: item() twice, then outside", (str(i1), str(i2), str(h.item())),
          ("u0", "u0", "u0"))
import torch._dynamo.convert_frame as cf
src = inspect.getsource(cf)
check("run_gc_after_compile's collection", ("gc.collect(1)" in src, "gc.collect()" in src),
      (True, False))
m3 = FakeTensorMode()
c = torch.zeros((), dtype=torch.int64)
fc = m3.fake_tensor_converter.from_real_tensor(m3, c, make_constant=True)
check("constant_scalar attribute", hasattr(fc, "constant_scalar"), False)
fc.untyped_storage()
check("constant after untyped_storage()", fc.constant is c, True)
import torch._dynamo.codegen as cg
check("collect_temp_sources iterative", "while sources" in inspect.getsource(cg), True)
sys.exit(1 if bad else 0)
