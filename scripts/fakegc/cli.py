"""The command line of scripts/record.py (and so of `fakegc record`): run a
program under the recorder and write its scenario."""

import argparse
import glob
import json
import os
import signal
import sys
import time

from .compare import compare
from .engine import DTYPES, _dtypes
from .holders import program_roots
from . import torch113, torch2


def leak_classes():
    """The leak-class words, as fakegc's report schema lists what a verdict
    fails on (its table is fakegc's, src/heap/hp_class.h; the schema is
    shipped beside this package: src/report/schema in the source tree,
    PREFIX/share/fakegc/schema installed). None when no schema is found
    (the package copied alone): fakegc then checks the words itself, `fakegc
    record` before the program runs, `fakegc run` at the verdict."""
    here = os.path.dirname(os.path.abspath(__file__))
    for d in (os.path.join(here, "..", "..", "src", "report", "schema"),
              os.path.join(here, "..", "..", "..", "share", "fakegc", "schema")):
        for path in sorted(glob.glob(os.path.join(d, "fakegc-report-*.schema.json")),
                           reverse=True):
            try:
                with open(path) as f:
                    found = find_key(json.load(f), "fails_on")
            except (OSError, ValueError):
                continue
            if found:
                return found["items"]["enum"]
    return None


def find_key(doc, key):
    """The value of the first key named key in a JSON document, or None."""
    if isinstance(doc, dict):
        if key in doc:
            return doc[key]
        doc = list(doc.values())
    for v in doc if isinstance(doc, list) else ():
        found = find_key(v, key)
        if found is not None:
            return found
    return None


def last_statement(path):
    """The line of the last statement a program's module runs when it ends
    by itself: its last top-level statement, or the last of the body of an
    `if __name__ == "__main__":` that ends it (the recorder runs the program
    as __main__). None when it has none or cannot be read."""
    import ast
    try:
        with open(path, "rb") as f:
            body = ast.parse(f.read(), path).body
    except (OSError, SyntaxError, ValueError):
        return None
    while body:
        last = body[-1]
        t = getattr(last, "test", None)
        if isinstance(last, ast.If) and isinstance(t, ast.Compare) and \
                isinstance(t.left, ast.Name) and t.left.id == "__name__" and \
                len(t.comparators) == 1 and isinstance(t.comparators[0], ast.Constant) and \
                t.comparators[0].value == "__main__" and last.body:
            body = last.body
            continue
        return last.lineno
    return None


