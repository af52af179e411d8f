"""record.py --compare: the recording replayed under the periodic and the
eager sweep, peak and final pending storages and memo entries."""

import json
import os
import subprocess
import sys
import tempfile


def probe(rec):
    """A copy of the recording without its expectations and with, after
    every statement, an impossible expectation per live mode whose failure
    reports fakegc's value (JSON 'actual')."""
    lines, alive, depth = [], [], 0
    lines.append("# probe written by record.py --compare")
    order = {}
    for ln in [p for x in rec.lines for p in list(x.pre) + [x]]:
        if ln.kind == "expect":
            continue
        if ln.kind == "close":
            depth -= 1
        lines.append("  " * depth + ln.text)
        if ln.kind == "open":
            depth += 1
        t = ln.text
        if t.endswith("= fake_mode()") or t.endswith("= meta_converter()"):
            alive.append(t.split(" ")[0])
        if t.startswith("del "):
            for nm in t[4:].split(", "):
                if nm in alive:
                    alive.remove(nm)
        if ln.kind in ("stmt",):
            for nm in alive:
                for c in ("memo_meta", "memo_storage", "pending") + (
                        ("memo_fake",) if nm.startswith("m") else ()):
                    lines.append("  " * depth + "expect %s.%s == -1" % (nm, c))
                    order[len(lines)] = (nm, c)
    return "\n".join(lines) + "\n", order


def compare(rec, fakegc, out_path):
    text, order = probe(rec)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "probe.scn")
        with open(p, "w") as f:
            f.write(text)
        rows = {}
        for label, extra in (("periodic (pytorch-1.13)", ["--compat", "pytorch-1.13"]),
                             ("eager (fakegc default)", ["--sweep", "eager"])):
            r = subprocess.run([fakegc, "run", "--format", "json", "--max-statements", "0"]
                               + extra + [p], stdout=subprocess.PIPE, text=True)
            if r.returncode not in (0, 1):
                print("record.py: fakegc failed on the probe (%d)" % r.returncode, file=sys.stderr)
                return 1
            rep = json.loads(r.stdout)["scenarios"][0]
            series = {}      # line -> (name, counter, value)
            for fl in rep.get("failures", []):
                if fl["line"] in order:
                    series[fl["line"]] = order[fl["line"]] + (int(fl["actual"]),)
            rows[label] = summarize(series)
    print("%s: peak and final under both policies (fakegc replay)" % out_path)
    print("%-26s %14s %14s %14s %14s" % ("policy", "peak pending", "final pending",
                                         "peak memo", "final memo"))
    for label, s in rows.items():
        print("%-26s %14d %14d %14d %14d" % ((label,) + s))
    return 0


def summarize(series):
    """series: line -> (name, counter, value). Per statement, the sum over
    live converters: pending storages (pending) and memo entries (fake +
    meta + storage)."""
    by_stmt = {}
    lines = sorted(series)
    group, prev = 0, None
    for ln in lines:
        if prev is not None and ln != prev + 1:
            group += 1
        prev = ln
        name, c, v = series[ln]
        g = by_stmt.setdefault(group, {"pending": 0, "memo": 0})
        g["pending" if c == "pending" else "memo"] += v
    if not by_stmt:
        return (0, 0, 0, 0)
    vals = [by_stmt[g] for g in sorted(by_stmt)]
    return (max(v["pending"] for v in vals), vals[-1]["pending"],
            max(v["memo"] for v in vals), vals[-1]["memo"])


