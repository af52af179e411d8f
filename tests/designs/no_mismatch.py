#!/usr/bin/env python3
"""no_mismatch.py FAKEGC [RUN ARGS...] -- [LEAKING.scn...]

Runs `FAKEGC run --format json RUN ARGS` and passes when every expectation
held in every scenario and nothing was left (no errors). The scenarios named
after `--` (by the end of their path) must fail instead, keeping an object
with no holder (refcount-leak): under pytorch-1.13 those whose fake memo hit
1.13.1's _fix_weakref leak makes immortal (a recording's expectations still
hold there; a hand-written one may assert the fixed behaviour). Under
--repeat, the growth such a leak shows (failures of kind "growth") is expected
of those too."""
import json
import re
import subprocess
import sys


def main(argv):
    fakegc, rest = argv[0], argv[1:]
    leaking = []
    if "--" in rest:
        i = rest.index("--")
        rest, leaking = rest[:i], rest[i + 1:]
    r = subprocess.run([fakegc, "run", "--format", "json"] + rest,
                       stdout=subprocess.PIPE, text=True)
    if r.returncode not in (0, 1):
        print("FAIL: fakegc run exited %d" % r.returncode)
        return 1
    bad = 0
    seen = set()
    compat = rest[rest.index("--compat") + 1] if "--compat" in rest else None
    for s in json.loads(r.stdout)["scenarios"]:
        name = s["file"]
        declared = re.search(r'^config compat = "([^"]+)"', open(name).read(), re.M)
        if compat and declared and declared.group(1) != compat:
            continue    # it asserts its own design's answers; --compat overrode it
        want_leak = [x for x in leaking if name.endswith(x)]
        if want_leak:
            seen.add(want_leak[0])
            # the immortal fake: strong count 1, no holder (refcount-leak)
            expects = [f for f in s["failures"] if f.get("kind") != "growth"]
            if "recorded/" in name and expects:
                print("FAIL %s: a recording's expectation failed: %s" % (name, s["failures"][:2]))
                bad += 1
            elif s["status"] != "fail" or '"refcount-leak"' not in json.dumps(s):
                print("FAIL %s: expected to keep its immortal fake, status %s"
                      % (name, s["status"]))
                bad += 1
        elif s["status"] == "error" or s["failures"]:
            print("FAIL %s: %s" % (name, s["failures"][:2] or s["error"]))
            bad += 1
        elif s["status"] != "pass":
            print("FAIL %s: %s, retained %d objects" % (name, s["status"], len(s["retained"])))
            bad += 1
    for x in leaking:
        if x not in seen:
            print("FAIL %s: not run, or it did not leak" % x)
            bad += 1
    print("%d problem(s)" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