def program_end(rec, tb=None, frame=None):
    """Where the program ended, as its sites are written ("prog.py:31"): the
    innermost of its main module's lines in the traceback of what ended it
    (an exception, sys.exit()), or on the stack of frame (os._exit(),
    SIGTERM); else (it ended by itself) its last statement. None: unknown."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == rec.program:
            line = tb.tb_lineno
        tb = tb.tb_next
    while line is None and frame is not None:
        if frame.f_code.co_filename == rec.program:
            line = frame.f_lineno
        frame = frame.f_back
    if line is None:
        line = last_statement(rec.program)
    name = rec.site_name(rec.program)
    return "%s:%d" % (name, line) if line and name else None


def tell_fakegc(program, recorder):
    """FAKEGC_RECORD_STATUS_FD=N (fakegc record): say on descriptor N how the
    program ended ("exit N", "signal N", "none": it did not run) and the
    recorder's state (ok, usage, no-torch, internal, refused), apart, so that
    a program's own status is never read as the recorder's."""
    fd = os.environ.get("FAKEGC_RECORD_STATUS_FD")
    if fd and fd.isdigit():
        text = ("program %s\nrecorder %s\n" % (program, recorder)).encode()
        try:
            os.ftruncate(int(fd), 0)
            os.pwrite(int(fd), text, 0)
        except OSError:
            pass


def children(rec):
    """Child processes are said plainly, not recorded: a fork (os.fork,
    multiprocessing's fork) and a spawned interpreter (multiprocessing's
    spawn/forkserver) each run on with their own fake tensors; the header
    lists where each was started."""
    import multiprocessing.process as mpp

    def where():   # the program's own line that started it
        f = sys._getframe(2)
        while f is not None and not rec.rounds.is_prog(f.f_code):
            f = f.f_back
        return "%s:%d" % (os.path.basename(f.f_code.co_filename), f.f_lineno) if f else "?"

    def say(text):
        rec.note(text)
        print("record.py: %s" % text, file=sys.stderr)

    def forked():
        if os.getpid() == rec.pid:
            say("%s: a child process was forked; its fake-tensor events are not "
                "recorded (only the started process is)" % where())
    os.register_at_fork(after_in_parent=forked)
    start = mpp.BaseProcess.start

    def started(self):
        import multiprocessing
        method = getattr(self, "_start_method", None) or \
            multiprocessing.get_start_method(allow_none=True) or "fork"
        if os.getpid() == rec.pid and method != "fork":
            say("%s: a child process was started (multiprocessing, %s); its "
                "fake-tensor events are not recorded (only the started process is)"
                % (where(), method))
        return start(self)
    mpp.BaseProcess.start = started


def main(argv):
    fd = os.environ.get("FAKEGC_RECORD_STATUS_FD")
    if fd and fd.isdigit():   # not the program's, nor its children's
        try:
            os.set_inheritable(int(fd), False)
        except OSError:
            pass
    try:
        return record(argv)
    except KeyboardInterrupt:   # before the program ran
        tell_fakegc("none", "ok")
        return 128 + signal.SIGINT


def record(argv):
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
    classes = leak_classes()
    ap.add_argument("--fail-on", default=None,
                    help="what the verdict fails on: a comma list of leak classes (%s; "
                    "default: what verdict() fails on unless told)"
                    % (", ".join(classes) if classes else "fakegc list options record"))
    ap.add_argument("--suppress", default=None,
                    help="suppression rules for the verdict (one a line: NAME: class=... "
                    "kind=... site=GLOB holder=GLOB)")
    ap.add_argument("program")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    try:
        o = ap.parse_args(argv)
    except SystemExit as e:
        if e.code:
            tell_fakegc("none", "usage")
        raise
    if not os.path.isfile(o.program):
        print("record.py: %s: no such program" % o.program, file=sys.stderr)
        tell_fakegc("none", "usage")
        return 2
    if o.max_events < 0:
        print("record.py: --max-events must be >= 0", file=sys.stderr)
        tell_fakegc("none", "usage")
        return 2
    try:
        import torch
        import torch._subclasses.fake_tensor  # noqa: F401
    except ImportError as e:
        print("record.py: torch is not importable here (%s); use /usr/bin/python3 with "
              "Debian's python3-torch" % e, file=sys.stderr)
        tell_fakegc("none", "no-torch")
        return 77
    DTYPES.update(_dtypes(torch))
    out = o.output or os.path.splitext(o.program)[0] + ".scn"
    if o.fail_on and classes:
        bad = [w for w in o.fail_on.split(",") if w and w not in classes]
        if bad:
            print("record.py: --fail-on: unknown class %s (%s)" % (bad[0], ", ".join(classes)),
                  file=sys.stderr)
            tell_fakegc("none", "usage")
            return 2
    line = torch113 if torch.__version__.startswith("1.") else torch2
    rec = line.Recorder(torch, o.program, o.max_events, o.lang)
    if not os.path.isabs(o.program):      # sites as the program's path was given
        rec.shown = os.path.dirname(o.program)
    if not o.no_hooks:
        if not o.compare:     # --compare reads the lines from memory
            rec.spill_to()
        rec.install()
        children(rec)
        sys.modules[__package__]._program = rec     # fakegc.mark() in the program
    sys.argv = [o.program] + o.args
    sys.path.insert(0, os.path.dirname(os.path.abspath(o.program)))
    status, ended, extra = 0, "exit 0", []
    state = {"g": None, "done": False, "tb": None}
    real_exit = os._exit

    def write_status(program):
        """The program's end ("exit N", "signal N") and the recorder's state."""
        if os.getpid() == rec.pid:
            tell_fakegc(program, "refused" if rec.refused else "internal" if rec.internal
                        else "ok")

    def write():
        """The recording, written whole or not at all: its lines."""
        if os.getpid() != rec.pid:
            return 0
        tmp = "%s.%d.tmp" % (out, os.getpid())
        with open(tmp, "w") as f:
            n = rec.render_to(f, batch=not o.no_batch, header_extra=extra)
        os.replace(tmp, out)
        return n

    def roots(frame):
        return program_roots(rec, state["g"], frame, state["tb"])

    def end_early(how, how_word, frame):
        """os._exit() or SIGTERM: keep what was recorded, said in the header."""
        if os.getpid() != rec.pid or state["done"] or o.no_hooks:
            return
        state["done"] = True
        rec.ended = how
        rec.end = (program_end(rec, frame=frame), how_word)
        try:
            rec.finish(roots(frame), o.fail_on, o.suppress)
        except Exception as e:
            rec.broken(e)
        write()
        print("record.py: %s: %s; recorded up to there (%d events)" % (out, how, rec.events),
              file=sys.stderr)

    def exit_hook(code=0):
        end_early("the program called os._exit(%s)" % code, "os._exit(%s)" % code,
                  sys._getframe(1))
        write_status("exit %d" % (code & 0xFF))
        sys.stdout.flush()
        sys.stderr.flush()
        real_exit(code)

    def on_term(signum, frame):
        end_early("the program was killed by SIGTERM", "SIGTERM", frame)
        write_status("signal %d" % signal.SIGTERM)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    os._exit = exit_hook
    signal.signal(signal.SIGTERM, on_term)
    if not o.no_hooks:
        rec.rounds.start()
    t0, c0 = time.perf_counter(), time.process_time()
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
        rec.end = (program_end(rec), "exit 0")
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        ended = "exit %d" % (status & 0xFF)
        rec.end = (program_end(rec, e.__traceback__), ended)
    except BaseException as e:
        status = 1
        # an uncaught KeyboardInterrupt ends Python by SIGINT, as it would here
        ended = "signal %d" % signal.SIGINT if isinstance(e, KeyboardInterrupt) else "exit 1"
        state["tb"] = e.__traceback__
        rec.end = (program_end(rec, e.__traceback__), "uncaught " + type(e).__name__)
        extra.append("the program raised %s: %s (recorded up to there)"
                     % (type(e).__name__, str(e).split("\n")[0][:120]))
        import traceback
        traceback.print_exc()
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    rec.rounds.stop()
    os._exit = real_exit
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if os.getpid() != rec.pid:    # a forked child ran to the end: it writes nothing
        sys.stdout.flush()
        sys.stderr.flush()
        real_exit(status)
    if o.no_hooks:
        print("record.py: %s: not recorded (--no-hooks), program %.3f s, cpu %.3f s"
              % (o.program, elapsed, cpu), file=sys.stderr)
        sys.stderr.flush()
        os._exit(status)
    state["g"] = g
    state["done"] = True
    c0 = time.process_time()
    try:
        rec.finish(roots(None), o.fail_on, o.suppress)
    except Exception as e:
        rec.broken(e)
    state["tb"] = None
    nlines = write()
    print("record.py: %s: %d events, %d lines, program %.3f s, cpu %.3f s, end cpu %.3f s"
          % (out, rec.events, nlines, elapsed, cpu, time.process_time() - c0),
          file=sys.stderr)
    write_status(ended)
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
        print("record.py: stopped recording after %d events (%s) at %s; the scenario "
              "covers the program up to there" % (
                  rec.events, rec.stop_why or "--max-events %d reached" % o.max_events,
                  rec.stop_site), file=sys.stderr)
    del g
    if o.compare:
        fakegc = o.fakegc or os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "build", "fakegc")
        rc = compare(rec, fakegc, out)
        if rc:
            status = status or rc
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


