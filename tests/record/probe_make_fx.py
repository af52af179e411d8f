#!/usr/bin/python3
"""probe_make_fx.py ROOT - what keeps make_fx's graphs in real PyTorch
1.13.1 after gc.collect() (tests/record/programs/make_fx_views.py).

The fakes sit in fx.Node.meta["val"]. A view's fake (the node `t` of
x.t() @ x) keeps its base's TensorImpl from C++ (the view's `_base`); the
base fake is then shared with C++, and THPVariable_subclass_traverse
(torch/csrc/autograd/python_variable.cpp) visits nothing of a tensor whose
TensorImpl C++ shares ("resurrectable": its references are treated as
roots). What the base holds - its proxy slot, the Proxy, its Node, the
Graph, the GraphModule, the view node's meta["val"], the view - is a cycle
the collector cannot see through. Checked here, on the real thing:
  - exactly the graphs of the function that makes a view survive (13 of 40),
    each with 3 fakes;
  - dropping the view node's meta["val"] lets the graph go; dropping the
    base's (or any other node's) does not;
  - the rule alone, no make_fx: a holder that a tensor's __dict__ and a view
    of that tensor share survives gc.collect(); with a clone it dies.
Exit 77 without torch."""
import gc
import os
import runpy
import sys
import weakref


def base_cycle_kept(torch, how):
    """x.h = holder, holder.v = a view (or clone) of x: kept by gc.collect()?"""
    class Holder:
        pass
    x = torch.randn(4, 3)
    h = Holder()
    x.h = h
    h.v = x.t() if how == "view" else x.clone()
    w = weakref.ref(h)
    del x, h
    gc.collect()
    return w() is not None


def main(root):
    try:
        import torch
        import torch.fx
        from torch.fx.experimental.proxy_tensor import make_fx
        from torch._subclasses.fake_tensor import FakeTensor
    except ImportError as e:
        print("skipped: %s" % e)
        return 77
    bad = []
    runpy.run_path(os.path.join(root, "tests", "record", "programs", "make_fx_views.py"),
                   run_name="__main__")
    gc.collect()
    objs = gc.get_objects()
    gms = [o for o in objs if isinstance(o, torch.fx.GraphModule)]
    fakes = [o for o in objs if type(o) is FakeTensor]
    kinds = {"mm" if "aten.mm" in gm.code else "other" for gm in gms}
    if len(gms) != 13 or kinds != {"mm"} or len(fakes) != 39:
        bad.append("kept %d graphs (%s), %d fakes; expected the 13 of x.t() @ x, 39 fakes"
                   % (len(gms), kinds, len(fakes)))
    del objs, gms, fakes
    results = {}
    for cut in ("nothing", "the view's val", "the base's val", "every other val"):
        g = make_fx(lambda x: x.t() @ x, tracing_mode="fake")(torch.randn(4, 3))
        w = weakref.ref(g)
        views = [n for n in g.graph.nodes if "val" in n.meta and n.meta["val"]._is_view()]
        base = {id(n.meta["val"]._base) for n in views}
        for n in list(g.graph.nodes):
            v = n.meta.get("val")
            if v is None:
                continue
            drop = (cut == "the view's val" and n in views) or \
                (cut == "the base's val" and id(v) in base) or \
                (cut == "every other val" and n not in views)
            if drop:
                n.meta.pop("val")
        del g, views, n, v
        gc.collect()
        results[cut] = w() is not None
    want = {"nothing": True, "the view's val": False, "the base's val": True,
            "every other val": True}
    if results != want:
        bad.append("graph kept after dropping %s; expected %s" % (results, want))
    kept = {how: base_cycle_kept(torch, how) for how in ("view", "clone")}
    if kept != {"view": True, "clone": False}:
        bad.append("a holder shared by a tensor's __dict__ and its %s: kept %s; expected "
                   "kept through a view only" % ("view/clone", kept))
    for b in bad:
        print("FAIL: " + b)
    if bad:
        return 1
    print("ok: 1.13.1 keeps the 13 graphs that hold a view's fake, through the view's C++ "
          "reference to its base (not traversed by the collector): %s" % results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
