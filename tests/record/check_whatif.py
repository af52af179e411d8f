#!/usr/bin/python3
"""check_whatif.py FAKEGC RECORDINGS_DIR - every shipped recording replays
under every memo design (designs.md "Replaying a 1.13.1 recording under
2.x"): under pytorch-1.13 its expectations are checked (0 fidelity
mismatches, nothing skipped, no what-if); under each other design none is
checked (all counted as skipped), the report carries the what-if lines,
and the exit status is the verdict's alone (0 when it passes, 1 when it
fails, never for a counter). The designs are the ones the binary lists in
its --designs error. No torch needed."""
import glob
import json
import os
import re
import subprocess
import sys

fakegc, root = sys.argv[1], sys.argv[2]
r = subprocess.run([fakegc, "record", "--designs", "?", "--", "x.py"],
                   stderr=subprocess.PIPE, text=True)
designs = re.search(r"comma list of: (.*)\)", r.stderr).group(1).split(", ")
assert "pytorch-1.13" in designs and len(designs) >= 2, r.stderr
bad = []
for path in sorted(glob.glob(os.path.join(root, "**", "*.scn"), recursive=True)):
    nexpect = sum(1 for ln in open(path) if ln.lstrip().startswith("expect "))
    for d in designs:
        p = subprocess.run([fakegc, "run", "--compat", d, "--format", "json", path],
                           stdout=subprocess.PIPE, text=True)
        s = json.loads(p.stdout)["scenarios"][0]
        v, w = s["verdict"], s.get("whatif")
        fails = bool(v) and any(v[c] for c in ("lost", "accumulating"))
        if d == "pytorch-1.13":
            ok = w is None and s["failures"] == [] and p.returncode == int(fails)
        else:
            ok = (w is not None and w["skipped_fidelity"] >= nexpect > 0 and
                  s["failures"] == [] and p.returncode == int(fails) and
                  w["text"].startswith("what-if under %s:" % d))
        if not ok:
            bad.append("%s under %s: rc %d, whatif %s, %d failures" % (
                path, d, p.returncode, w and w["skipped_fidelity"], len(s["failures"])))
print("%d recordings x %d designs" % (len(glob.glob(os.path.join(root, "**", "*.scn"),
                                                    recursive=True)), len(designs)))
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
