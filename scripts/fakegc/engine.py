"""The recording engine: recorded objects, events, deaths and their order,
the program's sites and rounds, the real tensors' descriptions, and the
scenario's header. What a PyTorch line observes (its hooks and counters)
is in its own module (torch113.py), a subclass of Recorder."""

import gc
import os
import sys
import weakref

from .scn import Line, Lines, Spill, batch_units, esc, flat, tup, units_of

PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep
OWN_FILES = set()    # the recorder's files outside the package (scripts/record.py)


def own(fn):
    """Is fn one of the recorder's own files (never the program's)?"""
    fn = os.path.abspath(fn)
    return fn.startswith(PKG) or fn in OWN_FILES


DTYPES = {}          # torch dtype -> scenario dtype name (filled after import)
COUNTERS = ("memo_fake", "memo_meta", "memo_storage", "pending", "hits",
            "misses", "sweep_every")
MC_COUNTERS = COUNTERS[1:]


def _dtypes(torch):
    return {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32",
            torch.float64: "f64", torch.complex64: "c64", torch.complex128: "c128",
            torch.int8: "i8", torch.uint8: "u8", torch.int32: "i32",
            torch.int64: "i64", torch.bool: "bool"}


class Obj:
    """One recorded object. kind: real fake op meta mode conv keeper grad."""
    __slots__ = ("name", "kind", "key", "oid", "owner", "stor", "sref",
                 "geom", "mode", "tref")

    def __init__(self, kind, oid):
        self.kind, self.oid = kind, oid
        self.name = self.key = self.owner = self.stor = self.sref = None
        self.geom = self.mode = None
        self.tref = None     # threads, 2.x: a weak ref to a fake's C++ tensor


COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


class Loops:
    """The loops of one source file, from its syntax tree (ast): every `for`,
    `async for` and `while`, and every comprehension and generator
    expression, each with the scope that runs it (the function, lambda,
    class or module whose code object executes its iterations) and the
    line whose `line` events count its iterations (a `for`/`while` header;
    a comprehension's innermost `for` clause)."""

    SCOPES = ("FunctionDef", "AsyncFunctionDef", "Lambda", "ClassDef")

    def __init__(self, path):
        import ast
        self.loops = []       # (first line, last line, count line, scope, is_comp)
        self.scopes = {}      # (kind, name, first line) -> scope id
        self.memo = {}        # (code, line) -> around()
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read(), path)
        except (OSError, SyntaxError, ValueError):
            return
        inline = sys.version_info >= (3, 12)   # PEP 709: list/set/dict comps inlined
        comps = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

        def walk(node, scope):
            for child in ast.iter_child_nodes(node):
                sc = scope
                kind = type(child).__name__
                if kind in self.SCOPES:
                    first = min([child.lineno] + [d.lineno for d in
                                                  getattr(child, "decorator_list", [])])
                    name = getattr(child, "name", "<lambda>")
                    sc = ("def", name, child.lineno, first)
                    self.scopes[("def", name, child.lineno)] = sc
                    self.scopes[("def", name, first)] = sc
                if isinstance(child, ast.While) or (
                        isinstance(child, (ast.For, ast.AsyncFor)) and
                        not self.over_a_model(child.iter)):
                    self.loops.append((child.lineno, child.end_lineno, child.lineno,
                                       scope, False))
                elif isinstance(child, comps):
                    count = child.generators[-1].target.lineno
                    own = not inline or isinstance(child, ast.GeneratorExp)
                    if own:
                        sc = ("comp", child.lineno)
                    if not any(self.over_a_model(g.iter) for g in child.generators):
                        self.loops.append((child.lineno, child.end_lineno, count, sc, own))
                walk(child, sc)

        walk(tree, ("module",))

    # A model's own tensors and parts: a loop over them is bounded by the
    # model (converting its parameters once, as Dynamo's setup does, keeps
    # one fake each, and that is no growth), so its iterations are not
    # rounds; a loop around it may be.
    MODEL_PARTS = ("parameters", "named_parameters", "buffers", "named_buffers",
                   "state_dict", "modules", "named_modules", "children", "named_children")

    @classmethod
    def over_a_model(cls, it):
        import ast
        return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
                   n.func.attr in cls.MODEL_PARTS for n in ast.walk(it))

    def scope_of(self, code):
        if code.co_name == "<module>":
            return ("module",)
        if code.co_name in COMPREHENSIONS:
            return ("comp", code.co_firstlineno)
        name = "<lambda>" if code.co_name == "<lambda>" else code.co_name
        return self.scopes.get(("def", name, code.co_firstlineno))

    def heads(self, code):
        """The loops of code's own scope: {count line: (first, last)}."""
        scope = self.scope_of(code)
        return {count: (a, b) for a, b, count, sc, comp in self.loops if sc == scope}

    def around(self, code, line):
        """The loops of code's own scope around line, innermost first: their
        count lines."""
        k = (code, line)
        r = self.memo.get(k)
        if r is None:
            scope = self.scope_of(code)
            hits = sorted((b - a, count) for a, b, count, sc, comp in self.loops
                          if sc == scope and a <= line <= b)
            r = self.memo[k] = [count for _, count in hits]
        return r


