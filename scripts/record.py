#!/usr/bin/python3
"""record.py - record a real PyTorch 1.13 program's fake-tensor lifecycle as
a fakegc scenario (cli.md "Additions, version 2 / Recording real programs").

    scripts/record.py [-o OUT.scn] [--max-events N] [--no-batch] [--compare]
                      [--fakegc PATH] [--no-hooks] [--lang 1|2] PROGRAM.py [ARGS...]

It runs PROGRAM under Debian's torch 1.13.1 (/usr/bin/python3) and writes,
in order: every FakeTensorMode made (`m1 = fake_mode()`), every stand-alone
MetaConverter (`c1 = meta_converter()`), the real tensors the program
converts (written when first converted: sizes, strides, dtype, device,
requires_grad, their grad, views as `as_strided` off the recorded base,
storage sharing as `detach()`, sparse COO/CSR and quantized layouts), every
conversion (`f1 = m1.fake(t1)`, `r1 = c1.meta(t1)`, or
`expect raises(UnsupportedFakeTensor, ...)`), the fake tensors that
operations produce (as a constructor of the same shape under `with m1`:
op outputs are not memoized, so that is a faithful stand-in for the mode's
lifetime), and every death, in order (`del t1, f1`). After each conversion
and each death it writes `expect` lines for the memo counters PyTorch shows
that changed; at the end, `live()` expectations for modes, converters,
fakes and finalizers. `fakegc run --compat pytorch-1.13 OUT.scn` must pass on it.

How it observes PyTorch (torch is patched at these entry points only, for
the program's run; each wrapper calls the original and only reads state):
  - FakeTensorMode.__init__        -> a mode is made
  - FakeTensorConverter.__init__   -> a converter outside a mode (noted)
  - FakeTensorConverter.__call__   -> every fake conversion (from_tensor,
                                      converter calls, lift_fresh constants)
  - MetaConverter.__init__/__call__ -> stand-alone meta conversions
  - FakeTensorMode.__torch_dispatch__ -> fake outputs of top-level ops
Deaths: weakref.finalize on every recorded object (CPython runs it when the
refcount reaches 0, so the order is exact); deaths are written at the next
event, as one `del` line, followed by the counters. The cycle collector is
disabled inside the conversion wrapper, and a death CPython still runs
inside a conversion or an op (an explicit gc.collect(), a refcount drop) is
written after that event's own lines, never among them; the collector runs
as usual elsewhere. tests/record/ checks each hook.

Exit: the program's exit status (0 when it ends normally); 2 usage;
3 the recorder itself failed (the scenario is written up to there, its
header says where); 77 torch not importable.
"""

import argparse
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import weakref

DTYPES = {}          # torch dtype -> scenario dtype name (filled after import)
COUNTERS = ("memo_fake", "memo_meta", "memo_storage", "pending", "hits",
            "misses", "sweep_every")
MC_COUNTERS = COUNTERS[1:]


def _dtypes(torch):
    return {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32",
            torch.float64: "f64", torch.complex64: "c64", torch.complex128: "c128",
            torch.int8: "i8", torch.uint8: "u8", torch.int32: "i32",
            torch.int64: "i64", torch.bool: "bool"}


def tup(xs):
    xs = [int(x) for x in xs]
    return "(" + ", ".join(map(str, xs)) + ("," if len(xs) == 1 else "") + ")"


class Obj:
    """One recorded object. kind: real fake op meta mode conv keeper grad."""
    __slots__ = ("name", "kind", "key", "oid", "owner", "stor", "sref",
                 "geom", "mode", "pre")

    def __init__(self, kind, oid):
        self.kind, self.oid = kind, oid
        self.name = self.key = self.owner = self.stor = self.sref = None
        self.geom = self.mode = self.pre = None


class Line:
    __slots__ = ("kind", "text", "site", "pre", "at")   # kind: stmt expect open close

    def __init__(self, kind, text, site=""):
        self.kind, self.text, self.site, self.pre = kind, text, site, []
        self.at = None      # at() with rounds: (file, line, rounds, round)


COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")
# A loop of rounds (steps): `while`, or `for` over range()/count()/
# enumerate(range()). A loop over a collection (parameters, shapes) is not:
# what it keeps is bounded by the collection, so the round is the one of a
# loop around it.
import re
ROUND_LOOP = re.compile(r"\s*(while\b|(async\s+)?for\b.*\bin\s+(enumerate\()?\s*"
                        r"(range|itertools\.count|count|trange|tqdm\(\s*range)\s*\()")


class Rounds:
    """Rounds of the program's loops: every line the program's own code runs
    is counted (sys.settrace, local tracing in the program's frames only),
    and the round of an event is the count of the header of the innermost
    loop of rounds (ROUND_LOOP) around it, in its frame or an outer one of
    the program's (a comprehension belongs to its line). No such loop: one
    round."""

    def __init__(self, rec):
        self.rec = rec
        self.counts = {}      # (code, line) -> times run
        self.loops = {}       # code -> [(start offset, end offset, header line)]
        self.prog = {}        # code -> is the program's

    def is_prog(self, code):
        r = self.prog.get(code)
        if r is None:
            fn = os.path.abspath(code.co_filename)
            r = fn.startswith(self.rec.pdir + os.sep) and fn != self.rec.me
            self.prog[code] = r
        return r

    def start(self):
        sys.settrace(self.gtrace)

    def stop(self):
        sys.settrace(None)

    def gtrace(self, frame, event, arg):
        if self.is_prog(frame.f_code):
            return self.ltrace
        return None

    def ltrace(self, frame, event, arg):
        if event == "line":
            k = (frame.f_code, frame.f_lineno)
            self.counts[k] = self.counts.get(k, 0) + 1
        return self.ltrace

    def loops_of(self, code):
        ls = self.loops.get(code)
        if ls is None:
            import dis
            ls, line_at, cur = [], {}, None
            ins = list(dis.get_instructions(code))
            for i in ins:
                if i.starts_line is not None:
                    cur = i.starts_line
                line_at[i.offset] = cur
            import linecache
            for i in ins:
                if i.opname.startswith("JUMP_BACKWARD") and isinstance(i.argval, int):
                    line = line_at.get(i.argval)
                    text = linecache.getline(code.co_filename, line or 0)
                    if ROUND_LOOP.match(text):
                        ls.append((i.argval, i.offset, line))
            self.loops[code] = ls
        return ls

    def round_of(self, frame):
        f = frame
        while f is not None:
            code = f.f_code
            if self.is_prog(code) and code.co_name not in COMPREHENSIONS:
                best = None
                for a, b, line in self.loops_of(code):
                    if a <= f.f_lasti <= b and line is not None and \
                            (best is None or b - a < best[1] - best[0]):
                        best = (a, b, line)
                if best is not None:
                    key = (code, best[2])
                    return key, self.counts.get(key, 0)
            f = f.f_back
        return None, 0


class no_cycles:
    """The cycle collector off for the recorder's own work on one event
    (nested uses keep it off; it comes back as it was)."""

    def __enter__(self):
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            gc.enable()
        return False


