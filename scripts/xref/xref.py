#!/usr/bin/env python3
"""xref.py - cross-check fakegc's scenarios against real PyTorch 1.13.

usage: scripts/xref/xref.py [--fakegc build/fakegc] [-v] [--pytorch-only]
                            [--emit FILE] [--timeout S] [--allow-meta]
                            FILE.scn|DIR...

For each scenario:
 1. translate it to a Python script that does the same with
    torch._subclasses (FakeTensorMode, MetaConverter); lines that cannot be
    translated are listed with their reason, and expectations depending on
    them are not compared;
 2. run the script with /usr/bin/python3, which records PyTorch's value of
    each side of every translated expectation;
 3. (unless --pytorch-only) run `fakegc run TMP.scn --compat pytorch-1.13 --sweep periodic
    --format json` on a copy of the scenario where each compared expectation
    is rewritten to `expect SIDE == <PyTorch's value>` (same line numbers);
    every failure of a rewritten line is a mismatch.

Reports `FILE:LINE: mismatch: SIDE: pytorch=V fakegc=W` and
`FILE:LINE: pytorch fails the expectation: ...`, then `N passed, N failed`
(`, N skipped` for scenarios with nothing comparable).

Exit: 0 no mismatch, 1 mismatches (with --pytorch-only: PyTorch disagrees
with an expectation), 2 usage error, 77 torch not importable (skip).
"""

import argparse
import json
import os
import re
import select
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from scn import ScnError, parse_file  # noqa: E402
from translate import translate  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
SERVER = os.path.join(HERE, "twin_server.py")
PYTHON = os.environ.get("XREF_PYTHON", "/usr/bin/python3")   # the one with torch (--python)
# the design the twins' PyTorch is checked against: 1.13.1 with its own
# policy; 2.x (2.6, 2.14: a launcher of scripts/torch-root.sh) under pytorch-2.3,
# 2.14 and later under pytorch-2.14
COMPAT = COMPAT_113 = ["--compat", "pytorch-1.13", "--sweep", "periodic"]
COMPAT_2X = ["--compat", "pytorch-2.3"]
EXIT_SKIP = 77


def fmt_value(v):
    kind, val = v
    if kind == "bool":
        return "true" if val else "false"
    if kind == "int":
        return str(val)
    return "<%s>" % val


def parse_actual(s):
    """fakegc's "actual" string as ("int", n) / ("bool", b), or None."""
    if s is None:
        return None
    t = str(s).strip()
    if re.fullmatch(r"-?\d+", t):
        return ("int", int(t))
    if t in ("true", "false"):
        return ("bool", t == "true")
    return None


def same_value(a, b):
    return a is not None and b is not None and int(a[1]) == int(b[1])


class Result:
    def __init__(self, path):
        self.path = path
        self.compared = 0
        self.translated = 0      # expectations translated (compared or not reached)
        self.mismatches = []     # report lines
        self.pt_fails = []       # report lines
        self.untranslatable = []  # (line, reason)
        self.notes = []
        self.errors = []         # report lines (translator / run problems)
        self.verbose = []

    def status(self, pytorch_only):
        if self.errors:
            return "failed"
        if pytorch_only and self.pt_fails:
            return "failed"
        if self.mismatches:
            return "failed"
        if self.compared == 0:
            return "skipped"
        return "passed"


# --------------------------------------------------------------- PyTorch side