_LOOPS = {}     # path -> ((mtime, size), Loops): a file parsed once per process


def loops_of_file(path):
    """The file's Loops, parsed again only when the file changed (a test
    runner records many regions of one module)."""
    try:
        st = os.stat(path)
        key = (st.st_mtime_ns, st.st_size)
    except OSError:
        return Loops(path)
    hit = _LOOPS.get(path)
    if hit is None or hit[0] != key:
        hit = _LOOPS[path] = (key, Loops(path))
    hit[1].memo.clear()     # keyed by code objects: not kept past one recording
    return hit[1]


class Entry:
    """One entry of one loop in one frame (so on one thread): its count
    line's hits since the loop was entered. The rounds it ran are the hits,
    less the test that ended it when it ended by its test (not by `break`,
    `return` or an exception)."""

    __slots__ = ("head", "hits", "ran", "frame")

    def __init__(self, head, frame):
        self.head, self.hits, self.ran, self.frame = head, 0, None, frame

    def close(self, last):
        self.ran = self.hits - (last == self.head)
        self.frame = None

    def total(self):
        if self.ran is None:       # still running at the end of the recording
            return self.hits - (self.frame.last == self.head)
        return self.ran


class FrameRounds:
    """The loops running in one of the program's frames: its line tracer.
    A loop is entered when its count line runs while it is not running, and
    left when a line outside it runs or the frame returns (a generator's
    return is a yield: its loops go on when it resumes)."""

    __slots__ = ("heads", "open", "last", "gen", "call", "leave")

    def __init__(self, heads, code, call, leave):
        self.heads = heads            # count line -> (first, last) of its loop
        self.open = {}                # count line -> its running Entry
        self.last = 0
        self.gen = bool(code.co_flags & 0x2a0)   # generator, coroutine, async generator
        self.call = call              # which call of its function on its thread it is
        self.leave = leave            # line -> the count lines of the loops it is outside

    def trace(self, frame, event, arg):
        if event == "line":
            line = frame.f_lineno
            opened = self.open
            if opened:
                out = self.leave.get(line)
                if out is None:
                    out = self.leave[line] = tuple(h for h, (a, b) in self.heads.items()
                                                   if not a <= line <= b)
                for head in out:
                    if head in opened:
                        opened.pop(head).close(self.last)
            if line in self.heads:
                e = opened.get(line)
                if e is None:
                    e = opened[line] = Entry(line, self)
                e.hits += 1
            self.last = line
        elif event == "return" and not self.gen:
            for e in self.open.values():
                e.close(self.last)
            self.open = {}
        return self.trace


def dynamo_made(code):
    """Whether code is one TorchDynamo made of a program's function (its
    compiled frame): such a code is weakly keyed in Dynamo's
    CleanupManager, whose hooks delete the compiled graphs from the
    program's globals when it dies (torch._dynamo.reset()), so nothing of
    the recorder may hold it; its frames are not traced (the graph's ops,
    no event of the program's own)."""
    du = sys.modules.get("torch._dynamo.utils")
    cm = getattr(getattr(du, "CleanupManager", None), "instance", None)
    return cm is not None and id(code) in getattr(cm, "values", ())


class ThreadKey:
    """A thread as the rounds count it: its functions' calls are keyed by
    this, not by its Thread, which nothing of the recorder keeps (a
    thread's key lives in its threading.local, then only in the keys that
    name it). pool: the key of the pool whose worker it is (found at its
    first task; 0 for a pool not known); task: ((code, pool, POOL), its
    call) of the task it runs."""
    __slots__ = ("pool", "task")

    def __init__(self):
        self.pool, self.task = None, None


