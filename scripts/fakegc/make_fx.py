"""make_fx's graphs (torch.fx.experimental.proxy_tensor, PyTorch 1.13.1):
what a GraphModule holds and what holds it, for the recorder.

make_fx(f, tracing_mode="fake") traces f under a FakeTensorMode of its own
and returns a GraphModule. Each node's meta["val"] is the fake it stood
for, and each traced fake holds a Proxy of its node in its __dict__
(set_proxy_slot: obj.__dict__[proxy_slot][tracer] = proxy; Proxy -> Node ->
Graph -> GraphModule), so graph and fakes are one cycle, which Python's
collector frees once the program drops the graph. Unless a fake in it is a
view: the view holds its base's TensorImpl from C++, where the collector
cannot see it (THPVariable_subclass_traverse), and the base's proxy slot
then keeps the whole graph, its fakes and their mode, for good
(tests/record/probe_make_fx.py). 2.x keeps the rule but not the cycle: its
set_proxy_slot puts the proxy in the tracer's tensor_tracker, keyed weakly
by the fake (proxy_tensor.py), so a fake does not hold its graph and 2.6
and 2.14 keep none of these graphs; torch2.py records no graph.

The recording says it as the language can: `g1 = graph_module()` when the
GraphModule is made, `g1.NODE = x3` for each node's meta["val"] (a node
named as one of the language's counters gets a `node_` prefix), and
`x3.proxy = g1` for each fake whose proxy slot holds a node of it (`proxy2`
and on for a fake in more than one graph). When a graph dies, it died in a
collection: `gc(sweep=false)` (the collector alone, no converter's sweep)
is written before the next event, after the deaths of that collection.
"""

# the language's attribute words (fakegc list words): not a user attribute
COUNTERS = frozenset((
    "grad memo_fake memo_meta memo_storage pending hits misses sweep_every check_count "
    "memo_tensor_ids memo_storage_ids memo_constants cache_size tracked size bypasses "
    "unbacked epoch").split())


class Graphs:
    """A mix-in of the 1.13 and 2.x recorders: GraphModule.__init__ is hooked."""

    cycle_freed = False
    SNAPSHOTS = False        # 2.x: a node's meta["val"] is a snapshot of its fake

    def install_graphs(self, locked):   # locked(rec, f): one event at a time
        try:
            import torch.fx as fx
        except ImportError:
            return
        GM, rec = fx.GraphModule, self
        gm_init = GM.__init__

        def init(gm, *a, **k):
            gm_init(gm, *a, **k)
            rec.safe(rec.on_graph_module, gm)

        self.saved.append((GM, "__init__", GM.__dict__.get("__init__")))
        GM.__init__ = locked(rec, init)

    def graph_vals(self, gm):
        """(attribute, Obj, fake) of each recorded fake in a node's meta["val"]."""
        from torch._subclasses.fake_tensor import FakeTensor
        from torch.utils._pytree import tree_flatten
        out = []
        for node in gm.graph.nodes:
            vals = tree_flatten(node.meta.get("val"))[0]
            for i, v in enumerate(vals):
                o = self.objs.get(id(v)) if isinstance(v, FakeTensor) else None
                if o is None or o.kind not in ("fake", "op"):
                    continue
                attr = node.name if node.name not in COUNTERS else "node_" + node.name
                out.append((attr if len(vals) == 1 else "%s_%d" % (attr, i), o, v))
        return out

    def proxied(self, v, graph):
        """The fake v's proxy slot holds a Proxy of a node of graph."""
        from torch.fx.experimental import proxy_tensor as pt
        slots = v.__dict__.get(getattr(pt, "proxy_slot", None))
        try:
            return any(getattr(getattr(getattr(p, "proxy", p), "node", None), "graph", None)
                       is graph for p in (slots or {}).values())   # _ProxyTensor(proxy, ...)
        except Exception:
            return False

    def snapshots(self, gm):
        """2.x: each node's meta["val"] is snapshot_fake(v), a fake of v's
        mode made by FakeTensor(mode, detach(meta), device) outside any
        dispatch or conversion (fast_detach; no memo entry, no finalizer):
        written where the graph is made, as a constructor under `with MODE`
        (an op output with no memo entry), so that the graph holds it."""
        from torch._subclasses.fake_tensor import FakeTensor
        from torch.utils._pytree import tree_flatten
        owners = None
        for node in gm.graph.nodes:
            for v in tree_flatten(node.meta.get("val"))[0]:
                if isinstance(v, FakeTensor) and id(v) not in self.objs:
                    if owners is None:
                        owners = self.storage_owners()
                    self.snap_src = owners.get(self.meta_storage(v))
                    try:
                        self.op_output(v)
                    finally:
                        self.snap_src = None

    snap_src = None          # the recorded fake whose storage the snapshot shares

    def meta_storage(self, x):
        """The address of a fake's meta storage, read past FakeTensor's own
        methods (no dispatch, no constant dropped)."""
        base = getattr(self.torch._C, "TensorBase", None) or self.torch._C._TensorBase
        return base.untyped_storage(x)._cdata

    def storage_owners(self):
        """{meta storage address: Obj} of the live recorded fakes, a
        conversion's before an op output's. A snapshot is fast_detach of
        its fake: a fake over the same meta storage, which keeps that
        storage's storage_memo entry (a weak-valued memo whose value, the
        storage's Python object, lives while a tensor uses the storage):
        written over the recorded fake's storage, `op_out(empty(0)).set_(
        F.storage(), OFFSET, SIZES, STRIDES)`, it keeps the model's entry
        as long (2.6 and 2.14: after a GraphModule is made, its inputs'
        entries stay while the graph lives)."""
        out = {}
        for o in sorted((o for o in self.objs.values() if o.kind in ("fake", "op")),
                        key=lambda o: o.kind != "fake"):
            ref = self.fins.get(o.oid)
            x = ref() if ref is not None else None
            if x is not None:
                out.setdefault(self.meta_storage(x), (o, x.dtype))
        return out

    def on_graph_module(self, gm):
        if self.stopped or self.conv_depth or self.disp_depth:
            return
        if self.SNAPSHOTS:
            self.snapshots(gm)
        vals = self.graph_vals(gm)
        if not vals or not self.tick():
            return
        _, name, site = self.made("graph", "g", gm)
        self.emit("%s = graph_module()" % name, site + "  make_fx's GraphModule")
        proxies = self.__dict__.setdefault("nproxies", {})
        for attr, vo, v in vals:
            self.emit("%s.%s = %s" % (name, attr, vo.name), "node %s's meta['val']" % attr)
        for attr, vo, v in vals:
            if self.proxied(v, gm.graph) and proxies.get((vo.oid, id(gm))) is None:
                n = sum(1 for k in proxies if k[0] == vo.oid) + 1
                proxies[(vo.oid, id(gm))] = n
                self.emit("%s.%s = %s" % (vo.name, "proxy" if n == 1 else "proxy%d" % n, name),
                          "its proxy slot: Proxy -> Node -> Graph")

    def write_death(self, o):
        super().write_death(o)
        if o.kind == "graph":
            self.cycle_freed = True
            proxies = self.__dict__.get("nproxies", {})
            for k in [k for k in proxies if k[1] == o.oid]:
                del proxies[k]

    def flush(self):
        if self.cycle_freed and not self.stopped:
            self.cycle_freed = False
            self.close_with()
            self.emit("gc(sweep=false)", "Python's collector freed a graph's cycle")
        super().flush()


__all__ = ["Graphs"]
