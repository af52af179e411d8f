#!/usr/bin/env python3
"""bench-cpython-gc.py [N] [REPEATS] - CPython's gc.collect() on N objects
(default 1M) in 2-cycles, the reference for fakegc's gc/cycles-1m.

Each pair is two lists holding each other (a = []; b = [a]; a.append(b)),
the simplest container cycle; the references from the building loop are
dropped, the automatic collector is off while building, and only
gc.collect() is timed (time.perf_counter_ns, CLOCK_MONOTONIC on Linux; and
the thread's CPU time, as fakegc's cpu_ns_per_op). Prints one JSON line:
{"python": "3.11.2", "objects": N, "ns_per_object": median, "min": ...,
"max": ..., "cpu_ns_per_object": median, "repeats": R}.
Run it with the system interpreter (/usr/bin/python3), as scripts/bench.sh
does."""
import gc
import json
import platform
import statistics
import sys
import time


def once(n):
    gc.disable()
    gc.collect()
    for _ in range(n // 2):
        a = []
        b = [a]
        a.append(b)
    del a, b
    c0 = time.thread_time_ns()
    t0 = time.perf_counter_ns()
    freed = gc.collect()
    t1 = time.perf_counter_ns()
    c1 = time.thread_time_ns()
    gc.enable()
    if freed < n:
        raise SystemExit(f"gc.collect() freed {freed} objects, expected {n}")
    return (t1 - t0) / n, (c1 - c0) / n


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    runs = [once(n) for _ in range(reps)]
    per = [w for w, _ in runs]
    cpu = [c for _, c in runs]
    print(json.dumps({"python": platform.python_version(), "executable": sys.executable,
                      "objects": n, "ns_per_object": round(statistics.median(per), 3),
                      "min": round(min(per), 3), "max": round(max(per), 3),
                      "cpu_ns_per_object": round(statistics.median(cpu), 3),
                      "repeats": reps}))


if __name__ == "__main__":
    main()
