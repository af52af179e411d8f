#!/usr/bin/python3
"""truth.py [--no-chains] PROGRAM.py - what real PyTorch (1.13.1 or 2.x) keeps when PROGRAM ends.

Runs PROGRAM as the module __main__ (registered in sys.modules, a proper
module), with a weak reference to every
FakeTensor and FakeTensorMode it makes; at its end, after gc.collect(),
counts those still alive and, for each, whether a chain of referrers
reaches the program's module (held by the program) or not (lost: held
inside PyTorch), as objgraph.find_backref_chain would say (one pass from
the module for all of them: reached()); the .grad of a held fake is
held through it (a C++ slot the collector does not see). Prints JSON:
  {"fake": {"alive": N, "held": K, "chained": C}, "mode": {...}}
(chained: held with a chain of its own, grads aside), and
  "finalizer": {"alive": N, "per_mode": [...]}: the weakref.finalize objects
PyTorch registered during the program and still holds at its end, and how
many it held when each FakeTensorMode was made (a series that grows with
the modes of a loop is an accumulating registry); "mode" also has
"to_sweep": the distinct numbers of conversions left until the next sweep
of each live MetaConverter (a mode's or a stand-alone one) with expired
storages pending.
Under 2.x, "finalizer" counts only the fake-tensor machinery's own
(torch._subclasses), and "cache" is the size of the process-wide dispatch
cache (FakeTensorMode.cache) at the end.
--no-chains: counts only, no chain ("held" and "chained" 0).
Exit 77 when torch is not importable."""
import gc
import json
import os
import sys
import types
import weakref


MAX_DEPTH = 30      # the longest chain from the program's module


def reached(is_program, max_depth, extra_ignore):
    """{id: depth} of every object a chain of at most max_depth references
    reaches from a module is_program accepts, extra_ignore's objects on no
    chain: objgraph.find_backref_chain(x, is_program, max_depth,
    extra_ignore) finds a chain for x exactly when id(x) is here. Its edges,
    walked backwards there (gc.get_referrers: a container the collector
    tracks, to each object its traversal visits), are walked forwards here
    (gc.get_referents of tracked objects), once for all objects, where
    objgraph searches from each object again."""
    gc.collect()
    frontier = [o for o in gc.get_objects() if is_program(o)]
    depth = {id(o): 0 for o in frontier}
    ignore = set(extra_ignore) | {id(frontier), id(depth), id(sys._getframe())}
    for d in range(1, max_depth + 1):
        nxt = []
        ignore.add(id(nxt))
        for o in frontier:
            if not gc.is_tracked(o):
                continue
            for r in gc.get_referents(o):
                if id(r) not in depth and id(r) not in ignore:
                    depth[id(r)] = d
                    nxt.append(r)
        frontier[:] = nxt
        del nxt
    del frontier[:]
    return depth


def main(prog, chains=True):
    try:
        import torch
        from torch._subclasses import fake_tensor as ft
    except ImportError as e:
        print("skipped: %s" % e)
        return 77
    made = {"fake": [], "mode": []}
    fin0, per_mode = len(weakref.finalize._registry), []
    new, init = ft.FakeTensor.__new__, ft.FakeTensorMode.__init__
    from torch._subclasses import meta_utils as mu
    mc_init, mcs = mu.MetaConverter.__init__, []

    def meta_init(self, *a, **k):
        mc_init(self, *a, **k)
        mcs.append(weakref.ref(self))

    mu.MetaConverter.__init__ = meta_init

    def fake_new(cls, *a, **k):
        x = new(cls, *a, **k)
        made["fake"].append(weakref.ref(x))
        return x

    def mode_init(self, *a, **k):
        init(self, *a, **k)
        made["mode"].append(weakref.ref(self))
        per_mode.append(len(weakref.finalize._registry) - fin0)

    ft.FakeTensor.__new__ = staticmethod(fake_new)
    ft.FakeTensorMode.__init__ = mode_init
    prog = os.path.abspath(prog)
    mod = types.ModuleType("__main__")
    mod.__file__ = prog
    sys.modules["__main__"] = mod
    sys.path.insert(0, os.path.dirname(prog))
    code = compile(open(prog).read(), prog, "exec")
    exec(code, mod.__dict__)
    gc.collect()
    own = {"__main__"}

    def is_program(x):
        return isinstance(x, types.ModuleType) and x.__name__ in own

    out = {}
    for kind, refs in made.items():
        alive = [r() for r in refs if r() is not None]
        held, grads = 0, []
        near = reached(is_program, MAX_DEPTH, (id(alive), id(made), id(refs))) if chains else {}
        for x in (alive if chains else ()):
            if id(x) in near:
                held += 1
                if kind == "fake" and x.grad is not None:
                    grads.append(x.grad)
        del near
        chained = held
        # a held fake's .grad is held through it (a C++ slot gc does not see)
        held += sum(1 for x in alive if any(x is g for g in grads))
        del grads
        out[kind] = {"alive": len(alive), "held": held, "chained": chained}
        if kind == "mode":   # conversions to the next sweep, where storages wait for it
            live = [r() for r in mcs if r() is not None]
            out[kind]["to_sweep"] = sorted(set(    # 2.x: no sweep, no pending list
                mc.check_expired_frequency - mc.check_expired_count
                for mc in live if getattr(mc, "maybe_storages_to_delete", None)))
            del live
        del alive
    if torch.__version__.startswith("1."):
        out["finalizer"] = {"alive": len(weakref.finalize._registry) - fin0, "per_mode": per_mode}
    else:   # 2.x registers finalizers of its own elsewhere: count the fake-tensor ones
        out["finalizer"] = {"alive": sum(1 for i in list(weakref.finalize._registry.values())
                                         if "_subclasses" in getattr(i.func, "__module__", "")),
                            "per_mode": per_mode}
        out["cache"] = len(ft.FakeTensorMode.cache)     # the process-wide dispatch cache
    print(json.dumps(out))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main([a for a in args if a != "--no-chains"][0], "--no-chains" not in args))
