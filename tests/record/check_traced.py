#!/usr/bin/python3
"""check_traced.py FAKEGC ROOT PROGRAM PYTHON [DIR] - ctest: a tracing program
(make_fx, torch.export-style, torch.compile; tests/record/programs/
PROGRAM.py) judged as the real run decides, under one PyTorch.

PYTHON is /usr/bin/python3 (Debian's 1.13.1) or a root of scripts/torch-root.sh
(trixie: 2.6, forky: 2.14; its launcher in $FAKEGC_ROOTS or
/var/cache/fakegc/roots; 77, skipped, when absent). The real run:
tests/record/truth.py under that Python (weakrefs to every FakeTensor and
FakeTensorMode after gc.collect(), chains of references from the program).
`fakegc record --python PYTHON` must then give:
  - a whole recording (no STOPPED, REFUSED or INTERNAL in its header) and 0
    fidelity mismatches;
  - the verdict's groups of EXPECT[PROGRAM][line]: for each (class, kind,
    count, holder path prefix), groups of that class and kind whose counts
    sum to count, each group's path starting with the prefix; and the
    real run's counts: lost == alive - held, accumulating + still reachable
    == held, for fake tensors and modes;
  - the exit status: 1 when the verdict fails on something, else 0.
The real run and the recording are runs.py's (DIR: a fixture ctest's).
Prints the real counts and fakegc's verdict."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_make_fx import program_runs  # noqa: E402
from runs import python_of, run  # noqa: E402

ACC, REACH = "accumulating", "still reachable"
PHILOX = "torch._decomp.decompositions_for_rng.PhiloxStateTracker."
# a compile's ShapeEnv kept by ShapeEnv's class-level lru_caches (compile2.py)
SHAPE_ENV = "ShapeEnv._maybe_evaluate_static's lru_cache -> ShapeEnv.tracked_fakes[0].fake"
# PROGRAM -> {torch line ("1.13", "2.6", "2.14"): [(class, kind, count, path prefix)]}
EXPECT = {
    # each trace's graph kept in a list: its nodes' meta["val"] (2.x: the
    # snapshots snapshot_fake makes, 1.13.1: the traced fakes) and their mode
    "export_tracing": {
        v: [(ACC, "fake tensors", 15, "PROGRAMS[0].graph node "),
            (ACC, "modes", 5, "PROGRAMS[0].graph node x_1")]
        for v in ("1.13", "2.6", "2.14")},
    # aot_function over 12 shapes, everything dropped: 2.6 and 2.14 keep
    # the last trace's PhiloxState seed and offset constants (6 fakes) and
    # their mode in PhiloxStateTracker's class attributes, a PyTorch global
    # (bounded: each trace replaces them); 1.13.1: check_make_fx.py
    "make_fx_aot": {
        v: [(REACH, "fake tensors", 6, PHILOX), (REACH, "modes", 1, PHILOX)]
        for v in ("2.6", "2.14")},
    # the program's own constructors under a long-lived mode (2.14 memoizes
    # their fakes, 2.6 not: the recording's memo counts after each step
    # are its fidelity checks), each step's sum and every other step's
    # scratch buffer kept in a list
    "ctor_buffers": {
        v: [(ACC, "fake tensors", 12, "KEPT["), (REACH, "modes", 1, "MODE")]
        for v in ("2.6", "2.14")},
    # torch.compile's trace on three shapes, then torch._dynamo.reset(): the
    # dynamic compile's ShapeEnv stays in ShapeEnv's class-level lru_caches,
    # with the input fake it tracks and that fake's mode (compile2.py); the
    # program reaches them through the globals Dynamo put in its module
    # (objgraph), so they are held, not lost (1.13.1 has no compile)
    "compile_reset": {
        v: [(REACH, "fake tensors", 1, SHAPE_ENV),
            (REACH, "modes", 1, SHAPE_ENV)]
        for v in ("2.6", "2.14")},
    # the same, four rounds of compile and reset: each round's ShapeEnv
    # stays in the lru_caches (they are ShapeEnv's, not a compile's), one
    # more fake and mode per round (real 2.6: 1, 2, 3, 4 after each reset)
    "compile_reset_loop": {
        v: [(ACC, "fake tensors", 4, SHAPE_ENV),
            (ACC, "modes", 4, SHAPE_ENV)]
        for v in ("2.6", "2.14")},
    # a training step compiled once, called on batch sizes 8, 8, 16, 24, 32
    # (a static compile, then a dynamic one from 16 on), no reset: each
    # compiled graph Dynamo put in the program's globals keeps its nodes'
    # example values (the parameters', inputs' and ops' fakes) and their mode
    "compile_train_step": {
        v: [(REACH, "fake tensors", 12, "__compiled_fn_"),
            (REACH, "modes", 2, "__compiled_fn_")]
        for v in ("2.6", "2.14")},
}


def line_of(version):
    major, minor = version.split("+")[0].split(".")[:2]
    return "%s.%s" % (major, minor)


def check_groups(groups, want):
    """What of want the verdict's groups do not say."""
    bad = []
    for cls, kind, count, prefix in want:
        mine = [g for g in groups if g["class"] == cls and g["kind"] == kind]
        got = sum(g["count"] for g in mine)
        paths = [g.get("path") or "" for g in mine]
        if got != count:
            bad.append("%s %s: fakegc says %d, want %d" % (cls, kind, got, count))
        off = [p for p in paths if not p.startswith(prefix)]
        if off:
            bad.append("%s %s held at %s, want a path from %r" % (cls, kind, off[:2], prefix))
    listed = {(c, k) for c, k, _, _ in want}
    for g in groups:
        if g["kind"] in ("fake tensors", "modes") and (g["class"], g["kind"]) not in listed:
            bad.append("unexpected %s %s (%d at %s)" % (g["class"], g["kind"], g["count"],
                                                       g.get("path")))
    return bad


