"""Who holds what at the program's end: the program's roots, named as it
names them, and the shortest chain from one of them to each recorded
object still alive."""

import functools
import gc
import os
import re
import sys

from .engine import own


_FILES = {}    # module name -> (module, its absolute __file__ or None)


def module_file(name, m):
    """m's file, absolute (cached: a test runner asks after every test)."""
    hit = _FILES.get(name)
    if hit is None or hit[0] is not m:
        f = getattr(m, "__file__", None)
        hit = _FILES[name] = (m, os.path.abspath(f) if isinstance(f, str) else None)
    return hit[1]


def program_roots(rec, g, frame, tb):
    """The program's roots, named as it names them: its globals (the dict
    runpy gives back, or __main__'s while it runs), the globals of the
    modules it imported from its own folder, and the locals of its live
    frames (os._exit, SIGTERM, or the traceback of an exception)."""
    import types
    out = []
    main = sys.modules.get("__main__")
    if g is None and main is not None and getattr(main, "__file__", None) and \
            os.path.abspath(main.__file__) == rec.program:
        g = vars(main)
    for k, v in list((g or {}).items()):
        if not (k.startswith("__") and k.endswith("__")) and not isinstance(v, types.ModuleType):
            out.append((k, v))
    for name, m in list(sys.modules.items()):
        if name == "__main__" or m is main:
            continue
        f = module_file(name, m)
        if f and f.startswith(rec.pdir + os.sep) and not own(f) and f != rec.program:
            rec.prog_modules.append(name)
            for k, v in list(vars(m).items()):
                if not (k.startswith("__") and k.endswith("__")) and \
                        not isinstance(v, types.ModuleType):
                    out.append(("%s.%s" % (name, k), v))
    frames = []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for fr in frames:
        fn = os.path.abspath(fr.f_code.co_filename)
        if not fn.startswith(rec.pdir + os.sep) or own(fn) or fr.f_code.co_name == "<module>":
            continue
        for k, v in list(fr.f_locals.items()):
            out.append(("%s (a local of %s, %s:%d)" % (k, fr.f_code.co_name,
                                                       os.path.basename(fn), fr.f_lineno), v))
    return out


def locate(targets, roots, rec, limit=2000000):
    """For each target (id -> Obj), the shortest chain from a root of the
    program, as objgraph's find_backref_chain finds one, written as a
    Python expression: `CACHE[17][0]`, `model._parameters['weight']`,
    `Holder.cache[3]`. Roots: (name, object). The search does not go
    through the recorded objects (what a mode holds is the model's to
    find), through modules, or into classes and functions that are not
    the program's. Returns id -> path for the targets found."""
    import types
    from collections import deque
    prog_mods = set(rec.prog_modules)
    seen = {}
    q = deque()
    found = {}
    for name, x in roots:
        if id(x) not in seen:
            seen[id(x)] = (None, name, x)
            q.append(x)
    n = 0
    while q and len(found) < len(targets) and n < limit:
        x = q.popleft()
        n += 1
        if id(x) in targets:
            found[id(x)] = path_of(seen, id(x))
            # a recorded view holds its base (an op output is written as a
            # constructor, so the model would not know it does)
            base = getattr(x, "_base", None)
            if base is not None and id(base) not in seen:
                seen[id(base)] = (id(x), "._base", base)
                q.append(base)
            continue
        for child, label in expand(x, types, prog_mods):
            if id(child) not in seen:
                seen[id(child)] = (id(x), label, child)
                q.append(child)
    return found


def pytorch_roots():
    """PyTorch's class-level state, where it keeps what outlives a call:
    each attribute of a class a loaded torch module defines that is not a
    method, property, class or module, named `MODULE.CLASS.ATTR`
    (`torch._decomp.decompositions_for_rng.PhiloxStateTracker.fwd_state`:
    the seed and offset fakes of the last AOT trace, 2.x)."""
    import types
    skip = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
            types.ModuleType, classmethod, staticmethod, property, str, bytes, int, float,
            bool, type(None))
    out = []
    for name, m in list(sys.modules.items()):
        if not name.startswith("torch.") or m is None:
            continue
        for cname, c in list(vars(m).items()):
            if not isinstance(c, type) or getattr(c, "__module__", None) != name:
                continue
            for k, v in list(vars(c).items()):
                if not (k.startswith("__") and k.endswith("__")) and not isinstance(v, skip):
                    out.append(("%s.%s.%s" % (name, cname, k), v))
    return out