class Rounds:
    """Rounds of the program's loops: every line the program's own code runs
    is counted, and every call of its functions (sys.settrace, local
    tracing in the program's frames only). The round of an event is the
    count of iterations of the innermost loop around it (Loops: any `for`,
    `while`, comprehension or generator expression, whatever it iterates:
    a range, a list, a DataLoader, map's items), in its frame or an outer
    one of the program's. No loop anywhere: the calls of the innermost
    function of the program's around it (a function called N times grows
    with the program's progress as a loop would); module-level code outside
    any loop is one round.

    A pool's tasks: a thread whose program code a library calls (a
    ThreadPoolExecutor's or a multiprocessing ThreadPool's worker, not a
    Thread's own target or run()) runs the program's tasks for it. The
    calls of a task function by one pool, on all its threads, are one
    series in the order they started, outermost around whatever the task
    does: how the pool spreads its tasks over its threads changes no round
    count, and two pools running one function are two series (a pool that
    logs what it makes grows with its own tasks, not with another's)."""

    POOL = "pool"

    def __init__(self, rec):
        self.rec = rec
        self.calls = {}       # (code, 0, ThreadKey) or (code, pool, POOL) -> calls of a function
        self.pools = {}       # id(pool) -> (weak reference or None, its key), until it dies
        self.npools = 0       # pools seen (their keys: 1, 2, ...)
        self.files = {}       # filename -> Loops
        self.prog = {}        # code -> is the program's
        self.heads = {}       # code -> {count line: (first, last)} of its scope's loops
        self.leaves = {}      # code -> {line: count lines of its loops not around it}

    def is_prog(self, code):
        r = self.prog.get(code)
        if r is None:
            if dynamo_made(code):
                return False
            fn = os.path.abspath(code.co_filename)
            r = fn.startswith(self.rec.pdir + os.sep) and not own(fn)
            self.prog[code] = r
        return r

    def start(self):
        import threading
        self.tls = threading.local()    # a thread's ThreadKey (idents are reused, keys not)
        self.main, self.threading_file = self.new_key(), threading.__file__
        threading.settrace(self.gtrace)    # threads started from now on count too
        sys.settrace(self.gtrace)
        # Threads switch where they block (I/O, locks, torch ops that release
        # the GIL), not every 5 ms in the middle of a chain of weakref
        # callbacks: PyTorch's memo callbacks of a death and the recorder's
        # own then run together, and the counters another thread reads
        # never show a death the recording has not said yet. Any schedule
        # is one the program allows; this is the one recorded.
        self.switch = sys.getswitchinterval()
        sys.setswitchinterval(1000.0)

    def stop(self):
        import threading
        threading.settrace(None)
        sys.settrace(None)
        sys.setswitchinterval(getattr(self, "switch", 0.005))

    def gtrace(self, frame, event, arg):
        code = frame.f_code
        if self.is_prog(code):
            t = frame.f_trace
            if getattr(t, "__self__", None).__class__ is FrameRounds:
                return t                   # a generator resumed: its rounds go on
            t = self.key()
            k = (code, 0, t)
            call = self.calls[k] = self.calls.get(k, 0) + 1
            if t is not self.main and self.is_task(frame):
                k = (code, self.pool_of(t), self.POOL)
                n = self.calls[k] = self.calls.get(k, 0) + 1
                t.task = (k, n)
            return self.local(frame, call)
        return None

    def new_key(self):
        k = self.tls.key = ThreadKey()
        return k

    def key(self):
        """The current thread's ThreadKey (made at its first call)."""
        try:
            return self.tls.key
        except AttributeError:
            return self.new_key()

    def pool_of(self, t):
        """The key of the pool whose worker thread t (the current thread) is,
        found at its first task: its target's first argument (what it
        refers to when a weak reference): a ThreadPoolExecutor, a
        ThreadPool's task queue. A number per pool, kept by id with a weak
        reference that forgets it when the pool dies (a new pool at its
        address is a new series); 0 when the thread names no pool."""
        if t.pool is None:
            import threading
            args = getattr(threading.current_thread(), "_args", None) or (None,)
            p = args[0]
            if isinstance(p, weakref.ReferenceType):
                p = p()
            if p is None:
                t.pool = 0
                return 0
            got = self.pools.get(id(p))
            if got is None:
                pools = self.pools
                try:
                    ref = weakref.ref(p, lambda r, i=id(p): pools.pop(i, None))
                except TypeError:
                    ref = None    # no weak reference: its id alone
                self.npools += 1
                got = pools[id(p)] = (ref, self.npools)
            t.pool = got[1]
        return t.pool

    def is_task(self, frame):
        """frame, of the program's, is a task a pool runs: no frame of the
        program's under it, and called by a library, not by the thread's
        own start (threading's run() or bootstrap)."""
        f = frame.f_back
        if f is None or f.f_code.co_filename == self.threading_file:
            return False
        while f is not None:
            if self.is_prog(f.f_code):
                return False
            f = f.f_back
        return True

    def local(self, frame, call):
        """The line tracer of one of the program's frames, the call-th of
        its function on its thread (None when its code has no loop of its
        own). A generator or coroutine gets one all the same, with no line
        events: its resumes are no calls, and the round of what it makes is
        its own call, however many others started before it resumed."""
        code = frame.f_code
        heads = self.heads.get(code)
        if heads is None:
            ls = self.loops_of(code)
            heads = self.heads[code] = ls.heads(code)
            self.leaves[code] = {}
        if heads:
            return FrameRounds(heads, code, call, self.leaves[code]).trace
        if code.co_flags & 0x2a0:
            frame.f_trace_lines = False
            return FrameRounds(heads, code, call, self.leaves[code]).trace
        return None

    def loops_of(self, code):
        ls = self.files.get(code.co_filename)
        if ls is None:
            ls = self.files[code.co_filename] = loops_of_file(code.co_filename)
        return ls

    def round_of(self, frame):
        """The loops around frame's line, innermost first, in its frame and
        the program's outer ones: [(key, round)], key naming what counts
        the rounds (the Entry of a loop: this entry of it, on this frame's
        thread). No loop anywhere: [((code, 0, thread), call)] of the
        innermost function of the program's around it (which call of it
        this frame is); module-level code
        outside any loop: []. In a pool's task, its call in the pool's
        series is outermost, and the innermost function's calls are not
        counted."""
        f, func, call, chain = frame, None, None, []
        while f is not None:
            code = f.f_code
            if self.is_prog(code):
                st = getattr(f.f_trace, "__self__", None)
                mine = st.__class__ is FrameRounds
                opened = st.open if mine else {}
                for line in self.loops_of(code).around(code, f.f_lineno):
                    e = opened.get(line)
                    if e is not None:
                        chain.append((e, e.hits))
                if func is None and code.co_name != "<module>" and \
                        code.co_name not in COMPREHENSIONS:
                    func, call = code, st.call if mine else None
            f = f.f_back
        t = self.key()
        task = t.task if t is not self.main else None
        if task is not None:
            chain.append(task)
        elif not chain and func is not None:
            k = (func, 0, t)
            chain.append((k, call or self.calls.get(k, 0)))
        return chain

    def total(self, key, rnd):
        """The rounds a loop's entry ran (known at the end); a function's
        calls on its thread."""
        n = key.total() if key.__class__ is Entry else self.calls.get(key, 0)
        return max(rnd, n)

    def pick(self, chain):
        """The loop whose rounds an event is counted in: the outermost that
        ran more than one round (the program's progress at its coarsest
        level that repeats: a training loop's steps, not the parameters of
        one step; the batches when there is one epoch). (key, round,
        rounds), or None."""
        for key, rnd in reversed(chain):
            total = self.total(key, rnd)
            if total > 1:
                return key, rnd, total
        return None


