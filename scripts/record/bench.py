#!/usr/bin/python3
"""bench.py [-n N] [--fakegc PATH] [--python P] [--set examples|examples2] [EXAMPLE...]
- the recorder's cost.

For each example (default: all of scripts/record/examples under 1.x; with a
2.x --python, such as a launcher of scripts/torch-root.sh, those of
scripts/record/examples2; --set picks either), N interleaved rounds of: the
program under record.py --no-hooks (same harness, no hooks), the program
recorded, and the recording replayed by `fakegc run` (the recording's own
design; its wall_ms). CPU time as record.py prints it: the program's own,
and recorded, with the hooks and the recorder's end (see example()).
Prints a Markdown row per example: median and spread (min..max) of each and
the same-round ratio recorded/program.

--scale N,N,...: the recorder at scale instead (scripts/record/scale.py, N
fakes in one loop, every 1000th kept): per size, -n interleaved rounds of
the program alone (--no-hooks), recorded, and replayed, each a process of
its own measured from outside (wall seconds and peak RSS from wait4, the
whole process: interpreter, torch's import, the recorder's end and its
file); the recording's bytes; the replay's verdict, which must be the
program's own (accumulating N/1000 fakes, 0 fidelity mismatches)."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EX = os.path.join(ROOT, "scripts", "record", "examples")


def prog_cpu(err):
    """The CPU seconds record.py prints: the program's own (with the hooks
    when recorded) plus the recorder's end (its collection, holders and
    file), or None when it did not print them."""
    m = re.search(r"program [0-9.]+ s, cpu ([0-9.]+) s(?:, end cpu ([0-9.]+) s)?", err)
    return float(m.group(1)) + float(m.group(2) or 0) if m else None


def spread(xs, unit, scale=1.0):
    xs = [x * scale for x in xs]
    return "%.3f%s (%.3f..%.3f)" % (statistics.median(xs), unit and " " + unit, min(xs),
                                    max(xs))


def measured(argv):
    """Run argv: (wall s, CPU s, peak RSS MiB, stdout, stderr, status): the
    CPU time (user + system) and RSS of the process and its waited-for
    children (wait4)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0,
                out.read().decode(errors="replace"), err.read().decode(errors="replace"),
                p.returncode)


def scale(o, v):
    """The recorder at scale: see the module's docstring. CPU time is the
    figure to compare on a loaded machine (wall time waits for the cores)."""
    prog = os.path.join(ROOT, "scripts", "record", "scale.py")
    rec = os.path.join(ROOT, "scripts", "record.py")
    compat = ["--compat", "pytorch-1.13"] if v.startswith("1.") else []
    print("load average %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    cols = (("pc", "plain cpu s"), ("rc", "recorded cpu s"), ("xc", "x"),
            ("pt", "plain wall s"), ("rt", "recorded wall s"),
            ("pm", "plain MiB"), ("rm", "recorded MiB"), ("xm", "x"),
            ("yc", "replay cpu s"), ("ym", "replay MiB"))
    print("| fakes | %s | scn bytes |" % " | ".join(t for _, t in cols))
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "scale.scn")
        for n in [int(x) for x in o.scale.split(",")]:
            keep = n // 1000
            rows = {k: [] for k, _ in cols}
            size = 0
            for _ in range(o.n):
                pt, pc, pm, _, e, st = measured([o.python, rec, "--no-hooks", prog, str(n)])
                if st:
                    raise SystemExit("bench.py: the program failed: %s" % e[-500:])
                rt, rc, rm, _, e, st = measured([o.python, rec, "-o", out, prog, str(n)])
                if st not in (0, 1) or not os.path.exists(out):
                    raise SystemExit("bench.py: recording failed (%d): %s" % (st, e[-500:]))
                size = os.path.getsize(out)
                _, yc, ym, j, e, st = measured([o.fakegc, "run", "--format", "json"] +
                                               compat + [out])
                check_verdict(json.loads(j)["scenarios"][0], keep, n)
                os.unlink(out)
                for k, x in (("pc", pc), ("rc", rc), ("xc", rc / pc), ("pt", pt), ("rt", rt),
                             ("pm", pm), ("rm", rm), ("xm", rm / pm), ("yc", yc), ("ym", ym)):
                    rows[k].append(x)
            cells = []
            for k, _ in cols:
                xs, f = rows[k], "%.2f" if k[0] in "xy" or k[1] in "ct" else "%.0f"
                cells.append((f + " (" + f + ".." + f + ")") % (
                    statistics.median(xs), min(xs), max(xs)))
            print("| %d | %s | %d |" % (n, " | ".join(cells), size))
            sys.stdout.flush()
    print("load average %s" % " ".join("%.2f" % x for x in os.getloadavg()))


