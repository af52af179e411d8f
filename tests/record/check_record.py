#!/usr/bin/python3
"""check_record.py FAKEGC ROOT NAME - ctest (label `record`) for one example.

Records scripts/record/examples/NAME.py again with real PyTorch 1.13.1,
requires the recording to equal scenarios/recorded/NAME.scn (the committed
one), and requires `fakegc run --compat pytorch-1.13` to pass on it.
Exit 77 (skipped) where torch (or, for the ResNet examples, torchvision)
is not importable."""
import difflib
import json
import os
import subprocess
import sys
import tempfile


def main(fakegc, root, name):
    prog = os.path.join(root, "scripts", "record", "examples", name + ".py")
    ref = os.path.join(root, "scenarios", "recorded", name + ".scn")
    if "import torchvision" in open(prog).read():
        r = subprocess.run(["/usr/bin/python3", "-c", "import torchvision"],
                           stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            print("skipped: python3-torchvision is not installed")
            return 77
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, name + ".scn")
        r = subprocess.run(["/usr/bin/python3", os.path.join(root, "scripts", "record.py"),
                            "-o", out, prog], cwd=root)
        if r.returncode == 77:
            return 77
        if r.returncode != 0:
            print("FAIL: record.py exited %d" % r.returncode)
            return 1
        new = open(out).read().splitlines(True)
        old = open(ref).read().splitlines(True)
        if new != old:
            sys.stdout.writelines(difflib.unified_diff(old, new, ref, "recorded now", n=1))
            print("FAIL: the recording differs from %s" % ref)
            return 1
        # 0 mismatches: every expectation holds. What the program left at
        # its end (1.13.1's _fix_weakref fakes) is its verdict, not a mismatch.
        r = subprocess.run([fakegc, "run", "--format", "json", "--compat", "pytorch-1.13", out],
                           stdout=subprocess.PIPE, text=True)
        rep = json.loads(r.stdout)["scenarios"][0] if r.returncode in (0, 1) else None
        if rep is None or rep["failures"] or rep["status"] == "error":
            print("FAIL: fakegc run --compat pytorch-1.13 exited %d on the recording"
                  % r.returncode)
            return 1
    print("ok: %s recorded as committed and replays with 0 mismatches" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
