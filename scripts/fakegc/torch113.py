"""PyTorch 1.13's fake-tensor lifecycle: the hooks on FakeTensorMode,
FakeTensorConverter, MetaConverter and __torch_dispatch__, the memo
counters it shows, and what it still holds at the program's end.

How it observes PyTorch (torch is patched at these entry points only, for
the program's run; each wrapper calls the original and only reads state):
  - FakeTensorMode.__init__        -> a mode is made
  - FakeTensorConverter.__init__   -> a converter outside a mode (noted)
  - FakeTensorConverter.__call__   -> every fake conversion (from_tensor,
                                      converter calls, lift_fresh constants)
  - MetaConverter.__init__/__call__ -> stand-alone meta conversions
  - FakeTensorMode.__torch_dispatch__ -> fake outputs of top-level ops
                                      (a view of a recorded fake is written
                                      as a view of it: it holds its base)
  - torch.fx.GraphModule.__init__  -> make_fx's graph (make_fx.py): a
                                      graph_module() stand-in, each node's
                                      meta["val"] an attribute, each traced
                                      fake's proxy slot an edge back to it
Deaths: a weak reference with a callback on every recorded object (CPython runs it when the
refcount reaches 0, so the order is exact); deaths are written at the next
event, as one `del` line, followed by the counters. The cycle collector is
disabled inside the conversion wrapper, and a death CPython still runs
inside a conversion or an op (an explicit gc.collect(), a refcount drop) is
written after that event's own lines, never among them; the collector runs
as usual elsewhere. tests/record/ checks each hook.
"""

import gc
import weakref

from . import engine
from .engine import Event, Line, Obj, locked, meta_hook, no_cycles
from .holders import locate
from .make_fx import Graphs
from .scn import esc, tup


# what a verdict judges of the recorded objects (real tensors and their
# storages are the program's data)
SUBJECTS = ("fake", "op", "meta", "mode", "mc", "fconv")


