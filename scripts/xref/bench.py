#!/usr/bin/python3
"""bench.py - what fakegc's benchmarks are to be compared with, measured on
this machine with real PyTorch 1.13 and CPython.

usage: scripts/xref/bench.py [--fakegc build-release/fakegc] [--tensors 20000]
                             [--objects 1000000] [--reps 5]
                             [--allocators libc,jemalloc,arena] [--suite] [-v]

Prints one JSON line
    {"pytorch_convert_us": ..., "pytorch_delete_us": ..., "cpython_gc_ns_per_object": ...}
 - pytorch_convert_us: FakeTensorMode.from_tensor on a fresh 4x4 float
   tensor (a memo miss: MetaConverter + FakeTensor), per tensor;
 - pytorch_delete_us: deleting a real tensor that has memo entries (its two
   weakref.finalize callbacks run: fake memo, meta memo + pending list), per
   tensor, with its fake tensor kept alive;
 - cpython_gc_ns_per_object: gc.collect() of 1M unreachable objects held in
   2-cycles (lists a <-> b), per object.
Same-run ratios: --reps rounds, each measuring the three references and
then, back to back, fakegc's convert/miss, lifecycle/churn and gc/cycles-1m
(one `fakegc bench` repeat per allocator in --allocators); the ratio of a
round is reference / fakegc of that round, and the table gives the median
ratio over rounds with the lowest and highest (the machine's load moves
both sides; interleaving keeps them comparable). --suite then adds one
full `fakegc bench` run (every row, libc). The JSON line has the reference
medians. Exit 77 when torch is not importable.
"""
import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SYSTEM_PYTHON = "/usr/bin/python3"


def import_torch():
    try:
        import torch  # noqa: F401
        from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: F401
        return True
    except ImportError:
        return False


def bench_pytorch(n, verbose):
    import warnings
    warnings.filterwarnings("ignore")
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode()
    conv = mode.fake_tensor_converter
    meta = conv.meta_converter
    reals = [torch.empty(4, 4) for _ in range(n)]
    gc.disable()
    c0 = time.process_time()
    t0 = time.perf_counter()
    fakes = [mode.from_tensor(t) for t in reals]
    t1 = time.perf_counter()
    c1 = time.process_time()
    counts_before = (len(conv.tensor_memo), len(meta.tensor_memo), len(meta.storage_memo),
                     len(meta.maybe_storages_to_delete))
    c2 = time.process_time()
    t2 = time.perf_counter()
    del reals
    t3 = time.perf_counter()
    c3 = time.process_time()
    counts_after = (len(conv.tensor_memo), len(meta.tensor_memo), len(meta.storage_memo),
                    len(meta.maybe_storages_to_delete))
    del fakes
    gc.enable()
    if verbose:
        print("pytorch: %d tensors: memos (fake, meta, storage, pending) after converting %s, "
              "after deleting the real tensors %s" % (n, counts_before, counts_after),
              file=sys.stderr)
    return ((t1 - t0) / n * 1e6, (t3 - t2) / n * 1e6, counts_after,
            (c1 - c0) / n * 1e6, (c3 - c2) / n * 1e6)