class Event:
    """One recorded event in progress (a conversion, an op): a death that
    CPython runs inside it (the cycle collector may run at any allocation,
    and explicit gc.collect() calls are not stopped by gc.disable()) is
    kept aside and written after the event's own lines (Recorder.undefer),
    never among them, where its counter reads would see the conversion
    half done. Nested events keep deferring to the outermost."""

    def __init__(self, rec):
        self.rec = rec

    def __enter__(self):
        r = self.rec
        r.scope += 1
        if r.deferred is None:
            r.deferred = []

    def __exit__(self, *exc):
        r = self.rec
        if r.scope == 1:
            r.safe(r.undefer)
            r.deferred = None
        r.scope -= 1
        return False


class Recorder:
    def __init__(self, torch, program, max_events=0, lang=1):
        self.torch = torch
        self.program = os.path.abspath(program)
        self.pdir = os.path.dirname(self.program)
        self.tdir = os.path.dirname(torch.__file__) + os.sep
        self.me = os.path.abspath(__file__)
        self.max_events = max_events
        self.lang = lang          # 2: also write the language's version 2 forms
        self.events = 0
        self.stopped = False
        self.internal = False     # the recorder itself failed (exit 3)
        self.refused = False      # the program did what cannot be recorded (threads)
        # tests: make the recorder fail at event N, to prove the failure path
        self.fault = int(os.environ.get("FAKEGC_RECORD_FAULT", "0") or 0)
        self.stop_site = None
        self.lines = []
        self.notes = []           # header lines: what could not be expressed
        self.notes_seen = set()
        self.objs = {}            # id(obj) -> Obj while PyTorch's object lives
        self.need = False         # a death's counters are still to be read
        self.deferred = None      # deaths seen inside the current event, or None
        self.scope = 0            # depth of events (conversion, op) in progress
        self.keep_checks = []     # (Obj, its del Line): storage still held?
        self.free = {}            # (prefix, site) -> [free names]
        self.count = {}           # prefix -> last number
        self.modes = {}           # id(mode) -> (Obj, weakref)  FakeTensorModes
        self.mcs = {}             # id(mc) -> (Obj, weakref)    stand-alone MetaConverters
        self.fcs = {}             # id(fc) -> (Obj, weakref)    stand-alone converters (--lang 2)
        self.last = {}            # name -> {counter: value}
        self.holders = {}         # storage cdata -> [Obj] live real tensors/keepers
        self.keepers = []         # Obj keepers (storage alive, no recorded holder)
        self.open_with = None     # name of the mode of the open `with`, or None
        self.conv_depth = 0
        self.disp_depth = 0
        self.init_depth = 0
        self.stats = {"conversions": 0, "deaths": 0, "op_outputs": 0, "modes": 0}
        self.prog_modules = ["__main__"]
        self.site_frame = None
        self.at_lines = []
        self.rounds = Rounds(self)
        self.ended = None         # how the program ended, when not normally
        self.pid = os.getpid()    # a forked child does not write
        import threading
        self.main_thread = threading.main_thread()
        self.threading = threading

    # -------------------------------------------------------------- output

    def site(self):
        f = sys._getframe(2)
        while f is not None:
            fn = f.f_code.co_filename
            if not fn.startswith(self.tdir) and os.path.abspath(fn) != self.me \
                    and "importlib" not in fn and not fn.endswith("runpy.py") \
                    and not fn.endswith("contextlib.py"):
                if fn.startswith(self.pdir + os.sep):
                    fn = os.path.relpath(fn, self.pdir)
                else:
                    fn = os.path.basename(fn)
                self.site_frame = f
                return "%s:%d" % (fn, f.f_lineno)
            f = f.f_back
        self.site_frame = None
        return "?"

    def mark(self, site):
        """at("FILE", LINE): what follows was done at the program's site (the
        creating site of what it makes; one at() per event is one round of
        whatever the program does at that line)."""
        fn, _, ln = site.rpartition(":")
        if fn and ln.isdigit():
            key, rnd = self.rounds.round_of(self.site_frame)
            line = Line("stmt", "")
            self.at_lines.append((line, esc(fn), ln, key, rnd))
            self.lines.append(line)
        self.site_frame = None    # a frame kept would keep the program's locals alive

    def fill_at(self):
        """at(FILE, LINE, ROUND, ROUNDS): the round of the loop around the
        line, of the rounds that loop ran (known at the end)."""
        for line, fn, ln, key, rnd in self.at_lines:
            if key is None:
                line.text = 'at("%s", %s, 1, 1)' % (fn, ln)
            else:
                total = max(rnd, self.rounds.counts.get(key, 0) - 1)
                line.text = 'at("%s", %s, %d, %d)' % (fn, ln, rnd, total)
                line.at = (fn, ln, total, rnd)

    def note(self, text):
        if text not in self.notes_seen:
            self.notes_seen.add(text)
            self.notes.append(text)

    def emit(self, text, site=""):
        self.lines.append(Line("stmt", text, site))

    def close_with(self):
        if self.open_with is not None:
            self.lines.append(Line("close", "end"))
            self.open_with = None

    def new_name(self, prefix, site):
        pool = self.free.get((prefix, site))
        if pool:
            return pool.pop()
        n = self.count.get(prefix, 0) + 1
        self.count[prefix] = n
        return "%s%d" % (prefix, n)

    def bind(self, o, prefix, site, target=None):
        o.key = (prefix, site)
        o.name = self.new_name(prefix, site)
        self.objs[o.oid] = o
        if target is not None:
            weakref.finalize(target, self.died, o.oid)
        return o.name

    def tick(self):
        """Count an event; True when recording goes on."""
        if self.stopped:
            return False
        if os.getpid() != self.pid:
            self.stopped = True      # a forked child: only the started process is recorded
            return False
        if self.threading.current_thread() is not self.main_thread:
            # The language has one thread: a conversion made by another thread
            # interleaves with the main one in ways a scenario cannot say.
            self.note("REFUSED: %s made a fake-tensor event at %s; the language has no "
                      "threads, so the recording stops here" % (
                          self.threading.current_thread().name, self.site()))
            self.refused = True
            self.internal = True
            self.stop_site = self.site()
            self.stopped = True
            return False
        if self.max_events and self.events >= self.max_events:
            self.stopped = True
            self.stop_site = self.site()
            return False
        self.events += 1
        return True

    # ------------------------------------------------------------ counters

    def read(self, kind, x):
        if kind in ("mode", "fconv"):
            fc = x.fake_tensor_converter if kind == "mode" else x
            mc = fc.meta_converter
            v = {"memo_fake": len(fc.tensor_memo)}
        else:
            mc = x
            v = {}
        v.update(memo_meta=len(mc.tensor_memo), memo_storage=len(mc.storage_memo),
                 pending=len(mc.maybe_storages_to_delete), hits=mc.hit,
                 misses=mc.miss, sweep_every=mc.check_expired_frequency)
        return v

    def expects(self, only=None):
        for table, kind in ((self.modes, "mode"), (self.mcs, "mc"), (self.fcs, "fconv")):
            for oid, (o, ref) in list(table.items()):
                if only is not None and oid != only:
                    continue
                x = ref()
                if x is None:
                    continue
                v = self.read(kind, x)
                old = self.last.setdefault(o.name, {})
                for c in COUNTERS:
                    if c in v and old.get(c, 128 if c == "sweep_every" else 0) != v[c]:
                        self.lines.append(Line("expect", "expect %s.%s == %d" % (o.name, c, v[c])))
                        old[c] = v[c]

    # -------------------------------------------------------------- deaths

    def died(self, oid):
        self.safe(self.death, oid)

    def death(self, oid):
        """weakref.finalize callback. It runs after PyTorch's own finalizers
        of the same tensor (newest first; ours was registered before any
        conversion), so the counters are read at the next death or event,
        once this death's callbacks are all done."""
        o = self.objs.pop(oid, None)
        if o is None or self.stopped:
            return
        if self.deferred is not None:
            self.deferred.append(o)      # inside an event: written after its lines
            return
        if o.kind not in ("real", "grad"):
            self.settle()      # ours is its first callback (see refresh())
        self.write_death(o)

    def undefer(self):
        """Write the deaths seen inside the outermost event in progress,
        after its own lines, then read the counters once: they already
        include every one of those deaths."""
        if self.scope != 1 or not self.deferred:
            return
        ds, self.deferred = self.deferred, []
        for o in ds:
            if not self.stopped:
                self.write_death(o)
        if not self.stopped:
            self.need = False
            self.expects()

    def write_death(self, o):
        self.stats["deaths"] += 1
        if o.kind in ("real", "keeper", "grad"):
            self.unhold(o)
        if o.kind == "grad":
            if o.owner is not None and o.owner.oid in self.objs:
                self.emit("%s.grad = none" % o.owner.name, "grad replaced")
                self.need = True
            return
        if o.kind == "mode" and self.open_with == o.name:
            self.close_with()
        ln = Line("stmt", "del " + o.name)
        self.lines.append(ln)
        if o.kind == "real" and o.sref is not None:
            self.keep_checks.append((o, ln))
        self.free.setdefault(o.key, []).append(o.name)
        self.modes.pop(o.oid, None)
        self.mcs.pop(o.oid, None)
        self.fcs.pop(o.oid, None)
        self.need = True

    def refresh(self, x):
        """Give recorded real tensor x a callback that runs before PyTorch's
        finalizers of it (the newest runs first): it reads the counters of
        the previous death, before this death changes them."""
        o = self.objs.get(id(x)) if x is not None else None
        if o is None or o.kind not in ("real", "grad"):
            return
        if o.pre is not None:
            o.pre.detach()
        o.pre = weakref.finalize(x, self.settle_cb)

    def settle_cb(self):
        self.safe(self.settle)

    def settle(self):
        if self.need:
            self.need = False
            self.expects()

    def flush(self):
        """At each event: counters of the last death; keepers for dead
        tensors whose storage the program still holds through something
        unrecorded (written before their `del`); keepers whose storage has
        expired die; set_() on recorded tensors is noticed."""
        self.site_frame = None
        if self.stopped:
            return
        if self.fault and self.events == self.fault:
            raise RuntimeError("fault injected at event %d (FAKEGC_RECORD_FAULT)" % self.fault)
        self.settle()
        checks, self.keep_checks = self.keep_checks, []
        for o, ln in checks:
            if not o.sref.expired() and not self.holders.get(o.stor):
                ln.pre.append(self.keeper(o))
        self.check_storages()
        for k in list(self.keepers):
            if k.sref.expired():
                self.keepers.remove(k)
                self.unhold(k)
                self.lines.append(Line("stmt", "del " + k.name,
                                       "the program dropped that storage"))
                self.free.setdefault(k.key, []).append(k.name)
                self.need = True
        self.settle()

    def keeper(self, o):
        k = Obj("keeper", -id(o))
        k.stor, k.sref, k.geom = o.stor, o.sref, o.geom
        name = self.bind(k, "k", "keeper")
        self.objs.pop(k.oid, None)
        self.keepers.append(k)
        self.hold(k)
        return Line("stmt", "%s = %s.detach()" % (name, o.name),
                    "the program still holds %s's storage" % o.name)

    def hold(self, o):
        if o.stor is not None:
            self.holders.setdefault(o.stor, []).append(o)

    def unhold(self, o):
        hs = self.holders.get(o.stor)
        if hs and o in hs:
            hs.remove(o)
            if not hs:
                del self.holders[o.stor]

    def check_storages(self):
        for o in list(self.objs.values()):
            if o.kind != "real" or o.stor is None:
                continue
            t = o.owner() if callable(o.owner) else None
            if t is None:
                continue
            try:
                c = t.storage()._cdata
            except Exception:
                continue
            if c != o.stor and self.lang >= 2:
                self.unhold(o)
                self.emit("%s.set_(%s)" % (o.name, self.storage_expr(t)),
                          self.site() + "  set_() (seen at the next event)")
                self.note("set_() on a recorded tensor is written at the next event after it; "
                          "a death in between would see the old storage")
                from torch.multiprocessing.reductions import StorageWeakRef
                o.stor, o.sref = c, StorageWeakRef(t.storage())
                o.geom = (tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.dtype)
                self.hold(o)
                continue
            if c != o.stor:
                self.note("%s (%s): set_() or .data = moved it to another storage after it "
                          "was recorded; version 1 of the language cannot say set_(), so the "
                          "scenario keeps the old storage (counters after its death may differ)"
                          % (o.name, self.site()))
                self.unhold(o)
                o.stor, o.sref = c, None

    # --------------------------------------------------------- real tensors

    def dtype(self, t):
        d = DTYPES.get(t.dtype)
        if d is None:
            self.note("dtype %s has no scenario name; written as f32" % t.dtype)
            return "f32"
        return d

    def kw(self, t, leaf_rg=True):
        out = []
        if t.dtype != self.torch.float32:
            out.append("dtype=" + self.dtype(t))
        dev = str(t.device)
        if dev != "cpu":
            if dev not in ("meta",) and not dev.startswith("cuda"):
                self.note("device %s written as cpu" % dev)
            else:
                out.append('device="%s"' % dev)
        if leaf_rg and t.requires_grad:
            out.append("requires_grad=true")
        return out

    def real(self, t, site):
        """Name of the recorded real tensor t, writing its creation first."""
        o = self.objs.get(id(t))
        if o is not None and o.kind in ("real", "keeper", "grad"):
            return o.name
        torch = self.torch
        o = Obj("real", id(t))
        comment = site
        if type(t) is torch.nn.Parameter:
            comment += "  Parameter"
        elif t.requires_grad and not t.is_leaf and t._base is None:
            comment += "  non-leaf in PyTorch (written as a leaf: same memo fate)"
        sizes = list(t.shape)
        lay = t.layout
        if lay == torch.sparse_coo:
            args = [str(s) for s in sizes] + ["nnz=%d" % t._nnz()]
            if t.sparse_dim() != len(sizes):
                args.append("sparse_dim=%d" % t.sparse_dim())
            args += self.kw(t, False)
            if t.is_coalesced():
                args.append("coalesced=true")
            expr = "sparse_coo(%s)" % ", ".join(args)
        elif lay != torch.strided:
            if lay != torch.sparse_csr:
                self.note("%s: layout %s written as sparse_csr (both unsupported by "
                          "meta conversion)" % (site, lay))
            nnz = t._nnz() if lay == torch.sparse_csr else 1
            r, c = (sizes + [1, 1])[:2]
            expr = "sparse_csr(%d, %d, nnz=%d)" % (r, c, nnz)
        elif t.is_quantized:
            expr = "quantized(%s)" % ", ".join(map(str, sizes))
        else:
            expr = self.strided(t, o, site)
        name = self.bind(o, "t", site, t)
        o.owner = weakref.ref(t)
        if lay == torch.strided and not t.is_quantized:
            try:
                st = t.storage()
                o.stor = st._cdata
                from torch.multiprocessing.reductions import StorageWeakRef
                o.sref = StorageWeakRef(st)
            except Exception:
                o.stor = None
            self.hold(o)
        self.emit("%s = %s" % (name, expr), comment)
        self.grad(t, o, site)
        return name

    def strided(self, t, o, site):
        geom = (tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.dtype)
        o.geom = geom
        base = t._base
        if base is not None:
            if base.dtype != t.dtype:
                self.note("%s: a view with another dtype than its base (view(dtype), "
                          "view_as_real/complex) is written as a tensor of its own" % site)
            else:
                b = self.real(base, site)
                e = "%s.as_strided(%s, %s, %d)" % (b, tup(t.shape), tup(t.stride()),
                                                  t.storage_offset())
                if t.is_conj():
                    e += ".conj()"
                if t.is_neg():
                    e += ".neg_view()"
                return e
        try:
            c = t.storage()._cdata
        except Exception:
            c = None
        hs = self.holders.get(c) if c is not None else None
        if hs:
            same = [h for h in hs if h.geom == geom]
            if same:
                return "%s.detach()" % same[0].name
            if self.lang >= 2:
                return self.set_expr(t)
            self.note("%s: shares storage with %s but with other sizes/strides/offset and "
                      "is no view; version 1 of the language cannot say set_(), so it is "
                      "written with a storage of its own (memo_storage may differ)"
                      % (site, hs[0].name))
        if t.storage_offset() != 0 and self.lang >= 2:
            return self.set_expr(t)
        kw = self.kw(t)
        if t.storage_offset() != 0:
            self.note("%s: storage offset %d of a tensor that is no view is written as 0"
                      % (site, t.storage_offset()))
        if t.is_conj() or t.is_neg():
            self.note("%s: neg/conj bit of a tensor that is no view is dropped" % site)
        if t.is_contiguous():
            return "empty(%s)" % ", ".join([str(s) for s in t.shape] + kw)
        return "empty_strided(%s)" % ", ".join([tup(t.shape), tup(t.stride())] + kw)

    def storage_expr(self, t):
        """Version 2: `STORAGE, offset, sizes, strides` for t's storage: a
        recorded holder's `.storage()`, or a fresh tensor's of its size."""
        st = t.storage()
        hs = self.holders.get(st._cdata)
        if hs:
            src = "%s.storage()" % hs[0].name
        else:
            kw = ["dtype=" + self.dtype(t)] if t.dtype != self.torch.float32 else []
            src = "empty(%s).storage()" % ", ".join([str(max(st.size(), 1))] + kw)
        return "%s, %d, %s, %s" % (src, t.storage_offset(), tup(t.shape), tup(t.stride()))

    def set_expr(self, t):
        kw = ["dtype=" + self.dtype(t)] if t.dtype != self.torch.float32 else []
        e = "empty(%s).set_(%s)" % (", ".join(["0"] + kw), self.storage_expr(t))
        if t.requires_grad and t.is_leaf:
            e += ".requires_grad_(true)"
        return e

    def grad(self, t, o, site):
        torch = self.torch
        if t.layout != torch.strided:
            return
        g = t.grad if t.is_leaf else None
        known = self.objs.get(id(g)) if g is not None else None
        if g is None:
            return
        if known is not None and known.kind == "grad" and known.owner is o:
            return
        if known is not None:
            self.emit("%s.grad = %s" % (o.name, known.name), site)
            return
        go = Obj("grad", id(g))
        go.owner = o
        go.geom = (tuple(g.shape), tuple(g.stride()), g.storage_offset(), g.dtype)
        kw = self.kw(g)
        e = ("empty(%s)" % ", ".join([str(s) for s in g.shape] + kw) if g.is_contiguous()
             else "empty_strided(%s)" % ", ".join([tup(g.shape), tup(g.stride())] + kw))
        go.key = ("g", site)
        go.name = "%s.grad" % o.name
        self.objs[go.oid] = go
        weakref.finalize(g, self.died, go.oid)
        try:
            from torch.multiprocessing.reductions import StorageWeakRef
            st = g.storage()
            go.stor, go.sref = st._cdata, StorageWeakRef(st)
            self.hold(go)
        except Exception:
            pass
        self.emit("%s.grad = %s" % (o.name, e), site + "  grad")

    # ------------------------------------------------------------- events

    def on_mode(self, mode):
        if not self.tick():
            return
        self.flush()
        self.close_with()
        site = self.site()
        self.mark(site)
        o = Obj("mode", id(mode))
        name = self.bind(o, "m", site, mode)
        self.modes[id(mode)] = (o, weakref.ref(mode))
        self.last[name] = {}
        self.stats["modes"] += 1
        self.emit("%s = fake_mode()" % name, site)

    def on_mc(self, mc):
        if not self.tick():
            return
        self.flush()
        self.close_with()
        site = self.site()
        self.mark(site)
        o = Obj("mc", id(mc))
        name = self.bind(o, "c", site, mc)
        self.mcs[id(mc)] = (o, weakref.ref(mc))
        self.last[name] = {}
        self.emit("%s = meta_converter()" % name, site)

    def on_fc(self, fc):
        if self.lang < 2:
            self.note("%s: a FakeTensorConverter outside a FakeTensorMode (version 2's "
                      "fake_converter(), --lang 2); its conversions are written as op outputs"
                      % self.site())
            return
        if not self.tick():
            return
        self.flush()
        self.close_with()
        site = self.site()
        self.mark(site)
        o = Obj("fconv", id(fc))
        name = self.bind(o, "fc", site, fc)
        self.fcs[id(fc)] = (o, weakref.ref(fc))
        self.last[name] = {}
        self.emit("%s = fake_converter()" % name, site)

    def mode_of(self, conv):
        for oid, (o, ref) in self.modes.items():
            m = ref()
            if m is not None and m.fake_tensor_converter is conv:
                return o
        return None

    def on_convert(self, *args):
        with no_cycles(), Event(self):
            return self.convert(*args)

    def convert(self, orig, conv, mode, t, device, a, k):
        """FakeTensorConverter.__call__(mode, t, device=None, ...). The cycle
        collector is off from the first line written for it to the last: a
        cyclic-GC death (of an earlier mode's fake, say) must fall before or
        after the conversion's lines and counters, never among them."""
        from torch._subclasses.fake_tensor import UnsupportedFakeTensorException
        if self.conv_depth or (self.disp_depth and device is not None):
            # inside an op, FakeTensorMode wraps each meta output with
            # converter(mode, meta, device): a memo entry keyed by a meta
            # tensor that dies when the op returns (FakeTensor does not hold
            # it). Its fake is recorded as an op output instead.
            return orig(conv, mode, t, device, *a, **k)
        if not self.tick():
            return orig(conv, mode, t, device, *a, **k)
        try:
            pre = self.convert_pre(conv, mode, t, device)
        except Exception as e:
            self.broken(e)
            return orig(conv, mode, t, device, *a, **k)
        if pre is None:
            return self.call(orig, conv, mode, t, device, a, k)
        call, cid, site = pre
        try:
            out = self.call(orig, conv, mode, t, device, a, k, capture=False)
        except UnsupportedFakeTensorException:
            self.emit("expect raises(UnsupportedFakeTensor, %s)" % call, site)
            self.expects(only=cid)
            raise
        except Exception as e:
            self.note("%s: %s raised %s in PyTorch; not written" % (site, call, type(e).__name__))
            raise
        try:
            self.convert_post(t, out, call, cid, site)
        except Exception as e:
            self.broken(e)
        return out

    def broken(self, e):
        """The recorder itself failed: stop recording, say so, exit 3."""
        import traceback
        where = traceback.extract_tb(e.__traceback__)[-1]
        self.note("INTERNAL: the recorder failed (%s: %s at record.py:%d); recording "
                  "stopped here" % (type(e).__name__, str(e)[:100], where.lineno))
        self.internal = True
        self.stop_site = self.stop_site or self.site()
        self.stopped = True

    def convert_pre(self, conv, mode, t, device):
        """Write what a conversion needs; None when it is not expressible
        (noted; its fake is then recorded as an op output)."""
        torch = self.torch
        from torch._subclasses.fake_tensor import FakeTensor
        self.flush()
        self.close_with()
        site = self.site()
        mo = self.modes.get(id(mode), (None, None))[0]
        own = mo is not None and mode.fake_tensor_converter is conv
        fco = self.fcs.get(id(conv), (None, None))[0]
        if fco is not None and mo is not None:
            own = True
        if not own or isinstance(t, FakeTensor) or not isinstance(t, torch.Tensor):
            why = ("a FakeTensorConverter that is not its mode's (the language's "
                   "version 2 has fake_converter())" if not own else
                   "the converted value is not a real tensor")
            self.note("%s: conversion through %s: its fake is written as an op output"
                      % (site, why))
            return None
        self.mark(site)
        tn = self.real(t, site)
        if fco is not None:
            call = "%s.fake(%s, %s%s)" % (fco.name, mo.name, tn,
                                          ', device="%s"' % device if device else "")
        else:
            call = "%s.fake(%s%s)" % (mo.name, tn, ', device="%s"' % device if device else "")
        cid = id(conv) if fco is not None else id(mode)
        self.stats["conversions"] += 1
        return call, cid, site

    def convert_post(self, t, out, call, cid, site):
        from torch._subclasses.fake_tensor import FakeTensor
        self.refresh_all(t)
        known = self.objs.get(id(out))
        if known is not None and known.kind == "fake":
            self.emit("%s = %s" % (known.name, call),
                      site + "  memo hit: PyTorch 1.13.1's _fix_weakref keeps it alive")
        elif isinstance(out, FakeTensor):
            o = Obj("fake", id(out))
            name = self.bind(o, "f", site, out)
            self.emit("%s = %s" % (name, call), site)
        else:
            self.emit(call, site)
        self.undefer()
        self.expects(only=cid)

    def call(self, orig, conv, mode, t, device, a, k, capture=True):
        enabled = gc.isenabled()
        gc.disable()
        self.conv_depth += 1
        try:
            out = orig(conv, mode, t, device, *a, **k)
        finally:
            self.conv_depth -= 1
            if enabled:
                gc.enable()
        if capture:
            self.outputs(out)
        return out

    def safe(self, f, *a):
        if self.stopped:
            return
        with no_cycles():
            try:
                f(*a)
            except Exception as e:
                self.broken(e)

    def refresh_all(self, t):
        self.refresh(t)
        self.refresh(t._base)
        if t.layout == self.torch.strided and t.is_leaf:
            self.refresh(t.grad)

    def on_meta(self, *args):
        with no_cycles(), Event(self):
            return self.meta_call(*args)

    def meta_call(self, orig, mc, t, a, k):
        if self.conv_depth or id(mc) not in self.mcs or not self.tick():
            return orig(mc, t, *a, **k)
        torch = self.torch
        if not isinstance(t, torch.Tensor):
            return orig(mc, t, *a, **k)
        try:
            self.flush()
            self.close_with()
            site = self.site()
            co = self.mcs[id(mc)][0]
            self.mark(site)
            tn = self.real(t, site)
        except Exception as e:
            self.broken(e)
            return orig(mc, t, *a, **k)
        self.conv_depth += 1
        try:
            out = orig(mc, t, *a, **k)
        finally:
            self.conv_depth -= 1
        self.safe(self.meta_post, co, t, tn, out, site)
        return out

    def meta_post(self, co, t, tn, out, site):
        self.stats["conversions"] += 1
        self.refresh_all(t)
        call = "%s.meta(%s)" % (co.name, tn)
        known = self.objs.get(id(out))
        if out is t or known is not None:
            self.emit(("%s = %s" % (known.name, call)) if known is not None and out is not t
                      else call, site)
        else:
            o = Obj("meta", id(out))
            self.emit("%s = %s" % (self.bind(o, "r", site, out), call), site)
        self.undefer()
        self.expects(only=co.oid)

    def on_dispatch(self, orig, mode, func, types, args, kwargs):
        with Event(self):
            self.disp_depth += 1
            try:
                out = orig(mode, func, types, args, kwargs)
            finally:
                self.disp_depth -= 1
            if self.disp_depth == 0 and self.conv_depth == 0 and not self.stopped:
                self.safe(self.outputs, out)
        return out

    def outputs(self, out):
        from torch._subclasses.fake_tensor import FakeTensor
        from torch.utils._pytree import tree_flatten
        for x in tree_flatten(out)[0]:
            if isinstance(x, FakeTensor) and id(x) not in self.objs:
                self.op_output(x)

    def op_output(self, x):
        mo = self.modes.get(id(x.fake_mode), (None, None))[0]
        if mo is None or not self.tick():
            return
        self.flush()
        site = self.site()
        if self.open_with != mo.name:
            self.close_with()
            self.lines.append(Line("open", "with %s" % mo.name))
            self.open_with = mo.name
        self.mark(site)
        o = Obj("op", id(x))
        name = self.bind(o, "x", site, x)
        self.stats["op_outputs"] += 1
        kw = []
        if x.dtype != self.torch.float32:
            kw.append("dtype=" + self.dtype(x))
        dev = str(x.fake_device)
        if dev != "cpu":
            kw.append('device="%s"' % dev)
        if x.layout != self.torch.strided:
            self.note("%s: a fake op output of layout %s is written as a strided one"
                      % (site, x.layout))
            self.emit("%s = empty(%s)" % (name, ", ".join([str(s) for s in x.shape] + kw)), site)
            return
        if x.is_contiguous():
            self.emit("%s = empty(%s)" % (name, ", ".join([str(s) for s in x.shape] + kw)), site)
        else:
            self.emit("%s = empty_strided(%s)" % (name, ", ".join(
                [tup(x.shape), tup(x.stride())] + kw)), site)

    # -------------------------------------------------------------- finish

    def finish(self, roots=(), fail_on=None, suppress=None):
        """The program's end: a full collection (its deaths written), then
        for each recorded object still alive, its holder in the program
        (a chain from a root: hold(NAME, "PATH")); every stand-in name is
        then dropped, and verdict() asks the model what it keeps and why.
        The live() counts PyTorch shows after that are fidelity checks."""
        self.flush()
        self.close_with()
        if self.stopped:
            return
        gc.collect()
        self.flush()
        self.close_with()
        from torch._subclasses.fake_tensor import FakeTensorMode, FakeTensorConverter
        from torch._subclasses.meta_utils import MetaConverter
        from torch._subclasses.fake_tensor import FakeTensor
        import warnings
        alive = [o for o in self.objs.values() if o.kind != "grad"]
        alive.sort(key=lambda o: (o.name[0], int("".join(c for c in o.name if c.isdigit()) or 0)))
        paths = locate({o.oid: o for o in alive}, roots, self)
        self.lines.append(Line("stmt", "# the program's end: what it still holds, and where",
                               ""))
        self.lines[-1].kind = "comment"
        names = []
        for o in alive:
            path = paths.get(o.oid)
            if path is None and o.kind in ("real",):
                path = "(a real tensor held outside the program's variables)"
            if path is not None:
                self.lines.append(Line("stmt", 'hold(%s, "%s")' % (o.name, esc(path))))
            names.append(o.name)
        for k in self.keepers:
            self.lines.append(Line("stmt", 'hold(%s, "(an unrecorded alias of %s\'s '
                                   'storage)")' % (k.name, k.name)))
            names.append(k.name)
        for i in range(0, len(names), 16):
            self.lines.append(Line("stmt", "del " + ", ".join(names[i:i + 16]),
                                   "stand-in names: the holds above are the program's"))
        self.lines.append(Line("stmt", 'verdict(fail_on="%s"%s)' % (
            fail_on or "lost,accumulating",
            ', suppress="%s"' % esc(os.path.abspath(suppress)) if suppress else "")))
        modes = convs = fakes = 0
        with warnings.catch_warnings():    # isinstance() on torch.distributed.reduce_op warns
            warnings.simplefilter("ignore")
            for x in gc.get_objects():
                if isinstance(x, FakeTensor):
                    fakes += 1
                elif isinstance(x, FakeTensorMode):
                    modes += 1
                elif isinstance(x, (FakeTensorConverter, MetaConverter)):
                    convs += 1
        fins = 0
        for f, info in list(weakref.finalize._registry.items()):
            fn = getattr(info.func, "__qualname__", "")
            if fn.endswith("del_ten") and "_subclasses" in getattr(info.func, "__module__", ""):
                fins += 1
        why = ', "PyTorch 1.13.1 kept this many after gc.collect()"'
        self.lines.append(Line("expect", 'expect live("mode") == %d%s' % (modes, why)))
        self.lines.append(Line("expect", 'expect live("converter") == %d%s' % (convs, why)))
        self.lines.append(Line("expect", 'expect live("fake") == %d%s' % (fakes, why)))
        self.lines.append(Line("expect", 'expect live("finalizer") == %d, '
                               '"weakref.finalize objects PyTorch registered and still holds '
                               'after gc.collect()"' % fins))
        self.stopped = True

    def install(self):
        from torch._subclasses import fake_tensor as ft, meta_utils as mu
        rec = self
        FM, FC, MC = ft.FakeTensorMode, ft.FakeTensorConverter, mu.MetaConverter
        m_init, c_init, c_call = FM.__init__, FC.__init__, FC.__call__
        mc_init, mc_call, disp = MC.__init__, MC.__call__, FM.__torch_dispatch__

        def mode_init(self, *a, **k):
            rec.init_depth += 1
            try:
                m_init(self, *a, **k)
            finally:
                rec.init_depth -= 1
            if rec.init_depth == 0:
                rec.safe(rec.on_mode, self)

        def conv_init(self, *a, **k):
            rec.init_depth += 1
            try:
                c_init(self, *a, **k)
            finally:
                rec.init_depth -= 1
            if rec.init_depth == 0 and not rec.stopped:
                rec.safe(rec.on_fc, self)

        def conv_call(self, fake_mode, t, device=None, *a, **k):
            return rec.on_convert(c_call, self, fake_mode, t, device, a, k)

        def meta_init(self, *a, **k):
            mc_init(self, *a, **k)
            if rec.init_depth == 0:
                rec.safe(rec.on_mc, self)

        def meta_call(self, t, *a, **k):
            return rec.on_meta(mc_call, self, t, a, k)

        def dispatch(self, func, types, args=(), kwargs=None):
            return rec.on_dispatch(disp, self, func, types, args, kwargs)

        FM.__init__, FC.__init__, FC.__call__ = mode_init, conv_init, conv_call
        MC.__init__, MC.__call__, FM.__torch_dispatch__ = meta_init, meta_call, dispatch

    # -------------------------------------------------------------- writing

    def render(self, batch=True, header_extra=()):
        self.fill_at()
        units = self.units()
        body = batch_units(units) if batch else flat(units)
        head = ["# recorded by scripts/record.py from %s (torch %s)"
                % (os.path.basename(self.program), self.torch.__version__),
                "# Replay: fakegc run --compat pytorch-1.13 THIS.scn. The expectations are the",
                "# counters PyTorch 1.13.1 showed, under its periodic sweep (fidelity: a",
                "# mismatch means the model is wrong); verdict() at the end is the model's",
                "# own judgement of what the program left behind. at(FILE, LINE) names the",
                "# program's line of what follows; hold(X, PATH) says where the program",
                "# still holds X at its end.",
                "# Real tensors are written where the program first converts them; the fake",
                "# tensors that operations made under a mode are written as constructors of",
                "# the same shape under `with MODE` (op outputs are not memoized, so that is",
                "# a faithful stand-in for the mode's lifetime). Deaths are `del` lines, in",
                "# the order CPython ran the finalizers.",
                "# events: %d (%s)" % (self.events, ", ".join(
                    "%d %s" % (v, k) for k, v in sorted(self.stats.items())))]
        head += ["# " + h for h in header_extra]
        if self.ended:
            head.append("# ENDED: %s; what was recorded up to there follows" % self.ended)
        if self.stopped and self.stop_site:
            head.append("# STOPPED after %d events (%s) at %s: the program ran on "
                        "unrecorded" % (self.events, "threads" if self.refused else
                                        "a recorder error" if self.internal
                                        else "--max-events", self.stop_site))
        if self.notes:
            head.append("# Not expressible (never silently dropped):")
            head += ["#   - " + n for n in self.notes]
        else:
            head.append("# Not expressible: nothing.")
        head.append('config sweep = "periodic"   # PyTorch 1.13.1\'s policy: the expectations '
                    'are its counters (--sweep eager overrides, see --compare)')
        head.append('config end_check = "off"    # the verdict() at the program\'s end judges '
                    'what it left behind')
        return "\n".join(head + body) + "\n"

    def units(self):
        """Statements with the expect lines that follow them."""
        us = []
        for ln in self.lines:
            for p in ln.pre:
                us.append((p, []))
            if ln.kind == "expect" and us:
                us[-1][1].append(ln)
            else:
                us.append((ln, []))
        return us