class Recorder(Graphs, engine.Recorder):
    KEPT = "PyTorch 1.13.1"
    HIT_NOTE = "  memo hit: PyTorch 1.13.1's _fix_weakref keeps it alive"

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


    # ------------------------------------------------------------- events

    def on_mode(self, mode):
        if not self.tick():
            return
        o, name, site = self.made("mode", "m", mode)
        self.modes[id(mode)] = (o, weakref.ref(mode))
        self.last[name] = {}
        self.stats["modes"] += 1
        self.emit("%s = fake_mode()" % name, site)

    def on_mc(self, mc):
        if not self.tick():
            return
        o, name, site = self.made("mc", "c", mc)
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
        o, name, site = self.made("fconv", "fc", fc)
        self.fcs[id(fc)] = (o, weakref.ref(fc))
        self.last[name] = {}
        self.emit("%s = fake_converter()" % name, site)

    def mode_rec(self, mode):
        """The recorded mode of a conversion or an op, or None. In a region
        (fakegc.recording), a FakeTensorMode made before it (a test
        fixture's, of module or session scope) is adopted at its first use:
        written as a mode of its own, so that what the region makes through
        it is recorded and judged, while what it made before the region is
        not (it is neither recorded nor counted). Its counters include what
        it memoized before the region, so they are not expectations."""
        r = self.modes.get(id(mode))
        if r is not None:
            return r[0]
        from torch._subclasses.fake_tensor import FakeTensorMode
        if not getattr(self, "frozen", False) or not isinstance(mode, FakeTensorMode) or \
                self.stopped:
            return None
        site = self.site()
        self.close_with()
        o = Obj("mode", id(mode))
        name = self.bind(o, "m", site, mode)
        self.modes[id(mode)] = (o, weakref.ref(mode))
        self.adopted.add(id(mode))
        self.last[name] = {}
        self.emit("%s = fake_mode()" % name, "%s  a mode made before the recorded region "
                  "(a fixture's): first used here; its counters are not checked" % site)
        self.note("a mode made before the recorded region (%s, first used at %s) is written "
                  "where it is first used; what it made before is not recorded, its counters "
                  "and the live() counts of modes and converters are not checked" % (name, site))
        return o

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

    def convert_pre(self, conv, mode, t, device):
        """Write what a conversion needs; None when it is not expressible
        (noted; its fake is then recorded as an op output)."""
        torch = self.torch
        from torch._subclasses.fake_tensor import FakeTensor
        self.flush()
        self.close_with()
        site = self.site()
        mo = self.mode_rec(mode)
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
                      site + self.HIT_NOTE)
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

    def on_meta(self, orig, mc, t, a, k):
        if self.conv_depth:   # a mode's own, inside its conversion: already one event
            return orig(mc, t, *a, **k)
        with no_cycles(), Event(self):
            return self.meta_call(orig, mc, t, a, k)

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
                self.view_src = self.view_input(func, args)
                try:
                    self.safe(self.outputs, out)
                finally:
                    self.view_src = None
        return out

    def outputs(self, out):
        from torch._subclasses.fake_tensor import FakeTensor
        from torch.utils._pytree import tree_flatten
        for x in tree_flatten(out)[0]:
            if isinstance(x, FakeTensor) and id(x) not in self.objs:
                self.op_output(x)

    def op_output(self, x):
        mo = self.mode_rec(x.fake_mode)
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
            self.emit("%s = %s" % (name, self.op_out("empty(%s)" % ", ".join(
                [str(s) for s in x.shape] + kw))), site)
            return
        base = self.view_base(x)
        if base is not None:
            self.emit("%s = %s.as_strided(%s, %s, %d)" % (
                name, base.name, tup(x.shape), tup(x.stride()), x.storage_offset()), site)
        elif x.is_contiguous():
            self.emit("%s = %s" % (name, self.op_out("empty(%s)" % ", ".join(
                [str(s) for s in x.shape] + kw))), site)
        else:
            self.emit("%s = %s" % (name, self.op_out("empty_strided(%s)" % ", ".join(
                [tup(x.shape), tup(x.stride())] + kw))), site)

    def op_out(self, ctor):
        """An op output's stand-in: op_out(CTOR), which no design memoizes
        (a constructor's fake is memoized under pytorch-2.14, what-if
        replays included); the bare constructor under --lang 1 (1.13.1
        memoizes neither)."""
        return "op_out(%s)" % ctor if self.lang >= 2 else ctor

    view_src = None

    @staticmethod
    def view_input(func, args):
        """The input an op's outputs are views of (a view op's first
        argument: its schema's returns alias it, read-only), or None. The op
        runs below autograd, which makes them views only after it returns."""
        try:
            rets = func._schema.returns
            if func._schema.name in ("aten::detach", "aten::lift_fresh") or not args:
                return None
            if any(r.alias_info is not None and not getattr(r.alias_info, "is_write", False)
                   for r in rets):
                return args[0]
        except Exception:
            pass
        return None

    def view_base(self, x):
        """The recorded fake that op output x is a view of (of the same mode
        and dtype), or None. PyTorch's view keeps its base alive from C++;
        an empty_strided() in its place would not."""
        b = self.view_src
        o = self.objs.get(id(b)) if b is not None else None
        if o is None or o.kind not in ("fake", "op") or b.dtype != x.dtype or \
                getattr(b, "fake_mode", None) is not x.fake_mode:
            return None
        return o

    # -------------------------------------------------------------- finish

    def finish(self, roots=(), fail_on=None, suppress=None):
        """The program's end: a full collection (its deaths written), then
        for each recorded object still alive, its holder in the program
        (a chain from a root: hold(NAME, "PATH")); every stand-in name is
        then dropped, and verdict() asks the model what it keeps and why.
        The live() counts PyTorch shows after that are fidelity checks."""
        self.flush()
        self.close_with()
        if self.stopped:   # what it left is not known: not judged, never a pass
            self.lines.append(Line("stmt", 'verdict(stopped="%s", why="%s")' % (
                esc(self.stop_site or "?"), esc(self.stop_why or "the recorder stopped"))))
            return
        gc.collect()
        self.flush()
        self.close_with()
        from torch._subclasses.fake_tensor import FakeTensorMode, FakeTensorConverter
        from torch._subclasses.meta_utils import MetaConverter
        from torch._subclasses.fake_tensor import FakeTensor
        import os
        import warnings
        alive = [o for o in self.objs.values() if o.kind != "grad"]
        alive.sort(key=lambda o: (o.name[0], int("".join(c for c in o.name if c.isdigit()) or 0)))
        paths = locate({o.oid: o for o in alive}, roots, self)
        paths.update(self.held_inside({o.oid: o for o in alive if o.oid not in paths}))
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
        end = ""   # the program's true end, where the verdict is (its last event's site else)
        if self.end and self.end[0]:
            end = ', ended_at="%s", ended="%s"' % (esc(self.end[0]), esc(self.end[1]))
        self.lines.append(Line("stmt", 'verdict(fail_on="%s"%s%s)' % (
            fail_on or "lost,accumulating",
            ', suppress="%s"' % esc(os.path.abspath(suppress)) if suppress else "", end)))
        modes = convs = fakes = 0
        with warnings.catch_warnings():    # isinstance() on torch.distributed.reduce_op warns
            warnings.simplefilter("ignore")
            for x in gc.get_objects():     # a region's: what it made (before_region)
                if isinstance(x, FakeTensor):
                    fakes += 1
                elif isinstance(x, FakeTensorMode):
                    modes += 1
                elif isinstance(x, (FakeTensorConverter, MetaConverter)):
                    convs += 1
        fins = 0
        for f, info in list(weakref.finalize._registry.items()):
            if f in self.before_fins:
                continue
            fn = getattr(info.func, "__qualname__", "")
            if fn.endswith("del_ten") and "_subclasses" in getattr(info.func, "__module__", ""):
                fins += 1
        why = ', "%s kept this many after gc.collect()"' % self.KEPT
        self.left = {"mode": modes, "converter": convs, "fake": fakes,
                     "recorded": sum(1 for o in alive if o.kind in SUBJECTS and
                                     o.oid not in self.adopted)}
        if not self.adopted:     # an adopted mode is alive, yet not counted (frozen)
            self.lines.append(Line("expect", 'expect live("mode") == %d%s' % (modes, why)))
            self.lines.append(Line("expect", 'expect live("converter") == %d%s' % (convs, why)))
        self.lines.append(Line("expect", 'expect live("fake") == %d%s' % (fakes, why)))
        self.lines.append(Line("expect", 'expect live("finalizer") == %d, '
                               '"weakref.finalize objects PyTorch registered and still holds '
                               'after gc.collect()"' % fins))
        self.stopped = True

    def held_inside(self, rest):
        """{oid: path} of what PyTorch's own state holds of rest (what no
        root of the program reaches), written as holds: none in 1.13."""
        return {}

    def install(self):
        from torch._subclasses import fake_tensor as ft, meta_utils as mu
        rec = self
        FM, FC, MC = ft.FakeTensorMode, ft.FakeTensorConverter, mu.MetaConverter
        m_init, c_init, c_call = FM.__init__, FC.__init__, FC.__call__
        mc_init, mc_call, disp = MC.__init__, MC.__call__, FM.__torch_dispatch__

        mode_init = rec.outermost_init(m_init, rec.on_mode)
        conv_init = rec.outermost_init(c_init, rec.on_fc)   # safe: nothing once stopped

        def conv_call(self, fake_mode, t, device=None, *a, **k):
            return rec.on_convert(c_call, self, fake_mode, t, device, a, k)

        def meta_init(self, *a, **k):
            mc_init(self, *a, **k)
            if rec.init_depth == 0:
                rec.safe(rec.on_mc, self)

        def dispatch(self, func, types, args=(), kwargs=None):
            return rec.on_dispatch(disp, self, func, types, args, kwargs)

        mode_init, conv_init = locked(rec, mode_init), locked(rec, conv_init)
        conv_call = locked(rec, conv_call)
        meta_init, meta_call = locked(rec, meta_init), meta_hook(rec, mc_call)
        dispatch = locked(rec, dispatch)
        self.saved = [(c, n, c.__dict__.get(n)) for c, n in (
            (FM, "__init__"), (FC, "__init__"), (FC, "__call__"), (MC, "__init__"),
            (MC, "__call__"), (FM, "__torch_dispatch__"))]
        FM.__init__, FC.__init__, FC.__call__ = mode_init, conv_init, conv_call
        MC.__init__, MC.__call__, FM.__torch_dispatch__ = meta_init, meta_call, dispatch
        self.install_graphs(locked)

    def uninstall(self):
        """PyTorch's own entry points back (a recorded region's end)."""
        for c, n, v in reversed(getattr(self, "saved", [])):
            if v is None:
                delattr(c, n)
            else:
                setattr(c, n, v)
        self.saved = []

    def before_region(self):
        """A recorded region (fakegc.recording): the fakes, modes, converters
        and finalizers that exist before it are left out of its live()
        counts. The objects that exist are frozen (gc.freeze: moved to the
        collector's permanent generation), so that the region's end collects
        and counts only what the region made (gc.get_objects() leaves the
        frozen ones out) instead of walking the whole heap twice; end_region
        unfreezes them. A cycle of objects from before that the region
        makes garbage is then collected after the region, not at its end."""
        gc.freeze()
        self.frozen = True
        self.before_fins = set(weakref.finalize._registry)

    def end_region(self):
        if getattr(self, "frozen", False):
            gc.unfreeze()
            self.frozen = False
