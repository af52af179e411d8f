"""PyTorch 2.x's fake-tensor lifecycle (2.3 to 2.14; designs.md
"pytorch-2.3"), recorded for `fakegc run` under pytorch-2.3 (2.3 to 2.13)
or pytorch-2.14 (2.14 and later), named by the recording's config compat.

What differs from 1.13 (torch113.py), and how it is observed:
  - FakeTensorConverter.from_real_tensor -> every conversion (from_tensor,
      converter calls, constants: `m.fake(t, constant=true)`, symbolic
      sizes: `m.fake(t, dynamic=true)` on a mode made with a ShapeEnv);
      there is no FakeTensorConverter.__call__ any more;
  - the memos are the describer's `lookup_tensor`/`lookup_storage` (ids of
      the real tensors and storages) and the MetaConverter's weak-valued
      `tensor_memo`/`storage_memo` keyed by those ids: they follow the
      fake's lifetime, not the real tensor's; no pending list, no sweep;
  - an op output is a stand-in keyed by the program's op,
      `op_out(empty(SIZES)).add(K)` under `with m` (CacheMirror; op_out: an
      op's output by its geometry, which no design memoizes, where 2.14
      memoizes a constructor's fake): one PyTorch memoized
      (from_meta_and_device: an entry that lives as long as the output) was
      a cache miss, and so is its stand-in, which the model memoizes the
      same way; one served from the dispatch cache (no entry) is a hit on K;
      the dispatch cache's counters are compared with them. Where that
      cannot mirror PyTorch's cache traffic, a memoized output is
      `op_out(empty(SIZES)).clone()` after `fake_cache().clear()` and one
      served from the cache `op_out(empty(SIZES))`;
  - the program's own constructor under a mode (torch.empty, zeros, ones,
      rand) is the language's constructor under `with m` where the design
      does what PyTorch did with it (own_ctor: 2.14 memoizes it, 2.3-2.13
      do not), which stops the cache comparison (the model's constructors
      are no dispatch-cache traffic); else a stand-in as above;
  - a GraphModule's snapshot of a fake (make_fx.py) shares that fake's meta
      storage: `op_out(empty(0)).set_(F.storage(), OFFSET, SIZES, STRIDES)`;
  - what PyTorch's class-level state still holds at the end, which no root
      of the program reaches, is a hold at its path (held_inside);
  - symbolic sizes: a conversion whose fake has SymInt sizes is
      `m.fake(t, dynamic=true)`, which makes the model's symbols by size
      (duck sizing, as the ShapeEnv does by default); the recorder keeps
      the same table (Symbols) and names PyTorch's symbols (s26, s77, ...)
      by it, so that an op output is written with its size expressions
      (`empty(2*s0, s1)`, sympy's Add, Mul and FloorDiv of integers and
      symbols) under `with m`; what else sympy says is written as its hint
      (noted), and so are the sizes of an output PyTorch memoized (its
      stand-in's clone would be keyed in the ShapeEnv's cache).
  - torch.compile (TorchDynamo): its modes, conversions and ops are
      recorded as any; at a compile's end 2.14 empties the describer
      tables (`m.clear_weakrefs()`, compile2.hook_clear), and at the
      program's end what a compile still keeps is said where it is: its
      graphs in the program's globals, the ShapeEnv kept by ShapeEnv's
      lru_caches (compile2.unwrap_root, compile2.holds).
Counters: memo_tensor_ids, memo_storage_ids, memo_fake (= memo_meta),
memo_storage, hits, misses, memo_constants (designs.md, pytorch-2.3).

PyTorch 2.0 to 2.2 (designs.md "pytorch-2.0"; not run here: followed from
their source, torch/_subclasses/fake_tensor.py of the 2.0-2.1 line at
DeepLink-org/pytorch 6ec618622954458bf1afe3bb3ef79f94f99f0cd9 and
meta_utils.py at pytorch/pytorch 003dca52773ade8fdcb6e05f932b8f7212354201
(2.1-2.2)), where they differ from 2.3:
  - no MetaTensorDescriber: the MetaConverter's `tensor_memo` is keyed by
      `WeakIdRef` of the real tensor with weak fake values, its
      `storage_memo` by `StorageWeakRef`, and its finalizers feed the
      pending list `maybe_storages_to_delete`, swept every
      `check_expired_frequency` conversions (meta_utils.py@003dca52:
      130-134,169-198), so the counters are read from those (memo_tensor_ids
      and memo_storage_ids read the one memo each, as the design says) and
      pending and sweep_every are written too;
  - `FakeTensorConverter.__call__` still exists but only calls
      `from_real_tensor` (fake_tensor.py@6ec61862, `__call__`), so the one
      hook on from_real_tensor sees every conversion once;
  - `from_real_tensor(..., memoized_only=True)` is a memo lookup that
      converts nothing (None on a miss, fake_tensor.py@6ec61862,
      `from_real_tensor`): passed through, not recorded;
  - `from_meta_and_device` memoizes an op output under its meta tensor with
      a finalizer that pops the entry when that meta tensor dies
      (fake_tensor.py@6ec61862, `set_tensor_memo`), which it does when the
      op returns: an output is then no memo entry, and is written as a
      constructor under `with m`, as 1.13's are;
  - there is no dispatch cache (FakeTensorMode.cache_hits is absent).
What the recorder cannot tell from these (it has never run on them) is
said in the header, and such a recording is replayed under pytorch-2.0.
"""

