#!/usr/bin/env python3
"""check_compare.py FAKEGC SRC - `fakegc bench --compare` on real saved runs:
a copy of a run 30% slower on every row fails (exit 1), every row whose
repeats are quiet (sd under 10% of the mean) is SLOWER with p < 0.05, in
text, JSON (valid against its schema) and Markdown; the same run against
itself passes (exit 0, no row slower, p = 1); a copy 10% slower is within
the tolerance; host, CPU and date of both runs are shown."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import check, finish, runner  # noqa: E402

FAKEGC, SRC = sys.argv[1], sys.argv[2]


run = runner(FAKEGC, timeout=300)


def scaled(doc, k):
    d = json.loads(json.dumps(doc))
    for b in d["benchmarks"]:
        for key in ("ns_per_op", "min_ns", "max_ns", "cpu_ns_per_op"):
            if isinstance(b.get(key), (int, float)):
                b[key] = b[key] * k
        for key in ("samples_ns", "cpu_samples_ns"):
            if isinstance(b.get(key), list):
                b[key] = [x * k for x in b[key]]
    return d


def quiet(b):
    s = b["cpu_samples_ns"]
    return statistics.stdev(s) < 0.10 * statistics.mean(s)


def validate(path):
    schema = os.path.join(SRC, "src/report/schema/fakegc-bench-compare-1.schema.json")
    p = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests/report/validate.py"),
                        schema, path], capture_output=True, text=True)
    check(p.returncode == 0, f"{path} valid: {p.stdout[-500:]}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base.json")
        rc, _, err = run("bench", "--quick", "--repeats", "5", "alloc", "weaktable", "convert",
                         "--format", "json", "--output", base)
        check(rc == 0, f"saved run: exit 0 (got {rc}: {err[-300:]})")
        doc = json.load(open(base))
        slow = os.path.join(tmp, "slow.json")
        json.dump(scaled(doc, 1.3), open(slow, "w"))
        bit = os.path.join(tmp, "bit.json")
        json.dump(scaled(doc, 1.1), open(bit, "w"))
        quiet_names = {b["name"] for b in doc["benchmarks"] if b.get("available") and quiet(b)}
        print(f"{len(quiet_names)} of {len(doc['benchmarks'])} rows quiet: {sorted(quiet_names)}")
        check(len(quiet_names) >= 1, "at least one quiet row to test with")

        # text
        rc, out, err = run("bench", "--compare", base, slow)
        print(out)
        check(rc == 1, f"+30%: exit 1 (got {rc}: {err})")
        for n in quiet_names:
            line = next((l for l in out.splitlines() if l.split()[:1] == [n]), "")
            check("SLOWER" in line and "+30.0%" in line, f"+30% text row of quiet {n}: {line}")
            check(f"REGRESSION {n}:" in out, f"REGRESSION line for {n}")
        check(doc["host"] in out and doc["cpu"] in out and doc["date"] in out,
              "host, CPU and date shown")
        rc, out, err = run("bench", "--compare", base, base)
        print(out)
        check(rc == 0, f"itself: exit 0 (got {rc}: {err})")
        check(not any(l.endswith("SLOWER") for l in out.splitlines()) and "compare: 0 regressions" in out,
              "itself: nothing slower")
        rc, out, _ = run("bench", "--compare", base, bit)
        check(rc == 0, f"+10% within a 25% tolerance: exit 0 (got {rc})")

        # JSON
        js = os.path.join(tmp, "cmp.json")
        rc, _, err = run("bench", "--compare", base, slow, "--format", "json", "--output", js)
        check(rc == 1, f"+30% json: exit 1 (got {rc}: {err})")
        validate(js)
        c = json.load(open(js))
        rows = {r["name"]: r for r in c["benchmarks"]}
        for n in quiet_names:
            r = rows[n]
            check(r["slower"] and r["test"]["p"] < 0.05 and abs(r["change_pct"] - 30) < 1e-6,
                  f"json {n}: slower, p {r['test']['p']}, change {r['change_pct']}")
            check(r["new"]["n"] == 5 and r["baseline"]["n"] == 5, f"json {n}: 5 repeats each")
        check(c["regressions"] >= len(quiet_names), "json: regressions counted")
        check(c["baseline"]["cpu"] == doc["cpu"], "json: the baseline's CPU")
        rc, _, _ = run("bench", "--compare", base, base, "--format", "json", "--output", js)
        validate(js)
        c = json.load(open(js))
        check(rc == 0 and c["regressions"] == 0, "itself (json): 0 regressions")
        check(all(r["test"]["p"] == 1 and r["change_pct"] == 0 for r in c["benchmarks"]),
              "itself (json): p 1 and no change on every row")

        # Markdown
        rc, out, _ = run("bench", "--compare", base, slow, "--format", "markdown")
        print(out)
        check(rc == 1 and out.startswith("### fakegc bench: regressions"), f"markdown head ({rc})")
        for n in quiet_names:
            check(any(l.startswith(f"| `{n}` |") and "**slower**" in l for l in out.splitlines()),
                  f"markdown row of {n} says slower")
        rc, out, _ = run("bench", "--compare", base, base, "--format", "markdown")
        check(rc == 0 and "no regression" in out.splitlines()[0], "markdown itself")

        # usage
        rc, _, _ = run("bench", "--format", "markdown", "alloc/pair")
        check(rc == 2, f"markdown without --compare: exit 2 (got {rc})")
        rc, _, _ = run("bench", "--compare", base)
        check(rc == 2, f"--compare with one file: exit 2 (got {rc})")

    return finish("check_compare: ok")


sys.exit(main())
