#!/usr/bin/env python3
"""check_bench.py FAKEGC - the `bench` ctest: `fakegc bench --quick --format
json` is valid and complete, and the baseline comparison exits 1 against a
doctored baseline 10x faster, 0 against itself with a large tolerance.
No timed assertions beyond ns_per_op > 0."""
import json
import re
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import check, finish, runner  # noqa: E402

FAKEGC = sys.argv[1] if len(sys.argv) > 1 else "build/fakegc"


run = runner(FAKEGC, timeout=120)


def main():
    rc, out, err = run("list", "benches")
    check(rc == 0, f"list benches exits 0 (got {rc}: {err})")
    names = out.split()
    check(len(names) >= 17 and len(set(names)) == len(names),
          f"list benches: {len(names)} distinct names")
    for must in ("alloc/pair", "convert/miss", "gc/cycles-1m", "report/leak-1m",
                 "stress/steps", "lifecycle/churn", "weaktable/lookup-1m"):
        check(must in names, f"{must} is listed")

    with tempfile.TemporaryDirectory() as tmp:
        first = os.path.join(tmp, "quick.json")
        rc, out, err = run("bench", "--quick", "--format", "json", "--output", first)
        check(rc == 0, f"bench --quick exits 0 (got {rc}: {err})")
        with open(first) as f:
            doc = json.load(f)
        check(doc.get("tool") == "fakegc", "tool")
        for key in ("version", "allocator", "sweep"):
            check(isinstance(doc.get(key), str) and doc[key], f"{key} is a string")
        check(doc.get("allocator") == "libc" and doc.get("sweep") == "eager",
              "defaults: libc, eager")
        check(doc.get("quick") is True, "quick is recorded")
        for key in ("host", "cpu", "date"):
            check(isinstance(doc.get(key), str) and doc[key], f"{key} is a non-empty string")
        check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc.get("date") or "") is not None,
              f"date is ISO 8601 UTC: {doc.get('date')}")
        benches = doc.get("benchmarks")
        check(isinstance(benches, list), "benchmarks is a list")
        seen = [b.get("name") for b in benches]
        check(seen == names, f"every listed benchmark once, in order: {seen}")
        for b in benches:
            n = b.get("name")
            if b.get("available") is False:
                check(n == "stress/steps", f"{n}: only stress/steps may be unavailable")
                check("not available" in b.get("message", ""), f"{n}: says why")
                check(b.get("ns_per_op") is None, f"{n}: null ns_per_op")
                continue
            check(b.get("available") is True, f"{n}: available")
            for key in ("ns_per_op", "min_ns", "max_ns", "cpu_ns_per_op"):
                check(isinstance(b.get(key), (int, float)) and b[key] > 0, f"{n}: {key} > 0")
            for key in ("ops", "repeats", "peak_bytes"):
                check(isinstance(b.get(key), int) and b[key] > 0, f"{n}: {key} > 0")
            if all(isinstance(b.get(k), (int, float)) for k in ("min_ns", "ns_per_op", "max_ns")):
                check(b["min_ns"] <= b["ns_per_op"] <= b["max_ns"], f"{n}: min <= median <= max")
            check(b.get("repeats") == 5, f"{n}: 5 repeats by default")
            for key in ("samples_ns", "cpu_samples_ns"):
                v = b.get(key)
                check(isinstance(v, list) and len(v) == 5 and all(x > 0 for x in v),
                      f"{n}: {key} holds the 5 repeats")
            if isinstance(b.get("samples_ns"), list) and b["samples_ns"]:
                check(min(b["samples_ns"]) == b["min_ns"] and max(b["samples_ns"]) == b["max_ns"],
                      f"{n}: the samples span min_ns..max_ns")

        # A baseline 10x faster than this machine: every benchmark regresses.
        fast = os.path.join(tmp, "fast.json")
        doctored = json.loads(json.dumps(doc))
        # (every time field: the gate compares CPU time)
        for b in doctored["benchmarks"]:
            for key in ("ns_per_op", "min_ns", "max_ns", "cpu_ns_per_op"):
                if isinstance(b.get(key), (int, float)):
                    b[key] = b[key] / 10
            for key in ("samples_ns", "cpu_samples_ns"):
                if isinstance(b.get(key), list):
                    b[key] = [x / 10 for x in b[key]]
        with open(fast, "w") as f:
            json.dump(doctored, f)
        rc, out, err = run("bench", "--quick", "--repeats", "1", "--format", "json",
                           "--baseline", fast, "--tolerance", "25")
        check(rc == 1, f"10x faster baseline -> exit 1 (got {rc}: {err[-500:]})")
        check("REGRESSION" in err, "the regressions are named on stderr")
        json.loads(out)  # stdout stays valid JSON

        # Itself, with a tolerance no noise reaches: exit 0.
        rc, out, err = run("bench", "--quick", "--repeats", "1", "--baseline", first,
                           "--tolerance", "100000")
        check(rc == 0, f"own baseline, 100000% tolerance -> exit 0 (got {rc}: {err[-500:]})")
        check("0 regressions" in out, "text report says 0 regressions")

        # Usage errors exit 2.
        for args in (["bench", "no/such"], ["bench", "--format", "junit"],
                     ["bench", "--baseline", os.path.join(tmp, "missing.json")],
                     ["bench", "--repeats", "0"], ["bench", "--trace-memo", "5", "alloc/pair"]):
            rc, out, err = run(*args)
            check(rc == 2, f"{' '.join(args)} -> exit 2 (got {rc})")

        # The memo trace: eager stays at 0, periodic saws.
        rc, out, err = run("bench", "--trace-memo", "200", "--sweep", "periodic")
        rows = [line.split(",") for line in out.split()[1:]]
        check(rc == 0 and len(rows) == 200, f"trace-memo: 200 rows (rc {rc})")
        check(max(int(r[1]) for r in rows) >= 127, "periodic storage memo reaches 127")

    return finish("bench checks passed")


if __name__ == "__main__":
    sys.exit(main())