def esc(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


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
        f = getattr(m, "__file__", None)
        if not f or name == "__main__" or m is main:
            continue
        f = os.path.abspath(f)
        if f.startswith(rec.pdir + os.sep) and f != rec.me and f != rec.program:
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
        if not fn.startswith(rec.pdir + os.sep) or fn == rec.me or fr.f_code.co_name == "<module>":
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
        out += lab if (not out or lab[:1] in ".[") else " -> " + lab
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
        for name, c in zip(x.__code__.co_freevars, x.__closure__ or ()):
            try:
                yield c.cell_contents, "<closure of %s: %s>" % (x.__name__, name)
            except ValueError:
                pass
        for d in x.__defaults__ or ():
            yield d, ".__defaults__"
        return
    if isinstance(x, (types.BuiltinFunctionType, types.CodeType, types.FrameType)):
        return
    if isinstance(x, dict):
        for k, v in list(x.items()):
            yield v, "[%r]" % (k,)
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
    d = getattr(x, "__dict__", None) if not isinstance(x, types.MethodType) else None
    if isinstance(d, dict):
        for k, v in list(d.items()):
            yield v, "." + str(k)
    if tm.startswith("torch") and not tm.startswith("torch.nn"):
        return     # PyTorch's own objects: what they hold is not the program's
    for c in gc.get_referents(x):
        if c is not d:
            yield c, type(c).__name__


def fmt(ln, depth):
    s = "  " * depth + ln.text
    if ln.site:
        s = s.ljust(40) + "  # " + ln.site
    return s


def flat(units, depth=0, expects=True):
    out = []
    for ln, ex in units:
        if ln.kind == "close":
            depth -= 1
        out.append(fmt(ln, depth))
        if ln.kind == "open":
            depth += 1
        if expects:
            out += [fmt(e, depth) for e in ex]
    return out


def balanced(kinds):
    d = 0
    for k in kinds:
        d += 1 if k == "open" else -1 if k == "close" else 0
        if d < 0:
            return False
    return d == 0


def batch_units(units, window=256, min_units=3):
    """Consecutive rounds of identical statements (expects aside) become
    `repeat N-1` and then the last round in full, with its expectations.
    Inside the repeat, an expectation is kept where it is the same in every
    round, and dropped where it is not (a counter that grows per round)."""
    # an at() with rounds matches the same at() of another round: in the
    # repeat it is written with the step its round takes per iteration
    keys = [(ln.kind, ln.text, ln.site) if ln.at is None else ("at",) + ln.at[:3]
            for ln, _ in units]
    ids = {}
    h = [ids.setdefault(k, len(ids)) for k in keys]
    kinds = [ln.kind for ln, _ in units]
    nxt = {}
    pos_next = [None] * len(h)
    for i in range(len(h) - 1, -1, -1):
        pos_next[i] = nxt.get(h[i])
        nxt[h[i]] = i
    out, i, depth, n = [], 0, 0, len(h)
    while i < n:
        best = None
        j, tries = pos_next[i], 0
        while j is not None and j - i <= window and tries < 16:
            p = j - i
            tries += 1
            if h[i:j] == h[j:j + p] and balanced(kinds[i:j]):
                k = 2
                while h[i:j] == h[i + k * p:i + (k + 1) * p]:
                    k += 1
                if p * (k - 1) >= min_units and (best is None or p * k > best[0] * best[1]):
                    best = (p, k)
            j = pos_next[j]
        if best is None:
            ln, ex = units[i]
            if ln.kind == "close":
                depth -= 1
            out.append(fmt(ln, depth))
            if ln.kind == "open":
                depth += 1
            out += [fmt(e, depth) for e in ex]
            i += 1
            continue
        p, k = best
        out.append("  " * depth + "repeat %d   # %d identical rounds; the last one follows "
                   "with its expectations" % (k - 1, k))
        body = []
        for u in range(p):
            ln, ex = units[i + u]
            if ln.at is not None:
                fn_, ln_, total, r0 = ln.at
                step = units[i + p + u][0].at[3] - r0
                if step < 0 or any(units[i + r * p + u][0].at[3] - r0 != r * step
                                   for r in range(2, k)):
                    step = 0
                ln = Line("stmt", 'at("%s", %s, %d, %d, %d)' % (fn_, ln_, r0, total, step))
            same = all([e.text for e in units[i + r * p + u][1]] == [e.text for e in ex]
                       for r in range(1, k - 1))
            body.append((ln, ex if same else []))
        out += flat(body, depth + 1)
        out.append("  " * depth + "end")
        out += flat(units[i + (k - 1) * p:i + k * p], depth)
        i += k * p
    return out


# ------------------------------------------------------------------ compare

def probe(rec):
    """A copy of the recording without its expectations and with, after
    every statement, an impossible expectation per live mode whose failure
    reports fakegc's value (JSON 'actual')."""
    lines, alive, depth = [], [], 0
    lines.append("# probe written by record.py --compare")
    order = {}
    for ln in [p for x in rec.lines for p in x.pre + [x]]:
        if ln.kind == "expect":
            continue
        if ln.kind == "close":
            depth -= 1
        lines.append("  " * depth + ln.text)
        if ln.kind == "open":
            depth += 1
        t = ln.text
        if t.endswith("= fake_mode()") or t.endswith("= meta_converter()"):
            alive.append(t.split(" ")[0])
        if t.startswith("del "):
            for nm in t[4:].split(", "):
                if nm in alive:
                    alive.remove(nm)
        if ln.kind in ("stmt",):
            for nm in alive:
                for c in ("memo_meta", "memo_storage", "pending") + (
                        ("memo_fake",) if nm.startswith("m") else ()):
                    lines.append("  " * depth + "expect %s.%s == -1" % (nm, c))
                    order[len(lines)] = (nm, c)
    return "\n".join(lines) + "\n", order


def compare(rec, fakegc, out_path):
    text, order = probe(rec)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "probe.scn")
        with open(p, "w") as f:
            f.write(text)
        rows = {}
        for label, extra in (("periodic (pytorch-1.13)", ["--compat", "pytorch-1.13"]),
                             ("eager (fakegc default)", ["--sweep", "eager"])):
            r = subprocess.run([fakegc, "run", "--format", "json", "--max-statements", "0"]
                               + extra + [p], stdout=subprocess.PIPE, text=True)
            if r.returncode not in (0, 1):
                print("record.py: fakegc failed on the probe (%d)" % r.returncode, file=sys.stderr)
                return 1
            rep = json.loads(r.stdout)["scenarios"][0]
            series = {}      # line -> (name, counter, value)
            for fl in rep.get("failures", []):
                if fl["line"] in order:
                    series[fl["line"]] = order[fl["line"]] + (int(fl["actual"]),)
            rows[label] = summarize(series)
    print("%s: peak and final under both policies (fakegc replay)" % out_path)
    print("%-26s %14s %14s %14s %14s" % ("policy", "peak pending", "final pending",
                                         "peak memo", "final memo"))
    for label, s in rows.items():
        print("%-26s %14d %14d %14d %14d" % ((label,) + s))
    return 0