import warnings
import weakref

from . import compile2, torch113
from .engine import Line, Obj, locked, meta_hook
from .holders import locate, pytorch_roots
from .scn import tup

COUNTERS2 = ("memo_tensor_ids", "memo_storage_ids", "memo_fake", "memo_storage",
             "hits", "misses", "memo_constants")


COUNTERS20 = COUNTERS2 + ("pending", "sweep_every")


def line_of(version):
    """(major, minor) of a torch version string; (2, 3) when unreadable."""
    try:
        major, minor = (int(x) for x in version.split("+")[0].split(".")[:2])
    except ValueError:
        major, minor = 2, 3
    return major, minor


def design_line(version):
    """The design a recording of this torch replays on: pytorch-2.14 from
    2.14 (its 2.4-2.14 lifecycle rows, checked on 2.14.1), pytorch-2.0
    before 2.3 (read from source), else pytorch-2.3."""
    line = line_of(version)
    if line >= (2, 14):
        return ('config compat = "pytorch-2.14"   # PyTorch 2.14: 2.3\'s weak-valued memos keyed '
                'by describer ids, and what 2.4-2.14 changed around them')
    if line < (2, 3):
        return ('config compat = "pytorch-2.0"   # PyTorch 2.0-2.2: a weak-valued memo keyed by '
                'the real tensor, finalizers, a pending list and its periodic sweep')
    return Recorder.CONFIG[0]


def read_mc(mc, consts):
    """The counters of a MetaConverter (consts: its converter's constant
    map's refs, or None for a stand-alone one): 2.3's tables through its
    describer, 2.0-2.2's memos without one (module docstring)."""
    d = getattr(mc, "describer", None)
    if d is not None:
        v = {"memo_tensor_ids": len(d.lookup_tensor), "memo_storage_ids": len(d.lookup_storage)}
    else:
        v = {"memo_tensor_ids": len(mc.tensor_memo), "memo_storage_ids": len(mc.storage_memo),
             "pending": len(mc.maybe_storages_to_delete),
             "sweep_every": mc.check_expired_frequency}
    v.update(memo_fake=len(mc.tensor_memo), memo_storage=len(mc.storage_memo),
             hits=mc.hit, misses=mc.miss)
    if consts is not None:
        v["memo_constants"] = consts
    return v


class Symbols:
    """The model's backed symbols of one ShapeEnv (fk_shape.c): a dynamic
    conversion gives each size of 2 or more the symbol of that size, made
    in order when none has it; and PyTorch's names for them."""

    def __init__(self):
        self.hints = []
        self.names = {}          # PyTorch's symbol name -> the model's index

    def convert(self, out):
        """A dynamic conversion's fake (not a memo hit): its base's sizes
        first (the model converts a view's base first), then its own."""
        base = getattr(out, "_base", None)
        for x in ([base] if base is not None else []) + [out]:
            for d in x.shape:
                h = self.hint(d)
                if h is None or h < 2:
                    continue
                if h not in self.hints:
                    self.hints.append(h)
                expr = getattr(getattr(d, "node", None), "expr", None)
                if expr is not None and getattr(expr, "is_Symbol", False):
                    self.names[str(expr)] = self.hints.index(h)

    @staticmethod
    def hint(d):
        if isinstance(d, int):
            return d
        h = getattr(getattr(d, "node", None), "hint", None)
        return int(h) if h is not None else None

    def text(self, expr):
        """The language's size expression for a sympy expression, or None
        when it has a form or a symbol the language cannot say."""
        if expr.is_Integer:
            return str(int(expr))
        if expr.is_Symbol:
            i = self.names.get(str(expr))
            return None if i is None else "s%d" % i
        name = type(expr).__name__
        args = [self.text(a) for a in expr.args]
        if any(a is None for a in args):
            return None
        if name == "Mul":
            return "*".join("(%s)" % a if " " in a else a for a in args)
        if name == "Add":
            out = args[0]
            for a in args[1:]:
                out += " - " + a[1:] if a.startswith("-") and " " not in a else " + " + a
            return out
        if name == "FloorDiv" and len(args) == 2:
            return "(%s) // (%s)" % tuple(args)
        return None