class Twins:
    """The twins' PyTorch: one twin_server.py under PYTHON that imports torch
    once and forks a child per twin (its own process, output files and
    timeout), started at the first twin and again after it stopped."""

    def __init__(self):
        self.proc = None
        self.log = None
        self.version = None
        self.died = None

    def start(self, timeout):
        """None, or why torch is not importable by PYTHON."""
        self.stop()
        self.log = tempfile.TemporaryFile(mode="w+")
        try:
            self.proc = subprocess.Popen([PYTHON, SERVER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self.log, bufsize=0)
        except OSError as err:
            self.proc = None
            return str(err)
        hello = self.answer(timeout)
        if hello is None or "torch" not in hello:
            why = hello.get("error") if hello else None
            self.stop()
            return why or self.died
        self.version = hello["torch"]
        return None

    def answer(self, timeout):
        """The server's next answer (a dict), or None (self.died says why)."""
        fd = self.proc.stdout.fileno()
        if select.select([fd], [], [], timeout)[0]:
            line = self.proc.stdout.readline()
            if line.endswith(b"\n"):
                return json.loads(line)
            self.proc.wait()
            self.log.seek(0)
            tail = self.log.read().strip().splitlines()
            self.died = tail[-1] if tail else "exit %d" % self.proc.returncode
        else:
            self.died = "no answer within %ss" % timeout
        return None

    def run(self, prog, out, timeout):
        """Runs one twin as `PYTHON prog out` would: (exit status, stdout,
        stderr), exit status None after a timeout; or an error string."""
        if self.proc is None:
            why = self.start(timeout)
            if why:
                return "torch is not importable by %s (%s)" % (PYTHON, why)
        streams = [out + ".stdout", out + ".stderr"]
        req = {"prog": prog, "out": out, "stdout": streams[0], "stderr": streams[1],
               "timeout": timeout}
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
        except OSError:
            self.answer(0)
            self.stop()
            return "the twin server stopped: %s" % self.died
        ans = self.answer(timeout + 120)
        if ans is None:
            self.stop()
            return "the twin server stopped: %s" % self.died
        text = []
        for path in streams:
            try:
                with open(path, errors="replace") as f:
                    text.append(f.read())
            except OSError:
                text.append("")
        return (ans.get("exit"), text[0], text[1])

    def stop(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        if self.log is not None:
            self.log.close()
            self.log = None


TWINS = Twins()


def run_pytorch(code, timeout):
    """Run the generated script; returns (results dict or None, error)."""
    with tempfile.TemporaryDirectory(prefix="xref-") as d:
        prog = os.path.join(d, "prog.py")
        out = os.path.join(d, "results.json")
        with open(prog, "w") as f:
            f.write(code)
        got = TWINS.run(prog, out, timeout)
        if isinstance(got, str):
            return None, got
        status, stdout, stderr = got
        if status is None:
            return None, "the PyTorch script timed out after %ss" % timeout
        if not os.path.exists(out):
            tail = (stderr or stdout).strip().splitlines()[-3:]
            return None, "the PyTorch script failed (exit %d): %s" % (status, " | ".join(tail))
        with open(out) as f:
            return json.load(f), None


def describe_eval(e, ev):
    if e.kind == "raises":
        return "pytorch raised %s" % (ev["raised"] or "nothing")
    if "error" in ev:
        return "pytorch raised %s" % ev["error"]
    parts = []
    if not e.lhs_lit:
        parts.append("%s = %s" % (e.lhs_src, fmt_value(ev["a"])))
    if not e.rhs_lit:
        parts.append("%s = %s" % (e.rhs_src, fmt_value(ev["b"])))
    if not parts:
        parts.append("%s %s %s" % (fmt_value(ev["a"]), e.op, fmt_value(ev["b"])))
    return "pytorch: " + ", ".join(parts)


def pytorch_verdicts(res, tr, data):
    """Fill res.pt_fails; return {line: evaluations} of compared expects."""
    recs = data["records"]
    abort = data.get("abort")
    evals = {}
    for line, e in sorted(tr.expects.items()):
        if e.status != "compared":
            continue
        res.translated += 1
        evs = recs.get(str(line), [])
        if not evs:
            why = ("not reached: pytorch stopped at line %d" % abort["line"]
                   if abort and abort["line"] <= line else "never evaluated")
            res.verbose.append("%s:%d: not compared (%s)" % (res.path, line, why))
            continue
        evals[line] = evs
        res.compared += 1
        for k, ev in enumerate(evs):
            if ev.get("holds") is not True:
                where = " (evaluation %d of %d)" % (k + 1, len(evs)) if len(evs) > 1 else ""
                why = describe_eval(e, ev)
                if ev.get("holds") is None and "error" not in ev and e.kind == "cmp":
                    why += " - not an integer"
                res.pt_fails.append("%s:%d: pytorch fails the expectation: %s (%s)%s"
                                    % (res.path, line, e.text, why, where))
                break
    if abort:
        res.pt_fails.append("%s:%d: pytorch raised %s (the rest of the scenario did not run)"
                            % (res.path, abort["line"], abort["error"]))
    return evals


# ---------------------------------------------------------------- fakegc side

def const_side(evs, key):
    vals = [ev.get(key) for ev in evs]
    if any(v is None or v[0] not in ("int", "bool") for v in vals):
        return None
    first = vals[0]
    if all(int(v[1]) == int(first[1]) for v in vals):
        return first
    return None


def make_plans(tr, evals):
    """Per compared line: [[kind, side_src, pytorch value], ...] where kind
    is "value" (rewrite to SIDE == V) or "outcome" (keep the line, compare
    whether it holds; the value is then whether PyTorch held it). A
    second entry (the right side) is compared in a second run."""
    plans = {}
    for line, evs in evals.items():
        e = tr.expects[line]
        p = []
        if e.kind == "cmp":
            va, vb = const_side(evs, "a"), const_side(evs, "b")
            if not e.lhs_lit and e.rhs_pure and va is not None:
                p.append(["value", e.lhs_src, va])
            if not e.rhs_lit and e.rhs_bool is None and e.lhs_pure and vb is not None:
                p.append(["value", e.rhs_src, vb])
        if not p:
            p.append(["outcome", e.text, all(ev.get("holds") is True for ev in evs)])
        plans[line] = p
    return plans


def run_fakegc(fakegc, path, src_lines, overrides, timeout):
    """Run fakegc on a copy of the scenario with some lines replaced.
    Returns (scenario dict, failures by line, error)."""
    with tempfile.TemporaryDirectory(prefix="xref-") as d:
        tmp = os.path.join(d, os.path.basename(path))
        lines = list(src_lines)
        for line, text in overrides.items():
            lines[line - 1] = text
        with open(tmp, "w") as f:
            f.write("\n".join(lines))
        # PyTorch 1.13.1 (its own _fix_weakref leak included) with its
        # policies whatever the scenario's config says (--sweep beats config).
        cmd = [fakegc, "run", tmp] + COMPAT + ["--format", "json"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, {}, "fakegc timed out after %ss" % timeout
        except OSError as err:
            return None, {}, "cannot run %s: %s" % (fakegc, err)
        if p.returncode not in (0, 1):
            msg = (p.stderr or p.stdout).strip().replace(tmp, path).splitlines()[:4]
            what = {2: "rejected the rewritten scenario", 3: "internal error"}.get(
                p.returncode, "exit %d" % p.returncode)
            return None, {}, "fakegc %s: %s" % (what, " | ".join(msg))
        try:
            report = json.loads(p.stdout)
            scen = report["scenarios"][0]
        except (ValueError, KeyError, IndexError) as err:
            return None, {}, "cannot read fakegc's JSON report: %s" % err
        fails = {}
        for f in scen.get("failures", []) or []:
            fails.setdefault(int(f.get("line", 0)), []).append(f)
        return scen, fails, None


def compare_fakegc(res, tr, evals, data, fakegc, timeout, src_lines):
    plans = make_plans(tr, evals)
    # run 1 takes each line's first plan, run 2 the second side where there is one
    runs = [{}, {}]
    for line, p in plans.items():
        for i, plan in enumerate(p):
            runs[i][line] = plan
    abort = data.get("abort")
    seen_fail = {}
    first_scen = None
    for r, plan_of in enumerate(runs):
        if not plan_of and r > 0:
            continue
        overrides = {}
        for line, (kind, side, val) in plan_of.items():
            if kind == "value":
                e = tr.expects[line]
                overrides[line] = "%sexpect %s == %s" % (e.indent, side, fmt_value(val))
        done = set()
        # Re-run while new compared lines fail: a line that fakegc fails is
        # made to pass (rewritten to fakegc's own value) so that a runner
        # stopping at the first failure still reaches the lines after it.
        for _ in range(len(plan_of) + 1):
            scen, fails, err = run_fakegc(fakegc, res.path, src_lines, overrides, timeout)
            if err:
                res.errors.append("%s: %s" % (res.path, err))
                return
            if first_scen is None:
                first_scen = (scen, fails)
            new = False
            for line, fl in sorted(fails.items()):
                if line not in plan_of or line in done:
                    continue
                done.add(line)
                new = True
                kind, side, val = plan_of[line]
                e = tr.expects[line]
                if kind == "value":
                    res.mismatches.append("%s:%d: mismatch: %s: pytorch=%s fakegc=%s"
                                          % (res.path, line, side, fmt_value(val),
                                             fl[0].get("actual")))
                else:
                    seen_fail[line] = fl[0].get("actual")
                # neutralize the line for the next run
                av = {parse_actual(f.get("actual")) for f in fl}
                if e.kind == "cmp" and e.lhs_pure and e.rhs_pure:
                    overrides[line] = e.indent + "# xref: compared in an earlier run"
                elif kind == "value" and len(av) == 1 and None not in av:
                    overrides[line] = "%sexpect %s == %s" % (e.indent, side, fmt_value(av.pop()))
            if not new:
                break
        # outcome lines: compare whether the expectation holds
        for line, (kind, side, pt_holds) in plan_of.items():
            if kind != "outcome":
                continue
            fg_holds = line not in seen_fail
            if fg_holds != pt_holds:
                extra = (" (fakegc actual: %s)" % seen_fail[line]) if line in seen_fail else ""
                res.mismatches.append("%s:%d: mismatch: %s: pytorch=%s fakegc=%s%s"
                                      % (res.path, line, side,
                                         "holds" if pt_holds else "fails",
                                         "holds" if fg_holds else "fails", extra))
    # statements: PyTorch stopping with an exception vs fakegc raising there
    if first_scen is None:
        return
    scen, fails = first_scen
    error_text = str(scen.get("error") or "")
    if abort:
        at = abort["line"]
        fg_there = at in fails or re.search(r"(?::|line )%d\b" % at, error_text)
        if not fg_there:
            res.mismatches.append("%s:%d: mismatch: pytorch raised %s here; fakegc did not"
                                  % (res.path, at, abort["error"]))
    for line, fl in sorted(fails.items()):
        if line in tr.expects or line in tr.untranslatable or (abort and line >= abort["line"]):
            continue
        if line in plans:
            continue
        what = str(fl[0].get("actual") if fl[0].get("actual") is not None else fl[0].get("message") or "")
        if not re.search(r"Error|Unsupported|Exception", what):
            continue        # not a statement that raised (e.g. a retained object)
        res.mismatches.append("%s:%d: mismatch: fakegc fails here (%s); pytorch did not"
                              % (res.path, line, fl[0].get("actual") or fl[0].get("message")))


# --------------------------------------------------------------------- driver

def process(path, args, emit_path):
    res = Result(path)
    try:
        prog = parse_file(path)
    except ScnError as err:
        res.errors.append("%s:%d: error: %s" % (path, err.line, err.msg))
        return res
    except (OSError, UnicodeDecodeError) as err:
        res.errors.append("%s: error: cannot read: %s" % (path, err))
        return res
    # A scenario about PyTorch's default mode (allow_meta=False: meta() under
    # `with` asserts) says so with a `# xref: no-allow-meta` line.
    with open(path, encoding="utf-8") as f:
        no_allow_meta = any(l.strip() == "# xref: no-allow-meta" for l in f)
    tr = translate(prog, allow_meta=args.allow_meta and not no_allow_meta,
                   v2=COMPAT is not COMPAT_113)
    res.untranslatable = tr.untranslatable_list()
    res.notes = sorted(tr.notes.items())
    if emit_path:
        with open(emit_path, "w") as f:
            f.write(tr.code)
    if not any(e.status == "compared" for e in tr.expects.values()):
        return res
    data, err = run_pytorch(tr.code, args.timeout)
    if err:
        res.errors.append("%s: %s" % (path, err))
        return res
    evals = pytorch_verdicts(res, tr, data)
    for line, evs in sorted(evals.items()):
        e = tr.expects[line]
        res.verbose.append("%s:%d: compared: %s (%s)" % (path, line, e.text,
                                                         describe_eval(e, evs[0])))
    if args.pytorch_only or not evals:
        return res
    compare_fakegc(res, tr, evals, data, args.fakegc, args.timeout, prog.lines)
    return res


def collect(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for d, dirs, names in os.walk(p):
                # scenarios/errors holds scenarios that must not parse
                dirs[:] = [x for x in dirs if not (
                    x == "errors" and os.path.basename(os.path.abspath(d)) == "scenarios")]
                found += [os.path.join(d, n) for n in names if n.endswith(".scn")]
            files += sorted(found)
        elif os.path.isfile(p):
            files.append(p)
        else:
            raise FileNotFoundError(p)
    return files


def torch_version():
    p = subprocess.run([PYTHON, "-c", "import torch; print(torch.__version__)"],
                       capture_output=True, text=True, timeout=120)
    return p.stdout.strip()


def per_version(argv, pythons):
    """One run per --python (its own output), then a line per torch version:
    scenarios passed and failed, and mismatches. Exit 1 if any run had one."""
    rest, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--python":
            skip = True
        elif not a.startswith("--python="):
            rest.append(a)
    rows, rc = [], 0
    for py in pythons:
        global PYTHON
        PYTHON = py
        v = "torch %s" % (torch_version() or "? (%s)" % py)
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--python", py] + rest,
                           capture_output=True, text=True)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        mism = len(re.findall(r": mismatch: ", p.stdout))
        tail = (p.stdout.strip().splitlines() or ["no output"])[-1]
        rows.append("%s (%s): %s, %d mismatches" % (v, py, tail, mism)
                    if p.returncode in (0, 1) else "%s (%s): exit %d" % (v, py, p.returncode))
        rc = max(rc, 1 if p.returncode != 0 else 0)
    print("per version:")
    for r in rows:
        print("  " + r)
    return rc


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="xref.py", description="Cross-check .scn scenarios against PyTorch 1.13.")
    ap.add_argument("paths", nargs="+", metavar="FILE.scn|DIR")
    ap.add_argument("--fakegc", default=None,
                    help="the fakegc binary (default: build/fakegc of this tree)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--pytorch-only", action="store_true",
                    help="only run PyTorch; report where it disagrees with the scenario")
    ap.add_argument("--emit", metavar="FILE",
                    help="write the generated Python (a directory with several scenarios)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    ap.add_argument("--python", action="append", default=None,
                    help="the Python with torch that runs the twins (default $XREF_PYTHON or "
                    "/usr/bin/python3; 2.x: compared under --compat pytorch-2.3, 2.14 and later "
                    "pytorch-2.14); given "
                    "several times, one run per Python and the mismatches per version")
    ap.add_argument("--allow-meta", action="store_true",
                    help="FakeTensorMode(allow_meta=True) (fake tensors on meta)")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        files = collect(args.paths)
    except FileNotFoundError as err:
        print("xref: error: no such file or directory: %s" % err, file=sys.stderr)
        return 2
    if not files:
        print("xref: error: no .scn files in %s" % " ".join(args.paths), file=sys.stderr)
        return 2
    if not args.pytorch_only:
        if args.fakegc is None:
            args.fakegc = os.path.join(ROOT, "build", "fakegc")
        if not (os.path.isfile(args.fakegc) and os.access(args.fakegc, os.X_OK)):
            print("xref: error: fakegc binary not found at %s (build it, pass --fakegc, "
                  "or use --pytorch-only)" % args.fakegc, file=sys.stderr)
            return 2
    emit_paths = [None] * len(files)
    if args.emit:
        if len(files) == 1 and not os.path.isdir(args.emit):
            emit_paths = [args.emit]
        else:
            if os.path.exists(args.emit) and not os.path.isdir(args.emit):
                print("xref: error: --emit %s: with several scenarios, give a directory"
                      % args.emit, file=sys.stderr)
                return 2
            os.makedirs(args.emit, exist_ok=True)
            emit_paths = [os.path.join(args.emit, os.path.splitext(os.path.basename(f))[0] + ".py")
                          for f in files]
    global PYTHON
    if args.python and len(args.python) > 1:
        return per_version(argv if argv is not None else sys.argv[1:], args.python)
    if args.python:
        PYTHON = args.python[0]
    why = TWINS.start(args.timeout)
    if why:
        print("xref: SKIP: torch is not importable by %s (%s)" % (PYTHON, why))
        return EXIT_SKIP
    try:
        return run_all(args, files, emit_paths)
    finally:
        TWINS.stop()


def run_all(args, files, emit_paths):
    global COMPAT
    if not TWINS.version.startswith("1."):
        COMPAT = COMPAT_2X
        try:    # 2.14 and later: pytorch-2.14 (the recorder's rule, fakegc/torch2.py)
            if tuple(int(x) for x in TWINS.version.split("+")[0].split(".")[:2]) >= (2, 14):
                COMPAT = ["--compat", "pytorch-2.14"]
        except ValueError:
            pass
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for f, emit in zip(files, emit_paths):
        res = process(f, args, emit)
        st = res.status(args.pytorch_only)
        counts[st] += 1
        if args.pytorch_only:
            head = "%s: compared %d, pytorch fails %d, untranslatable %d" % (
                f, res.compared, len(res.pt_fails), len(res.untranslatable))
        else:
            head = "%s: compared %d, mismatches %d, untranslatable %d" % (
                f, res.compared, len(res.mismatches), len(res.untranslatable))
        if res.translated > res.compared:
            head += ", not reached %d" % (res.translated - res.compared)
        if res.translated == 0 and not res.errors:
            head += " - no comparable expectations"
        print(head)
        for line in res.errors + res.mismatches + res.pt_fails:
            print("  " + line)
        for line, reason in res.untranslatable:
            print("  %s:%d: untranslatable: %s" % (f, line, reason))
        if args.verbose:
            for line, note in res.notes:
                print("  %s:%d: note: %s" % (f, line, note))
            for line in res.verbose:
                print("  " + line)
    tail = "%d passed, %d failed" % (counts["passed"], counts["failed"])
    if counts["skipped"]:
        tail += ", %d skipped" % counts["skipped"]
    print(tail)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