def path_of(seen, i):
    parts = []
    while True:
        parent, label, _ = seen[i]
        parts.append(label)
        if parent is None:
            break
        i = parent
    out = ""
    for lab in reversed(parts):
        out += lab if (not out or lab[:1] in ".[ " or not lab) else " -> " + lab
    return out


def expand(x, types, prog_mods):
    """(child, label) of what x holds, the labels as Python writes them."""
    if isinstance(x, (types.ModuleType, str, bytes, int, float, complex, bool, type(None))):
        return
    if isinstance(x, type):
        if getattr(x, "__module__", None) not in prog_mods:
            return
        for k, v in list(vars(x).items()):
            if not (k.startswith("__") and k.endswith("__")):
                yield v, "." + k
        return
    if isinstance(x, types.FunctionType):
        if getattr(x, "__module__", None) not in prog_mods:
            return
        for i, c in enumerate(x.__closure__ or ()):     # a cell, as Python reaches it
            try:
                yield c.cell_contents, ".__closure__[%d].cell_contents" % i
            except ValueError:
                pass
        for d in x.__defaults__ or ():
            yield d, ".__defaults__"
        return
    if isinstance(x, BaseException):   # what a kept exception keeps: its frames
        for name in ("__traceback__", "__context__", "__cause__"):
            v = getattr(x, name, None)
            if v is not None:
                yield v, "." + name
        for i, v in enumerate(x.args):
            yield v, ".args[%d]" % i
        for k, v in list(getattr(x, "__dict__", {}).items()):
            yield v, "." + str(k)
        return
    if isinstance(x, types.TracebackType):
        yield x.tb_frame, ".tb_frame"
        if x.tb_next is not None:
            yield x.tb_next, ".tb_next"
        return
    if isinstance(x, types.FrameType):   # a frame kept by a traceback or generator
        for k, v in list(x.f_locals.items()):
            yield v, ".f_locals[%r]" % (k,)
        return
    if isinstance(x, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        fr = getattr(x, "gi_frame", None) or getattr(x, "cr_frame", None) or \
            getattr(x, "ag_frame", None)
        if fr is not None:
            yield fr, ".%s_frame" % ("gi" if isinstance(x, types.GeneratorType) else
                                     "cr" if isinstance(x, types.CoroutineType) else "ag")
        return
    if isinstance(x, (types.BuiltinFunctionType, types.CodeType)):
        return
    if isinstance(x, functools._lru_cache_wrapper):
        yield from cached_calls(x)
        return
    if isinstance(x, dict):
        for k, v in list(x.items()):
            yield v, "[%s]" % key_repr(k)
        return
    if isinstance(x, (list, tuple)):
        for i, v in enumerate(list(x)):
            yield v, "[%d]" % i
        return
    if isinstance(x, (set, frozenset)):
        for v in list(x):
            yield v, ".<member>"
        return
    tm = getattr(type(x), "__module__", "") or ""
    if tm.startswith("torch.fx"):
        kind = graph_kind(x)
        if kind:
            yield from graph_parts(x, kind)
            return
    if "_modules" in getattr(x, "__dict__", {}) and hasattr(x, "named_children"):
        yield from module_parts(x)      # an nn.Module, as its user spells what it holds
        return
    d = getattr(x, "__dict__", None) if not isinstance(x, types.MethodType) else None
    if isinstance(d, dict):
        for k, v in list(d.items()):
            yield v, "." + str(k)
    if tm.startswith("torch") and not tm.startswith("torch.nn"):
        return     # PyTorch's own objects: what they hold is not the program's
    for c in gc.get_referents(x):
        if c is not d:
            yield c, type(c).__name__




def key_repr(k):
    """k as the program reads it: an object without a repr of its own is
    `<Holder object>`, not its address (which changes every run)."""
    return re.sub(r"<(?:[\w.]+\.)?(\w+) object at 0x[0-9a-fA-F]+>", r"<\1 object>", repr(k))


def cache_items(f):
    """(key, value) of a functools.lru_cache's cache dict: a key is the
    call's arguments (a method's start with its self); the value is the
    result, or, in a bounded cache, the link that holds it (cached_calls)."""
    d = getattr(f, "__dict__", None)
    for c in gc.get_referents(f):
        if isinstance(c, dict) and c is not d:
            yield from list(c.items())


def cached_calls(f):
    """(value, label) of a functools.lru_cache's entries by their keys, the
    arguments of the calls that return them, `ShapeProp.example
    cache[(<ShapeProp object>, (1, 16))]` (a method's key starts with its
    self), and what else the function keeps (its __dict__: `.__wrapped__`)."""
    d = getattr(f, "__dict__", None)
    for k, v in list((d or {}).items()):
        yield v, "." + str(k)
    keys = set()
    for k, v in cache_items(f):
        keys.add(id(k))
        if type(v).__name__ != "_lru_list_elem":    # unbounded: the value
            yield v, " cache[%s]" % key_repr(k)
    refs = gc.get_referents(f)
    # A bounded cache's values sit in its links, which gc cannot see into; the
    # wrapper visits each link as its key, its result, its type (3.11 to 3.14).
    for i in range(len(refs) - 1):
        if id(refs[i]) in keys and not isinstance(refs[i + 1], type):
            yield refs[i + 1], " cache[%s]" % key_repr(refs[i])


def module_parts(m):
    """(child, label) of an nn.Module as the program writes them: a
    submodule `net[0]` of a Sequential/ModuleList (`net.block` otherwise), a
    parameter or buffer `.weight`, a submodule of a ModuleDict by its key
    `heads['cls']`, any other attribute `.name`, never the
    `_modules`/`_parameters`/`_buffers` dicts Python stores them in."""
    d = vars(m)
    indexed = hasattr(type(m), "__getitem__")
    keyed = indexed and hasattr(type(m), "keys")     # ModuleDict: m['cls']
    for k, v in list(d["_modules"].items()):
        if v is not None:
            yield v, "[%r]" % (k,) if keyed else "[%s]" % k if indexed and str(k).isdigit() \
                else "[%r]" % (k,) if indexed and not str(k).isidentifier() else "." + str(k)
    for store in ("_parameters", "_buffers"):
        for k, v in list(d.get(store, {}).items()):
            if v is not None:
                yield v, "." + str(k)
    graph = graph_kind(m) == "module"
    for k, v in list(d.items()):
        if k not in ("_modules", "_parameters", "_buffers"):
            yield v, ".graph" if graph and k == "_graph" else "." + str(k)


def graph_kind(x):
    """"graph" for a torch.fx Graph, "node" for its Node, "module" for a
    GraphModule, else None."""
    fx = sys.modules.get("torch.fx")
    if fx is None:
        return None
    return "graph" if isinstance(x, fx.Graph) else "node" if isinstance(x, fx.Node) else \
        "module" if isinstance(x, fx.GraphModule) else None


def graph_parts(x, kind):
    """(child, label) of an fx Graph or Node as its user names them: a
    graph's nodes by name (`COMPILED[1].graph node tanh`), never the
    `_root._next._next` list they are linked in; a node's value is the
    node itself (`meta['val']`), its other meta `.meta['k']`."""
    if kind == "graph":
        for n in list(x.nodes):
            yield n, " node " + n.name
        return
    for k, v in list(getattr(x, "meta", {}).items()):
        yield v, "" if k == "val" else ".meta[%r]" % (k,)
    yield x.graph, ".graph"