def check_truth(groups, truth):
    bad = []
    for kind, noun in (("fake", "fake tensors"), ("mode", "modes")):
        lost = sum(g["count"] for g in groups if g["kind"] == noun and g["class"] == "lost")
        held = sum(g["count"] for g in groups if g["kind"] == noun and g["class"] in (ACC, REACH))
        t = truth[kind]
        if lost != t["alive"] - t["held"] or held != t["held"]:
            bad.append("%s: fakegc says %d lost, %d held; the real run keeps %d, %d of them "
                       "held by the program (a chain from it)" % (noun, lost, held, t["alive"],
                                                           t["held"]))
    return bad


def main(fakegc, root, name, pyname, d=None):
    got, rc = program_runs(fakegc, root, name, pyname, d)
    if got is None:
        return rc
    version = got.torch
    if version is None:     # a recording that says no version: ask that Python
        v = run([python_of(pyname), "-c", "import torch; print(torch.__version__)"])
        version = v.stdout.strip() if v.returncode == 0 else None
    if version is None:
        print("skipped: no torch under %s" % pyname)
        return 77
    line = line_of(version)
    want = EXPECT[name].get(line)
    if want is None:
        print("skipped: %s has no verdict to check under torch %s" % (name, line))
        return 77
    truth = got.truth
    if truth is None:
        print("FAIL: the real run: %s" % got.truth_error)
        return 1
    print("real run (torch %s): %d fakes (%d held), %d modes (%d held) after "
          "gc.collect()" % (line, truth["fake"]["alive"], truth["fake"]["held"],
                            truth["mode"]["alive"], truth["mode"]["held"]))
    bad = []
    rc, sc, head = got.rc, got.report, got.head
    verdict = sc.get("verdict") or {"groups": [], "text": ""}
    for g in verdict["groups"]:     # a group of one says "fake tensor", "mode"
        g["kind"] = {"fake tensor": "fake tensors", "mode": "modes"}.get(g["kind"], g["kind"])
    print(verdict["text"].rstrip())
    for word in ("INTERNAL", "STOPPED", "REFUSED"):
        if word in head:
            bad.append("the recording is not whole: %s" % [ln for ln in head.splitlines()
                                                            if word in ln][:1])
    if sc["failures"]:
        bad.append("%d fidelity mismatches: %s" % (len(sc["failures"]),
                                                    [f["text"] for f in sc["failures"][:3]]))
    bad += check_groups(verdict["groups"], want)
    bad += check_truth(verdict["groups"], truth)
    fails = any(g["class"] in ("lost", ACC) for g in verdict["groups"])
    if rc != (1 if fails else 0):
        bad.append("exit %d with a verdict that %s" % (rc, "fails" if fails else "passes"))
    for b in bad:
        print("FAIL: %s under torch %s: %s" % (name, line, b))
    if bad:
        return 1
    print("ok: %s under torch %s: exit %d, 0 fidelity mismatches, %s" % (
        name, line, rc, "; ".join("%d %s %s at %s..." % (n, c, k, p)
                                            for c, k, n, p in want) or "nothing kept"))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:6]))