def locked(rec, f):
    """A hooked entry point: one event at a time, whatever the thread
    (Recorder.lock), and no tracing inside it. Rounds count the program's
    own lines and calls; PyTorch's frames under the hook and the recorder's
    own are neither, and a trace call on each of their calls was half of the
    recorder's cost. The program's frames keep their local trace."""
    gettrace, settrace, lock = sys.gettrace, sys.settrace, rec.lock

    def w(*a, **k):
        tr = gettrace()
        if tr is None:
            with lock:
                return f(*a, **k)
        settrace(None)
        try:
            with lock:
                return f(*a, **k)
        finally:
            settrace(tr)
    return w


def meta_hook(rec, orig):
    """MetaConverter.__call__ hooked (orig: PyTorch's): inside a conversion
    on this thread (the mode's own meta conversion, already one event) it
    is PyTorch's own call, with no lock or trace switch; any other goes to
    rec.on_meta, locked."""
    owned = rec.lock._is_owned

    def on_meta(self, t, *a, **k):
        return rec.on_meta(orig, self, t, a, k)
    hooked = locked(rec, on_meta)

    def meta_call(self, t, *a, **k):
        if rec.conv_depth and owned():
            return orig(self, t, *a, **k)
        return hooked(self, t, *a, **k)
    return meta_call


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
    """What every PyTorch line records alike; a line's module adds read(),
    its events, finish() and install()."""

    counters = COUNTERS       # the memo counters written as expectations
    defaults = (None, ())     # (counters, ((counter, the value a fresh mode starts from)))
    # the header: how to replay the recording and what it says
    INTRO = (
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
    )
    CONFIG = ['config sweep = "periodic"   # PyTorch 1.13.1\'s policy: the expectations '
              'are its counters (--sweep eager overrides, see --compare)',
              'config end_check = "off"    # the verdict() at the program\'s end judges '
              'what it left behind']

    def __init__(self, torch, program, max_events=0, lang=1):
        self.torch = torch
        self.program = os.path.abspath(program)
        self.pdir = os.path.dirname(self.program)
        self.shown = ""           # the program's folder as given (sites: "sub/prog.py:12")
        self.tdir = os.path.dirname(torch.__file__) + os.sep
        self.max_events = max_events
        self.lang = lang          # 2: also write the language's version 2 forms
        self.events = 0
        self.stopped = False
        self.internal = False     # the recorder itself failed (exit 3)
        self.refused = False      # the program did what cannot be recorded (threads)
        # tests: make the recorder fail at event N, to prove the failure path
        self.fault = int(os.environ.get("FAKEGC_RECORD_FAULT", "0") or 0)
        self.stop_site = None
        self.stop_why = None      # with stop_site: why recording stopped there
        self.lines = []           # the recording's lines not yet in the spill file
        self.spill = None         # scn.Spill: the lines written as they go (spill_to)
        self.spilled = 0          # how many lines went there
        self.shared = Lines()     # lines never changed once written, one object each
        self.expect_lines = {}    # (name, counter, value) -> its shared expect Line
        self.notes = []           # header lines: what could not be expressed
        self.notes_seen = set()
        self.objs = {}            # id(obj) -> Obj while PyTorch's object lives
        self.reals = {}           # the same, real tensors only (dead ones dropped lazily)
        self.need = False         # a death's counters are still to be read
        self.deferred = None      # deaths seen inside the current event, or None
        self.scope = 0            # depth of events (conversion, op) in progress
        self.keep_checks = []     # (Obj, where its del is in lines): storage still held?
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
        self.before_fins = set()  # a recorded region: the finalizers registered before it
        self.adopted = set()      # ... and the ids of the modes made before it (mode_rec)
        self.left = None          # at the end: {kind: count} of what the recording left
        self.stats = {"conversions": 0, "deaths": 0, "op_outputs": 0, "modes": 0}
        self.prog_modules = ["__main__"]
        self.site_frame = None
        self.site_names = {}      # co_filename -> how its sites are written ("": never)
        self.at_lines = []        # the at() Lines, their rounds known at the end
        self.at_sites = {}        # site -> (file, line) of its at(), () if it has none
        self.rounds = Rounds(self)
        self.ended = None         # how the program ended, when not normally
        self.end = None           # ("prog.py:31" or None, "exit 0"): where and how it ended
        self.pid = os.getpid()    # a forked child does not write
        import threading
        self.main_thread = threading.main_thread()
        self.threading = threading
        # Threads: Python runs them one at a time (the GIL), so the events
        # have one order, the one they happened in. Each hooked entry point
        # and each death holds this lock for its whole length, so that an
        # event of one thread never interleaves with another's (the
        # recorder's state is one), and the recording says the events in
        # that order, each thread's marked where it starts.
        self.lock = threading.RLock()
        self.last_thread = weakref.ref(self.main_thread)   # weakly: a thread ends with its pool
        self.threads = set()      # the threads (other than the main one) that made events
        self.foreign = []         # deaths of other threads during an event (died)
        self.fins = {}            # oid -> its death's weakref (watch), until it runs
        self.pres = {}            # oid -> the weakref of its death's start (refresh)
        self.early = {}           # oid -> Obj said dead before its callback ran
        self.dying = None         # oid whose death's first callback is running here
        self.reads_held = False   # counters are read after the event's own lines
        self.going = []           # threads: fakes said dead whose death may not have ended


    # -------------------------------------------------------------- output

    def site(self):
        f = sys._getframe(2)
        names = self.site_names
        while f is not None:
            fn = f.f_code.co_filename
            name = names.get(fn)
            if name is None:
                name = names[fn] = self.site_name(fn)
            if name:
                self.site_frame = f
                return "%s:%d" % (name, f.f_lineno)
            f = f.f_back
        self.site_frame = None
        return "?"

    def site_name(self, fn):
        """How a site in file fn is written ("" for a file whose lines are
        never the program's: torch's, the recorder's, importlib's)."""
        if fn.startswith(self.tdir) or own(fn) or "importlib" in fn or \
                fn.endswith("runpy.py") or fn.endswith("contextlib.py"):
            return ""
        if fn.startswith(self.pdir + os.sep):
            return os.path.join(self.shown, os.path.relpath(fn, self.pdir))
        return os.path.basename(fn)

    def mark(self, site):
        """at("FILE", LINE): what follows was done at the program's site (the
        creating site of what it makes; one at() per event is one round of
        whatever the program does at that line)."""
        where = self.at_sites.get(site)
        if where is None:
            fn, _, ln = site.rpartition(":")
            where = self.at_sites[site] = (esc(fn), ln) if fn and ln.isdigit() else ()
        if where:
            line = Line("stmt", "")
            # (file, line, key, round, key, round...): a million of them stay small
            line.at = where + tuple(x for kr in self.rounds.round_of(self.site_frame)
                                    for x in kr)
            self.at_lines.append(line)
            self.lines.append(line)
        self.site_frame = None    # a frame kept would keep the program's locals alive

    def named_mark(self, label):
        """fakegc.mark(label): `mark("LABEL")` at the program's site (the
        verdict says after which marks each group was made; the timeline
        draws it). Whitespace runs become one space. What the deaths before
        it changed is said first (flush), so the counters read before the
        mark are the ones it follows."""
        site = self.site()
        self.site_frame = None
        self.flush()
        self.lines.append(Line("stmt", 'mark("%s")' % esc(" ".join(label.split())), site))

    def fill_at(self):
        """at(FILE, LINE, ROUND, ROUNDS): the round of the loop around the
        line, of the rounds that loop ran (known at the end). Once: a line
        filled keeps its text."""
        lines, self.at_lines = self.at_lines, []
        for line in lines:
            c = line.at[2:]
            line.text, line.at = self.at_text(line.at[0], line.at[1],
                                              list(zip(c[::2], c[1::2])))

    def at_text(self, fn, ln, chain):
        """An at() line's text and, when it has rounds, (file, line, rounds,
        round): chain is [(key, round)] of the loops around it (round_of)."""
        picked = self.rounds.pick(chain)
        if picked is None:
            return 'at("%s", %s, 1, 1)' % (fn, ln), None
        key, rnd, total = picked
        return 'at("%s", %s, %d, %d)' % (fn, ln, rnd, total), (fn, ln, total, rnd)

    def note(self, text):
        if text not in self.notes_seen:
            self.notes_seen.add(text)
            self.notes.append(text)

    def emit(self, text, site=""):
        self.lines.append(self.shared.get("stmt", text, site))

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
            self.watch(self.fins, target, self.died, o.oid)
        return o.name

    def made(self, kind, prefix, x):
        """The program made x (a mode, a converter, a graph) at its site:
        what is pending is said first, then at() of the site, and x is
        bound to a new name (its death watched). (Obj, name, site)."""
        self.flush()
        self.close_with()
        site = self.site()
        self.mark(site)
        o = Obj(kind, id(x))
        return o, self.bind(o, prefix, site, x), site

    @staticmethod
    def watch(table, target, cb, oid):
        """cb(oid) when target dies, from a weak reference kept in
        table[oid] until then (a weakref.ref with a callback: CPython runs
        it where it would run a weakref.finalize registered at the same
        time, newest first, for less than half the cost and with nothing
        left registered after the death). A later watch of the same oid
        replaces this one, which then never runs."""
        def fire(r):
            if table.get(oid) is r:
                del table[oid]
            cb(oid)
        table[oid] = weakref.ref(target, fire)

    def tick(self):
        """Count an event; True when recording goes on."""
        if self.stopped:
            return False
        if os.getpid() != self.pid:
            self.stopped = True      # a forked child: only the started process is recorded
            return False
        t = self.threading.current_thread()
        if t is not self.last_thread():
            self.last_thread = weakref.ref(t)
            self.close_with()
            self.lines.append(Line("comment", "# thread: %s" % t.name, ""))
            self.threads.add(t.name)
        if self.max_events and self.events >= self.max_events:
            self.stopped = True
            self.stop_site = self.site()
            self.stop_why = "--max-events %d reached" % self.max_events
            return False
        self.events += 1
        return True

    # ------------------------------------------------------------ counters

    def read_all(self, only):
        """(Obj, its counters) of each live mode and converter, of `only`
        (an id) alone when given; adopted ones left out."""
        out = []
        for table, kind in ((self.modes, "mode"), (self.mcs, "mc"), (self.fcs, "fconv")):
            if not table:
                continue
            if only is not None:
                e = table.get(only)
                items = () if e is None else ((only, e),)
            else:
                items = list(table.items())
            for oid, (o, ref) in items:
                if oid in self.adopted:
                    continue
                x = ref()
                if x is not None:
                    out.append((o, self.read(kind, x)))
        return out

    def deaths_end(self):
        """Threads: the fakes said dead since counters were last read,
        awaited until their deaths have ended in the threads that dropped
        them. PyTorch frees a fake's C++ tensor, its meta storage and that
        storage's memo entry (a weakref callback) after the Python callbacks
        of the fake's death, and the dying thread may be switched out in
        between (memo_storage read one high). Both ends are events read as
        they are: the C++ tensor's weak ref expires (Obj.tref), and no memo
        holds a weak value whose referent died (memo_dead: its callback has
        not popped it yet). The wait gives the GIL to the dying thread, a
        second at most, as await_deaths does."""
        import time
        going, self.going = self.going, []
        t0 = time.monotonic()
        while any(not o.tref.expired() for o in going) or self.memo_dead():
            if time.monotonic() - t0 > 1.0:
                return
            time.sleep(0.0002)

    def memo_dead(self):
        """Whether a memo holds an entry whose weakly held value died and
        whose callback has not removed it yet (the recorders of weak-valued
        memos say; 1.13's are weak-keyed: never)."""
        return False

    def expects(self, only=None):
        """An expect line for each counter that changed since it was last
        said. last[name] keeps each counter's value as said, and under the
        key None the whole last read: a read equal to it says nothing."""
        if self.foreign or self.threads:
            self.drain_foreign()
        if self.going:
            self.deaths_end()
        reads = self.read_all(only)
        while self.foreign:
            self.drain_foreign()   # another thread's death while reading: said first
            reads = self.read_all(only)
        last, lines, cd = self.last, self.lines, self.defaults
        if cd[0] is not self.counters:
            cd = self.defaults = (self.counters, tuple(
                (c, 128 if c == "sweep_every" else 0) for c in self.counters))
            for said in last.values():
                said.pop(None, None)     # other counters now: compared one by one again
        for o, v in reads:
            old = last.get(o.name)
            if old is None:
                old = last[o.name] = {}
            elif old.get(None) == v:
                continue
            for c, d in cd[1]:
                if c in v:
                    x = v[c]
                    if old.get(c, d) != x:
                        lines.append(self.expect_line(o.name, c, x))
                        old[c] = x
            old[None] = v

    def expect_line(self, name, counter, value):
        k = (name, counter, value)
        ln = self.expect_lines.get(k)
        if ln is None:
            if len(self.expect_lines) >= 1 << 16:
                self.expect_lines.clear()
            ln = self.expect_lines[k] = Line("expect", "expect %s.%s == %d" % k)
        return ln

    # -------------------------------------------------------------- deaths

    def died(self, oid):
        """A death (its watch's callback): untraced, as a hook is
        (locked)."""
        tr = sys.gettrace()
        if tr is None:
            return self.died_now(oid)
        sys.settrace(None)
        try:
            self.died_now(oid)
        finally:
            sys.settrace(tr)

    def died_now(self, oid):
        """A death, in whatever thread dropped the object. While another
        thread's event holds the lock, PyTorch's own callbacks of that death
        have already run (its memo no longer counts it) and that event's
        counters will show it: the death waits in `foreign`, written before
        the next counters are read (drain_foreign), never blocking."""
        o = self.early.pop(oid, None)
        if o is not None:   # said already (dead_pending); the death ends now
            return
        if not self.lock.acquire(blocking=False):
            # the object now, by its id: once freed, its id may be a new one's
            o = self.objs.pop(oid, None)
            if o is not None:
                self.foreign.append(o)    # list.append: atomic under the GIL
            return
        try:
            self.safe(self.death, oid)
        finally:
            self.lock.release()

    def await_deaths(self):
        """Threads: an object already dead whose callbacks have not all run
        (a thread switched in the middle of them, PyTorch's memo half
        updated): let the dying thread finish them (it does not wait for
        the lock), up to a second, before counters are read; past that,
        dead_pending says the death as it is."""
        import time
        t0 = time.monotonic()
        while any(ref() is None and oid != self.dying
                  for oid, ref in list(self.fins.items())):
            if time.monotonic() - t0 > 1.0:
                self.dead_pending()
                return
            time.sleep(0.0002)

    def dead_pending(self):
        """Threads: objects already dead whose callback has not run yet (a
        thread switched in the middle of the death's callbacks, after
        PyTorch's own had updated its memo): taken from the finalizer
        watched ones (their callback then does nothing) and said as deaths."""
        for oid, ref in list(self.fins.items()):
            if ref() is None and oid not in self.early:
                o = self.objs.pop(oid, None)
                if o is not None:
                    # its storage goes when the dying thread ends the death:
                    # whether the program still holds it is told after that
                    self.early[oid] = o
                    self.foreign.append(o)

    def drain_foreign(self):
        """Write the deaths other threads made during this thread's event,
        now, before counters are read (not deferred to the event's end).
        PyTorch's callbacks of all of them have run already: no counters
        are read between them (they would show the later ones done), only
        after the last."""
        if self.threads:
            self.await_deaths()
        if self.foreign:
            self.close_with()   # what a death writes (a keeper) is no op of a mode
        while self.foreign:
            o = self.foreign.pop(0)
            if not self.stopped:
                self.write_death(o)

    def death(self, oid):
        """A death's callback (watch). It runs after PyTorch's own finalizers
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
        if (o.kind == "mode" and self.open_with == o.name) or \
                (o.kind == "real" and o.sref is not None and self.threads):
            self.close_with()   # threads: a keeper may go before its del, no op of a mode
        if o.kind == "real" and o.sref is not None:
            self.keep_checks.append((o, self.spilled + len(self.lines)))
        self.lines.append(self.shared.get("stmt", "del " + o.name))
        if o.tref is not None:
            self.going.append(o)
        self.free.setdefault(o.key, []).append(o.name)
        self.modes.pop(o.oid, None)
        self.adopted.discard(o.oid)
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
        self.watch(self.pres, x, self.settle_cb, o.oid)   # the previous one's never runs

    def settle_cb(self, oid):
        """x's death begins: the previous death's counters, unless another
        thread's event holds the lock (it reads them itself, after this
        death). This death's own callbacks run after this one: awaiting
        them here (await_deaths) would wait for itself."""
        if not self.lock.acquire(blocking=False):
            return
        try:
            self.dying = oid
            self.safe(self.settle)
        finally:
            self.dying = None
            self.lock.release()

    def settle(self):
        if self.need and not self.reads_held:
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
        self.drain_foreign()
        if self.fault and self.events == self.fault:
            raise RuntimeError("fault injected at event %d (FAKEGC_RECORD_FAULT)" % self.fault)
        self.settle()
        checks, self.keep_checks = self.keep_checks, []
        for o, at in checks:
            if o.oid in self.early and self.early[o.oid] is o:
                self.keep_checks.append((o, at))   # its death has not ended yet
                continue
            if not o.sref.expired() and not self.holders.get(o.stor) and \
                    not self.storage_going(o):
                at -= self.spilled
                ln = self.lines[at]          # shared: a copy of its own gets the keeper
                copy = self.lines[at] = Line(ln.kind, ln.text, ln.site)
                copy.pre = ln.pre + (self.keeper(o),)
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
        if self.spill is not None and len(self.lines) >= 4096:
            self.spill_lines()

    def spill_lines(self):
        """The lines no later event changes (those before the first whose
        keeper is still to be decided) go to the spill file; an at() line
        there keeps its loops, resolved when the recording is written."""
        if os.getpid() != self.pid:
            return
        n = min([at - self.spilled for _, at in self.keep_checks] + [len(self.lines)])
        if n <= 0:
            return
        out = self.lines[:n]
        del self.lines[:n]
        self.spilled += n
        self.spill.write(out)
        if self.at_lines:
            gone = set(map(id, out))
            self.at_lines = [ln for ln in self.at_lines if id(ln) not in gone]

    def storage_going(self, o):
        """Threads: the storage of a dead tensor may still be on its way out
        in the thread that dropped it (PyTorch frees it after the Python
        callbacks of the death): given up to 20 ms to go before it is said
        to be held (a keeper)."""
        if not self.threads:
            return False
        import time
        t0 = time.monotonic()
        while not o.sref.expired():
            if time.monotonic() - t0 > 0.02:
                return False
            time.sleep(0.0002)
        return True

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
        objs = self.objs
        for oid, o in list(self.reals.items()):
            if objs.get(oid) is not o:
                del self.reals[oid]        # dead since
                continue
            if o.stor is None:
                continue
            t = o.owner() if callable(o.owner) else None
            if t is None:
                continue
            try:
                c = self.storage_key(t)
            except Exception:
                continue
            if c != o.stor and self.lang >= 2:
                self.unhold(o)
                self.emit("%s.set_(%s)" % (o.name, self.storage_expr(t)),
                          self.site() + "  set_() (seen at the next event)")
                self.note("set_() on a recorded tensor is written at the next event after it; "
                          "a death in between would see the old storage")
                from torch.multiprocessing.reductions import StorageWeakRef
                o.stor, o.sref = c, StorageWeakRef(self.storage_of(t))
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

    def storage_key(self, t):
        """The address of t's storage (its _cdata), without the TypedStorage
        that storage_of makes."""
        f = getattr(t, "untyped_storage", None) or t._storage
        return f()._cdata

    def storage_of(self, t):
        return t.storage()

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
        self.reals.pop(o.oid, None)    # in the order objs has them
        self.reals[o.oid] = o
        o.owner = weakref.ref(t)
        if lay == torch.strided and not t.is_quantized:
            try:
                st = self.storage_of(t)
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
            c = self.storage_key(t)
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
        st = self.storage_of(t)
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
        self.watch(self.fins, g, self.died, go.oid)
        try:
            from torch.multiprocessing.reductions import StorageWeakRef
            st = self.storage_of(g)
            go.stor, go.sref = st._cdata, StorageWeakRef(st)
            self.hold(go)
        except Exception:
            pass
        self.emit("%s.grad = %s" % (o.name, e), site + "  grad")

    def broken(self, e):
        """The recorder itself failed: stop recording, say so, exit 3."""
        import traceback
        where = traceback.extract_tb(e.__traceback__)[-1]
        self.note("INTERNAL: the recorder failed (%s: %s at %s:%d); recording "
                  "stopped here" % (type(e).__name__, str(e)[:100],
                                    os.path.basename(where.filename), where.lineno))
        self.internal = True
        self.stop_site = self.stop_site or self.site()
        self.stop_why = self.stop_why or "the recorder itself failed: %s: %s" % (
            type(e).__name__, str(e).split("\n")[0][:100])
        self.stopped = True

    def outermost_init(self, init, then):
        """init (a class's __init__) wrapped so that then(obj) runs, through
        safe, when the outermost of nested __init__ calls returns: a
        subclass's __init__ that calls its base's makes one object."""
        rec = self

        def wrapped(obj, *a, **k):
            rec.init_depth += 1
            try:
                init(obj, *a, **k)
            finally:
                rec.init_depth -= 1
            if rec.init_depth == 0:
                rec.safe(then, obj)
        return wrapped

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

    # -------------------------------------------------------------- writing

    def spill_to(self):
        """Write the recording's lines to a temporary file as they go (the
        memory of a long run stays flat); render_to reads them back."""
        self.spill = Spill()

    def render(self, batch=True, header_extra=()):
        import io
        out = io.StringIO()
        self.render_to(out, batch, header_extra)
        return out.getvalue()

    def render_to(self, f, batch=True, header_extra=()):
        """Write the recording to text file f: the header (what is known at
        the end: events, notes, how it stopped), then its lines, folded into
        repeat blocks when batch. The number of lines written."""
        self.fill_at()
        head = ['config recording = "%s"   # recorded by scripts/record.py (torch %s)'
                % (esc(os.path.basename(self.program)), self.torch.__version__),
               ] + list(self.INTRO) + [
                "# events: %d (%s)" % (self.events, ", ".join(
                    "%d %s" % (v, k) for k, v in sorted(self.stats.items())))]
        head += ["# " + h for h in header_extra]
        if self.ended:
            head.append("# ENDED: %s; what was recorded up to there follows" % self.ended)
        if self.stopped and self.stop_site:
            head.append("# STOPPED after %d events (%s) at %s: the program ran on "
                        "unrecorded" % (self.events, "threads" if self.refused else
                                        "a recorder error" if self.internal
                                        else "what cannot be said" if
                                        (self.stop_why or "").startswith("not expressible")
                                        else "--max-events", self.stop_site))
        if self.notes:
            head.append("# Not expressible (never silently dropped):")
            head += ["#   - " + n for n in self.notes]
        else:
            head.append("# Not expressible: nothing.")
        head += self.CONFIG
        with no_cycles():    # a million tuples made, none in a cycle
            return self.write_body(f, head, batch)

    def write_body(self, f, head, batch):
        units = units_of(self.all_lines())
        body = batch_units(units) if batch else flat(u for us in units for u in us)
        count, chunk = 0, head
        for ln in body:
            chunk.append(ln)
            if len(chunk) >= 4096:
                count += len(chunk)
                f.write("\n".join(chunk) + "\n")
                chunk = []
        if chunk:
            count += len(chunk)
            f.write("\n".join(chunk) + "\n")
        return count

    def all_lines(self):
        """The recording's lines in order, (kind, text, site, at), in chunks
        (lists): those in the spill file, then those in memory, the lines
        written before a line (its pre) first, each on its own."""
        if self.spill is not None:
            yield from self.spill.read(self.at_text)
        yield [x for ln in self.lines for x in
               [(q.kind, q.text, q.site, q.at) for q in ln.pre] +
               [(ln.kind, ln.text, ln.site, ln.at)]]
