#!/usr/bin/python3
"""check_make_fx.py FAKEGC ROOT PROGRAM PYTHON [DIR] - ctest: a make_fx program
(tests/record/programs/PROGRAM.py) judged as the real run decides.

PYTHON is /usr/bin/python3 (Debian's 1.13.1) or a root of scripts/torch-root.sh
(trixie: 2.6, forky: 2.14; its launcher in $FAKEGC_ROOTS or
/var/cache/fakegc/roots; 77, skipped, when absent). The real run: PROGRAM
under that Python with a weak reference to every FakeTensor and
FakeTensorMode it makes, counted alive after gc.collect() (tests/record/
truth.py; the program holds none of them at its end: every graph is
dropped). fakegc then records and
replays it, and must say:
  - 0 fidelity mismatches;
  - lost fake tensors == the real run's live fakes, lost modes == its live
    modes, nothing held; exit 1 when something is kept, else 0;
  - every lost group of fakes and modes held inside PyTorch by a view's
    base held from C++ (JSON root "pytorch", mechanism "view-base"; the
    text's "held inside PyTorch by a view's base, held from C++");
  - the recording replayed under fakegc's own design (a what-if: its
    config recording and compat left out, a plain scenario; the one row
    without the rule, where a view's base is no hidden reference) keeps no
    fake: the rule is what keeps them.
The real run and the recording are runs.py's, read from DIR where a
fixture ctest made them, else made here.
Prints the real counts and fakegc's verdict lines."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runs import get, python_of, run  # noqa: E402

MECH = "held inside PyTorch by a view's base, held from C++ (not visible to gc)"


def counts(groups, noun):
    """{(class, mechanism): count} of the verdict's groups of one kind."""
    out = {}
    for g in groups:
        if g["kind"].startswith(noun):
            key = (g["class"], g.get("mechanism"))
            out[key] = out.get(key, 0) + g["count"]
    return out


def program_runs(fakegc, root, name, pyname, d=None):
    """(the runs of tests/record/programs/NAME.py under pyname (runs.py),
    None), or (None, exit): 77 after saying its root is absent, 1 after
    saying fakegc record gave no report. d: the fixture's folder, if any."""
    py = python_of(pyname)
    if py is None:
        print("skipped: no root %s (scripts/torch-root.sh %s)" % (pyname, pyname))
        return None, 77
    prog = os.path.join(os.path.abspath(root), "tests", "record", "programs", name + ".py")
    got = get(fakegc, d, prog, py)
    if got.report is None:
        print(got.said)
        print("FAIL: no report (exit %d)" % got.rc)
        return None, 1
    return got, None


def main(fakegc, root, name, pyname, d=None):
    runs, rc = program_runs(fakegc, root, name, pyname, d)
    if runs is None:
        return rc
    if runs.truth is None:
        print("FAIL: the real run: %s" % runs.truth_error)
        return 1
    real = {k: runs.truth[k]["alive"] for k in ("fake", "mode")}
    print("real run (%s): %d fakes and %d modes alive after gc.collect()"
          % (pyname, real["fake"], real["mode"]))
    bad = []
    rc, sc = runs.rc, runs.report
    with tempfile.TemporaryDirectory() as d:
        v = sc.get("verdict") or {"groups": [], "text": ""}
        print(v["text"].rstrip())
        if sc["failures"]:
            bad.append("%d fidelity mismatches: %s" % (len(sc["failures"]),
                                                        [f["text"] for f in sc["failures"][:3]]))
        kept = real["fake"] + real["mode"]
        if rc != (1 if kept else 0):
            bad.append("exit %d; the real run keeps %d fakes and modes" % (rc, kept))
        for noun, kind in (("fake tensor", "fake"), ("mode", "mode")):
            got = counts(v["groups"], noun)
            want = {("lost", "view-base"): real[kind]} if real[kind] else {}
            if got != want:
                bad.append("%ss: fakegc says %s, the real run keeps %d (lost, view-base)"
                           % (noun, got, real[kind]))
        if real["fake"] and MECH not in v["text"]:
            bad.append("the verdict does not say %r" % MECH)
        # the rule is what keeps them: fakegc's own design (the recording as
        # a plain scenario: no config recording or compat) has no hidden base
        bare = os.path.join(d, name + "_own.scn")
        with open(bare, "w") as dst:
            dst.writelines(ln for ln in runs.text.splitlines(True)
                           if not ln.startswith(("config compat", "config recording")))
        r2 = run([fakegc, "run", "--format", "json", bare])
        try:
            own = json.loads(r2.stdout)["scenarios"][0].get("verdict") or {"groups": []}
        except (ValueError, KeyError, IndexError):
            own = None
        if own is None or counts(own["groups"], "fake tensor"):
            bad.append("under fakegc's design (no view-base rule) the recording keeps %s"
                       % (own and counts(own["groups"], "fake tensor")))
    for b in bad:
        print("FAIL: %s: %s" % (name, b))
    if bad:
        return 1
    print("ok: %s under %s: fakegc keeps what the real run keeps, 0 fidelity mismatches"
          % (name, pyname))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:6]))