class CacheMirror:
    """The process-wide dispatch cache's counters (FakeTensorMode's
    cache_hits, cache_misses, cache_bypasses, len(cache); 2.3 and later),
    mirrored on the model's `fake_cache()` and compared there.

    The program's op is not in the language: its output is written as a
    stand-in, `op_out(empty(SIZES)).add(K)` under `with MODE`, whose model cache
    key is the stand-in key K the recorder gives each distinct key of the
    program's ops (its own: the op and its arguments' metadata). A PyTorch
    miss (the op ran, its output memoized, one entry stored) is then a
    model miss storing one entry, and a PyTorch hit (no memo entry) a model
    hit on that K. So size, misses and hits check the model's cache
    mechanics on the program's sequence of keys (store on a miss, serve a
    hit without a memo entry, one entry per key), not its key function on
    the real op. Counted from the recording's start. Any other traffic (a
    bypass, an op with several outputs, traffic outside the program's ops,
    a hit the recorder saw no miss for, a shape-env cache) stops the
    comparison there, said in the header per counter; the stand-ins are
    then the unkeyed ones (a clone after `fake_cache().clear()`)."""

    NAMES = ("hits", "misses", "bypasses", "size")

    def __init__(self, fm):
        self.fm = fm
        self.base = self.seen = self.now()
        self.keys = {}           # the recorder's key of an op -> its stand-in key
        self.off = None          # why the counters stopped being compared
        self.op = None           # (func, args, kwargs) of the program's op in progress
        self.shown = {}          # counter -> the value last expected

    def now(self):
        fm = self.fm
        return (fm.cache_hits, fm.cache_misses, sum(fm.cache_bypasses.values()), len(fm.cache))

    def counts(self):
        """The counters since the recording's start, by name."""
        return dict(zip(self.NAMES, (c - b for c, b in zip(self.seen, self.base))))

    def begin(self, func, args, kwargs):
        """A program's op starts: nothing may have touched the cache since."""
        if self.off is None and self.now() != self.seen:
            self.stop("cache traffic outside the program's ops (%s before it)"
                      % self.delta_text(self.now()))
        self.op = (func, args, kwargs)

    def delta_text(self, cur):
        return ", ".join("%s %+d" % (n, c - s) for n, c, s in zip(self.NAMES, cur, self.seen)
                         if c != s)

    def stop(self, why):
        if self.off is None:
            self.off = why

    @staticmethod
    def op_key(func, args, kwargs, torch):
        """The recorder's key of an op: the op and each argument, a tensor
        by its metadata (dtype, sizes, strides, offset, device, layout,
        requires_grad), anything else by its repr."""
        from torch.utils._pytree import tree_flatten
        out = [str(func)]
        for a in tree_flatten((args, kwargs))[0]:
            if isinstance(a, torch.Tensor):
                out.append(("T", str(a.dtype), tuple(a.shape), str(a.layout), str(a.device),
                            a.requires_grad) + ((tuple(a.stride()), a.storage_offset())
                                                if a.layout == torch.strided else ()))
            else:
                out.append((type(a).__name__, repr(a)))
        return repr(out)

    def op_ran(self, fresh, memoized, torch):
        """The program's op returned with fresh (its new fakes' count) of
        which memoized are memo entries: the stand-in key of its output,
        or None (no stand-in key: the comparison stopped, or the op had no
        cache traffic and its outputs are constructors)."""
        cur, op, self.op = self.now(), self.op, None
        d, what = tuple(c - s for c, s in zip(cur, self.seen)), self.delta_text(cur)
        self.seen = cur
        if self.off is not None or op is None:
            return None
        if d == (0, 0, 0, 0) and not memoized:
            return None
        name = op[0]
        if fresh != 1 or d not in ((0, 1, 0, 1), (1, 0, 0, 0)) or memoized != d[1]:
            return self.stop("%s: %s with %d new output(s), %d memoized" % (
                name, what or "no cache traffic", fresh, memoized))
        key = self.op_key(*op, torch)
        if d[0] and key not in self.keys:
            return self.stop("%s: a hit on a key the recording saw no miss for" % name)
        if d[1] and key in self.keys:
            return self.stop("%s: a miss on a key the recorder already stored (its key "
                             "is coarser than PyTorch's)" % name)
        return self.keys.setdefault(key, len(self.keys) + 1)

    def expect_lines(self, names):
        """`expect fake_cache().C == N` for those counters that changed."""
        out = []
        for n, v in self.counts().items():
            if n in names and self.shown.get(n, 0) != v:
                self.shown[n] = v
                out.append("expect fake_cache().%s == %d" % (n, v))
        return out

    def notes(self):
        """What the header says of each counter."""
        c = self.counts()
        if self.off is None:
            return ["the dispatch cache's counters are compared (`expect fake_cache()...`): "
                    "size and misses after each op that stored an entry, hits at the end "
                    "(%s since the recording's start); the program's ops are stand-ins keyed "
                    "one to one with its cache keys (%d keys), so these check the model's "
                    "cache mechanics, not its key function; bypasses: none happened"
                    % (", ".join("%s %d" % kv for kv in c.items()), len(self.keys))]
        return ["the dispatch cache's counters are compared up to where the recording could "
                "no longer mirror PyTorch's cache traffic on stand-ins (%s); after that, hits, "
                "misses and size are not compared (the stand-ins are a clone after "
                "`fake_cache().clear()`, whose traffic is not the program's); bypasses are "
                "never compared (a bypass stops the comparison)" % self.off]


