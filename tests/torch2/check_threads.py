#!/usr/bin/python3
"""check_threads.py FAKEGC ROOT SUITE - ctest (label `torch2`): programs
with threads recorded under real PyTorch (SUITE trixie: 2.6, forky: 2.14),
each recording whole, its threads marked, replayed with 0 fidelity
mismatches, and judged as the real run keeps:
  - tests/record/programs/threads_modes.py, twice (the threads' order
    differs from run to run): two threads with a mode each, two sharing
    one; exit 1, the 8 fakes of KEEP accumulating;
  - tests/record/programs/threads_death_switch.py: every fake's death is
    cut in two by a switch to the other thread, once after its C++ tensor
    should have gone and once before PyTorch's storage memo drops its entry
    (the recorder awaits both ends: engine.deaths_end); exit 0, no fake
    kept.
Exit 77 when the root is absent (scripts/torch-root.sh SUITE builds it)."""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "record"))
from check_record import classes  # noqa: E402

# program, runs, threads whose marks the recording must have, exit status,
# fake tensors per leak class in the verdict
PROGRAMS = (("threads_modes.py", 2, ("own_mode", "shared"), 1, {"accumulating": 8}),
            ("threads_death_switch.py", 1, ("convert",), 0, {}))


def check(fakegc, py, prog, out, names, want_rc, want_fakes):
    """The problems of one recording of prog (none: [])."""
    r = subprocess.run([fakegc, "record", "--python", py, "--format", "json", "-o", out,
                        "--", prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        rep = json.loads(r.stdout)["scenarios"][0]
    except (ValueError, KeyError, IndexError):
        return ["no report (exit %d): %s" % (r.returncode, r.stderr[-800:])]
    text = open(out).read()
    head = text.split("\nconfig ", 1)[0]
    problems = ["fidelity: %s (actual %s)" % (f["text"], f.get("actual"))
                for f in rep["failures"]]
    if r.returncode != want_rc:
        problems.append("exit %d, the real run says %d" % (r.returncode, want_rc))
    got = {c: n for (c, noun), n in classes((rep.get("verdict") or {}).get("text", "")).items()
           if noun == "fake tensor"}
    if got != want_fakes:
        problems.append("fake tensors in the verdict: %s, the real run keeps %s"
                        % (got, want_fakes))
    marked = set(re.findall(r"^# thread: Thread-\d+ \((\w+)\)$", text, re.M))
    if not set(names) <= marked:
        problems.append("threads not marked: %s (marks: %s)" % (names, sorted(marked)))
    problems += ["header says %s" % w for w in ("INTERNAL", "STOPPED", "REFUSED") if w in head]
    return problems


def main(fakegc, root, suite):
    roots = os.environ.get("FAKEGC_ROOTS", "/var/cache/fakegc/roots")
    py = os.path.join(roots, suite + "-python3")
    if not os.path.isfile(os.path.join(roots, suite, ".fakegc-root")) or not os.access(py, os.X_OK):
        print("skipped: no PyTorch root %s/%s" % (roots, suite))
        return 77
    progs = os.path.join(os.path.abspath(root), "tests", "record", "programs")
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for name, runs, threads, want_rc, want_fakes in PROGRAMS:
            for k in range(runs):
                problems = check(fakegc, py, os.path.join(progs, name),
                                 os.path.join(d, "%s.%d.scn" % (name, k)), threads, want_rc,
                                 want_fakes)
                for p in problems[:5]:
                    print("FAIL %s run %d: %s" % (name, k + 1, p))
                bad += bool(problems)
                if not problems:
                    print("ok %s run %d: 0 fidelity mismatches, threads marked" % (name, k + 1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
