"""What a torch.compile keeps after torch._dynamo.reset() (PyTorch 2.6
and 2.14, run): the ShapeEnv of a dynamic compile, kept by ShapeEnv's
class-level lru_caches, and the fakes it tracks.

TorchDynamo gives each compile's ShapeEnv the OutputGraph's tracked_fakes
list (torch/_dynamo/output_graph.py 2.6.0:313, 2.14.1:777; ShapeEnv keeps it,
torch/fx/experimental/symbolic_shapes.py 2.6.0:3034, 2.14.1:3929): a
TrackedFake per input, holding the input's fake, which holds its mode. The
ShapeEnv's guard methods are lru_cache'd on the class (`@lru_cache(256)`
evaluate_expr, 2.6.0:6291; `@_lru_cache` _find, replace, simplify,
_maybe_evaluate_static; 2.14.1: _inner_evaluate_expr, 8268 and the same
four), so each cache key holds `self`: the ShapeEnv, and through it those
fakes and their mode, outlive the compile, the code cache and
torch._dynamo.reset() (which clears neither), until the cache is cleared.
A static compile's ShapeEnv calls none of them and dies at the reset.

Measured on tests/record/programs/compile_reset.py (3 shapes, then a
reset; weakrefs after gc.collect()): 1 fake (the dynamic input's, sizes
(s0,) in 2.6 and (s77,) in 2.14) and 1 mode left, on both versions; the
program reaches them through the globals Dynamo installs in its module
(`__import_torch_dot__dynamo_dot_utils`) and so through the class
(objgraph's chain: ... type ShapeEnv -> ShapeEnv.evaluate_expr's
lru_cache -> a key tuple -> ShapeEnv -> tracked_fakes -> TrackedFake ->
FakeTensor). The recording says so with `hold(F, PATH)`, PATH naming the
method whose cache holds the ShapeEnv and the tracked fake's index."""

import sys

from .engine import locked
from .holders import cache_items, locate


def cached_shape_envs():
    """{id(ShapeEnv): (ShapeEnv, [method names])} of the ShapeEnvs that a
    class-level lru_cache of ShapeEnv holds as a key's `self`, methods in
    the class's order."""
    ss = sys.modules.get("torch.fx.experimental.symbolic_shapes")
    se_cls = getattr(ss, "ShapeEnv", None)
    out = {}
    if se_cls is None:
        return out
    for name, w in list(vars(se_cls).items()):
        info = getattr(w, "cache_info", None)
        if info is None:
            continue
        inner = getattr(info, "__self__", w)      # _lru_cache's wrapper: its lru_cache
        try:
            if not inner.cache_info().currsize:
                continue
        except Exception:
            continue
        for key, _ in cache_items(inner):
            se = key[0] if isinstance(key, tuple) and key else None
            if isinstance(se, se_cls):
                names = out.setdefault(id(se), (se, []))[1]
                if name not in names:
                    names.append(name)
    return out


def holds(recorded, roots, rec):
    """[(PATH, fake)] for each recorded fake (recorded: id -> Obj) that a
    ShapeEnv kept by ShapeEnv's lru_caches tracks and the program's roots
    do not reach (a compiled graph in its globals is said first: it goes
    with torch._dynamo.reset(), the cache does not): PATH as the program's
    end says it, the method's cache first."""
    out = []
    for se, names in cached_shape_envs().values():
        for i, tf in enumerate(getattr(se, "tracked_fakes", None) or ()):
            fake = getattr(tf, "fake", None)
            if fake is not None and id(fake) in recorded:
                out.append(("ShapeEnv.%s's lru_cache -> ShapeEnv.tracked_fakes[%d].fake"
                            % (names[0], i), fake))
    if out:
        found = locate({id(f): recorded[id(f)] for _, f in out}, roots, rec)
        out = [(p, f) for p, f in out if id(f) not in found]
    return out


def hook_clear(rec):
    """From PyTorch 2.14 a compile ends by emptying its modes' describer
    tables (torch/_dynamo/convert_frame.py 2.14.1:216-246,
    _clear_fake_mode_weakrefs, called by clear_compile_context_weakrefs):
    wrapped, once Dynamo is imported, so that rec.on_clear_weakrefs says
    it (`m.clear_weakrefs()`). Earlier versions have no such function."""
    cf = sys.modules.get("torch._dynamo.convert_frame")
    orig = getattr(cf, "_clear_fake_mode_weakrefs", None)
    if orig is None or getattr(orig, "fakegc_hooked", False):
        return

    def on_clear(fake_mode):
        r = orig(fake_mode)
        if fake_mode is not None:
            rec.safe(rec.on_clear_weakrefs, fake_mode)
        return r
    w = locked(rec, on_clear)
    w.fakegc_hooked = True
    cf._clear_fake_mode_weakrefs = w
    rec.saved.append((cf, "_clear_fake_mode_weakrefs", orig))


def unwrap_root(root):
    """A root of the program's globals as the program reaches what it
    holds: a graph TorchDynamo compiled (`__compiled_fn_N`, installed in
    the compiled function's globals, torch/_dynamo/output_graph.py 2.6.0:
    1694 install_global_unsafe, deleted when its code dies: CleanupManager)
    is a function wrapping the GraphModule's forward; the root is then the
    GraphModule, whose nodes' meta["example_value"] are the trace's fakes."""
    name, x = root
    if not name.startswith("__compiled_fn"):
        return root
    fwd = getattr(x, "__wrapped__", x)
    gm = getattr(fwd, "__self__", None)
    return (name, gm) if gm is not None else root
