#!/usr/bin/python3
"""probe_view_base.py [PYTHON] - does this PyTorch hold a view's base from
C++, out of its collector's sight (fk_design.c base_held_from_cpp)?

PYTHON: /usr/bin/python3 (Debian's 1.13.1, the default) or a root of
scripts/torch-root.sh (trixie: 2.6, forky: 2.14; its launcher in
$FAKEGC_ROOTS or /var/cache/fakegc/roots), under which this file runs
itself again; 77 (skipped) when that root or torch is absent.

The cycle is built by hand, for real tensors and for fakes of a
FakeTensorMode: x.h = holder, holder.v = x.t() (a view of x), every name
dropped, gc.collect(). THPVariable_subclass_traverse
(torch/csrc/autograd/python_variable.cpp) visits nothing of a tensor whose
TensorImpl C++ shares, and the view's TensorImpl holds x's: the holder and
x survive. With x.clone() in place of the view, both die. Prints what it
saw; exit 1 when either differs (scenarios/designs/view_base_cpp*.scn
model it)."""
import gc
import os
import subprocess
import sys
import weakref


def kept(make, how):
    """(holder alive, base alive) after gc.collect()."""
    class Holder:
        pass
    x = make()
    h = Holder()
    x.h = h
    h.v = x.t() if how == "view" else x.clone()
    wh, wx = weakref.ref(h), weakref.ref(x)
    del x, h
    gc.collect()
    return wh() is not None, wx() is not None


def probe():
    try:
        import torch
        from torch._subclasses.fake_tensor import FakeTensorMode
    except ImportError as e:
        print("skipped: %s" % e)
        return 77
    m = FakeTensorMode()
    makers = (("real", lambda: torch.randn(4, 3)),
              ("fake", lambda: m.from_tensor(torch.randn(4, 3))))
    seen = {(k, how): kept(f, how) for k, f in makers for how in ("view", "clone")}
    want = {(k, how): (how == "view",) * 2 for k, _ in makers for how in ("view", "clone")}
    version = torch.__version__.split("+")[0]
    bad = [k for k in want if seen[k] != want[k]]
    for k in bad:
        print("FAIL: torch %s, a %s tensor and its %s: (holder, base) alive %s, want %s"
              % (version, k[0], k[1], seen[k], want[k]))
    if not bad:
        print("ok: torch %s holds a view's base from C++: the cycle through a view of a "
              "real tensor and of a fake survives gc.collect(), through a clone it does not"
              % version)
    return 1 if bad else 0


def under(args, probe_fn, path):
    """probe_fn() here (no argument, or /usr/bin/python3 when it runs this),
    else the file at path run again under the root args[0] names (77 when
    that root is absent)."""
    if not args or args[0] == "/usr/bin/python3" and sys.executable == "/usr/bin/python3":
        return probe_fn()
    py = args[0]
    if not py.startswith("/"):
        roots = os.environ.get("FAKEGC_ROOTS", "/var/cache/fakegc/roots")
        py = os.path.join(roots, "%s-python3" % py)
        if not os.access(py, os.X_OK):
            print("skipped: no root %s (scripts/torch-root.sh %s)" % (args[0], args[0]))
            return 77
    return subprocess.run([py, "-W", "ignore", os.path.abspath(path)]).returncode


if __name__ == "__main__":
    sys.exit(under(sys.argv[1:], probe, __file__))