class Recorder(torch113.Recorder):
    counters = COUNTERS2
    SNAPSHOTS = True
    KEPT = "PyTorch %s"
    HIT_NOTE = "  memo hit: the fake is still alive (a weak-valued memo)"
    INTRO = (
        "# Replay: fakegc run THIS.scn (its config compat names the design). The",
        "# expectations are the counters PyTorch showed (fidelity: a mismatch means",
        "# the model is wrong); verdict() at the end is the model's own judgement of",
        "# what the program left behind. at(FILE, LINE) names the program's line of",
        "# what follows; hold(X, PATH) says where the program still holds X at its end.",
        "# Real tensors are written where the program first converts them; an op",
        "# output is `op_out(empty(SIZES)).add(K)` under `with MODE` (op_out: its",
        "# geometry, no memo entry), K one per cache key of the program's ops: the op",
        "# PyTorch ran (a cache miss: its output memoized under a fresh id) is a miss",
        "# of the model's dispatch cache too, one PyTorch served from the cache (no",
        "# entry) a hit. Where the cache's traffic cannot be mirrored so (said below),",
        "# a memoized output is `op_out(empty(SIZES)).clone()` after",
        "# `fake_cache().clear()`, one served from the cache `op_out(empty(SIZES))`",
        "# under `with MODE`. Deaths are `del` lines, in the order CPython ran the",
        "# finalizers.",
    )
    CONFIG = ['config compat = "pytorch-2.3"   # PyTorch 2.3 and later: weak-valued memos '
              'keyed by describer ids, no sweep',
              'config end_check = "off"    # the verdict() at the program\'s end judges '
              'what it left behind']

    def __init__(self, *a, **k):
        torch113.Recorder.__init__(self, *a, **k)
        self.KEPT = "PyTorch %s" % self.torch.__version__.split("+")[0]
        self.CONFIG = [design_line(self.torch.__version__)] + self.CONFIG[1:]
        if line_of(self.torch.__version__) < (2, 3):
            self.counters = COUNTERS20
            self.note("PyTorch %s is recorded as its source reads (fake_tensor.py@6ec61862, "
                      "meta_utils.py@003dca52): the recorder has never run on 2.0-2.2"
                      % self.torch.__version__.split("+")[0])
        self.kw_next = ""        # constant=true of the conversion in progress
        self.ses = {}            # id(ShapeEnv) -> Obj
        self.syms = {}           # id(ShapeEnv) -> Symbols
        self.cache = None        # CacheMirror, where PyTorch has a dispatch cache

    def storage_of(self, t):
        with warnings.catch_warnings():     # TypedStorage is deprecated (2.x warns once)
            warnings.simplefilter("ignore")
            return t.storage()

    # ------------------------------------------------------------ counters

    def read(self, kind, x):
        if kind in ("mode", "fconv"):
            fc = x.fake_tensor_converter if kind == "mode" else x
            consts = sum(len(v) for v in getattr(fc, "constant_storage_mapping", {}).values())
            return read_mc(fc.meta_converter, consts)
        return read_mc(x, None)

    # -------------------------------------------------------------- events

    def on_mode(self, mode):
        compile2.hook_clear(self)
        se = getattr(mode, "shape_env", None)
        if se is None:
            return torch113.Recorder.on_mode(self, mode)
        if not self.tick():
            return
        self.flush()
        self.close_with()
        site = self.site()
        self.mark(site)
        so = self.ses.get(id(se))
        if so is None or so.oid not in self.objs:
            so = Obj("se", id(se))
            self.bind(so, "se", site, se)
            self.ses[id(se)] = so
            self.emit("%s = shape_env()" % so.name, site)
        o = Obj("mode", id(mode))
        name = self.bind(o, "m", site, mode)
        self.modes[id(mode)] = (o, weakref.ref(mode))
        self.last[name] = {}
        self.stats["modes"] += 1
        self.emit("%s = fake_mode(shape_env=%s)" % (name, so.name), site)

    def convert_pre(self, conv, mode, t, device):
        pre = torch113.Recorder.convert_pre(self, conv, mode, t, device)
        if pre is None or not self.kw_next:
            return pre
        call, cid, site = pre
        return call[:-1] + self.kw_next + ")", cid, site

    def convert_post(self, t, out, call, cid, site):
        if any(not isinstance(s, int) for s in getattr(out, "shape", ())) and \
                "constant=true" not in call:
            call = call[:-1] + ", dynamic=true)"
            known = self.objs.get(id(out))
            se = getattr(getattr(out, "fake_mode", None), "shape_env", None)
            if se is not None and (known is None or known.kind != "fake"):
                self.syms.setdefault(id(se), Symbols()).convert(out)
        torch113.Recorder.convert_post(self, t, out, call, cid, site)
        self.track_end(out)

    def on_clear_weakrefs(self, mode):
        """TorchDynamo emptied a recorded mode's describer tables at a
        compile's end (compile2.hook_clear): `m.clear_weakrefs()`, and the
        counters."""
        mo = self.mode_rec(mode)
        if mo is None or not self.tick():
            return
        self.flush()
        self.close_with()
        site = self.site()
        self.mark(site)
        self.emit("%s.clear_weakrefs()" % mo.name, site + "  the compile's end: Dynamo "
                  "clears the describer tables")
        self.expects()

    def track_end(self, x):
        """Threads: a weak ref to a recorded fake's C++ tensor, which PyTorch
        frees after the Python callbacks of the fake's death (with its meta
        storage and that storage's memo entry): engine.deaths_end awaits it.
        Not for a constant fake: its death frees a real tensor, whose own
        callbacks read counters in the dying thread, before its C++ tensor
        can go."""
        o = self.objs.get(id(x))
        if self.threads and o is not None and o.kind in ("fake", "op") and o.tref is None \
                and getattr(x, "constant", None) is None:
            o.tref = self.torch._C._WeakTensorRef(x)

    def memo_dead(self):
        """Threads: whether a recorded MetaConverter's tensor or storage memo
        (WeakValueDictionary) holds a ref whose value died and whose callback
        has not popped it yet: a death another thread has not ended."""
        for table, kind in ((self.modes, "mode"), (self.mcs, "mc"), (self.fcs, "fconv")):
            for _o, ref in list(table.values()):
                x = ref()
                if kind != "mc":
                    x = getattr(x if kind == "fconv" else
                                getattr(x, "fake_tensor_converter", None), "meta_converter", None)
                for memo in (getattr(x, "tensor_memo", None), getattr(x, "storage_memo", None)):
                    data = getattr(memo, "data", None)
                    if data is not None and any(r() is None for r in list(data.values())):
                        return True
        return False

    def on_real(self, orig, conv, mode, t, make_constant, shape_env, k):
        self.kw_next = ", constant=true" if make_constant else ""
        try:
            return self.on_convert(orig, conv, mode, t, None, (make_constant, shape_env), k)
        finally:
            self.kw_next = ""

    def size_list(self, x, site, exprs=True):
        """x's sizes as the language's words: integers, size expressions of
        the model's symbols (exprs), else hints (noted); None when one has
        no hint (unbacked)."""
        se = getattr(getattr(x, "fake_mode", None), "shape_env", None)
        syms = self.syms.get(id(se)) if se is not None else None
        out = []
        for s in x.shape:
            if isinstance(s, int):
                out.append(str(s))
                continue
            hint = Symbols.hint(s)
            if hint is None:
                return None
            text = syms.text(s.node.expr) if exprs and syms is not None else None
            if text is None:
                self.note("%s: %s is written as its hint %d (%s)" % (
                    site, s.node.expr, hint, "a memoized output's stand-in" if not exprs
                    else "a form or symbol the language cannot say"))
                text = str(hint)
            out.append(text)
        return out

    def op_output(self, x):
        mo = self.mode_rec(x.fake_mode)
        if mo is None or not self.tick():
            return
        # the op has run: PyTorch's counters already hold its output, so the
        # deaths written here (another thread's, during the op) get theirs
        # read after the output's stand-in, as the model will have both
        self.reads_held = True
        try:
            self.flush()
        finally:
            self.reads_held = False
        site = self.site()
        mode = x.fake_mode
        memo = mode.fake_tensor_converter.meta_converter.tensor_memo
        memoized = any(v is x for v in list(memo.values()))
        sizes = self.size_list(x, site, exprs=not memoized)
        if sizes is None:
            self.note("%s: an op output with unbacked symbolic sizes is not written "
                      "(no hint to stand for it)" % site)
            return
        if memoized and self.counters is COUNTERS20:
            return self.inexpressible(site, "an op output that PyTorch %s still memoizes after "
                                      "the op (its meta tensor lives on) has no stand-in under "
                                      "pytorch-2.0" % self.torch.__version__.split("+")[0])
        o = Obj("op", id(x))
        kw = []
        if x.dtype != self.torch.float32:
            kw.append("dtype=" + self.dtype(x))
        dev = str(x.fake_device)
        strided = x.layout == self.torch.strided and not x.is_contiguous() and \
            all(isinstance(s, int) for s in x.stride())
        if x.layout != self.torch.strided:
            self.note("%s: a fake op output of layout %s is written as a strided one"
                      % (site, x.layout))
        if strided:
            ctor, args = "empty_strided", ["(%s%s)" % (", ".join(sizes), "," if len(sizes) == 1
                                                      else ""), tup(x.stride())] + kw
        else:
            ctor, args = "empty", sizes + kw
        if self.open_with != mo.name:
            self.close_with()
            self.lines.append(Line("open", "with %s" % mo.name))
            self.open_with = mo.name
        self.mark(site)
        name = self.bind(o, "x", site, x)
        self.track_end(x)
        if dev != "cpu":
            args.append('device="%s"' % dev)
        k = self.cache_k
        own = self.own_ctor(x, memoized)
        if own is not None:
            self.emit("%s = %s(%s)" % (name, own, ", ".join(args)), site + (
                "  the program's constructor%s" % (" (memoized)" if memoized else "")))
            self.memoized_out = self.memoized_out or memoized
        elif k is not None and x.dtype != self.torch.bool:
            # keyed by the program's op (CacheMirror): a miss memoizes, a hit not
            self.emit("%s = op_out(%s(%s)).add(%d)" % (name, ctor, ", ".join(args), k), site + (
                "  op output (memoized)" if memoized else "  op output (a cache hit)"))
            self.memoized_out = self.memoized_out or memoized
        elif memoized:
            # an op on a fake under the mode memoizes its output under a
            # fresh id; the cache is cleared first so that the model runs
            # the op (as PyTorch did) rather than serve it from its cache
            self.emit("fake_cache().clear()", "the model's dispatch cache: the stand-in "
                      "below is not the program's op")
            self.emit("%s = op_out(%s(%s)).clone()" % (name, ctor, ", ".join(args)),
                      site + "  op output (memoized)")
            self.memoized_out = True
        elif self.snap_src is not None and self.snap_src[1] == x.dtype and \
                all(isinstance(s, int) for s in tuple(x.shape) + tuple(x.stride())):
            # a graph's snapshot over the recorded fake's meta storage (make_fx.py)
            kw = args[len(sizes):] if ctor == "empty" else args[2:]    # dtype, device
            self.emit("%s = op_out(empty(%s)).set_(%s.storage(), %d, %s, %s)" % (
                name, ", ".join(["0"] + kw), self.snap_src[0].name, x.storage_offset(),
                tup(x.shape), tup(x.stride())), site + "  a snapshot, sharing its storage")
        else:
            self.emit("%s = op_out(%s(%s))" % (name, ctor, ", ".join(args)), site)
        self.stats["op_outputs"] += 1

    def held_inside(self, rest):
        """What PyTorch's class-level state holds of the fakes no root of the
        program reaches (holders.pytorch_roots): held from there to the
        end, as the real run keeps them. 2.6 and 2.14: after aot_function,
        PhiloxStateTracker keeps the seed and offset constants of the last
        trace (three PhiloxStates, two fakes each) and so their mode."""
        rest = {k: o for k, o in rest.items() if o.kind in ("fake", "op")}
        return locate(rest, pytorch_roots(), self) if rest else {}

    def finish(self, roots=(), *a, **k):
        self.safe(self.cache_note)
        if self.cache is not None and self.cache.off is None and not self.stopped:
            self.safe(self.cache_end)
        if not self.stopped:   # what a compile leaves in ShapeEnv's lru_caches (compile2)
            roots = [compile2.unwrap_root(r) for r in roots]
            extra = []
            self.safe(lambda: extra.extend(compile2.holds(self.objs, roots, self)))
            roots += extra
        return torch113.Recorder.finish(self, roots, *a, **k)

    def cache_end(self):
        """The hits, once, where the program's ops are over."""
        self.flush()
        self.close_with()
        self.cache.begin(None, (), {})      # traffic since the last op stops it
        self.cache.op = None
        self.cache_expects(("hits", "size", "misses") if self.cache.off is None else ("hits",))

    def cache_note(self):
        """The class-level dispatch cache (2.3 and later): its counters at
        the program's end, and what of them is compared (CacheMirror), said
        in the header."""
        if self.cache is None:
            return
        info = self.cache.fm.cache_info()
        why = ", ".join("%s %d" % kv for kv in sorted(info.bypasses.items()))
        self.note("the dispatch cache's counters (FakeTensorMode.cache_info() at the program's "
                  "end: hits %d, misses %d, bypasses %d%s, size %d)" % (
                      info.hits, info.misses, sum(info.bypasses.values()),
                      " (%s)" % why if why else "", info.size))
        for text in self.cache.notes():
            self.note(text)

    def inexpressible(self, site, what):
        """What the language cannot say of this PyTorch: said in the
        header, and recording stops there, so the verdict is NOT JUDGED."""
        self.note("%s: %s; recording stopped here" % (site, what))
        self.stopped = True
        self.stop_site = site
        self.stop_why = "not expressible: " + what

    def on_dispatch(self, orig, mode, func, types, args, kwargs):
        """The counters of the deaths before the op are read before it runs
        (it memoizes its outputs as it goes)."""
        if self.disp_depth == 0 and self.conv_depth == 0 and not self.stopped:
            if self.need:
                self.safe(self.settle)
            if self.cache is not None:
                self.safe(self.cache.begin, func, args, kwargs)
            self.disp_op = func
            try:
                return torch113.Recorder.on_dispatch(self, orig, mode, func, types, args, kwargs)
            finally:
                self.disp_op = None
        return torch113.Recorder.on_dispatch(self, orig, mode, func, types, args, kwargs)

    disp_op = None           # the program's op being dispatched (depth 0)
    CTORS = {"aten.empty.memory_format": "empty", "aten.zeros.default": "zeros",
             "aten.ones.default": "ones", "aten.rand.default": "rand"}

    def own_ctor(self, x, memoized):
        """The language's constructor for x, the output of the program's own
        constructor under a mode (torch.empty, zeros, ones, rand), when the
        design does with it what PyTorch did: 2.14 memoizes a constructor's
        fake (from_meta_and_device; fk_design.c ctor_outputs_memoized),
        2.3-2.13 do not (FakeTensor(fake_mode, r, out_device)). Else None:
        a 2.14 constructor served from the dispatch cache has no entry, and
        is an op_out() stand-in as other outputs are."""
        ctor = self.CTORS.get(str(self.disp_op)) if self.disp_op is not None else None
        if ctor is None or x.layout != self.torch.strided or not x.is_contiguous() or \
                any(not isinstance(d, int) for d in x.shape):
            return None
        return ctor if memoized == (line_of(self.torch.__version__) >= (2, 14)) else None

    def outputs(self, out):
        """The op's outputs, then the counters once (they hold every
        output's memo entry), the dispatch cache's with them."""
        self.memoized_out = False
        self.cache_k = self.cache_key_of(out) if self.cache is not None else None
        try:
            torch113.Recorder.outputs(self, out)
        finally:
            self.cache_k = None
        if self.memoized_out:
            self.expects()
            if self.cache is not None and self.cache.off is None:
                self.cache_expects(("size", "misses"))

    cache_k = None

    def cache_key_of(self, out):
        """The stand-in key of this op's output (CacheMirror.op_ran); where
        the comparison stops here, the hits so far are expected first."""
        from torch._subclasses.fake_tensor import FakeTensor
        from torch.utils._pytree import tree_flatten
        new = [x for x in tree_flatten(out)[0] if isinstance(x, FakeTensor) and
               id(x) not in self.objs and (id(x.fake_mode) in self.modes or
                                           getattr(self, "frozen", False))]
        memo = sum(1 for x in new if any(
            v is x for v in list(x.fake_mode.fake_tensor_converter.meta_converter
                                 .tensor_memo.values())))
        was_on = self.cache.off is None
        k = self.cache.op_ran(len(new), memo, self.torch)
        if k is not None and self.own_ctor(new[0], memo == 1):
            self.cache.stop("%s: the program's constructor is written as itself, which the "
                            "model's dispatch cache does not see" % self.disp_op)
            k = None
        if k is not None and new[0].dtype == self.torch.bool:
            self.cache.stop("a bool output (its stand-in's add would promote it)")
            k = None
        if was_on and self.cache.off is not None:
            self.cache_expects(("hits",))
        return k

    def cache_expects(self, names):
        for text in self.cache.expect_lines(names):
            self.lines.append(self.shared.get("expect", text))

    def install(self):
        from torch._subclasses import fake_tensor as ft, meta_utils as mu
        rec = self
        FM, FC, MC = ft.FakeTensorMode, ft.FakeTensorConverter, mu.MetaConverter
        m_init, c_init, frt = FM.__init__, FC.__init__, FC.from_real_tensor
        mc_init, mc_call, disp = MC.__init__, MC.__call__, FM.__torch_dispatch__

        def real_call(conv, mode, t, device, make_constant=False, shape_env=None, **k):
            return frt(conv, mode, t, make_constant, shape_env, **k)

        mode_init = rec.outermost_init(m_init, rec.on_mode)
        conv_init = rec.outermost_init(c_init, rec.on_fc)   # safe: nothing once stopped

        def from_real(self, fake_mode, t, make_constant=False, shape_env=None, **k):
            if k.get("memoized_only"):   # 2.0-2.2: a lookup, no conversion
                return frt(self, fake_mode, t, make_constant, shape_env, **k)
            return rec.on_real(real_call, self, fake_mode, t, make_constant, shape_env, k)

        def meta_init(self, *a, **k):
            mc_init(self, *a, **k)
            if rec.init_depth == 0:
                rec.safe(rec.on_mc, self)

        def dispatch(self, func, types, args=(), kwargs=None):
            return rec.on_dispatch(disp, self, func, types, args,
                                   {} if kwargs is None else kwargs)

        mode_init, conv_init = locked(rec, mode_init), locked(rec, conv_init)
        from_real = locked(rec, from_real)
        meta_init, meta_call = locked(rec, meta_init), meta_hook(rec, mc_call)
        dispatch = locked(rec, dispatch)
        self.cache = CacheMirror(FM) if hasattr(FM, "cache_hits") else None
        self.saved = [(c, n, c.__dict__.get(n)) for c, n in (
            (FM, "__init__"), (FC, "__init__"), (FC, "from_real_tensor"), (MC, "__init__"),
            (MC, "__call__"), (FM, "__torch_dispatch__"))]
        FM.__init__, FC.__init__, FC.from_real_tensor = mode_init, conv_init, from_real
        MC.__init__, MC.__call__, FM.__torch_dispatch__ = meta_init, meta_call, dispatch
        self.install_graphs(locked)