def check_verdict(s, keep, n):
    """The replay's verdict must be the program's: `keep` fakes accumulating
    (held in KEPT), none lost, and no fidelity mismatch."""
    if s["failures"] or s["expectations"]["failed"]:
        raise SystemExit("bench.py: the %d-fake replay has fidelity mismatches: %s"
                         % (n, json.dumps(s["failures"])[:500]))
    v = s["verdict"]
    if v["lost"] or v["accumulating"] != keep:
        raise SystemExit("bench.py: the %d-fake replay's verdict is %d lost, %d accumulating "
                         "(the program keeps %d)" % (n, v["lost"], v["accumulating"], keep))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--scale", default=None,
                    help="N,N,...: the recorder at these numbers of fakes (scale.py)")
    ap.add_argument("--fakegc", default=os.path.join(ROOT, "build", "fakegc"))
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--set", default=None, choices=("examples", "examples2"),
                    help="which examples (default: examples under 1.x, examples2 under 2.x)")
    ap.add_argument("examples", nargs="*")
    o = ap.parse_args()
    v = subprocess.run([o.python, "-c", "import torch; print(torch.__version__)"],
                       stdout=subprocess.PIPE, text=True).stdout.strip()
    if o.scale:
        return scale(o, v)
    ex = os.path.join(ROOT, "scripts", "record", o.set) if o.set else \
        EX if v.startswith("1.") else EX + "2"
    names = o.examples or sorted(f[:-3] for f in os.listdir(ex) if f.endswith(".py"))
    compat = ["--compat", "pytorch-1.13"] if v.startswith("1.") else []
    rec = os.path.join(ROOT, "scripts", "record.py")
    print("torch %s (%s), %s, %d interleaved rounds: median (min..max); CPU seconds; "
          "load average %s" % (v, o.python, os.path.basename(ex), o.n,
                               " ".join("%.2f" % x for x in os.getloadavg())))
    print("| example | program | recorded | replay ms | recorded / program |")
    with tempfile.TemporaryDirectory() as d:
        for n in names:
            row = example(o, os.path.join(ex, n + ".py"), os.path.join(d, n + ".scn"), rec,
                          compat)
            print("| %s | %s |" % (n, row))
            sys.stdout.flush()
    print("load average %s" % " ".join("%.2f" % x for x in os.getloadavg()))


def example(o, prog, out, rec, compat):
    """-n interleaved rounds of one example: the program alone (--no-hooks)
    and recorded, and the recording replayed. "program" and "recorded" are
    CPU seconds as record.py prints them: the program's own (torch's import
    is not in it), and when recorded, with the hooks and the recorder's end
    (its collection, holders, the file). A program that fails alone under
    this torch is said, not measured."""
    plain, recd, rep, ratio = [], [], [], []
    for _ in range(o.n):
        e, st = measured([o.python, rec, "--no-hooks", prog])[4:]
        p = prog_cpu(e)
        if st or p is None:
            said = [ln for ln in e.splitlines() if ln.strip() and
                    not ln.startswith("record.py:")]
            return "fails alone under this torch (exit %d: %s) | | | " % (
                st, said[-1].strip()[:80] if said else "no message")
        e, st = measured([o.python, rec, "-o", out, prog])[4:]
        r = prog_cpu(e)
        if r is None or not os.path.exists(out):
            raise SystemExit("bench.py: recording %s failed (%d): %s" % (prog, st, e[-500:]))
        j = subprocess.run([o.fakegc, "run", "--format", "json"] + compat + [out],
                           stdout=subprocess.PIPE, text=True)
        s = json.loads(j.stdout)["scenarios"][0]
        if s["failures"]:   # a leaking example fails its verdict; fidelity may not fail
            raise SystemExit("bench.py: the replay of %s has fidelity mismatches" % prog)
        plain.append(p)
        recd.append(r)
        rep.append(s["stats"]["wall_ms"])
        ratio.append(r / p if p > 0 else float("nan"))
    return "%s | %s | %s | %.1fx (%.1f..%.1f)" % (
        spread(plain, "s"), spread(recd, "s"), spread(rep, ""),
        statistics.median(ratio), min(ratio), max(ratio))

if __name__ == "__main__":
    main()
