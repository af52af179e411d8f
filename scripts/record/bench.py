#!/usr/bin/python3
"""bench.py [-n N] [--fakegc PATH] [--python P] [EXAMPLE...] - the recorder's cost.

For each example (default: all of scripts/record/examples; with a 2.x
--python, such as a launcher of scripts/torch-root.sh, those of
scripts/record/examples2), N interleaved
rounds of: the program under record.py --no-hooks (same runpy harness, no
hooks), the program recorded, and the recording replayed by
`fakegc run` (the recording's own design; its wall_ms). Prints median and
spread (min..max) of each and the same-round ratio recorded/plain."""
import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EX = os.path.join(ROOT, "scripts", "record", "examples")


def prog_time(python, args):
    r = subprocess.run([python, os.path.join(ROOT, "scripts", "record.py")] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(r"program ([0-9.]+) s", r.stderr)
    if r.returncode != 0 or not m:
        raise SystemExit("bench.py: record.py failed: %s" % r.stderr[-500:])
    return float(m.group(1))


def spread(xs, unit, scale=1.0):
    xs = [x * scale for x in xs]
    return "%8.3f %s (%.3f..%.3f)" % (statistics.median(xs), unit, min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--fakegc", default=os.path.join(ROOT, "build", "fakegc"))
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("examples", nargs="*")
    o = ap.parse_args()
    v = subprocess.run([o.python, "-c", "import torch; print(torch.__version__)"],
                       stdout=subprocess.PIPE, text=True).stdout.strip()
    ex = EX if v.startswith("1.") else EX + "2"
    names = o.examples or sorted(f[:-3] for f in os.listdir(ex) if f.endswith(".py"))
    print("torch %s (%s), %d interleaved rounds: median (min..max)" % (v, o.python, o.n))
    print("%-16s %-28s %-28s %-24s %s" % ("example", "program plain", "program recorded",
                                          "replay", "ratio"))
    with tempfile.TemporaryDirectory() as d:
        for n in names:
            prog = os.path.join(ex, n + ".py")
            out = os.path.join(d, n + ".scn")
            plain, rec, rep, ratio = [], [], [], []
            for _ in range(o.n):
                p = prog_time(o.python, ["--no-hooks", prog])
                r = prog_time(o.python, ["-o", out, prog])
                compat = ["--compat", "pytorch-1.13"] if v.startswith("1.") else []
                j = subprocess.run([o.fakegc, "run", "--format", "json"] + compat + [out],
                                   stdout=subprocess.PIPE, text=True)
                s = json.loads(j.stdout)["scenarios"][0]
                if s["failures"]:   # a leaking example fails its verdict; fidelity may not fail
                    raise SystemExit("bench.py: the replay of %s has fidelity mismatches" % n)
                plain.append(p)
                rec.append(r)
                rep.append(s["stats"]["wall_ms"])
                ratio.append(r / p)
            print("%-16s %-28s %-28s %-24s %5.1fx (%.1f..%.1f)" % (
                n, spread(plain, "s"), spread(rec, "s"), spread(rep, "ms"),
                statistics.median(ratio), min(ratio), max(ratio)))


if __name__ == "__main__":
    main()