def summarize(series):
    """series: line -> (name, counter, value). Per statement, the sum over
    live converters: pending storages (pending) and memo entries (fake +
    meta + storage)."""
    by_stmt = {}
    lines = sorted(series)
    group, prev = 0, None
    for ln in lines:
        if prev is not None and ln != prev + 1:
            group += 1
        prev = ln
        name, c, v = series[ln]
        g = by_stmt.setdefault(group, {"pending": 0, "memo": 0})
        g["pending" if c == "pending" else "memo"] += v
    if not by_stmt:
        return (0, 0, 0, 0)
    vals = [by_stmt[g] for g in sorted(by_stmt)]
    return (max(v["pending"] for v in vals), vals[-1]["pending"],
            max(v["memo"] for v in vals), vals[-1]["memo"])


# --------------------------------------------------------------------- main

def main(argv):
    ap = argparse.ArgumentParser(prog="record.py", description="Record a real PyTorch 1.13 "
                                 "program's fake-tensor lifecycle as a fakegc scenario "
                                 "(options go before PROGRAM).")
    ap.add_argument("-o", "--output", help="scenario to write (default: PROGRAM.scn beside it)")
    ap.add_argument("--max-events", type=int, default=0,
                    help="stop recording after N events (0: no limit)")
    ap.add_argument("--lang", type=int, choices=(1, 2), default=1,
                    help="2: also write the language's version 2 forms (set_(), "
                    "fake_converter()) where version 1 cannot say it (default 1)")
    ap.add_argument("--no-batch", action="store_true",
                    help="no repeat blocks: one statement per event")
    ap.add_argument("--compare", action="store_true",
                    help="replay under periodic and eager and print peak/final pending "
                    "storages and memo entries")
    ap.add_argument("--fakegc", default=None, help="fakegc binary for --compare")
    ap.add_argument("--no-hooks", action="store_true",
                    help="run the program the same way without recording and print its "
                    "time only (the baseline of the recording overhead)")
    ap.add_argument("--fail-on", default=None,
                    help="what the verdict fails on: a comma list of lost, accumulating, "
                    "reachable, lingering (default lost,accumulating)")
    ap.add_argument("--suppress", default=None,
                    help="suppression rules for the verdict (one a line: NAME: class=... "
                    "kind=... site=GLOB holder=GLOB)")
    ap.add_argument("program")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    o = ap.parse_args(argv)
    if not os.path.isfile(o.program):
        print("record.py: %s: no such program" % o.program, file=sys.stderr)
        return 2
    if o.max_events < 0:
        print("record.py: --max-events must be >= 0", file=sys.stderr)
        return 2
    try:
        import torch
        import torch._subclasses.fake_tensor  # noqa: F401
    except ImportError as e:
        print("record.py: torch is not importable here (%s); use /usr/bin/python3 with "
              "Debian's python3-torch" % e, file=sys.stderr)
        return 77
    DTYPES.update(_dtypes(torch))
    out = o.output or os.path.splitext(o.program)[0] + ".scn"
    if o.fail_on:
        bad = [w for w in o.fail_on.split(",") if w and w not in
               ("lost", "accumulating", "reachable", "lingering")]
        if bad:
            print("record.py: --fail-on: unknown class %s (lost, accumulating, reachable, "
                  "lingering)" % bad[0], file=sys.stderr)
            return 2
    rec = Recorder(torch, o.program, o.max_events, o.lang)
    if not o.no_hooks:
        rec.install()
    sys.argv = [o.program] + o.args
    sys.path.insert(0, os.path.dirname(os.path.abspath(o.program)))
    status, extra = 0, []
    state = {"g": None, "done": False, "tb": None}
    real_exit = os._exit

    def write_status(program):
        """FAKEGC_RECORD_STATUS=FILE (fakegc record): the program's own exit
        status and the recorder's state, apart (both may be 3)."""
        path = os.environ.get("FAKEGC_RECORD_STATUS")
        if path and os.getpid() == rec.pid:
            with open(path, "w") as f:
                f.write("program %s\nrecorder %s\n" % (program, "refused" if rec.refused
                                                       else "internal" if rec.internal
                                                       else "ok"))

    def write(text):
        if os.getpid() != rec.pid:
            return
        tmp = "%s.%d.tmp" % (out, os.getpid())
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, out)

    def roots(frame):
        return program_roots(rec, state["g"], frame, state["tb"])

    def end_early(how, frame):
        """os._exit() or SIGTERM: keep what was recorded, said in the header."""
        if os.getpid() != rec.pid or state["done"] or o.no_hooks:
            return
        state["done"] = True
        rec.ended = how
        try:
            rec.finish(roots(frame), o.fail_on, o.suppress)
        except Exception as e:
            rec.broken(e)
        write(rec.render(batch=not o.no_batch, header_extra=extra))
        print("record.py: %s: %s; recorded up to there (%d events)" % (out, how, rec.events),
              file=sys.stderr)

    def exit_hook(code=0):
        end_early("the program called os._exit(%s)" % code, sys._getframe(1))
        write_status(code)
        sys.stdout.flush()
        sys.stderr.flush()
        real_exit(code)

    def on_term(signum, frame):
        end_early("the program was killed by SIGTERM", frame)
        write_status(128 + signal.SIGTERM)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    os._exit = exit_hook
    signal.signal(signal.SIGTERM, on_term)
    if not o.no_hooks:
        rec.rounds.start()
    t0 = time.perf_counter()
    import types
    mod = types.ModuleType("__main__")
    mod.__file__ = rec.program
    mod.__builtins__ = __builtins__
    sys.modules["__main__"] = mod     # as runpy does, but the module is kept: its
    g = mod.__dict__                  # globals are the program's roots at its end
    try:
        with open(o.program, "rb") as f:
            code = compile(f.read(), rec.program, "exec")
        exec(code, g)
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException as e:
        status = 1
        state["tb"] = e.__traceback__
        extra.append("the program raised %s: %s (recorded up to there)"
                     % (type(e).__name__, str(e).split("\n")[0][:120]))
        import traceback
        traceback.print_exc()
    elapsed = time.perf_counter() - t0
    rec.rounds.stop()
    os._exit = real_exit
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if os.getpid() != rec.pid:    # a forked child ran to the end: it writes nothing
        sys.stdout.flush()
        sys.stderr.flush()
        real_exit(status)
    if o.no_hooks:
        print("record.py: %s: not recorded (--no-hooks), program %.3f s" % (o.program, elapsed),
              file=sys.stderr)
        sys.stderr.flush()
        os._exit(status)
    state["g"] = g
    state["done"] = True
    try:
        rec.finish(roots(None), o.fail_on, o.suppress)
    except Exception as e:
        rec.broken(e)
    state["tb"] = None
    text = rec.render(batch=not o.no_batch, header_extra=extra)
    write(text)
    print("record.py: %s: %d events, %d lines, program %.3f s"
          % (out, rec.events, text.count("\n"), elapsed), file=sys.stderr)
    write_status(status)
    if rec.refused:
        print("record.py: refused: the program made fake-tensor events on another thread, "
              "which the language cannot say; recorded up to there (see the header)",
              file=sys.stderr)
        status = 3
    elif rec.internal:
        print("record.py: internal error: the recorder failed at %s and stopped recording "
              "there (see the scenario's header)" % rec.stop_site, file=sys.stderr)
        status = 3
    elif rec.stop_site:
        print("record.py: stopped recording after %d events (--max-events %d) at %s; the "
              "scenario covers the program up to there" % (rec.events, o.max_events,
                                                          rec.stop_site), file=sys.stderr)
    del g
    if o.compare:
        fakegc = o.fakegc or os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))), "build", "fakegc")
        rc = compare(rec, fakegc, out)
        if rc:
            status = status or rc
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