def bench_gc(nobj, verbose):
    gc.collect()
    gc.disable()
    for _ in range(nobj // 2):
        a = []
        b = [a]
        a.append(b)
    del a, b
    c0 = time.process_time()
    t0 = time.perf_counter()
    freed = gc.collect()
    t1 = time.perf_counter()
    c1 = time.process_time()
    gc.enable()
    if verbose:
        print("cpython: gc.collect() freed %d objects in %.3f s" % (freed, t1 - t0),
              file=sys.stderr)
    return (t1 - t0) / nobj * 1e9, (c1 - c0) / nobj * 1e9


ROWS = [("convert a fresh 4x4 tensor (memo miss)", "pytorch_convert_us", 1000.0,
         "convert/miss"),
        ("delete a real tensor with memo entries (fakegc: whole lifecycle)",
         "pytorch_delete_us", 1000.0, "lifecycle/churn"),
        ("cycle collection, per object (1M objects in 2-cycles)",
         "cpython_gc_ns_per_object", 1.0, "gc/cycles-1m")]


def fakegc_bench(fakegc, names, allocator="libc", repeats=1):
    """{name: (ns, cpu ns) per op} from `fakegc bench --format json`, or None."""
    if not (os.path.isfile(fakegc) and os.access(fakegc, os.X_OK)):
        return None, "no fakegc binary at %s" % fakegc
    cmd = [fakegc, "bench", "--format", "json", "--allocator", allocator,
           "--repeats", str(repeats)] + list(names)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    except (OSError, subprocess.TimeoutExpired) as err:
        return None, "fakegc bench failed: %s" % err
    if p.returncode != 0:
        return None, "fakegc bench exited %d: %s" % (p.returncode, p.stderr.strip()[:200])
    try:
        data = json.loads(p.stdout)
    except ValueError as err:
        return None, "fakegc bench printed no JSON: %s" % err
    found = {b["name"]: (float(b["ns_per_op"]), float(b.get("cpu_ns_per_op") or 0))
             for b in data.get("benchmarks", [])
             if isinstance(b, dict) and isinstance(b.get("ns_per_op"), (int, float))
             and b.get("available", True)}
    if not found:
        return None, "fakegc bench JSON has no ns figures"
    return found, None


def spread(v):
    """median (lowest-highest) of ratios; one decimal below 10x, where a
    whole number hides the difference between 3.0x and 3.4x."""
    if not v:
        return "-"
    f = "%.1f" if statistics.median(v) < 10 else "%.0f"
    return (f + "x (" + f + "-" + f + ")") % (statistics.median(v), min(v), max(v))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench.py")
    ap.add_argument("--fakegc", default=os.path.join(ROOT, "build-release", "fakegc"))
    ap.add_argument("--tensors", type=int, default=20000)
    ap.add_argument("--objects", type=int, default=1000000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--allocators", default="libc",
                    help="comma-separated fakegc allocators measured in each round")
    ap.add_argument("--suite", action="store_true",
                    help="also one full fakegc bench run (every row)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    if not import_torch():
        if os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON) \
                and os.path.exists(SYSTEM_PYTHON):
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
        print("bench: SKIP: torch is not importable by %s" % sys.executable)
        return 77
    allocs = [a for a in args.allocators.split(",") if a]
    refs = {k: [] for _, k, _, _ in ROWS}
    ratios = {(name, a): [] for _, _, _, name in ROWS for a in allocs}
    cratios = {(name, a): [] for _, _, _, name in ROWS for a in allocs}
    mine = {(name, a): [] for _, _, _, name in ROWS for a in allocs}
    why = None
    for r in range(args.reps):
        c, d, _, cc, cd = bench_pytorch(args.tensors, args.verbose)
        g, cg = bench_gc(args.objects, args.verbose)
        ref = {"pytorch_convert_us": c, "pytorch_delete_us": d, "cpython_gc_ns_per_object": g}
        cref = {"pytorch_convert_us": cc, "pytorch_delete_us": cd,
                "cpython_gc_ns_per_object": cg}
        for k, v in ref.items():
            refs[k].append(v)
        for a in allocs:
            found, why = fakegc_bench(args.fakegc, [n for _, _, _, n in ROWS], a)
            if found is None:
                break
            for _, k, scale, name in ROWS:
                if name in found:
                    ns = found[name][0]
                    mine[(name, a)].append(ns)
                    ratios[(name, a)].append(ref[k] * scale / ns if ns else 0)
                    cpu = found[name][1]
                    cratios[(name, a)].append(cref[k] * scale / cpu if cpu else 0)
        if why:
            break
        if args.verbose:
            print("round %d: %s" % (r + 1, {"%s/%s" % k: round(v[-1], 1)
                                            for k, v in ratios.items() if v}), file=sys.stderr)
    res = {k: round(statistics.median(v), 2 if k.endswith("_us") else 1)
           for k, v in refs.items()}
    print(json.dumps(res))
    if why:
        print("(fakegc side not measured: %s)" % why, file=sys.stderr)
        return 0
    print()
    print("%d interleaved rounds; ratio = reference / fakegc in the same round, "
          "median (lowest-highest); wall clock, and CPU time of each side (process "
          "time for Python, the thread's CPU time for fakegc: less moved by the "
          "machine's load)" % args.reps)
    print()
    print("| operation | PyTorch / CPython (ns) | fakegc bench | allocator | fakegc (ns) "
          "| ratio | CPU ratio |")
    print("| --- | ---: | --- | --- | ---: | ---: | ---: |")
    for label, k, scale, name in ROWS:
        for a in allocs:
            v = mine[(name, a)]
            print("| %s | %.0f | %s | %s | %s | %s | %s |" % (
                label, statistics.median(refs[k]) * scale, name, a,
                "%.1f" % statistics.median(v) if v else "-", spread(ratios[(name, a)]),
                spread(cratios[(name, a)])))
    if args.suite:
        found, why = fakegc_bench(args.fakegc, [], "libc", 3)
        if found is None:
            print("(fakegc suite not measured: %s)" % why, file=sys.stderr)
            return 0
        print()
        print("| fakegc bench (libc, 3 repeats) | ns/op | cpu ns/op |")
        print("| --- | ---: | ---: |")
        for name, (ns, cpu) in found.items():
            print("| %s | %.1f | %.1f |" % (name, ns, cpu))
    return 0


if __name__ == "__main__":
    sys.exit(main())
