#!/usr/bin/python3
"""check_threads.py FAKEGC ROOT SUITE - ctest (label `torch2`):
tests/record/programs/threads_modes.py (two threads with a mode each, two
sharing one) recorded under real PyTorch (SUITE trixie: 2.6, forky: 2.14)
twice (the threads' order differs from run to run): each recording whole,
its threads marked, and replayed with 0 fidelity mismatches. Exit 77 when
the root is absent (scripts/torch-root.sh SUITE builds it)."""
import json
import os
import re
import subprocess
import sys
import tempfile


def main(fakegc, root, suite):
    roots = os.environ.get("FAKEGC_ROOTS", "/var/cache/fakegc/roots")
    py = os.path.join(roots, suite + "-python3")
    if not os.path.isfile(os.path.join(roots, suite, ".fakegc-root")) or not os.access(py, os.X_OK):
        print("skipped: no PyTorch root %s/%s" % (roots, suite))
        return 77
    prog = os.path.join(os.path.abspath(root), "tests", "record", "programs", "threads_modes.py")
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for k in range(2):
            out = os.path.join(d, "thr%d.scn" % k)
            r = subprocess.run([fakegc, "record", "--python", py, "--format", "json", "-o", out,
                                "--", prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
            try:
                rep = json.loads(r.stdout)["scenarios"][0]
            except (ValueError, KeyError, IndexError):
                print("FAIL %d: no report (exit %d): %s" % (k, r.returncode, r.stderr[-800:]))
                return 1
            text = open(out).read()
            head = text.split("\nconfig ", 1)[0]
            problems = ["fidelity: %s (actual %s)" % (f["text"], f.get("actual"))
                        for f in rep["failures"]]
            if len(re.findall(r"^# thread: Thread-\d+ \((own_mode|shared)\)$", text, re.M)) < 4:
                problems.append("fewer than 4 thread marks")
            problems += ["header says %s" % w for w in ("INTERNAL", "STOPPED", "REFUSED")
                         if w in head]
            for p in problems[:5]:
                print("FAIL %d: %s" % (k, p))
            bad += bool(problems)
            if not problems:
                print("ok %d: 0 fidelity mismatches, threads marked" % k)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
