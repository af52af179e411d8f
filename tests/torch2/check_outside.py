#!/usr/bin/python3
"""check_outside.py FAKEGC SUITE NAME [DIR] - ctest (label `torch2`): a
program written as outside users write them (tests/record/programs/NAME.py)
recorded under real PyTorch 2.x (SUITE trixie: 2.6, forky: 2.14) and judged
as the real run under the same root decides (tests/record/truth.py:
weakrefs after gc.collect(), the chains from the program). Requires:
  - a whole recording: a report, not NOT JUDGED, 0 fidelity mismatches;
  - the verdict's fake tensors and modes to be what the real run keeps:
    lost == alive - held, accumulating + still reachable == held;
  - the exit and the holders of tests/record/outside.py (the decisions
    under 1.13.1 too: a leak's growth, the program's spelling of its
    holders), and for a program that forks, its children said plainly.
DIR: the runs of the fixture runs_SUITE_NAME (tests/record/runs.py), else
made here. Exit 77 (skipped) only when the root is absent."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "record"))
from check_record import classes  # noqa: E402
from outside import OUTSIDE  # noqa: E402
from runs import get, python_of  # noqa: E402


def judged(name, got):
    """What is wrong with got (runs.Runs) against the real run: a list."""
    if got.truth is None:
        return ["the real run failed: %s" % got.truth_error[-600:]]
    rep = got.report
    if rep is None:
        return ["no report (exit %d): %s" % (got.rc, got.said[-600:])]
    bad = []
    if rep.get("not_judged"):
        bad.append("NOT JUDGED: %s" % rep["not_judged"])
    bad += ["fidelity: %s" % f["text"] for f in rep.get("failures") or []]
    text = (rep.get("verdict") or {}).get("text", "")
    cls = classes(text)
    for noun, kind in (("fake tensor", "fake"), ("mode", "mode")):
        held = cls.get(("accumulating", noun), 0) + cls.get(("still reachable", noun), 0)
        lost = cls.get(("lost", noun), 0)
        want = (got.truth[kind]["held"], got.truth[kind]["alive"] - got.truth[kind]["held"])
        if (held, lost) != want:
            bad.append("%ss held, lost: fakegc %s, PyTorch %s" % (noun, (held, lost), want))
    rc_real, holders, child = OUTSIDE[name]
    if got.rc != rc_real:
        bad.append("exit %d, the real run decides %d" % (got.rc, rc_real))
    bad += ["no 'held by the program at %s'" % h for h in holders
            if "held by the program at " + h not in text]
    if child and child not in got.text:
        bad.append("its children not said plainly ('%s')" % child)
    return bad, text


def main(argv):
    fakegc, suite, name = argv[1:4]
    d = argv[4] if len(argv) > 4 else None
    py = python_of(suite)
    if py is None:
        print("skipped: no root %s (scripts/torch-root.sh %s)" % (suite, suite))
        return 77
    prog = os.path.join(HERE, "..", "record", "programs", name + ".py")
    got = get(fakegc, d, os.path.abspath(prog), py)
    out = judged(name, got)
    bad, text = out if isinstance(out, tuple) else (out, "")
    print("%s under %s (torch %s): real run %s, fakegc exit %d" % (
        name, suite, got.torch, got.truth, got.rc))
    print(text)
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
